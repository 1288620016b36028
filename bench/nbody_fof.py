#!/usr/bin/env python3
"""bench/nbody_fof.py: what halos found while the simulation runs cost,
beside the steps themselves, in the same run.

    make && python3 bench/nbody_fof.py [--n 1000000] [--steps 2] [--threads 1,2]
        [--ics plummer,merger,cold] [--b 0.2] [--grove build/grove]

For each initial condition and thread count, two runs of
`grove nbody --ic IC --n N --seed 1 --steps S --snapshot-every 0`: one
plain, one with `--fof-every 1 --b B` (a catalogue at every step, the
first included). "step s" is a step's wall time (--json seconds / S) in
the plain run and in the FoF run, "fof s" one catalogue's (fof_seconds /
fof_catalogues: the linking length, grove_fof on the state's own arrays,
numbering and the file), "grouped" the share of particles in the last
catalogue's groups of >= 20, and "cost" = (step s + fof s) / step s of
the FoF run: what a step with its catalogue costs over a step without
(the goal: <= 1.3 at 10^6 particles), both timed in one process, so the
load of a shared machine weighs on both alike; "cost/10" the same for a
catalogue every 10 steps. The ICs in Henon units: plummer (the default,
a concentrated sphere: b = 0.2 of the bounding box's mean separation
links its whole core), merger (two Plummer spheres), cold (a uniform
sphere). Single runs on a shared machine: timings are noisy.
"""
import argparse
import os
import platform
import subprocess
import tempfile

from machine import cpu_model, last_json

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def run(grove, ic, n, steps, threads, extra):
    with tempfile.TemporaryDirectory() as out:
        cmd = [grove, "nbody", "--ic", ic, "--n", str(n), "--seed", "1", "--steps", str(steps), "--snapshot-every",
               "0", "--threads", str(threads), "--out", out, "--json", "--quiet", *extra]
        return last_json(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--steps", type=int, default=2)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--ics", default="plummer,merger,cold")
    ap.add_argument("--b", type=float, default=0.2)
    ap.add_argument("--grove", default=os.path.join(ROOT, "build", "grove"))
    args = ap.parse_args()
    print(f"# bench/nbody_fof.py on {cpu_model()}, {os.cpu_count()} CPUs, {platform.platform()}; n = {args.n}, "
          f"{args.steps} steps, --fof-every 1 --b {args.b}")
    print(f"{'ic':8} {'threads':>7} {'step s':>8} {'step s (fof run)':>17} {'fof s':>7} {'groups':>7} {'grouped':>8} "
          f"{'cost':>6} {'cost/10':>8}")
    for ic in args.ics.split(","):
        for threads in map(int, args.threads.split(",")):
            plain = run(args.grove, ic, args.n, args.steps, threads, [])
            fof = run(args.grove, ic, args.n, args.steps, threads, ["--fof-every", "1", "--b", str(args.b)])
            step, step_fof = plain["seconds"] / args.steps, fof["seconds"] / args.steps
            per = fof["fof_seconds"] / fof["fof_catalogues"]
            grouped = fof["fof_grouped_particles"] / args.n
            print(f"{ic:8} {threads:7d} {step:8.2f} {step_fof:17.2f} {per:7.2f} {fof['fof_groups']:7d} "
                  f"{grouped:8.2f} {(step_fof + per) / step_fof:6.2f} {(10 * step_fof + per) / (10 * step_fof):8.2f}")


if __name__ == "__main__":
    main()
