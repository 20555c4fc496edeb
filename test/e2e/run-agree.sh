#!/usr/bin/env bash
# Agreement: two builds of package 'agree' (same name, other rieds). A
# sender with the other build is refused at the handshake with
# TC_ERR_PACKAGE_MISMATCH, and both sides' messages name the package and
# both identities; a sender with the same build connects and its frame
# runs.
#   run-agree.sh <tc-agree> <twochains-pkg-gen> <source dir of the two builds>
set -euo pipefail
BIN=$1 PKGGEN=$2 SRC=$3
. "$(dirname "$0")/lib.sh"
OUT=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$OUT"' EXIT
export TC_KEY=${TC_KEY:-agree-e2e-job-key-0123456789abcd}
for v in a b; do
  cp -r "$SRC/$v" "$OUT/src-$v"
  "$PKGGEN" --package agree --source "$OUT/src-$v" --prefix "$OUT/$v" \
            --build-dir "$OUT/build-$v" > /dev/null
done
ida=$(awk '$1 == "identity" {print $2}' "$OUT/a/lib/twochains/packages/agree/manifest.tcm")
idb=$(awk '$1 == "identity" {print $2}' "$OUT/b/lib/twochains/packages/agree/manifest.tcm")
[ "$ida" != "$idb" ] || { echo "FAILED: the two builds have one identity"; exit 1; }
PORT=$((20000 + RANDOM % 10000))
"$BIN" receiver "$OUT/a" $PORT > "$OUT/r1" 2>&1 &
R=$!
wait_for_listening "$OUT/r1"
"$BIN" sender "$OUT/b" $PORT > "$OUT/s1" 2>&1
kill $R 2>/dev/null || true; wait $R 2>/dev/null || true
cat "$OUT/s1" "$OUT/r1"
grep -q "sender: connect: a package both sides have is built differently" "$OUT/s1"
grep -q "package 'agree' differs: this sender has identity $idb, the receiver $ida" "$OUT/s1"
grep -q "package 'agree' differs: this receiver has identity $ida, the sender $idb" "$OUT/r1"
PORT=$((PORT + 1))
"$BIN" receiver "$OUT/a" $PORT > "$OUT/r2" 2>&1 &
R=$!
wait_for_listening "$OUT/r2"
"$BIN" sender "$OUT/a" $PORT > "$OUT/s2" 2>&1
wait $R
cat "$OUT/s2" "$OUT/r2"
grep -q "sender: frame: success" "$OUT/s2"
grep -q "receiver: 1 frames, 0 rejected" "$OUT/r2"
echo "PASSED: a package mismatch fails the connect, naming both identities"
