"""The ctypes mirrors in grove/_cstructs.py have the C structs' exact sizes
and field offsets: a C program compiled against include/grove.h prints
them."""
import ctypes
import os
import re
import shutil
import subprocess

import pytest

from conftest import ROOT
from grove import _clib, _cstructs


def c_layouts(tmp_path):
    cc = os.environ.get("GROVE_CC", "cc").split()[0]
    if not shutil.which(cc):
        pytest.skip(f"no C compiler ({cc}) to check the struct layouts with")
    lines = ["#include <grove.h>", "#include <stddef.h>", "#include <stdio.h>", "int main(void) {"]
    for struct, name in _cstructs.C_NAMES.items():
        lines.append(f'printf("{name} size %zu\\n", sizeof({name}));')
        for field, _ in struct._fields_:
            lines.append(f'printf("{name} {field} %zu\\n", offsetof({name}, {field}));')
    lines.append("return 0; }")
    (tmp_path / "layout.c").write_text("\n".join(lines))
    subprocess.run([cc, "-std=c11", f"-I{ROOT / 'include'}", "layout.c", "-o", "layout"], cwd=tmp_path, check=True)
    out = subprocess.run(["./layout"], cwd=tmp_path, check=True, capture_output=True, text=True).stdout
    return {tuple(line.split()[:2]): int(line.split()[2]) for line in out.splitlines()}


def test_struct_sizes_and_offsets_match_the_header(tmp_path):
    c = c_layouts(tmp_path)
    for struct, name in _cstructs.C_NAMES.items():
        assert c[name, "size"] == ctypes.sizeof(struct), name
        for field, _ in struct._fields_:
            assert c[name, field] == getattr(struct, field).offset, f"{name}.{field}"


def test_every_struct_in_the_header_is_mirrored():
    header = (ROOT / "include" / "grove.h").read_text()
    declared = set(re.findall(r"typedef struct (grove_\w+) \{", header))
    mirrored = set(_cstructs.C_NAMES.values())
    # grove_rng, grove_array and grove_load_info (file reading) are used by C callers only (NumPy does
    # those jobs in Python).
    assert declared - mirrored == {"grove_rng", "grove_array", "grove_load_info"}


def test_every_prototype_names_a_header_function():
    header = (ROOT / "include" / "grove.h").read_text()
    for name in _clib.PROTOTYPES:
        assert f" {name}(" in header or f"*{name}(" in header, name
