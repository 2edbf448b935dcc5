"""End to end: Graphcore IPUs through runmon's gcipuinfo helper and the fake gcipuinfo module
(tests/fakes/gcipuinfo, on PYTHONPATH), with the run attached to a process the fake names as the IPU's user:
the keys in the run log (`runmon dump`), every field on a device's first sight and the variable ones after,
the metadata, the charts in the dashboard (chart groups leet shares, runview) and the exporter's series;
getDevices hanging or raising never delays the other collectors' samples; `runmon info` says why when the
module is missing, and gc-info (the fake of tests/fakes/gc_info) stands in for it."""
import glob
import json
import os
import subprocess
import tempfile
import unittest

from http_e2e import dashboard_charts, exposition_with, free_port
from runmon_e2e import RUNMON, run

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "..", "fixtures", "ipu")
FAKES = os.path.join(HERE, "..", "fakes")
VARIABLE = {"average board temp (C)", "average die temp (C)", "clock (MHz)", "ipu power (W)",
            "ipu utilisation (%)", "ipu utilisation (session) (%)"}


class IpuTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.wandb = os.path.join(self.tmp.name, "wandb")
        # The run's process: the fake module names it as the user of the IPUs the fixture gives pid 123.
        self.user = subprocess.Popen(["sleep", "2"])

    def tearDown(self):
        self.user.kill()
        self.user.wait()
        self.tmp.cleanup()

    def env(self, behaviour="normal", fixture="gcipuinfo_getDevices_mock.json", module=True, gc_info=False):
        path = os.environ.get("PATH", "/usr/bin:/bin")
        if gc_info:
            path = os.path.join(FAKES, "gc_info") + ":" + path
        env = {"PATH": path, "PYTHONPATH": os.path.join(FAKES, "gcipuinfo") if module else "",
               "RUNMON_FAKE_GCIPUINFO_FIXTURE": os.path.join(FIXTURES, fixture),
               "RUNMON_FAKE_GCIPUINFO_PID": str(self.user.pid),
               "RUNMON_FAKE_GCIPUINFO_BEHAVIOUR": behaviour,
               "RUNMON_FAKE_GC_INFO_DIR": os.path.join(FIXTURES, "gc_info"),
               "RUNMON_FAKE_GC_INFO_PID": str(self.user.pid)}
        return env

    def record(self, env, run_id, *extra):
        result = run("run", "--pid", str(self.user.pid), "--dir", self.wandb, "--id", run_id, "--interval", "0.2",
                     *extra, env=env, timeout=60)
        self.assertEqual(result.returncode, 0, result.stderr)
        (run_dir,) = glob.glob(os.path.join(self.wandb, f"run-*-{run_id}"))
        return run_dir, result.stderr

    def stats(self, run_dir):
        dumped = run("dump", run_dir)
        self.assertEqual(dumped.returncode, 0, dumped.stderr)
        records = [json.loads(line) for line in dumped.stdout.splitlines()]
        return [{"values": {item["key"]: json.loads(item["value_json"]) for item in r["record"]["stats"]["item"]}}
                for r in records if r["record_type"] == "stats"]

    def ipu_keys(self, record, device="1"):
        prefix = f"ipu.{device}."
        return {key[len(prefix):] for key in record["values"] if key.startswith(prefix)}

    def test_first_sight_then_the_variable_fields(self):
        run_dir, _ = self.record(self.env(), "ipue2e")
        stats = self.stats(run_dir)
        with_ipu = [r for r in stats if self.ipu_keys(r)]
        self.assertGreaterEqual(len(with_ipu), 2, stats[:3])
        first, later = with_ipu[0], with_ipu[1:]
        self.assertEqual(self.ipu_keys(first),
                         VARIABLE | {"user process id", "board ipu index", "id"})
        self.assertEqual(first["values"]["ipu.1.user process id"], self.user.pid)
        self.assertEqual(first["values"]["ipu.1.ipu utilisation (session) (%)"], 15.65)
        for record in later:
            self.assertEqual(self.ipu_keys(record), VARIABLE)
        for record in stats:  # the other processes' device and the idle one
            self.assertFalse(self.ipu_keys(record, "0") | self.ipu_keys(record, "2"))
        with open(os.path.join(run_dir, "files", "wandb-metadata.json")) as f:
            meta = json.load(f)
        self.assertEqual(meta["ipu"]["device_count"], 3)
        self.assertEqual(meta["ipu"]["vendor"], "Graphcore")
        self.assertEqual(meta["ipu"]["devices"][1], {"id": "1", "board ipu index": "1", "board type": "C2"})

    def test_the_dashboard_and_the_exporter_show_them(self):
        run_dir, _ = self.record(self.env(), "ipucharts")
        charts = dashboard_charts(RUNMON, self.wandb, run_dir)
        for chart_id, title in (("ipu.{id}.average board temp (C)", "IPU Board Temp"),
                                ("ipu.{id}.clock (MHz)", "IPU Clock"), ("ipu.{id}.ipu power (W)", "IPU Power"),
                                ("ipu.{id}.ipu utilisation (%)", "IPU utilisation"),
                                ("ipu.{id}.ipu utilisation (session) (%)", "IPU Session")):
            self.assertIn(chart_id, charts)
            self.assertIn(title, json.dumps(charts[chart_id]))
            self.assertEqual([s["name"] for s in charts[chart_id]["series"]], ["IPU 1"])
        port = free_port()
        user = subprocess.Popen(["sleep", "3"])
        env = dict(self.env(), RUNMON_FAKE_GCIPUINFO_PID=str(user.pid))
        runner = subprocess.Popen([RUNMON, "run", "--pid", str(user.pid), "--dir", self.wandb, "--id", "ipuexport",
                                   "--interval", "0.2", "--metrics-listen", f"127.0.0.1:{port}"],
                                  env=dict(os.environ, **env), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                  text=True)
        try:
            body = exposition_with(port, "runmon_ipu_clock_hertz", what="IPU series")
            self.assertIn('runmon_ipu_clock_hertz{ipu="1"', body)
            self.assertIn('runmon_ipu_utilization_ratio{ipu="1"', body)
            self.assertIn('runmon_collector_success{collector="ipu"', body)
        finally:
            user.kill()
            user.wait()
            _, errors = runner.communicate(timeout=60)

    def test_hang_and_raise_do_not_delay_the_other_samples(self):
        for behaviour in ("hang", "raise"):
            with self.subTest(behaviour=behaviour):
                self.user.kill()
                self.user.wait()
                self.user = subprocess.Popen(["sleep", "2"])
                run_dir, _ = self.record(self.env(behaviour), f"ipu{behaviour}")
                stats = self.stats(run_dir)
                # 0.2 s apart for 2 s: about 11 samples; the IPU lane's waits (0.1 s each) hold none of them.
                self.assertGreaterEqual(len(stats), 6, [r["values"].keys() for r in stats])
                for record in stats:
                    self.assertIn("memory_percent", record["values"])
                    self.assertFalse(self.ipu_keys(record))

    def test_info_says_why_without_the_module_and_uses_gc_info(self):
        info = run("info", env=self.env(module=False))
        self.assertEqual(info.returncode, 0, info.stderr)
        meta = json.loads(info.stdout)
        self.assertEqual(meta["collectors"]["ipu"], {
            "available": False, "reason": "No module named 'gcipuinfo'", "enabledByDefault": True,
            "settings": ["x_stats_track_process_tree", "PATH", "PYTHONPATH"]})
        info = run("info", env=self.env())
        meta = json.loads(info.stdout)
        self.assertTrue(meta["collectors"]["ipu"]["available"])
        self.assertEqual(meta["ipu"]["device_count"], 3)
        info = run("info", env=self.env(module=False, gc_info=True))
        meta = json.loads(info.stdout)
        self.assertEqual(meta["ipu"]["devices"], [{"id": "0", "board ipu index": "0", "board type": "C600"},
                                                  {"id": "1", "board ipu index": "1", "board type": "C2"}])
        run_dir, _ = self.record(self.env(module=False, gc_info=True), "ipugcinfo")
        with_ipu = [r for r in self.stats(run_dir) if self.ipu_keys(r, "0")]
        self.assertTrue(with_ipu)
        self.assertEqual(with_ipu[0]["values"]["ipu.0.total board power (W)"], 12.6)


if __name__ == "__main__":
    unittest.main()
