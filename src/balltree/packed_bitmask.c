/* Small full-mode subtrees as bit masks, for the packed builder (packed.h)
 * on x86-64-v3: a node of k <= 64 points in 2..4 dimensions keeps per
 * dimension j its local ids in j's order (ord_j), the inverse (rnk_j) and
 * the coordinates in that order (s_j); a node below is a 64-bit mask of
 * local ids, its extent and left child found by bit shuffles and one pdep:
 * no list partitioned, no branch on the data. Compiled twice (twice.h):
 * with AVX-512 BITALG the shuffle is one instruction. See
 * docs/balltree-internals.md. */
#include "packed.h"
#include "twice.h"

#include <math.h>
#include <string.h>

#if GROVE__HAVE_TARGETS
#include <immintrin.h>
/* Every part is compiled for x86-64-v3 and inlined into both copies. */
#define BITMASK_BODY GROVE__BODY(GROVE__TARGET_V3)
/* Points in a mask; dimensions (ord has one row fewer: 0's is the local order). */
#define BITMASK_MAX 64
#define BITMASK_DIMS GROVE__BITMASK_DIMS
/* Subtrees side by side (bitmask_tree) in up to this many dimensions. */
#define BITMASK_SUBS_DIMS 3
/* Index byte for positions past k: bit 63, clear below 64 points. */
#define BITMASK_NONE 63

typedef struct bitmask_sub {
    const grove__packed_tree *t;
    int levels;                          /* the batch's full-mode levels */
    size_t row[BITMASK_MAX];             /* input rows by local id */
    double s[BITMASK_DIMS][BITMASK_MAX]; /* coordinates along j in j's order */
    uint8_t ord[BITMASK_DIMS - 1][64];   /* local ids in dimension j + 1's order */
    uint8_t rnk[BITMASK_DIMS][64];       /* local id -> position along j */
} bitmask_sub;

/* Bit i is bit idx[i] of m. In AVX2 per 32 bytes: pick the byte of m
 * holding each bit, test it, movemask. */
static inline GROVE__TARGET_BITALG uint64_t bitmask_shuffle_bitalg(uint64_t m, const uint8_t *idx)
{
    return (uint64_t)_mm512_bitshuffle_epi64_mask(_mm512_set1_epi64((long long)m), _mm512_loadu_si512(idx));
}

BITMASK_BODY uint64_t bitmask_shuffle(uint64_t m, const uint8_t *idx, bool bitalg)
{
    if (bitalg) return bitmask_shuffle_bitalg(m, idx);
    const __m256i bytes = _mm256_set1_epi64x((long long)m), seven = _mm256_set1_epi8(7);
    const __m256i bit = _mm256_setr_epi8(1, 2, 4, 8, 16, 32, 64, -128, 1, 2, 4, 8, 16, 32, 64, -128, 1, 2, 4, 8, 16, 32,
                                         64, -128, 1, 2, 4, 8, 16, 32, 64, -128);
    uint64_t r = 0;
    for (int half = 0; half < 2; half++) {
        __m256i i = _mm256_loadu_si256((const __m256i *)(const void *)(idx + 32 * half));
        __m256i byte = _mm256_shuffle_epi8(bytes, _mm256_and_si256(_mm256_srli_epi16(i, 3), seven));
        __m256i want = _mm256_shuffle_epi8(bit, _mm256_and_si256(i, seven));
        __m256i set = _mm256_cmpeq_epi8(_mm256_and_si256(byte, want), want);
        r |= (uint64_t)(uint32_t)_mm256_movemask_epi8(set) << (32 * half);
    }
    return r;
}

static inline GROVE__TARGET_V3 int bitmask_first(uint64_t m) { return __builtin_ctzll(m); }
static inline GROVE__TARGET_V3 int bitmask_last(uint64_t m) { return 63 - __builtin_clzll(m); }

