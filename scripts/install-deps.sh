#!/usr/bin/env bash
# Installs every build and test dependency of Two-Chains from Debian 12 packages.
# Idempotent: packages already present are left alone and apt-get is skipped entirely
# when nothing is missing.
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build pkg-config python3
  clang-19 llvm-19 llvm-19-dev libclang-19-dev liblld-19-dev lld-19 llvm-19-tools
  libclang-rt-19-dev
  libucx-dev ucx-utils libibverbs-dev
  googletest libgtest-dev
  openmpi-bin libopenmpi-dev libpmix-dev
  libc6-dev-arm64-cross libgcc-12-dev-arm64-cross libstdc++-12-dev-arm64-cross qemu-user
  zlib1g-dev libzstd-dev libedit-dev libxml2-dev libcurl4-openssl-dev
  libssl-dev openssl
  libzydis-dev
  slurm-wlm slurm-wlm-basic-plugins munge
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep 'install ok installed' >/dev/null; then
    missing+=("$p")
  fi
done

SUDO=
if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; fi
export DEBIAN_FRONTEND=noninteractive
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#PACKAGES[@]} packages present"
else
  echo "install-deps: installing ${missing[*]}"
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  echo "install-deps: done"
fi

# UCX and OpenSSL's libcrypto for aarch64, to run an aarch64 receiver under
# qemu-aarch64 beside the x86_64 build (docs/heterogeneous.md): Debian's
# arm64 packages, unpacked into a folder, never installed (../shared/DESIGN.md,
# "aarch64 on this x86_64 machine"). libssl-dev:arm64 brings the headers
# whose openssl/configuration.h differs by ISA. TWOCHAINS_ARM64_ROOT moves
# the folder; it is made once, and again when a library is missing.
ARM64_ROOT=${TWOCHAINS_ARM64_ROOT:-/var/lib/twochains/arm64}
ARM64_LIBS=(libucx0 libnuma1 librdmacm1 libibverbs1 libssl3 libssl-dev)
ARM64_HAVE=(usr/lib/aarch64-linux-gnu/libucp.so.0 usr/lib/aarch64-linux-gnu/libcrypto.so
            usr/include/aarch64-linux-gnu/openssl/configuration.h)
arm64_missing=0
for f in "${ARM64_HAVE[@]}"; do [ -e "$ARM64_ROOT/$f" ] || arm64_missing=1; done
if [ "$(uname -m)" = x86_64 ] && [ $arm64_missing -eq 1 ]; then
  echo "install-deps: unpacking arm64 UCX and libcrypto into $ARM64_ROOT"
  if ! dpkg --print-foreign-architectures | grep -qx arm64; then
    $SUDO dpkg --add-architecture arm64
  fi
  $SUDO apt-get update -qq
  work=$(mktemp -d)
  chmod 755 "$work" # apt downloads as its own user
  (cd "$work" && apt-get download -qq "${ARM64_LIBS[@]/%/:arm64}" >/dev/null)
  $SUDO mkdir -p "$ARM64_ROOT"
  for deb in "$work"/*.deb; do $SUDO dpkg -x "$deb" "$ARM64_ROOT"; done
  rm -rf "$work"
  for f in "${ARM64_HAVE[@]}"; do
    [ -e "$ARM64_ROOT/$f" ] || { echo "install-deps: $ARM64_ROOT/$f is missing" >&2; exit 1; }
  done
  echo "install-deps: arm64 UCX and libcrypto in $ARM64_ROOT/usr/lib/aarch64-linux-gnu"
fi
