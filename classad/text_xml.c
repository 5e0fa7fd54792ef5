/*
 * classad/text_xml.c: records in HTCondor's classads XML form
 * (<classads><c><a n="Name"><s>..</s></a></c></classads>; the element names
 * are HTCondor's; docs/formats.md, "XML", lists them).
 *
 * Writing escapes text twice, as HTCondor does: ClassAd C escapes first (for
 * control characters, backslashes, and bytes that are not UTF-8, which XML
 * cannot hold), then the XML entities, so the document is well-formed
 * whatever the bytes. Expressions (<e>) are ClassAd source and get the XML
 * entities only.
 *
 * Reading is a small strict parser of exactly that form, not a general XML
 * parser: no comments, CDATA, namespaces or other elements. Bytes come from
 * a buffer or, chunk by chunk, from a FILE *; one top-level <c> is parsed
 * per call, recursion bounded by ADS_MAX_DEPTH.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "classad/classad_int.h"
#include "classad/formats.h"
#include "classad/text_in.h"
#include "base/num.h"
#include "base/utf8.h"

/* The length of the UTF-8 sequence at p (n bytes available) if it is a
 * well-formed character that XML 1.0 allows (not U+FFFE or U+FFFF), else 0.
 * ASCII bytes are 1 (control characters are the caller's business). */
static size_t xml_utf8_len(const unsigned char *p, size_t n)
{
    size_t len = ads_utf8_len(p, n);
    if (len == 3 && p[0] == 0xef && p[1] == 0xbf && (p[2] == 0xbe || p[2] == 0xbf))
        return 0;
    return len;
}

/* ------------------------------------------------------------------------ */
/* Writing                                                                  */
/* ------------------------------------------------------------------------ */

/* Text for <s> and n="...": C escapes, then entities (&quot; too in an
 * attribute value). */
static void xml_text(ads_buf *b, const char *p, size_t n, bool attr)
{
    const unsigned char *s = (const unsigned char *)p;
    size_t i = 0;
    while (i < n) {
        unsigned char c = s[i];
        switch (c) {
        case '\\': ads_buf_adds(b, "\\\\"); i++; continue;
        case '&': ads_buf_adds(b, "&amp;"); i++; continue;
        case '<': ads_buf_adds(b, "&lt;"); i++; continue;
        case '>': ads_buf_adds(b, "&gt;"); i++; continue;
        case '\n': ads_buf_adds(b, "\\n"); i++; continue;
        case '\t': ads_buf_adds(b, "\\t"); i++; continue;
        case '\r': ads_buf_adds(b, "\\r"); i++; continue;
        case '"':
            ads_buf_adds(b, attr ? "&quot;" : "\"");
            i++;
            continue;
        default: break;
        }
        if (c < 0x20 || c == 0x7f) {
            ads_buf_printf(b, "\\%03o", c);
            i++;
            continue;
        }
        size_t len = xml_utf8_len(s + i, n - i);
        if (len) {
            ads_buf_add(b, s + i, len);
            i += len;
        } else {
            ads_buf_printf(b, "\\%03o", c);
            i++;
        }
    }
}

/* ClassAd source for <e>: entities only; bytes XML cannot hold occur only
 * inside the source's string literals and quoted names, where an octal
 * escape means the same byte. */
static void xml_source(ads_buf *b, const char *p, size_t n)
{
    const unsigned char *s = (const unsigned char *)p;
    size_t i = 0;
    while (i < n) {
        unsigned char c = s[i];
        switch (c) {
        case '&': ads_buf_adds(b, "&amp;"); i++; continue;
        case '<': ads_buf_adds(b, "&lt;"); i++; continue;
        case '>': ads_buf_adds(b, "&gt;"); i++; continue;
        default: break;
        }
        size_t len = c < 0x20 || c == 0x7f ? 0 : xml_utf8_len(s + i, n - i);
        if (len) {
            ads_buf_add(b, s + i, len);
            i += len;
        } else {
            ads_buf_printf(b, "\\%03o", c);
            i++;
        }
    }
}

typedef struct xwriter {
    ads_buf *out;
    ads_buf text;
} xwriter;

/* Empty w->text for the next piece. ads_buf_clear forgets that an append
 * failed, so a failure is first passed on to the output, which the end
 * checks (a real, a string or an expression would otherwise go missing). */
static void text_clear(xwriter *w)
{
    if (w->text.failed)
        w->out->failed = true;
    ads_buf_clear(&w->text);
}

static void write_expr(xwriter *w, const ads_expr *e);

static void write_attr(xwriter *w, ads_str name, const ads_expr *e)
{
    ads_buf_adds(w->out, "<a n=\"");
    xml_text(w->out, name.p, name.len, true);
    ads_buf_adds(w->out, "\">");
    write_expr(w, e);
    ads_buf_adds(w->out, "</a>");
}

