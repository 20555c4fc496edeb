#!/usr/bin/env bash
# One active caller's latency and rate beside 0, 16, 64, 256 and 1024 idle
# connected peers, and the receiver's memory, in one run each (shared
# memory; docs/scaling.md); then alone again, once the idle peers closed.
# Runs REPEAT times.
#   bench/run-many-peers.sh <build dir> [repeat] [idle counts] [calls per step]
set -euo pipefail
BUILD=${1:-build} REPEAT=${2:-3} COUNTS=${3:-0,16,64,256,1024} CALLS=${4:-20000}
PREFIX="$BUILD/test/e2e/twochains/calls"
for ((i = 0; i < REPEAT; i++)); do
  "$BUILD/test/e2e/tc-many-peers" "$PREFIX" "$COUNTS" "$CALLS" 4 | grep '^many-peers'
done
