/* The concurrent union-find (src/core/union_find.c) against a plain serial
 * one: roots are each component's smallest element whatever the order of
 * the unions or the number of threads doing them. */
#include "test.h"
#include "union_find.h"

#include <omp.h>

/* Serial reference: union by linking to the smaller root, finds without
 * compression; ref_root gives the component's minimum by construction. */
static uint32_t ref_find(const uint32_t *parent, uint32_t x)
{
    while (parent[x] != x) x = parent[x];
    return x;
}

static void ref_union(uint32_t *parent, uint32_t a, uint32_t b)
{
    a = ref_find(parent, a);
    b = ref_find(parent, b);
    if (a < b) parent[b] = a;
    else if (b < a) parent[a] = b;
}

/* m random pairs over n elements, as (a, b) in pairs[2 k], pairs[2 k + 1]. */
static uint32_t *random_pairs(size_t n, size_t m, uint64_t seed)
{
    grove_rng rng;
    grove_rng_seed(&rng, seed);
    uint32_t *pairs = malloc(2 * m * sizeof *pairs);
    for (size_t k = 0; k < 2 * m; k++) pairs[k] = (uint32_t)grove_rng_below(&rng, n);
    return pairs;
}

TEST(union_find_serial_small_cases)
{
    grove__uf uf;
    REQUIRE_OK(grove__uf_init(&uf, 0, 1));
    grove__uf_flatten(&uf);
    grove__uf_free(&uf);
    REQUIRE_OK(grove__uf_init(&uf, 6, 1));
    for (uint32_t i = 0; i < 6; i++) CHECK(grove__uf_find(&uf, i) == i);
    CHECK(grove__uf_union(&uf, 5, 3) == 1);
    CHECK(grove__uf_union(&uf, 3, 5) == 0);
    CHECK(grove__uf_find(&uf, 5) == 3);
    CHECK(grove__uf_union(&uf, 4, 1) == 1);
    CHECK(grove__uf_union(&uf, 5, 4) == 1);
    CHECK(grove__uf_union(&uf, 2, 2) == 0);
    grove__uf_flatten(&uf);
    uint32_t want[6] = {0, 1, 2, 1, 1, 1};
    for (size_t i = 0; i < 6; i++) CHECK_MSG(uf.parent[i] == want[i], "element %zu: root %u", i, uf.parent[i]);
    grove__uf_free(&uf);
    grove__uf_free(&uf); /* twice is harmless */
}

/* A chain linked from the far end: the path compression must keep every
 * root the minimum, and finds must walk long paths correctly. */
TEST(union_find_long_chain_has_minimum_root)
{
    enum { N = 5000 };
    grove__uf uf;
    REQUIRE_OK(grove__uf_init(&uf, N, 1));
    for (uint32_t i = N - 1; i > 0; i--) CHECK(grove__uf_union(&uf, i, i - 1) == 1);
    for (uint32_t i = 0; i < N; i += 97) CHECK(grove__uf_find(&uf, i) == 0);
    grove__uf_flatten(&uf);
    for (uint32_t i = 0; i < N; i++) CHECK(uf.parent[i] == 0);
    grove__uf_free(&uf);
}

/* Two threads race on the same unions (and finds between them), in
 * different orders, across many seeds and pair densities (sparse: many
 * components; dense: a few giant ones and heavy contention on their
 * roots). The flattened result must equal the serial reference exactly. */
TEST(union_find_two_threads_match_serial_reference)
{
    const size_t sizes[] = {2, 17, 1000, 20000};
    for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++)
        for (int density = 0; density < 3; density++)
            for (uint64_t seed = 1; seed <= 4; seed++) {
                size_t n = sizes[si], m = density == 0 ? n / 3 + 1 : density == 1 ? n : 4 * n;
                uint32_t *pairs = random_pairs(n, m, seed * 131 + si);
                uint32_t *ref = malloc(n * sizeof *ref);
                for (size_t i = 0; i < n; i++) ref[i] = (uint32_t)i;
                for (size_t k = 0; k < m; k++) ref_union(ref, pairs[2 * k], pairs[2 * k + 1]);
                grove__uf uf;
                REQUIRE_OK(grove__uf_init(&uf, n, 2));
                size_t merged[2] = {0, 0};
                int team = 0;
#pragma omp parallel num_threads(2)
                {
                    int t = omp_get_thread_num();
#pragma omp single
                    team = omp_get_num_threads();
                    /* Thread 0 goes forward, thread 1 backward, with the
                     * pair's ends swapped: every union is raced. */
                    for (size_t s = 0; s < m; s++) {
                        size_t k = t == 0 ? s : m - 1 - s;
                        uint32_t a = pairs[2 * k + t], b = pairs[2 * k + 1 - t];
                        merged[t] += (size_t)grove__uf_union(&uf, a, b);
                        (void)grove__uf_find(&uf, (uint32_t)((a + b) / 2));
                    }
                }
                CHECK(team == 2);
                size_t components = 0;
                for (size_t i = 0; i < n; i++) components += ref_find(ref, (uint32_t)i) == i;
                /* Each successful union removed exactly one component. */
                CHECK_MSG(merged[0] + merged[1] == n - components, "n %zu seed %llu: %zu merges for %zu components",
                          n, (unsigned long long)seed, merged[0] + merged[1], components);
                grove__uf_flatten(&uf);
                size_t bad = 0;
                for (size_t i = 0; i < n; i++) bad += uf.parent[i] != ref_find(ref, (uint32_t)i);
                CHECK_MSG(bad == 0, "n %zu density %d seed %llu: %zu elements with the wrong root", n, density,
                          (unsigned long long)seed, bad);
                grove__uf_free(&uf);
                free(ref);
                free(pairs);
            }
}

TEST(union_find_refuses_too_many_elements)
{
    grove__uf uf;
#if SIZE_MAX > UINT32_MAX
    CHECK_FAILS(grove__uf_init(&uf, (size_t)UINT32_MAX + 1, 1), GROVE_TOO_LARGE, "union-find");
    CHECK(uf.parent == NULL);
#endif
    grove__alloc_fail_after(1);
    CHECK(grove__uf_init(&uf, 10, 1) == GROVE_OUT_OF_MEMORY);
    grove__alloc_fail_after(0);
}
