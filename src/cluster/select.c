/* Cluster selection on the condensed tree, as the `hdbscan` library's
 * compute_stability and get_clusters: excess of mass (a cluster is kept
 * when its stability is at least the sum of its children's, it has at most
 * max_cluster_size points and is born at a distance of at most
 * epsilon_max, computed bottom up, and no kept ancestor covers it) or the
 * leaves, then optionally cluster_selection_epsilon (a selected cluster
 * born below epsilon is replaced by its lowest ancestor born above it).
 * Cluster ids follow the breadth-first numbering, so a parent's index is
 * below its children's; candidates are visited in ascending id. */
#include "hdbscan_internal.h"

#include <math.h>

typedef struct sel_ctx {
    size_t k;             /* clusters; index 0 is the root */
    size_t *up;           /* parent index (root: 0) */
    double *birth;        /* lambda at which the cluster appears (root: 0) */
    double *stability;
    size_t *size;         /* points at birth (root: its children's sum) */
    double *born_at;      /* distance at birth, 1 / birth (root: the largest 1 / lambda) */
    size_t *first, *next; /* children lists; k = none */
    size_t *stack;
} sel_ctx;

/* Set flag[j] = v for every cluster j strictly below i. */
static void mark_below(const sel_ctx *s, uint8_t *flag, size_t i, uint8_t v)
{
    size_t depth = 0;
    for (size_t c = s->first[i]; c < s->k; c = s->next[c]) s->stack[depth++] = c;
    while (depth) {
        size_t j = s->stack[--depth];
        flag[j] = v;
        for (size_t c = s->first[j]; c < s->k; c = s->next[c]) s->stack[depth++] = c;
    }
}

/* The library's traverse_upwards: the lowest ancestor born above epsilon
 * (a child of the root stays itself unless a single cluster is allowed). */
static size_t climb(const sel_ctx *s, size_t leaf, double epsilon, int allow_single)
{
    for (;;) {
        size_t parent = s->up[leaf];
        if (parent == 0) return allow_single ? 0 : leaf;
        if (1.0 / s->birth[parent] > epsilon) return parent;
        leaf = parent;
    }
}

/* The library's _epsilon_search_fast over the candidates. */
static void epsilon_search(const sel_ctx *s, const uint8_t *candidate, double epsilon, int allow_single,
                           uint8_t *result, uint8_t *processed)
{
    memset(result, 0, s->k);
    memset(processed, 0, s->k);
    for (size_t i = 0; i < s->k; i++) {
        if (!candidate[i]) continue;
        if (1.0 / s->birth[i] < epsilon) {
            if (processed[i]) continue;
            size_t e = climb(s, i, epsilon, allow_single);
            result[e] = 1;
            mark_below(s, processed, e, 1);
        } else {
            result[i] = 1;
        }
    }
}

/* Excess of mass: keep[i] bottom up, then selected = kept with no kept
 * ancestor (the root takes part only with allow_single). */
static void excess_of_mass(sel_ctx *s, const grove_hdbscan_params *p, uint8_t *keep, uint8_t *selected)
{
    size_t k = s->k, lowest = p->allow_single_cluster ? 0 : 1;
    size_t max_size = p->max_cluster_size ? p->max_cluster_size : SIZE_MAX;
    double *below = s->born_at + k; /* k sums of the children's stabilities */
    memset(below, 0, k * sizeof *below);
    memset(keep, 0, k);
    for (size_t i = k; i-- > lowest;) {
        if (below[i] > s->stability[i] || s->size[i] > max_size || s->born_at[i] > p->epsilon_max)
            s->stability[i] = below[i];
        else
            keep[i] = 1;
        if (i) below[s->up[i]] += s->stability[i];
    }
    /* covered[i]: some kept cluster at or above i (reuses `selected`). */
    for (size_t i = 0; i < k; i++) {
        int covered_above = i > 0 && (selected[s->up[i]] & 2);
        selected[i] = (uint8_t)((keep[i] && !covered_above) | ((keep[i] || covered_above) ? 2 : 0));
    }
    for (size_t i = 0; i < k; i++) selected[i] &= 1;
}

static void sel_free(sel_ctx *s, uint8_t *scratch)
{
    grove__free(s->up);
    grove__free(s->birth);
    grove__free(s->size);
    grove__free(s->born_at);
    grove__free(s->first);
    grove__free(scratch);
}

grove_status grove__select_clusters(const grove__condensed *c, const grove_hdbscan_params *p, uint8_t *selected,
                                    double *stability)
{
    size_t k = c->clusters, n = c->n;
    sel_ctx s = {k, NULL, NULL, stability, NULL, NULL, NULL, NULL, NULL};
    s.up = grove__malloc(k * sizeof *s.up, "cluster selection");
    s.birth = grove__malloc(k * sizeof *s.birth, "cluster selection");
    s.size = grove__calloc(k, sizeof *s.size, "cluster selection");
    s.born_at = grove__malloc(2 * k * sizeof *s.born_at, "cluster selection");
    s.first = grove__malloc(3 * k * sizeof *s.first, "cluster selection");
    uint8_t *scratch = grove__malloc(2 * k, "cluster selection");
    if (!s.up || !s.birth || !s.size || !s.born_at || !s.first || !scratch) {
        sel_free(&s, scratch);
        return GROVE_OUT_OF_MEMORY;
    }
    s.next = s.first + k;
    s.stack = s.next + k;
    s.up[0] = 0;
    s.birth[0] = 0;
    s.born_at[0] = 0;
    memset(stability, 0, k * sizeof *stability);
    for (size_t i = 0; i < k; i++) s.first[i] = s.next[i] = k;
    /* Children lists in descending id order (built by prepending). */
    for (size_t r = c->rows; r-- > 0;)
        if (c->child[r] >= n) {
            size_t i = c->child[r] - n, up = c->parent[r] - n;
            s.up[i] = up;
            s.birth[i] = c->lambda[r];
            s.size[i] = c->child_size[r];
            s.born_at[i] = 1.0 / c->lambda[r];
            s.next[i] = s.first[up];
            s.first[up] = i;
            if (up == 0) s.size[0] += c->child_size[r];
        }
    for (size_t r = 0; r < c->rows; r++) {
        size_t up = c->parent[r] - n;
        stability[up] += (c->lambda[r] - s.birth[up]) * (double)c->child_size[r];
        if (1.0 / c->lambda[r] > s.born_at[0]) s.born_at[0] = 1.0 / c->lambda[r];
    }
    uint8_t *candidate = scratch, *processed = scratch + k;
    if (p->selection == GROVE_HDBSCAN_EOM) {
        excess_of_mass(&s, p, candidate, selected);
        size_t count = 0;
        for (size_t i = 0; i < k; i++) count += selected[i];
        /* The library skips epsilon when only the root is selected. */
        if (p->epsilon != 0 && k > 1 && !(count == 1 && selected[0])) {
            memcpy(candidate, selected, k);
            epsilon_search(&s, candidate, p->epsilon, p->allow_single_cluster, selected, processed);
        }
    } else {
        /* The leaves: clusters without child clusters; none when the root
         * has no children. */
        for (size_t i = 0; i < k; i++) candidate[i] = i > 0 && s.first[i] == k;
        if (p->epsilon != 0) epsilon_search(&s, candidate, p->epsilon, p->allow_single_cluster, selected, processed);
        else memcpy(selected, candidate, k);
    }
    sel_free(&s, scratch);
    return GROVE_OK;
}
