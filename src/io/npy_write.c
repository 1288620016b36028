/* .npy writing: a version 1.0 header in numpy's own layout, then the data
 * as it is in memory, written atomically. */
#include "io_internal.h"

#include <stdio.h>

/* Preamble and header of at most 2 dimensions stay far below 256 bytes, so
 * version 1.0 (header length up to 65535) always suffices. */
enum { HEADER_CAP = 256, ALIGN = 64 };

static const char *descr(grove_dtype dtype)
{
    bool le = grove__host_little_endian();
    switch (dtype) {
    case GROVE_FLOAT32: return le ? "<f4" : ">f4";
    case GROVE_FLOAT64: return le ? "<f8" : ">f8";
    case GROVE_INT32: return le ? "<i4" : ">i4";
    case GROVE_INT64: return le ? "<i8" : ">i8";
    case GROVE_BOOL: return "|b1";
    }
    return NULL;
}

/* Magic, version, length and dict, padded with spaces and ended with '\n'
 * so the data starts at a multiple of 64 bytes. Returns the length. */
static size_t build_header(const grove_array *a, char *buf)
{
    char shape[64];
    if (a->ndim == 1)
        snprintf(shape, sizeof shape, "(%zu,)", a->shape[0]);
    else
        snprintf(shape, sizeof shape, "(%zu, %zu)", a->shape[0], a->shape[1]);
    memcpy(buf, "\x93NUMPY\x01\x00", 8);
    size_t len =
        10 + (size_t)snprintf(buf + 10, HEADER_CAP - 10, "{'descr': '%s', 'fortran_order': False, 'shape': %s, }",
                              descr(a->dtype), shape);
    size_t total = (len + 1 + ALIGN - 1) / ALIGN * ALIGN;
    memset(buf + len, ' ', total - 1 - len);
    buf[total - 1] = '\n';
    size_t header_len = total - 10;
    buf[8] = (char)(header_len & 0xff);
    buf[9] = (char)(header_len >> 8);
    return total;
}

static grove_status check_array(const grove_array *a)
{
    if (!descr(a->dtype)) return grove__fail(GROVE_INVALID_ARGUMENT, "unknown dtype %d", (int)a->dtype);
    if (a->ndim != 1 && a->ndim != 2)
        return grove__fail(GROVE_INVALID_ARGUMENT, "ndim must be 1 or 2, got %zu", a->ndim);
    if (a->ndim == 1 && a->shape[1] != 1)
        return grove__fail(GROVE_INVALID_ARGUMENT, "a 1-D array must have shape[1] == 1, got %zu", a->shape[1]);
    size_t count, bytes;
    if (!grove__mul_size(a->shape[0], a->shape[1], &count) ||
        !grove__mul_size(count, grove_dtype_size(a->dtype), &bytes))
        return grove__fail(GROVE_INVALID_ARGUMENT, "shape (%zu, %zu) overflows the address space", a->shape[0],
                           a->shape[1]);
    if (count > 0 && !a->data) return grove__fail(GROVE_INVALID_ARGUMENT, "data is NULL with %zu elements", count);
    return GROVE_OK;
}

size_t grove_npy_header(grove_dtype dtype, size_t rows, size_t cols, char *buf, size_t cap)
{
    grove_array a = {NULL, dtype, cols ? 2 : 1, {rows, cols ? cols : 1}};
    char header[HEADER_CAP];
    if (!descr(dtype) || !buf) return 0;
    size_t len = build_header(&a, header);
    if (len > cap) return 0;
    memcpy(buf, header, len);
    return len;
}

grove_status grove_npy_write(const char *path, const grove_array *array)
{
    grove__clear_error();
    if (!path || !array) return grove__fail(GROVE_INVALID_ARGUMENT, "npy_write: %s is NULL", path ? "array" : "path");
    grove_status s = check_array(array);
    if (s == GROVE_OK) {
        char header[HEADER_CAP];
        size_t header_len = build_header(array, header);
        size_t bytes = grove_array_count(array) * grove_dtype_size(array->dtype);
        s = grove__file_write_atomic(path, header, header_len, array->data, bytes);
    }
    if (s != GROVE_OK) grove__error_prefix(path);
    return s;
}
