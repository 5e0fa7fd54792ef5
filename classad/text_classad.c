/*
 * classad/text_classad.c: a streaming reader of records in new ClassAd
 * syntax: `[ ... ]` records one after another, separated by white space,
 * comments or commas, optionally all inside one `{ ... }` list (as a list
 * literal of records would be written). The reader finds each record's extent
 * by bracket matching (skipping strings, quoted names, times and comments),
 * then parses just that record, so memory holds one record and a file of any
 * size streams. Positions in errors are the file's lines and columns; after a
 * record that does not parse, the next call goes on with the record after
 * it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "classad/formats.h"

struct ads_classad_reader {
    FILE *f;
    char *buf; /* [pos, len) not yet consumed */
    size_t pos, len, cap;
    bool eof, in_list, list_closed, done;
    int line, col;   /* of buf[pos] */
    int final_rc;
    ads_error final_err;
};

static int reader_new(ads_classad_reader **out, FILE *f, ads_error *err)
{
    if (!out)
        return ads_error_set(err, ADS_EINVAL, "NULL argument");
    ads_classad_reader *r = calloc(1, sizeof *r);
    if (!r)
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    r->f = f;
    r->line = 1;
    r->col = 1;
    *out = r;
    return 0;
}

int ads_classad_reader_new(ads_classad_reader **out, const char *text, size_t len,
                           ads_error *err)
{
    if (!text && len)
        return ads_error_set(err, ADS_EINVAL, "NULL text");
    int rc = reader_new(out, NULL, err);
    if (rc)
        return rc;
    ads_classad_reader *r = *out;
    r->buf = malloc(len ? len : 1);
    if (!r->buf) {
        free(r);
        *out = NULL; /* not the freed reader: a caller's cleanup would free it again */
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    }
    if (len)
        memcpy(r->buf, text, len);
    r->len = r->cap = len;
    r->eof = true;
    return 0;
}

int ads_classad_reader_new_file(ads_classad_reader **out, FILE *f, ads_error *err)
{
    if (!f)
        return ads_error_set(err, ADS_EINVAL, "NULL stream");
    return reader_new(out, f, err);
}

void ads_classad_reader_free(ads_classad_reader *r)
{
    if (!r)
        return;
    free(r->buf);
    free(r);
}

/* More input at the end of the buffer (dropping what is consumed). 1 read,
 * 0 at the end, or an error. */
static int refill(ads_classad_reader *r, ads_error *err)
{
    if (r->eof)
        return 0;
    if (r->pos > 0) {
        memmove(r->buf, r->buf + r->pos, r->len - r->pos);
        r->len -= r->pos;
        r->pos = 0;
    }
    if (r->len == r->cap) {
        if (r->cap >= ADS_MAX_TEXT)
            return ads_error_set_at(err, ADS_ELIMIT, r->line, r->col,
                                    "a record of more than %zu bytes", (size_t)ADS_MAX_TEXT);
        size_t cap = r->cap ? 2 * r->cap : 65536;
        char *m = realloc(r->buf, cap);
        if (!m)
            return ads_error_set(err, ADS_ENOMEM, "out of memory");
        r->buf = m;
        r->cap = cap;
    }
    size_t n = fread(r->buf + r->len, 1, r->cap - r->len, r->f);
    if (n == 0) {
        if (ferror(r->f))
            return ads_error_set(err, ADS_EIO, "reading: %s", strerror(errno));
        r->eof = true;
        return 0;
    }
    r->len += n;
    return 1;
}

static void advance(ads_classad_reader *r, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (r->buf[r->pos + i] == '\n') {
            r->line++;
            r->col = 1;
        } else {
            r->col++;
        }
    }
    r->pos += n;
}

/* Skip white space, comments and commas (and the list's braces). 1 when a
 * record starts at pos, 0 at the end, or an error. */
static int to_record(ads_classad_reader *r, ads_error *err)
{
    for (;;) {
        if (r->pos >= r->len) {
            int rc = refill(r, err);
            if (rc < 0)
                return rc;
            if (rc == 0)
                return 0;
            continue;
        }
        char c = r->buf[r->pos];
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ',') {
            advance(r, 1);
            continue;
        }
        if (c == '/') {
            if (r->pos + 1 >= r->len) {
                int rc = refill(r, err);
                if (rc < 0)
                    return rc;
                if (rc == 1)
                    continue;
            }
            if (r->pos + 1 < r->len && (r->buf[r->pos + 1] == '/' || r->buf[r->pos + 1] == '*')) {
                bool line = r->buf[r->pos + 1] == '/';
                size_t q = r->pos + 2;
                for (;;) {
                    if (line && q < r->len && r->buf[q] == '\n')
                        break;
                    if (!line && q + 1 < r->len && r->buf[q] == '*' && r->buf[q + 1] == '/') {
                        q += 2;
                        break;
                    }
                    if (q + 1 >= r->len) {
                        size_t off = q - r->pos;
                        int rc = refill(r, err);
                        if (rc < 0)
                            return rc;
                        q = r->pos + off;
                        if (rc == 0) {
                            if (!line)
                                return ads_error_set_at(err, ADS_ESYNTAX, r->line, r->col,
                                                        "a comment is not closed");
                            q = r->len;
                            break;
                        }
                        continue;
                    }
                    q++;
                }
                advance(r, q - r->pos);
                continue;
            }
        }
        if (c == '{' && !r->in_list && !r->list_closed) {
            r->in_list = true;
            advance(r, 1);
            continue;
        }
        if (c == '}' && r->in_list) {
            r->in_list = false;
            r->list_closed = true;
            advance(r, 1);
            continue;
        }
        if (c == '[')
            return 1;
        return ads_error_set_at(err, ADS_ESYNTAX, r->line, r->col,
                                "expected '[' to start a record, found '%c'", c);
    }
}

