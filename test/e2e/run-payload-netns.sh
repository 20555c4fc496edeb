#!/usr/bin/env bash
# Payloads larger than a slot between two "hosts": network namespaces made
# by this test, joined by a veth pair, TCP between them (UCX_TLS=tcp: the
# RMA endpoint has no transport there, so every payload goes ahead on the
# control endpoint). payload-ahead --check sends every size in every mode
# from one namespace to a receiver in the other, which checks that its jams
# summed every int32 of every payload and that each came ahead of its frame.
# Skipped (exit 77) where namespaces cannot be made (not root, no iproute2).
#   run-payload-netns.sh <payload-ahead> <sizes>
set -uo pipefail
source "$(dirname "$0")/lib.sh"
BIN=$1 SIZES=$2
A=tc_pa_$$ B=tc_pb_$$
NET=10.214.$(( RANDOM % 250 ))
cleanup() { ip netns del $A 2>/dev/null; ip netns del $B 2>/dev/null; }
trap cleanup EXIT
make_two_hosts $A $B $NET
set -e
# Beyond loopback a receiver needs the job's key (docs/security.md).
KEY=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
UCX_TLS=tcp TC_KEY=$KEY timeout 120 "$BIN" --check --path control --sizes "$SIZES" \
  --netns $B,$A --address $NET.2
echo "payloads ahead between two network namespaces: OK"
