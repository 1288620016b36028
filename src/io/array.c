/* grove_array: owned 1-D/2-D arrays and their point views. */
#include "io_internal.h"

grove_status grove_array_create(grove_array *out, grove_dtype dtype, size_t rows, size_t cols)
{
    grove__clear_error();
    if (!out) return grove__fail(GROVE_INVALID_ARGUMENT, "array_create: out is NULL");
    memset(out, 0, sizeof *out);
    size_t width = grove_dtype_size(dtype);
    if (width == 0) return grove__fail(GROVE_INVALID_ARGUMENT, "array_create: unknown dtype %d", (int)dtype);
    size_t ncols = cols ? cols : 1, count, bytes;
    if (!grove__mul_size(rows, ncols, &count) || !grove__mul_size(count, width, &bytes))
        return grove__fail(GROVE_TOO_LARGE, "array_create: %zu x %zu %s elements overflow the address space", rows,
                           ncols, grove_dtype_name(dtype));
    void *data = grove__calloc(count, width, "array");
    if (!data) return GROVE_OUT_OF_MEMORY;
    out->data = data;
    out->dtype = dtype;
    out->ndim = cols ? 2 : 1;
    out->shape[0] = rows;
    out->shape[1] = ncols;
    return GROVE_OK;
}

void grove_array_free(grove_array *array)
{
    if (!array) return;
    grove__free(array->data);
    memset(array, 0, sizeof *array);
}

size_t grove_array_count(const grove_array *array)
{
    if (!array) return 0;
    return array->ndim == 1 ? array->shape[0] : array->shape[0] * array->shape[1];
}

grove_status grove_array_points(const grove_array *array, grove_points *out)
{
    grove__clear_error();
    if (!array || !out) return grove__fail(GROVE_INVALID_ARGUMENT, "array_points: %s is NULL", array ? "out" : "array");
    if (array->dtype != GROVE_FLOAT32 && array->dtype != GROVE_FLOAT64)
        return grove__fail(GROVE_INVALID_ARGUMENT,
                           "array_points: dtype %s is not a point type; points must be float32 or float64",
                           grove_dtype_name(array->dtype));
    if (array->ndim != 1 && array->ndim != 2)
        return grove__fail(GROVE_INVALID_ARGUMENT, "array_points: ndim must be 1 or 2, got %zu", array->ndim);
    out->data = array->data;
    out->n = array->shape[0];
    out->d = array->ndim == 1 ? 1 : array->shape[1];
    out->dtype = array->dtype;
    out->stride = 0;
    return GROVE_OK;
}
