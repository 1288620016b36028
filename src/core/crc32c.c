/* CRC-32C (Castagnoli polynomial, reflected 0x82F63B78, initial and final
 * value all ones: the iSCSI / ext4 / RFC 3720 checksum), by slicing-by-8:
 * eight 256-entry tables, one step per eight bytes. The tables are built
 * on the stack by every call (about as much work as hashing 4 KB), so
 * there is no shared state to initialise; callers hash whole files. */
#include "internal.h"

static const uint32_t POLY = 0x82F63B78u;

static void make_tables(uint32_t t[8][256])
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++) c = c & 1 ? (c >> 1) ^ POLY : c >> 1;
        t[0][i] = c;
    }
    for (int k = 1; k < 8; k++)
        for (uint32_t i = 0; i < 256; i++) t[k][i] = (t[k - 1][i] >> 8) ^ t[0][t[k - 1][i] & 0xff];
}

/* Four bytes as a little-endian word (whatever the machine's order). */
static inline uint32_t le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

uint32_t grove__crc32c(uint32_t crc, const void *data, size_t len)
{
    uint32_t t[8][256];
    make_tables(t);
    const unsigned char *p = data;
    crc = ~crc;
    for (; len >= 8; p += 8, len -= 8) {
        uint32_t lo = le32(p) ^ crc, hi = le32(p + 4);
        crc = t[7][lo & 0xff] ^ t[6][(lo >> 8) & 0xff] ^ t[5][(lo >> 16) & 0xff] ^ t[4][lo >> 24] ^
              t[3][hi & 0xff] ^ t[2][(hi >> 8) & 0xff] ^ t[1][(hi >> 16) & 0xff] ^ t[0][hi >> 24];
    }
    for (; len; p++, len--) crc = (crc >> 8) ^ t[0][(crc ^ *p) & 0xff];
    return ~crc;
}
