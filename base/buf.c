/*
 * base/buf.c: the growable byte buffer. Capacity doubles; a failed growth
 * marks the buffer and drops the append.
 */
#include "base/buf.h"
#include "base/num.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ads_buf_init(ads_buf *b)
{
    b->p = NULL;
    b->len = b->cap = 0;
    b->failed = false;
}

void ads_buf_free(ads_buf *b)
{
    free(b->p);
    ads_buf_init(b);
}

void ads_buf_clear(ads_buf *b)
{
    b->len = 0;
    b->failed = false;
    if (b->p)
        b->p[0] = '\0';
}

/* Room for n more bytes and a NUL. */
static bool reserve(ads_buf *b, size_t n)
{
    if (b->failed)
        return false;
    if (n >= SIZE_MAX / 2 - b->len) {
        b->failed = true;
        return false;
    }
    if (b->len + n + 1 <= b->cap)
        return true;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < b->len + n + 1)
        cap *= 2;
    char *p = realloc(b->p, cap);
    if (!p) {
        b->failed = true;
        return false;
    }
    b->p = p;
    b->cap = cap;
    return true;
}

void ads_buf__add_slow(ads_buf *b, const void *p, size_t n)
{
    if (!reserve(b, n))
        return;
    if (n)
        memcpy(b->p + b->len, p, n);
    b->len += n;
    b->p[b->len] = '\0';
}

char *ads_buf_extend(ads_buf *b, size_t n)
{
    if (!reserve(b, n))
        return NULL;
    char *at = b->p + b->len;
    b->len += n;
    b->p[b->len] = '\0';
    return at;
}

void ads_buf__addc_slow(ads_buf *b, char c)
{
    ads_buf__add_slow(b, &c, 1);
}

void ads_buf_adds(ads_buf *b, const char *s)
{
    ads_buf_add(b, s, strlen(s));
}

void ads_buf_printf(ads_buf *b, const char *fmt, ...)
{
    va_list ap;
    char small[128];
    va_start(ap, fmt);
    int n = ads_vsnprintf_c(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->failed = true;
        return;
    }
    if ((size_t)n < sizeof small) {
        ads_buf_add(b, small, (size_t)n);
        return;
    }
    if (!reserve(b, (size_t)n))
        return;
    va_start(ap, fmt);
    ads_vsnprintf_c(b->p + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

const char *ads_buf_cstr(ads_buf *b)
{
    if (b->failed || !b->p)
        return "";
    return b->p;
}
