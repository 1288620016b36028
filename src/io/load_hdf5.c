/* libgrove's side of hdf5_plugin.h: the HDF5 calls load libgrove_hdf5.so
 * at the first of them and run through its table; where it cannot be
 * loaded they are refused saying why, as without libhdf5. */
#include "hdf5_plugin.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

static void set_error(const char *message) { (void)grove__fail(GROVE_OK, "%s", message); }

static const grove__hdf5_host host = {set_error,
                                      grove__error_prefix,
                                      grove__clear_error,
                                      grove__malloc,
                                      grove__free,
                                      grove__temp_name,
                                      grove_dtype_size,
                                      grove_dtype_name,
                                      grove__gadget_types,
                                      grove__gadget_check_vectors,
                                      grove__gadget_check_masses};

static pthread_once_t once = PTHREAD_ONCE_INIT;
static const grove__hdf5_table *plugin; /* NULL: not loaded, and why */
static char why[800];

static void load(void)
{
    char near[768];
    void *lib = grove__plugin_open(GROVE__HDF5_LIB, near, sizeof near);
    const grove__hdf5_table *p = lib ? (const grove__hdf5_table *)dlsym(lib, GROVE__HDF5_SYMBOL) : NULL;
    if (!lib) {
        snprintf(why, sizeof why, "%s", near);
    } else if (!p || p->abi != GROVE__HDF5_ABI) {
        snprintf(why, sizeof why, "%s is from another version of grove (table %d, want %d)", GROVE__HDF5_LIB,
                 p ? p->abi : -1, GROVE__HDF5_ABI);
        dlclose(lib);
    } else {
        p->attach(&host);
        plugin = p; /* kept open for the process: the table lives in it */
    }
}

/* The plugin, or NULL having failed saying why it is missing (after
 * "what, and " where what is not NULL). */
static const grove__hdf5_table *loaded(const char *what)
{
    pthread_once(&once, load);
    if (!plugin)
        grove__fail(GROVE_UNSUPPORTED, "%s%sgrove's HDF5 part cannot be loaded: %s", what ? what : "",
                    what ? ", and " : "", why);
    return plugin;
}

const char *grove_hdf5_version(void)
{
    const grove__hdf5_table *p = loaded(NULL);
    return p ? p->version() : NULL;
}

grove_status grove__hdf5_scan(const char *path, const grove_gadget_params *params, grove__gadget_file *file)
{
    const grove__hdf5_table *p = loaded("an HDF5 file");
    return p ? p->scan(path, params, file) : GROVE_UNSUPPORTED;
}

grove_status grove__hdf5_read(const char *path, const grove__gadget_file *file, grove__gadget_dest *dest)
{
    const grove__hdf5_table *p = loaded("an HDF5 file");
    return p ? p->read(path, file, dest) : GROVE_UNSUPPORTED;
}

grove_status grove_gadget_write_hdf5(const char *path, const grove_gadget *snap, const double *potential)
{
    grove__clear_error();
    const grove__hdf5_table *p = loaded("gadget_write_hdf5: writes HDF5");
    return p ? p->write_snapshot(path, snap, potential) : GROVE_UNSUPPORTED;
}

grove_status grove_fof_write_hdf5(const char *path, const grove_gadget_header *header,
                                  const grove_fof_catalogue *catalogue, const uint64_t *ids, size_t nids)
{
    grove__clear_error();
    const grove__hdf5_table *p = loaded("fof_write_hdf5: writes HDF5");
    return p ? p->write_catalogue(path, header, catalogue, ids, nids) : GROVE_UNSUPPORTED;
}
