#!/usr/bin/env bash
# Deploying code the receiver never had into a running receiver (issue 30,
# docs/deploying.md). Builds package 'dep' twice (v2 adds the jam 'hist';
# both share the ried), 'lost' (a jam importing a name nothing defines)
# and 'fresh' (a whole new package with a ried), then for each scenario
# starts a receiver with build v1 under a code-trust policy and a sender:
#   job      v2's new jam runs Local and injected, as natively
#   package  the frame does not run; tc_deploy says TC_ERR_REFUSED, and
#            the sender's log says why
#   job      'lost' is refused, the log naming the import
#   job      'fresh' deploys and runs in both modes
# and, asked for by name (ctest's security label): folders (a refused
# deployment's files, a dead process's folder), limits (per deployer),
# slowinit (a ried initialiser of 4 s runs off the receiver's progress).
#   run-deploy.sh <tc-deploy> <twochains-pkg-gen> <source dir of the packages> [scenario]
set -euo pipefail
BIN=$1 PKGGEN=$2 SRC=$3 ONLY=${4:-all}
. "$(dirname "$0")/lib.sh"
OUT=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$OUT"' EXIT
export TC_KEY=${TC_KEY:-deploy-e2e-job-key-0123456789abc}
build() { # name source-subdir prefix [pkg-gen options]
  cp -r "$SRC/$2" "$OUT/src-$3"
  "$PKGGEN" --package "$1" --source "$OUT/src-$3" --prefix "$OUT/$3" \
            --build-dir "$OUT/build-$3" "${@:4}" > /dev/null 2>&1 \
    || { echo "FAILED: cannot build $1 from $2"; exit 1; }
}
build dep v1 v1
build dep v2 v2
# It says it is the receiving program's to provide; no receiver does.
build lost lost lost --extern-symbol=dep_nowhere
build fresh fresh fresh
PORT=$((20000 + RANDOM % 10000))

# run <name> <policy> <scenario> [prefix2]: one receiver, one sender.
run() {
  local name=$1 policy=$2 scenario=$3 extra=${4:-}
  PORT=$((PORT + 1))
  mkfifo "$OUT/in-$name"
  "$BIN" receiver "$OUT/v1" $PORT "$policy" ${SIGNERS:-} < "$OUT/in-$name" > "$OUT/r-$name" 2>&1 &
  local r=$!
  exec 3> "$OUT/in-$name"
  wait_for_listening "$OUT/r-$name" || { cat "$OUT/r-$name"; echo "FAILED: no receiver"; exit 1; }
  local st=0
  "$BIN" sender "$OUT/v2" $PORT "$scenario" $extra > "$OUT/s-$name" 2>&1 || st=$?
  echo STOP >&3
  exec 3>&-
  wait $r || true
  echo "--- $name: sender"; cat "$OUT/s-$name"
  echo "--- $name: receiver"; cat "$OUT/r-$name"
  [ $st -eq 0 ] || { echo "FAILED: scenario $name"; exit 1; }
}

if [ "$ONLY" = all ] || [ "$ONLY" = job ]; then
  run job job new-jam
  grep -q "receiver: 1 deployed, 0 refused" "$OUT/r-job"
  grep -q "receiver: ried total 5" "$OUT/r-job"
fi
if [ "$ONLY" = all ] || [ "$ONLY" = package ]; then
  run package package refused
  grep -q "refused package 'dep' .*its code-trust policy is package" "$OUT/s-package"
  grep -q "receiver: 0 deployed, 1 refused" "$OUT/r-package"
fi
if [ "$ONLY" = all ] || [ "$ONLY" = missing ]; then
  run missing job missing "$OUT/lost"
  grep -q "refused package 'lost' .*imports 'dep_nowhere'" "$OUT/s-missing"
fi
if [ "$ONLY" = all ] || [ "$ONLY" = fresh ]; then
  run fresh job fresh "$OUT/fresh"
  grep -q "receiver: 1 deployed, 0 refused" "$OUT/r-fresh"
