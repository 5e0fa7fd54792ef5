/*
 * engine/scan.c: reading rows: the latest row of one key, scans of the latest
 * rows of a type (or of every type) with a constraint evaluated on the stored
 * bytes, and history scans (every row of each record, oldest first).
 *
 * A scan walks `latest` from the type's 4-byte prefix. In a read transaction
 * it steps with MDB_NEXT. In a write transaction the caller may rewrite,
 * delete or purge the row it was just given, so the scan remembers the last
 * key and seeks past it each time, whatever happened to the tree meanwhile.
 * Each row gets a fresh view over its bytes; the scan's arena, reset per
 * row, holds whatever evaluation decodes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine_int.h"

struct ads_scan {
    ads_txn *txn;
    const ads_type *type; /* NULL: every type */
    const ads_expr *where;
    unsigned flags;
    MDB_cursor *lc;
    ads_hrows hr;         /* history rows (ADS_SCAN_HISTORY) */
    bool hr_open;
    ads_arena *arena;
    ads_row row;
    bool started, done;
    bool single;          /* one record's history */
    unsigned char last[ADS_KEY_INLINE_MAX]; /* the current record's stored key */
    size_t last_len;
    /* history mode: walking the history rows of the current record */
    bool in_history;
    unsigned char hlast[ADS_KEY_INLINE_MAX + 16];
    size_t hlast_len;
    const ads_type *cur; /* type of the current record (every-type scans) */
    uint64_t visited;    /* records visited (the map's pages are dropped every 2^17) */
    uint64_t read;       /* rows read */
    ads_index_walk *ix;  /* an index scan (engine/index_scan.c) */
    bool (*stop)(void *ctx); /* ads_scan_set_stop */
    void *stop_ctx;
};

static int key_cmp(const void *a, size_t alen, const void *b, size_t blen)
{
    int c = memcmp(a, b, alen < blen ? alen : blen);
    return c ? c : (alen > blen) - (alen < blen);
}

static bool truthy(const ads_value *v)
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

/* A lookup of key (stored form) found nothing. A byte flipped in the key of
 * the very record looked up makes it miss too; such a key sits where the
 * record belongs, so the keys around that place must be in order and sound
 * for the miss to be trusted. */
static int check_miss(ads_txn *txn, const unsigned char *key, size_t klen, const char *tname,
                      ads_error *err)
{
    MDB_cursor *c;
    MDB_val k = {klen, (void *)key}, v, win[4];
    int n = 0, at, rc = mdb_cursor_open(txn->txn, txn->db->latest, &c);
    if (rc)
        return ads_db__lmdb(txn, err, rc, "reading a record");
    /* up to two keys before the place, and two from it */
    rc = ads_db__cursor_before(c, &k, &v);
    for (at = 0; at < 2 && rc == 0; at++) {
        if (!ads_row__key_sound(k.mv_data, k.mv_size, v.mv_data, v.mv_size))
            break;
        rc = mdb_cursor_get(c, &k, &v, MDB_PREV);
    }
    bool sound = at == 2 || rc == MDB_NOTFOUND;
    if (sound && rc == 0)
        rc = mdb_cursor_get(c, &k, &v, MDB_NEXT); /* back to the first of the window */
    else if (sound && rc == MDB_NOTFOUND)
        rc = mdb_cursor_get(c, &k, &v, MDB_FIRST);
    while (sound && rc == 0 && n < 4) {
        if (!ads_row__key_sound(k.mv_data, k.mv_size, v.mv_data, v.mv_size) ||
            (n && key_cmp(k.mv_data, k.mv_size, win[n - 1].mv_data, win[n - 1].mv_size) <= 0)) {
            sound = false;
            break;
        }
        win[n++] = k;
        if (key_cmp(k.mv_data, k.mv_size, key, klen) > 0 && n >= 2 &&
            key_cmp(win[n - 2].mv_data, win[n - 2].mv_size, key, klen) > 0)
            break; /* two keys past the place */
        rc = mdb_cursor_get(c, &k, &v, MDB_NEXT);
    }
    mdb_cursor_close(c);
    if (rc && rc != MDB_NOTFOUND)
        return ads_db__lmdb(txn, err, rc, "reading a record");
    if (!sound)
        return ads_walk__corrupt(tname, "a key where the record would be is damaged", err);
    return 0;
}

