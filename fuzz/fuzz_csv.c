/* libFuzzer target: grove_csv_read_mem on arbitrary bytes (not
 * NUL-terminated) must return a status and, on success, a (rows, cols)
 * float64 array of finite values. */
#include "grove.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    grove_array a;
    if (grove_csv_read_mem((const char *)data, size, "fuzz.csv", &a) == GROVE_OK) {
        if (a.ndim != 2 || a.dtype != GROVE_FLOAT64 || (a.shape[0] == 0) != (a.shape[1] == 0)) abort();
        const double *v = a.data;
        for (size_t i = 0; i < grove_array_count(&a); i++)
            if (!isfinite(v[i])) abort();
    }
    grove_array_free(&a);
    return 0;
}
