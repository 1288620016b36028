/* The pair counts' brute-force reference (paircount_ref.h). */
#include "paircount_ref.h"

#include <math.h>

const char *const pc_kind_name[PC_KINDS] = {"uniform", "clustered", "lattice"};

size_t pc_ref_nbins(const pc_ref_bins *bins)
{
    return (bins->nedges - 1) * (bins->pimax > 0 ? (size_t)bins->pimax : 1);
}

/* The bin of one ordered pair (i of a, j of b), or -1; T = float or double. */
#define PC_REF_BIN(T, NAME)                                                                                  \
    static long NAME(const pc_set *a, size_t i, const pc_set *b, size_t j, const pc_ref_bins *bins)        \
    {                                                                                                      \
        const T *x = (const T *)a->data + i * a->d, *y = (const T *)b->data + j * b->d;                  \
        size_t d = a->d, dr = bins->pimax > 0 ? d - 1 : d;                                                 \
        T r2 = 0, dz = 0;                                                                                  \
        for (size_t k = 0; k < d; k++) {                                                                   \
            T t = x[k] - y[k];                                                                             \
            if (bins->box && bins->box[k] > 0) {                                                           \
                T len = (T)bins->box[k], half = (T)(bins->box[k] / 2);                                     \
                t = t < 0 ? -t : t;                                                                        \
                if (t > half) t = len - t;                                                                 \
            }                                                                                              \
            if (k < dr) r2 += t * t;                                                                       \
            else dz = t < 0 ? -t : t;                                                                      \
        }                                                                                                  \
        size_t below = 0;                                                                                  \
        for (size_t e = 0; e < bins->nedges; e++) below += r2 >= (T)(bins->edges[e] * bins->edges[e]);      \
        if (below == 0 || below == bins->nedges) return -1;                                                \
        if (!(bins->pimax > 0)) return (long)below - 1;                                                    \
        size_t npi = (size_t)bins->pimax;                                                                  \
        T pm = (T)bins->pimax, dpi = pm / (T)npi, inv = (T)(1.0 / (double)dpi);                           \
        if (!(dz < pm)) return -1;                                                                         \
        int pj = (int)(dz * inv);                                                                          \
        if (pj < 0 || (size_t)pj >= npi) return -1;                                                        \
        return (long)((below - 1) * npi + (size_t)pj);                                                     \
    }
PC_REF_BIN(float, ref_bin_f32)
PC_REF_BIN(double, ref_bin_f64)

void pc_ref_count(const pc_set *a, const pc_set *b, const pc_ref_bins *bins, int64_t *count, double *weighted)
{
    size_t nbins = pc_ref_nbins(bins);
    long double *sum = calloc(nbins + 1, sizeof *sum);
    memset(count, 0, nbins * sizeof *count);
    const pc_set *other = b ? b : a;
    for (size_t i = 0; i < a->n; i++)
        for (size_t j = 0; j < other->n; j++) {
            if (!b && i == j) continue;
            long bin = a->f32 ? ref_bin_f32(a, i, other, j, bins) : ref_bin_f64(a, i, other, j, bins);
            if (bin < 0) continue;
            count[bin]++;
            sum[bin] += (long double)((a->w ? a->w[i] : 1.0) * (other->w ? other->w[j] : 1.0));
        }
    if (!b && bins->edges[0] == 0) {
        /* Each point with itself, at r = 0 (Corrfunc's convention). */
        count[0] += (int64_t)a->n;
        for (size_t i = 0; i < a->n; i++) sum[0] += (long double)((a->w ? a->w[i] : 1.0) * (a->w ? a->w[i] : 1.0));
    }
    for (size_t k = 0; weighted && k < nbins; k++) weighted[k] = (double)sum[k];
    free(sum);
}

pc_set *pc_set_make(pc_kind kind, size_t n, size_t d, bool f32, double side, bool weighted, uint64_t seed)
{
    pc_set *s = calloc(1, sizeof *s);
    s->f32 = f32;
    s->n = n;
    s->d = d;
    s->data = malloc((n * d + 1) * (f32 ? sizeof(float) : sizeof(double)));
    s->w = weighted ? malloc((n + 1) * sizeof *s->w) : NULL;
    grove_rng rng;
    grove_rng_seed(&rng, seed);
    double centre[4][16];
    for (int c = 0; c < 4; c++)
        for (size_t k = 0; k < d; k++) centre[c][k] = grove_rng_uniform(&rng) * side;
    for (size_t i = 0; i < n; i++) {
        size_t copy = kind == PC_CLUSTERED && i % 4 == 3 ? (size_t)grove_rng_below(&rng, i) : i;
        int blob = (int)grove_rng_below(&rng, 4);
        for (size_t k = 0; k < d; k++) {
            double v;
            if (copy != i) v = f32 ? ((float *)s->data)[copy * d + k] : ((double *)s->data)[copy * d + k];
            else if (kind == PC_UNIFORM) v = grove_rng_uniform(&rng) * side;
            else if (kind == PC_LATTICE) v = floor(grove_rng_uniform(&rng) * side * 4) / 4;
            else v = centre[blob][k] + 0.02 * side * (grove_rng_uniform(&rng) - 0.5);
            /* Inside [0, side): a periodic box's coordinates. */
            v = fmod(v + side, side);
            if (f32) {
                float f = (float)v;
                ((float *)s->data)[i * d + k] = f < (float)side ? f : 0;
            } else {
                ((double *)s->data)[i * d + k] = v;
            }
        }
        if (s->w) s->w[i] = 0.5 + 1.5 * grove_rng_uniform(&rng);
    }
    return s;
}

void pc_set_free(pc_set *s)
{
    if (!s) return;
    free(s->data);
    free(s->w);
    free(s);
}

grove_points pc_set_view(const pc_set *s)
{
    return s->f32 ? grove_points_f32(s->data, s->n, s->d) : grove_points_f64(s->data, s->n, s->d);
}
