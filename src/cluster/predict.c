/* Prediction for new points, as the `hdbscan` library's prediction.py:
 * approximate_predict, approximate_predict_scores and membership_vector.
 * Each query finds its nearest mutual-reachability neighbour among its
 * nearest training points (_find_neighbor_and_lambda) and goes on from
 * that neighbour's place in the condensed tree. Queries are independent
 * and run in parallel; each thread works in its own slice of one block. */
#include "predict_internal.h"

#include "parallel.h"

#include <float.h>
#include <math.h>

#define T double
#define FN(name) name##_f64
#include "../index/geom_t.h"
#undef T
#undef FN

/* One thread's working memory. */
typedef struct query_state {
    double *q;         /* the query in float64 (d) */
    uint32_t *rows;    /* its nearest training rows (neighbours) */
    double *dist;      /* and their distances */
    double *a, *b;     /* clusters values each */
    void *search;      /* pd->scratch_bytes */
} query_state;

static size_t state_bytes(const grove__prediction *pd)
{
    size_t doubles = pd->tree.d + pd->neighbours + 2 * pd->clusters, bytes = doubles * sizeof(double);
    bytes += (pd->neighbours * sizeof(uint32_t) + 7) / 8 * 8;
    return bytes + (pd->scratch_bytes + 7) / 8 * 8;
}

static query_state state_at(const grove__prediction *pd, char *block)
{
    query_state st;
    st.q = (double *)(void *)block;
    st.dist = st.q + pd->tree.d;
    st.a = st.dist + pd->neighbours;
    st.b = st.a + pd->clusters;
    st.rows = (uint32_t *)(void *)(st.b + pd->clusters);
    st.search = (char *)st.rows + (pd->neighbours * sizeof(uint32_t) + 7) / 8 * 8;
    return st;
}

/* The library's _find_neighbor_and_lambda: the query's core distance is
 * its m-th nearest training point (0-based), and among its nearest the
 * first with the smallest max(core, query core, distance) wins. */
static void nearest_neighbour(const grove__prediction *pd, query_state *st, size_t *nn, double *lambda,
                              double *nearest)
{
    grove__tree_knn_point(&pd->tree, st->q, pd->neighbours, st->search, st->rows, st->dist);
    double core = st->dist[pd->m], best = (double)INFINITY;
    for (size_t r = 0; r < pd->neighbours; r++) {
        double mr = st->dist[r], c = pd->core[st->rows[r]];
        if (c > mr) mr = c;
        if (core > mr) mr = core;
        if (mr < best) best = mr, *nn = st->rows[r];
    }
    *lambda = best > 0 ? 1.0 / best : DBL_MAX;
    *nearest = st->dist[0];
}

typedef enum { PREDICT_LABELS, PREDICT_SCORES, PREDICT_MEMBERSHIP } predict_kind;

typedef struct predict_job {
    const grove_hdbscan_model *m;
    const grove__prediction *pd;
    predict_kind kind;
    int64_t *labels;
    double *values; /* probabilities, scores or membership rows */
} predict_job;

static void predict_label(const predict_job *job, query_state *st, size_t i)
{
    const grove__prediction *pd = job->pd;
    const grove__condensed *t = &job->m->tree;
    int64_t label = -1;
    double prob = 0;
    if (pd->k > 1) {
        size_t nn;
        double lambda, nearest;
        nearest_neighbour(pd, st, &nn, &lambda, &nearest);
        size_t row = job->m->point_row[nn], c = t->parent[row] - t->n;
        if (t->lambda[row] > lambda)
            while (c > 0 && pd->birth[c] >= lambda) c = pd->up[c];
        label = pd->label[c];
        if (label >= 0) {
            double max_lambda = pd->label_max[c];
            prob = max_lambda > 0 ? (lambda < max_lambda ? lambda : max_lambda) / max_lambda : 1;
        }
    }
    job->labels[i] = label;
    if (job->values) job->values[i] = prob;
}

static void predict_score(const predict_job *job, query_state *st, size_t i)
{
    const grove__prediction *pd = job->pd;
    const grove__condensed *t = &job->m->tree;
    if (pd->k <= 1) {
        job->values[i] = 1;
        return;
    }
    size_t nn;
    double lambda, nearest;
    nearest_neighbour(pd, st, &nn, &lambda, &nearest);
    size_t row = job->m->point_row[nn];
    /* A query on a training point takes that point's own lambda. */
    if (nearest == 0) lambda = t->lambda[row];
    double max_lambda = pd->subtree_max[t->parent[row] - t->n];
    /* Beside exact duplicates (infinite lambdas) the library's quotient is
     * NaN: its limit, as in the model's own scores (labels.c), is 0 for a
     * query as dense (an infinite lambda, or the library's 1 / 0, the
     * largest double), else 1. */
    if (isinf(max_lambda)) job->values[i] = lambda >= DBL_MAX ? 0 : 1;
    else job->values[i] = max_lambda > 0 ? (max_lambda - lambda) / max_lambda : 0;
}

