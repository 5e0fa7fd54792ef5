/*
 * query/write.c: UPDATE, DELETE, PURGE and STORE (shared/spec/query.md
 * sections 1 and 2). Each runs in one write transaction through
 * ads_db_write, so it is atomic (a failure writes nothing) and a full map is
 * grown and the statement run again. The row set of UPDATE / DELETE / PURGE
 * is a scan of latest rows with the WHERE evaluated on the stored bytes;
 * deleted records are visible to DELETE and UPDATE only when the statement
 * mentions _Deleted, and always to PURGE.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "classad/formats.h"
#include "query/query_int.h"

typedef struct wjob {
    ads_query *q;
    const stmt *st;
    const ads_expr *where;  /* prepared */
    const ads_expr **sets;  /* prepared SET expressions */
    uint64_t done;
    uint64_t unchanged;     /* STORE: records that appended no row */
    ads_arena *a;
} wjob;

/* The types a statement without FROM may touch: all of them (its WHERE, which
 * must mention AdType, picks). */
static int scan_types(ads_txn *txn, const stmt *st, const ads_type **t, ads_error *err)
{
    *t = NULL;
    if (st->has_from) {
        int rc = ads_txn_type(t, txn, st->type.p, st->type.len, err);
        return rc ? ads_q__error_at(st, st->type, rc, err) : 0;
    }
    return 0;
}

/* UPDATE: the latest row with the SET values laid over it. */
static int update_row(wjob *j, ads_txn *txn, ads_row *row, ads_arena *ra, ads_error *err)
{
    const stmt *st = j->st;
    const ads_record *old;
    int rc = ads_row_record(&old, row, 0, ra, err);
    if (rc)
        return rc;
    ads_view view = ads_row_view(row, NULL);
    ads_value vals[256];
    if (st->nsets > 256)
        return ads_error_set(err, ADS_ELIMIT, "at most 256 SET assignments");
    /* every SET is evaluated against the row as it was */
    for (size_t i = 0; i < st->nsets; i++)
        if (ads_expr_eval(&vals[i], j->sets[i], &view, ra))
            return ads_error_set(err, ADS_ENOMEM, "out of memory");
    ads_record_builder *b;
    if ((rc = ads_record_builder_new(&b, ra, err)))
        return rc;
    for (size_t i = 0; i < ads_record_size(old); i++) {
        ads_str n = ads_record_name(old, i);
        bool replaced = false;
        for (size_t k = 0; k < st->nsets && !replaced; k++)
            replaced = st->sets[k].name.len == n.len &&
                       strncasecmp(st->sets[k].name.p, n.p, n.len) == 0;
        if (!replaced && (rc = ads_record_builder_add(b, n.p, n.len, ads_record_expr(old, i), err)))
            return rc;
    }
    for (size_t k = 0; k < st->nsets; k++) {
        if (vals[k].type == ADS_UNDEFINED)
            continue; /* SET x = undefined removes x */
        if ((rc = ads_record_builder_add_value(b, st->sets[k].name.p, st->sets[k].name.len,
                                               &vals[k], err)))
            return rc;
    }
    ads_write_info info;
    if ((rc = ads_txn_put_row(txn, row, ads_record_builder_finish(b), &info, err)))
        return rc;
    j->done++;
    return 0;
}

static int rows_fn(ads_txn *txn, void *ctx, ads_error *err)
{
    wjob *j = ctx;
    const stmt *st = j->st;
    const ads_type *t;
    j->done = 0;
    int rc = scan_types(txn, st, &t, err);
    if (rc)
        return rc;
    bool mentions_deleted = ads_q__mentions(st->where, "_Deleted");
    for (size_t i = 0; i < st->nsets; i++)
        mentions_deleted |= ads_q__mentions(st->sets[i].e, "_Deleted") ||
                            ads_q__name_is(st->sets[i].name, "_Deleted");
    unsigned flags = st->kind == ADS_STMT_PURGE || mentions_deleted ? ADS_SCAN_DELETED : 0;
    ads_scan *sc;
    ads_row *row;
    ads_arena *ra = ads_q__arena(j->q);
    if (!ra)
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    if ((rc = ads_scan_open(&sc, txn, t, j->where, flags, err))) {
        ads_arena_free(ra);
        return rc;
    }
    while ((rc = ads_scan_next(sc, &row, err)) == 1 && !(rc = ads_q__budget(j->q, err))) {
        ads_arena_reset(ra);
        switch (st->kind) {
        case ADS_STMT_UPDATE:
            rc = update_row(j, txn, row, ra, err);
            break;
        case ADS_STMT_DELETE: {
            ads_write_info info;
            if (!(rc = ads_txn_delete(txn, row, &info, err)) && info.changed)
                j->done++;
            break;
        }
        default:
            if (!(rc = ads_txn_purge(txn, row, err)))
                j->done++;
            break;
        }
        if (rc)
            break;
    }
    ads_scan_close(sc);
    ads_arena_free(ra);
    return rc < 0 ? rc : 0;
}

