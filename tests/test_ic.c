/* The Hernquist and Plummer-with-a-point-mass initial conditions against
 * closed forms: the radius distribution (Kolmogorov-Smirnov against M(r)),
 * the velocity dispersion profile against the Jeans solution, the virial
 * ratio, isotropy, mirrored pairs, determinism, the Eddington table against
 * Plummer's own distribution function, and the parameter checks. */
#include "test.h"

#include "nbody/ic_internal.h"

#include <math.h>

static double norm(const double *a) { return sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]); }

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Kolmogorov's asymptotic p-value for statistic d of k samples. */
static double ks_p(double d, size_t k)
{
    double t = (sqrt((double)k) + 0.12 + 0.11 / sqrt((double)k)) * d, p = 0;
    for (int j = 1; j <= 100; j++) p += 2 * (j % 2 ? 1 : -1) * exp(-2 * j * j * t * t);
    return p < 0 ? 0 : p > 1 ? 1 : p;
}

/* The KS statistic of the radii of rows first, first + 2, ... (the drawn
 * halves of the mirrored pairs: independent samples) against cdf. */
static double ks_radii(const test_particles *s, size_t first, double (*cdf)(double), size_t *count)
{
    size_t k = 0;
    double *r = malloc(s->n * sizeof *r);
    for (size_t i = first; i + 1 < s->n; i += 2) r[k++] = norm(s->x + 3 * i);
    qsort(r, k, sizeof *r, by_value);
    double d = 0;
    for (size_t i = 0; i < k; i++) {
        double c = cdf(r[i]), lo = c - (double)i / (double)k, hi = (double)(i + 1) / (double)k - c;
        d = fmax(d, fmax(lo, hi));
    }
    free(r);
    *count = k;
    return d;
}

static const double A = GROVE__HERNQUIST_A, M_H = 1 / GROVE__HERNQUIST_KEPT, B = 3 * GROVE__PI / 16;

static double hernquist_cdf(double r) { return r * r / ((r + A) * (r + A)) / GROVE__HERNQUIST_KEPT; }
static double plummer_cdf(double r) { return pow(r * r / (r * r + B * B), 1.5) / 0.999; }

/* Hernquist (1990) eq. 10: the isotropic radial dispersion. */
static double hernquist_sigma2(double r)
{
    double x = r / A;
    return M_H / (12 * A) *
           (12 * x * pow(1 + x, 3) * log((1 + x) / x) - x / (1 + x) * (25 + 52 * x + 42 * x * x + 12 * x * x * x));
}

/* The Jeans solution for plummer-bh by quadrature: sigma_r^2 rho =
 * int_r^inf rho(s) (mu + M_s(s)) / s^2 ds, in u = ln s (Simpson). */
static double plummer_bh_sigma2(double r, double mu)
{
    double ms = 1 - mu, lo = log(r), hi = log(r) + 12, h = (hi - lo) / 240, sum = 0;
    for (int k = 0; k <= 240; k++) {
        double s = exp(lo + k * h), rho = pow(1 + s * s / (B * B), -2.5);
        double mass = mu + ms * pow(s * s / (s * s + B * B), 1.5), w = k == 0 || k == 240 ? 1 : k % 2 ? 4 : 2;
        sum += w * rho * mass / (s * s) * s;
    }
    return sum * h / 3 / pow(1 + r * r / (B * B), -2.5);
}

/* Mean v^2 against 3 sigma_r^2(r) over the drawn rows (first, first + 2,
 * ...) in `bins` equal-count radius bins of the inner 95%: each within 4
 * standard errors of the bin's mean v^2 and within tol. */
static void dispersion_profile(const test_particles *s, size_t first, double (*sigma2)(double, double), double mu, double tol)
{
    size_t k = 0, bins = 10;
    double(*rv)[2] = malloc(s->n * sizeof *rv);
    for (size_t i = first; i + 1 < s->n; i += 2) {
        rv[k][0] = norm(s->x + 3 * i);
        rv[k++][1] = s->v[3 * i] * s->v[3 * i] + s->v[3 * i + 1] * s->v[3 * i + 1] + s->v[3 * i + 2] * s->v[3 * i + 2];
    }
    qsort(rv, k, sizeof *rv, by_value); /* by radius: the first of each pair */
    size_t per = (size_t)(0.95 * (double)k) / bins;
    double worst = 0;
    for (size_t b = 0; b < bins; b++) {
        double sum = 0, sum2 = 0, model = 0;
        for (size_t i = b * per; i < (b + 1) * per; i++) {
            sum += rv[i][1];
            sum2 += rv[i][1] * rv[i][1];
            model += 3 * sigma2(rv[i][0], mu);
        }
        double mean = sum / (double)per, se = sqrt((sum2 / (double)per - mean * mean) / (double)per);
        model /= (double)per;
        CHECK_MSG(fabs(mean - model) < 4 * se && fabs(mean / model - 1) < tol,
                  "bin %zu (r %.3g..%.3g): <v^2> %.5f, Jeans %.5f, standard error %.5f", b, rv[b * per][0],
                  rv[(b + 1) * per - 1][0], mean, model, se);
        worst = fmax(worst, fabs(mean / model - 1));
    }
    printf("    dispersion profile: 10 bins to r %.3g, largest |<v^2> / Jeans - 1| %.4f\n", rv[bins * per][0], worst);
    free(rv);
}

