#!/usr/bin/env bash
# Installs every Debian 12 package runmon needs to build, test and benchmark. Idempotent; needs root
# (or sudo). Everything comes from Debian's archive; the dashboard's JavaScript packages come from the npm
# registry at build time (`npm ci`, pinned by web/package-lock.json and tests/browser/package-lock.json).
set -euo pipefail
packages=(
  cmake ninja-build g++ clang libclang-rt-14-dev lld pkg-config
  libfmt-dev nlohmann-json3-dev libsimdjson-dev libcli11-dev libprotobuf-dev protobuf-compiler zlib1g-dev
  libgrpc++-dev protobuf-compiler-grpc
  libgtest-dev libgmock-dev libbenchmark-dev libre2-dev libncurses-dev libcpp-httplib-dev
  libcurl4-openssl-dev libsnappy-dev libpng-dev libjpeg62-turbo-dev chromium prometheus prometheus-node-exporter
  python3 python3-psutil python3-protobuf python3-grpcio procps tmux valgrind rocm-smi
  # The Debian package (cpack -G DEB: dpkg-shlibdeps, and file to find the binaries) and the man pages' test
  dpkg-dev file groff-base
)
# Node.js and npm build the dashboard (web/) and drive the browser tests. Debian's packages, unless a
# Node.js with its own npm is already installed (Debian's npm package would conflict with it).
command -v npm >/dev/null 2>&1 || packages+=(nodejs npm)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all packages present"
  exit 0
fi
sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
# Debian starts the Prometheus server and node exporter as services listening on every interface. runmon's
# tests start their own, on 127.0.0.1 only: the packages' services are stopped and disabled.
if [ -d /run/systemd/system ] && command -v systemctl >/dev/null 2>&1; then
  for service in prometheus prometheus-node-exporter; do
    if systemctl is-enabled --quiet "$service" 2>/dev/null || systemctl is-active --quiet "$service" 2>/dev/null; then
      "${sudo_cmd[@]}" systemctl disable --now "$service" >/dev/null 2>&1 || true
      echo "install-deps: stopped the $service service (runmon's tests start their own on 127.0.0.1)"
    fi
  done
fi
