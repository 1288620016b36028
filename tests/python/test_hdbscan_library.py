"""The C HDBSCAN* model (grove_hdbscan_model_*) against the `hdbscan`
library's own code, given grove's single-linkage tree: the library's tree
functions (condense_tree, simplify_hierarchy, compute_stability,
get_clusters, outlier_scores, labelling_at_cut), its relative_validity_ and
its prediction module (PredictionData, approximate_predict,
approximate_predict_scores, membership_vector,
all_points_membership_vectors) must give grove's results. Skipped without
hdbscan. Bound with ctypes here, independently of the binding
(grove._hdbscan_model), so the C side is checked on its own."""
import ctypes as C
import os

import numpy as np
import pytest

from grove import _clib, _cstructs

hdbscan = pytest.importorskip("hdbscan")
from hdbscan import hdbscan_ as hlib  # noqa: E402
from hdbscan import prediction as hpred  # noqa: E402
from hdbscan._hdbscan_tree import labelling_at_cut, outlier_scores  # noqa: E402
from hdbscan.plots import CondensedTree  # noqa: E402

_vp, _sz, _d, _i = C.c_void_p, C.c_size_t, C.c_double, C.c_int
PTS = _cstructs.Points
LIB = C.CDLL(_clib.library_path())
SIGS = {
    "grove_hdbscan_params_init": (None, [C.POINTER(_cstructs.HdbscanParams)]),
    "grove_hdbscan_model_create": (_i, [PTS, C.POINTER(_cstructs.HdbscanParams), _vp, C.POINTER(_vp)]),
    "grove_hdbscan_model_free": (None, [_vp]),
    "grove_hdbscan_model_clusters": (_sz, [_vp]),
    "grove_hdbscan_model_condensed_rows": (_sz, [_vp]),
    "grove_hdbscan_model_exemplar_count": (_sz, [_vp]),
    "grove_hdbscan_model_labels": (_i, [_vp, _vp, _vp, _vp]),
    "grove_hdbscan_model_mst": (_i, [_vp, _vp, _vp]),
    "grove_hdbscan_model_single_linkage": (_i, [_vp, _vp]),
    "grove_hdbscan_model_condensed_tree": (_i, [_vp, _vp, _vp, _vp, _vp]),
    "grove_hdbscan_model_selected_clusters": (_i, [_vp, _vp, _vp]),
    "grove_hdbscan_model_persistence": (_i, [_vp, _vp]),
    "grove_hdbscan_model_exemplars": (_i, [_vp, _vp, _vp]),
    "grove_hdbscan_model_relative_validity": (_i, [_vp, C.POINTER(_d)]),
    "grove_hdbscan_model_dbscan": (_i, [_vp, _d, _sz, _vp]),
    "grove_hdbscan_approximate_predict": (_i, [_vp, PTS, _vp, _vp, _vp]),
    "grove_hdbscan_approximate_predict_scores": (_i, [_vp, PTS, _vp, _vp]),
    "grove_hdbscan_membership_vector": (_i, [_vp, PTS, _vp, _vp]),
    "grove_hdbscan_all_points_membership_vectors": (_i, [_vp, _vp, _vp]),
    "grove_last_error": (C.c_char_p, []),
}
if not hasattr(LIB, "grove_hdbscan_model_create"):
    pytest.skip("the loaded libgrove has no HDBSCAN model", allow_module_level=True)
for name, (res, args) in SIGS.items():
    getattr(LIB, name).restype, getattr(LIB, name).argtypes = res, args


def ptr(a):
    return a.ctypes.data_as(_vp)


def points(x):
    x = np.ascontiguousarray(x, dtype=np.float64)
    return PTS(ptr(x), x.shape[0], x.shape[1], 2, 0), x


def check(status):
    assert status == 0, LIB.grove_last_error().decode()


