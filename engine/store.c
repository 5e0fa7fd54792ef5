/*
 * engine/store.c: writing the timeline (shared/spec/datastore.md section 3).
 *
 * Every write appends a row. A row that becomes latest replaces the record's
 * entry in `latest`, and the row it replaces moves to `history` under its
 * (_Timestamp, __SystemTimestamp); a row dated before the latest one goes
 * straight into `history`. Merging works on bytes: rows are canonical
 * MessagePack maps sorted by folded name, so the new row is a merge of two
 * sorted lists of raw entries (the previous row's and the given record's),
 * with nothing decoded but the key attributes and the timeline attributes.
 *
 * Rules this file applies where the spec leaves a choice (docs/storage.md):
 *   - a row without _Timestamp is dated now, or at the latest row's
 *     _Timestamp if that is later, so it always becomes latest;
 *   - a row dated in the past merges with the row in effect at its date;
 *   - key attributes must be values (not expressions), and never undefined,
 *     error or NaN; UPDATE cannot change them.
 */
#include <math.h>
#include <msgpack.h>
#include <stdio.h>
#include <string.h>

#include "engine/engine_int.h"

/* ---- finding rows ---- */

int ads_store__find_at(ads_txn *txn, MDB_cursor *cur, const unsigned char *full, size_t flen,
                       unsigned char *stored, size_t *slen, MDB_val *val, ads_error *err)
{
    for (unsigned c = 0; c < 256; c++) {
        *slen = ads_key__stored(stored, full, flen, c);
        MDB_val k = {*slen, stored};
        int rc = cur ? mdb_cursor_get(cur, &k, val, MDB_SET)
                     : mdb_get(txn->txn, txn->db->latest, &k, val);
        /* A positioned cursor answers from its own page when the key falls
         * within it, trusting LMDB to have kept the cursor right through
         * the transaction's puts and deletes (fixes to that bookkeeping
         * came after 0.9.24). A record taken for new would lose its row
         * from history, so "not found" through the cursor is asked again
         * from the root: only new records pay for it. */
        if (rc == MDB_NOTFOUND && cur) {
            k.mv_size = *slen;
            k.mv_data = stored;
            rc = mdb_get(txn->txn, txn->db->latest, &k, val);
        }
        if (rc == MDB_NOTFOUND)
            return 0;
        if (rc)
            return ads_db__lmdb(txn, err, rc, "reading a record");
        if (flen <= ADS_KEY_INLINE_MAX)
            return 1;
        row_env env;
        if ((rc = ads_row__parse(&env, stored, *slen, val->mv_data, val->mv_size,
                                 "a record with a long key", err)))
            return rc;
        if (env.full_key_len == flen && memcmp(env.full_key, full, flen) == 0)
            return 1;
        /* a different key with the same prefix and hash: try the next slot */
    }
    return ads_error_set(err, ADS_ELIMIT, "too many long keys share a hash");
}

int ads_store__find(ads_txn *txn, const unsigned char *full, size_t flen, unsigned char *stored,
                    size_t *slen, MDB_val *val, ads_error *err)
{
    return ads_store__find_at(txn, NULL, full, flen, stored, slen, val, err);
}

int ads_store__latest(ads_txn *txn, const ads_row *row, unsigned char *skey, size_t *slen,
                      row_env *env, ads_error *err)
{
    MDB_val lv;
    int found = ads_store__find(txn, row->key, row->key_len, skey, slen, &lv, err);
    if (found <= 0)
        return found;
    int rc = ads_row__parse(env, skey, *slen, lv.mv_data, lv.mv_size, row->type->name, err);
    return rc ? rc : 1;
}

/* The history row of the record at stored key skey in effect at ts: the
 * last with _Timestamp <= ts, made whole, its row copied into out (the
 * history cursor's buffers go with it). 1 with *env; 0 none. */
static int find_before(ads_txn *txn, const unsigned char *skey, size_t slen, double ts,
                       row_env *env, ads_buf *out, const char *where, ads_error *err)
{
    unsigned char seek[ADS_KEY_INLINE_MAX + 16];
    memcpy(seek, skey, slen);
    ads_key__sortable_double(seek + slen, ts);
    memset(seek + slen + 8, 0xff, 8);
    ads_hrows h;
    int rc = ads_hrows__open(&h, txn, err);
    if (rc)
        return rc;
    rc = ads_hrows__before(&h, seek, slen + 16, err);
    if (rc == 1 && (h.k.mv_size != slen + 16 || memcmp(h.k.mv_data, skey, slen) != 0))
        rc = 0;
    if (rc == 1 && !(rc = ads_hrows__row(&h, env, where, err))) {
        ads_buf_clear(out);
        ads_buf_add(out, env->data, env->len);
        env->data = (const unsigned char *)out->p;
        rc = out->failed ? ads_error_set(err, ADS_ENOMEM, "out of memory") : 1;
    }
    ads_hrows__close(&h);
    return rc;
}

/* ---- the pieces of a record being stored ---- */

static bool is_nil(const row_entry *e)
{
    return e->value_len == 1 && e->value[0] == 0xc0;
}

static int buf_write(void *data, const char *p, size_t n)
{
    ads_buf *b = data;
    ads_buf_add(b, p, n);
    return b->failed ? -1 : 0;
}

/* A row entry for name = v, its bytes in arena a. */
static int make_entry(row_entry *out, const char *name, size_t len, const ads_value *v,
                      ads_arena *a, ads_error *err)
{
    ads_buf b = ADS_BUF_INIT;
    msgpack_packer pk;
    msgpack_packer_init(&pk, &b, buf_write);
    msgpack_pack_str(&pk, len);
    msgpack_pack_str_body(&pk, name, len);
    size_t vat = b.len;
    int rc = ads_msgpack_encode_value(&b, v, err);
    if (!rc && b.failed)
        rc = ads_error_set(err, ADS_ENOMEM, "out of memory");
    unsigned char *p = rc ? NULL : ads_arena_alloc(a, b.len);
    if (!rc && !p)
        rc = ads_error_set(err, ADS_ENOMEM, "out of memory");
    if (!rc) {
        memcpy(p, b.p, b.len);
        out->raw = p;
        out->raw_len = b.len;
        out->name = p + (vat - len);
        out->name_len = len;
        out->value = p + vat;
        out->value_len = b.len - vat;
        out->id = ADS_ROW_NO_ID;
    }
    ads_buf_free(&b);
    return rc;
}

/* Whether two entries' names are the same bytes (not only the same folded:
 * a name keeps the spelling given last, and its id is that spelling's). */
static bool spelled_alike(const row_entry *a, const row_entry *b)
{
    return a->name_len == b->name_len && memcmp(a->name, b->name, a->name_len) == 0;
}

/* Ids for the n entries of m that have none, as ads_names__encode would
 * give them: 0, 1 when a name gets none (the row then keeps names), or an
 * error. */
static int entry_ids(ads_txn *txn, row_entry *m, size_t n, ads_error *err)
{
    /* synced even when every entry has its id: the shape kept after the
     * write reads the published names */
    int sr = ads_names__sync(txn, err);
    if (sr)
        return sr;
    for (size_t k = 0; k < n; k++) {
        int rc;
        if (m[k].id == ADS_ROW_NO_ID &&
            (rc = ads_names__id(txn, k, (const char *)m[k].name, m[k].name_len, &m[k].id, err)))
            return rc;
    }
    return 0;
}

