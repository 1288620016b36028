/* Distributed DBSCAN (docs/mpi.md) in ArborX's shape: each rank runs the
 * single-process DBSCAN's steps (src/cluster/dbscan_internal.h) on its
 * slab's points and their ghosts (slabs.h: the points of other slabs
 * within eps, with their weights), holding no pairs, and the ranks merge
 * the labels:
 *
 *  1. core points: an own point's neighbourhood lies whole in the slab's
 *     set, so its count (or exact weight) is the single-process one; each
 *     slab sends its points' flags to the slabs where they are ghosts;
 *  2. the components of the core points of the slab's set: every eps-pair
 *     of core points lies in some slab's set (that of either end), so a
 *     global cluster is the union of local components glued at the core
 *     points several slabs hold;
 *  3. merge: every rank's links (shared core point, its component's
 *     smallest row) are joined on rank 0 (grove__mpi_link_roots), which
 *     gives each local component its cluster's smallest row: the
 *     single-process root;
 *  4. numbers: cluster k is the k-th root in row order; the roots go to
 *     the ranks that hold their rows of the input (ranges in row order),
 *     which number them after the roots of the ranks before (MPI_Exscan)
 *     and answer each slab's requests;
 *  5. border points: the single-process rule, the smallest number among a
 *     non-core point's core neighbours, on the slab's set;
 *  6. the labels and core flags go back to the ranks that hold the rows.
 * Memory per rank: the slab's points and ghosts; rank 0 also merges every
 * rank's links, one per core point held by several slabs and slab. */
#include "slabs.h"

#include "../cluster/cluster.h"
#include "../cluster/dbscan_internal.h"

#include <stdlib.h>
#include <string.h>

typedef struct slab_dbscan {
    grove__slabs pl;
    const grove_dbscan_params *params;
    grove_options local;  /* the caller's options, on this process */
    grove__slab_set S;    /* the slab's points and ghosts, by global row; extra: weights */
    grove_index *ix;      /* over S (NULL when S is empty) */
    uint8_t *core;        /* per point of S */
    int64_t *label;       /* per point of S: counts, then clusters' roots, then cluster numbers */
    grove__uf uf;         /* the components of S's core points */
} slab_dbscan;

/* A third role bit, set by share_ghost_flags: another slab's set holds
 * the point too (it is a ghost here, or an own point within reach of
 * another slab). */
enum { SHARED = 4 };

static bool owned(const slab_dbscan *sd, size_t i) { return sd->S.roles[i] & GROVE__SLAB_QUERY; }

static bool shared(const slab_dbscan *sd, size_t i) { return sd->S.roles[i] & SHARED; }

