/* The words that differ between OpenCL C (1.2) and CUDA, so every kernel
 * is written once in the subset both compile (kernels/NAME.h): OpenCL builds
 * them from the source embedded in libgrove (the Makefile inlines
 * all.h's includes), nvcc compiles all.h into libgrove_cuda.so.
 *
 *   KERNEL            a kernel (CUDA: extern "C", so its name is the same)
 *   DEVFN             a function called from kernels
 *   GLOBAL, LOCAL     the address spaces of pointers to global and local
 *                     (shared) memory
 *   LOCAL_ARRAY       a fixed-size local array declared in a kernel
 *   DYN_LOCAL_PARAM   the last parameter of every kernel: its dynamic
 *                     local memory (the launch's local_bytes), which
 *                     DYN_LOCAL(type) points to
 *   BARRIER()         a work-group barrier, local and global memory fenced
 *   GROUP_ID(), LOCAL_ID(), GROUP_SIZE(), GROUPS()   one-dimensional ids
 *   ATOMIC_ADD(p, v)  32-bit unsigned add, to global or local memory,
 *                     returning the old value; ATOMIC_OR(p, v) likewise
 *   u32, u64, i32     integer types of fixed width
 *   XADD(a, b), XMUL(a, b)  the sum and product of two floats or doubles
 *                     rounded once each, never contracted to a fused
 *                     multiply-add (the join's distances must round as the
 *                     CPU's do)
 *
 * CUDA-only pieces stay out of the kernels; where a kernel needs them they
 * are behind GROVE_CUDA with a portable twin beside. */
#ifndef GROVE_DEVICE_KERNELS_H
#define GROVE_DEVICE_KERNELS_H

#ifdef __OPENCL_VERSION__
#ifdef GROVE_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
#define KERNEL __kernel
#define DEVFN static inline
#define GLOBAL __global
#define LOCAL __local
#define LOCAL_ARRAY __local
#define DYN_LOCAL_PARAM , __local uchar *grove_dyn_local
#define DYN_LOCAL(type) ((__local type *)grove_dyn_local)
#define BARRIER() barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE)
#define GROUP_ID() ((u32)get_group_id(0))
#define LOCAL_ID() ((u32)get_local_id(0))
#define GROUP_SIZE() ((u32)get_local_size(0))
#define GROUPS() ((u32)get_num_groups(0))
#define ATOMIC_ADD(p, v) atomic_add((p), (v))
#define ATOMIC_OR(p, v) atomic_or((p), (v))
typedef uint u32;
typedef int i32;
typedef ulong u64;
/* Contraction is off for every kernel file but the ones that turn it on
 * (gravity.h); XADD and XMUL are then the plain operators. */
#pragma OPENCL FP_CONTRACT OFF
#define XADD(a, b) ((a) + (b))
#define XMUL(a, b) ((a) * (b))
#else /* CUDA */
#define GROVE_CUDA 1
#define GROVE_FP64 1
#define KERNEL extern "C" __global__
#define DEVFN static __device__ __forceinline__
#define GLOBAL
#define LOCAL
#define LOCAL_ARRAY __shared__
#define DYN_LOCAL_PARAM
extern __shared__ __align__(16) unsigned char grove_dyn_local[];
#define DYN_LOCAL(type) ((type *)grove_dyn_local)
#define BARRIER() __syncthreads()
#define GROUP_ID() ((u32)blockIdx.x)
#define LOCAL_ID() ((u32)threadIdx.x)
#define GROUP_SIZE() ((u32)blockDim.x)
#define GROUPS() ((u32)gridDim.x)
#define ATOMIC_ADD(p, v) atomicAdd((p), (v))
#define ATOMIC_OR(p, v) atomicOr((p), (v))
typedef unsigned int u32;
typedef int i32;
typedef unsigned long long u64;
/* nvcc contracts a * b + c by default; these round each operation. */
static __device__ __forceinline__ float grove_xadd(float a, float b) { return __fadd_rn(a, b); }
static __device__ __forceinline__ double grove_xadd(double a, double b) { return __dadd_rn(a, b); }
static __device__ __forceinline__ float grove_xmul(float a, float b) { return __fmul_rn(a, b); }
static __device__ __forceinline__ double grove_xmul(double a, double b) { return __dmul_rn(a, b); }
#define XADD(a, b) grove_xadd((a), (b))
#define XMUL(a, b) grove_xmul((a), (b))
#endif

#endif
