#!/usr/bin/env bash
# Ordinary C as jams (docs/porting.md): jams with writable statics, a table
# built on first use in bss, a static table of allocator hooks and a static
# pointer to a ried variable, an image of more than 64 KiB and a jam of
# three files whose statics share names run end to end in both mailbox
# modes and both send modes, with default slots (4 KiB), and give exactly
# the results of a native build of the same sources; the large image is
# shipped once, ahead of its frames; no mapping is writable and executable.
#   run-cjams.sh <tc-cjams> <tc-cjams-native> <cjams prefix> [N]
set -euo pipefail
BIN=$1 NATIVE=$2 PREFIX=$3 N=${4:-300}
. "$(dirname "$0")/lib.sh"
OUT=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$OUT"' EXIT
export TC_KEY=${TC_KEY:-cjams-e2e-job-key-0123456789}
export UCX_TCP_CM_REUSEADDR=y
want=$("$NATIVE" native "$N" | grep '^results:')
echo "native: $want"
PORT=$((20000 + RANDOM % 10000))
for mailbox in cache nocache; do
  for send in local injected; do
    PORT=$((PORT + 1))
    "$BIN" receiver "$PREFIX" $PORT $((5 * N)) $mailbox > "$OUT/receiver" 2>&1 &
    R=$!
    wait_for_listening "$OUT/receiver" || { echo "FAILED: receiver did not listen"; cat "$OUT/receiver"; exit 1; }
    "$BIN" sender "$PREFIX" $PORT "$N" $send > "$OUT/sender" 2>&1 ||
      { echo "FAILED: sender ($mailbox, $send):"; cat "$OUT/sender" "$OUT/receiver"; exit 1; }
    wait $R || { echo "FAILED: receiver ($mailbox, $send):"; cat "$OUT/receiver"; exit 1; }
    grep -q "big, code in the frame: too large: a frame for its slot" "$OUT/sender" &&
      grep -q "a frame of jam 'big' with a 16-byte payload and its [0-9]*-byte image needs [0-9]* bytes; the receiver's slots hold 4096" "$OUT/sender" ||
      { echo "FAILED: an impossible frame was not refused with its sizes"; cat "$OUT/sender"; exit 1; }
    got=$(grep '^results:' "$OUT/receiver")
    echo "$mailbox/$send: $got"
    [ "$got" = "$want" ] || { echo "FAILED: $mailbox/$send differs from the native build"; cat "$OUT/receiver"; exit 1; }
    if [ $send = injected ]; then kind="local 0 injected $((5 * N))"; else kind="local $((5 * N)) injected 0"; fi
    grep -q "$kind" "$OUT/receiver" || { echo "FAILED: not all frames ran $send"; cat "$OUT/receiver"; exit 1; }
    if [ $send = injected ]; then ahead=1; else ahead=0; fi
    grep -q "peer: sent $((5 * N)), shipped ahead $ahead, faults 0" "$OUT/sender" &&
      grep -q "peer 1: executed $((5 * N)), rejected 0, abandoned 0" "$OUT/receiver" ||
      { echo "FAILED: per-peer statistics ($mailbox, $send)"; cat "$OUT/sender" "$OUT/receiver"; exit 1; }
    grep -q "shipped ahead $ahead\$" "$OUT/receiver" ||
      { echo "FAILED: the large image was not shipped ahead once ($mailbox, $send)"; cat "$OUT/receiver"; exit 1; }
    grep -q "writable+executable mappings: 0" "$OUT/receiver" ||
      { echo "FAILED: W^X ($mailbox, $send)"; cat "$OUT/receiver"; exit 1; }
  done
done
echo "PASSED: every mode gives the native results"
