#!/usr/bin/env python3
"""One table of message rates under the two code-trust policies, from
tc-perf CSVs of bench/run-policy-perf.sh (one CSV per run; each run has
ucx-am, ucx-put, tc-local and tc-local-job at every size, in rounds).

    python3 bench/policy-table.py build/perf-policy/policy-*.csv

Per size: each variant's rate is the median over the runs of each run's
median round; a ratio is the median over the runs of each run's median
same-round ratio (the variants of a size take turns round by round, so a
slow phase of the machine that hits one round cannot decide it). Only the
Python standard library.
"""
import csv
import statistics
import sys
from collections import defaultdict

WORKLOAD = "server_side_sum"
COLUMNS = ["ucx-am", "tc-local", "tc-local-job", "ucx-put"]


def rounds(row):
    return [float(x) for x in row["rounds"].split(";") if x]


def same_round_ratio(a, b):
    pairs = [x / y for x, y in zip(rounds(a), rounds(b)) if y > 0]
    return statistics.median(pairs) if pairs else None


def main(paths):
    # rates[size][variant] and ratios[size][name]: one value per run.
    rates = defaultdict(lambda: defaultdict(list))
    ratios = defaultdict(lambda: defaultdict(list))
    for path in paths:
        run = defaultdict(dict)
        with open(path, newline="") as f:
            for row in csv.DictReader(f):
                if row["test"] == "rate" and row["workload"] == WORKLOAD:
                    run[int(row["size_bytes"])][row["variant"]] = row
        for size, by in run.items():
            for v in COLUMNS:
                if v in by:
                    rates[size][v].append(float(by[v]["rate_msgs_per_s"]))
            for name, a, b in (("package/am", "tc-local", "ucx-am"),
                               ("job/am", "tc-local-job", "ucx-am"),
                               ("job/package", "tc-local-job", "tc-local")):
                if a in by and b in by:
                    r = same_round_ratio(by[a], by[b])
                    if r is not None:
                        ratios[size][name].append(r)

    def rate(size, v):
        vals = rates[size][v]
        return f"{statistics.median(vals):,.0f}" if vals else "-"

    def ratio(size, name):
        vals = ratios[size][name]
        return f"{statistics.median(vals):.2f}" if vals else "-"

    print(f"{WORKLOAD}, message rate (msg/s), median of {len(paths)} runs\n")
    print("| payload B | ucx-am msg/s | tc-local package msg/s | tc-local job msg/s "
          "| package/am | job/am | job/package | ucx-put msg/s |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    for size in sorted(rates):
        print(f"| {size} | {rate(size, 'ucx-am')} | {rate(size, 'tc-local')} "
              f"| {rate(size, 'tc-local-job')} | {ratio(size, 'package/am')} "
              f"| {ratio(size, 'job/am')} | {ratio(size, 'job/package')} "
              f"| {rate(size, 'ucx-put')} |")
    spread = []
    for size in sorted(ratios):
        for name in ("package/am", "job/am"):
            vals = ratios[size][name]
            if len(vals) > 1:
                spread.append(f"{size} B {name} {min(vals):.2f}-{max(vals):.2f}")
    if spread:
        print("\nper-run ratios (min-max): " + "; ".join(spread))


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
