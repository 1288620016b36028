/* Periodic boxes for the join and kNN against a brute-force minimum-image
 * reference. The reference takes each difference in the points' dtype,
 * wraps it as grove.h documents (t = |a - b|, then L - t when t > L / 2,
 * with L rounded to the dtype) and sums the squares over the index's
 * variance order (in order up to GROVE__JOIN_SOA_MAX dimensions, eight
 * fixed lanes above), so pair sets, distances and kNN ranks must agree
 * exactly, boundary pairs and ties included. It shares no code with the
 * library. */
#include "test.h"

#include "join/join_internal.h"

#include <math.h>
#include <stdbool.h>

#define MAX_D 32

typedef struct pset {
    void *data; /* n x d, float or double */
    bool f32;
    size_t n, d;
} pset;

/* The box as the reference sees it: a length per input dimension (0 =
 * unbounded) and the variance order of the index over the data. */
typedef struct pbox {
    double len[MAX_D];
    size_t order[MAX_D];
} pbox;

static double pcoord(const pset *s, size_t i, size_t j)
{
    return s->f32 ? ((const float *)s->data)[i * s->d + j] : ((const double *)s->data)[i * s->d + j];
}

static grove_points pview(const pset *s)
{
    return s->f32 ? grove_points_f32(s->data, s->n, s->d) : grove_points_f64(s->data, s->n, s->d);
}

static uint64_t next_u64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

static double next_unit(uint64_t *state) { return (double)(next_u64(state) >> 11) * 0x1p-53; }

/* n points inside the box: uniform, or on a lattice of spacing 1/4 (exact
 * squared distances in either dtype, so many exact ties); unbounded
 * dimensions spread over [0, 3). */
static pset *make_pset(bool lattice, size_t n, size_t d, bool f32, const pbox *b, uint64_t seed)
{
    pset *s = calloc(1, sizeof *s);
    s->f32 = f32;
    s->n = n;
    s->d = d;
    s->data = malloc((n * d + 1) * (f32 ? sizeof(float) : sizeof(double)));
    uint64_t state = seed;
    for (size_t i = 0; i < n * d; i++) {
        double len = b->len[i % d] > 0 ? b->len[i % d] : 3, x = next_unit(&state) * len;
        if (lattice) x = floor(x * 4) / 4;
        if (f32) {
            float v = (float)x;
            ((float *)s->data)[i] = v < (float)len ? v : 0;
        } else {
            ((double *)s->data)[i] = x;
        }
    }
    return s;
}

static void free_pset(pset *s)
{
    if (!s) return;
    free(s->data);
    free(s);
}

/* Index parameters for the box: count lengths from b (1: b->len[0] for
 * every dimension). */
static grove_index_params box_params(const pbox *b, size_t count)
{
    grove_index_params ip;
    grove_index_params_init(&ip);
    ip.boxsize = b->len;
    ip.boxsize_count = count;
    return ip;
}

/* The minimum-image squared distance between row a of qs and row c of
 * ds, in the dtype. */
static double ref_d2(const pset *qs, size_t a, const pset *ds, size_t c, const pbox *b)
{
    size_t d = ds->d;
    if (ds->f32) {
        float lane[8] = {0}, s = 0;
        for (size_t j = 0; j < d; j++) {
            size_t o = b->order[j];
            float t = fabsf((float)pcoord(qs, a, o) - (float)pcoord(ds, c, o)), len = (float)b->len[o];
            if (len > 0 && t > len / 2) t = len - t;
            if (d <= GROVE__JOIN_SOA_MAX) s += t * t;
            else lane[j % 8] += t * t;
        }
        if (d > GROVE__JOIN_SOA_MAX)
            s = ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]));
        return s;
    }
    double lane[8] = {0}, s = 0;
    for (size_t j = 0; j < d; j++) {
        size_t o = b->order[j];
        double t = fabs(pcoord(qs, a, o) - pcoord(ds, c, o)), len = b->len[o];
        if (len > 0 && t > len / 2) t = len - t;
        if (d <= GROVE__JOIN_SOA_MAX) s += t * t;
        else lane[j % 8] += t * t;
    }
    if (d > GROVE__JOIN_SOA_MAX)
        s = ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]));
    return s;
}

