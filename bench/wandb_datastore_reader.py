#!/usr/bin/python3
"""wandb_datastore_reader.py - the peer for runlog_bench: W&B's own Python run-log reader and writer.

W&B's legacy reader and writer are wandb/sdk/internal/datastore.py: Python framing over a buffered file
(scan_record reads a 7-byte chunk header with fp.read, then the payload with fp.read, checks the CRC with
zlib.crc32 seeded with the type byte's CRC, and asserts; scan_data skips and asserts zero block trailers and
joins FIRST/MIDDLE/LAST), with each payload decoded by the C++-backed protobuf runtime
(Record().ParseFromString, then WhichOneof, as `wandb sync` does). wandb cannot be installed here, so the
DataStore class below re-implements that file's read and write paths step for step (same calls, same
asserts, same fsync when a record crosses a block), and the Record classes are generated at start-up by
`protoc --python_out` from runmon's src/runlog/wandb_record.proto (W&B's field numbers; the bytes on the
wire are the same as with W&B's wandb_internal_pb2).

Read: passes over --file on a warm page cache (the first is untimed), decoding every record; then passes of
framing alone. Write: the first --write-records stats records of the file are turned back into dicts
({key: number}) and each is written as W&B's Python SDK did it (interface._make_stats: StatsRecord, SYSTEM,
timestamp.GetCurrentTime(), one item per key with value_json = json_dumps_safer(json_friendly(v)[0]);
_make_record: Record.stats.CopyFrom; DataStore.write: ByteSize, SerializeToString, framing, CRC, file
write) to a new file, timed per record.

Output: readable lines on stderr, one JSON object per measurement on stdout. Needs Debian's
python3-protobuf (run with /usr/bin/python3) and protoc.

Usage: wandb_datastore_reader.py --file RUN.wandb [--passes N] [--framing-passes N] [--write-records N]
                                 [--no-read] [--no-write] [--proto PATH] [--protoc PATH]
"""
import argparse
import importlib
import json
import math
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import zlib

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# --- datastore.py ------------------------------------------------------------------------------------------

LEVELDBLOG_HEADER_LEN = 7
LEVELDBLOG_BLOCK_LEN = 32768
LEVELDBLOG_DATA_LEN = LEVELDBLOG_BLOCK_LEN - LEVELDBLOG_HEADER_LEN

LEVELDBLOG_FULL = 1
LEVELDBLOG_FIRST = 2
LEVELDBLOG_MIDDLE = 3
LEVELDBLOG_LAST = 4

LEVELDBLOG_HEADER_IDENT = ":W&B"
LEVELDBLOG_HEADER_MAGIC = 0xBEE1  # zlib.crc32(bytes("Weights & Biases", 'iso8859-1')) & 0xffff
LEVELDBLOG_HEADER_VERSION = 0


def strtobytes(x):
    return bytes(x, "iso8859-1")


