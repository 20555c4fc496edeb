#!/usr/bin/env bash
# A good peer's calls a second, alone and beside an attacker with the key
# who loops jams and reconnects (docs/containment.md, "Quarantine by peer
# address"): four connections, one after the other, three looping frames
# each. The good peer calls 'answer' one call at a time over loopback for
# SECONDS, at most GOOD_RATE calls a second (default 100; 0: as fast as it
# can, which on a shared machine varies tenfold from run to run); the
# attacker comes from this host's first address beyond loopback, so that
# it is a peer address of its own. Prints, per run, the good peer's
# answers a second and the fewest it had in one second, and the receiver's
# counts of abandoned and refused frames and connections.
#   bench/run-quarantine.sh [SECONDS]   (default 15)
# Environment: TC_JAM_TIME_LIMIT_MS, TC_QUARANTINE_BUDGET_MS and
# TC_QUARANTINE_WINDOW_MS go to the receiver (defaults: 1000, 4000, 60000;
# TC_QUARANTINE_BUDGET_MS=0: no quarantine by address, as before it).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$ROOT/build}
SECONDS_RUN=${1:-15}
cmake --build "$BUILD_DIR" --target tc-containment containment_package >/dev/null
TOOL=$BUILD_DIR/test/e2e/tc-containment
PKG=$BUILD_DIR/test/e2e/twochains/containment
FAR=$(ip -4 -o addr show scope global 2>/dev/null | awk '{sub("/.*", "", $4); print $4; exit}')
[ -n "$FAR" ] || { echo "no IPv4 address beyond loopback: the attacker needs one"; exit 77; }
OUT=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$OUT"' EXIT
# Beyond loopback a receiver needs the job's key.
export TC_KEY=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
PORT=$((20000 + RANDOM % 11000))
run() { # name attack(0/1)
  PORT=$((PORT + 1))
  rm -f "$OUT/stop" "$OUT/stop-receiver"
  TC_TEST_STOP_FILE=$OUT/stop-receiver timeout $((SECONDS_RUN + 120)) \
    "$TOOL" receiver "$PKG" containment $PORT 1000000000 0.0.0.0 > "$OUT/receiver" 2>&1 &
  local R=$!
  for _ in $(seq 100); do grep -q listening "$OUT/receiver" && break; sleep 0.1; done
  "$TOOL" caller "$PKG" 127.0.0.1 $PORT 0 "$OUT/stop" "${GOOD_RATE:-100}" > "$OUT/caller" 2>&1 &
  local C=$!
  for _ in $(seq 100); do grep -q connected "$OUT/caller" && break; sleep 0.1; done
  local A=
  if [ "$2" = 1 ]; then
    sleep 1
    "$TOOL" loopers "$PKG" "$FAR" $PORT 4 3 > "$OUT/loopers" 2>&1 &
    A=$!
  fi
  sleep "$SECONDS_RUN"
  # The caller stops before the receiver, which would fail its last call.
  touch "$OUT/stop"
  wait $C || true
  [ -z "$A" ] || wait $A || true
  touch "$OUT/stop-receiver"
  wait $R || true
  echo "== $1"
  sed -n 's/^caller: //p' "$OUT/caller"
  [ -z "$A" ] || sed -n 's/^loopers: //p' "$OUT/loopers"
  grep -E "^receiver: (abandoned|quarantine)" "$OUT/receiver" || true
}
run "good peer alone" 0
run "good peer beside 4 connections x 3 looping frames (attacker at $FAR)" 1
