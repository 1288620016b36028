/* Version and build description (the Makefile passes the facts in). */
#include "internal.h"

#ifndef GROVE_BUILD_CC
#define GROVE_BUILD_CC "unknown compiler"
#endif
#ifndef GROVE_BUILD_FLAGS
#define GROVE_BUILD_FLAGS "unknown flags"
#endif
#ifdef _OPENMP
#define GROVE_OPENMP_TEXT "yes"
#else
#define GROVE_OPENMP_TEXT "no"
#endif
#ifdef GROVE_HAVE_MPI
#include <mpi.h>
#define GROVE_STR_(x) #x
#define GROVE_STR(x) GROVE_STR_(x)
#if defined(OPEN_MPI)
#define GROVE_MPI_TEXT "yes (Open MPI " GROVE_STR(OMPI_MAJOR_VERSION) "." GROVE_STR(OMPI_MINOR_VERSION) "." \
                       GROVE_STR(OMPI_RELEASE_VERSION) ", MPI " GROVE_STR(MPI_VERSION) "." GROVE_STR(MPI_SUBVERSION) ")"
#elif defined(MPICH_VERSION)
#define GROVE_MPI_TEXT "yes (MPICH " MPICH_VERSION ", MPI " GROVE_STR(MPI_VERSION) "." GROVE_STR(MPI_SUBVERSION) ")"
#else
#define GROVE_MPI_TEXT "yes (MPI " GROVE_STR(MPI_VERSION) "." GROVE_STR(MPI_SUBVERSION) ")"
#endif
#else
#define GROVE_MPI_TEXT "no"
#endif
#ifdef GROVE_HAVE_PNG
#define GROVE_PNG_TEXT "yes"
#else
#define GROVE_PNG_TEXT "no"
#endif
#ifdef GROVE_HAVE_HDF5
#include <H5public.h>
#define GROVE_HSTR_(x) #x
#define GROVE_HSTR(x) GROVE_HSTR_(x)
#define GROVE_HDF5_TEXT "yes (libhdf5 " GROVE_HSTR(H5_VERS_MAJOR) "." GROVE_HSTR(H5_VERS_MINOR) "." \
                        GROVE_HSTR(H5_VERS_RELEASE) " in libgrove_hdf5.so, loaded at the first HDF5 file: " \
                        "HDF5 snapshots and FoF catalogues)"
#else
#define GROVE_HDF5_TEXT "no (HDF5 snapshots need libhdf5: install libhdf5-dev and rebuild)"
#endif

const char *grove_version(void) { return GROVE_VERSION_STRING; }

const char *grove_build_info(void)
{
    return "compiler: " GROVE_BUILD_CC "\n"
           "flags: " GROVE_BUILD_FLAGS "\n"
           "openmp: " GROVE_OPENMP_TEXT "\n"
           "png: " GROVE_PNG_TEXT "\n"
           "hdf5: " GROVE_HDF5_TEXT "\n"
           "mpi: " GROVE_MPI_TEXT "\n";
}
