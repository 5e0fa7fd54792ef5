/*
 * engine/hput.c: writing history in chunks (store format 7; docs/storage.md,
 * "History chunks").
 *
 * A row that moves to history goes into its record's last chunk while that
 * takes it (ads_chunk__append: the rows already there are not encoded
 * again), else it starts a chunk of its own. A row dated before or between
 * rows (a backfill) is put into the chunk it falls in, or in front of the
 * record's first, whose rows are then encoded again, split into as many
 * chunks as they need. Retention removes a record's first rows: whole
 * chunks go, and the chunk the cut falls in loses its rows before the cut
 * (ads_chunk__cut: its keyframe stays as its base, the rows kept keep their
 * bytes).
 *
 * A record whose history is still kept one row per entry (a store of an
 * older format) has all of its rows turned into chunks the first time a
 * row is put into it, so a record's history is of one form: every entry a
 * chunk, or every entry one row (which engine/history.c writes and trims).
 */
#include <stdlib.h>
#include <string.h>

#include "engine/engine_int.h"

/* A record's rows, whole, gathered for encoding again. */
typedef struct rowset {
    chunk_row *rows;
    size_t *off; /* each row's data in buf (rows[i].data is set at the end) */
    size_t n, cap;
    ads_buf buf;
    ads_buf full; /* the record's whole key, when it is a long one */
    bool long_key;
} rowset;

static void rowset_free(rowset *s)
{
    free(s->rows);
    free(s->off);
    ads_buf_free(&s->buf);
    ads_buf_free(&s->full);
}

/* Add r (whole) to s, its data copied. */
static int rowset_add(rowset *s, const chunk_row *r, ads_error *err)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 64;
        chunk_row *rows = realloc(s->rows, cap * sizeof *rows);
        if (rows)
            s->rows = rows;
        size_t *off = rows ? realloc(s->off, cap * sizeof *off) : NULL;
        if (!off)
            return ads_error_set(err, ADS_ENOMEM, "out of memory");
        s->off = off;
        s->cap = cap;
    }
    s->off[s->n] = s->buf.len;
    s->rows[s->n] = *r;
    s->rows[s->n].flags &= ROW_DELETED;
    s->n++;
    ads_buf_add(&s->buf, r->data, r->len);
    return s->buf.failed ? ads_error_set(err, ADS_ENOMEM, "out of memory") : 0;
}

/* The record's whole key (a long one), copied: LMDB's goes with a delete. */
static int rowset_key(rowset *s, const unsigned char *full, size_t len, ads_error *err)
{
    if (!full || s->long_key)
        return 0;
    ads_buf_add(&s->full, full, len);
    s->long_key = true;
    return s->full.failed ? ads_error_set(err, ADS_ENOMEM, "out of memory") : 0;
}

/* The rows' data pointers, once every row is in. */
static void rowset_seal(rowset *s)
{
    for (size_t i = 0; i < s->n; i++)
        s->rows[i].data = (const unsigned char *)s->buf.p + s->off[i];
}

static void key_dates(unsigned char *p, double ts, int64_t systs)
{
    ads_key__sortable_double(p, ts);
    for (int i = 0; i < 8; i++)
        p[8 + i] = (unsigned char)((uint64_t)systs >> (56 - 8 * i));
}

/* The order of two rows by their dates, as their history keys sort. */
static int dates_cmp(double ats, int64_t asys, double bts, int64_t bsys)
{
    unsigned char a[16], b[16];
    key_dates(a, ats, asys);
    key_dates(b, bts, bsys);
    return memcmp(a, b, 16);
}

static bool of_record(const MDB_val *k, const unsigned char *skey, size_t slen)
{
    return k->mv_size == slen + 16 && memcmp(k->mv_data, skey, slen) == 0;
}

/* Put s's rows of the record at skey (slen bytes) as chunks, each as full
 * as it goes: ADS_HISTORY_CHUNK_ROWS rows (a test's fewer), or its byte
 * limit. */
