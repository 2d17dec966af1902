#!/usr/bin/env bash
# setup.sh — the README's first quick-start command: installs dependencies, configures and
# builds libtc in ./build, then compiles and runs a real TC kernel (matmul) on the CPU.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build build -j"$(nproc)"
echo "--- tc check examples/tc/mm.tc"
build/programs/tc/tc check examples/tc/mm.tc
echo "--- tc run examples/tc/mm.tc --size M=64,K=32,N=48"
build/programs/tc/tc run examples/tc/mm.tc --size M=64,K=32,N=48
