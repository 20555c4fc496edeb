#!/usr/bin/env bash
# One command for the whole Two-Chains performance comparison:
#   installs gnuplot if missing, builds tc-perf, runs a tc-perf server and
#   client on 127.0.0.1 for every configuration below, writes one CSV per
#   run and PNG plots (as the paper's figures 7-14), and prints the
#   markdown tables (bench/perf-tables.py).
#
#   bench/run-perf.sh [--quick] [--out DIR] [--build-dir DIR]
#   bench/run-perf.sh --policy [--runs N] [--quick] [--out DIR] [--build-dir DIR]
#     BUILD_DIR  build tree (default <repo>/build; configured and built with
#                scripts/build.sh if it has no build.ninja yet)
#     OUT        output folder (default <build>/perf)
#     PORT_BASE  first port to try (default 13370; each run takes a free pair)
#
# Runs (server and client are two processes; UCX_TLS alike for both):
#   shm            UCX's default (shared memory here): every variant
#   tcp            UCX_TLS=tcp: every variant
#   mailbox-no-cache
#                  the server in those mailbox modes: tc-local, tc-injected-full
#   first-message  the server's code cache too small for any image (64 B):
#                  every tc-injected-full frame is hashed, checked and copied
#                  to W^X memory as a first message is; every tc-injected
#                  frame misses, is asked for and resent with its code
#   ordered        both sides with TC_CONTEXT_ORDERED_PLACEMENT (no checksum
#                  on arrival): tc-local against ucx-put, latency
#   frame-cost     bench/frame-cost: the runtime's CPU cost per frame, one
#                  process and one thread (frame-cost.txt)
#   wait-poll, wait-pause, wait-auto
#                  the server's wait: the wait test (executor thread) and
#                  latency of tc-local and ucx-put, smallest sizes
# The default run takes about 4 minutes on a 2-vCPU VM; --quick about 15 s.
#
# --policy runs only the code-trust comparison (docs/performance.md, "Code
# trust and the message rate"): N runs (default 3) of the rate test,
# server_side_sum at 12 B .. 32 KiB, ucx-am, ucx-put, tc-local (the server
# under the package policy: payloads copied out of the ring) and
# tc-local-job (a second pair of contexts under the job policy: payloads
# read in the ring) taking turns in 10 rounds; then one table of the
# medians over the runs (bench/policy-table.py) in OUT/policy.md.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$ROOT/build}
OUT=${OUT:-}
QUICK=()
POLICY=0
RUNS=3
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) QUICK=(--quick) ;;
    --policy) POLICY=1 ;;
    --runs) RUNS=$2; shift ;;
    --out) OUT=$2; shift ;;
    --build-dir) BUILD_DIR=$2; shift ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "run-perf: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done
