"""Loading libgrove and declaring the C prototypes.

The library is ``$GROVE_LIB`` when that is set (the in-tree mode used by
``make check``: ``GROVE_LIB=build/libgrove.so``), else the ``libgrove.so``
shipped inside this package by ``pip install ./python``.

It is loaded as a ``ctypes.CDLL``, so every call releases the GIL for its
duration: other Python threads run while grove computes. Callbacks from C
(the join stream) take the GIL back for the Python code they run.

Long calls go through ``call``, which makes them interruptible: Python
runs signal handlers (Ctrl-C's KeyboardInterrupt) only on the main thread
and only between bytecodes, never during a C call, so on the main thread
``call`` hands the C call to a helper thread and waits in short timed
waits. When the wait is interrupted it raises the call's cancel flag
(``grove_options.cancel``), waits for the C call to return (the library
polls the flag often enough to return within a fraction of a second), and
re-raises the exception.
"""
from __future__ import annotations

import ctypes as C
import os
import queue
import threading
from pathlib import Path
from typing import Any, Callable, TypeVar

from . import _cstructs as S
from ._errors import UnsupportedError, error_for

_vp, _sz, _i, _i64, _u64, _d, _s = C.c_void_p, C.c_size_t, C.c_int, C.c_int64, C.c_uint64, C.c_double, C.c_char_p
_P = C.POINTER
# Arrays are passed as addresses: arguments of these types take ndarray.ctypes.data (or None).
_Ad, _Ai64, _Au8, _Asz = S.array_of(_d), S.array_of(_i64), S.array_of(C.c_uint8), S.array_of(_sz)

