"""The binding's mirrors of include/grove.h (grove/_cstructs.py) and its
ctypes prototypes (grove/_clib.PROTOTYPES) say what the header says.

cheader.py reads the header through the C compiler; the checks below walk
the binding's own declarations and compare each with the header's: every
mirrored struct (field names, order, types, size, alignment, offsets), every
callback type, every GROVE_ constant in _cstructs, and every prototype
(argument count and types, return type). Nothing here lists the header's
items, so a rename or a new field on either side is a failure naming it.
test_the_checks_catch_header_changes applies typical header edits to a copy
of grove.h and requires each to be reported.
"""
from __future__ import annotations

import ctypes as C
import re
import shutil
from pathlib import Path

import pytest

import cheader
from cheader import CType
from conftest import ROOT
from grove import _clib, _cstructs

HEADER = ROOT / "include" / "grove.h"

# The ctypes type of each C scalar the header uses (enums are c_int).
SCALARS = {"void": None, "char": C.c_char, "int": C.c_int, "unsigned": C.c_uint, "double": C.c_double,
           "float": C.c_float, "size_t": C.c_size_t, "int8_t": C.c_int8, "uint8_t": C.c_uint8,
           "int32_t": C.c_int32, "uint32_t": C.c_uint32, "int64_t": C.c_int64, "uint64_t": C.c_uint64}
VOID = CType("void")


@pytest.fixture(scope="module", autouse=True)
def need_compiler():
    if not shutil.which(cheader.compiler()[0]):
        pytest.skip(f"no C compiler ({cheader.compiler()[0]}) to read grove.h with")


def _name(t) -> str:
    if t is None:
        return "void"
    if isinstance(t, type) and issubclass(t, C._Pointer):
        return f"POINTER({_name(t._type_)})"
    if isinstance(t, type) and issubclass(t, C.Array):
        return f"{_name(t._type_)} * {t._length_}"
    if hasattr(t, "element"):
        return f"array_of({_name(t.element)})"
    return _cstructs.C_NAMES.get(t) or getattr(t, "__name__", repr(t))


def compare(py, ct: CType, h: cheader.Header, what: str) -> list[str]:
    """Problems with the ctypes type py standing for the C type ct."""
    wrong = [f"{what}: grove.h has {ct}, the binding {_name(py)}"]
    if ct.arrays:
        if not (isinstance(py, type) and issubclass(py, C.Array)) or py._length_ != ct.arrays[0]:
            return wrong
        return compare(py._type_, ct.element(), h, what)
    if ct.pointers:
        pointee = ct.deref()
        if py is C.c_char_p:
            return [] if pointee == CType("char") else wrong
        if py is C.c_void_p:  # untyped: only for void * and handles
            return [] if pointee == VOID or (pointee.base in h.opaque and not pointee.pointers) else wrong
        if hasattr(py, "element"):  # array_of(element)
            return compare(py.element, pointee, h, what + " (array element)")
        if isinstance(py, type) and issubclass(py, C._Pointer):
            return compare(py._type_, pointee, h, what)
        return wrong
    if ct.base in SCALARS:
        return [] if py is SCALARS[ct.base] else wrong
    if ct.base in h.enums:
        return [] if py is C.c_int else wrong
    if ct.base in h.structs or ct.base in h.callbacks:
        return [] if _cstructs.C_NAMES.get(py) == ct.base else wrong  # the mirror itself is checked by name
    return [f"{what}: type {ct} is not one this check knows (a scalar, enum, struct or callback of grove.h)"]


def compare_signature(restype, argtypes, sig: cheader.Signature, h: cheader.Header, what: str) -> list[str]:
    problems = compare(restype, sig.returns, h, f"{what} return type")
    params = ", ".join(f"{p.type}{'' if p.type.pointers else ' '}{p.name}" for p in sig.params)
    if len(argtypes) != len(sig.params):
        return problems + [f"{what}: grove.h has {len(sig.params)} parameters ({params}), the binding "
                           f"{len(argtypes)} ({', '.join(map(_name, argtypes))})"]
    for i, (py, p) in enumerate(zip(argtypes, sig.params)):
        problems += compare(py, p.type, h, f"{what} parameter {i + 1} ({p.name})")
    return problems


def mirrors(kind: type) -> dict:
    return {py: name for py, name in _cstructs.C_NAMES.items() if isinstance(py, type) and issubclass(py, kind)}


