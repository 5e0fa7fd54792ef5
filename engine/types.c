/*
 * engine/types.c: record types, their counters, and Attribute bookkeeping.
 *
 * Type information is read from Type records and cached per "generation":
 * the meta table holds a token that every transaction changing a Type
 * record replaces with a fresh random value. Information built under a token
 * describes exactly the committed state that token names, so transactions
 * that read the same token share one cache, and a transaction that changes
 * types moves to its own new token (nothing it builds can leak into another
 * transaction's view, even if it aborts). Generations are pinned while in
 * use and freed when unpinned and superseded.
 *
 * Attribute records are made the first time a type stores an attribute name.
 * Known names are kept in a set under a second token, which changes only
 * when Attribute records are purged; names a transaction adds join the set
 * when it commits. Storing a record then costs one hash look-up per
 * attribute, and a bulk load writes only what is new.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "engine/engine_int.h"

/* ---- a small string set (open addressing over 64-bit hashes) ---- */

typedef struct sset {
    uint64_t *hashes; /* 0: empty slot */
    char **keys;
    size_t *lens;
    size_t n, cap;
} sset;

static uint64_t shash(const char *k, size_t len)
{
    uint64_t h = XXH3_64bits(k, len);
    return h ? h : 1;
}

static bool sset_has(const sset *s, const char *k, size_t len, uint64_t h)
{
    if (!s->cap)
        return false;
    for (size_t i = h & (s->cap - 1);; i = (i + 1) & (s->cap - 1)) {
        if (!s->hashes[i])
            return false;
        if (s->hashes[i] == h && s->lens[i] == len && memcmp(s->keys[i], k, len) == 0)
            return true;
    }
}

static int sset_add(sset *s, const char *k, size_t len, uint64_t h)
{
    if (sset_has(s, k, len, h))
        return 0;
    if (2 * (s->n + 1) > s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 64;
        sset t = {calloc(cap, sizeof *t.hashes), calloc(cap, sizeof *t.keys),
                  calloc(cap, sizeof *t.lens), s->n, cap};
        if (!t.hashes || !t.keys || !t.lens) {
            free(t.hashes), free(t.keys), free(t.lens);
            return ADS_ENOMEM;
        }
        for (size_t i = 0; i < s->cap; i++) {
            if (!s->hashes[i])
                continue;
            size_t j = s->hashes[i] & (cap - 1);
            while (t.hashes[j])
                j = (j + 1) & (cap - 1);
            t.hashes[j] = s->hashes[i];
            t.keys[j] = s->keys[i];
            t.lens[j] = s->lens[i];
        }
        free(s->hashes), free(s->keys), free(s->lens);
        *s = t;
    }
    char *copy = malloc(len ? len : 1);
    if (!copy)
        return ADS_ENOMEM;
    memcpy(copy, k, len);
    size_t j = h & (s->cap - 1);
    while (s->hashes[j])
        j = (j + 1) & (s->cap - 1);
    s->hashes[j] = h;
    s->keys[j] = copy;
    s->lens[j] = len;
    s->n++;
    return 0;
}

static void sset_free(sset *s)
{
    for (size_t i = 0; i < s->cap; i++)
        if (s->hashes[i])
            free(s->keys[i]);
    free(s->hashes), free(s->keys), free(s->lens);
    memset(s, 0, sizeof *s);
}

/* ---- built-in types ---- */

static ads_str k_fortype[] = {{"ForType", 7}};
static ads_str k_attr[] = {{"ForType", 7}, {"ForName", 7}};
static ads_str k_seq[] = {{"Name", 4}};

static const ads_type builtins[3] = {
    {ADS_TYPEID_TYPE, "Type", "type", 1, k_fortype, false, false, true, ADS_ID_ORDERED, 0, false,
     {NULL, NULL, NULL, NULL}, false},
    {ADS_TYPEID_ATTRIBUTE, "Attribute", "attribute", 2, k_attr, false, false, true,
     ADS_ID_ORDERED, 0, false, {NULL, NULL, NULL, NULL}, false},
    {ADS_TYPEID_SEQUENCE, "Sequence", "sequence", 1, k_seq, false, false, true, ADS_ID_ORDERED,
     0, false, {NULL, NULL, NULL, NULL}, false},
};

const ads_type *ads_types__builtin(uint32_t id)
{
    return id >= 1 && id <= 3 ? &builtins[id - 1] : NULL;
}

/* ---- generations ---- */

struct type_gen {
    uint64_t token;
    int pins;
    ads_arena *arena;
    ads_type **slots; /* by folded name */
    size_t n, cap;
    ads_type builtin[3]; /* the built-in types with this store's hooks */
    type_gen *next;
};

static int load_token(ads_txn *txn, const char *key, uint64_t *out, ads_error *err)
{
    MDB_val v;
    int rc = ads_db__meta_get(txn, key, strlen(key), &v, err);
    if (rc < 0)
        return rc;
    *out = 0;
    if (rc == 1) {
        if (v.mv_size != 8)
            return ads_error_set(err, ADS_ECORRUPT, "store metadata '%s' is corrupt", key);
        memcpy(out, v.mv_data, 8);
    }
    return 0;
}

/* Pin the generation of txn's token (db->lock held). */
static type_gen *gen_pin(ads_db *db, uint64_t token)
{
    type_gen **pp = &db->gens, *g;
    int kept = 0;
    for (g = db->gens; g; g = g->next)
        if (g->token == token) {
            g->pins++;
            return g;
        }
    /* drop unpinned generations beyond the two most recent */
    while (*pp) {
        g = *pp;
        if (g->pins == 0 && ++kept > 2) {
            *pp = g->next;
            ads_arena_free(g->arena);
            free(g->slots);
            free(g);
        } else {
            pp = &g->next;
        }
    }
    g = calloc(1, sizeof *g);
    if (!g || !(g->arena = ads_arena_new())) {
        free(g);
        return NULL;
    }
    g->token = token;
    g->pins = 1;
    for (int i = 0; i < 3; i++) {
        g->builtin[i] = builtins[i];
        ads_hooks__attach(db, &g->builtin[i]);
    }
    g->next = db->gens;
    db->gens = g;
    return g;
}