class Model:
    """A fitted grove model and everything it exposes, as NumPy arrays."""

    def __init__(self, x, **kw):
        p = _cstructs.HdbscanParams()
        LIB.grove_hdbscan_params_init(C.byref(p))
        for key, value in kw.items():
            setattr(p, key, value)
        self.view, self.x = points(x)
        self.handle = _vp()
        check(LIB.grove_hdbscan_model_create(self.view, C.byref(p), None, C.byref(self.handle)))
        h, n = self.handle, len(x)
        self.k = LIB.grove_hdbscan_model_clusters(h)
        self.labels, self.prob, self.scores = np.empty(n, np.int64), np.empty(n), np.empty(n)
        check(LIB.grove_hdbscan_model_labels(h, ptr(self.labels), ptr(self.prob), ptr(self.scores)))
        self.edges, self.weights = np.empty((n - 1, 2), np.int64), np.empty(n - 1)
        check(LIB.grove_hdbscan_model_mst(h, ptr(self.edges), ptr(self.weights)))
        self.slt = np.empty((n - 1, 4))
        check(LIB.grove_hdbscan_model_single_linkage(h, ptr(self.slt)))
        rows = LIB.grove_hdbscan_model_condensed_rows(h)
        cols = [np.empty(rows, np.int64), np.empty(rows, np.int64), np.empty(rows), np.empty(rows, np.int64)]
        check(LIB.grove_hdbscan_model_condensed_tree(h, *map(ptr, cols)))
        self.tree = np.empty(rows, dtype=[("parent", np.intp), ("child", np.intp), ("lambda_val", float),
                                          ("child_size", np.intp)])
        for name, col in zip(self.tree.dtype.names, cols):
            self.tree[name] = col
        self.selected, self.pred_clusters = np.empty(self.k, np.int64), np.empty(self.k, np.int64)
        check(LIB.grove_hdbscan_model_selected_clusters(h, ptr(self.selected), ptr(self.pred_clusters)))
        self.persistence = np.empty(self.k)
        check(LIB.grove_hdbscan_model_persistence(h, ptr(self.persistence)))
        offsets = np.empty(self.k + 1, np.int64)
        ex = np.empty(max(LIB.grove_hdbscan_model_exemplar_count(h), 1), np.int64)
        check(LIB.grove_hdbscan_model_exemplars(h, ptr(offsets), ptr(ex)))
        self.exemplars = [ex[offsets[c]:offsets[c + 1]] for c in range(self.k)]
        v = C.c_double()
        check(LIB.grove_hdbscan_model_relative_validity(h, C.byref(v)))
        self.validity = v.value

    def __del__(self):
        LIB.grove_hdbscan_model_free(self.handle)

    def dbscan(self, cut, mcs):
        out = np.empty(len(self.x), np.int64)
        check(LIB.grove_hdbscan_model_dbscan(self.handle, cut, mcs, ptr(out)))
        return out

    def predict(self, q):
        view, q = points(q)
        labels, prob, scores = np.empty(len(q), np.int64), np.empty(len(q)), np.empty(len(q))
        member = np.empty((len(q), self.k))
        check(LIB.grove_hdbscan_approximate_predict(self.handle, view, ptr(labels), ptr(prob), None))
        check(LIB.grove_hdbscan_approximate_predict_scores(self.handle, view, ptr(scores), None))
        check(LIB.grove_hdbscan_membership_vector(self.handle, view, ptr(member), None))
        return labels, prob, scores, member

    def all_points(self):
        out = np.empty((len(self.x), self.k))
        check(LIB.grove_hdbscan_all_points_membership_vectors(self.handle, ptr(out), None))
        return out


