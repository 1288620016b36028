"""Turning user inputs into what the C API reads, without copying when the
layout already fits.

Accepted inputs: NumPy arrays, anything ``numpy.asarray`` takes (lists), and
objects with ``__dlpack__`` on the CPU, PyTorch tensors included (read
through DLPack: a view, no copy; ``requires_grad`` tensors are detached;
bfloat16 ones are converted to float32, see ``grove._dlpack``).

Points (``points_view``): float32 and float64 in native byte order are
passed as they are when each row is contiguous (a single row too: one row
of a transposed array is not) and rows are a positive, aligned stride
apart -- C-contiguous arrays, but also row slices such as ``x[::2]`` or
column blocks such as ``x[:, :3]`` (grove_points has a row stride).
Anything else (other dtypes, Fortran order, reversed or broadcast rows or
columns, byte-swapped data) is converted once to a C-contiguous float64 (or
float32 for float32 data) copy. Fixed-layout inputs (masses, batch ids,
rotations, N-body state) are converted to a C-contiguous array of the
dtype the C function reads, which is free when they already are one.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from . import _clib
from ._cstructs import GROVE_FLOAT32, GROVE_FLOAT64, Options, Points, device_code
from ._dlpack import bfloat16_as_float32
from ._errors import InvalidArgumentError

_DTYPES = {np.dtype(np.float32): GROVE_FLOAT32, np.dtype(np.float64): GROVE_FLOAT64}


def as_numpy(obj: Any, name: str) -> np.ndarray:
    """A NumPy array over obj's memory when obj is an array or a CPU DLPack
    tensor (no copy), else numpy.asarray(obj)."""
    if isinstance(obj, np.ndarray):
        return obj
    if hasattr(obj, "__dlpack__"):
        if getattr(obj, "requires_grad", False):
            obj = obj.detach()
        device = getattr(obj, "device", None)
        if device is not None and getattr(device, "type", "cpu") != "cpu":
            raise InvalidArgumentError(f"{name}: a tensor on {device}; grove computes on the CPU: pass .cpu()")
        try:
            return np.from_dlpack(obj)
        except (BufferError, RuntimeError) as e:  # a dtype NumPy does not read (RuntimeError before NumPy 1.25)
            return bfloat16_as_float32(obj, name, e)
    try:
        return np.asarray(obj)
    except (TypeError, ValueError) as e:
        raise InvalidArgumentError(f"{name}: not an array of numbers ({e})") from None


def _float_dtype(a: np.ndarray, name: str) -> np.dtype:
    """float32 stays float32, every other real dtype computes in float64."""
    if a.dtype.kind not in "biuf":
        raise InvalidArgumentError(f"{name}: dtype {a.dtype} is not a real number type")
    return np.dtype(np.float32) if a.dtype == np.float32 else np.dtype(np.float64)


def _passes_as_is(a: np.ndarray) -> bool:
    """Whether C can read a through a grove_points view: each row's values
    consecutive (whatever the number of rows: a one-row view of a
    transpose has them apart), rows a positive whole number of values
    apart (one row has no row stride: points_view gives it its width)."""
    n, d = a.shape
    if a.dtype not in _DTYPES or not a.flags.aligned or not a.dtype.isnative:
        return False
    row, col = a.strides
    consecutive = d <= 1 or col == a.itemsize
    apart = n <= 1 or (row >= d * a.itemsize and row % a.itemsize == 0)
    return consecutive and apart


def points_array(obj: Any, name: str = "points", *, one_d: bool = True) -> np.ndarray:
    """obj as an (n, d) array that points_view passes to C without a copy.
    A 1-D array of n values is n points in one dimension (an (n, 1) view),
    as the CLI reads an (n,) .npy file; one_d=False refuses it (the
    scikit-learn-style estimators, whose X must be 2-D)."""
    a = as_numpy(obj, name)
    if a.ndim == 1 and one_d:
        a = a.reshape(-1, 1)
    if a.ndim != 2:
        raise InvalidArgumentError(f"{name}: expected a 2-D (n, d) array, got shape {a.shape}"
                                   + (" (use x.reshape(-1, 1) for one dimension)" if a.ndim == 1 else ""))
    if _passes_as_is(a):
        return a
    return np.ascontiguousarray(a, dtype=_float_dtype(a, name))


def points_view(a: np.ndarray) -> Points:
    """The grove_points view of an array from points_array (it must stay
    alive while the view is used)."""
    n, d = a.shape
    stride = a.strides[0] if n > 1 else d * a.itemsize
    return Points(a.ctypes.data, n, d, _DTYPES[a.dtype], stride)


def fixed(obj: Any, dtype: type, shape: tuple[int | None, ...], name: str) -> np.ndarray:
    """obj as a C-contiguous array of dtype with the given shape (None =
    any length), converted once if it is not one already. Integer targets
    refuse non-integer input instead of truncating it."""
    a = as_numpy(obj, name)
    if a.ndim != len(shape) or any(s is not None and s != t for s, t in zip(shape, a.shape)):
        want = "(" + ", ".join("n" if s is None else str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"
        raise InvalidArgumentError(f"{name}: expected shape {want}, got {a.shape}")
    if np.dtype(dtype).kind == "i" and a.dtype.kind not in "biu":
        raise InvalidArgumentError(f"{name}: expected integers, got dtype {a.dtype}")
    if np.dtype(dtype).kind == "f":
        _float_dtype(a, name)
    return np.ascontiguousarray(a, dtype=dtype)


def from_c(ptr: Any, shape: tuple[int, ...], dtype: type = np.float64) -> np.ndarray:
    """A copy of `shape` values behind a C pointer (which may be NULL when
    there are none)."""
    return np.ctypeslib.as_array(ptr, shape).copy() if math.prod(shape) else np.empty(shape, dtype=dtype)


def address(a: np.ndarray | None) -> int | None:
    """The data address of an array for a c_void_p argument (None for None)."""
    return None if a is None else a.ctypes.data


def options(threads: int | None = None, memory_budget: int = 0, device: str = "cpu") -> Options:
    """A grove_options with threads (None or 0 = all cores), a memory
    budget in bytes (0 = unlimited) and the device ("cpu", "cuda",
    "opencl" or "auto"; docs/gpu.md)."""
    opts = _clib.defaults(Options)
    if threads is not None:
        opts.threads = count(threads, "threads (0 = all cores)", maximum=INT_MAX)
    opts.memory_budget = count(memory_budget, "memory_budget (bytes, 0 = unlimited)")
    opts.device = device_code(device)
    return opts


UINT64_MAX = 2**64 - 1  # size_t and uint64_t (seeds) arguments and fields
INT_MAX = 2**31 - 1  # int ones


def count(value: Any, name: str, minimum: int = 0, maximum: int = UINT64_MAX) -> int:
    """An integer argument in [minimum, maximum]: ctypes wraps C integer
    arguments and fields silently (a seed of 2**64 would be seed 0), so
    the range of the C type is checked here."""
    try:
        ok = not isinstance(value, bool) and int(value) == value and minimum <= value <= maximum
    except (TypeError, ValueError):
        ok = False
    if not ok:
        raise InvalidArgumentError(f"{name}: expected an integer in [{minimum}, {maximum}], got {value!r}")
    return int(value)
