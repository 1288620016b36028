/* Range inside ordinary data: pairs far closer than the data's scale.
 * Points at 1 beside points 1e-200 apart (float32: 1e-20) set no range
 * scale, and those pairs' squared distances underflow to 0 or to
 * subnormals; every module must still treat them exactly: the join's
 * inclusion at eps = 0 and at their separation and its distances, kNN
 * order and distances, EMST weights, core distances, DBSCAN and FoF
 * components. Against long-double brute force (range_ref.c), whose
 * exponent range holds those squares; the data are multiples of 1/64
 * with clumps at multiples of 2^-e near 0 (e up to 1000, or 140 in
 * float32), so every squared distance and every comparison is exact. */
#include "test.h"
#include "range_ref.h"

#include <float.h>
#include <math.h>

/* The distance of an exact squared distance v (at most 53 significant
 * bits at any exponent), rounded once: sqrt of v scaled by an even power
 * of two into [1, 4), scaled back. */
static double exact_root(long double v)
{
    if (v == 0) return 0;
    int e;
    long double f = frexpl(v, &e); /* v = f 2^e, f in [0.5, 1) */
    int m = (e - 1) >> 1;
    double rest = (double)ldexpl(f, e - 2 * m); /* in [1, 4), exact */
    return ldexp(sqrt(rest), m);
}

/* n points: multiples of 1/64 in [0, 2) (cells of an ordinary lattice),
 * and among them clumps of 2 to 4 points around a lattice point whose
 * coordinates in a few dimensions (not all but in 1-D) are 0 and there
 * become multiples 0..3 of 2^-e (exact duplicates among them), e in
 * [e_lo, e_hi]; seps[*nsep] gets the clumps' 2^-e. Clumps that share
 * their place (all of them in 1-D) share e, so every difference is exact
 * in the dtype. */
static cloud clumped(size_t n, size_t d, bool f32, int e_lo, int e_hi, uint64_t seed, double *seps, size_t *nsep)
{
    grove_rng rng;
    grove_rng_seed(&rng, seed);
    cloud c = cloud_alloc(n, d, f32);
    *nsep = 0;
    int e_one = e_lo + (int)grove_rng_below(&rng, (uint64_t)(e_hi - e_lo + 1));
    for (size_t i = 0; i < n;) {
        for (size_t j = 0; j < d; j++) cloud_set(&c, i, j, (double)grove_rng_below(&rng, 128) / 64);
        size_t size = grove_rng_below(&rng, 3) == 0 ? 2 + grove_rng_below(&rng, 3) : 1;
        if (size > n - i) size = n - i;
        if (size == 1) {
            i++;
            continue;
        }
        int e = d == 1 ? e_one : e_lo + (int)grove_rng_below(&rng, (uint64_t)(e_hi - e_lo + 1));
        double s = ldexp(1, -e);
        seps[(*nsep)++] = s;
        bool tiny[64] = {d == 1};
        for (size_t t = 0, dims = d == 1 ? 0 : 1 + grove_rng_below(&rng, d - 1 < 3 ? d - 1 : 3); t < dims; t++)
            tiny[grove_rng_below(&rng, d)] = true;
        for (size_t k = 0; k < size; k++, i++)
            for (size_t j = 0; j < d; j++)
                cloud_set(&c, i, j, tiny[j] ? s * (double)grove_rng_below(&rng, 4) : cloud_at(&c, i - k, j));
    }
    return c;
}

/* Rows a and b in one brute-force component of the graph of pairs within
 * eps (a small union-find over rows). */
static size_t find(size_t *up, size_t a)
{
    while (up[a] != a) a = up[a] = up[up[a]];
    return a;
}

static size_t *brute_components(const cloud *c, long double eps)
{
    size_t *up = malloc(c->n * sizeof *up);
    for (size_t a = 0; a < c->n; a++) up[a] = a;
    for (size_t a = 0; a < c->n; a++)
        for (size_t b = 0; b < a; b++)
            if (dist2(c, a, b) <= eps * eps) up[find(up, a)] = find(up, b);
    for (size_t a = 0; a < c->n; a++) find(up, a);
    return up;
}

/* Whether labels put rows together exactly as the components do. */
static size_t partition_differences(const int64_t *labels, size_t *up, size_t n)
{
    size_t bad = 0;
    for (size_t a = 0; a < n; a++)
        for (size_t b = 0; b < a; b++) bad += (labels[a] == labels[b]) != (find(up, a) == find(up, b));
    return bad;
}

