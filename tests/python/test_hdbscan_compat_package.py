"""grove.compat.hdbscan laid out as the hdbscan library is: its modules
import under the library's names, validity_index is DBCV (a closed form,
a dense reference from the definition, and the library where installed),
robust single linkage is its definition (and the library's generic
algorithm where installed), and what grove does not provide refuses
every call naming the library."""
import importlib

import numpy as np
import pytest

import grove
from grove.compat import hdbscan as compat

from conftest import same_partition

# The library's public modules and the names its __init__ exports.
MODULES = {"hdbscan_": ["HDBSCAN", "hdbscan"],
           "prediction": ["approximate_predict", "approximate_predict_scores", "membership_vector",
                          "all_points_membership_vectors"],
           "validity": ["validity_index"],
           "plots": ["CondensedTree", "SingleLinkageTree", "MinimumSpanningTree"],
           "robust_single_linkage_": ["RobustSingleLinkage", "robust_single_linkage"],
           "branches": ["BranchDetector", "detect_branches_in_clusters", "approximate_predict_branch"],
           "flat": ["HDBSCAN_flat", "approximate_predict_flat", "membership_vector_flat",
                    "all_points_membership_vectors_flat"],
           "_prediction_utils": ["safe_always_positive_division"]}
IN_INIT = ("hdbscan_", "prediction", "validity", "plots", "robust_single_linkage_", "branches")


