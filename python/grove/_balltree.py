"""Erwin ball trees: ``grove.balltree`` and its result, ``BallTree``."""
from __future__ import annotations

import ctypes as C
import threading
from typing import Any

import numpy as np

from . import _clib
from ._arrays import INT_MAX, address, count, fixed, options, points_array, points_view
from ._cstructs import GROVE_BALLTREE_FULL, BalltreeBatch, BalltreeParams


class _Workspace:
    """A grove_workspace: the ball tree's working memory, kept between calls
    so repeated builds do not fault in fresh pages each time."""

    def __init__(self) -> None:
        self.ptr = _clib.lib.grove_workspace_create()
        if not self.ptr:
            raise MemoryError("grove: out of memory creating a workspace")

    def __del__(self) -> None:
        lib = getattr(_clib, "lib", None) if _clib is not None else None  # None late in shutdown
        if getattr(self, "ptr", None) and lib is not None:
            lib.grove_workspace_free(self.ptr)


_threads = threading.local()


def _workspace() -> int:
    """The calling thread's workspace (one call at a time may use one),
    freed with the thread."""
    w = getattr(_threads, "workspace", None)
    if w is None:
        w = _threads.workspace = _Workspace()
    return w.ptr


def random_rotation(d: int, seed: int = 0) -> np.ndarray:
    """A uniformly random (Haar) d x d rotation with determinant +1, the same
    on every platform for a seed (``grove_rotation_random``; the CLI's
    ``--rotate SEED``)."""
    out = np.empty((count(d, "d", 1), d))
    _clib.check(_clib.lib.grove_rotation_random(d, count(seed, "seed"), address(out)))
    return out


class BallTree(tuple):
    """The pair ``(indices, mask)`` -- unpack it -- with the tree's layout,
    ball statistics and an independent check.

    ``indices`` (int64) are input rows in tree order, ``mask`` (bool) is
    False on padding slots. The object keeps the (converted) points, batch
    ids and rotation it was built from, for ``balls`` and ``check``
    (points in any layout: they are read as ``balltree`` reads them)."""

    _points: np.ndarray
    _batch: np.ndarray | None
    _levels: int
    _rotation: np.ndarray | None

    def __new__(cls, indices: np.ndarray, mask: np.ndarray, points: np.ndarray, batch: np.ndarray | None,
                levels: int, rotation: np.ndarray | None) -> BallTree:
        self = super().__new__(cls, (indices, mask))
        self._points, self._batch, self._levels, self._rotation = points_array(points), batch, levels, rotation
        return self

    def __reduce__(self) -> tuple:
        """Copies and pickles are made as the tree was (tuple's default
        would call __new__ with the pair alone)."""
        return BallTree, (*self, self._points, self._batch, self._levels, self._rotation)

    @property
    def indices(self) -> np.ndarray:
        """int64 input rows in tree order (slots,)"""
        return self[0]

    @property
    def mask(self) -> np.ndarray:
        """bool (slots,): True for real points, False for padding"""
        return self[1]

    def _params(self) -> BalltreeParams:
        return _params(self._batch, self._levels, self._rotation)

    def batches(self) -> np.ndarray:
        """One record per batch, ascending id: fields ``id``, ``count``,
        ``slot_offset``, ``slots``, ``levels`` (L in full mode, K in
        partition mode)."""
        n = self._points.shape[0]
        params = self._params()
        slots, nb = C.c_size_t(), C.c_size_t()
        _clib.check(_clib.lib.grove_balltree_layout(n, C.byref(params), C.byref(slots), C.byref(nb)))
        out = np.empty(nb.value, dtype=np.dtype(BalltreeBatch))
        _clib.check(_clib.lib.grove_balltree_batches(n, C.byref(params), address(out)))
        return out

    def balls(self, level: int, *, threads: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Centres (balls, d) and radii (balls,) of every node at ``level``
        (0 = root), batches in ascending id, nodes left to right, in double
        on the unrotated points, padding excluded."""
        n = self._points.shape[0]
        params = self._params()
        balls = C.c_size_t()
        level = count(level, "level", maximum=INT_MAX)
        _clib.check(_clib.lib.grove_balltree_ball_count(n, C.byref(params), level, C.byref(balls)))
        centers = np.empty((balls.value, self._points.shape[1]))
        radii = np.empty(balls.value)
        opts = options(threads)
        _clib.call(_clib.lib.grove_balltree_ball_stats, points_view(self._points), C.byref(params), address(self[0]),
                   address(self[1]), level, address(centers), address(radii), opts)
        return centers, radii

    def check(self) -> None:
        """Verify the tree independently of how it was built
        (``grove_balltree_check``); raises InvalidArgumentError naming the
        first violation."""
        params = self._params()
        _clib.call(_clib.lib.grove_balltree_check, points_view(self._points), C.byref(params), address(self[0]),
                   address(self[1]), options())


def _params(batch: np.ndarray | None, levels: int, rotation: np.ndarray | None) -> BalltreeParams:
    params = _clib.defaults(BalltreeParams)
    if batch is not None:
        params.batch = batch.ctypes.data_as(C.POINTER(C.c_int64))
    params.levels = levels
    if rotation is not None:
        params.rotation = rotation.ctypes.data_as(C.POINTER(C.c_double))
    return params


def balltree(points: Any, batch: Any = None, levels: int | None = None, rotate: Any = None, *,
             threads: int | None = None) -> BallTree:
    """Perfect binary ball trees (Erwin) over batched point clouds.

    points: (n, d) float32/float64 (see the package doc for layouts).
    batch: None (one batch) or n integer batch ids >= 0 in any order; each
        batch gets its own tree, concatenated in ascending id.
    levels: None for full trees down to leaf pairs, padded to 2^(L+1)
        slots per batch; an integer K >= 0 for partition mode (K levels of
        splits, no padding, rows ascending inside a leaf).
    rotate: None; an integer seed (a random rotation, as ``grove balltree
        --rotate SEED``); or a (d, d) matrix R. Splits are decided on
        y = R x (that is ``x @ R.T``); indices refer to the input rows.
    threads: None or 0 = all cores.

    Returns a BallTree, which unpacks as ``indices, mask = ...``: indices
    (slots,) int64 input rows in tree order, mask (slots,) bool, False on
    the padding copies. ``.balls(level)`` gives ball centres and radii.
    """
    x = points_array(points)
    n, d = x.shape
    ids = None if batch is None else fixed(batch, np.int64, (n,), "batch")
    mode = GROVE_BALLTREE_FULL if levels is None else count(levels, "levels", maximum=INT_MAX)
    if rotate is None:
        rotation = None
    elif np.isscalar(rotate) and not isinstance(rotate, (str, bytes)):
        rotation = random_rotation(d, count(rotate, "rotate (a seed)"))
    else:
        rotation = fixed(rotate, np.float64, (d, d), "rotate")
    params = _params(ids, mode, rotation)
    slots, nb = C.c_size_t(), C.c_size_t()
    _clib.check(_clib.lib.grove_balltree_layout(n, C.byref(params), C.byref(slots), C.byref(nb)))
    indices = np.empty(slots.value, dtype=np.int64)
    mask = np.empty(slots.value, dtype=np.bool_)
    params.workspace = _workspace()
    opts = options(threads)
    _clib.call(_clib.lib.grove_balltree_build, points_view(x), C.byref(params), address(indices), address(mask), opts)
    return BallTree(indices, mask, x, ids, mode, rotation)
