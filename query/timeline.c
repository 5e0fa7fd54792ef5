/*
 * query/timeline.c: timeline queries (shared/spec/query.md section 3).
 *
 * A temporal filter (@timerange, @duration, @last, @anytime; @now is the
 * default) joined to WHERE with && at the top level switches a SELECT from
 * latest rows to rows over time. Without @intervals the statement returns
 * the rows in effect at some instant of the range (the engine's timeline
 * iterator: one seek per record, then only rows in the range), optionally
 * grouped with ordinary aggregates. With GROUP BY ..., @intervals(D) it is a
 * timeline aggregation (query/tlagg.c).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "query/query_int.h"
#include "query/tlagg.h"

/* ---- finding the temporal filter ---- */

static int temporal_kind(const ads_expr *e)
{
    if (ads_expr_kind_of(e) != ADS_X_CALL)
        return 0;
    ads_str n = ads_expr_name(e);
    if (ads_q__name_is(n, "@timerange"))
        return 1;
    if (ads_q__name_is(n, "@duration") || ads_q__name_is(n, "@last"))
        return 2;
    if (ads_q__name_is(n, "@anytime"))
        return 3;
    if (ads_q__name_is(n, "@now"))
        return 4;
    return 0;
}

static const ads_expr *find_at_call(const ads_expr *e);

static int find_at_call_at(void *ctx, const ads_expr *e)
{
    const ads_expr **found = ctx;
    if (ads_expr_kind_of(e) == ADS_X_CALL) {
        ads_str n = ads_expr_name(e);
        if (n.len && (n.p[0] == '@' || n.p[n.len - 1] == '@')) {
            *found = e;
            return ADS_VISIT_STOP;
        }
    }
    if (ads_expr_kind_of(e) == ADS_X_RECORD) {
        const ads_record *r = ads_expr_record(e);
        for (size_t i = 0; i < ads_record_size(r) && !*found; i++)
            *found = find_at_call(ads_record_expr(r, i));
        return *found ? ADS_VISIT_STOP : ADS_VISIT_SKIP;
    }
    return ADS_VISIT_INTO;
}

/* The first call named @name or name@ in e (in the order written; any one
 * if the walk finds no memory), or NULL. No recursion down chains. */
static const ads_expr *find_at_call(const ads_expr *e)
{
    const ads_expr *found = NULL;
    if (ads_expr_visit(e, find_at_call_at, &found, 0, NULL)) {
        found = NULL;
        ads_expr_visit(e, find_at_call_at, &found, ADS_VISIT_ANY_ORDER, NULL);
    }
    return found;
}

static bool has_at_call(const ads_expr *e)
{
    return find_at_call(e) != NULL;
}

typedef struct split {
    const stmt *st;
    temporal *tf;
    const ads_expr *rest;
    ads_arena *a;
    ads_error *err;
    int found;
} split;

/* An @call in WHERE that is not a temporal filter in its place: which
 * mistake it is, at the call. */
static int misplaced(split *s, const ads_expr *call)
{
    ads_str n = ads_expr_name(call);
    int rc;
    if (n.p[0] != '@')
        rc = ads_error_set(s->err, ADS_EINVAL,
                           "%.*s is a temporal aggregate: it belongs in the select list of a "
                           "timeline aggregation, not in WHERE",
                           (int)n.len, n.p);
    else if (ads_q__name_is(n, "@intervals"))
        rc = ads_error_set(s->err, ADS_EINVAL,
                           "@intervals belongs in GROUP BY (GROUP BY ..., @intervals(D)), not in "
                           "WHERE");
    else if (!temporal_kind(call))
        rc = ads_error_set(s->err, ADS_EINVAL,
                           "unknown temporal filter %.*s: expected @timerange(T1, T2), "
                           "@duration(D), @last(D), @anytime() or @now()",
                           (int)(n.len > 64 ? 64 : n.len), n.p);
    else
        rc = ads_error_set(s->err, ADS_EINVAL,
                           "a temporal filter must be joined to the rest of WHERE with && at "
                           "the top level");
    return s->st ? ads_q__error_place(s->st, n.p, rc, s->err) : rc;
}

/* One node of WHERE's && tree (ads_expr_visit, in the order written, so a
 * chain of any length is no recursion): && goes on into its operands, any
 * other node is a conjunct, a temporal filter or the rest. */
static int conjunct(split *s, const ads_expr *e, const ads_expr *inner);

