/* The HDBSCAN* entry points: parameters, the model's constructors (the
 * mutual-reachability MST, then grove__model_fit) and grove_hdbscan /
 * grove_hdbscan_from_mst, which fit a model and copy its labels out. */
#include "hdbscan_internal.h"
#include "../emst/emst.h"

#include <float.h>
#include <math.h>

void grove_hdbscan_params_init(grove_hdbscan_params *params)
{
    if (!params) return;
    memset(params, 0, sizeof *params);
    params->min_cluster_size = 5;
    params->min_samples = 0;
    params->selection = GROVE_HDBSCAN_EOM;
    params->epsilon = 0;
    params->allow_single_cluster = 0;
    params->max_cluster_size = 0;
    params->epsilon_max = INFINITY;
    params->persistence = 0;
    params->alpha = 1;
    params->match_reference_implementation = 0;
    params->ties = GROVE_HDBSCAN_TIES_ORDERED;
    params->prediction_data = 0;
}

static grove_status check_params(const grove_hdbscan_params *p)
{
    if (p->min_cluster_size < 2)
        return grove__fail(GROVE_INVALID_ARGUMENT, "HDBSCAN: min_cluster_size must be at least 2, got %zu",
                           p->min_cluster_size);
    if (p->selection != GROVE_HDBSCAN_EOM && p->selection != GROVE_HDBSCAN_LEAF)
        return grove__fail(GROVE_INVALID_ARGUMENT, "HDBSCAN: unknown selection method %d", (int)p->selection);
    if (!(p->epsilon >= 0) || !isfinite(p->epsilon))
        return grove__fail(GROVE_INVALID_ARGUMENT, "HDBSCAN: epsilon must be finite and >= 0, got %g", p->epsilon);
    if (!(p->epsilon_max >= p->epsilon))
        return grove__fail(GROVE_INVALID_ARGUMENT, "HDBSCAN: epsilon_max must be >= epsilon (%g), got %g", p->epsilon,
                           p->epsilon_max);
    if (!(p->persistence >= 0) || !isfinite(p->persistence))
        return grove__fail(GROVE_INVALID_ARGUMENT, "HDBSCAN: persistence must be finite and >= 0, got %g",
                           p->persistence);
    if (!(p->alpha > 0) || !isfinite(p->alpha))
        return grove__fail(GROVE_INVALID_ARGUMENT, "HDBSCAN: alpha must be finite and > 0, got %g", p->alpha);
    if (p->ties != GROVE_HDBSCAN_TIES_ORDERED && p->ties != GROVE_HDBSCAN_TIES_SIMULTANEOUS)
        return grove__fail(GROVE_INVALID_ARGUMENT, "HDBSCAN: unknown ties mode %d", (int)p->ties);
    return GROVE_OK;
}

/* Defaults for NULL, then the checks. */
static grove_status resolve_params(const grove_hdbscan_params *params, grove_hdbscan_params *p)
{
    grove_hdbscan_params_init(p);
    if (params) *p = *params;
    return check_params(p);
}

/* The model handle, freed on failure. */
static grove_status finish(grove_status s, grove_hdbscan_model *m, grove_hdbscan_model **out)
{
    if (s != GROVE_OK) {
        grove_hdbscan_model_free(m);
        m = NULL;
    }
    *out = m;
    return s;
}

grove_status grove_hdbscan_model_create_from_mst(size_t n, const int64_t *edges, const double *weights,
                                                 const grove_hdbscan_params *params, const grove_options *options,
                                                 grove_hdbscan_model **out)
{
    grove__clear_error();
    if (!out) return grove__fail(GROVE_INVALID_ARGUMENT, "HDBSCAN: out is NULL");
    *out = NULL;
    grove_hdbscan_params p;
    grove_status s = resolve_params(params, &p);
    if (s != GROVE_OK) return s;
    if (n >= 2 && (!edges || !weights))
        return grove__fail(GROVE_INVALID_ARGUMENT, "HDBSCAN: edges or weights is NULL");
    p.alpha = 1;
    p.prediction_data = 0;
    grove_hdbscan_model *m;
    s = grove__model_new(n, 0, &p, &m);
    if (s != GROVE_OK || n < 2) return finish(s, m, out);
    int64_t *e = grove__malloc(2 * (n - 1) * sizeof *e, "HDBSCAN edges");
    double *w = grove__malloc((n - 1) * sizeof *w, "HDBSCAN edges");
    s = e && w ? grove__mst_sort(n, edges, weights, e, w) : GROVE_OUT_OF_MEMORY;
    if (s != GROVE_OK) {
        grove__free(e);
        grove__free(w);
        return finish(s, m, out);
    }
    return finish(grove__model_fit(m, e, w, NULL, options), m, out);
}

