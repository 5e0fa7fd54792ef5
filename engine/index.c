/*
 * engine/index.c: secondary indexes (docs/indexes.md). An index is declared
 * by data: `Indexed = true` on the Attribute record (ForType, ForName). The
 * engine keeps, for each index, one entry per record of the type, for the
 * record's latest row, in the table `index`:
 *
 *   key    ads_index__be32(index id) ++ value ++ the record's stored key without its
 *          4-byte type id
 *   value  be16(offset of that stored key's rest within the entry key)
 *
 * value is the attribute's value in the record key encoding (key.c: `===`
 * normalised, "ABC" as "abc", 123 as 123.0), or one byte IX_UNDEFINED when
 * the row has no such attribute, or IX_OTHER when the value has no key
 * encoding (an expression, error, NaN) or would make the entry longer than
 * LMDB's key limit. IX_OTHER entries are read by every index lookup: the
 * WHERE decides for them. So a lookup is always a superset of the rows that
 * match, and the caller's WHERE makes the answer exact.
 *
 * The registry (meta `index/` ++ ads_index__be32(type id) ++ folded name -> be32 index
 * id) says which indexes exist; each type carries its indexes (types.c loads
 * them with the type, and a change of the registry moves the types token).
 * Entries are written in the transaction that writes the row (store.c calls
 * ads_index__row for every change of a latest row; a bulk batch queues them
 * and writes them sorted at its end, index_queue.c); declaring builds the
 * index over the type's records in the declaring transaction, so a crash
 * leaves either no index or all of it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/limits.h"
#include "classad/msgpack.h"
#include "engine/engine_int.h"

#define ADS_META_INDEX_PREFIX "index/"
#define ADS_META_INDEX_NEXT "index.next"


static size_t reg_key(unsigned char *out, uint32_t typeid, const char *folded, size_t len)
{
    size_t n = sizeof ADS_META_INDEX_PREFIX - 1;
    memcpy(out, ADS_META_INDEX_PREFIX, n);
    ads_index__be32(out + n, typeid);
    memcpy(out + n + 4, folded, len);
    return n + 4 + len;
}

/* ---- the registry ---- */

int ads_index__load(index_def **out, size_t *n, ads_txn *txn, uint32_t typeid, ads_arena *a,
                    ads_error *err)
{
    unsigned char pre[16];
    size_t plen = reg_key(pre, typeid, "", 0);
    MDB_cursor *c;
    *out = NULL;
    *n = 0;
    int rc = mdb_cursor_open(txn->txn, txn->db->meta, &c);
    if (rc)
        return ads_db__lmdb(txn, err, rc, "reading the index registry");
    MDB_val k = {plen, pre}, v;
    size_t cap = 0;
    for (rc = mdb_cursor_get(c, &k, &v, MDB_SET_RANGE); rc == 0;
         rc = mdb_cursor_get(c, &k, &v, MDB_NEXT)) {
        if (k.mv_size <= plen || memcmp(k.mv_data, pre, plen) != 0)
            break;
        if (v.mv_size != 4 || k.mv_size - plen > ADS_MAX_NAME_LEN) {
            mdb_cursor_close(c);
            return ads_error_set(err, ADS_ECORRUPT, "the index registry is corrupt");
        }
        if (*n == cap) {
            cap = cap ? 2 * cap : 4;
            index_def *m = ads_arena_alloc(a, cap * sizeof *m);
            if (!m) {
                mdb_cursor_close(c);
                return ads_error_set(err, ADS_ENOMEM, "out of memory");
            }
            if (*n)
                memcpy(m, *out, *n * sizeof *m);
            *out = m;
        }
        index_def *d = &(*out)[(*n)++];
        d->id = ads_key__get_typeid(v.mv_data);
        d->len = k.mv_size - plen;
        d->name = ads_arena_strndup(a, (const char *)k.mv_data + plen, d->len);
        if (!d->name) {
            mdb_cursor_close(c);
            return ads_error_set(err, ADS_ENOMEM, "out of memory");
        }
    }
    mdb_cursor_close(c);
    if (rc && rc != MDB_NOTFOUND)
        return ads_db__lmdb(txn, err, rc, "reading the index registry");
    return 0;
}

/* ---- entries ---- */

/* ads_index__value of a row already in view mv (NULL: the row is not a
 * readable map). */
