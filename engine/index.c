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

int ads_index__def(index_def *d, const char *reg, size_t reglen, ads_arena *a, ads_error *err)
{
    char *r = ads_arena_strndup(a, reg, reglen);
    if (!r)
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    d->reg = r;
    d->reglen = reglen;
    d->nattrs = 0;
    for (size_t at = 0; at <= reglen;) {
        const char *z = memchr(r + at, 0, reglen - at);
        size_t n = z ? (size_t)(z - (r + at)) : reglen - at;
        if (!n || n > ADS_MAX_NAME_LEN || d->nattrs == ADS_INDEX_ATTRS_MAX)
            return ads_error_set(err, ADS_ECORRUPT, "the index registry is corrupt");
        d->attr[d->nattrs] = r + at;
        d->alen[d->nattrs++] = n;
        at += n + 1;
    }
    if (d->nattrs == 1) {
        d->name = r;
        d->len = reglen;
        return 0;
    }
    /* "(a, b)" for messages */
    char *m = ads_arena_alloc(a, reglen + 2 * d->nattrs + 2);
    if (!m)
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    size_t o = 0;
    m[o++] = '(';
    for (size_t i = 0; i < d->nattrs; i++) {
        if (i) {
            m[o++] = ',';
            m[o++] = ' ';
        }
        memcpy(m + o, d->attr[i], d->alen[i]);
        o += d->alen[i];
    }
    m[o++] = ')';
    m[o] = 0;
    d->name = m;
    d->len = o;
    return 0;
}

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
        if (v.mv_size != 4 || k.mv_size - plen > ADS_INDEX_NAME_MAX) {
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
        if ((rc = ads_index__def(d, (const char *)k.mv_data + plen, k.mv_size - plen, a,
                                 err))) {
            mdb_cursor_close(c);
            return rc;
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

/* ix's value (each attribute's in turn; IX_OTHER alone when one has no key
 * encoding) of the row in view mv. */
static void tuple_in(ads_buf *b, ads_msgpack_view *mv, const index_def *ix)
{
    size_t start = b->len;
    for (size_t i = 0; i < ix->nattrs; i++) {
        size_t at = b->len;
        value_in(b, mv, ix->attr[i], ix->alen[i]);
        if (b->len == at + 1 && ((const unsigned char *)b->p)[at] == IX_OTHER) {
            b->len = start;
            ads_buf_addc(b, IX_OTHER);
            return;
        }
    }
}

void ads_index__value(ads_buf *b, const ads_msgpack_names *nm, const unsigned char *data,
                      size_t dlen, const index_def *ix, ads_arena *a)
{
    ads_msgpack_view mv;
    int rc = ads_msgpack__view_open(&mv, data, dlen, nm, a, NULL);
    tuple_in(b, rc ? NULL : &mv, ix);
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
    tuple_in(b, mv, ix);
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

/* The indexes one Attribute row declares: registry names (folded
 * attribute names, a 0 byte between each two), its own attribute's when
 * Indexed is true and the composite (ForName, IndexWith...) when it has
 * IndexWith. */
typedef struct decl {
    ads_value ft, fn; /* ForType, ForName */
    size_t n;
    char reg[2][ADS_INDEX_NAME_MAX + 1];
    size_t len[2];
} decl;

/* The folded copy of an attribute name (at most ADS_MAX_NAME_LEN). */
static void fold_name(char *out, const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)p[i];
        out[i] = (char)((c >= 'A' && c <= 'Z') ? c | 0x20 : c);
    }
    out[n] = 0;
}

static bool name_ok(const ads_value *v)
{
    return v->type == ADS_STRING && v->u.s.len && v->u.s.len <= ADS_MAX_NAME_LEN &&
           !memchr(v->u.s.p, 0, v->u.s.len);
}

static int timeline(const decl *d, const ads_value *name, ads_error *err)
{
    return ads_error_set(err, ADS_EINVAL,
                         "type %.*s: %.*s is a timeline attribute and cannot be indexed",
                         (int)d->ft.u.s.len, d->ft.u.s.p, (int)name->u.s.len, name->u.s.p);
}

/* d's composite from IndexWith (with): ForName then each name of the
 * list, each once. */
static int composite(decl *d, const ads_value *with, ads_error *err)
{
    const char *ty = d->ft.u.s.p;
    int tl = (int)d->ft.u.s.len;
    if (with->type != ADS_LIST)
        return ads_error_set(err, ADS_EINVAL,
                             "type %.*s: an Attribute record's IndexWith must be a list of "
                             "attribute names, not %s",
                             tl, ty, ads_vtype_name(with->type));
    if (with->u.list.n < 1 || with->u.list.n > ADS_INDEX_ATTRS_MAX - 1)
        return ads_error_set(err, ADS_EINVAL,
                             "type %.*s: IndexWith names 1 to %d more attributes, not %zu", tl,
                             ty, ADS_INDEX_ATTRS_MAX - 1, with->u.list.n);
    char *r = d->reg[d->n];
    size_t o = d->fn.u.s.len;
    fold_name(r, d->fn.u.s.p, o);
    for (size_t i = 0; i < with->u.list.n; i++) {
        const ads_value *it = &with->u.list.items[i];
        if (!name_ok(it))
            return ads_error_set(err, ADS_EINVAL,
                                 "type %.*s: IndexWith item %zu is not an attribute name (a "
                                 "non-empty string of at most %d bytes)",
                                 tl, ty, i + 1, ADS_MAX_NAME_LEN);
        size_t n = it->u.s.len;
        if (ads_row__timeline_attr(it->u.s.p, n))
            return timeline(d, it, err);
        if (o + 1 + n > ADS_INDEX_NAME_MAX)
            return ads_error_set(err, ADS_ELIMIT,
                                 "type %.*s: a composite index's attribute names are at most "
                                 "%d bytes together",
                                 tl, ty, ADS_INDEX_NAME_MAX);
        char f[ADS_MAX_NAME_LEN + 1];
        fold_name(f, it->u.s.p, n);
        /* each earlier name: a 0 byte ends it */
        for (size_t at = 0; at < o;) {
            size_t m = strlen(r + at);
            if (m == n && memcmp(r + at, f, n) == 0)
                return ads_error_set(err, ADS_EINVAL,
                                     "type %.*s: the composite index on %.*s names %.*s twice",
                                     tl, ty, (int)d->fn.u.s.len, d->fn.u.s.p, (int)n, it->u.s.p);
            at += m + 1;
        }
        r[o++] = 0;
        memcpy(r + o, f, n);
        o += n;
        r[o] = 0;
    }
    d->len[d->n++] = o;
    return 0;
}

/* The indexes Attribute row data declares, into d. check: the row is being
 * stored (its declaration must be valid); else a row stored before, whose
 * invalid parts declare nothing. */
static int decl_of(decl *d, const ads_msgpack_names *nm, const unsigned char *data, size_t len,
                   bool check, ads_arena *a, ads_error *err)
{
    d->n = 0;
    ads_value with;
    int is = declares(nm, data, len, check, a, err);
    if (is < 0)
        return is;
    int rc = attr_of(&with, nm, data, len, "IndexWith", a, err);
    if (rc)
        return rc;
    if (!is && with.type == ADS_UNDEFINED)
        return 0;
    if ((rc = attr_of(&d->ft, nm, data, len, "ForType", a, err)) ||
        (rc = attr_of(&d->fn, nm, data, len, "ForName", a, err)))
        return rc;
    if (d->ft.type != ADS_STRING || !name_ok(&d->fn))
        return check ? ads_error_set(err, ADS_EINVAL, "an Attribute record with %s needs ForType "
                                                      "and ForName",
                                     is ? "Indexed" : "IndexWith")
                     : 0;
    if (ads_row__timeline_attr(d->fn.u.s.p, d->fn.u.s.len))
        return check ? timeline(d, &d->fn, err) : 0;
    if (is) {
        fold_name(d->reg[0], d->fn.u.s.p, d->fn.u.s.len);
        d->len[d->n++] = d->fn.u.s.len;
    }
    if (with.type != ADS_UNDEFINED && (rc = composite(d, &with, err)) && check)
        return rc;
    return 0;
}

static bool decl_has(const decl *d, const char *reg, size_t len)
{
    for (size_t i = 0; i < d->n; i++)
        if (d->len[i] == len && memcmp(d->reg[i], reg, len) == 0)
            return true;
    return false;
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

/* Build the index of registry name reg (len bytes) on t. */
static int create(ads_txn *txn, const ads_type *t, const char *reg, size_t len, ads_error *err)
{
    if (t->builtin)
        return ads_error_set(err, ADS_EINVAL, "the built-in type %s cannot have indexes",
                             t->name);
    ads_arena *a = ads_arena_new();
    if (!a)
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    index_def ix = {0};
    int rc = ads_index__def(&ix, reg, len, a, err);
    unsigned char rk[sizeof ADS_META_INDEX_PREFIX + 4 + ADS_INDEX_NAME_MAX];
    size_t rlen = reg_key(rk, t->id, reg, len);
    MDB_val v;
    if (!rc && (rc = ads_db__meta_get(txn, (const char *)rk, rlen, &v, err)) != 0) {
        ads_arena_free(a);
        return rc < 0 ? rc : 0; /* already there */
    }
    unsigned char idb[4];
    if (!rc && !(rc = next_index_id(txn, &ix.id, err))) {
        ads_index__be32(idb, ix.id);
        if (!(rc = ads_db__meta_put(txn, (const char *)rk, rlen, idb, 4, err)) &&
            !(rc = ads_db__format_indexed(txn, err)) &&
            !(rc = ix.nattrs > 1 ? ads_db__format_composite(txn, err) : 0))
            rc = build(txn, t, &ix, err);
    }
    ads_arena_free(a);
    if (rc)
        return rc;
    txn->indexes_changed = true;
    return ads_types__changed(txn, err);
}

/* Drop the index of registry name reg (len bytes) on t, if there is one. */
static int drop(ads_txn *txn, const ads_type *t, const char *reg, size_t len, ads_error *err)
{
    unsigned char rk[sizeof ADS_META_INDEX_PREFIX + 4 + ADS_INDEX_NAME_MAX];
    size_t rlen = reg_key(rk, t->id, reg, len);
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

/* Drop what was declares and is does not (on was's type), then create
 * what is declares and was did not (on is's type). */
static int apply(ads_txn *txn, const decl *was, const decl *is, ads_error *err)
{
    const ads_type *t;
    int rc = 0;
    for (size_t i = 0; i < was->n && !rc; i++) {
        if (decl_has(is, was->reg[i], was->len[i]))
            continue;
        rc = ads_types__by_name(&t, txn, was->ft.u.s.p, was->ft.u.s.len, err);
        if (rc == ADS_ENOTFOUND) {
            rc = 0; /* the type is gone: nothing to drop, but what is declared
                     * now is refused below as on a fresh record */
            break;
        }
        if (!rc)
            rc = drop(txn, t, was->reg[i], was->len[i], err);
    }
    for (size_t i = 0; i < is->n && !rc; i++) {
        if (decl_has(was, is->reg[i], is->len[i]))
            continue;
        if (!(rc = ads_types__by_name(&t, txn, is->ft.u.s.p, is->ft.u.s.len, err)))
            rc = create(txn, t, is->reg[i], is->len[i], err);
    }
    return rc;
}

int ads_index__declared(ads_txn *txn, const unsigned char *old, size_t olen,
                        const unsigned char *now, size_t nlen, ads_error *err)
{
    ads_arena *a = ads_arena_new();
    decl *d = malloc(2 * sizeof *d);
    int rc = 0;
    if (!a || !d) {
        rc = ads_error_set(err, ADS_ENOMEM, "out of memory");
        goto out;
    }
    d[0].n = d[1].n = 0;
    if ((old && (rc = decl_of(&d[0], ads_txn__names(txn), old, olen, false, a, err))) ||
        (now && (rc = decl_of(&d[1], ads_txn__names(txn), now, nlen, true, a, err))))
        goto out;
    bool same = d[0].n == d[1].n;
    for (size_t i = 0; same && i < d[0].n; i++)
        same = decl_has(&d[1], d[0].reg[i], d[0].len[i]);
    if (same)
        goto out;
    /* building and dropping write the index table directly */
    if (!(rc = ads_index__flush(txn, err)))
        rc = apply(txn, &d[0], &d[1], err);
out:
    free(d);
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
            if (t->indexes[i].nattrs > 1)
                r = ads_db__format_composite(txn, err);
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
