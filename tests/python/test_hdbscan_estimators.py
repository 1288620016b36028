"""grove.HDBSCAN and grove.compat.hdbscan.HDBSCAN as estimators: scikit-learn's
conformance checks, the fallback without scikit-learn, and the hdbscan
library's attributes, trees and prediction against the library itself and
scikit-learn (each skipped where that peer is not installed). Comparisons
end to end use min_samples = 1 (grove K = 2) on generic data, where no two
mutual-reachability weights tie, so the answers must be the same."""
import pickle
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import grove
from grove.compat import hdbscan as compat

from conftest import ROOT, same_partition


def blobs(seed, n=400, d=2, centers=4):
    rng = np.random.default_rng(seed)
    c = rng.uniform(-8, 8, (centers, d))
    x = c[rng.integers(0, centers, n)] + rng.normal(0, 0.7, (n, d)) * rng.uniform(0.3, 1.5, (n, 1))
    return np.vstack([x, rng.uniform(-10, 10, (n // 15, d))])


@pytest.mark.parametrize("estimator", [grove.HDBSCAN, compat.HDBSCAN])
def test_check_estimator_passes(estimator):
    checks = pytest.importorskip("sklearn.utils.estimator_checks")
    results = checks.check_estimator(estimator(), on_fail=None)
    failed = [f"{r['check_name']}: {r['exception']}" for r in results if r["status"] == "failed"]
    assert len(results) > 30 and not failed


def test_estimators_work_without_scikit_learn():
    """With scikit-learn made unimportable: the stand-in base class and
    validation."""
    code = textwrap.dedent("""
        import sys
        sys.modules["sklearn"] = None
        import numpy as np, grove
        from grove.compat.hdbscan import HDBSCAN
        x = np.random.default_rng(1).normal(size=(60, 2))
        m = grove.HDBSCAN(min_cluster_size=6)
        assert m.get_params()["min_cluster_size"] == 6 and m.set_params(min_samples=3) is m
        labels = m.fit_predict(x)
        assert labels is m.labels_ and m.n_features_in_ == 2 and len(labels) == 60
        assert np.array_equal(HDBSCAN(min_cluster_size=6, min_samples=2).fit(x).labels_, labels)
        for bad, words in ((np.zeros((0, 2)), "0 sample"), (np.ones((5, 2)) * 1j, "Complex"),
                           (np.ones(5), "2D array"), (np.ones((5, 3)), "3 features")):
            try:
                (m.predict if bad.ndim == 2 and bad.shape[1] == 3 else m.fit)(bad)
            except ValueError as e:
                assert words in str(e), e
            else:
                raise AssertionError(words)
        try:
            m.set_params(nope=1)
        except ValueError as e:
            assert "Invalid parameter 'nope'" in str(e)
        print("ok")
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={"PYTHONPATH": str(ROOT / "python"), **_grove_env()})
    assert out.stdout.strip() == "ok", out.stderr


def _grove_env():
    import os
    return {k: v for k, v in os.environ.items() if k.startswith("GROVE_") or k in ("PATH", "HOME")}


def test_dataframes_give_feature_names():
    pandas = pytest.importorskip("pandas")
    pytest.importorskip("sklearn")
    frame = pandas.DataFrame(blobs(1), columns=["a", "b"])
    model = grove.HDBSCAN(min_samples=2).fit(frame)
    assert list(model.feature_names_in_) == ["a", "b"] and model.n_features_in_ == 2
    plain = grove.HDBSCAN(min_samples=2).fit(frame.to_numpy())
    assert not hasattr(plain, "feature_names_in_")
    assert np.array_equal(model.predict(frame.iloc[:20]), plain.predict(frame.to_numpy()[:20]))


def test_pickled_estimators_predict_the_same():
    x = blobs(2)
    for model in (grove.HDBSCAN(min_samples=3), compat.HDBSCAN(min_samples=2, prediction_data=True)):
        model.fit(x)
        twin = pickle.loads(pickle.dumps(model))
        assert np.array_equal(twin.labels_, model.labels_)
        np.testing.assert_array_equal(twin.condensed_tree_.to_numpy(), model.condensed_tree_.to_numpy())
        if isinstance(model, grove.HDBSCAN):
            assert np.array_equal(twin.predict(x[:50] + 0.1), model.predict(x[:50] + 0.1))
        else:
            assert np.array_equal(compat.approximate_predict(twin, x[:50])[0],
                                  compat.approximate_predict(model, x[:50])[0])


# -- against scikit-learn ----------------------------------------------------

def test_grove_hdbscan_equals_scikit_learn_with_store_centers():
    cluster = pytest.importorskip("sklearn.cluster")
    x = blobs(3)
    for kw in (dict(min_cluster_size=10), dict(min_cluster_size=5, cluster_selection_method="leaf"),
               dict(min_cluster_size=8, cluster_selection_epsilon=0.3),
               dict(min_cluster_size=6, max_cluster_size=90)):
        # (not alpha != 1: edges then weigh a core distance and tie)
        mine = grove.HDBSCAN(min_samples=2, store_centers="both", **kw).fit(x)
        ref = cluster.HDBSCAN(min_samples=2, store_centers="both", copy=True, **kw).fit(x)
        np.testing.assert_array_equal(mine.labels_, ref.labels_, err_msg=str(kw))
        assert mine.labels_.max() >= 1, kw
        np.testing.assert_allclose(mine.probabilities_, ref.probabilities_, rtol=0, atol=1e-12)
        np.testing.assert_allclose(mine.centroids_, ref.centroids_, rtol=1e-12, atol=1e-12)
        np.testing.assert_array_equal(mine.medoids_, ref.medoids_)
        for cut in (0.4, 1.0):
            np.testing.assert_array_equal(mine.dbscan_clustering(cut, 5), ref.dbscan_clustering(cut, 5))


def test_non_finite_rows_get_scikit_learns_codes():
    cluster = pytest.importorskip("sklearn.cluster")
    x = blobs(4)
    x[3, 0], x[10, 1], x[11] = np.nan, np.inf, [-np.inf, np.nan]
    mine = grove.HDBSCAN(min_samples=2).fit(x)
    ref = cluster.HDBSCAN(min_samples=2, copy=True).fit(x)
    assert mine.labels_[3] == mine.labels_[11] == -3 and mine.labels_[10] == -2
    np.testing.assert_array_equal(mine.labels_, ref.labels_)
    np.testing.assert_array_equal(np.isnan(mine.probabilities_), np.isnan(ref.probabilities_))
    finite = ~np.isnan(ref.probabilities_)
    np.testing.assert_allclose(mine.probabilities_[finite], ref.probabilities_[finite], atol=1e-12, rtol=0)
    q = np.vstack([x[:5], [[np.nan, 0.0], [np.inf, 0.0]]])
    labels, prob = mine.approximate_predict(q)
    assert labels[5] == -3 and labels[6] == -2 and np.isnan(prob[5]) and prob[6] == 0
    assert np.array_equal(labels[:5] >= 0, mine.labels_[:5] >= 0)


def test_n_jobs_and_threads_give_the_same_clustering():
    x = blobs(5)
    a = grove.HDBSCAN(n_jobs=1).fit(x).labels_
    assert np.array_equal(a, grove.HDBSCAN(n_jobs=-1).fit(x).labels_)
    assert np.array_equal(a, grove.HDBSCAN(threads=2).fit(x).labels_)
    with pytest.raises(ValueError, match="n_jobs"):
        grove.HDBSCAN(n_jobs=0).fit(x)


@pytest.mark.parametrize("kwargs", [dict(metric="manhattan"), dict(metric="precomputed"),
                                    dict(metric="minkowski", metric_params={"p": 3})])
def test_grove_hdbscan_refuses_other_metrics_naming_them(kwargs):
    with pytest.raises(grove.UnsupportedMetricError, match=kwargs["metric"]):
        grove.HDBSCAN(**kwargs).fit(blobs(6))


def test_standardised_euclidean_is_euclidean_on_rescaled_points():
    x = blobs(7, d=3)
    v = np.array([0.5, 2.0, 4.0])
    mine = compat.HDBSCAN(metric="seuclidean", V=v, min_samples=1).fit(x)
    scaled = compat.HDBSCAN(min_samples=1).fit(x / np.sqrt(v))
    assert np.array_equal(mine.labels_, scaled.labels_)
    for a, b in zip(mine.exemplars_, scaled.exemplars_):
        np.testing.assert_allclose(a / np.sqrt(v), b, rtol=1e-15)
    base = pytest.importorskip("sklearn.base")
    assert np.array_equal(base.clone(mine).fit(x).labels_, mine.labels_)  # the clone keeps V
    sk = grove.HDBSCAN(metric="seuclidean", metric_params={"V": v}, min_samples=2).fit(x)
    assert np.array_equal(sk.labels_, scaled.labels_)


# -- against the hdbscan library --------------------------------------------

@pytest.fixture(scope="module")
def hdbscan_lib():
    return pytest.importorskip("hdbscan")


def library_clusterer(hdbscan_lib, x, mine, **kw):
    """A real hdbscan.HDBSCAN fitted on grove's single-linkage tree (the
    library's own _tree_to_labels), with its own prediction data."""
    from hdbscan import hdbscan_ as hlib
    lib = hdbscan_lib.HDBSCAN(prediction_data=True, gen_min_span_tree=True, **kw)
    ms = kw.get("min_samples") or kw.get("min_cluster_size", 5)
    lib.labels_, lib.probabilities_, lib.cluster_persistence_, lib._condensed_tree, lib._single_linkage_tree = \
        hlib._tree_to_labels(x, mine.single_linkage_tree_.to_numpy(), kw.get("min_cluster_size", 5),
                             kw.get("cluster_selection_method", "eom"))
    lib._min_spanning_tree = mine.minimum_spanning_tree_.to_numpy()
    lib._raw_data, lib.min_samples = x, ms
    lib.generate_prediction_data()
    return lib


@pytest.mark.parametrize("kw", [dict(min_cluster_size=10, min_samples=4), dict(min_cluster_size=5, min_samples=1),
                                dict(min_cluster_size=8, min_samples=3, cluster_selection_method="leaf")])
def test_attributes_and_prediction_equal_the_librarys_on_the_same_tree(hdbscan_lib, kw):
    x = blobs(8)
    mine = compat.HDBSCAN(prediction_data=True, **kw).fit(x)
    lib = library_clusterer(hdbscan_lib, x, mine, **kw)
    np.testing.assert_array_equal(mine.labels_, lib.labels_)
    np.testing.assert_array_equal(mine.probabilities_, lib.probabilities_)
    np.testing.assert_array_equal(mine.cluster_persistence_, lib.cluster_persistence_)
    np.testing.assert_array_equal(mine.condensed_tree_.to_numpy(), lib.condensed_tree_.to_numpy())
    assert mine.condensed_tree_._select_clusters() == lib.condensed_tree_._select_clusters()
    assert mine.relative_validity_ == lib.relative_validity_
    for a, b in zip(mine.exemplars_, lib.exemplars_):
        np.testing.assert_array_equal(a, b)
    for c in range(mine.n_clusters_):
        np.testing.assert_allclose(mine.weighted_cluster_centroid(c), lib.weighted_cluster_centroid(c), rtol=1e-12)
        np.testing.assert_array_equal(mine.weighted_cluster_medoid(c), lib.weighted_cluster_medoid(c))
    for cut in (0.3, 0.9):
        np.testing.assert_array_equal(mine.dbscan_clustering(cut, 4), lib.dbscan_clustering(cut, 4))
    q = np.vstack([x[::7] + 0.2, np.random.default_rng(1).uniform(-12, 12, (30, 2))])
    for name in ("approximate_predict", "approximate_predict_scores", "membership_vector"):
        got, want = getattr(compat, name)(mine, q), getattr(hdbscan_lib, name)(lib, q)
        for g, w in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
            assert g.dtype == w.dtype, name
            np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-15, err_msg=name)
    np.testing.assert_allclose(compat.all_points_membership_vectors(mine),
                               hdbscan_lib.all_points_membership_vectors(lib), rtol=1e-9, atol=1e-15)
    # grove.HDBSCAN's methods give the same (its min_samples is K = the library's + 1)
    native = grove.HDBSCAN(min_cluster_size=kw["min_cluster_size"], min_samples=kw["min_samples"] + 1,
                           cluster_selection_method=kw.get("cluster_selection_method", "eom")).fit(x)
    np.testing.assert_array_equal(native.predict(q), compat.approximate_predict(mine, q)[0])
    np.testing.assert_array_equal(native.membership_vector(q), compat.membership_vector(mine, q))


def test_end_to_end_equal_to_the_library_without_ties(hdbscan_lib):
    x = blobs(9)
    x[5], x[77] = [np.nan, 1.0], [np.inf, np.inf]
    mine = compat.HDBSCAN(min_cluster_size=8, min_samples=1, gen_min_span_tree=True).fit(x)
    ref = hdbscan_lib.HDBSCAN(min_cluster_size=8, min_samples=1, gen_min_span_tree=True,
                              algorithm="prims_kdtree").fit(x)
    np.testing.assert_array_equal(mine.labels_, ref.labels_)
    assert mine.labels_[5] == mine.labels_[77] == -1
    np.testing.assert_allclose(mine.probabilities_, ref.probabilities_, atol=1e-12, rtol=0)
    np.testing.assert_allclose(mine.outlier_scores_, ref.outlier_scores_, atol=1e-12, rtol=0)
    assert mine.outlier_scores_[5] == 1.0
    tree, ref_tree = mine.condensed_tree_.to_numpy(), ref.condensed_tree_.to_numpy()
    assert len(tree) == len(ref_tree) and np.array_equal(np.sort(tree["lambda_val"]), np.sort(ref_tree["lambda_val"]))
    slt = mine.single_linkage_tree_.to_numpy()
    np.testing.assert_allclose(np.sort(slt[:, 2]), np.sort(ref.single_linkage_tree_.to_numpy()[:, 2]), rtol=1e-12)
    assert slt.shape == (len(x) - 1, 4) and slt[-1, 3] == len(x)
    weights = mine.minimum_spanning_tree_.to_numpy()[:, 2]
    assert len(np.unique(weights)) == len(weights)  # no ties: the premise of this test
    np.testing.assert_allclose(np.sort(weights), np.sort(ref.minimum_spanning_tree_.to_numpy()[:, 2]), rtol=1e-12)


def test_min_samples_is_clamped_as_in_the_library(hdbscan_lib):
    x = blobs(10, n=30)
    big = compat.HDBSCAN(min_cluster_size=4, min_samples=500).fit(x)
    assert np.array_equal(big.labels_, compat.HDBSCAN(min_cluster_size=4, min_samples=len(x) - 1).fit(x).labels_)
    assert np.array_equal(big.labels_, hdbscan_lib.HDBSCAN(min_cluster_size=4, min_samples=500).fit(x).labels_ >= 0) \
        or same_partition(big.labels_, hdbscan_lib.HDBSCAN(min_cluster_size=4, min_samples=500).fit(x).labels_)


def test_tree_objects_equal_the_librarys(hdbscan_lib):
    from hdbscan import plots
    mine = compat.HDBSCAN(min_cluster_size=6, min_samples=2).fit(blobs(11))
    tree = mine.condensed_tree_.to_numpy()
    theirs = plots.CondensedTree(tree, mine.labels_)
    for log_size in (False, True):
        a = mine.condensed_tree_.get_plot_data(log_size=log_size)
        b = theirs.get_plot_data(log_size=log_size)
        for key in ("bar_centers", "bar_tops", "bar_bottoms", "bar_widths", "line_xs", "line_ys"):
            np.testing.assert_allclose(np.asarray(a[key], float), np.asarray(b[key], float), rtol=1e-12, err_msg=key)
        assert a["cluster_bounds"].keys() == b["cluster_bounds"].keys()
    z = mine.single_linkage_tree_.to_numpy()
    root = len(z) + 1
    want = plots._calculate_linewidths(plots._get_dendrogram_ordering(2 * len(z), z, root), z, root)
    assert mine.single_linkage_tree_._line_widths() == [tuple(map(float, w)) for w in want]
    pandas = pytest.importorskip("pandas")
    for obj, lib_obj in ((mine.condensed_tree_, theirs), (mine.single_linkage_tree_, plots.SingleLinkageTree(z)),
                         (mine.minimum_spanning_tree_,
                          plots.MinimumSpanningTree(mine.minimum_spanning_tree_.to_numpy(), mine._raw_data))):
        pandas.testing.assert_frame_equal(obj.to_pandas(), lib_obj.to_pandas(), check_dtype=False)
        networkx = pytest.importorskip("networkx")
        g, h = obj.to_networkx(), lib_obj.to_networkx()
        assert networkx.utils.graphs_equal(g, h) or (sorted(g.edges) == sorted(h.edges)
                                                     and g.number_of_nodes() == h.number_of_nodes())


def test_plots_draw_with_matplotlib():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    mine = compat.HDBSCAN(min_cluster_size=6).fit(blobs(12))
    for draw in (lambda: mine.condensed_tree_.plot(select_clusters=True, label_clusters=True),
                 lambda: mine.single_linkage_tree_.plot(truncate_mode="lastp", p=10),
                 lambda: mine.minimum_spanning_tree_.plot()):
        plt.figure()
        assert draw() is not None
        plt.close("all")


# -- ties ---------------------------------------------------------------------

def test_simultaneous_ties_do_not_depend_on_row_order():
    """On a grid with duplicates (nearly every weight tied) the
    simultaneous hierarchy must give the same clustering for any row
    order (up to renaming)."""
    rng = np.random.default_rng(13)
    x = np.round(rng.normal(0, 1, (300, 2)) * 2) / 2
    x = np.vstack([x, x[:40]])
    for seed in range(6):
        perm = np.random.default_rng(seed).permutation(len(x))
        labels = np.empty(len(x), np.int64)
        labels[perm] = compat.HDBSCAN(min_cluster_size=8, ties="simultaneous").fit(x[perm]).labels_
        base = compat.HDBSCAN(min_cluster_size=8, ties="simultaneous").fit(x).labels_
        assert same_partition(labels, base)
    with pytest.raises(ValueError, match="ties"):
        grove.HDBSCAN(ties="random").fit(x)