static void value_in(ads_buf *b, ads_msgpack_view *mv, const char *name, size_t len)
{
    ads_value v;
    const ads_expr *e = NULL;
    size_t start = b->len;
    int rc = mv ? ads_msgpack_view_lookup(&v, &e, mv, name, len, NULL) : -1;
    if (rc < 0 || e) {
        ads_buf_addc(b, IX_OTHER);
        return;
    }
    if (rc == 0 || v.type == ADS_UNDEFINED) {
        ads_buf_addc(b, IX_UNDEFINED);
        return;
    }
    if (v.type == ADS_ERROR || ads_key__value(b, &v, "", NULL)) {
        b->len = start;
        ads_buf_addc(b, IX_OTHER);
    }
}

void ads_index__value(ads_buf *b, const ads_msgpack_names *nm, const unsigned char *data,
                      size_t dlen, const char *name, size_t len, ads_arena *a)
{
    ads_msgpack_view mv;
    int rc = ads_msgpack__view_open(&mv, data, dlen, nm, a, NULL);
    value_in(b, rc ? NULL : &mv, name, len);
}

/* The entry of index ix for the row in view mv (NULL: unreadable) of the
 * record stored under skey: into b, with *off where the stored key's rest
 * starts. */
static void entry_key(ads_buf *b, const index_def *ix, ads_msgpack_view *mv,
                      const unsigned char *skey, size_t slen, uint16_t *off)
{
    unsigned char id[4];
    ads_index__be32(id, ix->id);
    ads_buf_clear(b);
    ads_buf_add(b, id, 4);
    value_in(b, mv, ix->name, ix->len);
    if (b->len + (slen - 4) > ADS_INDEX_KEY_MAX) {
        b->len = 4;
        ads_buf_addc(b, IX_OTHER);
    }
    *off = (uint16_t)b->len;
    ads_buf_add(b, skey + 4, slen - 4);
}

/* The view of row data (len dlen) in *mv: mv, or NULL when the row is not a
 * readable map (every value of it is then IX_OTHER). */
static ads_msgpack_view *view_of(ads_msgpack_view *mv, const ads_msgpack_names *nm,
                                 const unsigned char *data, size_t dlen, ads_arena *a)
{
    return ads_msgpack__view_open(mv, data, dlen, nm, a, NULL) ? NULL : mv;
}

static int put_entry(ads_txn *txn, const ads_buf *k, uint16_t off, ads_error *err)
{
    unsigned char v[2] = {(unsigned char)(off >> 8), (unsigned char)off};
    return ads_db__put(txn, txn->db->index, k->p, k->len, v, 2, 0, err);
}

int ads_index__row(ads_txn *txn, const ads_type *t, const unsigned char *skey, size_t slen,
                   const unsigned char *old, size_t olen, const unsigned char *now, size_t nlen,
                   ads_arena *scratch, ads_error *err)
{
    /* a caller may hold the type from before an index changed in this
     * transaction (a bulk batch remembers its types): take it afresh */
    if (txn->indexes_changed && !t->builtin) {
        int rc = ads_types__by_name(&t, txn, t->folded, strlen(t->folded), err);
        if (rc)
            return rc;
    }
    if (!t->nindexes)
        return 0;
    ads_arena *a = scratch ? scratch : ads_arena_new();
    ads_buf ok = ADS_BUF_INIT, nk = ADS_BUF_INIT;
    int rc = a ? 0 : ads_error_set(err, ADS_ENOMEM, "out of memory");
    ads_msgpack_view omv, nmv, *ov = NULL, *nv = NULL;
    if (!rc && old)
        ov = view_of(&omv, ads_txn__names(txn), old, olen, a);
    if (!rc && now)
        nv = view_of(&nmv, ads_txn__names(txn), now, nlen, a);
    for (size_t i = 0; i < t->nindexes && !rc; i++) {
        uint16_t ooff = 0, noff = 0;
        ads_buf_clear(&ok);
        ads_buf_clear(&nk);
        if (old)
            entry_key(&ok, &t->indexes[i], ov, skey, slen, &ooff);
        if (now)
            entry_key(&nk, &t->indexes[i], nv, skey, slen, &noff);
        if (ok.failed || nk.failed) {
            rc = ads_error_set(err, ADS_ENOMEM, "out of memory");
            break;
        }
        if (old && now && ok.len == nk.len && memcmp(ok.p, nk.p, ok.len) == 0)
            continue;
        if (txn->ixq) { /* a bulk batch: written at its end (index_queue.c) */
            if (old)
                rc = ads_ixq__add(txn->ixq, false, (const unsigned char *)ok.p, ok.len, 0, err);
            if (!rc && now)
                rc = ads_ixq__add(txn->ixq, true, (const unsigned char *)nk.p, nk.len, noff, err);
            continue;
        }
        if (old) {
            rc = ads_db__del(txn, txn->db->index, ok.p, ok.len, err);
            if (rc == ADS_ENOTFOUND)
                rc = 0; /* verify reports a missing entry; a write repairs it */
        }
        if (!rc && now)
            rc = put_entry(txn, &nk, noff, err);
    }
    ads_buf_free(&ok);
    ads_buf_free(&nk);
    if (a != scratch)
        ads_arena_free(a);
    return rc;
}

