/*
 * query/values.c: what the executor needs of values beyond the language:
 * a hash that agrees with `===` (for GROUP BY), the total order of ORDER BY,
 * deep copies that outlive a row, and the walks over expressions that find
 * which attributes a statement mentions.
 */
#include <math.h>
#include <string.h>

#include "classad/msgpack.h"
#include "query/query_int.h"

static unsigned char fold(unsigned char c)
{
    return (c >= 'A' && c <= 'Z') ? (unsigned char)(c | 0x20) : c;
}

bool ads_q__name_is(ads_str s, const char *lit)
{
    size_t n = strlen(lit);
    if (s.len != n)
        return false;
    for (size_t i = 0; i < n; i++)
        if (fold((unsigned char)s.p[i]) != fold((unsigned char)lit[i]))
            return false;
    return true;
}

typedef struct mention {
    const char *name;
    bool found;
} mention;

static int mentions_at(void *ctx, const ads_expr *e)
{
    mention *m = ctx;
    ads_expr_kind k = ads_expr_kind_of(e);
    if ((k == ADS_X_ATTR || k == ADS_X_ROOTATTR || k == ADS_X_SELECT) &&
        ads_q__name_is(ads_expr_name(e), m->name)) {
        m->found = true;
        return ADS_VISIT_STOP;
    }
    if (k == ADS_X_RECORD) {
        const ads_record *r = ads_expr_record(e);
        for (size_t i = 0; i < ads_record_size(r) && !m->found; i++)
            m->found = ads_q__mentions(ads_record_expr(r, i), m->name);
        return m->found ? ADS_VISIT_STOP : ADS_VISIT_SKIP;
    }
    return ADS_VISIT_INTO;
}

/* Walked without recursion down chains (a || b || ... of any length). */
bool ads_q__mentions(const ads_expr *e, const char *name)
{
    mention m = {name, false};
    if (e)
        ads_expr_visit(e, mentions_at, &m, ADS_VISIT_ANY_ORDER, NULL);
    return m.found;
}

bool ads_q__truthy(const ads_value *v)
{
    switch (v->type) {
    case ADS_BOOLEAN:
        return v->u.b;
    case ADS_INTEGER:
        return v->u.i != 0;
    case ADS_REAL:
        return v->u.r != 0;
    default:
        return false;
    }
}

/* ---- hashing as `===` compares ---- */

/* A 64-bit finaliser (every input bit reaches every output bit), so hashes
 * of numbers, whose low bits are often all zero, spread over a table. */
static uint64_t fmix(uint64_t x)
{
    x ^= x >> 33;
    x *= UINT64_C(0xff51afd7ed558ccd);
    x ^= x >> 33;
    x *= UINT64_C(0xc4ceb9fe1a85ec53);
    x ^= x >> 33;
    return x;
}

static uint64_t mix(uint64_t h, uint64_t x)
{
    return fmix(h ^ (x + UINT64_C(0x9e3779b97f4a7c15) + (h << 6) + (h >> 2)));
}

static uint64_t hash_double(double d)
{
    if (d == 0)
        d = 0; /* -0.0 */
    uint64_t u;
    memcpy(&u, &d, 8);
    return u;
}

