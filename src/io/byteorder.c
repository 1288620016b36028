/* Byte-order conversion for the binary readers. */
#include "io_internal.h"

void grove__byteswap(void *data, size_t count, size_t width)
{
    unsigned char *p = data;
    for (size_t i = 0; i < count; i++, p += width)
        for (size_t a = 0, b = width - 1; a < b; a++, b--) {
            unsigned char t = p[a];
            p[a] = p[b];
            p[b] = t;
        }
}