fi
if [ "$ONLY" = all ] || [ "$ONLY" = signed ]; then
  # The signed policy: only packages signed by a key the receiver trusts.
  openssl genpkey -algorithm ed25519 -out "$OUT/trusted.pem" 2>/dev/null
  openssl genpkey -algorithm ed25519 -out "$OUT/stranger.pem" 2>/dev/null
  "$PKGGEN" --print-signer "$OUT/trusted.pem" > "$OUT/signers"
  build dep v2 v2-trusted --sign-key "$OUT/trusted.pem"
  build dep v2 v2-stranger --sign-key "$OUT/stranger.pem"
  # Signed, then the manifest changed (a comment line: the loader takes
  # it, the signature does not).
  cp -r "$OUT/v2-trusted" "$OUT/v2-edited"
  echo "# edited after signing" >> "$OUT/v2-edited/lib/twochains/packages/dep/manifest.tcm"
  # A trusted signature made for another build: the aarch64 one's.
  build dep v2 v2-arm --isa=aarch64 --sign-key "$OUT/trusted.pem"
  cp -r "$OUT/v2" "$OUT/v2-borrowed"
  cp "$OUT/v2-arm/lib/twochains/packages/dep/manifest.tcm.sig" \
     "$OUT/v2-borrowed/lib/twochains/packages/dep/"
  cp -r "$OUT/v2-trusted" "$OUT/v2-tampered"
  export SIGNERS="$OUT/signers"
  signed() { # name prefix expected-status [tampered file]
    PORT=$((PORT + 1))
    mkfifo "$OUT/in-$1"
    "$BIN" receiver "$OUT/v1" $PORT "${POLICY:-signed}" "$SIGNERS" < "$OUT/in-$1" > "$OUT/r-$1" 2>&1 &
    exec 3> "$OUT/in-$1"
    wait_for_listening "$OUT/r-$1" || { cat "$OUT/r-$1"; exit 1; }
    local st=0
    DEPLOY_TAMPER=${4:-} "$BIN" sender "$2" $PORT "expect=$3" > "$OUT/s-$1" 2>&1 || st=$?
    echo STOP >&3
    exec 3>&-
    wait || true
    echo "--- signed, $1: sender"; cat "$OUT/s-$1"
    echo "--- signed, $1: receiver"; cat "$OUT/r-$1"
    [ $st -eq 0 ] || { echo "FAILED: signed, $1"; exit 1; }
  }
  signed unsigned "$OUT/v2" -31
  grep -q "refused package 'dep' .*not signed" "$OUT/s-unsigned"
  signed stranger "$OUT/v2-stranger" -31
  grep -q "refused package 'dep' .*not one of the receiver's trusted signers" "$OUT/s-stranger"
  signed edited "$OUT/v2-edited" -31
  grep -q "refused package 'dep' .*does not verify" "$OUT/s-edited"
  signed borrowed "$OUT/v2-borrowed" -31
  grep -q "refused package 'dep' .*does not verify" "$OUT/s-borrowed"
  signed tampered "$OUT/v2-tampered" -15 \
    "$OUT/v2-tampered/lib/twochains/packages/dep/x86_64/jams/hist.jam"
  grep -q "refused package 'dep' .*hist.jam" "$OUT/s-tampered"
  signed trusted "$OUT/v2-trusted" 0
  grep -q "receiver: 1 deployed, 0 refused" "$OUT/r-trusted"
  # The verified policy with trusted signers (docs/verified.md): a signed
  # package runs as under signed; an unsigned one must be sandboxed, which
  # this x86_64 receiver cannot run; nor may a package with a ried be.
  POLICY=verified signed verified-trusted "$OUT/v2-trusted" 0
  grep -q "receiver: 1 deployed, 0 refused" "$OUT/r-verified-trusted"
  POLICY=verified signed verified-unsigned "$OUT/v2" -31
  grep -q "refused package 'dep' .*rieds, native libraries" "$OUT/s-verified-unsigned"
  grep -q "receiver: 0 deployed, 1 refused" "$OUT/r-verified-unsigned"
  # An unsigned package without rieds, not built for the sandbox: under
  # verified this x86_64 receiver runs it only if a trusted signer signed
  # it.
  PORT=$((PORT + 1))
  mkfifo "$OUT/in-nosandbox"
  "$BIN" receiver "$OUT/v1" $PORT verified "$SIGNERS" < "$OUT/in-nosandbox" \
    > "$OUT/r-nosandbox" 2>&1 &
  exec 3> "$OUT/in-nosandbox"
  wait_for_listening "$OUT/r-nosandbox" || { cat "$OUT/r-nosandbox"; exit 1; }
  st=0
  "$BIN" sender "$OUT/v1" $PORT deploy=-31 "$OUT/lost" lost > "$OUT/s-nosandbox" 2>&1 || st=$?
  echo STOP >&3
  exec 3>&-
  wait || true
  echo "--- verified, not sandboxed: sender"; cat "$OUT/s-nosandbox"
  [ $st -eq 0 ] && grep -q "refused package 'lost' .*is not built for the sandbox" "$OUT/s-nosandbox" ||
    { echo "FAILED: verified, not sandboxed"; exit 1; }
  unset SIGNERS
