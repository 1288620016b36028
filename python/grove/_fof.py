"""Friends-of-friends groups (halo finding): ``fof`` and ``mean_separation``
over ``grove_fof`` (see include/grove.h and docs/fof.md)."""
from __future__ import annotations

import ctypes as C
from typing import Any, NamedTuple

import numpy as np

from . import _clib
from ._arrays import address, count, fixed, from_c, options, points_array, points_view
from ._cstructs import FofCatalogue, FofParams
from ._join import index_params


class Catalogue(NamedTuple):
    """One row per group (group g is row g): members and first (lowest
    member index) int64; mass; center (groups, d), the centre of mass,
    wrapped into a periodic box; velocity (groups, d) and dispersion (the
    d-dimensional rms velocity about the mean), None without velocities;
    radius, the farthest member from the centre."""

    members: np.ndarray
    first: np.ndarray
    mass: np.ndarray
    center: np.ndarray
    velocity: np.ndarray | None
    dispersion: np.ndarray | None
    radius: np.ndarray


def mean_separation(points: Any, *, boxsize: Any = None) -> float:
    """(V / n)^(1/d): V the box volume (boxsize), else that of the points'
    bounding box; the unit of the linking length b."""
    x = points_array(points)
    params, _keep = index_params(boxsize=boxsize)
    out = C.c_double()
    _clib.call(_clib.lib.grove_fof_mean_separation, points_view(x), params.boxsize, params.boxsize_count,
               C.byref(out))
    return out.value


def _take(cat: FofCatalogue) -> Catalogue:
    g, d = cat.groups, cat.d
    vel = bool(cat.velocity)
    return Catalogue(from_c(cat.members, (g,), np.int64), from_c(cat.first, (g,), np.int64), from_c(cat.mass, (g,)),
                     from_c(cat.center, (g, d)), from_c(cat.velocity, (g, d)) if vel else None,
                     from_c(cat.dispersion, (g,)) if vel else None, from_c(cat.radius, (g,)))


def fof(points: Any, linking_length: float | None = None, *, b: float | None = None, boxsize: Any = None,
        min_members: int = 20, mass: Any = None, velocity: Any = None, catalogue: bool = False,
        leaf_size: int = 0, threads: int | None = None) -> np.ndarray | tuple[np.ndarray, Catalogue]:
    """Friends-of-friends groups of (n, d) points: particles within
    linking_length (inclusive) of each other are friends; a group is a
    chain of friends. Give linking_length, or b in units of
    ``mean_separation(points, boxsize=boxsize)``.

    boxsize: a periodic box [0, L) per dimension (one length, or d; 0
    leaves a dimension unbounded), minimum-image distances. mass (n,) > 0
    and velocity (n, d) feed the catalogue only.

    Returns the group of each particle, (n,) int64: 0, 1, ... by decreasing
    size (equal sizes by lowest member index), -1 in groups of fewer than
    min_members; with catalogue=True also a ``Catalogue``."""
    if (linking_length is None) == (b is None):
        raise TypeError("fof: give one of linking_length and b")
    x = points_array(points)
    n, d = x.shape
    params = _clib.defaults(FofParams)
    params.min_members = count(min_members, "min_members", 1)
    params.index, _keep = index_params(leaf_size=leaf_size, boxsize=boxsize)
    if linking_length is not None:
        link = float(linking_length)
    elif b is not None:
        link = float(b) * mean_separation(x, boxsize=boxsize)
    params.linking_length = link
    m = None if mass is None else fixed(mass, np.float64, (n,), "mass")
    v = None if velocity is None else fixed(velocity, np.float64, (n, d), "velocity")
    group = np.empty(n, dtype=np.int64)
    groups = C.c_size_t()
    cat = FofCatalogue()
    _clib.call(_clib.lib.grove_fof, points_view(x), address(m), address(v), C.byref(params), address(group),
               C.byref(groups), C.byref(cat) if catalogue else None, options(threads))
    if not catalogue:
        return group
    try:
        return group, _take(cat)
    finally:
        _clib.lib.grove_fof_catalogue_free(C.byref(cat))
