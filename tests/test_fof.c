/* Friends-of-friends against brute force: every pair within the linking
 * length found by an O(n^2) scan and joined in a plain union-find of the
 * test's own, groups ranked by sorting the components, and every catalogue
 * row recomputed from its definition in grove.h with formulas of the
 * test's own. Coordinates lie on a grid of 2^-bits (bits 10 for float32,
 * 20 for float64) in [0, 1), so every squared distance is exact in either
 * dtype and pairs exactly at the linking length must link. */
#include "test.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct fof_case {
    size_t n, d;
    double link;
    double box[3];      /* periodic lengths (0: unbounded) */
    bool periodic;
    size_t min_members;
    bool f32, masses, velocities;
    double spread;      /* the blobs' standard deviation (0: 0.015) */
    bool no_background; /* blobs and duplicates only */
    uint64_t seed;
} fof_case;

/* Clumps (a few normal blobs, one of them centred on the origin so it
 * wraps in a periodic box), a uniform background and exact duplicates, on
 * the grid, inside [0, L_j) (or [0, 1) where unbounded). */
static double *clumpy(const fof_case *c)
{
    grove_rng rng;
    grove_rng_seed(&rng, c->seed);
    double step = c->f32 ? 0x1p-10 : 0x1p-20, spread = c->spread > 0 ? c->spread : 0.015;
    double *x = malloc((c->n * c->d + 1) * sizeof *x), centre[6][3];
    for (int k = 0; k < 6; k++)
        for (size_t j = 0; j < c->d; j++) centre[k][j] = k == 0 ? 0 : grove_rng_uniform(&rng);
    for (size_t i = 0; i < c->n; i++) {
        uint64_t kind = grove_rng_below(&rng, 10);
        if (kind == 0 && i > 0) {
            size_t src = grove_rng_below(&rng, i);
            memcpy(x + i * c->d, x + src * c->d, c->d * sizeof *x);
            continue;
        }
        int k = (int)grove_rng_below(&rng, 6);
        for (size_t j = 0; j < c->d; j++) {
            double L = c->periodic && c->box[j] > 0 ? c->box[j] : 1;
            double v = kind < 4 && !c->no_background ? grove_rng_uniform(&rng) : centre[k][j] + spread * grove_rng_normal(&rng);
            v = L * (v - floor(v)); /* into [0, L): blobs at the edge wrap */
            v = floor(v / step) * step;
            x[i * c->d + j] = v < L ? v : 0;
        }
    }
    return x;
}

static double ref_image(double t, double L)
{
    /* Into [-L/2, L/2), by a formula unlike the library's. */
    return L > 0 ? t - L * floor(t / L + 0.5) : t;
}

static size_t ref_root(size_t *parent, size_t x)
{
    while (parent[x] != x) x = parent[x];
    return x;
}

typedef struct ref_comp {
    size_t size, first;
} ref_comp;

static int comp_cmp(const void *a, const void *b)
{
    const ref_comp *p = a, *q = b;
    if (p->size != q->size) return p->size > q->size ? -1 : 1;
    return (p->first > q->first) - (p->first < q->first);
}

/* The reference group ids; returns the number of groups. */
static size_t ref_groups(const fof_case *c, const double *x, int64_t *group)
{
    size_t n = c->n, d = c->d, *parent = malloc((n + 1) * sizeof *parent);
    double eps2 = c->link * c->link;
    if (c->f32) eps2 = (float)eps2;
    for (size_t i = 0; i < n; i++) parent[i] = i;
    for (size_t a = 0; a < n; a++)
        for (size_t b = a + 1; b < n; b++) {
            double s = 0;
            for (size_t j = 0; j < d; j++) {
                double t = ref_image(x[a * d + j] - x[b * d + j], c->periodic ? c->box[j] : 0);
                s += t * t;
            }
            if (s <= eps2) {
                size_t ra = ref_root(parent, a), rb = ref_root(parent, b);
                if (ra != rb) parent[ra] = rb;
            }
        }
    /* Components by root: size and smallest member. */
    ref_comp *comp = calloc(n + 1, sizeof *comp);
    for (size_t i = n; i-- > 0;) {
        size_t r = ref_root(parent, i);
        comp[r].size++;
        comp[r].first = i;
    }
    size_t ncomp = 0;
    ref_comp *list = malloc((n + 1) * sizeof *list);
    for (size_t r = 0; r < n; r++)
        if (comp[r].size >= c->min_members) list[ncomp++] = comp[r];
    qsort(list, ncomp, sizeof *list, comp_cmp);
    for (size_t i = 0; i < n; i++) group[i] = -1;
    for (size_t g = 0; g < ncomp; g++) {
        size_t r = ref_root(parent, list[g].first);
        for (size_t i = 0; i < n; i++)
            if (ref_root(parent, i) == r) group[i] = (int64_t)g;
    }
    free(parent);
    free(comp);
    free(list);
    return ncomp;
}

