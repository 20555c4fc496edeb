#!/usr/bin/env bash
# The fuzz targets' CTest tests (test/fuzz/CMakeLists.txt):
#   run-fuzzer.sh replay BIN DIR...              each file in the DIRs once (libFuzzer runs
#                                                files given as arguments once each)
#   run-fuzzer.sh run BIN SECONDS WORK DIR...    fuzz for SECONDS from the DIRs' inputs;
#                                                new inputs go to WORK/corpus, crashes to
#                                                WORK/artifacts (the DIRs are only read)
# Exits 77, which CTest reports as skipped, when BIN was not built.
set -euo pipefail
mode=$1 bin=$2
shift 2
if [ ! -x "$bin" ]; then
  echo "skipped: $bin was not built (it needs clang++-19 and libFuzzer, and TWOCHAINS_FUZZ=ON)"
  exit 77
fi
# A slow input is a hang, one large allocation a bug: both fail like a crash.
limits=(-timeout=10 -report_slow_units=60 -malloc_limit_mb=256 -rss_limit_mb=2048)
case $mode in
  replay)
    files=()
    for d in "$@"; do
      [ -d "$d" ] || continue
      while IFS= read -r -d '' f; do files+=("$f"); done < <(find "$d" -type f -print0 | sort -z)
    done
    if [ ${#files[@]} -eq 0 ]; then
      echo "error: no inputs in $*: every target has seeds" >&2
      exit 1
    fi
    echo "replaying ${#files[@]} inputs"
    exec "$bin" "${limits[@]}" "${files[@]}"
    ;;
  run)
    seconds=$1 work=$2
    shift 2
    rm -rf "$work"
    mkdir -p "$work/corpus" "$work/artifacts"
    dirs=()
    for d in "$@"; do [ -d "$d" ] && dirs+=("$d"); done
    status=0
    "$bin" "${limits[@]}" -max_total_time="$seconds" -print_final_stats=1 \
      -artifact_prefix="$work/artifacts/" "$work/corpus" "${dirs[@]}" || status=$?
    if [ "$status" -ne 0 ]; then
      echo "error: $(basename "$bin") failed; the input is in $work/artifacts/:" \
           "fix it, then commit the input to test/fuzz/regressions/$(basename "$bin")/" >&2
    fi
    exit "$status"
    ;;
  *)
    echo "usage: run-fuzzer.sh replay BIN DIR... | run BIN SECONDS WORK DIR..." >&2
    exit 2
    ;;
esac
