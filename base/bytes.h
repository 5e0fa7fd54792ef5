/*
 * base/bytes.h: short byte compares inline. Attribute names are a few to a
 * few dozen bytes, and the readers and the encoder compare many of them
 * with names they remember; a memcmp call costs more than such a compare.
 */
#ifndef ADS_BASE_BYTES_H
#define ADS_BASE_BYTES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Whether the n bytes at a and at b are the same, reading only those
 * bytes: up to 16 in two loads of 8 or 4 from each end (they overlap),
 * longer ones by memcmp. */
static inline bool ads_bytes_same(const void *a, const void *b, size_t n)
{
    const unsigned char *p = a, *q = b;
    if (n > 16)
        return memcmp(p, q, n) == 0;
    if (n >= 8) {
        uint64_t w, x, y, z;
        memcpy(&w, p, 8);
        memcpy(&x, q, 8);
        memcpy(&y, p + n - 8, 8);
        memcpy(&z, q + n - 8, 8);
        return ((w ^ x) | (y ^ z)) == 0;
    }
    if (n >= 4) {
        uint32_t w, x, y, z;
        memcpy(&w, p, 4);
        memcpy(&x, q, 4);
        memcpy(&y, p + n - 4, 4);
        memcpy(&z, q + n - 4, 4);
        return ((w ^ x) | (y ^ z)) == 0;
    }
    for (size_t i = 0; i < n; i++)
        if (p[i] != q[i])
            return false;
    return true;
}

#endif
