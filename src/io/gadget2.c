/* Gadget-2 binary snapshots: SnapFormat 1 (Fortran records: a 256-byte
 * header, then POS, VEL, ID and, when a type's MassTable entry is 0, MASS)
 * and SnapFormat 2 (each record preceded by an 8-byte record naming it,
 * blocks in any order), either byte order, float32 or float64 vectors and
 * masses, 32- or 64-bit ids.
 *
 * Hostile input: every record's start and end markers must agree and lie
 * inside the file, every block the chosen types and fields need must hold
 * exactly what the header's counts imply, before anything is allocated;
 * values are checked as they are read (finite vectors, masses >= 0). */
#include "gadget_internal.h"

#include <stdio.h>
#include <unistd.h>

enum { HEADER_BYTES = 256, TYPES = 6, MAX_FILES = 1 << 16, CHUNK = 2048 };

/* A file, or a buffer in memory. */
typedef struct source {
    int fd;
    const unsigned char *mem;
    size_t size;
} source;

static grove_status src_read(const source *src, void *dst, size_t n, size_t offset, const char *what)
{
    if (offset > src->size || n > src->size - offset)
        return grove__fail(GROVE_PARSE_ERROR, "%s: %zu bytes at byte %zu run past the end of the file (%zu bytes)",
                           what, n, offset, src->size);
    if (!src->mem) return grove__file_read_at(src->fd, dst, n, offset);
    memcpy(dst, src->mem + offset, n);
    return GROVE_OK;
}

/* The blocks grove reads; format 1 stores them in this order. */
enum { HEAD, POS, VEL, ID, MASS, BLOCKS };
static const char BLOCK_NAME[BLOCKS][5] = {"HEAD", "POS ", "VEL ", "ID  ", "MASS"};
/* The names in messages. */
static const char *const BLOCK_LABEL[BLOCKS] = {"HEAD", "POS", "VEL", "ID", "MASS"};

typedef struct layout {
    grove_gadget_format format;
    bool swap;                  /* stored byte order differs from the host's */
    bool found[BLOCKS];
    size_t offset[BLOCKS], size[BLOCKS]; /* each block's data */
    unsigned char header[HEADER_BYTES];
} layout;

grove_gadget_format grove__gadget2_sniff(const unsigned char *head, size_t len)
{
    if (len < 4) return GROVE_GADGET_NONE;
    uint32_t native = grove__load_u32(head, false);
    bool swap = native != HEADER_BYTES && native != 8;
    uint32_t first = grove__load_u32(head, swap);
    /* Format 1: the header record, its end marker too when the bytes reach
     * it; format 2: the name record of HEAD, 8 bytes between its markers. */
    if (first == HEADER_BYTES)
        return len < 8 + HEADER_BYTES || grove__load_u32(head + 4 + HEADER_BYTES, swap) == HEADER_BYTES
                   ? GROVE_GADGET_BINARY1
                   : GROVE_GADGET_NONE;
    if (first == 8 && len >= 16 && memcmp(head + 4, "HEAD", 4) == 0 && grove__load_u32(head + 12, swap) == 8)
        return GROVE_GADGET_BINARY2;
    return GROVE_GADGET_NONE;
}

/* The particles of a header whose types have a MassTable entry of 0
 * (their masses are in the MASS block). */
static uint64_t mass_block_rows(const grove__gadget_file *file, int below)
{
    uint64_t rows = 0;
    for (int t = 0; t < below; t++)
        if (file->header.mass_table[t] == 0) rows += file->count[t];
    return rows;
}

static uint64_t rows_below(const grove__gadget_file *file, int below)
{
    uint64_t rows = 0;
    for (int t = 0; t < below; t++) rows += file->count[t];
    return rows;
}