int ads_txn_get(ads_txn *txn, ads_row *row, const ads_type *t, const ads_value *keys, size_t n,
                ads_arena *a, ads_error *err)
{
    if (!txn || !row || !t || (!keys && n) || !a)
        return ads_error_set(err, ADS_EINVAL, "NULL argument");
    if (n != t->nkeys)
        return ads_error_set(err, ADS_EINVAL, "type %s has %zu key attributes, not %zu", t->name,
                             t->nkeys, n);
    ads_buf *full = &txn->kbuf;
    int rc = 0;
    ads_buf_clear(full);
    ads_key__typeid(full, t->id);
    for (size_t i = 0; i < n && !rc; i++) {
        if ((rc = ads_key__value(full, &keys[i], NULL, err))) {
            char what[240];
            snprintf(what, sizeof what, "%.*s of type %s", (int)t->keys[i].len, t->keys[i].p,
                     t->name);
            rc = ads_key__value(full, &keys[i], what, err);
        }
    }
    if (!rc && full->failed)
        rc = ads_error_set(err, ADS_ENOMEM, "out of memory");
    unsigned char skey[ADS_KEY_INLINE_MAX];
    size_t slen;
    MDB_val v;
    if (!rc)
        rc = ads_store__find(txn, (const unsigned char *)full->p, full->len, skey, &slen, &v, err);
    if (rc == 0 && full->len <= ADS_KEY_INLINE_MAX)
        rc = check_miss(txn, skey, slen, t->name, err);
    if (rc == 1) {
        row_env env;
        /* the row keeps a copy of the stored key: it lives as long as the row */
        unsigned char *k = ads_arena_alloc(a, slen);
        if (!k)
            return ads_error_set(err, ADS_ENOMEM, "out of memory");
        memcpy(k, skey, slen);
        if ((rc = ads_row__parse_found(&env, k, slen, v.mv_data, v.mv_size, t->name, err)))
            return rc;
        ads_row__fill(row, txn, t, k, slen, &env, true, a);
        rc = 1;
    }
    return rc;
}

int ads_scan_open(ads_scan **out, ads_txn *txn, const ads_type *t, const ads_expr *where,
                  unsigned flags, ads_error *err)
{
    if (!out || !txn)
        return ads_error_set(err, ADS_EINVAL, "NULL argument");
    ads_scan *s = calloc(1, sizeof *s);
    if (!s || !(s->arena = ads_arena_new())) {
        free(s);
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    }
    s->txn = txn;
    s->type = t;
    s->where = where;
    s->flags = flags;
    int rc = mdb_cursor_open(txn->txn, txn->db->latest, &s->lc);
    if (rc) {
        ads_scan_close(s);
        return ads_db__lmdb(txn, err, rc, "opening a scan");
    }
    if (flags & ADS_SCAN_HISTORY) {
        if ((rc = ads_hrows__open(&s->hr, txn, err))) {
            ads_scan_close(s);
            return rc;
        }
        s->hr_open = true;
    }
    if (t) {
        s->last[0] = (unsigned char)(t->id >> 24);
        s->last[1] = (unsigned char)(t->id >> 16);
        s->last[2] = (unsigned char)(t->id >> 8);
        s->last[3] = (unsigned char)t->id;
        s->last_len = 4;
    }
    *out = s;
    return 0;
}

