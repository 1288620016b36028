/* The tree builder's hot code, generic over the working coordinate type.
 * build.c includes this file once per type, with
 *   BT_T     float or double
 *   BT_(x)   the name x with a per-type suffix
 * and the non-generic context (bt_ctx, bt_batch, bt_emit, bt_row) defined.
 *
 * Working layout: columns (structure of arrays) with the points of every
 * batch contiguous; column j of buffer b is c->col[b] + j * c->n. A node
 * owns positions [off, off + k) in both buffers. Splitting a node moves
 * its records into the other buffer with a stable partition, so the
 * records of every node stay in ascending row order: a tie on the
 * coordinate is then broken by position, which is the order by row. */

/* Min and max of x[0..k), k >= 1. The lanes are independent, so the
 * compiler vectorises this without reassociating min/max (which it may
 * not do on its own: -0.0 and +0.0 make the result order-dependent). */
static void BT_(minmax)(const BT_T *x, size_t k, BT_T *lo_out, BT_T *hi_out)
{
    enum { LANES = 8 };
    BT_T lo[LANES], hi[LANES];
    for (int l = 0; l < LANES; l++) lo[l] = hi[l] = x[0];
    size_t i = 0;
    for (; k >= 4 * LANES && i + LANES <= k; i += LANES)
        for (int l = 0; l < LANES; l++) {
            BT_T v = x[i + (size_t)l];
            lo[l] = v < lo[l] ? v : lo[l];
            hi[l] = v > hi[l] ? v : hi[l];
        }
    for (; i < k; i++) {
        lo[0] = x[i] < lo[0] ? x[i] : lo[0];
        hi[0] = x[i] > hi[0] ? x[i] : hi[0];
    }
    for (int l = 1; l < LANES; l++) {
        lo[0] = lo[l] < lo[0] ? lo[l] : lo[0];
        hi[0] = hi[l] > hi[0] ? hi[l] : hi[0];
    }
    *lo_out = lo[0];
    *hi_out = hi[0];
}

/* The dimension of largest spread of a node (ties to the lowest), with its
 * min and max. The spread is taken in double so float32 input and the
 * same values widened to float64 choose alike. */
static size_t BT_(widest)(const BT_T *cols, size_t n, size_t d, size_t off, size_t k, BT_T *lo_out, BT_T *hi_out)
{
    size_t best = 0;
    double best_spread = -1.0;
    for (size_t j = 0; j < d; j++) {
        BT_T lo, hi;
        BT_(minmax)(cols + j * n + off, k, &lo, &hi);
        double spread = (double)hi - (double)lo;
        if (spread > best_spread) {
            best_spread = spread;
            best = j;
            *lo_out = lo;
            *hi_out = hi;
        }
    }
    return best;
}

/* Order-preserving unsigned key of a coordinate: key(x) < key(y) iff
 * x < y. Adding +0 first turns -0.0 into +0.0, so the two share a key. */
static inline BT_K BT_(key)(BT_T x)
{
    x = x + (BT_T)0;
    BT_K bits;
    memcpy(&bits, &x, sizeof bits);
    BT_K sign = (BT_K)1 << (sizeof(BT_K) * 8 - 1);
    return bits & sign ? ~bits : bits | sign;
}

static inline BT_T BT_(unkey)(BT_K key)
{
    BT_K sign = (BT_K)1 << (sizeof(BT_K) * 8 - 1);
    BT_K bits = key & sign ? key ^ sign : ~key;
    BT_T x;
    memcpy(&x, &bits, sizeof x);
    return x;
}

/* The bin of hist holding rank *rank; makes *rank relative to that bin
 * and adds the counts of the bins below it to *below. */
static size_t BT_(find_bin)(const uint32_t *hist, size_t *rank, size_t *below)
{
    size_t b = 0;
    while (hist[b] <= *rank) {
        *rank -= hist[b];
        *below += hist[b];
        b++;
    }
    return b;
}

/* The shift that maps a key range onto fewer than 2^bits bins. */
static int BT_(shift_for)(BT_K range, int bits)
{
    int shift = 0;
    while ((range >> shift) >> bits) shift++;
    return shift;
}

/* The key of rank h (0-based) among the keys of x[0..k), all within
 * [klo, khi], with *less set to the number of keys below it. Radix select:
 * a histogram of (key - klo) >> shift finds the bin of rank h, whose keys
 * are gathered into scratch and refined the same way. Every round narrows
 * the key range by the bin count, so the cost stays linear whatever the
 * data (duplicates end in a bin of one key). */
