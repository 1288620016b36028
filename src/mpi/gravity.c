/* The distributed grove_gravity (docs/mpi.md). Rank r holds rows offset_r
 * .. offset_r + n_r - 1 of the global particles (the join's contract) and
 * gets back its rows' accelerations and potentials.
 *
 * 1. Units of the whole system: the bounding box and the largest mass by
 *    reductions, then grove__nb_units_from, so every rank scales alike
 *    (and one rank as the single-process call does).
 * 2. Domains: Morton keys of the scaled positions in the global bounding
 *    cube, P key ranges by a sample sort, particles (row, position, mass)
 *    migrated (decompose.c); each rank gets its range sorted by row.
 * 3. Each rank builds its tree, moments and groups with the engine, then
 *    the locally essential trees are exchanged (let.c), and every group
 *    walks the local tree and then each remote tree in rank order.
 * 4. Results go back to their rows' ranks by MPI_Alltoallv; the stats are
 *    summed (depth: the deepest) over the ranks. */
#include "forces.h"

#include "../index/index.h"
#include "../nbody/nbody.h"

#include <math.h>
#include <string.h>

typedef struct particle {
    int64_t row;
    double x[3], m;
} particle;

typedef struct result {
    int64_t row;
    double a[3], pot;
} result;

grove_status grove__mpi_units(const grove_mpi *mpi, const double *pos, const double *mass, size_t n, size_t total,
                              const grove_gravity_params *p, bool potentials, int threads, grove__nb_units *u,
                              double lo[3], double hi[3])
{
    double v[7] = {INFINITY, INFINITY, INFINITY, INFINITY, INFINITY, INFINITY, 0}, w[7];
    double mmax = 0;
    if (n) {
        grove__bounds3(pos, n, threads, lo, hi);
        for (int a = 0; a < 3; a++) {
            v[a] = lo[a];
            v[3 + a] = -hi[a];
        }
    }
    for (size_t i = 0; i < n; i++) mmax = mass[i] > mmax ? mass[i] : mmax;
    v[6] = -mmax;
    MPI_Allreduce(v, w, 7, MPI_DOUBLE, MPI_MIN, mpi->comm);
    for (int a = 0; a < 3; a++) {
        lo[a] = w[a];
        hi[a] = -w[3 + a];
    }
    return grove__nb_units_from(lo, hi, -w[6], total, p, potentials, u);
}

void grove__mpi_frame(const grove__nb_units *u, const double lo[3], const double hi[3], double clo[3],
                      double chi[3])
{
    double side = 0;
    for (int a = 0; a < 3; a++) {
        clo[a] = (lo[a] - u->origin[a]) * u->to_length;
        double sa = (hi[a] - u->origin[a]) * u->to_length - clo[a];
        side = sa > side ? sa : side;
    }
    for (int a = 0; a < 3; a++) chi[a] = clo[a] + side;
}

/* This rank's particles as records, sent to their domains: Morton keys of
 * the scaled positions in the global bounding cube, ranges by a sample
 * sort (decompose.c). One rank keeps them in row order, as decompose would
 * hand them back. */
static grove_status migrate(const grove_mpi *mpi, const double *pos, const double *mass, size_t n, int64_t first,
                            const grove__nb_units *u, const double lo[3], const double hi[3], int threads,
                            particle **mine, size_t *m)
{
    particle *rec = grove__malloc((n ? n : 1) * sizeof *rec, "gravity particles");
    grove_status s = grove__mpi_agree(mpi, rec ? GROVE_OK : GROVE_OUT_OF_MEMORY, "gravity");
    for (size_t i = 0; s == GROVE_OK && i < n; i++) {
        rec[i].row = first + (int64_t)i;
        rec[i].m = mass[i];
        for (int a = 0; a < 3; a++) rec[i].x[a] = pos[3 * i + a];
    }
    if (s == GROVE_OK && mpi->size == 1) {
        *mine = rec;
        *m = n;
        return GROVE_OK;
    }
    double *scaled = NULL;
    uint64_t *keys = NULL;
    if (s == GROVE_OK) {
        scaled = grove__malloc((n ? n : 1) * 3 * sizeof *scaled, "gravity particles");
        keys = grove__malloc((n ? n : 1) * sizeof *keys, "gravity keys");
        s = grove__mpi_agree(mpi, scaled && keys ? GROVE_OK : GROVE_OUT_OF_MEMORY, "gravity");
    }
    if (s == GROVE_OK) {
        double clo[3], chi[3];
        grove__mpi_frame(u, lo, hi, clo, chi);
        for (size_t i = 0; i < 3 * n; i++) scaled[i] = (pos[i] - u->origin[i % 3]) * u->to_length;
        grove__morton_codes(grove_points_f64(scaled, n, 3), 1, clo, chi, keys, threads);
        void *got = NULL;
        s = grove__mpi_decompose(mpi, keys, rec, sizeof *rec, n, 1, threads, NULL, &got, m);
        *mine = got;
    }
    grove__free(rec);
    grove__free(scaled);
    grove__free(keys);
    return s;
}

