/*
 * classad/expr_memo.c: remembering expressions that recur, record after
 * record. A load of HTCondor ads meets the same expressions over and over
 * (every job of a submission has the same Requirements, every slot of a
 * pool the same Start); HTCondor's own ClassAd cache keeps one copy of
 * each for the same reason. Parsing one and writing its text back costs
 * far more than finding it again:
 *
 *   - text -> tree (ads_expr__parse_memo): the folded tree of a text is
 *     kept in the memo's arena; a text seen again gets a copy of it in the
 *     caller's arena (each record owns its trees, so a record outlives the
 *     reader that made it). Only texts that stay expressions are kept: a
 *     constant parses about as fast as it would be found.
 *   - tree -> canonical text (ads_expr__unparse_memo): a tree is hashed by
 *     its structure and compared node by node with the remembered copy
 *     before the remembered text is used.
 *
 * Each memo is a small table indexed by hash, one entry per slot (a newer
 * expression replaces the one in its slot). Only trees of operators, names,
 * calls, lists and scalar literals of at most ADS_EXPR_MEMO_NODES nodes are
 * remembered (no records, no list, record or blob values, no placeholders),
 * and texts of at most ADS_EXPR_MEMO_TEXT_MAX bytes, so every walk here
 * recurses at most that many nodes deep. A memo holds at most about
 * ADS_EXPR_MEMO_BYTES: past that it forgets everything and starts again.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "classad/classad_int.h"
#include "classad/expr_memo.h"
#include "classad/formats.h"

typedef struct memo_entry {
    uint64_t hash;        /* 0: empty */
    const char *text;     /* the source text or the canonical text, in the arena */
    size_t len;
    const ads_expr *tree; /* a block in the arena (see make_block) */
    size_t size, nodes;   /* the block's bytes and nodes */
    /* the unparse memo: the entry found after this one the last time, the
     * guess tried first when this one is found again (a record's
     * expressions come in the same order in record after record) */
    struct memo_entry *next;
} memo_entry;

struct ads_expr_memo {
    ads_arena *arena;
    memo_entry slot[ADS_EXPR_MEMO_SLOTS];
    memo_entry *last; /* the unparse memo's entry found or kept last, or NULL */
};

int ads_expr_memo_new(ads_expr_memo **out)
{
    ads_expr_memo *m = calloc(1, sizeof *m);
    if (!m || !(m->arena = ads_arena_new())) {
        free(m);
        *out = NULL;
        return ADS_ENOMEM;
    }
    *out = m;
    return 0;
}

void ads_expr_memo_free(ads_expr_memo *m)
{
    if (!m)
        return;
    ads_arena_free(m->arena);
    free(m);
}

/* ---- a tree as one block ---- */

/*
 * A remembered tree is laid out in one block: its nodes first (the root at
 * the start), then the argument and item arrays of calls and lists, then
 * the bytes of its names and strings. Handing out a copy is then one
 * allocation, one memcpy and a pass over the nodes that moves each pointer
 * into the new block. The copy is evaluated as a tree (no flat program)
 * and starts with no lookup hints.
 */
typedef struct block_size {
    size_t nodes, ptrs, bytes;
} block_size;

typedef struct block_at {
    ads_expr *node;
    const ads_expr **ptr;
    char *byte;
} block_at;

/* May a literal of this value be copied and compared as plain bytes? */
static bool scalar_literal(const ads_value *v)
{
    return v->type != ADS_LIST && v->type != ADS_RECORD && v->type != ADS_BLOB;
}

/* The names and strings a node holds: at most one each. */
static inline __attribute__((always_inline)) ads_str *str_of(ads_expr *n)
{
    switch ((node_kind)n->kind) {
    case N_LITERAL:
        return n->u.lit.type == ADS_STRING ? &n->u.lit.u.s : NULL;
    case N_ATTR:
        return &n->u.attr.name;
    case N_SELECT:
        return &n->u.sel.name;
    case N_CALL:
        return &n->u.call.name;
    default:
        return NULL;
    }
}

/* The children of a call or a list (*n of them), of a select (its base),
 * or NULL for other nodes (whose children are u.ops.a, b and c). */
static inline __attribute__((always_inline)) const ads_expr *const *kids_of(const ads_expr *e,
                                                                           size_t *n)
{
    switch ((node_kind)e->kind) {
    case N_CALL:
        *n = e->u.call.n;
        return e->u.call.args;
    case N_LIST:
        *n = e->u.list.n;
        return e->u.list.items;
    case N_SELECT:
        *n = 1;
        return &e->u.sel.base;
    default:
        *n = 0;
        return NULL;
    }
}

