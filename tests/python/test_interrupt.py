"""Ctrl-C during a long call: SIGINT sent to the process while grove
computes raises KeyboardInterrupt within a second, because the call is
cancelled through grove_options.cancel (the C function returns
GROVE_CANCELLED rather than finishing). Each input would take several
seconds to finish; the bound is on how soon the interruption is seen,
not on grove's speed."""
import os
import signal
import threading
import time

import numpy as np
import pytest

import grove
from grove import _clib

DELAY = 0.3  # seconds from the call's start to the signal (the default)
CANCELLED = grove.CancelledError.status


@pytest.fixture
def statuses(monkeypatch):
    """statuses(name) records what each call of the C function `name`
    returns; statuses.started is set when one begins."""
    started = threading.Event()

    def install(name):
        real = getattr(_clib.lib, name)
        seen = []

        def wrapper(*args):
            started.set()
            seen.append(real(*args))
            return seen[-1]

        monkeypatch.setattr(_clib.lib, name, wrapper)
        return seen

    install.started = started
    return install


def seconds_to_interrupt(run, delay=DELAY, started=None):
    """Run run() with SIGINT sent `delay` seconds in (after the event
    `started` is set, when one is given: the C call's start, so that the
    Python work before it, whose length depends on the machine, does not
    count); the seconds from the signal to the KeyboardInterrupt (None if
    none came)."""
    sent = []

    def send():
        if started is not None:
            started.wait(30)
            time.sleep(delay)
        sent.append(time.monotonic())
        os.kill(os.getpid(), signal.SIGINT)

    timer = threading.Timer(0 if started is not None else delay, send)
    try:
        timer.start()
        run()
        timer.join()  # the call ended first: take the signal here, not in pytest
        time.sleep(1)
    except KeyboardInterrupt:
        return time.monotonic() - sent[0]
    finally:
        timer.cancel()
    return None


def _cloud(rng, n):
    return rng.normal(size=(n, 3)), np.full(n, 1.0 / n)


def _batched(rng, n, size):
    return rng.random((n, 3), dtype=np.float32), np.arange(n) // size


def _predictor(rng):
    """A model fitted on 4000 points of two blobs, and 500000 queries."""
    x = np.concatenate([rng.normal(size=(2000, 3)), rng.normal(5, 1, size=(2000, 3))])
    return grove.HDBSCAN(min_cluster_size=40, prediction_data=True).fit(x), rng.random((500_000, 3)) * 8 - 1


# (C function, setup(rng) -> the long call[, delay]): inputs that take
# seconds, and whose index or tree is built in a small part of that (the
# builds are not where the library polls the flag). The ball tree polls
# throughout but builds 24 million points in a few tenths of a second on
# two cores, so its signal comes sooner.
CALLS = {
    "emst": ("grove_emst", lambda rng: (lambda x=rng.random((100_000, 6)): grove.emst(x))),
    "knn": ("grove_knn", lambda rng: (lambda x=rng.random((16_000, 24)): grove.knn(x, 8))),
    "join": ("grove_join_search", lambda rng: (lambda x=rng.random((16_000, 24)): grove.join(x, 1.0))),
    "balltree": ("grove_balltree_build",
                 lambda rng: (lambda xb=_batched(rng, 24_000_000, 4096): grove.balltree(*xb)), 0.05),
    "gravity": ("grove_gravity", lambda rng: (lambda pm=_cloud(rng, 30_000): grove.gravity(*pm, theta=0))),
    "approximate_predict": ("grove_hdbscan_approximate_predict",
                            lambda rng: (lambda mq=_predictor(rng): mq[0].approximate_predict(mq[1]))),
    "membership_vector": ("grove_hdbscan_membership_vector",
                          lambda rng: (lambda mq=_predictor(rng): mq[0].membership_vector(mq[1]))),
    # One thread: half a second on any machine.
    "generate": ("grove_gen", lambda rng: (lambda: grove.generate("exponential", 2_000_000, 3, threads=1)), 0.05),
}


@pytest.mark.parametrize("name", CALLS)
def test_sigint_interrupts_a_long_call_within_a_second(name, rng, statuses):
    c_name, setup, *delay = CALLS[name]
    run = setup(rng)
    seen = statuses(c_name)
    elapsed = seconds_to_interrupt(run, *delay, started=statuses.started)
    assert seen == [CANCELLED], f"{c_name} returned {seen}: it was not cancelled"
    assert elapsed is not None and elapsed < 1.0, f"KeyboardInterrupt {elapsed} s after SIGINT"


def test_sigint_interrupts_an_nbody_step_within_a_second(rng, statuses):
    # A thousand steps of 20000 particles take a minute. (A step cut short
    # inside its force evaluation is undone: tests/test_cancel.c.)
    sim = grove.NBody.from_ic("plummer", 20_000)
    seen = statuses("grove_nbody_step")
    elapsed = seconds_to_interrupt(lambda: sim.step(1000))
    assert seen == [CANCELLED]
    assert elapsed is not None and elapsed < 1.0, f"KeyboardInterrupt {elapsed} s after SIGINT"
    steps = sim.energies().step
    assert steps < 1000 and sim.time == pytest.approx(steps * sim.params["dt"])
    sim.close()


def test_an_interrupted_nbody_run_goes_on_as_if_never_stopped(tmp_path):
    # Ctrl-C mid-run, then the rest of the steps, straight on or from a
    # checkpoint written after the interrupt: the same bytes as the run made
    # in one go (an interrupted step is undone, not left half done).
    sim = grove.NBody.from_ic("plummer", 20_000, seed=2)
    assert seconds_to_interrupt(lambda: sim.step(1000)) is not None
    done = sim.energies().step
    sim.checkpoint(tmp_path / "c.ckpt")
    sim.step(2)
    with grove.NBody.from_ic("plummer", 20_000, seed=2) as whole, \
            grove.NBody.from_checkpoint(tmp_path / "c.ckpt") as resumed:
        whole.step(done + 2)
        resumed.step(2)
        for other in (whole, resumed):
            assert sim.energies().step == other.energies().step == done + 2 and sim.time == other.time
            assert np.array_equal(sim.positions, other.positions)
            assert np.array_equal(sim.velocities, other.velocities)
            assert np.array_equal(sim.potentials, other.potentials)
    sim.close()


def test_a_call_made_after_an_interrupt_runs_normally(rng):
    x = rng.random((2000, 3))
    seconds_to_interrupt(CALLS["emst"][1](rng))
    edges, weights = grove.emst(x)
    assert edges.shape == (1999, 2) and np.all(np.isfinite(weights))


def test_calls_handed_to_the_runner_raise_grove_message(rng, monkeypatch):
    # Large enough to go to the runner thread; grove_last_error() is read there.
    x = rng.random((5000, 3))
    x[4321, 1] = np.nan
    threads = []
    real = _clib.lib.grove_emst
    monkeypatch.setattr(_clib.lib, "grove_emst", lambda *a: threads.append(threading.current_thread()) or real(*a))
    with pytest.raises(grove.InvalidArgumentError, match="row 4321, column 1"):
        grove.emst(x)
    assert threads and threads[0] is not threading.main_thread()
