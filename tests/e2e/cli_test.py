"""End to end: runmon's command line. Nonsense flags and settings are refused with a clear message and
exit status 2; a PID that does not exist or a disk path that does not exist is reported and every other
metric keeps flowing; W&B's setting names work through --set and WANDB_X_STATS_* variables; SIGINT and
SIGTERM still produce the final sample; a closed pipe ends runmon quietly."""
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import unittest

from runmon_e2e import RUNMON, run, samples


class BadInputTest(unittest.TestCase):
    def assertRefused(self, result, *fragments):
        self.assertEqual(result.returncode, 2, result.stdout + result.stderr)
        for fragment in fragments:
            self.assertIn(fragment, result.stderr)
        self.assertEqual(result.stdout, "")

    def test_unknown_flag_and_command(self):
        self.assertEqual(run("sample", "--bogus").returncode, 109)  # CLI11's code for extra arguments
        self.assertNotEqual(run("frobnicate").returncode, 0)
        self.assertNotEqual(run().returncode, 0)

    def test_bad_intervals(self):
        self.assertRefused(run("sample", "--once", "--interval", "abc"), "--interval", "not a duration")
        self.assertRefused(run("sample", "--once", "--interval", "0.05"), "at least 0.1")
        self.assertRefused(run("sample", "--once", "--interval", "-1s"), "negative")
        self.assertRefused(run("sample", "--once", "--interval", "1e400"), "--interval")

    def test_bad_count(self):
        self.assertRefused(run("sample", "--count", "0"), "--count")
        self.assertRefused(run("sample", "--count", "-3"), "--count")
        self.assertNotEqual(run("sample", "--count", "many").returncode, 0)

    def test_bad_settings(self):
        self.assertRefused(run("sample", "--once", "--set", "x_stats_bogus=1"), "unknown setting 'x_stats_bogus'")
        self.assertRefused(run("sample", "--once", "--set", "novalue"), "x_stats_NAME=VALUE")
        self.assertRefused(run("sample", "--once", "--set", "x_stats_pid=abc"), "x_stats_pid")
        self.assertRefused(run("sample", "--once", "--set", "x_stats_disk_paths=[1,2]"), "x_stats_disk_paths")
        self.assertRefused(run("sample", "--once", env={"WANDB_X_STATS_SAMPLING_INTERVAL": "fast"}),
                           "WANDB_X_STATS_SAMPLING_INTERVAL")

    def test_serve_refuses_what_it_cannot_do_safely(self):
        self.assertRefused(run("serve", "--host", "0.0.0.0"), "--host 0.0.0.0", "--token")
        self.assertRefused(run("serve", "--host", "0.0.0.0", "--token", "short"), "--token", "16")
        self.assertNotEqual(run("serve", "--port", "70000").returncode, 0)
        # A port in use is an error (exit 1), not a second server sharing it.
        with socket.socket() as taken:
            taken.bind(("127.0.0.1", 0))
            taken.listen()
            port = taken.getsockname()[1]
            result = run("serve", "--logdir", "/nonexistent-runmon-logdir", "--port", str(port), timeout=30)
            self.assertEqual(result.returncode, 1, result.stderr)
            self.assertIn("cannot listen", result.stderr)

    def test_leet_bad_print_frame_and_path(self):
        self.assertRefused(run("leet", "/", "--print-frame", "0x5"), "--print-frame")
        missing = run("leet", "/nonexistent-runmon-path")
        self.assertEqual(missing.returncode, 1)
        self.assertIn("no such file", missing.stderr)

    def test_bad_root(self):
        self.assertRefused(run("sample", "--once", "--root", "/nonexistent/runmon"), "not a directory")
        self.assertRefused(run("info", "--root", "/nonexistent/runmon"), "not a directory")

    def test_fifo_at_kernel_files_is_reported_not_waited_on(self):
        # A FIFO at proc/meminfo used to hang runmon at start and one at proc/net/dev to hold each sample:
        # now each is named on stderr and everything else still comes, well within the timeout.
        fixture = os.path.join(os.path.dirname(__file__), "..", "fixtures", "hosts", "container-overlay")
        with tempfile.TemporaryDirectory() as tree:
            shutil.copytree(fixture, tree, dirs_exist_ok=True, ignore=shutil.ignore_patterns("t1"))
            for name in ["proc/meminfo", "proc/net/dev"]:
                os.remove(os.path.join(tree, name))
                os.mkfifo(os.path.join(tree, name))
            result = run("sample", "--once", "--json", "--pid", "1", "--root", tree, timeout=30)
            self.assertEqual(result.returncode, 0, result.stderr)
            for name in ["proc/meminfo", "proc/net/dev"]:
                self.assertIn(os.path.join(tree, name) + ": a FIFO, not a regular file", result.stderr)
            sample = samples(result.stdout)[0]
            self.assertIn("cpu_percent", sample)
            self.assertIn("memory_percent", sample)  # against the cgroup's limit
            self.assertNotIn("network.sent", sample)
            info = run("info", "--pid", "1", "--root", tree, timeout=30)
            self.assertEqual(info.returncode, 0, info.stderr)
            self.assertIn(os.path.join(tree, "proc/meminfo") + ": a FIFO", info.stderr)
            self.assertNotIn("memory", json.loads(info.stdout))

    def test_missing_pid_keeps_host_metrics(self):
        result = run("sample", "--once", "--json", "--pid", "2147483000")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("process 2147483000 does not exist", result.stderr)
        (sample,) = samples(result.stdout)
        self.assertNotIn("cpu", sample)
        self.assertNotIn("proc.memory.rssMB", sample)
        for key in ["memory_percent", "disk./.usageGB", "network.sent", "cpu_percent"]:
            self.assertIn(key, sample)

    def test_missing_disk_path_keeps_others(self):
        result = run("sample", "--once", "--json", "--disk-path", "/nonexistent/path", "--disk-path", "/")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("/nonexistent/path", result.stderr)
        (sample,) = samples(result.stdout)
        self.assertIn("disk./.usageGB", sample)
        self.assertNotIn("disk./nonexistent/path.usageGB", sample)
        self.assertIn("memory_percent", sample)

    def test_pid_zero_turns_process_metrics_off(self):
        (sample,) = samples(run("sample", "--once", "--json", "--pid", "0").stdout)
        self.assertNotIn("proc.memory.rssMB", sample)
        self.assertIn("memory_percent", sample)


