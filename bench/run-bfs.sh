#!/usr/bin/env bash
# Graph500's BFS (kernel 2) as a user writes it on Two-Chains from the docs
# against an MPI BFS that aggregates as Graph500's reference does, in the
# same job (bench/bfs.c; docs/performance.md, "Graph500's BFS"), for each
# SCALE and number of ranks P on this machine.
#   bench/run-bfs.sh <build dir> [roots] [SCALE...] -- [P...]
set -euo pipefail
BUILD=${1:-build} ROOTS=${2:-8}
shift $(($# < 2 ? $# : 2))
SCALES=() RANKS=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do SCALES+=("$1"); shift; done
[ $# -gt 0 ] && shift
RANKS=("$@")
[ ${#SCALES[@]} -gt 0 ] || SCALES=(14 16)
[ ${#RANKS[@]} -gt 0 ] || RANKS=(4 8)
for scale in "${SCALES[@]}"; do
  for np in "${RANKS[@]}"; do
    mpirun --allow-run-as-root --oversubscribe --bind-to none -np "$np" \
      "$BUILD/bench/tc-bfs" --scale "$scale" --roots "$ROOTS" | grep '^bfs'
  done
done
