"""Every ```python example in docs/python*.md runs."""
import re

import pytest

from conftest import JOIN_MISSING, ROOT

PAGES = sorted((ROOT / "docs").glob("python*.md"))
EXAMPLES = [(page.name, i, code) for page in PAGES
            for i, code in enumerate(re.findall(r"```python\n(.*?)```", page.read_text(), re.S))]


@pytest.mark.parametrize("page, i, code", EXAMPLES, ids=[f"{p}#{i}" for p, i, _ in EXAMPLES])
def test_example_runs(page, i, code, capsys):
    if page == "python-join.md" and JOIN_MISSING:
        pytest.skip(JOIN_MISSING)
    exec(compile(code, f"{page}#{i}", "exec"), {})
