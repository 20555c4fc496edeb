#!/usr/bin/env bash
# The main job, for now: build and install Two-Chains, compile the sample
# jams in examples/jams with the installed plugin for x86_64 and aarch64,
# and show what the plugin produced: metadata, imports, code with its
# relocations, and the size of what will travel.
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
    "$LLVM/llvm-size" -A "$obj" | awk '/^\.(text|rodata|data|bss|tc\.gotp)/ { s += $2 } END { print "  code+data+GOTP bytes: " s }'
    echo "  code:"
    "$LLVM/llvm-objdump" -dr --no-show-raw-insn "$obj" \
      | sed -n '/^Disassembly of section .text/,$p' | sed 's/^/    /'
  done
done
echo
echo "demo: objects are in $OUT"
