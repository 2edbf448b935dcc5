"""End to end: AMD GPUs (the amd-gpus fake host, tests/fixtures/hosts/amd-gpus, read through --root) are shown
exactly like NVIDIA's: the same keys in a recorded run and its wandb-metadata.json, the same Prometheus series
with the gpu label from `runmon run --metrics-listen`, the same chart groups and series names in leet and in
the dashboard's API; and on a host with both vendors (the fake libnvidia-ml.so.1 beside the tree, with two
NVIDIA GPUs on its PCI bus) every GPU has its own index."""
import glob
import json
import os
import shutil
import subprocess
import tempfile
import unittest

from http_e2e import dashboard_charts, exposition_with, free_port
from runmon_e2e import RUNMON, leet_frame, run, samples

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURE = os.path.join(HERE, "..", "fixtures", "hosts", "amd-gpus")
FAKE_NVML = os.environ.get("RUNMON_FAKE_NVML_FULL", "")
SCENARIOS = os.environ.get("RUNMON_FAKE_NVML_SCENARIOS", "")
AMD_GPUS = ["gpu.0", "gpu.1", "gpu.2", "gpu.3"]


def gpu_indices(sample):
    return sorted({k.split(".")[1] for k in sample if k.startswith("gpu.") and not k.startswith("gpu.process.")},
                  key=int)


class AmdTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.tree = os.path.join(self.tmp.name, "tree")
        shutil.copytree(FIXTURE, self.tree, symlinks=True, ignore=shutil.ignore_patterns("t1"))
        self.wandb = os.path.join(self.tmp.name, "wandb")

    def tearDown(self):
        self.tmp.cleanup()

    def record(self, *extra, run_id="amde2e", seconds="1"):
        result = run("run", "--root", self.tree, "--dir", self.wandb, "--id", run_id, "--interval", "0.2", *extra,
                     "--", "sleep", seconds, timeout=60)
        self.assertEqual(result.returncode, 0, result.stderr)
        (run_dir,) = glob.glob(os.path.join(self.wandb, f"run-*-{run_id}"))
        return run_dir

    def test_a_recorded_run_has_the_keys_and_metadata(self):
        run_dir = self.record()
        dumped = run("dump", run_dir)
        self.assertEqual(dumped.returncode, 0, dumped.stderr)
        stats = [json.loads(line) for line in dumped.stdout.splitlines() if '"gpu.0.gpu"' in line]
        self.assertTrue(stats, dumped.stdout[:2000])
        with open(os.path.join(run_dir, "files", "wandb-metadata.json")) as f:
            meta = json.load(f)
        self.assertEqual(meta["gpu_count"], 4)
        self.assertEqual(meta["gpu"], "AMD INSTINCT MI250 (MCM) OAM AC MBA")
        self.assertEqual([entry["id"] for entry in meta["gpu_amd"]], ["0", "1", "2", "3"])

    def test_leet_and_the_dashboard_chart_them_as_gpus(self):
        run_dir = self.record()
        frame = leet_frame(run_dir, "200x50")
        self.assertEqual(frame.returncode, 0, frame.stderr)
        for text in ("GPU utilization (%)", "GPU memory used (%)", "GPU temperature (°C)", "GPU power (W)",
                     "GPU 0 87%", "GPUs      4 x AMD INSTINCT MI250"):
            self.assertIn(text, frame.stdout)
        charts = dashboard_charts(RUNMON, self.wandb, run_dir)
        for chart_id in ("gpu.{i}.gpu", "gpu.{i}.memoryAllocated", "gpu.{i}.temp", "gpu.{i}.powerWatts",
                         "gpu.{i}.memoryReadWriteActivity", "gpu.{i}.tempEdge"):
            self.assertIn(chart_id, charts)
        self.assertEqual([s["name"] for s in charts["gpu.{i}.gpu"]["series"]],
                         ["GPU 0", "GPU 1", "GPU 2", "GPU 3"])
        self.assertEqual([s["name"] for s in charts["gpu.{i}.powerWatts"]["series"]],
                         ["GPU 0", "GPU 1", "GPU 3"])  # card3 has no hwmon: no power series, not 0

    def test_the_exporter_labels_them_by_gpu(self):
        port = free_port()
        runner = subprocess.Popen([RUNMON, "run", "--root", self.tree, "--dir", self.wandb, "--id", "amdexport",
                                   "--interval", "0.2", "--metrics-listen", f"127.0.0.1:{port}", "--", "sleep", "3"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        try:
            body = exposition_with(port, "runmon_gpu_utilization_ratio", what="GPU series")
            for series in ('runmon_gpu_utilization_ratio{gpu="0"', 'runmon_gpu_utilization_ratio{gpu="3"',
                           'runmon_gpu_power_watts{gpu="1"', 'runmon_gpu_memory_activity_ratio{gpu="0"',
                           'runmon_gpu_junction_temperature_celsius{gpu="0"', 'runmon_gpu_fan_rpm{gpu="1"'):
                self.assertIn(series, body)
            self.assertNotIn('runmon_gpu_power_watts{gpu="2"', body)
            self.assertIn('runmon_collector_success{collector="amd"', body)
        finally:
            _, errors = runner.communicate(timeout=60)
            self.assertEqual(runner.returncode, 0, errors)

    def add_nvidia_gpus(self, *addresses):
        for address in addresses:
            device = os.path.join(self.tree, "sys", "devices", "pci0000:00", address)
            os.makedirs(device)
            for name, text in (("vendor", "0x10de\n"), ("class", "0x030200\n")):
                with open(os.path.join(device, name), "w") as f:
                    f.write(text)
            os.makedirs(os.path.join(self.tree, "sys", "bus", "pci", "devices"), exist_ok=True)
            os.makedirs(os.path.join(self.tree, "sys", "bus", "pci", "drivers", "nvidia"), exist_ok=True)
            os.symlink(f"../../../devices/pci0000:00/{address}",
                       os.path.join(self.tree, "sys", "bus", "pci", "devices", address))
            os.symlink("../../../bus/pci/drivers/nvidia", os.path.join(device, "driver"))

    @unittest.skipUnless(FAKE_NVML and os.path.exists(FAKE_NVML), "the fake NVML library is not built")
    def test_nvidia_and_amd_gpus_never_share_an_index(self):
        self.add_nvidia_gpus("0000:17:00.0", "0000:18:00.0")
        env = {"RUNMON_NVML_LIBRARY": FAKE_NVML,
               "RUNMON_FAKE_NVML_SCENARIO": os.path.join(SCENARIOS, "two_gpus.json")}
        result = run("sample", "--root", self.tree, "--once", "--json", "--pid", "0", env=env)
        self.assertEqual(result.returncode, 0, result.stderr)
        (sample,) = samples(result.stdout)
        self.assertEqual(gpu_indices(sample), ["0", "1", "2", "3", "4", "5"])
        self.assertEqual(sample["gpu.0.gpu"], 97)  # NVML device 0
        self.assertEqual(sample["gpu.2.gpu"], 87)  # card0
        self.assertIn("gpu.0.graphicsClock", sample)  # NVIDIA's own key
        self.assertNotIn("gpu.0.memoryReadWriteActivity", sample)  # AMD's own key, not on an NVIDIA GPU
        self.assertIn("gpu.2.memoryReadWriteActivity", sample)
        info = run("info", "--root", self.tree, env=env)
        meta = json.loads(info.stdout)
        self.assertEqual(meta["gpu_count"], 6)
        self.assertEqual([entry["id"] for entry in meta["gpu_amd"]], ["2", "3", "4", "5"])
        self.assertEqual(len(meta["gpu_nvidia"]), 2)

    @unittest.skipUnless(FAKE_NVML and os.path.exists(FAKE_NVML), "the fake NVML library is not built")
    def test_mig_instances_come_after_the_amd_gpus(self):
        # One A100 in MIG mode with three instances beside the tree's four AMD cards: the A100 is gpu.0, the
        # AMD cards gpu.1 to gpu.4, the instances gpu.5 to gpu.7.
        self.add_nvidia_gpus("0000:17:00.0")
        env = {"RUNMON_NVML_LIBRARY": FAKE_NVML,
               "RUNMON_FAKE_NVML_SCENARIO": os.path.join(HERE, "..", "fakes", "nvml", "scenarios", "a100_mig.json")}
        info = run("info", "--root", self.tree, env=env)
        self.assertEqual(info.returncode, 0, info.stderr)
        meta = json.loads(info.stdout)
        nvidia_keys = [device["key"] for device in meta["runmon"]["nvidia"]["devices"]]
        amd_keys = [device["key"] for device in meta["runmon"]["amd"]["devices"]]
        self.assertEqual(nvidia_keys, ["gpu.0", "gpu.5", "gpu.6", "gpu.7"])
        self.assertEqual(amd_keys, ["gpu.1", "gpu.2", "gpu.3", "gpu.4"])
        self.assertEqual(meta["gpu_count"], 5)  # the host's GPUs, MIG instances not counted


if __name__ == "__main__":
    unittest.main()
