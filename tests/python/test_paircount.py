"""grove.pair_counts and grove.paircount against a NumPy brute force of
Corrfunc's rules (every ordered pair, squares summed in the dtype, edges
squared in double and rounded to the dtype, bin i = edges[i] <= r <
edges[i + 1], pi bin int(|dz| / dpi)), the estimators against their
formulas, the command line against the binding, and the refusals. The
peers themselves (Corrfunc, TreeCorr) are in test_paircount_peers.py."""
import numpy as np
import pytest

import grove


def brute(x, y, edges, box=None, pimax=0, w1=None, w2=None):
    """(counts, weighted sums) of the pairs of x (y None: ordered pairs
    i != j and each point with itself when edges[0] is 0) or of x with y."""
    auto = y is None
    y, w2 = (x, w1) if auto else (y, w2)
    t = x.dtype.type
    diff = x[:, None, :] - y[None, :, :]
    if box is not None:
        length = np.asarray(box, dtype=x.dtype) * np.ones(x.shape[1], dtype=x.dtype)
        diff = np.abs(diff)
        diff = np.where(diff > length / t(2), length - diff, diff)
    dr = x.shape[1] - 1 if pimax else x.shape[1]
    r2 = np.zeros(diff.shape[:2], dtype=x.dtype)
    for k in range(dr):  # in input order, in the dtype
        r2 = r2 + diff[..., k] * diff[..., k]
    e2 = (np.asarray(edges, dtype=np.float64) ** 2).astype(x.dtype)
    below = (r2[..., None] >= e2).sum(-1)
    nrp = len(edges) - 1
    ok = (below >= 1) & (below <= nrp)
    if auto:
        ok &= ~np.eye(len(x), dtype=bool)
    w = np.outer(np.ones(len(x)) if w1 is None else w1, np.ones(len(y)) if w2 is None else w2)
    if pimax:
        npi = int(pimax)
        dz = np.abs(diff[..., -1])
        dpi = t(pimax) / t(npi)
        inv = t(1.0 / float(dpi))
        j = np.where(dz < t(pimax), (dz * inv).astype(np.int64), npi)
        ok &= j < npi
        b = (below - 1) * npi + j
        nbins = nrp * npi
    else:
        b, nbins = below - 1, nrp
    counts = np.bincount(b[ok], minlength=nbins)
    sums = np.bincount(b[ok], weights=w[ok], minlength=nbins)
    if auto and edges[0] == 0:
        counts[0] += len(x)
        sums[0] += np.sum(np.ones(len(x)) if w1 is None else w1 * w1)
    return counts, sums


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("box", [None, 6.0])
@pytest.mark.parametrize("pimax", [0, 2.5])
def test_pair_counts_match_brute_force(rng, dtype, box, pimax):
    x = rng.uniform(0, 6, (300, 3)).astype(dtype)
    x[::7] = x[1::7][: len(x[::7])]  # exact duplicates
    y = rng.uniform(0, 6, (200, 3)).astype(dtype)
    w1, w2 = rng.uniform(0.5, 2, 300), rng.uniform(0.5, 2, 200)
    edges = [0, 0.25, 0.5, 1.0, 2.0]
    shape = (4, int(pimax)) if pimax else (4,)
    for other, weights in ((None, {}), (y, {"weights2": w2})):
        counts, sums = grove.pair_counts(x, other, bins=edges, pimax=pimax, boxsize=box, weights1=w1, **weights)
        want, want_sums = brute(x, other, edges, box, pimax, w1, weights.get("weights2"))
        assert counts.shape == sums.shape == shape and counts.dtype == np.int64
        assert np.array_equal(counts.ravel(), want)
        assert np.allclose(sums.ravel(), want_sums, rtol=1e-12)
        plain, none = grove.pair_counts(x, other, bins=edges, pimax=pimax, boxsize=box)
        assert none is None and np.array_equal(plain, counts)


def test_same_bits_for_any_thread_count(rng):
    x = rng.uniform(0, 1, (4000, 3))
    w = rng.lognormal(0, 3, 4000)
    results = [grove.pair_counts(x, bins=np.logspace(-2, -0.5, 8), boxsize=1, weights1=w, threads=t)
               for t in (1, 2, 5)]
    for counts, sums in results[1:]:
        assert np.array_equal(counts, results[0][0]) and np.array_equal(sums, results[0][1])


