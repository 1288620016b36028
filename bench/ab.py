#!/usr/bin/env python3
"""This build's grove command against another build's, on the main jobs the
other benches time (the join of bench/join.py, the EMST of bench/emst.py,
DBSCAN of bench/dbscan.py, the force evaluation of bench/nbody.py, kNN and a
ball tree), the two run alternately in one run: on a shared VM whose
timings drift by tens of percent between runs minutes apart, only
interleaved runs compare two builds.

    make && python3 bench/ab.py --other OLD/build/grove [--grove build/grove] [--reps 5]

Times are each command's --json "seconds" (the computation alone), median
over --reps runs of each; "this / other" is the median of the per-round
ratios (< 1: this build is faster).
"""
import argparse
import json
import os
import statistics
import subprocess
import tempfile

from machine import cpu_model

HERE = os.path.dirname(os.path.abspath(__file__))

# (name, arguments), each run on one thread and on two; {d} is the data
# folder, {o} the output folder.
JOBS = [
    ("join --count-only, 10^6 uniform, eps 0.0397", "join {d}/u1m.npy --eps 0.039682 --count-only"),
    ("join pairs, 2e5 uniform, eps 0.04", "join {d}/u200k.npy --eps 0.04 --offsets {o}/o.npy --indices {o}/i.npy"),
    ("knn, 2e5 uniform, k 10", "knn {d}/u200k.npy -k 10 --indices {o}/k.npy"),
    ("emst, 2e5 uniform", "emst {d}/u200k.npy --edges {o}/e.npy --weights {o}/w.npy"),
    ("dbscan, 3e5 blobs, eps 0.1, min_samples 20", "dbscan {d}/b300k.npy --eps 0.1 --min-samples 20 --labels {o}/l.npy"),
    ("gravity, 2e5 uniform, theta 0.75", "gravity {d}/g200k.npy --theta 0.75 --acc {o}/a.npy"),
    ("balltree, 2^20 uniform", "balltree {d}/u1m.npy --indices {o}/bi.npy --mask {o}/bm.npy"),
]


def seconds(grove, args):
    out = subprocess.run([grove] + args.split() + ["--json"], check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])["seconds"]


def make_data(grove, d):
    gen = [("u1m", "uniform", 1000000, 1), ("u200k", "uniform", 200000, 2), ("b300k", "blobs", 300000, 3)]
    for name, kind, n, seed in gen:
        subprocess.run([grove, "gen", kind, "--n", str(n), "--dims", "3", "--seed", str(seed), "-o",
                        f"{d}/{name}.npy", "--quiet"], check=True)
    # Gravity's input: rows x, y, z, m, all four uniform in [0, 1).
    subprocess.run([grove, "gen", "uniform", "--n", "200000", "--dims", "4", "--seed", "2", "-o", f"{d}/g200k.npy",
                    "--quiet"], check=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--grove", default=os.path.join(HERE, "..", "build", "grove"))
    ap.add_argument("--other", required=True, help="the other build's grove command")
    ap.add_argument("--reps", type=int, default=5)
    a = ap.parse_args()
    print(f"# machine: {cpu_model()}, {os.cpu_count()} cores; {a.reps} runs of each build, alternating")
    print("| job | 1 thread: this s | other s | this / other | 2 threads: this s | other s | this / other |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as d, tempfile.TemporaryDirectory(dir="/dev/shm" if os.path.isdir(
            "/dev/shm") else None) as o:
        make_data(a.grove, d)
        for name, args in JOBS:
            cells = []
            for threads in (1, 2):
                run = args.format(d=d, o=o) + f" --threads {threads}"
                t = {a.grove: [], a.other: []}
                for r in range(a.reps):
                    for g in (a.grove, a.other) if r % 2 == 0 else (a.other, a.grove):
                        t[g].append(seconds(g, run))
                ratio = statistics.median(x / y for x, y in zip(t[a.grove], t[a.other]))
                cells.append(f"{statistics.median(t[a.grove]):.3f} | {statistics.median(t[a.other]):.3f} | {ratio:.2f}")
            print(f"| {name} | {cells[0]} | {cells[1]} |", flush=True)


if __name__ == "__main__":
    main()
