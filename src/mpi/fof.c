/* Distributed friends-of-friends (docs/mpi.md): the friend pairs from the
 * distributed self-join at the linking length (each rank its own rows,
 * global ids), their components merged on rank 0 (grove__mpi_components,
 * roots the smallest members, as the single-process union-find's), the
 * groups numbered there by the single-process rule (grove__fof_number)
 * and each rank's rows' ids sent back; the catalogue is
 * grove__mpi_fof_catalogue's. */
#include "mpi_internal.h"

#include "../cluster/cluster.h"
#include "../cluster/fof_internal.h"
#include "parallel.h"

#include <limits.h>
#include <string.h>

/* Masses, velocities and a catalogue asked on every rank or none (a rank
 * without rows may leave its arrays NULL); no periodic box. */
static grove_status agree_inputs(const grove_mpi *mpi, grove_status s, grove_points points, const double *mass,
                                 const double *velocity, const grove_fof_params *params,
                                 const grove_fof_catalogue *catalogue, int *has)
{
    int mine[3] = {mass != NULL, velocity != NULL, catalogue != NULL};
    MPI_Allreduce(mine, has, 3, MPI_INT, MPI_MAX, mpi->comm);
    if (s == GROVE_OK && params->index.boxsize_count)
        s = grove__fail(GROVE_UNSUPPORTED, "fof: a periodic box runs on one process only (docs/mpi.md)");
    if (s == GROVE_OK && points.n && ((has[0] && !mass) || (has[1] && !velocity)))
        s = grove__fail(GROVE_INVALID_ARGUMENT, "fof: %s given on another rank but NULL here",
                        has[0] && !mass ? "masses" : "velocities");
    if (s == GROVE_OK && has[2] && !catalogue)
        s = grove__fail(GROVE_INVALID_ARGUMENT, "fof: a catalogue asked on another rank but NULL here");
    return grove__mpi_agree(mpi, s, "fof");
}

/* Rank 0 numbers the groups of every row (root from grove__mpi_components)
 * and sends each rank its rows' ids; every rank gets the count. */
static grove_status number(const grove_mpi *mpi, const int64_t *off, const uint32_t *root, size_t min_members,
                           int threads, int64_t *group, size_t *groups)
{
    int P = mpi->size, lead = mpi->rank == 0;
    size_t n = (size_t)off[P];
    int *counts = grove__malloc(2 * (size_t)P * sizeof *counts, "fof groups"), *displs = counts ? counts + P : NULL;
    int64_t *all = lead ? grove__malloc((n ? n : 1) * sizeof *all, "fof groups") : NULL;
    grove_status s = counts && (!lead || all) ? GROVE_OK : GROVE_OUT_OF_MEMORY;
    unsigned long long ng = 0;
    if (s == GROVE_OK && lead) {
        size_t k = 0;
        s = grove__fof_number(root, n, min_members, grove__threads_for(threads, n), all, &k);
        ng = k;
    }
    s = grove__mpi_agree(mpi, s, "fof");
    if (s == GROVE_OK) {
        for (int r = 0; r < P; r++) {
            counts[r] = (int)(off[r + 1] - off[r]);
            displs[r] = (int)off[r];
        }
        MPI_Scatterv(all, counts, displs, MPI_INT64_T, group, counts[mpi->rank], MPI_INT64_T, 0, mpi->comm);
        MPI_Bcast(&ng, 1, MPI_UNSIGNED_LONG_LONG, 0, mpi->comm);
        if (lead) grove__mpi_sent(mpi, (n - (size_t)counts[0]) * sizeof *all);
        *groups = (size_t)ng;
    }
    grove__free(all);
    grove__free(counts);
    return s;
}

grove_status grove__mpi_fof(grove_points points, const double *mass, const double *velocity,
                            const grove_fof_params *params, int64_t *group, size_t *groups,
                            grove_fof_catalogue *catalogue, const grove_options *options)
{
    const grove_mpi *mpi = options->mpi;
    int P = mpi->size, has[3], threads = grove__options(options).threads;
    /* This rank's part of the input: messages name global rows. */
    size_t first = grove__mpi_first_row(options, points.n);
    grove_status s = grove__fof_begin(points, mass, velocity, params, group, groups, catalogue, first, threads);
    s = agree_inputs(mpi, s, points, mass, velocity, params, catalogue, has);
    if (s != GROVE_OK) return s;
    grove_join_params jp;
    grove_join_params_init(&jp);
    jp.eps = params->linking_length;
    grove_join_result res;
    s = grove__mpi_join(points, NULL, &params->index, &jp, &res, options);
    if (s != GROVE_OK) return s;
    int64_t *off = grove__malloc(((size_t)P + 1) * sizeof *off, "fof offsets");
    s = grove__mpi_agree(mpi, off ? GROVE_OK : GROVE_OUT_OF_MEMORY, "fof");
    if (s == GROVE_OK) {
        grove__mpi_offsets(mpi, points.n, off);
        if (off[P] > INT_MAX) s = grove__fail(GROVE_TOO_LARGE, "fof: more than 2^31 - 1 points on several ranks");
    }
    uint32_t *root = NULL;
    size_t ngroups = 0;
    if (s == GROVE_OK) s = grove__mpi_components(mpi, &res, off[mpi->rank], (size_t)off[P], NULL, &root, "fof");
    grove_join_result_free(&res);
    if (s == GROVE_OK) s = number(mpi, off, root, params->min_members, threads, group, &ngroups);
    grove__free(root);
    grove__free(off);
    if (s == GROVE_OK && catalogue)
        s = grove__mpi_fof_catalogue(mpi, points, mass, velocity, has[0], has[1], group, ngroups,
                                     grove__threads_for(threads, points.n), catalogue);
    if (s == GROVE_OK && groups) *groups = ngroups;
    return s;
}
