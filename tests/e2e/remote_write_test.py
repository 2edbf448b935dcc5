"""End-to-end tests of remote write: `runmon run --remote-write URL` into Debian's Prometheus 2.42 (started
with its remote-write receiver on 127.0.0.1 and a free port), where a PromQL count equals the values in
the run log; the receiver stopped mid-run and started again on the same data (every value there exactly
once); three runmon processes of one Slurm job (three node_rank values of one job_id); a scripted receiver
answering 500, 429 with Retry-After and 400, one that never answers (the run still ends on time, and
`runmon push` delivers the rest), a full queue (oldest dropped, counted and said), a `kill -9` of runmon
(the queue is sent on the next start of the same log directory) and the flags' refusals."""
import glob
import json
import os
import re
import shutil
import signal
import tempfile
import time
import unittest

from http_e2e import Process, clean_env, wait_for
from remote_write_e2e import (PROMETHEUS, FakeReceiver, PrometheusServer, decode_write_request, eight_gpu_environment,
                             refused_port)
from runmon_e2e import RUNMON, run

SENT = re.compile(r"remote write to (\S+): (\d+) samples sent, (\d+) dropped")


def run_dir_of(logdir):
    dirs = sorted(glob.glob(os.path.join(logdir, "run-*")))
    assert dirs, f"no run in {logdir}"
    return dirs[-1]


def run_id_of(run_dir):
    return os.path.basename(run_dir).rsplit("-", 1)[1]


