/* The libhdf5 plumbing the HDF5 reader and writers share: the lock, the
 * error messages, closing, and the version grove_hdf5_version reports. */
#include "hdf5_internal.h"

#include <pthread.h>
#include <stdio.h>

static pthread_mutex_t hdf5_lock = PTHREAD_MUTEX_INITIALIZER;
/* The error handler the caller's program had, restored on leaving. */
static H5E_auto2_t saved_func;
static void *saved_data;

void grove__hdf5_enter(void)
{
    pthread_mutex_lock(&hdf5_lock);
    H5Eget_auto2(H5E_DEFAULT, &saved_func, &saved_data);
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
}

void grove__hdf5_leave(void)
{
    H5Eclear2(H5E_DEFAULT);
    H5Eset_auto2(H5E_DEFAULT, saved_func, saved_data);
    pthread_mutex_unlock(&hdf5_lock);
}

/* The first (innermost) description on the error stack. */
static herr_t innermost(unsigned n, const H5E_error2_t *err, void *data)
{
    char *out = data;
    if (n == 0 && err->desc) snprintf(out, 200, "%s", err->desc);
    return 0;
}

grove_status grove__hdf5_fail(grove_status status, const char *fmt, ...)
{
    char what[300], why[200] = "";
    va_list args;
    va_start(args, fmt);
    vsnprintf(what, sizeof what, fmt, args);
    va_end(args);
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, innermost, why);
    H5Eclear2(H5E_DEFAULT);
    return why[0] ? grove__fail(status, "%s: %s (libhdf5)", what, why) : grove__fail(status, "%s", what);
}

void grove__hdf5_close(hid_t id)
{
    if (id >= 0) H5Idec_ref(id);
}

#define GROVE_STR_(x) #x
#define GROVE_STR(x) GROVE_STR_(x)

const char *grove_hdf5_version(void)
{
    return GROVE_STR(H5_VERS_MAJOR) "." GROVE_STR(H5_VERS_MINOR) "." GROVE_STR(H5_VERS_RELEASE);
}
