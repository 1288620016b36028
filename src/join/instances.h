/* Four instances of the kernel template named by JOIN_TEMPLATE (a quoted
 * file name): float and double (FN(name) = name_f32, name_f64) with plain
 * Euclidean distances, and their minimum-image twins for a periodic box
 * (JOIN_PERIODIC 1; name_f32p, name_f64p), so the plain kernels keep no
 * test for a box. Included once per template, with no include guard. */
#define JOIN_PERIODIC 0
#define T float
#define FN(name) name##_f32
#include JOIN_TEMPLATE
#undef T
#undef FN
#define T double
#define FN(name) name##_f64
#include JOIN_TEMPLATE
#undef T
#undef FN
#undef JOIN_PERIODIC
#define JOIN_PERIODIC 1
#define T float
#define FN(name) name##_f32p
#include JOIN_TEMPLATE
#undef T
#undef FN
#define T double
#define FN(name) name##_f64p
#include JOIN_TEMPLATE
#undef T
#undef FN
#undef JOIN_PERIODIC
#undef JOIN_TEMPLATE
