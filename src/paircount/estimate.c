/* The correlation function and the projected one from pair sums
 * (grove_paircount_xi, grove_paircount_wp): Landy-Szalay with randoms, or
 * against the pairs a uniform set would have in a periodic box. */
#include "../core/internal.h"
#include "../core/exact_sum.h"

#include <math.h>
#include <string.h>

static const double PC_PI = 3.14159265358979323846;

/* What an estimate needs of the binning, checked. */
typedef struct est_bins {
    size_t nrp, npi, d;
    const double *edges;
    double pimax, dpi; /* with (rp, pi) bins */
    double volume;     /* the periodic box's (without randoms) */
} est_bins;

static grove_status est_setup(const grove_paircount_params *p, size_t d, const double *dd, const double *dr,
                              const double *rr, const double *out, int need_pi, est_bins *b)
{
    memset(b, 0, sizeof *b);
    size_t nbins = grove_paircount_bins(p);
    if (nbins == 0) return GROVE_INVALID_ARGUMENT; /* grove_paircount_bins said why */
    if (!dd || !out) return grove__fail(GROVE_INVALID_ARGUMENT, "paircount estimate: dd or the output is NULL");
    if (!dr != !rr)
        return grove__fail(GROVE_INVALID_ARGUMENT, "paircount estimate: give both DR and RR (randoms), or neither");
    if (need_pi && !(p->pimax > 0))
        return grove__fail(GROVE_INVALID_ARGUMENT, "paircount wp: needs (rp, pi) sums (pimax >= 1)");
    if (d < 1 || d > 16 || (p->pimax > 0 && d < 2))
        return grove__fail(GROVE_INVALID_ARGUMENT, "paircount estimate: d = %zu; it must be 1..16 (2..16 in (rp, pi))",
                           d);
    b->nrp = p->nedges - 1;
    b->npi = p->pimax > 0 ? (size_t)p->pimax : 1;
    b->d = d;
    b->edges = p->edges;
    b->pimax = p->pimax;
    b->dpi = p->pimax > 0 ? p->pimax / (double)b->npi : 0;
    if (dr) return GROVE_OK;
    /* Without randoms: the box, periodic in every dimension. */
    const grove_index_params *ip = &p->index;
    size_t count = ip->boxsize ? ip->boxsize_count : 0;
    if (count != 1 && count != d)
        return grove__fail(GROVE_INVALID_ARGUMENT,
                           "paircount estimate: without randoms (DR, RR) the pairs expected come from a periodic box "
                           "in every dimension; give randoms or a box (1 or d = %zu lengths, got %zu)",
                           d, count);
    b->volume = 1;
    for (size_t j = 0; j < d; j++) {
        double len = ip->boxsize[count == 1 ? 0 : j];
        if (!(len > 0) || !isfinite(len))
            return grove__fail(GROVE_INVALID_ARGUMENT,
                               "paircount estimate: boxsize[%zu] = %g; every dimension must be periodic (a length > 0)",
                               count == 1 ? (size_t)0 : j, len);
        b->volume *= len;
    }
    return GROVE_OK;
}

grove_paircount_totals grove_paircount_totals_of(const double *weights, size_t n)
{
    grove_paircount_totals t = {(double)n, (double)n};
    if (!weights) return t;
    grove__xsum sum, sum2;
    grove__xsum_clear(&sum);
    grove__xsum_clear(&sum2);
    for (size_t i = 0; i < n; i++) {
        grove__xsum_add(&sum, weights[i]);
        grove__xsum_add(&sum2, weights[i] * weights[i]);
        if ((i + 1) % GROVE__XSUM_SAFE_ADDS == 0) {
            grove__xsum_normalize(&sum);
            grove__xsum_normalize(&sum2);
        }
    }
    t.sum = grove__xsum_value(&sum);
    t.sum2 = grove__xsum_value(&sum2);
    return t;
}

/* The volume of the k-ball of radius r. */
static double ball(size_t k, double r)
{
    return pow(PC_PI, (double)k / 2) / tgamma((double)k / 2 + 1) * pow(r, (double)k);
}