def blobs(seed, n=600, d=2, centers=4):
    rng = np.random.default_rng(seed)
    c = rng.uniform(-8, 8, (centers, d))
    x = c[rng.integers(0, centers, n)] + rng.normal(0, 0.7, (n, d)) * rng.uniform(0.3, 1.5, (n, 1))
    return np.vstack([x, rng.uniform(-10, 10, (n // 15, d))])


CASES = [dict(min_cluster_size=10, min_samples=5),
         dict(min_cluster_size=5, min_samples=2, selection=1),
         dict(min_cluster_size=8, min_samples=4, epsilon=0.6),
         dict(min_cluster_size=8, min_samples=4, max_cluster_size=120),
         dict(min_cluster_size=8, min_samples=4, epsilon_max=1.0, allow_single_cluster=1),
         dict(min_cluster_size=6, min_samples=3, persistence=0.4),
         dict(min_cluster_size=6, min_samples=3, persistence=0.05, selection=1),
         dict(min_cluster_size=10, min_samples=6, match_reference_implementation=1),
         dict(min_cluster_size=12, min_samples=6, allow_single_cluster=1),
         dict(min_cluster_size=6, min_samples=4, alpha=1.3)]


def library_fit(m, kw):
    """The library's _tree_to_labels on grove's single-linkage tree."""
    mcs = kw["min_cluster_size"] + kw.get("match_reference_implementation", 0)
    labels, prob, stab, tree, _ = hlib._tree_to_labels(
        None, m.slt.copy(), mcs, "leaf" if kw.get("selection") else "eom", bool(kw.get("allow_single_cluster")),
        bool(kw.get("match_reference_implementation")), float(kw.get("epsilon", 0.0)),
        float(kw.get("persistence", 0.0)), kw.get("max_cluster_size", 0), kw.get("epsilon_max", np.inf))
    return labels, prob, stab, tree


@pytest.mark.parametrize("kw", CASES, ids=[",".join(f"{k}={v}" for k, v in c.items()) for c in CASES])
@pytest.mark.parametrize("seed", [1, 2])
def test_model_equals_the_library_on_its_tree(kw, seed):
    x = blobs(seed)
    m = Model(x, **kw)
    labels, prob, stab, tree = library_fit(m, kw)
    for name in tree.dtype.names:
        np.testing.assert_array_equal(m.tree[name], tree[name], err_msg=name)
    np.testing.assert_array_equal(m.labels, labels)
    np.testing.assert_array_equal(m.prob, prob)
    np.testing.assert_array_equal(m.persistence, stab)
    ref_scores = outlier_scores(tree)
    finite = np.isfinite(ref_scores)
    np.testing.assert_array_equal(m.scores[finite], ref_scores[finite])
    # relative_validity_ is a property of the estimator: run it on a stand-in.
    stand_in = type("Fitted", (), {})()
    stand_in._relative_validity, stand_in.gen_min_span_tree, stand_in.labels_ = None, True, labels
    stand_in._min_spanning_tree = np.column_stack([m.edges, m.weights])
    assert m.validity == hlib.HDBSCAN.relative_validity_.fget(stand_in)
    for cut, mcs in [(0.3, 5), (0.8, 10), (2.0, 2)]:
        np.testing.assert_array_equal(m.dbscan(cut, mcs), labelling_at_cut(m.slt, cut, mcs))


def library_clusterer(m, kw, labels, tree):
    """A stand-in fitted clusterer carrying the library's prediction data."""
    c = type("Fitted", (), {})()
    c.min_samples, c.min_cluster_size = kw["min_samples"] - 1, kw["min_cluster_size"]
    c.condensed_tree_ = CondensedTree(tree, labels)
    c.prediction_data_ = hpred.PredictionData(m.x, c.condensed_tree_, c.min_samples)
    return c


@pytest.mark.parametrize("kw", CASES, ids=[",".join(f"{k}={v}" for k, v in c.items()) for c in CASES])
def test_prediction_equals_the_library(kw):
    x = blobs(5)
    m = Model(x, prediction_data=1, **kw)
    labels, _, _, tree = library_fit(m, kw)
    c = library_clusterer(m, kw, labels, tree)
    np.testing.assert_array_equal(m.pred_clusters, sorted(c.condensed_tree_._select_clusters()))
    for mine, theirs in zip(m.exemplars, c.prediction_data_.exemplars):
        np.testing.assert_array_equal(x[mine], theirs)
    rng = np.random.default_rng(9)
    q = np.vstack([x[rng.integers(0, len(x), 40)] + rng.normal(0, 0.3, (40, 2)), rng.uniform(-14, 14, (40, 2)),
                   x[:20]])
    got_labels, got_prob, got_scores, got_member = m.predict(q)
    want_labels, want_prob = hpred.approximate_predict(c, q)
    np.testing.assert_array_equal(got_labels, want_labels)
    np.testing.assert_array_equal(got_prob, want_prob)
    np.testing.assert_allclose(got_scores, hpred.approximate_predict_scores(c, q), rtol=1e-12, atol=1e-15)
    if m.k:
        np.testing.assert_allclose(got_member, hpred.membership_vector(c, q), rtol=1e-9, atol=1e-15)
        np.testing.assert_allclose(m.all_points(), hpred.all_points_membership_vectors(c), rtol=1e-9, atol=1e-15)


@pytest.mark.parametrize("reps,min_samples", [(2, 2), (3, 2), (3, 3), (2, 3)])
def test_prediction_on_a_lattice_with_duplicates(reps, min_samples):
    """1-D lattice points, each repeated: clusters of exact duplicates have
    infinite lambdas, where the library's membership vectors and GLOSH
    scores divide infinity by infinity (NaN). grove's are the limits
    (docs/python-compat.md): a query on such a cluster belongs to it fully
    and scores 0, one beside it belongs nowhere and scores 1; everything
    the library computes finitely, grove computes alike."""
    base = np.concatenate([np.arange(6), 20 + np.arange(6), 40 + np.arange(3)]).astype(float)
    x = np.repeat(base, reps)[:, None]
    kw = dict(min_cluster_size=2, min_samples=min_samples)
    m = Model(x, prediction_data=1, **kw)
    assert m.k > 1
    labels, _, _, tree = library_fit(m, kw)
    c = library_clusterer(m, kw, labels, tree)
    q = np.vstack([x, x + 0.25, [[-3.0], [10.0], [47.5]]])
    on = np.arange(len(q)) < len(x)
    got_labels, got_prob, got_scores, got_member = m.predict(q)
    want_labels, want_prob = hpred.approximate_predict(c, q)
    np.testing.assert_array_equal(got_labels, want_labels)
    np.testing.assert_array_equal(got_prob, want_prob)
    want_scores = hpred.approximate_predict_scores(c, q)
    nan = np.isnan(want_scores)
    np.testing.assert_allclose(got_scores[~nan], want_scores[~nan], rtol=1e-12)
    np.testing.assert_array_equal(got_scores[nan], np.where(on[nan], 0.0, 1.0))
    one_hot = np.eye(m.k)[m.labels]
    for got, want, on_rows in [(got_member, hpred.membership_vector(c, q), on),
                               (m.all_points(), hpred.all_points_membership_vectors(c), np.ones(len(x), bool))]:
        assert np.isfinite(got).all()
        finite = np.isfinite(want).all(axis=1)
        np.testing.assert_allclose(got[finite], want[finite], rtol=1e-9, atol=1e-15)
        for row in np.flatnonzero(~finite):
            limit = one_hot[row] if on_rows[row] else np.zeros(m.k)
            np.testing.assert_allclose(got[row], limit, atol=1e-300, err_msg=f"row {row}")
