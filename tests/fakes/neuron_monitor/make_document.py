#!/usr/bin/env python3
"""Synthetic neuron-monitor documents of a given instance shape, modelled field by field on the real
trn1.2xlarge report in tests/fixtures/neuron_monitor (the field set of the Neuron monitor user guide,
docs summarised in shared/spec/accelerators.md §2.3). The fake neuron-monitor (./neuron-monitor) replays
them for its long-line behaviour, and neuron_monitor_trn1.32xlarge.json in the fixtures was made with it.

The shapes are the instances runmon must keep up with: a trn1.2xlarge (1 device, 2 NeuronCores, 8 vCPUs),
a trn1.32xlarge (16 devices, 32 cores, 128 vCPUs) and a trn2.48xlarge (16 Trainium2 devices, 128 cores,
192 vCPUs). On the two big ones every core has a runtime of its own, as `torchrun --nproc_per_node=<cores>`
makes, each with a few loaded models; a trn2.48xlarge's document is then well over 1 MiB on one line.

What holds as in the real report: a runtime's `host` bytes are the sum of its host breakdown and its
`neuron_device` bytes the sum of its cores' breakdowns; a runtime reports only the cores it uses; the
vCPU `average_usage` is the mean of the per-vCPU `usage_data`; keys of per-core and per-vCPU maps are
decimal strings. The numbers come from a seeded generator, so a shape and seed give the same document on
every machine (the e2e tests regenerate what the fake printed).

Usage: make_document.py SHAPE [--seed N] [--models-per-runtime N] [--pretty]   (one line on stdout)"""
import argparse
import json
import random
import sys

# Instance shapes: devices, NeuronCores per device, vCPUs, host memory, device memory, hardware names.
SHAPES = {
    "trn1.2xlarge": {"devices": 1, "cores_per_device": 2, "vcpus": 8, "memory_total_bytes": 33117732864,
                     "device_memory_bytes": 32 << 30, "device_type": "trainium", "device_version": "v2",
                     "core_version": "v2", "one_runtime_per_core": False, "models_per_runtime": 2},
    "trn1.32xlarge": {"devices": 16, "cores_per_device": 2, "vcpus": 128, "memory_total_bytes": 549755813888,
                      "device_memory_bytes": 32 << 30, "device_type": "trainium", "device_version": "v2",
                      "core_version": "v2", "one_runtime_per_core": True, "models_per_runtime": 3},
    "trn2.48xlarge": {"devices": 16, "cores_per_device": 8, "vcpus": 192, "memory_total_bytes": 2199023255552,
                      "device_memory_bytes": 96 << 30, "device_type": "trainium2", "device_version": "v3",
                      "core_version": "v3", "one_runtime_per_core": True, "models_per_runtime": 10},
}
CPU_STATES = ("user", "nice", "system", "idle", "io_wait", "irq", "soft_irq")
LATENCY_PERCENTILES = ("p0", "p1", "p100", "p25", "p50", "p75", "p99")
FIRST_PID = 20000  # the runtimes' pids: FIRST_PID, FIRST_PID + 1, ... (a torchrun job's workers)


def round_percent(value):
    return round(value, 2)


def latency(rng):
    """A latency_stats percentile object in seconds, monotonic in the percentile as the real one is."""
    low = rng.uniform(5e-5, 2e-4)
    ordered = sorted(low * rng.uniform(1.0, 1.6) for _ in LATENCY_PERCENTILES[1:])
    values = {"p0": low, "p1": ordered[0], "p25": ordered[1], "p50": ordered[2], "p75": ordered[3],
              "p99": ordered[4], "p100": ordered[5]}
    return {name: values[name] for name in LATENCY_PERCENTILES}


def execution_stats(rng):
    total = latency(rng)
    return {
        "period": rng.uniform(0.999, 1.001),
        "error_summary": {"generic": rng.randrange(30000), "numerical": 0, "transient": 0, "model": 0, "runtime": 0,
                          "hardware": 0},
        "execution_summary": {"completed": rng.randrange(100, 400), "completed_with_err": 0,
                              "completed_with_num_err": 0, "timed_out": 0, "incorrect_input": 0,
                              "failed_to_queue": 0},
        "latency_stats": {"total_latency": total, "device_latency": {k: v * 0.97 for k, v in total.items()}},
        "error": "",
    }


