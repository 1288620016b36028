#!/usr/bin/env python3
"""bench/join.py: grove's exact epsilon self-join beside its peers, on the
same points, in the same run.

    make && python3 bench/join.py [--workloads uniform,expo,fmnist,building]
        [--threads 1,2] [--timeout 300] [--n 1000000] [--uniform-eps 0.039682]
        [--fmnist-rows 70000]
        [--fmnist-eps 0,1,2] [--peers all|LIST] [--grove build/grove]
        [--grove-args "--memory-budget 2G"] [--cache DIR] [--tmp /dev/shm]
        [--no-hash] [--no-faiss-check]

Workloads (issue 3):
  uniform   n points uniform on [0, 1)^3, eps 0.039682 at n = 10^6
            (selectivity about 250; --uniform-eps takes a comma list of
            eps at n = 10^6, each a table, e.g. 0.0251,0.039682 for
            selectivities about 65 and 250)
  expo      n points with i.i.d. exponential coordinates (rate 40), d = 3,
            eps 0.0020007 at n = 10^6
            (--n scales the uniform and exponential eps by (10^6 / n)^(1/3),
            which keeps the selectivity; --n 5000000 gives the paper's
            0.023206 and 0.001170)
  fmnist    Fashion-MNIST (Debian dataset-fashion-mnist), train + test,
            70,000 x 784 raw 0..255 pixels as float64, at eps 844.2638805492,
            1003.7995317791, 1199.2320459361 (--fmnist-eps picks by index;
            --fmnist-rows M keeps the first M rows, with the same eps)
  building  data/points_3/building.ply from /usr/share/doc/libcgal-dev/data.tar.gz
            (Debian libcgal-demo), 100,000 x 3, eps 0.5377
The d = 3 sets come from `grove gen` (seed 1; numpy's default_rng(1) when the
CLI has no gen). Data files are cached as .npy under --cache (default
$XDG_CACHE_HOME/grove-bench-data or /tmp/grove-bench-data), never in the repo.

Tools, each in its own process with its thread count set (OMP_NUM_THREADS,
OPENBLAS_NUM_THREADS, MKL_NUM_THREADS and the tool's own knob), killed after
--timeout seconds ("timeout"). "seconds" is index build + search, from the
float64 array in memory to the result in memory; grove's is the --json
`seconds` (computation alone, no file I/O), its "wall" the whole CLI call.
  grove count       grove join --count-only            |R| only
  grove full        grove join --offsets --indices      CSR written to --tmp (a tmpfs)
  ckdtree_pairs     SciPy cKDTree.query_pairs(eps, output_type='ndarray'):
                    i < j pairs only, one thread; |R| = 2 |pairs| + n
  ckdtree_ball      cKDTree.query_ball_point(x, eps, workers=t): full lists of
                    Python ints, asked for in blocks of 65,536 queries whose
                    lists are dropped after each block (all lists of a 10^6
                    set would not fit in memory)
  ckdtree_count     cKDTree.count_neighbors(tree, eps): the count, one thread
  sklearn_kd        scikit-learn KDTree(x).query_radius(x, eps): one index
  sklearn_ball      array per query (BallTree likewise); one thread
  nanoflann         bench/join_nanoflann.cpp (g++ -O3 -fopenmp, built into
                    build/bench/): radiusSearch per point, OpenMP over
                    queries, full CSR in memory (neighbours in tree order)
  faiss             faiss IndexFlatL2 range_search in float32 on squared
                    distances, radius float32(eps^2), brute force; FAISS keeps
                    d^2 < radius with d^2 computed in float32, so it misses
                    (and may add) pairs near the boundary: after the timed
                    call its pairs are checked in float64 (extra = returned
                    pairs with exact d^2 > eps^2, missed = exact |R| - kept)
|R| is always the number of ordered pairs (i, j) with |x_i - x_j| <= eps,
self pairs included. "set" compares an order-independent hash of each tool's
pair set with grove's (full output), computed outside the timed region; "vs
grove" is tool seconds / grove seconds at the same thread count (> 1: grove
faster), against grove full for tools returning pairs and grove count for
count-only tools. Single-threaded tools run once, in the 1-thread rows. A
tool that timed out on a data set is not run again there at a larger eps. If
`grove join` is missing or fails, its rows read n/a and peers still run.
Single runs on a shared machine: timings are noisy (±40% seen here).
"""
import argparse
import gzip
import json
import os
import platform
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time

