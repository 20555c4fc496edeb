#!/usr/bin/env bash
# Deploying across instruction sets (docs/deploying.md, docs/heterogeneous.md):
# package 'dep' built for x86_64 and aarch64 (v1, v2 with the new jam
# 'hist'); an x86_64 sender deploys v2 to an aarch64 receiver of v1 under
# qemu-aarch64, and the reverse. The receiver's slots (256 bytes) are
# smaller than the images, so its injected frames ship them ahead. Each
# sender checks the answers against its own computation.
#   run-deploy-cross-isa.sh <tc-deploy> <tc-deploy for aarch64> <twochains-pkg-gen>
#                           <source dir of the packages> <qemu-aarch64> <aarch64 LD_LIBRARY_PATH>
set -euo pipefail
X86=$1 A64=$2 PKGGEN=$3 SRC=$4 QEMU=$5 LIBS=$6
. "$(dirname "$0")/lib.sh"
for f in "$X86" "$A64" "$QEMU"; do
  [ -x "$f" ] || { echo "skipped: $f is missing"; exit 77; }
done
OUT=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$OUT"' EXIT
export TC_KEY=${TC_KEY:-deploy-isa-e2e-key-0123456789abcd}
export UCX_TCP_CM_REUSEADDR=y
for v in v1 v2; do
  cp -r "$SRC/$v" "$OUT/src-$v"
  "$PKGGEN" --package dep --source "$OUT/src-$v" --prefix "$OUT/$v" --isa=x86_64,aarch64 \
            --build-dir "$OUT/build-$v" > /dev/null 2>&1 || { echo "FAILED: build $v"; exit 1; }
done
size=$(stat -c %s "$OUT/v2/lib/twochains/packages/dep/aarch64/jams/hist.jam")
echo "hist's aarch64 image file: $size bytes, slots of 256"
PORT=$((20000 + RANDOM % 10000))
run() { # receiver-isa
  PORT=$((PORT + 1))
  mkfifo "$OUT/in-$1"
  if [ "$1" = a64 ]; then
    timeout 300 "$QEMU" -L /usr/aarch64-linux-gnu -E LD_LIBRARY_PATH="$LIBS" -E TC_KEY="$TC_KEY" \
      -E DEPLOY_SLOT_SIZE=256 "$A64" receiver "$OUT/v1" $PORT job < "$OUT/in-$1" > "$OUT/r-$1" 2>&1 &
  else
    DEPLOY_SLOT_SIZE=256 timeout 300 "$X86" receiver "$OUT/v1" $PORT job \
      < "$OUT/in-$1" > "$OUT/r-$1" 2>&1 &
  fi
  exec 3> "$OUT/in-$1"
  for _ in $(seq 300); do grep -q listening "$OUT/r-$1" && break; sleep 0.1; done
  local st=0
  if [ "$1" = a64 ]; then
    timeout 300 "$X86" sender "$OUT/v2" $PORT new-jam > "$OUT/s-$1" 2>&1 || st=$?
  else
    timeout 300 "$QEMU" -L /usr/aarch64-linux-gnu -E LD_LIBRARY_PATH="$LIBS" -E TC_KEY="$TC_KEY" \
      "$A64" sender "$OUT/v2" $PORT new-jam > "$OUT/s-$1" 2>&1 || st=$?
  fi
  echo STOP >&3
  exec 3>&-
  wait || true
  echo "--- receiver $1: sender"; cat "$OUT/s-$1"
  echo "--- receiver $1: receiver"; cat "$OUT/r-$1"
  [ $st -eq 0 ] && grep -q "receiver: 1 deployed, 0 refused" "$OUT/r-$1" ||
    { echo "FAILED: deploying to the $1 receiver"; exit 1; }
}
run a64
run x86
echo "PASSED: packages deployed across instruction sets, both ways"
