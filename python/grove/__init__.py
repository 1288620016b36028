"""grove: spatial trees on point clouds and the algorithms they make fast,
from Python. A thin ctypes layer over libgrove's C API (include/grove.h).

Inputs are NumPy arrays, array-likes, or CPU tensors with ``__dlpack__``
(PyTorch): float32/float64 points whose rows are contiguous reach C without
a copy; other dtypes and layouts are converted once (see ``grove._arrays``).
Results are NumPy arrays. Every call releases the GIL while C runs. Failures
raise a ``GroveError`` subclass carrying grove's message. Every computing
function takes ``threads=`` (None or 0 = all cores); results are the same
for any thread count.

Modules: ball trees (``balltree``), epsilon joins and kNN (``join``,
``join_csr``, ``join_batches``, ``knn``, ``Index``), EMST and HDBSCAN*
(``emst``, ``core_distances``, ``HDBSCAN``), DBSCAN (``DBSCAN``),
friends-of-friends groups (``fof``, ``mean_separation``), pair counts and
correlation functions (``paircount``, ``pair_counts``), gravity and N-body
(``gravity``, ``NBody``, ``read_tipsy``, ``write_tipsy``), synthetic data
(``generate``). Drop-in replacements: ``grove.compat.balltree`` (for
balltree-erwin) and ``grove.compat.hdbscan`` (for hdbscan).
"""
from ._balltree import BallTree, balltree, random_rotation
from ._clib import build_info, cpu_info, device_info, library_path, version
from ._data import generate
from ._dbscan import DBSCAN
from ._emst import core_distances, emst
from ._errors import (CancelledError, GroveError, InputOutputError, InternalError, InvalidArgumentError,
                      OutOfMemoryError, OverBudgetError, ParseError, TooLargeError, UnsupportedError,
                      UnsupportedMetricError)
from ._fof import Catalogue, fof, mean_separation
from ._hdbscan import HDBSCAN
from ._join import Index, JoinBatch, join, join_batches, join_csr, knn
from ._paircount import PairCounts, pair_counts, paircount
from ._nbody import Diagnostics, GravityStats, NBody, Snapshot, gravity, read_tipsy, write_tipsy

__version__ = version()

__all__ = [
    "BallTree", "balltree", "random_rotation", "build_info", "cpu_info", "device_info", "library_path", "version",
    "generate",
    "core_distances", "emst", "HDBSCAN", "DBSCAN", "Index", "JoinBatch", "join", "join_batches", "join_csr", "knn",
    "Catalogue", "fof", "mean_separation", "PairCounts", "pair_counts", "paircount", "Diagnostics", "GravityStats", "NBody", "Snapshot", "gravity", "read_tipsy", "write_tipsy",
    "GroveError", "InvalidArgumentError", "OutOfMemoryError", "InputOutputError", "ParseError", "UnsupportedError",
    "UnsupportedMetricError", "TooLargeError", "OverBudgetError", "CancelledError", "InternalError",
]
