#!/usr/bin/env bash
# gpu-pack.sh — packs what tools/gpu-check.sh needs on the GPU machine into .gpu/, small enough
# for the device tool's carry limit (64 MiB; build/ is about 760 MB, libtc.so alone 48 MB with
# its debug information): .gpu/lib/libtc.so* stripped of debug information (about 2.3 MB) with
# libhiredis.so.0.14 beside it (100 KB), the
# candidate runner beside it (.gpu/lib/tc/candidate-runner, where libtc looks), the tests' runner
# with faults on demand (.gpu/lib/tc/faulty-runner, stripped, for tests/gpu/tune_on_gpu.py), .gpu/bin/tc, and
# the Debian runtime libraries as .deb files (.gpu/bundle, ../shared/tools/bundle-runtime.sh,
# about 37 MB; kept between runs). Run here after building (bash tools/setup.sh); then carry
# ".gpu" and run `bash tools/gpu-check.sh` there, which finds .gpu/ and uses it.
set -euo pipefail
cd "$(dirname "$0")/.."
lib=$(readlink -f build/src/libtc.so 2>/dev/null || true)
[ -f "$lib" ] || { echo "gpu-pack: no build/src/libtc.so: build first (bash tools/setup.sh)" >&2; exit 1; }
rm -rf .gpu/lib .gpu/bin .gpu/deps
mkdir -p .gpu/lib/tc .gpu/bin .gpu/deps
strip -g -o ".gpu/lib/${lib##*/}" "$lib"
ln -s "${lib##*/}" .gpu/lib/libtc.so.0
ln -s libtc.so.0 .gpu/lib/libtc.so
cp build/src/tc/candidate-runner .gpu/lib/tc/
strip -g -o .gpu/lib/tc/faulty-runner build/tests/tune/faulty-runner
# hiredis (the cache's remote tier) is not in bundle-runtime.sh's list: its one library, as is.
cp -L "$(ldd "$lib" | awk '/libhiredis/ {print $3}')" .gpu/deps/
cp build/programs/tc/tc .gpu/bin/
rm -rf .gpu/bundle/root  # unpacked by a run of gpu-check.sh here: not carried
[ -f .gpu/bundle/unpack.sh ] || bash ../shared/tools/bundle-runtime.sh pack .gpu/bundle
du -sh .gpu
