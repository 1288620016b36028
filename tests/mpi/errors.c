/* A bad value in one rank's part of a distributed call's input fails
 * every rank with the same message, naming the value's row in the whole
 * input (not in the part) and, on several ranks, the rank that holds it:
 * points, masses and velocities of fof, gravity and the N-body creation,
 * data and queries of the join (and so DBSCAN), DBSCAN's sample weights,
 * on uneven parts. */
#include "mpi_test.h"

#include <math.h>
#include <string.h>

enum { N = 201, BAD = 100, NQ = 50, BAD_QUERY = 30 };

/* The call's status and message on this rank: GROVE_INVALID_ARGUMENT,
 * the expected words, and "rank R: " for the rank R holding global row
 * bad (of n rows split as mpi_part kind 1) when there are several. */
static void check_failure(const char *call, grove_status s, const char *words, size_t n, size_t bad, int ranks)
{
    const char *e = grove_last_error();
    int holder = 0;
    for (int r = 0; r < ranks; r++) {
        size_t first, count;
        mpi_part(n, ranks, r, 1, &first, &count);
        if (bad >= first && bad < first + count) holder = r;
    }
    char rank_words[32];
    snprintf(rank_words, sizeof rank_words, "rank %d: ", holder);
    if (s != GROVE_INVALID_ARGUMENT || !strstr(e, words) || (ranks > 1 && strncmp(e, rank_words, strlen(rank_words))))
        fprintf(stderr, "%s: got %s \"%s\", wanted \"%s%s\"\n", call, grove_status_str(s), e,
                ranks > 1 ? rank_words : "", words);
    MPI_CHECK(s == GROVE_INVALID_ARGUMENT && strstr(e, words));
    MPI_CHECK(ranks == 1 || strncmp(e, rank_words, strlen(rank_words)) == 0);
}

void mpi_case_errors(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    int rank, ranks;
    grove_mpi *mpi = mpi_world(&rank, &ranks);
    grove_options o;
    grove_options_init(&o);
    o.mpi = mpi;
    size_t first, count, qfirst, qcount;
    mpi_part(N, ranks, rank, 1, &first, &count);
    mpi_part(NQ, ranks, rank, 1, &qfirst, &qcount);
    double x[N * 3], mass[N], vel[N * 3], q[NQ * 3];
    for (size_t i = 0; i < N * 3; i++) x[i] = (double)((i * 37) % 101) / 10, vel[i] = 0;
    for (size_t i = 0; i < N; i++) mass[i] = 1.0 / N;
    for (size_t i = 0; i < NQ * 3; i++) q[i] = (double)((i * 13) % 29) / 3;
    int64_t group[N], labels[N];
    double acc[N * 3];
    grove_points mine = grove_points_f64(x + 3 * first, count, 3);
    grove_fof_params fp;
    grove_fof_params_init(&fp);
    fp.linking_length = 0.5;

    x[3 * BAD + 1] = NAN;
    check_failure("fof points", grove_fof(mine, NULL, NULL, &fp, group, NULL, NULL, &o), "row 100, column 1 is NaN",
                  N, BAD, ranks);
    grove_gravity_params gp;
    grove_gravity_params_init(&gp);
    check_failure("gravity positions", grove_gravity(mine, mass + first, &gp, acc, NULL, NULL, &o),
                  "particle 100, coordinate 1 is not finite", N, BAD, ranks);
    grove_join_params jp;
    grove_join_params_init(&jp);
    jp.eps = 1;
    grove_join_result res;
    check_failure("join data", grove_join(mine, NULL, NULL, &jp, &res, &o), "row 100, column 1 is NaN", N, BAD,
                  ranks);
    grove_dbscan_params dp;
    grove_dbscan_params_init(&dp);
    dp.eps = 1;
    check_failure("dbscan", grove_dbscan(mine, NULL, &dp, labels, NULL, NULL, &o), "row 100, column 1 is NaN", N, BAD,
                  ranks);
    x[3 * BAD + 1] = 1;

    q[3 * BAD_QUERY + 2] = INFINITY;
    grove_points mine_q = grove_points_f64(q + 3 * qfirst, qcount, 3);
    check_failure("join queries", grove_join(mine, &mine_q, NULL, &jp, &res, &o),
                  "queries: points: row 30, column 2 is infinite", NQ, BAD_QUERY, ranks);

    /* A weight that is not finite; weights missing on a rank with rows. */
    mass[BAD] = NAN;
    dp.sample_weight = mass + first;
    check_failure("dbscan weights", grove_dbscan(mine, NULL, &dp, labels, NULL, NULL, &o),
                  "dbscan: sample_weight[100] = nan; weights must be finite", N, BAD, ranks);
    mass[BAD] = 1.0 / N;
    size_t last_first, last_count;
    mpi_part(N, ranks, ranks - 1, 1, &last_first, &last_count);
    dp.sample_weight = rank == ranks - 1 ? NULL : mass + first;
    if (ranks > 1)
        check_failure("dbscan weights", grove_dbscan(mine, NULL, &dp, labels, NULL, NULL, &o),
                      "sample_weight is NULL here but given on another rank", N, last_first, ranks);
    dp.sample_weight = NULL;

    mass[BAD] = -1;
    check_failure("fof masses", grove_fof(mine, mass + first, NULL, &fp, group, NULL, NULL, &o), "mass[100] = -1", N,
                  BAD, ranks);
    check_failure("gravity masses", grove_gravity(mine, mass + first, &gp, acc, NULL, NULL, &o),
                  "particle 100 has mass -1", N, BAD, ranks);
    mass[BAD] = 1.0 / N;

    vel[3 * BAD + 2] = NAN;
    check_failure("fof velocities", grove_fof(mine, mass + first, vel + 3 * first, &fp, group, NULL, NULL, &o),
                  "velocity[100][2] = nan", N, BAD, ranks);
    grove_nbody *sim = NULL;
    check_failure("nbody velocities", grove_nbody_create(mine, vel + 3 * first, mass + first, NULL, &o, &sim),
                  "velocity 2 of particle 100 is not finite", N, BAD, ranks);
    MPI_CHECK(!sim);
    grove_mpi_free(mpi);
}