static int walk_at(void *ctx, const ads_expr *e)
{
    split *s = ctx;
    const ads_expr *inner = e;
    while (ads_expr_kind_of(inner) == ADS_X_PAREN)
        inner = ads_expr_arg(inner, 0);
    if (ads_expr_kind_of(inner) == ADS_X_AND)
        return ADS_VISIT_INTO;
    int rc = conjunct(s, e, inner);
    return rc ? rc : ADS_VISIT_SKIP;
}

static int conjunct(split *s, const ads_expr *e, const ads_expr *inner)
{
    int k = temporal_kind(inner);
    if (k) {
        ads_str name = ads_expr_name(inner);
        int rc = 0;
        size_t n = ads_expr_nargs(inner), want = k == 1 ? 2 : k == 2 ? 1 : 0;
        if (s->found++)
            rc = ads_error_set(s->err, ADS_EINVAL, "a statement takes one temporal filter");
        else if (n != want)
            rc = ads_error_set(s->err, ADS_EINVAL, "%.*s takes %zu argument%s, not %zu",
                               (int)name.len, name.p, want, want == 1 ? "" : "s", n);
        if (rc)
            return s->st ? ads_q__error_place(s->st, name.p, rc, s->err) : rc;
        s->tf->kind = k == 4 ? 0 : k == 3 ? 2 : 1;
        s->tf->duration = k == 2;
        s->tf->t1 = n > 0 ? ads_expr_arg(inner, 0) : NULL;
        s->tf->t2 = n > 1 ? ads_expr_arg(inner, 1) : NULL;
        return 0;
    }
    const ads_expr *at = find_at_call(inner);
    if (at)
        return misplaced(s, at);
    if (!s->rest) {
        s->rest = e;
        return 0;
    }
    return ads_expr_new_and(&s->rest, s->a, s->rest, e, s->err);
}

int ads_q__split_temporal(const stmt *st, const ads_expr *where, temporal *tf,
                          const ads_expr **rest, ads_arena *a, ads_error *err)
{
    memset(tf, 0, sizeof *tf);
    *rest = NULL;
    if (!where)
        return 0;
    split s = {st, tf, NULL, a, err, 0};
    int rc = ads_expr_visit(where, walk_at, &s, 0, err);
    if (!rc)
        *rest = s.rest;
    return rc;
}

/* ---- the range ---- */

static int eval_const(ads_value *out, const ads_expr *e, ads_arena *a)
{
    return ads_expr_eval(out, e, NULL, a);
}

int ads_q__tl_range(ads_query *q, const temporal *tf, double *t1, double *t2, ads_arena *a,
                    ads_error *err)
{
    ads_value v1, v2;
    double now = ads_db_now(q->db);
    if (tf->kind == 2) {
        /* all stored time, rows dated in the future included; a timeline
         * aggregation bounds it (last_stored) */
        *t1 = -INFINITY;
        *t2 = INFINITY;
        return 0;
    }
    if (tf->duration) {
        if (eval_const(&v1, tf->t1, a))
            return ads_error_set(err, ADS_ENOMEM, "out of memory");
        double d = v1.type == ADS_RELTIME ? v1.u.rel
                 : v1.type == ADS_INTEGER ? (double)v1.u.i
                 : v1.type == ADS_REAL ? v1.u.r : NAN;
        if (!(d > 0) || !isfinite(d))
            return ads_error_set(err, ADS_EINVAL,
                                 "@duration needs a positive RelTime (like `1d`), not %s",
                                 ads_vtype_name(v1.type));
        *t1 = now - d;
        *t2 = now;
        return 0;
    }
    if (eval_const(&v1, tf->t1, a) || eval_const(&v2, tf->t2, a))
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    if (v1.type != ADS_ABSTIME || v2.type != ADS_ABSTIME)
        return ads_error_set(err, ADS_EINVAL,
                             "@timerange needs two AbsTimes (like `2024-01-01T00:00:00Z`)");
    *t1 = v1.u.abs.secs;
    *t2 = v2.u.abs.secs;
    if (!(*t1 < *t2))
        return ads_error_set(err, ADS_EINVAL, "@timerange's start must be before its end");
    return 0;
}

/* ---- raw rows over time ---- */

