"""Seeded synthetic point clouds: ``grove.generate`` (the CLI's ``grove gen``)."""
from __future__ import annotations

import ctypes as C

import numpy as np

from . import _clib
from ._arrays import address, count, options
from . import _cstructs as S
from ._errors import InvalidArgumentError

_KINDS = {"uniform": S.GROVE_GEN_UNIFORM, "normal": S.GROVE_GEN_NORMAL, "exponential": S.GROVE_GEN_EXPONENTIAL,
          "blobs": S.GROVE_GEN_BLOBS}


def generate(kind: str, n: int, d: int, *, seed: int = 0, rate: float | None = None, centers: int | None = None,
             threads: int | None = None) -> np.ndarray:
    """(n, d) float64 points: "uniform" in [0, 1)^d, "normal", "exponential"
    (rate, default 1) or "blobs" (`centers` Gaussian blobs of sd 1 around
    centres uniform in [-10, 10)^d, default 3). The same arguments give the
    same values on every platform and for any thread count."""
    if kind not in _KINDS:
        raise InvalidArgumentError(f"kind: one of {', '.join(_KINDS)}, got {kind!r}")
    params = _clib.defaults(S.GenParams)
    params.kind, params.n, params.d, params.seed = _KINDS[kind], count(n, "n"), count(d, "d", 1), count(seed, "seed")
    if rate is not None:
        params.rate = float(rate)
    if centers is not None:
        params.centers = count(centers, "centers", 1)
    out = np.empty((n, d))
    opts = options(threads)
    _clib.call(_clib.lib.grove_gen, C.byref(params), address(out), opts)
    return out
