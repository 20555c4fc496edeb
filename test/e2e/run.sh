#!/usr/bin/env bash
# Two real processes over a real UCX transport: a receiver with the standard
# package loaded and a sender injecting and locally invoking its jams.
#   run.sh <tc-e2e> <stdlib prefix> <frames> [UCX_TLS]
set -euo pipefail
source "$(dirname "$0")/lib.sh"
E2E=$1 PREFIX=$2 FRAMES=$3
if [ $# -ge 4 ]; then export UCX_TLS=$4; fi
PORT=$(( 20000 + RANDOM % 11000 ))
OUT=$(mktemp -d)
trap 'kill $RPID 2>/dev/null || true; rm -rf "$OUT"' EXIT
timeout 90 "$E2E" receiver "$PREFIX" "$PORT" "$FRAMES" > "$OUT/receiver" 2>&1 &
RPID=$!
wait_for_listening "$OUT/receiver"
STATUS=0
timeout 90 "$E2E" sender "$PREFIX" "$PORT" "$FRAMES" > "$OUT/sender" 2>&1 || STATUS=$?
wait $RPID || STATUS=$?
cat "$OUT/sender" "$OUT/receiver"
[ $STATUS -eq 0 ] || { echo "run.sh: sender or receiver exited with $STATUS"; exit 1; }
# Every frame ran exactly once: half the frames are server_side_sum (+36
# each); indirect_put wrote frame i's number at i % 1000 and 1000 + i % 1000.
SUMS=$(( (FRAMES + 1) / 2 ))
grep -qx "receiver: total $(( SUMS * 36 ))" "$OUT/receiver"
EXPECT=$(python3 -c "
n=$FRAMES; a=[0]*2000
for i in range(1, n, 2): a[i%1000]=i; a[1000+i%1000]=i
print(sum(a))")
grep -qx "receiver: array checksum $EXPECT" "$OUT/receiver"
grep -q "0 rejected" "$OUT/receiver"
# Over shared memory frames are stored straight into the receiver's ring
# (UCX maps it into the sender); TC_DIRECT_STORES=0, or no RMA path, puts.
case "${TC_E2E_EXPECT_DIRECT:-}" in
  yes) grep -Eq "^sender: peers by rma [1-9][0-9]*, of which by direct stores [1-9]" "$OUT/sender" ;;
  no) grep -Eq "^sender: peers by rma [0-9]+, of which by direct stores 0$" "$OUT/sender" ;;
esac
# Corked (TC_E2E_CORK): frames by message leave in batches; into a ring
# the sender stores into, one by one.
case "${TC_E2E_EXPECT_COALESCED:-}" in
  yes) grep -Eq "^sender: frames coalesced [1-9]" "$OUT/sender" ;;
  no) grep -Eq "^sender: frames coalesced 0$" "$OUT/sender" ;;
esac
echo "e2e over ${UCX_TLS:-default transports}: OK"
