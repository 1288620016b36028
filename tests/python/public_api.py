"""Every public call of the binding, found by walking it, and how the
tests call each one.

``public_calls()`` walks ``grove.__all__`` and the compat modules'
``__all__``: each function, each class's constructor and each public
method or property a grove class defines (exceptions and result records
aside). ``CALLS`` says how to call each of them on points ``p`` (an (m, 3)
array; calls that take no points ignore it); ``NO_RESULT`` lists the ones
that return nothing to inspect, with the reason. test_layouts.py and
test_results.py refuse a public call missing from both, so a new one
cannot be forgotten. ``takes_points(name)`` says whether a call has a
parameter that carries points or queries (``POINT_PARAMETERS``)."""
import dataclasses
import inspect
import tempfile
from pathlib import Path

import numpy as np

import grove
import grove.compat.balltree as cbt
import grove.compat.hdbscan as chd

MODULES = (grove, cbt, chd)
POINT_PARAMETERS = {"points", "queries", "X", "data", "points_to_predict", "positions", "velocities", "velocity",
                    "snapshot", "data1", "data2", "randoms"}


def _blobs():
    rng = np.random.default_rng(3)
    centres = np.array([[0.2, 0.2, 0.2], [0.8, 0.8, 0.2], [0.2, 0.8, 0.8]])
    return np.clip(np.repeat(centres, 20, axis=0) + rng.normal(0, 0.04, (60, 3)), 0, 0.999)


BASE = _blobs()  # three clusters in [0, 1)^3: the indexed or fitted points where p is the query


def _is_record(cls):
    return dataclasses.is_dataclass(cls) or (issubclass(cls, tuple) and hasattr(cls, "_fields"))


def _resolve(name):
    """The object a dotted name from public_calls() names (a property as
    the property object)."""
    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = __import__(".".join(parts[:i]), fromlist=["_"])
            break
        except ImportError:
            continue
    for attr in parts[i:]:
        obj = inspect.getattr_static(obj, attr) if isinstance(obj, type) else getattr(obj, attr)
    return obj


def resolves(name):
    """Whether a dotted name names something (the estimators' methods
    from scikit-learn or its stand-ins are called but not walked)."""
    try:
        _resolve(name)
    except AttributeError:
        return False
    return True


def public_calls():
    """Dotted names of every public call (see the module doc)."""
    names = set()
    for module in MODULES:
        for name in module.__all__:
            obj = getattr(module, name)
            qualified = f"{module.__name__}.{name}"
            if not callable(obj) or isinstance(obj, type) and (issubclass(obj, BaseException) or _is_record(obj)):
                continue
            names.add(qualified)
            if isinstance(obj, type):
                for klass in obj.__mro__:
                    if klass.__module__.startswith("grove"):
                        names.update(f"{qualified}.{attr}" for attr, value in vars(klass).items()
                                     if not attr.startswith("_") and _defined_in_grove(value))
    return names


def _defined_in_grove(value):
    """Whether a class attribute is grove's own code, not one a base class
    adds to every subclass (scikit-learn's set_fit_request)."""
    fn = value.fget if isinstance(value, property) else getattr(value, "__func__", value)
    return getattr(fn, "__module__", "").startswith("grove")


def takes_points(name):
    obj = _resolve(name)
    fn = obj.fget if isinstance(obj, property) else getattr(obj, "__func__", obj)
    try:
        parameters = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
    return bool(POINT_PARAMETERS & set(parameters))


# -- fixtures the calls share ---------------------------------------------
def _hdbscan(p=BASE, **kw):
    return grove.HDBSCAN(min_cluster_size=4, min_samples=2, prediction_data=True, store_centers="both", **kw).fit(p)


def _compat(p=BASE):
    return chd.HDBSCAN(min_cluster_size=4, min_samples=1, prediction_data=True).fit(p)


def _nbody(p=BASE, **kw):
    """A simulation whose positions and velocities are both p (as given)."""
    return grove.NBody(p, p, np.full(len(p), 1 / len(p)), softening=0.05, **kw)


def _stepped(p):
    with _nbody(p) as sim:
        sim.step(2)
        return sim.positions, sim.velocities, sim.potentials


def _tipsy_round_trip(p):
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "s.tipsy"
        grove.write_tipsy(path, grove.Snapshot(1.0, p, p, np.ones(len(p))))
        return grove.read_tipsy(path)


