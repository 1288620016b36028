"""grove.join / join_csr / join_batches / knn / Index against brute force."""
import numpy as np
import pytest

import grove
from conftest import needs_join

pytestmark = needs_join


def brute_distances(x, q):
    return np.sqrt(((q[:, None, :].astype(np.float64) - x[None, :, :]) ** 2).sum(-1))


def brute_join(x, q, eps):
    dist = brute_distances(x, q)
    return [np.flatnonzero(r <= eps) for r in dist], dist


def test_self_join_equals_brute_force_integer_data(rng):
    x = rng.integers(0, 8, size=(400, 3)).astype(np.float64)  # exact: integer distances^2
    for eps in (0.0, 1.0, 2.0):
        offsets, indices, dist = grove.join(x, eps, distances=True)
        rows, d = brute_join(x, x, eps)
        assert offsets[0] == 0 and offsets.size == 401
        for q, r in enumerate(rows):
            assert np.array_equal(indices[offsets[q]:offsets[q + 1]], r)
            assert np.allclose(dist[offsets[q]:offsets[q + 1]], d[q, r])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_semi_join_and_exclude_self(rng, dtype):
    x = rng.random((300, 4)).astype(dtype)
    q = rng.random((50, 4)).astype(dtype)
    offsets, indices = grove.join(x, 0.3, q)
    rows, d = brute_join(x, q, 0.3)
    for i, r in enumerate(rows):
        got = indices[offsets[i]:offsets[i + 1]]
        boundary = np.abs(d[i] - 0.3) < 1e-5  # a pair within one rounding of eps may go either way
        assert set(got[~boundary[got]]) == set(r[~boundary[r]])
    offsets, indices = grove.join(x, 0.3, exclude_self=True)
    assert not any(i in indices[offsets[i]:offsets[i + 1]] for i in range(300))


def test_csr_and_batches_agree_with_join(rng):
    pytest.importorskip("scipy")
    x = rng.random((500, 3))
    offsets, indices, dist = grove.join(x, 0.15, distances=True)
    m = grove.join_csr(x, 0.15)
    assert m.shape == (500, 500) and np.array_equal(m.indptr, offsets) and np.array_equal(m.indices, indices)
    assert np.array_equal(m.data, dist)
    # The budget holds the 8-byte count of every query, then batches of ~4 KiB.
    batches = list(grove.join_batches(x, 0.15, distances=True, memory_budget=500 * 8 + 4096))
    assert len(batches) > 1 and batches[0].query_begin == 0 and batches[-1].query_end == 500
    assert np.array_equal(np.concatenate([b.indices for b in batches]), indices)
    assert np.array_equal(np.concatenate([b.distances for b in batches]), dist)
    for b in batches:
        assert np.array_equal(b.offsets + b.pairs_before, offsets[b.query_begin:b.query_end + 1])


def test_stopping_a_stream_early_cancels_it(rng):
    x = rng.random((2000, 3))
    with grove.Index(x) as ix:
        stream = ix.join_batches(0.05, memory_budget=2000 * 8 + 2048)
        first = next(stream)
        stream.close()
        assert first.query_begin == 0
        assert ix.count(0.05).sum() == grove.join(x, 0.05)[0][-1]  # the index is still usable


def test_a_batch_over_budget_is_refused(rng):
    x = np.zeros((100, 2))
    with pytest.raises(grove.OverBudgetError):
        list(grove.join_batches(x, 1.0, memory_budget=64))


@pytest.mark.parametrize("exclude_self", [False, True])
def test_knn_equals_brute_force(rng, exclude_self):
    x = rng.random((300, 3))
    q = None if exclude_self else rng.random((40, 3))
    indices, dist = grove.knn(x, 5, q, exclude_self)
    full = brute_distances(x, x if q is None else q)
    if exclude_self:
        np.fill_diagonal(full, np.inf)
    order = np.lexsort((np.broadcast_to(np.arange(300), full.shape), full), axis=1)[:, :5]
    assert np.array_equal(indices, order)
    assert np.allclose(dist, np.take_along_axis(full, order, axis=1))


def test_index_is_reusable_and_reports_its_shape(rng):
    x = rng.random((1000, 5)) * np.array([1, 10, 0.1, 5, 2])
    with grove.Index(x, leaf_size=8) as ix:
        assert (ix.n, ix.d, ix.leaf_size) == (1000, 5, 8)
        assert ix.dim_order.tolist() == [1, 3, 4, 0, 2]  # by variance, highest first
        i1, d1 = ix.knn(3)
        i2, d2 = grove.knn(x, 3)
        assert np.array_equal(i1, i2) and np.array_equal(d1, d2)
        o1, j1 = ix.join(0.5)
        o2, j2 = grove.join(x, 0.5)
        assert np.array_equal(o1, o2) and np.array_equal(j1, j2)
    with pytest.raises(grove.InvalidArgumentError, match="after close"):
        ix.knn(1)


