"""The package's metadata: its distribution name is not PyPI's unrelated
`grove`, and the README installs it by the file names the build writes;
the licence is BSD-3-Clause everywhere it is said."""
import re
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