static void write_record_inline(xwriter *w, const ads_record *r)
{
    ads_buf_adds(w->out, "<c>");
    for (size_t i = 0; i < r->n; i++)
        write_attr(w, r->names[i], r->exprs[i]);
    ads_buf_adds(w->out, "</c>");
}

static void write_source(xwriter *w)
{
    ads_buf_adds(w->out, "<e>");
    xml_source(w->out, w->text.p, w->text.len);
    ads_buf_adds(w->out, "</e>");
}

static void write_value(xwriter *w, const ads_value *v)
{
    switch (v->type) {
    case ADS_UNDEFINED:
        ads_buf_adds(w->out, "<un/>");
        return;
    case ADS_ERROR:
        ads_buf_adds(w->out, "<er/>");
        return;
    case ADS_BOOLEAN:
        ads_buf_adds(w->out, v->u.b ? "<b v=\"t\"/>" : "<b v=\"f\"/>");
        return;
    case ADS_INTEGER:
        ads_buf_printf(w->out, "<i>%lld</i>", (long long)v->u.i);
        return;
    case ADS_REAL:
        ads_buf_adds(w->out, "<r>");
        if (isnan(v->u.r)) {
            ads_buf_adds(w->out, "NaN");
        } else if (isinf(v->u.r)) {
            ads_buf_adds(w->out, v->u.r > 0 ? "INF" : "-INF");
        } else {
            text_clear(w);
            ads_value_unparse(&w->text, v);
            ads_buf_add(w->out, w->text.p, w->text.len);
        }
        ads_buf_adds(w->out, "</r>");
        return;
    case ADS_STRING:
        ads_buf_adds(w->out, "<s>");
        xml_text(w->out, v->u.s.p, v->u.s.len, false);
        ads_buf_adds(w->out, "</s>");
        return;
    case ADS_LIST:
        ads_buf_adds(w->out, "<l>");
        for (size_t i = 0; i < v->u.list.n; i++)
            write_value(w, &v->u.list.items[i]);
        ads_buf_adds(w->out, "</l>");
        return;
    case ADS_RECORD:
        write_record_inline(w, v->u.rec);
        return;
    case ADS_ABSTIME:
        ads_buf_adds(w->out, "<at>");
        ads_time__format_abs(w->out, v->u.abs.secs, v->u.abs.offset);
        ads_buf_adds(w->out, "</at>");
        return;
    case ADS_RELTIME:
        ads_buf_adds(w->out, "<rt>");
        ads_time__format_rel(w->out, v->u.rel);
        ads_buf_adds(w->out, "</rt>");
        return;
    case ADS_IDENT:
    case ADS_BLOB:
        text_clear(w);
        ads_value_unparse(&w->text, v);
        write_source(w);
        return;
    }
}

static void write_expr(xwriter *w, const ads_expr *e)
{
    switch ((node_kind)e->kind) {
    case N_LITERAL:
        write_value(w, &e->u.lit);
        return;
    case N_LIST:
        ads_buf_adds(w->out, "<l>");
        for (size_t i = 0; i < e->u.list.n; i++)
            write_expr(w, e->u.list.items[i]);
        ads_buf_adds(w->out, "</l>");
        return;
    case N_RECORD:
        write_record_inline(w, e->u.rec);
        return;
    default:
        text_clear(w);
        ads_expr_unparse(&w->text, e);
        write_source(w);
        return;
    }
}

void ads_xml_write_begin(ads_buf *b)
{
    ads_buf_adds(b, "<?xml version=\"1.0\"?>\n"
                    "<!DOCTYPE classads SYSTEM \"classads.dtd\">\n"
                    "<classads>\n");
}

void ads_xml_write_end(ads_buf *b)
{
    ads_buf_adds(b, "</classads>\n");
}