BUILD_DIR=$(mkdir -p "$BUILD_DIR" && cd "$BUILD_DIR" && pwd)
OUT=${OUT:-$BUILD_DIR/perf}
# tc-perf servers listen on every address: they need the job's key, which
# both sides of every run share (docs/security.md).
export TC_KEY=${TC_KEY:-$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')}
mkdir -p "$OUT"

install_gnuplot() {
  command -v gnuplot >/dev/null && return 0
  local sudo=()
  [ "$(id -u)" -ne 0 ] && sudo=(sudo)
  echo "run-perf: installing gnuplot-nox"
  "${sudo[@]}" apt-get install -y gnuplot-nox >/dev/null 2>&1 ||
    { "${sudo[@]}" apt-get update >/dev/null && "${sudo[@]}" apt-get install -y gnuplot-nox >/dev/null; }
}

build() {
  if [ -f "$BUILD_DIR/build.ninja" ]; then
    cmake --build "$BUILD_DIR" --target tc-perf frame-cost stdlib_package
  else
    BUILD_DIR="$BUILD_DIR" "$ROOT/scripts/build.sh"
  fi
}

# take_port: sets PORT to a port P such that neither P (Two-Chains) nor
# P + 1 (bootstrap) is in any TCP socket of this host, starting from
# PORT_BASE; each run gets its own, as another program (or a run a moment
# ago) may hold one.
NEXT_PORT=${PORT_BASE:-13370}
take_port() {
  local used=" " hex
  while read -r hex; do
    used+="$((16#$hex)) "
  done < <(awk 'FNR > 1 { split($2, a, ":"); print a[2] }' /proc/net/tcp /proc/net/tcp6 2>/dev/null)
  while [[ $used == *" $NEXT_PORT "* || $used == *" $((NEXT_PORT + 1)) "* ]]; do
    NEXT_PORT=$((NEXT_PORT + 2))
  done
  PORT=$NEXT_PORT
  NEXT_PORT=$((NEXT_PORT + 2))
}

# run_pair NAME "SERVER ARGS" "CLIENT ARGS" [VAR=VALUE ...]: one server and
# one client on a port of their own, with that environment (UCX_TLS) for
# both and nothing inherited. Logs and the CSV go to $OUT/NAME.*. Returns
# the client's status, or the server's if only that failed.
run_pair() {
  local name=$1 server_args=$2 client_args=$3
  shift 3
  local tc_perf="$BUILD_DIR/bench/tc-perf"
  take_port
  # shellcheck disable=SC2086  # the argument strings are word lists
  env -u UCX_TLS "$@" "$tc_perf" --port "$PORT" $server_args >"$OUT/$name.server.log" 2>&1 &
  local server=$! client_status=0 server_status=0
  # shellcheck disable=SC2086
  env -u UCX_TLS "$@" "$tc_perf" --port "$PORT" "${QUICK[@]}" $client_args \
      --csv "$OUT/$name.csv" 127.0.0.1 >"$OUT/$name.client.log" 2>&1 || client_status=$?
  wait "$server" || server_status=$?
  [ "$client_status" -ne 0 ] && return "$client_status"
  return "$server_status"
}

# pair NAME ...: run_pair, once more on another port if the server could
# not listen (a port taken between our look and its bind); a failure is
# reported and remembered, and the other runs go on.
FAILED=()
pair() {
  local name=$1
  echo "run-perf: $name"
  if ! run_pair "$@"; then
    if grep -q "cannot listen\|tc_listen" "$OUT/$name.server.log"; then
      echo "run-perf: $name: port $PORT was taken; again on another" >&2
      run_pair "$@" && { sed -n '/^ratios/,/^$/p' "$OUT/$name.client.log"; return 0; }
    fi
    echo "run-perf: $name FAILED:" >&2
    tail -n 5 "$OUT/$name.client.log" "$OUT/$name.server.log" >&2
    FAILED+=("$name")
    return 0
  fi
  sed -n '/^ratios/,/^$/p' "$OUT/$name.client.log"
}

# series CSV TEST WORKLOAD VARIANT COLUMN: "size value" lines of one curve.
series() {
  awk -F, -v t="$2" -v w="$3" -v v="$4" -v col="$5" '
    NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
    $c["test"] == t && $c["workload"] == w && $c["variant"] == v && $c[col] != "" {
      print $c["size_bytes"], $c[col] }' "$1"
}

# plot_sweep CSV TEST COLUMN YLABEL LOGY TITLE PNG: one curve per variant
# against the payload size, for each workload.
VARIANTS="tc-local tc-injected tc-injected-full ucx-put ucx-am"
plot_sweep() {
  local csv=$1 test=$2 column=$3 ylabel=$4 logy=$5 title=$6 png=$7
  [ -f "$csv" ] || return 0
  local data="$OUT/plot-data"
  mkdir -p "$data"
  local workload
  for workload in indirect_put server_side_sum; do
    local plots=() variant
    for variant in $VARIANTS; do
      local dat
      dat="$data/$(basename "$csv" .csv)-$test-$workload-$variant-$column.dat"
      series "$csv" "$test" "$workload" "$variant" "$column" >"$dat"
      [ -s "$dat" ] && plots+=("'$dat' using 1:2 with linespoints title '$variant'")
    done
    [ ${#plots[@]} -gt 0 ] || continue
    local joined
    joined=$(IFS=,; echo "${plots[*]}")
    gnuplot <<EOF
set terminal pngcairo size 900,560 font ",11" noenhanced
set output "$OUT/$png-$workload.png"
set title "$title: $workload"
set xlabel "payload (bytes)"
set ylabel "$ylabel"
set logscale x 2
$( [ "$logy" = log ] && echo "set logscale y" )
set grid
set key top left
plot $joined
EOF
  done
}

# ratio_series CSV TEST WORKLOAD VARIANT_A VARIANT_B COLUMN: "size A/B"
# lines, both measured in the same run.
ratio_series() {
  awk -F, -v t="$2" -v w="$3" -v a="$4" -v b="$5" -v col="$6" '
    NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
    $c["test"] == t && $c["workload"] == w && $c[col] != "" {
      if ($c["variant"] == a) x[$c["size_bytes"]] = $c[col]
      if ($c["variant"] == b) y[$c["size_bytes"]] = $c[col] }
    END { for (s in x) if (s in y && y[s] > 0) print s, x[s] / y[s] }' "$1" | sort -n
}

# The mailbox modes side by side (separate runs, so absolute times drift
# between them): p50 of Local and Injected-full, and Injected-full / Local
# within each run.
plot_mailboxes() {
  local data="$OUT/plot-data" workload
  mkdir -p "$data"
  for workload in indirect_put server_side_sum; do
    local plots=() ratios=() run label variant dat csv
    for run in shm:code-cache mailbox-no-cache:no-cache; do
      label=${run#*:}
      csv="$OUT/${run%%:*}.csv"
      [ -f "$csv" ] || continue
      for variant in tc-local tc-injected-full; do
        dat="$data/mailbox-$label-$workload-$variant.dat"
        series "$csv" latency "$workload" "$variant" p50_ns >"$dat"
        [ -s "$dat" ] && plots+=("'$dat' using 1:2 with linespoints title '$variant, $label'")
      done
      dat="$data/mailbox-$label-$workload-full-over-local.dat"
      ratio_series "$csv" latency "$workload" tc-injected-full tc-local p50_ns >"$dat"
      [ -s "$dat" ] && ratios+=("'$dat' using 1:2 with linespoints title '$label'")
    done
    [ ${#plots[@]} -gt 0 ] || continue
    gnuplot <<EOF
set terminal pngcairo size 1300,520 font ",11" noenhanced
set output "$OUT/mailbox-latency-$workload.png"
set multiplot layout 1,2 title "Mailbox modes, shared memory: $workload"
set xlabel "payload (bytes)"
set logscale x 2
set grid
set key top left
set title "p50 half round trip (ns; separate runs)"
set logscale y
plot $(IFS=,; echo "${plots[*]}")
set title "tc-injected-full / tc-local, p50, same run"
unset logscale y
set yrange [0:*]
plot $(IFS=,; echo "${ratios[*]}"), 1 notitle dashtype 2 lc "black"
unset multiplot
EOF
  done
}

# What waiting costs the server: CPU per message and utilisation while the
# executor waits (wait test), and the own loop's polls and latency.
plot_wait() {
  local dat="$OUT/plot-data/wait-cost.dat" mode
  mkdir -p "$OUT/plot-data"
  echo "# mode executor_cpu_ns_per_msg executor_cpu_util loop_p50_ns loop_polls_per_msg" >"$dat"
  for mode in poll pause auto; do
    local csv="$OUT/wait-$mode.csv"
    [ -f "$csv" ] || continue
    awk -F, -v m="$mode" '
      NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
      $c["test"] == "wait" && $c["variant"] == "tc-local" && !cpu { cpu = $c["server_cpu_ns_per_msg"]; util = $c["server_cpu_util"] }
      $c["test"] == "latency" && $c["variant"] == "tc-local" && !p50 { p50 = $c["p50_ns"]; polls = $c["server_polls_per_msg"] }
      END { print m, cpu + 0, util + 0, p50 + 0, polls + 0 }' "$csv" >>"$dat"
  done
  [ "$(wc -l <"$dat")" -gt 1 ] || return 0
  gnuplot <<EOF
set terminal pngcairo size 1100,460 font ",11" noenhanced
set output "$OUT/wait-cost.png"
set multiplot layout 1,3 title "What the server's wait costs (tc-local, shared memory; cycles: no PMU in this VM)"
set style data histograms
set style fill solid 0.6 border -1
set boxwidth 0.7
set grid ytics
set yrange [0:*]
set title "executor CPU per message (wait test)"
set ylabel "ns of CPU / message"
plot "$dat" using 2:xtic(1) notitle
set title "executor CPU / wall"
set ylabel "utilisation"
set yrange [0:1.1]
plot "$dat" using 3:xtic(1) notitle
set title "own loop: p50 latency and empty polls"
set yrange [0:*]
set ylabel "ns, polls x 100"
plot "$dat" using 4:xtic(1) title "p50 ns", "" using (\$5*100) title "polls/msg x 100"
unset multiplot
EOF
}

[ "$POLICY" = 1 ] || install_gnuplot
build

# Over shared memory 20,000 messages stream in a few milliseconds, about
# one scheduler tick: stream ten times as many there (TCP is 50x slower).
SHM_RATE=""
[ ${#QUICK[@]} -eq 0 ] && SHM_RATE="--rate-iters 200000"

if [ "$POLICY" = 1 ]; then
  rm -f "$OUT"/policy-*.csv
  POLICY_CLIENT="--tests rate --workloads server_side_sum --rounds 10 $SHM_RATE
    --variants ucx-am,ucx-put,tc-local,tc-local-job
    --sizes 12,64,256,1024,2048,4096,8192,16384,32768"
  for run in $(seq 1 "$RUNS"); do
    pair "policy-$run" "" "$POLICY_CLIENT"
  done
  python3 "$ROOT/bench/policy-table.py" "$OUT"/policy-*.csv | tee "$OUT/policy.md"
  if [ ${#FAILED[@]} -gt 0 ]; then
    echo "run-perf: failed runs: ${FAILED[*]}" >&2
    exit 1
  fi
  exit 0
fi
# The goals' run: twice the ping-pongs in 20 rounds of 1,000, so that each
# same-round ratio covers about a millisecond and a phase of the VM (this
# one flips between about 115 and 310 ns a hop) rarely splits a round.
SHM_GOALS=""
[ ${#QUICK[@]} -eq 0 ] && SHM_GOALS="--iters 20000 --rounds 20"
pair shm "" "$SHM_RATE $SHM_GOALS"
pair tcp "" "" UCX_TLS=tcp
pair mailbox-no-cache "--mailbox no-cache" "--variants tc-local,tc-injected-full $SHM_RATE"
pair first-message "--code-cache-size 64" \
  "--tests latency --variants tc-local,tc-injected,tc-injected-full --sizes-max 1024"
pair ordered "--ordered" "--ordered --tests latency --variants tc-local,ucx-put"
echo "run-perf: frame-cost"
"$BUILD_DIR/bench/frame-cost" | tee "$OUT/frame-cost.txt"
WAIT_CLIENT="--tests wait,latency --variants tc-local,ucx-put --workloads server_side_sum --sizes-max 64"
pair wait-poll "--wait poll" "$WAIT_CLIENT"
pair wait-pause "--wait pause" "$WAIT_CLIENT"
pair wait-auto "--wait auto" "$WAIT_CLIENT"

for run in shm tcp; do
  plot_sweep "$OUT/$run.csv" latency p50_ns "p50 half round trip (ns)" log \
    "Latency, $run" "latency-$run"
  plot_sweep "$OUT/$run.csv" rate rate_msgs_per_s "messages / s" log \
    "Message rate, $run" "rate-$run"
  plot_sweep "$OUT/$run.csv" latency spread "(p99.9 - p50) / p50" lin \
    "Tail spread, $run" "spread-$run"
done
plot_mailboxes
plot_wait

python3 "$ROOT/bench/perf-tables.py" "$OUT"/*.csv >"$OUT/tables.md"
echo "run-perf: CSVs, plots (PNG) and tables.md in $OUT"
for png in "$OUT"/*.png; do
  [ -f "$png" ] && echo "  $png"
done
if [ ${#FAILED[@]} -gt 0 ]; then
  echo "run-perf: failed runs: ${FAILED[*]}" >&2
  exit 1
fi
