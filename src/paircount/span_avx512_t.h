/* The AVX-512 pair count loops for one coordinate type (span_avx512.c
 * includes this once per type): T, FN(name), WIDTH (lanes of T a vector),
 * the vector and mask types V and M, the V_* intrinsics named below, and
 * per type FN(v_lookup) (the squared edges' table), FN(v_count) (a
 * vector's bins into the byte counters) and FN(v_weigh_load),
 * FN(v_weigh_add) (weight products, eight doubles at a time, the lower
 * lanes first) defined before including it. */

/* What a query's loops keep in registers. */
typedef struct FN(query) {
    const T *col[GROVE__JOIN_SOA_MAX];
    V q[GROVE__JOIN_SOA_MAX], len[GROVE__JOIN_SOA_MAX];
} FN(query);

static inline PC_V4 GROVE__ALWAYS_INLINE void FN(query_init)(FN(query) *v, const pc_span *sp, size_t dr, int periodic)
{
    for (size_t k = 0; k < dr; k++) {
        v->col[k] = (const T *)sp->col[k];
        v->q[k] = V_SET1(((const T *)sp->q)[k]);
        if (periodic) v->len[k] = V_SET1(((const T *)sp->len)[k]);
    }
}

/* Squared distances of the query to WIDTH positions at p, over dr input
 * dimensions in order (minimum images when periodic). */
static inline PC_V4 GROVE__ALWAYS_INLINE V FN(dist)(const FN(query) *v, size_t dr, size_t p, M live, int periodic)
{
    V r2 = V_ZERO();
    for (size_t k = 0; k < dr; k++) {
        V t = V_SUB(v->q[k], V_LOADZ(live, v->col[k] + p));
        if (periodic) {
            t = V_ABS(t);
            t = V_MIN(V_SUB(v->len[k], t), t);
        }
        r2 = k == 0 ? V_MUL(t, t) : V_ADD(r2, V_MUL(t, t));
    }
    return r2;
}

/* The fast path: a query's runs, up to PC_FAST_BINS bins, no weights. */
static inline PC_V4 GROVE__ALWAYS_INLINE void FN(fast)(const pc_span *sp, const uint32_t *rb, const uint32_t *re,
                                                       size_t runs, int periodic, size_t dr)
{
    FN(query) v;
    FN(query_init)(&v, sp, dr, periodic);
    const T *e2 = sp->e2;
    size_t nrp = sp->nrp;
    T tab[16];
    for (size_t i = 0; i < 16; i++) tab[i] = i <= nrp ? e2[i] : e2[nrp + 1]; /* then +infinity */
    FN(table) table = FN(table_load)(tab);
    V hi = V_SET1(e2[nrp]);
    __m512i acc[2] = {_mm512_setzero_si512(), _mm512_setzero_si512()};
    uint64_t *count = sp->count + PC_LANES;
    unsigned vectors = 0;
    for (size_t r = 0; r < runs; r++)
        for (size_t p = rb[r]; p < re[r]; p += WIDTH) {
            M live = (M)lanes(re[r] - p, WIDTH);
            V r2 = FN(dist)(&v, dr, p, live, periodic);
            /* Below the last edge, k = the edges at or below r2 (0 .. nrp),
             * by a binary search in the table. */
            M rem = V_CMP(live, r2, hi, _CMP_LT_OQ);
            K k = K_ZERO();
            for (int step = 8; step >= 1; step /= 2) {
                M up = V_CMP((M)~0u, r2, FN(v_lookup)(table, K_ADD(k, K_SET1(step - 1))), _CMP_GE_OQ);
                k = K_MASK_ADD(k, up, k, K_SET1(step));
            }
            FN(v_count)(acc, k, rem);
            /* Each vector adds at most WIDTH / 8 to a byte counter. */
            if (++vectors == PC_FLUSH / (WIDTH / 8)) {
                flush_bytes(acc, count, nrp);
                vectors = 0;
            }
        }
    flush_bytes(acc, count, nrp);
}

/* Count (and weigh) the lanes `live` of one vector from the last bin down
 * (weight products w[0], w[1]: lanes in offset order). */
static inline PC_V4 GROVE__ALWAYS_INLINE void FN(descend)(V r2, M live, const pc_span *sp, uint64_t *count,
                                                          const __m512d *w)
{
    const T *e2 = sp->e2;
    size_t nrp = sp->nrp;
    M rem = V_CMP(live, r2, V_SET1(e2[nrp]), _CMP_LT_OQ);
    rem = V_CMP(rem, r2, V_SET1(e2[0]), _CMP_GE_OQ);
    for (size_t i = nrp; rem && i-- > 0;) {
        M m = V_CMP(rem, r2, V_SET1(e2[i]), _CMP_GE_OQ);
        if (!m) continue;
        count[i * PC_LANES] += (uint64_t)__builtin_popcount(m);
        if (sp->part) FN(v_weigh_add)(sp->part + (i + 1) * PC_LANES, m, w);
        rem &= (M)~m;
    }
}

static inline PC_V4 GROVE__ALWAYS_INLINE void FN(slow)(const pc_span *sp, const uint32_t *rb, const uint32_t *re,
                                                       size_t runs, int periodic, size_t dr)
{
    FN(query) v;
    FN(query_init)(&v, sp, dr, periodic);
    uint64_t *count = sp->count + PC_LANES;
    __m512d wq = _mm512_set1_pd(sp->wq), w[2] = {_mm512_setzero_pd(), _mm512_setzero_pd()};
    for (size_t r = 0; r < runs; r++)
        for (size_t p = rb[r], i = 0; p < re[r]; p += WIDTH, i++) {
            M live = (M)lanes(re[r] - p, WIDTH);
            V r2 = FN(dist)(&v, dr, p, live, periodic);
            if (sp->part) FN(v_weigh_load)(w, wq, sp->w + p, live);
            /* Alternate counters, so one bin's counts do not wait on each other. */
            FN(descend)(r2, live, sp, count + (i & (PC_LANES - 1)), w);
        }
}

PC_V4 void FN(grove__pc_query_avx512)(const pc_span *sp, const uint32_t *rb, const uint32_t *re, size_t runs)
{
    int fast = !sp->part && sp->nrp <= PC_FAST_BINS, periodic = sp->len != NULL;
#define PC_Q(F, P, DR) F(sp, rb, re, runs, P, DR)
    if (fast && periodic) sp->dr == 3 ? PC_Q(FN(fast), 1, 3) : PC_Q(FN(fast), 1, sp->dr);
    else if (fast) sp->dr == 3 ? PC_Q(FN(fast), 0, 3) : PC_Q(FN(fast), 0, sp->dr);
    else if (periodic) sp->dr == 3 ? PC_Q(FN(slow), 1, 3) : PC_Q(FN(slow), 1, sp->dr);
    else sp->dr == 3 ? PC_Q(FN(slow), 0, 3) : PC_Q(FN(slow), 0, sp->dr);
#undef PC_Q
}