static BT_K BT_(radix_select)(const BT_T *x, size_t k, size_t h, BT_K klo, BT_K khi, BT_K *scratch, size_t *less)
{
    enum { MAX_BITS = 11 };
    uint32_t hist[1 << MAX_BITS];
    int bits = 3;
    while (bits < MAX_BITS && ((size_t)4 << bits) < k) bits++;
    size_t bins = (size_t)1 << bits, rank = h, below = 0;
    int shift = BT_(shift_for)(khi - klo, bits);
    memset(hist, 0, bins * sizeof *hist);
    for (size_t i = 0; i < k; i++) hist[(BT_(key)(x[i]) - klo) >> shift]++;
    size_t bin = BT_(find_bin)(hist, &rank, &below), c = 0;
    for (size_t i = 0; i < k; i++) {
        BT_K key = BT_(key)(x[i]);
        scratch[c] = key;
        c += ((key - klo) >> shift) == bin;
    }
    while (c > 32) {
        BT_K lo = scratch[0], hi = scratch[0];
        for (size_t i = 1; i < c; i++) {
            lo = scratch[i] < lo ? scratch[i] : lo;
            hi = scratch[i] > hi ? scratch[i] : hi;
        }
        if (lo == hi) {
            *less = below;
            return lo;
        }
        shift = BT_(shift_for)(hi - lo, bits);
        memset(hist, 0, bins * sizeof *hist);
        for (size_t i = 0; i < c; i++) hist[(scratch[i] - lo) >> shift]++;
        bin = BT_(find_bin)(hist, &rank, &below);
        size_t kept = 0;
        for (size_t i = 0; i < c; i++) {
            BT_K key = scratch[i];
            scratch[kept] = key;
            kept += ((key - lo) >> shift) == bin;
        }
        c = kept;
    }
    for (size_t i = 1; i < c; i++) { /* insertion sort of the last few */
        BT_K v = scratch[i];
        size_t j = i;
        for (; j > 0 && v < scratch[j - 1]; j--) scratch[j] = scratch[j - 1];
        scratch[j] = v;
    }
    size_t first = rank;
    while (first > 0 && scratch[first - 1] == scratch[rank]) first--;
    *less = below + first;
    return scratch[rank];
}

/* Stable partition of a node into the other buffer: the left side takes
 * every x < v, then the first `quota` x == v. Called with a constant d for
 * small d, so the copy of a record unrolls. */
static BT_INLINE void BT_(split_pass)(const bt_ctx *c, int buf, size_t off, size_t k, size_t h, size_t s, BT_T v,
                                      size_t quota, size_t d)
{
    size_t n = c->n;
    const BT_T *src = (const BT_T *)c->col[buf] + off;
    BT_T *dst = (BT_T *)c->col[!buf] + off;
    const uint32_t *pos = c->pos[buf] + off;
    uint32_t *opos = c->pos[!buf] + off;
    const BT_T *xs = src + s * n;
    size_t nl = 0, nr = h;
    for (size_t i = 0; i < k; i++) {
        BT_T x = xs[i];
        size_t eq = x == v, left = (x < v) | (eq & (quota != 0));
        quota -= eq & left;
        size_t t = left ? nl : nr;
        nl += left;
        nr += !left;
        for (size_t j = 0; j < d; j++) dst[j * n + t] = src[j * n + i];
        opos[t] = pos[i];
    }
}

/* A small node (k <= BT_SMALL) and its whole subtree, without moving
 * records: idx lists the node's positions relative to the subtree root
 * (ascending, so ascending in row), cols/pos point at that root. */