/* Streamed batches must concatenate to the expected CSR. */
typedef struct pstream {
    const int64_t *offsets, *want;
    const double *want_d;
    size_t next_q, batches;
    bool ok;
} pstream;

static int on_pbatch(void *user, const grove_join_batch *bt)
{
    pstream *ps = user;
    size_t nb = bt->query_end - bt->query_begin;
    int64_t base = ps->offsets[bt->query_begin];
    bool ok = bt->query_begin == ps->next_q && bt->pairs_before == base;
    for (size_t i = 0; ok && i < nb; i++) ok = bt->offsets[i + 1] == ps->offsets[bt->query_begin + i + 1] - base;
    for (int64_t i = 0; ok && i < bt->offsets[nb]; i++)
        ok = bt->indices[i] == ps->want[base + i] && bt->distances[i] == ps->want_d[base + i];
    ps->ok &= ok;
    ps->next_q = bt->query_end;
    ps->batches += nb > 0;
    return 0;
}

/* One periodic join (qs NULL: self-join of ds) against brute force:
 * count, fill (with distances), a stream under a budget of a few queries,
 * and the allocating grove_join; box_count lengths from b. */
static void check_pjoin(const pset *ds, const pset *qs, pbox *b, size_t box_count, double eps, bool exclude,
                        int threads, const char *what)
{
    grove_index_params ip = box_params(b, box_count);
    grove_options opt;
    grove_options_init(&opt);
    opt.threads = threads;
    grove_index *ix = NULL;
    grove_status st = grove_index_create(pview(ds), &ip, &opt, &ix);
    CHECK_MSG(st == GROVE_OK, "%s: build: %s", what, grove_last_error());
    if (st != GROVE_OK) return;
    grove_index_dim_order(ix, b->order);
    const pset *q = qs ? qs : ds;
    grove_points qv = pview(q);
    grove_join_params jp;
    grove_join_params_init(&jp);
    jp.eps = eps;
    jp.exclude_self = exclude;
    double eps2 = ds->f32 ? (double)(float)(eps * eps) : eps * eps;
    size_t nq = q->n, m = 0;
    int64_t *counts = malloc((nq + 1) * sizeof *counts), *offsets = malloc((nq + 1) * sizeof *offsets);
    int64_t *want = malloc((nq * ds->n + 1) * sizeof *want), pairs = -1;
    double *want_d = malloc((nq * ds->n + 1) * sizeof *want_d);
    offsets[0] = 0;
    for (size_t a = 0; a < nq; a++) {
        for (size_t c = 0; c < ds->n; c++) {
            if (exclude && a == c) continue;
            double d2 = ref_d2(q, a, ds, c, b);
            if (d2 <= eps2) {
                want[m] = (int64_t)c;
                want_d[m++] = sqrt(d2);
            }
        }
        offsets[a + 1] = (int64_t)m;
    }
    st = grove_join_count(ix, qs ? &qv : NULL, &jp, counts, &pairs, &opt);
    CHECK_MSG(st == GROVE_OK, "%s: count: %s", what, grove_last_error());
    for (size_t a = 0; st == GROVE_OK && a < nq; a++)
        if (counts[a] != offsets[a + 1] - offsets[a]) {
            CHECK_MSG(false, "%s: query %zu: count %lld, brute force %lld", what, a, (long long)counts[a],
                      (long long)(offsets[a + 1] - offsets[a]));
            st = GROVE_INTERNAL;
        }
    CHECK_MSG(st != GROVE_OK || pairs == (int64_t)m, "%s: pairs %lld, brute force %zu", what, (long long)pairs, m);
    int64_t *got = malloc((m + 1) * sizeof *got);
    double *got_d = malloc((m + 1) * sizeof *got_d);
    if (st == GROVE_OK) {
        st = grove_join_fill(ix, qs ? &qv : NULL, &jp, offsets, got, got_d, &opt);
        CHECK_MSG(st == GROVE_OK, "%s: fill: %s", what, grove_last_error());
    }
    for (size_t i = 0; st == GROVE_OK && i < m; i++)
        if (got[i] != want[i] || got_d[i] != want_d[i]) {
            CHECK_MSG(false, "%s: pair %zu: got row %lld at %.17g, want row %lld at %.17g", what, i,
                      (long long)got[i], got_d[i], (long long)want[i], want_d[i]);
            st = GROVE_INTERNAL;
        }
    if (st == GROVE_OK) {
        int64_t largest = 0;
        for (size_t a = 0; a < nq; a++) largest = counts[a] > largest ? counts[a] : largest;
        grove_options small = opt;
        small.memory_budget = nq * 8 + 16 + (size_t)(largest * 2 + 3) * 16;
        jp.distances = 1;
        pstream ps = {offsets, want, want_d, 0, 0, true};
        CHECK_OK(grove_join_stream(ix, qs ? &qv : NULL, &jp, on_pbatch, &ps, &small));
        CHECK_MSG(ps.ok && ps.next_q == nq, "%s: streamed batches differ from brute force", what);
        grove_join_result r;
        CHECK_OK(grove_join(pview(ds), qs ? &qv : NULL, &ip, &jp, &r, &opt));
        CHECK_MSG(r.nq == nq && r.pairs == (int64_t)m && memcmp(r.offsets, offsets, (nq + 1) * 8) == 0 &&
                      (m == 0 || (memcmp(r.indices, want, m * 8) == 0 && memcmp(r.distances, want_d, m * 8) == 0)),
                  "%s: grove_join differs from brute force", what);
        grove_join_result_free(&r);
    }
    free(counts);
    free(offsets);
    free(want);
    free(want_d);
    free(got);
    free(got_d);
    grove_index_free(ix);
}

