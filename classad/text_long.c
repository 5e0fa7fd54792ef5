/*
 * classad/text_long.c: the informal "long" form of records, one `Name =
 * value` per line and a blank line after each record, which is also what
 * HTCondor's -long options print (docs/formats.md, "Informal long form"). It
 * holds, too, the two rules every text form shares: which texts are values
 * rather than expressions (ads_expr_fold) and which records a text form can
 * hold (ads_record_check_text).
 *
 * A line starting "***" (the banner HTCondor's history files put after each
 * ad) ends a record too, so condor_history files read as they are.
 *
 * Reading is line by line from a buffer or a FILE * (chunks of it), so a
 * record is all that is ever in memory. A line is split into its name parts,
 * its operator and its value text; the value text is parsed by the ClassAd
 * parser (after HTCondor's string escaping is rewritten into ClassAd's for
 * `=` lines) and folded to a value when it is a constant. Names with dots
 * build nested records, assembled in a small tree of groups and turned into
 * records when the blank line comes.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "classad/classad_int.h"
#include "classad/expr_memo.h"
#include "classad/formats.h"

/* ------------------------------------------------------------------------ */
/* Constants: ads_expr_fold                                                 */
/* ------------------------------------------------------------------------ */

static bool call_named(const ads_expr *e, const char *name)
{
    return e->kind == N_CALL && ads_name__eq(e->u.call.name.p, e->u.call.name.len, name,
                                            strlen(name));
}

static bool string_literal_is(const ads_expr *e, const char *s)
{
    size_t n = strlen(s);
    return e->kind == N_LITERAL && e->u.lit.type == ADS_STRING && e->u.lit.u.s.len == n &&
           memcmp(e->u.lit.u.s.p, s, n) == 0;
}

/* The value of a constant expression: 1 (and *v), 0 when e is not a
 * constant, or ADS_ENOMEM. The recursion follows the tree, whose depth the
 * parsers bound. */
static int fold_value(ads_value *v, const ads_expr *e, ads_arena *a)
{
    int rc;
    switch ((node_kind)e->kind) {
    case N_LITERAL:
        *v = e->u.lit;
        return 1;
    case N_LIST: {
        size_t n = e->u.list.n;
        ads_value *items = ads_arena_alloc(a, (n ? n : 1) * sizeof *items);
        if (!items)
            return ADS_ENOMEM;
        for (size_t i = 0; i < n; i++)
            if ((rc = fold_value(&items[i], e->u.list.items[i], a)) <= 0)
                return rc;
        *v = ads_list(items, n);
        return 1;
    }
    case N_RECORD: {
        /* the same names and index, literal members (as evaluation does) */
        const ads_record *src = e->u.rec;
        size_t n = src->n;
        ads_expr *lits = ads_arena_alloc(a, (n ? n : 1) * sizeof *lits);
        const ads_expr **exprs = ads_arena_alloc(a, (n ? n : 1) * sizeof *exprs);
        ads_record *r = ads_arena_alloc(a, sizeof *r);
        if (!lits || !exprs || !r)
            return ADS_ENOMEM;
        for (size_t i = 0; i < n; i++) {
            memset(&lits[i], 0, sizeof lits[i]);
            lits[i].kind = N_LITERAL;
            if ((rc = fold_value(&lits[i].u.lit, src->exprs[i], a)) <= 0)
                return rc;
            exprs[i] = &lits[i];
        }
        *r = *src;
        r->exprs = exprs;
        *v = ads_recordv(r);
        return 1;
    }
    case N_CALL:
        if (call_named(e, "real") && e->u.call.n == 1) {
            const ads_expr *x = e->u.call.args[0];
            if (string_literal_is(x, "NaN"))
                *v = ads_real(NAN);
            else if (string_literal_is(x, "INF"))
                *v = ads_real(INFINITY);
            else if (string_literal_is(x, "-INF"))
                *v = ads_real(-INFINITY);
            else
                return 0;
            return 1;
        }
        if (call_named(e, "blob") && (e->u.call.n == 1 || e->u.call.n == 2) &&
            e->u.call.args[0]->kind == N_LITERAL &&
            e->u.call.args[0]->u.lit.type == ADS_STRING) {
            if (e->u.call.n == 2) {
                ads_value meta;
                if ((rc = fold_value(&meta, e->u.call.args[1], a)) <= 0)
                    return rc;
                if (meta.type != ADS_RECORD)
                    return 0;
            }
            ads_value x;
            if (ads_expr_eval(&x, e, NULL, a))
                return ADS_ENOMEM;
            if (x.type != ADS_BLOB)
                return 0; /* bad base64: stays the expression it is */
            *v = x;
            return 1;
        }
        return 0;
    default:
        return 0;
    }
}

