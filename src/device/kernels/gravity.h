/* Gravity on a device: Bonsai's (seed 003) breadth-first group walk with
 * interaction lists, on the tree, moments and groups the host built
 * (src/nbody: the same cells, opening radii and single-precision moments
 * as the CPU's walk reads). One work-group per group of sinks, a
 * work-item per sink:
 *
 *   the group's box (its sinks' only) as the CPU's walk takes it; then
 *   level by level, each cell of the current level is accepted (its
 *   moments go to the cell tile in local memory), opened as a leaf (to
 *   the leaf tile), or its children go to the next level's list (global
 *   scratch per work-group); places come from a work-group prefix sum, so
 *   the lists hold what the CPU's hold, in its order, and the sums do not
 *   depend on scheduling; when a tile is nearly full every work-item
 *   evaluates its sink against it (p2c, p2p in single precision relative
 *   to the group's centre, each tile's sums added into double), then it
 *   is emptied. A group is flagged for the host, which computes it as the
 *   CPU does, when a level list is longer than the scratch, and where the
 *   CPU would walk it again in double: a cell it accepted or opened has
 *   an opening radius below wide_rc2 (GROVE__NB_WIDE_RC2), or a sink's
 *   float sums found another particle on its float position or are not
 *   finite.
 *
 * gravity_direct is theta = 0: the direct sum in double, a group flagged
 * for the host where two of its pairs are at distinct positions whose
 * squared distance underflows (the CPU sums those from scaled
 * differences). Both need the device's double precision (the walk's
 * criterion is in double). */

/* Most sinks per group (grove_gravity_params.group_size) and the tiles. */
#define GRAV_GROUP_MAX 256
#define GRAV_TILE 256
#define GRAV_CREC 11 /* a cell record: x, y, z (relative), m, 3/2 Q (6), 1/2 tr Q */

/* Contraction allowed here: the gravity kernels need no bitwise agreement
 * with the CPU, only the tree's accuracy. */
#ifdef __OPENCL_VERSION__
#pragma OPENCL FP_CONTRACT ON
#define RSQRTF(v) (1.0f / sqrt(v))
#else
#define RSQRTF(v) rsqrtf(v)
#endif

/* One particle-particle term in type T (p2p_t.h's arithmetic): the
 * source at (dx, dy, dz) from the sink, mass m, added to ax, ay, az, ph;
 * a source at the sink's own position is left out and its mass added to
 * at (rs: 1 / sqrt in T). */
#define GRAV_RSQRT_D(v) (1 / sqrt(v))
#define GRAV_P2P(T, rs, dx, dy, dz, m, eps2)                                                                 \
    {                                                                                                        \
        T d2_ = dx * dx + dy * dy + dz * dz;                                                                 \
        T rinv_ = d2_ > 0 ? rs(d2_ + eps2) : 0;                                                              \
        T mr_ = m * rinv_, mr3_ = mr_ * rinv_ * rinv_;                                                       \
        ax += mr3_ * dx;                                                                                     \
        ay += mr3_ * dy;                                                                                     \
        az += mr3_ * dz;                                                                                     \
        ph -= mr_;                                                                                           \
        at += d2_ > 0 ? 0 : m;                                                                               \
    }

/* The squared distance from point p to the box centre +- half (zero
 * inside), as grove__nb_box_dist2. */
DEVFN double grav_box_dist2(LOCAL const double *box, GLOBAL const double *p)
{
    double d2 = 0;
    for (int a = 0; a < 3; a++) {
        double d = fabs(p[a] - box[a]) - box[3 + a];
        d = d > 0 ? d : 0;
        d2 += d * d;
    }
    return d2;
}

/* A work-item's sums over one pair of tiles (grav_tiles), in single
 * precision: the leaves' a, potential and the mass at the sink's own
 * position, then the cells' a and potential. */
#define GRAV_SUMS 9

/* The sink (sx, sy, sz: relative to the group's centre) against the cell
 * tile (nc records) and the leaves' particles (nl leaves), as the CPU's
 * p2c and p2p (src/nbody/kernel.c, p2p_t.h), into sums[0 .. GRAV_SUMS)
 * (the work-item's slot of local memory). */
