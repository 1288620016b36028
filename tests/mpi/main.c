/* build/test_mpi CASE [ARGS]: run one case under MPI on every rank. */
#include "mpi_test.h"

#include <string.h>

static const struct {
    const char *name;
    mpi_case_fn *fn;
} cases[] = {
    {"context", mpi_case_context},
    {"join", mpi_case_join},
    {"dbscan", mpi_case_dbscan},
    {"fof", mpi_case_fof},
    {"paircount", mpi_case_paircount},
    {"gravity", mpi_case_gravity},
    {"cover", mpi_case_cover},
    {"nbody", mpi_case_nbody},
    {"nbody_write", mpi_case_nbody_write},
    {"nbody_resume", mpi_case_nbody_resume},
    {"nbody_energy", mpi_case_nbody_energy},
    {"errors", mpi_case_errors},
};

int main(int argc, char **argv)
{
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    int status = 2;
    for (size_t i = 0; argc > 1 && i < sizeof cases / sizeof cases[0]; i++)
        if (strcmp(argv[1], cases[i].name) == 0) {
            cases[i].fn(argc - 2, argv + 2);
            status = 0;
        }
    if (status) fprintf(stderr, "test_mpi: unknown case '%s'\n", argc > 1 ? argv[1] : "");
    MPI_Finalize();
    return status;
}
