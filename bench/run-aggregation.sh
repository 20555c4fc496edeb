#!/usr/bin/env bash
# The message rate of a one-frame-per-message stream with and without
# aggregation (docs/frames.md, "Bundles"), each against UCX's own active
# messages in the same tc-perf run: tc-perf's rate test (server_side_sum,
# shared memory), the client and server both under TC_AGGREGATE=1, then
# both under TC_AGGREGATE=0, RUNS times in turn (docs/performance.md,
# "Aggregation and the message rate").
#   bench/run-aggregation.sh [build dir] [runs] [sizes]
set -euo pipefail
BUILD=${1:-build} RUNS=${2:-2} SIZES=${3:-12,64,256,1024,4096}
TC_PERF="$BUILD/bench/tc-perf"
[ -x "$TC_PERF" ] || { echo "run-aggregation: $TC_PERF not built (cmake --build $BUILD --target tc-perf)" >&2; exit 1; }
export TC_KEY=${TC_KEY:-$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')}
port=${PORT_BASE:-13500}
echo "rate tc-local / ucx-am (messages/s, same run), by payload bytes"
for run in $(seq "$RUNS"); do
  for aggregate in 1 0; do
    port=$((port + 2))
    env -u UCX_TLS TC_AGGREGATE=$aggregate "$TC_PERF" --port "$port" >/dev/null 2>&1 &
    server=$!
    sleep 0.5
    line=$(env -u UCX_TLS TC_AGGREGATE=$aggregate "$TC_PERF" --port "$port" --tests rate \
             --workloads server_side_sum --rounds 5 --variants ucx-am,tc-local --sizes "$SIZES" \
             127.0.0.1 | awk '/^server_side_sum/ { printf " %s B: %s", $2, $(NF - 2) }')
    wait "$server" || true
    echo "run $run TC_AGGREGATE=$aggregate:$line"
  done
done
