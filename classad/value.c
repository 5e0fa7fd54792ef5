/*
 * classad/value.c: what values are and how they compare outside of
 * evaluation: type names, copies, `is`, `===` and structural sameness.
 */
#include <math.h>
#include <string.h>

#include "classad/classad_int.h"

static const char *const type_names[] = {
    "undefined", "error",  "boolean", "integer", "real",       "string",
    "list",      "record", "abstime", "reltime", "identifier", "blob",
};

const char *ads_vtype_name(ads_vtype t)
{
    if ((unsigned)t >= sizeof type_names / sizeof type_names[0])
        return "unknown";
    return type_names[t];
}

int ads_string_copy(ads_value *out, ads_arena *a, const char *p, size_t len)
{
    char *s = ads_arena_strndup(a, p, len);
    if (!s)
        return ADS_ENOMEM;
    *out = ads_string(s, len);
    return 0;
}

int ads_value__number(const ads_value *v, int64_t *i, double *r)
{
    switch (v->type) {
    case ADS_INTEGER:
        *i = v->u.i;
        *r = (double)v->u.i;
        return 1;
    case ADS_BOOLEAN:
        *i = v->u.b ? 1 : 0;
        *r = (double)*i;
        return 1;
    case ADS_REAL:
        *r = v->u.r;
        return 2;
    default:
        return 0;
    }
}

static bool bytes_eq(ads_str a, ads_str b)
{
    return a.len == b.len && (a.len == 0 || memcmp(a.p, b.p, a.len) == 0);
}

static bool real_same(double a, double b)
{
    return a == b || (isnan(a) && isnan(b));
}

bool ads_value_is(const ads_value *a, const ads_value *b)
{
    if (a->type != b->type)
        return false;
    switch (a->type) {
    case ADS_UNDEFINED:
    case ADS_ERROR:
        return true;
    case ADS_BOOLEAN:
        return a->u.b == b->u.b;
    case ADS_INTEGER:
        return a->u.i == b->u.i;
    case ADS_REAL:
        return real_same(a->u.r, b->u.r);
    case ADS_STRING:
        return bytes_eq(a->u.s, b->u.s);
    case ADS_ABSTIME:
        return a->u.abs.secs == b->u.abs.secs && a->u.abs.offset == b->u.abs.offset;
    case ADS_RELTIME:
        return a->u.rel == b->u.rel;
    case ADS_IDENT:
        return ads_id_eq(a->u.id, b->u.id);
    case ADS_LIST:
    case ADS_RECORD:
    case ADS_BLOB:
        return false; /* never identical (the seed's rule); === compares contents */
    }
    return false;
}

/* Case-insensitive byte comparison, as == and < compare strings. */
static int strcmp_fold(ads_str a, ads_str b)
{
    size_t n = a.len < b.len ? a.len : b.len;
    for (size_t i = 0; i < n; i++) {
        unsigned char x = (unsigned char)a.p[i], y = (unsigned char)b.p[i];
        if (x >= 'A' && x <= 'Z')
            x |= 0x20;
        if (y >= 'A' && y <= 'Z')
            y |= 0x20;
        if (x != y)
            return x < y ? -1 : 1;
    }
    return a.len < b.len ? -1 : a.len > b.len;
}

/* The value of an attribute of an evaluated record, or NULL if it is not a
 * plain value (an unevaluated expression). */
static const ads_value *member_value(const ads_record *r, size_t i)
{
    return ads_expr_literal_value(ads_record_expr(r, i));
}

/*
 * Records with the same names (without case) whose members match: plain
 * values by cmp, unevaluated expressions by same_expr (NULL: only the same
 * expression object matches).
 */
static bool records_match(const ads_record *a, const ads_record *b,
                          bool (*cmp)(const ads_value *, const ads_value *),
                          bool (*same_expr)(const ads_expr *, const ads_expr *))
{
    if (ads_record_size(a) != ads_record_size(b))
        return false;
    for (size_t i = 0; i < ads_record_size(a); i++) {
        ads_str name = ads_record_name(a, i);
        long j = ads_record__find(b, name.p, name.len, ads_name_hash(name.p, name.len));
        if (j < 0)
            return false;
        const ads_value *x = member_value(a, i), *y = member_value(b, (size_t)j);
        if (!x || !y) {
            const ads_expr *ex = ads_record_expr(a, i), *ey = ads_record_expr(b, (size_t)j);
            if (ex != ey && !(same_expr && same_expr(ex, ey)))
                return false;
            continue;
        }
        if (!cmp(x, y))
            return false;
    }
    return true;
}

static bool expr_same(const ads_expr *a, const ads_expr *b);

static bool str_same(ads_str a, ads_str b)
{
    return a.len == b.len && (a.len == 0 || memcmp(a.p, b.p, a.len) == 0);
}

/* Two expression trees alike node by node (names as written), so that an
 * expression decoded twice, or written and read back, is the same. */
