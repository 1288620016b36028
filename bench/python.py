#!/usr/bin/env python3
"""The Python binding's speed: its per-call overhead against the C command
line, and its Python-level timings beside the peers' Python APIs
(balltree-erwin, scikit-learn, SciPy, FAISS, hdbscan, fast_hdbscan, REBOUND)
on the same inputs.

    make && GROVE_LIB=build/libgrove.so PYTHONPATH=python python3 bench/python.py [--quick] [--notes FILE]

Part 1: each command on small inputs through the binding and through
`grove CMD --json`, one thread: "binding call" is the Python call, "in C"
the time spent inside the main C function(s) during it (timed by wrapping
them), "binding overhead" their difference (argument checks, conversions,
output allocation, ctypes); "CLI compute" is the command's own `seconds`
(the computation, in a fresh process) and "CLI process" the whole
command's wall time (start-up, reading, writing).
Part 2: the minimum wall time over repeats of one Python call that returns
the finished result; "ratio" = tool / grove on one thread (> 1: grove is
faster). Peers run with their defaults (threads noted); absent peers are
listed as not installed.
"""
import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time

import numpy as np

from machine import best_seconds, cpu_model, torch_standin

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
# bench/ holds a balltree.py of its own: keep it from shadowing balltree-erwin.
sys.path[:] = [os.path.join(ROOT, "python")] + [p for p in sys.path if os.path.abspath(p or ".") != HERE]
os.environ.setdefault("GROVE_LIB", os.path.join(ROOT, "build", "libgrove.so"))
import grove  # noqa: E402
from grove import _clib  # noqa: E402

CLI = os.environ.get("GROVE_CLI", os.path.join(ROOT, "build", "grove"))


def best(fn, budget, repeats=3):
    """Minimum seconds of fn() over at least `repeats` runs within `budget` s."""
    return best_seconds(fn, budget, repeats, 200)


def cli(args, cwd):
    t = time.perf_counter()
    out = subprocess.run([CLI, *map(str, args), "--json", "--quiet"], check=True, capture_output=True, text=True,
                         cwd=cwd).stdout
    return json.loads(out.strip().splitlines()[-1])["seconds"], time.perf_counter() - t


# ---- part 1: overhead against the CLI ---------------------------------------

def split_time(call, c_functions, budget):
    """(whole call, time inside the named C functions) in seconds, from the
    run with the least binding time (whole - inside) within the budget."""
    inside = [0.0]
    real = {name: getattr(_clib.lib, name) for name in c_functions}

    def timed(fn):
        def wrapper(*args):
            t = time.perf_counter()
            try:
                return fn(*args)
            finally:
                inside[0] += time.perf_counter() - t
        return wrapper

    for name, fn in real.items():
        setattr(_clib.lib, name, timed(fn))
    try:
        runs, spent = [], 0.0
        while len(runs) < 5 or (spent < budget and len(runs) < 500):
            inside[0] = 0.0
            t = time.perf_counter()
            call()
            whole = time.perf_counter() - t
            runs.append((whole, inside[0]))
            spent += whole
        return min(runs, key=lambda r: (r[0] - r[1], r[0]))
    finally:
        for name, fn in real.items():
            setattr(_clib.lib, name, fn)


