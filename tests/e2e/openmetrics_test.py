"""End-to-end tests of OpenMetrics scraping against the real Debian prometheus-node-exporter: keys and indices
of `runmon sample`, the filters in list and label form, `runmon run` recording the keys (runmon dump), an
unreachable endpoint beside a working one, the headers setting (a small Python server records them), and bad
settings stopping runmon with exit status 2.

The exporter is $RUNMON_NODE_EXPORTER_URL when set (CI starts one on 127.0.0.1:9100); otherwise the test
starts /usr/bin/prometheus-node-exporter on a free loopback port and stops it afterwards."""
import glob
import http.server
import json
import os
import re
import shutil
import socket
import subprocess
import tempfile
import threading
import time
import unittest
import urllib.request

from runmon_e2e import run, samples

NODE_EXPORTER = "/usr/bin/prometheus-node-exporter"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def fetch(url):
    with urllib.request.urlopen(url, timeout=5) as response:
        return response.read().decode("utf-8")


def series(exposition, metric):
    """[(labels dict, value)] of one metric's sample lines, in order."""
    out = []
    pattern = re.compile(r"^" + re.escape(metric) + r"(\{(.*)\})? (\S+)")
    for line in exposition.splitlines():
        m = pattern.match(line)
        if not m:
            continue
        labels = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group(2) or ""))
        out.append((labels, float(m.group(3))))
    return out


def openmetrics_keys(sample, prefix="openmetrics."):
    return {k: v for k, v in sample.items() if k.startswith(prefix)}


def indices(keys, metric_prefix):
    found = []
    for key in keys:
        if key.startswith(metric_prefix):
            rest = key[len(metric_prefix):]
            if rest.isdigit():
                found.append(int(rest))
    return sorted(found)


def endpoints(**named):
    return "x_stats_open_metrics_endpoints=" + json.dumps(named)


class OpenMetricsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.process = None
        cls.url = os.environ.get("RUNMON_NODE_EXPORTER_URL")
        if not cls.url:
            if not os.access(NODE_EXPORTER, os.X_OK):
                raise unittest.SkipTest("no node exporter: set RUNMON_NODE_EXPORTER_URL or install "
                                        "prometheus-node-exporter")
            port = free_port()
            cls.log = tempfile.TemporaryFile()
            cls.process = subprocess.Popen([NODE_EXPORTER, f"--web.listen-address=127.0.0.1:{port}"],
                                           stdout=cls.log, stderr=subprocess.STDOUT)
            cls.url = f"http://127.0.0.1:{port}/metrics"
        deadline = time.monotonic() + 20
        while True:
            try:
                fetch(cls.url)
                break
            except OSError:
                if cls.process is not None and cls.process.poll() is not None:
                    raise RuntimeError("the node exporter exited at start")
                if time.monotonic() > deadline:
                    cls.tearDownClass()
                    raise RuntimeError(f"the node exporter at {cls.url} does not answer")
                time.sleep(0.1)

    @classmethod
    def tearDownClass(cls):
        if cls.process is not None:
            cls.process.terminate()
            try:
                cls.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                cls.process.kill()
                cls.process.wait()
            cls.process = None

    def sample_once(self, *settings, env=None):
        args = ["sample", "--once", "--json"]
        for setting in settings:
            args += ["--set", setting]
        result = run(*args, env=env, timeout=60)
        self.assertEqual(result.returncode, 0, result.stderr)
        got = samples(result.stdout)
        self.assertEqual(len(got), 1, result.stdout)
        return got[0], result

    def test_sample_keys_and_indices(self):
        sample, _ = self.sample_once(endpoints(node=self.url))
        keys = openmetrics_keys(sample)
        self.assertIn("openmetrics.node.node_load1.0", keys)
        self.assertIsInstance(keys["openmetrics.node.node_load1.0"], (int, float))
        self.assertNotIn("openmetrics.node.node_load1.1", keys)
        # node_cpu_seconds_total: one index per (cpu, mode), 0..n-1 in the exposition's order.
        exposition = fetch(self.url)
        cpu_series = series(exposition, "node_cpu_seconds_total")
        self.assertGreater(len(cpu_series), 0)
        self.assertEqual(indices(keys, "openmetrics.node.node_cpu_seconds_total."), list(range(len(cpu_series))))
        # Summaries and histograms are not keyed; the host metrics are all still there.
        for key in keys:
            self.assertFalse(key.startswith("openmetrics.node.go_gc_duration_seconds"), key)
            self.assertNotIn("_bucket.", key)
        for key in ("cpu_percent", "memory_percent", "proc.memory.availableMB", "network.sent"):
            self.assertIn(key, sample)

    def test_list_filter(self):
        sample, _ = self.sample_once(endpoints(node=self.url),
                                     'x_stats_open_metrics_filters=["node\\\\.node_load1$", "node_cpu_seconds_total"]')
        keys = openmetrics_keys(sample)
        self.assertIn("openmetrics.node.node_load1.0", keys)
        self.assertIn("openmetrics.node.node_cpu_seconds_total.0", keys)
        for key in keys:
            self.assertTrue(key.startswith("openmetrics.node.node_load1.") or
                            key.startswith("openmetrics.node.node_cpu_seconds_total."), key)

    def test_label_filter_narrows_to_cpu_0(self):
        before = fetch(self.url)
        sample, _ = self.sample_once(endpoints(node=self.url),
                                     'x_stats_open_metrics_filters={"node_cpu_seconds_total": {"cpu": "^0$"}}')
        after = fetch(self.url)
        keys = openmetrics_keys(sample)
        cpu0 = [(labels, value) for labels, value in series(before, "node_cpu_seconds_total")
                if labels.get("cpu") == "0"]
        self.assertGreater(len(cpu0), 0)
        self.assertEqual(indices(keys, "openmetrics.node.node_cpu_seconds_total."), list(range(len(cpu0))))
        self.assertEqual(len(keys), len(cpu0), keys)
        # Each index's value lies between the values read just before and just after (counters grow).
        after_by_mode = {labels["mode"]: value for labels, value in series(after, "node_cpu_seconds_total")
                         if labels.get("cpu") == "0"}
        for index, (labels, value_before) in enumerate(cpu0):
            got = keys[f"openmetrics.node.node_cpu_seconds_total.{index}"]
            self.assertGreaterEqual(got, value_before - 1e-6, labels)
            self.assertLessEqual(got, after_by_mode[labels["mode"]] + 1e-6, labels)

        sample, _ = self.sample_once(
            endpoints(node=self.url),
            'x_stats_open_metrics_filters={"node_cpu_seconds_total": {"cpu": "^0$", "mode": "^idle$"}}')
        self.assertEqual(list(openmetrics_keys(sample)), ["openmetrics.node.node_cpu_seconds_total.0"])

    def test_unreachable_endpoint_leaves_the_rest_alone(self):
        start = time.monotonic()
        sample, result = self.sample_once(endpoints(node=self.url, dead="http://127.0.0.1:1/metrics"))
        self.assertLess(time.monotonic() - start, 10)
        keys = openmetrics_keys(sample)
        self.assertIn("openmetrics.node.node_load1.0", keys)
        self.assertFalse(any(k.startswith("openmetrics.dead.") for k in keys), keys)
        for key in ("cpu_percent", "memory_percent", "disk./.usageGB"):
            self.assertIn(key, sample)
        self.assertIn("openmetrics:dead", result.stderr)
        self.assertIn("http://127.0.0.1:1/metrics", result.stderr)
        self.assertIn("Connection refused", result.stderr)

    def test_run_records_the_keys(self):
        tmp = tempfile.mkdtemp()
        try:
            directory = os.path.join(tmp, "wandb")
            result = run("run", "--interval", "0.5", "--dir", directory,
                         "--set", endpoints(node=self.url),
                         "--set", 'x_stats_open_metrics_filters=["node_load1$", "node_cpu_seconds_total"]',
                         "--", "sleep", "1.6", timeout=60)
            self.assertEqual(result.returncode, 0, result.stderr)
            logs = glob.glob(os.path.join(directory, "run-*", "run-*.wandb"))
            self.assertEqual(len(logs), 1)
            dumped = run("dump", logs[0])
            self.assertEqual(dumped.returncode, 0, dumped.stderr)
            records = [json.loads(line) for line in dumped.stdout.splitlines() if line.strip()]
            stats = [r["record"]["stats"] for r in records if r["record_type"] == "stats"]
            self.assertGreaterEqual(len(stats), 3)
            with_load = [s for s in stats if any(i["key"] == "openmetrics.node.node_load1.0" for i in s["item"])]
            self.assertGreaterEqual(len(with_load), 2)
            cpu_keys = {i["key"] for s in stats for i in s["item"]
                        if i["key"].startswith("openmetrics.node.node_cpu_seconds_total.")}
            self.assertIn("openmetrics.node.node_cpu_seconds_total.0", cpu_keys)
            for s in stats:
                for item in s["item"]:
                    if item["key"].startswith("openmetrics."):
                        float(item["value_json"])
            # The index -> labels table is in the run as a config item (the last one holds the whole table).
            tables = [json.loads(item["value_json"]) for r in records if r["record_type"] == "config"
                      for item in r["record"]["config"].get("update", []) if item["key"] == "_runmon.openmetrics"]
            self.assertTrue(tables, "no _runmon.openmetrics config item in the run")
            table = tables[-1]
            self.assertIn("node", table)
            self.assertIn("node_load1", table["node"])
            self.assertEqual(table["node"]["node_load1"], [{}])
            for labels in table["node"]["node_cpu_seconds_total"]:
                self.assertEqual(set(labels), {"cpu", "mode"})
        finally:
            shutil.rmtree(tmp)

    def test_headers_reach_the_endpoint(self):
        seen = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                seen.append(dict(self.headers))
                body = b"# TYPE probe gauge\nprobe{kind=\"e2e\"} 42\n"
                self.send_response(200)
                self.send_header("Content-Type", "text/plain; version=0.0.4")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            url = f"http://127.0.0.1:{server.server_address[1]}/metrics"
            sample, _ = self.sample_once(
                endpoints(probe=url),
                env={"WANDB_X_STATS_OPEN_METRICS_HTTP_HEADERS": '{"Authorization": "Bearer e2e", "X-Team": "a"}'})
            self.assertEqual(sample.get("openmetrics.probe.probe.0"), 42)
            self.assertTrue(seen)
            self.assertEqual(seen[0].get("Authorization"), "Bearer e2e")
            self.assertEqual(seen[0].get("X-Team"), "a")
            self.assertTrue(seen[0].get("Accept", "").startswith("text/plain;version=0.0.4"))
        finally:
            server.shutdown()
            server.server_close()

    def test_bad_settings_exit_2(self):
        cases = [
            (endpoints(node="file:///etc/passwd"), "only http:// and https://"),
            (endpoints(**{"": self.url}), "endpoint name is empty"),
            ("x_stats_open_metrics_endpoints={not json", "not valid JSON"),
            ('x_stats_open_metrics_filters=["a(b"]', "does not compile"),
            ('x_stats_open_metrics_http_headers={"X-Token": "abc\\r\\nInjected: 1"}', "control character"),
            ('x_stats_open_metrics_http_headers={"Bad Name": "v"}', "may hold only"),
        ]
        for setting, message in cases:
            with self.subTest(setting=setting):
                for command in (["sample", "--once", "--json"], ["run", "--", "true"]):
                    result = run(*command[:1], "--set", setting, *command[1:], timeout=30)
                    self.assertEqual(result.returncode, 2, result.stderr)
                    self.assertIn(message, result.stderr)
                    self.assertNotIn("abc", result.stderr)  # a header's value is never repeated
                    self.assertEqual(result.stdout, "")


if __name__ == "__main__":
    unittest.main()
