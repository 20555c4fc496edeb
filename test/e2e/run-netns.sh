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
if ! ip netns add $A 2>/dev/null || ! ip netns add $B 2>/dev/null; then
  echo "skipped: cannot create network namespaces here (needs root and iproute2)"
  exit 77
fi
set -e
ip link add tcva$$ netns $A type veth peer name tcvb$$ netns $B
ip -n $A addr add $NET.1/24 dev tcva$$
ip -n $B addr add $NET.2/24 dev tcvb$$
for ns in $A $B; do ip -n $ns link set lo up; done
ip -n $A link set tcva$$ up
ip -n $B link set tcvb$$ up
# UCX lists the devices that are up when it starts: wait for the carrier.
for _ in $(seq 50); do
  ip -n $A link show tcva$$ | grep -q LOWER_UP && ip -n $B link show tcvb$$ | grep -q LOWER_UP && break
  sleep 0.1
done

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
