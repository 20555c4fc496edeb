#!/usr/bin/env bash
# The receiver's code cache (docs/code-cache.md), over shared memory and
# TCP: only the first injected frame of each image carries code; a cache
# too small for the images evicts, the receiver asks for the code again and
# the sender resends it, and still every frame runs exactly once; no mapping
# is writable and executable in code-cache and no-cache modes; the paper's
# in-place mode is refused.
#   run-code-cache.sh <tc-e2e> <stdlib prefix>
set -euo pipefail
E2E=$1 PREFIX=$2
RUN="$(dirname "$0")/run.sh"
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
FRAMES=2000 # half injected, alternating server_side_sum and indirect_put

expect() { # file, line (a fixed string), what
  grep -qF -- "$2" "$1" || { echo "FAILED: $3: no '$2' in:"; cat "$1"; exit 1; }
}

for tls in default tcp; do
  args=(); [ $tls = tcp ] && args=(tcp)
  "$RUN" "$E2E" "$PREFIX" $FRAMES "${args[@]}" > "$OUT/run" ||
    { echo "FAILED: a run did not pass:"; cat "$OUT/run"; exit 1; }
  expect "$OUT/run" "receiver: mailbox code-cache" "code cache is the default ($tls)"
  expect "$OUT/run" "sender: code in 2 frames (384 bytes), cached 998, resent 0" \
      "code travels once per image ($tls)"
  expect "$OUT/run" "receiver: cache: installs 2, cached runs 998, misses 0, evictions 0, hash mismatches 0" \
      "the receiver installed each image once ($tls)"
  expect "$OUT/run" "receiver: writable+executable mappings: 0" "W^X ($tls)"

  # Room for one image only: each install evicts the other one.
  TC_E2E_CODE_CACHE=256 "$RUN" "$E2E" "$PREFIX" $FRAMES "${args[@]}" > "$OUT/run" ||
    { echo "FAILED: a run did not pass:"; cat "$OUT/run"; exit 1; }
  expect "$OUT/run" "sender: code in 1000 frames (192000 bytes), cached 998, resent 998" \
      "every cached frame was sent again with code ($tls)"
  expect "$OUT/run" "receiver: cache: installs 1000, cached runs 0, misses 998, evictions 999" \
      "evictions and misses ($tls)"
done

# Resent frames land over the cached ones in any order: even with ordered
# placement the receiver checks them whole (checksum) before running.
TC_E2E_ORDERED=1 TC_E2E_CODE_CACHE=256 "$RUN" "$E2E" "$PREFIX" $FRAMES > "$OUT/run" ||
    { echo "FAILED: a run did not pass:"; cat "$OUT/run"; exit 1; }
expect "$OUT/run" "resent 998" "resends with ordered placement"

TC_MAILBOX_MODE=no-cache "$RUN" "$E2E" "$PREFIX" $FRAMES > "$OUT/run" ||
    { echo "FAILED: a run did not pass:"; cat "$OUT/run"; exit 1; }
expect "$OUT/run" "receiver: mailbox no-cache" "no-cache mode"
expect "$OUT/run" "sender: code in 1000 frames" "no-cache: code in every injected frame"
expect "$OUT/run" "receiver: writable+executable mappings: 0" "no-cache: W^X"

# The paper's in-place mode ran code in memory the peer could still write:
# refused, with the reason (docs/security.md).
TC_MAILBOX_MODE=in-place "$E2E" receiver "$PREFIX" 1 1 > "$OUT/bad" 2>&1 && exit 1
expect "$OUT/bad" "in-place is no longer offered: code never runs from memory a peer can write" \
  "in-place refused"

TC_MAILBOX_MODE=bogus "$E2E" receiver "$PREFIX" 1 1 > "$OUT/bad" 2>&1 && exit 1
expect "$OUT/bad" "TC_MAILBOX_MODE='bogus' is none of code-cache, no-cache" "bad mode"
echo "code cache: OK"
