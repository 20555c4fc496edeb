#!/usr/bin/env bash
# The victim/attacker run (docs/performance.md, "Isolation"): a well-behaved
# peer's round-trip p50/p99 and streaming rate alone, beside a peer flooding
# at full speed, and beside one that never drains its replies; over shared
# memory, one receiver, in one run; and beside one that connects and closes
# in a loop (handshakes and reaping on the receiver); and, as the control,
# beside a process that only burns a CPU. Targets (Husky's isolation bound): the
# victim keeps at least 75% of its rate alone and its p99 within 2x. The
# victim's rate is measured twice: saturating (it streams as fast as it can,
# so beside a flooder a fair receiver gives it half) and paced at
# TC_VICTIM_RATE (default 1 M frames/s: a well-behaved peer, which the 75%
# bound is about).
#   bench/run-isolation.sh [N]    N round trips per victim run (default 20000)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$ROOT/build}
N=${1:-20000}
cmake --build "$BUILD_DIR" --target isolation >/dev/null
BIN=$BUILD_DIR/bench/isolation
OUT=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$OUT"' EXIT
PORT=${PORT_BASE:-$((15000 + RANDOM % 15000))}
run() { # name [attacker]
  PORT=$((PORT + 1))
  "$BIN" receiver $PORT 120 > "$OUT/receiver" 2>&1 &
  local R=$!
  for _ in $(seq 100); do grep -q listening "$OUT/receiver" && break; sleep 0.1; done
  local A=
  if [ "${2:-}" = hog ]; then
    # The control: a process that only burns a CPU, touching nothing of
    # Two-Chains: what a third busy process costs on this machine.
    timeout 60 sh -c 'while :; do :; done' &
    A=$!
  elif [ -n "${2:-}" ]; then
    "$BIN" "$2" $PORT 60 > "$OUT/$2" 2>&1 &
    A=$!
    for _ in $(seq 100); do grep -q connected "$OUT/$2" && break; sleep 0.1; done
    sleep 0.5
  fi
  "$BIN" victim $PORT "$N" | sed "s/^victim:/$1:/"
  [ -n "$A" ] && kill $A 2>/dev/null
  kill $R 2>/dev/null
  wait 2>/dev/null || true
}
{
  run alone
  run flood flood
  run stall stall
  run churn churn
  run hog hog
} | tee "$OUT/lines"
python3 - "$OUT/lines" <<'PY'
import re, sys
rows = {}
for line in open(sys.argv[1]):
    m = re.match(r"(\w+): p50 (\d+) ns, p99 (\d+) ns, max (\d+) ns, rate (\d+) msg/s, "
                 r"paced (\d+) of (\d+) msg/s", line)
    if m:
        rows[m[1]] = tuple(float(x) for x in m.groups()[1:])
a = rows["alone"]
print("| victim | p50 | p99 | max | saturating rate | / alone | paced rate | / alone | p99 / alone |")
print("|---|---|---|---|---|---|---|---|---|")
for k in ("alone", "flood", "stall", "churn", "hog"):
    p50, p99, worst, rate, paced, offered = rows[k]
    print(f"| {k} | {p50:.0f} ns | {p99:.0f} ns | {worst/1e3:.0f} us | {rate/1e6:.2f} M/s | "
          f"{rate/a[3]:.2f} | {paced/1e6:.2f} M/s | {paced/a[4]:.2f} | {p99/a[1]:.2f} |")
PY
