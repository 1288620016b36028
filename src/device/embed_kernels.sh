#!/bin/sh
# embed_kernels.sh FILE: FILE (kernels/all.h) with its #include "..." lines
# replaced by the files they name (recursively, each time they appear, as
# the kernel templates are included once per type), written as the bytes
# of a C array initializer with a terminating NUL: the OpenCL program
# embedded in libgrove (src/device/opencl_source.c). An initializer, not a
# string literal: ISO C's limit on a literal's length does not apply.
set -e
inline() {
    dir=$(dirname "$1")
    while IFS= read -r line || [ -n "$line" ]; do
        case "$line" in
        '#include "'*'"')
            name=${line#\#include \"}
            (inline "$dir/${name%\"}")
            ;;
        *) printf '%s\n' "$line" ;;
        esac
    done < "$1"
}
inline "$1" | od -An -v -tx1 | sed -e 's/ \([0-9a-f][0-9a-f]\)/0x\1,/g'
echo '0x00'
