"""End to end: runmon's command line. Nonsense flags and settings are refused with a clear message and
exit status 2 by every command (a table of bad command lines over all of them), help names values and
ranges readably; a PID that does not exist or a disk path that does not exist is reported and every other
metric keeps flowing; W&B's setting names work through --set and WANDB_X_STATS_* variables; SIGINT and
SIGTERM still produce the final sample; a closed pipe ends runmon quietly."""
import json
import os
import re
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
        self.assertRefused(run("sample", "--bogus"), "unknown option '--bogus'")
        self.assertRefused(run("frobnicate"), "unknown command 'frobnicate'")
        self.assertRefused(run(), "a command is needed")

    def test_bad_intervals(self):
        self.assertRefused(run("sample", "--once", "--interval", "abc"), "--interval", "not a duration")
        self.assertRefused(run("sample", "--once", "--interval", "0.05"), "at least 0.1")
        self.assertRefused(run("sample", "--once", "--interval", "-1s"), "negative")
        self.assertRefused(run("sample", "--once", "--interval", "1e400"), "--interval")

    def test_bad_count(self):
        self.assertRefused(run("sample", "--count", "0"), "--count")
        self.assertRefused(run("sample", "--count", "-3"), "--count")
        self.assertRefused(run("sample", "--count", "many"), "--count", "'many' is not a whole number")

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
        self.assertRefused(run("serve", "--port", "70000"), "--port", "70000 is out of range (0-65535)")
        # A port in use is an error (exit 1), not a second server sharing it.
        with socket.socket() as taken:
            taken.bind(("127.0.0.1", 0))
            taken.listen()
            port = taken.getsockname()[1]
            result = run("serve", "--logdir", "/nonexistent-runmon-logdir", "--port", str(port), timeout=30)
            self.assertEqual(result.returncode, 1, result.stderr)
            self.assertIn("cannot listen", result.stderr)

    def test_leet_bad_print_frame_and_path(self):
        frame = run("leet", "/", "--print-frame", "0x5")
        self.assertRefused(frame, "--print-frame")
        self.assertTrue(frame.stderr.startswith("runmon: --print-frame: "), frame.stderr)
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

    def test_info_lists_every_collector_family_and_why_one_is_absent(self):
        # "Why are there no GPU metrics?": every family, with available and, when false, the reason.
        tree = os.path.join(os.path.dirname(__file__), "..", "fixtures", "hosts", "process-exit")
        missing = "/nonexistent/runmon/libnvidia-ml.so.1"
        info = run("info", "--pid", "0", "--no-cgroup", "--root", tree, env={"RUNMON_NVML_LIBRARY": missing},
                   timeout=30)
        self.assertEqual(info.returncode, 0, info.stderr)
        collectors = json.loads(info.stdout)["collectors"]
        self.assertLessEqual({"cgroup", "cpu", "disk_io", "disk_usage", "memory", "network", "nvidia",
                              "openmetrics", "process", "self"}, set(collectors))
        for name, entry in collectors.items():
            self.assertIsInstance(entry["available"], bool, name)
            self.assertEqual("reason" in entry, not entry["available"], name)
        for name in ["cpu", "memory", "disk_io", "disk_usage", "network", "self"]:
            self.assertTrue(collectors[name]["available"], name)
            self.assertTrue(collectors[name]["enabledByDefault"], name)
        self.assertFalse(collectors["openmetrics"]["available"])
        self.assertEqual(collectors["openmetrics"]["reason"], "x_stats_open_metrics_endpoints not set")
        self.assertFalse(collectors["openmetrics"]["enabledByDefault"])
        self.assertIn("x_stats_open_metrics_endpoints", collectors["openmetrics"]["settings"])
        self.assertFalse(collectors["process"]["available"])
        self.assertIn("no process to monitor", collectors["process"]["reason"])
        self.assertFalse(collectors["cgroup"]["available"])
        self.assertIn("x_stats_no_cgroup", collectors["cgroup"]["reason"])
        self.assertFalse(collectors["nvidia"]["available"])
        self.assertIn(missing, collectors["nvidia"]["reason"])

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

    def test_each_disk_path_is_reported_once(self):
        def keys(stdout):
            (line,) = stdout.splitlines()
            return [key for key, _ in json.loads(line, object_pairs_hook=lambda pairs: pairs)]

        with tempfile.TemporaryDirectory() as directory:
            spellings = [directory + "/", directory, directory + "//.", "/", "//", "/.", "/"]
            for args, env in ((sum((["--disk-path", p] for p in spellings), []), None),
                              (["--set", "x_stats_disk_paths=" + json.dumps(spellings)], None),
                              ([], {"WANDB_X_STATS_DISK_PATHS": ",".join(spellings)})):
                with self.subTest(args=args, env=env):
                    result = run("sample", "--once", "--json", "--pid", "0", *args, env=env)
                    self.assertEqual(result.returncode, 0, result.stderr)
                    sample_keys = keys(result.stdout)
                    self.assertEqual(len(sample_keys), len(set(sample_keys)), sample_keys)
                    usage_keys = [k for k in sample_keys if k.endswith(".usageGB")]
                    self.assertEqual(sorted(usage_keys), sorted([f"disk.{directory}.usageGB", "disk./.usageGB"]))

    def test_pid_zero_turns_process_metrics_off(self):
        (sample,) = samples(run("sample", "--once", "--json", "--pid", "0").stdout)
        self.assertNotIn("proc.memory.rssMB", sample)
        self.assertIn("memory_percent", sample)


