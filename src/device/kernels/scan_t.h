/* One block's scan (scan.h), instantiated per input type: SCAN_IN and
 * SCAN_FN(name). Positions 0 .. n: in[i] below n, 0 at n, so out[n] is the
 * total. Each work-item sums SCAN_ITEMS consecutive values, the
 * work-group scans those sums in local memory (scan_local), and each
 * work-item writes its values' exclusive sums. */
KERNEL void SCAN_FN(scan_blocks)(GLOBAL const SCAN_IN *in, GLOBAL u64 *out, GLOBAL u64 *sums, u64 n DYN_LOCAL_PARAM)
{
    LOCAL_ARRAY u64 part[SCAN_GROUP];
    u32 lid = LOCAL_ID();
    u64 first = (u64)GROUP_ID() * SCAN_BLOCK + (u64)lid * SCAN_ITEMS;
    u64 v[SCAN_ITEMS], s = 0;
    for (u32 k = 0; k < SCAN_ITEMS; k++) {
        v[k] = first + k < n ? (u64)in[first + k] : 0;
        s += v[k];
    }
    u64 upto = scan_local(part, s, lid, SCAN_GROUP), run = upto - s;
    for (u32 k = 0; k < SCAN_ITEMS; k++) {
        if (first + k <= n) out[first + k] = run;
        run += v[k];
    }
    if (lid == SCAN_GROUP - 1) sums[GROUP_ID()] = upto;
}
