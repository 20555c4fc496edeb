#!/usr/bin/env bash
# Call round trips with more processes than cores (docs/performance.md,
# "Sharing cores"): P processes, P/2 caller-callee pairs at once, each
# caller making N tc_calls of an echo jam to its own callee (whose
# executor thread answers), for P = 2, 4, 8 (or the Ps given), with busy
# polling (TC_BUSY_POLL=1, as before sleeping waits) and with the
# default sleeping waits. Prints, per setup, the callers' median round
# trip (the median of their medians), the worst caller's 99th
# percentile, the mean over all calls, and the total time.
#   bench/run-oversubscribed.sh [N [P...]]   N calls per caller (default 2000)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$ROOT/build}
N=${1:-2000}
shift || true
PS=("$@")
[ ${#PS[@]} -gt 0 ] || PS=(2 4 8)
cmake --build "$BUILD_DIR" --target oversub >/dev/null
BIN=$BUILD_DIR/bench/oversub
OUT=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$OUT"' EXIT
PORT=${PORT_BASE:-$((15000 + RANDOM % 15000))}

# run P MODE: P/2 pairs at once; one table row.
run() {
  local p=$1 mode=$2 pairs=$(($1 / 2)) envs=() callees=() callers=() start end
  [ "$mode" = busy ] && envs=(TC_BUSY_POLL=1)
  for i in $(seq "$pairs"); do
    env "${envs[@]}" "$BIN" callee $((PORT + i)) 600 >"$OUT/callee.$i" 2>&1 &
    callees+=($!)
  done
  for i in $(seq "$pairs"); do
    for _ in $(seq 100); do grep -q listening "$OUT/callee.$i" && break; sleep 0.1; done
  done
  start=$(date +%s.%N)
  for i in $(seq "$pairs"); do
    env "${envs[@]}" "$BIN" caller $((PORT + i)) "$N" >"$OUT/caller.$i" 2>&1 &
    callers+=($!)
  done
  for c in "${callers[@]}"; do wait "$c" || { cat "$OUT"/caller.*; exit 1; }; done
  end=$(date +%s.%N)
  kill "${callees[@]}" 2>/dev/null || true
  wait 2>/dev/null || true
  PORT=$((PORT + pairs + 1))
  local med
  med=$(cat "$OUT"/caller.* | awk '{ for (i = 1; i < NF; ++i) if ($i == "median") print $(i + 1) }' |
        sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
  cat "$OUT"/caller.* | awk -v p="$p" -v mode="$mode" -v med="$med" -v t="$(echo "$end - $start" | bc)" '
    { for (i = 1; i < NF; ++i) { if ($i == "p99" && $(i + 1) + 0 > p99) p99 = $(i + 1) + 0;
                                 if ($i == "mean") { sum += $(i + 1); ++c } } }
    END { printf "%3d  %-6s %10.1f %10.1f %10.1f %8.2f\n", p, mode, med, p99, sum / c, t }'
}

echo "P processes on $(nproc) cores, $N calls per caller (round trips in us)"
printf "%3s  %-6s %10s %10s %10s %8s\n" P waits median p99-worst mean total-s
for p in "${PS[@]}"; do
  for mode in busy sleep; do run "$p" "$mode"; done
done
