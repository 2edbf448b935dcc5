"""End-to-end test of `runmon dump --format openmetrics` into a real Prometheus: a short run recorded with the
fake NVML (GPU series) and a written log with a job identity and hostile label values are dumped,
backfilled with `promtool tsdb create-blocks-from openmetrics` and served by Prometheus on 127.0.0.1; every
value in the log that has a Prometheus name must be there, at its time, in base units, with the run's
labels (count_over_time per metric, and every raw sample of the run). Also: a run still being recorded,
damage in the log (reported, exit status 1, the rest still loads), keys without a name counted on stderr,
output errors (a full disk, a closed pipe) and usage errors."""
import os
import shutil
import subprocess
import tempfile
import time
import unittest

import prometheus_backfill as pb
import runlog_writer
from runmon_e2e import RUNMON, run

RUN_ID = "backfill01"
JOB_RUN_ID = "jobrun01"
# Two hours before now, so that Prometheus' retention (15 days before the newest block) keeps it beside the
# recorded run; a quarter second, so that every time is exact in milliseconds.
JOB_START = float(int(time.time()) - 7200) + 0.25
HOSTILE_PATH = '/mnt/odd "quoted" \\ back\nline'


def job_run_records():
    """A run of three records 15 s apart with a job identity (job id first, node rank in a later environment
    record), a disk path that needs escaping, a key without a Prometheus name and a value that is no
    number."""
    records = [runlog_writer.header_record("runmon 0.1.0"),
               runlog_writer.run_record(JOB_RUN_ID, "job run", JOB_START, host="node-7"),
               runlog_writer.environment_record(job_id="slurm-4242")]
    for i in range(3):
        records.append(runlog_writer.stats_record(JOB_START + 15 * i, {
            "cpu_percent": str(10 * (i + 1)),
            "gpu.0.gpu": str(90 + i),
            f"disk.{HOSTILE_PATH}.usageGB": "1.5",
            "openmetrics.dcgm.DCGM_FI_DEV_GPU_UTIL": "97",
            "memory_percent": '"high"',
        }))
        if i == 0:
            records.append(runlog_writer.environment_record(node_rank="3"))
    records.append(runlog_writer.exit_record(0, 30))
    return records


class BackfillTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        scratch = cls.tmp.name
        cls.catalog = pb.Catalog()
        cls.log = pb.record_gpu_run(os.path.join(scratch, "wandb"), RUN_ID)
        cls.job_log = runlog_writer.write_run(os.path.join(scratch, "written"), "20260101_000000", JOB_RUN_ID,
                                              job_run_records())
        blocks = os.path.join(scratch, "blocks")
        cls.dumps = {}
        for name, log in (("gpu", cls.log), ("job", cls.job_log)):
            path = os.path.join(scratch, f"{name}.om")
            cls.dumps[name] = (pb.dump_openmetrics(log, path), path)
            pb.create_blocks(path, blocks)
        cls.expected, cls.end_ms = pb.expected_series(cls.log, cls.catalog)
        cls.job_expected, cls.job_end_ms = pb.expected_series(cls.job_log, cls.catalog)
        cls.prometheus = pb.Prometheus(blocks, scratch)

    @classmethod
    def tearDownClass(cls):
        cls.prometheus.stop()
        cls.tmp.cleanup()

    def raw_samples(self, run_id, end_ms):
        """Every sample Prometheus holds for the run: {(name, sorted labels): {ms: value}}."""
        got = {}
        for series in self.prometheus.query(f'{{__name__=~"runmon_.+",run_id="{run_id}"}}[1h]', end_ms):
            labels = dict(series["metric"])
            name = labels.pop("__name__")
            got[(name, tuple(sorted(labels.items())))] = {round(float(t) * 1000): float(v)
                                                          for t, v in series["values"]}
        return got

    def test_the_dump_succeeds_and_ends_with_eof(self):
        result, path = self.dumps["gpu"]
        self.assertEqual(result.returncode, 0, result.stderr)
        # Nothing to report but, on a machine whose collectors give keys the catalog names no metric for, those.
        for line in result.stderr.splitlines():
            self.assertRegex(line, r"^runmon: left out \d+ values? of \d+ keys? without a Prometheus name")
        with open(path) as f:
            text = f.read()
        self.assertTrue(text.endswith("\n# EOF\n"))
        self.assertIn("# TYPE runmon_gpu_power_watts gauge\n# UNIT runmon_gpu_power_watts watts\n", text)
        self.assertIn("# TYPE runmon_network_sent_bytes counter\n", text)
        self.assertIn("runmon_network_sent_bytes_total{", text)

    def test_count_over_time_is_every_exported_value(self):
        names = sorted({name for name, _labels in self.expected})
        self.assertIn("runmon_gpu_utilization_ratio", names)
        self.assertIn("runmon_gpu_memory_used_bytes", names)
        self.assertIn("runmon_host_cpu_ratio", names)
        total = 0
        for name in names:
            result = self.prometheus.query(f'sum(count_over_time({name}{{run_id="{RUN_ID}"}}[1h]))', self.end_ms)
            self.assertEqual(len(result), 1, name)
            count = int(result[0]["value"][1])
            self.assertEqual(count, sum(len(points) for (n, _l), points in self.expected.items() if n == name),
                             name)
            total += count
        self.assertEqual(total, sum(len(points) for points in self.expected.values()))
        self.assertGreater(total, 200)

    def test_every_sample_is_the_logs_value_in_base_units_at_its_time(self):
        got = self.raw_samples(RUN_ID, self.end_ms)
        self.assertEqual(sorted(got), sorted(self.expected))
        for series, points in self.expected.items():
            self.assertEqual(got[series], points, series)

    def test_a_few_values_by_hand(self):
        # The fake NVML's first GPU (tests/nvidia/scenarios/two_gpus.json) and the run's labels.
        host = next(dict(labels)["host"] for _name, labels in self.expected)
        for expr, value in ((f'runmon_gpu_power_watts{{gpu="0",run_id="{RUN_ID}"}}', 612.345),
                            (f'runmon_gpu_memory_used_bytes{{gpu="0",run_id="{RUN_ID}"}}', 42949672960),
                            (f'runmon_gpu_utilization_ratio{{gpu="0",run_id="{RUN_ID}"}}', 0.97),
                            (f'runmon_gpu_memory_clock_hertz{{gpu="1",host="{host}"}}', 2619e6)):
            with self.subTest(expr=expr):
                result = self.prometheus.query(expr, self.end_ms)
                self.assertEqual(len(result), 1, result)
                self.assertEqual(float(result[0]["value"][1]), value)
                self.assertEqual(result[0]["metric"]["host"], host)
                self.assertNotIn("job_id", result[0]["metric"])  # a run without a job: no such label

    def test_job_identity_and_hostile_labels(self):
        result, _path = self.dumps["job"]
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn('runmon: left out 3 values of 1 key without a Prometheus name '
                      '("openmetrics.dcgm.DCGM_FI_DEV_GPU_UTIL")', result.stderr)
        self.assertIn("runmon: left out 3 values that are not numbers", result.stderr)
        got = self.raw_samples(JOB_RUN_ID, self.job_end_ms)
        self.assertEqual(got, self.job_expected)
        labels = {"host": "node-7", "run_id": JOB_RUN_ID, "job_id": "slurm-4242", "node_rank": "3"}
        self.assertEqual(got[("runmon_disk_used_bytes", tuple(sorted({**labels, "path": HOSTILE_PATH}.items())))],
                         {round(JOB_START * 1000) + 15000 * i: 1.5 * 1024 ** 3 for i in range(3)})
        self.assertEqual(got[("runmon_host_cpu_ratio", tuple(sorted(labels.items())))],
                         {round(JOB_START * 1000) + 15000 * i: 10 * (i + 1) / 100 for i in range(3)})
        # The dashboard's selectors: a job and node chosen, or all of them (.*) for runs with and without.
        by_job = self.prometheus.query('count(runmon_host_cpu_ratio{job_id=~"slurm-4242",node_rank=~"3"})',
                                       self.job_end_ms)
        self.assertEqual(by_job[0]["value"][1], "1")

    def test_damage_is_reported_and_the_rest_loads(self):
        damaged = os.path.join(self.tmp.name, "damaged.wandb")
        shutil.copyfile(self.log, damaged)
        size = os.path.getsize(damaged)
        with open(damaged, "r+b") as f:
            f.seek(size // 2)
            f.write(b"\xff" * 64)
        out = os.path.join(self.tmp.name, "damaged.om")
        result = pb.dump_openmetrics(damaged, out)
        self.assertEqual(result.returncode, 1)
        self.assertIn("skipped bytes", result.stderr)
        with open(out) as f:
            text = f.read()
        self.assertTrue(text.endswith("\n# EOF\n"))
        blocks = os.path.join(self.tmp.name, "damaged-blocks")
        pb.create_blocks(out, blocks)
        self.assertTrue(os.listdir(blocks))

    def test_a_live_run_is_dumped_as_far_as_its_log_goes(self):
        directory = os.path.join(self.tmp.name, "live")
        writer = subprocess.Popen([RUNMON, "run", "--interval", "0.1", "--dir", directory, "--id", "live01", "--",
                                   "sleep", "30"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            out = os.path.join(self.tmp.name, "live.om")
            deadline = time.monotonic() + 30
            while True:
                self.assertLess(time.monotonic(), deadline, "the live run wrote no values")
                time.sleep(0.3)
                if not os.path.isdir(directory):
                    continue
                result = pb.dump_openmetrics(directory, out)
                with open(out) as f:
                    text = f.read()
                if "runmon_host_cpu_ratio{" in text:
                    break
            self.assertEqual(writer.poll(), None)  # still recording
            self.assertEqual(result.returncode, 0, result.stderr)
            self.assertTrue(text.endswith("\n# EOF\n"))
            pb.create_blocks(out, os.path.join(self.tmp.name, "live-blocks"))
        finally:
            writer.terminate()
            writer.wait(timeout=30)

    def test_not_a_log(self):
        path = os.path.join(self.tmp.name, "notes.txt")
        with open(path, "w") as f:
            f.write("not a run log\n")
        result = run("dump", "--format", "openmetrics", path)
        self.assertEqual(result.returncode, 1)
        self.assertIn("not a W&B run log", result.stderr)
        self.assertEqual(result.stdout, "")

    def test_output_errors(self):
        with open("/dev/full", "w") as full:
            result = subprocess.run([RUNMON, "dump", "--format", "openmetrics", self.log], stdout=full,
                                    stderr=subprocess.PIPE, text=True, timeout=60)
        self.assertEqual(result.returncode, 1)
        self.assertIn("runmon: writing the output failed: No space left on device", result.stderr)
        read_end, write_end = os.pipe()
        os.close(read_end)  # nobody reads: the first write fails with EPIPE
        try:
            result = subprocess.run([RUNMON, "dump", "--format", "openmetrics", self.log], stdout=write_end,
                                    stderr=subprocess.PIPE, text=True, timeout=60)
        finally:
            os.close(write_end)
        self.assertEqual(result.returncode, 1)
        self.assertIn("runmon: writing the output failed: Broken pipe", result.stderr)

    def test_usage_errors(self):
        result = run("dump", "--format", "openmetrics", "--follow", self.log)
        self.assertEqual(result.returncode, 2)
        self.assertTrue(result.stderr.startswith("runmon: --follow:"), result.stderr)
        result = run("dump", "--format", "prometheus", self.log)
        self.assertEqual(result.returncode, 2)
        self.assertIn("is not jsonl, csv or openmetrics", result.stderr)


if __name__ == "__main__":
    unittest.main()
