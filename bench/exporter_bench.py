#!/usr/bin/python3
"""exporter_bench.py - the CPU a Prometheus scrape costs `runmon exporter`, beside Debian's node_exporter.

1. `runmon exporter --listen 127.0.0.1:PORT` and
   `prometheus-node-exporter --web.listen-address=127.0.0.1:PORT` start on free ports (node_exporter with
   its default collectors).
2. Each is scraped --warmup times, then --scrapes times back to back over one keep-alive connection, as fast
   as one client goes, twice: without compression and with `Accept-Encoding: gzip` (what Prometheus sends).
   The exporter's CPU is the delta of utime + stime in /proc/PID/stat (all its threads, at the kernel's
   clock-tick resolution: scrapes are repeated until each measurement spans at least --min-cpu-ticks ticks).
3. Reported per exporter: series (lines that are not comments), body size, µs of CPU per scrape and per
   series, wall time per scrape, RSS; and the ratio node_exporter / runmon.
4. runmon's sampling, which node_exporter does inside each scrape and runmon does on its own clock: the
   exporter's CPU over --sample-seconds at --sample-interval without scrapes, divided by the samples taken,
   so that "scrape + one sample" compares with a node_exporter scrape at equal scrape and sample intervals.

The runmon exporter samples every --interval (default 1 h: one sample at the start, so the scrape loop
measures scrapes alone). Reference (the issue's): node_exporter measured 6 ms of CPU per scrape of 507
series. Usage: python3 bench/exporter_bench.py [--build build] [--scrapes 1000] [--json FILE]
Reported, not asserted. About a minute on 2 cores.
"""
import argparse
import http.client
import json
import os
import platform
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
NODE_EXPORTER = "/usr/bin/prometheus-node-exporter"