static int put_chunks(ads_txn *txn, const unsigned char *skey, size_t slen, const rowset *s,
                      ads_error *err)
{
    ads_buf val = ADS_BUF_INIT, scratch = ADS_BUF_INIT;
    unsigned char key[ADS_KEY_INLINE_MAX + 16];
    const unsigned char *fk = s->long_key ? (const unsigned char *)s->full.p : NULL;
    size_t fkl = s->long_key ? s->full.len : 0;
    int rc = ads_db__format_chunks(txn, err);
    memcpy(key, skey, slen);
    for (size_t i = 0; !rc && i < s->n;) {
        unsigned taken = 1;
        key_dates(key + slen, s->rows[i].ts, s->rows[i].systs);
        if (!(rc = ads_chunk__fill(&val, key, slen + 16, fk, fkl, &s->rows[i], s->n - i,
                                   txn->db->chunk_rows, &scratch, &taken, err)))
            rc = ads_db__put(txn, txn->db->history, key, slen + 16, val.p, val.len, 0, err);
        i += taken;
    }
    ads_buf_free(&val);
    ads_buf_free(&scratch);
    return rc;
}

/* Rows of a record converted at a time: a record with years of history
 * is not held in memory whole. */
#define CONVERT_BATCH (32u * ADS_HISTORY_CHUNK_ROWS)

/* Up to CONVERT_BATCH rows of the record at skey (slen bytes), whole, into
 * s: from its first (*strict false: key is skey) or after key (the last
 * row of the batch before). On return key holds the last row's key. */
static int gather(ads_hrows *h, const unsigned char *skey, size_t slen, unsigned char *key,
                  bool *strict, rowset *s, ads_error *err)
{
    int rc;
    for (rc = ads_hrows__seek(h, key, *strict ? slen + 16 : slen, *strict, err);
         rc == 1 && s->n < CONVERT_BATCH; rc = ads_hrows__next(h, err)) {
        if (!of_record(&h->k, skey, slen))
            break;
        row_env env;
        if ((rc = ads_hrows__row(h, &env, "history row", err)) ||
            (rc = rowset_key(s, env.full_key, env.full_key_len, err)))
            break;
        chunk_row r = {env.flags, env.ts, env.offset, env.systs, env.data, env.len};
        if ((rc = rowset_add(s, &r, err)))
            break;
        memcpy(key, h->k.mv_data, slen + 16);
        *strict = true;
    }
    return rc < 0 ? rc : 0;
}

/* Delete the one-row entries of rows s (of the record at skey). */
static int delete_rows(ads_txn *txn, const unsigned char *skey, size_t slen, const rowset *s,
                       ads_error *err)
{
    unsigned char key[ADS_KEY_INLINE_MAX + 16];
    memcpy(key, skey, slen);
    for (size_t i = 0; i < s->n; i++) {
        key_dates(key + slen, s->rows[i].ts, s->rows[i].systs);
        int rc = ads_db__del(txn, txn->db->history, key, slen + 16, err);
        if (rc)
            return rc;
    }
    return 0;
}

/* The record at skey, whose history is kept one row per entry: its rows
 * put again as chunks, a batch at a time (the walk keeps the keyframe of
 * the rows kept as differences across batches), and its base
 * (engine/history.c) gone. */
static int convert(ads_txn *txn, const unsigned char *skey, size_t slen, ads_error *err)
{
    ads_hrows h;
    int rc = ads_hrows__open(&h, txn, err);
    if (rc)
        return rc;
    unsigned char key[ADS_KEY_INLINE_MAX + 16];
    memcpy(key, skey, slen);
    bool strict = false;
    for (;;) {
        rowset s = {0};
        rc = gather(&h, skey, slen, key, &strict, &s, err);
        size_t n = s.n;
        if (!rc && n) {
            rowset_seal(&s);
            if (!(rc = delete_rows(txn, skey, slen, &s, err)))
                rc = put_chunks(txn, skey, slen, &s, err);
        }
        rowset_free(&s);
        if (rc || n < CONVERT_BATCH)
            break;
    }
    ads_hrows__close(&h);
    return rc ? rc : ads_hist__purge(txn, skey, slen, err);
}

