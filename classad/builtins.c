/*
 * classad/builtins.c: the built-in function registry and the core functions:
 * type tests, conversions (int real string bool id absTime relTime) and the
 * ones that need the evaluator itself (ifThenElse eval unparse size debug).
 * The string, list, math and regexp functions are in builtins_string.c; the
 * time functions in builtins_time.c; unresolved(), which walks an attribute's
 * references and matches them against a pattern, sits with the regular
 * expressions in builtins_string.c. Names are resolved once, at parse time.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "classad/classad_int.h"
#include "base/num.h"

typedef struct table {
    const ads_builtin *fns;
    const size_t *count;
} table;

static const table tables[] = {
    {ads_builtins__core, &ads_builtins__core_count},
    {ads_builtins__string, &ads_builtins__string_count},
    {ads_builtins__time, &ads_builtins__time_count},
};

const ads_builtin *ads_builtin__find(const char *name, size_t len)
{
    for (size_t t = 0; t < sizeof tables / sizeof tables[0]; t++)
        for (size_t i = 0; i < *tables[t].count; i++)
            if (ads_name__eq(tables[t].fns[i].name, strlen(tables[t].fns[i].name), name, len))
                return &tables[t].fns[i];
    return NULL;
}

/* Evaluate argument i. */
static ads_value arg(ads_eval_ctx *cx, const ads_view *view, const ads_expr *const *args,
                     size_t i)
{
    ads_value v;
    ads_eval__expr(&v, cx, args[i], view);
    return v;
}

/* ---- type tests ---- */

#define TYPE_TEST(fname, cond)                                                              \
    static void fname(ads_value *out, ads_eval_ctx *cx, const ads_view *view,               \
                      const ads_expr *const *args, size_t n)                                \
    {                                                                                       \
        (void)n;                                                                            \
        ads_value v = arg(cx, view, args, 0);                                               \
        *out = ads_bool(cond);                                                              \
    }

TYPE_TEST(fn_is_undefined, v.type == ADS_UNDEFINED)
TYPE_TEST(fn_is_error, v.type == ADS_ERROR)
TYPE_TEST(fn_is_string, v.type == ADS_STRING)
TYPE_TEST(fn_is_integer, v.type == ADS_INTEGER)
TYPE_TEST(fn_is_real, v.type == ADS_REAL)
TYPE_TEST(fn_is_boolean, v.type == ADS_BOOLEAN)
TYPE_TEST(fn_is_list, v.type == ADS_LIST)
TYPE_TEST(fn_is_record, v.type == ADS_RECORD)
TYPE_TEST(fn_is_abstime, v.type == ADS_ABSTIME)
TYPE_TEST(fn_is_reltime, v.type == ADS_RELTIME)
TYPE_TEST(fn_is_ident, v.type == ADS_IDENT)
TYPE_TEST(fn_is_blob, v.type == ADS_BLOB)

/* ---- conversions ---- */

/* strtod on a string value's prefix (after leading space): 0 if no number. */
static int string_number(const ads_value *v, double *r, char **text_out, ads_eval_ctx *cx)
{
    char *s = ads_eval__alloc(cx, v->u.s.len + 1);
    if (!s)
        return 0;
    memcpy(s, v->u.s.p, v->u.s.len);
    s[v->u.s.len] = '\0';
    char *end;
    *r = ads_strtod_c(s, &end);
    if (text_out)
        *text_out = s;
    return end != s;
}

static void fn_int(ads_value *out, ads_eval_ctx *cx, const ads_view *view,
                   const ads_expr *const *args, size_t n)
{
    (void)n;
    ads_value v = arg(cx, view, args, 0);
    double r;
    switch (v.type) {
    case ADS_INTEGER:
    case ADS_UNDEFINED:
    case ADS_ERROR:
        *out = v;
        return;
    case ADS_BOOLEAN:
        *out = ads_int(v.u.b);
        return;
    case ADS_REAL:
        r = v.u.r;
        break;
    case ADS_ABSTIME:
        r = v.u.abs.secs;
        break;
    case ADS_RELTIME:
        r = v.u.rel;
        break;
    case ADS_STRING:
        if (!string_number(&v, &r, NULL, cx)) {
            *out = ads_errorv();
            return;
        }
        break;
    default:
        *out = ads_errorv();
        return;
    }
    if (isnan(r) || r >= 9223372036854775808.0 || r < -9223372036854775808.0) {
        *out = ads_errorv();
        return;
    }
    *out = ads_int((int64_t)r);
}