/* The m results (local acc 3 m, pot m or NULL) back to their rows. */
static grove_status send_home(const grove_mpi *mpi, const int64_t *row, size_t m, const double *lacc,
                              const double *lpot, const int64_t *offsets, double *acc, double *pot)
{
    int P = mpi->size;
    result *out = grove__malloc((m ? m : 1) * sizeof *out, "gravity results");
    int *counts = grove__calloc(2 * (size_t)P, sizeof *counts, "gravity results");
    grove_status s = grove__mpi_agree(mpi, out && counts ? GROVE_OK : GROVE_OUT_OF_MEMORY, "gravity");
    void *got = NULL;
    size_t k = 0;
    if (s == GROVE_OK) {
        /* Sorted by row, the records of each home rank are consecutive. */
        for (size_t i = 0; i < m; i++) {
            out[i].row = row[i];
            for (int a = 0; a < 3; a++) out[i].a[a] = lacc[3 * i + a];
            out[i].pot = lpot ? lpot[i] : 0;
            counts[grove__mpi_home(offsets, P, row[i])]++;
        }
        s = grove__mpi_alltoallv_records(mpi, "gravity", out, counts, sizeof(result), &got, counts + P, &k,
                                         "results");
    }
    const result *back = got;
    for (size_t i = 0; s == GROVE_OK && i < k; i++) {
        size_t at = (size_t)(back[i].row - offsets[mpi->rank]);
        for (int a = 0; a < 3; a++) acc[3 * at + a] = back[i].a[a];
        if (pot) pot[at] = back[i].pot;
    }
    grove__free(got);
    grove__free(out);
    grove__free(counts);
    return s;
}

void grove__mpi_reduce_stats(const grove_mpi *mpi, grove_gravity_stats *st)
{
    double d[3] = {st->particle_interactions, st->cell_interactions, st->flops};
    uint64_t c[3] = {st->cells, st->leaves, st->groups};
    MPI_Allreduce(MPI_IN_PLACE, d, 3, MPI_DOUBLE, MPI_SUM, mpi->comm);
    MPI_Allreduce(MPI_IN_PLACE, c, 3, MPI_UINT64_T, MPI_SUM, mpi->comm);
    MPI_Allreduce(MPI_IN_PLACE, &st->depth, 1, MPI_INT, MPI_MAX, mpi->comm);
    st->particle_interactions = d[0];
    st->cell_interactions = d[1];
    st->flops = d[2];
    st->cells = (size_t)c[0];
    st->leaves = (size_t)c[1];
    st->groups = (size_t)c[2];
}

/* The lowest global row whose result is not finite (bad: this rank's
 * lowest local one, UINT32_MAX for none) is the error on its rank. */
static grove_status agree_overflow(const grove_mpi *mpi, const grove__gravity *g, const int64_t *rows, uint32_t bad,
                                   const double *lacc, const double *lpot)
{
    int64_t row = bad == UINT32_MAX ? INT64_MAX : rows[bad], lowest;
    MPI_Allreduce(&row, &lowest, 1, MPI_INT64_T, MPI_MIN, mpi->comm);
    if (lowest == INT64_MAX) return GROVE_OK;
    grove_status s = row == lowest ? grove__gravity_overflow(g, bad, lacc, lpot, row) : GROVE_OK;
    return grove__mpi_agree(mpi, s, "gravity");
}

void grove__mpi_phase_begin(const grove_mpi *mpi, grove__mpi_phases *ph)
{
    ph->began = MPI_Wtime();
    ph->sent = mpi->bytes_sent;
}

void grove__mpi_phase_end(const grove_mpi *mpi, grove__mpi_phases *ph, grove_mpi_phase k)
{
    ph->seconds[k] += MPI_Wtime() - ph->began;
    ph->bytes[k] += mpi->bytes_sent - ph->sent;
}

