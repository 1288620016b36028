/* grove__join_visit: the self-join's pairs to a callback (visit.h). */
#include "join_run.h"

#include <math.h>
#include <string.h>

grove_status grove__join_visit(const grove_index *index, const grove__join_visitor *visitor,
                               const grove_options *options)
{
    if (!index) return grove__fail(GROVE_INVALID_ARGUMENT, "join visit: index is NULL");
    if (!visitor || !visitor->fn) return grove__fail(GROVE_INVALID_ARGUMENT, "join visit: the pair callback is NULL");
    if (!(visitor->eps >= 0) || !isfinite(visitor->eps))
        return grove__fail(GROVE_INVALID_ARGUMENT, "join visit: eps = %g; it must be finite and >= 0", visitor->eps);
    if (visitor->once && visitor->queries)
        return grove__fail(GROVE_INVALID_ARGUMENT, "join visit: a query subset needs the every-pair mode");
    if (!visitor->once && (visitor->block || visitor->settled))
        return grove__fail(GROVE_INVALID_ARGUMENT, "join visit: the group shortcuts need the once mode");
    join_pass p;
    memset(&p, 0, sizeof p);
    p.eps2 = grove__join_eps2(index, visitor->eps);
    p.prune2 = grove__join_prune2(index, index, visitor->eps);
    p.link2 = visitor->block ? grove__join_link2(index, visitor->eps) : -1;
    p.row0 = 0;
    p.row1 = index->n;
    p.visit = visitor;
    grove_status s = grove__join_run(index, index, &p, options, "join visit");
    if (s == GROVE_CANCELLED && !grove__cancelled(options))
        return grove__fail(GROVE_CANCELLED, "join visit: the pair callback stopped the pass");
    return s;
}
