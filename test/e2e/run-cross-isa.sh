#!/usr/bin/env bash
# An x86_64 process and an aarch64 one (under qemu-aarch64) send each other
# frames, both send modes, with the package built for both instruction
# sets: each side's handshake names its ISA and a sender injects the images
# built for its receiver's (docs/heterogeneous.md).
#   run-cross-isa.sh <tc-e2e> <tc-e2e for aarch64> <stdlib prefix> <qemu-aarch64> <aarch64 LD_LIBRARY_PATH>
# Checks, each as run.sh does (every frame ran once, the totals right):
#   x86_64 -> aarch64, code cache, UCX's transports (shared memory here)
#   x86_64 -> aarch64, over TCP alone (UCX_TLS=tcp: frames by message)
#   x86_64 -> aarch64, the receiver's executor thread (its WFE wait)
#   x86_64 -> aarch64 with slots smaller than the images: the aarch64
#   images are shipped ahead of their frames
#   aarch64 -> x86_64, code cache and no-cache, and over TCP
#   requesters of either ISA against receivers of the other: every
#   standard-package reply, both send modes
# An aarch64 receiver in no-cache mode is not run: QEMU's user mode does not
# see code rewritten through the code cache's writable alias (aarch64-checks
# shows it), which real hardware does.
set -euo pipefail
X86=$1 A64=$2 PREFIX=$3 QEMU=$4 LIBS=$5
. "$(dirname "$0")/lib.sh"
for f in "$X86" "$A64" "$QEMU"; do
  [ -x "$f" ] || { echo "skipped: $f is missing"; exit 77; }
done
grep -q "^isa aarch64" "$PREFIX/lib/twochains/packages/stdlib/manifest.tcm" ||
  { echo "FAILED: the standard package was not built for aarch64"; exit 1; }
