"""grove.fof against brute force (all pairs and a plain union-find in
NumPy), the catalogue against its definition, and the CLI against the
binding."""
import numpy as np
import pytest

import grove
from conftest import needs_join

pytestmark = needs_join


def grid_points(rng, n, d, box=1.0, clumps=5):
    """Clumps and a background on a 2^-20 grid in [0, box): squared
    distances are exact, so pairs at the linking length must link."""
    centres = rng.random((clumps, d)) * box
    x = np.where(rng.random((n, 1)) < 0.3, rng.random((n, d)) * box,
                 centres[rng.integers(0, clumps, n)] + 0.02 * box * rng.standard_normal((n, d)))
    x = np.mod(x, box)
    return np.floor(x * 2.0 ** 20) / 2.0 ** 20


def image(t, box):
    """Minimum image in [-L/2, L/2) where L > 0 (0: unbounded)."""
    if box is None:
        return t
    safe = np.where(box > 0, box, 1.0)
    return np.where(box > 0, t - safe * np.floor(t / safe + 0.5), t)


def brute_groups(x, link2, min_members, box=None):
    """link2: the squared linking length as grove rounds it (to the dtype)."""
    n = len(x)
    diff = image(x[:, None, :] - x[None, :, :], box)
    near = (diff ** 2).sum(-1) <= link2
    parent = np.arange(n)

    def root(i):
        while parent[i] != i:
            i = parent[i]
        return i

    for a, b in zip(*np.nonzero(np.triu(near, 1))):
        ra, rb = root(a), root(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    roots = np.array([root(i) for i in range(n)])
    comps = [(-(roots == r).sum(), r) for r in np.unique(roots) if (roots == r).sum() >= min_members]
    out = np.full(n, -1, dtype=np.int64)
    for g, (_, r) in enumerate(sorted(comps)):
        out[roots == r] = g
    return out


@pytest.mark.parametrize("d", [1, 2, 3])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_groups_equal_brute_force(rng, d, dtype):
    x = grid_points(rng, 400, d)
    if dtype == np.float32:
        x = np.floor(x * 1024) / 1024  # exact squares in float32 too
    b = 0.3 if d > 1 else 1.5  # 1-D clumps are sparser in units of the separation
    link = b * grove.mean_separation(x)
    for min_members in (1, 5, 20):
        want = brute_groups(x, float(dtype(link * link)), min_members)
        assert want.max() >= 0 or min_members == 20
        got = grove.fof(x.astype(dtype), link, min_members=min_members, threads=2)
        assert np.array_equal(got, want)
        assert np.array_equal(grove.fof(x.astype(dtype), b=b, min_members=min_members, threads=1), want)


def test_catalogue_rows_match_their_definition(rng):
    x = grid_points(rng, 500, 3)
    m = 0.5 + rng.random(500)
    v = 2 + rng.standard_normal((500, 3))
    group, cat = grove.fof(x, 0.03, min_members=5, mass=m, velocity=v, catalogue=True)
    assert len(cat.members) == group.max() + 1 > 1
    for g in range(len(cat.members)):
        idx = np.flatnonzero(group == g)
        w = m[idx]
        assert cat.members[g] == idx.size and cat.first[g] == idx[0]
        assert np.isclose(cat.mass[g], w.sum(), rtol=1e-13)
        centre = (w[:, None] * x[idx]).sum(0) / w.sum()
        assert np.allclose(cat.center[g], centre, rtol=0, atol=1e-12)
        vmean = (w[:, None] * v[idx]).sum(0) / w.sum()
        assert np.allclose(cat.velocity[g], vmean, rtol=1e-12)
        spread = (w * ((v[idx] - vmean) ** 2).sum(1)).sum() / w.sum()
        assert np.isclose(cat.dispersion[g], np.sqrt(spread), rtol=1e-10)
        assert np.isclose(cat.radius[g], np.sqrt(((x[idx] - centre) ** 2).sum(1)).max(), rtol=1e-10)
    # Sizes decrease, equal sizes by first member.
    key = list(zip(-cat.members, cat.first))
    assert key == sorted(key)


def test_without_masses_or_velocities(rng):
    x = grid_points(rng, 200, 2)
    group, cat = grove.fof(x, 0.02, min_members=3, catalogue=True)
    assert cat.velocity is None and cat.dispersion is None
    assert np.array_equal(cat.mass, cat.members.astype(float))


def test_refuses_bad_input(rng):
    x = rng.random((10, 3))
    with pytest.raises(TypeError):
        grove.fof(x)
    with pytest.raises(TypeError):
        grove.fof(x, 0.1, b=0.2)
    with pytest.raises(grove.InvalidArgumentError, match=r"mass\[3\]"):
        m = np.ones(10)
        m[3] = -1
        grove.fof(x, 0.1, mass=m)
    with pytest.raises(grove.InvalidArgumentError, match="velocity"):
        grove.fof(x, 0.1, velocity=np.ones((10, 2)))
    with pytest.raises(grove.InvalidArgumentError, match="min_members"):
        grove.fof(x, 0.1, min_members=0)


def test_cli_matches_the_binding(rng, tmp_path, cli):
    x = grid_points(rng, 3000, 3)
    m = 0.5 + rng.random(3000)
    np.save(tmp_path / "snap.npy", np.column_stack([x, m]))
    summary = cli("fof", "snap.npy", "--b", 0.2, "--min-members", 8, "--groups", "g.npy", "--catalogue", "h.npy")
    group, cat = grove.fof(x, b=0.2, min_members=8, mass=m, catalogue=True)
    assert np.array_equal(np.load(tmp_path / "g.npy"), group)
    table = np.load(tmp_path / "h.npy")
    assert table.shape == (len(cat.members), 8)
    assert np.array_equal(table[:, 1], cat.members) and np.array_equal(table[:, 3], cat.mass)
    assert np.array_equal(table[:, 4:7], cat.center) and np.array_equal(table[:, 7], cat.radius)
    assert summary["groups"] == len(cat.members) and summary["largest"] == cat.members[0]
    assert summary["grouped_particles"] == (group >= 0).sum() and summary["n"] == 3000
    assert np.isclose(summary["linking_length"], 0.2 * grove.mean_separation(x))


@pytest.mark.parametrize("boxsize", [1.0, [1.0, 0.5, 1.0], [1.0, 0.5, 0.0]])
def test_periodic_groups_equal_brute_force(rng, boxsize):
    box = np.broadcast_to(np.asarray(boxsize, dtype=float), (3,))
    x = grid_points(rng, 500, 3) * np.where(box > 0, box, 1)
    x = np.floor(x * 2.0 ** 20) / 2.0 ** 20
    link = 0.03
    want = brute_groups(x, link * link, 5, box=box)
    group, cat = grove.fof(x, link, boxsize=boxsize, min_members=5, catalogue=True)
    assert np.array_equal(group, want) and want.max() > 0
    # Centres inside the box, radii by minimum image.
    periodic = box > 0
    assert np.all((cat.center[:, periodic] >= 0) & (cat.center[:, periodic] < box[periodic]))
    for g in range(len(cat.members)):
        idx = np.flatnonzero(group == g)
        t = np.abs(x[idx] - cat.center[g])
        t[:, periodic] = np.minimum(t[:, periodic], box[periodic] - t[:, periodic])
        assert np.isclose(cat.radius[g], np.sqrt((t ** 2).sum(1)).max(), rtol=1e-10)


def test_periodic_groups_equal_scipy(rng):
    spatial = pytest.importorskip("scipy.spatial")
    csgraph = pytest.importorskip("scipy.sparse.csgraph")
    sparse = pytest.importorskip("scipy.sparse")
    x = rng.random((20000, 3))
    link = 0.2 * grove.mean_separation(x, boxsize=1.0)
    pairs = spatial.cKDTree(x, boxsize=1.0).query_pairs(link, output_type="ndarray")
    graph = sparse.coo_matrix((np.ones(len(pairs)), (pairs[:, 0], pairs[:, 1])), shape=(20000, 20000))
    _, comp = csgraph.connected_components(graph, directed=False)
    group = grove.fof(x, b=0.2, boxsize=1.0, min_members=1)
    # The same partition: each grove group is one scipy component and back.
    assert len(np.unique(comp)) == group.max() + 1
    assert len(set(zip(comp, group))) == group.max() + 1


def test_cli_box(rng, tmp_path, cli):
    x = grid_points(rng, 2000, 3, box=2.0)
    np.save(tmp_path / "snap.npy", x)
    summary = cli("fof", "snap.npy", "--b", 0.2, "--box", 2, "--min-members", 5, "--groups", "g.npy")
    assert summary["periodic"] is True
    assert np.isclose(summary["mean_separation"], (8 / 2000) ** (1 / 3))
    assert np.array_equal(np.load(tmp_path / "g.npy"), grove.fof(x, b=0.2, boxsize=2.0, min_members=5))
    summary = cli("fof", "snap.npy", "--b", 0.2, "--box", "2,2,2", "--min-members", 5, "--groups", "g2.npy")
    assert np.array_equal(np.load(tmp_path / "g.npy"), np.load(tmp_path / "g2.npy"))
