/*
 * base/buf.h: a growable byte buffer for text and encodings that are built
 * piece by piece (unparse, JSON, MessagePack). Appends never fail loudly:
 * on allocation failure the buffer remembers it (b->failed) and ignores
 * further appends, so a writer checks once at the end.
 */
#ifndef ADS_BASE_BUF_H
#define ADS_BASE_BUF_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ads_buf {
    char *p;     /* the bytes, NUL-terminated when len < cap (see ads_buf_cstr) */
    size_t len;
    size_t cap;
    bool failed; /* an append ran out of memory */
} ads_buf;

#define ADS_BUF_INIT {NULL, 0, 0, false}

void ads_buf_init(ads_buf *b);
void ads_buf_free(ads_buf *b);
/* Empty the buffer, keeping its memory (and clearing failed). */
void ads_buf_clear(ads_buf *b);
void ads_buf__add_slow(ads_buf *b, const void *p, size_t n);
void ads_buf__addc_slow(ads_buf *b, char c);

/* Append n bytes at p (the common case inline: room in the buffer). */
static inline void ads_buf_add(ads_buf *b, const void *p, size_t n)
{
    if (!b->failed && b->cap - b->len > n) {
        if (n)
            memcpy(b->p + b->len, p, n);
        b->len += n;
        b->p[b->len] = '\0';
        return;
    }
    ads_buf__add_slow(b, p, n);
}

static inline void ads_buf_addc(ads_buf *b, char c)
{
    if (!b->failed && b->cap - b->len > 1) {
        b->p[b->len++] = c;
        b->p[b->len] = '\0';
        return;
    }
    ads_buf__addc_slow(b, c);
}
/* Room for n more bytes, to be written by the caller: a pointer to them
 * (len grown by n, NUL after them), or NULL when the buffer has failed or
 * fails now. */
char *ads_buf_extend(ads_buf *b, size_t n);
void ads_buf_adds(ads_buf *b, const char *s);
void ads_buf_printf(ads_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The contents as a NUL-terminated string ("" for an empty or failed buffer). */
const char *ads_buf_cstr(ads_buf *b);

#ifdef __cplusplus
}
#endif
#endif
