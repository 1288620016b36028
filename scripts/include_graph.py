#!/usr/bin/env python3
"""The include graph between the library's folders, checked against its layers.

For each src/FOLDER, the other src folders its files include (an #include
"..." resolved from the including file's folder, then from src/core, as the
Makefile's -Isrc/core does). Prints one line per folder, "FOLDER -> A B",
and exits 1 naming every include that points up a layer (docs/architecture.md:
a folder includes only folders of a lower layer; the modules of one layer
include each other only where LAYERS allows it, so no two folders include
each other)."""
import re
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"

# Layers from the top; within a layer, a folder may include the ones after it in its tuple.
LAYERS = [("dispatch",), ("device",), ("mpi",), ("cluster", "paircount", "join", "emst", "balltree", "nbody"),
          ("index",), ("io", "core")]
# Module folders of one layer that may include each other's headers: cluster runs on the join and the EMST, the
# pair counts on the join's group search.
PEERS = {("cluster", "join"), ("cluster", "emst"), ("paircount", "join"), ("io", "core")}


def rank(folder):
    for k, layer in enumerate(LAYERS):
        if folder in layer:
            return k
    raise SystemExit(f"include_graph: src/{folder} is in no layer (add it to LAYERS)")


def graph():
    edges = {}
    for path in sorted(SRC.glob("*/*.[ch]")):
        folder = path.parent.name
        edges.setdefault(folder, set())
        for name in re.findall(r'^\s*#\s*include\s+"([^"]+)"', path.read_text(), re.M):
            for base in (path.parent, SRC / "core"):
                target = (base / name).resolve()
                if target.is_file():
                    break
            else:
                continue  # a header outside src (include/)
            if SRC in target.parents and target.parent.name != folder:
                edges[folder].add(target.parent.name)
    return edges


def main():
    edges = graph()
    wrong = []
    for folder in sorted(edges, key=lambda f: (rank(f), f)):
        print(f"{folder:9} -> {' '.join(sorted(edges[folder], key=lambda f: (rank(f), f))) or '(none)'}")
        for target in edges[folder]:
            if rank(target) < rank(folder) or (rank(target) == rank(folder) and (folder, target) not in PEERS):
                wrong.append(f"src/{folder} includes src/{target}, a layer above it or a peer it may not include")
    for line in wrong:
        print(line, file=sys.stderr)
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
