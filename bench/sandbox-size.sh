#!/usr/bin/env bash
# What sandboxing costs in code size (docs/sandbox.md): every jam of the lit
# suite, examples/ and the standard package compiled for aarch64 plainly
# and with twochains-jamcc --sandbox's flags; the .text bytes of each, and
# the total and median ratio. (Running time needs aarch64 hardware: under
# qemu-user the emulator's cost hides the guards'.)
#   bench/sandbox-size.sh [build dir]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "${1:-$ROOT/build}" && pwd)
CC=(/usr/lib/llvm-19/bin/clang -x c -O2 -w -fplugin-arg-twochains-no-static-warning --target=aarch64-linux-gnu
    "-fplugin=$BUILD/lib/twochains/TwoChainsJam.so" "-I$ROOT/include")
SANDBOX=(-fplugin-arg-twochains-sandbox -fno-integrated-as "-B$BUILD/lib/twochains/sandbox")
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
text() { llvm-size-19 -A "$1" | awk '$1 ~ /^\.text/ {s += $2} END {print s + 0}'; }
for f in "$ROOT"/test/lit/codegen/jam_*.amc "$ROOT"/examples/jams/jam_*.amc \
         "$ROOT"/stdlib-jams/src/*/jam_*.amc; do
  n=$(basename "$f" .amc)
  "${CC[@]}" -c "$f" -o "$TMP/$n.o" 2>/dev/null || continue
  "${CC[@]}" "${SANDBOX[@]}" -c "$f" -o "$TMP/$n.sandboxed.o" 2>/dev/null
  echo "$n $(text "$TMP/$n.o") $(text "$TMP/$n.sandboxed.o")"
done > "$TMP/sizes"
python3 - "$TMP/sizes" <<'PY'
import sys
rows = [l.split() for l in open(sys.argv[1])]
rows = [(n, int(a), int(b)) for n, a, b in rows if int(a) > 0]
for n, a, b in rows:
    print(f"sandbox-size: {n:28s} {a:6d} -> {b:6d} bytes  {b / a:.2f}x")
A = sum(a for _, a, _ in rows); B = sum(b for _, _, b in rows)
r = sorted(b / a for _, a, b in rows)
print(f"sandbox-size: {len(rows)} jams, .text {A} -> {B} bytes ({B / A:.3f}x); "
      f"median {r[len(r) // 2]:.2f}x, min {r[0]:.2f}x, max {r[-1]:.2f}x")
PY
