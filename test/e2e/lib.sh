# Shared by the e2e scripts. Ports are drawn from 20000-30999, below the
# kernel's ephemeral range (32768 up), where UCX's own TCP interfaces and
# every outgoing connection take theirs.

# Waits (up to 10 s) until the receiver whose output goes to $1 listens.
wait_for_listening() {
  for _ in $(seq 100); do
    grep -q listening "$1" 2>/dev/null && return 0
    sleep 0.1
  done
  return 1
}

# Two "hosts": network namespaces $1 and $2 (made here; the caller deletes
# them), joined by a veth pair with addresses $3.1 (in $1) and $3.2 (in
# $2), loopback up in both. Exits 77 (skipped) where namespaces cannot be
# made (not root, no iproute2).
make_two_hosts() {
  local a=$1 b=$2 net=$3 va=tcva$$ vb=tcvb$$
  if ! ip netns add "$a" 2>/dev/null || ! ip netns add "$b" 2>/dev/null; then
    echo "skipped: cannot create network namespaces here (needs root and iproute2)"
    exit 77
  fi
  ip link add $va netns "$a" type veth peer name $vb netns "$b" &&
    ip -n "$a" addr add "$net.1/24" dev $va &&
    ip -n "$b" addr add "$net.2/24" dev $vb &&
    ip -n "$a" link set lo up && ip -n "$b" link set lo up &&
    ip -n "$a" link set $va up && ip -n "$b" link set $vb up || return 1
  # UCX lists the devices that are up when it starts: wait for the carrier.
  for _ in $(seq 50); do
    ip -n "$a" link show $va | grep -q LOWER_UP && ip -n "$b" link show $vb | grep -q LOWER_UP &&
      return 0
    sleep 0.1
  done
}
