/* relative_validity_: the `hdbscan` library's fast DBCV approximation from
 * the MST. Per cluster, its density sparseness (the largest MST edge inside
 * it) and its density separation (the smallest MST edge to another
 * cluster; when there is none, twice the largest MST edge, or with one
 * cluster twice the smallest edge to a noise point); the score is the sum
 * over clusters of size / n x (separation - sparseness) / max(both). */
#include "hdbscan_internal.h"

#include <math.h>

grove_status grove_hdbscan_model_relative_validity(const grove_hdbscan_model *m, double *score)
{
    grove__clear_error();
    if (!m || !score) return grove__fail(GROVE_INVALID_ARGUMENT, "HDBSCAN relative validity: model or score is NULL");
    size_t k = m->clusters, n = m->n;
    *score = 0;
    if (k == 0) return GROVE_OK;
    double *sparseness = grove__calloc(3 * k, sizeof *sparseness, "relative validity");
    if (!sparseness) return GROVE_OUT_OF_MEMORY;
    double *separation = sparseness + k, *size = separation + k;
    for (size_t c = 0; c < k; c++) separation[c] = INFINITY;
    for (size_t i = 0; i < n; i++)
        if (m->labels[i] >= 0) size[m->labels[i]] += 1;
    double max_distance = 0, outlier_separation = INFINITY;
    for (size_t e = 0; e + 1 < n; e++) {
        int64_t a = m->labels[m->edges[2 * e]], b = m->labels[m->edges[2 * e + 1]];
        double w = m->weights[e];
        if (w > max_distance) max_distance = w;
        if ((a < 0) != (b < 0)) {
            if (w < outlier_separation) outlier_separation = w;
        } else if (a >= 0 && a == b) {
            if (w > sparseness[a]) sparseness[a] = w;
        } else if (a >= 0) {
            if (w < separation[a]) separation[a] = w;
            if (w < separation[b]) separation[b] = w;
        }
    }
    if (outlier_separation == INFINITY) outlier_separation = max_distance;
    double correction = 2 * (k > 1 ? max_distance : outlier_separation);
    /* The terms, summed in NumPy's order (reusing `size`). */
    for (size_t c = 0; c < k; c++) {
        double sep = separation[c] == INFINITY ? correction : separation[c];
        double denom = sep > sparseness[c] ? sep : sparseness[c];
        size[c] = size[c] * ((sep - sparseness[c]) / denom) / (double)n;
    }
    *score = grove__pairwise_sum(size, k);
    grove__free(sparseness);
    return GROVE_OK;
}
