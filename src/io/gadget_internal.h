/* What the snapshot readers share (gadget.c drives them): a reader scans
 * one file of a snapshot (its header, its counts, the structure of what
 * the params ask) and later reads that file's chosen particles into place.
 * Messages from a reader carry no file name; gadget.c prefixes it. */
#ifndef GROVE_GADGET_INTERNAL_H
#define GROVE_GADGET_INTERNAL_H

#include "io_internal.h"

/* One file of a snapshot, as a scan finds it. */
typedef struct grove__gadget_file {
    grove_gadget_header header;
    uint64_t count[GROVE_GADGET_TYPES]; /* this file's particles of each type */
    int width;                          /* widest stored coordinate or velocity of the chosen types (4, 8; 0: none) */
} grove__gadget_file;

/* Where the next particles of each type go: out's arrays are allocated for
 * every file's chosen particles, and at[t] is the next row of type t. */
typedef struct grove__gadget_dest {
    grove_gadget *out;
    unsigned types, fields; /* the chosen types (bit t) and fields */
    size_t at[GROVE_GADGET_TYPES];
} grove__gadget_dest;

/* Refuse params with an unknown dtype, field or type (naming it). */
grove_status grove__gadget_check_params(const grove_gadget_params *params);

/* The types params choose among a header's (bit t: type t). */
unsigned grove__gadget_types(const grove_gadget_params *params, int types);

/* out's arrays for the chosen types of totals (count[t] = total[t] of
 * each chosen type), with dtype and fields; rows start at dest->at. */
grove_status grove__gadget_alloc(grove_gadget *out, const grove_gadget_params *params, const uint64_t *total,
                                 int types, grove_dtype dtype, grove__gadget_dest *dest);

/* The readers read a field this many rows at a time and check each piece
 * as soon as it is read, while it is in the cache. */
enum { GROVE__GADGET_CHUNK = 1 << 18 };

/* A check of values read into place: `count` rows from row `first` of
 * what ("PartType1/Coordinates"); the message names what and the row. */
typedef grove_status (*grove__gadget_check)(const void *rows, grove_dtype dtype, size_t count, size_t first,
                                            const char *what);
/* Rows of 3 coordinates in dtype, finite. */
grove_status grove__gadget_check_vectors(const void *rows, grove_dtype dtype, size_t count, size_t first,
                                         const char *what);
/* float64 masses (dtype unused), finite and >= 0. */
grove_status grove__gadget_check_masses(const void *rows, grove_dtype dtype, size_t count, size_t first,
                                        const char *what);

/* Gadget-2 binary files (gadget2.c). */
grove_status grove__gadget2_scan(const char *path, const grove_gadget_params *params, grove__gadget_file *file);
grove_status grove__gadget2_read(const char *path, const grove__gadget_file *file, grove__gadget_dest *dest);
/* The format of a file's first `len` bytes (GROVE__GADGET_SNIFF_BYTES of
 * them suffice; GROVE_GADGET_NONE when they start neither format). */
enum { GROVE__GADGET_SNIFF_BYTES = 264 };
grove_gadget_format grove__gadget2_sniff(const unsigned char *head, size_t len);

/* HDF5 files (hdf5_read.c; GROVE_UNSUPPORTED without libhdf5). */
grove_status grove__hdf5_scan(const char *path, const grove_gadget_params *params, grove__gadget_file *file);
grove_status grove__hdf5_read(const char *path, const grove__gadget_file *file, grove__gadget_dest *dest);

#endif
