#!/usr/bin/env bash
# Porting libraries with CMake, from an installed Two-Chains
# (docs/porting.md): a vendored library in a jam folder whose tests and
# examples (each with a main()) are left out by its .tcignore and by
# EXCLUDE, and a library built by the project's C compiler (gcc) as an
# OBJECT library, packaged as a jam with JAM_OBJECTS. Both images run the
# same as their Local-Function copies in the loader harness, and edits
# rebuild what they should.
#   porting.sh <build-dir> <source-dir> <scratch-dir>
set -euo pipefail
BUILD=$1 WORK=$3
rm -rf "$WORK" && mkdir -p "$WORK"
cmake --install "$BUILD" --prefix "$WORK/prefix" >/dev/null
P=$WORK/prefix
S=$WORK/src
mkdir -p "$S/pkg/jam_digest/vendor/examples" "$S/crc"
cat > "$S/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.20)
project(Porting LANGUAGES C)
find_package(TwoChains REQUIRED CONFIG)
add_library(crc_objs OBJECT crc/crc.c crc/jam_crc.c)
target_include_directories(crc_objs PRIVATE ${TWOCHAINS_INCLUDE_DIR})
twochains_add_package(NAME ported SOURCE_DIR ${CMAKE_CURRENT_SOURCE_DIR}/pkg
  EXCLUDE jam_digest/vendor/examples/
  JAM_OBJECTS crc=crc_objs)
CM
cat > "$S/pkg/jam_digest/jam_digest.amc" <<'C'
#include <twochains/jam.h>
unsigned vendor_digest(const unsigned char *p, unsigned n);
void digest_main(tc_jam_ctx_t *c, void *p, size_t n) { *(unsigned *)p = vendor_digest(p, n); }
C
cat > "$S/pkg/jam_digest/vendor/digest.c" <<'C'
unsigned vendor_digest(const unsigned char *p, unsigned n) {
  unsigned h = 5381;
  for (unsigned i = 0; i < n; ++i)
    h = h * 33 + p[i];
  return h;
}
C
echo 'int main(void) { return 0; }' > "$S/pkg/jam_digest/vendor/digest_test.c"
echo 'int main(void) { return 3; }' > "$S/pkg/jam_digest/vendor/sha_test.c"
echo 'int main(void) { return 1; }' > "$S/pkg/jam_digest/vendor/examples/demo.c"
echo '*_test.c' > "$S/pkg/jam_digest/.tcignore"
cat > "$S/crc/crc.c" <<'C'
static unsigned table[256];
static void fill(void) {
  for (unsigned i = 0; i < 256; ++i) {
    unsigned c = i;
    for (int k = 0; k < 8; ++k)
      c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
    table[i] = c;
  }
}
unsigned crc32(const unsigned char *p, unsigned long n) {
  if (!table[1])
    fill();
  unsigned c = ~0u;
  while (n--)
    c = table[(c ^ *p++) & 0xff] ^ (c >> 8);
  return ~c;
}
C
cat > "$S/crc/jam_crc.c" <<'C'
#include <twochains/jam.h>
unsigned crc32(const unsigned char *p, unsigned long n);
void crc_main(tc_jam_ctx_t *ctx, void *payload, size_t size) {
  unsigned *w = payload;
  w[0] = crc32((const unsigned char *)payload + 4, size - 4);
}
C

B=$WORK/build
PKG=$B/twochains/ported/lib/twochains/packages/ported
fail() { echo "FAIL: $*"; exit 1; }
cmake -S "$S" -B "$B" -G Ninja -DCMAKE_PREFIX_PATH="$P" >/dev/null
build() { cmake --build "$B" 2>&1; }
out=$(build) || fail "first build: $out"
echo "$out" | grep -q "link jam crc from 2 objects (x86_64)" || fail "crc from its objects: $out"
echo "$out" | grep -q "package ported: 2 jams" || fail "two jams: $out"
grep -q " crc " "$PKG/manifest.tcm" && grep -q " digest " "$PKG/manifest.tcm" || fail "manifest"

run() { # <jam> <payload-hex>: injected and Local run the same
  "$BUILD/test/harness/jam-harness" --image "$PKG/x86_64/jams/$1.jam" \
    --local "$PKG/x86_64/libported_local.so" --payload-hex "$2"
}
# CRC-32 of "123456789" is cbf43926.
run crc 00000000313233343536373839 | grep -q "payload: 2639f4cb 31323334" \
  || fail "crc: $(run crc 00000000313233343536373839 2>&1)"
run digest 0100000002000000 | grep -q "MATCH" || fail "digest"
build | grep -q "no work to do" || fail "a second build did work"

# An edited source of the OBJECT library relinks the jam; an edited file
# left out changes nothing it was built from.
sed -i 's/0xedb88320u/0x82f63b78u/' "$S/crc/crc.c"
out=$(build)
echo "$out" | grep -q "link jam crc from 2 objects" || fail "crc.c edited: $out"
echo 'int main(void) { return 2; }' > "$S/pkg/jam_digest/vendor/digest_test.c"
out=$(build)
echo "$out" | grep -q "0 compiled, 3 up to date" || fail "excluded file edited: $out"
# Without its .tcignore, the jam folder's tests break its link, naming them.
rm "$S/pkg/jam_digest/.tcignore"
if out=$(build); then fail "built with the tests as parts"; fi
echo "$out" | grep -q "symbol 'main' is defined in .*/vendor/digest_test.c and in .*/vendor/sha_test.c" \
  || fail "the error names the test file: $out"
echo "porting with CMake from the installed prefix: OK"
