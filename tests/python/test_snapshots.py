"""Gadget snapshots through the grove command: files written here from the
layouts' definitions (SWIFT's HDF5 with h5py; Gadget-2 binary format 1
and 2 with struct) read back exactly, grove's HDF5 output reads in h5py
as grove's own .npy of the same run, and bad files fail with one line
naming the file and the dataset, writing nothing. The HDF5 tests skip
where h5py is missing or grove was built without libhdf5."""
import json
import struct
import subprocess

import numpy as np
import pytest

from conftest import CLI


def grove(*args, cwd=None):
    return subprocess.run([str(CLI), *map(str, args)], capture_output=True, text=True, cwd=cwd)


@pytest.fixture(scope="module")
def hdf5_built():
    if not CLI.exists():
        pytest.skip(f"no grove command at {CLI} (run make)")
    info = json.loads(grove("info", "--json").stdout.splitlines()[-1])
    if not info.get("hdf5", "no").startswith("yes"):
        pytest.skip("grove was built without libhdf5")


@pytest.fixture
def h5py(hdf5_built):
    return pytest.importorskip("h5py")


def start_snapshot(path, out, *extra):
    """The particles grove nbody starts from (its step-0 .npy, float64
    x y z vx vy vz m rows)."""
    run = grove("nbody", "--input", path, "--steps", 0, "--out", out, "--quiet", *extra)
    assert run.returncode == 0, run.stderr
    return np.load(out / "snap_000000.npy")


# ---- SWIFT's layout, written by h5py -------------------------------------------

def write_swift(h5py, path, rng, drop=None, change=None):
    """A SWIFT snapshot: 7 particle types, gas (type 0) and dark matter
    (type 1) present, float64 coordinates, float32 velocities and masses,
    int64 ids, BoxSize of 3 lengths, the Units and Cosmology groups.
    drop: a Header attribute left out; change(f): a last edit."""
    counts = [5, 9, 0, 0, 0, 0, 0]
    data = {}
    with h5py.File(path, "w") as f:
        h = f.create_group("Header")
        attrs = {"NumPart_ThisFile": np.array(counts, np.int64), "NumPart_Total": np.array(counts, np.uint32),
                 "NumPart_Total_HighWord": np.zeros(7, np.uint32), "MassTable": np.zeros(7),
                 "BoxSize": np.array([50.0, 50.0, 50.0]), "Time": np.array([0.5]), "Redshift": np.array([1.0]),
                 "NumFilesPerSnapshot": np.array([1], np.int32), "Code": b"SWIFT"}
        for key, value in attrs.items():
            if key != drop:
                h.attrs[key] = value
        u = f.create_group("Units")
        u.attrs["Unit length in cgs (U_L)"] = [3.08567758149e24]
        u.attrs["Unit mass in cgs (U_M)"] = [1.98841e43]
        u.attrs["Unit time in cgs (U_t)"] = [3.08567758149e19]
        c = f.create_group("Cosmology")
        c.attrs["Omega_m"], c.attrs["Omega_lambda"], c.attrs["h"] = [0.3], [0.7], [0.68]
        first = 0
        for t in (0, 1):
            n = counts[t]
            g = f.create_group(f"PartType{t}")
            d = {"Coordinates": rng.uniform(0, 50, (n, 3)), "Velocities": rng.normal(0, 200, (n, 3)).astype(np.float32),
                 "Masses": rng.uniform(0.5, 2, n).astype(np.float32), "ParticleIDs": np.arange(first, first + n, dtype=np.int64) + 10**12}
            for key, value in d.items():
                g[key] = value
            data[t] = d
            first += n
        if change:
            change(f)
    return data


def test_swift_snapshot_reads_back_exactly(h5py, tmp_path, rng):
    data = write_swift(h5py, tmp_path / "swift_0010.hdf5", rng)
    rows = start_snapshot(tmp_path / "swift_0010.hdf5", tmp_path / "all")
    want = {k: np.concatenate([data[0][k], data[1][k]]) for k in data[0]}
    assert np.array_equal(rows[:, :3], want["Coordinates"])
    assert np.array_equal(rows[:, 3:6], want["Velocities"].astype(np.float64))
    assert np.array_equal(rows[:, 6], want["Masses"].astype(np.float64))
    # --types 1: the dark matter alone.
    rows = start_snapshot(tmp_path / "swift_0010.hdf5", tmp_path / "dm", "--types", "1")
    assert np.array_equal(rows[:, :3], data[1]["Coordinates"])
    # Every command that takes points reads it: kNN of the positions, by --types.
    out = grove("knn", tmp_path / "swift_0010.hdf5", "--types", "0", "-k", 2, "--indices", tmp_path / "i.npy",
                "--json", "--quiet")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout.splitlines()[-1])["n"] == 5


