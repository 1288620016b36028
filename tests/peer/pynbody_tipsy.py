#!/usr/bin/env python3
"""pynbody (PyPI) reads grove's tipsy snapshots as grove wrote them.

    python3 tests/peer/pynbody_tipsy.py        (from the repository root, after make)

Runs `build/grove nbody --ic hernquist ... --snapshot-every 3 --tipsy` (block
steps, so the snapshot time is not a round number of steps), loads each
tipsy file with pynbody and checks positions, velocities, masses, the time
and eps against grove's own .npy snapshot of the same step rounded to
float32, and phi against `grove.gravity` potentials at the snapshot's
positions with the run's theta and softening (the .npy snapshot holds no
potentials), rounded the same way. Then, for each physical --units system
(docs/nbody.md), a run from a snapshot in those units: pynbody must load
its tipsy files without its "no param file" warning and label pos, vel,
mass and the time in the system's units. Exits nonzero on any difference or
when pynbody is missing (.ci/run installs it; make check does not need it).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
# The binding of the tree and the library build/grove links (make all).
sys.path.insert(0, str(ROOT / "python"))
os.environ.setdefault("GROVE_LIB", str(ROOT / "build" / "libgrove.so"))

import grove  # noqa: E402
import pynbody  # noqa: E402


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "run"
        args = ["--ic", "hernquist", "--n", "2001", "--seed", "4", "--dt", "0.0625", "--timestep", "block",
                "--eta", "0.1", "--max-level", "6", "--theta", "0.6", "--softening", "0.02", "--steps", "6",
                "--snapshot-every", "3", "--tipsy", "--out", str(out), "--json", "--quiet"]
        run = json.loads(subprocess.run([str(ROOT / "build" / "grove"), "nbody", *args], check=True,
                                        capture_output=True, text=True).stdout)
        failures = []
        for step in (0, 3, 6):
            before = len(failures)
            snap = np.load(out / f"snap_{step:06d}.npy")
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # no param file next to the snapshot: pynbody's defaults
                f = pynbody.load(str(out / f"snap_{step:06d}.tipsy"))
            pos, vel, mass = snap[:, :3], snap[:, 3:6], snap[:, 6]
            phi = grove.gravity(pos, mass, theta=run["theta"], softening=run["softening"], potentials=True)[1]
            want = {"pos": pos, "vel": vel, "mass": mass, "eps": np.full(len(mass), run["softening"]), "phi": phi}
            for key, value in want.items():
                got, value = np.asarray(f[key]).astype(np.float32), value.astype(np.float32)
                if got.shape != value.shape:
                    failures.append(f"step {step} {key}: shape {got.shape}, grove's {value.shape}")
                elif not np.array_equal(got, value):
                    failures.append(f"step {step} {key}: {np.count_nonzero(got != value)} of {len(value)} differ "
                                    "from grove's in float32")
            time = float(f.properties["time"])
            want_time = step * run["dt"]
            if np.float32(time) != np.float32(want_time) or len(f) != len(mass):
                failures.append(f"step {step}: time {time} (want {want_time}), {len(f)} particles (want {len(mass)})")
            verdict = "agree" if len(failures) == before else "differ"
            print(f"step {step}: {len(f)} particles, t {time:g}: pos vel mass eps phi {verdict} (float32)")
        failures += check_units(Path(tmp), out / "snap_000000.npy")
        for line in failures:
            print("pynbody_tipsy:", line)
        return 1 if failures else 0


# --units systems and the pynbody units of pos, vel and mass they mean.
UNITS = {"kpc,1e10Msun,km/s": ("kpc", "km s^-1", "1e10 Msol"), "si": ("m", "m s^-1", "kg"),
         "cgs": ("cm", "cm s^-1", "g")}


def check_units(tmp: Path, start: Path) -> list[str]:
    failures = []
    for i, (system, (length, velocity, mass)) in enumerate(UNITS.items()):
        out = tmp / f"units{i}"
        subprocess.run([str(ROOT / "build" / "grove"), "nbody", "--input", str(start), "--units", system, "--steps", "2",
                        "--dt", "0.01", "--tipsy", "--out", str(out), "--quiet"], check=True)
        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always")
            f = pynbody.load(str(out / "snap_000002.tipsy"))
            labels = {key: f[key].units for key in ("pos", "vel", "mass")}
            time = f.properties["time"].units
        want = {"pos": pynbody.units.Unit(length), "vel": pynbody.units.Unit(velocity),
                "mass": pynbody.units.Unit(mass)}
        wrong = [f"{key} in {labels[key]} (want {want[key]})" for key in want if labels[key] != want[key]]
        if time != want["pos"] / want["vel"]:
            wrong.append(f"time in {time} (want {want['pos'] / want['vel']})")
        wrong += [f"pynbody warned: {w.message}" for w in said if "param" in str(w.message)]
        print(f"--units {system}: pynbody reads pos {labels['pos']}, vel {labels['vel']}, mass {labels['mass']}, "
              f"time {time}: {'as written' if not wrong else 'wrong'}")
        failures += [f"--units {system}: {line}" for line in wrong]
    return failures


if __name__ == "__main__":
    sys.exit(main())