static double hernquist_sigma2_mu(double r, double mu)
{
    (void)mu;
    return hernquist_sigma2(r);
}

/* 2 K / |W| with W = 1/2 sum m phi from tree forces (theta 0.5, no
 * softening: potentials within 1e-3 of the direct sum's, far below the
 * sample's own scatter in W, and seconds less at n = 10^5). */
static double virial(const test_particles *s)
{
    double *acc = malloc(4 * s->n * sizeof(double)), *pot = acc + 3 * s->n, k = 0, w = 0;
    grove_gravity_params g;
    grove_gravity_params_init(&g);
    g.theta = 0.5;
    CHECK_OK(grove_gravity(grove_points_f64(s->x, s->n, 3), s->m, &g, acc, pot, NULL, NULL));
    for (size_t i = 0; i < s->n; i++) {
        const double *v = s->v + 3 * i;
        k += 0.5 * s->m[i] * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
        w += 0.5 * s->m[i] * pot[i];
    }
    free(acc);
    return 2 * k / fabs(w);
}

/* <v_r^2> against <v_t^2> / 2 over the drawn rows: their difference's
 * mean within 4 standard errors of 0; returns the ratio. */
static double isotropy(const test_particles *s, size_t first)
{
    double sum = 0, sum2 = 0, vr2 = 0, vt2 = 0;
    size_t k = 0;
    for (size_t i = first; i + 1 < s->n; i += 2, k++) {
        const double *x = s->x + 3 * i, *v = s->v + 3 * i;
        double r = norm(x), vr = (x[0] * v[0] + x[1] * v[1] + x[2] * v[2]) / r, v2 = norm(v) * norm(v);
        double d = vr * vr - 0.5 * (v2 - vr * vr);
        sum += d;
        sum2 += d * d;
        vr2 += vr * vr;
        vt2 += 0.5 * (v2 - vr * vr);
    }
    double mean = sum / (double)k, se = sqrt((sum2 / (double)k - mean * mean) / (double)k);
    CHECK_MSG(fabs(mean) < 4 * se, "<v_r^2 - v_t^2/2> = %.3e, standard error %.3e", mean, se);
    return vr2 / vt2;
}

/* Rows first.. in mirrored pairs, bit for bit, and their sums exactly 0. */
static void mirrored(const test_particles *s, size_t first)
{
    bool ok = true;
    double p[3] = {0, 0, 0};
    for (size_t i = first; i + 1 < s->n; i += 2)
        for (int a = 0; a < 3; a++) {
            ok &= s->x[3 * (i + 1) + a] == -s->x[3 * i + a] && s->v[3 * (i + 1) + a] == -s->v[3 * i + a];
            p[a] += s->m[i] * s->v[3 * i + a] + s->m[i + 1] * s->v[3 * (i + 1) + a];
        }
    CHECK(ok);
    CHECK(p[0] == 0 && p[1] == 0 && p[2] == 0);
}

TEST(ic_hernquist_against_its_closed_forms)
{
    size_t n = 100000, k;
    test_particles s = test_ic(GROVE_IC_HERNQUIST, n, 7, 0);
    double d = ks_radii(&s, 0, hernquist_cdf, &k), p = ks_p(d, k);
    CHECK_MSG(p > 0.01, "KS D %.4f over %zu radii: p %.3g", d, k, p);
    dispersion_profile(&s, 0, hernquist_sigma2_mu, 0, 0.05);
    double q = virial(&s), iso = isotropy(&s, 0);
    CHECK_MSG(fabs(q - 1) < 0.02, "2K/|W| %.4f", q);
    mirrored(&s, 0);
    double mass = 0, rmax = 0;
    for (size_t i = 0; i < n; i++) {
        mass += s.m[i];
        rmax = fmax(rmax, norm(s.x + 3 * i));
    }
    CHECK(fabs(mass - 1) < 1e-10);
    CHECK(rmax < A * sqrt(0.99) / (1 - sqrt(0.99)));
    printf("    hernquist n %zu: KS D %.4f p %.3f, 2K/|W| %.4f, <v_r^2>/<v_t^2/2> %.4f, r_max %.2f\n", n, d, p, q,
           iso, rmax);
    free(s.x);
}