int ads_expr_fold(const ads_expr **out, ads_arena *a, const ads_expr *e, ads_error *err)
{
    if (!out || !a || !e)
        return ads_error_set(err, ADS_EINVAL, "fold: NULL argument");
    if (e->kind == N_LITERAL) {
        *out = e;
        return 0;
    }
    ads_value v;
    int rc = fold_value(&v, e, a);
    if (rc < 0)
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    if (rc == 0) {
        *out = e;
        return 0;
    }
    return ads_expr_literal(out, a, &v, err);
}

/* ------------------------------------------------------------------------ */
/* What the text forms can hold: ads_record_check_text                      */
/* ------------------------------------------------------------------------ */

static int check_record(const ads_record *r, const ads_str *attr, ads_error *err);
static int check_expr(const ads_expr *e, ads_str attr, ads_error *err);

static bool has_nul(ads_str s)
{
    return s.len && memchr(s.p, '\0', s.len) != NULL;
}

static int nul_error(ads_str attr, ads_error *err)
{
    int n = attr.len > 64 ? 64 : (int)attr.len;
    return ads_error_set(err, ADS_EINVAL,
                         "attribute '%.*s' holds a NUL byte, which the text forms cannot write",
                         n, attr.p);
}

static int check_value(const ads_value *v, ads_str attr, ads_error *err)
{
    int rc;
    switch (v->type) {
    case ADS_STRING:
        return has_nul(v->u.s) ? nul_error(attr, err) : 0;
    case ADS_LIST:
        for (size_t i = 0; i < v->u.list.n; i++)
            if ((rc = check_value(&v->u.list.items[i], attr, err)))
                return rc;
        return 0;
    case ADS_RECORD:
        return check_record(v->u.rec, &attr, err);
    case ADS_BLOB:
        return v->u.blob->meta ? check_record(v->u.blob->meta, &attr, err) : 0;
    default:
        return 0;
    }
}

static int check_expr(const ads_expr *e, ads_str attr, ads_error *err)
{
    int rc;
    /* down a chain's left operands in a loop (classad_int.h) */
    while (ads_expr__is_binop(e)) {
        if ((rc = check_expr(e->u.ops.b, attr, err)))
            return rc;
        e = e->u.ops.a;
    }
    switch ((node_kind)e->kind) {
    case N_LITERAL:
        return check_value(&e->u.lit, attr, err);
    case N_ATTR:
        return has_nul(e->u.attr.name) ? nul_error(attr, err) : 0;
    case N_SELECT:
        if (has_nul(e->u.sel.name))
            return nul_error(attr, err);
        return check_expr(e->u.sel.base, attr, err);
    case N_UNARY:
    case N_PAREN:
        return check_expr(e->u.ops.a, attr, err);
    case N_INDEX:
    case N_ELVIS:
    case N_BINARY: /* not reached: the loop above took the chain */
    case N_AND:
    case N_OR:
        if ((rc = check_expr(e->u.ops.a, attr, err)))
            return rc;
        return check_expr(e->u.ops.b, attr, err);
    case N_COND:
        if ((rc = check_expr(e->u.ops.a, attr, err)) || (rc = check_expr(e->u.ops.b, attr, err)))
            return rc;
        return check_expr(e->u.ops.c, attr, err);
    case N_CALL:
        if (has_nul(e->u.call.name))
            return nul_error(attr, err);
        for (size_t i = 0; i < e->u.call.n; i++)
            if ((rc = check_expr(e->u.call.args[i], attr, err)))
                return rc;
        return 0;
    case N_LIST:
        for (size_t i = 0; i < e->u.list.n; i++)
            if ((rc = check_expr(e->u.list.items[i], attr, err)))
                return rc;
        return 0;
    case N_RECORD:
        return check_record(e->u.rec, &attr, err);
    case N_PARAM:
        return 0;
    }
    return 0;
}

/* attr: the top-level attribute the record sits in (for the message), or
 * NULL at the top. */
static int check_record(const ads_record *r, const ads_str *attr, ads_error *err)
{
    int rc;
    for (size_t i = 0; i < r->n; i++) {
        ads_str name = attr ? *attr : r->names[i];
        if (has_nul(r->names[i]))
            return nul_error(name, err);
        if ((rc = check_expr(r->exprs[i], name, err)))
            return rc;
    }
    return 0;
}