grove_status grove_hdbscan_model_create(grove_points points, const grove_hdbscan_params *params,
                                        const grove_options *options, grove_hdbscan_model **out)
{
    grove__clear_error();
    if (!out) return grove__fail(GROVE_INVALID_ARGUMENT, "HDBSCAN: out is NULL");
    *out = NULL;
    grove_hdbscan_params p;
    grove_status s = resolve_params(params, &p);
    double magnitude = 0;
    if (s == GROVE_OK) s = grove__points_validate_range(points, grove__options(options).threads, &magnitude);
    if (s != GROVE_OK) return s;
    size_t n = points.n, k = p.min_samples ? p.min_samples : p.min_cluster_size;
    if (n > 0 && k > n)
        return grove__fail(GROVE_INVALID_ARGUMENT, "HDBSCAN: min_samples = %zu exceeds the number of points n = %zu%s",
                           k, n, p.min_samples ? "" : " (it defaults to min_cluster_size)");
    p.min_samples = k;
    grove_hdbscan_model *m;
    s = grove__model_new(n, points.d, &p, &m);
    if (s != GROVE_OK || n < 2) return finish(s, m, out);
    size_t edges_bytes;
    if (!grove__mul_size(n - 1, 2 * sizeof(int64_t), &edges_bytes))
        return finish(grove__fail(GROVE_TOO_LARGE, "HDBSCAN: n = %zu overflows the address space", n), m, out);
    int64_t *e = grove__malloc(edges_bytes, "HDBSCAN MST edges");
    double *w = grove__malloc((n - 1) * sizeof *w, "HDBSCAN MST weights");
    /* match_reference_implementation: the library's core distances count
     * one neighbour fewer (but at least two, itself included). */
    size_t k_tree = p.match_reference_implementation && k > 2 ? k - 1 : k;
    s = e && w ? grove__emst_scaled(points, magnitude, k_tree, p.alpha, e, w, &m->exponent, options)
               : GROVE_OUT_OF_MEMORY;
    if (s == GROVE_OK && p.alpha != 1) {
        /* grove__emst_scaled's weights are alpha times the library's
         * max(core, core, distance / alpha); divided, the order can gain
         * ties, so it is restored. */
        for (size_t i = 0; i + 1 < n; i++) w[i] /= p.alpha;
        s = grove__mst_sort(n, e, w, e, w);
    }
    if (s != GROVE_OK) {
        grove__free(e);
        grove__free(w);
        return finish(s, m, out);
    }
    grove__progress(options, "hdbscan", 1.0);
    return finish(grove__model_fit(m, e, w, &points, options), m, out);
}

/* Copy a model's per-point results out and free it. */
static grove_status labels_out(grove_status s, grove_hdbscan_model *m, int64_t *labels, double *probabilities,
                               double *outlier_scores, size_t *clusters)
{
    if (s == GROVE_OK) {
        grove_hdbscan_model_labels(m, labels, probabilities, outlier_scores);
        if (clusters) *clusters = m->clusters;
    }
    grove_hdbscan_model_free(m);
    return s;
}

grove_status grove_hdbscan_from_mst(size_t n, const int64_t *edges, const double *weights,
                                    const grove_hdbscan_params *params, int64_t *labels, double *probabilities,
                                    double *outlier_scores, size_t *clusters)
{
    grove__clear_error();
    if (n > 0 && !labels) return grove__fail(GROVE_INVALID_ARGUMENT, "HDBSCAN: labels is NULL");
    grove_hdbscan_model *m = NULL;
    grove_status s = grove_hdbscan_model_create_from_mst(n, edges, weights, params, NULL, &m);
    return labels_out(s, m, labels, probabilities, outlier_scores, clusters);
}

grove_status grove_hdbscan(grove_points points, const grove_hdbscan_params *params, int64_t *labels,
                           double *probabilities, double *outlier_scores, size_t *clusters,
                           const grove_options *options)
{
    grove__clear_error();
    if (points.n > 0 && !labels) return grove__fail(GROVE_INVALID_ARGUMENT, "HDBSCAN: labels is NULL");
    grove_hdbscan_params p;
    grove_status s = resolve_params(params, &p);
    if (s != GROVE_OK) return s;
    p.prediction_data = 0;
    grove_hdbscan_model *m = NULL;
    s = grove_hdbscan_model_create(points, &p, options, &m);
    return labels_out(s, m, labels, probabilities, outlier_scores, clusters);
}
