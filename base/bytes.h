/*
 * base/bytes.h: short byte compares and copies inline. Attribute names are
 * a few to a few dozen bytes, and the readers and the encoder compare and
 * copy many of them (and values as short); a memcmp or memcpy call costs
 * more than such a compare or copy.
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

/* memcpy(dst, src, n) for regions that do not overlap: up to 16 bytes in
 * two loads and two stores of 8 or 4 from each end (they overlap), longer
 * ones by memcpy. */
static inline void ads_bytes_copy(void *dst, const void *src, size_t n)
{
    unsigned char *d = dst;
    const unsigned char *s = src;
    if (n > 16) {
        memcpy(d, s, n);
    } else if (n >= 8) {
        uint64_t x, y;
        memcpy(&x, s, 8);
        memcpy(&y, s + n - 8, 8);
        memcpy(d, &x, 8);
        memcpy(d + n - 8, &y, 8);
    } else if (n >= 4) {
        uint32_t x, y;
        memcpy(&x, s, 4);
        memcpy(&y, s + n - 4, 4);
        memcpy(d, &x, 4);
        memcpy(d + n - 4, &y, 4);
    } else if (n) {
        d[0] = s[0];
        d[n - 1] = s[n - 1];
        d[n / 2] = s[n / 2];
    }
}

/* The value of hex digit c (either case), or -1. */
static inline int ads_hex_value(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* v as LEB128 at p (up to 10 bytes: 7 bits a byte, low first, the high bit
 * set on every byte but the last). Returns the bytes written. */
static inline size_t ads_uleb_put(unsigned char *p, uint64_t v)
{
    size_t n = 0;
    for (; v >= 0x80; v >>= 7)
        p[n++] = (unsigned char)(v | 0x80);
    p[n++] = (unsigned char)v;
    return n;
}

#endif
