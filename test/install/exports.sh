#!/usr/bin/env bash
# libtwochains exports exactly its C API: every function the public headers
# declare, and nothing else (no internal C++ symbol, no format library, no
# C++ runtime).
#   exports.sh <libtwochains.so> <include dir>
set -euo pipefail
LIB=$1 INC=$2
# (mpi.h is header-only: its helpers are compiled into the application.)
declared=$(ls "$INC"/twochains/*.h | grep -v '/mpi\.h$' | xargs cat | tr '\n' ' ' |
  grep -o '[a-z_0-9 *]\btc_[a-z_0-9]*(' | grep -o 'tc_[a-z_0-9]*' | sort -u)
exported=$(nm -D --defined-only "$LIB" | awk '$2 ~ /[TDBRW]/ {print $3}' | sed 's/@.*//' | sort -u)
extra=$(comm -13 <(echo "$declared") <(echo "$exported"))
missing=$(comm -23 <(echo "$declared") <(echo "$exported"))
[ -z "$extra" ] || { echo "FAIL: exported but not in the headers:"; echo "$extra"; exit 1; }
[ -z "$missing" ] || { echo "FAIL: declared but not exported:"; echo "$missing"; exit 1; }
echo "exports: $(echo "$exported" | wc -l) symbols, all of them the C API"
# libtwochains-ucx (runtime/ucx/UcxRkeyGuard.cpp, UcxAsyncGuard.cpp,
# UcxMappings.cpp) exports the UCX calls it interposes, the two that
# watch a key's unpack and the four that claim, disown, rearm and count
# the descriptors it parks, and nothing else, and libtwochains needs it
# before libucp: first in the lookup order, ahead of libuct and libucs.
UCXLIB=$(dirname "$LIB")/libtwochains-ucx.so.0
ucx_exported=$(nm -D --defined-only "$UCXLIB" | awk '$2 ~ /[TDBRW]/ {print $3}' | sed 's/@.*//' | sort -u | tr '\n' ' ')
[ "$ucx_exported" = "twochains_ucx_claim twochains_ucx_disown twochains_ucx_idle_writes twochains_ucx_rearm_parked twochains_ucx_watch_begin twochains_ucx_watch_end ucs_async_modify_handler ucs_async_remove_handler ucs_async_set_event_handler ucs_mmap uct_rkey_release uct_rkey_unpack " ] ||
  { echo "FAIL: libtwochains-ucx exports: $ucx_exported"; exit 1; }
needed=$(readelf -d "$LIB" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
case "$needed" in
  libtwochains-ucx.so.0*libucp*) echo "libtwochains-ucx: needed before libucp ($needed)";;
  *) echo "FAIL: libtwochains needs: $needed"; exit 1;;
esac
