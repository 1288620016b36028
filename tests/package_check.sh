#!/bin/sh
# The release files of `make dist`, installed as users install them, each in
# a fresh venv outside the repository, then tests/package_smoke.py and the
# grove console script in each:
#   - the sdist alone, copied into an empty folder first (it must carry the
#     C sources it builds), with the time pip takes;
#   - the wheel, with no C compiler on PATH.
# Usage: tests/package_check.sh PYTHON (a python3 with venv; run after make dist).
set -eu
cd "$(dirname "$0")/.."
PYTHON=${1:-python3}
root=$(pwd)
version=$(sed -n 's/^#define GROVE_VERSION_STRING "\(.*\)"/\1/p' include/grove.h)
sdist=dist/grove-$version.tar.gz
wheel=$(ls dist/grove-"$version"-py3-none-manylinux_*_x86_64.whl 2>/dev/null | head -n 1)
[ -f "$sdist" ] && [ -n "$wheel" ] || { echo "package_check: run make dist first (no $sdist or wheel in dist/)" >&2; exit 1; }
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT INT TERM

echo "package_check: the sdist alone, from an empty folder"
mkdir "$stage/empty"
cp "$sdist" "$stage/empty/"
"$PYTHON" -m venv "$stage/from-sdist"
start=$(date +%s)
(cd "$stage/empty" && "$stage/from-sdist/bin/pip" install --quiet --no-cache-dir "grove-$version.tar.gz")
echo "package_check: pip install of the sdist took $(($(date +%s) - start)) s"
(cd "$stage/empty" && PATH="$stage/from-sdist/bin:$PATH" "$stage/from-sdist/bin/python" "$root/tests/package_smoke.py")

echo "package_check: the wheel ($(basename "$wheel"), $(du -k "$wheel" | cut -f1) KiB), no compiler on PATH"
# A PATH of links to every command but the compilers, and a check that none is left.
mkdir "$stage/bin"
for dir in /usr/local/bin /usr/bin /bin; do
    for tool in "$dir"/*; do
        name=$(basename "$tool")
        case "$name" in
            cc | c89 | c99 | gcc* | g++* | clang* | *-gcc* | *-g++* | cpp* | *-cpp* | c++ | tcc | icx | icc) continue ;;
        esac
        [ -e "$stage/bin/$name" ] || ln -s "$tool" "$stage/bin/$name"
    done
done
"$PYTHON" -m venv "$stage/from-wheel"
nocc="$stage/from-wheel/bin:$stage/bin"
if PATH="$nocc" command -v cc gcc clang >/dev/null 2>&1; then
    echo "package_check: a compiler is still on the PATH" >&2; exit 1
fi
cp "$wheel" "$stage/empty/"
(cd "$stage/empty" && PATH="$nocc" pip install --quiet --no-cache-dir "$(basename "$wheel")")
(cd "$stage/empty" && PATH="$nocc" python "$root/tests/package_smoke.py")