int ads_record_check_text(const ads_record *r, ads_error *err)
{
    if (!r)
        return ads_error_set(err, ADS_EINVAL, "check: NULL record");
    return check_record(r, NULL, err);
}

/* ------------------------------------------------------------------------ */
/* HTCondor's string escaping and ClassAd's                                 */
/* ------------------------------------------------------------------------ */

/*
 * Rewrite a value in HTCondor's syntax -- old ClassAd string escaping, where
 * a backslash is an ordinary character except that \" inside a string is a
 * quote when anything follows it on the line ('\'' likewise in quoted names)
 * -- into ClassAd syntax, where a backslash is doubled. Comments and time
 * literals are copied as they are. With out NULL, only map: *map receives
 * the offset in s of output byte `at` (for error columns; n past the end).
 */
static void condor_to_classad(ads_buf *out, const char *s, size_t n, size_t at, size_t *map)
{
    size_t i = 0, o = 0;
#define EMIT(c, src)                                                                          \
    do {                                                                                      \
        if (map && o == at)                                                                   \
            *map = (src);                                                                     \
        o++;                                                                                  \
        if (out)                                                                              \
            ads_buf_addc(out, (c));                                                           \
    } while (0)
    if (map)
        *map = n;
    while (i < n) {
        char c = s[i];
        if (c == '"' || c == '\'') {
            char q = c;
            EMIT(q, i);
            i++;
            while (i < n && s[i] != q) {
                if (s[i] == '\\') {
                    if (i + 2 < n && s[i + 1] == q) {
                        EMIT('\\', i);
                        EMIT(q, i + 1);
                        i += 2;
                    } else {
                        EMIT('\\', i);
                        EMIT('\\', i);
                        i++;
                    }
                    continue;
                }
                EMIT(s[i], i);
                i++;
            }
            if (i < n) {
                EMIT(q, i);
                i++;
            }
        } else if (c == '`') {
            EMIT(c, i);
            i++;
            while (i < n && s[i] != '`') {
                EMIT(s[i], i);
                i++;
            }
            if (i < n) {
                EMIT('`', i);
                i++;
            }
        } else if (c == '/' && i + 1 < n && s[i + 1] == '/') {
            while (i < n) {
                EMIT(s[i], i);
                i++;
            }
        } else if (c == '/' && i + 1 < n && s[i + 1] == '*') {
            EMIT('/', i);
            EMIT('*', i + 1);
            i += 2;
            while (i < n && !(s[i] == '*' && i + 1 < n && s[i + 1] == '/')) {
                EMIT(s[i], i);
                i++;
            }
            if (i < n) {
                EMIT('*', i);
                EMIT('/', i + 1);
                i += 2;
            }
        } else {
            EMIT(c, i);
            i++;
        }
    }
#undef EMIT
}

/*
 * The other way, for writing: text in ClassAd syntax as the unparser writes
 * it (strings and quoted names with C escapes, times in backticks, nothing
 * else quoted) into HTCondor's syntax. Returns false, leaving out partly
 * written, when a string or name cannot be written that way: it holds a
 * control character (HTCondor's syntax has no escapes, and a raw line feed
 * would end the line) or ends in a backslash (which would escape the quote).
 */
static bool classad_to_condor(ads_buf *out, const char *t, size_t n)
{
    size_t i = 0;
    while (i < n) {
        char c = t[i];
        if (c == '`') {
            size_t j = i + 1;
            while (j < n && t[j] != '`')
                j++;
            j = j < n ? j + 1 : n;
            ads_buf_add(out, t + i, j - i);
            i = j;
            continue;
        }
        if (c != '"' && c != '\'') {
            ads_buf_addc(out, c);
            i++;
            continue;
        }
        char q = c;
        unsigned char last = 0;
        ads_buf_addc(out, q);
        i++;
        while (i < n && t[i] != q) {
            unsigned char ch = (unsigned char)t[i++];
            if (ch == '\\' && i < n) {
                char esc = t[i++];
                if (esc >= '0' && esc <= '7') {
                    unsigned v = (unsigned)(esc - '0');
                    int max = esc <= '3' ? 3 : 2;
                    for (int d = 1; d < max && i < n && t[i] >= '0' && t[i] <= '7'; d++)
                        v = v * 8 + (unsigned)(t[i++] - '0');
                    ch = (unsigned char)v;
                } else if (strchr("abfnrtv", esc)) {
                    return false;
                } else {
                    ch = (unsigned char)esc;
                }
            }
            if (ch < 0x20 || ch == 0x7f)
                return false;
            if (ch == (unsigned char)q)
                ads_buf_addc(out, '\\');
            ads_buf_addc(out, (char)ch);
            last = ch;
        }
        if (last == '\\')
            return false;
        ads_buf_addc(out, q);
        i++;
    }
    return true;
}

