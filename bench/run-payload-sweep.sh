#!/usr/bin/env bash
# The payload sweep of docs/performance.md ("Payloads from 8 B to 4 MiB"):
# bench/payload-ahead from 8 B to 4 MiB, Two-Chains against UCX active
# messages and ucp_put in the same run, on shared memory (UCX's choice
# here: shm, rendezvous by CMA) and on TCP (UCX_TLS=tcp, loopback).
#   bench/run-payload-sweep.sh <build dir> [iters]
set -euo pipefail
BUILD=${1:-build} ITERS=${2:-2000}
SIZES=8,64,512,4096,32768,262144,1048576,4194304
echo "## shared memory (UCX's default transports)"
"$BUILD/bench/payload-ahead" --sizes $SIZES --iters "$ITERS"
echo
echo "## TCP (UCX_TLS=tcp)"
UCX_TLS=tcp "$BUILD/bench/payload-ahead" --sizes $SIZES --iters "$ITERS"
