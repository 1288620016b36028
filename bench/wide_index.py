#!/usr/bin/env python3
"""The join's index on a few points in very many dimensions (an image or a
spectrum per row): seconds to build grove.Index on 3 x d points against d,
one thread, and seconds per dimension (flat when the build is linear in d).

    make && PYTHONPATH=python GROVE_LIB=build/libgrove.so python3 bench/wide_index.py [--dims 32768,...]
"""
import argparse
import time

import numpy as np

import grove
from machine import cpu_model


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dims", default="32768,65536,131072,262144,524288")
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args()
    print(f"# machine: {cpu_model()}; grove.Index(x) on 3 x d uniform points, threads=1, best of {a.repeats}")
    print("| d | seconds | microseconds per dimension |")
    print("|---|---|---|")
    for d in (int(s) for s in a.dims.split(",")):
        x = np.random.default_rng(d).random((3, d))
        best = float("inf")
        for _ in range(a.repeats):
            t0 = time.perf_counter()
            grove.Index(x, threads=1).close()
            best = min(best, time.perf_counter() - t0)
        print(f"| {d} | {best:.3f} | {best / d * 1e6:.2f} |", flush=True)


if __name__ == "__main__":
    main()
