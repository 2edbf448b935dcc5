#!/usr/bin/python3
"""slow_clients_bench.py - how long a normal request waits at `runmon exporter` and `runmon serve` while
other clients hold connections without finishing their requests.

For each server (started on a free port: `runmon exporter --listen 127.0.0.1:PORT --interval 1h`, `runmon
serve --logdir EMPTY --port PORT`) and each count of stalled sockets (--stalled, default 0, 100 and 500):
1. that many connections send `GET / HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\n` and stall; a thread keeps the count
   up (the servers close a silent connection after its read timeout: a new one takes its place, as an
   attacker's would);
2. --requests normal requests (GET /metrics, GET /api/runs), one after another, each on a new connection
   with a --timeout s limit, are timed from connect to the end of the body: p50, p90, p99 and max, and how
   many failed or timed out (a timed-out request counts as the timeout);
3. the stalled sockets close, and the server must still answer.

`--build DIR` picks the runmon binary (DIR/runmon); run it once with the build before a change and once
after for before/after figures. Usage: python3 bench/slow_clients_bench.py [--build build] [--requests 200]
[--servers exporter,serve] [--stalled 0,100,500] [--json FILE]. Reported, not asserted. About a minute per build on 2 cores when nothing times out.
"""
import argparse
import json
import os
import resource
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STALLED_HEAD = b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n"


def log(message):
    print(message, file=sys.stderr, flush=True)


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class StalledSockets:
    """Keeps `count` connections open that sent half a request head, replacing those the server closes."""

    def __init__(self, port, count):
        self.port, self.count = port, count
        self.sockets = []
        self.replaced = 0
        self.done = threading.Event()
        for _ in range(count):
            self.sockets.append(self._open())
        self.thread = threading.Thread(target=self._keep, daemon=True)
        self.thread.start()

    def _open(self):
        s = socket.create_connection(("127.0.0.1", self.port), timeout=10)
        s.sendall(STALLED_HEAD)
        s.setblocking(False)
        return s

    def _keep(self):
        while not self.done.wait(0.2):
            for i, s in enumerate(self.sockets):
                try:
                    if s.recv(4096) is not None:  # an answer (400) or the end: the server let it go
                        s.close()
                        self.sockets[i] = self._open()
                        self.replaced += 1
                except BlockingIOError:
                    pass
                except OSError:
                    s.close()
                    self.sockets[i] = self._open()
                    self.replaced += 1

    def close(self):
        self.done.set()
        self.thread.join()
        for s in self.sockets:
            s.close()


def timed_request(url, timeout):
    start = time.monotonic()
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            response.read()
            ok = response.status == 200
    except (OSError, urllib.error.URLError):
        ok = False
    return time.monotonic() - start, ok


def percentile(values, p):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def start_server(runmon, kind, port, logdir):
    args = ([runmon, "exporter", "--listen", f"127.0.0.1:{port}", "--interval", "1h"] if kind == "exporter"
            else [runmon, "serve", "--logdir", logdir, "--port", str(port)])
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}" + ("/metrics" if kind == "exporter" else "/api/runs")
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if timed_request(url, 2)[1]:
            return proc, url
        time.sleep(0.1)
    proc.kill()
    raise SystemExit(f"{kind} did not start")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", default=os.path.join(REPO, "build"))
    parser.add_argument("--servers", default="exporter,serve")
    parser.add_argument("--stalled", default="0,100,500")
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--timeout", type=float, default=30)
    parser.add_argument("--json")
    args = parser.parse_args()
    runmon = os.path.join(args.build, "runmon")
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    counts = [int(c) for c in args.stalled.split(",")]
    results = []
    with tempfile.TemporaryDirectory() as logdir:
        for kind in args.servers.split(","):
            for count in counts:
                proc, url = start_server(runmon, kind, free_port(), logdir)
                port = int(url.split(":")[2].split("/")[0])
                try:
                    stalled = StalledSockets(port, count)
                    time.sleep(0.5)
                    latencies, failed = [], 0
                    started = time.monotonic()
                    for _ in range(args.requests):
                        seconds, ok = timed_request(url, args.timeout)
                        latencies.append(seconds)
                        failed += 0 if ok else 1
                        if time.monotonic() - started > 120:  # a server that makes everyone wait
                            break
                    replaced = stalled.replaced
                    stalled.close()
                    after_ok = timed_request(url, args.timeout)[1]
                finally:
                    proc.kill()
                    proc.wait()
                row = {"server": kind, "stalled": count, "requests": len(latencies), "failed": failed,
                       "p50_ms": percentile(latencies, 50) * 1e3, "p90_ms": percentile(latencies, 90) * 1e3,
                       "p99_ms": percentile(latencies, 99) * 1e3, "max_ms": max(latencies) * 1e3,
                       "stalled_replaced": replaced, "answers_after": after_ok}
                results.append(row)
                log(f"{kind:8} {count:4} stalled: {row['requests']:4} requests ({failed} failed): "
                    f"p50 {row['p50_ms']:8.1f} ms  p90 {row['p90_ms']:8.1f} ms  p99 {row['p99_ms']:8.1f} ms  "
                    f"max {row['max_ms']:8.1f} ms; stalled sockets replaced {replaced}; "
                    f"answers after: {after_ok}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"binary": runmon, "results": results}, f, indent=1)


if __name__ == "__main__":
    main()
