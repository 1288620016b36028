/* The distributed simulation (docs/mpi.md, "Distributed N-body"; Bonsai's
 * parallel design, simplified). Each rank holds the particles of its
 * domain, sorted by global row: a contiguous range of (Morton key, row)
 * in a frame (a cube of the scaled positions) kept from the last
 * decomposition.
 *
 *  - Creation: each rank's part of the rows is cut into domains by a
 *    sample sort of the keys (decompose.c), and the particles migrate.
 *  - Each step's start (every particle synchronised): the interaction
 *    flops every rank computed since the last decomposition are compared;
 *    when the most exceeds the mean by more than GROVE_NBODY_REBALANCE,
 *    the domains are cut again in a new frame with every particle's
 *    samples weighted by its rank's flops per particle (so the domains
 *    balance work, as Bonsai weights them by time; flops are counted, so
 *    a run is the same on every repetition).
 *  - After every drift, before the forces: the particles whose key left
 *    the rank's range move to the rank that owns it, and merge by row with
 *    the ones that stayed into a second set of arrays kept for the
 *    purpose (no allocation in the steady state). A particle left on the
 *    wrong side of a cut for the forces would stretch its group's box
 *    over the neighbour's domain, whose cells the group would then open.
 *  - Forces: global units by reductions, the local tree and the locally
 *    essential trees of the others (let.c), the walks (grove__mpi_forces).
 *  - Sums (diagnostics, the net force, the adaptive step, the block
 *    steps' levels) are each rank's sum in row order, then MPI_Allreduce:
 *    on one rank the single-process bits.
 *  - Checkpoints and snapshots are gathered on rank 0 in row order and
 *    written in the single-process format; a checkpoint is read on rank 0
 *    and its row blocks scattered, so it resumes on any number of ranks. */
#include "forces.h"

#include "../index/index.h"
#include "../nbody/nbody.h"
#include "../nbody/sim_internal.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

struct grove__nbody_dist {
    grove_mpi *mpi;
    size_t total;
    grove__mpi_cut *cut;                           /* the P - 1 domain boundaries */
    double origin[3], to_length, clo[3], chi[3];   /* the frame: keys of (x - origin) to_length in clo..chi */
    double cost;                                   /* this rank's interaction flops since the last decomposition */
    uint64_t decompositions, migrated;
    grove__mpi_phases ph;                          /* summed over the run (grove_nbody_rank_stats) */
    size_t cap;                                    /* particles the simulation's arrays have room for */
    struct spare {                                 /* the arrays the next migration fills */
        double *state;
        uint8_t *level;
        int64_t *row;
        size_t cap;
    } spare;
};

/* What the simulation asks of its ranks, answered over MPI (the table is
 * at the end of the file); a distributed handle's sim->ranks. */
static const grove__nbody_ranks ranks;

/* A particle on the wire (no padding bytes). */
typedef struct body {
    int64_t row;
    double x[3], v[3], a[3], m, pot;
    uint64_t level;
} body;

_Static_assert(sizeof(body) == 13 * 8, "a body has no padding");
_Static_assert(sizeof(((grove_nbody_rank_stats *)0)->seconds) == GROVE_MPI_PHASES * sizeof(double),
               "grove_nbody_rank_stats has a slot for every phase");

static size_t total(const grove_nbody *sim) { return sim->dist->total; }

static void sum(const grove_nbody *sim, double *v, int count)
{
    MPI_Allreduce(MPI_IN_PLACE, v, count, MPI_DOUBLE, MPI_SUM, sim->dist->mpi->comm);
}

static void max(const grove_nbody *sim, double *v, int count)
{
    MPI_Allreduce(MPI_IN_PLACE, v, count, MPI_DOUBLE, MPI_MAX, sim->dist->mpi->comm);
}

static uint32_t any(const grove_nbody *sim, uint32_t bits)
{
    MPI_Allreduce(MPI_IN_PLACE, &bits, 1, MPI_UINT32_T, MPI_BOR, sim->dist->mpi->comm);
    return bits;
}

static grove_status agree(const grove_nbody *sim, grove_status s)
{
    return grove__mpi_agree(sim->dist->mpi, s, "nbody");
}

