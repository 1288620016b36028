/* Tipsy snapshots (Bonsai's format): reading with the byte order detected
 * from the header, writing dark-matter particles in either byte order.
 *
 * Hostile input: every count is checked against the file size, in 64-bit
 * arithmetic, before anything is allocated; the header must be consistent
 * in exactly the byte order used; every value must be finite. */
#include "io_internal.h"

#include <math.h>
#include <stdio.h>

/* Floats per record, and the leading ones grove keeps: mass, pos[3], vel[3]. */
enum { GAS_FLOATS = 12, DARK_FLOATS = 9, STAR_FLOATS = 11, KEEP = 7 };

typedef struct tipsy_header {
    double time;
    int64_t nbodies, ndim, nsph, ndark, nstar;
    size_t head_bytes; /* 32 with the pad word, 28 without */
    bool swap;         /* stored byte order differs from the host's */
} tipsy_header;

/* True when the header read in this byte order is consistent with a file
 * of len bytes. */
static bool try_header(const unsigned char *buf, size_t len, bool swap, tipsy_header *h)
{
    h->time = grove__load_f64(buf, swap);
    h->nbodies = grove__load_i32(buf + 8, swap);
    h->ndim = grove__load_i32(buf + 12, swap);
    h->nsph = grove__load_i32(buf + 16, swap);
    h->ndark = grove__load_i32(buf + 20, swap);
    h->nstar = grove__load_i32(buf + 24, swap);
    h->swap = swap;
    if (h->ndim != 3 || h->nsph < 0 || h->ndark < 0 || h->nstar < 0 || h->nbodies < 0) return false;
    if (h->nsph + h->ndark + h->nstar != h->nbodies) return false;
    /* Each count is below 2^31, so these products cannot overflow 64 bits. */
    uint64_t body = 4 * ((uint64_t)h->nsph * GAS_FLOATS + (uint64_t)h->ndark * DARK_FLOATS +
                         (uint64_t)h->nstar * STAR_FLOATS);
    if ((uint64_t)len == body + 32) h->head_bytes = 32;
    else if ((uint64_t)len == body + 28) h->head_bytes = 28;
    else return false;
    return true;
}

static grove_status read_header(const unsigned char *buf, size_t len, tipsy_header *h)
{
    if (len < 28) return grove__fail(GROVE_PARSE_ERROR, "not a tipsy file: %zu bytes is shorter than a header", len);
    /* Little-endian first (Bonsai's native files), then big-endian (standard). */
    bool swap_le = !grove__host_little_endian();
    if (try_header(buf, len, swap_le, h) || try_header(buf, len, !swap_le, h)) {
        if (!isfinite(h->time)) return grove__fail(GROVE_PARSE_ERROR, "tipsy header: time is not finite");
        return GROVE_OK;
    }
    return grove__fail(GROVE_PARSE_ERROR,
                       "not a tipsy file: in neither byte order is ndim 3 with nsph + ndark + nstar = nbodies "
                       "matching the file size of %zu bytes",
                       len);
}

/* Read `count` records of `floats` floats from p into the snapshot from
 * particle `first`; fails on a non-finite value or a negative mass. */
static grove_status read_records(const unsigned char *p, size_t count, size_t floats, bool swap,
                                 grove_snapshot *s, size_t first, const char *kind)
{
    for (size_t i = 0; i < count; i++, p += 4 * floats) {
        float v[KEEP];
        for (size_t k = 0; k < KEEP; k++) v[k] = grove__load_f32(p + 4 * k, swap);
        for (size_t k = 0; k < KEEP; k++)
            if (!isfinite(v[k]))
                return grove__fail(GROVE_PARSE_ERROR, "%s particle %zu: field %zu is not finite", kind, i, k);
        if (v[0] < 0) return grove__fail(GROVE_PARSE_ERROR, "%s particle %zu: negative mass %g", kind, i, v[0]);
        size_t j = first + i;
        s->mass[j] = v[0];
        for (int a = 0; a < 3; a++) {
            s->pos[3 * j + a] = v[1 + a];
            s->vel[3 * j + a] = v[4 + a];
        }
    }
    return GROVE_OK;
}

static grove_status parse(const unsigned char *buf, size_t len, grove_snapshot *out)
{
    tipsy_header h;
    grove_status s = read_header(buf, len, &h);
    if (s != GROVE_OK) return s;
    size_t n = (size_t)h.nbodies;
    grove_snapshot snap = {n, h.time, NULL, NULL, NULL};
    snap.pos = grove__malloc((7 * n + 1) * sizeof(double), "tipsy particles");
    if (!snap.pos) return GROVE_OUT_OF_MEMORY;
    snap.vel = snap.pos + 3 * n;
    snap.mass = snap.vel + 3 * n;
    size_t nsph = (size_t)h.nsph, ndark = (size_t)h.ndark, nstar = (size_t)h.nstar;
    const unsigned char *p = buf + h.head_bytes;
    s = read_records(p, nsph, GAS_FLOATS, h.swap, &snap, 0, "gas");
    p += 4 * GAS_FLOATS * nsph;
    if (s == GROVE_OK) s = read_records(p, ndark, DARK_FLOATS, h.swap, &snap, nsph, "dark");
    p += 4 * DARK_FLOATS * ndark;
    if (s == GROVE_OK) s = read_records(p, nstar, STAR_FLOATS, h.swap, &snap, nsph + ndark, "star");
    if (s != GROVE_OK) {
        grove__free(snap.pos);
        return s;
    }
    *out = snap;
    return GROVE_OK;
}

