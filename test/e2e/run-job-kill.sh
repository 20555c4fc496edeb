#!/usr/bin/env bash
# A job under mpirun, joined from PMIx, whose last rank is killed
# (SIGKILL) mid-job: the other ranks must pass. mpirun is told not to end
# the job for it (orte_abort_on_non_zero_status 0); Open MPI 4.1's mpirun
# then waits on after every rank has exited, so it is ended here once the
# living ranks have all said how they did.
#   run-job-kill.sh <np> <tc-job> <jobs prefix> local|injected <frames>
set -uo pipefail
NP=$1 JOB=$2 PREFIX=$3 MODE=$4 FRAMES=$5
DIR=$(mktemp -d)
mpirun --allow-run-as-root --oversubscribe --bind-to none \
  --mca orte_abort_on_non_zero_status 0 -x TC_JOB_DIR="$DIR" \
  -np "$NP" "$JOB" "$PREFIX" pmix "$MODE" "$FRAMES" kill > "$DIR/out" 2>&1 &
MPIRUN=$!
trap 'kill $MPIRUN 2>/dev/null; sleep 0.2; kill -9 $MPIRUN 2>/dev/null; rm -rf "$DIR"' EXIT
told() { grep -c -E "PASSED \(after a rank died\)|FAILED" "$DIR/out"; }
for _ in $(seq 1200); do
  [ "$(told)" -ge $((NP - 1)) ] && break
  kill -0 $MPIRUN 2>/dev/null || break
  sleep 0.1
done
sleep 0.5
cat "$DIR/out"
PASSED=$(grep -c "PASSED (after a rank died)" "$DIR/out")
echo "$PASSED of $((NP - 1)) living ranks passed"
[ "$PASSED" -eq $((NP - 1)) ] && ! grep -q "FAILED" "$DIR/out"