static grove_status check(const grove_nbody *sim, const grove_options *options)
{
    const grove_mpi *mpi = options ? options->mpi : NULL;
    if (mpi != sim->dist->mpi)
        return grove__fail(GROVE_INVALID_ARGUMENT, "nbody: this simulation runs on the %d ranks of the MPI context it "
                           "was made with: pass that context in options.mpi", sim->dist->mpi->size);
    return GROVE_OK;
}

/* The frame of the particles now: the cube of their bounding box. */
static grove_status new_frame(grove_nbody *sim, int threads)
{
    struct grove__nbody_dist *d = sim->dist;
    grove__nb_units u;
    double lo[3], hi[3];
    grove_status s = grove__mpi_units(d->mpi, sim->pos, sim->mass, sim->n, d->total, &sim->params.gravity, false,
                                      threads, &u, lo, hi);
    s = grove__mpi_agree(d->mpi, s, "nbody domains");
    if (s != GROVE_OK) return s;
    memcpy(d->origin, u.origin, sizeof d->origin);
    d->to_length = u.to_length;
    grove__mpi_frame(&u, lo, hi, d->clo, d->chi);
    return GROVE_OK;
}

/* The particles' keys in the frame (a particle outside it takes the key
 * of the nearest point of the cube). */
static bool frame_keys(const grove_nbody *sim, int threads, uint64_t *keys)
{
    const struct grove__nbody_dist *d = sim->dist;
    size_t n = sim->n;
    double *scaled = grove__malloc((n ? n : 1) * 3 * sizeof *scaled, "nbody keys");
    if (!scaled) return false;
    for (size_t i = 0; i < 3 * n; i++) scaled[i] = (sim->pos[i] - d->origin[i % 3]) * d->to_length;
    grove__morton_codes(grove_points_f64(scaled, n, 3), 1, d->clo, d->chi, keys, threads);
    grove__free(scaled);
    return true;
}

/* Particle i of sim as a body. */
static void pack_one(const grove_nbody *sim, size_t i, body *b)
{
    b->row = sim->row[i];
    for (int a = 0; a < 3; a++) {
        b->x[a] = sim->pos[3 * i + a];
        b->v[a] = sim->vel[3 * i + a];
        b->a[a] = sim->acc[3 * i + a];
    }
    b->m = sim->mass[i];
    b->pot = sim->pot[i];
    b->level = sim->level[i];
}

/* Body b as particle i of the arrays `to` (laid out for its n particles). */
static void unpack_one(const body *b, grove_nbody *to, size_t i)
{
    to->row[i] = b->row;
    for (int a = 0; a < 3; a++) {
        to->pos[3 * i + a] = b->x[a];
        to->vel[3 * i + a] = b->v[a];
        to->acc[3 * i + a] = b->a[a];
    }
    to->mass[i] = b->m;
    to->pot[i] = b->pot;
    to->level[i] = (uint8_t)b->level;
}

static void spare_free(struct spare *a)
{
    grove__free(a->state);
    grove__free(a->level);
    grove__free(a->row);
    memset(a, 0, sizeof *a);
}

/* The spare arrays laid out for m particles (in *view's array pointers;
 * grown, with room to spare, when they are smaller); false when out of
 * memory. */
static bool spare_view(struct grove__nbody_dist *d, size_t m, grove_nbody *view)
{
    struct spare *a = &d->spare;
    if (a->cap < m || !a->state) {
        spare_free(a);
        size_t cap = m + m / 8 + 64;
        a->state = grove__malloc(11 * cap * sizeof *a->state, "nbody particles");
        a->level = grove__calloc(2 * cap + 1, 1, "nbody particles");
        a->row = grove__malloc(cap * sizeof *a->row, "nbody particles");
        if (!a->state || !a->level || !a->row) {
            spare_free(a);
            return false;
        }
        a->cap = cap;
    }
    memset(view, 0, sizeof *view);
    grove__nbody_place(view, a->state, a->level, a->row, m);
    return true;
}

/* The spare arrays (filled for m particles) become sim's, and sim's the spare. */
static void swap_in(grove_nbody *sim, size_t m)
{
    struct grove__nbody_dist *d = sim->dist;
    struct spare old = {sim->state, sim->level, sim->row, d->cap};
    grove__nbody_place(sim, d->spare.state, d->spare.level, d->spare.row, m);
    d->cap = d->spare.cap;
    d->spare = old;
}

