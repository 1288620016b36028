/* The public calls of the MPI part (grove.h, "Distributed runs") in a
 * build without it: no context can be made, so every process is alone.
 * The Makefile compiles this file instead of src/mpi when MPI is not
 * built; the dispatch tables' distributed columns are then empty
 * (GROVE__MPI_PART, dispatch.h). */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

int grove_mpi_built(void) { return 0; }
int grove_mpi_rank(const grove_mpi *mpi) { (void)mpi; return 0; }
int grove_mpi_size(const grove_mpi *mpi) { (void)mpi; return 1; }
int64_t grove_mpi_bytes_sent(const grove_mpi *mpi) { (void)mpi; return 0; }

/* The number of processes a launcher says it started (1 when none): a
 * build without MPI refuses to run as one of several copies, each of
 * which would compute and write everything. */
static long launched_ranks(void)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = getenv(vars[i]);
        if (v) return strtol(v, NULL, 10);
    }
    return 1;
}

grove_status grove_mpi_launch(int *argc, char ***argv, grove_mpi **out)
{
    (void)argc;
    (void)argv;
    grove__clear_error();
    if (!out) return grove__fail(GROVE_INVALID_ARGUMENT, "mpi: out is NULL");
    *out = NULL;
    long ranks = launched_ranks();
    if (ranks > 1)
        return grove__fail(GROVE_UNSUPPORTED, "mpi: started on %ld ranks, but this grove was built without MPI "
                                              "(grove info: mpi: no)", ranks);
    return GROVE_OK;
}

void grove_mpi_free(grove_mpi *mpi) { (void)mpi; }

void grove_mpi_load(const grove_mpi *mpi, int64_t *particles, double *seconds)
{
    (void)mpi;
    if (particles) *particles = 0;
    if (seconds) *seconds = 0;
}

void grove_mpi_phases(const grove_mpi *mpi, double *seconds, int64_t *bytes)
{
    (void)mpi;
    for (int k = 0; k < GROVE_MPI_PHASES; k++) {
        if (seconds) seconds[k] = 0;
        if (bytes) bytes[k] = 0;
    }
}

void grove_mpi_gather_int64(const grove_mpi *mpi, int64_t value, int64_t *all)
{
    (void)mpi;
    if (all) all[0] = value;
}

grove_status grove_mpi_agree(const grove_mpi *mpi, grove_status s)
{
    (void)mpi;
    return s;
}

void grove_mpi_block(const grove_mpi *mpi, size_t n, size_t *first, size_t *count)
{
    (void)mpi;
    *first = 0;
    *count = n;
}

grove_status grove_mpi_gather_blocks(const grove_mpi *mpi, void *array, size_t n, size_t elem)
{
    (void)mpi, (void)array, (void)n, (void)elem;
    grove__clear_error();
    return GROVE_OK;
}

grove_status grove_mpi_broadcast(const grove_mpi *mpi, void *data, size_t bytes)
{
    (void)mpi, (void)data, (void)bytes;
    grove__clear_error();
    return GROVE_OK;
}

grove_status grove_mpi_gatherv(const grove_mpi *mpi, const void *mine, size_t count, size_t elem, void *all)
{
    (void)mpi;
    grove__clear_error();
    if (count) memmove(all, mine, count * elem);
    return GROVE_OK;
}
