#!/usr/bin/env python3
"""Turns tc-perf CSVs into markdown tables for docs/performance.md.

    python3 bench/perf-tables.py build/perf/*.csv > tables.md

Each CSV is one run (one transport, one server mailbox mode, one server
wait); its file name names it. Per run and workload: p50 latency of every
variant with the goals' ratios, message rates with theirs, and the tail
(p99.9, spread). Runs with wait-test rows get a table of what waiting cost
the server. Only the Python standard library.
"""
import csv
import os
import sys
from collections import defaultdict

VARIANTS = ["tc-local", "tc-injected", "tc-injected-full", "ucx-put", "ucx-am"]
WORKLOADS = ["indirect_put", "server_side_sum"]


def number(text):
    try:
        return float(text)
    except (TypeError, ValueError):
        return None


def ratio(a, b):
    return f"{a / b:.2f}" if a is not None and b else "-"


def fmt(value, digits=0):
    return "-" if value is None else f"{value:,.{digits}f}"


def table(header, rows):
    """A markdown table; columns with nothing measured in any row are left out
    (a run without the UCX baselines has no ratios against them)."""
    keep = [i for i in range(len(header)) if i == 0 or any(r[i] != "-" for r in rows)]
    header = [header[i] for i in keep]
    rows = [[r[i] for i in keep] for r in rows]
    lines = ["| " + " | ".join(header) + " |",
             "|" + "|".join("---:" if i else "---" for i in range(len(header))) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def load(path):
    """{(test, workload): {size: {variant: row}}} and the run's description."""
    cases = defaultdict(lambda: defaultdict(dict))
    about = {}
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            cases[(row["test"], row["workload"])][int(row["size_bytes"])][row["variant"]] = row
            about = {k: row[k] for k in ("transport", "mailbox", "wait")}
    return cases, about


def present(by_size):
    return [v for v in VARIANTS if any(v in r for r in by_size.values())]


def latency_table(by_size):
    variants = present(by_size)
    header = ["payload B", "ints"] + [f"{v} p50 ns" for v in variants] + [
        "local/put", "local/am", "inj/local", "full/local"]
    rows = []
    for size in sorted(by_size):
        r = by_size[size]
        p50 = {v: number(r[v]["p50_ns"]) for v in variants if v in r}
        ints = next(iter(r.values()))["payload_ints"]
        rows.append([str(size), ints] + [fmt(p50.get(v), 1) for v in variants] + [
            ratio(p50.get("tc-local"), p50.get("ucx-put")),
            ratio(p50.get("tc-local"), p50.get("ucx-am")),
            ratio(p50.get("tc-injected"), p50.get("tc-local")),
            ratio(p50.get("tc-injected-full"), p50.get("tc-local"))])
    return table(header, rows)


def tail_table(by_size):
    variants = present(by_size)
    header = ["payload B"] + [f"{v} p99.9 ns (spread)" for v in variants]
    rows = []
    for size in sorted(by_size):
        r = by_size[size]
        rows.append([str(size)] + [
            f"{fmt(number(r[v]['p999_ns']), 1)} ({fmt(number(r[v]['spread']), 2)})"
            if v in r else "-" for v in variants])
    return table(header, rows)


def rate_table(by_size):
    variants = present(by_size)
    header = ["payload B"] + [f"{v} msg/s" for v in variants] + ["local/am", "inj/am"]
    rows = []
    for size in sorted(by_size):
        r = by_size[size]
        rate = {v: number(r[v]["rate_msgs_per_s"]) for v in variants if v in r}
        rows.append([str(size)] + [fmt(rate.get(v)) for v in variants] + [
            ratio(rate.get("tc-local"), rate.get("ucx-am")),
            ratio(rate.get("tc-injected"), rate.get("ucx-am"))])
    return table(header, rows)


def wait_rows(name, cases):
    """Rows for the wait table: the executor (wait test) and the own loop."""
    rows = []
    for (test, workload), by_size in sorted(cases.items()):
        if test not in ("wait", "latency"):
            continue
        for size in sorted(by_size)[:1]:
            for variant, r in sorted(by_size[size].items()):
                who = "executor thread" if test == "wait" else "own poll loop"
                rows.append([name, r["wait"], who, variant, workload, str(size),
                             fmt(number(r["p50_ns"]), 1),
                             fmt(number(r["server_cpu_ns_per_msg"]), 1),
                             fmt(number(r["server_wall_ns_per_msg"]), 1),
                             fmt(number(r["server_cpu_util"]), 3),
                             fmt(number(r["server_polls_per_msg"]), 2),
                             fmt(number(r["server_cycles_per_msg"]), 0)
                             if r["server_cycles_per_msg"] else "unavailable"])
    return rows


# The hot path's goals (issue: Local as fast as a raw put), every size of
# both workloads, same run: (what, test, column, variant, against, bound,
# "max" if the ratio must stay at most bound else "min").
GOALS = [
    ("Local latency / ucx-put (p50)", "latency", "p50_ns", "tc-local", "ucx-put", 1.2, "max"),
    ("Local latency / ucx-am (p50)", "latency", "p50_ns", "tc-local", "ucx-am", 1.0, "max"),
    ("Local rate / ucx-am", "rate", "rate_msgs_per_s", "tc-local", "ucx-am", 1.0, "min"),
    ("cached Injected rate / ucx-am", "rate", "rate_msgs_per_s", "tc-injected", "ucx-am", 1.0,
     "min"),
    ("cached Injected latency / Local (p50)", "latency", "p50_ns", "tc-injected", "tc-local",
     1.1, "max"),
    ("Local p99.9 / ucx-put p99.9", "latency", "p999_ns", "tc-local", "ucx-put", 1.5, "max"),
]


def rounds(row):
    """A row's per-round p50s or rates (tc-perf's `rounds` column)."""
    values = [number(v) for v in (row or {}).get("rounds", "").split(";") if v]
    return [v for v in values if v is not None]


def same_moment_ratio(a_row, b_row, column):
    """The median over rounds of round r's a/b (the variants of one size take
    turns round by round): one slow round of one variant cannot move it.
    Without per-round values (older CSVs, p99.9): the ratio of the whole."""
    a, b = rounds(a_row), rounds(b_row)
    if column != "p999_ns" and a and len(a) == len(b) and all(b):
        ratios = sorted(x / y for x, y in zip(a, b))
        n = len(ratios)
        return ratios[n // 2] if n % 2 else (ratios[n // 2 - 1] + ratios[n // 2]) / 2
    x, y = number((a_row or {}).get(column)), number((b_row or {}).get(column))
    return x / y if x is not None and y else None


def goals_table(cases):
    """The worst ratio of each goal over every size of both workloads."""
    rows = []
    for what, test, column, variant, against, bound, sense in GOALS:
        worst = None
        for workload in WORKLOADS:
            for size, by_variant in cases.get((test, workload), {}).items():
                r = same_moment_ratio(by_variant.get(variant), by_variant.get(against), column)
                if r is None:
                    continue
                if worst is None or (r > worst[0] if sense == "max" else r < worst[0]):
                    worst = (r, workload, size)
        if worst is None:
            continue
        met = worst[0] <= bound if sense == "max" else worst[0] >= bound
        rows.append([what, ("<= " if sense == "max" else ">= ") + f"{bound:.2f}",
                     f"{worst[0]:.2f}", f"{worst[1]} {worst[2]} B", "met" if met else "not met"])
    return table(["goal", "bound", "worst ratio", "at", ""], rows) if rows else ""


def main(paths):
    if not paths:
        sys.exit("usage: perf-tables.py RUN.csv ...")
    # The main runs first, then the rest by name.
    first = {"shm": 0, "tcp": 1}
    paths = sorted(paths, key=lambda p: (first.get(os.path.splitext(os.path.basename(p))[0], 2), p))
    waits = []
    for path in paths:
        name = os.path.splitext(os.path.basename(path))[0]
        cases, about = load(path)
        if any(test == "wait" for test, _ in cases):
            waits += wait_rows(name, cases)
            continue  # wait runs are summarised together below
        print(f"### {name}: UCX_TLS={about.get('transport')}, mailbox "
              f"{about.get('mailbox')}, server wait {about.get('wait')}\n")
        goals = goals_table(cases) if name == "shm" else ""
        if goals:
            print("**The hot path's goals: worst ratio over every size of both workloads** "
                  "(each ratio the median over rounds of the two variants' same-round "
                  "p50s or rates; p99.9 of all samples)\n")
            print(goals + "\n")
        for workload in WORKLOADS:
            for test, title, make in (("latency", "half round trip", latency_table),
                                      ("latency", "tail", tail_table),
                                      ("rate", "message rate", rate_table)):
                by_size = cases.get((test, workload))
                if by_size:
                    print(f"**{workload}, {title}**\n")
                    print(make(by_size) + "\n")
    if waits:
        print("### What waiting costs the server\n")
        print(table(["run", "wait", "who waits", "variant", "workload", "payload B",
                     "p50 ns", "CPU ns/msg", "wall ns/msg", "CPU/wall", "empty polls/msg",
                     "cycles/msg"], waits) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
