"""Exact epsilon joins and k nearest neighbours: ``grove.Index`` (a reusable
index handle) and the one-shot ``join``, ``join_csr``, ``join_batches`` and
``knn``."""
from __future__ import annotations

import ctypes as C
import queue
import threading
from typing import Any, Iterator, NamedTuple

import numpy as np

from . import _clib
from ._arrays import address, as_numpy, count, from_c, options, points_array, points_view
from ._cstructs import JOIN_BATCH_FN, IndexParams, JoinParams, JoinResult, KnnParams, Points
from ._errors import InvalidArgumentError
from ._handle import Handle


def knn_params(k: int, exclude_self: bool = False) -> KnnParams:
    """``grove_knn_params``: k neighbours, and whether a self-query leaves
    out the query point itself."""
    params = _clib.defaults(KnnParams)
    params.k, params.exclude_self = count(k, "k", 1), bool(exclude_self)
    return params


def index_params(leaf_size: int = 0, index_dims: int = 0, boxsize: Any = None) -> tuple[IndexParams, Any]:
    """``grove_index_params`` and the array its boxsize points into (keep
    it alive through the C call). boxsize as SciPy's cKDTree takes it: None,
    one length for every dimension, or one per dimension; 0 leaves a
    dimension unbounded."""
    params = _clib.defaults(IndexParams)
    params.leaf_size = count(leaf_size, "leaf_size")
    params.index_dims = count(index_dims, "index_dims")
    box = None
    if boxsize is not None:
        box = np.ascontiguousarray(as_numpy(boxsize, "boxsize"), dtype=np.float64)
        if box.ndim > 1 or box.size == 0:
            raise InvalidArgumentError(f"boxsize: expected a length or one length per dimension, got shape "
                                       f"{box.shape}")
        box = box.reshape(-1)
        params.boxsize = box.ctypes.data_as(C.POINTER(C.c_double))
        params.boxsize_count = box.size
    return params, box


class _JoinResult:
    """Owns a grove_join_result and hands its memory to the arrays
    Index.join returns, without a copy (a join's result can be most of the
    memory): each array's base is a writable ctypes buffer over the C
    memory that holds this owner, so the arrays are ordinary writable
    arrays (NumPy, and SciPy after it, can set WRITEABLE on their views)
    and the result is freed once, when the last of them is gone."""

    def __init__(self) -> None:
        self.c = JoinResult()

    def __del__(self) -> None:
        lib = getattr(_clib, "lib", None) if _clib is not None else None  # None late in shutdown
        if lib is not None:
            lib.grove_join_result_free(C.byref(self.c))

    def array(self, ptr: Any, size: int, dtype: type) -> np.ndarray:
        if not size:
            return np.empty(0, dtype=dtype)
        memory = (C.c_char * (size * np.dtype(dtype).itemsize)).from_address(C.cast(ptr, C.c_void_p).value)
        memory._owner = self  # type: ignore[attr-defined]  # ctypes instances take attributes
        return np.frombuffer(memory, dtype=dtype)


class JoinBatch(NamedTuple):
    """Consecutive queries [query_begin, query_end) and their neighbours in
    CSR form (offsets start at 0); distances is None unless asked for;
    pairs_before counts the pairs of earlier batches."""

    query_begin: int
    query_end: int
    offsets: np.ndarray
    indices: np.ndarray
    distances: np.ndarray | None
    pairs_before: int