DEVFN void grav_tiles(LOCAL const float *crec, u32 nc, LOCAL const u32 *leaves, u32 nl, GLOBAL const u32 *cells,
                      GLOBAL const double *x, u64 cap, LOCAL const double *box, float sx, float sy, float sz,
                      float eps2, LOCAL float *sums)
{
    float ax = 0, ay = 0, az = 0, ph = 0, at = 0;
    for (u32 l = 0; l < nl; l++) {
        u32 k = leaves[l], pe = cells[5 * (u64)k + 1];
        for (u32 p = cells[5 * (u64)k]; p < pe; p++) {
            float dx = (float)(x[p] - box[0]) - sx, dy = (float)(x[cap + p] - box[1]) - sy;
            float dz = (float)(x[2 * cap + p] - box[2]) - sz, m = (float)x[3 * cap + p];
            GRAV_P2P(float, RSQRTF, dx, dy, dz, m, eps2)
        }
    }
    sums[0] = ax;
    sums[1] = ay;
    sums[2] = az;
    sums[3] = ph;
    sums[4] = at;
    ax = ay = az = ph = 0;
    for (u32 c = 0; c < nc; c++) {
        LOCAL const float *r = crec + c * GRAV_CREC;
        float dx = sx - r[0], dy = sy - r[1], dz = sz - r[2];
        float r2 = dx * dx + dy * dy + dz * dz + eps2;
        float y = RSQRTF(r2), y2 = y * y, y3 = y * y2;
        float qx = r[4] * dx + r[7] * dy + r[8] * dz;
        float qy = r[7] * dx + r[5] * dy + r[9] * dz;
        float qz = r[8] * dx + r[9] * dy + r[6] * dz;
        float A = (qx * dx + qy * dy + qz * dz) * y2 - r[10];
        float m = r[3];
        ph -= y * (m + y2 * A);
        float C = y3 * (m + y2 * (5.0f * A + 2.0f * r[10])), D = 2.0f * y3 * y2;
        ax += D * qx - C * dx;
        ay += D * qy - C * dy;
        az += D * qz - C * dz;
    }
    sums[5] = ax;
    sums[6] = ay;
    sums[7] = az;
    sums[8] = ph;
}

/* Each list's float sums added into the sink's double ones, as the CPU
 * adds them. */
#define GRAV_ADD(s)                                                                                          \
    {                                                                                                        \
        ax += (double)(s)[0], ay += (double)(s)[1], az += (double)(s)[2], phi += (double)(s)[3];             \
        at += (double)(s)[4];                                                                                \
        ax += (double)(s)[5], ay += (double)(s)[6], az += (double)(s)[7], phi += (double)(s)[8];             \
    }

/* Groups g0 + GROUP_ID(): sinks sink[group[g] .. group[g + 1]) (tree
 * positions); cells as five 32-bit words (begin, end, child, parent,
 * nchild | level << 8); cm 4 per cell, rc2 the squared opening radius,
 * fmom 8 floats per cell; x 4 columns cap apart (x, y, z, m). Results
 * into out (4 columns: a, potential, unscaled by G), the group's
 * particle and cell interaction counts into tally[2 g], tally[2 g + 1];
 * overflow[g] = 1 when the group is the host's (a level did not fit the
 * level_cap entries of the work-group's scratch, or the CPU would walk it
 * in double; its results are then not written). */