# name: (restype, argtypes); handles (grove_index *, ...) are c_void_p.
PROTOTYPES = {
    "grove_status_str": (_s, [_i]),
    "grove_last_error": (_s, []),
    "grove_version": (_s, []),
    "grove_build_info": (_s, []),
    "grove_cpu_info": (_i, [_s, _sz]),
    "grove_device_info": (_i, [_i, _s, _sz]),
    "grove_options_init": (None, [_P(S.Options)]),
    "grove_options_threads": (_i, [_P(S.Options)]),
    "grove_cores": (_i, []),
    "grove_workspace_create": (_vp, []),
    "grove_workspace_free": (None, [_vp]),
    "grove_workspace_bytes": (_sz, [_vp]),
    "grove_gen_params_init": (None, [_P(S.GenParams)]),
    "grove_gen": (_i, [_P(S.GenParams), _Ad, _P(S.Options)]),
    # ball tree
    "grove_balltree_params_init": (None, [_P(S.BalltreeParams)]),
    "grove_balltree_layout": (_i, [_sz, _P(S.BalltreeParams), _P(_sz), _P(_sz)]),
    "grove_balltree_batches": (_i, [_sz, _P(S.BalltreeParams), S.array_of(S.BalltreeBatch)]),
    "grove_balltree_build": (_i, [S.Points, _P(S.BalltreeParams), _Ai64, _Au8, _P(S.Options)]),
    "grove_balltree_ball_count": (_i, [_sz, _P(S.BalltreeParams), _i, _P(_sz)]),
    "grove_balltree_ball_stats": (_i, [S.Points, _P(S.BalltreeParams), _Ai64, _Au8, _i, _Ad, _Ad, _P(S.Options)]),
    "grove_balltree_check": (_i, [S.Points, _P(S.BalltreeParams), _Ai64, _Au8, _P(S.Options)]),
    "grove_rotation_random": (_i, [_sz, _u64, _Ad]),
    # EMST and HDBSCAN*
    "grove_emst_params_init": (None, [_P(S.EmstParams)]),
    "grove_emst": (_i, [S.Points, _P(S.EmstParams), _Ai64, _Ad, _P(S.Options)]),
    "grove_knn_params_init": (None, [_P(S.KnnParams)]),
    "grove_core_distances": (_i, [S.Points, _P(S.KnnParams), _Ad, _P(S.Options)]),
    "grove_hdbscan_params_init": (None, [_P(S.HdbscanParams)]),
    "grove_hdbscan": (_i, [S.Points, _P(S.HdbscanParams), _Ai64, _Ad, _Ad, _P(_sz), _P(S.Options)]),
    "grove_hdbscan_model_create": (_i, [S.Points, _P(S.HdbscanParams), _P(S.Options), _P(_vp)]),
    "grove_hdbscan_model_free": (None, [_vp]),
    "grove_hdbscan_model_n": (_sz, [_vp]),
    "grove_hdbscan_model_d": (_sz, [_vp]),
    "grove_hdbscan_model_clusters": (_sz, [_vp]),
    "grove_hdbscan_model_condensed_rows": (_sz, [_vp]),
    "grove_hdbscan_model_exemplar_count": (_sz, [_vp]),
    "grove_hdbscan_model_params": (_i, [_vp, _P(S.HdbscanParams)]),
    "grove_hdbscan_model_labels": (_i, [_vp, _Ai64, _Ad, _Ad]),
    "grove_hdbscan_model_mst": (_i, [_vp, _Ai64, _Ad]),
    "grove_hdbscan_model_single_linkage": (_i, [_vp, _Ad]),
    "grove_hdbscan_model_condensed_tree": (_i, [_vp, _Ai64, _Ai64, _Ad, _Ai64]),
    "grove_hdbscan_model_selected_clusters": (_i, [_vp, _Ai64, _Ai64]),
    "grove_hdbscan_model_persistence": (_i, [_vp, _Ad]),
    "grove_hdbscan_model_exemplars": (_i, [_vp, _Ai64, _Ai64]),
    "grove_hdbscan_model_relative_validity": (_i, [_vp, _P(_d)]),
    "grove_hdbscan_model_dbscan": (_i, [_vp, _d, _sz, _Ai64]),
    "grove_dbscan_params_init": (None, [_P(S.DbscanParams)]),
    "grove_dbscan": (_i, [S.Points, _P(S.IndexParams), _P(S.DbscanParams), _Ai64, _Au8, _P(S.DbscanCounts),
                          _P(S.Options)]),
    "grove_hdbscan_approximate_predict": (_i, [_vp, S.Points, _Ai64, _Ad, _P(S.Options)]),
    "grove_hdbscan_approximate_predict_scores": (_i, [_vp, S.Points, _Ad, _P(S.Options)]),
    "grove_hdbscan_membership_vector": (_i, [_vp, S.Points, _Ad, _P(S.Options)]),
    "grove_hdbscan_all_points_membership_vectors": (_i, [_vp, _Ad, _P(S.Options)]),
    # range join and kNN
    "grove_index_params_init": (None, [_P(S.IndexParams)]),
    "grove_index_create": (_i, [S.Points, _P(S.IndexParams), _P(S.Options), _P(_vp)]),
    "grove_index_free": (None, [_vp]),
    "grove_index_n": (_sz, [_vp]),
    "grove_index_d": (_sz, [_vp]),
    "grove_index_leaf_size": (_sz, [_vp]),
    "grove_index_dims": (_sz, [_vp]),
    "grove_index_dim_order": (None, [_vp, _Asz]),
    "grove_index_boxsize": (_i, [_vp, _Ad]),
    "grove_join_params_init": (None, [_P(S.JoinParams)]),
    "grove_join_count": (_i, [_vp, _P(S.Points), _P(S.JoinParams), _Ai64, _P(_i64), _P(S.Options)]),
    "grove_join_fill": (_i, [_vp, _P(S.Points), _P(S.JoinParams), _Ai64, _Ai64, _Ad, _P(S.Options)]),
    "grove_join_stream": (_i, [_vp, _P(S.Points), _P(S.JoinParams), S.JOIN_BATCH_FN, _vp, _P(S.Options)]),
    "grove_join_search": (_i, [_vp, _P(S.Points), _P(S.JoinParams), _P(S.JoinResult), _P(S.Options)]),
    "grove_join_result_free": (None, [_P(S.JoinResult)]),
    "grove_knn_search": (_i, [_vp, _P(S.Points), _P(S.KnnParams), _Ai64, _Ad, _P(S.Options)]),
    "grove_knn": (_i, [S.Points, _P(S.Points), _P(S.IndexParams), _P(S.KnnParams), _Ai64, _Ad, _P(S.Options)]),
    # gravity and N-body
    "grove_gravity_params_init": (None, [_P(S.GravityParams)]),
    "grove_gravity": (_i, [S.Points, _Ad, _P(S.GravityParams), _Ad, _Ad, _P(S.GravityStats), _P(S.Options)]),
    "grove_nbody_params_init": (None, [_P(S.NbodyParams)]),
    "grove_nbody_create": (_i, [S.Points, _Ad, _Ad, _P(S.NbodyParams), _P(S.Options), _P(_vp)]),
    "grove_nbody_free": (None, [_vp]),
    "grove_nbody_step": (_i, [_vp, _u64, _P(S.Options)]),
    "grove_nbody_diagnostics": (_i, [_vp, _P(S.NbodyDiag)]),
    "grove_nbody_stats": (_i, [_vp, _P(S.GravityStats)]),
    "grove_nbody_count": (_sz, [_vp]),
    "grove_nbody_positions": (_P(_d), [_vp]),
    "grove_nbody_velocities": (_P(_d), [_vp]),
    "grove_nbody_masses": (_P(_d), [_vp]),
    "grove_nbody_accelerations": (_P(_d), [_vp]),
    "grove_nbody_potentials": (_P(_d), [_vp]),
    "grove_nbody_get_params": (_P(S.NbodyParams), [_vp]),
    "grove_nbody_levels": (_P(C.c_uint8), [_vp]),
    "grove_nbody_force_evaluations": (_u64, [_vp]),
    "grove_nbody_checkpoint_write": (_i, [_vp, _s]),
    "grove_nbody_checkpoint_read": (_i, [_s, _P(S.Options), _P(_vp)]),
    "grove_ic_params_init": (None, [_P(S.IcParams)]),
    "grove_ic_generate": (_i, [_P(S.IcParams), _Ad, _Ad, _Ad]),
    "grove_snapshot_free": (None, [_P(S.Snapshot)]),
    "grove_tipsy_read": (_i, [_s, _P(S.Snapshot)]),
    "grove_tipsy_write": (_i, [_s, _sz, _d, _Ad, _Ad, _Ad, _Ad, _d, _i]),
    "grove_render_params_init": (None, [_P(S.RenderParams)]),
    "grove_render_png": (_i, [S.Points, _Ad, _P(S.RenderParams), _s]),
    # friends-of-friends
    "grove_fof_params_init": (None, [_P(S.FofParams)]),
    "grove_fof": (_i, [S.Points, _Ad, _Ad, _P(S.FofParams), _Ai64, _P(_sz), _P(S.FofCatalogue), _P(S.Options)]),
    "grove_fof_catalogue_free": (None, [_P(S.FofCatalogue)]),
    "grove_fof_mean_separation": (_i, [S.Points, _P(_d), _sz, _P(_d)]),
    # pair counts
    "grove_paircount_params_init": (None, [_P(S.PaircountParams)]),
    "grove_paircount_bins": (_sz, [_P(S.PaircountParams)]),
    "grove_paircount": (_i, [S.Points, _P(S.Points), _P(S.PaircountParams), _Ai64, _Ad, _P(S.Options)]),
    "grove_paircount_totals_of": (S.PaircountTotals, [_Ad, _sz]),
    "grove_paircount_xi": (_i, [_P(S.PaircountParams), _sz, S.PaircountTotals, S.PaircountTotals, _Ad, _Ad, _Ad, _Ad]),
    "grove_paircount_wp": (_i, [_P(S.PaircountParams), _sz, S.PaircountTotals, S.PaircountTotals, _Ad, _Ad, _Ad, _Ad]),
}


