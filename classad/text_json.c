/*
 * classad/text_json.c: records as JSON (docs/formats.md, "JSON"), with
 * HTCondor's convention for what JSON cannot carry: a string written
 * "\/Expr(text)\/" holds ClassAd expression text. So `condor_q -json` output
 * reads in, and what adstore writes reads back without loss.
 *
 * The reader pulls bytes from a buffer or, chunk by chunk, from a FILE *,
 * and parses one top-level object per call by recursive descent, depth
 * counted against ADS_MAX_DEPTH. Everything it returns is decoded into the
 * caller's arena; nothing points into the input. Line and column are kept
 * as absolute offsets so that they survive chunk boundaries.
 */
#include <errno.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "base/utf8.h"
#include "base/bytes.h"
#include "classad/classad_int.h"
#include "classad/expr_memo.h"
#include "classad/formats.h"
#include "classad/text_in.h"
#include "base/num.h"

/* ------------------------------------------------------------------------ */
/* UTF-8                                                                    */
/* ------------------------------------------------------------------------ */

static void utf8_put(ads_buf *b, uint32_t cp)
{
    char t[4];
    size_t n;
    if (cp < 0x80) {
        t[0] = (char)cp;
        n = 1;
    } else if (cp < 0x800) {
        t[0] = (char)(0xc0 | cp >> 6);
        t[1] = (char)(0x80 | (cp & 0x3f));
        n = 2;
    } else if (cp < 0x10000) {
        t[0] = (char)(0xe0 | cp >> 12);
        t[1] = (char)(0x80 | (cp >> 6 & 0x3f));
        t[2] = (char)(0x80 | (cp & 0x3f));
        n = 3;
    } else {
        t[0] = (char)(0xf0 | cp >> 18);
        t[1] = (char)(0x80 | (cp >> 12 & 0x3f));
        t[2] = (char)(0x80 | (cp >> 6 & 0x3f));
        t[3] = (char)(0x80 | (cp & 0x3f));
        n = 4;
    }
    ads_buf_add(b, t, n);
}

/* ------------------------------------------------------------------------ */
/* Reading                                                                  */
/* ------------------------------------------------------------------------ */


typedef enum top_state {
    TOP_START,       /* nothing read yet */
    TOP_LINES,       /* objects one after another */
    TOP_ARRAY,       /* in the array, a record expected next */
    TOP_ARRAY_AFTER, /* in the array, after a record: ',' or ']' */
    TOP_AFTER,       /* after the array: only white space may follow */
    TOP_DONE
} top_state;

struct ads_json_reader {
    ads_text_in in; /* the bytes, their position and line */
    top_state state;
    int final_rc;
    ads_error final_err;
    ads_buf s;   /* a decoded string */
    ads_buf num; /* a number's text */
    /* the member names of the last top-level record, in order, with their
     * hashes: records of one shape hash none of their names again */
    struct name_memo {
        size_t at, len;
        uint32_t hash;
    } *memo;
    size_t nmemo, capmemo;
    ads_buf memo_text;
    /* the index of the last top-level record built whole whose names are
     * all in the memo, without a repeated name (shape_n of them, 0: none):
     * a record of the very same names in the same order has that index.
     * While shape_n > 0 the memo's first shape_n names are that record's. */
    uint32_t *shape_slots;
    size_t shape_n, shape_cap;
    unsigned memo_lost; /* times the memo's text could not grow */
    ads_expr_memo *exprs; /* the "\/Expr(...)\/" texts seen last, parsed */
    bool exprs_failed;    /* no memory for that memo: parse every time */
    /* per call */
    ads_arena *arena;
    ads_error *err;
    ads_expr *nodes; /* literal nodes taken from the arena in a block, */
    size_t nnodes;   /* nnodes of them left (none once the call ends) */
};

static inline uint64_t offset(const ads_json_reader *r)
{
    return ads_text_in_offset(&r->in);
}

static inline int column(const ads_json_reader *r, uint64_t at)
{
    return ads_text_in_column(&r->in, at);
}

/* The next byte without taking it, or -1 at the end (or when a read failed,
 * or the record got too big: the error reported then says so). */
static inline int peek(ads_json_reader *r)
{
    return ads_text_in_peek(&r->in);
}

static inline void take(ads_json_reader *r)
{
    r->in.p++;
}

static int failv(ads_json_reader *r, uint64_t at, int line, const char *fmt, va_list ap)
{
    if (r->in.io_errno)
        return ads_error_set(r->err, ADS_EIO, "read error: %s", strerror(r->in.io_errno));
    if (r->in.too_big)
        return ads_error_set_at(r->err, ADS_ELIMIT, line, column(r, at),
                                "record longer than %zu bytes", (size_t)ADS_MAX_TEXT);
    ads_error_vset(r->err, ADS_ESYNTAX, line, column(r, at), fmt, ap);
    return ADS_ESYNTAX;
}

