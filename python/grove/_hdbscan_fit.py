"""One HDBSCAN* fit as both estimators keep it: the C model of X's finite
rows, and every result mapped back to X's rows the way the ``hdbscan``
library maps them (rows with NaN or infinity are left out of the
clustering and come back as noise, joined to the root of the condensed
tree at lambda 0 and to the top of the single-linkage tree at infinite
distance)."""
from __future__ import annotations

import threading
from typing import Any, Callable

import numpy as np

from . import _clib
from ._cstructs import GROVE_HDBSCAN_TIES_ORDERED, GROVE_HDBSCAN_TIES_SIMULTANEOUS, HdbscanParams
from ._errors import InvalidArgumentError
from ._hdbscan_model import CONDENSED_DTYPE, Model

TIES = {"ordered": GROVE_HDBSCAN_TIES_ORDERED, "simultaneous": GROVE_HDBSCAN_TIES_SIMULTANEOUS}


def c_params(**fields: Any) -> HdbscanParams:
    """grove_hdbscan_params from its defaults and the given fields."""
    params = _clib.defaults(HdbscanParams)
    for key, value in fields.items():
        setattr(params, key, value)
    return params


class Fit:
    """The fitted state shared by grove.HDBSCAN and
    grove.compat.hdbscan.HDBSCAN.

    raw: the validated X (float64, NaN and infinity allowed), kept by
    reference as scikit-learn and hdbscan keep theirs; scale: per-feature
    factors that make the metric Euclidean (standardised Euclidean), or
    None. The C model is made at once; it is made again, identical (fits
    are deterministic), when prediction data is first needed without
    having been asked for, and after unpickling (the handle is not
    pickled)."""

    def __init__(self, raw: np.ndarray, scale: np.ndarray | None, threads: int | None):
        finite = np.isfinite(raw).all(axis=1)
        self.n = raw.shape[0]
        self.rows = None if finite.all() else np.flatnonzero(finite)
        if self.rows is not None and self.rows.size == 0:
            raise InvalidArgumentError("X: no row is finite (every row has NaN or infinity)")
        self.raw, self.scale, self.threads = raw, scale, threads
        self.params: dict[str, Any] = {}
        self._lock = threading.Lock()
        self._model: Model | None = None
        self._cache: dict[str, Any] = {}

    def start(self, params: dict[str, Any]) -> Fit:
        """Fit the C model with these grove_hdbscan_params fields."""
        self.params = dict(params)
        self.model(bool(params.get("prediction_data")))
        return self

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_model"] = state["_lock"] = None
        state["_cache"] = {}
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

    def cached(self, name: str, make: Callable[[], Any]) -> Any:
        """make(), computed once per fit (trees read often)."""
        if name not in self._cache:
            self._cache[name] = make()
        return self._cache[name]

    # ------------------------------------------------------------------
    def coordinates(self, x: np.ndarray) -> np.ndarray:
        """Points in the Euclidean coordinates the C model works in."""
        return x if self.scale is None else x * self.scale

    def model(self, prediction: bool = False) -> Model:
        """The C model, with prediction data when asked."""
        with self._lock:
            if self._model is None or (prediction and not self._model.prediction_data):
                clean = self.raw if self.rows is None else self.raw[self.rows]
                params = dict(self.params, prediction_data=prediction or bool(self.params.get("prediction_data")))
                self._model = Model(self.coordinates(clean), c_params(**params), self.threads)
            return self._model

    @property
    def n_clean(self) -> int:
        return self.n if self.rows is None else self.rows.size

    @property
    def clusters(self) -> int:
        return self.model().clusters

    def to_rows(self, clean_index: np.ndarray) -> np.ndarray:
        """Indices of the finite rows' fit as rows of X."""
        return clean_index if self.rows is None else self.rows[clean_index]

    def expand(self, values: np.ndarray, fill: Any) -> np.ndarray:
        """Per-finite-row values as per-row values of X, fill elsewhere."""
        return values if self.rows is None else spread(values, self.rows, self.n, fill)

    # ------------------------------------------------------------------
    def labels(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """labels (-1 for noise and for non-finite rows), probabilities (0
        there) and GLOSH scores (non-finite rows: the library's score of a
        point leaving the root at lambda 0, 1 unless every lambda is 0)."""
        labels, prob, scores = self.model().labels()
        if self.rows is not None:
            deepest = self.condensed_tree()["lambda_val"].max(initial=0.0)
            labels, prob = self.expand(labels, -1), self.expand(prob, 0.0)
            scores = self.expand(scores, 0.0 if deepest == 0 else 1.0)
        return labels, prob, scores

    def condensed_tree(self) -> np.ndarray:
        return self.cached("condensed", self._condensed_tree)

    def has_cluster_tree(self) -> bool:
        """Whether the condensed tree splits at all (the library's
        prediction data has a cluster tree)."""
        return bool((self.condensed_tree()["child_size"] > 1).any())

    def _condensed_tree(self) -> np.ndarray:
        tree = self.model().condensed_tree()
        if self.rows is None:
            return tree
        shift = self.n - self.n_clean
        points = tree["child"] < self.n_clean
        tree["child"] = np.where(points, self.to_rows(np.where(points, tree["child"], 0)), tree["child"] + shift)
        tree["parent"] += shift
        outliers = np.setdiff1d(np.arange(self.n), self.rows)
        extra = np.zeros(outliers.size, dtype=CONDENSED_DTYPE)
        extra["parent"], extra["child"], extra["child_size"] = self.n, outliers, 1
        return np.concatenate([extra, tree])

    def single_linkage(self) -> np.ndarray:
        return self.cached("linkage", self._single_linkage)

    def _single_linkage(self) -> np.ndarray:
        tree = self.model().single_linkage()
        if self.rows is None:
            return tree
        shift, m = self.n - self.n_clean, self.n_clean
        for col in (0, 1):
            ids = tree[:, col].astype(np.int64)
            points = ids < m
            tree[:, col] = np.where(points, self.to_rows(np.where(points, ids, 0)), ids + shift)
        # Each non-finite row joins the whole tree at infinite distance.
        outliers = np.setdiff1d(np.arange(self.n), self.rows)
        top = self.n + m - 2 if m >= 2 else self.rows[0]
        extra = np.empty((outliers.size, 4))
        extra[:, 0] = outliers
        extra[:, 1] = np.concatenate([[top], self.n + m - 1 + np.arange(outliers.size - 1)])
        extra[:, 2] = np.inf
        extra[:, 3] = m + 1 + np.arange(outliers.size)
        return np.vstack([tree, extra])

    def mst(self) -> np.ndarray:
        """The library's _min_spanning_tree: (n - 1, 3) rows (from, to,
        weight) of X's rows, in merge order."""
        def make() -> np.ndarray:
            edges, weights = self.model().mst()
            return np.column_stack([self.to_rows(edges).astype(np.float64), weights])
        return self.cached("mst", make)

    def exemplars(self) -> list[np.ndarray]:
        """Per prediction cluster, its exemplars' rows of X."""
        return self.cached("exemplars", lambda: [self.to_rows(r) for r in self.model().exemplar_rows()])

    def relative_validity(self) -> float:
        # The non-finite rows are noise: they count in the total only.
        return self.model().relative_validity() * self.n_clean / self.n

    def dbscan(self, cut_distance: float, min_cluster_size: int) -> np.ndarray:
        return self.expand(self.model().dbscan(cut_distance, min_cluster_size), -1)

    # ------------------------------------------------------------------
    def predictor(self) -> Model:
        return self.model(prediction=True)

    def all_points_membership_vectors(self, threads: int | None) -> np.ndarray:
        return self.expand(self.predictor().all_points_membership_vectors(threads), 0.0)


def spread(values: np.ndarray, rows: np.ndarray, n: int, fill: Any) -> np.ndarray:
    """values as those of the given rows (indices or a mask) of n rows,
    fill in the others."""
    out = np.full((n,) + values.shape[1:], fill, dtype=values.dtype)
    out[rows] = values
    return out


def weighted_center(raw: np.ndarray, coords: np.ndarray, strength: np.ndarray, medoid: bool) -> np.ndarray:
    """One cluster's weighted centroid (np.average of its rows of raw by
    membership strength) or weighted medoid (the row minimising the
    strength-weighted sum of distances, in coords, to the others), as
    scikit-learn and hdbscan choose them."""
    if medoid:
        return raw[weighted_medoid(coords, strength)]
    return np.average(raw, weights=strength, axis=0)


def weighted_centers(raw: np.ndarray, coords: np.ndarray, labels: np.ndarray, weights: np.ndarray, clusters: int,
                     medoid: bool) -> np.ndarray:
    """weighted_center of each label 0 .. clusters - 1, (clusters, d)."""
    out = np.empty((clusters, raw.shape[1]))
    for c in range(clusters):
        mask = labels == c
        out[c] = weighted_center(raw[mask], coords[mask], weights[mask], medoid)
    return out


def weighted_medoid(data: np.ndarray, strength: np.ndarray, block: int = 1024) -> int:
    """The position in data of the weighted medoid, distances computed a
    block of rows at a time (not one full distance matrix)."""
    sq = np.einsum("ij,ij->i", data, data)
    totals = np.empty(len(data))
    for start in range(0, len(data), block):
        rows = data[start:start + block]
        d2 = sq[start:start + block, None] + sq[None, :] - 2.0 * rows @ data.T
        totals[start:start + block] = np.sqrt(np.maximum(d2, 0.0)) @ strength
    return int(np.argmin(totals))
