/*
 * classad/lexer.c: ClassAd text to tokens (shared/spec/classad.md section 2).
 *
 * One token of lookahead, kept in the lexer. Literals are decoded here:
 * numbers (a '-' directly before a digit belongs to the number unless the
 * previous token ends a value), strings with their escapes (adjacent string
 * literals separated only by white space are joined), 'quoted names', times
 * in backticks, and #identifiers. Every error names its line and column.
 * The usual tokens (names, keywords, operators, strings without escapes,
 * short decimal integers) take short paths; anything else, and every
 * error, the general ones.
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

/* Character classes, one table look-up per byte (the lexer's inner loops
 * run once per character of the text). Bytes from 0x80 are in no class. */
enum { C_ALPHA = 1, C_DIGIT = 2, C_SPACE = 4, C_HEX = 8, C_NAME = C_ALPHA | C_DIGIT };

#define S_ C_SPACE
#define D_ (C_DIGIT | C_HEX)
#define A_ C_ALPHA
#define H_ (C_ALPHA | C_HEX)
static const unsigned char cclass[256] = {
    0,  0,  0,  0,  0,  0,  0,  0,  0,  S_, S_, S_, S_, S_, 0,  0,  /* \0..\x0f */
    0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  /* \x10..\x1f */
    S_, 0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  /* ' '..'/' */
    D_, D_, D_, D_, D_, D_, D_, D_, D_, D_, 0,  0,  0,  0,  0,  0,  /* '0'..'?' */
    0,  H_, H_, H_, H_, H_, H_, A_, A_, A_, A_, A_, A_, A_, A_, A_, /* '@'..'O' */
    A_, A_, A_, A_, A_, A_, A_, A_, A_, A_, A_, 0,  0,  0,  0,  A_, /* 'P'..'_' */
    0,  H_, H_, H_, H_, H_, H_, A_, A_, A_, A_, A_, A_, A_, A_, A_, /* '`'..'o' */
    A_, A_, A_, A_, A_, A_, A_, A_, A_, A_, A_, 0,  0,  0,  0,  0,  /* 'p'..DEL */
};
#undef S_
#undef D_
#undef A_
#undef H_

static inline bool is_class(char c, unsigned cls)
{
    return (cclass[(unsigned char)c] & cls) != 0;
}

static inline bool is_name_start(unsigned char c)
{
    return (cclass[c] & C_ALPHA) != 0;
}

static inline bool is_name_char(unsigned char c)
{
    return (cclass[c] & C_NAME) != 0;
}

static inline bool is_digit(unsigned char c)
{
    return (cclass[c] & C_DIGIT) != 0;
}

/* Skip white space and comments. Fails only on an unterminated comment. */
static int skip_space(lexer *lx)
{
    const char *p = lx->p, *end = lx->end;
    for (;;) {
        while (p < end && is_class(*p, C_SPACE)) {
            if (*p == '\n') {
                lx->line++;
                lx->line_start = p + 1;
            }
            p++;
        }
        if (p >= end || *p != '/' || end - p < 2 || (p[1] != '/' && p[1] != '*')) {
            lx->p = p;
            return 0;
        }
        if (p[1] == '/') {
            while (p < end && *p != '\n')
                p++;
            continue;
        }
        const char *start = p;
        int line = lx->line;
        const char *ls = lx->line_start;
        for (p += 2;; p++) {
            if (p >= end) {
                lx->p = p;
                lx->line = line;
                lx->line_start = ls;
                return fail_at(lx, start, ADS_ESYNTAX, "unterminated comment");
            }
            if (end - p >= 2 && p[0] == '*' && p[1] == '/') {
                p += 2;
                break;
            }
            if (*p == '\n') {
                lx->line++;
                lx->line_start = p + 1;
            }
        }
    }
}

/* The lexer's rarer paths stay out of line, so that ads_lex__next, run
 * once per token, saves and restores only the registers its usual tokens
 * need. */
#define COLD __attribute__((noinline))

/* ---- numbers ---- */

