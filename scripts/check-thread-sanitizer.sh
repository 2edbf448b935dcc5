#!/usr/bin/env bash
# The in-process API (include/runmon/run.hpp, runmon.h) under ThreadSanitizer: its test (tests/api/
# run_api_test.cpp: threads logging while the run finishes, the sampler's and the idle-row threads beside
# them, a fork) built in a build of its own with clang and -fsanitize=thread, and run; any data race
# reported fails it. CI runs it beside the AddressSanitizer build of scripts/test.sh, which cannot carry
# ThreadSanitizer too. Only the test and the libraries it links are compiled.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${RUNMON_TSAN_BUILD_DIR:-build-tsan}
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DRUNMON_SANITIZE_THREAD=ON \
  -DRUNMON_LEAN_RUNTIME=OFF -DRUNMON_BUILD_BENCH=OFF >/dev/null
cmake --build "$build_dir" --target run_api_test -j"$(nproc)"
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1}
"$build_dir/tests/api/run_api_test"