/* sim's particles replaced by the m bodies b. */
static grove_status adopt(grove_nbody *sim, const body *b, size_t m)
{
    grove_nbody view;
    if (!spare_view(sim->dist, m, &view)) return GROVE_OUT_OF_MEMORY;
    for (size_t i = 0; i < m; i++) unpack_one(b + i, &view, i);
    swap_in(sim, m);
    return GROVE_OK;
}

static int by_row(const void *a, const void *b)
{
    int64_t x = ((const body *)a)->row, y = ((const body *)b)->row;
    return (x > y) - (x < y);
}

/* The particles whose key left this rank's range (dest[i] != rank) go to
 * their domains' ranks; the arrivals merge by row with those that stayed
 * (both sorted by row) into the spare arrays. */
static grove_status send_leavers(grove_nbody *sim, const int *dest)
{
    struct grove__nbody_dist *d = sim->dist;
    const grove_mpi *mpi = d->mpi;
    int P = mpi->size, rank = mpi->rank;
    size_t n = sim->n, leaving = 0;
    int *counts = grove__calloc(3 * (size_t)P, sizeof *counts, "nbody migration");
    grove_status s = counts ? GROVE_OK : GROVE_OUT_OF_MEMORY;
    for (size_t i = 0; s == GROVE_OK && i < n; i++)
        if (dest[i] != rank) {
            counts[dest[i]]++;
            leaving++;
        }
    body *send = grove__malloc((leaving ? leaving : 1) * sizeof *send, "nbody migration");
    s = grove__mpi_agree(mpi, s == GROVE_OK && send ? GROVE_OK : GROVE_OUT_OF_MEMORY, "nbody migration");
    void *got = NULL;
    size_t arrived = 0;
    if (s == GROVE_OK) {
        int *at = counts + 2 * P;
        for (int r = 1; r < P; r++) at[r] = at[r - 1] + counts[r - 1];
        for (size_t i = 0; i < n; i++)
            if (dest[i] != rank) pack_one(sim, i, send + at[dest[i]]++);
        s = grove__mpi_alltoallv_records(mpi, "nbody", send, counts, sizeof(body), &got, counts + P, &arrived,
                                         "particles");
    }
    grove_nbody view;
    if (s == GROVE_OK)
        s = grove__mpi_agree(mpi, spare_view(d, n - leaving + arrived, &view) ? GROVE_OK : GROVE_OUT_OF_MEMORY,
                             "nbody migration");
    if (s == GROVE_OK) {
        body *in = got;
        qsort(in, arrived, sizeof *in, by_row);
        size_t k = 0, j = 0;
        for (size_t i = 0; i <= n; i++) {
            bool stays = i < n && dest[i] == rank;
            while (j < arrived && (i == n || (stays && in[j].row < sim->row[i]))) unpack_one(in + j++, &view, k++);
            if (!stays) continue;
            body b;
            pack_one(sim, i, &b);
            unpack_one(&b, &view, k++);
        }
        swap_in(sim, k);
        d->migrated += leaving;
    }
    grove__free(got);
    grove__free(send);
    grove__free(counts);
    return s;
}

/* New domains in a new frame, each of this rank's particles weighing
 * `weight`: every particle to its domain's rank. */
static grove_status decompose(grove_nbody *sim, int threads, double weight)
{
    struct grove__nbody_dist *d = sim->dist;
    const grove_mpi *mpi = d->mpi;
    size_t n = sim->n, m = 0;
    body *b = grove__malloc((n ? n : 1) * sizeof *b, "nbody particles");
    uint64_t *keys = grove__malloc((n ? n : 1) * sizeof *keys, "nbody keys");
    grove_status s = grove__mpi_agree(mpi, b && keys ? GROVE_OK : GROVE_OUT_OF_MEMORY, "nbody domains");
    if (s == GROVE_OK) s = new_frame(sim, threads);
    if (s == GROVE_OK) s = grove__mpi_agree(mpi, frame_keys(sim, threads, keys) ? GROVE_OK : GROVE_OUT_OF_MEMORY,
                                            "nbody domains");
    void *got = NULL;
    for (size_t i = 0; s == GROVE_OK && i < n; i++) pack_one(sim, i, b + i);
    if (s == GROVE_OK) s = grove__mpi_decompose(mpi, keys, b, sizeof *b, n, weight, threads, d->cut, &got, &m);
    if (s == GROVE_OK) s = grove__mpi_agree(mpi, adopt(sim, got, m), "nbody domains");
    if (s == GROVE_OK) d->decompositions++;
    grove__free(got);
    grove__free(b);
    grove__free(keys);
    return s;
}

