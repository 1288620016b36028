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
#ifdef GROVE_HAVE_PNG
#define GROVE_PNG_TEXT "yes"
#else
#define GROVE_PNG_TEXT "no"
#endif

const char *grove_version(void) { return GROVE_VERSION_STRING; }

const char *grove_build_info(void)
{
    return "compiler: " GROVE_BUILD_CC "\n"
           "flags: " GROVE_BUILD_FLAGS "\n"
           "openmp: " GROVE_OPENMP_TEXT "\n"
           "png: " GROVE_PNG_TEXT "\n"
           "cuda: no\n"
           "mpi: no\n";
}
