#!/usr/bin/env bash
# The trust boundary, tried as an attacker would, on loopback
# (docs/security.md). Each step runs a real receiver and real peers:
#   keys      a peer without the key and one with a wrong key are refused,
#             counted and logged once each; one with the key runs its frames
#   mutual    a sender with a key refuses a receiver without it (and the
#             receiver sees the failure too)
#   listen    beyond loopback only with a key or TC_CONTEXT_INSECURE
#   sockets   UCX's TCP transport listens only on the interfaces a process
#             listens on or connects through: nowhere in one that does
#             neither, on loopback only for loopback
#   memory    a raw UCX client over TCP cannot read or write the receiver's
#             memory through UCX's emulated RMA
# Offers out of bounds or aimed outside their memory, hostile WELCOMEs and
# messages of the other role need the handshake's wire formats: the unit
# tests HostileOffers.* (test/unit/HostileOffersTest.cpp), and a memory key
# already gone, offered to a receiver linking libtwochains, GoneKey.*
# (GoneKeyTest.cpp). A ried push claiming 64 GiB, broken batches of frames
# and a slot rewritten while its jam runs need the send path's:
# HostileSender.* (HostileSenderTest.cpp).
#   run-security.sh <tc-security> <stdlib prefix>
set -euo pipefail
source "$(dirname "$0")/lib.sh"
SEC=$1 STDLIB=$2
OUT=$(mktemp -d)
RPID=
# Ports of earlier tests may still be in TIME_WAIT: let listeners take them.
export UCX_TCP_CM_REUSEADDR=y
trap '[ -n "$RPID" ] && kill $RPID 2>/dev/null; rm -rf "$OUT"' EXIT
KEY=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
unset TC_KEY TC_KEY_FILE
PORT=$(( 20000 + RANDOM % 11000 ))

start() { # frames package prefix [VAR=value ...]: a receiver on a fresh port
  local frames=$1 pkg=$2 prefix=$3
  shift 3
  PORT=$(( PORT + 1 ))
  env "$@" timeout 60 "$SEC" receiver "$prefix" "$pkg" $PORT "$frames" > "$OUT/receiver" 2>&1 &
  RPID=$!
  wait_for_listening "$OUT/receiver"
}
finish() { wait $RPID; RPID=; }
expect() { # file pattern what
  grep -q -- "$2" "$1" || { echo "FAILED: $3"; echo "--- $1:"; cat "$1"; exit 1; }
}
count() { grep -c -- "$2" "$1" || true; }
# TC_SECURITY_ONLY="offers memory" runs only those steps.
want() { [ -z "${TC_SECURITY_ONLY:-}" ] || [[ " $TC_SECURITY_ONLY " == *" $1 "* ]]; }

