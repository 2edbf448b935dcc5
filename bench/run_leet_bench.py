#!/usr/bin/python3
"""run_leet_bench.py - what `runmon leet` costs on a 24-hour, 1 Hz, 100-key run, in-process and for real.

1. build/leet_bench --generate writes the run log (86,400 stats records of 100 keys, about 270 MB) into a
   temporary directory (--log PATH reuses a log instead: it is left in place, but records are appended to
   it for --idle-seconds and then cut off again, unless a writer holds its lock).
2. build/leet_bench --measure on it: the first frame, the whole run loaded and drawn, one frame at 160x48
   and 80x24, memory, and following the loaded run idle and while a record a second is appended; then
   twice with the log's pages dropped from the page cache (--drop-cache --load-only).
3. The real binary: `runmon leet LOG` in a private tmux server (tmux -L <unique> -f /dev/null, 160x48),
   --tui-runs times: wall time from starting it to the run name on the screen (the first frame) and to
   "finished" with no "loading" (the whole run drawn), polled with capture-pane every 20 ms, and the CPU
   runmon and the tmux server had used by then (schedstat); in the last run, runmon's CPU over
   --idle-seconds of idling (utime + stime from /proc/PID/stat, in clock ticks, and its threads' schedstat
   run time, in nanoseconds) and the tmux server's; VmHWM and VmRSS from /proc/PID/status; then 'q' and
   its exit status (written to a file by the pane's shell).
4. The peer: bench/wandb_datastore_reader.py (W&B's datastore.py read path with C++-backed protobuf
   decoding) reading the same log, against runmon's full load (reading, decoding and building every
   series).

Prints a summary table with the requirement's figures and the machine. The figures are reported, not
asserted: the exit status is 0 unless a step fails.

Requirement (the issue's): a 24-hour run sampled every second with 100 keys (86,400 stats records,
~250 MB): first frame within 0.3 s (load progressively), the whole run drawn within 1 s; idle CPU while
tailing at most 1% of a core; one frame at 160x48 within 5 ms; memory for that run at most 200 MB.

Usage: python3 bench/run_leet_bench.py [--build build] [--log PATH] [--dir /tmp] [--seconds 86400]
                                       [--idle-seconds 10] [--renders 200] [--tui-runs 3]
                                       [--python /usr/bin/python3] [--peer-passes 3] [--no-peer] [--no-tui]
                                       [--json FILE]
About 50 s on 2 cores. Needs tmux for step 3, and Debian's python3-protobuf and protoc for step 4.
"""
import argparse
import json
import os
import platform
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUN_NAME = "leet-bench-24h"  # leet_bench's generated run
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def log(message):
    print(message, file=sys.stderr, flush=True)


def run_json(argv, timeout):
    """Runs argv with its stderr passed through; returns its last stdout JSON line."""
    out = subprocess.run(argv, stdout=subprocess.PIPE, text=True, timeout=timeout)
    if out.returncode != 0:
        raise RuntimeError("%s failed with status %d" % (" ".join(argv), out.returncode))
    lines = [line for line in out.stdout.splitlines() if line.startswith("{")]
    if not lines:
        raise RuntimeError("%s printed no JSON" % " ".join(argv))
    return json.loads(lines[-1])


def busy_fraction(seconds=2.0):
    """How busy the whole machine is (all cores, /proc/stat) over `seconds`."""
    def snapshot():
        with open("/proc/stat") as f:
            values = [int(v) for v in f.readline().split()[1:]]
        return sum(values), values[3] + values[4]
    total0, idle0 = snapshot()
    time.sleep(seconds)
    total1, idle1 = snapshot()
    return 1 - (idle1 - idle0) / max(1, total1 - total0)


def machine():
    model = "?"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return dict(nproc=os.cpu_count() or 0, cpu=model, kernel=platform.release(), loadavg=os.getloadavg(),
                busy_at_start=busy_fraction())


