#!/usr/bin/env bash
# Installs dependencies, then configures, builds and installs Two-Chains.
#   BUILD_DIR  build tree        (default: <repo>/build)
#   PREFIX     install prefix    (default: <build>/install)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$ROOT/build}
PREFIX=${PREFIX:-$BUILD_DIR/install}

"$ROOT/scripts/install-deps.sh"
mkdir -p "$BUILD_DIR"
cmake -S "$ROOT" -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_INSTALL_PREFIX="$PREFIX" >"$BUILD_DIR/configure.log" 2>&1 \
  || { cat "$BUILD_DIR/configure.log"; exit 1; }
cmake --build "$BUILD_DIR"
cmake --install "$BUILD_DIR" >/dev/null
echo "build: installed to $PREFIX"
