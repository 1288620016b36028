"""grove.compat.balltree against balltree-erwin and grove.compat.hdbscan
against the hdbscan library, where those are installed."""
import importlib.util
import math
import sys
import types

import numpy as np
import pytest

import grove
from grove.compat import balltree as compat_bt
from grove.compat.hdbscan import HDBSCAN as CompatHDBSCAN


@pytest.fixture(scope="module")
def erwin():
    """balltree-erwin; it imports torch at module level but its NumPy entry
    points never use it, so without torch a stand-in is put in place while
    it is imported (and removed afterwards)."""
    standin = importlib.util.find_spec("torch") is None
    if standin:
        torch = types.ModuleType("torch")
        torch.Tensor = type("Tensor", (), {})
        torch.compiler = types.SimpleNamespace(disable=lambda fn=None, recursive=True: (lambda f: f))
        sys.modules["torch"] = torch
    try:
        return pytest.importorskip("balltree")
    finally:
        if standin:
            del sys.modules["torch"]


def leaf_sets(indices, mask=None, size=2):
    """Leaves as sets of rows (padding dropped), leaf by leaf."""
    idx = np.asarray(indices).reshape(-1, size)
    real = np.ones_like(idx, bool) if mask is None else np.asarray(mask).reshape(-1, size)
    return [frozenset(i[r].tolist()) for i, r in zip(idx, real)]


def sorted_batches(rng, n, d, batches):
    return rng.random((n, d)), np.sort(rng.integers(0, batches, n))


def test_full_trees_equal_erwin(erwin, rng):
    for n, d, b in [(1000, 3, 1), (2000, 2, 5), (777, 4, 3)]:
        x, batch = sorted_batches(rng, n, d, b)
        gi, gm = compat_bt.build_balltree_with_idx(x, batch)
        ei, em = erwin.build_balltree_with_idx(x, batch)
        assert gi.dtype == ei.dtype and gm.dtype == np.bool_
        assert np.array_equal(gm, em) and leaf_sets(gi, gm) == leaf_sets(ei, em)
        offsets = np.searchsorted(batch, np.arange(b + 1))
        oi, om = compat_bt.build_balltree_with_offsets(x, offsets)
        assert np.array_equal(oi, gi) and np.array_equal(om, gm)


