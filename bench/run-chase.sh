#!/usr/bin/env bash
# Pointer chase (docs/performance.md): a server with the chase package and
# a raw UCX worker, and a client timing walks of 1 to 4096 hops three
# ways in one run. Shared memory (UCX's choice) unless UCX_TLS says.
#   bench/run-chase.sh [REPS]     (default 200 walks per length and way)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$ROOT/build}
cmake --build "$BUILD_DIR" --target tc-chase >/dev/null
BIN=$BUILD_DIR/bench/tc-chase
OUT=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$OUT"' EXIT
PORT=${PORT_BASE:-$((15000 + RANDOM % 15000))}
"$BIN" server $PORT "$OUT/info" > "$OUT/server" 2>&1 &
for _ in $(seq 100); do grep -q listening "$OUT/server" && break; sleep 0.1; done
"$BIN" client $PORT "$OUT/info" "${1:-200}"
