"""The ``hdbscan`` library's tree objects (hdbscan.plots) over grove's
fitted trees: ``CondensedTree``, ``SingleLinkageTree`` and
``MinimumSpanningTree`` with the library's methods and outputs.
Conversions need pandas or networkx and plots matplotlib (plus SciPy for
the dendrogram, scikit-learn for projecting a spanning tree of more than
two dimensions), each imported only when used."""
from __future__ import annotations

from typing import Any, Callable
from warnings import warn

import numpy as np

from ._errors import UnsupportedError

CB_LEFT, CB_RIGHT, CB_BOTTOM, CB_TOP = 0, 1, 2, 3


def _need(module: str, what: str) -> Any:
    try:
        return __import__(module, fromlist=["_"])
    except ImportError:
        raise ImportError(f"You must install {module.split('.')[0]} to {what}") from None


def _by_parent(tree: np.ndarray) -> dict[int, np.ndarray]:
    """Row numbers of each parent's children, in row order."""
    order = np.argsort(tree["parent"], kind="stable")
    parents = tree["parent"][order]
    cuts = np.flatnonzero(np.diff(parents)) + 1
    return {int(rows_parent[0]): rows for rows_parent, rows in
            zip(np.split(parents, cuts), np.split(order, cuts)) if rows.size}


