#!/usr/bin/env python3
"""Compare `grove hdbscan` with the `hdbscan` Python library (optional: not
part of `make check`; run by hand where hdbscan is installed).

    python3 tests/python/compare_hdbscan.py [build/grove]

For several clustered data sets and parameter sets it checks two things:

1. The library's own tree code (label, condense_tree, compute_stability,
   get_clusters, outlier_scores) run on grove's MST, each edge turned to
   start at its end nearer point 0 (as the library's Prim from point 0
   gives it), gives exactly grove's labels (same numbering),
   probabilities and outlier scores.
2. End to end against hdbscan.HDBSCAN (exact Prim MST): the same labels,
   numbers included, and probabilities and outlier scores to 1e-9,
   whenever the mutual-reachability weights have no ties between
   different edges, which holds for K = 2 on generic data. For K > 2 many edges weigh
   exactly a core distance, equal-weight merges can be ordered either way
   (grove: by (weight, u, v); the library: by its Prim order and an
   unstable argsort), and the condensed trees may legitimately differ;
   there the adjusted Rand index is printed for information.

grove's min_samples K counts the point itself; the library's is K - 1.
Exits nonzero on any disagreement in 1 or 2 (K = 2)."""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import breadth_first_order
from sklearn.metrics import adjusted_rand_score

try:
    import hdbscan
    from hdbscan._hdbscan_linkage import label
    from hdbscan._hdbscan_tree import compute_stability, condense_tree, get_clusters, outlier_scores
except ImportError:
    print("hdbscan is not installed: nothing to compare (pip install hdbscan)")
    sys.exit(0)

GROVE = sys.argv[1] if len(sys.argv) > 1 else "build/grove"


def datasets():
    rng = np.random.default_rng(7)
    for n, d, centers, sd in [(600, 2, 4, 0.5), (2000, 2, 8, 0.8), (1500, 3, 5, 1.0), (800, 5, 3, 0.7),
                              (3000, 2, 12, 1.5)]:
        c = rng.uniform(-10, 10, size=(centers, d))
        x = c[rng.integers(0, centers, n)] + rng.normal(0, sd, size=(n, d)) * rng.uniform(0.3, 2, size=(n, 1))
        noise = rng.uniform(-12, 12, size=(n // 20, d))
        yield f"blobs n={n} d={d}", np.vstack([x, noise])


def from_point_zero(edges):
    """The edges (u, v) turned so that u is the end nearer point 0 in
    the tree they form."""
    n = len(edges) + 1
    tree = coo_matrix((np.ones(n - 1), (edges[:, 0], edges[:, 1])), shape=(n, n))
    _, parent = breadth_first_order(tree, 0, directed=False)
    turn = parent[edges[:, 0]] == edges[:, 1]
    return np.where(turn[:, None], edges[:, ::-1], edges)


def run(*args):
    out = subprocess.run([GROVE, *map(str, args)], check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main():
    failures = cases = 0
    with tempfile.TemporaryDirectory() as tmp:
        lab, prob, sco, edges, weights, path = (os.path.join(tmp, f) for f in
                                                ("l.npy", "p.npy", "s.npy", "e.npy", "w.npy", "x.npy"))
        for name, x in datasets():
            np.save(path, x)
            for mcs, k, sel, eps in [(5, 2, "eom", 0.0), (15, 2, "leaf", 0.0), (10, 2, "eom", 0.5),
                                     (5, 5, "eom", 0.0), (15, 5, "eom", 0.0), (10, 10, "leaf", 0.0),
                                     (25, 3, "eom", 0.0), (10, 4, "eom", 0.5), (8, 8, "leaf", 0.3)]:
                cases += 1
                summary = run("hdbscan", path, "--min-cluster-size", mcs, "--min-samples", k, "--selection", sel,
                              "--epsilon", eps, "--labels", lab, "--probabilities", prob, "--outlier-scores", sco,
                              "--json")
                mine, my_p, my_s = np.load(lab), np.load(prob), np.load(sco)
                # 1. The library's tree code on grove's MST.
                run("emst", path, "--mutual-reachability", k, "--edges", edges, "--weights", weights, "--json")
                mst = np.column_stack([from_point_zero(np.load(edges)).astype(float), np.load(weights)])
                tree = condense_tree(label(mst), mcs)
                l1, p1, _ = get_clusters(tree, compute_stability(tree), sel, False, False, eps)
                s1 = np.nan_to_num(outlier_scores(tree), nan=1.0)
                same_tree = (np.array_equal(mine, l1) and np.allclose(my_p, p1, atol=1e-12, rtol=0)
                             and np.allclose(my_s, s1, atol=1e-12, rtol=0))
                # 2. End to end.
                ref = hdbscan.HDBSCAN(min_cluster_size=mcs, min_samples=k - 1, cluster_selection_method=sel,
                                      cluster_selection_epsilon=eps, approx_min_span_tree=False,
                                      algorithm="prims_kdtree").fit(x)
                same = np.array_equal(mine, ref.labels_)
                close = (np.allclose(my_p, ref.probabilities_, atol=1e-9, rtol=0) and
                         np.allclose(my_s, np.nan_to_num(ref.outlier_scores_, nan=1.0), atol=1e-9, rtol=0))
                ari = adjusted_rand_score(mine, ref.labels_)
                ok = same_tree and (k > 2 or (same and close))
                failures += not ok
                print(f"{'ok  ' if ok else 'FAIL'} {name} mcs={mcs} K={k} {sel} eps={eps}: "
                      f"{summary['clusters']} clusters (hdbscan {ref.labels_.max() + 1}); library tree code on "
                      f"grove's MST {'identical' if same_tree else 'DIFFERS'}; end to end: labels "
                      f"{'same' if same else 'differ'}, scores {'same' if close else 'differ'}, ARI {ari:.4f}")
    print(f"{cases - failures} of {cases} cases pass")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
