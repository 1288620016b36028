#!/usr/bin/env python3
"""pynbody and yt (PyPI) load grove's HDF5 snapshots as grove wrote them.

    python3 tests/peer/snapshots_hdf5.py        (from the repository root, after make)

Runs `build/grove nbody` twice from one Hernquist start in kpc, 1e10 Msun,
km/s (--units), the same steps: once writing .npy snapshots (grove's own
numbers), once with --format hdf5 (GADGET-4 layout, docs/snapshots.md).
Each HDF5 snapshot is then loaded with pynbody and with yt, and must hold
grove's positions, velocities, masses and ids (rows) bit for bit, its box
(none: BoxSize 0), its time, and label them in the run's units. yt's
Gadget frontend reads no units from a file: it gets them, as its docs say,
through unit_base, here from the file's Parameters group. Exits nonzero
on any difference or when pynbody, yt or h5py is missing (.ci/run installs
them; make check does not need them).
"""
from __future__ import annotations

import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np

import h5py
import pynbody
import yt

ROOT = Path(__file__).resolve().parents[2]
GROVE = str(ROOT / "build" / "grove")
KPC_CM, KM_S_CM = 3.0856775814913673e21, 1e5
MSUN_G = 1.3271244e20 / 6.67430e-11 * 1e3
GYR_S = 3.15576e16
DT, STEPS = 0.01, 2


def run(*args) -> None:
    subprocess.run([GROVE, *map(str, args)], check=True, capture_output=True)


def compare(where: str, got: dict, want: dict) -> list[str]:
    """Arrays by name, ordered by id; each must equal grove's exactly."""
    order = np.argsort(got["ids"])
    bad = []
    for key, value in want.items():
        g = np.asarray(got[key])[order]
        if g.shape != value.shape or not np.array_equal(g, value):
            bad.append(f"{where}: {key} differs from grove's ({g.shape} vs {value.shape})")
    return bad


def check_pynbody(path: Path, want: dict, time_gyr: float) -> list[str]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # it looks for per-dataset unit attributes first, then the file's
        f = pynbody.load(str(path))
        got = {"pos": f["pos"].view(np.ndarray), "vel": f["vel"].view(np.ndarray), "mass": f["mass"].view(np.ndarray),
               "ids": f["iord"].view(np.ndarray)}
        units = {"pos": f["pos"].units.ratio("cm") / KPC_CM, "vel": f["vel"].units.ratio("cm s^-1") / KM_S_CM,
                 "mass": f["mass"].units.ratio("g") / (1e10 * MSUN_G)}
        time = float(f.properties["time"].in_units("Gyr"))
        box = float(f.properties.get("boxsize", 0 * pynbody.units.kpc).in_units("kpc"))
    bad = compare(f"pynbody {path.name}", got, {"pos": want["pos"], "vel": want["vel"], "mass": want["mass"],
                                                "ids": want["ids"]})
    bad += [f"pynbody {path.name}: {key} in {ratio:.12g} of the run's unit" for key, ratio in units.items()
            if abs(ratio - 1) > 1e-9]
    if abs(time - time_gyr) > 1e-9 * time_gyr or box != 0:
        bad.append(f"pynbody {path.name}: time {time} Gyr (want {time_gyr}), box {box}")
    print(f"pynbody {path.name}: {len(got['ids'])} particles, t {time:.6g} Gyr: {'agree' if not bad else 'differ'}")
    return bad


def check_yt(path: Path, want: dict, time_gyr: float) -> list[str]:
    with h5py.File(path, "r") as f:
        params = dict(f["Parameters"].attrs)
    unit_base = {key: float(params[key]) for key in ("UnitLength_in_cm", "UnitMass_in_g", "UnitVelocity_in_cm_per_s")}
    extent = float(np.abs(want["pos"]).max()) * 2 + 1
    ds = yt.load(str(path), unit_base=unit_base, bounding_box=[[-extent, extent]] * 3)
    ad = ds.all_data()
    got = {"pos": ad["PartType1", "Coordinates"].to("code_length").d, "vel": ad["PartType1", "Velocities"].to("code_velocity").d,
           "mass": ad["PartType1", "Masses"].to("code_mass").d, "ids": ad["PartType1", "ParticleIDs"].d.astype(np.int64)}
    bad = compare(f"yt {path.name}", got, want)
    units = {"length": float(ds.length_unit.to("cm")) / KPC_CM, "velocity": float(ds.velocity_unit.to("cm/s")) / KM_S_CM,
             "mass": float(ds.mass_unit.to("g")) / (1e10 * MSUN_G)}
    bad += [f"yt {path.name}: {key} unit is {v:.12g} of the run's" for key, v in units.items() if abs(v - 1) > 1e-9]
    time = float(ds.current_time.to("Gyr"))
    if abs(time - time_gyr) > 1e-9 * time_gyr or ds.cosmological_simulation:
        bad.append(f"yt {path.name}: time {time} Gyr (want {time_gyr}), cosmological {ds.cosmological_simulation}")
    print(f"yt {path.name}: {len(got['ids'])} particles, t {time:.6g} Gyr: {'agree' if not bad else 'differ'}")
    return bad


def main() -> int:
    yt.set_log_level(40)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        run("nbody", "--ic", "hernquist", "--n", 1000, "--seed", 7, "--steps", 0, "--out", tmp / "start", "--quiet")
        common = ["nbody", "--input", tmp / "start" / "snap_000000.npy", "--units", "kpc,1e10Msun,km/s", "--dt", DT,
                  "--steps", STEPS, "--snapshot-every", 1, "--quiet"]
        run(*common, "--out", tmp / "npy")
        run(*common, "--out", tmp / "h5", "--format", "hdf5")
        failures = []
        for step in range(STEPS + 1):
            rows = np.load(tmp / "npy" / f"snap_{step:06d}.npy")
            want = {"pos": rows[:, :3], "vel": rows[:, 3:6], "mass": rows[:, 6], "ids": np.arange(len(rows))}
            time_gyr = step * DT * KPC_CM / KM_S_CM / GYR_S
            path = tmp / "h5" / f"snap_{step:06d}.hdf5"
            failures += check_pynbody(path, want, time_gyr)
            failures += check_yt(path, want, time_gyr)
        for line in failures:
            print("snapshots_hdf5:", line)
        return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