int ads_history_open(ads_scan **out, ads_txn *txn, const ads_row *row, const ads_expr *where,
                     unsigned flags, ads_error *err)
{
    if (!row)
        return ads_error_set(err, ADS_EINVAL, "NULL argument");
    int rc = ads_scan_open(out, txn, row->type, where, flags | ADS_SCAN_HISTORY, err);
    if (rc)
        return rc;
    ads_scan *s = *out;
    /* the stored key of the record */
    MDB_val v;
    rc = ads_store__find(txn, row->key, row->key_len, s->last, &s->last_len, &v, err);
    if (rc <= 0) {
        ads_scan_close(s);
        return rc < 0 ? rc
                      : ads_error_set(err, ADS_ENOTFOUND, "the record of type %s is gone",
                                      row->type->name);
    }
    s->single = true;
    s->started = true;
    s->done = true; /* the record's latest row comes after its history */
    s->in_history = true;
    s->hlast_len = 0;
    return 0;
}

int ads_index_scan_open(ads_scan **out, ads_txn *txn, const ads_type *t,
                        ads_index_span *const *spans, size_t n, const ads_expr *where,
                        unsigned flags, ads_error *err)
{
    if (!out)
        return ads_error_set(err, ADS_EINVAL, "NULL argument");
    ads_index_walk *iw;
    int rc = ads_index__walk_open(&iw, txn, t, spans, n, where, flags, err);
    if (rc)
        return rc;
    ads_scan *s = calloc(1, sizeof *s);
    if (!s) {
        ads_index__walk_close(iw);
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    }
    s->txn = txn;
    s->type = t;
    s->ix = iw;
    *out = s;
    return 0;
}

int ads_index_scan_filter(ads_scan *s, const ads_index_span *span)
{
    return s && s->ix ? ads_index__walk_filter(s->ix, span) : 0;
}

void ads_scan_counts_get(ads_scan_counts *out, const ads_scan *s)
{
    memset(out, 0, sizeof *out);
    if (s && s->ix)
        ads_index__walk_counts(out, s->ix);
    else if (s)
        out->rows = s->read;
}

uint64_t ads_scan_read(const ads_scan *s)
{
    ads_scan_counts c;
    ads_scan_counts_get(&c, s);
    return s && s->ix ? c.entries : c.rows;
}

void ads_scan_close(ads_scan *s)
{
    if (!s)
        return;
    ads_index__walk_close(s->ix);
    if (s->lc)
        mdb_cursor_close(s->lc);
    if (s->hr_open)
        ads_hrows__close(&s->hr);
    ads_arena_free(s->arena);
    free(s);
}

/* ---- trusting the walk ----
 *
 * A row's checksum does not cover the key it is stored under, and a walk of a
 * type's records stops at the first key without the type's prefix. A byte
 * flipped in a key would so end a scan early, or hide the rows before it,
 * and nothing would say so. So every walk checks what it relies on: keys come
 * in increasing order, the key before a type's first record is below the
 * type, and the key that ends the walk is sound (its row reads, its type
 * exists, the key after it is greater). Rows themselves check that their key
 * frames key values (row.c). */

int ads_walk__corrupt(const char *tname, const char *what, ads_error *err)
{
    return ads_error_set(err, ADS_ECORRUPT,
                         "type %s: the store is corrupt: %s (adstore verify says where)", tname,
                         what);
}

int ads_walk__order(const void *prev, size_t plen, const MDB_val *k, const char *tname,
                    ads_error *err)
{
    if (plen && key_cmp(k->mv_data, k->mv_size, prev, plen) <= 0)
        return ads_walk__corrupt(tname, "its keys are out of order", err);
    return 0;
}

int ads_walk__check_start(ads_txn *txn, MDB_dbi dbi, const unsigned char *prefix, size_t plen,
                          const char *tname, ads_error *err)
{
    MDB_val k = {plen, (void *)prefix}, v;
    int rc = ads_db__key_before(txn, dbi, &k, &v);
    if (rc == MDB_NOTFOUND)
        return 0;
    if (rc)
        return ads_db__lmdb(txn, err, rc, "scanning");
    if (key_cmp(k.mv_data, k.mv_size, prefix, plen) >= 0 ||
        (k.mv_size >= plen && memcmp(k.mv_data, prefix, plen) == 0))
        return ads_walk__corrupt(tname, "a key before its records is damaged", err);
    return 0;
}

