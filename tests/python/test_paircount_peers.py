"""grove's pair counts beside the peers, where they are installed (CI's peer
step installs them; skipped otherwise): Corrfunc's DD(r), DD(rp, pi), wp and
xi, and TreeCorr's NN counts, on 10^5 uniform and clustered (FoF-like
halos in a field) points, periodic and not, weighted and not.

In float64 the counts are identical, pair for pair. In float32 they are
identical to Corrfunc's portable kernel (isa='fallback') in an open volume.
Elsewhere a few pairs within float32's rounding of an edge may land in the
next bin (docs/paircount.md): Corrfunc's periodic images round
x_j - (x_i + L) where grove rounds L - |x_i - x_j| (at most
IMAGES_PER_MILLION per 10^6 pairs from its portable kernel), and its AVX-512
kernel rounds with fused multiply-adds (at most FMA_PER_MILLION from it, the
order by which Corrfunc's own kernels differ)."""
import numpy as np
import pytest

import grove

Corrfunc = pytest.importorskip("Corrfunc")
from Corrfunc.theory.DD import DD  # noqa: E402
from Corrfunc.theory.DDrppi import DDrppi  # noqa: E402
from Corrfunc.theory.wp import wp as corrfunc_wp  # noqa: E402
from Corrfunc.theory.xi import xi as corrfunc_xi  # noqa: E402

N = 100_000
SIDE = 100.0 * (N / 1e6) ** (1 / 3)  # mean separation 1
EDGES = np.logspace(np.log10(0.1), np.log10(5), 11)
PIMAX = 10.0
IMAGES_PER_MILLION = 1.0
FMA_PER_MILLION = 5.0


def halos(rng):
    """70 % of the points in 1000 Gaussian halos, the rest uniform, in the box."""
    centres = rng.uniform(0, SIDE, (N // 100, 3))
    members = centres[rng.integers(0, len(centres), int(0.7 * N))] + rng.normal(0, 0.3, (int(0.7 * N), 3))
    return np.mod(np.vstack([members, rng.uniform(0, SIDE, (N - len(members), 3))]), SIDE)


@pytest.fixture(scope="module")
def sets():
    rng = np.random.default_rng(2024)
    return {"uniform": rng.uniform(0, SIDE, (N, 3)), "clustered": halos(rng), "weights": rng.uniform(0.5, 2, N)}


def columns(x):
    return [np.ascontiguousarray(x[:, k]) for k in range(3)]


@pytest.mark.parametrize("kind", ["uniform", "clustered"])
@pytest.mark.parametrize("periodic", [True, False])
@pytest.mark.parametrize("weighted", [False, True])
def test_identical_to_corrfunc_in_float64(sets, kind, periodic, weighted):
    x = sets[kind]
    w = sets["weights"] if weighted else None
    extra = {"weights1": w, "weight_type": "pair_product"} if weighted else {}
    box = SIDE if periodic else None
    ref = DD(1, 2, EDGES, *columns(x), periodic=periodic, boxsize=SIDE, **extra)
    counts, sums = grove.pair_counts(x, bins=EDGES, boxsize=box, weights1=w)
    assert np.array_equal(counts, ref["npairs"])
    if weighted:  # Corrfunc reports the mean product per pair
        assert np.allclose(sums, ref["weightavg"] * ref["npairs"], rtol=1e-12)
    ref = DDrppi(1, 2, PIMAX, EDGES, *columns(x), periodic=periodic, boxsize=SIDE, **extra)
    counts, sums = grove.pair_counts(x, bins=EDGES, pimax=PIMAX, boxsize=box, weights1=w)
    assert np.array_equal(counts.ravel(), ref["npairs"])
    if weighted:
        # Corrfunc's DDrppi adds the self pairs' weights outside the bins it
        # returns (docs/paircount.md); grove adds them to bin (0, 0), which
        # these edges (from 0.1) leave empty of self pairs anyway.
        assert np.allclose(sums.ravel(), ref["weightavg"] * ref["npairs"], rtol=1e-12)


@pytest.mark.parametrize("kind", ["uniform", "clustered"])
def test_cross_counts_identical_to_corrfunc(sets, kind):
    x, y = sets[kind][: N // 2], sets["uniform"][N // 2:]
    ref = DD(0, 2, EDGES, *columns(x), X2=y[:, 0].copy(), Y2=y[:, 1].copy(), Z2=y[:, 2].copy(), periodic=True,
             boxsize=SIDE)
    counts, _ = grove.pair_counts(x, y, bins=EDGES, boxsize=SIDE)
    assert np.array_equal(counts, ref["npairs"])


@pytest.mark.parametrize("kind", ["uniform", "clustered"])
@pytest.mark.parametrize("periodic", [True, False])
def test_float32_as_corrfunc_rounds(sets, kind, periodic):
    x = sets[kind].astype(np.float32)
    box = SIDE if periodic else None
    for isa in ("fallback", "fastest"):
        ref = DD(1, 2, EDGES, *columns(x), periodic=periodic, boxsize=SIDE, isa=isa)
        counts, _ = grove.pair_counts(x, bins=EDGES, boxsize=box)
        ref2 = DDrppi(1, 2, PIMAX, EDGES, *columns(x), periodic=periodic, boxsize=SIDE, isa=isa)
        counts2, _ = grove.pair_counts(x, bins=EDGES, pimax=PIMAX, boxsize=box)
        moved = np.abs(counts - ref["npairs"]).sum() + np.abs(counts2.ravel() - ref2["npairs"]).sum()
        pairs = counts.sum() + counts2.sum()
        if isa == "fallback":
            assert moved <= (IMAGES_PER_MILLION * 1e-6 * pairs if periodic else 0), (isa, moved)
        else:
            assert moved <= FMA_PER_MILLION * 1e-6 * pairs, (isa, moved)


def test_wp_and_xi_as_corrfunc_in_a_box(sets):
    x = sets["clustered"]
    ref = corrfunc_wp(SIDE, PIMAX, 2, EDGES, *columns(x))
    res = grove.paircount(x, EDGES, boxsize=SIDE, pimax=PIMAX)
    assert np.array_equal(res.dd.sum(axis=1), ref["npairs"])
    assert np.allclose(res.wp, ref["wp"], rtol=1e-9, atol=1e-9 * 2 * PIMAX)
    ref = corrfunc_xi(SIDE, 2, EDGES, *columns(x))
    res = grove.paircount(x, EDGES, boxsize=SIDE)
    assert np.array_equal(res.dd, ref["npairs"])
    assert np.allclose(res.xi, ref["xi"], rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("periodic", [True, False])
def test_nn_counts_as_treecorr_bins_them(sets, periodic):
    # TreeCorr counts each pair once, in log bins it computes from log(r);
    # with bin_slop=0 its counts are exact in its rule, which agrees with
    # grove's wherever no pair lies within rounding of an edge.
    treecorr = pytest.importorskip("treecorr")
    x = sets["clustered"]
    cat = treecorr.Catalog(x=x[:, 0], y=x[:, 1], z=x[:, 2])
    box = {"xperiod": SIDE, "yperiod": SIDE, "zperiod": SIDE} if periodic else {}
    nn = treecorr.NNCorrelation(min_sep=EDGES[0], max_sep=EDGES[-1], nbins=len(EDGES) - 1, bin_slop=0, **box)
    nn.process(cat, metric="Periodic" if periodic else "Euclidean")
    assert np.allclose(nn.left_edges, EDGES[:-1], rtol=1e-12)
    counts, _ = grove.pair_counts(x, bins=EDGES, boxsize=SIDE if periodic else None)
    assert np.array_equal(counts, 2 * nn.npairs)
