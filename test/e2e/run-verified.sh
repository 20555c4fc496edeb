#!/usr/bin/env bash
# The verified code-trust policy (docs/verified.md): an aarch64 receiver
# under qemu-aarch64, holding no package and no trusted signer, takes
# package 'tenant' from a peer it does not trust: the build without the
# sandbox is refused, the sandboxed build (twochains-pkg-gen --sandbox) is
# verified into a region and its jams answer there; a jam whose service
# call names memory outside it, and one that stores to the region's
# read-only call table, are abandoned, one that loops is interrupted by
# the time limit inside its region, and the receiver goes on. Then
# hostile builds of it (tc-forge-jam: the sandboxed image with words of a
# deployer's choosing at its entry, every hash made to match): a store
# through an unguarded register, a write to the base register, a branch
# through an unguarded register, a system call; each refused by the
# receiver's verifier, which names the rule. Last, an x86_64 peer deploys
# the build of both ISAs (both sandboxed), whose jams of the receiver's
# ISA answer in both send modes. Then a job of two ranks: rank 1 deploys
# to rank 0 (verified), whose 'hop' answers its job's services and
# forwards back to rank 1 by rank.
#   run-verified.sh <tc-verified for aarch64> <tc-verified> <twochains-pkg-gen>
#                   <tc-forge-jam> <package source> <qemu-aarch64> <aarch64 LD_LIBRARY_PATH>
# With "-" for the aarch64 program (and qemu and the path), the receiver
# and the ranks are x86_64, run natively (the base in %gs), the package
# built for x86_64, and the forged builds carry x86-64 instructions.
set -euo pipefail
A64=$1 X86=$2 PKGGEN=$3 FORGE=$4 SRC=$5 QEMU=$6 LIBS=$7
. "$(dirname "$0")/lib.sh"
if [ "$A64" = - ]; then
  ISA=x86_64 A64=$X86
else
  ISA=aarch64
  for f in "$A64" "$QEMU"; do
    [ -x "$f" ] || { echo "skipped: $f is missing"; exit 77; }
  done
fi
# on_isa VAR=value... -- program args: runs a program of the receiver's
# ISA, for at most 300 s.
on_isa() {
  local envs=()
  while [ "$1" != -- ]; do envs+=("$1"); shift; done
  shift
  if [ "$ISA" = aarch64 ]; then
    local q=()
    for e in "${envs[@]}"; do q+=(-E "$e"); done
    timeout 300 "$QEMU" -L /usr/aarch64-linux-gnu -E LD_LIBRARY_PATH="$LIBS" -E TC_KEY="$TC_KEY" \
      ${q[@]+"${q[@]}"} "$@"
  else
    env ${envs[@]+"${envs[@]}"} timeout 300 "$@"
  fi
}
OUT=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$OUT"' EXIT
export TC_KEY=${TC_KEY:-verified-e2e-key-0123456789abcdef}
export UCX_TCP_CM_REUSEADDR=y
cp -r "$SRC" "$OUT/src"
"$PKGGEN" --package tenant --source "$OUT/src" --prefix "$OUT/sandboxed" --isa $ISA --sandbox \
          --build-dir "$OUT/build" > "$OUT/pkg-gen.log" 2>&1 &&
  "$PKGGEN" --package tenant --source "$OUT/src" --prefix "$OUT/plain" --isa $ISA \
            --build-dir "$OUT/build" >> "$OUT/pkg-gen.log" 2>&1 &&
  "$PKGGEN" --package tenant --source "$OUT/src" --prefix "$OUT/both" --isa x86_64,aarch64 \
            --sandbox --build-dir "$OUT/build-both" >> "$OUT/pkg-gen.log" 2>&1 ||
  { cat "$OUT/pkg-gen.log"; echo "FAILED: building package 'tenant'"; exit 1; }
