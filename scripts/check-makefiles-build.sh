#!/usr/bin/env bash
# Builds runmon (Release, the binary and its modules) with CMake's default generator, Unix Makefiles, and
# checks the result: a run is recorded and read back, and neither `runmon run` nor `runmon sample` maps the
# libraries only the servers, the scraper and the terminal need. CI runs it beside the sanitizer build of
# scripts/test.sh (which uses Ninja), so both generators stay working.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${RUNMON_MAKEFILES_BUILD_DIR:-build-makefiles}
cmake -S . -B "$build_dir" -G "Unix Makefiles" -DCMAKE_BUILD_TYPE=Release -DRUNMON_BUILD_TESTS=OFF \
  -DRUNMON_BUILD_BENCH=OFF >/dev/null
cmake --build "$build_dir" --target runmon -j"$(nproc)"
runmon="$build_dir/runmon"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$runmon" run --interval 0.2s --dir "$work/wandb" -- sleep 1
"$runmon" dump --format csv "$work/wandb" | head -3
heavy='libcurl|libssl|libcrypto|libcpp-httplib|libncursesw|libtinfo|runmon-modules'
for command in "run --dir $work/wandb -- sleep 5" "sample --interval 0.1 --json"; do
  # shellcheck disable=SC2086 # the command's words
  "$runmon" $command >/dev/null &
  pid=$!
  sleep 2
  if grep -E "$heavy" "/proc/$pid/maps" >"$work/mapped"; then
    echo "check-makefiles-build: runmon $command maps what it does not use:" >&2
    awk '{print $6}' "$work/mapped" | sort -u >&2
    kill "$pid"
    exit 1
  fi
  echo "check-makefiles-build: runmon ${command%% *}: $(grep VmRSS "/proc/$pid/status" | tr -s ' \t' ' ')"
  kill "$pid"
  wait "$pid" || true
done
echo "check-makefiles-build: the Unix Makefiles build works"
