"""Helpers for the tests that load runs into a real Prometheus: recording a run with the fake NVML (GPU
series), the log's values as the exporter names them (worked out here from `runmon catalog --prometheus`,
independently of the backfill's code), `promtool tsdb create-blocks-from openmetrics`, and a Prometheus server
on 127.0.0.1 over those blocks, queried through its HTTP API. Python's standard library only."""
import calendar
import json
import os
import re
import shutil
import socket
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request

from runmon_e2e import run

PROMTOOL = shutil.which("promtool")
PROMETHEUS = shutil.which("prometheus")
if not PROMTOOL or not PROMETHEUS:
    raise RuntimeError("promtool and prometheus are needed (scripts/install-deps.sh installs Debian's prometheus)")
FAKE_NVML = os.environ.get("RUNMON_FAKE_NVML_FULL", "")
SCENARIOS = os.environ.get("RUNMON_FAKE_NVML_SCENARIOS", "")


def record_gpu_run(directory, run_id, seconds=1.5, interval=0.1):
    """`runmon run` of `sleep` with the fake NVML's two GPUs; returns the run's log path."""
    env = {"RUNMON_NVML_LIBRARY": FAKE_NVML,
           "RUNMON_FAKE_NVML_SCENARIO": os.path.join(SCENARIOS, "two_gpus.json")}
    result = run("run", "--interval", str(interval), "--dir", directory, "--id", run_id, "--",
                 "sleep", str(seconds), env=env)
    if result.returncode != 0:
        raise AssertionError(f"runmon run failed ({result.returncode}): {result.stderr}")
    for entry in os.listdir(directory):
        if entry.startswith("run-") and entry.endswith(run_id):
            return os.path.join(directory, entry, f"run-{run_id}.wandb")
    raise AssertionError(f"no run {run_id} in {directory}")


