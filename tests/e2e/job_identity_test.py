"""End-to-end tests of a run's job identity (docs/clusters.md): Slurm's variables put `job` into
wandb-metadata.json and the environment record (`runmon dump`), and the labels job_id and node_rank on every
series of --metrics-listen; --job-id and --node-rank override them, and bad values exit 2; a torchrun command
line and an attached process's own environment are read; without a job nothing is added. And W&B's x_label:
--label (or WANDB_X_LABEL) ends every key of the run log's stats records with /l:<label>, /metrics keeps its
names, and the TUI and the dashboard chart the labelled keys under their catalog titles."""
import json
import os
import re
import subprocess
import sys
import tempfile
import unittest

from http_e2e import Process, clean_env, dashboard_charts, timed_get, wait_for
from runmon_e2e import RUNMON

# What the machine running the tests may itself say about a job: none of it may leak into a test's run.
IDENTITY_PREFIXES = ("SLURM_", "TORCHELASTIC_", "PET_", "OMPI_", "PMI_", "PMIX_", "KUBERNETES_", "POD_")
IDENTITY_NAMES = ("GROUP_RANK", "RANK", "LOCAL_RANK", "WORLD_SIZE", "MPI_LOCALRANKID", "WANDB_X_LABEL",
                  "WANDB__LABEL")
SERIES = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')
SLEEP = [sys.executable, "-c", "import time; time.sleep(2.5)"]


def identity_env(extra=None):
    env = {k: v for k, v in clean_env().items()
           if not k.startswith(IDENTITY_PREFIXES) and k not in IDENTITY_NAMES}
    env.update(extra or {})
    return env


def series_of(text):
    """[(name, {label: value})] of every series line of an exposition."""
    out = []
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        match = SERIES.match(line)
        assert match, line
        out.append((match.group(1), dict(LABEL.findall(match.group(2) or ""))))
    return out


