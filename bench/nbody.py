#!/usr/bin/env python3
"""One tree-gravity force evaluation: grove (ctypes on build/libgrove.so)
against REBOUND's tree gravity (pip package `rebound`), on the same Plummer
sphere (Henon units, softening 0.01).

    make && python3 bench/nbody.py [--sizes 100000,1000000] [--threads 1,2] [--quick]
    python3 bench/nbody.py --energy      # 10^4 particles, 1000 steps: energy error
    python3 bench/nbody.py --block       # block vs shared steps at equal energy error (bench/nbody_block.py)

For each n, theta and thread count: particles per second of one call (tree
build + moments + walk + kernels; minimum over --repeats), the median and
99th-percentile relative acceleration error against a double-precision
direct sum at --samples particles, interactions per particle, and the
achieved flop rate (23 flops per particle pair, 65 per particle-cell pair).
REBOUND runs one leapfrog step with a tiny dt (tree build + one force
evaluation) at the same theta, and at the largest theta whose median error
is at most grove's, so the rates compare at equal accuracy.
"""
import argparse
import ctypes as C
import os
import platform
import sys
import time

import numpy as np

import nbody_block
from machine import cpu_model

HERE = os.path.dirname(os.path.abspath(__file__))


class Points(C.Structure):
    _fields_ = [("data", C.c_void_p), ("n", C.c_size_t), ("d", C.c_size_t), ("dtype", C.c_int),
                ("stride", C.c_size_t)]


GROVE_FLOAT64 = 2


def points(x):
    """The grove_points view of packed (n, 3) float64 positions."""
    return Points(ptr(x), len(x), 3, GROVE_FLOAT64, 0)


class GravityParams(C.Structure):
    _fields_ = [("theta", C.c_double), ("softening", C.c_double), ("G", C.c_double), ("leaf_size", C.c_size_t),
                ("group_size", C.c_size_t)]


class GravityStats(C.Structure):
    _fields_ = [("particle_interactions", C.c_double), ("cell_interactions", C.c_double), ("cells", C.c_size_t),
                ("leaves", C.c_size_t), ("groups", C.c_size_t), ("depth", C.c_int), ("flops", C.c_double)]


class Options(C.Structure):
    _fields_ = [("threads", C.c_int), ("progress", C.c_void_p), ("progress_user", C.c_void_p),
                ("memory_budget", C.c_size_t), ("cancel", C.c_void_p), ("mpi", C.c_void_p)]


class IcParams(C.Structure):
    _fields_ = [("kind", C.c_int), ("n", C.c_size_t), ("seed", C.c_uint64), ("separation", C.c_double),
                ("impact", C.c_double), ("bh_mass", C.c_double)]


class NbodyParams(C.Structure):
    _fields_ = [("gravity", GravityParams), ("dt", C.c_double), ("eta", C.c_double), ("conserve_momentum", C.c_int),
                ("timestep", C.c_int), ("max_level", C.c_int)]


class Diag(C.Structure):
    _fields_ = [("time", C.c_double), ("step", C.c_uint64), ("kinetic", C.c_double), ("potential", C.c_double),
                ("energy", C.c_double), ("momentum", C.c_double * 3), ("angular_momentum", C.c_double * 3),
                ("com", C.c_double * 3), ("mass", C.c_double)]


def load(path):
    lib = C.CDLL(path)
    lib.grove_gravity.restype = C.c_int
    lib.grove_last_error.restype = C.c_char_p
    lib.grove_nbody_create.restype = C.c_int
    lib.grove_nbody_step.restype = C.c_int
    lib.grove_nbody_force_evaluations.restype = C.c_uint64
    lib.grove_nbody_levels.restype = C.POINTER(C.c_uint8)
    return lib


def ptr(a):
    return a.ctypes.data_as(C.c_void_p)


def plummer(lib, n, seed=1):
    x, v, m = np.empty((n, 3)), np.empty((n, 3)), np.empty(n)
    ic = IcParams(1, n, seed, 10.0, 1.0, 0.01)
    if lib.grove_ic_generate(C.byref(ic), ptr(x), ptr(v), ptr(m)) != 0:
        raise RuntimeError(lib.grove_last_error().decode())
    return x, v, m


