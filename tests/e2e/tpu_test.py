"""End to end: the TPU family on a fake host (a copy of tests/fixtures/hosts/debian12-vm with Google TPU
functions added to its PCI bus, read through --root) against the fake runtime-metrics service
(tests/fakes/tpu_runtime_service, answering tests/fixtures/tpu/runtime_v5e_4chip.json) and the fake
libtpu.so (tests/fakes/libtpu). A recorded run holds the tpu.* keys with the fixture's values (the
distributions' statistics recomputed here, independently, from their buckets) and the chips' metadata;
leet, the dashboard and the exporter chart them; with no service listening the run is quiet; a stalled
service delays no other collector and not runmon's exit; a host without a TPU never connects; every
process's port of TPU_RUNTIME_METRICS_PORTS is read; the SDK's values come first.

What runmon must emit is written once, in the EXPECTED_* tables and expected_keys() below."""
import glob
import json
import math
import os
import re
import shutil
import socket
import subprocess
import tempfile
import threading
import time
import unittest

from http_e2e import dashboard_charts, exposition_with, free_port
from runmon_e2e import RUNMON, leet_frame, run

HERE = os.path.dirname(os.path.abspath(__file__))
HOST = os.path.join(HERE, "..", "fixtures", "hosts", "debian12-vm")
FIXTURES = os.path.join(HERE, "..", "fixtures", "tpu")
FAKE_SERVICE = os.environ.get("RUNMON_FAKE_TPU_SERVICE", "")
FAKE_LIBTPU = os.environ.get("RUNMON_FAKE_LIBTPU", "")
# runmon processes that run gRPC's threads end without LeakSanitizer's exit check: clang 14's leak checker
# crashes in about one exit in fifty while those threads are there ("Tracer caught signal 11", scanning a
# thread's range). AddressSanitizer and UBSan stay on; the client's leaks are checked where it is made and
# destroyed, in tests/collectors/tpu_runtime_client_test.cpp and tpu_collector_test.cpp.
NO_EXIT_LEAK_CHECK = {"ASAN_OPTIONS": ":".join(
    [o for o in os.environ.get("ASAN_OPTIONS", "").split(":") if o and not o.startswith("detect_leaks=")] +
    ["detect_leaks=0"])}

# --- The contract (adjust here) --------------------------------------------------------------------------
V5E_DEVICE = "0x0063"
EXPECTED_METADATA = {"name": "v5e", "hbm_gib": 16, "devices_per_chip": 1, "count": 4}
# service metric -> per-device key leaf
EXPECTED_GAUGES = {
    "tpu.runtime.hbm.memory.total.bytes": "hbmCapacityTotal",
    "tpu.runtime.hbm.memory.usage.bytes": "hbmCapacityUsage",
    "tpu.runtime.tensorcore.dutycycle.percent": "dutyCycle",
    "tpu.runtime.hbm.utilization.percent": "runtimeHbmUtilization",
    "tpu.runtime.tensorcore.idle_duration.seconds": "tensorcoreIdleDuration",
}
# service metric -> (key family, unit suffix, labelled)
EXPECTED_DISTRIBUTIONS = {
    "megascale.dcn_transfer_latencies.microsecond.cumulative.distribution": ("bufferTransferLatency", "Us", True),
    "megascale.dcn_inbound_transfer_latencies.microsecond.cumulative.distribution":
        ("inboundBufferTransferLatency", "Us", True),
    "megascale.host_to_device_transfer_latencies.microsecond.cumulative.distribution":
        ("hostToDeviceTransferLatency", "Us", True),
    "megascale.device_to_host_transfer_latencies.microsecond.cumulative.distribution":
        ("deviceToHostTransferLatency", "Us", True),
    "megascale.collective_end_to_end_latencies.microsecond.cumulative.distribution":
        ("collectiveE2ELatency", "Us", True),
    "megascale.mxla_compute_latencies.microsecond.cumulative.distribution": ("hostComputeLatency", "Us", True),
    "megascale.grpc_tcp_min_rtt.microsecond.cumulative.distribution": ("grpcTcpMinRtt", "Us", False),
    "megascale.grpc_tcp_delivery_rate.Mbps.cumulative.distribution": ("grpcTcpDeliveryRate", "Mbps", False),
    "hlo.execution.timing.distribution.microseconds": ("hloExecTiming", "Us", True),
}
QUANTILES = {0.5: "p50", 0.9: "p90", 0.95: "p95", 0.99: "p99", 0.999: "p999"}


