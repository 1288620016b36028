"""The version has one home, grove.h's GROVE_VERSION_STRING: `grove info`,
grove.__version__, the library's grove_version(), the pkg-config file and
the package metadata (python/setup.py reads the header) must all say it."""
import os
import re
import shutil
import runpy
import subprocess
from pathlib import Path

import pytest

import grove
from conftest import CLI, ROOT


def header_version():
    header = (ROOT / "include" / "grove.h").read_text()
    major, minor, patch = (int(re.search(rf"#define GROVE_VERSION_{part} (\d+)", header).group(1))
                           for part in ("MAJOR", "MINOR", "PATCH"))
    string = re.search(r'#define GROVE_VERSION_STRING "([^"]+)"', header).group(1)
    assert string == f"{major}.{minor}.{patch}", "GROVE_VERSION_STRING disagrees with the MAJOR/MINOR/PATCH macros"
    return string


def test_the_library_and_the_package_say_the_header_version():
    assert grove.__version__ == grove.version() == header_version()


def test_grove_info_says_it():
    if not CLI.exists():
        pytest.skip(f"no grove command at {CLI} (run make)")
    first = subprocess.run([str(CLI), "info"], capture_output=True, text=True, check=True).stdout.splitlines()[0]
    assert first == f"grove {header_version()}"


def test_pkg_config_says_it():
    pc = Path(os.environ.get("GROVE_LIB", ROOT / "build" / "libgrove.so")).with_name("grove.pc")
    if not shutil.which("pkg-config") or not pc.exists():
        pytest.skip("no pkg-config, or no grove.pc next to the library (make builds it)")
    said = subprocess.run(["pkg-config", "--modversion", str(pc)], capture_output=True, text=True, check=True)
    assert said.stdout.strip() == header_version()


def test_the_package_metadata_says_it(monkeypatch):
    setuptools = pytest.importorskip("setuptools")
    given = {}
    monkeypatch.setattr(setuptools, "setup", lambda **kwargs: given.update(kwargs))
    runpy.run_path(str(ROOT / "python" / "setup.py"))
    assert given["version"] == header_version()
