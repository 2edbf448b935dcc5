"""End-to-end tests of `runmon dump`: W&B's own logs (when ../shared is present) print exactly as W&B's reader
decodes them; runmon's runs as JSON lines and CSV; --follow of a run being written; and bad input (not a
log, a wrong version, a directory without runs, damage in the middle, a log cut short)."""
import glob
import json
import os
import shutil
import subprocess
import tempfile
import time
import signal
import unittest

from runmon_e2e import RUNMON, run

HERE = os.path.dirname(os.path.abspath(__file__))
SHARED_LOGS = os.path.normpath(os.path.join(HERE, "..", "..", "..", "shared", "fixtures", "wandb-log"))


def without_decoded_values(value):
    """W&B's expected files add a decoded "value" beside each value_json in one fixture; dump prints the record."""
    if isinstance(value, dict):
        return {k: without_decoded_values(v) for k, v in value.items() if k != "value"}
    if isinstance(value, list):
        return [without_decoded_values(v) for v in value]
    return value


def lines(stdout):
    return [json.loads(line) for line in stdout.splitlines() if line.strip()]


class DumpTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.dir = os.path.join(cls.tmp.name, "wandb")
        result = run("run", "--interval", "0.1", "--dir", cls.dir, "--id", "dumpme01", "--", "sleep", "0.6")
        assert result.returncode == 0, result.stderr
        cls.log = glob.glob(os.path.join(cls.dir, "run-*", "run-dumpme01.wandb"))[0]

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def copy_of_log(self, name):
        path = os.path.join(self.tmp.name, name)
        shutil.copyfile(self.log, path)
        return path

    @unittest.skipUnless(os.path.isdir(SHARED_LOGS), "W&B's reference logs are not beside the checkout")
    def test_wandb_written_logs_match_wandbs_own_decoding(self):
        for name in ("sample-stats", "sample-multiblock"):
            with self.subTest(name=name):
                result = run("dump", os.path.join(SHARED_LOGS, name + ".wandb"))
                self.assertEqual(result.returncode, 0, result.stderr)
                with open(os.path.join(SHARED_LOGS, name + ".expected.jsonl")) as f:
                    expected = [without_decoded_values(json.loads(line)) for line in f if line.strip()]
                got = lines(result.stdout)
                self.assertEqual(len(got), len(expected))
                for mine, theirs in zip(got, expected):
                    del theirs["sha256"]  # dump does not hash payloads; offsets and lengths pin them down
                    self.assertEqual(mine, theirs)

    @unittest.skipUnless(os.path.isdir(SHARED_LOGS), "W&B's reference logs are not beside the checkout")
    def test_wandb_stats_as_csv(self):
        result = run("dump", "--format", "csv", os.path.join(SHARED_LOGS, "sample-stats.wandb"))
        self.assertEqual(result.returncode, 0, result.stderr)
        rows = result.stdout.splitlines()
        self.assertEqual(rows[0], "_timestamp,_runtime,cpu,memory_percent,proc.memory.rssMB,proc.memory.percent,"
                                  "proc.memory.availableMB,proc.cpu.threads")
        self.assertEqual(rows[1], "1735689610.25,10.25,12.5,41.25,512.0,3.125,12000.5,4")
        self.assertEqual(len(rows), 4)

    def test_runmon_run_as_jsonl_and_csv(self):
        result = run("dump", self.log)
        self.assertEqual(result.returncode, 0, result.stderr)
        records = lines(result.stdout)
        stats = [r for r in records if r["record_type"] == "stats"]
        self.assertGreaterEqual(len(stats), 3)
        for previous, current in zip(records, records[1:]):
            self.assertEqual(current["offset"], previous["end"])  # all in block 0: no trailers between
            self.assertEqual(current["index"], previous["index"] + 1)
        csv = run("dump", "--format", "csv", self.log)
        self.assertEqual(csv.returncode, 0, csv.stderr)
        rows = csv.stdout.splitlines()
        header = rows[0].split(",")
        self.assertEqual(header[:2], ["_timestamp", "_runtime"])
        self.assertIn("cpu_percent", header)
        self.assertEqual(len(rows), 1 + len(stats))
        for row in rows[1:]:
            self.assertEqual(len(row.split(",")), len(header))
            self.assertGreaterEqual(float(row.split(",")[1]), 0)

    def test_paths_a_run_directory_and_a_wandb_directory_name_the_same_log(self):
        by_file = run("dump", self.log).stdout
        self.assertEqual(run("dump", os.path.dirname(self.log)).stdout, by_file)
        self.assertEqual(run("dump", self.dir).stdout, by_file)  # through latest-run

    def test_follow_reads_a_run_while_it_is_written_and_stops_at_its_exit(self):
        directory = os.path.join(self.tmp.name, "follow")
        writer = subprocess.Popen([RUNMON, "run", "--interval", "0.1", "--dir", directory, "--id", "follow01",
                                   "--", "sleep", "1.2"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            deadline = time.monotonic() + 20
            while not glob.glob(os.path.join(directory, "run-*", "run-follow01.wandb")):
                self.assertLess(time.monotonic(), deadline)
                time.sleep(0.02)
            followed = run("dump", "--follow", directory, timeout=60)
            self.assertEqual(writer.wait(timeout=30), 0)
        finally:
            if writer.poll() is None:
                writer.kill()
            writer.communicate()
        self.assertEqual(followed.returncode, 0, followed.stderr)
        after = run("dump", directory)
        # Everything up to and including the exit record, exactly as a reading of the finished file.
        followed_records = lines(followed.stdout)
        self.assertEqual(followed_records[-1]["record_type"] in ("exit", "final"), True)
        self.assertEqual(followed_records, lines(after.stdout)[:len(followed_records)])
        self.assertGreaterEqual(sum(1 for r in followed_records if r["record_type"] == "stats"), 5)

    def test_not_a_log(self):
        path = os.path.join(self.tmp.name, "notes.txt")
        with open(path, "w") as f:
            f.write("hello, this is not a run log\n")
        result = run("dump", path)
        self.assertEqual(result.returncode, 1)
        self.assertIn("not a W&B run log", result.stderr)
        self.assertEqual(result.stdout, "")

    def test_too_short_and_empty(self):
        for content in (b"", b":W&"):
            path = os.path.join(self.tmp.name, "short.wandb")
            with open(path, "wb") as f:
                f.write(content)
            result = run("dump", path)
            self.assertEqual(result.returncode, 1, content)
            self.assertIn("too short", result.stderr)

    def test_wrong_version(self):
        path = self.copy_of_log("version.wandb")
        with open(path, "r+b") as f:
            f.seek(6)
            f.write(b"\x01")
        result = run("dump", path)
        self.assertEqual(result.returncode, 1)
        self.assertIn("version 1", result.stderr)

    def test_directory_without_runs_and_missing_path(self):
        empty = os.path.join(self.tmp.name, "empty")
        os.makedirs(empty, exist_ok=True)
        result = run("dump", empty)
        self.assertEqual(result.returncode, 1)
        self.assertIn("no run log", result.stderr)
        result = run("dump", os.path.join(self.tmp.name, "does-not-exist"))
        self.assertEqual(result.returncode, 1)
        self.assertIn("no such file", result.stderr)

    def test_fifo_and_device_are_refused_without_waiting(self):
        fifo = os.path.join(self.tmp.name, "a-fifo")
        os.mkfifo(fifo)
        for path in (fifo, "/dev/zero"):
            result = run("dump", path, timeout=10)
            self.assertEqual(result.returncode, 1, path)
            self.assertIn("not a regular file", result.stderr)

    def test_symlink_loops_among_runs_end_quickly(self):
        loop = os.path.join(self.tmp.name, "loop")
        os.makedirs(loop, exist_ok=True)
        for name in ("run-a", "run-b", "run-c", "latest-run"):
            os.symlink(".", os.path.join(loop, name))
        result = run("dump", loop, timeout=10)
        self.assertEqual(result.returncode, 1)
        self.assertIn("no run log", result.stderr)

    def test_follow_ends_when_the_writer_is_killed(self):
        directory = os.path.join(self.tmp.name, "killed")
        writer = subprocess.Popen([RUNMON, "run", "--interval", "0.1", "--dir", directory, "--", "sleep", "30"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        try:
            deadline = time.monotonic() + 20
            while not glob.glob(os.path.join(directory, "run-*", "run-*.wandb")):
                self.assertLess(time.monotonic(), deadline)
                time.sleep(0.02)
            follower = subprocess.Popen([RUNMON, "dump", "--follow", directory], stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, text=True)
            time.sleep(0.5)
            os.killpg(writer.pid, signal.SIGKILL)  # runmon and its sleep
            out, err = follower.communicate(timeout=20)
        finally:
            if writer.poll() is None:
                os.killpg(writer.pid, signal.SIGKILL)
            writer.wait()
        self.assertEqual(follower.returncode, 0, err)
        self.assertIn("stopped without an exit record", err)
        self.assertGreaterEqual(sum(1 for r in lines(out) if r["record_type"] == "stats"), 1)

    def test_output_that_cannot_be_written_is_an_error(self):
        with open("/dev/full", "w") as full:
            result = subprocess.run([RUNMON, "dump", self.log], stdout=full, stderr=subprocess.PIPE, text=True,
                                    timeout=30)
        self.assertEqual(result.returncode, 1)
        self.assertIn("writing the output failed", result.stderr)

    def test_bad_format(self):
        result = run("dump", "--format", "xml", self.log)
        self.assertEqual(result.returncode, 2)
        self.assertIn("--format", result.stderr)

    def test_damage_in_the_middle_is_reported_and_skipped(self):
        good = lines(run("dump", self.log).stdout)
        victim = good[4]  # a stats record
        path = self.copy_of_log("damaged.wandb")
        with open(path, "r+b") as f:
            f.seek(victim["offset"] + 20)
            byte = f.read(1)
            f.seek(victim["offset"] + 20)
            f.write(bytes([byte[0] ^ 0x10]))
        result = run("dump", path)
        self.assertEqual(result.returncode, 1)
        self.assertIn(f"skipped bytes {victim['offset']}-", result.stderr)
        self.assertIn("checksum mismatch", result.stderr)
        self.assertEqual(lines(result.stdout), good[:4])  # everything before the damage, intact

    def test_log_cut_short_prints_every_whole_record(self):
        good = lines(run("dump", self.log).stdout)
        path = self.copy_of_log("cut.wandb")
        cut = good[5]["offset"] + 10
        with open(path, "r+b") as f:
            f.truncate(cut)
        result = run("dump", path)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("ends inside a record", result.stderr)
        self.assertEqual(lines(result.stdout), good[:5])


if __name__ == "__main__":
    unittest.main()