/*
 * Merge: base's entries (may be NULL) overlaid with given's, then extra
 * (entries to add when given lacks them); given entries that are nil remove
 * the attribute; timeline attributes are dropped. Into out as the row the
 * store keeps: with attribute ids (*ids true; the entries' own where they
 * have them, so a stored row's names are not looked up again), or with
 * names where a name gets no id. *sig: the signature of the row's names.
 */
static int merge(ads_buf *out, bool *ids, ads_txn *txn, const row_entry *base, size_t nb,
                 const row_entry *given, size_t ng, const row_entry *extra, size_t ne,
                 uint64_t *sig, ads_arena *a, ads_error *err)
{
    size_t cap = nb + ng + ne;
    row_entry *m = ads_arena_alloc(a, (cap ? cap : 1) * sizeof *m);
    if (!m)
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    size_t i = 0, j = 0, x = 0, n = 0;
    while (i < nb || j < ng || x < ne) {
        /* the smallest name among the three heads */
        const row_entry *pick = NULL;
        int src = -1;
        if (i < nb) {
            pick = &base[i];
            src = 0;
        }
        uint64_t same_id = ADS_ROW_NO_ID; /* the replaced entry's, same spelling */
        if (j < ng && (!pick || ads_row__name_cmp(given[j].name, given[j].name_len, pick->name,
                                                  pick->name_len) <= 0)) {
            if (pick && ads_row__name_cmp(given[j].name, given[j].name_len, pick->name,
                                          pick->name_len) == 0) {
                i++; /* given replaces base */
                same_id = spelled_alike(&given[j], pick) ? pick->id : ADS_ROW_NO_ID;
            }
            pick = &given[j];
            src = 1;
        }
        if (x < ne) {
            int c = pick ? ads_row__name_cmp(extra[x].name, extra[x].name_len, pick->name,
                                             pick->name_len)
                         : -1;
            if (c < 0) {
                pick = &extra[x];
                src = 2;
                same_id = ADS_ROW_NO_ID; /* a name of its own, whatever came before */
            } else if (c == 0 && src != 1) {
                i += src == 0; /* extra replaces base */
                same_id = src == 0 && spelled_alike(&extra[x], pick) ? pick->id : ADS_ROW_NO_ID;
                pick = &extra[x];
                src = 2;
            } else if (c == 0) {
                x++; /* given wins over extra */
            }
        }
        if (src == 0)
            i++;
        else if (src == 1)
            j++;
        else
            x++;
        if (src != 0 && is_nil(pick))
            continue;
        if (ads_row__timeline_attr((const char *)pick->name, pick->name_len))
            continue;
        m[n] = *pick;
        if (m[n].id == ADS_ROW_NO_ID)
            m[n].id = same_id;
        n++;
    }
    /* the signature of the merged row's names, as ads_attrs__note would
     * read it from the row (so it need not open the row again) */
    uint64_t h = ads_attrs__sig_start(n);
    for (size_t k = 0; k < n; k++)
        h = ads_attrs__sig_add(h, (const char *)m[k].name, m[k].name_len);
    *sig = ads_attrs__sig_end(h);
    int rc = entry_ids(txn, m, n, err);
    if (rc < 0)
        return rc;
    *ids = rc == 0;
    return ads_row__from_entries(out, m, n, *ids, err);
}

/* ---- the write ---- */

/*
 * A row's date from the _Timestamp given, in the forms times come in: an
 * AbsTime; seconds since the epoch, an integer or a finite real (as HTCondor
 * writes LastHeardFrom, EnteredCurrentStatus, CompletionDate), dated in UTC;
 * or a string of ISO 8601 text, read as an AbsTime literal is
 * ("2024-05-01T12:00:00Z"; without a zone, the local zone). 0 and *secs,
 * *offset; -1 for anything else. bulk.c checks its rows with it too, so
 * STORE and import accept the same dates.
 */
int ads_store__timestamp(const ads_value *v, double *secs, int32_t *offset);
int ads_store__timestamp(const ads_value *v, double *secs, int32_t *offset)
{
    switch (v->type) {
    case ADS_ABSTIME:
        if (v->u.abs.secs != v->u.abs.secs)
            return -1;
        *secs = v->u.abs.secs;
        *offset = v->u.abs.offset;
        return 0;
    case ADS_INTEGER:
        *secs = (double)v->u.i;
        *offset = 0;
        return 0;
    case ADS_REAL:
        if (!isfinite(v->u.r))
            return -1;
        *secs = v->u.r;
        *offset = 0;
        return 0;
    case ADS_STRING: {
        /* the text between backticks is an AbsTime literal, which the
         * ClassAd parser reads (an ISO date is never long) */
        char lit[80];
        size_t n = v->u.s.len;
        if (n == 0 || n > sizeof lit - 2 || memchr(v->u.s.p, '`', n) ||
            memchr(v->u.s.p, '\n', n))
            return -1;
        lit[0] = '`';
        memcpy(lit + 1, v->u.s.p, n);
        lit[n + 1] = '`';
        ads_arena *a = ads_arena_new();
        const ads_expr *e;
        const ads_value *t;
        int rc = -1;
        if (a && ads_expr_parse(&e, a, lit, n + 2, NULL) == 0 &&
            (t = ads_expr_literal_value(e)) && t->type == ADS_ABSTIME &&
            t->u.abs.secs == t->u.abs.secs) {
            *secs = t->u.abs.secs;
            *offset = t->u.abs.offset;
            rc = 0;
        }
        ads_arena_free(a);
        return rc;
    }
    default:
        return -1;
    }
}

typedef struct write_req {
    const ads_type *t;
    const unsigned char *data; /* the given row (canonical MessagePack) */
    size_t len;
    bool merge;      /* lay over the row in effect (STORE) or replace (UPDATE, DELETE) */
    const unsigned char *expect_key; /* UPDATE: the key the record must keep */
    size_t expect_len;
    const unsigned char *key; /* the record key, when the caller made it already */
    size_t key_len;
    MDB_cursor *cur; /* a cursor on latest to look the record up through, or NULL */
    ads_appender *ap; /* appends to latest through it, or NULL */
    const ads_msgpack_names *given_names; /* a given row keyed by ids: read so, or NULL */
    uint64_t given_sig; /* the signature of the given row's names, or 0 */
    bool given_plain;   /* keyed by ids from plain attributes: nothing to look over */
} write_req;

/* Where a given row holds _Timestamp or _Deleted: at an index, or: */
#define GIVEN_NONE ((size_t)-1) /* not given */
#define GIVEN_MANY ((size_t)-2) /* given more than once (a lookup decides) */

/* What a quick look at the given row finds. */
typedef struct given_info {
    bool special; /* it names _Timestamp or _Deleted */
    bool nil;     /* some attribute is undefined (to be removed) */
    size_t tl[4]; /* where its timeline attributes are, in stored order */
    size_t ntl;
    size_t ts_at, del_at; /* _Timestamp's and _Deleted's index, or GIVEN_* */
} given_info;


/* Look over the given row's names and values without decoding: refuse `__`
 * names, note timeline attributes and undefined values. */
static void note_at(size_t *at, size_t i)
{
    *at = *at == GIVEN_NONE ? i : GIVEN_MANY;
}

