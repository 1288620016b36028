/* libFuzzer target: grove_csv_read_mem_info on arbitrary bytes (not
 * NUL-terminated) must return a status and, on success, a (rows, cols)
 * float64 array of finite values, with a header line (if any) that is one
 * of the lines of the text. */
#include "grove.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    grove_array a;
    grove_load_info info;
    if (grove_csv_read_mem_info((const char *)data, size, "fuzz.csv", &a, &info) == GROVE_OK) {
        if (a.ndim != 2 || a.dtype != GROVE_FLOAT64 || (a.shape[0] == 0) != (a.shape[1] == 0)) abort();
        const double *v = a.data;
        for (size_t i = 0; i < grove_array_count(&a); i++)
            if (!isfinite(v[i])) abort();
        /* Every line ends in LF, CR or CRLF, or at the end of the text. */
        size_t lines = 1;
        for (size_t i = 0; i < size; i++)
            lines += data[i] == '\n' || (data[i] == '\r' && (i + 1 == size || data[i + 1] != '\n'));
        if (info.text != 1 || info.header_line > lines) abort();
    }
    grove_array_free(&a);
    return 0;
}
