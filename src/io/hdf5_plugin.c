/* The plugin's side of hdf5_plugin.h: the libgrove internals the HDF5
 * files call, each forwarded to the host's, and the table libgrove
 * loads. Only that table leaves the plugin (hdf5_plugin.map). */
#include "hdf5_plugin.h"

#include <stdio.h>

static const grove__hdf5_host *host;

static void attach(const grove__hdf5_host *h) { host = h; }

grove_status grove__fail(grove_status status, const char *fmt, ...)
{
    char message[GROVE__ERROR_CAPACITY];
    va_list args;
    va_start(args, fmt);
    vsnprintf(message, sizeof message, fmt, args);
    va_end(args);
    host->set_error(message);
    return status;
}

void grove__error_prefix(const char *context) { host->error_prefix(context); }
void grove__clear_error(void) { host->clear_error(); }
void *grove__malloc(size_t size, const char *what) { return host->malloc(size, what); }
void grove__free(void *ptr) { host->free(ptr); }
char *grove__temp_name(const char *path) { return host->temp_name(path); }
size_t grove_dtype_size(grove_dtype dtype) { return host->dtype_size(dtype); }
const char *grove_dtype_name(grove_dtype dtype) { return host->dtype_name(dtype); }

unsigned grove__gadget_types(const grove_gadget_params *params, int types)
{
    return host->gadget_types(params, types);
}

grove_status grove__gadget_check_vectors(const void *rows, grove_dtype dtype, size_t count, size_t first,
                                         const char *what)
{
    return host->check_vectors(rows, dtype, count, first, what);
}

grove_status grove__gadget_check_masses(const void *rows, grove_dtype dtype, size_t count, size_t first,
                                        const char *what)
{
    return host->check_masses(rows, dtype, count, first, what);
}

__attribute__((visibility("default"))) const grove__hdf5_table grove__hdf5_plugin = {
    GROVE__HDF5_ABI,  attach,           grove_hdf5_version,  grove__hdf5_scan,
    grove__hdf5_read, grove_gadget_write_hdf5, grove_fof_write_hdf5};
