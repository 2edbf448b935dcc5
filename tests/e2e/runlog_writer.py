"""Writes W&B run logs for the end-to-end tests without runmon: the framing of docs/run-log.md (7-byte file
header, 32 KiB blocks, FULL/FIRST/MIDDLE/LAST chunks with an IEEE CRC-32 of the type byte and the payload)
and the few protobuf fields the tests need, encoded by hand (field numbers from
src/runlog/wandb_record.proto). A test can thus write what `runmon run` cannot: a run name longer than one
command-line argument may be (Linux caps one at 128 KiB), a log whose writer vanished, one a test process
holds the lock of."""
import fcntl
import os
import struct
import zlib

FILE_HEADER = b":W&B\xe1\xbe\x00"
BLOCK = 32768
CHUNK_HEADER = 7


def _varint(value):
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _field(number, payload):
    """A length-delimited field (strings, messages)."""
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _int_field(number, value):
    return _varint(number << 3) + _varint(value & 0xFFFFFFFFFFFFFFFF)


def _timestamp(seconds):
    whole = int(seconds)
    nanos = int(round((seconds - whole) * 1e9))
    return _int_field(1, whole) + (_int_field(2, nanos) if nanos else b"")


def header_record(producer):
    return _field(21, _field(1, _field(1, producer.encode())))


def run_record(run_id, name, start_time, host=None):
    run = _field(1, run_id.encode()) + _field(8, name.encode())
    if host is not None:
        run += _field(13, host.encode())
    run += _field(17, _timestamp(start_time))
    return _field(17, run)


def environment_record(job_id=None, node_rank=None, launcher=None, host=None):
    """An environment record with runmon's job identity (field 150: job_id 1, node_rank 2, launcher 3) when
    any of its fields is given, and the host (field 12) when given."""
    environment = b""
    if host is not None:
        environment += _field(12, host.encode())
    job = b""
    if job_id is not None:
        job += _field(1, job_id.encode())
    if node_rank is not None:
        job += _field(2, node_rank.encode())
    if launcher is not None:
        job += _field(3, launcher.encode())
    if job_id is not None or node_rank is not None or launcher is not None:
        environment += _field(150, job)
    return _field(26, environment)


def stats_record(time, items):
    stats = _field(2, _timestamp(time))
    for key, value in items.items():
        stats += _field(3, _field(1, key.encode()) + _field(16, value.encode()))
    return _field(7, stats)


def history_record(step, items):
    """A logged row: `items` maps keys to JSON values (as text), at `step`."""
    history = b"".join(_field(1, _field(1, key.encode()) + _field(16, value.encode()))
                       for key, value in items.items())
    history += _field(2, _int_field(1, step) if step else b"")
    return _field(2, history)


def exit_record(code, runtime):
    exit_fields = (_int_field(1, code) if code else b"") + (_int_field(2, runtime) if runtime else b"")
    return _field(18, exit_fields)


def _chunk(kind, payload):
    crc = zlib.crc32(bytes([kind]) + payload) & 0xFFFFFFFF
    return struct.pack("<IHB", crc, len(payload), kind) + payload


def frame(records):
    """The bytes of a log holding `records` (serialized Record payloads), W&B's chunking."""
    out = bytearray(FILE_HEADER)
    for payload in records:
        room = BLOCK - len(out) % BLOCK
        if room < CHUNK_HEADER:
            out += b"\0" * room
            room = BLOCK
        if len(payload) + CHUNK_HEADER <= room:
            out += _chunk(1, payload)
            continue
        first = room - CHUNK_HEADER
        out += _chunk(2, payload[:first])
        payload = payload[first:]
        while len(payload) > BLOCK - CHUNK_HEADER:
            out += _chunk(3, payload[:BLOCK - CHUNK_HEADER])
            payload = payload[BLOCK - CHUNK_HEADER:]
        out += _chunk(4, payload)
    return bytes(out)


def run_records(run_id, name, start_time, samples, exit_code=None, producer="runmon 0.1.0"):
    """Header, run, `samples` stats records a tenth of a second apart, and an exit record (runtime in whole
    seconds, as W&B's format keeps it) unless `exit_code` is None."""
    records = [header_record(producer), run_record(run_id, name, start_time)]
    for i in range(samples):
        records.append(stats_record(start_time + i * 0.1, {"cpu": str(i % 100)}))
    if exit_code is not None:
        records.append(exit_record(exit_code, int((samples - 1) * 0.1)))
    return records


def write_run(wandb_dir, stamp, run_id, records):
    """wandb_dir/run-STAMP-ID/run-ID.wandb holding `records`; returns the log's path."""
    directory = os.path.join(wandb_dir, f"run-{stamp}-{run_id}")
    os.makedirs(os.path.join(directory, "files"), exist_ok=True)
    path = os.path.join(directory, f"run-{run_id}.wandb")
    with open(path, "wb") as f:
        f.write(frame(records))
    return path


def hold_lock(path):
    """Opens `path` holding the exclusive flock runmon's writer holds while it writes; close it to let go."""
    f = open(path, "rb")
    fcntl.flock(f, fcntl.LOCK_EX)
    return f
