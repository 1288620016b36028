/* Principal axes for indexing many dimensions. The group boxes, the
 * kd-tree splits and the candidate filter then work on the projections of
 * the points onto the m leading principal axes: an orthonormal projection
 * never lengthens a distance, so it gives exact lower bounds, and on real
 * high-dimensional data (images, embeddings) it prunes far more pairs than
 * the same number of original dimensions: the leading axes carry most of
 * a distance, any few pixels little of it. Refinement still sums the
 * original coordinates, so results stay exact.
 *
 * The axes come from a fixed sample of rows (at most SAMPLE, evenly spaced)
 * by subspace iteration on its covariance, started from the highest-variance
 * coordinate axes: deterministic, and cheap next to the join. Time is
 * O(s d min(s, d)) and memory O(s d + min(s, d)^2) for a sample of s rows:
 * linear in d. */
#include "search_index.h"

#include <math.h>
#include <string.h>

#define SAMPLE 1024
#define ITERATIONS 24

/* GCC vectorises a floating-point sum only when told it may reorder it;
 * clang warns when it cannot honour the pragma (at -O1), so it goes without. */
#if defined(__GNUC__) && !defined(__clang__)
#define JOIN_SIMD_SUM _Pragma("omp simd reduction(+ : sum)")
#else
#define JOIN_SIMD_SUM
#endif

static double norm2(const double *a, size_t d)
{
    double s = 0;
    for (size_t j = 0; j < d; j++) s += a[j] * a[j];
    return s;
}

/* Orthonormalise the m columns of v (d x m, column k at v + k d) by
 * modified Gram-Schmidt, twice for accuracy. A column that (nearly)
 * vanishes against the earlier ones, as happens when the data have fewer
 * than m directions, is set to zero rather than normalised: its remainder
 * would be rounding noise, and a noisy axis could lengthen distances. Zero
 * axes give zero keys, which bound nothing but break nothing. */
static void orthonormalise(double *v, size_t d, size_t m)
{
    for (int pass = 0; pass < 2; pass++)
        for (size_t k = 0; k < m; k++) {
            double *a = v + k * d, before = norm2(a, d);
            for (size_t l = 0; l < k; l++) {
                const double *b = v + l * d;
                double dot = 0;
                for (size_t j = 0; j < d; j++) dot += a[j] * b[j];
                for (size_t j = 0; j < d; j++) a[j] -= dot * b[j];
            }
            double after = norm2(a, d), scale = after > 1e-12 * before && after > 1e-300 ? 1 / sqrt(after) : 0;
            for (size_t j = 0; j < d; j++) a[j] *= scale;
        }
}

/* g (count x count) = the dot products of `count` rows of `len` values:
 * the upper triangle, then mirrored. */
static void row_products(const double *rows, size_t count, size_t len, int threads, double *g)
{
#pragma omp parallel for num_threads(threads) schedule(dynamic, 8)
    for (size_t a = 0; a < count; a++)
        for (size_t b = a; b < count; b++) {
            const double *row_a = rows + a * len, *row_b = rows + b * len;
            double sum = 0;
            JOIN_SIMD_SUM
            for (size_t i = 0; i < len; i++) sum += row_a[i] * row_b[i];
            g[a * count + b] = g[b * count + a] = sum;
        }
}

/* Subspace iteration v <- g v, orthonormalised, on the m columns of v
 * (column k at v + k side) for the symmetric side x side matrix g; w is
 * scratch of the same size as v. */
static void subspace_iteration(const double *g, size_t side, size_t m, int threads, double *v, double *w)
{
    for (int it = 0; it < ITERATIONS; it++) {
#pragma omp parallel for num_threads(threads) schedule(static)
        for (size_t k = 0; k < m; k++)
            for (size_t a = 0; a < side; a++) {
                double sum = 0;
                for (size_t b = 0; b < side; b++) sum += g[a * side + b] * v[k * side + b];
                w[k * side + a] = sum;
            }
        orthonormalise(w, side, m);
        memcpy(v, w, side * m * sizeof *v);
    }
}

