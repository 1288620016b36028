/* Pair counts (grove_paircount) against the brute-force reference
 * (paircount_ref.c: every ordered pair, Corrfunc's rules), pairs exactly
 * on bin edges against counts worked out by hand, the same bits for any
 * thread count, invariance under power-of-two changes of units, the
 * refusals of bad arguments, and the estimators against their formulas. */
#include "paircount_ref.h"
#include "core/exact_sum.h"

#include <math.h>

/* grove_paircount of a (b NULL: its pairs) in bins, with weights when the
 * sets carry them, the box's lengths from bins->box. */
static grove_status count_pairs(const pc_set *a, const pc_set *b, const pc_ref_bins *bins, int threads,
                                int64_t *count, double *weighted)
{
    grove_paircount_params p;
    grove_paircount_params_init(&p);
    p.edges = bins->edges;
    p.nedges = bins->nedges;
    p.pimax = bins->pimax;
    p.weights1 = a->w;
    p.weights2 = b ? b->w : NULL;
    if (bins->box) {
        p.index.boxsize = bins->box;
        p.index.boxsize_count = a->d;
    }
    grove_options o;
    grove_options_init(&o);
    o.threads = threads;
    grove_points va = pc_set_view(a), vb = b ? pc_set_view(b) : va;
    return grove_paircount(va, b ? &vb : NULL, &p, count, weighted, &o);
}

/* The library's counts and weighted sums against the reference's. */
static void check_against_reference(const pc_set *a, const pc_set *b, const pc_ref_bins *bins, const char *what)
{
    size_t nbins = pc_ref_nbins(bins);
    int64_t *got = calloc(nbins, sizeof *got), *want = calloc(nbins, sizeof *want);
    double *gw = calloc(nbins, sizeof *gw), *ww = calloc(nbins, sizeof *ww);
    pc_ref_count(a, b, bins, want, ww);
    /* Without weighted sums, and with them (other kernels). */
    for (int weighed = 0; weighed < 2; weighed++) {
        grove_status s = count_pairs(a, b, bins, 2, got, weighed ? gw : NULL);
        CHECK_MSG(s == GROVE_OK, "%s: %s", what, grove_last_error());
        for (size_t k = 0; s == GROVE_OK && k < nbins; k++) {
            CHECK_MSG(got[k] == want[k], "%s%s: bin %zu has %lld pairs, brute force %lld", what,
                      weighed ? " weighted" : "", k, (long long)got[k], (long long)want[k]);
            CHECK_MSG(!weighed || fabs(gw[k] - ww[k]) <= 1e-12 * fabs(ww[k]),
                      "%s: bin %zu weighs %.17g, brute force %.17g", what, k, gw[k], ww[k]);
        }
    }
    free(got);
    free(want);
    free(gw);
    free(ww);
}

TEST(paircount_matches_brute_force)
{
    /* Edges from 0 (self pairs), others not, one bin reaching past half
     * the box's side is left out (minimum images then differ from
     * Corrfunc's images; documented). */
    static const double from0[] = {0, 0.5, 1, 1.25, 2, 3}, log_like[] = {0.1, 0.2, 0.4, 0.8, 1.6, 3.2};
    static const double *edge_sets[] = {from0, log_like};
    double side = 8, box[3] = {8, 8, 8};
    uint64_t seed = 1;
    for (int kind = 0; kind < PC_KINDS; kind++)
        for (int f32 = 0; f32 < 2; f32++)
            for (int periodic = 0; periodic < 2; periodic++)
                for (int rppi = 0; rppi < 2; rppi++)
                    for (int cross = 0; cross < 2; cross++)
                        for (int e = 0; e < 2; e++) {
                            pc_set *a = pc_set_make((pc_kind)kind, 300, 3, f32, side, (seed & 1) != 0, seed);
                            pc_set *b = cross ? pc_set_make((pc_kind)kind, 200, 3, f32, side, (seed & 2) != 0,
                                                            seed + 1000)
                                              : NULL;
                            pc_ref_bins bins = {edge_sets[e], 6, rppi ? 2.5 + e : 0, periodic ? box : NULL};
                            char what[160];
                            snprintf(what, sizeof what, "%s %s %s %s %s edges %d", pc_kind_name[kind],
                                     f32 ? "float32" : "float64", periodic ? "periodic" : "open",
                                     rppi ? "(rp, pi)" : "r", cross ? "cross" : "auto", e);
                            check_against_reference(a, b, &bins, what);
                            pc_set_free(a);
                            pc_set_free(b);
                            seed++;
                        }
}

