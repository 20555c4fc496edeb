#!/usr/bin/env bash
# A blocking call at the floor (docs/performance.md, "A call against UCX's
# ping-pong"): one caller, one callee, shared memory, 8 bytes; rounds in
# turn of UCX's own active-message ping-pong (ucx_perftest -t ucp_am_lat,
# which reports half the round trip) and Two-Chains' tc_call of an echo
# jam answered by the callee's executor thread (bench/oversub), with busy
# polling (TC_BUSY_POLL=1) and with the default sleeping waits. Prints
# each round's p50 round trips and tc_call / UCX AM.
#   bench/run-call-floor.sh [rounds [calls]]   (default 3 rounds, 20000 calls)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$ROOT/build}
ROUNDS=${1:-3} N=${2:-20000}
command -v ucx_perftest >/dev/null || { echo "run-call-floor: needs ucx_perftest (ucx-utils)" >&2; exit 1; }
cmake --build "$BUILD_DIR" --target oversub >/dev/null
BIN=$BUILD_DIR/bench/oversub
trap 'kill $(jobs -p) 2>/dev/null || true' EXIT
PORT=${PORT_BASE:-$((15000 + RANDOM % 15000))}

# UCX AM round trip, p50, in us (twice ucx_perftest's half round trip).
ucx_rtt() {
  ucx_perftest -t ucp_am_lat -n "$N" -s 8 -p "$PORT" >/dev/null 2>&1 &
  local server=$!
  sleep 0.5
  ucx_perftest localhost -t ucp_am_lat -n "$N" -s 8 -p "$PORT" 2>/dev/null |
    awk '/^Final:/ { printf "%.2f", 2 * $3 }'
  wait "$server" 2>/dev/null || true
  PORT=$((PORT + 1))
}

# tc_call round trip, p50, in us; $1 = busy or sleep.
tc_rtt() {
  local envs=()
  [ "$1" = busy ] && envs=(TC_BUSY_POLL=1)
  env "${envs[@]}" "$BIN" callee "$PORT" 60 >/dev/null 2>&1 &
  local callee=$!
  sleep 0.5
  env "${envs[@]}" "$BIN" caller "$PORT" "$N" | awk '/calls/ { print $5 }'
  kill "$callee" 2>/dev/null || true
  wait "$callee" 2>/dev/null || true
  PORT=$((PORT + 1))
}

echo "| round | UCX AM round trip p50 (us) | tc_call busy p50 (us) | tc_call sleeping p50 (us) | busy / UCX | sleeping / UCX |"
echo "|---|---:|---:|---:|---:|---:|"
for r in $(seq "$ROUNDS"); do
  u=$(ucx_rtt) b=$(tc_rtt busy) s=$(tc_rtt sleep)
  awk -v r="$r" -v u="$u" -v b="$b" -v s="$s" \
    'BEGIN { printf "| %s | %.2f | %.2f | %.2f | %.2f | %.2f |\n", r, u, b, s, b / u, s / u }'
done
