#!/usr/bin/env bash
# Runs the libFuzzer targets (test/fuzz) for a while each.
#   scripts/fuzz.sh [SECONDS] [TARGET...]     default: 60 seconds, every target
#   BUILD_DIR   the build tree whose test/fuzz/bin holds the fuzzers (default: <repo>/build)
# Each target starts from test/fuzz/corpus/<target>/ and the committed
# regressions; inputs it finds interesting go to <build>/test/fuzz/work/<target>/
# (the committed corpus is left alone), and a crash, hang or huge allocation
# is written to test/fuzz/regressions/<target>/, to be fixed and committed.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$ROOT/build}
BIN=$BUILD_DIR/test/fuzz/bin
SECONDS_EACH=60
if [ $# -gt 0 ] && [[ $1 =~ ^[0-9]+$ ]]; then
  SECONDS_EACH=$1
  shift
fi
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for f in "$BIN"/fuzz-*; do [ -x "$f" ] && targets+=("$(basename "$f")"); done
fi
if [ ${#targets[@]} -eq 0 ]; then
  echo "fuzz: no fuzzers in $BIN: build with clang++-19 and libclang-rt-19-dev" \
       "installed (scripts/install-deps.sh) and TWOCHAINS_FUZZ=ON" >&2
  exit 1
fi

failed=()
for t in "${targets[@]}"; do
  if [ ! -x "$BIN/$t" ]; then
    echo "fuzz: no fuzzer $BIN/$t" >&2
    exit 1
  fi
  work=$BUILD_DIR/test/fuzz/work/$t
  out=$ROOT/test/fuzz/regressions/$t
  mkdir -p "$work" "$out"
  seeds=("$ROOT/test/fuzz/corpus/$t" "$out")
  echo "fuzz: $t for ${SECONDS_EACH}s"
  # A unit slower than the timeout fails the run; slower ones than that are
  # not written as slow-unit files (a stalled machine makes them, not inputs).
  if ! "$BIN/$t" -max_total_time="$SECONDS_EACH" -timeout=10 -report_slow_units=60 \
         -malloc_limit_mb=256 -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$out/" \
         "$work" "${seeds[@]}" >"$work.log" 2>&1; then
    failed+=("$t")
    echo "fuzz: $t FAILED (log: $work.log); the input is in $out/:"
    grep -E "^==[0-9]+==ERROR|runtime error|^SUMMARY|Test unit written" "$work.log" | head -5 || true
  else
    grep -E "^stat::number_of_executed_units|^stat::new_units_added" "$work.log" |
      sed "s/^/fuzz: $t: /" || true
  fi
done
if [ ${#failed[@]} -ne 0 ]; then
  echo "fuzz: ${#failed[@]} of ${#targets[@]} targets failed: ${failed[*]}"
  exit 1
fi
echo "fuzz: ${#targets[@]} targets, ${SECONDS_EACH}s each, no failures"