/* Has e children in u.ops? */
static inline __attribute__((always_inline)) bool has_ops(const ads_expr *e)
{
    return e->kind != N_LITERAL && e->kind != N_ATTR && e->kind != N_SELECT &&
           e->kind != N_CALL && e->kind != N_LIST;
}

/* Add e's size to *z; false if the memo does not keep such a tree or it
 * has more than *budget nodes. */
static bool measure(const ads_expr *e, block_size *z, int *budget)
{
    if (--*budget < 0 || e->kind == N_RECORD || e->kind == N_PARAM ||
        (e->kind == N_LITERAL && !scalar_literal(&e->u.lit)))
        return false;
    z->nodes++;
    ads_str *str = str_of((ads_expr *)e);
    if (str)
        z->bytes += str->len;
    if (has_ops(e))
        return (!e->u.ops.a || measure(e->u.ops.a, z, budget)) &&
               (!e->u.ops.b || measure(e->u.ops.b, z, budget)) &&
               (!e->u.ops.c || measure(e->u.ops.c, z, budget));
    size_t n;
    const ads_expr *const *k = kids_of(e, &n);
    if (e->kind != N_SELECT)
        z->ptrs += n;
    for (size_t i = 0; i < n; i++)
        if (!measure(k[i], z, budget))
            return false;
    return true;
}

/* Copy e into the block at *at; the copy's address. */
static ads_expr *lay(const ads_expr *e, block_at *at)
{
    ads_expr *n = at->node++;
    memcpy(n, e, sizeof *n);
    ads_str *str = str_of(n);
    if (str && str->p) {
        memcpy(at->byte, str->p, str->len);
        str->p = at->byte;
        at->byte += str->len;
    }
    if (n->kind == N_ATTR)
        atomic_store_explicit(&n->u.attr.hint, 0, memory_order_relaxed);
    if (has_ops(e)) {
        n->u.ops.prog = NULL;
        n->u.ops.a = e->u.ops.a ? lay(e->u.ops.a, at) : NULL;
        n->u.ops.b = e->u.ops.b ? lay(e->u.ops.b, at) : NULL;
        n->u.ops.c = e->u.ops.c ? lay(e->u.ops.c, at) : NULL;
        return n;
    }
    if (n->kind == N_SELECT) {
        n->u.sel.base = lay(e->u.sel.base, at);
        return n;
    }
    size_t k;
    const ads_expr *const *kids = kids_of(e, &k);
    const ads_expr **to = at->ptr;
    at->ptr += k;
    if (e->kind == N_CALL)
        n->u.call.args = to;
    else if (e->kind == N_LIST)
        n->u.list.items = to;
    for (size_t i = 0; i < k; i++)
        to[i] = lay(kids[i], at);
    return n;
}

static size_t block_bytes(const block_size *z)
{
    return z->nodes * sizeof(ads_expr) + z->ptrs * sizeof(ads_expr *) + z->bytes;
}

/* e laid out as one block in arena a (*size bytes, *nodes nodes), or NULL
 * (not kept, or no memory). */
static ads_expr *make_block(ads_arena *a, const ads_expr *e, size_t *size, size_t *nodes)
{
    block_size z = {0, 0, 0};
    int budget = ADS_EXPR_MEMO_NODES;
    if (!measure(e, &z, &budget))
        return NULL;
    *nodes = z.nodes;
    ads_expr *b = ads_arena_alloc(a, *size = block_bytes(&z));
    if (!b)
        return NULL;
    block_at at = {b, (const ads_expr **)(b + z.nodes),
                   (char *)(b + z.nodes) + z.ptrs * sizeof(ads_expr *)};
    lay(e, &at);
    return b;
}

static void *moved(const void *p, uintptr_t from, uintptr_t to)
{
    return p ? (void *)((uintptr_t)p - from + to) : NULL;
}

/* A copy of the block b (size bytes, nodes nodes) in arena a, or NULL. */
static const ads_expr *copy_block(ads_arena *a, const ads_expr *b, size_t size, size_t nodes)
{
    ads_expr *c = ads_arena_alloc(a, size);
    if (!c)
        return NULL;
    memcpy(c, b, size);
    uintptr_t from = (uintptr_t)b, to = (uintptr_t)c;
    for (size_t i = 0; i < nodes; i++) {
        ads_expr *n = &c[i];
        ads_str *str = str_of(n);
        if (str)
            str->p = moved(str->p, from, to);
        if (has_ops(n)) {
            n->u.ops.a = moved(n->u.ops.a, from, to);
            n->u.ops.b = moved(n->u.ops.b, from, to);
            n->u.ops.c = moved(n->u.ops.c, from, to);
        } else if (n->kind == N_SELECT) {
            n->u.sel.base = moved(n->u.sel.base, from, to);
        } else if (n->kind == N_CALL || n->kind == N_LIST) {
            size_t k;
            const ads_expr **kids = moved(kids_of(n, &k), from, to);
            for (size_t j = 0; j < k; j++)
                kids[j] = moved(kids[j], from, to);
            if (n->kind == N_CALL)
                n->u.call.args = kids;
            else
                n->u.list.items = kids;
        }
    }
    return c;
}

