"""The fitted HDBSCAN* model of the C library (grove_hdbscan_model) as a
handle: every accessor returns new NumPy arrays, and prediction runs on
it. See include/grove.h ("A fitted HDBSCAN* model") for what each holds."""
from __future__ import annotations

import ctypes as C

import numpy as np

from . import _clib
from ._arrays import address, options, points_array, points_view
from ._cstructs import HdbscanParams
from ._handle import Handle

# The library's condensed_tree_ record layout (hdbscan's and scikit-learn's).
CONDENSED_DTYPE = np.dtype([("parent", np.intp), ("child", np.intp), ("lambda_val", np.float64),
                            ("child_size", np.intp)])


class Model(Handle):
    """grove_hdbscan_model fitted on (n, d) points with the given C
    parameters (immutable; accessors and predictions from several threads
    at once are safe)."""

    _free = "grove_hdbscan_model_free"
    _rebuild = "pickle the estimator, which fits it again when unpickled"

    def __init__(self, x: np.ndarray, params: HdbscanParams, threads: int | None = None):
        super().__init__()
        x = points_array(x, one_d=False)
        opts = options(threads)
        _clib.call(_clib.lib.grove_hdbscan_model_create, points_view(x), C.byref(params), opts,
                   C.byref(self._handle))
        self.prediction_data = bool(params.prediction_data)
        with self._use() as h:
            lib = _clib.lib
            self.n, self.d = lib.grove_hdbscan_model_n(h), lib.grove_hdbscan_model_d(h)
            self.clusters = lib.grove_hdbscan_model_clusters(h)
            self._rows = lib.grove_hdbscan_model_condensed_rows(h)
            self._exemplars = lib.grove_hdbscan_model_exemplar_count(h)

    def _fill(self, fn: str, *outputs: np.ndarray | None) -> None:
        with self._use() as h:
            _clib.check(getattr(_clib.lib, fn)(h, *map(address, outputs)))

    def params(self) -> HdbscanParams:
        """The parameters as fitted (min_samples resolved to K)."""
        p = HdbscanParams()
        with self._use() as h:
            _clib.check(_clib.lib.grove_hdbscan_model_params(h, C.byref(p)))
        return p

    def labels(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(labels_, probabilities_, outlier_scores_)."""
        labels, prob, scores = np.empty(self.n, np.int64), np.empty(self.n), np.empty(self.n)
        self._fill("grove_hdbscan_model_labels", labels, prob, scores)
        return labels, prob, scores

    def mst(self) -> tuple[np.ndarray, np.ndarray]:
        """(edges (n - 1, 2) int64, weights (n - 1,)) in merge order."""
        m = max(self.n - 1, 0)
        edges, weights = np.empty((m, 2), np.int64), np.empty(m)
        self._fill("grove_hdbscan_model_mst", edges, weights)
        return edges, weights

    def single_linkage(self) -> np.ndarray:
        """scipy's linkage format, (n - 1, 4) float64."""
        tree = np.empty((max(self.n - 1, 0), 4))
        self._fill("grove_hdbscan_model_single_linkage", tree)
        return tree

    def condensed_tree(self) -> np.ndarray:
        """The condensed tree as the library's record array."""
        cols = [np.empty(self._rows, np.int64), np.empty(self._rows, np.int64), np.empty(self._rows),
                np.empty(self._rows, np.int64)]
        self._fill("grove_hdbscan_model_condensed_tree", *cols)
        tree = np.empty(self._rows, dtype=CONDENSED_DTYPE)
        for name, col in zip(CONDENSED_DTYPE.names or (), cols):
            tree[name] = col
        return tree

    def selected_clusters(self) -> tuple[np.ndarray, np.ndarray]:
        """Per label: the selected cluster's id and the prediction cluster's."""
        selected, predicted = np.empty(self.clusters, np.int64), np.empty(self.clusters, np.int64)
        self._fill("grove_hdbscan_model_selected_clusters", selected, predicted)
        return selected, predicted

    def persistence(self) -> np.ndarray:
        out = np.empty(self.clusters)
        self._fill("grove_hdbscan_model_persistence", out)
        return out

    def exemplar_rows(self) -> list[np.ndarray]:
        """Per prediction cluster, the rows of its exemplars."""
        offsets, rows = np.empty(self.clusters + 1, np.int64), np.empty(max(self._exemplars, 1), np.int64)
        self._fill("grove_hdbscan_model_exemplars", offsets, rows)
        return [rows[offsets[c]:offsets[c + 1]].copy() for c in range(self.clusters)]

    def relative_validity(self) -> float:
        score = C.c_double()
        with self._use() as h:
            _clib.check(_clib.lib.grove_hdbscan_model_relative_validity(h, C.byref(score)))
        return score.value

    def dbscan(self, cut_distance: float, min_cluster_size: int) -> np.ndarray:
        labels = np.empty(self.n, np.int64)
        with self._use() as h:
            _clib.check(_clib.lib.grove_hdbscan_model_dbscan(h, float(cut_distance), min_cluster_size,
                                                            address(labels)))
        return labels

    # Prediction (the model must have been fitted with prediction_data).

    def _predict(self, fn: str, queries: np.ndarray, outputs: list[np.ndarray | None], threads: int | None) -> None:
        q = points_array(queries, "points_to_predict", one_d=False)
        opts = options(threads)
        with self._use() as h:
            _clib.call(getattr(_clib.lib, fn), h, points_view(q), *map(address, outputs), opts)

    def approximate_predict(self, q: np.ndarray, threads: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        labels, prob = np.empty(len(q), np.int64), np.empty(len(q))
        self._predict("grove_hdbscan_approximate_predict", q, [labels, prob], threads)
        return labels, prob

    def approximate_predict_scores(self, q: np.ndarray, threads: int | None = None) -> np.ndarray:
        scores = np.empty(len(q))
        self._predict("grove_hdbscan_approximate_predict_scores", q, [scores], threads)
        return scores

    def membership_vector(self, q: np.ndarray, threads: int | None = None) -> np.ndarray:
        out = np.zeros((len(q), self.clusters))
        self._predict("grove_hdbscan_membership_vector", q, [out], threads)
        return out

    def all_points_membership_vectors(self, threads: int | None = None) -> np.ndarray:
        out = np.zeros((self.n, self.clusters))
        opts = options(threads)
        with self._use() as h:
            _clib.call(_clib.lib.grove_hdbscan_all_points_membership_vectors, h, address(out), opts)
        return out
