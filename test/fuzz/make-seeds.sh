#!/usr/bin/env bash
# Writes the fuzz targets' seeds, test/fuzz/corpus/<target>/, with the tools
# of a build (default: <repo>/build); run it again when a format changes.
#   fuzz-image-reader     images jamlink links: the relocation tests of both
#                         ISAs (trampolines, GOT slots, fixups) and a plugin jam
#   fuzz-manifest-reader  the standard package's manifest, its hashes replaced
#                         by the fuzzer's stand-in hash (ManifestReaderFuzzer.cpp)
#   fuzz-frame-validator  frames from encodeFrame (make-frame-seeds)
#   fuzz-jamlink-input    the objects behind those images, entry fuzz_main
#                         where the object has no .tc.jam, and a gcc -fPIC one
#   fuzz-manifest-signature  the standard package's manifest signed with a
#                         fresh key (openssl), as pkg-gen --sign-key writes it
#   fuzz-trusted-signers  a signers file: comments, blank lines, keys with
#                         and without comments (pkg-gen --print-signer)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${1:-$ROOT/build}
OUT=$ROOT/test/fuzz/corpus
LLVM=/usr/lib/llvm-19/bin
JAMLINK=$BUILD/bin/jamlink
JAMCC=("$LLVM/clang" -x c -O2 "-fplugin=$BUILD/lib/twochains/TwoChainsJam.so" "-I$ROOT/include")
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
for t in fuzz-image-reader fuzz-manifest-reader fuzz-frame-validator fuzz-jamlink-input \
         fuzz-manifest-signature fuzz-trusted-signers; do
  rm -rf "${OUT:?}/$t"
  mkdir -p "$OUT/$t"
done

# Assembler objects: the lit relocation tests, entry renamed to fuzz_main.
for isa in x86_64 aarch64; do
  sed 's/relocs_main/fuzz_main/g' "$ROOT/test/lit/jamlink/$isa-relocations.s" > "$TMP/$isa.s"
  "$LLVM/llvm-mc" -filetype=obj -triple=$isa-linux-gnu "$TMP/$isa.s" -o "$TMP/jam_fuzz.o"
  cp "$TMP/jam_fuzz.o" "$OUT/fuzz-jamlink-input/relocations-$isa.o"
  "$JAMLINK" "$TMP/jam_fuzz.o" -o "$OUT/fuzz-image-reader/relocations-$isa.jam"
done
# Plugin objects, which carry .tc.jam and .tc.imports.
"${JAMCC[@]}" --target=x86_64-linux-gnu -c "$ROOT/examples/jams/jam_indirect_put.amc" -o "$TMP/jam_indirect_put.o"
cp "$TMP/jam_indirect_put.o" "$OUT/fuzz-jamlink-input/plugin-indirect_put-x86_64.o"
"$JAMLINK" "$TMP/jam_indirect_put.o" -o "$OUT/fuzz-image-reader/plugin-indirect_put-x86_64.jam"
if [ -e /usr/aarch64-linux-gnu/include/stdio.h ]; then
  "${JAMCC[@]}" --target=aarch64-linux-gnu -c "$ROOT/examples/jams/jam_server_side_sum.amc" -o "$TMP/jam_sum.o"
  cp "$TMP/jam_sum.o" "$OUT/fuzz-jamlink-input/plugin-server_side_sum-aarch64.o"
fi
# A compiler without the plugin: calls through trampolines, a table of pointers.
cat > "$TMP/gcc.c" <<'SRC'
#include <stdio.h>
static void hello(void) { puts("hello"); }
static void (*const table[])(void) = {hello};
void fuzz_main(void *ctx, void *payload, unsigned long n) { if (n) table[0](); }
SRC
gcc -O2 -fPIC -fno-plt -c "$TMP/gcc.c" -o "$OUT/fuzz-jamlink-input/gcc-fpic-x86_64.o"

# The standard package's manifest.
hash=e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
sed -E "s/(hash|local-hash)=[0-9a-f]{64}/\1=$hash/g" \
  "$BUILD/stdlib-jams/twochains/stdlib/lib/twochains/packages/stdlib/manifest.tcm" \
  > "$OUT/fuzz-manifest-reader/stdlib.tcm"

"$BUILD/test/fuzz/bin/make-frame-seeds" "$OUT/fuzz-frame-validator"

# A signature and signers, from fresh keys.
PKGGEN=$BUILD/bin/twochains-pkg-gen
openssl genpkey -algorithm ed25519 -out "$TMP/release.pem"
openssl genpkey -algorithm ed25519 -out "$TMP/ops.pem"
key=$("$PKGGEN" --print-signer "$TMP/release.pem" | cut -d' ' -f2)
manifest=$BUILD/stdlib-jams/twochains/stdlib/lib/twochains/packages/stdlib/manifest.tcm
signature=$(openssl pkeyutl -sign -inkey "$TMP/release.pem" -rawin -in "$manifest" | od -An -v -tx1 | tr -d ' \n')
echo "tc-ed25519 $key $signature" > "$OUT/fuzz-manifest-signature/stdlib.tcm.sig"
{
  echo "# Who may sign the packages this receiver runs."
  echo
  "$PKGGEN" --print-signer "$TMP/release.pem" --signer-comment "release key (build farm)"
  echo "  # the operators' key, for hot fixes"
  "$PKGGEN" --print-signer "$TMP/ops.pem" --signer-comment ""
} > "$OUT/fuzz-trusted-signers/signers.txt"
find "$OUT" -type f | sort
