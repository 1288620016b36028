/* grove_points_load: a points file of any supported kind, by extension
 * (or, without one grove knows, a snapshot by its first bytes), checked
 * to be 2-D, d >= 1 and finite. */
#include "io_internal.h"

#include <ctype.h>

typedef enum { KIND_NPY, KIND_TEXT, KIND_RAW, KIND_SNAPSHOT } file_kind;

static bool ends_with(const char *path, const char *ext)
{
    size_t n = strlen(path), m = strlen(ext);
    if (n < m) return false;
    for (size_t i = 0; i < m; i++)
        if (tolower((unsigned char)path[n - m + i]) != ext[i]) return false;
    return true;
}

/* By the suffix; a file without a known one is a Gadget snapshot when its
 * first bytes say so (unless raw dims are given), else raw. */
static file_kind kind_of(const char *path, size_t raw_dims)
{
    if (ends_with(path, ".npy")) return KIND_NPY;
    if (ends_with(path, ".csv") || ends_with(path, ".txt") || ends_with(path, ".tsv")) return KIND_TEXT;
    if (ends_with(path, ".hdf5") || ends_with(path, ".h5") || ends_with(path, ".hdf")) return KIND_SNAPSHOT;
    grove_gadget_format format = GROVE_GADGET_NONE;
    if (raw_dims == 0 && grove_gadget_probe(path, &format) == GROVE_OK && format != GROVE_GADGET_NONE)
        return KIND_SNAPSHOT;
    grove__clear_error();
    return KIND_RAW;
}

/* The positions of a snapshot's chosen types: its position array becomes
 * the points (no copy). */
static grove_status read_snapshot(const char *path, unsigned types, grove_array *out)
{
    grove_gadget_params params;
    grove_gadget_params_init(&params);
    params.types = types;
    params.fields = GROVE_GADGET_POS;
    grove_gadget snap;
    grove_status s = grove_gadget_read(path, &params, &snap);
    if (s != GROVE_OK) return s;
    out->data = snap.pos;
    out->dtype = snap.dtype;
    out->ndim = 2;
    out->shape[0] = snap.n;
    out->shape[1] = 3;
    return GROVE_OK;
}

/* Integer .npy data as float64 (int64 beyond 2^53 rounds to nearest). */
static grove_status ints_to_float64(grove_array *a)
{
    size_t count = grove_array_count(a);
    double *values = grove__calloc(count, sizeof(double), "float64 points");
    if (!values) return GROVE_OUT_OF_MEMORY;
    for (size_t i = 0; i < count; i++)
        values[i] =
            a->dtype == GROVE_INT32 ? (double)((const int32_t *)a->data)[i] : (double)((const int64_t *)a->data)[i];
    grove__free(a->data);
    a->data = values;
    a->dtype = GROVE_FLOAT64;
    return GROVE_OK;
}

/* Shape and values of a freshly read array; errors without the path. */
static grove_status check_points(grove_array *a, file_kind kind)
{
    if (a->dtype == GROVE_BOOL) return grove__fail(GROVE_UNSUPPORTED, "a bool array is not points");
    if (a->dtype == GROVE_INT32 || a->dtype == GROVE_INT64) {
        grove_status s = ints_to_float64(a);
        if (s != GROVE_OK) return s;
    }
    if (kind == KIND_TEXT && a->shape[0] == 0) return grove__fail(GROVE_PARSE_ERROR, "no data rows");
    a->ndim = 2; /* a 1-D array is n points with d = 1; shape[1] is already 1 */
    if (a->shape[1] == 0)
        return grove__fail(GROVE_INVALID_ARGUMENT, "points need at least 1 column, shape is (%zu, 0)", a->shape[0]);
    grove_points p;
    grove_status s = grove_array_points(a, &p);
    if (s == GROVE_OK) s = grove_points_validate(p);
    return s;
}

grove_status grove_points_load(const char *path, size_t raw_dims, grove_dtype raw_dtype, grove_array *out)
{
    return grove_points_load_info(path, raw_dims, raw_dtype, out, NULL);
}

grove_status grove_points_load_info(const char *path, size_t raw_dims, grove_dtype raw_dtype, grove_array *out,
                                    grove_load_info *info)
{
    return grove_points_load_types(path, raw_dims, raw_dtype, 0, out, info);
}

grove_status grove_points_load_types(const char *path, size_t raw_dims, grove_dtype raw_dtype, unsigned types,
                                     grove_array *out, grove_load_info *info)
{
    grove__clear_error();
    if (info) memset(info, 0, sizeof *info);
    if (!out) return grove__fail(GROVE_INVALID_ARGUMENT, "points_load: out is NULL");
    memset(out, 0, sizeof *out);
    if (!path) return grove__fail(GROVE_INVALID_ARGUMENT, "points_load: path is NULL");
    if (types >> GROVE_GADGET_TYPES)
        return grove__fail(GROVE_INVALID_ARGUMENT, "points_load: types 0x%x names a type beyond %d", types,
                           GROVE_GADGET_TYPES - 1);
    file_kind kind = kind_of(path, raw_dims);
    grove_status s;
    switch (kind) {
    case KIND_NPY: s = grove_npy_read(path, out); break;
    case KIND_SNAPSHOT: s = read_snapshot(path, types, out); break;
    case KIND_TEXT: s = grove__csv_read_file(path, out, info); break;
    case KIND_RAW:
        if (raw_dims == 0)
            return grove__fail(GROVE_INVALID_ARGUMENT,
                               "%.200s: unknown extension; raw files need --dims (known: .npy, .csv, .txt, .tsv, "
                               ".hdf5 and Gadget snapshots)",
                               path);
        s = grove_raw_read(path, raw_dtype, raw_dims, out);
        break;
    }
    /* The readers' own errors already name the path. */
    if (s != GROVE_OK) return s;
    if ((s = check_points(out, kind)) != GROVE_OK) {
        grove_array_free(out);
        grove__error_prefix(path);
        if (info) memset(info, 0, sizeof *info);
    }
    return s;
}