/* kNN (qs NULL: self) against brute force by (d2, row), through the index
 * and through grove_knn. */
static void check_pknn(const pset *ds, const pset *qs, pbox *b, size_t box_count, size_t k, bool exclude,
                       const char *what)
{
    grove_index_params ip = box_params(b, box_count);
    grove_index *ix = NULL;
    grove_status st = grove_index_create(pview(ds), &ip, NULL, &ix);
    CHECK_MSG(st == GROVE_OK, "%s: build: %s", what, grove_last_error());
    if (st != GROVE_OK) return;
    grove_index_dim_order(ix, b->order);
    const pset *q = qs ? qs : ds;
    grove_points qv = pview(q);
    size_t nq = q->n;
    int64_t *idx = malloc((nq * k + 1) * sizeof *idx), *idx2 = malloc((nq * k + 1) * sizeof *idx2);
    double *dist = malloc((nq * k + 1) * sizeof *dist), *dist2 = malloc((nq * k + 1) * sizeof *dist2);
    double *d2 = malloc(ds->n * sizeof *d2);
    size_t *rank = malloc(ds->n * sizeof *rank);
    st = grove_knn_search(ix, qs ? &qv : NULL, &(grove_knn_params){k, exclude}, idx, dist, NULL);
    CHECK_MSG(st == GROVE_OK, "%s: %s", what, grove_last_error());
    if (st == GROVE_OK) {
        CHECK_OK(grove_knn(pview(ds), qs ? &qv : NULL, &ip, &(grove_knn_params){k, exclude}, idx2, dist2, NULL));
        CHECK_MSG(memcmp(idx, idx2, nq * k * 8) == 0 && memcmp(dist, dist2, nq * k * 8) == 0,
                  "%s: grove_knn differs from grove_knn_search", what);
    }
    for (size_t a = 0; st == GROVE_OK && a < nq; a++) {
        size_t m = 0;
        for (size_t c = 0; c < ds->n; c++) {
            if (exclude && a == c) continue;
            d2[c] = ref_d2(q, a, ds, c, b);
            rank[m++] = c;
        }
        for (size_t r = 0; r < k; r++) {
            size_t best = r;
            for (size_t i = r + 1; i < m; i++)
                if (d2[rank[i]] < d2[rank[best]] || (d2[rank[i]] == d2[rank[best]] && rank[i] < rank[best])) best = i;
            size_t t = rank[r];
            rank[r] = rank[best];
            rank[best] = t;
            if (idx[a * k + r] != (int64_t)rank[r] || dist[a * k + r] != sqrt(d2[rank[r]])) {
                CHECK_MSG(false, "%s: query %zu rank %zu: got row %lld at %.17g, want row %zu at %.17g", what, a, r,
                          (long long)idx[a * k + r], dist[a * k + r], rank[r], sqrt(d2[rank[r]]));
                st = GROVE_INTERNAL;
                break;
            }
        }
    }
    free(idx);
    free(idx2);
    free(dist);
    free(dist2);
    free(d2);
    free(rank);
    grove_index_free(ix);
}

