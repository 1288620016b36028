"""A 1-D array is n points in one dimension, as the CLI reads an (n,) .npy
file; the scikit-learn-style estimators keep refusing 1-D X."""
import numpy as np
import pytest

import grove
from grove.compat.hdbscan import HDBSCAN as CompatHDBSCAN


@pytest.fixture
def line(rng):
    """400 distinct values (no ties between distances to worry about)."""
    return rng.permutation(np.cumsum(rng.uniform(0.5, 1.5, 400)))


def test_emst_of_values_joins_neighbours_in_sorted_order(line):
    edges, weights = grove.emst(line)
    order = np.argsort(line)
    want = {tuple(sorted(p)) for p in zip(order[:-1], order[1:])}
    assert {tuple(e) for e in edges} == want
    assert np.allclose(np.sort(weights), np.sort(np.diff(line[order])), rtol=1e-15, atol=0)


def test_knn_join_and_core_distances_equal_brute_force(line):
    dist = np.abs(line[:, None] - line[None])
    indices, distances = grove.knn(line, 5)
    assert np.array_equal(indices, np.argsort(dist, axis=1, kind="stable")[:, :5])
    assert np.allclose(distances, np.sort(dist, axis=1)[:, :5], rtol=1e-15, atol=0)
    offsets, found = grove.join(line, 2.0)
    for q in range(line.size):
        assert np.array_equal(found[offsets[q]:offsets[q + 1]], np.flatnonzero(dist[q] <= 2.0))
    assert np.allclose(grove.core_distances(line, 4), np.sort(dist, axis=1)[:, 3], rtol=1e-15, atol=0)


def test_index_takes_1d_points_and_1d_queries(line):
    queries = line[:50] + 0.25
    with grove.Index(line) as ix:
        assert (ix.n, ix.d) == (line.size, 1)
        indices, distances = ix.knn(3, queries)
    dist = np.abs(queries[:, None] - line[None])
    assert np.array_equal(indices, np.argsort(dist, axis=1, kind="stable")[:, :3])


def test_balltree_of_values_is_a_valid_tree(line):
    tree = grove.balltree(line)
    tree.check()
    indices, mask = tree
    assert np.array_equal(np.sort(indices[mask]), np.arange(line.size))


def test_strided_1d_input_is_read_in_place(spy, line):
    calls = spy("grove_emst")
    grove.emst(line[::2])
    points = calls[-1][0]
    assert (points.data, points.n, points.d, points.stride) == (line.ctypes.data, 200, 1, 16)


def test_1d_npy_gives_what_the_cli_gives(cli, tmp_path, line):
    np.save(tmp_path / "x.npy", line)
    cli("emst", "x.npy", "--edges", "e.npy", "--weights", "w.npy")
    edges, weights = grove.emst(line)
    assert np.array_equal(edges, np.load(tmp_path / "e.npy"))
    assert np.array_equal(weights, np.load(tmp_path / "w.npy"))


@pytest.mark.parametrize("estimator", [grove.HDBSCAN, CompatHDBSCAN])
def test_estimators_refuse_1d_x(estimator, line):
    # scikit-learn's message where it is installed, grove's stand-in's otherwise
    with pytest.raises(ValueError, match="(?is)2D array.*reshape"):
        estimator(min_cluster_size=5).fit(line)
