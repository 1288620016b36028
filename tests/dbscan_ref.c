/* scikit-learn's DBSCAN by brute force (dbscan_ref.h). */
#include "dbscan_ref.h"

#include <stdlib.h>

/* Neighbourhoods as an n x n bit matrix (within eps2 in the reference's
 * arithmetic), the core flags from the counts or the weights summed
 * exactly and rounded once (math.fsum's sum, which NumPy's sum approaches),
 * then scikit-learn's labelling loop. */
size_t dbscan_ref(const ref_set *s, double eps2, size_t min_samples, const double *weight, int64_t *labels,
                  uint8_t *core)
{
    size_t n = s->n;
    uint8_t *near = malloc(n * n + 1);
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j <= i; j++) near[i * n + j] = near[j * n + i] = join_ref_dist2(s, i, s, j) <= eps2;
    double *terms = malloc((n + 1) * sizeof *terms);
    for (size_t i = 0; i < n; i++) {
        size_t m = 0;
        for (size_t j = 0; j < n; j++)
            if (near[i * n + j]) terms[m++] = weight ? weight[j] : 1;
        core[i] = (weight ? test_fsum(terms, m) : (double)m) >= (double)min_samples;
        labels[i] = -1;
    }
    free(terms);
    size_t cap = n + 1, top = 0, *stack = malloc(cap * sizeof *stack);
    int64_t label = 0;
    for (size_t i0 = 0; i0 < n; i0++) {
        if (labels[i0] != -1 || !core[i0]) continue;
        size_t i = i0;
        for (;;) {
            if (labels[i] == -1) {
                labels[i] = label;
                if (core[i])
                    for (size_t v = 0; v < n; v++)
                        if (near[i * n + v] && labels[v] == -1) {
                            if (top == cap) stack = realloc(stack, (cap *= 2) * sizeof *stack);
                            stack[top++] = v;
                        }
            }
            if (top == 0) break;
            i = stack[--top];
        }
        label++;
    }
    size_t contested = 0;
    for (size_t i = 0; i < n; i++) {
        int64_t other = -1;
        for (size_t v = 0; !core[i] && v < n && other < 0; v++)
            if (near[i * n + v] && core[v] && labels[v] != labels[i]) other = labels[v];
        contested += other >= 0;
    }
    free(stack);
    free(near);
    return contested;
}
