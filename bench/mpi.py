#!/usr/bin/env python3
"""Distributed tree gravity under mpirun: strong scaling (np 1 and np 2 on
the same 10^6-particle Plummer sphere) and weak scaling (5 x 10^5
particles per rank), one `grove gravity` force evaluation each (theta 0.75,
softening 0.01, --threads 1 per rank), with the bytes each rank sent.

    make && python3 bench/mpi.py [--n 1000000] [--per-rank 500000] [--ranks 1,2]

`seconds` is grove's own (decomposition, trees, essential trees, walks,
results home; no file I/O). Speedup = np 1 seconds / np P seconds at the
same n; weak efficiency = np 1 seconds at per-rank n / np P seconds at
P x per-rank n.
"""
import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile

import numpy as np

from machine import cpu_model

HERE = os.path.dirname(os.path.abspath(__file__))
GROVE = os.path.join(HERE, "..", "build", "grove")


def plummer(n, path, tmp):
    """(n, 4) x, y, z, m of grove's seeded Plummer sphere into path."""
    out = os.path.join(tmp, "ic%d" % n)
    subprocess.run([GROVE, "nbody", "--ic", "plummer", "--n", str(n), "--seed", "1", "--steps", "0",
                    "--snapshot-every", "1", "--out", out, "--quiet"], check=True)
    s = np.load(os.path.join(out, "snap_000000.npy"))
    np.save(path, np.c_[s[:, :3], s[:, 6]])


def gravity(path, ranks, tmp):
    """The --json summary of one distributed run."""
    cmd = ["mpirun", "--allow-run-as-root", "--oversubscribe", "-np", str(ranks), GROVE, "gravity", path,
           "--theta", "0.75", "--softening", "0.01", "--acc", os.path.join(tmp, "acc.npy"), "--threads", "1",
           "--json"]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1000000)
    ap.add_argument("--per-rank", type=int, default=500000)
    ap.add_argument("--ranks", default="1,2")
    a = ap.parse_args()
    ranks = [int(r) for r in a.ranks.split(",")]
    print("machine: %s, %d cores, %s %s" % (cpu_model(), os.cpu_count(), platform.system(), platform.release()))
    print("grove gravity, Plummer sphere, theta 0.75, softening 0.01, --threads 1 per rank")
    with tempfile.TemporaryDirectory() as tmp:
        files = {}
        for n in sorted({a.n} | {a.per_rank * p for p in ranks}):
            files[n] = os.path.join(tmp, "p%d.npy" % n)
            plummer(n, files[n], tmp)
        rows = []
        for kind, sizes in (("strong", [(p, a.n) for p in ranks]), ("weak", [(p, a.per_rank * p) for p in ranks])):
            base = None
            for p, n in sizes:
                j = gravity(files[n], p, tmp)
                base = base or j["seconds"]
                ratio = base / j["seconds"]
                rows.append((kind, p, n, j["seconds"], ratio, j.get("rank_bytes_sent", [0]), j.get("load_imbalance", 1),
                             j["interactions_per_particle"]))
        print("%-7s %3s %9s %9s %8s %8s %9s  %s" % ("scaling", "np", "n", "seconds", "ratio", "inter/p", "imbalance",
                                                     "MB sent per rank"))
        for kind, p, n, sec, ratio, sent, imb, per in rows:
            print("%-7s %3d %9d %9.3f %8.2f %8.0f %9.2f  %s" % (kind, p, n, sec, ratio, per, imb,
                                                              " ".join("%.1f" % (b / 1e6) for b in sent)))
        print("ratio: strong = speedup over np %d; weak = efficiency (np %d time / np P time)" % (ranks[0], ranks[0]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
