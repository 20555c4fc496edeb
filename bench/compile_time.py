#!/usr/bin/env python3
"""Compile time of jams with the Two-Chains plugin against plain clang -O2.

Compiles every jam in examples/jams and test/lit/codegen (the ones that
compile cleanly) both ways, for x86_64 and aarch64, alternating the two
variants so that machine noise hits both alike, and prints the ratio of the
summed medians. This is a benchmark, not a test: it asserts nothing.

  bench/compile_time.py [--build build] [--repeat 15] [--json out.json]
"""
import argparse
import glob
import json
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CLANG = "/usr/lib/llvm-19/bin/clang"


def jams():
    files = sorted(glob.glob(os.path.join(ROOT, "examples/jams/jam_*.amc")))
    files += sorted(glob.glob(os.path.join(ROOT, "test/lit/codegen/jam_*.amc")))
    return files


def command(src, isa, plugin, out):
    cmd = [CLANG, "--target=%s-linux-gnu" % isa, "-x", "c", "-O2",
           "-I", os.path.join(ROOT, "include"), "-c", src, "-o", out, "-w"]
    if plugin:
        cmd.insert(1, "-fplugin=" + plugin)
    return cmd


def run_once(cmd):
    start = time.perf_counter()
    result = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start, result.returncode


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--json", help="also write the figures to this file")
    args = ap.parse_args()

    plugin = os.path.join(args.build, "lib/twochains/TwoChainsJam.so")
    if not os.path.exists(plugin):
        sys.exit("compile_time: %s not found; build first (scripts/build.sh)" % plugin)
    out = os.path.join(args.build, "bench-compile.o")
    isas = ["x86_64"]
    if os.path.exists("/usr/aarch64-linux-gnu/include/stdio.h"):
        isas.append("aarch64")

    rows = []
    for isa in isas:
        for src in jams():
            plain_cmd = command(src, isa, None, out)
            jam_cmd = command(src, isa, plugin, out)
            # Skip jams that do not build for this ISA (e.g. aarch64-only tests
            # or ones whose plain build needs the plugin's attributes).
            if run_once(plain_cmd)[1] or run_once(jam_cmd)[1]:
                continue
            plain, jam = [], []
            for _ in range(args.repeat):
                plain.append(run_once(plain_cmd)[0])
                jam.append(run_once(jam_cmd)[0])
            rows.append({"isa": isa, "jam": os.path.basename(src),
                         "plain_ms": statistics.median(plain) * 1e3,
                         "plugin_ms": statistics.median(jam) * 1e3})

    print("%-8s %-32s %10s %10s %7s" % ("isa", "jam", "plain ms", "plugin ms", "ratio"))
    for r in rows:
        print("%-8s %-32s %10.1f %10.1f %7.3f" % (r["isa"], r["jam"], r["plain_ms"],
                                                  r["plugin_ms"], r["plugin_ms"] / r["plain_ms"]))
    total_plain = sum(r["plain_ms"] for r in rows)
    total_jam = sum(r["plugin_ms"] for r in rows)
    ratio = total_jam / total_plain
    print("%d compilations x %d repeats; summed medians: plain %.1f ms, plugin %.1f ms"
          % (len(rows), args.repeat, total_plain, total_jam))
    print("compile-time ratio (plugin / plain clang -O2): %.3f  (goal: <= 1.3)" % ratio)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"rows": rows, "ratio": ratio}, f, indent=2)


if __name__ == "__main__":
    main()
