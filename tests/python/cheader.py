"""What include/grove.h declares, read through the C compiler.

The header goes through the preprocessor (``cc -E``), so X-macros, ``GROVE_API``
and comments are gone and only plain C declarations are left to parse; the
lines that came from grove.h itself are kept (the line markers say where each
came from), the system headers' are dropped. Of those declarations this reads
the forms grove.h uses: ``typedef struct NAME { ... } NAME;``, opaque
``typedef struct NAME NAME;``, ``typedef enum NAME { ... } NAME;``, callback
typedefs ``typedef RET (*NAME)(PARAMS);`` and function prototypes. Anything
else at the top level (a new form of declaration) raises, so the checker
never skips what it cannot read.

Numbers come from the compiler too: ``layout`` compiles a program that prints
every struct's size, alignment and field offsets, every enumerator's value and
every integer object-like ``#define GROVE_...``.
"""
from __future__ import annotations

import os
import re
import shlex
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

QUALIFIERS = {"const", "volatile", "restrict", "static", "extern", "inline", "struct", "enum"}
MODIFIERS = {"unsigned", "signed", "long", "short"}


@dataclass(frozen=True)
class CType:
    """A C type with qualifiers dropped: a base name (``double``,
    ``grove_points``), pointer levels and array lengths (outermost first)."""
    base: str
    pointers: int = 0
    arrays: tuple[int, ...] = ()

    def deref(self) -> CType:
        return CType(self.base, self.pointers - 1, self.arrays)

    def element(self) -> CType:
        return CType(self.base, self.pointers, self.arrays[1:])

    def __str__(self) -> str:
        return self.base + " " * bool(self.pointers) + "*" * self.pointers + "".join(f"[{n}]" for n in self.arrays)


@dataclass(frozen=True)
class Decl:
    name: str
    type: CType


@dataclass(frozen=True)
class Signature:
    returns: CType
    params: tuple[Decl, ...]


@dataclass
class Header:
    structs: dict[str, tuple[Decl, ...]] = field(default_factory=dict)  # name: fields in order
    opaque: set[str] = field(default_factory=set)                       # declared, never defined
    enums: dict[str, tuple[str, ...]] = field(default_factory=dict)     # type name: enumerators
    callbacks: dict[str, Signature] = field(default_factory=dict)       # function pointer typedefs
    functions: dict[str, Signature] = field(default_factory=dict)
    defines: dict[str, str] = field(default_factory=dict)               # object-like GROVE_ macros: body


def compiler() -> list[str]:
    """The C compiler command (``$GROVE_CC``, else ``cc``)."""
    return shlex.split(os.environ.get("GROVE_CC") or "cc")


def _own_lines(preprocessed: str, header: Path) -> str:
    """The preprocessor's output lines that came from header itself."""
    keep, out = False, []
    for line in preprocessed.splitlines():
        marker = re.match(r'# \d+ "([^"]*)"', line)
        if marker:
            keep = Path(marker.group(1)).name == header.name
        elif keep:
            out.append(line)
    return "\n".join(out)


def _top_level(text: str) -> list[str]:
    """Declarations split at the semicolons outside braces and parentheses."""
    decls, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "({":
            depth += 1
        elif ch in ")}":
            depth -= 1
        elif ch == ";" and depth == 0:
            decls.append(" ".join(text[start:i].split()))
            start = i + 1
    if text[start:].strip():
        raise ValueError(f"grove.h: unterminated declaration {text[start:].strip()[:80]!r}")
    return [d for d in decls if d]


def _declarator(text: str, base: str) -> Decl:
    """``**name[3]`` (the part after the base type) as a Decl."""
    m = re.fullmatch(r"((?:\*|\s|const|volatile|restrict)*)\s*(\w*)\s*((?:\[[^\]]*\]\s*)*)", text.strip())
    if not m:
        raise ValueError(f"grove.h: cannot read the declarator {text!r} (base type {base})")
    arrays = tuple(int(n, 0) for n in re.findall(r"\[\s*([^\]]*?)\s*\]", m.group(3)))
    return Decl(m.group(2), CType(base, m.group(1).count("*"), arrays))


def _split_base(text: str) -> tuple[str, str]:
    """``const double *x`` as (``double``, ``*x``): the base type is the
    first word that is not a qualifier, with the words that continue it
    (``unsigned long``)."""
    words = [w for w in re.split(r"(\w+)", text) if w.strip()]
    i = next((i for i, w in enumerate(words) if w not in QUALIFIERS), len(words))
    if i == len(words) or not re.fullmatch(r"\w+", words[i]):
        raise ValueError(f"grove.h: no type in {text!r}")
    j = i + 1
    while j < len(words) and words[j - 1] in MODIFIERS and words[j] in MODIFIERS | {"int", "char"}:
        j += 1
    return " ".join(words[i:j]), " ".join(words[j:])