def direct(x, m, idx, eps):
    """Direct-sum accelerations at rows idx, in double, in chunks of rows
    small enough that a chunk's (rows, n, 3) differences stay near 0.5 GB."""
    out = np.zeros((len(idx), 3))
    rows = max(1, min(64, 20_000_000 // len(x)))
    for lo in range(0, len(idx), rows):
        i = idx[lo:lo + rows]
        d = x[None, :, :] - x[i, None, :]
        r2 = (d * d).sum(axis=2) + eps * eps
        r2[np.arange(len(i)), i] = np.inf  # no self-force
        w = m[None, :] / (r2 * np.sqrt(r2))
        out[lo:lo + rows] = (d * w[:, :, None]).sum(axis=1)
    return out


def rel_err(a, ref):
    e = np.sqrt(((a - ref) ** 2).sum(axis=1) / (ref ** 2).sum(axis=1))
    return np.median(e), np.percentile(e, 99)


def grove_once(lib, x, m, theta, eps, threads):
    n = len(m)
    acc = np.empty((n, 3))
    p = GravityParams(theta, eps, 1.0, 16, 64)
    st = GravityStats()
    o = Options(threads, None, None, 0, None)
    t = time.perf_counter()
    if lib.grove_gravity(points(x), ptr(m), C.byref(p), ptr(acc), None, C.byref(st), C.byref(o)) != 0:
        raise RuntimeError(lib.grove_last_error().decode())
    return time.perf_counter() - t, acc, st


def rebound_tree(x, v, m, theta, eps, dt):
    """A REBOUND simulation of the particles with its tree gravity (open
    boundary, one root box) and the leapfrog integrator at step dt."""
    import rebound
    n = len(m)
    sim = rebound.Simulation()
    sim.G = 1.0
    sim.root_size = 2.2 * float(np.abs(x).max())
    sim.N_root_x = sim.N_root_y = sim.N_root_z = 1
    sim.boundary = "open"
    sim.gravity = "tree"
    sim.opening_angle2 = theta * theta
    sim.softening = eps
    sim.integrator = "leapfrog"
    sim.dt = dt
    for _ in range(n):
        sim.add(m=0.0)
    sim.set_serialized_particle_data(xyz=np.ascontiguousarray(x).ravel(), vxvyvz=np.ascontiguousarray(v).ravel(),
                                     m=np.ascontiguousarray(m))
    return sim


def rebound_once(x, m, theta, eps, idx):
    # Positions move by ~1e-12: the forces are those of the given particles.
    sim = rebound_tree(x, np.zeros_like(x), m, theta, eps, 1e-12)
    t = time.perf_counter()
    sim.steps(1)
    dt = time.perf_counter() - t
    ps = sim.particles
    acc = np.array([[ps[int(i)].ax, ps[int(i)].ay, ps[int(i)].az] for i in idx])
    return dt, acc


def energy_run(lib, n, steps, dt, theta, eps, threads):
    x, v, m = plummer(lib, n, 1)
    p = NbodyParams(GravityParams(theta, eps, 1.0, 16, 64), dt, 0.0)
    sim = C.c_void_p()
    o = Options(threads, None, None, 0, None)
    lib.grove_nbody_create(points(x), ptr(v), ptr(m), C.byref(p), C.byref(o), C.byref(sim))
    d0, d = Diag(), Diag()
    lib.grove_nbody_diagnostics(sim, C.byref(d0))
    worst, t = 0.0, time.perf_counter()
    for k in range(0, steps, 50):
        lib.grove_nbody_step(sim, C.c_uint64(50), C.byref(o))
        lib.grove_nbody_diagnostics(sim, C.byref(d))
        err = abs((d.energy - d0.energy) / d0.energy)
        worst = max(worst, err)
        print(f"  step {d.step:5d}  t {d.time:7.3f}  E {d.energy:.10f}  dE/E {err:.3e}", flush=True)
    sec = time.perf_counter() - t
    print(f"energy: n {n}, {steps} steps of {dt}, theta {theta}, eps {eps}: max |dE/E| {worst:.3e}, "
          f"final {abs((d.energy - d0.energy) / d0.energy):.3e}, {n * steps / sec:.3g} particle-steps/s")
    lib.grove_nbody_free(sim)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lib", default=os.path.join(HERE, "..", "build", "libgrove.so"))
    ap.add_argument("--sizes", default="100000,1000000")
    ap.add_argument("--thetas", default="0.5,0.75")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--samples", type=int, default=1000)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--softening", type=float, default=0.01)
    ap.add_argument("--quick", action="store_true", help="n = 10^5 only")
    ap.add_argument("--no-rebound", action="store_true")
    ap.add_argument("--rebound-max-n", type=int, default=1000000)
    ap.add_argument("--rebound-budget", type=float, default=60,
                    help="seconds of REBOUND runs per theta when searching for equal accuracy")
    ap.add_argument("--energy", action="store_true", help="the 1000-step energy run instead")
    nbody_block.add_arguments(ap)
    a = ap.parse_args()
    lib = load(a.lib)
    cpu = cpu_model()
    print(f"# machine: {cpu}, {os.cpu_count()} cpus, {platform.system()} {platform.release()}")
    if a.energy:
        energy_run(lib, 10000, 1000, 1.0 / 128, 0.75, a.softening, 2)
        return
    if a.block:
        nbody_block.bench(sys.modules[__name__], lib, a)
        return
    sizes = [100000] if a.quick else [int(s) for s in a.sizes.split(",")]
    thetas = [float(t) for t in a.thetas.split(",")]
    threads = [int(t) for t in a.threads.split(",")]
    eps = a.softening
    print(f"{'code':8} {'n':>8} {'theta':>5} {'thr':>3} {'seconds':>8} {'Mpart/s':>8} {'median':>9} {'p99':>9} "
          f"{'inter/p':>8} {'GF/s':>6}")
    for n in sizes:
        x, _, m = plummer(lib, n)
        rng = np.random.default_rng(0)
        idx = np.sort(rng.choice(n, size=min(a.samples, n), replace=False))
        ref = direct(x, m, idx, eps)
        grove_median = {}
        for theta in thetas:
            for t in threads:
                best = None
                for _ in range(a.repeats):
                    sec, acc, st = grove_once(lib, x, m, theta, eps, t)
                    best = sec if best is None else min(best, sec)
                med, p99 = rel_err(acc[idx], ref)
                grove_median[theta] = med
                inter = (st.particle_interactions + st.cell_interactions) / n
                print(f"{'grove':8} {n:8d} {theta:5.2f} {t:3d} {best:8.3f} {n / best / 1e6:8.3f} {med:9.2e} "
                      f"{p99:9.2e} {inter:8.0f} {st.flops / best / 1e9:6.1f}", flush=True)
        if a.no_rebound or n > a.rebound_max_n:
            continue
        try:
            import rebound  # noqa: F401
        except ImportError:
            print("# rebound not installed (pip install rebound): skipped")
            continue
        for theta in thetas:
            sec, acc = rebound_once(x, m, theta, eps, idx)
            med, p99 = rel_err(acc, ref)
            print(f"{'rebound':8} {n:8d} {theta:5.2f} {1:3d} {sec:8.3f} {n / sec / 1e6:8.3f} {med:9.2e} {p99:9.2e}",
                  flush=True)
            # The largest theta at which REBOUND is at least as accurate as grove at this theta.
            spent = sec
            for th in [theta * f for f in (0.8, 0.65, 0.5, 0.4, 0.3, 0.22, 0.16)]:
                if med <= grove_median[theta]:
                    break
                if spent > a.rebound_budget:
                    print(f"# rebound: stopped searching after {spent:.0f} s; at equal accuracy it is slower "
                          f"than the last line")
                    break
                sec, acc = rebound_once(x, m, th, eps, idx)
                spent += sec
                med, p99 = rel_err(acc, ref)
                print(f"{'rebound':8} {n:8d} {th:5.2f} {1:3d} {sec:8.3f} {n / sec / 1e6:8.3f} {med:9.2e} {p99:9.2e}"
                      f"   (matching grove at theta {theta})", flush=True)


if __name__ == "__main__":
    main()
