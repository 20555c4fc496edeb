#!/usr/bin/env bash
# SHA-256 and the handshake's HMAC: this tree (OpenSSL's libcrypto) against
# an older revision (default: the last with the hand-written SHA-256 and
# HMAC), bench/crypto_bench.cpp built alike from each tree's sources, run
# in turns (docs/security.md, "Cryptography").
#   bench/run-crypto-bench.sh [OLD_REV] [ROUNDS]
# Prints, per case, the median over the rounds of each side's median
# ns/op, and new/old.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OLD=${1:-2350f2f}
ROUNDS=${2:-5}
CXX=${CXX:-c++}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
mkdir -p "$TMP/old"
git -C "$ROOT" archive "$OLD" format runtime/wire include | tar -x -C "$TMP/old"
build() { # tree output
  # The old tree's per-ISA SHA-256 block code, this machine's.
  local sha=("$1/format/Sha256.cpp")
  case $(uname -m) in
    x86_64) [ -e "$1/format/Sha256X86.cpp" ] && sha+=("$1/format/Sha256X86.cpp") ;;
    aarch64) [ -e "$1/format/Sha256AArch64.cpp" ] && sha+=("$1/format/Sha256AArch64.cpp") ;;
  esac
  # Ed25519 where the tree has it (it needs the file reader beside it).
  [ -e "$1/format/Signature.cpp" ] && sha+=("$1/format/Signature.cpp" "$1/format/JamImageFormat.cpp")
  "$CXX" -O2 -std=c++17 -I"$1/format" -I"$1/runtime" -I"$1/include" \
    "$ROOT/bench/crypto_bench.cpp" "$1/runtime/wire/Auth.cpp" "${sha[@]}" -o "$2" -lcrypto
}
build "$TMP/old" "$TMP/bench-old"
build "$ROOT" "$TMP/bench-new"
echo "old: $(git -C "$ROOT" log -1 --format='%h %s' "$OLD")"
echo "new: $(git -C "$ROOT" log -1 --format='%h %s') (+ working tree)"
echo "OpenSSL: $(openssl version 2>/dev/null || echo '?'); CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-)"
for r in $(seq "$ROUNDS"); do
  "$TMP/bench-old" | tail -n +2 | sed 's/^/old /' >> "$TMP/results"
  "$TMP/bench-new" | tail -n +2 | sed 's/^/new /' >> "$TMP/results"
done
python3 - "$TMP/results" <<'PY'
import statistics, sys
runs = {}
order = []
for line in open(sys.argv[1]):
    side, case, median, _ = line.split()
    if case not in order:
        order.append(case)
    runs.setdefault((side, case), []).append(float(median))
print(f"{'case':22} {'old ns/op':>10} {'new ns/op':>10} {'new/old':>8}")
for case in order:
    new = statistics.median(runs[("new", case)])
    if ("old", case) not in runs:  # what the old tree has not
        print(f"{case:22} {'-':>10} {new:10.0f} {'-':>8}")
        continue
    old = statistics.median(runs[("old", case)])
    print(f"{case:22} {old:10.0f} {new:10.0f} {new / old:8.2f}")
PY
