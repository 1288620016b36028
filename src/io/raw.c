/* Raw little-endian float32/float64 files, row-major with a given width. */
#include "io_internal.h"

grove_status grove_raw_read(const char *path, grove_dtype dtype, size_t dims, grove_array *out)
{
    grove__clear_error();
    if (!out) return grove__fail(GROVE_INVALID_ARGUMENT, "raw_read: out is NULL");
    memset(out, 0, sizeof *out);
    if (!path) return grove__fail(GROVE_INVALID_ARGUMENT, "raw_read: path is NULL");
    if (dtype != GROVE_FLOAT32 && dtype != GROVE_FLOAT64)
        return grove__fail(GROVE_INVALID_ARGUMENT, "%.200s: raw dtype must be float32 or float64, got %s", path,
                           grove_dtype_name(dtype));
    if (dims == 0) return grove__fail(GROVE_INVALID_ARGUMENT, "%.200s: raw files need dims >= 1", path);
    size_t width = grove_dtype_size(dtype), row_bytes;
    if (!grove__mul_size(dims, width, &row_bytes))
        return grove__fail(GROVE_INVALID_ARGUMENT, "%.200s: dims = %zu is too large", path, dims);
    void *data;
    size_t size;
    grove_status s = grove__file_slurp(path, &data, &size);
    if (s != GROVE_OK) {
        grove__error_prefix(path);
        return s;
    }
    if (size % row_bytes != 0) {
        grove__free(data);
        return grove__fail(
            GROVE_PARSE_ERROR,
            "%.200s: file size %zu bytes is not a multiple of the row size %zu bytes (%zu dims x %zu-byte %s)", path,
            size, row_bytes, dims, width, grove_dtype_name(dtype));
    }
    if (!grove__host_little_endian()) grove__byteswap(data, size / width, width);
    /* The file buffer becomes the array: no copy. */
    out->data = data;
    out->dtype = dtype;
    out->ndim = 2;
    out->shape[0] = size / row_bytes;
    out->shape[1] = dims;
    return GROVE_OK;
}