def exported_points(run_dir):
    """{(metric name, labels without __name__ as a sorted tuple): [timestamp ms, ...]} of the run, as
    `runmon dump --format openmetrics` renders it: the exporter's names and labels for every value."""
    dumped = run("dump", "--format", "openmetrics", run_dir)
    assert dumped.returncode == 0, dumped.stderr
    points = {}
    pattern = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})? (\S+) (\S+)$')
    for line in dumped.stdout.splitlines():
        if not line or line.startswith("#"):
            continue
        match = pattern.match(line)
        assert match, line
        labels = tuple(sorted(re.findall(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"', match.group(2) or "")))
        points.setdefault((match.group(1), labels), []).append(round(float(match.group(4)) * 1000))
    return points


class RemoteWriteTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.logdir = os.path.join(self.tmp.name, "wandb")
        self.cleanups = []

    def tearDown(self):
        for cleanup in reversed(self.cleanups):
            cleanup()
        self.tmp.cleanup()

    def prometheus(self, name="prometheus", **options):
        if not os.path.exists(PROMETHEUS):
            self.fail(f"{PROMETHEUS} is missing: run scripts/install-deps.sh")
        directory = os.path.join(self.tmp.name, name)
        os.makedirs(directory, exist_ok=True)
        server = PrometheusServer(directory, **options)
        self.cleanups.append(lambda: server.process.close())
        return server

    def receiver(self, script=(), port=0):
        fake = FakeReceiver(script, port)
        self.cleanups.append(fake.close)
        return fake

    def record(self, *flags, seconds=2, interval="0.2", env=None, timeout=120):
        result = run("run", "--dir", self.logdir, "--interval", interval, *flags, "--", "sleep", str(seconds),
                     env=env, timeout=timeout)
        self.assertEqual(result.returncode, 0, result.stderr)
        return result

    def stored_points(self, server, run_id, oldest, newest):
        """{(metric name, labels): [timestamp ms, ...]} of the run's raw samples in Prometheus."""
        window = int(newest - oldest) + 60
        stored = {}
        for result in server.query(f'{{run_id="{run_id}"}}[{window}s]', at=newest + 1):
            metric = dict(result["metric"])
            name = metric.pop("__name__")
            stored[(name, tuple(sorted(metric.items())))] = [round(float(t) * 1000) for t, _ in result["values"]]
        return stored

    def assert_landed_once(self, server, run_dir):
        """Every value of the run is in Prometheus, once, at its own tick's timestamp."""
        expected = exported_points(run_dir)
        self.assertTrue(expected)
        stamps = [t for points in expected.values() for t in points]
        stored = self.stored_points(server, run_id_of(run_dir), min(stamps) / 1000, max(stamps) / 1000)
        self.assertEqual(sorted(stored), sorted(expected), "series")
        for series, points in expected.items():
            self.assertEqual(stored[series], sorted(points), series)

    def test_every_value_lands_in_prometheus_once(self):
        server = self.prometheus()
        result = self.record("--remote-write", server.write_url, seconds=2)
        run_dir = run_dir_of(self.logdir)
        self.assert_landed_once(server, run_dir)
        sent = SENT.search(result.stderr)
        self.assertIsNotNone(sent, result.stderr)
        self.assertEqual(int(sent.group(2)), sum(len(p) for p in exported_points(run_dir).values()))
        self.assertEqual(int(sent.group(3)), 0)
        run_id = run_id_of(run_dir)
        host = server.query(f'runmon_memory_used_ratio{{run_id="{run_id}"}}', at=time.time())
        self.assertEqual(len(host), 1, host)
        self.assertGreater(float(host[0]["value"][1]), 0)
        # The run's own remote-write self-metrics are in the log and in Prometheus.
        self.assertTrue(server.query(f'runmon_remote_write_sent_samples_total{{run_id="{run_id}",destination="0"}}',
                                     at=time.time()))

    def test_receiver_stopped_mid_run_gets_everything_exactly_once(self):
        server = self.prometheus()
        runmon = Process([RUNMON, "run", "--dir", self.logdir, "--interval", "0.2", "--remote-write",
                          server.write_url, "--", "sleep", "9"], env=clean_env())
        self.cleanups.append(runmon.close)
        # Down from 1 s to 7 s: the first batch (sent when its oldest sample is 5 s old) meets the outage.
        time.sleep(1)
        server.stop()
        time.sleep(6)
        server.start()
        self.assertEqual(runmon.proc.wait(timeout=60), 0, runmon.output())
        output = runmon.output()
        self.assertRegex(output, r"remote write to \S+: delivering again after \d+ failed attempts")
        self.assert_landed_once(server, run_dir_of(self.logdir))

    def test_three_nodes_of_one_slurm_job(self):
        server = self.prometheus()
        processes = []
        for node in range(3):
            env = clean_env({"SLURM_JOB_ID": "4242", "SLURM_NODEID": str(node), "SLURM_PROCID": str(node)})
            logdir = os.path.join(self.tmp.name, f"node{node}")
            process = Process([RUNMON, "run", "--dir", logdir, "--interval", "0.2", "--remote-write",
                               server.write_url, "--", "sleep", "1.5"], env=env)
            self.cleanups.append(process.close)
            processes.append(process)
        for process in processes:
            self.assertEqual(process.proc.wait(timeout=60), 0, process.output())
        result = server.query('count by (node_rank) (count_over_time(runmon_host_cpu_ratio{job_id="4242"}[5m]))',
                              at=time.time())
        self.assertEqual(sorted(r["metric"]["node_rank"] for r in result), ["0", "1", "2"], result)
        self.assertEqual(len(server.query('count by (job_id) (count_over_time(runmon_host_cpu_ratio[5m]))',
                                          at=time.time())), 1)

    def test_500_and_429_are_retried_with_the_same_batch(self):
        fake = self.receiver([(500, {}, b"busy"), (429, {"Retry-After": "1"}, b"slow down")])
        result = self.record("--remote-write", fake.url, seconds=1)
        requests = fake.requests
        self.assertGreaterEqual(len(requests), 3, result.stderr)
        # The 500's batch, the 429's and the one delivered are the same bytes; the 429's wait was honoured.
        self.assertEqual(requests[0][2], requests[1][2])
        self.assertEqual(requests[1][2], requests[2][2])
        self.assertGreaterEqual(requests[2][0] - requests[1][0], 0.9)
        headers = {k.lower(): v for k, v in requests[0][1].items()}
        self.assertEqual(headers["content-encoding"], "snappy")
        self.assertEqual(headers["content-type"], "application/x-protobuf")
        self.assertEqual(headers["x-prometheus-remote-write-version"], "0.1.0")
        self.assertTrue(headers["user-agent"].startswith("runmon/"))
        delivered = [decode_write_request(r[2]) for r in requests if r[3] == 204]
        stamps = {}
        for batch in delivered:
            for labels, points in batch:
                key = tuple(sorted(labels.items()))
                for timestamp, _ in points:
                    self.assertNotIn(timestamp, stamps.setdefault(key, set()), "a value sent twice")
                    stamps[key].add(timestamp)
        expected = exported_points(run_dir_of(self.logdir))
        self.assertEqual(sum(len(s) for s in stamps.values()), sum(len(p) for p in expected.values()))
        for labels, _ in delivered[0]:
            self.assertEqual(list(labels), sorted(labels), "labels sorted by name")
            self.assertIn("run_id", labels)
            self.assertIn("host", labels)
        sent = SENT.search(result.stderr)
        self.assertEqual(int(sent.group(3)), 0, result.stderr)

    def test_400_drops_the_batch_with_one_clear_error(self):
        # Two batches of one run refused (the first when its oldest sample is 5 s old, the second at the end):
        # both dropped and counted, one message; the next run's samples go through.
        fake = self.receiver([(400, {}, b"bad request: label name is invalid")] * 2)
        result = self.record("--remote-write", fake.url, seconds=6)
        self.assertEqual(len(fake.requests), 2, result.stderr)
        self.assertEqual(result.stderr.count("label name is invalid"), 1, result.stderr)
        self.assertIn("HTTP 400", result.stderr)
        sent = SENT.search(result.stderr)
        self.assertEqual(int(sent.group(2)), 0, result.stderr)
        self.assertEqual(int(sent.group(3)), sum(len(p) for p in exported_points(run_dir_of(self.logdir)).values()))
        # A dropped batch is never resent.
        bodies = [r[2] for r in fake.requests]
        self.assertEqual(len(bodies), len(set(bodies)))
        shutil.rmtree(self.logdir)
        after = self.record("--remote-write", fake.url, seconds=1)
        self.assertGreater(int(SENT.search(after.stderr).group(2)), 0, after.stderr)
        self.assertEqual(int(SENT.search(after.stderr).group(3)), 0, after.stderr)

    def test_hung_receiver_neither_holds_the_run_nor_loses_the_samples(self):
        fake = self.receiver(["hang"] * 50)
        start = time.monotonic()
        result = self.record("--remote-write", fake.url, "--remote-write-drain-timeout", "2", seconds=1)
        self.assertLess(time.monotonic() - start, 30)
        run_dir = run_dir_of(self.logdir)
        self.assertIn(f"runmon push {run_dir}", result.stderr)
        server = self.prometheus()
        pushed = run("push", run_dir, "--remote-write", server.write_url, timeout=120)
        self.assertEqual(pushed.returncode, 0, pushed.stderr)
        # The queue belongs to the hung receiver's URL: push of another URL sends the whole run from its log.
        self.assert_landed_once(server, run_dir)

    def test_push_of_a_labelled_run_sends_its_keys_series(self):
        # --label (W&B's x_label) makes the log's keys end in /l:LABEL; pushed, they are the keys' own series.
        run("run", "--dir", self.logdir, "--interval", "0.2", "--label", "node1", "--", "sleep", "1", check=True)
        run_dir = run_dir_of(self.logdir)
        fake = self.receiver()
        pushed = run("push", run_dir, "--remote-write", fake.url, timeout=120)
        self.assertEqual(pushed.returncode, 0, pushed.stderr)
        names = {labels["__name__"] for r in fake.requests for labels, _ in decode_write_request(r[2])}
        self.assertIn("runmon_host_cpu_ratio", names)
        self.assertIn("runmon_memory_used_ratio", names)
        self.assertGreater(int(SENT.search(pushed.stderr).group(2)), 0, pushed.stderr)

    def test_push_delivers_the_left_over_queue(self):
        port = refused_port()
        url = f"http://127.0.0.1:{port}/api/v1/write"
        result = self.record("--remote-write", url, "--remote-write-drain-timeout", "0.5", seconds=1)
        self.assertRegex(result.stderr, r"\d+ left in the queue")
        run_dir = run_dir_of(self.logdir)
        self.assertTrue(glob.glob(os.path.join(run_dir, "remote-write", "*", "*.seg")))
        # The receiver comes back on the same URL: push sends the queue of that URL, once.
        fake = self.receiver(port=port)
        pushed = run("push", run_dir, "--remote-write", url, timeout=120)
        self.assertEqual(pushed.returncode, 0, pushed.stderr)
        total = sum(len(points) for r in fake.requests for _, points in decode_write_request(r[2]))
        self.assertEqual(total, sum(len(p) for p in exported_points(run_dir).values()))
        again = run("push", run_dir, "--remote-write", url, timeout=60)
        self.assertEqual(again.returncode, 0, again.stderr)
        self.assertIn("nothing left to send", again.stderr)

    def test_a_full_queue_drops_the_oldest_and_says_so(self):
        # A node of 8 GPUs (about 200 values a sample, 6 KB queued a sample) behind a receiver that is down:
        # 64 KiB hold about 10 samples, so the oldest segments go, counted and said once.
        url = f"http://127.0.0.1:{refused_port()}/api/v1/write"
        env = eight_gpu_environment(self.tmp.name)
        result = self.record("--remote-write", url, "--remote-write-queue-size", "64KiB",
                             "--remote-write-drain-timeout", "0", seconds=3, interval="0.1", env=env)
        self.assertEqual(result.stderr.count("reached its bound of 65536 bytes"), 1, result.stderr)
        sent = SENT.search(result.stderr)
        self.assertGreater(int(sent.group(3)), 0, result.stderr)
        self.assertIn("for the queue's bound", result.stderr)
        run_dir = run_dir_of(self.logdir)
        dumped = run("dump", "--format", "csv", run_dir)
        self.assertIn("runmon.remoteWrite.0.droppedSamples", dumped.stdout.splitlines()[0])
        # What is left is the newest part of the run, and still goes out.
        fake = self.receiver(port=int(url.split(":")[2].split("/")[0]))
        pushed = run("push", run_dir, "--remote-write", url, timeout=120)
        self.assertEqual(pushed.returncode, 0, pushed.stderr)
        self.assertTrue(fake.answered(204), pushed.stderr)

    def test_kill_9_leaves_a_queue_that_the_next_start_sends(self):
        server = self.prometheus()
        server.stop()
        runmon = Process([RUNMON, "run", "--dir", self.logdir, "--interval", "0.2", "--remote-write",
                          server.write_url, "--", "sleep", "30"], env=clean_env())
        self.cleanups.append(runmon.close)
        killed_dir = wait_for(lambda: glob.glob(os.path.join(self.logdir, "run-*", "remote-write", "*", "*.seg")),
                              what="a queue segment")
        time.sleep(1.5)
        # The command outlives runmon's kill -9: it is ended by its own pid (other tests' sleeps run beside).
        children = []
        for task in glob.glob(f"/proc/{runmon.proc.pid}/task/*/children"):
            with open(task) as f:
                children += [int(pid) for pid in f.read().split()]
        runmon.proc.send_signal(signal.SIGKILL)
        runmon.proc.wait(timeout=10)
        for pid in children:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        killed_run = os.path.dirname(os.path.dirname(os.path.dirname(killed_dir[0])))
        server.start()
        result = self.record("--remote-write", server.write_url, seconds=1)
        self.assertIn(os.path.basename(killed_run), result.stderr)
        expected = exported_points(killed_run)
        run_id = run_id_of(killed_run)
        stamps = [t for points in expected.values() for t in points]
        stored = self.stored_points(server, run_id, min(stamps) / 1000, max(stamps) / 1000)
        # The log and the queue are written apart: the killed run's last tick may be in one and not the
        # other; every other tick is in both, once.
        last_tick = max(stamps)
        self.assertTrue(stored)
        for series, points in expected.items():
            self.assertEqual([t for t in stored.get(series, []) if t != last_tick],
                             sorted(t for t in points if t != last_tick), series)

    def test_headers_and_bearer_token_go_with_every_request(self):
        token = os.path.join(self.tmp.name, "token")
        with open(token, "w") as f:
            f.write("s3cret-token\n")
        fake = self.receiver()
        self.record("--remote-write", fake.url, "--remote-write-header", "X-Scope-OrgID=tenant-1",
                    "--remote-write-bearer-token-file", token, seconds=0.5)
        self.assertTrue(fake.requests)
        for _, headers, _, _ in fake.requests:
            headers = {k.lower(): v for k, v in headers.items()}
            self.assertEqual(headers["authorization"], "Bearer s3cret-token")
            self.assertEqual(headers["x-scope-orgid"], "tenant-1")

    def test_bad_flags_are_usage_errors(self):
        token_dir = self.tmp.name
        for flags, message in [
            (["--remote-write", "http://user:pw@127.0.0.1:9/api/v1/write"], "Authorization"),
            (["--remote-write", "ftp://127.0.0.1/x"], "http"),
            (["--remote-write", "http://127.0.0.1:9/w", "--remote-write-header", "novalue"], "NAME=VALUE"),
            (["--remote-write", "http://127.0.0.1:9/w", "--remote-write-header", "Content-Encoding=gzip"],
             "sets this header itself"),
            (["--remote-write", "http://127.0.0.1:9/w", "--remote-write-bearer-token-file",
              os.path.join(token_dir, "missing")], "cannot be read"),
            (["--remote-write", "http://127.0.0.1:9/w", "--remote-write-queue-size", "12 parsecs"], "unknown unit"),
            (["--remote-write-header", "A=b"], "go with --remote-write"),
        ]:
            result = run("run", "--dir", self.logdir, *flags, "--", "true")
            self.assertEqual(result.returncode, 2, (flags, result.stderr))
            self.assertTrue(result.stderr.startswith("runmon:"), result.stderr)
            self.assertIn(message, result.stderr)
            self.assertFalse(os.path.exists(self.logdir), "nothing recorded on a usage error")
        result = run("push", self.tmp.name, "--remote-write", "http://127.0.0.1:9/w")
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertIn("not a run directory", result.stderr)
        # push's wait is its --timeout: the run's drain flag is not one of push's.
        result = run("push", self.tmp.name, "--remote-write", "http://127.0.0.1:9/w", "--remote-write-drain-timeout", "1")
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertIn("--remote-write-drain-timeout", result.stderr)


if __name__ == "__main__":
    unittest.main()