static void fn_real(ads_value *out, ads_eval_ctx *cx, const ads_view *view,
                    const ads_expr *const *args, size_t n)
{
    (void)n;
    ads_value v = arg(cx, view, args, 0);
    double r;
    switch (v.type) {
    case ADS_REAL:
    case ADS_UNDEFINED:
    case ADS_ERROR:
        *out = v;
        return;
    case ADS_INTEGER:
        *out = ads_real((double)v.u.i);
        return;
    case ADS_BOOLEAN:
        *out = ads_real(v.u.b ? 1.0 : 0.0);
        return;
    case ADS_ABSTIME:
        *out = ads_real(v.u.abs.secs);
        return;
    case ADS_RELTIME:
        *out = ads_real(v.u.rel);
        return;
    case ADS_STRING:
        *out = string_number(&v, &r, NULL, cx) ? ads_real(r) : ads_errorv();
        return;
    default:
        *out = ads_errorv();
    }
}

static void fn_string(ads_value *out, ads_eval_ctx *cx, const ads_view *view,
                      const ads_expr *const *args, size_t n)
{
    (void)n;
    ads_value v = arg(cx, view, args, 0);
    ads_buf b = ADS_BUF_INIT;
    char tmp[ADS_ID_TEXT_MAX + 1];
    switch (v.type) {
    case ADS_STRING:
    case ADS_UNDEFINED:
    case ADS_ERROR:
        *out = v;
        return;
    case ADS_IDENT: {
        size_t len = ads_id_format(tmp, v.u.id);
        if (ads_string_copy(out, cx->arena, tmp + 1, len - 1)) {
            cx->oom = true;
            *out = ads_errorv();
        }
        return;
    }
    case ADS_ABSTIME:
        ads_time__format_abs_condor(&b, v.u.abs.secs, v.u.abs.offset);
        break;
    case ADS_RELTIME:
        ads_time__format_rel_condor(&b, v.u.rel);
        break;
    default:
        ads_value_unparse_condor(&b, &v);
    }
    if (b.failed || ads_string_copy(out, cx->arena, ads_buf_cstr(&b), b.len)) {
        cx->oom = true;
        *out = ads_errorv();
    }
    ads_buf_free(&b);
}

static void fn_bool(ads_value *out, ads_eval_ctx *cx, const ads_view *view,
                    const ads_expr *const *args, size_t n)
{
    (void)n;
    ads_value v = arg(cx, view, args, 0);
    int64_t i;
    double r;
    switch (v.type) {
    case ADS_BOOLEAN:
    case ADS_UNDEFINED:
    case ADS_ERROR:
        *out = v;
        return;
    case ADS_INTEGER:
    case ADS_REAL:
        ads_value__number(&v, &i, &r);
        *out = ads_bool(v.type == ADS_INTEGER ? i != 0 : r != 0);
        return;
    case ADS_STRING:
        if (ads_name__eq(v.u.s.p, v.u.s.len, "true", 4))
            *out = ads_bool(true);
        else if (ads_name__eq(v.u.s.p, v.u.s.len, "false", 5))
            *out = ads_bool(false);
        else
            *out = ads_errorv();
        return;
    default:
        *out = ads_errorv();
    }
}

static void fn_id(ads_value *out, ads_eval_ctx *cx, const ads_view *view,
                  const ads_expr *const *args, size_t n)
{
    (void)n;
    ads_value v = arg(cx, view, args, 0);
    ads_id id;
    if (v.type == ADS_IDENT || v.type == ADS_UNDEFINED || v.type == ADS_ERROR)
        *out = v;
    else if (v.type == ADS_STRING &&
             ads_id_parse(&id, v.u.s.p, v.u.s.len, ADS_ID_PARSE_HASH_OPTIONAL, NULL) == 0)
        *out = ads_ident(id);
    else
        *out = ads_errorv();
}

static double now_secs(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec;
}

static void fn_abstime(ads_value *out, ads_eval_ctx *cx, const ads_view *view,
                       const ads_expr *const *args, size_t n)
{
    if (n == 0) {
        double t = now_secs();
        *out = ads_abstime(t, ads_time__local_offset(t));
        return;
    }
    ads_value v = arg(cx, view, args, 0);
    double secs;
    int32_t off;
    bool have_off = false;
    if (n == 2) {
        ads_value o = arg(cx, view, args, 1);
        if (o.type == ADS_ERROR || v.type == ADS_ERROR) {
            *out = ads_errorv();
            return;
        }
        if (o.type == ADS_UNDEFINED || v.type == ADS_UNDEFINED) {
            *out = ads_undefined();
            return;
        }
        /* a zone less than a day either way (a RelTime is range-checked
         * before its conversion: NaN or a huge one would be undefined
         * behaviour), in whole minutes: what the text forms can write
         * (+hh:mm, hh at most 23) so that the value reads back */
        if (o.type == ADS_INTEGER && o.u.i > -86400 && o.u.i < 86400)
            off = (int32_t)o.u.i;
        else if (o.type == ADS_RELTIME && o.u.rel > -86400 && o.u.rel < 86400)
            off = (int32_t)o.u.rel;
        else {
            *out = ads_errorv();
            return;
        }
        if (off % 60 != 0) {
            *out = ads_errorv();
            return;
        }
        have_off = true;
    }
    switch (v.type) {
    case ADS_UNDEFINED:
    case ADS_ERROR:
        *out = v;
        return;
    case ADS_ABSTIME:
        *out = have_off ? ads_abstime(v.u.abs.secs, off) : v;
        return;
    case ADS_STRING:
        if (ads_time__parse_abs(v.u.s.p, v.u.s.len, &secs, &off) != 0) {
            *out = ads_errorv();
            return;
        }
        *out = ads_abstime(secs, off);
        return;
    case ADS_INTEGER:
        secs = (double)v.u.i;
        break;
    case ADS_REAL:
        secs = floor(v.u.r);
        break;
    case ADS_RELTIME:
        secs = floor(v.u.rel);
        break;
    default:
        *out = ads_errorv();
        return;
    }
    *out = ads_abstime(secs, have_off ? off : ads_time__local_offset(secs));
}

