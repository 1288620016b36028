#!/usr/bin/env python3
"""bench/fof.py: grove's friends-of-friends beside its peers, on the same
particles, in the same run.

    make && python3 bench/fof.py [--n 1000000] [--threads 1,2] [--timeout 600]
        [--workloads nbody,box] [--peers pyfof,ckdtree] [--grove build/grove]
        [--steps 10] [--cache DIR]

Workloads:
  nbody  a grove N-body run: `grove nbody --ic merger --n N --seed 1 --dt 0.01
         --steps S --theta 0.75 --softening 0.01` (two Plummer spheres
         falling together), its last snapshot; linking length b = 0.2 of
         the mean separation of the particles' bounding box (what
         `grove fof --b 0.2` uses), not periodic
  box    N uniform points in the periodic unit cube (`grove gen uniform
         --seed 1`), b = 0.2 of the box's mean separation N^(-1/3)
Data files are cached as .npy under --cache (default
$XDG_CACHE_HOME/grove-bench-data or /tmp/grove-bench-data), never in the repo.

Tools, each in its own process with its thread count set (OMP_NUM_THREADS
and the tool's own knob), killed after --timeout seconds. "seconds" is from
the float64 positions in memory to every particle's group in memory
(min_members 1: every group, singletons included, as the peers return):
  grove      grove.fof(x, link, min_members=1, boxsize=...) through the
             Python binding (index build, linking, numbering)
  grove cli  `grove fof --groups` --json "seconds" (the same, plus reading
             nothing: file I/O is excluded there), for reference
  pyfof      pyfof.friends_of_friends(x, link) (pip install pyfof): an
             R-tree, one thread, Euclidean only -- on the periodic box it
             runs WITHOUT the box (an easier problem: no wrapped pairs)
  ckdtree    SciPy cKDTree(x, boxsize=...).query_pairs(link) then
             scipy.sparse.csgraph.connected_components: one thread; holds
             every pair (memory grows with them)
  nbodykit   nbodykit.algorithms.fof.FOF: tried when importable; it did not
             install here (its dependencies classylss, Corrfunc, mpsort and
             pfft-python failed to build), so its rows read "not installed"
"partition" says whether the tool's groups are grove's groups (the same
partition of the particles), checked outside the timed region; "vs grove"
is tool seconds / grove seconds at the same thread count (> 1: grove
faster). Single-threaded tools run once, in the 1-thread rows. Single runs
on a shared machine: timings are noisy.
"""
import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile

import numpy as np

from machine import cache_dir, cpu_model, last_json

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SINGLE_THREADED = {"pyfof", "ckdtree"}

PEER_CODE = r'''
import json, os, sys, time
import numpy as np
tool, path, link, box, threads, out_path = sys.argv[1:7]
link, box, threads = float(link), float(box), int(threads)
x = np.ascontiguousarray(np.load(path), dtype=np.float64)
n = len(x)

def peak_rss():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return None

out = {"tool": tool, "threads": threads}
if tool == "grove":
    sys.path.insert(0, os.environ["GROVE_PYTHON"])
    import grove
    t0 = time.perf_counter()
    labels = grove.fof(x, link, min_members=1, boxsize=box if box > 0 else None, threads=threads)
    out["seconds"] = time.perf_counter() - t0
elif tool == "pyfof":
    import pyfof
    t0 = time.perf_counter()
    groups = pyfof.friends_of_friends(x, link)
    out["seconds"] = time.perf_counter() - t0
    labels = np.empty(n, dtype=np.int64)
    for g, members in enumerate(groups):
        labels[np.asarray(members, dtype=np.int64)] = g
    out["periodic"] = False
elif tool == "ckdtree":
    from scipy.spatial import cKDTree
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components
    t0 = time.perf_counter()
    tree = cKDTree(x, boxsize=box if box > 0 else None)
    pairs = tree.query_pairs(link, output_type="ndarray")
    graph = coo_matrix((np.ones(len(pairs), dtype=np.int8), (pairs[:, 0], pairs[:, 1])), shape=(n, n))
    _, labels = connected_components(graph, directed=False)
    out["seconds"] = time.perf_counter() - t0
    out["pairs"] = int(len(pairs))
elif tool == "nbodykit":
    from nbodykit.lab import ArrayCatalog, FOF
    t0 = time.perf_counter()
    cat = ArrayCatalog({"Position": x}, BoxSize=box if box > 0 else np.ptp(x, axis=0) * 1.001)
    labels = FOF(cat, linking_length=link, nmin=1, absolute=True, periodic=box > 0).labels
    out["seconds"] = time.perf_counter() - t0
else:
    raise SystemExit("unknown tool " + tool)
out["peak_rss_bytes"] = peak_rss()
np.save(out_path, np.asarray(labels, dtype=np.int64))
print(json.dumps(out), flush=True)
'''


def thread_env(threads):
    env = dict(os.environ)
    for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS"):
        env[k] = str(threads)
    env["GROVE_PYTHON"] = os.path.join(ROOT, "python")
    env.setdefault("GROVE_LIB", os.path.join(ROOT, "build", "libgrove.so"))
    return env