def blobs(seed, n=240, d=2, centers=3):
    rng = np.random.default_rng(seed)
    c = rng.uniform(-8, 8, (centers, d))
    x = c[rng.integers(0, centers, n)] + rng.normal(0, 0.8, (n, d))
    return np.vstack([x, rng.uniform(-10, 10, (n // 12, d))])


def cdist(a, b):
    return np.sqrt(((a[:, None, :] - b[None, :, :]) ** 2).sum(axis=-1))


def prim(w):
    """Prim's MST of a dense weight matrix: edges (n - 1, 2), weights."""
    n = len(w)
    in_tree, best, source = np.zeros(n, bool), w[0].copy(), np.zeros(n, int)
    in_tree[0] = True
    edges, weights = [], []
    for _ in range(n - 1):
        nearest = int(np.argmin(np.where(in_tree, np.inf, best)))
        edges.append((source[nearest], nearest))
        weights.append(best[nearest])
        in_tree[nearest] = True
        closer = w[nearest] < best
        best[closer], source[closer] = w[nearest][closer], nearest
    return np.array(edges), np.array(weights)


def components(adjacent):
    """Connected components of a dense boolean adjacency matrix."""
    comp = np.full(len(adjacent), -1)
    for start in range(len(adjacent)):
        if comp[start] >= 0:
            continue
        comp[start], stack = start, [start]
        while stack:
            for b in np.flatnonzero(adjacent[stack.pop()] & (comp < 0)):
                comp[b] = start
                stack.append(b)
    return comp


def test_the_librarys_modules_import_under_its_names():
    for module, names in MODULES.items():
        mod = importlib.import_module(f"grove.compat.hdbscan.{module}")
        for name in names:
            assert callable(getattr(mod, name)), f"{module}.{name}"
            if module in IN_INIT:
                assert getattr(compat, name) is getattr(mod, name), name


@pytest.mark.parametrize("module, name", [(m, n) for m, names in MODULES.items() if m in ("branches", "flat",
                                                                                      "_prediction_utils")
                                          for n in names])
def test_what_grove_lacks_is_refused_naming_the_library(module, name):
    call = getattr(importlib.import_module(f"grove.compat.hdbscan.{module}"), name)
    with pytest.raises(grove.UnsupportedError, match=f"hdbscan.{module}.{name}: .*use the hdbscan library"):
        call(np.zeros((4, 2)))


def test_branch_detection_data_is_refused():
    model = compat.HDBSCAN(min_cluster_size=5).fit(blobs(1))
    with pytest.raises(grove.UnsupportedError, match="no branch detection"):
        model.generate_branch_detection_data()


# -- validity_index -------------------------------------------------------

def test_validity_index_closed_form():
    """Two pairs 1 apart, 10 apart from each other, and a noise point:
    each pair's all-points core distance is (1^-2 / 1)^(-1/2) = 1, its
    tree one edge of weight 1 (no internal node: the first point stands
    in), its separation from the other max(10, 1, 1) = 10, so each scores
    (10 - 1) / 10 and the index is 4 / 5 of 0.9."""
    x = np.array([[0.0, 0], [1, 0], [10, 0], [11, 0], [50, 50]])
    labels = np.array([0, 0, 1, 1, -1])
    score, per_cluster = compat.validity_index(x, labels, per_cluster_scores=True)
    assert score == pytest.approx(0.72, rel=1e-15)
    np.testing.assert_allclose(per_cluster, [0.9, 0.9], rtol=1e-15)
    assert np.isnan(compat.validity_index(x[:2], labels[:2]))  # a lone cluster has no separation (the library: NaN)


def dense_dbcv_raw(x, labels):
    """DBCV with plain distances (mst_raw_dist=True), from the definition
    with dense matrices: internal nodes of each cluster's MST, sparseness
    the heaviest edge between them, separation the least distance between
    two clusters' internal nodes."""
    clusters = range(labels.max() + 1)
    internal, sparse = {}, {}
    for c in clusters:
        p = x[labels == c]
        edges, weights = prim(cdist(p, p))
        inner = np.flatnonzero(np.bincount(edges.ravel(), minlength=len(p)) > 1)
        inner = inner if len(inner) else np.array([0])
        between = np.isin(edges, inner).all(axis=1)
        internal[c], sparse[c] = p[inner], (weights[between] if between.any() else weights).max()
    total = 0.0
    for c in clusters:
        sep = min(cdist(internal[c], internal[o]).min() for o in clusters if o != c)
        total += (labels == c).sum() / len(x) * (sep - sparse[c]) / max(sep, sparse[c])
    return total


def test_validity_index_with_plain_distances_is_the_definition():
    for seed in range(3):
        x = blobs(seed)
        labels = compat.HDBSCAN(min_cluster_size=10).fit(x).labels_
        assert labels.max() >= 1
        want = dense_dbcv_raw(x, labels)
        assert compat.validity_index(x, labels, mst_raw_dist=True) == pytest.approx(want, rel=1e-12)
        d = cdist(x, x)
        assert compat.validity_index(d, labels, metric="precomputed", d=2, mst_raw_dist=True) == \
            pytest.approx(want, rel=1e-12)


def test_validity_index_equals_the_librarys():
    validity = pytest.importorskip("hdbscan.validity")
    for seed in range(4):
        x = blobs(seed, d=2 + seed % 2)
        labels = compat.HDBSCAN(min_cluster_size=8).fit(x).labels_
        for kw in (dict(), dict(mst_raw_dist=True)):
            mine, mine_each = compat.validity_index(x, labels, per_cluster_scores=True, **kw)
            ref, ref_each = validity.validity_index(x, labels, per_cluster_scores=True, **kw)
            assert mine == pytest.approx(ref, rel=1e-9, abs=1e-12), (seed, kw)
            np.testing.assert_allclose(mine_each, ref_each, rtol=1e-9, atol=1e-12)
        d = cdist(x, x)
        assert compat.validity_index(d, labels, metric="precomputed", d=x.shape[1]) == \
            pytest.approx(validity.validity_index(d, labels, metric="precomputed", d=x.shape[1]), rel=1e-9)


def test_validity_index_refusals():
    x, labels = blobs(1), np.zeros(len(blobs(1)), dtype=int)
    with pytest.raises(grove.InvalidArgumentError, match="d value must be provided"):
        compat.validity_index(cdist(x, x), labels, metric="precomputed")
    with pytest.raises(grove.UnsupportedMetricError, match="manhattan"):
        compat.validity_index(x, labels, metric="manhattan")
    with pytest.raises(grove.InvalidArgumentError, match="cluster 1 has one point"):
        compat.validity_index(x, np.r_[labels[:-1], 1])


# -- robust single linkage -----------------------------------------------

def robust_single_linkage_reference(x, cut, k, alpha, gamma):
    """Components of the mutual reachability max(core(a), core(b), |a - b|
    / alpha) below cut (core: the k-th neighbour besides the point),
    those of fewer than gamma points noise; and the MST's weights."""
    d = cdist(x, x)
    core = np.sort(d, axis=1)[:, k]
    mr = np.maximum(d / alpha, np.maximum.outer(core, core))
    comp = components(mr < cut)
    sizes = np.bincount(comp)
    return np.where(sizes[comp] < gamma, -1, comp), np.sort(prim(mr)[1])


@pytest.mark.parametrize("k, alpha, gamma, cut", [(5, 1.4142135623730951, 5, 0.8), (3, 1.0, 10, 0.5),
                                                  (8, 2.0, 4, 1.0)])
def test_robust_single_linkage_is_its_definition(k, alpha, gamma, cut):
    x = blobs(4)
    labels, tree = compat.robust_single_linkage(x, cut, k=k, alpha=alpha, gamma=gamma)
    want, weights = robust_single_linkage_reference(x, cut, k, alpha, gamma)
    assert same_partition(labels, want) and labels.max() >= 1
    np.testing.assert_allclose(np.sort(tree[:, 2]), weights, rtol=1e-12)
    model = compat.RobustSingleLinkage(cut=cut, k=k, alpha=alpha, gamma=gamma).fit(x)
    np.testing.assert_array_equal(model.labels_, labels)
    np.testing.assert_array_equal(model.cluster_hierarchy_.to_numpy(), tree)
    np.testing.assert_array_equal(model.cluster_hierarchy_.get_clusters(cut, gamma), labels)


def test_robust_single_linkage_equals_the_librarys_generic():
    """The library's generic algorithm (which leaves alpha out, so alpha 1
    here) gives the same partition."""
    hdbscan = pytest.importorskip("hdbscan")
    for seed in range(3):
        x = blobs(seed)
        labels, _ = compat.robust_single_linkage(x, 0.8, k=4, alpha=1.0)
        ref, _ = hdbscan.robust_single_linkage(x, 0.8, k=4, alpha=1.0, algorithm="generic")
        assert same_partition(labels, ref)


def test_robust_single_linkage_checks_as_the_library():
    x = blobs(2)
    for kw, error in [(dict(k=0), ValueError), (dict(alpha=0.5), ValueError), (dict(alpha=2), ValueError),
                      (dict(gamma=0), ValueError), (dict(leaf_size=0), ValueError),
                      (dict(algorithm="other"), TypeError), (dict(metric="minkowski", p=None), TypeError),
                      (dict(metric="precomputed"), ValueError)]:
        with pytest.raises(error):
            compat.robust_single_linkage(x, 0.4, **kw)
    x[3, 1] = np.nan
    with pytest.raises(ValueError):
        compat.robust_single_linkage(x, 0.4)
