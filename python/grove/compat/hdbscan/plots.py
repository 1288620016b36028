"""The library's ``hdbscan.plots``: the condensed tree, single-linkage
tree and minimum spanning tree classes the estimators return."""
from ..._hdbscan_trees import CondensedTree, MinimumSpanningTree, SingleLinkageTree

__all__ = ["CondensedTree", "SingleLinkageTree", "MinimumSpanningTree"]
