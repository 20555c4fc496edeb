#!/usr/bin/env bash
# Before authentication (docs/security.md, "Before authentication"): a raw
# UCX client without the key floods a receiver with connections from an
# address of its own (this host's, beyond loopback; the receiver, which has
# a key, listens on every address), beside a good peer on loopback.
# In each step the good peer connects within tc_connect's usual timeout
# (5 s) and gets every frame through, the receiver does not abort, and its
# file descriptors come back to their level before the flood:
#   hold     300 connections opened at once and never a byte of the
#            handshake: most are refused, a few take places until the
#            handshake timeout; the descriptors settle while the attacker
#            is still there to hold them
#   reopen   300 connections, each opened again the moment it is closed
#            (UCX 1.13 aborted within seconds: runtime/ucx/UcxAsyncGuard.cpp)
#   evict    every place for connections still authenticating taken and
#            retaken at once (max_startups 2): the good peer's address
#            holds fewer, so it takes one
#   same     the reopen flood from the good peer's own address: its AUTH
#            proves the key, so the flood's connections, not its, give up
#            their places to newer ones
# (Wrong MACs from a client that then stops reading need the handshake's
# wire formats: test/unit/StartupsTest.cpp, WrongMacsOfAClientThat....)
# TC_STARTUPS_ONLY="hold same" runs only those steps. Skipped (77) where
# this host has no IPv4 address beyond loopback for the attacker to come
# from (UCX 1.13's client cannot connect from a second loopback address:
# it finds no interface for it).
#   run-startups.sh <tc-security> <tc-startups> <stdlib prefix>
set -euo pipefail
source "$(dirname "$0")/lib.sh"
SEC=$1 TOOL=$2 STDLIB=$3
OUT=$(mktemp -d)
RPID= APID=
export UCX_TCP_CM_REUSEADDR=y
trap '[ -n "$APID" ] && kill $APID 2>/dev/null; [ -n "$RPID" ] && kill $RPID 2>/dev/null; rm -rf "$OUT"' EXIT
export TC_KEY=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
unset TC_KEY_FILE
PORT=$(( 20000 + RANDOM % 11000 ))
FROM=$( (ip -4 -o addr show scope global 2>/dev/null || true) | awk '{sub("/.*", "", $4); print $4; exit}')
[ -n "$FROM" ] || FROM=$( (hostname -I 2>/dev/null || true) | tr ' ' '\n' |
                          grep -m1 -E '^[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+$' || true)
if [ -z "$FROM" ]; then
  echo "skipped: no IPv4 address beyond loopback for the attacker"
  exit 77
fi
# Descriptors the good peer's connection and the receiver's own use come and
# go by a few; a connection left open costs one or two.
SLACK=4