class SettingsTest(unittest.TestCase):
    def test_set_and_environment(self):
        result = run("sample", "--json", "--count", "2", "--set", "x_stats_sampling_interval=0.2",
                     "--set", 'x_stats_disk_paths=["/"]', "--pid", str(os.getpid()))
        self.assertEqual(result.returncode, 0, result.stderr)
        rows = samples(result.stdout)
        self.assertEqual(len(rows), 2)
        self.assertAlmostEqual(rows[1]["_runtime"] - rows[0]["_runtime"], 0.2, delta=0.15)
        env_rows = samples(run("sample", "--json", "--count", "2", env={"WANDB_X_STATS_SAMPLING_INTERVAL": "0.3",
                                                                           "WANDB_X_STATS_PID": "0"}).stdout)
        self.assertAlmostEqual(env_rows[1]["_runtime"] - env_rows[0]["_runtime"], 0.3, delta=0.15)
        self.assertNotIn("proc.memory.rssMB", env_rows[0])
        # Flags win over --set, which wins over the environment.
        rows = samples(run("sample", "--json", "--count", "2", "--interval", "0.2", "--set",
                           "x_stats_sampling_interval=5", env={"WANDB_X_STATS_SAMPLING_INTERVAL": "9"}).stdout)
        self.assertAlmostEqual(rows[1]["_runtime"] - rows[0]["_runtime"], 0.2, delta=0.15)

    def test_interval_units_and_per_core(self):
        rows = samples(run("sample", "--json", "--count", "2", "--interval", "150ms", "--per-core").stdout)
        self.assertEqual(len(rows), 2)
        self.assertIn("cpu.0.cpu_percent", rows[1])

    def test_table_output(self):
        result = run("sample", "--once", "--pid", str(os.getpid()))
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("sample 1", result.stdout)
        self.assertRegex(result.stdout, r"proc\.memory\.rssMB\s+[0-9.e+]+ MiB")


class LifecycleTest(unittest.TestCase):
    def test_signals_take_final_sample(self):
        for sig in (signal.SIGINT, signal.SIGTERM):
            proc = subprocess.Popen([RUNMON, "sample", "--json", "--interval", "30"], stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, text=True)
            first = proc.stdout.readline()
            self.assertTrue(first.startswith("{"), first)
            time.sleep(0.3)
            proc.send_signal(sig)
            rest, err = proc.communicate(timeout=20)
            self.assertEqual(proc.returncode, 0, err)
            rows = samples(first + rest)
            self.assertEqual(len(rows), 2, sig)
            self.assertGreater(rows[1]["_runtime"], 0.2)

    def test_closed_pipe_ends_quietly(self):
        proc = subprocess.Popen(f"'{RUNMON}' sample --json --interval 0.1 | head -n 2", shell=True,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        out, err = proc.communicate(timeout=20)
        self.assertEqual(len(out.splitlines()), 2)
        self.assertNotIn("runmon:", err)

    def test_version_and_help(self):
        self.assertRegex(run("--version").stdout, r"runmon \d+\.\d+\.\d+")
        help_text = run("sample", "--help").stdout
        for flag in ["--once", "--count", "--interval", "--pid", "--no-process-tree", "--disk-path", "--set",
                     "--json"]:
            self.assertIn(flag, help_text)

    def test_info_is_wandb_metadata(self):
        result = run("info")
        self.assertEqual(result.returncode, 0, result.stderr)
        meta = json.loads(result.stdout)
        for key in ["os", "host", "cpu_count", "cpu_count_logical", "memory", "disk"]:
            self.assertIn(key, meta)
        self.assertIsInstance(meta["memory"]["total"], str)  # protobuf-JSON writes 64-bit integers as strings
        self.assertEqual(meta["cpu_count_logical"], os.cpu_count())
        overridden = json.loads(run("info", "--set", "x_stats_cpu_count=7").stdout)
        self.assertEqual(overridden["cpu_count"], 7)
        slurm = json.loads(run("info", env={"SLURM_JOB_ID": "42", "RANK": "3"}).stdout)
        self.assertEqual(slurm["slurm"]["job_id"], "42")
        self.assertEqual(slurm["runmon"]["scheduler"]["rank"], "3")


if __name__ == "__main__":
    unittest.main()
