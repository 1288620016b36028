"""grove.DBSCAN against scikit-learn's sklearn.cluster.DBSCAN: labels,
core samples and components identical, border points included, on
random, clustered, duplicate-heavy and lattice data (eps exactly on a
lattice distance), d = 1 to 784, min_samples 1 to 50, float32 and float64,
with and without sample weights, 1 and 2 threads; and scikit-learn's
estimator checks. Continuous data get an eps half-way between two pair
distances, so no pair lies within rounding of it; integer data (lattice,
duplicates) have exact squared distances, so eps can sit on one."""
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import grove

sk_cluster = pytest.importorskip("sklearn.cluster")


def points(kind, n, d, seed):
    rng = np.random.default_rng(seed)
    if kind == "uniform":
        return rng.uniform(0, 1, (n, d))
    if kind == "blobs":
        centres = rng.uniform(-4, 4, (5, d))
        x = centres[rng.integers(0, 5, n)] + rng.normal(0, 0.6, (n, d)) * rng.uniform(0.3, 1.5, (n, 1))
        return np.vstack([x, rng.uniform(-6, 6, (n // 10, d))])
    # Integer points of a lattice about 4 n cells large, so they are sparse
    # in every dimension count (4 values per axis from d = 8 on).
    side = max(4, int(np.ceil((4 * n) ** (1 / d))))
    if kind == "duplicates":  # n / 8 distinct lattice points, about 8 copies of each
        return rng.integers(0, side, (n // 8, d))[rng.integers(0, n // 8, n)].astype(np.float64)
    return rng.integers(0, side, (n, d)).astype(np.float64)  # lattice


def radius(x, kind, per_point):
    """An eps giving about per_point neighbours: half-way between two
    consecutive distinct pair distances (continuous data), exactly on one
    (integer data)."""
    n = len(x)
    rng = np.random.default_rng(n)
    i, j = rng.integers(0, n, 20000), rng.integers(0, n, 20000)
    d = np.unique(np.sqrt(((x[i] - x[j]) ** 2).sum(axis=1)))
    k = min(int(per_point / n * len(d) * 2) + 1, len(d) - 1) if kind in ("uniform", "blobs") else None
    if k is None:  # integer data: the sorted distinct distances of the sample
        q = np.quantile(np.sqrt(((x[i] - x[j]) ** 2).sum(axis=1)), min(per_point / n, 1.0))
        return float(d[np.searchsorted(d, q)]) if q > 0 else float(d[min(1, len(d) - 1)])
    return float((d[k - 1] + d[k]) / 2)


def compare(x, eps, min_samples, weight=None, n_jobs=1):
    ours = grove.DBSCAN(eps=eps, min_samples=min_samples, n_jobs=n_jobs).fit(x, sample_weight=weight)
    # grove.DBSCAN computes in float64 whatever X's dtype, as scikit-learn's
    # trees do; its brute-force path (its "auto" above 15 dimensions)
    # compares float32 data's distances in float32, so pairs on the
    # boundary can go the other way there.
    algorithm = "kd_tree" if x.dtype == np.float32 else "auto"
    theirs = sk_cluster.DBSCAN(eps=eps, min_samples=min_samples, algorithm=algorithm).fit(x, sample_weight=weight)
    what = f"n={len(x)} d={x.shape[1]} eps={eps!r} min_samples={min_samples}"
    assert np.array_equal(ours.labels_, theirs.labels_), what
    assert np.array_equal(ours.core_sample_indices_, theirs.core_sample_indices_), what
    assert np.array_equal(ours.components_, theirs.components_), what
    assert ours.labels_.dtype == theirs.labels_.dtype
    return ours


def border_between_clusters(x, eps, model):
    """Border points within eps of core points of two clusters (where the
    tie rule decides)."""
    core = np.zeros(len(x), bool)
    core[model.core_sample_indices_] = True
    count = 0
    for b in np.flatnonzero(~core & (model.labels_ >= 0)):
        near = np.sqrt(((x[core] - x[b]) ** 2).sum(axis=1)) <= eps
        count += len(set(model.labels_[core][near].tolist())) > 1
    return count


@pytest.mark.parametrize("d", [1, 2, 3, 8, 64, 784])
@pytest.mark.parametrize("kind", ["uniform", "blobs", "duplicates", "lattice"])
def test_labels_equal_scikit_learn(kind, d):
    n = 150 if d >= 64 else 400
    x = points(kind, n, d, seed=d * 7 + len(kind))
    for min_samples in (1, 4, 12, 50):
        for per_point in (0.5 * min_samples, 2.0 * min_samples):
            eps = radius(x, kind, per_point)
            compare(x, eps, min_samples)
            compare(x.astype(np.float32), eps, min_samples)


@pytest.mark.parametrize("kind", ["uniform", "blobs", "duplicates", "lattice"])
def test_sample_weights_equal_scikit_learn(kind):
    x = points(kind, 500, 2, seed=3)
    rng = np.random.default_rng(4)
    for weights in (rng.integers(-1, 4, len(x)).astype(np.float64), rng.integers(-2, 9, len(x)) / 4.0,
                    np.zeros(len(x)) + 0.5):
        for min_samples in (1, 3, 8):
            compare(x, radius(x, kind, 3 * min_samples), min_samples, weights)


def test_cli_sample_weight_equals_scikit_learn(tmp_path, cli):
    """`grove dbscan --sample-weight` (a .npy and a text column) writes
    scikit-learn's labels and core samples for the same weights."""
    x = points("blobs", 2000, 3, seed=5)
    weights = np.random.default_rng(6).integers(-2, 9, len(x)) / 4.0
    eps = radius(x, "blobs", 12)
    theirs = sk_cluster.DBSCAN(eps=eps, min_samples=5).fit(x, sample_weight=weights)
    assert len(set(theirs.labels_.tolist())) > 2 and (theirs.labels_ < 0).any()
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "w.npy", weights)
    np.savetxt(tmp_path / "w.txt", weights, fmt="%.17g")
    for w in ("w.npy", "w.txt"):
        out = cli("dbscan", "x.npy", "--eps", repr(eps), "--min-samples", 5, "--sample-weight", w, "--labels", "l.npy",
                  "--core", "c.npy")
        assert out["weighted"] and out["core"] == len(theirs.core_sample_indices_)
        assert np.array_equal(np.load(tmp_path / "l.npy"), theirs.labels_)
        assert np.array_equal(np.load(tmp_path / "c.npy"), theirs.core_sample_indices_)


def test_two_threads_and_border_ties():
    """Enough points for the join to use both threads; many border points
    between two clusters."""
    x = points("uniform", 30000, 2, seed=9)
    eps = radius(x, "uniform", 9)
    model = compare(x, eps, 12, n_jobs=2)
    assert len(set(model.labels_.tolist())) > 20
    assert border_between_clusters(x, eps, model) > 10
    assert np.array_equal(model.labels_, grove.DBSCAN(eps=eps, min_samples=12, n_jobs=1).fit(x).labels_)


def test_check_estimator_passes():
    checks = pytest.importorskip("sklearn.utils.estimator_checks")
    results = checks.check_estimator(grove.DBSCAN(), on_fail=None)
    failed = [f"{r['check_name']}: {r['exception']}" for r in results if r["status"] == "failed"]
    assert len(results) > 30 and not failed


def test_refusals_name_the_problem():
    x = points("uniform", 50, 2, seed=1)
    for params, words in (({"eps": 0}, "'eps' parameter"), ({"eps": -1.0}, "'eps' parameter"),
                          ({"min_samples": 0}, "'min_samples' parameter"),
                          ({"min_samples": 2.5}, "'min_samples' parameter"),
                          ({"algorithm": "fast"}, "'algorithm' parameter")):
        with pytest.raises(ValueError, match=words):
            grove.DBSCAN(**params).fit(x)
    for params in ({"metric": "manhattan"}, {"metric": "minkowski", "p": 1}, {"metric": "cosine"}):
        with pytest.raises(grove.UnsupportedMetricError, match="Euclidean distances only"):
            grove.DBSCAN(**params).fit(x)
    assert np.array_equal(grove.DBSCAN(metric="minkowski", p=2).fit_predict(x), grove.DBSCAN().fit_predict(x))
    bad = x.copy()
    bad[7, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        grove.DBSCAN().fit(bad)
    w = np.ones(50)
    w[11] = np.inf
    with pytest.raises(grove.InvalidArgumentError, match=r"sample_weight\[11\]"):
        grove.DBSCAN().fit(x, sample_weight=w)
    with pytest.raises(grove.InvalidArgumentError, match="sample_weight"):
        grove.DBSCAN().fit(x, sample_weight=np.ones(49))


def test_works_without_scikit_learn():
    code = textwrap.dedent("""
        import sys
        sys.modules["sklearn"] = None
        import numpy as np, grove
        x = np.random.default_rng(1).normal(size=(200, 2))
        m = grove.DBSCAN(eps=0.3, min_samples=4)
        assert m.get_params()["eps"] == 0.3 and m.set_params(min_samples=5) is m
        labels = m.fit_predict(x)
        assert labels is m.labels_ and m.n_features_in_ == 2 and len(labels) == 200 and labels.max() >= 0
        assert np.array_equal(m.components_, x[m.core_sample_indices_])
        try:
            m.fit(np.full((3, 2), np.nan))
        except ValueError as e:
            assert "NaN" in str(e)
        else:
            raise AssertionError("NaN accepted")
    """)
    subprocess.run([sys.executable, "-c", code], check=True)


def minimum_image_distances(x, box):
    t = np.abs(x[:, None, :] - x[None, :, :])
    t = np.where(t > box / 2, box - t, t)
    return np.sqrt((t ** 2).sum(axis=2))


@pytest.mark.parametrize("kind", ["uniform", "lattice"])
def test_periodic_box_equals_minimum_image_distances(kind):
    """boxsize: scikit-learn on the precomputed minimum-image distances
    (exact for the lattice, whose wrapped pairs decide the clusters)."""
    d = 2
    x = points(kind, 600, d, seed=12)
    box = np.full(d, 1.0 if kind == "uniform" else float(x.max() + 1))
    dist = minimum_image_distances(x, box)
    eps = radius(x, kind, 6)
    if kind == "uniform":  # half-way between two wrapped pair distances
        u = np.unique(dist)
        k = np.searchsorted(u, eps)
        eps = float((u[k - 1] + u[k]) / 2)
    differ = 0
    for min_samples in (2, 6, 9):
        ours = grove.DBSCAN(eps=eps, min_samples=min_samples, boxsize=box).fit(x)
        theirs = sk_cluster.DBSCAN(eps=eps, min_samples=min_samples, metric="precomputed").fit(dist)
        assert np.array_equal(ours.labels_, theirs.labels_)
        assert np.array_equal(ours.core_sample_indices_, theirs.core_sample_indices_)
        differ += not np.array_equal(grove.DBSCAN(eps=eps, min_samples=min_samples).fit(x).labels_, ours.labels_)
    assert differ  # the box matters here
    with pytest.raises(grove.InvalidArgumentError, match="outside the periodic box"):
        grove.DBSCAN(eps=eps, boxsize=box / 2).fit(x)
