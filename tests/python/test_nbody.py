"""grove.gravity and grove.NBody against the command line and direct sums."""
import numpy as np
import pytest

import grove


def plummer(n, seed=1):
    with grove.NBody.from_ic("plummer", n, seed=seed) as sim:
        return sim.positions, sim.masses


def test_gravity_equals_cli(cli, tmp_path):
    pos, mass = plummer(2000)
    np.save(tmp_path / "in.npy", np.column_stack([pos, mass]))
    cli("gravity", "in.npy", "--theta", 0.6, "--softening", 0.01, "--acc", "a.npy", "--pot", "p.npy")
    acc, pot, stats = grove.gravity(pos, mass, 0.6, 0.01, potentials=True, stats=True)
    assert np.array_equal(acc, np.load(tmp_path / "a.npy")) and np.array_equal(pot, np.load(tmp_path / "p.npy"))
    assert stats.particle_interactions > 0 and stats.groups >= 1


def test_theta_zero_is_the_direct_sum(rng):
    pos, mass = rng.normal(size=(300, 3)), rng.random(300)
    acc = grove.gravity(pos, mass, theta=0.0, softening=0.05, G=2.0)
    diff = pos[None, :, :] - pos[:, None, :]
    r2 = (diff ** 2).sum(-1) + 0.05 ** 2
    np.fill_diagonal(r2, np.inf)
    ref = 2.0 * (mass[None, :, None] * diff / r2[..., None] ** 1.5).sum(1)
    assert np.allclose(acc, ref, rtol=1e-12, atol=1e-12)


def test_gravity_threads_and_conversions(rng, spy):
    pos, mass = rng.normal(size=(3000, 3)).astype(np.float32).astype(np.float64), rng.random(3000)
    calls = spy("grove_gravity")
    a1 = grove.gravity(pos, mass, threads=1)
    a2 = grove.gravity(np.asfortranarray(pos).astype(np.float32), mass.tolist(), threads=2)
    assert np.array_equal(a1, a2)
    assert calls[0][0].data == pos.ctypes.data and calls[0][1] == mass.ctypes.data  # no copy
    assert [c[-1].threads for c in calls] == [1, 2]


@pytest.mark.parametrize("args, match", [((np.zeros((4, 2)), np.ones(4)), "positions: expected shape"),
                                         ((np.zeros((4, 3)), np.ones(3)), "masses: expected shape"),
                                         ((np.zeros((4, 3)), -np.ones(4)), "mass")])
def test_gravity_errors(args, match):
    with pytest.raises(grove.InvalidArgumentError, match=match):
        grove.gravity(*args)


def test_nbody_equals_cli_run(cli, tmp_path):
    cli("nbody", "--ic", "plummer", "--n", 300, "--seed", 3, "--steps", 6, "--snapshot-every", 6, "--theta", 0.7,
        "--softening", 0.01, "--out", "run")
    ref = np.load(tmp_path / "run" / "snap_000006.npy")
    with grove.NBody.from_ic("plummer", 300, seed=3, theta=0.7, softening=0.01) as sim:
        sim.step(6)
        assert np.array_equal(np.column_stack([sim.positions, sim.velocities, sim.masses]), ref)
        assert sim.energies().step == 6 and sim.time == pytest.approx(6 / 128)


def test_nbody_energy_snapshots_and_checkpoint(tmp_path):
    sim = grove.NBody.from_ic("plummer", 500, seed=2, softening=0.02, dt=1 / 256, threads=2)
    e0 = sim.energies()
    assert e0.energy == pytest.approx(-0.25, rel=0.1) and e0.mass == pytest.approx(1.0)
    snaps = list(sim.snapshots(every=4, count=3))
    assert [s.time for s in snaps] == pytest.approx([4 / 256, 8 / 256, 12 / 256])
    assert abs(sim.energies().energy / e0.energy - 1) < 1e-3
    sim.checkpoint(tmp_path / "c.grove")
    sim.step(5)
    resumed = grove.NBody.from_checkpoint(tmp_path / "c.grove")
    resumed.step(5)
    assert np.array_equal(resumed.positions, sim.positions) and resumed.params == sim.params
    assert sim.accelerations.shape == (500, 3) and sim.potentials.shape == (500,) and sim.stats.leaves > 0
    sim.close()
    with pytest.raises(grove.InvalidArgumentError, match="after close"):
        sim.step()


