"""DLPack tensors NumPy does not read: bfloat16 (PyTorch's, JAX's) is
converted to float32, exactly (a bfloat16 is the upper half of a
float32); any other dtype NumPy refuses is refused in one line naming it.

The tensor is read through its legacy ``"dltensor"`` capsule
(``obj.__dlpack__()``) without consuming it: the capsule keeps its name,
so its producer's destructor frees the tensor as usual once the copy is
made."""
from __future__ import annotations

import ctypes as C
import math
from typing import Any

import numpy as np

from ._errors import InvalidArgumentError

_KDL_CPU = 1
_KDL_BFLOAT = 4
_TYPE_CODES = {0: "int", 1: "uint", 2: "float", 3: "opaque", 4: "bfloat", 5: "complex", 6: "bool"}


class _Device(C.Structure):
    _fields_ = [("device_type", C.c_int32), ("device_id", C.c_int32)]


class _DataType(C.Structure):
    _fields_ = [("code", C.c_uint8), ("bits", C.c_uint8), ("lanes", C.c_uint16)]


class _Tensor(C.Structure):
    """dlpack.h's DLTensor, the first member of a DLManagedTensor."""

    _fields_ = [("data", C.c_void_p), ("device", _Device), ("ndim", C.c_int32), ("dtype", _DataType),
                ("shape", C.POINTER(C.c_int64)), ("strides", C.POINTER(C.c_int64)), ("byte_offset", C.c_uint64)]


_capsule_pointer = C.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype, _capsule_pointer.argtypes = C.c_void_p, [C.py_object, C.c_char_p]


def _dtype_name(t: _DataType) -> str:
    name = f"{_TYPE_CODES.get(t.code, f'type code {t.code} of ')}{t.bits}"
    return name if t.lanes == 1 else f"{name}x{t.lanes}"


def bfloat16_as_float32(obj: Any, name: str, refusal: Exception) -> np.ndarray:
    """A float32 copy of obj, a CPU DLPack tensor of bfloat16 that
    numpy.from_dlpack refused (``refusal``); any other tensor it refused
    raises InvalidArgumentError naming its dtype and device."""
    capsule = obj.__dlpack__()
    t = _Tensor.from_address(_capsule_pointer(capsule, b"dltensor"))
    if (t.dtype.code, t.dtype.bits, t.dtype.lanes) != (_KDL_BFLOAT, 16, 1) or t.device.device_type != _KDL_CPU:
        raise InvalidArgumentError(f"{name}: a DLPack tensor of dtype {_dtype_name(t.dtype)} on device type "
                                   f"{t.device.device_type}, which NumPy cannot read ({refusal}); grove reads real "
                                   f"numbers, bfloat16 included, on the CPU (device type 1)")
    shape = tuple(t.shape[i] for i in range(t.ndim))
    if math.prod(shape) == 0:
        return np.empty(shape, dtype=np.float32)
    if t.strides:
        steps = [t.strides[i] for i in range(t.ndim)]
    else:  # NULL strides: C-contiguous
        steps = [math.prod(shape[i + 1:]) for i in range(t.ndim)]
    # The bytes the elements span, from the lowest to the highest address.
    low = sum(2 * s * (n - 1) for s, n in zip(steps, shape) if s < 0)
    high = sum(2 * s * (n - 1) for s, n in zip(steps, shape) if s > 0) + 2
    memory = (C.c_char * (high - low)).from_address(t.data + t.byte_offset + low)
    halves = np.ndarray(shape, dtype=np.uint16, buffer=memory, offset=-low, strides=[2 * s for s in steps])
    out = (halves.astype(np.uint32) << 16).view(np.float32)
    del capsule  # after the copy: the producer may free the tensor now
    return out
