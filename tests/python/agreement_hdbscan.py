#!/usr/bin/env python3
"""How far grove's HDBSCAN* agrees with scikit-learn's and the hdbscan
library's, end to end, on data with and without tied weights (optional:
not part of `make check`; needs scikit-learn and hdbscan).

    python3 tests/python/agreement_hdbscan.py [--quick]

For each data set and parameter set it fits grove.HDBSCAN beside
sklearn.cluster.HDBSCAN (min_samples K counting the point) and
grove.compat.hdbscan.HDBSCAN beside hdbscan.HDBSCAN (algorithm="generic";
"prims_kdtree" above 10,000 points, where the generic n x n matrices
would not fit in a shared machine's memory), with grove's default ties
and with ties="simultaneous", and prints a Markdown table: distinct MST
weights (ties exist when there are fewer than n - 1), adjusted Rand
index, the fraction of points with the same label after matching labels
one to one, noise counts, and the largest probability and outlier-score
differences where the partitions are equal.

Exits nonzero when a case whose MST has no tied weights disagrees, in its
label array (numbers included), probabilities or scores (then the answer
is unique and every implementation must give it).
Fashion-MNIST's first 10,000 rows come from Debian's dataset-fashion-mnist
(apt-get install dataset-fashion-mnist) or OpenML; without either,
scikit-learn's digits are used and the table says so."""
import sys
import time

import numpy as np
from scipy.optimize import linear_sum_assignment
from sklearn import datasets
from sklearn.cluster import HDBSCAN as SkHDBSCAN
from sklearn.metrics import adjusted_rand_score

import grove
from grove.compat.hdbscan import HDBSCAN as CompatHDBSCAN

try:
    import hdbscan
except ImportError:
    hdbscan = None


FMNIST_IMAGES = "/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz"  # Debian dataset-fashion-mnist


def fashion_or_digits():
    """Fashion-MNIST's first 10,000 training rows: from Debian's
    dataset-fashion-mnist files, else OpenML, else scikit-learn's digits
    (and the table says which)."""
    try:
        import gzip
        with gzip.open(FMNIST_IMAGES) as f:
            raw = np.frombuffer(f.read(), dtype=np.uint8, offset=16)
        return "Fashion-MNIST, first 10,000 rows", raw.reshape(-1, 784)[:10000].astype(np.float64)
    except OSError:
        pass
    try:
        x = datasets.fetch_openml("Fashion-MNIST", version=1, as_frame=False, parser="auto").data[:10000]
        return "Fashion-MNIST, first 10,000 rows", np.asarray(x, dtype=np.float64)
    except Exception as e:  # no network: say so in the table
        print(f"(Fashion-MNIST not reachable: {type(e).__name__}; using scikit-learn's digits instead)",
              file=sys.stderr)
        return "digits (Fashion-MNIST unreachable), 1797 x 64", datasets.load_digits().data.astype(np.float64)


def data_sets(quick):
    blobs, _ = datasets.make_blobs(2000, centers=4, cluster_std=[0.5, 1.0, 1.5, 0.8], random_state=0)
    moons, _ = datasets.make_moons(2000, noise=0.08, random_state=0)
    n5 = 5000 if quick else 20000
    blobs5, _ = datasets.make_blobs(n5, n_features=5, centers=12, cluster_std=1.2, random_state=1)
    grid = np.round(datasets.make_blobs(3000, centers=5, cluster_std=1.2, random_state=2)[0] * 2) / 2
    yield "make_blobs 2000 x 2", blobs, [dict(min_cluster_size=15, k=2), dict(min_cluster_size=15, k=15)]
    yield "make_moons 2000 x 2", moons, [dict(min_cluster_size=20, k=2), dict(min_cluster_size=20, k=10)]
    yield f"blobs {n5} x 5, leaf", blobs5, [dict(min_cluster_size=20, k=2, cluster_selection_method="leaf"),
                                             dict(min_cluster_size=20, k=10, cluster_selection_method="leaf")]
    yield "blobs on a 0.5 grid 3000 x 2", grid, [dict(min_cluster_size=15, k=2), dict(min_cluster_size=15, k=8)]
    name, x = fashion_or_digits()
    yield name, x, [dict(min_cluster_size=20, k=2), dict(min_cluster_size=20, k=10)]


def matched_fraction(a, b):
    """Fraction of points whose labels agree after a one-to-one matching
    of the labels (noise matched to noise)."""
    la, lb = np.unique(a), np.unique(b)
    table = np.zeros((la.size, lb.size))
    np.add.at(table, (np.searchsorted(la, a), np.searchsorted(lb, b)), 1)
    rows, cols = linear_sum_assignment(-table)
    return table[rows, cols].sum() / len(a)


def same_partition(a, b):
    return adjusted_rand_score(a, b) == 1.0 and np.array_equal(a < 0, b < 0)


def compare(mine, ref, scores=None):
    a, b = mine.labels_, ref.labels_
    same = same_partition(a, b)
    prob = np.abs(mine.probabilities_ - ref.probabilities_).max() if same else np.nan
    score = np.nan
    if same and scores is not None:
        score = np.abs(mine.outlier_scores_ - np.nan_to_num(scores, nan=1.0)).max()
    return dict(ari=adjusted_rand_score(a, b), frac=matched_fraction(a, b), noise=(int((a < 0).sum()),
                int((b < 0).sum())), prob=prob, score=score, same=same, numbers=np.array_equal(a, b))


def main():
    quick = "--quick" in sys.argv
    failures = 0
    print("| data | params | distinct MST weights / edges | peer | ties | ARI | equal labels | noise grove / peer "
          "| max prob diff | max score diff |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, x, cases in data_sets(quick):
        for case in cases:
            kw = {key: v for key, v in case.items() if key != "k"}
            k = case["k"]
            weights = grove.HDBSCAN(min_samples=k, **kw).fit(x).minimum_spanning_tree_.to_numpy()[:, 2]
            distinct = len(np.unique(weights))
            tied = distinct < len(weights)
            params = ", ".join(f"{key}={v}" for key, v in kw.items()) + f", K={k}"
            t = time.perf_counter()
            peers = [("sklearn", SkHDBSCAN(min_samples=k, copy=True, **kw).fit(x), None)]
            if hdbscan is not None:
                algo = "generic" if len(x) <= 10000 else "prims_kdtree"
                ref = hdbscan.HDBSCAN(min_samples=k - 1, algorithm=algo, **kw).fit(x)
                peers.append((f"hdbscan {algo}", ref, ref.outlier_scores_))
            for peer, ref, scores in peers:
                for ties in ("ordered", "simultaneous"):
                    cls = grove.HDBSCAN if peer == "sklearn" else CompatHDBSCAN
                    mine = cls(min_samples=k if peer == "sklearn" else k - 1, ties=ties, **kw).fit(x)
                    r = compare(mine, ref, scores)
                    bad = not tied and not (r["numbers"] and r["prob"] < 1e-9 and not r["score"] > 1e-9)
                    failures += bad
                    print(f"| {name} | {params} | {distinct} / {len(weights)} | {peer} | {ties} | {r['ari']:.4f} | "
                          f"{r['frac']:.4f} | {r['noise'][0]} / {r['noise'][1]} | {r['prob']:.1e} | "
                          f"{r['score']:.1e} |{' **DISAGREES WITHOUT TIES**' if bad else ''}")
            print(f"({name}, {params}: {time.perf_counter() - t:.1f} s)", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
