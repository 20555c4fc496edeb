#!/usr/bin/env bash
# Three processes: A sends chain frames to B; each makes B forward a
# server_side_sum frame to C. C must have run every one exactly once.
#   run-chain.sh <tc-e2e> <stdlib prefix> <frames> [UCX_TLS]
set -euo pipefail
source "$(dirname "$0")/lib.sh"
E2E=$1 PREFIX=$2 FRAMES=$3
if [ $# -ge 4 ]; then export UCX_TLS=$4; fi
PORT_B=$(( 20000 + RANDOM % 11000 ))
PORT_C=$(( PORT_B + 1 ))
OUT=$(mktemp -d)
trap 'kill $BPID $CPID 2>/dev/null || true; rm -rf "$OUT"' EXIT
timeout 90 "$E2E" receiver "$PREFIX" "$PORT_C" "$FRAMES" > "$OUT/c" 2>&1 &
CPID=$!
# B may forward to C only because it is told so (forward_allow).
TC_E2E_FORWARD_ALLOW=127.0.0.1:$PORT_C \
  timeout 90 "$E2E" receiver "$PREFIX" "$PORT_B" "$FRAMES" > "$OUT/b" 2>&1 &
BPID=$!
wait_for_listening "$OUT/b"
wait_for_listening "$OUT/c"
STATUS=0
timeout 90 "$E2E" chainer "$PREFIX" "$PORT_B" "$FRAMES" "$PORT_C" > "$OUT/a" 2>&1 || STATUS=$?
wait $BPID || STATUS=$?
wait $CPID || STATUS=$?
for p in a b c; do sed "s/^/$p: /" "$OUT/$p"; done
[ $STATUS -eq 0 ]
grep -q "ran $FRAMES frames" "$OUT/b"
grep -qx "receiver: total $(( FRAMES * 36 ))" "$OUT/c"
grep -q "0 rejected" "$OUT/c"
echo "chain of three processes over ${UCX_TLS:-default transports}: OK"