/* ---- declaring and dropping ---- */

/* Entries for every record of type t under index ix (the declaring
 * transaction; memory: one row at a time). */
static int build(ads_txn *txn, const ads_type *t, const index_def *ix, ads_error *err)
{
    unsigned char pre[4];
    ads_index__be32(pre, t->id);
    MDB_cursor *c;
    int rc = mdb_cursor_open(txn->txn, txn->db->latest, &c);
    if (rc)
        return ads_db__lmdb(txn, err, rc, "building an index");
    ads_arena *a = ads_arena_new();
    ads_buf k = ADS_BUF_INIT;
    if (!a)
        rc = ads_error_set(err, ADS_ENOMEM, "out of memory");
    MDB_val mk = {4, pre}, mv;
    int mrc = rc ? MDB_NOTFOUND : mdb_cursor_get(c, &mk, &mv, MDB_SET_RANGE);
    for (; mrc == 0 && !rc; mrc = mdb_cursor_get(c, &mk, &mv, MDB_NEXT)) {
        if (mk.mv_size < 4 || memcmp(mk.mv_data, pre, 4) != 0)
            break;
        row_env env;
        if ((rc = ads_row__parse(&env, mk.mv_data, mk.mv_size, mv.mv_data, mv.mv_size, t->name,
                                 err)))
            break;
        uint16_t off;
        ads_msgpack_view rv;
        entry_key(&k, ix, view_of(&rv, ads_txn__names(txn), env.data, env.len, a), mk.mv_data,
                  mk.mv_size, &off);
        if (k.failed)
            rc = ads_error_set(err, ADS_ENOMEM, "out of memory");
        else
            rc = put_entry(txn, &k, off, err);
        ads_arena_reset(a);
    }
    mdb_cursor_close(c);
    if (!rc && mrc && mrc != MDB_NOTFOUND)
        rc = ads_db__lmdb(txn, err, mrc, "building an index");
    ads_buf_free(&k);
    ads_arena_free(a);
    return rc;
}

/* Remove every entry of index id. */
static int clear(ads_txn *txn, uint32_t id, ads_error *err)
{
    unsigned char pre[4];
    ads_index__be32(pre, id);
    MDB_cursor *c;
    int rc = mdb_cursor_open(txn->txn, txn->db->index, &c);
    if (rc)
        return ads_db__lmdb(txn, err, rc, "dropping an index");
    MDB_val k = {4, pre}, v;
    rc = mdb_cursor_get(c, &k, &v, MDB_SET_RANGE);
    while (rc == 0 && k.mv_size >= 4 && memcmp(k.mv_data, pre, 4) == 0) {
        txn->writes++;
        if ((rc = mdb_cursor_del(c, 0)))
            break;
        k.mv_data = pre;
        k.mv_size = 4;
        rc = mdb_cursor_get(c, &k, &v, MDB_SET_RANGE);
    }
    mdb_cursor_close(c);
    if (rc && rc != MDB_NOTFOUND)
        return ads_db__lmdb(txn, err, rc, "dropping an index");
    return 0;
}

