#!/usr/bin/env bash
# Runs a job under mpirun and checks that every rank passed.
#   run-job.sh <np> <command...>
set -uo pipefail
NP=$1
shift
OUT=$(mktemp)
trap 'rm -f "$OUT"' EXIT
mpirun --allow-run-as-root --oversubscribe --bind-to none -np "$NP" "$@" > "$OUT" 2>&1
STATUS=$?
cat "$OUT"
PASSED=$(grep -c "PASSED" "$OUT")
echo "mpirun exited with $STATUS; $PASSED of $NP ranks passed"
[ "$STATUS" -eq 0 ] && [ "$PASSED" -eq "$NP" ]