static void fn_reltime(ads_value *out, ads_eval_ctx *cx, const ads_view *view,
                       const ads_expr *const *args, size_t n)
{
    (void)n;
    ads_value v = arg(cx, view, args, 0);
    double secs;
    switch (v.type) {
    case ADS_UNDEFINED:
    case ADS_ERROR:
    case ADS_RELTIME:
        *out = v;
        return;
    case ADS_INTEGER:
        *out = ads_reltime((double)v.u.i);
        return;
    case ADS_REAL:
        *out = ads_reltime(v.u.r);
        return;
    case ADS_STRING:
        *out = ads_time__parse_rel(v.u.s.p, v.u.s.len, &secs) == 0 ? ads_reltime(secs)
                                                                    : ads_errorv();
        return;
    default:
        *out = ads_errorv();
    }
}

/* ---- functions that need the evaluator ---- */

static void fn_if_then_else(ads_value *out, ads_eval_ctx *cx, const ads_view *view,
                            const ads_expr *const *args, size_t n)
{
    (void)n;
    ads_value c = arg(cx, view, args, 0);
    int64_t i;
    double r;
    if (c.type == ADS_UNDEFINED || c.type == ADS_ERROR) {
        *out = c;
        return;
    }
    int k = c.type == ADS_BOOLEAN ? 1 : ads_value__number(&c, &i, &r);
    if (!k) {
        *out = ads_errorv();
        return;
    }
    bool t = c.type == ADS_BOOLEAN ? c.u.b : k == 1 ? i != 0 : r != 0;
    ads_eval__expr(out, cx, args[t ? 1 : 2], view);
}

static void fn_eval(ads_value *out, ads_eval_ctx *cx, const ads_view *view,
                    const ads_expr *const *args, size_t n)
{
    (void)n;
    ads_value v = arg(cx, view, args, 0);
    if (v.type != ADS_STRING) {
        *out = v;
        return;
    }
    const ads_expr *e;
    if (ads_expr_parse(&e, cx->arena, v.u.s.p, v.u.s.len, NULL) != 0) {
        *out = ads_errorv();
        return;
    }
    ads_eval__expr(out, cx, e, view);
}

/* unparse(attr): the source text of an attribute's expression in adstore's
 * spelling ("" if there is no such attribute); any argument that is not an
 * attribute reference is error. */
static void fn_unparse(ads_value *out, ads_eval_ctx *cx, const ads_view *view,
                       const ads_expr *const *args, size_t n)
{
    (void)n;
    const ads_expr *a = args[0];
    while (a->kind == N_PAREN)
        a = a->u.ops.a;
    if (a->kind != N_ATTR) {
        *out = ads_errorv();
        return;
    }
    const ads_expr *found = NULL;
    ads_value lit;
    const ads_view *v = a->scope == SCOPE_ROOT ? cx->root : view;
    for (; v && !found; v = a->scope == SCOPE_ROOT ? NULL : v->parent) {
        const ads_expr *x = NULL;
        int r = v->ops->lookup(v->self, a->u.attr.name.p, a->u.attr.name.len,
                               a->u.attr.hash, cx->arena, &lit, &x);
        if (r < 0) {
            *out = ads_errorv();
            return;
        }
        if (r == 1) {
            ads_buf b = ADS_BUF_INIT;
            if (x)
                ads_expr_unparse(&b, x);
            else
                ads_value_unparse(&b, &lit);
            if (b.failed || ads_string_copy(out, cx->arena, ads_buf_cstr(&b), b.len)) {
                cx->oom = true;
                *out = ads_errorv();
            }
            ads_buf_free(&b);
            return;
        }
    }
    *out = ads_string("", 0);
}

