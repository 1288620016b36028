/* The tests' reference HDBSCAN* (hdbscan_ref.h). */
#include "hdbscan_ref.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

double ref_mr_weight(const double *x, size_t d, const double *core2, size_t a, size_t b)
{
    double s = 0;
    for (size_t j = 0; j < d; j++) {
        double t = x[a * d + j] - x[b * d + j];
        s += t * t;
    }
    s = s > core2[a] ? s : core2[a];
    s = s > core2[b] ? s : core2[b];
    return sqrt(s);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void ref_core_distances(const double *x, size_t n, size_t d, size_t k, double *core2)
{
    double all[REF_MAXN];
    for (size_t i = 0; i < n; i++) {
        for (size_t q = 0; q < n; q++) {
            double s = 0;
            for (size_t j = 0; j < d; j++) {
                double t = x[i * d + j] - x[q * d + j];
                s += t * t;
            }
            all[q] = s;
        }
        qsort(all, n, sizeof *all, cmp_double);
        core2[i] = all[k - 1];
    }
}

/* Components of `set` in the graph of weights < w, as masks. */
static size_t components(const double *w, size_t n, uint64_t set, double level, uint64_t *out)
{
    size_t count = 0;
    while (set) {
        uint64_t comp = set & (~set + 1), frontier = comp;
        while (frontier) {
            size_t a = (size_t)__builtin_ctzll(frontier);
            frontier &= frontier - 1;
            for (size_t b = 0; b < n; b++)
                if ((set >> b & 1) && !(comp >> b & 1) && w[a * n + b] < level)
                    comp |= 1ull << b, frontier |= 1ull << b;
        }
        out[count++] = comp;
        set &= ~comp;
    }
    return count;
}

static void leave(ref_tree *t, uint64_t points, size_t cluster, double lambda)
{
    for (size_t p = 0; p < t->n; p++)
        if (points >> p & 1) {
            t->point_cluster[p] = cluster;
            t->point_lambda[p] = lambda;
            t->stability[cluster] += lambda - t->birth[cluster];
            if (lambda > t->death[cluster]) t->death[cluster] = lambda;
        }
}

/* rank[p]: when Prim's algorithm on the all-pairs weights, started at
 * point 0, adds point p. */
static void prim_ranks(const double *w, size_t n, size_t *rank)
{
    double best[REF_MAXN];
    uint8_t in[REF_MAXN] = {1};
    rank[0] = 0;
    for (size_t i = 0; i < n; i++) best[i] = w[i];
    for (size_t r = 1; r < n; r++) {
        size_t pick = n;
        for (size_t i = 0; i < n; i++)
            if (!in[i] && (pick == n || best[i] < best[pick])) pick = i;
        rank[pick] = r;
        in[pick] = 1;
        for (size_t i = 0; i < n; i++)
            if (!in[i] && w[pick * n + i] < best[i]) best[i] = w[pick * n + i];
    }
}

/* The first rank among a set's points. */
static size_t first_rank(const size_t *rank, uint64_t set)
{
    size_t first = SIZE_MAX;
    for (; set; set &= set - 1)
        if (rank[__builtin_ctzll(set)] < first) first = rank[__builtin_ctzll(set)];
    return first;
}

/* t->number from t->depth and t->path: the rank of each cluster's (depth,
 * path). */
static void number_clusters(ref_tree *t)
{
    for (size_t c = 0; c < t->clusters; c++) {
        t->number[c] = 0;
        for (size_t o = 0; o < t->clusters; o++)
            t->number[c] += t->depth[o] < t->depth[c] || (t->depth[o] == t->depth[c] && t->path[o] < t->path[c]);
    }
}

/* The condensed tree by thresholding at every distinct weight, top down. */
void ref_tree_build(const double *w, size_t n, size_t mcs, ref_tree *t)
{
    memset(t, 0, sizeof *t);
    t->n = n;
    size_t rank[REF_MAXN], node_depth[REF_MAXN] = {0};
    uint64_t node_path[REF_MAXN] = {0}; /* per cluster: its node now */
    prim_ranks(w, n, rank);
    double *levels = malloc(n * n * sizeof *levels);
    memcpy(levels, w, n * n * sizeof *levels);
    qsort(levels, n * n, sizeof *levels, cmp_double);
    uint64_t alive = 1;
    t->members[0] = t->at_birth[0] = n == 64 ? ~0ull : (1ull << n) - 1;
    t->clusters = 1;
    for (size_t li = n * n; li-- > 0;) {
        double level = levels[li];
        if (li + 1 < n * n && levels[li + 1] == level) continue;
        double lambda = level > 0 ? 1.0 / level : INFINITY;
        uint64_t now = alive;
        while (now) {
            size_t c = (size_t)__builtin_ctzll(now);
            now &= now - 1;
            uint64_t parts[REF_MAXN];
            size_t count = components(w, n, t->members[c], level, parts), big = 0;
            if (count == 1) continue;
            for (size_t i = 0; i < count; i++) big += (size_t)__builtin_popcountll(parts[i]) >= mcs;
            size_t left = 0; /* the part Prim's algorithm enters first */
            for (size_t i = 1; i < count; i++)
                if (first_rank(rank, parts[i]) < first_rank(rank, parts[left])) left = i;
            size_t depth = node_depth[c] + 1;
            for (size_t i = 0; i < count; i++) {
                size_t size = (size_t)__builtin_popcountll(parts[i]);
                uint64_t path = node_path[c] << 1 | (i != left);
                if (size < mcs) {
                    leave(t, parts[i], c, lambda);
                } else if (big >= 2) {
                    size_t child = t->clusters++;
                    t->members[child] = t->at_birth[child] = parts[i];
                    t->parent[child] = c;
                    t->birth[child] = lambda;
                    t->size[child] = size;
                    t->depth[child] = node_depth[child] = depth;
                    t->path[child] = node_path[child] = path;
                    t->stability[c] += (lambda - t->birth[c]) * (double)size;
                    if (lambda > t->death[c]) t->death[c] = lambda;
                    alive |= 1ull << child;
                } else {
                    t->members[c] = parts[i];
                    node_depth[c] = depth;
                    node_path[c] = path;
                }
            }
            if (big != 1) alive &= ~(1ull << c);
        }
    }
    number_clusters(t);
    free(levels);
}

/* Excess of mass (root excluded) or leaves: selected[c]. */
static double ref_select_eom(ref_tree *t, size_t c, uint8_t *selected)
{
    double below = 0;
    int has_children = 0;
    for (size_t ch = c + 1; ch < t->clusters; ch++)
        if (t->parent[ch] == c) below += ref_select_eom(t, ch, selected), has_children = 1;
    if (c == 0) return below;
    double own = t->stability[c];
    if (has_children && fabs(below - own) <= 1e-9 * (fabs(own) + fabs(below))) t->near_tie = 1;
    if (has_children && below > own) return below;
    for (size_t ch = c + 1; ch < t->clusters; ch++) {
        /* Deselect everything below c. */
        size_t a = ch;
        while (a != 0 && a != c) a = t->parent[a];
        if (a == c) selected[ch] = 0;
    }
    selected[c] = 1;
    return own;
}

void ref_results(ref_tree *t, grove_hdbscan_selection sel, uint8_t *chosen, int64_t *labels, double *prob,
                 double *score)
{
    uint8_t selected[REF_MAXN] = {0};
    if (sel == GROVE_HDBSCAN_EOM) {
        ref_select_eom(t, 0, selected);
    } else {
        for (size_t c = 1; c < t->clusters; c++) {
            selected[c] = 1;
            for (size_t ch = 1; ch < t->clusters; ch++)
                if (t->parent[ch] == c) selected[c] = 0;
        }
    }
    double top[REF_MAXN];
    for (size_t c = 0; c < t->clusters; c++) top[c] = t->death[c];
    for (size_t c = t->clusters; c-- > 1;)
        if (top[c] > top[t->parent[c]]) top[t->parent[c]] = top[c];
    int64_t label_of[REF_MAXN];
    size_t owner[REF_MAXN];
    for (size_t c = 0; c < t->clusters; c++) label_of[c] = -1;
    for (size_t number = 0, next = 0; number < t->clusters; number++)
        for (size_t c = 0; c < t->clusters; c++)
            if (t->number[c] == number && selected[c]) label_of[c] = (int64_t)next++;
    for (size_t c = 0; c < t->clusters; c++) {
        owner[c] = c;
        for (size_t a = c; a != 0 && label_of[c] < 0; a = t->parent[a])
            if (selected[t->parent[a]]) label_of[c] = label_of[t->parent[a]], owner[c] = t->parent[a];
    }
    for (size_t p = 0; p < t->n; p++) {
        size_t c = t->point_cluster[p];
        double lambda = t->point_lambda[p], death = t->death[owner[c]], high = top[c];
        labels[p] = label_of[c];
        prob[p] = labels[p] < 0 ? 0 : death == 0 || !isfinite(lambda) ? 1 : fmin(lambda, death) / death;
        score[p] = high == 0 || !isfinite(lambda) ? 0 : isfinite(high) ? (high - lambda) / high : 1;
    }
    if (chosen) memcpy(chosen, selected, t->clusters);
}

int ref_same_partition(const int64_t *a, const int64_t *b, size_t n)
{
    int64_t map[REF_MAXN], back[REF_MAXN];
    for (size_t i = 0; i < REF_MAXN; i++) map[i] = back[i] = -1;
    for (size_t i = 0; i < n; i++) {
        if ((a[i] < 0) != (b[i] < 0)) return 0;
        if (a[i] < 0) continue;
        if (map[a[i]] < 0 && back[b[i]] < 0) map[a[i]] = b[i], back[b[i]] = a[i];
        if (map[a[i]] != b[i]) return 0;
    }
    return 1;
}

double *ref_weights(const double *x, size_t n, size_t d, size_t k)
{
    double core2[REF_MAXN], *w = malloc(n * n * sizeof *w);
    ref_core_distances(x, n, d, k, core2);
    for (size_t a = 0; a < n; a++)
        for (size_t b = 0; b < n; b++) w[a * n + b] = ref_mr_weight(x, d, core2, a, b);
    return w;
}
