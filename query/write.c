/*
 * query/write.c: UPDATE, DELETE, PURGE and STORE (shared/spec/query.md
 * sections 1 and 2). Each runs in one write transaction through
 * ads_db_write, so it is atomic (a failure writes nothing) and a full map is
 * grown and the statement run again; or in the caller's or BEGIN's
 * transaction (session.c), which commits or rolls back with the rest. The row set of UPDATE / DELETE / PURGE
 * is the one record a WHERE that pins the key names (a key lookup), a scan
 * of latest rows with the WHERE evaluated on the stored bytes, or
 * the records a secondary index yields when the planner picks one as for a
 * SELECT (plan.c; in a write transaction the index scan finds every record
 * before the first is written, so a write that moves index entries cannot
 * disturb the walk); deleted records are visible to DELETE and UPDATE only when the statement
 * mentions _Deleted, and always to PURGE. PURGE HISTORY trims each picked
 * record's history at a cut (engine.h, ads_txn_trim_history).
 *
 * EXPLAIN of UPDATE, DELETE or PURGE plans in a read transaction and shows
 * the plan (explain.c) without writing; EXPLAIN ANALYZE runs the write, as
 * PostgreSQL does (inside BEGIN ... ROLLBACK it is undone with the rest),
 * and returns the plan with what each step read, kept and wrote.
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
    const ads_expr **conj;  /* the WHERE's top-level conjuncts, for the planner */
    size_t nconj;
    const ads_expr **sets;  /* prepared SET expressions */
    uint64_t done;
    uint64_t unchanged;     /* STORE: records that appended no row */
    ads_arena *a;
    const ads_expr *where_text; /* the WHERE as written (EXPLAIN shows it) */
    ads_buf plan;               /* EXPLAIN ANALYZE: the plan, made in the transaction */
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

/* Deleted records are seen by PURGE, and by UPDATE and DELETE when the
 * statement mentions _Deleted. */
static unsigned write_flags(const stmt *st)
{
    bool mentions_deleted = ads_q__mentions(st->where, "_Deleted");
    for (size_t i = 0; i < st->nsets; i++)
        mentions_deleted |= ads_q__mentions(st->sets[i].e, "_Deleted") ||
                            ads_q__name_is(st->sets[i].name, "_Deleted");
    return st->kind == ADS_STMT_PURGE || mentions_deleted ? ADS_SCAN_DELETED : 0;
}

/* Does the WHERE pin every key attribute of t (a key lookup)? keys[16]. */
static bool pinned(const wjob *j, const ads_type *t, ads_value *keys, ads_arena *a)
{
    ads_str none = {"", 0};
    return t && j->nconj && ads_q__pinned_keys(t, j->conj, j->nconj, none, keys, a);
}

/* What EXPLAIN shows of the rows a write picks (t NULL: every type). */
static ads_q__xsel write_plan(const wjob *j, const ads_type *t, bool point,
                              const ads_q__iplan *ip, unsigned flags, const ads_q__xcount *run)
{
    ads_str none = {"", 0};
    ads_q__xsel x = {j->st, t,     none, point, false, (flags & ADS_SCAN_DELETED) != 0, ip,
                     j->where_text, NULL, NULL, 0, false, run};
    return x;
}

/* EXPLAIN UPDATE / DELETE / PURGE: the plan, in a read transaction;
 * nothing is written. */
static int explain_plan(wjob *j, const ads_sink *sink, ads_exec_info *info, ads_error *err)
{
    ads_txn *txn;
    const ads_type *t;
    ads_q__iplan ip;
    ads_str none = {"", 0};
    memset(&ip, 0, sizeof ip);
    int rc = ads_q__txn_read(j->q, &txn, err);
    if (rc)
        return rc;
    unsigned flags = write_flags(j->st);
    ads_value keys[16];
    bool point = false;
    if (!(rc = scan_types(txn, j->st, &t, err)) && !(point = pinned(j, t, keys, j->a)) && t)
        rc = ads_q__plan_index(&ip, j->q, txn, t, j->conj, j->nconj, none, j->a, err);
    if (!rc) {
        ads_q__xsel x = write_plan(j, t, point, &ip, flags, NULL);
        rc = ads_q__explain_write(&x, NULL, NULL, sink, &info->rows, j->a, err);
    }
    ads_q__txn_done(j->q, txn);
    info->kind = ADS_STMT_SELECT;
    return rc;
}

/* The statement's write of one record it picked. */
static int write_row(wjob *j, ads_txn *txn, ads_row *row, ads_arena *ra, ads_error *err)
{
    int rc;
    ads_write_info info;
    switch (j->st->kind) {
    case ADS_STMT_UPDATE:
        return update_row(j, txn, row, ra, err);
    case ADS_STMT_DELETE:
        if (!(rc = ads_txn_delete(txn, row, &info, err)) && info.changed)
            j->done++;
        return rc;
    default:
        if (!(rc = ads_txn_purge(txn, row, err)))
            j->done++;
        return rc;
    }
}

