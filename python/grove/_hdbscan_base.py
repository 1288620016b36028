"""What grove.HDBSCAN and grove.compat.hdbscan.HDBSCAN share: a
scikit-learn estimator base, the fit on the C model (grove._hdbscan_fit),
and the hdbscan library's fitted attributes read from it."""
from __future__ import annotations

from typing import Any

import numpy as np

from ._arrays import count
from ._errors import InvalidArgumentError
from ._estimator import HAVE_SKLEARN, BaseEstimator, ClusterMixin, check_is_fitted, validate
from ._hdbscan_fit import TIES, Fit, weighted_center
from ._hdbscan_trees import CondensedTree, MinimumSpanningTree, SingleLinkageTree


def real(value: Any, name: str, minimum: float = 0.0, open_left: bool = False, message: str | None = None) -> float:
    """A real number >= minimum (> with open_left), else a ValueError."""
    ok = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool) and not (
        value != value)
    ok = ok and (value > minimum if open_left else value >= minimum)
    if not ok:
        raise InvalidArgumentError(message or f"{name}: expected a number {'>' if open_left else '>='} {minimum}, "
                                              f"got {value!r}")
    return float(value)


def ties_code(ties: Any) -> int:
    if ties not in TIES:
        raise InvalidArgumentError(f"ties: 'ordered' or 'simultaneous', got {ties!r}")
    return TIES[ties]


class HDBSCANBase(ClusterMixin, BaseEstimator):
    """Fitting and the fitted attributes; subclasses turn their parameters
    into grove_hdbscan_params fields (``_c_fields``) and say how they
    validate X (``_sparse``: densify sparse input, as hdbscan accepts it)."""

    _sparse = False

    # -- subclass hooks -------------------------------------------------
    def _check_params(self) -> None:
        raise NotImplementedError

    def _scale(self, d: int) -> np.ndarray | None:
        raise NotImplementedError

    def _threads(self) -> int | None:
        raise NotImplementedError

    def _c_fields(self, n_clean: int) -> dict[str, Any]:
        raise NotImplementedError

    def _noise_labels(self, fit: Fit, labels: np.ndarray, prob: np.ndarray | None) -> None:
        """Relabel the non-finite rows in place (scikit-learn's codes)."""

    # -- fitting --------------------------------------------------------
    def _validate(self, X: Any, reset: bool) -> np.ndarray:
        x = validate(self, X, reset=reset, sparse=self._sparse)
        if hasattr(x, "toarray"):  # sparse features: Euclidean distances of the dense rows
            x = np.asarray(x.toarray(), dtype=np.float64)
        return x

    def fit(self, X: Any, y: Any = None) -> HDBSCANBase:
        """Cluster X (n_samples, n_features); y is ignored. Returns self."""
        self._check_params()
        x = self._validate(X, reset=True)
        fit = Fit(x, self._scale(x.shape[1]), self._threads())
        fit.start(self._c_fields(fit.n_clean))
        labels, prob, scores = fit.labels()
        self._noise_labels(fit, labels, prob)
        self._grove_fit = fit
        self._raw_data = x
        self.labels_, self.probabilities_, self.outlier_scores_ = labels, prob, scores
        self.n_clusters_ = fit.clusters
        return self

    def _fitted(self) -> Fit:
        check_is_fitted(self, "labels_")
        return self._grove_fit

    # -- the hdbscan library's fitted attributes ------------------------
    @property
    def cluster_persistence_(self) -> np.ndarray:
        """Per cluster, how persistent it is (1 = over all scales)."""
        fit = self._fitted()
        return fit.cached("persistence", lambda: fit.model().persistence())

    @property
    def condensed_tree_(self) -> CondensedTree:
        fit = self._fitted()
        return CondensedTree(fit.condensed_tree(), self.labels_)

    @property
    def single_linkage_tree_(self) -> SingleLinkageTree:
        fit = self._fitted()
        return SingleLinkageTree(fit.single_linkage(), cut=self._cut)

    @property
    def minimum_spanning_tree_(self) -> MinimumSpanningTree:
        """The mutual-reachability MST over X (grove always keeps it)."""
        fit = self._fitted()
        return MinimumSpanningTree(fit.mst(), fit.raw)

    @property
    def exemplars_(self) -> list[np.ndarray]:
        """Per cluster (in the library's prediction order), its most
        representative points."""
        fit = self._fitted()
        return [fit.raw[rows] for rows in fit.exemplars()]

    @property
    def relative_validity_(self) -> float:
        """The library's fast DBCV approximation from the MST."""
        return self._fitted().relative_validity()

    def _cut(self, cut_distance: float, min_cluster_size: int) -> np.ndarray:
        mcs = count(min_cluster_size, "min_cluster_size", 1)
        return self._fitted().dbscan(real(cut_distance, "cut_distance"), mcs)

    def dbscan_clustering(self, cut_distance: float, min_cluster_size: int = 5) -> np.ndarray:
        """DBSCAN* at cut_distance: components of the MST edges lighter
        than it, those of fewer than min_cluster_size points noise (-1)."""
        labels = self._cut(cut_distance, min_cluster_size)
        self._noise_labels(self._fitted(), labels, None)
        return labels

    def _center(self, cluster_id: int, medoid: bool) -> np.ndarray:
        fit = self._fitted()
        if cluster_id == -1:
            raise InvalidArgumentError("Cannot calculate weighted centroid for -1 cluster since it is a noise cluster")
        if not 0 <= cluster_id < fit.clusters:
            raise InvalidArgumentError(f"cluster_id: {cluster_id!r} is not a cluster (0 .. {fit.clusters - 1})")
        mask = self.labels_ == cluster_id
        return weighted_center(fit.raw[mask], fit.coordinates(fit.raw[mask]), self.probabilities_[mask], medoid)

    def weighted_cluster_centroid(self, cluster_id: int) -> np.ndarray:
        """The membership-weighted mean of a cluster's points."""
        return self._center(cluster_id, medoid=False)

    def weighted_cluster_medoid(self, cluster_id: int) -> np.ndarray:
        """The cluster's point with the least membership-weighted sum of
        distances to the others."""
        return self._center(cluster_id, medoid=True)

    # -- scikit-learn ---------------------------------------------------
    if HAVE_SKLEARN and hasattr(BaseEstimator, "__sklearn_tags__"):
        def __sklearn_tags__(self) -> Any:
            tags = super().__sklearn_tags__()
            tags.input_tags.allow_nan = True
            tags.input_tags.sparse = self._sparse
            return tags

    def _more_tags(self) -> dict[str, Any]:  # scikit-learn before 1.6
        return {"allow_nan": True}
