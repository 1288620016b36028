"""Build the grove Python package: compile libgrove and the grove command
from this repository's own sources with its Makefile (no second copy of the
C code) and ship both inside the package: libgrove.so, which grove/_clib.py
loads with ctypes, and the CLI binary grove/grove, which the `grove`
console script (grove/_cli.py) runs.

    pip install ./python          (from the repository root; needs a C
                                   compiler with OpenMP, make and NumPy)
"""
import os
import re
import shutil
import subprocess
from pathlib import Path

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent.parent


def version() -> str:
    header = (ROOT / "include" / "grove.h").read_text()
    return re.search(r'#define GROVE_VERSION_STRING "([^"]+)"', header).group(1)


class BuildWithLibrary(build_py):
    """build_py, then `make` libgrove.so and the grove binary into a private
    build folder and copy them next to the Python files."""

    def run(self) -> None:
        super().run()
        if not (ROOT / "Makefile").exists() or not (ROOT / "src").is_dir():
            raise RuntimeError(f"grove: the C sources are not at {ROOT}; build from the grove repository "
                               "(pip install ./python) so the package compiles them")
        build = Path(self.get_finalized_command("build").build_temp).resolve() / "libgrove"
        jobs = str(os.cpu_count() or 1)
        shipped = ("libgrove.so", "grove")
        subprocess.run(["make", "-C", str(ROOT), f"-j{jobs}", f"BUILD={build}", *(f"{build}/{f}" for f in shipped)],
                       check=True)
        package = Path(self.build_lib) / "grove"
        package.mkdir(parents=True, exist_ok=True)
        for f in shipped:
            shutil.copy(build / f, package / f)  # with its mode: the binary stays executable


class BinaryDistribution(Distribution):
    """The wheel carries a compiled library: tag it for this platform."""

    def has_ext_modules(self) -> bool:
        return True


setup(version=version(), cmdclass={"build_py": BuildWithLibrary}, distclass=BinaryDistribution)