grove_status grove__mpi_forces(const grove_mpi *mpi, grove__gravity *g, const double *pos, const double *mass,
                               const int64_t *row, size_t m, const uint8_t *active, const grove_gravity_params *p,
                               const grove__nb_units *u, int threads, double *acc, double *pot,
                               grove_gravity_stats *st, grove__mpi_phases *ph)
{
    grove__mpi_phase_begin(mpi, ph);
    grove_status s = m ? grove__gravity_prepare(g, pos, mass, m, active, p, u, threads) : GROVE_OK;
    grove__mpi_phase_end(mpi, ph, GROVE_MPI_PHASE_TREE);
    s = grove__mpi_agree(mpi, s, "gravity");
    grove__mpi_let let;
    memset(&let, 0, sizeof let);
    grove__mpi_phase_begin(mpi, ph);
    if (s == GROVE_OK) s = grove__mpi_let_exchange(mpi, m ? g : NULL, threads, &let);
    grove__mpi_phase_end(mpi, ph, GROVE_MPI_PHASE_LET);
    double npp = 0, npc = 0;
    grove__mpi_phase_begin(mpi, ph);
    if (s == GROVE_OK && m)
        s = grove__gravity_forces(g, p->theta, u->softening * u->softening, let.src, let.nsrc, threads, &npp, &npc);
    grove__mpi_phase_end(mpi, ph, GROVE_MPI_PHASE_WALK);
    grove__mpi_let_free(&let);
    s = grove__mpi_agree(mpi, s, "gravity");
    if (s != GROVE_OK) return s;
    grove__mpi_phase_begin(mpi, ph);
    uint32_t bad = m ? grove__gravity_results(g, u, acc, pot, threads) : UINT32_MAX;
    s = agree_overflow(mpi, g, row, bad, acc, pot);
    grove__mpi_phase_end(mpi, ph, GROVE_MPI_PHASE_HOME);
    memset(st, 0, sizeof *st);
    if (s == GROVE_OK && m) grove__gravity_stats(g, npp, npc, st);
    return s;
}

/* The domain's particles as the columns grove__mpi_forces takes. */
static grove_status columns(const particle *mine, size_t m, double **pos, double **mass, int64_t **row)
{
    *pos = grove__malloc((m ? m : 1) * 3 * sizeof **pos, "gravity particles");
    *mass = grove__malloc((m ? m : 1) * sizeof **mass, "gravity particles");
    *row = grove__malloc((m ? m : 1) * sizeof **row, "gravity particles");
    if (!*pos || !*mass || !*row) return GROVE_OUT_OF_MEMORY;
    for (size_t i = 0; i < m; i++) {
        for (int a = 0; a < 3; a++) (*pos)[3 * i + a] = mine[i].x[a];
        (*mass)[i] = mine[i].m;
        (*row)[i] = mine[i].row;
    }
    return GROVE_OK;
}

/* The distributed call on every rank's checked arguments (checked: this
 * rank's check, agreed on first); pos n x 3 packed doubles. */
