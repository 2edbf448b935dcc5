#!/usr/bin/env python3
"""What one TPU sample costs: runmon's TPU collector beside a tpu-info-style Python client, both reading
every metric of the registry from the same fake runtime-metrics service (tests/fakes/tpu_runtime_service,
answering tests/fixtures/tpu/runtime_v5e_4chip.json: a 4-chip v5e host, 15 metrics, 4 devices, the
megascale latency distributions with three buffer-size labels), started here on a free loopback port, out
of both processes, so neither side pays for the server.

The peer does what tpu-info and W&B's collector do per sample: one GetRuntimeMetric call after another for
every metric name of the registry (grpcio, Debian's python3-grpcio, on one channel), each response decoded
into protobuf messages (the classes built from runmon's .proto by protoc --descriptor_set_out) and turned
into tpu.* values (gauges by device, distributions into mean and interpolated percentiles). Its CPU is
getrusage over --samples samples, best of --repeats. runmon's side is the build's tpu_bench
(build/tpu_bench: the collector itself, with the gRPC module's client linked in, one batch per sample).

Usage: bench/run_tpu_bench.py --bench-binary build/tpu_bench --service build/tests/fakes/tpu_runtime_service/fake_tpu_runtime_service
       [--samples 2000] [--repeats 3]"""
import argparse
import os
import re
import resource
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..")
PROTO_DIR = os.path.join(ROOT, "src", "collectors", "tpu")
PROTO = "tpu_runtime_metrics.proto"
FIXTURE = os.path.join(ROOT, "tests", "fixtures", "tpu", "runtime_v5e_4chip.json")
RUNMON_FIGURE = re.compile(r"^runmon tpu sample: ([0-9.]+) us CPU/sample, ([0-9.]+) us wall/sample, (\d+) keys$",
                           re.MULTILINE)
METRICS = [
    "tpu.runtime.tensorcore.idle_duration.seconds", "tpu.runtime.tensorcore.dutycycle.percent",
    "tpu.runtime.hbm.memory.total.bytes", "tpu.runtime.hbm.memory.usage.bytes", "tpu.runtime.hbm.utilization.percent",
    "megascale.dcn_transfer_latencies.microsecond.cumulative.distribution",
    "megascale.dcn_inbound_transfer_latencies.microsecond.cumulative.distribution",
    "megascale.host_to_device_transfer_latencies.microsecond.cumulative.distribution",
    "megascale.device_to_host_transfer_latencies.microsecond.cumulative.distribution",
    "megascale.collective_end_to_end_latencies.microsecond.cumulative.distribution",
    "megascale.mxla_compute_latencies.microsecond.cumulative.distribution",
    "megascale.grpc_tcp_min_rtt.microsecond.cumulative.distribution",
    "megascale.grpc_tcp_delivery_rate.Mbps.cumulative.distribution",
    "hlo.execution.timing.distribution.microseconds", "hlo.queue.size.gauge",
]


def message_classes(workdir):
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
    descriptor_set = os.path.join(workdir, "tpu.pb")
    subprocess.run(["protoc", f"--proto_path={PROTO_DIR}", "--include_imports", f"--descriptor_set_out={descriptor_set}",
                    PROTO], check=True)
    files = descriptor_pb2.FileDescriptorSet()
    with open(descriptor_set, "rb") as f:
        files.ParseFromString(f.read())
    pool = descriptor_pool.DescriptorPool()
    for file in files.file:
        pool.Add(file)
    factory = message_factory.MessageFactory(pool)

    def cls(name):
        return factory.GetPrototype(pool.FindMessageTypeByName(f"tpu.monitoring.runtime.{name}"))
    return cls("MetricRequest"), cls("MetricResponse")


def bounds(options):
    kind = options.WhichOneof("options")
    if kind == "exponential_buckets":
        e = options.exponential_buckets
        return [e.scale * e.growth_factor ** (i + 1) for i in range(e.num_finite_buckets)]
    if kind == "linear_buckets":
        lin = options.linear_buckets
        return [lin.offset + lin.width * (i + 1) for i in range(lin.num_finite_buckets)]
    return list(options.explicit_buckets.bounds) if kind == "explicit_buckets" else []


