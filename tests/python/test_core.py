"""Conversions, copies, errors, threads and the GIL: behaviour shared by
every function of the binding."""
import ctypes as C
import threading
import time

import numpy as np
import pytest

import grove
from grove import _arrays, _clib


class FakeTensor:
    """A CPU tensor stand-in that only speaks DLPack (as torch does)."""

    def __init__(self, a):
        self.a = a
        self.device = type("Device", (), {"type": "cpu"})()

    def __dlpack__(self, **kw):
        return self.a.__dlpack__(**kw)

    def __dlpack_device__(self):
        return self.a.__dlpack_device__()


def _passed_pointer(calls):
    points = calls[-1][0]
    return points.data, points.stride, points.dtype


@pytest.mark.parametrize("dtype, code", [(np.float32, 1), (np.float64, 2)])
def test_c_contiguous_points_reach_c_without_copy(spy, rng, dtype, code):
    x = rng.random((100, 3)).astype(dtype)
    calls = spy("grove_balltree_build")
    grove.balltree(x)
    assert _passed_pointer(calls) == (x.ctypes.data, 3 * x.itemsize, code)


def test_strided_rows_and_column_blocks_are_not_copied(spy, rng):
    x = rng.random((200, 5))
    calls = spy("grove_emst")
    for view in (x[::2], x[:, :3], x[10:50:3, 1:4]):
        grove.emst(view)
        assert _passed_pointer(calls) == (view.ctypes.data, view.strides[0], 2)


@pytest.mark.parametrize("make", [lambda x: np.asfortranarray(x), lambda x: x[::-1], lambda x: x.astype(np.int32),
                                  lambda x: x.astype(">f8"), lambda x: x.astype(np.float16), lambda x: x[:, ::2],
                                  lambda x: x.tolist()])
def test_other_layouts_are_converted_once_to_the_same_result(rng, make):
    x = np.round(rng.random((64, 4)) * 100)  # integer-valued: exact in every dtype used here
    converted = make(x)
    reference = np.asarray(converted, dtype=np.float64)
    assert np.array_equal(grove.emst(converted)[0], grove.emst(np.ascontiguousarray(reference))[0])
    a = _arrays.points_array(converted)
    assert a.flags.c_contiguous and a.dtype in (np.float32, np.float64)


def test_dlpack_tensors_are_read_in_place(spy, rng):
    x = rng.random((50, 3))
    calls = spy("grove_balltree_build")
    indices, mask = grove.balltree(FakeTensor(x))
    assert _passed_pointer(calls)[0] == x.ctypes.data
    assert np.array_equal(indices, grove.balltree(x)[0])


class DLTensor(C.Structure):  # dlpack.h, written out here independently of the binding
    _fields_ = [("data", C.c_void_p), ("device_type", C.c_int32), ("device_id", C.c_int32), ("ndim", C.c_int32),
                ("code", C.c_uint8), ("bits", C.c_uint8), ("lanes", C.c_uint16), ("shape", C.POINTER(C.c_int64)),
                ("strides", C.POINTER(C.c_int64)), ("byte_offset", C.c_uint64)]


DELETER = C.CFUNCTYPE(None, C.c_void_p)