int ads_walk__check_end(ads_txn *txn, MDB_dbi dbi, const void *last, size_t llen,
                        const MDB_val *end, const char *tname, ads_error *err)
{
    if (!end)
        return 0;
    int rc = ads_walk__order(last, llen, end, tname, err);
    if (rc)
        return rc;
    MDB_cursor *c;
    MDB_val k = *end, v;
    if ((rc = mdb_cursor_open(txn->txn, dbi, &c)))
        return ads_db__lmdb(txn, err, rc, "scanning");
    rc = mdb_cursor_get(c, &k, &v, MDB_SET_KEY);
    MDB_val next, nv;
    int nrc = rc ? rc : mdb_cursor_get(c, &next, &nv, MDB_NEXT);
    mdb_cursor_close(c);
    if (rc == MDB_NOTFOUND)
        return ads_walk__corrupt(tname, "a key after its records cannot be found again", err);
    if (rc)
        return ads_db__lmdb(txn, err, rc, "scanning");
    if (nrc && nrc != MDB_NOTFOUND)
        return ads_db__lmdb(txn, err, nrc, "scanning");
    const ads_type *t;
    ads_error e;
    if (k.mv_size >= 4 &&
        ads_types__by_id(&t, txn, ads_key__get_typeid(k.mv_data), &e) == ADS_ENOMEM)
        return ads_error_set(err, ADS_ENOMEM, "%s", e.message);
    if (k.mv_size < 4 || !ads_row__key_sound(k.mv_data, k.mv_size, v.mv_data, v.mv_size) ||
        ads_types__by_id(&t, txn, ads_key__get_typeid(k.mv_data), NULL) ||
        (nrc == 0 && key_cmp(next.mv_data, next.mv_size, k.mv_data, k.mv_size) <= 0))
        return ads_walk__corrupt(tname, "a key after its records is damaged", err);
    return 0;
}

/* The type of a latest key (every-type scans cache the last one). */
static int type_of_key(ads_scan *s, const unsigned char *key, const ads_type **out, ads_error *err)
{
    if (s->type) {
        *out = s->type;
        return 0;
    }
    uint32_t id = ads_key__get_typeid(key);
    if (s->cur && s->cur->id == id) {
        *out = s->cur;
        return 0;
    }
    int rc = ads_types__by_id(&s->cur, s->txn, id, err);
    if (rc == ADS_ENOTFOUND)
        return ads_error_set(err, ADS_ECORRUPT, "rows of type id %u have no Type record",
                             (unsigned)id);
    if (!rc)
        *out = s->cur;
    return rc;
}

/* Move to the next record in `latest`: 1 with k, v; 0 at the end. */
static int next_record(ads_scan *s, MDB_val *k, MDB_val *v, ads_error *err)
{
    int rc;
    if (s->single) {
        if (s->done)
            return 0;
        s->done = true;
        k->mv_data = s->last;
        k->mv_size = s->last_len;
        rc = mdb_cursor_get(s->lc, k, v, MDB_SET_KEY);
    } else if (!s->started || !s->txn->readonly) {
        if (!s->started && s->type &&
            (rc = ads_walk__check_start(s->txn, s->txn->db->latest, s->last, 4, s->type->name,
                                        err)))
            return rc;
        /* seek to the first key after the last one (or at the type prefix) */
        k->mv_data = s->last;
        k->mv_size = s->last_len;
        rc = s->last_len ? mdb_cursor_get(s->lc, k, v, MDB_SET_RANGE)
                         : mdb_cursor_get(s->lc, k, v, MDB_FIRST);
        if (rc == 0 && s->started && k->mv_size == s->last_len &&
            memcmp(k->mv_data, s->last, s->last_len) == 0)
            rc = mdb_cursor_get(s->lc, k, v, MDB_NEXT);
        s->started = true;
    } else {
        rc = mdb_cursor_get(s->lc, k, v, MDB_NEXT);
    }
    const char *tname = s->type ? s->type->name : "(any)";
    if (rc == MDB_NOTFOUND)
        return 0;
    if (rc)
        return ads_db__lmdb(s->txn, err, rc, "scanning");
    if (s->type && (k->mv_size < 4 || memcmp(k->mv_data, s->last, 4) != 0)) {
        /* the end of the type's records, or a damaged key */
        if (!s->single && (rc = ads_walk__check_end(s->txn, s->txn->db->latest, s->last,
                                                     s->last_len, k, tname, err)))
            return rc;
        return 0;
    }
    if (!s->single && (rc = ads_walk__order(s->last, s->last_len, k, tname, err)))
        return rc;
    if (k->mv_size > ADS_KEY_INLINE_MAX)
        return ads_error_set(err, ADS_ECORRUPT, "a latest key of %zu bytes", k->mv_size);
    memcpy(s->last, k->mv_data, k->mv_size);
    s->last_len = k->mv_size;
    return 1;
}

