/*
 * engine/index_verify.c: checking secondary indexes against the rows
 * (adstore verify) and measuring them (adstore stats). Both directions are
 * checked: every entry belongs to a registered index, names a record whose
 * latest row gives exactly that entry, and every latest row of an indexed
 * type has its entry in each index.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine_int.h"

#define ADS_META_INDEX_PREFIX "index/"

/* One registered index and its type. */
typedef struct ix_ref {
    const ads_type *type;
    const index_def *ix;
} ix_ref;

typedef struct ix_list {
    ix_ref *r;
    size_t n, cap;
} ix_list;

/* Every registered index (types resolved under txn). */
static int registered(ix_list *out, ads_txn *txn, ads_error *err)
{
    memset(out, 0, sizeof *out);
    MDB_cursor *c;
    int rc = mdb_cursor_open(txn->txn, txn->db->meta, &c);
    if (rc)
        return ads_db__lmdb(txn, err, rc, "reading the index registry");
    size_t plen = sizeof ADS_META_INDEX_PREFIX - 1;
    MDB_val k = {plen, ADS_META_INDEX_PREFIX}, v;
    uint32_t last = 0;
    for (rc = mdb_cursor_get(c, &k, &v, MDB_SET_RANGE); rc == 0;
         rc = mdb_cursor_get(c, &k, &v, MDB_NEXT)) {
        if (k.mv_size < plen + 4 || memcmp(k.mv_data, ADS_META_INDEX_PREFIX, plen) != 0)
            break;
        uint32_t id = ads_key__get_typeid((const unsigned char *)k.mv_data + plen);
        if (id == last)
            continue;
        last = id;
        const ads_type *t;
        int r = ads_types__by_id(&t, txn, id, err);
        if (r == ADS_ENOTFOUND)
            continue;
        if (r) {
            rc = r;
            break;
        }
        for (size_t i = 0; i < t->nindexes; i++) {
            if (out->n == out->cap) {
                size_t cap = out->cap ? 2 * out->cap : 8;
                ix_ref *m = realloc(out->r, cap * sizeof *m);
                if (!m) {
                    rc = ads_error_set(err, ADS_ENOMEM, "out of memory");
                    break;
                }
                out->r = m;
                out->cap = cap;
            }
            out->r[out->n].type = t;
            out->r[out->n++].ix = &t->indexes[i];
        }
        if (rc)
            break;
    }
    mdb_cursor_close(c);
    if (rc == MDB_NOTFOUND)
        rc = 0;
    if (rc > 0)
        rc = ads_db__lmdb(txn, err, rc, "reading the index registry");
    return rc;
}

static const ix_ref *find(const ix_list *l, uint32_t id)
{
    for (size_t i = 0; i < l->n; i++)
        if (l->r[i].ix->id == id)
            return &l->r[i];
    return NULL;
}

static void problem(void (*report)(void *, const char *), void *ctx, uint64_t *problems,
                    const char *fmt, const char *a, const char *b)
{
    char msg[600];
    snprintf(msg, sizeof msg, fmt, a, b);
    (*problems)++;
    if (report)
        report(ctx, msg);
}

/* The entry every index of the list wants for the latest row under k. */
static void want_entry(ads_buf *b, ads_txn *txn, const ix_ref *r, const row_env *env,
                       const MDB_val *k, size_t *off, ads_arena *a)
{
    unsigned char id[4] = {(unsigned char)(r->ix->id >> 24), (unsigned char)(r->ix->id >> 16),
                           (unsigned char)(r->ix->id >> 8), (unsigned char)r->ix->id};
    ads_buf_clear(b);
    ads_buf_add(b, id, 4);
    ads_index__value(b, ads_txn__names(txn), env->data, env->len, r->ix, a);
    if (b->len + k->mv_size - 4 > ADS_INDEX_KEY_MAX) {
        b->len = 4;
        ads_buf_addc(b, 0x02);
    }
    *off = b->len;
    ads_buf_add(b, (const unsigned char *)k->mv_data + 4, k->mv_size - 4);
}

