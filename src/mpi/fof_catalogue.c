/* The distributed FoF catalogue (docs/mpi.md): group g's members go to
 * rank g mod P with their global rows, coordinates (in double, as the
 * single-process catalogue reads them), masses and velocities. They
 * arrive by source rank, each rank's rows ascending, so in global row
 * order: grove__fof_catalogue on them sums every group's row over its
 * members in the single-process order, bit for bit. The rows are then
 * shared (MPI_Allgatherv), so every rank holds the whole catalogue. */
#include "mpi_internal.h"

#include "../cluster/fof_internal.h"

#include <limits.h>
#include <string.h>

/* A member on the wire, in 8-byte words: row, group, d coordinates, then
 * the mass and d velocity components when given (doubles bit-copied). */
typedef struct wire {
    size_t d, words;
    int mass, vel;
} wire;

static void put(int64_t *w, double x) { memcpy(w, &x, sizeof x); }
static double get(const int64_t *w)
{
    double x;
    memcpy(&x, w, sizeof x);
    return x;
}

/* This rank's grouped members, packed by destination rank. */
static grove_status pack(const grove_mpi *mpi, const wire *w, grove_points p, const double *mass,
                         const double *velocity, const int64_t *group, int64_t first, int64_t **buf, int *counts)
{
    int P = mpi->size;
    size_t *cursor = grove__calloc((size_t)P + 1, sizeof *cursor, "fof catalogue members"), members = 0;
    if (!cursor) return GROVE_OUT_OF_MEMORY;
    for (size_t i = 0; i < p.n; i++)
        if (group[i] >= 0) cursor[group[i] % P + 1] += w->words, members++;
    for (int r = 0; r < P; r++) {
        counts[r] = (int)cursor[r + 1];
        cursor[r + 1] += cursor[r];
    }
    *buf = grove__malloc((members ? members * w->words : 1) * sizeof **buf, "fof catalogue members");
    if (!*buf) {
        grove__free(cursor);
        return GROVE_OUT_OF_MEMORY;
    }
    size_t stride = grove__points_stride(p);
    for (size_t i = 0; i < p.n; i++) {
        if (group[i] < 0) continue;
        int64_t *rec = *buf + cursor[group[i] % P];
        cursor[group[i] % P] += w->words;
        rec[0] = first + (int64_t)i;
        rec[1] = group[i];
        for (size_t j = 0; j < w->d; j++) put(rec + 2 + j, grove__coord(p, stride, i, j));
        if (w->mass) put(rec + 2 + w->d, mass[i]);
        for (size_t j = 0; w->vel && j < w->d; j++) put(rec + 2 + w->d + (size_t)w->mass + j, velocity[i * w->d + j]);
    }
    grove__free(cursor);
    return GROVE_OK;
}

/* The members this rank got (m records): rows, local group ids g / P,
 * coordinates, masses and velocities as separate arrays. */
typedef struct members {
    size_t m;
    int64_t *row, *group;
    double *x, *mass, *vel;
} members;

static void members_free(members *s)
{
    grove__free(s->row);
    grove__free(s->group);
    grove__free(s->x);
    grove__free(s->mass);
    grove__free(s->vel);
}

static grove_status unpack(const grove_mpi *mpi, const wire *w, const int64_t *recs, size_t m, members *s)
{
    size_t d = w->d, one = m ? m : 1;
    s->m = m;
    s->row = grove__malloc(one * sizeof *s->row, "fof catalogue members");
    s->group = grove__malloc(one * sizeof *s->group, "fof catalogue members");
    s->x = grove__malloc(one * d * sizeof *s->x, "fof catalogue members");
    s->mass = w->mass ? grove__malloc(one * sizeof *s->mass, "fof catalogue members") : NULL;
    s->vel = w->vel ? grove__malloc(one * d * sizeof *s->vel, "fof catalogue members") : NULL;
    if (!s->row || !s->group || !s->x || (w->mass && !s->mass) || (w->vel && !s->vel)) return GROVE_OUT_OF_MEMORY;
    for (size_t k = 0; k < m; k++) {
        const int64_t *rec = recs + k * w->words;
        s->row[k] = rec[0];
        s->group[k] = rec[1] / mpi->size;
        for (size_t j = 0; j < d; j++) s->x[k * d + j] = get(rec + 2 + j);
        if (w->mass) s->mass[k] = get(rec + 2 + d);
        for (size_t j = 0; w->vel && j < d; j++) s->vel[k * d + j] = get(rec + 2 + d + (size_t)w->mass + j);
    }
    return GROVE_OK;
}

/* Words of a catalogue row: members, first, mass, centre, radius, then
 * velocity and dispersion. */
static size_t row_words(const wire *w) { return 4 + w->d + (w->vel ? w->d + 1 : 0); }

/* This rank's rows (c, groups r, r + P, ...), first rebased to global rows. */
static void pack_rows(const wire *w, const grove_fof_catalogue *c, const int64_t *row, int64_t *out)
{
    size_t d = w->d, rw = row_words(w);
    for (size_t g = 0; g < c->groups; g++) {
        int64_t *o = out + g * rw;
        o[0] = c->members[g];
        o[1] = row[c->first[g]];
        put(o + 2, c->mass[g]);
        put(o + 3, c->radius[g]);
        for (size_t j = 0; j < d; j++) put(o + 4 + j, c->center[g * d + j]);
        for (size_t j = 0; w->vel && j < d; j++) put(o + 4 + d + j, c->velocity[g * d + j]);
        if (w->vel) put(o + 4 + 2 * d, c->dispersion[g]);
    }
}