import numpy as np

from machine import cache_dir, cpu_model, last_json

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

FMNIST_DIR = "/usr/share/datasets/fashion-mnist"
FMNIST_EPS = [844.2638805492, 1003.7995317791, 1199.2320459361]
CGAL_TAR = "/usr/share/doc/libcgal-dev/data.tar.gz"
BUILDING = "data/points_3/building.ply"

ALL_PEERS = ["ckdtree_pairs", "ckdtree_ball", "ckdtree_count", "sklearn_kd", "sklearn_ball", "nanoflann", "faiss"]
SINGLE_THREADED = {"ckdtree_pairs", "ckdtree_count", "sklearn_kd", "sklearn_ball"}
COUNT_ONLY = {"ckdtree_count"}
RETURNS = {
    "grove count": "count",
    "grove full": "CSR, sorted (files)",
    "ckdtree_pairs": "i<j pairs (ndarray)",
    "ckdtree_ball": "lists (blocks)",
    "ckdtree_count": "count",
    "sklearn_kd": "index arrays",
    "sklearn_ball": "index arrays",
    "nanoflann": "CSR (tree order)",
    "faiss": "CSR + d^2, float32",
}

# ---- order-independent hash of a pair set (shared with the peer processes) --

HASH_CODE = r'''
import numpy as np
_C0, _C1, _C2 = np.uint64(0x9E3779B97F4A7C15), np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)
_S30, _S27, _S31 = np.uint64(30), np.uint64(27), np.uint64(31)

def pair_hash(q, j, n):
    """Sum mod 2^64 of splitmix64(q * n + j) over the pairs (q, j)."""
    z = q.astype(np.uint64) * np.uint64(n) + j.astype(np.uint64)
    z += _C0
    z = (z ^ (z >> _S30)) * _C1
    z = (z ^ (z >> _S27)) * _C2
    z ^= z >> _S31
    return int(z.sum(dtype=np.uint64))

def csr_hash(offsets, indices, n, chunk=1 << 23):
    """pair_hash of a CSR result, in blocks of about chunk pairs."""
    h, nq, a = 0, len(offsets) - 1, 0
    while a < nq:
        b = int(np.searchsorted(offsets, offsets[a] + chunk, side="right")) - 1
        b = min(max(b, a + 1), nq)
        lo, hi = int(offsets[a]), int(offsets[b])
        q = np.repeat(np.arange(a, b, dtype=np.int64), np.diff(offsets[a:b + 1]))
        h = (h + pair_hash(q, np.asarray(indices[lo:hi]), n)) & 0xFFFFFFFFFFFFFFFF
        a = b
    return h
'''

HASH_FILES = r'''
import sys
o = np.load(sys.argv[1], mmap_mode="r")
print("%016x" % csr_hash(np.asarray(o), np.load(sys.argv[2], mmap_mode="r"), len(o) - 1))
'''

# ---- the peers, one process each --------------------------------------------

