#!/usr/bin/env bash
# The time until a job of P ranks is connected, every rank to every rank
# (docs/jobs.md), for P = 2, 4, 8, 16 on this machine, joined by
# MPI_Allgather and by PMIx; each run REPEAT times.
#   bench/run-job-connect.sh <build dir> [repeat]
set -euo pipefail
BUILD=${1:-build} REPEAT=${2:-3}
for np in 2 4 8 16; do
  for how in mpi pmix; do
    for ((i = 0; i < REPEAT; i++)); do
      mpirun --allow-run-as-root --oversubscribe --bind-to none -np "$np" \
        "$BUILD/bench/job-connect" "$how" | grep '^job-connect'
    done
  done
done