/* A leaf (the mask's lowest and highest bit) along its widest dimension. */
BITMASK_BODY void bitmask_leaf(const bitmask_sub *b, uint64_t m, int64_t *indices, uint8_t *mask, size_t d)
{
    int p = bitmask_first(m), q = bitmask_last(m);
    size_t s = 0;
    double best_spread = -1.0;
    for (size_t j = 0; j < d; j++)
        grove__bt_widest(fabs(b->s[j][b->rnk[j][p]] - b->s[j][b->rnk[j][q]]), j, &s, &best_spread);
    size_t swap = (size_t)0 - (size_t)(b->rnk[s][q] < b->rnk[s][p]); /* arithmetic, not a branch: a coin flip */
    size_t first = ((size_t)q & swap) | ((size_t)p & ~swap), second = (size_t)(p ^ q) ^ first;
    indices[0] = (int64_t)b->row[first];
    indices[1] = (int64_t)b->row[second];
    if (mask) {
        mask[0] = 1;
        mask[1] = p != q;
    }
}

/* The left half of node m, as local ids. */
BITMASK_BODY uint64_t bitmask_left(const bitmask_sub *b, uint64_t m, size_t d, bool bitalg)
{
    size_t s = 0;
    double best_spread = -1.0;
    uint64_t pos[BITMASK_DIMS] = {m}; /* the node's positions along each dimension */
    for (size_t j = 1; j < d; j++) pos[j] = bitmask_shuffle(m, b->ord[j - 1], bitalg);
    for (size_t j = 0; j < d; j++)
        grove__bt_widest(b->s[j][bitmask_last(pos[j])] - b->s[j][bitmask_first(pos[j])], j, &s, &best_spread);
    unsigned h = (unsigned)__builtin_popcountll(m) / 2;
    uint64_t left_pos = _pdep_u64(((uint64_t)1 << h) - 1, pos[s]);
    return bitmask_shuffle(left_pos, b->rnk[s], bitalg); /* rnk[0] is the identity: no branch on s */
}

/* Local ids in order: dimension 0's order (bitmask_root_left). */
#define RUN8(a) a, a + 1, a + 2, a + 3, a + 4, a + 5, a + 6, a + 7
static const uint8_t bitmask_identity[BITMASK_MAX] = {RUN8(0),  RUN8(8),  RUN8(16), RUN8(24),
                                                      RUN8(32), RUN8(40), RUN8(48), RUN8(56)};
#undef RUN8

/* bitmask_left for a root: no shuffles; the ord rows just written byte by
 * byte are read so (a 64-byte load would wait for the stores to drain). */
BITMASK_BODY uint64_t bitmask_root_left(const bitmask_sub *b, size_t k, size_t d)
{
    size_t s = 0;
    double best_spread = -1.0;
    for (size_t j = 0; j < d; j++) grove__bt_widest(b->s[j][k - 1] - b->s[j][0], j, &s, &best_spread);
    const uint8_t *order = s ? b->ord[s - 1] : bitmask_identity;
    uint64_t left = 0;
    for (size_t i = 0; i < k / 2; i++) left |= (uint64_t)1 << order[i];
    return left;
}

/* The subtrees a level at a time, so independent nodes overlap; two
 * subtrees' nodes alternate. Node i of a level: slots at out + i 2^(L - level). */
BITMASK_BODY void bitmask_tree(const bitmask_sub *b, size_t subs, const uint64_t *all, int level, const size_t *out,
                               size_t d, bool bitalg)
{
    uint64_t mask[2][BITMASK_SUBS * BITMASK_MAX]; /* a node of k points has at most k leaves */
    size_t nodes = subs;                          /* in all subtrees */
    for (size_t u = 0; u < subs; u++) mask[0][u] = all[u];
    int cur = 0;
    for (; level < b->levels; level++, nodes *= 2, cur = !cur) {
        if (nodes == subs) { /* the roots */
            for (size_t u = 0; u < subs; u++) {
                uint64_t m = all[u], left = bitmask_root_left(&b[u], (size_t)__builtin_popcountll(m), d);
                mask[!cur][u] = left;
                mask[!cur][subs + u] = m & ~left;
            }
            continue;
        }
        for (size_t i = 0; i < nodes; i++) {
            size_t u = i % subs, node = i / subs;
            uint64_t m = mask[cur][i], left = bitmask_left(&b[u], m, d, bitalg);
            mask[!cur][2 * node * subs + u] = left;
            mask[!cur][(2 * node + 1) * subs + u] = m & ~left;
        }
    }
    /* In locals: the mask's byte stores could alias anything read through b. */
    int64_t *indices = b->t->c->indices;
    uint8_t *real = b->t->c->mask;
    for (size_t u = 0; u < subs; u++) {
        size_t leaves = nodes / subs;
        for (size_t i = 0; i < leaves; i++) {
            size_t slot = out[u] + 2 * i;
            bitmask_leaf(&b[u], mask[cur][i * subs + u], indices + slot, real ? real + slot : NULL, d);
        }
    }
}