/* The next history row of the current record: 1 with the cursor s->hr on
 * it; 0 when done. */
static int next_history(ads_scan *s, ads_error *err)
{
    int rc;
    const char *tname = s->cur ? s->cur->name : s->type ? s->type->name : "(any)";
    if (s->hlast_len == 0) {
        if ((rc = ads_walk__check_start(s->txn, s->txn->db->history, s->last, s->last_len, tname,
                                        err)))
            return rc;
        rc = ads_hrows__seek(&s->hr, s->last, s->last_len, false, err);
    } else if (s->txn->readonly) {
        rc = ads_hrows__next(&s->hr, err);
    } else {
        /* the caller may have written since: seek past the last row read */
        rc = ads_hrows__seek(&s->hr, s->hlast, s->hlast_len, true, err);
    }
    if (rc <= 0)
        return rc;
    const MDB_val *k = &s->hr.k;
    if (k->mv_size != s->last_len + 16 || memcmp(k->mv_data, s->last, s->last_len) != 0) {
        /* the end of the record's history, or a damaged key */
        if (s->hlast_len)
            return ads_walk__check_end(s->txn, s->txn->db->history, s->hlast, s->hlast_len, k,
                                       tname, err);
        return ads_walk__check_end(s->txn, s->txn->db->history, s->last, s->last_len, k, tname,
                                   err);
    }
    if ((rc = ads_walk__order(s->hlast, s->hlast_len, k, tname, err)))
        return rc;
    memcpy(s->hlast, k->mv_data, k->mv_size);
    s->hlast_len = k->mv_size;
    return 1;
}

/* s->row from env, a row stored under k, through the scan's constraint:
 * 1 keep, 0 skip. */
static int keep(ads_scan *s, const ads_type *t, const MDB_val *k, const row_env *env, bool latest)
{
    ads_arena_reset(s->arena);
    size_t klen = latest ? k->mv_size : k->mv_size - 16;
    ads_row__fill(&s->row, s->txn, t, k->mv_data, klen, env, latest, s->arena);
    if (!s->where)
        return 1;
    ads_value val;
    ads_view view = ads_row_view(&s->row, NULL);
    if (ads_expr_eval(&val, s->where, &view, s->arena))
        return -1;
    return truthy(&val) ? 1 : 0;
}

static int counted(ads_scan *s, ads_error *err)
{
    if (s->stop && s->stop(s->stop_ctx))
        return ads_error_set(err, ADS_ELIMIT, "interrupted");
    s->read++;
    return 0;
}

/* Fill s->row from the latest row (k, v) and apply the filters: 1 keep, 0
 * skip. */