PEER_CODE = HASH_CODE + r'''
import json, os, sys, time
tool, path, eps, threads, do_hash, faiss_check = sys.argv[1:7]
eps, threads, do_hash, faiss_check = float(eps), int(threads), do_hash == "1", faiss_check == "1"
x = np.ascontiguousarray(np.load(path), dtype=np.float64)
n, d = x.shape
out = {"tool": tool, "threads": threads}
h = None

def peak_rss():
    """VmHWM (ru_maxrss would carry the parent's peak over exec on Linux)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return None

def say(**kw):
    out.update(kw)
    out["peak_rss_bytes"] = peak_rss()
    print(json.dumps(out), flush=True)

if tool.startswith("ckdtree"):
    from scipy.spatial import cKDTree
    t0 = time.perf_counter()
    tree = cKDTree(x)
    t1 = time.perf_counter()
    if tool == "ckdtree_pairs":
        p = tree.query_pairs(eps, output_type="ndarray")
        t2 = time.perf_counter()
        say(build_seconds=t1 - t0, seconds=t2 - t0, pairs=2 * len(p) + n, raw=len(p))
        if do_hash:
            ar = np.arange(n, dtype=np.int64)
            h = (pair_hash(p[:, 0], p[:, 1], n) + pair_hash(p[:, 1], p[:, 0], n) + pair_hash(ar, ar, n)) % 2**64
    elif tool == "ckdtree_ball":
        total, spent, h = 0, 0.0, (0 if do_hash else None)
        from itertools import chain
        for a in range(0, n, 65536):
            s0 = time.perf_counter()
            lists = tree.query_ball_point(x[a:a + 65536], eps, workers=threads)
            spent += time.perf_counter() - s0
            counts = np.fromiter(map(len, lists), dtype=np.int64, count=len(lists))
            m = int(counts.sum())
            total += m
            if do_hash:
                flat = np.fromiter(chain.from_iterable(lists), dtype=np.int64, count=m)
                q = np.repeat(np.arange(a, a + len(lists), dtype=np.int64), counts)
                h = (h + pair_hash(q, flat, n)) % 2**64
            del lists
        say(build_seconds=t1 - t0, seconds=t1 - t0 + spent, pairs=total)
    else:
        c = tree.count_neighbors(tree, eps)
        t2 = time.perf_counter()
        say(build_seconds=t1 - t0, seconds=t2 - t0, pairs=int(c))
elif tool.startswith("sklearn"):
    from sklearn.neighbors import BallTree, KDTree
    t0 = time.perf_counter()
    tree = (KDTree if tool == "sklearn_kd" else BallTree)(x)
    t1 = time.perf_counter()
    ind = tree.query_radius(x, eps)
    t2 = time.perf_counter()
    counts = np.fromiter(map(len, ind), dtype=np.int64, count=n)
    say(build_seconds=t1 - t0, seconds=t2 - t0, pairs=int(counts.sum()))
    if do_hash:
        offsets = np.concatenate([[0], np.cumsum(counts)])
        h = csr_hash(offsets, np.concatenate(ind), n)
elif tool == "faiss":
    import faiss
    faiss.omp_set_num_threads(threads)
    r2 = np.float32(eps * eps)
    t0 = time.perf_counter()
    xf = x.astype(np.float32)
    index = faiss.IndexFlatL2(d)
    index.add(xf)
    t1 = time.perf_counter()
    lims, D, I = index.range_search(xf, float(r2))
    t2 = time.perf_counter()
    say(build_seconds=t1 - t0, seconds=t2 - t0, pairs=int(lims[-1]), radius=float(r2))
    if do_hash:
        h = csr_hash(lims.astype(np.int64), I, n)
    if faiss_check:
        # exact d^2 (float64, sum of squared differences, as grove) of FAISS's pairs
        q = np.repeat(np.arange(n, dtype=np.int64), np.diff(lims.astype(np.int64)))
        extra, step = 0, max(1, (1 << 26) // max(d, 1))
        for a in range(0, len(I), step):
            diff = x[q[a:a + step]] - x[I[a:a + step]]
            extra += int(np.count_nonzero(np.einsum("ij,ij->i", diff, diff) > eps * eps))
        out["faiss_extra"] = extra
else:
    raise SystemExit("unknown tool " + tool)
if h is not None:
    out["pairs_hash"] = "%016x" % h
print(json.dumps(out), flush=True)
'''


def thread_env(threads):
    env = dict(os.environ)
    for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS"):
        env[k] = str(threads)
    return env


def run_json(cmd, threads, timeout):
    """(result dict, status): status 'ok', 'timeout' or 'error: ...'."""
    t0 = time.perf_counter()
    try:
        r = subprocess.run(cmd, env=thread_env(threads), timeout=timeout, capture_output=True, text=True)
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode() if isinstance(e.stdout, bytes) else e.stdout
        got = last_json(out)
        if got is not None and "seconds" in got:  # timed part finished, the untimed check did not
            got["wall"] = time.perf_counter() - t0
            got["note"] = "check timed out"
            return got, "ok"
        return None, "timeout"
    except OSError as e:
        return None, "error: %s" % e
    wall = time.perf_counter() - t0
    got = last_json(r.stdout)
    if r.returncode != 0 or got is None:
        msg = (r.stderr or r.stdout or "").strip().splitlines()
        return None, "error: " + (msg[-1][:100] if msg else "exit %d" % r.returncode)
    got["wall"] = wall
    return got, "ok"


# ---- data -------------------------------------------------------------------