typedef struct raw {
    const stmt *st;
    const ads_expr *where;
    const ads_expr **items, **order;
    ads_value *vals; /* the current row's select item values */
    bool deleted_visible, hidden;
    qgroup *group;
    qcoll *coll;
    const ads_sink *sink;
    uint64_t rows;
    int64_t left;
    ads_arena *ra;
} raw;

static int raw_emit(void *ctx, const ads_record *row, const ads_value *keys, ads_error *err)
{
    raw *r = ctx;
    return ads_q__emit_row(r->coll, r->sink, &r->rows, &r->left, row, keys, err);
}

static int raw_row(raw *r, ads_row *row, ads_error *err)
{
    if (row->deleted && !r->deleted_visible)
        return 0;
    ads_view view = ads_row_view(row, NULL);
    if (r->where) {
        ads_value ok;
        if (ads_expr_eval(&ok, r->where, &view, r->ra))
            return ads_error_set(err, ADS_ENOMEM, "out of memory");
        if (!ads_q__truthy(&ok))
            return 0;
    }
    if (r->group)
        return ads_q__group_add(r->group, &view, r->ra, err);
    ads_record_builder *b;
    int rc = ads_record_builder_new(&b, r->ra, err);
    if (rc)
        return rc;
    if (r->st->star) {
        const ads_record *rec;
        if ((rc = ads_row_record(&rec, row, r->hidden ? ADS_ROW_TIMELINE : 0, r->ra, err)))
            return rc;
        for (size_t i = 0; i < ads_record_size(rec); i++) {
            ads_str n = ads_record_name(rec, i);
            if (!r->hidden && n.len && n.p[0] == '_')
                continue;
            if ((rc = ads_record_builder_add(b, n.p, n.len, ads_record_expr(rec, i), err)))
                return rc;
        }
    } else {
        for (size_t i = 0; i < r->st->nitems; i++) {
            ads_value *v = &r->vals[i];
            if (ads_expr_eval(v, r->items[i], &view, r->ra))
                return ads_error_set(err, ADS_ENOMEM, "out of memory");
            if ((rc = ads_record_builder_add_value(b, r->st->items[i].label.p,
                                                   r->st->items[i].label.len, v, err)))
                return rc;
        }
    }
    ads_value keys[ADS_MAX_ORDER_BY]; /* the parser allows no more */
    for (size_t i = 0; r->coll && i < r->st->norder; i++) {
        long it = r->st->order[i].item;
        if (it >= 0)
            keys[i] = r->vals[it]; /* a label: the item's value, as shown */
        else if (ads_expr_eval(&keys[i], r->order[i], &view, r->ra))
            return ads_error_set(err, ADS_ENOMEM, "out of memory");
    }
    rc = raw_emit(r, ads_record_builder_finish(b), keys, err);
    if (!rc && !r->coll && r->left == 0)
        return 1;
    return rc;
}

static long find_intervals(const stmt *st)
{
    for (size_t i = 0; i < st->ngroup; i++)
        if (ads_expr_kind_of(st->group[i]) == ADS_X_CALL &&
            ads_q__name_is(ads_expr_name(st->group[i]), "@intervals"))
            return (long)i;
    return -1;
}

