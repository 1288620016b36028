#!/usr/bin/env python3
"""bench/mpi.py: grove's distributed runs under mpirun, one rank count
beside another, in the same run.

    make && python3 bench/mpi.py [--n 1000000] [--per-rank 500000] [--ranks 1,2]
        [--neighbours 30] [--sections gravity,nbody,let,join,dbscan,fof,paircount] [--grove build/grove]
        [--nbody-steps 10]
        [--let-n 250000,500000,1000000] [--let-ranks 2,4,8,16] [--timeout 900] [--cache DIR]

Data: N uniform points in [0, 1)^3 (`grove gen uniform --seed 1`, float64),
cached as .npy under --cache (default $XDG_CACHE_HOME/grove-bench-data or
/tmp/grove-bench-data), never in the repo. eps is chosen for about
--neighbours points (itself included) within eps of a point:
n 4/3 pi eps^3 = neighbours.

Every run is `mpirun -np P --bind-to none grove ... --threads 1 --json`
(one OpenMP thread per rank, OMP_NUM_THREADS=1); "seconds" is the --json
"seconds" of rank 0 (the call, file I/O excluded), "sent/rank" the mean of
its "rank_bytes_sent" (grove_mpi_bytes_sent: the point exchange, the rows
sent home and, for DBSCAN and FoF, the links and labels; for gravity the
particles, essential trees and results), "imbalance" the --json
"load_imbalance" (gravity: the slowest rank's walk seconds over the mean).

Sections (functions below):
  gravity one `grove gravity` force evaluation (theta 0.75, softening
          0.01) of grove's seeded Plummer sphere (`grove nbody --ic plummer
          --seed 1`): strong scaling at N particles, weak at --per-rank
          particles per rank; "seconds" covers the decomposition, the trees,
          the essential trees, the walks and the results sent home
          (also against one process run without mpirun), and a table of
          the slowest rank's seconds in each phase (--json rank_seconds_*)
  nbody   `grove nbody` on the same Plummer sphere (--nbody-steps shared
          steps of 1/128, theta 0.75, softening 0.01; a snapshot and
          checkpoint at the start and the end, outside "seconds"): seconds
          per step (the steps alone: the particles stay in their domains
          and only those crossing a boundary move), against one process
          without mpirun, strong at N and weak at --per-rank; bytes each
          rank sent per step (--json rank_bytes_per_step: migration,
          essential trees, and the first decomposition spread over the
          steps), particles migrated per step, decompositions, imbalance,
          and the slowest rank's seconds per step in each phase
  let     the essential trees' bytes per rank (--json rank_bytes_let) at
          --let-n particles on --let-ranks ranks (oversubscribed: bytes,
          not times), and the fit of docs/mpi.md's volume model
  join    the self-join writing --offsets and --indices (one process
          streams its rows; under mpirun every rank computes its rows and
          rank 0 gathers them, inside "seconds"; writing is outside it on
          both; --count-only would not compare, since alone it only
          counts): strong scaling at N points on
          each rank count, weak scaling at --per-rank points per rank (eps
          shrinking with n so the neighbours per point stay the same), and
          the strong runs again on the points sorted by x (by the slab
          coordinate, the one of largest variance: each rank's block of rows
          is then about its slab: what is sent is the halo alone, the
          quantity docs/mpi.md's scaling model extrapolates)
  dbscan  `grove dbscan --eps eps --min-samples 20` at N, without and with
          --sample-weight (uniform in [0, 2)), on each rank count and on one
          process without mpirun: seconds, bytes sent and each rank's peak
          resident memory (--json rank_peak_rss_bytes)
  fof     `grove fof --b 0.2` at N, strong scaling
Ratios: speedup = seconds on the first rank count / seconds on P;
efficiency = speedup / (P / first P) for strong scaling, seconds on the
first / seconds on P for weak scaling. Single runs on a shared machine:
timings are noisy.
"""
import argparse
import math
import os
import platform
import subprocess
import sys

import numpy as np

from machine import cache_dir, cpu_model, last_json

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


