"""grove's HDBSCAN* label arrays are the peers' label arrays, numbers and
all, on data without tied weights: scikit-learn's HDBSCAN beside
grove.HDBSCAN, the hdbscan library's generic and Prim algorithms beside
grove.compat.hdbscan (each skipped where that peer is not installed).

The peers number the selected clusters in the order of their condensed
tree's ids, which come from the single-linkage tree read breadth first,
left before right, where a merge's left side is the one their Prim's
algorithm from point 0 reaches first (docs/python-compat.md, "Cluster
numbers"). tests/test_hdbscan_model.c checks the same rule against a
reference without any peer."""
import warnings

import numpy as np
import pytest

import grove
from grove.compat import hdbscan as compat

SEEDS = range(50)
MIN_CLUSTER_SIZE = 25


def blobs_and_noise(seed):
    """Six Gaussian blobs of 60 points and 60 uniform points, in 3-D."""
    rng = np.random.default_rng(seed)
    centers = rng.uniform(-10, 10, (6, 3))
    return np.vstack([c + rng.normal(0, 0.6, (60, 3)) for c in centers] + [rng.uniform(-12, 12, (60, 3))])


@pytest.mark.parametrize("k", [1, 2])  # scikit-learn's min_samples = 1 is K = 1, the library's is K = 2
def test_the_seeds_have_no_tied_mutual_reachability(k):
    """The premise of the tests below: no two mutual-reachability distances
    (core distance: the K-th neighbour counting the point) lie within a
    relative 1e-14 (about 50 rounding units) of each other, so every
    implementation's single-linkage tree is the same whatever its rounding."""
    upper = np.triu_indices(len(blobs_and_noise(0)), 1)
    for seed in SEEDS:
        x = blobs_and_noise(seed)
        d = np.sqrt(((x[:, None, :] - x[None, :, :]) ** 2).sum(axis=-1))
        core = np.partition(d, k - 1, axis=1)[:, k - 1]
        mr = np.sort(np.maximum(d, np.maximum.outer(core, core))[upper])
        assert np.all(np.diff(mr) > 1e-14 * mr[1:]), f"seed {seed}: tied mutual-reachability distances"


def equal_label_arrays(mine, theirs):
    """On how many seeds mine(x) and theirs(x), two fitted clusterers, give
    the same label array (the peer finding several clusters each time)."""
    equal = 0
    for seed in SEEDS:
        x = blobs_and_noise(seed)
        ref = theirs(x)
        assert ref.labels_.max() >= 1, seed  # several clusters: their numbers say something
        equal += np.array_equal(mine(x).labels_, ref.labels_)
    return equal


def test_labels_equal_scikit_learns_on_tie_free_seeds():
    cluster = pytest.importorskip("sklearn.cluster")
    equal = equal_label_arrays(
        lambda x: grove.HDBSCAN(min_cluster_size=MIN_CLUSTER_SIZE, min_samples=1).fit(x),
        lambda x: cluster.HDBSCAN(min_cluster_size=MIN_CLUSTER_SIZE, min_samples=1, copy=True).fit(x))
    assert equal == len(SEEDS), f"{equal} of {len(SEEDS)} label arrays equal scikit-learn's"


@pytest.mark.parametrize("algorithm", ["generic", "prims_kdtree"])
def test_labels_equal_the_hdbscan_librarys_on_tie_free_seeds(algorithm):
    hdbscan = pytest.importorskip("hdbscan")
    equal = equal_label_arrays(
        lambda x: compat.HDBSCAN(min_cluster_size=MIN_CLUSTER_SIZE, min_samples=1).fit(x),
        lambda x: hdbscan.HDBSCAN(min_cluster_size=MIN_CLUSTER_SIZE, min_samples=1, algorithm=algorithm).fit(x))
    assert equal == len(SEEDS), f"{equal} of {len(SEEDS)} label arrays equal hdbscan {algorithm}'s"


def test_prediction_follows_the_numbering():
    """approximate_predict's labels and the membership vectors' columns are
    the library's (its own prediction code on its own fit)."""
    hdbscan = pytest.importorskip("hdbscan")
    from hdbscan import prediction
    for seed in SEEDS[:5]:
        x = blobs_and_noise(seed)
        q = np.random.default_rng(seed + 1000).uniform(-12, 12, (100, 3))
        mine = compat.HDBSCAN(min_cluster_size=MIN_CLUSTER_SIZE, min_samples=1, prediction_data=True).fit(x)
        ref = hdbscan.HDBSCAN(min_cluster_size=MIN_CLUSTER_SIZE, min_samples=1, algorithm="generic",
                              prediction_data=True).fit(x)
        labels, prob = compat.approximate_predict(mine, q)
        ref_labels, ref_prob = prediction.approximate_predict(ref, q)
        np.testing.assert_array_equal(labels, ref_labels)
        np.testing.assert_allclose(prob, ref_prob, rtol=1e-9, atol=1e-15)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # the library's 0/0 on far points
            np.testing.assert_allclose(compat.membership_vector(mine, q), prediction.membership_vector(ref, q),
                                       rtol=1e-9, atol=1e-15)
            np.testing.assert_allclose(compat.all_points_membership_vectors(mine),
                                       prediction.all_points_membership_vectors(ref), rtol=1e-9, atol=1e-15)
        native = grove.HDBSCAN(min_cluster_size=MIN_CLUSTER_SIZE, min_samples=2).fit(x)
        np.testing.assert_array_equal(native.predict(q), labels)
