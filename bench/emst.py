#!/usr/bin/env python3
"""bench/emst.py: grove's EMST and HDBSCAN* beside their peers, same points,
same run.

    python3 bench/emst.py [--grove build/grove] [--sizes 100000,1000000]
                          [--threads 1,2] [--sets uniform2,uniform3,blobs3]
                          [--peers hdbscan,fast_hdbscan,mlpack] [--hdbscan-sizes 100000]
                          [--timeout 300]

For every data set and size: grove emst (the CLI's --json `seconds`, which
excludes file I/O) and each installed peer's Euclidean MST, each on 1 and 2
threads, printing seconds, MFeatures/s (n * d / seconds, the ArborX paper's
metric) and the total weight (equal totals show the peers computed the same
tree). Peers run in a subprocess each, with their thread count set through
the environment, and are timed around the MST call only:
  hdbscan       KDTreeBoruvkaAlgorithm with min_samples 0 (core distance 0:
                the plain EMST), approx_min_span_tree=False, tree build included
  fast_hdbscan  compute_minimum_spanning_tree(min_samples=1) (numba; the first
                call compiles, so it is warmed up on a small set first)
  mlpack        mlpack.emst (dual-tree Boruvka)
Then HDBSCAN* end to end (min_cluster_size 20, K = 10, i.e. the library's
min_samples 9) against hdbscan.HDBSCAN (algorithm boruvka_kdtree) on the
clustered set. Peers that are not installed are skipped."""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

PEER_CODE = {
    "hdbscan": """
import numpy as np, time, sys
from sklearn.neighbors import KDTree
from hdbscan._hdbscan_boruvka import KDTreeBoruvkaAlgorithm
x = np.load(sys.argv[1]); t = time.perf_counter()
alg = KDTreeBoruvkaAlgorithm(KDTree(x, leaf_size=40), min_samples=0, leaf_size=13,
                             approx_min_span_tree=False, n_jobs=int(sys.argv[2]))
mst = alg.spanning_tree(); s = time.perf_counter() - t
print(s, float(mst[:, 2].sum()))
""",
    "fast_hdbscan": """
import numpy as np, time, sys
from fast_hdbscan.hdbscan import compute_minimum_spanning_tree
x = np.load(sys.argv[1]).astype(np.float32)
compute_minimum_spanning_tree(x[:2000], min_samples=1)
t = time.perf_counter(); edges = compute_minimum_spanning_tree(x, min_samples=1)[0]
s = time.perf_counter() - t
print(s, float(np.asarray(edges)[:, 2].sum()))
""",
    "mlpack": """
import numpy as np, time, sys, mlpack
x = np.load(sys.argv[1]); t = time.perf_counter()
out = mlpack.emst(input_=x)["output"]; s = time.perf_counter() - t
print(s, float(out[:, 2].sum()))
""",
    "hdbscan_e2e": """
import numpy as np, time, sys, hdbscan
x = np.load(sys.argv[1]); t = time.perf_counter()
h = hdbscan.HDBSCAN(min_cluster_size=20, min_samples=9, algorithm="boruvka_kdtree",
                    core_dist_n_jobs=int(sys.argv[2])).fit(x)
s = time.perf_counter() - t
print(s, int(h.labels_.max() + 1))
""",
}
THREAD_ENV = ("OMP_NUM_THREADS", "NUMBA_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def make(name, n, seed=1):
    rng = np.random.default_rng(seed)
    if name == "uniform2":
        return rng.random((n, 2))
    if name == "uniform3":
        return rng.random((n, 3))
    centres = rng.random((100, 3))
    return centres[rng.integers(0, 100, n)] + rng.normal(0, 0.01, (n, 3))


def run_grove(grove, args, threads):
    out = subprocess.run([grove, *map(str, args), "--threads", str(threads), "--json"], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def run_peer(peer, path, threads, timeout):
    env = dict(os.environ, **{k: str(threads) for k in THREAD_ENV})
    try:
        r = subprocess.run([sys.executable, "-c", PEER_CODE[peer], path, str(threads)], env=env, timeout=timeout,
                           capture_output=True, text=True)
    except subprocess.TimeoutExpired:
        return None, f"timeout {timeout} s"
    if r.returncode != 0:
        last = (r.stderr.strip().splitlines() or ["failed"])[-1]
        return None, last[:60]
    s, v = r.stdout.split()
    return float(s), float(v)


def row(what, n, d, threads, seconds, extra):
    rate = f"{n * d / seconds / 1e6:8.2f}" if seconds else "       -"
    sec = f"{seconds:8.3f}" if seconds else "       -"
    print(f"| {what:<14} | {n:>8} | {d} | {threads} | {sec} | {rate} | {extra} |", flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--grove", default="build/grove")
    ap.add_argument("--sizes", default="100000,1000000")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--sets", default="uniform2,uniform3,blobs3")
    ap.add_argument("--peers", default="hdbscan,fast_hdbscan,mlpack")
    ap.add_argument("--hdbscan-sizes", default="100000")
    ap.add_argument("--timeout", type=int, default=300)
    a = ap.parse_args()
    peers = [p for p in a.peers.split(",") if p]
    threads = [int(t) for t in a.threads.split(",")]
    print("| code           |        n | d | t |  seconds | MFeat/s | total weight / result |")
    print("|----------------|----------|---|---|----------|---------|-----------------------|")
    with tempfile.TemporaryDirectory() as tmp:
        path, e, w = (os.path.join(tmp, f) for f in ("x.npy", "e.npy", "w.npy"))
        for name in a.sets.split(","):
            for n in (int(s) for s in a.sizes.split(",")):
                x = make(name, n)
                np.save(path, x)
                d = x.shape[1]
                for t in threads:
                    g = run_grove(a.grove, ["emst", path, "--edges", e, "--weights", w], t)
                    row(f"grove {name}", n, d, t, g["seconds"], f"{g['total_weight']:.6f}")
                    for p in peers:
                        s, v = run_peer(p, path, t, a.timeout)
                        row(f"  {p}", n, d, t, s, f"{v:.6f}" if s else v)
        for n in (int(s) for s in a.hdbscan_sizes.split(",") if s):
            x = make("blobs3", n)
            np.save(path, x)
            for t in threads:
                g = run_grove(a.grove, ["hdbscan", path, "--min-cluster-size", 20, "--min-samples", 10, "--labels",
                                        os.path.join(tmp, "l.npy")], t)
                row("grove hdbscan", n, 3, t, g["seconds"], f"{g['clusters']} clusters")
                g = run_grove(a.grove, ["emst", path, "--mutual-reachability", 10, "--edges", e, "--weights", w], t)
                row("grove MR K=10", n, 3, t, g["seconds"], f"{g['total_weight']:.6f}")
                s, v = run_peer("hdbscan_e2e", path, t, a.timeout)
                row("  hdbscan lib", n, 3, t, s, f"{int(v)} clusters" if s else v)


if __name__ == "__main__":
    main()
