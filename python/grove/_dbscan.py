"""DBSCAN as scikit-learn's estimator: ``grove.DBSCAN``, with
``sklearn.cluster.DBSCAN``'s parameters and its labels, border points
included (grove_dbscan; docs/density.md)."""
from __future__ import annotations

import ctypes as C
from typing import Any

import numpy as np

from . import _clib
from ._arrays import address, as_numpy, fixed, options, points_array, points_view
from ._cstructs import DbscanCounts, DbscanParams
from ._errors import InvalidArgumentError, UnsupportedMetricError
from ._estimator import HAVE_SKLEARN, BaseEstimator, ClusterMixin, threads_from_n_jobs, validate
from ._join import index_params


def _refuse(name: str, what: str, value: Any) -> None:
    raise InvalidArgumentError(f"The {name!r} parameter of DBSCAN must be {what}. Got {value!r} instead.")


def _integral(value: Any) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def _real(value: Any) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)


def _weights(sample_weight: Any, n: int) -> np.ndarray:
    """One float64 weight per row, as scikit-learn checks them: a number
    is every row's weight; all zero is refused (finiteness: grove_dbscan)."""
    w = as_numpy(sample_weight, "sample_weight")
    w = fixed(np.full(n, w, dtype=np.float64) if w.ndim == 0 else w, np.float64, (n,), "sample_weight")
    if n and not w.any():
        raise InvalidArgumentError("Sample weights must contain at least one non-zero number.")
    return w


class DBSCAN(ClusterMixin, BaseEstimator):
    """Exact DBSCAN with scikit-learn's ``sklearn.cluster.DBSCAN``
    parameters and labels.

    eps: neighbourhood radius, > 0, inclusive (dist <= eps).
    min_samples: points (or weight) within eps, the point itself
        included, that make a core point.
    metric: "euclidean" ("l2", or "minkowski" with p None or 2); any other
        metric is refused (UnsupportedMetricError, also a ValueError).
    metric_params, algorithm, leaf_size: accepted as scikit-learn's, no
        effect (grove's search is exact whatever the algorithm).
    n_jobs: threads; None = all cores, -1 = all cores, -2 = all but one
        (negative counts as joblib's, from the cores OpenMP gives grove);
        the labels are the same for any count.
    boxsize: a periodic box as SciPy's cKDTree takes it (one length, or
        one per feature, 0 = not periodic): minimum-image distances, every
        coordinate in [0, L) (grove's addition; None = no box).

    After fit: labels_ (cluster per row, clusters numbered by their
    lowest-index core point, -1 noise), core_sample_indices_ (the core
    points' rows, ascending), components_ (those rows of X),
    n_features_in_, feature_names_in_ (DataFrames). Memory: O(n) beside
    the index, whatever eps (no neighbourhood is stored)."""

    def __init__(self, eps: float = 0.5, *, min_samples: int = 5, metric: Any = "euclidean",
                 metric_params: dict | None = None, algorithm: str = "auto", leaf_size: int = 30,
                 p: float | None = None, n_jobs: int | None = None, boxsize: Any = None):
        self.eps = eps
        self.min_samples = min_samples
        self.metric = metric
        self.metric_params = metric_params
        self.algorithm = algorithm
        self.leaf_size = leaf_size
        self.p = p
        self.n_jobs = n_jobs
        self.boxsize = boxsize

    def _check_params(self) -> None:
        if not _real(self.eps) or not self.eps > 0 or not np.isfinite(self.eps):
            _refuse("eps", "a float in the range (0.0, inf)", self.eps)
        if not _integral(self.min_samples) or self.min_samples < 1:
            _refuse("min_samples", "an int in the range [1, inf)", self.min_samples)
        if self.algorithm not in ("auto", "ball_tree", "kd_tree", "brute"):
            _refuse("algorithm", "a str among {'auto', 'ball_tree', 'brute', 'kd_tree'}", self.algorithm)
        if not _integral(self.leaf_size) or self.leaf_size < 1:
            _refuse("leaf_size", "an int in the range [1, inf)", self.leaf_size)
        if self.p is not None and (not _real(self.p) or self.p < 0):
            _refuse("p", "a float in the range [0.0, inf) or None", self.p)
        if self.metric_params is not None and not isinstance(self.metric_params, dict):
            _refuse("metric_params", "an instance of 'dict' or None", self.metric_params)
        metric, p = self.metric, (self.metric_params or {}).get("p", self.p)
        euclidean = metric in ("euclidean", "l2") or (metric == "minkowski" and p in (None, 2))
        if not euclidean or set(self.metric_params or {}) - {"p"}:
            raise UnsupportedMetricError(f"metric={metric!r}" + (f" with p={p!r}" if metric == "minkowski" else "")
                                         + (f" and metric_params {self.metric_params!r}" if self.metric_params
                                            else "") + ": grove's DBSCAN computes Euclidean distances only")

    def fit(self, X: Any, y: Any = None, sample_weight: Any = None) -> DBSCAN:
        """Cluster X (n_samples, n_features); y is ignored; sample_weight:
        one finite weight per row (None: 1 each), a core point's
        neighbourhood must weigh at least min_samples. Returns self."""
        self._check_params()
        x = points_array(validate(self, X, reset=True, sparse=False, allow_nan=False), "X", one_d=False)
        n = x.shape[0]
        weight = None if sample_weight is None else _weights(sample_weight, n)
        _clib.require("grove_dbscan")
        params = _clib.defaults(DbscanParams)
        params.eps, params.min_samples = float(self.eps), int(self.min_samples)
        if weight is not None:
            params.sample_weight = weight.ctypes.data_as(C.POINTER(C.c_double))
        labels = np.empty(n, dtype=np.intp)
        core = np.zeros(n, dtype=np.uint8)
        counts = DbscanCounts()
        opts = options(threads_from_n_jobs(self.n_jobs, None))
        index, box = index_params(boxsize=self.boxsize)
        _clib.call(_clib.lib.grove_dbscan, points_view(x), C.byref(index), C.byref(params), address(labels),
                   address(core), C.byref(counts), opts)
        del box  # the index params point into it until here
        self.labels_ = labels
        self.core_sample_indices_ = np.flatnonzero(core)
        self.components_ = x[self.core_sample_indices_]  # indexing by an array copies
        return self

    def fit_predict(self, X: Any, y: Any = None, sample_weight: Any = None) -> np.ndarray:
        """fit(X, sample_weight=sample_weight).labels_."""
        return self.fit(X, sample_weight=sample_weight).labels_

    if HAVE_SKLEARN and hasattr(BaseEstimator, "__sklearn_tags__"):
        def __sklearn_tags__(self) -> Any:
            tags = super().__sklearn_tags__()
            tags.input_tags.sparse = False
            return tags
