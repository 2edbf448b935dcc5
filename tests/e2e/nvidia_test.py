"""End-to-end tests of runmon's NVIDIA collector with the fake libnvidia-ml.so.1 (tests/fakes/nvml), loaded
through RUNMON_NVML_LIBRARY and driven by RUNMON_FAKE_NVML_SCENARIO: gpu.* keys in samples, the run's share
for a real child process, GPU metadata in `runmon info` and in a recorded run (second environment record,
files/wandb-metadata.json), the legacy driver, and bad input: a text file at the library path, an absent
library, a driver/library version mismatch, an NVML call that hangs, a GPU lost mid-run."""
import json
import os
import subprocess
import tempfile
import time
import unittest

from runmon_e2e import run, samples

FAKE_FULL = os.environ.get("RUNMON_FAKE_NVML_FULL", "")
FAKE_LEGACY = os.environ.get("RUNMON_FAKE_NVML_LEGACY", "")
SCENARIOS = os.environ.get("RUNMON_FAKE_NVML_SCENARIOS", "")


def scenario(name):
    return os.path.join(SCENARIOS, name)


def nvml_env(scenario_path, library=None):
    return {"RUNMON_NVML_LIBRARY": library or FAKE_FULL, "RUNMON_FAKE_NVML_SCENARIO": scenario_path}


def gpu_keys(sample):
    return sorted(k for k in sample if k.startswith("gpu."))