/* The kept domains: the particles that left this rank's go to their
 * owners (nothing is sent when no particle crossed anywhere). */
static grove_status migrate(grove_nbody *sim, int threads)
{
    struct grove__nbody_dist *d = sim->dist;
    const grove_mpi *mpi = d->mpi;
    size_t n = sim->n;
    uint64_t *keys = grove__malloc((n ? n : 1) * sizeof *keys, "nbody keys");
    int *dest = grove__malloc((n ? n : 1) * sizeof *dest, "nbody keys");
    grove_status s = grove__mpi_agree(mpi, keys && dest && frame_keys(sim, threads, keys) ? GROVE_OK
                                                                                         : GROVE_OUT_OF_MEMORY,
                                      "nbody domains");
    double leaving = 0;
    for (size_t i = 0; s == GROVE_OK && i < n; i++) {
        dest[i] = grove__mpi_domain(d->cut, mpi->size, keys[i], sim->row[i]);
        leaving += dest[i] != mpi->rank;
    }
    if (s == GROVE_OK) MPI_Allreduce(MPI_IN_PLACE, &leaving, 1, MPI_DOUBLE, MPI_SUM, mpi->comm);
    if (s == GROVE_OK && leaving > 0) s = send_leavers(sim, dest);
    grove__free(keys);
    grove__free(dest);
    return s;
}

static grove_status migrate_domains(grove_nbody *sim, int threads)
{
    struct grove__nbody_dist *d = sim->dist;
    if (d->mpi->size == 1 || d->total == 0) return GROVE_OK;
    grove__mpi_phase_begin(d->mpi, &d->ph);
    grove_status s = migrate(sim, threads);
    grove__mpi_phase_end(d->mpi, &d->ph, GROVE_MPI_PHASE_DECOMPOSE);
    return s;
}

static grove_status balance(grove_nbody *sim, int threads)
{
    struct grove__nbody_dist *d = sim->dist;
    if (d->mpi->size == 1 || d->total == 0) return GROVE_OK;
    grove__mpi_phase_begin(d->mpi, &d->ph);
    double most = d->cost, sum = d->cost;
    MPI_Allreduce(MPI_IN_PLACE, &most, 1, MPI_DOUBLE, MPI_MAX, d->mpi->comm);
    MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPI_DOUBLE, MPI_SUM, d->mpi->comm);
    double mean = sum / d->mpi->size;
    bool rebalance = mean > 0 && most > (1 + GROVE_NBODY_REBALANCE) * mean;
    /* This rank's flops per particle over the mean's: 1 for a rank
     * without particles or flops (its samples are few or none). */
    double weight = sim->n && d->cost > 0 ? d->cost / (double)sim->n / (sum / (double)d->total) : 1;
    grove_status s = rebalance ? decompose(sim, threads, weight) : GROVE_OK;
    if (s == GROVE_OK && rebalance) d->cost = 0;
    grove__mpi_phase_end(d->mpi, &d->ph, GROVE_MPI_PHASE_DECOMPOSE);
    return s;
}

/* Every rank's simulation parameters the same (lowest and highest of each). */
static grove_status same_params(const grove_mpi *mpi, const grove_nbody_params *p)
{
    const grove_gravity_params *g = &p->gravity;
    double v[10] = {g->theta, g->softening, g->G, (double)g->leaf_size, (double)g->group_size,
                    p->dt, p->eta, p->conserve_momentum != 0, (double)p->timestep, (double)p->max_level};
    double lo[10], hi[10];
    MPI_Allreduce(v, lo, 10, MPI_DOUBLE, MPI_MIN, mpi->comm);
    MPI_Allreduce(v, hi, 10, MPI_DOUBLE, MPI_MAX, mpi->comm);
    return memcmp(lo, hi, sizeof lo) == 0
               ? GROVE_OK
               : grove__fail(GROVE_INVALID_ARGUMENT, "nbody: the ranks differ in the simulation's parameters");
}

