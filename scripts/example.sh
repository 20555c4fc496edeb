#!/usr/bin/env bash
# The first thing to run: installs what Two-Chains needs, builds and
# installs it (scripts/build.sh), then builds the DHT example
# (examples/dht) as an out-of-tree project against the installed prefix,
# with find_package(TwoChains), and runs it: a server process and a client
# with several threads making calls, in both send modes.
#   scripts/example.sh [dht-example options]   (e.g. --threads 2 --hops 256)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$ROOT/build}
PREFIX=${PREFIX:-$BUILD_DIR/install}
"$ROOT/scripts/build.sh"
EXAMPLE=$BUILD_DIR/examples/dht
cmake -S "$ROOT/examples/dht" -B "$EXAMPLE" -G Ninja -DCMAKE_PREFIX_PATH="$PREFIX" \
      >"$BUILD_DIR/example-configure.log" 2>&1 \
  || { cat "$BUILD_DIR/example-configure.log"; exit 1; }
cmake --build "$EXAMPLE" >/dev/null
echo "example: $EXAMPLE/dht-example $*"
"$EXAMPLE/dht-example" "$@"
