/*
 * classad/lexer.c: ClassAd text to tokens (shared/spec/classad.md section 2).
 *
 * One token of lookahead, kept in the lexer. Literals are decoded here:
 * numbers (a '-' directly before a digit belongs to the number unless the
 * previous token ends a value), strings with their escapes (adjacent string
 * literals separated only by white space are joined), 'quoted names', times
 * in backticks, and #identifiers. Every error names its line and column.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "classad/classad_int.h"
#include "base/num.h"

static int column_at(const lexer *lx, const char *p)
{
    return (int)(p - lx->line_start) + 1;
}

static int fail_at(lexer *lx, const char *p, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int fail_at(lexer *lx, const char *p, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    ads_error_vset(lx->err, code, lx->line, column_at(lx, p), fmt, ap);
    va_end(ap);
    return code;
}

static bool is_name_start(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool is_name_char(unsigned char c)
{
    return is_name_start(c) || (c >= '0' && c <= '9');
}

static bool is_digit(unsigned char c)
{
    return c >= '0' && c <= '9';
}

/* Skip white space and comments. Fails only on an unterminated comment. */
static int skip_space(lexer *lx)
{
    for (;;) {
        while (lx->p < lx->end) {
            char c = *lx->p;
            if (c == '\n') {
                lx->line++;
                lx->line_start = ++lx->p;
            } else if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
                lx->p++;
            } else {
                break;
            }
        }
        if (lx->end - lx->p >= 2 && lx->p[0] == '/' && lx->p[1] == '/') {
            while (lx->p < lx->end && *lx->p != '\n')
                lx->p++;
            continue;
        }
        if (lx->end - lx->p >= 2 && lx->p[0] == '/' && lx->p[1] == '*') {
            const char *start = lx->p;
            int line = lx->line;
            const char *ls = lx->line_start;
            lx->p += 2;
            for (;;) {
                if (lx->p >= lx->end) {
                    lx->line = line;
                    lx->line_start = ls;
                    return fail_at(lx, start, ADS_ESYNTAX, "unterminated comment");
                }
                if (lx->end - lx->p >= 2 && lx->p[0] == '*' && lx->p[1] == '/') {
                    lx->p += 2;
                    break;
                }
                if (*lx->p == '\n') {
                    lx->line++;
                    lx->line_start = lx->p + 1;
                }
                lx->p++;
            }
            continue;
        }
        return 0;
    }
}

/* ---- numbers ---- */

