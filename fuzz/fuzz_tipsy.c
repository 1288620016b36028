/* libFuzzer target: grove_tipsy_read_mem on arbitrary bytes must return a
 * status (never crash, leak or read out of bounds), and a success must be
 * a consistent snapshot: at most one particle per 28 bytes, finite values,
 * masses >= 0. */
#include "grove.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    grove_snapshot s;
    if (grove_tipsy_read_mem(data, size, "fuzz.tipsy", &s) == GROVE_OK) {
        if (s.n > size / 28 || !isfinite(s.time)) abort();
        for (size_t i = 0; i < s.n; i++) {
            if (!(s.mass[i] >= 0) || !isfinite(s.mass[i])) abort();
            for (int a = 0; a < 3; a++)
                if (!isfinite(s.pos[3 * i + a]) || !isfinite(s.vel[3 * i + a])) abort();
        }
    }
    grove_snapshot_free(&s);
    return 0;
}
