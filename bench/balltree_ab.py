#!/usr/bin/env python3
"""Two builds of libgrove.so in one process, the same ball tree builds
through each, alternating call by call: the way to see a change of a few
percent in the builders on a VM whose timings drift by tens of percent
between runs (bench/balltree.py's A/B line, and a path forced off in a
copy of the library, come from here).

    make && python3 bench/balltree_ab.py --other OTHER/libgrove.so [--lib build/libgrove.so]
                                         [--rows 16384x3,16384x3:6] [--threads 1,2] [--rounds 7]
    GROVE_CPU=avx2 python3 bench/balltree_ab.py ...   (both libraries read it)

A row is NxD (a full tree) or NxD:K (K partition levels). Each round takes
the minimum over repeats of each library on fresh point sets (the same for
both); "this / other" is the median over rounds of the ratio of minima.
Both libraries must build the same tree (checked on the first set).
"""
import argparse
import os
import statistics
import time

import numpy as np

from balltree import GROVE_BALLTREE_FULL, Grove
from machine import cpu_model

HERE = os.path.dirname(os.path.abspath(__file__))


def parse_row(text):
    shape, _, levels = text.partition(":")
    n, d = (int(v) for v in shape.split("x"))
    return n, d, int(levels) if levels else GROVE_BALLTREE_FULL


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lib", default=os.path.join(HERE, "..", "build", "libgrove.so"))
    ap.add_argument("--other", required=True, help="the other build's libgrove.so")
    ap.add_argument("--rows", default="4096x3,16384x3,65536x3,1048576x3")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--rounds", type=int, default=7)
    a = ap.parse_args()
    libs = [Grove(a.lib), Grove(a.other)]
    for g in libs:  # one workspace each, as grove.balltree keeps one
        g.workspace = g.lib.grove_workspace_create()
    print(f"# machine: {cpu_model()}, {os.cpu_count()} cores; GROVE_CPU={os.environ.get('GROVE_CPU', 'unset')}; "
          f"{a.rounds} rounds")
    print("| n | d | levels | threads | this ms | other ms | this / other |")
    print("|---:|---:|---|---:|---:|---:|---:|")
    rng = np.random.default_rng(3)
    for row in a.rows.split(","):
        n, d, levels = parse_row(row)
        xs = [rng.random((n, d)) for _ in range(8 if n <= 1 << 16 else 2)]
        for threads in (int(t) for t in a.threads.split(",")):
            trees = [g.build(xs[0], None, threads, levels)[0] for g in libs]
            if not np.array_equal(*trees):
                raise SystemExit(f"the two libraries build different trees for {row}")
            repeats = max(3, min(200, int(2e6 / n)))
            minima = [[], []]
            for _ in range(a.rounds):
                best = [float("inf"), float("inf")]
                for r in range(repeats):
                    for k in (0, 1) if r % 2 == 0 else (1, 0):
                        t0 = time.perf_counter()
                        libs[k].build(xs[r % len(xs)], None, threads, levels)
                        best[k] = min(best[k], time.perf_counter() - t0)
                for k in (0, 1):
                    minima[k].append(best[k])
            ratio = statistics.median(x / y for x, y in zip(*minima))
            shown = "full" if levels == GROVE_BALLTREE_FULL else str(levels)
            print(f"| {n} | {d} | {shown} | {threads} | {statistics.median(minima[0]) * 1e3:.3f} "
                  f"| {statistics.median(minima[1]) * 1e3:.3f} | {ratio:.3f} |", flush=True)


if __name__ == "__main__":
    main()