static int lex_number(lexer *lx, token *t, const char *start, bool negative)
{
    const char *p = start;
    const char *end = lx->end;
    bool is_real = false;

    if (p + 1 < end && p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
        uint64_t v = 0;
        const char *q = p + 2;
        if (q >= end || !strchr("0123456789abcdefABCDEF", *q) || *q == '\0')
            return fail_at(lx, q, ADS_ESYNTAX, "expected hex digits after '0x'");
        for (; q < end && *q && strchr("0123456789abcdefABCDEF", *q); q++) {
            unsigned d = is_digit((unsigned char)*q) ? (unsigned)(*q - '0')
                                                     : (unsigned)((*q | 0x20) - 'a' + 10);
            if (v > (UINT64_MAX >> 4))
                return fail_at(lx, start, ADS_ESYNTAX, "integer literal does not fit 64 bits");
            v = v << 4 | d;
        }
        if (q < end && is_name_char((unsigned char)*q))
            return fail_at(lx, q, ADS_ESYNTAX, "unexpected '%c' in a number", *q);
        if (v > (uint64_t)INT64_MAX + (negative ? 1 : 0))
            return fail_at(lx, start, ADS_ESYNTAX, "integer literal does not fit 64 bits");
        t->kind = T_INT;
        t->v.i = negative ? (int64_t)(0 - v) : (int64_t)v;
        lx->p = q;
        return 0;
    }

    const char *q = p;
    while (q < end && is_digit((unsigned char)*q))
        q++;
    if (q < end && *q == '.') {
        is_real = true;
        q++;
        if (q >= end || !is_digit((unsigned char)*q))
            return fail_at(lx, q - 1, ADS_ESYNTAX, "expected a digit after '.' in a number");
        while (q < end && is_digit((unsigned char)*q))
            q++;
    }
    if (q < end && (*q == 'e' || *q == 'E')) {
        const char *e = q + 1;
        if (e < end && (*e == '+' || *e == '-'))
            e++;
        if (e >= end || !is_digit((unsigned char)*e))
            return fail_at(lx, q, ADS_ESYNTAX, "expected digits in the exponent");
        while (e < end && is_digit((unsigned char)*e))
            e++;
        q = e;
        is_real = true;
    }
    /* a complete real followed by '.' and a name is a selection from it
     * (`1.5.x`, error when evaluated, as in HTCondor); `5.x` and `1.5.5` stay
     * syntax errors */
    bool select = is_real && q + 1 < end && *q == '.' &&
                  (is_name_start((unsigned char)q[1]) || q[1] == '\'');
    if (q < end && (is_name_char((unsigned char)*q) || (*q == '.' && !select)))
        return fail_at(lx, q, ADS_ESYNTAX, "unexpected '%c' in a number", *q);

    /* copy (with the sign) to parse with the C library, which needs a NUL */
    size_t n = (size_t)(q - start);
    char small[64];
    char *text = n + 2 <= sizeof small ? small : ads_arena_alloc(lx->arena, n + 2);
    if (!text)
        return fail_at(lx, start, ADS_ENOMEM, "out of memory");
    text[0] = '-';
    memcpy(text + 1, start, n);
    text[n + 1] = '\0';
    char *num = negative ? text : text + 1;

    if (is_real) {
        errno = 0;
        double r = ads_strtod_c(num, NULL);
        t->kind = T_REAL;
        t->v.r = r;
    } else if (start[0] == '0' && n > 1) {
        uint64_t v = 0;
        for (const char *d = start + 1; d < q; d++) {
            if (*d > '7')
                return fail_at(lx, d, ADS_ESYNTAX, "'%c' is not an octal digit", *d);
            if (v > (UINT64_MAX >> 3))
                return fail_at(lx, start, ADS_ESYNTAX, "integer literal does not fit 64 bits");
            v = v << 3 | (uint64_t)(*d - '0');
        }
        if (v > (uint64_t)INT64_MAX + (negative ? 1 : 0))
            return fail_at(lx, start, ADS_ESYNTAX, "integer literal does not fit 64 bits");
        t->kind = T_INT;
        t->v.i = negative ? (int64_t)(0 - v) : (int64_t)v;
    } else {
        errno = 0;
        long long v = strtoll(num, NULL, 10);
        if (errno == ERANGE)
            return fail_at(lx, negative ? start - 1 : start, ADS_ESYNTAX,
                           "integer literal does not fit 64 bits");
        t->kind = T_INT;
        t->v.i = v;
    }
    lx->p = q;
    return 0;
}

/* ---- strings and quoted names ---- */

/* Decode one quoted literal starting at the opening quote q into b.
 * Returns 0 and moves lx->p past the closing quote. */
static int lex_quoted(lexer *lx, ads_buf *b, char quote)
{
    const char *open = lx->p;
    const char *p = lx->p + 1;
    int open_line = lx->line;
    const char *open_line_start = lx->line_start;
    for (;;) {
        if (p >= lx->end) {
            /* report at the opening quote, on its own line */
            lx->line = open_line;
            lx->line_start = open_line_start;
            return fail_at(lx, open, ADS_ESYNTAX, "unterminated %s",
                           quote == '"' ? "string" : "quoted name");
        }
        char c = *p;
        if (c == quote) {
            lx->p = p + 1;
            return 0;
        }
        if (c == '\n') {
            lx->line++;
            lx->line_start = p + 1;
        }
        if (c == '\0')
            return fail_at(lx, p, ADS_ESYNTAX, "a NUL byte is not allowed in a %s",
                           quote == '"' ? "string" : "quoted name");
        if (c != '\\') {
            ads_buf_addc(b, c);
            p++;
            continue;
        }
        const char *esc = p;
        if (++p >= lx->end) {
            lx->line = open_line;
            lx->line_start = open_line_start;
            return fail_at(lx, open, ADS_ESYNTAX, "unterminated %s",
                           quote == '"' ? "string" : "quoted name");
        }
        c = *p++;
        switch (c) {
        case '\0':
            /* "\" then a NUL byte would put the NUL in the value, which
             * no string may hold (and unparse would write it back as \000,
             * which reads as an error) */
            return fail_at(lx, p - 1, ADS_ESYNTAX, "a NUL byte is not allowed in a %s",
                           quote == '"' ? "string" : "quoted name");
        case '\n':
            /* an escaped line break is still a line break */
            lx->line++;
            lx->line_start = p;
            ads_buf_addc(b, c);
            break;
        case 'a': ads_buf_addc(b, '\a'); break;
        case 'b': ads_buf_addc(b, '\b'); break;
        case 'f': ads_buf_addc(b, '\f'); break;
        case 'n': ads_buf_addc(b, '\n'); break;
        case 'r': ads_buf_addc(b, '\r'); break;
        case 't': ads_buf_addc(b, '\t'); break;
        case 'v': ads_buf_addc(b, '\v'); break;
        default:
            if (c >= '0' && c <= '7') {
                /* up to three octal digits; a third only if the first is 0-3 */
                int v = c - '0', digits = 1;
                int max = (c <= '3') ? 3 : 2;
                while (digits < max && p < lx->end && *p >= '0' && *p <= '7') {
                    v = v * 8 + (*p++ - '0');
                    digits++;
                }
                if (v == 0)
                    return fail_at(lx, esc, ADS_ESYNTAX,
                                   "'\\0' (a NUL character) is not allowed in a %s",
                                   quote == '"' ? "string" : "quoted name");
                ads_buf_addc(b, (char)v);
            } else {
                ads_buf_addc(b, c); /* \" \' \? \\ and any other \c: the character */
            }
        }
    }
}

