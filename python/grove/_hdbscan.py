"""HDBSCAN* as scikit-learn's estimator: ``grove.HDBSCAN``, with
``sklearn.cluster.HDBSCAN``'s parameters and meanings, the ``hdbscan``
library's fitted trees and prediction for new points."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ._cstructs import GROVE_HDBSCAN_EOM, GROVE_HDBSCAN_LEAF
from ._errors import InvalidArgumentError
from ._estimator import threads_from_n_jobs
from ._hdbscan_base import HDBSCANBase, real, ties_code
from ._hdbscan_fit import Fit, spread, weighted_centers
from ._hdbscan_metric import euclidean_scale

_SELECTION = {"eom": GROVE_HDBSCAN_EOM, "leaf": GROVE_HDBSCAN_LEAF}
# scikit-learn's labels and probabilities for rows it cannot cluster.
_INFINITE, _MISSING = -2, -3


def _integral(value: Any) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def _refuse(name: str, what: str, value: Any) -> None:
    raise InvalidArgumentError(f"The {name!r} parameter of HDBSCAN must be {what}. Got {value!r} instead.")


class HDBSCAN(HDBSCANBase):
    """HDBSCAN* clustering with scikit-learn's ``sklearn.cluster.HDBSCAN``
    parameters (grove_hdbscan_model).

    min_cluster_size: smallest cluster, >= 2.
    min_samples: K, the neighbour whose distance is a point's core
        distance, counting the point itself (scikit-learn's convention;
        the ``hdbscan`` library's is K - 1, see grove.compat.hdbscan);
        None = min_cluster_size.
    cluster_selection_epsilon: clusters born below this distance are
        merged into their parents.
    max_cluster_size: excess of mass selects no larger cluster (None = no
        limit).
    metric: "euclidean" ("l2", "minkowski" with p=2, "seuclidean" with V
        in metric_params); any other metric is refused
        (UnsupportedMetricError, also a ValueError).
    alpha: mutual reachability max(core(a), core(b), |a - b| / alpha).
    algorithm, leaf_size, copy: accepted, no effect (grove's MST is
        exact, and X is never written).
    n_jobs: threads (scikit-learn's name): -1 = all cores, -2 = all but
        one (negative counts as joblib's, from the cores OpenMP gives
        grove); None = ``threads``.
    cluster_selection_method: "eom" or "leaf".
    allow_single_cluster: the root may be the one cluster.
    store_centers: None, "centroid", "medoid" or "both".
    threads: None or 0 = all cores (results are the same for any count).
    ties: "ordered" (merges of equal weight one at a time, in (weight, u,
        v) order) or "simultaneous" (Campello et al. 2015: all at once,
        independent of any MST or row order); see docs/python-compat.md.
    prediction_data: keep what prediction needs at fit; otherwise the
        first prediction fits once more with it (the same clustering).

    After fit: labels_ (-1 noise, -2 rows with infinity, -3 rows with
    NaN), probabilities_ (NaN for rows with NaN), outlier_scores_
    (GLOSH), n_clusters_, n_features_in_, feature_names_in_ (DataFrames),
    centroids_ / medoids_ (store_centers), and the hdbscan library's
    condensed_tree_, single_linkage_tree_, minimum_spanning_tree_,
    cluster_persistence_, exemplars_, relative_validity_."""

    def __init__(self, min_cluster_size: int = 5, min_samples: int | None = None,
                 cluster_selection_epsilon: float = 0.0, max_cluster_size: int | None = None,
                 metric: Any = "euclidean", metric_params: dict | None = None, alpha: float = 1.0,
                 algorithm: str = "auto", leaf_size: int = 40, n_jobs: int | None = None,
                 cluster_selection_method: str = "eom", allow_single_cluster: bool = False,
                 store_centers: str | None = None, copy: bool = False, threads: int | None = None,
                 ties: str = "ordered", prediction_data: bool = False):
        self.min_cluster_size = min_cluster_size
        self.min_samples = min_samples
        self.cluster_selection_epsilon = cluster_selection_epsilon
        self.max_cluster_size = max_cluster_size
        self.metric = metric
        self.metric_params = metric_params
        self.alpha = alpha
        self.algorithm = algorithm
        self.leaf_size = leaf_size
        self.n_jobs = n_jobs
        self.cluster_selection_method = cluster_selection_method
        self.allow_single_cluster = allow_single_cluster
        self.store_centers = store_centers
        self.copy = copy
        self.threads = threads
        self.ties = ties
        self.prediction_data = prediction_data

    # -- parameters -----------------------------------------------------
    def _check_params(self) -> None:
        if not _integral(self.min_cluster_size) or self.min_cluster_size < 2:
            _refuse("min_cluster_size", "an int in the range [2, inf)", self.min_cluster_size)
        if self.min_samples is not None and (not _integral(self.min_samples) or self.min_samples < 1):
            _refuse("min_samples", "an int in the range [1, inf) or None", self.min_samples)
        real(self.cluster_selection_epsilon, "", message=f"The 'cluster_selection_epsilon' parameter of HDBSCAN must "
             f"be a float in the range [0.0, inf). Got {self.cluster_selection_epsilon!r} instead.")
        if self.max_cluster_size is not None and (not _integral(self.max_cluster_size) or self.max_cluster_size < 1):
            _refuse("max_cluster_size", "None or an int in the range [1, inf)", self.max_cluster_size)
        if self.metric_params is not None and not isinstance(self.metric_params, dict):
            _refuse("metric_params", "an instance of 'dict' or None", self.metric_params)
        real(self.alpha, "", 0.0, True, message=f"The 'alpha' parameter of HDBSCAN must be a float in the range "
             f"(0.0, inf). Got {self.alpha!r} instead.")
        if self.algorithm not in ("auto", "brute", "kd_tree", "ball_tree"):
            _refuse("algorithm", "a str among {'auto', 'ball_tree', 'brute', 'kd_tree'}", self.algorithm)
        if not _integral(self.leaf_size) or self.leaf_size < 1:
            _refuse("leaf_size", "an int in the range [1, inf)", self.leaf_size)
        if self.cluster_selection_method not in _SELECTION:
            _refuse("cluster_selection_method", "a str among {'eom', 'leaf'}", self.cluster_selection_method)
        if self.store_centers not in (None, "centroid", "medoid", "both"):
            _refuse("store_centers", "a str among {'both', 'centroid', 'medoid'} or None", self.store_centers)
        ties_code(self.ties)

    def _scale(self, d: int) -> np.ndarray | None:
        return euclidean_scale(self.metric, None, self.metric_params or {}, d)

    def _threads(self) -> int | None:
        return threads_from_n_jobs(self.n_jobs, self.threads)

    def _c_fields(self, n_clean: int) -> dict[str, Any]:
        k = self.min_cluster_size if self.min_samples is None else self.min_samples
        if k > n_clean and n_clean == 1:
            raise InvalidArgumentError("n_samples=1 while HDBSCAN requires more than one sample (or min_samples=1)")
        if k > n_clean:
            raise InvalidArgumentError(f"min_samples ({k}) must be at most the number of samples in X ({n_clean})")
        return dict(min_cluster_size=self.min_cluster_size, min_samples=k,
                    selection=_SELECTION[self.cluster_selection_method],
                    epsilon=float(self.cluster_selection_epsilon), allow_single_cluster=bool(self.allow_single_cluster),
                    max_cluster_size=self.max_cluster_size or 0, alpha=float(self.alpha), ties=ties_code(self.ties),
                    prediction_data=bool(self.prediction_data), epsilon_max=math.inf)

    # -- fitting --------------------------------------------------------
    def _noise_labels(self, fit: Fit, labels: np.ndarray, prob: np.ndarray | None) -> None:
        if fit.rows is None:
            return
        missing = np.isnan(fit.raw).any(axis=1)
        infinite = ~missing & ~np.isfinite(fit.raw).all(axis=1)
        labels[infinite], labels[missing] = _INFINITE, _MISSING
        if prob is not None:
            prob[missing] = np.nan

    def fit(self, X: Any, y: Any = None) -> HDBSCAN:
        """Cluster X (n_samples, n_features); y is ignored. Returns self."""
        super().fit(X)
        if self.store_centers:
            fit = self._grove_fit
            for kind, medoid in (("centroid", False), ("medoid", True)):
                if self.store_centers in (kind, "both"):
                    setattr(self, kind + "s_", weighted_centers(fit.raw, fit.coordinates(fit.raw), self.labels_,
                                                                self.probabilities_, fit.clusters, medoid))
        return self

    # -- prediction -----------------------------------------------------
    # Rows of X with NaN or infinity get fit's codes: label -3 (NaN, with
    # probability NaN) or -2 (infinity, probability 0), outlier score 1,
    # no membership.
    def _predict(self, X: Any, method: str, fill: tuple) -> Any:
        fit = self._fitted()
        x = self._validate(X, reset=False)
        finite = np.isfinite(x).all(axis=1)
        out = getattr(fit.predictor(), method)(fit.coordinates(x if finite.all() else x[finite]), self._threads())
        if finite.all():
            return out
        parts = [spread(part, finite, len(x), value) for part, value in zip(out if isinstance(out, tuple) else (out,),
                                                                              fill)]
        if method == "approximate_predict":
            missing = np.isnan(x).any(axis=1)
            parts[0][missing], parts[1][missing] = _MISSING, np.nan
        return tuple(parts) if isinstance(out, tuple) else parts[0]

    def approximate_predict(self, X: Any) -> tuple[np.ndarray, np.ndarray]:
        """Labels and membership probabilities of new points without
        refitting (the hdbscan library's approximate_predict)."""
        return self._predict(X, "approximate_predict", (_INFINITE, 0.0))

    def predict(self, X: Any) -> np.ndarray:
        """The cluster of each new point (-1 = noise): approximate_predict's
        labels."""
        return self.approximate_predict(X)[0]

    def approximate_predict_scores(self, X: Any) -> np.ndarray:
        """GLOSH outlier scores of new points."""
        return self._predict(X, "approximate_predict_scores", (1.0,))

    def membership_vector(self, X: Any) -> np.ndarray:
        """Soft clustering of new points: (n, n_clusters_) membership
        strengths, each row summing to at most 1."""
        return self._predict(X, "membership_vector", (0.0,))

    def all_points_membership_vectors(self) -> np.ndarray:
        """Soft clustering of the training points, (n_samples,
        n_clusters_) (rows with NaN or infinity: zeros)."""
        return self._fitted().all_points_membership_vectors(self._threads())