void ads_types__unpin(ads_txn *txn)
{
    if (!txn->gen && !txn->nretired)
        return;
    pthread_mutex_lock(&txn->db->lock);
    if (txn->gen)
        txn->gen->pins--;
    for (size_t i = 0; i < txn->nretired; i++)
        txn->retired[i]->pins--;
    pthread_mutex_unlock(&txn->db->lock);
    txn->gen = NULL;
    free(txn->retired);
    txn->retired = NULL;
    txn->nretired = txn->capretired = 0;
}

/* Move txn to the generation of token, keeping the one it leaves pinned
 * until it ends (ads_types__unpin): a type it looked up before, which its
 * caller may still hold (a batch storing a Type record among others), is
 * not freed under it. */
static int gen_move(ads_txn *txn, uint64_t token, ads_error *err)
{
    if (txn->gen) {
        if (txn->nretired == txn->capretired) {
            size_t cap = txn->capretired ? 2 * txn->capretired : 4;
            type_gen **r = realloc(txn->retired, cap * sizeof *r);
            if (!r)
                return ads_error_set(err, ADS_ENOMEM, "out of memory");
            txn->retired = r;
            txn->capretired = cap;
        }
        txn->retired[txn->nretired++] = txn->gen;
        txn->gen = NULL;
    }
    txn->types_token = token;
    txn->types_loaded = true;
    return 0;
}

void ads_types__free_all(ads_db *db)
{
    while (db->gens) {
        type_gen *g = db->gens;
        db->gens = g->next;
        ads_arena_free(g->arena);
        free(g->slots);
        free(g);
    }
}

static int txn_gen(ads_txn *txn, ads_error *err)
{
    if (txn->gen)
        return 0;
    if (!txn->types_loaded) {
        int rc = load_token(txn, ADS_META_TYPES_TOKEN, &txn->types_token, err);
        if (rc)
            return rc;
        txn->types_loaded = true;
    }
    pthread_mutex_lock(&txn->db->lock);
    txn->gen = gen_pin(txn->db, txn->types_token);
    pthread_mutex_unlock(&txn->db->lock);
    return txn->gen ? 0 : ads_error_set(err, ADS_ENOMEM, "out of memory");
}

static ads_type *gen_find(type_gen *g, const char *folded, size_t len)
{
    if (!g->cap)
        return NULL;
    uint64_t h = XXH3_64bits(folded, len);
    for (size_t i = h & (g->cap - 1);; i = (i + 1) & (g->cap - 1)) {
        ads_type *t = g->slots[i];
        if (!t)
            return NULL;
        if (strlen(t->folded) == len && memcmp(t->folded, folded, len) == 0)
            return t;
    }
}

static int gen_add(type_gen *g, ads_type *t)
{
    if (2 * (g->n + 1) > g->cap) {
        size_t cap = g->cap ? 2 * g->cap : 16;
        ads_type **s = calloc(cap, sizeof *s);
        if (!s)
            return ADS_ENOMEM;
        for (size_t i = 0; i < g->cap; i++) {
            if (!g->slots[i])
                continue;
            uint64_t h = XXH3_64bits(g->slots[i]->folded, strlen(g->slots[i]->folded));
            size_t j = h & (cap - 1);
            while (s[j])
                j = (j + 1) & (cap - 1);
            s[j] = g->slots[i];
        }
        free(g->slots);
        g->slots = s;
        g->cap = cap;
    }
    uint64_t h = XXH3_64bits(t->folded, strlen(t->folded));
    size_t j = h & (g->cap - 1);
    while (g->slots[j])
        j = (j + 1) & (g->cap - 1);
    g->slots[j] = t;
    g->n++;
    return 0;
}

/* ---- reading Type records ---- */

static bool eq_fold(const char *a, size_t alen, const char *b)
{
    size_t blen = strlen(b);
    if (alen != blen)
        return false;
    for (size_t i = 0; i < alen; i++) {
        unsigned char x = (unsigned char)a[i], y = (unsigned char)b[i];
        if ((x >= 'A' && x <= 'Z' ? x | 0x20 : x) != y)
            return false;
    }
    return true;
}

/* What a Type record declares. */
typedef struct type_decl {
    ads_str name;
    size_t nkeys;
    ads_str *keys;
    bool autogen;
    ads_id_kind method;
    double retention;
    bool retention_zero; /* HistoryRetention = `0s`: refused when declared, read as none */
    bool keep_unchanged;
    index_def *indexes; /* from the index registry (engine/index.c) */
    size_t nindexes;
} type_decl;

/* An attribute of a row as a value (expressions evaluated in the row). */
static int row_attr(ads_value *out, ads_msgpack_view *mv, const char *name, ads_arena *a,
                    ads_error *err)
{
    const ads_expr *e = NULL;
    int rc = ads_msgpack_view_lookup(out, &e, mv, name, strlen(name), err);
    if (rc < 0)
        return rc;
    if (rc == 0) {
        *out = ads_undefined();
        return 0;
    }
    if (e) {
        ads_view view = ads_msgpack_view_get(mv, NULL);
        if (ads_expr_eval(out, e, &view, a))
            return ads_error_set(err, ADS_ENOMEM, "out of memory");
    }
    return 0;
}

static bool valid_type_name(ads_str s)
{
    if (s.len == 0 || s.len > ADS_MAX_NAME_LEN)
        return false;
    for (size_t i = 0; i < s.len; i++) {
        unsigned char c = (unsigned char)s.p[i];
        bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_' ||
                  (i > 0 && ((c >= '0' && c <= '9') || c == '.' || c == '-'));
        if (!ok)
            return false;
    }
    return s.p[s.len - 1] != '.';
}

static bool valid_attr_name(ads_str s)
{
    if (s.len == 0 || s.len > ADS_MAX_NAME_LEN)
        return false;
    for (size_t i = 0; i < s.len; i++)
        if (s.p[i] == 0)
            return false;
    return true;
}