BAD = {
    "missing header attribute": (dict(drop="Time"), "Header has no attribute Time"),
    "wrong dtype": (dict(change=lambda f: (f["PartType1"].__delitem__("Coordinates"),
                                           f["PartType1"].create_dataset("Coordinates", data=np.zeros((9, 3), np.int16)))),
                    "PartType1/Coordinates is int16"),
    "truncated dataset": (dict(change=lambda f: (f["PartType0"].__delitem__("Masses"),
                                                 f["PartType0"].create_dataset("Masses", data=np.ones(4, np.float32)))),
                          "PartType0/Masses has shape (4,)"),
    "NumPart disagreeing": (dict(change=lambda f: f["Header"].attrs.__setitem__(
        "NumPart_ThisFile", np.array([5, 8, 0, 0, 0, 0, 0], np.int64))), "PartType1/Coordinates has shape (9, 3)"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_hdf5_snapshot_fails_naming_file_and_dataset(h5py, tmp_path, rng, case):
    kwargs, text = BAD[case]
    path = tmp_path / "bad.hdf5"
    write_swift(h5py, path, rng, **kwargs)
    for args, output in ((["knn", path, "-k", 2, "--indices", tmp_path / "i.npy"], tmp_path / "i.npy"),
                         (["nbody", "--input", path, "--steps", 1, "--out", tmp_path / "run"], tmp_path / "run"),
                         (["fof", path, "--b", 0.2, "--groups", tmp_path / "g.npy"], tmp_path / "g.npy")):
        run = grove(*args)
        assert run.returncode == 1, (args[0], run.stderr)
        lines = run.stderr.strip().splitlines()
        assert len(lines) == 1 and str(path) in lines[0] and text in lines[0], (args[0], run.stderr)
        assert not output.exists()


def test_truncated_hdf5_file_fails(h5py, tmp_path, rng):
    path = tmp_path / "cut.hdf5"
    write_swift(h5py, path, rng)
    path.write_bytes(path.read_bytes()[:-200])
    run = grove("knn", path, "-k", 2, "--indices", tmp_path / "i.npy")
    assert run.returncode == 1 and str(path) in run.stderr and "truncated" in run.stderr, run.stderr
    assert not (tmp_path / "i.npy").exists()


# ---- grove's HDF5 output, read by h5py ------------------------------------------

def test_nbody_hdf5_output_is_its_npy_output(h5py, tmp_path):
    args = ["nbody", "--ic", "hernquist", "--n", 300, "--seed", 2, "--steps", 2, "--dt", 0.0625, "--snapshot-every", 1,
            "--quiet"]
    assert grove(*args, "--out", tmp_path / "npy").returncode == 0
    assert grove(*args, "--out", tmp_path / "h5", "--format", "hdf5").returncode == 0
    for step in (0, 1, 2):
        rows = np.load(tmp_path / "npy" / f"snap_{step:06d}.npy")
        with h5py.File(tmp_path / "h5" / f"snap_{step:06d}.hdf5", "r") as f:
            h, p = f["Header"].attrs, f["PartType1"]
            assert list(h["NumPart_ThisFile"]) == [0, 300, 0, 0, 0, 0] and h["NumFilesPerSnapshot"] == 1
            assert h["Time"] == step * 0.0625 and list(h["MassTable"]) == [0.0] * 6
            assert np.array_equal(p["Coordinates"][...], rows[:, :3])
            assert np.array_equal(p["Velocities"][...], rows[:, 3:6])
            assert np.array_equal(p["Masses"][...], rows[:, 6])
            assert np.array_equal(p["ParticleIDs"][...], np.arange(300))
            assert p["Coordinates"].dtype == np.float64 and "Units" not in f  # Henon units state none


def test_fof_hdf5_catalogue_is_its_table(h5py, tmp_path, rng):
    x = np.concatenate([rng.normal(c, 0.01, (40, 3)) for c in (0.2, 0.5, 0.8)] + [rng.uniform(0, 1, (80, 3))])
    snap = np.hstack([x, rng.normal(0, 1, (len(x), 3)), rng.uniform(1, 2, (len(x), 1))])
    np.save(tmp_path / "s.npy", snap)
    for out in ("c.npy", "c.hdf5"):
        run = grove("fof", tmp_path / "s.npy", "--linking-length", 0.02, "--min-members", 5, "--groups",
                    tmp_path / f"g_{out}.npy", "--catalogue", tmp_path / out)
        assert run.returncode == 0, run.stderr
    table, groups = np.load(tmp_path / "c.npy"), np.load(tmp_path / "g_c.npy.npy")
    with h5py.File(tmp_path / "c.hdf5", "r") as f:
        g = f["Group"]
        assert np.array_equal(g["GroupLen"][...], table[:, 1])
        assert np.array_equal(g["GroupMass"][...], table[:, 3])
        assert np.array_equal(g["GroupPos"][...], table[:, 4:7])
        assert np.array_equal(g["GroupVel"][...], table[:, 7:10])
        assert np.array_equal(g["GroupVelDisp"][...], table[:, 10])
        assert np.array_equal(g["GroupRadius"][...], table[:, 11])
        offsets, ids = g["GroupOffset"][...], f["IDs/ID"][...]
        assert f["Header"].attrs["Ngroups_Total"] == len(table) and f["Header"].attrs["Nids_Total"] == len(ids)
        for k in range(len(table)):
            assert np.array_equal(ids[offsets[k]:offsets[k] + g["GroupLen"][k]], np.flatnonzero(groups == k))


# ---- Gadget-2 binary, written here --------------------------------------------

def gadget2(fmt, endian, npart, masses, dbl, long_ids, rng):
    """A Gadget-2 file (format 1 or 2) and its particles in type order."""
    e, f = endian, ("d" if dbl else "f")
    n = sum(npart)
    pos, vel = rng.uniform(0, 10, (n, 3)), rng.normal(0, 1, (n, 3))
    ids = np.arange(n) + 5
    heavy = [t for t in range(6) if npart[t] and masses[t] == 0]
    mass_rows = np.concatenate([np.full(npart[t], masses[t]) if masses[t] else rng.uniform(1, 2, npart[t])
                                for t in range(6)])
    if not dbl:
        pos, vel, mass_rows = pos.astype(np.float32), vel.astype(np.float32), mass_rows.astype(np.float32)
    out = bytearray()

    def record(name, body):
        if fmt == 2:
            out.extend(struct.pack(e + "i4sii", 8, name.encode(), len(body) + 8, 8))
        out.extend(struct.pack(e + "i", len(body)) + body + struct.pack(e + "i", len(body)))

    head = struct.pack(e + "6i6d2d2i6I2i4d", *npart, *masses, 0.25, 3.0, 0, 0, *npart, 0, 1, 10.0, 0.3, 0.7, 0.7)
    record("HEAD", head + bytes(256 - len(head)))
    record("POS ", pos.astype(e + f).tobytes())
    record("VEL ", vel.astype(e + f).tobytes())
    record("ID  ", ids.astype(e + ("u8" if long_ids else "u4")).tobytes())
    starts = np.cumsum([0] + list(npart))
    if heavy:
        record("MASS", np.concatenate([mass_rows[starts[t]:starts[t + 1]] for t in heavy]).astype(e + f).tobytes())
    return bytes(out), np.hstack([pos, vel, mass_rows[:, None]]).astype(np.float64)


@pytest.mark.parametrize("fmt", [1, 2])
@pytest.mark.parametrize("endian", ["<", ">"])
@pytest.mark.parametrize("dbl", [False, True])
def test_gadget2_snapshot_reads_back(tmp_path, rng, fmt, endian, dbl):
    if not CLI.exists():
        pytest.skip(f"no grove command at {CLI} (run make)")
    data, rows = gadget2(fmt, endian, [3, 6, 0, 0, 2, 0], [0, 0.125, 0, 0, 0, 0], dbl, fmt == 2, rng)
    (tmp_path / "snapshot_012").write_bytes(data)
    got = start_snapshot(tmp_path / "snapshot_012", tmp_path / "run")
    assert np.array_equal(got, rows)


def test_gravity_takes_a_snapshot(tmp_path, rng):
    # grove gravity IN: a snapshot's positions and masses, as the same (n, 4) .npy gives them.
    if not CLI.exists():
        pytest.skip(f"no grove command at {CLI} (run make)")
    data, rows = gadget2(1, "<", [0, 40, 0, 0, 10, 0], [0, 0.5, 0, 0, 0, 0], True, False, rng)
    (tmp_path / "snapshot_001").write_bytes(data)
    np.save(tmp_path / "in.npy", rows[:, [0, 1, 2, 6]])
    for name in ("snapshot_001", "in.npy"):
        run = grove("gravity", tmp_path / name, "--theta", 0.5, "--acc", tmp_path / f"acc_{name}.npy", "--quiet")
        assert run.returncode == 0, run.stderr
    assert np.array_equal(np.load(tmp_path / "acc_snapshot_001.npy"), np.load(tmp_path / "acc_in.npy.npy"))
    # --types 4: the stars alone.
    run = grove("gravity", tmp_path / "snapshot_001", "--types", 4, "--acc", tmp_path / "acc4.npy", "--quiet")
    assert run.returncode == 0 and len(np.load(tmp_path / "acc4.npy")) == 10, run.stderr
