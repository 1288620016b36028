"""Which metrics grove's HDBSCAN* computes: Euclidean distances, and the
metrics that are Euclidean distances of rescaled coordinates
(standardised Euclidean). Every other metric the scikit-learn and
hdbscan estimators name is refused, naming it; a name neither knows is
an invalid argument."""
from __future__ import annotations

from typing import Any

import numpy as np

from ._errors import InvalidArgumentError, UnsupportedMetricError

EUCLIDEAN = ("euclidean", "l2")
MINKOWSKI = ("minkowski", "p")
# Metric names scikit-learn's and hdbscan's estimators accept (their
# KDTree, BallTree, pairwise_distances and SciPy metrics).
KNOWN = frozenset(EUCLIDEAN + MINKOWSKI + (
    "seuclidean", "cityblock", "manhattan", "l1", "chebyshev", "infinity", "braycurtis", "canberra", "correlation",
    "cosine", "arccos", "dice", "hamming", "haversine", "jaccard", "kulsinski", "mahalanobis", "matching",
    "nan_euclidean", "rogerstanimoto", "russellrao", "sokalmichener", "sokalsneath", "sqeuclidean", "wminkowski",
    "yule", "pyfunc", "precomputed"))
SUPPORTED = "euclidean, l2, minkowski with p=2, seuclidean with V"


def euclidean_scale(metric: Any, p: Any, kwargs: dict[str, Any], d: int) -> np.ndarray | None:
    """None when `metric` is Euclidean as it is; per-feature factors that
    make it Euclidean (seuclidean: 1 / sqrt(V)); else refused."""
    kwargs = dict(kwargs)
    if metric in MINKOWSKI:
        p = kwargs.pop("p", p)
        if p is None:
            raise TypeError("Minkowski metric given but no p value supplied!")
        if p < 0:
            raise InvalidArgumentError("Minkowski metric with negative p value is not defined!")
        if p != 2:
            raise UnsupportedMetricError(f"metric={metric!r} with p={p!r}: grove's HDBSCAN* computes Euclidean "
                                         f"distances only ({SUPPORTED})")
        metric = "euclidean"
    scale = None
    if metric == "seuclidean":
        if "V" not in kwargs:
            raise UnsupportedMetricError("metric='seuclidean' needs V (the per-feature variances)")
        v = np.asarray(kwargs.pop("V"), dtype=np.float64)
        if v.shape != (d,) or not np.all(np.isfinite(v)) or np.any(v <= 0):
            raise InvalidArgumentError(f"V: expected {d} positive finite variances, got shape {v.shape}")
        scale = 1.0 / np.sqrt(v)
    elif callable(metric):
        raise UnsupportedMetricError(f"metric={metric!r} (a callable): grove's HDBSCAN* "
                                     f"computes Euclidean distances only ({SUPPORTED})")
    elif metric == "precomputed":
        raise UnsupportedMetricError("metric='precomputed': grove's HDBSCAN* clusters points, not precomputed "
                                     "distances")
    elif not isinstance(metric, str) or metric not in KNOWN:
        raise InvalidArgumentError(f"metric: unknown metric {metric!r}")
    elif metric not in EUCLIDEAN:
        raise UnsupportedMetricError(f"metric={metric!r}: grove's HDBSCAN* computes Euclidean distances only "
                                     f"({SUPPORTED})")
    if kwargs:
        raise UnsupportedMetricError(f"metric arguments {sorted(kwargs)}: grove's {metric} metric takes none")
    return scale
