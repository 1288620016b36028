"""ctypes mirrors of include/grove.h: its structs field by field in the
header's order and with the header's C types (``size_t`` is ``c_size_t``,
enums are ``c_int``), its callback types, and the enum and ``#define``
constants the binding uses, under their C names.

tests/python/test_structs.py reads the header through the C compiler
(tests/python/cheader.py) and checks every mirror here and every prototype
in _clib.PROTOTYPES against it: field names, order, types, sizes and
offsets, constant values, argument and return types. A change to grove.h
that the binding does not follow fails there, naming the item.
"""
from __future__ import annotations

import ctypes as C
import functools

# grove_status
GROVE_OK, GROVE_INVALID_ARGUMENT, GROVE_OUT_OF_MEMORY, GROVE_IO_ERROR, GROVE_PARSE_ERROR = 0, 1, 2, 3, 4
GROVE_UNSUPPORTED, GROVE_TOO_LARGE, GROVE_OVER_BUDGET, GROVE_CANCELLED, GROVE_INTERNAL = 5, 6, 7, 8, 9
# grove_dtype
GROVE_FLOAT32, GROVE_FLOAT64 = 1, 2
# grove_gen_kind
GROVE_GEN_UNIFORM, GROVE_GEN_NORMAL, GROVE_GEN_EXPONENTIAL, GROVE_GEN_BLOBS = 1, 2, 3, 4
# grove_balltree_params.levels
GROVE_BALLTREE_FULL = -1
# grove_hdbscan_selection, grove_hdbscan_ties
GROVE_HDBSCAN_EOM, GROVE_HDBSCAN_LEAF = 0, 1
GROVE_HDBSCAN_TIES_ORDERED, GROVE_HDBSCAN_TIES_SIMULTANEOUS = 0, 1
# grove_ic_kind
GROVE_IC_PLUMMER, GROVE_IC_COLD, GROVE_IC_MERGER, GROVE_IC_HERNQUIST, GROVE_IC_PLUMMER_BH = 1, 2, 3, 4, 5
# grove_timestep
GROVE_TIMESTEP_SHARED, GROVE_TIMESTEP_ADAPTIVE, GROVE_TIMESTEP_BLOCK = 0, 1, 2
# grove_device
GROVE_DEVICE_CPU, GROVE_DEVICE_CUDA, GROVE_DEVICE_OPENCL, GROVE_DEVICE_AUTO = 0, 1, 2, 3


DEVICES = {"cpu": GROVE_DEVICE_CPU, "cuda": GROVE_DEVICE_CUDA, "opencl": GROVE_DEVICE_OPENCL,
           "auto": GROVE_DEVICE_AUTO}


def device_code(device: str) -> int:
    """The grove_device of a ``device=`` argument ("cpu", "cuda", "opencl"
    or "auto")."""
    try:
        return DEVICES[device]
    except (KeyError, TypeError):
        from ._errors import InvalidArgumentError
        raise InvalidArgumentError(f"device: expected one of {', '.join(DEVICES)}, got {device!r}") from None


@functools.cache
def array_of(element: type) -> type:
    """The argument type for a C pointer to an array of ``element`` that the
    binding passes as an address (``ndarray.ctypes.data``, or None): a
    ``c_void_p`` that records its element type, so the prototype check can
    compare it with the header's pointee."""
    return type(f"{element.__name__}_array", (C.c_void_p,),
                {"element": element, "from_param": C.c_void_p.from_param})


PROGRESS_FN = C.CFUNCTYPE(None, C.c_void_p, C.c_char_p, C.c_double)


class Points(C.Structure):
    _fields_ = [("data", C.c_void_p), ("n", C.c_size_t), ("d", C.c_size_t), ("dtype", C.c_int),
                ("stride", C.c_size_t)]


class Options(C.Structure):
    _fields_ = [("threads", C.c_int), ("progress", PROGRESS_FN), ("progress_user", C.c_void_p),
                ("memory_budget", C.c_size_t), ("cancel", C.POINTER(C.c_int)),
                ("mpi", C.c_void_p),  # the binding runs on one process: always NULL
                ("device", C.c_int)]


class GenParams(C.Structure):
    _fields_ = [("kind", C.c_int), ("n", C.c_size_t), ("d", C.c_size_t), ("rate", C.c_double),
                ("centers", C.c_size_t), ("seed", C.c_uint64)]


class BalltreeParams(C.Structure):
    _fields_ = [("batch", C.POINTER(C.c_int64)), ("levels", C.c_int), ("rotation", C.POINTER(C.c_double)),
                ("workspace", C.c_void_p)]


class BalltreeBatch(C.Structure):
    _fields_ = [("id", C.c_int64), ("count", C.c_size_t), ("slot_offset", C.c_size_t), ("slots", C.c_size_t),
                ("levels", C.c_int)]


class EmstParams(C.Structure):
    _fields_ = [("min_samples", C.c_size_t)]


class KnnParams(C.Structure):
    _fields_ = [("k", C.c_size_t), ("exclude_self", C.c_int)]


class HdbscanParams(C.Structure):
    _fields_ = [("min_cluster_size", C.c_size_t), ("min_samples", C.c_size_t), ("selection", C.c_int),
                ("epsilon", C.c_double), ("allow_single_cluster", C.c_int), ("max_cluster_size", C.c_size_t),
                ("epsilon_max", C.c_double), ("persistence", C.c_double), ("alpha", C.c_double),
                ("match_reference_implementation", C.c_int), ("ties", C.c_int), ("prediction_data", C.c_int)]