static void fn_size(ads_value *out, ads_eval_ctx *cx, const ads_view *view,
                    const ads_expr *const *args, size_t n)
{
    (void)n;
    ads_value v = arg(cx, view, args, 0);
    switch (v.type) {
    case ADS_UNDEFINED:
    case ADS_ERROR:
        *out = v;
        return;
    case ADS_STRING:
        *out = ads_int((int64_t)v.u.s.len);
        return;
    case ADS_LIST:
        *out = ads_int((int64_t)v.u.list.n);
        return;
    case ADS_RECORD:
        *out = ads_int((int64_t)ads_record_size(v.u.rec));
        return;
    case ADS_BLOB:
        *out = ads_int((int64_t)v.u.blob->bytes.len);
        return;
    default:
        *out = ads_errorv();
    }
}

static int b64_value(unsigned char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+')
        return 62;
    if (c == '/')
        return 63;
    return -1;
}

/* Decode standard base64 (padding optional, no other characters): 0 or -1. */
static int base64_decode(ads_eval_ctx *cx, ads_str in, ads_str *out)
{
    size_t len = in.len;
    while (len > 0 && in.p[len - 1] == '=')
        len--;
    if (in.len - len > 2 || len % 4 == 1)
        return -1;
    char *p = ads_eval__alloc(cx, len / 4 * 3 + 3);
    if (!p)
        return -1;
    size_t n = 0;
    unsigned acc = 0;
    int bits = 0;
    for (size_t i = 0; i < len; i++) {
        int v = b64_value((unsigned char)in.p[i]);
        if (v < 0)
            return -1;
        acc = acc << 6 | (unsigned)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            p[n++] = (char)(acc >> bits);
            acc &= (1u << bits) - 1;
        }
    }
    if (acc != 0) /* non-zero padding bits: not canonical base64 */
        return -1;
    out->p = p;
    out->len = n;
    return 0;
}

/* blob("base64" [, record]): bytes with optional metadata. */
static void fn_blob(ads_value *out, ads_eval_ctx *cx, const ads_view *view,
                    const ads_expr *const *args, size_t n)
{
    ads_value s = arg(cx, view, args, 0), meta = ads_undefined();
    if (n == 2)
        meta = arg(cx, view, args, 1);
    if (s.type == ADS_ERROR || meta.type == ADS_ERROR ||
        (s.type != ADS_STRING && s.type != ADS_UNDEFINED) ||
        (n == 2 && meta.type != ADS_RECORD && meta.type != ADS_UNDEFINED)) {
        *out = ads_errorv();
        return;
    }
    if (s.type == ADS_UNDEFINED || (n == 2 && meta.type == ADS_UNDEFINED)) {
        *out = ads_undefined();
        return;
    }
    ads_blob *b = ads_eval__alloc(cx, sizeof *b);
    if (!b || base64_decode(cx, s.u.s, &b->bytes)) {
        *out = ads_errorv();
        return;
    }
    b->meta = n == 2 ? meta.u.rec : NULL;
    out->type = ADS_BLOB;
    out->u.blob = b;
}

static void fn_debug(ads_value *out, ads_eval_ctx *cx, const ads_view *view,
                     const ads_expr *const *args, size_t n)
{
    (void)n;
    *out = arg(cx, view, args, 0);
}

const ads_builtin ads_builtins__core[] = {
    {"isUndefined", fn_is_undefined, 1, 1},
    {"isError", fn_is_error, 1, 1},
    {"isString", fn_is_string, 1, 1},
    {"isInteger", fn_is_integer, 1, 1},
    {"isReal", fn_is_real, 1, 1},
    {"isBoolean", fn_is_boolean, 1, 1},
    {"isList", fn_is_list, 1, 1},
    {"isClassAd", fn_is_record, 1, 1},
    {"isAbsTime", fn_is_abstime, 1, 1},
    {"isRelTime", fn_is_reltime, 1, 1},
    {"isIdentifier", fn_is_ident, 1, 1},
    {"isBlob", fn_is_blob, 1, 1},
    {"int", fn_int, 1, 1},
    {"real", fn_real, 1, 1},
    {"string", fn_string, 1, 1},
    {"bool", fn_bool, 1, 1},
    {"id", fn_id, 1, 1},
    {"absTime", fn_abstime, 0, 2},
    {"relTime", fn_reltime, 1, 1},
    {"ifThenElse", fn_if_then_else, 3, 3},
    {"eval", fn_eval, 1, 1},
    {"unparse", fn_unparse, 1, 1},
    {"size", fn_size, 1, 1},
    {"debug", fn_debug, 1, 1},
    {"blob", fn_blob, 1, 2},
};
const size_t ads_builtins__core_count = sizeof ads_builtins__core / sizeof ads_builtins__core[0];
