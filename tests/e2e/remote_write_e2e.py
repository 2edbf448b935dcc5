"""Shared pieces of the remote-write end-to-end tests: a Prometheus server started with its remote-write
receiver on a free loopback port (stopped and started again on the same data directory), PromQL queries, a
scripted fake receiver (answers 500, 429 with Retry-After, 400 or nothing at all, and keeps every request
it got), and a decoder of remote-write bodies (snappy block format and the WriteRequest protobuf, by hand:
the tests use Python's standard library only)."""
import http.server
import json
import os
import socket
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

from http_e2e import Process, free_port, wait_for

PROMETHEUS = "/usr/bin/prometheus"


def _varint(buf, pos):
    """(value, position after it) of the base-128 varint at `pos` (snappy's length and protobuf's)."""
    result = shift = 0
    while True:
        byte = buf[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, pos
        shift += 7


def snappy_decompress(data):
    """The snappy block format (format_description.txt): a varint length, then literals and copies."""
    length, pos = _varint(data, 0)
    out = bytearray()
    while pos < len(data):
        tag = data[pos]
        pos += 1
        kind = tag & 3
        if kind == 0:
            size = tag >> 2
            if size >= 60:
                extra = size - 59
                size = int.from_bytes(data[pos:pos + extra], "little")
                pos += extra
            size += 1
            out += data[pos:pos + size]
            pos += size
            continue
        if kind == 1:
            size = ((tag >> 2) & 7) + 4
            offset = ((tag >> 5) << 8) | data[pos]
            pos += 1
        elif kind == 2:
            size = (tag >> 2) + 1
            offset = int.from_bytes(data[pos:pos + 2], "little")
            pos += 2
        else:
            size = (tag >> 2) + 1
            offset = int.from_bytes(data[pos:pos + 4], "little")
            pos += 4
        for _ in range(size):
            out.append(out[-offset])
    assert len(out) == length, (len(out), length)
    return bytes(out)


def _fields(buf):
    """(field number, wire type, value) of a protobuf message: varints, 64-bit and length-delimited."""
    pos = 0
    while pos < len(buf):
        key, pos = _varint(buf, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _varint(buf, pos)
        elif wire == 1:
            value = buf[pos:pos + 8]
            pos += 8
        elif wire == 2:
            size, pos = _varint(buf, pos)
            value = buf[pos:pos + size]
            pos += size
        else:
            raise ValueError(f"wire type {wire}")
        yield number, wire, value


def decode_write_request(body):
    """[(labels dict, [(timestamp ms, value)])] of a snappy-compressed prometheus.WriteRequest."""
    import struct
    series = []
    for number, _, timeseries in _fields(snappy_decompress(body)):
        if number != 1:
            continue
        labels = {}
        points = []
        for field, _, value in _fields(timeseries):
            if field == 1:
                label = {n: v.decode() for n, _, v in _fields(value)}
                labels[label.get(1, "")] = label.get(2, "")
            elif field == 2:
                sample_value, timestamp = 0.0, 0
                for n, _, v in _fields(value):
                    if n == 1:
                        sample_value = struct.unpack("<d", v)[0]
                    elif n == 2:
                        timestamp = v - (1 << 64) if v >= 1 << 63 else v
                points.append((timestamp, sample_value))
        series.append((labels, points))
    return series


class PrometheusServer:
    """Debian's Prometheus with --web.enable-remote-write-receiver on 127.0.0.1 and a free port."""

    def __init__(self, directory, out_of_order_window=None):
        self.directory = directory
        self.port = free_port()
        self.config = os.path.join(directory, "prometheus.yml")
        with open(self.config, "w") as f:
            f.write("global:\n  scrape_interval: 1m\n")
            if out_of_order_window:
                f.write(f"storage:\n  tsdb:\n    out_of_order_time_window: {out_of_order_window}\n")
        self.process = None
        self.start()

    @property
    def write_url(self):
        return f"http://127.0.0.1:{self.port}/api/v1/write"

    def start(self):
        self.process = Process([PROMETHEUS, f"--config.file={self.config}",
                                f"--storage.tsdb.path={os.path.join(self.directory, 'tsdb')}",
                                f"--web.listen-address=127.0.0.1:{self.port}",
                                "--web.enable-remote-write-receiver"])
        wait_for(self.ready, timeout=60, what="Prometheus ready")

    def ready(self):
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/-/ready", timeout=2) as response:
                return response.status == 200
        except (OSError, urllib.error.URLError):
            if self.process.proc.poll() is not None:
                raise AssertionError("Prometheus exited:\n" + self.process.output()[-4000:])
            return False

    def stop(self):
        status = self.process.stop()
        output = self.process.output()
        self.process.close()
        assert status == 0, output[-4000:]

    def query(self, expression, at=None):
        parameters = {"query": expression}
        if at is not None:
            parameters["time"] = f"{at:.3f}"
        url = f"http://127.0.0.1:{self.port}/api/v1/query?" + urllib.parse.urlencode(parameters)
        with urllib.request.urlopen(url, timeout=10) as response:
            answer = json.loads(response.read())
        assert answer["status"] == "success", answer
        return answer["data"]["result"]

    def scalar(self, expression, at=None):
        """The one value of `expression`, 0 when it has none."""
        result = self.query(expression, at)
        return float(result[0]["value"][1]) if result else 0.0


class FakeReceiver:
    """A remote-write receiver on 127.0.0.1 answering from a script: each entry is (status, headers, body)
    for one request, or "hang" (the request is read and never answered); past the script, 204. Every request
    it read is kept with its arrival time."""

    def __init__(self, script=(), port=0):
        self.script = list(script)
        self.requests = []  # (monotonic time, headers dict, body bytes, answered status or "hang")
        self.lock = threading.Lock()
        self.release = threading.Event()
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                with receiver.lock:
                    answer = receiver.script.pop(0) if receiver.script else (204, {}, b"")
                    receiver.requests.append((time.monotonic(), dict(self.headers), body,
                                              "hang" if answer == "hang" else answer[0]))
                if answer == "hang":
                    receiver.release.wait(120)
                    self.close_connection = True
                    return
                status, headers, text = answer
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(text)))
                self.end_headers()
                self.wfile.write(text)

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}/api/v1/write"

    def answered(self, status):
        with self.lock:
            return [r for r in self.requests if r[3] == status]

    def close(self):
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