/* Collective over options->mpi: *sim (this rank's part of the rows in
 * rank order, rows 0.. of its own; NULL when `checked` failed) becomes a
 * distributed simulation: the ranks agree on checked and the parameters,
 * rows become global, and the particles go to their domains. On failure
 * *sim is freed and NULL. The caller then evaluates the forces. */
static grove_status distribute(grove_nbody **simp, grove_status checked, const grove_options *options)
{
    grove_mpi *mpi = (grove_mpi *)(uintptr_t)options->mpi;
    grove_nbody *sim = *simp;
    int P = mpi->size;
    grove_status s = grove__mpi_agree(mpi, checked, "nbody");
    if (s == GROVE_OK) s = same_params(mpi, &sim->params);
    struct grove__nbody_dist *d = NULL;
    if (s == GROVE_OK) {
        d = grove__calloc(1, sizeof *d, "nbody ranks");
        if (d) d->cut = grove__malloc((size_t)P * sizeof *d->cut, "nbody domains");
        s = grove__mpi_agree(mpi, d && d->cut ? GROVE_OK : GROVE_OUT_OF_MEMORY, "nbody");
    }
    if (s == GROVE_OK) {
        sim->ranks = &ranks;
        sim->dist = d;
        d->mpi = mpi;
        d->cap = sim->n;
        /* acc and pot (contiguous) travel with the particles before the
         * first evaluation writes them. */
        memset(sim->acc, 0, 4 * sim->n * sizeof *sim->acc);
        int64_t *offsets = grove__malloc(((size_t)P + 1) * sizeof *offsets, "nbody offsets");
        s = grove__mpi_agree(mpi, offsets ? GROVE_OK : GROVE_OUT_OF_MEMORY, "nbody");
        if (s == GROVE_OK) {
            grove__mpi_offsets(mpi, sim->n, offsets);
            d->total = (size_t)offsets[P];
            for (size_t i = 0; i < sim->n; i++) sim->row[i] += offsets[mpi->rank];
        }
        grove__free(offsets);
    }
    if (s == GROVE_OK && d->total > GROVE__OCT_MAX_N)
        s = grove__fail(GROVE_TOO_LARGE, "nbody: n = %zu particles; at most %zu are supported", d->total,
                        GROVE__OCT_MAX_N);
    /* One rank keeps its rows in order, as a decomposition would. */
    if (s == GROVE_OK && P > 1 && d->total > 0) {
        grove__mpi_phase_begin(mpi, &d->ph);
        s = decompose(sim, grove__options(options).threads, 1);
        grove__mpi_phase_end(mpi, &d->ph, GROVE_MPI_PHASE_DECOMPOSE);
    } else if (s == GROVE_OK) {
        d->decompositions = 1;
    }
    if (s != GROVE_OK) {
        if (d && (!sim || sim->dist != d)) {
            grove__free(d->cut);
            grove__free(d);
        }
        grove_nbody_free(sim);
        *simp = NULL;
    }
    return s;
}

static void release(grove_nbody *sim)
{
    spare_free(&sim->dist->spare);
    grove__free(sim->dist->cut);
    grove__free(sim->dist);
    sim->dist = NULL;
}

/* A distributed step stops for a cancel only at its start, where the
 * ranks agree on it: the engine is given no options. */