/* An attribute of an Attribute row as a value (0 absent). */
static int attr_of(ads_value *out, const ads_msgpack_names *nm, const unsigned char *data,
                   size_t len, const char *name, ads_arena *a, ads_error *err)
{
    ads_msgpack_view mv;
    const ads_expr *e = NULL;
    int rc = ads_msgpack__view_open(&mv, data, len, nm, a, err);
    if (rc)
        return rc;
    rc = ads_msgpack_view_lookup(out, &e, &mv, name, strlen(name), err);
    if (rc == 1 && e) {
        ads_view view = ads_msgpack_view_get(&mv, NULL);
        if (ads_expr_eval(out, e, &view, a))
            return ads_error_set(err, ADS_ENOMEM, "out of memory");
    }
    if (rc == 0)
        *out = ads_undefined();
    return rc < 0 ? rc : 0;
}

/* Does Attribute row data declare an index? 1 yes, 0 no; Indexed must be a
 * boolean when check is set. */
static int declares(const ads_msgpack_names *nm, const unsigned char *data, size_t len,
                    bool check, ads_arena *a, ads_error *err)
{
    ads_value v;
    int rc = attr_of(&v, nm, data, len, "Indexed", a, err);
    if (rc)
        return rc;
    if (v.type == ADS_UNDEFINED)
        return 0;
    if (v.type != ADS_BOOLEAN)
        return check ? ads_error_set(err, ADS_EINVAL,
                                     "an Attribute record's Indexed must be true or false, not %s",
                                     ads_vtype_name(v.type))
                     : 0;
    return v.u.b ? 1 : 0;
}

static int next_index_id(ads_txn *txn, uint32_t *out, ads_error *err)
{
    MDB_val v;
    int rc = ads_db__meta_get(txn, ADS_META_INDEX_NEXT, strlen(ADS_META_INDEX_NEXT), &v, err);
    if (rc < 0)
        return rc;
    uint32_t id = 1;
    if (rc == 1) {
        if (v.mv_size != 4)
            return ads_error_set(err, ADS_ECORRUPT, "store metadata '%s' is corrupt",
                                 ADS_META_INDEX_NEXT);
        id = ads_key__get_typeid(v.mv_data);
    }
    if (id == UINT32_MAX)
        return ads_error_set(err, ADS_ELIMIT, "no index ids are left");
    unsigned char nb[4];
    ads_index__be32(nb, id + 1);
    *out = id;
    return ads_db__meta_put(txn, ADS_META_INDEX_NEXT, strlen(ADS_META_INDEX_NEXT), nb, 4, err);
}

/* The folded copy of an attribute name (at most ADS_MAX_NAME_LEN). */
static void fold_name(char *out, const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)p[i];
        out[i] = (char)((c >= 'A' && c <= 'Z') ? c | 0x20 : c);
    }
    out[n] = 0;
}

static int create(ads_txn *txn, const ads_type *t, const char *name, size_t len, ads_error *err)
{
    if (t->builtin)
        return ads_error_set(err, ADS_EINVAL, "the built-in type %s cannot have indexes",
                             t->name);
    if (ads_row__timeline_attr(name, len))
        return ads_error_set(err, ADS_EINVAL,
                             "type %s: %.*s is a timeline attribute and cannot be indexed",
                             t->name, (int)len, name);
    char folded[ADS_MAX_NAME_LEN + 1];
    unsigned char rk[sizeof ADS_META_INDEX_PREFIX + 4 + ADS_MAX_NAME_LEN];
    fold_name(folded, name, len);
    size_t rlen = reg_key(rk, t->id, folded, len);
    MDB_val v;
    int rc = ads_db__meta_get(txn, (const char *)rk, rlen, &v, err);
    if (rc != 0)
        return rc < 0 ? rc : 0; /* already there */
    index_def ix = {0, folded, len};
    unsigned char idb[4];
    if ((rc = next_index_id(txn, &ix.id, err)))
        return rc;
    ads_index__be32(idb, ix.id);
    if ((rc = ads_db__meta_put(txn, (const char *)rk, rlen, idb, 4, err)) ||
        (rc = ads_db__format_indexed(txn, err)) || (rc = build(txn, t, &ix, err)))
        return rc;
    txn->indexes_changed = true;
    return ads_types__changed(txn, err);
}

