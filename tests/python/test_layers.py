"""The library's folders keep their layers (docs/architecture.md): a folder
includes only folders of a lower layer, so no module includes src/mpi or
src/dispatch, and no two folders include each other (scripts/include_graph.py)."""
import subprocess
import sys

from conftest import ROOT


def test_no_folder_includes_a_layer_above_it():
    run = subprocess.run([sys.executable, str(ROOT / "scripts" / "include_graph.py")], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    edges = {line.split("->")[0].strip(): line.split("->")[1].split() for line in run.stdout.splitlines()}
    modules = ("balltree", "join", "emst", "cluster", "nbody", "index", "core", "io")
    assert all(not {"mpi", "dispatch"} & set(edges[m]) for m in modules), edges
    assert all(folder not in edges[target] for folder, targets in edges.items() for target in targets
               if target in edges), edges