uint64_t ads_q__hash(const ads_value *v)
{
    uint64_t h = (uint64_t)v->type;
    switch (v->type) {
    case ADS_BOOLEAN:
        return mix(100, hash_double(v->u.b ? 1.0 : 0.0));
    case ADS_INTEGER:
        return mix(100, hash_double((double)v->u.i));
    case ADS_REAL:
        return mix(100, hash_double(v->u.r));
    case ADS_STRING: {
        uint64_t x = UINT64_C(0xcbf29ce484222325);
        for (size_t i = 0; i < v->u.s.len; i++)
            x = (x ^ fold((unsigned char)v->u.s.p[i])) * UINT64_C(0x100000001b3);
        return mix(200, x);
    }
    case ADS_ABSTIME:
        return mix(300, hash_double(v->u.abs.secs));
    case ADS_RELTIME:
        return mix(400, hash_double(v->u.rel));
    case ADS_IDENT:
        return mix(mix(500, v->u.id.hi), v->u.id.lo);
    case ADS_LIST:
        h = 600;
        for (size_t i = 0; i < v->u.list.n; i++)
            h = mix(h, ads_q__hash(&v->u.list.items[i]));
        return h;
    case ADS_RECORD:
        /* names and values in any order: a sum of per-attribute hashes */
        h = 700;
        for (size_t i = 0; i < ads_record_size(v->u.rec); i++) {
            ads_str n = ads_record_name(v->u.rec, i);
            const ads_value *lit = ads_expr_literal_value(ads_record_expr(v->u.rec, i));
            uint64_t x = ads_name_hash(n.p, n.len);
            h += mix(x, lit ? ads_q__hash(lit) : 1);
        }
        return h;
    case ADS_BLOB: {
        uint64_t x = UINT64_C(0xcbf29ce484222325);
        for (size_t i = 0; i < v->u.blob->bytes.len; i++)
            x = (x ^ (unsigned char)v->u.blob->bytes.p[i]) * UINT64_C(0x100000001b3);
        return mix(800, x);
    }
    default:
        return h;
    }
}

/* ---- the order of ORDER BY ---- */

static int rank(const ads_value *v)
{
    switch (v->type) {
    case ADS_BOOLEAN:
    case ADS_INTEGER:
    case ADS_REAL:
        return 0;
    case ADS_STRING:
        return 1;
    case ADS_ABSTIME:
        return 2;
    case ADS_RELTIME:
        return 3;
    case ADS_IDENT:
        return 4;
    case ADS_LIST:
        return 5;
    case ADS_RECORD:
        return 6;
    case ADS_BLOB:
        return 7;
    case ADS_ERROR:
        return 8;
    default:
        return 9; /* undefined last */
    }
}

static int cmp_double(double a, double b)
{
    if (a < b)
        return -1;
    if (a > b)
        return 1;
    if (a == b)
        return 0;
    /* NaN after every number */
    return isnan(a) ? (isnan(b) ? 0 : 1) : -1;
}

static int cmp_bytes(const char *a, size_t al, const char *b, size_t bl, bool folded)
{
    size_t n = al < bl ? al : bl;
    for (size_t i = 0; i < n; i++) {
        unsigned char x = (unsigned char)a[i], y = (unsigned char)b[i];
        if (folded) {
            x = fold(x);
            y = fold(y);
        }
        if (x != y)
            return x < y ? -1 : 1;
    }
    return al < bl ? -1 : al > bl;
}

int ads_q__compare(const ads_value *a, const ads_value *b)
{
    int ra = rank(a), rb = rank(b);
    if (ra != rb)
        return ra < rb ? -1 : 1;
    switch (ra) {
    case 0: {
        /* integers against integers exactly; otherwise as doubles */
        bool ai = a->type != ADS_REAL, bi = b->type != ADS_REAL;
        int64_t x = a->type == ADS_BOOLEAN ? a->u.b : a->type == ADS_INTEGER ? a->u.i : 0;
        int64_t y = b->type == ADS_BOOLEAN ? b->u.b : b->type == ADS_INTEGER ? b->u.i : 0;
        if (ai && bi)
            return x < y ? -1 : x > y;
        return cmp_double(ai ? (double)x : a->u.r, bi ? (double)y : b->u.r);
    }
    case 1: {
        int c = cmp_bytes(a->u.s.p, a->u.s.len, b->u.s.p, b->u.s.len, true);
        return c ? c : cmp_bytes(a->u.s.p, a->u.s.len, b->u.s.p, b->u.s.len, false);
    }
    case 2:
        return cmp_double(a->u.abs.secs, b->u.abs.secs);
    case 3:
        return cmp_double(a->u.rel, b->u.rel);
    case 4:
        return ads_id_cmp(a->u.id, b->u.id);
    case 5: {
        size_t n = a->u.list.n < b->u.list.n ? a->u.list.n : b->u.list.n;
        for (size_t i = 0; i < n; i++) {
            int c = ads_q__compare(&a->u.list.items[i], &b->u.list.items[i]);
            if (c)
                return c;
        }
        return a->u.list.n < b->u.list.n ? -1 : a->u.list.n > b->u.list.n;
    }
    case 7:
        return cmp_bytes(a->u.blob->bytes.p, a->u.blob->bytes.len, b->u.blob->bytes.p,
                         b->u.blob->bytes.len, false);
    default:
        return 0; /* records, error, undefined: all alike */
    }
}

