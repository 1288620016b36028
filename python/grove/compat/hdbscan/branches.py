"""The library's ``hdbscan.branches`` (branch detection inside clusters):
not in grove. Importable, every call (making a ``BranchDetector`` too)
refused naming the library."""
from __future__ import annotations

from ._refused import refusal

_WHY = "grove has no branch detection"

BranchDetector = refusal("hdbscan.branches", "BranchDetector", _WHY)
detect_branches_in_clusters = refusal("hdbscan.branches", "detect_branches_in_clusters", _WHY)
approximate_predict_branch = refusal("hdbscan.branches", "approximate_predict_branch", _WHY)