static grove_status parse_header(const unsigned char *h, bool swap, grove__gadget_file *file)
{
    grove_gadget_header *H = &file->header;
    H->types = TYPES;
    for (int t = 0; t < TYPES; t++) {
        int32_t count = grove__load_i32(h + 4 * t, swap);
        double mass = grove__load_f64(h + 24 + 8 * t, swap);
        if (count < 0) return grove__fail(GROVE_PARSE_ERROR, "header: npart[%d] is %d, negative", t, (int)count);
        if (!(mass >= 0) || !isfinite(mass))
            return grove__fail(GROVE_PARSE_ERROR, "header: mass[%d] (MassTable) is %g, not a finite mass >= 0", t, mass);
        file->count[t] = (uint64_t)count;
        H->mass_table[t] = mass;
        H->total[t] = grove__load_u32(h + 96 + 4 * t, swap) + ((uint64_t)grove__load_u32(h + 168 + 4 * t, swap) << 32);
    }
    H->time = grove__load_f64(h + 72, swap);
    H->redshift = grove__load_f64(h + 80, swap);
    int32_t files = grove__load_i32(h + 124, swap);
    H->box[0] = H->box[1] = H->box[2] = grove__load_f64(h + 128, swap);
    H->omega0 = grove__load_f64(h + 136, swap);
    H->omega_lambda = grove__load_f64(h + 144, swap);
    H->hubble = grove__load_f64(h + 152, swap);
    const double values[] = {H->time, H->redshift, H->box[0], H->omega0, H->omega_lambda, H->hubble};
    static const char *const names[] = {"time", "redshift", "BoxSize", "Omega0", "OmegaLambda", "HubbleParam"};
    for (size_t k = 0; k < sizeof values / sizeof values[0]; k++)
        if (!isfinite(values[k])) return grove__fail(GROVE_PARSE_ERROR, "header: %s is not finite", names[k]);
    if (H->box[0] < 0) return grove__fail(GROVE_PARSE_ERROR, "header: BoxSize is %g, negative", H->box[0]);
    if (files < 0 || files > MAX_FILES)
        return grove__fail(GROVE_PARSE_ERROR, "header: num_files is %d, not in 0..%d", (int)files, MAX_FILES);
    H->files = files ? files : 1; /* some initial-condition writers leave it 0 */
    return GROVE_OK;
}

/* Record the block `name` of `size` bytes at offset (the first of each). */
static void note_block(layout *L, const char *name, size_t offset, size_t size)
{
    for (int k = 0; k < BLOCKS; k++)
        if (memcmp(name, BLOCK_NAME[k], 4) == 0 && !L->found[k]) {
            L->found[k] = true;
            L->offset[k] = offset;
            L->size[k] = size;
        }
}

/* The data record at *offset: its markers agree and it lies inside the
 * file; *offset moves past it. */
static grove_status record(const source *src, const layout *L, const char *name, size_t *offset, size_t *data,
                           size_t *size)
{
    unsigned char mark[4];
    char label[5], what[48];
    /* The name as printed: trailing blanks cut, other bytes than printable
     * ASCII shown as '?'. */
    int len = 4;
    while (len > 0 && name[len - 1] == ' ') len--;
    for (int k = 0; k < len; k++) label[k] = name[k] >= 0x21 && name[k] < 0x7f ? name[k] : '?';
    label[len] = '\0';
    snprintf(what, sizeof what, "block %s's record", label);
    grove_status s = src_read(src, mark, 4, *offset, what);
    if (s != GROVE_OK) return s;
    uint32_t bytes = grove__load_u32(mark, L->swap);
    s = src_read(src, mark, 4, *offset + 4 + (size_t)bytes, what);
    if (s != GROVE_OK) return s;
    if (grove__load_u32(mark, L->swap) != bytes)
        return grove__fail(GROVE_PARSE_ERROR, "%s at byte %zu: its end marker %u differs from its start marker %u",
                           what, *offset, grove__load_u32(mark, L->swap), bytes);
    *data = *offset + 4;
    *size = bytes;
    *offset += 8 + (size_t)bytes;
    return GROVE_OK;
}

/* Format 1's records in their order: the header, POS, VEL, ID, and MASS
 * when a type with particles has no MassTable entry. */
static grove_status walk_format1(const source *src, layout *L, grove__gadget_file *file)
{
    size_t offset = 0, data, size;
    for (int k = 0; k < BLOCKS; k++) {
        if (offset == src->size) break; /* a file of particles without every block (n = 0) */
        grove_status s = record(src, L, BLOCK_NAME[k], &offset, &data, &size);
        if (s != GROVE_OK) return s;
        note_block(L, BLOCK_NAME[k], data, size);
        if (k == HEAD) {
            if (size != HEADER_BYTES)
                return grove__fail(GROVE_PARSE_ERROR, "the header record holds %zu bytes, not %d", size, HEADER_BYTES);
            if ((s = src_read(src, L->header, HEADER_BYTES, data, "header")) != GROVE_OK) return s;
            if ((s = parse_header(L->header, L->swap, file)) != GROVE_OK) return s;
        }
        if (k == ID && mass_block_rows(file, TYPES) == 0) break;
    }
    return GROVE_OK;
}

/* Format 2: a name record (8 bytes: the name, the next record's size + 8)
 * before each data record; every block is walked, those grove reads kept. */
