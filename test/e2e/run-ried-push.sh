#!/usr/bin/env bash
# A sender drives a ried over to a receiver that accepts rieds (it loads it,
# its initialiser runs), to one that does not (it refuses, and says why),
# and a file that is no library to one that accepts rieds (it cannot load
# it, and says why: the pusher logs the receiver's reason); and the ried to
# one that accepts rieds under the signed or the verified code-trust policy
# (refused: native code comes there only inside signed packages).
#   run-ried-push.sh <tc-ried-push> <ried library>
set -euo pipefail
source "$(dirname "$0")/lib.sh"
TOOL=$1 LIB=$2
OUT=$(mktemp -d)
trap 'kill $RPID 2>/dev/null || true; rm -rf "$OUT"' EXIT
# Not a shared object: the receiver's dlopen fails on it.
printf 'not a library\n%.0s' $(seq 64) > "$OUT/bad.so"
printf '# no signer trusted\n' > "$OUT/signers"
for run in accept:$LIB refuse:$LIB accept:$OUT/bad.so signed:$LIB verified:$LIB; do
  policy=${run%%:*} pushed=${run#*:}
  PORT=$(( 20000 + RANDOM % 11000 ))
  if [ $policy = signed ] || [ $policy = verified ]; then
    TC_CODE_TRUST=$policy TC_TRUSTED_SIGNERS=$OUT/signers \
      timeout 30 "$TOOL" receiver accept $PORT > "$OUT/receiver" 2>&1 &
  else
    timeout 30 "$TOOL" receiver $policy $PORT > "$OUT/receiver" 2>&1 &
  fi
  RPID=$!
  wait_for_listening "$OUT/receiver"
  timeout 30 "$TOOL" pusher "$pushed" $PORT > "$OUT/pusher" 2>&1
  wait $RPID
  cat "$OUT/pusher" "$OUT/receiver"
  if [ $policy = accept ] && [ "$pushed" = "$LIB" ]; then
    grep -q "pusher: success" "$OUT/pusher"
    grep -q "receiver: pushed ried loaded, marker 4242" "$OUT/receiver"
  elif [ $policy = signed ] || [ $policy = verified ]; then
    grep -q "pusher: refused by the peer" "$OUT/pusher"
    grep -q "refused the ried '$(basename "$LIB")': its code-trust policy is $policy" "$OUT/pusher"
    grep -q "receiver: no pushed ried" "$OUT/receiver"
  elif [ $policy = refuse ]; then
    grep -q "pusher: refused by the peer" "$OUT/pusher"
    grep -q "receiver 127.0.0.1:$PORT refused the ried '$(basename "$LIB")': it does not accept rieds (TC_CONTEXT_ACCEPT_RIEDS)" "$OUT/pusher"
    grep -q "receiver: no pushed ried" "$OUT/receiver"
    # Refused from the header, before the name or the bytes are received.
    grep -q "refused a ried pushed by peer 1 (127.0.0.1:[0-9]*): this context does not accept rieds" "$OUT/receiver"
  else
    grep -q "pusher: invalid jam image" "$OUT/pusher"
    # The receiver's dlerror, as it said it.
    grep -q "receiver 127.0.0.1:$PORT refused the ried 'bad.so': it cannot load it: /proc/self/fd/[0-9]*: [a-z]" "$OUT/pusher"
    grep -q "receiver: no pushed ried" "$OUT/receiver"
  fi
done
echo "ried push: OK"