/* The library's max_lambda / 1e-8 where the merge height reaches
 * max_lambda: 1e-8 is in the data's lambda units, so the quotient is
 * formed there (1e-8 in the model's units can underflow); where the
 * library's own lambdas would overflow (data scaled for their range) it
 * saturates at the largest double instead of becoming infinite. */
static double guarded(const grove__prediction *pd, double max_lambda)
{
    double q = max_lambda / 1e-8;
    return isfinite(q) && pd->exponent ? fmin(ldexp(q, -pd->exponent), DBL_MAX) : q;
}

/* The largest of x[0 .. k) ignoring NaN (NaN when all are), and the
 * first index of the largest. */
static double nan_max(const double *x, size_t k)
{
    double best = (double)NAN;
    for (size_t c = 0; c < k; c++)
        if (x[c] > best || (isnan(best) && !isnan(x[c]))) best = x[c];
    return best;
}

static void predict_membership(const predict_job *job, query_state *st, size_t i)
{
    const grove__prediction *pd = job->pd;
    const grove__condensed *t = &job->m->tree;
    size_t k = pd->clusters, nn;
    double lambda, nearest, *out = job->values + i * k, *outlier = st->a, *height = st->b;
    nearest_neighbour(pd, st, &nn, &lambda, &nearest);
    /* The library's 1 / 0 is the largest double, which leaves
     * prob_in_some_cluster 0 (and the rest NaN) beside a cluster of exact
     * duplicates, whose lambdas are infinite: take 1 / 0 as infinite,
     * that cluster's own (grove__lambda_ratio). */
    if (lambda == DBL_MAX) lambda = (double)INFINITY;
    size_t row = job->m->point_row[nn], cluster = t->parent[row] - t->n;
    if (t->lambda[row] <= lambda) lambda = t->lambda[row];
    grove__distance_vector(pd, st->q, out, st->search);
    /* outlier_membership_vector: the library passes lambda as a float. */
    double max_lambda = pd->max_lambda[cluster];
    double lambda32 = ldexp((double)(float)ldexp(lambda, pd->float_scale), -pd->float_scale);
    for (size_t c = 0; c < k; c++) {
        double denominator = max_lambda - grove__merge_height(pd, cluster, pd->prediction_cluster[c], lambda32);
        outlier[c] = denominator > 0 ? grove__lambda_ratio(max_lambda, denominator) : guarded(pd, max_lambda);
    }
    /* An infinite top (the query's own cluster of duplicates) weighs 1. */
    double top = nan_max(outlier, k);
    for (size_t c = 0; c < k; c++) outlier[c] = exp(outlier[c] == top ? 0 : outlier[c] - top);
    double sum = grove__pairwise_sum(outlier, k);
    for (size_t c = 0; c < k; c++) {
        outlier[c] /= sum;
        out[c] = sqrt(out[c]) * (outlier[c] * outlier[c]);
    }
    sum = grove__pairwise_sum(out, k);
    for (size_t c = 0; c < k; c++) out[c] /= sum;
    /* prob_in_some_cluster, with lambda in double. */
    size_t best = 0;
    for (size_t c = 0; c < k; c++) {
        height[c] = grove__merge_height(pd, cluster, pd->prediction_cluster[c], lambda);
        if (height[c] > height[best]) best = c;
    }
    double nearest_max = pd->max_lambda[pd->prediction_cluster[best]];
    double prob = grove__lambda_ratio(height[best], (nearest_max > lambda ? nearest_max : lambda) + pd->small_lambda);
    for (size_t c = 0; c < k; c++) out[c] *= prob;
}

/* The queries in an order that keeps consecutive ones near each other,
 * so consecutive searches walk the same part of the index (row order
 * jumps all over it): each query's leaf of the training index, reached by
 * always stepping to the nearer child, then a radix sort by leaf. NULL
 * (row order) beyond 2^32 queries. GROVE_CANCELLED when the options'
 * cancel flag is seen. */
static grove_status query_order(const grove__prediction *pd, grove_points queries, int threads,
                                const grove_options *options, const char *who, uint32_t **out)
{
    size_t nq = queries.n, d = pd->tree.d, stride = grove__points_stride(queries);
    *out = NULL;
    if (nq > UINT32_MAX) return GROVE_OK;
    uint64_t *key = grove__malloc(nq * sizeof *key, "HDBSCAN query order");
    uint32_t *order = grove__malloc(nq * sizeof *order, "HDBSCAN query order");
    double *q = grove__malloc((size_t)threads * d * sizeof *q, "HDBSCAN query order");
    grove_status s = key && order && q ? GROVE_OK : GROVE_OUT_OF_MEMORY;
    int stopped = 0;
    if (s == GROVE_OK) {
        const grove__node *node = pd->tree.node;
        const double *box = pd->tree.box;
#pragma omp parallel num_threads(threads) reduction(| : stopped)
        {
            int t, team;
            grove__team_member(&t, &team);
            double *mine = q + (size_t)t * d;
#pragma omp for schedule(static)
            for (size_t i = 0; i < nq; i++) {
                if (stopped || (stopped = grove__cancelled(options))) continue;
                for (size_t j = 0; j < d; j++) mine[j] = ldexp(grove__coord(queries, stride, i, j), -pd->exponent);
                uint32_t at = 0;
                while (node[at].right) {
                    uint32_t l = at + 1, r = node[at].right;
                    at = box_dist2_f64(box + (size_t)l * 2 * d, mine, d) <= box_dist2_f64(box + (size_t)r * 2 * d, mine, d)
                             ? l
                             : r;
                }
                key[i] = at;
                order[i] = (uint32_t)i;
            }
        }
        s = stopped ? grove__fail(GROVE_CANCELLED, "%s: cancelled", who) : grove__radix_sort_u64(key, order, nq, threads);
    }
    grove__free(key);
    grove__free(q);
    if (s == GROVE_OK) *out = order;
    else grove__free(order);
    return s;
}