class CondensedTree:
    """The condensed cluster hierarchy (the library's CondensedTree):
    rows of (parent, child, lambda_val, child_size); labels are the
    clustering's per-point labels."""

    def __init__(self, condensed_tree_array: np.ndarray, labels: np.ndarray):
        self._raw_tree = condensed_tree_array
        self._labels = labels

    @staticmethod
    def _leaves(clusters: np.ndarray, splits: dict[int, np.ndarray], root: int) -> list[int]:
        """Leaf clusters in depth-first order (the library's _get_leaves)."""
        out, stack = [], [root]
        while stack:
            node = stack.pop()
            kids = [int(c) for c in clusters["child"][splits.get(node, np.empty(0, np.int64))]]
            if kids:
                stack.extend(reversed(kids))
            else:
                out.append(node)
        return out

    def get_plot_data(self, leaf_separation: float = 1, log_size: bool = False,
                      max_rectangle_per_icicle: int = 20) -> dict[str, Any]:
        """The icicle plot's bars, split lines and cluster bounds, as the
        library's get_plot_data returns them."""
        tree = self._raw_tree
        root, last = int(tree["parent"].min()), int(tree["parent"].max())
        rows_of = _by_parent(tree)
        clusters = tree[tree["child_size"] > 1]
        splits = _by_parent(clusters) if clusters.size else {}
        leaves = self._leaves(clusters, splits, root) if clusters.size else [root]
        x = {leaf: leaf_separation * i for i, leaf in enumerate(leaves)}
        y = {root: 0.0}
        for c in range(last, root - 1, -1):
            kids = clusters[splits[c]] if c in splits else clusters[:0]
            if len(kids) > 1:
                x[c] = float(np.mean([x[int(k)] for k in kids["child"]]))
                for k in kids:
                    y[int(k["child"])] = k["lambda_val"]
        log = np.log if log_size else (lambda v: v)
        scaling = log(np.sum(tree[rows_of[root]]["child_size"]))
        bars: dict[str, list] = {"bar_centers": [], "bar_tops": [], "bar_bottoms": [], "bar_widths": []}
        bounds = {}
        for c in range(last, root - 1, -1):
            kids = tree[rows_of.get(c, np.empty(0, np.int64))]
            if kids.size == 0:
                continue
            current_size = log(np.sum(kids["child_size"]))
            current_lambda = y[c]
            top = kids["lambda_val"].max()
            max_size, min_size = current_size, log(np.sum(kids[kids["lambda_val"] == top]["child_size"]))
            step = float(max_size - min_size) / max_rectangle_per_icicle
            center = x[c] * scaling
            bounds[c] = [center - current_size / 2.0, center + current_size / 2.0, y[c], top]
            last_size, last_lambda = current_size, current_lambda
            for row in kids[np.argsort(kids["lambda_val"], kind="stable")]:
                lam = row["lambda_val"]
                if lam != current_lambda and (last_size - current_size > step or lam == top):
                    bars["bar_centers"].append(center)
                    bars["bar_tops"].append(lam - last_lambda)
                    bars["bar_bottoms"].append(last_lambda)
                    bars["bar_widths"].append(last_size)
                    last_size, last_lambda = current_size, current_lambda
                if log_size:
                    left = np.exp(current_size) - row["child_size"]
                    current_size = np.log(left) if left > 0.01 else 0.0
                else:
                    current_size -= row["child_size"]
                current_lambda = lam
        line_xs, line_ys = [], []
        for row in clusters:
            parent, child = int(row["parent"]), int(row["child"])
            sign = np.sign(x[child] - x[parent])
            line_xs.append([x[parent] * scaling, x[child] * scaling + sign * (log(row["child_size"]) / 2.0)])
            line_ys.append([y[child], y[child]])
        return dict(bars, line_xs=line_xs, line_ys=line_ys, cluster_bounds=bounds)

    def _select_clusters(self) -> list[int]:
        """Per label, the lowest parent id among its points (the library's
        _select_clusters, which its prediction code uses)."""
        points = self._raw_tree[self._raw_tree["child_size"] == 1]
        segments, labels = points["parent"], self._labels[points["child"]]
        order = np.argsort(labels, kind="stable")
        groups = np.split(segments[order], np.flatnonzero(np.diff(labels[order]) != 0) + 1)
        if not order.size:
            return []
        return [int(groups[g].min()) for g in range(int(labels[order[0]] == -1), len(groups))]

    def plot(self, leaf_separation: float = 1, cmap: Any = "viridis", select_clusters: bool = False,
             label_clusters: bool = False, selection_palette: Any = None, axis: Any = None, colorbar: bool = True,
             log_size: bool = False, max_rectangles_per_icicle: int = 20) -> Any:
        """The icicle plot (matplotlib), as the library draws it; returns
        the axis."""
        plt = _need("matplotlib.pyplot", "plot the condensed tree")
        data = self.get_plot_data(leaf_separation, log_size, max_rectangles_per_icicle)
        sm = None
        if cmap != "none":
            sm = plt.cm.ScalarMappable(cmap=cmap, norm=plt.Normalize(0, max(data["bar_widths"], default=1)))
            sm.set_array(data["bar_widths"])
            colors: Any = [sm.to_rgba(w) for w in data["bar_widths"]]
        else:
            colors = "black"
        axis = plt.gca() if axis is None else axis
        axis.bar(data["bar_centers"], data["bar_tops"], bottom=data["bar_bottoms"], width=data["bar_widths"],
                 color=colors, align="center", linewidth=0)
        lines = [v for xs, ys in zip(data["line_xs"], data["line_ys"]) for v in (xs, ys)]
        if lines:
            axis.plot(*lines, color="black", linewidth=1)
        if select_clusters:
            self._draw_selection(axis, data, label_clusters, selection_palette)
        if colorbar and sm is not None:
            cb = plt.colorbar(sm, ax=axis)
            cb.ax.set_ylabel("log(Number of points)" if log_size else "Number of points")
        axis.set_xticks([])
        for side in ("right", "top", "bottom"):
            axis.spines[side].set_visible(False)
        axis.invert_yaxis()
        axis.set_ylabel("$\\lambda$ value")
        return axis

    def _draw_selection(self, axis: Any, data: dict[str, Any], label_clusters: bool, palette: Any) -> None:
        from matplotlib.patches import Ellipse
        chosen = self._select_clusters()
        bounds = np.array([data["cluster_bounds"][c] for c in chosen], dtype=float).reshape(-1, 4)
        if not np.isfinite(bounds).all():
            warn("Infinite lambda values encountered in chosen clusters. This might be due to duplicates in the data.")
        heights = np.hstack([data["bar_tops"], data["bar_bottoms"]])
        heights = heights[np.isfinite(heights)]
        mean_center = np.mean([heights.max(), heights.min()]) if heights.size else 0.0
        max_height = float(np.diff(np.percentile(heights, q=[10, 90]))[0]) if heights.size else 1.0
        for i, (left, right, bottom, top) in enumerate(bounds):
            width, height = right - left, top - bottom
            center = (np.mean([left, right]), np.mean([top, bottom]))
            if not np.isfinite(center[1]):
                center = (center[0], mean_center)
            if not np.isfinite(height):
                height = max_height
            height = max(height, 0.1 * max_height)
            color = palette[i] if palette is not None and len(palette) >= len(chosen) else "r"
            if label_clusters:
                axis.annotate(str(i), xy=center, xytext=(center[0] - 4.0 * width, center[1] + 0.65 * height),
                              horizontalalignment="left", verticalalignment="bottom")
            axis.add_artist(Ellipse(center, 2.0 * width, 1.2 * height, facecolor="none", edgecolor=color,
                                    linewidth=2))

    def to_numpy(self) -> np.ndarray:
        """The tree as a record array (parent, child, lambda_val, child_size)."""
        return self._raw_tree.copy()

    def to_pandas(self) -> Any:
        """A DataFrame with columns parent, child, lambda_val, child_size."""
        return _need("pandas", "export pandas DataFrames").DataFrame(self._raw_tree)

    def to_networkx(self) -> Any:
        """A DiGraph: edges parent -> child weighted by lambda_val, node
        attribute size."""
        nx = _need("networkx", "export networkx graphs")
        graph = nx.DiGraph()
        graph.add_weighted_edges_from(zip(self._raw_tree["parent"].tolist(), self._raw_tree["child"].tolist(),
                                          self._raw_tree["lambda_val"].tolist()))
        nx.set_node_attributes(graph, dict(zip(self._raw_tree["child"].tolist(),
                                               self._raw_tree["child_size"].tolist())), "size")
        return graph