/* Attribute i of the given row is timeline attribute which (1-4, as
 * ads_row__timeline_attr says). */
static void note_timeline(given_info *gi, int which, size_t i)
{
    gi->special = true;
    if (which == 1)
        note_at(&gi->ts_at, i);
    else if (which == 4)
        note_at(&gi->del_at, i);
    if (gi->ntl < sizeof gi->tl / sizeof gi->tl[0])
        gi->tl[gi->ntl] = i;
    gi->ntl++; /* more than four (a name given twice): no quick comparison */
}

static int look_over(given_info *gi, const ads_msgpack_view *mv, const ads_type *t, ads_error *err)
{
    gi->special = gi->nil = false;
    gi->ntl = 0;
    gi->ts_at = gi->del_at = GIVEN_NONE;
    for (size_t i = 0; i < mv->n; i++) {
        ads_str name;
        int rc = ads_msgpack_view_name(&name, mv, i, err);
        if (rc)
            return rc;
        if (name.len > ADS_MAX_NAME_LEN)
            return ads_error_set(err, ADS_ELIMIT,
                                 "type %s: attribute name %.40s... has %zu bytes, over the "
                                 "limit of %d",
                                 t->name, name.p, name.len, ADS_MAX_NAME_LEN);
        if (name.len && name.p[0] == '_') {
            if (name.len >= 2 && name.p[1] == '_')
                return ads_error_set(err, ADS_EINVAL,
                                     "type %s: %.*s is maintained by the store and cannot be set",
                                     t->name, (int)(name.len > 60 ? 60 : name.len), name.p);
            int which = ads_row__timeline_attr(name.p, name.len);
            if (which)
                note_timeline(gi, which, i);
        }
        size_t vat = (size_t)((const unsigned char *)name.p + name.len - mv->body);
        size_t end = i + 1 < mv->n ? ads_msgpack__index_off(mv, i + 1) : mv->body_len;
        if (end == vat + 1 && mv->body[vat] == 0xc0)
            gi->nil = true;
    }
    return 0;
}

/* look_over's findings for a row of a known shape, from the shape's ids:
 * its names were looked over when the shape was kept. */
static void shape_over(given_info *gi, const ads_msgpack_view *mv, const uint64_t *ids,
                       const size_t *vat, const size_t *vend)
{
    for (size_t i = 0; i < mv->n; i++) {
        if (vend[i] == vat[i] + 1 && mv->body[vat[i]] == 0xc0)
            gi->nil = true;
        if (ids[i] >= ADS_NAMES_TIMELINE)
            note_timeline(gi, (int)(ids[i] - ADS_NAMES_TIMELINE), i);
    }
}

/* The signature of the given row's names (for Attribute bookkeeping), made
 * only for a row that is stored: most of a snapshot's records are not. The
 * names were read once already by look_over. */
static uint64_t given_sig(const ads_msgpack_view *mv)
{
    uint64_t h = ads_attrs__sig_start(mv->n);
    for (size_t i = 0; i < mv->n; i++) {
        ads_str name;
        if (ads_msgpack_view_name(&name, mv, i, NULL))
            return 0; /* cannot be: look_over read it; 0 has the names read again */
        h = ads_attrs__sig_add(h, name.p, name.len);
    }
    return ads_attrs__sig_end(h);
}

/* What a write that appended nothing tells its caller: the row in effect
 * (kept) stays, under the record key full. */
static void unchanged_info(ads_write_info *info, const ads_type *t, bool latest,
                           const row_env *kept, const ads_buf *full)
{
    if (!info)
        return;
    info->type = t;
    info->created = false;
    info->latest = latest;
    info->changed = false;
    info->ts = kept->ts;
    info->systime_us = kept->systs;
    info->key = (const unsigned char *)full->p;
    info->key_len = full->len;
}

/* Whether a merging write of the given row at ts changes nothing, seen
 * without merging: the latest row (lv, not deleted, dated at or before ts)
 * holds exactly the given attributes other than the timeline ones, byte for
 * byte, so the merge would give it back. 1 unchanged (*latest parsed), 0
 * otherwise or when in doubt: the full path decides, and reports errors. */
static int quick_unchanged(ads_txn *txn, row_env *latest, const ads_msgpack_view *mv,
                           const given_info *gi, const uint64_t *shape_ids, const size_t *vat,
                           const size_t *vend, const MDB_val *lv, const unsigned char *skey,
                           size_t slen, double ts, bool has_ts, ads_arena *a)
{
    ads_msgpack_view lw;
    if (gi->nil || gi->ntl > sizeof gi->tl / sizeof gi->tl[0] ||
        ads_row__parse(latest, skey, slen, lv->mv_data, lv->mv_size, "", NULL) ||
        (latest->flags & ROW_DELETED) || (has_ts && ts < latest->ts) ||
        ads_msgpack__view_open(&lw, latest->data, latest->len, ads_txn__names(txn), a, NULL))
        return 0;
    if (shape_ids && !mv->names)
        return ads_msgpack__same_as_ids(mv, shape_ids, vat, vend, gi->tl, gi->ntl, &lw);
    /* keyed alike (names and names, or ids and ids): the runs between the
     * timeline attributes are compared as bytes */
    return ads_msgpack_view_same_except(mv, gi->tl, gi->ntl, &lw);
}

/* An attribute of the given row as a value: 1 found, 0 absent or undefined.
 * An expression is refused (naming `what`). */
static int given_literal(ads_value *out, const ads_expr *e, const char *name, size_t len,
                         const char *what, const ads_type *t, ads_error *err)
{
    if (e) {
        const ads_value *lit = ads_expr_literal_value(e);
        if (!lit)
            return ads_error_set(err, ADS_EINVAL,
                                 "type %s: %s %.*s must be a value, not an expression", t->name,
                                 what, (int)len, name);
        *out = *lit;
    }
    return out->type == ADS_UNDEFINED ? 0 : 1;
}

static int given_value(ads_value *out, ads_msgpack_view *mv, const char *name, size_t len,
                       const char *what, const ads_type *t, ads_error *err)
{
    const ads_expr *e = NULL;
    int rc = ads_msgpack_view_lookup(out, &e, mv, name, len, err);
    return rc <= 0 ? rc : given_literal(out, e, name, len, what, t, err);
}

/* given_value of a timeline attribute that look_over found at index at. */
static int given_at(ads_value *out, ads_msgpack_view *mv, size_t at, const char *name, size_t len,
                    const ads_type *t, ads_error *err)
{
    if (at == GIVEN_NONE)
        return 0;
    if (at == GIVEN_MANY)
        return given_value(out, mv, name, len, "attribute", t, err);
    ads_str nm;
    const ads_expr *e = NULL;
    int rc = ads_msgpack_view_attr(&nm, out, &e, mv, at, err);
    return rc ? rc : given_literal(out, e, name, len, "attribute", t, err);
}

/* Is key (stored form) above every key of `latest`? Learns the last key
 * at first use. */
