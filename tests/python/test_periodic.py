"""Periodic boxes (boxsize=, as SciPy's cKDTree spells it) on grove.join,
grove.knn and grove.Index, against cKDTree(boxsize=...)'s query_pairs,
query_ball_point and query, and a NumPy minimum-image brute force where
SciPy is absent."""
import numpy as np
import pytest

import grove
from conftest import needs_join

pytestmark = needs_join


def min_image(x, q, box):
    """Minimum-image distances (nq, n) in float64; 0 in box = unbounded."""
    box = np.broadcast_to(np.asarray(box, dtype=np.float64), (x.shape[1],))
    t = np.abs(q[:, None, :].astype(np.float64) - x[None, :, :])
    t = np.where((box > 0) & (t > box / 2), box - t, t)
    return np.sqrt((t ** 2).sum(-1))


def ckdtree(x, box):
    spatial = pytest.importorskip("scipy.spatial")
    return spatial.cKDTree(x, boxsize=box)


def points_in(rng, n, box, d, lattice=False, dtype=np.float64):
    box = np.broadcast_to(np.asarray(box, dtype=np.float64), (d,))
    span = np.where(box > 0, box, 3.0)
    x = rng.random((n, d)) * span
    if lattice:
        x = np.floor(x * 4) / 4  # exact squared distances, many ties
    x = x.astype(dtype)
    return np.where(x < span, x, 0).astype(dtype)


BOXES = [(1, 1.0), (2, [1.0, 2.0]), (3, 4.0), (3, [3.0, 0.0, 5.0]), (8, 2.0)]


@pytest.mark.parametrize("d,box", BOXES)
@pytest.mark.parametrize("eps_frac", [0.1, 0.5, 0.8])
def test_join_equals_ckdtree_query_pairs_and_ball_point(rng, d, box, eps_frac):
    x = points_in(rng, 400, box, d)
    smallest = np.min(np.where(np.asarray(box) > 0, box, np.inf))
    eps = eps_frac * smallest * (np.sqrt(d) if eps_frac < 0.5 else 1)  # 0.5 and 0.8: half a box and beyond
    offsets, indices, dist = grove.join(x, eps, boxsize=box, distances=True)
    tree = ckdtree(x, box)
    pairs = tree.query_pairs(eps, output_type="ndarray")
    ref = min_image(x, x, box)
    boundary = np.abs(ref - eps) < 1e-9  # a pair within rounding of eps may go either way
    got = {(q, int(p)) for q in range(x.shape[0]) for p in indices[offsets[q]:offsets[q + 1]] if q < p}
    want = {(int(a), int(b)) for a, b in pairs}
    assert {e for e in got ^ want if not boundary[e]} == set()
    assert offsets[-1] == 2 * len(got) + x.shape[0]  # each pair from both ends, self pairs once
    assert np.allclose(dist, ref[np.repeat(np.arange(x.shape[0]), np.diff(offsets)), indices], rtol=1e-12, atol=0)
    q = points_in(rng, 60, box, d)
    qo, qi = grove.join(x, eps, q, boxsize=box)
    ball = tree.query_ball_point(q, eps)
    qref = min_image(x, q, box)
    for r in range(q.shape[0]):
        diff = set(qi[qo[r]:qo[r + 1]]) ^ set(ball[r])
        assert all(abs(qref[r, p] - eps) < 1e-9 for p in diff)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_lattice_join_is_exact_at_half_a_box(rng, dtype):
    box = [4.0, 3.0, 4.0]
    x = points_in(rng, 500, box, 3, lattice=True, dtype=dtype)
    ref = min_image(x, x, box)
    for eps in (1.5, 2.0, 2.25):  # 1.5 = half of the 3-box, 2 = half of the 4-boxes; lattice distances land on both
        offsets, indices = grove.join(x, eps, boxsize=box, exclude_self=True)
        for q in range(0, 500, 7):
            want = np.flatnonzero(ref[q] <= eps)
            assert np.array_equal(indices[offsets[q]:offsets[q + 1]], want[want != q])


