/* The join's pruning radii on a grove_index: how far beyond eps (or a kNN
 * bound) a box or key may lie before rounding could matter, and the
 * group shortcut's radius inside it. */
#include "join_internal.h"

#include <float.h>
#include <math.h>

double grove__join_eps2(const grove_index *index, double eps)
{
    eps = ldexp(eps, -index->tree.exponent);
    double e2 = eps * eps;
    return index->tree.dtype == GROVE_FLOAT32 ? (double)(float)e2 : e2;
}

double grove__join_eps2_key(const grove_index *index, double eps)
{
    eps = ldexp(eps, -index->tree.exponent);
    if (!(eps > 0)) return -INFINITY;
    /* eps scaled to [1, 2) squares without underflow, rounded as above. */
    int j = -ilogb(eps);
    double e2 = ldexp(eps, j);
    e2 *= e2;
    if (index->tree.dtype == GROVE_FLOAT32) return grove__key_pack((float)e2, -2L * j, FLT_MIN_EXP, FLT_MAX_EXP);
    return grove__key_pack(e2, -2L * j, DBL_MIN_EXP, DBL_MAX_EXP);
}

double grove__join_prune2_sq(const grove_index *D, const grove_index *Q, double r2)
{
    /* Any two summation orders of k non-negative terms agree within a
     * relative 2 k u (u the unit roundoff); projected keys are off by at
     * most (u + d 2^-50) |x - mean| per axis at each end. */
    double u = D->tree.dtype == GROVE_FLOAT32 ? 0x1p-24 : 0x1p-53;
    double r = sqrt(r2 * (1 + 4 * (double)D->tree.d * u));
    /* Minimum images: each dimension's L - t and each box gap wrapped
     * round carry an absolute rounding of up to 2 u L, at both ends. */
    if (D->boxsize) r += 8 * u * D->period_max * sqrt((double)D->tree.dims);
    if (D->axes)
        r += 2 * sqrt((double)D->tree.dims) * (u + (double)D->tree.d * 0x1p-50) * (D->radius + Q->radius) + 1e-12 * r;
    /* Above every key sum that underflowed (for such a pair the refinement
     * decides, exactly: ../index/dist_key.h). */
    double floor = D->tree.dtype == GROVE_FLOAT32 ? 0x1p-120 : 0x1p-1000;
    return r * r * (1 + 4 * (double)D->tree.dims * u) + floor;
}

double grove__join_prune2(const grove_index *D, const grove_index *Q, double eps)
{
    return grove__join_prune2_sq(D, Q, grove__join_eps2(D, eps));
}

double grove__join_link2(const grove_index *index, double eps)
{
    if (index->tree.dims != index->tree.d || index->axes || !index->xs) return -1;
    /* FN(box_span2) bounds the pair kernel exactly (dist_t.h); the margin
     * of prune2's size, taken off instead of added, keeps the shortcut
     * safe should the two ever sum in different orders. */
    double u = index->tree.dtype == GROVE_FLOAT32 ? 0x1p-24 : 0x1p-53;
    double r = sqrt(grove__join_eps2(index, eps));
    if (index->boxsize) r -= 8 * u * index->period_max * sqrt((double)index->tree.d);
    /* Below the smallest normal a span's sum may have underflowed. */
    double link2 = r > 0 ? r * r * (1 - 4 * (double)(index->tree.d + 2) * u) : -1;
    return link2 >= (index->tree.dtype == GROVE_FLOAT32 ? FLT_MIN : DBL_MIN) ? link2 : -1;
}