TEST(paircount_other_dimensions_match_brute_force)
{
    /* d = 1, 2, 5, 16: the kernels' other paths (any dimension count up
     * to 16; (rp, pi) from 2). */
    static const double edges[] = {0, 0.3, 0.6, 1.2, 2.4};
    static const size_t dims[] = {1, 2, 5, 16};
    double box[16];
    for (int k = 0; k < 16; k++) box[k] = 3;
    for (size_t t = 0; t < 4; t++)
        for (int periodic = 0; periodic < 2; periodic++)
            for (int rppi = 0; rppi < (dims[t] > 1 ? 2 : 1); rppi++) {
                pc_set *a = pc_set_make(PC_UNIFORM, 250, dims[t], false, 3, true, 40 + t);
                pc_ref_bins bins = {edges, 5, rppi ? 2 : 0, periodic ? box : NULL};
                char what[80];
                snprintf(what, sizeof what, "d = %zu %s %s", dims[t], periodic ? "periodic" : "open",
                         rppi ? "(rp, pi)" : "r");
                check_against_reference(a, NULL, &bins, what);
                pc_set_free(a);
            }
}

TEST(paircount_many_bins_match_brute_force)
{
    /* More bins than the vector kernels' fast path holds, and edges
     * crowded into one cell of the lookup (its slow path). */
    double edges[40], crowded[8] = {0.5, 0.5000001, 0.5000002, 0.5000003, 0.5000004, 1, 1.5, 2};
    for (int k = 0; k < 40; k++) edges[k] = 0.05 * (k + 1);
    double box[3] = {4, 4, 4};
    for (int f32 = 0; f32 < 2; f32++) {
        pc_set *a = pc_set_make(PC_CLUSTERED, 400, 3, f32, 4, false, 77);
        pc_ref_bins wide = {edges, 40, 0, box}, close = {crowded, 8, 0, NULL};
        check_against_reference(a, NULL, &wide, f32 ? "40 edges float32" : "40 edges float64");
        check_against_reference(a, NULL, &close, f32 ? "crowded edges float32" : "crowded edges float64");
        pc_set_free(a);
    }
}

/* Points 0, e[1], e[1] + e[2], ... on the x axis of d = 3 (so the pair
 * (0, k) is at distance e[k] exactly, squared as the edge is), counted with
 * and without weights: pair (0, k) must be in bin k, never k - 1. */
static void check_pairs_at_edges(const double *e, size_t ne, bool f32)
{
    double x[8][3] = {{0}};
    float xf[8][3] = {{0}};
    for (size_t k = 1; k < ne; k++) {
        x[k][0] = e[k];
        xf[k][0] = (float)e[k];
    }
    grove_points pts = f32 ? grove_points_f32(&xf[0][0], ne, 3) : grove_points_f64(&x[0][0], ne, 3);
    grove_points origin = f32 ? grove_points_f32(&xf[0][0], 1, 3) : grove_points_f64(&x[0][0], 1, 3);
    grove_paircount_params p;
    grove_paircount_params_init(&p);
    p.edges = e;
    p.nedges = ne;
    int64_t n[8];
    double w[8];
    for (int weighed = 0; weighed < 2; weighed++) {
        REQUIRE_OK(grove_paircount(origin, &pts, &p, n, weighed ? w : NULL, NULL));
        /* Bin k - 1 holds (0, k - 1) (with bin 0 also (0, 0) when e[0] is
         * 0); the pair at the last edge is in no bin. */
        for (size_t k = 0; k + 1 < ne; k++)
            CHECK_MSG(n[k] == (k == 0 ? (e[0] == 0) + (ne > 2 && e[1] == 0) : 1), "%s edge %zu: %lld pairs",
                      f32 ? "float32" : "float64", k, (long long)n[k]);
    }
}

