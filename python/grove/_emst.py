"""Euclidean minimum spanning trees and core distances."""
from __future__ import annotations

import ctypes as C
from typing import Any

import numpy as np

from . import _clib
from ._arrays import address, count, options, points_array, points_view
from ._cstructs import EmstParams, KnnParams


def emst(points: Any, mutual_reachability: int = 1, *, threads: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The Euclidean minimum spanning tree (single-tree Boruvka).

    mutual_reachability: K >= 1. K = 1 is the plain EMST; K > 1 weighs an
    edge max(core(a), core(b), |a - b|), core(x) being the distance to the
    K-th nearest neighbour counting x itself (the ``hdbscan`` library's
    min_samples is K - 1).

    Returns ``(edges, weights)``: edges (n - 1, 2) int64 with u < v, weights
    (n - 1,) float64, sorted by (weight, u, v) -- a unique tree, the same
    for any thread count."""
    x = points_array(points)
    n = x.shape[0]
    params = _clib.defaults(EmstParams)
    params.min_samples = count(mutual_reachability, "mutual_reachability", 1)
    edges = np.empty((max(n - 1, 0), 2), dtype=np.int64)
    weights = np.empty(max(n - 1, 0))
    opts = options(threads)
    _clib.call(_clib.lib.grove_emst, points_view(x), C.byref(params), address(edges), address(weights), opts)
    return edges, weights


def core_distances(points: Any, min_samples: int, *, threads: int | None = None) -> np.ndarray:
    """Distance from each point to its min_samples-th nearest neighbour
    counting itself (min_samples = 1 gives zeros), (n,) float64."""
    x = points_array(points)
    params = _clib.defaults(KnnParams)
    params.k = count(min_samples, "min_samples", 1)
    out = np.empty(x.shape[0])
    opts = options(threads)
    _clib.call(_clib.lib.grove_core_distances, points_view(x), C.byref(params), address(out), opts)
    return out
