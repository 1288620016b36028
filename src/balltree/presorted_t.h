/* The presorted builder's code over the coordinate type, included by
 * presorted.c once per type with BT_T (float or double), BT_K (the
 * unsigned integer of its width) and BT_(name) (a per-type name). */

/* Coordinate j of label l. */
static inline const BT_T *BT_(row)(const grove__bt_view *v, uint32_t l)
{
    size_t r = v->rows ? v->rows[l] : l;
    return (const BT_T *)(v->base + r * v->stride);
}

static inline BT_T BT_(at)(const grove__bt_view *v, uint32_t l, size_t j) { return BT_(row)(v, l)[j]; }

/* Stable insertion sort of ids[0..g), g <= BT_SORT_SMALL, by key j. */
static void BT_(sort_small)(const grove__bt_view *v, size_t j, uint32_t *ids, size_t g)
{
    BT_K key[BT_SORT_SMALL];
    for (size_t i = 0; i < g; i++) key[i] = BT_(grove__bt_key)(BT_(at)(v, ids[i], j));
    for (size_t i = 1; i < g; i++) {
        BT_K kv = key[i];
        uint32_t id = ids[i];
        size_t p = i;
        for (; p > 0 && kv < key[p - 1]; p--) {
            key[p] = key[p - 1];
            ids[p] = ids[p - 1];
        }
        key[p] = kv;
        ids[p] = id;
    }
}

/* a[i] = ((key a[i] - lo) >> shift) << 32 | ids[i]. */
static void BT_(pack)(const uint32_t *ids, size_t g, BT_K lo, int shift, uint64_t *a)
{
    for (size_t i = 0; i < g; i++) a[i] = (uint64_t)(uint32_t)(((BT_K)a[i] - lo) >> shift) << 32 | ids[i];
}

static void BT_(sort_ids)(const grove__bt_ctx *c, const grove__bt_view *v, size_t j, uint32_t *ids, size_t g,
                          uint64_t *a, uint64_t *b);

/* BT_(sort_ids) once a[i] holds ids[i]'s key and [lo, hi] their extent. */
static void BT_(sort_keyed)(const grove__bt_ctx *c, const grove__bt_view *v, size_t j, uint32_t *ids, size_t g,
                            uint64_t *a, uint64_t *b, BT_K lo, BT_K hi)
{
    if (lo == hi) return;
    int width = 0, bits = BT_SORT_SLACK;
    while (width < (int)sizeof(BT_K) * 8 && (hi - lo) >> width) width++;
    while (bits < 32 && ((size_t)1 << (bits - BT_SORT_SLACK)) < g) bits++;
    bits = bits < width ? bits : width;
    int shift = width - bits;
    BT_(pack)(ids, g, lo, shift, a);
    bt_lsd(&a, &b, g, bits);
    /* The ids back, and the first position of every run of equal top bits
     * into b (free now); exact keys (shift 0) have no runs. */
    size_t runs = 0;
    bool same = false;
    ids[0] = (uint32_t)a[0];
    for (size_t i = 1; i < g; i++) { /* branch-free: runs are rare */
        ids[i] = (uint32_t)a[i];
        bool next = shift && !((a[i] ^ a[i - 1]) >> 32);
        b[runs] = i - 1;
        runs += next && !same;
        same = next;
    }
    /* Each run sorted on its own, the last first: it uses a and b from its
     * start on, where only later runs were. */
    for (size_t end = g; runs--;) {
        size_t r0 = b[runs], i = r0 + 1;
        while (i < end && !((a[i] ^ a[r0]) >> 32)) i++;
        BT_(sort_ids)(c, v, j, ids + r0, i - r0, a + r0, b + r0);
        end = r0;
    }
}

/* Sort ids[0..g), ascending on entry, by (key j, id), a and b scratch
 * of g each: a radix sort of the top bits of the key relative to the
 * smallest (few keys sharing them), then each run of equal top bits the
 * same way on its narrower range, at least BT_SORT_SLACK bits fewer. */