/* Row lg of rank r's rows into row r + P lg of the whole catalogue. */
static void unpack_row(const wire *w, const int64_t *o, size_t g, grove_fof_catalogue *c)
{
    size_t d = w->d;
    c->members[g] = o[0];
    c->first[g] = o[1];
    c->mass[g] = get(o + 2);
    c->radius[g] = get(o + 3);
    for (size_t j = 0; j < d; j++) c->center[g * d + j] = get(o + 4 + j);
    for (size_t j = 0; w->vel && j < d; j++) c->velocity[g * d + j] = get(o + 4 + d + j);
    if (w->vel) c->dispersion[g] = get(o + 4 + 2 * d);
}

/* Every rank's rows to every rank, into the whole catalogue out. */
static grove_status share_rows(const grove_mpi *mpi, const wire *w, const grove_fof_catalogue *mine,
                               const int64_t *row, size_t groups, grove_fof_catalogue *out)
{
    int P = mpi->size;
    size_t rw = row_words(w);
    int *counts = grove__malloc(2 * (size_t)P * sizeof *counts, "fof catalogue"), *displs = counts ? counts + P : NULL;
    int64_t *send = grove__malloc((mine->groups ? mine->groups : 1) * rw * sizeof *send, "fof catalogue");
    int64_t *all = grove__malloc((groups ? groups : 1) * rw * sizeof *all, "fof catalogue");
    grove_status s = counts && send && all ? GROVE_OK : GROVE_OUT_OF_MEMORY;
    if (s == GROVE_OK && groups * rw > INT_MAX)
        s = grove__fail(GROVE_TOO_LARGE, "fof: a catalogue of more than 2^31 - 1 words to share");
    if (s == GROVE_OK) s = grove__fof_catalogue_alloc(out, groups, w->d, w->vel);
    s = grove__mpi_agree(mpi, s, "fof");
    if (s == GROVE_OK) {
        for (int r = 0, at = 0; r < P; r++) {
            size_t k = groups > (size_t)r ? (groups - (size_t)r - 1) / (size_t)P + 1 : 0;
            counts[r] = (int)(k * rw);
            displs[r] = at;
            at += counts[r];
        }
        pack_rows(w, mine, row, send);
        MPI_Allgatherv(send, counts[mpi->rank], MPI_INT64_T, all, counts, displs, MPI_INT64_T, mpi->comm);
        grove__mpi_sent(mpi, (size_t)counts[mpi->rank] * (size_t)(P - 1) * sizeof *send);
        for (int r = 0; r < P; r++)
            for (size_t lg = 0; lg * rw < (size_t)counts[r]; lg++)
                unpack_row(w, all + displs[r] + lg * rw, (size_t)r + (size_t)P * lg, out);
    }
    grove__free(counts);
    grove__free(send);
    grove__free(all);
    return s;
}

grove_status grove__mpi_fof_catalogue(const grove_mpi *mpi, grove_points points, const double *mass,
                                      const double *velocity, int has_mass, int has_velocity, const int64_t *group,
                                      size_t groups, int threads, grove_fof_catalogue *out)
{
    memset(out, 0, sizeof *out);
    int P = mpi->size;
    unsigned long dims = points.n ? points.d : 0, d = 0;
    MPI_Allreduce(&dims, &d, 1, MPI_UNSIGNED_LONG, MPI_MAX, mpi->comm);
    wire w = {d, 2 + d + (size_t)has_mass + (has_velocity ? d : 0), has_mass, has_velocity};
    int *counts = grove__malloc(2 * (size_t)P * sizeof *counts, "fof catalogue"), *got = counts ? counts + P : NULL;
    int64_t *off = grove__malloc(((size_t)P + 1) * sizeof *off, "fof catalogue"), *buf = NULL, *recs = NULL;
    grove_status s = counts && off ? GROVE_OK : GROVE_OUT_OF_MEMORY;
    s = grove__mpi_agree(mpi, s, "fof");
    if (s == GROVE_OK) grove__mpi_offsets(mpi, points.n, off);
    if (s == GROVE_OK)
        s = grove__mpi_agree(mpi, pack(mpi, &w, points, mass, velocity, group, off[mpi->rank], &buf, counts), "fof");
    if (s == GROVE_OK)
        s = grove__mpi_alltoallv(mpi, "fof", buf, counts, MPI_INT64_T, sizeof *buf, (void **)&recs, got,
                                 "catalogue members");
    grove__free(buf);
    members mem = {0};
    grove_fof_catalogue mine = {0};
    size_t m = 0, k = groups > (size_t)mpi->rank ? (groups - (size_t)mpi->rank - 1) / (size_t)P + 1 : 0;
    for (int r = 0; s == GROVE_OK && r < P; r++) m += (size_t)got[r] / w.words;
    if (s == GROVE_OK) s = unpack(mpi, &w, recs, m, &mem);
    grove__free(recs);
    if (s == GROVE_OK)
        s = grove__fof_catalogue(grove_points_f64(mem.x, m, d), mem.mass, mem.vel, NULL, mem.group, k,
                                 threads, &mine);
    s = grove__mpi_agree(mpi, s, "fof");
    if (s == GROVE_OK) s = share_rows(mpi, &w, &mine, mem.row, groups, out);
    grove_fof_catalogue_free(&mine);
    members_free(&mem);
    grove__free(counts);
    grove__free(off);
    if (s != GROVE_OK) grove_fof_catalogue_free(out);
    return s;
}