def percentile(distribution, upper, total, q):
    target, cumulative = total * q, 0
    for i, count in enumerate(distribution.bucket_counts):
        cumulative += count
        if cumulative < target:
            continue
        low = 0.0 if i == 0 else upper[min(i - 1, len(upper) - 1)]
        high = upper[min(i, len(upper) - 1)]
        return low + (target - (cumulative - count)) / count * (high - low)
    return upper[-1]


def peer_sample(call, request_class):
    """One sample as tpu-info / W&B take it: a call per metric, decoded, into keys."""
    values = {}
    for name in METRICS:
        response = call(request_class(metric_name=name), timeout=0.5)
        for index, metric in enumerate(response.metric.metrics):
            kind = metric.WhichOneof("measure")
            if kind == "gauge":
                gauge = metric.gauge
                value = gauge.as_int if gauge.WhichOneof("value") == "as_int" else gauge.as_double
                values[f"{name}.{metric.attribute.value.int_attr}.{index}"] = value
            elif kind == "distribution" and metric.distribution.count > 0:
                d = metric.distribution
                upper, total = bounds(d.bucket_options), sum(d.bucket_counts)
                values[f"{name}.{index}.mean"] = d.mean
                if upper and total:
                    for q in (0.5, 0.9, 0.95, 0.999):
                        values[f"{name}.{index}.{q}"] = percentile(d, upper, total, q)
            elif kind == "summary" and metric.summary.sample_count > 0:
                values[f"{name}.{index}.mean"] = metric.summary.sample_sum / metric.summary.sample_count
                for q in metric.summary.quantile:
                    values[f"{name}.{index}.{q.quantile}"] = q.value
    return values


def cpu_seconds():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bench-binary", required=True)
    parser.add_argument("--service", required=True, help="the fake_tpu_runtime_service executable")
    parser.add_argument("--samples", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    import grpc
    service = subprocess.Popen([args.service, "--responses", FIXTURE, "--port", "0"], stdout=subprocess.PIPE, text=True)
    try:
        address = service.stdout.readline().split()[1]
        runmon = subprocess.run([args.bench_binary, address, str(args.samples)], capture_output=True, text=True,
                                check=True)
        figure = RUNMON_FIGURE.search(runmon.stdout)
        if not figure:
            sys.exit(f"run_tpu_bench: no figure in {runmon.stdout!r} {runmon.stderr!r}")
        runmon_us, runmon_wall_us, keys = float(figure.group(1)), float(figure.group(2)), int(figure.group(3))
        with tempfile.TemporaryDirectory() as workdir:
            request_class, response_class = message_classes(workdir)
        channel = grpc.insecure_channel(address)
        call = channel.unary_unary("/tpu.monitoring.runtime.RuntimeMetricService/GetRuntimeMetric",
                                   request_serializer=lambda m: m.SerializeToString(),
                                   response_deserializer=response_class.FromString)
        for _ in range(20):
            peer_values = peer_sample(call, request_class)
        best = float("inf")
        for _ in range(args.repeats):
            start = cpu_seconds()
            for _ in range(args.samples // 4):
                peer_sample(call, request_class)
            best = min(best, (cpu_seconds() - start) / (args.samples // 4))
        channel.close()
    finally:
        service.terminate()
        service.wait()
    peer_us = best * 1e6
    print(f"service: 4-chip v5e, {len(METRICS)} metrics; runmon {keys} keys, the peer {len(peer_values)} values")
    print(f"runmon (one batch, C++ gRPC): {runmon_us:.0f} us CPU/sample ({runmon_wall_us:.0f} us wall)")
    print(f"tpu-info-style Python client (a call per metric): {peer_us:.0f} us CPU/sample")
    print(f"ratio: {peer_us / runmon_us:.1f}x")


if __name__ == "__main__":
    main()