def struct_problems(h: cheader.Header, numbers: dict) -> list[str]:
    problems = []
    for py, name in mirrors(C.Structure).items():
        if name not in h.structs:
            problems.append(f"{name}: no struct of that name in grove.h")
            continue
        c_fields = h.structs[name]
        names, py_names = [f.name for f in c_fields], [f for f, _ in py._fields_]
        if names != py_names:
            problems.append(f"{name}: grove.h's fields are {names}, the binding's {py_names}")
            continue
        for f, (_, t) in zip(c_fields, py._fields_):
            problems += compare(t, f.type, h, f"{name}.{f.name}")
            if numbers[name, f.name] != getattr(py, f.name).offset:
                problems.append(f"{name}.{f.name}: offset {numbers[name, f.name]} in C, "
                                f"{getattr(py, f.name).offset} in the binding")
        for what, c_value, py_value in (("sizeof", numbers[name, "sizeof"], C.sizeof(py)),
                                        ("alignof", numbers[name, "alignof"], C.alignment(py))):
            if c_value != py_value:
                problems.append(f"{name}: {what} {c_value} in C, {py_value} in the binding")
    return problems


def callback_problems(h: cheader.Header) -> list[str]:
    problems = []
    for py, name in mirrors(C._CFuncPtr).items():
        if name not in h.callbacks:
            problems.append(f"{name}: no callback type of that name in grove.h")
        else:
            problems += compare_signature(py._restype_, py._argtypes_, h.callbacks[name], h, name)
    return problems


def constant_problems(h: cheader.Header, numbers: dict) -> list[str]:
    problems = []
    for name, value in vars(_cstructs).items():
        if re.fullmatch(r"GROVE_[A-Z0-9_]+", name):
            if (name,) not in numbers:
                problems.append(f"{name}: no enumerator or integer #define of that name in grove.h")
            elif numbers[name,] != value:
                problems.append(f"{name}: {numbers[name,]} in grove.h, {value} in the binding")
    return problems


def prototype_problems(h: cheader.Header) -> list[str]:
    problems = []
    for name, (restype, argtypes) in _clib.PROTOTYPES.items():
        if name not in h.functions:
            problems.append(f"{name}: no function of that name in grove.h (renamed or removed?)")
        else:
            problems += compare_signature(restype, argtypes, h.functions[name], h, name)
    return problems


def all_problems(path: Path, workdir: Path) -> list[str]:
    h = cheader.parse(path)
    numbers = cheader.layout(path, h, workdir)
    return struct_problems(h, numbers) + callback_problems(h) + constant_problems(h, numbers) + prototype_problems(h)


def no_problems(problems: list[str]) -> None:
    assert not problems, "grove.h and the binding disagree:\n" + "\n".join(problems)


@pytest.fixture(scope="module")
def header():
    return cheader.parse(HEADER)


@pytest.fixture(scope="module")
def numbers(header, tmp_path_factory):
    return cheader.layout(HEADER, header, tmp_path_factory.mktemp("layout"))


def test_structs_match_the_header(header, numbers):
    no_problems(struct_problems(header, numbers))


def test_callback_types_match_the_header(header):
    no_problems(callback_problems(header))
    assert len(mirrors(C._CFuncPtr)) == 2


def test_constants_match_the_header(header, numbers):
    no_problems(constant_problems(header, numbers))


def test_prototypes_match_the_header(header):
    no_problems(prototype_problems(header))


def test_every_c_function_the_package_calls_has_a_prototype():
    # Calls without argtypes would pass Python ints as C ints: each `lib.grove_x` and "grove_x" (the
    # names handed to getattr) in the package must be declared, and each declaration used (the _init
    # functions through defaults()).
    source = "\n".join(p.read_text() for p in (ROOT / "python" / "grove").rglob("*.py"))
    called = set(re.findall(r'lib\.(grove_\w+)|"(grove_\w+)"', source))
    called = {a or b for a, b in called} - set(_cstructs.C_NAMES.values())
    assert called - set(_clib.PROTOTYPES) == set()
    declared = {name for name in _clib.PROTOTYPES if not name.endswith("_init")}
    assert declared - called == set()