/* Entries to rows: each names a record whose row gives that entry. */
static int check_entries(ads_txn *txn, const ix_list *l, void (*report)(void *, const char *),
                         void *ctx, uint64_t *problems, ads_buf *b, ads_arena *a, ads_error *err)
{
    MDB_cursor *c;
    int rc = mdb_cursor_open(txn->txn, txn->db->index, &c);
    if (rc)
        return ads_db__lmdb(txn, err, rc, "verifying indexes");
    MDB_val k, v;
    unsigned char skey[ADS_KEY_INLINE_MAX];
    for (rc = mdb_cursor_get(c, &k, &v, MDB_FIRST); rc == 0;
         rc = mdb_cursor_get(c, &k, &v, MDB_NEXT)) {
        const unsigned char *p = k.mv_data;
        const ix_ref *r = k.mv_size >= 4 ? find(l, ads_key__get_typeid(p)) : NULL;
        if (!r) {
            problem(report, ctx, problems, "index table: an entry of no declared index%s%s", "",
                    "");
            continue;
        }
        size_t off = v.mv_size == 2 ? ((size_t)((const unsigned char *)v.mv_data)[0] << 8 |
                                       ((const unsigned char *)v.mv_data)[1])
                                    : 0;
        size_t rest = off >= 5 && off <= k.mv_size ? k.mv_size - off : ADS_KEY_INLINE_MAX;
        if (rest + 4 > ADS_KEY_INLINE_MAX) {
            problem(report, ctx, problems, "type %s: an entry of the index on %s is corrupt",
                    r->type->name, r->ix->name);
            continue;
        }
        memcpy(skey, p, 4);
        skey[0] = (unsigned char)(r->type->id >> 24);
        skey[1] = (unsigned char)(r->type->id >> 16);
        skey[2] = (unsigned char)(r->type->id >> 8);
        skey[3] = (unsigned char)r->type->id;
        memcpy(skey + 4, p + off, rest);
        MDB_val lk = {rest + 4, skey}, lv;
        row_env env;
        int g = mdb_get(txn->txn, txn->db->latest, &lk, &lv);
        if (g || ads_row__parse(&env, skey, rest + 4, lv.mv_data, lv.mv_size, "", NULL)) {
            problem(report, ctx, problems,
                    "type %s: the index on %s has an entry for a record that is not there",
                    r->type->name, r->ix->name);
            continue;
        }
        size_t woff;
        want_entry(b, txn, r, &env, &lk, &woff, a);
        ads_arena_reset(a);
        if (b->len != k.mv_size || memcmp(b->p, k.mv_data, k.mv_size) != 0 || woff != off)
            problem(report, ctx, problems,
                    "type %s: the index on %s has an entry that does not match its record's "
                    "latest row",
                    r->type->name, r->ix->name);
    }
    mdb_cursor_close(c);
    if (rc && rc != MDB_NOTFOUND)
        return ads_db__lmdb(txn, err, rc, "verifying indexes");
    return 0;
}