def synthetic(kind, n, cache, grove, seed=1):
    path = os.path.join(cache, "%s_n%d_s%d.npy" % (kind, n, seed))
    if os.path.exists(path):
        return path
    tmp = path + ".part.npy"
    gen = ["uniform", "--n", str(n), "--dims", "3"] if kind == "uniform" else \
          ["exponential", "--n", str(n), "--dims", "3", "--rate", "40"]
    try:
        subprocess.run([grove, "gen", *gen, "--seed", str(seed), "-o", tmp], check=True, capture_output=True)
        how = "grove gen"
    except (OSError, subprocess.CalledProcessError):
        rng = np.random.default_rng(seed)
        x = rng.random((n, 3)) if kind == "uniform" else rng.exponential(1 / 40, (n, 3))
        np.save(tmp, x)
        how = "numpy default_rng(%d)" % seed
    os.replace(tmp, path)
    print("  made %s (%s)" % (path, how), file=sys.stderr)
    return path


def read_idx_images(path):
    with gzip.open(path, "rb") as f:
        raw = f.read()
    magic, n, rows, cols = np.frombuffer(raw[:16], dtype=">u4")
    if magic != 2051:
        raise ValueError("%s: not an idx3 image file" % path)
    return np.frombuffer(raw[16:], dtype=np.uint8).reshape(int(n), int(rows) * int(cols))


def fmnist(cache, rows):
    full = os.path.join(cache, "fmnist_70000x784_f64.npy")
    if not os.path.exists(full):
        parts = [read_idx_images(os.path.join(FMNIST_DIR, f))
                 for f in ("train-images-idx3-ubyte.gz", "t10k-images-idx3-ubyte.gz")]
        np.save(full + ".part.npy", np.concatenate(parts).astype(np.float64))
        os.replace(full + ".part.npy", full)
    if rows is None or rows >= 70000:
        return full
    path = os.path.join(cache, "fmnist_%dx784_f64.npy" % rows)
    if not os.path.exists(path):
        np.save(path + ".part.npy", np.load(full, mmap_mode="r")[:rows])
        os.replace(path + ".part.npy", path)
    return path


def parse_ply(data):
    """(n, 3) float64 x, y, z of a PLY file's vertices (ascii or binary)."""
    end = data.index(b"end_header") + len(b"end_header")
    end = data.index(b"\n", end) + 1
    header = data[:end].decode("ascii").splitlines()
    fmt = header[1].split()[1]
    types = {"char": "i1", "uchar": "u1", "int8": "i1", "uint8": "u1", "short": "i2", "ushort": "u2",
             "int16": "i2", "uint16": "u2", "int": "i4", "uint": "u4", "int32": "i4", "uint32": "u4",
             "float": "f4", "float32": "f4", "double": "f8", "float64": "f8"}
    n, props, in_vertex = 0, [], False
    for line in header:
        w = line.split()
        if w[:1] == ["element"]:
            in_vertex = w[1] == "vertex"
            if in_vertex:
                n = int(w[2])
            elif props:
                break  # vertices first is all this reader needs
        elif w[:1] == ["property"] and in_vertex:
            if w[1] == "list":
                raise ValueError("PLY: list property in vertex element")
            props.append((w[2], types[w[1]]))
    names = [p[0] for p in props]
    cols = [names.index(c) for c in ("x", "y", "z")]
    if fmt == "ascii":
        text = data[end:].decode("ascii").split("\n", n)[:n]
        x = np.loadtxt(text, usecols=cols, dtype=np.float64, ndmin=2)
    else:
        order = "<" if fmt == "binary_little_endian" else ">"
        dt = np.dtype([(nm, order + t) for nm, t in props])
        rec = np.frombuffer(data, dtype=dt, count=n, offset=end)
        x = np.stack([rec[c].astype(np.float64) for c in ("x", "y", "z")], axis=1)
    if x.shape != (n, 3):
        raise ValueError("PLY: expected %d vertices, read %s" % (n, x.shape))
    return x


def building(cache):
    path = os.path.join(cache, "building_100000x3.npy")
    if not os.path.exists(path):
        with tarfile.open(CGAL_TAR) as t:
            data = t.extractfile(BUILDING).read()
        np.save(path + ".part.npy", parse_ply(data))
        os.replace(path + ".part.npy", path)
    return path


# ---- grove and nanoflann ----------------------------------------------------

