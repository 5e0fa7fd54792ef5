/*
 * engine/retention.c: removing old history (HistoryRetention, PURGE HISTORY,
 * adstore compact).
 *
 * A cut is an instant. Trimming a record's history at a cut removes its
 * non-latest rows dated before the row in effect at the cut (the last row
 * with _Timestamp <= cut), and keeps that row and every row after it. A
 * timeline over [t1, t2) with t1 >= cut reads, per record, the row in
 * effect at t1 and the rows after t1 (engine.h, ads_timeline_open): all of
 * them are kept, so its answer is the same before and after. A record whose
 * latest row is a deletion dated before the cut contributes nothing to any
 * such timeline (a deletion ends a record's contribution), so it is purged
 * whole.
 *
 * History keys end in sortable(_Timestamp) ++ be64(__SystemTimestamp), so a
 * record's rows come in time order and the rows to remove are a prefix of
 * its range of `history`: found from the keys alone, without reading rows.
 *
 * As writes go (HistoryRetention), a write trims the record it wrote and
 * sweeps on through its type: it examines the next few records in key order
 * from where the type's last write stopped, wrapping around at the end of
 * the type, and purges those deleted before the cut. Where it stopped is
 * kept in meta under "sweep/" ++ be32(type id), written in the same
 * transaction as the purges, so a crash or an abort loses neither.
 */
#include <stdlib.h>
#include <string.h>

#include "base/limits.h"
#include "engine/engine_int.h"

/* The key of the record's history row after the first go (on cursor c),
 * copied into at (slen + 16 bytes). LMDB's return code. */
static int first_kept(MDB_cursor *c, const unsigned char *skey, size_t slen, uint64_t go,
                      unsigned char *at)
{
    MDB_val k = {slen, (void *)skey}, v;
    int rc = mdb_cursor_get(c, &k, &v, MDB_SET_RANGE);
    for (uint64_t i = 0; rc == 0 && i < go; i++)
        rc = mdb_cursor_get(c, &k, &v, MDB_NEXT);
    if (rc)
        return rc;
    if (k.mv_size != slen + 16 || memcmp(k.mv_data, skey, slen) != 0)
        return MDB_NOTFOUND; /* every history row goes */
    memcpy(at, k.mv_data, k.mv_size);
    return 0;
}

/* How many of the record's first rows go at cut: those dated at or before
 * the cut, but the last of them (all of them when the latest row, dated
 * latest_ts, is in effect at the cut); at most max (0: no bound). Read
 * from the keys through the history row cursor, whatever form the rows are
 * kept in; *chunks says which (its first entry is a chunk). */
static int rows_to_go(ads_txn *txn, const unsigned char *skey, size_t slen, double latest_ts,
                      double cut, uint64_t max, uint64_t *go, bool *chunks, ads_error *err)
{
    ads_hrows h;
    int rc = ads_hrows__open(&h, txn, err);
    if (rc)
        return rc;
    uint64_t before = 0;
    *chunks = false;
    for (rc = ads_hrows__seek(&h, skey, slen, false, err); rc == 1;
         rc = ads_hrows__next(&h, err)) {
        const MDB_val *k = &h.k;
        if (k->mv_size != slen + 16 || memcmp(k->mv_data, skey, slen) != 0)
            break;
        if (before == 0)
            *chunks = h.chunk;
        if (ads_key__double_of_sortable((const unsigned char *)k->mv_data + slen) > cut)
            break;
        before++;
    }
    ads_hrows__close(&h);
    if (rc < 0)
        return rc;
    *go = latest_ts <= cut ? before : before ? before - 1 : 0;
    if (max && *go > max)
        *go = max;
    return 0;
}

/* Remove the record's first go rows, kept one row per entry (stores
 * before format 7): the keyframe of the first row kept, if it goes,
 * becomes the record's base (engine/history.c). */
static int trim_entries(ads_txn *txn, const unsigned char *skey, size_t slen, uint64_t go,
                        ads_error *err)
{
    MDB_cursor *c;
    MDB_val k, v;
    int rc = mdb_cursor_open(txn->txn, txn->db->history, &c);
    if (rc)
        return ads_db__lmdb(txn, err, rc, "trimming history");
    unsigned char kept[ADS_KEY_INLINE_MAX + 16];
    int mrc = first_kept(c, skey, slen, go, kept);
    if ((mrc == 0 || mrc == MDB_NOTFOUND) &&
        (rc = ads_hist__trim(txn, skey, slen, mrc ? NULL : kept, err))) {
        mdb_cursor_close(c);
        return rc;
    }
    for (uint64_t n = 0; n < go && (mrc == 0 || mrc == MDB_NOTFOUND); n++) {
        k.mv_data = (void *)skey;
        k.mv_size = slen;
        if ((mrc = mdb_cursor_get(c, &k, &v, MDB_SET_RANGE)))
            break;
        if (k.mv_size != slen + 16 || memcmp(k.mv_data, skey, slen) != 0)
            break; /* counted before: cannot happen */
        txn->writes++;
        mrc = mdb_cursor_del(c, 0);
    }
    mdb_cursor_close(c);
    if (mrc && mrc != MDB_NOTFOUND)
        return ads_db__lmdb(txn, err, mrc, "trimming history");
    return 0;
}

