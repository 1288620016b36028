"""Block time steps against the shared step at equal energy error
(`bench/nbody.py --block`).

One block-step run (largest step dt_max, levels down to dt_max / 2^K) over
the given time, then shared-step runs at dt_max / 2^k, k = 0, 1, ..., until
one keeps |dE/E| at most the block run's: the cheapest shared step as
accurate as the block run. |dE/E| is the largest relative energy error seen
at the end of every dt_max (the same sampling for every run). Printed side
by side: sink force evaluations, seconds and |dE/E|, and the ratios shared /
block. REBOUND (leapfrog with its tree gravity, the only REBOUND integrator
for a tree-code N-body of this size) runs a few steps of the matched shared
dt at the same theta; its seconds for the whole span are its measured
seconds per step times the number of steps, printed as such.
"""
import ctypes as C
import time

import numpy as np


def run(nb, lib, ic, params, t_end, threads):
    """One grove run from the initial conditions ic = (x, v, m) to t_end in
    steps of params.dt: (sink evaluations, seconds, max |dE/E|, levels)."""
    x, v, m = ic
    sim = C.c_void_p()
    o = nb.Options(threads, None, None, 0, None)
    t = time.perf_counter()
    if lib.grove_nbody_create(nb.points(x), nb.ptr(v), nb.ptr(m), C.byref(params), C.byref(o), C.byref(sim)) != 0:
        raise RuntimeError(lib.grove_last_error().decode())
    d0, d = nb.Diag(), nb.Diag()
    lib.grove_nbody_diagnostics(sim, C.byref(d0))
    steps = int(round(t_end / params.dt))  # t_end is a multiple of dt
    worst = 0.0
    for _ in range(steps):
        if lib.grove_nbody_step(sim, C.c_uint64(1), C.byref(o)) != 0:
            raise RuntimeError(lib.grove_last_error().decode())
        lib.grove_nbody_diagnostics(sim, C.byref(d))
        worst = max(worst, abs((d.energy - d0.energy) / d0.energy))
    sec = time.perf_counter() - t
    evals = lib.grove_nbody_force_evaluations(sim)
    levels = np.ctypeslib.as_array(lib.grove_nbody_levels(sim), shape=(len(m),)).copy()
    lib.grove_nbody_free(sim)
    return evals, sec, worst, levels


def rebound_seconds(nb, ic, theta, eps, dt, steps, probe_steps):
    """REBOUND leapfrog + tree gravity from ic: seconds per step measured
    over probe_steps steps of dt, times steps."""
    sim = nb.rebound_tree(*ic, theta, eps, dt)
    sim.steps(1)  # the first step builds the tree from scratch
    t = time.perf_counter()
    sim.steps(probe_steps)
    per_step = (time.perf_counter() - t) / probe_steps
    return per_step * steps, per_step


