"""The library's ``hdbscan.robust_single_linkage_`` (Chaudhuri and
Dasgupta's robust single linkage) on grove's HDBSCAN* model: the
single-linkage tree of the mutual reachability max(core_k(a), core_k(b),
|a - b| / alpha) over the exact MST, cut at ``cut``, components of fewer
than ``gamma`` points noise.

``k`` counts neighbours without the point, as the library's generic and
Borůvka algorithms do (its Prim algorithms count the point, and its
generic one leaves out alpha). ``algorithm``, ``memory`` and
``leaf_size`` change nothing; metrics and non-finite rows as the
library's checks refuse them, and the metrics grove's HDBSCAN refuses."""
from __future__ import annotations

from typing import Any

import numpy as np

from ..._errors import InvalidArgumentError
from ..._estimator import BaseEstimator, ClusterMixin, check_is_fitted, validate
from ..._hdbscan_trees import SingleLinkageTree
from .hdbscan_ import HDBSCAN

__all__ = ["RobustSingleLinkage", "robust_single_linkage"]

_ALGORITHMS = ("best", "generic", "prims_kdtree", "prims_balltree", "boruvka_kdtree", "boruvka_balltree")


def _fit(X: Any, k: Any, alpha: Any, gamma: Any, metric: Any, algorithm: Any, leaf_size: Any,
         core_dist_n_jobs: Any, kwargs: dict[str, Any]) -> HDBSCAN:
    """The fitted model whose single-linkage tree is robust single
    linkage's, after the library's checks in its order."""
    if not isinstance(k, int) or k < 1:
        raise InvalidArgumentError("k must be an integer greater than zero!")
    if not isinstance(alpha, float) or alpha < 1.0:
        raise InvalidArgumentError("alpha must be a float greater than or equal to 1.0!")
    if not isinstance(gamma, int) or gamma < 1:
        raise InvalidArgumentError("gamma must be an integer greater than zero!")
    if not isinstance(leaf_size, int) or leaf_size < 1:
        raise InvalidArgumentError("Leaf size must be at least one!")
    if algorithm not in _ALGORITHMS:
        raise TypeError(f"Unknown algorithm type {algorithm} specified")
    # min_cluster_size shapes the condensed tree only, which nothing here reads.
    model = HDBSCAN(min_cluster_size=2, min_samples=k, alpha=alpha, metric=metric, leaf_size=leaf_size,
                    core_dist_n_jobs=core_dist_n_jobs, **kwargs)
    x = validate(model, X, reset=True, sparse=True, allow_nan=False)  # the library refuses NaN and infinity
    return model.fit(x)


def robust_single_linkage(X: Any, cut: float, k: int = 5, alpha: float = 1.4142135623730951, gamma: int = 5,
                          metric: Any = "euclidean", algorithm: str = "best", memory: Any = None,
                          leaf_size: int = 40, core_dist_n_jobs: int = 4, **kwargs: Any) -> tuple:
    """(labels, single-linkage tree in scipy's format), as the library's
    robust_single_linkage."""
    model = _fit(X, k, alpha, gamma, metric, algorithm, leaf_size, core_dist_n_jobs, kwargs)
    return model.dbscan_clustering(cut, gamma), model.single_linkage_tree_.to_numpy()


class RobustSingleLinkage(ClusterMixin, BaseEstimator):
    """hdbscan.RobustSingleLinkage over grove (see the module doc):
    ``labels_`` and ``cluster_hierarchy_`` after fit."""

    def __init__(self, cut: float = 0.4, k: int = 5, alpha: float = 1.4142135623730951, gamma: int = 5,
                 metric: Any = "euclidean", algorithm: str = "best", core_dist_n_jobs: int = 4,
                 metric_params: dict[str, Any] | None = None):
        self.cut = cut
        self.k = k
        self.alpha = alpha
        self.gamma = gamma
        self.metric = metric
        self.algorithm = algorithm
        self.core_dist_n_jobs = core_dist_n_jobs
        self.metric_params = metric_params

    def fit(self, X: Any, y: Any = None) -> RobustSingleLinkage:
        """Cluster X (n_samples, n_features); y is ignored. Returns self."""
        self._model = _fit(X, self.k, self.alpha, self.gamma, self.metric, self.algorithm, leaf_size=40,
                           core_dist_n_jobs=self.core_dist_n_jobs, kwargs=dict(self.metric_params or {}))
        self.n_features_in_ = self._model.n_features_in_
        self.labels_ = self._model.dbscan_clustering(self.cut, self.gamma)
        return self

    def fit_predict(self, X: Any, y: Any = None) -> np.ndarray:
        """fit(X), then labels_."""
        return self.fit(X).labels_

    @property
    def cluster_hierarchy_(self) -> SingleLinkageTree:
        """The single-linkage tree (get_clusters cuts it again)."""
        check_is_fitted(self, "labels_")
        return self._model.single_linkage_tree_