def dump_records(path):
    result = subprocess.run([RUNMON, "dump", path], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return [json.loads(line) for line in result.stdout.splitlines() if line.strip()]


class JobIdentityTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = os.path.join(self.tmp.name, "wandb")
        self.processes = []

    def tearDown(self):
        for process in self.processes:
            process.close()
        self.tmp.cleanup()

    def only_run(self):
        runs = [d for d in os.listdir(self.dir) if d.startswith("run-")]
        self.assertEqual(len(runs), 1, runs)
        return os.path.join(self.dir, runs[0])

    def metadata(self):
        with open(os.path.join(self.only_run(), "files", "wandb-metadata.json")) as f:
            return json.load(f)

    def environment_jobs(self):
        return [r["record"]["environment"].get("job") for r in dump_records(self.only_run())
                if r["record_type"] == "environment"]

    def run_quietly(self, *args, env=None):
        return subprocess.run([RUNMON, "run", "--interval", "0.3", "--dir", self.dir, *args],
                              capture_output=True, text=True, env=env or identity_env(), timeout=60)

    def run_scraped(self, *args, env):
        """Runs `runmon run --metrics-listen 127.0.0.1:0 ARGS -- SLEEP`; the series of a scrape taken once a
        sample is in, after the run ended with 0."""
        process = Process([RUNMON, "run", "--metrics-listen", "127.0.0.1:0", "--interval", "0.3", "--dir",
                           self.dir, *args, "--", *SLEEP], env=env)
        self.processes.append(process)
        url = wait_for(lambda: (lambda m: m.group(1) if m else None)(
            re.search(r"serving the run's metrics at (http://\S+/metrics)", process.output())),
            what="the metrics address")

        def sampled():
            try:
                status, body, _ = timed_get(url, timeout=5)
            except OSError:
                return None
            series = series_of(body.decode())
            counts = [v for name, v in series if name == "runmon_exporter_samples_total"]
            return series if status == 200 and any(name == "runmon_process_cpu_ratio" for name, _ in series) \
                and counts else None
        series = wait_for(sampled, what="a sample on /metrics")
        self.assertEqual(process.proc.wait(timeout=60), 0, process.output())
        return series, process.output()

    def test_slurm_job_in_metadata_record_and_labels(self):
        env = identity_env({"SLURM_JOB_ID": "77", "SLURM_NODEID": "2", "SLURM_JOB_NAME": "pretrain",
                            "SLURM_PROCID": "2", "SLURM_NTASKS": "4"})
        series, _ = self.run_scraped("--id", "e2ejob01", env=env)
        self.assertGreater(len(series), 5)
        for name, labels in series:
            self.assertEqual(labels.get("job_id"), "77", name)
            self.assertEqual(labels.get("node_rank"), "2", name)
            self.assertEqual(labels.get("run_id"), "e2ejob01", name)
            self.assertNotIn("pid", labels, name)
        expected = {"jobId": "77", "nodeRank": "2", "launcher": "slurm", "jobName": "pretrain", "rank": "2",
                    "worldSize": "4"}
        metadata = self.metadata()
        self.assertEqual(metadata["job"], expected)
        self.assertEqual(metadata["slurm"]["job_id"], "77")
        self.assertEqual(metadata["slurm"]["nodeid"], "2")
        self.assertIn({"job_id": "77", "node_rank": "2", "launcher": "slurm", "job_name": "pretrain",
                       "rank": "2", "world_size": "4"}, self.environment_jobs())

    def test_flags_override_what_is_detected(self):
        env = identity_env({"SLURM_JOB_ID": "77", "SLURM_NODEID": "2"})
        series, _ = self.run_scraped("--job-id", "big-run", "--node-rank", "007", env=env)
        for name, labels in series:
            self.assertEqual((labels.get("job_id"), labels.get("node_rank")), ("big-run", "7"), name)
        self.assertEqual(self.metadata()["job"], {"jobId": "big-run", "nodeRank": "7", "launcher": "flag"})
        self.assertEqual(self.metadata()["slurm"]["job_id"], "77")  # W&B's map stays what the environment said

    def test_no_job_no_labels_and_no_job_metadata(self):
        series, _ = self.run_scraped(env=identity_env())
        for name, labels in series:
            self.assertNotIn("job_id", labels, name)
            self.assertNotIn("node_rank", labels, name)
        self.assertNotIn("job", self.metadata())
        self.assertEqual(self.environment_jobs(), [None] * len(self.environment_jobs()))

    def test_bad_flags_exit_2_and_record_nothing(self):
        for args in (["--node-rank=-1"], ["--node-rank", "abc"], ["--node-rank", "1000000000"],
                     ["--job-id", "a\nb"], ["--job-id", "j" * 129], ["--label", "a\tb"], ["--label", "l" * 129]):
            with self.subTest(args=args):
                result = self.run_quietly(*args, "--", "true")
                self.assertEqual(result.returncode, 2, result.stderr)
                self.assertTrue(result.stderr.startswith("runmon: "), result.stderr)
                self.assertFalse(os.path.exists(self.dir), "nothing may be recorded")
        result = self.run_quietly("--", "true", env=identity_env({"WANDB_X_LABEL": "bad\x01label"}))
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertIn("WANDB_X_LABEL", result.stderr)

    def test_hostile_variables_are_left_out_and_said(self):
        result = self.run_quietly("--", "true", env=identity_env(
            {"SLURM_JOB_ID": "77 \x7f", "SLURM_NODEID": "two", "GROUP_RANK": "3", "TORCHELASTIC_RUN_ID": "te-1"}))
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("runmon: SLURM_NODEID 'two' is not a non-negative integer", result.stderr)
        self.assertIn("runmon: SLURM_JOB_ID", result.stderr)
        self.assertEqual(self.metadata()["job"], {"jobId": "te-1", "nodeRank": "3", "launcher": "torchelastic"})

    def test_torchrun_command_line_names_the_node(self):
        bin_dir = os.path.join(self.tmp.name, "bin")
        os.makedirs(bin_dir)
        torchrun = os.path.join(bin_dir, "torchrun")
        with open(torchrun, "w") as f:
            f.write("#!/bin/sh\nexit 0\n")
        os.chmod(torchrun, 0o755)
        # Kubeflow's RANK (the pod's index) in a wrapper's environment is no rank of the wrapper's.
        result = self.run_quietly("--", torchrun, "--nnodes=4", "--node-rank", "3", "--rdzv-id=e2e-rdzv",
                                  "train.py", "--node-rank", "9", env=identity_env({"RANK": "3"}))
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(self.metadata()["job"], {"jobId": "e2e-rdzv", "nodeRank": "3", "launcher": "torchelastic"})

    def test_attached_process_is_read_from_its_own_environment(self):
        target = subprocess.Popen(["sleep", "1.5"], env=identity_env({"SLURM_JOB_ID": "88", "SLURM_NODEID": "4"}))
        try:
            result = self.run_quietly("--pid", str(target.pid), env=identity_env({"SLURM_JOB_ID": "runmons-own"}))
            self.assertEqual(result.returncode, 0, result.stderr)
        finally:
            target.kill()
            target.wait()
        metadata = self.metadata()
        self.assertEqual(metadata["job"], {"jobId": "88", "nodeRank": "4", "launcher": "slurm"})
        self.assertEqual(metadata["slurm"], {"job_id": "88", "nodeid": "4"})

    def test_label_suffixes_every_stats_key_but_not_metrics(self):
        series, _ = self.run_scraped("--label", "node1", env=identity_env({"WANDB_X_LABEL": "from-env"}))
        for name, _ in series:
            self.assertNotIn("/l:", name)
        keys = [item["key"] for r in dump_records(self.only_run()) if r["record_type"] == "stats"
                for item in r["record"]["stats"]["item"]]
        self.assertIn("cpu/l:node1", keys)
        self.assertIn("proc.memory.rssMB/l:node1", keys)
        for key in keys:
            self.assertTrue(key.endswith("/l:node1"), key)  # --label over WANDB_X_LABEL
            self.assertEqual(key.count("/l:"), 1, key)
        # The readers give a labelled key its catalog meaning: the TUI's chart titles and the dashboard's.
        frame = subprocess.run([RUNMON, "leet", self.only_run(), "--print-frame", "160x50"],
                               stdin=subprocess.DEVNULL, capture_output=True, text=True, env=identity_env(),
                               timeout=60)
        self.assertEqual(frame.returncode, 0, frame.stderr)
        self.assertIn("Process CPU", frame.stdout)
        self.assertNotIn("cpu/l:node1", frame.stdout)  # not an unknown key under "Other"
        charts = dashboard_charts(RUNMON, self.dir, self.only_run())
        self.assertEqual(charts["cpu"]["title"], "Process CPU")
        self.assertEqual(charts["cpu"]["unit"], "%")
        self.assertEqual(charts["cpu"]["section"], "system")
        self.assertEqual(charts["cpu"]["series"], [{"key": "cpu/l:node1", "name": "node1"}])

    def test_label_from_the_environment(self):
        result = self.run_quietly("--", "true", env=identity_env({"WANDB_X_LABEL": "env-node"}))
        self.assertEqual(result.returncode, 0, result.stderr)
        keys = [item["key"] for r in dump_records(self.only_run()) if r["record_type"] == "stats"
                for item in r["record"]["stats"]["item"]]
        self.assertTrue(keys)
        for key in keys:
            self.assertTrue(key.endswith("/l:env-node"), key)


if __name__ == "__main__":
    unittest.main()
