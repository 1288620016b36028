/* Ball trees of points whose spreads overflow a double: the points scaled
 * to unit range (balltree_internal.h, Range). */
#include "balltree_internal.h"

#include <float.h>
#include <math.h>

bool grove__bt_spread_overflows(double magnitude, size_t d, bool rotated)
{
    return !(4 * magnitude * (rotated ? sqrt((double)d) : 1) <= DBL_MAX);
}

double *grove__bt_scaled(grove_points points, double magnitude, bool rotated)
{
    size_t n = points.n, d = points.d, stride = grove__points_stride(points);
    double *x = grove__malloc(n * d * sizeof *x, "balltree scaled coordinates");
    if (!x) return NULL;
    /* As little as will do: values far below the largest keep their bits. */
    int e = 1;
    while (grove__bt_spread_overflows(ldexp(magnitude, -e), d, rotated)) e++;
    double scale = ldexp(1, -e);
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < d; j++) x[i * d + j] = grove__coord(points, stride, i, j) * scale;
    return x;
}
