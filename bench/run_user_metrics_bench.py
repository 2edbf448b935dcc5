#!/usr/bin/env python3
"""The cost of the training script's own metrics (python/runmon.py into `runmon run`'s channel), as the
issue asks it: a `runmon.log()` call from Python (target: at most 5 us) and runmon taking 100,000 lines a
second (target: at most 10 % of one core).

1. Flat out: a script logs 100,000 rows of two keys with a step as fast as it can, timing its own loop
   (Python's start and runmon's are not counted). Side by side, in the same run of this bench: the same loop
   outside `runmon run` (the module's no-op), and json.dumps of the same rows alone (what encoding a line
   costs anyway: the floor under any line protocol in Python). Medians of --runs.
2. Paced: the script logs 100,000 rows a second for --seconds seconds; runmon's own CPU (its rusage less
   the script's) over the run's time, as % of one core, against the same run of a script that logs nothing
   for as long (runmon's sampling at the same interval): the difference is what the lines cost.

Prints readable lines and the figures as one JSON object on stdout's last line."""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PYTHON_DIR = os.path.join(ROOT, "python")

WORKLOAD = r"""
import json, os, sys, time
sys.path.insert(0, sys.argv[1])
import runmon
mode, count, rate = sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
rows = [{"loss": 1.0 / (i + 1), "lr": 3e-4} for i in range(1000)]
start = time.perf_counter()
if mode == "json":
    for i in range(count):
        json.dumps(rows[i % 1000], separators=(",", ":"))
elif mode == "idle":
    time.sleep(count / rate)
elif rate == 0:
    for i in range(count):
        runmon.log(rows[i % 1000], step=i)
else:
    for i in range(count):
        if i % 100 == 0:
            ahead = start + i / rate - time.perf_counter()
            if ahead > 0:
                time.sleep(ahead)
        runmon.log(rows[i % 1000], step=i)
elapsed = time.perf_counter() - start
flushed = runmon.flush(60) if mode == "log" else True
times = os.times()
print(f"elapsed {elapsed:.6f} cpu {times.user + times.system:.6f} dropped {runmon.dropped()} flushed {flushed}",
      file=sys.stderr, flush=True)
"""


def run_workload(runmon, mode, count, rate, under_runmon, directory):
    script = [sys.executable, "-c", WORKLOAD, PYTHON_DIR, mode, str(count), str(rate)]
    env = {k: v for k, v in os.environ.items() if k != "RUNMON_RUN_SOCKET"}
    command = [runmon, "run", "--dir", directory, "--console", "off", "--"] + script if under_runmon else script
    started = time.monotonic()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.monotonic() - started
    stderr = process.stderr.read()
    reports = [line for line in stderr.splitlines() if line.startswith("elapsed")]
    if os.waitstatus_to_exitcode(status) != 0 or not reports:
        sys.exit(f"{command[0]} failed: {stderr[-2000:]}")
    words = reports[-1].split()
    fields = dict(zip(words[0::2], words[1::2]))
    own_cpu = usage.ru_utime + usage.ru_stime
    return {"elapsed": float(fields["elapsed"]), "script_cpu": float(fields["cpu"]),
            "dropped": int(fields["dropped"]), "flushed": fields["flushed"] == "True",
            "runmon_cpu": own_cpu - float(fields["cpu"]) if under_runmon else 0.0, "wall": wall,
            "rows": rows_taken(stderr) if under_runmon else 0}


def rows_taken(stderr):
    for line in stderr.splitlines():
        if "the command's metrics:" in line:
            return int(line.split("the command's metrics: ")[1].split()[0])
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--rows", type=int, default=100000)
    parser.add_argument("--seconds", type=float, default=5.0)
    args = parser.parse_args()
    runmon = os.path.join(args.build, "runmon")
    figures = {}
    with tempfile.TemporaryDirectory(prefix="rmumb") as directory:
        per_call = {"runmon": [], "noop": [], "json": []}
        for _ in range(args.runs):
            logged = run_workload(runmon, "log", args.rows, 0, True, directory)
            if logged["dropped"] or not logged["flushed"] or logged["rows"] != args.rows:
                sys.exit(f"lines were lost: {logged}")
            per_call["runmon"].append(logged["elapsed"] / args.rows * 1e6)
            per_call["noop"].append(run_workload(runmon, "log", args.rows, 0, False, directory)["elapsed"]
                                    / args.rows * 1e6)
            per_call["json"].append(run_workload(runmon, "json", args.rows, 0, False, directory)["elapsed"]
                                    / args.rows * 1e6)
        for name, values in per_call.items():
            figures[f"per_call_us_{name}"] = round(statistics.median(values), 3)
        print(f"runmon.log() per call, flat out, {args.rows} rows, median of {args.runs}: "
              f"{figures['per_call_us_runmon']:.2f} us under runmon run (target 5 us); "
              f"{figures['per_call_us_noop']:.2f} us outside it (no-op); "
              f"json.dumps of the row alone {figures['per_call_us_json']:.2f} us "
              f"(ratio to it {figures['per_call_us_runmon'] / figures['per_call_us_json']:.2f})", file=sys.stderr)

        count = int(100000 * args.seconds)
        paced, idle = [], []
        for _ in range(args.runs):
            logged = run_workload(runmon, "log", count, 100000, True, directory)
            if logged["dropped"] or logged["rows"] != count:
                sys.exit(f"lines were lost: {logged}")
            paced.append(logged)
            idle.append(run_workload(runmon, "idle", count, 100000, True, directory))
        paced_cpu = statistics.median(r["runmon_cpu"] / r["wall"] * 100 for r in paced)
        idle_cpu = statistics.median(r["runmon_cpu"] / r["wall"] * 100 for r in idle)
        rate = statistics.median(count / r["elapsed"] for r in paced)
        figures.update({"paced_rate_lines_per_s": round(rate), "runmon_cpu_percent_paced": round(paced_cpu, 2),
                        "runmon_cpu_percent_idle": round(idle_cpu, 2),
                        "runmon_cpu_percent_for_lines": round(paced_cpu - idle_cpu, 2)})
        print(f"100,000 lines a second for {args.seconds:g} s ({rate:,.0f} reached), median of {args.runs}: "
              f"runmon {paced_cpu:.2f} % of one core, {idle_cpu:.2f} % for the same run logging nothing, so "
              f"{paced_cpu - idle_cpu:.2f} % for the lines (target 10 %)", file=sys.stderr)
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
