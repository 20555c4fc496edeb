#!/usr/bin/env bash
# The DHT example (examples/dht), as a user builds it: from an installed
# prefix only, out of tree, with find_package(TwoChains); then run, small.
#   example-dht.sh <build-dir> <source-dir> <scratch-dir>
set -euo pipefail
BUILD=$1 SRC=$2 WORK=$3
rm -rf "$WORK" && mkdir -p "$WORK"
cmake --install "$BUILD" --prefix "$WORK/prefix" >/dev/null
cp -r "$SRC/examples/dht" "$WORK/src"
cmake -S "$WORK/src" -B "$WORK/build" -G Ninja -DCMAKE_PREFIX_PATH="$WORK/prefix" >/dev/null
cmake --build "$WORK/build" >/dev/null
out=$("$WORK/build/dht-example" --threads 3 --keys 4096 --hops 32 --walks 20 2>&1) ||
  { echo "$out"; echo "FAILED: the example failed"; exit 1; }
echo "$out"
grep -q "^dht-example: every answer checked: OK" <<<"$out"
[ "$(grep -c "wrong answers 0" <<<"$out")" = 2 ] || { echo "FAILED: both send modes"; exit 1; }
# Midway, a jam the server never loaded, deployed into it and answering.
grep -q "^  census  4096 of 4096 keys present" <<<"$out" ||
  { echo "FAILED: the census jam was not deployed into the running server"; exit 1; }
"$WORK/build/dht-example" --threads 0 >/dev/null 2>&1 && { echo "FAILED: bad options accepted"; exit 1; }
echo "example-dht: OK"