static void BT_(sort_ids)(const grove__bt_ctx *c, const grove__bt_view *v, size_t j, uint32_t *ids, size_t g,
                          uint64_t *a, uint64_t *b)
{
    if (g <= BT_SORT_SMALL) {
        BT_(sort_small)(v, j, ids, g);
        return;
    }
    BT_K lo = BT_(grove__bt_key)(BT_(at)(v, ids[0], j)), hi = lo;
    for (size_t i = 0; i < g; i++) { /* the keys, read once, into a */
        BT_K k = BT_(grove__bt_key)(BT_(at)(v, ids[i], j));
        a[i] = k;
        lo = k < lo ? k : lo;
        hi = k > hi ? k : hi;
    }
    BT_(sort_keyed)(c, v, j, ids, g, a, b, lo, hi);
}

/* A node of k <= BT_SMALL points and its subtree, from its labels (in
 * id order in partition mode). */
static void BT_(small)(const bt_tree *t, const grove__bt_view *w, const uint32_t *labels, size_t k, int level,
                       size_t out)
{
    const grove__bt_ctx *c = t->c;
    const grove__bt_batch *b = t->b;
    size_t d = c->d;
    if (c->partition && (level == b->levels || k <= 1)) {
        for (size_t i = 0; i < k; i++) grove__bt_emit(c, out + i, grove__bt_row(c, b, bt_id(w, labels[i])), 1);
        return;
    }
    bool leaf = !c->partition && level == b->levels;
    if (leaf && k == 1) { /* a leaf of one point: pad with a copy */
        size_t row = grove__bt_row(c, b, bt_id(w, labels[0]));
        grove__bt_emit_leaf(c, out, row, row, 0);
        return;
    }
    size_t s = 0;
    double best_spread = -1.0;
    for (size_t j = 0; j < d; j++) {
        BT_T lo = BT_(at)(w, labels[0], j), hi = lo;
        for (size_t i = 1; i < k; i++) {
            BT_T v = BT_(at)(w, labels[i], j);
            lo = v < lo ? v : lo;
            hi = v > hi ? v : hi;
        }
        double spread = (double)hi - (double)lo;
        grove__bt_widest(spread, j, &s, &best_spread);
    }
    BT_T v[BT_SMALL];
    uint32_t id[BT_SMALL];
    for (size_t i = 0; i < k; i++) {
        v[i] = BT_(at)(w, labels[i], s);
        id[i] = bt_id(w, labels[i]);
    }
    if (leaf) { /* a leaf pair: the smaller (coordinate, id) first */
        size_t first = (v[1] < v[0]) | ((v[1] == v[0]) & (id[1] < id[0]));
        grove__bt_emit_leaf(c, out, grove__bt_row(c, b, id[first]), grove__bt_row(c, b, id[!first]), 1);
        return;
    }
    /* rank of i in (coordinate, id) order; the h lowest go left, stably */
    size_t h = k / 2, nl = 0, nr = h;
    uint32_t split[BT_SMALL];
    for (size_t i = 0; i < k; i++) { /* branch-free: these outcomes are coin flips */
        size_t rank = 0;
        for (size_t j = 0; j < k; j++) rank += (size_t)(v[j] < v[i]) | ((size_t)(v[j] == v[i]) & (id[j] < id[i]));
        size_t left = rank < h;
        split[left ? nl : nr] = labels[i];
        nl += left;
        nr += !left;
    }
    size_t right_out = grove__bt_right_out(c, b, out, h, level);
    BT_(small)(t, w, split, h, level + 1, out);
    BT_(small)(t, w, split + h, k - h, level + 1, right_out);
}

/* Relabel segment [off, off + k) of buffer buf: label off + i for the
 * point at position i of list 0, its coordinates copied there. */
static void BT_(relabel)(const bt_tree *t, int buf, size_t off, size_t k)
{
    size_t n = t->c->n, d = t->c->d;
    uint32_t *first = t->list[buf] + off;
    BT_T *x = t->x;
    for (size_t i = 0; i < k; i++) {
        uint32_t id = first[i];
        size_t p = off + i;
        if (i + BT_AHEAD < k) {
            uint32_t next = first[i + BT_AHEAD];
            BT_PREFETCH(&t->map[next]);
            BT_PREFETCH(BT_(row)(&t->ids, next));
        }
        t->map[id] = (uint32_t)p;
        t->id[p] = id;
        for (size_t j = 0; j < d; j++) x[p * d + j] = BT_(at)(&t->ids, id, j);
        first[i] = (uint32_t)p;
    }
    for (size_t j = 1; j < t->c->lists; j++) {
        uint32_t *l = t->list[buf] + j * n + off;
        for (size_t i = 0; i < k; i++) l[i] = t->map[l[i]];
    }
}