/* The chunk (ek, ev) of the record at skey encoded again: its rows from
 * row `from` on, with r put in among them by its dates (replacing a row at
 * the same dates; r NULL: none), in as many chunks as they take. */
static int rewrite(ads_txn *txn, const MDB_val *ek, const MDB_val *ev, size_t slen,
                   unsigned from, const chunk_row *r, const row_env *re, ads_error *err)
{
    ads_chunk c;
    rowset s = {0};
    ads_buf whole = ADS_BUF_INIT;
    unsigned char key[ADS_KEY_INLINE_MAX + 16];
    memcpy(key, ek->mv_data, slen + 16); /* LMDB's goes with the delete */
    MDB_val k = {slen + 16, key};
    int rc = ads_chunk__parse(&c, ek->mv_data, ek->mv_size, ev->mv_data, ev->mv_size, "history",
                              err);
    if (!rc)
        rc = rowset_key(&s, c.full_key, c.full_key_len, err);
    if (!rc && r)
        rc = rowset_key(&s, re->full_key, re->full_key_len, err);
    for (unsigned i = from; !rc && i <= c.n; i++) {
        int cmp = 1; /* the row at i comes after r (or there is none) */
        if (r && i < c.n)
            cmp = dates_cmp(c.rows[i].ts, c.rows[i].systs, r->ts, r->systs);
        if (r && cmp >= 0) {
            if ((rc = rowset_add(&s, r, err)))
                break;
            r = NULL;
            if (cmp == 0)
                continue; /* r replaces the row at its dates */
        }
        if (i == c.n)
            break;
        chunk_row w = c.rows[i];
        if ((rc = ads_chunk__row(&c, i, &whole, &w.data, &w.len, "history row", err)) ||
            (rc = rowset_add(&s, &w, err)))
            break;
    }
    if (!rc) {
        rowset_seal(&s);
        txn->writes++;
        if ((rc = mdb_del(txn->txn, txn->db->history, &k, NULL)))
            rc = ads_db__lmdb(txn, err, rc, "writing history");
        else
            rc = put_chunks(txn, key, slen, &s, err);
    }
    ads_buf_free(&whole);
    rowset_free(&s);
    return rc;
}

/* Where a row put at hkey goes, on cursor c: the record's entry before it
 * (*p: 1 with pk, pv) and the entry at or after it (*e: 1 with ek, ev),
 * each 0 when it is another record's or there is none. */
static int place(ads_txn *txn, MDB_cursor *c, const unsigned char *hkey, size_t slen, int *p,
                 MDB_val *pk, MDB_val *pv, int *e, MDB_val *ek, MDB_val *ev, ads_error *err)
{
    *ek = (MDB_val){slen + 16, (void *)hkey};
    int rc = mdb_cursor_get(c, ek, ev, MDB_SET_RANGE);
    if (rc && rc != MDB_NOTFOUND)
        return ads_db__lmdb(txn, err, rc, "writing history");
    *e = rc == 0 && of_record(ek, hkey, slen);
    rc = mdb_cursor_get(c, pk, pv, rc == 0 ? MDB_PREV : MDB_LAST);
    if (rc && rc != MDB_NOTFOUND)
        return ads_db__lmdb(txn, err, rc, "writing history");
    *p = rc == 0 && of_record(pk, hkey, slen);
    return 0;
}

/* The caller's buffers for the common case, a row appended to a chunk. */
typedef struct hput_bufs {
    ads_buf *scratch, *out;
} hput_bufs;

