/* Connected components of a distributed self-join's pairs, shared by
 * distributed DBSCAN and FoF (docs/mpi.md): each rank unions the pairs of
 * its own rows in a union-find over all rows and sends rank 0 the links
 * (row, root) it found; rank 0 unions every rank's links. Roots are each
 * component's smallest row (the union-find's rule), so they do not depend
 * on the rank count: the single-process roots. */
#include "mpi_internal.h"

#include "../core/union_find.h"

#include <limits.h>

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