/* Rows to entries: every latest row of an indexed type has its entries. */
static int check_rows(ads_txn *txn, const ix_list *l, void (*report)(void *, const char *),
                      void *ctx, uint64_t *problems, ads_buf *b, ads_arena *a, ads_error *err)
{
    MDB_cursor *c;
    int rc = mdb_cursor_open(txn->txn, txn->db->latest, &c);
    if (rc)
        return ads_db__lmdb(txn, err, rc, "verifying indexes");
    for (size_t i = 0; i < l->n; i++) {
        if (i && l->r[i].type == l->r[i - 1].type)
            continue; /* a type's indexes are checked together */
        const ads_type *t = l->r[i].type;
        unsigned char pre[4] = {(unsigned char)(t->id >> 24), (unsigned char)(t->id >> 16),
                                (unsigned char)(t->id >> 8), (unsigned char)t->id};
        MDB_val k = {4, pre}, v;
        for (rc = mdb_cursor_get(c, &k, &v, MDB_SET_RANGE); rc == 0;
             rc = mdb_cursor_get(c, &k, &v, MDB_NEXT)) {
            if (k.mv_size < 4 || memcmp(k.mv_data, pre, 4) != 0)
                break;
            row_env env;
            if (ads_row__parse(&env, k.mv_data, k.mv_size, v.mv_data, v.mv_size, "", NULL))
                continue; /* the row check reports it */
            for (size_t j = i; j < l->n && l->r[j].type == t; j++) {
                size_t off;
                want_entry(b, txn, &l->r[j], &env, &k, &off, a);
                MDB_val ik = {b->len, b->p}, iv;
                if (mdb_get(txn->txn, txn->db->index, &ik, &iv))
                    problem(report, ctx, problems,
                            "type %s: a record has no entry in the index on %s", t->name,
                            l->r[j].ix->name);
            }
            ads_arena_reset(a);
        }
        if (rc && rc != MDB_NOTFOUND)
            break;
        rc = 0;
    }
    mdb_cursor_close(c);
    if (rc && rc != MDB_NOTFOUND)
        return ads_db__lmdb(txn, err, rc, "verifying indexes");
    return 0;
}

int ads_index__verify(ads_txn *txn, void (*report)(void *ctx, const char *problem), void *ctx,
                      uint64_t *problems, ads_error *err)
{
    if (!txn->db->index)
        return 0; /* a store from before indexes, opened read-only */
    int rc = ads_index__flush(txn, err);
    if (rc)
        return rc;
    ix_list l;
    rc = registered(&l, txn, err);
    ads_arena *a = ads_arena_new();
    ads_buf b = ADS_BUF_INIT;
    if (!rc && !a)
        rc = ads_error_set(err, ADS_ENOMEM, "out of memory");
    if (!rc)
        rc = check_entries(txn, &l, report, ctx, problems, &b, a, err);
    if (!rc)
        rc = check_rows(txn, &l, report, ctx, problems, &b, a, err);
    if (!rc && b.failed)
        rc = ads_error_set(err, ADS_ENOMEM, "out of memory");
    ads_buf_free(&b);
    ads_arena_free(a);
    free(l.r);
    return rc;
}

int ads_db_index_stats(ads_db *db, int (*fn)(void *ctx, const ads_index_stats *s), void *ctx,
                       ads_error *err)
{
    if (!db || !fn)
        return ads_error_set(err, ADS_EINVAL, "NULL argument");
    if (!db->index)
        return 0;
    ads_txn *txn;
    int rc = ads_txn_begin(&txn, db, ADS_TXN_READONLY, err);
    if (rc)
        return rc;
    ix_list l;
    if ((rc = registered(&l, txn, err))) {
        ads_txn_abort(txn);
        return rc;
    }
    MDB_cursor *c = NULL;
    if ((rc = mdb_cursor_open(txn->txn, db->index, &c)))
        rc = ads_db__lmdb(txn, err, rc, "measuring indexes");
    for (size_t i = 0; i < l.n && !rc; i++) {
        const ix_ref *r = &l.r[i];
        unsigned char pre[4] = {(unsigned char)(r->ix->id >> 24), (unsigned char)(r->ix->id >> 16),
                                (unsigned char)(r->ix->id >> 8), (unsigned char)r->ix->id};
        ads_index_stats s = {r->type->name, r->ix->name, 0, 0};
        MDB_val k = {4, pre}, v;
        int m;
        for (m = mdb_cursor_get(c, &k, &v, MDB_SET_RANGE); m == 0;
             m = mdb_cursor_get(c, &k, &v, MDB_NEXT)) {
            if (k.mv_size < 4 || memcmp(k.mv_data, pre, 4) != 0)
                break;
            s.entries++;
            s.bytes += k.mv_size + v.mv_size;
        }
        if (m && m != MDB_NOTFOUND)
            rc = ads_db__lmdb(txn, err, m, "measuring indexes");
        else
            rc = fn(ctx, &s);
    }
    if (c)
        mdb_cursor_close(c);
    free(l.r);
    ads_txn_abort(txn);
    return rc;
}