KERNEL void gravity_walk(u32 g0, GLOBAL const u32 *cells, GLOBAL const double *cm, GLOBAL const double *rc2,
                         GLOBAL const float *fmom, GLOBAL const double *x, u64 cap, GLOBAL const u32 *sink,
                         GLOBAL const u32 *group, float eps2f, double eps2, double wide_rc2, GLOBAL u32 *scratch,
                         u32 level_cap, GLOBAL double *out, GLOBAL double *tally, GLOBAL u32 *overflow DYN_LOCAL_PARAM)
{
    LOCAL_ARRAY double box[6];
    LOCAL_ARRAY float crec[GRAV_TILE * GRAV_CREC];
    LOCAL_ARRAY u32 leaves[GRAV_TILE];
    LOCAL_ARRAY u64 buf[GRAV_GROUP_MAX];
    LOCAL_ARRAY float sums[GRAV_SUMS * GRAV_GROUP_MAX];
    /* Cells and leaves in the tiles, cells in the next level, and whether
     * the group is the host's (wide). */
    LOCAL_ARRAY u32 state[4];
    u32 lid = LOCAL_ID(), wg = GROUP_SIZE(), slot = GROUP_ID(), g = g0 + slot;
    u32 b = group[g], nsinks = group[g + 1] - b;
    GLOBAL u32 *cur = scratch + (u64)slot * 2 * level_cap, *next = cur + level_cap;
    if (lid == 0) {
        /* The box of the group's sinks, as grove__nb_walk_begin takes it. */
        double lo[3], hi[3];
        for (int a = 0; a < 3; a++) lo[a] = hi[a] = x[a * cap + sink[b]];
        for (u32 j = 1; j < nsinks; j++)
            for (int a = 0; a < 3; a++) {
                double v = x[a * cap + sink[b + j]];
                lo[a] = v < lo[a] ? v : lo[a];
                hi[a] = v > hi[a] ? v : hi[a];
            }
        for (int a = 0; a < 3; a++) {
            box[a] = 0.5 * (lo[a] + hi[a]);
            box[3 + a] = 0.5 * (hi[a] - lo[a]);
        }
        cur[0] = 0;
        state[0] = state[1] = state[2] = state[3] = 0;
    }
    BARRIER();
    u32 me = sink[b + (lid < nsinks ? lid : 0)];
    float sx = (float)(x[me] - box[0]), sy = (float)(x[cap + me] - box[1]), sz = (float)(x[2 * cap + me] - box[2]);
    LOCAL float *mine = sums + GRAV_SUMS * lid;
    double ax = 0, ay = 0, az = 0, phi = 0, at = 0;
    double np = 0, nc = 0;
    u32 ncur = 1, spilled = 0;
    while (ncur > 0 && !spilled) {
        for (u32 base = 0; base < ncur; base += wg) {
            u32 i = base + lid, k = 0, what = 0, nchild = 0;
            if (i < ncur) {
                k = cur[i];
                nchild = cells[5 * (u64)k + 4] & 0xff;
                if (grav_box_dist2(box, cm + 4 * (u64)k) > rc2[k]) what = 1;
                else if (nchild == 0) what = 1u << 10;
                else what = nchild << 20;
                if (what && what < (1u << 20) && rc2[k] < wide_rc2) ATOMIC_OR(&state[3], 1u);
            }
            /* Accepted cells in bits 0-9, leaves 10-19, children 20-31. */
            u32 upto = (u32)scan_local(buf, what, lid, wg), before = upto - what, total = (u32)buf[wg - 1];
            u32 cbase = state[0], lbase = state[1], nbase = state[2];
            if (what & 0x3ff) {
                LOCAL float *r = crec + (cbase + (before & 0x3ff)) * GRAV_CREC;
                for (int a = 0; a < 3; a++) r[a] = (float)(cm[4 * (u64)k + a] - box[a]);
                for (int a = 0; a < 8; a++) r[3 + a] = fmom[8 * (u64)k + a];
            } else if (what & (0x3ffu << 10)) {
                leaves[lbase + ((before >> 10) & 0x3ff)] = k;
            } else if (what) {
                u32 at = nbase + (before >> 20), child = cells[5 * (u64)k + 2];
                for (u32 c = 0; c < nchild && at + c < level_cap; c++) next[at + c] = child + c;
            }
            BARRIER();
            if (lid == 0) {
                state[0] += total & 0x3ff;
                state[1] += (total >> 10) & 0x3ff;
                state[2] += total >> 20;
            }
            BARRIER();
            /* Nearly full tiles are evaluated and emptied, and so are the
             * last ones when the walk ends with this chunk (no cell goes
             * to a next level): one place evaluates, because PoCL
             * miscompiles the kernel with a second. Every work-item meets
             * the barriers either way. */
            int full = state[0] > GRAV_TILE - wg || state[1] > GRAV_TILE - wg ||
                       (base + wg >= ncur && state[2] == 0);
            if (full && lid < nsinks) {
                grav_tiles(crec, state[0], leaves, state[1], cells, x, cap, box, sx, sy, sz, eps2f, mine);
                GRAV_ADD(mine)
            }
            if (full && lid == 0) {
                for (u32 l = 0; l < state[1]; l++)
                    np += (double)(cells[5 * (u64)leaves[l] + 1] - cells[5 * (u64)leaves[l]]);
                nc += (double)state[0];
            }
            BARRIER();
            if (full && lid == 0) state[0] = state[1] = 0;
            BARRIER();
        }
        ncur = state[2];
        spilled = ncur > level_cap;
        GLOBAL u32 *t = cur;
        cur = next;
        next = t;
        BARRIER();
        if (lid == 0) state[2] = 0;
        BARRIER();
    }
    /* Another particle on a sink's float position (more than its own
     * float mass at zero distance), or sums that are not finite: the CPU
     * computes the group in double. */
    float self_m = (float)x[3 * cap + me];
    if (lid < nsinks && (at > (double)self_m || !isfinite(ax + ay + az + phi))) ATOMIC_OR(&state[3], 1u);
    BARRIER();
    int wide = state[3] != 0;
    if (!spilled && !wide && lid < nsinks) {
        /* The potential of the sink's coincident partners, which p2p
         * leaves out: -(at - m) / eps with the list's float mass. */
        double coincident = eps2 > 0 ? -(at - (double)self_m) / sqrt(eps2) : 0;
        out[me] = ax;
        out[cap + me] = ay;
        out[2 * cap + me] = az;
        out[3 * cap + me] = phi + coincident;
    }
    if (lid == 0) {
        tally[2 * (u64)g] = np * nsinks;
        tally[2 * (u64)g + 1] = nc * nsinks;
        overflow[g] = spilled || wide;
    }
}

