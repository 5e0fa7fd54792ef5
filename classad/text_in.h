/*
 * classad/text_in.h: the byte source the JSON and XML readers share (internal
 * to classad/). Input is either one buffer (not copied) or a FILE * read in
 * 64 KiB chunks; positions are kept as offsets from the start of the input,
 * so line and column survive chunk boundaries. A record may not grow past
 * ADS_MAX_TEXT bytes from record_start (too_big is set and the input ends).
 */
#ifndef ADS_CLASSAD_TEXT_IN_H
#define ADS_CLASSAD_TEXT_IN_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

typedef struct ads_text_in {
    const char *p, *end;   /* unread bytes of the buffer or chunk */
    const char *chunk;     /* start of the buffer or chunk */
    uint64_t base;         /* offset in the input of chunk[0] */
    FILE *f;               /* NULL: buffer input */
    char *mem;             /* the chunk's memory (file input) */
    bool eof;
    int io_errno;          /* a read failed: the reader reports ADS_EIO */
    bool too_big;          /* the record passed ADS_MAX_TEXT bytes */
    int line;              /* 1-based; the reader counts the newlines it takes */
    uint64_t line_start;   /* offset of the current line's first byte */
    uint64_t record_start; /* offset where the current record began */
} ads_text_in;

/* Start over len bytes of text (NULL with len 0 is allowed). */
void ads_text_in_buffer(ads_text_in *in, const char *text, size_t len);
/* Start over a stream (not closed by the reader): 0, or -1 out of memory. */
int ads_text_in_file(ads_text_in *in, FILE *f);
void ads_text_in_free(ads_text_in *in);

/* The next chunk: 0, or -1 at the end of the input (also when a read failed
 * or the record got too big: io_errno and too_big say which). */
int ads_text_in_refill(ads_text_in *in);

static inline uint64_t ads_text_in_offset(const ads_text_in *in)
{
    return in->base + (uint64_t)(in->p - in->chunk);
}

/* The 1-based column of offset at, on the current line. */
static inline int ads_text_in_column(const ads_text_in *in, uint64_t at)
{
    uint64_t c = at - in->line_start + 1;
    return c > INT_MAX ? INT_MAX : (int)c;
}

/* The next byte without taking it, or -1 at the end. */
static inline int ads_text_in_peek(ads_text_in *in)
{
    if (in->p < in->end)
        return (unsigned char)*in->p;
    if (ads_text_in_refill(in))
        return -1;
    return (unsigned char)*in->p;
}

#endif
