/*
 * classad/unparse.c: values and expressions back to text (shared/spec/
 * classad.md section 7), in two spellings: adstore's own (what adstore
 * prints; reals in their shortest exact form) and HTCondor's (what the
 * string() and unparse() functions return, for compatibility). Whatever is
 * written parses back to the same value or tree; parentheses are added where
 * precedence needs them, even in trees that were not parsed.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "classad/classad_int.h"
#include "base/num.h"

typedef struct style {
    bool condor;
} style;

static const style ADSTORE = {false};
static const style CONDOR = {true};

static void value_text(ads_buf *b, const ads_value *v, const style *st);
static void expr_text(ads_buf *b, const ads_expr *e, const style *st);

/* ---- pieces ---- */

void ads_unparse__string(ads_buf *b, const char *p, size_t len)
{
    ads_buf_addc(b, '"');
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)p[i];
        switch (c) {
        case '"': ads_buf_adds(b, "\\\""); break;
        case '\\': ads_buf_adds(b, "\\\\"); break;
        case '\n': ads_buf_adds(b, "\\n"); break;
        case '\t': ads_buf_adds(b, "\\t"); break;
        case '\r': ads_buf_adds(b, "\\r"); break;
        case '\a': ads_buf_adds(b, "\\a"); break;
        case '\b': ads_buf_adds(b, "\\b"); break;
        case '\f': ads_buf_adds(b, "\\f"); break;
        case '\v': ads_buf_adds(b, "\\v"); break;
        default:
            if (c < 0x20 || c == 0x7f)
                ads_buf_printf(b, "\\%03o", c);
            else
                ads_buf_addc(b, (char)c);
        }
    }
    ads_buf_addc(b, '"');
}

static bool is_keyword(const char *p, size_t len)
{
    static const char *const words[] = {"true", "false", "undefined", "error",
                                        "is",   "isnt",  "in"};
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (ads_name__eq(p, len, words[i], strlen(words[i])))
            return true;
    return false;
}

static bool plain_name(const char *p, size_t len)
{
    if (len == 0 || is_keyword(p, len))
        return false;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)p[i];
        bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
        if (!alpha && !(i > 0 && c >= '0' && c <= '9'))
            return false;
    }
    return true;
}

void ads_unparse__name(ads_buf *b, const char *p, size_t len)
{
    if (plain_name(p, len)) {
        ads_buf_add(b, p, len);
        return;
    }
    ads_buf_addc(b, '\'');
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)p[i];
        if (c == '\'' || c == '\\') {
            ads_buf_addc(b, '\\');
            ads_buf_addc(b, (char)c);
        } else if (c < 0x20 || c == 0x7f) {
            ads_buf_printf(b, "\\%03o", c);
        } else {
            ads_buf_addc(b, (char)c);
        }
    }
    ads_buf_addc(b, '\'');
}

static void real_text(ads_buf *b, double r, const style *st)
{
    if (isnan(r)) {
        ads_buf_adds(b, "real(\"NaN\")");
        return;
    }
    if (isinf(r)) {
        ads_buf_adds(b, r > 0 ? "real(\"INF\")" : "real(\"-INF\")");
        return;
    }
    char tmp[40];
    if (st->condor) {
        if (r == 0) { /* HTCondor's %.1f: "0.0", and "-0.0" for -0.0 */
            ads_buf_adds(b, signbit(r) ? "-0.0" : "0.0");
            return;
        }
        ads_snprintf_c(tmp, sizeof tmp, "%1.15E", r);
        ads_buf_adds(b, tmp);
        return;
    }
    /* the shortest %g that reads back exactly, with a '.' or an exponent */
    for (int prec = 15; prec <= 17; prec++) {
        ads_snprintf_c(tmp, sizeof tmp, "%.*g", prec, r);
        if (ads_strtod_c(tmp, NULL) == r)
            break;
    }
    ads_buf_adds(b, tmp);
    if (!strpbrk(tmp, ".eEn"))
        ads_buf_adds(b, ".0");
}

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static void base64_text(ads_buf *b, ads_str s)
{
    const unsigned char *p = (const unsigned char *)s.p;
    size_t i = 0;
    for (; i + 3 <= s.len; i += 3) {
        unsigned v = (unsigned)p[i] << 16 | (unsigned)p[i + 1] << 8 | p[i + 2];
        char q[4] = {b64[v >> 18], b64[(v >> 12) & 63], b64[(v >> 6) & 63], b64[v & 63]};
        ads_buf_add(b, q, 4);
    }
    if (s.len - i == 1) {
        unsigned v = (unsigned)p[i] << 16;
        char q[4] = {b64[v >> 18], b64[(v >> 12) & 63], '=', '='};
        ads_buf_add(b, q, 4);
    } else if (s.len - i == 2) {
        unsigned v = (unsigned)p[i] << 16 | (unsigned)p[i + 1] << 8;
        char q[4] = {b64[v >> 18], b64[(v >> 12) & 63], b64[(v >> 6) & 63], '='};
        ads_buf_add(b, q, 4);
    }
}

