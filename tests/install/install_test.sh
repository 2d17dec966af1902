#!/usr/bin/env bash
# install_test.sh — installs the build into a temporary prefix and builds the examples against
# it, as a user would: pkg-config + cc, find_package(TC) + TC::tc, the Python package
# (pip install --target into the prefix, offline) running examples/python, and the Rust crate
# (cargo, libtc found through PKG_CONFIG_PATH) building and running examples/rust.
#
# usage: install_test.sh <build dir> <source dir> <CMAKE_INSTALL_LIBDIR> <cmake> [sanitize flags]
# environment: TC_TEST_PYTHON (python3 with NumPy; empty: skip Python), TC_TEST_CARGO (empty:
#   skip Rust), TC_TEST_HOST_ENV ("VAR=value ..." for programs not built with the sanitizers).
set -euo pipefail

build=$1 src=$2 libdir_rel=$3 cmake=$4 sanitize=${5:-}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tc-install-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
fail() { echo "FAIL: $*" >&2; exit 1; }
step() { echo "== $*"; }

san_flags=()
[ -n "$sanitize" ] && san_flags=("-fsanitize=$sanitize")

step "cmake --install $build --prefix $prefix"
"$cmake" --install "$build" --prefix "$prefix" >"$tmp/install.log" || { cat "$tmp/install.log"; fail "cmake --install"; }

