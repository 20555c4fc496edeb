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
         include/twochains/jam.h lib/cmake/TwoChains/TwoChainsConfig.cmake \
         bin/twochains-verify lib/twochains/sandbox/as; do
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
# The sandbox from the moved prefix (docs/sandbox.md): twochains-jamcc
# --sandbox finds its assembler beside itself, jamlink --sandbox links,
# twochains-verify accepts; the same jam built plainly is refused.
if [ -e /usr/aarch64-linux-gnu/include/stdio.h ]; then
  "$P/bin/twochains-jamcc" --sandbox --target=aarch64-linux-gnu \
    -c "$SRC/examples/jams/jam_server_side_sum.amc" -o "$WORK/jam_sum.o"
  "$P/bin/jamlink" --sandbox "$WORK/jam_sum.o" -o "$WORK/sum.jam"
  "$P/bin/twochains-verify" "$WORK/sum.jam" | grep -q "text: verified"
  "$P/bin/twochains-jamcc" --target=aarch64-linux-gnu \
    -c "$SRC/examples/jams/jam_server_side_sum.amc" -o "$WORK/jam_plain.o"
  if "$P/bin/twochains-verify" -q "$WORK/jam_plain.o" 2>/dev/null; then
    echo "a jam built without --sandbox verified"; exit 1
  fi
fi
# pkg-config, from the moved prefix: a program built with its flags runs
# against the installed library and agrees with the headers' version.
cat > "$WORK/version.c" <<'C'
#include <stdio.h>
#include <twochains/twochains.h>
int main(void) {
  printf("%s %s\n", tc_get_version_string(), tc_get_version() == TC_VERSION ? "matches" : "differs");
  return tc_get_version() != TC_VERSION;
}
C
PKG_CONFIG_PATH="$P/lib/pkgconfig" pkg-config --exists twochains
cc "$WORK/version.c" -o "$WORK/version" $(PKG_CONFIG_PATH="$P/lib/pkgconfig" pkg-config --cflags --libs twochains)
LD_LIBRARY_PATH="$P/lib" "$WORK/version" | grep -q " matches$"
[ "$(PKG_CONFIG_PATH="$P/lib/pkgconfig" pkg-config --modversion twochains)" = \
  "$(LD_LIBRARY_PATH="$P/lib" "$WORK/version" | cut -d' ' -f1)" ]
echo "relocatable install: OK"