static void record_text(ads_buf *b, const ads_record *r, const style *st)
{
    if (r->n == 0) {
        ads_buf_adds(b, "[ ]");
        return;
    }
    ads_buf_adds(b, "[ ");
    for (size_t i = 0; i < r->n; i++) {
        if (i)
            ads_buf_adds(b, "; ");
        ads_unparse__name(b, r->names[i].p, r->names[i].len);
        ads_buf_adds(b, " = ");
        expr_text(b, r->exprs[i], st);
    }
    ads_buf_adds(b, " ]");
}

static void value_text(ads_buf *b, const ads_value *v, const style *st)
{
    char tmp[ADS_ID_TEXT_MAX + 1];
    switch (v->type) {
    case ADS_UNDEFINED:
        ads_buf_adds(b, "undefined");
        return;
    case ADS_ERROR:
        ads_buf_adds(b, "error");
        return;
    case ADS_BOOLEAN:
        ads_buf_adds(b, v->u.b ? "true" : "false");
        return;
    case ADS_INTEGER:
        ads_buf_printf(b, "%lld", (long long)v->u.i);
        return;
    case ADS_REAL:
        real_text(b, v->u.r, st);
        return;
    case ADS_STRING:
        ads_unparse__string(b, v->u.s.p, v->u.s.len);
        return;
    case ADS_LIST:
        if (st->condor && v->u.list.src) {
            /* HTCondor keeps lists unevaluated: show the source */
            expr_text(b, v->u.list.src, st);
            return;
        }
        if (v->u.list.n == 0) {
            ads_buf_adds(b, st->condor ? "{  }" : "{ }");
            return;
        }
        ads_buf_adds(b, "{ ");
        for (size_t i = 0; i < v->u.list.n; i++) {
            if (i)
                ads_buf_adds(b, st->condor ? "," : ", ");
            value_text(b, &v->u.list.items[i], st);
        }
        ads_buf_adds(b, " }");
        return;
    case ADS_RECORD:
        record_text(b, v->u.rec, st);
        return;
    case ADS_ABSTIME:
        if (st->condor) {
            ads_buf_adds(b, "absTime(\"");
            ads_time__format_abs_condor(b, v->u.abs.secs, v->u.abs.offset);
            ads_buf_adds(b, "\")");
        } else {
            ads_buf_addc(b, '`');
            ads_time__format_abs(b, v->u.abs.secs, v->u.abs.offset);
            ads_buf_addc(b, '`');
        }
        return;
    case ADS_RELTIME:
        if (st->condor) {
            ads_buf_adds(b, "relTime(\"");
            ads_time__format_rel_condor(b, v->u.rel);
            ads_buf_adds(b, "\")");
        } else {
            ads_buf_addc(b, '`');
            ads_time__format_rel(b, v->u.rel);
            ads_buf_addc(b, '`');
        }
        return;
    case ADS_IDENT:
        ads_buf_add(b, tmp, ads_id_format(tmp, v->u.id));
        return;
    case ADS_BLOB:
        ads_buf_adds(b, "blob(\"");
        base64_text(b, v->u.blob->bytes);
        ads_buf_addc(b, '"');
        if (v->u.blob->meta) {
            ads_buf_adds(b, ", ");
            record_text(b, v->u.blob->meta, st);
        }
        ads_buf_addc(b, ')');
        return;
    }
}

/* ---- expressions ---- */

static const char *const op_text[OP_COUNT] = {
    [OP_NEG] = "-",     [OP_PLUS] = "+",    [OP_BITNOT] = "~", [OP_NOT] = "!",
    [OP_MUL] = "*",     [OP_DIV] = "/",     [OP_MOD] = "%",    [OP_ADD] = "+",
    [OP_SUB] = "-",     [OP_SHL] = "<<",    [OP_SHR] = ">>",   [OP_USHR] = ">>>",
    [OP_LT] = "<",      [OP_LE] = "<=",     [OP_GT] = ">",     [OP_GE] = ">=",
    [OP_EQ] = "==",     [OP_NE] = "!=",     [OP_IS] = "is",    [OP_ISNT] = "isnt",
    [OP_EQUIV] = "===", [OP_IN] = "in",     [OP_BITAND] = "&", [OP_BITXOR] = "^",
    [OP_BITOR] = "|",   [OP_AND] = "&&",    [OP_OR] = "||",
};

