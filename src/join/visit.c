/* grove__join_visit and grove__join_connect: the self-join's pairs to a
 * callback, or straight into a union-find (visit.h). */
#include "join_run.h"

#include <math.h>
#include <string.h>

static grove_status check_eps(double eps, const char *what)
{
    if (!(eps >= 0) || !isfinite(eps))
        return grove__fail(GROVE_INVALID_ARGUMENT, "%s: eps = %g; it must be finite and >= 0", what, eps);
    return GROVE_OK;
}

/* A pass over the whole self-join of index within eps. */
static join_pass self_pass(const grove_index *index, double eps)
{
    join_pass p;
    memset(&p, 0, sizeof p);
    p.eps2 = grove__join_eps2_key(index, eps);
    p.prune2 = grove__join_prune2(index, index, eps);
    p.link2 = -1;
    p.row0 = 0;
    p.row1 = index->tree.n;
    return p;
}

grove_status grove__join_visit(const grove_index *index, const grove__join_visitor *visitor,
                               const grove_options *options)
{
    if (!index) return grove__fail(GROVE_INVALID_ARGUMENT, "join visit: index is NULL");
    if (!visitor || !visitor->fn) return grove__fail(GROVE_INVALID_ARGUMENT, "join visit: the pair callback is NULL");
    grove_status s = check_eps(visitor->eps, "join visit");
    if (s != GROVE_OK) return s;
    join_pass p = self_pass(index, visitor->eps);
    p.visit = visitor;
    s = grove__join_run(index, index, &p, options, "join visit");
    if (s == GROVE_CANCELLED && !grove__cancelled(options))
        return grove__fail(GROVE_CANCELLED, "join visit: the pair callback stopped the pass");
    return s;
}

grove_status grove__join_connect(const grove_index *index, double eps, const uint8_t *members, grove__uf *uf,
                                 const grove_options *options)
{
    if (!index || !uf) return grove__fail(GROVE_INVALID_ARGUMENT, "join components: index or union-find is NULL");
    if (uf->n != index->tree.n)
        return grove__fail(GROVE_INVALID_ARGUMENT, "join components: the union-find has %zu elements for %zu points",
                           uf->n, index->tree.n);
    grove_status s = check_eps(eps, "join components");
    if (s != GROVE_OK) return s;
    join_connect cn = {uf, members};
    join_pass p = self_pass(index, eps);
    p.connect = &cn;
    p.link2 = grove__join_link2(index, eps);
    return grove__join_run(index, index, &p, options, "join components");
}
