/* libFuzzer target: grove_gadget_read_mem (Gadget-2 binary, format 1 and
 * 2) on arbitrary bytes must return a status (never crash, leak or read
 * out of bounds), and a success must be a consistent snapshot: at most one
 * particle per 28 bytes (each holds 12 of POS, 12 of VEL and 4 of ID at
 * least), finite positions and velocities, masses finite and >= 0, the
 * type counts adding up to n. */
#include "grove.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static double value(const grove_gadget *s, const void *rows, size_t i)
{
    return s->dtype == GROVE_FLOAT64 ? ((const double *)rows)[i] : (double)((const float *)rows)[i];
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    grove_gadget s;
    if (grove_gadget_read_mem(data, size, "fuzz.g2", NULL, &s) == GROVE_OK) {
        size_t sum = 0;
        for (int t = 0; t < GROVE_GADGET_TYPES; t++) sum += s.count[t];
        if (s.n > size / 28 || sum != s.n || !isfinite(s.header.time)) abort();
        for (size_t i = 0; i < s.n; i++) {
            if (!(s.mass[i] >= 0) || !isfinite(s.mass[i])) abort();
            for (int a = 0; a < 3; a++)
                if (!isfinite(value(&s, s.pos, 3 * i + a)) || !isfinite(value(&s, s.vel, 3 * i + a))) abort();
        }
    }
    grove_gadget_free(&s);
    return 0;
}
