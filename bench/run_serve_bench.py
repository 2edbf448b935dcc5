#!/usr/bin/python3
"""run_serve_bench.py - what `runmon serve` costs on a 24-hour, 1 Hz, 100-key run.

1. build/leet_bench --generate writes the run log (86,400 stats records of 100 keys, about 270 MB) into a
   run directory of a temporary logdir (--log PATH copies nothing: it must already sit in a run directory
   of a logdir, which is then served).
2. `runmon serve --logdir LOGDIR --port 0` starts; the bench waits for its URL, then, as a page would:
   GET /api/runs, GET /api/runs/<dir> (the server starts loading the run), and the first chart
   (/api/chart?chart=gpu.{i}.gpu&width=800), timed from the first request; then polls that chart until it
   says "loading": false (the whole run read) and times that too.
3. Every chart of the run at width 800 and at 2000: the response sizes (largest and median) and times;
   one chart's CSV (full resolution) size and time.
   Then --zoom-windows random 1-minute windows of that chart (start/end; full resolution): time, points, size.
4. The server's VmHWM and VmRSS, and its CPU for --idle-seconds of idling with the run loaded.
5. The peer: bench/wandb_datastore_reader.py (W&B's datastore.py read path, C++-backed protobuf) reading
   the same log, against runmon's time to the fully loaded chart.

Requirement (the issue's): first chart of a 24 h x 1 Hz x 100-key run within 1 s on a 2-core machine; at
most 200 KB per chart response; the server's RSS.
Usage: python3 bench/run_serve_bench.py [--build build] [--log PATH] [--dir /tmp] [--idle-seconds 5]
                                        [--zoom-windows 20]
                                        [--python /usr/bin/python3] [--no-peer] [--json FILE]
Reported, not asserted. About 30 s on 2 cores.
"""
import argparse
import json
import os
import platform
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def log(message):
    print(message, file=sys.stderr, flush=True)


def get(base, path, timeout=30):
    start = time.monotonic()
    with urllib.request.urlopen(base + path, timeout=timeout) as response:
        body = response.read()
    return body, time.monotonic() - start


def proc_status(pid):
    values = {}
    with open("/proc/%d/status" % pid) as status:
        for line in status:
            if line.startswith(("VmHWM:", "VmRSS:")):
                name, value = line.split(":", 1)
                values[name] = int(value.split()[0]) / 1024.0  # MiB
    return values