def grove_join(grove, path, eps, threads, timeout, full, tmp, extra, do_hash):
    args = [grove, "join", path, "--eps", repr(eps), "--threads", str(threads), "--json", *extra]
    work = None
    if full:
        work = tempfile.mkdtemp(prefix="grove-join-", dir=tmp)
        off, ind = os.path.join(work, "O.npy"), os.path.join(work, "I.npy")
        args += ["--offsets", off, "--indices", ind]
    else:
        args += ["--count-only"]
    try:
        got, status = run_json(args, threads, timeout)
        if got is not None and full:
            o = np.load(off, mmap_mode="r")
            i = np.load(ind, mmap_mode="r")
            if int(o[-1]) != got.get("pairs") or len(i) != got.get("pairs"):
                got["note"] = "files disagree with summary: offsets[-1]=%d, len(I)=%d" % (int(o[-1]), len(i))
            if do_hash:  # in a child process, so this one stays small (see peak RSS in the notes)
                r = subprocess.run([sys.executable, "-c", HASH_CODE + HASH_FILES, off, ind], capture_output=True,
                                   text=True)
                if r.returncode == 0:
                    got["pairs_hash"] = r.stdout.strip()
            sizes = os.path.getsize(off) + os.path.getsize(ind)
            got["file_bytes"] = sizes
            del o, i
        return got, status
    finally:
        if work:
            shutil.rmtree(work, ignore_errors=True)


def build_nanoflann():
    src = os.path.join(HERE, "join_nanoflann.cpp")
    out_dir = os.path.join(ROOT, "build", "bench")
    exe = os.path.join(out_dir, "join_nanoflann")
    if os.path.exists(exe) and os.path.getmtime(exe) >= os.path.getmtime(src):
        return exe, None
    if not os.path.exists("/usr/include/nanoflann.hpp"):
        return None, "error: nanoflann.hpp missing (apt-get install libnanoflann-dev)"
    os.makedirs(out_dir, exist_ok=True)
    cxx = os.environ.get("CXX", "g++")
    r = subprocess.run([cxx, "-std=c++17", "-O3", "-fopenmp", "-o", exe, src], capture_output=True, text=True)
    if r.returncode != 0:
        return None, "error: build failed: " + (r.stderr.strip().splitlines() or ["?"])[-1][:80]
    return exe, None


def run_peer(tool, path, eps, threads, timeout, do_hash, faiss_check, nanoflann):
    if tool == "nanoflann":
        exe, err = nanoflann
        if exe is None:
            return None, err
        return run_json([exe, path, "--eps", repr(eps), "--threads", str(threads)] + (["--hash"] if do_hash else []),
                        threads, timeout)
    return run_json([sys.executable, "-c", PEER_CODE, tool, path, repr(eps), str(threads), "1" if do_hash else "0",
                     "1" if faiss_check else "0"], threads, timeout)


# ---- tables -----------------------------------------------------------------

def fmt_s(s):
    return "%.3f" % s if s < 100 else "%.1f" % s


def table(title, n, d, eps, rows, exact):
    print()
    print("### %s (n = %d, d = %d, eps = %r%s)" % (title, n, d, eps,
          ", selectivity %.1f" % ((exact - n) / n) if exact is not None and n else ""))
    print()
    print("| tool | threads | returns | \\|R\\| | seconds | build s | wall s | peak RSS MiB | vs grove | set |")
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|---|")
    for r in rows:
        print("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            r["tool"], r["threads"], RETURNS.get(r["tool"], ""), r["R"], r["seconds"], r["build"], r["wall"],
            r["rss"], r["ratio"], r["set"]))
    sys.stdout.flush()


def summary(results):
    """One line: the fastest peer returning pairs against grove full (same
    thread count, and best of any thread count)."""
    def secs(name_ok):
        return [(got["seconds"], name, t) for t, name, got, status, _ in results
                if got is not None and got.get("seconds") is not None and name_ok(name)]
    peers = secs(lambda nm: not nm.startswith("grove") and nm not in COUNT_ONLY)
    grove = secs(lambda nm: nm == "grove full")
    if not peers:
        return
    best = min(peers)
    line = "fastest peer returning pairs: %s (%d thread(s)) %s s" % (best[1], best[2],
                                                                   fmt_s(best[0]))
    if grove:
        g = min(grove)
        line += "; grove full best %s s (%d thread(s)); peer / grove = %.2fx" % (fmt_s(g[0]), g[2], best[0] / g[0])
    print()
    print(line)


