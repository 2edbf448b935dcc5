"""End-to-end tests of the Prometheus exporter: `runmon exporter` serving /metrics (names, labels, values,
the per-collector series, `promtool check metrics`), Debian's Prometheus server scraping it (with and without a bearer token) and
answering queries for its series, `runmon run --metrics-listen` labelling a live run's series with its id,
and the refusals: a non-loopback address without a token and malformed addresses (exit 2), a port in use
(exit 1, and `runmon run` starts nothing); a scrape answered within 1 s beside 500 stalled sockets and
slow-loris clients. Prometheus and promtool are required: without them the tests
fail and say how to install them."""
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.error
import urllib.parse
import urllib.request

from http_e2e import Process, check_stalled_clients_wait_alone, clean_env, free_port, wait_for
from runmon_e2e import RUNMON

PROMETHEUS = "/usr/bin/prometheus"
PROMTOOL = "/usr/bin/promtool"
TOKEN = "e2e-token-0123456789abcdef"
HOST = socket.gethostname()


def fetch(url, headers=None, timeout=5):
    request = urllib.request.Request(url, headers=headers or {})
    with urllib.request.urlopen(request, timeout=timeout) as response:
        return response.status, dict(response.headers), response.read().decode()


def status_of(url, headers=None, method="GET", data=None):
    request = urllib.request.Request(url, headers=headers or {}, method=method, data=data)
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status
    except urllib.error.HTTPError as e:
        return e.code


def parse_labels(text):
    """'a="x",b="y\\"z"' -> {"a": "x", "b": 'y"z'} (the exposition's escapes undone)."""
    labels = {}
    i = 0
    while i < len(text):
        eq = text.index("=", i)
        name = text[i:eq]
        assert text[eq + 1] == '"', text
        j = eq + 2
        value = []
        while text[j] != '"':
            if text[j] == "\\":
                value.append({"n": "\n", "\\": "\\", '"': '"'}[text[j + 1]])
                j += 2
            else:
                value.append(text[j])
                j += 1
        labels[name] = "".join(value)
        i = j + 1
        if i < len(text) and text[i] == ",":
            i += 1
    return labels


def parse_exposition(text):
    """{name: [(labels, value)]} and {name: type}."""
    series, types = {}, {}
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split(" ", 3)
            types[name] = kind
            continue
        if not line or line.startswith("#"):
            continue
        if "{" in line:
            name, rest = line.split("{", 1)
            label_text, value = rest.rsplit("} ", 1)
            labels = parse_labels(label_text)
        else:
            name, value = line.split(" ", 1)
            labels = {}
        series.setdefault(name, []).append((labels, float(value)))
    return series, types


