#!/usr/bin/env python3
"""The hdbscan library's own tests, run against grove.compat.hdbscan.

    python3 tests/peer/hdbscan_suite.py        (from the repository root, after make)

Downloads the hdbscan sdist from PyPI into a temporary folder (its tests
are not ours to commit), copies its tests/test_hdbscan.py and
tests/test_prediction_utils.py out of it, rewrites their imports so that
everything grove.compat.hdbscan provides (HDBSCAN, hdbscan and the
prediction functions) comes from grove, and runs them with pytest. What
grove does not provide keeps coming from the installed library
(validity_index, a scorer of labels) or, for the library's internal
functions, is replaced by a stand-in that raises, so those tests fail
and are listed below.

Exits nonzero when a test fails that is not in EXPECTED_FAILURES, when an
expected failure passes (the list must stay honest), or when the sdist
cannot be had (no network is a failure, not a pass). Needs pip, pytest,
scikit-learn and the hdbscan library itself (for validity_index).

The sdist is fetched with `pip download --no-binary hdbscan --no-deps`:
pip prepares the metadata of a source distribution, and with
`--no-binary :all:` it would build hdbscan's build dependencies (NumPy,
Cython) from source first, minutes of CI for nothing.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import tarfile
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

VERSION = "0.8.44"
ROOT = Path(__file__).resolve().parents[2]
FILES = ("test_hdbscan.py", "test_prediction_utils.py")
PROVIDED = {"HDBSCAN", "hdbscan", "approximate_predict", "approximate_predict_scores", "membership_vector",
            "all_points_membership_vectors"}

PRECOMPUTED = "precomputed distances: grove's HDBSCAN* clusters points"
EXPECTED_FAILURES = {
    "test_hdbscan.py::test_hdbscan_distance_matrix": PRECOMPUTED,
    "test_hdbscan.py::test_hdbscan_sparse_distance_matrix": PRECOMPUTED,
    "test_hdbscan.py::test_hdbscan_callable_metric": "a callable metric: grove computes Euclidean distances and "
                                                     "cannot know what a callable computes",
    # Mutual-reachability weights tie on these data (min_samples 5: 180 distinct
    # weights among 199 edges; on the 150 uniform points of the second test,
    # many more): which merge comes first depends on each implementation's
    # edge order (docs/python-compat.md, "Ties").
    "test_hdbscan.py::test_hdbscan_approximate_predict": "tied weights: the same three clusters as the library's "
                                                          "(ARI 1), numbered in another order, so the point the "
                                                          "test expects in cluster 2 is in grove's cluster 1",
    "test_hdbscan.py::test_hdbscan_allow_single_cluster_with_epsilon": "tied weights: grove's (weight, u, v) order "
                                                                       "gives 38 noise points where the test expects "
                                                                       "46 (ties='simultaneous' gives 46)",
    "test_prediction_utils.py::test_safe_always_positive_division[-1]": "hdbscan._prediction_utils is "
                                                                        "library-internal",
    "test_prediction_utils.py::test_safe_always_positive_division[0]": "hdbscan._prediction_utils is "
                                                                       "library-internal",
    "test_prediction_utils.py::test_safe_always_positive_division[1]": "hdbscan._prediction_utils is "
                                                                       "library-internal",
}

STAND_IN = '''
def {name}(*args, **kwargs):  # grove: a stand-in for the library-internal {module}.{name}
    raise NotImplementedError("{module}.{name} is internal to the hdbscan library; grove does not provide it")
'''


def fetch(tmp: Path) -> Path:
    """The sdist's tests folder, unpacked into tmp."""
    cmd = [sys.executable, "-m", "pip", "download", "--no-binary", "hdbscan", "--no-deps", "--quiet",
           f"hdbscan=={VERSION}", "-d", str(tmp)]
    done = subprocess.run(cmd, capture_output=True, text=True)
    archives = list(tmp.glob("hdbscan-*.tar.gz"))
    if done.returncode or not archives:
        sys.exit(f"hdbscan_suite: could not download the hdbscan {VERSION} sdist from PyPI "
                 f"({' '.join(cmd)}):\n{done.stdout}{done.stderr}")
    with tarfile.open(archives[0]) as tar:
        members = [m for m in tar.getmembers() if m.name.endswith(tuple(f"hdbscan/tests/{f}" for f in FILES))]
        tar.extractall(tmp, members=members, filter="data")
    return next(tmp.glob("hdbscan-*/hdbscan/tests"))