static int beyond_last(ads_txn *txn, const unsigned char *key, size_t len, bool *out,
                       ads_error *err)
{
    if (!txn->last_known) {
        MDB_cursor *c;
        MDB_val k, v;
        int rc = mdb_cursor_open(txn->txn, txn->db->latest, &c);
        if (rc)
            return ads_db__lmdb(txn, err, rc, "reading a record");
        rc = mdb_cursor_get(c, &k, &v, MDB_LAST);
        ads_buf_clear(&txn->last_key);
        if (rc == 0)
            ads_buf_add(&txn->last_key, k.mv_data, k.mv_size);
        mdb_cursor_close(c);
        if (rc && rc != MDB_NOTFOUND)
            return ads_db__lmdb(txn, err, rc, "reading a record");
        if (txn->last_key.failed)
            return ads_error_set(err, ADS_ENOMEM, "out of memory");
        txn->last_known = true;
    }
    size_t ll = txn->last_key.len;
    if (ll == 0) {
        *out = true;
        return 0;
    }
    size_t m = len < ll ? len : ll;
    int c = memcmp(key, txn->last_key.p, m);
    *out = c > 0 || (c == 0 && len > ll);
    return 0;
}

/* Append the row to latest (its key past the last) through ap. */
static int append_row(ads_txn *txn, ads_appender *ap, const unsigned char *key, size_t klen,
                      const ads_buf *row, ads_error *err)
{
    int rc;
    if (ap->cur && txn->writes != ap->mark) { /* another write came between */
        mdb_cursor_close(ap->cur);
        ap->cur = NULL;
    }
    if (!ap->cur && (rc = mdb_cursor_open(txn->txn, txn->db->latest, &ap->cur))) {
        ap->cur = NULL;
        return ads_db__lmdb(txn, err, rc, "writing");
    }
    MDB_val k = {klen, (void *)key}, v = {row->len, row->p};
    txn->writes++;
    rc = mdb_cursor_put(ap->cur, &k, &v, MDB_APPEND);
    ap->mark = txn->writes;
    return rc ? ads_db__lmdb(txn, err, rc, "writing") : 0;
}

static void note_last(ads_txn *txn, const unsigned char *key, size_t len)
{
    ads_buf_clear(&txn->last_key);
    ads_buf_add(&txn->last_key, key, len);
    if (txn->last_key.failed)
        txn->last_known = false;
}

static void hist_key(unsigned char *hkey, const unsigned char *skey, size_t slen, double ts,
                     int64_t systs)
{
    memcpy(hkey, skey, slen);
    ads_key__sortable_double(hkey + slen, ts);
    for (int i = 0; i < 8; i++)
        hkey[slen + 8 + i] = (unsigned char)((uint64_t)systs >> (56 - 8 * i));
}

/* The counters a write moves. */
static int counts_for(ads_txn *txn, const ads_type *t, bool existed, bool was_deleted,
                      bool to_latest, bool now_deleted, ads_error *err)
{
    int64_t records = 0, deleted = 0, history = 0;
    if (to_latest) {
        if (!existed) {
            records = 1;
            deleted = now_deleted;
        } else {
            history = 1;
            deleted = (int64_t)now_deleted - (int64_t)was_deleted;
        }
    } else {
        history = 1;
    }
    return ads_types__count(txn, t->id, records, deleted, history, err);
}

/* An increment-keyed type's generated key was taken (by a record stored
 * before explicit keys moved the counter, or restored from such a store):
 * move the counter past the greatest increment id the type holds, found by
 * one seek (the ids sort after the type id by their 64-bit number). */
static int skip_taken_luids(ads_txn *txn, const ads_type *t, ads_error *err)
{
    unsigned char seek[4 + 1 + 16 + 1];
    ads_buf pre = ADS_BUF_INIT;
    ads_key__typeid(&pre, t->id);
    if (pre.failed || pre.len != 4) {
        ads_buf_free(&pre);
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    }
    memcpy(seek, pre.p, 4);
    ads_buf_free(&pre);
    seek[4] = KEY_IDENT;
    memset(seek + 5, 0, 8);
    memset(seek + 13, 0xff, 9);
    MDB_val k = {sizeof seek, seek}, v;
    int rc = ads_db__key_before(txn, txn->db->latest, &k, &v);
    if (rc == MDB_NOTFOUND)
        return 0;
    if (rc)
        return ads_db__lmdb(txn, err, rc, "reading a record");
    if (k.mv_size != 4 + 17 || memcmp(k.mv_data, seek, 13) != 0)
        return 0;
    const unsigned char *p = (const unsigned char *)k.mv_data + 13;
    uint64_t lo = 0;
    for (int i = 0; i < 8; i++)
        lo = lo << 8 | p[i];
    ads_value top = ads_ident(ads_luid(lo));
    return ads_seq__note_key(txn, t, &top, err);
}

/* The full record key of the given row into full (cleared by the caller):
 * the key attributes given, or a generated value for a missing one (then
 * *extra is its entry and *ne 1). A given value of the generated key
 * attribute moves the type's counter past it. */
static int build_key(ads_buf *full, ads_txn *txn, const write_req *r, ads_msgpack_view *mv,
                     double ts, row_entry *extra, size_t *ne, ads_arena *a, ads_error *err)
{
    const ads_type *t = r->t;
    ads_value v;
    int rc;
    if (r->key && !t->autogen) {
        /* the key attributes' values, checked by whoever encoded them */
        ads_buf_add(full, r->key, r->key_len);
        return full->failed ? ads_error_set(err, ADS_ENOMEM, "out of memory") : 0;
    }
    ads_key__typeid(full, t->id);
    for (size_t i = 0; i < t->nkeys; i++) {
        rc = given_value(&v, mv, t->keys[i].p, t->keys[i].len, "key attribute", t, err);
        if (rc < 0)
            return rc;
        if (rc == 1) {
            if ((rc = ads_key__value(full, &v, NULL, err))) {
                /* again, for a message that names the attribute */
                char what[240];
                snprintf(what, sizeof what, "%.*s of type %s", (int)t->keys[i].len,
                         t->keys[i].p, t->name);
                return ads_key__value(full, &v, what, err);
            }
            if (t->autogen && (rc = ads_seq__note_key(txn, t, &v, err)))
                return rc;
        } else if (t->autogen && !r->expect_key) {
            if ((rc = ads_seq__type_value(txn, t, ts, &v, err)) ||
                (rc = make_entry(extra, t->keys[i].p, t->keys[i].len, &v, a, err)) ||
                (rc = ads_key__value(full, &v, "Id", err)))
                return rc;
            *ne = 1;
        } else {
            return ads_error_set(err, ADS_EINVAL, "a record of type %s needs key attribute %.*s",
                                 t->name, (int)t->keys[i].len, t->keys[i].p);
        }
    }
    if (full->failed)
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    if (full->len > ADS_KEY_MAX_LEN)
        return ads_error_set(err, ADS_ELIMIT, "type %s: a key of %zu bytes is over the 1 MiB limit",
                             t->name, full->len);
    if (r->expect_key &&
        (full->len != r->expect_len || memcmp(full->p, r->expect_key, full->len) != 0))
        return ads_error_set(err, ADS_EINVAL, "type %s: the key attributes of a record cannot change",
                             t->name);
    return 0;
}

/* The entries of the given row, with the ids of its shape when it has one
 * (shape_ids; a timeline attribute's stands above every id and is left
 * out). */
