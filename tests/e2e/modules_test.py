"""End-to-end tests of what runmon loads: `runmon run` and `runmon sample` map none of the libraries that only
the HTTP servers (cpp-httplib, OpenSSL), the OpenMetrics scraper (libcurl), the terminal UI (ncursesw) and
the neuron-monitor parser (simdjson) and the TPU runtime-metrics client (gRPC) need; each of those is loaded when it is used; and a binary whose modules are missing says so and exits 1
instead of failing later."""
import http.server
import json
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import unittest

from http_e2e import wait_for
from runmon_e2e import RUNMON, run

HEAVY = ("libcurl", "libssl.", "libcrypto.", "libcpp-httplib", "libncursesw", "libtinfo", "libsimdjson", "libgrpc",
         "libgpr", "libabsl")
FAKE_LIBTPU = os.environ.get("RUNMON_FAKE_LIBTPU", "")
HOST_FIXTURE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "hosts", "debian12-vm")
FAKE_NEURON_MONITOR_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fakes", "neuron_monitor")


def mapped_files(pid):
    files = set()
    with open("/proc/%d/maps" % pid) as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 6 and parts[5].startswith("/"):
                files.add(parts[5])
    return files


def heavy_files(files):
    return sorted(f for f in files if os.path.basename(f).startswith(HEAVY) or "/runmon-modules/" in f)


