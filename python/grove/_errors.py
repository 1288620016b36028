"""Python exceptions for grove's status codes.

Every failing C call raises the subclass of :class:`GroveError` for its
``grove_status``; the message is ``grove_last_error()``'s sentence, which
names the argument, row and column (or file and line) that was wrong.
Arguments refused by the binding itself, before any C call, raise
:class:`InvalidArgumentError` too, so one ``except`` catches both.
"""
from __future__ import annotations

from . import _cstructs as S


class GroveError(Exception):
    """A grove call failed. ``status`` is the C ``grove_status`` value and
    ``status_name`` its short description ("invalid argument")."""

    status: int = -1
    status_name: str = "error"


class InvalidArgumentError(GroveError, ValueError):
    status, status_name = S.GROVE_INVALID_ARGUMENT, "invalid argument"


class OutOfMemoryError(GroveError, MemoryError):
    status, status_name = S.GROVE_OUT_OF_MEMORY, "out of memory"


class InputOutputError(GroveError, OSError):
    status, status_name = S.GROVE_IO_ERROR, "input/output error"


class ParseError(GroveError, ValueError):
    status, status_name = S.GROVE_PARSE_ERROR, "malformed input data"


class UnsupportedError(GroveError, NotImplementedError):
    status, status_name = S.GROVE_UNSUPPORTED, "unsupported format or feature"


class UnsupportedMetricError(UnsupportedError, ValueError):
    """A metric (or precomputed distances) grove does not compute: also a
    ValueError, as scikit-learn and hdbscan refuse metrics they cannot
    use."""


class TooLargeError(GroveError, ValueError):
    status, status_name = S.GROVE_TOO_LARGE, "size too large"


class OverBudgetError(GroveError, MemoryError):
    status, status_name = S.GROVE_OVER_BUDGET, "result does not fit the memory budget"


class CancelledError(GroveError, RuntimeError):
    status, status_name = S.GROVE_CANCELLED, "cancelled"


class InternalError(GroveError, RuntimeError):
    status, status_name = S.GROVE_INTERNAL, "internal error"


_BY_STATUS = {cls.status: cls for cls in GroveError.__subclasses__()}


def error_for(status: int, message: str) -> GroveError:
    """The exception for a nonzero ``grove_status`` with grove's message."""
    cls = _BY_STATUS.get(status, GroveError)
    return cls(message or cls.status_name)