class DLManagedTensor(C.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", C.c_void_p), ("deleter", DELETER)]


def _capsule_functions():
    new, valid = C.pythonapi.PyCapsule_New, C.pythonapi.PyCapsule_IsValid
    new.restype, new.argtypes = C.py_object, [C.c_void_p, C.c_char_p, C.c_void_p]
    valid.restype, valid.argtypes = C.c_int, [C.py_object, C.c_char_p]
    return new, valid


class RawTensor:
    """A CPU tensor that exports `memory` (a NumPy array of the right
    size) through DLPack capsules as dtype (code, bits) with the given
    shape and element strides (None = C-contiguous). It keeps every
    capsule it made and counts its deleter's calls (`deleted`): a consumer
    that copies without taking the tensor leaves the capsule named
    "dltensor" (its producer frees it) and never calls the deleter."""

    def __init__(self, memory, code, bits, shape, strides=None):
        self.memory, self.code, self.bits, self.deleted = memory, code, bits, 0
        self.shape = (C.c_int64 * len(shape))(*shape)
        self.strides = None if strides is None else (C.c_int64 * len(strides))(*strides)
        self.deleter = DELETER(lambda _: setattr(self, "deleted", self.deleted + 1))
        self.managed, self.capsules = [], []

    def __dlpack__(self, stream=None, **kw):
        t = DLTensor(self.memory.ctypes.data, 1, 0, len(self.shape), self.code, self.bits, 1, self.shape,
                     self.strides, 0)
        self.managed.append(DLManagedTensor(t, None, self.deleter))
        self.capsules.append(_capsule_functions()[0](C.addressof(self.managed[-1]), b"dltensor", None))
        return self.capsules[-1]

    def __dlpack_device__(self):
        return 1, 0

    def untaken(self):
        """Whether no consumer took any of its tensors."""
        valid = _capsule_functions()[1]
        return self.deleted == 0 and all(valid(c, b"dltensor") for c in self.capsules)


def _bfloat16(x):
    """The upper halves of float32 values that bfloat16 holds exactly."""
    return (np.asarray(x, dtype=np.float32).view(np.uint32) >> 16).astype(np.uint16)


@pytest.mark.parametrize("layout", ["C-contiguous", "no strides", "transposed"])
def test_bfloat16_tensors_are_read_as_float32(rng, layout):
    x = np.round(rng.random((40, 3)) * 64) / 64  # exact in bfloat16
    if layout == "transposed":  # (3, 40) memory read as (40, 3) by strides
        tensor = RawTensor(_bfloat16(x.T.copy()), 4, 16, (40, 3), (1, 40))
    else:
        tensor = RawTensor(_bfloat16(x), 4, 16, (40, 3), None if layout == "no strides" else (3, 1))
    got = grove.knn(tensor, 4)
    want = grove.knn(x.astype(np.float32), 4)
    assert all(np.array_equal(g, w) for g, w in zip(got, want))
    assert len(tensor.capsules) == 2 and tensor.untaken()  # NumPy's refused one and grove's, left to the producer


def test_a_dlpack_dtype_grove_cannot_read_is_named_in_one_line():
    tensor = RawTensor(np.zeros(12, np.uint8), 2, 8, (4, 3))  # float8
    with pytest.raises(grove.InvalidArgumentError, match="float8") as e:
        grove.emst(tensor)
    assert "\n" not in str(e.value)


def test_torch_bfloat16_tensors_are_read(rng):
    torch = pytest.importorskip("torch")
    x = np.round(rng.random((30, 3)) * 64) / 64
    got = grove.knn(torch.tensor(x, dtype=torch.bfloat16), 3)
    assert all(np.array_equal(g, w) for g, w in zip(got, grove.knn(x.astype(np.float32), 3)))


def test_torch_tensors_are_read_in_place(spy, rng):
    torch = pytest.importorskip("torch")
    t = torch.from_numpy(rng.random((40, 3))).requires_grad_()
    calls = spy("grove_balltree_build")
    indices, _ = grove.balltree(t)
    assert _passed_pointer(calls)[0] == t.data_ptr()
    assert isinstance(indices, np.ndarray)


@pytest.mark.parametrize("bad, match", [
    (np.float64(1.0), "2-D"),
    (np.zeros((2, 3, 4)), "2-D"),
    (np.array([["a", "b"]]), "not a real number"),
    (np.ones((3, 2), dtype=complex), "not a real number"),
])
def test_bad_points_raise_invalid_argument(bad, match):
    with pytest.raises(grove.InvalidArgumentError, match=match):
        grove.emst(bad)


def test_nan_is_refused_with_grove_message_naming_row_and_column():
    x = np.zeros((10, 3))
    x[7, 2] = np.nan
    with pytest.raises(grove.InvalidArgumentError, match="row 7, column 2") as e:
        grove.balltree(x)
    assert isinstance(e.value, ValueError) and e.value.status == 1


def test_error_classes_follow_the_status():
    from grove._errors import error_for
    assert isinstance(error_for(2, "x"), MemoryError)
    assert isinstance(error_for(3, "x"), OSError)
    assert isinstance(error_for(8, "x"), RuntimeError)
    assert type(error_for(99, "x")) is grove.GroveError
    for status in range(1, 10):
        assert error_for(status, "").status_name == _clib.lib.grove_status_str(status).decode()


def test_file_errors_are_os_errors(tmp_path):
    with pytest.raises(grove.InputOutputError, match="nope"):
        grove.read_tipsy(tmp_path / "nope.tipsy")


@pytest.mark.parametrize("threads", [-1, 1.5, "two"])
def test_bad_threads_are_refused(threads):
    with pytest.raises(grove.InvalidArgumentError, match="threads"):
        grove.emst(np.zeros((3, 2)), threads=threads)


def test_threads_reach_c_and_do_not_change_results(spy, rng):
    x = rng.random((3000, 3))
    calls = spy("grove_emst")
    first = grove.emst(x, 3, threads=1)
    second = grove.emst(x, 3, threads=2)
    assert [c[-1].threads for c in calls] == [1, 2]
    assert _clib.lib.grove_options_threads(calls[-1][-1]) == 2
    assert all(np.array_equal(a, b) for a, b in zip(first, second))
    assert _arrays.options(None).threads == 0  # None = all cores


def test_the_gil_is_released_during_c_calls(rng):
    pos, mass = rng.random((6000, 3)), np.ones(6000)
    t0 = time.perf_counter()
    grove.gravity(pos, mass, theta=0.0, threads=1)
    duration = time.perf_counter() - t0
    worker = threading.Thread(target=grove.gravity, args=(pos, mass), kwargs={"theta": 0.0, "threads": 1})
    gaps, last = [], time.perf_counter()
    worker.start()
    while worker.is_alive():
        now = time.perf_counter()
        gaps.append(now - last)
        last = now
    worker.join()
    # With the GIL held through the call, this loop would stall for all of it.
    assert len(gaps) > 100 and max(gaps) < 0.5 * duration + 0.02, (duration, max(gaps))


def test_version_and_build_info():
    assert grove.__version__ == grove.version() == "0.1.0"
    assert grove.build_info()


def test_generate_is_seeded(cli, tmp_path):
    x = grove.generate("blobs", 500, 3, seed=9, centers=4)
    cli("gen", "blobs", "--n", 500, "--dims", 3, "--centers", 4, "--seed", 9, "-o", "g.npy")
    assert np.array_equal(x, np.load(tmp_path / "g.npy"))
    with pytest.raises(grove.InvalidArgumentError, match="kind"):
        grove.generate("spiral", 5, 2)


# ctypes wraps an integer that does not fit its C type without a word
# (seed 2**64 was seed 0): every integer argument is refused outside its
# C type's range, as a negative one is. `big` is past the type's top:
# 2**64 for size_t and uint64_t, 2**32 for int.
OUT_OF_RANGE = [
    ("seed", lambda big: grove.NBody.from_ic("cold", 8, seed=big(64))),
    ("seed", lambda big: grove.generate("uniform", 4, 2, seed=big(64))),
    ("seed", lambda big: grove.random_rotation(3, seed=big(64))),
    ("rotate", lambda big: grove.balltree(np.eye(3), rotate=big(64))),
    ("steps", lambda big: grove.NBody.from_ic("cold", 8).step(big(64))),
    ("k", lambda big: grove.knn(np.eye(3), big(64))),
    ("threads", lambda big: grove.emst(np.eye(3), threads=big(32))),
    ("levels", lambda big: grove.balltree(np.eye(3), levels=big(32))),
    ("level", lambda big: grove.balltree(np.eye(3)).balls(big(32))),
]


@pytest.mark.parametrize("name, call", OUT_OF_RANGE, ids=[f"{name}-{i}" for i, (name, _) in enumerate(OUT_OF_RANGE)])
@pytest.mark.parametrize("big", [lambda bits: 2**bits, lambda bits: -1], ids=["too large", "negative"])
def test_integers_outside_their_c_type_are_refused(name, call, big):
    with pytest.raises(grove.InvalidArgumentError, match=f"^{name}"):
        call(big)


def test_the_largest_seed_is_a_seed_of_its_own():
    top = 2**64 - 1
    assert not np.array_equal(grove.generate("uniform", 4, 2, seed=top), grove.generate("uniform", 4, 2, seed=0))
    with grove.NBody.from_ic("cold", 8, seed=top) as a, grove.NBody.from_ic("cold", 8, seed=0) as b:
        assert not np.array_equal(a.positions, b.positions)