def rewrite(source: str, name: str) -> str:
    """source with its hdbscan imports pointed at grove (see the module doc)."""
    found = False

    def replace(match: re.Match) -> str:
        nonlocal found
        found = True
        module, names = match.group(1), [n.strip() for n in match.group(2).strip("()").split(",") if n.strip()]
        if module == "hdbscan":
            mine, theirs = [n for n in names if n in PROVIDED], [n for n in names if n not in PROVIDED]
            lines = [f"from grove.compat.hdbscan import {', '.join(mine)}"] if mine else []
            return "\n".join(lines + ([f"from hdbscan import {', '.join(theirs)}"] if theirs else []))
        return "".join(STAND_IN.format(module=module, name=n) for n in names)

    out = re.sub(r"^from (hdbscan(?:\.\w+)?) import (\([^)]*\)|[^\n]*)$", replace, source, flags=re.M)
    if not found or re.search(r"^\s*(import hdbscan|from hdbscan\S* import)", out.replace(
            "from hdbscan import validity_index", ""), flags=re.M):
        sys.exit(f"hdbscan_suite: {name}: its imports are not the expected form any more; update rewrite()")
    return out


def outcomes(report: Path) -> dict[str, str]:
    """test id -> passed / failed / skipped, from pytest's JUnit XML."""
    result = {}
    for case in ET.parse(report).getroot().iter("testcase"):
        test = f"{case.get('classname').split('.')[-1]}.py::{case.get('name')}"
        kinds = {child.tag for child in case}
        result[test] = "failed" if kinds & {"failure", "error"} else "skipped" if "skipped" in kinds else "passed"
    return result


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="hdbscan-suite-") as tmp_name:
        tmp = Path(tmp_name)
        tests = fetch(tmp)
        suite = tmp / "suite"
        suite.mkdir()
        for f in FILES:
            (suite / f).write_text(rewrite((tests / f).read_text(), f))
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "python"), os.environ.get("PYTHONPATH", "")]),
                   PYTHONDONTWRITEBYTECODE="1")
        env.setdefault("GROVE_LIB", str(ROOT / "build" / "libgrove.so"))
        report = tmp / "report.xml"
        subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", str(suite),
                        f"--junitxml={report}", *FILES], cwd=suite, env=env)
        if not report.exists():
            sys.exit("hdbscan_suite: pytest wrote no report")
        result = outcomes(report)
    failed = sorted(t for t, r in result.items() if r == "failed")
    unexpected = [t for t in failed if t not in EXPECTED_FAILURES]
    stale = sorted(t for t in EXPECTED_FAILURES if result.get(t) != "failed")
    for t in failed:
        print(f"hdbscan_suite: {'expected' if t in EXPECTED_FAILURES else 'UNEXPECTED'} failure {t}"
              + (f" ({EXPECTED_FAILURES[t]})" if t in EXPECTED_FAILURES else ""))
    for t in stale:
        print(f"hdbscan_suite: listed as failing but {result.get(t, 'not run')}: {t}")
    counts = {k: sum(r == k for r in result.values()) for k in ("passed", "failed", "skipped")}
    print(f"hdbscan_suite (hdbscan {VERSION}'s tests on grove.compat.hdbscan): {counts['passed']} passed, "
          f"{counts['failed']} failed ({len(failed) - len(unexpected)} expected), {counts['skipped']} skipped")
    return 1 if unexpected or stale or not result else 0


if __name__ == "__main__":
    sys.exit(main())