static int given_entries(row_entry **out, size_t *n, const write_req *r,
                         const uint64_t *shape_ids, ads_arena *a, ads_error *err)
{
    int rc = ads_row__entries(out, n, r->data, r->len, r->given_names, a, err);
    if (rc || !shape_ids)
        return rc;
    for (size_t i = 0; i < *n; i++)
        if (shape_ids[i] < ADS_NAMES_TIMELINE)
            (*out)[i].id = shape_ids[i];
    return 0;
}

/* The new row (*data, *len: a row with names) as the store keeps it, in
 * ws->ids: *data and *len then point there. */
static int to_ids(ads_txn *txn, struct write_scratch *ws, const unsigned char **data,
                  size_t *len, ads_error *err)
{
    ads_buf_clear(&ws->ids);
    int rc = ads_names__encode(txn, &ws->ids, *data, *len, err);
    if (rc)
        return rc;
    *data = (const unsigned char *)ws->ids.p;
    *len = ws->ids.len;
    return 0;
}

/* look_over for a given row keyed by ids (a bulk load's), in one pass over
 * its index: its ids were the store's when the load learnt them, and stay
 * so (an id once committed never changes), so only the timeline
 * attributes' ids (ADS_NAMES_GIVEN_TIMELINE + which) and undefined values
 * are looked for. */
static int ids_over(given_info *gi, ads_txn *txn, const ads_msgpack_view *mv, const ads_type *t,
                    ads_error *err)
{
    uint32_t count = ads_names__count(txn);
    size_t n = mv->n, blen = mv->body_len;
    const unsigned char *b = mv->body;
    for (size_t i = 0; i < n; i++) {
        size_t off = ads_msgpack__index_off(mv, i);
        size_t end = i + 1 < n ? ads_msgpack__index_off(mv, i + 1) : blen;
        uint64_t id = 0;
        bool canon = true;
        unsigned hl = 0;
        if (off < end && end <= blen)
            hl = b[off] <= 0x7f ? (id = b[off], 1)
                                : ads_msgpack__id_head(b + off, end - off, &id, &canon);
        if (!hl || !canon || end - off <= hl)
            return ads_error_set(err, ADS_ECORRUPT,
                                 "type %s: a given row keyed by ids is malformed at attribute %zu",
                                 t->name, i);
        if (end == off + hl + 1 && b[off + hl] == 0xc0)
            gi->nil = true;
        if (id < count)
            continue;
        uint64_t which = id - ADS_NAMES_GIVEN_TIMELINE;
        if (id <= ADS_NAMES_GIVEN_TIMELINE || (which != 1 && which != 4))
            return ads_error_set(err, ADS_ECORRUPT,
                                 "type %s: a given row names attribute id %llu, which the store "
                                 "does not hold",
                                 t->name, (unsigned long long)id);
        note_timeline(gi, (int)which, i);
    }
    return 0;
}

