#!/usr/bin/env bash
# What the trust-boundary defences cost (docs/performance.md, "Cost of the
# defences"): the tc-perf of this tree against the tc-perf of the code
# before them, taking turns in the same run, over shared memory.
#
#   bench/defence-cost.sh [--base-build DIR | --base-rev REV] [--rounds N] [--out DIR]
#     --base-build DIR  a build tree of the older code (with bench/tc-perf)
#     --base-rev REV    or: build that git revision into <build>/defence-base
#                       (default REV: 21e89ef, the last commit before them)
#     --rounds N        old/new pairs, alternating (default 4)
#
# Each tc-perf run measures tc-local, tc-injected and ucx-put; every ratio
# printed is new/old of (variant / ucx-put of the same run), so the VM's
# drift between runs cancels out, and the median over rounds is reported.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$ROOT/build}
BASE_BUILD= BASE_REV=21e89ef ROUNDS=4 OUT=
while [ $# -gt 0 ]; do
  case "$1" in
    --base-build) BASE_BUILD=$2; shift ;;
    --base-rev) BASE_REV=$2; shift ;;
    --rounds) ROUNDS=$2; shift ;;
    --out) OUT=$2; shift ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "defence-cost: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done
OUT=${OUT:-$BUILD_DIR/perf/defence-cost}
mkdir -p "$OUT"
if [ -z "$BASE_BUILD" ]; then
  BASE_BUILD=$BUILD_DIR/defence-base
  if [ ! -x "$BASE_BUILD/bench/tc-perf" ]; then
    echo "defence-cost: building $BASE_REV into $BASE_BUILD"
    rm -rf "$BASE_BUILD.src" && mkdir -p "$BASE_BUILD.src"
    git -C "$ROOT" archive "$BASE_REV" | tar -x -C "$BASE_BUILD.src"
    BUILD_DIR="$BASE_BUILD" "$BASE_BUILD.src/scripts/build.sh" >/dev/null
  fi
fi
cmake --build "$BUILD_DIR" --target tc-perf stdlib_package >/dev/null
export TC_KEY=${TC_KEY:-$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')}
ARGS=(--tests latency,rate --variants tc-local,tc-injected,ucx-put --rounds 3
      --iters 4000 --rate-iters 20000 --sizes-max 8192)
PORT=${PORT_BASE:-14370}
run() { # name build
  local name=$1 build=$2
  PORT=$((PORT + 2))
  # Each build's own library and standard package (its runpath names the
  # tree it was built in; LD_LIBRARY_PATH comes first).
  local env=(env -u UCX_TLS LD_LIBRARY_PATH="$build/lib")
  "${env[@]}" "$build/bench/tc-perf" --port $PORT --prefix "$build/stdlib-jams/twochains/stdlib" \
      > "$OUT/$name.server.log" 2>&1 &
  local server=$!
  "${env[@]}" "$build/bench/tc-perf" --port $PORT --prefix "$build/stdlib-jams/twochains/stdlib" \
      "${ARGS[@]}" --csv "$OUT/$name.csv" 127.0.0.1 > "$OUT/$name.client.log" 2>&1
  wait $server
}
for r in $(seq "$ROUNDS"); do
  echo "defence-cost: round $r of $ROUNDS"
  run "old-$r" "$BASE_BUILD"
  run "new-$r" "$BUILD_DIR"
done
python3 - "$OUT" "$ROUNDS" <<'PY'
import csv, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
def load(name):
    rows = {}
    for r in csv.DictReader(open(f"{out}/{name}.csv")):
        key = (r["test"], r["workload"], r["variant"], int(r["size_bytes"]))
        col = "p50_ns" if r["test"] == "latency" else "rate_msgs_per_s"
        rows[key] = float(r[col]) if r[col] else None
    return rows
runs = [(load(f"old-{i}"), load(f"new-{i}")) for i in range(1, rounds + 1)]
keys = sorted(k for k in runs[0][0] if k[2] != "ucx-put")
print("| test | workload | size (B) | variant | new/old (vs ucx-put, median of %d) | old p50 or rate | new p50 or rate |" % rounds)
print("|---|---|---|---|---|---|---|")
for k in keys:
    base = (k[0], k[1], "ucx-put", k[3])
    ratios, olds, news = [], [], []
    for old, new in runs:
        if None in (old.get(k), new.get(k), old.get(base), new.get(base)):
            continue
        ratios.append((new[k] / new[base]) / (old[k] / old[base]))
        olds.append(old[k]); news.append(new[k])
    if not ratios:
        continue
    unit = "ns" if k[0] == "latency" else "msg/s"
    fmt = (lambda v: f"{v:.1f} ns") if k[0] == "latency" else (lambda v: f"{v/1e6:.2f} M/s")
    print(f"| {k[0]} | {k[1]} | {k[3]} | {k[2]} | {statistics.median(ratios):.3f} | "
          f"{fmt(statistics.median(olds))} | {fmt(statistics.median(news))} |")
PY