/* Read and check a Type record's declaration from its row data. */
static int parse_decl(type_decl *d, ads_txn *txn, const unsigned char *data, size_t len,
                      ads_arena *a, ads_error *err)
{
    ads_msgpack_view mv;
    ads_value v;
    int rc = ads_msgpack__view_open(&mv, data, len, ads_txn__names(txn), a, err);
    if (rc)
        return rc;
    memset(d, 0, sizeof *d);
    if ((rc = row_attr(&v, &mv, "ForType", a, err)))
        return rc;
    if (v.type != ADS_STRING)
        return ads_error_set(err, ADS_EINVAL, "a Type record needs ForType, a string (it has %s)",
                             ads_vtype_name(v.type));
    if (!valid_type_name(v.u.s))
        return ads_error_set(err, ADS_EINVAL,
                             "ForType \"%.*s\" is not a type name (letters, digits, _, - and "
                             "dots, starting with a letter or _, at most 200 bytes)",
                             (int)(v.u.s.len > 60 ? 60 : v.u.s.len), v.u.s.p);
    if (ads_string_copy(&v, a, v.u.s.p, v.u.s.len))
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    d->name = v.u.s;
    if ((rc = row_attr(&v, &mv, "KeyAttributes", a, err)))
        return rc;
    if (v.type == ADS_LIST) {
        d->nkeys = v.u.list.n;
        d->keys = ads_arena_alloc(a, (d->nkeys ? d->nkeys : 1) * sizeof *d->keys);
        if (!d->keys)
            return ads_error_set(err, ADS_ENOMEM, "out of memory");
        for (size_t i = 0; i < d->nkeys; i++) {
            const ads_value *k = &v.u.list.items[i];
            if (k->type != ADS_STRING || !valid_attr_name(k->u.s))
                return ads_error_set(err, ADS_EINVAL,
                                     "type %.*s: KeyAttributes must be a list of attribute names "
                                     "(item %zu is not)",
                                     (int)d->name.len, d->name.p, i + 1);
            if (ads_row__timeline_attr(k->u.s.p, k->u.s.len) ||
                (k->u.s.len >= 2 && k->u.s.p[0] == '_' && k->u.s.p[1] == '_'))
                return ads_error_set(err, ADS_EINVAL,
                                     "type %.*s: %.*s cannot be a key attribute", (int)d->name.len,
                                     d->name.p, (int)k->u.s.len, k->u.s.p);
            for (size_t j = 0; j < i; j++)
                if (ads_row__name_cmp((const unsigned char *)d->keys[j].p, d->keys[j].len,
                                      (const unsigned char *)k->u.s.p, k->u.s.len) == 0)
                    return ads_error_set(err, ADS_EINVAL,
                                         "type %.*s: key attribute %.*s is listed twice",
                                         (int)d->name.len, d->name.p, (int)k->u.s.len, k->u.s.p);
            ads_value c;
            if (ads_string_copy(&c, a, k->u.s.p, k->u.s.len))
                return ads_error_set(err, ADS_ENOMEM, "out of memory");
            d->keys[i] = c.u.s;
        }
    } else if (v.type != ADS_UNDEFINED) {
        return ads_error_set(err, ADS_EINVAL,
                             "type %.*s: KeyAttributes must be a list of attribute names, not %s",
                             (int)d->name.len, d->name.p, ads_vtype_name(v.type));
    }
    if ((rc = row_attr(&v, &mv, "AutoGenerateKey", a, err)))
        return rc;
    if (v.type == ADS_BOOLEAN)
        d->autogen = v.u.b;
    else if (v.type != ADS_UNDEFINED)
        return ads_error_set(err, ADS_EINVAL, "type %.*s: AutoGenerateKey must be a boolean",
                             (int)d->name.len, d->name.p);
    if (d->autogen && d->nkeys > 1)
        return ads_error_set(err, ADS_EINVAL,
                             "type %.*s: AutoGenerateKey needs a single key attribute (it has %zu)",
                             (int)d->name.len, d->name.p, d->nkeys);
    d->method = d->nkeys == 0 && !d->autogen ? ADS_ID_INCREMENT : ADS_ID_ORDERED;
    if ((rc = row_attr(&v, &mv, "AutoGenerateKeyMethod", a, err)))
        return rc;
    if (v.type == ADS_STRING) {
        if (eq_fold(v.u.s.p, v.u.s.len, "ordered"))
            d->method = ADS_ID_ORDERED;
        else if (eq_fold(v.u.s.p, v.u.s.len, "random"))
            d->method = ADS_ID_RANDOM;
        else if (eq_fold(v.u.s.p, v.u.s.len, "increment"))
            d->method = ADS_ID_INCREMENT;
        else
            return ads_error_set(err, ADS_EINVAL,
                                 "type %.*s: AutoGenerateKeyMethod \"%.*s\" is not ordered, "
                                 "random or increment",
                                 (int)d->name.len, d->name.p,
                                 (int)(v.u.s.len > 40 ? 40 : v.u.s.len), v.u.s.p);
    } else if (v.type != ADS_UNDEFINED) {
        return ads_error_set(err, ADS_EINVAL, "type %.*s: AutoGenerateKeyMethod must be a string",
                             (int)d->name.len, d->name.p);
    }
    if ((rc = row_attr(&v, &mv, "HistoryRetention", a, err)))
        return rc;
    d->retention_zero = v.type == ADS_RELTIME && v.u.rel == 0;
    if (v.type == ADS_RELTIME && v.u.rel >= 0)
        d->retention = v.u.rel;
    else if (v.type != ADS_UNDEFINED)
        return ads_error_set(err, ADS_EINVAL,
                             "type %.*s: HistoryRetention must be a positive RelTime (leave it "
                             "out to keep all history)",
                             (int)d->name.len, d->name.p);
    if ((rc = row_attr(&v, &mv, "KeepUnchangedRows", a, err)))
        return rc;
    if (v.type == ADS_BOOLEAN)
        d->keep_unchanged = v.u.b;
    else if (v.type != ADS_UNDEFINED)
        return ads_error_set(err, ADS_EINVAL, "type %.*s: KeepUnchangedRows must be a boolean",
                             (int)d->name.len, d->name.p);
    return 0;
}