static grove_status walk_format2(const source *src, layout *L, grove__gadget_file *file)
{
    size_t offset = 0, data, size;
    while (offset < src->size) {
        unsigned char tag[16];
        grove_status s = src_read(src, tag, 16, offset, "a block name record");
        if (s != GROVE_OK) return s;
        if (grove__load_u32(tag, L->swap) != 8 || grove__load_u32(tag + 12, L->swap) != 8)
            return grove__fail(GROVE_PARSE_ERROR, "the block name record at byte %zu does not hold 8 bytes", offset);
        char name[5];
        memcpy(name, tag + 4, 4);
        name[4] = '\0';
        offset += 16;
        if ((s = record(src, L, name, &offset, &data, &size)) != GROVE_OK) return s;
        note_block(L, name, data, size);
    }
    if (!L->found[HEAD]) return grove__fail(GROVE_PARSE_ERROR, "no HEAD block");
    if (L->size[HEAD] != HEADER_BYTES)
        return grove__fail(GROVE_PARSE_ERROR, "the HEAD block holds %zu bytes, not %d", L->size[HEAD], HEADER_BYTES);
    grove_status s = src_read(src, L->header, HEADER_BYTES, L->offset[HEAD], "header");
    return s == GROVE_OK ? parse_header(L->header, L->swap, file) : s;
}

static grove_status walk(const source *src, layout *L, grove__gadget_file *file)
{
    memset(L, 0, sizeof *L);
    memset(file, 0, sizeof *file);
    /* The record starts alone: the records' own checks say more about a
     * bad header record than "not a Gadget-2 file". */
    unsigned char head[16];
    size_t len = src->size < sizeof head ? src->size : sizeof head;
    grove_status s = src_read(src, head, len, 0, "the first record");
    if (s != GROVE_OK) return s;
    L->format = grove__gadget2_sniff(head, len);
    if (L->format == GROVE_GADGET_NONE)
        return grove__fail(GROVE_PARSE_ERROR, "not a Gadget-2 file: its first record is neither a 256-byte header "
                                              "nor a block name");
    uint32_t first = grove__load_u32(head, false);
    L->swap = first != HEADER_BYTES && first != 8;
    file->header.format = L->format;
    return L->format == GROVE_GADGET_BINARY1 ? walk_format1(src, L, file) : walk_format2(src, L, file);
}

/* The width (4 or 8) of block k's values when it holds `values` of them;
 * 0 when there are none to hold, or the block is absent and not required. */
static grove_status block_width(const layout *L, int k, uint64_t values, bool required, const char *what, int *width)
{
    *width = 0;
    if (values == 0 || (!L->found[k] && !required)) return GROVE_OK;
    if (!L->found[k])
        return grove__fail(GROVE_PARSE_ERROR, "no %s block, where the header's counts need %llu %s", BLOCK_LABEL[k],
                           (unsigned long long)values, what);
    if ((uint64_t)L->size[k] == 4 * values) *width = 4;
    else if ((uint64_t)L->size[k] == 8 * values) *width = 8;
    else
        return grove__fail(GROVE_PARSE_ERROR,
                           "block %s holds %zu bytes, where the header's counts need %llu %s of 4 or 8 bytes",
                           BLOCK_LABEL[k], L->size[k], (unsigned long long)values, what);
    return GROVE_OK;
}

/* The widths of the blocks grove knows. */
typedef struct widths {
    int pos, vel, id, mass;
} widths;

/* Every block grove knows that the file holds agrees with the header's
 * counts; those the chosen types and fields need are there. */
static grove_status check_blocks(const layout *L, const grove__gadget_file *file, const grove_gadget_params *p,
                                 widths *w)
{
    unsigned chosen = grove__gadget_types(p, TYPES);
    bool want_mass = false;
    for (int t = 0; t < TYPES; t++)
        want_mass |= (chosen >> t & 1u) && file->count[t] && file->header.mass_table[t] == 0;
    uint64_t n = rows_below(file, TYPES), f = p->fields;
    memset(w, 0, sizeof *w);
    grove_status s = block_width(L, POS, 3 * n, f & GROVE_GADGET_POS, "coordinates", &w->pos);
    if (s == GROVE_OK) s = block_width(L, VEL, 3 * n, f & GROVE_GADGET_VEL, "velocities", &w->vel);
    if (s == GROVE_OK) s = block_width(L, ID, n, f & GROVE_GADGET_IDS, "ids", &w->id);
    if (s == GROVE_OK)
        s = block_width(L, MASS, mass_block_rows(file, TYPES), (f & GROVE_GADGET_MASS) && want_mass, "masses",
                        &w->mass);
    return s;
}

