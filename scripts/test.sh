#!/usr/bin/env bash
# Installs dependencies, builds, and runs every test: the lit suite
# (plugin, on x86_64 and aarch64) and the CTest tests (install layout).
# Ends with one line "N passed, N failed".
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$ROOT/build}
"$ROOT/scripts/build.sh" || exit 1

passed=0
failed=0

echo "== lit"
python3 /usr/lib/llvm-19/build/utils/lit/lit.py -sv \
    --xunit-xml-output "$BUILD_DIR/lit-results.xml" "$BUILD_DIR/test/lit"
lit_tests=$(grep -o 'tests="[0-9]*"' "$BUILD_DIR/lit-results.xml" | head -1 | tr -dc 0-9)
lit_failures=$(grep -o 'failures="[0-9]*"' "$BUILD_DIR/lit-results.xml" | head -1 | tr -dc 0-9)
lit_skipped=$(grep -o 'skipped="[0-9]*"' "$BUILD_DIR/lit-results.xml" | head -1 | tr -dc 0-9)
passed=$((passed + lit_tests - lit_failures - ${lit_skipped:-0}))
failed=$((failed + lit_failures))

echo "== ctest"
ctest --test-dir "$BUILD_DIR" -LE lit --output-on-failure --output-junit ctest-results.xml
ct_tests=$(grep -o 'tests="[0-9]*"' "$BUILD_DIR/ctest-results.xml" | head -1 | tr -dc 0-9)
ct_failures=$(grep -o 'failures="[0-9]*"' "$BUILD_DIR/ctest-results.xml" | head -1 | tr -dc 0-9)
passed=$((passed + ct_tests - ct_failures))
failed=$((failed + ct_failures))

echo "${passed} passed, ${failed} failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
