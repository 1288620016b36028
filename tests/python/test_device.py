"""The device= keyword of the calls with a device path (docs/gpu.md):
the same results as the CPU's (the join's arrays byte for byte, gravity
within single-precision rounding), refusals in one line naming why,
grove.device_info. Runs on OpenCL (PoCL on a CPU-only machine); skipped,
saying why, without an OpenCL device."""
import numpy as np
import pytest

import grove

OPENCL, WHY = grove.device_info("opencl")
needs_opencl = pytest.mark.skipif(not OPENCL, reason=f"no OpenCL device: {WHY}")


def test_device_info_says_what_or_why_not():
    assert grove.device_info("cpu") == (True, "the CPU")
    for device in ("cuda", "opencl"):
        ok, text = grove.device_info(device)
        assert text and "\n" not in text
        assert ok or text.split(":")[0] in ("not built", "no driver", "no device", "failed")
    with pytest.raises(grove.InvalidArgumentError, match="device: expected one of cpu, cuda, opencl, auto"):
        grove.device_info("gpu")


@needs_opencl
def test_join_on_the_device_is_the_cpus():
    rng = np.random.default_rng(4)
    for d, f32, eps in ((3, False, 0.2), (20, True, 1.3)):
        x = rng.random((700, d)).astype(np.float32 if f32 else np.float64)
        want = grove.join(x, eps, distances=True)
        got = grove.join(x, eps, distances=True, device="opencl")
        assert all(np.array_equal(w, g) for w, g in zip(want, got))
        with grove.Index(x) as ix:
            assert np.array_equal(ix.count(eps, device="opencl"), np.diff(want[0]))
            batches = list(ix.join_batches(eps, memory_budget=30000, device="opencl"))
        assert len(batches) > 1 and want[1].size > 5 * len(x)
        assert np.array_equal(np.concatenate([b.indices for b in batches]), want[1])


@needs_opencl
def test_gravity_on_the_device_is_the_cpus():
    rng = np.random.default_rng(5)
    x, m = rng.normal(size=(2000, 3)), rng.random(2000)
    a0, s0 = grove.gravity(x, m, softening=0.01, stats=True)
    a1, s1 = grove.gravity(x, m, softening=0.01, stats=True, device="opencl")
    assert (s0.particle_interactions, s0.cell_interactions) == (s1.particle_interactions, s1.cell_interactions)
    scale = np.linalg.norm(a0, axis=1) + np.median(np.linalg.norm(a0, axis=1))
    assert np.max(np.linalg.norm(a1 - a0, axis=1) / scale) < 2e-5


def test_a_device_that_cannot_run_is_refused_in_one_line():
    ok, why = grove.device_info("cuda")
    if ok:
        pytest.skip("CUDA runs here")
    x = np.random.default_rng(6).random((50, 3))
    with pytest.raises(grove.UnsupportedError) as e:
        grove.join(x, 0.1, device="cuda")
    assert why in str(e.value) and "\n" not in str(e.value)
    with pytest.raises(grove.UnsupportedError, match="cannot run here"):
        grove.gravity(x, np.ones(50), device="cuda")
    with pytest.raises(grove.InvalidArgumentError, match="device: expected"):
        grove.join(x, 0.1, device="GPU")


@needs_opencl
def test_nbody_steps_on_the_device_follow_the_cpus():
    runs = []
    for device in ("cpu", "opencl"):
        sim = grove.NBody.from_ic("plummer", 1500, seed=3)
        sim.step(3, device=device)
        runs.append(sim.positions.copy())
        sim.close()
    assert 0 < np.max(np.abs(runs[1] - runs[0])) < 1e-7
