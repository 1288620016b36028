"""grove.emst, core_distances and HDBSCAN against the command line and
brute force."""
import numpy as np
import pytest

import grove


def blobs(rng, n=600, d=2):
    centers = rng.uniform(-10, 10, size=(4, d))
    return centers[rng.integers(0, 4, n)] + rng.normal(0, 0.6, size=(n, d))


@pytest.mark.parametrize("k", [1, 2, 5])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_emst_equals_cli(cli, tmp_path, rng, k, dtype):
    x = blobs(rng).astype(dtype)
    np.save(tmp_path / "x.npy", x)
    cli("emst", "x.npy", "--mutual-reachability", k, "--edges", "e.npy", "--weights", "w.npy")
    edges, weights = grove.emst(x, mutual_reachability=k)
    assert edges.shape == (599, 2) and weights.shape == (599,)
    assert np.array_equal(edges, np.load(tmp_path / "e.npy").reshape(-1, 2))
    assert np.array_equal(weights, np.load(tmp_path / "w.npy"))


def test_emst_total_weight_equals_prim(rng):
    x = rng.random((120, 3))
    dist = np.sqrt(((x[:, None] - x[None]) ** 2).sum(-1))
    inside, best, total = np.zeros(120, bool), dist[0].copy(), 0.0
    inside[0] = True
    for _ in range(119):
        j = np.argmin(np.where(inside, np.inf, best))
        total += best[j]
        inside[j] = True
        best = np.minimum(best, dist[j])
    edges, weights = grove.emst(x)
    assert np.isclose(weights.sum(), total) and np.all(edges[:, 0] < edges[:, 1])


def test_core_distances_equal_brute_force(rng):
    x = rng.random((200, 3))
    dist = np.sort(np.sqrt(((x[:, None] - x[None]) ** 2).sum(-1)), axis=1)
    assert np.allclose(grove.core_distances(x, 4), dist[:, 3])
    assert np.all(grove.core_distances(x, 1) == 0)


def test_small_inputs():
    assert grove.emst(np.zeros((0, 2)))[0].shape == (0, 2)
    assert grove.emst(np.zeros((1, 2)))[1].shape == (0,)
    h = grove.HDBSCAN(min_samples=1).fit(np.zeros((1, 2)))
    assert h.labels_.tolist() == [-1] and h.n_clusters_ == 0


@pytest.mark.parametrize("mcs, k, method, eps", [(5, None, "eom", 0.0), (15, 3, "leaf", 0.0), (10, 2, "eom", 0.5)])
def test_hdbscan_equals_cli(cli, tmp_path, rng, mcs, k, method, eps):
    x = blobs(rng, 800)
    np.save(tmp_path / "x.npy", x)
    args = ["--min-samples", k] if k else []
    summary = cli("hdbscan", "x.npy", "--min-cluster-size", mcs, *args, "--selection", method, "--epsilon", eps,
                  "--labels", "l.npy", "--probabilities", "p.npy", "--outlier-scores", "s.npy")
    model = grove.HDBSCAN(min_cluster_size=mcs, min_samples=k, cluster_selection_method=method,
                          cluster_selection_epsilon=eps)
    labels = model.fit_predict(x)
    assert labels is model.labels_ and model.n_clusters_ == summary["clusters"] > 1
    assert np.array_equal(labels, np.load(tmp_path / "l.npy"))
    assert np.array_equal(model.probabilities_, np.load(tmp_path / "p.npy"))
    assert np.array_equal(model.outlier_scores_, np.load(tmp_path / "s.npy"))


def test_hdbscan_is_a_scikit_learn_estimator(rng):
    model = grove.HDBSCAN(min_cluster_size=7, threads=1)
    assert model.get_params()["min_cluster_size"] == 7
    assert model.set_params(min_samples=3) is model and model.min_samples == 3
    with pytest.raises(ValueError, match="Invalid parameter 'no_such_parameter'"):
        model.set_params(no_such_parameter=1)
    base = pytest.importorskip("sklearn.base")
    twin = base.clone(model)
    x = blobs(rng, 300)
    assert np.array_equal(twin.fit(x).labels_, model.fit(x).labels_)


@pytest.mark.parametrize("kwargs, match", [({"min_cluster_size": 1}, "min_cluster_size"),
                                           ({"min_samples": 0}, "min_samples"),
                                           ({"cluster_selection_method": "best"}, "eom"),
                                           ({"cluster_selection_epsilon": -1.0}, "psilon")])
def test_hdbscan_bad_parameters(kwargs, match):
    with pytest.raises(grove.InvalidArgumentError, match=match):
        grove.HDBSCAN(**kwargs).fit(np.random.default_rng(0).random((20, 2)))


def test_k_larger_than_n_is_refused():
    with pytest.raises(grove.InvalidArgumentError):
        grove.emst(np.zeros((3, 2)), mutual_reachability=4)
