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

/* x with the ASCII capitals of its 8 bytes made small, the others kept:
 * a byte below 0x80 that is >= 'A' and <= 'Z' gains 0x20. */
static inline uint64_t fold8(uint64_t x)
{
    const uint64_t ones = 0x0101010101010101u, high = ones * 0x80;
    uint64_t low7 = x & ~high;
    uint64_t ge_a = low7 + ones * (0x80 - 'A');
    uint64_t gt_z = low7 + ones * (0x80 - 'Z' - 1);
    uint64_t upper = ge_a & ~gt_z & ~x & high;
    return x | (upper >> 2);
}

static inline uint64_t mix(uint64_t h, uint64_t x)
{
    h = (h ^ x) * 0x9e3779b97f4a7c15u;
    return h ^ (h >> 29);
}

uint32_t ads_name_hash(const char *name, size_t len)
{
    /* eight folded bytes at a time, the last ones zero-padded; the length
     * is mixed in, so "a" and "a\0" differ */
    uint64_t h = 0x243f6a8885a308d3u ^ len, x;
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        memcpy(&x, name + i, 8);
        h = mix(h, fold8(x));
    }
    if (i < len) {
        /* the same bytes as memcpy(&x, name + i, len - i), each size a
         * constant so that the copy is a few loads, not a library call
         * (most names are shorter than 8 bytes: this is the whole hash) */
        x = 0;
        switch (len - i) {
        case 1: memcpy(&x, name + i, 1); break;
        case 2: memcpy(&x, name + i, 2); break;
        case 3: memcpy(&x, name + i, 3); break;
        case 4: memcpy(&x, name + i, 4); break;
        case 5: memcpy(&x, name + i, 5); break;
        case 6: memcpy(&x, name + i, 6); break;
        default: memcpy(&x, name + i, 7); break;
        }
        h = mix(h, fold8(x));
    }
    h *= 0xff51afd7ed558ccdu;
    return (uint32_t)(h ^ (h >> 32));
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

