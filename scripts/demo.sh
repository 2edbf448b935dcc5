#!/usr/bin/env bash
# The README's first command: installs what is needed, builds runmon (Release), records a run of a small
# workload (a process tree that computes for a few seconds) with `runmon run` and shows what it wrote, as
# CSV, as records and as a frame of the terminal UI.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DRUNMON_BUILD_TESTS=OFF >/dev/null
cmake --build build -j2
echo
echo "== runmon run: a workload of 3 busy processes for 4 seconds, sampled every second =="
build/runmon run --interval 1s --dir build/wandb --name demo -- \
  sh -c 'for i in 1 2 3; do (end=$(($(date +%s) + 4)); while [ "$(date +%s)" -lt "$end" ]; do :; done) & done; wait'
echo
echo "== the run it wrote (build/wandb/latest-run), as CSV: time, process-tree CPU %, threads, RSS MiB =="
build/runmon dump --format csv build/wandb | cut -d, -f1-5
echo
echo "== its records (runmon dump build/wandb; first 300 characters of each) =="
build/runmon dump build/wandb | cut -c1-300
echo
echo "== the run in runmon's terminal UI (one frame; run 'build/runmon leet build/wandb' to browse it live) =="
build/runmon leet build/wandb/latest-run --print-frame 120x36
