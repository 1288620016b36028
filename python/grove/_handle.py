"""Owning a C handle (grove_index *, grove_nbody *) from Python."""
from __future__ import annotations

import ctypes as C

from . import _clib
from ._errors import InvalidArgumentError


class Handle:
    """Holds an opaque C pointer and frees it with the C function named by
    ``_free`` on ``close()``, at the end of a ``with`` block, or when
    collected."""

    _free: str = ""

    def __init__(self) -> None:
        self._handle = C.c_void_p()

    def close(self) -> None:
        """Free the C object (idempotent)."""
        if self._handle:
            getattr(_clib.lib, self._free)(self._handle)
            self._handle = C.c_void_p()

    def __enter__(self):
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        if getattr(self, "_handle", None):
            self.close()

    def _h(self) -> C.c_void_p:
        """The live handle; refuses use after close()."""
        if not self._handle:
            raise InvalidArgumentError(f"{type(self).__name__}: used after close()")
        return self._handle
