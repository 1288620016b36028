"""The library's ``hdbscan.validity``: ``validity_index``, the
density-based cluster validation (DBCV) of Moulavi et al. (2014) as the
library computes it. Per cluster: each point's all-points core distance
(the mean of (1 / distance)^d over the cluster's other points, to the
power -1 / d; distance 0 left out), the minimum spanning tree of the
mutual reachability max(distance, core(a), core(b)) inside the cluster
(Prim's from its first point, each new point joined to the first point of
the tree whose weight to it is np.isclose to the edge's, as the library
joins them), its internal nodes (degree above 1; the
first point when none) and the density sparseness (the heaviest tree
edge between internal nodes; the heaviest edge when none). Between two
clusters, the density separation: the least mutual reachability between
their internal nodes. A cluster scores (separation - sparseness) /
max(separation, sparseness) with its least separation; the index is the
sum of the scores weighted by cluster size over all rows (noise
included). A lone cluster has no separation: its score is NaN, as the
library's.

Distances are computed a row at a time (the library builds n x n
matrices): O(n^2 d) time like the library's, memory in O(n). Metrics as
grove's HDBSCAN computes them (Euclidean, standardised Euclidean), or a
precomputed distance matrix with ``d`` given, as in the library;
``mst_raw_dist`` uses plain distances for the tree and the separation.
This is not ``relative_validity_``, the library's fast approximation
from the clustering's MST."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..._errors import InvalidArgumentError
from ..._hdbscan_metric import euclidean_scale

__all__ = ["validity_index"]

Rows = Callable[[int, np.ndarray], np.ndarray]  # (row a, rows b) -> distances from a to each b


def _distances(X: Any, metric: Any, d: Any, kwd_args: dict[str, Any]) -> tuple[Rows, int, float]:
    """Distances a row at a time, the number of rows and the dimension."""
    if metric == "precomputed":
        if d is None:
            raise InvalidArgumentError("If metric is precomputed a d value must be provided!")
        matrix = np.asarray(X, dtype=np.float64)
        if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1]:
            raise InvalidArgumentError(f"X: a precomputed distance matrix must be square, got shape {matrix.shape}")
        return (lambda a, b: matrix[a, b]), matrix.shape[0], float(d)
    x = np.asarray(X, dtype=np.float64)
    if x.ndim != 2:
        raise InvalidArgumentError(f"X: expected a 2-d array of points, got shape {x.shape}")
    scale = euclidean_scale(metric, None, kwd_args, x.shape[1])
    if scale is not None:
        x = x * scale
    return (lambda a, b: np.sqrt(((x[b] - x[a]) ** 2).sum(axis=1))), x.shape[0], float(x.shape[1])


def _core_distances(rows: Rows, members: np.ndarray, d: float) -> np.ndarray:
    """All-points core distances of one cluster's points."""
    total = np.empty(len(members))
    for i, a in enumerate(members):
        dist = rows(a, members)
        inverse = np.zeros_like(dist)
        nonzero = dist != 0
        inverse[nonzero] = (1.0 / dist[nonzero]) ** d
        total[i] = inverse.sum()
    total /= len(members) - 1
    if total.sum() == 0:
        return np.zeros(len(members))
    with np.errstate(divide="ignore"):  # a point whose every distance is 0: infinite, as in the library
        return total ** (-1.0 / d)


def _reachability(rows: Rows, a: int, a_core: float, others: np.ndarray, core: np.ndarray | None) -> np.ndarray:
    """Mutual reachability from a to others (plain distances without
    core distances)."""
    dist = rows(a, others)
    return dist if core is None else np.maximum(np.maximum(dist, a_core), core)