def library_path() -> str:
    """The path of the libgrove this process loads (see the module doc)."""
    env = os.environ.get("GROVE_LIB")
    if env:
        return env
    shipped = Path(__file__).with_name("libgrove.so")
    if shipped.exists():
        return str(shipped)
    raise ImportError("grove: libgrove.so is not in the package; install it with `pip install ./python` from "
                      "the grove repository, or point GROVE_LIB at a built one (make; GROVE_LIB=build/libgrove.so)")


def _load() -> tuple[C.CDLL, frozenset[str]]:
    lib = C.CDLL(library_path())
    missing = set()
    for name, (restype, argtypes) in PROTOTYPES.items():
        try:
            fn = getattr(lib, name)
        except AttributeError:
            missing.add(name)
            continue
        fn.restype, fn.argtypes = restype, argtypes
    return lib, frozenset(missing)


lib, MISSING = _load()


def _openmp_limit_calls() -> tuple[Callable[[], int], Callable[[int], None]] | tuple[None, None]:
    """omp_get_max_threads and omp_set_num_threads of the OpenMP runtime
    libgrove runs on (looked up through its handle), when it has one."""
    try:
        return lib.omp_get_max_threads, lib.omp_set_num_threads
    except AttributeError:
        return None, None


_omp_get_max_threads, _omp_set_num_threads = _openmp_limit_calls()


