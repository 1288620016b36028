/* The MPI test program (build/test_mpi): each case runs on every rank of
 * an mpirun started by tests/test_mpi.c and fails the program with a line
 * naming the rank and the check. */
#ifndef GROVE_MPI_TEST_H
#define GROVE_MPI_TEST_H

#include "grove_mpi.h"

#include <stdio.h>
#include <stdlib.h>

/* Fail this rank (and the job: mpirun reports the status) when cond is false. */
#define MPI_CHECK(cond)                                                                         \
    do {                                                                                        \
        if (!(cond)) {                                                                          \
            int rank_ = 0;                                                                      \
            MPI_Comm_rank(MPI_COMM_WORLD, &rank_);                                              \
            fprintf(stderr, "rank %d: %s:%d: check failed: %s (%s)\n", rank_, __FILE__, __LINE__, \
                    #cond, grove_last_error());                                                \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                       \
        }                                                                                       \
    } while (0)

typedef void mpi_case_fn(int argc, char **argv);

/* Cases, one file per module under tests/mpi, listed in main.c. */
mpi_case_fn mpi_case_context;
mpi_case_fn mpi_case_join;
mpi_case_fn mpi_case_dbscan;
mpi_case_fn mpi_case_gravity;

#endif