class IndexParams(C.Structure):
    _fields_ = [("leaf_size", C.c_size_t), ("index_dims", C.c_size_t), ("boxsize", C.POINTER(C.c_double)),
                ("boxsize_count", C.c_size_t)]


class JoinParams(C.Structure):
    _fields_ = [("eps", C.c_double), ("exclude_self", C.c_int), ("distances", C.c_int)]


class JoinBatch(C.Structure):
    _fields_ = [("query_begin", C.c_size_t), ("query_end", C.c_size_t), ("offsets", C.POINTER(C.c_int64)),
                ("indices", C.POINTER(C.c_int64)), ("distances", C.POINTER(C.c_double)),
                ("pairs_before", C.c_int64), ("pairs_total", C.c_int64)]


class JoinResult(C.Structure):
    _fields_ = [("nq", C.c_size_t), ("pairs", C.c_int64), ("offsets", C.POINTER(C.c_int64)),
                ("indices", C.POINTER(C.c_int64)), ("distances", C.POINTER(C.c_double))]


JOIN_BATCH_FN = C.CFUNCTYPE(C.c_int, C.c_void_p, C.POINTER(JoinBatch))


class DbscanParams(C.Structure):
    _fields_ = [("eps", C.c_double), ("min_samples", C.c_size_t), ("sample_weight", C.POINTER(C.c_double))]


class DbscanCounts(C.Structure):
    _fields_ = [("clusters", C.c_size_t), ("core", C.c_size_t), ("noise", C.c_size_t)]


class FofParams(C.Structure):
    _fields_ = [("linking_length", C.c_double), ("min_members", C.c_size_t), ("index", IndexParams)]


class FofCatalogue(C.Structure):
    _fields_ = [("groups", C.c_size_t), ("d", C.c_size_t), ("members", C.POINTER(C.c_int64)),
                ("first", C.POINTER(C.c_int64)), ("mass", C.POINTER(C.c_double)), ("center", C.POINTER(C.c_double)),
                ("velocity", C.POINTER(C.c_double)), ("dispersion", C.POINTER(C.c_double)),
                ("radius", C.POINTER(C.c_double))]


class GravityParams(C.Structure):
    _fields_ = [("theta", C.c_double), ("softening", C.c_double), ("G", C.c_double), ("leaf_size", C.c_size_t),
                ("group_size", C.c_size_t)]


class GravityStats(C.Structure):
    _fields_ = [("particle_interactions", C.c_double), ("cell_interactions", C.c_double), ("cells", C.c_size_t),
                ("leaves", C.c_size_t), ("groups", C.c_size_t), ("depth", C.c_int), ("flops", C.c_double)]


class NbodyParams(C.Structure):
    _fields_ = [("gravity", GravityParams), ("dt", C.c_double), ("eta", C.c_double), ("conserve_momentum", C.c_int),
                ("timestep", C.c_int), ("max_level", C.c_int)]


class NbodyDiag(C.Structure):
    _fields_ = [("time", C.c_double), ("step", C.c_uint64), ("kinetic", C.c_double), ("potential", C.c_double),
                ("energy", C.c_double), ("momentum", C.c_double * 3), ("angular_momentum", C.c_double * 3),
                ("com", C.c_double * 3), ("mass", C.c_double)]


class IcParams(C.Structure):
    _fields_ = [("kind", C.c_int), ("n", C.c_size_t), ("seed", C.c_uint64), ("separation", C.c_double),
                ("impact", C.c_double), ("bh_mass", C.c_double)]


class Snapshot(C.Structure):
    _fields_ = [("n", C.c_size_t), ("time", C.c_double), ("pos", C.POINTER(C.c_double)),
                ("vel", C.POINTER(C.c_double)), ("mass", C.POINTER(C.c_double))]


class RenderParams(C.Structure):
    _fields_ = [("width", C.c_size_t), ("extent", C.c_double), ("center", C.c_double * 3),
                ("decades", C.c_double)]


class PaircountParams(C.Structure):
    _fields_ = [("edges", C.POINTER(C.c_double)), ("nedges", C.c_size_t), ("pimax", C.c_double),
                ("weights1", C.POINTER(C.c_double)), ("weights2", C.POINTER(C.c_double)), ("index", IndexParams)]


class PaircountTotals(C.Structure):
    _fields_ = [("sum", C.c_double), ("sum2", C.c_double)]


# C name of each mirror (structs and callback types), for defaults() and the header check.
C_NAMES = {PROGRESS_FN: "grove_progress_fn", JOIN_BATCH_FN: "grove_join_batch_fn",
           Points: "grove_points", Options: "grove_options", GenParams: "grove_gen_params",
           BalltreeParams: "grove_balltree_params", BalltreeBatch: "grove_balltree_batch",
           EmstParams: "grove_emst_params", KnnParams: "grove_knn_params", HdbscanParams: "grove_hdbscan_params",
           IndexParams: "grove_index_params", JoinParams: "grove_join_params", JoinBatch: "grove_join_batch",
           JoinResult: "grove_join_result", DbscanParams: "grove_dbscan_params", DbscanCounts: "grove_dbscan_counts", GravityParams: "grove_gravity_params",
           GravityStats: "grove_gravity_stats", NbodyParams: "grove_nbody_params", NbodyDiag: "grove_nbody_diag",
           IcParams: "grove_ic_params", Snapshot: "grove_snapshot", RenderParams: "grove_render_params",
           FofParams: "grove_fof_params", FofCatalogue: "grove_fof_catalogue",
           PaircountParams: "grove_paircount_params", PaircountTotals: "grove_paircount_totals"}
