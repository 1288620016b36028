"""``hdbscan.HDBSCAN``'s parameters on grove's HDBSCAN*.

    from grove.compat.hdbscan import HDBSCAN   # was: from hdbscan import HDBSCAN

``min_samples`` keeps the library's meaning (neighbours not counting the
point; grove's K is min_samples + 1, and None means min_cluster_size as
there). The MST is always exact, so ``algorithm``, ``leaf_size``,
``memory`` and ``approx_min_span_tree`` are accepted and have no effect;
``core_dist_n_jobs`` sets the threads (capped at the cores; <= 0 = all).
Parameters that would change the result in ways grove does not implement
(non-Euclidean metrics, alpha != 1, max_cluster_size, persistence or
epsilon_max selection, the reference implementation's quirks, prediction or
branch data, gen_min_span_tree) raise UnsupportedError at fit. Results:
``labels_``, ``probabilities_``, ``outlier_scores_`` (where the library
gives NaN for a GLOSH score of 0/0, grove gives 1) and ``n_clusters_``.
"""
from __future__ import annotations

import math
import os
from typing import Any

from .._errors import UnsupportedError
from .._hdbscan import HDBSCAN as _GroveHDBSCAN

_EUCLIDEAN = ("euclidean", "l2", "minkowski")


class HDBSCAN(_GroveHDBSCAN):
    """hdbscan.HDBSCAN's constructor over grove (see the module doc)."""

    def __init__(self, min_cluster_size: int = 5, min_samples: int | None = None,
                 cluster_selection_epsilon: float = 0.0, cluster_selection_persistence: float = 0.0,
                 max_cluster_size: int = 0, metric: str = "euclidean", alpha: float = 1.0, p: float | None = None,
                 algorithm: str = "best", leaf_size: int = 40, memory: Any = None, approx_min_span_tree: bool = True,
                 gen_min_span_tree: bool = False, core_dist_n_jobs: int = 4, cluster_selection_method: str = "eom",
                 allow_single_cluster: bool = False, prediction_data: bool = False,
                 branch_detection_data: bool = False, match_reference_implementation: bool = False,
                 cluster_selection_epsilon_max: float = math.inf, **kwargs: Any):
        super().__init__(min_cluster_size, min_samples, cluster_selection_method, cluster_selection_epsilon,
                         allow_single_cluster)
        self.cluster_selection_persistence = cluster_selection_persistence
        self.max_cluster_size = max_cluster_size
        self.metric, self.alpha, self.p = metric, alpha, p
        self.algorithm, self.leaf_size, self.memory = algorithm, leaf_size, memory
        self.approx_min_span_tree, self.gen_min_span_tree = approx_min_span_tree, gen_min_span_tree
        self.core_dist_n_jobs = core_dist_n_jobs
        self.prediction_data, self.branch_detection_data = prediction_data, branch_detection_data
        self.match_reference_implementation = match_reference_implementation
        self.cluster_selection_epsilon_max = cluster_selection_epsilon_max
        self._kwargs = kwargs

    def _grove_min_samples(self) -> int:
        return (self.min_cluster_size if self.min_samples is None else self.min_samples) + 1

    def _refuse_unsupported(self) -> None:
        if self.metric not in _EUCLIDEAN or (self.metric == "minkowski" and self.p not in (None, 2)):
            raise UnsupportedError(f"metric={self.metric!r}" + (f", p={self.p!r}" if self.p is not None else "")
                                   + ": grove computes Euclidean distances only")
        refused = {"alpha": (self.alpha, 1.0), "max_cluster_size": (self.max_cluster_size, 0),
                   "cluster_selection_persistence": (self.cluster_selection_persistence, 0.0),
                   "cluster_selection_epsilon_max": (self.cluster_selection_epsilon_max, math.inf),
                   "match_reference_implementation": (self.match_reference_implementation, False),
                   "prediction_data": (self.prediction_data, False),
                   "branch_detection_data": (self.branch_detection_data, False),
                   "gen_min_span_tree": (self.gen_min_span_tree, False)}
        for name, (value, default) in refused.items():
            if value != default:
                raise UnsupportedError(f"{name}={value!r} is not supported by grove's HDBSCAN* (only {default!r})")
        if self._kwargs:
            raise UnsupportedError(f"metric arguments {sorted(self._kwargs)}: grove takes no metric arguments")

    def fit(self, X: Any, y: Any = None) -> HDBSCAN:
        """Cluster X (n, d) as hdbscan.HDBSCAN.fit does; y is ignored."""
        self._refuse_unsupported()
        jobs = self.core_dist_n_jobs
        self.threads = 0 if jobs is None or jobs <= 0 else min(int(jobs), os.cpu_count() or 1)
        return super().fit(X)