/* ---- hashing and comparing trees ---- */

static inline uint64_t mix(uint64_t h, uint64_t x)
{
    h ^= x + UINT64_C(0x9e3779b97f4a7c15) + (h << 6) + (h >> 2);
    return h * UINT64_C(0xff51afd7ed558ccd);
}

static uint64_t bits_of(double d)
{
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return u;
}

static uint64_t hash_literal(const ads_value *v)
{
    switch (v->type) {
    case ADS_BOOLEAN:
        return v->u.b;
    case ADS_INTEGER:
        return (uint64_t)v->u.i;
    case ADS_REAL:
        return bits_of(v->u.r);
    case ADS_STRING:
        return XXH3_64bits(v->u.s.p, v->u.s.len);
    case ADS_ABSTIME:
        return mix(bits_of(v->u.abs.secs), (uint32_t)v->u.abs.offset);
    case ADS_RELTIME:
        return bits_of(v->u.rel);
    case ADS_IDENT:
        return mix(v->u.id.hi, v->u.id.lo);
    default:
        return 0;
    }
}

/* Fold e's structure into *h; false if the memo does not keep such a tree
 * (or it has more than *budget nodes). */
static bool hash_tree(const ads_expr *e, uint64_t *h, int *budget)
{
    if (--*budget < 0 || e->kind == N_RECORD || e->kind == N_PARAM ||
        (e->kind == N_LITERAL && !scalar_literal(&e->u.lit)))
        return false;
    uint64_t x = mix(*h, (uint64_t)e->kind | (uint64_t)e->op << 8 | (uint64_t)e->scope << 16 |
                             (uint64_t)e->quoted << 24);
    const ads_str *str = str_of((ads_expr *)e);
    if (e->kind == N_LITERAL)
        x = mix(x, (uint64_t)e->u.lit.type << 32 ^ hash_literal(&e->u.lit));
    else if (str)
        x = mix(x, XXH3_64bits(str->p, str->len));
    bool ok = true;
    if (has_ops(e)) {
        const ads_expr *ops[3] = {e->u.ops.a, e->u.ops.b, e->u.ops.c};
        for (int i = 0; i < 3 && ok; i++) {
            x = mix(x, ops[i] != NULL);
            ok = !ops[i] || hash_tree(ops[i], &x, budget);
        }
    } else {
        size_t n;
        const ads_expr *const *kids = kids_of(e, &n);
        x = mix(x, n);
        for (size_t i = 0; i < n && ok; i++)
            ok = hash_tree(kids[i], &x, budget);
    }
    *h = x;
    return ok;
}

static bool same_str(ads_str a, ads_str b)
{
    return a.len == b.len && (!a.len || !memcmp(a.p, b.p, a.len));
}

static bool same_literal(const ads_value *a, const ads_value *b)
{
    if (a->type != b->type)
        return false;
    switch (a->type) {
    case ADS_BOOLEAN:
        return a->u.b == b->u.b;
    case ADS_INTEGER:
        return a->u.i == b->u.i;
    case ADS_REAL:
        return bits_of(a->u.r) == bits_of(b->u.r);
    case ADS_STRING:
        return same_str(a->u.s, b->u.s);
    case ADS_ABSTIME:
        return bits_of(a->u.abs.secs) == bits_of(b->u.abs.secs) &&
               a->u.abs.offset == b->u.abs.offset;
    case ADS_RELTIME:
        return bits_of(a->u.rel) == bits_of(b->u.rel);
    case ADS_IDENT:
        return a->u.id.hi == b->u.id.hi && a->u.id.lo == b->u.id.lo;
    case ADS_UNDEFINED:
    case ADS_ERROR:
        return true;
    default:
        return false; /* never remembered */
    }
}

static bool same_tree(const ads_expr *m, const ads_expr *e);

static bool same_op(const ads_expr *m, const ads_expr *e)
{
    if (!m || !e)
        return m == e;
    return same_tree(m, e);
}

/* Is e, node for node, the remembered tree m? m is within the node budget,
 * so this recurses no deeper than it. */
