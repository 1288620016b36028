/* Sampled checks of join and kNN results against brute force in double
 * (the CLI's --verify N): a few evenly spaced queries, every data point. */
#ifndef GROVE_CLI_CHECK_BRUTE_H
#define GROVE_CLI_CHECK_BRUTE_H

#include "cli.h"

#include <stdbool.h>
#include <stddef.h>

typedef struct check_brute {
    grove_points data, queries; /* queries = data for a self-join */
    const cli_box *box;         /* periodic box (minimum images), or NULL */
    double eps;
    bool exclude_self;
    size_t nq, samples, checked, failures;
    char first[256];            /* the first failure, described */
} check_brute;

void check_brute_init(check_brute *v, grove_points data, const grove_points *queries, const cli_box *box, double eps,
                      bool exclude_self, size_t samples);
/* Check the sampled queries that fall in this batch. */
void check_brute_join_batch(check_brute *v, const grove_join_batch *b);
/* A count-only join: check the sampled queries' counts, offsets[q + 1] -
 * offsets[q] (nq + 1 running sums). */
void check_brute_join_counts(check_brute *v, const int64_t *offsets);
/* kNN: check the sampled queries of indices/distances (nq x k). */
void check_brute_knn(check_brute *v, size_t k, const int64_t *indices, const double *distances);
/* Print the outcome (the failure always; success unless quiet); true when
 * every check passed. */
bool check_brute_report(const check_brute *v, const char *command, bool quiet);

#endif