def _checkpoint_round_trip(_):
    with tempfile.TemporaryDirectory() as tmp, _nbody() as sim:
        sim.checkpoint(Path(tmp) / "c.ckpt")
        with grove.NBody.from_checkpoint(Path(tmp) / "c.ckpt") as again:
            return again.positions, again.velocities


def _index(p=BASE):
    return grove.Index(p)


def _query(method, *args, **kw):
    def run(p):
        with _index() as ix:
            result = getattr(ix, method)(*args, p, **kw)
            return list(result) if method == "join_batches" else result
    return run


def _one_batch(p):
    return np.zeros(len(p), dtype=np.int64)


def _read(make, attribute, *args):
    """A call reading make()'s attribute (calling it with args when it is
    a method)."""
    def run(_):
        value = getattr(make(), attribute)
        return value(*args) if callable(value) else value
    return run


# What the fitted estimators of both HDBSCAN* classes return without new points.
_FITTED = {"cluster_persistence_": (), "condensed_tree_": (), "single_linkage_tree_": (),
           "minimum_spanning_tree_": (), "exemplars_": (), "relative_validity_": (), "get_params": (),
           "dbscan_clustering": (0.1, 3), "weighted_cluster_centroid": (0,), "weighted_cluster_medoid": (0,)}


# name: call(p) -> result. p is an (m, 3) array: the points (or queries)
# under test for the calls that take points.
CALLS = {
    # ball trees
    "grove.balltree": lambda p: (grove.balltree(p), grove.balltree(p).balls(0)),
    "grove.BallTree": lambda p: grove.BallTree(*grove.balltree(np.ascontiguousarray(p)), p, None, -1, None).balls(0),
    "grove.BallTree.indices": lambda p: grove.balltree(p).indices,
    "grove.BallTree.mask": lambda p: grove.balltree(p).mask,
    "grove.BallTree.batches": lambda p: grove.balltree(p, _one_batch(p)).batches(),
    "grove.BallTree.balls": lambda p: grove.balltree(p).balls(1),
    "grove.random_rotation": lambda _: grove.random_rotation(3, seed=4),
    "grove.compat.balltree.build_balltree": lambda p: cbt.build_balltree(p, _one_batch(p)),
    "grove.compat.balltree.partition_balltree": lambda p: cbt.partition_balltree(p, _one_batch(p), 1),
    "grove.compat.balltree.build_balltree_with_rotations":
        lambda p: cbt.build_balltree_with_rotations(p, _one_batch(p), [], [2]),
    "grove.compat.balltree.build_balltree_with_offsets": lambda p: cbt.build_balltree_with_offsets(p, [0, len(p)]),
    "grove.compat.balltree.partition_balltree_with_offsets":
        lambda p: cbt.partition_balltree_with_offsets(p, [0, len(p)], 1),
    "grove.compat.balltree.build_balltree_with_idx": lambda p: cbt.build_balltree_with_idx(p, _one_batch(p)),
    "grove.compat.balltree.partition_balltree_with_idx": lambda p: cbt.partition_balltree_with_idx(p, _one_batch(p), 1),
    "grove.compat.balltree.generate_rotation_matrix": lambda _: cbt.generate_rotation_matrix(30.0, 3),
    # joins and kNN
    "grove.Index": lambda p: _index(p).knn(1, BASE[:5]),
    "grove.Index.count": _query("count", 0.3),
    "grove.Index.join": _query("join", 0.3, distances=True),
    "grove.Index.join_batches": _query("join_batches", 0.3, distances=True, memory_budget=2048),
    "grove.Index.knn": _query("knn", 3),
    **{f"grove.Index.{a}": _read(_index, a) for a in ("n", "d", "leaf_size", "index_dims", "dim_order")},
    "grove.Index.boxsize": lambda _: grove.Index(BASE, boxsize=1.0).boxsize,
    "grove.join": lambda p: grove.join(p, 0.3, p, distances=True),
    "grove.join_csr": lambda p: grove.join_csr(p, 0.3, p),
    "grove.join_batches": lambda p: list(grove.join_batches(p, 0.3, p, distances=True, memory_budget=2048)),
    "grove.knn": lambda p: grove.knn(p, 1, p),
    # EMST, HDBSCAN*, DBSCAN
    "grove.emst": lambda p: grove.emst(p),
    "grove.core_distances": lambda p: grove.core_distances(p, 1),
    "grove.HDBSCAN": lambda _: grove.HDBSCAN(),
    "grove.HDBSCAN.fit": lambda p: grove.HDBSCAN(min_cluster_size=2, min_samples=1).fit(p),
    "grove.HDBSCAN.fit_predict": lambda p: grove.HDBSCAN(min_cluster_size=2, min_samples=1).fit_predict(p),
    "grove.HDBSCAN.predict": lambda p: _hdbscan().predict(p),
    "grove.HDBSCAN.approximate_predict": lambda p: _hdbscan().approximate_predict(p),
    "grove.HDBSCAN.approximate_predict_scores": lambda p: _hdbscan().approximate_predict_scores(p),
    "grove.HDBSCAN.membership_vector": lambda p: _hdbscan().membership_vector(p),
    "grove.HDBSCAN.all_points_membership_vectors": lambda _: _hdbscan().all_points_membership_vectors(),
    **{f"{estimator}.{a}": _read(make, a, *args) for estimator, make in (("grove.HDBSCAN", _hdbscan),
                                                                          ("grove.compat.hdbscan.HDBSCAN", _compat))
       for a, args in _FITTED.items()},
    "grove.DBSCAN": lambda _: grove.DBSCAN(),
    "grove.DBSCAN.fit": lambda p: grove.DBSCAN(eps=0.2, min_samples=1).fit(p),
    "grove.DBSCAN.fit_predict": lambda p: grove.DBSCAN(eps=0.2, min_samples=1).fit_predict(p),
    "grove.DBSCAN.get_params": lambda _: grove.DBSCAN().get_params(),
    "grove.compat.hdbscan.HDBSCAN": lambda _: chd.HDBSCAN(),
    "grove.compat.hdbscan.HDBSCAN.fit": lambda p: chd.HDBSCAN(min_cluster_size=2, min_samples=1).fit(p),
    "grove.compat.hdbscan.HDBSCAN.fit_predict": lambda p: chd.HDBSCAN(min_cluster_size=2, min_samples=1).fit_predict(p),
    "grove.compat.hdbscan.HDBSCAN.generate_prediction_data":
        lambda _: chd.HDBSCAN().fit(BASE).generate_prediction_data(),
    "grove.compat.hdbscan.HDBSCAN.prediction_data_": lambda _: _compat().prediction_data_,
    "grove.compat.hdbscan.hdbscan": lambda p: chd.hdbscan(p, min_cluster_size=2, min_samples=1),
    "grove.compat.hdbscan.approximate_predict": lambda p: chd.approximate_predict(_compat(), p),
    "grove.compat.hdbscan.approximate_predict_scores": lambda p: chd.approximate_predict_scores(_compat(), p),
    "grove.compat.hdbscan.membership_vector": lambda p: chd.membership_vector(_compat(), p),
    "grove.compat.hdbscan.all_points_membership_vectors": lambda _: chd.all_points_membership_vectors(_compat()),
    "grove.compat.hdbscan.PredictionData": lambda _: chd.PredictionData(_compat()).exemplars,
    "grove.compat.hdbscan.PredictionData.exemplars": lambda _: _compat().prediction_data_.exemplars,
    "grove.compat.hdbscan.CondensedTree": lambda _: chd.CondensedTree(_compat().condensed_tree_.to_numpy(),
                                                                     _compat().labels_).to_numpy(),
    "grove.compat.hdbscan.CondensedTree.to_numpy": lambda _: _compat().condensed_tree_.to_numpy(),
    "grove.compat.hdbscan.CondensedTree.get_plot_data": lambda _: _compat().condensed_tree_.get_plot_data(),
    "grove.compat.hdbscan.SingleLinkageTree": lambda _: chd.SingleLinkageTree(
        _compat().single_linkage_tree_.to_numpy()).to_numpy(),
    "grove.compat.hdbscan.SingleLinkageTree.to_numpy": lambda _: _compat().single_linkage_tree_.to_numpy(),
    "grove.compat.hdbscan.SingleLinkageTree.get_clusters": lambda _: _compat().single_linkage_tree_.get_clusters(0.1),
    "grove.compat.hdbscan.MinimumSpanningTree": lambda p: chd.MinimumSpanningTree(
        _compat().minimum_spanning_tree_.to_numpy(), p).to_numpy(),
    "grove.compat.hdbscan.MinimumSpanningTree.to_numpy": lambda _: _compat().minimum_spanning_tree_.to_numpy(),
    "grove.compat.hdbscan.validity_index": lambda p: chd.validity_index(p, np.arange(len(p)) % 2),
    "grove.compat.hdbscan.robust_single_linkage": lambda p: chd.robust_single_linkage(p, 0.3, k=1, gamma=1),
    "grove.compat.hdbscan.RobustSingleLinkage": lambda _: chd.RobustSingleLinkage(),
    "grove.compat.hdbscan.RobustSingleLinkage.get_params": lambda _: chd.RobustSingleLinkage().get_params(),
    "grove.compat.hdbscan.RobustSingleLinkage.fit": lambda p: chd.RobustSingleLinkage(cut=0.3, k=1, gamma=1).fit(p),
    "grove.compat.hdbscan.RobustSingleLinkage.fit_predict":
        lambda p: chd.RobustSingleLinkage(cut=0.3, k=1, gamma=1).fit_predict(p),
    "grove.compat.hdbscan.RobustSingleLinkage.cluster_hierarchy_":
        lambda _: chd.RobustSingleLinkage(cut=0.3, k=2).fit(BASE).cluster_hierarchy_.to_numpy(),
    # friends-of-friends
    "grove.fof": lambda p: grove.fof(p, 0.3, min_members=1, velocity=p, catalogue=True),
    "grove.mean_separation": lambda p: grove.mean_separation(p),
    # pair counts
    "grove.pair_counts": lambda p: grove.pair_counts(p, p, bins=[0.05, 0.1, 0.3], pimax=1, weighted=True),
    "grove.paircount": lambda p: grove.paircount(p, [0.05, 0.1, 0.3], randoms=p, boxsize=1.0),
    # gravity and N-body
    "grove.gravity": lambda p: grove.gravity(p, np.ones(len(p)), softening=0.1, potentials=True),
    "grove.NBody": _stepped,
    "grove.NBody.from_ic": lambda _: grove.NBody.from_ic("plummer", 50, seed=2).positions,
    "grove.NBody.from_checkpoint": _checkpoint_round_trip,
    **{f"grove.NBody.{a}": _read(_nbody, a) for a in ("energies", "snapshot", "n", "time", "positions", "velocities",
                                                      "masses", "accelerations", "potentials", "force_evaluations",
                                                      "stats", "params")},
    "grove.NBody.snapshots": lambda _: list(_nbody().snapshots(1, 2)),
    "grove.NBody.levels": lambda _: _nbody(timestep="block").levels,
    "grove.write_tipsy": _tipsy_round_trip,
    "grove.read_tipsy": lambda _: _tipsy_round_trip(BASE),
    # the rest
    "grove.generate": lambda _: grove.generate("blobs", 30, 2, seed=1),
    "grove.build_info": lambda _: grove.build_info(),
    "grove.cpu_info": lambda _: grove.cpu_info(),
    "grove.device_info": lambda _: grove.device_info("cpu"),
    "grove.library_path": lambda _: grove.library_path(),
    "grove.version": lambda _: grove.version(),
}