# ---- running ------------------------------------------------------------------

def mpirun(grove, ranks, args, timeout):
    """`grove args` on `ranks` ranks with one thread each: its --json, or
    {"error": ...}."""
    env = dict(os.environ, OMP_NUM_THREADS="1")
    cmd = ["mpirun", "--allow-run-as-root", "--oversubscribe", "--bind-to", "none", "-np", str(ranks),
           grove] + args + ["--threads", "1", "--json"]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return {"error": "timeout"}
    r = last_json(p.stdout)
    if p.returncode != 0 or r is None:
        said = [line for line in p.stderr.splitlines() if line.startswith("grove")]
        return {"error": (said or ["exit %d" % p.returncode])[0]}
    return r


def uniform(grove, n, cache, sort_x=False):
    """N uniform points in [0, 1)^3 (seed 1), cached; with sort_x sorted by
    the coordinate of largest variance (the one the join cuts into slabs;
    called x in the tables)."""
    path = os.path.join(cache, "uniform_n%d_s1.npy" % n)
    if not os.path.exists(path):
        tmp = path + ".part.npy"
        subprocess.run([grove, "gen", "uniform", "--n", str(n), "--dims", "3", "--seed", "1", "-o", tmp,
                        "--quiet"], check=True)
        os.replace(tmp, path)
    if not sort_x:
        return path
    sorted_path = os.path.join(cache, "uniform_n%d_s1_xsorted.npy" % n)
    if not os.path.exists(sorted_path):
        x = np.load(path)
        j = int(np.argmax(x.var(axis=0)))
        np.save(sorted_path + ".part.npy", x[np.argsort(x[:, j], kind="stable")])
        os.replace(sorted_path + ".part.npy", sorted_path)
    return sorted_path


def eps_for(n, neighbours):
    return (neighbours / (n * 4 / 3 * math.pi)) ** (1 / 3)


# ---- rows and tables ----------------------------------------------------------

def row(kind, n, ranks, r, base):
    """One table row from a run's --json r; base: the first rank count's row."""
    out = {"kind": kind, "n": n, "ranks": ranks}
    if "error" in r:
        out["error"] = r["error"]
        return out
    sent = r.get("rank_bytes_sent") or [0]
    out.update(seconds=r["seconds"], sent=sum(sent) / len(sent), sent_max=max(sent))
    out["per_point"] = out["sent"] / (n / ranks)
    out["imbalance"] = r.get("load_imbalance")
    if base and "seconds" in base:
        out["speedup"] = base["seconds"] / r["seconds"]
        scale = ranks / base["ranks"]
        out["efficiency"] = out["speedup"] if kind.startswith("weak") else out["speedup"] / scale
    return out


