/* What the HDF5 reader and writers share (hdf5_util.c). The Makefile
 * builds src/io/hdf5_*.c only with libhdf5; src/io/without_hdf5.c answers
 * for them otherwise. */
#ifndef GROVE_HDF5_INTERNAL_H
#define GROVE_HDF5_INTERNAL_H

#include "gadget_internal.h"

#include <hdf5.h>

/* Every use of libhdf5 lies between these: one thread at a time (a
 * serial libhdf5 is not thread-safe), libhdf5's own printing of errors
 * off and the caller's handler restored at the end. */
void grove__hdf5_enter(void);
void grove__hdf5_leave(void);

/* Fail with status and the message (printf-style) followed by ": " and
 * the innermost error libhdf5 reported, when it reported one. */
grove_status grove__hdf5_fail(grove_status status, const char *fmt, ...) GROVE__PRINTF(2, 3);

/* Close an identifier of any kind when it is valid (>= 0). */
void grove__hdf5_close(hid_t id);

#endif
