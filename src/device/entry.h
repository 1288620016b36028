/* The device column of the dispatch layer (src/dispatch): each entry has
 * its public call's type (__typeof__) and contract and runs it on
 * options->device, GROVE_DEVICE_AUTO resolved here (back to the public
 * call with the CPU when that wins). */
#ifndef GROVE_DEVICE_ENTRY_H
#define GROVE_DEVICE_ENTRY_H

#include "internal.h"

/* src/device/join.c */
__typeof__(grove_join_count) grove__device_join_count;
__typeof__(grove_join_fill) grove__device_join_fill;
__typeof__(grove_join_stream) grove__device_join_stream;
__typeof__(grove_join_search) grove__device_join_search;
__typeof__(grove_join) grove__device_join;

/* src/device/gravity.c */
__typeof__(grove_gravity) grove__device_gravity;
__typeof__(grove_nbody_step) grove__device_nbody_step;

#endif