@pytest.mark.parametrize("d,box", BOXES)
def test_knn_equals_ckdtree_query(rng, d, box):
    x = points_in(rng, 300, box, d)
    q = points_in(rng, 50, box, d)
    tree = ckdtree(x, box)
    for k in (1, 6, 300):  # 300: every point, far more than half a box holds
        gi, gd = grove.knn(x, k, q, boxsize=box)
        cd, ci = tree.query(q, k)
        cd, ci = np.asarray(cd).reshape(50, k), np.asarray(ci).reshape(50, k)
        assert np.allclose(gd, cd, rtol=1e-12, atol=0)
        assert np.array_equal(gi, ci)  # random data: no ties, so the same rows
    with grove.Index(x, boxsize=box) as ix:
        gi, gd = ix.knn(6, exclude_self=True)
        ref = min_image(x, x, box)
        np.fill_diagonal(ref, np.inf)
        order = np.lexsort((np.broadcast_to(np.arange(300), ref.shape), ref))[:, :6]
        assert np.array_equal(gi, order)


def test_knn_ties_by_lower_row_on_a_lattice(rng):
    box = 4.0
    x = points_in(rng, 400, box, 2, lattice=True)
    gi, gd = grove.knn(x, 12, boxsize=box)
    ref = min_image(x, x, box)
    order = np.lexsort((np.broadcast_to(np.arange(400), ref.shape), ref))[:, :12]
    assert np.array_equal(gi, order)
    assert np.array_equal(gd, np.take_along_axis(ref, order, 1))


def test_index_keeps_the_box_and_streams_it(rng):
    x = points_in(rng, 1000, [1.0, 0.0, 2.0], 3)
    with grove.Index(x, boxsize=[1.0, 0.0, 2.0]) as ix:
        assert np.array_equal(ix.boxsize, [1.0, 0.0, 2.0])
        offsets, indices = ix.join(0.15)
        counts = ix.count(0.15)
        batches = list(ix.join_batches(0.15, memory_budget=20_000))
    assert len(batches) > 1
    assert np.array_equal(np.concatenate([b.indices for b in batches]), indices)
    assert np.array_equal(counts, np.diff(offsets))
    with grove.Index(x) as plain:
        assert plain.boxsize is None
    csr = grove.join_csr(x, 0.15, boxsize=[1.0, 0.0, 2.0])
    assert np.array_equal(csr.indices, indices)


def test_points_outside_the_box_are_refused(rng):
    x = points_in(rng, 50, 1.0, 2)
    x[9, 1] = 1.0
    with pytest.raises(grove.InvalidArgumentError, match=r"row 9, dimension 1: coordinate 1 is outside"):
        grove.join(x, 0.1, boxsize=1.0)
    with pytest.raises(grove.InvalidArgumentError, match=r"row 9, dimension 1"):
        grove.knn(x, 2, boxsize=1.0)
    ok = points_in(rng, 50, 1.0, 2)
    with pytest.raises(grove.InvalidArgumentError, match=r"queries: row 9, dimension 1"):
        grove.knn(ok, 2, x, boxsize=1.0)
    with grove.Index(ok, boxsize=1.0) as ix:
        with pytest.raises(grove.InvalidArgumentError, match=r"queries: row 9"):
            ix.join(0.1, x)
    with pytest.raises(grove.InvalidArgumentError, match=r"boxsize\[1\] = -1"):
        grove.join(ok, 0.1, boxsize=[1.0, -1.0])
    with pytest.raises(grove.InvalidArgumentError, match=r"3 lengths"):
        grove.join(ok, 0.1, boxsize=[1.0, 1.0, 1.0])
    with pytest.raises(grove.InvalidArgumentError, match=r"boxsize: expected"):
        grove.Index(ok, boxsize=[[1.0, 1.0]])


def test_cli_box_matches_the_binding(rng, cli, tmp_path):
    x = points_in(rng, 800, [1.0, 2.0], 2)
    np.save(tmp_path / "x.npy", x)
    summary = cli("knn", "x.npy", "-k", 4, "--box", "1,2", "--indices", "i.npy", "--distances", "d.npy")
    assert summary["periodic"] is True
    gi, gd = grove.knn(x, 4, boxsize=[1.0, 2.0])
    assert np.array_equal(np.load(tmp_path / "i.npy"), gi)
    assert np.array_equal(np.load(tmp_path / "d.npy"), gd)
    summary = cli("join", "x.npy", "--eps", 0.1, "--box", "1,2", "--offsets", "o.npy", "--indices", "j.npy")
    offsets, indices = grove.join(x, 0.1, boxsize=[1.0, 2.0])
    assert summary["pairs"] == offsets[-1]
    assert np.array_equal(np.load(tmp_path / "j.npy"), indices)
