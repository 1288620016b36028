/* Group ids from the union-find's components: sizes counted at each
 * component's root, the large enough components ranked by (size
 * descending, root ascending) with the library's radix sort, then every
 * member given its root's rank. Deterministic: the ranks depend only on
 * the components. */
#include "fof_internal.h"
#include "parallel.h"

#include <string.h>

grove_status grove__fof_number(const uint32_t *root, size_t n, size_t min_members, int threads, int64_t *group,
                               size_t *groups)
{
    *groups = 0;
    if (n == 0) return GROVE_OK;
    memset(group, 0, n * sizeof *group);
#pragma omp parallel for num_threads(threads) schedule(static)
    for (size_t i = 0; i < n; i++) {
#pragma omp atomic update
        group[root[i]]++;
    }
    size_t kept = 0;
    for (size_t i = 0; i < n; i++) kept += root[i] == i && (size_t)group[i] >= min_members;
    uint64_t *keys = grove__malloc((kept ? kept : 1) * sizeof *keys, "fof group ranking");
    uint32_t *roots = grove__malloc((kept ? kept : 1) * sizeof *roots, "fof group ranking");
    if (!keys || !roots) {
        grove__free(keys);
        grove__free(roots);
        return GROVE_OUT_OF_MEMORY;
    }
    /* Larger sizes first: the high word holds UINT32_MAX - size (sizes are
     * below 2^32), the low word the root, so equal sizes go by root. */
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (root[i] == i && (size_t)group[i] >= min_members) {
            keys[k] = (uint64_t)(UINT32_MAX - (uint64_t)group[i]) << 32 | i;
            roots[k++] = (uint32_t)i;
        }
    grove_status s = grove__radix_sort_u64(keys, roots, kept, threads);
    if (s == GROVE_OK) {
        for (size_t i = 0; i < n; i++)
            if (root[i] == i) group[i] = -1;
        for (size_t r = 0; r < kept; r++) group[roots[r]] = (int64_t)r;
        /* Roots are final now; every other particle takes its root's id. */
#pragma omp parallel for num_threads(threads) schedule(static)
        for (size_t i = 0; i < n; i++)
            if (root[i] != i) group[i] = group[root[i]];
        *groups = kept;
    }
    grove__free(keys);
    grove__free(roots);
    return s;
}
