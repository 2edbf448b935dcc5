"""End to end: the Trainium family against the fake neuron-monitor (tests/fakes/neuron_monitor), first on
runmon's PATH, the fake reporting the run's own processes as its Neuron runtimes
(RUNMON_FAKE_NEURON_PIDS=siblings). A recorded run holds the trn.* keys with the fixture's values (summed
over the run's runtimes, a runtime of another process not counted); runmon writes a private config (mode
0600 in a private directory under TMPDIR, removed at the end) and starts one neuron-monitor for the whole
run, starts a dead one again and says so once; a tool that ignores SIGTERM or prints nothing delays no
other collector's sample nor runmon's exit; a line over 1 MiB, a line cut across writes, garbage lines,
null latency objects and an empty runtime list give the right keys or none; `runmon info` shows the
`trainium` metadata.

What runmon must emit is written once, in the EXPECTED_* tables and expected_keys() below, so a change of
the contract is one edit here."""
import glob
import json
import math
import os
import signal
import subprocess
import sys
import tempfile
import time
import unittest

from http_e2e import dashboard_charts, exposition_with, free_port
from runmon_e2e import RUNMON, run

HERE = os.path.dirname(os.path.abspath(__file__))
FAKE_DIR = os.environ.get("RUNMON_FAKE_NEURON_MONITOR_DIR",
                          os.path.join(HERE, "..", "fakes", "neuron_monitor"))
FIXTURE = os.path.join(HERE, "..", "fixtures", "neuron_monitor", "neuron_monitor_trn1.2xlarge.jsonl")
sys.path.insert(0, FAKE_DIR)
import make_document  # noqa: E402

# The calling environment must not pick another neuron-monitor or change the fake's behaviour.
for _name in [name for name in os.environ if name.startswith("RUNMON_FAKE_NEURON_") or name == "RUNMON_NEURON_MONITOR"]:
    del os.environ[_name]

# --- The contract (adjust here) --------------------------------------------------------------------------
# Summed over the run's runtimes: path in a runtime's report -> key (`{core}` from the map's key).
EXPECTED_RUNTIME_KEYS = {
    ("memory_used", "neuron_runtime_used_bytes", "host"): "trn.host_total_memory_usage",
    ("memory_used", "neuron_runtime_used_bytes", "neuron_device"): "trn.neuron_device_total_memory_usage",
    ("neuron_runtime_vcpu_usage", "vcpu_usage", "user"): "trn.runtime_vcpu_usage.user",
    ("neuron_runtime_vcpu_usage", "vcpu_usage", "system"): "trn.runtime_vcpu_usage.system",
}
HOST_BREAKDOWN = ("application_memory", "constants", "dma_buffers", "tensors")  # trn.host_total_memory_usage.X
CORE_BREAKDOWN = ("constants", "model_code", "model_shared_scratchpad", "runtime_memory", "tensors")
CPU_STATES = ("user", "nice", "system", "idle", "io_wait", "irq", "soft_irq")  # trn.system.vcpu_usage.X
MEMORY_INFO = ("memory_used_bytes", "memory_total_bytes", "swap_used_bytes", "swap_total_bytes")  # trn.system.X
ECC_COUNTERS = ("mem_ecc_corrected", "mem_ecc_uncorrected", "sram_ecc_corrected", "sram_ecc_uncorrected")
EXPECTED_CONFIG_GROUPS = {
    "neuron_runtimes": [{"tag_filter": ".*", "metrics": [{"type": "neuroncore_counters"}, {"type": "memory_used"},
                                                         {"type": "neuron_runtime_vcpu_usage"}]}],
    "system_metrics": [{"type": "vcpu_usage"}, {"type": "memory_info"}, {"type": "neuron_hw_counters"}],
}
# Metadata from the trn1.2xlarge fixture (its hardware info has only the two counts).
EXPECTED_METADATA = {"name": "Trainium", "vendor": "AWS", "neuron_device_count": 1, "neuroncore_per_device_count": 2,
                     "instance_type": "trn1.2xlarge"}