PORT=$((20000 + RANDOM % 10000))
FORWARD_PORT=$((PORT + 1))
mkfifo "$OUT/in"
# Slots of 128 bytes, smaller than the images: injected frames ship them
# ahead, which for a sandboxed package must install nothing natively.
on_isa TC_SLOT_SIZE=128 FORWARD_ALLOW=127.0.0.1:$FORWARD_PORT -- \
  "$A64" receiver $PORT < "$OUT/in" > "$OUT/receiver" 2>&1 &
exec 3> "$OUT/in"
wait_for_listening "$OUT/receiver" || { cat "$OUT/receiver"; echo "FAILED: no receiver"; exit 1; }
st=0
on_isa FORWARD_PORT=$FORWARD_PORT -- "$A64" sender $PORT "$OUT/sandboxed" "$OUT/plain" \
  > "$OUT/sender" 2>&1 || st=$?
# name, words written at sum's entry, the rule the receiver must name
forged() {
  cp -r "$OUT/sandboxed" "$OUT/$1"
  "$FORGE" "$OUT/$1" tenant $ISA sum "$2" >> "$OUT/sender" 2>&1 &&
    on_isa -- "$A64" sender $PORT "$OUT/$1" - -31 >> "$OUT/sender" 2>&1 || st=1
  grep -q "image 'sum' as installed breaks the sandbox's rule $3 at text offset" "$OUT/receiver" ||
    { echo "FAILED: the receiver did not name rule $3 for $1"; st=1; }
}
if [ $ISA = aarch64 ]; then
  forged store-outside f9000020 memory-base      # str x0, [x1]
  forged writes-base aa0003fb writes-base        # mov x27, x0
  forged branch-outside d61f0020 indirect-branch # br x1
  forged system-call d4000001 forbidden          # svc #0
else # each word's bytes in memory order, then nops
  forged store-outside 90078948 memory-base      # movq %rax, (%rdi)
  forged writes-base 9090e88e writes-base        # movw %ax, %gs
  forged branch-outside 9090e0ff indirect-branch # jmpq *%rax
  forged system-call 9090050f forbidden          # syscall
fi
timeout 300 "$X86" sender $PORT "$OUT/both" - 0 >> "$OUT/sender" 2>&1 || st=1
echo STOP >&3
exec 3>&-
wait || true
# A job of two ranks: rank 1 deploys to rank 0 (verified), whose 'hop'
# forwards back to rank 1 by rank.
mkdir "$OUT/job"
ranks=()
for r in 0 1; do
  on_isa -- "$A64" job "$OUT/job" $r "$OUT/sandboxed" > "$OUT/rank$r" 2>&1 &
  ranks+=($!)
done
for p in "${ranks[@]}"; do wait "$p" || st=1; done
cat "$OUT/rank0" "$OUT/rank1" >> "$OUT/sender"
grep -q "rank 0: 1 deployed, 0 faulted" "$OUT/rank0" || st=1
echo "--- sender"; cat "$OUT/sender"
echo "--- receiver"; cat "$OUT/receiver"
[ $st -eq 0 ] && ! grep -q FAILED "$OUT/sender" &&
  grep -q "receiver: 2 deployed, 5 refused, 2 faulted, 1 timed out" "$OUT/receiver" &&
  grep -q "receiver: code shipped ahead [1-9][0-9]*, installed in the code cache 0" \
    "$OUT/receiver" &&
  grep -q "jam 'spin' of package 'tenant' ran past the time limit (1000 ms): interrupted at offset" \
    "$OUT/receiver" &&
  grep -q "jam 'escape' of package 'tenant' raised SIGSYS" "$OUT/receiver" &&
  grep -q "jam 'crash' of package 'tenant' raised SIGSEGV at offset 0x[0-9a-f]* in its code" \
    "$OUT/receiver" &&
  grep -q "is not built for the sandbox" "$OUT/receiver" &&
  grep -q "tc_jam_return's reply (64 bytes at region offset 4096) is outside" "$OUT/receiver" ||
  { echo "FAILED: the verified policy"; exit 1; }
echo "PASSED: a sandboxed package from an untrusted peer verified, run and contained;" \
     "four hostile builds refused by rule"