static int do_write(ads_txn *txn, const write_req *r, ads_write_info *info, ads_error *err)
{
    const ads_type *t = r->t;
    if (txn->wdepth >= 4)
        return ads_error_set(err, ADS_ELIMIT, "writes nested too deep (hooks storing records?)");
    struct write_scratch *ws = &txn->ws[txn->wdepth];
    if (!ws->a && !(ws->a = ads_arena_new()))
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    ads_arena *a = ws->a;
    ads_arena_reset(a);
    ads_buf *full = &ws->full, *merged = &ws->merged, *oldrow = &ws->oldrow,
            *newrow = &ws->newrow;
    ads_buf_clear(full);
    ads_buf_clear(merged);
    ads_buf_clear(oldrow);
    ads_buf_clear(newrow);
    txn->wdepth++;
    uint64_t w0 = txn->writes;
    row_entry *given = NULL, *base = NULL, extra;
    size_t ng = 0, nb = 0, ne = 0;
    int rc;
    ads_msgpack_view mv;
    given_info gi = {false, false, {0}, 0, GIVEN_NONE, GIVEN_NONE};
    /* a row with the names of a plain row written before (a load's rows
     * come in a few shapes): its names were looked over then, and have ids */
    const uint64_t *shape_ids = NULL;
    uint64_t sig = 0, merged_sig = 0; /* the names' signature: as given, or merged */
    size_t vat[ADS_NAMES_SHAPE_MAX], vend[ADS_NAMES_SHAPE_MAX];
    if ((rc = r->given_names
                  ? ads_msgpack__view_open(&mv, r->data, r->len, r->given_names, a, err)
                  : ads_msgpack_view_init(&mv, r->data, r->len, a, err)))
        goto cleanup;
    if (mv.names) {
        /* keyed by ids already: a bulk load's row of a shape it has
         * learnt, which needs no shape (its ids are in it); one its
         * encoder made from plain attributes holds nothing to look for */
        if (!r->given_plain && (rc = ids_over(&gi, txn, &mv, t, err)))
            goto cleanup;
        sig = r->given_sig;
    } else if (ads_names__shape(txn, &mv, vat, vend, &shape_ids, &sig)) {
        shape_over(&gi, &mv, shape_ids, vat, vend);
    } else if ((rc = look_over(&gi, &mv, t, err))) {
        goto cleanup;
    }

    /* the timeline attributes given */
    double ts = 0;
    int32_t offset = 0;
    bool has_ts = false, deleted = false;
    ads_value v;
    if (gi.special) {
        if ((rc = given_at(&v, &mv, gi.ts_at, ads_attr__timestamp, 10, t, err)) < 0)
            goto cleanup;
        if (rc == 1) {
            if (ads_store__timestamp(&v, &ts, &offset)) {
                if (v.type == ADS_STRING)
                    rc = ads_error_set(err, ADS_EINVAL,
                                       "type %s: _Timestamp must be an AbsTime, seconds since "
                                       "1970 or ISO 8601 text; \"%.*s\" is not a time",
                                       t->name, (int)(v.u.s.len > 60 ? 60 : v.u.s.len),
                                       v.u.s.p);
                else
                    rc = ads_error_set(err, ADS_EINVAL,
                                       "type %s: _Timestamp must be an AbsTime, seconds since "
                                       "1970 or ISO 8601 text, not %s",
                                       t->name, ads_vtype_name(v.type));
                goto cleanup;
            }
            has_ts = true;
        }
        if ((rc = given_at(&v, &mv, gi.del_at, ads_attr__deleted, 8, t, err)) < 0)
            goto cleanup;
        if (rc == 1) {
            if (v.type != ADS_BOOLEAN) {
                rc = ads_error_set(err, ADS_EINVAL, "type %s: _Deleted must be a boolean, not %s",
                                   t->name, ads_vtype_name(v.type));
                goto cleanup;
            }
            deleted = v.u.b;
        }
        rc = 0;
    }
    if (!has_ts)
        ts = ads_db__now(txn);

    /* the key, and the record as it stands. A generated key that an
     * existing record already has (stored with an explicit key, imported,
     * restored) is generated again: a generated key never overwrites. */
    unsigned char skey[ADS_KEY_INLINE_MAX];
    size_t slen = 0;
    MDB_val lv;
    bool append = false;
    int found = 0;
    for (unsigned tries = 0;; tries++) {
        ads_buf_clear(full);
        ne = 0;
        if ((rc = build_key(full, txn, r, &mv, ts, &extra, &ne, a, err)))
            goto cleanup;
        /* a key past the end of `latest` is new */
        append = false;
        found = 0;
        slen = 0;
        if (full->len <= ADS_KEY_INLINE_MAX) {
            slen = ads_key__stored(skey, (const unsigned char *)full->p, full->len, 0);
            if ((rc = beyond_last(txn, skey, slen, &append, err)))
                goto cleanup;
        }
        if (!append) {
            found = ads_store__find_at(txn, r->cur, (const unsigned char *)full->p, full->len,
                                       skey, &slen, &lv, err);
            if (found < 0) {
                rc = found;
                goto cleanup;
            }
        }
        if (!found || !ne)
            break;
        if (t->method == ADS_ID_INCREMENT && tries == 0 &&
            (rc = skip_taken_luids(txn, t, err)))
            goto cleanup;
        if (tries + 1 >= ADS_MAX_KEYGEN_TRIES) {
            rc = ads_error_set(err, ADS_EEXIST,
                               "type %s: %u generated keys in a row belong to existing records; "
                               "store the record with an explicit key",
                               t->name, (unsigned)ADS_MAX_KEYGEN_TRIES);
            goto cleanup;
        }
    }
    row_env latest = {0};
    if (found && r->merge && !ne && !deleted && !t->keep_unchanged &&
        quick_unchanged(txn, &latest, &mv, &gi, shape_ids, vat, vend, &lv, skey, slen, ts,
                        has_ts, a)) {
        /* the common case of a snapshot: the record as it was */
        unchanged_info(info, t, true, &latest, full);
        rc = 0;
        goto cleanup;
    }
    if (found) {
        /* keep a copy: writes below may move the bytes */
        ads_buf_add(oldrow, lv.mv_data, lv.mv_size);
        if (oldrow->failed) {
            rc = ads_error_set(err, ADS_ENOMEM, "out of memory");
            goto cleanup;
        }
        if ((rc = ads_row__parse(&latest, skey, slen, (const unsigned char *)oldrow->p,
                                 oldrow->len, t->name, err)))
            goto cleanup;
        if (!has_ts && ts < latest.ts) {
            ts = latest.ts;
            offset = latest.offset;
        }
    }
    bool to_latest = !found || ts >= latest.ts;
    const unsigned char *bdata = NULL;
    size_t blen = 0;
    bool base_deleted = true;
    row_env base_env = {0}; /* the row in effect at ts, when bdata is set */
    if (r->merge) {
        if (to_latest && found) {
            base_env = latest;
        } else if (!to_latest) {
            int pr = find_before(txn, skey, slen, ts, &base_env, &ws->base, t->name, err);
            if (pr < 0) {
                rc = pr;
                goto cleanup;
            }
        }
        bdata = base_env.data;
        blen = base_env.len;
        base_deleted = (base_env.flags & ROW_DELETED) != 0;
    }
    const unsigned char *ndata;
    size_t nlen;
    bool merged_ids = false; /* the merge wrote the row with ids */
    bool use_base = bdata && !base_deleted;
    if (!use_base && !ne && !gi.special && !gi.nil) {
        /* the given row is the new row as it is */
        ndata = r->data;
        nlen = r->len;
    } else {
        if ((rc = given_entries(&given, &ng, r, shape_ids, a, err)) ||
            (use_base && (rc = ads_row__entries(&base, &nb, bdata, blen, ads_txn__names(txn), a,
                                                err))) ||
            (rc = merge(merged, &merged_ids, txn, base, nb, given, ng, ne ? &extra : NULL, ne,
                        &merged_sig, a, err)))
            goto cleanup;
        ndata = (const unsigned char *)merged->p;
        nlen = merged->len;
    }
    /* the row as the store keeps it: attribute names as ids */
    bool as_given = ndata == r->data; /* the given names: given_sig is theirs */
    if (as_given && mv.names) {
        /* keyed by ids as given: the row as the store keeps it */
    } else if (as_given && shape_ids) {
        ads_buf_clear(&ws->ids);
        if ((rc = ads_msgpack__ids_row(&ws->ids, &mv, shape_ids, vat, vend, err)))
            goto cleanup;
        ndata = (const unsigned char *)ws->ids.p;
        nlen = ws->ids.len;
    } else if (!merged_ids && (rc = to_ids(txn, ws, &ndata, &nlen, err))) {
        goto cleanup;
    } else if (as_given) {
        sig = given_sig(&mv);
        ads_names__keep_shape(txn, &mv, sig);
    } else if (gi.special && !shape_ids) {
        /* a snapshot's rows name _Timestamp: their shape spares the next
         * row of these names look_over and lets quick_unchanged compare by
         * ids (the tag is only ever used for a row stored as given) */
        ads_names__keep_shape(txn, &mv, 0);
    }

    /* A store that changes nothing appends nothing: the row in effect at its
     * date stays in effect, so every timeline answer is what it was. Rows
     * are canonical MessagePack (one encoding per value, names sorted) and
     * hold no timeline attribute, so the row is unchanged exactly when its
     * bytes and _Deleted are. Bytes are stricter than `===`: a new spelling
     * ("ABC" for "abc", 1.0 for 1, another zone of one instant) is a change,
     * or the store would lose it. */
    if (bdata && !t->keep_unchanged && deleted == base_deleted && nlen == blen &&
        memcmp(ndata, bdata, nlen) == 0) {
        unchanged_info(info, t, to_latest, &base_env, full);
        rc = 0;
        goto cleanup;
    }

    if (t->id == ADS_TYPEID_TYPE && to_latest &&
        (rc = ads_types__declare(txn, ndata, nlen, deleted, err)))
        goto cleanup;

    int64_t systs;
    if ((rc = ads_db__next_systs(txn, &systs, err)))
        goto cleanup;

    if (t->has_hooks && t->hooks.trigger) {
        ads_row oldr, newr;
        row_env ne_env = {deleted ? ROW_DELETED : 0, ts, offset, systs, NULL, 0, ndata, nlen, 0};
        ads_row__fill(&newr, txn, t, skey, slen, &ne_env, to_latest, a);
        row_env be = latest;
        if (found)
            ads_row__fill(&oldr, txn, t, skey, slen, &be, true, a);
        const ads_record *rep = NULL;
        rc = t->hooks.trigger(t->hooks.ctx, txn, found ? &oldr : NULL, &newr, &rep, a, err);
        if (rc) {
            if (rc > 0)
                rc = ads_error_set(err, ADS_EINVAL, "type %s: the trigger refused the write",
                                   t->name);
            goto cleanup;
        }
        if (rep) {
            ads_buf replaced = ADS_BUF_INIT;
            row_entry *re;
            size_t nr;
            if ((rc = ads_msgpack_encode_record(&replaced, rep, err)) ||
                (rc = ads_row__entries(&re, &nr, (const unsigned char *)replaced.p, replaced.len,
                                       NULL, a, err))) {
                ads_buf_free(&replaced);
                goto cleanup;
            }
            ads_buf_clear(merged);
            rc = merge(merged, &merged_ids, txn, NULL, 0, re, nr, NULL, 0, &merged_sig, a, err);
            ads_buf_free(&replaced);
            if (rc)
                goto cleanup;
            ndata = (const unsigned char *)merged->p;
            nlen = merged->len;
            if (!merged_ids && (rc = to_ids(txn, ws, &ndata, &nlen, err)))
                goto cleanup;
            as_given = false;
        }
    }

    /* write */
    const unsigned char *fk = full->len > ADS_KEY_INLINE_MAX ? (const unsigned char *)full->p
                                                             : NULL;
    unsigned flags = deleted ? ROW_DELETED : 0;
    unsigned char hkey[ADS_KEY_INLINE_MAX + 16];
    if (to_latest) {
        if (found) {
            /* the latest row moves to history (a difference from its keyframe) */
            hist_key(hkey, skey, slen, latest.ts, latest.systs);
            if ((rc = ads_hist__put(txn, hkey, slen, latest.flags, latest.ts, latest.offset,
                                    latest.systs, latest.full_key, latest.full_key_len,
                                    latest.data, latest.len, &ws->hist, &ws->base, err)))
                goto cleanup;
        }
        if ((rc = ads_db__format_rows(txn, err)))
            goto cleanup;
        ads_row__build(newrow, skey, slen, flags, ts, offset, systs, fk, full->len, ndata, nlen);
        if (newrow->failed) {
            rc = ads_error_set(err, ADS_ENOMEM, "out of memory");
            goto cleanup;
        }
        if (append && r->ap && !t->has_hooks)
            rc = append_row(txn, r->ap, skey, slen, newrow, err);
        else
            rc = ads_db__put(txn, txn->db->latest, skey, slen, newrow->p, newrow->len,
                             append ? MDB_APPEND : 0, err);
        if (rc)
            goto cleanup;
        if (append)
            note_last(txn, skey, slen);
        /* secondary indexes follow the latest row, in this transaction */
        if ((rc = ads_index__row(txn, t, skey, slen, found ? latest.data : NULL,
                                 found ? latest.len : 0, ndata, nlen, a, err)))
            goto cleanup;
        bool was_live = found && !(latest.flags & ROW_DELETED);
        if (t->id == ADS_TYPEID_ATTRIBUTE &&
            (rc = ads_index__declared(txn, was_live ? latest.data : NULL,
                                      was_live ? latest.len : 0, deleted ? NULL : ndata,
                                      deleted ? 0 : nlen, err)))
            goto cleanup;
    } else {
        hist_key(hkey, skey, slen, ts, systs);
        if ((rc = ads_hist__put(txn, hkey, slen, flags, ts, offset, systs, fk, full->len, ndata,
                                nlen, &ws->hist, &ws->base, err)))
            goto cleanup;
    }
    bool was_deleted = found && (latest.flags & ROW_DELETED);
    if ((rc = counts_for(txn, t, found, was_deleted, to_latest, deleted, err)))
        goto cleanup;
    /* HistoryRetention: the record's rows that aged past the cut go as it is
     * written, and records of its type deleted before the cut after it, a
     * bounded number of each per write (docs/storage.md, "Retention") */
    if (t->retention > 0 && (rc = ads_retention__on_write(txn, t, skey, slen, err)))
        goto cleanup;
    if (!deleted &&
        (rc = ads_attrs__note(txn, t, ndata, nlen, as_given ? sig : merged_sig, err)))
        goto cleanup;
    if (t->has_hooks && t->hooks.notify &&
        (rc = ads_hooks__note(txn, t, deleted ? ADS_CHANGE_DELETED : ADS_CHANGE_STORED, ndata,
                              nlen, ts, systs, to_latest, err)))
        goto cleanup;
    if (info) {
        info->type = t;
        info->created = to_latest && (!found || was_deleted) && !deleted;
        info->latest = to_latest;
        info->changed = true;
        info->ts = ts;
        info->systime_us = systs;
        info->key = (const unsigned char *)full->p;
        info->key_len = full->len;
    }
cleanup:
    txn->wdepth--;
    /* a write that failed half way (the old row moved to history, the new
     * one not written) must not commit: only abort is left */
    return ads_db__failed_write(txn, w0, rc);
}