static bool near(double a, double b, double tol) { return fabs(a - b) <= tol * (1 + fabs(b)); }

/* Catalogue row g against its definition. */
static bool check_row(const fof_case *c, const double *x, const double *m, const double *v, const int64_t *group,
                      const grove_fof_catalogue *cat, size_t g)
{
    size_t n = c->n, d = c->d, members = 0, first = SIZE_MAX;
    double mass = 0, mx[3] = {0}, mv[3] = {0}, mv2 = 0;
    for (size_t i = 0; i < n; i++) {
        if (group[i] != (int64_t)g) continue;
        if (first == SIZE_MAX) first = i;
        double w = m ? m[i] : 1;
        members++;
        mass += w;
        for (size_t j = 0; j < d; j++) {
            /* Unwrapped about the first member, by floor rather than by comparison. */
            mx[j] += w * ref_image(x[i * d + j] - x[first * d + j], c->periodic ? c->box[j] : 0);
            if (v) {
                mv[j] += w * v[i * d + j];
                mv2 += w * v[i * d + j] * v[i * d + j];
            }
        }
    }
    bool ok = cat->members[g] == (int64_t)members && cat->first[g] == (int64_t)first && near(cat->mass[g], mass, 1e-13);
    double centre[3], far = 0;
    for (size_t j = 0; j < d; j++) {
        double L = c->periodic ? c->box[j] : 0, cj = x[first * d + j] + mx[j] / mass;
        if (L > 0) cj -= L * floor(cj / L);
        centre[j] = cj;
        double got = cat->center[g * d + j], diff = fabs(got - cj);
        if (L > 0) diff = fmin(diff, L - diff); /* 0 and L - ulp are one place */
        ok &= diff <= 1e-12 && (L == 0 || (got >= 0 && got < L));
    }
    for (size_t i = 0; i < n; i++) {
        if (group[i] != (int64_t)g) continue;
        double e2 = 0;
        for (size_t j = 0; j < d; j++) {
            double L = c->periodic ? c->box[j] : 0, t = fabs(x[i * d + j] - centre[j]);
            if (L > 0) {
                t = fmod(t, L);
                t = fmin(t, L - t);
            }
            e2 += t * t;
        }
        far = fmax(far, sqrt(e2));
    }
    ok &= near(cat->radius[g], far, 1e-10);
    if (!v) return ok && !cat->velocity && !cat->dispersion;
    /* The one-pass variance formula: different rounding, same value. */
    double mean2 = 0;
    for (size_t j = 0; j < d; j++) {
        ok &= near(cat->velocity[g * d + j], mv[j] / mass, 1e-12);
        mean2 += (mv[j] / mass) * (mv[j] / mass);
    }
    ok &= near(cat->dispersion[g], sqrt(fmax(0, mv2 / mass - mean2)), 1e-7);
    return ok;
}

