"""grove.balltree against the `grove balltree` command and against the
layout rules."""
import numpy as np
import pytest

import grove


def _cli_tree(cli, tmp_path, x, *args):
    np.save(tmp_path / "x.npy", x)
    cli("balltree", "x.npy", "--indices", "i.npy", "--mask", "m.npy", *args)
    return np.load(tmp_path / "i.npy"), np.load(tmp_path / "m.npy")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n, d", [(1, 2), (2, 3), (5, 3), (1000, 3), (777, 7)])
def test_full_tree_equals_cli(cli, tmp_path, rng, n, d, dtype):
    x = rng.random((n, d)).astype(dtype)
    indices, mask = grove.balltree(x)
    ci, cm = _cli_tree(cli, tmp_path, x)
    assert indices.dtype == np.int64 and mask.dtype == np.bool_
    assert np.array_equal(indices, ci) and np.array_equal(mask, cm)


def test_batches_levels_rotation_and_balls_equal_cli(cli, tmp_path, rng):
    x = rng.normal(size=(600, 3))
    batch = rng.integers(0, 5, 600)
    np.save(tmp_path / "b.npy", batch)
    tree = grove.balltree(x, batch=batch, rotate=7)
    ci, cm = _cli_tree(cli, tmp_path, x, "--batch", "b.npy", "--rotate", 7, "--centers", "c.npy", "--radii",
                       "r.npy", "--level", 2)
    assert np.array_equal(tree.indices, ci) and np.array_equal(tree.mask, cm)
    centers, radii = tree.balls(2)
    assert np.array_equal(centers, np.load(tmp_path / "c.npy")) and np.array_equal(radii, np.load(tmp_path / "r.npy"))
    tree.check()
    part = grove.balltree(x, batch=batch, levels=3)
    pi, _ = _cli_tree(cli, tmp_path, x, "--batch", "b.npy", "--levels", 3)
    assert np.array_equal(part.indices, pi) and part.mask.all()


def test_layout_rules(rng):
    x = rng.random((13, 2))
    batch = np.array([3] * 5 + [0] * 8)
    tree = grove.balltree(x, batch=batch)
    b = tree.batches()
    assert b["id"].tolist() == [0, 3] and b["count"].tolist() == [8, 5] and b["slots"].tolist() == [8, 8]
    indices, mask = tree  # unpacks as a pair
    assert sorted(indices[mask].tolist()) == list(range(13))
    pairs, real = indices.reshape(-1, 2), mask.reshape(-1, 2)
    assert np.all(pairs[~real[:, 1], 0] == pairs[~real[:, 1], 1])  # padding repeats its leaf's point
    root_centers, root_radii = tree.balls(0)
    mean0 = x[batch == 0].mean(axis=0)
    assert np.allclose(root_centers[0], mean0)
    assert np.isclose(root_radii[0], np.linalg.norm(x[batch == 0] - mean0, axis=1).max())


def test_rotation_matrix_is_y_equals_r_x(rng):
    x = rng.random((300, 3))
    r = grove.random_rotation(3, seed=4)
    assert np.allclose(r @ r.T, np.eye(3)) and np.isclose(np.linalg.det(r), 1)
    by_seed = grove.balltree(x, rotate=4)
    by_matrix = grove.balltree(x, rotate=r)
    presorted = grove.balltree(x @ r.T)
    assert np.array_equal(by_seed.indices, by_matrix.indices)
    assert np.array_equal(by_seed.indices, presorted.indices)


def test_threads_do_not_change_the_tree(rng):
    x = rng.random((5000, 3))
    assert np.array_equal(grove.balltree(x, threads=1).indices, grove.balltree(x, threads=2).indices)


def test_reused_workspaces_in_python_threads(cli, tmp_path, rng):
    """grove.balltree keeps one workspace per Python thread: trees of
    shrinking and growing sizes, built in four threads at once, equal the
    CLI's (which starts afresh every time)."""
    import concurrent.futures
    xs = [rng.random((m, 3)) for m in (70000, 3000, 20000, 70001)]
    want = [_cli_tree(cli, tmp_path, x)[0] for x in xs]
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        got = list(pool.map(lambda i: [grove.balltree(xs[(i + k) % 4]).indices for k in range(4)], range(4)))
    for i, trees in enumerate(got):
        for k, tree in enumerate(trees):
            assert np.array_equal(tree, want[(i + k) % 4])


@pytest.mark.parametrize("kwargs, match", [
    ({"batch": [0, 1]}, "batch: expected shape"),
    ({"batch": np.full(4, 0.5)}, "batch: expected integers"),
    ({"batch": [0, -1, 0, 0]}, "negative|-1"),
    ({"levels": -2}, "levels"),
    ({"rotate": np.eye(2)}, "rotate: expected shape"),
])
def test_bad_arguments(kwargs, match):
    with pytest.raises(grove.InvalidArgumentError, match=match):
        grove.balltree(np.zeros((4, 3)), **kwargs)


def test_empty_input():
    indices, mask = grove.balltree(np.zeros((0, 3)))
    assert indices.size == 0 and mask.size == 0