const char *ads_unparse__op_text(int op)
{
    return op > OP_NONE && op < OP_COUNT && op_text[op] ? op_text[op] : "";
}

/* Binding strength: higher binds tighter (matches the parser's levels). */
enum { P_COND = 1, P_OR, P_AND, P_BITOR, P_BITXOR, P_BITAND, P_EQ, P_REL, P_SHIFT, P_ADD,
       P_MUL, P_UNARY, P_POSTFIX };

static int op_prec(op_kind op)
{
    switch (op) {
    case OP_OR: return P_OR;
    case OP_AND: return P_AND;
    case OP_BITOR: return P_BITOR;
    case OP_BITXOR: return P_BITXOR;
    case OP_BITAND: return P_BITAND;
    case OP_EQ: case OP_NE: case OP_IS: case OP_ISNT: case OP_EQUIV: case OP_IN: return P_EQ;
    case OP_LT: case OP_LE: case OP_GT: case OP_GE: return P_REL;
    case OP_SHL: case OP_SHR: case OP_USHR: return P_SHIFT;
    case OP_ADD: case OP_SUB: return P_ADD;
    default: return P_MUL;
    }
}

static int prec_of(const ads_expr *e)
{
    switch ((node_kind)e->kind) {
    case N_BINARY:
    case N_AND:
    case N_OR:
        return op_prec((op_kind)e->op);
    case N_COND:
    case N_ELVIS:
        return P_COND;
    case N_UNARY:
        return P_UNARY;
    case N_LITERAL:
        /* a negative number reads as unary minus where it matters */
        if ((e->u.lit.type == ADS_INTEGER && e->u.lit.u.i < 0) ||
            (e->u.lit.type == ADS_REAL && signbit(e->u.lit.u.r) && !isnan(e->u.lit.u.r)))
            return P_UNARY;
        return P_POSTFIX;
    default:
        return P_POSTFIX;
    }
}

/* Write e, in parentheses if it binds looser than min. */
static void child(ads_buf *b, const ads_expr *e, int min, const style *st)
{
    if (prec_of(e) < min) {
        ads_buf_addc(b, '(');
        expr_text(b, e, st);
        ads_buf_addc(b, ')');
    } else {
        expr_text(b, e, st);
    }
}

/* A chain of binary operators (classad_int.h) without recursing down it:
 * the spine goes down the left operands as long as they need no
 * parentheses (left-associative: the same level is fine), then the text is
 * written from the leftmost operand up, each right operand binding tighter. */
static void chain_text(ads_buf *b, const ads_expr *e, const style *st)
{
    ads_spine s;
    ads_spine__init(&s);
    const ads_expr *x = e;
    for (;;) {
        if (ads_spine__push(&s, x)) {
            b->failed = true;
            ads_spine__free(&s);
            return;
        }
        const ads_expr *a = x->u.ops.a;
        if (!ads_expr__is_binop(a) || prec_of(a) < op_prec((op_kind)x->op))
            break;
        x = a;
    }
    child(b, x->u.ops.a, op_prec((op_kind)x->op), st);
    for (size_t i = s.n; i-- > 0;) {
        const ads_expr *op = s.nodes[i];
        ads_buf_addc(b, ' ');
        ads_buf_adds(b, op_text[op->op]);
        ads_buf_addc(b, ' ');
        child(b, op->u.ops.b, op_prec((op_kind)op->op) + 1, st);
    }
    ads_spine__free(&s);
}