/* ------------------------------------------------------------------------ */
/* Reading                                                                  */
/* ------------------------------------------------------------------------ */

#define CHUNK 65536

typedef struct group group;

/* One attribute of a record being assembled: a value, or a nested record
 * still growing (from `Outer.Inner` lines). */
typedef struct entry {
    ads_str name;
    uint32_t hash;
    const ads_expr *expr; /* NULL for a group */
    group *sub;
    int line; /* where it was last set, for messages */
} entry;

struct group {
    entry *items;
    size_t n, cap;
    bool heap; /* items are malloc'd (the top level, reused); else in the arena */
};

/* One part of a dotted name, and its column. */
typedef struct part {
    ads_str name;
    int column;
} part;

struct ads_long_reader {
    const char *p, *end; /* unread input: the rest of the buffer, or of the chunk */
    FILE *f;             /* NULL for a buffer */
    char *chunk;
    bool eof;
    ads_buf line;       /* a line that had to be assembled across chunks */
    int lineno;         /* of the line last read */
    bool skipping;      /* after an error: skip the rest of that record */
    int final_rc;       /* an error that ends reading, repeated by later calls */
    ads_error final_err;
    group top;
    part parts[ADS_MAX_DEPTH];
    ads_buf conv; /* a value rewritten into ClassAd syntax */
    ads_expr_memo *exprs; /* the value texts seen last that are expressions, parsed */
    bool exprs_failed;    /* no memory for that memo: parse every time */
};

static int new_reader(ads_long_reader **out, ads_error *err)
{
    if (!out)
        return ads_error_set(err, ADS_EINVAL, "long reader: NULL argument");
    ads_long_reader *r = calloc(1, sizeof *r);
    if (!r)
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    ads_buf_init(&r->line);
    ads_buf_init(&r->conv);
    r->top.heap = true;
    *out = r;
    return 0;
}

int ads_long_reader_new(ads_long_reader **out, const char *text, size_t len, ads_error *err)
{
    int rc;
    if (!text && len)
        return ads_error_set(err, ADS_EINVAL, "long reader: NULL text");
    if ((rc = new_reader(out, err)))
        return rc;
    (*out)->p = text ? text : "";
    (*out)->end = (*out)->p + len;
    (*out)->eof = true;
    return 0;
}

int ads_long_reader_new_file(ads_long_reader **out, FILE *f, ads_error *err)
{
    int rc;
    if (!f)
        return ads_error_set(err, ADS_EINVAL, "long reader: NULL file");
    if ((rc = new_reader(out, err)))
        return rc;
    ads_long_reader *r = *out;
    r->chunk = malloc(CHUNK);
    if (!r->chunk) {
        ads_long_reader_free(r);
        *out = NULL;
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    }
    r->f = f;
    r->p = r->end = r->chunk;
    return 0;
}

void ads_long_reader_free(ads_long_reader *r)
{
    if (!r)
        return;
    ads_buf_free(&r->line);
    ads_buf_free(&r->conv);
    free(r->top.items);
    free(r->chunk);
    ads_expr_memo_free(r->exprs);
    free(r);
}

static int fail(ads_long_reader *r, ads_error *err, int code, const char *line,
                const char *at, const char *fmt, ...) __attribute__((format(printf, 6, 7)));

/* Report an error at byte `at` of the current line. */
static int fail(ads_long_reader *r, ads_error *err, int code, const char *line,
                const char *at, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    ads_error_vset(err, code, r->lineno, (int)(at - line) + 1, fmt, ap);
    va_end(ap);
    return code;
}

/* An error after which nothing more is read. */
static int final(ads_long_reader *r, ads_error *err, int code)
{
    r->final_rc = code;
    if (err)
        r->final_err = *err;
    else
        ads_error_set(&r->final_err, code, "%s", ads_strerror(code));
    return code;
}

