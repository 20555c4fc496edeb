#!/usr/bin/env bash
# A job launched by Slurm: a one-node cluster made by this test (munged,
# slurmctld and slurmd, every file of theirs in a private folder), and
# `srun --mpi=pmix` starting the ranks, which join from slurmd's PMIx server.
# Passes when srun succeeds and every rank printed PASSED. Skipped (exit 77)
# where Slurm cannot run: not root, or Slurm, munge or its PMIx plugin missing.
#   run-slurm.sh <np> <command...>
set -uo pipefail
NP=$1
shift
NODE=$(hostname -s)
DIR= CTLD_PID=
PIDS=()

skip() { echo "skipped: $*"; exit 77; }
[ "$(id -u)" -eq 0 ] || skip "needs root to run munged, slurmctld and slurmd"
for tool in munged slurmctld slurmd srun sinfo squeue scancel ss; do
  command -v $tool >/dev/null || skip "$tool not found (slurm-wlm, munge: scripts/install-deps.sh)"
done
# Run from inside another Slurm job, srun would take its job's variables
# for a job of this cluster.
unset $(compgen -e | grep '^SLURM_')

# What slurmd started (slurmstepd, the ranks), found by the SLURM_CONF they
# inherit: it names this test's folder and no other's.
steps_left() {
  local p
  for p in /proc/[0-9]*; do
    tr '\0' '\n' 2>/dev/null < "$p/environ" | grep -qxF "SLURM_CONF=$DIR/slurm.conf" &&
      echo "${p#/proc/}"
  done
}
cleanup() {
  local status=$? p
  [ -n "$DIR" ] || exit $status
  # Jobs first, while slurmd is there to end their tasks. Slurm's commands
  # wait long for a slurmctld that is not there: only while it runs.
  if [ -n "$CTLD_PID" ] && kill -0 "$CTLD_PID" 2>/dev/null; then
    timeout 10 scancel --quiet --user=root
    for _ in $(seq 20); do [ -z "$(timeout 2 squeue -h 2>/dev/null)" ] && break; sleep 0.1; done
  fi
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
  for p in $(steps_left); do kill -9 "$p" 2>/dev/null; done
  if [ $status -ne 0 ] && [ $status -ne 77 ]; then
    for log in munged slurmctld slurmd; do
      echo "--- $log log"
      cat "$DIR/$log.log" 2>/dev/null
    done
  fi
  rm -rf "$DIR"
  exit $status
}
trap cleanup EXIT
DIR=$(mktemp -d /tmp/tc-slurm.XXXXXX)
mkdir "$DIR/state" "$DIR/spool" "$DIR/tmp"
export SLURM_CONF=$DIR/slurm.conf
MUNGE_SOCKET=$DIR/munge.socket

# Ports below the ephemeral range (lib.sh) that nothing listens on, so that
# tests running at once each have their own cluster.
free_port() {
  local port
  while :; do
    port=$(( 20000 + RANDOM % 11000 ))
    [ "$port" != "${1:-}" ] && ! ss -Htln "sport = :$port" | grep -q . && { echo $port; return; }
  done
}
CTLD_PORT=$(free_port)
SLURMD_PORT=$(free_port "$CTLD_PORT")

# More CPUs than this 2-core machine has, reported as configured
# (config_overrides: else the node is drained for having fewer), and the
# partition shared: <np> ranks start at once. No cgroups: proctrack/linuxproc
# tracks the ranks as descendants of slurmstepd, and nothing binds or limits
# them. The hosts by address, not by a name DNS must know.
cat > "$SLURM_CONF" <<EOF
ClusterName=tc$$
SlurmctldHost=$NODE(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$MUNGE_SOCKET
CredType=cred/munge
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool
TmpFS=$DIR/tmp
SlurmctldPidFile=$DIR/slurmctld.pid
SlurmdPidFile=$DIR/slurmd.pid
SlurmdParameters=config_overrides
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MailProg=/bin/true
MpiDefault=none
ReturnToService=2
NodeName=$NODE NodeAddr=127.0.0.1 CPUs=16 State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE
EOF
# Debian's mpi_pmix plugin (mpi_pmix_v4.so) dlopens libpmix.so from
# libpmix-dev, which slurm-wlm does not pull in: a missing one fails srun.
srun --mpi=list 2>&1 | grep -qw pmix || skip "Slurm has no PMIx plugin (srun --mpi=list)"

# munged as root, with its key, socket, pid and seed here rather than in
# /etc/munge, /run/munge and /var/lib/munge, where a system munged may run.
# It refuses a key others may read, and a socket in folders not every user
# can search (any user's process authenticates): the folder is 0711.
chmod 0711 "$DIR"
head -c 1024 /dev/urandom > "$DIR/munge.key"
chmod 0400 "$DIR/munge.key"
munged --foreground --socket="$MUNGE_SOCKET" --key-file="$DIR/munge.key" \
  --pid-file="$DIR/munged.pid" --seed-file="$DIR/munged.seed" > "$DIR/munged.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 50); do [ -S "$MUNGE_SOCKET" ] && break; sleep 0.1; done
[ -S "$MUNGE_SOCKET" ] || { echo "munged did not start"; exit 1; }

# In the foreground (-D) and with no log files set, they log to stderr.
slurmctld -D -f "$SLURM_CONF" > "$DIR/slurmctld.log" 2>&1 &
CTLD_PID=$!
PIDS+=($!)
slurmd -D -f "$SLURM_CONF" > "$DIR/slurmd.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 300); do
  [ "$(sinfo -h -n "$NODE" -o %t 2>/dev/null)" = idle ] && break
  sleep 0.1
done
if [ "$(sinfo -h -n "$NODE" -o %t 2>/dev/null)" != idle ]; then
  sinfo -N -l
  echo "the node did not come up idle in 30 s"
  exit 1
fi

# A rank that fails ends the others (-K), as mpirun does, rather than their
# waiting out their timeouts; and srun's 180 s leave the steps above and the
# cleanup within the test's 300 s.
echo "srun --mpi=pmix -n $NP --oversubscribe --kill-on-bad-exit=1 $*"
OUT=$DIR/srun.out
timeout 180 srun --mpi=pmix -n "$NP" --oversubscribe --kill-on-bad-exit=1 "$@" > "$OUT" 2>&1
STATUS=$?
cat "$OUT"
PASSED=$(grep -c "PASSED" "$OUT")
echo "srun exited with $STATUS; $PASSED of $NP ranks passed"
[ "$STATUS" -eq 0 ] && [ "$PASSED" -eq "$NP" ]
