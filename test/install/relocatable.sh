#!/usr/bin/env bash
# Installs Two-Chains into one prefix, moves the prefix, and checks that a
# CMake project and the twochains-jamcc driver use it from its new place.
#   relocatable.sh <build-dir> <source-dir> <scratch-dir>
set -euo pipefail
BUILD=$1 SRC=$2 WORK=$3
LLVM=/usr/lib/llvm-19/bin
rm -rf "$WORK" && mkdir -p "$WORK"
cmake --install "$BUILD" --prefix "$WORK/first" >/dev/null
mv "$WORK/first" "$WORK/moved"
P=$WORK/moved

for f in bin/twochains-jamcc lib/twochains/TwoChainsJam.so lib/twochains/TwoChainsJamPass.so \
         include/twochains/jam.h lib/cmake/TwoChains/TwoChainsConfig.cmake; do
  [ -e "$P/$f" ] || { echo "missing $f in the installed prefix"; exit 1; }
done
if grep -rq "$WORK/first" "$P"; then
  echo "the installed prefix refers to where it was installed"; exit 1
fi

cmake -S "$SRC/test/install/consumer" -B "$WORK/consumer" -G Ninja \
      -DCMAKE_PREFIX_PATH="$P" >/dev/null
cmake --build "$WORK/consumer" >/dev/null
grep -qx "$P/lib/twochains/TwoChainsJam.so" "$WORK/consumer/found.txt"
"$LLVM/llvm-readelf" -p .tc.jam "$WORK/consumer/jam_server_side_sum.o" | grep 'element=server_side_sum' >/dev/null
[ -z "$("$LLVM/llvm-nm" -u "$WORK/consumer/jam_server_side_sum.o")" ]

"$P/bin/twochains-jamcc" -c "$SRC/examples/jams/jam_hello.amc" -o "$WORK/hello.o"
"$LLVM/llvm-readelf" -p .tc.imports "$WORK/hello.o" | grep puts >/dev/null
echo "relocatable install: OK"
