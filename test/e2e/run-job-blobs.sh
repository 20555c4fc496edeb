#!/usr/bin/env bash
# A job launched without mpirun: P processes that exchange address blobs
# through a directory (the third bootstrap of tc_job_join).
#   run-job-blobs.sh <np> <tc-job> <jobs prefix> local|injected <frames> [kill]
# With kill, the last rank dies mid-job: the others must pass.
set -uo pipefail
NP=$1 JOB=$2 PREFIX=$3 MODE=$4 FRAMES=$5 KILL=${6:-}
DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT
PIDS=()
for ((r = 0; r < NP; r++)); do
  timeout 200 "$JOB" "$PREFIX" "blobs:$DIR:$r:$NP" "$MODE" "$FRAMES" $KILL > "$DIR/out.$r" 2>&1 &
  PIDS+=($!)
done
FAILED=0
for ((r = 0; r < NP; r++)); do
  wait "${PIDS[$r]}"
  STATUS=$?
  sed "s/^/rank $r: /" "$DIR/out.$r"
  if [ -n "$KILL" ] && [ "$r" -eq $((NP - 1)) ]; then
    [ "$STATUS" -eq 137 ] || { echo "the last rank did not die of SIGKILL ($STATUS)"; FAILED=1; }
  elif [ "$STATUS" -ne 0 ] || ! grep -q PASSED "$DIR/out.$r"; then
    echo "rank $r failed ($STATUS)"
    FAILED=1
  fi
done
[ "$FAILED" -eq 0 ] && echo "job of $NP over blobs${KILL:+, the last rank killed}: OK"
