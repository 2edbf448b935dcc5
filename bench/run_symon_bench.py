#!/usr/bin/env python3
"""The cost of `runmon leet symon` to the machine it shows: `runmon leet symon --interval 1s` runs in a 160x48
tmux pane for 60 s against the fake libnvidia-ml.so.1 (tests/fakes/nvml) with 8 GPUs, each with 4 processes
on it by default (real sleeping processes this script starts, so the process table reads their /proc files, and one
of them under `runmon run`, so the run rule walks its ancestors), and reports runmon's CPU time over the
measured window (utime + stime of the process, from /proc/PID/stat, after a 5 s warm-up) as % of one core,
and its VmRSS at the end. The issue's target: at most 1 % of one core. The exit status is 1 when it is
missed."""
import argparse
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time

GPUS = 8
TARGET_PERCENT = 1.0


def cpu_ticks(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15)


def vm_rss_kb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return None


def find_runmon(runmon):
    """The runmon process under the tmux pane's shell."""
    for _ in range(100):
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as f:
                    argv = f.read().split(b"\0")
            except OSError:
                continue
            if argv[0] == runmon.encode() and argv[1:3] == [b"leet", b"symon"]:
                return int(entry)
        time.sleep(0.1)
    sys.exit("runmon leet symon did not start in tmux")


def scenario(pids, per_gpu):
    devices = []
    for gpu in range(GPUS):
        on_gpu = pids[gpu * per_gpu:(gpu + 1) * per_gpu]
        devices.append({
            "name": "NVIDIA H100 80GB HBM3",
            "uuid": f"GPU-{gpu:08x}-91c4-4d1e-b7f3-0c2a9e4d7f00",
            "pci": {"bus_id": f"00000000:{0x10 + gpu:02X}:00.0"},
            "architecture": "HOPPER", "cuda_cores": 16896,
            "memory": {"total": 85520809984, "reserved": 567279616, "used": [42949672960, 44023414784]},
            "utilization": {"gpu": [97, 99], "memory": 61}, "temperature": 54,
            "power_mw": [612345, 655120], "power_limit_mw": 700000, "energy_mj": [183245120, 183857465],
            "clocks": {"graphics": 1980, "sm": 1980, "mem": 2619},
            "compute_processes": [{"pid": pid, "used_memory": (i + 1) << 30} for i, pid in enumerate(on_gpu)],
            "graphics_processes": [],
            "process_utilization": [{"pid": pid, "sm": 20 + i, "timestamp": "now"} for i, pid in enumerate(on_gpu)],
        })
    return {"driver_version": "550.90.07", "cuda_driver_version": 12040, "devices": devices}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", default="build", help="the build directory holding runmon")
    parser.add_argument("--fake-nvml", help="the fake libnvidia-ml.so.1 (default: BUILD/fake_nvml/full/...)")
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--processes-per-gpu", type=int, default=4,
                        help="processes on each GPU (0: none, the cost of symon without a process table's rows)")
    args = parser.parse_args()
    if shutil.which("tmux") is None:
        sys.exit("tmux is not installed")
    runmon = os.path.abspath(os.path.join(args.build, "runmon"))
    fake = os.path.abspath(args.fake_nvml or os.path.join(args.build, "fake_nvml", "full", "libnvidia-ml.so.1"))
    for path in (runmon, fake):
        if not os.path.exists(path):
            sys.exit(f"{path} is not built")
    children = []
    socket = f"runmon-symon-bench-{os.getpid()}"
    tmux = ["tmux", "-L", socket, "-f", "/dev/null"]
    with tempfile.TemporaryDirectory(prefix="runmon-symon-bench") as tmp:
        try:
            # One process of the table is a `runmon run`'s child; the others sleep on their own.
            run = subprocess.Popen([runmon, "run", "--console", "off", "--interval", "10s", "--dir", tmp, "--",
                                    "sleep", "600"], start_new_session=True, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL)
            children.append(run)
            pids = []
            for _ in range(100):
                try:
                    with open(f"/proc/{run.pid}/task/{run.pid}/children") as f:
                        pids = [int(p) for p in f.read().split()]
                except OSError:
                    pids = []
                if pids:
                    break
                time.sleep(0.05)
            for _ in range(GPUS * args.processes_per_gpu - len(pids)):
                sleeper = subprocess.Popen(["sleep", "600"], start_new_session=True)
                children.append(sleeper)
                pids.append(sleeper.pid)
            path = os.path.join(tmp, "scenario.json")
            with open(path, "w") as f:
                json.dump(scenario(pids, args.processes_per_gpu), f)
            env = f"RUNMON_NVML_LIBRARY={shlex.quote(fake)} RUNMON_FAKE_NVML_SCENARIO={shlex.quote(path)}"
            subprocess.run([*tmux, "new-session", "-d", "-x", "160", "-y", "48",
                            f"env TERM=tmux-256color {env} {shlex.quote(runmon)} leet symon --interval 1s"],
                           check=True)
            pid = find_runmon(runmon)
            time.sleep(5)  # start-up (NVML's init, the device walk, the first frames) is not the steady cost
            ticks_before, started = cpu_ticks(pid), time.monotonic()
            time.sleep(args.seconds)
            ticks_after, elapsed = cpu_ticks(pid), time.monotonic() - started
            rss = vm_rss_kb(pid)
            screen = subprocess.run([*tmux, "capture-pane", "-p"], capture_output=True, text=True).stdout
        finally:
            subprocess.run([*tmux, "kill-server"], capture_output=True)
            for child in children:
                os.killpg(child.pid, signal.SIGKILL)
                child.wait()
    hz = os.sysconf("SC_CLK_TCK")
    percent = 100.0 * (ticks_after - ticks_before) / hz / elapsed
    print(f"runmon leet symon --interval 1s, 160x48, {GPUS} GPUs x {args.processes_per_gpu} processes, "
          f"{elapsed:.0f} s: CPU {percent:.2f} % of one core (target <= {TARGET_PERCENT:.0f} %), "
          f"VmRSS {rss / 1024:.1f} MiB")
    if "GPU" not in screen:
        print("warning: the screen shows no GPU charts:\n" + screen, file=sys.stderr)
    return 0 if percent <= TARGET_PERCENT else 1


if __name__ == "__main__":
    sys.exit(main())
