/* A bounded max-heap of (squared distance, row) for k-nearest-neighbour
 * searches, ordered by distance then row; instantiated per coordinate type:
 * include with T and FN(name) defined (src/index/knn_t.h, src/join). */

/* (d2, row) order: true when a is farther than b, rows breaking ties. */
static inline int FN(knn_after)(T da, uint32_t ra, T db, uint32_t rb)
{
    return da > db || (da == db && ra > rb);
}

/* Restore the max-heap below slot 0 of hd/hr (m entries). */
static inline void FN(knn_sift)(T *hd, uint32_t *hr, size_t m)
{
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= m) break;
        if (c + 1 < m && FN(knn_after)(hd[c + 1], hr[c + 1], hd[c], hr[c])) c++;
        if (!FN(knn_after)(hd[c], hr[c], hd[i], hr[i])) break;
        T td = hd[i]; hd[i] = hd[c]; hd[c] = td;
        uint32_t tr = hr[i]; hr[i] = hr[c]; hr[c] = tr;
        i = c;
    }
}

/* Insert (d2, row) into a max-heap of m < k entries. */
static inline void FN(knn_push)(T *hd, uint32_t *hr, size_t m, T d2, uint32_t row)
{
    size_t i = m;
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (!FN(knn_after)(d2, row, hd[parent], hr[parent])) break;
        hd[i] = hd[parent];
        hr[i] = hr[parent];
        i = parent;
    }
    hd[i] = d2;
    hr[i] = row;
}

/* Offer (d2, row) to a heap of *m entries holding at most k. */
static inline void FN(knn_offer)(T *hd, uint32_t *hr, size_t *m, size_t k, T d2, uint32_t row)
{
    if (*m < k) {
        FN(knn_push)(hd, hr, (*m)++, d2, row);
    } else if (FN(knn_after)(hd[0], hr[0], d2, row)) {
        hd[0] = d2;
        hr[0] = row;
        FN(knn_sift)(hd, hr, *m);
    }
}

/* Heap sort in place: m entries ascending by (d2, row). */
static inline void FN(knn_sort)(T *hd, uint32_t *hr, size_t m)
{
    for (size_t end = m; end > 1; end--) {
        T td = hd[0]; hd[0] = hd[end - 1]; hd[end - 1] = td;
        uint32_t tr = hr[0]; hr[0] = hr[end - 1]; hr[end - 1] = tr;
        FN(knn_sift)(hd, hr, end - 1);
    }
}