def _refuse_an_unknown_grove_cpu() -> None:
    """GROVE_CPU naming vector code grove does not know fails the import
    with the library's sentence, as it fails every grove command."""
    if "grove_cpu_info" not in MISSING:
        check(lib.grove_cpu_info(None, 0))


def has(name: str) -> bool:
    """Whether the loaded library exports the C function ``name``."""
    return name not in MISSING


def require(name: str) -> None:
    """Raise UnsupportedError when the loaded library lacks ``name`` (an
    older build, e.g. one from before the join/kNN module)."""
    if name in MISSING:
        raise UnsupportedError(f"{name} is not in {library_path()}: this libgrove predates it; rebuild grove")


_Params = TypeVar("_Params", bound=C.Structure)


def defaults(cls: type[_Params]) -> _Params:
    """A parameter struct filled by its C ``<name>_init`` function."""
    params = cls()
    getattr(lib, S.C_NAMES[cls] + "_init")(C.byref(params))
    return params


def check(status: int) -> None:
    """Raise the GroveError for a nonzero status, with grove_last_error().

    grove_last_error() is per thread: call this on the thread that made the
    failing call, right after it (every wrapper does)."""
    if status != S.GROVE_OK:
        raise error_for(status, _last_error())


def _last_error() -> str:
    return lib.grove_last_error().decode("utf-8", "replace")


# Seconds between two looks at pending signals while the main thread waits
# for a C call: a signal that reaches another thread is only seen when a
# timed wait ends.
TICK = 0.05


class Running:
    """One C call (a grove function returning grove_status) with its own
    cancel flag: ``run`` makes the call on the thread that runs it,
    ``cancel`` raises the flag from any thread, ``wait_out`` waits for the
    end without letting a signal interrupt it, and ``raise_failure`` raises
    the GroveError of a failed call on the waiting thread."""

    def __init__(self, fn: Callable[..., int], args: tuple[Any, ...]):
        self.flag = C.c_int(0)
        for a in args:
            if isinstance(a, S.Options):
                a.cancel = C.pointer(self.flag)
        self.fn, self.args = fn, args
        # The caller's OpenMP thread limit (threadpoolctl's threadpool_limits
        # sets it on the thread that asks), for the runner thread to follow.
        self.limit = _omp_get_max_threads() if _omp_get_max_threads else 0
        self.done = threading.Event()
        self.status, self.message = 0, ""
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            if self.limit and _omp_get_max_threads() != self.limit:
                _omp_set_num_threads(self.limit)
            self.status = self.fn(*self.args)
            if self.status:
                self.message = _last_error()  # per thread: read it here
        except BaseException as e:  # e.g. a ctypes ArgumentError, raised on the caller's thread instead
            self.error = e
        finally:
            self.done.set()

    def cancel(self) -> None:
        self.flag.value = 1

    def wait_out(self) -> None:
        """Wait for the call to return, whatever signals arrive meanwhile:
        it uses memory the caller owns."""
        while not self.done.is_set():
            try:
                self.done.wait(TICK)
            except BaseException:  # the caller is already on its way out with an exception
                pass

    def raise_failure(self) -> None:
        if self.error is not None:
            raise self.error
        if self.status:
            raise error_for(self.status, self.message)


