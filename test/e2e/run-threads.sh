#!/usr/bin/env bash
# Four application threads send on one context (TC_CONTEXT_THREADS) while
# its executor thread runs the replies: every frame runs exactly once.
#   run-threads.sh <bench/threads>
set -euo pipefail
BIN=$1 T=4 N=20000
. "$(dirname "$0")/lib.sh"
OUT=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$OUT"' EXIT
PORT=$((20000 + RANDOM % 10000))
ECHOES=$((N / 10 + 100))
"$BIN" receiver $PORT 100 $((T * N + ECHOES)) > "$OUT/r" 2>&1 &
R=$!
for _ in $(seq 100); do grep -q listening "$OUT/r" && break; sleep 0.1; done
"$BIN" sender $PORT $T $N > "$OUT/s" 2>&1 || { cat "$OUT/s" "$OUT/r"; exit 1; }
wait $R
cat "$OUT/s" "$OUT/r" | grep -v "UCX  WARN"
grep -q "threads 4: rate" "$OUT/s"
grep -q "threads: ran $((T * N + ECHOES)) frames, counted $((T * N))$" "$OUT/r"
echo "PASSED: $((T * N)) frames from $T threads, each run once"
