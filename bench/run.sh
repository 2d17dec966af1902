#!/usr/bin/env bash
# run.sh — the benchmark in one command: `bash bench/run.sh [bench.py arguments]`.
# Installs (apt, only what is missing) PyTorch, NumPy and OpenBLAS (pthread), points the
# libblas.so.3 alternative that NumPy loads at OpenBLAS and checks that NumPy then uses it;
# unless TC_LIBRARY is set, configures build/ as Release if it is not configured and brings
# libtc up to date there; then runs bench/bench.py with Debian's /usr/bin/python3 (the
# interpreter with those packages).
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(python3 python3-numpy python3-torch libopenblas-dev libopenblas0-pthread python3-matplotlib)
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "run.sh: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# NumPy links libblas.so.3, which Debian's alternatives system resolves: the reference BLAS
# (libblas3) if it is installed and selected, else an OpenBLAS. Select OpenBLAS (pthread).
for name in $(update-alternatives --get-selections 2>/dev/null | awk '$1 ~ /^libblas\.so\.3-/ {print $1}'); do
  current=$(update-alternatives --query "$name" | sed -n 's/^Value: //p')
  case "$current" in
    */openblas*) ;;
    *)
      choice=$(update-alternatives --list "$name" | grep '/openblas-pthread/' | head -n 1 || true)
      if [ -n "$choice" ]; then
        echo "run.sh: $name: $current -> $choice" >&2
        $SUDO update-alternatives --set "$name" "$choice" >&2
      fi
      ;;
  esac
done
# bench/fair.py names the BLAS library a NumPy process has loaded (bench.py's header repeats it)
/usr/bin/python3 bench/fair.py >&2 ||
  echo "run.sh: warning: NumPy does not use OpenBLAS: the NumPy column is not the OpenBLAS peer" >&2

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
