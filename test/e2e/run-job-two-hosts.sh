#!/usr/bin/env bash
# A job over two "hosts": mpirun's ranks live in two network namespaces made
# by this test, joined by a veth pair (as run-netns.sh's are), even ranks on
# host A, odd ranks on host B. Ranks of one host must reach each other by
# shared memory, ranks of different hosts by TCP over the veth, and every
# rank must pass.
# Skipped (exit 77) where namespaces cannot be made (not root, no iproute2),
# where a namespace cannot be given a boot id of its own, or where python3,
# which relays PMIx into the namespaces, is missing.
#   run-job-two-hosts.sh <np> <mpi|pmix> <command...>
# mpi: the command joins by MPI_Allgather (tc_job_join_mpi), so Open MPI's
# own transports must work across the hosts too; pmix: from PMIx alone.
set -uo pipefail

# mpirun starts every rank through this script again (--rank), which puts it
# on its host.
if [ "${1:-}" = "--rank" ]; then
  DIR=$2
  shift 2
  RANK=${OMPI_COMM_WORLD_RANK:-$PMIX_RANK}
  NS=$(cat "$DIR/ns.$((RANK % 2))")
  # mpirun's PMIx server listens on its own loopback only, which no
  # namespace shares: the relay listens on the same port on each host's
  # loopback (so the URI mpirun gave the rank holds), once a rank has said
  # which port that is.
  URI=${PMIX_SERVER_URI41:-${PMIX_SERVER_URI4:-${PMIX_SERVER_URI3:-${PMIX_SERVER_URI2:-}}}}
  PORT=${URI##*:}
  [ -n "$PORT" ] || { echo "rank $RANK: mpirun gave no PMIx server URI" >&2; exit 1; }
  echo "$PORT" > "$DIR/.port.$RANK" && mv "$DIR/.port.$RANK" "$DIR/port.$RANK"
  for _ in $(seq 300); do
    [ -e "$DIR/relay.ready" ] && break
    sleep 0.1
  done
  [ -e "$DIR/relay.ready" ] || { echo "rank $RANK: the PMIx relay never started" >&2; exit 1; }
  # UCX takes two processes with the same boot id for one machine and gives
  # them shared memory whatever their network namespace (its shared-memory
  # transports' device address is the system id, from the boot id): each
  # host has a boot id of its own, bound over the kernel's in the mount
  # namespace `ip netns exec` makes for this rank alone.
  exec ip netns exec "$NS" sh -c \
    'mount --bind "$1" /proc/sys/kernel/random/boot_id && shift && exec "$@"' \
    sh "$DIR/boot_id.$NS" "$@"
fi

NP=$1 JOIN=$2
shift 2
A=tc_ha_$$ B=tc_hb_$$
NET=10.214.$(( RANDOM % 250 ))
RELAY=
cleanup() {
  [ -n "$RELAY" ] && kill "$RELAY" 2>/dev/null && wait "$RELAY" 2>/dev/null
  # mpirun ended by the timeout leaves its ranks running: whatever is still
  # on these hosts is this test's.
  for ns in $A $B; do
    PIDS=$(ip netns pids $ns 2>/dev/null)
    [ -n "$PIDS" ] && kill -9 $PIDS 2>/dev/null
  done
  ip netns del $A 2>/dev/null
  ip netns del $B 2>/dev/null
  rm -rf "$DIR"
}
DIR=$(mktemp -d)
trap cleanup EXIT
if ! command -v python3 > /dev/null; then
  echo "skipped: python3 is needed to relay PMIx into the namespaces"
  exit 77
fi
if ! ip netns add $A 2>/dev/null || ! ip netns add $B 2>/dev/null; then
  echo "skipped: cannot create network namespaces here (needs root and iproute2)"
  exit 77
fi
cat /proc/sys/kernel/random/uuid > "$DIR/boot_id.$A"
cat /proc/sys/kernel/random/uuid > "$DIR/boot_id.$B"
if ! ip netns exec $A sh -c 'mount --bind "$1" /proc/sys/kernel/random/boot_id' \
       sh "$DIR/boot_id.$A" 2>/dev/null; then
  echo "skipped: cannot give a namespace a boot id of its own (UCX would see one host)"
  exit 77
fi
set -e
ip link add tcha$$ netns $A type veth peer name tchb$$ netns $B
ip -n $A addr add $NET.1/24 dev tcha$$
ip -n $B addr add $NET.2/24 dev tchb$$
for ns in $A $B; do ip -n $ns link set lo up; done
ip -n $A link set tcha$$ up
ip -n $B link set tchb$$ up
# UCX lists the devices that are up when it starts: wait for the carrier.
for _ in $(seq 50); do
  ip -n $A link show tcha$$ | grep -q LOWER_UP && ip -n $B link show tchb$$ | grep -q LOWER_UP && break
  sleep 0.1
done
set +e
echo $A > "$DIR/ns.0"
echo $B > "$DIR/ns.1"

# The PMIx relay: Open MPI 4.1 has its PMIx server (4.x: TCP, no unix
# socket) take local connections only, with no setting to change that. One
# process listens on each host's loopback (made there, by setns) and makes
# the connections to the server from its own.
python3 - "$DIR" $A $B > "$DIR/relay.log" 2>&1 <<'EOF' &
import ctypes, glob, os, socket, sys, threading, time
d, hosts = sys.argv[1], sys.argv[2:]
while not glob.glob(d + "/port.*"):
    time.sleep(0.05)
port = int(open(glob.glob(d + "/port.*")[0]).read())
libc = ctypes.CDLL(None, use_errno=True)
CLONE_NEWNET = 0x40000000
home = os.open("/proc/self/ns/net", os.O_RDONLY)
listeners = []
for h in hosts:
    if libc.setns(os.open("/run/netns/" + h, os.O_RDONLY), CLONE_NEWNET):
        sys.exit("setns " + h + ": " + os.strerror(ctypes.get_errno()))
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", port))
    s.listen(64)
    listeners.append(s)
# Back home before any thread starts: threads inherit the namespace.
if libc.setns(home, CLONE_NEWNET):
    sys.exit("setns back: " + os.strerror(ctypes.get_errno()))
def pump(src, dst):
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            dst.sendall(data)
    except OSError:
        pass
    for s in (src, dst):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
def serve(listener):
    while True:
        rank, _ = listener.accept()
        server = socket.create_connection(("127.0.0.1", port))
        threading.Thread(target=pump, args=(rank, server), daemon=True).start()
        threading.Thread(target=pump, args=(server, rank), daemon=True).start()
for l in listeners:
    threading.Thread(target=serve, args=(l,), daemon=True).start()
open(d + "/relay.ready", "w").close()
threading.Event().wait()
EOF
RELAY=$!

# Beyond loopback a rank needs the job's key (docs/security.md); with it,
# tc_job_join listens on every interface of its host (loopback and the
# veth), and its address blob names the veth's address first, which ranks
# of both hosts reach. Transports pinned: shared memory and TCP only, so
# that no RDMA device (which namespaces do not separate) carries frames
# between the hosts; the RMA context takes every one but TCP, which reaches
# only ranks of the same host.
export UCX_TLS=self,sm,tcp
export TC_KEY=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
# Each connection says how its frames travel when it is made by RMA (never
# when by message): the check below.
export TC_LOG_LEVEL=info
MCA=()
# Open MPI's own traffic: mpirun started every rank on this one node, so ob1
# carries it by vader's shared memory, which crosses network namespaces
# (the same files, the same PIDs); UCX's pml would see two hosts.
[ "$JOIN" = mpi ] && MCA=(--mca pml ob1 --mca btl self,vader)
# Below CTest's timeout, so that the namespaces are always removed.
timeout 270 mpirun --allow-run-as-root --oversubscribe --bind-to none --tag-output "${MCA[@]}" \
  -np "$NP" "$0" --rank "$DIR" "$@" > "$DIR/out" 2>&1
STATUS=$?
cat "$DIR/out"
[ -s "$DIR/relay.log" ] && sed 's/^/PMIx relay: /' "$DIR/relay.log"
PASSED=$(grep -c "PASSED" "$DIR/out")
echo "mpirun exited with $STATUS; $PASSED of $NP ranks passed"

# Shared memory never crosses the hosts, and connects every pair within
# one: each of a host's k ranks holds one connection with every rank of it,
# itself included (tc-job checks one per pair), each logged at both ends,
# k(k+1) lines in all. The other connections went by message, over TCP,
# the only transport left between the hosts.
TRANSPORTS=0
for h in 0 1; do
  MINE=$NET.$((h + 1)) THEIRS=$NET.$((2 - h)) K=$(( (NP + 1 - h) / 2 )) SHM=0
  for ((r = h; r < NP; r += 2)); do
    LINES=$(grep "^\[1,$r\]<stderr>:.*: frames by " "$DIR/out")
    N=$(grep -cF -e "($MINE:" -e " $MINE:" -e "(127.0.0.1:" -e " 127.0.0.1:" <<< "$LINES")
    if grep -qF -e "($THEIRS:" -e " $THEIRS:" <<< "$LINES"; then
      echo "rank $r: frames to the other host by shared memory"
      TRANSPORTS=1
    fi
    SHM=$((SHM + N))
  done
  echo "host $([ $h -eq 0 ] && echo A || echo B) ($MINE): $K ranks, $SHM connection ends by shared memory (expected $((K * (K + 1)))), the rest by TCP"
  [ "$SHM" -eq $((K * (K + 1))) ] || TRANSPORTS=1
done
[ "$STATUS" -eq 0 ] && [ "$PASSED" -eq "$NP" ] && [ "$TRANSPORTS" -eq 0 ]
