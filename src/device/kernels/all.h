/* Every device kernel, in one program: the OpenCL source embedded in
 * libgrove is this file with its includes inlined (the Makefile's rule
 * for device_kernels.inc), and nvcc compiles it for libgrove_cuda.so
 * (cuda/kernels.cu). The double precision join instances and the gravity
 * kernels are built where the device has double precision (GROVE_FP64). */
#include "device.h"
#include "scan.h"

#define T float
#define FN(name) name##_f32
#include "join_sort.h"
#define JOIN_PERIODIC 0
#include "join.h"
#undef JOIN_PERIODIC
#undef FN
#define FN(name) name##_f32p
#define JOIN_PERIODIC 1
#include "join.h"
#undef JOIN_PERIODIC
#undef FN
#undef T

#ifdef GROVE_FP64
#define T double
#define FN(name) name##_f64
#include "join_sort.h"
#define JOIN_PERIODIC 0
#include "join.h"
#undef JOIN_PERIODIC
#undef FN
#define FN(name) name##_f64p
#define JOIN_PERIODIC 1
#include "join.h"
#undef JOIN_PERIODIC
#undef FN
#undef T

#include "gravity.h"
#endif