def _internal_tree(rows: Rows, members: np.ndarray, core: np.ndarray | None) -> tuple[np.ndarray, float]:
    """The internal nodes (positions in members) of the cluster's spanning
    tree and its density sparseness."""
    m = len(members)
    in_tree = np.zeros(m, dtype=bool)
    best = np.full(m, np.inf)
    edges, weights = np.empty((m - 1, 2), dtype=np.intp), np.empty(m - 1)

    def reach(i: int) -> np.ndarray:
        return _reachability(rows, members[i], 0.0 if core is None else core[i], members, core)

    current, w = 0, reach(0)
    for e in range(m - 1):
        in_tree[current] = True
        closer = ~in_tree & (w < best)
        best[closer] = w[closer]
        nearest = int(np.argmin(np.where(in_tree, np.inf, best)))
        w = reach(nearest)
        # Mutual reachabilities tie often (every point within a core
        # distance weighs it): the library joins the new point to the
        # first point of the tree within np.isclose of the weight.
        source = int(np.argmax(in_tree & np.isclose(w, best[nearest])))
        edges[e], weights[e] = (source, nearest), best[nearest]
        current = nearest
    internal = np.flatnonzero(np.bincount(edges.ravel(), minlength=m) > 1)
    if not len(internal):
        internal = np.array([0])
    between = np.isin(edges, internal).all(axis=1)
    return internal, float((weights[between] if between.any() else weights).max())


def _separation(rows: Rows, a: np.ndarray, a_core: np.ndarray | None, b: np.ndarray,
                b_core: np.ndarray | None) -> float:
    """The least mutual reachability from the points a to the points b."""
    return min(float(_reachability(rows, p, 0.0 if a_core is None else a_core[i], b, b_core).min())
               for i, p in enumerate(a))


def validity_index(X: Any, labels: Any, metric: Any = "euclidean", d: Any = None, per_cluster_scores: bool = False,
                   mst_raw_dist: bool = False, verbose: bool = False, **kwd_args: Any) -> Any:
    """The DBCV index of a clustering (labels, -1 noise) of X: a number in
    [-1, 1], and with per_cluster_scores the clusters' own scores too (NaN
    for a label no point has), as the library's validity_index."""
    rows, n, dim = _distances(X, metric, d, dict(kwd_args))
    labels = np.asarray(labels)
    if labels.shape != (n,):
        raise InvalidArgumentError(f"labels: expected {n} labels, one per row of X, got shape {labels.shape}")
    clusters = int(labels.max()) + 1 if n else 0
    members = [np.flatnonzero(labels == c) for c in range(clusters)]
    present = [c for c in range(clusters) if len(members[c])]
    core: dict[int, np.ndarray | None] = {}
    internal, sparseness = {}, {}
    for c in present:
        if len(members[c]) == 1:
            raise InvalidArgumentError(f"labels: cluster {c} has one point; DBCV needs two or more per cluster")
        core[c] = None if mst_raw_dist else _core_distances(rows, members[c], dim)
        if verbose and core[c] is not None:
            print(f"Max raw distance to coredistance ratio: {_max_ratio(rows, members[c], core[c])}")
        internal[c], sparseness[c] = _internal_tree(rows, members[c], core[c])
    separation = np.full((clusters, clusters), np.inf)
    for i in present:
        for j in (j for j in present if j > i):
            core_i, core_j = core[i], core[j]
            separation[i, j] = separation[j, i] = _separation(
                rows, members[i][internal[i]], None if core_i is None else core_i[internal[i]],
                members[j][internal[j]], None if core_j is None else core_j[internal[j]])
    scores, result = np.full(clusters, np.nan), 0.0
    for c in present:
        least = separation[c].min()
        with np.errstate(invalid="ignore"):  # a lone cluster: inf / inf, NaN as in the library
            scores[c] = (least - sparseness[c]) / np.maximum(least, sparseness[c])
        if verbose:
            print(f"Minimum density separation: {least}")
            print(f"Density sparseness: {sparseness[c]}")
        result += len(members[c]) / float(n) * scores[c]
    return (result, scores) if per_cluster_scores else result


def _max_ratio(rows: Rows, members: np.ndarray, core: np.ndarray) -> float:
    """The largest core distance over distance between two of the points
    (the library's verbose diagnostic)."""
    ratio = 0.0
    for a in members:
        dist = rows(a, members)
        nonzero = dist != 0
        ratio = max(ratio, float((core[nonzero] / dist[nonzero]).max(initial=0.0)))
    return ratio
