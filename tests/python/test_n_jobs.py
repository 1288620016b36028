"""n_jobs on the scikit-learn-style estimators (grove.DBSCAN, grove.HDBSCAN,
and core_dist_n_jobs on grove.compat.hdbscan.HDBSCAN): None = the
estimator's default, a positive count as it is, negative counts from the
cores OpenMP gives grove as joblib counts from its CPUs (-1 = all, -2 = all
but one), and the same labels whatever the count."""
import os
import subprocess
import sys

import numpy as np
import pytest

import grove
from conftest import ROOT
from grove import _clib
from grove._estimator import openmp_cores
from grove.compat.hdbscan import HDBSCAN as CompatHDBSCAN

# name: (estimator class, its n_jobs parameter, the C call that receives the options)
ESTIMATORS = {
    "DBSCAN": (lambda **kw: grove.DBSCAN(eps=0.8, min_samples=5, **kw), "n_jobs", "grove_dbscan"),
    "HDBSCAN": (grove.HDBSCAN, "n_jobs", "grove_hdbscan_model_create"),
    "compat.HDBSCAN": (CompatHDBSCAN, "core_dist_n_jobs", "grove_hdbscan_model_create"),
}


def blobs(n=300):
    rng = np.random.default_rng(4)
    return np.vstack([rng.normal(c, 0.5, (n // 3, 2)) for c in ((0, 0), (5, 5), (0, 6))])


def threads_used(monkeypatch, make, c_name):
    """fit() of the estimator make() builds, and the threads field of the
    options its C call received (0 = all cores)."""
    seen = []
    real = _clib.call

    def spy(fn, *args):
        if fn is getattr(_clib.lib, c_name):
            seen.extend(a.threads for a in args if isinstance(a, grove._cstructs.Options))
        return real(fn, *args)

    monkeypatch.setattr(_clib, "call", spy)
    labels = make().fit(blobs()).labels_
    assert len(seen) == 1, seen
    return seen[0], labels


@pytest.mark.parametrize("name", ESTIMATORS)
def test_n_jobs_counts_as_joblib_from_the_openmp_cores(name, monkeypatch):
    make, param, c_name = ESTIMATORS[name]
    cores = openmp_cores()
    default, labels = threads_used(monkeypatch, make, c_name)
    # -1 (all cores) is the default (0), which also leaves out busy cores.
    expected = {1: 1, -1: 0, -2: max(cores - 1, 1) if cores > 1 else 0, -cores - 5: 1 if cores > 1 else 0,
                np.int64(-1): 0}
    # compat.HDBSCAN caps the count at the cores (its default is 4 jobs), and all of them is the default.
    expected[2] = 2 if name != "compat.HDBSCAN" or cores > 2 else 0
    if name != "compat.HDBSCAN":
        assert default == 0  # None: all cores
        expected[None] = 0
    for n_jobs, threads in expected.items():
        used, same = threads_used(monkeypatch, lambda: make(**{param: n_jobs}), c_name)
        assert used == threads, (n_jobs, used, threads)
        assert np.array_equal(same, labels), n_jobs


@pytest.mark.parametrize("name", ESTIMATORS)
@pytest.mark.parametrize("bad", [0, 1.5, "2", True])
def test_n_jobs_refuses_what_joblib_refuses(name, bad):
    make, param, _ = ESTIMATORS[name]
    with pytest.raises(ValueError, match=param):
        make(**{param: bad}).fit(blobs())


@pytest.mark.parametrize("name", ESTIMATORS)
def test_n_jobs_is_a_parameter(name):
    make, param, _ = ESTIMATORS[name]
    assert make(**{param: -2}).get_params()[param] == -2


def test_negative_n_jobs_follow_omp_num_threads():
    # OpenMP's count, not os.cpu_count(): with OMP_NUM_THREADS=5, -2 is four threads and -9 one; -1 is the
    # default (None: all five where that many cores are free).
    code = ("from grove._estimator import threads_from_n_jobs as t, openmp_cores as c; "
            "print(c(), t(-1, None), t(-2, None), t(-9, None))")
    env = dict(os.environ, OMP_NUM_THREADS="5", PYTHONPATH=str(ROOT / "python"))
    out = subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True, text=True).stdout
    assert out.split() == ["5", "None", "4", "1"]
