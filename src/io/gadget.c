/* Gadget-layout snapshots (grove_gadget_read): which file and format a
 * path names, the files of a snapshot split in several, the counts of
 * every file checked against the header's totals, the output allocated
 * once, and each file's particles read into place by its format's reader
 * (gadget2.c, hdf5_read.c). */
#include "gadget_internal.h"

#include <ctype.h>
#include <float.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

/* A snapshot spans at most this many files (GADGET's NumFilesPerSnapshot
 * is an int; this bounds the list of names). */
enum { MAX_FILES = 1 << 16 };

void grove_gadget_params_init(grove_gadget_params *params)
{
    if (!params) return;
    params->types = 0;
    params->fields = GROVE_GADGET_POS | GROVE_GADGET_VEL | GROVE_GADGET_MASS | GROVE_GADGET_IDS;
    params->dtype = 0;
}

void grove_gadget_free(grove_gadget *snap)
{
    if (!snap) return;
    grove__free(snap->pos);
    grove__free(snap->vel);
    grove__free(snap->mass);
    grove__free(snap->ids);
    memset(snap, 0, sizeof *snap);
}

unsigned grove__gadget_types(const grove_gadget_params *params, int types)
{
    unsigned all = types >= 32 ? ~0u : (1u << types) - 1;
    return params->types ? params->types & all : all;
}

/* The file's suffix when it is one of HDF5's, else "". */
static const char *hdf5_suffix(const char *path)
{
    static const char *const suffixes[] = {".hdf5", ".h5", ".hdf"};
    size_t n = strlen(path);
    for (size_t k = 0; k < sizeof suffixes / sizeof suffixes[0]; k++) {
        size_t m = strlen(suffixes[k]);
        bool same = n > m;
        for (size_t i = 0; same && i < m; i++) same = tolower((unsigned char)path[n - m + i]) == suffixes[k][i];
        if (same) return path + n - m;
    }
    return path + n;
}

static bool exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* path when it exists, else the first piece of the snapshot it names:
 * BASE.0 for BASE, BASE.0.hdf5 for BASE.hdf5 (malloc'd; NULL when out of
 * memory). */
static char *first_file(const char *path)
{
    const char *suffix = hdf5_suffix(path);
    size_t stem = (size_t)(suffix - path), cap = strlen(path) + 3;
    char *name = grove__malloc(cap, "snapshot file name");
    if (!name) return NULL;
    if (exists(path)) snprintf(name, cap, "%s", path);
    else snprintf(name, cap, "%.*s.0%s", (int)stem, path, suffix);
    if (!exists(name)) snprintf(name, cap, "%s", path);
    return name;
}

