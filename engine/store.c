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
#include <msgpack.h>
#include <stdio.h>
#include <string.h>

#include "engine/engine_int.h"

/* ---- finding rows ---- */

int ads_store__find(ads_txn *txn, const unsigned char *full, size_t flen, unsigned char *stored,
                    size_t *slen, MDB_val *val, ads_error *err)
{
    for (unsigned c = 0; c < 256; c++) {
        *slen = ads_key__stored(stored, full, flen, c);
        MDB_val k = {*slen, stored};
        int rc = mdb_get(txn->txn, txn->db->latest, &k, val);
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

/* The history row of the record at stored key skey in effect at ts: the
 * last with _Timestamp <= ts. 1 with *k, *v; 0 none. */
static int find_before(ads_txn *txn, const unsigned char *skey, size_t slen, double ts,
                       MDB_val *k, MDB_val *v, ads_error *err)
{
    unsigned char seek[ADS_KEY_INLINE_MAX + 16];
    memcpy(seek, skey, slen);
    ads_key__sortable_double(seek + slen, ts);
    memset(seek + slen + 8, 0xff, 8);
    MDB_cursor *c;
    int rc = mdb_cursor_open(txn->txn, txn->db->history, &c);
    if (rc)
        return ads_db__lmdb(txn, err, rc, "reading history");
    k->mv_data = seek;
    k->mv_size = slen + 16;
    rc = mdb_cursor_get(c, k, v, MDB_SET_RANGE);
    if (rc == 0)
        rc = mdb_cursor_get(c, k, v, MDB_PREV);
    else if (rc == MDB_NOTFOUND)
        rc = mdb_cursor_get(c, k, v, MDB_LAST);
    mdb_cursor_close(c);
    if (rc == MDB_NOTFOUND)
        return 0;
    if (rc)
        return ads_db__lmdb(txn, err, rc, "reading history");
    if (k->mv_size != slen + 16 || memcmp(k->mv_data, skey, slen) != 0)
        return 0;
    return 1;
}

/* ---- the pieces of a record being stored ---- */

static bool is_nil(const row_entry *e)
{
    return e->value_len == 1 && e->value[0] == 0xc0;
}

/* Binary search for name among sorted entries. */
static const row_entry *entry_find(const row_entry *e, size_t n, const char *name, size_t len)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = ads_row__name_cmp((const unsigned char *)name, len, e[mid].name, e[mid].name_len);
        if (c == 0)
            return &e[mid];
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return NULL;
}

/* The value of an entry (a plain value; an expression is refused as `what`). */
static int entry_value(ads_value *out, const row_entry *e, ads_arena *a, const char *what,
                       const char *tname, ads_error *err)
{
    const ads_expr *x;
    int rc = ads_msgpack_decode_expr(&x, a, e->value, e->value_len, 0, err);
    if (rc)
        return rc;
    const ads_value *lit = ads_expr_literal_value(x);
    if (!lit)
        return ads_error_set(err, ADS_EINVAL,
                             "type %s: %s %.*s must be a value, not an expression", tname, what,
                             (int)e->name_len, (const char *)e->name);
    *out = *lit;
    return 0;
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
    }
    ads_buf_free(&b);
    return rc;
}

/*
 * Merge: base's entries (may be NULL) overlaid with given's, then extra
 * (entries to add when given lacks them); given entries that are nil remove
 * the attribute; timeline attributes are dropped. Into out as a row.
 */
static int merge(ads_buf *out, const row_entry *base, size_t nb, const row_entry *given,
                 size_t ng, const row_entry *extra, size_t ne, ads_arena *a, ads_error *err)
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
        if (j < ng && (!pick || ads_row__name_cmp(given[j].name, given[j].name_len, pick->name,
                                                  pick->name_len) <= 0)) {
            if (pick && ads_row__name_cmp(given[j].name, given[j].name_len, pick->name,
                                          pick->name_len) == 0)
                i++; /* given replaces base */
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
            } else if (c == 0 && src != 1) {
                i += src == 0; /* extra replaces base */
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
        m[n++] = *pick;
    }
    return ads_row__from_entries(out, m, n, err);
}

/* ---- the write ---- */

typedef struct write_req {
    const ads_type *t;
    const unsigned char *data; /* the given row (canonical MessagePack) */
    size_t len;
    bool merge;      /* lay over the row in effect (STORE) or replace (UPDATE, DELETE) */
    const unsigned char *expect_key; /* UPDATE: the key the record must keep */
    size_t expect_len;
} write_req;