static int compare_row(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* The position of row among m ascending rows, or m. */
static size_t find_row(const int64_t *rows, size_t m, int64_t row)
{
    const int64_t *at = bsearch(&row, rows, m, sizeof *rows, compare_row);
    return at ? (size_t)(at - rows) : m;
}

/* The rank whose input rows hold row. */
static int home(const slab_dbscan *sd, int64_t row) { return grove__mpi_home(sd->pl.doff, sd->pl.mpi->size, row); }

/* Step 1 on the slab's set: its index and every point's core flag (right
 * for its own points). */
static grove_status find_core(slab_dbscan *sd, const grove_index_params *ip)
{
    size_t n = sd->S.n;
    grove_status s = grove__dbscan_budget(n, sd->S.extra != NULL, true, &sd->local);
    if (s != GROVE_OK) return s;
    sd->core = grove__malloc(n ? n : 1, "dbscan core flags");
    sd->label = grove__malloc((n ? n : 1) * sizeof *sd->label, "dbscan labels");
    if (!sd->core || !sd->label) return GROVE_OUT_OF_MEMORY;
    if (n == 0) return GROVE_OK;
    s = grove__slab_index(&sd->pl, &sd->S, ip, &sd->local, &sd->ix);
    if (s == GROVE_OK)
        s = grove__dbscan_core(sd->ix, sd->params->eps, sd->params->min_samples, sd->S.extra, sd->core, sd->label,
                               &sd->local);
    return s;
}

/* The ghosts' core flags from their slabs: each own point's flag, as
 * row << 1 | flag, to every other slab it reaches (the reach that made it
 * a ghost there); the points other slabs hold marked SHARED. */
static grove_status share_ghost_flags(slab_dbscan *sd)
{
    const grove__slabs *pl = &sd->pl;
    int P = pl->mpi->size;
    grove_points p = grove__slab_points(pl, &sd->S);
    int *counts = grove__calloc(2 * (size_t)P, sizeof *counts, "dbscan ghost flags"), *got = counts ? counts + P : NULL;
    size_t *cursor = grove__calloc((size_t)P + 1, sizeof *cursor, "dbscan ghost flags");
    int64_t *buf = NULL, *flags = NULL;
    grove_status s = counts && cursor ? GROVE_OK : GROVE_OUT_OF_MEMORY;
    for (size_t i = 0; i < p.n; i++)
        if (!owned(sd, i)) sd->S.roles[i] |= SHARED;
    for (int pass = 0; s == GROVE_OK && pass < 2; pass++) {
        for (size_t i = 0; i < p.n; i++) {
            int own, lo, hi;
            if (!owned(sd, i) || (pass == 1 && !shared(sd, i))) continue;
            grove__slabs_reach(pl, p, i, &own, &lo, &hi);
            if (lo < hi) sd->S.roles[i] |= SHARED;
            for (int k = lo; k <= hi; k++) {
                if (k == own) continue;
                if (pass == 0) counts[k]++;
                else buf[cursor[k]++] = sd->S.rows[i] << 1 | sd->core[i];
            }
        }
        for (int k = 0; pass == 0 && k < P; k++) cursor[k + 1] = cursor[k] + (size_t)counts[k];
        if (pass == 0) buf = grove__malloc((cursor[P] ? cursor[P] : 1) * sizeof *buf, "dbscan ghost flags");
        if (pass == 0 && !buf) s = GROVE_OUT_OF_MEMORY;
    }
    s = grove__mpi_agree(pl->mpi, s, "dbscan");
    if (s == GROVE_OK)
        s = grove__mpi_alltoallv(pl->mpi, "dbscan", buf, counts, MPI_INT64_T, sizeof *buf, (void **)&flags, got,
                                 "core flags");
    size_t seen = 0, ghosts = 0;
    for (int r = 0; s == GROVE_OK && r < P; r++) seen += (size_t)got[r];
    for (size_t k = 0; s == GROVE_OK && k < seen; k++) {
        size_t i = find_row(sd->S.rows, sd->S.n, flags[k] >> 1);
        if (i == sd->S.n || owned(sd, i)) break;
        sd->core[i] = flags[k] & 1;
        ghosts++;
    }
    for (size_t i = 0; s == GROVE_OK && i < sd->S.n; i++) ghosts -= !owned(sd, i);
    if (s == GROVE_OK && ghosts != 0)
        s = grove__fail(GROVE_INTERNAL, "dbscan: the core flags of a slab's ghosts did not come back whole");
    grove__free(flags);
    grove__free(buf);
    grove__free(counts);
    grove__free(cursor);
    return grove__mpi_agree(pl->mpi, s, "dbscan");
}

/* Step 3: label[r] of each local component's root r = its cluster's
 * smallest row. A shared core point links to its component's smallest
 * row (to itself when it is that row, so a component glued only there
 * still learns its cluster's root). */
static grove_status merge_components(slab_dbscan *sd)
{
    size_t n = sd->S.n, count = 0;
    const uint32_t *parent = sd->uf.parent;
    for (size_t i = 0; i < n; i++) count += sd->core[i] && shared(sd, i);
    int64_t *links = grove__malloc((count ? 2 * count : 1) * sizeof *links, "dbscan links");
    int64_t *roots = grove__malloc((count ? count : 1) * sizeof *roots, "dbscan links");
    grove_status s = grove__mpi_agree(sd->pl.mpi, links && roots ? GROVE_OK : GROVE_OUT_OF_MEMORY, "dbscan");
    for (size_t i = 0, k = 0; s == GROVE_OK && i < n; i++)
        if (sd->core[i] && shared(sd, i)) {
            links[k++] = sd->S.rows[i];
            links[k++] = sd->S.rows[parent[i]];
        }
    if (s == GROVE_OK) s = grove__mpi_link_roots(sd->pl.mpi, links, count, roots, "dbscan");
    for (size_t i = 0; s == GROVE_OK && i < n; i++)
        if (sd->core[i] && parent[i] == i) sd->label[i] = sd->S.rows[i];
    for (size_t i = 0, k = 0; s == GROVE_OK && i < n; i++)
        if (sd->core[i] && shared(sd, i)) sd->label[parent[i]] = roots[k++];
    grove__free(links);
    grove__free(roots);
    return s;
}

/* Per destination rank, the counts of `m` ascending rows sent to the
 * ranks holding them. */
static void count_homes(const slab_dbscan *sd, const int64_t *rows, size_t m, int *counts)
{
    memset(counts, 0, (size_t)sd->pl.mpi->size * sizeof *counts);
    for (size_t k = 0; k < m; k++) counts[home(sd, rows[k])]++;
}

/* Step 4 at the ranks holding the rows: the roots they hold, sorted, and
 * the clusters numbered before them. */
static grove_status rank_roots(slab_dbscan *sd, int *counts, int64_t **held, size_t *nheld, int64_t *before,
                               size_t *clusters)
{
    const grove_mpi *mpi = sd->pl.mpi;
    size_t n = sd->S.n, m = 0;
    int64_t *mine = grove__malloc((n ? n : 1) * sizeof *mine, "dbscan cluster roots");
    grove_status s = grove__mpi_agree(mpi, mine ? GROVE_OK : GROVE_OUT_OF_MEMORY, "dbscan");
    for (size_t i = 0; s == GROVE_OK && i < n; i++)
        if (owned(sd, i) && sd->core[i] && sd->uf.parent[i] == i && sd->label[i] == sd->S.rows[i])
            mine[m++] = sd->S.rows[i];
    int *got = counts + mpi->size;
    if (s == GROVE_OK) {
        count_homes(sd, mine, m, counts);
        s = grove__mpi_alltoallv(mpi, "dbscan", mine, counts, MPI_INT64_T, sizeof *mine, (void **)held, got,
                                 "cluster roots");
    }
    grove__free(mine);
    *nheld = 0;
    for (int r = 0; s == GROVE_OK && r < mpi->size; r++) *nheld += (size_t)got[r];
    if (s != GROVE_OK) return s;
    qsort(*held, *nheld, sizeof **held, compare_row);
    long long here = (long long)*nheld, earlier = 0, all = 0;
    MPI_Exscan(&here, &earlier, 1, MPI_LONG_LONG, MPI_SUM, mpi->comm);
    MPI_Allreduce(&here, &all, 1, MPI_LONG_LONG, MPI_SUM, mpi->comm);
    *before = mpi->rank ? earlier : 0; /* rank 0's is undefined */
    *clusters = (size_t)all;
    return GROVE_OK;
}

/* The distinct roots of the slab's components, ascending. */
static grove_status distinct_roots(const slab_dbscan *sd, int64_t **roots, size_t *m)
{
    size_t n = sd->S.n, k = 0;
    *roots = grove__malloc((n ? n : 1) * sizeof **roots, "dbscan cluster roots");
    if (!*roots) return GROVE_OUT_OF_MEMORY;
    for (size_t i = 0; i < n; i++)
        if (sd->core[i] && sd->uf.parent[i] == i) (*roots)[k++] = sd->label[i];
    qsort(*roots, k, sizeof **roots, compare_row);
    *m = 0;
    for (size_t j = 0; j < k; j++)
        if (*m == 0 || (*roots)[j] != (*roots)[*m - 1]) (*roots)[(*m)++] = (*roots)[j];
    return GROVE_OK;
}

/* Step 4: every core point's cluster number in label. */
static grove_status number_clusters(slab_dbscan *sd, size_t *clusters)
{
    const grove_mpi *mpi = sd->pl.mpi;
    int P = mpi->size;
    int *counts = grove__malloc(4 * (size_t)P * sizeof *counts, "dbscan cluster numbers");
    int *asked_counts = counts ? counts + 2 * P : NULL, *back = counts ? counts + 3 * P : NULL;
    int64_t *held = NULL, *want = NULL, *asked = NULL, *numbers = NULL, before = 0;
    size_t nheld = 0, nwant = 0, nasked = 0;
    grove_status s = grove__mpi_agree(mpi, counts ? GROVE_OK : GROVE_OUT_OF_MEMORY, "dbscan");
    if (s == GROVE_OK) s = rank_roots(sd, counts, &held, &nheld, &before, clusters);
    if (s == GROVE_OK) s = grove__mpi_agree(mpi, distinct_roots(sd, &want, &nwant), "dbscan");
    if (s == GROVE_OK) {
        count_homes(sd, want, nwant, counts);
        s = grove__mpi_alltoallv(mpi, "dbscan", want, counts, MPI_INT64_T, sizeof *want, (void **)&asked,
                                 asked_counts, "cluster roots");
    }
    for (int r = 0; s == GROVE_OK && r < P; r++) nasked += (size_t)asked_counts[r];
    /* The answers, in the order asked. */
    for (size_t k = 0; s == GROVE_OK && k < nasked; k++) {
        size_t at = find_row(held, nheld, asked[k]);
        if (at == nheld) s = grove__fail(GROVE_INTERNAL, "dbscan: no rank holds cluster root %lld", (long long)asked[k]);
        else asked[k] = before + (int64_t)at;
    }
    s = grove__mpi_agree(mpi, s, "dbscan");
    if (s == GROVE_OK)
        s = grove__mpi_alltoallv(mpi, "dbscan", asked, asked_counts, MPI_INT64_T, sizeof *asked, (void **)&numbers,
                                 back, "cluster numbers");
    /* Roots come before the rest of their components. */
    const uint32_t *parent = sd->uf.parent;
    for (size_t i = 0; s == GROVE_OK && i < sd->S.n; i++)
        if (sd->core[i])
            sd->label[i] = parent[i] == i ? numbers[find_row(want, nwant, sd->label[i])] : sd->label[parent[i]];
    grove__free(held);
    grove__free(want);
    grove__free(asked);
    grove__free(numbers);
    grove__free(counts);
    return s;
}

/* Step 6: each own point's label and core flag to the rank holding its
 * row, as (row << 1 | core, label); the owned core and noise points counted. */
static grove_status send_home(slab_dbscan *sd, int64_t *labels, uint8_t *core, size_t n_mine, size_t *tally)
{
    const grove_mpi *mpi = sd->pl.mpi;
    int P = mpi->size;
    size_t n = sd->S.n, m = 0;
    int *counts = grove__calloc(2 * (size_t)P, sizeof *counts, "dbscan labels"), *got = counts ? counts + P : NULL;
    int64_t *out = grove__malloc((n ? 2 * n : 1) * sizeof *out, "dbscan labels"), *in = NULL;
    grove_status s = grove__mpi_agree(mpi, counts && out ? GROVE_OK : GROVE_OUT_OF_MEMORY, "dbscan");
    for (size_t i = 0; s == GROVE_OK && i < n; i++)
        if (owned(sd, i)) {
            counts[home(sd, sd->S.rows[i])]++;
            out[2 * m] = sd->S.rows[i] << 1 | sd->core[i];
            out[2 * m + 1] = sd->label[i];
            m++;
            tally[0] += sd->core[i];
            tally[1] += sd->label[i] < 0;
        }
    size_t nin = 0;
    if (s == GROVE_OK)
        s = grove__mpi_alltoallv_records(mpi, "dbscan", out, counts, 2 * sizeof *out, (void **)&in, got, &nin,
                                         "labels");
    int64_t first = sd->pl.doff[mpi->rank];
    for (size_t k = 0; s == GROVE_OK && k < nin; k++) {
        size_t q = (size_t)((in[2 * k] >> 1) - first);
        labels[q] = in[2 * k + 1];
        if (core) core[q] = in[2 * k] & 1;
    }
    if (s == GROVE_OK && nin != n_mine)
        s = grove__fail(GROVE_INTERNAL, "dbscan: %zu labels came back for %zu points", nin, n_mine);
    grove__free(in);
    grove__free(out);
    grove__free(counts);
    return grove__mpi_agree(mpi, s, "dbscan");
}

/* Sample weights on every rank with rows or on none. */
static grove_status agree_weights(const grove_mpi *mpi, grove_status s, grove_points data,
                                  const grove_dbscan_params *params, int *weighted)
{
    int mine = params && params->sample_weight;
    MPI_Allreduce(&mine, weighted, 1, MPI_INT, MPI_MAX, mpi->comm);
    if (s == GROVE_OK && *weighted && !mine && data.n)
        s = grove__fail(GROVE_INVALID_ARGUMENT, "dbscan: sample_weight is NULL here but given on another rank");
    return grove__mpi_agree(mpi, s, "dbscan");
}

grove_status grove__mpi_dbscan(grove_points data, const grove_index_params *index_params,
                               const grove_dbscan_params *params, int64_t *labels, uint8_t *core,
                               grove_dbscan_counts *counts, const grove_options *options)
{
    const grove_mpi *mpi = options->mpi;
    size_t first = grove__mpi_first_row(options, data.n);
    int weighted = 0;
    grove_status s = agree_weights(mpi, grove__dbscan_begin(data, params, labels, counts, first), data, params,
                                   &weighted);
    if (s != GROVE_OK) return s;
    slab_dbscan sd;
    memset(&sd, 0, sizeof sd);
    sd.pl.mpi = mpi;
    sd.pl.what = "dbscan";
    sd.pl.threads = grove__options(options).threads;
    sd.params = params;
    sd.local = *options;
    sd.local.mpi = NULL;
    s = grove__slabs_plan(&sd.pl, data, NULL, index_params, params->eps, weighted ? sizeof(double) : 0);
    if (s == GROVE_OK) s = grove__slabs_exchange(&sd.pl, data, NULL, params->sample_weight, NULL, &sd.S, NULL);
    if (s == GROVE_OK) s = grove__mpi_agree(mpi, find_core(&sd, index_params), "dbscan");
    if (s == GROVE_OK) s = share_ghost_flags(&sd);
    if (s == GROVE_OK && sd.S.n)
        s = grove__dbscan_components(sd.ix, params->eps, sd.core, &sd.uf, &sd.local);
    s = grove__mpi_agree(mpi, s, "dbscan");
    size_t clusters = 0, tally[2] = {0, 0};
    if (s == GROVE_OK) s = merge_components(&sd);
    if (s == GROVE_OK) s = number_clusters(&sd, &clusters);
    grove__uf_free(&sd.uf);
    uint8_t *border = s == GROVE_OK ? grove__malloc(sd.S.n ? sd.S.n : 1, "dbscan queries") : NULL;
    if (s == GROVE_OK && !border) s = GROVE_OUT_OF_MEMORY;
    for (size_t i = 0; s == GROVE_OK && i < sd.S.n; i++) border[i] = owned(&sd, i) && !sd.core[i];
    if (s == GROVE_OK && sd.S.n)
        s = grove__dbscan_borders(sd.ix, params->eps, sd.core, border, sd.label, &sd.local);
    grove__free(border);
    s = grove__mpi_agree(mpi, s, "dbscan");
    if (s == GROVE_OK) s = send_home(&sd, labels, core, data.n, tally);
    if (s == GROVE_OK) {
        unsigned long long mine[2] = {tally[0], tally[1]}, sum[2];
        MPI_Allreduce(mine, sum, 2, MPI_UNSIGNED_LONG_LONG, MPI_SUM, mpi->comm);
        if (counts) *counts = (grove_dbscan_counts){clusters, (size_t)sum[0], (size_t)sum[1]};
    }
    grove_index_free(sd.ix);
    grove__free(sd.core);
    grove__free(sd.label);
    grove__slab_set_free(&sd.S);
    grove__slabs_free(&sd.pl);
    return s;
}
