#!/usr/bin/python3
"""run_sampler_bench.py - runmon's CPU time per sample against the psutil peer baseline, in one run.

For each scenario (a single process without the tree walk; process trees of 1, 11, 101 and 501 processes;
trees of 1 and 101 with 500 unrelated sleeping processes on the machine) and each pacing (back to back, a
sample every 0.1 s, every 1 s) it runs ../shared/bench/psutil_sampler.py and build/sampler_bench against
the same target pid with the same pacing and sample count, and prints both costs (getrusage user+sys per
sample, warm-up excluded), their ratio and the issue's target. It also reports the sampling processes'
RSS and the steady VmRSS (after ~3 s) of a real `runmon sample --json --interval 0.1 --pid X` process.

Targets (2-core machine): psutil/runmon >= 10 for trees of 11 and more, >= 4 for a single process (tree of
1 and no tree), in every mode; runmon's cost with 500 unrelated processes no more than 1.25x the cost
without; steady RSS of the sampling process <= 6 MB.

Usage: python3 bench/run_sampler_bench.py [--build build] [--peer PATH] [--quick] [--json FILE]
Stdlib only (the peer itself needs Debian's python3-psutil and runs with /usr/bin/python3).
Every process it starts runs in a session of its own and is killed on exit, Ctrl-C or SIGTERM.
"""
import argparse
import json
import math
import os
import signal
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The processes this script started (Popen objects whose session leaders own everything below them).
_started = []

# Forks a process tree of N processes (this one included) and sleeps: about half the descendants are
# direct children, the rest grandchildren (two levels of nesting). Each process pauses; nothing polls.
TREE_SCRIPT = r"""
import ctypes, os, signal, sys
libc = ctypes.CDLL(None, use_errno=True)
def die_with_parent():
    libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG: no orphans even if the driver is SIGKILLed
die_with_parent()
n = int(sys.argv[1])
direct = (n - 1 + 1) // 2
grand = (n - 1) - direct
def pause_forever():
    while True:
        signal.pause()
for j in range(direct):
    pid = os.fork()
    if pid == 0:
        die_with_parent()
        if j < grand and os.fork() == 0:
            die_with_parent()
            pause_forever()
        pause_forever()
pause_forever()
"""


def log(message):
    print(message, file=sys.stderr, flush=True)


def start_session(argv, **kwargs):
    """Starts argv as the leader of a new session (so killpg reaches every process it forks)."""
    proc = subprocess.Popen(argv, start_new_session=True, **kwargs)
    _started.append(proc)
    return proc


def stop_session(proc):
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pass
    if proc in _started:
        _started.remove(proc)


def stop_all():
    for proc in list(_started):
        stop_session(proc)


def tree_size(root):
    """The process and its descendants, from every thread's children list."""
    seen = {root}
    stack = [root]
    while stack:
        pid = stack.pop()
        try:
            tids = os.listdir("/proc/%d/task" % pid)
        except OSError:
            continue
        for tid in tids:
            try:
                with open("/proc/%d/task/%s/children" % (pid, tid)) as f:
                    kids = [int(x) for x in f.read().split()]
            except OSError:
                continue
            for kid in kids:
                if kid not in seen:
                    seen.add(kid)
                    stack.append(kid)
    return len(seen)


def start_tree(n, python):
    proc = start_session([python, "-c", TREE_SCRIPT, str(n)], stdin=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while tree_size(proc.pid) < n:
        if proc.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError("tree of %d did not come up (got %d)" % (n, tree_size(proc.pid)))
        time.sleep(0.05)
    time.sleep(0.3)  # let the last forks settle into pause()
    return proc


def run_json(argv, timeout):
    out = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=timeout,
                         start_new_session=True)
    if out.returncode != 0:
        raise RuntimeError("%s failed (%d): %s" % (" ".join(argv), out.returncode, out.stderr.strip()))
    return json.loads(out.stdout.strip().splitlines()[-1])


def measure_pair(args, pid, tree, interval, samples, concurrent):
    """Runs the peer and runmon's bench against the same pid and pacing; returns (peer, runmon) results.
    runmon runs twice: with the peer's key set (the comparison the targets are about) and with its full
    default set (what a user gets: host CPU, cgroup and self-cost keys on top); the second is stored
    under "all_keys" in the runmon result."""
    peer_result, mine_result = _measure_pair(args, pid, tree, interval, samples, concurrent, ["--peer-keys"])
    _, all_keys = _measure_pair(args, pid, tree, interval, samples, False, [], skip_peer=True)
    mine_result["all_keys"] = all_keys
    return peer_result, mine_result