def test_partitions_equal_erwin(erwin, rng):
    # four batches of 256 rows: every level's leaves have equal sizes, so
    # they can be compared as sets, leaf by leaf, at every level
    x, batch = rng.random((1024, 3)), np.repeat(np.arange(4), 256)
    offsets = np.searchsorted(batch, np.arange(5))
    for level in (0, 2, 5):
        gi = compat_bt.partition_balltree_with_idx(x, batch, level)
        ei = erwin.partition_balltree_with_idx(x, batch, level)
        assert leaf_sets(gi, size=256 // 2 ** level) == leaf_sets(ei, size=256 // 2 ** level)
        assert np.array_equal(compat_bt.partition_balltree_with_offsets(x, offsets, level), gi)


def erwin_rotations(erwin, x, batch, strides, ball_sizes, angle):
    """balltree-erwin's build_balltree_with_rotations, step for step on its
    NumPy entry points (its own version needs torch)."""
    idx, mask = erwin.build_balltree_with_idx(x, batch)
    leaves, leaf_batch = x[idx], batch[idx]
    levels = [max(0, int(math.log2(leaves.shape[0] / s))) for s in ball_sizes]
    rotated = leaves @ np.asarray(compat_bt.generate_rotation_matrix(angle, x.shape[1]), dtype=x.dtype)
    out = []
    for i, level in enumerate(levels):
        out.append(erwin.partition_balltree_with_idx(rotated.astype(np.float64), leaf_batch, level))
        if i < len(strides):
            rotated = rotated.reshape(-1, strides[i], x.shape[1]).mean(axis=1)
            leaf_batch = leaf_batch[::strides[i]]
    return idx, mask, out


def rows_behind(tree_idx, positions, size, factor):
    """Leaves of `size` positions of a rotated tree whose positions each pool
    `factor` consecutive main-tree slots, as sets of input rows."""
    slots = positions.reshape(-1, size)[:, :, None] * factor + np.arange(factor)
    return [frozenset(tree_idx[leaf.ravel()].tolist()) for leaf in slots]


def test_rotated_trees_equal_erwin(erwin, rng):
    x = rng.random((1024, 3)).astype(np.float32)
    batch = np.repeat(np.arange(2), 512)
    strides, sizes = [4, 4], [16, 16, 8]
    gi, gm, grot = compat_bt.build_balltree_with_rotations(x, batch, strides, sizes, angle=45.0)
    ei, em, erot = erwin_rotations(erwin, x, batch, strides, sizes, 45.0)
    assert leaf_sets(gi, gm) == leaf_sets(ei, em)
    # Rotated trees index the main tree's slots (pooled by the strides), whose
    # order inside a leaf pair is arbitrary in balltree-erwin: compare the input
    # rows behind each rotated leaf.
    factor = 1
    for layer, (g, e) in enumerate(zip(grot, erot)):
        assert rows_behind(gi, g, sizes[layer], factor) == rows_behind(ei, e, sizes[layer], factor)
        factor *= strides[layer] if layer < len(strides) else 1
    none = compat_bt.build_balltree_with_rotations(x, batch, strides, sizes, angle=0)
    assert none[2] == [None, None, None]


def test_rotation_matrices_are_erwins():
    r2 = compat_bt.generate_rotation_matrix(30, 2)
    assert np.allclose(np.asarray(r2), [[math.sqrt(3) / 2, -0.5], [0.5, math.sqrt(3) / 2]], atol=1e-7)
    # balltree-erwin's 3-D formula, at 90 degrees
    r3 = compat_bt.generate_rotation_matrix(90, 3)
    assert np.allclose(np.asarray(r3), [[0, 0, 1], [0, 1, 0], [-1, 0, 0]], atol=1e-7)
    with pytest.raises(ValueError, match="Unsupported dimension"):
        compat_bt.generate_rotation_matrix(45, 4)


def test_tensor_functions_take_arrays_without_torch(rng):
    x = rng.random((64, 3))
    batch = np.zeros(64, dtype=np.int64)
    indices, mask = compat_bt.build_balltree(x, batch)
    assert np.array_equal(indices, grove.balltree(x).indices)
    assert compat_bt.partition_balltree(x, batch, 2).shape == (64,)


def test_tensor_functions_return_tensors(rng):
    torch = pytest.importorskip("torch")
    x, batch = torch.from_numpy(rng.random((64, 3))), torch.zeros(64, dtype=torch.long)
    indices, mask = compat_bt.build_balltree(x, batch)
    assert isinstance(indices, torch.Tensor) and mask.dtype == torch.bool


@pytest.mark.parametrize("call, match", [
    (lambda x: compat_bt.build_balltree_with_offsets(x, np.array([0, 5, 5, 10])), "Invalid batch offsets at index 1"),
    (lambda x: compat_bt.build_balltree_with_offsets(x, np.array([0])), "at least 2"),
    (lambda x: compat_bt.build_balltree_with_idx(x, np.zeros(3, np.int64)), "must match"),
    (lambda x: compat_bt.partition_balltree_with_idx(x, np.zeros(10, np.int64), -1), "non-negative"),
    (lambda x: compat_bt.build_balltree_with_rotations(x, np.zeros(10, np.int64), [2], [4]), "one less"),
])
def test_compat_balltree_errors_are_value_errors(call, match):
    with pytest.raises(ValueError, match=match):
        call(np.random.default_rng(0).random((10, 3)))


def blobs(rng):
    centers = rng.uniform(-10, 10, size=(5, 2))
    x = centers[rng.integers(0, 5, 1500)] + rng.normal(0, 0.7, size=(1500, 2)) * rng.uniform(0.3, 2, (1500, 1))
    return np.vstack([x, rng.uniform(-12, 12, size=(75, 2))])


def same_partition(a, b):
    if not np.array_equal(a < 0, b < 0):
        return False
    pairs = set(zip(a[a >= 0].tolist(), b[b >= 0].tolist()))
    return len(pairs) == len(set(a[a >= 0].tolist())) == len(set(b[b >= 0].tolist()))


@pytest.mark.parametrize("params", [dict(min_cluster_size=5, min_samples=1),
                                    dict(min_cluster_size=15, min_samples=1, cluster_selection_method="leaf"),
                                    dict(min_cluster_size=10, min_samples=1, cluster_selection_epsilon=0.5)])
def test_clusterings_equal_hdbscan(rng, params):
    """Library min_samples = 1 (grove K = 2): mutual-reachability weights
    without ties on generic data, so the clusterings must agree exactly
    (for larger min_samples, equal-weight merges may be ordered either way;
    see tests/python/compare_hdbscan.py)."""
    hdbscan = pytest.importorskip("hdbscan")
    x = blobs(rng)
    mine = CompatHDBSCAN(**params).fit(x)
    ref = hdbscan.HDBSCAN(**params, approx_min_span_tree=False, algorithm="prims_kdtree").fit(x)
    assert same_partition(mine.labels_, ref.labels_) and mine.labels_.max() > 0
    assert np.allclose(mine.probabilities_, ref.probabilities_, atol=1e-9, rtol=0)
    assert np.allclose(mine.outlier_scores_, np.nan_to_num(ref.outlier_scores_, nan=1.0), atol=1e-9, rtol=0)


def test_min_samples_is_the_librarys(rng):
    x = blobs(rng)
    for ms, k in [(None, 11), (4, 5)]:
        compat = CompatHDBSCAN(min_cluster_size=10, min_samples=ms).fit(x)
        native = grove.HDBSCAN(min_cluster_size=10, min_samples=k).fit(x)
        assert np.array_equal(compat.labels_, native.labels_)


@pytest.mark.parametrize("kwargs, match", [({"metric": "manhattan"}, "Euclidean"), ({"metric": "minkowski", "p": 1},
                                                                                   "Euclidean"),
                                           ({"metric": "precomputed"}, "precomputed"),
                                           ({"metric": "seuclidean"}, "needs V"),
                                           ({"branch_detection_data": True}, "branch"),
                                           ({"V": np.eye(2)}, "metric arguments")])
def test_unsupported_hdbscan_parameters_are_refused(kwargs, match):
    with pytest.raises(grove.UnsupportedError, match=match):
        CompatHDBSCAN(**kwargs).fit(np.zeros((10, 2)))


def test_refused_metrics_are_value_errors_as_in_the_library():
    for metric in ("cosine", "precomputed", "imperial", None):
        with pytest.raises(ValueError):
            CompatHDBSCAN(metric=metric).fit(np.zeros((10, 2)))


def test_ignored_hdbscan_parameters_are_accepted(rng):
    x = blobs(rng)
    a = CompatHDBSCAN(algorithm="boruvka_kdtree", leaf_size=10, approx_min_span_tree=True, core_dist_n_jobs=1,
                      metric="l2").fit(x)
    assert np.array_equal(a.labels_, CompatHDBSCAN().fit(x).labels_)
    assert CompatHDBSCAN().get_params()["core_dist_n_jobs"] == 4
