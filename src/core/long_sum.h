/* The exact sum of doubles (internal): a long fixed-point accumulator
 * covering every finite double down to the smallest subnormal, with room
 * for 2^77 terms, so the sum is exact whatever the order of the terms.
 * DBSCAN decides its weighted core points with it when the compensated
 * sum is too close to min_samples to tell (src/cluster/dbscan.c).
 * 272 bytes; no allocation. */
#ifndef GROVE_LONG_SUM_H
#define GROVE_LONG_SUM_H

#include "internal.h"

/* 34 64-bit limbs, least significant first: the sum in units of 2^-1074
 * (the smallest subnormal), two's complement. */
#define GROVE__LONG_SUM_LIMBS 34

typedef struct grove__long_sum {
    uint64_t limb[GROVE__LONG_SUM_LIMBS];
} grove__long_sum;

void grove__long_sum_clear(grove__long_sum *a);
/* a += x exactly; x finite. */
void grove__long_sum_add(grove__long_sum *a, double x);
/* Whether the sum rounded to the nearest double (ties to even, as one
 * IEEE addition rounds) is >= m, for a finite m >= 1. */
bool grove__long_sum_rounds_to_at_least(const grove__long_sum *a, double m);

#endif
