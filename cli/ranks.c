/* A distributed command's share of the rows and its per-rank counts for
 * --json (docs/mpi.md): each rank takes its block of the input's rows, and
 * rank 0 gathers every rank's rows and bytes sent. */
#include "cli.h"

#include <stdlib.h>

const char *const cli_mpi_phases[GROVE_MPI_PHASES] = {"decompose", "tree", "let", "walk", "home"};

grove_points cli_block(grove_points p, const grove_mpi *mpi, size_t *first)
{
    size_t count;
    grove_mpi_block(mpi, p.n, first, &count);
    if (p.data) p.data = (const char *)p.data + *first * (p.stride ? p.stride : p.d * grove_dtype_size(p.dtype));
    p.n = count;
    return p;
}

grove_status cli_ranks_gather(cli_ranks *r, const grove_mpi *mpi, size_t points)
{
    r->ranks = grove_mpi_size(mpi);
    r->points = calloc((size_t)r->ranks, sizeof *r->points);
    r->bytes = calloc((size_t)r->ranks, sizeof *r->bytes);
    if (!r->points || !r->bytes) return GROVE_OUT_OF_MEMORY;
    grove_mpi_gather_int64(mpi, (int64_t)points, r->points);
    grove_mpi_gather_int64(mpi, grove_mpi_bytes_sent(mpi), r->bytes);
    return GROVE_OK;
}

void cli_ranks_json(const cli_ranks *r, const grove_mpi *mpi, cli_json *j)
{
    int ranks = grove_mpi_size(mpi);
    cli_json_int(j, "ranks", ranks);
    long long *v = r->points ? malloc((size_t)ranks * sizeof *v) : NULL;
    for (int k = 0; v && k < 2; k++) {
        const int64_t *from = k ? r->bytes : r->points;
        for (int i = 0; i < ranks; i++) v[i] = from[i];
        cli_json_ints(j, k ? "rank_bytes_sent" : "rank_points", v, (size_t)ranks);
    }
    free(v);
}

void cli_ranks_free(cli_ranks *r)
{
    free(r->points);
    free(r->bytes);
    r->points = r->bytes = NULL;
}
