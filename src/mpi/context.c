/* The communicator context: made from the caller's communicator or by
 * grove_mpi_launch for a process an MPI launcher started. */
#include "mpi_internal.h"

#include <stdlib.h>

int grove_mpi_built(void) { return 1; }
int grove_mpi_rank(const grove_mpi *mpi) { return mpi ? mpi->rank : 0; }
int grove_mpi_size(const grove_mpi *mpi) { return mpi ? mpi->size : 1; }

static grove_status make_context(MPI_Comm comm, bool finalize, grove_mpi **out)
{
    grove_mpi *m = grove__calloc(1, sizeof *m, "mpi context");
    if (!m) return GROVE_OUT_OF_MEMORY;
    if (MPI_Comm_dup(comm, &m->comm) != MPI_SUCCESS) {
        grove__free(m);
        return grove__fail(GROVE_IO_ERROR, "mpi: MPI_Comm_dup failed");
    }
    MPI_Comm_rank(m->comm, &m->rank);
    MPI_Comm_size(m->comm, &m->size);
    m->finalize = finalize;
    *out = m;
    return GROVE_OK;
}

grove_status grove_mpi_create(MPI_Comm comm, grove_mpi **out)
{
    grove__clear_error();
    if (!out) return grove__fail(GROVE_INVALID_ARGUMENT, "mpi: out is NULL");
    *out = NULL;
    int ready = 0, level = 0;
    MPI_Initialized(&ready);
    if (!ready) return grove__fail(GROVE_INVALID_ARGUMENT, "mpi: MPI is not initialised (call MPI_Init first)");
    MPI_Query_thread(&level);
    if (level < MPI_THREAD_FUNNELED)
        return grove__fail(GROVE_INVALID_ARGUMENT, "mpi: grove needs MPI_THREAD_FUNNELED or more (MPI_Init_thread)");
    return make_context(comm, false, out);
}

void grove_mpi_load(const grove_mpi *mpi, int64_t *particles, double *seconds)
{
    if (particles) *particles = mpi ? mpi->held : 0;
    if (seconds) *seconds = mpi ? mpi->phase_seconds[GROVE_MPI_PHASE_WALK] : 0;
}

void grove_mpi_phases(const grove_mpi *mpi, double *seconds, int64_t *bytes)
{
    for (int k = 0; k < GROVE_MPI_PHASES; k++) {
        if (seconds) seconds[k] = mpi ? mpi->phase_seconds[k] : 0;
        if (bytes) bytes[k] = mpi ? mpi->phase_bytes[k] : 0;
    }
}

MPI_Comm grove_mpi_comm(const grove_mpi *mpi) { return mpi ? mpi->comm : MPI_COMM_SELF; }

/* The variables the common launchers set in each process they start:
 * Open MPI's mpirun, MPICH's Hydra and Slurm's PMI, PMIx (srun --mpi=pmix,
 * Open MPI 5). */
static bool started_by_launcher(void)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
        if (getenv(vars[i])) return true;
    return false;
}

grove_status grove_mpi_launch(int *argc, char ***argv, grove_mpi **out)
{
    grove__clear_error();
    if (!out) return grove__fail(GROVE_INVALID_ARGUMENT, "mpi: out is NULL");
    *out = NULL;
    if (!started_by_launcher()) return GROVE_OK;
    int provided = 0;
    if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
        return grove__fail(GROVE_IO_ERROR, "mpi: MPI_Init_thread failed");
    if (provided < MPI_THREAD_FUNNELED) {
        MPI_Finalize();
        return grove__fail(GROVE_UNSUPPORTED, "mpi: this MPI gives no MPI_THREAD_FUNNELED support");
    }
    grove_status s = make_context(MPI_COMM_WORLD, true, out);
    if (s != GROVE_OK) MPI_Finalize();
    return s;
}

void grove_mpi_free(grove_mpi *mpi)
{
    if (!mpi) return;
    MPI_Comm_free(&mpi->comm);
    bool finalize = mpi->finalize;
    grove__free(mpi);
    if (finalize) MPI_Finalize();
}
