"""End-to-end tests of `runmon run`: the run directory and its log, the child's exit status and I/O, signals,
attaching, host mode (--host-only; refused without it), kill -9 of runmon mid-run, a full disk (a file size limit) and bad input."""
import glob
import json
import os
import re
import resource
import shutil
import signal
import subprocess
import tempfile
import time
import unittest

from runmon_e2e import RUNMON, run

RUN_DIR_PATTERN = re.compile(r"^run-\d{8}_\d{6}-([a-z0-9]{8})$")


def dump(path, *extra):
    result = run("dump", path, *extra)
    return result, [json.loads(line) for line in result.stdout.splitlines() if line.strip()]


def record_types(records):
    return [r["record_type"] for r in records]


def clean_env():
    return {k: v for k, v in os.environ.items() if not k.startswith("WANDB_")}


def wait_for(predicate, timeout=20.0, step=0.05):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(step)
    raise AssertionError("condition not met in time")


def read_text(path):
    with open(path) as f:
        return f.read().strip()


def count_stats(directory):
    logs = glob.glob(os.path.join(directory, "run-*", "run-*.wandb"))
    if not logs:
        return 0
    _, records = dump(logs[0])
    return sum(1 for r in records if r["record_type"] == "stats")


class RunTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = os.path.join(self.tmp.name, "wandb")

    def tearDown(self):
        self.tmp.cleanup()

    def only_run(self):
        runs = [d for d in os.listdir(self.dir) if d.startswith("run-")]
        self.assertEqual(len(runs), 1, runs)
        return os.path.join(self.dir, runs[0])

    def test_sleep_writes_a_run_in_wandb_layout(self):
        result = run("run", "--interval", "0.2", "--dir", self.dir, "--", "sleep", "1")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(result.stdout, "")  # runmon's own messages go to stderr
        run_dir = self.only_run()
        match = RUN_DIR_PATTERN.match(os.path.basename(run_dir))
        self.assertIsNotNone(match, run_dir)
        run_id = match.group(1)
        self.assertEqual(os.readlink(os.path.join(self.dir, "latest-run")), os.path.basename(run_dir))
        log = os.path.join(run_dir, f"run-{run_id}.wandb")
        with open(log, "rb") as f:
            self.assertEqual(f.read(7), bytes([0x3A, 0x57, 0x26, 0x42, 0xE1, 0xBE, 0x00]))

        with open(os.path.join(run_dir, "files", "wandb-metadata.json")) as f:
            metadata = json.load(f)
        for key in ("os", "host", "cpu_count", "cpu_count_logical", "memory", "startedAt", "writerId"):
            self.assertIn(key, metadata)
        self.assertEqual(metadata["program"], "sleep")
        self.assertEqual(metadata["args"], ["1"])

        status, records = dump(run_dir)
        self.assertEqual(status.returncode, 0, status.stderr)
        types = record_types(records)
        self.assertEqual(types[:3], ["header", "run", "environment"])
        self.assertEqual(types[-2:], ["exit", "final"])
        stats = [r["record"]["stats"] for r in records if r["record_type"] == "stats"]
        self.assertGreaterEqual(len(stats), 5)  # t = 0, the intervals, the final sample
        self.assertEqual(set(types[3:-2]), {"stats"})
        self.assertEqual([int(r["record"]["num"]) for r in records], list(range(1, len(records) + 1)))
        self.assertTrue(all(r["record"]["_info"]["stream_id"] == run_id for r in records))
        run_record = records[1]["record"]["run"]
        self.assertEqual(run_record["run_id"], run_id)
        self.assertEqual(run_record["display_name"], "sleep 1")
        self.assertIn("start_time", run_record)
        environment = records[2]["record"]["environment"]
        self.assertEqual(environment["program"], "sleep")
        self.assertGreater(environment["cpu_count_logical"], 0)
        exit_record = records[-2]["record"]["exit"]
        self.assertNotIn("exit_code", exit_record)  # 0 is proto3's default: not on the wire
        self.assertGreaterEqual(exit_record["runtime"], 1)
        keys = {item["key"] for s in stats for item in s["item"]}
        for key in ("cpu", "proc.memory.rssMB", "proc.cpu.threads", "memory_percent", "cpu_percent"):
            self.assertIn(key, keys)
        for s in stats:
            for item in s["item"]:
                float(item["value_json"])  # every value is a JSON number
        timestamps = [s["timestamp"] for s in stats]
        self.assertEqual(timestamps, sorted(timestamps))

    def test_exit_status_is_the_commands(self):
        result = run("run", "--dir", self.dir, "--", "sh", "-c", "exit 3")
        self.assertEqual(result.returncode, 3, result.stderr)
        _, records = dump(self.only_run())
        self.assertEqual(records[-2]["record"]["exit"]["exit_code"], 3)

    def test_the_commands_own_flags_after_a_repeatable_flag_stay_the_commands(self):
        # A repeatable flag (--disk-path, --set, --remote-write, --remote-write-header) takes one value: the
        # "--" and the command's "-c" after it are the command's.
        for flags in (["--disk-path", "/"], ["--set", "x_stats_sampling_interval=1"],
                      ["--remote-write-header", "X-A=b", "--remote-write", "http://127.0.0.1:9/w",
                       "--remote-write-drain-timeout", "0"]):
            shutil.rmtree(self.dir, ignore_errors=True)
            result = run("run", "--dir", self.dir, *flags, "--", "sh", "-c", "exit 5")
            self.assertEqual(result.returncode, 5, (flags, result.stderr))

    def test_killed_command_gives_128_plus_signal(self):
        result = run("run", "--dir", self.dir, "--", "sh", "-c", "kill -TERM $$")
        self.assertEqual(result.returncode, 128 + signal.SIGTERM, result.stderr)
        _, records = dump(self.only_run())
        self.assertEqual(records[-2]["record"]["exit"]["exit_code"], 128 + signal.SIGTERM)

    def test_missing_command_exits_127_and_records_nothing(self):
        result = run("run", "--dir", self.dir, "--", "runmon-no-such-command-here", "x")
        self.assertEqual(result.returncode, 127)
        self.assertIn("command not found", result.stderr)
        self.assertFalse(os.path.exists(self.dir))

    def test_command_that_is_not_executable_exits_126(self):
        script = os.path.join(self.tmp.name, "script.sh")
        with open(script, "w") as f:
            f.write("#!/bin/sh\nexit 0\n")
        os.chmod(script, 0o644)
        result = run("run", "--dir", self.dir, "--", script)
        self.assertEqual(result.returncode, 126)
        self.assertIn("script.sh", result.stderr)

    def test_unwritable_dir_is_reported_before_the_command_starts(self):
        blocker = os.path.join(self.tmp.name, "a-file")
        with open(blocker, "w") as f:
            f.write("x")
        marker = os.path.join(self.tmp.name, "started")
        result = run("run", "--dir", os.path.join(blocker, "wandb"), "--", "touch", marker)
        self.assertEqual(result.returncode, 1)
        self.assertIn("cannot record the run", result.stderr)
        self.assertFalse(os.path.exists(marker))

    def test_id_name_and_project(self):
        result = run("run", "--dir", self.dir, "--id", "my-run_1", "--name", "trial 7", "--project", "vision",
                     "--", "true")
        self.assertEqual(result.returncode, 0, result.stderr)
        run_dir = self.only_run()
        self.assertTrue(run_dir.endswith("-my-run_1"), run_dir)
        self.assertTrue(os.path.exists(os.path.join(run_dir, "run-my-run_1.wandb")))
        _, records = dump(run_dir)
        run_record = records[1]["record"]["run"]
        self.assertEqual((run_record["run_id"], run_record["display_name"], run_record["project"]),
                         ("my-run_1", "trial 7", "vision"))

    def test_bad_flags(self):
        for args, message in ((["--id", "a/b"], "--id"), (["--id", ""], "--id"), (["--id", " x"], "--id"),
                              (["--id", "x" * 200], "--id"), (["--interval", "0.01"], "--interval"),
                              (["--pid", "1"], "--pid"), (["--name", ""], "--name"), (["--host-only"], "--host-only")):
            result = run("run", "--dir", self.dir, *args, "--", "true")
            self.assertEqual(result.returncode, 2, (args, result.stderr))
            self.assertIn(message, result.stderr)
        self.assertFalse(os.path.exists(self.dir))

    def test_dir_that_is_a_file_is_a_bad_flag(self):
        blocker = os.path.join(self.tmp.name, "a-file")
        with open(blocker, "w") as f:
            f.write("x")
        marker = os.path.join(self.tmp.name, "started")
        result = run("run", "--dir", blocker, "--", "touch", marker)
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertIn(f"--dir {blocker}: not a directory", result.stderr)
        self.assertFalse(os.path.exists(marker))
        with open(blocker) as f:
            self.assertEqual(f.read(), "x")

    def test_attaching_to_a_process_that_does_not_exist(self):
        result = run("run", "--dir", self.dir, "--pid", "999999999")
        self.assertEqual(result.returncode, 1)
        self.assertIn("no such process", result.stderr)
        self.assertFalse(os.path.exists(self.dir))

    def test_same_id_twice_in_one_second_does_not_overwrite(self):
        first = run("run", "--dir", self.dir, "--id", "twice", "--", "true")
        second = run("run", "--dir", self.dir, "--id", "twice", "--", "true")
        self.assertEqual(first.returncode, 0)
        if second.returncode != 0:  # same second: the directory exists, the first run is untouched
            self.assertIn("cannot record the run", second.stderr)
        for run_dir in glob.glob(os.path.join(self.dir, "run-*")):
            self.assertEqual(dump(run_dir)[0].returncode, 0)

    def test_child_keeps_its_stdin_stdout_and_stderr(self):
        result = subprocess.run([RUNMON, "run", "--dir", self.dir, "--", "sh", "-c",
                                 "read line; echo got:$line; echo to-stderr >&2"],
                                input="hello\n", capture_output=True, text=True, timeout=60, env=clean_env())
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(result.stdout, "got:hello\n")
        self.assertIn("to-stderr", result.stderr)

    def test_sigterm_is_forwarded_to_the_command(self):
        process = subprocess.Popen([RUNMON, "run", "--interval", "0.1", "--dir", self.dir, "--", "sh", "-c",
                                    "trap 'exit 7' TERM; while :; do sleep 0.05; done"],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=clean_env())
        try:
            wait_for(lambda: count_stats(self.dir) >= 2)
            process.send_signal(signal.SIGTERM)
            self.assertEqual(process.wait(timeout=20), 7)
        finally:
            if process.poll() is None:
                process.kill()
            process.communicate()
        _, records = dump(self.only_run())
        self.assertEqual(records[-2]["record"]["exit"]["exit_code"], 7)

    def test_attach_to_a_running_process_until_it_exits(self):
        target = subprocess.Popen(["sleep", "1.5"])
        try:
            result = run("run", "--interval", "0.2", "--dir", self.dir, "--pid", str(target.pid))
            self.assertEqual(result.returncode, 0, result.stderr)
        finally:
            target.kill()
            target.wait()
        _, records = dump(self.only_run())
        keys = {item["key"] for r in records if r["record_type"] == "stats"
                for item in r["record"]["stats"]["item"]}
        self.assertIn("proc.memory.rssMB", keys)
        self.assertEqual(record_types(records)[-2:], ["exit", "final"])

    def test_host_mode_runs_until_interrupted(self):
        process = subprocess.Popen([RUNMON, "run", "--host-only", "--interval", "0.1", "--dir", self.dir],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=clean_env())
        try:
            wait_for(lambda: count_stats(self.dir) >= 3)
            process.send_signal(signal.SIGINT)
            self.assertEqual(process.wait(timeout=20), 0)
        finally:
            if process.poll() is None:
                process.kill()
            process.communicate()
        _, records = dump(self.only_run())
        keys = {item["key"] for r in records if r["record_type"] == "stats"
                for item in r["record"]["stats"]["item"]}
        self.assertIn("cpu_percent", keys)
        self.assertNotIn("proc.memory.rssMB", keys)  # no process: process metrics are off
        self.assertEqual(record_types(records)[-2:], ["exit", "final"])

    def test_no_command_is_refused_not_recorded_until_killed(self):
        # `runmon run --` with the command forgotten (an empty variable in a script) must not record the host.
        for args in (["--"], [], ["--interval", "0.1", "--"]):
            result = run("run", "--dir", self.dir, *args, timeout=20)
            self.assertEqual(result.returncode, 2, (args, result.stderr))
            self.assertTrue(result.stderr.startswith("runmon: run: what to record?"), result.stderr)
            self.assertIn("--host-only", result.stderr)
            self.assertFalse(os.path.exists(self.dir))

    def test_host_only_does_not_combine_with_a_command_or_pid(self):
        for args in (["--", "true"], ["--pid", str(os.getpid())]):
            result = run("run", "--dir", self.dir, "--host-only", *args, timeout=20)
            self.assertEqual(result.returncode, 2, (args, result.stderr))
            self.assertIn("--host-only", result.stderr)
        self.assertFalse(os.path.exists(self.dir))

    def test_kill_9_mid_run_leaves_a_clean_log_and_the_command_running(self):
        pid_file = os.path.join(self.tmp.name, "child.pid")
        process = subprocess.Popen([RUNMON, "run", "--interval", "0.1", "--dir", self.dir, "--", "sh", "-c",
                                    f"echo $$ > {pid_file}; exec sleep 60"],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=clean_env())
        child = None
        try:
            seen = wait_for(lambda: count_stats(self.dir) >= 5 and count_stats(self.dir))
            process.send_signal(signal.SIGKILL)
            process.wait(timeout=10)
            child = int(wait_for(lambda: read_text(pid_file)))
            os.kill(child, 0)  # the command survived runmon
            status, records = dump(self.only_run())
            self.assertEqual(status.returncode, 0, status.stderr)
            self.assertNotIn("skipped", status.stderr)
            types = record_types(records)
            self.assertEqual(types[:3], ["header", "run", "environment"])
            self.assertGreaterEqual(types.count("stats"), seen)
            self.assertNotIn("exit", types)
        finally:
            if process.poll() is None:
                process.kill()
            process.communicate()
            if child:
                os.kill(child, signal.SIGKILL)

    def test_full_disk_harms_neither_the_command_nor_what_was_written(self):
        marker = os.path.join(self.tmp.name, "finished")

        def limit_file_size():
            # A file size limit makes writes past 4 KiB fail, as a full disk does (EFBIG instead of ENOSPC).
            resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))

        result = subprocess.run([RUNMON, "run", "--interval", "0.1", "--dir", self.dir, "--", "sh", "-c",
                                 f"sleep 1.5; echo done > {marker}"],
                                capture_output=True, text=True, timeout=60, env=clean_env(),
                                preexec_fn=limit_file_size)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertTrue(os.path.exists(marker))
        self.assertIn("run log", result.stderr)
        self.assertIn("could not be written", result.stderr)
        status, records = dump(self.only_run())
        self.assertEqual(status.returncode, 0, status.stderr)
        types = record_types(records)
        self.assertEqual(types[:3], ["header", "run", "environment"])
        self.assertGreaterEqual(types.count("stats"), 1)
        log = glob.glob(os.path.join(self.only_run(), "run-*.wandb"))[0]
        self.assertLessEqual(os.path.getsize(log), 4096)
        self.assertEqual(records[-1]["end"], os.path.getsize(log))  # ends with a whole record

    def test_inherited_sigchld_ignore_does_not_hide_the_exit_status(self):
        def ignore_sigchld():
            signal.signal(signal.SIGCHLD, signal.SIG_IGN)

        result = subprocess.run([RUNMON, "run", "--dir", self.dir, "--", "sh", "-c", "exit 5"],
                                capture_output=True, text=True, timeout=60, env=clean_env(),
                                preexec_fn=ignore_sigchld)
        self.assertEqual(result.returncode, 5, result.stderr)
        _, records = dump(self.only_run())
        self.assertEqual(records[-2]["record"]["exit"]["exit_code"], 5)

    def test_nohup_keeps_sighup_ignored_for_the_command_and_runmon(self):
        def ignore_sighup():
            signal.signal(signal.SIGHUP, signal.SIG_IGN)

        process = subprocess.Popen([RUNMON, "run", "--interval", "0.1", "--dir", self.dir, "--", "sh", "-c",
                                    "grep SigIgn /proc/self/status; sleep 1"],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=clean_env(),
                                   preexec_fn=ignore_sighup)
        try:
            wait_for(lambda: count_stats(self.dir) >= 2)
            process.send_signal(signal.SIGHUP)  # ignored: neither runmon nor the command ends
            out, err = process.communicate(timeout=30)
        finally:
            if process.poll() is None:
                process.kill()
        self.assertEqual(process.returncode, 0, err)
        ignored = int(out.split()[1], 16)
        self.assertTrue(ignored & (1 << (signal.SIGHUP - 1)), out)
        self.assertFalse(ignored & (1 << (signal.SIGPIPE - 1)), out)

    def test_script_without_shebang_runs_with_sh(self):
        script = os.path.join(self.tmp.name, "plain")
        with open(script, "w") as f:
            f.write("exit 6\n")
        os.chmod(script, 0o755)
        result = run("run", "--dir", self.dir, "--", script)
        self.assertEqual(result.returncode, 6, result.stderr)

    def test_help(self):
        result = run("run", "--help")
        self.assertEqual(result.returncode, 0)
        for flag in ("--dir", "--id", "--name", "--project", "--pid", "--interval", "--host-only"):
            self.assertIn(flag, result.stdout)


if __name__ == "__main__":
    unittest.main()
