"""Shared helpers for the end-to-end tests: where the runmon binary is, and how to run it."""
import json
import os
import subprocess
import tempfile

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


def leet_frame(path, size, rows=9, columns=5):
    """`runmon leet PATH --print-frame SIZE` with a settings file asking for a ROWSxCOLUMNS grid, so a run's
    system charts fit one page (the centre shows them when the run logged no metrics, in catalog order)."""
    with tempfile.TemporaryDirectory(prefix="rmframe") as directory:
        config = os.path.join(directory, "leet.json")
        with open(config, "w") as f:
            json.dump({"metrics_grid": {"rows": rows, "cols": columns}}, f)
        return run("leet", path, "--config", config, "--print-frame", size)


def samples(stdout):
    return [json.loads(line) for line in stdout.splitlines() if line.strip()]
