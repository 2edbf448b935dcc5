#!/usr/bin/env bash
# The README's second command: the whole test suite. Builds runmon with clang, AddressSanitizer and
# UndefinedBehaviorSanitizer, plus the libFuzzer targets, and runs everything through ctest: unit tests,
# collectors on fixture trees, the sampler, end-to-end checks of the binary, and a short run of every
# fuzz target.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${RUNMON_TEST_BUILD_DIR:-build-test}
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DRUNMON_SANITIZE=ON -DRUNMON_FUZZ=ON -DRUNMON_BUILD_BENCH=OFF
cmake --build "$build_dir" -j"$(nproc)"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$PWD/tests/lsan_suppressions.txt:print_suppressions=0}
ctest --test-dir "$build_dir" --output-on-failure -j"$(nproc)" --timeout 300
