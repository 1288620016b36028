"""Index and NBody from several threads: closing one while a call runs on
another thread, or while a join_batches iterator is alive, waits for them
to end before the C object is freed (no crash, correct results, later
calls refused); Index queries run concurrently, NBody calls one at a
time; copies and pickles of handles."""
import copy
import gc
import pickle
import threading

import numpy as np
import pytest

import grove
from grove import _clib

WAIT = 60  # seconds before a test that would hang gives up (a broken lock, not a timing claim)


@pytest.fixture
def gate(monkeypatch):
    """gate(name) makes each call of the C function `name` signal
    `inside` once it has started and wait for `release` before it goes
    into C; returns (inside, release)."""

    def install(name):
        real = getattr(_clib.lib, name)
        inside, release = threading.Event(), threading.Event()

        def wrapper(*args):
            inside.set()
            assert release.wait(WAIT)
            return real(*args)

        monkeypatch.setattr(_clib.lib, name, wrapper)
        return inside, release

    return install


def in_thread(fn):
    """Start fn() on a thread; join() returns its result or raises its exception."""
    out = {}

    def body():
        try:
            out["value"] = fn()
        except BaseException as e:
            out["error"] = e

    t = threading.Thread(target=body)
    t.start()

    def join():
        t.join(WAIT)
        assert not t.is_alive()
        if "error" in out:
            raise out["error"]
        return out["value"]

    return join


def brute_knn(x, q, k):
    d = ((q[:, None] - x[None]) ** 2).sum(-1)
    return np.argsort(d, axis=1, kind="stable")[:, :k]


def test_closing_an_index_while_another_thread_queries_it(rng, gate):
    x, q = rng.random((3000, 3)), rng.random((500, 3))
    ix = grove.Index(x)
    inside, release = gate("grove_knn_search")
    result = in_thread(lambda: ix.knn(4, q))
    assert inside.wait(WAIT)
    ix.close()  # the query is in flight: the index must outlive it
    with pytest.raises(grove.InvalidArgumentError, match="after close"):
        ix.knn(1, q)
    release.set()
    indices, _ = result()
    assert np.array_equal(indices, brute_knn(x, q, 4))
    assert not ix._handle  # freed by the query's end


def test_closing_an_nbody_during_a_step(rng, gate):
    pos, vel, mass = rng.normal(size=(2000, 3)), np.zeros((2000, 3)), np.full(2000, 1 / 2000)
    sim = grove.NBody(pos, vel, mass)
    inside, release = gate("grove_nbody_step")
    stepped = in_thread(lambda: sim.step(3))
    assert inside.wait(WAIT)
    sim.close()
    with pytest.raises(grove.InvalidArgumentError, match="after close"):
        sim.energies()
    release.set()
    stepped()
    assert not sim._handle
    # The same three steps on a fresh simulation, for comparison.
    with grove.NBody(pos, vel, mass) as again:
        again.step(3)
        assert again.energies().step == 3


def test_closing_an_index_while_join_batches_iterates(rng):
    x = rng.random((4000, 3))
    ix = grove.Index(x)
    offsets, indices = ix.join(0.05)
    it = ix.join_batches(0.05, memory_budget=40_000)
    batches = [next(it)]
    ix.close()  # the iterator keeps the index alive
    batches += list(it)
    assert len(batches) > 2
    assert np.array_equal(np.concatenate([b.indices for b in batches]), indices)
    assert batches[-1].query_end == 4000
    assert not ix._handle  # freed when the iterator ended


def test_index_queries_from_two_threads_run_at_once(rng, monkeypatch):
    x = rng.random((3000, 3))
    ix = grove.Index(x)
    both_inside = threading.Barrier(2, timeout=WAIT)  # breaks if the calls were made one after the other
    real = _clib.lib.grove_knn_search

    def wrapper(*args):
        both_inside.wait()
        return real(*args)

    monkeypatch.setattr(_clib.lib, "grove_knn_search", wrapper)
    runs = [in_thread(lambda: ix.knn(3)) for _ in range(2)]
    first, second = (run()[0] for run in runs)
    assert np.array_equal(first, second) and np.array_equal(first, brute_knn(x, x, 3))
    ix.close()