static grove_gadget_format format_of(const char *path, const unsigned char *head, size_t len)
{
    static const unsigned char signature[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
    if (*hdf5_suffix(path) || (len >= 8 && memcmp(head, signature, 8) == 0)) return GROVE_GADGET_HDF5;
    return grove__gadget2_sniff(head, len);
}

/* The format of an existing file: its suffix, or its first bytes. */
static grove_status probe_file(const char *path, grove_gadget_format *format)
{
    int fd;
    size_t size;
    grove_status s = grove__file_open(path, &fd, &size);
    if (s != GROVE_OK) return s;
    unsigned char head[GROVE__GADGET_SNIFF_BYTES];
    size_t len = size < sizeof head ? size : sizeof head;
    s = grove__file_read_at(fd, head, len, 0);
    close(fd);
    if (s == GROVE_OK) *format = format_of(path, head, len);
    return s;
}

grove_status grove_gadget_probe(const char *path, grove_gadget_format *format)
{
    grove__clear_error();
    if (!path || !format) return grove__fail(GROVE_INVALID_ARGUMENT, "gadget_probe: NULL argument");
    *format = GROVE_GADGET_NONE;
    char *name = first_file(path);
    if (!name) return GROVE_OUT_OF_MEMORY;
    grove_status s = probe_file(name, format);
    if (s != GROVE_OK) grove__error_prefix(name);
    grove__free(name);
    return s;
}

/* The names of a snapshot's files: from one of them, PREFIX.K[SUFFIX]. */
typedef struct pieces {
    char *prefix;
    const char *suffix;
    int files;
} pieces;

static grove_status split_name(const char *name, int files, pieces *p)
{
    const char *suffix = hdf5_suffix(name), *dot = suffix;
    while (dot > name && isdigit((unsigned char)dot[-1])) dot--;
    if (files > 1 && (dot == suffix || dot == name || dot[-1] != '.'))
        return grove__fail(GROVE_PARSE_ERROR,
                           "the header says the snapshot spans %d files, but the name is not BASE.N or BASE.N.hdf5, "
                           "so the others cannot be found",
                           files);
    size_t stem = files > 1 ? (size_t)(dot - 1 - name) : strlen(name);
    p->prefix = grove__malloc(stem + 1, "snapshot file name");
    if (!p->prefix) return GROVE_OUT_OF_MEMORY;
    memcpy(p->prefix, name, stem);
    p->prefix[stem] = '\0';
    p->suffix = suffix;
    p->files = files;
    return GROVE_OK;
}

/* The name of file i (malloc'd), or the one name of a single file. */
static char *piece_name(const pieces *p, int i)
{
    size_t cap = strlen(p->prefix) + strlen(p->suffix) + 16;
    char *name = grove__malloc(cap, "snapshot file name");
    if (!name) return NULL;
    if (p->files > 1) snprintf(name, cap, "%s.%d%s", p->prefix, i, p->suffix);
    else snprintf(name, cap, "%s", p->prefix);
    return name;
}

static grove_status scan(grove_gadget_format format, const char *name, const grove_gadget_params *params,
                         grove__gadget_file *file)
{
    memset(file, 0, sizeof *file);
    if (format == GROVE_GADGET_HDF5) return grove__hdf5_scan(name, params, file);
    if (format == GROVE_GADGET_NONE)
        return grove__fail(GROVE_PARSE_ERROR, "not a Gadget snapshot: neither HDF5 nor a Gadget-2 binary file "
                                              "(whose first record is a 256-byte header or a block name)");
    return grove__gadget2_scan(name, params, file);
}

/* File i agrees with file 0 on what describes the whole snapshot. */
static grove_status agree(const grove__gadget_file *first, const grove__gadget_file *file)
{
    const grove_gadget_header *a = &first->header, *b = &file->header;
    if (a->format != b->format || a->types != b->types || a->files != b->files)
        return grove__fail(GROVE_PARSE_ERROR, "its header disagrees with the first file's (format, particle types "
                                              "or number of files)");
    for (int t = 0; t < a->types; t++)
        if (a->total[t] != b->total[t])
            return grove__fail(GROVE_PARSE_ERROR,
                               "its header counts %llu particles of type %d in the snapshot, the first file's %llu",
                               (unsigned long long)b->total[t], t, (unsigned long long)a->total[t]);
    return GROVE_OK;
}

/* The files' counts add up to the header's totals. */
static grove_status check_totals(const grove__gadget_file *files, int nfiles, const char *name)
{
    const grove_gadget_header *h = &files[0].header;
    for (int t = 0; t < h->types; t++) {
        uint64_t sum = 0;
        for (int i = 0; i < nfiles; i++) {
            if (files[i].count[t] > UINT64_MAX - sum)
                return grove__fail(GROVE_PARSE_ERROR, "%.200s: the files' counts of type %d overflow", name, t);
            sum += files[i].count[t];
        }
        if (sum != h->total[t])
            return grove__fail(GROVE_PARSE_ERROR,
                               "%.200s: the header's NumPart_Total says %llu particles of type %d, the file%s hold%s "
                               "%llu (NumPart_ThisFile)",
                               name, (unsigned long long)h->total[t], t, nfiles > 1 ? "s" : "", nfiles > 1 ? "" : "s",
                               (unsigned long long)sum);
    }
    return GROVE_OK;
}

static grove_dtype output_dtype(const grove_gadget_params *params, const grove__gadget_file *files, int nfiles)
{
    if (params->dtype) return params->dtype;
    int width = 0;
    for (int i = 0; i < nfiles; i++) width = files[i].width > width ? files[i].width : width;
    return width == 4 ? GROVE_FLOAT32 : GROVE_FLOAT64;
}

static void *alloc_rows(size_t n, size_t row_bytes, bool want, const char *what, grove_status *s)
{
    if (!want || *s != GROVE_OK) return NULL;
    size_t bytes;
    if (!grove__mul_size(n ? n : 1, row_bytes, &bytes)) {
        *s = grove__fail(GROVE_TOO_LARGE, "%zu particles' %s overflow the address space", n, what);
        return NULL;
    }
    /* Fresh memory the reader touches all over (huge pages with
     * GROVE_HUGE_PAGES=1: src/core/alloc.c). */
    void *p = grove__malloc_huge(bytes, what);
    if (!p) *s = GROVE_OUT_OF_MEMORY;
    return p;
}

grove_status grove__gadget_alloc(grove_gadget *out, const grove_gadget_params *params, const uint64_t *total,
                                 int types, grove_dtype dtype, grove__gadget_dest *dest)
{
    unsigned chosen = grove__gadget_types(params, types);
    size_t n = 0;
    memset(dest, 0, sizeof *dest);
    for (int t = 0; t < types; t++) {
        if (!(chosen >> t & 1u)) continue;
        if (total[t] > SIZE_MAX - n || total[t] > SIZE_MAX / 24)
            return grove__fail(GROVE_TOO_LARGE, "%llu particles of type %d do not fit the address space",
                               (unsigned long long)total[t], t);
        dest->at[t] = n;
        out->count[t] = (size_t)total[t];
        n += (size_t)total[t];
    }
    out->n = n;
    out->dtype = dtype;
    size_t w = grove_dtype_size(dtype);
    unsigned f = params->fields;
    grove_status s = GROVE_OK;
    out->pos = alloc_rows(n, 3 * w, f & GROVE_GADGET_POS, "positions", &s);
    out->vel = alloc_rows(n, 3 * w, f & GROVE_GADGET_VEL, "velocities", &s);
    out->mass = alloc_rows(n, sizeof(double), f & GROVE_GADGET_MASS, "masses", &s);
    out->ids = alloc_rows(n, sizeof(uint64_t), f & GROVE_GADGET_IDS, "particle ids", &s);
    dest->out = out;
    dest->types = chosen;
    dest->fields = f;
    return s;
}

/* Whether count float32 or float64 values are all finite, without a
 * branch per value so that it vectorises. */
static bool all_finite(const void *values, grove_dtype dtype, size_t count)
{
    bool bad = false;
    if (dtype == GROVE_FLOAT32)
        for (size_t i = 0; i < count; i++) bad |= !(fabsf(((const float *)values)[i]) <= FLT_MAX);
    else
        for (size_t i = 0; i < count; i++) bad |= !(fabs(((const double *)values)[i]) <= DBL_MAX);
    return !bad;
}

grove_status grove__gadget_check_vectors(const void *rows, grove_dtype dtype, size_t count, size_t first,
                                         const char *what)
{
    if (all_finite(rows, dtype, 3 * count)) return GROVE_OK;
    for (size_t i = 0; i < 3 * count; i++) {
        double v = dtype == GROVE_FLOAT64 ? ((const double *)rows)[i] : (double)((const float *)rows)[i];
        if (!isfinite(v))
            return grove__fail(GROVE_PARSE_ERROR, "%s: row %zu, column %zu is %g, not finite", what, first + i / 3,
                               i % 3, v);
    }
    return GROVE_OK;
}

grove_status grove__gadget_check_masses(const void *rows, grove_dtype dtype, size_t count, size_t first,
                                        const char *what)
{
    (void)dtype;
    const double *mass = rows;
    bool bad = false;
    for (size_t i = 0; i < count; i++) bad |= !(mass[i] >= 0) | (mass[i] > DBL_MAX);
    for (size_t i = 0; bad && i < count; i++)
        if (!(mass[i] >= 0) || !isfinite(mass[i]))
            return grove__fail(GROVE_PARSE_ERROR, "%s: row %zu is %g, not a finite mass >= 0", what, first + i,
                               mass[i]);
    return GROVE_OK;
}

grove_status grove__gadget_check_params(const grove_gadget_params *p)
{
    if (p->dtype != 0 && p->dtype != GROVE_FLOAT32 && p->dtype != GROVE_FLOAT64)
        return grove__fail(GROVE_INVALID_ARGUMENT, "gadget_read: dtype must be 0, float32 or float64, got %s",
                           grove_dtype_name(p->dtype));
    unsigned known = GROVE_GADGET_POS | GROVE_GADGET_VEL | GROVE_GADGET_MASS | GROVE_GADGET_IDS;
    if (p->fields & ~known)
        return grove__fail(GROVE_INVALID_ARGUMENT, "gadget_read: fields 0x%x has bits beyond POS|VEL|MASS|IDS",
                           p->fields);
    if (p->types >> GROVE_GADGET_TYPES)
        return grove__fail(GROVE_INVALID_ARGUMENT, "gadget_read: types 0x%x names a type beyond %d", p->types,
                           GROVE_GADGET_TYPES - 1);
    return GROVE_OK;
}

/* Scan every file of the snapshot that `name` (a file that exists) starts,
 * check them against each other, then read each into place. */
static grove_status read_snapshot(const char *name, grove_gadget_format format, const grove_gadget_params *params,
                                  grove_gadget *out)
{
    grove__gadget_file first;
    grove_status s = scan(format, name, params, &first);
    if (s != GROVE_OK) {
        grove__error_prefix(name);
        return s;
    }
    int nfiles = first.header.files;
    pieces p = {NULL, "", 0};
    if ((s = split_name(name, nfiles, &p)) != GROVE_OK) {
        grove__error_prefix(name);
        return s;
    }
    grove__gadget_file *files = grove__calloc((size_t)nfiles, sizeof *files, "snapshot files");
    char *piece = NULL;
    if (!files) s = GROVE_OUT_OF_MEMORY;
    for (int i = 0; s == GROVE_OK && i < nfiles; i++) {
        grove__free(piece);
        if (!(piece = piece_name(&p, i))) s = GROVE_OUT_OF_MEMORY;
        else if ((s = scan(format, piece, params, &files[i])) == GROVE_OK) s = agree(&first, &files[i]);
        if (s != GROVE_OK && piece) grove__error_prefix(piece);
    }
    if (s == GROVE_OK) s = check_totals(files, nfiles, name);
    grove__gadget_dest dest;
    if (s == GROVE_OK) {
        out->header = first.header;
        s = grove__gadget_alloc(out, params, first.header.total, first.header.types,
                                output_dtype(params, files, nfiles), &dest);
    }
    for (int i = 0; s == GROVE_OK && i < nfiles; i++) {
        grove__free(piece);
        if (!(piece = piece_name(&p, i))) s = GROVE_OUT_OF_MEMORY;
        else if (format == GROVE_GADGET_HDF5) s = grove__hdf5_read(piece, &files[i], &dest);
        else s = grove__gadget2_read(piece, &files[i], &dest);
        if (s != GROVE_OK && piece) grove__error_prefix(piece);
    }
    grove__free(piece);
    grove__free(files);
    grove__free(p.prefix);
    return s;
}

grove_status grove_gadget_read(const char *path, const grove_gadget_params *params, grove_gadget *out)
{
    grove__clear_error();
    if (!out) return grove__fail(GROVE_INVALID_ARGUMENT, "gadget_read: out is NULL");
    memset(out, 0, sizeof *out);
    if (!path) return grove__fail(GROVE_INVALID_ARGUMENT, "gadget_read: path is NULL");
    grove_gadget_params p;
    grove_gadget_params_init(&p);
    if (params) p = *params;
    grove_status s = grove__gadget_check_params(&p);
    if (s != GROVE_OK) return s;
    char *name = first_file(path);
    if (!name) return GROVE_OUT_OF_MEMORY;
    grove_gadget_format format = GROVE_GADGET_NONE;
    s = probe_file(name, &format);
    if (s != GROVE_OK) grove__error_prefix(name);
    else s = read_snapshot(name, format, &p, out);
    if (s != GROVE_OK) grove_gadget_free(out);
    grove__free(name);
    return s;
}