class SingleLinkageTree:
    """The single-linkage dendrogram in scipy's format (the library's
    SingleLinkageTree). get_clusters cuts it with grove's C code, so it
    needs the fitted model: the estimators pass its cut as ``cut``."""

    def __init__(self, linkage: np.ndarray, cut: Callable[[float, int], np.ndarray] | None = None):
        self._linkage = linkage
        self._cut = cut

    def _sizes(self) -> tuple[int, int]:
        rows = self._linkage.shape[0]
        return 2 * rows, rows + 1

    def plot(self, axis: Any = None, truncate_mode: Any = None, p: int = 0, vary_line_width: bool = True,
             cmap: Any = "viridis", colorbar: bool = True) -> Any:
        """The dendrogram (scipy's layout, matplotlib), as the library
        draws it; returns the axis."""
        hierarchy = _need("scipy.cluster.hierarchy", "lay out the dendrogram")
        plt = _need("matplotlib.pyplot", "plot the single linkage tree")
        layout = hierarchy.dendrogram(self._linkage, p=p, truncate_mode=truncate_mode, no_plot=True)
        xs, ys = layout["icoord"], layout["dcoord"]
        axis = plt.gca() if axis is None else axis
        widths = self._line_widths() if vary_line_width else [(1.0, 1.0)] * len(ys)
        sm = None
        if cmap != "none":
            colors = np.log2(np.array(widths, dtype=float).ravel())
            sm = plt.cm.ScalarMappable(cmap=cmap, norm=plt.Normalize(0, colors.max(initial=0.0)))
            sm.set_array(colors)
        style = dict(solid_joinstyle="miter", solid_capstyle="butt")
        for x, y, (left, right) in zip(xs, ys, widths):
            for part, w in ((slice(0, 2), left), (slice(2, 4), right)):
                color = sm.to_rgba(np.log2(w)) if sm is not None else "k"
                axis.plot(x[part], y[part], color=color, linewidth=np.log2(1 + w), **style)
            axis.plot(x[1:3], y[1:3], color="k", linewidth=1.0, **style)
        if colorbar and sm is not None:
            plt.colorbar(sm, ax=axis).ax.set_ylabel("log(Number of points)")
        axis.set_xticks([])
        for side in ("right", "top", "bottom"):
            axis.spines[side].set_visible(False)
        axis.set_ylabel("distance")
        return axis

    def _line_widths(self) -> list[tuple[float, float]]:
        """Sizes of each merge's two sides, merges in dendrogram (post) order."""
        top, root = self._sizes()
        z = self._linkage
        order, stack = [], [(top, False)]
        while stack:
            node, expanded = stack.pop()
            if node < root:
                continue
            if expanded:
                order.append(node)
                continue
            row = z[node - root]
            stack += [(node, True), (int(row[1]), False), (int(row[0]), False)]

        def size(child: float) -> float:
            return z[int(child) - root][3] if child >= root else 1

        return [(size(z[node - root][0]), size(z[node - root][1])) for node in order]

    def to_numpy(self) -> np.ndarray:
        """The linkage matrix (scipy's format)."""
        return self._linkage.copy()

    def to_pandas(self) -> Any:
        """A DataFrame with columns parent, left_child, right_child,
        distance, size."""
        pandas = _need("pandas", "export pandas DataFrames")
        top, root = self._sizes()
        z = self._linkage
        return pandas.DataFrame({"parent": np.arange(root, top + 1), "left_child": z[:, 0], "right_child": z[:, 1],
                                 "distance": z[:, 2], "size": z[:, 3]})

    def to_networkx(self) -> Any:
        """A DiGraph: edges merge -> child weighted by distance, node
        attribute size."""
        nx = _need("networkx", "export networkx graphs")
        _, root = self._sizes()
        graph = nx.DiGraph()
        for parent, row in enumerate(self._linkage, root):
            graph.add_edge(parent, row[0], weight=row[2])
            graph.add_edge(parent, row[1], weight=row[2])
        nx.set_node_attributes(graph, {parent: row[3] for parent, row in enumerate(self._linkage, root)}, "size")
        return graph

    def get_clusters(self, cut_distance: float, min_cluster_size: int = 5) -> np.ndarray:
        """The flat clustering at cut_distance: components of the merges
        below it, those of fewer than min_cluster_size points noise (-1)."""
        if self._cut is None:
            raise UnsupportedError("get_clusters: this tree was made by hand; grove cuts the tree of a fitted "
                                   "estimator (use its single_linkage_tree_ or dbscan_clustering)")
        return self._cut(cut_distance, min_cluster_size)


