#!/usr/bin/env bash
# The time until a job of P ranks has run its first all-to-all and is
# connected, every rank to every rank, and the resident memory of its
# ranks (docs/jobs.md, docs/scaling.md), for P = 2 to 64 on this machine,
# joined by MPI_Allgather and by PMIx; each run REPEAT times. Beside it,
# once per P, the same round with raw UCX endpoints and with MPI
# (job-connect-ucx).
#   bench/run-job-connect.sh <build dir> [repeat] [P...]
set -euo pipefail
BUILD=${1:-build} REPEAT=${2:-3}
shift $(($# < 2 ? $# : 2))
SIZES=${*:-2 4 8 16 32 64}
for np in $SIZES; do
  # The same first round below Two-Chains, in jobs launched alike.
  mpirun --allow-run-as-root --oversubscribe --bind-to none -np "$np" \
    "$BUILD/bench/job-connect-ucx" | grep '^job-connect-ucx'
  for how in mpi pmix; do
    for ((i = 0; i < REPEAT; i++)); do
      mpirun --allow-run-as-root --oversubscribe --bind-to none -np "$np" \
        "$BUILD/bench/job-connect" "$how" | grep '^job-connect'
    done
  done
done
