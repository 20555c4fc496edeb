#!/usr/bin/env bash
# Bad input: malformed frames are rejected, counted and never run, while
# good frames after them run; a sender that dies mid-write does not stop
# the receiver serving another one.
#   run-rogue.sh <tc-e2e> <tc-rogue> <stdlib prefix>
set -euo pipefail
source "$(dirname "$0")/lib.sh"
E2E=$1 ROGUE=$2 PREFIX=$3
OUT=$(mktemp -d)
trap 'kill $RPID 2>/dev/null || true; rm -rf "$OUT"' EXIT
start_receiver() { # frames, port
  timeout 60 "$E2E" receiver "$PREFIX" "$2" "$1" > "$OUT/receiver" 2>&1 &
  RPID=$!
  wait_for_listening "$OUT/receiver"
}

# The rogue puts its frames itself (tc_rogue.cpp) and relies on the runtime
# never answering a miss report for one: with direct stores the runtime
# would find such a frame in the ring and send it again with code.
export TC_DIRECT_STORES=0
PORT=$(( 20000 + RANDOM % 11000 ))
start_receiver 14 $PORT
timeout 60 "$ROGUE" malformed "$PREFIX" $PORT > "$OUT/rogue" 2>&1
wait $RPID
cat "$OUT/rogue" "$OUT/receiver"
grep -q "rogue: oversized send: too large: a frame for its slot" "$OUT/rogue"
# Refusals are told to the sender, with their reason.
grep -q "rogue: flush: [^;]*; last refusal: kind 4, " "$OUT/rogue"
grep -q "refused frame [0-9]* (element [0-9]*): " "$OUT/rogue"
grep -q "ran 14 frames: 1 local, 2 injected, 11 rejected" "$OUT/receiver"
[ "$(grep -c 'frame not completely arrived' "$OUT/receiver")" = 2 ]
# The tampered image, the false claim and the forged cached hash.
[ "$(grep -c 'code does not hash to the hash its frame claims' "$OUT/receiver")" = 3 ]
grep -q "cache: installs 1, cached runs 1, misses 1, evictions 0, hash mismatches 3" "$OUT/receiver"
grep -qx "receiver: total 108" "$OUT/receiver"
for why in "bad frame magic" "unsupported frame version" "unknown package" \
           "unknown element" "frame length or offset outside the slot" \
           "frame not completely arrived" "frame names code this receiver does not hold"; do
  grep -q "dropped frame [0-9]* from peer [0-9]* ([^)]*): $why" "$OUT/receiver" || { echo "no rejection for: $why"; exit 1; }
done

# Code shipped ahead of frames: only the receiver's own image, exactly, is
# installed; every false offer is refused and answered.
PORT=$(( PORT + 1 ))
start_receiver 1 $PORT
timeout 60 "$ROGUE" code "$PREFIX" $PORT > "$OUT/rogue"
wait $RPID
cat "$OUT/rogue" "$OUT/receiver"
grep -q "rogue: code, a changed byte: code does not hash to the hash its frame claims" "$OUT/rogue"
grep -q "rogue: code, a wrong size: code does not hash to the hash its frame claims" "$OUT/rogue"
grep -q "rogue: code, a wrong key: code does not hash to the hash its frame claims" "$OUT/rogue"
grep -q "rogue: code, an unknown element: unknown element" "$OUT/rogue"
grep -q "rogue: code, forged answers kept: 0" "$OUT/rogue"
grep -q "rogue: code, true: success" "$OUT/rogue"
grep -q "rogue: cached frame ran" "$OUT/rogue"
[ "$(grep -c 'refused code shipped by' "$OUT/receiver")" = 4 ]
grep -q "ran 1 frames: 0 local, 1 injected, 0 rejected" "$OUT/receiver"

PORT=$(( PORT + 1 ))
start_receiver 1005 $PORT
timeout 60 "$ROGUE" die "$PREFIX" $PORT
timeout 60 "$E2E" sender "$PREFIX" $PORT 1000
wait $RPID
cat "$OUT/receiver"
grep -q "ran 1005 frames" "$OUT/receiver"
grep -qx "receiver: total $(( (5 + 500) * 36 ))" "$OUT/receiver"
echo "bad input: OK"