grove_status grove_tipsy_read_mem(const void *buf, size_t len, const char *name, grove_snapshot *out)
{
    grove__clear_error();
    if (!out || (!buf && len)) return grove__fail(GROVE_INVALID_ARGUMENT, "tipsy_read: NULL argument");
    memset(out, 0, sizeof *out);
    grove_status s = parse(buf, len, out);
    if (s != GROVE_OK && name) grove__error_prefix(name);
    return s;
}

grove_status grove_tipsy_read(const char *path, grove_snapshot *out)
{
    grove__clear_error();
    if (!path || !out) return grove__fail(GROVE_INVALID_ARGUMENT, "tipsy_read: NULL argument");
    memset(out, 0, sizeof *out);
    void *buf;
    size_t len;
    grove_status s = grove__file_slurp(path, &buf, &len);
    if (s == GROVE_OK) {
        s = parse(buf, len, out);
        grove__free(buf);
    }
    if (s != GROVE_OK) grove__error_prefix(path);
    return s;
}

static void store_u32(unsigned char *p, uint32_t v, bool swap)
{
    if (swap) grove__byteswap(&v, 1, 4);
    memcpy(p, &v, 4);
}

static void store_f32(unsigned char *p, double x, bool swap)
{
    float f = (float)x;
    uint32_t u;
    memcpy(&u, &f, 4);
    store_u32(p, u, swap);
}

/* Why x cannot be stored as a float32, or NULL when it can (float32
 * subnormals can: they keep fewer digits, but are not 0). The conversion
 * rounds to nearest and gives inf beyond the range (IEEE 754, C's Annex F). */
static const char *float32_problem(double x)
{
    if (isnan(x)) return "is NaN";
    if (isinf(x)) return "is infinite";
    float f = (float)x;
    if (isinf(f)) return "is beyond float32's range (3.4e+38)";
    if (f == 0 && x != 0) return "is nonzero but rounds to 0 in float32 (below 1.4e-45)";
    return NULL;
}

/* Refuse a value the file would not hold: `what` of row `row` (no row when
 * row is SIZE_MAX). */
static grove_status check_float32(double x, const char *what, size_t row)
{
    const char *problem = float32_problem(x);
    if (!problem) return GROVE_OK;
    char where[48] = "";
    if (row != SIZE_MAX) snprintf(where, sizeof where, " of row %zu", row);
    return grove__fail(GROVE_INVALID_ARGUMENT, "tipsy_write: %s%s, %g, %s; tipsy stores float32 (write .npy to keep "
                       "float64 values)", what, where, x, problem);
}

/* Every value the records hold, before anything is written. */
static grove_status check_values(size_t n, double time, const double *pos, const double *vel, const double *mass,
                                 const double *phi, double softening)
{
    static const char *const axis_name[3] = {"x", "y", "z"};
    if (!isfinite(time)) return grove__fail(GROVE_INVALID_ARGUMENT, "tipsy_write: the time, %g, is not finite", time);
    grove_status s = check_float32(softening, "the softening", SIZE_MAX);
    for (size_t i = 0; s == GROVE_OK && i < n; i++) {
        s = check_float32(mass[i], "the mass", i);
        for (int a = 0; s == GROVE_OK && a < 3; a++) {
            char what[32];
            snprintf(what, sizeof what, "position %s", axis_name[a]);
            s = check_float32(pos[3 * i + a], what, i);
            snprintf(what, sizeof what, "velocity %s", axis_name[a]);
            if (s == GROVE_OK) s = check_float32(vel[3 * i + a], what, i);
        }
        if (s == GROVE_OK && phi) s = check_float32(phi[i], "the potential", i);
    }
    return s;
}

grove_status grove_tipsy_write(const char *path, size_t n, double time, const double *pos, const double *vel,
                               const double *mass, const double *phi, double softening, int big_endian)
{
    grove__clear_error();
    if (!path) return grove__fail(GROVE_INVALID_ARGUMENT, "tipsy_write: path is NULL");
    if (n > INT32_MAX) return grove__fail(GROVE_TOO_LARGE, "tipsy_write: %zu particles; the format holds 2^31 - 1", n);
    if (n && (!pos || !vel || !mass))
        return grove__fail(GROVE_INVALID_ARGUMENT, "tipsy_write: snapshot arrays are NULL");
    grove_status s = check_values(n, time, pos, vel, mass, phi, softening);
    if (s != GROVE_OK) {
        grove__error_prefix(path);
        return s;
    }
    bool swap = (big_endian != 0) == grove__host_little_endian();
    size_t bytes = 32 + 4 * DARK_FLOATS * n;
    unsigned char *buf = grove__calloc(bytes, 1, "tipsy file");
    if (!buf) return GROVE_OUT_OF_MEMORY;
    double t = time;
    memcpy(buf, &t, 8);
    if (swap) grove__byteswap(buf, 1, 8);
    uint32_t head[6] = {(uint32_t)n, 3, 0, (uint32_t)n, 0, 0};
    for (int k = 0; k < 6; k++) store_u32(buf + 8 + 4 * k, head[k], swap);
    for (size_t i = 0; i < n; i++) {
        unsigned char *r = buf + 32 + 4 * DARK_FLOATS * i;
        double v[DARK_FLOATS] = {mass[i],    pos[3 * i],     pos[3 * i + 1], pos[3 * i + 2], vel[3 * i],
                                 vel[3 * i + 1], vel[3 * i + 2], softening,    phi ? phi[i] : 0};
        for (int k = 0; k < DARK_FLOATS; k++) store_f32(r + 4 * k, v[k], swap);
    }
    s = grove__file_write_atomic(path, buf, bytes, NULL, 0);
    grove__free(buf);
    if (s != GROVE_OK) grove__error_prefix(path);
    return s;
}

void grove_snapshot_free(grove_snapshot *snap)
{
    if (!snap) return;
    grove__free(snap->pos);
    memset(snap, 0, sizeof *snap);
}