def sanitize(label):
    label = label.strip().lower().replace("+", "_plus_").replace("%", "pct")
    label = re.sub(r"[^a-z0-9]+", "_", label).strip("_")
    return label or "unknown"


def label_of(attribute, index):
    value = attribute.get("value", {})
    if value.get("stringAttr"):
        return sanitize(value["stringAttr"])
    entries = {e["key"]: e.get("value", {}) for e in value.get("kvlistAttr", {}).get("attributes", [])}
    if "stringAttr" in entries.get("buffer-size", {}):
        return sanitize(entries["buffer-size"]["stringAttr"])
    if "device_ordinal" in entries:
        ordinal = entries["device_ordinal"].get("stringAttr", entries["device_ordinal"].get("intAttr"))
        core = entries.get("core_type", {}).get("stringAttr")
        return sanitize(f"{core}_{int(ordinal)}") if core else f"device_{int(ordinal)}"
    return f"item_{index}"


def upper_bounds(options):
    if "exponentialBuckets" in options:
        e = options["exponentialBuckets"]
        return [e["scale"] * e["growthFactor"] ** (i + 1) for i in range(e["numFiniteBuckets"])]
    if "linearBuckets" in options:
        lin = options["linearBuckets"]
        return [lin.get("offset", 0) + lin["width"] * (i + 1) for i in range(lin["numFiniteBuckets"])]
    return list(options.get("explicitBuckets", {}).get("bounds", []))


def percentile(distribution, q):
    """W&B's rule: linear interpolation inside the cumulative bucket counts."""
    counts = [int(c) for c in distribution.get("bucketCounts", [])]
    total = sum(counts)
    bounds = upper_bounds(distribution.get("bucketOptions", {}))
    if not counts or total == 0 or not bounds:
        return None
    target, cumulative = total * q, 0
    for i, count in enumerate(counts):
        cumulative += count
        if cumulative < target:
            continue
        if i == 0:
            low, high = 0.0, bounds[0]
        elif i <= len(bounds):
            low, high = bounds[i - 1], bounds[min(i, len(bounds) - 1)]
        else:
            low = high = bounds[-1]
        return low + (target - (cumulative - count)) / count * (high - low)
    return bounds[-1]


def expected_keys(responses):
    """The tpu.* keys and values one sample of `responses` (a 4-chip v5e) gives."""
    values = {}
    for name, leaf in EXPECTED_GAUGES.items():
        for metric in responses[name]["metric"]["metrics"]:
            gauge = metric["gauge"]
            value = float(gauge["asInt"]) if "asInt" in gauge else gauge["asDouble"]
            values[f"tpu.{int(metric['attribute']['value']['intAttr'])}.{leaf}"] = value
    for device in range(4):
        total, usage = values.get(f"tpu.{device}.hbmCapacityTotal"), values.get(f"tpu.{device}.hbmCapacityUsage")
        if total and usage is not None:
            values[f"tpu.{device}.hbmMemoryUsage"] = usage / total * 100
    for name, (family, unit, labelled) in EXPECTED_DISTRIBUTIONS.items():
        for index, metric in enumerate(responses[name]["metric"]["metrics"]):
            prefix = f"tpu.{family}." + (f"{label_of(metric.get('attribute', {}), index)}." if labelled else "")
            if "summary" in metric:
                summary = metric["summary"]
                count = int(summary.get("sampleCount", 0))
                if count:
                    values[f"{prefix}mean{unit}"] = summary["sampleSum"] / count
                for q in summary.get("quantile", []):
                    values[f"{prefix}{QUANTILES[q['quantile']]}{unit}"] = q["value"]
            elif int(metric["distribution"].get("count", 0)) > 0:
                distribution = metric["distribution"]
                values[f"{prefix}mean{unit}"] = distribution["mean"]
                for q, stat in QUANTILES.items():
                    value = percentile(distribution, q)
                    if value is not None:
                        values[f"{prefix}{stat}{unit}"] = value
    for index, metric in enumerate(responses["hlo.queue.size.gauge"]["metric"]["metrics"]):
        values[f"tpu.hloQueueSize.{label_of(metric['attribute'], index)}"] = float(metric["gauge"]["asInt"])
    return values