/* A WHERE that pins the key: the one record, if it is there and passes. */
static int point_fn(wjob *j, ads_txn *txn, const ads_type *t, const ads_value *keys,
                    unsigned flags, ads_q__xcount *xc, ads_arena *ra, ads_error *err)
{
    ads_row row = {0};
    int rc = ads_txn_get(txn, &row, t, keys, ads_type_key_count(t), ra, err);
    if (rc <= 0)
        return rc;
    xc->src.rows = 1;
    if (row.deleted && !(flags & ADS_SCAN_DELETED))
        return 0;
    ads_value ok = ads_bool(true);
    ads_view view = ads_row_view(&row, NULL);
    if (j->where && ads_expr_eval(&ok, j->where, &view, ra))
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    if (!ads_q__truthy(&ok))
        return 0;
    xc->src_out = 1;
    return write_row(j, txn, &row, ra, err);
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
    unsigned flags = write_flags(st);
    ads_scan *sc;
    ads_row *row;
    ads_q__iplan ip;
    ads_q__xcount xc;
    ads_str none = {"", 0};
    memset(&ip, 0, sizeof ip);
    memset(&xc, 0, sizeof xc);
    ads_arena *ra = ads_q__arena(j->q), *pa = ads_q__arena(j->q);
    ads_value keys[16];
    bool point = false;
    if (!ra || !pa)
        rc = ads_error_set(err, ADS_ENOMEM, "out of memory");
    else if ((point = pinned(j, t, keys, pa)))
        rc = point_fn(j, txn, t, keys, flags, &xc, ra, err);
    else if (t)
        rc = ads_q__open_rows(&sc, &ip, j->q, txn, t, j->conj, j->nconj, none, j->where, flags,
                              pa, err);
    else if (!(rc = ads_scan_open(&sc, txn, t, j->where, flags, err)))
        ads_q__watch(sc, j->q);
    if (rc || point)
        goto out;
    while ((rc = ads_scan_next(&row, sc, err)) == 1 && !(rc = ads_q__budget(j->q, err))) {
        ads_arena_reset(ra);
        xc.src_out++;
        if ((rc = write_row(j, txn, row, ra, err)))
            break;
    }
    ads_scan_counts_get(&xc.src, sc);
    ads_scan_close(sc);
out:
    if (rc >= 0 && st->analyze) {
        /* the plan names the index of this transaction's type: made here */
        ads_q__xsel x = write_plan(j, t, point, &ip, flags, &xc);
        uint64_t steps;
        ads_buf_clear(&j->plan);
        rc = ads_q__explain_write(&x, &j->done, &j->plan, NULL, &steps, ra, err);
    }
    ads_arena_free(ra);
    ads_arena_free(pa);
    return rc < 0 ? rc : 0;
}

/* ---- PURGE HISTORY ---- */

/* The conjuncts of the WHERE of PURGE HISTORY: the cut (`_Timestamp < T`,
 * T a constant time) and the conditions that pick records. */
typedef struct hjob {
    ads_query *q;
    const stmt *st;
    bool has_cut;
    double cut;
    const ads_expr **conds; /* prepared */
    size_t nconds;
    ads_trim_result res;
} hjob;

static const ads_expr *unparen(const ads_expr *e)
{
    while (e && ads_expr_kind_of(e) == ADS_X_PAREN)
        e = ads_expr_arg(e, 0);
    return e;
}

/* Split e at its top-level && into the cut and the other conditions. */
static int split_where(hjob *h, const ads_expr *e, ads_arena *a, ads_error *err)
{
    e = unparen(e);
    if (ads_expr_kind_of(e) == ADS_X_AND) {
        int rc = split_where(h, ads_expr_arg(e, 0), a, err);
        return rc ? rc : split_where(h, ads_expr_arg(e, 1), a, err);
    }
    const ads_expr *l = unparen(ads_expr_arg(e, 0));
    if (ads_q__mentions(e, "_Timestamp")) {
        /* only as the cut: a row's date is what the cut compares, not a
         * condition on records */
        if (ads_expr_kind_of(e) != ADS_X_BINARY || strcmp(ads_expr_op(e), "<") != 0 ||
            ads_expr_kind_of(l) != ADS_X_ATTR || !ads_q__name_is(ads_expr_name(l), "_Timestamp") ||
            ads_q__mentions(ads_expr_arg(e, 1), "_Timestamp"))
            return ads_error_set(err, ADS_EINVAL,
                                 "PURGE HISTORY takes its cut as _Timestamp < T (T a time), "
                                 "joined by && to conditions on the records");
        if (h->has_cut)
            return ads_error_set(err, ADS_EINVAL, "PURGE HISTORY takes one cut, not two");
        ads_value v;
        if (ads_expr_eval(&v, ads_expr_arg(e, 1), NULL, a))
            return ads_error_set(err, ADS_ENOMEM, "out of memory");
        if (v.type == ADS_ABSTIME)
            h->cut = v.u.abs.secs;
        else if (v.type == ADS_INTEGER)
            h->cut = (double)v.u.i;
        else if (v.type == ADS_REAL)
            h->cut = v.u.r;
        else
            return ads_error_set(err, ADS_EINVAL,
                                 "PURGE HISTORY: the cut after _Timestamp < must be a time "
                                 "(an AbsTime, or seconds since 1970) that needs no record, "
                                 "not %s",
                                 ads_vtype_name(v.type));
        if (h->cut != h->cut)
            return ads_error_set(err, ADS_EINVAL, "PURGE HISTORY: the cut is NaN");
        h->has_cut = true;
        return 0;
    }
    const ads_expr **more = ads_arena_alloc(a, (h->nconds + 1) * sizeof *more);
    if (!more)
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    if (h->nconds)
        memcpy(more, h->conds, h->nconds * sizeof *more);
    h->conds = more;
    return ads_expr_prepare(&h->conds[h->nconds++], a, e, err);
}