@unittest.skipUnless(FAKE_FULL and os.path.exists(FAKE_FULL), "the fake NVML library is not built")
class NvidiaTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.tmp.cleanup()

    def test_sample_once_has_gpu_keys(self):
        result = run("sample", "--once", "--json", env=nvml_env(scenario("two_gpus.json")))
        self.assertEqual(result.returncode, 0, result.stderr)
        (sample,) = samples(result.stdout)
        self.assertIn("cpu", sample)
        for gpu in ("gpu.0.", "gpu.1."):
            for leaf in ("gpu", "memory", "memoryAllocated", "memoryAllocatedBytes", "temp", "powerWatts",
                         "enforcedPowerLimitWatts", "powerPercent", "smClock", "memoryClock", "graphicsClock",
                         "clocksEventReasons"):
                self.assertIn(gpu + leaf, sample)
        self.assertEqual(sample["gpu.0.gpu"], 97)
        self.assertAlmostEqual(sample["gpu.0.powerWatts"], 612.345)
        self.assertEqual(sample["gpu.0.memoryAllocatedBytes"], 42949672960)
        self.assertEqual(sample["gpu.0.fanSpeed"], 40)
        self.assertEqual(sample["gpu.0.energyJoules"], 0)
        self.assertNotIn("gpu.1.fanSpeed", sample)  # not in the scenario: NOT_SUPPORTED
        self.assertNotIn("gpu.2.gpu", sample)
        self.assertNotIn("no NVIDIA metrics", result.stderr)

    def test_samples_over_time_add_gpm_and_energy(self):
        result = run("sample", "--interval", "0.2", "--count", "3", "--json",
                     env=nvml_env(scenario("two_gpus.json")))
        self.assertEqual(result.returncode, 0, result.stderr)
        lines = samples(result.stdout)
        self.assertEqual(len(lines), 3)
        self.assertNotIn("gpu.0.smActive", lines[0])
        self.assertAlmostEqual(lines[-1]["gpu.0.smActive"], 93.25)
        self.assertAlmostEqual(lines[-1]["gpu.0.pcieTxBytes"], 1520.5 * 1048576)
        self.assertAlmostEqual(lines[-1]["gpu.0.energyJoules"], (183857465 - 183245120) / 1000)

    def test_the_runs_share_for_a_child_process(self):
        child = subprocess.Popen(["sleep", "30"])
        try:
            with open(scenario("two_gpus.json")) as f:
                doc = json.load(f)
            doc["devices"][0]["compute_processes"] = [{"pid": child.pid, "used_memory": 1073741824},
                                                      {"pid": 1, "used_memory": 8589934592}]
            doc["devices"][0]["process_utilization"] = [{"pid": child.pid, "sm": 42, "timestamp": "now"},
                                                        {"pid": 1, "sm": 50, "timestamp": "now"}]
            path = os.path.join(self.tmp.name, "tree.json")
            with open(path, "w") as f:
                json.dump(doc, f)
            # The tree is this test process and its descendants: the child is in it, PID 1 is not.
            result = run("sample", "--once", "--json", "--pid", str(os.getpid()), env=nvml_env(path))
            self.assertEqual(result.returncode, 0, result.stderr)
            (sample,) = samples(result.stdout)
            self.assertEqual(sample["gpu.process.0.memoryAllocatedBytes"], 1073741824)
            self.assertEqual(sample["gpu.process.0.gpu"], 42)
            self.assertEqual(sample["gpu.process.0.temp"], 54)
            self.assertNotIn("gpu.process.1.memoryAllocatedBytes", sample)
        finally:
            child.kill()
            child.wait()

    def test_info_has_gpu_metadata(self):
        result = run("info", env=dict(nvml_env(scenario("two_gpus.json")), CUDA_VISIBLE_DEVICES="1"))
        self.assertEqual(result.returncode, 0, result.stderr)
        info = json.loads(result.stdout)
        self.assertEqual(info["gpu"], "NVIDIA H100 80GB HBM3")
        self.assertEqual(info["gpu_count"], 2)
        self.assertEqual(info["cuda_version"], "12.4")
        self.assertEqual([g["uuid"] for g in info["gpu_nvidia"]],
                         ["GPU-5b6f2a8e-91c4-4d1e-b7f3-0c2a9e4d7f11",
                          "GPU-c03e7d42-6a1b-4f58-9e2d-8b7a1f64c3d9"])
        self.assertEqual(info["gpu_nvidia"][0]["memoryTotal"], "85520809984")
        self.assertEqual(info["gpu_nvidia"][0]["architecture"], "Hopper")
        self.assertTrue(info["collectors"]["nvidia"]["available"])
        self.assertNotIn("reason", info["collectors"]["nvidia"])
        nvidia = info["runmon"]["nvidia"]
        self.assertEqual(nvidia["driverVersion"], "550.90.07")
        self.assertEqual(nvidia["library"], FAKE_FULL)
        devices = nvidia["devices"]
        self.assertEqual([d["key"] for d in devices], ["gpu.0", "gpu.1"])
        self.assertEqual(devices[1]["pciBusId"], "00000000:3B:00.0")
        self.assertNotIn("cudaOrdinal", devices[0])  # CUDA_VISIBLE_DEVICES=1: only GPU 1, as ordinal 0
        self.assertEqual(devices[1]["cudaOrdinal"], 0)

    def test_run_records_gpu_metadata(self):
        directory = os.path.join(self.tmp.name, "wandb")
        result = run("run", "--interval", "0.2", "--dir", directory, "--", "sleep", "1",
                     env=nvml_env(scenario("two_gpus.json")))
        self.assertEqual(result.returncode, 0, result.stderr)
        runs = [d for d in os.listdir(directory) if d.startswith("run-")]
        self.assertEqual(len(runs), 1, runs)
        run_dir = os.path.join(directory, runs[0])
        dumped = run("dump", run_dir)
        self.assertEqual(dumped.returncode, 0, dumped.stderr)
        records = [json.loads(line) for line in dumped.stdout.splitlines() if line.strip()]
        environments = [r["record"]["environment"] for r in records if r["record_type"] == "environment"]
        self.assertEqual(len(environments), 2, environments)
        second = environments[1]
        self.assertEqual(second["gpu_count"], 2)
        self.assertEqual(len(second["gpu_nvidia"]), 2)
        self.assertEqual(second["gpu_nvidia"][0]["name"], "NVIDIA H100 80GB HBM3")
        self.assertEqual(second["cuda_version"], "12.4")
        stats = [r for r in records if r["record_type"] == "stats"]
        self.assertGreaterEqual(len(stats), 3)
        keys = {item["key"] for item in stats[-1]["record"]["stats"]["item"]}
        self.assertIn("gpu.0.gpu", keys)
        self.assertIn("gpu.1.temp", keys)
        with open(os.path.join(run_dir, "files", "wandb-metadata.json")) as f:
            metadata = json.load(f)
        self.assertEqual(len(metadata["gpu_nvidia"]), 2)
        self.assertEqual(metadata["gpu_count"], 2)
        self.assertEqual([d["key"] for d in metadata["runmon"]["nvidia"]["devices"]], ["gpu.0", "gpu.1"])

    @unittest.skipUnless(FAKE_LEGACY and os.path.exists(FAKE_LEGACY), "the legacy fake NVML is not built")
    def test_legacy_driver(self):
        result = run("sample", "--once", "--json", env=nvml_env(scenario("two_gpus.json"), FAKE_LEGACY))
        self.assertEqual(result.returncode, 0, result.stderr)
        (sample,) = samples(result.stdout)
        # v1 memory: used includes the driver's reservation.
        self.assertEqual(sample["gpu.0.memoryAllocatedBytes"], 42949672960 + 567279616)
        self.assertEqual(sample["gpu.0.clocksEventReasons"], 4)
        self.assertNotIn("gpu.0.energyJoules", sample)  # no nvmlDeviceGetTotalEnergyConsumption

    def test_text_file_at_the_library_path(self):
        text = os.path.join(self.tmp.name, "libnvidia-ml.so.1")
        with open(text, "w") as f:
            f.write("not a shared library\n")
        result = run("sample", "--once", "--json", env=nvml_env(scenario("two_gpus.json"), text))
        self.assertEqual(result.returncode, 0, result.stderr)
        (sample,) = samples(result.stdout)
        self.assertIn("cpu", sample)
        self.assertIn("memory_percent", sample)
        self.assertEqual(gpu_keys(sample), [])
        self.assertIn("no NVIDIA metrics", result.stderr)
        self.assertIn(text, result.stderr)
        info = run("info", env=nvml_env(scenario("two_gpus.json"), text))
        self.assertEqual(info.returncode, 0, info.stderr)
        nvidia = json.loads(info.stdout)["runmon"]["nvidia"]
        self.assertEqual(nvidia["available"], False)
        self.assertIn(text, nvidia["reason"])

    def test_absent_library(self):
        missing = os.path.join(self.tmp.name, "nowhere", "libnvidia-ml.so.1")
        result = run("sample", "--once", "--json", env=nvml_env(scenario("two_gpus.json"), missing))
        self.assertEqual(result.returncode, 0, result.stderr)
        (sample,) = samples(result.stdout)
        self.assertIn("cpu", sample)
        self.assertEqual(gpu_keys(sample), [])
        self.assertIn("no NVIDIA metrics", result.stderr)

    def test_version_mismatch(self):
        env = nvml_env(scenario("version_mismatch.json"))
        info = run("info", env=env)
        self.assertEqual(info.returncode, 0, info.stderr)
        nvidia = json.loads(info.stdout)["runmon"]["nvidia"]
        self.assertEqual(nvidia["available"], False)
        self.assertIn("RM has detected an NVML/RM version mismatch", nvidia["reason"])
        collector = json.loads(info.stdout)["collectors"]["nvidia"]
        self.assertFalse(collector["available"])
        self.assertEqual(collector["reason"], nvidia["reason"])
        result = run("sample", "--interval", "0.2", "--count", "2", "--json", env=env)
        self.assertEqual(result.returncode, 0, result.stderr)
        lines = samples(result.stdout)
        self.assertEqual(len(lines), 2)
        for sample in lines:
            self.assertIn("cpu", sample)
            self.assertEqual(gpu_keys(sample), [])
        self.assertIn("nvidia", result.stderr)
        self.assertIn("version mismatch", result.stderr)

    def test_hanging_nvml_call(self):
        # The second power reading sleeps 30 s in the driver: the host keys go on, runmon ends on time.
        started = time.monotonic()
        result = run("sample", "--interval", "0.2", "--count", "8", "--json",
                     env=nvml_env(scenario("hang_power.json")), timeout=30)
        elapsed = time.monotonic() - started
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertLess(elapsed, 6.0, result.stderr)
        lines = [s for s in samples(result.stdout) if not s.get("late")]
        self.assertEqual(len(lines), 8)
        for sample in lines:
            self.assertIn("cpu", sample)
            self.assertIn("memory_percent", sample)
        self.assertIn("gpu.0.powerWatts", lines[0])
        self.assertNotIn("gpu.0.powerWatts", lines[-1])
        self.assertIn("nvidia", result.stderr)
        self.assertIn("has not returned", result.stderr)

    def test_gpu_lost_mid_run(self):
        result = run("sample", "--interval", "0.2", "--count", "5", "--json",
                     env=nvml_env(scenario("gpu_lost.json")))
        self.assertEqual(result.returncode, 0, result.stderr)
        lines = samples(result.stdout)
        self.assertEqual(len(lines), 5)
        self.assertIn("gpu.1.temp", lines[0])
        self.assertEqual([k for k in lines[-1] if k.startswith("gpu.1.")], [])
        for sample in lines:
            self.assertIn("gpu.0.temp", sample)
            self.assertIn("cpu", sample)
        self.assertIn("GPU 1", result.stderr)
        self.assertIn("GPU is lost", result.stderr)
        self.assertEqual(result.stderr.count("GPU is lost"), 1, result.stderr)  # said once, not every tick


if __name__ == "__main__":
    unittest.main()
