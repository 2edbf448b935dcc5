#!/usr/bin/env bash
# Builds runmon's Debian package (`cpack -G DEB`, cmake/RunmonPackage.cmake) from a Release build, installs
# it with apt-get as a user would, and checks what the user gets: the package holds every file
# `cmake --install` installs, under /usr; its Depends came from dpkg-shlibdeps (printed); /usr/bin/runmon
# runs, records a short run and dumps it, and finds its modules in /usr/lib/runmon/modules; the man pages
# are where man looks; the Python module imports from /usr/lib/python3/dist-packages; the C++ API's header,
# CMake package and pkg-config file are in place. Then it removes the package and checks nothing of it is
# left, so the tests that follow see the machine as before (the package is removed on failure too).
# CI runs it after scripts/check-makefiles-build.sh and reuses that script's Release build directory
# (RUNMON_MAKEFILES_BUILD_DIR, default build-makefiles; RUNMON_DEB_BUILD_DIR names another one), so only
# what runmon alone does not need (the man pages) is left to build. Needs root or sudo, as
# scripts/install-deps.sh does.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${RUNMON_DEB_BUILD_DIR:-${RUNMON_MAKEFILES_BUILD_DIR:-build-makefiles}}
say() { echo "check-deb-package: $*"; }
fail() {
  echo "check-deb-package: $*" >&2
  exit 1
}
sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)

if [ -f "$build_dir/CMakeCache.txt" ]; then
  cmake "$build_dir" >/dev/null  # the directory's own generator and settings; changed CMake files read again
else
  cmake -S . -B "$build_dir" -G "Unix Makefiles" -DCMAKE_BUILD_TYPE=Release -DRUNMON_BUILD_TESTS=OFF \
    -DRUNMON_BUILD_BENCH=OFF >/dev/null
fi
build_type=$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$build_dir/CMakeCache.txt")
[ "$build_type" = Release ] || fail "$build_dir is a '$build_type' build, not Release"
version=$(sed -n 's/^CMAKE_PROJECT_VERSION:[A-Z]*=//p' "$build_dir/CMakeCache.txt")
cmake --build "$build_dir" -j"$(nproc)"