def test_nbody_momentum_default_and_raw_forces():
    def drift(**kw):
        with grove.NBody.from_ic("plummer", 800, seed=4, theta=0.75, **kw) as sim:
            p0 = sim.energies().momentum
            sim.step(3)
            scale = (sim.masses * np.linalg.norm(sim.velocities, axis=1)).sum()
            return np.linalg.norm(np.subtract(sim.energies().momentum, p0)) / scale, sim.params["conserve_momentum"]
    conserved, flag = drift()
    raw, raw_flag = drift(conserve_momentum=False)
    assert flag is True and raw_flag is False
    assert conserved < 1e-14 < 1e-10 < raw


def test_tipsy_round_trip(tmp_path):
    with grove.NBody.from_ic("merger", 200, seed=5) as sim:
        snap = sim.snapshot()
    grove.write_tipsy(tmp_path / "s.tipsy", snap)
    back = grove.read_tipsy(tmp_path / "s.tipsy")
    assert back.time == snap.time and np.allclose(back.positions, snap.positions, rtol=1e-6, atol=1e-6)
    assert np.allclose(back.masses, snap.masses, rtol=1e-6)


def test_tipsy_phi_is_the_potential(tmp_path):
    # NBody.snapshot carries the potentials and write_tipsy stores them as
    # phi (float32); 1/2 sum m phi is the potential energy of energies().
    with grove.NBody.from_ic("plummer", 500, seed=3, theta=0.6, softening=0.02, dt=0.01) as sim:
        sim.step(3)
        snap, diag = sim.snapshot(), sim.energies()
    pot = grove.gravity(snap.positions, snap.masses, 0.6, 0.02, potentials=True)[1]
    assert np.array_equal(snap.potentials, pot)
    grove.write_tipsy(tmp_path / "s.tipsy", snap, softening=0.02)
    records = np.fromfile(tmp_path / "s.tipsy", dtype=">f4", offset=32).reshape(500, 9)
    assert np.array_equal(records[:, 8], pot.astype(np.float32)) and np.all(records[:, 7] == np.float32(0.02))
    assert 0.5 * np.sum(snap.masses * records[:, 8]) == pytest.approx(diag.potential, rel=1e-6)
    assert grove.read_tipsy(tmp_path / "s.tipsy").potentials is None


@pytest.mark.parametrize("field,row,value,match", [
    ("positions", 2, 1e300, "position x of row 2, 1e\\+300, is beyond float32's range"),
    ("positions", 1, np.nan, "position x of row 1, nan, is NaN"),
    ("velocities", 0, -np.inf, "velocity x of row 0, -inf, is infinite"),
    ("masses", 3, 5e-63, "mass of row 3, 5e-63, is nonzero but rounds to 0"),
    ("time", None, np.nan, "the time, nan, is not finite"),
])
def test_write_tipsy_refuses_what_float32_cannot_hold(tmp_path, field, row, value, match):
    # The library's tipsy writer refuses, naming the quantity and the row,
    # and writes nothing.
    pos, vel, mass = np.ones((4, 3)), np.zeros((4, 3)), np.ones(4)
    time = 0.0
    arrays = {"positions": pos, "velocities": vel, "masses": mass}
    if field == "time":
        time = value
    elif field == "masses":
        mass[row] = value
    else:
        arrays[field][row, 0] = value
    snap = grove.Snapshot(time, pos, vel, mass)
    with pytest.raises(grove.InvalidArgumentError, match=match):
        grove.write_tipsy(tmp_path / "s.tipsy", snap)
    assert not (tmp_path / "s.tipsy").exists()


def test_render_writes_a_png(tmp_path):
    with grove.NBody.from_ic("cold", 100) as sim:
        try:
            sim.render(tmp_path / "r.png", width=64)
        except grove.UnsupportedError:
            pytest.skip("grove built without libpng")
    assert (tmp_path / "r.png").read_bytes()[:4] == b"\x89PNG"


def test_nbody_bad_arguments():
    with pytest.raises(grove.InvalidArgumentError, match="kind"):
        grove.NBody.from_ic("galaxy", 10)
    with pytest.raises(grove.InvalidArgumentError):
        grove.NBody(np.zeros((2, 3)), np.zeros((2, 3)), np.ones(2), dt=-1.0)


@pytest.mark.parametrize("center, extent", [([np.nan, 0, 0], None), ([0, np.inf, 0], None), (None, np.nan)])
def test_render_refuses_what_is_not_finite(tmp_path, center, extent):
    with grove.NBody.from_ic("plummer", 100, seed=1) as sim:
        with pytest.raises(grove.InvalidArgumentError, match="center|extent") as e:
            sim.render(tmp_path / "r.png", center=center, extent=extent)
    assert "\n" not in str(e.value)
    assert not (tmp_path / "r.png").exists()