def test_paircount_estimators(rng):
    box = 5.0
    x, r = rng.uniform(0, box, (800, 3)), rng.uniform(0, box, (1600, 3))
    w, rw = rng.uniform(0.5, 2, 800), rng.uniform(0.5, 2, 1600)
    edges = np.array([0, 0.2, 0.4, 0.8])
    res = grove.paircount(x, edges, randoms=r, weights=w, random_weights=rw)
    assert res.dd.shape == res.dr.shape == res.rr.shape == (3,) and res.wp is None
    # Landy-Szalay from the weighted sums, self pairs out of bin 0 (it starts at 0).
    ndd, ndr, nrr = w.sum() ** 2 - (w * w).sum(), w.sum() * rw.sum(), rw.sum() ** 2 - (rw * rw).sum()
    dd, rr = res.dd_weighted.copy(), res.rr_weighted.copy()
    dd[0] -= (w * w).sum()
    rr[0] -= (rw * rw).sum()
    want = (dd / ndd - 2 * res.dr_weighted / ndr + rr / nrr) / (rr / nrr)
    assert np.allclose(res.xi, want, rtol=1e-12)
    # In the box without randoms: DD against a uniform set's pairs (Corrfunc's theory.xi).
    res = grove.paircount(x, edges, boxsize=box)
    shells = 4 / 3 * np.pi * np.diff(edges ** 3)
    expected = 800 * 799 * shells / box ** 3
    expected[0] += 800
    assert np.allclose(res.xi, res.dd / expected - 1, rtol=1e-12)
    # wp in the box: DD over the cylinder, 2 pimax (DD / RR - 1) (Corrfunc's theory.wp).
    res = grove.paircount(x, edges, boxsize=box, pimax=2)
    rings = np.pi * np.diff(edges ** 2) * 2 * 2
    expected = 800 * 799 * rings / box ** 3
    expected[0] += 800
    assert res.dd.shape == (3, 2)
    assert np.allclose(res.wp, 2 * 2 * (res.dd.sum(1) / expected - 1), rtol=1e-12)
    # With randoms: 2 dpi sum over pi of xi(rp, pi).
    res = grove.paircount(x, edges, randoms=r, pimax=2)
    assert np.allclose(res.wp, 2 * 1.0 * res.xi.sum(1), rtol=1e-12)
    # Open volume without randoms: counts only.
    res = grove.paircount(x, edges)
    assert res.xi is None and res.wp is None


def test_cli_counts_what_the_binding_counts(rng, tmp_path, cli):
    x = rng.uniform(0, 4, (700, 3))
    w = rng.uniform(0.5, 2, 700)
    np.save(tmp_path / "d.npy", x)
    np.save(tmp_path / "w.npy", w)
    (tmp_path / "bins.txt").write_text("0.1 0.2\n0.2 0.4\n0.4 0.8\n")
    out = cli("paircount", "d.npy", "--bins", "bins.txt", "--box", 4, "--weights", "w.npy", "--pimax", 1.5,
              "--out", "c.npy")
    counts, sums = grove.pair_counts(x, bins=[0.1, 0.2, 0.4, 0.8], boxsize=4, pimax=1.5, weights1=w)
    assert out["npairs"] == counts.ravel().tolist() and out["weighted"] == sums.ravel().tolist()
    res = grove.paircount(x, [0.1, 0.2, 0.4, 0.8], boxsize=4, pimax=1.5, weights=w)
    table = np.load(tmp_path / "c.npy")
    assert out["columns"] == ["lo", "hi", "pi_lo", "pi_hi", "dd", "dd_weighted", "xi", "wp"]
    assert np.array_equal(table[:, 4], counts.ravel()) and np.array_equal(table[:, 6], res.xi.ravel())
    assert np.array_equal(table[::1, 7], np.repeat(res.wp, 1)) and np.array_equal(out["wp"], res.wp)


def test_refusals(rng):
    x = rng.uniform(0, 1, (50, 3))
    with pytest.raises(grove.InvalidArgumentError, match="edges must ascend"):
        grove.pair_counts(x, bins=[0.2, 0.1])
    with pytest.raises(grove.InvalidArgumentError, match="at least 2"):
        grove.pair_counts(x, bins=[0.2])
    with pytest.raises(grove.InvalidArgumentError, match="weights1: expected shape"):
        grove.pair_counts(x, bins=[0.1, 0.2], weights1=np.ones(49))
    with pytest.raises(grove.InvalidArgumentError, match="pimax = 0.5"):
        grove.pair_counts(x, bins=[0.1, 0.2], pimax=0.5)
    with pytest.raises(grove.InvalidArgumentError, match="outside the periodic box"):
        grove.pair_counts(x * 2, bins=[0.1, 0.2], boxsize=1)
    with pytest.raises(grove.InvalidArgumentError, match="random_weights: given without randoms"):
        grove.paircount(x, [0.1, 0.2], random_weights=np.ones(50))