static int drop(ads_txn *txn, const ads_type *t, const char *name, size_t len, ads_error *err)
{
    char folded[ADS_MAX_NAME_LEN + 1];
    unsigned char rk[sizeof ADS_META_INDEX_PREFIX + 4 + ADS_MAX_NAME_LEN];
    fold_name(folded, name, len);
    size_t rlen = reg_key(rk, t->id, folded, len);
    MDB_val v;
    int rc = ads_db__meta_get(txn, (const char *)rk, rlen, &v, err);
    if (rc <= 0)
        return rc;
    if (v.mv_size != 4)
        return ads_error_set(err, ADS_ECORRUPT, "the index registry is corrupt");
    uint32_t id = ads_key__get_typeid(v.mv_data);
    if ((rc = clear(txn, id, err)) ||
        (rc = ads_db__del(txn, txn->db->meta, rk, rlen, err)))
        return rc;
    txn->indexes_changed = true;
    return ads_types__changed(txn, err);
}

int ads_index__declared(ads_txn *txn, const unsigned char *old, size_t olen,
                        const unsigned char *now, size_t nlen, ads_error *err)
{
    ads_arena *a = ads_arena_new();
    if (!a)
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    int was = 0, is = 0, rc = 0;
    if (old && (was = declares(ads_txn__names(txn), old, olen, false, a, err)) < 0)
        rc = was;
    if (!rc && now && (is = declares(ads_txn__names(txn), now, nlen, true, a, err)) < 0)
        rc = is;
    if (rc || was == is)
        goto out;
    /* building and dropping write the index table directly */
    if ((rc = ads_index__flush(txn, err)))
        goto out;
    const unsigned char *row = now ? now : old;
    size_t rlen = now ? nlen : olen;
    ads_value ft, fn;
    if ((rc = attr_of(&ft, ads_txn__names(txn), row, rlen, "ForType", a, err)) ||
        (rc = attr_of(&fn, ads_txn__names(txn), row, rlen, "ForName", a, err)))
        goto out;
    if (ft.type != ADS_STRING || fn.type != ADS_STRING || !fn.u.s.len ||
        fn.u.s.len > ADS_MAX_NAME_LEN) {
        rc = is ? ads_error_set(err, ADS_EINVAL,
                                "an Attribute record with Indexed needs ForType and ForName")
                : 0;
        goto out;
    }
    const ads_type *t;
    if ((rc = ads_types__by_name(&t, txn, ft.u.s.p, ft.u.s.len, err))) {
        if (!is && rc == ADS_ENOTFOUND)
            rc = 0; /* the type is gone: nothing to drop */
        goto out;
    }
    rc = is ? create(txn, t, fn.u.s.p, fn.u.s.len, err) : drop(txn, t, fn.u.s.p, fn.u.s.len, err);
out:
    ads_arena_free(a);
    return rc;
}

int ads_index__rebuild_all(ads_txn *txn, ads_error *err)
{
    MDB_cursor *c;
    int rc = ads_index__flush(txn, err);
    if (rc)
        return rc;
    rc = mdb_cursor_open(txn->txn, txn->db->meta, &c);
    if (rc)
        return ads_db__lmdb(txn, err, rc, "rebuilding indexes");
    size_t plen = sizeof ADS_META_INDEX_PREFIX - 1;
    MDB_val k = {plen, ADS_META_INDEX_PREFIX}, v;
    uint32_t typeid = 0;
    for (rc = mdb_cursor_get(c, &k, &v, MDB_SET_RANGE); rc == 0;
         rc = mdb_cursor_get(c, &k, &v, MDB_NEXT)) {
        if (k.mv_size < plen + 4 || memcmp(k.mv_data, ADS_META_INDEX_PREFIX, plen) != 0)
            break;
        uint32_t id = ads_key__get_typeid((const unsigned char *)k.mv_data + plen);
        if (id == typeid)
            continue;
        typeid = id;
        const ads_type *t;
        int r = ads_types__by_id(&t, txn, id, err);
        if (r == ADS_ENOTFOUND)
            continue;
        if (t->nindexes)
            r = ads_db__format_indexed(txn, err);
        for (size_t i = 0; !r && i < t->nindexes; i++)
            if (!(r = clear(txn, t->indexes[i].id, err)))
                r = build(txn, t, &t->indexes[i], err);
        if (r) {
            mdb_cursor_close(c);
            return r;
        }
        /* the cursor stays valid: only the index table changed */
    }
    mdb_cursor_close(c);
    if (rc && rc != MDB_NOTFOUND)
        return ads_db__lmdb(txn, err, rc, "rebuilding indexes");
    return 0;
}