/* More input while scanning the record at pos, *q (an index into buf) kept
 * pointing at the same byte: 0, or the error (the end of the input inside
 * the record is one). */
static int more_of_record(ads_classad_reader *r, size_t *q, ads_error *err)
{
    size_t off = *q - r->pos;
    int rc = refill(r, err);
    if (rc < 0)
        return rc;
    *q = r->pos + off;
    if (rc == 0)
        return ads_error_set_at(err, ADS_ESYNTAX, r->line, r->col,
                                "the record starting here is not closed");
    return 0;
}

/* The extent of the record at pos: *end is one past its ']'. */
static int extent(ads_classad_reader *r, size_t *end, ads_error *err)
{
    size_t q = r->pos;
    int depth = 0;
    char quote = 0;
    for (;;) {
        if (q >= r->len) {
            int rc = more_of_record(r, &q, err);
            if (rc)
                return rc;
            continue;
        }
        char c = r->buf[q];
        if (quote) {
            if (c == '\\' && quote != '`') {
                if (q + 1 >= r->len) {
                    int rc = more_of_record(r, &q, err);
                    if (rc)
                        return rc;
                    continue;
                }
                q += 2;
                continue;
            }
            if (c == quote)
                quote = 0;
            q++;
            continue;
        }
        if (c == '"' || c == '\'' || c == '`') {
            quote = c;
        } else if (c == '/' && q + 1 < r->len && (r->buf[q + 1] == '/' || r->buf[q + 1] == '*')) {
            bool line = r->buf[q + 1] == '/';
            q += 2;
            for (;;) {
                if (q >= r->len || (!line && q + 1 >= r->len)) {
                    int rc = more_of_record(r, &q, err);
                    if (rc)
                        return rc;
                    continue;
                }
                if (line && r->buf[q] == '\n')
                    break;
                if (!line && r->buf[q] == '*' && r->buf[q + 1] == '/') {
                    q += 2;
                    break;
                }
                q++;
            }
            continue;
        } else if (c == '[' || c == '{' || c == '(') {
            if (++depth > ADS_MAX_DEPTH)
                return ads_error_set_at(err, ADS_ELIMIT, r->line, r->col,
                                        "a record nested more than %d deep", ADS_MAX_DEPTH);
        } else if (c == ']' || c == '}' || c == ')') {
            if (--depth == 0) {
                *end = q + 1;
                return 0;
            }
        }
        q++;
    }
}

int ads_classad_reader_next(const ads_record **out, int *line, ads_classad_reader *r, ads_arena *a,
                            ads_error *err)
{
    if (!r || !out || !a)
        return ads_error_set(err, ADS_EINVAL, "NULL argument");
    if (r->final_rc) {
        if (err)
            *err = r->final_err;
        return r->final_rc;
    }
    int rc = to_record(r, err);
    if (rc <= 0) {
        if (rc < 0 && rc != ADS_ESYNTAX) {
            r->final_rc = rc;
            if (err)
                r->final_err = *err;
        }
        if (rc == ADS_ESYNTAX) {
            /* stray text: skip to the next '[' so the caller may go on */
            ads_error ignored;
            for (;;) {
                if (r->pos >= r->len && refill(r, &ignored) <= 0)
                    break;
                if (r->buf[r->pos] == '[')
                    break;
                advance(r, 1);
            }
        }
        return rc;
    }
    size_t end = 0;
    int l0 = r->line, c0 = r->col;
    if ((rc = extent(r, &end, err)) < 0) {
        if (rc != ADS_ESYNTAX) {
            r->final_rc = rc;
            if (err)
                r->final_err = *err;
        } else {
            r->final_rc = rc; /* an unclosed record ends the input */
            if (err)
                r->final_err = *err;
        }
        return rc;
    }
    rc = ads_record_parse(out, a, r->buf + r->pos, end - r->pos, err);
    if (rc && err && err->line > 0) {
        /* positions in the file, not in the record */
        if (err->line == 1)
            err->column += c0 - 1;
        err->line += l0 - 1;
    }
    if (line)
        *line = l0;
    advance(r, end - r->pos);
    return rc ? rc : 1;
}