OUT=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$OUT"' EXIT
export UCX_TCP_CM_REUSEADDR=y
PORT=$((20000 + RANDOM % 10000))
FRAMES=400
SUMS=$(( (FRAMES + 1) / 2 ))
EXPECT=$(python3 -c "
n=$FRAMES; a=[0]*2000
for i in range(1, n, 2): a[i%1000]=i; a[1000+i%1000]=i
print(sum(a))")

check() { # label receiver-log sender-log
  grep -qx "receiver: total $(( SUMS * 36 ))" "$2" &&
    grep -qx "receiver: array checksum $EXPECT" "$2" &&
    grep -q "ran $FRAMES frames: $((FRAMES / 2)) local, $((FRAMES / 2)) injected, 0 rejected" "$2" &&
    grep -q "writable+executable mappings: 0" "$2" ||
    { echo "FAILED: $1"; cat "$3" "$2"; exit 1; }
  echo "ok: $1 ($(grep -o 'mailbox [a-z-]*' "$2"), $(grep -o 'peers by rma [0-9]*, by messages [0-9]*' "$2"))"
}

# receiver-side runner, sender-side runner, label, env...
pair() {
  local recv=$1 send=$2 label=$3
  shift 3
  PORT=$((PORT + 1))
  if [ "$recv" = a64 ]; then
    env "$@" timeout 120 "$QEMU" -L /usr/aarch64-linux-gnu -E LD_LIBRARY_PATH="$LIBS" \
      $(for e in "$@"; do printf -- '-E %s ' "$e"; done) "$A64" receiver "$PREFIX" $PORT $FRAMES \
      > "$OUT/r" 2>&1 &
  else
    env "$@" timeout 120 "$X86" receiver "$PREFIX" $PORT $FRAMES > "$OUT/r" 2>&1 &
  fi
  local R=$!
  wait_for_listening "$OUT/r" || for _ in $(seq 200); do grep -q listening "$OUT/r" && break; sleep 0.1; done
  if [ "$send" = a64 ]; then
    env "$@" timeout 120 "$QEMU" -L /usr/aarch64-linux-gnu -E LD_LIBRARY_PATH="$LIBS" \
      $(for e in "$@"; do printf -- '-E %s ' "$e"; done) "$A64" sender "$PREFIX" $PORT $FRAMES \
      > "$OUT/s" 2>&1 || { echo "FAILED: $label: sender"; cat "$OUT/s" "$OUT/r"; exit 1; }
  else
    env "$@" timeout 120 "$X86" sender "$PREFIX" $PORT $FRAMES > "$OUT/s" 2>&1 ||
      { echo "FAILED: $label: sender"; cat "$OUT/s" "$OUT/r"; exit 1; }
  fi
  wait $R || { echo "FAILED: $label: receiver"; cat "$OUT/r"; exit 1; }
  check "$label" "$OUT/r" "$OUT/s"
}

pair a64 x86 "x86_64 -> aarch64" TC_MAILBOX_MODE=code-cache
pair a64 x86 "x86_64 -> aarch64 over TCP" TC_MAILBOX_MODE=code-cache UCX_TLS=tcp
pair a64 x86 "x86_64 -> aarch64, executor thread" TC_MAILBOX_MODE=code-cache TC_E2E_EXECUTOR=1
grep -q "executor thread, waiting with wfe" "$OUT/r" ||
  { echo "FAILED: the aarch64 executor does not wait with WFE"; cat "$OUT/r"; exit 1; }
pair a64 x86 "x86_64 -> aarch64, images shipped ahead (128-byte slots)" TC_MAILBOX_MODE=code-cache TC_E2E_SLOT_SIZE=128
grep -Eq "images shipped ahead [1-9]" "$OUT/r" ||
  { echo "FAILED: no image was shipped ahead"; cat "$OUT/r"; exit 1; }
pair x86 a64 "aarch64 -> x86_64" TC_MAILBOX_MODE=code-cache
pair x86 a64 "aarch64 -> x86_64, no-cache" TC_MAILBOX_MODE=no-cache
pair x86 a64 "aarch64 -> x86_64 over TCP" TC_MAILBOX_MODE=code-cache UCX_TLS=tcp

# Replies: every jam of the standard package answered by an aarch64 receiver.
PORT=$((PORT + 1))
timeout 120 "$QEMU" -L /usr/aarch64-linux-gnu -E LD_LIBRARY_PATH="$LIBS" "$A64" receiver \
  "$PREFIX" $PORT 100000 > "$OUT/r" 2>&1 &
R=$!
wait_for_listening "$OUT/r" || true
timeout 120 "$X86" requester "$PREFIX" $PORT 42 > "$OUT/q" 2>&1 ||
  { echo "FAILED: replies"; cat "$OUT/q" "$OUT/r"; exit 1; }
kill $R 2>/dev/null || true
grep -q "all 16 replies correct (local)" "$OUT/q" && grep -q "all 16 replies correct (injected)" "$OUT/q" ||
  { echo "FAILED: replies"; cat "$OUT/q" "$OUT/r"; exit 1; }
echo "ok: x86_64 requester -> aarch64 receiver, every reply right, both modes"

# And the other way: an aarch64 requester, whose replies an x86_64 receiver
# sends back as frames it runs under qemu.
PORT=$((PORT + 1))
timeout 120 "$X86" receiver "$PREFIX" $PORT 100000 > "$OUT/r" 2>&1 &
R=$!
wait_for_listening "$OUT/r" || true
timeout 120 "$QEMU" -L /usr/aarch64-linux-gnu -E LD_LIBRARY_PATH="$LIBS" "$A64" requester \
  "$PREFIX" $PORT 42 > "$OUT/q" 2>&1 || { echo "FAILED: aarch64 replies"; cat "$OUT/q" "$OUT/r"; exit 1; }
kill $R 2>/dev/null || true
grep -q "all 16 replies correct (local)" "$OUT/q" && grep -q "all 16 replies correct (injected)" "$OUT/q" ||
  { echo "FAILED: aarch64 replies"; cat "$OUT/q" "$OUT/r"; exit 1; }
echo "ok: aarch64 requester -> x86_64 receiver, every reply right, both modes"
echo "PASSED: cross-ISA"