class DataStore:
    """datastore.py's DataStore, without the wandb import and the logging."""

    def __init__(self):
        self._opened_for_scan = False
        self._fp = None
        self._index = 0
        self._size_bytes = 0
        self.fsyncs = 0  # not in datastore.py: counts the fsyncs of _write_data, for the report

        self._crc = [0] * (LEVELDBLOG_LAST + 1)
        for x in range(1, LEVELDBLOG_LAST + 1):
            self._crc[x] = zlib.crc32(strtobytes(chr(x))) & 0xFFFFFFFF

    def open_for_write(self, fname):
        self._fname = fname
        self._fp = open(fname, "xb")
        self._write_header()

    def open_for_scan(self, fname):
        self._fname = fname
        self._fp = open(fname, "rb")
        self._index = 0
        self._size_bytes = os.stat(fname).st_size
        self._opened_for_scan = True
        self._read_header()

    def scan_record(self):
        assert self._opened_for_scan, "file not open for scanning"
        header = self._fp.read(LEVELDBLOG_HEADER_LEN)
        if len(header) == 0:
            return None
        assert len(header) == LEVELDBLOG_HEADER_LEN, "record header is {} bytes instead of the expected {}".format(
            len(header), LEVELDBLOG_HEADER_LEN)
        fields = struct.unpack("<IHB", header)
        checksum, dlength, dtype = fields
        self._index += LEVELDBLOG_HEADER_LEN
        data = self._fp.read(dlength)
        checksum_computed = zlib.crc32(data, self._crc[dtype]) & 0xFFFFFFFF
        assert checksum == checksum_computed, "record checksum is invalid, data may be corrupt"
        self._index += dlength
        return dtype, data

    def scan_data(self):
        offset = self._index % LEVELDBLOG_BLOCK_LEN
        space_left = LEVELDBLOG_BLOCK_LEN - offset
        if space_left < LEVELDBLOG_HEADER_LEN:
            pad_check = strtobytes("\x00" * space_left)
            pad = self._fp.read(space_left)
            assert pad == pad_check, "invalid padding"
            self._index += space_left

        record = self.scan_record()
        if record is None:  # eof
            return None
        dtype, data = record
        if dtype == LEVELDBLOG_FULL:
            return data

        assert dtype == LEVELDBLOG_FIRST, f"expected record to be type {LEVELDBLOG_FIRST} but found {dtype}"
        while True:
            offset = self._index % LEVELDBLOG_BLOCK_LEN
            record = self.scan_record()
            if record is None:  # eof
                return None
            dtype, new_data = record
            if dtype == LEVELDBLOG_LAST:
                data += new_data
                break
            assert dtype == LEVELDBLOG_MIDDLE, "expected record to be type {} but found {}".format(
                LEVELDBLOG_MIDDLE, dtype)
            data += new_data
        return data

    def _write_header(self):
        data = struct.pack("<4sHB", strtobytes(LEVELDBLOG_HEADER_IDENT), LEVELDBLOG_HEADER_MAGIC,
                           LEVELDBLOG_HEADER_VERSION)
        assert len(data) == LEVELDBLOG_HEADER_LEN, "header size is {} bytes, expected {}".format(
            len(data), LEVELDBLOG_HEADER_LEN)
        self._fp.write(data)
        self._index += len(data)

    def _read_header(self):
        header = self._fp.read(LEVELDBLOG_HEADER_LEN)
        assert len(header) == LEVELDBLOG_HEADER_LEN, "header is {} bytes instead of the expected {}".format(
            len(header), LEVELDBLOG_HEADER_LEN)
        ident, magic, version = struct.unpack("<4sHB", header)
        if ident != strtobytes(LEVELDBLOG_HEADER_IDENT):
            raise Exception("Invalid header")
        if magic != LEVELDBLOG_HEADER_MAGIC:
            raise Exception("Invalid header")
        if version != LEVELDBLOG_HEADER_VERSION:
            raise Exception("Invalid header")
        self._index += len(header)

    def _write_record(self, s, dtype=None):
        """Write record that must fit into a block."""
        assert len(s) + LEVELDBLOG_HEADER_LEN <= (LEVELDBLOG_BLOCK_LEN - self._index % LEVELDBLOG_BLOCK_LEN), \
            "not enough space to write new records"
        dlength = len(s)
        dtype = dtype or LEVELDBLOG_FULL
        checksum = zlib.crc32(s, self._crc[dtype]) & 0xFFFFFFFF
        self._fp.write(struct.pack("<IHB", checksum, dlength, dtype))
        if dlength:
            self._fp.write(s)
        self._index += LEVELDBLOG_HEADER_LEN + len(s)

    def _write_data(self, s):
        file_offset = self._index
        flush_index = 0
        flush_offset = 0

        offset = self._index % LEVELDBLOG_BLOCK_LEN
        space_left = LEVELDBLOG_BLOCK_LEN - offset
        data_used = 0
        data_left = len(s)
        if space_left < LEVELDBLOG_HEADER_LEN:
            pad = "\x00" * space_left
            self._fp.write(strtobytes(pad))
            self._index += space_left
            offset = 0
            space_left = LEVELDBLOG_BLOCK_LEN

        # does it fit in first (possibly partial) block?
        if data_left + LEVELDBLOG_HEADER_LEN <= space_left:
            self._write_record(s)
        else:
            # write first record (we could still be in the middle of a block,
            # but this write will end on a block boundary)
            data_room = space_left - LEVELDBLOG_HEADER_LEN
            self._write_record(s[:data_room], LEVELDBLOG_FIRST)
            data_used += data_room
            data_left -= data_room
            assert data_left, "data_left should be non-zero"

            # write middles (if any)
            while data_left > LEVELDBLOG_DATA_LEN:
                self._write_record(s[data_used:data_used + LEVELDBLOG_DATA_LEN], LEVELDBLOG_MIDDLE)
                data_used += LEVELDBLOG_DATA_LEN
                data_left -= LEVELDBLOG_DATA_LEN

            # write last and flush the entire block to disk
            self._write_record(s[data_used:], LEVELDBLOG_LAST)
            self._fp.flush()
            os.fsync(self._fp.fileno())
            self.fsyncs += 1

        return file_offset, self._index - file_offset, flush_index, flush_offset

    def write(self, obj):
        raw_size = obj.ByteSize()
        s = obj.SerializeToString()
        assert len(s) == raw_size, "invalid serialization"
        return self._write_data(s)

    def close(self):
        if self._fp is not None:
            self._fp.close()


