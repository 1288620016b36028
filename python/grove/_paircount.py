"""Pair counts and two-point correlation functions: ``pair_counts`` (one
set of pairs over ``grove_paircount``) and ``paircount`` (DD, DR and RR,
the Landy-Szalay estimator and wp(rp)); see include/grove.h and
docs/paircount.md for the conventions, which are Corrfunc's."""
from __future__ import annotations

import ctypes as C
from typing import Any, NamedTuple

import numpy as np

from . import _clib
from ._arrays import address, count, fixed, options, points_array, points_view
from ._cstructs import GROVE_INVALID_ARGUMENT, PaircountParams, PaircountTotals
from ._errors import InvalidArgumentError
from ._join import index_params


class PairCounts(NamedTuple):
    """The result of ``paircount``. Counts are int64 per bin, shape (nbins,)
    in r, (nrp, npi) in (rp, pi) (npi = floor(pimax)); DD counts ordered
    pairs (each pair twice) plus each point with itself at r = 0 when
    edges[0] is 0, as Corrfunc's DD. The *_weighted sums of weight products
    exist with weights. xi is Landy-Szalay with randoms, DD / RR - 1 against
    a uniform set in a periodic box without them, None otherwise; wp (with
    pimax) the projected correlation function per rp bin."""

    edges: np.ndarray
    pimax: float
    dd: np.ndarray
    dd_weighted: np.ndarray | None
    dr: np.ndarray | None
    dr_weighted: np.ndarray | None
    rr: np.ndarray | None
    rr_weighted: np.ndarray | None
    xi: np.ndarray | None
    wp: np.ndarray | None


def _params(edges: np.ndarray, pimax: float, boxsize: Any, leaf_size: int) -> tuple[PaircountParams, list[Any]]:
    params = _clib.defaults(PaircountParams)
    params.edges = edges.ctypes.data_as(C.POINTER(C.c_double))
    params.nedges = edges.size
    params.pimax = float(pimax)
    params.index, box = index_params(leaf_size=leaf_size, boxsize=boxsize)
    return params, [edges, box]


def _edges(bins: Any) -> np.ndarray:
    edges = fixed(bins, np.float64, (None,), "bins")
    if edges.size < 2:
        raise InvalidArgumentError(f"bins: expected at least 2 ascending edges, got {edges.size}")
    return edges


def _weights(w: Any, n: int, name: str) -> np.ndarray | None:
    return None if w is None else fixed(w, np.float64, (n,), name)


def pair_counts(data1: Any, data2: Any = None, *, bins: Any, pimax: float = 0, boxsize: Any = None,
                weights1: Any = None, weights2: Any = None, weighted: bool = False, leaf_size: int = 0,
                threads: int | None = None) -> tuple[np.ndarray, np.ndarray | None]:
    """The pairs of (n, d) points data1 (data2 None: an autocorrelation,
    Corrfunc's DD with autocorr=1: ordered pairs, each point with itself at
    r = 0 when bins[0] is 0) or between data1 and data2, in the bins of
    separation given by ascending edges (edges[i] <= r < edges[i + 1]);
    with pimax >= 1 in (rp, pi) bins, pi along the last dimension in
    floor(pimax) bins. boxsize: a periodic box (one length or d),
    minimum-image separations.

    Returns (npairs, sums): npairs int64, (nbins,) or (nrp, npi) with
    pimax; sums the bins' sums of weight products (weights1 for data1,
    weights2 for data2, 1 where not given) when weights are given or
    weighted=True, else None."""
    edges = _edges(bins)
    x1 = points_array(data1, "data1")
    x2 = None if data2 is None else points_array(data2, "data2")
    w1 = _weights(weights1, x1.shape[0], "weights1")
    w2 = _weights(weights2, x2.shape[0], "weights2") if x2 is not None else None
    if x2 is None and weights2 is not None:
        raise InvalidArgumentError("weights2: given without data2 (an autocorrelation takes weights1)")
    params, keep = _params(edges, pimax, boxsize, count(leaf_size, "leaf_size"))
    params.weights1 = None if w1 is None else w1.ctypes.data_as(C.POINTER(C.c_double))
    params.weights2 = None if w2 is None else w2.ctypes.data_as(C.POINTER(C.c_double))
    nbins = _clib.lib.grove_paircount_bins(C.byref(params))
    if nbins == 0:
        _clib.check(GROVE_INVALID_ARGUMENT)
    npairs = np.zeros(nbins, dtype=np.int64)
    want = weighted or w1 is not None or w2 is not None
    sums = np.zeros(nbins) if want else None
    view2 = points_view(x2) if x2 is not None else None
    _clib.call(_clib.lib.grove_paircount, points_view(x1), C.byref(view2) if view2 is not None else None,
               C.byref(params), address(npairs), address(sums), options(threads))
    del keep
    shape = (edges.size - 1, int(pimax)) if pimax else (edges.size - 1,)
    return npairs.reshape(shape), None if sums is None else sums.reshape(shape)


