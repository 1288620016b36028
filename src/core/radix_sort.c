/* Stable parallel LSD radix sort of (uint64 key, uint32 value) pairs.
 *
 * Each pass: every thread counts the digits of its own contiguous chunk;
 * an exclusive scan in (digit, thread) order gives every thread its write
 * offsets; every thread then scatters its chunk in order. Because chunks
 * are scattered in thread order within each digit, the sort is stable and
 * the result is the same for any thread count. */
#include "parallel.h"

#include <string.h>

enum { RADIX = 256, MIN_CHUNK = 1 << 14, MAX_THREADS = 256 };

/* Which of the 8 bytes differ between keys: a pass on a byte that is equal
 * in every key would be a copy. Per-thread partial results rather than an
 * OpenMP reduction clause, which some compilers implement with an exported
 * lock symbol. */
static unsigned varying_bytes(const uint64_t *keys, size_t n, int threads)
{
    uint64_t and_part[MAX_THREADS], or_part[MAX_THREADS];
    int team = 1;
#pragma omp parallel num_threads(threads)
    {
        size_t lo, hi;
        int nt, t = grove__team_share(n, &lo, &hi, &nt);
        uint64_t a = ~(uint64_t)0, o = 0;
        for (size_t i = lo; i < hi; i++) {
            a &= keys[i];
            o |= keys[i];
        }
        and_part[t] = a;
        or_part[t] = o;
#pragma omp single
        team = nt;
    }
    uint64_t and_all = ~(uint64_t)0, or_all = 0;
    for (int t = 0; t < team; t++) {
        and_all &= and_part[t];
        or_all |= or_part[t];
    }
    uint64_t differ = and_all ^ or_all;
    unsigned mask = 0;
    for (unsigned b = 0; b < 8; b++)
        if ((differ >> (8 * b)) & 0xff) mask |= 1u << b;
    return mask;
}

grove_status grove__radix_sort_u64(uint64_t *keys, uint32_t *values, size_t n, int threads)
{
    if (n < 2) return GROVE_OK;
    if (threads < 1) threads = 1;
    if (threads > MAX_THREADS) threads = MAX_THREADS;
    size_t chunks = (n + MIN_CHUNK - 1) / MIN_CHUNK;
    if ((size_t)threads > chunks) threads = (int)chunks;
    unsigned mask = varying_bytes(keys, n, threads);
    if (!mask) return GROVE_OK;
    size_t key_bytes, value_bytes;
    if (!grove__mul_size(n, sizeof *keys, &key_bytes) || !grove__mul_size(n, sizeof *values, &value_bytes))
        return grove__fail(GROVE_TOO_LARGE, "radix sort: %zu keys overflow the address space", n);
    uint64_t *k2 = grove__malloc(key_bytes, "radix sort keys");
    uint32_t *v2 = grove__malloc(value_bytes, "radix sort values");
    size_t *count = grove__calloc((size_t)threads * RADIX, sizeof *count, "radix sort histograms");
    if (!k2 || !v2 || !count) {
        grove__free(k2);
        grove__free(v2);
        grove__free(count);
        return GROVE_OUT_OF_MEMORY;
    }
    uint64_t *ksrc = keys, *kdst = k2;
    uint32_t *vsrc = values, *vdst = v2;
    for (unsigned b = 0; b < 8; b++) {
        if (!(mask & (1u << b))) continue;
        unsigned shift = 8 * b;
#pragma omp parallel num_threads(threads)
        {
            size_t lo, hi;
            int nt, t = grove__team_share(n, &lo, &hi, &nt);
            size_t *mine = count + (size_t)t * RADIX;
            memset(mine, 0, RADIX * sizeof *mine);
            for (size_t i = lo; i < hi; i++) mine[(ksrc[i] >> shift) & 0xff]++;
#pragma omp barrier
#pragma omp single
            {
                size_t sum = 0;
                for (size_t digit = 0; digit < RADIX; digit++)
                    for (int u = 0; u < nt; u++) {
                        size_t c = count[(size_t)u * RADIX + digit];
                        count[(size_t)u * RADIX + digit] = sum;
                        sum += c;
                    }
            }
            for (size_t i = lo; i < hi; i++) {
                size_t at = mine[(ksrc[i] >> shift) & 0xff]++;
                kdst[at] = ksrc[i];
                vdst[at] = vsrc[i];
            }
        }
        uint64_t *kt = ksrc;
        ksrc = kdst;
        kdst = kt;
        uint32_t *vt = vsrc;
        vsrc = vdst;
        vdst = vt;
    }
    if (ksrc != keys) {
        memcpy(keys, ksrc, key_bytes);
        memcpy(values, vsrc, value_bytes);
    }
    grove__free(k2);
    grove__free(v2);
    grove__free(count);
    return GROVE_OK;
}
