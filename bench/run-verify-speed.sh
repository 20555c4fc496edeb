#!/usr/bin/env bash
# What the sandbox's verifier costs a receiver under the verified policy
# (docs/verified.md): the standard package's jams and the verified test
# package's, built sandboxed for aarch64 by twochains-pkg-gen --sandbox,
# then verify-speed over their images (its throughput, and a package's
# admission: a region made and every image installed and verified).
#   bench/run-verify-speed.sh [build dir]
set -euo pipefail
BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
for pkg in "stdlib $ROOT/stdlib-jams/src" "tenant $ROOT/test/e2e/packages/verified/src"; do
  set -- $pkg
  cp -r "$2" "$OUT/src-$1"
  "$BUILD/bin/twochains-pkg-gen" --package "$1" --source "$OUT/src-$1" --prefix "$OUT/inst" \
    --isa aarch64 --sandbox --build-dir "$OUT/build-$1" > /dev/null
done
"$BUILD/bench/verify-speed" "$OUT"/inst/lib/twochains/packages/*/aarch64/jams/*.jam