static void expr_text(ads_buf *b, const ads_expr *e, const style *st)
{
    switch ((node_kind)e->kind) {
    case N_LITERAL:
        value_text(b, &e->u.lit, st);
        return;
    case N_PAREN:
        ads_buf_addc(b, '(');
        expr_text(b, e->u.ops.a, st);
        ads_buf_addc(b, ')');
        return;
    case N_ATTR:
        if (e->scope == SCOPE_ROOT)
            ads_buf_addc(b, '.');
        ads_unparse__name(b, e->u.attr.name.p, e->u.attr.name.len);
        return;
    case N_SELECT:
        if (e->u.sel.base->kind == N_LITERAL && (e->u.sel.base->u.lit.type == ADS_INTEGER ||
                                                 e->u.sel.base->u.lit.type == ADS_REAL ||
                                                 e->u.sel.base->u.lit.type == ADS_IDENT)) {
            /* "3.y" would read as a number, and "#42.a" as one identifier
             * (whose text may hold '.' and hex digits): write "(3).y" */
            ads_buf_addc(b, '(');
            expr_text(b, e->u.sel.base, st);
            ads_buf_addc(b, ')');
        } else {
            child(b, e->u.sel.base, P_POSTFIX, st);
        }
        ads_buf_addc(b, '.');
        ads_unparse__name(b, e->u.sel.name.p, e->u.sel.name.len);
        return;
    case N_INDEX:
        child(b, e->u.ops.a, P_POSTFIX, st);
        ads_buf_addc(b, '[');
        expr_text(b, e->u.ops.b, st);
        ads_buf_addc(b, ']');
        return;
    case N_UNARY: {
        ads_buf_adds(b, op_text[e->op]);
        const ads_expr *a = e->u.ops.a;
        size_t at = b->len;
        /* "- -3" must not become "--3"... which reads back the same: a
         * unary minus and the literal -3; keep it tight like HTCondor */
        child(b, a, P_UNARY, st);
        /* A minus right before a digit joins the number when read back.
         * For a plain number other than the integer 0 that gives the same
         * text ("- 3" writes "-3", the literal -3); but "-0" reads as the
         * literal 0 (the minus is lost: "--0" would write "-0", then "0"),
         * and "-1[0]" as (-1)[0]. Those keep a space: "- 0", "- 1[0]". */
        if (e->op == OP_NEG && !b->failed && b->len > at && b->p[at] >= '0' &&
            b->p[at] <= '9' &&
            (a->kind != N_LITERAL || (a->u.lit.type == ADS_INTEGER && a->u.lit.u.i == 0))) {
            ads_buf_addc(b, ' ');
            if (!b->failed) {
                memmove(b->p + at + 1, b->p + at, b->len - at - 1);
                b->p[at] = ' ';
            }
        }
        return;
    }
    case N_BINARY:
    case N_AND:
    case N_OR:
        chain_text(b, e, st);
        return;
    case N_COND:
        child(b, e->u.ops.a, P_COND + 1, st);
        ads_buf_adds(b, " ? ");
        child(b, e->u.ops.b, P_COND, st);
        ads_buf_adds(b, " : ");
        child(b, e->u.ops.c, P_COND, st);
        return;
    case N_ELVIS:
        child(b, e->u.ops.a, P_COND + 1, st);
        ads_buf_adds(b, " ?: ");
        child(b, e->u.ops.b, P_COND, st);
        return;
    case N_PARAM:
        ads_buf_addc(b, e->u.param.name.len ? ':' : '?');
        ads_buf_add(b, e->u.param.name.p, e->u.param.name.len);
        return;
    case N_CALL:
        ads_buf_add(b, e->u.call.name.p, e->u.call.name.len);
        ads_buf_addc(b, '(');
        for (size_t i = 0; i < e->u.call.n; i++) {
            if (i)
                ads_buf_adds(b, st->condor ? "," : ", ");
            expr_text(b, e->u.call.args[i], st);
        }
        ads_buf_addc(b, ')');
        return;
    case N_LIST:
        if (e->u.list.n == 0) {
            ads_buf_adds(b, st->condor ? "{  }" : "{ }");
            return;
        }
        ads_buf_adds(b, "{ ");
        for (size_t i = 0; i < e->u.list.n; i++) {
            if (i)
                ads_buf_adds(b, st->condor ? "," : ", ");
            expr_text(b, e->u.list.items[i], st);
        }
        ads_buf_adds(b, " }");
        return;
    case N_RECORD:
        record_text(b, e->u.rec, st);
        return;
    }
}

void ads_value_unparse(ads_buf *b, const ads_value *v)
{
    value_text(b, v, &ADSTORE);
}

void ads_expr_unparse(ads_buf *b, const ads_expr *e)
{
    expr_text(b, e, &ADSTORE);
}

void ads_record_unparse(ads_buf *b, const ads_record *r)
{
    record_text(b, r, &ADSTORE);
}

void ads_value_unparse_condor(ads_buf *b, const ads_value *v)
{
    value_text(b, v, &CONDOR);
}

void ads_expr_unparse_condor(ads_buf *b, const ads_expr *e)
{
    expr_text(b, e, &CONDOR);
}