static int offer(ads_scan *s, const ads_type *t, MDB_val *k, MDB_val *v, ads_error *err)
{
    row_env env;
    int rc = counted(s, err);
    if (rc)
        return rc;
    rc = ads_row__parse(&env, k->mv_data, k->mv_size, v->mv_data, v->mv_size, "", NULL);
    if (rc) {
        /* again, for a message that says where */
        char where[300];
        snprintf(where, sizeof where, "latest row of type %s", t->name);
        return ads_row__parse(&env, k->mv_data, k->mv_size, v->mv_data, v->mv_size, where, err);
    }
    if (env.flags & ROW_DELTA)
        return ads_error_set(err, ADS_ECORRUPT,
                             "latest row of type %s: kept as a difference (the store is corrupt)",
                             t->name);
    if ((env.flags & ROW_DELETED) && !(s->flags & ADS_SCAN_DELETED))
        return 0;
    rc = keep(s, t, k, &env, true);
    return rc < 0 ? ads_error_set(err, ADS_ENOMEM, "evaluating the constraint: out of memory")
                  : rc;
}

/* The same for the history row under s->hr, made whole. */
static int offer_history(ads_scan *s, const ads_type *t, ads_error *err)
{
    row_env env;
    int rc = counted(s, err);
    if (rc)
        return rc;
    if (ads_hrows__row(&s->hr, &env, "", NULL)) {
        /* again, for a message that says where (or a row made whole this
         * time: memory ran out the first) */
        char where[300];
        snprintf(where, sizeof where, "history row of type %s", t->name);
        if ((rc = ads_hrows__row(&s->hr, &env, where, err)))
            return rc;
    }
    if ((env.flags & ROW_DELETED) && !(s->flags & ADS_SCAN_DELETED))
        return 0;
    rc = keep(s, t, &s->hr.k, &env, false);
    return rc < 0 ? ads_error_set(err, ADS_ENOMEM, "evaluating the constraint: out of memory")
                  : rc;
}

void ads_scan_set_stop(ads_scan *s, bool (*stop)(void *ctx), void *ctx)
{
    if (!s)
        return;
    s->stop = stop;
    s->stop_ctx = ctx;
    if (s->ix)
        ads_index__walk_set_stop(s->ix, stop, ctx);
}

int ads_scan_next(ads_row **row, ads_scan *s, ads_error *err)
{
    MDB_val k, v;
    int rc;
    if (!s || !row)
        return ads_error_set(err, ADS_EINVAL, "NULL argument");
    if (s->ix)
        return ads_index__walk_next(row, s->ix, err);
    for (;;) {
        if (s->in_history) {
            rc = next_history(s, err);
            if (rc < 0)
                return rc;
            if (rc == 1) {
                const ads_type *t;
                if ((rc = type_of_key(s, s->hr.k.mv_data, &t, err)))
                    return rc;
                rc = offer_history(s, t, err);
                if (rc < 0)
                    return rc;
                if (rc == 1) {
                    *row = &s->row;
                    return 1;
                }
                continue;
            }
            /* history done: now the record's latest row */
            s->in_history = false;
            k.mv_data = s->last;
            k.mv_size = s->last_len;
            rc = mdb_cursor_get(s->lc, &k, &v, MDB_SET_KEY);
            if (rc == MDB_NOTFOUND)
                continue;
            if (rc)
                return ads_db__lmdb(s->txn, err, rc, "scanning");
        } else {
            rc = next_record(s, &k, &v, err);
            if (rc <= 0)
                return rc;
            if ((++s->visited & 131071) == 0)
                ads_db__drop_map_pages(s->txn->db); /* the txn holds db->resize */
            if (s->flags & ADS_SCAN_HISTORY) {
                s->in_history = true;
                s->hlast_len = 0;
                continue;
            }
        }
        const ads_type *t;
        if ((rc = type_of_key(s, k.mv_data, &t, err)))
            return rc;
        rc = offer(s, t, &k, &v, err);
        if (rc < 0)
            return rc;
        if (rc == 1) {
            *row = &s->row;
            return 1;
        }
        if (s->single && !s->in_history)
            return 0;
    }
}