TEST(ic_plummer_bh_against_its_closed_forms)
{
    size_t n = 100001, k;
    double mu = 0.01;
    test_particles s = test_ic(GROVE_IC_PLUMMER_BH, n, 3, mu);
    CHECK(s.m[0] == mu);
    CHECK(norm(s.x) == 0 && norm(s.v) == 0);
    double d = ks_radii(&s, 1, plummer_cdf, &k), p = ks_p(d, k);
    CHECK_MSG(p > 0.01, "KS D %.4f over %zu radii: p %.3g", d, k, p);
    dispersion_profile(&s, 1, plummer_bh_sigma2, mu, 0.05);
    double q = virial(&s), iso = isotropy(&s, 1);
    CHECK_MSG(fabs(q - 1) < 0.02, "2K/|W| %.4f", q);
    mirrored(&s, 1);
    printf("    plummer-bh n %zu, bh_mass %g: KS D %.4f p %.3f, 2K/|W| %.4f, <v_r^2>/<v_t^2/2> %.4f\n", n, mu, d, p, q,
           iso);
    free(s.x);
}

/* Without the point mass the Eddington table (384 nodes, as the sampler
 * uses) is Plummer's own DF,
 * f = 24 sqrt(2) b^2 / (7 pi^3 G^5 M^4) E^(7/2) (Binney & Tremaine 2008, section 4.3). */
TEST(ic_eddington_table_without_a_point_mass_is_plummers_df)
{
    grove__eddington t;
    double e_max = 0.999 / B; /* Psi(0) = 1 / b is reached only at r = 0 */
    REQUIRE_OK(grove__eddington_build(&t, 0, 1, B, e_max, 384));
    double worst = 0;
    for (double e = 1e-4 * e_max; e <= e_max; e *= 1.37) {
        double exact = 24 * sqrt(2.0) * B * B / (7 * pow(GROVE__PI, 3)) * pow(e, 3.5);
        worst = fmax(worst, fabs(grove__eddington_f(&t, e) / exact - 1));
        CHECK(grove__eddington_bound(&t, e) >= grove__eddington_f(&t, e));
    }
    CHECK_MSG(worst < 2e-4 && t.clipped == 0, "largest relative error %.3e, %zu clipped", worst, t.clipped);
    printf("    eddington table, 384 nodes, mu 0: largest relative error %.2e\n", worst);
    grove__eddington_free(&t);
}

TEST(ic_same_seed_same_bytes_and_parameters_checked)
{
    for (int kind = GROVE_IC_HERNQUIST; kind <= GROVE_IC_PLUMMER_BH; kind++) {
        test_particles a = test_ic((grove_ic_kind)kind, 1001, 9, 0.05), b = test_ic((grove_ic_kind)kind, 1001, 9, 0.05),
               c = test_ic((grove_ic_kind)kind, 1001, 10, 0.05);
        CHECK(memcmp(a.x, b.x, 7 * 1001 * sizeof(double)) == 0);
        CHECK(memcmp(a.x, c.x, 7 * 1001 * sizeof(double)) != 0);
        free(a.x);
        free(b.x);
        free(c.x);
    }
    double x[6], v[6], m[2];
    grove_ic_params ic;
    grove_ic_params_init(&ic);
    CHECK(ic.bh_mass == 0.01);
    ic.kind = GROVE_IC_PLUMMER_BH;
    ic.n = 2;
    const double bad[] = {-0.1, 1, 2, NAN};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ic.bh_mass = bad[i];
        CHECK(grove_ic_generate(&ic, x, v, m) == GROVE_INVALID_ARGUMENT);
        CHECK(strstr(grove_last_error(), "bh_mass must be in [0, 1)") != NULL);
    }
    ic.bh_mass = 0.5;
    CHECK_OK(grove_ic_generate(&ic, x, v, m));
    CHECK(m[0] == 0.5 && m[1] == 0.5 && norm(x + 3) == 0); /* one star, unpaired: at rest at the origin */
    ic.n = 1;
    CHECK(grove_ic_generate(&ic, x, v, m) == GROVE_INVALID_ARGUMENT);
    ic.kind = GROVE_IC_HERNQUIST;
    CHECK_OK(grove_ic_generate(&ic, x, v, m));
    CHECK(m[0] == 1 && norm(x) == 0 && norm(v) == 0);
}