def _totals(n: int, w: np.ndarray | None) -> PaircountTotals:
    return _clib.lib.grove_paircount_totals_of(address(w), n)


def paircount(data: Any, bins: Any, *, randoms: Any = None, boxsize: Any = None, weights: Any = None,
              random_weights: Any = None, pimax: float = 0, leaf_size: int = 0,
              threads: int | None = None) -> PairCounts:
    """Two-point statistics of (n, d) points: DD, and with randoms DR and
    RR, in bins of r (edges ``bins``) or with pimax >= 1 of (rp, pi); the
    correlation function xi (Landy-Szalay with randoms; in a periodic box
    without randoms against a uniform set, as Corrfunc's theory.xi) and
    with pimax wp(rp) (Corrfunc's convert_rp_pi_counts_to_wp with randoms,
    its theory.wp in a box without). Weights (n,) for the data and
    random_weights for the randoms weigh each pair by their product."""
    edges = _edges(bins)
    x = points_array(data, "data")
    r = None if randoms is None else points_array(randoms, "randoms")
    w = _weights(weights, x.shape[0], "weights")
    rw = None if r is None else _weights(random_weights, r.shape[0], "random_weights")
    if r is None and random_weights is not None:
        raise InvalidArgumentError("random_weights: given without randoms")
    weighted = w is not None or rw is not None
    common = dict(bins=edges, pimax=pimax, boxsize=boxsize, weighted=weighted, leaf_size=leaf_size,
                  threads=threads)
    dd, ddw = pair_counts(x, weights1=w, **common)
    dr = drw = rr = rrw = None
    if r is not None:
        dr, drw = pair_counts(x, r, weights1=w, weights2=rw, **common)
        rr, rrw = pair_counts(r, weights1=rw, **common)
    params, keep = _params(edges, pimax, boxsize, 0)
    d = x.shape[1]
    tot_d, tot_r = _totals(x.shape[0], w), _totals(0 if r is None else r.shape[0], rw)

    def sums(counts: np.ndarray | None, weighted_sums: np.ndarray | None) -> np.ndarray | None:
        if counts is None:
            return None
        return np.ascontiguousarray((weighted_sums if weighted_sums is not None else counts).reshape(-1),
                                    dtype=np.float64)

    dd_s, dr_s, rr_s = sums(dd, ddw), sums(dr, drw), sums(rr, rrw)
    xi = wp = None
    if r is not None or boxsize is not None:
        xi = np.empty(dd.size)
        _clib.call(_clib.lib.grove_paircount_xi, C.byref(params), d, tot_d, tot_r, address(dd_s), address(dr_s),
                   address(rr_s), address(xi))
        xi = xi.reshape(dd.shape)
        if pimax:
            wp = np.empty(edges.size - 1)
            _clib.call(_clib.lib.grove_paircount_wp, C.byref(params), d, tot_d, tot_r, address(dd_s),
                       address(dr_s), address(rr_s), address(wp))
    del keep
    return PairCounts(edges, float(pimax), dd, ddw, dr, drw, rr, rrw, xi, wp)