# The library dir: CMAKE_INSTALL_LIBDIR from the configuring CMake, else search for it.
libdir=$prefix/$libdir_rel
if [ ! -e "$libdir/libtc.so" ]; then
  found=$(find "$prefix" -name 'libtc.so' | head -n1)
  [ -n "$found" ] || fail "no libtc.so under $prefix"
  echo "note: libtc.so is in ${found%/*}, not $libdir"
  libdir=${found%/*}
fi

step "installed files"
[ -f "$prefix/include/tc/tc.h" ] || fail "include/tc/tc.h not installed"
[ -f "$libdir/pkgconfig/tc.pc" ] || fail "$libdir_rel/pkgconfig/tc.pc not installed"
[ -f "$libdir/cmake/TC/TCConfig.cmake" ] || fail "$libdir_rel/cmake/TC/TCConfig.cmake not installed"
[ -f "$libdir/cmake/TC/TCConfigVersion.cmake" ] || fail "TCConfigVersion.cmake not installed"
[ -e "$libdir/libtc.so.0" ] || fail "libtc.so.0 not installed"
real=$(readlink -f "$libdir/libtc.so")
[ -f "$real" ] || fail "libtc.so is a dangling link"
(cd "$prefix" && find . -type f -o -type l | sort)

step "SONAME"
soname=$(readelf -d "$real" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$soname" = "libtc.so.0" ] || fail "SONAME is '$soname', expected libtc.so.0"

step "exported symbols"
# Every function declared in the installed tc.h is exported by the installed library.
api=$(grep -o '^TC_API[^(]*(' "$prefix/include/tc/tc.h" | sed 's/.*[ *]\(tc_[a-z_0-9]*\)($/\1/' | sort -u)
[ -n "$api" ] || fail "no TC_API functions found in tc.h"
versioned=$(nm -D --defined-only "$real" | awk '{print $3}' | sort -u)  # tc_compile@@LIBTC_0
exported=$(sed 's/@.*//' <<<"$versioned")
for f in $api; do
  grep -qx "$f" <<<"$exported" || fail "$f is declared in tc.h but not exported by libtc.so"
  grep -qx "$f@@LIBTC_0" <<<"$versioned" || fail "$f is not at symbol version LIBTC_0 (src/api/exports.map)"
done
echo "$(wc -w <<<"$api") API functions exported, at symbol version LIBTC_0"
others=$(grep -v '^tc_' <<<"$exported" | grep -v '^_init$\|^_fini$' || true)
[ -z "$others" ] || echo "note: $(wc -l <<<"$others") exported symbols outside the tc_ namespace, e.g. $(head -n3 <<<"$others" | tr '\n' ' ')"

step "installed tc tool runs (its run path finds the installed libtc.so.0)"
[ -x "$prefix/bin/tc" ] || fail "bin/tc not installed"
env -u LD_LIBRARY_PATH "$prefix/bin/tc" version || fail "the installed bin/tc cannot start"
env -u LD_LIBRARY_PATH "$prefix/bin/tc" check "$src/examples/tc/mm.tc" >/dev/null || fail "installed tc check"

step "installed candidate runner (tune.isolation=process): beside libtc, its run path finds the installed one"
[ -x "$libdir/tc/candidate-runner" ] || fail "$libdir_rel/tc/candidate-runner not installed"
runner_lib=$(env -u LD_LIBRARY_PATH ldd "$libdir/tc/candidate-runner" | sed -n 's/.*libtc.so.0 => \([^ ]*\).*/\1/p')
[ "$(readlink -f "$runner_lib")" = "$real" ] || fail "the installed candidate runner loads '$runner_lib', not $real"
tuned=$(env -u LD_LIBRARY_PATH -u TC_CANDIDATE_RUNNER "$prefix/bin/tc" tune "$src/examples/tc/mm.tc" --size M=16,K=8,N=12 \
        --option tune.isolation=process --option tune.population=2 --option tune.generations=1 --option cache=off 2>&1) ||
  { echo "$tuned"; fail "installed tc tune with tune.isolation=process"; }
grep -q "candidate runner processes (1 started, $libdir/tc/candidate-runner)" <<<"$tuned" ||
  { echo "$tuned"; fail "the installed tc did not tune in the installed candidate runner"; }

step "pkg-config"
export PKG_CONFIG_PATH=$libdir/pkgconfig
pc_prefix=$(pkg-config --variable=prefix tc)
pc_cflags=$(pkg-config --cflags tc)
pc_libs=$(pkg-config --libs tc)
echo "prefix=$pc_prefix cflags=$pc_cflags libs=$pc_libs"
[ "$(pkg-config --modversion tc)" = "$(sed -n 's/#define LIBTC_VERSION_STRING "\(.*\)"/\1/p' "$prefix/include/tc/tc_version.h")" ] ||
  fail "tc.pc version differs from LIBTC_VERSION_STRING"
# tc.pc must describe the prefix it was installed to (cmake --install --prefix relocates)
[ "$(readlink -f "$pc_prefix")" = "$(readlink -f "$prefix")" ] ||
  fail "tc.pc has prefix=$pc_prefix, but it was installed to $prefix (tc.pc is not relocatable)"

step "cc mm_example.c \$(pkg-config --cflags --libs tc)"
cc "${san_flags[@]}" "$src/examples/c/mm_example.c" $(pkg-config --cflags --libs tc) -o "$tmp/mm_example" ||
  fail "building examples/c/mm_example.c with pkg-config"
readelf -d "$tmp/mm_example" | grep -q 'NEEDED.*\[libtc\.so\.0\]' || fail "mm_example does not need libtc.so.0"
resolved=$(LD_LIBRARY_PATH=$libdir ldd "$tmp/mm_example" | awk '/libtc\.so/ {print $3}')
[ "$(readlink -f "$resolved")" = "$real" ] || fail "mm_example loads '$resolved', not the installed $real"
LD_LIBRARY_PATH=$libdir "$tmp/mm_example" || fail "mm_example (pkg-config build) exited with $?"

step "CMake consumer: find_package(TC) + TC::tc"
"$cmake" -S "$src/examples/cmake" -B "$tmp/cmake-build" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_C_FLAGS="${san_flags[*]}" >"$tmp/cmake.log" 2>&1 || { cat "$tmp/cmake.log"; fail "configuring examples/cmake"; }
tc_dir=$(sed -n 's/^TC_DIR:PATH=//p' "$tmp/cmake-build/CMakeCache.txt")
[ "$(readlink -f "$tc_dir")" = "$(readlink -f "$libdir/cmake/TC")" ] || fail "find_package(TC) found '$tc_dir', not the installed package"
"$cmake" --build "$tmp/cmake-build" >"$tmp/build.log" 2>&1 || { cat "$tmp/build.log"; fail "building examples/cmake"; }
resolved=$(LD_LIBRARY_PATH=$libdir ldd "$tmp/cmake-build/app" | awk '/libtc\.so/ {print $3}')
[ "$(readlink -f "$resolved")" = "$real" ] || fail "app loads '$resolved', not the installed $real"
LD_LIBRARY_PATH=$libdir "$tmp/cmake-build/app" || fail "app (CMake build) exited with $?"

# Programs not built here (python3, the cargo-built example) run with the sanitizer runtime
# preloaded in sanitizer builds; nothing else runs with it.
host_env=(${TC_TEST_HOST_ENV:-})
run_host() { env "${host_env[@]}" "$@"; }

step "Python: pip install --target (offline) and examples/python against the installed libtc"
python=${TC_TEST_PYTHON:-}
if [ -z "$python" ]; then
  echo "note: TC_TEST_PYTHON not set; Python example skipped"
else
  site=$prefix/lib/python3/site-packages
  # libtc=none: the pure-Python package, which finds the prefix's libtc (by default the wheel
  # carries the build tree's: tests/bindings/pip_venv.sh).
  "$python" -m pip install --no-index --no-deps --disable-pip-version-check --no-cache-dir -q \
    --config-settings libtc=none --target "$site" "$src/bindings/python" >"$tmp/pip.log" 2>&1 ||
    { cat "$tmp/pip.log"; fail "pip install ./bindings/python"; }
  [ ! -e "$site/tc/_lib" ] || fail "pip --config-settings libtc=none installed a libtc in the package"
  [ -f "$site/tc/__init__.py" ] || fail "pip did not install the tc package into $site"
  ls -d "$site"/libtc-*.dist-info >/dev/null || fail "pip did not install libtc's metadata"
  # No TC_LIBRARY, no LD_LIBRARY_PATH, no build tree next to the package: tc finds the
  # installed library through PKG_CONFIG_PATH (exported above).
  py_env=(env -u TC_LIBRARY -u LD_LIBRARY_PATH PYTHONPATH="$site" PYTHONDONTWRITEBYTECODE=1)
  (cd "$tmp" && "${py_env[@]}" "${host_env[@]}" "$python" "$src/examples/python/numpy_example.py") >"$tmp/py.log" 2>&1 ||
    { cat "$tmp/py.log"; fail "examples/python/numpy_example.py"; }
  cat "$tmp/py.log"
  loaded=$(sed -n 's/^libtc .* from //p' "$tmp/py.log")
  if [ "$loaded" = libtc.so.0 ]; then
    echo "note: tc loaded a libtc.so.0 on the loader's path, which comes before pkg-config"
  else
    [ "$(readlink -f "$loaded")" = "$real" ] || fail "tc loaded '$loaded', not the installed $real"
  fi
  if "$python" -c "import torch" 2>/dev/null; then
    (cd "$tmp" && "${py_env[@]}" "${host_env[@]}" "$python" "$src/examples/python/torch_example.py") ||
      fail "examples/python/torch_example.py"
  else
    echo "note: $python has no torch; examples/python/torch_example.py skipped"
  fi
fi

step "Rust: examples/rust with the tc crate, libtc found through PKG_CONFIG_PATH"
cargo=${TC_TEST_CARGO:-}
if [ -z "$cargo" ]; then
  echo "note: TC_TEST_CARGO not set; Rust example skipped"
else
  env -u TC_LIB_DIR CARGO_TARGET_DIR="$tmp/cargo-target" "$cargo" build --offline --locked -q \
    --manifest-path "$src/examples/rust/Cargo.toml" >"$tmp/cargo.log" 2>&1 || { cat "$tmp/cargo.log"; fail "cargo build examples/rust"; }
  rust_app=$tmp/cargo-target/debug/tc-example
  readelf -d "$rust_app" | grep -q 'NEEDED.*\[libtc\.so\.0\]' || fail "tc-example does not need libtc.so.0"
  resolved=$(LD_LIBRARY_PATH=$libdir ldd "$rust_app" | awk '/libtc\.so/ {print $3}')
  [ "$(readlink -f "$resolved")" = "$real" ] || fail "tc-example loads '$resolved', not the installed $real"
  LD_LIBRARY_PATH=$libdir run_host "$rust_app" || fail "examples/rust exited with $?"
fi

echo "install test passed"