work=$(mktemp -d)
installed=0
cleanup() {
  if [ "$installed" = 1 ]; then
    "${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get remove --purge -y -qq runmon >/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

rm -f "$build_dir"/runmon_*.deb
(cd "$build_dir" && cpack -G DEB) >"$work/cpack.log" 2>&1 || {
  cat "$work/cpack.log" >&2
  fail "cpack -G DEB failed"
}
deb="$build_dir/runmon_${version}_$(dpkg --print-architecture).deb"
[ -f "$deb" ] || fail "cpack made no $deb: $(ls "$build_dir"/*.deb 2>/dev/null)"
dpkg-deb -I "$deb"
depends=$(dpkg-deb -f "$deb" Depends)
[ -n "$depends" ] || fail "the package has no Depends (dpkg-shlibdeps did not run)"
say "Depends: $depends"
say "$(basename "$deb"): $(du -k "$deb" | cut -f1) KiB"

# The package holds what `cmake --install` installs, under /usr, and nothing else.
cmake --install "$build_dir" --prefix "$work/prefix" >/dev/null
(cd "$work/prefix" && find . ! -type d | sed 's|^\./|/usr/|' | sort) >"$work/installed.txt"
dpkg-deb --fsys-tarfile "$deb" | tar -t | grep -v '/$' | sed 's|^\./|/|' | sort >"$work/packaged.txt"
if ! diff -u "$work/installed.txt" "$work/packaged.txt" >"$work/files.diff"; then
  cat "$work/files.diff" >&2
  fail "the package's files differ from what cmake --install installs (- installed only, + packaged only)"
fi
say "$(wc -l <"$work/packaged.txt") files, the same as cmake --install's"

if dpkg-query -W -f='${Status}' runmon 2>/dev/null | grep -q "install ok installed"; then
  fail "a runmon package is installed already: remove it first (apt-get remove runmon)"
fi
[ ! -e /usr/bin/runmon ] || fail "/usr/bin/runmon exists and is no package's: it would be overwritten"
installed=1
"${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$PWD/$deb" >"$work/apt.log" 2>&1 || {
  cat "$work/apt.log" >&2
  fail "apt-get install $deb failed"
}

cd "$work"  # nothing of the checkout on Python's path or under the current directory
[ "$(command -v runmon)" = /usr/bin/runmon ] || fail "runmon on PATH is $(command -v runmon), not /usr/bin/runmon"
[ "$(runmon --version)" = "runmon $version" ] || fail "runmon --version says '$(runmon --version)'"
runmon run --interval 0.2s --dir "$work/wandb" -- true
log=$(find "$work/wandb" -name 'run-*.wandb' | head -1)
[ -s "$log" ] || fail "runmon run wrote no run log under $work/wandb"
runmon dump "$work/wandb" >"$work/dump.jsonl"
for record_type in stats exit; do
  grep -q "\"record_type\":\"$record_type\"" "$work/dump.jsonl" ||
    fail "runmon dump shows no $record_type record: $(head -c 300 "$work/dump.jsonl")"
done
say "runmon run recorded $log; runmon dump read $(wc -l <"$work/dump.jsonl") records"
# The http-server module from /usr/lib/runmon/modules: the exporter serves until the timeout stops it (124);
# without its module it would exit 1 at once.
status=0
timeout 1 runmon exporter --listen 127.0.0.1:0 >/dev/null 2>"$work/exporter.err" || status=$?
[ "$status" = 124 ] || fail "runmon exporter exited $status: $(cat "$work/exporter.err")"
dpkg -L runmon | grep -qx /usr/share/man/man1/runmon-run.1 || fail "the package has no runmon-run(1)"
if [ ! -e /usr/share/man/man1/runmon-run.1 ]; then
  say "man pages: not installed on this machine (dpkg's path-exclude), not checked with man"
elif command -v man >/dev/null; then
  [ "$(man -w runmon-run)" = /usr/share/man/man1/runmon-run.1 ] || fail "man -w runmon-run: $(man -w runmon-run 2>&1)"
  say "man -w runmon-run: $(man -w runmon-run)"
fi
# Debian's python3 (a python3 earlier on PATH, pyenv's, does not read /usr/lib/python3/dist-packages).
module=$(/usr/bin/python3 -c 'import runmon; print(runmon.__file__)')
[ "$module" = /usr/lib/python3/dist-packages/runmon.py ] || fail "/usr/bin/python3 imports runmon from $module"
say "/usr/bin/python3 imports runmon from $module"
# The C++ API: its header, and its CMake package and pkg-config file wherever cmake/RunmonInstall.cmake
# puts them (under share/ or lib/), found where find_package and pkg-config look.
dpkg -L runmon >"$work/listed.txt"
[ -f /usr/include/runmon/log.hpp ] || fail "/usr/include/runmon/log.hpp is missing"
config=$(grep -E '^/usr/(share|lib)/cmake/runmon/runmonConfig\.cmake$' "$work/listed.txt" || true)
if [ -z "$config" ] || [ ! -f "$config" ]; then fail "no runmonConfig.cmake in /usr/share/cmake or /usr/lib/cmake"; fi
say "find_package(runmon): $(dirname "$config")"
if command -v pkg-config >/dev/null; then
  [ "$(pkg-config --modversion runmon)" = "$version" ] || fail "pkg-config runmon: $(pkg-config --modversion runmon 2>&1)"
fi

"${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get remove --purge -y -qq runmon >/dev/null
installed=0
dpkg-query -W -f='${Status}' runmon 2>/dev/null | grep -q "install ok installed" && fail "runmon is still installed"
[ ! -e /usr/bin/runmon ] || fail "/usr/bin/runmon is left after the package's removal"
while read -r path; do
  [ -d "$path" ] || [ ! -e "$path" ] || fail "$path is left after the package's removal"
done <"$work/listed.txt"
for path in /usr/lib/runmon /usr/include/runmon "$(dirname "$config")"; do
  [ ! -e "$path" ] || fail "$path is left after the package's removal"
done
say "the package builds, installs, runs and is removed cleanly"
