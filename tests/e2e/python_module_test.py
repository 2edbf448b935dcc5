"""End to end: the Python module (python/runmon.py) under `runmon run`: 50 steps of two keys become 50 W&B
history rows (read back by `runmon dump` and by W&B's own reader, bench/wandb_datastore_reader.py: step.num,
the _step, _runtime and _timestamp items, before the exit record) and a summary (the SummaryRecord and
files/wandb-summary.json), charted by leet and serve while the run goes on; several writer processes at once (forked workers with connections of their own)
lose nothing; a flood of 100,000 lines is taken whole with nothing dropped; values that are not JSON, a
socket that is gone and a script outside `runmon run` never raise into the script, and each says so once."""
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

from http_e2e import Process, free_port, timed_get, wait_for
from runmon_e2e import RUNMON, run

HERE = os.path.dirname(os.path.abspath(__file__))
PYTHON_DIR = os.path.join(HERE, "..", "..", "python")
BENCH_DIR = os.path.join(HERE, "..", "..", "bench")
PROTO = os.path.join(HERE, "..", "..", "src", "runlog", "wandb_record.proto")


def records_of(path):
    result = run("dump", path)
    assert result.returncode == 0, result.stderr
    return [json.loads(line) for line in result.stdout.splitlines() if line.strip()]


def history_rows(records):
    rows = []
    for record in records:
        if record["record_type"] != "history":
            continue
        history = record["record"]["history"]
        rows.append((int(history.get("step", {}).get("num", "0")),
                     {item["key"]: item["value_json"] for item in history["item"]}))
    return rows


WANDB_READER = """
import json, sys
sys.path.insert(0, sys.argv[1])
import wandb_datastore_reader as reader
pb, _, _ = reader.load_pb(sys.argv[2], "protoc")
store = reader.DataStore()
store.open_for_scan(sys.argv[3])
rows = []
while (data := store.scan_data()) is not None:
    record = pb.Record()
    record.ParseFromString(data)
    if record.WhichOneof("record_type") == "history":
        rows.append([record.history.step.num, [item.key for item in record.history.item]])
store.close()
print(json.dumps(rows))
"""