def eight_gpu_environment(directory):
    """The environment of a node of 8 GPUs: the fake NVML (tests/fakes/nvml) with a scenario of eight copies of
    tests/nvidia/scenarios/two_gpus.json's first GPU, written in `directory`. About 200 values a sample."""
    library = os.environ.get("RUNMON_FAKE_NVML_FULL", "")
    scenarios = os.environ.get("RUNMON_FAKE_NVML_SCENARIOS", "")
    if not (library and os.path.exists(library) and scenarios):
        raise AssertionError("RUNMON_FAKE_NVML_FULL and RUNMON_FAKE_NVML_SCENARIOS must name the built fake NVML")
    with open(os.path.join(scenarios, "two_gpus.json")) as f:
        scenario = json.load(f)
    first = scenario["devices"][0]
    devices = []
    for index in range(8):
        device = json.loads(json.dumps(first))
        device["uuid"] = f"GPU-00000000-0000-4000-8000-{index:012d}"
        device["pci"]["bus_id"] = f"00000000:{0x19 + index:02X}:00.0"
        devices.append(device)
    scenario["devices"] = devices
    path = os.path.join(directory, "eight_gpus.json")
    with open(path, "w") as f:
        json.dump(scenario, f)
    return {"RUNMON_NVML_LIBRARY": library, "RUNMON_FAKE_NVML_SCENARIO": path}


def refused_port():
    """A loopback port nothing listens on."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
