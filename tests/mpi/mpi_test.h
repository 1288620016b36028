/* The MPI test program (build/test_mpi): each case runs on every rank of
 * an mpirun started by tests/test_mpi.c and fails the program with a line
 * naming the rank and the check. */
#ifndef GROVE_MPI_TEST_H
#define GROVE_MPI_TEST_H

#include "grove_mpi.h"

#include <stdint.h>
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

/* A context on MPI_COMM_WORLD (tests/mpi/util.c), this rank and the size. */
grove_mpi *mpi_world(int *rank, int *ranks);
/* Rank r's first row and row count of n under split kind (tests/mpi/util.c):
 * 0 even, 1 uneven (rank 1 empty when there are more than two), 2 all on
 * the last rank, 3 all on the first. */
void mpi_part(size_t n, int ranks, int rank, int kind, size_t *first, size_t *count);

/* Deterministic points, the same on every rank (tests/mpi/util.c): n x d
 * uniform in [0, 1), or clustered integers (four clusters 12 apart, each
 * coordinate one of 6 values) with every fifth point a copy of an
 * earlier one. */
double *mpi_points(size_t n, size_t d, int clustered, uint64_t seed);
/* Rows first .. first + n - 1 of x (n x d in dtype t) as points. */
grove_points mpi_view(const void *x, size_t first, size_t n, size_t d, grove_dtype t);
/* A copy of x[0 .. m) in dtype t. */
void *mpi_as_dtype(const double *x, size_t m, grove_dtype t);

/* Cases, one file per module under tests/mpi, listed in main.c. */
mpi_case_fn mpi_case_context;
mpi_case_fn mpi_case_join;
mpi_case_fn mpi_case_dbscan;
mpi_case_fn mpi_case_fof;
mpi_case_fn mpi_case_paircount;
mpi_case_fn mpi_case_gravity;
mpi_case_fn mpi_case_cover;
mpi_case_fn mpi_case_nbody;
mpi_case_fn mpi_case_nbody_write;
mpi_case_fn mpi_case_nbody_resume;
mpi_case_fn mpi_case_nbody_energy;
mpi_case_fn mpi_case_errors;

#endif
