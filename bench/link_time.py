#!/usr/bin/env python3
"""Link time of jam images: in process, and as a jamlink process.

Compiles every jam of examples/jams, test/lit/codegen and test/lit/harness
with the plugin (x86_64), then
  - runs build/bench/link-time over all objects (object read, link, image
    written; median of --repeat runs each), and
  - times whole `jamlink jam_x.o -o x.jam` processes (median of --runs).
Also reports the image size of the paper's Indirect Put jam.
A benchmark, not a test: it asserts nothing.

  bench/link_time.py [--build build] [--repeat 200] [--runs 20]
"""
import argparse
import glob
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CLANG = "/usr/lib/llvm-19/bin/clang"


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--repeat", type=int, default=200)
    ap.add_argument("--runs", type=int, default=20)
    args = ap.parse_args()
    plugin = os.path.join(args.build, "lib/twochains/TwoChainsJam.so")
    jamlink = os.path.join(args.build, "bin/jamlink")
    bench = os.path.join(args.build, "bench/link-time")
    for tool in (plugin, jamlink, bench):
        if not os.path.exists(tool):
            sys.exit("link_time: %s not found; build first (scripts/build.sh)" % tool)

    work = tempfile.mkdtemp(prefix="tc-link-time-")
    objects = []
    sources = sorted(glob.glob(os.path.join(ROOT, "examples/jams/jam_*.amc")))
    sources += sorted(glob.glob(os.path.join(ROOT, "test/lit/codegen/jam_*.amc")))
    sources += sorted(glob.glob(os.path.join(ROOT, "test/lit/harness/jam_*.amc")))
    for src in sources:
        obj = os.path.join(work, os.path.basename(src)[:-4] + ".o")
        r = subprocess.run([CLANG, "--target=x86_64-linux-gnu", "-x", "c", "-O2",
                            "-fplugin=" + plugin, "-I", os.path.join(ROOT, "include"),
                            "-w", "-c", src, "-o", obj],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if r.returncode == 0:
            objects.append(obj)

    print("== in process (%d objects, %d repeats each)" % (len(objects), args.repeat))
    sys.stdout.flush()
    subprocess.run([bench, "--repeat", str(args.repeat)] + objects, check=True)

    print("== jamlink processes (%d runs each)" % args.runs)
    walls = []
    for obj in objects:
        times = []
        for _ in range(args.runs):
            start = time.perf_counter()
            subprocess.run([jamlink, obj, "-o", obj + ".jam"], check=True)
            times.append(time.perf_counter() - start)
        walls.append(statistics.median(times) * 1e3)
    print("process wall time, median over jams: %.1f ms (min %.1f, max %.1f)"
          % (statistics.median(walls), min(walls), max(walls)))
    starts = []
    for _ in range(args.runs):
        start = time.perf_counter()
        subprocess.run([jamlink, "--help"], stdout=subprocess.DEVNULL, check=True)
        starts.append(time.perf_counter() - start)
    print("  of which process start-up (jamlink --help, median): %.1f ms"
          % (statistics.median(starts) * 1e3))
    batch = []
    for _ in range(args.runs):
        start = time.perf_counter()
        subprocess.run([jamlink, "--output-dir", os.path.join(work, "images")] + objects,
                       check=True)
        batch.append(time.perf_counter() - start)
    print("one jamlink --output-dir process for all %d jams: %.1f ms, %.2f ms per jam"
          % (len(objects), statistics.median(batch) * 1e3,
             statistics.median(batch) * 1e3 / len(objects)))

    ip = os.path.join(work, "jam_indirect_put.o")
    subprocess.run([jamlink, ip, "-o", ip + ".jam"], check=True)
    dump = subprocess.run([jamlink, "--dump", ip + ".jam"], check=True,
                          capture_output=True, text=True).stdout
    facts = dict(line.split(None, 1) for line in dump.splitlines()[1:19] if line.strip())
    print("Indirect Put (x86_64, -O2): image %s bytes (code %s, GOTP 8, imports %s)"
          % (facts.get("image-size", "?").strip(), facts.get("code-size", "?").strip(),
             facts.get("imports", "?").strip()))


if __name__ == "__main__":
    main()
