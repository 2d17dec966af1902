#!/usr/bin/env bash
# abi-check.sh LIBTC_SO [--update] — libtc.so's exported ABI (the tc_* functions and the types
# of include/tc/ they use, as abigail-tools' abidw reads them from the library's debug
# information) against the committed baseline, tests/abi/baseline/libtc.abi: abidiff's report
# and a non-zero exit on any change. An intended change (a new function, a new field) is
# recorded with --update, and the baseline's diff goes into the same commit. Part of the test
# suite (abi.baseline); needs abigail-tools (tools/install-deps.sh installs it).
set -euo pipefail
cd "$(dirname "$0")/.."
lib=${1:?usage: tools/abi-check.sh LIBTC_SO [--update]}
baseline=tests/abi/baseline/libtc.abi
command -v abidw >/dev/null && command -v abidiff >/dev/null ||
  { echo "abi-check: abidw and abidiff not found (Debian: abigail-tools; tools/install-deps.sh)" >&2; exit 2; }
current=$(mktemp --suffix=.abi)
trap 'rm -f "$current"' EXIT
abidw --exported-interfaces-only --headers-dir include/tc --headers-dir "$(dirname "$lib")/../include/tc" \
      --drop-private-types --no-show-locs --no-corpus-path --out-file "$current" "$lib"
sed -i "s|$(pwd)/|./|g" "$current"  # the translation units' paths, relative to the checkout
if [ "${2:-}" = --update ]; then
  install -m 644 "$current" "$baseline"
  echo "abi-check: $baseline updated from $lib"
  exit 0
fi
if abidiff --no-show-locs "$baseline" "$current"; then
  echo "abi-check: $lib's ABI is the baseline's"
else
  status=$?
  echo "abi-check: $lib's ABI differs from $baseline (abidiff status $status). If the change is" \
       "intended, run: tools/abi-check.sh $lib --update, and commit the baseline with it." >&2
  exit 1
fi