/* Bit i: the field at `shift` of l[i] equals that of l[i - 1]. */
BITMASK_BODY uint64_t bitmask_ties(const uint64_t *l, size_t k, int shift, uint64_t mask)
{
    uint64_t ties = 0;
    for (size_t i = 1; i < k; i++) ties |= (uint64_t)((((l[i] ^ l[i - 1]) >> shift) & mask) == 0) << i;
    return ties;
}

/* Sort entries [a, b) of an order, one field value, by (coordinate, id). */
static void bitmask_sort_run(double *v, uint8_t *ord, uint64_t *rec, size_t a, size_t b, uint64_t id_mask)
{
    for (size_t i = a + 1; i < b; i++) {
        double x = v[i];
        uint8_t o = ord[i];
        uint64_t e = rec[i];
        size_t p = i;
        for (; p > a && (x < v[p - 1] || (x == v[p - 1] && (e & id_mask) < (rec[p - 1] & id_mask))); p--) {
            v[p] = v[p - 1];
            ord[p] = ord[p - 1];
            rec[p] = rec[p - 1];
        }
        v[p] = x;
        ord[p] = o;
        rec[p] = e;
    }
}

/* Sort every run of equal fields of a dimension's order (bitmask_ties). */
static void bitmask_sort_runs(double *v, uint8_t *ord, uint64_t *rec, uint64_t ties, uint64_t id_mask)
{
    while (ties) {
        size_t a = (size_t)__builtin_ctzll(ties) - 1;     /* the run's first entry */
        uint64_t rest = ~(ties >> (a + 1));               /* its later entries are the ones from a + 1 on */
        size_t b = a + 1 + (size_t)__builtin_ctzll(rest); /* rest != 0: bit 63 of ties >> (a + 1) is clear */
        bitmask_sort_run(v, ord, rec, a, b, id_mask);
        ties &= b < 64 ? ~(uint64_t)0 << b : 0;
    }
}

/* The points of a node of k records: local ids by position in list 0,
 * their rows, and per dimension the order, its inverse and coordinates.
 * A record's key is its rank along 0 (rank records, coordinates from the
 * sorted values) or its id (quantized: coordinates by id, each list's
 * runs of one field value sorted here). The key -> local id map is the
 * thread's scratch (one per batch had threads writing one cache line). */
BITMASK_BODY void bitmask_gather(bitmask_sub *b, uint64_t where, size_t off, size_t k, size_t d)
{
    const grove__packed_tree *t = b->t; /* all read in locals: the byte stores below could alias t */
    bool q = t->quantized;
    const uint32_t *perm = t->perm, *ids = t->ids;
    const double *x = q ? t->x : t->val;
    const size_t *order = t->c->order;
    size_t n = t->n, start = t->b->start;
    uint64_t mask = t->mask, id_mask = t->id_mask, key_mask = q ? id_mask : mask;
    uint8_t *local = (uint8_t *)grove__bt_scratch(t->c);
    for (size_t j = 0; j < d; j++) {
        uint64_t *l = t->rec[where >> j & 1] + j * n + off;
        int shift = t->base + (int)j * t->bits;
        uint8_t *ord = b->ord[j ? j - 1 : 0];
        for (size_t i = 0; i < k; i++) {
            size_t key = l[i] & key_mask;
            b->s[j][i] = q ? x[key * d + j] : x[j * n + (l[i] >> shift & mask)];
            if (j) {
                uint8_t p = local[key];
                b->rnk[j][p] = (uint8_t)i;
                ord[i] = p;
            }
        }
        uint64_t ties = q ? bitmask_ties(l, k, shift, mask) : 0;
        if (j == 0) { /* the local order: its runs first, then the map and rows */
            uint8_t position[BITMASK_MAX]; /* permuted along, not needed after */
            if (ties) bitmask_sort_runs(b->s[0], (uint8_t *)memcpy(position, bitmask_identity, k), l, ties, id_mask);
            memcpy(b->rnk[0], bitmask_identity, k);
            for (size_t p = 0; p < k; p++) {
                size_t key = l[p] & key_mask, id = q ? key : perm[key], g = start + (ids ? ids[id] : id);
                local[key] = (uint8_t)p;
                b->row[p] = order ? order[g] : g;
            }
        } else if (ties) {
            bitmask_sort_runs(b->s[j], ord, l, ties, id_mask);
            for (size_t i = 0; i < k; i++) b->rnk[j][ord[i]] = (uint8_t)i;
        }
    }
}

