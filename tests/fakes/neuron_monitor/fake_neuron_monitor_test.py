"""The fake neuron-monitor and its document generator on their own, without runmon: the config checks (exit 2
with a message), the replay and its log, the run's pids read from the parent's children, each behaviour;
and the generator's documents (the sums of the real report hold, the committed trn1.32xlarge fixture is
what it prints, a trn2.48xlarge line is over 1 MiB)."""
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
FAKE = os.path.join(HERE, "neuron-monitor")
FIXTURES = os.path.join(HERE, "..", "..", "fixtures", "neuron_monitor")
sys.path.insert(0, HERE)
import make_document  # noqa: E402

GOOD_CONFIG = {
    "period": "1s",
    "neuron_runtimes": [{"tag_filter": ".*", "metrics": [{"type": "neuroncore_counters"}, {"type": "memory_used"},
                                                         {"type": "neuron_runtime_vcpu_usage"}]}],
    "system_metrics": [{"type": "vcpu_usage"}, {"type": "memory_info"}, {"type": "neuron_hw_counters"}],
}
FAST = "0.05"  # seconds between documents in these tests
WAIT_SECONDS = 30  # generous bound on a fake that should already have answered


def fixture_lines():
    with open(os.path.join(FIXTURES, "neuron_monitor_trn1.2xlarge.jsonl")) as f:
        return [json.loads(line) for line in f if line.strip()]


# Stands in for runmon: starts the workload in its own process group and the fake as a tool (a group of its
# own), prints the fake's first document and the workload's pid, then ends the fake and every runtime's pid.
PARENT = r"""
import json, os, signal, subprocess, sys, time
workload = subprocess.Popen(["sh", "-c", "sleep 20 & exec sleep 20"], stdout=subprocess.DEVNULL)
time.sleep(0.5)
fake = subprocess.Popen(sys.argv[1:], stdout=subprocess.PIPE, process_group=0)
line = fake.stdout.readline().decode()
sys.stdout.write(line)
print(workload.pid)
fake.kill()
for entry in json.loads(line)["neuron_runtime_data"]:
    os.kill(entry["pid"], signal.SIGKILL)
fake.wait(); workload.wait()
"""


class FakeNeuronMonitorTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.log = os.path.join(self.tmp.name, "log")
        self.config = self.write_config(GOOD_CONFIG)

    def tearDown(self):
        self.tmp.cleanup()

    def write_config(self, config, mode=0o600, name="config.json"):
        path = os.path.join(self.tmp.name, name)
        with open(path, "w") as f:
            f.write(config if isinstance(config, str) else json.dumps(config))
        os.chmod(path, mode)
        return path

    def env(self, **extra):
        return {**os.environ, "RUNMON_FAKE_NEURON_LOG": self.log, "RUNMON_FAKE_NEURON_PERIOD": FAST, **extra}

    def start(self, *args, **extra):
        return subprocess.Popen([FAKE, *(args or ("-c", self.config))], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                env=self.env(**extra))

    def read_documents(self, count, **extra):
        process = self.start(**extra)
        try:
            lines = [process.stdout.readline() for _ in range(count)]
        finally:
            process.kill()
            process.wait()
            process.stdout.close()
            process.stderr.close()
        return lines

    def events(self, kind):
        with open(self.log) as f:
            return [event for event in map(json.loads, f) if event["event"] == kind]

    def test_refuses_what_runmon_must_not_write(self):
        bad = {
            "group missing": {**GOOD_CONFIG, "system_metrics": GOOD_CONFIG["system_metrics"][:2]},
            "group extra": {**GOOD_CONFIG, "system_metrics": [*GOOD_CONFIG["system_metrics"], {"type": "x"}]},
            "period 0s": {**GOOD_CONFIG, "period": "0s"},
            "period number": {**GOOD_CONFIG, "period": 1},
            "period ms": {**GOOD_CONFIG, "period": "500ms"},
            "tag filter": {**GOOD_CONFIG,
                           "neuron_runtimes": [{**GOOD_CONFIG["neuron_runtimes"][0], "tag_filter": "x"}]},
            "unknown key": {**GOOD_CONFIG, "verbose": 1},
            "not JSON": "{\"period\": ",
        }
        cases = [(name, ["-c", self.write_config(config, name=f"{index}.json")]) for index, (name, config)
                 in enumerate(bad.items())]
        cases += [("mode 0644", ["-c", self.write_config(GOOD_CONFIG, mode=0o644, name="open.json")]),
                  ("no -c", [self.config]), ("no file", ["-c", os.path.join(self.tmp.name, "missing.json")]),
                  ("extra argument", ["-c", self.config, "--verbose"])]
        for name, args in cases:
            with self.subTest(name):
                result = subprocess.run([FAKE, *args], capture_output=True, text=True, env=self.env(),
                                        timeout=WAIT_SECONDS)
                self.assertEqual(result.returncode, 2, result.stderr)
                self.assertTrue(result.stderr.startswith("neuron-monitor: "), result.stderr)
                self.assertEqual(result.stdout, "")
        for variable, value in (("RUNMON_FAKE_NEURON_PIDS", "children"), ("RUNMON_FAKE_NEURON_BEHAVIOUR", "loud")):
            with self.subTest(variable):
                result = subprocess.run([FAKE, "-c", self.config], capture_output=True, text=True,
                                        env=self.env(**{variable: value}), timeout=WAIT_SECONDS)
                self.assertEqual(result.returncode, 2, result.stderr)
                self.assertIn(variable, result.stderr)
        self.assertFalse(os.path.exists(self.log))  # nothing started

    def test_replays_the_fixture_in_a_loop_and_logs_it(self):
        lines = self.read_documents(4)
        expected = fixture_lines()
        self.assertEqual([json.loads(line) for line in lines], expected + expected[:1])
        (start,) = self.events("start")
        self.assertEqual(start["argv"][1:], ["-c", self.config])
        self.assertEqual(start["config_path"], self.config)
        self.assertEqual(json.loads(start["config_text"]), GOOD_CONFIG)
        self.assertEqual((start["config_mode"], start["config_dir_mode"]), ("0600", "0700"))
        documents = self.events("document")
        self.assertGreaterEqual(len(documents), 4)
        self.assertEqual([d["runtime_pids"] for d in documents[:3]], [[1337], [16851], [16851]])

    def test_sigterm_ends_it_unless_it_ignores_sigterm(self):
        for behaviour, still_running in (("", False), ("ignore-sigterm", True)):
            with self.subTest(behaviour or "default"):
                process = self.start(RUNMON_FAKE_NEURON_BEHAVIOUR=behaviour)
                process.stdout.readline()
                process.send_signal(signal.SIGTERM)
                try:
                    process.wait(timeout=1)
                except subprocess.TimeoutExpired:
                    pass
                self.assertEqual(process.poll() is None, still_running)
                if still_running:
                    self.assertTrue(json.loads(process.stdout.readline()))  # still printing after SIGTERM
                process.kill()
                process.wait()
                process.stdout.close()
                process.stderr.close()
        self.assertEqual([event["ignored"] for event in self.events("sigterm")], [False, True])

    def test_siblings_are_the_parents_other_children_and_their_descendants(self):
        result = subprocess.run([sys.executable, "-c", PARENT, FAKE, "-c", self.config], capture_output=True, text=True,
                                env=self.env(RUNMON_FAKE_NEURON_PIDS="siblings"), timeout=WAIT_SECONDS)
        self.assertEqual(result.returncode, 0, result.stderr)
        line, workload = result.stdout.splitlines()
        runtimes = json.loads(line)["neuron_runtime_data"]
        self.assertEqual(len(runtimes), 2)  # the workload (sh exec'd into sleep) and its background sleep
        self.assertEqual(runtimes[0]["pid"], int(workload))
        self.assertEqual(runtimes[0]["neuron_runtime_tag"], workload)
        self.assertNotEqual(runtimes[1]["pid"], int(workload))
        for entry in runtimes:
            self.assertEqual(entry["report"], fixture_lines()[0]["neuron_runtime_data"][0]["report"])

    def test_second_runtime_is_a_process_outside_the_run(self):
        (line,) = self.read_documents(1, RUNMON_FAKE_NEURON_BEHAVIOUR="second-runtime")
        own, outsider = json.loads(line)["neuron_runtime_data"]
        self.assertEqual(own["pid"], 1337)
        self.assertEqual(outsider["pid"], os.getppid())  # the fake's grandparent
        self.assertEqual(outsider["report"]["neuroncore_counters"]["neuroncores_in_use"]["0"]["neuroncore_utilization"],
                         77.0)

    def test_document_variants(self):
        first = fixture_lines()[0]
        (empty,) = self.read_documents(1, RUNMON_FAKE_NEURON_BEHAVIOUR="empty-runtimes")
        self.assertEqual(json.loads(empty), {**first, "neuron_runtime_data": []})
        lines = self.read_documents(2, RUNMON_FAKE_NEURON_BEHAVIOUR="null-latency")
        stats = [json.loads(line)["neuron_runtime_data"][0]["report"]["execution_stats"] for line in lines]
        self.assertEqual(stats[0]["latency_stats"], {"total_latency": None, "device_latency": None})
        self.assertIsNone(stats[1]["latency_stats"])
        (split,) = self.read_documents(1, RUNMON_FAKE_NEURON_BEHAVIOUR="split")
        self.assertEqual(json.loads(split), first)
        (long_line,) = self.read_documents(1, RUNMON_FAKE_NEURON_BEHAVIOUR="long-line")
        self.assertGreater(len(long_line), 1 << 20)
        self.assertEqual(json.loads(long_line), make_document.document("trn2.48xlarge", 0))

    def test_garbage_comes_between_good_documents(self):
        lines = self.read_documents(10, RUNMON_FAKE_NEURON_BEHAVIOUR="garbage")
        kinds = []
        for line in lines:
            try:
                kinds.append("document" if json.loads(line) else "empty")
            except ValueError:
                kinds.append("blank" if not line.strip() else "garbage")
        self.assertEqual(kinds, ["document", "blank", "blank", "garbage", "garbage", "document", "blank", "blank",
                                 "garbage", "garbage"])

    def test_exit_early_says_why_and_stderr_chatters(self):
        process = self.start(RUNMON_FAKE_NEURON_BEHAVIOUR="exit-early,stderr", RUNMON_FAKE_NEURON_EXIT_AFTER="3")
        out, err = process.communicate(timeout=WAIT_SECONDS)
        self.assertEqual(process.returncode, 1)
        self.assertEqual(len(out.splitlines()), 3)
        self.assertEqual(err.decode().splitlines(), [f"neuron-monitor: [info] report {i} collected" for i in range(3)]
                         + ["neuron-monitor: lost the connection to the Neuron driver"])

    def test_silent_prints_nothing(self):
        process = self.start(RUNMON_FAKE_NEURON_BEHAVIOUR="silent")
        time.sleep(0.5)
        process.kill()
        out, err = process.communicate(timeout=WAIT_SECONDS)
        self.assertEqual((out, err), (b"", b""))
        self.assertEqual(len(self.events("start")), 1)