def wandb_history(log):
    """The history rows as W&B's reader sees them: [step.num, [item keys]] each."""
    result = subprocess.run(["/usr/bin/python3", "-c", WANDB_READER, BENCH_DIR, PROTO, log], capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


class PythonModuleTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="rmpy")
        self.wandb = os.path.join(self.tmp.name, "wandb")

    def tearDown(self):
        self.tmp.cleanup()

    def script(self, body):
        path = os.path.join(self.tmp.name, "train.py")
        with open(path, "w") as f:
            f.write("import sys\nsys.path.insert(0, %r)\nimport runmon\n" % PYTHON_DIR + textwrap.dedent(body))
        return path

    def run_script(self, body, *flags):
        result = run("run", "--dir", self.wandb, "--interval", "0.5", *flags, "--", sys.executable,
                     self.script(body), timeout=180)
        self.assertEqual(result.returncode, 0, result.stderr)
        run_dir = os.path.join(self.wandb, "latest-run")
        log = next(os.path.join(run_dir, f) for f in os.listdir(run_dir) if f.endswith(".wandb"))
        return result, run_dir, log

    def test_fifty_steps_of_two_keys_are_history_rows_and_a_summary(self):
        result, run_dir, log = self.run_script("""
            for step in range(50):
                runmon.log({"loss": 1.0 / (step + 1), "lr": 3e-4}, step=step)
            runmon.summary({"best_loss": 0.02})
            assert runmon.enabled() and runmon.dropped() == 0
        """)
        self.assertIn("the command's metrics: 50 rows, 3 keys", result.stderr)
        records = records_of(log)
        rows = history_rows(records)
        self.assertEqual([step for step, _ in rows], list(range(50)))
        for step, items in rows:
            self.assertEqual(items["_step"], str(step))
            self.assertAlmostEqual(float(items["loss"]), 1.0 / (step + 1))
            self.assertEqual(float(items["lr"]), 3e-4)
            self.assertGreaterEqual(float(items["_runtime"]), 0)
            self.assertGreater(float(items["_timestamp"]), 1.7e9)
        kinds = [r["record_type"] for r in records]
        self.assertLess(kinds.index("summary"), kinds.index("exit"))  # W&B's readers stop at the exit
        self.assertLess(max(i for i, k in enumerate(kinds) if k == "history"), kinds.index("exit"))
        summary = next(r for r in records if r["record_type"] == "summary")["record"]["summary"]
        values = {item["key"]: item["value_json"] for item in summary["update"]}
        self.assertEqual(values["loss"], "0.02")
        self.assertEqual(values["best_loss"], "0.02")
        self.assertEqual(values["_step"], "49")
        with open(os.path.join(run_dir, "files", "wandb-summary.json")) as f:
            summary_file = json.load(f)
        self.assertEqual(summary_file["lr"], 3e-4)
        self.assertEqual(summary_file["_step"], 49)
        # W&B's own reader (its datastore's framing, its Record classes from Debian's python3-protobuf).
        self.assertEqual(wandb_history(log), [[step, ["loss", "lr", "_step", "_runtime", "_timestamp"]]
                                              for step in range(50)])

    def test_leet_and_serve_chart_the_rows_while_the_run_goes_on(self):
        go_on = os.path.join(self.tmp.name, "go-on")
        script = self.script("""
            import os, time
            for step in range(20):
                runmon.log({"loss": 2.0 - step / 10, "accuracy": step / 20}, step=step)
            runmon.log({"loss": 0.0})  # joins step 19 and closes it
            runmon.flush()
            while not os.path.exists(%r):
                time.sleep(0.05)
        """ % go_on)
        runner = Process([RUNMON, "run", "--dir", self.wandb, "--interval", "0.5", "--", sys.executable, script])
        try:
            run_dir = os.path.join(self.wandb, "latest-run")
            wait_for(lambda: any(r["record_type"] == "history" and r["record"]["history"].get("step", {})
                                 .get("num") == "19" for r in records_of(run_dir)) if os.path.exists(run_dir)
                     else False, what="the rows in the live log")
            frame = run("leet", run_dir, "--print-frame", "160x48")
            self.assertEqual(frame.returncode, 0, frame.stderr)
            self.assertIn(" Metrics · 2 charts", frame.stdout)
            self.assertIn("┌ loss ", frame.stdout)
            self.assertIn("┌ accuracy ", frame.stdout)
            self.assertIn("running", frame.stdout)
            port = free_port()
            serve = Process([RUNMON, "serve", "--logdir", self.wandb, "--port", str(port)])
            try:
                url = f"http://127.0.0.1:{port}"
                wait_for(lambda: timed_get(url + "/api/runs")[0] == 200, what="serve's first answer")
                run_name = os.path.basename(os.path.realpath(run_dir))
                status, body = timed_get(f"{url}/api/runs/{run_name}")[:2]
                self.assertEqual(status, 200, body)
                charts = {c["id"]: c for c in json.loads(body)["charts"]}
                self.assertEqual(charts["loss"]["section"], "logged")
                self.assertEqual(charts["loss"]["x_axis"], "step")
            finally:
                serve.close()
        finally:
            open(go_on, "w").close()
            self.assertEqual(runner.proc.wait(timeout=60), 0, runner.output())
            runner.close()

    def test_several_writer_processes_at_once_lose_nothing(self):
        _, _, log = self.run_script("""
            import multiprocessing, os
            def work(worker):
                for i in range(300):
                    runmon.log({f"worker{worker}": i})
                assert runmon.flush(30)
            runmon.log({"parent": 1})  # connected before the fork: each child connects anew
            children = [multiprocessing.get_context("fork").Process(target=work, args=(w,)) for w in range(4)]
            for child in children: child.start()
            for child in children: child.join()
            assert all(child.exitcode == 0 for child in children)
        """)
        rows = history_rows(records_of(log))
        self.assertEqual(len(rows), 1 + 4 * 300)
        self.assertEqual([step for step, _ in rows], list(range(len(rows))))  # no step given: one each
        for worker in range(4):
            values = [int(items[f"worker{worker}"]) for _, items in rows if f"worker{worker}" in items]
            self.assertEqual(values, list(range(300)))

    def test_a_flood_is_taken_whole_and_nothing_blocks(self):
        result, _, log = self.run_script("""
            import time
            start = time.perf_counter()
            for i in range(100000):
                runmon.log({"loss": i * 1e-5, "lr": 0.001}, step=i)
            print(f"flood {time.perf_counter() - start:.3f}", file=sys.stderr)
            assert runmon.flush(60) and runmon.dropped() == 0
        """)
        self.assertIn("the command's metrics: 100000 rows", result.stderr)
        rows = history_rows(records_of(log))
        self.assertEqual(len(rows), 100000)
        self.assertEqual(rows[-1][0], 99999)

    def test_bad_values_a_gone_runmon_and_no_runmon_never_raise(self):
        socket_path = os.path.join(self.tmp.name, "gone.sock")
        body = textwrap.dedent("""
            import warnings
            warnings.simplefilter("always")
            with warnings.catch_warnings(record=True) as caught:
                for i in range(3):
                    runmon.log({"x": object()})
                    runmon.log("not a dict")
                    runmon.log({"ok": 1}, step=-1)
                    runmon.summary([1])
                    runmon.log({"ok": 1})
                runmon.flush(5)
            print(runmon.dropped(), len(caught), [str(w.message) for w in caught])
        """)
        # Outside `runmon run`: a no-op and one warning.
        env = {k: v for k, v in os.environ.items() if k != "RUNMON_RUN_SOCKET"}
        outside = subprocess.run([sys.executable, self.script(body)], capture_output=True, text=True, env=env,
                                 timeout=60)
        self.assertEqual(outside.returncode, 0, outside.stderr)
        self.assertTrue(outside.stdout.startswith("0 1 ['runmon: not running under `runmon run`"), outside.stdout)
        # A socket nobody listens on: every line dropped, one warning for the bad values and one for runmon.
        gone = subprocess.run([sys.executable, self.script(body)], capture_output=True, text=True,
                              env={**env, "RUNMON_RUN_SOCKET": socket_path}, timeout=60)
        self.assertEqual(gone.returncode, 0, gone.stderr)
        dropped, warned = gone.stdout.split()[:2]
        self.assertEqual(int(dropped), 15)
        self.assertIn("cannot reach runmon at", gone.stdout)
        self.assertIn("a metrics line was not sent", gone.stdout)
        # Under runmon: the good lines are rows, the bad ones counted in the script.
        result, _, log = self.run_script(body)
        self.assertIn("the command's metrics: 3 rows", result.stderr)
        self.assertEqual(len(history_rows(records_of(log))), 3)


if __name__ == "__main__":
    unittest.main()
