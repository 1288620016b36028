"""The library's ``hdbscan.prediction``: its prediction data and
functions on grove's model (labels and membership columns follow the
model's cluster numbers)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any
from warnings import warn

import numpy as np

from ..._errors import InvalidArgumentError, UnsupportedError
from ..._hdbscan_fit import Fit

if TYPE_CHECKING:
    from .hdbscan_ import HDBSCAN

__all__ = ["PredictionData", "approximate_predict", "approximate_predict_scores", "membership_vector",
           "all_points_membership_vectors"]


class PredictionData:
    """What prediction uses (the library's ``prediction_data_``): the
    training data, the exemplars, and grove's model with its index."""

    def __init__(self, clusterer: HDBSCAN):
        fit = clusterer._grove_fit
        self.raw_data = fit.raw
        self.min_samples = clusterer.min_samples or clusterer.min_cluster_size
        self._fit = fit
        fit.predictor()  # the index and core distances, built now as the library builds them

    @property
    def exemplars(self) -> list[np.ndarray]:
        return [self.raw_data[rows] for rows in self._fit.exemplars()]


def _prediction(clusterer: HDBSCAN) -> Fit:
    if getattr(clusterer, "_prediction_data", None) is None:
        raise InvalidArgumentError("Clusterer does not have prediction data! Try fitting with prediction_data=True "
                                   "set, or run generate_prediction_data on the clusterer")
    return clusterer._grove_fit


def _points(fit: Fit, points_to_predict: Any) -> np.ndarray:
    q = np.asarray(points_to_predict, dtype=np.float64)
    if q.ndim != 2 or q.shape[1] != fit.raw.shape[1]:
        raise InvalidArgumentError("New points dimension does not match fit data!")
    return fit.coordinates(q)


def _threads(clusterer: HDBSCAN) -> int | None:
    return clusterer._threads()


def approximate_predict(clusterer: HDBSCAN, points_to_predict: Any,
                        return_connecting_points: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Labels (int32, -1 noise) and probabilities of new points, as the
    library's approximate_predict."""
    fit = _prediction(clusterer)
    q = _points(fit, points_to_predict)
    if return_connecting_points:
        raise UnsupportedError("return_connecting_points=True: grove's prediction does not return the "
                               "neighbours it connects through")
    if not fit.has_cluster_tree():
        warn("Clusterer does not have any defined clusters, new data will be automatically predicted as noise.")
        return -np.ones(len(q), dtype=np.int32), np.zeros(len(q), dtype=np.float32)
    labels, prob = fit.predictor().approximate_predict(q, _threads(clusterer))
    return labels.astype(np.int32), prob


def approximate_predict_scores(clusterer: HDBSCAN, points_to_predict: Any) -> np.ndarray:
    """GLOSH outlier scores of new points, as the library's."""
    fit = _prediction(clusterer)
    q = _points(fit, points_to_predict)
    if not fit.has_cluster_tree():
        warn("Clusterer does not have any defined clusters, new data will be automatically predicted as outliers.")
        return np.ones(len(q), dtype=np.int32)
    return fit.predictor().approximate_predict_scores(q, _threads(clusterer))


def membership_vector(clusterer: HDBSCAN, points_to_predict: Any) -> np.ndarray:
    """Soft cluster membership of new points, (n, clusters), as the
    library's membership_vector."""
    fit = _prediction(clusterer)
    q = _points(fit, points_to_predict)
    return fit.predictor().membership_vector(q, _threads(clusterer))


def all_points_membership_vectors(clusterer: HDBSCAN) -> np.ndarray:
    """Soft cluster membership of the training points, (n, clusters);
    zeros of shape (n,) when there is no cluster, as in the library."""
    fit = _prediction(clusterer)
    if fit.clusters == 0:
        return np.zeros(fit.n)
    return fit.all_points_membership_vectors(_threads(clusterer))