static void run_case(const fof_case *c)
{
    size_t n = c->n, d = c->d;
    double *x = clumpy(c), *m = NULL, *v = NULL;
    float *xf = malloc((n * d + 1) * sizeof *xf);
    for (size_t i = 0; i < n * d; i++) xf[i] = (float)x[i];
    grove_rng rng;
    grove_rng_seed(&rng, c->seed + 99);
    if (c->masses) {
        m = malloc((n + 1) * sizeof *m);
        for (size_t i = 0; i < n; i++) m[i] = 0.5 + grove_rng_uniform(&rng);
    }
    if (c->velocities) {
        v = malloc((n * d + 1) * sizeof *v);
        for (size_t i = 0; i < n * d; i++) v[i] = 3 + grove_rng_normal(&rng);
    }
    int64_t *want = malloc((n + 1) * sizeof *want), *got = malloc((n + 1) * sizeof *got),
            *got2 = malloc((n + 1) * sizeof *got2);
    size_t want_groups = ref_groups(c, x, want), groups = 0, groups2 = 0;
    grove_fof_params p;
    grove_fof_params_init(&p);
    p.linking_length = c->link;
    p.min_members = c->min_members;
    if (c->periodic) {
        p.index.boxsize = c->box;
        p.index.boxsize_count = d;
    }
    grove_points pts = c->f32 ? grove_points_f32(xf, n, d) : grove_points_f64(x, n, d);
    grove_options one, two;
    grove_options_init(&one);
    grove_options_init(&two);
    one.threads = 1;
    two.threads = 2;
    grove_fof_catalogue cat, cat2;
    CHECK_OK(grove_fof(pts, m, v, &p, got, &groups, &cat, &one));
    CHECK_OK(grove_fof(pts, m, v, &p, got2, &groups2, &cat2, &two));
    bool same = groups == want_groups && groups2 == groups;
    size_t bad = SIZE_MAX;
    for (size_t i = 0; i < n; i++)
        if (got[i] != want[i] || got2[i] != want[i]) {
            same = false;
            if (bad == SIZE_MAX) bad = i;
        }
    CHECK_MSG(same, "n %zu d %zu link %g periodic %d f32 %d: %zu groups (2 threads %zu), brute force %zu; first "
              "difference at particle %zu", n, d, c->link, c->periodic, c->f32, groups, groups2, want_groups,
              bad == SIZE_MAX ? 0 : bad);
    REQUIRE(cat.groups == groups && cat.d == d);
    size_t bad_row = SIZE_MAX;
    for (size_t g = 0; same && g < groups; g++)
        if (!check_row(c, x, m, v, want, &cat, g) && bad_row == SIZE_MAX) bad_row = g;
    CHECK_MSG(bad_row == SIZE_MAX, "n %zu d %zu periodic %d: catalogue row %zu disagrees with its definition", n, d,
              c->periodic, bad_row);
    /* Two threads: the same bits. */
    bool bits = cat2.groups == cat.groups;
    for (size_t g = 0; bits && g < groups; g++) {
        bits &= cat.mass[g] == cat2.mass[g] && cat.radius[g] == cat2.radius[g];
        for (size_t j = 0; j < d; j++) bits &= cat.center[g * d + j] == cat2.center[g * d + j];
        if (v) {
            bits &= cat.dispersion[g] == cat2.dispersion[g];
            for (size_t j = 0; j < d; j++) bits &= cat.velocity[g * d + j] == cat2.velocity[g * d + j];
        }
    }
    CHECK_MSG(bits, "n %zu d %zu: the catalogue differs between 1 and 2 threads", n, d);
    grove_fof_catalogue_free(&cat);
    grove_fof_catalogue_free(&cat2);
    free(x);
    free(xf);
    free(m);
    free(v);
    free(want);
    free(got);
    free(got2);
}

/* Linking lengths around the background's percolation-free range, one of
 * them a grid distance exactly (pairs at it must link). */
