#!/usr/bin/env bash
# Checks runmon's NVIDIA collector against a real GPU: samples once with runmon and compares each device's
# values with what nvidia-smi reports at the same moment. Run it on a machine with an NVIDIA GPU and its
# driver (it is not part of ctest: CI has no GPU):
#   tests/device/nvml-check.sh [path/to/runmon]
# Tolerances allow for the two tools reading at slightly different instants: utilisation moves fast, power
# is averaged over 1 s on recent GPUs, clocks and temperature drift a little.
set -euo pipefail
runmon=${1:-build/runmon}
command -v nvidia-smi >/dev/null || { echo "nvml-check: nvidia-smi not found: no NVIDIA driver here" >&2; exit 2; }
[ -x "$runmon" ] || { echo "nvml-check: $runmon is not an executable (build runmon first)" >&2; exit 2; }

echo "== nvidia-smi -L"
nvidia-smi -L
echo "== runmon info (runmon.nvidia, gpu_nvidia)"
"$runmon" info | python3 -c 'import json,sys; m=json.load(sys.stdin); print(json.dumps({k: m.get(k) for k in ("gpu","gpu_count","cuda_version","gpu_nvidia")}, indent=1)); print(json.dumps(m.get("runmon",{}).get("nvidia"), indent=1))'

fields=index,utilization.gpu,utilization.memory,memory.used,memory.total,temperature.gpu,power.draw,enforced.power.limit,clocks.sm,clocks.mem,clocks.gr,fan.speed
smi=$(nvidia-smi --query-gpu=$fields --format=csv,noheader,nounits)
# The default interval gives the first tick 5 s for nvmlInit and the device walk.
sample=$("$runmon" sample --once --json)
echo "== runmon sample --once --json: $(echo "$sample" | python3 -c 'import json,sys; print(len([k for k in json.load(sys.stdin) if k.startswith("gpu.")]))') gpu.* keys"

SMI="$smi" SAMPLE="$sample" python3 - <<'PY'
import json, os, sys
sample = json.loads(os.environ["SAMPLE"])
# field -> (runmon leaf, scale to nvidia-smi's unit, absolute tolerance, relative tolerance)
checks = [
    ("utilization.gpu", "gpu", 1, 30, 0), ("utilization.memory", "memory", 1, 30, 0),
    ("memory.used", "memoryAllocatedBytes", 1 / 2**20, 64, 0.05), ("temperature.gpu", "temp", 1, 3, 0),
    ("power.draw", "powerWatts", 1, 10, 0.15), ("enforced.power.limit", "enforcedPowerLimitWatts", 1, 1, 0.01),
    ("clocks.sm", "smClock", 1, 50, 0.10), ("clocks.mem", "memoryClock", 1, 50, 0.10),
    ("clocks.gr", "graphicsClock", 1, 50, 0.10), ("fan.speed", "fanSpeed", 1, 5, 0),
]
names = "index,utilization.gpu,utilization.memory,memory.used,memory.total,temperature.gpu,power.draw,enforced.power.limit,clocks.sm,clocks.mem,clocks.gr,fan.speed".split(",")
failures = 0
for line in os.environ["SMI"].strip().splitlines():
    row = dict(zip(names, [v.strip() for v in line.split(",")]))
    i = row["index"]
    print(f"-- GPU {i}")
    for field, leaf, scale, absolute, relative in checks:
        key = f"gpu.{i}.{leaf}"
        smi = row.get(field, "")
        ours = sample.get(key)
        if smi in ("", "[N/A]", "[Not Supported]", "N/A"):
            status = "ok (absent in both)" if ours is None else "note: nvidia-smi has none, runmon has one"
        elif ours is None:
            status = "MISSING in runmon"; failures += 1
        else:
            mine = ours * scale
            allowed = max(absolute, relative * float(smi))
            status = "ok" if abs(mine - float(smi)) <= allowed else "DIFFERS"
            failures += status == "DIFFERS"
        print(f"   {field:22s} nvidia-smi {smi:>10s}   runmon {key} = {ours!r:<22} {status}")
    for leaf in ("powerPercent", "energyJoules", "clocksEventReasons", "correctedMemoryErrors",
                 "unCorrectedMemoryErrors", "smActive", "pcieTxBytes", "nvlinkTxBytes"):
        print(f"   {'':22s} {'':21s} runmon gpu.{i}.{leaf} = {sample.get(f'gpu.{i}.{leaf}')!r}")
print("nvml-check:", "all values agree" if failures == 0 else f"{failures} value(s) disagree")
sys.exit(1 if failures else 0)
PY
