#!/usr/bin/env bash
# Two "hosts": network namespaces made by this test, joined by a veth pair;
# the receiver listens in one, the sender connects from the other over TCP.
# Skipped (exit 77) where namespaces cannot be made (not root, no iproute2).
#   run-netns.sh <tc-e2e> <stdlib prefix> <frames>
set -uo pipefail
source "$(dirname "$0")/lib.sh"
E2E=$1 PREFIX=$2 FRAMES=$3
A=tc_a_$$ B=tc_b_$$
NET=10.213.$(( RANDOM % 250 ))
cleanup() { ip netns del $A 2>/dev/null; ip netns del $B 2>/dev/null; rm -rf "$OUT"; }
OUT=$(mktemp -d)
trap cleanup EXIT
make_two_hosts $A $B $NET
set -e

PORT=$(( 20000 + RANDOM % 11000 ))
# Beyond loopback a receiver needs the job's key (docs/security.md).
KEY=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
ip netns exec $B env TC_E2E_ADDRESS=$NET.2 UCX_TLS=tcp TC_KEY=$KEY \
  timeout 90 "$E2E" receiver "$PREFIX" $PORT "$FRAMES" > "$OUT/receiver" 2>&1 &
RPID=$!
wait_for_listening "$OUT/receiver"
STATUS=0
ip netns exec $A env TC_E2E_ADDRESS=$NET.2 UCX_TLS=tcp TC_KEY=$KEY \
  timeout 90 "$E2E" sender "$PREFIX" $PORT "$FRAMES" > "$OUT/sender" 2>&1 || STATUS=$?
wait $RPID || STATUS=$?
cat "$OUT/sender" "$OUT/receiver"
[ $STATUS -eq 0 ]
grep -qx "receiver: total $(( (FRAMES + 1) / 2 * 36 ))" "$OUT/receiver"
grep -q "0 rejected" "$OUT/receiver"
echo "two network namespaces over veth: OK"