def log(message):
    print(message, file=sys.stderr, flush=True)


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cpu_ticks(pid):
    """utime + stime of the whole process (every thread, live or exited), in clock ticks."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # fields 14 and 15 of proc(5), after pid and comm


def rss_mib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    return 0.0


def wait_until_serving(port, process, timeout=30):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"{process.args[0]} exited with {process.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.05)
    raise SystemExit(f"{process.args[0]} did not listen on {port} within {timeout} s")


class Scraper:
    """GET /metrics over one keep-alive connection (reopened when the server closes it)."""

    def __init__(self, port, gzip):
        self.port = port
        self.headers = {"Accept-Encoding": "gzip"} if gzip else {}
        self.connection = None

    def scrape(self):
        for attempt in range(2):
            if self.connection is None:
                self.connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
            try:
                self.connection.request("GET", "/metrics", headers=self.headers)
                response = self.connection.getresponse()
                body = response.read()
                if response.status != 200:
                    raise SystemExit(f"scrape of :{self.port}: HTTP {response.status}")
                if response.getheader("Connection", "").lower() == "close":
                    self.connection.close()
                    self.connection = None
                return body, response.getheader("Content-Encoding", "")
            except (http.client.HTTPException, ConnectionError):
                self.connection.close()
                self.connection = None
                if attempt == 1:
                    raise
        raise AssertionError("unreachable")


def series_count(text):
    return sum(1 for line in text.splitlines() if line and not line.startswith("#"))


def measure(name, pid, port, scrapes, warmup, min_ticks, gzip):
    scraper = Scraper(port, gzip)
    body, _ = Scraper(port, False).scrape()
    text = body.decode()
    for _ in range(warmup):
        scraper.scrape()
    total_ticks = 0
    total_scrapes = 0
    total_wall = 0.0
    encoded_size = 0
    while total_scrapes == 0 or total_ticks < min_ticks:
        ticks = cpu_ticks(pid)
        start = time.monotonic()
        for _ in range(scrapes):
            encoded, encoding = scraper.scrape()
        total_wall += time.monotonic() - start
        total_ticks += cpu_ticks(pid) - ticks
        total_scrapes += scrapes
        encoded_size = len(encoded)
        if gzip and encoding != "gzip":
            log(f"{name}: asked for gzip, got {encoding or 'identity'}")
    series = series_count(text)
    cpu_us = total_ticks / CLOCK_TICKS / total_scrapes * 1e6
    result = {
        "exporter": name,
        "gzip": gzip,
        "scrapes": total_scrapes,
        "cpu_ticks": total_ticks,
        "series": series,
        "body_bytes": len(body),
        "encoded_bytes": encoded_size,
        "cpu_us_per_scrape": cpu_us,
        "cpu_us_per_series": cpu_us / series if series else 0.0,
        "wall_us_per_scrape": total_wall / total_scrapes * 1e6,
        "rss_mib": rss_mib(pid),
    }
    log(f"{name:14} {'gzip' if gzip else 'plain':5} {series:5} series {len(body):7} B "
        f"({encoded_size} B sent)  {cpu_us:9.1f} µs CPU/scrape  "
        f"{result['cpu_us_per_series']:7.3f} µs/series  "
        f"{result['wall_us_per_scrape']:8.1f} µs wall/scrape  "
        f"({total_scrapes} scrapes, {total_ticks} ticks)")
    return result


def sampling_cost(runmon, interval, seconds):
    """CPU per sample of `runmon exporter` that nobody scrapes."""
    port = free_port()
    process = subprocess.Popen(
        [runmon, "exporter", "--listen", f"127.0.0.1:{port}", "--interval", str(interval)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_until_serving(port, process)
        time.sleep(min(2.0, seconds / 4))
        body, _ = Scraper(port, False).scrape()
        samples_before = sample_count(body.decode())
        ticks = cpu_ticks(process.pid)
        time.sleep(seconds)
        ticks = cpu_ticks(process.pid) - ticks
        body, _ = Scraper(port, False).scrape()
        samples = sample_count(body.decode()) - samples_before
        return {"interval_s": interval, "seconds": seconds, "samples": samples, "cpu_ticks": ticks,
                "cpu_us_per_sample": ticks / CLOCK_TICKS / max(samples, 1) * 1e6}
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)


def sample_count(text):
    for line in text.splitlines():
        if line.startswith("runmon_exporter_samples_total"):
            return float(line.rsplit(" ", 1)[1])
    return 0.0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", default=os.path.join(REPO, "build"), help="build directory with runmon")
    parser.add_argument("--scrapes", type=int, default=1000, help="scrapes per round")
    parser.add_argument("--warmup", type=int, default=50)
    parser.add_argument("--min-cpu-ticks", type=int, default=100,
                        help="repeat rounds until the exporter's CPU spans this many clock ticks")
    parser.add_argument("--interval", default="1h", help="runmon exporter's sampling interval while scraped")
    parser.add_argument("--sample-interval", type=float, default=0.1)
    parser.add_argument("--sample-seconds", type=float, default=10.0)
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args()

    runmon = os.path.join(args.build, "runmon")
    if not os.access(runmon, os.X_OK):
        raise SystemExit(f"{runmon} not found: build it first (a Release build: "
                         "cmake -DCMAKE_BUILD_TYPE=Release)")
    if not os.access(NODE_EXPORTER, os.X_OK):
        raise SystemExit(f"{NODE_EXPORTER} not found: run scripts/install-deps.sh")

    answer = subprocess.run([NODE_EXPORTER, "--version"], capture_output=True, text=True)
    version = (answer.stdout + answer.stderr).strip().split("\n")[0]
    log(f"{platform.node()}: {os.cpu_count()} CPUs, {platform.platform()}; {version}")
    results = {"machine": {"cpus": os.cpu_count(), "platform": platform.platform(), "node_exporter": version,
                           "clock_ticks": CLOCK_TICKS}, "scrapes": []}
    runmon_port, node_port = free_port(), free_port()
    tmp = tempfile.mkdtemp(prefix="exporter-bench-")
    processes = []
    try:
        processes.append(subprocess.Popen(
            [runmon, "exporter", "--listen", f"127.0.0.1:{runmon_port}", "--interval", args.interval],
            stdout=subprocess.DEVNULL, stderr=open(os.path.join(tmp, "runmon.log"), "w")))
        processes.append(subprocess.Popen(
            [NODE_EXPORTER, f"--web.listen-address=127.0.0.1:{node_port}"],
            stdout=subprocess.DEVNULL, stderr=open(os.path.join(tmp, "node_exporter.log"), "w")))
        wait_until_serving(runmon_port, processes[0])
        wait_until_serving(node_port, processes[1])
        time.sleep(1)
        for gzip in (False, True):
            for name, process, port in (("runmon", processes[0], runmon_port),
                                        ("node_exporter", processes[1], node_port)):
                results["scrapes"].append(
                    measure(name, process.pid, port, args.scrapes, args.warmup, args.min_cpu_ticks, gzip))
    finally:
        for process in processes:
            process.send_signal(signal.SIGTERM)
        for process in processes:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
        shutil.rmtree(tmp, ignore_errors=True)

    for gzip in (False, True):
        by_name = {r["exporter"]: r for r in results["scrapes"] if r["gzip"] == gzip}
        node, ours = by_name["node_exporter"], by_name["runmon"]
        ratio = node["cpu_us_per_scrape"] / max(ours["cpu_us_per_scrape"], 1e-9)
        per_series = node["cpu_us_per_series"] / max(ours["cpu_us_per_series"], 1e-9)
        results.setdefault("ratios", {})["gzip" if gzip else "plain"] = {
            "per_scrape": ratio, "per_series": per_series}
        log(f"{'gzip' if gzip else 'plain'}: node_exporter / runmon = {ratio:.1f}x per scrape, "
            f"{per_series:.1f}x per series")

    sampling = sampling_cost(runmon, args.sample_interval, args.sample_seconds)
    results["sampling"] = sampling
    log(f"runmon sampling (no scrapes, every {args.sample_interval} s for {args.sample_seconds} s): "
        f"{sampling['samples']:.0f} samples, {sampling['cpu_us_per_sample']:.1f} µs CPU per sample")
    for gzip in (False, True):
        by_name = {r["exporter"]: r for r in results["scrapes"] if r["gzip"] == gzip}
        combined = by_name["runmon"]["cpu_us_per_scrape"] + sampling["cpu_us_per_sample"]
        results.setdefault("scrape_plus_sample_us", {})["gzip" if gzip else "plain"] = combined
        log(f"{'gzip' if gzip else 'plain'}: runmon scrape + one sample = {combined:.1f} µs, node_exporter "
            f"{by_name['node_exporter']['cpu_us_per_scrape']:.1f} µs "
            f"({by_name['node_exporter']['cpu_us_per_scrape'] / combined:.1f}x)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