/* Trim the history of the record stored under skey (slen bytes) at cut,
 * removing at most max rows (0: no bound), oldest first (any prefix of the
 * rows to remove leaves the answers as they were). latest_ts is the date of
 * the record's latest row. *removed counts the rows removed. */
static int trim_rows(ads_txn *txn, const ads_type *t, const unsigned char *skey, size_t slen,
                     double latest_ts, double cut, uint64_t max, uint64_t *removed,
                     ads_error *err)
{
    uint64_t go;
    bool chunks;
    int rc = rows_to_go(txn, skey, slen, latest_ts, cut, max, &go, &chunks, err);
    if (rc || go == 0)
        return rc;
    if ((rc = chunks ? ads_hput__trim(txn, skey, slen, go, err)
                     : trim_entries(txn, skey, slen, go, err)))
        return rc;
    if (removed)
        *removed += go;
    return ads_types__count(txn, t->id, 0, 0, -(int64_t)go, err);
}

/* The number of history rows of the record stored under skey. */
static int count_history(ads_txn *txn, const unsigned char *skey, size_t slen, uint64_t *out,
                         ads_error *err)
{
    MDB_cursor *c;
    MDB_val k = {slen, (void *)skey}, v;
    int rc = mdb_cursor_open(txn->txn, txn->db->history, &c);
    if (rc)
        return ads_db__lmdb(txn, err, rc, "reading history");
    uint64_t n = 0;
    rc = mdb_cursor_get(c, &k, &v, MDB_SET_RANGE);
    while (rc == 0 && k.mv_size == slen + 16 && memcmp(k.mv_data, skey, slen) == 0) {
        n += ads_chunk__rows(v.mv_data, v.mv_size);
        rc = mdb_cursor_get(c, &k, &v, MDB_NEXT);
    }
    mdb_cursor_close(c);
    if (rc && rc != MDB_NOTFOUND)
        return ads_db__lmdb(txn, err, rc, "reading history");
    *out = n;
    return 0;
}

int ads_retention__trim(ads_txn *txn, const ads_type *t, const unsigned char *skey, size_t slen,
                        double cut, uint64_t max, uint64_t *removed, ads_error *err)
{
    MDB_val k = {slen, (void *)skey}, v;
    int rc = mdb_get(txn->txn, txn->db->latest, &k, &v);
    if (rc == MDB_NOTFOUND)
        return 0;
    if (rc)
        return ads_db__lmdb(txn, err, rc, "trimming history");
    row_env latest;
    if ((rc = ads_row__parse(&latest, skey, slen, v.mv_data, v.mv_size, t->name, err)))
        return rc;
    return trim_rows(txn, t, skey, slen, latest.ts, cut, max, removed, err);
}

/* ---- the sweep for deleted records ---- */

#define SWEEP_PREFIX "sweep/"
#define SWEEP_KEY_LEN (sizeof SWEEP_PREFIX - 1 + 4)

static void sweep_key(char out[SWEEP_KEY_LEN], uint32_t id)
{
    size_t n = sizeof SWEEP_PREFIX - 1;
    memcpy(out, SWEEP_PREFIX, n);
    for (int i = 0; i < 4; i++)
        out[n + i] = (char)(id >> (24 - 8 * i));
}

/* A latest row (under key k) whose envelope says it is a deletion dated
 * before cut (read without its checksum: purge_deleted checks the row
 * before acting). */
static bool looks_deleted_before(const MDB_val *k, const MDB_val *v, double cut)
{
    unsigned flags;
    double ts;
    return ads_row__peek(k->mv_data, k->mv_size, v->mv_data, v->mv_size, &flags, &ts) &&
           (flags & ROW_DELETED) && ts < cut;
}

/* Purge the record stored under skey if its latest row is a deletion dated
 * before cut. A row that fails its checks is left for verify to report: a
 * write does not fail over another record's damage. */
static int purge_deleted(ads_txn *txn, const ads_type *t, const unsigned char *skey, size_t slen,
                         double cut, ads_error *err)
{
    MDB_val k = {slen, (void *)skey}, v;
    int rc = mdb_get(txn->txn, txn->db->latest, &k, &v);
    if (rc == MDB_NOTFOUND)
        return 0;
    if (rc)
        return ads_db__lmdb(txn, err, rc, "sweeping deleted records");
    row_env e;
    if (ads_row__parse(&e, skey, slen, v.mv_data, v.mv_size, t->name, NULL))
        return 0;
    if (!(e.flags & ROW_DELETED) || !(e.ts < cut))
        return 0;
    ads_row row;
    ads_row__fill(&row, txn, t, skey, slen, &e, true, NULL);
    return ads_txn_purge(txn, &row, err);
}