def test_every_struct_in_the_header_is_mirrored(header):
    # grove_rng, grove_array and grove_load_info (file reading) are used by C callers only (NumPy does
    # those jobs in Python), and so are the Gadget snapshot structs (h5py, pynbody and yt read snapshots
    # in Python); grove_nbody_rank_stats describes a rank of a distributed simulation, and the binding
    # runs on one process (its library is built without MPI); grove_nbody_setting is a program's run
    # settings in its checkpoints (the CLI's --resume; the binding resumes a checkpoint as it is).
    assert set(header.structs) - set(mirrors(C.Structure).values()) == {
        "grove_rng", "grove_array", "grove_load_info", "grove_nbody_rank_stats", "grove_nbody_setting",
        "grove_gadget", "grove_gadget_header", "grove_gadget_params"}


def test_every_callback_type_in_the_header_is_mirrored(header):
    assert set(header.callbacks) == set(mirrors(C._CFuncPtr).values())


# Typical edits of grove.h, each applied to a copy of it at the first item of
# the binding's declarations it fits (so they follow renames): each gives the
# edited text and the items the checks must name, or None where nothing fits.

# The start of a function declaration up to the name (not a mention in a comment).
DECL = r"GROVE_API [^;(]*?"


def _params_of(h: cheader.Header, name: str) -> tuple[cheader.Decl, ...]:
    return h.functions[name].params if name in h.functions else ()


def _edit(text: str, pattern: str, repl, item: str) -> tuple[str, list[str]] | None:
    new, n = re.subn(pattern, repl, text, count=1, flags=re.S)
    return (new, [item]) if n else None


def _first(edits) -> tuple[str, list[str]] | None:
    return next((e for e in edits if e is not None), None)


def changed_field_type(text, h):
    return _first(_edit(text, rf"(typedef struct {name} \{{[^}}]*?)\bdouble(\s+{f.name}\s*;)", r"\1float\2",
                        f"{name}.{f.name}")
                  for name in mirrors(C.Structure).values() for f in h.structs.get(name, ())
                  if f.type == CType("double"))


def inserted_field(text, h):
    return _first(_edit(text, rf"(typedef struct {name} \{{)", r"\1 int inserted_;", name)
                  for name in mirrors(C.Structure).values())


def added_parameter(text, h):
    return _first(_edit(text, rf"({DECL}\b{name}\([^;]*?)\);", r"\1, int added_);", name)
                  for name in _clib.PROTOTYPES if _params_of(h, name))


def renamed_function(text, h):
    return _first(_edit(text, rf"({DECL})\b{name}\(", rf"\1{name}_renamed(", name) for name in _clib.PROTOTYPES)


def changed_array_element(text, h):
    return _first(_edit(text, rf"({DECL}\b{name}\([^;]*?)\bdouble(\s*\*\s*{p.name}\b)", r"\1float\2",
                        f"{name} parameter {i + 1} ({p.name})")
                  for name, (_, argtypes) in _clib.PROTOTYPES.items()
                  for i, (py, p) in enumerate(zip(argtypes, _params_of(h, name)))
                  if getattr(py, "element", None) is C.c_double)


def changed_enum_value(text, h):
    enumerators = {e for values in h.enums.values() for e in values}
    return _first(_edit(text, rf"\b({name}\s*=\s*)(\d+)", lambda m: f"{m.group(1)}{int(m.group(2)) + 100}", name)
                  for name in vars(_cstructs) if name in enumerators)


def changed_define(text, h):
    return _first(_edit(text, rf"(#define {name}) ([^\n]*)", r"\1 (\2 + 100)", name)
                  for name in vars(_cstructs) if name in h.defines)


def changed_callbacks(text, h):
    """Every mirrored callback type with one more parameter: each must be named."""
    names = list(mirrors(C._CFuncPtr).values())
    for name in names:
        text, _ = re.subn(rf"(\(\s*\*\s*{name}\s*\)\s*\([^;]*?)\);", r"\1, int added_);", text)
    return text, names


CHANGES = [changed_field_type, inserted_field, added_parameter, renamed_function, changed_array_element,
           changed_enum_value, changed_define, changed_callbacks]


@pytest.mark.parametrize("change", CHANGES, ids=lambda f: f.__name__)
def test_the_checks_catch_header_changes(change, header, tmp_path):
    edit = change(HEADER.read_text(), header)
    if edit is None:
        pytest.skip(f"{change.__name__}: no item of the binding's declarations fits this edit")
    text, items = edit
    (tmp_path / "grove.h").write_text(text)
    problems = all_problems(tmp_path / "grove.h", tmp_path)
    for item in items:
        assert any(p.startswith(item) for p in problems), (item, problems)