static grove_status forces(grove_nbody *sim, const uint8_t *active, const grove_options *options)
{
    struct grove__nbody_dist *d = sim->dist;
    const grove_gravity_params *p = &sim->params.gravity;
    int threads = grove__options(options).threads;
    grove__nb_units u;
    double lo[3], hi[3];
    grove__mpi_phase_begin(d->mpi, &d->ph);
    grove_status s = grove__mpi_units(d->mpi, sim->pos, sim->mass, sim->n, d->total, p, true, threads, &u, lo, hi);
    grove__mpi_phase_end(d->mpi, &d->ph, GROVE_MPI_PHASE_DECOMPOSE);
    s = grove__mpi_agree(d->mpi, s, "nbody");
    grove_gravity_stats st;
    if (s == GROVE_OK)
        s = grove__mpi_forces(d->mpi, &sim->engine, sim->pos, sim->mass, sim->row, sim->n, active, p, &u, threads,
                              sim->acc, sim->pot, &st, &d->ph);
    if (s != GROVE_OK) return s;
    d->cost += st.flops;
    grove__mpi_reduce_stats(d->mpi, &st);
    sim->stats = st;
    return GROVE_OK;
}

/* Collective: every rank's particle count and rows, on rank 0 (rows,
 * counts and displs allocated there, total entries; NULL elsewhere). */
static grove_status gather_rows(const grove_nbody *sim, int64_t **rows, int **counts)
{
    const grove_mpi *mpi = sim->dist->mpi;
    int P = mpi->size, root = mpi->rank == 0;
    *rows = NULL;
    *counts = NULL;
    grove_status s = sim->n > INT_MAX ? grove__fail(GROVE_TOO_LARGE, "nbody gather: more than 2^31 - 1 particles on "
                                                    "a rank") : GROVE_OK;
    if (root) {
        *rows = grove__malloc((sim->dist->total ? sim->dist->total : 1) * sizeof **rows, "nbody gather");
        *counts = grove__malloc(2 * (size_t)P * sizeof **counts, "nbody gather");
        if (!*rows || !*counts) s = GROVE_OUT_OF_MEMORY;
    }
    s = grove__mpi_agree(mpi, s, "nbody gather");
    if (s != GROVE_OK) return s;
    int mine = (int)sim->n, *displs = root ? *counts + P : NULL;
    MPI_Gather(&mine, 1, MPI_INT, *counts, 1, MPI_INT, 0, mpi->comm);
    for (int r = 0, at = 0; root && r < P; r++) {
        displs[r] = at;
        at += (*counts)[r];
    }
    MPI_Gatherv(sim->row, mine, MPI_INT64_T, *rows, *counts, displs, MPI_INT64_T, 0, mpi->comm);
    return GROVE_OK;
}

/* Collective: every rank's n values of elem bytes (local, in its particle
 * order) into out on rank 0, by global row. */
static grove_status gather_column(const grove_nbody *sim, const int64_t *rows, const int *counts, const void *local,
                                  size_t elem, void *out)
{
    const grove_mpi *mpi = sim->dist->mpi;
    size_t total = sim->dist->total;
    int root = mpi->rank == 0;
    char *all = root ? grove__malloc((total ? total : 1) * elem, "nbody gather") : NULL;
    grove_status s = grove__mpi_agree(mpi, !root || all ? GROVE_OK : GROVE_OUT_OF_MEMORY, "nbody gather");
    if (s != GROVE_OK) return s;
    MPI_Datatype t;
    MPI_Type_contiguous((int)elem, MPI_BYTE, &t);
    MPI_Type_commit(&t);
    MPI_Gatherv(local, (int)sim->n, t, all, counts, root ? counts + mpi->size : NULL, t, 0, mpi->comm);
    MPI_Type_free(&t);
    for (size_t j = 0; root && j < total; j++) memcpy((char *)out + (size_t)rows[j] * elem, all + j * elem, elem);
    grove__free(all);
    return GROVE_OK;
}

/* The columns of sim wanted on rank 0 (want: bit k for column k of
 * col[]), gathered by row. */
static grove_status gather(const grove_nbody *sim, unsigned want, void *const out[5])
{
    const void *col[5] = {sim->pos, sim->vel, sim->mass, sim->pot, sim->level};
    const size_t elem[5] = {3 * sizeof(double), 3 * sizeof(double), sizeof(double), sizeof(double), 1};
    int64_t *rows;
    int *counts;
    grove_status s = gather_rows(sim, &rows, &counts);
    for (int k = 0; s == GROVE_OK && k < 5; k++)
        if (want >> k & 1) s = gather_column(sim, rows, counts, col[k], elem[k], out[k]);
    grove__free(rows);
    grove__free(counts);
    return s;
}