/* The subtrees' points, then their trees, for a constant d. */
BITMASK_BODY void bitmask_build(const grove__packed_tree *t, const grove__bitmask_nodes *nodes, int level, size_t d,
                                bool bitalg)
{
    bitmask_sub b[BITMASK_SUBS];
    uint64_t all[BITMASK_SUBS];
    for (size_t u = 0; u < nodes->count; u++) {
        b[u].t = t;
        b[u].levels = t->b->levels;
        memset(b[u].ord, BITMASK_NONE, sizeof b[u].ord);
        memset(b[u].rnk, BITMASK_NONE, sizeof b[u].rnk);
        all[u] = nodes->k[u] == 64 ? UINT64_MAX : ((uint64_t)1 << nodes->k[u]) - 1;
        bitmask_gather(&b[u], nodes->where[u], nodes->off[u], nodes->k[u], d);
    }
    if (nodes->count == 1) /* a constant count in each call: the loops over it unroll */
        bitmask_tree(b, 1, all, level, nodes->out, d, bitalg);
    else
        bitmask_tree(b, BITMASK_SUBS, all, level, nodes->out, d, bitalg);
}

/* One function per copy, a constant d in each of its cases. */
BITMASK_BODY void bitmask_build_d_body(const grove__packed_tree *t, const grove__bitmask_nodes *nodes, int level,
                                       bool bitalg)
{
    switch (t->c->d) {
    case 2: bitmask_build(t, nodes, level, 2, bitalg); break;
    case 3: bitmask_build(t, nodes, level, 3, bitalg); break;
    default: bitmask_build(t, nodes, level, 4, bitalg);
    }
}
#define BITMASK_PARAMS (const grove__packed_tree *t, const grove__bitmask_nodes *nodes, int level)
GROVE__COPY_VOID(GROVE__TARGET_V3, _v3, bitmask_build_d, BITMASK_PARAMS, (t, nodes, level, false))
GROVE__COPY_VOID(GROVE__TARGET_BITALG, _bitalg, bitmask_build_d, BITMASK_PARAMS, (t, nodes, level, true))

void grove__bitmask_subtrees(const grove__packed_tree *t, const grove__bitmask_nodes *nodes, int level)
{
    (t->c->plan.bitmask_bitalg ? bitmask_build_d_bitalg : bitmask_build_d_v3)(t, nodes, level);
}

/* Levels below a node of k points where at most BITMASK_SUBS (1 above
 * BITMASK_SUBS_DIMS dimensions) subtrees cover it, or -1. */
int grove__bitmask_depth(size_t k, size_t d)
{
    int depth = 0;
    while (k > ((size_t)BITMASK_MAX << depth)) depth++;
    return ((size_t)1 << depth) <= (d <= BITMASK_SUBS_DIMS ? (size_t)BITMASK_SUBS : 1) ? depth : -1;
}

#else
void grove__bitmask_subtrees(const grove__packed_tree *t, const grove__bitmask_nodes *nodes, int level)
{
    (void)t, (void)nodes, (void)level; /* the plan asks for none without x86-64-v3 */
}
int grove__bitmask_depth(size_t k, size_t d) { return (void)k, (void)d, -1; }
#endif
