/*
 * classad/record.c: in-memory records. Attributes keep the order they were
 * written in (unparse shows them so); a small open-addressing index over the
 * case-folded name hash makes lookup one probe or two. Records are built once
 * (ads_record_builder) and immutable after, so they are safe to share.
 */
#include <string.h>

#include "classad/classad_int.h"

static inline unsigned char fold(unsigned char c)
{
    return (c >= 'A' && c <= 'Z') ? (unsigned char)(c | 0x20) : c;
}

uint32_t ads_name_hash(const char *name, size_t len)
{
    /* FNV-1a over the folded bytes */
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < len; i++) {
        h ^= fold((unsigned char)name[i]);
        h *= 16777619u;
    }
    return h;
}

bool ads_name__eq(const char *a, size_t alen, const char *b, size_t blen)
{
    if (alen != blen)
        return false;
    if (memcmp(a, b, alen) == 0) /* the usual case: written the same way */
        return true;
    for (size_t i = 0; i < alen; i++)
        if (fold((unsigned char)a[i]) != fold((unsigned char)b[i]))
            return false;
    return true;
}

long ads_record__find(const ads_record *r, const char *name, size_t len, uint32_t hash)
{
    if (r->cap == 0) {
        /* no table: an empty record, or one whose table could not be
         * allocated (ads_record_builder_finish never fails) */
        for (size_t i = 0; i < r->n; i++)
            if (r->hashes[i] == hash && ads_name__eq(r->names[i].p, r->names[i].len, name, len))
                return (long)i;
        return -1;
    }
    size_t mask = r->cap - 1;
    for (size_t j = hash & mask;; j = (j + 1) & mask) {
        uint32_t s = r->slots[j];
        if (s == 0)
            return -1;
        size_t i = s - 1;
        if (r->hashes[i] == hash &&
            ads_name__eq(r->names[i].p, r->names[i].len, name, len))
            return (long)i;
    }
}

size_t ads_record_size(const ads_record *r)
{
    return r->n;
}

ads_str ads_record_name(const ads_record *r, size_t i)
{
    return r->names[i];
}

const ads_expr *ads_record_expr(const ads_record *r, size_t i)
{
    return r->exprs[i];
}

const ads_expr *ads_record_lookup(const ads_record *r, const char *name, size_t len)
{
    long i = ads_record__find(r, name, len, ads_name_hash(name, len));
    return i < 0 ? NULL : r->exprs[i];
}

/* ---- building ---- */

struct ads_record_builder {
    ads_arena *arena;
    ads_record *rec; /* allocated up front, so that finishing cannot fail */
    size_t n, cap;
    ads_str *names;
    const ads_expr **exprs;
    uint32_t *hashes;
};

int ads_record_builder_new(ads_record_builder **out, ads_arena *a, ads_error *err)
{
    ads_record_builder *b = ads_arena_alloc(a, sizeof *b);
    ads_record *r = ads_arena_alloc(a, sizeof *r);
    if (!b || !r)
        return ads_error_set(err, ADS_ENOMEM, "record: out of memory");
    memset(b, 0, sizeof *b);
    b->arena = a;
    b->rec = r;
    *out = b;
    return 0;
}

static int grow(ads_record_builder *b)
{
    size_t cap = b->cap ? b->cap * 2 : 8;
    ads_str *names = ads_arena_alloc(b->arena, cap * sizeof *names);
    const ads_expr **exprs = ads_arena_alloc(b->arena, cap * sizeof *exprs);
    uint32_t *hashes = ads_arena_alloc(b->arena, cap * sizeof *hashes);
    if (!names || !exprs || !hashes)
        return ADS_ENOMEM;
    if (b->n) {
        memcpy(names, b->names, b->n * sizeof *names);
        memcpy(exprs, b->exprs, b->n * sizeof *exprs);
        memcpy(hashes, b->hashes, b->n * sizeof *hashes);
    }
    b->names = names;
    b->exprs = exprs;
    b->hashes = hashes;
    b->cap = cap;
    return 0;
}

int ads_record_builder_add(ads_record_builder *b, const char *name, size_t len,
                           const ads_expr *expr, ads_error *err)
{
    if (len == 0)
        return ads_error_set(err, ADS_EINVAL, "record: empty attribute name");
    uint32_t h = ads_name_hash(name, len);
    /* a repeated name replaces the expression in place; the builder scans,
     * which is fine for the sizes records have while being built */
    for (size_t i = 0; i < b->n; i++) {
        if (b->hashes[i] == h && ads_name__eq(b->names[i].p, b->names[i].len, name, len)) {
            b->exprs[i] = expr;
            return 0;
        }
    }
    if (b->n == b->cap && grow(b))
        return ads_error_set(err, ADS_ENOMEM, "record: out of memory");
    b->names[b->n].p = name;
    b->names[b->n].len = len;
    b->exprs[b->n] = expr;
    b->hashes[b->n] = h;
    b->n++;
    return 0;
}

int ads_record_builder_add_value(ads_record_builder *b, const char *name, size_t len,
                                 const ads_value *v, ads_error *err)
{
    const ads_expr *e;
    int rc = ads_expr_literal(&e, b->arena, v, err);
    return rc ? rc : ads_record_builder_add(b, name, len, e, err);
}

const ads_record *ads_record_builder_finish(ads_record_builder *b)
{
    /* Never NULL: two dozen callers hand the record straight on. Without
     * memory for the lookup table the record is searched linearly. */
    ads_record *r = b->rec;
    r->n = b->n;
    r->names = b->names;
    r->exprs = b->exprs;
    r->hashes = b->hashes;
    r->cap = 0;
    r->slots = NULL;
    if (b->n) {
        size_t cap = 4;
        while (cap < b->n * 2)
            cap *= 2;
        uint32_t *slots = ads_arena_alloc(b->arena, cap * sizeof *slots);
        if (!slots)
            return r;
        memset(slots, 0, cap * sizeof *slots);
        for (size_t i = 0; i < b->n; i++) {
            size_t j = b->hashes[i] & (cap - 1);
            while (slots[j])
                j = (j + 1) & (cap - 1);
            slots[j] = (uint32_t)(i + 1);
        }
        r->slots = slots;
        r->cap = cap;
    }
    return r;
}

int ads_expr_literal(const ads_expr **out, ads_arena *a, const ads_value *v, ads_error *err)
{
    ads_expr *e = ads_arena_alloc(a, sizeof *e);
    if (!e)
        return ads_error_set(err, ADS_ENOMEM, "expression: out of memory");
    memset(e, 0, sizeof *e);
    e->kind = N_LITERAL;
    e->u.lit = *v;
    *out = e;
    return 0;
}

const ads_value *ads_expr_literal_value(const ads_expr *e)
{
    return e->kind == N_LITERAL ? &e->u.lit : NULL;
}

/* ---- the view of an in-memory record ---- */

static int record_lookup(const void *self, const char *name, size_t len, uint32_t hash,
                         ads_arena *arena, ads_value *value, const ads_expr **expr)
{
    const ads_record *r = self;
    (void)arena;
    long i = ads_record__find(r, name, len, hash);
    if (i < 0)
        return 0;
    const ads_expr *e = r->exprs[i];
    if (e->kind == N_LITERAL) {
        *value = e->u.lit;
        *expr = NULL;
    } else {
        *expr = e;
    }
    return 1;
}

const ads_view_ops ads_record__view_ops = {record_lookup};

ads_view ads_record_view(const ads_record *r, const ads_view *parent)
{
    ads_view v = {&ads_record__view_ops, r, parent};
    return v;
}