TEST(paircount_pairs_on_edges_go_to_the_bin_above)
{
    /* Edges whose squares fall inside the bin lookup's cells (not on their
     * boundaries), so the compares after the lookup decide: in float64
     * any; in float32 ones whose squares float32 holds exactly (else the
     * pair's squared distance, rounded in float32, is not the squared
     * edge, rounded from double: not on the edge). */
    static const double odd[] = {0.3, 0.7, 1.1, 1.9, 2.3}, from0[] = {0, 0.3, 0.7, 1.1};
    static const double exact32[] = {0.5, 1 + 0x1p-11, 1 + 0x2p-11, 1 + 0x3p-11, 1 + 0x4p-11};
    check_pairs_at_edges(odd, 5, false);
    check_pairs_at_edges(from0, 4, false);
    check_pairs_at_edges(exact32, 5, false);
    check_pairs_at_edges(exact32, 5, true);
    /* Points 1 apart on a line, and 0 and 9 in a box of 10 (1 apart round
     * it): every pair at an exact edge goes to the bin that edge opens
     * (edges[i] <= r < edges[i + 1]), as Corrfunc bins it. */
    static const double edges[] = {0, 1, 2, 3};
    for (int f32 = 0; f32 < 2; f32++) {
        double line[4][3] = {{0, 0, 0}, {1, 0, 0}, {2, 0, 0}, {3, 0, 0}};
        float linef[4][3];
        for (int i = 0; i < 4; i++)
            for (int k = 0; k < 3; k++) linef[i][k] = (float)line[i][k];
        grove_points pts = f32 ? grove_points_f32(&linef[0][0], 4, 3) : grove_points_f64(&line[0][0], 4, 3);
        grove_paircount_params p;
        grove_paircount_params_init(&p);
        p.edges = edges;
        p.nedges = 4;
        int64_t n[3];
        REQUIRE_OK(grove_paircount(pts, NULL, &p, n, NULL, NULL));
        /* Bin 0: the 4 self pairs; bin 1: the 3 pairs at distance 1, each
         * twice (ordered); bin 2: the 2 at distance 2, twice; distance 3
         * is the last edge, in no bin. */
        CHECK(n[0] == 4 && n[1] == 6 && n[2] == 4);
        double wrap[2][3] = {{0, 0, 0}, {9, 0, 0}}, box = 10;
        p.index.boxsize = &box;
        p.index.boxsize_count = 1;
        REQUIRE_OK(grove_paircount(grove_points_f64(&wrap[0][0], 2, 3), NULL, &p, n, NULL, NULL));
        CHECK(n[0] == 2 && n[1] == 2 && n[2] == 0);
    }
}

/* Counts and weighted sums of one configuration with `threads` threads. */
static void count_with_threads(const pc_set *a, const pc_set *b, const pc_ref_bins *bins, int threads, int64_t *n,
                               double *w)
{
    grove_status s = count_pairs(a, b, bins, threads, n, w);
    CHECK_MSG(s == GROVE_OK, "%s", grove_last_error());
}

TEST(paircount_same_bits_for_any_thread_count)
{
    static const double edges[] = {0, 0.01, 0.02, 0.04, 0.08, 0.16};
    double box[3] = {1, 1, 1};
    pc_set *a = pc_set_make(PC_CLUSTERED, 3000, 3, false, 1, true, 5);
    pc_set *b = pc_set_make(PC_UNIFORM, 1500, 3, false, 1, true, 6);
    for (int cross = 0; cross < 2; cross++)
        for (int rppi = 0; rppi < 2; rppi++) {
            pc_ref_bins bins = {edges, 6, rppi ? 3 : 0, box};
            size_t nbins = pc_ref_nbins(&bins);
            int64_t n1[64], nt[64];
            double w1[64], wt[64];
            count_with_threads(a, cross ? b : NULL, &bins, 1, n1, w1);
            static const int threads[] = {2, 3, 8};
            for (int t = 0; t < 3; t++) {
                count_with_threads(a, cross ? b : NULL, &bins, threads[t], nt, wt);
                CHECK_MSG(memcmp(n1, nt, nbins * sizeof *n1) == 0, "counts differ on %d threads", threads[t]);
                CHECK_MSG(memcmp(w1, wt, nbins * sizeof *w1) == 0, "weighted sums differ on %d threads", threads[t]);
            }
        }
    pc_set_free(a);
    pc_set_free(b);
}