def overhead_rows(budget):
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in (16, 1000):
            x = grove.generate("blobs", n, 3, seed=1)
            mass = np.full(n, 1.0 / n)
            np.save(os.path.join(tmp, "x.npy"), x)
            np.save(os.path.join(tmp, "g.npy"), np.column_stack([x, mass]))
            cases = [
                ("balltree", lambda: grove.balltree(x, threads=1), ["grove_balltree_build"],
                 ["balltree", "x.npy", "--indices", "i.npy", "--mask", "m.npy"]),
                ("emst", lambda: grove.emst(x, threads=1), ["grove_emst"],
                 ["emst", "x.npy", "--edges", "e.npy", "--weights", "w.npy"]),
                ("hdbscan", lambda: grove.HDBSCAN(min_cluster_size=5, threads=1).fit(x), ["grove_hdbscan"],
                 ["hdbscan", "x.npy", "--min-cluster-size", 5, "--labels", "l.npy"]),
                ("gravity", lambda: grove.gravity(x, mass, 0.75, 0.01, threads=1), ["grove_gravity"],
                 ["gravity", "g.npy", "--theta", 0.75, "--softening", 0.01, "--acc", "a.npy"]),
            ]
            if _clib.has("grove_knn"):
                cases += [("knn k=8", lambda: grove.knn(x, min(8, n), threads=1), ["grove_knn"], None),
                          ("join", lambda: grove.join(x, 0.5, threads=1),
                           ["grove_index_create", "grove_join_count", "grove_join_fill", "grove_index_free"], None)]
            for name, call, c_functions, args in cases:
                whole, inside = split_time(call, c_functions, budget)
                row = [name, n, f"{whole * 1e3:.3f}", f"{inside * 1e3:.3f}", f"{(whole - inside) * 1e6:.1f}"]
                if args:
                    runs = [cli([*args, "--threads", 1], tmp) for _ in range(5)]
                    row += [f"{min(r[0] for r in runs) * 1e3:.3f}", f"{min(r[1] for r in runs) * 1e3:.1f}"]
                else:
                    row += ["-", "-"]
                rows.append(row)
    return ["command", "n", "binding call ms", "in C ms", "binding overhead us", "CLI compute ms",
            "CLI process ms"], rows


# ---- part 2: beside the peers -------------------------------------------------

def peer_balltree(x):
    torch_standin()
    import balltree as erwin
    from sklearn.neighbors import BallTree
    batch = np.zeros(len(x), dtype=np.int64)
    return {"balltree-erwin build_balltree_with_idx": lambda: erwin.build_balltree_with_idx(x, batch),
            "scikit-learn BallTree(leaf_size=2)": lambda: BallTree(x, leaf_size=2)}