def core_memory(rng):
    return {"constants": rng.randrange(0, 1 << 20, 4096), "model_code": rng.randrange(1 << 24, 1 << 27, 32),
            "model_shared_scratchpad": rng.randrange(0, 1 << 22, 4096), "runtime_memory": rng.randrange(0, 1 << 16),
            "tensors": rng.randrange(0, 1 << 24, 8)}


def loaded_model(rng, model_id, core, cores_per_device, subgraphs):
    """One entry of loaded_models: a compile-cache path as long as the real ones, a subgraph per core slot."""
    module = rng.randrange(10**18, 10**19)
    name = (f"/var/tmp/neuron-compile-cache/USER_neuroncc-2.3.0.4+864822b6b/MODULE_{module}/MODULE_{model_id % 7}_"
            f"SyncTensorsGraph.{rng.randrange(100, 999)}_{module}_ip-172-31-50-218.us-west-2.compute.internal-"
            f"{rng.getrandbits(32):08x}-{rng.randrange(10000, 99999)}-{rng.getrandbits(48):012x}/"
            f"{rng.getrandbits(128):032x}/MODULE")[:255]
    graphs = {}
    for index in range(subgraphs):
        code, constants = rng.randrange(1 << 14, 1 << 17, 128), rng.randrange(0, 1 << 17, 4096)
        host = rng.randrange(1 << 12, 1 << 16, 128)
        graphs[f"sg_{index:02d}"] = {
            "memory_used_bytes": {
                "host": host, "neuron_device": code + constants,
                "usage_breakdown": {
                    "host": {"application_memory": host, "constants": 0, "dma_buffers": 0, "tensors": 0},
                    "neuron_device": {"constants": constants, "model_code": code, "runtime_memory": 0, "tensors": 0},
                },
            },
            "neuroncore_index": core, "neuron_device_index": core // cores_per_device,
        }
    return {"name": name, "uuid": f"{rng.getrandbits(128):032x}", "model_id": model_id,
            "is_running": rng.random() < 0.5, "subgraphs": graphs}


def runtime(rng, pid, cores, shape, models):
    """A neuron_runtime_data entry for one application using `cores`."""
    per_core = {str(core): core_memory(rng) for core in cores}
    application, dma = rng.randrange(1 << 28, 1 << 30, 4096), rng.randrange(1 << 20, 1 << 24, 4096)
    host = {"application_memory": application, "constants": 0, "dma_buffers": dma, "tensors": 0}
    period = rng.uniform(0.999, 1.001)
    return {
        "pid": pid, "neuron_runtime_tag": str(pid), "error": "",
        "report": {
            "execution_stats": execution_stats(rng),
            "memory_used": {
                "period": period,
                "neuron_runtime_used_bytes": {
                    "host": sum(host.values()),
                    "neuron_device": sum(sum(usage.values()) for usage in per_core.values()),
                    "usage_breakdown": {"host": host, "neuroncore_memory_usage": per_core},
                },
                "loaded_models": [loaded_model(rng, 10001 + index, cores[index % len(cores)], shape["cores_per_device"],
                                               subgraphs=2 if shape["device_type"] == "trainium2" else 1)
                                  for index in range(models)],
                "error": "",
            },
            "neuron_runtime_vcpu_usage": {
                "period": period,
                "vcpu_usage": {"user": round_percent(rng.uniform(0.5, 25)),
                               "system": round_percent(rng.uniform(0.1, 5))},
                "error": "",
            },
            "neuroncore_counters": {
                "period": period,
                "neuroncores_in_use": {str(core): counters(rng, shape) for core in cores},
                "error": "",
            },
        },
    }


def counters(rng, shape):
    entry = {"neuroncore_utilization": rng.uniform(0, 100)}
    if shape["device_type"] == "trainium2":  # newer tools add the FLOPS of the period
        entry["flops"] = rng.randrange(10**12, 10**14)
    return entry


