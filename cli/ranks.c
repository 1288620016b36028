/* A distributed command's share of the rows and its per-rank counts for
 * --json (docs/mpi.md): each rank takes its block of the input's rows, and
 * rank 0 gathers every rank's rows, bytes sent and peak memory. */
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
    r->points = calloc(3 * (size_t)r->ranks, sizeof *r->points);
    if (!r->points) return GROVE_OUT_OF_MEMORY;
    r->bytes = r->points + r->ranks;
    r->rss = r->bytes + r->ranks;
    grove_mpi_gather_int64(mpi, (int64_t)points, r->points);
    grove_mpi_gather_int64(mpi, grove_mpi_bytes_sent(mpi), r->bytes);
    grove_mpi_gather_int64(mpi, (int64_t)cli_peak_rss(), r->rss);
    return GROVE_OK;
}

void cli_ranks_json(const cli_ranks *r, const grove_mpi *mpi, cli_json *j)
{
    static const char *const keys[3] = {"rank_points", "rank_bytes_sent", "rank_peak_rss_bytes"};
    int ranks = grove_mpi_size(mpi);
    cli_json_int(j, "ranks", ranks);
    long long *v = r->points ? malloc((size_t)ranks * sizeof *v) : NULL;
    const int64_t *from[3] = {r->points, r->bytes, r->rss};
    for (int k = 0; v && k < 3; k++) {
        for (int i = 0; i < ranks; i++) v[i] = from[k][i];
        cli_json_ints(j, keys[k], v, (size_t)ranks);
    }
    free(v);
}

void cli_ranks_free(cli_ranks *r)
{
    free(r->points);
    r->points = r->bytes = r->rss = NULL;
}
