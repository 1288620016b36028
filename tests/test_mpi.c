/* The MPI part through mpirun, on 1 to 4 ranks (more ranks than cores):
 * the library cases of tests/mpi and the CLI's behaviour under a launcher.
 * Without the MPI part in the build there is nothing distributed to test. */
#include "test.h"

TEST(mpi_context_on_1_to_4_ranks)
{
    if (!test_mpi_ready()) return;
    for (int p = 1; p <= 4; p++) {
        char *out = NULL;
        CHECK_MSG(test_mpirun(p, "test_mpi", "context", &out) == 0, "np %d: %s", p, out);
        free(out);
    }
}

TEST(mpi_join_rows_byte_identical_to_one_process_on_1_to_4_ranks)
{
    if (!test_mpi_ready()) return;
    for (int p = 1; p <= 4; p++) {
        char *out = NULL;
        CHECK_MSG(test_mpirun(p, "test_mpi", "join", &out) == 0, "np %d: %s", p, out);
        free(out);
    }
}

TEST(mpi_cli_info_prints_once_with_ranks)
{
    if (!test_mpi_ready()) return;
    char *out = NULL;
    REQUIRE(test_mpirun(3, "grove", "info --json", &out) == 0);
    CHECK(strstr(out, "\"ranks\": 3") != NULL);
    CHECK(strstr(out, "\"mpi\": \"yes") != NULL);
    const char *first = strstr(out, "\"command\"");
    CHECK(first && !strstr(first + 1, "\"command\""));
    free(out);
}

TEST(mpi_cli_refuses_one_process_commands_on_several_ranks)
{
    if (!test_mpi_ready()) return;
    char *out = NULL;
    CHECK(test_mpirun(2, "grove", "emst --help-not-reached", &out) != 0);
    CHECK(strstr(out, "grove emst: runs on one process, but was started on 2 MPI ranks") != NULL);
    free(out);
    /* One rank under mpirun is a plain run. */
    char args[512];
    snprintf(args, sizeof args, "gen uniform --n 10 --dims 2 --seed 1 -o %s --quiet", test_path("mpi_gen.npy"));
    CHECK(test_mpirun(1, "grove", args, &out) == 0);
    free(out);
}