def print_table(title, rows):
    print("\n### " + title)
    print("| run | n | ranks | seconds | speedup | efficiency | sent/rank (MB) | max (MB) | bytes/point | imbalance |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for x in rows:
        if "error" in x:
            print("| %s | %d | %d | %s | | | | | | |" % (x["kind"], x["n"], x["ranks"], x["error"]))
            continue
        print("| %s | %d | %d | %.3f | %s | %s | %.1f | %.1f | %.1f | %s |" % (
            x["kind"], x["n"], x["ranks"], x["seconds"],
            "%.2fx" % x["speedup"] if "speedup" in x else "-",
            "%.0f%%" % (100 * x["efficiency"]) if "efficiency" in x else "-",
            x["sent"] / 1e6, x["sent_max"] / 1e6, x["per_point"],
            "%.2f" % x["imbalance"] if x.get("imbalance") else "-"))
    sys.stdout.flush()


# ---- sections -----------------------------------------------------------------

def scaling(kind, ranks_list, n_for, args_for, opts):
    """Rows of one scaling series: n_for(P) points, args_for(n) flags."""
    rows, base = [], None
    for p in ranks_list:
        n = n_for(p)
        r = row(kind, n, p, mpirun(opts.grove, p, args_for(n), opts.timeout), base)
        base = base or r
        rows.append(r)
    return rows


def plummer(grove, n, cache):
    """(n, 4) x, y, z, m of grove's seeded Plummer sphere, cached."""
    path = os.path.join(cache, "plummer_n%d_s1.npy" % n)
    if not os.path.exists(path):
        out = os.path.join(cache, "plummer_ic_n%d" % n)
        subprocess.run([grove, "nbody", "--ic", "plummer", "--n", str(n), "--seed", "1", "--steps", "0",
                        "--snapshot-every", "1", "--out", out, "--quiet"], check=True)
        s = np.load(os.path.join(out, "snap_000000.npy"))
        np.save(path + ".part.npy", np.c_[s[:, :3], s[:, 6]])
        os.replace(path + ".part.npy", path)
    return path


PHASES = ("decompose", "tree", "let", "walk", "home")


def plain(grove, args, timeout):
    """`grove args` alone (no mpirun), one thread: its --json."""
    env = dict(os.environ, OMP_NUM_THREADS="1")
    p = subprocess.run([grove] + args + ["--threads", "1", "--json"], capture_output=True, text=True,
                       timeout=timeout, env=env)
    return last_json(p.stdout) or {"error": "exit %d" % p.returncode}


def print_phases(title, runs):
    """Per run: the slowest rank's seconds in each phase of the distributed
    gravity (grove_mpi_phases) and the mean essential-tree bytes a rank sent."""
    print("\n### " + title)
    print("| run | n | ranks | seconds | " + " | ".join(PHASES) + " | essential trees sent/rank (MB) |")
    print("|---|---:|---:|---:|" + "---:|" * len(PHASES) + "---:|")
    for kind, n, p, r in runs:
        if "error" in r or "rank_seconds_walk" not in r:
            continue
        let = r["rank_bytes_let"]
        print("| %s | %d | %d | %.3f | %s | %.2f |" % (
            kind, n, p, r["seconds"], " | ".join("%.3f" % max(r["rank_seconds_" + k]) for k in PHASES),
            sum(let) / len(let) / 1e6))
    sys.stdout.flush()


def gravity_section(opts):
    acc = os.path.join(opts.cache, "mpi_bench_acc.npy")

    def args(n):
        return ["gravity", plummer(opts.grove, n, opts.cache), "--theta", "0.75", "--softening", "0.01",
                "--acc", acc]

    alone = plain(opts.grove, args(opts.n), opts.timeout)
    runs = [("strong", opts.n, p, mpirun(opts.grove, p, args(opts.n), opts.timeout)) for p in opts.ranks]
    runs += [("weak", opts.per_rank * p, p, mpirun(opts.grove, p, args(opts.per_rank * p), opts.timeout))
             for p in opts.ranks]
    rows, bases = [], {}
    for kind, n, p, r in runs:
        rows.append(row(kind, n, p, r, bases.get(kind)))
        bases.setdefault(kind, rows[-1])
    print_table("gravity: Plummer sphere, theta 0.75, softening 0.01, one force evaluation", rows)
    if "seconds" in alone:
        print("\none process without mpirun (n = %d): %.3f s; strong scaling against it: %s" % (
            opts.n, alone["seconds"], ", ".join("np %d %.2fx" % (x["ranks"], alone["seconds"] / x["seconds"])
                                               for x in rows if x["kind"] == "strong" and "seconds" in x)))
    print_phases("gravity phases: the slowest rank's seconds", runs)
    os.remove(acc)
    return rows


def nbody_section(opts):
    out = os.path.join(opts.cache, "mpi_bench_nbody")
    steps = opts.nbody_steps

    def args(n):
        return ["nbody", "--ic", "plummer", "--n", str(n), "--seed", "1", "--steps", str(steps), "--theta", "0.75",
                "--softening", "0.01", "--snapshot-every", str(steps), "--out", out]

    alone = plain(opts.grove, args(opts.n), opts.timeout)
    runs = [("strong", opts.n, p, mpirun(opts.grove, p, args(opts.n), opts.timeout)) for p in opts.ranks]
    runs += [("weak", opts.per_rank * p, p, mpirun(opts.grove, p, args(opts.per_rank * p), opts.timeout))
             for p in opts.ranks]
    print("\n### nbody: Plummer sphere, %d shared steps of 1/128, theta 0.75, softening 0.01" % steps)
    print("| run | n | ranks | s/step | speedup | vs one process | sent/rank/step (MB) | migrated/step | "
          "decompositions | imbalance |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    bases = {}
    for kind, n, p, r in runs:
        if "error" in r:
            print("| %s | %d | %d | %s |" % (kind, n, p, r["error"]))
            continue
        per = r["seconds"] / steps
        base = bases.setdefault(kind, per)
        speed = base / per
        vs = ("%.2fx" % (alone["seconds"] / steps / per)) if kind == "strong" and "seconds" in alone else ""
        sent = r["rank_bytes_per_step"]
        print("| %s | %d | %d | %.3f | %.2fx | %s | %.2f | %.0f | %d | %.2f |" % (
            kind, n, p, per, speed, vs, sum(sent) / len(sent) / 1e6, sum(r["rank_migrated"]) / steps,
            r["decompositions"], r["load_imbalance"]))
    if "seconds" in alone:
        print("\none process without mpirun (n = %d): %.3f s per step" % (opts.n, alone["seconds"] / steps))
    print("\n### nbody phases: the slowest rank's seconds per step (--json rank_seconds_*), interactions per particle")
    print("| run | n | ranks | s/step | " + " | ".join(PHASES) + " | interactions/particle |")
    print("|---|---:|---:|---:|" + "---:|" * len(PHASES) + "---:|")
    for kind, n, p, r in runs:
        if "error" not in r:
            print("| %s | %d | %d | %.3f | %s | %.0f |" % (
                kind, n, p, r["seconds"] / steps,
                " | ".join("%.3f" % (max(r["rank_seconds_" + k]) / steps) for k in PHASES),
                r["interactions_per_particle"]))
    sys.stdout.flush()


def let_section(opts):
    """Essential-tree bytes per rank against particles per rank and ranks
    (oversubscribed: the bytes do not depend on the cores), and the fit of
    docs/mpi.md's model B = n^(2/3) (a + b log2 P) by least squares."""
    acc = os.path.join(opts.cache, "mpi_bench_acc.npy")
    points = []
    print("\n### essential trees: mean bytes sent per rank (MB), Plummer sphere, theta 0.75")
    print("| N | ranks | n per rank | sent/rank (MB) | max (MB) | interactions/particle | vs one tree |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for N in opts.let_n:
        one = mpirun(opts.grove, 1, ["gravity", plummer(opts.grove, N, opts.cache), "--theta", "0.75",
                                     "--softening", "0.01", "--acc", acc], opts.timeout)
        for p in opts.let_ranks:
            r = mpirun(opts.grove, p, ["gravity", plummer(opts.grove, N, opts.cache), "--theta", "0.75",
                                       "--softening", "0.01", "--acc", acc], opts.timeout)
            if "error" in r:
                print("| %d | %d | | %s | | | |" % (N, p, r["error"]))
                continue
            let = r["rank_bytes_let"]
            mean = sum(let) / len(let)
            points.append((N / p, p, mean))
            ipp = r["interactions_per_particle"]
            print("| %d | %d | %d | %.2f | %.2f | %.0f | %s |" % (
                N, p, N // p, mean / 1e6, max(let) / 1e6, ipp,
                "%+.1f%%" % (100 * (ipp / one["interactions_per_particle"] - 1)) if "error" not in one else "-"))
            sys.stdout.flush()
    if os.path.exists(acc):
        os.remove(acc)
    if len(points) >= 2:
        X = np.array([[n ** (2 / 3), n ** (2 / 3) * math.log2(p)] for n, p, _ in points])
        y = np.array([b for _, _, b in points])
        (a, b), *_ = np.linalg.lstsq(X, y, rcond=None)
        err = np.abs(X @ np.array([a, b]) - y) / y
        print("\nfit B = n^(2/3) (a + b log2 P): a = %.1f, b = %.1f bytes; median |error| %.0f%%, max %.0f%%"
              % (a, b, 100 * np.median(err), 100 * err.max()))
        for n in (1e5, 1e6, 1e7):
            print("  n = %.0e per rank: %s" % (n, ", ".join(
                "P %d %.1f MB" % (p, n ** (2 / 3) * (a + b * math.log2(p)) / 1e6) for p in (2, 16, 128, 1000))))
    return points


def join_section(opts):
    N, k = opts.n, opts.neighbours

    def join_args(sort_x):
        return lambda n: ["join", uniform(opts.grove, n, opts.cache, sort_x), "--eps", "%.6g" % eps_for(n, k),
                          "--offsets", os.path.join(opts.cache, "mpi_bench_offsets.npy"),
                          "--indices", os.path.join(opts.cache, "mpi_bench_indices.npy")]

    rows = scaling("strong", opts.ranks, lambda p: N, join_args(False), opts)
    rows += scaling("weak", opts.ranks, lambda p: opts.per_rank * p, join_args(False), opts)
    rows += scaling("strong, x-sorted", opts.ranks, lambda p: N, join_args(True), opts)
    print_table("join: self-join, uniform [0,1)^3, d = 3, eps for %d neighbours (%.5g at n = %d), rows written"
                % (k, eps_for(N, k), N), rows)
    for name in ("mpi_bench_offsets.npy", "mpi_bench_indices.npy"):
        os.remove(os.path.join(opts.cache, name))
    return rows


def weights(n, cache):
    """N sample weights uniform in [0, 2) (NumPy's generator, seed 1), cached."""
    path = os.path.join(cache, "weights_n%d_s1.npy" % n)
    if not os.path.exists(path):
        np.save(path + ".part.npy", np.random.default_rng(1).uniform(0, 2, n))
        os.replace(path + ".part.npy", path)
    return path


def dbscan_section(opts):
    """Seconds, bytes sent and peak resident memory per rank, without and
    with sample weights, against one process without mpirun."""
    N, k = opts.n, opts.neighbours
    labels = os.path.join(opts.cache, "mpi_bench_labels.npy")

    def args(weighted):
        return ["dbscan", uniform(opts.grove, N, opts.cache), "--eps", "%.6g" % eps_for(N, k), "--min-samples", "20",
                "--labels", labels] + (["--sample-weight", weights(N, opts.cache)] if weighted else [])

    print("\n### dbscan: uniform [0,1)^3, n = %d, eps %.5g, min_samples 20; weights uniform in [0, 2)"
          % (N, eps_for(N, k)))
    print("| weights | run | ranks | seconds | vs one process | clusters | sent/rank (MB) | peak RSS per rank (MB) |")
    print("|---|---|---:|---:|---:|---:|---:|---|")
    for weighted in (False, True):
        alone = plain(opts.grove, args(weighted), opts.timeout)
        name = "yes" if weighted else "no"
        if "error" in alone:
            print("| %s | one process | 1 | %s | | | | |" % (name, alone["error"]))
        else:
            print("| %s | one process | 1 | %.3f | 1.00x | %d | 0 | %.0f |" % (
                name, alone["seconds"], alone["clusters"], alone["peak_rss_bytes"] / 1e6))
        for p in opts.ranks:
            r = mpirun(opts.grove, p, args(weighted), opts.timeout)
            if "error" in r:
                print("| %s | mpirun | %d | %s | | | | |" % (name, p, r["error"]))
                continue
            sent = r.get("rank_bytes_sent") or [0]
            rss = r.get("rank_peak_rss_bytes") or [r["peak_rss_bytes"]]
            print("| %s | mpirun | %d | %.3f | %s | %d | %.1f | %s |" % (
                name, p, r["seconds"], "%.2fx" % (alone["seconds"] / r["seconds"]) if "seconds" in alone else "-",
                r["clusters"], sum(sent) / len(sent) / 1e6, ", ".join("%.0f" % (b / 1e6) for b in rss)))
            sys.stdout.flush()
    print("\nEvery rank of `mpirun grove dbscan` reads the whole input (%.0f MB) and holds n labels and core flags "
          "(%.0f MB) and, weighted, n weights (%.0f MB): the CLI's part of each rank's peak."
          % (24 * N / 1e6, 9 * N / 1e6, 8 * N / 1e6))
    if os.path.exists(labels):
        os.remove(labels)


def fof_section(opts):
    N = opts.n
    rows = scaling("strong", opts.ranks, lambda p: N, lambda n: [
        "fof", uniform(opts.grove, n, opts.cache), "--b", "0.2",
        "--groups", os.path.join(opts.cache, "mpi_bench_groups.npy")], opts)
    print_table("fof: uniform [0,1)^3, n = %d, b = 0.2" % N, rows)
    return rows


def paircount_section(opts):
    """DD with weights, uniform points, against one process without mpirun:
    seconds, bytes sent, and the counts checked equal bin for bin."""
    N, k = opts.n, opts.neighbours
    rmax = eps_for(N, k)
    edges = ",".join("%.6g" % (rmax * f) for f in (0, 0.25, 0.5, 1))
    args = ["paircount", uniform(opts.grove, N, opts.cache), "--bins", edges, "--weights", weights(N, opts.cache)]
    print("\n### paircount: DD weighted, uniform [0,1)^3, n = %d, edges %s" % (N, edges))
    print("| run | ranks | seconds | vs one process | sent/rank (MB) | counts |")
    print("|---|---:|---:|---:|---:|---|")
    alone = plain(opts.grove, args, opts.timeout)
    if "error" in alone:
        print("| one process | 1 | %s | | | |" % alone["error"])
    else:
        print("| one process | 1 | %.3f | 1.00x | 0 | %s |" % (alone["seconds"], sum(alone["npairs"])))
    for p in opts.ranks:
        r = mpirun(opts.grove, p, args, opts.timeout)
        if "error" in r:
            print("| mpirun | %d | %s | | | |" % (p, r["error"]))
            continue
        sent = r.get("rank_bytes_sent") or [0]
        same = "npairs" in alone and r["npairs"] == alone["npairs"]
        print("| mpirun | %d | %.3f | %s | %.1f | %s |" % (
            p, r["seconds"], "%.2fx" % (alone["seconds"] / r["seconds"]) if "seconds" in alone else "-",
            sum(sent) / len(sent) / 1e6, "identical" if same else "DIFFER"))
        sys.stdout.flush()


SECTIONS = {"gravity": gravity_section, "nbody": nbody_section, "let": let_section, "join": join_section, "dbscan": dbscan_section,
            "fof": fof_section, "paircount": paircount_section}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=1000000)
    ap.add_argument("--per-rank", type=int, default=500000)
    ap.add_argument("--ranks", default="1,2")
    ap.add_argument("--neighbours", type=float, default=30)
    ap.add_argument("--sections", default="gravity,nbody,let,join,dbscan,fof,paircount")
    ap.add_argument("--nbody-steps", type=int, default=10)
    ap.add_argument("--grove", default=os.path.join(ROOT, "build", "grove"))
    ap.add_argument("--timeout", type=float, default=900)
    ap.add_argument("--cache", default=None)
    ap.add_argument("--let-n", default="250000,500000,1000000")
    ap.add_argument("--let-ranks", default="2,4,8,16")
    opts = ap.parse_args()
    opts.ranks = [int(p) for p in opts.ranks.split(",")]
    opts.let_n = [int(n) for n in opts.let_n.split(",")]
    opts.let_ranks = [int(p) for p in opts.let_ranks.split(",")]
    opts.cache = cache_dir(opts.cache)
    print("machine: %s, %d logical CPUs, %s; %s" % (cpu_model(), os.cpu_count(), platform.platform(),
                                                  subprocess.run(["mpirun", "--version"], capture_output=True,
                                                                 text=True).stdout.splitlines()[0]))
    print("command: python3 bench/mpi.py " + " ".join(sys.argv[1:]))
    for name in opts.sections.split(","):
        SECTIONS[name](opts)


if __name__ == "__main__":
    main()
