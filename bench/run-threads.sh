#!/usr/bin/env bash
# 1, 2 and 4 application threads on one context (TC_CONTEXT_THREADS), each
# with its own peer, streaming frames and then making calls, over shared
# memory, one receiver (docs/performance.md, "Threads"). Three setups:
# channels (the default), channels beside the executor thread, and one
# shared lock (TC_THREAD_CHANNELS=0), all in one run.
#   bench/run-threads.sh [N]    frames per thread (default 200000)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$ROOT/build}
N=${1:-200000}
cmake --build "$BUILD_DIR" --target threads >/dev/null
BIN=$BUILD_DIR/bench/threads
OUT=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$OUT"' EXIT
PORT=${PORT_BASE:-$((15000 + RANDOM % 15000))}
run() { # label, env..., then sender arguments after --
  local label=$1; shift
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  for T in 1 2 4; do
    PORT=$((PORT + 1))
    "$BIN" receiver $PORT 120 > "$OUT/receiver" 2>&1 &
    R=$!
    for _ in $(seq 100); do grep -q listening "$OUT/receiver" && break; sleep 0.1; done
    echo "$label: $(env "${envs[@]}" "$BIN" sender $PORT $T "$N" "$@")"
    kill $R 2>/dev/null || true
    wait 2>/dev/null || true
  done
}
run "channels" TC_THREAD_CHANNELS=1 --
run "channels + executor" TC_THREAD_CHANNELS=1 -- executor
run "one lock" TC_THREAD_CHANNELS=0 --
