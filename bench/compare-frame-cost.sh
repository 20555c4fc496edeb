#!/usr/bin/env bash
# The runtime's instructions per frame, before and after a change
# (docs/performance.md, "Where the time goes"): each build's own
# bench/frame-cost, with its own lib/libtwochains.so and its own stdlib
# package, under callgrind, taking turns, at 12 and 36 bytes.
#
#   bench/compare-frame-cost.sh BEFORE_BUILD_DIR AFTER_BUILD_DIR [frames]
#     frames  as frame-cost's --frames (default 20000, as in the docs)
#   OUT=DIR   keep callgrind's files and frame-cost's output there
#             (default: a new /tmp/frame-cost-compare.XXXXXX, printed)
#
# Each build needs bench/frame-cost (cmake --build DIR --target frame-cost).
# One callgrind run per build and payload, in the order before 12, after
# 12, before 36, after 36, with --toggle-collect and --dump-after on
# send_and_run and empty_progress, so each of frame-cost's five phases is
# its own dump: Local warm-up (frames/10), empty polls (frames), Local
# (frames), Injected warm-up (frames/10, the code cache filled), Injected
# cached (frames). Printed, in instructions (Ir) per frame:
#   Local                 tc_send + the tc_progress that runs it, Local
#   Injected (cached)     the same, Injected, after its warm-up
#   all, warm-ups incl.   every frame send_and_run sends (2.2 x frames):
#                         the figure docs/performance.md quotes, as from
#                         valgrind --tool=callgrind --toggle-collect=send_and_run
#   empty poll            one empty tc_progress (per poll, not per frame)
# Counts are nearly deterministic: the same build differs by about 0.1
# instruction per frame from run to run. frame-cost's ns times under
# valgrind mean nothing and are not shown.
set -euo pipefail

die() { echo "compare-frame-cost: $*" >&2; exit 1; }
usage() {
  awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0" >&2
  exit 2
}

if [ $# -lt 2 ] || [ $# -gt 3 ]; then usage; fi
FRAMES=${3:-20000}
[[ $FRAMES =~ ^[1-9][0-9]*$ ]] || die "frames must be a positive integer, not '$FRAMES'"
PAYLOADS=(12 36)

command -v valgrind >/dev/null ||
  die "valgrind not found (apt-get install valgrind); it measures the instructions"
valgrind --tool=callgrind --version >/dev/null 2>&1 ||
  die "valgrind --tool=callgrind does not run"

# check_build DIR: DIR's absolute path, once DIR has an executable
# bench/frame-cost whose libtwochains resolves inside DIR/lib.
check_build() {
  local dir=$1 abs lib resolved
  [ -d "$dir" ] || die "$dir: no such build directory"
  abs=$(cd "$dir" && pwd -P)
  [ -x "$abs/bench/frame-cost" ] ||
    die "$abs has no bench/frame-cost (cmake --build $abs --target frame-cost)"
  compgen -G "$abs/lib/libtwochains.so*" >/dev/null ||
    die "$abs has no lib/libtwochains.so (cmake --build $abs --target frame-cost)"
  # What the dynamic loader picks, with the environment the run gets.
  resolved=$(LD_LIBRARY_PATH="$abs/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
               ldd "$abs/bench/frame-cost" | awk '$1 ~ /^libtwochains/ { print $1 " " $3 }')
  [ -n "$resolved" ] || die "$abs/bench/frame-cost does not link libtwochains"
  while read -r lib path; do
    if [ "$path" = "not" ] || [ ! -e "$path" ]; then
      die "$abs/bench/frame-cost: $lib not found"
    fi
    [ "$(dirname "$(readlink -f "$path")")" = "$abs/lib" ] ||
      die "$abs/bench/frame-cost would load $lib from $path, not from $abs/lib"
  done <<<"$resolved"
  echo "$abs"
}

# describe DIR: the commit the build's source is at (+dirty), if known.
describe() {
  local src
  src=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$1/CMakeCache.txt" 2>/dev/null || true)
  if [ -n "$src" ] && git -C "$src" rev-parse --git-dir >/dev/null 2>&1; then
    echo "$src at $(git -C "$src" describe --always --dirty 2>/dev/null)"
  else
    echo "source unknown"
  fi
}

BEFORE=$(check_build "$1")
AFTER=$(check_build "$2")
OUT=${OUT:-$(mktemp -d /tmp/frame-cost-compare.XXXXXX)}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd -P)