/* The volume of r (or rp) bin i: a shell of the d-ball, or a ring of the
 * (d - 1)-ball times the depth (both signs of dz) along the line of sight. */
static double bin_volume(const est_bins *b, size_t i, double depth)
{
    size_t k = b->pimax > 0 ? b->d - 1 : b->d;
    double v = ball(k, b->edges[i + 1]) - ball(k, b->edges[i]);
    return b->pimax > 0 ? v * depth : v;
}

/* The pair sum of bin index i less the self pairs it holds (bin 0 of a
 * binning from r = 0 in an autocorrelation). */
static double distinct(const double *sum, size_t i, const est_bins *b, double self)
{
    return i == 0 && b->edges[0] == 0 ? sum[i] - self : sum[i];
}

/* Landy-Szalay for bin index i. */
static double landy_szalay(const est_bins *b, grove_paircount_totals data, grove_paircount_totals randoms,
                           const double *dd, const double *dr, const double *rr, size_t i)
{
    double ndd = data.sum * data.sum - data.sum2, ndr = data.sum * randoms.sum,
           nrr = randoms.sum * randoms.sum - randoms.sum2;
    double r = distinct(rr, i, b, randoms.sum2) / nrr;
    if (!(r != 0) || !isfinite(r)) return NAN;
    return (distinct(dd, i, b, data.sum2) / ndd - 2 * dr[i] / ndr + r) / r;
}

/* The pairs a uniform set would have in rp (or r) bin i and pi bin j of
 * depth `depth` (without pi bins, j = 0 and the depth unused), plus the
 * self pairs where the bin holds r = 0 (Corrfunc's theory.xi and
 * theory.wp). */
static double box_expected(const est_bins *b, grove_paircount_totals data, size_t i, size_t j, double depth)
{
    double ndd = data.sum * data.sum - data.sum2, v = ndd * bin_volume(b, i, depth) / b->volume;
    return i == 0 && j == 0 && b->edges[0] == 0 ? v + data.sum2 : v;
}

grove_status grove_paircount_xi(const grove_paircount_params *params, size_t d, grove_paircount_totals data,
                                grove_paircount_totals randoms, const double *dd, const double *dr, const double *rr,
                                double *xi)
{
    grove__clear_error();
    est_bins b;
    grove_status s = est_setup(params, d, dd, dr, rr, xi, 0, &b);
    if (s != GROVE_OK) return s;
    for (size_t i = 0; i < b.nrp; i++)
        for (size_t j = 0; j < b.npi; j++) {
            size_t at = i * b.npi + j;
            double expected = dr ? 0 : box_expected(&b, data, i, j, 2 * b.dpi);
            xi[at] = dr ? landy_szalay(&b, data, randoms, dd, dr, rr, at) : expected > 0 ? dd[at] / expected - 1 : NAN;
        }
    return GROVE_OK;
}

grove_status grove_paircount_wp(const grove_paircount_params *params, size_t d, grove_paircount_totals data,
                                grove_paircount_totals randoms, const double *dd, const double *dr, const double *rr,
                                double *wp)
{
    grove__clear_error();
    est_bins b;
    grove_status s = est_setup(params, d, dd, dr, rr, wp, 1, &b);
    if (s != GROVE_OK) return s;
    for (size_t i = 0; i < b.nrp; i++) {
        double sum = 0;
        for (size_t j = 0; j < b.npi; j++)
            sum += dr ? landy_szalay(&b, data, randoms, dd, dr, rr, i * b.npi + j) : dd[i * b.npi + j];
        if (dr) {
            /* Corrfunc's convert_rp_pi_counts_to_wp. */
            wp[i] = 2 * b.dpi * sum;
            continue;
        }
        /* Corrfunc's theory.wp: the whole cylinder at once. */
        double expected = box_expected(&b, data, i, 0, 2 * b.pimax);
        wp[i] = expected > 0 ? 2 * b.pimax * (sum / expected - 1) : NAN;
    }
    return GROVE_OK;
}