fi
if [ "$ONLY" = folders ]; then
  # Refused deployments leave no files (issue 41, item 5): a tampered
  # package is refused, and its files are gone from the receiver's deploy
  # folder while the receiver still runs. A folder a dead process left
  # (its lock free) is removed when the next deploy folder is made; a
  # live one's is not.
  export TMPDIR="$OUT/tmp-folders"
  mkdir -p "$TMPDIR/twochains-deploy-dead01/1"
  : > "$TMPDIR/twochains-deploy-dead01/.owner"
  head -c 100000 /dev/urandom > "$TMPDIR/twochains-deploy-dead01/1/left.so"
  mkdir -p "$TMPDIR/twochains-deploy-live01"
  : > "$TMPDIR/twochains-deploy-live01/.owner"
  # A live process's lock: the sleep holds it (and nothing of ours open).
  ( exec 9> "$TMPDIR/twochains-deploy-live01/.owner"; flock 9; exec sleep 600 ) \
    > /dev/null 2>&1 &
  holder=$!
  cp -r "$OUT/v2" "$OUT/v2-junk"
  PORT=$((PORT + 1))
  mkfifo "$OUT/in-folders"
  "$BIN" receiver "$OUT/v1" $PORT job < "$OUT/in-folders" > "$OUT/r-folders" 2>&1 &
  r=$!
  exec 3> "$OUT/in-folders"
  wait_for_listening "$OUT/r-folders" || { cat "$OUT/r-folders"; exit 1; }
  st=0
  DEPLOY_TAMPER="$OUT/v2-junk/lib/twochains/packages/dep/x86_64/jams/hist.jam" \
    "$BIN" sender "$OUT/v2-junk" $PORT "expect=-15" > "$OUT/s-folders" 2>&1 || st=$?
  left=$(find "$TMPDIR" -path "$TMPDIR/twochains-deploy-live01" -prune -o -type f \
           ! -name .owner -print | wc -l)
  echo STOP >&3
  exec 3>&-
  wait "$r" || true
  kill "$holder" 2>/dev/null || true
  wait "$holder" 2>/dev/null || true
  echo "--- folders: sender"; cat "$OUT/s-folders"
  echo "--- folders: receiver"; cat "$OUT/r-folders"
  echo "folders: $left files left by the refused deployment or the dead process"
  [ $st -eq 0 ] || { echo "FAILED: folders, the tampered package was not refused"; exit 1; }
  [ "$left" -eq 0 ] || { find "$TMPDIR" -type f; echo "FAILED: folders, files left"; exit 1; }
  [ -d "$TMPDIR/twochains-deploy-live01" ] \
    || { echo "FAILED: folders, a live process's folder was removed"; exit 1; }
  unset TMPDIR