/* Boxes for d dimensions: 0 one length for all (count 1); 1 one per
 * dimension, different; 2 per dimension with every other one unbounded
 * (d >= 2). Lattice boxes are whole numbers, so the lattice fits them. */
static size_t set_box(pbox *b, int shape, size_t d)
{
    memset(b, 0, sizeof *b);
    for (size_t j = 0; j < d; j++) b->len[j] = shape == 0 ? 4 : shape == 1 ? (double)(3 + j % 3) : j % 2 ? 0 : 5;
    return shape == 0 ? 1 : d;
}

TEST(periodic_join_against_brute_force)
{
    static const size_t dims[] = {1, 2, 3, 8, 20};
    uint64_t seed = 11;
    for (size_t di = 0; di < sizeof dims / sizeof *dims; di++)
        for (int lattice = 0; lattice < 2; lattice++)
            for (int shape = 0; shape < 3; shape++) {
                size_t d = dims[di], n = d > 8 ? 160 : 300;
                if (shape == 2 && d < 2) continue;
                bool f32 = (di + (size_t)lattice + (size_t)shape) % 2 == 1;
                pbox b;
                size_t count = set_box(&b, shape, d);
                pset *ds = make_pset(lattice, n, d, f32, &b, seed++);
                pset *qs = make_pset(lattice, 77, d, f32, &b, seed++);
                /* Small, exactly half the smallest box (lattice distances
                 * land on it), beyond half a box, and everything. */
                double small = lattice ? 0.5 : 0.3 * sqrt((double)d) * (d > 8 ? 2 : 1), half = 1.5;
                const double radii[] = {small, half, 2.75, 6 * sqrt((double)d)};
                for (size_t r = 0; r < 4; r++) {
                    char what[160];
                    snprintf(what, sizeof what, "%s d=%zu box %d %s eps=%g", lattice ? "lattice" : "uniform", d,
                             shape, f32 ? "f32" : "f64", radii[r]);
                    check_pjoin(ds, NULL, &b, count, radii[r], r % 2 == 1, 1, what);
                    check_pjoin(ds, qs, &b, count, radii[r], false, 1, what);
                }
                free_pset(ds);
                free_pset(qs);
            }
}