/* The leading m eigenvectors of the sample covariance C = X^T X (X: the
 * s x d centred sample), from the coordinate axes order[0 .. m), into
 * axes. With d <= s, C is held as a d x d matrix (the products of the
 * sample's d rows by dimension, xs). With more dimensions than rows it is
 * never formed: with u = X v, the iteration v <- X^T X v is u <- G u on
 * the s x s Gram matrix G = X X^T of the sample's rows (xs by row), and
 * the axes are X^T u, orthonormalised, so time and memory grow linearly
 * in d. g, v and w are scratch of min(s, d)^2, and twice min(s, d) m. */
static void leading_axes(const double *xs, size_t s, size_t d, const size_t *order, size_t m, int threads,
                         double *g, double *v, double *w, double *axes)
{
    if (d <= s) {
        row_products(xs, d, s, threads, g);
        for (size_t k = 0; k < m; k++) v[k * d + order[k]] = 1;
        subspace_iteration(g, d, m, threads, v, w);
        memcpy(axes, v, d * m * sizeof *axes);
        return;
    }
    row_products(xs, s, d, threads, g);
    for (size_t k = 0; k < m; k++)
        for (size_t i = 0; i < s; i++) v[k * s + i] = xs[i * d + order[k]];
    orthonormalise(v, s, m);
    subspace_iteration(g, s, m, threads, v, w);
#pragma omp parallel for num_threads(threads) schedule(static)
    for (size_t j = 0; j < d; j++)
        for (size_t k = 0; k < m; k++) {
            double sum = 0;
            for (size_t i = 0; i < s; i++) sum += xs[i * d + j] * v[k * s + i];
            axes[k * d + j] = sum;
        }
    orthonormalise(axes, d, m);
}

grove_status grove__principal_axes(grove_points p, double scale, const size_t *order, size_t m, int threads,
                                   double *axes, double *mean)
{
    size_t n = p.n, d = p.d, s = n < SAMPLE ? n : SAMPLE, stride = grove__points_stride(p);
    /* The smaller of the d x d covariance and the s x s Gram matrix, two
     * iterates of the smaller side, and the centred sample. */
    size_t side = d <= s ? d : s;
    double *c = grove__calloc(side * side + 2 * side * m + s * d, sizeof *c, "index principal axes");
    if (!c) return GROVE_OUT_OF_MEMORY;
    double *v = c + side * side, *w = v + side * m, *sample = w + side * m;
    memset(mean, 0, d * sizeof *mean);
    for (size_t i = 0; i < s; i++)
        for (size_t j = 0; j < d; j++) mean[j] += grove__coord(p, stride, i * n / s, j) * scale;
    for (size_t j = 0; j < d; j++) mean[j] /= (double)(s ? s : 1);
    bool by_dimension = d <= s;
    double top = 0;
    for (size_t i = 0; i < s; i++)
        for (size_t j = 0; j < d; j++) {
            double x = grove__coord(p, stride, i * n / s, j) * scale - mean[j];
            sample[by_dimension ? j * s + i : i * d + j] = x;
            top = fabs(x) > top ? fabs(x) : top;
        }
    /* The iteration squares the covariance (or Gram matrix), which holds
     * squares of the coordinates: beyond 2^+-64 their fourth powers would
     * leave the doubles. The axes do not change when the sample is scaled
     * by a power of two, so it is, out there. */
    int e = grove__unit_exponent(top);
    if (e < -64 || e > 64)
        for (size_t i = 0; i < s * d; i++) sample[i] = ldexp(sample[i], -e);
    leading_axes(sample, s, d, order, m, threads, c, v, w, axes);
    grove__free(c);
    return GROVE_OK;
}

double grove__project(const double *axes, const double *mean, size_t d, size_t m, grove_points p, double scale,
                      size_t i, double *key)
{
    size_t stride = grove__points_stride(p);
    double norm2 = 0;
    for (size_t k = 0; k < m; k++) key[k] = 0;
    for (size_t j = 0; j < d; j++) {
        double x = grove__coord(p, stride, i, j) * scale - mean[j];
        norm2 += x * x;
        for (size_t k = 0; k < m; k++) key[k] += axes[k * d + j] * x;
    }
    return sqrt(norm2);
}