long ads_record__find_hinted(const ads_record *r, const char *name, size_t len, uint32_t hash,
                             _Atomic uint32_t *hint)
{
    if (!hint)
        return ads_record__find(r, name, len, hash);
    uint32_t h = atomic_load_explicit(hint, memory_order_relaxed);
    if (h < r->n && r->hashes[h] == hash && ads_name__eq(r->names[h].p, r->names[h].len, name, len))
        return (long)h;
    long i = ads_record__find(r, name, len, hash);
    if (i >= 0 && (uint32_t)i != h)
        atomic_store_explicit(hint, (uint32_t)i, memory_order_relaxed);
    return i;
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
    uint32_t *slots; /* 2 * cap: attribute index + 1 by hash, 0 empty */
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

/* Put attribute i into the builder's hash slots. */
/* Attribute i (its name's hash h) into an open-addressed index of cap
 * slots (a power of two; 0 marks an empty slot, i + 1 attribute i). */
static void index_put(uint32_t *slots, size_t cap, uint32_t h, size_t i)
{
    size_t j = h & (cap - 1);
    while (slots[j])
        j = (j + 1) & (cap - 1);
    slots[j] = (uint32_t)(i + 1);
}

static void slot_put(ads_record_builder *b, size_t i)
{
    index_put(b->slots, 2 * b->cap, b->hashes[i], i);
}

static int grow(ads_record_builder *b)
{
    size_t cap = b->cap ? b->cap * 2 : 32;
    ads_str *names = ads_arena_alloc(b->arena, cap * sizeof *names);
    const ads_expr **exprs = ads_arena_alloc(b->arena, cap * sizeof *exprs);
    uint32_t *hashes = ads_arena_alloc(b->arena, cap * sizeof *hashes);
    uint32_t *slots = ads_arena_alloc(b->arena, 2 * cap * sizeof *slots);
    if (!names || !exprs || !hashes || !slots)
        return ADS_ENOMEM;
    if (b->n) {
        memcpy(names, b->names, b->n * sizeof *names);
        memcpy(exprs, b->exprs, b->n * sizeof *exprs);
        memcpy(hashes, b->hashes, b->n * sizeof *hashes);
    }
    memset(slots, 0, 2 * cap * sizeof *slots);
    b->names = names;
    b->exprs = exprs;
    b->hashes = hashes;
    b->slots = slots;
    b->cap = cap;
    for (size_t i = 0; i < b->n; i++)
        slot_put(b, i);
    return 0;
}

int ads_record_builder_add(ads_record_builder *b, const char *name, size_t len,
                           const ads_expr *expr, ads_error *err)
{
    return ads_record__builder_add_hashed(b, name, len, ads_name_hash(name, len), expr, err);
}

int ads_record__builder_add_hashed(ads_record_builder *b, const char *name, size_t len,
                                   uint32_t h, const ads_expr *expr, ads_error *err)
{
    if (len == 0)
        return ads_error_set(err, ADS_EINVAL, "record: empty attribute name");
    /* a repeated name replaces the expression in place */
    if (b->cap) {
        size_t mask = 2 * b->cap - 1;
        for (size_t j = h & mask; b->slots[j]; j = (j + 1) & mask) {
            size_t i = b->slots[j] - 1;
            if (b->hashes[i] == h && ads_name__eq(b->names[i].p, b->names[i].len, name, len)) {
                b->exprs[i] = expr;
                return 0;
            }
        }
    }
    if (b->n == b->cap && grow(b))
        return ads_error_set(err, ADS_ENOMEM, "record: out of memory");
    b->names[b->n].p = name;
    b->names[b->n].len = len;
    b->exprs[b->n] = expr;
    b->hashes[b->n] = h;
    slot_put(b, b->n);
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

/* Bytes of the block pack() lays out for attributes names/exprs: the index
 * (cap slots), the arrays, then a cell per attribute. */
static size_t block_size(size_t n, size_t cap, const ads_str *names,
                         const ads_expr *const *exprs)
{
    size_t align = _Alignof(ads_expr);
    size_t size = cap * sizeof(uint32_t) + n * sizeof(uint32_t);
    size = (size + align - 1) / align * align;
    size += n * (sizeof(ads_str) + sizeof(ads_expr *));
    for (size_t i = 0; i < n; i++) {
        size_t cell = names[i].len + 1;
        if (exprs[i]->kind == N_LITERAL) {
            cell += sizeof(ads_expr);
            if (exprs[i]->u.lit.type == ADS_STRING)
                cell += exprs[i]->u.lit.u.s.len + 1;
        }
        size += (cell + align - 1) / align * align;
    }
    return size;
}

/* Copy the n bytes at p to *at (NUL after them), moving *at on. */
static const char *put_text(char **at, const char *p, size_t n)
{
    char *dst = *at;
    if (n)
        memcpy(dst, p, n);
    dst[n] = '\0';
    *at += n + 1;
    return dst;
}

/*
 * Lay a finished record out in one block: the index and the arrays, then
 * per attribute a cell holding its literal node (copied), its name and a
 * string literal's bytes. Over many records, evaluation touches a few lines
 * of one block per record instead of nodes and names scattered through the
 * arena where the text was parsed (a cache miss each). 0, or -1 if there is
 * no memory for the block (r is then left unindexed).
 */
static int pack(ads_arena *a, ads_record *r, size_t n, const ads_str *names,
                const ads_expr *const *exprs, const uint32_t *hashes)
{
    size_t cap = 4, align = _Alignof(ads_expr);
    while (cap < n * 2)
        cap *= 2;
    size_t size = block_size(n, cap, names, exprs);
    char *block = ads_arena_alloc(a, size);
    if (!block)
        return -1;
    uint32_t *slots = (uint32_t *)block, *h = slots + cap;
    size_t off = (cap + n) * sizeof(uint32_t);
    off = (off + align - 1) / align * align;
    ads_str *nm = (ads_str *)(block + off);
    const ads_expr **ex = (const ads_expr **)(nm + n);
    char *at = (char *)(ex + n);
    memset(slots, 0, cap * sizeof *slots);
    for (size_t i = 0; i < n; i++) {
        char *cell = at;
        h[i] = hashes[i];
        ex[i] = exprs[i];
        if (exprs[i]->kind == N_LITERAL) {
            ads_expr *lit = (ads_expr *)at;
            *lit = *exprs[i];
            at += sizeof *lit;
            if (lit->u.lit.type == ADS_STRING)
                lit->u.lit.u.s.p = put_text(&at, lit->u.lit.u.s.p, lit->u.lit.u.s.len);
            ex[i] = lit;
        }
        nm[i].p = put_text(&at, names[i].p, names[i].len);
        nm[i].len = names[i].len;
        at = cell + ((size_t)(at - cell) + align - 1) / align * align;
        index_put(slots, cap, hashes[i], i);
    }
    r->names = nm;
    r->exprs = ex;
    r->hashes = h;
    r->slots = slots;
    r->cap = cap;
    r->block = block;
    r->block_len = size;
    return 0;
}

void ads_record__index(ads_arena *a, ads_record *r, size_t n, const ads_str *names,
                       const ads_expr *const *exprs, const uint32_t *hashes)
{
    r->n = n;
    r->names = names;
    r->exprs = exprs;
    r->hashes = hashes;
    r->cap = 0;
    r->slots = NULL;
    r->block = NULL;
    r->block_len = 0;
    if (n)
        (void)pack(a, r, n, names, exprs, hashes);
}

void ads__prefetch(const void *p, size_t len)
{
#if defined(__GNUC__) || defined(__clang__)
    if (len > ADS_PREFETCH_MAX)
        len = ADS_PREFETCH_MAX;
    /* four lines a step: the loop's own compare and jump were half of
     * what a prefetch of a 1.5 KB record cost */
    const char *c = p, *end = c + len;
    for (; c + 4 * ADS_CACHE_LINE <= end; c += 4 * ADS_CACHE_LINE) {
        __builtin_prefetch(c);
        __builtin_prefetch(c + ADS_CACHE_LINE);
        __builtin_prefetch(c + 2 * ADS_CACHE_LINE);
        __builtin_prefetch(c + 3 * ADS_CACHE_LINE);
    }
    for (; c < end; c += ADS_CACHE_LINE)
        __builtin_prefetch(c);
#else
    (void)p, (void)len;
#endif
}

void ads_record__prefetch(const ads_record *r)
{
    /* several expressions are often evaluated on one record in a row (a
     * query's constraint and projection, a match's two sides): its lines
     * are asked for once. Only a hint, so a block that an arena reused at
     * the same address is merely not asked for again. */
    static _Thread_local const void *last;
    if (r->block == last)
        return;
    last = r->block;
    ads__prefetch(r->block, r->block_len);
}

const ads_record *ads_record_builder_finish(ads_record_builder *b)
{
    /* Never NULL: two dozen callers hand the record straight on. Without
     * memory for the block the record is searched linearly. */
    ads_record *r = b->rec;
    ads_record__index(b->arena, r, b->n, b->names, b->exprs, b->hashes);
    return r;
}

const ads_record *ads_record__builder_finish_plain(ads_record_builder *b)
{
    ads_record *r = b->rec;
    r->n = b->n;
    r->names = b->names;
    r->exprs = b->exprs;
    r->hashes = b->hashes;
    r->slots = b->slots; /* the builder's index: 2 cap slots, each 0 or index + 1 */
    r->cap = b->cap ? 2 * b->cap : 0;
    r->block = NULL;
    r->block_len = 0;
    return r;
}

const ads_record *ads_record__with_index(ads_arena *a, const ads_str *names,
                                         const ads_expr *const *exprs, const uint32_t *hashes,
                                         size_t n, const uint32_t *slots, size_t cap)
{
    ads_record *r = ads_arena_alloc(a, sizeof *r);
    uint32_t *own = ads_arena_alloc(a, cap * sizeof *own);
    if (!r || !own)
        return NULL;
    memcpy(own, slots, cap * sizeof *own);
    *r = (ads_record){n, names, exprs, hashes, own, cap, NULL, 0};
    return r;
}

int ads_record_prepend(const ads_record **out, ads_arena *a, const ads_record *r,
                       const char *name, size_t len, const ads_expr *expr, ads_error *err)
{
    if (!out || !a || !r || !name || !expr)
        return ads_error_set(err, ADS_EINVAL, "record: NULL argument");
    if (len == 0)
        return ads_error_set(err, ADS_EINVAL, "record: empty attribute name");
    uint32_t h = ads_name_hash(name, len);
    long k = ads_record__find(r, name, len, h); /* r's own wins, placed first */
    size_t n = r->n + (k < 0), cap = 4, align = _Alignof(ads_expr);
    while (cap < n * 2)
        cap *= 2;
    /* one allocation: slots and hashes, then the name and expression arrays */
    size_t off = (cap + n) * sizeof(uint32_t);
    off = (off + align - 1) / align * align;
    ads_record *rec = ads_arena_alloc(a, sizeof *rec);
    char *block = ads_arena_alloc(a, off + n * (sizeof(ads_str) + sizeof(ads_expr *)));
    if (!rec || !block)
        return ads_error_set(err, ADS_ENOMEM, "record: out of memory");
    uint32_t *slots = (uint32_t *)block, *hs = slots + cap;
    ads_str *nm = (ads_str *)(block + off);
    const ads_expr **ex = (const ads_expr **)(nm + n);
    nm[0].p = name;
    nm[0].len = len;
    ex[0] = k < 0 ? expr : r->exprs[k];
    hs[0] = h;
    size_t j = 1;
    for (size_t i = 0; i < r->n; i++) {
        if ((long)i == k)
            continue;
        nm[j] = r->names[i];
        ex[j] = r->exprs[i];
        hs[j] = r->hashes[i];
        j++;
    }
    memset(slots, 0, cap * sizeof *slots);
    for (size_t i = 0; i < n; i++)
        index_put(slots, cap, hs[i], i);
    rec->n = n;
    rec->names = nm;
    rec->exprs = ex;
    rec->hashes = hs;
    rec->slots = slots;
    rec->cap = cap;
    rec->block = NULL; /* the cells stay where r has them */
    rec->block_len = 0;
    *out = rec;
    return 0;
}

const ads_expr *ads_expr__literal_in(ads_expr *e, const ads_value *v)
{
    memset(e, 0, sizeof *e);
    e->kind = N_LITERAL;
    e->u.lit = *v;
    return e;
}

int ads_expr_literal(const ads_expr **out, ads_arena *a, const ads_value *v, ads_error *err)
{
    ads_expr *e = ads_arena_alloc(a, sizeof *e);
    if (!e)
        return ads_error_set(err, ADS_ENOMEM, "expression: out of memory");
    *out = ads_expr__literal_in(e, v);
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
