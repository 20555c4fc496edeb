#!/usr/bin/env bash
# Four application threads send on one context (TC_CONTEXT_THREADS), each
# on its own channel, then call at once, while the executor thread runs:
# every frame runs exactly once and every call gets its own answer.
#   run-threads.sh <bench/threads> [executor]   (without: the calling
#   threads progress the context themselves)
set -euo pipefail
BIN=$1 MODE=${2:-} T=4 N=20000
. "$(dirname "$0")/lib.sh"
OUT=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$OUT"' EXIT
PORT=$((20000 + RANDOM % 10000))
CALLS=$((T * (N / 20 + 100)))
"$BIN" receiver $PORT 100 $((T * N + CALLS)) > "$OUT/r" 2>&1 &
R=$!
for _ in $(seq 100); do grep -q listening "$OUT/r" && break; sleep 0.1; done
TC_LOG_LEVEL=info "$BIN" sender $PORT $T $N $MODE > "$OUT/s" 2>&1 || { cat "$OUT/s" "$OUT/r"; exit 1; }
wait $R
cat "$OUT/s" "$OUT/r" | grep -v "UCX  WARN"
grep -q "threads 4: rate" "$OUT/s"
grep -q "threads: ran $((T * N + CALLS)) frames, counted $((T * N))$" "$OUT/r"
if [ "${TC_THREAD_CHANNELS:-1}" = 0 ]; then
  ! grep -q "is a channel of its own" "$OUT/s" || { echo "FAILED: channels despite TC_THREAD_CHANNELS=0"; exit 1; }
else
  grep -q "is a channel of its own" "$OUT/s" || { echo "FAILED: no channels"; exit 1; }
fi
echo "PASSED: $((T * N)) frames and $CALLS calls from $T threads, each run once"