def _params(text: str) -> tuple[Decl, ...]:
    text = text.strip()
    if text in ("", "void"):
        return ()
    out = []
    for p in text.split(","):
        base, rest = _split_base(p)
        out.append(_declarator(rest, base))
    return tuple(out)


def _members(body: str, struct: str) -> tuple[Decl, ...]:
    fields = []
    for member in _top_level(body):
        base, rest = _split_base(member)
        for d in rest.split(","):
            decl = _declarator(d, base)
            if not decl.name:
                raise ValueError(f"grove.h: {struct}: unnamed member in {member!r}")
            fields.append(decl)
    return tuple(fields)


def parse(path: Path) -> Header:
    """The declarations of the header at path."""
    pre = subprocess.run([*compiler(), "-std=c11", "-E", str(path)], check=True, capture_output=True,
                         text=True).stdout
    h = Header()
    for decl in _top_level(_own_lines(pre, path)):
        if m := re.fullmatch(r"typedef struct (\w+) \{(.*)\} (\w+)", decl):
            h.structs[m.group(3)] = _members(m.group(2), m.group(3))
        elif m := re.fullmatch(r"typedef struct (\w+) (\w+)", decl):
            h.opaque.add(m.group(2))
        elif m := re.fullmatch(r"typedef enum (\w+) \{(.*)\} (\w+)", decl):
            h.enums[m.group(3)] = tuple(e.split("=")[0].strip() for e in m.group(2).split(",") if e.strip())
        elif m := re.fullmatch(r"typedef (.+?)\(\s*\*\s*(\w+)\s*\)\s*\((.*)\)", decl):
            base, rest = _split_base(m.group(1))
            h.callbacks[m.group(2)] = Signature(_declarator(rest, base).type, _params(m.group(3)))
        elif m := re.fullmatch(r"(.+?)\b(\w+)\s*\((.*)\)", decl):
            base, rest = _split_base(m.group(1))
            h.functions[m.group(2)] = Signature(_declarator(rest, base).type, _params(m.group(3)))
        else:
            raise ValueError(f"grove.h: a declaration this reader does not know: {decl[:100]!r}")
    h.opaque -= set(h.structs)
    macros = subprocess.run([*compiler(), "-std=c11", "-dM", "-E", str(path)], check=True, capture_output=True,
                            text=True).stdout
    for m in re.finditer(r"^#define (GROVE_\w+) (.*)$", macros, re.M):
        h.defines[m.group(1)] = m.group(2).strip()
    return h


# An integer constant expression of literals (what a #define's body must be
# for the layout program to print it).
_INTEGER = re.compile(r"[\s()+\-*/%<>|&^~]*(?:(?:0[xX][0-9a-fA-F]+|\d+)[uUlL]*[\s()+\-*/%<>|&^~]*)+")


def layout(path: Path, header: Header, workdir: Path) -> dict[tuple[str, ...], int]:
    """Numbers the compiler gives for the header: (struct, "sizeof"),
    (struct, "alignof"), (struct, field) offsets, and (name,) for each
    enumerator and integer #define."""
    lines = [f'#include "{path.resolve()}"', "#include <stddef.h>", "#include <stdio.h>", "int main(void) {"]
    for name, fields in header.structs.items():
        lines.append(f'printf("{name} sizeof %zu\\n", sizeof({name}));')
        lines.append(f'printf("{name} alignof %zu\\n", _Alignof({name}));')
        for f in fields:
            lines.append(f'printf("{name} {f.name} %zu\\n", offsetof({name}, {f.name}));')
    constants = [e for values in header.enums.values() for e in values]
    constants += [n for n, body in header.defines.items() if body and _INTEGER.fullmatch(body)]
    for name in constants:
        lines.append(f'printf("{name} %lld\\n", (long long)({name}));')
    lines.append("return 0; }")
    (workdir / "layout.c").write_text("\n".join(lines) + "\n")
    subprocess.run([*compiler(), "-std=c11", "layout.c", "-o", "layout"], cwd=workdir, check=True)
    out = subprocess.run(["./layout"], cwd=workdir, check=True, capture_output=True, text=True).stdout
    return {tuple(line.split()[:-1]): int(line.split()[-1]) for line in out.splitlines()}
