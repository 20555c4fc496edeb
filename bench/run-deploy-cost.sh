#!/usr/bin/env bash
# What deploying code costs (docs/deploying.md, docs/performance.md,
# "Deploying"): a receiver runs package 'dep' build 1 under the job policy
# (and the signed one, once packages can be signed); a sender with build 2
# calls its new jam 'hist'. The first call pays the deployment (offer,
# files, checks, loading, linking), the first injected call the image's
# install into the code cache; then 2000 calls of each mode. Shared
# memory, one run per policy, REPEAT runs (default 3).
#   bench/run-deploy-cost.sh [REPEAT]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$ROOT/build}
REPEAT=${1:-3}
cmake --build "$BUILD_DIR" --target tc-deploy twochains-pkg-gen >/dev/null
BIN=$BUILD_DIR/test/e2e/tc-deploy
PKGGEN=$BUILD_DIR/bin/twochains-pkg-gen
SRC=$ROOT/test/e2e/packages/deploy
OUT=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$OUT"' EXIT
export TC_KEY=${TC_KEY:-deploy-bench-job-key-0123456789ab}
for v in v1 v2; do
  cp -r "$SRC/$v" "$OUT/src-$v"
  "$PKGGEN" --package dep --source "$OUT/src-$v" --prefix "$OUT/$v" \
            --build-dir "$OUT/build-$v" ${SIGN_KEY:+--sign-key "$SIGN_KEY"} > /dev/null 2>&1
done
PORT=$((20000 + RANDOM % 10000))
POLICIES=${POLICIES:-job}
for policy in $POLICIES; do
  for r in $(seq "$REPEAT"); do
    PORT=$((PORT + 1))
    mkfifo "$OUT/in-$policy-$r"
    "$BIN" receiver "$OUT/v1" $PORT "$policy" ${SIGNERS:-} < "$OUT/in-$policy-$r" \
      > "$OUT/r" 2>&1 &
    exec 3> "$OUT/in-$policy-$r"
    for _ in $(seq 100); do grep -q listening "$OUT/r" && break; sleep 0.1; done
    "$BIN" sender "$OUT/v2" $PORT measure > "$OUT/s" 2>&1 || { cat "$OUT/s" "$OUT/r"; exit 1; }
    echo STOP >&3
    exec 3>&-
    wait
    echo "== $policy, run $r"
    grep "^measure:" "$OUT/s"
  done
done
