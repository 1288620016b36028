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


# Flags every command takes, which the README lists once after the synopses.
COMMON = {"--threads", "--json", "--quiet", "--progress", "--no-progress", "--dims", "--dtype", "--types"}
COMMANDS = ["gen", "balltree", "join", "knn", "dbscan", "fof", "paircount", "emst", "hdbscan", "gravity", "nbody",
            "info"]


def synopsis_flags(text):
    """{flag: required} of a synopsis: a flag is required when no [...] holds it."""
    flags, depth = {}, 0
    for token in re.findall(r"\[|\]|(?<![\w-])--?[A-Za-z][\w-]*", text):
        if token in "[]":
            depth += 1 if token == "[" else -1
        elif token not in COMMON:
            flags[token] = depth == 0
    return flags


def synopses(page):
    """(command, synopsis) of each `grove CMD ...` line of a page that shows
    options in brackets, with its continuation lines (after a backslash, or
    indented deeper)."""
    found, current, indent = [], None, 0
    for line in page.read_text().splitlines():
        stripped = line.lstrip()
        if current is not None and stripped and not stripped.startswith("grove ") and \
                (current[1].endswith("\\") or len(line) - len(stripped) > indent):
            current[1] = current[1].rstrip("\\") + " " + stripped
            continue
        current = None
        if re.match(rf"grove ({'|'.join(COMMANDS)})( |$)", stripped):
            current, indent = [stripped.split()[1], stripped], len(line) - len(stripped)
            found.append(current)
    return [(command, text) for command, text in found if "[" in text or text == "grove info"]


def readme_synopses():
    """The README's synopses, by command."""
    return dict(synopses(ROOT / "README.md"))


def help_synopsis(command):
    """The usage lines of `grove CMD --help`: the first and its indented continuations."""
    lines = subprocess.run([str(CLI), command, "--help"], capture_output=True, text=True, check=True).stdout.splitlines()
    usage = [lines[0]]
    for line in lines[1:]:
        if not line.startswith("      "):  # the description or the option list begins
            break
        usage.append(line)
    return " ".join(usage)


SYNOPSES = [(page.relative_to(ROOT), command, text)
            for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
            for command, text in synopses(page)]


@pytest.mark.parametrize("page, command, text", SYNOPSES, ids=[f"{p}:{c}" for p, c, _ in SYNOPSES])
def test_synopsis_agrees_with_help(page, command, text):
    # Each synopsis of a command (the README's and the docs pages') shows the
    # options its --help shows, no others, and the required ones (outside
    # brackets) alike.
    if not CLI.exists():
        pytest.skip(f"no grove command at {CLI} (run make)")
    shown, usage = synopsis_flags(text), synopsis_flags(help_synopsis(command))
    assert sorted(set(usage) - set(shown)) == [], f"{page}'s grove {command} synopsis lacks these"
    assert sorted(set(shown) - set(usage)) == [], f"{page}'s grove {command} synopsis shows these, --help does not"
    differ = {flag: ("required" if shown[flag] else "optional") for flag in shown if shown[flag] != usage[flag]}
    assert differ == {}, f"{page}'s grove {command} synopsis shows these otherwise than --help"


def test_readme_synopsis_lists_every_command():
    listed = subprocess.run([str(CLI), "--help"], capture_output=True, text=True).stdout if CLI.exists() else ""
    if not listed:
        pytest.skip(f"no grove command at {CLI} (run make)")
    table = listed[listed.index("commands:\n"):].split("\n\n")[0]  # up to the blank line after it
    commands = re.findall(r"^  (\w+) ", table, re.M)
    assert sorted(commands) == sorted(COMMANDS) == sorted(readme_synopses())
