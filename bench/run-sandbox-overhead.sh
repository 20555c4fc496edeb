#!/usr/bin/env bash
# A sandboxed jam's call against its Local-Function copy's, on this
# machine's ISA (docs/verified.md, "What it costs"): each jam built both
# ways (test/harness/run-jam.sh --sandbox), run N times in the loader
# harness in sandbox regions (the payload copied into the region and back,
# the entry's register saving and clearing, the guards in the code) and as
# a plain call of its Local-Function copy, with payloads of several sizes.
#   bench/run-sandbox-overhead.sh <build dir> [calls]
set -euo pipefail
BUILD=$(cd "${1:-build}" && pwd) CALLS=${2:-100000}
SRC=$(cd "$(dirname "$0")/.." && pwd)
export TC_CLANG=${TC_CLANG:-$(command -v clang-19 || echo /usr/lib/llvm-19/bin/clang)}
export TC_PLUGIN=$BUILD/lib/twochains/TwoChainsJam.so TC_INCLUDE=$SRC/include
export TC_JAMLINK=$BUILD/bin/jamlink TC_HARNESS_DIR=$BUILD/test/harness
export TC_SANDBOX_DIR=$BUILD/lib/twochains/sandbox
ISA=$(uname -m)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
payload() { python3 -c "print(''.join('%02x' % (i % 251) for i in range($1)))"; }
printf '%-22s %8s %14s %14s %8s\n' jam payload sandboxed_ns local_ns ratio
for jam in jam_pipeline jam_small_copies jam_loop_to_memset jam_atomics; do
  src=$SRC/test/lit/codegen/$jam.amc
  [ -f "$src" ] || src=$SRC/test/lit/sandbox/$jam.amc
  for size in 256 4096; do
    out=$(bash "$SRC/test/harness/run-jam.sh" --sandbox "$ISA" "$src" "$WORK/$jam" \
          "$(payload $size)" --repeat "$CALLS" --time)
    boxed=$(echo "$out" | awk '/^--- sandboxed$/{getline; print $2}')
    plain=$(echo "$out" | awk '/^--- local$/{getline; print $2}')
    printf '%-22s %8s %14s %14s %8.1f\n' "$jam" "$size" "$boxed" "$plain" \
      "$(python3 -c "print($boxed / $plain)")"
  done
done