# ----------------------------------------------------------------------------------------------------------


def load_fixture(name="runtime_v5e_4chip.json"):
    with open(os.path.join(FIXTURES, name)) as f:
        return {k: v for k, v in json.load(f).items() if not k.startswith("_")}


class FakeService:
    """fake_tpu_runtime_service on a free port; `address` once it listens."""

    def __init__(self, *args):
        self.process = subprocess.Popen([FAKE_SERVICE, "--port", "0", *args], stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, text=True)
        line = self.process.stdout.readline().strip()
        if not line.startswith("listening "):
            self.process.kill()
            raise AssertionError(f"fake service did not start: {line!r} {self.process.stderr.read()}")
        self.address = line.split()[1]

    def close(self):
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


class CountingListener:
    """A TCP listener on 127.0.0.1 that counts the connections it accepts."""

    def __init__(self):
        self.socket = socket.socket()
        self.socket.bind(("127.0.0.1", 0))
        self.socket.listen(16)
        self.address = f"127.0.0.1:{self.socket.getsockname()[1]}"
        self.accepted = 0
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self):
        while True:
            try:
                connection, _ = self.socket.accept()
            except OSError:
                return
            self.accepted += 1
            connection.close()

    def close(self):
        self.socket.close()


class TpuTest(unittest.TestCase):
    def setUp(self):
        self.assertTrue(FAKE_SERVICE and FAKE_LIBTPU, "RUNMON_FAKE_TPU_SERVICE and RUNMON_FAKE_LIBTPU (ctest sets both)")
        self.tmp = tempfile.TemporaryDirectory()
        self.tree = os.path.join(self.tmp.name, "tree")
        shutil.copytree(HOST, self.tree, symlinks=True, ignore=shutil.ignore_patterns("t1"))
        self.wandb = os.path.join(self.tmp.name, "wandb")
        self.services = []

    def tearDown(self):
        for service in self.services:
            service.close()
        self.tmp.cleanup()

    def add_chips(self, count, device=V5E_DEVICE, subsystem="0x0000", first_slot=4):
        for chip in range(count):
            function = os.path.join(self.tree, "sys", "bus", "pci", "devices", f"0000:00:{first_slot + chip:02x}.0")
            os.makedirs(function, exist_ok=True)
            for name, value in (("vendor", "0x1ae0"), ("device", device), ("subsystem_device", subsystem)):
                with open(os.path.join(function, name), "w") as f:
                    f.write(value + "\n")

    def service(self, *args):
        service = FakeService(*args)
        self.services.append(service)
        return service

    def record(self, env, run_id="tpue2e", seconds="1.5", extra=()):
        started = time.monotonic()
        result = run("run", "--root", self.tree, "--dir", self.wandb, "--id", run_id, "--interval", "0.2", *extra,
                     "--", "sleep", seconds, env={**NO_EXIT_LEAK_CHECK, **env}, timeout=90)
        wall = time.monotonic() - started
        self.assertEqual(result.returncode, 0, result.stderr)
        (run_dir,) = glob.glob(os.path.join(self.wandb, f"run-*-{run_id}"))
        return run_dir, result, wall

    def stats(self, run_dir):
        dumped = run("dump", run_dir)
        self.assertEqual(dumped.returncode, 0, dumped.stderr)
        out = []
        for record in map(json.loads, dumped.stdout.splitlines()):
            if record["record_type"] == "stats":
                out.append({item["key"]: json.loads(item["value_json"]) for item in record["record"]["stats"]["item"]})
        return out

    def tpu(self, sample):
        return {k: v for k, v in sample.items() if k.startswith("tpu.")}

    def assert_same(self, actual, expected):
        self.assertEqual(sorted(actual), sorted(expected))
        for key, value in expected.items():
            self.assertTrue(math.isclose(actual[key], value, rel_tol=1e-9, abs_tol=1e-9), f"{key}: {actual[key]} != {value}")

    def v5e_run(self, run_id="tpue2e", extra=(), env=None):
        self.add_chips(4)
        service = self.service("--responses", os.path.join(FIXTURES, "runtime_v5e_4chip.json"))
        return self.record({"RUNMON_TPU_RUNTIME_ADDRESS": service.address, **(env or {})}, run_id=run_id, extra=extra)

    def test_a_recorded_run_has_the_fixtures_keys_and_the_chips(self):
        run_dir, result, _ = self.v5e_run()
        samples = [self.tpu(s) for s in self.stats(run_dir)]
        self.assertGreaterEqual(len(samples), 3)
        expected = expected_keys(load_fixture())
        self.assertGreater(len(expected), 150)
        for sample in samples:
            self.assert_same(sample, expected)
        with open(os.path.join(run_dir, "files", "wandb-metadata.json")) as f:
            metadata = json.load(f)
        self.assertEqual({k: metadata["tpu"][k] for k in EXPECTED_METADATA}, EXPECTED_METADATA)
        self.assertNotIn("tpu:", result.stderr)

    def test_leet_the_dashboard_and_the_exporter_chart_them(self):
        port = free_port()
        self.add_chips(4)
        service = self.service("--responses", os.path.join(FIXTURES, "runtime_v5e_4chip.json"))
        env = dict(os.environ, RUNMON_TPU_RUNTIME_ADDRESS=service.address, **NO_EXIT_LEAK_CHECK)
        runner = subprocess.Popen([RUNMON, "run", "--root", self.tree, "--dir", self.wandb, "--id", "tpuexport",
                                   "--interval", "0.2", "--metrics-listen", f"127.0.0.1:{port}", "--", "sleep", "3"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
        try:
            body = exposition_with(port, "runmon_tpu_duty_cycle_ratio", what="TPU series")
            for series in ('runmon_tpu_duty_cycle_ratio{device="0"', 'runmon_tpu_duty_cycle_ratio{device="3"',
                           'runmon_tpu_hbm_capacity_usage_bytes{device="2"', 'runmon_tpu_hbm_memory_usage_ratio{device="1"',
                           'runmon_tpu_tensorcore_idle_duration_seconds{device="0"',
                           'runmon_tpu_buffer_transfer_latency_p50_seconds{label="8mb_plus"',
                           'runmon_tpu_grpc_tcp_delivery_rate_p90_bytes_per_second{',
                           'runmon_tpu_hlo_queue_size{label="tensor_core_0"',
                           'runmon_collector_success{collector="tpu"'):
                self.assertIn(series, body)
        finally:
            _, errors = runner.communicate(timeout=60)
            self.assertEqual(runner.returncode, 0, errors)
        (run_dir,) = glob.glob(os.path.join(self.wandb, "run-*-tpuexport"))
        frame = leet_frame(run_dir, "200x60")
        self.assertEqual(frame.returncode, 0, frame.stderr)
        self.assertIn("TPU Duty Cycle", frame.stdout)
        charts = dashboard_charts(RUNMON, self.wandb, run_dir)
        self.assertEqual([s["name"] for s in charts["tpu.{device}.dutyCycle"]["series"]],
                         ["TPU 0", "TPU 1", "TPU 2", "TPU 3"])
        latency = charts["tpu.bufferTransferLatency"]
        self.assertEqual(latency["title"], "TPU Buffer Transfer Latency")
        names = {s["name"] for s in latency["series"]}
        self.assertTrue({"8mb_plus mean", "8mb_plus p50", "4mb_plus p999"} <= names, names)
        self.assertIn("tpu.grpcTcpMinRtt", charts)
        self.assertIn("tpu.hloQueueSize.{label}", charts)

    def test_addresses_runmon_cannot_read_are_said(self):
        self.add_chips(4)
        service = self.service("--responses", os.path.join(FIXTURES, "runtime_v5e_4chip.json"))
        port = service.address.rsplit(":", 1)[1]
        # localhost is 127.0.0.1; a name or an IPv6 address makes the family absent, saying why.
        info = json.loads(run("info", "--root", self.tree, env={**NO_EXIT_LEAK_CHECK, "RUNMON_TPU_RUNTIME_ADDRESS": f"localhost:{port}"}).stdout)
        self.assertEqual(info["runmon"]["tpu"]["services"], [{"address": service.address, "listening": True}])
        for address in (f"tpuhost:{port}", f"[::1]:{port}", "127.0.0.1:99999"):
            info = json.loads(run("info", "--root", self.tree, env={**NO_EXIT_LEAK_CHECK, "RUNMON_TPU_RUNTIME_ADDRESS": address}).stdout)
            self.assertFalse(info["collectors"]["tpu"]["available"], address)
            self.assertIn("is not an IPv4 host:port", info["collectors"]["tpu"]["reason"])
        # A TPU_RUNTIME_METRICS_PORTS entry that is not a port is left out and said; the others are read.
        run_dir, result, _ = self.record({"TPU_RUNTIME_METRICS_PORTS": f"8431-8434,{port}"})
        self.assertIn("TPU_RUNTIME_METRICS_PORTS: '8431-8434' is not a port", result.stderr)
        self.assertIn("tpu.0.dutyCycle", self.stats(run_dir)[-1])

    def test_info_shows_the_chips_and_the_service(self):
        self.add_chips(4)
        service = self.service("--responses", os.path.join(FIXTURES, "runtime_v5e_4chip.json"))
        info = run("info", "--root", self.tree, env={**NO_EXIT_LEAK_CHECK, "RUNMON_TPU_RUNTIME_ADDRESS": service.address})
        self.assertEqual(info.returncode, 0, info.stderr)
        metadata = json.loads(info.stdout)
        self.assertEqual({k: metadata["tpu"][k] for k in EXPECTED_METADATA}, EXPECTED_METADATA)
        self.assertEqual(metadata["runmon"]["tpu"]["services"], [{"address": service.address, "listening": True}])
        self.assertEqual(metadata["runmon"]["tpu"]["libtpu"], "not found")
        self.assertTrue(metadata["collectors"]["tpu"]["available"])
        with_sdk = json.loads(run("info", "--root", self.tree, env={**NO_EXIT_LEAK_CHECK, "LIBTPU_PATH": FAKE_LIBTPU,
                                                                     "RUNMON_TPU_RUNTIME_ADDRESS": service.address}).stdout)
        self.assertEqual(with_sdk["runmon"]["tpu"]["libtpu"], FAKE_LIBTPU)

    def test_no_service_listening_is_quiet(self):
        self.add_chips(4)
        port = free_port()  # nothing listens there
        run_dir, result, _ = self.record({"RUNMON_TPU_RUNTIME_ADDRESS": f"127.0.0.1:{port}"})
        samples = self.stats(run_dir)
        self.assertGreaterEqual(len(samples), 3)
        self.assertTrue(all(len(s) > 10 and not self.tpu(s) for s in samples))
        self.assertNotIn("tpu:", result.stderr)

    def test_a_stalled_service_delays_nothing_else(self):
        self.add_chips(4)
        stalled = self.service("--stall")
        baseline_dir, _, baseline_wall = self.record({"RUNMON_TPU_RUNTIME_ADDRESS": f"127.0.0.1:{free_port()}"},
                                                     run_id="tpubase", seconds="2")
        run_dir, result, wall = self.record({"RUNMON_TPU_RUNTIME_ADDRESS": stalled.address}, run_id="tpustall",
                                            seconds="2")
        samples = self.stats(run_dir)
        baseline = self.stats(baseline_dir)
        self.assertTrue(all(not self.tpu(s) for s in samples))
        # The host collectors' samples come as often as without the TPU lane's trouble.
        self.assertGreaterEqual(len(samples), len(baseline) - 2)
        self.assertLess(wall, baseline_wall + 3, result.stderr)
        # Said once by the collector (the sampler adds its own lines on the lane's failures and lateness).
        said = [line for line in result.stderr.splitlines() if line.startswith("runmon: tpu: the runtime-metrics")]
        self.assertEqual(len(said), 1, result.stderr)

    def test_a_host_without_a_tpu_never_connects(self):
        listener = CountingListener()
        try:
            self.add_chips(1, device="0x0042")  # only Google's network card
            run_dir, _, _ = self.record({"RUNMON_TPU_RUNTIME_ADDRESS": listener.address})
            self.assertTrue(all(not self.tpu(s) for s in self.stats(run_dir)))
            info = json.loads(run("info", "--root", self.tree, env={**NO_EXIT_LEAK_CHECK, "RUNMON_TPU_RUNTIME_ADDRESS": listener.address}).stdout)
            self.assertFalse(info["collectors"]["tpu"]["available"])
            self.assertIn("no TPU chip", info["collectors"]["tpu"]["reason"])
            self.assertEqual(listener.accepted, 0)
        finally:
            listener.close()

    def test_every_process_port_is_read(self):
        self.add_chips(2, device="0x005e")  # v4: two chips, one per process, each calling its own device 0
        cases = os.path.join(FIXTURES, "grpc_runtime_metric_mock_responses.json")
        first = self.service("--responses", cases, "--case", "v4_single_device")
        second = self.service("--responses", cases, "--case", "v4_single_device")
        ports = ",".join(service.address.rsplit(":", 1)[1] for service in (first, second))
        run_dir, _, _ = self.record({"TPU_RUNTIME_METRICS_PORTS": ports})
        last = self.tpu(self.stats(run_dir)[-1])
        self.assertEqual(last, {f"tpu.{d}.{leaf}": value for d in (0, 1) for leaf, value in
                                (("hbmCapacityTotal", 16e9), ("hbmCapacityUsage", 8e9), ("hbmMemoryUsage", 50.0),
                                 ("dutyCycle", 75.0))})

    def test_the_sdk_comes_first(self):
        scenario = os.path.join(self.tmp.name, "scenario.json")
        with open(scenario, "w") as f:
            json.dump({"tensorcore_util": {"description": "", "values": ["12.5", "25", "50", "100"]},
                       "duty_cycle_pct": {"description": "", "values": ["1", "2", "3", "4"]},
                       "tpu_throttle_score": {"description": "", "values": ["0", "0", "0.5", "0"]}}, f)
        run_dir, result, _ = self.v5e_run(env={"LIBTPU_PATH": FAKE_LIBTPU, "RUNMON_FAKE_LIBTPU_SCENARIO": scenario})
        last = self.tpu(self.stats(run_dir)[-1])
        self.assertEqual([last[f"tpu.{d}.tensorcoreUtilization"] for d in range(4)], [12.5, 25, 50, 100])
        self.assertEqual([last[f"tpu.{d}.dutyCycle"] for d in range(4)], [1, 2, 3, 4])  # the SDK's, not the service's
        self.assertEqual(last["tpu.2.throttleScore"], 0.5)
        self.assertIn("tpu.0.hbmCapacityTotal", last)  # the service fills in
        self.assertNotIn("tpu:", result.stderr)

    def test_an_sdk_that_fails_its_checks_leaves_the_service(self):
        scenario = os.path.join(self.tmp.name, "scenario.json")
        with open(scenario, "w") as f:
            json.dump({"header": [0, 2]}, f)
        run_dir, result, _ = self.v5e_run(env={"LIBTPU_PATH": FAKE_LIBTPU, "RUNMON_FAKE_LIBTPU_SCENARIO": scenario})
        self.assert_same(self.tpu(self.stats(run_dir)[-1]), expected_keys(load_fixture()))
        self.assertEqual(result.stderr.count("libtpu's SDK is not used"), 1, result.stderr)


if __name__ == "__main__":
    unittest.main()
