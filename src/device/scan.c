/* The device's exclusive prefix sum (kernels/scan.h): blocks scanned with
 * their totals set aside, the totals scanned the same way (recursively,
 * while there is more than one block), and each block's offset added. */
#include "device.h"

/* kernels/scan.h's block: SCAN_GROUP work-items of SCAN_ITEMS values. */
enum { SCAN_GROUP = 256, SCAN_BLOCK = 1024 };

/* out[0 .. n] = the exclusive sums of in[0 .. n) (elements of the kernel
 * scan_blocks_SUFFIX's input type). */
static grove_status scan_level(grove__device *d, const char *blocks_kernel, const grove__dmem *in,
                               const grove__dmem *out, size_t n)
{
    uint64_t n64 = n;
    size_t nb = n / SCAN_BLOCK + 1; /* blocks over the n + 1 positions */
    grove__dmem sums = {0}, scanned = {0};
    grove_status s = grove__dalloc(d, nb * sizeof(uint64_t), "scan block totals", &sums);
    if (s == GROVE_OK) {
        grove__karg args[] = {grove__kbuf(in), grove__kbuf(out), grove__kbuf(&sums), GROVE__KVAL(n64)};
        s = grove__dlaunch(d, blocks_kernel, nb, SCAN_GROUP, 0, args, 4);
    }
    if (s == GROVE_OK && nb > 1) {
        s = grove__dalloc(d, (nb + 1) * sizeof(uint64_t), "scan block offsets", &scanned);
        if (s == GROVE_OK) s = scan_level(d, "scan_blocks_u64", &sums, &scanned, nb);
        if (s == GROVE_OK) {
            grove__karg args[] = {grove__kbuf(out), grove__kbuf(&scanned), GROVE__KVAL(n64)};
            s = grove__dlaunch(d, "scan_add", nb, SCAN_GROUP, 0, args, 3);
        }
    }
    grove__dfree(d, &scanned);
    grove__dfree(d, &sums);
    return s;
}

grove_status grove__dscan(grove__device *d, const grove__dmem *in, const grove__dmem *out, size_t n, uint64_t *total)
{
    grove_status s = scan_level(d, "scan_blocks_u32", in, out, n);
    if (s == GROVE_OK) s = grove__dread(d, out, n * sizeof(uint64_t), total, sizeof *total);
    return s;
}
