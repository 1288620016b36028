#!/usr/bin/env python3
"""One cold call through the CLI against the same build warm in a process:
`grove balltree` run once per process (as a shell script or a workflow
step runs it), its --json "seconds" (the build alone) and wall time per
process, median and minimum over --runs processes, alternating one thread
and two; "warm" is the same build in this process (build/libgrove.so through
ctypes, one workspace reused, fresh points of the same distribution
every repeat, as bench/balltree.py times it), minimum over repeats, one
thread.

    make && python3 bench/cold_cli.py [--runs 30] [--grove build/grove] [--lib build/libgrove.so]
                                      [--baseline OTHER/grove]

"1 / 2" is one thread / two threads (> 1: the second thread helps); below
2^17 points a one-off build uses one thread whatever --threads asks
(grove_balltree_threads), so both run the same code there. "cold / warm"
is the one-thread cold build's median over the warm minimum; "pages" the
cold build's minor page faults (--json page_faults: its first touches of
fresh memory, median), and "µs / page" the gap between cold and warm per
such page. "process ms"
is the wall time of the whole command (start, read, build, write, exit),
median; with --baseline, another grove command's, run alternating with
this one's (one thread).
"""
import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time

import numpy as np

from balltree import Grove, point_sets, rotating
from machine import best_seconds, cpu_model

HERE = os.path.dirname(os.path.abspath(__file__))


def process_ms(grove):
    """Median wall ms of `grove --version` (the start alone) over 20 runs,
    after one untimed run (the first reads the files into the page cache)."""
    subprocess.run([grove, "--version"], check=True, capture_output=True)
    runs = []
    for _ in range(20):
        t0 = time.perf_counter()
        subprocess.run([grove, "--version"], check=True, capture_output=True)
        runs.append(time.perf_counter() - t0)
    return statistics.median(runs) * 1e3


def one_run(grove, data, out, threads):
    t0 = time.perf_counter()
    proc = subprocess.run([grove, "balltree", data, "--indices", out + "_i.npy", "--mask", out + "_m.npy",
                           "--threads", str(threads), "--json"], check=True, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    return report["seconds"], wall, report["threads"], report.get("page_faults", 0)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--grove", default=os.path.join(HERE, "..", "build", "grove"))
    ap.add_argument("--lib", default=os.path.join(HERE, "..", "build", "libgrove.so"))
    ap.add_argument("--sizes", default="4096,16384,65536,262144,1048576")
    ap.add_argument("--baseline", help="another grove command to time beside this one")
    a = ap.parse_args()
    grove = Grove(a.lib)
    grove.workspace = grove.lib.grove_workspace_create()
    print(f"# machine: {cpu_model()}, {os.cpu_count()} cores; {a.runs} processes per cell")
    start = f"# `grove --version` process ms (median of 20): {process_ms(a.grove):.2f}"
    print(start + (f"; baseline {process_ms(a.baseline):.2f}" if a.baseline else ""))
    print("| n | threads used (1 / 2 asked) | cold ms, 1 thread (median, min) | cold ms, 2 threads (median, min) "
          "| 1 / 2 | warm ms, 1 thread (min) | cold / warm | pages | µs / page | process ms, 1 / 2 (median) |"
          + (" baseline process ms, 1 |" if a.baseline else ""))
    print("|---|---|---|---|---|---|---|---|---|---|" + ("---|" if a.baseline else ""))
    with tempfile.TemporaryDirectory() as tmp:
        for n in (int(s) for s in a.sizes.split(",")):
            data = os.path.join(tmp, f"u{n}.npy")
            subprocess.run([a.grove, "gen", "uniform", "--n", str(n), "--dims", "3", "--seed", "1", "-o", data,
                            "--quiet"], check=True)
            runs = {1: [], 2: []}
            used, base, pages = {}, [], []
            for _ in range(a.runs):
                for t in (1, 2):
                    seconds, wall, used[t], faults = one_run(a.grove, data, os.path.join(tmp, "out"), t)
                    runs[t].append((seconds, wall))
                    if t == 1:
                        pages.append(faults)
                if a.baseline:
                    base.append(one_run(a.baseline, data, os.path.join(tmp, "out"), 1)[1])
            med = {t: statistics.median(s for s, _ in runs[t]) * 1e3 for t in runs}
            low = {t: min(s for s, _ in runs[t]) * 1e3 for t in runs}
            wall = {t: statistics.median(w for _, w in runs[t]) * 1e3 for t in runs}
            xs = point_sets(np.random.default_rng(n), n, 3)
            warm = best_seconds(rotating(lambda x: grove.build(x, None, 1), xs), 1.0, min_repeats=10) * 1e3
            page = statistics.median(pages)
            per_page = f"{(med[1] - warm) / page * 1e3:.2f}" if page else "-"  # "-": a grove without page_faults
            print(f"| {n} | {used[1]} / {used[2]} | {med[1]:.2f}, {low[1]:.2f} | {med[2]:.2f}, {low[2]:.2f} "
                  f"| {med[1] / med[2]:.2f} | {warm:.2f} | {med[1] / warm:.2f} | {page:.0f} "
                  f"| {per_page} | {wall[1]:.1f} / {wall[2]:.1f} |"
                  + (f" {statistics.median(base) * 1e3:.1f} |" if a.baseline else ""))


if __name__ == "__main__":
    main()