static grove_status gravity(grove_status checked, const double *pos, const double *mass, size_t n,
                            const grove_gravity_params *p, double *acc, double *pot, grove_gravity_stats *stats,
                            const grove_options *options)
{
    grove_mpi *mpi = (grove_mpi *)(uintptr_t)options->mpi;
    int P = mpi->size, threads = grove__options(options).threads;
    grove_status s = checked;
    if (s == GROVE_OK && n > 0 && !acc) s = grove__fail(GROVE_INVALID_ARGUMENT, "gravity: acc is NULL");
    /* The parameters and whether potentials are wanted, the same on every
     * rank (lowest and highest of each). */
    double v[6] = {p->theta, p->softening, p->G, (double)p->leaf_size, (double)p->group_size, pot != NULL};
    double lo[6], hi[6];
    MPI_Allreduce(v, lo, 6, MPI_DOUBLE, MPI_MIN, mpi->comm);
    MPI_Allreduce(v, hi, 6, MPI_DOUBLE, MPI_MAX, mpi->comm);
    int all_pot = lo[5] > 0;
    if (s == GROVE_OK && memcmp(lo, hi, sizeof lo) != 0)
        s = grove__fail(GROVE_INVALID_ARGUMENT, "gravity: the ranks differ in parameters or in asking for pot");
    if (s == GROVE_OK && grove__cancelled(options)) s = grove__fail(GROVE_CANCELLED, "gravity: cancelled");
    s = grove__mpi_agree(mpi, s, "gravity");
    if (s != GROVE_OK) return s;
    int64_t *offsets = grove__malloc(((size_t)P + 1) * sizeof *offsets, "gravity offsets");
    s = grove__mpi_agree(mpi, offsets ? GROVE_OK : GROVE_OUT_OF_MEMORY, "gravity");
    if (s != GROVE_OK) return s;
    grove__mpi_offsets(mpi, n, offsets);
    size_t total = (size_t)offsets[P];
    mpi->held = 0;
    grove__mpi_phases ph;
    memset(&ph, 0, sizeof ph);
    memset(mpi->phase_seconds, 0, sizeof mpi->phase_seconds);
    memset(mpi->phase_bytes, 0, sizeof mpi->phase_bytes);
    grove__mpi_phase_begin(mpi, &ph);
    if (total > GROVE__OCT_MAX_N)
        s = grove__fail(GROVE_TOO_LARGE, "gravity: n = %zu particles; at most %zu are supported", total,
                        GROVE__OCT_MAX_N);
    grove__nb_units u;
    double blo[3], bhi[3];
    if (s == GROVE_OK && total > 0)
        s = grove__mpi_agree(mpi, grove__mpi_units(mpi, pos, mass, n, total, p, all_pot, threads, &u, blo, bhi),
                             "gravity");
    particle *mine = NULL;
    size_t m = 0;
    if (s == GROVE_OK && total > 0)
        s = migrate(mpi, pos, mass, n, offsets[mpi->rank], &u, blo, bhi, threads, &mine, &m);
    grove__mpi_phase_end(mpi, &ph, GROVE_MPI_PHASE_DECOMPOSE);
    double *lpos = NULL, *lmass = NULL, *lacc = NULL, *lpot = NULL;
    int64_t *lrow = NULL;
    if (s == GROVE_OK && total > 0) {
        s = columns(mine, m, &lpos, &lmass, &lrow);
        grove__free(mine);
        mine = NULL;
        lacc = grove__malloc((m ? m : 1) * 3 * sizeof *lacc, "gravity results");
        lpot = all_pot ? grove__malloc((m ? m : 1) * sizeof *lpot, "gravity results") : NULL;
        if (!lacc || (all_pot && !lpot)) s = GROVE_OUT_OF_MEMORY;
        s = grove__mpi_agree(mpi, s, "gravity");
    }
    grove_gravity_stats st;
    memset(&st, 0, sizeof st);
    grove__gravity g;
    memset(&g, 0, sizeof g);
    g.options = options;
    if (s == GROVE_OK && total > 0)
        s = grove__mpi_forces(mpi, &g, lpos, lmass, lrow, m, NULL, p, &u, threads, lacc, lpot, &st, &ph);
    grove__gravity_free(&g);
    grove__mpi_phase_begin(mpi, &ph);
    if (s == GROVE_OK && total > 0) s = send_home(mpi, lrow, m, lacc, lpot, offsets, acc, pot);
    grove__mpi_phase_end(mpi, &ph, GROVE_MPI_PHASE_HOME);
    if (s == GROVE_OK) {
        grove__mpi_reduce_stats(mpi, &st);
        if (stats) *stats = st;
        mpi->held = (int64_t)m;
        memcpy(mpi->phase_seconds, ph.seconds, sizeof ph.seconds);
        memcpy(mpi->phase_bytes, ph.bytes, sizeof ph.bytes);
    }
    grove__free(mine);
    grove__free(lpos);
    grove__free(lmass);
    grove__free(lrow);
    grove__free(lacc);
    grove__free(lpot);
    grove__free(offsets);
    return s;
}

grove_status grove__mpi_gravity(grove_points positions, const double *mass, const grove_gravity_params *params,
                                double *acc, double *pot, grove_gravity_stats *stats, const grove_options *options)
{
    grove_gravity_params p;
    const double *pos = NULL;
    double *copy = NULL;
    size_t first = grove__mpi_first_row(options, positions.n);
    grove_status s = grove__gravity_begin(positions, mass, params, first, &p, &pos, &copy, stats);
    /* Every rank takes part, whatever its own check said. */
    s = gravity(s, pos, mass, positions.n, &p, acc, pot, stats, options);
    grove__free(copy);
    return s;
}