def expected_keys(document, counted):
    """The trn.* keys and values of a sample taken from `document` when `counted` of its runtimes are the run's."""
    values = {}

    def add(key, value):
        values[key] = values.get(key, 0) + value

    for entry in counted:
        report = entry["report"]
        for path, key in EXPECTED_RUNTIME_KEYS.items():
            value = report
            for step in path:
                value = value[step]
            add(key, value)
        for core, counters in report["neuroncore_counters"]["neuroncores_in_use"].items():
            add(f"trn.{core}.neuroncore_utilization", counters["neuroncore_utilization"])
        breakdown = report["memory_used"]["neuron_runtime_used_bytes"]["usage_breakdown"]
        for field in HOST_BREAKDOWN:
            add(f"trn.host_total_memory_usage.{field}", breakdown["host"][field])
        for core, usage in breakdown["neuroncore_memory_usage"].items():
            for field in CORE_BREAKDOWN:
                add(f"trn.{core}.neuroncore_memory_usage.{field}", usage[field])
    system = document["system_data"]
    for state in CPU_STATES:
        values[f"trn.system.vcpu_usage.{state}"] = system["vcpu_usage"]["average_usage"][state]
    values["trn.system.context_switch_count"] = system["vcpu_usage"]["context_switch_count"]
    for field in MEMORY_INFO:
        values[f"trn.system.{field}"] = system["memory_info"][field]
    for device in system["neuron_hw_counters"]["neuron_devices"]:
        for counter in ECC_COUNTERS:
            values[f"trn.device.{device['neuron_device_index']}.{counter}"] = device[counter]
    return plausible(values, document)


def machine_memory_bytes():
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no MemTotal in /proc/meminfo")


def plausible(values, document):
    """`values` without what cannot be true on this machine, which runmon leaves out: a share outside 0-100 %,
    host bytes above this machine's RAM (the fixture's trn1.2xlarge had more RAM than a test machine may),
    device bytes above what the document's devices hold, a used figure above its total."""
    ram = machine_memory_bytes()
    hardware = document["neuron_hardware_info"]
    one_device = hardware.get("neuron_device_memory_size")
    all_devices = one_device * hardware["neuron_device_count"] if one_device else None
    total = values.get("trn.system.memory_total_bytes")
    memory_limit = total if total is not None and total <= ram else ram

    def possible(key, value):
        if key.endswith(".neuroncore_utilization") or key.startswith(("trn.runtime_vcpu_usage.",
                                                                       "trn.system.vcpu_usage.")):
            return 0 <= value <= 100
        if key.startswith("trn.host_total_memory_usage") or key == "trn.system.memory_total_bytes":
            return value <= ram
        if key == "trn.system.memory_used_bytes":
            return value <= memory_limit
        if key == "trn.system.swap_used_bytes":
            return value <= values["trn.system.swap_total_bytes"]
        if key == "trn.neuron_device_total_memory_usage":
            return all_devices is None or value <= all_devices
        if ".neuroncore_memory_usage." in key:
            return one_device is None or value <= one_device
        return True

    return {key: value for key, value in values.items() if possible(key, value)}
# ----------------------------------------------------------------------------------------------------------


def fixture_documents():
    with open(FIXTURE) as f:
        return [json.loads(line) for line in f if line.strip()]


def close_enough(a, b):
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)


def same_values(actual, expected):
    return actual.keys() == expected.keys() and all(close_enough(actual[k], expected[k]) for k in expected)




class Recording:
    """One `runmon run` with the fake: its result and wall time, the run directory, samples and the fake's log."""

    def __init__(self, result, wall_seconds, run_dir, stats, events):
        self.result, self.wall_seconds, self.run_dir = result, wall_seconds, run_dir
        self.stats, self.events = stats, events

    def of(self, kind):
        return [event for event in self.events if event["event"] == kind]

    def trn(self, sample):
        return {key: value for key, value in sample.items() if key.startswith("trn.")}


class TrainiumTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.tmpdir = os.path.join(self.tmp.name, "tmp")  # runmon's TMPDIR: must be empty after each run
        os.mkdir(self.tmpdir)
        self.log = os.path.join(self.tmp.name, "fake.log")
        self.wandb = os.path.join(self.tmp.name, "wandb")
        self.runs = 0

    def tearDown(self):
        self.tmp.cleanup()

    def env(self, behaviour="", pids="siblings", path_has_fake=True, **extra):
        env = {"TMPDIR": self.tmpdir, "RUNMON_FAKE_NEURON_LOG": self.log, "RUNMON_FAKE_NEURON_BEHAVIOUR": behaviour,
               "RUNMON_FAKE_NEURON_PIDS": pids, **extra}
        if path_has_fake:
            env["PATH"] = FAKE_DIR + os.pathsep + os.environ.get("PATH", "/usr/bin:/bin")
        return env

    def events(self):
        if not os.path.exists(self.log):
            return []
        with open(self.log) as f:
            events = [json.loads(line) for line in f]
        os.unlink(self.log)
        return events

    def stats(self, run_dir):
        dumped = run("dump", run_dir)
        self.assertEqual(dumped.returncode, 0, dumped.stderr)
        samples = []
        for record in map(json.loads, dumped.stdout.splitlines()):
            if record["record_type"] == "stats":
                stats = record["record"]["stats"]
                samples.append({item["key"]: json.loads(item["value_json"]) for item in stats["item"]})
        return samples

    def record(self, *command, behaviour="", interval="1", seconds="4", host_only_for=None, **env):
        """`runmon run` of `command` (default: two processes, `sh -c 'sleep S & exec sleep S'`)."""
        self.runs += 1
        run_id = f"trn{self.runs}"
        command = command or ("sh", "-c", f"sleep {seconds} & exec sleep {seconds}")
        argv = ["run", "--dir", self.wandb, "--id", run_id, "--interval", interval]
        start = time.monotonic()
        if host_only_for is None:
            result = run(*argv, "--", *command, env=self.env(behaviour, **env), timeout=120)
        else:
            environment = {**without_wandb_settings(os.environ), **self.env(behaviour, **env)}
            runner = subprocess.Popen([RUNMON, *argv, "--host-only"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                      text=True, env=environment)
            time.sleep(host_only_for)
            runner.send_signal(signal.SIGINT)
            out, err = runner.communicate(timeout=120)
            result = subprocess.CompletedProcess(runner.args, runner.returncode, out, err)
        wall = time.monotonic() - start
        self.assertEqual(result.returncode, 0, result.stderr)
        (run_dir,) = glob.glob(os.path.join(self.wandb, f"run-*-{run_id}"))
        recording = Recording(result, wall, run_dir, self.stats(run_dir), self.events())
        self.assert_cleaned_up(recording)
        return recording

    def assert_cleaned_up(self, recording):
        """No config left in TMPDIR and no fake still running once runmon has exited."""
        self.assertEqual(os.listdir(self.tmpdir), [], "runmon left its neuron-monitor config behind")
        for start in recording.of("start"):
            self.assertFalse(os.path.exists(start["config_path"]))
            deadline = time.monotonic() + 10
            while process_alive(start["pid"]) and time.monotonic() < deadline:
                time.sleep(0.1)
            self.assertFalse(process_alive(start["pid"]), f"the fake neuron-monitor {start['pid']} outlived runmon")

    def assert_samples_match(self, recording, documents, at_least_runtimes):
        """Each sample's trn.* keys are one printed document's, summed over the runtimes that were the run's; a
        sample counted `at_least_runtimes` of them."""
        printed = [(event["line"], len(event["run_pids"])) for event in recording.of("document")]
        self.assertTrue(printed, recording.result.stderr)
        candidates = {(line, count): expected_keys(documents[line], [
            documents[line]["neuron_runtime_data"][i % len(documents[line]["neuron_runtime_data"])]
            for i in range(count)]) for line, count in set(printed)}
        matched = []
        with_trn = [sample for sample in recording.stats if recording.trn(sample)]
        self.assertTrue(with_trn, f"no trn.* key in the run; runmon said: {recording.result.stderr}")
        for sample in with_trn:
            actual = recording.trn(sample)
            found = [combo for combo, expected in candidates.items() if same_values(actual, expected)]
            if not found:
                self.fail(f"a sample matches no printed document; against the first: "
                          f"{difference(actual, next(iter(candidates.values())))}")
            matched.extend(count for _, count in found)
        self.assertGreaterEqual(max(matched), at_least_runtimes)

    def assert_cpu_in_every_sample(self, recording, seconds):
        for sample in recording.stats:
            self.assertIn("cpu", sample)
        # t = 0, every interval and the final sample; a tool that holds the sampler up would leave fewer.
        self.assertGreaterEqual(len(recording.stats), int(seconds))

    def test_a_runs_keys_are_the_fixtures_summed_over_its_runtimes(self):
        recording = self.record()
        self.assert_samples_match(recording, fixture_documents(), at_least_runtimes=2)
        keys = {key for sample in recording.stats for key in sample}
        self.assertLessEqual(set(expected_keys(fixture_documents()[0], fixture_documents()[0]["neuron_runtime_data"])),
                             keys)
        self.assertEqual(len(recording.of("start")), 1)  # one neuron-monitor for the whole run
        self.assert_cpu_in_every_sample(recording, 4)

    def test_the_config_is_private_and_follows_the_interval(self):
        for interval, period in (("1", "1s"), ("2.5", "2s"), ("0.5", "1s")):
            with self.subTest(interval=interval):
                recording = self.record("sleep", "1", interval=interval)
                starts = recording.of("start")
                self.assertEqual(len(starts), 1, f"neuron-monitor started {len(starts)} times; runmon said: "
                                                 f"{recording.result.stderr}")
                (start,) = starts
                self.assertEqual(start["argv"][1:], ["-c", start["config_path"]])
                self.assertEqual(json.loads(start["config_text"]), {"period": period, **EXPECTED_CONFIG_GROUPS})
                self.assertEqual((start["config_mode"], start["config_dir_mode"]), ("0600", "0700"))
                directory = os.path.dirname(start["config_path"])
                self.assertEqual(os.path.realpath(os.path.dirname(directory)), os.path.realpath(self.tmpdir))
                self.assertEqual(start["parent_name"], "runmon")  # started by runmon itself, no shell between

    def test_a_runtime_of_another_process_is_not_counted(self):
        recording = self.record(behaviour="second-runtime")
        self.assertTrue(all(len(event["runtime_pids"]) > len(event["run_pids"]) for event in recording.of("document")))
        self.assert_samples_match(recording, fixture_documents(), at_least_runtimes=2)

    def test_without_a_monitored_process_every_runtime_counts(self):
        recording = self.record(pids="fixture", host_only_for=3.5)
        documents = fixture_documents()
        for event in recording.of("document"):
            event["run_pids"] = event["runtime_pids"]  # the host: all of them
        self.assert_samples_match(recording, documents, at_least_runtimes=1)

    def test_a_neuron_monitor_that_exits_is_started_again_and_said_once(self):
        recording = self.record(behaviour="exit-early", seconds="6", RUNMON_FAKE_NEURON_EXIT_AFTER="1")
        self.assertGreaterEqual(len(recording.of("start")), 2)
        said = [line for line in recording.result.stderr.splitlines() if "neuron-monitor" in line]
        self.assertEqual(len(said), 1, recording.result.stderr)
        self.assertIn("status 1", said[0])
        self.assert_samples_match(recording, fixture_documents(), at_least_runtimes=2)
        self.assert_cpu_in_every_sample(recording, 6)

    def test_a_stuck_neuron_monitor_delays_nothing(self):
        for behaviour in ("ignore-sigterm", "silent", "silent,ignore-sigterm"):
            with self.subTest(behaviour):
                recording = self.record(behaviour=behaviour)
                self.assert_cpu_in_every_sample(recording, 4)
                self.assertLess(recording.wall_seconds, 4 + 10, "runmon waited for neuron-monitor at its exit")
                if "silent" in behaviour:
                    self.assertEqual([s for s in recording.stats if recording.trn(s)], [])
                else:
                    self.assert_samples_match(recording, fixture_documents(), at_least_runtimes=2)

    def test_stream_variants_give_the_right_keys_or_none(self):
        long_documents = [make_document.document("trn2.48xlarge", seed) for seed in range(2)]
        for behaviour, documents in (("split", None), ("garbage", None), ("null-latency", None), ("stderr", None),
                                     ("long-line", long_documents)):
            with self.subTest(behaviour):
                recording = self.record(behaviour=behaviour)
                self.assert_samples_match(recording, documents or fixture_documents(), at_least_runtimes=2)
                self.assert_cpu_in_every_sample(recording, 4)
        with self.subTest("empty-runtimes"):
            recording = self.record(behaviour="empty-runtimes")
            self.assertTrue(all(event["runtime_pids"] == [] for event in recording.of("document")))
            self.assert_samples_match(recording, fixture_documents(), at_least_runtimes=0)
            per_run = {key for sample in recording.stats for key in recording.trn(sample)
                       if not key.startswith(("trn.system.", "trn.device."))}
            self.assertEqual(per_run, set())

    def test_the_dashboard_and_the_exporter_show_them(self):
        recording = self.record()
        charts = dashboard_charts(RUNMON, self.wandb, recording.run_dir)
        # W&B LEET's Trainium chart groups: one chart per key pattern, a series per core.
        for chart_id, title in (("trn.{core}.neuroncore_utilization", "Neuron Core"),
                                ("trn.host_total_memory_usage", "Trainium Host Memory"),
                                ("trn.neuron_device_total_memory_usage", "Neuron Device Memory"),
                                ("trn.host_total_memory_usage.dma_buffers", "Trainium Host DMA"),
                                ("trn.{core}.neuroncore_memory_usage.model_code", "Neuron Model Code")):
            self.assertIn(chart_id, charts)
            self.assertIn(title, json.dumps(charts[chart_id]))
        self.assertEqual(sorted(s["name"] for s in charts["trn.{core}.neuroncore_utilization"]["series"]),
                         ["Core 0", "Core 1"])
        port = free_port()
        environment = {**os.environ, **self.env()}
        runner = subprocess.Popen([RUNMON, "run", "--dir", self.wandb, "--id", "trnexport", "--interval", "0.5",
                                   "--metrics-listen", f"127.0.0.1:{port}", "--", "sleep", "4"],
                                  env=environment, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        try:
            body = exposition_with(port, "runmon_trn_neuroncore_utilization_ratio", what="trn series")
            self.assertIn('runmon_trn_neuroncore_utilization_ratio{core="0"', body)
            self.assertIn("runmon_trn_host_memory_used_bytes{", body)
            self.assertIn('runmon_collector_success{collector="trainium"', body)
        finally:
            runner.communicate(timeout=60)
        self.events()

    def test_info_shows_the_trainium_metadata(self):
        info = run("info", env=self.env(pids="fixture"), timeout=60)
        self.assertEqual(info.returncode, 0, info.stderr)
        metadata = json.loads(info.stdout)["trainium"]
        self.assertEqual({key: metadata.get(key) for key in EXPECTED_METADATA}, EXPECTED_METADATA)
        self.assertEqual(os.listdir(self.tmpdir), [])
        self.assertEqual(len([event for event in self.events() if event["event"] == "start"]), 1, info.stderr)
        # RUNMON_NEURON_MONITOR names the executable when it is not on the PATH; a trn2 reports its device type.
        info = run("info", env=self.env(behaviour="long-line", pids="fixture", path_has_fake=False,
                                        RUNMON_NEURON_MONITOR=os.path.join(FAKE_DIR, "neuron-monitor")), timeout=60)
        self.assertEqual(info.returncode, 0, info.stderr)
        metadata = json.loads(info.stdout)["trainium"]
        self.assertEqual((metadata["neuron_device_count"], metadata["neuroncore_per_device_count"],
                          metadata["neuron_device_type"], metadata["instance_type"]),
                         (16, 8, "trainium2", "trn2.48xlarge"))

    def test_a_recorded_run_has_the_trainium_metadata(self):
        recording = self.record("sleep", "1")
        with open(os.path.join(recording.run_dir, "files", "wandb-metadata.json")) as f:
            metadata = json.load(f)["trainium"]
        self.assertEqual({key: metadata.get(key) for key in EXPECTED_METADATA}, EXPECTED_METADATA)


def without_wandb_settings(environment):
    """The environment without W&B's settings, as runmon_e2e.run passes it."""
    return {name: value for name, value in environment.items() if not name.startswith("WANDB_")}


def process_alive(pid):
    """True while `pid` runs (a zombie waiting for its parent counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def difference(actual, expected):
    """What keeps two samples' trn.* keys apart, for a failure's message."""
    differing = {key: (actual[key], expected[key]) for key in actual.keys() & expected.keys()
                 if not close_enough(actual[key], expected[key])}
    return (f"missing {sorted(expected.keys() - actual.keys())}, extra {sorted(actual.keys() - expected.keys())}, "
            f"differing (runmon, expected) {differing}")


if __name__ == "__main__":
    unittest.main()
