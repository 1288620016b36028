/* Helpers shared by the file readers and writers in src/io; never installed.
 * Errors set here carry no file name: each public entry point prefixes the
 * path (or buffer name) once, so messages read "data.npy: ...". */
#ifndef GROVE_IO_INTERNAL_H
#define GROVE_IO_INTERNAL_H

#include "internal.h"

#include <string.h>

/* True on a little-endian host. Checked at run time so no platform macros
 * are needed; compilers fold it to a constant. */
static inline bool grove__host_little_endian(void)
{
    const uint16_t one = 1;
    unsigned char first;
    memcpy(&first, &one, 1);
    return first == 1;
}

/* Reverse the bytes of each of `count` elements of `width` bytes in place. */
void grove__byteswap(void *data, size_t count, size_t width);

/* A value stored at p (any alignment), byte-swapped when `swap`: for
 * binary formats of either byte order (tipsy, GADGET-2). */
static inline uint32_t grove__load_u32(const unsigned char *p, bool swap)
{
    uint32_t v;
    memcpy(&v, p, 4);
    if (swap) grove__byteswap(&v, 1, 4);
    return v;
}

static inline int32_t grove__load_i32(const unsigned char *p, bool swap)
{
    uint32_t u = grove__load_u32(p, swap);
    int32_t v;
    memcpy(&v, &u, 4);
    return v;
}

static inline float grove__load_f32(const unsigned char *p, bool swap)
{
    uint32_t u = grove__load_u32(p, swap);
    float v;
    memcpy(&v, &u, 4);
    return v;
}

static inline double grove__load_f64(const unsigned char *p, bool swap)
{
    double v;
    memcpy(&v, p, 8);
    if (swap) grove__byteswap(&v, 1, 8);
    return v;
}

/* Open a regular file for reading and report its size. */
grove_status grove__file_open(const char *path, int *fd, size_t *size);
/* Read exactly n bytes at offset; a short file is an I/O error. */
grove_status grove__file_read_at(int fd, void *dst, size_t n, size_t offset);
/* The whole file in one grove__malloc'd buffer (free with grove__free). */
grove_status grove__file_slurp(const char *path, void **data, size_t *size);

/* grove_csv_read without the argument checks, reporting the header line. */
grove_status grove__csv_read_file(const char *path, grove_array *out, grove_load_info *info);

/* Write head then body to path through a temporary file in the same folder
 * and rename(), so path never holds a partial file; a character device or
 * FIFO at path is written through instead (never replaced), a folder,
 * block device or socket refused. */
grove_status grove__file_write_atomic(const char *path, const void *head, size_t head_len, const void *body,
                                      size_t body_len);

/* "PATH.tmp.PID.N" (grove__malloc'd; NULL when out of memory), PATH's
 * last part cut where the whole name would be longer than the folder
 * allows, so that every name the file system takes has a temporary: where
 * writers put a file before renaming it over PATH. */
char *grove__temp_name(const char *path);

/* A parsed .npy header. */
typedef struct grove__npy_header {
    grove_dtype dtype;
    bool swap;          /* stored byte order differs from the host's */
    bool fortran_order; /* column-major on disk */
    size_t ndim;        /* 1 or 2 */
    size_t shape[2];    /* shape[1] == 1 when ndim is 1 */
    size_t data_bytes;  /* element count * element size, overflow-checked */
} grove__npy_header;

/* Bytes that always suffice to find the header length (magic, version and
 * the 2- or 4-byte length field). */
enum { GROVE__NPY_PREAMBLE = 12 };

/* From the first `avail` bytes of a file of `file_size` bytes, find where
 * the data starts; fails unless the whole header lies inside the file. */
grove_status grove__npy_data_offset(const unsigned char *buf, size_t avail, size_t file_size, size_t *data_offset);
/* Parse the header dict in buf[0, data_offset) (preamble included) and
 * check that exactly data_bytes follow it in a file of file_size bytes. */
grove_status grove__npy_parse_header(const unsigned char *buf, size_t data_offset, size_t file_size,
                                     grove__npy_header *header);
/* Turn stored data into C-ordered native data in dst. src and dst may be the
 * same buffer except for 2-D Fortran order, which needs a separate dst.
 * Fails if a bool element is not 0 or 1. */
grove_status grove__npy_convert(const grove__npy_header *header, const void *src, void *dst);

#endif