static int check_given(const write_req *r, const row_entry *given, size_t ng, ads_error *err)
{
    for (size_t i = 0; i < ng; i++) {
        const row_entry *e = &given[i];
        if (e->name_len >= 2 && e->name[0] == '_' && e->name[1] == '_')
            return ads_error_set(err, ADS_EINVAL,
                                 "type %s: %.*s is maintained by the store and cannot be set",
                                 r->t->name, (int)(e->name_len > 60 ? 60 : e->name_len),
                                 (const char *)e->name);
    }
    return 0;
}

/* Flags of a write to the counters. */
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

static int do_write(ads_txn *txn, const write_req *r, ads_write_info *info, ads_error *err)
{
    const ads_type *t = r->t;
    ads_arena *a = ads_arena_new();
    if (!a)
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    ads_buf full = ADS_BUF_INIT, merged = ADS_BUF_INIT, oldrow = ADS_BUF_INIT,
            newrow = ADS_BUF_INIT;
    row_entry *given, *base = NULL, extra;
    size_t ng, nb = 0, ne = 0;
    int rc;
    if ((rc = ads_row__entries(&given, &ng, r->data, r->len, a, err)) ||
        (rc = check_given(r, given, ng, err)))
        goto cleanup;

    /* the timeline attributes given */
    double ts = 0;
    int32_t offset = 0;
    bool has_ts = false, deleted = false;
    const row_entry *e = entry_find(given, ng, ads_attr__timestamp, 10);
    ads_value v;
    if (e && !is_nil(e)) {
        if ((rc = entry_value(&v, e, a, "attribute", t->name, err)))
            goto cleanup;
        if (v.type != ADS_ABSTIME || v.u.abs.secs != v.u.abs.secs) {
            rc = ads_error_set(err, ADS_EINVAL, "type %s: _Timestamp must be an AbsTime, not %s",
                               t->name, ads_vtype_name(v.type));
            goto cleanup;
        }
        ts = v.u.abs.secs;
        offset = v.u.abs.offset;
        has_ts = true;
    }
    e = entry_find(given, ng, ads_attr__deleted, 8);
    if (e && !is_nil(e)) {
        if ((rc = entry_value(&v, e, a, "attribute", t->name, err)))
            goto cleanup;
        if (v.type != ADS_BOOLEAN) {
            rc = ads_error_set(err, ADS_EINVAL, "type %s: _Deleted must be a boolean, not %s",
                               t->name, ads_vtype_name(v.type));
            goto cleanup;
        }
        deleted = v.u.b;
    }
    if (!has_ts)
        ts = ads_db__now(txn);

    /* the key */
    ads_key__typeid(&full, t->id);
    for (size_t i = 0; i < t->nkeys; i++) {
        e = entry_find(given, ng, t->keys[i].p, t->keys[i].len);
        if (e && !is_nil(e)) {
            char what[240];
            snprintf(what, sizeof what, "%.*s of type %s", (int)t->keys[i].len, t->keys[i].p,
                     t->name);
            if ((rc = entry_value(&v, e, a, "key attribute", t->name, err)) ||
                (rc = ads_key__value(&full, &v, what, err)))
                goto cleanup;
        } else if (t->autogen && !r->expect_key) {
            if ((rc = ads_seq__type_value(txn, t, ts, &v, err)) ||
                (rc = make_entry(&extra, t->keys[i].p, t->keys[i].len, &v, a, err)) ||
                (rc = ads_key__value(&full, &v, "Id", err)))
                goto cleanup;
            ne = 1;
        } else {
            rc = ads_error_set(err, ADS_EINVAL, "a record of type %s needs key attribute %.*s",
                               t->name, (int)t->keys[i].len, t->keys[i].p);
            goto cleanup;
        }
    }
    if (full.failed) {
        rc = ads_error_set(err, ADS_ENOMEM, "out of memory");
        goto cleanup;
    }
    if (full.len > ADS_KEY_MAX_LEN) {
        rc = ads_error_set(err, ADS_ELIMIT, "type %s: a key of %zu bytes is over the 1 MiB limit",
                           t->name, full.len);
        goto cleanup;
    }
    if (r->expect_key &&
        (full.len != r->expect_len || memcmp(full.p, r->expect_key, full.len) != 0)) {
        rc = ads_error_set(err, ADS_EINVAL, "type %s: the key attributes of a record cannot change",
                           t->name);
        goto cleanup;
    }

    /* the record as it stands */
    unsigned char skey[ADS_KEY_INLINE_MAX];
    size_t slen;
    MDB_val lv;
    int found = ads_store__find(txn, (const unsigned char *)full.p, full.len, skey, &slen, &lv,
                                err);
    if (found < 0) {
        rc = found;
        goto cleanup;
    }
    row_env latest = {0};
    if (found) {
        if ((rc = ads_row__parse(&latest, skey, slen, lv.mv_data, lv.mv_size, t->name, err)))
            goto cleanup;
        /* keep a copy: writes below may move the bytes */
        ads_buf_add(&oldrow, lv.mv_data, lv.mv_size);
        if (oldrow.failed) {
            rc = ads_error_set(err, ADS_ENOMEM, "out of memory");
            goto cleanup;
        }
        if ((rc = ads_row__parse(&latest, skey, slen, (const unsigned char *)oldrow.p,
                                 oldrow.len, t->name, err)))
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
    if (r->merge) {
        if (to_latest && found) {
            bdata = latest.data;
            blen = latest.len;
            base_deleted = (latest.flags & ROW_DELETED) != 0;
        } else if (!to_latest) {
            MDB_val hk, hv;
            int pr = find_before(txn, skey, slen, ts, &hk, &hv, err);
            if (pr < 0) {
                rc = pr;
                goto cleanup;
            }
            if (pr == 1) {
                row_env prev;
                if ((rc = ads_row__parse(&prev, hk.mv_data, hk.mv_size, hv.mv_data, hv.mv_size,
                                         t->name, err)))
                    goto cleanup;
                bdata = prev.data;
                blen = prev.len;
                base_deleted = (prev.flags & ROW_DELETED) != 0;
            }
        }
        if (bdata && !base_deleted &&
            (rc = ads_row__entries(&base, &nb, bdata, blen, a, err)))
            goto cleanup;
    }
    if ((rc = merge(&merged, base, nb, given, ng, ne ? &extra : NULL, ne, a, err)))
        goto cleanup;

    if (t->id == ADS_TYPEID_TYPE && to_latest &&
        (rc = ads_types__declare(txn, (const unsigned char *)merged.p, merged.len, deleted, err)))
        goto cleanup;

    int64_t systs;
    if ((rc = ads_db__next_systs(txn, &systs, err)))
        goto cleanup;

    const unsigned char *ndata = (const unsigned char *)merged.p;
    size_t nlen = merged.len;
    ads_buf replaced = ADS_BUF_INIT;
    if (t->has_hooks && t->hooks.trigger) {
        ads_row oldr, newr;
        row_env ne_env = {deleted ? ROW_DELETED : 0, ts, offset, systs, NULL, 0, ndata, nlen};
        ads_row__fill(&newr, t, skey, slen, &ne_env, to_latest, a);
        row_env be = latest;
        if (found)
            ads_row__fill(&oldr, t, skey, slen, &be, true, a);
        const ads_record *rep = NULL;
        rc = t->hooks.trigger(t->hooks.ctx, txn, found ? &oldr : NULL, &newr, &rep, a, err);
        if (rc) {
            if (rc > 0)
                rc = ads_error_set(err, ADS_EINVAL, "type %s: the trigger refused the write",
                                   t->name);
            goto cleanup;
        }
        if (rep) {
            row_entry *re;
            size_t nr;
            if ((rc = ads_msgpack_encode_record(&replaced, rep, err)) ||
                (rc = ads_row__entries(&re, &nr, (const unsigned char *)replaced.p, replaced.len,
                                       a, err))) {
                ads_buf_free(&replaced);
                goto cleanup;
            }
            ads_buf_clear(&merged);
            rc = merge(&merged, NULL, 0, re, nr, NULL, 0, a, err);
            ads_buf_free(&replaced);
            if (rc)
                goto cleanup;
            ndata = (const unsigned char *)merged.p;
            nlen = merged.len;
        }
    }

    /* write */
    const unsigned char *fk = full.len > ADS_KEY_INLINE_MAX ? (const unsigned char *)full.p : NULL;
    unsigned flags = deleted ? ROW_DELETED : 0;
    if (to_latest) {
        if (found) {
            unsigned char hkey[ADS_KEY_INLINE_MAX + 16];
            memcpy(hkey, skey, slen);
            ads_key__sortable_double(hkey + slen, latest.ts);
            for (int i = 0; i < 8; i++)
                hkey[slen + 8 + i] = (unsigned char)((uint64_t)latest.systs >> (56 - 8 * i));
            ads_row__reseal((unsigned char *)oldrow.p, oldrow.len, hkey, slen + 16);
            if ((rc = ads_db__put(txn, txn->db->history, hkey, slen + 16, oldrow.p, oldrow.len, 0,
                                  err)))
                goto cleanup;
        }
        ads_row__build(&newrow, skey, slen, flags, ts, offset, systs, fk, full.len, ndata, nlen);
        if (newrow.failed) {
            rc = ads_error_set(err, ADS_ENOMEM, "out of memory");
            goto cleanup;
        }
        if ((rc = ads_db__put(txn, txn->db->latest, skey, slen, newrow.p, newrow.len, 0, err)))
            goto cleanup;
    } else {
        unsigned char hkey[ADS_KEY_INLINE_MAX + 16];
        memcpy(hkey, skey, slen);
        ads_key__sortable_double(hkey + slen, ts);
        for (int i = 0; i < 8; i++)
            hkey[slen + 8 + i] = (unsigned char)((uint64_t)systs >> (56 - 8 * i));
        ads_row__build(&newrow, hkey, slen + 16, flags, ts, offset, systs, fk, full.len, ndata,
                       nlen);
        if (newrow.failed) {
            rc = ads_error_set(err, ADS_ENOMEM, "out of memory");
            goto cleanup;
        }
        if ((rc = ads_db__put(txn, txn->db->history, hkey, slen + 16, newrow.p, newrow.len, 0,
                              err)))
            goto cleanup;
    }
    bool was_deleted = found && (latest.flags & ROW_DELETED);
    if ((rc = counts_for(txn, t, found, was_deleted, to_latest, deleted, err)))
        goto cleanup;
    if (!deleted && (rc = ads_attrs__note(txn, t, ndata, nlen, err)))
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
    }
cleanup:
    ads_buf_free(&full);
    ads_buf_free(&merged);
    ads_buf_free(&oldrow);
    ads_buf_free(&newrow);
    ads_arena_free(a);
    return rc;
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

int ads_store__encoded(ads_txn *txn, const ads_type *t, const unsigned char *data, size_t len,
                       ads_write_info *info, ads_error *err);

int ads_store__encoded(ads_txn *txn, const ads_type *t, const unsigned char *data, size_t len,
                       ads_write_info *info, ads_error *err)
{
    write_req r = {t, data, len, true, NULL, 0};
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
        rc = ads_store__encoded(txn, t, (const unsigned char *)b.p, b.len, info, err);
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
    MDB_val lv;
    int found = ads_store__find(txn, row->key, row->key_len, skey, &slen, &lv, err);
    if (found <= 0)
        return found;
    row_env cur;
    if ((rc = ads_row__parse(&cur, skey, slen, lv.mv_data, lv.mv_size, row->type->name, err)))
        return rc;
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
    else if (!(rc = ads_row__entries(&ent, &n, cur.data, cur.len, a, err)) &&
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
            rc = ads_row__from_entries(&b, all, k, err);
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

int ads_txn_purge(ads_txn *txn, const ads_row *row, ads_error *err)
{
    int rc;
    if (!txn || !row)
        return ads_error_set(err, ADS_EINVAL, "NULL argument");
    if ((rc = ads_db__need_write(txn, "purging a record", err)))
        return rc;
    const ads_type *t = row->type;
    unsigned char skey[ADS_KEY_INLINE_MAX];
    size_t slen;
    MDB_val lv;
    int found = ads_store__find(txn, row->key, row->key_len, skey, &slen, &lv, err);
    if (found <= 0)
        return found;
    row_env cur;
    if ((rc = ads_row__parse(&cur, skey, slen, lv.mv_data, lv.mv_size, t->name, err)))
        return rc;
    if (t->id == ADS_TYPEID_TYPE && (rc = ads_types__may_remove(txn, cur.data, cur.len, err)))
        return rc;
    if (t->id == ADS_TYPEID_ATTRIBUTE && (rc = ads_attrs__invalidate(txn, err)))
        return rc;
    if (t->has_hooks && t->hooks.notify &&
        (rc = ads_hooks__note(txn, t, ADS_CHANGE_PURGED, cur.data, cur.len, 0, 0, false, err)))
        return rc;
    bool was_deleted = (cur.flags & ROW_DELETED) != 0;
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
        if ((mrc = mdb_cursor_del(c, 0)))
            break;
        removed++;
        k.mv_data = skey;
        k.mv_size = slen;
        mrc = mdb_cursor_get(c, &k, &v, MDB_SET_RANGE);
    }
    mdb_cursor_close(c);
    if (mrc && mrc != MDB_NOTFOUND)
        return ads_db__lmdb(txn, err, mrc, "purging history");
    return ads_types__count(txn, t->id, -1, was_deleted ? -1 : 0, -removed, err);
}