class Index(Handle):
    """A search index over (n, d) points (``grove_index``: RT-HiSS, a kd-tree
    of leaf groups with tight boxes). The points are copied into it, so the
    input may change afterwards. Immutable: queries from several threads at
    once are safe and run concurrently. Free it with ``close()`` or a
    ``with`` block (or let it be collected): later calls are refused, and
    queries still running on other threads and live ``join_batches``
    iterators keep it until they end (see ``grove._handle.Handle``).

    leaf_size: points per leaf group, 0 = automatic; index_dims: leading
    (highest-variance) dimensions kept in the group boxes, 0 = automatic;
    boxsize: a periodic box as SciPy's cKDTree takes it (one length for
    every dimension, or one per dimension, 0 = that dimension not
    periodic): every distance is then the minimum image, and points
    (queries too) outside [0, L) are refused."""

    _free = "grove_index_free"
    _rebuild = "pickle its points and build a new Index from them"

    def __init__(self, points: Any, *, leaf_size: int = 0, index_dims: int = 0, boxsize: Any = None,
                 threads: int | None = None):
        _clib.require("grove_index_create")
        super().__init__()
        x = points_array(points)
        params, _keep = index_params(leaf_size, index_dims, boxsize)
        opts = options(threads)
        _clib.call(_clib.lib.grove_index_create, points_view(x), C.byref(params), opts, C.byref(self._handle))

    def _get(self, getter: str) -> int:
        with self._use() as h:
            return getattr(_clib.lib, getter)(h)

    n = property(lambda self: self._get("grove_index_n"), doc="number of indexed points")
    d = property(lambda self: self._get("grove_index_d"), doc="dimensions")
    leaf_size = property(lambda self: self._get("grove_index_leaf_size"), doc="points per leaf group")
    index_dims = property(lambda self: self._get("grove_index_dims"), doc="dimensions in the group boxes")

    @property
    def boxsize(self) -> np.ndarray | None:
        """The periodic box, one length per dimension (0 = not periodic), or
        None without one."""
        with self._use() as h:
            out = np.empty(_clib.lib.grove_index_d(h))
            periodic = _clib.lib.grove_index_boxsize(h, address(out))
        return out if periodic else None

    @property
    def dim_order(self) -> np.ndarray:
        """The variance order: dim_order[j] is the input dimension stored j-th."""
        with self._use() as h:
            out = np.empty(_clib.lib.grove_index_d(h), dtype=np.uintp)
            _clib.lib.grove_index_dim_order(h, address(out))
        return out.astype(np.int64)

    def _queries(self, queries: Any) -> tuple[np.ndarray | None, Points | None, int]:
        """(array, view, count) of the queries; callers hold the array while
        C reads the view."""
        if queries is None:
            return None, None, self.n
        q = points_array(queries, "queries")
        return q, points_view(q), q.shape[0]

    def _params(self, eps: float, exclude_self: bool, distances: bool) -> JoinParams:
        params = _clib.defaults(JoinParams)
        params.eps, params.exclude_self, params.distances = float(eps), bool(exclude_self), bool(distances)
        return params

    def count(self, eps: float, queries: Any = None, *, exclude_self: bool = False,
              threads: int | None = None, device: str = "cpu") -> np.ndarray:
        """Number of indexed points within eps (inclusive) of each query
        (int64, one per query; queries None = a self-join). device: "cpu",
        "cuda", "opencl" or "auto" (docs/gpu.md; the same counts)."""
        _keep, qv, nq = self._queries(queries)
        params, opts = self._params(eps, exclude_self, False), options(threads, device=device)
        counts = np.empty(nq, dtype=np.int64)
        with self._use() as h:
            _clib.call(_clib.lib.grove_join_count, h, qv, C.byref(params), address(counts), None, opts)
        return counts

    def join(self, eps: float, queries: Any = None, *, exclude_self: bool = False, distances: bool = False,
             threads: int | None = None, device: str = "cpu") -> tuple[np.ndarray, ...]:
        """All pairs within eps: ``(offsets, indices)`` in CSR form, plus
        ``distances`` when asked. Query q's neighbours are
        ``indices[offsets[q]:offsets[q + 1]]``, ascending. One C call
        (``grove_join_search``: count and fill, the fill reusing what the
        count found above 16 dimensions); the arrays are the C result's
        memory, not copies. device: where to compute, "cpu", "cuda",
        "opencl" or "auto" (docs/gpu.md): the same arrays, byte for byte."""
        _keep, qv, nq = self._queries(queries)
        params, opts = self._params(eps, exclude_self, distances), options(threads, device=device)
        result = _JoinResult()
        with self._use() as h:
            _clib.call(_clib.lib.grove_join_search, h, qv, C.byref(params), C.byref(result.c), opts)
        r = result.c
        offsets = result.array(r.offsets, r.nq + 1, np.int64)
        indices = result.array(r.indices, r.pairs, np.int64)
        if not distances:
            return offsets, indices
        return offsets, indices, result.array(r.distances, r.pairs, np.float64)

    def join_batches(self, eps: float, queries: Any = None, *, exclude_self: bool = False,
                     distances: bool = False, memory_budget: int = 0,
                     threads: int | None = None, device: str = "cpu") -> Iterator[JoinBatch]:
        """The join as a stream of JoinBatch, each sized so the per-query
        counts (8 bytes per query) and its arrays fit memory_budget bytes
        (0 = one batch): ``grove_join_stream`` runs on a worker thread and
        hands each batch over as it is made. Peak memory: the counts and up
        to three batches. Closing the iterator early (or an exception such
        as Ctrl-C's while it waits) cancels the join; from its first batch
        to its end the iterator keeps the index alive, even through close().
        device: as for join."""
        _keep, qv, nq = self._queries(queries)
        params, opts = self._params(eps, exclude_self, distances), options(threads, memory_budget, device)
        handoff: queue.Queue = queue.Queue(maxsize=1)
        end = object()  # put by the worker after the C call returned
        stop = threading.Event()
        failure: list[BaseException] = []

        def on_batch(_user: Any, ptr: Any) -> int:
            if stop.is_set():
                return 1
            try:
                b = ptr.contents
                if nq and b.query_end == 0:
                    return 0  # the announcement of the result's size, before the first batch
                m = b.query_end - b.query_begin
                offs = from_c(b.offsets, (m + 1,), np.int64)
                pairs = int(offs[-1])
                handoff.put(JoinBatch(b.query_begin, b.query_end, offs, from_c(b.indices, (pairs,), np.int64),
                                      from_c(b.distances, (pairs,)) if distances else None,
                                      b.pairs_before))
                return 0
            except BaseException as e:  # never let an exception cross the C frame
                failure.append(e)
                return 1

        with self._use() as h:
            stream = _clib.Running(_clib.lib.grove_join_stream, (h, qv, C.byref(params), JOIN_BATCH_FN(on_batch), None,
                                                                 opts))

            def worker() -> None:
                stream.run()
                handoff.put(end)

            thread = threading.Thread(target=worker, name="grove-join-stream", daemon=True)
            thread.start()
            try:
                while True:
                    try:
                        item = handoff.get(timeout=_clib.TICK)  # timed: a signal is seen between waits
                    except queue.Empty:
                        continue
                    if item is end:
                        break
                    yield item
                if failure:
                    raise failure[0]
                stream.raise_failure()
            finally:
                stop.set()
                stream.cancel()
                while thread.is_alive():  # the stream reads the index and qv: wait for it, whatever arrives
                    try:
                        handoff.get(timeout=_clib.TICK)
                    except BaseException:
                        pass
                thread.join()

    def knn(self, k: int, queries: Any = None, *, exclude_self: bool = False,
            threads: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The k nearest indexed points of each query: ``(indices,
        distances)``, both (nq, k), nearest first, ties by the smaller row.
        Self-queries (queries None) include the point itself unless
        exclude_self."""
        _keep, qv, nq = self._queries(queries)
        kp = knn_params(k, exclude_self)
        indices, dist = np.empty((nq, kp.k), dtype=np.int64), np.empty((nq, kp.k))
        opts = options(threads)
        with self._use() as h:
            _clib.call(_clib.lib.grove_knn_search, h, qv, C.byref(kp), address(indices), address(dist), opts)
        return indices, dist


def join(points: Any, eps: float, queries: Any = None, exclude_self: bool = False, *, distances: bool = False,
         leaf_size: int = 0, index_dims: int = 0, boxsize: Any = None,
         threads: int | None = None, device: str = "cpu") -> tuple[np.ndarray, ...]:
    """Exact epsilon join: for each query (each point when queries is None)
    every point within Euclidean distance eps, inclusive.

    Returns ``(offsets, indices)`` (CSR, int64; query q's neighbours,
    ascending, are ``indices[offsets[q]:offsets[q + 1]]``), and
    ``distances`` (float64) as a third array when ``distances=True``.
    exclude_self leaves out (i, i) in a self-join; boxsize: a periodic box,
    as cKDTree takes it (see ``Index``); device: "cpu", "cuda", "opencl"
    or "auto" (docs/gpu.md; the same arrays). For repeated queries on the
    same points build an ``Index`` once."""
    with Index(points, leaf_size=leaf_size, index_dims=index_dims, boxsize=boxsize, threads=threads) as ix:
        return ix.join(eps, queries, exclude_self=exclude_self, distances=distances, threads=threads, device=device)


def join_csr(points: Any, eps: float, queries: Any = None, exclude_self: bool = False, *, boxsize: Any = None,
             threads: int | None = None, device: str = "cpu") -> Any:
    """The join as a ``scipy.sparse.csr_matrix`` of shape (queries, points)
    holding the distances. Pairs at distance 0 (duplicates, and (i, i) in a
    self-join) are stored zeros: test membership with the sparsity
    structure (``.indices``), not the values. Needs SciPy."""
    try:
        from scipy.sparse import csr_matrix
    except ImportError:
        raise ImportError("grove.join_csr needs SciPy (pip install scipy); grove.join gives the same CSR arrays")
    with Index(points, boxsize=boxsize, threads=threads) as ix:
        offsets, indices, dist = ix.join(eps, queries, exclude_self=exclude_self, distances=True, threads=threads,
                                         device=device)
        n = ix.n
    return csr_matrix((dist, indices, offsets), shape=(offsets.size - 1, n))


def join_batches(points: Any, eps: float, queries: Any = None, exclude_self: bool = False, *,
                 distances: bool = False, memory_budget: int = 0, boxsize: Any = None,
                 threads: int | None = None, device: str = "cpu") -> Iterator[JoinBatch]:
    """The join streamed in batches that fit memory_budget bytes each (see
    ``Index.join_batches``)."""
    with Index(points, boxsize=boxsize, threads=threads) as ix:
        yield from ix.join_batches(eps, queries, exclude_self=exclude_self, distances=distances,
                                   memory_budget=memory_budget, threads=threads, device=device)


def knn(points: Any, k: int, queries: Any = None, exclude_self: bool = False, *, boxsize: Any = None,
        threads: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Exact k nearest neighbours: ``(indices, distances)``, each (nq, k),
    nearest first, ties broken by the smaller row; k must be between 1 and
    the number of candidates (n, or n - 1 with exclude_self); boxsize: a
    periodic box, as cKDTree takes it (see ``Index``)."""
    _clib.require("grove_knn")
    x = points_array(points)
    q = None if queries is None else points_array(queries, "queries")
    kp = knn_params(k, exclude_self)
    nq = x.shape[0] if q is None else q.shape[0]
    indices, dist = np.empty((nq, kp.k), dtype=np.int64), np.empty((nq, kp.k))
    opts = options(threads)
    qv = None if q is None else points_view(q)
    params, _keep = index_params(boxsize=boxsize)
    _clib.call(_clib.lib.grove_knn, points_view(x), qv, C.byref(params), C.byref(kp), address(indices),
               address(dist), opts)
    return indices, dist
