/* The join's components pass (grove__join_connect), instantiated per
 * coordinate type after join_t.h: include with T, FN(name) and
 * JOIN_PERIODIC defined (join_run.c).
 *
 * Group A (a leaf of the index) joins the pairs inside it, then takes
 * candidates from later groups only, so each pair of groups meets once.
 * The pass needs every member pair within eps in one component, not the
 * pairs themselves: once A's members are one component, a candidate
 * already in it needs no distance at all, and one that is not needs only
 * its first member of A within eps. Inside a cluster the earlier groups
 * have joined nearly every candidate already, so most cost one find. */

/* Squared distances from the point at position p to positions
 * [a0, a0 + len) of D, len <= JOIN_CHUNK, as the join's refinement
 * computes them (the same sums in the same order: each difference only
 * changes sign). Above SOA_MAX dimensions a point whose keys put it beyond
 * reach (prune2) gets INFINITY and the others may be partial sums past
 * eps2, as in FN(chunk_d2). */
static inline GROVE__ALWAYS_INLINE void FN(column_d2)(const grove_index *D, size_t p, size_t a0, size_t len,
                                                      double prune2, T eps2, T *acc)
{
    size_t d = D->tree.d, n = D->tree.n;
    const T *x = D->tree.x, *per = D->period;
    if (D->xs) {
        FN(span_soa)(D->xs, n, a0, len, x + p * d, d, per, acc);
        return;
    }
#if JOIN_PERIODIC
    (void)prune2;
    for (size_t c = 0; c < len; c++) acc[c] = FN(dist2_lanes)(x + p * d, x + (a0 + c) * d, d, eps2, per);
#else
    const T *kx = D->keys;
    size_t ks = D->kstride, m = D->tree.dims;
    for (size_t c = 0; c < len; c++) {
        size_t a = a0 + c;
        acc[c] = (double)FN(dist2)(kx + p * ks, kx + a * ks, m) > prune2 ? (T)INFINITY
                                                                          : FN(dist2_lanes)(x + p * d, x + a * d, d,
                                                                                            eps2, NULL);
    }
#endif
}

/* Join the member at position p with the members of group A at
 * positions [a0, a1) within eps: with each of them while A's members are
 * not one component (*root == JOIN_NO_ROOT), else with the first, and with
 * none when p is in A's component already (*root: its root as last seen,
 * refreshed here). */
static void FN(connect_point)(const grove_index *D, const join_pass *pass, size_t a0, size_t a1, size_t p,
                              uint32_t *root)
{
    const join_connect *cn = pass->connect;
    uint32_t row = D->tree.perm[p];
    if (*root != JOIN_NO_ROOT) {
        /* A root found earlier may have been joined under a smaller one
         * since: look again before computing anything. */
        uint32_t r = grove__uf_find(cn->uf, row);
        if (r == *root || r == (*root = grove__uf_find(cn->uf, *root))) return;
    }
    T eps2 = (T)pass->eps2, acc[JOIN_CHUNK];
    int exact = eps2 < GROVE__KEY_MIN(T);
    for (size_t b = a0; b < a1; b += JOIN_CHUNK) {
        size_t len = a1 - b < JOIN_CHUNK ? a1 - b : JOIN_CHUNK;
        FN(column_d2)(D, p, b, len, pass->prune2, eps2, acc);
        if (exact) FN(settle)(D, NULL, b, len, (const T *)D->tree.x + p * D->tree.d, acc);
        for (size_t c = 0; c < len; c++) {
            uint32_t r = D->tree.perm[b + c];
            if (!(acc[c] <= eps2) || !join_member(cn, r)) continue;
            grove__uf_union(cn->uf, r, row);
            if (*root != JOIN_NO_ROOT) return;
        }
    }
}

/* Pairs inside group A (positions [a0, a1)): joined first in a small
 * forest over A's positions (w->forest, no atomics, in cache), then each
 * member once in the union-find, so a dense group costs one union per
 * member, not one per pair. */
static void FN(connect_inside)(const grove_index *D, const join_pass *pass, join_work *w, size_t a0, size_t a1)
{
    const join_connect *cn = pass->connect;
    const uint32_t *rows = D->tree.perm;
    uint32_t *up = w->forest;
    T eps2 = (T)pass->eps2, acc[JOIN_CHUNK];
    int exact = eps2 < GROVE__KEY_MIN(T);
    for (size_t i = 0; i < a1 - a0; i++) up[i] = (uint32_t)i;
    for (size_t p = a0 + 1; p < a1; p++) {
        if (!join_member(cn, rows[p])) continue;
        for (size_t b = a0; b < p; b += JOIN_CHUNK) {
            size_t len = p - b < JOIN_CHUNK ? p - b : JOIN_CHUNK;
            FN(column_d2)(D, p, b, len, pass->prune2, eps2, acc);
            if (exact) FN(settle)(D, NULL, b, len, (const T *)D->tree.x + p * D->tree.d, acc);
            for (size_t c = 0; c < len; c++)
                if (acc[c] <= eps2 && join_member(cn, rows[b + c]))
                    join_forest_union(up, (uint32_t)(b + c - a0), (uint32_t)(p - a0));
        }
    }
    for (size_t i = 0; i < a1 - a0; i++) {
        uint32_t r = join_forest_find(up, (uint32_t)i);
        if (r != i) grove__uf_union(cn->uf, rows[a0 + r], rows[a0 + i]);
    }
}

/* The components pass for group `leaf`: its members joined with every
 * member within eps in it and in later groups. */
static grove_status FN(connect_self_group)(const grove_index *D, size_t leaf, join_work *w, const join_pass *pass)
{
    const join_connect *cn = pass->connect;
    uint32_t self = D->leaves[leaf];
    const grove__node *nd = &D->tree.node[self];
    size_t a0 = nd->begin, a1 = nd->end, a = a0;
    while (a < a1 && !join_member(cn, D->tree.perm[a])) a++;
    if (a == a1) return GROVE_OK; /* no member: nothing to join */
    /* Pairs inside A first, unless earlier groups made A's members one
     * component already. */
    uint32_t root = JOIN_NO_ROOT;
    if (!join_members_one(cn, D->tree.perm + a0, a1 - a0, &root)) {
        FN(connect_inside)(D, pass, w, a0, a1);
        root = JOIN_NO_ROOT;
        if (!join_members_one(cn, D->tree.perm + a0, a1 - a0, &root)) root = JOIN_NO_ROOT;
    }
    /* Then the later groups' candidates (nodes after A: A itself brings
     * none). */
    const T *qbox = (const T *)D->tree.box + (size_t)self * 2 * D->tree.dims;
    join_shortcut cut = {cn, D->tree.perm + a0, a1 - a0, pass->link2};
    size_t count = 0;
    grove_status s = FN(gather_keys)(D, qbox, pass->prune2, w, &count, self + 1, &cut);
    if (s != GROVE_OK) return s;
    for (size_t c = 0; c < count; c++) {
        size_t p = (uint32_t)w->keys[c];
        if (join_member(cn, D->tree.perm[p])) FN(connect_point)(D, pass, a0, a1, p, &root);
    }
    return GROVE_OK;
}