TEST(periodic_knn_against_brute_force)
{
    static const size_t dims[] = {1, 2, 3, 8, 20};
    uint64_t seed = 311;
    for (size_t di = 0; di < sizeof dims / sizeof *dims; di++)
        for (int lattice = 0; lattice < 2; lattice++)
            for (int shape = 0; shape < 3; shape++) {
                size_t d = dims[di], n = 120;
                if (shape == 2 && d < 2) continue;
                bool f32 = (di + (size_t)lattice + (size_t)shape) % 2 == 0;
                pbox b;
                size_t count = set_box(&b, shape, d);
                pset *ds = make_pset(lattice, n, d, f32, &b, seed++);
                pset *qs = make_pset(lattice, 41, d, f32, &b, seed++);
                static const size_t ks[] = {1, 7, 60};
                for (size_t ki = 0; ki < 3; ki++) {
                    char what[160];
                    snprintf(what, sizeof what, "kNN %s d=%zu box %d %s k=%zu", lattice ? "lattice" : "uniform", d,
                             shape, f32 ? "f32" : "f64", ks[ki]);
                    check_pknn(ds, NULL, &b, count, ks[ki], false, what);
                    check_pknn(ds, NULL, &b, count, ks[ki], true, what);
                    check_pknn(ds, qs, &b, count, ks[ki], false, what);
                }
                /* More neighbours than half a box holds: every point. */
                check_pknn(ds, NULL, &b, count, n, false, "kNN k = n");
                check_pknn(ds, NULL, &b, count, n - 1, true, "kNN k = n - 1 excluding self");
                free_pset(ds);
                free_pset(qs);
            }
}

/* Closed form: with eps beyond half the box, or beyond the whole box, a
 * pair is one pair at its minimum-image distance (as cKDTree counts it),
 * never one per image within eps. */
TEST(periodic_pair_counted_once_at_its_minimum_image)
{
    double x[2] = {0.25, 0.875}, len = 1;
    grove_index_params ip;
    grove_index_params_init(&ip);
    ip.boxsize = &len;
    ip.boxsize_count = 1;
    grove_join_params jp;
    grove_join_params_init(&jp);
    jp.distances = 1;
    const double radii[] = {0.37, 0.375, 0.6, 1.5, 7};
    const int64_t pairs[] = {2, 4, 4, 4, 4};
    for (size_t r = 0; r < 5; r++) {
        jp.eps = radii[r];
        grove_join_result res;
        REQUIRE_OK(grove_join(grove_points_f64(x, 2, 1), NULL, &ip, &jp, &res, NULL));
        CHECK_MSG(res.pairs == pairs[r], "eps %g: %lld pairs, want %lld", radii[r], (long long)res.pairs,
                  (long long)pairs[r]);
        if (res.pairs == 4) CHECK(res.indices[1] == 1 && res.distances[1] == 0.375 && res.distances[0] == 0);
        grove_join_result_free(&res);
    }
    /* From 0.99, 0.95 is nearer than 0.05 round the box. */
    double y[2] = {0.05, 0.95}, q[1] = {0.99}, dist[2];
    int64_t idx[2];
    grove_points qp = grove_points_f64(q, 1, 1);
    REQUIRE_OK(grove_knn(grove_points_f64(y, 2, 1), &qp, &ip, &(grove_knn_params){2, 0}, idx, dist, NULL));
    CHECK(idx[0] == 1 && idx[1] == 0);
    CHECK(dist[0] == 0.99 - 0.95 && dist[1] == 1 - (0.99 - 0.05));
}

