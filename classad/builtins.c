/*
 * classad/builtins.c: the built-in function registry and the core functions:
 * type tests, conversions (int real string bool id absTime relTime) and the
 * ones that need the evaluator itself (ifThenElse eval unparse size debug).
 * The string, list, math and regexp functions are in builtins_string.c; the
 * time functions in builtins_time.c; unresolved(), which walks an attribute's
 * references and matches them against a pattern, sits with the regular
 * expressions in builtins_string.c; the functions of HTCondor's own
 * compatibility layer (splitUserName, countMatches, mergeEnvironment, ...)
 * in builtins_condor.c. Names are resolved once, at parse time.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "classad/builtins_int.h"
#include "base/num.h"

typedef struct table {
    const ads_builtin *fns;
    const size_t *count;
} table;

static const table tables[] = {
    {ads_builtins__core, &ads_builtins__core_count},
    {ads_builtins__string, &ads_builtins__string_count},
    {ads_builtins__time, &ads_builtins__time_count},
    {ads_builtins__condor, &ads_builtins__condor_count},
};

const ads_builtin *ads_builtin__find(const char *name, size_t len)
{
    for (size_t t = 0; t < sizeof tables / sizeof tables[0]; t++)
        for (size_t i = 0; i < *tables[t].count; i++)
            if (ads_name__eq(tables[t].fns[i].name, strlen(tables[t].fns[i].name), name, len))
                return &tables[t].fns[i];
    return NULL;
}

bool ads_builtin_known(const char *name, size_t len)
{
    return name && ads_builtin__find(name, len) != NULL;
}

/* Evaluate argument i. */
static ads_value arg(ads_eval_ctx *cx, const ads_view *view, const ads_expr *const *args,
                     size_t i)
{
    ads_value v;
    ads_eval__expr(&v, cx, args[i], view);
    return v;
}

int ads_builtin__lookup(ads_eval_ctx *cx, const ads_view *view, const ads_expr *a,
                        ads_value *lit, const ads_expr **x)
{
    const ads_view *v = a->scope == SCOPE_ROOT ? cx->root : view;
    for (; v; v = a->scope == SCOPE_ROOT ? NULL : v->parent) {
        *x = NULL;
        int r = v->ops->lookup(v->self, a->u.attr.name.p, a->u.attr.name.len, a->u.attr.hash,
                               cx->arena, lit, x);
        if (r != 0)
            return r < 0 ? -1 : 1;
    }
    return 0;
}

static const ads_expr *strip_parens(const ads_expr *e)
{
    while (e->kind == N_PAREN)
        e = e->u.ops.a;
    return e;
}

/*
 * The record that expression e stands for, as written (its members
 * unevaluated) where that can be found without evaluating: a record written
 * in place, an attribute whose expression is one, or `r.name` of those;
 * anything else is evaluated (only if eval) and a record value taken. NULL
 * if e is not a record (or a lookup failed: *failed set).
 */
static const ads_record *record_source(ads_eval_ctx *cx, const ads_view *view,
                                       const ads_expr *e, int depth, bool eval, bool *failed)
{
    e = strip_parens(e);
    if (e->kind == N_RECORD)
        return e->u.rec;
    if (depth < ADS_MAX_DEPTH && e->kind == N_ATTR) {
        ads_value lit;
        const ads_expr *x = NULL;
        int r = ads_builtin__lookup(cx, view, e, &lit, &x);
        if (r < 0) {
            *failed = true;
            return NULL;
        }
        if (r == 0)
            return NULL;
        if (!x)
            return lit.type == ADS_RECORD ? lit.u.rec : NULL;
        if (strip_parens(x)->kind == N_RECORD)
            return strip_parens(x)->u.rec;
    } else if (depth < ADS_MAX_DEPTH && e->kind == N_SELECT) {
        const ads_record *base = record_source(cx, view, e->u.sel.base, depth + 1, true, failed);
        if (*failed)
            return NULL;
        if (base) {
            long i = ads_record__find(base, e->u.sel.name.p, e->u.sel.name.len, e->u.sel.hash);
            if (i < 0)
                return NULL;
            const ads_expr *m = strip_parens(base->exprs[i]);
            if (m->kind == N_RECORD)
                return m->u.rec;
            if (m->kind == N_LITERAL)
                return m->u.lit.type == ADS_RECORD ? m->u.lit.u.rec : NULL;
            ads_view inner = ads_record_view(base, view);
            ads_value v;
            ads_eval__expr(&v, cx, m, &inner);
            return v.type == ADS_RECORD ? v.u.rec : NULL;
        }
    }
    if (!eval)
        return NULL;
    ads_value v;
    ads_eval__expr(&v, cx, e, view);
    return v.type == ADS_RECORD ? v.u.rec : NULL;
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
    case ADS_RECORD: {
        /* HTCondor keeps records unevaluated and shows their text, as lists
         * already do here: find the record as written when the argument
         * names it (a record in place, an attribute, r.name) */
        bool failed = false;
        const ads_record *src = record_source(cx, view, args[0], 0, false, &failed);
        ads_expr rec = {.kind = N_RECORD};
        rec.u.rec = src ? src : v.u.rec;
        ads_expr_unparse_condor(&b, &rec);
        break;
    }
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
        else /* HTCondor: any other string is undefined, not error */
            *out = ads_undefined();
        return;
    case ADS_RELTIME:
        /* HTCondor's RelTime is whole seconds here: bool(relTime(0.5)) is false */
        *out = ads_bool(!(v.u.rel < 1 && v.u.rel > -1) || isnan(v.u.rel));
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

static bool all_digits(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] < '0' || s[i] > '9')
            return false;
    return true;
}

