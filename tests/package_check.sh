#!/bin/sh
# The release files of `make dist`, installed as users install them, each in
# a fresh venv outside the repository, then tests/package_smoke.py and the
# grove console script in each:
#   - the sdist alone, copied into an empty folder first (it must carry the
#     C sources it builds), with the time pip takes;
#   - the wheel, with no C compiler on PATH;
# and the sdist once more on a PATH without make, which must stop at once
# saying so. Each carries the licence (LICENSE, BSD-3-Clause in its metadata).
# Usage: tests/package_check.sh PYTHON (a python3 with venv; run after make dist).
set -eu
cd "$(dirname "$0")/.."
PYTHON=${1:-python3}
root=$(pwd)
version=$(sed -n 's/^#define GROVE_VERSION_STRING "\(.*\)"/\1/p' include/grove.h)
# The distribution's name (python/pyproject.toml) as file names spell it.
distribution=$(sed -n 's/^name = "\(.*\)"/\1/p' python/pyproject.toml)
stem=$(echo "$distribution" | tr -- '-.' '__')-$version
sdist=dist/$stem.tar.gz
wheel=$(ls dist/"$stem"-py3-none-manylinux_*_x86_64.whl 2>/dev/null | head -n 1)
[ -f "$sdist" ] && [ -n "$wheel" ] || { echo "package_check: run make dist first (no $sdist or wheel in dist/)" >&2; exit 1; }
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT INT TERM

echo "package_check: the sdist alone, from an empty folder"
mkdir "$stage/empty"
cp "$sdist" "$stage/empty/"
"$PYTHON" -m venv "$stage/from-sdist"
start=$(date +%s)
(cd "$stage/empty" && "$stage/from-sdist/bin/pip" install --quiet --no-cache-dir "$stem.tar.gz")
echo "package_check: pip install of the sdist took $(($(date +%s) - start)) s"
(cd "$stage/empty" && PATH="$stage/from-sdist/bin:$PATH" "$stage/from-sdist/bin/python" "$root/tests/package_smoke.py" "$distribution")

echo "package_check: the wheel ($(basename "$wheel"), $(du -k "$wheel" | cut -f1) KiB), no compiler on PATH"
# A folder of links to every command but those matching the patterns given
# (a PATH without them).
path_without() {
    folder=$1
    shift
    mkdir "$folder"
    for dir in /usr/local/bin /usr/bin /bin; do
        for tool in "$dir"/*; do
            name=$(basename "$tool")
            for pattern in "$@"; do
                case "$name" in $pattern) continue 2 ;; esac
            done
            [ -e "$folder/$name" ] || ln -s "$tool" "$folder/$name"
        done
    done
}
path_without "$stage/bin" cc c89 c99 'gcc*' 'g++*' 'clang*' '*-gcc*' '*-g++*' 'cpp*' '*-cpp*' c++ tcc icx icc
"$PYTHON" -m venv "$stage/from-wheel"
nocc="$stage/from-wheel/bin:$stage/bin"
for compiler in cc gcc clang; do  # (dash's command -v looks up its first name only)
    if PATH="$nocc" command -v "$compiler" >/dev/null 2>&1; then
        echo "package_check: a compiler ($compiler) is still on the PATH" >&2; exit 1
    fi
done
cp "$wheel" "$stage/empty/"
(cd "$stage/empty" && PATH="$nocc" pip install --quiet --no-cache-dir "$(basename "$wheel")")
(cd "$stage/empty" && PATH="$nocc" python "$root/tests/package_smoke.py" "$distribution")

echo "package_check: the sdist on a PATH without make: pip stops, saying what is missing"
path_without "$stage/bin-nomake" make 'gmake*'
"$PYTHON" -m venv "$stage/no-make"
if PATH="$stage/no-make/bin:$stage/bin-nomake" command -v make >/dev/null 2>&1; then
    echo "package_check: make is still on the PATH" >&2; exit 1
fi
if (cd "$stage/empty" && PATH="$stage/no-make/bin:$stage/bin-nomake" pip install --no-cache-dir "$stem.tar.gz") \
    > "$stage/no-make.log" 2>&1; then
    echo "package_check: the sdist installed without make" >&2; exit 1
fi
grep "needs make and a C compiler with OpenMP, but 'make' is not on PATH" "$stage/no-make.log" ||
    { cat "$stage/no-make.log" >&2; echo "package_check: pip's output does not say that make is missing" >&2; exit 1; }