def test_nbody_calls_from_two_threads_run_one_at_a_time(rng, monkeypatch):
    pos, vel, mass = rng.normal(size=(2000, 3)), np.zeros((2000, 3)), np.full(2000, 1 / 2000)
    sim = grove.NBody(pos, vel, mass)
    inside, most = [0], [0]
    lock = threading.Lock()
    real = _clib.lib.grove_nbody_step

    def wrapper(*args):
        with lock:
            inside[0] += 1
            most[0] = max(most[0], inside[0])
        try:
            return real(*args)
        finally:
            with lock:
                inside[0] -= 1

    monkeypatch.setattr(_clib.lib, "grove_nbody_step", wrapper)
    runs = [in_thread(lambda: sim.step(2)) for _ in range(4)]
    for run in runs:
        run()
    assert most[0] == 1
    assert sim.energies().step == 8
    with grove.NBody(pos, vel, mass) as alone:
        alone.step(8)
        assert np.array_equal(alone.positions, sim.positions)
    sim.close()


# -- copies and pickles -----------------------------------------------------
# A handle owns one C object. Copying its Python object used to give two
# owners of that object, each freeing it (a crash, or a free of freed
# memory). Immutable handles (Index, the fitted HDBSCAN* model) share it:
# a copy is the handle itself, as a copy of a tuple is. A simulation
# changes, so a copy that shares it would not be a copy: it is refused.
def _models():
    x = np.random.default_rng(4).random((60, 2))
    fitted = grove.HDBSCAN(min_cluster_size=5, prediction_data=True).fit(x)
    return x, fitted, fitted._grove_fit.model()


@pytest.mark.parametrize("copy_of", [copy.copy, copy.deepcopy])
def test_a_copied_index_outlives_the_original(rng, copy_of):
    x = rng.random((200, 3))
    ix = grove.Index(x)
    twin = copy_of(ix)
    del ix
    gc.collect()
    indices, _ = twin.knn(3, x[:20])
    assert np.array_equal(indices, brute_knn(x, x[:20], 3))


@pytest.mark.parametrize("copy_of", [copy.copy, copy.deepcopy])
def test_a_copied_model_outlives_the_original(copy_of):
    x, fitted, model = _models()
    want = model.approximate_predict(x[:10])
    twin = copy_of(model)
    del model, fitted._grove_fit._model
    gc.collect()
    for got, expected in zip(twin.approximate_predict(x[:10]), want):
        assert np.array_equal(got, expected)


@pytest.mark.parametrize("copy_of", [copy.copy, copy.deepcopy])
def test_copying_a_simulation_is_refused_in_one_line(copy_of):
    with grove.NBody.from_ic("plummer", 50, seed=1) as sim:
        with pytest.raises(TypeError, match="NBody cannot be copied") as e:
            copy_of(sim)
        assert "\n" not in str(e.value)
        sim.step(1)  # the simulation is untouched


@pytest.mark.parametrize("make", [lambda: grove.Index(np.zeros((3, 2))), lambda: grove.NBody.from_ic("cold", 8),
                                  lambda: _models()[2]])
def test_pickling_a_handle_is_refused_in_one_line(make):
    handle = make()
    with pytest.raises(TypeError, match=f"{type(handle).__name__} cannot be pickled") as e:
        pickle.dumps(handle)
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("copy_of", [copy.copy, copy.deepcopy, lambda e: pickle.loads(pickle.dumps(e))])
def test_fitted_estimators_copy_and_pickle(copy_of):
    x, fitted, _ = _models()
    want = fitted.approximate_predict(x[:10])
    twin = copy_of(fitted)
    del fitted
    gc.collect()
    for got, expected in zip(twin.approximate_predict(x[:10]), want):
        assert np.array_equal(got, expected)


@pytest.mark.parametrize("copy_of", [copy.copy, copy.deepcopy, lambda t: pickle.loads(pickle.dumps(t))])
def test_a_ball_tree_copies_and_pickles(rng, copy_of):
    x = rng.random((100, 3))
    tree = grove.balltree(x, rng.integers(0, 3, 100), rotate=2)
    twin = copy_of(tree)
    assert isinstance(twin, grove.BallTree)
    for got, want in zip((*twin, *twin.balls(2), twin.batches()), (*tree, *tree.balls(2), tree.batches())):
        assert np.array_equal(got, want)
    twin.check()