/*
 * absTime(s) for text the strict form (the backtick literal's) refuses,
 * read as HTCondor reads it: digit groups in order, year (4 digits), then
 * month, day, hours, minutes and seconds (2 digits each), any of them left
 * off from the end and anything but digits between them, then an optional
 * zone `Z`, `+hhmm` or `+hh:mm`; without a zone, the process's local zone
 * (absTime("2004-01-01") is that midnight, local time). A month or day left
 * off is 1 (HTCondor's mktime reads a missing day as day 0, the last day of
 * the month before). 0, or -1 if s is not such a time.
 */
static int abs_lenient(const char *s, size_t len, double *secs, int32_t *off)
{
    char zone[8] = "";
    while (len > 0 && (s[len - 1] == ' ' || s[len - 1] == '\t'))
        len--;
    if (len > 1 && (s[len - 1] == 'Z' || s[len - 1] == 'z')) {
        strcpy(zone, "Z");
        len--;
    } else if (len > 5 && (s[len - 5] == '+' || s[len - 5] == '-') && all_digits(s + len - 4, 4)) {
        memcpy(zone, s + len - 5, 5);
        zone[5] = '\0';
        len -= 5;
    } else if (len > 6 && (s[len - 6] == '+' || s[len - 6] == '-') && s[len - 3] == ':') {
        memcpy(zone, s + len - 6, 6);
        zone[6] = '\0';
        len -= 6;
    }
    static const int width[6] = {4, 2, 2, 2, 2, 2};
    int field[6] = {0, 1, 1, 0, 0, 0};
    size_t i = 0;
    int nf = 0;
    for (; nf < 6; nf++) {
        while (i < len && (s[i] < '0' || s[i] > '9'))
            i++;
        if (i == len)
            break;
        int v = 0;
        for (int k = 0; k < width[nf]; k++, i++) {
            if (i == len || s[i] < '0' || s[i] > '9')
                return -1;
            v = v * 10 + (s[i] - '0');
        }
        field[nf] = v;
    }
    if (nf == 0)
        return -1;
    for (; i < len; i++) /* no digits after the last group */
        if (s[i] >= '0' && s[i] <= '9')
            return -1;
    char canon[40];
    int n = snprintf(canon, sizeof canon, "%04d-%02d-%02dT%02d:%02d:%02d%s", field[0], field[1],
                     field[2], field[3], field[4], field[5], zone);
    if (n < 0 || (size_t)n >= sizeof canon)
        return -1;
    return ads_time__parse_abs(canon, (size_t)n, secs, off);
}

/*
 * relTime(s) for text the strict form refuses: HTCondor allows white space
 * between the parts (relTime("1d 2h"), relTime("- 5m")), so read s again
 * without the white space that does not stand between two digits. 0 or -1.
 */