# --- wandb's stats path (interface._make_stats, util.json_friendly / json_dumps_safer) ------------------------


class WandBJSONEncoder(json.JSONEncoder):
    """util.WandBJSONEncoder (its default() only runs for types json cannot encode; never for numbers)."""

    def default(self, obj):
        obj, converted = json_friendly(obj)
        if converted:
            return obj
        return json.JSONEncoder.default(self, obj)


def json_dumps_safer(obj, **kwargs):
    return json.dumps(obj, cls=WandBJSONEncoder, **kwargs)


def get_full_typename(o):
    instance_name = o.__class__.__module__ + "." + o.__class__.__name__
    if instance_name in ["builtins.module", "__builtin__.module"]:
        return o.__name__
    return instance_name


def json_friendly(obj):
    """util.json_friendly's checks for a plain number, numpy not installed (a number passes every test)."""
    converted = True
    typename = get_full_typename(obj)
    if typename.startswith("tensorflow.") and "EagerTensor" in typename:
        obj = obj.numpy()
    elif typename.startswith("tensorflow.") and "Tensor" in typename:
        obj = obj.eval()
    elif typename.startswith("torch.") and "Tensor" in typename:
        obj = obj.data
    elif typename.startswith("jax"):
        obj = obj.tolist()
    if isinstance(obj, bytes):
        obj = obj.decode("utf-8")
    elif callable(obj):
        obj = f"{obj.__module__}.{obj.__qualname__}"
    elif isinstance(obj, slice):
        obj = dict(slice_start=obj.start, slice_step=obj.step, slice_stop=obj.stop)
    elif isinstance(obj, float) and math.isnan(obj):
        obj = None
    elif isinstance(obj, dict) and any(not isinstance(key, str) for key in obj.keys()):
        obj = {str(key): value for key, value in obj.items()}
    else:
        converted = False
    if sys.getsizeof(obj) > 10_000:
        pass  # wandb warns about large values here
    return obj, converted


# --- the benchmark -------------------------------------------------------------------------------------------


def log(message):
    print(message, file=sys.stderr, flush=True)


def load_pb(proto, protoc):
    """Generates the Python classes for runmon's wandb_record.proto in a temporary directory."""
    out = tempfile.mkdtemp(prefix="runlog_pb_")
    try:
        subprocess.run([protoc, "-I", os.path.dirname(proto), "--python_out", out, proto], check=True)
        sys.path.insert(0, out)
        module = importlib.import_module(os.path.splitext(os.path.basename(proto))[0] + "_pb2")
    finally:
        shutil.rmtree(out, ignore_errors=True)
    from google.protobuf.internal import api_implementation
    import google.protobuf
    return module, api_implementation.Type(), google.protobuf.__version__


def read_pass(pb, path, decode=True, count_items=False):
    """One scan as `wandb sync` does it: scan_data until None, each payload into a new Record."""
    records = items = 0
    t0 = time.perf_counter()
    ds = DataStore()
    ds.open_for_scan(path)
    if decode:
        Record = pb.Record
        while True:
            data = ds.scan_data()
            if data is None:
                break
            rec = Record()
            rec.ParseFromString(data)
            rec.WhichOneof("record_type")
            records += 1
            if count_items:
                items += len(rec.stats.item)
    else:
        while True:
            data = ds.scan_data()
            if data is None:
                break
            records += 1
    seconds = time.perf_counter() - t0
    ds.close()
    return seconds, records, items