static grove_status gather_to_root(const grove_nbody *sim, double *pos, double *vel, double *mass, double *pot,
                                   uint8_t *level)
{
    const grove_mpi *mpi = sim->dist->mpi;
    /* Rank 0 says which columns it wants. */
    unsigned want = (pos != NULL) | (vel != NULL) << 1 | (mass != NULL) << 2 | (pot != NULL) << 3 |
                    (level != NULL) << 4;
    MPI_Bcast(&want, 1, MPI_UNSIGNED, 0, mpi->comm);
    void *out[5] = {pos, vel, mass, pot, level};
    return gather(sim, want, out);
}

/* Collective: a handle on the root rank (NULL elsewhere) holding every
 * rank's particles in row order with sim's time, step, parameters,
 * counts and application data, for a checkpoint (acc and pot are not
 * filled). */
static grove_status gather_whole(const grove_nbody *sim, grove_nbody **whole)
{
    const grove_mpi *mpi = sim->dist->mpi;
    *whole = NULL;
    grove_nbody *w = NULL;
    grove_status s = GROVE_OK;
    if (mpi->rank == 0) {
        s = grove__nbody_alloc(sim->dist->total, &sim->params, &w);
        if (s == GROVE_OK) s = grove_nbody_set_app_data(w, sim->app, sim->app_bytes);
    }
    s = grove__mpi_agree(mpi, s, "checkpoint");
    void *out[5] = {w ? w->pos : NULL, w ? w->vel : NULL, w ? w->mass : NULL, NULL, w ? w->level : NULL};
    if (s == GROVE_OK) s = gather(sim, 1 | 2 | 4 | 16, out);
    if (s == GROVE_OK && w) {
        w->time = sim->time;
        w->step = sim->step;
        w->evaluations = sim->evaluations;
        *whole = w;
    } else {
        grove_nbody_free(w);
    }
    return s;
}

static grove_status write(const grove_nbody *sim, const char *path,
                          grove_status (*write_whole)(const grove_nbody *whole, const char *path))
{
    grove_nbody *whole;
    grove_status s = gather_whole(sim, &whole);
    if (s == GROVE_OK && whole) s = write_whole(whole, path);
    grove_nbody_free(whole);
    return grove__mpi_agree(sim->dist->mpi, s, "checkpoint");
}

/* What a checkpoint read on rank 0 tells every rank. */
typedef struct whole_head {
    uint64_t n, step, evaluations, app_bytes;
    double time;
    grove_nbody_params params;
} whole_head;

/* Rank 0's column (n rows of elem bytes) into every rank's block of rows. */
static void scatter_column(const grove_mpi *mpi, const void *all, size_t n, size_t elem, void *mine, int *counts)
{
    int P = mpi->size, *displs = counts + P;
    for (int r = 0; r < P; r++) {
        size_t a = n * (size_t)r / (size_t)P, b = n * (size_t)(r + 1) / (size_t)P;
        displs[r] = (int)a;
        counts[r] = (int)(b - a);
    }
    MPI_Datatype t;
    MPI_Type_contiguous((int)elem, MPI_BYTE, &t);
    MPI_Type_commit(&t);
    MPI_Scatterv(all, counts, displs, t, mine, counts[mpi->rank], t, 0, mpi->comm);
    MPI_Type_free(&t);
}

/* Collective over options->mpi: whole (on rank 0; the other ranks pass
 * NULL and `checked` says whether rank 0 read it) is split into row
 * blocks and made a distributed simulation with the forces evaluated. */
