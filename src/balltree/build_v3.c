/* The ball tree builder (build.c) a second time, for processors with
 * AVX2, BMI1, BMI2, LZCNT and POPCNT: the Makefile compiles this file
 * alone with those instructions allowed and its loops unrolled (on
 * x86-64, unless NATIVE=1 allows more everywhere), and
 * grove_balltree_build hands each call here where the processor has
 * them. The builders' AVX-512 and AVX2 kernels are picked at run time
 * either way, and the output is the same bytes; what changes is the code
 * around them, which the portable build compiles for the first x86-64:
 * its shifts by a variable count (radix digits, record fields) are two or
 * three micro-ops on Intel cores where BMI2's shrx is one, its bit scans
 * are bsf and bsr, and its small loops have only SSE2. On the Intel Xeon
 * of bench/RESULTS.md a build of 16384 points, d = 3, one thread, took
 * about 6% less time this way, and 2-6% less again with the loops
 * unrolled (docs/balltree-performance.md, thirteenth session). Where this
 * file is compiled without those flags (the fuzz build, other
 * processors), it is the same code again. */
#define GROVE__BT_V3
#include "build.c"