static int history_fn(ads_txn *txn, void *ctx, ads_error *err)
{
    hjob *h = ctx;
    const ads_type *t;
    memset(&h->res, 0, sizeof h->res);
    int rc = scan_types(txn, h->st, &t, err);
    if (rc)
        return rc;
    double cut = h->cut;
    if (!h->has_cut) {
        if (!(ads_type_retention(t) > 0))
            return ads_error_set(err, ADS_EINVAL,
                                 "type %s has no HistoryRetention: give the cut, as in PURGE "
                                 "HISTORY FROM %s WHERE _Timestamp < absTime(\"...\")",
                                 ads_type_name(t), ads_type_name(t));
        cut = ads_db_now(ads_txn_db(txn)) - ads_type_retention(t);
    }
    ads_scan *sc;
    ads_row *row;
    ads_arena *ra = ads_q__arena(h->q);
    if (!ra)
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    if ((rc = ads_scan_open(&sc, txn, t, NULL, ADS_SCAN_DELETED, err))) {
        ads_arena_free(ra);
        return rc;
    }
    while ((rc = ads_scan_next(&row, sc, err)) == 1 && !(rc = ads_q__budget(h->q, err))) {
        ads_arena_reset(ra);
        bool pick = true;
        ads_view view = ads_row_view(row, NULL);
        for (size_t i = 0; i < h->nconds && pick; i++) {
            ads_value v;
            if (ads_expr_eval(&v, h->conds[i], &view, ra)) {
                rc = ads_error_set(err, ADS_ENOMEM, "out of memory");
                break;
            }
            pick = ads_q__truthy(&v);
        }
        if (rc || (pick && (rc = ads_txn_trim_history(txn, row, cut, &h->res, err))))
            break;
    }
    ads_scan_close(sc);
    ads_arena_free(ra);
    return rc < 0 ? rc : 0;
}

static int purge_history(ads_query *q, const stmt *st, ads_exec_info *info, ads_error *err)
{
    hjob h;
    memset(&h, 0, sizeof h);
    h.q = q;
    h.st = st;
    ads_arena *a = ads_q__arena(q);
    if (!a)
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    int rc = st->where ? split_where(&h, st->where, a, err) : 0;
    if (!rc)
        rc = ads_q__txn_write(q, history_fn, &h, err);
    if (!rc) {
        info->history = true;
        info->rows = h.res.rows;
        info->records = h.res.records;
    }
    ads_arena_free(a);
    return rc;
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

int ads_q__write(ads_query *q, const stmt *st, const ads_expr *where, const ads_sink *sink,
                 ads_exec_info *info, ads_error *err)
{
    wjob j = {q, st, NULL, NULL, 0, NULL, 0, 0, ads_q__arena(q), where, ADS_BUF_INIT};
    if (!j.a)
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    int rc = 0;
    if (st->kind == ADS_STMT_STORE) {
        rc = ads_q__txn_write(q, store_fn, &j, err);
        goto done;
    }
    if (st->kind == ADS_STMT_PURGE && st->history) {
        ads_arena_free(j.a);
        return purge_history(q, st, info, err);
    }
    if (where && ((rc = ads_expr_prepare(&j.where, j.a, where, err)) ||
                  (rc = ads_q__conjuncts(where, &j.conj, &j.nconj, j.a, err))))
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
        if ((rc = ads_q__txn_read(q, &txn, err)))
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
        ads_q__txn_done(q, txn);
        if (rc)
            goto done;
    }
    if (st->explain && !st->analyze) {
        rc = explain_plan(&j, sink, info, err);
        goto out;
    }
    rc = ads_q__txn_write(q, rows_fn, &j, err);
    if (!rc && st->analyze) {
        /* EXPLAIN ANALYZE ran the write (as PostgreSQL's does): its rows
         * are the plan */
        rc = ads_q__explain_send(&j.plan, sink, &info->rows, j.a, err);
        info->kind = ADS_STMT_SELECT;
        goto out;
    }
done:
    if (!rc) {
        info->rows = j.done;
        info->unchanged = j.unchanged;
    }
out:
    ads_buf_free(&j.plan);
    ads_arena_free(j.a);
    return rc;
}