TEST(periodic_threads_give_identical_results)
{
    pbox b;
    size_t count = set_box(&b, 1, 3);
    pset *s = make_pset(false, 30000, 3, false, &b, 5);
    grove_index_params ip = box_params(&b, count);
    grove_join_params jp;
    grove_join_params_init(&jp);
    jp.eps = 0.25; /* about 20 neighbours each in a box of 60 */
    jp.distances = 1;
    grove_join_result r[2];
    int64_t *kidx[2];
    for (int t = 0; t < 2; t++) {
        grove_options opt;
        grove_options_init(&opt);
        opt.threads = t + 1;
        CHECK_OK(grove_join(pview(s), NULL, &ip, &jp, &r[t], &opt));
        kidx[t] = malloc(30000 * 4 * sizeof **kidx);
        CHECK_OK(grove_knn(pview(s), NULL, &ip, &(grove_knn_params){4, 1}, kidx[t], NULL, &opt));
    }
    CHECK(r[0].pairs > 30000 * 5 && r[0].pairs == r[1].pairs);
    CHECK(r[0].pairs != r[1].pairs || (memcmp(r[0].indices, r[1].indices, (size_t)r[0].pairs * 8) == 0 &&
                                       memcmp(r[0].distances, r[1].distances, (size_t)r[0].pairs * 8) == 0));
    CHECK(memcmp(kidx[0], kidx[1], 30000 * 4 * sizeof **kidx) == 0);
    /* A sample of the queries against brute force (the order for it). */
    grove_index *ix = NULL;
    REQUIRE_OK(grove_index_create(pview(s), &ip, NULL, &ix));
    grove_index_dim_order(ix, b.order);
    grove_index_free(ix);
    size_t bad = 0;
    for (size_t a = 0; a < 30000; a += 97) {
        int64_t m = 0;
        for (size_t c = 0; c < 30000; c++) m += ref_d2(s, a, s, c, &b) <= 0.25 * 0.25;
        bad += m != r[1].offsets[a + 1] - r[1].offsets[a];
    }
    CHECK_MSG(bad == 0, "%zu sampled queries differ from brute force", bad);
    for (int t = 0; t < 2; t++) {
        grove_join_result_free(&r[t]);
        free(kidx[t]);
    }
    free_pset(s);
}

/* The index holds points and box times a power of two where squared
 * distances would overflow or underflow: pairs, ranks and (scaled back)
 * distances must be those of the unscaled problem. */
TEST(periodic_box_scales_with_the_range)
{
    pbox b;
    size_t count = set_box(&b, 1, 3);
    pset *s = make_pset(false, 400, 3, false, &b, 9);
    grove_index_params ip = box_params(&b, count);
    grove_join_params jp;
    grove_join_params_init(&jp);
    jp.eps = 0.9;
    jp.distances = 1;
    grove_join_result base;
    REQUIRE_OK(grove_join(pview(s), NULL, &ip, &jp, &base, NULL));
    int64_t kbase[400 * 5], kidx[400 * 5];
    double dbase[400 * 5], dist[400 * 5];
    REQUIRE_OK(grove_knn(pview(s), NULL, &ip, &(grove_knn_params){5, 0}, kbase, dbase, NULL));
    const int shifts[] = {600, -600};
    for (size_t t = 0; t < 2; t++) {
        double f = ldexp(1, shifts[t]);
        double *x = test_scaled_copy(s->data, 400 * 3, f);
        pbox sb = b;
        for (size_t j = 0; j < 3; j++) sb.len[j] *= f;
        grove_index_params sp = box_params(&sb, count);
        grove_join_params sj = jp;
        sj.eps = jp.eps * f;
        grove_join_result r;
        CHECK_OK(grove_join(grove_points_f64(x, 400, 3), NULL, &sp, &sj, &r, NULL));
        bool same = r.pairs == base.pairs && memcmp(r.indices, base.indices, (size_t)r.pairs * 8) == 0;
        for (int64_t i = 0; same && i < r.pairs; i++) same = r.distances[i] == base.distances[i] * f;
        CHECK_MSG(same, "join at 2^%d differs from the unscaled one", shifts[t]);
        grove_join_result_free(&r);
        CHECK_OK(grove_knn(grove_points_f64(x, 400, 3), NULL, &sp, &(grove_knn_params){5, 0}, kidx, dist, NULL));
        same = memcmp(kidx, kbase, sizeof kidx) == 0;
        for (size_t i = 0; same && i < 400 * 5; i++) same = dist[i] == dbase[i] * f;
        CHECK_MSG(same, "kNN at 2^%d differs from the unscaled one", shifts[t]);
        free(x);
    }
    grove_join_result_free(&base);
    free_pset(s);
}

