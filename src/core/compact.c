/* Parallel stream compaction: indices of the kept entries, in order. */
#include "parallel.h"

enum { MAX_THREADS = 256, MIN_CHUNK = 1 << 15 };

size_t grove__compact_u32(const uint8_t *keep, size_t n, uint32_t *out, int threads)
{
    size_t chunks = (n + MIN_CHUNK - 1) / MIN_CHUNK;
    if (threads < 1) threads = 1;
    if (threads > MAX_THREADS) threads = MAX_THREADS;
    if ((size_t)threads > chunks) threads = chunks ? (int)chunks : 1;
    if (threads == 1) {
        size_t m = 0;
        for (size_t i = 0; i < n; i++)
            if (keep[i]) out[m++] = (uint32_t)i;
        return m;
    }
    size_t offset[MAX_THREADS + 1] = {0};
    int team = 1;
#pragma omp parallel num_threads(threads)
    {
        size_t lo, hi, m = 0;
        int nt, t = grove__team_share(n, &lo, &hi, &nt);
        for (size_t i = lo; i < hi; i++) m += keep[i] != 0;
        offset[t + 1] = m;
#pragma omp barrier
#pragma omp single
        {
            team = nt;
            for (int u = 0; u < nt; u++) offset[u + 1] += offset[u];
        }
        size_t at = offset[t];
        for (size_t i = lo; i < hi; i++)
            if (keep[i]) out[at++] = (uint32_t)i;
    }
    return offset[team];
}