if want keys; then
echo "== keys"
start 10 stdlib "$STDLIB" TC_KEY=$KEY
"$SEC" connect "$STDLIB" $PORT 10 > "$OUT/nokey" 2>&1 || true
TC_KEY=not-the-key-of-this-job "$SEC" connect "$STDLIB" $PORT 10 > "$OUT/wrong" 2>&1 || true
TC_KEY=$KEY "$SEC" connect "$STDLIB" $PORT 10 > "$OUT/good" 2>&1
finish
expect "$OUT/nokey" "connect: peer authentication failed" "a peer without the key connected"
expect "$OUT/wrong" "connect: peer authentication failed" "a peer with a wrong key connected"
expect "$OUT/good" "connect: sent 10 frames: success" "the peer with the key"
expect "$OUT/receiver" "ran 10 frames: 5 local, 5 injected, 0 rejected" "frames of the good peer"
expect "$OUT/receiver" "refused: auth 2, offers 0" "two failures counted"
[ "$(count "$OUT/receiver" "authentication failed: it does not hold this job's key")" = 2 ] ||
  { echo "FAILED: each refusal logged once"; cat "$OUT/receiver"; exit 1; }
# A key file others can read is refused, naming the file and its mode.
printf '%s\n' "$KEY" > "$OUT/key"; chmod 644 "$OUT/key"
TC_KEY_FILE="$OUT/key" "$SEC" listen 127.0.0.1 > "$OUT/keyfile" 2>&1 || true
expect "$OUT/keyfile" "is accessible by others (mode 0644)" "a readable key file"

fi
if want mutual; then
echo "== mutual"
start 4 stdlib "$STDLIB"
TC_KEY=$KEY "$SEC" connect "$STDLIB" $PORT 4 > "$OUT/keyed" 2>&1 || true
"$SEC" connect "$STDLIB" $PORT 4 > "$OUT/keyless" 2>&1
finish
expect "$OUT/keyed" "the receiver does not prove it holds this job's key" "sender checks the receiver"
expect "$OUT/keyed" "connect: peer authentication failed" "sender refused the receiver"
expect "$OUT/receiver" "refused: auth 1," "the receiver saw the keyed sender fail"
expect "$OUT/receiver" "ran 4 frames" "two keyless peers on loopback"

fi
if want listen; then
echo "== listen"
"$SEC" listen 0.0.0.0 > "$OUT/l1" 2>&1
"$SEC" listen 0.0.0.0 insecure > "$OUT/l2" 2>&1
TC_KEY=$KEY "$SEC" listen 0.0.0.0 > "$OUT/l3" 2>&1
"$SEC" listen 127.0.0.1 > "$OUT/l4" 2>&1
expect "$OUT/l1" "listen 0.0.0.0: refused to listen beyond loopback without a key" "keyless listen"
expect "$OUT/l1" "needs a key (TC_KEY_FILE, TC_KEY or the key parameters)" "the message says what to do"
expect "$OUT/l2" "listen 0.0.0.0: success" "TC_CONTEXT_INSECURE"
expect "$OUT/l3" "listen 0.0.0.0: success" "with a key"
expect "$OUT/l4" "listen 127.0.0.1: success" "loopback"

fi
if want sockets; then
echo "== sockets"
export TC_SECURITY_STDLIB=$STDLIB
only_on() { # file address: every listening socket is on address
  expect "$1" "sockets: [0-9]* listening" "$1: the sockets listed"
  if grep "sockets: listening on" "$1" | grep -v "listening on $2:" | grep -q .; then
    echo "FAILED: sockets beyond $2"; cat "$1"; exit 1
  fi
}
"$SEC" sockets none > "$OUT/none" 2>&1
expect "$OUT/none" "sockets: 0 listening" "a context that neither listens nor connects listens nowhere"
"$SEC" sockets listen 127.0.0.1 > "$OUT/listen" 2>&1
expect "$OUT/listen" "sockets: listen: success" "listening on loopback"
only_on "$OUT/listen" 127.0.0.1
start 2 stdlib "$STDLIB"
"$SEC" sockets connect $PORT > "$OUT/connect" 2>&1
expect "$OUT/connect" "sockets: connect: success" "connecting over loopback"
only_on "$OUT/connect" 127.0.0.1
"$SEC" connect "$STDLIB" $PORT 2 > "$OUT/good" 2>&1
finish
expect "$OUT/receiver" "ran 2 frames" "the receiver served"
# Beyond loopback: the interface of the address asked for, and not loopback.
HOSTIP=$(hostname -I 2>/dev/null | tr ' ' '\n' | grep -E '^[0-9.]+$' | grep -v '^127\.' | head -1 || true)
if [ -n "$HOSTIP" ]; then
  TC_KEY=$KEY "$SEC" sockets listen "$HOSTIP" > "$OUT/host" 2>&1
  expect "$OUT/host" "sockets: listen: success" "listening on $HOSTIP"
  only_on "$OUT/host" "$HOSTIP"
fi
unset TC_SECURITY_STDLIB

fi
if want memory; then
echo "== memory"
start 4 stdlib "$STDLIB" TC_KEY=$KEY
CANARY=$(sed -n 's/^receiver: canary at //p' "$OUT/receiver")
UCX_TLS=tcp timeout 30 "$SEC" attack 127.0.0.1 $PORT "$CANARY" > "$OUT/attack" 2>&1 || true
TC_KEY=$KEY "$SEC" connect "$STDLIB" $PORT 4 > "$OUT/good" 2>&1
finish
cat "$OUT/attack"
expect "$OUT/attack" "^attack: " "the attack ran"
if grep -q "READ THE CANARY" "$OUT/attack"; then
  echo "FAILED: a raw UCX client read receiver memory"; exit 1
fi
expect "$OUT/receiver" "canary intact" "receiver memory unchanged"
expect "$OUT/receiver" "ran 4 frames" "the receiver kept serving"

fi
echo "security: OK"
