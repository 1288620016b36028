/* grove_index, the join/kNN search index (internal): a grove__tree
 * (index.h) built as a balanced kd-tree of leaf groups over the leading
 * dimensions, with the points' dimensions in variance order, node boxes of
 * the keys, and the queries' own grouping for semi-joins. Its searches are
 * in src/join (the join, kNN) and src/cluster (DBSCAN, FoF). */
#ifndef GROVE_SEARCH_INDEX_H
#define GROVE_SEARCH_INDEX_H

#include "index.h"

/* Up to this many dimensions the index also keeps a structure-of-arrays
 * copy, so refinement vectorises across candidate points; above it the
 * kernels vectorise across dimensions and stop early. */
#define GROVE__JOIN_SOA_MAX 16

struct grove_index {
    /* n, d, dtype; x (n x d, tree order, dimensions in variance order);
     * perm (tree position -> input row, ascending in a leaf); the kd-tree's
     * nodes; dims, the key dimensions (of the boxes, splits and filter);
     * box, nodes x 2 dims of keys (lo then hi, in the dtype). Range:
     * coordinates, keys, mean and radius are stored times 2^-exponent
     * (grove__range_exponent of the data, or of the data and the queries
     * of a grove_join or grove_knn; a query grouping has its data's);
     * squared distances come out in those units. */
    grove__tree tree;
    size_t leaf;         /* most points per leaf group */
    size_t *order;       /* stored dimension j is input dimension order[j] */
    void *xs;            /* d x n (the same as x, by dimension) when d <= SOA_MAX */
    uint32_t *leaves;    /* leaf node numbers in tree order */
    size_t nleaves;
    /* Keys, in tree order: the leading `dims` stored dimensions (keys == x,
     * kstride == d) up to SOA_MAX dimensions; above, the projections onto
     * `dims` principal axes (project.c), kstride == dims. */
    void *keys;
    size_t kstride;
    double *axes;        /* dims x d principal axes over input dimensions, or NULL */
    double *mean;        /* d: the centre the axes project from, or NULL */
    double radius;       /* with axes: the largest |x - mean| */
    double magnitude;    /* the largest |coordinate| of these points (grove__points_validate_range) */
    /* Periodic box (both NULL without one): boxsize[j] is the length of
     * input dimension j (0 = unbounded); period holds 2 d values of the
     * dtype by stored dimension, the length times 2^-exponent then half of
     * it (INFINITY where unbounded), for the minimum-image kernels
     * (dist_t.h); period_max is the largest scaled length. */
    double *boxsize;
    void *period;
    double period_max;
};

/* Build an index of `points` (validated, inside the periodic box if any,
 * any n including 0, largest |coordinate| `magnitude`) times 2^-exponent,
 * converted to `dtype`, storing dimension order[j] j-th; leaf and dims
 * already chosen (axes and mean in the scaled units); boxsize: d lengths
 * by input dimension (0 = unbounded), or NULL. Used for the data and, with
 * the data's order, exponent and box, for semi-join queries. */
grove_status grove__index_build(grove_points points, double magnitude, int exponent, grove_dtype dtype,
                                const size_t *order, const double *axes, const double *mean, size_t dims, size_t leaf,
                                const double *boxsize, int threads, grove_index **out);
/* Whether every coordinate of a periodic dimension lies in [0, L); else
 * the failure names `what` ("data", "queries"), the row and dimension. */
grove_status grove__box_check(grove_points p, const double *boxsize, const char *what, int threads);
/* grove_index_create on this process (the dispatch layer's local column:
 * an index is one process's; src/dispatch/join.c refuses several ranks). */
__typeof__(grove_index_create) grove__index_create_local;
/* grove_index_create with the range taken over the data and the queries
 * (NULL: the data alone), so that those queries can be asked (grove_join,
 * grove_knn). */
grove_status grove__index_build_for(grove_points data, const grove_points *queries, const grove_index_params *params,
                                    const grove_options *options, grove_index **out);
/* The same without a periodic box, in a scale (2^-exponent) and dimension
 * order given by the caller, who validated the points (largest |coordinate|
 * magnitude): a distributed join's local index, whose scale and order come
 * from every rank's points (src/mpi/join.c). params: leaf size and key
 * dimensions (not NULL; its box is ignored). */
grove_status grove__index_build_ordered(grove_points data, double magnitude, int exponent, const size_t *order,
                                        const grove_index_params *params, const grove_options *options,
                                        grove_index **out);
/* The variance order's passes: acc[j] += the sum over the points of their
 * coordinate j times scale (centre NULL) or of its squared deviation from
 * centre[j], summed over the rows in order (so sums continued from one
 * block of rows to the next are those over all of them); and the order by
 * decreasing variance, ties to the lower dimension. */
void grove__dim_sums(grove_points p, double scale, const double *centre, int threads, double *acc);
void grove__dims_by_variance(const double *var, size_t d, size_t *order);

/* The m leading principal axes (m x d, orthonormal rows over the input
 * dimensions) and the centre of a fixed sample of p times scale (a power
 * of two); the search starts from the coordinate axes order[0 .. m). */
grove_status grove__principal_axes(grove_points p, double scale, const size_t *order, size_t m, int threads,
                                   double *axes, double *mean);
/* key[0 .. m) = axes (scale row i of p - mean); returns |scale row i - mean|. */
double grove__project(const double *axes, const double *mean, size_t d, size_t m, grove_points p, double scale,
                      size_t i, double *key);

/* Validate queries against the index (NULL = the indexed points) and, for
 * a semi-join, build their grouping, scaled as the data; *qi is the index
 * itself for a self-join. Queries too large for the index's range (their
 * squared distances to the data could overflow) are refused. Free with
 * grove__queries_release. */
grove_status grove__queries_prepare(const grove_index *index, const grove_points *queries, int exclude_self,
                                    int threads, const grove_index **qi);
void grove__queries_release(const grove_index *index, const grove_index *qi);

#endif
