"""An installed grove package, checked from outside the repository: every
module once against a brute-force answer, and the console script. Run by
tests/package_check.sh with the python of a venv that installed the sdist
or the wheel; needs only NumPy (the venv's own dependency). DISTRIBUTION is
the name the package was installed under (python/pyproject.toml's), whose
metadata must say grove's version and licence.

    python tests/package_smoke.py DISTRIBUTION     (from a folder outside the checkout)
"""
import importlib.metadata
import os
import subprocess
import sys
import sysconfig

import numpy as np

import grove


def brute_pairs(x, eps):
    d2 = ((x[:, None, :] - x[None, :, :]) ** 2).sum(-1)
    return d2 <= eps * eps


def components(adjacent):
    """Labels of the connected components, numbered by their lowest row."""
    n = len(adjacent)
    label = np.full(n, -1)
    for start in range(n):
        if label[start] >= 0:
            continue
        stack, label[start] = [start], start
        while stack:
            for j in np.flatnonzero(adjacent[stack.pop()]):
                if label[j] < 0:
                    label[j] = start
                    stack.append(j)
    return label


def prim_weight(x):
    d = np.sqrt(((x[:, None, :] - x[None, :, :]) ** 2).sum(-1))
    inside, best, total = np.zeros(len(x), bool), d[0].copy(), 0.0
    inside[0] = True
    for _ in range(len(x) - 1):
        j = np.flatnonzero(~inside)[np.argmin(best[~inside])]
        total += best[j]
        inside[j] = True
        best = np.minimum(best, d[j])
    return total


def check(what, ok):
    if not ok:
        sys.exit(f"package_smoke: {what}: wrong")
    print(f"package_smoke: {what}: ok")


def main(distribution):
    here = os.path.abspath(grove.__file__)
    check(f"grove imported from the install ({here})", here.startswith(sysconfig.get_paths()["purelib"]))
    x = grove.generate("uniform", 300, 3, seed=1)

    tree = grove.balltree(x)
    check("balltree is a permutation of the rows", np.array_equal(np.sort(tree.indices[tree.mask]), np.arange(300)))

    eps = 0.15
    offsets, indices = grove.join(x, eps)
    truth = brute_pairs(x, eps)
    check("join equals brute force",
          all(np.array_equal(indices[offsets[i]:offsets[i + 1]], np.flatnonzero(truth[i])) for i in range(300)))

    idx, dist = grove.knn(x, 4)
    d = np.sqrt(((x[:, None, :] - x[None, :, :]) ** 2).sum(-1))
    check("knn distances equal brute force", np.allclose(dist, np.sort(d, axis=1)[:, :4]))

    edges, weights = grove.emst(x)
    check("emst weight equals Prim's", len(weights) == 299 and np.isclose(weights.sum(), prim_weight(x)))

    blobs = np.concatenate([grove.generate("uniform", 100, 2, seed=s) * 0.1 + s for s in (0, 5)])
    labels = grove.HDBSCAN(min_cluster_size=10).fit(blobs).labels_
    check("HDBSCAN finds the two blobs", len(set(labels[:100]) | set(labels[100:])) == 2 and labels[0] != labels[150])

    link = 0.08
    groups = grove.fof(x, link, min_members=1)
    check("fof groups are the brute-force components",
          np.array_equal(components(brute_pairs(x, link)), components(groups[:, None] == groups[None, :])))

    db = grove.DBSCAN(eps=0.3, min_samples=5).fit(blobs).labels_
    check("DBSCAN finds the two blobs", set(db) == {0, 1} and db[0] != db[150])

    rng = np.random.default_rng(2)
    pos, mass = rng.normal(size=(200, 3)), rng.uniform(0.5, 1.5, 200)
    acc = grove.gravity(pos, mass, theta=0.0, softening=0.01)
    r = pos[None, :, :] - pos[:, None, :]
    direct = (mass[None, :, None] * r / ((r ** 2).sum(-1) + 1e-4)[..., None] ** 1.5).sum(1)
    check("gravity at theta 0 equals the direct sum", np.allclose(acc, direct, rtol=1e-6, atol=1e-9))

    with grove.NBody(pos, np.zeros_like(pos), mass, dt=1e-3, softening=0.01) as sim:
        before = sim.energies()
        sim.step(3)
        after = sim.energies()
    check("N-body steps keep the energy and momentum", abs(after.energy - before.energy) < 1e-6 * abs(before.energy)
          and np.abs(after.momentum).max() < 1e-12 * mass.sum())

    info = subprocess.run(["grove", "info"], capture_output=True, text=True, check=True).stdout.splitlines()[0]
    meta = importlib.metadata.version(distribution)
    check(f"grove info ({info!r}), grove.__version__ ({grove.__version__}) and {distribution}'s metadata ({meta}) agree",
          info == f"grove {grove.__version__}" and meta == grove.__version__)
    licence = importlib.metadata.metadata(distribution)["License-Expression"]
    shipped = [f for f in importlib.metadata.files(distribution) if f.name == "LICENSE"]
    check(f"{distribution} says BSD-3-Clause ({licence}) and ships LICENSE ({[str(f) for f in shipped]})",
          licence == "BSD-3-Clause" and len(shipped) == 1 and "BSD 3-Clause" in shipped[0].read_text())


if __name__ == "__main__":
    main(sys.argv[1])
