/*
 * engine/hrows.c: a cursor over history rows, whichever form holds them
 * (docs/storage.md, "History chunks").
 *
 * The history table holds entries of two forms: one row (stores before
 * format 7: the row's history key, its envelope) or a chunk of rows
 * (engine/chunk.c: under its first row's key). This cursor moves through
 * rows, not entries, and gives each row its history key, so a reader sees
 * the same rows in the same order from either. A chunk's rows lie between
 * its key and the next entry's, which the cursor checks as it crosses from
 * one entry to the next.
 *
 * Seeking a key may land inside the chunk before the entry LMDB finds: a
 * row at or after the key may be one of that chunk's. The chunk before is
 * looked at only when the key sought begins with its record's key (else all
 * of its rows sort before the key sought as its first does).
 */
#include <string.h>

#include "engine/engine_int.h"

void ads_hrows__init(ads_hrows *h)
{
    memset(h, 0, sizeof *h);
}

int ads_hrows__open(ads_hrows *h, ads_txn *txn, ads_error *err)
{
    ads_hrows__init(h);
    h->txn = txn;
    int rc = mdb_cursor_open(txn->txn, txn->db->history, &h->c);
    if (rc) {
        h->c = NULL;
        return ads_db__lmdb(txn, err, rc, "reading history");
    }
    return 0;
}

void ads_hrows__close(ads_hrows *h)
{
    if (h->c)
        mdb_cursor_close(h->c);
    h->c = NULL;
    ads_hist__walk_free(&h->walk);
    ads_buf_free(&h->out);
}

/* The current row's key: the entry's, or (a chunk's row i) its record's
 * key and the row's dates. */
static void set_key(ads_hrows *h)
{
    if (!h->chunk || h->i == 0) {
        h->k = h->ek;
        return;
    }
    size_t rl = h->ek.mv_size - 16;
    memcpy(h->key, h->ek.mv_data, rl);
    const chunk_row *r = &h->ch.rows[h->i];
    ads_key__sortable_double(h->key + rl, r->ts);
    for (int i = 0; i < 8; i++)
        h->key[rl + 8 + i] = (unsigned char)((uint64_t)r->systs >> (56 - 8 * i));
    h->k.mv_data = h->key;
    h->k.mv_size = rl + 16;
}

/* Parse the chunk under the cursor, once: its rows are read only when a
 * row past its first is wanted (its first row's key is the entry's), so a
 * walk that only passes a damaged chunk's key (another record's) does not
 * fail over it. */
static int parse(ads_hrows *h, ads_error *err)
{
    if (!h->chunk || h->parsed)
        return 0;
    h->bad = true; /* until it reads */
    if (h->ek.mv_size < 16 + 5 || h->ek.mv_size > ADS_KEY_INLINE_MAX + 16)
        return ads_error_set(err, ADS_ECORRUPT,
                             "history: a chunk's key of %zu bytes (the store is corrupt)",
                             h->ek.mv_size);
    int rc = ads_chunk__parse(&h->ch, h->ek.mv_data, h->ek.mv_size, h->ev.mv_data,
                              h->ev.mv_size, "history", err);
    if (rc)
        return rc;
    h->bad = false;
    h->parsed = true;
    return 0;
}

int ads_hrows__parse(ads_hrows *h, ads_error *err)
{
    return parse(h, err);
}

/* Take the entry LMDB's cursor is on (ek, ev), on its row `last ? n - 1 :
 * 0` (a chunk parsed for its last row). */
static int take(ads_hrows *h, bool last, ads_error *err)
{
    h->chunk = ads_chunk__is(h->ev.mv_data, h->ev.mv_size);
    h->parsed = false;
    h->bad = false;
    h->i = 0;
    if (h->chunk && last) {
        int rc = parse(h, err);
        if (rc)
            return rc;
        h->i = h->ch.n - 1;
    }
    set_key(h);
    return 1;
}

/* LMDB's op on the entry cursor, then take what it found: 1, 0 none, or an
 * error. */
static int entry(ads_hrows *h, MDB_cursor_op op, bool last, ads_error *err)
{
    int rc = mdb_cursor_get(h->c, &h->ek, &h->ev, op);
    if (rc == MDB_NOTFOUND) {
        h->valid = false;
        return 0;
    }
    if (rc)
        return ads_db__lmdb(h->txn, err, rc, "reading history");
    h->valid = true;
    return take(h, last, err);
}

static int key_cmp(const unsigned char *a, size_t alen, const unsigned char *b, size_t blen)
{
    size_t n = alen < blen ? alen : blen;
    int c = memcmp(a, b, n);
    return c ? c : alen < blen ? -1 : alen > blen;
}

/* Is the row now under the cursor past the row at key prev (plen bytes),
 * as the step to it went? A chunk's rows end before the next entry's key. */
static int in_order(ads_hrows *h, const unsigned char *prev, size_t plen, bool forward,
                    ads_error *err)
{
    int c = key_cmp(h->k.mv_data, h->k.mv_size, prev, plen);
    if (forward ? c > 0 : c < 0)
        return 1;
    return ads_error_set(err, ADS_ECORRUPT,
                         "history: a chunk holds rows past the entry after it (the store is "
                         "corrupt)");
}

int ads_hrows__next_entry(ads_hrows *h, ads_error *err)
{
    return h->valid ? entry(h, MDB_NEXT, false, err) : 0;
}

int ads_hrows__first(ads_hrows *h, ads_error *err)
{
    return entry(h, MDB_FIRST, false, err);
}