# CLI11's own words, which must never reach the user: its type names, its range and option notation, its
# error sentences.
CLI11_WORDING = re.compile(r"\b(INT|UINT|TEXT|FLOAT|REQUIRED|SUBCOMMAND|Positionals|Excludes|Needs)\b|in \[|"
                           r"\[Option|The following argument|Could not convert|required but received|"
                           r"is required$|A subcommand|Run with --help|not in range|excludes")

COMMANDS = ["run", "sample", "dump", "leet", "serve", "exporter", "info", "catalog"]


def bad_command_lines(scratch_file):
    """(arguments, a fragment of the message) for every kind of usage error, over every command."""
    lines = [([], "a command is needed"), (["frobnicate"], "unknown command 'frobnicate'"),
             (["--bogus"], "unknown option '--bogus'")]
    for command in COMMANDS:
        lines.append(([command, "--bogus"], "unknown option '--bogus'"))
        lines.append(([command, "-z"], "unknown option '-z'"))
    # Commands that take no argument of their own.
    for command in ("sample", "info", "serve", "catalog"):
        lines.append(([command, "extra"], "unexpected argument 'extra'"))
    # The sampler's flags, on every command that has them.
    for command in ("run", "sample", "info", "exporter"):
        lines += [
            ([command, "--interval"], "--interval needs a value"),
            ([command, "--interval", ""], "--interval: must not be empty"),
            ([command, "--interval", "abc"], "--interval: 'abc' is not a duration"),
            ([command, "--interval", "0"], "--interval: at least 0.1 s"),
            ([command, "--interval", "0.05"], "--interval: at least 0.1 s"),
            ([command, "--interval", "-1"], "--interval: '-1': a duration cannot be negative"),
            ([command, "--interval", "1e400"], "--interval: '1e400' is not a duration"),
            ([command, "--interval", "400d"], "--interval: '400d' is not a duration"),
            ([command, "--interval", "1", "--interval", "2"], "--interval can be given once"),
            ([command, "--pid"], "--pid needs a value"),
            ([command, "--pid", "self"], "--pid: 'self' is not a whole number"),
            ([command, "--pid", "-5"], "--pid: -5 is out of range (0-2147483647)"),
            ([command, "--pid", "0x10"], "--pid: '0x10' is not a whole number"),
            ([command, "--pid", "99999999999999999999"], "--pid: 99999999999999999999 is out of range"),
            ([command, "--disk-path", ""], "--disk-path: must not be empty"),
            ([command, "--root", ""], "--root: must not be empty"),
            ([command, "--root", scratch_file], "not a directory"),
            ([command, "--set", "x_stats_bogus=1"], "unknown setting 'x_stats_bogus'"),
            ([command, "--set", "novalue"], "x_stats_NAME=VALUE"),
            ([command, "--set", "x_stats_pid=1\n2"], "x_stats_pid"),
            ([command, "--per-core=maybe"], "--per-core takes no value"),
        ]
    lines += [
        (["sample", "--count"], "--count needs a value"),
        (["sample", "--count", "0"], "--count: 0 is out of range (1 or more)"),
        (["sample", "--count", "-3"], "--count: -3 is out of range (1 or more)"),
        (["sample", "--count", "2.5"], "--count: '2.5' is not a whole number"),
        (["sample", "--count", "99999999999999999999"], "--count: 99999999999999999999 is out of range"),
        (["sample", "--once", "--count", "2"], "--count and --once cannot be used together"),
        (["run"], "run: what to record?"),
        (["run", "--"], "run: what to record?"),
        (["run", "--host-only", "--", "true"], "--host-only"),
        (["run", "--host-only", "--pid", "1"], "--host-only"),
        (["run", "--pid", "0"], "--pid 0"),
        (["run", "--pid", "1", "--", "true"], "--pid"),
        (["run", "--dir", "", "--", "true"], "--dir: must not be empty"),
        (["run", "--dir", scratch_file, "--", "true"], "not a directory"),
        (["run", "--dir"], "--dir needs a value"),
        (["run", "--id", "", "--", "true"], "--id: must not be empty"),
        (["run", "--id", "a/b", "--", "true"], "--id"),
        (["run", "--name", "", "--", "true"], "--name: must not be empty"),
        (["run", "--metrics-token", "x" * 20, "--", "true"], "--metrics-token goes with --metrics-listen"),
        (["run", "--metrics-listen", "nowhere", "--", "true"], "--metrics-listen"),
        (["dump"], "FILE|RUNDIR is required"),
        (["dump", ""], "FILE|RUNDIR: must not be empty"),
        (["dump", "a", "b"], "unexpected argument 'b'"),
        (["dump", "--format"], "--format needs a value"),
        (["dump", "--follow=2", "x"], "--follow takes no value"),
        (["leet", "a", "b"], "unexpected argument 'b'"),
        (["leet", ""], "PATH: must not be empty"),
        (["leet", "--print-frame"], "--print-frame needs a value"),
        (["leet", "--print-frame", ""], "--print-frame: must not be empty"),
        (["serve", "--port"], "--port needs a value"),
        (["serve", "--port", "http"], "--port: 'http' is not a whole number"),
        (["serve", "--port", "-1"], "--port: -1 is out of range (0-65535)"),
        (["serve", "--port", "70000"], "--port: 70000 is out of range (0-65535)"),
        (["serve", "--port", "99999999999999999999"], "--port: 99999999999999999999 is out of range"),
        (["serve", "--logdir", ""], "--logdir: must not be empty"),
        (["serve", "--logdir", scratch_file], "not a directory"),
        (["serve", "--host", "0.0.0.0"], "--token"),
        (["serve", "--token", ""], "--token: must not be empty"),
        (["exporter"], "--listen HOST:PORT is required"),
        (["exporter", "--listen"], "--listen needs a value"),
        (["exporter", "--listen", "127.0.0.1:99999"], "--listen"),
        (["exporter", "--listen", "127.0.0.1:0", "extra"], "unexpected argument 'extra'"),
        (["exporter", "--listen", "127.0.0.1:0", "--token", ""], "--token: must not be empty"),
        (["catalog", "--markdown", "--prometheus"], "cannot be used together"),
        (["catalog", "--markdown=maybe"], "--markdown takes no value"),
    ]
    return lines


