#!/usr/bin/python3
"""update-symbol-order.py - writes src/app/runmon.symbol-order: the functions runmon's main job executes.

The lean build (RUNMON_LEAN_RUNTIME, top-level CMakeLists.txt) gives every function a section of its own and
has lld lay out the functions listed in that file next to each other. A page of code a process touches maps
its neighbours with it (the kernel's fault-around, 64 KiB), so code that `runmon run` and `runmon sample`
execute, packed together, keeps them small in memory; code they never reach (the run-log reader, the
dashboard's API, the TUI's layout) stays on pages they never touch.

The list is a profile: valgrind's callgrind runs, on the build given,
  runmon run --interval 0.1 -- sleep 3       (the main job: start, samples, run log, the child's exit)
  runmon sample --interval 0.1 --json        (3 s, then SIGTERM: the sampler alone)
and every function of the runmon executable that either executes is listed, sorted by name so that a
change of the code changes the list only where it changed. A function the list does not name is laid out
after the listed ones (lld ignores names it does not find), so a stale list costs memory, never
correctness: run this again when bench/run_footprint_bench.py shows `run` or `sample` growing.

One list serves builds by either compiler: given several --build directories (a gcc build, as demo.sh
makes, and a clang one), it lists the union of what each executes (gcc and clang inline differently, so
each executes functions the other does not have); each build's link finds its own names and ignores the
others'.

Usage: python3 scripts/update-symbol-order.py [--build build] [--build build-clang ...]   (Release builds
with the lean runtime; needs Debian's valgrind). Stdlib only.
"""
import argparse
import os
import re
import signal
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ORDER_FILE = os.path.join(REPO, "src", "app", "runmon.symbol-order")
HEADER = """\
# The functions `runmon run` and `runmon sample` execute, laid out together by lld in the lean build
# (top-level CMakeLists.txt). Written by scripts/update-symbol-order.py from a profile of both, in a gcc and
# a clang build (the union of their names); rerun it when bench/run_footprint_bench.py shows them growing.
# Names a build does not have are ignored.
"""


def profile(runmon, argv, workdir, seconds=None):
    """Runs runmon under callgrind; returns the path of its output."""
    out = os.path.join(workdir, "callgrind.%d.out" % len(os.listdir(workdir)))
    command = ["valgrind", "--tool=callgrind", "--demangle=no", "--callgrind-out-file=" + out, runmon] + argv
    proc = subprocess.Popen(command, cwd=workdir, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, start_new_session=True)
    try:
        _, stderr = proc.communicate(timeout=seconds)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGTERM)  # runmon stops as on Ctrl-C; callgrind writes its output
        _, stderr = proc.communicate(timeout=120)
    if not os.path.exists(out):
        raise SystemExit("update-symbol-order: callgrind wrote nothing for %s:\n%s" %
                         (" ".join(argv), stderr.decode(errors="replace")[-2000:]))
    return out


def executed_functions(callgrind_out, executable):
    """The names callgrind attributed cost to in `executable` (fn= lines while ob= is the executable)."""
    objects, functions, executed = {}, {}, set()
    current_object = None
    name_line = re.compile(r"^(ob|cob|fn|cfn|fl|fi|fe|cfi|cfl)=\((\d+)\)(?: (.*))?$")
    with open(callgrind_out, errors="replace") as text:
        for line in text:
            match = name_line.match(line.rstrip("\n"))
            if not match:
                continue
            kind, number, name = match.groups()
            if kind in ("ob", "cob"):
                if name:
                    objects[number] = name
                if kind == "ob":
                    current_object = objects.get(number)
            elif kind in ("fn", "cfn"):
                if name:
                    functions[number] = name
                if kind == "fn" and current_object == executable and number in functions:
                    executed.add(functions[number])
    return executed


def defined_functions(executable):
    listing = subprocess.run(["nm", "--defined-only", executable], check=True, capture_output=True,
                             text=True).stdout
    names = set()
    for line in listing.splitlines():
        fields = line.split()
        if len(fields) == 3 and fields[1] in "tTwW":
            names.add(fields[2])
    return names


def functions_a_run_executes(build):
    """The functions of build/runmon that `runmon run` and `runmon sample` execute."""
    runmon = os.path.realpath(os.path.join(build, "runmon"))
    cache = open(os.path.join(build, "CMakeCache.txt")).read()
    if "RUNMON_LEAN_RUNTIME:BOOL=ON" not in cache:
        raise SystemExit("update-symbol-order: %s is not a lean build (RUNMON_LEAN_RUNTIME=ON)" % build)
    with tempfile.TemporaryDirectory(prefix="runmon-symbol-order-") as workdir:
        outputs = [
            profile(runmon, ["run", "--dir", workdir, "--interval", "0.1", "--", "sleep", "3"], workdir),
            profile(runmon, ["sample", "--interval", "0.1", "--json"], workdir, seconds=3),
        ]
        executed = set()
        for out in outputs:
            executed |= executed_functions(out, runmon)
    return executed & defined_functions(runmon)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", action="append",
                        help="a lean Release build directory (repeatable; default: build)")
    args = parser.parse_args()
    listed = set()
    for build in args.build or [os.path.join(REPO, "build")]:
        listed |= functions_a_run_executes(build)
    listed = sorted(listed)
    with open(ORDER_FILE, "w") as order:
        order.write(HEADER)
        order.write("\n".join(listed) + "\n")
    print("update-symbol-order: %d functions in %s" % (len(listed), os.path.relpath(ORDER_FILE, REPO)))


if __name__ == "__main__":
    sys.exit(main())
