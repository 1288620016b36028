/* The HDF5 part as a library of its own: src/io/hdf5_*.c are built into
 * libgrove_hdf5.so, which alone links libhdf5, and libgrove loads it at
 * the first HDF5 call (load_hdf5.c). libhdf5 brings its network drivers'
 * libraries (TLS, Kerberos, LDAP, ...), whose loading and start-up were
 * most of a grove process's start: a process that touches no HDF5 file
 * now never maps them. The plugin calls back into libgrove through the
 * host table (hdf5_plugin.c forwards libgrove's internals to it). */
#ifndef GROVE_HDF5_PLUGIN_H
#define GROVE_HDF5_PLUGIN_H

#include "gadget_internal.h"

#define GROVE__HDF5_LIB "libgrove_hdf5.so"
#define GROVE__HDF5_SYMBOL "grove__hdf5_plugin"
#define GROVE__HDF5_ABI 1

/* What libgrove lends the plugin: its error sentence, its allocator and
 * the helpers the HDF5 files share with the other snapshot formats. */
typedef struct grove__hdf5_host {
    void (*set_error)(const char *message);
    void (*error_prefix)(const char *context);
    void (*clear_error)(void);
    void *(*malloc)(size_t size, const char *what);
    void (*free)(void *ptr);
    char *(*temp_name)(const char *path);
    size_t (*dtype_size)(grove_dtype dtype);
    const char *(*dtype_name)(grove_dtype dtype);
    unsigned (*gadget_types)(const grove_gadget_params *params, int types);
    grove__gadget_check check_vectors, check_masses;
} grove__hdf5_host;

/* What the plugin exports under GROVE__HDF5_SYMBOL; attach comes first. */
typedef struct grove__hdf5_table {
    int abi;
    void (*attach)(const grove__hdf5_host *host);
    const char *(*version)(void);
    __typeof__(grove__hdf5_scan) *scan;
    __typeof__(grove__hdf5_read) *read;
    __typeof__(grove_gadget_write_hdf5) *write_snapshot;
    __typeof__(grove_fof_write_hdf5) *write_catalogue;
} grove__hdf5_table;

#endif
