/* Exclusive prefix sums (Blelloch's all-prefix-sums; the building block
 * of Bonsai's and RT-HiSS's passes): a scan of blocks of SCAN_BLOCK
 * values, each block's total into sums, then the blocks' offsets added
 * (the host orchestration in src/device/scan.c scans the totals the same
 * way when there is more than one block). Counts come in as 32-bit or
 * 64-bit values and go out as 64-bit sums. */
#define SCAN_GROUP 256
#define SCAN_ITEMS 4
#define SCAN_BLOCK (SCAN_GROUP * SCAN_ITEMS)

/* The inclusive prefix sum of one value per work-item over the
 * work-group (Hillis-Steele in buf, a barrier per step; buf[wg - 1] is
 * then the total). Every work-item calls it together; buf may be reused
 * after the next barrier. */
DEVFN u64 scan_local(LOCAL u64 *buf, u64 v, u32 lid, u32 wg)
{
    buf[lid] = v;
    BARRIER();
    for (u32 off = 1; off < wg; off <<= 1) {
        u64 add = lid >= off ? buf[lid - off] : 0;
        BARRIER();
        buf[lid] += add;
        BARRIER();
    }
    return buf[lid];
}

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