def run_peer(tool, path, link, box, threads, timeout, labels_path):
    try:
        p = subprocess.run([sys.executable, "-c", PEER_CODE, tool, path, repr(link), repr(box), str(threads),
                            labels_path], capture_output=True, text=True, timeout=timeout, env=thread_env(threads))
    except subprocess.TimeoutExpired:
        return {"tool": tool, "status": "timeout"}
    r = last_json(p.stdout)
    if p.returncode != 0 or r is None:
        err = (p.stderr or "").strip().splitlines()
        missing = any("ModuleNotFoundError" in line or "ImportError" in line for line in err)
        return {"tool": tool, "status": "not installed" if missing else "failed: " + (err[-1] if err else "?")}
    r["labels"] = labels_path
    return r


def run_cli(grove, path, link, box, threads, timeout, labels_path):
    args = [grove, "fof", path, "--linking-length", repr(link), "--min-members", "1", "--groups", labels_path,
            "--threads", str(threads), "--json", "--quiet"]
    if box > 0:
        args += ["--box", repr(box)]
    try:
        p = subprocess.run(args, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"tool": "grove cli", "status": "timeout"}
    r = last_json(p.stdout)
    if p.returncode != 0 or r is None:
        return {"tool": "grove cli", "status": "failed: " + p.stderr.strip()}
    return {"tool": "grove cli", "seconds": r["seconds"], "peak_rss_bytes": r["peak_rss_bytes"], "labels": labels_path}


def same_partition(a, b):
    """Whether label arrays a and b group the particles alike."""
    if a is None or b is None or len(a) != len(b):
        return None
    pairs = np.unique(np.stack([a, b], axis=1), axis=0)
    return len(pairs) == len(np.unique(a)) == len(np.unique(b))


def nbody_positions(grove, n, steps, cache):
    path = os.path.join(cache, f"fof_merger_{n}_{steps}.npy")
    if not os.path.exists(path):
        with tempfile.TemporaryDirectory() as out:
            subprocess.run([grove, "nbody", "--ic", "merger", "--n", str(n), "--seed", "1", "--dt", "0.01",
                            "--steps", str(steps), "--theta", "0.75", "--softening", "0.01", "--snapshot-every",
                            str(steps), "--out", out, "--quiet", "--no-progress"], check=True)
            snap = np.load(os.path.join(out, f"snap_{steps:06d}.npy"))
        np.save(path, np.ascontiguousarray(snap[:, :3]))
    return path


def box_positions(grove, n, cache):
    path = os.path.join(cache, f"fof_uniform_{n}.npy")
    if not os.path.exists(path):
        subprocess.run([grove, "gen", "uniform", "--n", str(n), "--dims", "3", "--seed", "1", "-o", path,
                        "--quiet"], check=True)
    return path


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=1000000)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--workloads", default="nbody,box")
    ap.add_argument("--peers", default="pyfof,ckdtree,nbodykit")
    ap.add_argument("--grove", default=os.path.join(ROOT, "build", "grove"))
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--cache", default=None)
    a = ap.parse_args()
    cache = cache_dir(a.cache)
    threads = [int(t) for t in a.threads.split(",")]
    peers = [p for p in a.peers.split(",") if p]
    print(f"# bench/fof.py on {cpu_model()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
          f"n = {a.n}")
    for work in a.workloads.split(","):
        if work == "nbody":
            path, box = nbody_positions(a.grove, a.n, a.steps, cache), 0.0
            x = np.load(path)
            volume = float(np.prod(np.ptp(x, axis=0)))
            what = f"grove nbody merger, {a.steps} steps, bounding box volume {volume:.4g}"
        else:
            path, box = box_positions(a.grove, a.n, cache), 1.0
            volume = 1.0
            what = "uniform, periodic unit box"
        link = 0.2 * (volume / a.n) ** (1 / 3)
        print(f"\n## {work}: {what}; b = 0.2 -> linking length {link:.6g}")
        print("| tool | threads | seconds | vs grove | groups | partition | peak RSS MiB |")
        print("|---|---|---|---|---|---|---|")
        with tempfile.TemporaryDirectory() as tmp:
            for t in threads:
                ref_path = os.path.join(tmp, f"grove_{t}.npy")
                rows = [run_peer("grove", path, link, box, t, a.timeout, ref_path)]
                rows.append(run_cli(a.grove, path, link, box, t, a.timeout, os.path.join(tmp, "cli.npy")))
                for peer in peers:
                    if peer in SINGLE_THREADED and t != threads[0]:
                        continue
                    rows.append(run_peer(peer, path, link, box, t, a.timeout, os.path.join(tmp, peer + ".npy")))
                ref = np.load(ref_path) if os.path.exists(ref_path) else None
                base = rows[0].get("seconds")
                for r in rows:
                    name = r["tool"] + (" (no box)" if r["tool"] == "pyfof" and box > 0 else "")
                    if "seconds" not in r:
                        print(f"| {name} | {t} | {r['status']} | | | | |")
                        continue
                    lab = np.load(r["labels"])
                    groups = len(np.unique(lab))
                    part = same_partition(ref, lab)
                    ratio = f"{r['seconds'] / base:.2f}" if base else ""
                    rss = f"{r['peak_rss_bytes'] / 2**20:.0f}" if r.get("peak_rss_bytes") else ""
                    print(f"| {name} | {t} | {r['seconds']:.3f} | {ratio} | {groups} | "
                          f"{'same' if part else 'DIFFERENT' if part is not None else ''} | {rss} |", flush=True)


if __name__ == "__main__":
    main()
