#!/usr/bin/env bash
# The README's first command: installs what is needed, builds runmon (Release) and shows it at work on
# a small workload (a process tree that computes and allocates for a few seconds).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DRUNMON_BUILD_TESTS=OFF >/dev/null
cmake --build build -j2
echo
echo "== runmon sample: a workload of 3 busy processes for 4 seconds, sampled every second =="
sh -c 'for i in 1 2 3; do (end=$(($(date +%s) + 4)); while [ "$(date +%s)" -lt "$end" ]; do :; done) & done; wait' &
workload=$!
build/runmon sample --pid "$workload" --interval 1s --count 4
wait "$workload" || true
echo
echo "== runmon info: the machine's metadata =="
build/runmon info