/* ---- the entry points ---- */

/* The type a record names in AdType. */
static int record_type(const ads_type **out, ads_txn *txn, const ads_record *rec, ads_error *err)
{
    const ads_expr *x = ads_record_lookup(rec, "AdType", 6);
    const ads_value *v = x ? ads_expr_literal_value(x) : NULL;
    if (!x)
        return ads_error_set(err, ADS_EINVAL, "a record needs AdType, the name of its type");
    if (!v || v->type != ADS_STRING)
        return ads_error_set(err, ADS_EINVAL, "AdType must be a string naming the type, not %s",
                             v ? ads_vtype_name(v->type) : "an expression");
    return ads_types__by_name(out, txn, v->u.s.p, v->u.s.len, err);
}

/* Store a canonical MessagePack row of type t: laid over the row in effect
 * (merge, as STORE) or replacing it (a bulk load of whole rows). key (may be
 * NULL): the record key (ads_key__value of each key attribute after the
 * type id, at most ADS_KEY_MAX_LEN bytes) that the row's key attributes
 * give, made by the caller (a bulk load sorting its batch by it). */
int ads_store__encoded(ads_txn *txn, const ads_type *t, const unsigned char *data, size_t len,
                       const unsigned char *key, size_t key_len, bool merge, MDB_cursor *cur,
                       ads_appender *ap, bool by_ids, bool plain, uint64_t sig,
                       ads_write_info *info, ads_error *err)
{
    const ads_msgpack_names *given_names = by_ids ? &txn->given_nm : NULL;
    write_req r = {t, data, len, merge, NULL, 0, key, key_len, cur, ap, given_names, sig,
                   by_ids && plain};
    return do_write(txn, &r, info, err);
}

int ads_txn_store(ads_txn *txn, const ads_record *rec, ads_write_info *info, ads_error *err)
{
    const ads_type *t;
    int rc;
    if (!txn || !rec)
        return ads_error_set(err, ADS_EINVAL, "NULL argument");
    if ((rc = ads_db__need_write(txn, "storing a record", err)) ||
        (rc = record_type(&t, txn, rec, err)))
        return rc;
    ads_arena *a = NULL;
    if (t->has_hooks && t->hooks.prestore) {
        const ads_record *rep = NULL;
        if (!(a = ads_arena_new()))
            return ads_error_set(err, ADS_ENOMEM, "out of memory");
        rc = t->hooks.prestore(t->hooks.ctx, txn, rec, &rep, a, err);
        if (rc) {
            ads_arena_free(a);
            return rc < 0 ? rc : ads_error_set(err, ADS_EINVAL, "type %s: the record was refused",
                                               t->name);
        }
        if (rep) {
            const ads_type *t2;
            if ((rc = record_type(&t2, txn, rep, err))) {
                ads_arena_free(a);
                return rc;
            }
            if (t2 != t) {
                ads_arena_free(a);
                return ads_error_set(err, ADS_EINVAL,
                                     "type %s: a pre-store hook may not change the type", t->name);
            }
            rec = rep;
        }
    }
    ads_buf b = ADS_BUF_INIT;
    rc = ads_msgpack_encode_record(&b, rec, err);
    if (!rc)
        rc = ads_store__encoded(txn, t, (const unsigned char *)b.p, b.len, NULL, 0, true, NULL,
                                NULL, false, false, 0, info, err);
    ads_buf_free(&b);
    ads_arena_free(a);
    return rc;
}

