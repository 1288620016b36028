"""The library's ``hdbscan.hdbscan_``: ``HDBSCAN`` and ``hdbscan()`` on
grove's HDBSCAN* (the package's doc says what differs)."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..._cstructs import GROVE_HDBSCAN_EOM, GROVE_HDBSCAN_LEAF
from ..._errors import InvalidArgumentError, UnsupportedError
from ..._estimator import openmp_cores, threads_from_n_jobs
from ..._hdbscan_base import HDBSCANBase, real, ties_code
from ..._hdbscan_metric import euclidean_scale
from .prediction import PredictionData

__all__ = ["HDBSCAN", "hdbscan"]

_ALGORITHMS = ("best", "generic", "prims_kdtree", "prims_balltree", "boruvka_kdtree", "boruvka_balltree")


class HDBSCAN(HDBSCANBase):
    """hdbscan.HDBSCAN's constructor and attributes over grove (see the
    module doc), plus ``ties`` ("ordered" or "simultaneous")."""

    _sparse = True
    _prediction_data: PredictionData | None

    def __init__(self, min_cluster_size: int = 5, min_samples: int | None = None,
                 cluster_selection_epsilon: float = 0.0, cluster_selection_persistence: float = 0.0,
                 max_cluster_size: int = 0, metric: Any = "euclidean", alpha: float = 1.0, p: float | None = None,
                 algorithm: str = "best", leaf_size: int = 40, memory: Any = None, approx_min_span_tree: bool = True,
                 gen_min_span_tree: bool = False, core_dist_n_jobs: int = 4, cluster_selection_method: str = "eom",
                 allow_single_cluster: bool = False, prediction_data: bool = False,
                 branch_detection_data: bool = False, match_reference_implementation: bool = False,
                 cluster_selection_epsilon_max: float = math.inf, ties: str = "ordered", **kwargs: Any):
        self.min_cluster_size = min_cluster_size
        self.min_samples = min_samples
        self.cluster_selection_epsilon = cluster_selection_epsilon
        self.cluster_selection_persistence = cluster_selection_persistence
        self.max_cluster_size = max_cluster_size
        self.metric = metric
        self.alpha = alpha
        self.p = p
        self.algorithm = algorithm
        self.leaf_size = leaf_size
        self.memory = memory
        self.approx_min_span_tree = approx_min_span_tree
        self.gen_min_span_tree = gen_min_span_tree
        self.core_dist_n_jobs = core_dist_n_jobs
        self.cluster_selection_method = cluster_selection_method
        self.allow_single_cluster = allow_single_cluster
        self.prediction_data = prediction_data
        self.branch_detection_data = branch_detection_data
        self.match_reference_implementation = match_reference_implementation
        self.cluster_selection_epsilon_max = cluster_selection_epsilon_max
        self.ties = ties
        self._metric_kwargs = kwargs

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """The parameters and the metric arguments (so clone keeps them)."""
        return dict(super().get_params(deep), **getattr(self, "_metric_kwargs", {}))

    def set_params(self, **params: Any) -> HDBSCAN:
        """Set parameters; other keywords are metric arguments, as in the
        constructor."""
        names = set(self._get_param_names())
        self._metric_kwargs = dict(getattr(self, "_metric_kwargs", {}),
                                   **{k: v for k, v in params.items() if k not in names})
        return super().set_params(**{k: v for k, v in params.items() if k in names})

    # -- the library's checks (hdbscan_.hdbscan), in its order ----------
    def _check_params(self) -> None:
        mcs, ms = self.min_cluster_size, self.min_cluster_size if self.min_samples is None else self.min_samples
        if not all(np.issubdtype(type(v), np.integer) for v in (mcs, ms)):
            raise InvalidArgumentError("Min samples and min cluster size must be integers!")
        if ms <= 0 or mcs <= 0:
            raise InvalidArgumentError("Min samples and Min cluster size must be positive integers")
        if mcs == 1:
            raise InvalidArgumentError("Min cluster size must be greater than one")
        eps = real(self.cluster_selection_epsilon, "", message="Epsilon must be a float value greater than or equal "
                                                                "to 0!")
        real(self.cluster_selection_persistence, "", message="Persistence must be a float value greater than or "
                                                              "equal to 0!")
        real(self.alpha, "", 0.0, True, message="Alpha must be a positive float value greater than 0!")
        if not np.issubdtype(type(self.leaf_size), np.integer) or self.leaf_size < 1:
            raise InvalidArgumentError("Leaf size must be greater than 0!")
        if not isinstance(self.cluster_selection_epsilon_max, (int, float)) or \
                self.cluster_selection_epsilon_max < eps:
            raise InvalidArgumentError("Cluster selection epsilon max must be greater than epsilon!")
        if self.cluster_selection_method not in ("eom", "leaf"):
            raise InvalidArgumentError(f"Invalid Cluster Selection Method: {self.cluster_selection_method}\n"
                                       'Should be one of: "eom", "leaf"\n')
        if self.algorithm not in _ALGORITHMS:
            raise TypeError(f"Unknown algorithm type {self.algorithm} specified")
        if not np.issubdtype(type(self.max_cluster_size), np.integer) or self.max_cluster_size < 0:
            raise InvalidArgumentError(f"max_cluster_size: an integer >= 0, got {self.max_cluster_size!r}")
        if self.branch_detection_data:
            raise UnsupportedError("branch_detection_data=True: grove has no branch detection (hdbscan.branches)")
        ties_code(self.ties)

    def _scale(self, d: int) -> np.ndarray | None:
        return euclidean_scale(self.metric, self.p, self._metric_kwargs, d)

    def _threads(self) -> int | None:
        # At most the cores: the library's default of 4 jobs asks for parallelism, not for more threads than
        # there are cores.
        threads = threads_from_n_jobs(self.core_dist_n_jobs, None, "core_dist_n_jobs")
        return None if threads is None or threads >= openmp_cores() else threads

    def _c_fields(self, n_clean: int) -> dict[str, Any]:
        ms = self.min_cluster_size if self.min_samples is None else self.min_samples
        ms = max(min(n_clean - 1, ms), 1)  # the library's clamp
        return dict(min_cluster_size=self.min_cluster_size, min_samples=min(ms + 1, n_clean),
                    selection=GROVE_HDBSCAN_EOM if self.cluster_selection_method == "eom" else GROVE_HDBSCAN_LEAF,
                    epsilon=float(self.cluster_selection_epsilon), allow_single_cluster=bool(self.allow_single_cluster),
                    max_cluster_size=int(self.max_cluster_size),
                    epsilon_max=float(self.cluster_selection_epsilon_max),
                    persistence=float(self.cluster_selection_persistence), alpha=float(self.alpha),
                    match_reference_implementation=bool(self.match_reference_implementation),
                    ties=ties_code(self.ties), prediction_data=bool(self.prediction_data))

    def fit(self, X: Any, y: Any = None) -> HDBSCAN:
        """Cluster X (n_samples, n_features) as hdbscan.HDBSCAN.fit does;
        y is ignored. Returns self."""
        self._prediction_data = None
        super().fit(X)
        if self.prediction_data:
            self.generate_prediction_data()
        return self

    def generate_prediction_data(self) -> None:
        """Make what approximate_predict and the membership functions need
        (the model's index and core distances of the training points)."""
        self._fitted()
        self._prediction_data = PredictionData(self)

    def generate_branch_detection_data(self) -> None:
        """Refused (grove.UnsupportedError), as branch_detection_data=True
        is: grove has no branch detection."""
        raise UnsupportedError("generate_branch_detection_data: grove has no branch detection (hdbscan.branches)")

    @property
    def prediction_data_(self) -> PredictionData:
        data = getattr(self, "_prediction_data", None)
        if data is None:
            raise AttributeError("No prediction data was generated")
        return data


def hdbscan(X: Any, min_cluster_size: int = 5, min_samples: int | None = None, alpha: float = 1.0,
            cluster_selection_epsilon: float = 0.0, cluster_selection_persistence: float = 0.0,
            max_cluster_size: int = 0, metric: Any = "minkowski", p: float | None = 2, leaf_size: int = 40,
            algorithm: str = "best", memory: Any = None, approx_min_span_tree: bool = True,
            gen_min_span_tree: bool = False, core_dist_n_jobs: int = 4, cluster_selection_method: str = "eom",
            allow_single_cluster: bool = False, match_reference_implementation: bool = False,
            cluster_selection_epsilon_max: float = math.inf, ties: str = "ordered", **kwargs: Any) -> tuple:
    """The library's ``hdbscan()`` function: (labels, probabilities,
    cluster_persistence, condensed_tree, single_linkage_tree,
    min_spanning_tree), the last None unless gen_min_span_tree."""
    model = HDBSCAN(min_cluster_size=min_cluster_size, min_samples=min_samples, alpha=alpha,
                    cluster_selection_epsilon=cluster_selection_epsilon,
                    cluster_selection_persistence=cluster_selection_persistence, max_cluster_size=max_cluster_size,
                    metric=metric, p=p, leaf_size=leaf_size, algorithm=algorithm, memory=memory,
                    approx_min_span_tree=approx_min_span_tree, gen_min_span_tree=gen_min_span_tree,
                    core_dist_n_jobs=core_dist_n_jobs, cluster_selection_method=cluster_selection_method,
                    allow_single_cluster=allow_single_cluster,
                    match_reference_implementation=match_reference_implementation,
                    cluster_selection_epsilon_max=cluster_selection_epsilon_max, ties=ties, **kwargs).fit(X)
    fit = model._grove_fit
    return (model.labels_, model.probabilities_, model.cluster_persistence_, fit.condensed_tree().copy(),
            fit.single_linkage().copy(), fit.mst().copy() if gen_min_span_tree else None)