static bool expr_same(const ads_expr *a, const ads_expr *b)
{
    /* down a chain's left operands in a loop (classad_int.h) */
    while (a && b && a != b && a->kind == b->kind && ads_expr__is_binop(a)) {
        if (a->op != b->op || !expr_same(a->u.ops.b, b->u.ops.b))
            return false;
        a = a->u.ops.a;
        b = b->u.ops.a;
    }
    if (a == b)
        return true;
    if (!a || !b || a->kind != b->kind)
        return false;
    switch ((node_kind)a->kind) {
    case N_LITERAL:
        return ads_value_same(&a->u.lit, &b->u.lit);
    case N_ATTR:
        return a->scope == b->scope && a->quoted == b->quoted &&
               str_same(a->u.attr.name, b->u.attr.name);
    case N_SELECT:
        return a->quoted == b->quoted && str_same(a->u.sel.name, b->u.sel.name) &&
               expr_same(a->u.sel.base, b->u.sel.base);
    case N_UNARY:
    case N_BINARY:
    case N_INDEX:
    case N_AND:
    case N_OR:
    case N_COND:
    case N_ELVIS:
    case N_PAREN:
        return a->op == b->op && expr_same(a->u.ops.a, b->u.ops.a) &&
               expr_same(a->u.ops.b, b->u.ops.b) && expr_same(a->u.ops.c, b->u.ops.c);
    case N_CALL:
        if (a->u.call.fn != b->u.call.fn || !str_same(a->u.call.name, b->u.call.name) ||
            a->quoted != b->quoted || a->u.call.n != b->u.call.n)
            return false;
        for (size_t i = 0; i < a->u.call.n; i++)
            if (!expr_same(a->u.call.args[i], b->u.call.args[i]))
                return false;
        return true;
    case N_LIST:
        if (a->u.list.n != b->u.list.n)
            return false;
        for (size_t i = 0; i < a->u.list.n; i++)
            if (!expr_same(a->u.list.items[i], b->u.list.items[i]))
                return false;
        return true;
    case N_RECORD:
        return records_match(a->u.rec, b->u.rec, ads_value_same, expr_same);
    case N_PARAM:
        return a->u.param.offset == b->u.param.offset &&
               str_same(a->u.param.name, b->u.param.name);
    }
    return false;
}

bool ads_value_equiv(const ads_value *a, const ads_value *b)
{
    if (a->type == ADS_UNDEFINED || b->type == ADS_UNDEFINED ||
        a->type == ADS_ERROR || b->type == ADS_ERROR)
        return a->type == b->type;
    int64_t ia, ib;
    double ra, rb;
    int na = ads_value__number(a, &ia, &ra), nb = ads_value__number(b, &ib, &rb);
    if (na && nb)
        return (na == 1 && nb == 1) ? ia == ib : ra == rb;
    if (a->type != b->type)
        return false;
    switch (a->type) {
    case ADS_STRING:
        return strcmp_fold(a->u.s, b->u.s) == 0;
    case ADS_ABSTIME:
        return a->u.abs.secs == b->u.abs.secs;
    case ADS_RELTIME:
        return a->u.rel == b->u.rel;
    case ADS_IDENT:
        return ads_id_eq(a->u.id, b->u.id);
    case ADS_BLOB:
        return bytes_eq(a->u.blob->bytes, b->u.blob->bytes) &&
               ((!a->u.blob->meta && !b->u.blob->meta) ||
                (a->u.blob->meta && b->u.blob->meta &&
                 records_match(a->u.blob->meta, b->u.blob->meta, ads_value_equiv, NULL)));
    case ADS_LIST:
        if (a->u.list.n != b->u.list.n)
            return false;
        for (size_t i = 0; i < a->u.list.n; i++)
            if (!ads_value_equiv(&a->u.list.items[i], &b->u.list.items[i]))
                return false;
        return true;
    case ADS_RECORD:
        return records_match(a->u.rec, b->u.rec, ads_value_equiv, NULL);
    default:
        return false;
    }
}

bool ads_value_same(const ads_value *a, const ads_value *b)
{
    if (a->type != b->type)
        return false;
    switch (a->type) {
    case ADS_LIST:
        if (a->u.list.n != b->u.list.n)
            return false;
        for (size_t i = 0; i < a->u.list.n; i++)
            if (!ads_value_same(&a->u.list.items[i], &b->u.list.items[i]))
                return false;
        return true;
    case ADS_RECORD:
        return records_match(a->u.rec, b->u.rec, ads_value_same, expr_same);
    case ADS_RELTIME:
        return real_same(a->u.rel, b->u.rel);
    case ADS_BLOB:
        return bytes_eq(a->u.blob->bytes, b->u.blob->bytes) &&
               ((!a->u.blob->meta && !b->u.blob->meta) ||
                (a->u.blob->meta && b->u.blob->meta &&
                 records_match(a->u.blob->meta, b->u.blob->meta, ads_value_same, expr_same)));
    default:
        return ads_value_is(a, b);
    }
}

int ads_value__strcmp_fold(ads_str a, ads_str b)
{
    return strcmp_fold(a, b);
}
