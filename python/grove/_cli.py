"""The ``grove`` command that ``pip install ./python`` installs: it runs the
CLI binary the package ships next to libgrove.so (built from the same
sources by setup.py) with the same arguments, in place of this process, so
exit statuses and signals are the binary's own."""
from __future__ import annotations

import os
import sys
from pathlib import Path


def binary() -> Path:
    """Where the package keeps the grove binary."""
    return Path(__file__).with_name("grove")


def main() -> None:
    path = binary()
    if not os.access(path, os.X_OK):
        sys.exit(f"grove: no grove binary at {path}; install the package with `pip install ./python` from the "
                 "grove repository, which builds it")
    os.execv(path, ["grove", *sys.argv[1:]])