TEST(paircount_same_counts_in_any_power_of_two_units)
{
    /* Lattice points (spacing 1/4), box and edges (dyadic: many pairs on
     * them) times 2^k: the same squared distances times 4^k, exactly, so
     * the same counts and weighted sums, also where the index rescales
     * (2^+-300 in float64, 2^+-100 in float32) and down among subnormal
     * coordinates (2^-1062 in float64, 2^-137 in float32, where every
     * unscaled square underflows). */
    static const double edges[] = {0.25, 0.5, 0.75, 1, 1.5};
    static const int exps64[] = {-1062, -1040, -300, -20, 20, 300}, exps32[] = {-137, -130, -100, -20, 20, 100};
    for (int f32 = 0; f32 < 2; f32++) {
        pc_set *a = pc_set_make(PC_LATTICE, 500, 3, f32, 2, true, 9);
        double box[3] = {2, 2, 2};
        pc_ref_bins bins = {edges, 5, 0, box};
        int64_t n0[4], nk[4];
        double w0[4], wk[4];
        count_with_threads(a, NULL, &bins, 2, n0, w0);
        for (int t = 0; t < 6; t++) {
            int e = f32 ? exps32[t] : exps64[t];
            pc_set *s = pc_set_make(PC_LATTICE, 500, 3, f32, 2, true, 9);
            for (size_t i = 0; i < s->n * s->d; i++) {
                if (f32) ((float *)s->data)[i] = (float)ldexp(((float *)s->data)[i], e);
                else ((double *)s->data)[i] = ldexp(((double *)s->data)[i], e);
            }
            double ek[5], boxk[3];
            for (int k = 0; k < 5; k++) ek[k] = ldexp(edges[k], e);
            for (int k = 0; k < 3; k++) boxk[k] = ldexp(box[k], e);
            pc_ref_bins scaled = {ek, 5, 0, boxk};
            count_with_threads(s, NULL, &scaled, 2, nk, wk);
            CHECK_MSG(memcmp(n0, nk, sizeof n0) == 0 && memcmp(w0, wk, sizeof w0) == 0,
                      "%s times 2^%d: counts %lld %lld %lld %lld, unscaled %lld %lld %lld %lld",
                      f32 ? "float32" : "float64", e, (long long)nk[0], (long long)nk[1], (long long)nk[2],
                      (long long)nk[3], (long long)n0[0], (long long)n0[1], (long long)n0[2], (long long)n0[3]);
            pc_set_free(s);
        }
        pc_set_free(a);
    }
}

TEST(paircount_empty_and_tiny_sets)
{
    static const double edges[] = {0, 1, 2};
    double one[3] = {0.5, 0.5, 0.5}, two[6] = {0, 0, 0, 1.5, 0, 0};
    grove_paircount_params p;
    grove_paircount_params_init(&p);
    p.edges = edges;
    p.nedges = 3;
    int64_t n[2] = {7, 7};
    double w[2] = {7, 7};
    REQUIRE_OK(grove_paircount(grove_points_f64(one, 0, 3), NULL, &p, n, w, NULL));
    CHECK(n[0] == 0 && n[1] == 0 && w[0] == 0 && w[1] == 0);
    REQUIRE_OK(grove_paircount(grove_points_f64(one, 1, 3), NULL, &p, n, w, NULL));
    CHECK(n[0] == 1 && n[1] == 0 && w[0] == 1);
    REQUIRE_OK(grove_paircount(grove_points_f64(two, 2, 3), NULL, &p, n, w, NULL));
    CHECK(n[0] == 2 && n[1] == 2 && w[1] == 2);
    grove_points none = grove_points_f64(one, 0, 3);
    REQUIRE_OK(grove_paircount(grove_points_f64(two, 2, 3), &none, &p, n, NULL, NULL));
    CHECK(n[0] == 0 && n[1] == 0);
    CHECK(grove_paircount_bins(&p) == 2);
    p.pimax = 3.7;
    CHECK(grove_paircount_bins(&p) == 6);
}