static grove_status scan_source(const source *src, const grove_gadget_params *p, grove__gadget_file *file, layout *L,
                                widths *w)
{
    grove_status s = walk(src, L, file);
    if (s == GROVE_OK) s = check_blocks(L, file, p, w);
    file->width = w->pos > w->vel ? w->pos : w->vel;
    return s;
}

/* count values of `width` bytes (floats, or unsigned integers when
 * `integer`) at offset into dst as values of dst_width bytes: read in
 * place when the widths agree, widened in place from the top half of dst,
 * or narrowed through a small buffer. */
static grove_status read_values(const source *src, size_t offset, size_t count, int width, bool swap, bool integer,
                                unsigned char *dst, int dst_width, const char *what)
{
    grove_status s = GROVE_OK;
    if (width == dst_width || width == 4) {
        unsigned char *at = width == dst_width ? dst : dst + 4 * count;
        if ((s = src_read(src, at, (size_t)width * count, offset, what)) != GROVE_OK) return s;
        if (swap) grove__byteswap(at, count, (size_t)width);
        /* Widening, in ascending order: value i is read before its 8 bytes
         * are written, and they end at or before value i + 1's 4. */
        for (size_t i = 0; width != dst_width && i < count; i++) {
            uint32_t u;
            float f;
            memcpy(&u, at + 4 * i, 4);
            memcpy(&f, &u, 4);
            uint64_t wide = u;
            double d = f;
            if (integer) memcpy(dst + 8 * i, &wide, 8);
            else memcpy(dst + 8 * i, &d, 8);
        }
        return GROVE_OK;
    }
    double buf[CHUNK]; /* float64 to float32 */
    for (size_t done = 0; s == GROVE_OK && done < count; done += CHUNK) {
        size_t k = count - done < CHUNK ? count - done : CHUNK;
        s = src_read(src, buf, 8 * k, offset + 8 * done, what);
        if (s == GROVE_OK && swap) grove__byteswap(buf, k, 8);
        for (size_t i = 0; s == GROVE_OK && i < k; i++) {
            float f = (float)buf[i];
            memcpy(dst + 4 * (done + i), &f, 4);
        }
    }
    return s;
}

/* One field of `count` rows of `cols` values (stored `width` bytes each
 * from offset) into dst as values of dst_width bytes, a piece of rows at a
 * time, each piece checked (check may be NULL) while in the cache. */
typedef struct field_read {
    size_t offset, count;
    int cols, width;
    bool integer;
    unsigned char *dst;
    int dst_width;
    grove_dtype dtype;
    grove__gadget_check check;
    const char *what;
} field_read;

static grove_status read_field(const source *src, const layout *L, const field_read *f)
{
    grove_status s = GROVE_OK;
    size_t cols = (size_t)f->cols;
    for (size_t r = 0; s == GROVE_OK && r < f->count; r += GROVE__GADGET_CHUNK) {
        size_t k = f->count - r < GROVE__GADGET_CHUNK ? f->count - r : GROVE__GADGET_CHUNK;
        unsigned char *dst = f->dst + r * cols * (size_t)f->dst_width;
        s = read_values(src, f->offset + r * cols * (size_t)f->width, k * cols, f->width, L->swap, f->integer, dst,
                        f->dst_width, f->what);
        if (s == GROVE_OK && f->check) s = f->check(dst, f->dtype, k, r, f->what);
    }
    return s;
}

/* Type t's particles of this file into dest (rows from dest->at[t]). */
static grove_status read_type(const source *src, const layout *L, const grove__gadget_file *file, const widths *w,
                              int t, grove__gadget_dest *dest)
{
    grove_gadget *out = dest->out;
    size_t count = (size_t)file->count[t], first = (size_t)rows_below(file, t), at = dest->at[t];
    int ow = (int)grove_dtype_size(out->dtype);
    char what[48];
    grove_status s = GROVE_OK;
    /* The vectors: POS into out->pos, VEL into out->vel. */
    const int block[2] = {POS, VEL}, stored[2] = {w->pos, w->vel};
    void *const array[2] = {out->pos, out->vel};
    for (int k = 0; s == GROVE_OK && k < 2; k++) {
        if (!array[k]) continue;
        snprintf(what, sizeof what, "block %s (type %d)", BLOCK_LABEL[block[k]], t);
        field_read f = {L->offset[block[k]] + first * 3 * (size_t)stored[k], count, 3, stored[k], false,
                        (unsigned char *)array[k] + at * 3 * (size_t)ow, ow, out->dtype, grove__gadget_check_vectors,
                        what};
        s = read_field(src, L, &f);
    }
    if (s == GROVE_OK && out->ids) {
        snprintf(what, sizeof what, "block ID (type %d)", t);
        field_read f = {L->offset[ID] + first * (size_t)w->id, count, 1, w->id, true,
                        (unsigned char *)(out->ids + at), 8, GROVE_INT64, NULL, what};
        s = read_field(src, L, &f);
    }
    double table = file->header.mass_table[t];
    if (s == GROVE_OK && out->mass && table != 0)
        for (size_t i = 0; i < count; i++) out->mass[at + i] = table;
    if (s == GROVE_OK && out->mass && table == 0) {
        snprintf(what, sizeof what, "block MASS (type %d)", t);
        field_read f = {L->offset[MASS] + (size_t)mass_block_rows(file, t) * (size_t)w->mass, count, 1, w->mass, false,
                        (unsigned char *)(out->mass + at), 8, GROVE_FLOAT64, grove__gadget_check_masses, what};
        s = read_field(src, L, &f);
    }
    dest->at[t] += count;
    return s;
}