fi
if [ "$ONLY" = slowinit ]; then
  # A deployed ried whose initialiser takes 4 s (issue 41, item 9) loads
  # off the receiver's progress: another peer connects and its calls are
  # answered while the initialiser still runs (its marks say when).
  build slowinit slowinit slowinit
  PORT=$((PORT + 1))
  mkfifo "$OUT/in-slow"
  DEPLOY_INIT_MARK="$OUT/mark" \
    "$BIN" receiver "$OUT/v1" $PORT job < "$OUT/in-slow" > "$OUT/r-slow" 2>&1 &
  exec 3> "$OUT/in-slow"
  wait_for_listening "$OUT/r-slow" || { cat "$OUT/r-slow"; exit 1; }
  "$BIN" sender "$OUT/v1" $PORT deploy=0 "$OUT/slowinit" slowinit > "$OUT/s-deployer" 2>&1 &
  deployer=$!
  for _ in $(seq 300); do [ -e "$OUT/mark.started" ] && break; sleep 0.1; done
  started=$([ -e "$OUT/mark.started" ] && echo 1 || echo 0)
  st=0
  "$BIN" sender "$OUT/v1" $PORT calls=20 > "$OUT/s-caller" 2>&1 || st=$?
  served_meanwhile=$([ -e "$OUT/mark.done" ] && echo 0 || echo 1)
  dst=0
  wait $deployer || dst=$?
  echo STOP >&3
  exec 3>&-
  wait || true
  echo "--- slowinit: deployer"; cat "$OUT/s-deployer"
  echo "--- slowinit: caller"; cat "$OUT/s-caller"
  echo "--- slowinit: receiver"; cat "$OUT/r-slow"
  [ "$started" = 1 ] || { echo "FAILED: the initialiser never started"; exit 1; }
  [ $st -eq 0 ] || { echo "FAILED: calls beside a slow initialiser"; exit 1; }
  [ "$served_meanwhile" = 1 ] ||
    { echo "FAILED: the calls were answered only after the initialiser ended"; exit 1; }
  [ $dst -eq 0 ] || { echo "FAILED: the slow package did not deploy"; exit 1; }
  grep -q "receiver: 1 deployed, 0 refused" "$OUT/r-slow" ||
    { echo "FAILED: the receiver's count"; exit 1; }
  echo "PASSED: a slow initialiser runs off the receiver's progress"
fi

if [ "$ONLY" = limits ]; then
  # Limits per deployer, not per context (issue 41, item 7), the limit
  # lowered to one package: a second package from the same deployer is
  # refused, naming the deployer; its first stays installed.
  export TMPDIR="$OUT/tmp-limits"
  mkdir -p "$TMPDIR"
  PORT=$((PORT + 1))
  mkfifo "$OUT/in-limits"
  TC_DEPLOY_PEER_PACKAGES=1 \
    "$BIN" receiver "$OUT/v1" $PORT job < "$OUT/in-limits" > "$OUT/r-limits" 2>&1 &
  exec 3> "$OUT/in-limits"
  wait_for_listening "$OUT/r-limits" || { cat "$OUT/r-limits"; exit 1; }
  limit_step() { # name prefix package expected-status
    local st=0
    "$BIN" sender "$OUT/v2" $PORT "deploy=$4" "$2" "$3" > "$OUT/s-limits-$1" 2>&1 || st=$?
    echo "--- limits, $1: sender"; cat "$OUT/s-limits-$1"
    [ $st -eq 0 ] || { echo "--- receiver"; cat "$OUT/r-limits"; echo "FAILED: limits, $1"; exit 1; }
  }
  limit_step first "$OUT/v2" dep 0
  limit_step second "$OUT/fresh" fresh -30
  grep -q "refused package 'fresh' .*deployer (address 127.0.0.1) has 1 packages here" \
    "$OUT/s-limits-second"
  dirs=$(find "$TMPDIR" -mindepth 2 -maxdepth 2 -type d | wc -l)
  echo STOP >&3
  exec 3>&-
  wait || true
  echo "--- limits: receiver"; cat "$OUT/r-limits"
  echo "limits: $dirs package folder(s) kept"
  grep -q "receiver: 1 deployed" "$OUT/r-limits" || { echo "FAILED: limits, counts"; exit 1; }
  [ "$dirs" -eq 1 ] || { echo "FAILED: limits, the refused package's folder"; exit 1; }
  unset TMPDIR
fi
if [ "$ONLY" = all ] || [ "$ONLY" = job-mpi ]; then
  # A job of JOB_RANKS ranks (4; more than cores) launched as HPC jobs
  # are: each deploys 'fresh' to every rank at once, then calls it
  # everywhere. Beyond 4 ranks a receiver has fewer places than offers
  # coming at once: the busy ones are offered again, none fails.
  NP=${JOB_RANKS:-4}
  mpirun --allow-run-as-root --oversubscribe --bind-to none -np "$NP" \
    "$BIN" job "$OUT/fresh" > "$OUT/job" 2>&1 || true
  cat "$OUT/job"
  [ "$(grep -c "PASSED" "$OUT/job")" -eq "$NP" ] || { echo "FAILED: job-mpi"; exit 1; }
fi
echo "PASSED: code the receiver never had, deployed while it runs"