def _measure_pair(args, pid, tree, interval, samples, concurrent, extra, skip_peer=False):
    peer = [args.python, args.peer, "--pid", str(pid), "--samples", str(samples)]
    mine = [args.bench, "--pid", str(pid), "--samples", str(samples)] + extra
    if tree:
        peer.append("--tree")
    else:
        mine.append("--no-tree")
    if interval:
        peer += ["--interval", str(interval)]
        mine += ["--interval", str(interval)]
    timeout = 120 + samples * (interval + 0.5)
    if skip_peer:
        return None, run_json(mine, timeout)
    if not concurrent:
        return run_json(peer, timeout), run_json(mine, timeout)
    # Paced runs mostly sleep: running both at once halves the wall time, but a sibling core that is busy
    # (psutil on big trees) moves the figures, so this is opt-in.
    procs = []
    for argv in (peer, mine):
        procs.append(subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                      start_new_session=True))
        _started.append(procs[-1])
    results = []
    for argv, proc in zip((peer, mine), procs):
        out, err = proc.communicate(timeout=timeout)
        _started.remove(proc)
        if proc.returncode != 0:
            raise RuntimeError("%s failed (%d): %s" % (" ".join(argv), proc.returncode, err.strip()))
        results.append(json.loads(out.strip().splitlines()[-1]))
    return results[0], results[1]