int ads_q__timeline(ads_query *q, const stmt *st, const temporal *tf, const ads_expr *where,
                    const ads_sink *sink, const ads_exec_options *opt, ads_exec_info *info,
                    ads_error *err)
{
    if (st->has_using || st->njoins)
        return ads_error_set(err, ADS_EINVAL, "a temporal filter cannot be combined with %s",
                             st->has_using ? "USING" : "JOIN");
    ads_arena *a = ads_q__arena(q), *ra = ads_q__arena(q);
    ads_txn *txn = NULL;
    const ads_type *type = NULL;
    qgroup *group = NULL;
    qcoll *coll = NULL;
    ads_timeline *it = NULL;
    int rc;
    if (!a || !ra) {
        rc = ads_error_set(err, ADS_ENOMEM, "out of memory");
        goto cleanup;
    }
    if ((rc = ads_q__txn_read(q, &txn, err)))
        goto cleanup;
    if (st->has_from && (rc = ads_txn_type(&type, txn, st->type.p, st->type.len, err))) {
        ads_q__error_at(st, st->type, rc, err);
        goto cleanup;
    }
    long iv = find_intervals(st);
    if (iv >= 0) {
        rc = ads_q__tl_aggregate(q, st, tf, where, iv, sink, info, err, txn, type, a, ra);
        goto cleanup;
    }
    for (size_t i = 0; i < st->nitems; i++)
        if (has_at_call(st->items[i].e)) {
            rc = ads_error_set(err, ADS_EINVAL,
                               "avg@, min@, max@ and sum@ need GROUP BY ..., @intervals(D)");
            goto cleanup;
        }
    /* raw rows over time */
    double t1, t2;
    if ((rc = ads_q__tl_range(q, tf, &t1, &t2, a, err)))
        goto cleanup;
    raw r;
    memset(&r, 0, sizeof r);
    r.st = st;
    r.sink = sink;
    r.hidden = opt->hidden;
    r.ra = ra;
    r.left = st->norder ? -1 : st->limit;
    bool mentions_deleted = ads_q__mentions(where, "_Deleted");
    for (size_t i = 0; i < st->nitems; i++)
        mentions_deleted |= ads_q__mentions(st->items[i].e, "_Deleted");
    for (size_t i = 0; i < st->ngroup; i++)
        mentions_deleted |= ads_q__mentions(st->group[i], "_Deleted");
    for (size_t i = 0; i < st->norder; i++)
        mentions_deleted |= ads_q__mentions(st->order[i].e, "_Deleted");
    r.deleted_visible = mentions_deleted;
    if (where && (rc = ads_expr_prepare(&r.where, a, where, err)))
        goto cleanup;
    r.items = ads_arena_alloc(a, (st->nitems ? st->nitems : 1) * sizeof *r.items);
    r.order = ads_arena_alloc(a, (st->norder ? st->norder : 1) * sizeof *r.order);
    r.vals = ads_arena_alloc(a, (st->nitems ? st->nitems : 1) * sizeof *r.vals);
    if (!r.items || !r.order || !r.vals) {
        rc = ads_error_set(err, ADS_ENOMEM, "out of memory");
        goto cleanup;
    }
    bool grouped = st->ngroup > 0;
    for (size_t i = 0; i < st->nitems; i++) {
        grouped |= ads_q__has_aggregate(st->items[i].e);
        if ((rc = ads_expr_prepare(&r.items[i], a, st->items[i].e, err)))
            goto cleanup;
    }
    for (size_t i = 0; i < st->norder; i++)
        if ((rc = ads_expr_prepare(&r.order[i], a, st->order[i].e, err)))
            goto cleanup;
    if (grouped && (rc = ads_q__group_plan(&group, st, st->group, st->ngroup, a, err)))
        goto cleanup;
    r.group = group;
    if (st->norder && (rc = ads_q__coll_new(&coll, q, st->order, st->norder, st->limit, err)))
        goto cleanup;
    r.coll = coll;
    if (sink && sink->begin) {
        ads_str *cols = ads_arena_alloc(a, (st->nitems ? st->nitems : 1) * sizeof *cols);
        if (!cols) {
            rc = ads_error_set(err, ADS_ENOMEM, "out of memory");
            goto cleanup;
        }
        for (size_t i = 0; i < st->nitems; i++)
            cols[i] = st->items[i].label;
        if ((rc = sink->begin(sink->ctx, cols, st->star ? 0 : st->nitems, err)))
            goto cleanup;
    }
    if (st->limit != 0) {
        if ((rc = ads_timeline_open(&it, txn, type, t1 == -INFINITY ? -1e300 : t1, t2, err)))
            goto cleanup;
        ads_row *row;
        size_t rec;
        while ((rc = ads_timeline_next(&row, &rec, it, err)) == 1 &&
               !(rc = ads_q__budget(q, err))) {
            ads_arena_reset(ra);
            if ((rc = raw_row(&r, row, err)))
                break;
        }
        if (rc < 0)
            goto cleanup;
    }
    if (group) {
        r.left = st->norder ? -1 : st->limit;
        if ((rc = ads_q__group_emit(group, st, raw_emit, &r, err)))
            goto cleanup;
    }
    if (coll) {
        uint64_t n;
        if ((rc = ads_q__coll_emit(coll, sink, &n, err)))
            goto cleanup;
        r.rows = n;
    }
    if (sink && sink->end && (rc = sink->end(sink->ctx, err)))
        goto cleanup;
    info->rows = r.rows;
    rc = 0;
cleanup:
    ads_timeline_close(it);
    ads_q__group_free(group);
    ads_q__coll_free(coll);
    ads_q__txn_done(q, txn);
    ads_arena_free(ra);
    ads_arena_free(a);
    return rc;
}
