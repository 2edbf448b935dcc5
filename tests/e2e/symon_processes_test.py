"""End to end: `runmon leet symon --print-frame` with the fake NVML (tests/fakes/nvml) reporting processes on
its GPUs, this test's own among them: the frame is printed and runmon exits 0; and with NVML's process list
hanging for longer than the test waits, the frame still comes and runmon exits promptly (the process table
is listed on a thread of its own and the screen never waits for it). The table's rows themselves are checked
through SymonSource (tests/nvidia/gpu_process_watch_test.cpp)."""
import json
import os
import tempfile
import time
import unittest

from runmon_e2e import run

FAKE_FULL = os.environ.get("RUNMON_FAKE_NVML_FULL", "")


def device(index, processes, fail=None):
    entry = {
        "name": "NVIDIA H100 80GB HBM3",
        "uuid": f"GPU-{index:08x}-0000-0000-0000-000000000000",
        "pci": {"bus_id": f"00000000:{0x10 + index:02X}:00.0"},
        "memory": {"total": 85520809984, "used": 42949672960},
        "utilization": {"gpu": 90, "memory": 40},
        "compute_processes": [{"pid": pid, "used_memory": 1 << 30} for pid in processes],
        "graphics_processes": [],
        "process_utilization": [{"pid": pid, "sm": 50, "timestamp": "now"} for pid in processes],
    }
    if fail:
        entry["fail"] = fail
    return entry


@unittest.skipUnless(FAKE_FULL and os.path.exists(FAKE_FULL), "the fake NVML library is not built")
class SymonProcessesTest(unittest.TestCase):
    def frame_with(self, devices):
        with tempfile.TemporaryDirectory(prefix="rmsymonproc") as directory:
            path = os.path.join(directory, "scenario.json")
            with open(path, "w") as out:
                json.dump({"driver_version": "550.90.07", "devices": devices}, out)
            env = {"RUNMON_NVML_LIBRARY": FAKE_FULL, "RUNMON_FAKE_NVML_SCENARIO": path}
            started = time.monotonic()
            result = run("leet", "symon", "--interval", "0.2s", "--print-frame", "160x48", env=env, timeout=60)
            return result, time.monotonic() - started

    def test_frame_with_processes_on_the_gpus(self):
        result, _ = self.frame_with([device(i, [os.getpid(), os.getppid()]) for i in range(4)])
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(len(result.stdout.rstrip("\n").split("\n")), 48)
        self.assertIn("Run overview", result.stdout)
        self.assertNotIn("NVML", result.stdout)  # no warning about the fake library

    def test_hanging_process_list_does_not_hold_the_screen(self):
        hang = {"nvmlDeviceGetComputeRunningProcesses_v3": {"hang_seconds": 120}}
        result, seconds = self.frame_with([device(0, [os.getpid()], hang), device(1, [os.getpid()])])
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(len(result.stdout.rstrip("\n").split("\n")), 48)
        self.assertLess(seconds, 30)


if __name__ == "__main__":
    unittest.main()
