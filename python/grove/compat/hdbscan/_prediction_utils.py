"""The library-internal ``hdbscan._prediction_utils`` (helpers of its
Cython prediction code): grove's prediction is C, so there is nothing to
provide. Importable, every call refused naming the library."""
from __future__ import annotations

from ._refused import refusal

safe_always_positive_division = refusal("hdbscan._prediction_utils", "safe_always_positive_division",
                                        "internal to the hdbscan library's prediction code")
