"""The ``hdbscan`` library on grove's HDBSCAN*, laid out as the library
is, so that changing the import is all a program (or the library's own
test files) needs:

    from grove.compat.hdbscan import HDBSCAN   # was: from hdbscan import HDBSCAN
    from grove.compat.hdbscan.prediction import approximate_predict, membership_vector
    from grove.compat.hdbscan.validity import validity_index

Modules as the library's: ``hdbscan_`` (``HDBSCAN``, ``hdbscan()``),
``prediction`` (prediction data, ``approximate_predict``,
``approximate_predict_scores``, ``membership_vector``,
``all_points_membership_vectors``), ``validity`` (``validity_index``,
DBCV), ``robust_single_linkage_`` (``RobustSingleLinkage``,
``robust_single_linkage``) and ``plots`` (the tree classes). ``flat``
(clustering into a given number of clusters), ``branches`` (branch
detection) and the library-internal ``_prediction_utils`` are there so
their imports work, and every call in them raises
``grove.UnsupportedError`` naming the library.

Parameters keep the library's names, defaults, meanings and checks
(``min_samples`` counts neighbours without the point: grove's K is
min_samples + 1, clamped to the data as the library clamps it). The MST
is always exact and always kept, so ``algorithm``, ``leaf_size``,
``memory``, ``approx_min_span_tree`` and ``gen_min_span_tree`` change no
result; ``core_dist_n_jobs`` sets the threads (at most the cores; negative
counts as joblib's, -2 = all but one). Refused: metrics other
than Euclidean (standardised Euclidean is Euclidean on rescaled
coordinates and is computed), precomputed distances (both
``UnsupportedMetricError``, a ValueError as the library's refusals are),
``branch_detection_data`` and approximate_predict's
``return_connecting_points`` (``UnsupportedError``). Rows with NaN or
infinity are noise, as in the library. Without tied weights the labels
are the library's, numbers included (its generic and Prim algorithms;
its default approximate Borůvka tree may differ). Differences, all in
docs/python-compat.md: where the library's GLOSH score is 0/0 (NaN)
grove's is 1; equal-weight merges are ordered by (weight, u, v), or
merged at once with ``ties="simultaneous"``.
"""
from .branches import BranchDetector, approximate_predict_branch, detect_branches_in_clusters
from .hdbscan_ import HDBSCAN, hdbscan
from .plots import CondensedTree, MinimumSpanningTree, SingleLinkageTree
from .prediction import (PredictionData, all_points_membership_vectors, approximate_predict,
                         approximate_predict_scores, membership_vector)
from .robust_single_linkage_ import RobustSingleLinkage, robust_single_linkage
from .validity import validity_index

# The refusals (branches) are importable, as in the library, but not listed.
__all__ = ["HDBSCAN", "hdbscan", "approximate_predict", "approximate_predict_scores", "membership_vector",
           "all_points_membership_vectors", "PredictionData", "CondensedTree", "SingleLinkageTree",
           "MinimumSpanningTree", "RobustSingleLinkage", "robust_single_linkage", "validity_index"]
