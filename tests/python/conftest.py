"""Shared setup for the Python binding's tests.

In the repository (``make check``, or ``pytest tests/python`` from the root
after ``make``) the package is imported from python/ and the library from
build/ unless GROVE_LIB says otherwise; GROVE_CLI names the `grove` command
the results are compared with (default build/grove)."""
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
if "GROVE_LIB" not in os.environ and (ROOT / "build" / "libgrove.so").exists():
    os.environ["GROVE_LIB"] = str(ROOT / "build" / "libgrove.so")
sys.path.insert(0, str(ROOT / "python"))

from grove import _clib  # noqa: E402  (after the path and GROVE_LIB are set)

CLI = Path(os.environ.get("GROVE_CLI", ROOT / "build" / "grove"))

JOIN_MISSING = "" if all(map(_clib.has, ("grove_index_create", "grove_join_fill", "grove_join_stream", "grove_knn"))) \
    else "the loaded libgrove has no join/kNN yet (grove_index_create/grove_join_*/grove_knn missing): rebuild once " \
         "src/join lands"
needs_join = pytest.mark.skipif(bool(JOIN_MISSING), reason=JOIN_MISSING)


@pytest.fixture
def cli(tmp_path):
    """run(*args) -> the --json summary of `grove args... --json`, in tmp_path."""
    if not CLI.exists():
        pytest.skip(f"no grove command at {CLI} (run make)")

    def run(*args):
        out = subprocess.run([str(CLI), *map(str, args), "--json", "--quiet"], check=True, capture_output=True,
                             text=True, cwd=tmp_path).stdout
        return json.loads(out.strip().splitlines()[-1])

    return run


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


@pytest.fixture
def spy(monkeypatch):
    """spy(name) wraps the C function `name` and records each call's
    arguments in the returned list (the call still goes through)."""

    def install(name):
        real = getattr(_clib.lib, name)
        calls = []

        def wrapper(*args):
            calls.append(args)
            return real(*args)

        monkeypatch.setattr(_clib.lib, name, wrapper)
        return calls

    return install


def same_partition(a, b):
    """The same clusters up to renaming, and the same noise (-1)."""
    if not np.array_equal(a < 0, b < 0):
        return False
    pairs = set(zip(a[a >= 0].tolist(), b[b >= 0].tolist()))
    return len(pairs) == len(set(a[a >= 0].tolist())) == len(set(b[b >= 0].tolist()))