def cpu_usage(rng):
    busy = {"user": round_percent(rng.uniform(5, 40)), "nice": 0, "system": round_percent(rng.uniform(1, 6)),
            "io_wait": round_percent(rng.uniform(0, 1)), "irq": 0, "soft_irq": round_percent(rng.uniform(0, 0.5))}
    idle = round_percent(max(0.0, 100 - sum(busy.values())))
    return {state: (idle if state == "idle" else busy[state]) for state in CPU_STATES}


def system_data(rng, shape):
    per_vcpu = {str(cpu): cpu_usage(rng) for cpu in range(shape["vcpus"])}
    average = {state: round_percent(sum(usage[state] for usage in per_vcpu.values()) / shape["vcpus"]) or 0
               for state in CPU_STATES}
    total = shape["memory_total_bytes"]
    return {
        "memory_info": {"period": rng.uniform(0.999, 1.001), "memory_total_bytes": total,
                        "memory_used_bytes": rng.randrange(total // 10, total // 2, 4096), "swap_total_bytes": 0,
                        "swap_used_bytes": 0, "error": ""},
        "neuron_hw_counters": {
            "period": rng.uniform(0.999, 1.001),
            "neuron_devices": [{"neuron_device_index": device, "mem_ecc_corrected": rng.choice((0, 0, 0, 2)),
                                "mem_ecc_uncorrected": 0, "sram_ecc_uncorrected": 0,
                                "sram_ecc_corrected": rng.choice((0, 0, 1))}
                               for device in range(shape["devices"])],
            "error": "",
        },
        "vcpu_usage": {"period": rng.uniform(0.999, 1.001), "average_usage": average, "usage_data": per_vcpu,
                       "context_switch_count": rng.randrange(10**4, 10**7), "error": ""},
    }


def document(shape_name, seed=0, models_per_runtime=None):
    """The document (a dict) for the shape; the same for the same arguments."""
    shape = SHAPES[shape_name]
    rng = random.Random(f"{shape_name}/{seed}")
    models = shape["models_per_runtime"] if models_per_runtime is None else models_per_runtime
    core_count = shape["devices"] * shape["cores_per_device"]
    if shape["one_runtime_per_core"]:
        runtimes = [runtime(rng, FIRST_PID + core, [core], shape, models) for core in range(core_count)]
    else:
        runtimes = [runtime(rng, FIRST_PID, list(range(core_count)), shape, models)]
    return {
        "neuron_runtime_data": runtimes,
        "system_data": system_data(rng, shape),
        "instance_info": {"instance_name": "", "instance_id": f"i-{rng.getrandbits(68):017x}",
                          "instance_type": shape_name, "instance_availability_zone": "us-west-2d",
                          "instance_availability_zone_id": "usw2-az4", "instance_region": "us-west-2",
                          "ami_id": f"ami-{rng.getrandbits(68):017x}",
                          "subnet_id": f"subnet-{rng.getrandbits(68):017x}",
                          "error": ""},
        "neuron_hardware_info": {"neuron_device_type": shape["device_type"],
                                 "neuron_device_version": shape["device_version"],
                                 "neuroncore_version": shape["core_version"], "neuron_device_count": shape["devices"],
                                 "neuron_device_memory_size": shape["device_memory_bytes"],
                                 "neuroncore_per_device_count": shape["cores_per_device"],
                                 "logical_neuroncore_config": 1, "error": ""},
    }


def document_line(shape_name, seed=0, models_per_runtime=None):
    """The document as neuron-monitor prints it: compact JSON on one line, newline included."""
    return json.dumps(document(shape_name, seed, models_per_runtime), separators=(",", ":")) + "\n"


def main():
    parser = argparse.ArgumentParser(description="Print a synthetic neuron-monitor document.")
    parser.add_argument("shape", choices=sorted(SHAPES))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--models-per-runtime", type=int)
    parser.add_argument("--pretty", action="store_true", help="indented, for reading (not one line)")
    args = parser.parse_args()
    if args.pretty:
        json.dump(document(args.shape, args.seed, args.models_per_runtime), sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(document_line(args.shape, args.seed, args.models_per_runtime))


if __name__ == "__main__":
    main()