/* Append r to the chunk (pk, pv) when it takes it, else start a chunk. */
static int append(ads_txn *txn, const MDB_val *pk, const MDB_val *pv, const unsigned char *hkey,
                  size_t slen, const ads_chunk *pc, const chunk_row *r, const row_env *re,
                  hput_bufs *b, ads_error *err)
{
    int rc = ads_chunk__append(b->out, pc, pv->mv_data, pv->mv_size, pk->mv_data, pk->mv_size,
                               r, txn->db->chunk_rows, b->scratch, err);
    if (rc == 1) {
        unsigned char key[ADS_KEY_INLINE_MAX + 16];
        memcpy(key, pk->mv_data, slen + 16);
        rc = ads_db__put(txn, txn->db->history, key, slen + 16, b->out->p, b->out->len, 0, err);
    } else if (rc == 0) {
        rowset s = {0};
        if (!(rc = rowset_key(&s, re->full_key, re->full_key_len, err)) &&
            !(rc = rowset_add(&s, r, err))) {
            rowset_seal(&s);
            rc = put_chunks(txn, hkey, slen, &s, err);
        }
        rowset_free(&s);
    }
    return rc;
}

/* ads_hput__row on cursor c: 1 when the record had to be turned into
 * chunks first (put again), else 0 or an error. */
static int put_on(ads_txn *txn, MDB_cursor *c, const unsigned char *hkey, size_t slen,
                  const row_env *re, hput_bufs *b, ads_error *err)
{
    MDB_val pk, pv, ek, ev;
    int p = 0, e = 0;
    int rc = place(txn, c, hkey, slen, &p, &pk, &pv, &e, &ek, &ev, err);
    if (rc)
        return rc;
    if ((p && !ads_chunk__is(pv.mv_data, pv.mv_size)) ||
        (!p && e && !ads_chunk__is(ev.mv_data, ev.mv_size)))
        return 1; /* a record kept one row per entry */
    chunk_row r = {re->flags & ROW_DELETED, re->ts, re->offset, re->systs, re->data, re->len};
    if (e && ek.mv_size == slen + 16 && memcmp(ek.mv_data, hkey, slen + 16) == 0)
        return rewrite(txn, &ek, &ev, slen, 0, &r, re, err); /* a row at these dates */
    if (!p) {
        if (e)
            return rewrite(txn, &ek, &ev, slen, 0, &r, re, err); /* first of the record */
        rowset s = {0};
        if (!(rc = rowset_key(&s, re->full_key, re->full_key_len, err)) &&
            !(rc = rowset_add(&s, &r, err))) {
            rowset_seal(&s);
            rc = put_chunks(txn, hkey, slen, &s, err);
        }
        rowset_free(&s);
        return rc;
    }
    ads_chunk pc;
    if ((rc = ads_chunk__parse(&pc, pk.mv_data, pk.mv_size, pv.mv_data, pv.mv_size, "history",
                               err)))
        return rc;
    const chunk_row *last = &pc.rows[pc.n - 1];
    if (dates_cmp(last->ts, last->systs, r.ts, r.systs) < 0)
        return append(txn, &pk, &pv, hkey, slen, &pc, &r, re, b, err);
    return rewrite(txn, &pk, &pv, slen, 0, &r, re, err); /* between its rows */
}

static int put_once(ads_txn *txn, const unsigned char *hkey, size_t slen, const row_env *re,
                    hput_bufs *b, ads_error *err)
{
    MDB_cursor *c;
    int rc = mdb_cursor_open(txn->txn, txn->db->history, &c);
    if (rc)
        return ads_db__lmdb(txn, err, rc, "writing history");
    rc = put_on(txn, c, hkey, slen, re, b, err);
    mdb_cursor_close(c);
    return rc;
}