static ads_type *make_type(type_gen *g, uint32_t id, const type_decl *d, ads_db *db)
{
    ads_arena *a = g->arena;
    ads_type *t = ads_arena_alloc(a, sizeof *t);
    if (!t)
        return NULL;
    memset(t, 0, sizeof *t);
    t->id = id;
    t->name = ads_arena_strndup(a, d->name.p, d->name.len);
    t->folded = ads_arena_strndup(a, d->name.p, d->name.len);
    if (!t->name || !t->folded)
        return NULL;
    for (char *p = t->folded; *p; p++)
        if (*p >= 'A' && *p <= 'Z')
            *p = (char)(*p | 0x20);
    t->keyless = d->nkeys == 0;
    t->nkeys = t->keyless ? 1 : d->nkeys;
    t->keys = ads_arena_alloc(a, t->nkeys * sizeof *t->keys);
    if (!t->keys)
        return NULL;
    if (t->keyless) {
        t->keys[0].p = "Id";
        t->keys[0].len = 2;
    } else {
        for (size_t i = 0; i < d->nkeys; i++) {
            char *k = ads_arena_strndup(a, d->keys[i].p, d->keys[i].len);
            if (!k)
                return NULL;
            t->keys[i].p = k;
            t->keys[i].len = d->keys[i].len;
        }
    }
    t->autogen = t->keyless || d->autogen;
    t->method = d->method;
    t->retention = d->retention;
    t->keep_unchanged = d->keep_unchanged;
    if (d->nindexes) {
        t->indexes = ads_arena_alloc(a, d->nindexes * sizeof *t->indexes);
        if (!t->indexes)
            return NULL;
        for (size_t i = 0; i < d->nindexes; i++) {
            t->indexes[i].id = d->indexes[i].id;
            if (ads_index__def(&t->indexes[i], d->indexes[i].reg, d->indexes[i].reglen, a,
                               NULL))
                return NULL;
        }
        t->nindexes = d->nindexes;
    }
    ads_hooks__attach(db, t);
    return t;
}

/* The Type record's key for a folded name: be32(1) ++ string. */
static int type_record_key(ads_buf *b, const char *folded, size_t len, ads_error *err)
{
    ads_buf_clear(b);
    ads_key__typeid(b, ADS_TYPEID_TYPE);
    ads_value v = ads_string(folded, len);
    return ads_key__value(b, &v, "ForType", err);
}

static int typeid_of(ads_txn *txn, const char *folded, size_t len, uint32_t *id, ads_error *err)
{
    char key[256];
    int n = snprintf(key, sizeof key, "%s%.*s", ADS_META_TYPEID_PREFIX, (int)len, folded);
    MDB_val v;
    int rc = ads_db__meta_get(txn, key, (size_t)n, &v, err);
    if (rc <= 0)
        return rc;
    if (v.mv_size != 4)
        return ads_error_set(err, ADS_ECORRUPT, "store metadata '%s' is corrupt", key);
    *id = ads_key__get_typeid(v.mv_data);
    return 1;
}

int ads_types__by_name(const ads_type **out, ads_txn *txn, const char *name, size_t len,
                       ads_error *err)
{
    int rc;
    if ((rc = txn_gen(txn, err)))
        return rc;
    char folded[256];
    if (len == 0 || len > ADS_MAX_NAME_LEN)
        return ads_error_set(err, ADS_ENOTFOUND, "no type named \"%.*s\"",
                             (int)(len > 60 ? 60 : len), name);
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)name[i];
        folded[i] = (char)((c >= 'A' && c <= 'Z') ? c | 0x20 : c);
    }
    folded[len] = 0;
    type_gen *g = txn->gen;
    for (int i = 0; i < 3; i++)
        if (strcmp(folded, builtins[i].folded) == 0) {
            *out = &g->builtin[i];
            return 0;
        }
    pthread_mutex_lock(&txn->db->lock);
    ads_type *t = gen_find(g, folded, len);
    pthread_mutex_unlock(&txn->db->lock);
    if (t) {
        *out = t;
        return 0;
    }
    /* read the Type record */
    ads_buf_clear(&txn->kbuf);
    if ((rc = type_record_key(&txn->kbuf, folded, len, err)))
        return rc;
    unsigned char stored[ADS_KEY_INLINE_MAX];
    size_t slen;
    MDB_val val;
    rc = ads_store__find(txn, (const unsigned char *)txn->kbuf.p, txn->kbuf.len, stored, &slen,
                         &val, err);
    if (rc < 0)
        return rc;
    row_env env;
    bool found = rc == 1;
    if (found &&
        (rc = ads_row__parse(&env, stored, slen, val.mv_data, val.mv_size, "Type record", err)))
        return rc;
    if (!found || (env.flags & ROW_DELETED))
        return ads_error_set(err, ADS_ENOTFOUND, "no type named %.*s (store a Type record first)",
                             (int)len, name);
    uint32_t id = 0;
    if ((rc = typeid_of(txn, folded, len, &id, err)) < 0)
        return rc;
    if (rc == 0)
        return ads_error_set(err, ADS_ECORRUPT, "type %.*s has no type id", (int)len, name);
    ads_arena *tmp = ads_arena_new();
    if (!tmp)
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    type_decl d;
    if ((rc = parse_decl(&d, txn, env.data, env.len, tmp, err)) ||
        (rc = ads_index__load(&d.indexes, &d.nindexes, txn, id, tmp, err))) {
        ads_arena_free(tmp);
        return rc;
    }
    pthread_mutex_lock(&txn->db->lock);
    t = gen_find(g, folded, len);
    if (!t) {
        t = make_type(g, id, &d, txn->db);
        if (t && gen_add(g, t))
            t = NULL;
    }
    pthread_mutex_unlock(&txn->db->lock);
    ads_arena_free(tmp);
    if (!t)
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    *out = t;
    return 0;
}

