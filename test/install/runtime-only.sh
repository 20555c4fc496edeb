#!/usr/bin/env bash
# The runtime alone: configured with the tools, tests and benchmarks off it
# needs UCX and nothing of LLVM, Clang or LLD; its install is found by
# find_package(TwoChains) and links an application.
#   runtime-only.sh <source-dir> <scratch-dir>
set -euo pipefail
SRC=$1 WORK=$2
rm -rf "$WORK" && mkdir -p "$WORK/app"
cmake -S "$SRC" -B "$WORK/build" -G Ninja -DTWOCHAINS_BUILD_TOOLS=OFF \
      -DTWOCHAINS_BUILD_TESTS=OFF -DTWOCHAINS_BUILD_BENCHMARKS=OFF >/dev/null
if grep -Eq '^(LLVM|Clang|LLD)_DIR:' "$WORK/build/CMakeCache.txt"; then
  echo "FAIL: the runtime-only build looked for LLVM, Clang or LLD"; exit 1
fi
cmake --build "$WORK/build" >/dev/null
cmake --install "$WORK/build" --prefix "$WORK/prefix" >/dev/null
[ ! -e "$WORK/prefix/bin/jamlink" ] || { echo "FAIL: tools installed"; exit 1; }
cat > "$WORK/app/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.20)
project(App LANGUAGES C)
find_package(TwoChains REQUIRED CONFIG)
add_executable(app app.c)
target_link_libraries(app PRIVATE TwoChains::twochains)
CM
cat > "$WORK/app/app.c" <<'C'
#include <stdio.h>
#include <twochains/twochains.h>
int main(void) {
  tc_context_t *ctx;
  tc_context_params_t p = {TC_CONTEXT_PARAMS_VERSION};
  tc_status_t st = tc_context_create(&p, &ctx);
  printf("twochains %s: context %s\n", tc_get_version_string(), tc_status_string(st));
  if (st == TC_OK)
    tc_context_destroy(ctx);
  return st != TC_OK;
}
C
cmake -S "$WORK/app" -B "$WORK/app/build" -G Ninja -DCMAKE_PREFIX_PATH="$WORK/prefix" >/dev/null
cmake --build "$WORK/app/build" >/dev/null
LD_LIBRARY_PATH="$WORK/prefix/lib" "$WORK/app/build/app" | grep -q "context success"
echo "runtime only: OK"
