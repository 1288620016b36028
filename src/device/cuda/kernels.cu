// The device kernels for CUDA: the same source as the OpenCL program
// (kernels/all.h), compiled by nvcc into the fatbin that
// libgrove_cuda.so embeds (Makefile: CUDA_ARCHS).
#include "../kernels/all.h"