class _Runner:
    """The thread that makes the main thread's C calls, one at a time. It
    lives as long as the process: OpenMP keeps a team of threads per thread
    that starts parallel work, and a fresh thread per call would start a
    fresh team every time."""

    def __init__(self) -> None:
        self.busy = threading.Lock()  # held by the main thread while its call runs here
        self.jobs: queue.SimpleQueue = queue.SimpleQueue()
        threading.Thread(target=self._serve, name="grove-call", daemon=True).start()

    def _serve(self) -> None:
        while True:
            self.jobs.get().run()


_runner: _Runner | None = None
_runner_made = threading.Lock()


def _the_runner() -> _Runner:
    global _runner
    with _runner_made:
        if _runner is None:
            _runner = _Runner()
        return _runner


def _forget_runner() -> None:
    """In a forked child the runner thread does not exist: make a new one on demand."""
    global _runner, _runner_made
    _runner, _runner_made = None, threading.Lock()


os.register_at_fork(after_in_child=_forget_runner)


# Calls whose inputs are all points, at most this many coordinates, end
# within milliseconds whatever they compute: they skip the hand-over to the
# runner (tens of microseconds, more than such a call itself). Calls on a
# handle (an Index may be large) and on plain arrays (gravity) never do.
QUICK = 4096


def _quick(args: tuple[Any, ...]) -> bool:
    if any(isinstance(a, C.c_void_p) for a in args):
        return False
    sizes = [a.n * a.d for a in args if isinstance(a, S.Points)]
    return bool(sizes) and max(sizes) <= QUICK


def call(fn: Callable[..., int], *args: Any) -> None:
    """fn(*args), a grove function returning grove_status, raising the
    GroveError of a failure; interruptible when made on the main thread.

    Pass the call's grove_options as an ``Options`` instance (ctypes passes
    it by reference): its cancel flag is set here. On the main thread the C
    call runs on the runner thread while this thread waits; an exception
    raised meanwhile (KeyboardInterrupt from Ctrl-C, or whatever a signal
    handler raises) cancels the call, waits for it to return, and goes on.
    Other threads, which Python never interrupts, make the call themselves,
    as do quick calls (QUICK) and a call made while the runner is busy
    (from a signal handler that runs during another call)."""
    runner = None
    if threading.current_thread() is threading.main_thread() and not _quick(args):
        runner = _the_runner()
    if runner is None or not runner.busy.acquire(blocking=False):
        check(fn(*args))
        return
    try:
        job = Running(fn, args)
        runner.jobs.put(job)
        try:
            while not job.done.wait(TICK):
                pass
        except BaseException:
            job.cancel()
            job.wait_out()
            raise
    finally:
        runner.busy.release()
    job.raise_failure()


def version() -> str:
    """The loaded library's version, e.g. "0.1.0"."""
    return lib.grove_version().decode()


def build_info() -> str:
    """The loaded library's build description: compiler, flags, OpenMP,
    optional parts."""
    return lib.grove_build_info().decode()


def cpu_info() -> str:
    """The vector code the loaded library runs and why: "avx512", "avx2" or
    "portable", then GROVE_CPU's cap and the processor's features, e.g.
    "avx2 (GROVE_CPU=avx2; features: avx2 fma ...)" (grove_cpu_info)."""
    require("grove_cpu_info")
    text = C.create_string_buffer(512)
    check(lib.grove_cpu_info(text, len(text)))
    return text.value.decode()


def device_info(device: str) -> tuple[bool, str]:
    """Whether ``device`` ("cpu", "cuda", "opencl" or "auto") can run here,
    and what it is or why not (``grove_device_info``): e.g. ``(False,
    "no driver: libcuda.so.1: cannot open shared object file ...")``."""
    require("grove_device_info")
    text = C.create_string_buffer(512)
    ok = lib.grove_device_info(S.device_code(device), text, len(text))
    return bool(ok), text.value.decode(errors="replace")


_refuse_an_unknown_grove_cpu()
