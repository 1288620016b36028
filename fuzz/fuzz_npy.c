/* libFuzzer target: grove_npy_read_mem on arbitrary bytes must return a
 * status (never crash, leak or read out of bounds), and a success must be
 * a consistent array. */
#include "grove.h"

#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    grove_array a;
    if (grove_npy_read_mem(data, size, "fuzz.npy", &a) == GROVE_OK) {
        size_t bytes = grove_array_count(&a) * grove_dtype_size(a.dtype);
        if ((a.ndim != 1 && a.ndim != 2) || bytes > size) abort();
        /* Touch every byte so ASan checks the allocation's size. */
        volatile unsigned char sink = 0;
        for (size_t i = 0; i < bytes; i++) sink ^= ((const unsigned char *)a.data)[i];
        (void)sink;
    }
    grove_array_free(&a);
    return 0;
}