TEST(periodic_errors_name_the_problem)
{
    double x[6] = {0.5, 0.5, 0.25, 0.75, 0.1, 0.9}, len[3] = {1, 1, 1};
    grove_points p = grove_points_f64(x, 3, 2);
    grove_index_params ip;
    grove_index_params_init(&ip);
    ip.boxsize = len;
    grove_index *ix = NULL;
    ip.boxsize_count = 3;
    CHECK_FAILS(grove_index_create(p, &ip, NULL, &ix), GROVE_INVALID_ARGUMENT, "boxsize has 3 lengths");
    CHECK(ix == NULL);
    double neg = -1, inf = INFINITY;
    ip.boxsize = &neg;
    ip.boxsize_count = 1;
    CHECK_FAILS(grove_index_create(p, &ip, NULL, &ix), GROVE_INVALID_ARGUMENT, "boxsize[0] = -1");
    ip.boxsize = &inf;
    CHECK_FAILS(grove_index_create(p, &ip, NULL, &ix), GROVE_INVALID_ARGUMENT, "finite");
    ip.boxsize = NULL;
    CHECK_FAILS(grove_index_create(p, &ip, NULL, &ix), GROVE_INVALID_ARGUMENT, "boxsize is NULL");
    /* Outside [0, L): the row and dimension are named. */
    double small = 0.8;
    ip.boxsize = &small;
    CHECK_FAILS(grove_index_create(p, &ip, NULL, &ix), GROVE_INVALID_ARGUMENT, "data: row 2, dimension 1");
    double edge[2] = {0.5, 1.0}, below[2] = {-0.0, -1e-300};
    ip.boxsize = len;
    ip.boxsize_count = 2;
    CHECK_FAILS(grove_index_create(grove_points_f64(edge, 1, 2), &ip, NULL, &ix), GROVE_INVALID_ARGUMENT,
                "row 0, dimension 1: coordinate 1 is outside the periodic box [0, 1)");
    CHECK_FAILS(grove_index_create(grove_points_f64(below, 1, 2), &ip, NULL, &ix), GROVE_INVALID_ARGUMENT,
                "row 0, dimension 1");
    /* An unbounded dimension (0) takes any coordinate. */
    double half[2] = {1, 0};
    ip.boxsize = half;
    REQUIRE_OK(grove_index_create(grove_points_f64(edge, 1, 2), &ip, NULL, &ix));
    double got[2];
    CHECK(grove_index_boxsize(ix, got) == 1 && got[0] == 1 && got[1] == 0);
    grove_index_free(ix);
    ip.boxsize = len;
    REQUIRE_OK(grove_index_create(p, &ip, NULL, &ix));
    double qx[4] = {0.5, 0.5, 0.5, 1.25};
    grove_points q = grove_points_f64(qx, 2, 2);
    grove_join_params jp;
    grove_join_params_init(&jp);
    jp.eps = 0.5;
    int64_t counts[2], kn[4];
    CHECK_FAILS(grove_join_count(ix, &q, &jp, counts, NULL, NULL), GROVE_INVALID_ARGUMENT,
                "queries: row 1, dimension 1: coordinate 1.25");
    CHECK_FAILS(grove_knn_search(ix, &q, &(grove_knn_params){1, 0}, kn, NULL, NULL), GROVE_INVALID_ARGUMENT,
                "queries: row 1");
    grove_join_result r;
    CHECK_FAILS(grove_join(p, &q, &ip, &jp, &r, NULL), GROVE_INVALID_ARGUMENT, "queries: row 1, dimension 1");
    CHECK(r.offsets == NULL);
    CHECK_FAILS(grove_knn(p, &q, &ip, &(grove_knn_params){1, 0}, kn, NULL, NULL), GROVE_INVALID_ARGUMENT,
                "queries: row 1");
    grove_index_free(ix);
    /* Without a box, the getter says so. */
    REQUIRE_OK(grove_index_create(p, NULL, NULL, &ix));
    got[0] = got[1] = 7;
    CHECK(grove_index_boxsize(ix, got) == 0 && got[0] == 0 && got[1] == 0);
    grove_index_free(ix);
}