def rate(name, what, size, records, seconds_list):
    seconds_list = sorted(seconds_list)
    best, median = seconds_list[0], seconds_list[len(seconds_list) // 2]
    mb = size / 1e6
    log("  %-34s best %8.1f MB/s %10.0f records/s   median %8.1f MB/s %10.0f records/s" % (
        what, mb / best, records / best, mb / median, records / median))
    return dict(tool="peer", bench=name, bytes=size, records=records, passes=len(seconds_list), best_s=best,
                median_s=median, mb_per_s=round(mb / best, 1), records_per_s=round(records / best),
                median_mb_per_s=round(mb / median, 1), median_records_per_s=round(records / median))


def describe(us):
    us_sorted = sorted(us)
    n = len(us_sorted)
    return dict(us_mean=round(sum(us) / n, 3), us_median=round(us_sorted[n // 2], 3),
                us_p99=round(us_sorted[min(n - 1, int(n * 0.99))], 3), us_max=round(us_sorted[-1], 1))


def stats_dicts(pb, path, n):
    """The first n stats records of the file as ({key: number}, payload size)."""
    out = []
    ds = DataStore()
    ds.open_for_scan(path)
    while len(out) < n:
        data = ds.scan_data()
        if data is None:
            break
        rec = pb.Record()
        rec.ParseFromString(data)
        if rec.WhichOneof("record_type") == "stats":
            out.append({item.key: json.loads(item.value_json) for item in rec.stats.item})
    ds.close()
    return out


def write_bench(pb, samples, path, warmup=100):
    """Writes each sample as W&B's Python SDK did, timing build + write and write alone per record."""
    if os.path.exists(path):
        os.unlink(path)
    ds = DataStore()
    ds.open_for_write(path)
    total, write_only, fsynced, sizes = [], [], [], []
    StatsRecord, Record = pb.StatsRecord, pb.Record
    clock = time.perf_counter_ns
    samples = samples[:warmup] + samples
    try:
        for i, stats_dict in enumerate(samples):
            fsyncs = ds.fsyncs
            t0 = clock()
            # interface._make_stats
            stats = StatsRecord()
            stats.stats_type = StatsRecord.StatsType.SYSTEM
            stats.timestamp.GetCurrentTime()
            for k, v in stats_dict.items():
                item = stats.item.add()
                item.key = k
                item.value_json = json_dumps_safer(json_friendly(v)[0])
            # interface._make_record(stats=stats)
            rec = Record()
            rec.stats.CopyFrom(stats)
            t1 = clock()
            # the internal process's writer: DataStore.write
            ds.write(rec)
            t2 = clock()
            if i < warmup:
                continue
            total.append((t2 - t0) / 1e3)
            write_only.append((t2 - t1) / 1e3)
            fsynced.append(ds.fsyncs != fsyncs)
            sizes.append(rec.ByteSize())
    finally:
        ds.close()
        os.unlink(path)
    no_fsync = [t for t, f in zip(total, fsynced) if not f]
    return dict(records=len(total), payload_bytes_mean=round(sum(sizes) / len(sizes), 1), **describe(total),
                write_only_us_mean=round(sum(write_only) / len(write_only), 3),
                write_only_us_median=round(sorted(write_only)[len(write_only) // 2], 3),
                fsyncs=sum(fsynced), us_mean_without_fsync_records=round(sum(no_fsync) / max(len(no_fsync), 1), 3))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--file", required=True, help="the run log to read (runlog_bench --keep writes one)")
    ap.add_argument("--passes", type=int, default=3, help="timed read passes with decoding")
    ap.add_argument("--framing-passes", type=int, default=2, help="timed read passes without decoding")
    ap.add_argument("--write-records", type=int, default=2000)
    ap.add_argument("--write-file", help="where the write bench writes (default: next to --file)")
    ap.add_argument("--no-read", action="store_true")
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument("--proto", default=os.path.join(REPO, "src", "runlog", "wandb_record.proto"))
    ap.add_argument("--protoc", default=shutil.which("protoc") or "protoc")
    args = ap.parse_args()

    pb, backend, version = load_pb(os.path.abspath(args.proto), args.protoc)
    log("peer: datastore.py algorithm, python %s, protobuf %s, backend %s" % (
        sys.version.split()[0], version, backend))
    print(json.dumps(dict(tool="peer", bench="info", python=sys.version.split()[0], protobuf=version,
                          backend=backend)), flush=True)
    size = os.path.getsize(args.file)

    if not args.no_read:
        _, records, items = read_pass(pb, args.file, decode=True, count_items=True)  # warm-up, untimed
        log("peer read %s: %.1f MB, %d records, %d stats items (one untimed pass first)" % (
            args.file, size / 1e6, records, items))
        decoded = [read_pass(pb, args.file)[0] for _ in range(args.passes)]
        print(json.dumps(rate("read_decoded", "datastore.py + ParseFromString", size, records, decoded)),
              flush=True)
        if args.framing_passes > 0:
            framing = [read_pass(pb, args.file, decode=False)[0] for _ in range(args.framing_passes)]
            print(json.dumps(rate("read_framing", "datastore.py framing only", size, records, framing)),
                  flush=True)

    if not args.no_write:
        samples = stats_dicts(pb, args.file, args.write_records)
        if not samples:
            sys.exit("wandb_datastore_reader: no stats records in %s" % args.file)
        path = args.write_file or args.file + ".peer-write"
        w = write_bench(pb, samples, path)
        log("  peer write %6d records of %6.0f B: mean %7.2f us  median %7.2f us  p99 %8.2f us  max %9.1f us"
            "   (DataStore.write alone: mean %.2f us; %d records crossed a block and were fsynced; mean "
            "without them %.2f us)" % (w["records"], w["payload_bytes_mean"], w["us_mean"], w["us_median"],
                                       w["us_p99"], w["us_max"], w["write_only_us_mean"], w["fsyncs"],
                                       w["us_mean_without_fsync_records"]))
        print(json.dumps(dict(tool="peer", bench="write", **w)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
