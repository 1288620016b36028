"""Every array a public call returns is an ordinary NumPy array: writable,
owning its memory or viewing memory a writable buffer owns (so NumPy, and
SciPy after it, can set WRITEABLE again), changeable in place, and taken
by torch.from_numpy where torch is installed. The calls come from walking
the public API (public_api.py). The join's arrays are the C result's
memory, handed over without a copy and freed once, with the last of
them."""
import ctypes as C
import dataclasses
import gc
import os

import numpy as np
import pytest

import grove
from public_api import BASE, CALLS, public_calls, resolves


def _arrays_in(obj, where="result", seen=None):
    """(place, array) for every NumPy array in a result: inside tuples,
    lists, dicts, records, SciPy sparse matrices and grove objects (their
    public attributes)."""
    seen = set() if seen is None else seen
    if id(obj) in seen:
        return
    seen.add(id(obj))
    if isinstance(obj, np.ndarray):
        yield where, obj
    elif isinstance(obj, (tuple, list)):
        for i, item in enumerate(obj):
            yield from _arrays_in(item, f"{where}[{i}]", seen)
    elif isinstance(obj, dict):
        for key, item in obj.items():
            yield from _arrays_in(item, f"{where}[{key!r}]", seen)
    elif hasattr(obj, "indptr"):  # a SciPy sparse matrix
        for part in ("data", "indices", "indptr"):
            yield from _arrays_in(getattr(obj, part), f"{where}.{part}", seen)
    elif dataclasses.is_dataclass(obj) or type(obj).__module__.startswith("grove"):
        for key, item in vars(obj).items():
            if not key.startswith("_"):
                yield from _arrays_in(item, f"{where}.{key}", seen)


def _memory_owner(a):
    """The object at the end of a's base chain."""
    while isinstance(a, np.ndarray) and a.base is not None:
        a = a.base
    return a


def _check_ordinary(a, where):
    assert a.flags.writeable, f"{where}: read-only"
    view = a.view()
    view.flags.writeable = False
    view.flags.writeable = True  # what SciPy does to the index arrays it is given
    owner = _memory_owner(a)
    if isinstance(owner, np.ndarray):
        assert owner.flags.owndata, where
    else:
        assert not memoryview(owner).readonly, f"{where}: its memory is read-only"
    before = a.copy()
    a[...] = before  # in place
    assert np.array_equal(a, before, equal_nan=a.dtype.kind == "f"), where


@pytest.mark.parametrize("name", sorted(CALLS))
def test_every_returned_array_is_ordinary(name):
    try:
        result = CALLS[name](BASE)
    except ImportError as e:  # a call needing an optional library
        pytest.skip(str(e))
    torch = _torch()
    for where, a in _arrays_in(result):
        _check_ordinary(a, where)
        if torch is not None and a.dtype.kind in "biuf" and a.dtype.fields is None:
            assert torch.from_numpy(a).numel() == a.size, where


def _torch():
    try:
        import torch
    except ImportError:
        return None
    return torch


def test_every_call_here_is_public():
    unknown = set(CALLS) - public_calls()
    assert all(map(resolves, unknown)), f"not in the public API: {sorted(n for n in unknown if not resolves(n))}"


def _brute_pairs(x, eps):
    d = np.sqrt(((x[:, None] - x[None]) ** 2).sum(-1))
    return d <= eps, d


def test_join_results_work_in_scipy(rng):
    sparse = pytest.importorskip("scipy.sparse")
    x = rng.random((300, 2))
    offsets, indices, dist = grove.join(x, 0.1, distances=True)
    within, d = _brute_pairs(x, 0.1)
    rows = np.repeat(np.arange(len(x)), np.diff(offsets))
    matrix = sparse.dok_matrix((len(x), len(x)))
    matrix[rows, indices] = 1.0  # raised "cannot set WRITEABLE flag to True of this array"
    assert np.array_equal(matrix.toarray() != 0, within)
    csr = sparse.csr_matrix((dist, indices, offsets), shape=(len(x), len(x)))
    assert np.array_equal(csr.toarray() != 0, within & (d > 0))
    assert np.allclose(csr.toarray(), np.where(within, d, 0))
    indices += 1  # in place, on the C result's memory
    assert np.array_equal(indices - 1, np.flatnonzero(within) % len(x))


def test_join_memory_is_handed_over_and_freed_once(spy, rng):
    frees = spy("grove_join_result_free")
    calls = spy("grove_join_search")
    x = rng.random((400, 3))
    gc.collect()
    frees.clear()  # earlier tests' results
    offsets, indices, dist = grove.join(x, 0.2, distances=True)
    result = calls[-1][3]._obj  # the grove_join_result the C call filled
    assert indices.ctypes.data == C.cast(result.indices, C.c_void_p).value  # not a copy
    del offsets, indices
    gc.collect()
    assert not frees  # dist still uses the result
    within, d = _brute_pairs(x, 0.2)
    assert np.allclose(np.sort(dist), np.sort(d[within]))
    del dist
    gc.collect()
    assert len(frees) == 1


def _rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="reads the resident size from /proc")
def test_repeated_joins_do_not_grow_memory(rng):
    x = rng.random((3000, 3))
    with grove.Index(x) as ix:
        def once():
            offsets, indices, dist = ix.join(0.2, distances=True)
            return indices.nbytes + dist.nbytes
        size = once()
        start = _rss()
        for _ in range(40):
            once()
        assert _rss() - start < 10 * size, f"grew {(_rss() - start) >> 20} MiB over 40 joins of {size >> 20} MiB"