int ads_types__by_id(const ads_type **out, ads_txn *txn, uint32_t id, ads_error *err)
{
    int rc;
    if ((rc = txn_gen(txn, err)))
        return rc;
    if (id >= 1 && id <= 3) {
        *out = &txn->gen->builtin[id - 1];
        return 0;
    }
    char key[32];
    size_t n = strlen(ADS_META_TYPENAME_PREFIX);
    memcpy(key, ADS_META_TYPENAME_PREFIX, n);
    unsigned char be[4] = {(unsigned char)(id >> 24), (unsigned char)(id >> 16),
                           (unsigned char)(id >> 8), (unsigned char)id};
    memcpy(key + n, be, 4);
    MDB_val v;
    rc = ads_db__meta_get(txn, key, n + 4, &v, err);
    if (rc < 0)
        return rc;
    if (rc == 0)
        return ads_error_set(err, ADS_ENOTFOUND, "no type with id %u", (unsigned)id);
    char name[256];
    if (v.mv_size == 0 || v.mv_size > ADS_MAX_NAME_LEN)
        return ads_error_set(err, ADS_ECORRUPT, "the name of type id %u is corrupt", (unsigned)id);
    memcpy(name, v.mv_data, v.mv_size);
    return ads_types__by_name(out, txn, name, v.mv_size, err);
}

int ads_txn_type(const ads_type **out, ads_txn *txn, const char *name, size_t len,
                 ads_error *err)
{
    if (!out || !txn || !name)
        return ads_error_set(err, ADS_EINVAL, "NULL argument");
    return ads_types__by_name(out, txn, name, len, err);
}

/* ---- declaring ---- */

static int new_token(ads_txn *txn, const char *key, uint64_t *out, ads_error *err)
{
    ads_id r;
    int rc = ads_uuid_new(&r, err);
    if (rc)
        return rc;
    *out = (r.hi ^ r.lo) | 1;
    return ads_db__meta_put(txn, key, strlen(key), out, 8, err);
}

int ads_types__declare(ads_txn *txn, const unsigned char *data, size_t len, bool deleted,
                       ads_error *err)
{
    ads_arena *tmp = ads_arena_new();
    type_decl d;
    int rc;
    if (!tmp)
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    if ((rc = parse_decl(&d, txn, data, len, tmp, err)))
        goto cleanup;
    if (d.retention_zero) {
        /* (a store written before this check may hold one: it loads as none) */
        rc = ads_error_set(err, ADS_EINVAL,
                           "type %.*s: HistoryRetention must be a positive RelTime (leave it out "
                           "to keep all history)",
                           (int)d.name.len, d.name.p);
        goto cleanup;
    }
    char *folded = ads_db__fold(txn, d.name.p, d.name.len);
    if (!folded) {
        rc = ads_error_set(err, ADS_ENOMEM, "out of memory");
        goto cleanup;
    }
    for (int i = 0; i < 3; i++)
        if (strcmp(folded, builtins[i].folded) == 0) {
            rc = ads_error_set(err, ADS_EINVAL, "%s is a built-in type and cannot be declared",
                               builtins[i].name);
            goto cleanup;
        }
    /* the type as it is now, if it exists */
    const ads_type *cur = NULL;
    ads_error quiet;
    if (ads_types__by_name(&cur, txn, d.name.p, d.name.len, &quiet))
        cur = NULL;
    uint32_t id = 0;
    if ((rc = typeid_of(txn, folded, d.name.len, &id, err)) < 0)
        goto cleanup;
    ads_type_counts counts = {0, 0, 0};
    if (rc == 1) {
        const ads_type probe = {.id = id};
        if ((rc = ads_txn_type_counts(&counts, txn, &probe, err)))
            goto cleanup;
    }
    if (counts.records > 0) {
        if (deleted) {
            rc = ads_error_set(err, ADS_EEXIST,
                               "type %s still holds %llu records: purge them before deleting its "
                               "Type record",
                               folded, (unsigned long long)counts.records);
            goto cleanup;
        }
        bool same = cur && cur->keyless == (d.nkeys == 0) &&
                    (cur->keyless || cur->nkeys == d.nkeys);
        for (size_t i = 0; same && !cur->keyless && i < d.nkeys; i++)
            same = ads_row__name_cmp((const unsigned char *)cur->keys[i].p, cur->keys[i].len,
                                     (const unsigned char *)d.keys[i].p, d.keys[i].len) == 0;
        if (cur && !same) {
            rc = ads_error_set(err, ADS_EEXIST,
                               "type %s holds %llu records: its KeyAttributes cannot change",
                               cur->name, (unsigned long long)counts.records);
            goto cleanup;
        }
    }
    if (id == 0) {
        /* a new type: take the next id, record both directions */
        MDB_val v;
        uint32_t next = ADS_TYPEID_FIRST;
        rc = ads_db__meta_get(txn, ADS_META_TYPEID_NEXT, strlen(ADS_META_TYPEID_NEXT), &v, err);
        if (rc < 0)
            goto cleanup;
        if (rc == 1) {
            if (v.mv_size != 4) {
                rc = ads_error_set(err, ADS_ECORRUPT, "store metadata 'typeid.next' is corrupt");
                goto cleanup;
            }
            next = ads_key__get_typeid(v.mv_data);
        }
        if (next == UINT32_MAX) {
            rc = ads_error_set(err, ADS_ELIMIT, "no more type ids");
            goto cleanup;
        }
        id = next;
        unsigned char be[4] = {(unsigned char)(id >> 24), (unsigned char)(id >> 16),
                               (unsigned char)(id >> 8), (unsigned char)id};
        unsigned char nb[4] = {(unsigned char)((id + 1) >> 24), (unsigned char)((id + 1) >> 16),
                               (unsigned char)((id + 1) >> 8), (unsigned char)(id + 1)};
        char key[256];
        int n = snprintf(key, sizeof key, "%s%s", ADS_META_TYPEID_PREFIX, folded);
        if ((rc = ads_db__meta_put(txn, key, (size_t)n, be, 4, err)))
            goto cleanup;
        n = (int)strlen(ADS_META_TYPENAME_PREFIX);
        memcpy(key, ADS_META_TYPENAME_PREFIX, (size_t)n);
        memcpy(key + n, be, 4);
        if ((rc = ads_db__meta_put(txn, key, (size_t)n + 4, folded, d.name.len, err)) ||
            (rc = ads_db__meta_put(txn, ADS_META_TYPEID_NEXT, strlen(ADS_META_TYPEID_NEXT), nb, 4,
                                   err)))
            goto cleanup;
    }
    /* move to a fresh generation */
    uint64_t token;
    if ((rc = new_token(txn, ADS_META_TYPES_TOKEN, &token, err)) ||
        (rc = gen_move(txn, token, err)))
        goto cleanup;
    rc = 0;
cleanup:
    ads_arena_free(tmp);
    return rc;
}