/* The next line, without its LF or CRLF: 1, 0 at the end, or an error. */
static int get_line(ads_long_reader *r, const char **lp, size_t *ln, ads_error *err)
{
    if (!r->f) {
        if (r->p >= r->end)
            return 0;
        const char *nl = memchr(r->p, '\n', (size_t)(r->end - r->p));
        const char *e = nl ? nl : r->end;
        *lp = r->p;
        *ln = (size_t)(e - r->p);
        r->p = nl ? nl + 1 : r->end;
    } else {
        bool any = false;
        ads_buf_clear(&r->line);
        for (;;) {
            if (r->p == r->end) {
                if (r->eof)
                    break;
                size_t n = fread(r->chunk, 1, CHUNK, r->f);
                if (n == 0) {
                    if (ferror(r->f))
                        return ads_error_set(err, ADS_EIO, "read error: %s", strerror(errno));
                    r->eof = true;
                    break;
                }
                r->p = r->chunk;
                r->end = r->chunk + n;
            }
            any = true;
            const char *nl = memchr(r->p, '\n', (size_t)(r->end - r->p));
            const char *e = nl ? nl : r->end;
            size_t n = (size_t)(e - r->p);
            if (nl && r->line.len == 0) {
                /* the whole line is in the chunk: no copy */
                *lp = r->p;
                *ln = n;
                r->p = nl + 1;
                goto got;
            }
            if (r->line.len + n > ADS_MAX_TEXT)
                return ads_error_set_at(err, ADS_ELIMIT, r->lineno + 1, 1,
                                        "line longer than %zu bytes", (size_t)ADS_MAX_TEXT);
            ads_buf_add(&r->line, r->p, n);
            r->p = nl ? nl + 1 : r->end;
            if (nl)
                break;
        }
        if (!any)
            return 0;
        if (r->line.failed)
            return ads_error_set(err, ADS_ENOMEM, "out of memory");
        *lp = r->line.p ? r->line.p : "";
        *ln = r->line.len;
    }
got:
    if (r->lineno < INT_MAX)
        r->lineno++;
    if (*ln > ADS_MAX_TEXT)
        return ads_error_set_at(err, ADS_ELIMIT, r->lineno, 1, "line longer than %zu bytes",
                                (size_t)ADS_MAX_TEXT);
    if (*ln > 0 && (*lp)[*ln - 1] == '\r')
        (*ln)--;
    return 1;
}