# measure SIDE DIR PAYLOAD: runs DIR's frame-cost under callgrind and
# writes "local injected all empty" (Ir per frame / per poll) to
# $OUT/SIDE-PAYLOAD.ir.
measure() {
  local dir=$2 payload=$3 tag="$1-$3" try
  for try in 1 2 3; do
    rm -f "$OUT/$tag".cg.* "$OUT/$tag".log
    if LD_LIBRARY_PATH="$dir/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
       valgrind --tool=callgrind \
         --toggle-collect=send_and_run --toggle-collect=empty_progress \
         --dump-after=send_and_run --dump-after=empty_progress \
         --callgrind-out-file="$OUT/$tag.cg.%p" \
         "$dir/bench/frame-cost" --frames "$FRAMES" --payload "$payload" \
         >"$OUT/$tag.log" 2>&1; then
      break
    fi
    # frame-cost listens on a random port: another program may hold it.
    grep -q "cannot listen" "$OUT/$tag.log" && [ $try -lt 3 ] && continue
    cat "$OUT/$tag.log" >&2
    die "$dir/bench/frame-cost --payload $payload failed under callgrind ($OUT/$tag.log)"
  done

  # The libraries this run loaded (callgrind names every object it counted
  # in): libtwochains must be DIR's.
  local objs
  objs=$(sed -n 's/^c\{0,1\}ob=([0-9]*) //p' "$OUT/$tag".cg.* | sort -u)
  grep -q '/libtwochains\.so' <<<"$objs" ||
    die "$tag: no libtwochains.so among the objects callgrind counted in ($OUT)"
  local obj
  while read -r obj; do
    case $obj in
      */libtwochains*.so*)
        [ "$(dirname "$(readlink -f "$obj")")" = "$dir/lib" ] ||
          die "$tag: ran $obj, not $dir/lib's" ;;
    esac
  done <<<"$objs"
  grep '/libtwochains\.so\|/packages/' <<<"$objs" >"$OUT/$tag.objects"

  # The dumps in order of part: "trigger total" each; frame-cost's five
  # phases, then program termination (nothing collected after the last).
  local f phases
  phases=$(for f in "$OUT/$tag".cg.*; do
             awk '/^part:/ { p = $2 } /^desc: Trigger:/ { t = $NF }
                  /^totals:/ { print p, t, $2 }' "$f"
           done | sort -n | awk '$2 != "termination" { print $2, $3 }')
  local expect="--dump-after=send_and_run --dump-after=empty_progress --dump-after=send_and_run --dump-after=send_and_run --dump-after=send_and_run"
  [ "$(awk '{ printf "%s%s", sep, $1; sep = " " }' <<<"$phases")" = "$expect" ] || {
    echo "$phases" >&2
    die "$tag: expected frame-cost's five phases (warm-up, empty polls, Local, warm-up, Injected); has bench/frame-cost.c changed?"
  }
  awk -v n="$FRAMES" '
    { ir[NR] = $2 }
    END {
      w = int(n / 10)
      printf "%.1f %.1f %.1f %.1f\n", ir[3] / n, ir[5] / n,
             (ir[1] + ir[3] + ir[4] + ir[5]) / (2 * n + 2 * w), ir[2] / n
    }' <<<"$phases" >"$OUT/$tag.ir"
}

echo "compare-frame-cost: $FRAMES frames per mode (+$((FRAMES / 10)) warm-up), payloads ${PAYLOADS[*]} B"
echo "  before: $BEFORE ($(describe "$BEFORE"))"
echo "  after:  $AFTER ($(describe "$AFTER"))"
start=$SECONDS
for payload in "${PAYLOADS[@]}"; do
  for side in before after; do
    if [ $side = before ]; then dir=$BEFORE; else dir=$AFTER; fi
    printf '  running %-6s %2s B ...' "$side" "$payload"
    t=$SECONDS
    measure "$side" "$dir" "$payload"
    echo " $((SECONDS - t)) s"
  done
done

echo
echo "instructions (Ir) per frame, under callgrind; empty poll: per tc_progress"
printf '%-8s %-22s %9s %9s %8s %8s\n' payload mode before after diff diff%
for payload in "${PAYLOADS[@]}"; do
  read -r -a b <"$OUT/before-$payload.ir"
  read -r -a a <"$OUT/after-$payload.ir"
  i=0
  for mode in "Local" "Injected (cached)" "all, warm-ups incl." "empty poll"; do
    awk -v p="$payload B" -v m="$mode" -v b="${b[$i]}" -v a="${a[$i]}" 'BEGIN {
      printf "%-8s %-22s %9.1f %9.1f %+8.1f %+7.1f%%\n", p, m, b, a, a - b,
             (b > 0 ? 100 * (a - b) / b : 0) }'
    i=$((i + 1))
  done
done
echo
echo "compare-frame-cost: $((SECONDS - start)) s; callgrind files in $OUT"
echo "  (callgrind_annotate --inclusive=yes $OUT/before-12.cg.<pid>.3 for Local's profile)"
