#!/usr/bin/env bash
# libtwochains exports exactly its C API: every function the public headers
# declare, and nothing else (no internal C++ symbol, no format library, no
# C++ runtime).
#   exports.sh <libtwochains.so> <include dir>
set -euo pipefail
LIB=$1 INC=$2
declared=$(cat "$INC"/twochains/*.h | tr '\n' ' ' |
  grep -o '[a-z_0-9 *]\btc_[a-z_0-9]*(' | grep -o 'tc_[a-z_0-9]*' | sort -u)
# UCX's two rkey calls are interposed (runtime/UcxRkeyGuard.cpp), and only those.
interposed="uct_rkey_release
uct_rkey_unpack"
exported=$(nm -D --defined-only "$LIB" | awk '$2 ~ /[TDBRW]/ {print $3}' | sed 's/@.*//' | sort -u)
got_interposed=$(grep '^uct_' <<<"$exported" || true)
[ "$got_interposed" = "$interposed" ] || { echo "FAIL: UCX symbols exported: $got_interposed"; exit 1; }
exported=$(grep -v '^uct_' <<<"$exported")
extra=$(comm -13 <(echo "$declared") <(echo "$exported"))
missing=$(comm -23 <(echo "$declared") <(echo "$exported"))
[ -z "$extra" ] || { echo "FAIL: exported but not in the headers:"; echo "$extra"; exit 1; }
[ -z "$missing" ] || { echo "FAIL: declared but not exported:"; echo "$missing"; exit 1; }
echo "exports: $(echo "$exported" | wc -l) symbols, all of them the C API"