static int rel_lenient(ads_eval_ctx *cx, const char *s, size_t len, double *secs)
{
    char *t = ads_eval__alloc(cx, len + 1);
    if (!t)
        return -1;
    size_t n = 0;
    for (size_t i = 0; i < len; i++) {
        bool space = s[i] == ' ' || s[i] == '\t';
        if (space && n > 0 && t[n - 1] >= '0' && t[n - 1] <= '9') {
            size_t j = i;
            while (j < len && (s[j] == ' ' || s[j] == '\t'))
                j++;
            if (j < len && s[j] >= '0' && s[j] <= '9')
                return -1; /* "1 30": two numbers */
        }
        if (!space)
            t[n++] = s[i];
    }
    if (n == len)
        return -1;
    return ads_time__parse_rel(t, n, secs);
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
        if (ads_time__parse_abs(v.u.s.p, v.u.s.len, &secs, &off) != 0 &&
            abs_lenient(v.u.s.p, v.u.s.len, &secs, &off) != 0) {
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
    case ADS_ABSTIME:
        /* HTCondor: the instant's seconds since the epoch (relTime(absTime(60))
         * is `1m`) */
        *out = ads_reltime(v.u.abs.secs);
        return;
    case ADS_STRING:
        *out = ads_time__parse_rel(v.u.s.p, v.u.s.len, &secs) == 0 ||
                       rel_lenient(cx, v.u.s.p, v.u.s.len, &secs) == 0
                   ? ads_reltime(secs)
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

/*
 * `self.name`, `parent.name`, `toplevel.name` or `root.name`, where the base
 * is that special name (no attribute of the name exists): look name up in
 * that record alone. 1 found, -1 the record could not be read, 0 anything
 * else (another base, no such record, or no such member).
 */
static int scope_select(ads_eval_ctx *cx, const ads_view *view, const ads_expr *sel,
                        ads_value *lit, const ads_expr **x)
{
    const ads_expr *base = strip_parens(sel->u.sel.base);
    if (base->kind != N_ATTR || base->scope != SCOPE_NORMAL)
        return 0;
    ads_str nm = base->u.attr.name;
    const ads_view *v;
    if (ads_name__eq(nm.p, nm.len, "self", 4))
        v = view;
    else if (ads_name__eq(nm.p, nm.len, "parent", 6))
        v = view->parent;
    else if (ads_name__eq(nm.p, nm.len, "toplevel", 8) || ads_name__eq(nm.p, nm.len, "root", 4))
        v = cx->root;
    else
        return 0;
    int r = ads_builtin__lookup(cx, view, base, lit, x);
    if (r != 0 || !v)
        return r < 0 ? -1 : 0; /* an attribute of that name: an ordinary select */
    *x = NULL;
    r = v->ops->lookup(v->self, sel->u.sel.name.p, sel->u.sel.name.len, sel->u.sel.hash,
                       cx->arena, lit, x);
    return r < 0 ? -1 : r == 1;
}

/* unparse(attr): the source text of an attribute's expression in adstore's
 * spelling ("" if there is no such attribute); attr is a name looked up
 * through the scopes, or `r.name` with r a record (written in place, held
 * by an attribute, or any expression giving one), whose member `name` is
 * shown as written. Any other argument is error. */
static void fn_unparse(ads_value *out, ads_eval_ctx *cx, const ads_view *view,
                       const ads_expr *const *args, size_t n)
{
    (void)n;
    const ads_expr *a = strip_parens(args[0]);
    const ads_expr *x = NULL;
    ads_value lit;
    int r = 0;
    if (a->kind == N_ATTR) {
        r = ads_builtin__lookup(cx, view, a, &lit, &x);
    } else if (a->kind == N_SELECT && (r = scope_select(cx, view, a, &lit, &x)) != 0) {
        /* self.name, parent.name, toplevel.name, root.name: found or failed */
    } else if (a->kind == N_SELECT) {
        bool failed = false;
        const ads_record *rec = record_source(cx, view, a->u.sel.base, 0, true, &failed);
        if (failed) {
            r = -1;
        } else if (rec) {
            long i = ads_record__find(rec, a->u.sel.name.p, a->u.sel.name.len, a->u.sel.hash);
            if (i >= 0) {
                x = rec->exprs[i];
                r = 1;
            }
        }
    } else {
        r = -1;
    }
    if (r < 0) {
        *out = ads_errorv();
        return;
    }
    if (r == 0) {
        *out = ads_string("", 0);
        return;
    }
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
