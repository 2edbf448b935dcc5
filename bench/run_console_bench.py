#!/usr/bin/env python3
"""The cost of `runmon run`'s console capture to a command that floods its stdout: the command writes
100 MiB of 100-byte lines as fast as it can and reports how long its writes took (its own clock, so the
start of Python and of runmon do not count) and its own CPU time. It runs alone and under `runmon run`,
alternately, with its stdout (runmon's, under runmon) going to
  - a pipe read by `cat > /dev/null` (a batch job's log collector), and
  - a pseudo-terminal drained by this script (the fastest terminal there is: runmon gives the command a
    pseudo-terminal of its own and passes everything on to this one), and
  - a tmux pane (a real terminal emulator, which reads and draws every byte).
Prints the median runtime of each, the ratio (the issue's target: within 5 %), runmon's own CPU time for
the 100 MiB (its rusage less the command's), and how much of the flood the run log recorded (runmon drops
what its recorder cannot keep up with, and says how much)."""
import argparse
import os
import pty
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading

WORKLOAD = r"""
import os, sys, time
chunk = (b"y" * 99 + b"\n") * 10486
out = sys.stdout.buffer
start = time.perf_counter()
for _ in range(100):
    out.write(chunk)
out.flush()
elapsed = time.perf_counter() - start
times = os.times()
print(f"elapsed {elapsed:.6f} cpu {times.user + times.system:.6f}", file=sys.stderr, flush=True)
"""
FLOOD_BYTES = 100 * 10486 * 100


def drain(fd, total):
    def run():
        while True:
            try:
                data = os.read(fd, 1 << 20)
            except OSError:
                return
            if not data:
                return
            total[0] += len(data)
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def measure_in_tmux(command, directory):
    """Runs `command` in a 160x48 tmux pane of a private server; returns its stderr (a file)."""
    os.makedirs(directory, exist_ok=True)
    socket = f"runmon-console-bench-{os.getpid()}"
    errors = os.path.join(directory, "stderr")
    line = " ".join(shlex.quote(part) for part in command)
    tmux = ["tmux", "-L", socket, "-f", "/dev/null"]
    subprocess.run([*tmux, "new-session", "-d", "-x", "160", "-y", "48",
                    f"{line} 2>{shlex.quote(errors)}; tmux -L {socket} wait-for -S done"], check=True)
    subprocess.run([*tmux, "wait-for", "done"], check=True, timeout=600)
    subprocess.run([*tmux, "kill-server"], capture_output=True)
    with open(errors) as f:
        return f.read()


def measure(command, sink, directory=None):
    """Runs `command` with its stdout on `sink` ("pipe" or "terminal"); returns (elapsed, command CPU,
    runmon CPU or None, stderr)."""
    usage = None
    if sink == "tmux":
        stderr = measure_in_tmux(command, directory)
        match = re.search(r"elapsed ([0-9.]+) cpu ([0-9.]+)", stderr)
        if not match:
            sys.exit(f"{command[0]} failed in tmux: {stderr[-2000:]}")
        return float(match.group(1)), float(match.group(2)), None, stderr
    if sink == "pipe":
        cat = subprocess.Popen(["cat"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL)
        process = subprocess.Popen(command, stdout=cat.stdin, stderr=subprocess.PIPE)
        cat.stdin.close()
        stderr = process.stderr.read().decode(errors="replace")
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
        cat.wait()
    else:
        master, slave = pty.openpty()
        total = [0]
        thread = drain(master, total)
        process = subprocess.Popen(command, stdout=slave, stderr=subprocess.PIPE)
        os.close(slave)
        stderr = process.stderr.read().decode(errors="replace")
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
        thread.join(timeout=30)
        os.close(master)
    match = re.search(r"elapsed ([0-9.]+) cpu ([0-9.]+)", stderr)
    if process.returncode != 0 or not match:
        sys.exit(f"{command[0]} failed ({process.returncode}): {stderr[-2000:]}")
    elapsed, command_cpu = float(match.group(1)), float(match.group(2))
    runmon_cpu = None
    if os.path.basename(command[0]) == "runmon":
        runmon_cpu = usage.ru_utime + usage.ru_stime - command_cpu
    return elapsed, command_cpu, runmon_cpu, stderr


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", default="build")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    runmon = os.path.join(args.build, "runmon")
    with tempfile.TemporaryDirectory(prefix="runmon-console-bench") as tmp:
        alone = [sys.executable, "-c", WORKLOAD]
        sinks = ["pipe", "terminal"] + (["tmux"] if shutil.which("tmux") else [])
        for sink in sinks:
            results = {"alone": [], "runmon": []}
            runmon_cpu = []
            recorded = []
            for i in range(args.runs):
                directory = os.path.join(tmp, f"{sink}-{i}")
                results["alone"].append(measure(alone, sink, directory + "-alone")[0])
                elapsed, _, cpu, stderr = measure(
                    [os.path.abspath(runmon), "run", "--interval", "1s", "--dir", directory, "--", *alone], sink,
                    directory + "-runmon")
                results["runmon"].append(elapsed)
                runmon_cpu.append(cpu)
                dropped = re.search(r"(\d+) of (\d+) bytes the command wrote to stdout were not recorded", stderr)
                recorded.append(1 - int(dropped.group(1)) / int(dropped.group(2)) if dropped else 1.0)
            alone_median = statistics.median(results["alone"])
            runmon_median = statistics.median(results["runmon"])
            cpu_known = [c for c in runmon_cpu if c is not None]
            cpu_text = f"{statistics.median(cpu_known) * 1000:6.0f} ms" if cpu_known else "     ?   "
            print(f"{sink:9s} alone {alone_median * 1000:7.1f} ms  under runmon {runmon_median * 1000:7.1f} ms  "
                  f"ratio {runmon_median / alone_median:.3f} (target <= 1.05)  "
                  f"runmon CPU {cpu_text} per 100 MiB  "
                  f"recorded {statistics.median(recorded) * 100:5.1f} % "
                  f"(min {min(results['runmon']) * 1000:.1f}, max {max(results['runmon']) * 1000:.1f} ms)")


if __name__ == "__main__":
    main()