/* Self-join pairs within eps in the periodic box [0, 2)^d (minimum
 * images; the clumps sit far from its faces). */
static int64_t brute_pairs_in_box(const cloud *c, long double eps)
{
    int64_t pairs = 0;
    for (size_t a = 0; a < c->n; a++)
        for (size_t b = 0; b < c->n; b++) {
            long double s = 0;
            for (size_t j = 0; j < c->d; j++) {
                long double t = fabsl((long double)cloud_at(c, a, j) - cloud_at(c, b, j));
                t = t > 1 ? 2 - t : t;
                s += t * t;
            }
            pairs += s <= eps * eps;
        }
    return pairs;
}

/* The self-join within eps, with distances, against brute force: every
 * row's list and each distance exactly; its count in a periodic box; FoF
 * (linking length eps) and DBSCAN (min_samples 1) against the
 * components. */
static void check_join(const cloud *c, double eps, const char *what)
{
    size_t n = c->n;
    grove_options o;
    grove_options_init(&o);
    o.threads = 2;
    grove_join_params jp;
    grove_join_params_init(&jp);
    jp.eps = eps;
    jp.distances = 1;
    grove_join_result jr;
    REQUIRE_OK(grove_join(cloud_view(c), NULL, NULL, &jp, &jr, &o));
    int64_t want = brute_pairs(c, eps);
    CHECK_MSG(jr.pairs == want, "%s, eps %g: join found %lld pairs, brute force %lld", what, eps, (long long)jr.pairs,
              (long long)want);
    size_t bad = 0;
    for (size_t a = 0; a < n && jr.pairs == want; a++) {
        int64_t at = jr.offsets[a];
        for (size_t b = 0; b < n; b++) {
            long double v = dist2(c, a, b);
            if (v > (long double)eps * eps) continue;
            bad += at >= jr.offsets[a + 1] || jr.indices[at] != (int64_t)b || jr.distances[at] != exact_root(v);
            at++;
        }
    }
    CHECK_MSG(bad == 0, "%s, eps %g: %zu join entries differ from brute force", what, eps, bad);
    grove_join_result_free(&jr);
    const double box = 2;
    grove_index_params ip;
    grove_index_params_init(&ip);
    ip.boxsize = &box;
    ip.boxsize_count = 1;
    jp.distances = 0;
    REQUIRE_OK(grove_join(cloud_view(c), NULL, &ip, &jp, &jr, &o));
    want = brute_pairs_in_box(c, eps);
    CHECK_MSG(jr.pairs == want, "%s, eps %g: the join in a box found %lld pairs, brute force %lld", what, eps,
              (long long)jr.pairs, (long long)want);
    grove_join_result_free(&jr);

    size_t *up = brute_components(c, eps);
    int64_t *labels = calloc(n, sizeof *labels);
    grove_fof_params fp;
    grove_fof_params_init(&fp);
    fp.linking_length = eps;
    fp.min_members = 1;
    CHECK_OK(grove_fof(cloud_view(c), NULL, NULL, &fp, labels, NULL, NULL, &o));
    CHECK_MSG(partition_differences(labels, up, n) == 0, "%s, eps %g: FoF groups differ from brute force", what, eps);
    grove_dbscan_params dp;
    grove_dbscan_params_init(&dp);
    dp.eps = eps;
    dp.min_samples = 1;
    CHECK_OK(grove_dbscan(cloud_view(c), NULL, &dp, labels, NULL, NULL, &o));
    CHECK_MSG(partition_differences(labels, up, n) == 0, "%s, eps %g: DBSCAN clusters differ from brute force", what,
              eps);
    free(labels);
    free(up);
}

/* kNN (k = 4) rows and distances, core distances (K = 3) and the EMST
 * with K = 1 and 3, against brute force. */
