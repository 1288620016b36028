#!/usr/bin/env python3
"""bench/hdbscan_predict.py: HDBSCAN* prediction, grove beside the hdbscan
library, same points, same run.

    GROVE_LIB=build/libgrove.so PYTHONPATH=python python3 bench/hdbscan_predict.py
        [--sizes 100000,1000000] [--threads 1,2] [--peers hdbscan] [--timeout 900]

For each size n: 100 3-D Gaussian blobs (the set of bench/emst.py), fitted
with min_cluster_size 20 and the library's min_samples 9 (grove K = 10)
and prediction data, then n new points (the same blobs, another seed)
through approximate_predict, and all_points_membership_vectors on the
training points. grove runs grove.compat.hdbscan (the C model), the peer
hdbscan.HDBSCAN (boruvka_kdtree) with hdbscan.prediction. Each code runs
in its own process with the thread count set through the environment;
only the prediction calls are timed, and for each the peak resident
memory during the call is measured (the process's high-water mark is
reset before the call through /proc/self/clear_refs, Linux) and shown
above the resident memory just before it, beside the size of the call's
output. A process past --timeout is reported, not waited for."""
import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

THREAD_ENV = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def blobs(n, seed):
    centres = np.random.default_rng(1).random((100, 3))
    rng = np.random.default_rng(seed)
    return centres[rng.integers(0, 100, n)] + rng.normal(0, 0.01, (n, 3))


def rss(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    return 0


def measured(fn):
    """(result, seconds, peak bytes during the call, resident bytes before)."""
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # reset the high-water mark
    before = rss("VmRSS")
    t = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t, rss("VmHWM"), before


def child(code, n, threads):
    x, q = blobs(n, 2), blobs(n, 3)
    if code == "grove":
        from grove.compat import hdbscan as lib
        model = lib.HDBSCAN(min_cluster_size=20, min_samples=9, prediction_data=True,
                            core_dist_n_jobs=threads).fit(x)
    else:
        import hdbscan as lib
        model = lib.HDBSCAN(min_cluster_size=20, min_samples=9, prediction_data=True, algorithm="boruvka_kdtree",
                            core_dist_n_jobs=threads).fit(x)
    result = {"clusters": int(model.labels_.max() + 1)}
    for name, call in (("approximate_predict", lambda: lib.approximate_predict(model, q)),
                       ("all_points_membership_vectors", lambda: lib.all_points_membership_vectors(model))):
        out, seconds, peak, before = measured(call)
        size = sum(a.nbytes for a in (out if isinstance(out, tuple) else (out,)))
        result[name] = {"seconds": seconds, "peak": peak, "before": before, "output": size}
        if name == "approximate_predict":
            result["predicted_noise"] = int((out[0] < 0).sum())
    print(json.dumps(result))


def run(code, n, threads, timeout):
    env = dict(os.environ, **{k: str(threads) for k in THREAD_ENV})
    try:
        r = subprocess.run([sys.executable, __file__, "--child", code, str(n), str(threads)], env=env,
                           timeout=timeout, capture_output=True, text=True)
    except subprocess.TimeoutExpired:
        return f"timeout after {timeout} s (fit and prediction)"
    if r.returncode:
        return ((r.stderr.strip().splitlines() or ["failed"])[-1])[:80]
    return json.loads(r.stdout.strip().splitlines()[-1])


def mb(b):
    return f"{b / 1e6:.1f} MB"


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        return child(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="100000,1000000")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--peers", default="hdbscan")
    ap.add_argument("--timeout", type=int, default=900)
    a = ap.parse_args()
    codes = ["grove"] + [p for p in a.peers.split(",") if p]
    print("| code | n | threads | call | seconds | peak during call (resident before) | output | result |")
    print("|---|---|---|---|---|---|---|---|")
    done = {}
    for n in (int(s) for s in a.sizes.split(",")):
        for t in (int(s) for s in a.threads.split(",")):
            for code in codes:
                r = done[code, n, t] = run(code, n, t, a.timeout)
                if isinstance(r, str):
                    print(f"| {code} | {n} | {t} | - | - | - | - | {r} |", flush=True)
                    continue
                for call in ("approximate_predict", "all_points_membership_vectors"):
                    c = r[call]
                    note = (f"{r['clusters']} clusters, {r['predicted_noise']} predicted noise"
                            if call == "approximate_predict" else "")
                    print(f"| {code} | {n} | {t} | {call} | {c['seconds']:.3f} | {mb(c['peak'])} "
                          f"({mb(c['before'])}) | {mb(c['output'])} | {note} |", flush=True)
    print_ratios(done, codes[1:])


def print_ratios(done, peers):
    """Each peer's time and memory growth during a call over grove's, where both finished."""
    print("\n| peer | n | threads | call | peer / grove seconds | peer / grove memory growth |")
    print("|---|---|---|---|---|---|")
    for (code, n, t), r in done.items():
        g = done.get(("grove", n, t))
        if code not in peers or isinstance(r, str) or isinstance(g, str):
            continue
        for call in ("approximate_predict", "all_points_membership_vectors"):
            p, q = r[call], g[call]
            grow = (p["peak"] - p["before"]) / max(q["peak"] - q["before"], 1)
            print(f"| {code} | {n} | {t} | {call} | {p['seconds'] / q['seconds']:.1f} | {grow:.1f} |")


if __name__ == "__main__":
    main()