typedef struct sweep_found {
    unsigned char key[ADS_RETENTION_SWEEP_PER_WRITE][ADS_KEY_INLINE_MAX];
    size_t len[ADS_RETENTION_SWEEP_PER_WRITE];
    size_t n;
    unsigned char last[ADS_KEY_INLINE_MAX]; /* the last record examined */
    size_t last_len;
} sweep_found;

static int key_cmp(const void *a, size_t alen, const void *b, size_t blen)
{
    int c = memcmp(a, b, alen < blen ? alen : blen);
    return c ? c : (alen > blen) - (alen < blen);
}

/* Examine up to ADS_RETENTION_SWEEP_PER_WRITE records of type t after
 * start (start_len 4: the type's prefix, from its first record), wrapping
 * around once, noting in *f those deleted before cut (but not the record
 * under wkey, which its own write handles) and the last one examined. */
static int sweep_walk(ads_txn *txn, const unsigned char *start, size_t start_len,
                      const unsigned char *wkey, size_t wlen, double cut, sweep_found *f,
                      ads_error *err)
{
    MDB_cursor *c;
    int rc = mdb_cursor_open(txn->txn, txn->db->latest, &c);
    if (rc)
        return ads_db__lmdb(txn, err, rc, "sweeping deleted records");
    MDB_val k = {start_len, (void *)start}, v;
    rc = mdb_cursor_get(c, &k, &v, MDB_SET_RANGE);
    if (rc == 0 && start_len > 4 && key_cmp(k.mv_data, k.mv_size, start, start_len) == 0)
        rc = mdb_cursor_get(c, &k, &v, MDB_NEXT); /* examined by the last sweep */
    bool wrapped = start_len == 4;
    unsigned examined = 0;
    while (examined < ADS_RETENTION_SWEEP_PER_WRITE && (rc == 0 || rc == MDB_NOTFOUND)) {
        if (rc == MDB_NOTFOUND || k.mv_size < 4 || k.mv_size > ADS_KEY_INLINE_MAX ||
            memcmp(k.mv_data, start, 4) != 0) {
            /* past the type's last record: on from its first */
            if (wrapped)
                break;
            wrapped = true;
            k.mv_data = (void *)start;
            k.mv_size = 4;
            rc = mdb_cursor_get(c, &k, &v, MDB_SET_RANGE);
            continue;
        }
        if (wrapped && start_len > 4 && key_cmp(k.mv_data, k.mv_size, start, start_len) > 0)
            break; /* round to where this sweep began */
        examined++;
        memcpy(f->last, k.mv_data, k.mv_size);
        f->last_len = k.mv_size;
        bool own = k.mv_size == wlen && memcmp(k.mv_data, wkey, wlen) == 0;
        if (!own && looks_deleted_before(&k, &v, cut)) {
            memcpy(f->key[f->n], k.mv_data, k.mv_size);
            f->len[f->n++] = k.mv_size;
        }
        rc = mdb_cursor_get(c, &k, &v, MDB_NEXT);
    }
    mdb_cursor_close(c);
    if (rc && rc != MDB_NOTFOUND)
        return ads_db__lmdb(txn, err, rc, "sweeping deleted records");
    return 0;
}

/* The sweep of one write of type t (the record under wkey): the next
 * records of the type from where the last write stopped, purged if deleted
 * before cut, and the new position saved. */
static int sweep(ads_txn *txn, const ads_type *t, const unsigned char *wkey, size_t wlen,
                 double cut, ads_error *err)
{
    char mkey[SWEEP_KEY_LEN];
    sweep_key(mkey, t->id);
    MDB_val pos;
    int rc = ads_db__meta_get(txn, mkey, sizeof mkey, &pos, err);
    if (rc < 0)
        return rc;
    unsigned char start[ADS_KEY_INLINE_MAX];
    size_t start_len = 4;
    memcpy(start, mkey + sizeof mkey - 4, 4); /* the type's prefix: be32(id) */
    if (rc == 1 && pos.mv_size > 4 && pos.mv_size <= ADS_KEY_INLINE_MAX &&
        memcmp(pos.mv_data, start, 4) == 0) {
        memcpy(start, pos.mv_data, pos.mv_size);
        start_len = pos.mv_size;
    }
    sweep_found f; /* about 3.6 KiB: on the stack, not in the transaction's arena */
    f.n = f.last_len = 0;
    if ((rc = sweep_walk(txn, start, start_len, wkey, wlen, cut, &f, err)))
        return rc;
    for (size_t i = 0; i < f.n; i++)
        if ((rc = purge_deleted(txn, t, f.key[i], f.len[i], cut, err)))
            return rc;
    if (!f.last_len)
        return 0;
    return ads_db__meta_put(txn, mkey, sizeof mkey, f.last, f.last_len, err);
}