static bool same_tree(const ads_expr *m, const ads_expr *e)
{
    if (m->kind != e->kind || m->op != e->op || m->scope != e->scope || m->quoted != e->quoted)
        return false;
    if (m->kind == N_LITERAL)
        return same_literal(&m->u.lit, &e->u.lit);
    const ads_str *sm = str_of((ads_expr *)m), *se = str_of((ads_expr *)e);
    if ((sm && !same_str(*sm, *se)) || (m->kind == N_CALL && m->u.call.fn != e->u.call.fn))
        return false;
    if (has_ops(m))
        return same_op(m->u.ops.a, e->u.ops.a) && same_op(m->u.ops.b, e->u.ops.b) &&
               same_op(m->u.ops.c, e->u.ops.c);
    size_t n, k;
    const ads_expr *const *mk = kids_of(m, &n), *const *ek = kids_of(e, &k);
    if (n != k)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!same_tree(mk[i], ek[i]))
            return false;
    return true;
}

/* ---- the table ---- */

/* A hash as the table keeps it: never 0 (an empty slot). The tests build
 * this file with ADS_EXPR_MEMO_TEST_HASH too, where every text and every
 * tree hashes alike, so that their answers rest on the comparisons that
 * follow a match of hashes. */
static inline uint64_t table_hash(uint64_t h)
{
#ifdef ADS_EXPR_MEMO_TEST_HASH
    (void)h;
    return 1;
#else
    return h | 1;
#endif
}

static memo_entry *slot_of(ads_expr_memo *m, uint64_t h)
{
    return &m->slot[(h >> 32) & (ADS_EXPR_MEMO_SLOTS - 1)];
}

/*
 * Remember (text, tree) under hash h: both copied into the memo's arena.
 * Best effort: a tree the memo does not keep, or no memory, leaves the
 * slot empty. A memo that grew past its bytes forgets everything first.
 */
static memo_entry *keep(ads_expr_memo *m, uint64_t h, const char *text, size_t len,
                        const ads_expr *e)
{
    if (ads_arena_used(m->arena) > ADS_EXPR_MEMO_BYTES) {
        ads_arena_reset(m->arena);
        memset(m->slot, 0, sizeof m->slot);
        m->last = NULL;
    }
    memo_entry *s = slot_of(m, h);
    s->hash = 0;
    size_t size, nodes;
    const ads_expr *tree = make_block(m->arena, e, &size, &nodes);
    char *t = ads_arena_alloc(m->arena, len ? len : 1);
    if (!tree || !t)
        return NULL;
    memcpy(t, text, len);
    *s = (memo_entry){h, t, len, tree, size, nodes, NULL};
    return s;
}

int ads_expr__parse_memo(ads_expr_memo *m, const ads_expr **out, ads_arena *a, const char *text,
                         size_t len, ads_error *err)
{
    int rc;
    const ads_expr *e;
    if (!m || len > ADS_EXPR_MEMO_TEXT_MAX) {
        if ((rc = ads_expr_parse(&e, a, text, len, err)))
            return rc;
        return ads_expr_fold(out, a, e, err);
    }
    uint64_t h = table_hash(XXH3_64bits(text, len));
    memo_entry *s = slot_of(m, h);
    if (s->hash == h && s->len == len && !memcmp(s->text, text, len)) {
        if (!(*out = copy_block(a, s->tree, s->size, s->nodes)))
            return ads_error_set(err, ADS_ENOMEM, "out of memory");
        return 0;
    }
    if ((rc = ads_expr_parse(&e, a, text, len, err)) || (rc = ads_expr_fold(out, a, e, err)))
        return rc;
    /* a constant parses about as fast as it is found: keep the slots for
     * what stays an expression */
    if ((*out)->kind != N_LITERAL)
        keep(m, h, text, len, *out);
    return 0;
}

/* s (or NULL) is the unparse memo's entry of this expression: the one the
 * last entry's guess should have been. */
static void found(ads_expr_memo *m, memo_entry *s)
{
    if (m->last && s)
        m->last->next = s;
    m->last = s;
}

void ads_expr__unparse_memo(ads_expr_memo *m, ads_buf *b, const ads_expr *e)
{
    if (!m) {
        ads_expr_unparse(b, e);
        return;
    }
    memo_entry *s = m->last ? m->last->next : NULL;
    if (s && s->hash && same_tree(s->tree, e)) { /* the guess, without hashing */
        ads_buf_add(b, s->text, s->len);
        m->last = s;
        return;
    }
    uint64_t h = 0;
    int budget = ADS_EXPR_MEMO_NODES;
    if (!hash_tree(e, &h, &budget)) {
        ads_expr_unparse(b, e);
        return;
    }
    h = table_hash(h);
    s = slot_of(m, h);
    if (s->hash == h && same_tree(s->tree, e)) {
        ads_buf_add(b, s->text, s->len);
        found(m, s);
        return;
    }
    size_t at = b->len;
    ads_expr_unparse(b, e);
    if (!b->failed && b->len - at <= ADS_EXPR_MEMO_TEXT_MAX)
        found(m, keep(m, h, b->p + at, b->len - at, e));
}
