/* grove_fof on one process: friends-of-friends groups. The self-join's
 * components pass on a grove_index joins the pairs within the linking
 * length in a concurrent union-find (no pair is stored), whose roots are
 * the components' smallest members; grove__fof_number ranks the
 * components and grove__fof_catalogue describes them. On several MPI
 * ranks the dispatch layer chooses grove__mpi_fof (src/mpi/fof.c). */
#include "cluster.h"
#include "fof_internal.h"
#include "../join/join_internal.h"
#include "parallel.h"
#include "union_find.h"
#include "../join/visit.h"

#include <math.h>
#include <string.h>

void grove_fof_params_init(grove_fof_params *params)
{
    if (!params) return;
    params->linking_length = 0;
    params->min_members = 20;
    grove_index_params_init(&params->index);
}

static grove_status check_params(const grove_fof_params *params)
{
    if (!params) return grove__fail(GROVE_INVALID_ARGUMENT, "fof: params is NULL");
    if (!(params->linking_length >= 0) || !isfinite(params->linking_length))
        return grove__fail(GROVE_INVALID_ARGUMENT, "fof: linking_length = %g; it must be finite and >= 0",
                           params->linking_length);
    if (params->min_members < 1)
        return grove__fail(GROVE_INVALID_ARGUMENT, "fof: min_members = 0; it must be at least 1");
    return GROVE_OK;
}

/* Masses finite and > 0, velocities finite; the first bad value named by
 * its row in the whole input (this part's row 0 is row `first`). */
static grove_status check_particles(size_t n, size_t d, size_t first, const double *mass, const double *velocity)
{
    for (size_t i = 0; mass && i < n; i++)
        if (!(mass[i] > 0) || !isfinite(mass[i]))
            return grove__fail(GROVE_INVALID_ARGUMENT, "fof: mass[%zu] = %g; masses must be finite and > 0",
                               first + i, mass[i]);
    for (size_t i = 0; velocity && i < n; i++)
        for (size_t j = 0; j < d; j++)
            if (!isfinite(velocity[i * d + j]))
                return grove__fail(GROVE_INVALID_ARGUMENT, "fof: velocity[%zu][%zu] = %g; velocities must be finite",
                                   first + i, j, velocity[i * d + j]);
    return GROVE_OK;
}

grove_status grove__fof_begin(grove_points points, const double *mass, const double *velocity,
                              const grove_fof_params *params, const int64_t *group, size_t *groups,
                              grove_fof_catalogue *catalogue, size_t first, int threads)
{
    grove__clear_error();
    if (groups) *groups = 0;
    if (catalogue) memset(catalogue, 0, sizeof *catalogue);
    double magnitude;
    grove_status s = check_params(params);
    if (s == GROVE_OK) s = grove__points_validate_part(points, first, threads, &magnitude);
    if (s == GROVE_OK && points.n > 0 && !group) s = grove__fail(GROVE_INVALID_ARGUMENT, "fof: group is NULL");
    if (s == GROVE_OK) s = check_particles(points.n, points.d, first, mass, velocity);
    return s;
}

grove_status grove__fof_local(grove_points points, const double *mass, const double *velocity,
                              const grove_fof_params *params, int64_t *group, size_t *groups,
                              grove_fof_catalogue *catalogue, const grove_options *options)
{
    int threads = grove__options(options).threads;
    grove_status s = grove__fof_begin(points, mass, velocity, params, group, groups, catalogue, 0, threads);
    if (s != GROVE_OK) return s;
    size_t n = points.n, ngroups = 0;
    grove_index *index = NULL;
    grove__uf uf = {NULL, 0};
    double *box = NULL;
    if (n > 0) {
        s = grove__index_create_local(points, &params->index, options, &index);
        /* The catalogue's box: the index's lengths by input dimension. */
        if (s == GROVE_OK && catalogue && index->boxsize) {
            box = grove__malloc(points.d * sizeof *box, "fof box");
            if (!box) s = GROVE_OUT_OF_MEMORY;
            else grove_index_boxsize(index, box);
        }
        if (s == GROVE_OK) s = grove__uf_init(&uf, n, grove__threads_for(threads, n));
        if (s == GROVE_OK) s = grove__join_connect(index, params->linking_length, NULL, &uf, options);
        if (s == GROVE_OK) {
            grove__uf_flatten(&uf);
            s = grove__fof_number(uf.parent, n, params->min_members, grove__threads_for(threads, n), group,
                                  &ngroups);
        }
    }
    grove__uf_free(&uf);
    if (s == GROVE_OK && catalogue)
        s = grove__fof_catalogue(points, mass, velocity, box, group, ngroups, grove__threads_for(threads, n),
                                 catalogue);
    grove__free(box);
    grove_index_free(index);
    if (s == GROVE_OK && groups) *groups = ngroups;
    return s;
}

grove_status grove_fof_mean_separation(grove_points points, const double *boxsize, size_t boxsize_count,
                                       double *separation)
{
    grove__clear_error();
    if (!separation) return grove__fail(GROVE_INVALID_ARGUMENT, "fof mean separation: separation is NULL");
    *separation = 0;
    grove_status s = grove_points_validate(points);
    if (s != GROVE_OK) return s;
    size_t n = points.n, d = points.d, stride = grove__points_stride(points);
    if (n == 0) return grove__fail(GROVE_INVALID_ARGUMENT, "fof mean separation: no points");
    if (boxsize_count != 0 && boxsize_count != 1 && boxsize_count != d)
        return grove__fail(GROVE_INVALID_ARGUMENT, "fof mean separation: boxsize_count = %zu; it must be 0, 1 or d = %zu",
                           boxsize_count, d);
    if (boxsize_count && !boxsize)
        return grove__fail(GROVE_INVALID_ARGUMENT, "fof mean separation: boxsize is NULL");
    /* The product of d-th roots, so a large volume does not overflow. */
    double sep = pow(1 / (double)n, 1 / (double)d);
    for (size_t j = 0; j < d; j++) {
        double L = boxsize_count ? boxsize[boxsize_count == 1 ? 0 : j] : 0;
        if (!(L >= 0) || !isfinite(L))
            return grove__fail(GROVE_INVALID_ARGUMENT, "fof mean separation: boxsize[%zu] = %g; it must be finite and "
                               ">= 0", boxsize_count == 1 ? (size_t)0 : j, L);
        if (L == 0) {
            double lo = grove__coord(points, stride, 0, j), hi = lo;
            for (size_t i = 1; i < n; i++) {
                double t = grove__coord(points, stride, i, j);
                lo = t < lo ? t : lo;
                hi = t > hi ? t : hi;
            }
            L = hi - lo;
            if (!(L > 0))
                return grove__fail(GROVE_INVALID_ARGUMENT, "fof mean separation: the points' bounding box has zero "
                                   "volume (every coordinate %zu is %g)", j, lo);
        }
        sep *= pow(L, 1 / (double)d);
    }
    *separation = sep;
    return GROVE_OK;
}