def cpu_seconds(pid):
    with open("/proc/%d/stat" % pid) as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default=os.path.join(REPO, "build"))
    parser.add_argument("--log", help="an existing run log inside <logdir>/<run dir>/")
    parser.add_argument("--dir", default=tempfile.gettempdir())
    parser.add_argument("--idle-seconds", type=float, default=5)
    parser.add_argument("--zoom-windows", type=int, default=20, help="random 1-minute windows charted")
    parser.add_argument("--no-peer", action="store_true")
    parser.add_argument("--python", default="/usr/bin/python3", help="a python3 with Debian's python3-protobuf")
    parser.add_argument("--json", help="also write the figures here")
    args = parser.parse_args()

    runmon = os.path.join(args.build, "runmon")
    work = None
    if args.log:
        log_path = os.path.abspath(args.log)
    else:
        work = tempfile.mkdtemp(prefix="serve-bench-", dir=args.dir)
        log_path = os.path.join(work, "wandb", "run-20260101_000000-bench24h", "run-bench24h.wandb")
        os.makedirs(os.path.dirname(log_path))
        log("generating the 24-hour log ...")
        subprocess.run([os.path.join(args.build, "leet_bench"), "--generate", log_path], check=True,
                       stdout=subprocess.DEVNULL)
    run_dir = os.path.basename(os.path.dirname(log_path))
    logdir = os.path.dirname(os.path.dirname(log_path))
    figures = {"log_bytes": os.path.getsize(log_path), "machine": platform.processor() or platform.machine(),
               "cpus": os.cpu_count()}
    # The log's pages in the page cache, as after it was written (the usual case for a live run).
    with open(log_path, "rb") as warm:
        while warm.read(1 << 24):
            pass

    server = subprocess.Popen([runmon, "serve", "--logdir", logdir, "--port", "0"], stdout=subprocess.PIPE,
                              text=True)
    try:
        line = server.stdout.readline()
        base = line.split()[2].rstrip("/")
        _, t_runs = get(base, "/api/runs")
        start = time.monotonic()
        detail, _ = get(base, "/api/runs/" + run_dir)
        charts = json.loads(detail)["charts"]
        query = "/api/chart?" + urllib.parse.urlencode({"runs": run_dir, "chart": "gpu.{i}.gpu", "width": 800})
        body, _ = get(base, query)
        figures["first_chart_ms"] = (time.monotonic() - start) * 1000
        figures["first_chart_loading"] = json.loads(body)["loading"]
        while json.loads(body)["loading"]:
            time.sleep(0.02)
            body, _ = get(base, query)
        figures["full_chart_ms"] = (time.monotonic() - start) * 1000
        figures["runs_list_ms"] = t_runs * 1000

        sizes = {800: [], 2000: []}
        times = {800: [], 2000: []}
        for width in (800, 2000):
            for chart in charts:
                q = "/api/chart?" + urllib.parse.urlencode({"runs": run_dir, "chart": chart["id"], "width": width})
                body, elapsed = get(base, q)
                sizes[width].append(len(body))
                times[width].append(elapsed * 1000)
        for width in (800, 2000):
            figures["chart_bytes_max_%d" % width] = max(sizes[width])
            figures["chart_bytes_median_%d" % width] = statistics.median(sizes[width])
            figures["chart_ms_median_%d" % width] = statistics.median(times[width])
            figures["chart_ms_max_%d" % width] = max(times[width])
        figures["charts"] = len(charts)
        # Zooms: --zoom-windows random 1-minute windows of the loaded run (a seeded draw), the chart at width
        # 800 at full resolution (read back from the log when the run was loaded from its summary index).
        x_max = max(json.loads(body)["x"] or [0])
        draw = random.Random(42)
        zoom_ms, zoom_points, zoom_bytes = [], [], []
        for _ in range(args.zoom_windows):
            x0 = draw.uniform(0, max(0.0, x_max - 60))
            q = "/api/chart?" + urllib.parse.urlencode({"runs": run_dir, "chart": "gpu.{i}.gpu", "width": 800,
                                                        "start": "%.3f" % x0, "end": "%.3f" % (x0 + 60)})
            zoomed, elapsed = get(base, q)
            zoom_ms.append(elapsed * 1000)
            zoom_bytes.append(len(zoomed))
            zoom_points.append(sum(1 for x in json.loads(zoomed)["x"] if x0 <= x <= x0 + 60))
        if zoom_ms:
            figures["zoom_ms_median"] = statistics.median(zoom_ms)
            figures["zoom_ms_max"] = max(zoom_ms)
            figures["zoom_points_min"] = min(zoom_points)
            figures["zoom_points_median"] = statistics.median(zoom_points)
            figures["zoom_bytes_max"] = max(zoom_bytes)
        figures["hwm_before_csv_mib"] = proc_status(server.pid).get("VmHWM")
        csv, elapsed = get(base, "/api/chart.csv?" + urllib.parse.urlencode({"runs": run_dir, "chart": "gpu.{i}.gpu"}))
        figures["csv_bytes"] = len(csv)
        figures["csv_ms"] = elapsed * 1000

        memory = proc_status(server.pid)
        figures["rss_mib"] = memory.get("VmRSS")
        figures["hwm_mib"] = memory.get("VmHWM")
        before = cpu_seconds(server.pid)
        time.sleep(args.idle_seconds)
        figures["idle_cpu_percent"] = (cpu_seconds(server.pid) - before) / args.idle_seconds * 100
    finally:
        server.send_signal(signal.SIGTERM)
        figures["exit_status"] = server.wait(timeout=20)

    if not args.no_peer:
        peer = subprocess.run([args.python, os.path.join(REPO, "bench", "wandb_datastore_reader.py"), "--file",
                               log_path, "--passes", "1", "--framing-passes", "0", "--no-write"],
                              stdout=subprocess.PIPE, text=True, timeout=900)
        for line in peer.stdout.splitlines():
            if not line.startswith("{"):
                continue
            result = json.loads(line)
            if result.get("bench") == "read_decoded":
                figures["peer_read_ms"] = result["best_s"] * 1000
                figures["peer_ratio"] = figures["peer_read_ms"] / figures["full_chart_ms"]
    if work:
        shutil.rmtree(work, ignore_errors=True)

    print("runmon serve on %s (%.0f MB), %s cores" % ("the given log" if args.log else
                                                      "a 24 h x 1 Hz x 100-key run",
                                                      figures["log_bytes"] / 1e6, figures["cpus"]))
    print("  first chart (cold, the run loading) %8.0f ms  (loading: %s)" % (figures["first_chart_ms"],
                                                                              figures["first_chart_loading"]))
    print("  the chart with the whole run       %8.0f ms" % figures["full_chart_ms"])
    print("  chart responses, width 800          max %6.1f KB, median %6.1f KB, median %5.1f ms" %
          (figures["chart_bytes_max_800"] / 1024, figures["chart_bytes_median_800"] / 1024,
           figures["chart_ms_median_800"]))
    print("  chart responses, width 2000         max %6.1f KB, median %6.1f KB, median %5.1f ms" %
          (figures["chart_bytes_max_2000"] / 1024, figures["chart_bytes_median_2000"] / 1024,
           figures["chart_ms_median_2000"]))
    if "zoom_ms_median" in figures:
        print("  zoom into a 1-minute window (%d)    median %5.1f ms, max %5.1f ms; %d-%d points of a series in it"
              " (min, median), max %.1f KB" % (args.zoom_windows, figures["zoom_ms_median"], figures["zoom_ms_max"],
                                              figures["zoom_points_min"], figures["zoom_points_median"],
                                              figures["zoom_bytes_max"] / 1024))
    print("  one chart as CSV (full resolution)  %6.1f MB in %.0f ms" % (figures["csv_bytes"] / 1e6,
                                                                          figures["csv_ms"]))
    print("  server memory                       VmRSS %.1f MiB, VmHWM %.1f MiB (%.1f MiB before the CSV)" %
          (figures["rss_mib"], figures["hwm_mib"], figures["hwm_before_csv_mib"]))
    print("  server CPU idle, run loaded         %.2f%% of a core" % figures["idle_cpu_percent"])
    if "peer_read_ms" in figures:
        print("  W&B's reader (read + decode only)   %8.0f ms: runmon's whole chart is %.2fx faster" %
              (figures["peer_read_ms"], figures["peer_ratio"]))
    print("  exit status after SIGTERM           %d" % figures["exit_status"])
    if args.json:
        with open(args.json, "w") as out:
            json.dump(figures, out, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
