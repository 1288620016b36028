#!/usr/bin/env python3
"""bench/dbscan.py: exact DBSCAN, grove beside scikit-learn's
sklearn.cluster.DBSCAN and the `dbscan` package (Wang, Gu and Shun's
exact parallel DBSCAN, pip install dbscan), same data, same run.

    GROVE_LIB=build/libgrove.so PYTHONPATH=python python3 bench/dbscan.py
        [--sizes 100000,1000000] [--sets uniform,blobs,fashion-mnist] [--threads 2]
        [--peers sklearn,dbscan] [--neighbours 30] [--min-samples 20] [--timeout 900]

Sets: "uniform" (n points uniform in the unit cube), "blobs" (n points
in 100 Gaussian blobs of sd 0.01 in the unit cube, the set of
bench/emst.py), both 3-d, at each size; "fashion-mnist" (the 70,000
images of Fashion-MNIST as 784-d points with pixel values 0-255, from
/usr/share/datasets/fashion-mnist: apt-get install dataset-fashion-mnist),
once. eps is the median distance to the --neighbours-th nearest neighbour
of 2,000 sampled points (grove.knn), so a typical point has that many
neighbours; every code gets the same eps and min_samples.

Each code runs in its own process (threads set through the environment
and its own thread argument): only the clustering call is timed, and the
peak resident memory of the process during the call is measured (the
high-water mark is reset through /proc/self/clear_refs just before it,
Linux), shown above the resident memory just before (the data); the
difference is the fit's own memory. The
labels are compared with grove's: "identical" for scikit-learn (labels
must be equal), and for `dbscan` whether the core points and the
partition of the core points agree (its border points and cluster
numbers follow its own rules). A process past --timeout is reported, not
waited for. The ratios are each peer's time and peak over grove's."""
import argparse
import gzip
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

from machine import cpu_model

THREAD_ENV = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "PARLAY_NUM_THREADS")
MNIST = "/usr/share/datasets/fashion-mnist"


def dataset(name, n):
    if name == "uniform":
        return np.random.default_rng(2).random((n, 3))
    if name == "blobs":
        centres = np.random.default_rng(1).random((100, 3))
        rng = np.random.default_rng(2)
        return centres[rng.integers(0, 100, n)] + rng.normal(0, 0.01, (n, 3))
    images = []
    for part in ("train", "t10k"):
        with gzip.open(os.path.join(MNIST, f"{part}-images-idx3-ubyte.gz")) as f:
            images.append(np.frombuffer(f.read(), dtype=np.uint8, offset=16).reshape(-1, 784))
    return np.vstack(images).astype(np.float64)


