/* The points as the builders and the checker see them: rotated (Haar-
 * random rotations from a seed, y = R x, the same bits on every platform:
 * + - * / sqrt only, -ffp-contract=off in the Makefile), or scaled where
 * spreads overflow or rotations underflow (balltree_internal.h). */
#include "balltree_internal.h"

#include <float.h>
#include <math.h>

void grove__bt_rotate_row(const double *rotation, grove_points points, size_t stride, size_t row, double *y)
{
    size_t d = points.d;
    for (size_t j = 0; j < d; j++) {
        const double *r = rotation + j * d;
        double sum = 0.0;
        for (size_t k = 0; k < d; k++) {
            double term = r[k] * grove__coord(points, stride, row, k);
            sum = sum + term;
        }
        y[j] = sum;
    }
}

/* q[:, i] . v[:, j] over the columns of two row-major d x d matrices. */
static double column_dot(const double *q, size_t i, const double *v, size_t j, size_t d)
{
    double sum = 0.0;
    for (size_t r = 0; r < d; r++) {
        double term = q[r * d + i] * v[r * d + j];
        sum = sum + term;
    }
    return sum;
}

/* Orthonormalise a's columns by modified Gram-Schmidt, each projection
 * twice ("twice is enough"); false when singular. R's diagonal is
 * positive, which makes Q Haar-distributed for a Gaussian a. */
static bool gram_schmidt(double *a, size_t d)
{
    for (size_t j = 0; j < d; j++) {
        for (int pass = 0; pass < 2; pass++)
            for (size_t i = 0; i < j; i++) {
                double r = column_dot(a, i, a, j, d);
                for (size_t t = 0; t < d; t++) {
                    double step = r * a[t * d + i];
                    a[t * d + j] = a[t * d + j] - step;
                }
            }
        double norm = sqrt(column_dot(a, j, a, j, d));
        if (!(norm > 0.0)) return false;
        for (size_t t = 0; t < d; t++) a[t * d + j] = a[t * d + j] / norm;
    }
    return true;
}

/* Sign of det(q) by LU with partial pivoting on the scratch copy lu. */
static int det_sign(const double *q, double *lu, size_t d)
{
    for (size_t i = 0; i < d * d; i++) lu[i] = q[i];
    int sign = 1;
    for (size_t c = 0; c < d; c++) {
        size_t p = c;
        for (size_t r = c + 1; r < d; r++)
            if (fabs(lu[r * d + c]) > fabs(lu[p * d + c])) p = r;
        if (p != c) {
            sign = -sign;
            for (size_t t = 0; t < d; t++) {
                double tmp = lu[c * d + t];
                lu[c * d + t] = lu[p * d + t];
                lu[p * d + t] = tmp;
            }
        }
        double pivot = lu[c * d + c];
        if (pivot < 0) sign = -sign;
        for (size_t r = c + 1; r < d; r++) {
            double f = lu[r * d + c] / pivot;
            for (size_t t = c + 1; t < d; t++) {
                double step = f * lu[c * d + t];
                lu[r * d + t] = lu[r * d + t] - step;
            }
        }
    }
    return sign;
}

grove_status grove_rotation_random(size_t d, uint64_t seed, double *rotation)
{
    grove__clear_error();
    if (d == 0) return grove__fail(GROVE_INVALID_ARGUMENT, "rotation_random: d must be at least 1");
    if (!rotation) return grove__fail(GROVE_INVALID_ARGUMENT, "rotation_random: rotation is NULL");
    size_t count;
    if (!grove__mul_size(d, d, &count) || count > SIZE_MAX / sizeof(double))
        return grove__fail(GROVE_TOO_LARGE, "rotation_random: d = %zu is too large", d);
    double *lu = grove__malloc(count * sizeof *lu, "rotation scratch");
    if (!lu) return GROVE_OUT_OF_MEMORY;
    grove_rng rng;
    grove_rng_seed(&rng, seed);
    do /* a singular Gaussian matrix has probability zero; draw again if met */
        for (size_t i = 0; i < count; i++) rotation[i] = grove_rng_normal(&rng);
    while (!gram_schmidt(rotation, d));
    /* Negating a row maps det -1 onto +1 and keeps the Haar measure. */
    if (det_sign(rotation, lu, d) < 0)
        for (size_t t = 0; t < d; t++) rotation[t] = -rotation[t];
    grove__free(lu);
    return GROVE_OK;
}

static bool spread_overflows(double magnitude, size_t d, bool rotated)
{
    return !(4 * magnitude * (rotated ? sqrt((double)d) : 1) <= DBL_MAX);
}

/* Products r x of values below 2^-969 round to the subnormals' grid. */
static bool rotation_underflows(double magnitude, bool rotated)
{
    return rotated && magnitude > 0 && magnitude < DBL_MIN / DBL_EPSILON;
}

bool grove__bt_needs_scaling(double magnitude, size_t d, bool rotated)
{
    return spread_overflows(magnitude, d, rotated) || rotation_underflows(magnitude, rotated);
}

double *grove__bt_scaled(grove_points points, double magnitude, bool rotated)
{
    size_t n = points.n, d = points.d, stride = grove__points_stride(points);
    double *x = grove__malloc(n * d * sizeof *x, "balltree scaled coordinates");
    if (!x) return NULL;
    /* Down as little as will do (small values keep their bits), or up to
     * a largest in [1/2, 1) (2^-e may be no double: ldexp on each). */
    int e = 1;
    if (rotation_underflows(magnitude, rotated)) (void)frexp(magnitude, &e);
    else
        while (spread_overflows(ldexp(magnitude, -e), d, rotated)) e++;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < d; j++) x[i * d + j] = ldexp(grove__coord(points, stride, i, j), -e);
    return x;
}
