"""Every public call that takes points or queries reads any layout of them
(transposed, strided, Fortran order, reversed, broadcast; one row or
many) as it reads their C-contiguous copy: C sees the same values and the
results are the same. The calls come from walking the public API
(public_api.py), so a new one is covered or this file fails."""
import ctypes as C
import math

import numpy as np
import pytest

from grove import _clib
from grove import _cstructs as S
from public_api import BASE, CALLS, NO_RESULT, public_calls, takes_points

POINT_CALLS = sorted(name for name in public_calls() if takes_points(name))


def _widened(x, pad, dtype=np.float64):
    """x inside a wider array: columns at a stride of `pad` values."""
    wide = np.zeros((x.shape[0], x.shape[1] * pad), dtype=dtype)
    wide[:, ::pad] = x
    return wide[:, ::pad]


def _rows_apart(x):
    tall = np.zeros((2 * x.shape[0], x.shape[1]))
    tall[::2] = x
    return tall[::2]


LAYOUTS = {
    "fortran order": np.asfortranarray,
    "rows of a transpose": lambda x: np.ascontiguousarray(np.hstack([x, x]).T).T[:, :x.shape[1]][: x.shape[0]],
    "every other column": lambda x: _widened(x, 2),
    "every third column, float32": lambda x: _widened(x, 3, np.float32),
    "every other row": _rows_apart,
    "a column block": lambda x: np.hstack([x[:, :1], x, x[:, :1]])[:, 1:-1],
    "reversed columns": lambda x: np.ascontiguousarray(x[:, ::-1])[:, ::-1],
    "reversed rows": lambda x: np.ascontiguousarray(x[::-1])[::-1],
    "reversed both ways": lambda x: np.ascontiguousarray(x[::-1, ::-1])[::-1, ::-1],
    "one column broadcast": lambda x: np.broadcast_to(x[:, :1], x.shape),
    "one row broadcast": lambda x: np.broadcast_to(x[:1], x.shape),
}


def _points_read(p):
    """The values C reads through a grove_points view, as C reads them."""
    dtype = np.float32 if p.dtype == S.GROVE_FLOAT32 else np.float64
    size = np.dtype(dtype).itemsize
    if p.n == 0 or p.d == 0:
        return np.empty((p.n, p.d), dtype)
    memory = (C.c_char * ((p.n - 1) * p.stride + p.d * size)).from_address(p.data)
    return np.ndarray((p.n, p.d), dtype, buffer=memory, strides=(p.stride, size)).copy()


@pytest.fixture
def c_reads(monkeypatch):
    """Records, for each C call taking grove_points, the values it reads."""
    reads = []
    for name, (_, argtypes) in _clib.PROTOTYPES.items():
        if _clib.has(name) and any(t in (S.Points, C.POINTER(S.Points)) for t in argtypes):
            real = getattr(_clib.lib, name)

            def spy(*args, real=real, name=name):
                reads.append((name, [_points_read(a) for a in args if isinstance(a, S.Points)]))
                return real(*args)

            monkeypatch.setattr(_clib.lib, name, spy)
    return reads


def _same(a, b, where="result"):
    """a and b hold equal values (arrays by dtype, shape and value, NaN
    equal to NaN), else an AssertionError naming the place."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        assert isinstance(a, np.ndarray) and isinstance(b, np.ndarray), where
        assert a.dtype == b.dtype and a.shape == b.shape, where
        assert np.array_equal(a, b, equal_nan=a.dtype.kind == "f"), where
    elif isinstance(a, (tuple, list)):
        assert type(a) is type(b) and len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b)):
            _same(x, y, f"{where}[{i}]")
    elif isinstance(a, dict):
        assert a.keys() == b.keys(), where
        for key in a:
            _same(a[key], b[key], f"{where}[{key!r}]")
    elif isinstance(a, float):
        assert a == b or (math.isnan(a) and math.isnan(b)), where
    elif hasattr(a, "indptr"):  # a SciPy sparse matrix
        _same((a.data, a.indices, a.indptr, a.shape), (b.data, b.indices, b.indptr, b.shape), where)
    elif hasattr(a, "__dict__"):  # an estimator, a snapshot, a tree: their public attributes
        assert type(a) is type(b), where
        _same({k: v for k, v in vars(a).items() if not k.startswith("_")},
              {k: v for k, v in vars(b).items() if not k.startswith("_")}, where)
    else:
        assert a == b, where


def _outcome(call, p):
    try:
        return call(p)
    except Exception as e:  # a refusal must not depend on the layout either
        return f"{type(e).__name__}: {e}"


def test_every_public_call_is_known():
    unknown = public_calls() - CALLS.keys() - NO_RESULT.keys()
    assert not unknown, f"add these public calls to tests/python/public_api.py: {sorted(unknown)}"
    assert POINT_CALLS  # the walk found the calls this file checks


def test_every_call_taking_points_is_exercised_with_them():
    # A NO_RESULT entry is not called, so it must not take points.
    assert not [name for name in POINT_CALLS if name in NO_RESULT]


@pytest.mark.parametrize("rows", [1, 9])
@pytest.mark.parametrize("name", POINT_CALLS)
def test_every_layout_reads_as_its_contiguous_copy(name, rows, c_reads):
    x = np.round(BASE[7:7 + rows] * 64) / 64  # exact in float32 too
    for layout, make in LAYOUTS.items():
        view = make(x)
        copy = np.array(view, order="C")
        c_reads.clear()
        got = _outcome(CALLS[name], view)
        read_from_view = list(c_reads)
        c_reads.clear()
        want = _outcome(CALLS[name], copy)
        assert [n for n, _ in read_from_view] == [n for n, _ in c_reads], layout
        for (c_name, seen), (_, expected) in zip(read_from_view, c_reads):
            _same(seen, expected, f"{layout}: what {c_name} read")
        _same(got, want, f"{layout}: the result")