int ads_hrows__last(ads_hrows *h, ads_error *err)
{
    return entry(h, MDB_LAST, true, err);
}

/* Step from an entry's last (first) row to the next (previous) entry,
 * checking that a chunk's rows end before the entry after it. */
static int cross(ads_hrows *h, bool forward, ads_error *err)
{
    unsigned char prev[ADS_KEY_INLINE_MAX + 16];
    size_t plen = h->k.mv_size;
    if (plen > sizeof prev)
        return ads_error_set(err, ADS_ECORRUPT, "history: a key of %zu bytes", plen);
    memcpy(prev, h->k.mv_data, plen);
    int rc = entry(h, forward ? MDB_NEXT : MDB_PREV, !forward, err);
    if (rc <= 0)
        return rc;
    return in_order(h, prev, plen, forward, err);
}

int ads_hrows__next(ads_hrows *h, ads_error *err)
{
    if (!h->valid)
        return 0;
    int rc = parse(h, err);
    if (rc)
        return rc;
    if (h->chunk && h->i + 1 < h->ch.n) {
        h->i++;
        set_key(h);
        return 1;
    }
    return cross(h, true, err);
}

int ads_hrows__prev(ads_hrows *h, ads_error *err)
{
    if (!h->valid)
        return 0;
    if (h->chunk && h->i > 0) {
        h->i--;
        set_key(h);
        return 1;
    }
    return cross(h, false, err);
}

/* Does key (len bytes) begin with the record key of entry key ek? */
static bool of_entry_record(const MDB_val *ek, const unsigned char *key, size_t len)
{
    return ek->mv_size >= 16 && len >= ek->mv_size - 16 &&
           memcmp(ek->mv_data, key, ek->mv_size - 16) == 0;
}

/* In the chunk now taken, the first row whose key is >= key (or > key when
 * strict): 1 on it, 0 when every row is below. */
static int within(ads_hrows *h, const unsigned char *key, size_t len, bool strict,
                  ads_error *err)
{
    int rc = parse(h, err);
    if (rc)
        return rc;
    for (unsigned i = 0; i < h->ch.n; i++) {
        h->i = i;
        set_key(h);
        int c = key_cmp(h->k.mv_data, h->k.mv_size, key, len);
        if (strict ? c > 0 : c >= 0)
            return 1;
    }
    return 0;
}

int ads_hrows__seek(ads_hrows *h, const unsigned char *key, size_t len, bool strict,
                    ads_error *err)
{
    MDB_val k = {len, (void *)key};
    h->ek = k;
    int rc = mdb_cursor_get(h->c, &h->ek, &h->ev, MDB_SET_RANGE);
    if (rc && rc != MDB_NOTFOUND)
        return ads_db__lmdb(h->txn, err, rc, "reading history");
    bool found = rc == 0;
    /* the entry before: a chunk of the key's record may hold the row */
    rc = found ? mdb_cursor_get(h->c, &h->ek, &h->ev, MDB_PREV)
               : mdb_cursor_get(h->c, &h->ek, &h->ev, MDB_LAST);
    if (rc && rc != MDB_NOTFOUND)
        return ads_db__lmdb(h->txn, err, rc, "reading history");
    bool before = rc == 0; /* the cursor is on an entry before key */
    if (before && ads_chunk__is(h->ev.mv_data, h->ev.mv_size) &&
        of_entry_record(&h->ek, key, len)) {
        h->valid = true;
        if ((rc = take(h, false, err)) < 0)
            return rc;
        if ((rc = within(h, key, len, strict, err)) != 0)
            return rc;
    }
    /* else the entry found (or, strict, the one after it when it is key) */
    if (!found) {
        h->valid = false;
        return 0;
    }
    if ((rc = entry(h, before ? MDB_NEXT : MDB_FIRST, false, err)) <= 0)
        return rc;
    if (strict && key_cmp(h->k.mv_data, h->k.mv_size, key, len) == 0)
        return ads_hrows__next(h, err);
    return 1;
}

int ads_hrows__before(ads_hrows *h, const unsigned char *key, size_t len, ads_error *err)
{
    int rc = ads_hrows__seek(h, key, len, false, err);
    if (rc < 0)
        return rc;
    if (rc == 1)
        return ads_hrows__prev(h, err);
    /* every row is below key: the last */
    return ads_hrows__last(h, err);
}

int ads_hrows__row(ads_hrows *h, row_env *env, const char *where, ads_error *err)
{
    if (!h->chunk) {
        int rc = ads_row__parse_history(env, h->k.mv_data, h->k.mv_size, h->ev.mv_data,
                                        h->ev.mv_size, where, err);
        if (rc || !(env->flags & ROW_DELTA))
            return rc;
        return ads_hist__walk(&h->walk, h->txn, h->k.mv_data, h->k.mv_size, env,
                              !h->txn->readonly, where, err);
    }
    int rc = parse(h, err);
    if (rc)
        return rc;
    const chunk_row *r = &h->ch.rows[h->i];
    env->flags = (r->flags & ROW_DELETED) | (h->ch.full_key ? ROW_LONGKEY : 0);
    env->ts = r->ts;
    env->offset = r->offset;
    env->systs = r->systs;
    env->full_key = h->ch.full_key;
    env->full_key_len = h->ch.full_key_len;
    env->sum = h->ch.sum;
    return ads_chunk__row(&h->ch, h->i, &h->out, &env->data, &env->len, where, err);
}
