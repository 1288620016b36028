"""Helpers the bench scripts share: the machine they ran on, a timing
loop, and the torch stand-in that lets balltree-erwin load."""
import sys
import time
import types


def cpu_model() -> str:
    """The CPU's model name from /proc/cpuinfo ("unknown" elsewhere)."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown"


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
