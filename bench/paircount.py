#!/usr/bin/env python3
"""bench/paircount.py: grove's pair counts beside Corrfunc, same points, same
bins, same threads, in the same run (issue 43's goal: faster at every row).

    make && python3 bench/paircount.py [--n 1000000] [--threads 1,2] [--repeats 3]
        [--radii 2.5,5,10] [--kinds uniform,clustered] [--cache DIR] [--timeout 900]

Points: N float64 points in a periodic box of side 100 (N / 10^6)^(1/3), so
the mean separation is 1:
  uniform    uniform in the box
  clustered  70 % in N / 100 Gaussian halos (sigma 0.3, FoF-like clumps),
             30 % uniform, wrapped into the box
r_max: 2.5, 5 and 10 mean separations (5, 10 and 20 % of 50 mean
separations); 15 logarithmic bins from r_max / 100 to r_max. DD(r) of the
autocorrelation, periodic: Corrfunc.theory.DD(autocorr=1, periodic=True)
and grove.pair_counts(x, bins=edges, boxsize=L), each in a process of its
own (OMP_NUM_THREADS and the tool's nthreads set), the seconds of that
call alone (grove's includes building its index; Corrfunc's its gridding).
"same" says whether the counts are identical bin for bin.

The machine is shared: every configuration runs --repeats times, the tools
interleaved (their order alternating), and the table shows medians of the
wall seconds and of the processes' CPU seconds, the load average over the
runs, and each tool's peak resident memory (the points themselves are
24 MB a million).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

import numpy as np

from machine import cache_dir, cpu_model, last_json

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

RUN_CODE = r'''
import json, os, sys, time
import numpy as np
tool, path, rmax, side, threads, out_path = sys.argv[1:7]
rmax, side, threads = float(rmax), float(side), int(threads)
x = np.load(path)
edges = np.logspace(np.log10(rmax / 100), np.log10(rmax), 16)

def peak_rss():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024

if tool == "grove":
    sys.path.insert(0, os.environ["GROVE_PYTHON"])
    import grove
    call = lambda: grove.pair_counts(x, bins=edges, boxsize=side, threads=threads)[0]
else:
    from Corrfunc.theory.DD import DD
    cols = [np.ascontiguousarray(x[:, k]) for k in range(3)]
    call = lambda: DD(1, threads, edges, *cols, periodic=True, boxsize=side)["npairs"]
load0 = os.getloadavg()[0]
w0, c0 = time.perf_counter(), time.process_time()
counts = call()
wall, cpu = time.perf_counter() - w0, time.process_time() - c0
np.save(out_path, np.asarray(counts, dtype=np.int64))
print(json.dumps({"tool": tool, "wall": wall, "cpu": cpu, "load": (load0 + os.getloadavg()[0]) / 2,
                  "peak_rss_bytes": peak_rss()}), flush=True)
'''


def points(kind, n, cache):
    """The cached .npy of a kind of points, and the box side."""
    side = 100.0 * (n / 1e6) ** (1 / 3)
    path = os.path.join(cache, f"paircount_{kind}_{n}.npy")
    if not os.path.exists(path):
        rng = np.random.default_rng(43)
        if kind == "uniform":
            x = rng.uniform(0, side, (n, 3))
        else:
            centres = rng.uniform(0, side, (n // 100, 3))
            members = centres[rng.integers(0, len(centres), int(0.7 * n))] + rng.normal(0, 0.3, (int(0.7 * n), 3))
            x = np.mod(np.vstack([members, rng.uniform(0, side, (n - len(members), 3))]), side)
            x[x >= side] = 0  # np.mod can round up to the side itself
        np.save(path, x)
    return path, side


def run(tool, path, rmax, side, threads, timeout, out_path):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), GROVE_PYTHON=os.path.join(ROOT, "python"))
    env.setdefault("GROVE_LIB", os.path.join(ROOT, "build", "libgrove.so"))
    try:
        p = subprocess.run([sys.executable, "-c", RUN_CODE, tool, path, repr(rmax), repr(side), str(threads),
                            out_path], capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return {"tool": tool, "status": "timeout"}
    r = last_json(p.stdout)
    if p.returncode != 0 or r is None:
        err = (p.stderr or "").strip().splitlines()
        return {"tool": tool, "status": "failed: " + (err[-1] if err else "?")}
    return r


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--radii", default="2.5,5,10", help="r_max in mean separations")
    ap.add_argument("--kinds", default="uniform,clustered")
    ap.add_argument("--cache")
    ap.add_argument("--timeout", type=float, default=900)
    args = ap.parse_args()
    cache = cache_dir(args.cache)
    configs = [(kind, float(r), int(t)) for kind in args.kinds.split(",") for r in args.radii.split(",")
               for t in args.threads.split(",")]
    results = {c: {"grove": [], "corrfunc": []} for c in configs}
    same = {c: True for c in configs}
    print(f"# {cpu_model()}, {os.cpu_count()} CPUs; n = {args.n}; {args.repeats} repeats, tools interleaved",
          flush=True)
    for rep in range(args.repeats):
        for c in configs:
            kind, rmax, threads = c
            path, side = points(kind, args.n, cache)
            order = ("grove", "corrfunc") if rep % 2 == 0 else ("corrfunc", "grove")
            counts = {}
            for tool in order:
                out = os.path.join(cache, f"paircount_counts_{tool}.npy")
                r = run(tool, path, rmax, side, threads, args.timeout, out)
                results[c][tool].append(r)
                counts[tool] = np.load(out) if "wall" in r else None
                print(json.dumps({"kind": kind, "rmax": rmax, "threads": threads, "repeat": rep, **r}), flush=True)
            if counts["grove"] is not None and counts["corrfunc"] is not None:
                same[c] &= bool(np.array_equal(counts["grove"], counts["corrfunc"]))
    print()
    print("| points | r_max | threads | Corrfunc s (cpu s) | grove s (cpu s) | Corrfunc / grove (cpu) | same | "
          "load | peak RSS MB Corrfunc / grove |")
    print("|---|---|---|---|---|---|---|---|---|")
    for c in configs:
        kind, rmax, threads = c
        row = {}
        for tool in ("corrfunc", "grove"):
            ok = [r for r in results[c][tool] if "wall" in r]
            if not ok:
                row[tool] = None
                continue
            row[tool] = {k: statistics.median(r[k] for r in ok) for k in ("wall", "cpu", "load")}
            row[tool]["rss"] = max(r["peak_rss_bytes"] for r in ok) / 2**20
        cf, gv = row["corrfunc"], row["grove"]
        if cf is None or gv is None:
            print(f"| {kind} | {rmax:g} | {threads} | {'failed' if cf is None else ''} | "
                  f"{'failed' if gv is None else ''} | | | | |")
            continue
        print(f"| {kind} | {rmax:g} | {threads} | {cf['wall']:.2f} ({cf['cpu']:.2f}) | {gv['wall']:.2f} "
              f"({gv['cpu']:.2f}) | {cf['wall'] / gv['wall']:.2f} ({cf['cpu'] / gv['cpu']:.2f}) | "
              f"{'yes' if same[c] else 'NO'} | {(cf['load'] + gv['load']) / 2:.1f} | {cf['rss']:.0f} / "
              f"{gv['rss']:.0f} |")


if __name__ == "__main__":
    main()