/* The node holding segment [off, off + k) of buffer buf, its labels
 * resolved by w. */
static void BT_(node)(const bt_tree *t, const grove__bt_view *w, int buf, size_t off, size_t k, int level, size_t out)
{
    const grove__bt_ctx *c = t->c;
    size_t n = c->n, d = c->d, lists = c->lists, h = k / 2;
    const uint32_t *src = t->list[buf] + off, *last = src + (lists - 1) * n;
    if (k <= BT_SMALL || (c->partition && level == t->b->levels)) {
        BT_(small)(t, w, last, k, level, out);
        return;
    }
    if (k >= BT_TASK_MIN && grove__bt_cancelled(c)) return;
    if (w == &t->ids && k <= BT_LOCAL && t->b->count > BT_LOCAL) {
        BT_(relabel)(t, buf, off, k);
        w = &t->local;
    }
    size_t s = 0;
    double best_spread = -1.0;
    for (size_t j = 0; j < d; j++) {
        const uint32_t *l = src + j * n;
        double spread = (double)BT_(at)(w, l[k - 1], j) - (double)BT_(at)(w, l[0], j);
        grove__bt_widest(spread, j, &s, &best_spread);
    }
    /* Ancestors' flags are at most `level`: tag marks the right child alone. */
    uint8_t tag = (uint8_t)(level + 1);
    const uint32_t *split = src + s * n;
    for (size_t i = h; i < k; i++) w->flag[split[i]] = tag;
    uint32_t *dst = t->list[!buf] + off;
    for (size_t j = 0; j < lists; j++) {
        if (j == s) memcpy(dst + j * n, split, k * sizeof *split);
        else bt_partition(src + j * n, dst + j * n, k, h, w->flag, tag);
    }
    size_t right_out = grove__bt_right_out(c, t->b, out, h, level);
    if (c->spawn && k >= BT_TASK_MIN) {
#pragma omp task default(shared) firstprivate(t, w, buf, off, h, level, out)
        BT_(node)(t, w, !buf, off, h, level + 1, out);
    } else {
        BT_(node)(t, w, !buf, off, h, level + 1, out);
    }
    BT_(node)(t, w, !buf, off + h, k - h, level + 1, right_out);
}

/* Dimension j into list j of buffer 0 (the identity on entry). */
static void BT_(sort_dim)(const bt_tree *t, size_t j)
{
    uint64_t *a = grove__bt_scratch(t->c);
    size_t m = t->b->count;
    BT_(sort_ids)(t->c, &t->ids, j, t->list[0] + j * t->c->n, m, a, a + m);
}

/* The tree of one batch. */
static void BT_(tree)(const bt_tree *t)
{
    const grove__bt_ctx *c = t->c;
    size_t m = t->b->count, n = c->n;
    for (size_t j = 0; j < c->lists; j++)
        for (size_t i = 0; i < m; i++) t->list[0][j * n + i] = (uint32_t)i;
    if (m > BT_SMALL) {
        memset(t->ids.flag, 0, m);
        if (m > BT_LOCAL) memset(t->local.flag, 0, m);
        if (c->spawn && m >= BT_TASK_MIN) {
            for (size_t j = 0; j < c->d; j++) {
#pragma omp task default(shared) firstprivate(j)
                BT_(sort_dim)(t, j);
            }
#pragma omp taskwait
        } else {
            for (size_t j = 0; j < c->d; j++) BT_(sort_dim)(t, j);
        }
    }
    /* t lives on the caller's stack: wait for every task that uses it. */
#pragma omp taskgroup
    BT_(node)(t, &t->ids, 0, 0, m, 0, t->b->slot);
}
