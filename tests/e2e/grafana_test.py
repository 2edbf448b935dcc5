"""End-to-end test of the Grafana dashboard (contrib/grafana/runmon.json) and its recording rules
(contrib/grafana/runmon.rules.yml, written by scripts/grafana_rules.py): a short run recorded with the fake
NVML (two GPUs, no job) and a written run of a job are backfilled into a Prometheus on 127.0.0.1, and every
rule's expression, evaluated by an instant query at the runs' end, returns data. Also: the variables' All
value (.*) keeps runs without a job while a chosen job keeps only its own, the dashboard names only metrics
runmon exports and filters every selector by the three variables, and the generator refuses what it cannot
stand for (an unknown variable, a variable query it does not read)."""
import json
import os
import re
import subprocess
import sys
import tempfile
import unittest

import prometheus_backfill as pb
import runlog_writer

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
DASHBOARD = os.path.join(ROOT, "contrib", "grafana", "runmon.json")
RULES = os.path.join(ROOT, "contrib", "grafana", "runmon.rules.yml")
GENERATOR = os.path.join(ROOT, "scripts", "grafana_rules.py")
RUN_ID = "grafana01"
JOB_RUN_ID = "grafanajob01"


def rules_file_expressions():
    """[(record, expr)] of the committed rules file (the generator writes each expr as one JSON string)."""
    out = []
    record = None
    with open(RULES) as f:
        for line in f:
            stripped = line.strip()
            if stripped.startswith("- record: "):
                record = stripped[len("- record: "):]
            elif stripped.startswith("expr: "):
                out.append((record, json.loads(stripped[len("expr: "):])))
    return out


def dashboard_expressions(dashboard):
    """Every PromQL text of the dashboard as written: panel targets (rows' panels too) and variable queries."""
    out = []

    def walk(panels):
        for panel in panels:
            out.extend(t["expr"] for t in panel.get("targets", []) if t.get("expr"))
            walk(panel.get("panels", []))
    walk(dashboard["panels"])
    for variable in dashboard["templating"]["list"]:
        if variable["type"] == "query":
            query = variable["query"]
            out.append(query["query"] if isinstance(query, dict) else query)
    return out


class GrafanaTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        scratch = cls.tmp.name
        with open(DASHBOARD) as f:
            cls.dashboard = json.load(f)
        cls.catalog = pb.Catalog()
        log = pb.record_gpu_run(os.path.join(scratch, "wandb"), RUN_ID)
        _expected, cls.end_ms = pb.expected_series(log, cls.catalog)
        # A job's run ending ten seconds before the recorded one: both within an instant query's lookback.
        start = (cls.end_ms - 40000) / 1000
        records = [runlog_writer.header_record("runmon 0.1.0"),
                   runlog_writer.run_record(JOB_RUN_ID, "job run", start, host="node-7"),
                   runlog_writer.environment_record(job_id="slurm-4242", node_rank="1")]
        for i in range(4):
            records.append(runlog_writer.stats_record(start + 10 * i, {"cpu_percent": "25", "gpu.0.gpu": "80"}))
        job_log = runlog_writer.write_run(os.path.join(scratch, "written"), "20260101_000000", JOB_RUN_ID, records)
        blocks = os.path.join(scratch, "blocks")
        for name, path in (("gpu", log), ("job", job_log)):
            out = os.path.join(scratch, f"{name}.om")
            result = pb.dump_openmetrics(path, out)
            assert result.returncode == 0, result.stderr
            pb.create_blocks(out, blocks)
        cls.prometheus = pb.Prometheus(blocks, scratch)

    @classmethod
    def tearDownClass(cls):
        cls.prometheus.stop()
        cls.tmp.cleanup()

    def test_every_rule_returns_data_at_the_runs_end(self):
        rules = rules_file_expressions()
        self.assertEqual(len(rules), len(dashboard_expressions(self.dashboard)))
        for record, expr in rules:
            with self.subTest(record=record):
                result = self.prometheus.query(expr, self.end_ms)
                self.assertTrue(result, f"{record}: {expr} returns nothing")

    def test_all_keeps_runs_without_a_job_and_a_chosen_job_only_its_own(self):
        nodes = next(t["expr"] for p in self.dashboard["panels"] if p["title"] == "Nodes" for t in p["targets"])
        every = nodes.replace("$job", ".*").replace("$node", ".*").replace("$host", ".*")
        self.assertEqual(self.prometheus.query(every, self.end_ms)[0]["value"][1], "2")
        chosen = nodes.replace("$job", "slurm-4242").replace("$node", ".*").replace("$host", ".*")
        self.assertEqual(self.prometheus.query(chosen, self.end_ms)[0]["value"][1], "1")
        ranked = nodes.replace("$job", ".*").replace("$node", "1").replace("$host", "node-7")
        self.assertEqual(self.prometheus.query(ranked, self.end_ms)[0]["value"][1], "1")

    def test_the_dashboard_names_only_exported_metrics(self):
        exported = set(self.catalog.names())
        for expr in dashboard_expressions(self.dashboard):
            for name in re.findall(r"\brunmon_\w+", expr):
                self.assertIn(name, exported, expr)

    def test_every_selector_is_filtered_by_the_variables(self):
        for panel in self.dashboard["panels"]:
            for target in panel.get("targets", []):
                with self.subTest(panel=panel["title"], target=target["refId"]):
                    selectors = re.findall(r"\brunmon_\w+\{([^}]*)\}", target["expr"])
                    self.assertTrue(selectors, target["expr"])
                    self.assertEqual(len(selectors), len(re.findall(r"\brunmon_\w+", target["expr"])))
                    for selector in selectors:
                        self.assertEqual(selector, 'job_id=~"$job",node_rank=~"$node",host=~"$host"')
                    self.assertEqual(target["datasource"], {"type": "prometheus", "uid": "${datasource}"})

    def test_the_variables(self):
        self.assertGreaterEqual(self.dashboard["schemaVersion"], 36)
        variables = {v["name"]: v for v in self.dashboard["templating"]["list"]}
        self.assertEqual(variables["datasource"]["type"], "datasource")
        self.assertEqual(variables["datasource"]["query"], "prometheus")
        for name, label in (("job", "job_id"), ("node", "node_rank"), ("host", "host")):
            variable = variables[name]
            self.assertEqual(variable["type"], "query")
            self.assertTrue(variable["includeAll"])
            self.assertTrue(variable["multi"])
            self.assertEqual(variable["allValue"], ".*")
            self.assertRegex(variable["query"]["query"], rf"^label_values\(runmon_\w+.*, {label}\)$")

    def generate(self, dashboard):
        path = os.path.join(self.tmp.name, "dashboard.json")
        with open(path, "w") as f:
            json.dump(dashboard, f)
        return subprocess.run([sys.executable, GENERATOR, "--dashboard", path, "--output",
                               os.path.join(self.tmp.name, "rules.yml")], capture_output=True, text=True,
                              timeout=60)

    def test_the_generator_refuses_what_it_cannot_stand_for(self):
        unknown = json.loads(json.dumps(self.dashboard))
        unknown["panels"][1]["targets"][0]["expr"] = "runmon_host_cpu_ratio{gpu=~\"$nowhere\"}"
        result = self.generate(unknown)
        self.assertEqual(result.returncode, 1)
        self.assertIn("unknown variable $nowhere", result.stderr)
        odd_query = json.loads(json.dumps(self.dashboard))
        odd_query["templating"]["list"][1]["query"]["query"] = "metrics(runmon_.*)"
        result = self.generate(odd_query)
        self.assertEqual(result.returncode, 1)
        self.assertIn("is not label_values(SELECTOR, LABEL)", result.stderr)
        self.assertEqual(self.generate(self.dashboard).returncode, 0)


if __name__ == "__main__":
    unittest.main()
