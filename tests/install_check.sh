#!/bin/sh
# `make install` into a staging prefix, then the README's C example built
# with the README's own command line: the program must run from any folder
# with no LD_LIBRARY_PATH, and so must the installed grove command. Run by .ci/run (make install needs the build).
set -eu
cd "$(dirname "$0")/.."
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
make install PREFIX="$stage/usr" >/dev/null
awk '/^```c/ { inside = 1; next } /^```/ { if (inside) exit } inside' README.md > "$stage/example.c"
line=$(grep -o 'cc example\.c \$(pkg-config [^)]*)' README.md | head -n 1)
[ -n "$line" ] || { echo "install_check: no 'cc example.c \$(pkg-config ...)' line in README.md" >&2; exit 1; }
echo "install_check: $line"
cd "$stage"
PKG_CONFIG_PATH="$stage/usr/lib/pkgconfig" sh -c "$line -o example"
env -u LD_LIBRARY_PATH ./example
env -u LD_LIBRARY_PATH "$stage/usr/bin/grove" info --quiet