int ads_types__changed(ads_txn *txn, ads_error *err)
{
    uint64_t token;
    int rc = new_token(txn, ADS_META_TYPES_TOKEN, &token, err);
    return rc ? rc : gen_move(txn, token, err);
}

int ads_types__may_remove(ads_txn *txn, const unsigned char *data, size_t len, ads_error *err)
{
    ads_arena *tmp = ads_arena_new();
    type_decl d;
    int rc;
    if (!tmp)
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    if (parse_decl(&d, txn, data, len, tmp, NULL) == 0) {
        char *folded = ads_db__fold(txn, d.name.p, d.name.len);
        uint32_t id;
        if (!folded)
            rc = ads_error_set(err, ADS_ENOMEM, "out of memory");
        else if ((rc = typeid_of(txn, folded, d.name.len, &id, err)) == 1) {
            const ads_type probe = {.id = id};
            ads_type_counts c;
            rc = ads_txn_type_counts(&c, txn, &probe, err);
            if (!rc && c.records > 0)
                rc = ads_error_set(err, ADS_EEXIST,
                                   "type %s still holds %llu records: purge them before its Type "
                                   "record",
                                   folded, (unsigned long long)c.records);
        }
    } else {
        rc = 0; /* a Type record that does not parse declares nothing */
    }
    if (rc == 0) {
        uint64_t token;
        rc = new_token(txn, ADS_META_TYPES_TOKEN, &token, err);
        if (!rc)
            rc = gen_move(txn, token, err);
    }
    ads_arena_free(tmp);
    return rc < 0 ? rc : 0;
}

/* ---- counters ---- */

static void count_key(char *key, size_t *n, uint32_t id)
{
    size_t p = strlen(ADS_META_COUNT_PREFIX);
    memcpy(key, ADS_META_COUNT_PREFIX, p);
    key[p] = (char)(id >> 24);
    key[p + 1] = (char)(id >> 16);
    key[p + 2] = (char)(id >> 8);
    key[p + 3] = (char)id;
    *n = p + 4;
}

static int read_counts(ads_txn *txn, uint32_t id, ads_type_counts *c, ads_error *err)
{
    char key[32];
    size_t n;
    count_key(key, &n, id);
    MDB_val v;
    memset(c, 0, sizeof *c);
    int rc = ads_db__meta_get(txn, key, n, &v, err);
    if (rc <= 0)
        return rc;
    if (v.mv_size != 24)
        return ads_error_set(err, ADS_ECORRUPT, "the record counts of type id %u are corrupt",
                             (unsigned)id);
    memcpy(&c->records, (const char *)v.mv_data, 8);
    memcpy(&c->deleted, (const char *)v.mv_data + 8, 8);
    memcpy(&c->history, (const char *)v.mv_data + 16, 8);
    return 0;
}

int ads_txn_type_counts(ads_type_counts *out, ads_txn *txn, const ads_type *t, ads_error *err)
{
    int rc = read_counts(txn, t->id, out, err);
    if (rc)
        return rc;
    for (size_t i = 0; i < txn->ncounts; i++)
        if (txn->counts[i].id == t->id) {
            out->records += (uint64_t)txn->counts[i].records;
            out->deleted += (uint64_t)txn->counts[i].deleted;
            out->history += (uint64_t)txn->counts[i].history;
        }
    return 0;
}

int ads_types__count(ads_txn *txn, uint32_t id, int64_t records, int64_t deleted,
                     int64_t history, ads_error *err)
{
    count_delta *d = NULL;
    for (size_t i = 0; i < txn->ncounts; i++)
        if (txn->counts[i].id == id) {
            d = &txn->counts[i];
            break;
        }
    if (!d) {
        if (txn->ncounts == txn->capcounts) {
            size_t cap = txn->capcounts ? 2 * txn->capcounts : 4;
            count_delta *more = realloc(txn->counts, cap * sizeof *more);
            if (!more)
                return ads_error_set(err, ADS_ENOMEM, "out of memory");
            txn->counts = more;
            txn->capcounts = cap;
        }
        d = &txn->counts[txn->ncounts++];
        memset(d, 0, sizeof *d);
        d->id = id;
    }
    d->records += records;
    d->deleted += deleted;
    d->history += history;
    return 0;
}

int ads_types__flush_counts(ads_txn *txn, ads_error *err)
{
    for (size_t i = 0; i < txn->ncounts; i++) {
        count_delta *d = &txn->counts[i];
        if (!d->records && !d->deleted && !d->history)
            continue;
        ads_type_counts c;
        int rc = read_counts(txn, d->id, &c, err);
        if (rc)
            return rc;
        c.records += (uint64_t)d->records;
        c.deleted += (uint64_t)d->deleted;
        c.history += (uint64_t)d->history;
        char key[32];
        size_t n;
        count_key(key, &n, d->id);
        unsigned char b[24];
        memcpy(b, &c.records, 8);
        memcpy(b + 8, &c.deleted, 8);
        memcpy(b + 16, &c.history, 8);
        if (c.records == 0 && c.history == 0)
            rc = ads_db__del(txn, txn->db->meta, key, n, err);
        else
            rc = ads_db__meta_put(txn, key, n, b, 24, err);
        if (rc)
            return rc;
        d->records = d->deleted = d->history = 0;
    }
    return 0;
}

