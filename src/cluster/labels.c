/* Per-point results from the condensed tree and the selected clusters, as
 * the `hdbscan` library's do_labelling, get_probabilities, outlier_scores
 * and get_stability_scores compute them; and NumPy's pairwise sum. */
#include "hdbscan_internal.h"

#include <math.h>

grove_status grove__point_results(const grove__condensed *c, const uint8_t *selected, const grove_hdbscan_params *p,
                                  int64_t *labels, double *probabilities, double *outlier_scores, size_t *clusters)
{
    size_t n = c->n, k = c->clusters;
    size_t *up = grove__malloc(2 * k * sizeof *up, "HDBSCAN labels");
    int64_t *label_of = grove__malloc(k * sizeof *label_of, "HDBSCAN labels");
    double *death = grove__calloc(3 * k, sizeof *death, "HDBSCAN labels");
    if (!up || !label_of || !death) {
        grove__free(up);
        grove__free(label_of);
        grove__free(death);
        return GROVE_OUT_OF_MEMORY;
    }
    double *subtree_death = death + k, *birth = death + 2 * k;
    size_t *owner = up + k; /* the selected cluster at or above each cluster */
    up[0] = 0;
    for (size_t r = 0; r < c->rows; r++) {
        size_t parent = c->parent[r] - n;
        if (c->child[r] >= n) up[c->child[r] - n] = parent, birth[c->child[r] - n] = c->lambda[r];
        if (c->lambda[r] > death[parent]) death[parent] = c->lambda[r];
    }
    /* Each cluster's label: its own if selected, else its nearest selected
     * ancestor's (parents have smaller ids), else noise; owner follows the
     * same rule (meaningful where the label is >= 0). */
    int64_t next = 0;
    for (size_t i = 0; i < k; i++) {
        label_of[i] = selected[i] ? next++ : i ? label_of[up[i]] : -1;
        owner[i] = selected[i] || !i ? i : owner[up[i]];
        subtree_death[i] = death[i];
    }
    for (size_t i = k; i-- > 1;)
        if (subtree_death[i] > subtree_death[up[i]]) subtree_death[up[i]] = subtree_death[i];
    if (clusters) *clusters = (size_t)next;
    /* The root as the one selected cluster keeps only its points that stay
     * to the end (or, with epsilon, that leave below it); beside other
     * clusters its own points are noise. */
    int root_only = selected[0] && next == 1 && p->allow_single_cluster;
    for (size_t r = 0; r < c->rows; r++) {
        size_t pt = c->child[r];
        if (pt >= n) continue;
        size_t parent = c->parent[r] - n, at = owner[parent];
        double lambda = c->lambda[r];
        int64_t label = label_of[parent];
        if (label >= 0 && at == 0) {
            int stays = p->epsilon != 0 ? lambda >= 1.0 / p->epsilon : lambda >= death[0];
            if (!root_only || !stays) label = -1;
        } else if (label >= 0 && p->match_reference_implementation && !(lambda > birth[at])) {
            label = -1;
        }
        labels[pt] = label;
        if (probabilities) {
            double prob = 0;
            if (label >= 0) {
                double max_lambda = death[at];
                if (max_lambda == 0 || !isfinite(lambda)) prob = 1;
                else prob = (lambda < max_lambda ? lambda : max_lambda) / max_lambda;
            }
            probabilities[pt] = prob;
        }
        if (outlier_scores) {
            double top = subtree_death[parent], score = 0;
            /* An infinite top (duplicate points) makes the library's
             * (top - lambda) / top NaN; its limit is 1. */
            if (top != 0 && isfinite(lambda)) score = isfinite(top) ? (top - lambda) / top : 1;
            outlier_scores[pt] = score;
        }
    }
    grove__free(up);
    grove__free(label_of);
    grove__free(death);
    return GROVE_OK;
}

void grove__persistence_scores(const grove__condensed *c, const uint8_t *selected, const double *stability,
                               const int64_t *labels, size_t clusters, double *out)
{
    double max_lambda = 0;
    for (size_t r = 0; r < c->rows; r++)
        if (c->lambda[r] > max_lambda) max_lambda = c->lambda[r];
    /* out[] counts the points per label first. */
    for (size_t j = 0; j < clusters; j++) out[j] = 0;
    for (size_t i = 0; i < c->n; i++)
        if (labels[i] >= 0) out[labels[i]] += 1;
    for (size_t i = 0, j = 0; i < c->clusters; i++) {
        if (!selected[i]) continue;
        double size = out[j];
        out[j++] = isinf(max_lambda) || max_lambda == 0 || size == 0 ? 1.0 : stability[i] / (size * max_lambda);
    }
}

double grove__pairwise_sum(const double *x, size_t n)
{
    if (n < 8) {
        double s = 0;
        for (size_t i = 0; i < n; i++) s += x[i];
        return s;
    }
    if (n <= 128) {
        double r[8];
        for (int j = 0; j < 8; j++) r[j] = x[j];
        size_t i = 8;
        for (; i < n - n % 8; i += 8)
            for (int j = 0; j < 8; j++) r[j] += x[i + j];
        double s = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for (; i < n; i++) s += x[i];
        return s;
    }
    size_t half = n / 2;
    half -= half % 8;
    return grove__pairwise_sum(x, half) + grove__pairwise_sum(x + half, n - half);
}