def rss(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    return 0


def child(code, name, n, threads, eps, min_samples, out):
    x = dataset(name, n)
    if code == "grove":
        import grove
        fit = lambda: grove.DBSCAN(eps=eps, min_samples=min_samples, n_jobs=threads).fit(x)  # noqa: E731
    elif code == "sklearn":
        from sklearn.cluster import DBSCAN
        fit = lambda: DBSCAN(eps=eps, min_samples=min_samples, n_jobs=threads).fit(x)  # noqa: E731
    else:
        # This file is dbscan.py too: import the package, not this script.
        sys.path = [p for p in sys.path if os.path.abspath(p or ".") != os.path.dirname(os.path.abspath(__file__))]
        import dbscan
        fit = lambda: dbscan.DBSCAN(x, eps=eps, min_samples=min_samples)  # noqa: E731
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # reset the high-water mark
    before = rss("VmRSS")
    t = time.perf_counter()
    model = fit()
    seconds = time.perf_counter() - t
    peak = rss("VmHWM")
    if code == "dbscan":
        labels, core = model
        labels = labels.astype(np.int64)
    else:
        labels = model.labels_.astype(np.int64)
        core = np.zeros(len(x), bool)
        core[model.core_sample_indices_] = True
    np.save(out + ".labels.npy", labels)
    np.save(out + ".core.npy", core)
    print(json.dumps({"seconds": seconds, "peak": peak, "before": before}))


def run(code, name, n, threads, eps, min_samples, timeout, out):
    env = dict(os.environ, **{k: str(threads) for k in THREAD_ENV})
    args = [sys.executable, __file__, "--child", code, name, str(n), str(threads), repr(eps), str(min_samples), out]
    try:
        r = subprocess.run(args, env=env, timeout=timeout, capture_output=True, text=True)
    except subprocess.TimeoutExpired:
        return f"timeout after {timeout} s"
    if r.returncode:
        return ((r.stderr.strip().splitlines() or ["failed"])[-1])[:90]
    result = json.loads(r.stdout.strip().splitlines()[-1])
    result["labels"], result["core"] = np.load(out + ".labels.npy"), np.load(out + ".core.npy")
    return result


def same_core_partition(a, b, core):
    """Whether labels a and b split the core points into the same groups."""
    pairs = set(zip(a[core].tolist(), b[core].tolist()))
    return len(pairs) == len(set(a[core].tolist())) == len(set(b[core].tolist()))


def agreement(code, r, ref):
    if ref is None:
        return ""
    if code == "sklearn":
        return "identical" if np.array_equal(r["labels"], ref["labels"]) else "LABELS DIFFER"
    if not np.array_equal(r["core"], ref["core"]):
        return f"{(r['core'] != ref['core']).sum()} core flags differ"
    return "same core partition" if same_core_partition(r["labels"], ref["labels"], ref["core"]) else "partition differs"


def choose_eps(x, neighbours):
    import grove
    rows = np.random.default_rng(3).choice(len(x), min(2000, len(x)), replace=False)
    _, dist = grove.knn(x, neighbours, queries=x[rows])
    return float(np.median(dist[:, -1]))


def mb(b):
    return f"{b / 1e6:.1f} MB"


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        a = sys.argv[2:]
        return child(a[0], a[1], int(a[2]), int(a[3]), float(a[4]), int(a[5]), a[6])
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="100000,1000000")
    ap.add_argument("--sets", default="uniform,blobs,fashion-mnist")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--peers", default="sklearn,dbscan")
    ap.add_argument("--neighbours", type=int, default=30)
    ap.add_argument("--min-samples", type=int, default=20)
    ap.add_argument("--timeout", type=int, default=900)
    a = ap.parse_args()
    codes = ["grove"] + [p for p in a.peers.split(",") if p]
    versions = []
    for module in ("sklearn", "dbscan"):
        try:
            from importlib.metadata import version
            versions.append(f"{module} {version('scikit-learn' if module == 'sklearn' else module)}")
        except Exception:  # noqa: BLE001 (a peer that is not installed)
            versions.append(f"{module} not installed")
    print(f"machine: {cpu_model()}, {os.cpu_count()} cores; Python {sys.version.split()[0]}, " + ", ".join(versions))
    print(f"threads {a.threads}, min_samples {a.min_samples}, eps: median distance to the {a.neighbours}-th "
          "neighbour")
    print("| set | n | d | eps | code | seconds | peak during fit (resident before) | fit's own memory | clusters "
          "| noise | labels | time / grove | peak / grove | own memory / grove |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    runs = [(s, int(n)) for s in a.sets.split(",") if s != "fashion-mnist" for n in a.sizes.split(",")]
    if "fashion-mnist" in a.sets.split(","):
        if os.path.isdir(MNIST):
            runs.append(("fashion-mnist", 70000))
        else:
            print(f"| fashion-mnist | - | - | - | - | - | - | - | - | not at {MNIST} (apt-get install "
                  "dataset-fashion-mnist) | - | - |")
    with tempfile.TemporaryDirectory() as tmp:
        for name, n in runs:
            x = dataset(name, n)
            d, eps = x.shape[1], choose_eps(x, a.neighbours)
            del x
            ref = None
            for code in codes:
                r = run(code, name, n, a.threads, eps, a.min_samples, a.timeout, os.path.join(tmp, code))
                if isinstance(r, str):
                    print(f"| {name} | {n} | {d} | {eps:.5g} | {code} | - | - | - | - | - | {r} | - | - | - |",
                          flush=True)
                    continue
                if code == "grove":
                    ref = r
                ratio_t = f"{r['seconds'] / ref['seconds']:.1f}x" if ref else "-"
                ratio_m = f"{r['peak'] / ref['peak']:.1f}x" if ref else "-"
                own = max(r["peak"] - r["before"], 1)
                ratio_o = f"{own / max(ref['peak'] - ref['before'], 1):.1f}x" if ref else "-"
                print(f"| {name} | {n} | {d} | {eps:.5g} | {code} | {r['seconds']:.3f} | {mb(r['peak'])} "
                      f"({mb(r['before'])}) | {mb(own)} | {r['labels'].max() + 1} | {(r['labels'] < 0).sum()} | "
                      f"{agreement(code, r, ref) if code != 'grove' else '-'} | {ratio_t} | {ratio_m} | {ratio_o} |",
                      flush=True)


if __name__ == "__main__":
    main()