int ads_txn_each_type(ads_txn *txn, ads_type_fn fn, void *ctx, ads_error *err)
{
    int rc;
    if ((rc = txn_gen(txn, err)))
        return rc;
    for (int i = 0; i < 3; i++)
        if ((rc = fn(ctx, &txn->gen->builtin[i], err)))
            return rc;
    MDB_cursor *c;
    if ((rc = mdb_cursor_open(txn->txn, txn->db->meta, &c)))
        return ads_db__lmdb(txn, err, rc, "listing types");
    size_t plen = strlen(ADS_META_TYPEID_PREFIX);
    MDB_val k = {plen, (void *)ADS_META_TYPEID_PREFIX}, v;
    int mrc = mdb_cursor_get(c, &k, &v, MDB_SET_RANGE);
    char name[256];
    while (mrc == 0 && k.mv_size > plen && memcmp(k.mv_data, ADS_META_TYPEID_PREFIX, plen) == 0) {
        size_t n = k.mv_size - plen;
        if (n > ADS_MAX_NAME_LEN)
            break;
        memcpy(name, (const char *)k.mv_data + plen, n);
        const ads_type *t;
        ads_error quiet;
        /* a type whose Type record was deleted or purged is not listed */
        if (ads_types__by_name(&t, txn, name, n, &quiet) == 0) {
            /* by_name may have read other keys: reposition the cursor */
            if ((rc = fn(ctx, t, err))) {
                mdb_cursor_close(c);
                return rc;
            }
        }
        MDB_val again = {plen + n, NULL};
        char buf[300];
        memcpy(buf, ADS_META_TYPEID_PREFIX, plen);
        memcpy(buf + plen, name, n);
        again.mv_data = buf;
        mrc = mdb_cursor_get(c, &again, &v, MDB_SET_RANGE);
        if (mrc == 0)
            mrc = mdb_cursor_get(c, &k, &v, MDB_NEXT);
    }
    mdb_cursor_close(c);
    if (mrc && mrc != MDB_NOTFOUND)
        return ads_db__lmdb(txn, err, mrc, "listing types");
    return 0;
}

/* ---- type accessors ---- */

const char *ads_type_name(const ads_type *t)
{
    return t->name;
}

size_t ads_type_key_count(const ads_type *t)
{
    return t->nkeys;
}

ads_str ads_type_key(const ads_type *t, size_t i)
{
    return i < t->nkeys ? t->keys[i] : (ads_str){"", 0};
}

bool ads_type_keyless(const ads_type *t)
{
    return t->keyless;
}

bool ads_type_builtin(const ads_type *t)
{
    return t->builtin;
}

bool ads_type_autogen(const ads_type *t)
{
    return t->autogen;
}

ads_id_kind ads_type_method(const ads_type *t)
{
    return t->method;
}

double ads_type_retention(const ads_type *t)
{
    return t->retention;
}

bool ads_type_keep_unchanged(const ads_type *t)
{
    return t->keep_unchanged;
}

/* ---- Attribute bookkeeping ---- */

struct attr_set {
    uint64_t token;
    sset names; /* be32(type id) ++ folded name */
    sset sigs;  /* be32(type id) ++ signature of a whole set of names, all known */
};

/* At most this many name-set signatures are remembered per store. */
#define SIGS_MAX 4096

/* A signature of the row's names as written (in stored order): rows of one
 * shape share it, and one look-up then stands for every name. */
static uint64_t names_signature(const ads_msgpack_view *mv)
{
    uint64_t h = ads_attrs__sig_start(mv->n);
    for (size_t i = 0; i < mv->n; i++) {
        ads_str nm;
        if (ads_msgpack_view_name(&nm, mv, i, NULL))
            return 0;
        h = ads_attrs__sig_add(h, nm.p, nm.len);
    }
    return ads_attrs__sig_end(h);
}

static int attrs_token(ads_txn *txn, ads_error *err)
{
    if (txn->attrs_loaded)
        return 0;
    int rc = load_token(txn, ADS_META_ATTRS_TOKEN, &txn->attrs_token, err);
    if (!rc)
        txn->attrs_loaded = true;
    return rc;
}

/* The names this transaction handled (made or found Attribute records for),
 * as be32(type id) ++ folded name: looked up for every later record of the
 * transaction, and published to the store's set at commit. */
static sset *txn_seen(ads_txn *txn)
{
    if (!txn->attrs_seen)
        txn->attrs_seen = calloc(1, sizeof(sset));
    return txn->attrs_seen;
}

void ads_attrs__txn_free(ads_txn *txn)
{
    if (txn->attrs_seen) {
        sset_free(txn->attrs_seen);
        free(txn->attrs_seen);
        txn->attrs_seen = NULL;
    }
    if (txn->sigs_seen) {
        sset_free(txn->sigs_seen);
        free(txn->sigs_seen);
        txn->sigs_seen = NULL;
    }
}

/* Store the Attribute record for name of type t unless one exists. */
static int ensure_attribute(ads_txn *txn, const ads_type *t, const char *name, size_t len,
                            ads_error *err)
{
    const ads_type *attr = ads_types__builtin(ADS_TYPEID_ATTRIBUTE);
    ads_arena *a = ads_arena_new();
    if (!a)
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    ads_value keys[2] = {ads_string(t->name, strlen(t->name)), ads_string(name, len)};
    ads_row row;
    int rc = ads_txn_get(txn, &row, attr, keys, 2, a, err);
    if (rc == 0) {
        ads_record_builder *b;
        ads_value adtype = ads_string("Attribute", 9);
        if ((rc = ads_record_builder_new(&b, a, err)) ||
            (rc = ads_record_builder_add_value(b, "AdType", 6, &adtype, err)) ||
            (rc = ads_record_builder_add_value(b, "ForType", 7, &keys[0], err)) ||
            (rc = ads_record_builder_add_value(b, "ForName", 7, &keys[1], err)))
            goto cleanup;
        rc = ads_txn_store(txn, ads_record_builder_finish(b), NULL, err);
    } else if (rc == 1) {
        rc = 0;
    }
cleanup:
    ads_arena_free(a);
    return rc;
}