static void BT_(small)(const bt_ctx *c, const bt_batch *b, const BT_T *cols, const uint32_t *pos, uint8_t *idx,
                       size_t k, int level, size_t out)
{
    size_t n = c->n, d = c->d;
    if (c->partition && (level == b->levels || k <= 1)) {
        for (size_t i = 0; i < k; i++) bt_emit(c, out + i, bt_row(c, b, pos[idx[i]]), 1);
        return;
    }
    bool leaf = !c->partition && level == b->levels;
    if (leaf && k == 1) { /* a leaf of one point: pad with a copy */
        size_t row = bt_row(c, b, pos[idx[0]]);
        bt_emit(c, out, row, 1);
        bt_emit(c, out + 1, row, 0);
        return;
    }
    size_t s = 0;
    double best_spread = -1.0;
    for (size_t j = 0; j < d; j++) {
        const BT_T *x = cols + j * n;
        BT_T lo = x[idx[0]], hi = lo;
        for (size_t i = 1; i < k; i++) {
            BT_T v = x[idx[i]];
            lo = v < lo ? v : lo;
            hi = v > hi ? v : hi;
        }
        double spread = (double)hi - (double)lo;
        s = spread > best_spread ? j : s;
        best_spread = spread > best_spread ? spread : best_spread;
    }
    const BT_T *x = cols + s * n;
    size_t h = k / 2;
    if (leaf) { /* a leaf pair: the smaller (coordinate, row) first */
        size_t first = x[idx[1]] < x[idx[0]];
        bt_emit(c, out, bt_row(c, b, pos[idx[first]]), 1);
        bt_emit(c, out + 1, bt_row(c, b, pos[idx[!first]]), 1);
        return;
    }
    /* rank of i in (coordinate, position) order; the h lowest go left */
    BT_T v[BT_SMALL];
    for (size_t i = 0; i < k; i++) v[i] = x[idx[i]];
    uint8_t split[BT_SMALL];
    size_t nl = 0, nr = h;
    for (size_t i = 0; i < k; i++) { /* branch-free: these outcomes are coin flips */
        size_t rank = 0;
        for (size_t j = 0; j < k; j++) rank += (size_t)(v[j] < v[i]) | ((size_t)(v[j] == v[i]) & (j < i));
        size_t left = rank < h;
        split[left ? nl : nr] = idx[i];
        nl += left;
        nr += !left;
    }
    size_t right_out = out + (c->partition ? h : (size_t)1 << (b->levels - level));
    BT_(small)(c, b, cols, pos, split, h, level + 1, out);
    BT_(small)(c, b, cols, pos, split + h, k - h, level + 1, right_out);
}

/* Node [off, off + k) of batch b in buffer buf, at `level`, whose slots
 * start at `out`. Children of large nodes become tasks when c->spawn. */
static void BT_(node)(const bt_ctx *c, const bt_batch *b, int buf, size_t off, size_t k, int level, size_t out)
{
    size_t n = c->n, d = c->d, h = k / 2;
    const BT_T *src = (const BT_T *)c->col[buf];
    const uint32_t *pos = c->pos[buf] + off;
    if (c->partition && level == b->levels) {
        for (size_t i = 0; i < k; i++) bt_emit(c, out + i, bt_row(c, b, pos[i]), 1);
        return;
    }
    if (k <= BT_SMALL) {
        uint8_t idx[BT_SMALL];
        for (size_t i = 0; i < k; i++) idx[i] = (uint8_t)i;
        BT_(small)(c, b, src + off, pos, idx, k, level, out);
        return;
    }
    BT_T lo = 0, hi = 0;
    size_t s = BT_(widest)(src, n, d, off, k, &lo, &hi), less;
    /* The split column of the other buffer is free until the split pass. */
    BT_K *scratch = (BT_K *)((BT_T *)c->col[!buf] + s * n + off);
    BT_T v = BT_(unkey)(BT_(radix_select)(src + s * n + off, k, h, BT_(key)(lo), BT_(key)(hi), scratch, &less));
    switch (d) {
    case 1: BT_(split_pass)(c, buf, off, k, h, s, v, h - less, 1); break;
    case 2: BT_(split_pass)(c, buf, off, k, h, s, v, h - less, 2); break;
    case 3: BT_(split_pass)(c, buf, off, k, h, s, v, h - less, 3); break;
    case 4: BT_(split_pass)(c, buf, off, k, h, s, v, h - less, 4); break;
    default: BT_(split_pass)(c, buf, off, k, h, s, v, h - less, d); break;
    }
    size_t right_out = out + (c->partition ? h : (size_t)1 << (b->levels - level));
    if (c->spawn && k >= BT_TASK_MIN) {
#pragma omp task default(shared) firstprivate(c, b, buf, off, h, level, out)
        BT_(node)(c, b, !buf, off, h, level + 1, out);
    } else {
        BT_(node)(c, b, !buf, off, h, level + 1, out);
    }
    BT_(node)(c, b, !buf, off + h, k - h, level + 1, right_out);
}

/* Copy positions [lo, hi) of batch b from input rows of type BT_T. */
static void BT_(gather)(const bt_ctx *c, const bt_batch *b, grove_points points, size_t stride, size_t lo, size_t hi)
{
    BT_T *col = (BT_T *)c->col[0];
    for (size_t p = lo; p < hi; p++) {
        size_t g = b->start + p;
        const BT_T *row = (const BT_T *)((const char *)points.data + bt_row(c, b, (uint32_t)p) * stride);
        for (size_t j = 0; j < c->d; j++) col[j * c->n + g] = row[j];
        c->pos[0][g] = (uint32_t)p;
    }
}