int ads_xml_write(ads_buf *b, const ads_record *r, ads_error *err)
{
    int rc;
    if (!b || !r)
        return ads_error_set(err, ADS_EINVAL, "XML write: NULL argument");
    if ((rc = ads_record_check_text(r, err)))
        return rc;
    xwriter w = {b, ADS_BUF_INIT};
    ads_buf_adds(b, "<c>\n");
    for (size_t i = 0; i < r->n; i++) {
        ads_buf_adds(b, "    ");
        write_attr(&w, r->names[i], r->exprs[i]);
        ads_buf_addc(b, '\n');
    }
    ads_buf_adds(b, "</c>\n");
    bool failed = w.text.failed || b->failed;
    ads_buf_free(&w.text);
    if (failed)
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Reading                                                                  */
/* ------------------------------------------------------------------------ */

#define TAG_MAX 16

typedef enum top_state {
    TOP_START,   /* before the first element */
    TOP_WRAPPED, /* inside <classads> */
    TOP_BARE,    /* <c> elements without a wrapper */
    TOP_AFTER,   /* after </classads>: only white space may follow */
    TOP_DONE
} top_state;

typedef enum tag_kind { TAG_START, TAG_END, TAG_EMPTY } tag_kind;

/* A tag just read: <name>, </name> or <name/>, with at most one attribute. */
typedef struct tag {
    tag_kind kind;
    char name[TAG_MAX + 1];
    char attr[TAG_MAX + 1]; /* "" when none; the value is in r->attr */
    int line, column;       /* of its '<' */
    uint64_t at;
} tag;

struct ads_xml_reader {
    ads_text_in in; /* the bytes, their position and line */
    top_state state;
    int final_rc;
    ads_error final_err;
    ads_buf text; /* element text, entities decoded */
    ads_buf attr; /* the tag's attribute value, entities decoded */
    ads_buf str;  /* C escapes decoded */
    ads_arena *arena;
    ads_error *err;
};

static inline uint64_t offset(const ads_xml_reader *r)
{
    return ads_text_in_offset(&r->in);
}

static inline int column(const ads_xml_reader *r, uint64_t at)
{
    return ads_text_in_column(&r->in, at);
}

/* The next byte without taking it, or -1 at the end (or when a read failed,
 * or the record got too big: the error reported then says so). */
static inline int peek(ads_xml_reader *r)
{
    return ads_text_in_peek(&r->in);
}

/* Take the current byte (there is one: the caller peeked). */
static inline void take(ads_xml_reader *r)
{
    if (*r->in.p++ == '\n') {
        if (r->in.line < INT_MAX)
            r->in.line++;
        r->in.line_start = offset(r);
    }
}

static int failv(ads_xml_reader *r, int line, int col, const char *fmt, va_list ap)
{
    if (r->in.io_errno)
        return ads_error_set(r->err, ADS_EIO, "read error: %s", strerror(r->in.io_errno));
    if (r->in.too_big)
        return ads_error_set_at(r->err, ADS_ELIMIT, line, col, "record longer than %zu bytes",
                                (size_t)ADS_MAX_TEXT);
    ads_error_vset(r->err, ADS_ESYNTAX, line, col, fmt, ap);
    return ADS_ESYNTAX;
}

static int fail(ads_xml_reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A syntax error at the current byte. */
static int fail(ads_xml_reader *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = failv(r, r->in.line, column(r, offset(r)), fmt, ap);
    va_end(ap);
    return rc;
}

static int fail_at(ads_xml_reader *r, int line, int col, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int fail_at(ads_xml_reader *r, int line, int col, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = failv(r, line, col, fmt, ap);
    va_end(ap);
    return rc;
}

static int oom(ads_xml_reader *r)
{
    return ads_error_set_at(r->err, ADS_ENOMEM, r->in.line, column(r, offset(r)),
                            "out of memory");
}

static const char *found(ads_xml_reader *r, char *buf, size_t cap)
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

static bool is_ws(int c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

static void skip_ws(ads_xml_reader *r)
{
    while (is_ws(peek(r)))
        take(r);
}

/*
 * An entity, '&' current, decoded into b: &lt; &gt; &amp; &quot; &apos;
 * &#N; &#xN; (a character XML allows).
 */
static int entity(ads_xml_reader *r, ads_buf *b)
{
    int line = r->in.line, col = column(r, offset(r));
    char name[12];
    size_t n = 0;
    take(r);
    for (;;) {
        int c = peek(r);
        if (c == ';') {
            take(r);
            break;
        }
        if (c < 0 || n == sizeof name - 1 || !((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                                               (c >= '0' && c <= '9') || c == '#'))
            return fail_at(r, line, col, "'&' that does not start an entity (write &amp;)");
        name[n++] = (char)c;
        take(r);
    }
    name[n] = '\0';
    static const struct {
        const char *name;
        char c;
    } named[] = {{"lt", '<'}, {"gt", '>'}, {"amp", '&'}, {"quot", '"'}, {"apos", '\''}};
    for (size_t i = 0; i < sizeof named / sizeof named[0]; i++) {
        if (strcmp(name, named[i].name) == 0) {
            ads_buf_addc(b, named[i].c);
            return 0;
        }
    }
    if (name[0] == '#' && n > 1) {
        uint32_t cp = 0;
        bool hex = name[1] == 'x';
        size_t i = hex ? 2 : 1;
        if (i == n)
            return fail_at(r, line, col, "bad character reference '&%s;'", name);
        for (; i < n; i++) {
            char c = name[i];
            int d = c >= '0' && c <= '9'          ? c - '0'
                    : hex && c >= 'a' && c <= 'f' ? c - 'a' + 10
                    : hex && c >= 'A' && c <= 'F' ? c - 'A' + 10
                                                  : -1;
            if (d < 0 || cp > 0x10ffff)
                return fail_at(r, line, col, "bad character reference '&%s;'", name);
            cp = cp * (hex ? 16 : 10) + (uint32_t)d;
        }
        bool ok = cp == 0x9 || cp == 0xa || cp == 0xd || (cp >= 0x20 && cp <= 0xd7ff) ||
                  (cp >= 0xe000 && cp <= 0xfffd) || (cp >= 0x10000 && cp <= 0x10ffff);
        if (!ok)
            return fail_at(r, line, col,
                           "character reference '&%s;' is not a character XML allows", name);
        char t[4];
        size_t len;
        if (cp < 0x80) {
            t[0] = (char)cp;
            len = 1;
        } else if (cp < 0x800) {
            t[0] = (char)(0xc0 | cp >> 6);
            t[1] = (char)(0x80 | (cp & 0x3f));
            len = 2;
        } else if (cp < 0x10000) {
            t[0] = (char)(0xe0 | cp >> 12);
            t[1] = (char)(0x80 | (cp >> 6 & 0x3f));
            t[2] = (char)(0x80 | (cp & 0x3f));
            len = 3;
        } else {
            t[0] = (char)(0xf0 | cp >> 18);
            t[1] = (char)(0x80 | (cp >> 12 & 0x3f));
            t[2] = (char)(0x80 | (cp >> 6 & 0x3f));
            t[3] = (char)(0x80 | (cp & 0x3f));
            len = 4;
        }
        ads_buf_add(b, t, len);
        return 0;
    }
    return fail_at(r, line, col, "unknown entity '&%s;'", name);
}

/*
 * Character data up to (not taking) `stop` -- '<' for element text, '"'
 * for an attribute value -- decoded into b. Raw '<' in an attribute value,
 * stray '&', control characters and bytes that are not UTF-8 are errors.
 */
static int char_data(ads_xml_reader *r, ads_buf *b, int stop)
{
    int rc;
    ads_buf_clear(b);
    for (;;) {
        int c = peek(r);
        if (c < 0 || c == stop)
            break;
        if (b->len > ADS_MAX_TEXT) {
            r->in.too_big = true;
            return fail(r, "text too long");
        }
        if (c == '&') {
            if ((rc = entity(r, b)))
                return rc;
            continue;
        }
        if (c == '<')
            return fail(r, "'<' in an attribute value (write &lt;)");
        if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f)
            return fail(r, "control character 0x%02x is not allowed in XML text",
                        (unsigned)c);
        if (c < 0x80) {
            ads_buf_addc(b, (char)c);
            take(r);
            continue;
        }
        /* one UTF-8 sequence, byte by byte (it may cross chunks) */
        int line = r->in.line, col = column(r, offset(r));
        unsigned char seq[4];
        size_t want = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3
                      : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
        if (!want)
            return fail_at(r, line, col, "invalid UTF-8");
        seq[0] = (unsigned char)c;
        take(r);
        for (size_t k = 1; k < want; k++) {
            c = peek(r);
            if (c < 0x80 || c > 0xbf)
                return fail_at(r, line, col, "invalid UTF-8");
            seq[k] = (unsigned char)c;
            take(r);
        }
        if (xml_utf8_len(seq, want) != want)
            return fail_at(r, line, col, "invalid UTF-8 (or a character XML does not allow)");
        ads_buf_add(b, seq, want);
    }
    if (b->failed)
        return oom(r);
    return 0;
}

static bool tag_char(int c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_' || c == '-' || c == ':' || c == '.';
}

/* Note where a tag starts, '<' current, and take the '<'. */
static void tag_open(ads_xml_reader *r, tag *t)
{
    t->line = r->in.line;
    t->at = offset(r);
    t->column = column(r, t->at);
    take(r);
}

/* The rest of a tag after its '<'. */
static int tag_body(ads_xml_reader *r, tag *t)
{
    char what[16];
    size_t n = 0;
    int rc;
    t->attr[0] = '\0';
    ads_buf_clear(&r->attr);
    t->kind = TAG_START;
    if (peek(r) == '/') {
        take(r);
        t->kind = TAG_END;
    }
    while (tag_char(peek(r))) {
        if (n == TAG_MAX)
            return fail_at(r, t->line, t->column, "unknown element (name too long)");
        t->name[n++] = (char)peek(r);
        take(r);
    }
    t->name[n] = '\0';
    if (n == 0)
        return fail(r, "expected an element name after '<', found %s",
                    found(r, what, sizeof what));
    for (;;) {
        bool space = is_ws(peek(r));
        skip_ws(r);
        int c = peek(r);
        if (c == '>') {
            take(r);
            return 0;
        }
        if (c == '/' && t->kind == TAG_START) {
            take(r);
            if (peek(r) != '>')
                return fail(r, "expected '>' after '/' in a tag, found %s",
                            found(r, what, sizeof what));
            take(r);
            t->kind = TAG_EMPTY;
            return 0;
        }
        if (!tag_char(c) || !space || t->kind == TAG_END)
            return fail(r, "expected '>' to end the tag <%s%s>, found %s",
                        t->kind == TAG_END ? "/" : "", t->name, found(r, what, sizeof what));
        if (t->attr[0])
            return fail(r, "more than one attribute on <%s>", t->name);
        size_t k = 0;
        while (tag_char(peek(r))) {
            if (k == TAG_MAX)
                return fail(r, "attribute name too long");
            t->attr[k++] = (char)peek(r);
            take(r);
        }
        t->attr[k] = '\0';
        skip_ws(r);
        if (peek(r) != '=')
            return fail(r, "expected '=' after the attribute name %s, found %s", t->attr,
                        found(r, what, sizeof what));
        take(r);
        skip_ws(r);
        if (peek(r) != '"')
            return fail(r, "expected '\"' to start the value of %s, found %s", t->attr,
                        found(r, what, sizeof what));
        take(r);
        if ((rc = char_data(r, &r->attr, '"')))
            return rc;
        if (peek(r) != '"')
            return fail(r, "unterminated attribute value");
        take(r);
    }
}

/* A tag, '<' current (the caller checked). */
static int read_tag(ads_xml_reader *r, tag *t)
{
    tag_open(r, t);
    return tag_body(r, t);
}

/* The next tag, after white space; a byte other than '<' is an error. */
static int next_tag(ads_xml_reader *r, tag *t, const char *expected)
{
    char what[16];
    skip_ws(r);
    if (peek(r) != '<')
        return fail(r, "expected %s, found %s", expected, found(r, what, sizeof what));
    return read_tag(r, t);
}

static bool is(const tag *t, tag_kind kind, const char *name)
{
    return t->kind == kind && strcmp(t->name, name) == 0;
}

static int tag_error(ads_xml_reader *r, const tag *t, const char *expected)
{
    return fail_at(r, t->line, t->column, "expected %s, found <%s%s%s>", expected,
                   t->kind == TAG_END ? "/" : "", t->name, t->kind == TAG_EMPTY ? "/" : "");
}

static int no_attr(ads_xml_reader *r, const tag *t)
{
    if (t->attr[0])
        return fail_at(r, t->line, t->column, "unexpected attribute %s on <%s>", t->attr,
                       t->name);
    return 0;
}

/* The end tag </name>, after optional white space. */
static int end_tag(ads_xml_reader *r, const char *name)
{
    tag t;
    char want[TAG_MAX + 4];
    int rc;
    snprintf(want, sizeof want, "</%s>", name);
    if ((rc = next_tag(r, &t, want)))
        return rc;
    if (!is(&t, TAG_END, name))
        return tag_error(r, &t, want);
    return 0;
}

/*
 * Decode ClassAd C escapes in s into r->str (as the lexer does for string
 * literals: a third octal digit only after 0-3, any other \c is c, \0 and a
 * lone trailing backslash are errors).
 */
static int unescape(ads_xml_reader *r, const tag *t, const ads_buf *s, const char *what)
{
    ads_buf_clear(&r->str);
    const char *p = s->p ? s->p : "", *end = p + s->len;
    while (p < end) {
        char c = *p++;
        if (c != '\\') {
            ads_buf_addc(&r->str, c);
            continue;
        }
        if (p == end)
            return fail_at(r, t->line, t->column, "%s ends with a lone backslash", what);
        c = *p++;
        switch (c) {
        case 'a': ads_buf_addc(&r->str, '\a'); break;
        case 'b': ads_buf_addc(&r->str, '\b'); break;
        case 'f': ads_buf_addc(&r->str, '\f'); break;
        case 'n': ads_buf_addc(&r->str, '\n'); break;
        case 'r': ads_buf_addc(&r->str, '\r'); break;
        case 't': ads_buf_addc(&r->str, '\t'); break;
        case 'v': ads_buf_addc(&r->str, '\v'); break;
        default:
            if (c >= '0' && c <= '7') {
                int v = c - '0', max = c <= '3' ? 3 : 2;
                for (int d = 1; d < max && p < end && *p >= '0' && *p <= '7'; d++)
                    v = v * 8 + (*p++ - '0');
                if (v == 0)
                    return fail_at(r, t->line, t->column,
                                   "'\\0' (a NUL character) is not allowed in %s", what);
                ads_buf_addc(&r->str, (char)v);
            } else {
                ads_buf_addc(&r->str, c);
            }
        }
    }
    if (r->str.failed)
        return oom(r);
    return 0;
}

/* The text of a simple element (<s> <i> <r> <at> <rt> <e>) and its end
 * tag; the start tag t was just read. */
static int element_text(ads_xml_reader *r, const tag *t)
{
    int rc;
    if (t->kind == TAG_EMPTY) {
        ads_buf_clear(&r->text);
        return 0;
    }
    if ((rc = char_data(r, &r->text, '<')))
        return rc;
    tag end;
    char want[TAG_MAX + 4];
    snprintf(want, sizeof want, "</%s>", t->name);
    if (peek(r) != '<')
        return fail(r, "expected %s, found the end of the input", want);
    if ((rc = read_tag(r, &end)))
        return rc;
    if (!is(&end, TAG_END, t->name))
        return tag_error(r, &end, want);
    if (r->text.failed)
        return oom(r);
    return 0;
}

static int literal(ads_xml_reader *r, const ads_expr **out, ads_value v)
{
    if (ads_expr_literal(out, r->arena, &v, NULL))
        return oom(r);
    return 0;
}

static int parse_value(ads_xml_reader *r, const ads_expr **out, const tag *t, int depth);

static int enter(ads_xml_reader *r, const tag *t, int depth)
{
    if (depth > ADS_MAX_DEPTH)
        return ads_error_set_at(r->err, ADS_ELIMIT, t->line, t->column,
                                "XML nested deeper than %d levels", ADS_MAX_DEPTH);
    return 0;
}

/* A record, its <c> or <c/> tag t just read: the record, and whether every
 * attribute is a value. */
static int parse_record(ads_xml_reader *r, const ads_record **out, bool *all_literal,
                        const tag *t, int depth)
{
    ads_record_builder *b;
    bool all = true;
    int rc;
    if ((rc = enter(r, t, depth)) || (rc = no_attr(r, t)))
        return rc;
    if (ads_record_builder_new(&b, r->arena, NULL))
        return oom(r);
    if (t->kind == TAG_START) {
        for (;;) {
            tag a;
            if ((rc = next_tag(r, &a, "<a n=\"...\"> or </c>")))
                return rc;
            if (is(&a, TAG_END, "c"))
                break;
            if (!is(&a, TAG_START, "a"))
                return tag_error(r, &a, "<a n=\"...\"> or </c>");
            if (strcmp(a.attr, "n") != 0 || r->attr.len == 0)
                return fail_at(r, a.line, a.column,
                               "<a> needs a non-empty attribute name n=\"...\"");
            if ((rc = unescape(r, &a, &r->attr, "an attribute name")))
                return rc;
            char *name = ads_arena_strndup(r->arena, r->str.p, r->str.len);
            size_t len = r->str.len;
            if (!name)
                return oom(r);
            tag v;
            const ads_expr *e;
            if ((rc = next_tag(r, &v, "a value element")) ||
                (rc = parse_value(r, &e, &v, depth + 1)) || (rc = end_tag(r, "a")))
                return rc;
            if (e->kind != N_LITERAL)
                all = false;
            if (ads_record_builder_add(b, name, len, e, NULL))
                return oom(r);
        }
    }
    if (!(*out = ads_record_builder_finish(b)))
        return oom(r);
    *all_literal = all;
    return 0;
}

static int parse_list(ads_xml_reader *r, const ads_expr **out, const tag *t, int depth)
{
    const ads_expr **items = NULL;
    size_t n = 0, cap = 0;
    bool all = true;
    int rc;
    if ((rc = enter(r, t, depth)) || (rc = no_attr(r, t)))
        return rc;
    if (t->kind == TAG_START) {
        for (;;) {
            tag v;
            const ads_expr *e;
            if ((rc = next_tag(r, &v, "a value element or </l>")))
                return rc;
            if (is(&v, TAG_END, "l"))
                break;
            if ((rc = parse_value(r, &e, &v, depth + 1)))
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
            items[n++] = e;
            if (e->kind != N_LITERAL)
                all = false;
        }
    }
    if (all) {
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

static int parse_integer(ads_xml_reader *r, const tag *t, ads_value *out)
{
    const char *s = r->text.p ? r->text.p : "";
    size_t n = r->text.len, i = 0;
    bool neg = false;
    uint64_t v = 0;
    if (n > 0 && s[0] == '-') {
        neg = true;
        i = 1;
    }
    if (i == n)
        return fail_at(r, t->line, t->column, "bad integer '%.32s' in <i>", s);
    for (; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return fail_at(r, t->line, t->column, "bad integer '%.32s' in <i>", s);
        unsigned d = (unsigned)(s[i] - '0');
        if (v > ((uint64_t)INT64_MAX + neg - d) / 10)
            return fail_at(r, t->line, t->column, "integer '%.32s' in <i> does not fit 64 bits",
                           s);
        v = v * 10 + d;
    }
    *out = ads_int(neg ? (int64_t)(0 - v) : (int64_t)v);
    return 0;
}

static int parse_real(ads_xml_reader *r, const tag *t, ads_value *out)
{
    const char *s = r->text.p ? r->text.p : "";
    size_t n = r->text.len;
    if (strcmp(s, "NaN") == 0) {
        *out = ads_real(NAN);
        return 0;
    }
    if (strcmp(s, "INF") == 0 || strcmp(s, "-INF") == 0) {
        *out = ads_real(s[0] == '-' ? -INFINITY : INFINITY);
        return 0;
    }
    /* what strtod takes, minus its hex, inf and nan spellings */
    bool ok = n > 0, digit = false;
    for (size_t i = 0; i < n; i++) {
        if (s[i] >= '0' && s[i] <= '9')
            digit = true;
        else if (s[i] == '\0' || !strchr("+-.eE", s[i]))
            ok = false;
    }
    char *end = NULL;
    double d = ok && digit ? ads_strtod_c(s, &end) : 0;
    if (!ok || !digit || end != s + n || isinf(d))
        return fail_at(r, t->line, t->column, "bad real '%.32s' in <r>", s);
    *out = ads_real(d);
    return 0;
}

/* A value element, its tag t just read. */
static int parse_value(ads_xml_reader *r, const ads_expr **out, const tag *t, int depth)
{
    int rc;
    ads_value v;
    const char *name = t->name;
    const char *expected = "a value element (<s> <i> <r> <b/> <un/> <er/> <at> <rt> <l> <c> <e>)";
    if (t->kind == TAG_END)
        return tag_error(r, t, expected);
    if (strcmp(name, "c") == 0) {
        const ads_record *rec;
        bool all;
        if ((rc = parse_record(r, &rec, &all, t, depth)))
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
    if (strcmp(name, "l") == 0)
        return parse_list(r, out, t, depth);
    if (strcmp(name, "b") == 0) {
        const char *s = r->attr.p ? r->attr.p : "";
        if (strcmp(t->attr, "v") != 0 || (strcmp(s, "t") && strcmp(s, "f")))
            return fail_at(r, t->line, t->column, "<b> needs v=\"t\" or v=\"f\"");
        if (t->kind == TAG_START && (rc = end_tag(r, "b")))
            return rc;
        return literal(r, out, ads_bool(s[0] == 't'));
    }
    if (strcmp(name, "un") == 0 || strcmp(name, "er") == 0) {
        if ((rc = no_attr(r, t)))
            return rc;
        if (t->kind == TAG_START && (rc = end_tag(r, name)))
            return rc;
        return literal(r, out, name[0] == 'u' ? ads_undefined() : ads_errorv());
    }
    bool text_element = strcmp(name, "s") == 0 || strcmp(name, "i") == 0 ||
                        strcmp(name, "r") == 0 || strcmp(name, "at") == 0 ||
                        strcmp(name, "rt") == 0 || strcmp(name, "e") == 0;
    if (!text_element)
        return tag_error(r, t, expected);
    if ((rc = no_attr(r, t)) || (rc = element_text(r, t)))
        return rc;
    const char *s = r->text.p ? r->text.p : "";
    size_t n = r->text.len;
    switch (name[0]) {
    case 's':
        if ((rc = unescape(r, t, &r->text, "a string")))
            return rc;
        if (ads_string_copy(&v, r->arena, r->str.p ? r->str.p : "", r->str.len))
            return oom(r);
        return literal(r, out, v);
    case 'i':
        if ((rc = parse_integer(r, t, &v)))
            return rc;
        return literal(r, out, v);
    case 'r':
        if (name[1] == 't') {
            double secs;
            if (ads_time__parse_rel(s, n, &secs))
                return fail_at(r, t->line, t->column, "bad RelTime '%.32s' in <rt>", s);
            return literal(r, out, ads_reltime(secs));
        }
        if ((rc = parse_real(r, t, &v)))
            return rc;
        return literal(r, out, v);
    case 'a': {
        double secs;
        int32_t off;
        if (ads_time__parse_abs(s, n, &secs, &off))
            return fail_at(r, t->line, t->column, "bad AbsTime '%.32s' in <at>", s);
        return literal(r, out, ads_abstime(secs, off));
    }
    default: { /* e */
        char *text = ads_arena_strndup(r->arena, s, n);
        const ads_expr *e;
        ads_error perr;
        if (!text)
            return oom(r);
        if ((rc = ads_expr_parse(&e, r->arena, text, n, &perr))) {
            if (rc == ADS_ENOMEM)
                return oom(r);
            ads_error_set_at(r->err, rc, t->line, t->column,
                             "in <e>: %s (line %d, column %d of the expression)", perr.message,
                             perr.line, perr.column);
            return rc;
        }
        if (ads_expr_fold(out, r->arena, e, NULL))
            return oom(r);
        return 0;
    }
    }
}

static int new_reader(ads_xml_reader **out, ads_error *err)
{
    if (!out)
        return ads_error_set(err, ADS_EINVAL, "XML reader: NULL argument");
    ads_xml_reader *r = calloc(1, sizeof *r);
    if (!r)
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    ads_buf_init(&r->text);
    ads_buf_init(&r->attr);
    ads_buf_init(&r->str);
    *out = r;
    return 0;
}

int ads_xml_reader_new(ads_xml_reader **out, const char *text, size_t len, ads_error *err)
{
    int rc;
    if (!text && len)
        return ads_error_set(err, ADS_EINVAL, "XML reader: NULL text");
    if ((rc = new_reader(out, err)))
        return rc;
    ads_xml_reader *r = *out;
    ads_text_in_buffer(&r->in, text, len);
    return 0;
}

int ads_xml_reader_new_file(ads_xml_reader **out, FILE *f, ads_error *err)
{
    int rc;
    if (!f)
        return ads_error_set(err, ADS_EINVAL, "XML reader: NULL file");
    if ((rc = new_reader(out, err)))
        return rc;
    ads_xml_reader *r = *out;
    if (ads_text_in_file(&r->in, f)) {
        ads_xml_reader_free(r);
        *out = NULL;
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    }
    return 0;
}

void ads_xml_reader_free(ads_xml_reader *r)
{
    if (!r)
        return;
    ads_buf_free(&r->text);
    ads_buf_free(&r->attr);
    ads_buf_free(&r->str);
    ads_text_in_free(&r->in);
    free(r);
}

/* The rest of <?...?> or <!...> (the prolog's declarations), '<' taken
 * and '?' or '!' current. */
static int skip_declaration(ads_xml_reader *r, const tag *t)
{
    bool pi = peek(r) == '?';
    int prev = 0;
    for (;;) {
        int c = peek(r);
        if (c < 0)
            return fail_at(r, t->line, t->column, "unterminated %s",
                           pi ? "<?...?>" : "<!...>");
        take(r);
        if (c == '>' && (!pi || prev == '?'))
            return 0;
        prev = c;
    }
}

/* A top-level record, its <c> tag t just read. */
static int top_record(ads_xml_reader *r, const ads_record **out, int *line, const tag *t)
{
    bool all;
    int rc = parse_record(r, out, &all, t, 1);
    if (rc == 0 && line)
        *line = t->line;
    return rc ? -1 : 1;
}

static int next(ads_xml_reader *r, const ads_record **out, int *line)
{
    char what[16];
    tag t;
    int rc;
    for (;;) {
        r->in.record_start = offset(r);
        switch (r->state) {
        case TOP_START:
            if (peek(r) == 0xEF && r->in.end - r->in.p >= 3 && memcmp(r->in.p, "\xEF\xBB\xBF", 3) == 0)
                r->in.p += 3; /* a byte-order mark */
            for (;;) {
                skip_ws(r);
                if (peek(r) < 0) {
                    r->state = TOP_DONE;
                    break;
                }
                if (peek(r) != '<')
                    return fail(r, "expected <classads> or <c>, found %s",
                                found(r, what, sizeof what));
                tag_open(r, &t);
                if (peek(r) != '?' && peek(r) != '!')
                    break;
                if ((rc = skip_declaration(r, &t)))
                    return rc;
            }
            if (r->state == TOP_DONE)
                continue;
            if ((rc = tag_body(r, &t)))
                return rc;
            if (is(&t, TAG_START, "classads") && !t.attr[0]) {
                r->state = TOP_WRAPPED;
                continue;
            }
            if (is(&t, TAG_EMPTY, "classads") && !t.attr[0]) {
                r->state = TOP_AFTER;
                continue;
            }
            if (strcmp(t.name, "c") == 0 && t.kind != TAG_END) {
                r->state = TOP_BARE;
                return top_record(r, out, line, &t);
            }
            return tag_error(r, &t, "<classads> or <c>");
        case TOP_WRAPPED:
            if ((rc = next_tag(r, &t, "<c> or </classads>")))
                return rc;
            if (is(&t, TAG_END, "classads")) {
                r->state = TOP_AFTER;
                continue;
            }
            if (strcmp(t.name, "c") == 0 && t.kind != TAG_END)
                return top_record(r, out, line, &t);
            return tag_error(r, &t, "<c> or </classads>");
        case TOP_BARE:
            skip_ws(r);
            if (peek(r) < 0) {
                r->state = TOP_DONE;
                continue;
            }
            if ((rc = next_tag(r, &t, "<c>")))
                return rc;
            if (strcmp(t.name, "c") == 0 && t.kind != TAG_END)
                return top_record(r, out, line, &t);
            return tag_error(r, &t, "<c>");
        case TOP_AFTER:
            skip_ws(r);
            if (peek(r) >= 0)
                return fail(r, "expected the end of the input after </classads>, found %s",
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

int ads_xml_reader_next(const ads_record **out, int *line, ads_xml_reader *r, ads_arena *a,
                        ads_error *err)
{
    if (!r || !out || !a)
        return ads_error_set(err, ADS_EINVAL, "XML reader: NULL argument");
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
