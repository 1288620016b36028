#!/usr/bin/env python3
"""Ball tree build: grove (through ctypes on build/libgrove.so) against
balltree-erwin and scikit-learn's BallTree(leaf_size=2), on the same points.

    make && python3 bench/balltree.py [--quick] [--max-log2 22] [--rounds 2] [--fresh-memory]
                                      [--huge-pages] [--same-points] [--lib build/libgrove.so]

Times are the minimum wall time over repeats, in milliseconds, of one call
that returns the finished tree (grove: layout + output allocation + build),
and the minimum over --rounds passes over each table (load from elsewhere
on a shared machine tends to come in bursts that spoil one pass of a row).
Each repeat builds a fresh set of points (point_sets: the same sets for
every library), as a model does with every batch it sees.
Ratios are peer / grove (> 1: grove is faster). "leaves" compares grove's
leaves with balltree-erwin's as sets, leaf by leaf, on tie-free data.
"""
import argparse
import ctypes as C
import os
import platform
import sys

import numpy as np

from machine import best_seconds, cpu_model, torch_standin

HERE = os.path.dirname(os.path.abspath(__file__))


# ---- grove through ctypes ---------------------------------------------------

class Points(C.Structure):
    _fields_ = [("data", C.c_void_p), ("n", C.c_size_t), ("d", C.c_size_t), ("dtype", C.c_int),
                ("stride", C.c_size_t)]


class Params(C.Structure):
    _fields_ = [("batch", C.c_void_p), ("levels", C.c_int), ("rotation", C.c_void_p), ("workspace", C.c_void_p)]


class Options(C.Structure):
    _fields_ = [("threads", C.c_int), ("progress", C.c_void_p), ("progress_user", C.c_void_p),
                ("memory_budget", C.c_size_t), ("cancel", C.c_void_p), ("mpi", C.c_void_p)]


GROVE_FLOAT64 = 2
GROVE_BALLTREE_FULL = -1


class Grove:
    def __init__(self, path):
        self.lib = C.CDLL(path)
        L = self.lib
        L.grove_version.restype = C.c_char_p
        L.grove_build_info.restype = C.c_char_p
        L.grove_last_error.restype = C.c_char_p
        L.grove_balltree_layout.argtypes = [C.c_size_t, C.POINTER(Params), C.POINTER(C.c_size_t),
                                            C.POINTER(C.c_size_t)]
        L.grove_balltree_build.argtypes = [Points, C.POINTER(Params), C.c_void_p, C.c_void_p, C.POINTER(Options)]
        L.grove_workspace_create.restype = C.c_void_p
        # One workspace for every call, as grove.balltree keeps one per thread:
        # repeated builds reuse their working memory instead of faulting in
        # fresh pages (--fresh-memory turns it off).
        self.workspace = None

    def check(self, status):
        if status != 0:
            raise RuntimeError("grove: " + self.lib.grove_last_error().decode())

    def build(self, x, batch, threads, levels=GROVE_BALLTREE_FULL):
        """(indices, mask) for x (n, d) float64 C-contiguous, batch int64 or None;
        a full tree, or `levels` partition levels."""
        n, d = x.shape
        params = Params(batch.ctypes.data if batch is not None else None, levels, None, self.workspace)
        slots, nb = C.c_size_t(), C.c_size_t()
        self.check(self.lib.grove_balltree_layout(n, C.byref(params), C.byref(slots), C.byref(nb)))
        idx = np.empty(slots.value, dtype=np.int64)
        mask = np.empty(slots.value, dtype=np.uint8)
        pts = Points(x.ctypes.data, n, d, GROVE_FLOAT64, 0)
        opts = Options(threads, None, None, 0, None)
        self.check(self.lib.grove_balltree_build(pts, C.byref(params), idx.ctypes.data, mask.ctypes.data,
                                                 C.byref(opts)))
        return idx, mask.view(bool)


# ---- timing and tables ------------------------------------------------------

def best_ms(fn, budget_s, min_repeats=3):
    return best_seconds(fn, budget_s, min_repeats) * 1e3