class MetricsHandler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802 (http.server's name)
        body = b"# TYPE demo_temperature gauge\ndemo_temperature 41.5\n"
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; version=0.0.4")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


class ModulesTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.procs = []

    def tearDown(self):
        for proc in self.procs:
            if proc.poll() is None:
                proc.kill()
            proc.wait()
        self.tmp.cleanup()

    def start(self, *args, binary=RUNMON, **extra_env):
        env = {k: v for k, v in os.environ.items() if not k.startswith("WANDB_")}
        env.update(extra_env)
        proc = subprocess.Popen([binary, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        self.procs.append(proc)
        return proc

    def steady_maps(self, proc, seconds=1.5):
        # Long enough for several samples (every 0.1 s): whatever a tick loads is loaded by then.
        time.sleep(seconds)
        self.assertIsNone(proc.poll(), proc.stderr.read() if proc.poll() is not None else "")
        return mapped_files(proc.pid)

    def test_run_maps_no_server_scraper_or_terminal_library(self):
        proc = self.start("run", "--interval", "0.1s", "--dir", os.path.join(self.tmp.name, "wandb"), "--",
                          "sleep", "30")
        self.assertEqual(heavy_files(self.steady_maps(proc)), [])

    def test_sample_maps_no_server_scraper_or_terminal_library(self):
        proc = self.start("sample", "--interval", "0.1", "--json")
        self.assertEqual(heavy_files(self.steady_maps(proc)), [])

    def test_metrics_listen_loads_the_http_server_module(self):
        proc = self.start("run", "--interval", "0.1s", "--dir", os.path.join(self.tmp.name, "wandb"),
                          "--metrics-listen", "127.0.0.1:0", "--", "sleep", "30")
        files = self.steady_maps(proc)
        self.assertTrue(any(f.endswith("/runmon-modules/http-server.so") for f in files), sorted(files))
        self.assertTrue(any(os.path.basename(f).startswith("libcpp-httplib") for f in files), sorted(files))
        self.assertFalse(any(os.path.basename(f).startswith(("libcurl", "libncursesw")) for f in files))

    def test_scraping_loads_libcurl_and_nothing_else(self):
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), MetricsHandler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        self.addCleanup(server.server_close)
        self.addCleanup(server.shutdown)
        endpoints = json.dumps({"demo": "http://127.0.0.1:%d/metrics" % server.server_address[1]})
        proc = self.start("sample", "--interval", "0.1", "--json", "--set",
                          "x_stats_open_metrics_endpoints=" + endpoints)
        files = self.steady_maps(proc)
        self.assertTrue(any(os.path.basename(f).startswith("libcurl") for f in files), sorted(files))
        self.assertFalse(any("/runmon-modules/" in f for f in files), sorted(files))
        line = wait_for(proc.stdout.readline)
        self.assertEqual(json.loads(line).get("openmetrics.demo.demo_temperature.0"), 41.5)

    def test_a_neuron_monitor_loads_its_parsers_module_and_nothing_else(self):
        tmpdir = os.path.join(self.tmp.name, "tmp")
        os.makedirs(tmpdir)
        proc = self.start("sample", "--interval", "1", "--json", TMPDIR=tmpdir,
                          PATH=FAKE_NEURON_MONITOR_DIR + os.pathsep + os.environ.get("PATH", "/usr/bin:/bin"))
        files = self.steady_maps(proc)
        self.assertTrue(any(f.endswith("/runmon-modules/neuron-monitor.so") for f in files), sorted(files))
        self.assertTrue(any(os.path.basename(f).startswith("libsimdjson") for f in files), sorted(files))
        self.assertFalse(any(os.path.basename(f).startswith(("libcurl", "libcpp-httplib", "libncursesw"))
                             for f in files), sorted(files))
        # The first sample is taken before neuron-monitor's first document; a later one has its keys.
        samples = [json.loads(wait_for(proc.stdout.readline)) for _ in range(3)]
        self.assertIn("trn.system.memory_used_bytes", samples[-1])

    def tpu_tree(self, with_chip):
        tree = os.path.join(self.tmp.name, "tree")
        shutil.copytree(HOST_FIXTURE, tree, symlinks=True, ignore=shutil.ignore_patterns("t1"))
        function = os.path.join(tree, "sys", "bus", "pci", "devices", "0000:00:04.0")
        os.makedirs(function)
        # A v5e chip, or only Google's network card (not a TPU).
        for name, value in (("vendor", "0x1ae0"), ("device", "0x0063" if with_chip else "0x0042"),
                            ("subsystem_device", "0x0000")):
            with open(os.path.join(function, name), "w") as f:
                f.write(value + "\n")
        return tree

    def test_a_tpu_host_loads_the_grpc_module_and_libtpu_and_nothing_else(self):
        # A runtime-metrics service address where nothing listens: the collector's first tick loads the module
        # and opens libtpu (the fake, named by LIBTPU_PATH).
        self.assertTrue(FAKE_LIBTPU, "RUNMON_FAKE_LIBTPU (ctest sets it)")
        proc = self.start("sample", "--root", self.tpu_tree(with_chip=True), "--interval", "0.1", "--json",
                          RUNMON_TPU_RUNTIME_ADDRESS="127.0.0.1:9", LIBTPU_PATH=FAKE_LIBTPU)
        files = self.steady_maps(proc)
        self.assertTrue(any(f.endswith("/runmon-modules/tpu-runtime-metrics.so") for f in files), sorted(files))
        self.assertTrue(any(os.path.basename(f).startswith("libgrpc") for f in files), sorted(files))
        self.assertIn(os.path.realpath(FAKE_LIBTPU), {os.path.realpath(f) for f in files})
        self.assertFalse(any(os.path.basename(f).startswith(("libcurl", "libcpp-httplib", "libncursesw", "libssl."))
                             for f in files), sorted(files))

    def test_a_host_without_a_tpu_never_loads_libtpu(self):
        # libtpu's constructors crash on hosts without a TPU: with LIBTPU_PATH set and only Google's network
        # card on the bus, neither libtpu nor the gRPC module is mapped.
        self.assertTrue(FAKE_LIBTPU, "RUNMON_FAKE_LIBTPU (ctest sets it)")
        proc = self.start("sample", "--root", self.tpu_tree(with_chip=False), "--interval", "0.1", "--json",
                          RUNMON_TPU_RUNTIME_ADDRESS="127.0.0.1:9", LIBTPU_PATH=FAKE_LIBTPU)
        files = self.steady_maps(proc)
        self.assertFalse(any(os.path.basename(f) == "libtpu.so" or f.endswith("/tpu-runtime-metrics.so")
                             for f in files), sorted(files))
        self.assertEqual(heavy_files(files), [])

    def test_a_binary_without_its_modules_says_so(self):
        lonely = os.path.join(self.tmp.name, "bin", "runmon")
        os.makedirs(os.path.dirname(lonely))
        shutil.copy2(RUNMON, lonely)
        logdir = os.path.join(self.tmp.name, "wandb")
        os.makedirs(logdir)
        for args, command in ((["serve", "--logdir", logdir, "--port", "0"], "serve"),
                              (["exporter", "--listen", "127.0.0.1:0"], "exporter"),
                              (["run", "--dir", logdir, "--metrics-listen", "127.0.0.1:0", "--", "true"], "run")):
            proc = self.start(*args, binary=lonely)
            try:
                _, err = proc.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                proc.send_signal(signal.SIGKILL)
                self.fail("runmon %s without its modules did not exit" % command)
            self.assertEqual(proc.returncode, 1, (command, err))
            self.assertIn("http-server module cannot be loaded", err)
            self.assertIn(os.path.join(self.tmp.name, "bin", "runmon-modules", "http-server.so"), err)
            self.assertTrue(err.startswith("runmon"), err)
        # leet needs the terminal module to show a run, not to print a frame of it.
        self.assertEqual(run("run", "--dir", logdir, "--", "true").returncode, 0)
        frame = subprocess.run([lonely, "leet", logdir, "--print-frame", "80x24"], capture_output=True, text=True,
                               timeout=30)
        self.assertEqual(frame.returncode, 0, frame.stderr)
        shown = subprocess.run([lonely, "leet", logdir], capture_output=True, text=True, timeout=30,
                               stdin=subprocess.DEVNULL)
        self.assertEqual(shown.returncode, 1, shown.stderr)
        self.assertIn("terminal module cannot be loaded", shown.stderr)

if __name__ == "__main__":
    unittest.main()
