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
heavy='libcurl|libssl|libcrypto|libcpp-httplib|libncursesw|libtinfo|libsimdjson|runmon-modules'
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
# The modules of this build: the exporter and the dashboard answer, each through runmon-modules/http-server.so.
fetch() {
  python3 -c 'import sys, time, urllib.request
for _ in range(100):
    try:
        body = urllib.request.urlopen(sys.argv[1], timeout=5).read().decode()
        break
    except OSError:
        time.sleep(0.1)
else:
    sys.exit("no answer from " + sys.argv[1])
if sys.argv[2] not in body:
    sys.exit(sys.argv[1] + " does not hold " + sys.argv[2])' "$1" "$2"
}
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
port=$(free_port)
"$runmon" exporter --listen "127.0.0.1:$port" 2>/dev/null &
pid=$!
fetch "http://127.0.0.1:$port/metrics" "runmon_"
kill "$pid"
wait "$pid" || true
port=$(free_port)
"$runmon" serve --logdir "$work/wandb" --port "$port" >/dev/null &
pid=$!
fetch "http://127.0.0.1:$port/api/runs" '"runs"'
fetch "http://127.0.0.1:$port/" "<html"
kill "$pid"
wait "$pid" || true
echo "check-makefiles-build: the Unix Makefiles build works"
