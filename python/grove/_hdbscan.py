"""HDBSCAN* as a scikit-learn-style estimator: ``grove.HDBSCAN``."""
from __future__ import annotations

import ctypes as C
import inspect
from typing import Any

import numpy as np

from . import _clib
from ._arrays import address, count, options, points_array, points_view
from ._cstructs import HdbscanParams
from ._errors import InvalidArgumentError

_SELECTION = {"eom": 0, "leaf": 1}


class Estimator:
    """get_params / set_params / repr from the constructor's arguments, as
    scikit-learn's BaseEstimator does (so ``sklearn.base.clone`` and grid
    searches work) without depending on scikit-learn."""

    @classmethod
    def _param_names(cls) -> list[str]:
        sig = inspect.signature(cls.__init__)
        return [p.name for p in sig.parameters.values() if p.name != "self" and p.kind != p.VAR_KEYWORD]

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self._param_names()}

    def set_params(self, **params: Any) -> Estimator:
        names = self._param_names()
        for key, value in params.items():
            if key not in names:
                raise InvalidArgumentError(f"{type(self).__name__}: no parameter {key!r} (have {', '.join(names)})")
            setattr(self, key, value)
        return self

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({args})"


class HDBSCAN(Estimator):
    """HDBSCAN* clustering (grove_hdbscan), matching the ``hdbscan`` library.

    min_cluster_size: smallest cluster, >= 2.
    min_samples: K, the neighbour whose distance is a point's core distance,
        counting the point itself (scikit-learn's convention); None =
        min_cluster_size. The ``hdbscan`` library's min_samples is K - 1:
        use ``grove.compat.hdbscan.HDBSCAN`` for its parameters as they are.
    cluster_selection_method: "eom" (excess of mass) or "leaf".
    cluster_selection_epsilon: merge clusters split below this distance.
    allow_single_cluster: allow the root to be the one cluster.
    threads: None or 0 = all cores.

    After ``fit(X)``: ``labels_`` (int64, -1 = noise, clusters numbered in
    condensed-tree order), ``probabilities_`` and ``outlier_scores_``
    (GLOSH), float64 in [0, 1], and ``n_clusters_``."""

    def __init__(self, min_cluster_size: int = 5, min_samples: int | None = None,
                 cluster_selection_method: str = "eom", cluster_selection_epsilon: float = 0.0,
                 allow_single_cluster: bool = False, threads: int | None = None):
        self.min_cluster_size = min_cluster_size
        self.min_samples = min_samples
        self.cluster_selection_method = cluster_selection_method
        self.cluster_selection_epsilon = cluster_selection_epsilon
        self.allow_single_cluster = allow_single_cluster
        self.threads = threads

    def _grove_min_samples(self) -> int:
        """K for grove_hdbscan_params.min_samples (counting the point)."""
        return self.min_cluster_size if self.min_samples is None else self.min_samples

    def _params(self) -> HdbscanParams:
        params = _clib.defaults(HdbscanParams)
        params.min_cluster_size = count(self.min_cluster_size, "min_cluster_size", 2)
        params.min_samples = count(self._grove_min_samples(), "min_samples", 1)
        if self.cluster_selection_method not in _SELECTION:
            raise InvalidArgumentError(f"cluster_selection_method: 'eom' or 'leaf', got "
                                       f"{self.cluster_selection_method!r}")
        params.selection = _SELECTION[self.cluster_selection_method]
        params.epsilon = float(self.cluster_selection_epsilon)
        params.allow_single_cluster = bool(self.allow_single_cluster)
        return params

    def fit(self, X: Any, y: Any = None) -> HDBSCAN:
        """Cluster X (n, d); y is ignored. Returns self."""
        x = points_array(X, "X", one_d=False)
        n = x.shape[0]
        params = self._params()
        labels, probabilities, scores = np.empty(n, dtype=np.int64), np.empty(n), np.empty(n)
        clusters = C.c_size_t()
        opts = options(self.threads)
        _clib.call(_clib.lib.grove_hdbscan, points_view(x), C.byref(params), address(labels), address(probabilities),
                   address(scores), C.byref(clusters), opts)
        self.labels_, self.probabilities_, self.outlier_scores_ = labels, probabilities, scores
        self.n_clusters_ = clusters.value
        return self

    def fit_predict(self, X: Any, y: Any = None) -> np.ndarray:
        """fit(X) and return labels_."""
        return self.fit(X).labels_
