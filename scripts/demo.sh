#!/usr/bin/env bash
# The main job, for now: build and install Two-Chains, compile the sample
# jams in examples/jams with the installed plugin for x86_64 and aarch64,
# show what the plugin produced (metadata, imports, undefined symbols),
# link each into a jam image with jamlink and dump it, and link the
# Local-Function library of the samples.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$ROOT/build}
PREFIX=${PREFIX:-$BUILD_DIR/install}
"$ROOT/scripts/build.sh"

LLVM=/usr/lib/llvm-19/bin
PLUGIN=$PREFIX/lib/twochains/TwoChainsJam.so
OUT=$BUILD_DIR/demo
mkdir -p "$OUT"

for src in "$ROOT"/examples/jams/jam_*.amc; do
  name=$(basename "$src" .amc)
  for isa in x86_64 aarch64; do
    obj=$OUT/$name.$isa.o
    "$LLVM/clang" --target=$isa-linux-gnu -x c -O2 -fplugin="$PLUGIN" \
        -I"$PREFIX/include" -c "$src" -o "$obj"
    echo
    echo "=== $name ($isa): clang -x c -O2 -fplugin=$PLUGIN -c $(basename "$src")"
    "$LLVM/llvm-readelf" -p .tc.jam "$obj" | sed -n 's/^ *\[ *[0-9a-f]*\] /  /p'
    echo "  imports (table order):"
    sections=$("$LLVM/llvm-readelf" -S "$obj")
    if [[ $sections == *.tc.imports* ]]; then
      "$LLVM/llvm-readelf" -p .tc.imports "$obj" | sed -n 's/^ *\[ *[0-9a-f]*\] /    /p'
    else
      echo "    (none)"
    fi
    undefined=$("$LLVM/llvm-nm" -u "$obj" | wc -l)
    echo "  undefined symbols in the object: $undefined"
    echo "  jamlink $(basename "$obj") -o ${name#jam_}.$isa.jam; jamlink --dump:"
    "$PREFIX/bin/jamlink" "$obj" -o "$OUT/${name#jam_}.$isa.jam"
    "$PREFIX/bin/jamlink" --dump "$OUT/${name#jam_}.$isa.jam" | sed 's/^/    /'
    "$LLVM/clang" --target=$isa-linux-gnu -x c -O2 -fPIC -fplugin="$PLUGIN" \
        -fplugin-arg-twochains-mode=local -fplugin-arg-twochains-package=samples \
        -I"$PREFIX/include" -c "$src" -o "$OUT/$name.$isa.local.o"
  done
done
for isa in x86_64 aarch64; do
  "$PREFIX/bin/jamlink" --shared "$OUT"/jam_*.$isa.local.o -o "$OUT/libsamples_local.$isa.so"
  echo
  echo "=== Local-Function library ($isa): jamlink --shared -o libsamples_local.$isa.so"
  "$LLVM/llvm-readelf" --dyn-syms "$OUT/libsamples_local.$isa.so" | grep -E 'tc[._]' | awk '{print "  " $8}'
done
echo
echo "=== Two processes over UCX: a receiver with the standard package, and a"
echo "    sender injecting and locally invoking its jams (test/e2e/run.sh)"
"$ROOT/test/e2e/run.sh" "$BUILD_DIR/test/e2e/tc-e2e" "$PREFIX" 20000
echo
echo "demo: objects are in $OUT"