static void run_cases(bool periodic)
{
    static const size_t dims[] = {1, 2, 3};
    static const size_t sizes[] = {1, 2, 7, 300, 900};
    uint64_t seed = periodic ? 1000 : 1;
    for (size_t a = 0; a < 3; a++)
        for (size_t b = 0; b < 5; b++)
            for (int f32 = 0; f32 < 2; f32++)
                for (int variant = 0; variant < 3; variant++) {
                    fof_case c;
                    memset(&c, 0, sizeof c);
                    c.n = sizes[b];
                    c.d = dims[a];
                    c.f32 = f32;
                    c.seed = seed++;
                    c.periodic = periodic;
                    /* Box lengths 1, 0.5, or unbounded in the last dimension. */
                    for (size_t j = 0; j < 3; j++) c.box[j] = j == 1 ? 0.5 : 1;
                    if (variant == 2 && c.d > 1) c.box[c.d - 1] = 0;
                    double sep = pow(1.0 / (double)(c.n ? c.n : 1), 1.0 / (double)c.d);
                    c.link = variant == 0 ? 0.2 * sep : variant == 1 ? 37 * 0x1p-10 : 0.35 * sep;
                    c.min_members = variant == 0 ? 1 : variant == 1 ? 5 : 20;
                    c.masses = variant != 0;
                    c.velocities = variant != 1;
                    run_case(&c);
                    if (test_failed_now()) return;
                }
}

TEST(fof_brute_force)
{
    run_cases(false);
}

TEST(fof_brute_force_periodic)
{
    run_cases(true);
}

/* Blobs far denser than the linking length: whole leaf groups lie within
 * it of each other and of themselves, so the join's group shortcuts (one
 * union per pair of groups, settled groups skipped) do most of the
 * linking (with the tighter spread and no background, all of it inside
 * a blob), and the groups must still be brute force's. */
TEST_LONG(fof_brute_force_dense_clumps)
{
    for (int periodic = 0; periodic < 2; periodic++)
        for (int f32 = 0; f32 < 2; f32++)
            for (size_t k = 0; k < 4; k++) {
                size_t d = 2 + k % 2;
                fof_case c;
                memset(&c, 0, sizeof c);
                c.n = 4000;
                c.d = d;
                c.f32 = f32;
                c.periodic = periodic;
                c.seed = 77 + (uint64_t)(periodic * 8 + f32 * 4) + k;
                for (size_t j = 0; j < 3; j++) c.box[j] = 1;
                c.spread = k < 2 ? 0.004 : 0.0005;
                c.no_background = k >= 2;
                c.link = f32 ? 13 * 0x1p-10 : 0.0123;
                c.min_members = 2;
                c.masses = true;
                c.velocities = f32;
                run_case(&c);
                if (test_failed_now()) return;
            }
}

/* Linking length 0 links exact duplicates only; min_members above n
 * leaves every particle ungrouped; n = 0 is fine. */
TEST(fof_edges)
{
    double x[] = {0.5, 0.5, 0.25, 0.5, 0.5, 0.75, 0.5, 0.5};
    int64_t g[4];
    size_t groups = 9;
    grove_fof_params p;
    grove_fof_params_init(&p);
    p.min_members = 2;
    grove_fof_catalogue cat;
    CHECK_OK(grove_fof(grove_points_f64(x, 4, 2), NULL, NULL, &p, g, &groups, &cat, NULL));
    CHECK(groups == 1 && g[0] == 0 && g[1] == -1 && g[2] == -1 && g[3] == 0);
    CHECK(cat.groups == 1 && cat.members[0] == 2 && cat.first[0] == 0 && cat.mass[0] == 2 && cat.radius[0] == 0 &&
          cat.center[0] == 0.5 && cat.center[1] == 0.5);
    grove_fof_catalogue_free(&cat);
    p.min_members = 5;
    CHECK_OK(grove_fof(grove_points_f64(x, 4, 2), NULL, NULL, &p, g, &groups, NULL, NULL));
    CHECK(groups == 0 && g[0] == -1 && g[3] == -1);
    CHECK_OK(grove_fof(grove_points_f64(x, 0, 2), NULL, NULL, &p, NULL, &groups, &cat, NULL));
    CHECK(groups == 0 && cat.groups == 0);
    grove_fof_catalogue_free(&cat);
    grove_fof_catalogue_free(NULL);
    /* A member exactly half a box from the first takes the image in
     * [-L/2, L/2): 0, 0.25 and 0.5 - 1 average to -1/12, wrapped. */
    double line[] = {0, 0.25, 0.5}, box = 1;
    p.linking_length = 0.25;
    p.min_members = 1;
    p.index.boxsize = &box;
    p.index.boxsize_count = 1;
    CHECK_OK(grove_fof(grove_points_f64(line, 3, 1), NULL, NULL, &p, g, &groups, &cat, NULL));
    CHECK(groups == 1 && cat.groups == 1 && fabs(cat.center[0] - 11.0 / 12) < 1e-15 &&
          fabs(cat.radius[0] - 5.0 / 12) < 1e-15);
    grove_fof_catalogue_free(&cat);
    /* Outside the box: refused, naming the row. */
    line[2] = 1;
    CHECK_FAILS(grove_fof(grove_points_f64(line, 3, 1), NULL, NULL, &p, g, &groups, NULL, NULL),
                GROVE_INVALID_ARGUMENT, "row 2");
}

