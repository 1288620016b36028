/* Brute force in long double for the range tests (test_range.c,
 * test_range_tiny.c): point clouds in float64 or float32, and their
 * squared distances, kNN ranks, core distances, minimum spanning trees and
 * join pairs, whose exponent range holds every square of a double. */
#ifndef GROVE_TEST_RANGE_REF_H
#define GROVE_TEST_RANGE_REF_H

#include "grove.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* n x d points, float64 or float32 (x32 then holds them, x64 the same
 * values widened). */
typedef struct cloud {
    size_t n, d;
    bool f32;
    double *x64;
    float *x32;
} cloud;

double cloud_at(const cloud *c, size_t i, size_t j);
grove_points cloud_view(const cloud *c);
/* n x d zeros (c->x64 and c->x32 hold one more value, never read). */
cloud cloud_alloc(size_t n, size_t d, bool f32);
/* Point i's coordinate j: v, rounded to float in a float32 cloud. */
void cloud_set(cloud *c, size_t i, size_t j, double v);
void cloud_free(cloud *c);

typedef struct edge {
    long double w;
    int64_t u, v;
} edge;

/* Squared distance in long double, exact for the lattice kinds here. */
long double dist2(const cloud *c, size_t a, size_t b);
/* Squared core distances: the K-th smallest squared distance, itself
 * counted. */
long double *brute_core2(const cloud *c, size_t k);
/* Dense Prim under the order (squared weight, smaller row, larger row),
 * mutual reachability with K > 1; n - 1 edges sorted, weights squared. */
edge *prim(const cloud *c, size_t k);
/* Rows by (squared distance to query q, row), all n of them. */
size_t *brute_ranks(const cloud *c, size_t q);
/* Self-join pairs within eps (itself included). */
int64_t brute_pairs(const cloud *c, long double eps);

#endif
