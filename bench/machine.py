"""Helpers the bench scripts share: the machine they ran on, a timing
loop, the data cache, a tool's --json line, and the torch stand-in that
lets balltree-erwin load."""
import json
import os
import sys
import time
import types


# The instruction sets that pick grove's code paths at run time.
VECTOR_FLAGS = ("avx2", "avx512f", "avx512_bitalg")


def cpu_model() -> str:
    """The CPU's model name from /proc/cpuinfo ("unknown" elsewhere), with
    its family and model numbers and the vector instruction sets grove picks
    its paths by: a virtual machine may name only the vendor ("AMD EPYC"),
    and two generations under that name run different code and speeds."""
    fields = {}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if not line.strip():
                    break  # the first processor is enough
                key, _, value = line.partition(":")
                fields[key.strip()] = value.strip()
    except OSError:
        pass
    name = fields.get("model name", "unknown")
    if "cpu family" not in fields:
        return name
    flags = set(fields.get("flags", "").split())
    vector = ", ".join(f for f in VECTOR_FLAGS if f in flags) or "no AVX2"
    return f"{name} (family {fields['cpu family']}, model {fields.get('model', '?')}; {vector})"


def best_seconds(fn, budget_s, min_repeats=3, max_repeats=50):
    """Minimum seconds of fn() over at least min_repeats runs, more while
    the runs so far took less than budget_s (at most max_repeats); one run
    longer than the budget is all that is waited for."""
    best, spent, runs = float("inf"), 0.0, 0
    while runs < min_repeats or (spent < budget_s and runs < max_repeats):
        t0 = time.perf_counter()
        fn()
        dt = time.perf_counter() - t0
        best, spent, runs = min(best, dt), spent + dt, runs + 1
        if dt > budget_s:
            break
    return best


def cache_dir(arg):
    """The data cache: arg, else $XDG_CACHE_HOME/grove-bench-data, else
    /tmp/grove-bench-data (created); never the repository."""
    if arg:
        d = arg
    elif os.environ.get("XDG_CACHE_HOME"):
        d = os.path.join(os.environ["XDG_CACHE_HOME"], "grove-bench-data")
    else:
        d = "/tmp/grove-bench-data"
    os.makedirs(d, exist_ok=True)
    return d


def last_json(text):
    """The last JSON object line of a process's stdout, or None."""
    for line in reversed((text or "").strip().splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                return json.loads(line)
            except ValueError:
                pass
    return None


def torch_standin():
    """balltree-erwin imports torch at module level but its NumPy entry
    points never use it; without torch installed, a stand-in module is put
    in its place (a Tensor class and compiler.disable returning functions
    unchanged). True when the stand-in was installed."""
    try:
        import torch  # noqa: F401
        return False
    except ImportError:
        pass
    stub = types.ModuleType("torch")

    class Tensor:  # only ever named in annotations and isinstance checks
        pass

    def disable(fn=None, recursive=True):
        return (lambda f: f) if fn is None else fn

    stub.Tensor = Tensor
    stub.compiler = types.SimpleNamespace(disable=disable)
    sys.modules["torch"] = stub
    return True