TEST(fof_refuses)
{
    double x[] = {0, 0, 1, 1, NAN, 2}, m[] = {1, 0, 1}, v[] = {0, 0, 0, INFINITY, 0, 0};
    int64_t g[3];
    grove_fof_params p;
    grove_fof_params_init(&p);
    p.linking_length = 1;
    CHECK_FAILS(grove_fof(grove_points_f64(x, 3, 2), NULL, NULL, &p, g, NULL, NULL, NULL), GROVE_INVALID_ARGUMENT,
                "row 2");
    CHECK_FAILS(grove_fof(grove_points_f64(x, 2, 2), m, NULL, &p, g, NULL, NULL, NULL), GROVE_INVALID_ARGUMENT,
                "mass[1] = 0");
    CHECK_FAILS(grove_fof(grove_points_f64(x, 2, 2), NULL, v, &p, g, NULL, NULL, NULL), GROVE_INVALID_ARGUMENT,
                "velocity[1][1] = inf");
    CHECK_FAILS(grove_fof(grove_points_f64(x, 2, 2), NULL, NULL, NULL, g, NULL, NULL, NULL), GROVE_INVALID_ARGUMENT,
                "params is NULL");
    CHECK_FAILS(grove_fof(grove_points_f64(x, 2, 2), NULL, NULL, &p, NULL, NULL, NULL, NULL),
                GROVE_INVALID_ARGUMENT, "group is NULL");
    p.min_members = 0;
    CHECK_FAILS(grove_fof(grove_points_f64(x, 2, 2), NULL, NULL, &p, g, NULL, NULL, NULL), GROVE_INVALID_ARGUMENT,
                "min_members");
    p.min_members = 1;
    p.linking_length = -1;
    CHECK_FAILS(grove_fof(grove_points_f64(x, 2, 2), NULL, NULL, &p, g, NULL, NULL, NULL), GROVE_INVALID_ARGUMENT,
                "linking_length = -1");
}

TEST(fof_mean_separation)
{
    /* A 2 x 4 x 1 bounding box of 8 points: (8 / 8)^(1/3) = 1. */
    double x[] = {0, 0, 0, 2, 4, 1, 1, 1, 0.5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    double sep = 0, box[] = {4, 8, 2}, cube = 3;
    CHECK_OK(grove_fof_mean_separation(grove_points_f64(x, 8, 3), NULL, 0, &sep));
    CHECK(fabs(sep - 1) < 1e-15);
    CHECK_OK(grove_fof_mean_separation(grove_points_f64(x, 8, 3), box, 3, &sep));
    CHECK(fabs(sep - 2) < 1e-15);
    CHECK_OK(grove_fof_mean_separation(grove_points_f64(x, 8, 3), &cube, 1, &sep));
    CHECK(fabs(sep - 1.5) < 1e-15);
    CHECK_FAILS(grove_fof_mean_separation(grove_points_f64(x + 9, 5, 3), NULL, 0, &sep), GROVE_INVALID_ARGUMENT,
                "zero volume");
    CHECK_FAILS(grove_fof_mean_separation(grove_points_f64(x, 0, 3), NULL, 0, &sep), GROVE_INVALID_ARGUMENT,
                "no points");
}