class MinimumSpanningTree:
    """The (mutual-reachability) minimum spanning tree, rows of (from, to,
    distance), with the data it spans (the library's MinimumSpanningTree)."""

    def __init__(self, mst: np.ndarray, data: np.ndarray):
        self._mst = mst
        self._data = data

    def plot(self, axis: Any = None, node_size: float = 40, node_color: Any = "k", node_alpha: float = 0.8,
             edge_alpha: float = 0.5, edge_cmap: Any = "viridis_r", edge_linewidth: float = 2,
             vary_line_width: bool = True, colorbar: bool = True) -> Any:
        """The tree over the points (projected to 2-D by t-SNE, after PCA
        above 32 dimensions, as the library does); returns the axis."""
        plt = _need("matplotlib.pyplot", "plot the minimum spanning tree")
        from matplotlib.collections import LineCollection
        if self._data.shape[0] > 32767:
            warn("Too many data points for safe rendering of an minimal spanning tree!")
            return None
        axis = plt.gca() if axis is None else axis
        projection = self._data.copy()
        if self._data.shape[1] > 2:
            manifold = _need("sklearn.manifold", "project the spanning tree to two dimensions")
            if self._data.shape[1] > 32:
                projection = _need("sklearn.decomposition", "project the spanning tree").PCA(
                    n_components=32).fit_transform(projection)
            projection = manifold.TSNE().fit_transform(projection)
        weights = self._mst[:, 2]
        width: Any = edge_linewidth
        if vary_line_width:
            width = edge_linewidth * (np.log(weights.max() / weights) + 1.0)
        lines = LineCollection(projection[self._mst[:, :2].astype(int)], linewidth=width, cmap=edge_cmap,
                               alpha=edge_alpha)
        lines.set_array(weights)
        axis.add_artist(lines)
        axis.scatter(projection[:, 0], projection[:, 1], c=node_color, alpha=node_alpha, s=node_size)
        axis.set_xticks([])
        axis.set_yticks([])
        if colorbar:
            plt.colorbar(lines, ax=axis).ax.set_ylabel("Mutual reachability distance")
        return axis

    def to_numpy(self) -> np.ndarray:
        """The edges as (n - 1, 3) rows of (from, to, distance)."""
        return self._mst.copy()

    def to_pandas(self) -> Any:
        """A DataFrame with columns from, to, distance."""
        pandas = _need("pandas", "export pandas DataFrames")
        return pandas.DataFrame({"from": self._mst[:, 0].astype(int), "to": self._mst[:, 1].astype(int),
                                 "distance": self._mst[:, 2]})

    def to_networkx(self) -> Any:
        """A Graph weighted by distance, node attribute data (the point)."""
        nx = _need("networkx", "export networkx graphs")
        graph = nx.Graph()
        for a, b, w in self._mst:
            graph.add_edge(a, b, weight=w)
        nx.set_node_attributes(graph, {i: tuple(row) for i, row in enumerate(self._data)}, "data")
        return graph
