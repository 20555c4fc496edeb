#!/usr/bin/env bash
# The benchmark's own two processes, briefly, as a user runs them: both
# sides send and run frames, then close. A clean run logs no error on
# either side; in particular a peer's last credit report, landing while
# the other side closes it, is not a refused message.
#   run-tc-perf.sh <tc-perf> [UCX_TLS]
set -euo pipefail
TC_PERF=$1
if [ $# -ge 2 ]; then export UCX_TLS=$2; fi
TC_KEY=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
export TC_KEY
OUT=$(mktemp -d)
SPID=
trap 'kill $SPID 2>/dev/null || true; rm -rf "$OUT"' EXIT
# Three runs: the close is a race, which one run need not lose.
for RUN in 1 2 3; do
  PORT=$(( 20000 + RANDOM % 11000 ))
  timeout 120 "$TC_PERF" --port "$PORT" > "$OUT/server" 2>&1 &
  SPID=$!
  STATUS=0
  timeout 120 "$TC_PERF" --port "$PORT" --quick --tests latency \
    --variants tc-local,tc-injected --rounds 2 127.0.0.1 > "$OUT/client" 2>&1 || STATUS=$?
  wait $SPID || STATUS=$?
  cat "$OUT/client" "$OUT/server"
  [ $STATUS -eq 0 ] || { echo "run-tc-perf.sh: run $RUN: client or server exited with $STATUS"; exit 1; }
  grep -q "^client tc_context_stats: .* rejected 0;" "$OUT/client"
  if grep -n "twochains: error" "$OUT/client" "$OUT/server"; then
    echo "run-tc-perf.sh: run $RUN: a clean run logged errors (above)"
    exit 1
  fi
  # Over TCP a ping-pong's credits ride on its frames: a report of its own
  # (a system call) only where a test ends, not one every 16 frames.
  if [ "${UCX_TLS:-}" = tcp ]; then
    read -r SENT REPORTS < <(sed -n 's/^client tc_context_stats: frames_sent \([0-9]*\),.*credit_reports \([0-9]*\),.*/\1 \2/p' "$OUT/client")
    [ -n "$SENT" ] && [ $(( REPORTS * 64 )) -lt "$SENT" ] || {
      echo "run-tc-perf.sh: run $RUN: $REPORTS credit reports for $SENT frames"; exit 1; }
  fi
done
echo "tc-perf over ${UCX_TLS:-default transports}: OK"
