/* Each query's slice of a join fill, ascending by row (the CPU join's
 * order): one work-group per slice, a bitonic sort of (row, position)
 * keys in local memory, the squared distances moved alongside.
 * Instantiated per type (T, FN(name)). Slices of one row or of more than
 * JOIN_SORT_MAX are left as they are (the host sorts the long ones). */
#ifndef JOIN_SORT_MAX
#define JOIN_SORT_MAX 1024
#endif

KERNEL void FN(join_sort)(GLOBAL const u64 *off, GLOBAL u32 *rows, GLOBAL T *d2, u32 want_d2 DYN_LOCAL_PARAM)
{
    LOCAL_ARRAY u64 key[JOIN_SORT_MAX];
    LOCAL_ARRAY T val[JOIN_SORT_MAX];
    u64 base = off[GROUP_ID()], len = off[GROUP_ID() + 1] - base;
    /* Uniform over the work-group: every work-item meets every barrier
     * or none (no early return, which PoCL's barrier handling trips on). */
    u32 n = len >= 2 && len <= JOIN_SORT_MAX ? (u32)len : 0, size = 1;
    while (size < n) size <<= 1;
    if (n == 0) size = 0;
    for (u32 i = LOCAL_ID(); i < size; i += GROUP_SIZE()) {
        key[i] = i < n ? (u64)rows[base + i] << 32 | i : ~(u64)0;
        if (want_d2 && i < n) val[i] = d2[base + i];
    }
    BARRIER();
    for (u32 k = 2; k <= size; k <<= 1)
        for (u32 j = k >> 1; j > 0; j >>= 1) {
            for (u32 i = LOCAL_ID(); i < size; i += GROUP_SIZE()) {
                u32 partner = i ^ j;
                if (partner <= i) continue;
                u64 a = key[i], b = key[partner];
                if ((a > b) == ((i & k) == 0)) {
                    key[i] = b;
                    key[partner] = a;
                }
            }
            BARRIER();
        }
    for (u32 i = LOCAL_ID(); i < n; i += GROUP_SIZE()) {
        u64 k = key[i];
        rows[base + i] = (u32)(k >> 32);
        if (want_d2) d2[base + i] = val[(u32)k];
    }
}