static int lex_string(lexer *lx, token *t)
{
    ads_buf b = ADS_BUF_INIT;
    int rc;
    for (;;) {
        if ((rc = lex_quoted(lx, &b, '"')))
            goto done;
        /* adjacent literals separated by white space only are one string */
        const char *q = lx->p;
        int line = lx->line;
        const char *ls = lx->line_start;
        while (q < lx->end && (*q == ' ' || *q == '\t' || *q == '\r' || *q == '\n' ||
                               *q == '\f' || *q == '\v')) {
            if (*q == '\n') {
                line++;
                ls = q + 1;
            }
            q++;
        }
        if (q < lx->end && *q == '"') {
            lx->p = q;
            lx->line = line;
            lx->line_start = ls;
            continue;
        }
        break;
    }
    if (b.failed) {
        rc = fail_at(lx, t->start, ADS_ENOMEM, "out of memory");
        goto done;
    }
    char *s = ads_arena_strndup(lx->arena, b.p ? b.p : "", b.len);
    if (!s) {
        rc = fail_at(lx, t->start, ADS_ENOMEM, "out of memory");
        goto done;
    }
    t->kind = T_STRING;
    t->v.s.p = s;
    t->v.s.len = b.len;
    rc = 0;
done:
    ads_buf_free(&b);
    return rc;
}

static int lex_quoted_name(lexer *lx, token *t)
{
    ads_buf b = ADS_BUF_INIT;
    int rc = lex_quoted(lx, &b, '\'');
    if (rc == 0) {
        if (b.len == 0)
            rc = fail_at(lx, t->start, ADS_ESYNTAX, "empty quoted name");
        else if (b.failed || !(t->v.s.p = ads_arena_strndup(lx->arena, b.p, b.len)))
            rc = fail_at(lx, t->start, ADS_ENOMEM, "out of memory");
        else {
            t->v.s.len = b.len;
            t->kind = T_NAME;
            t->quoted = true;
        }
    }
    ads_buf_free(&b);
    return rc;
}

/* ---- times, identifiers, names ---- */

static int lex_time(lexer *lx, token *t)
{
    const char *open = lx->p;
    const char *p = open + 1;
    while (p < lx->end && *p != '`' && *p != '\n')
        p++;
    if (p >= lx->end || *p != '`')
        return fail_at(lx, open, ADS_ESYNTAX, "unterminated time literal");
    const char *text = open + 1;
    size_t n = (size_t)(p - text);
    lx->p = p + 1;
    if (ads_time__parse_abs(text, n, &t->v.abs.secs, &t->v.abs.offset) == 0) {
        t->kind = T_ABSTIME;
        return 0;
    }
    if (ads_time__parse_rel(text, n, &t->v.rel) == 0) {
        t->kind = T_RELTIME;
        return 0;
    }
    return fail_at(lx, text, ADS_ESYNTAX,
                   "'%.*s' is neither an absolute time (2011-12-13T12:00:00Z) nor a relative "
                   "time (1d2h3m4s, 90)",
                   (int)(n > 40 ? 40 : n), text);
}

