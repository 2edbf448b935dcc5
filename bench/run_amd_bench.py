#!/usr/bin/env python3
"""What one AMD sample costs: runmon's amd collector (bench/amd_bench, every card's sysfs and hwmon files
read, parsed and keyed) beside W&B's way, one `rocm-smi -a --json` (Debian's rocm-smi, ROCm 5.2), both on the
same host: the fake tree tests/fixtures/hosts/amd-gpus, which the real rocm-smi reads in a private mount
namespace with the tree over /sys (as tests/e2e/amd_rocm_smi_test.py proves). The tree's card without hwmon
is left out of this copy: rocm-smi 5.2 aborts on such a card (docs/amd.md), and both must read the same
cards. Needs root (unshare --mount) and a Release build.

Usage: bench/run_amd_bench.py [--build build] [--calls 10] [--ticks 20000]"""
import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "e2e"))
os.environ.setdefault("RUNMON_BINARY", os.path.join(ROOT, "build", "runmon"))  # the test module wants one
from amd_rocm_smi_test import private_mounts_refused, private_sys_command  # noqa: E402

FIXTURE = os.path.join(ROOT, "tests", "fixtures", "hosts", "amd-gpus")


def children_cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--calls", type=int, default=10)
    parser.add_argument("--ticks", type=int, default=20000)
    args = parser.parse_args()
    refused = private_mounts_refused()
    if refused or shutil.which("rocm-smi") is None:
        sys.exit(f"run_amd_bench: {refused or 'rocm-smi is not installed (apt-get install rocm-smi)'}")
    with tempfile.TemporaryDirectory() as tmp:
        tree = os.path.join(tmp, "tree")
        shutil.copytree(FIXTURE, tree, symlinks=True, ignore=shutil.ignore_patterns("t1"))
        os.unlink(os.path.join(tree, "sys", "class", "drm", "card3"))
        bench = subprocess.run([os.path.join(args.build, "amd_bench"), tree, str(args.ticks)],
                               capture_output=True, text=True, check=True)
        print(bench.stdout.strip())
        shared = subprocess.run([os.path.join(args.build, "amd_bench"), tree, str(args.ticks), "5000"],
                                capture_output=True, text=True, check=True)
        print(shared.stdout.strip())
        per_card_us = float(bench.stdout.split(" us CPU per card")[0].rsplit(" ", 1)[1])  # the sysfs sample
        cards = int(bench.stdout.split("(")[1].split(" cards")[0])
        command = private_sys_command(tree, ["rocm-smi", "-a", "--json"])
        first = subprocess.run(command, capture_output=True, text=True, timeout=120)
        if '"card' not in first.stdout:
            sys.exit(f"run_amd_bench: rocm-smi did not read the tree: {first.stdout[:300]} {first.stderr[:300]}")
        cpu, wall = children_cpu(), time.monotonic()
        for _ in range(args.calls):
            subprocess.run(command, capture_output=True, timeout=120, check=False)
        tool_cpu = (children_cpu() - cpu) / args.calls
        tool_wall = (time.monotonic() - wall) / args.calls
        print(f"rocm-smi -a --json on the same {cards} cards: {tool_wall * 1e3:.0f} ms wall, {tool_cpu * 1e3:.0f} ms CPU "
              f"per call ({args.calls} calls, the namespace set-up included)")
        print(f"ratio: rocm-smi costs {tool_cpu * 1e6 / (per_card_us * cards):,.0f}x runmon's CPU per sample "
              f"({per_card_us:.1f} us per card, the issue's bound 100 us)")


if __name__ == "__main__":
    main()
