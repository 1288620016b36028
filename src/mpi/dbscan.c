/* Distributed DBSCAN (docs/mpi.md): the neighbourhoods from the
 * distributed self-join (each rank its own rows, global ids), core flags
 * from their sizes, and the components of the core-core pairs merged on
 * rank 0 (grove__mpi_components); rank 0 numbers the clusters in the order
 * of their lowest core row, the single-process rule (roots are each
 * component's smallest row), and broadcasts the core points' labels;
 * a border point takes the smallest label among its core neighbours. */
#include "mpi_internal.h"

#include "../cluster/cluster.h"

#include <limits.h>
#include <string.h>

typedef struct dbscan_mpi {
    const grove_mpi *mpi;
    int64_t *off;        /* rows before each rank (P + 1) */
    size_t n;            /* all ranks' points */
    uint8_t *core;       /* every point's core flag */
    int64_t *label;      /* every core point's cluster (-1 elsewhere) */
    int *counts, *displs;
} dbscan_mpi;

/* Every rank's core flags, in row order on every rank. */
static grove_status share_core(dbscan_mpi *m, const uint8_t *mine, size_t n_mine)
{
    int P = m->mpi->size;
    for (int r = 0; r < P; r++) {
        m->counts[r] = (int)(m->off[r + 1] - m->off[r]);
        m->displs[r] = (int)m->off[r];
    }
    m->core = grove__malloc(m->n ? m->n : 1, "dbscan core flags");
    grove_status s = grove__mpi_agree(m->mpi, m->core ? GROVE_OK : GROVE_OUT_OF_MEMORY, "dbscan");
    if (s == GROVE_OK)
        MPI_Allgatherv(mine, (int)n_mine, MPI_UINT8_T, m->core, m->counts, m->displs, MPI_UINT8_T, m->mpi->comm);
    return s;
}

/* The clusters of the core-core pairs (grove__mpi_components), numbered
 * on rank 0 by lowest core row; every rank gets the core points' labels. */
static grove_status label_cores(dbscan_mpi *m, const grove_join_result *res, size_t *clusters)
{
    uint32_t *root = NULL;
    grove_status s = grove__mpi_components(m->mpi, res, m->off[m->mpi->rank], m->n, m->core, &root, "dbscan");
    m->label = grove__malloc((m->n ? m->n : 1) * sizeof *m->label, "dbscan labels");
    s = grove__mpi_agree(m->mpi, s == GROVE_OK && !m->label ? GROVE_OUT_OF_MEMORY : s, "dbscan");
    int64_t next = 0;
    /* Roots are the smallest rows: a parent is labelled before its children. */
    for (size_t i = 0; s == GROVE_OK && root && i < m->n; i++)
        m->label[i] = !m->core[i] ? -1 : root[i] == i ? next++ : m->label[root[i]];
    grove__free(root);
    if (s == GROVE_OK) {
        MPI_Bcast(m->label, (int)m->n, MPI_INT64_T, 0, m->mpi->comm);
        MPI_Bcast(&next, 1, MPI_INT64_T, 0, m->mpi->comm);
        *clusters = (size_t)next;
    }
    return s;
}

/* This rank's labels: a core point its cluster's, a border point the
 * smallest among its core neighbours', noise -1. */
static void own_labels(const dbscan_mpi *m, const grove_join_result *res, int64_t *labels, uint8_t *core,
                       size_t *ncore, size_t *noise)
{
    int64_t first = m->off[m->mpi->rank];
    for (size_t q = 0; q < res->nq; q++) {
        int64_t g = first + (int64_t)q, best = m->label[g];
        for (int64_t k = res->offsets[q]; !m->core[g] && k < res->offsets[q + 1]; k++) {
            int64_t l = m->label[res->indices[k]];
            if (l >= 0 && (best < 0 || l < best)) best = l;
        }
        labels[q] = best;
        if (core) core[q] = m->core[g];
        *ncore += m->core[g];
        *noise += best < 0;
    }
}

grove_status grove__mpi_dbscan(grove_points data, const grove_index_params *index_params,
                               const grove_dbscan_params *params, int64_t *labels, uint8_t *core,
                               grove_dbscan_counts *counts, const grove_options *options)
{
    const grove_mpi *mpi = options->mpi;
    int P = mpi->size;
    grove_status s = grove__dbscan_begin(data, params, labels, counts, 0);
    if (s == GROVE_OK && params->sample_weight)
        s = grove__fail(GROVE_UNSUPPORTED, "dbscan: sample_weight runs on one process only (docs/mpi.md)");
    s = grove__mpi_agree(mpi, s, "dbscan");
    if (s != GROVE_OK) return s;
    grove_join_params jp;
    grove_join_params_init(&jp);
    jp.eps = params->eps;
    grove_join_result res;
    s = grove__mpi_join(data, NULL, index_params, &jp, &res, options);
    if (s != GROVE_OK) return s;
    dbscan_mpi m;
    memset(&m, 0, sizeof m);
    m.mpi = mpi;
    m.off = grove__malloc(((size_t)P + 1) * sizeof *m.off, "dbscan offsets");
    m.counts = grove__malloc(2 * (size_t)P * sizeof *m.counts, "dbscan offsets");
    m.displs = m.counts ? m.counts + P : NULL;
    uint8_t *mine = grove__malloc(data.n ? data.n : 1, "dbscan core flags");
    s = grove__mpi_agree(mpi, m.off && m.counts && mine ? GROVE_OK : GROVE_OUT_OF_MEMORY, "dbscan");
    if (s == GROVE_OK) {
        grove__mpi_offsets(mpi, data.n, m.off);
        m.n = (size_t)m.off[P];
        if (m.n > INT_MAX) s = grove__fail(GROVE_TOO_LARGE, "dbscan: more than 2^31 - 1 points on several ranks");
    }
    for (size_t q = 0; s == GROVE_OK && q < data.n; q++)
        mine[q] = (uint64_t)(res.offsets[q + 1] - res.offsets[q]) >= params->min_samples;
    if (s == GROVE_OK) s = share_core(&m, mine, data.n);
    size_t clusters = 0, ncore = 0, noise = 0;
    if (s == GROVE_OK) s = label_cores(&m, &res, &clusters);
    if (s == GROVE_OK) {
        own_labels(&m, &res, labels, core, &ncore, &noise);
        unsigned long long mineq[2] = {ncore, noise}, sum[2];
        MPI_Allreduce(mineq, sum, 2, MPI_UNSIGNED_LONG_LONG, MPI_SUM, mpi->comm);
        if (counts) *counts = (grove_dbscan_counts){clusters, (size_t)sum[0], (size_t)sum[1]};
    }
    grove_join_result_free(&res);
    grove__free(mine);
    grove__free(m.off);
    grove__free(m.counts);
    grove__free(m.core);
    grove__free(m.label);
    return s;
}
