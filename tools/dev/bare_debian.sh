#!/usr/bin/env bash
# bare_debian.sh [DIR] — the README's two quick-start commands timed on a bare Debian 12: a
# fresh root made by debootstrap in DIR (default /tmp/tc-bare-debian, removed first), with only
# what a new machine of the developers' kind has before the project installs anything (the
# toolchain: g++, cmake, git, GoogleTest, clang-tidy, ...; the CUDA toolkit bound read-only from
# /usr/local/cuda where this machine has one, as CUDA_HOME). It clones this checkout's HEAD
# there and runs, in a chroot, `bash tools/setup.sh` and then the test command, each timed, its
# output in DIR/*.log. This finds the build and test dependencies that install-deps.sh misses
# because the developers' machines happen to have them. Needs root, debootstrap and a Debian
# mirror; it does not touch this machine's packages. Not run by CI (the root and the minutes).
set -euo pipefail
cd "$(dirname "$0")/../.."
dir=${1:-/tmp/tc-bare-debian}
root=$dir/root
[ "$(id -u)" = 0 ] || { echo "bare_debian.sh: needs root (debootstrap, chroot, mounts)" >&2; exit 2; }
command -v debootstrap >/dev/null || { echo "bare_debian.sh: needs debootstrap (apt-get install debootstrap)" >&2; exit 2; }

unmount() { for m in usr/local/cuda dev sys proc; do umount -R "$root/$m" 2>/dev/null || true; done; }
[ -d "$root" ] && unmount
if grep -q " $root/" /proc/mounts; then echo "bare_debian.sh: $root still has mounts; not removing it" >&2; exit 2; fi
rm -rf --one-file-system "$dir"
mkdir -p "$dir"
trap unmount EXIT

debootstrap --variant=minbase bookworm "$root" http://deb.debian.org/debian > "$dir/debootstrap.log" 2>&1
cp /etc/resolv.conf "$root/etc/resolv.conf"
if [ -f /etc/apt/sources.list.d/debian.sources ]; then  # the same suites as this machine (updates, security)
  cp /etc/apt/sources.list.d/debian.sources "$root/etc/apt/sources.list.d/"
  rm -f "$root/etc/apt/sources.list"
fi
mount -t proc proc "$root/proc"
mount --rbind /sys "$root/sys"
mount --rbind /dev "$root/dev"
env=(HOME=/root LANG=C.UTF-8 PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin)
if [ -d /usr/local/cuda/lib64 ]; then
  mkdir -p "$root/usr/local/cuda"
  mount --bind -o ro /usr/local/cuda "$root/usr/local/cuda"
  env+=(CUDA_HOME=/usr/local/cuda)
fi

# What a new machine of the developers' kind has (../.library/env: "On a new machine").
toolchain="g++ make cmake git ca-certificates libgtest-dev libgmock-dev libbenchmark-dev clang-format clang-tidy"
toolchain+=" cppcheck clangd bear gdb valgrind heaptrack"
chroot "$root" env -i "${env[@]}" DEBIAN_FRONTEND=noninteractive bash -c \
  "apt-get update -qq && apt-get install -y -qq --no-install-recommends $toolchain" > "$dir/toolchain.log" 2>&1
git clone -q . "$root/root/libtc"

timed() {  # timed NAME COMMAND: runs COMMAND in the checkout in the chroot, prints its time
  local t0 rc=0
  t0=$(date +%s)
  chroot "$root" env -i "${env[@]}" bash -c "cd /root/libtc && $2" > "$dir/$1.log" 2>&1 || rc=$?
  echo "bare_debian.sh: $1: $(( $(date +%s) - t0 )) s, exit $rc (log: $dir/$1.log)"
  return $rc
}
echo "bare_debian.sh: $(git rev-parse --short HEAD) on a bare Debian 12 in $root; load: $(cut -d' ' -f1-3 /proc/loadavg)"
timed setup "bash tools/setup.sh"
timed tests "ctest --test-dir build --output-on-failure -j2"
rm -rf "$root"/tmp/tc-*  # the kept code: a second run as fresh as the first
timed tests-again "ctest --test-dir build --output-on-failure -j2"
