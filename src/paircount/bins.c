/* The pair counts' bins in an index's dtype and units (paircount_internal.h):
 * squared edges as Corrfunc rounds them, the lookup from a squared
 * distance's bits to its bin, and the pi bins. */
#include "paircount_internal.h"

#include <math.h>
#include <string.h>

/* The bits of v in T (dtype), as an unsigned integer; for v >= 0 they
 * order as the values do. */
static uint64_t value_bits(double v, grove_dtype dtype)
{
    if (dtype == GROVE_FLOAT32) {
        float f = (float)v;
        uint32_t u;
        memcpy(&u, &f, sizeof u);
        return u;
    }
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    return u;
}

/* The value in T whose bits are u. */
static double bits_value(uint64_t u, grove_dtype dtype)
{
    if (dtype == GROVE_FLOAT32) {
        uint32_t w = (uint32_t)u;
        float f;
        memcpy(&f, &w, sizeof f);
        return f;
    }
    double v;
    memcpy(&v, &u, sizeof v);
    return v;
}

/* Edges at or below v among the ascending e2[0 .. count). */
static size_t edges_at_or_below(const double *e2, size_t count, double v)
{
    size_t lo = 0, hi = count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (e2[mid] <= v) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* The lookup: cells of 2^fine keys per binary order of magnitude, as
 * many as PC_CELLS_MAX allows over the positive edges' range; each cell
 * holds the number of edges at or below its smallest value, a lower bound
 * that the kernels raise by PC_FIX compares (pair_t.h). Edges so close
 * that a cell holds more than PC_FIX of them leave b->slow set: the
 * kernels then compare until the count is right. */
static grove_status lookup_init(pc_bins *b, const double *e2, grove_dtype dtype)
{
    size_t count = b->nrp + 1, first = 0;
    unsigned mantissa = dtype == GROVE_FLOAT32 ? 23 : 52;
    while (first < count && e2[first] == 0) first++;
    uint64_t lo = first < count ? value_bits(e2[first], dtype) : 0, hi = value_bits(e2[count - 1], dtype);
    unsigned fine = 20;
    while (fine > 0 && ((hi >> (mantissa - fine)) - (lo >> (mantissa - fine)) + 1 > PC_CELLS_MAX)) fine--;
    b->shift = mantissa - fine;
    b->base = lo >> b->shift;
    b->cells = (size_t)((hi >> b->shift) - b->base + 1);
    b->lut = grove__malloc((b->cells + 2) * sizeof *b->lut, "pair count bin lookup");
    if (!b->lut) return GROVE_OUT_OF_MEMORY;
    b->lut[0] = (uint32_t)edges_at_or_below(e2, count, 0);
    for (size_t c = 1; c <= b->cells + 1; c++) {
        b->lut[c] = (uint32_t)edges_at_or_below(e2, count, bits_value((b->base + c - 1) << b->shift, dtype));
        /* The values of cell c - 1 reach at most the edges below cell c. */
        if (b->lut[c] - b->lut[c - 1] > PC_FIX) b->slow = 1;
    }
    return GROVE_OK;
}

grove_status grove__pc_bins_init(pc_bins *b, const grove_index *index, const double *edges, size_t nedges,
                                 double pimax)
{
    memset(b, 0, sizeof *b);
    grove_dtype dtype = index->tree.dtype;
    int e = index->tree.exponent;
    b->nrp = nedges - 1;
    b->rppi = pimax > 0;
    b->npi = b->rppi ? (size_t)pimax : 1;
    b->nbins = b->nrp * b->npi;
    b->slots = (b->nrp + 2) * b->npi + 1;
    for (size_t k = 0; k < index->tree.d; k++) b->dim[index->order[k]] = k;
    double *e2 = grove__malloc((b->nrp + 2) * sizeof *e2, "pair count bins");
    b->e2 = grove__malloc((b->nrp + 2) * grove_dtype_size(dtype), "pair count bins");
    grove_status s = e2 && b->e2 ? GROVE_OK : GROVE_OUT_OF_MEMORY;
    for (size_t k = 0; s == GROVE_OK && k <= b->nrp + 1; k++) {
        /* Scaled (exactly) as the index's coordinates are, squared in
         * double and rounded to T: Corrfunc's squares in the data's units. */
        double es = k <= b->nrp ? ldexp(edges[k], -e) : INFINITY, sq = es * es;
        e2[k] = dtype == GROVE_FLOAT32 ? (double)(float)sq : sq;
        if (dtype == GROVE_FLOAT32) ((float *)b->e2)[k] = (float)e2[k];
        else ((double *)b->e2)[k] = e2[k];
    }
    if (s == GROVE_OK) s = lookup_init(b, e2, dtype);
    if (b->rppi) {
        /* Corrfunc's pi bins: dpi = pimax / npi in T, its inverse in double
         * rounded to T. */
        if (dtype == GROVE_FLOAT32) {
            float pm = (float)pimax, dpi = pm / (float)b->npi;
            b->pimax = ldexp(pm, -e);
            b->inv_dpi = ldexp((float)(1.0 / dpi), e);
        } else {
            double dpi = pimax / (double)b->npi;
            b->pimax = ldexp(pimax, -e);
            b->inv_dpi = ldexp(1.0 / dpi, e);
        }
    }
    grove__free(e2);
    if (s != GROVE_OK) grove__pc_bins_free(b);
    return s;
}

void grove__pc_bins_free(pc_bins *b)
{
    grove__free(b->e2);
    grove__free(b->lut);
    b->e2 = NULL;
    b->lut = NULL;
}
