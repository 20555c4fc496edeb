#!/usr/bin/env bash
# Ending a phase: idle tc_job_quiesce against MPI_Barrier measured in the
# same processes, and a phase of one frame to every rank plus its
# quiesce, for P = 2, 4, 8 on this machine (docs/jobs.md).
#   bench/run-job-quiesce.sh <build dir> [rounds] [P...]
set -euo pipefail
BUILD=${1:-build} ROUNDS=${2:-2000}
shift $(($# < 2 ? $# : 2))
for np in ${*:-2 4 8}; do
  mpirun --allow-run-as-root --oversubscribe --bind-to none -np "$np" \
    "$BUILD/bench/job-quiesce" "$ROUNDS" | grep '^job-quiesce'
done