/* The usual number: up to 18 decimal digits without a leading zero, not
 * followed by '.' or a name character, so exact in an int64 and no error.
 * Lexes it and returns true, or false for lex_number to read. */
static bool lex_plain_int(lexer *lx, token *t)
{
    const char *s = lx->p, *q = s, *end = lx->end;
    uint64_t v = 0;
    while (q < end && is_digit((unsigned char)*q)) {
        v = v * 10 + (uint64_t)(*q - '0');
        q++;
    }
    size_t n = (size_t)(q - s);
    if (n > 18 || (s[0] == '0' && n > 1) ||
        (q < end && (*q == '.' || is_name_char((unsigned char)*q))))
        return false;
    t->kind = T_INT;
    t->v.i = (int64_t)v;
    lx->p = q;
    return true;
}

/* Any number (after an optional '-' that makes it negative), with the
 * errors of a malformed one. */
COLD static int lex_number(lexer *lx, token *t, const char *start, bool negative)
{
    const char *p = start;
    const char *end = lx->end;
    bool is_real = false;

    if (p + 1 < end && p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
        uint64_t v = 0;
        const char *q = p + 2;
        if (q >= end || !is_class(*q, C_HEX))
            return fail_at(lx, q, ADS_ESYNTAX, "expected hex digits after '0x'");
        for (; q < end && is_class(*q, C_HEX); q++) {
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

    /* the integer part's value on the way (wrapping past 19 digits; used
     * only when it cannot have) */
    uint64_t v = 0;
    const char *q = p;
    while (q < end && is_digit((unsigned char)*q)) {
        v = v * 10 + (uint64_t)(*q - '0');
        q++;
    }
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

    size_t n = (size_t)(q - start);
    /* the usual integer: decimal, at most 18 digits, so below 10^18 and
     * exact; longer ones go to strtoll for its range check */
    if (!is_real && n <= 18 && (start[0] != '0' || n == 1)) {
        t->kind = T_INT;
        t->v.i = negative ? -(int64_t)v : (int64_t)v;
        lx->p = q;
        return 0;
    }

    /* copy (with the sign) to parse with the C library, which needs a NUL */
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
        v = 0;
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
        long long ll = strtoll(num, NULL, 10);
        if (errno == ERANGE)
            return fail_at(lx, negative ? start - 1 : start, ADS_ESYNTAX,
                           "integer literal does not fit 64 bits");
        t->kind = T_INT;
        t->v.i = ll;
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

/* The usual string: no escape, no line break, no NUL and no literal joined
 * after it, so its value is its text. 0 or an ADS_E* code; 1 if the
 * general path must decode it. */
static int lex_plain_string(lexer *lx, token *t)
{
    const char *s = lx->p + 1, *q = s, *end = lx->end;
    while (q < end && *q != '"' && *q != '\\' && *q != '\n' && *q != '\0')
        q++;
    if (q >= end || *q != '"')
        return 1;
    const char *next = q + 1;
    while (next < end && is_class(*next, C_SPACE))
        next++;
    if (next < end && *next == '"')
        return 1;
    size_t n = (size_t)(q - s);
    char *copy = ads_arena_strndup(lx->arena, s, n);
    if (!copy)
        return fail_at(lx, t->start, ADS_ENOMEM, "out of memory");
    t->kind = T_STRING;
    t->v.s.p = copy;
    t->v.s.len = n;
    lx->p = q + 1;
    return 0;
}

/* Any string: escapes, line breaks, joined literals, and the errors. */
static int lex_escaped_string(lexer *lx, token *t)
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

COLD static int lex_string(lexer *lx, token *t)
{
    int rc = lex_plain_string(lx, t);
    return rc > 0 ? lex_escaped_string(lx, t) : rc;
}

COLD static int lex_quoted_name(lexer *lx, token *t)
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

COLD static int lex_time(lexer *lx, token *t)
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

COLD static int lex_ident(lexer *lx, token *t)
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

/* s, n bytes of name characters, spells the lower-case word w in any case.
 * Setting bit 0x20 makes a capital small and leaves every byte that could
 * equal a small letter (digits, '_', '@') unequal to one. */
static inline bool word_is(const char *s, const char *w, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if ((s[i] | 0x20) != w[i])
            return false;
    return true;
}

/* The keyword a name spells (true false undefined error is isnt in, any
 * case), or T_NAME. */
static tok_kind keyword_kind(const char *s, size_t n)
{
    switch (n) {
    case 2:
        return word_is(s, "is", 2) ? T_IS : word_is(s, "in", 2) ? T_IN : T_NAME;
    case 4:
        return word_is(s, "true", 4) ? T_TRUE : word_is(s, "isnt", 4) ? T_ISNT : T_NAME;
    case 5:
        return word_is(s, "false", 5) ? T_FALSE : word_is(s, "error", 5) ? T_ERRORKW : T_NAME;
    case 9:
        return word_is(s, "undefined", 9) ? T_UNDEFINED : T_NAME;
    default:
        return T_NAME;
    }
}

static void lex_name(lexer *lx, token *t)
{
    const char *s = lx->p, *p = s, *end = lx->end;
    if (lx->query && *p == '@') /* @timerange, @intervals, ... */
        p++;
    while (p < end && is_name_char((unsigned char)*p))
        p++;
    /* avg@(, sum@(, ...: the '@' belongs to the name when a call follows */
    if (lx->query && *s != '@' && p + 1 < end && p[0] == '@' && p[1] == '(')
        p++;
    size_t n = (size_t)(p - s);
    t->kind = keyword_kind(s, n);
    t->v.s.p = s;
    t->v.s.len = n;
    /* `in`, `is` and `isnt` are operators only where one can stand, right
     * after an operand; anywhere else they are names, so HTCondor's ads
     * (`In = "/dev/null"`, `In == "/dev/null"`, HTCondor has no `in`) read */
    if ((t->kind == T_IN || t->kind == T_IS || t->kind == T_ISNT) && !lx->value_before)
        t->kind = T_NAME;
    lx->p = p;
}

/* ---- operators ---- */

/* p[i] if it is before end, else NUL, which continues no operator. */
static inline char byte_at(const char *p, const char *end, size_t i)
{
    return (size_t)(end - p) > i ? p[i] : '\0';
}

/* k, an operator of n bytes. */
static inline tok_kind take(size_t *len, size_t n, tok_kind k)
{
    *len = n;
    return k;
}

/* The operator at p (before end), longest first; its length in *len.
 * T_ERROR_TOKEN if no operator starts with p's byte. */
static tok_kind lex_operator(const char *p, const char *end, size_t *len)
{
    *len = 1;
    switch (*p) {
    case '(': return T_LPAREN;
    case ')': return T_RPAREN;
    case '[': return T_LBRACKET;
    case ']': return T_RBRACKET;
    case '{': return T_LBRACE;
    case '}': return T_RBRACE;
    case ',': return T_COMMA;
    case ';': return T_SEMI;
    case '.': return T_DOT;
    case '+': return T_PLUS;
    case '-': return T_MINUS;
    case '*': return T_STAR;
    case '/': return T_SLASH;
    case '%': return T_PERCENT;
    case '^': return T_CARET;
    case '~': return T_TILDE;
    case '>':
        if (byte_at(p, end, 1) == '>')
            return byte_at(p, end, 2) == '>' ? take(len, 3, T_USHR) : take(len, 2, T_SHR);
        return byte_at(p, end, 1) == '=' ? take(len, 2, T_GE) : T_GT;
    case '<':
        if (byte_at(p, end, 1) == '<')
            return take(len, 2, T_SHL);
        return byte_at(p, end, 1) == '=' ? take(len, 2, T_LE) : T_LT;
    case '=':
        if (byte_at(p, end, 2) == '=') {
            switch (p[1]) {
            case '=': return take(len, 3, T_EQUIV);
            case '?': return take(len, 3, T_META_EQ);
            case '!': return take(len, 3, T_META_NE);
            }
        }
        return byte_at(p, end, 1) == '=' ? take(len, 2, T_EQ) : T_ASSIGN;
    case '!':
        return byte_at(p, end, 1) == '=' ? take(len, 2, T_NE) : T_BANG;
    case '&':
        return byte_at(p, end, 1) == '&' ? take(len, 2, T_ANDAND) : T_AMP;
    case '|':
        return byte_at(p, end, 1) == '|' ? take(len, 2, T_OROR) : T_PIPE;
    case '?':
        return byte_at(p, end, 1) == ':' ? take(len, 2, T_ELVIS) : T_QUESTION;
    case ':':
        return byte_at(p, end, 1) == '=' ? take(len, 2, T_COLONASSIGN) : T_COLON;
    default:
        return T_ERROR_TOKEN;
    }
}

/* The operator at lx->p, or the error of a byte that starts no token. */
static int lex_punct(lexer *lx, token *t)
{
    const char *p = lx->p;
    unsigned char c = (unsigned char)*p;
    size_t n;
    t->kind = lex_operator(p, lx->end, &n);
    if (t->kind != T_ERROR_TOKEN) {
        lx->p = p + n;
        return 0;
    }
    if (c >= 0x20 && c < 0x7f)
        return fail_at(lx, p, ADS_ESYNTAX, "unexpected character '%c'", c);
    return fail_at(lx, p, ADS_ESYNTAX, "unexpected byte 0x%02x", c);
}

/* The tokens that end a value, as a set of bits (tok_kind has fewer than
 * 64 members). */
#define BIT(k) ((uint64_t)1 << (k))
static const uint64_t value_enders =
    BIT(T_INT) | BIT(T_REAL) | BIT(T_STRING) | BIT(T_NAME) | BIT(T_ID) | BIT(T_ABSTIME) |
    BIT(T_RELTIME) | BIT(T_TRUE) | BIT(T_FALSE) | BIT(T_UNDEFINED) | BIT(T_ERRORKW) |
    BIT(T_RPAREN) | BIT(T_RBRACKET) | BIT(T_RBRACE);
#undef BIT
_Static_assert(T_KINDS <= 64, "tok_kind no longer fits the bits of value_enders");

static inline bool ends_value(tok_kind k)
{
    return (value_enders >> k) & 1;
}

/* A number starts at p, which holds '.' or '-': '.' and a digit, or where
 * no value precedes, '-' and a digit or '.' and a digit. */
static bool starts_number(const lexer *lx, const char *p)
{
    const char *end = lx->end;
    if (*p == '-') {
        if (lx->value_before)
            return false;
        p++;
        if (p < end && is_digit((unsigned char)*p))
            return true;
    }
    return end - p >= 2 && p[0] == '.' && is_digit((unsigned char)p[1]);
}

int ads_lex__next(lexer *lx)
{
    token *t = &lx->tok;
    int rc;
    if ((rc = skip_space(lx))) {
        t->kind = T_ERROR_TOKEN;
        return rc;
    }
    const char *p = lx->p;
    t->start = p;
    t->line = lx->line;
    t->column = column_at(lx, p);
    t->quoted = false;
    if (p >= lx->end) {
        t->kind = T_EOF;
        t->len = 0;
        return 0;
    }
    /* names first, the most frequent tokens; each lex_* has one caller */
    unsigned char c = (unsigned char)*p;
    if (is_name_start(c) ||
        (c == '@' && lx->query && p + 1 < lx->end && is_name_start((unsigned char)p[1]))) {
        lex_name(lx, t);
    } else if (is_digit(c) && lex_plain_int(lx, t)) {
        rc = 0;
    } else if (is_digit(c) || ((c == '.' || c == '-') && starts_number(lx, p))) {
        rc = lex_number(lx, t, c == '-' ? p + 1 : p, c == '-');
    } else {
        switch (c) {
        case '"':
            rc = lex_string(lx, t);
            break;
        case '\'':
            rc = lex_quoted_name(lx, t);
            break;
        case '`':
            rc = lex_time(lx, t);
            break;
        case '#':
            rc = lex_ident(lx, t);
            break;
        default:
            rc = lex_punct(lx, t);
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
