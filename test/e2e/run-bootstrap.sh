#!/usr/bin/env bash
# Bootstrap: a receiver on port 0 publishes its address blob, a sender
# connects from it; a sender started before its receiver listens connects
# once it does, within its timeout; tc_connect to nothing gives up at its
# timeout; a receiver restarted on its port at once listens again (no
# UCX_TCP_CM_REUSEADDR set by hand); blobs that are not addresses are
# refused, each with its reason.
#   run-bootstrap.sh <tc-bootstrap> <stdlib prefix>
set -euo pipefail
BIN=$1 PREFIX=$2
. "$(dirname "$0")/lib.sh"
OUT=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$OUT"' EXIT
unset UCX_TCP_CM_REUSEADDR
export TC_KEY=${TC_KEY:-bootstrap-e2e-job-key-0123456789}
fail() { echo "FAILED: $*"; cat "$OUT"/* 2>/dev/null; exit 1; }

# Port 0 and the blob.
"$BIN" receiver "$PREFIX" 0 "$OUT/blob" 50 > "$OUT/r1" 2>&1 &
R=$!
wait_for_listening "$OUT/r1" || fail "no listener"
grep -q "listening on port [1-9][0-9]* (any)" "$OUT/r1" || fail "port 0 gave no port"
"$BIN" blob "$PREFIX" "$OUT/blob" 50 > "$OUT/s1" 2>&1 || fail "connect from the blob"
wait $R || fail "receiver 1"
grep -q "ran 50 frames" "$OUT/r1" || fail "frames from the blob's sender"
echo "port 0 and address blob: OK"

# The sender first; its receiver listens 1.5 s later.
PORT=$((20000 + RANDOM % 10000))
# It stays connected after its frames, so the receiver closes first and
# leaves its port in TIME_WAIT for the restart below.
TC_BOOTSTRAP_LINGER_MS=1500 "$BIN" port "$PREFIX" $PORT 20 10000 > "$OUT/s2" 2>&1 &
S=$!
sleep 1.5
"$BIN" receiver "$PREFIX" $PORT 0 20 > "$OUT/r2" 2>&1 &
R=$!
wait $S || fail "the early sender"
wait $R || fail "receiver 2"
grep -q "connect: success after less than the timeout" "$OUT/s2" || fail "early sender"
[ "$(grep -c "error" "$OUT/s2" || true)" = 0 ] || fail "the retries were logged"
echo "sender before receiver: OK"

# Restarted on the same port, at once: the old connection is in TIME_WAIT
# (without the runtime's default, UCX fails to bind: "Device is busy").
# Whether TIME_WAIT is left depends on how the two ends closed (a reset
# leaves none); the unit test ContextEnvironment.ReuseAddressIsTheDefault
# checks the setting itself.
if command -v ss >/dev/null && ! ss -tan | grep -q "TIME-WAIT.*127.0.0.1:$PORT "; then
  echo "note: no TIME_WAIT was left on port $PORT this time"
fi
"$BIN" receiver "$PREFIX" $PORT 0 20 > "$OUT/r3" 2>&1 &
R=$!
wait_for_listening "$OUT/r3" || fail "restart: $(cat "$OUT/r3")"
"$BIN" port "$PREFIX" $PORT 20 5000 > "$OUT/s3" 2>&1 || fail "sender 3"
wait $R || fail "receiver 3"
echo "restart on the same port: OK"

# Nothing listens: the timeout holds, and one line says so.
PORT2=$((PORT + 1))
"$BIN" port "$PREFIX" $PORT2 1 800 > "$OUT/s4" 2>&1 && fail "connected to nothing"
grep -q "connect: input/output error after less than the timeout" "$OUT/s4" || fail "timeout"
[ "$(grep -c "twochains: error" "$OUT/s4")" = 1 ] || fail "not one line: $(cat "$OUT/s4")"
grep -q "nothing answered in [0-9]* ms ([0-9]* attempts)" "$OUT/s4" || fail "the message"
echo "nothing listening: OK"

"$BIN" bad "$PREFIX" > "$OUT/b" 2>&1
grep -q "^junk: bad frame magic" "$OUT/b" && grep -q "^version: unsupported" "$OUT/b" &&
  grep -q "^short: frame length or offset" "$OUT/b" && grep -q "^tiny: bad frame magic" "$OUT/b" ||
  fail "bad blobs: $(cat "$OUT/b")"
echo "bad blobs: OK"
echo "PASSED"