TEST(paircount_refuses_bad_arguments)
{
    double x[6] = {0, 0, 0, 1, 1, 1}, xs[4] = {0, 0, 1, 1};
    float xf[6] = {0, 0, 0, 1, 1, 1};
    grove_points pts = grove_points_f64(x, 2, 3), flat = grove_points_f64(xs, 2, 2), single = grove_points_f32(xf, 2, 3);
    int64_t n[8];
    double w[8];
    grove_paircount_params p;
    grove_paircount_params_init(&p);
    double edges[4] = {0, 1, 2, 3};
    p.edges = edges;
    p.nedges = 1;
    CHECK_FAILS(grove_paircount(pts, NULL, &p, n, NULL, NULL), GROVE_INVALID_ARGUMENT, "at least 2");
    p.nedges = 4;
    edges[2] = 0.5;
    CHECK_FAILS(grove_paircount(pts, NULL, &p, n, NULL, NULL), GROVE_INVALID_ARGUMENT, "edges must ascend");
    edges[2] = 2;
    edges[0] = -1;
    CHECK_FAILS(grove_paircount(pts, NULL, &p, n, NULL, NULL), GROVE_INVALID_ARGUMENT, "edge 0 is -1");
    edges[0] = NAN;
    CHECK_FAILS(grove_paircount(pts, NULL, &p, n, NULL, NULL), GROVE_INVALID_ARGUMENT, "finite");
    CHECK(grove_paircount_bins(&p) == 0);
    edges[0] = 0;
    p.pimax = 0.5;
    CHECK_FAILS(grove_paircount(pts, NULL, &p, n, NULL, NULL), GROVE_INVALID_ARGUMENT, "pimax = 0.5");
    p.pimax = 2;
    CHECK_FAILS(grove_paircount(grove_points_f64(x, 6, 1), NULL, &p, n, NULL, NULL), GROVE_INVALID_ARGUMENT,
                "need d >= 2");
    p.pimax = 0;
    CHECK_FAILS(grove_paircount(pts, &flat, &p, n, NULL, NULL), GROVE_INVALID_ARGUMENT, "data2 have d = 2");
    CHECK_FAILS(grove_paircount(pts, &single, &p, n, NULL, NULL), GROVE_INVALID_ARGUMENT, "one dtype");
    double bad_w[2] = {1, NAN};
    p.weights1 = bad_w;
    CHECK_FAILS(grove_paircount(pts, NULL, &p, n, w, NULL), GROVE_INVALID_ARGUMENT, "weights1[1] is nan");
    p.weights1 = NULL;
    p.weights2 = bad_w;
    CHECK_FAILS(grove_paircount(pts, NULL, &p, n, w, NULL), GROVE_INVALID_ARGUMENT, "weights2 given without data2");
    p.weights2 = NULL;
    double box = 1;
    p.index.boxsize = &box;
    p.index.boxsize_count = 1;
    CHECK_FAILS(grove_paircount(pts, NULL, &p, n, NULL, NULL), GROVE_INVALID_ARGUMENT, "data1: row 1");
    CHECK_FAILS(grove_paircount(flat, &flat, &p, n, NULL, NULL), GROVE_INVALID_ARGUMENT, "data1: row 1");
    p.index.boxsize = NULL;
    p.index.boxsize_count = 0;
    x[4] = NAN;
    CHECK_FAILS(grove_paircount(pts, NULL, &p, n, NULL, NULL), GROVE_INVALID_ARGUMENT, "row 1, column 1 is NaN");
    x[4] = 1;
    CHECK_FAILS(grove_paircount(pts, NULL, NULL, n, NULL, NULL), GROVE_INVALID_ARGUMENT, "params is NULL");
    CHECK_FAILS(grove_paircount(pts, NULL, &p, NULL, NULL, NULL), GROVE_INVALID_ARGUMENT, "npairs is NULL");
    /* More bins than the kernels number (refused before any is touched). */
    static double many[3000];
    for (int k = 0; k < 3000; k++) many[k] = k;
    p.edges = many;
    p.nedges = 3000;
    p.pimax = 1000000;
    CHECK_FAILS(grove_paircount(pts, NULL, &p, n, NULL, NULL), GROVE_INVALID_ARGUMENT, "too many");
    p.edges = edges;
    p.nedges = 4;
    p.pimax = 0;
    double huge[2] = {1e200, 1e200};
    p.weights1 = huge;
    CHECK_FAILS(grove_paircount(pts, NULL, &p, n, w, NULL), GROVE_INVALID_ARGUMENT, "beyond the range");
}