class MakeDocumentTest(unittest.TestCase):
    def test_the_real_reports_sums_hold_for_every_shape(self):
        for shape, spec in make_document.SHAPES.items():
            with self.subTest(shape):
                document = make_document.document(shape)
                cores = spec["devices"] * spec["cores_per_device"]
                seen_cores = set()
                for entry in document["neuron_runtime_data"]:
                    used = entry["report"]["memory_used"]["neuron_runtime_used_bytes"]
                    per_core = used["usage_breakdown"]["neuroncore_memory_usage"]
                    self.assertEqual(used["host"], sum(used["usage_breakdown"]["host"].values()))
                    self.assertEqual(used["neuron_device"], sum(sum(u.values()) for u in per_core.values()))
                    in_use = entry["report"]["neuroncore_counters"]["neuroncores_in_use"]
                    self.assertEqual(set(in_use), set(per_core))
                    seen_cores |= set(in_use)
                self.assertEqual(seen_cores, {str(core) for core in range(cores)})
                vcpu = document["system_data"]["vcpu_usage"]
                self.assertEqual(len(vcpu["usage_data"]), spec["vcpus"])
                for state, average in vcpu["average_usage"].items():
                    mean = sum(usage[state] for usage in vcpu["usage_data"].values()) / spec["vcpus"]
                    self.assertAlmostEqual(average, mean, delta=0.006)
                self.assertEqual(len(document["system_data"]["neuron_hw_counters"]["neuron_devices"]), spec["devices"])
                self.assertEqual(document["instance_info"]["instance_type"], shape)

    def test_the_committed_trn1_32xlarge_document_is_the_generators(self):
        with open(os.path.join(FIXTURES, "neuron_monitor_trn1.32xlarge.json")) as f:
            committed = f.read()
        self.assertEqual(committed, make_document.document_line("trn1.32xlarge"))
        self.assertEqual(committed.count("\n"), 1)
        self.assertEqual(len(json.loads(committed)["neuron_runtime_data"]), 32)

    def test_a_trn2_48xlarge_line_is_over_a_mebibyte(self):
        line = make_document.document_line("trn2.48xlarge")
        self.assertGreater(len(line), 1 << 20)
        self.assertEqual(line.count("\n"), 1)
        self.assertEqual(json.loads(line)["neuron_hardware_info"]["neuron_device_count"], 16)


if __name__ == "__main__":
    unittest.main()
