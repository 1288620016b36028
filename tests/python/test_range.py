"""Coordinates near the ends of the dtype's range (1e300 and 1e-300;
float32 1e30 and 1e-30), and ordinary points with one huge outlier:
grove.emst and grove.hdbscan give the answers of the same points at
ordinary size (brute force), where they used to crash the interpreter."""
import subprocess
import sys

import numpy as np
import pytest

import grove


def prim(dist):
    """Dense Prim on a distance matrix: the sorted weights of its MST."""
    n = len(dist)
    inside, best, weights = np.zeros(n, bool), dist[0].copy(), []
    inside[0] = True
    for _ in range(n - 1):
        j = int(np.argmin(np.where(inside, np.inf, best)))
        weights.append(best[j])
        inside[j] = True
        best = np.minimum(best, dist[j])
    return np.sort(np.array(weights))


@pytest.mark.parametrize("dtype,k", [(np.float64, 997), (np.float64, -1000), (np.float32, 100), (np.float32, -100)])
def test_emst_and_hdbscan_are_scale_invariant(rng, dtype, k):
    base = rng.integers(-8, 9, size=(300, 3)).astype(dtype)
    x = np.ldexp(base, k)
    assert x.dtype == dtype and np.isfinite(x).all()
    edges0, weights0 = grove.emst(base)
    edges, weights = grove.emst(x)
    assert np.array_equal(edges, edges0)
    assert np.array_equal(weights, np.ldexp(weights0, k))
    # The lattice's squared distances are exact integers, so the brute
    # force on `base` is the exact answer.
    b = base.astype(np.float64)
    assert np.array_equal(weights0, prim(np.sqrt(((b[:, None] - b[None]) ** 2).sum(-1))))
    assert np.array_equal(grove.HDBSCAN(min_cluster_size=10).fit(x).labels_,
                          grove.HDBSCAN(min_cluster_size=10).fit(base).labels_)


def test_one_outlier_at_1e300_in_one_dimension(rng):
    x = np.append(rng.random(499), 1e300)[:, None]
    edges, weights = grove.emst(x)
    # In one dimension the distance is |a - b|: no squares to overflow.
    assert np.array_equal(weights, prim(np.abs(x - x.T)))
    assert edges[-1, 1] == 499 and weights[-1] == 1e300 - x[:-1].max()


def test_the_interpreter_survives(tmp_path):
    """The case that crashed (SIGSEGV in the Boruvka merge), in a child."""
    script = ("import numpy as np, grove\n"
              "x = np.append(np.random.default_rng(1).random((499, 3)), [[1e300, 1e300, 1e300]], axis=0)\n"
              "e, w = grove.emst(x)\n"
              "print(len(e), w[-1] > 1e300)\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["499", "True"]