# Public calls with nothing to inspect: they act (free, write a file,
# check) or build an object of another library.
NO_RESULT = {
    "grove.Index.close": "frees the index",
    "grove.NBody.close": "frees the simulation",
    "grove.NBody.step": "advances the simulation (grove.NBody's call reads the state after it)",
    "grove.NBody.checkpoint": "writes a file (grove.NBody.from_checkpoint's call reads it back)",
    "grove.NBody.render": "writes a PNG",
    "grove.BallTree.check": "raises or returns None",
    "grove.HDBSCAN.set_params": "returns the estimator, as get_params shows",
    "grove.DBSCAN.set_params": "returns the estimator, as get_params shows",
    "grove.compat.hdbscan.HDBSCAN.set_params": "returns the estimator, as get_params shows",
    "grove.compat.hdbscan.RobustSingleLinkage.set_params": "returns the estimator, as get_params shows",
    "grove.compat.hdbscan.HDBSCAN.generate_branch_detection_data": "refused (grove.UnsupportedError): grove has no "
                                                                   "branch detection",
    **{f"grove.compat.hdbscan.{tree}.{method}": "a plot or another library's object (matplotlib, pandas, networkx)"
       for tree in ("CondensedTree", "SingleLinkageTree", "MinimumSpanningTree")
       for method in ("plot", "to_pandas", "to_networkx")},
}