int ads_txn_put_row(ads_txn *txn, const ads_row *row, const ads_record *rec,
                    ads_write_info *info, ads_error *err)
{
    const ads_type *t;
    int rc;
    if (!txn || !row || !rec)
        return ads_error_set(err, ADS_EINVAL, "NULL argument");
    if ((rc = ads_db__need_write(txn, "updating a record", err)) ||
        (rc = record_type(&t, txn, rec, err)))
        return rc;
    if (t->id != row->type->id)
        return ads_error_set(err, ADS_EINVAL, "a record of type %s cannot become type %s",
                             row->type->name, t->name);
    ads_buf b = ADS_BUF_INIT, key = ADS_BUF_INIT;
    ads_buf_add(&key, row->key, row->key_len); /* the row's memory may move */
    rc = ads_msgpack_encode_record(&b, rec, err);
    if (!rc && (b.failed || key.failed))
        rc = ads_error_set(err, ADS_ENOMEM, "out of memory");
    if (!rc) {
        write_req r = {t, (const unsigned char *)b.p, b.len, false, (const unsigned char *)key.p,
                       key.len};
        rc = do_write(txn, &r, info, err);
    }
    ads_buf_free(&b);
    ads_buf_free(&key);
    return rc;
}

int ads_txn_delete(ads_txn *txn, const ads_row *row, ads_write_info *info, ads_error *err)
{
    int rc;
    if (!txn || !row)
        return ads_error_set(err, ADS_EINVAL, "NULL argument");
    if ((rc = ads_db__need_write(txn, "deleting a record", err)))
        return rc;
    if (info)
        memset(info, 0, sizeof *info);
    /* read the latest row again: row may be a history row or stale */
    unsigned char skey[ADS_KEY_INLINE_MAX];
    size_t slen;
    row_env cur;
    int found = ads_store__latest(txn, row, skey, &slen, &cur, err);
    if (found <= 0)
        return found;
    if (cur.flags & ROW_DELETED) {
        if (info)
            info->type = row->type;
        return 0;
    }
    if (row->type->id == ADS_TYPEID_TYPE &&
        (rc = ads_types__may_remove(txn, cur.data, cur.len, err)))
        return rc;
    /* a copy of the latest row's attributes, plus _Deleted = true */
    ads_buf b = ADS_BUF_INIT, key = ADS_BUF_INIT;
    ads_buf_add(&key, row->key, row->key_len);
    ads_arena *a = ads_arena_new();
    row_entry *ent, del;
    size_t n;
    ads_value t = ads_bool(true);
    if (!a)
        rc = ads_error_set(err, ADS_ENOMEM, "out of memory");
    else if (!(rc = ads_row__entries(&ent, &n, cur.data, cur.len, ads_txn__names(txn), a,
                                     err)) &&
             !(rc = make_entry(&del, ads_attr__deleted, 8, &t, a, err))) {
        /* the latest row's entries with _Deleted = true in its sorted place */
        row_entry *all = ads_arena_alloc(a, (n + 1) * sizeof *all);
        if (!all) {
            rc = ads_error_set(err, ADS_ENOMEM, "out of memory");
        } else {
            size_t k = 0;
            bool put = false;
            for (size_t i = 0; i < n; i++) {
                if (!put && ads_row__name_cmp(del.name, del.name_len, ent[i].name,
                                              ent[i].name_len) < 0) {
                    all[k++] = del;
                    put = true;
                }
                all[k++] = ent[i];
            }
            if (!put)
                all[k++] = del;
            rc = ads_row__from_entries(&b, all, k, false, err);
        }
    }
    if (!rc && (b.failed || key.failed))
        rc = ads_error_set(err, ADS_ENOMEM, "out of memory");
    if (!rc) {
        write_req r = {row->type, (const unsigned char *)b.p, b.len, false,
                       (const unsigned char *)key.p, key.len};
        rc = do_write(txn, &r, info, err);
    }
    ads_buf_free(&b);
    ads_buf_free(&key);
    ads_arena_free(a);
    return rc;
}

static int purge(ads_txn *txn, const ads_row *row, ads_error *err)
{
    int rc;
    if (!txn || !row)
        return ads_error_set(err, ADS_EINVAL, "NULL argument");
    if ((rc = ads_db__need_write(txn, "purging a record", err)))
        return rc;
    const ads_type *t = row->type;
    unsigned char skey[ADS_KEY_INLINE_MAX];
    size_t slen;
    row_env cur;
    int found = ads_store__latest(txn, row, skey, &slen, &cur, err);
    if (found <= 0)
        return found;
    if (t->id == ADS_TYPEID_TYPE && (rc = ads_types__may_remove(txn, cur.data, cur.len, err)))
        return rc;
    if (t->id == ADS_TYPEID_ATTRIBUTE && (rc = ads_attrs__invalidate(txn, err)))
        return rc;
    if (t->has_hooks && t->hooks.notify &&
        (rc = ads_hooks__note(txn, t, ADS_CHANGE_PURGED, cur.data, cur.len, 0, 0, false, err)))
        return rc;
    bool was_deleted = (cur.flags & ROW_DELETED) != 0;
    if (t->nindexes || txn->indexes_changed || t->id == ADS_TYPEID_ATTRIBUTE) {
        /* the row's bytes are LMDB's until the next write: keep a copy */
        unsigned char *copy = malloc(cur.len ? cur.len : 1);
        if (!copy)
            return ads_error_set(err, ADS_ENOMEM, "out of memory");
        memcpy(copy, cur.data, cur.len);
        rc = ads_index__row(txn, t, skey, slen, copy, cur.len, NULL, 0, NULL, err);
        if (!rc && t->id == ADS_TYPEID_ATTRIBUTE && !was_deleted)
            rc = ads_index__declared(txn, copy, cur.len, NULL, 0, err);
        free(copy);
        if (rc)
            return rc;
    }
    if ((rc = ads_db__del(txn, txn->db->latest, skey, slen, err)))
        return rc;
    /* every history row under the key */
    MDB_cursor *c;
    if ((rc = mdb_cursor_open(txn->txn, txn->db->history, &c)))
        return ads_db__lmdb(txn, err, rc, "purging history");
    MDB_val k = {slen, skey}, v;
    int64_t removed = 0;
    int mrc = mdb_cursor_get(c, &k, &v, MDB_SET_RANGE);
    while (mrc == 0 && k.mv_size == slen + 16 && memcmp(k.mv_data, skey, slen) == 0) {
        unsigned rows = ads_chunk__rows(v.mv_data, v.mv_size);
        txn->writes++;
        if ((mrc = mdb_cursor_del(c, 0)))
            break;
        removed += rows;
        k.mv_data = skey;
        k.mv_size = slen;
        mrc = mdb_cursor_get(c, &k, &v, MDB_SET_RANGE);
    }
    mdb_cursor_close(c);
    if (mrc && mrc != MDB_NOTFOUND)
        return ads_db__lmdb(txn, err, mrc, "purging history");
    if ((rc = ads_hist__purge(txn, skey, slen, err)))
        return rc;
    return ads_types__count(txn, t->id, -1, was_deleted ? -1 : 0, -removed, err);
}

int ads_txn_purge(ads_txn *txn, const ads_row *row, ads_error *err)
{
    uint64_t w0 = txn ? txn->writes : 0;
    int rc = purge(txn, row, err);
    /* the latest row gone and its history not: only abort is left */
    return txn ? ads_db__failed_write(txn, w0, rc) : rc;
}
