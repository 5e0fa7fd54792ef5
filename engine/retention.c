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
 */
#include <stdlib.h>
#include <string.h>

#include "base/limits.h"
#include "engine/engine_int.h"

/* Trim the history of the record stored under skey (slen bytes) at cut,
 * removing at most max rows (0: no bound), oldest first (any prefix of the
 * rows to remove leaves the answers as they were). latest_ts is the date of
 * the record's latest row. *removed counts the rows removed. */
static int trim_rows(ads_txn *txn, const ads_type *t, const unsigned char *skey, size_t slen,
                     double latest_ts, double cut, uint64_t max, uint64_t *removed,
                     ads_error *err)
{
    MDB_cursor *c;
    MDB_val k = {slen, (void *)skey}, v;
    int rc = mdb_cursor_open(txn->txn, txn->db->history, &c);
    if (rc)
        return ads_db__lmdb(txn, err, rc, "trimming history");
    /* rows dated at or before the cut: all but the last go (all of them when
     * the latest row is in effect at the cut) */
    uint64_t before = 0;
    int mrc = mdb_cursor_get(c, &k, &v, MDB_SET_RANGE);
    while (mrc == 0 && k.mv_size == slen + 16 && memcmp(k.mv_data, skey, slen) == 0) {
        double ts = ads_key__double_of_sortable((const unsigned char *)k.mv_data + slen);
        if (ts > cut)
            break;
        before++;
        mrc = mdb_cursor_get(c, &k, &v, MDB_NEXT);
    }
    if (mrc && mrc != MDB_NOTFOUND) {
        mdb_cursor_close(c);
        return ads_db__lmdb(txn, err, mrc, "trimming history");
    }
    uint64_t go = latest_ts <= cut ? before : before ? before - 1 : 0;
    if (max && go > max)
        go = max;
    uint64_t n = 0;
    mrc = 0;
    while (n < go) {
        k.mv_data = (void *)skey;
        k.mv_size = slen;
        if ((mrc = mdb_cursor_get(c, &k, &v, MDB_SET_RANGE)))
            break;
        if (k.mv_size != slen + 16 || memcmp(k.mv_data, skey, slen) != 0)
            break; /* counted above: cannot happen */
        txn->writes++;
        if ((mrc = mdb_cursor_del(c, 0)))
            break;
        n++;
    }
    mdb_cursor_close(c);
    if (mrc && mrc != MDB_NOTFOUND)
        return ads_db__lmdb(txn, err, mrc, "trimming history");
    if (removed)
        *removed += n;
    return n ? ads_types__count(txn, t->id, 0, 0, -(int64_t)n, err) : 0;
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
        n++;
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
    while ((rc = ads_scan_next(s, &row, err)) == 1)
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
