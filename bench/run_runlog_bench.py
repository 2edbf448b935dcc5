#!/usr/bin/python3
"""run_runlog_bench.py - runmon's run-log reader and writer against W&B's own (datastore.py), in one run.

Runs build/runlog_bench, which writes a log of realistic stats records (100 keys each, about 2.9 KB
serialized, 256 MB by default) with runmon's writer and measures reading it (framing + full protobuf
decoding; framing alone) and writing one record (FillStatsRecord + SerializeToString + LogWriter::Append);
then runs bench/wandb_datastore_reader.py (W&B's datastore.py read and write algorithm in Python with the
C++-backed protobuf runtime, as `wandb sync` and W&B's Python SDK use them) on the same file, and prints both
side by side with their ratio and the issue's targets.

Targets (the issue's, for a 2-core machine): reading with full decoding at >= 500 MB/s and >= 3x the peer
(the issue measured the peer at 163 MB/s, 56,600 records/s); writing one record in < 20 us (the issue's
peer: 230 us). MB = 10^6 bytes. Read figures are the best of the passes (median alongside), on a warm page
cache; write figures are means over many records (median and p99 alongside).

Usage: python3 bench/run_runlog_bench.py [--build build] [--size-mb 256] [--quick] [--json FILE]
                                          [--python /usr/bin/python3] [--dir DIR]
The peer needs Debian's python3-protobuf and protoc. About 45 s on 2 cores (--quick: under 10 s).
Exit status 1 when a target is missed.
"""
import argparse
import json
import os
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def log(message):
    print(message, file=sys.stderr, flush=True)


