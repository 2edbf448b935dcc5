"""Shared pieces of the end-to-end tests of runmon's HTTP servers (serve_test, exporter_test): a background
process with its output in a file, sockets that stall or drip their request head, timed requests, a
process's VmRSS, and the dashboard's charts of a recorded run (the accelerator families' tests). Python's
standard library only."""
import json
import os
import resource
import signal
import socket
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.request

STALLED_HEAD = b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n"


def clean_env(extra=None):
    env = {k: v for k, v in os.environ.items() if not k.startswith("WANDB_")}
    env.update(extra or {})
    return env


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(predicate, timeout=30.0, step=0.1, what="condition"):
    deadline = time.monotonic() + timeout
    last_error = None
    while time.monotonic() < deadline:
        try:
            value = predicate()
            if value:
                return value
        except (OSError, urllib.error.URLError, ValueError) as e:
            last_error = e
        time.sleep(step)
    raise AssertionError(f"{what} not met within {timeout} s (last error: {last_error})")


def raise_open_file_limit(needed):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < needed:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard if hard == resource.RLIM_INFINITY else min(hard, 65536),
                                                    hard))


def vm_rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError(f"no VmRSS for pid {pid}")


def timed_get(url, headers=None, timeout=30):
    """(status, body, seconds) of one request on a fresh connection."""
    start = time.monotonic()
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, response.read(), time.monotonic() - start
    except urllib.error.HTTPError as e:
        return e.code, e.read(), time.monotonic() - start


def exposition_with(port, metric, what):
    """The /metrics body served on 127.0.0.1:`port`, once it holds `metric` (waiting as wait_for does)."""
    def scraped():
        try:
            status, body, _ = timed_get(f"http://127.0.0.1:{port}/metrics", timeout=5)
        except OSError:
            return None
        text = body.decode()
        return text if status == 200 and metric in text else None
    return wait_for(scraped, what=what)


def dashboard_charts(runmon, logdir, run_dir):
    """The charts `runmon serve --logdir LOGDIR` gives for the run in `run_dir`, by chart id."""
    port = free_port()
    serve = subprocess.Popen([runmon, "serve", "--logdir", logdir, "--port", str(port)],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        url = f"http://127.0.0.1:{port}"
        wait_for(lambda: timed_get(url + "/api/runs")[0] == 200, what="the dashboard")
        described = json.loads(timed_get(f"{url}/api/runs/{os.path.basename(run_dir)}")[1])
        return {chart["id"]: chart for chart in described["charts"]}
    finally:
        serve.terminate()
        serve.wait(timeout=30)


class Process:
    """A background process whose output is collected in a file (so it never blocks on a full pipe)."""

    def __init__(self, args, env=None):
        self.log = tempfile.NamedTemporaryFile(mode="w+", suffix=".log")
        self.proc = subprocess.Popen(args, stdout=self.log, stderr=subprocess.STDOUT, env=env or clean_env(),
                                     text=True)

    def output(self):
        self.log.flush()
        with open(self.log.name) as f:
            return f.read()

    def stop(self, sig=signal.SIGTERM, timeout=20):
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError(f"{self.proc.args[0]} did not stop on {sig!r}:\n{self.output()}")

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.log.close()


def open_stalled(port, count, head=STALLED_HEAD):
    """`count` connections that send the start of a request head and then nothing."""
    raise_open_file_limit(count + 256)
    sockets = []
    for _ in range(count):
        s = socket.create_connection(("127.0.0.1", port), timeout=10)
        s.sendall(head)
        sockets.append(s)
    return sockets


class Drippers:
    """Connections that send a request head one byte every `interval` seconds (slow loris), on a thread.
    `cut` counts those the server closed (or answered) while they were still dripping."""

    def __init__(self, port, count, interval=0.5):
        self.sockets = [socket.create_connection(("127.0.0.1", port), timeout=10) for _ in range(count)]
        self.head = STALLED_HEAD + b"X-Slow: " + b"a" * 4096
        self.interval = interval
        self.cut_after = {}
        self.started = time.monotonic()
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._drip, daemon=True)
        self.thread.start()

    def _drip(self):
        offset = 0
        while not self.done.is_set() and len(self.cut_after) < len(self.sockets) and offset < len(self.head):
            for i, s in enumerate(self.sockets):
                if i in self.cut_after:
                    continue
                try:
                    s.setblocking(False)
                    try:
                        if s.recv(4096) is not None:  # an answer (400) or the end of the stream: cut
                            self.cut_after[i] = time.monotonic() - self.started
                            continue
                    except BlockingIOError:
                        pass
                    s.setblocking(True)
                    s.sendall(self.head[offset:offset + 1])
                except OSError:
                    self.cut_after[i] = time.monotonic() - self.started
            offset += 1
            self.done.wait(self.interval)

    def close(self):
        self.done.set()
        self.thread.join()
        for s in self.sockets:
            s.close()


def close_all(sockets):
    for s in sockets:
        s.close()


def check_stalled_clients_wait_alone(test, port, url, stalled=500, drippers=20):
    """With `stalled` sockets that sent half a request head and `drippers` that send one a byte every half
    second, a normal request to `url` is answered within 1 s (the issue's bound); the drippers are cut by
    the head's deadline; and the server still answers once they are all closed."""
    sockets = open_stalled(port, stalled)
    drip = Drippers(port, drippers)
    try:
        for _ in range(3):
            status, _, seconds = timed_get(url)
            test.assertEqual(status, 200)
            test.assertLess(seconds, 1.0, f"a request waited {seconds:.2f} s beside {stalled} stalled sockets")
        wait_for(lambda: len(drip.cut_after) == drippers, timeout=40,
                 what=f"all {drippers} dripping clients cut off (cut so far: {len(drip.cut_after)})")
    finally:
        drip.close()
        close_all(sockets)
    status, _, seconds = timed_get(url)
    test.assertEqual(status, 200)
    test.assertLess(seconds, 1.0)
