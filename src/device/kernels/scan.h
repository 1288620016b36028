/* Exclusive prefix sums (Blelloch's all-prefix-sums; the building block
 * of Bonsai's and RT-HiSS's passes): a scan of blocks of SCAN_BLOCK
 * values, each block's total into sums, then the blocks' offsets added
 * (the host orchestration in src/device/scan.c scans the totals the same
 * way when there is more than one block). Counts come in as 32-bit or
 * 64-bit values and go out as 64-bit sums. */
#define SCAN_GROUP 256
#define SCAN_ITEMS 4
#define SCAN_BLOCK (SCAN_GROUP * SCAN_ITEMS)

#define SCAN_IN u32
#define SCAN_FN(name) name##_u32
#include "scan_t.h"
#undef SCAN_IN
#undef SCAN_FN
#define SCAN_IN u64
#define SCAN_FN(name) name##_u64
#include "scan_t.h"
#undef SCAN_IN
#undef SCAN_FN

/* out[i] += base[block of i] for the n + 1 positions. */
KERNEL void scan_add(GLOBAL u64 *out, GLOBAL const u64 *base, u64 n DYN_LOCAL_PARAM)
{
    u64 add = base[GROUP_ID()], first = (u64)GROUP_ID() * SCAN_BLOCK;
    for (u32 k = LOCAL_ID(); k < SCAN_BLOCK; k += SCAN_GROUP)
        if (first + k <= n) out[first + k] += add;
}