static int fail(ads_json_reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A syntax error at the current byte. */
static int fail(ads_json_reader *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = failv(r, offset(r), r->in.line, fmt, ap);
    va_end(ap);
    return rc;
}

static int fail_at(ads_json_reader *r, uint64_t at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* A syntax error at an earlier byte of the current line. */
static int fail_at(ads_json_reader *r, uint64_t at, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = failv(r, at, r->in.line, fmt, ap);
    va_end(ap);
    return rc;
}

static int oom(ads_json_reader *r)
{
    return ads_error_set_at(r->err, ADS_ENOMEM, r->in.line, column(r, offset(r)),
                            "out of memory");
}

/* What is at the current byte, for messages. */
static const char *found(ads_json_reader *r, char *buf, size_t cap)
{
    int c = peek(r);
    if (c < 0)
        return "the end of the input";
    if (c >= 0x20 && c < 0x7f)
        snprintf(buf, cap, "'%c'", c);
    else
        snprintf(buf, cap, "byte 0x%02x", (unsigned)c);
    return buf;
}

static void skip_ws_slow(ads_json_reader *r)
{
    for (;;) {
        int c = peek(r);
        if (c == '\n') {
            take(r);
            if (r->in.line < INT_MAX)
                r->in.line++;
            r->in.line_start = offset(r);
        } else if (c == ' ' || c == '\t' || c == '\r') {
            take(r);
        } else {
            return;
        }
    }
}

/* Most calls find no space at all (JSON as programs write it): a byte in
 * the chunk above ' ' is taken as it is, without the call. */
static inline void skip_ws(ads_json_reader *r)
{
    if (r->in.p < r->in.end && (unsigned char)*r->in.p > ' ')
        return;
    skip_ws_slow(r);
}

static int hex4(ads_json_reader *r, uint32_t *out)
{
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) {
        int c = peek(r);
        int d = c >= '0' && c <= '9'   ? c - '0'
                : c >= 'a' && c <= 'f' ? c - 'a' + 10
                : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                       : -1;
        if (d < 0) {
            char what[16];
            return fail(r, "expected 4 hex digits after '\\u', found %s",
                        found(r, what, sizeof what));
        }
        v = v << 4 | (uint32_t)d;
        take(r);
    }
    *out = v;
    return 0;
}

/* The bytes of the 8 at p that may end a plain run of a string ('"', '\\',
 * a control character or a byte of 0x80 and up), as their high bits. Each
 * test flags a byte that matches; a borrow can only flag bytes after a true
 * match, so the first byte flagged is the first that matches. */
static inline uint64_t special8(const char *p)
{
    const uint64_t ones = 0x0101010101010101u, high = ones * 0x80;
    uint64_t x, q, b;
    memcpy(&x, p, 8);
    q = x ^ (ones * '"');
    b = x ^ (ones * '\\');
    return (((q - ones) & ~q) | ((b - ones) & ~b) | ((x - ones * 0x20) & ~x) | x) & high;
}

/* Move p over the plain bytes of a string before end, eight at a time: to
 * the first byte that is not plain, or to fewer than eight before end. */
static inline const char *skip_plain(const char *p, const char *end)
{
    for (; end - p >= 8; p += 8) {
        uint64_t t = special8(p);
        if (t) {
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
            p += __builtin_ctzll(t) / 8; /* the first byte in memory is the lowest */
#endif
            break;
        }
    }
    return p;
}

/* A string, '"' current, that holds only plain bytes and ends in this
 * chunk (most strings: no escape, no byte past 0x7f): its bytes, taken
 * with the closing quote, without a copy into r->s. false: the string is
 * left for parse_string (nothing taken). */
static inline bool plain_string(ads_json_reader *r, const char **p, size_t *n)
{
    const char *start = r->in.p + 1, *q = skip_plain(start, r->in.end);
    while (q < r->in.end) {
        unsigned char c = (unsigned char)*q;
        if (c < 0x20 || c >= 0x80 || c == '"' || c == '\\')
            break;
        q++;
    }
    if (q == r->in.end || *q != '"' || (size_t)(q - start) > ADS_MAX_TEXT)
        return false;
    *p = start;
    *n = (size_t)(q - start);
    r->in.p = q + 1;
    return true;
}

/*
 * A string, '"' current, decoded into r->s. *slash: it began with the
 * escape \/ (how HTCondor marks "\/Expr(...)\/").
 */
static int parse_string(ads_json_reader *r, bool *slash)
{
    uint64_t open = offset(r);
    int rc;
    ads_buf_clear(&r->s);
    take(r);
    *slash = false;
    bool first = true;
    for (;;) {
        /* the plain run within this chunk, in one copy */
        const char *run = r->in.p;
        r->in.p = skip_plain(r->in.p, r->in.end);
        while (r->in.p < r->in.end) {
            unsigned char c = (unsigned char)*r->in.p;
            if (c < 0x20 || c >= 0x80 || c == '"' || c == '\\')
                break;
            r->in.p++;
        }
        if (r->in.p > run) {
            ads_buf_add(&r->s, run, (size_t)(r->in.p - run));
            first = false;
        }
        if (r->s.len > ADS_MAX_TEXT) {
            r->in.too_big = true;
            return fail_at(r, open, "string too long");
        }
        int c = peek(r);
        if (c < 0)
            return fail_at(r, open, "unterminated string");
        if (c == '"') {
            take(r);
            break;
        }
        if (c < 0x20)
            return fail(r, "control character 0x%02x in a string (it must be escaped)",
                        (unsigned)c);
        if (c >= 0x80) {
            /* one UTF-8 sequence, checked byte by byte (it may cross chunks) */
            unsigned char seq[4];
            uint64_t at = offset(r);
            size_t want = c >= 0xc2 && c <= 0xdf   ? 2
                          : c >= 0xe0 && c <= 0xef ? 3
                          : c >= 0xf0 && c <= 0xf4 ? 4
                                                   : 0;
            if (!want)
                return fail_at(r, at, "invalid UTF-8 in a string");
            seq[0] = (unsigned char)c;
            take(r);
            for (size_t k = 1; k < want; k++) {
                int lo = 0x80, hi = 0xbf;
                if (k == 1 && seq[0] == 0xe0)
                    lo = 0xa0;
                else if (k == 1 && seq[0] == 0xed)
                    hi = 0x9f;
                else if (k == 1 && seq[0] == 0xf0)
                    lo = 0x90;
                else if (k == 1 && seq[0] == 0xf4)
                    hi = 0x8f;
                c = peek(r);
                if (c < lo || c > hi)
                    return fail_at(r, at, "invalid UTF-8 in a string");
                seq[k] = (unsigned char)c;
                take(r);
            }
            ads_buf_add(&r->s, seq, want);
            first = false;
            continue;
        }
        if (c != '\\')
            continue; /* the run stopped at the end of a chunk: go on in the next */
        /* an escape */
        uint64_t esc = offset(r);
        take(r);
        c = peek(r);
        switch (c) {
        case '"': ads_buf_addc(&r->s, '"'); break;
        case '\\': ads_buf_addc(&r->s, '\\'); break;
        case '/':
            ads_buf_addc(&r->s, '/');
            if (first)
                *slash = true;
            break;
        case 'b': ads_buf_addc(&r->s, '\b'); break;
        case 'f': ads_buf_addc(&r->s, '\f'); break;
        case 'n': ads_buf_addc(&r->s, '\n'); break;
        case 'r': ads_buf_addc(&r->s, '\r'); break;
        case 't': ads_buf_addc(&r->s, '\t'); break;
        case 'u': {
            uint32_t cp, lo;
            take(r);
            if ((rc = hex4(r, &cp)))
                return rc;
            if (cp == 0)
                return fail_at(r, esc,
                               "\\u0000 (a NUL character) is not allowed in a string");
            if (cp >= 0xdc00 && cp <= 0xdfff)
                return fail_at(r, esc, "lone low surrogate \\u%04X in a string",
                               (unsigned)cp);
            if (cp >= 0xd800 && cp <= 0xdbff) {
                if (peek(r) != '\\')
                    return fail_at(r, esc, "high surrogate \\u%04X without a low surrogate",
                                   (unsigned)cp);
                take(r);
                if (peek(r) != 'u')
                    return fail_at(r, esc, "high surrogate \\u%04X without a low surrogate",
                                   (unsigned)cp);
                take(r);
                if ((rc = hex4(r, &lo)))
                    return rc;
                if (lo < 0xdc00 || lo > 0xdfff)
                    return fail_at(r, esc, "high surrogate \\u%04X without a low surrogate",
                                   (unsigned)cp);
                cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
            }
            utf8_put(&r->s, cp);
            first = false;
            continue;
        }
        default:
            if (c < 0)
                return fail_at(r, open, "unterminated string");
            if (c > 0x20 && c < 0x7f)
                return fail_at(r, esc, "invalid escape '\\%c' in a string", c);
            return fail_at(r, esc, "invalid escape in a string");
        }
        take(r);
        first = false;
    }
    if (r->s.failed)
        return oom(r);
    return 0;
}

/* A number of at most 15 digits and no exponent ("-123.45"), as strtod
 * reads it, into *out: true; else false. Its digits as an integer and ten
 * to the power of its fraction digits are both exact doubles, and one
 * division of exact doubles is rounded correctly, as strtod rounds. */
static bool short_decimal(const char *s, double *out)
{
    static const double pow10[] = {1e0, 1e1, 1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                   1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};
#if FLT_EVAL_METHOD != 0
    return false; /* wider intermediates would round twice */
#endif
    bool neg = *s == '-';
    uint64_t m = 0;
    int digits = 0, frac = -1;
    for (const char *p = s + neg; *p; p++) {
        if (*p == '.' && frac < 0) {
            frac = 0;
            continue;
        }
        if (*p < '0' || *p > '9' || ++digits > 15)
            return false;
        m = m * 10 + (uint64_t)(*p - '0');
        if (frac >= 0)
            frac++;
    }
    double d = (double)m / pow10[frac < 0 ? 0 : frac];
    *out = neg ? -d : d;
    return true;
}

/* The length of the number at p when all of it lies before end and it is
 * well formed, else 0 (parse_number then reads it byte by byte and says
 * what is wrong). *real: it has a fraction or an exponent. */
static inline size_t number_span(const char *p, const char *end, bool *real)
{
#define ISDIGIT(q) ((q) < end && *(q) >= '0' && *(q) <= '9')
    const char *q = p + (*p == '-');
    *real = false;
    if (!ISDIGIT(q))
        return 0;
    if (*q++ == '0') {
        if (ISDIGIT(q))
            return 0;
    } else {
        while (ISDIGIT(q))
            q++;
    }
    if (q < end && *q == '.') {
        *real = true;
        q++;
        if (!ISDIGIT(q))
            return 0;
        while (ISDIGIT(q))
            q++;
    }
    if (q < end && (*q == 'e' || *q == 'E')) {
        *real = true;
        q++;
        if (q < end && (*q == '+' || *q == '-'))
            q++;
        if (!ISDIGIT(q))
            return 0;
        while (ISDIGIT(q))
            q++;
    }
#undef ISDIGIT
    return q < end ? (size_t)(q - p) : 0;
}

static int number_value(ads_json_reader *r, uint64_t start, const char *s, bool real,
                        ads_value *out);

/* A number, its first byte current (a digit or '-'). */
static int parse_number(ads_json_reader *r, ads_value *out)
{
    uint64_t start = offset(r);
    bool real = false;
    int c;
    /* most numbers: an integer of at most 18 digits, all in this chunk */
    const char *p = r->in.p, *end = r->in.end, *d = p + (*p == '-'), *first = d;
    uint64_t v = 0;
    while (d < end && *d >= '0' && *d <= '9' && d - first < 18)
        v = v * 10 + (uint64_t)(*d++ - '0');
    if (d > first && d < end && (*first != '0' || d == first + 1) &&
        !(*d >= '0' && *d <= '9') && *d != '.' && *d != 'e' && *d != 'E') {
        r->in.p = d;
        *out = ads_int(*p == '-' ? (int64_t)(0 - v) : (int64_t)v);
        return 0;
    }
    size_t n = number_span(r->in.p, r->in.end, &real);
    if (n && n < 40) {
        /* the common case: all of it in this chunk, converted from a copy */
        char text[40];
        memcpy(text, r->in.p, n);
        text[n] = '\0';
        r->in.p += n;
        return number_value(r, start, text, real, out);
    }
    real = false;
    ads_buf_clear(&r->num);
#define DIGITS()                                                                              \
    while ((c = peek(r)) >= '0' && c <= '9') {                                                \
        ads_buf_addc(&r->num, (char)c);                                                       \
        take(r);                                                                              \
    }
    if (peek(r) == '-') {
        ads_buf_addc(&r->num, '-');
        take(r);
    }
    c = peek(r);
    if (c == '0') {
        ads_buf_addc(&r->num, '0');
        take(r);
        c = peek(r);
        if (c >= '0' && c <= '9')
            return fail(r, "a number cannot have a leading zero");
    } else if (c >= '1' && c <= '9') {
        DIGITS();
    } else {
        return fail(r, "expected a digit after '-'");
    }
    if (peek(r) == '.') {
        real = true;
        ads_buf_addc(&r->num, '.');
        take(r);
        c = peek(r);
        if (c < '0' || c > '9')
            return fail(r, "expected a digit after '.' in a number");
        DIGITS();
    }
    c = peek(r);
    if (c == 'e' || c == 'E') {
        real = true;
        ads_buf_addc(&r->num, 'e');
        take(r);
        c = peek(r);
        if (c == '+' || c == '-') {
            ads_buf_addc(&r->num, (char)c);
            take(r);
        }
        c = peek(r);
        if (c < '0' || c > '9')
            return fail(r, "expected a digit in the exponent of a number");
        DIGITS();
    }
#undef DIGITS
    if (r->num.failed)
        return oom(r);
    if (r->num.len > ADS_MAX_TEXT) {
        r->in.too_big = true;
        return fail_at(r, start, "number too long");
    }
    return number_value(r, start, r->num.p, real, out);
}

/* The value of the well-formed number text s (NUL-terminated). */
static int number_value(ads_json_reader *r, uint64_t start, const char *s, bool real,
                        ads_value *out)
{
    if (!real) {
        bool neg = s[0] == '-';
        uint64_t v = 0;
        bool fits = true;
        size_t nd = strlen(s + neg);
        if (nd <= 18) { /* below 10^18: no overflow to check */
            for (const char *d = s + neg; *d; d++)
                v = v * 10 + (uint64_t)(*d - '0');
            *out = ads_int(neg ? (int64_t)(0 - v) : (int64_t)v);
            return 0;
        }
        for (const char *d = s + neg; *d; d++) {
            unsigned dv = (unsigned)(*d - '0');
            if (v > (UINT64_MAX - dv) / 10) {
                fits = false;
                break;
            }
            v = v * 10 + dv;
        }
        if (fits && v <= (uint64_t)INT64_MAX + neg) {
            *out = ads_int(neg ? (int64_t)(0 - v) : (int64_t)v);
            return 0;
        }
    }
    double d;
    if (!short_decimal(s, &d))
        d = ads_strtod_c(s, NULL);
    if (isinf(d))
        return fail_at(r, start, "number out of range for a real");
    *out = ads_real(d);
    return 0;
}

/* true, false or null, its first letter current. */
static int parse_word(ads_json_reader *r, ads_value *out)
{
    static const struct {
        const char *word;
        int kind;
    } words[] = {{"true", 1}, {"false", 2}, {"null", 3}};
    uint64_t start = offset(r);
    int c = peek(r);
    for (size_t i = 0; i < 3; i++) {
        if (c != words[i].word[0])
            continue;
        for (const char *w = words[i].word; *w; w++) {
            if (peek(r) != *w)
                return fail_at(r, start, "expected true, false or null");
            take(r);
        }
        *out = words[i].kind == 1 ? ads_bool(true)
               : words[i].kind == 2 ? ads_bool(false)
                                    : ads_undefined();
        return 0;
    }
    return fail_at(r, start, "expected true, false or null");
}

static int parse_value(ads_json_reader *r, const ads_expr **out, int depth);

/* A literal node of v. Nodes come from the arena a block at a time (as
 * many as the last record had members), not one allocation per value. */
static int literal(ads_json_reader *r, const ads_expr **out, ads_value v)
{
    if (!r->nnodes) {
        size_t n = r->shape_n > 16 ? r->shape_n + 4 : 16;
        if (!(r->nodes = ads_arena_alloc(r->arena, n * sizeof *r->nodes)))
            return oom(r);
        r->nnodes = n;
    }
    *out = ads_expr__literal_in(r->nodes++, &v);
    r->nnodes--;
    return 0;
}

/* A string value: a string, or the expression of "\/Expr(...)\/". */
static int string_value(ads_json_reader *r, const ads_expr **out)
{
    uint64_t open = offset(r);
    int line = r->in.line;
    bool slash;
    int rc;
    const char *plain;
    size_t len;
    ads_value v;
    if (plain_string(r, &plain, &len)) {
        if (ads_string_copy(&v, r->arena, plain, len))
            return oom(r);
        return literal(r, out, v);
    }
    if ((rc = parse_string(r, &slash)))
        return rc;
    const char *s = r->s.p ? r->s.p : "";
    size_t n = r->s.len;
    if (slash && n >= 8 && ads_name__eq(s, 6, "/Expr(", 6) && s[n - 2] == ')' &&
        s[n - 1] == '/') {
        /* every job of a submission has the same Requirements: remember
         * them (a memo that cannot be made only costs speed) */
        if (!r->exprs && !r->exprs_failed)
            r->exprs_failed = ads_expr_memo_new(&r->exprs) != 0;
        ads_error perr;
        if ((rc = ads_expr__parse_memo(r->exprs, out, r->arena, s + 6, n - 8, &perr))) {
            if (rc == ADS_ENOMEM)
                return oom(r);
            ads_error_set_at(r->err, rc, line, column(r, open),
                             "in \"\\/Expr(...)\\/\": %s (line %d, column %d of the "
                             "expression)",
                             perr.message, perr.line, perr.column);
            return rc;
        }
        return 0;
    }
    if (ads_string_copy(&v, r->arena, s, n))
        return oom(r);
    return literal(r, out, v);
}

/* A list node or literal from n item expressions. */
static int make_list(ads_json_reader *r, const ads_expr **out, const ads_expr **items, size_t n,
                     bool all_literal)
{
    if (all_literal) {
        ads_value *vals = ads_arena_alloc(r->arena, (n ? n : 1) * sizeof *vals);
        if (!vals)
            return oom(r);
        for (size_t i = 0; i < n; i++)
            vals[i] = items[i]->u.lit;
        return literal(r, out, ads_list(vals, n));
    }
    ads_expr *e = ads_arena_alloc(r->arena, sizeof *e);
    if (!e)
        return oom(r);
    memset(e, 0, sizeof *e);
    e->kind = N_LIST;
    e->u.list.items = items;
    e->u.list.n = n;
    *out = e;
    return 0;
}

static int enter(ads_json_reader *r, int depth)
{
    if (depth > ADS_MAX_DEPTH)
        return ads_error_set_at(r->err, ADS_ELIMIT, r->in.line, column(r, offset(r)),
                                "JSON nested deeper than %d levels", ADS_MAX_DEPTH);
    return 0;
}

/* An array, '[' current. */
static int parse_array(ads_json_reader *r, const ads_expr **out, int depth)
{
    char what[16];
    int rc;
    if ((rc = enter(r, depth)))
        return rc;
    take(r);
    skip_ws(r);
    const ads_expr **items = NULL;
    size_t n = 0, cap = 0;
    bool all = true;
    if (peek(r) == ']') {
        take(r);
        return make_list(r, out, items, 0, true);
    }
    for (;;) {
        const ads_expr *item;
        if ((rc = parse_value(r, &item, depth + 1)))
            return rc;
        if (n == cap) {
            size_t ncap = cap ? cap * 2 : 8;
            const ads_expr **grown = ads_arena_alloc(r->arena, ncap * sizeof *grown);
            if (!grown)
                return oom(r);
            if (n)
                memcpy(grown, items, n * sizeof *grown);
            items = grown;
            cap = ncap;
        }
        items[n++] = item;
        if (item->kind != N_LITERAL)
            all = false;
        skip_ws(r);
        int c = peek(r);
        if (c == ',') {
            take(r);
            skip_ws(r);
            if (peek(r) == ']')
                return fail(r, "trailing comma before ']'");
            continue;
        }
        if (c == ']') {
            take(r);
            break;
        }
        return fail(r, "expected ',' or ']' in an array, found %s", found(r, what, sizeof what));
    }
    return make_list(r, out, items, n, all);
}

/* The hash of member name i (len bytes at name) of a top-level record: the one the
 * last record's name i had if the bytes are the same; else computed, and
 * remembered in place of the last record's names from i on. */
static uint32_t member_hash(ads_json_reader *r, size_t i, const char *name, size_t len,
                            bool *hit)
{
    *hit = false;
    if (i < r->nmemo) {
        const struct name_memo *m = &r->memo[i];
        if (m->len == len && ads_bytes_same(r->memo_text.p + m->at, name, len)) {
            *hit = true;
            return m->hash;
        }
        r->nmemo = i;
        r->memo_text.len = m->at;
        r->memo_text.p[m->at] = '\0';
        r->shape_n = 0; /* the shape's names are the memo's: no longer */
    }
    uint32_t h = ads_name_hash(name, len);
    if (i == r->nmemo && i < ADS_JSON_NAME_MEMO_MAX &&
        r->memo_text.len + len + 1 <= ADS_JSON_NAME_MEMO_BYTES) {
        if (i == r->capmemo) {
            size_t cap = r->capmemo ? 2 * r->capmemo : 64;
            struct name_memo *more = realloc(r->memo, cap * sizeof *more);
            if (!more)
                return h; /* only a memo */
            r->memo = more;
            r->capmemo = cap;
        }
        size_t at = r->memo_text.len;
        ads_buf_add(&r->memo_text, name, len);
        ads_buf_addc(&r->memo_text, '\0'); /* the names are copied out whole */
        if (r->memo_text.failed) {
            ads_buf_clear(&r->memo_text);
            r->nmemo = 0;
            r->shape_n = 0;
            r->memo_lost++;
            return h;
        }
        r->memo[i] = (struct name_memo){at, len, h};
        r->nmemo = i + 1;
    }
    return h;
}

/* An object's members as read, in the caller's arena. */
typedef struct members {
    ads_str *names;
    const ads_expr **exprs;
    uint32_t *hashes;
    size_t n, cap;
} members;

/* Room for cap members (at least): 0, or out of memory. */
static int members_room(ads_json_reader *r, members *m, size_t cap)
{
    ads_str *names = ads_arena_alloc(r->arena, cap * sizeof *names);
    const ads_expr **exprs = ads_arena_alloc(r->arena, cap * sizeof *exprs);
    uint32_t *hashes = ads_arena_alloc(r->arena, cap * sizeof *hashes);
    if (!names || !exprs || !hashes)
        return oom(r);
    if (m->n) {
        memcpy(names, m->names, m->n * sizeof *names);
        memcpy(exprs, m->exprs, m->n * sizeof *exprs);
        memcpy(hashes, m->hashes, m->n * sizeof *hashes);
    }
    m->names = names;
    m->exprs = exprs;
    m->hashes = hashes;
    m->cap = cap;
    return 0;
}

static int members_add(ads_json_reader *r, members *m, const char *name, size_t len,
                       uint32_t h, const ads_expr *value)
{
    int rc;
    if (m->n == m->cap && (rc = members_room(r, m, m->cap ? 2 * m->cap : 16)))
        return rc;
    m->names[m->n] = (ads_str){name, len};
    m->exprs[m->n] = value;
    m->hashes[m->n] = h;
    m->n++;
    return 0;
}

/* The record of the members. same: a top-level record whose names are the
 * last shape's, in its order: that record's index serves (no name can
 * repeat). Else a builder makes it (a repeated name: the last value wins),
 * and a top-level record without repeats becomes the shape. */
static int members_record(ads_json_reader *r, const ads_record **rec, const members *m,
                          bool same, int depth)
{
    if (same && m->n == r->shape_n) {
        *rec = ads_record__with_index(r->arena, m->names, m->exprs, m->hashes, m->n,
                                      r->shape_slots, r->shape_cap);
        return *rec ? 0 : oom(r);
    }
    ads_record_builder *b;
    if (ads_record_builder_new(&b, r->arena, NULL))
        return oom(r);
    for (size_t i = 0; i < m->n; i++)
        if (ads_record__builder_add_hashed(b, m->names[i].p, m->names[i].len, m->hashes[i],
                                           m->exprs[i], NULL))
            return oom(r);
    if (!(*rec = ads_record__builder_finish_plain(b)))
        return oom(r);
    if (depth != 1)
        return 0;
    r->shape_n = 0;
    const ads_record *x = *rec;
    if (x->n != m->n || r->nmemo != m->n || m->n == 0)
        return 0; /* a repeated name, or names past the memo */
    uint32_t *slots = realloc(r->shape_slots, x->cap * sizeof *slots);
    if (!slots)
        return 0; /* only a memo */
    memcpy(slots, x->slots, x->cap * sizeof *slots);
    r->shape_slots = slots;
    r->shape_cap = x->cap;
    r->shape_n = x->n;
    return 0;
}

/* The names of a top-level record's members that the memo holds (left
 * NULL while reading), pointed into one copy of the memo's text: a copy and
 * an allocation for the record, not one per name. lost: r->memo_lost when
 * the record began (the memo lost since: those names are gone). */
static int memo_names(ads_json_reader *r, members *m, unsigned lost)
{
    size_t last = m->n;
    for (size_t i = 0; i < m->n; i++)
        if (!m->names[i].p)
            last = i;
    if (last == m->n)
        return 0;
    if (r->memo_lost != lost || last >= r->nmemo)
        return oom(r);
    size_t bytes = r->memo[last].at + r->memo[last].len + 1;
    char *copy = ads_arena_alloc(r->arena, bytes);
    if (!copy)
        return oom(r);
    memcpy(copy, r->memo_text.p, bytes);
    for (size_t i = 0; i <= last; i++)
        if (!m->names[i].p)
            m->names[i].p = copy + r->memo[i].at;
    return 0;
}

/* A member's name, '"' current: its bytes (in the chunk or r->s). */
static int member_name(ads_json_reader *r, const char **text, size_t *len)
{
    uint64_t at = offset(r);
    bool slash;
    int rc;
    if (!plain_string(r, text, len)) {
        if ((rc = parse_string(r, &slash)))
            return rc;
        *text = r->s.p;
        *len = r->s.len;
    }
    if (*len == 0)
        return fail_at(r, at, "empty member name (a record attribute needs a name)");
    return 0;
}

/* An object, '{' current: its record, and whether every member is a value. */
static int parse_object(ads_json_reader *r, const ads_record **rec, bool *all_literal,
                        int depth)
{
    char what[16];
    members m = {0};
    bool all = true, same = depth == 1 && r->shape_n > 0;
    unsigned lost = r->memo_lost;
    int rc;
    if ((rc = enter(r, depth)))
        return rc;
    if (same && (rc = members_room(r, &m, r->shape_n))) /* as many as the last record */
        return rc;
    take(r);
    skip_ws(r);
    if (peek(r) == '}') {
        take(r);
    } else {
        for (size_t i = 0;; i++) {
            if (peek(r) != '"')
                return fail(r, "expected a member name (a string), found %s",
                            found(r, what, sizeof what));
            const char *text;
            size_t len;
            if ((rc = member_name(r, &text, &len)))
                return rc;
            bool hit = false;
            uint32_t h = depth == 1 ? member_hash(r, i, text, len, &hit)
                                    : ads_name_hash(text, len);
            same = same && hit;
            /* a name in the memo is copied with the others at the end */
            char *name = NULL;
            if (!(depth == 1 && i < r->nmemo) && !(name = ads_arena_strndup(r->arena, text, len)))
                return oom(r);
            skip_ws(r);
            if (peek(r) != ':')
                return fail(r, "expected ':' after a member name, found %s",
                            found(r, what, sizeof what));
            take(r);
            skip_ws(r);
            const ads_expr *value;
            if ((rc = parse_value(r, &value, depth + 1)))
                return rc;
            if (value->kind != N_LITERAL)
                all = false;
            if ((rc = members_add(r, &m, name, len, h, value)))
                return rc;
            skip_ws(r);
            int c = peek(r);
            if (c == ',') {
                take(r);
                skip_ws(r);
                if (peek(r) == '}')
                    return fail(r, "trailing comma before '}'");
                continue;
            }
            if (c == '}') {
                take(r);
                break;
            }
            return fail(r, "expected ',' or '}' in an object, found %s",
                        found(r, what, sizeof what));
        }
    }
    if (depth == 1 && (rc = memo_names(r, &m, lost)))
        return rc;
    if ((rc = members_record(r, rec, &m, same, depth)))
        return rc;
    *all_literal = all;
    return 0;
}

static int parse_value(ads_json_reader *r, const ads_expr **out, int depth)
{
    char what[16];
    ads_value v;
    int rc;
    int c = peek(r);
    switch (c) {
    case '{': {
        const ads_record *rec;
        bool all;
        if ((rc = parse_object(r, &rec, &all, depth)))
            return rc;
        if (all)
            return literal(r, out, ads_recordv(rec));
        ads_expr *e = ads_arena_alloc(r->arena, sizeof *e);
        if (!e)
            return oom(r);
        memset(e, 0, sizeof *e);
        e->kind = N_RECORD;
        e->u.rec = rec;
        *out = e;
        return 0;
    }
    case '[':
        return parse_array(r, out, depth);
    case '"':
        return string_value(r, out);
    case 't':
    case 'f':
    case 'n':
        if ((rc = parse_word(r, &v)))
            return rc;
        return literal(r, out, v);
    default:
        if (c == '-' || (c >= '0' && c <= '9')) {
            if ((rc = parse_number(r, &v)))
                return rc;
            return literal(r, out, v);
        }
        return fail(r, "expected a JSON value, found %s", found(r, what, sizeof what));
    }
}

static int new_reader(ads_json_reader **out, ads_error *err)
{
    if (!out)
        return ads_error_set(err, ADS_EINVAL, "JSON reader: NULL argument");
    ads_json_reader *r = calloc(1, sizeof *r);
    if (!r)
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    ads_buf_init(&r->s);
    ads_buf_init(&r->num);
    ads_buf_init(&r->memo_text);
    r->state = TOP_START;
    *out = r;
    return 0;
}

int ads_json_reader_new(ads_json_reader **out, const char *text, size_t len, ads_error *err)
{
    int rc;
    if (!text && len)
        return ads_error_set(err, ADS_EINVAL, "JSON reader: NULL text");
    if ((rc = new_reader(out, err)))
        return rc;
    ads_json_reader *r = *out;
    ads_text_in_buffer(&r->in, text, len);
    return 0;
}

int ads_json_reader_new_file(ads_json_reader **out, FILE *f, ads_error *err)
{
    int rc;
    if (!f)
        return ads_error_set(err, ADS_EINVAL, "JSON reader: NULL file");
    if ((rc = new_reader(out, err)))
        return rc;
    ads_json_reader *r = *out;
    if (ads_text_in_file(&r->in, f)) {
        ads_json_reader_free(r);
        *out = NULL;
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    }
    return 0;
}

void ads_json_reader_free(ads_json_reader *r)
{
    if (!r)
        return;
    ads_buf_free(&r->s);
    ads_buf_free(&r->num);
    ads_buf_free(&r->memo_text);
    free(r->memo);
    free(r->shape_slots);
    ads_expr_memo_free(r->exprs);
    ads_text_in_free(&r->in);
    free(r);
}

/* One record, '{' current. */
static int read_record(ads_json_reader *r, const ads_record **out, int *line)
{
    bool all;
    int start = r->in.line;
    int rc = parse_object(r, out, &all, 1);
    if (rc == 0 && line)
        *line = start;
    return rc;
}

static int next(ads_json_reader *r, const ads_record **out, int *line)
{
    char what[16];
    int c;
    for (;;) {
        r->in.record_start = offset(r);
        switch (r->state) {
        case TOP_START:
            if (peek(r) == 0xEF && r->in.end - r->in.p >= 3 && memcmp(r->in.p, "\xEF\xBB\xBF", 3) == 0)
                r->in.p += 3; /* a byte-order mark */
            skip_ws(r);
            c = peek(r);
            if (c < 0) {
                r->state = TOP_DONE;
                continue;
            }
            if (c == '[') {
                take(r);
                skip_ws(r);
                if (peek(r) == ']') {
                    take(r);
                    r->state = TOP_AFTER;
                } else {
                    r->state = TOP_ARRAY;
                }
                continue;
            }
            if (c == '{') {
                r->state = TOP_LINES;
                continue;
            }
            return fail(r, "expected '[' or '{' at the start of JSON input, found %s",
                        found(r, what, sizeof what));
        case TOP_LINES:
            skip_ws(r);
            c = peek(r);
            if (c < 0) {
                r->state = TOP_DONE;
                continue;
            }
            if (c != '{')
                return fail(r, "expected '{' to start the next record, found %s",
                            found(r, what, sizeof what));
            r->in.record_start = offset(r);
            return read_record(r, out, line) ? -1 : 1;
        case TOP_ARRAY:
            skip_ws(r);
            if (peek(r) != '{')
                return fail(r, "expected '{' to start a record in the array, found %s",
                            found(r, what, sizeof what));
            r->in.record_start = offset(r);
            r->state = TOP_ARRAY_AFTER;
            return read_record(r, out, line) ? -1 : 1;
        case TOP_ARRAY_AFTER:
            skip_ws(r);
            c = peek(r);
            if (c == ',') {
                take(r);
                skip_ws(r);
                if (peek(r) == ']')
                    return fail(r, "trailing comma before ']'");
                r->state = TOP_ARRAY;
                continue;
            }
            if (c == ']') {
                take(r);
                r->state = TOP_AFTER;
                continue;
            }
            return fail(r, "expected ',' or ']' after a record in the array, found %s",
                        found(r, what, sizeof what));
        case TOP_AFTER:
            skip_ws(r);
            if (peek(r) >= 0)
                return fail(r, "expected the end of the input after the array, found %s",
                            found(r, what, sizeof what));
            r->state = TOP_DONE;
            continue;
        case TOP_DONE:
            if (r->in.io_errno || r->in.too_big)
                return fail(r, "read error");
            return 0;
        }
    }
}

int ads_json_reader_next(const ads_record **out, int *line, ads_json_reader *r, ads_arena *a,
                         ads_error *err)
{
    if (!r || !out || !a)
        return ads_error_set(err, ADS_EINVAL, "JSON reader: NULL argument");
    if (r->final_rc) {
        if (err)
            *err = r->final_err;
        return r->final_rc;
    }
    ads_error local;
    r->arena = a;
    r->err = &local;
    const ads_record *rec = NULL;
    int rc = next(r, &rec, line);
    r->nodes = NULL; /* the caller may reset the arena before the next call */
    r->nnodes = 0;
    if (rc < 0) {
        r->final_rc = local.code;
        r->final_err = local;
        if (err)
            *err = local;
        return local.code;
    }
    if (rc == 1)
        *out = rec;
    return rc;
}

/* ------------------------------------------------------------------------ */
/* Writing                                                                  */
/* ------------------------------------------------------------------------ */

typedef struct jwriter {
    ads_buf *out;
    bool pretty;
    bool bad_name; /* a name that is not UTF-8 */
    ads_str bad;
    ads_buf text; /* unparsed ClassAd text */
} jwriter;

/*
 * A JSON string body (no quotes). With classad set, bytes that are not
 * UTF-8 become ClassAd octal escapes (the text is ClassAd source, and such
 * bytes only occur inside its string literals and quoted names); else the
 * caller has checked that there are none.
 */
static void json_escape(ads_buf *b, const char *p, size_t n, bool classad)
{
    const unsigned char *s = (const unsigned char *)p;
    size_t i = 0;
    while (i < n) {
        size_t run = i;
        while (i < n && s[i] >= 0x20 && s[i] < 0x80 && s[i] != '"' && s[i] != '\\')
            i++;
        if (i > run)
            ads_buf_add(b, s + run, i - run);
        if (i >= n)
            break;
        unsigned char c = s[i];
        switch (c) {
        case '"': ads_buf_adds(b, "\\\""); i++; continue;
        case '\\': ads_buf_adds(b, "\\\\"); i++; continue;
        case '\b': ads_buf_adds(b, "\\b"); i++; continue;
        case '\f': ads_buf_adds(b, "\\f"); i++; continue;
        case '\n': ads_buf_adds(b, "\\n"); i++; continue;
        case '\r': ads_buf_adds(b, "\\r"); i++; continue;
        case '\t': ads_buf_adds(b, "\\t"); i++; continue;
        default: break;
        }
        if (c < 0x20) {
            ads_buf_printf(b, "\\u%04X", c);
            i++;
            continue;
        }
        size_t len = ads_utf8_len(s + i, n - i);
        if (len) {
            ads_buf_add(b, s + i, len);
            i += len;
        } else {
            if (classad)
                ads_buf_printf(b, "\\\\%03o", c);
            i++;
        }
    }
}

static bool valid_utf8(ads_str s)
{
    const unsigned char *p = (const unsigned char *)s.p;
    size_t i = 0;
    while (i < s.len) {
        size_t len = ads_utf8_len(p + i, s.len - i);
        if (!len)
            return false;
        i += len;
    }
    return true;
}

/* Empty w->text for the next piece. ads_buf_clear forgets that an append
 * failed, so a failure is first passed on to the output, which the end
 * checks (a real, a string or an expression would otherwise go missing). */
static void text_clear(jwriter *w)
{
    if (w->text.failed)
        w->out->failed = true;
    ads_buf_clear(&w->text);
}

/* "\/Expr(text)\/" for the ClassAd text in w->text. */
static void write_expr_text(jwriter *w)
{
    ads_buf_adds(w->out, "\"\\/Expr(");
    json_escape(w->out, w->text.p, w->text.len, true);
    ads_buf_adds(w->out, ")\\/\"");
}

static void newline(jwriter *w, int level)
{
    if (!w->pretty)
        return;
    ads_buf_addc(w->out, '\n');
    for (int i = 0; i < level; i++)
        ads_buf_adds(w->out, "  ");
}

static void write_expr(jwriter *w, const ads_expr *e, int level);

static void write_members(jwriter *w, const ads_record *r, int level)
{
    if (r->n == 0) {
        ads_buf_adds(w->out, "{}");
        return;
    }
    ads_buf_addc(w->out, '{');
    for (size_t i = 0; i < r->n; i++) {
        if (i)
            ads_buf_addc(w->out, ',');
        newline(w, level + 1);
        ads_buf_addc(w->out, '"');
        if (!valid_utf8(r->names[i]) && !w->bad_name) {
            w->bad_name = true;
            w->bad = r->names[i];
        }
        json_escape(w->out, r->names[i].p, r->names[i].len, false);
        ads_buf_adds(w->out, w->pretty ? "\": " : "\":");
        write_expr(w, r->exprs[i], level + 1);
    }
    newline(w, level);
    ads_buf_addc(w->out, '}');
}

static void write_value(jwriter *w, const ads_value *v, int level)
{
    switch (v->type) {
    case ADS_UNDEFINED:
        ads_buf_adds(w->out, "null");
        return;
    case ADS_BOOLEAN:
        ads_buf_adds(w->out, v->u.b ? "true" : "false");
        return;
    case ADS_INTEGER:
        ads_buf_printf(w->out, "%lld", (long long)v->u.i);
        return;
    case ADS_REAL:
        text_clear(w);
        ads_value_unparse(&w->text, v);
        if (isfinite(v->u.r))
            ads_buf_add(w->out, w->text.p, w->text.len);
        else
            write_expr_text(w);
        return;
    case ADS_STRING:
        if (valid_utf8(v->u.s)) {
            ads_buf_addc(w->out, '"');
            json_escape(w->out, v->u.s.p, v->u.s.len, false);
            ads_buf_addc(w->out, '"');
        } else {
            text_clear(w);
            ads_unparse__string(&w->text, v->u.s.p, v->u.s.len);
            write_expr_text(w);
        }
        return;
    case ADS_LIST:
        if (v->u.list.n == 0) {
            ads_buf_adds(w->out, "[]");
            return;
        }
        ads_buf_addc(w->out, '[');
        for (size_t i = 0; i < v->u.list.n; i++) {
            if (i)
                ads_buf_addc(w->out, ',');
            newline(w, level + 1);
            write_value(w, &v->u.list.items[i], level + 1);
        }
        newline(w, level);
        ads_buf_addc(w->out, ']');
        return;
    case ADS_RECORD:
        write_members(w, v->u.rec, level);
        return;
    default: /* error, times, identifiers, blobs */
        text_clear(w);
        ads_value_unparse(&w->text, v);
        write_expr_text(w);
        return;
    }
}

static void write_expr(jwriter *w, const ads_expr *e, int level)
{
    switch ((node_kind)e->kind) {
    case N_LITERAL:
        write_value(w, &e->u.lit, level);
        return;
    case N_LIST:
        if (e->u.list.n == 0) {
            ads_buf_adds(w->out, "[]");
            return;
        }
        ads_buf_addc(w->out, '[');
        for (size_t i = 0; i < e->u.list.n; i++) {
            if (i)
                ads_buf_addc(w->out, ',');
            newline(w, level + 1);
            write_expr(w, e->u.list.items[i], level + 1);
        }
        newline(w, level);
        ads_buf_addc(w->out, ']');
        return;
    case N_RECORD:
        write_members(w, e->u.rec, level);
        return;
    default:
        text_clear(w);
        ads_expr_unparse(&w->text, e);
        write_expr_text(w);
        return;
    }
}

int ads_json_write(ads_buf *b, const ads_record *r, int flags, ads_error *err)
{
    int rc;
    if (!b || !r)
        return ads_error_set(err, ADS_EINVAL, "JSON write: NULL argument");
    if ((rc = ads_record_check_text(r, err)))
        return rc;
    jwriter w = {b, (flags & ADS_JSON_PRETTY) != 0, false, {NULL, 0}, ADS_BUF_INIT};
    write_members(&w, r, 0);
    bool failed = w.text.failed || b->failed;
    ads_buf_free(&w.text);
    if (w.bad_name) {
        int n = w.bad.len > 64 ? 64 : (int)w.bad.len;
        return ads_error_set(err, ADS_EINVAL,
                             "attribute name '%.*s' is not UTF-8, which JSON cannot hold", n,
                             w.bad.p);
    }
    if (failed)
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    return 0;
}