class UsageErrorTest(unittest.TestCase):
    """Every usage error of every command: exit status 2, nothing on stdout, and one line on stderr that
    starts with `runmon:`, says what is wrong and holds none of CLI11's wording."""

    def assertUsageError(self, args, fragment, env=None):
        result = run(*args, env=env, timeout=20)
        context = f"runmon {args!r}: {result.stderr!r}"
        self.assertEqual(result.returncode, 2, context)
        self.assertEqual(result.stdout, "", context)
        self.assertTrue(result.stderr.startswith("runmon: "), context)
        self.assertEqual(len(result.stderr.splitlines()), 1, context)
        self.assertIn(fragment, result.stderr, context)
        self.assertIsNone(CLI11_WORDING.search(result.stderr), context)

    def test_every_bad_command_line_of_every_command(self):
        with tempfile.NamedTemporaryFile() as scratch:
            lines = bad_command_lines(scratch.name)
            self.assertEqual({args[0] for args, _ in lines if args and args[0] in COMMANDS}, set(COMMANDS))
            for args, fragment in lines:
                with self.subTest(args=args):
                    self.assertUsageError(args, fragment)
            self.assertTrue(os.path.exists(scratch.name))  # --dir and --logdir left the file alone

    def test_bad_environment_settings_are_usage_errors(self):
        for command in ("run", "sample", "info", "exporter"):
            with self.subTest(command=command):
                self.assertUsageError([command], "WANDB_X_STATS_SAMPLING_INTERVAL",
                                      env={"WANDB_X_STATS_SAMPLING_INTERVAL": "fast"})
                self.assertUsageError([command], "WANDB_X_STATS_DISK_PATHS",
                                      env={"WANDB_X_STATS_DISK_PATHS": '["/", ""]'})

    def test_help_and_version_exit_0(self):
        for args in (["--help"], ["-h"], ["--version"], *([command, "--help"] for command in COMMANDS)):
            with self.subTest(args=args):
                result = run(*args)
                self.assertEqual(result.returncode, 0, result.stderr)
                self.assertEqual(result.stderr, "")
                self.assertNotEqual(result.stdout, "")

    def test_help_names_values_and_ranges_readably(self):
        for args in (["--help"], *([command, "--help"] for command in COMMANDS)):
            with self.subTest(args=args):
                help_text = run(*args).stdout
                self.assertIsNone(CLI11_WORDING.search(help_text), help_text)
                self.assertNotRegex(help_text, r"[A-Z]:[A-Z]+ in", help_text)
                self.assertIn(f"Usage: runmon {args[0] if len(args) > 1 else ''}".rstrip(), help_text)
        help_of = {command: run(command, "--help").stdout for command in COMMANDS}
        self.assertRegex(help_of["serve"], r"--port PORT \(0-65535\)")
        self.assertRegex(help_of["sample"], r"--count N \(1 or more\)")
        self.assertRegex(help_of["sample"], r"--pid PID \(0-2147483647\)")
        self.assertRegex(help_of["sample"], r"--disk-path PATH \.\.\.")
        self.assertRegex(help_of["run"], r"--host-only")
        self.assertRegex(help_of["run"], r"Usage: runmon run \[OPTIONS\] \[-- CMD \[ARGS\.\.\.\]\]")
        self.assertRegex(help_of["dump"], r"Usage: runmon dump \[OPTIONS\] FILE\|RUNDIR")
        self.assertRegex(help_of["exporter"], r"--listen HOST:PORT")


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