def proc_cpu_seconds(pid):
    """utime + stime of a process, in seconds (clock-tick resolution)."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def proc_run_seconds(pid):
    """CPU time of all a process's threads from /proc/PID/task/*/schedstat, in seconds (nanoseconds)."""
    total = 0
    for task in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/schedstat" % (pid, task)) as f:
                total += int(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            pass
    return total / 1e9


def proc_status(pid):
    result = {}
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                result[key] = int(value.split()[0])
    return result


class Tmux:
    """A private tmux server (its own socket name, no configuration file), killed at the end."""

    def __init__(self):
        self.name = "leet_bench-%d-%d" % (os.getpid(), int(time.monotonic() * 1000))
        self.env = dict(os.environ, LANG="C.UTF-8", LC_ALL="C.UTF-8")
        self.env.pop("TMUX", None)

    def __call__(self, *args, check=True):
        out = subprocess.run(["tmux", "-u", "-L", self.name, "-f", "/dev/null"] + list(args),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=self.env,
                             timeout=10)
        if check and out.returncode != 0:
            raise RuntimeError("tmux %s: %s" % (" ".join(args), out.stderr.strip()))
        return out.stdout

    def kill(self):
        """Kills the server and removes its socket (tmux 3.3 leaves it behind)."""
        self("kill-server", check=False)
        path = os.path.join(self.env.get("TMUX_TMPDIR") or "/tmp", "tmux-%d" % os.getuid(), self.name)
        if os.path.exists(path):
            os.unlink(path)


def child_named(parent, name, timeout=5):
    """The pid of `parent`'s child called `name` (scanning /proc), waiting up to `timeout` seconds for it."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open("/proc/%s/stat" % entry) as f:
                    stat = f.read()
            except OSError:
                continue
            comm = stat[stat.index("(") + 1:stat.rindex(")")]
            if comm == name and int(stat.rsplit(")", 1)[1].split()[1]) == parent:
                return int(entry)
        time.sleep(0.005)
    raise RuntimeError("no process %s under %d" % (name, parent))


def run_tui(runmon, log_path, idle_seconds, status_dir, poll=0.02, timeout=60, run_name=RUN_NAME):
    """`runmon leet LOG` in tmux at 160x48: times to the first frame and to the whole run; optionally its
    idle CPU; then q and its exit status (written by the pane's shell: tmux's #{pane_dead_status} is
    sometimes left empty when the pty closes before the child is reaped)."""
    tmux = Tmux()
    result = {}
    status_file = os.path.join(status_dir, "status-%s" % tmux.name)
    try:
        command = "%s leet %s; echo $? > %s" % (shlex.quote(runmon), shlex.quote(log_path),
                                                 shlex.quote(status_file))
        started = time.monotonic()
        tmux("new-session", "-d", "-s", "leet", "-x", "160", "-y", "48", command)
        shell = int(tmux("display-message", "-p", "-t", "leet", "#{pane_pid}").strip())
        pid = child_named(shell, "runmon")
        server = int(tmux("display-message", "-p", "#{pid}").strip())
        server_start = proc_run_seconds(server)
        first = full = None
        screen = ""
        while time.monotonic() - started < timeout:
            screen = tmux("capture-pane", "-p", "-t", "leet")
            now = time.monotonic()
            if first is None and run_name in screen:
                first = now - started
            if first is not None and "finished" in screen and "loading" not in screen:
                full = now - started
                result.update(loaded_cpu_s=proc_run_seconds(pid),
                              loaded_tmux_server_cpu_s=proc_run_seconds(server) - server_start)
                break
            time.sleep(poll)
        if full is None:
            raise RuntimeError("runmon leet did not show the whole run within %d s; the screen:\n%s" %
                               (timeout, screen))
        result.update(first_frame_s=first, loaded_s=full, pid=pid)
        if idle_seconds > 0:
            time.sleep(1)  # past the last loading frame
            cpu0, run0, server0 = proc_cpu_seconds(pid), proc_run_seconds(pid), proc_cpu_seconds(server)
            t0 = time.monotonic()
            time.sleep(idle_seconds)
            cpu1, run1, server1 = proc_cpu_seconds(pid), proc_run_seconds(pid), proc_cpu_seconds(server)
            t1 = time.monotonic()
            result.update(idle_seconds=t1 - t0, idle_cpu_percent=100 * (cpu1 - cpu0) / (t1 - t0),
                          idle_schedstat_cpu_percent=100 * (run1 - run0) / (t1 - t0),
                          tmux_server_cpu_percent=100 * (server1 - server0) / (t1 - t0))
        result.update({k.lower() + "_kb": v for k, v in proc_status(pid).items()})
        result["screen"] = screen
        tmux("send-keys", "-t", "leet", "q")
        deadline = time.monotonic() + 10
        status = None
        while time.monotonic() < deadline and status is None:
            try:
                with open(status_file) as f:
                    text = f.read().strip()
                status = int(text) if text else None
            except (OSError, ValueError):
                pass
            time.sleep(0.02)
        result["exit_status"] = status
    finally:
        tmux.kill()
        if os.path.exists(status_file):
            os.unlink(status_file)
    return result


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(REPO, "build"), help="build directory (Release)")
    ap.add_argument("--log", help="measure this run log instead of generating one (left in place; records "
                    "are appended to it for a while, then cut off again)")
    ap.add_argument("--dir", default=tempfile.gettempdir(), help="where the generated log goes")
    ap.add_argument("--seconds", type=int, default=86400, help="stats records in the generated log")
    ap.add_argument("--idle-seconds", type=float, default=10, help="each idle / following measurement")
    ap.add_argument("--renders", type=int, default=200, help="frames timed per size")
    ap.add_argument("--tui-runs", type=int, default=3, help="runs of the real binary (median shown)")
    ap.add_argument("--python", default="/usr/bin/python3", help="interpreter for the peer (needs protobuf)")
    ap.add_argument("--peer", default=os.path.join(REPO, "bench", "wandb_datastore_reader.py"))
    ap.add_argument("--peer-passes", type=int, default=3)
    ap.add_argument("--no-peer", action="store_true")
    ap.add_argument("--no-tui", action="store_true", help="leave out the real binary in tmux")
    ap.add_argument("--json", help="also write every raw result to this file")
    args = ap.parse_args()
    build = os.path.abspath(args.build)
    bench = os.path.join(build, "leet_bench")
    runmon = os.path.join(build, "runmon")
    for path, target in ((bench, "leet_bench"), (runmon, "runmon")):
        if not os.path.exists(path):
            sys.exit("run_leet_bench: %s is missing (cmake --build %s --target %s)" % (
                path, args.build, target))
    if not args.no_tui and shutil.which("tmux") is None:
        sys.exit("run_leet_bench: tmux is missing (apt-get install tmux, or --no-tui)")

    host = machine()
    started = time.monotonic()
    results = dict(machine=host)
    scratch = tempfile.mkdtemp(prefix="leet_bench-", dir=args.dir)  # the generated log, exit statuses
    try:
        if args.log:
            log_path = os.path.abspath(args.log)
        else:
            log_path = os.path.join(scratch, "leet-bench-24h.wandb")
            log("== generating %s" % log_path)
            results["generate"] = run_json([bench, "--generate", log_path, "--seconds", str(args.seconds)],
                                           600)
        log("== leet_bench --measure")
        results["measure"] = run_json([bench, "--measure", log_path, "--idle-seconds", str(args.idle_seconds),
                                       "--renders", str(args.renders)], 600)
        results["measure_cold"] = []
        for i in range(2):
            log("== leet_bench --measure --drop-cache --load-only, %s time" % ("first", "second")[i])
            results["measure_cold"].append(
                run_json([bench, "--measure", log_path, "--drop-cache", "--load-only"], 600))
        if not args.no_tui:
            results["tui"] = []
            for i in range(args.tui_runs):
                idle = args.idle_seconds if i == args.tui_runs - 1 else 0
                log("== runmon leet in tmux, run %d of %d%s" % (i + 1, args.tui_runs,
                                                               ", then %g s idle" % idle if idle else ""))
                results["tui"].append(run_tui(runmon, log_path, idle, scratch))
        if not args.no_peer:
            log("== peer: %s %s" % (args.python, os.path.relpath(args.peer, REPO)))
            peer_out = subprocess.run([args.python, args.peer, "--file", log_path, "--passes",
                                       str(args.peer_passes), "--framing-passes", "0", "--no-write"],
                                      stdout=subprocess.PIPE, text=True, timeout=900)
            if peer_out.returncode != 0:
                raise RuntimeError("the peer failed with status %d" % peer_out.returncode)
            results["peer"] = {}
            for line in peer_out.stdout.splitlines():
                if line.startswith("{"):
                    obj = json.loads(line)
                    results["peer"][obj["bench"]] = obj
    finally:
        shutil.rmtree(scratch, ignore_errors=True)

    report(results)
    log("total run time %.0f s" % (time.monotonic() - started))
    if args.json:
        for run in results.get("tui", []):
            run.pop("screen", None)
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    return 0


def median(values):
    values = sorted(values)
    return values[len(values) // 2] if values else None


def report(results):
    m = results["measure"]
    host = results["machine"]
    print()
    print("machine: %d cores (nproc), %s, Linux %s; at start: load average %.2f %.2f %.2f, %.0f%% busy" % (
        host["nproc"], host["cpu"], host["kernel"], *host["loadavg"], 100 * host["busy_at_start"]))
    ld = m["loaded"]
    print("run log: %.1f MB, %d records (%d stats records of 100 keys); MB = 10^6 bytes, MiB = 2^20; page "
          "cache warm unless said" % (m["bytes"] / 1e6, ld["records"], ld["stats_records"]))
    header = "%-58s %30s %12s %6s" % ("", "measured", "target", "within")
    print(header)
    print("-" * len(header))

    def row(label, value, target="", ok=None):
        mark = "" if ok is None else ("yes" if ok else "NO")
        print("%-58s %30s %12s %6s" % (label, value, target, mark))

    ff = m["first_frame"]
    row("first frame, in-process (open + 40 ms slice + 160x48 frame)",
        "%.1f ms (%d samples in it)" % (ff["ms"], ff["stats_records"]), "<= 300 ms", ff["ms"] <= 300)
    row("whole run loaded and drawn, in-process", "%.0f ms (%d slices)" % (ld["ms"], ld["slices"]),
        "<= 1000 ms", ld["ms"] <= 1000)
    row("  of which Work (reading + model) / frames", "%.0f / %.0f ms" % (ld["work_ms"], ld["frames_ms"]))
    for i, cold in enumerate(results["measure_cold"]):
        cl = cold["loaded"]
        row("whole run loaded and drawn, page cache dropped (%s)" % ("1st", "2nd")[i],
            "%.0f ms, CPU %.0f (first frame %.1f)" % (cl["ms"], cl["cpu_ms"], cold["first_frame"]["ms"]),
            "<= 1000 ms", cl["ms"] <= 1000)
    row("  (warm, above: CPU time of the loading thread)", "%.0f ms" % ld["cpu_ms"])
    tui = results.get("tui") or []
    if tui:
        def spread(key):
            return ", ".join("%.0f" % (r[key] * 1e3) for r in tui)
        first = median([r["first_frame_s"] * 1e3 for r in tui])
        full = median([r["loaded_s"] * 1e3 for r in tui])
        row("first frame, runmon leet in tmux (median of %d)" % len(tui),
            "%.0f ms (%s)" % (first, spread("first_frame_s")), "<= 300 ms", first <= 300)
        row("whole run drawn, runmon leet in tmux", "%.0f ms (%s)" % (full, spread("loaded_s")),
            "<= 1000 ms", full <= 1000)
        row("  CPU until then: runmon / the tmux server (medians)", "%.0f / %.0f ms" % (
            median([r["loaded_cpu_s"] * 1e3 for r in tui]),
            median([r["loaded_tmux_server_cpu_s"] * 1e3 for r in tui])))
    for size, target in (("160x48", 5), ("80x24", None)):
        f = m["frame_" + size]["frame_ms"]
        row("one frame %s (BuildViewModel + Render), median / p99" % size,
            "%.3f / %.3f ms" % (f["median"], f["p99"]), "<= %g ms" % target if target else "",
            f["p99"] <= target if target else None)
    f = m["frame_160x48_regroup"]["frame_ms"]
    row("one frame 160x48, chart groups rebuilt, median / p99", "%.3f / %.3f ms" % (f["median"], f["p99"]))
    idle = m["follow_idle"]
    row("idle CPU following, in-process (Work 4/s + frame 1/s)",
        "%.3f%% of a core" % idle["process_cpu_percent"], "<= 1%", idle["process_cpu_percent"] <= 1)
    row("  Work alone / frames alone (%.2f ms CPU a frame)" % idle["frame_cpu_ms_each"],
        "%.3f%% / %.3f%%" % (idle["work_cpu_percent"], idle["frame_cpu_percent"]))
    app = m.get("follow_appending")
    if app and app.get("appended"):
        row("CPU following a record a second, in-process",
            "%.3f%% of a core" % app["process_cpu_percent"], "<= 1%", app["process_cpu_percent"] <= 1)
        row("  append -> in the model, median / max (%d of %d)" % (app["seen"], app["appended"]),
            "%.0f / %.0f ms" % (app["visible_ms"]["median"], app["visible_ms"]["max"]))
        row("  append -> drawn, median / max",
            "%.0f / %.0f ms" % (app["drawn_ms"]["median"], app["drawn_ms"]["max"]))
    last = tui[-1] if tui else None
    if last and "idle_cpu_percent" in last:
        row("idle CPU, runmon leet in tmux (%.0f s, /proc/PID/stat)" % last["idle_seconds"],
            "%.2f%% of a core" % last["idle_cpu_percent"], "<= 1%", last["idle_cpu_percent"] <= 1)
        row("  the same from schedstat (ns resolution)",
            "%.3f%% of a core" % last["idle_schedstat_cpu_percent"])
        row("  the tmux server meanwhile", "%.2f%% of a core" % last["tmux_server_cpu_percent"])
    mem = m["memory"]
    row("memory, in-process: VmHWM (VmRSS)", "%.1f MiB (%.1f)" % (mem["hwm_kb"] / 1024, mem["rss_kb"] / 1024),
        "<= 200 MB", mem["hwm_kb"] * 1024 <= 200e6)
    row("  RunModel::MemoryBytes (vector capacities)", "%.1f MiB" % (mem["model_bytes"] / 1048576))
    if last:
        row("memory, runmon leet in tmux: VmHWM (VmRSS)",
            "%.1f MiB (%.1f)" % (last["vmhwm_kb"] / 1024, last["vmrss_kb"] / 1024), "<= 200 MB",
            last["vmhwm_kb"] * 1024 <= 200e6)
        codes = [r["exit_status"] for r in tui]
        row("runmon leet exit status after q", ", ".join(str(c) for c in codes), "0",
            all(c == 0 for c in codes))
    peer = results.get("peer", {}).get("read_decoded")
    if peer:
        peer_ms = peer["best_s"] * 1e3
        row("peer: datastore.py read + ParseFromString, best of %d" % peer["passes"],
            "%.0f ms (%.0f MB/s)" % (peer_ms, peer["mb_per_s"]))
        row("  ratio peer read / runmon Work (read + every series)", "%.2fx" % (peer_ms / ld["work_ms"]))
        row("  ratio peer read / runmon loaded and drawn", "%.2fx" % (peer_ms / ld["ms"]))
        info = results["peer"].get("info", {})
        print("peer: Python %s, protobuf %s, backend %s" % (info.get("python"), info.get("protobuf"),
                                                             info.get("backend")))
    br = m["load_breakdown"]
    print("loading, fresh passes: RecordReader alone %.0f ms, + ParseJsonNumber %.0f ms, + RunModel::Ingest "
          "%.0f ms (the session's Work: %.0f ms)" % (br["decode_ms"], br["parse_numbers_ms"], br["ingest_ms"],
                                                     br["work_ms"]))
    if tui:
        print("the real binary's last screen (first 3 and last lines):")
        lines = tui[-1]["screen"].rstrip("\n").split("\n")
        for line in lines[:3] + lines[-1:]:
            print("  | " + line.rstrip())


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.exit(130)