/* STORE: each record, with constants folded into values. */
static int store_fn(ads_txn *txn, void *ctx, ads_error *err)
{
    wjob *j = ctx;
    const stmt *st = j->st;
    j->done = 0;
    j->unchanged = 0; /* the statement may run again after the map grows */
    ads_arena *ra = ads_q__arena(j->q);
    if (!ra)
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    int rc = 0;
    for (size_t i = 0; i < st->nrecords && !rc; i++) {
        ads_write_info wi;
        ads_arena_reset(ra);
        const ads_record *r = ads_expr_record(st->records[i]);
        ads_record_builder *b;
        if ((rc = ads_record_builder_new(&b, ra, err)))
            break;
        for (size_t k = 0; k < ads_record_size(r) && !rc; k++) {
            const ads_expr *e;
            ads_str n = ads_record_name(r, k);
            if (!(rc = ads_expr_fold(&e, ra, ads_record_expr(r, k), err)))
                rc = ads_record_builder_add(b, n.p, n.len, e, err);
        }
        if (!rc && (rc = ads_txn_store(txn, ads_record_builder_finish(b), &wi, err))) {
            /* say which record, when there are several */
            if (st->nrecords > 1 && err) {
                char msg[ADS_ERROR_MESSAGE_MAX];
                snprintf(msg, sizeof msg, "%s", err->message);
                ads_error_set(err, rc, "record %zu: %s", i + 1, msg);
            }
        }
        if (!rc && wi.changed)
            j->done++;
        else if (!rc)
            j->unchanged++;
    }
    ads_arena_free(ra);
    return rc;
}

int ads_q__write(ads_query *q, const stmt *st, const ads_expr *where, ads_exec_info *info,
                 ads_error *err)
{
    wjob j = {q, st, NULL, NULL, 0, 0, ads_q__arena(q)};
    if (!j.a)
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    int rc = 0;
    if (st->kind == ADS_STMT_STORE) {
        rc = ads_db_write(q->db, store_fn, &j, err);
        goto done;
    }
    if (where && (rc = ads_expr_prepare(&j.where, j.a, where, err)))
        goto done;
    if (st->kind == ADS_STMT_UPDATE) {
        j.sets = ads_arena_alloc(j.a, (st->nsets ? st->nsets : 1) * sizeof *j.sets);
        if (!j.sets) {
            rc = ads_error_set(err, ADS_ENOMEM, "out of memory");
            goto done;
        }
        /* (the same name twice was refused by exec.c's check_stmt) */
        for (size_t i = 0; i < st->nsets; i++)
            if ((rc = ads_expr_prepare(&j.sets[i], j.a, st->sets[i].e, err)))
                goto done;
        /* a key attribute cannot be SET: check against the type */
        ads_txn *txn;
        const ads_type *t;
        if ((rc = ads_txn_begin(&txn, q->db, ADS_TXN_READONLY, err)))
            goto done;
        if ((rc = ads_txn_type(&t, txn, st->type.p, st->type.len, err)))
            ads_q__error_at(st, st->type, rc, err);
        for (size_t i = 0; !rc && i < st->nsets; i++) {
            ads_str n = st->sets[i].name;
            if (ads_q__name_is(n, "AdType"))
                rc = ads_error_set(err, ADS_EINVAL, "SET cannot change AdType");
            for (size_t k = 0; !rc && k < ads_type_key_count(t); k++) {
                ads_str key = ads_type_key(t, k);
                if (key.len == n.len && strncasecmp(key.p, n.p, n.len) == 0)
                    rc = ads_error_set(err, ADS_EINVAL,
                                       "SET cannot change %.*s, a key attribute of type %s",
                                       (int)n.len, n.p, ads_type_name(t));
            }
        }
        ads_txn_abort(txn);
        if (rc)
            goto done;
    }
    rc = ads_db_write(q->db, rows_fn, &j, err);
done:
    if (!rc) {
        info->rows = j.done;
        info->unchanged = j.unchanged;
    }
    ads_arena_free(j.a);
    return rc;
}