static int lex_ident(lexer *lx, token *t)
{
    const char *p = lx->p + 1;
    while (p < lx->end && *p && strchr("0123456789abcdefABCDEF.-", *p))
        p++;
    size_t n = (size_t)(p - lx->p);
    ads_error e;
    if (ads_id_parse(&t->v.id, lx->p, n, ADS_ID_PARSE_HASH_REQUIRED, &e)) {
        const char *at = lx->p + (e.column > 0 ? e.column - 1 : 0);
        return fail_at(lx, at, ADS_ESYNTAX, "%s", e.message);
    }
    t->kind = T_ID;
    lx->p = p;
    return 0;
}

typedef struct keyword {
    const char *word;
    tok_kind kind;
} keyword;

static const keyword keywords[] = {
    {"true", T_TRUE}, {"false", T_FALSE}, {"undefined", T_UNDEFINED}, {"error", T_ERRORKW},
    {"is", T_IS},     {"isnt", T_ISNT},   {"in", T_IN},
};

static void lex_name(lexer *lx, token *t)
{
    const char *p = lx->p;
    if (lx->query && *p == '@') /* @timerange, @intervals, ... */
        p++;
    while (p < lx->end && is_name_char((unsigned char)*p))
        p++;
    /* avg@(, sum@(, ...: the '@' belongs to the name when a call follows */
    if (lx->query && *lx->p != '@' && p + 1 < lx->end && p[0] == '@' && p[1] == '(')
        p++;
    size_t n = (size_t)(p - lx->p);
    t->kind = T_NAME;
    t->v.s.p = lx->p;
    t->v.s.len = n;
    /* keywords are 2..9 letters starting with t f u e i */
    char c0 = (char)(*lx->p | 0x20);
    if (n >= 2 && n <= 9 && (c0 == 't' || c0 == 'f' || c0 == 'u' || c0 == 'e' || c0 == 'i'))
        for (size_t i = 0; i < sizeof keywords / sizeof keywords[0]; i++)
            if (ads_name__eq(lx->p, n, keywords[i].word, strlen(keywords[i].word))) {
                t->kind = keywords[i].kind;
                break;
            }
    /* `in`, `is` and `isnt` are operators only where one can stand, right
     * after an operand; anywhere else they are names, so HTCondor's ads
     * (`In = "/dev/null"`, `In == "/dev/null"`, HTCondor has no `in`) read */
    if ((t->kind == T_IN || t->kind == T_IS || t->kind == T_ISNT) && !lx->value_before)
        t->kind = T_NAME;
    lx->p = p;
}

/* ---- operators ---- */

typedef struct punct {
    const char *text;
    tok_kind kind;
    size_t len;
} punct;

#define P(text, kind) {text, kind, sizeof text - 1}

/* Longest first within each leading character. */
static const punct puncts[] = {
    P(">>>", T_USHR), P("===", T_EQUIV), P("=?=", T_META_EQ), P("=!=", T_META_NE),
    P("<<", T_SHL),   P(">>", T_SHR),    P("<=", T_LE),       P(">=", T_GE),
    P("==", T_EQ),    P("!=", T_NE),     P("&&", T_ANDAND),   P("||", T_OROR),
    P("?:", T_ELVIS), P(":=", T_COLONASSIGN),
    P("(", T_LPAREN), P(")", T_RPAREN),  P("[", T_LBRACKET),  P("]", T_RBRACKET),
    P("{", T_LBRACE), P("}", T_RBRACE),  P(",", T_COMMA),     P(";", T_SEMI),
    P(".", T_DOT),    P("?", T_QUESTION), P(":", T_COLON),    P("=", T_ASSIGN),
    P("+", T_PLUS),   P("-", T_MINUS),   P("*", T_STAR),      P("/", T_SLASH),
    P("%", T_PERCENT), P("<", T_LT),     P(">", T_GT),        P("&", T_AMP),
    P("^", T_CARET),  P("|", T_PIPE),    P("!", T_BANG),      P("~", T_TILDE),
};