static bool is_name_start(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool is_name_char(unsigned char c)
{
    return is_name_start(c) || (c >= '0' && c <= '9');
}

static bool is_blank(char c)
{
    return c == ' ' || c == '\t';
}

/* What was found at p, for messages. */
static const char *describe(const char *p, const char *end, char *buf, size_t cap)
{
    if (p >= end)
        return "the end of the line";
    unsigned char c = (unsigned char)*p;
    if (c >= 0x20 && c < 0x7f)
        snprintf(buf, cap, "'%c'", c);
    else
        snprintf(buf, cap, "byte 0x%02x", c);
    return buf;
}

/* Parse one attribute line (not blank, not a comment) into r->parts and an
 * expression. */
static int parse_line(ads_long_reader *r, const char *line, const char *p, const char *end,
                      size_t *nparts, const ads_expr **out, ads_arena *a, ads_error *err)
{
    char what[16];
    size_t n = 0;
    int rc;
    /* the ClassAd lexer takes "\\" then a NUL byte as an escaped NUL; no
     * line of the long form may hold one */
    const char *nul = memchr(p, '\0', (size_t)(end - p));
    if (nul)
        return fail(r, err, ADS_ESYNTAX, line, nul, "a NUL byte is not allowed");
    for (;;) {
        const char *s = p;
        ads_str name;
        if (n == ADS_MAX_DEPTH)
            return fail(r, err, ADS_ELIMIT, line, p, "attribute name of more than %d parts",
                        ADS_MAX_DEPTH);
        if (p < end && is_name_start((unsigned char)*p)) {
            while (p < end && is_name_char((unsigned char)*p))
                p++;
            char *copy = ads_arena_strndup(a, s, (size_t)(p - s));
            if (!copy)
                return fail(r, err, ADS_ENOMEM, line, s, "out of memory");
            name.p = copy;
            name.len = (size_t)(p - s);
        } else if (p < end && *p == '\'') {
            lexer lx;
            ads_error lerr;
            if ((rc = ads_lex__init(&lx, p, (size_t)(end - p), a, &lerr)))
                return fail(r, err, rc, line, p + lerr.column - 1, "%s", lerr.message);
            name = lx.tok.v.s;
            p += lx.tok.len;
        } else if (n == 0) {
            return fail(r, err, ADS_ESYNTAX, line, p,
                        "expected an attribute name, found %s",
                        describe(p, end, what, sizeof what));
        } else {
            return fail(r, err, ADS_ESYNTAX, line, p,
                        "expected an attribute name after '.', found %s",
                        describe(p, end, what, sizeof what));
        }
        r->parts[n].name = name;
        r->parts[n].column = (int)(s - line) + 1;
        n++;
        if (p < end && *p == '.') {
            p++;
            continue;
        }
        break;
    }
    while (p < end && is_blank(*p))
        p++;
    bool condor;
    const char *op = p;
    if (end - p >= 2 && p[0] == ':' && p[1] == '=') {
        p += 2;
        condor = false;
    } else if (p < end && *p == '=') {
        p++;
        condor = true;
    } else {
        return fail(r, err, ADS_ESYNTAX, line, p,
                    "expected '=' or ':=' after the attribute name, found %s",
                    describe(p, end, what, sizeof what));
    }
    while (p < end && is_blank(*p))
        p++;
    bool keep = false;
    if (p < end && *p == '=') {
        keep = true;
        condor = false;
        p++;
    }
    while (end > p && is_blank(end[-1]))
        end--;
    while (p < end && is_blank(*p))
        p++;
    if (p == end)
        return fail(r, err, ADS_ESYNTAX, line, p, "expected a value after '%s'",
                    keep ? "=" : *op == ':' ? ":=" : "=");

    const char *text = p;
    size_t len = (size_t)(end - p);
    if (condor) {
        ads_buf_clear(&r->conv);
        condor_to_classad(&r->conv, p, len, 0, NULL);
        if (r->conv.failed)
            return fail(r, err, ADS_ENOMEM, line, p, "out of memory");
        text = r->conv.p;
        len = r->conv.len;
    }
    ads_error perr;
    const ads_expr *e;
    /* a pool's slots share their Start, Requirements, Rank...: the memo
     * parses each such text once (folded values only; a memo that cannot
     * be made only costs speed) */
    if (!keep && !r->exprs && !r->exprs_failed)
        r->exprs_failed = ads_expr_memo_new(&r->exprs) != 0;
    if (!keep)
        rc = ads_expr__parse_memo(r->exprs, &e, a, text, len, &perr);
    else
        rc = ads_expr_parse(&e, a, text, len, &perr);
    if (rc) {
        size_t at = perr.column > 0 ? (size_t)perr.column - 1 : 0;
        if (condor)
            condor_to_classad(NULL, p, (size_t)(end - p), at, &at);
        if (at > (size_t)(end - p))
            at = (size_t)(end - p);
        return fail(r, err, rc, line, p + at, "%s", perr.message);
    }
    *nparts = n;
    *out = e;
    return 0;
}

/* ---- assembling a record ---- */

static entry *group_find(group *g, ads_str name, uint32_t hash)
{
    for (size_t i = 0; i < g->n; i++)
        if (g->items[i].hash == hash &&
            ads_name__eq(g->items[i].name.p, g->items[i].name.len, name.p, name.len))
            return &g->items[i];
    return NULL;
}

static entry *group_append(group *g, ads_arena *a)
{
    if (g->n == g->cap) {
        size_t cap = g->cap ? g->cap * 2 : 16;
        entry *items;
        if (g->heap) {
            items = realloc(g->items, cap * sizeof *items);
        } else {
            items = ads_arena_alloc(a, cap * sizeof *items);
            if (items && g->n)
                memcpy(items, g->items, g->n * sizeof *items);
        }
        if (!items)
            return NULL;
        g->items = items;
        g->cap = cap;
    }
    entry *e = &g->items[g->n++];
    memset(e, 0, sizeof *e);
    return e;
}

/* A group holding the attributes of record rec (to extend it). */
static group *group_from_record(const ads_record *rec, int line, ads_arena *a)
{
    group *g = ads_arena_alloc(a, sizeof *g);
    if (!g)
        return NULL;
    memset(g, 0, sizeof *g);
    for (size_t i = 0; i < rec->n; i++) {
        entry *e = group_append(g, a);
        if (!e)
            return NULL;
        e->name = rec->names[i];
        e->hash = rec->hashes[i];
        e->expr = rec->exprs[i];
        e->line = line;
    }
    return g;
}

/* Set the attribute named by r->parts[0..n) to expr. */
static int assemble(ads_long_reader *r, const char *line, size_t n, const ads_expr *expr,
                    ads_arena *a, ads_error *err)
{
    group *g = &r->top;
    for (size_t k = 0; k < n; k++) {
        ads_str name = r->parts[k].name;
        uint32_t hash = ads_name_hash(name.p, name.len);
        entry *e = group_find(g, name, hash);
        if (!e) {
            if (!(e = group_append(g, a)))
                return fail(r, err, ADS_ENOMEM, line, line, "out of memory");
            e->name = name;
            e->hash = hash;
            e->line = r->lineno;
            if (k + 1 < n) {
                if (!(e->sub = ads_arena_alloc(a, sizeof *e->sub)))
                    return fail(r, err, ADS_ENOMEM, line, line, "out of memory");
                memset(e->sub, 0, sizeof *e->sub);
            }
        }
        if (k + 1 == n) {
            e->expr = expr;
            e->sub = NULL;
            e->line = r->lineno;
            return 0;
        }
        if (!e->sub) {
            const ads_value *v = ads_expr_literal_value(e->expr);
            const ads_record *rec = v && v->type == ADS_RECORD ? v->u.rec
                                    : e->expr->kind == N_RECORD ? e->expr->u.rec
                                                                : NULL;
            if (!rec) {
                int len = name.len > 64 ? 64 : (int)name.len;
                return fail(r, err, ADS_ESYNTAX, line, line + r->parts[k].column - 1,
                            "'%.*s' is not a record: line %d gave it another value", len,
                            name.p, e->line);
            }
            group *sub = group_from_record(rec, e->line, a);
            if (!sub)
                return fail(r, err, ADS_ENOMEM, line, line, "out of memory");
            e->sub = sub;
            e->expr = NULL;
        }
        g = e->sub;
    }
    return 0;
}

/* The record of group g, as an expression: a literal record when every
 * member is a value, else a record expression. */
static int build(const ads_record **rec, bool *literal, const group *g, ads_arena *a,
                 ads_error *err)
{
    ads_record_builder *b;
    int rc;
    bool all = true;
    if ((rc = ads_record_builder_new(&b, a, err)))
        return rc;
    for (size_t i = 0; i < g->n; i++) {
        const entry *e = &g->items[i];
        const ads_expr *x = e->expr;
        if (e->sub) {
            const ads_record *sub;
            bool lit;
            if ((rc = build(&sub, &lit, e->sub, a, err)))
                return rc;
            if (lit) {
                ads_value v = ads_recordv(sub);
                if ((rc = ads_expr_literal(&x, a, &v, err)))
                    return rc;
            } else {
                ads_expr *node = ads_arena_alloc(a, sizeof *node);
                if (!node)
                    return ads_error_set(err, ADS_ENOMEM, "out of memory");
                memset(node, 0, sizeof *node);
                node->kind = N_RECORD;
                node->u.rec = sub;
                x = node;
            }
        }
        if (x->kind != N_LITERAL)
            all = false;
        if ((rc = ads_record_builder_add(b, e->name.p, e->name.len, x, err)))
            return rc;
    }
    if (!(*rec = ads_record__builder_finish_plain(b)))
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    *literal = all;
    return 0;
}

int ads_long_reader_next(const ads_record **out, int *line, ads_long_reader *r, ads_arena *a,
                         ads_error *err)
{
    const char *lp = NULL;
    size_t ln = 0;
    int rc, start = 0;
    size_t bytes = 0;
    if (!r || !out || !a)
        return ads_error_set(err, ADS_EINVAL, "long reader: NULL argument");
    if (r->final_rc) {
        if (err)
            *err = r->final_err;
        return r->final_rc;
    }
    r->top.n = 0;
    for (;;) {
        if ((rc = get_line(r, &lp, &ln, err)) < 0)
            return final(r, err, rc);
        if (rc == 0)
            break;
        const char *p = lp, *end = lp + ln;
        if (r->lineno == 1 && ln >= 3 && memcmp(p, "\xEF\xBB\xBF", 3) == 0)
            p += 3; /* a byte-order mark */
        while (p < end && is_blank(*p))
            p++;
        /* A line starting "***" is the banner HTCondor writes after each ad
         * of a history file ("*** Offset = 0 ClusterId = 1 ProcId = 0 ...",
         * "*** EPOCH ..."): it ends the record as a blank line does. Its
         * fields repeat attributes of the ad (or say where the ad sits in
         * that file), so they are not kept. No attribute line starts with
         * '*', so plain long-form input never meets the rule. */
        if (p == end || (end - p >= 3 && memcmp(p, "***", 3) == 0)) {
            r->skipping = false;
            if (start)
                break;
            continue;
        }
        if (r->skipping || *p == '#')
            continue;
        bytes += ln;
        if (bytes > ADS_MAX_TEXT) {
            r->skipping = true;
            return fail(r, err, ADS_ELIMIT, lp, p, "record longer than %zu bytes",
                        (size_t)ADS_MAX_TEXT);
        }
        size_t n;
        const ads_expr *e;
        if ((rc = parse_line(r, lp, p, end, &n, &e, a, err)) ||
            (rc = assemble(r, lp, n, e, a, err))) {
            if (rc == ADS_ENOMEM)
                return final(r, err, rc);
            r->skipping = true;
            return rc;
        }
        if (!start)
            start = r->lineno;
    }
    if (!start)
        return 0;
    const ads_record *rec;
    bool literal;
    if ((rc = build(&rec, &literal, &r->top, a, err)))
        return final(r, err, rc);
    *out = rec;
    if (line)
        *line = start;
    return 1;
}

/* ------------------------------------------------------------------------ */
/* Writing                                                                  */
/* ------------------------------------------------------------------------ */

/* Could e fold to a value on reading (a constant that is not a literal)?
 * Such an expression is written with a leading '=' so it stays as it is. */
static bool constant_tree(const ads_expr *e)
{
    switch ((node_kind)e->kind) {
    case N_LITERAL:
        return true;
    case N_LIST:
        for (size_t i = 0; i < e->u.list.n; i++)
            if (!constant_tree(e->u.list.items[i]))
                return false;
        return true;
    case N_RECORD:
        for (size_t i = 0; i < e->u.rec->n; i++)
            if (!constant_tree(e->u.rec->exprs[i]))
                return false;
        return true;
    case N_CALL:
        if (call_named(e, "real") && e->u.call.n == 1)
            return e->u.call.args[0]->kind == N_LITERAL;
        if (call_named(e, "blob") && (e->u.call.n == 1 || e->u.call.n == 2))
            return e->u.call.args[0]->kind == N_LITERAL &&
                   (e->u.call.n == 1 || constant_tree(e->u.call.args[1]));
        return false;
    default:
        return false;
    }
}

typedef struct writer {
    ads_buf *out;
    ads_buf prefix; /* the dotted name so far, with its trailing '.' */
    ads_buf text;   /* a value in ClassAd syntax */
    ads_buf conv;   /* the same in HTCondor's syntax */
} writer;

static void write_line(writer *w, const ads_expr *e, const ads_value *v)
{
    bool keep = false;
    /* ads_buf_clear forgets a failed append: pass it on to the output, which
     * ads_long_write checks (the line's value would otherwise go missing) */
    if (w->text.failed || w->conv.failed)
        w->out->failed = true;
    ads_buf_clear(&w->text);
    ads_buf_clear(&w->conv);
    if (v) {
        ads_value_unparse(&w->text, v);
    } else {
        ads_expr_unparse(&w->text, e);
        keep = constant_tree(e);
    }
    ads_buf_add(w->out, w->prefix.p, w->prefix.len);
    if (keep) {
        ads_buf_adds(w->out, " = =");
        ads_buf_add(w->out, w->text.p, w->text.len);
    } else if (classad_to_condor(&w->conv, w->text.p, w->text.len)) {
        ads_buf_adds(w->out, " = ");
        ads_buf_add(w->out, w->conv.p, w->conv.len);
    } else {
        ads_buf_adds(w->out, " := ");
        ads_buf_add(w->out, w->text.p, w->text.len);
    }
    ads_buf_addc(w->out, '\n');
}

/* The attributes of r, each name after the prefix; parts: how many name
 * parts those lines have. */
static void write_attrs(writer *w, const ads_record *r, int parts)
{
    for (size_t i = 0; i < r->n; i++) {
        const ads_expr *e = r->exprs[i];
        const ads_value *v = ads_expr_literal_value(e);
        size_t mark = w->prefix.len;
        ads_unparse__name(&w->prefix, r->names[i].p, r->names[i].len);
        if (v && v->type == ADS_RECORD && v->u.rec->n > 0 && parts < ADS_MAX_DEPTH) {
            ads_buf_addc(&w->prefix, '.');
            write_attrs(w, v->u.rec, parts + 1);
        } else {
            write_line(w, e, v);
        }
        w->prefix.len = mark;
    }
}

int ads_long_write(ads_buf *b, const ads_record *r, ads_error *err)
{
    int rc;
    if (!b || !r)
        return ads_error_set(err, ADS_EINVAL, "long write: NULL argument");
    if (r->n == 0)
        return ads_error_set(err, ADS_EINVAL,
                             "the long form cannot hold a record with no attributes");
    if ((rc = ads_record_check_text(r, err)))
        return rc;
    writer w = {b, ADS_BUF_INIT, ADS_BUF_INIT, ADS_BUF_INIT};
    write_attrs(&w, r, 1);
    ads_buf_addc(b, '\n');
    bool failed = w.prefix.failed || w.text.failed || w.conv.failed || b->failed;
    ads_buf_free(&w.prefix);
    ads_buf_free(&w.text);
    ads_buf_free(&w.conv);
    if (failed)
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    return 0;
}
