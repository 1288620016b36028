"""The package's metadata and build step: its distribution name is not
PyPI's unrelated `grove`, and the README installs it by the file names the
build writes; the licence is BSD-3-Clause everywhere it is said; building
from source without make or a C compiler says so in one line."""
import os
import re
import runpy
import sys

import pytest

from conftest import ROOT

PYTHON = ROOT / "python"


def pyproject():
    tomllib = pytest.importorskip("tomllib" if sys.version_info >= (3, 11) else "tomli")
    return tomllib.loads((PYTHON / "pyproject.toml").read_text())


def normalised(name):
    """PEP 503: PyPI compares names with runs of - _ . as one - and any case."""
    return re.sub(r"[-_.]+", "-", name).lower()


def header_version():
    header = (ROOT / "include" / "grove.h").read_text()
    return re.search(r'#define GROVE_VERSION_STRING "([^"]+)"', header).group(1)


def test_the_distribution_is_not_pypis_grove():
    # `grove` on PyPI is someone else's package: `pip install grove` must not
    # be what our instructions lead to.
    project = pyproject()["project"]
    assert normalised(project["name"]) != "grove"
    assert project["scripts"]["grove"] == "grove._cli:main"  # the command keeps its name


def test_the_readmes_install_the_files_the_build_writes():
    # PEP 625 and the wheel spec: the sdist and the wheel are named by the
    # distribution with - . turned into _.
    stem = re.sub(r"[-_.]+", "_", pyproject()["project"]["name"]).lower() + "-" + header_version()
    for readme in (ROOT / "README.md", PYTHON / "README.md"):
        text = readme.read_text()
        installs = re.findall(r"pip install (\S+\.(?:tar\.gz|whl))", text)
        assert installs, f"{readme.name} has no pip install line of a release file"
        for name in installs:
            assert name == f"{stem}.tar.gz" or name.startswith(f"{stem}-py3-none-"), f"{readme}: pip install {name}"


def test_the_licence_is_bsd_3_clause_everywhere():
    text = (ROOT / "LICENSE").read_text()
    assert text.startswith("BSD 3-Clause License") and "the grove developers" in text
    assert "Neither the name of the copyright holder" in text  # the third clause
    project = pyproject()["project"]
    assert project["license"] == "BSD-3-Clause"
    # The package ships the repository's own LICENSE (python/LICENSE links to it).
    assert project["license-files"] == ["LICENSE"]
    assert (PYTHON / "LICENSE").read_text() == text
    assert re.search(r"^# SPDX-License-Identifier: BSD-3-Clause$", (ROOT / "grove.pc.in").read_text(), re.M)
    assert re.search(r"^## Licence\n\n.*BSD-3-Clause.*\(LICENSE\)", (ROOT / "README.md").read_text(), re.M)


@pytest.fixture
def setup_py(monkeypatch):
    """python/setup.py's namespace, its setup() call caught."""
    setuptools = pytest.importorskip("setuptools")
    monkeypatch.setattr(setuptools, "setup", lambda **kwargs: None)
    return runpy.run_path(str(PYTHON / "setup.py"))


def tools(folder, *names):
    """A folder holding executables of these names only (a PATH to test with)."""
    folder.mkdir()
    for name in names:
        (folder / name).write_text("#!/bin/sh\n")
        (folder / name).chmod(0o755)
    return str(folder)


def test_the_build_names_what_is_missing(setup_py, tmp_path, monkeypatch):
    monkeypatch.delenv("CC", raising=False)
    missing = setup_py["missing_build_tools"]
    assert missing(tools(tmp_path / "both", "make", "cc")) is None
    no_make = missing(tools(tmp_path / "cc-only", "cc"))
    assert "'make' is not on PATH" in no_make and "apt install make gcc" in no_make and "wheel" in no_make
    assert "'cc' is not on PATH" in missing(tools(tmp_path / "make-only", "make"))
    assert "'make' and 'cc' are not on PATH" in missing(tools(tmp_path / "none"))
    monkeypatch.setenv("CC", "clang -fopenmp")  # CC's program is the compiler asked for
    assert "'clang' is not on PATH" in missing(tools(tmp_path / "gcc", "make", "cc"))


def test_the_build_step_stops_there_without_make(setup_py, tmp_path, monkeypatch):
    # The build step itself, on a PATH without make: one line, no traceback
    # of a missing file from subprocess.
    from setuptools import Distribution
    from setuptools.errors import ExecError
    monkeypatch.setenv("PATH", tools(tmp_path / "bin", "cc"))
    monkeypatch.delenv("CC", raising=False)
    command = setup_py["BuildWithLibrary"](Distribution({"packages": []}))
    command.build_lib = str(tmp_path / "lib")
    command.ensure_finalized()
    with pytest.raises(ExecError, match=r"^grove: building libgrove from source needs make .*'make' is not on PATH") as e:
        command.run()
    assert "\n" not in str(e.value)
