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