static grove_status scatter(grove_nbody *whole, grove_status checked, const grove_options *options,
                            grove_nbody **out)
{
    grove_mpi *mpi = (grove_mpi *)(uintptr_t)options->mpi;
    grove_status s = grove__mpi_agree(mpi, checked, "checkpoint");
    whole_head h;
    memset(&h, 0, sizeof h);
    if (s == GROVE_OK && whole)
        h = (whole_head){whole->n, whole->step, whole->evaluations, whole->app_bytes, whole->time, whole->params};
    if (s == GROVE_OK) MPI_Bcast(&h, (int)sizeof h, MPI_BYTE, 0, mpi->comm);
    if (s == GROVE_OK && h.n / (size_t)mpi->size + 1 > INT_MAX)
        s = grove__fail(GROVE_TOO_LARGE, "checkpoint: %llu particles on %d ranks: more than 2^31 - 1 a rank",
                        (unsigned long long)h.n, mpi->size);
    size_t first, count;
    grove_mpi_block(mpi, (size_t)h.n, &first, &count);
    grove_nbody *sim = NULL;
    unsigned char *app = grove__malloc(h.app_bytes + 1, "checkpoint application data");
    int *counts = grove__malloc(2 * (size_t)mpi->size * sizeof *counts, "checkpoint scatter");
    if (s == GROVE_OK) s = app && counts ? grove__nbody_alloc(count, &h.params, &sim) : GROVE_OUT_OF_MEMORY;
    s = grove__mpi_agree(mpi, s, "checkpoint");
    if (s == GROVE_OK) {
        if (whole && h.app_bytes) memcpy(app, whole->app, h.app_bytes);
        MPI_Bcast(app, (int)h.app_bytes, MPI_BYTE, 0, mpi->comm);
        s = grove__mpi_agree(mpi, grove_nbody_set_app_data(sim, app, h.app_bytes), "checkpoint");
    }
    if (s == GROVE_OK) {
        scatter_column(mpi, whole ? whole->pos : NULL, h.n, 3 * sizeof(double), sim->pos, counts);
        scatter_column(mpi, whole ? whole->vel : NULL, h.n, 3 * sizeof(double), sim->vel, counts);
        scatter_column(mpi, whole ? whole->mass : NULL, h.n, sizeof(double), sim->mass, counts);
        scatter_column(mpi, whole ? whole->level : NULL, h.n, 1, sim->level, counts);
        sim->time = h.time;
        sim->step = h.step;
        sim->evaluations = h.evaluations;
    }
    grove__free(app);
    grove__free(counts);
    grove_nbody_free(whole);
    s = distribute(&sim, s, options);
    /* The accelerations at a step's end are those of all particles at once. */
    return grove__nbody_ready(sim, s, options, false, out);
}

static void load(const grove_nbody *sim, grove_nbody_rank_stats *out)
{
    out->particles = sim->n;
    const struct grove__nbody_dist *d = sim->dist;
    out->decompositions = d->decompositions;
    out->migrated = d->migrated;
    out->flops = d->cost;
    memcpy(out->seconds, d->ph.seconds, sizeof out->seconds);
    memcpy(out->bytes, d->ph.bytes, sizeof out->bytes);
}

static const grove__nbody_ranks ranks = {
    .distributed = true,
    .total = total,
    .sum = sum,
    .max = max,
    .any = any,
    .agree = agree,
    .check = check,
    .balance = balance,
    .migrate = migrate_domains,
    .forces = forces,
    .write = write,
    .gather = gather_to_root,
    .load = load,
    .release = release,
};

grove_status grove__mpi_nbody_create(grove_points positions, const double *vel, const double *mass,
                                     const grove_nbody_params *params, const grove_options *options,
                                     grove_nbody **out)
{
    grove__clear_error();
    if (!out) return grove__fail(GROVE_INVALID_ARGUMENT, "nbody: out is NULL");
    *out = NULL;
    /* Each rank passes its part of the rows: messages name global rows. */
    size_t first = grove__mpi_first_row(options, positions.n);
    grove_nbody *sim;
    grove_status s = grove__nbody_begin(positions, vel, mass, params, first, &sim);
    s = distribute(&sim, s, options);
    return grove__nbody_ready(sim, s, options, true, out);
}

grove_status grove__mpi_nbody_checkpoint_read(const char *path, const grove_options *options, grove_nbody **out)
{
    grove__clear_error();
    if (!path || !out) return grove__fail(GROVE_INVALID_ARGUMENT, "checkpoint: %s is NULL", path ? "out" : "path");
    *out = NULL;
    /* Rank 0 reads the file and hands out blocks of rows. */
    grove_nbody *whole = NULL;
    grove_status s = options->mpi->rank == 0 ? grove__nbody_checkpoint_load(path, &whole) : GROVE_OK;
    return scatter(whole, s, options, out);
}
