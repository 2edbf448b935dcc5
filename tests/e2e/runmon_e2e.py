"""Shared helpers for the end-to-end tests: where the runmon binary is, and how to run it."""
import json
import os
import subprocess

RUNMON = os.environ["RUNMON_BINARY"]


def run(*args, env=None, timeout=60, check=False):
    merged = dict(os.environ)
    # Settings from the calling environment must not leak into the tests.
    for name in list(merged):
        if name.startswith("WANDB_"):
            del merged[name]
    if env:
        merged.update(env)
    return subprocess.run([RUNMON, *args], capture_output=True, text=True, env=merged, timeout=timeout,
                          check=check)


def samples(stdout):
    return [json.loads(line) for line in stdout.splitlines() if line.strip()]
