/* The HDF5 part (src/io/hdf5_*.c) in a build without libhdf5: HDF5 files
 * are refused, saying why. The Makefile compiles this file instead of
 * those when libhdf5 is not found (or HDF5=0). */
#include "gadget_internal.h"

static grove_status no_hdf5(const char *what)
{
    return grove__fail(GROVE_UNSUPPORTED, "%s, and this grove was built without libhdf5 (grove info; install "
                                          "libhdf5-dev and rebuild)", what);
}

const char *grove_hdf5_version(void)
{
    grove__fail(GROVE_UNSUPPORTED, "this grove was built without libhdf5 (install libhdf5-dev and rebuild)");
    return NULL;
}

grove_status grove__hdf5_scan(const char *path, const grove_gadget_params *params, grove__gadget_file *file)
{
    (void)path, (void)params, (void)file;
    return no_hdf5("an HDF5 file");
}

grove_status grove__hdf5_read(const char *path, const grove__gadget_file *file, grove__gadget_dest *dest)
{
    (void)path, (void)file, (void)dest;
    return no_hdf5("an HDF5 file");
}

grove_status grove_gadget_write_hdf5(const char *path, const grove_gadget *snap, const double *potential)
{
    grove__clear_error();
    (void)path, (void)snap, (void)potential;
    return no_hdf5("gadget_write_hdf5: writes HDF5");
}

grove_status grove_fof_write_hdf5(const char *path, const grove_gadget_header *header,
                                  const grove_fof_catalogue *catalogue, const uint64_t *ids, size_t nids)
{
    grove__clear_error();
    (void)path, (void)header, (void)catalogue, (void)ids, (void)nids;
    return no_hdf5("fof_write_hdf5: writes HDF5");
}
