"""Build the grove Python package: compile libgrove and the grove command
with the repository's Makefile and ship both inside the package:
libgrove.so, which grove/_clib.py loads with ctypes, and the CLI binary
grove/grove, which the `grove` console script (grove/_cli.py) runs.

    pip install ./python          (from the repository root)
    python -m build python        (an sdist and a wheel, into python/dist)
    pip install grove_spatial-X.Y.Z.tar.gz

The C sources are the repository's (the folder above this one) in a
checkout; an sdist carries a copy of the ones the build needs under
csrc/ (SdistWithSources), so it builds anywhere with a C compiler, OpenMP
and make. The build is portable (no -march=native): vector code is chosen
at run time, so one wheel runs at full speed on AVX2 and AVX-512 machines.
"""
import os
import re
import shutil
import subprocess
from pathlib import Path

from setuptools import Distribution, setup
from setuptools.errors import ExecError
from setuptools.command.build_py import build_py
from setuptools.command.sdist import sdist

try:  # setuptools >= 70 has its own; before that the wheel package did
    from setuptools.command.bdist_wheel import bdist_wheel
except ImportError:
    try:
        from wheel.bdist_wheel import bdist_wheel
    except ImportError:  # no wheel can be built here; sdists and installs still can
        bdist_wheel = None

HERE = Path(__file__).resolve().parent
# What `make libgrove.so grove` reads: copied into an sdist's csrc/.
C_SOURCES = ("Makefile", "grove.pc.in", "include", "src", "cli")


def c_root() -> Path:
    """The sources to build: an sdist's csrc/ copy, else the checkout."""
    packed = HERE / "csrc"
    return packed if (packed / "Makefile").exists() else HERE.parent


ROOT = c_root()


def version() -> str:
    header = (ROOT / "include" / "grove.h").read_text()
    return re.search(r'#define GROVE_VERSION_STRING "([^"]+)"', header).group(1)


def missing_build_tools(path=None):
    """None when `make` and the C compiler (CC, else cc) are on path (PATH
    when None); otherwise one line saying which is missing and how to get
    it, or to install the wheel instead, which needs neither."""
    compiler = (os.environ.get("CC") or "cc").split()[0]
    missing = [tool for tool in ("make", compiler) if shutil.which(tool, path=path) is None]
    if not missing:
        return None
    return (f"grove: building libgrove from source needs make and a C compiler with OpenMP, but "
            f"{' and '.join(repr(tool) for tool in missing)} {'is' if len(missing) == 1 else 'are'} not on PATH: "
            "install them (Debian/Ubuntu: apt install make gcc; Fedora: dnf install make gcc), "
            "or install the wheel, which needs neither")


class BuildWithLibrary(build_py):
    """build_py, then `make` libgrove.so and the grove binary into a private
    build folder and copy them next to the Python files."""

    def run(self) -> None:
        super().run()
        if not (ROOT / "Makefile").exists() or not (ROOT / "src").is_dir():
            raise RuntimeError(f"grove: the C sources are not at {ROOT}; build from the grove repository "
                               "(pip install ./python) or from an sdist, which carries them")
        missing = missing_build_tools()
        if missing:
            raise ExecError(missing)
        build = Path(self.get_finalized_command("build").build_temp).resolve() / "libgrove"
        jobs = str(os.cpu_count() or 1)
        shipped = ("libgrove.so", "grove")
        # MPI=0: the package runs on one process, and a wheel must not need an MPI.
        # HDF5=0: a wheel must not carry libhdf5 and the network libraries it links.
        subprocess.run(["make", "-C", str(ROOT), f"-j{jobs}", f"BUILD={build}", "MPI=0", "HDF5=0",
                        *(f"{build}/{f}" for f in shipped)],
                       check=True)
        package = Path(self.build_lib) / "grove"
        package.mkdir(parents=True, exist_ok=True)
        for f in shipped:
            shutil.copy(build / f, package / f)  # with its mode: the binary stays executable
            if shutil.which("strip"):  # the debug info would triple the wheel
                subprocess.run(["strip", "--strip-debug", str(package / f)], check=True)


class SdistWithSources(sdist):
    """sdist, with the C sources the build needs copied under csrc/."""

    def make_release_tree(self, base_dir: str, files: list) -> None:
        super().make_release_tree(base_dir, files)
        for name in C_SOURCES:
            source, target = ROOT / name, Path(base_dir) / "csrc" / name
            if source.is_dir():
                shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__", "*.o", "*.d"))
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source, target)


class BinaryDistribution(Distribution):
    """The wheel carries a compiled library: tag it for this platform."""

    def has_ext_modules(self) -> bool:
        return True


commands = {"build_py": BuildWithLibrary, "sdist": SdistWithSources}
if bdist_wheel is not None:

    class PlatformWheel(bdist_wheel):
        """The package is Python over a C library it loads with ctypes (no
        extension module): one wheel serves every Python 3 on the platform."""

        def get_tag(self) -> tuple:
            return ("py3", "none", super().get_tag()[2])

    commands["bdist_wheel"] = PlatformWheel

setup(version=version(), cmdclass=commands, distclass=BinaryDistribution)
