#!/usr/bin/env python3
"""grove's default thread count against one thread, on an idle machine and
beside a second multi-threaded job, for every module's main call.

    make && python3 bench/contention.py [--runs 7] [--baseline OLD/libgrove.so] [--rows a,b]

Each row is one call from the Python binding (a size of 0.1-2 s on one
thread of a 2-core machine). A child process per row and library loads
the data once, then times the call alternately with threads=1 and with the
default threads (None), --runs times each; the tables give medians and the
ratio default / one thread (the goal: at most 1.2 beside a second job).
The second jobs, started before a row's child and stopped after it:

- grove: another `grove nbody` with --threads set to every core (a second
  grove run on all cores);
- blas: a NumPy matrix product loop on OpenBLAS's threads (every core).

--baseline times the default threads of another libgrove.so (the last
release, say) on the idle machine in the same run: the idle ratio
new / baseline says what the default costs where nothing else runs.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

from machine import cpu_model

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def _uniform(n, d, seed):
    import numpy as np
    return np.random.default_rng(seed).random((n, d))


def _blobs(n, d, seed):
    import grove
    return grove.generate("blobs", n, d, seed=seed, centers=8)


def _row_setup(name):
    """(what, call(threads)) for a row: the data made once, the call timed."""
    import grove
    import numpy as np
    if name == "balltree 16k":
        x = _uniform(16384, 3, 1)
        return "grove.balltree, 16,384 x 3 points, 50 builds", lambda t: [grove.balltree(x, threads=t) for _ in range(50)]
    if name == "balltree 1M":
        x = _uniform(1 << 20, 3, 2)
        return "grove.balltree, 2^20 x 3 points", lambda t: grove.balltree(x, threads=t)
    if name == "join":
        x = _uniform(400000, 3, 3)
        eps = (30 / (4 / 3 * np.pi * len(x))) ** (1 / 3)  # about 30 neighbours a point
        return "grove.join, 4e5 x 3 uniform, 30 neighbours", lambda t: grove.join(x, eps, threads=t)
    if name == "knn":
        x = _uniform(300000, 3, 4)
        return "grove.knn, 3e5 x 3 uniform, k 10", lambda t: grove.knn(x, 10, threads=t)
    if name == "emst":
        x = _uniform(200000, 3, 5)
        return "grove.emst, 2e5 x 3 uniform", lambda t: grove.emst(x, threads=t)
    if name == "hdbscan":
        x = _blobs(100000, 3, 6)
        return ("grove.HDBSCAN(min_cluster_size=50).fit, 1e5 x 3 blobs",
                lambda t: grove.HDBSCAN(min_cluster_size=50, threads=t).fit(x))
    if name == "dbscan":
        x = _blobs(300000, 3, 7)
        return ("grove.DBSCAN(eps=0.02, min_samples=10).fit, 3e5 x 3 blobs",
                lambda t: grove.DBSCAN(eps=0.02, min_samples=10, n_jobs=t).fit(x))
    if name == "fof":
        x = _uniform(500000, 3, 8)
        return "grove.fof(b=0.2), 5e5 x 3 uniform", lambda t: grove.fof(x, b=0.2, threads=t)
    if name == "gravity":
        sim = grove.NBody.from_ic("plummer", 300000, seed=9, threads=1)
        pos, mass = sim.positions, sim.masses
        return "grove.gravity, 3e5 Plummer, theta 0.75", lambda t: grove.gravity(pos, mass, 0.75, 0.01, threads=t)
    if name == "nbody 1e4":
        sim = grove.NBody.from_ic("plummer", 10000, seed=10)  # step(threads=None): the sim's default
        return "NBody.step(20), 1e4 Plummer", lambda t: sim.step(20, threads=t)
    if name == "nbody 1e5":
        sim = grove.NBody.from_ic("plummer", 100000, seed=11)
        return "NBody.step(2), 1e5 Plummer", lambda t: sim.step(2, threads=t)
    raise SystemExit(f"unknown row {name!r}")


ROWS = ["balltree 16k", "balltree 1M", "join", "knn", "emst", "hdbscan", "dbscan", "fof", "gravity", "nbody 1e4",
        "nbody 1e5"]


def child(name, runs, threads_list):
    """Runs in the child: times the row's call, alternating thread counts."""
    what, call = _row_setup(name)
    call(None)  # first touch, thread team started
    times = {str(t): [] for t in threads_list}
    for _ in range(runs):
        for t in threads_list:
            t0 = time.perf_counter()
            call(t)
            times[str(t)].append(time.perf_counter() - t0)
    print(json.dumps({"what": what, "times": times}))


