/* The points scaled by a power of two where spreads overflow or rotated
 * coordinates would round to subnormals (balltree_internal.h). */
#include "balltree_internal.h"

#include <float.h>
#include <math.h>

/* Whether a spread may overflow (balltree_internal.h). */
static bool spread_overflows(double magnitude, size_t d, bool rotated)
{
    return !(4 * magnitude * (rotated ? sqrt((double)d) : 1) <= DBL_MAX);
}

/* A rotation's products r x of values whose last place lies below the
 * smallest normal double (|x| < 2^-969) round to the subnormals' absolute
 * grid, not to 53 bits. */
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
    /* Down, as little as will do (values far below the largest keep their
     * bits), or up until the largest is in [1/2, 1) (2^-e may be no
     * double: ldexp scales each value). */
    int e = 1;
    if (rotation_underflows(magnitude, rotated)) (void)frexp(magnitude, &e);
    else
        while (spread_overflows(ldexp(magnitude, -e), d, rotated)) e++;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < d; j++) x[i * d + j] = ldexp(grove__coord(points, stride, i, j), -e);
    return x;
}
