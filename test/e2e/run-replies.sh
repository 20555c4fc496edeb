#!/usr/bin/env bash
# Every jam of the standard package in both modes: a requester sends put,
# get, fetch_add, compare_swap, kv_put/get/del, scatter, gather and append
# frames, Local then Injected; each reply comes back as a frame that runs on
# the requester, which checks every answer.
#   run-replies.sh <tc-e2e> <stdlib prefix> [UCX_TLS]
set -euo pipefail
source "$(dirname "$0")/lib.sh"
E2E=$1 PREFIX=$2
if [ $# -ge 3 ]; then export UCX_TLS=$3; fi
PORT=$(( 20000 + RANDOM % 11000 ))
OUT=$(mktemp -d)
trap 'kill $RPID 2>/dev/null || true; rm -rf "$OUT"' EXIT
timeout 90 "$E2E" receiver "$PREFIX" "$PORT" 42 > "$OUT/receiver" 2>&1 &
RPID=$!
wait_for_listening "$OUT/receiver"
STATUS=0
timeout 90 "$E2E" requester "$PREFIX" "$PORT" 42 > "$OUT/requester" 2>&1 || STATUS=$?
wait $RPID || STATUS=$?
cat "$OUT/requester" "$OUT/receiver"
[ $STATUS -eq 0 ]
grep -q "requester: all 16 replies correct (local)" "$OUT/requester"
grep -q "requester: all 16 replies correct (injected)" "$OUT/requester"
grep -q "ran 42 frames: 21 local, 21 injected, 0 rejected" "$OUT/receiver"
grep -q "receiver: log records 2" "$OUT/receiver"
grep -q "0 rejected" "$OUT/receiver"
echo "replies over ${UCX_TLS:-default transports}: OK"