/* theta = 0: each sink of group g0 + GROUP_ID() against all n particles
 * in double (tiles of GRAV_GROUP_MAX through local memory), as
 * grove__nb_direct: pairs at r = 0 left out, their mass kept for the
 * coincident potential. */
KERNEL void gravity_direct(u32 g0, GLOBAL const double *x, u64 cap, u32 n, GLOBAL const u32 *sink,
                           GLOBAL const u32 *group, double eps2, GLOBAL double *out, GLOBAL u32 *overflow DYN_LOCAL_PARAM)
{
    LOCAL_ARRAY double tile[4 * GRAV_GROUP_MAX];
    LOCAL_ARRAY u32 close[1];
    u32 lid = LOCAL_ID(), wg = GROUP_SIZE(), g = g0 + GROUP_ID();
    u32 b = group[g], nsinks = group[g + 1] - b;
    u32 me = sink[b + (lid < nsinks ? lid : 0)];
    double xi = x[me], yi = x[cap + me], zi = x[2 * cap + me];
    double ax = 0, ay = 0, az = 0, ph = 0, at = 0;
    u32 apart = 0; /* a pair at distinct positions whose squared distance underflows */
    if (lid == 0) close[0] = 0;
    for (u32 p0 = 0; p0 < n; p0 += wg) {
        u32 count = n - p0 < wg ? n - p0 : wg;
        BARRIER();
        if (lid < count)
            for (int a = 0; a < 4; a++) tile[a * GRAV_GROUP_MAX + lid] = x[a * cap + p0 + lid];
        BARRIER();
        for (u32 j = 0; j < count; j++) {
            double dx = tile[j] - xi, dy = tile[GRAV_GROUP_MAX + j] - yi, dz = tile[2 * GRAV_GROUP_MAX + j] - zi;
            double m = tile[3 * GRAV_GROUP_MAX + j];
            apart |= dx * dx + dy * dy + dz * dz == 0 && (dx != 0 || dy != 0 || dz != 0);
            GRAV_P2P(double, GRAV_RSQRT_D, dx, dy, dz, m, eps2)
        }
    }
    if (apart && lid < nsinks) ATOMIC_OR(&close[0], 1u);
    BARRIER();
    if (lid == 0) overflow[g] = close[0];
    if (lid < nsinks && !close[0]) {
        out[me] = ax;
        out[cap + me] = ay;
        out[2 * cap + me] = az;
        out[3 * cap + me] = ph + (eps2 > 0 ? -(at - x[3 * cap + me]) / sqrt(eps2) : 0);
    }
}

#ifdef __OPENCL_VERSION__
#pragma OPENCL FP_CONTRACT OFF
#endif
