/* The distributed join against the single-process one: every rank's CSR
 * rows (offsets, global rows, distances) byte for byte those rows of
 * grove_join on the whole input, for d = 3 and 64, self- and semi-joins,
 * uniform data and clustered integer data with duplicates (pairs exactly
 * at eps), float32 and float64, exclude_self, eps = 0, and parts that are
 * even, uneven, or empty on all ranks but one. */
#include "mpi_test.h"

#include <stdint.h>
#include <string.h>

typedef struct join_case {
    size_t n, nq, d;
    int clustered, semi, exclude_self, kind;
    grove_dtype dtype;
    double eps;
} join_case;

static void run_case(const join_case *c, grove_mpi *mpi)
{
    int rank = grove_mpi_rank(mpi), ranks = grove_mpi_size(mpi);
    double *xd = mpi_points(c->n, c->d, c->clustered, 1), *xq = c->semi ? mpi_points(c->nq, c->d, c->clustered, 2) : NULL;
    void *data = mpi_as_dtype(xd, c->n * c->d, c->dtype), *queries = xq ? mpi_as_dtype(xq, c->nq * c->d, c->dtype) : NULL;
    grove_join_params jp;
    grove_join_params_init(&jp);
    jp.eps = c->eps;
    jp.exclude_self = c->exclude_self;
    jp.distances = 1;
    grove_points all = mpi_view(data, 0, c->n, c->d, c->dtype), allq = mpi_view(queries, 0, c->nq, c->d, c->dtype);
    grove_join_result one, dist;
    MPI_CHECK(grove_join(all, c->semi ? &allq : NULL, NULL, &jp, &one, NULL) == GROVE_OK);
    size_t f, m, fq, mq;
    mpi_part(c->n, ranks, rank, c->kind, &f, &m);
    mpi_part(c->nq, ranks, rank, (c->kind + 1) % 3, &fq, &mq);
    grove_points mine = mpi_view(data, f, m, c->d, c->dtype), mineq = mpi_view(queries, fq, mq, c->d, c->dtype);
    grove_options o;
    grove_options_init(&o);
    o.mpi = mpi;
    MPI_CHECK(grove_join(mine, c->semi ? &mineq : NULL, NULL, &jp, &dist, &o) == GROVE_OK);
    size_t q0 = c->semi ? fq : f, nq = c->semi ? mq : m;
    MPI_CHECK(dist.nq == nq);
    int64_t base = one.offsets[q0], pairs = one.offsets[q0 + nq] - base;
    MPI_CHECK(dist.pairs == pairs);
    for (size_t q = 0; q <= nq; q++) MPI_CHECK(dist.offsets[q] == one.offsets[q0 + q] - base);
    MPI_CHECK(memcmp(dist.indices, one.indices + base, (size_t)pairs * sizeof(int64_t)) == 0);
    MPI_CHECK(memcmp(dist.distances, one.distances + base, (size_t)pairs * sizeof(double)) == 0);
    /* Something to compare: the cases are chosen to have pairs. */
    MPI_CHECK(one.pairs > (int64_t)(c->semi || c->exclude_self ? 0 : c->n));
    grove_join_result_free(&one);
    grove_join_result_free(&dist);
    free(xd);
    free(xq);
    free(data);
    free(queries);
}

void mpi_case_join(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    grove_mpi *mpi = NULL;
    MPI_CHECK(grove_mpi_create(MPI_COMM_WORLD, &mpi) == GROVE_OK);
    static const join_case cases[] = {
        {2000, 0, 3, 0, 0, 0, 0, GROVE_FLOAT64, 0.08},
        {2000, 0, 3, 0, 0, 1, 1, GROVE_FLOAT32, 0.08},
        {2000, 700, 3, 0, 1, 0, 2, GROVE_FLOAT64, 0.08},
        {2000, 0, 3, 1, 0, 0, 1, GROVE_FLOAT64, 2.0},
        {2000, 700, 3, 1, 1, 0, 0, GROVE_FLOAT32, 2.0},
        {2000, 0, 3, 1, 0, 1, 2, GROVE_FLOAT64, 0.0},
        {600, 0, 64, 0, 0, 0, 0, GROVE_FLOAT64, 2.9},
        {600, 300, 64, 0, 1, 0, 1, GROVE_FLOAT32, 2.9},
        {600, 0, 64, 1, 0, 1, 2, GROVE_FLOAT32, 19.0},
        {600, 300, 64, 1, 1, 0, 0, GROVE_FLOAT64, 19.0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) run_case(&cases[i], mpi);
    grove_mpi_free(mpi);
}
