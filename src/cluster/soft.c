/* all_points_membership_vectors, as the `hdbscan` library computes it
 * (all_points_dist_membership_vector, all_points_outlier_membership_vector,
 * all_points_prob_in_some_cluster), streamed over the training points with
 * the output as the only large buffer: a first pass writes each point's
 * per-cluster scores exp(-(max lambda / merge height)) and finds their
 * largest value, which the library's softmax subtracts over the whole
 * matrix; a second pass turns each row into its final values. */
#include "predict_internal.h"

#include <math.h>

/* What pass 2 needs about a point: its cluster and lambda. */
static void point_place(const grove_hdbscan_model *m, size_t row, size_t *cluster, double *lambda)
{
    size_t r = m->point_row[row];
    *cluster = m->tree.parent[r] - m->n;
    *lambda = m->tree.lambda[r];
}

/* Pass 1 for one point: scores into out, returns their NaN-ignoring max. */
static double scores(const grove_hdbscan_model *m, const grove__prediction *pd, size_t row, double *out)
{
    size_t cluster, k = pd->clusters;
    double lambda, top = (double)NAN;
    point_place(m, row, &cluster, &lambda);
    double max_lambda = pd->max_lambda[cluster] + pd->small_lambda;
    for (size_t c = 0; c < k; c++) {
        double height = grove__merge_height(pd, cluster, pd->prediction_cluster[c], lambda);
        out[c] = exp(-grove__lambda_ratio(max_lambda, height));
        if (out[c] > top || (isnan(top) && !isnan(out[c]))) top = out[c];
    }
    return top;
}

/* Pass 2 for one point at tree position p. */
static void finish_row(const grove_hdbscan_model *m, const grove__prediction *pd, size_t p, double top, double *out,
                       double *dist, void *scratch)
{
    size_t k = pd->clusters, row = pd->tree.perm[p], cluster;
    double lambda, *v = out + row * k;
    point_place(m, row, &cluster, &lambda);
    for (size_t c = 0; c < k; c++) v[c] = exp(v[c] - top);
    double sum = grove__pairwise_sum(v, k);
    for (size_t c = 0; c < k; c++) v[c] /= sum;
    grove__distance_vector(pd, (const double *)pd->tree.x + p * pd->tree.d, dist, scratch);
    for (size_t c = 0; c < k; c++) v[c] = dist[c] * v[c];
    sum = grove__pairwise_sum(v, k);
    size_t best = 0;
    double best_height = 0;
    for (size_t c = 0; c < k; c++) {
        double h = grove__merge_height(pd, cluster, pd->prediction_cluster[c], lambda);
        if (c == 0 || h > best_height) best = c, best_height = h;
    }
    double nearest_max = pd->max_lambda[pd->prediction_cluster[best]];
    double prob = grove__lambda_ratio(best_height, lambda > nearest_max ? lambda : nearest_max);
    for (size_t c = 0; c < k; c++) v[c] = v[c] / sum * prob;
}

grove_status grove_hdbscan_all_points_membership_vectors(const grove_hdbscan_model *m, double *membership,
                                                         const grove_options *options)
{
    grove__clear_error();
    const char *who = "HDBSCAN all_points_membership_vectors";
    const grove__prediction *pd;
    grove_status s = grove__prediction_of(m, who, &pd);
    if (s != GROVE_OK) return s;
    size_t n = m->n, k = pd->clusters;
    if (k == 0) return GROVE_OK;
    if (!membership) return grove__fail(GROVE_INVALID_ARGUMENT, "%s: membership is NULL", who);
    int threads = grove__predict_threads(options, n);
    size_t per = k * sizeof(double) + (pd->scratch_bytes + 7) / 8 * 8, bytes;
    if (!grove__mul_size(per, (size_t)threads + 1, &bytes))
        return grove__fail(GROVE_TOO_LARGE, "%s: working memory overflows", who);
    char *block = grove__malloc(bytes, "HDBSCAN membership vectors");
    if (!block) return GROVE_OUT_OF_MEMORY;
    /* Per-thread maxima after the per-thread scratch. */
    double *tops = (double *)(void *)(block + (size_t)threads * per);
    for (int t = 0; t < threads; t++) tops[t] = (double)NAN;
#pragma omp parallel num_threads(threads)
    {
        int t, team;
        grove__team_member(&t, &team);
        double top = (double)NAN;
#pragma omp for schedule(static)
        for (size_t row = 0; row < n; row++) {
            double v = scores(m, pd, row, membership + row * k);
            if (v > top || (isnan(top) && !isnan(v))) top = v;
        }
        tops[t] = top;
    }
    double top = (double)NAN;
    for (int t = 0; t < threads; t++)
        if (tops[t] > top || (isnan(top) && !isnan(tops[t]))) top = tops[t];
    if (grove__cancelled(options)) s = grove__fail(GROVE_CANCELLED, "%s: cancelled", who);
    if (s == GROVE_OK) {
#pragma omp parallel num_threads(threads)
        {
            int t, team;
            grove__team_member(&t, &team);
            char *mine = block + (size_t)t * per;
#pragma omp for schedule(dynamic, 64)
            for (size_t p = 0; p < n; p++)
                finish_row(m, pd, p, top, membership, (double *)(void *)mine, mine + k * sizeof(double));
        }
    }
    grove__free(block);
    return s;
}