int ads_hput__row(ads_txn *txn, const unsigned char *hkey, size_t slen, const row_env *re,
                  ads_buf *scratch, ads_buf *out, ads_error *err)
{
    hput_bufs b = {scratch, out};
    int rc = put_once(txn, hkey, slen, re, &b, err);
    if (rc <= 0)
        return rc;
    /* the record is kept one row per entry: into chunks first, the row
     * copied (it may be LMDB's, and the conversion writes) */
    ads_buf copy = ADS_BUF_INIT;
    ads_buf_add(&copy, re->data, re->len);
    if (re->full_key)
        ads_buf_add(&copy, re->full_key, re->full_key_len);
    row_env e = *re;
    if (copy.failed) {
        rc = ads_error_set(err, ADS_ENOMEM, "out of memory");
    } else if (!(rc = convert(txn, hkey, slen, err))) {
        e.data = (const unsigned char *)copy.p;
        if (e.full_key)
            e.full_key = (const unsigned char *)copy.p + re->len;
        rc = put_once(txn, hkey, slen, &e, &b, err);
        if (rc > 0)
            rc = ads_error_set(err, ADS_ECORRUPT,
                               "history: a record's rows are of two forms (the store is "
                               "corrupt)");
    }
    ads_buf_free(&copy);
    return rc;
}

/* The chunk (ek, ev) without its rows before row from: ads_chunk__cut,
 * under row from's key. */
static int cut(ads_txn *txn, const MDB_val *ek, const MDB_val *ev, size_t slen, unsigned from,
               ads_error *err)
{
    ads_chunk c;
    ads_buf out = ADS_BUF_INIT;
    unsigned char old[ADS_KEY_INLINE_MAX + 16], key[ADS_KEY_INLINE_MAX + 16];
    memcpy(old, ek->mv_data, slen + 16); /* LMDB's goes with the delete */
    memcpy(key, ek->mv_data, slen);
    int rc = ads_chunk__parse(&c, ek->mv_data, ek->mv_size, ev->mv_data, ev->mv_size, "history",
                              err);
    if (!rc) {
        key_dates(key + slen, c.rows[from].ts, c.rows[from].systs);
        rc = ads_chunk__cut(&out, &c, ev->mv_data, ev->mv_size, from, key, slen + 16, err);
    }
    MDB_val k = {slen + 16, old};
    if (!rc) {
        txn->writes++;
        if ((rc = mdb_del(txn->txn, txn->db->history, &k, NULL)))
            rc = ads_db__lmdb(txn, err, rc, "trimming history");
        else
            rc = ads_db__put(txn, txn->db->history, key, slen + 16, out.p, out.len, 0, err);
    }
    ads_buf_free(&out);
    return rc;
}

int ads_hput__trim(ads_txn *txn, const unsigned char *skey, size_t slen, uint64_t go,
                   ads_error *err)
{
    while (go > 0) {
        MDB_val k = {slen, (void *)skey}, v;
        MDB_cursor *c;
        int rc;
        if ((rc = mdb_cursor_open(txn->txn, txn->db->history, &c)))
            return ads_db__lmdb(txn, err, rc, "trimming history");
        rc = mdb_cursor_get(c, &k, &v, MDB_SET_RANGE);
        if (rc || !of_record(&k, skey, slen) || !ads_chunk__is(v.mv_data, v.mv_size)) {
            mdb_cursor_close(c);
            if (rc && rc != MDB_NOTFOUND)
                return ads_db__lmdb(txn, err, rc, "trimming history");
            return ads_error_set(err, ADS_ECORRUPT,
                                 "history: fewer rows than counted to trim (the store is "
                                 "corrupt)");
        }
        unsigned n = ads_chunk__rows(v.mv_data, v.mv_size);
        if (n <= go) {
            txn->writes++;
            rc = mdb_cursor_del(c, 0);
            mdb_cursor_close(c);
            if (rc)
                return ads_db__lmdb(txn, err, rc, "trimming history");
            go -= n;
            continue;
        }
        mdb_cursor_close(c);
        return cut(txn, &k, &v, slen, (unsigned)go, err);
    }
    return 0;
}