/* Validate the queries, then run one kind of prediction over them. */
static grove_status run(const grove_hdbscan_model *m, grove_points queries, predict_kind kind, int64_t *labels,
                        double *values, const grove_options *options, const char *who)
{
    grove__clear_error();
    const grove__prediction *pd;
    grove_status s = grove__prediction_of(m, who, &pd);
    double magnitude = 0;
    if (s == GROVE_OK) s = grove__points_validate_range(queries, grove__options(options).threads, &magnitude);
    if (s != GROVE_OK) return s;
    size_t nq = queries.n;
    if (nq > 0 && queries.d != m->d)
        return grove__fail(GROVE_INVALID_ARGUMENT, "%s: the queries have %zu dimensions, the model %zu", who,
                           queries.d, m->d);
    if (!grove__range_fits(magnitude, pd->exponent, m->d, GROVE_FLOAT64))
        return grove__fail(GROVE_INVALID_ARGUMENT,
                           "%s: query coordinates up to %g are beyond the range of the model's points: their "
                           "squared distances could overflow",
                           who, magnitude);
    if (nq == 0 || (kind == PREDICT_MEMBERSHIP && pd->clusters == 0)) return GROVE_OK;
    if ((kind == PREDICT_LABELS && !labels) || (kind != PREDICT_LABELS && !values))
        return grove__fail(GROVE_INVALID_ARGUMENT, "%s: output is NULL", who);
    int threads = grove__predict_threads(options, nq);
    size_t per = state_bytes(pd), bytes;
    if (!grove__mul_size(per, (size_t)threads, &bytes))
        return grove__fail(GROVE_TOO_LARGE, "%s: working memory overflows", who);
    uint32_t *order;
    s = query_order(pd, queries, threads, options, who, &order);
    if (s != GROVE_OK) return s;
    char *block = grove__malloc(bytes, "HDBSCAN prediction");
    if (!block) {
        grove__free(order);
        return GROVE_OUT_OF_MEMORY;
    }
    predict_job job = {m, pd, kind, labels, values};
    size_t stride = grove__points_stride(queries), d = m->d;
    int stopped = 0;
#pragma omp parallel num_threads(threads) reduction(| : stopped)
    {
        int t, team;
        grove__team_member(&t, &team);
        query_state st = state_at(pd, block + (size_t)t * per);
#pragma omp for schedule(dynamic, 16)
        for (size_t at = 0; at < nq; at++) {
            /* One read of the cancel flag per query: millions take seconds. */
            if (stopped || (stopped = grove__cancelled(options))) continue;
            size_t i = order ? order[at] : at;
            for (size_t j = 0; j < d; j++) st.q[j] = ldexp(grove__coord(queries, stride, i, j), -pd->exponent);
            if (kind == PREDICT_LABELS) predict_label(&job, &st, i);
            else if (kind == PREDICT_SCORES) predict_score(&job, &st, i);
            else predict_membership(&job, &st, i);
        }
    }
    grove__free(block);
    grove__free(order);
    return stopped ? grove__fail(GROVE_CANCELLED, "%s: cancelled", who) : GROVE_OK;
}

grove_status grove_hdbscan_approximate_predict(const grove_hdbscan_model *m, grove_points queries, int64_t *labels,
                                               double *probabilities, const grove_options *options)
{
    return run(m, queries, PREDICT_LABELS, labels, probabilities, options, "HDBSCAN approximate_predict");
}

grove_status grove_hdbscan_approximate_predict_scores(const grove_hdbscan_model *m, grove_points queries,
                                                      double *scores, const grove_options *options)
{
    return run(m, queries, PREDICT_SCORES, NULL, scores, options, "HDBSCAN approximate_predict_scores");
}

grove_status grove_hdbscan_membership_vector(const grove_hdbscan_model *m, grove_points queries, double *membership,
                                             const grove_options *options)
{
    return run(m, queries, PREDICT_MEMBERSHIP, NULL, membership, options, "HDBSCAN membership_vector");
}