def run_json_lines(argv, timeout):
    """Runs argv with its stderr passed through; returns its stdout JSON lines by their "bench" name."""
    out = subprocess.run(argv, stdout=subprocess.PIPE, text=True, timeout=timeout)
    if out.returncode != 0:
        raise RuntimeError("%s failed with status %d" % (" ".join(argv), out.returncode))
    results = {}
    for line in out.stdout.splitlines():
        if line.startswith("{"):
            obj = json.loads(line)
            results[obj["bench"]] = obj
    return results


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(REPO, "build"), help="build directory (Release)")
    ap.add_argument("--size-mb", type=float, default=256, help="size of the generated log (MB = 10^6 bytes)")
    ap.add_argument("--quick", action="store_true", help="a 64 MB log and fewer passes")
    ap.add_argument("--dir", help="where the log is written (default: the build directory)")
    ap.add_argument("--python", default="/usr/bin/python3", help="interpreter for the peer (needs protobuf)")
    ap.add_argument("--peer", default=os.path.join(REPO, "bench", "wandb_datastore_reader.py"))
    ap.add_argument("--json", help="also write every raw result to this file")
    args = ap.parse_args()
    bench = os.path.join(os.path.abspath(args.build), "runlog_bench")
    if not os.path.exists(bench):
        sys.exit("run_runlog_bench: %s is missing (cmake --build %s --target runlog_bench)" % (bench, args.build))
    size_mb = 64 if args.quick and args.size_mb == 256 else args.size_mb
    passes, peer_passes = (3, 2) if args.quick else (7, 5)
    write_records, sync_records, peer_write_records = (5000, 100, 1000) if args.quick else (20000, 300, 2000)
    directory = os.path.abspath(args.dir or args.build)
    path = os.path.join(directory, "runlog_bench-%d.wandb" % os.getpid())

    started = time.monotonic()
    try:
        log("== runmon: %s" % bench)
        mine = run_json_lines([bench, "--file", path, "--size-mb", str(size_mb), "--passes", str(passes),
                               "--write-records", str(write_records), "--sync-records", str(sync_records),
                               "--keep"], timeout=600)
        log("== peer: %s %s" % (args.python, os.path.relpath(args.peer, REPO)))
        peer = run_json_lines([args.python, args.peer, "--file", path, "--passes", str(peer_passes),
                               "--framing-passes", "2", "--write-records", str(peer_write_records)], timeout=600)
    finally:
        for suffix in ("", ".write", ".write-sync", ".peer-write"):
            try:
                os.unlink(path + suffix)
            except FileNotFoundError:
                pass

    gen = mine["generate"]
    info = peer["info"]
    print()
    print("run log: %.1f MB, %d records (%d stats records of %d keys, %.0f B serialized on average); %d cores; "
          "MB = 10^6 bytes" % (gen["bytes"] / 1e6, gen["records"], gen["stats_records"], gen["keys"],
                               gen["stats_payload_bytes_mean"], os.cpu_count() or 0))
    print("peer: datastore.py's algorithm in Python %s, protobuf %s, backend %s (the issue's peer figure is with "
          "the C++/upb backend)" % (info["python"], info["protobuf"], info["backend"]))
    print("read: best of the passes (median), warm page cache; write: mean per record (median, p99)")
    header = "%-44s %22s %22s %8s %18s %4s" % ("", "runmon", "peer", "ratio", "target", "ok")
    print(header)
    print("-" * len(header))
    failures = 0

    def row(label, a, b, ratio, target, ok):
        nonlocal failures
        mark = "" if ok is None else ("yes" if ok else "NO")
        if ok is False:
            failures += 1
        print("%-44s %22s %22s %8s %18s %4s" % (label, a, b, ratio, target, mark))

    def rate(r, key, fmt):
        return (fmt % r[key]) + (" (" + fmt % r["median_" + key] + ")")

    rd, pd = mine["read_decoded"], peer["read_decoded"]
    ratio = rd["mb_per_s"] / pd["mb_per_s"]
    row("read, framing + decoding, MB/s", rate(rd, "mb_per_s", "%.1f"), rate(pd, "mb_per_s", "%.1f"),
        "%.2fx" % ratio, ">= 500, >= 3x", rd["mb_per_s"] >= 500 and ratio >= 3)
    row("read, framing + decoding, records/s", rate(rd, "records_per_s", "%.0f"),
        rate(pd, "records_per_s", "%.0f"), "%.2fx" % (rd["records_per_s"] / pd["records_per_s"]), "", None)
    rf, pf = mine["read_framing"], peer["read_framing"]
    row("read, framing only, MB/s", rate(rf, "mb_per_s", "%.1f"), rate(pf, "mb_per_s", "%.1f"),
        "%.2fx" % (rf["mb_per_s"] / pf["mb_per_s"]), "(reference)", None)
    w, pw = mine["write"], peer["write"]
    ratio_w = pw["us_mean"] / w["us_mean"]
    row("write one record, us", "%.2f (%.2f, %.2f)" % (w["us_mean"], w["us_median"], w["us_p99"]),
        "%.1f (%.1f, %.1f)" % (pw["us_mean"], pw["us_median"], pw["us_p99"]), "%.1fx" % ratio_w, "< 20 us",
        w["us_mean"] < 20)
    print("  runmon write = EncodeStatsRecord + num %.2f + Append (pwrite) %.2f + IndexWriter::NoteStats %.2f us "
          "(the message path, FillStatsRecord + SerializeToString: %.2f, for reference); with "
          "LogWriter::Sync after every record: %.1f us (fdatasync %.1f)" % (
              w["encode_us_mean"], w["append_us_mean"], w["index_us_mean"], w["message_us_mean"],
              mine["write_sync"]["us_mean"], mine["write_sync"]["sync_us_mean"]))
    print("  peer write = _make_stats + _make_record + DataStore.write (buffered; fsyncs when a record crosses "
          "a block: %d of %d records); DataStore.write alone %.1f us; mean without the fsynced records %.1f us"
          % (pw["fsyncs"], pw["records"], pw["write_only_us_mean"], pw["us_mean_without_fsync_records"]))

    if "parse_fresh" in mine:
        print()
        print("breakdown, the file in memory, MB/s: pread %.0f, crc32 %.0f, framing %.0f, framing + decoding "
              "(RecordReader) %.0f; decoding alone: RecordReader (StatsRecord kept) %.0f, for reference "
              "ParseFromArray into a fresh Record %.0f, on an arena per record %.0f" % (
                  mine["pread_only"]["mb_per_s"], mine["crc_only"]["mb_per_s"],
                  mine["read_framing_memory"]["mb_per_s"], mine["read_decoded_memory"]["mb_per_s"],
                  mine["decode_library"]["mb_per_s"], mine["parse_fresh"]["mb_per_s"],
                  mine["parse_arena"]["mb_per_s"]))
    print()
    print("%d target(s) missed; total run time %.0f s" % (failures, time.monotonic() - started))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(runmon=mine, peer=peer), f, indent=1)
    return 1 if failures else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.exit(130)
