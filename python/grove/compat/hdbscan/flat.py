"""The library's ``hdbscan.flat`` (a clustering with a given number of
clusters, by re-selecting from the library's own prediction tables): not
in grove. Importable, every call refused naming the library; a fixed
``cluster_selection_epsilon`` on ``HDBSCAN`` is what grove offers."""
from __future__ import annotations

from ._refused import refusal

_WHY = ("grove does not re-select a fitted clustering for a number of clusters (for a given epsilon, fit HDBSCAN "
        "with cluster_selection_epsilon)")

HDBSCAN_flat = refusal("hdbscan.flat", "HDBSCAN_flat", _WHY)
approximate_predict_flat = refusal("hdbscan.flat", "approximate_predict_flat", _WHY)
membership_vector_flat = refusal("hdbscan.flat", "membership_vector_flat", _WHY)
all_points_membership_vectors_flat = refusal("hdbscan.flat", "all_points_membership_vectors_flat", _WHY)