def rfc3339_milliseconds(text):
    """Protobuf JSON's timestamp ("2026-12-02T18:05:12.541234567Z") in milliseconds, rounded as runmon does."""
    match = re.fullmatch(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?Z", text)
    if not match:
        raise ValueError(f"not an RFC 3339 UTC time: {text}")
    seconds = calendar.timegm(time.strptime(match.group(1), "%Y-%m-%dT%H:%M:%S"))
    nanos = int((match.group(2) or "").ljust(9, "0"))
    return seconds * 1000 + (nanos + 500000) // 1000000


class Catalog:
    """The Prometheus names of `runmon catalog --prometheus` (docs/prometheus.md): pattern, name, type,
    label and conversion, matched in the table's order (the catalog's: the first matching pattern wins; a
    placeholder takes one or more characters). The W&B spellings a few families also accept are not in
    the table: runs recorded here never use them."""

    ROW = re.compile(r"^\| `(?P<pattern>[^`]+)` \| `(?P<name>runmon_\w+)` \| (?P<type>gauge|counter) \| "
                     r"(?:`(?P<label>\w+)`)? \| (?P<conversion>[^|]+) \|$")

    def __init__(self):
        result = run("catalog", "--prometheus")
        if result.returncode != 0:
            raise AssertionError(result.stderr)
        self.rows = []
        for line in result.stdout.splitlines():
            match = self.ROW.match(line)
            if not match:
                continue
            pattern = match.group("pattern")
            regex = re.sub(r"\\\{\w+\\\}", "(.+)", re.escape(pattern))
            conversion = match.group("conversion").strip()
            if conversion.startswith("x "):
                factor, divisor = float(conversion.split()[1]), 1.0
            elif conversion.startswith("/ "):
                factor, divisor = 1.0, float(conversion.split()[1])
            else:
                assert conversion == "as is", conversion
                factor, divisor = 1.0, 1.0
            self.rows.append((re.compile(regex, re.S), match.group("name"), match.group("type"),
                              match.group("label"), factor, divisor))
        assert len(self.rows) > 100, "the catalog table was not found in `runmon catalog --prometheus`"

    def series(self, key):
        """(name, {label: value}, convert) for a key, or None without a Prometheus name."""
        for regex, name, _type, label, factor, divisor in self.rows:
            match = regex.fullmatch(key)
            if match:
                labels = {label: match.group(1)} if label else {}

                def convert(value, factor=factor, divisor=divisor):
                    value = float(value)
                    if factor != 1:
                        value *= factor
                    if divisor != 1:
                        value /= divisor
                    return value
                return name, labels, convert
        return None

    def names(self):
        return [row[1] for row in self.rows]


def expected_series(log, catalog):
    """The log's values as Prometheus should hold them after a backfill: {(name, sorted labels): {ms: value}}
    from `runmon dump` (JSON lines), with the run's labels, and the run's end in milliseconds."""
    result = run("dump", log)
    if result.returncode != 0:
        raise AssertionError(result.stderr)
    records = [json.loads(line)["record"] for line in result.stdout.splitlines() if line.strip()]
    constant = {}
    for record in records:
        if "run" in record:
            constant["host"] = record["run"].get("host", "")
            constant["run_id"] = record["run"].get("run_id", "")
        job = record.get("environment", {}).get("job", {})
        for field in ("job_id", "node_rank"):
            if job.get(field):
                constant[field] = job[field]
    series = {}
    end = None
    for record in records:
        stats = record.get("stats")
        if not stats:
            continue
        ms = rfc3339_milliseconds(stats["timestamp"])
        for item in stats.get("item", []):
            found = catalog.series(item["key"])
            value = json.loads(item["value_json"])
            if found is None or isinstance(value, (str, bool)) or value is None:
                continue
            name, labels, convert = found
            labels = {**labels, **{k: v for k, v in constant.items() if v}}
            series.setdefault((name, tuple(sorted(labels.items()))), {})[ms] = convert(value)
            end = ms if end is None else max(end, ms)
    return series, end


def dump_openmetrics(log, path):
    """`runmon dump --format openmetrics LOG > PATH`; the result (its stdout is in the file)."""
    with open(path, "w") as out:
        result = subprocess.run([os.environ["RUNMON_BINARY"], "dump", "--format", "openmetrics", log],
                                stdout=out, stderr=subprocess.PIPE, text=True, timeout=60)
    return result


def create_blocks(openmetrics_file, blocks):
    result = subprocess.run([PROMTOOL, "tsdb", "create-blocks-from", "openmetrics", openmetrics_file, blocks],
                            capture_output=True, text=True, timeout=120)
    if result.returncode != 0:
        raise AssertionError(f"promtool tsdb create-blocks-from openmetrics {openmetrics_file}: "
                             f"{result.stdout}{result.stderr}")


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Prometheus:
    """A Prometheus server over the blocks in `storage`, on 127.0.0.1 and a free port, scraping nothing."""

    def __init__(self, storage, scratch):
        self.config = os.path.join(scratch, "prometheus.yml")
        with open(self.config, "w") as f:
            f.write("# no scrape jobs: the data is the backfill\n")
        self.log_path = os.path.join(scratch, "prometheus.log")
        self.process = None
        self.log = None
        for _attempt in range(5):  # another process can take the free port before Prometheus binds it
            self.port = free_port()
            self.log = open(self.log_path, "w")
            self.process = subprocess.Popen(
                [PROMETHEUS, f"--storage.tsdb.path={storage}", f"--web.listen-address=127.0.0.1:{self.port}",
                 f"--config.file={self.config}"], stdout=self.log, stderr=subprocess.STDOUT)
            if self._wait_ready():
                return
            self.stop()
        with open(self.log_path) as f:
            raise AssertionError(f"Prometheus did not start:\n{f.read()[-4000:]}")

    def _wait_ready(self):
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                return False
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/-/ready", timeout=2) as response:
                    if response.status == 200:
                        return True
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            time.sleep(0.1)
        return False

    def query(self, expr, at_ms):
        """An instant query at `at_ms`; the result list (raises on an error answer)."""
        data = urllib.parse.urlencode({"query": expr, "time": f"{at_ms / 1000:.3f}"}).encode()
        request = urllib.request.Request(f"http://127.0.0.1:{self.port}/api/v1/query", data=data)
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                answer = json.load(response)
        except urllib.error.HTTPError as error:
            answer = json.load(error)
        if answer.get("status") != "success":
            raise AssertionError(f"query {expr!r}: {answer}")
        return answer["data"]["result"]

    def stop(self):
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.log is not None:
            self.log.close()
            self.log = None
