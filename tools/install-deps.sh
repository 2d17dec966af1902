#!/usr/bin/env bash
# install-deps.sh — installs, with apt, the Debian packages libtc needs to build and test.
# Installs only what is missing; safe to run again. Needs root (or sudo).
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config   # toolchain
  lld                                            # a faster linker (CMake uses it where it is installed)
  libhalide14-0-dev                              # Halide 14: range solver, cpu code generation
  llvm-14-dev                                    # LLVM 14's ORC JIT: links kernel objects (warm start)
  libisl-dev libdlpack-dev liblmdb-dev           # polyhedral (CUDA mapping), DLPack, cache
  libgmp-dev                                     # isl's pkg-config links -lgmp; libisl-dev does not pull it
  libhiredis-dev redis-server                    # the cache's remote tier; its tests' Redis server
  libcmocka-dev libgtest-dev                     # C ABI tests, C++ unit tests
  python3 python3-numpy                          # end-to-end corpus expected values
  python3-matplotlib                             # bench --plot (tests/bench: the convergence plot)
  libopenblas0-pthread                           # a CBLAS for the cpu.blas route (dlopen; tests skip without one)
  python3-torch python3-pip python3-venv         # Python binding tests; pip install into a venv (pip_venv)
  clang-14 libclang-rt-14-dev                    # libFuzzer (tools/fuzz.sh)
  abigail-tools                                  # the exported ABI against its baseline (tools/abi-check.sh)
)

# The Rust binding's tests need cargo: a rustup install (~/.cargo/bin) will do, else Debian's.
if ! command -v cargo >/dev/null && [ ! -x "${HOME:-/root}/.cargo/bin/cargo" ] && [ ! -x /root/.cargo/bin/cargo ]; then
  packages+=(cargo)
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