/* The file's chosen particles into dest; its counts must still be those
 * the scan found (dest's arrays were sized by them). */
static grove_status read_source(const source *src, const grove__gadget_file *scanned, grove__gadget_dest *dest)
{
    grove_gadget_params p;
    grove_gadget_params_init(&p);
    p.types = dest->types;
    p.fields = dest->fields;
    grove__gadget_file file;
    layout L;
    widths w;
    grove_status s = scan_source(src, &p, &file, &L, &w);
    if (s == GROVE_OK && memcmp(file.count, scanned->count, sizeof file.count) != 0)
        s = grove__fail(GROVE_IO_ERROR, "its counts changed while the snapshot was being read");
    for (int t = 0; s == GROVE_OK && t < TYPES; t++)
        if ((dest->types >> t & 1u) && file.count[t]) s = read_type(src, &L, &file, &w, t, dest);
    return s;
}

static grove_status open_source(const char *path, source *src)
{
    src->mem = NULL;
    return grove__file_open(path, &src->fd, &src->size);
}

grove_status grove__gadget2_scan(const char *path, const grove_gadget_params *params, grove__gadget_file *file)
{
    source src;
    grove_status s = open_source(path, &src);
    if (s != GROVE_OK) return s;
    layout L;
    widths w;
    s = scan_source(&src, params, file, &L, &w);
    close(src.fd);
    return s;
}

grove_status grove__gadget2_read(const char *path, const grove__gadget_file *file, grove__gadget_dest *dest)
{
    /* The read walks the file again, checking it as the scan did. */
    source src;
    grove_status s = open_source(path, &src);
    if (s != GROVE_OK) return s;
    s = read_source(&src, file, dest);
    close(src.fd);
    return s;
}

grove_status grove_gadget_read_mem(const void *buf, size_t len, const char *name, const grove_gadget_params *params,
                                   grove_gadget *out)
{
    grove__clear_error();
    if (!out) return grove__fail(GROVE_INVALID_ARGUMENT, "gadget_read_mem: out is NULL");
    memset(out, 0, sizeof *out);
    if (!buf && len) return grove__fail(GROVE_INVALID_ARGUMENT, "gadget_read_mem: buf is NULL");
    grove_gadget_params p;
    grove_gadget_params_init(&p);
    if (params) p = *params;
    grove_status s = grove__gadget_check_params(&p);
    if (s != GROVE_OK) return s;
    source src = {-1, buf, len};
    grove__gadget_file file;
    layout L;
    widths w;
    grove__gadget_dest dest;
    s = scan_source(&src, &p, &file, &L, &w);
    /* A piece of a snapshot in several files reads as its own particles. */
    for (int t = 0; s == GROVE_OK && file.header.files == 1 && t < TYPES; t++)
        if (file.count[t] != file.header.total[t])
            s = grove__fail(GROVE_PARSE_ERROR,
                            "the header's npartTotal says %llu particles of type %d, the file holds %llu (npart)",
                            (unsigned long long)file.header.total[t], t, (unsigned long long)file.count[t]);
    if (s == GROVE_OK) {
        out->header = file.header;
        s = grove__gadget_alloc(out, &p, file.count, TYPES,
                                p.dtype ? p.dtype : file.width == 4 ? GROVE_FLOAT32 : GROVE_FLOAT64, &dest);
    }
    for (int t = 0; s == GROVE_OK && t < TYPES; t++)
        if ((dest.types >> t & 1u) && file.count[t]) s = read_type(&src, &L, &file, &w, t, &dest);
    if (s != GROVE_OK) {
        grove_gadget_free(out);
        if (name) grove__error_prefix(name);
    }
    return s;
}