want() { [ -z "${TC_STARTUPS_ONLY:-}" ] || [[ " $TC_STARTUPS_ONLY " == *" $1 "* ]]; }
fail() { echo "FAILED: $1"; for f in "$OUT"/*; do echo "--- $f:"; grep -v "UCX  WARN" "$f" | tail -40; done; exit 1; }
expect() { grep -q -- "$2" "$1" || fail "$3"; }
start() { # frames [VAR=value ...]: a receiver on every address (it has a key)
  local frames=$1
  shift
  PORT=$(( PORT + 1 ))
  env "$@" "$SEC" receiver "$STDLIB" stdlib $PORT "$frames" 0.0.0.0 > "$OUT/receiver" 2>&1 &
  RPID=$!
  wait_for_listening "$OUT/receiver" || fail "the receiver did not listen"
  BEFORE=$(fds)
}
fds() { ls /proc/$RPID/fd 2>/dev/null | wc -l; }
attack() { # verb args...: the attacker, without the key, in the background
  env -u TC_KEY "$TOOL" "$@" > "$OUT/attacker" 2>&1 &
  APID=$!
}
await_attack() { # pattern: what the attacker says once it has done its worst
  for _ in $(seq 300); do
    grep -q -- "$1" "$OUT/attacker" && return 0
    kill -0 $APID 2>/dev/null || break
    sleep 0.1
  done
  fail "the attacker did not get going"
}
good() { # frames pause-ms name [host]: the good peer, which must connect and get every frame through
  "$TOOL" steady "$STDLIB" $PORT "$1" "$2" ${4:+"$4"} > "$OUT/$3" 2>&1 || fail "the good peer ($3)"
  sed 's/^/  /' "$OUT/$3"
}
settles() { # seconds: the receiver's descriptors back to their level within that
  local now
  for _ in $(seq $(( $1 * 10 ))); do
    grep -q '^State:[[:space:]]*[^Z]' /proc/$RPID/status 2>/dev/null || fail "the receiver is gone"
    now=$(fds)
    [ "$now" -le $(( BEFORE + SLACK )) ] && { AFTER=$now; return 0; }
    sleep 0.1
  done
  AFTER=$now
  return 1
}
settles_beside_attacker() { # what: the descriptors settle while the attacker still runs, then it stops
  settles 15 || fail "descriptors $BEFORE before, $AFTER with $1"
  kill -0 $APID 2>/dev/null || fail "the attacker left before the descriptors settled"
  echo "  descriptors: $BEFORE before, $DURING during, $AFTER with $1"
  kill $APID 2>/dev/null || true
  wait $APID 2>/dev/null || true
  APID=
}
finish() { # the last frames, then the receiver's end: it must not have aborted
  good 20 0 last
  local status=0
  wait $RPID || status=$?
  RPID=
  [ $status -eq 0 ] || fail "the receiver ended with status $status"
  grep "^receiver: before authentication" "$OUT/receiver" | sed 's/^/  /'
}
counted() { # counter minimum: a count the receiver printed, at least that
  local n
  n=$(sed -n "s/.*$1 \([0-9]*\).*/\1/p" "$OUT/receiver" | head -1)
  [ "${n:-0}" -ge "$2" ] || fail "$1: ${n:-none}, expected at least $2"
}

if want hold; then
  echo "== hold (from $FROM)"
  start 220
  attack flood "$FROM" $PORT 300 60 hold "$FROM"
  await_attack " 300 opened"
  DURING=$(fds)
  good 200 20 during
  settles_beside_attacker "the attacker still there"
  finish
  counted "connections refused" 290
  counted "handshakes timed out" 1
fi

if want reopen; then
  echo "== reopen (from $FROM)"
  start 220
  attack flood "$FROM" $PORT 300 20 reopen "$FROM"
  await_attack " ms: "
  DURING=$(fds)
  good 200 20 during
  wait $APID || true
  APID=
  tail -1 "$OUT/attacker" | sed 's/^/  /'
  settles 20 || fail "descriptors $BEFORE before the flood, $AFTER after it"
  echo "  descriptors: $BEFORE before, $DURING during, $AFTER after"
  finish
  counted "connections refused" 300
fi

if want evict; then
  echo "== evict (from $FROM)"
  start 40 TC_MAX_STARTUPS=2 TC_MAX_STARTUPS_PER_ADDRESS=8
  attack flood "$FROM" $PORT 16 12 reopen "$FROM"
  await_attack " ms: "
  good 20 20 during
  wait $APID || true
  APID=
  settles 20 || fail "descriptors $BEFORE before the flood, $AFTER after it"
  finish
fi

if want same; then
  echo "== same (the good peer and the flood both from $FROM)"
  start 220
  attack flood "$FROM" $PORT 300 20 reopen "$FROM"
  await_attack " ms: "
  good 200 20 during "$FROM"
  wait $APID || true
  APID=
  tail -1 "$OUT/attacker" | sed 's/^/  /'
  settles 20 || fail "descriptors $BEFORE before the flood, $AFTER after it"
  finish
  counted "connections refused" 300
fi
echo "startups: OK"
