#!/usr/bin/env python3
"""What one neuron-monitor document costs to turn into trn.* keys: W&B's way beside runmon's, on the same
document, tests/fixtures/neuron_monitor/neuron_monitor_trn1.32xlarge.json (synthetic, 122 KB: 16 devices,
32 NeuronCores, 128 vCPUs, 32 runtimes; see its README).

The peer is W&B's legacy Python collector as metrics.md B §8 describes it, written out here: json.loads of
the line, the first runtime whose pid is the monitored process (here the first runtime's, as a torchrun
rank-0 job would have; with LOCAL_RANK set W&B takes the first entry, the same one), its per-core
utilisation, memory totals, host breakdown and per-core breakdown, flattened into trn.* keys. It is timed
with time.perf_counter over --iterations documents, best of --repeats, and printed as µs per document, with
json.loads alone beside it. runmon's side is the build's trainium_bench (build/trainium_bench: the trainium
family's parse of the same document and the trn.* keys of every runtime, CPU time per document by
getrusage), run on the same file when --bench-binary names it; the script then prints the ratio. Neither side reads the tool's pipe: this
is the CPU of the parse and the keying, the part that grows with the instance.

Usage: bench/run_trainium_bench.py [--iterations 500] [--repeats 5] [--bench-binary build/trainium_bench]"""
import argparse
import json
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
DOCUMENT = os.path.join(HERE, "..", "tests", "fixtures", "neuron_monitor", "neuron_monitor_trn1.32xlarge.json")
RUNMON_FIGURE = re.compile(r"^runmon parse\+emit: ([0-9.]+) us/document$", re.MULTILINE)
RUNMON_KEYS = re.compile(r"^document: .* (\d+) keys$", re.MULTILINE)


def wandb_legacy_keys(line, pid):
    """W&B's legacy extraction (metrics.md B §8) of one document: {} when no runtime is the process's."""
    document = json.loads(line)
    matching = [entry["report"] for entry in document["neuron_runtime_data"] if int(entry["pid"]) == pid]
    if not matching:
        return {}
    report = matching[0]
    used = report["memory_used"]["neuron_runtime_used_bytes"]
    breakdown = used["usage_breakdown"]
    keys = {f"trn.{int(core)}.neuroncore_utilization": counters["neuroncore_utilization"]
            for core, counters in report["neuroncore_counters"]["neuroncores_in_use"].items()}
    keys["trn.host_total_memory_usage"] = used["host"]
    keys["trn.neuron_device_total_memory_usage"] = used["neuron_device"]
    for field, value in breakdown["host"].items():
        keys[f"trn.host_memory_usage.{field}"] = value
    for core, usage in breakdown["neuroncore_memory_usage"].items():
        for field, value in usage.items():
            keys[f"trn.{int(core)}.neuroncore_memory_usage.{field}"] = value
    return keys


def microseconds_per_call(function, iterations, repeats):
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(iterations):
            function()
        best = min(best, (time.perf_counter() - start) / iterations)
    return best * 1e6


def runmon_microseconds(binary, iterations):
    """trainium_bench's CPU per document on DOCUMENT, in µs, and the keys it emitted."""
    result = subprocess.run([binary, DOCUMENT, str(iterations)], capture_output=True, text=True, check=False)
    figure, keys = RUNMON_FIGURE.search(result.stdout), RUNMON_KEYS.search(result.stdout)
    if result.returncode != 0 or not figure or not keys:
        sys.exit(f"run_trainium_bench: {binary} (status {result.returncode}) printed no figure: "
                 f"{result.stdout[-300:]} {result.stderr[-300:]}")
    print(result.stdout.strip())
    return float(figure.group(1)), int(keys.group(1))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--iterations", type=int, default=500)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--bench-binary", help="runmon's trainium_bench (build/trainium_bench)")
    parser.add_argument("--bench-iterations", type=int, default=2000, help="trainium_bench's iterations")
    args = parser.parse_args()
    if min(args.iterations, args.repeats, args.bench_iterations) < 1:
        parser.error("--iterations, --repeats and --bench-iterations must be 1 or more")
    with open(DOCUMENT, encoding="utf-8") as f:
        line = f.read()
    pid = json.loads(line)["neuron_runtime_data"][0]["pid"]
    keys = wandb_legacy_keys(line, pid)
    if not keys:
        sys.exit(f"run_trainium_bench: no runtime of pid {pid} in {DOCUMENT}")
    loads_us = microseconds_per_call(lambda: json.loads(line), args.iterations, args.repeats)
    peer_us = microseconds_per_call(lambda: wandb_legacy_keys(line, pid), args.iterations, args.repeats)
    print(f"document: {os.path.basename(DOCUMENT)}, {len(line):,} bytes, "
          f"{len(json.loads(line)['neuron_runtime_data'])} runtimes")
    print(f"Python {sys.version.split()[0]} json.loads: {loads_us:.1f} us per document")
    print(f"W&B legacy extraction (json.loads + {len(keys)} trn.* keys of one runtime): {peer_us:.1f} us per document "
          f"(best of {args.repeats} x {args.iterations})")
    if args.bench_binary:
        runmon_us, runmon_keys = runmon_microseconds(args.bench_binary, args.bench_iterations)
        print(f"ratio: the W&B peer costs {peer_us / runmon_us:.1f}x runmon's CPU per document "
              f"(json.loads alone {loads_us / runmon_us:.1f}x), runmon emitting {runmon_keys} keys "
              f"(every runtime's), the peer {len(keys)} (one runtime's)")


if __name__ == "__main__":
    main()
