#!/usr/bin/env bash
# run.sh — the benchmark in one command: `bash bench/run.sh [bench.py arguments]`.
# Installs (apt, only what is missing) PyTorch, NumPy and OpenBLAS; unless TC_LIBRARY is set,
# configures build/ as Release if it is not configured and brings libtc up to date there; then
# runs bench/bench.py with Debian's /usr/bin/python3 (the interpreter with those packages).
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(python3 python3-numpy python3-torch libopenblas-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "run.sh: installing ${missing[*]}" >&2
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

if [ -z "${TC_LIBRARY:-}" ]; then
  if [ ! -f build/CMakeCache.txt ]; then
    bash tools/install-deps.sh >&2
    cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >&2
  fi
  cmake --build build --target tc -j"$(nproc)" >&2
  build_type=$(sed -n 's/^CMAKE_BUILD_TYPE:STRING=//p' build/CMakeCache.txt)
  [ "$build_type" = Release ] ||
    echo "run.sh: warning: build/ is a '${build_type:-default}' build, not Release" >&2
fi

exec /usr/bin/python3 bench/bench.py "$@"
