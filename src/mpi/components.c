/* Components merged across ranks on rank 0 (docs/mpi.md), their roots
 * each component's smallest row (the union-find's rule), so they do not
 * depend on the rank count: the single-process roots.
 *  - grove__mpi_components (FoF): each rank unions the pairs of its own
 *    rows of a distributed self-join in a union-find over all rows and
 *    sends rank 0 the links (row, root) it found; rank 0 unions every
 *    rank's links over all rows.
 *  - grove__mpi_link_roots (DBSCAN): each rank sends the links that join
 *    its local components to the points other ranks hold too; rank 0
 *    unions them over the distinct rows they name, and each link gets its
 *    component's root back. */
#include "mpi_internal.h"

#include "../core/union_find.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* This rank's links (row, root), two int64 each, of the pairs of res whose
 * two ends are kept (every pair with keep NULL). */
static grove_status local_links(const grove_join_result *res, int64_t first, size_t n, const uint8_t *keep,
                                int64_t **links, int *count)
{
    grove__uf uf;
    grove_status s = grove__uf_init(&uf, n, 1);
    for (size_t q = 0; s == GROVE_OK && q < res->nq; q++)
        if (!keep || keep[first + (int64_t)q])
            for (int64_t k = res->offsets[q]; k < res->offsets[q + 1]; k++)
                if (!keep || keep[res->indices[k]])
                    grove__uf_union(&uf, (uint32_t)(first + (int64_t)q), (uint32_t)res->indices[k]);
    size_t c = 0;
    if (s == GROVE_OK) {
        grove__uf_flatten(&uf);
        for (size_t i = 0; i < n; i++) c += uf.parent[i] != i;
        *links = grove__malloc((c ? 2 * c : 1) * sizeof **links, "mpi component links");
        if (!*links) s = GROVE_OUT_OF_MEMORY;
        else if (c > INT_MAX / 2) s = grove__fail(GROVE_TOO_LARGE, "mpi components: more than 2^30 links on one rank");
    }
    for (size_t i = 0, w = 0; s == GROVE_OK && i < n; i++)
        if (uf.parent[i] != i) {
            (*links)[w++] = (int64_t)i;
            (*links)[w++] = uf.parent[i];
        }
    *count = (int)(2 * c);
    grove__uf_free(&uf);
    return s;
}

grove_status grove__mpi_components(const grove_mpi *mpi, const grove_join_result *res, int64_t first, size_t n,
                                   const uint8_t *keep, uint32_t **root, const char *what)
{
    *root = NULL;
    int P = mpi->size, lead = mpi->rank == 0, count = 0;
    int64_t *links = NULL, *all = NULL;
    int *counts = grove__malloc(2 * (size_t)P * sizeof *counts, "mpi component links");
    int *displs = counts ? counts + P : NULL;
    grove_status s = counts ? local_links(res, first, n, keep, &links, &count) : GROVE_OUT_OF_MEMORY;
    s = grove__mpi_agree(mpi, s, what);
    long long total = 0;
    if (s == GROVE_OK) {
        MPI_Gather(&count, 1, MPI_INT, counts, 1, MPI_INT, 0, mpi->comm);
        for (int r = 0; lead && r < P; r++) {
            displs[r] = total > INT_MAX ? 0 : (int)total;
            total += counts[r];
        }
        if (lead) all = grove__malloc((total ? (size_t)total : 1) * sizeof *all, "mpi component links");
        s = lead && !all ? GROVE_OUT_OF_MEMORY : GROVE_OK;
        if (lead && total > INT_MAX) s = grove__fail(GROVE_TOO_LARGE, "%s: more than 2^31 - 1 links to merge", what);
        s = grove__mpi_agree(mpi, s, what);
    }
    if (s == GROVE_OK) {
        MPI_Gatherv(links, count, MPI_INT64_T, all, counts, displs, MPI_INT64_T, 0, mpi->comm);
        if (!lead) grove__mpi_sent(mpi, (size_t)count * sizeof *links);
    }
    grove__uf uf = {0};
    if (s == GROVE_OK && lead) s = grove__uf_init(&uf, n, 1);
    if (s == GROVE_OK && lead) {
        for (long long k = 0; k < total; k += 2) grove__uf_union(&uf, (uint32_t)all[k], (uint32_t)all[k + 1]);
        grove__uf_flatten(&uf);
        *root = uf.parent;
        uf.parent = NULL;
    }
    grove__uf_free(&uf);
    grove__free(all);
    grove__free(links);
    grove__free(counts);
    return grove__mpi_agree(mpi, s, what);
}