int ads_retention__on_write(ads_txn *txn, const ads_type *t, const unsigned char *skey,
                            size_t slen, ads_error *err)
{
    double cut = ads_db__now(txn) - t->retention;
    int rc = ads_retention__trim(txn, t, skey, slen, cut, ADS_RETENTION_TRIM_PER_WRITE, NULL,
                                 err);
    if (rc || t->builtin)
        return rc;
    return sweep(txn, t, skey, slen, cut, err);
}

int ads_txn_trim_history(ads_txn *txn, const ads_row *row, double cut, ads_trim_result *res,
                         ads_error *err)
{
    int rc;
    if (!txn || !row)
        return ads_error_set(err, ADS_EINVAL, "NULL argument");
    if (cut != cut)
        return ads_error_set(err, ADS_EINVAL, "the cut of a history trim cannot be NaN");
    if ((rc = ads_db__need_write(txn, "trimming history", err)))
        return rc;
    uint64_t w0 = txn->writes;
    const ads_type *t = row->type;
    unsigned char skey[ADS_KEY_INLINE_MAX];
    size_t slen;
    row_env latest;
    int found = ads_store__latest(txn, row, skey, &slen, &latest, err);
    if (found <= 0)
        return found;
    if ((latest.flags & ROW_DELETED) && latest.ts < cut && !t->builtin) {
        /* deleted before the cut: nothing of it is in effect after the cut.
         * (Built-in records stay: a Type record goes only by PURGE.) */
        uint64_t rows = 0;
        if ((rc = count_history(txn, skey, slen, &rows, err)) || (rc = ads_txn_purge(txn, row, err)))
            return rc;
        if (res) {
            res->records++;
            res->rows += 1 + rows;
        }
        return 0;
    }
    uint64_t n = 0;
    rc = trim_rows(txn, t, skey, slen, latest.ts, cut, 0, &n, err);
    if (res)
        res->rows += n;
    return ads_db__failed_write(txn, w0, rc);
}

/* One type's records, trimmed at its retention, in one write transaction. */
typedef struct apply_job {
    const char *type; /* folded name */
    ads_trim_result res;
} apply_job;

static int apply_fn(ads_txn *txn, void *ctx, ads_error *err)
{
    apply_job *j = ctx;
    const ads_type *t;
    ads_scan *s;
    ads_row *row;
    int rc;
    memset(&j->res, 0, sizeof j->res); /* the work may run again after the map grows */
    if ((rc = ads_txn_type(&t, txn, j->type, strlen(j->type), err)))
        return rc;
    if (!(t->retention > 0))
        return 0;
    double cut = ads_db__now(txn) - t->retention;
    if ((rc = ads_scan_open(&s, txn, t, NULL, ADS_SCAN_DELETED, err)))
        return rc;
    while ((rc = ads_scan_next(&row, s, err)) == 1)
        if ((rc = ads_txn_trim_history(txn, row, cut, &j->res, err)))
            break;
    ads_scan_close(s);
    return rc;
}

/* The names of the types with a retention. */
typedef struct type_list {
    char **names;
    size_t n, cap;
} type_list;

static int list_fn(void *ctx, const ads_type *t, ads_error *err)
{
    type_list *l = ctx;
    if (!(t->retention > 0))
        return 0;
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 8;
        char **more = realloc(l->names, cap * sizeof *more);
        if (!more)
            return ads_error_set(err, ADS_ENOMEM, "out of memory");
        l->names = more;
        l->cap = cap;
    }
    if (!(l->names[l->n] = strdup(t->folded)))
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    l->n++;
    return 0;
}

static int list_types(ads_txn *txn, void *ctx, ads_error *err)
{
    return ads_txn_each_type(txn, list_fn, ctx, err);
}

int ads_db_apply_retention(ads_db *db, ads_trim_result *res, ads_error *err)
{
    if (!db)
        return ads_error_set(err, ADS_EINVAL, "NULL argument");
    type_list l = {NULL, 0, 0};
    int rc = ads_db_read(db, list_types, &l, err);
    ads_trim_result total = {0, 0};
    for (size_t i = 0; i < l.n && !rc; i++) {
        apply_job j = {l.names[i], {0, 0}};
        if (!(rc = ads_db_write(db, apply_fn, &j, err))) {
            total.rows += j.res.rows;
            total.records += j.res.records;
        }
    }
    for (size_t i = 0; i < l.n; i++)
        free(l.names[i]);
    free(l.names);
    if (res)
        *res = total;
    return rc;
}