def test_threads_do_not_change_results(rng, spy):
    x = rng.random((3000, 3))
    calls = spy("grove_join_search")
    a = grove.join(x, 0.05, threads=1)
    b = grove.join(x, 0.05, threads=2)
    assert [c[-1].threads for c in calls] == [1, 2]
    assert all(np.array_equal(u, v) for u, v in zip(a, b))
    assert np.array_equal(grove.knn(x, 4, threads=1)[0], grove.knn(x, 4, threads=2)[0])


def test_points_reach_the_index_without_copy(rng, spy):
    x = rng.random((100, 3)).astype(np.float32)
    calls = spy("grove_index_create")
    grove.Index(x).close()
    assert calls[0][0].data == x.ctypes.data


@pytest.mark.parametrize("call, error", [
    (lambda x: grove.knn(x, 11), grove.InvalidArgumentError),
    (lambda x: grove.knn(x, 10, exclude_self=True), grove.InvalidArgumentError),
    (lambda x: grove.knn(x, 0), grove.InvalidArgumentError),
    (lambda x: grove.join(x, -1.0), grove.InvalidArgumentError),
    (lambda x: grove.join(x, 0.1, np.zeros((3, 2))), grove.InvalidArgumentError),
    (lambda x: grove.join(x, 0.1, x, exclude_self=True), grove.InvalidArgumentError),
    (lambda x: grove.knn(np.zeros((0, 3)), 1), grove.InvalidArgumentError),
])
def test_errors(call, error):
    with pytest.raises(error):
        call(np.random.default_rng(1).random((10, 3)))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_join_and_knn_equal_cli(cli, tmp_path, rng, dtype):
    x = rng.random((2000, 3)).astype(dtype)
    q = rng.random((300, 3)).astype(dtype)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "q.npy", q)
    cli("join", "x.npy", "--eps", 0.07, "--exclude-self", "--offsets", "o.npy", "--indices", "i.npy",
        "--distances", "d.npy")
    for mine, theirs in zip(grove.join(x, 0.07, exclude_self=True, distances=True), ("o", "i", "d")):
        assert np.array_equal(mine, np.load(tmp_path / f"{theirs}.npy"))
    cli("join", "x.npy", "--eps", 0.07, "--queries", "q.npy", "--offsets", "o.npy", "--indices", "i.npy")
    offsets, indices = grove.join(x, 0.07, q)
    assert np.array_equal(offsets, np.load(tmp_path / "o.npy")) and np.array_equal(indices, np.load(tmp_path / "i.npy"))
    cli("knn", "x.npy", "-k", 6, "--queries", "q.npy", "--indices", "ki.npy", "--distances", "kd.npy")
    indices, dist = grove.knn(x, 6, q)
    assert np.array_equal(indices, np.load(tmp_path / "ki.npy")) and np.array_equal(dist, np.load(tmp_path / "kd.npy"))


def count_and_fill(ix, eps, queries, exclude_self):
    """The CSR of grove_join_count then grove_join_fill on ix (the two
    passes Index.join made before grove_join_search)."""
    import ctypes as C

    from grove import _clib
    from grove._arrays import address, options, points_array, points_view

    q = None if queries is None else points_array(queries, "queries")
    qv = None if q is None else points_view(q)
    params = ix._params(eps, exclude_self, True)
    offsets = np.zeros((ix.n if q is None else q.shape[0]) + 1, dtype=np.int64)
    pairs = C.c_int64()
    with ix._use() as h:
        _clib.call(_clib.lib.grove_join_count, h, qv, C.byref(params), address(offsets[1:]), C.byref(pairs),
                   options())
        np.cumsum(offsets[1:], out=offsets[1:])
        indices, dist = np.empty(pairs.value, dtype=np.int64), np.empty(pairs.value)
        _clib.call(_clib.lib.grove_join_fill, h, qv, C.byref(params), address(offsets), address(indices),
                   address(dist), options())
    return offsets, indices, dist


@pytest.mark.parametrize("d", [3, 20])
def test_index_join_is_one_c_call_with_the_count_and_fill_csr(rng, spy, d):
    """Index.join makes one grove_join_search call, whose CSR is byte for
    byte that of count then fill (self-join, with and without exclude_self,
    and a semi-join), above 16 dimensions too."""
    x, q = rng.random((1500, d)), rng.random((200, d))
    eps = 0.15 * np.sqrt(d)
    searches, counts, fills = spy("grove_join_search"), spy("grove_join_count"), spy("grove_join_fill")
    with grove.Index(x) as ix:
        for queries, exclude in ((None, False), (None, True), (q, False)):
            got = ix.join(eps, queries, exclude_self=exclude, distances=True)
            assert len(searches) == 1 and not counts and not fills
            searches.clear()
            want = count_and_fill(ix, eps, queries, exclude)
            counts.clear(), fills.clear()
            assert want[0][-1] > 0
            for g, w in zip(got, want):
                assert g.dtype == w.dtype and g.tobytes() == w.tobytes()
        offsets, indices = ix.join(eps)
        want = count_and_fill(ix, eps, None, False)[1]
    del offsets  # the arrays share one C result, which outlives the index: the other keeps it alive
    assert indices.tobytes() == want.tobytes()