def bench(nb, lib, a):
    kinds = {"plummer": 1, "hernquist": 4, "plummer-bh": 5}
    x, v, m = np.empty((a.block_n, 3)), np.empty((a.block_n, 3)), np.empty(a.block_n)
    ic_params = nb.IcParams()
    lib.grove_ic_params_init(C.byref(ic_params))
    ic_params.kind, ic_params.n, ic_params.seed = kinds[a.block_ic], a.block_n, 1
    if lib.grove_ic_generate(C.byref(ic_params), nb.ptr(x), nb.ptr(v), nb.ptr(m)) != 0:
        raise RuntimeError(lib.grove_last_error().decode())
    ic = (x, v, m)
    # A whole number of largest steps, the same span for every run.
    t_end = max(1, round(a.block_time / a.block_dt)) * a.block_dt
    threads = max(int(t) for t in a.threads.split(","))

    def params(dt, timestep, eta=0.0):
        p = nb.NbodyParams()
        lib.grove_nbody_params_init(C.byref(p))
        p.gravity.theta, p.gravity.softening = a.block_theta, a.softening
        p.dt, p.timestep, p.eta, p.max_level = dt, timestep, eta, a.block_max_level
        return p

    print(f"# block vs shared: {a.block_ic} n {a.block_n}, t = {t_end}, theta {a.block_theta}, "
          f"eps {a.softening}, {threads} threads; block dt_max {a.block_dt}, eta {a.block_eta}, "
          f"K {a.block_max_level}")
    print(f"{'run':22} {'evaluations':>12} {'seconds':>9} {'max|dE/E|':>10}")
    evals_b, sec_b, err_b, levels = run(nb, lib, ic, params(a.block_dt, 2, a.block_eta), t_end, threads)
    occupied = np.bincount(levels)
    print(f"{'grove block':22} {evals_b:12d} {sec_b:9.2f} {err_b:10.3e}   levels at the end: "
          + ", ".join(f"{k}:{c}" for k, c in enumerate(occupied) if c), flush=True)
    # Shared steps dt_max / m: m doubles until a run is as accurate as the
    # block run, then bisects between the last two m (the energy error
    # falls steadily with dt here), so the match is the coarsest such step.
    tried = {}

    def shared(m_div):
        if m_div not in tried:
            dt = a.block_dt / m_div
            tried[m_div] = run(nb, lib, ic, params(dt, 0), t_end, threads)[:3]
            evals, sec, err = tried[m_div]
            print(f"{'grove shared dt/' + str(m_div):22} {evals:12d} {sec:9.2f} {err:10.3e}", flush=True)
        return tried[m_div]

    lo, hi = 0, 1
    while shared(hi)[2] > err_b:
        if shared(hi)[1] > a.block_budget:
            print(f"# shared step: stopped halving dt after a {shared(hi)[1]:.0f} s run (--block-budget); the "
                  "ratios below are lower bounds")
            break
        lo, hi = hi, 2 * hi
    else:
        while hi - lo > max(1, hi // 8):
            mid = (lo + hi) // 2
            if shared(mid)[2] <= err_b:
                hi = mid
            else:
                lo = mid
    evals_s, sec_s, err_s = shared(hi)
    dt = a.block_dt / hi
    print(f"shared / block at equal |dE/E| (shared dt {dt:.3g}): evaluations {evals_s / evals_b:.2f}x, "
          f"seconds {sec_s / sec_b:.2f}x")
    if a.no_rebound:
        return
    try:
        import rebound  # noqa: F401
    except ImportError:
        print("# rebound not installed (pip install rebound): skipped")
        return
    steps = int(round(t_end / dt))
    sec_r, per_step = rebound_seconds(nb, ic, a.block_theta, a.softening, dt, steps, a.block_rebound_steps)
    print(f"{'rebound leapfrog+tree':22} {len(m) * steps:12d} {sec_r:9.2f} {'':>10}   "
          f"({per_step:.3f} s/step measured over {a.block_rebound_steps} steps, x {steps} steps; 1 thread)")
    print(f"rebound / grove block: seconds {sec_r / sec_b:.2f}x")


def add_arguments(ap):
    ap.add_argument("--block", action="store_true", help="block time steps against the shared step (see below)")
    ap.add_argument("--block-ic", default="hernquist", choices=("hernquist", "plummer-bh", "plummer"))
    ap.add_argument("--block-n", type=int, default=100000)
    ap.add_argument("--block-time", type=float, default=2.0 * np.sqrt(2.0), help="default: one crossing time")
    ap.add_argument("--block-dt", type=float, default=0.25, help="the block run's largest step")
    ap.add_argument("--block-eta", type=float, default=0.2)
    ap.add_argument("--block-max-level", type=int, default=20)
    ap.add_argument("--block-theta", type=float, default=0.5)
    ap.add_argument("--block-budget", type=float, default=600,
                    help="stop halving the shared step after a run longer than this many seconds")
    ap.add_argument("--block-rebound-steps", type=int, default=3)
