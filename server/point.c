/*
 * server/point.c: GET /api/records/TYPE[/history]?KEY=VALUE answered from
 * the store directly: one read transaction, ads_txn_get on the record's
 * key, the row (or its history) written as JSON Lines into a buffer. No
 * statement is parsed and no thread involved; the answer is byte for byte
 * the one of the statement server/routes.c would otherwise run (SELECT *
 * with hidden attributes). Arguments without every key attribute are
 * refused (they name no one record). What this path does not answer --
 * arguments beside the key, a value that cannot be a key, an unknown type,
 * a history larger than ADS_SERVE_HEAD_BYTES -- is left to
 * that statement (POINT_FALLBACK), so its answers and errors stay the
 * statement's.
 */
#include <string.h>
#include <strings.h>

#include "classad/formats.h"
#include "server/server_int.h"

/* values[i] becomes the value of the argument naming the type's i-th key;
 * false unless the arguments are exactly the key attributes, once each. */
static bool match_keys(ads_value *values, const ads_type *t, const point_arg *args, size_t n,
                       ads_arena *a)
{
    size_t nk = ads_type_key_count(t);
    if (n != nk || nk > ADS_SERVE_POINT_KEYS)
        return false;
    bool seen[ADS_SERVE_POINT_KEYS] = {false};
    for (size_t i = 0; i < n; i++) {
        size_t k = 0, len = strlen(args[i].name);
        for (; k < nk; k++) {
            ads_str name = ads_type_key(t, k);
            if (name.len == len && strncasecmp(name.p, args[i].name, len) == 0)
                break;
        }
        if (k == nk || seen[k])
            return false;
        seen[k] = true;
        /* As the statement reads it: a ClassAd literal as it is, anything
         * else as a string. */
        const ads_expr *e;
        const ads_value *lit = NULL;
        size_t vlen = strlen(args[i].value);
        if (ads_expr_parse(&e, a, args[i].value, vlen, NULL) == 0)
            lit = ads_expr_literal_value(e);
        values[k] = lit != NULL ? *lit : ads_string(args[i].value, vlen);
    }
    return true;
}

/* The statement compares with =?= (`is`: strings case-sensitive, no
 * promotion), the store's key with `===`: a row whose key only `===` matches
 * ("ABC" for "abc", 1.0 for 1) is the statement's to answer. */
static bool keys_identical(const ads_record *rec, const ads_type *t, const ads_value *keys,
                           ads_arena *a)
{
    for (size_t k = 0; k < ads_type_key_count(t); k++) {
        ads_str name = ads_type_key(t, k);
        ads_value v;
        ads_record_eval_attr(&v, rec, name.p, name.len, a);
        if (!ads_value_is(&v, &keys[k]))
            return false;
    }
    return true;
}

/* The row as a JSON line; POINT_FALLBACK if its key is not identical. */
static int add_row(ads_buf *out, const ads_row *row, const ads_value *keys, ads_arena *a,
                   ads_error *err)
{
    const ads_record *rec;
    int rc = ads_row_record(&rec, row, ADS_ROW_TIMELINE, a, err);
    if (rc == 0 && !keys_identical(rec, row->type, keys, a))
        return POINT_FALLBACK;
    if (rc == 0)
        rc = ads_json_write(out, rec, ADS_JSON_COMPACT, err);
    if (rc == 0)
        ads_buf_addc(out, '\n');
    return rc;
}

/* Every row of the record of latest, oldest first; POINT_FALLBACK when they
 * outgrow what is answered whole. */