class ExporterTest(unittest.TestCase):
    def setUp(self):
        self.processes = []
        self.tmp = tempfile.TemporaryDirectory()

    def tearDown(self):
        for process in reversed(self.processes):
            process.close()
        self.tmp.cleanup()

    def require(self, path):
        if not os.access(path, os.X_OK):
            self.fail(f"{path} is missing: run scripts/install-deps.sh (it installs prometheus, which brings "
                      "promtool, and prometheus-node-exporter)")

    def start(self, args, env=None):
        process = Process(args, env=env)
        self.processes.append(process)
        return process

    def start_exporter(self, *extra, port=None):
        port = port or free_port()
        exporter = self.start([RUNMON, "exporter", "--listen", f"127.0.0.1:{port}", *extra])
        url = f"http://127.0.0.1:{port}/metrics"
        wait_for(lambda: f"serving {url}" in exporter.output() or exporter.proc.poll() is not None,
                 what="the exporter's start")
        self.assertIsNone(exporter.proc.poll(), exporter.output())
        return exporter, url

    def scrape(self, url, headers=None):
        status, response_headers, body = fetch(url, headers)
        self.assertEqual(status, 200)
        self.assertEqual(response_headers["Content-Type"], "text/plain; version=0.0.4; charset=utf-8")
        return body

    def wait_for_samples(self, url, count, headers=None):
        def enough():
            series, _ = parse_exposition(self.scrape(url, headers))
            samples = series.get("runmon_exporter_samples_total", [({}, 0)])[0][1]
            return series if samples >= count else None
        return wait_for(enough, what=f"{count} samples at {url}")

    def promtool_check(self, text):
        self.require(PROMTOOL)
        result = subprocess.run([PROMTOOL, "check", "metrics"], input=text, capture_output=True, text=True,
                                timeout=60)
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        self.assertEqual(result.stdout + result.stderr, "", "promtool's lint has remarks")

    def assert_collector_series(self, series, expected):
        """runmon_collector_duration_seconds and runmon_collector_success: one each per collector, with at
        least the `expected` collectors, each of which succeeded."""
        durations = {labels["collector"]: value for labels, value in series["runmon_collector_duration_seconds"]}
        successes = {labels["collector"]: value for labels, value in series["runmon_collector_success"]}
        self.assertEqual(len(durations), len(series["runmon_collector_duration_seconds"]), "a collector twice")
        self.assertEqual(set(durations), set(successes))
        self.assertLessEqual(set(expected), set(durations))
        for name, seconds in durations.items():
            self.assertGreaterEqual(seconds, 0, name)
        for name, success in successes.items():
            self.assertIn(success, (0, 1), name)
        for name in expected:
            self.assertEqual(successes[name], 1, name)

    def test_exporter_serves_the_host(self):
        self.require(PROMTOOL)
        exporter, url = self.start_exporter("--interval", "0.5")
        series = self.wait_for_samples(url, 3)
        body = self.scrape(url)
        _, types = parse_exposition(body)

        for name in ("runmon_host_cpu_ratio", "runmon_memory_used_ratio", "runmon_memory_available_bytes",
                     "runmon_disk_used_ratio", "runmon_disk_used_bytes", "runmon_network_sent_bytes_total",
                     "runmon_network_received_bytes_per_second", "runmon_self_resident_memory_bytes",
                     "runmon_exporter_samples_total", "runmon_last_sample_timestamp_seconds"):
            self.assertIn(name, series, body)
            for labels, _ in series[name]:
                self.assertEqual(labels.get("host"), HOST, name)
                self.assertNotIn("run_id", labels, name)
        # No --pid: the host alone.
        self.assertNotIn("runmon_process_cpu_ratio", series)
        self.assertNotIn("runmon_process_resident_memory_bytes", series)
        # Values in base units.
        for name in ("runmon_host_cpu_ratio", "runmon_memory_used_ratio", "runmon_disk_used_ratio"):
            for _, value in series[name]:
                self.assertTrue(0 <= value <= 1, f"{name} = {value}")
        self.assertEqual({labels["path"] for labels, _ in series["runmon_disk_used_bytes"]}, {"/"})
        used = os.statvfs("/")
        used_bytes = (used.f_blocks - used.f_bfree) * used.f_frsize
        self.assertAlmostEqual(series["runmon_disk_used_bytes"][0][1] / used_bytes, 1, delta=0.05)
        available = series["runmon_memory_available_bytes"][0][1]
        self.assertGreater(available, 16 * 1024 * 1024)
        self.assertEqual(available % 1024, 0, "MiB converted to bytes")
        self.assertGreater(series["runmon_self_resident_memory_bytes"][0][1], 1024 * 1024)
        stamp = series["runmon_last_sample_timestamp_seconds"][0][1]
        self.assertLess(abs(stamp - time.time()), 30)
        self.assertEqual(types["runmon_network_sent_bytes_total"], "counter")
        self.assertEqual(types["runmon_host_cpu_ratio"], "gauge")
        self.assert_collector_series(series, ("cpu", "memory", "network", "runmon"))
        self.assertEqual(types["runmon_collector_duration_seconds"], "gauge")
        self.assertEqual(types["runmon_collector_success"], "gauge")
        self.promtool_check(body)

        # A scrape never samples: scraping fast returns the same sample.
        first = self.scrape(url)
        second = self.scrape(url)
        a, _ = parse_exposition(first)
        b, _ = parse_exposition(second)
        samples_a = a["runmon_exporter_samples_total"][0][1]
        if samples_a == b["runmon_exporter_samples_total"][0][1]:
            self.assertEqual(first, second)

        self.assertEqual(status_of(url.replace("/metrics", "/")), 404)
        self.assertEqual(status_of(url, method="POST", data=b"x"), 405)
        self.assertEqual(status_of(url, headers={"Host": "evil.example"}), 403)

        self.assertEqual(exporter.stop(signal.SIGTERM), 0, exporter.output())
        exporter2, url2 = self.start_exporter("--interval", "0.5")
        self.wait_for_samples(url2, 1)
        self.assertEqual(exporter2.stop(signal.SIGINT), 0, exporter2.output())

    def test_exporter_with_a_process_and_a_token(self):
        child = self.start([sys.executable, "-c", "import time; b = bytearray(40_000_000); time.sleep(60)"])
        exporter, url = self.start_exporter("--interval", "0.5", "--pid", str(child.proc.pid),
                                            "--token", TOKEN)
        self.assertEqual(status_of(url), 401)
        self.assertEqual(status_of(url, headers={"Authorization": "Bearer wrong-token-0123456789"}), 401)
        auth = {"Authorization": f"Bearer {TOKEN}"}
        series = wait_for(
            lambda: (lambda s: s if s.get("runmon_process_resident_memory_bytes", [({}, 0)])[0][1] > 40e6
                     else None)(self.wait_for_samples(url, 2, auth)),
            what="the process's memory")
        self.assertEqual(series["runmon_process_threads"][0][1], 1)
        self.assertIn("runmon_process_cpu_ratio", series)
        self.assertEqual(exporter.stop(), 0, exporter.output())

    def test_prometheus_scrapes_the_exporter(self):
        self.require(PROMETHEUS)
        self.require(PROMTOOL)
        _, url = self.start_exporter("--interval", "0.5")
        token_port = free_port()
        self.start_exporter("--interval", "0.5", "--token", TOKEN, port=token_port)
        target = urllib.parse.urlparse(url).netloc
        prometheus_port = free_port()
        config = os.path.join(self.tmp.name, "prometheus.yml")
        with open(config, "w") as f:
            f.write(f"""global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: runmon
    static_configs:
      - targets: ["{target}"]
  - job_name: runmon_token
    authorization:
      credentials: "{TOKEN}"
    static_configs:
      - targets: ["127.0.0.1:{token_port}"]
""")
        checked = subprocess.run([PROMTOOL, "check", "config", config], capture_output=True, text=True,
                                 timeout=60)
        self.assertEqual(checked.returncode, 0, checked.stdout + checked.stderr)
        prometheus = self.start([PROMETHEUS, f"--config.file={config}",
                                 f"--storage.tsdb.path={os.path.join(self.tmp.name, 'tsdb')}",
                                 f"--web.listen-address=127.0.0.1:{prometheus_port}"])
        api = f"http://127.0.0.1:{prometheus_port}"
        wait_for(lambda: fetch(f"{api}/-/ready")[0] == 200, timeout=60, what="Prometheus ready")

        def query(expression):
            _, _, body = fetch(f"{api}/api/v1/query?" + urllib.parse.urlencode({"query": expression}))
            answer = json.loads(body)
            self.assertEqual(answer["status"], "success", body)
            return answer["data"]["result"]

        def present(expression, count=1):
            result = query(expression)
            return result if len(result) >= count else None

        try:
            results = wait_for(lambda: present("runmon_host_cpu_ratio", 2), timeout=60,
                               what="runmon_host_cpu_ratio in Prometheus")
        except AssertionError:
            print(prometheus.output(), file=sys.stderr)
            raise
        jobs = {r["metric"]["job"]: r for r in results}
        self.assertEqual(set(jobs), {"runmon", "runmon_token"})
        for result in results:
            self.assertEqual(result["metric"]["host"], HOST)
            self.assertTrue(0 <= float(result["value"][1]) <= 1, result)
        self.assertEqual(jobs["runmon"]["metric"]["instance"], target)
        # Several scrapes arrive, and the counters work with rate().
        wait_for(lambda: present('runmon_exporter_samples_total{job="runmon"} > 4'), timeout=60,
                 what="more samples in Prometheus")
        wait_for(lambda: present('count_over_time(runmon_exporter_samples_total{job="runmon"}[1m]) >= 3'),
                 timeout=60, what="three scrapes")
        self.assertTrue(query('rate(runmon_network_received_bytes_total{job="runmon"}[1m])'))
        disk = query('runmon_disk_used_bytes{job="runmon"}')
        self.assertEqual(disk[0]["metric"]["path"], "/")
        self.assertGreater(float(disk[0]["value"][1]), 0)
        # Both targets are healthy: the token one was scraped with its bearer credentials.
        _, _, body = fetch(f"{api}/api/v1/targets")
        targets = json.loads(body)["data"]["activeTargets"]
        self.assertEqual(len(targets), 2, body)
        for target_state in targets:
            self.assertEqual(target_state["health"], "up", target_state)
            self.assertEqual(target_state["lastError"], "", target_state)
        self.assertEqual(prometheus.stop(), 0, prometheus.output()[-4000:])

    def test_run_serves_the_runs_samples(self):
        self.require(PROMTOOL)
        port = free_port()
        url = f"http://127.0.0.1:{port}/metrics"
        workload = ("import time\n"
                    "b = bytearray(60_000_000)\n"
                    "end = time.time() + 4\n"
                    "while time.time() < end: sum(range(10000))\n")
        runner = self.start([RUNMON, "run", "--metrics-listen", f"127.0.0.1:{port}", "--interval", "0.5",
                             "--dir", os.path.join(self.tmp.name, "wandb"), "--id", "e2eexporter",
                             "--", sys.executable, "-c", workload])
        series = wait_for(
            lambda: (lambda s: s if s.get("runmon_process_resident_memory_bytes", [({}, 0)])[0][1] > 50e6
                     else None)(parse_exposition(self.scrape(url))[0]),
            what="the run's memory")
        for name in ("runmon_process_cpu_ratio", "runmon_process_resident_memory_bytes",
                     "runmon_host_cpu_ratio", "runmon_exporter_samples_total"):
            for labels, _ in series[name]:
                self.assertEqual(labels.get("run_id"), "e2eexporter", name)
                self.assertEqual(labels.get("host"), HOST, name)
        self.assert_collector_series(series, ("process_tree", "cpu", "memory"))
        self.promtool_check(self.scrape(url))
        self.assertEqual(runner.proc.wait(timeout=60), 0, runner.output())
        self.assertIn(f"serving the run's metrics at {url}", runner.output())
        with self.assertRaises(urllib.error.URLError):
            fetch(url, timeout=2)

    def test_stalled_clients_do_not_delay_a_scrape(self):
        exporter, url = self.start_exporter("--interval", "1h")
        port = int(url.split(":")[2].split("/")[0])
        check_stalled_clients_wait_alone(self, port, url)
        self.assertIsNone(exporter.proc.poll(), exporter.output())

    def test_refusals_exit_2(self):
        port = free_port()
        cases = [
            ["exporter", "--listen", f"0.0.0.0:{port}"],
            ["exporter", "--listen", f"[::]:{port}"],
            ["exporter"],
            ["exporter", "--listen", str(port)],
            ["exporter", "--listen", f"::1:{port}"],
            ["exporter", "--listen", f"example.com:{port}"],
            ["exporter", "--listen", "127.0.0.1:70000"],
            ["exporter", "--listen", f"127.0.0.1:{port}", "--token", "short"],
            ["exporter", "--listen", f"127.0.0.1:{port}", "--interval", "0.01"],
            ["run", "--metrics-listen", f"0.0.0.0:{port}", "--", "true"],
            ["run", "--metrics-listen", "localhost", "--", "true"],
            ["run", "--metrics-token", TOKEN, "--", "true"],
        ]
        for args in cases:
            result = subprocess.run([RUNMON, *args], capture_output=True, text=True, env=clean_env(),
                                    timeout=30, cwd=self.tmp.name)
            self.assertEqual(result.returncode, 2, f"{args}: {result.stderr}")
            self.assertTrue(result.stderr.strip(), args)
        result = subprocess.run([RUNMON, "exporter", "--listen", f"0.0.0.0:{port}"], capture_output=True,
                                text=True, env=clean_env(), timeout=30)
        self.assertIn("--token", result.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.tmp.name, "wandb")), "nothing recorded")

    def test_a_port_in_use_exits_1(self):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as held:
            held.bind(("127.0.0.1", 0))
            held.listen(1)
            port = held.getsockname()[1]
            result = subprocess.run([RUNMON, "exporter", "--listen", f"127.0.0.1:{port}"],
                                    capture_output=True, text=True, env=clean_env(), timeout=30)
            self.assertEqual(result.returncode, 1, result.stderr)
            self.assertIn("in use", result.stderr)
            marker = os.path.join(self.tmp.name, "started")
            wandb = os.path.join(self.tmp.name, "wandb")
            result = subprocess.run([RUNMON, "run", "--metrics-listen", f"127.0.0.1:{port}", "--dir", wandb,
                                     "--", "touch", marker], capture_output=True, text=True, env=clean_env(),
                                    timeout=30)
            self.assertEqual(result.returncode, 1, result.stderr)
            self.assertFalse(os.path.exists(marker), "the command must not start")
            self.assertFalse(os.path.exists(wandb), "no run may be recorded")
        # Another exporter on a running exporter's port: no sharing through SO_REUSEPORT.
        exporter, url = self.start_exporter("--interval", "0.5")
        port = urllib.parse.urlparse(url).port
        result = subprocess.run([RUNMON, "exporter", "--listen", f"127.0.0.1:{port}"], capture_output=True,
                                text=True, env=clean_env(), timeout=30)
        self.assertEqual(result.returncode, 1, result.stderr)
        self.assertEqual(exporter.stop(), 0, exporter.output())


if __name__ == "__main__":
    unittest.main()