static int compare_row(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* The position of row among the m ascending rows. */
static uint32_t position(const int64_t *rows, size_t m, int64_t row)
{
    const int64_t *at = bsearch(&row, rows, m, sizeof *rows, compare_row);
    return (uint32_t)(at - rows);
}

/* On rank 0: each link's component's smallest row, by a union-find over
 * the distinct rows of the links. */
static grove_status root_links(const int64_t *all, size_t links, int64_t *roots)
{
    int64_t *rows = grove__malloc((links ? 2 * links : 1) * sizeof *rows, "mpi component rows");
    grove__uf uf = {0};
    grove_status s = rows ? GROVE_OK : GROVE_OUT_OF_MEMORY;
    size_t m = 0;
    if (s == GROVE_OK) {
        memcpy(rows, all, 2 * links * sizeof *rows);
        qsort(rows, 2 * links, sizeof *rows, compare_row);
        for (size_t i = 0; i < 2 * links; i++)
            if (m == 0 || rows[i] != rows[m - 1]) rows[m++] = rows[i];
        if (m > UINT32_MAX) s = grove__fail(GROVE_TOO_LARGE, "mpi components: more than 2^32 - 1 rows to merge");
    }
    if (s == GROVE_OK && m > 0) s = grove__uf_init(&uf, m, 1);
    if (s == GROVE_OK && m > 0) {
        /* Positions follow the rows, so each root is its component's
         * smallest row. */
        for (size_t k = 0; k < links; k++)
            grove__uf_union(&uf, position(rows, m, all[2 * k]), position(rows, m, all[2 * k + 1]));
        grove__uf_flatten(&uf);
        for (size_t k = 0; k < links; k++) roots[k] = rows[uf.parent[position(rows, m, all[2 * k])]];
    }
    grove__uf_free(&uf);
    grove__free(rows);
    return s;
}

grove_status grove__mpi_link_roots(const grove_mpi *mpi, const int64_t *links, size_t count, int64_t *roots,
                                   const char *what)
{
    int P = mpi->size, lead = mpi->rank == 0;
    int mine = count > INT_MAX / 2 ? -1 : (int)(2 * count);
    int *counts = grove__malloc(4 * (size_t)P * sizeof *counts, "mpi component links");
    int *displs = counts ? counts + P : NULL, *half = counts ? counts + 2 * P : NULL;
    int *half_displs = counts ? counts + 3 * P : NULL;
    grove_status s = counts ? GROVE_OK : GROVE_OUT_OF_MEMORY;
    if (s == GROVE_OK && mine < 0) s = grove__fail(GROVE_TOO_LARGE, "%s: more than 2^30 links on one rank", what);
    s = grove__mpi_agree(mpi, s, what);
    if (s != GROVE_OK) {
        grove__free(counts);
        return s;
    }
    MPI_Gather(&mine, 1, MPI_INT, counts, 1, MPI_INT, 0, mpi->comm);
    long long total = 0;
    for (int r = 0; lead && r < P; r++) {
        displs[r] = total > INT_MAX ? 0 : (int)total;
        half[r] = counts[r] / 2;
        half_displs[r] = displs[r] / 2;
        total += counts[r];
    }
    int64_t *all = NULL, *all_roots = NULL;
    if (lead && total > INT_MAX) s = grove__fail(GROVE_TOO_LARGE, "%s: more than 2^31 - 1 links to merge", what);
    if (lead && s == GROVE_OK) {
        all = grove__malloc((total ? (size_t)total : 1) * sizeof *all, "mpi component links");
        all_roots = grove__malloc((total ? (size_t)total / 2 : 1) * sizeof *all_roots, "mpi component roots");
        s = all && all_roots ? GROVE_OK : GROVE_OUT_OF_MEMORY;
    }
    s = grove__mpi_agree(mpi, s, what);
    if (s == GROVE_OK) {
        MPI_Gatherv(links, mine, MPI_INT64_T, all, counts, displs, MPI_INT64_T, 0, mpi->comm);
        if (!lead) grove__mpi_sent(mpi, (size_t)mine * sizeof *links);
        if (lead) s = root_links(all, (size_t)total / 2, all_roots);
        s = grove__mpi_agree(mpi, s, what);
    }
    if (s == GROVE_OK) {
        MPI_Scatterv(all_roots, half, half_displs, MPI_INT64_T, roots, mine / 2, MPI_INT64_T, 0, mpi->comm);
        if (lead) grove__mpi_sent(mpi, (size_t)(total / 2 - half[0]) * sizeof *roots);
    }
    grove__free(all);
    grove__free(all_roots);
    grove__free(counts);
    return s;
}
