/* .npy reading, from memory or from a file, into a C-ordered native array. */
#include "io_internal.h"

#include <unistd.h>

grove_status grove__npy_convert(const grove__npy_header *h, const void *src, void *dst)
{
    size_t width = grove_dtype_size(h->dtype), rows = h->shape[0], cols = h->shape[1];
    if (h->fortran_order) {
        /* Column-major on disk: element (i, j) is stored at j * rows + i. */
        const unsigned char *in = src;
        unsigned char *out = dst;
        for (size_t j = 0; j < cols; j++)
            for (size_t i = 0; i < rows; i++) memcpy(out + (i * cols + j) * width, in + (j * rows + i) * width, width);
    } else if (src != dst) {
        memcpy(dst, src, h->data_bytes);
    }
    size_t count = rows * cols;
    if (h->swap) grove__byteswap(dst, count, width);
    if (h->dtype == GROVE_BOOL) {
        const unsigned char *b = dst;
        for (size_t k = 0; k < count; k++) {
            if (b[k] <= 1) continue;
            if (h->ndim == 1) return grove__fail(GROVE_PARSE_ERROR, "bool element %zu is %u, not 0 or 1", k, b[k]);
            return grove__fail(GROVE_PARSE_ERROR, "bool element at row %zu, column %zu is %u, not 0 or 1", k / cols,
                               k % cols, b[k]);
        }
    }
    return GROVE_OK;
}

static void fill_array(const grove__npy_header *h, void *data, grove_array *out)
{
    out->data = data;
    out->dtype = h->dtype;
    out->ndim = h->ndim;
    out->shape[0] = h->shape[0];
    out->shape[1] = h->shape[1];
}

static grove_status read_mem(const unsigned char *buf, size_t len, grove_array *out)
{
    size_t offset;
    grove__npy_header h;
    grove_status s = grove__npy_data_offset(buf, len, len, &offset);
    if (s == GROVE_OK) s = grove__npy_parse_header(buf, offset, len, &h);
    if (s != GROVE_OK) return s;
    void *data = grove__malloc(h.data_bytes, "npy array");
    if (!data) return GROVE_OUT_OF_MEMORY;
    if ((s = grove__npy_convert(&h, buf + offset, data)) != GROVE_OK) {
        grove__free(data);
        return s;
    }
    fill_array(&h, data, out);
    return GROVE_OK;
}

grove_status grove_npy_read_mem(const void *buf, size_t len, const char *name, grove_array *out)
{
    grove__clear_error();
    if (!out) return grove__fail(GROVE_INVALID_ARGUMENT, "npy_read_mem: out is NULL");
    memset(out, 0, sizeof *out);
    if (!buf && len > 0) return grove__fail(GROVE_INVALID_ARGUMENT, "npy_read_mem: buf is NULL with len %zu", len);
    grove_status s = read_mem(buf ? buf : "", len, out);
    if (s != GROVE_OK) grove__error_prefix(name ? name : "npy buffer");
    return s;
}

/* Read the header, check the file size against it, then read the data
 * straight into the array (through one extra buffer for Fortran order). */
static grove_status read_file(int fd, size_t size, grove_array *out)
{
    unsigned char preamble[GROVE__NPY_PREAMBLE];
    size_t avail = size < sizeof preamble ? size : sizeof preamble, offset;
    grove_status s = grove__file_read_at(fd, preamble, avail, 0);
    if (s == GROVE_OK) s = grove__npy_data_offset(preamble, avail, size, &offset);
    if (s != GROVE_OK) return s;
    unsigned char *header = grove__malloc(offset, "npy header");
    if (!header) return GROVE_OUT_OF_MEMORY;
    grove__npy_header h;
    s = grove__file_read_at(fd, header, offset, 0);
    if (s == GROVE_OK) s = grove__npy_parse_header(header, offset, size, &h);
    grove__free(header);
    if (s != GROVE_OK) return s;

    void *data = grove__malloc(h.data_bytes, "npy array");
    void *stored = data && h.fortran_order ? grove__malloc(h.data_bytes, "npy Fortran-order data") : data;
    if (!data || !stored) s = GROVE_OUT_OF_MEMORY;
    if (s == GROVE_OK) s = grove__file_read_at(fd, stored, h.data_bytes, offset);
    if (s == GROVE_OK) s = grove__npy_convert(&h, stored, data);
    if (stored != data) grove__free(stored);
    if (s != GROVE_OK) {
        grove__free(data);
        return s;
    }
    fill_array(&h, data, out);
    return GROVE_OK;
}

grove_status grove_npy_read(const char *path, grove_array *out)
{
    grove__clear_error();
    if (!out) return grove__fail(GROVE_INVALID_ARGUMENT, "npy_read: out is NULL");
    memset(out, 0, sizeof *out);
    if (!path) return grove__fail(GROVE_INVALID_ARGUMENT, "npy_read: path is NULL");
    int fd;
    size_t size;
    grove_status s = grove__file_open(path, &fd, &size);
    if (s == GROVE_OK) {
        s = read_file(fd, size, out);
        close(fd);
    }
    if (s != GROVE_OK) grove__error_prefix(path);
    return s;
}
