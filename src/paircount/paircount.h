/* The pair counts' public call on one process (paircount.c): the local
 * column of the dispatch layer (src/dispatch/paircount.c), with its public
 * call's type (__typeof__) and contract. */
#ifndef GROVE_PAIRCOUNT_H
#define GROVE_PAIRCOUNT_H

#include "internal.h"

__typeof__(grove_paircount) grove__paircount_local;

#endif
