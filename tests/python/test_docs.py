"""Every ```python example in docs/python*.md runs; the README's synopses
show the options."""
import re
import subprocess

import pytest

from conftest import CLI, JOIN_MISSING, ROOT

PAGES = sorted((ROOT / "docs").glob("python*.md"))
EXAMPLES = [(page.name, i, code) for page in PAGES
            for i, code in enumerate(re.findall(r"```python\n(.*?)```", page.read_text(), re.S))]


@pytest.mark.parametrize("page, i, code", EXAMPLES, ids=[f"{p}#{i}" for p, i, _ in EXAMPLES])
def test_example_runs(page, i, code, capsys):
    if page == "python-join.md" and JOIN_MISSING:
        pytest.skip(JOIN_MISSING)
    exec(compile(code, f"{page}#{i}", "exec"), {})


def test_readme_synopsis_of_nbody_shows_every_option():
    # The usage lines of `grove nbody --help` (up to the description) name
    # each option the README's synopsis must show, the common --threads and
    # --quiet aside (the README lists those once for every command).
    if not CLI.exists():
        pytest.skip(f"no grove command at {CLI} (run make)")
    usage = subprocess.run([str(CLI), "nbody", "--help"], capture_output=True, text=True).stdout
    usage = usage[:usage.index("\n", usage.index("[--json]"))]
    readme = (ROOT / "README.md").read_text()
    synopsis = re.search(r"^grove nbody .*?(?=^grove )", readme, re.S | re.M).group(0)

    def flags(text):
        return set(re.findall(r"--[A-Za-z-]+", text))

    missing = flags(usage) - {"--threads", "--quiet"} - flags(synopsis)
    assert not missing, f"README.md's grove nbody synopsis lacks {sorted(missing)}"
