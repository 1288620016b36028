"""Owning a C handle (grove_index *, grove_nbody *) from Python, safely
across threads."""
from __future__ import annotations

import ctypes as C
import threading
from typing import Any

from . import _clib
from ._errors import InvalidArgumentError


class Handle:
    """Holds an opaque C pointer and frees it with the C function named by
    ``_free``.

    Every use of the pointer (a C call, or a ``join_batches`` iterator from
    its first batch to its end) holds it through ``_use()``. ``close()``
    (also at the end of a ``with`` block, or when the object is collected)
    refuses new uses at once -- they raise InvalidArgumentError -- and
    frees the C object when no use is left: at once when none is running,
    else when the last running call (on another thread) returns or the
    last iterator ends. It never waits and never frees memory a call is
    using. Handles whose C object is one thread at a time (``_serial``:
    grove_nbody) also take a lock per use, so calls from several threads
    run one after another; the others (grove_index) run concurrently.

    Copies never make a second owner of the C object (each would free
    it): an immutable handle (``_serial`` False) is its own copy, shallow
    or deep, as a tuple is, so a copy outlives the original's name but
    not its close(); copying a mutable one (grove_nbody) is refused, and
    pickling any handle is refused, with ``_rebuild``'s advice."""

    _free: str = ""
    _serial: bool = False
    _rebuild: str = ""  # how to make it again, for the refusal to pickle

    def __init__(self) -> None:
        self._handle = C.c_void_p()
        self._guard = threading.Lock()  # _uses and _closed
        self._uses = 0
        self._closed = False
        self._one_at_a_time = threading.RLock() if self._serial else None

    def close(self) -> None:
        """Free the C object now, or when the uses still running end
        (idempotent)."""
        with self._guard:
            self._closed = True
            free_now = self._uses == 0
        if free_now:
            self._release()

    def _release(self) -> None:
        handle, self._handle = self._handle, C.c_void_p()
        if handle:
            getattr(_clib.lib, self._free)(handle)

    def __enter__(self):
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        if getattr(self, "_handle", None):
            self.close()

    def __copy__(self) -> Handle:
        if self._serial:
            raise TypeError(f"{type(self).__name__} cannot be copied: it owns a C object that changes; "
                            f"{self._rebuild}")
        return self

    def __deepcopy__(self, memo: dict) -> Handle:
        return self.__copy__()

    def __reduce__(self) -> Any:
        raise TypeError(f"{type(self).__name__} cannot be pickled: it owns a C object; {self._rebuild}")

    def _use(self) -> _Use:
        """``with self._use() as h:`` -- the live pointer for the block;
        refuses use after close()."""
        return _Use(self)

    def _hold(self) -> C.c_void_p:
        with self._guard:
            if self._closed or not self._handle:
                raise InvalidArgumentError(f"{type(self).__name__}: used after close()")
            self._uses += 1
        return self._handle

    def _drop(self) -> None:
        with self._guard:
            self._uses -= 1
            free_now = self._closed and self._uses == 0
        if free_now:
            self._release()


class _Use:
    """One use of a Handle's pointer (see Handle)."""

    __slots__ = ("owner", "held")

    def __init__(self, owner: Handle):
        self.owner = owner
        self.held: Any = None  # the owner's lock while this use holds it

    def __enter__(self) -> C.c_void_p:
        handle = self.owner._hold()
        lock = self.owner._one_at_a_time
        if lock is not None:
            try:
                lock.acquire()
            except BaseException:  # interrupted while waiting for another thread's call
                self.owner._drop()
                raise
            self.held = lock
        return handle

    def __exit__(self, *exc: Any) -> None:
        if self.held is not None:
            self.held.release()
        self.owner._drop()