static bool ends_value(tok_kind k)
{
    switch (k) {
    case T_INT: case T_REAL: case T_STRING: case T_NAME: case T_ID: case T_ABSTIME:
    case T_RELTIME: case T_TRUE: case T_FALSE: case T_UNDEFINED: case T_ERRORKW:
    case T_RPAREN: case T_RBRACKET: case T_RBRACE:
        return true;
    default:
        return false;
    }
}

int ads_lex__next(lexer *lx)
{
    token *t = &lx->tok;
    int rc;
    if ((rc = skip_space(lx))) {
        t->kind = T_ERROR_TOKEN;
        return rc;
    }
    t->start = lx->p;
    t->line = lx->line;
    t->column = column_at(lx, lx->p);
    t->quoted = false;
    if (lx->p >= lx->end) {
        t->kind = T_EOF;
        t->len = 0;
        return 0;
    }
    unsigned char c = (unsigned char)*lx->p;
    if (is_digit(c) || (c == '.' && lx->p + 1 < lx->end && is_digit((unsigned char)lx->p[1])))
        rc = lex_number(lx, t, lx->p, false);
    else if (c == '-' && !lx->value_before && lx->p + 1 < lx->end &&
             (is_digit((unsigned char)lx->p[1]) ||
              (lx->p[1] == '.' && lx->p + 2 < lx->end && is_digit((unsigned char)lx->p[2]))))
        rc = lex_number(lx, t, lx->p + 1, true);
    else if (c == '"')
        rc = lex_string(lx, t);
    else if (c == '\'')
        rc = lex_quoted_name(lx, t);
    else if (c == '`')
        rc = lex_time(lx, t);
    else if (c == '#')
        rc = lex_ident(lx, t);
    else if (is_name_start(c) ||
             (lx->query && c == '@' && lx->p + 1 < lx->end &&
              is_name_start((unsigned char)lx->p[1]))) {
        lex_name(lx, t);
        rc = 0;
    } else {
        rc = -1;
        for (size_t i = 0; i < sizeof puncts / sizeof puncts[0]; i++) {
            if (puncts[i].text[0] != (char)c)
                continue;
            size_t n = puncts[i].len;
            if ((size_t)(lx->end - lx->p) >= n && memcmp(lx->p, puncts[i].text, n) == 0) {
                t->kind = puncts[i].kind;
                lx->p += n;
                rc = 0;
                break;
            }
        }
        if (rc) {
            if (c >= 0x20 && c < 0x7f)
                rc = fail_at(lx, lx->p, ADS_ESYNTAX, "unexpected character '%c'", c);
            else
                rc = fail_at(lx, lx->p, ADS_ESYNTAX, "unexpected byte 0x%02x", c);
        }
    }
    if (rc) {
        t->kind = T_ERROR_TOKEN;
        return rc;
    }
    t->len = (size_t)(lx->p - t->start);
    lx->value_before = ends_value(t->kind);
    return 0;
}

int ads_lex__init(lexer *lx, const char *text, size_t len, ads_arena *a, ads_error *err)
{
    return ads_lex__init_at(lx, text, len, 0, false, a, err);
}

int ads_lex__init_at(lexer *lx, const char *text, size_t len, size_t start, bool query,
                     ads_arena *a, ads_error *err)
{
    lx->text = text;
    lx->p = text;
    lx->end = text + len;
    lx->line_start = text;
    lx->line = 1;
    /* positions count from the start of the whole text */
    for (size_t i = 0; i < start && i < len; i++)
        if (text[i] == '\n') {
            lx->line++;
            lx->line_start = text + i + 1;
        }
    lx->p = text + (start < len ? start : len);
    lx->arena = a;
    lx->err = err;
    lx->value_before = false;
    lx->query = query;
    return ads_lex__next(lx);
}

const char *ads_lex__describe(const token *t, char *buf, size_t cap)
{
    switch (t->kind) {
    case T_EOF:
        return "end of input";
    case T_STRING:
        snprintf(buf, cap, "a string");
        return buf;
    case T_NAME:
        snprintf(buf, cap, "the name '%.*s'", (int)(t->len > 40 ? 40 : t->len), t->start);
        return buf;
    case T_INT:
    case T_REAL:
        snprintf(buf, cap, "the number %.*s", (int)(t->len > 40 ? 40 : t->len), t->start);
        return buf;
    default:
        snprintf(buf, cap, "'%.*s'", (int)(t->len > 40 ? 40 : t->len), t->start);
        return buf;
    }
}