def median_pair(args, pid, tree, interval, samples, repeat, concurrent):
    runs = [measure_pair(args, pid, tree, interval, samples, concurrent) for _ in range(repeat)]
    if repeat == 1:
        return runs[0]
    peer = sorted((r[0] for r in runs), key=lambda r: r["cpu_us_per_sample"])[repeat // 2]
    mine = sorted((r[1] for r in runs), key=lambda r: r["cpu_us_per_sample"])[repeat // 2]
    mine["all_keys"] = sorted((r[1]["all_keys"] for r in runs), key=lambda r: r["cpu_us_per_sample"])[repeat // 2]
    return peer, mine


def vm_status(pid):
    out = {}
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith(("VmRSS:", "VmHWM:")):
                    key, value = line.split(":", 1)
                    out[key] = int(value.split()[0])
    except OSError:
        pass
    return out


def runmon_sample_rss(args, pid, seconds=3.0):
    """Steady VmRSS/VmHWM of a real `runmon sample --json --interval 0.1 --pid PID` after `seconds`."""
    proc = start_session([args.runmon, "sample", "--json", "--interval", "0.1", "--pid", str(pid)],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    time.sleep(seconds)
    status = vm_status(proc.pid) if proc.poll() is None else {}
    stop_session(proc)
    return status


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(REPO, "build"), help="build directory (Release)")
    ap.add_argument("--peer", default=os.path.join(REPO, "..", "shared", "bench", "psutil_sampler.py"))
    ap.add_argument("--python", default="/usr/bin/python3", help="interpreter for the peer (needs psutil)")
    ap.add_argument("--quick", action="store_true", help="fewer samples (a smoke run, about a minute)")
    ap.add_argument("--concurrent", action="store_true", help="in paced modes run peer and runmon at the "
                                                              "same time (faster, noisier)")
    ap.add_argument("--json", help="also write every raw result to this file")
    args = ap.parse_args()
    args.peer = os.path.abspath(args.peer)
    args.bench = os.path.join(os.path.abspath(args.build), "sampler_bench")
    args.runmon = os.path.join(os.path.abspath(args.build), "runmon")
    for path, hint in ((args.peer, "--peer"), (args.bench, "cmake --build build --target sampler_bench"),
                       (args.runmon, "cmake --build build --target runmon")):
        if not os.path.exists(path):
            sys.exit("run_sampler_bench: %s is missing (%s)" % (path, hint))

    # name, tree size, tree walk on, unrelated processes
    scenarios = [
        ("single process (no tree)", 1, False, 0),
        ("tree of 1", 1, True, 0),
        ("tree of 11", 11, True, 0),
        ("tree of 101", 101, True, 0),
        ("tree of 501", 501, True, 0),
        ("tree of 1 + 500 unrelated", 1, True, 500),
        ("tree of 101 + 500 unrelated", 101, True, 500),
    ]
    q = 0.25 if args.quick else 1.0
    # Back-to-back sample counts keep each psutil run near a second of CPU.
    b2b_samples = {1: 1000, 11: 500, 101: 150, 501: 40}
    modes = [  # label, interval, samples(tree size, unrelated), repeat
        ("back to back", 0.0, lambda n, u: max(20, int((b2b_samples[n] if not u else 150) * q)), 3),
        ("every 0.1 s", 0.1, lambda n, u: max(10, int(50 * q)), 1),
        ("every 1 s", 1.0, lambda n, u: max(3, int(8 * q)), 1),
    ]

    rows = []
    raw = []
    rss = {}
    started = time.monotonic()
    unrelated = None
    try:
        for name, n, tree, others in scenarios:
            if others and unrelated is None:
                log("starting %d unrelated processes" % others)
                unrelated = start_tree(others, args.python)
            if not others and unrelated is not None:
                stop_session(unrelated)
                unrelated = None
            target = start_tree(n, args.python)
            try:
                for label, interval, samples_of, repeat in modes:
                    samples = samples_of(n, others)
                    log("%-28s %-13s %4d samples ..." % (name, label, samples))
                    peer, mine = median_pair(args, target.pid, tree, interval, samples, repeat,
                                             concurrent=interval > 0 and args.concurrent)
                    ratio = peer["cpu_us_per_sample"] / max(mine["cpu_us_per_sample"], 0.1)
                    need = 10.0 if n >= 11 else 4.0
                    rows.append(dict(scenario=name, n=n, tree=tree, others=others, mode=label, samples=samples,
                                     peer=peer, runmon=mine, ratio=ratio, need=need))
                    raw.append(dict(scenario=name, mode=label, peer=peer, runmon=mine))
                if tree and n in (1, 501) or others:
                    rss[name] = runmon_sample_rss(args, target.pid)
            finally:
                stop_session(target)
    finally:
        stop_all()

    # The table.
    print()
    print("runmon vs psutil (%s): CPU time per sample, user+sys, warm-up excluded; %d cores"
          % (os.path.relpath(args.peer, REPO), os.cpu_count() or 0))
    print("'same keys': runmon gathering the peer's key set; 'all keys': runmon's full default set (adds "
          "cpu_percent, cgroup.*, runmon.*)")
    header = "%-28s %-13s %7s %6s %10s %10s %7s %7s %5s %10s %7s" % (
        "scenario", "pacing", "samples", "tree", "psutil us", "same keys", "ratio", "target", "ok", "all keys",
        "ratio")
    print(header)
    print("-" * len(header))
    failures = 0
    for r in rows:
        ok = r["ratio"] >= r["need"]
        failures += not ok
        full = r["runmon"]["all_keys"]["cpu_us_per_sample"]
        print("%-28s %-13s %7d %6.0f %10.1f %10.1f %6.1fx %6.0fx %5s %10.1f %6.1fx" % (
            r["scenario"], r["mode"], r["samples"], r["runmon"]["tree_size"], r["peer"]["cpu_us_per_sample"],
            r["runmon"]["cpu_us_per_sample"], r["ratio"], r["need"], "yes" if ok else "NO", full,
            r["peer"]["cpu_us_per_sample"] / max(full, 0.1)))

    print()
    print("cost with 500 unrelated processes / cost without (runmon; target <= 1.25x; psutil for reference)")
    by_key = {(r["n"], r["tree"], r["others"], r["mode"]): r for r in rows}
    for n in (1, 101):
        for label, _, _, _ in modes:
            base, loaded = by_key.get((n, True, 0, label)), by_key.get((n, True, 500, label))
            if not base or not loaded:
                continue
            growth = loaded["runmon"]["cpu_us_per_sample"] / max(base["runmon"]["cpu_us_per_sample"], 0.1)
            peer_growth = loaded["peer"]["cpu_us_per_sample"] / max(base["peer"]["cpu_us_per_sample"], 0.1)
            ok = growth <= 1.25
            failures += not ok
            print("  tree of %-4d %-13s runmon %5.2fx  psutil %5.2fx  %s" % (
                n, label, growth, peer_growth, "yes" if ok else "NO"))

    print()
    print("RSS of the sampling process, kB (target <= 6144; psutil's own for reference)")
    peer_rss = max(r["peer"]["rss_kb"] or 0 for r in rows)
    bench_rss = max(r["runmon"]["rss_kb"] for r in rows)
    bench_hwm = max(r["runmon"]["hwm_kb"] for r in rows)
    print("  psutil_sampler.py       VmRSS max %6d" % peer_rss)
    print("  sampler_bench           VmRSS max %6d   VmHWM max %6d" % (bench_rss, bench_hwm))
    for name, status in rss.items():
        value = status.get("VmRSS")
        ok = value is not None and value <= 6144
        failures += not ok
        print("  runmon sample --interval 0.1, %-28s VmRSS after 3 s %6s   VmHWM %6s  %s" % (
            name + ":", value, status.get("VmHWM"), "yes" if ok else "NO"))
    print()
    print("%d target(s) missed; total run time %.0f s" % (failures, time.monotonic() - started))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(rows=raw, rss=rss), f, indent=1)
    return 1 if failures else 0


def _terminate(signum, frame):
    raise KeyboardInterrupt


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, _terminate)
    signal.signal(signal.SIGHUP, _terminate)
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        stop_all()
        sys.exit(130)