def binding_of(lib):
    """The Python binding beside a libgrove.so's build folder (its structs
    match that library's), else this tree's."""
    beside = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(lib))), "python")
    return beside if os.path.isdir(os.path.join(beside, "grove")) else os.path.join(ROOT, "python")


def run_child(lib, name, runs, threads_list):
    env = dict(os.environ, GROVE_LIB=lib, PYTHONPATH=binding_of(lib))
    out = subprocess.run([sys.executable, __file__, "--child", name, "--runs", str(runs),
                          "--child-threads", ",".join(str(t) for t in threads_list)],
                         env=env, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


class SecondJob:
    """A second multi-threaded job on every core while the block runs."""

    def __init__(self, kind, grove_cli, tmp):
        self.kind, self.grove_cli, self.tmp, self.proc = kind, grove_cli, tmp, None

    def __enter__(self):
        cores = str(os.cpu_count())
        if self.kind == "grove":
            cmd = [self.grove_cli, "nbody", "--ic", "plummer", "--n", "100000", "--steps", "1000000000",
                   "--threads", cores, "--out", os.path.join(self.tmp, "second_job"), "--quiet"]
            env = dict(os.environ)
        elif self.kind == "blas":
            cmd = [sys.executable, "-c", "import numpy as np\na = np.random.rand(1500, 1500)\nwhile True: a @ a"]
            env = dict(os.environ, OPENBLAS_NUM_THREADS=cores, OMP_NUM_THREADS=cores)
        else:
            return self
        self.proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(1.0)  # let it start its threads
        if self.proc.poll() is not None:
            raise SystemExit(f"the second job ({self.kind}) exited at once: {' '.join(cmd)}")
        return self

    def __exit__(self, *exc):
        if self.proc:
            self.proc.kill()
            self.proc.wait()


def blas_threads():
    """How many threads NumPy's BLAS runs (threadpoolctl when installed)."""
    try:
        import numpy  # noqa: F401  (loads the BLAS threadpoolctl looks for)
        from threadpoolctl import threadpool_info
        return ", ".join(f"{i['internal_api']} {i['num_threads']} threads" for i in threadpool_info()
                         if i["user_api"] == "blas") or "no BLAS found"
    except ImportError:
        return "unknown (no threadpoolctl)"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--lib", default=os.path.join(ROOT, "build", "libgrove.so"))
    ap.add_argument("--grove", default=os.path.join(ROOT, "build", "grove"), help="the CLI the grove second job runs")
    ap.add_argument("--baseline", help="another libgrove.so whose default threads are timed on the idle machine")
    ap.add_argument("--rows", default=",".join(ROWS))
    ap.add_argument("--jobs", default="idle,grove,blas", help="idle and the second jobs to run beside")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--child-threads", default="1,0", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        child(a.child, a.runs, [int(t) or None for t in a.child_threads.split(",")])
        return
    rows = a.rows.split(",")
    print(f"# machine: {cpu_model()}, {os.cpu_count()} cores; {a.runs} runs per cell (medians); "
          f"python {sys.version.split()[0]}; NumPy's BLAS: {blas_threads()}")
    print(f"# lib: {os.path.abspath(a.lib)}" + (f"; baseline: {os.path.abspath(a.baseline)}" if a.baseline else ""))
    worst = {}
    with tempfile.TemporaryDirectory() as tmp:
        for job in a.jobs.split(","):
            base = job == "idle" and a.baseline
            print(f"\n## {'idle machine' if job == 'idle' else 'beside a second job: ' + job}\n")
            print("| call | 1 thread s | default s | default / 1 thread |" + (" baseline default s | new / baseline |" if base else ""))
            print("|---|---|---|---|" + ("---|---|" if base else ""))
            for name in rows:
                with SecondJob(job, a.grove, tmp):
                    r = run_child(a.lib, name, a.runs, [1, 0])
                    b = run_child(a.baseline, name, a.runs, [0]) if base else None
                one, dflt = statistics.median(r["times"]["1"]), statistics.median(r["times"]["None"])
                line = f"| {r['what']} | {one:.3f} | {dflt:.3f} | {dflt / one:.2f} |"
                if b:
                    old = statistics.median(b["times"]["None"])
                    line += f" {old:.3f} | {dflt / old:.2f} |"
                print(line, flush=True)
                if job != "idle":
                    worst[job] = max(worst.get(job, 0), dflt / one)
    for job, w in worst.items():
        print(f"\n# beside {job}: the largest default / 1 thread is {w:.2f} (goal <= 1.2)")


if __name__ == "__main__":
    main()
