"""Threads from Python: a thread limit set on the calling thread (what
threadpoolctl's threadpool_limits does, by omp_set_num_threads on the
OpenMP runtimes it finds) caps grove's calls, also those the binding runs
on its runner thread; joblib's workers get grove's threads capped as
scikit-learn's estimators do."""
import threading

import numpy as np
import pytest

import grove
from grove import _clib


def cores_on_the_runner():
    """grove_cores() as a call the binding hands to its runner thread sees it."""
    seen = []

    def report() -> int:
        seen.append((threading.current_thread().name, _clib.lib.grove_cores()))
        return 0

    _clib.call(report)
    (thread, cores), = seen
    assert thread == "grove-call"
    return cores


def test_the_callers_openmp_limit_reaches_the_runner_thread():
    lib = _clib.lib
    keep = lib.omp_get_max_threads()
    try:
        lib.omp_set_num_threads(1)
        assert cores_on_the_runner() == 1
        lib.omp_set_num_threads(3)
        assert cores_on_the_runner() == 3
    finally:
        lib.omp_set_num_threads(keep)
    assert cores_on_the_runner() == keep


def test_threadpoolctl_limits_cap_grove():
    threadpoolctl = pytest.importorskip("threadpoolctl")
    x = np.random.default_rng(1).random((5000, 3))
    grove.knn(x, 3)  # loads the OpenMP runtime's team
    infos = [i for i in threadpoolctl.threadpool_info() if i["user_api"] == "openmp"]
    assert any(i["filepath"] for i in infos), infos
    with threadpoolctl.threadpool_limits(1, user_api="openmp"):
        assert _clib.lib.grove_cores() == 1
        assert cores_on_the_runner() == 1


def _worker_threads(_):
    import grove._clib as c
    return int(c.lib.grove_cores())


def test_joblib_workers_get_their_share_of_the_cores():
    joblib = pytest.importorskip("joblib")
    cores = joblib.cpu_count()
    if cores < 2:
        pytest.skip("one core")
    got = joblib.Parallel(n_jobs=2)(joblib.delayed(_worker_threads)(i) for i in range(2))
    assert all(g <= max(cores // 2, 1) for g in got), (got, cores)