TEST(paircount_estimators_follow_their_formulas)
{
    /* Landy-Szalay with randoms, and in a box DD / RR - 1 against the
     * uniform expectation (Corrfunc's theory.xi and theory.wp), worked
     * out here for made-up sums. */
    static const double edges[] = {0, 1, 2};
    double box = 10;
    grove_paircount_params p;
    grove_paircount_params_init(&p);
    p.edges = edges;
    p.nedges = 3;
    grove_paircount_totals data = {100, 100}, rand = {400, 400};
    double dd[4] = {130, 400, 0, 0}, dr[4] = {40, 1500, 0, 0}, rr[4] = {420, 6000, 0, 0}, xi[4], wp[2];
    REQUIRE_OK(grove_paircount_xi(&p, 3, data, rand, dd, dr, rr, xi));
    double ndd = 100.0 * 100 - 100, ndr = 100.0 * 400, nrr = 400.0 * 400 - 400;
    /* Bin 0 holds r = 0: its self pairs (100 and 400) come out first. */
    double want0 = ((130 - 100) / ndd - 2 * 40 / ndr + (420 - 400) / nrr) / ((420 - 400) / nrr);
    double want1 = (400 / ndd - 2 * 1500 / ndr + 6000 / nrr) / (6000 / nrr);
    CHECK(fabs(xi[0] - want0) < 1e-12 * fabs(want0) && fabs(xi[1] - want1) < 1e-12 * fabs(want1));
    rr[1] = 0;
    REQUIRE_OK(grove_paircount_xi(&p, 3, data, rand, dd, dr, rr, xi));
    CHECK(isnan(xi[1]));
    /* Without randoms, in a periodic box of side 10. */
    p.index.boxsize = &box;
    p.index.boxsize_count = 1;
    REQUIRE_OK(grove_paircount_xi(&p, 3, data, rand, dd, NULL, NULL, xi));
    double pi = 3.14159265358979323846, shell0 = 4.0 / 3 * pi, shell1 = 4.0 / 3 * pi * (8 - 1);
    double rr0 = ndd * shell0 / 1000 + 100, rr1 = ndd * shell1 / 1000;
    CHECK(fabs(xi[0] - (130 / rr0 - 1)) < 1e-12 && fabs(xi[1] - (400 / rr1 - 1)) < 1e-12);
    /* (rp, pi) in a box: 3 pi bins of 1 (pimax 3), wp over the cylinder. */
    p.pimax = 3;
    double dd2[6] = {110, 20, 30, 150, 140, 160};
    REQUIRE_OK(grove_paircount_wp(&p, 3, data, rand, dd2, NULL, NULL, wp));
    double cyl0 = ndd * pi * 1 * 2 * 3 / 1000 + 100, cyl1 = ndd * pi * 3 * 2 * 3 / 1000;
    CHECK(fabs(wp[0] - 2 * 3 * (160 / cyl0 - 1)) < 1e-12 && fabs(wp[1] - 2 * 3 * (450 / cyl1 - 1)) < 1e-12);
    /* With randoms: 2 dpi (1) times the sum of xi over pi. */
    double dr2[6] = {30, 40, 50, 60, 70, 80}, rr2[6] = {500, 600, 700, 800, 900, 1000}, xi2[6];
    REQUIRE_OK(grove_paircount_xi(&p, 3, data, rand, dd2, dr2, rr2, xi2));
    REQUIRE_OK(grove_paircount_wp(&p, 3, data, rand, dd2, dr2, rr2, wp));
    CHECK(fabs(wp[0] - 2 * (xi2[0] + xi2[1] + xi2[2])) < 1e-12 * fabs(wp[0]));
    CHECK(fabs(wp[1] - 2 * (xi2[3] + xi2[4] + xi2[5])) < 1e-12 * fabs(wp[1]));
    CHECK_FAILS(grove_paircount_xi(&p, 3, data, rand, dd2, dr2, NULL, xi2), GROVE_INVALID_ARGUMENT, "both DR and RR");
    p.index.boxsize = NULL;
    p.index.boxsize_count = 0;
    CHECK_FAILS(grove_paircount_xi(&p, 3, data, rand, dd2, NULL, NULL, xi2), GROVE_INVALID_ARGUMENT, "periodic box");
    p.pimax = 0;
    CHECK_FAILS(grove_paircount_wp(&p, 3, data, rand, dd, dr, rr, wp), GROVE_INVALID_ARGUMENT, "pimax >= 1");
}

