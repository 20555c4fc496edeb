#!/usr/bin/env bash
# Quarantine by peer address (docs/containment.md), with real processes over
# UCX: an attacker holding the key connects four times, one connection after
# the other, each with three frames whose jam loops for ever, beside a good
# peer that calls 'answer' all the while. Per connection, the element's
# quarantine (three faults) would let every reconnect loop three times more;
# the address's budget of abandoned-frame time is kept across connections:
#   - the attacker's address is quarantined: at most four of its twelve
#     frames run (250 ms limit, 1000 ms budget), its later connections are
#     refused as quarantined, and the receiver counts and logs it;
#   - the good peer's calls (over loopback: another address) all succeed,
#     each within its usual 5 s;
#   - once the window has passed, the attacker's address is let in again.
# The attacker needs an address of its own: this host's first IPv4 address
# beyond loopback (the good peer uses 127.0.0.1). Skipped (77) without one:
# UCX 1.13 cannot connect from a second loopback address (127.0.0.2).
#   run-quarantine.sh <tc-containment> <containment package prefix>
set -euo pipefail
source "$(dirname "$0")/lib.sh"
TOOL=$1 PKG=$2
FAR=$({ ip -4 -o addr show scope global 2>/dev/null | awk '{sub("/.*", "", $4); print $4}';
        hostname -I 2>/dev/null | tr ' ' '\n'; } | grep -E '^[0-9.]+$' | grep -v '^127\.' |
      head -1 || true)
if [ -z "$FAR" ]; then
  echo "skipped: this host has no IPv4 address beyond loopback for the attacker"
  exit 77
fi
OUT=$(mktemp -d)
RPID= CPID=
trap 'kill $RPID $CPID 2>/dev/null || true; rm -rf "$OUT"' EXIT
export UCX_TCP_CM_REUSEADDR=y
# Beyond loopback a receiver needs the job's key.
export TC_KEY=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
PORT=$(( 20000 + RANDOM % 11000 ))
expect() { # file pattern what
  grep -q -- "$2" "$1" || { echo "FAILED: $3"; echo "--- $1:"; grep -v "UCX  WARN" "$1"; exit 1; }
}
num() { sed -n "s/$1/\1/p" "$2" | head -1; }

# 250 ms a loop; a budget of four of them in a window of 10 s, which the
# attack (about 1.5 s) stays well inside however loaded the machine is.
WINDOW_MS=10000
TC_JAM_TIME_LIMIT_MS=250 TC_QUARANTINE_BUDGET_MS=1000 TC_QUARANTINE_WINDOW_MS=$WINDOW_MS \
  TC_TEST_STOP_FILE="$OUT/stop-receiver" timeout 120 \
  "$TOOL" receiver "$PKG" containment $PORT 1000000000 0.0.0.0 > "$OUT/receiver" 2>&1 &
RPID=$!
wait_for_listening "$OUT/receiver" || { echo "FAILED: the receiver did not listen"; exit 1; }
"$TOOL" caller "$PKG" 127.0.0.1 $PORT 200 "$OUT/stop" > "$OUT/caller" 2>&1 &
CPID=$!
for _ in $(seq 100); do grep -q connected "$OUT/caller" && break; sleep 0.1; done
# After its four connections the attacker waits out the window and comes
# back with one well-behaved frame.
timeout 90 "$TOOL" loopers "$PKG" "$FAR" $PORT 4 3 $(( WINDOW_MS + 1000 )) > "$OUT/loopers" 2>&1
# The caller stops first: a receiver that stopped under its last call
# failed that call (TC_ERR_IO), the good peer's only failure in a run.
touch "$OUT/stop"
STATUS=0
wait $CPID || STATUS=$?
CPID=
touch "$OUT/stop-receiver"
wait $RPID
RPID=
grep -v "UCX  WARN" "$OUT/loopers" "$OUT/caller"
grep -E "^receiver: (abandoned|quarantine)" "$OUT/receiver"

ABANDONED=$(num '^receiver: abandoned: faulted \([0-9]*\), .*' "$OUT/receiver")
TIMED_OUT=$(num '^receiver: abandoned: faulted [0-9]*, timed out \([0-9]*\);.*' "$OUT/receiver")
[ $(( ABANDONED + TIMED_OUT )) -le 4 ] ||
  { echo "FAILED: $(( ABANDONED + TIMED_OUT )) of the attacker's 12 looping frames ran"; exit 1; }
expect "$OUT/loopers" "connection 4: refused: quarantined" "the attacker's last connection refused"
REFUSED=$(num '^receiver: quarantine by address: .*connections refused \([0-9]*\)$' "$OUT/receiver")
[ "${REFUSED:-0}" -ge 2 ] ||
  { echo "FAILED: the receiver refused ${REFUSED:-no} connections as quarantined"; exit 1; }
expect "$OUT/receiver" "quarantine by address: addresses 1," "one address quarantined"
expect "$OUT/receiver" "quarantined address $FAR for 10 s" "the receiver logs the address"
expect "$OUT/receiver" "its address is quarantined for" "and each refused connection"
[ $STATUS -eq 0 ] || { echo "FAILED: the good peer's calls"; exit 1; }
expect "$OUT/caller" "calls answered, 0 failed" "every call of the good peer answered"
expect "$OUT/loopers" "after waiting: connected, sent a count frame: success" \
  "the attacker's address let in again once the window passed"
expect "$OUT/receiver" "containment_count 1$" "its frame ran"
echo "quarantine by address: OK"
