#!/usr/bin/env python3
"""How fast a remote-write backlog drains: a run of one hour at 0.1 s (36,000 samples of 100 series, 3.6
million values; written here as a run log) is pushed with `runmon push RUN_DIR --remote-write URL` into
Debian's Prometheus (started here with its remote-write receiver on a free loopback port and an empty data
directory), timed on the wall clock (target: 10 s) with runmon's CPU, and checked: Prometheus must then hold
every value. Side by side, the tool it replaces for old runs: `runmon dump --format openmetrics` of the same
run into `promtool tsdb create-blocks-from openmetrics`, Prometheus' own backfill, timed the same way.

The 100 keys are real catalog keys, so every value has a Prometheus name: the host's own from `runmon sample
--once --json`, then NVIDIA GPU keys for GPUs 0-7 (`runmon catalog`) until there are 100.

Usage: bench/run_remote_write_bench.py --runmon build/runmon [--seconds 3600] [--interval 0.1] [--series 100]"""
import argparse
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "e2e"))
import runlog_writer  # noqa: E402

PROMETHEUS = "/usr/bin/prometheus"
PROMTOOL = "/usr/bin/promtool"


def keys_for(runmon, count):
    sample = json.loads(subprocess.run([runmon, "sample", "--once", "--json"], capture_output=True, text=True,
                                       check=True).stdout.splitlines()[0])
    keys = [k for k in sample if not k.startswith("_")]
    catalog = subprocess.run([runmon, "catalog"], capture_output=True, text=True, check=True).stdout
    gpu_patterns = [line.split()[0] for line in catalog.splitlines()
                    if re.match(r"gpu\.\{[a-z]+\}\.[A-Za-z_]+$", line.split()[0] if line.split() else "")]
    for gpu in range(8):
        for pattern in gpu_patterns:
            if len(keys) >= count:
                break
            keys.append(re.sub(r"\{[a-z]+\}", str(gpu), pattern, count=1))
    return keys[:count]


def timed(args, **kwargs):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    result = subprocess.run(args, **kwargs)
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return result, wall, cpu


def free_port():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def query(port, expression, at):
    url = f"http://127.0.0.1:{port}/api/v1/query?" + urllib.parse.urlencode({"query": expression, "time": at})
    with urllib.request.urlopen(url, timeout=60) as response:
        return json.loads(response.read())["data"]["result"]


def stored_count(port, run_id, window, at):
    """The values Prometheus holds for the run: count_over_time one metric name at a time (over all names at
    once the results, which lose their names, would collide)."""
    url = f"http://127.0.0.1:{port}/api/v1/label/__name__/values?" + urllib.parse.urlencode(
        {"match[]": f'{{run_id="{run_id}"}}'})
    with urllib.request.urlopen(url, timeout=60) as response:
        names = json.loads(response.read())["data"]
    total = 0
    for name in names:
        for result in query(port, f'count_over_time({name}{{run_id="{run_id}"}}[{window}s])', at):
            total += int(float(result["value"][1]))
    return total


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runmon", required=True)
    parser.add_argument("--seconds", type=float, default=3600)
    parser.add_argument("--interval", type=float, default=0.1)
    parser.add_argument("--series", type=int, default=100)
    args = parser.parse_args()
    runmon = os.path.abspath(args.runmon)
    keys = keys_for(runmon, args.series)
    samples = int(args.seconds / args.interval)
    with tempfile.TemporaryDirectory() as tmp:
        start_time = time.time() - args.seconds
        run_id = "backlog1"
        records = [runlog_writer.header_record("runmon bench"),
                   runlog_writer.run_record(run_id, "backlog", start_time)]
        for i in range(samples):
            items = {key: str((i + n) % 97) for n, key in enumerate(keys)}
            records.append(runlog_writer.stats_record(start_time + i * args.interval, items))
        log = runlog_writer.write_run(os.path.join(tmp, "wandb"), "20260101_000000", run_id, records)
        run_dir = os.path.dirname(log)
        values = samples * len(keys)
        print(f"backlog: {samples} samples x {len(keys)} series = {values} values, log {os.path.getsize(log)} bytes")

        port = free_port()
        with open(os.path.join(tmp, "prometheus.yml"), "w") as f:
            f.write("global:\n  scrape_interval: 1m\n")
        prometheus = subprocess.Popen([PROMETHEUS, f"--config.file={tmp}/prometheus.yml",
                                       f"--storage.tsdb.path={tmp}/tsdb", f"--web.listen-address=127.0.0.1:{port}",
                                       "--web.enable-remote-write-receiver"],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            for _ in range(600):
                try:
                    urllib.request.urlopen(f"http://127.0.0.1:{port}/-/ready", timeout=1)
                    break
                except OSError:
                    time.sleep(0.1)
            pushed, wall, cpu = timed([runmon, "push", run_dir, "--remote-write",
                                       f"http://127.0.0.1:{port}/api/v1/write"], capture_output=True, text=True)
            if pushed.returncode != 0:
                sys.exit(f"push failed: {pushed.stderr}")
            stored_values = stored_count(port, run_id, int(args.seconds) + 600, start_time + args.seconds + 1)
        finally:
            prometheus.terminate()
            prometheus.wait(timeout=60)
        if stored_values != values:
            sys.exit(f"Prometheus holds {stored_values} values of {values}")
        print(f"runmon push: {wall:.2f} s wall, {cpu:.2f} s CPU, {values / wall:,.0f} values/s "
              f"({samples / wall:,.0f} samples/s); Prometheus holds all {stored_values}")

        openmetrics = os.path.join(tmp, "run.om")
        with open(openmetrics, "w") as out:
            dumped, dump_wall, dump_cpu = timed([runmon, "dump", "--format", "openmetrics", run_dir], stdout=out)
        if dumped.returncode != 0:
            sys.exit("dump failed")
        backfilled, backfill_wall, backfill_cpu = timed(
            [PROMTOOL, "tsdb", "create-blocks-from", "openmetrics", openmetrics, os.path.join(tmp, "blocks")],
            capture_output=True, text=True)
        if backfilled.returncode != 0:
            sys.exit(f"promtool failed: {backfilled.stderr[-2000:]}")
        total_wall = dump_wall + backfill_wall
        print(f"dump --format openmetrics + promtool tsdb create-blocks-from: {total_wall:.2f} s wall "
              f"({dump_wall:.2f} + {backfill_wall:.2f}), {dump_cpu + backfill_cpu:.2f} s CPU")
        print(f"ratio: promtool backfill / runmon push = {total_wall / wall:.2f}x wall")


if __name__ == "__main__":
    main()