TEST(exact_sum_is_the_same_in_any_order)
{
    /* Doubles of every magnitude, subnormals and cancellations included,
     * summed forwards, backwards and in two merged halves: one value, the
     * one an integer sum gives where the terms are integers. */
    enum { N = 4000 };
    static double v[N];
    uint64_t state = 11;
    for (int i = 0; i < N; i++) {
        state = state * 6364136223846793005u + 1442695040888963407u;
        double m = (double)(state >> 11) * 0x1p-53 - 0.5;
        v[i] = ldexp(m, (int)(state % 2100) - 1074);
    }
    v[7] = 1e300;
    v[8] = -1e300;
    v[9] = 0x1p-1074;
    grove__xsum fwd, bwd, lo, hi;
    grove__xsum_clear(&fwd);
    grove__xsum_clear(&bwd);
    grove__xsum_clear(&lo);
    grove__xsum_clear(&hi);
    for (int i = 0; i < N; i++) {
        grove__xsum_add(&fwd, v[i]);
        grove__xsum_add(&bwd, v[N - 1 - i]);
        grove__xsum_add(i % 3 ? &lo : &hi, v[i]);
    }
    grove__xsum_merge(&lo, &hi);
    double a = grove__xsum_value(&fwd), b = grove__xsum_value(&bwd), c = grove__xsum_value(&lo);
    CHECK(memcmp(&a, &b, sizeof a) == 0 && memcmp(&a, &c, sizeof a) == 0);
    /* Integers: exact in int64, so the sum is known. */
    grove__xsum ints;
    grove__xsum_clear(&ints);
    int64_t want = 0;
    for (int i = 0; i < N; i++) {
        int64_t k = (int64_t)((uint64_t)i * 2654435761u % 1000000) - 300000;
        grove__xsum_add(&ints, (double)k);
        want += k;
    }
    grove__xsum_double(&ints);
    CHECK(grove__xsum_value(&ints) == (double)(2 * want));
    /* 1 + 2^-80 - 1 is 2^-80, not 0. */
    grove__xsum tiny;
    grove__xsum_clear(&tiny);
    grove__xsum_add(&tiny, 1);
    grove__xsum_add(&tiny, 0x1p-80);
    grove__xsum_add(&tiny, -1);
    CHECK(grove__xsum_value(&tiny) == 0x1p-80);
    grove__xsum_add(&tiny, INFINITY);
    CHECK(isnan(grove__xsum_value(&tiny)));
}