def peer_knn(x, k):
    out = {}
    try:
        from scipy.spatial import cKDTree
        out["SciPy cKDTree + query (workers=1)"] = lambda: cKDTree(x).query(x, k, workers=1)
    except ImportError:
        pass
    try:
        from sklearn.neighbors import KDTree
        out["scikit-learn KDTree + query"] = lambda: KDTree(x).query(x, k)
    except ImportError:
        pass
    try:
        import faiss
        xf = np.ascontiguousarray(x, dtype=np.float32)
        share = max(1, len(x) // 20000)  # brute force, linear in the queries: time a share of them

        def flat():
            index = faiss.IndexFlatL2(x.shape[1])
            index.add(xf)
            t = time.perf_counter()
            index.search(xf[:len(x) // share], k)
            time.sleep((time.perf_counter() - t) * (share - 1))  # stand in for the other queries
        out["FAISS IndexFlatL2 (exact, float32, all threads)" + (f", 1/{share} of the queries x {share}"
                                                                  if share > 1 else "")] = flat
    except ImportError:
        pass
    return out


def peer_join(x, eps):
    out = {}
    try:
        from scipy.spatial import cKDTree
        out["SciPy cKDTree.query_ball_point (workers=1)"] = \
            lambda: cKDTree(x).query_ball_point(x, eps, workers=1, return_sorted=True)
        out["SciPy cKDTree.sparse_distance_matrix"] = \
            lambda: cKDTree(x).sparse_distance_matrix(cKDTree(x), eps, output_type="coo_matrix")
    except ImportError:
        pass
    try:
        from sklearn.neighbors import NearestNeighbors
        out["scikit-learn radius_neighbors_graph"] = \
            lambda: NearestNeighbors(radius=eps).fit(x).radius_neighbors_graph(x, mode="distance")
    except ImportError:
        pass
    return out


def peer_hdbscan(x, mcs, k):
    out = {}
    try:
        import hdbscan
        out["hdbscan HDBSCAN (boruvka_kdtree)"] = \
            lambda: hdbscan.HDBSCAN(min_cluster_size=mcs, min_samples=k - 1, core_dist_n_jobs=1).fit(x)
    except ImportError:
        pass
    try:
        import fast_hdbscan
        fast_hdbscan.HDBSCAN(min_cluster_size=mcs, min_samples=k).fit(x[:500])  # numba compile outside timing
        out["fast_hdbscan HDBSCAN (numba, all threads)"] = \
            lambda: fast_hdbscan.HDBSCAN(min_cluster_size=mcs, min_samples=k).fit(x)
    except ImportError:
        pass
    try:
        from sklearn.cluster import HDBSCAN
        out["scikit-learn HDBSCAN"] = lambda: HDBSCAN(min_cluster_size=mcs, min_samples=k, copy=False).fit(x)
    except ImportError:
        pass
    return out


def rebound_step(pos, mass, theta, eps):
    import rebound
    sim = rebound.Simulation()
    sim.root_size = 2.2 * float(np.abs(pos).max())
    sim.boundary, sim.gravity, sim.integrator = "open", "tree", "leapfrog"
    sim.opening_angle2, sim.softening, sim.dt = theta * theta, eps, 1e-12
    for _ in range(len(mass)):
        sim.add(m=0.0)
    sim.set_serialized_particle_data(xyz=pos.ravel(), vxvyvz=np.zeros(pos.size), m=mass)
    return lambda: sim.steps(1)


def peer_rows(quick, budget):
    rng = np.random.default_rng(0)
    scale = 1 if quick else 4
    rows = []

    def task(name, n, grove_call, peers):
        g1 = best(lambda: grove_call(1), budget)
        rows.append([name, n, "grove (1 thread)", f"{g1 * 1e3:.2f}", "1.00"])
        ga = best(lambda: grove_call(0), budget)
        rows.append(["", "", f"grove (all {os.cpu_count()} threads)", f"{ga * 1e3:.2f}", f"{ga / g1:.2f}"])
        for peer, call in peers.items():
            t = best(call, budget, repeats=1)
            rows.append(["", "", peer, f"{t * 1e3:.2f}", f"{t / g1:.2f}"])

    n = 16384 * scale
    x = rng.random((n, 3))
    try:
        peers = peer_balltree(x)
    except ImportError as e:
        peers = {f"(peer missing: {e.name})": lambda: None}
    task("ball tree d=3", n, lambda t: grove.balltree(x, threads=t), peers)

    if _clib.has("grove_knn"):
        n = 25000 * scale
        x = rng.random((n, 3))
        task("kNN k=8 d=3", n, lambda t: grove.knn(x, 8, threads=t), peer_knn(x, 8))
        eps = (10 / (4 / 3 * np.pi * n)) ** (1 / 3)  # about 10 neighbours per point
        task(f"join eps={eps:.3f} d=3", n, lambda t: grove.join(x, eps, threads=t), peer_join(x, eps))

    n = 5000 * scale
    x = grove.generate("blobs", n, 2, seed=1, centers=6)
    task("HDBSCAN* d=2 mcs=20 K=5", n, lambda t: grove.HDBSCAN(20, 5, threads=t).fit(x), peer_hdbscan(x, 20, 5))

    n = 12500 * scale
    with grove.NBody.from_ic("plummer", n, seed=1) as sim:
        pos, mass = sim.positions, sim.masses
    try:
        peers = {"REBOUND tree, one leapfrog step": rebound_step(pos, mass, 0.5, 0.01)}
    except ImportError:
        peers = {}
    task("gravity theta=0.5 Plummer", n, lambda t: grove.gravity(pos, mass, 0.5, 0.01, threads=t), peers)
    return ["task", "n", "tool", "ms", "ratio"], rows


def table(title, header, rows):
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    line = lambda r: "| " + " | ".join(str(c).ljust(w) for c, w in zip(r, widths)) + " |"  # noqa: E731
    return "\n".join([f"### {title}", "", line(header), "|" + "|".join("-" * (w + 2) for w in widths) + "|",
                      *map(line, rows), ""])


def machine():
    model = cpu_model()
    return (f"{model}, {os.cpu_count()} cores, {platform.system()} {platform.release()}; Python "
            f"{platform.python_version()}, NumPy {np.__version__}; grove {grove.__version__} ({grove.library_path()})")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="smaller inputs, shorter repeats")
    ap.add_argument("--notes", help="also write the tables (Markdown) to this file")
    args = ap.parse_args()
    budget = 0.2 if args.quick else 1.0
    text = "\n".join([f"machine: {machine()}", "",
                      table("binding overhead against the C command line (threads=1)", *overhead_rows(budget)),
                      table("Python-level timings beside the peers (ratio = tool / grove on 1 thread)",
                            *peer_rows(args.quick, budget))])
    print(text)
    if args.notes:
        with open(args.notes, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
