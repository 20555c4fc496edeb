#!/usr/bin/env bash
# What the trust-boundary defences cost (docs/performance.md, "Cost of the
# defences"): the tc-perf of this tree against the tc-perf of the code
# before them, taking turns in the same run, over shared memory.
#
#   bench/defence-cost.sh [--base-build DIR | --base-rev REV] [--also NAME=DIR]
#                         [--rounds N] [--out DIR]
#     --base-build DIR  a build tree of the older code (with bench/tc-perf)
#     --base-rev REV    or: build that git revision into <build>/defence-base
#                       (default REV: 21e89ef, the last commit before them)
#     --also NAME=DIR   another build to take turns with (e.g. the trust
#                       boundary alone, before containment); repeatable
#     --rounds N        rounds of every build in turn (default 4)
#
# Each tc-perf run measures tc-local, tc-injected and ucx-put; every ratio
# printed is this/old of (variant / ucx-put of the same run), so the VM's
# drift between runs cancels out, and the median over rounds is reported.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$ROOT/build}
BASE_BUILD= BASE_REV=21e89ef ROUNDS=4 OUT= ALSO=()
while [ $# -gt 0 ]; do
  case "$1" in
    --base-build) BASE_BUILD=$2; shift ;;
    --base-rev) BASE_REV=$2; shift ;;
    --also) ALSO+=("$2"); shift ;;
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
NAMES=(old)
for a in "${ALSO[@]}"; do NAMES+=("${a%%=*}"); done
NAMES+=(new)
for r in $(seq "$ROUNDS"); do
  echo "defence-cost: round $r of $ROUNDS"
  run "old-$r" "$BASE_BUILD"
  for a in "${ALSO[@]}"; do run "${a%%=*}-$r" "${a#*=}"; done
  run "new-$r" "$BUILD_DIR"
done
python3 - "$OUT" "$ROUNDS" "${NAMES[@]}" <<'PY'
import csv, statistics, sys
out, rounds, names = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
def load(name):
    rows = {}
    for r in csv.DictReader(open(f"{out}/{name}.csv")):
        key = (r["test"], r["workload"], r["variant"], int(r["size_bytes"]))
        col = "p50_ns" if r["test"] == "latency" else "rate_msgs_per_s"
        rows[key] = float(r[col]) if r[col] else None
    return rows
runs = {n: [load(f"{n}-{i}") for i in range(1, rounds + 1)] for n in names}
keys = sorted(k for k in runs["old"][0] if k[2] != "ucx-put")
others = names[1:]
print("| test | workload | size (B) | variant | " + " | ".join(f"{n}/old" for n in others) +
      " | " + " | ".join(f"{n} p50 or rate" for n in names) + " |")
print("|---|---|---|---|" + "---|" * (len(others) + len(names)))
fmt = lambda t, v: f"{v:.1f} ns" if t == "latency" else f"{v/1e6:.2f} M/s"
for k in keys:
    base = (k[0], k[1], "ucx-put", k[3])
    def norm(n, i):
        r = runs[n][i]
        return None if r.get(k) is None or r.get(base) is None else r[k] / r[base]
    cells = []
    for n in others:
        rs = [norm(n, i) / norm("old", i) for i in range(rounds)
              if norm(n, i) is not None and norm("old", i) is not None]
        cells.append(f"{statistics.median(rs):.3f}" if rs else "-")
    values = []
    for n in names:
        vs = [runs[n][i][k] for i in range(rounds) if runs[n][i].get(k) is not None]
        values.append(fmt(k[0], statistics.median(vs)) if vs else "-")
    print(f"| {k[0]} | {k[1]} | {k[3]} | {k[2]} | " + " | ".join(cells) + " | " + " | ".join(values) + " |")
PY
