#!/bin/sh
# The README's install lines, run as a user runs them: the C API section's
# `make install PREFIX=...` block from the source tree, then its block that
# builds and runs the C example with pkg-config (and statically), in a
# scratch folder holding example.c. HOME is a fresh folder (the README
# installs under $HOME/.local) and neither PKG_CONFIG_PATH nor
# LD_LIBRARY_PATH is set, so what the blocks need they must say. Then the
# installed grove command, also without LD_LIBRARY_PATH (and its HDF5
# part, a library it loads from ../lib, where built). Run by .ci/run
# (make install needs the build).
set -eu
cd "$(dirname "$0")/.."
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT

# The ```sh block of README.md's "## C API" section that contains $1.
readme_block() {
    awk -v want="$1" '
        /^## / { section = $0 }
        section == "## C API" && /^```sh/ { inside = 1; block = ""; next }
        inside && /^```/ { inside = 0; if (index(block, want)) { printf "%s", block; exit } next }
        inside { block = block $0 "\n" }' README.md
}
install=$(readme_block 'make install PREFIX=')
build=$(readme_block 'pkg-config --cflags --libs grove')
[ -n "$install" ] && [ -n "$build" ] ||
    { echo "install_check: README.md's C API section lacks its make install or its pkg-config block" >&2; exit 1; }
awk '/^```c/ { inside = 1; next } /^```/ { if (inside) exit } inside' README.md > "$stage/example.c"

# A user's shell: a fresh HOME, no search paths set.
as_user() { env -u PKG_CONFIG_PATH -u LD_LIBRARY_PATH HOME="$stage/home" sh -eux -c "$1"; }
mkdir "$stage/home"
echo "install_check: the README's install block, from the source tree"
as_user "$install" >/dev/null
echo "install_check: the README's build block, where example.c is"
(cd "$stage" && as_user "$build")
echo "install_check: the installed grove command"
grove_installed() { env -u LD_LIBRARY_PATH "$stage/home/.local/bin/grove" "$@"; }
grove_installed info --quiet
# Its HDF5 part (libgrove_hdf5.so, in ../lib from the command) where built.
if grove_installed info | grep -q '^hdf5: yes'; then
    echo "install_check: the installed grove command writes and reads HDF5"
    grove_installed nbody --n 10 --steps 1 --format hdf5 --out "$stage/h5" --quiet
    # as a user runs it: through PATH, from another folder
    (cd "$stage" && env -u LD_LIBRARY_PATH PATH="$stage/home/.local/bin:$PATH" \
        grove knn "$stage/h5/snap_000001.hdf5" -k 2 --indices "$stage/h5/i.npy" --quiet)
fi
grep -qx '# SPDX-License-Identifier: BSD-3-Clause' "$stage/home/.local/lib/pkgconfig/grove.pc" ||
    { echo "install_check: the installed grove.pc does not name its licence" >&2; exit 1; }
