#!/usr/bin/python3
"""run_footprint_bench.py - the resident memory of runmon's sampling processes beside psutil's, in one run.

Starts, one after the other, and reads /proc/PID/status and /proc/PID/maps once they are steady (after
--settle seconds):

  run      build/runmon run --dir TMP -- sleep ...          (the README's main job)
  sample   build/runmon sample --interval 0.1 --json        (output to /dev/null)
  peer     ../shared/bench/psutil_sampler.py --tree --interval 0.1 (W&B's key set through psutil)

and, to show what the optional parts cost once they are used:

  run+metrics   runmon run --metrics-listen 127.0.0.1:0 -- sleep ...   (the HTTP server module)
  sample+scrape runmon sample --interval 0.1 with an OpenMetrics endpoint (libcurl) served on 127.0.0.1

For each it prints VmRSS, RssAnon, RssFile and VmHWM in KiB, and which of the libraries that the lean
processes must not map (libcurl, OpenSSL, cpp-httplib, ncursesw, libpng, libjpeg) it maps. Target: VmRSS <= 6 MB (6,144 KiB)
for `run` and `sample` on a machine without accelerators; the exit status is 1 when it is missed.

Usage: python3 bench/run_footprint_bench.py [--build build] [--peer PATH] [--settle S] [--json FILE]
Stdlib only (the peer needs Debian's python3-psutil and runs with /usr/bin/python3). Every process it starts
runs in a session of its own and is killed at the end, on Ctrl-C and on SIGTERM.
"""
import argparse
import http.server
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGET_KIB = 6 * 1024
# Libraries a process that neither serves nor scrapes must not map.
HEAVY_LIBRARIES = ("libcurl", "libssl", "libcrypto", "libcpp-httplib", "libncursesw", "libtinfo", "libpng", "libjpeg",
                   "libsimdjson", "libgnutls", "libbrotli", "libnghttp2", "libssh2", "libldap", "libkrb5")

_started = []


def log(message):
    print(message, file=sys.stderr, flush=True)


def start_session(argv, **kwargs):
    proc = subprocess.Popen(argv, start_new_session=True, **kwargs)
    _started.append(proc)
    return proc


def stop_session(proc):
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    proc.wait()


def status_kib(pid):
    fields = {}
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            name, _, value = line.partition(":")
            if name in ("VmRSS", "RssAnon", "RssFile", "RssShmem", "VmHWM"):
                fields[name] = int(value.split()[0])
    return fields


def mapped_libraries(pid):
    names = set()
    with open("/proc/%d/maps" % pid) as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 6 and ".so" in parts[5]:
                names.add(os.path.basename(parts[5]))
    return sorted(names)


def measure(name, argv, settle, **kwargs):
    proc = start_session(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, **kwargs)
    time.sleep(settle)
    if proc.poll() is not None:
        raise SystemExit("%s exited early (status %s): %s" % (name, proc.returncode, " ".join(argv)))
    status = status_kib(proc.pid)
    libraries = mapped_libraries(proc.pid)
    stop_session(proc)
    heavy = [lib for lib in libraries if lib.startswith(HEAVY_LIBRARIES)]
    return dict(name=name, argv=argv, status=status, libraries=libraries, heavy=heavy)


def peer_rss(peer, python, settle):
    """The psutil sampler's VmRSS while it samples this script's tree every 0.1 s, read as for runmon."""
    argv = [python, peer, "--pid", str(os.getpid()), "--tree", "--interval", "0.1", "--samples", "100000"]
    return measure("peer", argv, settle)


class MetricsHandler(http.server.BaseHTTPRequestHandler):
    BODY = b"# TYPE demo_temperature gauge\ndemo_temperature{sensor=\"a\"} 41.5\n"

    def do_GET(self):  # noqa: N802 (http.server's name)
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; version=0.0.4")
        self.send_header("Content-Length", str(len(self.BODY)))
        self.end_headers()
        self.wfile.write(self.BODY)

    def log_message(self, *args):
        pass


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(REPO, "build"))
    ap.add_argument("--peer", default=os.path.join(REPO, "..", "shared", "bench", "psutil_sampler.py"))
    ap.add_argument("--python", default="/usr/bin/python3")
    ap.add_argument("--settle", type=float, default=3.0, help="seconds before a process is read")
    ap.add_argument("--json", help="write every figure to this file")
    args = ap.parse_args()

    runmon = os.path.join(args.build, "runmon")
    if not os.access(runmon, os.X_OK):
        raise SystemExit("no %s: build it first (cmake --build %s --target runmon)" % (runmon, args.build))
    sleep_seconds = str(int(args.settle * 4 + 10))
    rows = []
    with tempfile.TemporaryDirectory(prefix="runmon-footprint-") as tmp:
        rows.append(measure("run", [runmon, "run", "--dir", tmp, "--", "sleep", sleep_seconds], args.settle))
        rows.append(measure("sample", [runmon, "sample", "--interval", "0.1", "--json"], args.settle))
        if os.path.exists(args.peer):
            rows.append(peer_rss(args.peer, args.python, args.settle))
        else:
            log("no peer at %s: its row is left out" % args.peer)
        rows.append(measure("run+metrics", [runmon, "run", "--dir", tmp, "--metrics-listen", "127.0.0.1:0", "--",
                                            "sleep", sleep_seconds], args.settle))
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), MetricsHandler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        endpoints = json.dumps({"demo": "http://127.0.0.1:%d/metrics" % server.server_address[1]})
        rows.append(measure("sample+scrape", [runmon, "sample", "--interval", "0.1", "--json", "--set",
                                              "x_stats_open_metrics_endpoints=" + endpoints], args.settle))
        server.shutdown()

    print("%-14s %8s %8s %8s %8s  %s" % ("process", "VmRSS", "RssAnon", "RssFile", "VmHWM", "heavy libraries"))
    for row in rows:
        s = row["status"]
        print("%-14s %8d %8d %8d %8d  %s" % (row["name"], s["VmRSS"], s["RssAnon"], s["RssFile"], s["VmHWM"],
                                             ", ".join(row["heavy"]) or "-"))
    print("(KiB; steady after %.1f s)" % args.settle)
    by_name = {row["name"]: row for row in rows}
    if "peer" in by_name:
        for name in ("run", "sample"):
            print("psutil / runmon %-6s VmRSS: %.2fx" %
                  (name, by_name["peer"]["status"]["VmRSS"] / by_name[name]["status"]["VmRSS"]))
    missed = [name for name in ("run", "sample")
              if by_name[name]["status"]["VmRSS"] > TARGET_KIB or by_name[name]["heavy"]]
    print("target: VmRSS <= %d KiB and no heavy library in run and sample: %s" %
          (TARGET_KIB, "missed by " + ", ".join(missed) if missed else "met"))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 1 if missed else 0


def _terminate(signum, frame):
    raise SystemExit(128 + signum)


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, _terminate)
    try:
        sys.exit(main())
    finally:
        for p in _started:
            stop_session(p)
