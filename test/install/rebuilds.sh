#!/usr/bin/env bash
# CMake rebuilds a package when, and only when, a file it was built from
# changes: a jam's .c file included from outside the package folder, a
# ried's header, a part of a jam folder. From an installed Two-Chains.
#   rebuilds.sh <build-dir> <source-dir> <scratch-dir>
set -euo pipefail
BUILD=$1 WORK=$3
rm -rf "$WORK" && mkdir -p "$WORK"
cmake --install "$BUILD" --prefix "$WORK/prefix" >/dev/null
P=$WORK/prefix
S=$WORK/src
mkdir -p "$S/pkg/jam_multi" "$S/shared" "$S/inc"
cat > "$S/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.20)
project(Rebuilds LANGUAGES C)
find_package(TwoChains REQUIRED CONFIG)
twochains_add_package(NAME rb SOURCE_DIR ${CMAKE_CURRENT_SOURCE_DIR}/pkg
  COMPILE_OPTIONS -I${CMAKE_CURRENT_SOURCE_DIR}/inc -DSTEP=2 -std=c11
  ELEMENT_COMPILE_OPTIONS multi=-O1)
CM
cat > "$S/pkg/jam_lib.amc" <<'C'
#include <twochains/jam.h>
#include "../shared/extra.c"
void lib_main(tc_jam_ctx_t *c, void *p, size_t n) { *(int *)p = extra(*(int *)p); }
C
echo 'static int extra(int v) { return v + STEP; }' > "$S/shared/extra.c"
cat > "$S/pkg/ried_state.rdc" <<'C'
#include "state.h"
int state_cells[STATE_CELLS];
C
echo '#define STATE_CELLS 4' > "$S/inc/state.h"
cat > "$S/pkg/jam_multi/jam_multi.amc" <<'C'
#include <twochains/jam.h>
int part_value(void);
void multi_main(tc_jam_ctx_t *c, void *p, size_t n) { *(int *)p = part_value(); }
C
echo 'int part_value(void) { return 42; }' > "$S/pkg/jam_multi/part.c"

B=$WORK/build
M=$B/twochains/rb/lib/twochains/packages/rb/manifest.tcm
cmake -S "$S" -B "$B" -G Ninja -DCMAKE_PREFIX_PATH="$P" >/dev/null
build() { cmake --build "$B" 2>&1; }
hash_of() { grep " $1 " "$M" | sed 's/.* hash=\([0-9a-f]*\).*/\1/'; }
fail() { echo "FAIL: $*"; exit 1; }

build | grep -q "6 compiled, 0 up to date" || fail "first build"
lib0=$(hash_of lib) state0=$(hash_of state) multi0=$(hash_of multi)
build | grep -q "no work to do" || fail "a second build did work"

# An included .c file outside the package folder (not globbed by CMake).
echo 'static int extra(int v) { return v + STEP + 1; }' > "$S/shared/extra.c"
out=$(build)
echo "$out" | grep -q "2 compiled, 4 up to date" || fail "included .c: $out"
[ "$(hash_of lib)" != "$lib0" ] || fail "the edited included file did not change jam lib"
[ "$(hash_of state)" = "$state0" ] && [ "$(hash_of multi)" = "$multi0" ] \
  || fail "an unrelated element changed"

# A ried's header, found through COMPILE_OPTIONS -I.
echo '#define STATE_CELLS 8' > "$S/inc/state.h"
out=$(build)
echo "$out" | grep -q "1 compiled, 5 up to date" || fail "ried header: $out"
[ "$(hash_of state)" != "$state0" ] || fail "the edited header did not change ried state"

# A part of a jam folder.
echo 'int part_value(void) { return 43; }' > "$S/pkg/jam_multi/part.c"
out=$(build)
echo "$out" | grep -q "3 compiled, 3 up to date" || fail "part: $out"
[ "$(hash_of multi)" != "$multi0" ] || fail "the edited part did not change jam multi"
build | grep -q "no work to do" || fail "a build after the edits did work"
echo "rebuilds from the installed prefix: OK"