/* ---- deep copies ---- */

static int copy_expr(const ads_expr **out, const ads_expr *e, ads_arena *a)
{
    const ads_value *lit = ads_expr_literal_value(e);
    if (lit) {
        ads_value c;
        int rc = ads_q__copy(&c, lit, a);
        return rc ? rc : ads_expr_literal(out, a, &c, NULL);
    }
    /* an unevaluated expression: through its canonical bytes, copied */
    ads_buf b = ADS_BUF_INIT;
    int rc = ads_msgpack_encode_expr(&b, e, NULL);
    if (!rc)
        rc = ads_msgpack_decode_expr(out, a, b.p, b.len, ADS_MSGPACK_COPY, NULL);
    ads_buf_free(&b);
    return rc ? ADS_ENOMEM : 0;
}

static int copy_record(const ads_record **out, const ads_record *r, ads_arena *a)
{
    ads_record_builder *b;
    if (ads_record_builder_new(&b, a, NULL))
        return ADS_ENOMEM;
    for (size_t i = 0; i < ads_record_size(r); i++) {
        ads_str n = ads_record_name(r, i);
        const ads_expr *e;
        char *name = ads_arena_strndup(a, n.p, n.len);
        if (!name || copy_expr(&e, ads_record_expr(r, i), a) ||
            ads_record_builder_add(b, name, n.len, e, NULL))
            return ADS_ENOMEM;
    }
    *out = ads_record_builder_finish(b);
    return 0;
}

/* A deep copy: strings, lists, records (attributes in their order,
 * unevaluated expressions included) and blobs. */
int ads_q__copy(ads_value *out, const ads_value *v, ads_arena *a)
{
    switch (v->type) {
    case ADS_STRING:
        return ads_string_copy(out, a, v->u.s.p, v->u.s.len);
    case ADS_LIST: {
        ads_value *items = ads_arena_alloc(a, (v->u.list.n ? v->u.list.n : 1) * sizeof *items);
        if (!items)
            return ADS_ENOMEM;
        for (size_t i = 0; i < v->u.list.n; i++) {
            int rc = ads_q__copy(&items[i], &v->u.list.items[i], a);
            if (rc)
                return rc;
        }
        *out = ads_list(items, v->u.list.n);
        return 0;
    }
    case ADS_RECORD: {
        const ads_record *r;
        int rc = copy_record(&r, v->u.rec, a);
        if (!rc)
            *out = ads_recordv(r);
        return rc;
    }
    case ADS_BLOB: {
        ads_blob *bl = ads_arena_alloc(a, sizeof *bl);
        char *bytes = bl ? ads_arena_alloc(a, v->u.blob->bytes.len + 1) : NULL;
        if (!bytes)
            return ADS_ENOMEM;
        if (v->u.blob->bytes.len) /* (an empty blob's bytes may be NULL) */
            memcpy(bytes, v->u.blob->bytes.p, v->u.blob->bytes.len);
        bl->bytes.p = bytes;
        bl->bytes.len = v->u.blob->bytes.len;
        bl->meta = NULL;
        if (v->u.blob->meta && copy_record(&bl->meta, v->u.blob->meta, a))
            return ADS_ENOMEM;
        out->type = ADS_BLOB;
        out->u.blob = bl;
        return 0;
    }
    default:
        *out = *v;
        return 0;
    }
}