static int add_history(ads_buf *out, ads_txn *txn, const ads_row *latest,
                       const ads_value *keys, ads_arena *a, ads_error *err)
{
    ads_scan *sc;
    ads_row *row;
    int rc = ads_history_open(&sc, txn, latest, NULL, ADS_SCAN_DELETED, err);
    if (rc < 0)
        return rc;
    /* a is not reset between rows: keys may live in it, and the rows it
     * holds are bounded with the answer. */
    while ((rc = ads_scan_next(&row, sc, err)) == 1) {
        rc = add_row(out, row, keys, a, err);
        if (rc < 0 || rc == POINT_FALLBACK)
            break;
        if (out->len > ADS_SERVE_HEAD_BYTES) {
            rc = POINT_FALLBACK;
            break;
        }
    }
    ads_scan_close(sc);
    return rc < 0 || rc == POINT_FALLBACK ? rc : 1;
}

/* Do the arguments give every key attribute of t (others may come beside
 * them)? Arguments past the ADS_SERVE_POINT_KEYS kept are not known here:
 * then the statement decides. */
static bool names_key(const ads_type *t, const point_query *pq)
{
    size_t kept = pq->nargs < ADS_SERVE_POINT_KEYS ? pq->nargs : ADS_SERVE_POINT_KEYS;
    for (size_t k = 0; k < ads_type_key_count(t); k++) {
        ads_str name = ads_type_key(t, k);
        size_t i = 0;
        while (i < kept && !(strlen(pq->args[i].name) == name.len &&
                             strncasecmp(pq->args[i].name, name.p, name.len) == 0))
            i++;
        if (i == kept)
            return pq->nargs > kept;
    }
    return true;
}

/* Arguments without every key attribute name no one record: refused,
 * rather than answered by a statement that may match many (and would hold
 * them all, the answer being one object). */
static int not_the_key(const ads_type *t, ads_error *err)
{
    char keys[256];
    size_t at = 0;
    keys[0] = 0;
    for (size_t k = 0; k < ads_type_key_count(t) && at < sizeof keys; k++) {
        ads_str name = ads_type_key(t, k);
        int n = snprintf(keys + at, sizeof keys - at, "%s%.*s", k ? ", " : "", (int)name.len,
                         name.p);
        at += n > 0 ? (size_t)n : 0;
    }
    return ads_error_set(err, ADS_EINVAL,
                         "a record of %s is named by its key attributes: %s",
                         ads_type_name(t), keys);
}

static int read_point(ads_buf *out, ads_txn *txn, const point_query *pq, ads_arena *a,
                      ads_error *err)
{
    const ads_type *t;
    ads_value keys[ADS_SERVE_POINT_KEYS];
    ads_row row;
    if (ads_txn_type(&t, txn, pq->type, pq->type_len, NULL) < 0 ||
        ads_type_key_count(t) > ADS_SERVE_POINT_KEYS)
        return POINT_FALLBACK; /* no such type (the statement says so), or keys past this path */
    if (!names_key(t, pq))
        return not_the_key(t, err);
    if (!match_keys(keys, t, pq->args, pq->nargs, a))
        return POINT_FALLBACK; /* arguments beside the key: the statement filters */
    int rc = ads_txn_get(txn, &row, t, keys, ads_type_key_count(t), a, err);
    if (rc < 0)
        return rc == ADS_EINVAL ? POINT_FALLBACK : rc;
    if (pq->history)
        return rc == 0 ? 0 : add_history(out, txn, &row, keys, a, err);
    if (rc == 0 || row.deleted)
        return 0;
    rc = add_row(out, &row, keys, a, err);
    return rc < 0 || rc == POINT_FALLBACK ? rc : 1;
}

int point_read(ads_buf *out, ads_db *db, const point_query *pq, ads_error *err)
{
    ads_txn *txn = NULL;
    ads_arena *a = ads_arena_new();
    if (a == NULL)
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    int rc = ads_txn_begin(&txn, db, ADS_TXN_READONLY, err);
    if (rc == 0)
        rc = read_point(out, txn, pq, a, err);
    ads_txn_abort(txn);
    ads_arena_free(a);
    if (rc >= 0 && out->failed)
        rc = ads_error_set(err, ADS_ENOMEM, "out of memory");
    return rc;
}