def point_sets(rng, n, d, same=False):
    """Distinct draws of the same distribution for one cell: every timed
    call builds the next, for every library alike. A tree built over the
    same points again and again lets the branch predictors learn its
    coin flips, which fresh points (as a model sees them) never allow.
    Eight sets were enough for that to vanish at 16384 points; a build of
    2^18 points is too long to learn. With `same` (--same-points), one
    set, built again and again."""
    return [rng.random((n, d)) for _ in range(1 if same else 8 if n <= 1 << 16 else 2)]


def rotating(fn, xs):
    """fn(x) on the next point set of xs at every call."""
    at = [0]

    def call():
        x = xs[at[0] % len(xs)]
        at[0] += 1
        return fn(x)
    return call


def leaves(idx, mask):
    pairs = idx.reshape(-1, 2)
    real = mask.reshape(-1, 2)
    return [frozenset(p[r].tolist()) for p, r in zip(pairs, real)]


class Bench:
    def __init__(self, grove, erwin, threadpool_limits, budget_s):
        self.grove, self.erwin, self.limits, self.budget = grove, erwin, threadpool_limits, budget_s

    def erwin_build(self, x, batch):
        return self.erwin.build_balltree_with_idx(x, batch)

    def sklearn_build(self, x, batch, starts):
        from sklearn.neighbors import BallTree
        for a, b in zip(starts[:-1], starts[1:]):
            BallTree(x[a:b], leaf_size=2)

    def rows(self, cells, rounds):
        """Table rows for cells (key, threads, point sets, batches, with_sklearn), each
        time the minimum over `rounds` passes over all the cells: a pass
        takes seconds to minutes, so a burst of load from elsewhere on a
        shared machine spoils one pass of a cell, not all of them."""
        best = [None] * len(cells)
        for _ in range(rounds):
            for i, (key, threads, xs, batches, with_sklearn) in enumerate(cells):
                g, e, s, same = self.row(xs, batches, threads, with_sklearn)
                if best[i] is None:
                    best[i] = [g, e, s, same]
                else:
                    b = best[i]
                    b[0], b[1] = min(b[0], g), min(b[1], e)
                    b[2] = None if s is None else min(b[2], s)
                    b[3] = b[3] and same
        return [fmt_row(key, threads, *b) for (key, threads, *_), b in zip(cells, best)]

    def row(self, xs, batch_count, threads, with_sklearn=True):
        n = xs[0].shape[0]
        batch = np.repeat(np.arange(batch_count, dtype=np.int64), n // batch_count)
        batch = np.concatenate([batch, np.full(n - batch.size, batch_count - 1, dtype=np.int64)])
        starts = np.searchsorted(batch, np.arange(batch_count + 1))
        # One call first, untimed: the workspace grows to this size once, as
        # at a model's first batch (that call also faults in its fresh
        # pages). A call that takes longer than the budget is timed only
        # once (best_seconds). No library's result is alive while calls are
        # timed (those compared below are built after all timing): a large
        # result kept alive makes the next call's output land on other pages
        # than the ones just freed, and the kernel zeroing those fresh pages
        # under the output stores is then timed as the build.
        self.grove.build(xs[0], batch, threads)
        g = best_ms(rotating(lambda x: self.grove.build(x, batch, threads), xs), self.budget)
        with self.limits(limits=threads, user_api="openmp"):
            e = best_ms(rotating(lambda x: self.erwin_build(x, batch), xs), self.budget)
        s = (best_ms(rotating(lambda x: self.sklearn_build(x, batch, starts), xs), self.budget, 1)
             if with_sklearn else None)
        gi, gm = self.grove.build(xs[0], batch, threads)
        with self.limits(limits=threads, user_api="openmp"):
            ei, em = self.erwin_build(xs[0], batch)
        same = gi.size == ei.size and leaves(gi, gm) == leaves(ei, np.asarray(em, dtype=bool))
        return g, e, s, same


def table(title, header, rows):
    print()
    print("=" * 96)
    print(title)
    print("=" * 96)
    print(("{:>10}" * len(header)).format(*header))
    print("-" * 96)
    for r in rows:
        print(("{:>10}" * len(r)).format(*r))


def fmt_row(key, threads, g, e, s, same):
    return [key, threads, f"{g:.3f}", f"{e:.3f}", f"{e / g:.1f}x", "-" if s is None else f"{s:.2f}",
            "-" if s is None else f"{s / g:.0f}x", "✓" if same else "✗"]


HEADER = ["threads", "grove", "erwin", "erwin/g", "sklearn", "sklrn/g", "leaves"]


def machine(grove, standin, rounds, same_points):
    model = cpu_model()
    import sklearn
    try:
        from importlib.metadata import version
        erwin_version = version("balltree-erwin")
    except Exception:
        erwin_version = "unknown"
    print(f"machine: {model}, {os.cpu_count()} cores, {platform.system()} {platform.release()}")
    print(f"python {platform.python_version()}, numpy {np.__version__}, scikit-learn {sklearn.__version__}, "
          f"balltree-erwin {erwin_version}" + (" (with a torch stand-in: torch is not installed)" if standin else ""))
    info = grove.lib.grove_build_info().decode().strip().splitlines()
    print(f"grove {grove.lib.grove_version().decode()}: " + "; ".join(info[:2]))
    huge = os.environ.get("GROVE_HUGE_PAGES") == "1"
    print("grove working memory: " + ("one workspace reused by every call (as grove.balltree does)"
                                      if grove.workspace else "allocated afresh by every call (--fresh-memory)")
          + ", " + ("transparent huge pages (GROVE_HUGE_PAGES=1)" if huge else "4 KiB pages"))
    print(f"times: min wall ms over repeats in each of {rounds} passes over a table; ratios peer/grove; "
          "sklearn builds one tree per batch, single-threaded")
    print("points: uniform in the unit cube; " +
          ("every repeat builds the same points (--same-points)" if same_points else
           "each repeat builds the next of 8 sets of points drawn alike (2 above 2^16 points), "
           "the same sets for every library"))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="small sizes, short repeats (for iterating)")
    ap.add_argument("--max-log2", type=int, default=22, help="largest scaling size 2^K (default 22)")
    ap.add_argument("--lib", default=os.path.join(HERE, "..", "build", "libgrove.so"))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--rounds", type=int, default=2,
                    help="passes over each table; every time is the minimum over them (default 2)")
    ap.add_argument("--fresh-memory", action="store_true",
                    help="no workspace: grove allocates its working memory on every call")
    ap.add_argument("--same-points", action="store_true",
                    help="every repeat builds the same points (the branch predictors learn them; "
                         "how this bench measured before)")
    ap.add_argument("--huge-pages", action="store_true",
                    help="GROVE_HUGE_PAGES=1: grove's working memory in transparent huge pages (Linux, opt-in)")
    args = ap.parse_args()
    if args.huge_pages:
        os.environ["GROVE_HUGE_PAGES"] = "1"  # read by the library at its first large allocation

    standin = torch_standin()
    # This script is itself named balltree.py: keep its folder out of the way.
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != HERE]
    import balltree as erwin
    from threadpoolctl import threadpool_limits

    grove = Grove(os.path.abspath(args.lib))
    if not args.fresh_memory:
        grove.workspace = grove.lib.grove_workspace_create()
    machine(grove, standin, args.rounds, args.same_points)
    bench = Bench(grove, erwin, threadpool_limits, 0.1 if args.quick else 0.5)
    rng = np.random.default_rng(args.seed)
    thread_counts = [1, 2]

    xs = point_sets(rng, 16384, 3, args.same_points)
    cells = [(batches, t, xs, batches, True) for batches in [1, 8, 64] for t in thread_counts]
    table("batches (n = 16384, d = 3)", ["batches"] + HEADER, bench.rows(cells, args.rounds))

    cells = []
    for d in [2, 3, 4]:
        xs = point_sets(rng, 16384, d, args.same_points)
        cells += [(d, t, xs, 1, True) for t in thread_counts]
    table("dimensions (n = 16384, one batch)", ["d"] + HEADER, bench.rows(cells, args.rounds))

    cells = []
    top = min(args.max_log2, 16) if args.quick else args.max_log2
    for k in range(10, top + 1, 2):
        xs = point_sets(rng, 1 << k, 3, args.same_points)
        cells += [(f"2^{k}", t, xs, 1, k <= 20) for t in thread_counts]
    table("scaling (d = 3, one batch; sklearn up to 2^20)", ["n"] + HEADER, bench.rows(cells, args.rounds))


if __name__ == "__main__":
    main()