int ads_attrs__note(ads_txn *txn, const ads_type *t, const unsigned char *data, size_t len,
                    uint64_t sig, ads_error *err)
{
    if (t->builtin)
        return 0;
    int rc = attrs_token(txn, err);
    if (rc)
        return rc;
    /* the whole set of names seen before? (the row is read only when not,
     * or when the caller has no signature) */
    ads_msgpack_view mv;
    bool opened = false;
    if (!sig) {
        if ((rc = ads_msgpack__view_open(&mv, data, len, ads_txn__names(txn), txn->arena, err)))
            return rc;
        opened = true;
        sig = names_signature(&mv);
    }
    char sigkey[12] = {(char)(t->id >> 24), (char)(t->id >> 16), (char)(t->id >> 8), (char)t->id};
    memcpy(sigkey + 4, &sig, 8);
    uint64_t sigh = shash(sigkey, sizeof sigkey);
    if (txn->sigs_seen && sset_has(txn->sigs_seen, sigkey, sizeof sigkey, sigh))
        return 0;
    pthread_mutex_lock(&txn->db->lock);
    bool known_sig = txn->db->attrs && txn->db->attrs->token == txn->attrs_token &&
                     sset_has(&txn->db->attrs->sigs, sigkey, sizeof sigkey, sigh);
    pthread_mutex_unlock(&txn->db->lock);
    if (known_sig)
        return 0;
    if (!opened &&
        (rc = ads_msgpack__view_open(&mv, data, len, ads_txn__names(txn), txn->arena, err)))
        return rc;
    /* names not yet known to the store's set */
    enum { BATCH = 64 };
    char keybuf[BATCH][204];
    size_t keylen[BATCH];
    size_t nmiss = 0;
    ads_str names[BATCH];
    for (size_t start = 0; start < mv.n; start += BATCH) {
        size_t end = start + BATCH < mv.n ? start + BATCH : mv.n;
        nmiss = 0;
        pthread_mutex_lock(&txn->db->lock);
        attr_set *known = txn->db->attrs;
        bool same = known && known->token == txn->attrs_token;
        for (size_t i = start; i < end; i++) {
            ads_str nm;
            if (ads_msgpack_view_name(&nm, &mv, i, NULL) || nm.len > ADS_MAX_NAME_LEN)
                continue;
            char *k = keybuf[nmiss];
            k[0] = (char)(t->id >> 24);
            k[1] = (char)(t->id >> 16);
            k[2] = (char)(t->id >> 8);
            k[3] = (char)t->id;
            for (size_t j = 0; j < nm.len; j++) {
                unsigned char c = (unsigned char)nm.p[j];
                k[4 + j] = (char)((c >= 'A' && c <= 'Z') ? c | 0x20 : c);
            }
            size_t kl = 4 + nm.len;
            if (same && sset_has(&known->names, k, kl, shash(k, kl)))
                continue;
            keylen[nmiss] = kl;
            names[nmiss] = nm;
            nmiss++;
        }
        pthread_mutex_unlock(&txn->db->lock);
        sset *seen = nmiss ? txn_seen(txn) : NULL;
        if (nmiss && !seen)
            return ads_error_set(err, ADS_ENOMEM, "out of memory");
        for (size_t m = 0; m < nmiss; m++) {
            uint64_t h = shash(keybuf[m], keylen[m]);
            if (sset_has(seen, keybuf[m], keylen[m], h))
                continue;
            if (sset_add(seen, keybuf[m], keylen[m], h))
                return ads_error_set(err, ADS_ENOMEM, "out of memory");
            if ((rc = ensure_attribute(txn, t, names[m].p, names[m].len, err)))
                return rc;
        }
    }
    /* every name is handled: remember the set */
    if (!txn->sigs_seen && !(txn->sigs_seen = calloc(1, sizeof(sset))))
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    if (sig && sset_add(txn->sigs_seen, sigkey, sizeof sigkey, sigh))
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    return 0;
}

void ads_attrs__commit(ads_txn *txn)
{
    sset *seen = txn->attrs_seen, *sigs = txn->sigs_seen;
    if (!seen && !sigs && !txn->attrs_token_dirty)
        return;
    ads_db *db = txn->db;
    pthread_mutex_lock(&db->lock);
    if (!db->attrs || db->attrs->token != txn->attrs_token) {
        if (db->attrs) {
            sset_free(&db->attrs->names);
            sset_free(&db->attrs->sigs);
        } else {
            db->attrs = calloc(1, sizeof *db->attrs);
        }
        if (db->attrs) {
            memset(&db->attrs->names, 0, sizeof db->attrs->names);
            memset(&db->attrs->sigs, 0, sizeof db->attrs->sigs);
            db->attrs->token = txn->attrs_token;
        }
    }
    if (db->attrs && seen) {
        for (size_t i = 0; i < seen->cap; i++)
            if (seen->hashes[i] &&
                sset_add(&db->attrs->names, seen->keys[i], seen->lens[i], seen->hashes[i]))
                break; /* out of memory: the set only knows less */
    }
    if (db->attrs && sigs) {
        for (size_t i = 0; i < sigs->cap && db->attrs->sigs.n < SIGS_MAX; i++)
            if (sigs->hashes[i] &&
                sset_add(&db->attrs->sigs, sigs->keys[i], sigs->lens[i], sigs->hashes[i]))
                break;
    }
    pthread_mutex_unlock(&db->lock);
}

int ads_attrs__invalidate(ads_txn *txn, ads_error *err)
{
    if (txn->attrs_token_dirty)
        return 0;
    uint64_t token;
    int rc = new_token(txn, ADS_META_ATTRS_TOKEN, &token, err);
    if (rc)
        return rc;
    txn->attrs_token = token;
    txn->attrs_loaded = true;
    txn->attrs_token_dirty = true;
    /* what this transaction noted may have been purged since: forget it */
    ads_attrs__txn_free(txn);
    return 0;
}

void ads_attrs__free(ads_db *db)
{
    if (!db->attrs)
        return;
    sset_free(&db->attrs->names);
    sset_free(&db->attrs->sigs);
    free(db->attrs);
    db->attrs = NULL;
}
