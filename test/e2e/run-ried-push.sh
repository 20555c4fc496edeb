#!/usr/bin/env bash
# A sender drives a ried over to a receiver that accepts rieds (it loads it,
# its initialiser runs), and to one that does not (it refuses).
#   run-ried-push.sh <tc-ried-push> <ried library>
set -euo pipefail
source "$(dirname "$0")/lib.sh"
TOOL=$1 LIB=$2
OUT=$(mktemp -d)
trap 'kill $RPID 2>/dev/null || true; rm -rf "$OUT"' EXIT
for policy in accept refuse; do
  PORT=$(( 20000 + RANDOM % 11000 ))
  timeout 30 "$TOOL" receiver $policy $PORT > "$OUT/receiver" 2>&1 &
  RPID=$!
  wait_for_listening "$OUT/receiver"
  timeout 30 "$TOOL" pusher "$LIB" $PORT > "$OUT/pusher" 2>&1
  wait $RPID
  cat "$OUT/pusher" "$OUT/receiver"
  if [ $policy = accept ]; then
    grep -q "pusher: success" "$OUT/pusher"
    grep -q "receiver: pushed ried loaded, marker 4242" "$OUT/receiver"
  else
    grep -q "pusher: input/output error" "$OUT/pusher"
    grep -q "receiver: no pushed ried" "$OUT/receiver"
    # Refused from the header, before the name or the bytes are received.
    grep -q "refused a ried pushed by peer 1 (127.0.0.1:[0-9]*): this context does not accept rieds" "$OUT/receiver"
  fi
done
echo "ried push: OK"
