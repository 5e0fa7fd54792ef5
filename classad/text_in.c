/*
 * classad/text_in.c: see text_in.h.
 */
#include <errno.h>
#include <stdlib.h>

#include "classad/classad.h"
#include "classad/text_in.h"

#define CHUNK 65536

void ads_text_in_buffer(ads_text_in *in, const char *text, size_t len)
{
    in->chunk = in->p = text ? text : "";
    in->end = in->p + len;
    in->eof = true;
    in->line = 1;
}

int ads_text_in_file(ads_text_in *in, FILE *f)
{
    if (!(in->mem = malloc(CHUNK)))
        return -1;
    in->f = f;
    in->chunk = in->p = in->end = in->mem;
    in->line = 1;
    return 0;
}

void ads_text_in_free(ads_text_in *in)
{
    free(in->mem);
    in->mem = NULL;
}

int ads_text_in_refill(ads_text_in *in)
{
    if (in->eof || !in->f)
        return -1;
    if (ads_text_in_offset(in) - in->record_start > ADS_MAX_TEXT) {
        in->too_big = true;
        return -1;
    }
    size_t n = fread(in->mem, 1, CHUNK, in->f);
    in->base += (uint64_t)(in->end - in->chunk);
    in->chunk = in->p = in->mem;
    in->end = in->mem + n;
    if (n == 0) {
        if (ferror(in->f))
            in->io_errno = errno ? errno : EIO;
        in->eof = true;
        return -1;
    }
    return 0;
}
