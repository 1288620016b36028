/* The packed builder's list partition (packed.c): the portable
 * loop; partition_avx512.c and partition_avx2.c have the vector versions
 * (the plan picks one). Tests compare each with the definition. */
#include "balltree_internal.h"

/* Branch-free: the outcome is a coin flip. */
void grove__packed_partition_portable(const uint64_t *restrict src, uint64_t *restrict dst, size_t k, size_t h,
                                  int shift, uint64_t mask, uint64_t pivot)
{
    size_t l = 0, r = h;
    for (size_t i = 0; i < k; i++) {
        uint64_t e = src[i];
        size_t right = grove__record_field(e, shift, mask) >= pivot;
        dst[right ? r : l] = e;
        l += 1 - right;
        r += right;
    }
}