def describe_machine():
    cpu = cpu_model()
    from importlib import metadata  # versions without importing the peers here
    vers = []
    for mod, dist in (("numpy", "numpy"), ("scipy", "scipy"), ("scikit-learn", "scikit-learn"),
                      ("faiss", "faiss-cpu")):
        try:
            vers.append("%s %s" % (mod, metadata.version(dist)))
        except metadata.PackageNotFoundError:
            vers.append("%s missing" % mod)
    nano = "?"
    try:
        with open("/usr/include/nanoflann.hpp") as f:
            for line in f:
                if line.startswith("#define NANOFLANN_VERSION"):
                    v = int(line.split()[2], 16)
                    nano = "%d.%d.%d" % (v >> 8, (v >> 4) & 15, v & 15)
                    break
    except OSError:
        nano = "missing"
    print("machine: %s, %d cores; Python %s, %s, nanoflann %s" % (
        cpu, os.cpu_count(), platform.python_version(), ", ".join(vers), nano))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--grove", default=os.path.join(ROOT, "build", "grove"))
    ap.add_argument("--grove-args", default="", help="extra flags for grove join, e.g. '--memory-budget 2G'")
    ap.add_argument("--workloads", default="uniform,expo,fmnist,building")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds per tool run (default 300)")
    ap.add_argument("--n", type=int, default=1000000, help="points in the d = 3 synthetic sets (default 10^6)")
    ap.add_argument("--uniform-eps", default="0.039682",
                    help="eps of the uniform workload at n = 10^6, comma list (default 0.039682)")
    ap.add_argument("--fmnist-rows", type=int, default=None, help="first M rows of Fashion-MNIST only")
    ap.add_argument("--fmnist-eps", default="0,1,2", help="which of the three eps (indices; default all)")
    ap.add_argument("--peers", default="all", help="comma list from: " + ",".join(ALL_PEERS))
    ap.add_argument("--cache", default=None)
    ap.add_argument("--tmp", default="/dev/shm" if os.path.isdir("/dev/shm") else None,
                    help="where grove writes its full output (a tmpfs; default /dev/shm)")
    ap.add_argument("--no-grove-full", action="store_true", help="grove --count-only only")
    ap.add_argument("--no-hash", action="store_true", help="skip the pair-set hashes")
    ap.add_argument("--no-faiss-check", action="store_true", help="skip the float64 check of FAISS's pairs")
    a = ap.parse_args()

    threads = [int(t) for t in a.threads.split(",")]
    peers = ALL_PEERS if a.peers == "all" else [p for p in a.peers.split(",") if p]
    for p in peers:
        if p not in ALL_PEERS:
            ap.error("unknown peer %s" % p)
    cache = cache_dir(a.cache)
    extra = a.grove_args.split()
    do_hash = not a.no_hash

    describe_machine()
    print("grove: %s; timeout %g s per run; single runs (noisy machine)" % (a.grove, a.timeout))
    nano = build_nanoflann() if "nanoflann" in peers else (None, None)

    cases = []  # (title, path, eps)
    scale = (1e6 / a.n) ** (1 / 3)
    for w in a.workloads.split(","):
        if w == "uniform":
            path = synthetic("uniform", a.n, cache, a.grove)
            for e in a.uniform_eps.split(","):
                cases.append(("uniform [0,1)^3", path, round(float(e) * scale, 7)))
        elif w == "expo":
            cases.append(("exponential rate 40", synthetic("exponential", a.n, cache, a.grove),
                          round(0.0020007 * scale, 8)))
        elif w == "fmnist":
            try:
                path = fmnist(cache, a.fmnist_rows)
            except OSError as e:
                print("fmnist: %s (apt-get install dataset-fashion-mnist)" % e)
                continue
            for k in a.fmnist_eps.split(","):
                cases.append(("Fashion-MNIST", path, FMNIST_EPS[int(k)]))
        elif w == "building":
            try:
                cases.append(("building.ply (CGAL)", building(cache), 0.5377))
            except (OSError, KeyError) as e:
                print("building: %s (apt-get install libcgal-demo)" % e)
        else:
            ap.error("unknown workload %s" % w)

    timed_out = {}  # (tool, threads, path) -> smallest eps that timed out: larger eps are skipped
    for title, path, eps in cases:
        x = np.load(path, mmap_mode="r")
        n, d = x.shape
        del x
        results = []  # (t, name, got, status, grove seconds by mode)
        for t in threads:
            g = {}
            for mode in ("count", "full"):
                if mode == "full" and a.no_grove_full:
                    continue
                g[mode] = grove_join(a.grove, path, eps, t, a.timeout, mode == "full", a.tmp, extra, do_hash)
            gsec = {m: (g[m][0] or {}).get("seconds") for m in g}
            for m in g:
                results.append((t, "grove " + m, g[m][0], g[m][1], gsec))
            for p in peers:
                if p in SINGLE_THREADED and t != threads[0]:
                    continue
                tt = 1 if p in SINGLE_THREADED else t
                key = (p, tt, path)
                if key in timed_out and timed_out[key] <= eps:
                    got, status = None, "timeout (at eps %g already)" % timed_out[key]
                else:
                    got, status = run_peer(p, path, eps, tt, a.timeout, do_hash, not a.no_faiss_check, nano)
                    if status == "timeout":
                        timed_out[key] = min(eps, timed_out.get(key, eps))
                results.append((tt, p, got, status, gsec))
        # the exact |R| and reference pair set: grove's, else the exact peers' (FAISS is not exact)
        exact, ref, ref_from = None, None, "grove full"
        for pref in ("grove full", "grove count", "nanoflann", "ckdtree_count", "ckdtree_pairs", "sklearn_kd"):
            for t, name, got, status, gsec in results:
                if name == pref and got is not None:
                    if exact is None:
                        exact = got.get("pairs")
                    if ref is None and got.get("pairs_hash"):
                        ref, ref_from = got["pairs_hash"], name
        rows = []
        for t, name, got, status, gsec in results:
            r = {"tool": name, "threads": t, "R": ("n/a" if status.startswith("error") else "n/a (%s)" % status)
                 if name.startswith("grove") else status, "seconds": "",
                 "build": "", "wall": "", "rss": "", "ratio": "", "set": ""}
            if got is not None:
                r["R"] = str(got.get("pairs"))
                if name == "faiss" and exact is not None:
                    r["R"] += " (exact %d; radius %.9g" % (exact, got.get("radius", float("nan")))
                    if "faiss_extra" in got:
                        kept = got["pairs"] - got["faiss_extra"]
                        r["R"] += ", missed %d, extra %d" % (exact - kept, got["faiss_extra"])
                    r["R"] += ")"
                r["seconds"] = fmt_s(got["seconds"])
                if got.get("build_seconds") is not None:
                    r["build"] = fmt_s(got["build_seconds"])
                elif name.startswith("grove") and got.get("io_seconds") is not None:
                    r["build"] = "io %.3f" % got["io_seconds"]
                r["wall"] = fmt_s(got["wall"]) if "wall" in got else ""
                if got.get("peak_rss_bytes"):
                    r["rss"] = "%.0f" % (got["peak_rss_bytes"] / 2**20)
                if not name.startswith("grove"):
                    base = gsec.get("count" if name in COUNT_ONLY else "full")
                    if base:
                        r["ratio"] = "%.2fx" % (got["seconds"] / base)
                elif name == "grove full" and gsec.get("count") and got.get("seconds"):
                    r["ratio"] = "count/full %.0f%%" % (100 * gsec["count"] / got["seconds"])
                if got.get("pairs_hash") and ref is not None:
                    r["set"] = "=" if got["pairs_hash"] == ref else "differs"
                elif exact is not None and got.get("pairs") is not None:
                    r["set"] = "\\|R\\| =" if got["pairs"] == exact else "\\|R\\| differs"
                if got.get("note"):
                    r["set"] += " (" + got["note"] + ")"
            rows.append(r)
        if ref is not None and ref_from != "grove full":
            print("\n(no grove pair set: 'set' compares with %s)" % ref_from)
        table(title, n, d, eps, rows, exact)
        summary(results)
    print()
    print("seconds: build + search, array in memory to result in memory (grove: --json seconds, no file I/O;")
    print("its 'build s' column shows io_seconds). vs grove: tool / grove at the row's thread count (grove full;")
    print("grove count for count-only tools); > 1 means grove is faster. set: pair-set hash equal to grove full's.")


if __name__ == "__main__":
    main()