static void check_neighbours(const cloud *c, const char *what)
{
    enum { K = 4, CORE_K = 3 };
    size_t n = c->n, m = n - 1, bad = 0;
    grove_options o;
    grove_options_init(&o);
    o.threads = 2;
    int64_t *idx = calloc(n * K, sizeof *idx), *edges = calloc(2 * m, sizeof *edges);
    double *dist = calloc(n * K, sizeof *dist), *weights = calloc(m, sizeof *weights), *core = calloc(n, sizeof *core);
    CHECK_OK(grove_knn(cloud_view(c), NULL, NULL, &(grove_knn_params){K, 0}, idx, dist, &o));
    for (size_t q = 0; q < n; q++) {
        size_t *rank = brute_ranks(c, q);
        for (size_t r = 0; r < K; r++)
            bad += idx[q * K + r] != (int64_t)rank[r] || dist[q * K + r] != exact_root(dist2(c, q, rank[r]));
        free(rank);
    }
    CHECK_MSG(bad == 0, "%s: %zu of %zu kNN entries differ from brute force", what, bad, n * K);
    CHECK_OK(grove_core_distances(cloud_view(c), &(grove_knn_params){CORE_K, 0}, core, &o));
    long double *core2 = brute_core2(c, CORE_K);
    bad = 0;
    for (size_t i = 0; i < n; i++) bad += core[i] != exact_root(core2[i]);
    CHECK_MSG(bad == 0, "%s: %zu core distances differ from brute force", what, bad);
    free(core2);
    for (size_t k = 1; k <= CORE_K; k += CORE_K - 1) {
        grove_emst_params ep;
        grove_emst_params_init(&ep);
        ep.min_samples = k;
        CHECK_OK(grove_emst(cloud_view(c), &ep, edges, weights, &o));
        edge *want = prim(c, k);
        bad = 0;
        for (size_t i = 0; i < m; i++)
            bad += edges[2 * i] != want[i].u || edges[2 * i + 1] != want[i].v || weights[i] != exact_root(want[i].w);
        CHECK_MSG(bad == 0, "%s: %zu of %zu EMST edges (K = %zu) differ from Prim", what, bad, m, k);
        free(want);
    }
    free(idx);
    free(edges);
    free(dist);
    free(weights);
    free(core);
}

/* The case: 0 and 1e-200 beside 1 are no duplicates. Their
 * distance is the root of the square rounded to the dtype (in float32
 * not the separation itself). */
TEST(range_tiny_separation_beside_ordinary_points)
{
    for (int f32 = 0; f32 < 2; f32++) {
        double sep = f32 ? 1e-30 : 1e-200;
        cloud c = cloud_alloc(3, 1, f32);
        cloud_set(&c, 1, 0, sep);
        cloud_set(&c, 2, 0, 1);
        double eps = cloud_at(&c, 1, 0), scaled = ldexp(eps, 64);
        sep = f32 ? sqrt(ldexp((float)(scaled * scaled), -128)) : eps;
        grove_join_params jp;
        grove_join_params_init(&jp);
        jp.exclude_self = 1;
        jp.distances = 1;
        grove_join_result jr;
        CHECK_OK(grove_join(cloud_view(&c), NULL, NULL, &jp, &jr, NULL));
        CHECK_MSG(jr.pairs == 0, "eps 0 paired %lld rows 0 and %g apart", (long long)jr.pairs, sep);
        grove_join_result_free(&jr);
        jp.eps = eps;
        CHECK_OK(grove_join(cloud_view(&c), NULL, NULL, &jp, &jr, NULL));
        CHECK(jr.pairs == 2 && jr.indices[0] == 1 && jr.indices[1] == 0 && jr.distances[0] == sep &&
              jr.distances[1] == sep);
        grove_join_result_free(&jr);
        int64_t idx[6];
        double dist[6], w[2];
        CHECK_OK(grove_knn(cloud_view(&c), NULL, NULL, &(grove_knn_params){2, 0}, idx, dist, NULL));
        CHECK(idx[0] == 0 && idx[1] == 1 && idx[2] == 1 && idx[3] == 0);
        CHECK(dist[0] == 0 && dist[1] == sep && dist[2] == 0 && dist[3] == sep);
        CHECK_OK(grove_emst(cloud_view(&c), NULL, idx, w, NULL));
        CHECK_MSG(w[0] == sep && w[1] == 1, "EMST weights %g, %g", w[0], w[1]);
        cloud_free(&c);
    }
}

TEST(range_tiny_separations_against_exact_brute_force)
{
    static const size_t dims[] = {1, 3, 20};
    uint64_t seed = 4100;
    for (int f32 = 0; f32 < 2; f32++)
        for (size_t di = 0; di < 3; di++) {
            size_t d = dims[di], nsep;
            double seps[200];
            cloud c = clumped(160, d, f32, f32 ? 66 : 532, f32 ? 140 : 1000, seed++, seps, &nsep);
            char what[64];
            snprintf(what, sizeof what, "%s d = %zu", f32 ? "float32" : "float64", d);
            REQUIRE(nsep >= 3);
            check_neighbours(&c, what);
            check_join(&c, 0, what);
            for (size_t t = 0; t < 3; t++) check_join(&c, seps[t * (nsep - 1) / 2], what);
            cloud_free(&c);
        }
}
