/*
 * query/tlagg.c: timeline aggregation, GROUP BY ..., @intervals(D)
 * (shared/spec/query.md section 3), computed in one sweep over the rows in
 * time order:
 *
 *   - every record has a state: whether it contributes (its row in effect is
 *     not deleted and satisfies WHERE), its group, and the values of the
 *     inner aggregates' arguments;
 *   - every group has the inner aggregates over its contributing records
 *     (count, sum, min, max kept as a sorted multiset, ...), which make the
 *     step function f(t);
 *   - a group's f is integrated lazily: only when it is about to change is
 *     the span since its last change added to the intervals it covers
 *     (avg@'s integral and defined time, min@ / max@), so the cost is per
 *     row, not per row x group;
 *   - sum@ adds, for each instant at which a group has samples, the inner
 *     aggregate of those samples to the interval of the instant.
 * Statements whose aggregates are all sums over records (avg@ or sum@ of
 * count(*), count(x) or sum(x)) take the per-record sweep of
 * query/tlrecord.c instead, which needs no global time order.
 * Intervals are [k*D, (k+1)*D) since the epoch, clipped to the range; each
 * output row is dated at its interval's start after clipping (so the first
 * row of a range that starts between multiples of D is dated at the range's
 * start). An inner aggregate that sees a value it cannot take (sum, avg,
 * min, max of a non-number) is error at those instants, and so is every
 * temporal aggregate of an interval holding such an instant, as the
 * ordinary aggregates are. Memory: a state per record and a cell per group,
 * interval and aggregate.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "query/query_int.h"
#include "query/tlagg.h"

static int mset_add(mset *m, double v)
{
    if (m->n == m->cap) {
        size_t cap = m->cap ? 2 * m->cap : 8;
        double *x = realloc(m->v, cap * sizeof *x);
        if (!x)
            return ADS_ENOMEM;
        m->v = x;
        m->cap = cap;
    }
    size_t lo = 0, hi = m->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (m->v[mid] < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    memmove(&m->v[lo + 1], &m->v[lo], (m->n - lo) * sizeof *m->v);
    m->v[lo] = v;
    m->n++;
    return 0;
}

static void mset_del(mset *m, double v)
{
    size_t lo = 0, hi = m->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (m->v[mid] < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < m->n && m->v[lo] == v) {
        memmove(&m->v[lo], &m->v[lo + 1], (m->n - lo - 1) * sizeof *m->v);
        m->n--;
    }
}

/* Does the inner aggregate give error when it sees values that are not
 * numbers? (sum, avg, min and max, as the ordinary aggregates do; a timeline
 * value must be a number, so min and max of strings or times are error too) */
bool ads_q__tl_needs_numbers(inner_kind k)
{
    return k == IA_SUM || k == IA_AVG || k == IA_MIN || k == IA_MAX;
}

/* f: the inner aggregate of a group's contributing records: 1 and *out, 0
 * when it has no value (undefined), -1 when it is error. */
static int inner_value(const tagg *t, const inner_state *in, double *out)
{
    if (in->records == 0)
        return 0;
    if (in->others && ads_q__tl_needs_numbers(t->inner))
        return -1;
    switch (t->inner) {
    case IA_COUNT_STAR:
        *out = (double)in->records;
        return 1;
    case IA_COUNT:
        *out = (double)in->defined;
        return 1;
    case IA_SUM:
        *out = in->sum;
        return 1;
    case IA_AVG:
        if (!in->numbers)
            return 0;
        *out = in->sum / (double)in->numbers;
        return 1;
    case IA_MIN:
        if (!in->ms.n)
            return 0;
        *out = in->ms.v[0];
        return 1;
    case IA_MAX:
        if (!in->ms.n)
            return 0;
        *out = in->ms.v[in->ms.n - 1];
        return 1;
    }
    return 0;
}

/* Add the span [g->last, t) of constant f to the cells it covers. */
static void integrate(tl *x, tgroup *g, double t)
{
    if (!(t > g->last))
        return;
    double from = g->last > x->t1 ? g->last : x->t1, to = t < x->t2 ? t : x->t2;
    g->last = t;
    if (!(to > from))
        return;
    for (size_t k = 0; k < x->naggs; k++) {
        double f = 0;
        int have = inner_value(&x->aggs[k], &g->in[k], &f);
        if (!have)
            continue;
        size_t j = (size_t)floor((from - x->a0) / x->D);
        for (; j < x->nint; j++) {
            double a = x->a0 + (double)j * x->D, b = a + x->D;
            double lo = from > a ? from : a, hi = to < b ? to : b;
            if (lo >= to)
                break;
            if (hi > lo) {
                cell *c = &g->cells[j * x->naggs + k];
                if (have < 0) {
                    c->bad_f = true;
                    continue;
                }
                c->integral += f * (hi - lo);
                c->dtime += hi - lo;
                if (!c->seen || f < c->lo)
                    c->lo = f;
                if (!c->seen || f > c->hi)
                    c->hi = f;
                c->seen = true;
            }
        }
    }
}

static int inner_update(tl *x, tgroup *g, const rval *vals, int sign)
{
    for (size_t k = 0; k < x->naggs; k++) {
        inner_state *in = &g->in[k];
        const rval *v = &vals[k];
        in->records += (uint64_t)(int64_t)sign;
        if (v->state)
            in->defined += (uint64_t)(int64_t)sign;
        if (v->state == 2)
            in->others += (uint64_t)(int64_t)sign;
        if (v->state == 1) {
            in->numbers += (uint64_t)(int64_t)sign;
            in->sum += sign * v->v;
            if (x->aggs[k].inner == IA_MIN || x->aggs[k].inner == IA_MAX) {
                if (sign > 0) {
                    if (mset_add(&in->ms, v->v))
                        return ads_error_set(x->err, ADS_ENOMEM, "out of memory");
                } else {
                    mset_del(&in->ms, v->v);
                }
            }
        }
        /* sums drift with many + and -: recompute from scratch when empty */
        if (in->numbers == 0)
            in->sum = 0;
    }
    return 0;
}

static void instant_flush(tl *x)
{
    for (size_t i = 0; i < x->ntouched; i++) {
        tgroup *g = x->touched[i];
        double t = x->instant_t;
        if (t >= x->t1 && t < x->t2) {
            size_t j = (size_t)floor((t - x->a0) / x->D);
            for (size_t k = 0; j < x->nint && k < x->naggs; k++) {
                instant *s = &g->now_in[k];
                double v = 0;
                bool have = true;
                if (s->others && ads_q__tl_needs_numbers(x->aggs[k].inner)) {
                    g->cells[j * x->naggs + k].bad_samples = true;
                    continue;
                }
                switch (x->aggs[k].inner) {
                case IA_COUNT_STAR:
                    v = (double)s->records;
                    break;
                case IA_COUNT:
                    v = (double)s->defined;
                    break;
                case IA_SUM:
                    v = s->sum;
                    break;
                case IA_AVG:
                    have = s->numbers > 0;
                    v = have ? s->sum / (double)s->numbers : 0;
                    break;
                case IA_MIN:
                    have = s->numbers > 0;
                    v = s->lo;
                    break;
                case IA_MAX:
                    have = s->numbers > 0;
                    v = s->hi;
                    break;
                }
                if (have)
                    g->cells[j * x->naggs + k].sum += v;
            }
        }
        memset(g->now_in, 0, x->naggs * sizeof *g->now_in);
        g->touched = false;
    }
    x->ntouched = 0;
}

static int instant_note(tl *x, tgroup *g, const rval *vals)
{
    if (!g->touched) {
        if (x->ntouched == x->captouched) {
            size_t cap = x->captouched ? 2 * x->captouched : 16;
            tgroup **m = realloc(x->touched, cap * sizeof *m);
            if (!m)
                return ads_error_set(x->err, ADS_ENOMEM, "out of memory");
            x->touched = m;
            x->captouched = cap;
        }
        x->touched[x->ntouched++] = g;
        g->touched = true;
    }
    for (size_t k = 0; k < x->naggs; k++) {
        instant *s = &g->now_in[k];
        s->records++;
        if (vals[k].state)
            s->defined++;
        if (vals[k].state == 2)
            s->others++;
        if (vals[k].state == 1) {
            if (!s->numbers || vals[k].v < s->lo)
                s->lo = vals[k].v;
            if (!s->numbers || vals[k].v > s->hi)
                s->hi = vals[k].v;
            s->numbers++;
            s->sum += vals[k].v;
        }
    }
    return 0;
}

int ads_q__tl_intervals(tl *x, double first)
{
    if (x->t1 == -INFINITY)
        x->t1 = first;
    if (!(x->t2 > x->t1))
        x->t2 = x->t1 + x->D; /* an empty @anytime: one interval */
    x->a0 = floor(x->t1 / x->D) * x->D;
    double n = ceil((x->t2 - x->a0) / x->D);
    if (!(n >= 1) || n > ADS_MAX_INTERVALS)
        return ads_error_set(x->err, ADS_ELIMIT,
                             "%.0f intervals: choose a longer @intervals or a shorter range", n);
    x->nint = (size_t)n;
    return 0;
}

/* The start of interval j, clipped to the range: the first interval of a
 * range that does not start on a multiple of D starts (and is dated) at the
 * range's start. */
static double interval_start(const tl *x, size_t j)
{
    double a = x->a0 + (double)j * x->D;
    return a > x->t1 ? a : x->t1;
}

tgroup *ads_q__tl_group_of(tl *x, const ads_value *keys)
{
    uint64_t h = 0x9e37;
    for (size_t i = 0; i < x->ngroup; i++)
        h = h * 31 + ads_q__hash(&keys[i]);
    for (tgroup *g = x->table[h & (x->nbuckets - 1)]; g; g = g->next) {
        if (g->hash != h)
            continue;
        size_t i = 0;
        while (i < x->ngroup && ads_value_equiv(&g->keys[i], &keys[i]))
            i++;
        if (i == x->ngroup)
            return g;
    }
    if (x->ngroups == x->capgroups) {
        size_t cap = x->capgroups ? 2 * x->capgroups : 16;
        tgroup **m = realloc(x->groups, cap * sizeof *m);
        if (!m)
            return NULL;
        x->groups = m;
        x->capgroups = cap;
    }
    tgroup *g = ads_arena_alloc(x->a, sizeof *g);
    if (!g)
        return NULL;
    memset(g, 0, sizeof *g);
    g->hash = h;
    g->last = x->t1;
    g->keys = ads_arena_alloc(x->a, (x->ngroup ? x->ngroup : 1) * sizeof *g->keys);
    g->in = calloc(x->naggs ? x->naggs : 1, sizeof *g->in);
    g->now_in = calloc(x->naggs ? x->naggs : 1, sizeof *g->now_in);
    g->cells = calloc(x->nint * (x->naggs ? x->naggs : 1), sizeof *g->cells);
    bool ok = g->keys && g->in && g->now_in && g->cells;
    for (size_t i = 0; ok && i < x->ngroup; i++)
        ok = ads_q__copy(&g->keys[i], &keys[i], x->a) == 0;
    if (!ok) {
        /* not yet a group: tl_free would not see these */
        free(g->in);
        free(g->now_in);
        free(g->cells);
        return NULL;
    }
    g->seq = x->ngroups;
    x->groups[x->ngroups++] = g;
    size_t b = h & (x->nbuckets - 1);
    g->next = x->table[b];
    x->table[b] = g;
    if (x->ngroups > 4 * x->nbuckets) {
        size_t nb = x->nbuckets * 4;
        tgroup **t = calloc(nb, sizeof *t);
        if (t) {
            for (size_t i = 0; i < x->ngroups; i++) {
                tgroup *y = x->groups[i];
                y->next = t[y->hash & (nb - 1)];
                t[y->hash & (nb - 1)] = y;
            }
            free(x->table);
            x->table = t;
            x->nbuckets = nb;
        }
    }
    return g;
}

/* A record's contribution from an inner aggregate's argument's value. */
void ads_q__tl_rval(rval *out, const ads_value *v)
{
    out->state = v->type == ADS_UNDEFINED ? 0
               : (v->type == ADS_INTEGER || v->type == ADS_REAL || v->type == ADS_BOOLEAN) ? 1
               : 2;
    out->v = v->type == ADS_INTEGER ? (double)v->u.i
           : v->type == ADS_REAL ? v->u.r
           : v->type == ADS_BOOLEAN ? (double)v->u.b : 0;
    if (out->state == 1 && !isfinite(out->v))
        out->state = 2;
}

static int agg_row(tl *x, ads_row *row, size_t record, ads_error *err)
{
    if (record >= x->nrecs)
        return ads_error_set(err, ADS_EINVAL, "internal: record %zu out of range", record);
    double t = row->ts > x->t1 ? row->ts : x->t1;
    if (x->nint && t != x->instant_t)
        instant_flush(x);
    x->instant_t = t;
    rstate *rs = &x->recs[record];
    ads_view view = ads_row_view(row, NULL);
    bool contrib = !row->deleted;
    if (contrib && x->where) {
        ads_value ok;
        if (ads_expr_eval(&ok, x->where, &view, x->ra))
            return ads_error_set(err, ADS_ENOMEM, "out of memory");
        contrib = ads_q__truthy(&ok);
    }
    if (rs->contrib) {
        integrate(x, rs->g, t);
        int rc = inner_update(x, rs->g, rs->vals, -1);
        if (rc)
            return rc;
        rs->contrib = false;
    }
    if (!contrib)
        return 0;
    ads_value keys[ADS_MAX_GROUP_BY]; /* the parser allows no more */
    for (size_t i = 0; i < x->ngroup; i++)
        if (ads_expr_eval(&keys[i], x->gexprs[i], &view, x->ra))
            return ads_error_set(err, ADS_ENOMEM, "out of memory");
    tgroup *g = ads_q__tl_group_of(x, keys);
    if (!g)
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    if (!rs->vals && !(rs->vals = calloc(x->naggs ? x->naggs : 1, sizeof *rs->vals)))
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    for (size_t k = 0; k < x->naggs; k++) {
        ads_value v = ads_bool(true);
        if (x->aggs[k].arg && ads_expr_eval(&v, x->aggs[k].arg, &view, x->ra))
            return ads_error_set(err, ADS_ENOMEM, "out of memory");
        ads_q__tl_rval(&rs->vals[k], &v);
    }
    integrate(x, g, t);
    int rc = inner_update(x, g, rs->vals, +1);
    if (rc)
        return rc;
    rs->contrib = true;
    rs->g = g;
    if (row->ts >= x->t1 && row->ts < x->t2)
        return instant_note(x, g, rs->vals);
    return 0;
}

/* The view of one output row: __tagN, __grpN and _Timestamp. */
typedef struct oview {
    tl *x;
    tgroup *g;
    size_t j;
} oview;

static ads_value cell_value(tl *x, tgroup *g, size_t j, size_t k)
{
    const cell *c = &g->cells[j * x->naggs + k];
    if (x->aggs[k].outer == TA_SUM ? c->bad_samples : c->bad_f)
        return ads_errorv();
    switch (x->aggs[k].outer) {
    case TA_AVG:
        return c->dtime > 0 ? ads_real(c->integral / c->dtime) : ads_undefined();
    case TA_MIN:
        return c->seen ? ads_real(c->lo) : ads_undefined();
    case TA_MAX:
        return c->seen ? ads_real(c->hi) : ads_undefined();
    default:
        return ads_real(c->sum);
    }
}

static int oview_lookup(const void *self, const char *name, size_t len, uint32_t hash,
                        ads_arena *arena, ads_value *value, const ads_expr **expr)
{
    const oview *o = self;
    (void)hash;
    (void)arena;
    *expr = NULL;
    if (len == 10 && strncasecmp(name, "_Timestamp", 10) == 0) {
        *value = ads_abstime(interval_start(o->x, o->j), 0);
        return 1;
    }
    if (len > 5 && (strncmp(name, "__tag", 5) == 0 || strncmp(name, "__grp", 5) == 0)) {
        size_t i = 0;
        for (size_t q = 5; q < len; q++) {
            if (name[q] < '0' || name[q] > '9')
                return 0;
            i = i * 10 + (size_t)(name[q] - '0');
        }
        if (name[2] == 't' && i < o->x->naggs) {
            *value = cell_value(o->x, o->g, o->j, i);
            return 1;
        }
        if (name[2] == 'g' && i < o->x->ngroup) {
            *value = o->g->keys[i];
            return 1;
        }
    }
    return 0;
}

static const ads_view_ops oview_ops = {oview_lookup};

/* Plan: select items are temporal aggregates tagg@(inner(arg)), GROUP BY
 * expressions or constants; they become __tagN / __grpN references. */
typedef struct trw {
    tl *x;
    ads_arena *a;
    ads_error *err;
    size_t capaggs;
} trw;

static const ads_expr *trewrite(void *ctx, const ads_expr *e, int *stop)
{
    trw *c = ctx;
    tl *x = c->x;
    char name[32];
    const ads_expr *r = NULL;
    for (size_t i = 0; i < x->ngroup; i++)
        if (ads_expr_equal(e, x->st->group[i]) || ads_expr_equal(e, x->gexprs[i])) {
            snprintf(name, sizeof name, "__grp%zu", i);
            *stop = ads_expr_new_attr(&r, c->a, name, strlen(name), c->err);
            return *stop ? NULL : r;
        }
    if (ads_expr_kind_of(e) != ADS_X_CALL)
        return NULL;
    ads_str n = ads_expr_name(e);
    tagg t;
    if (ads_q__name_is(n, "avg@"))
        t.outer = TA_AVG;
    else if (ads_q__name_is(n, "min@"))
        t.outer = TA_MIN;
    else if (ads_q__name_is(n, "max@"))
        t.outer = TA_MAX;
    else if (ads_q__name_is(n, "sum@"))
        t.outer = TA_SUM;
    else if (ads_q__agg_kind(e) >= 0) {
        *stop = ads_error_set(c->err, ADS_EINVAL,
                              "in a timeline aggregation, %.*s needs a temporal aggregate around "
                              "it: avg@, min@, max@ or sum@ (for example avg@(%.*s(...)))",
                              (int)n.len, n.p, (int)n.len, n.p);
        return NULL;
    } else {
        return NULL;
    }
    const ads_expr *in = ads_expr_nargs(e) == 1 ? ads_expr_arg(e, 0) : NULL;
    int ik = in ? ads_q__agg_kind(in) : -1;
    static const inner_kind map[] = {IA_COUNT_STAR, IA_COUNT, IA_SUM, IA_AVG, IA_MIN, IA_MAX};
    if (ik < 0 || ik > 5) {
        *stop = ads_error_set(c->err, ADS_EINVAL,
                              "%.*s takes one aggregate: count(*), count(x), sum(x), avg(x), "
                              "min(x) or max(x)",
                              (int)n.len, n.p);
        return NULL;
    }
    t.inner = map[ik];
    t.arg = NULL;
    size_t need = t.inner == IA_COUNT_STAR ? 0 : 1;
    if (ads_expr_nargs(in) != need) {
        *stop = ads_error_set(c->err, ADS_EINVAL, "the aggregate in %.*s takes %s", (int)n.len,
                              n.p, need ? "one argument" : "*");
        return NULL;
    }
    if (need && (*stop = ads_expr_prepare(&t.arg, c->a, ads_expr_arg(in, 0), c->err)))
        return NULL;
    if (x->naggs == c->capaggs) {
        size_t cap = c->capaggs ? 2 * c->capaggs : 8;
        tagg *m = ads_arena_alloc(c->a, cap * sizeof *m);
        if (!m) {
            *stop = ads_error_set(c->err, ADS_ENOMEM, "out of memory");
            return NULL;
        }
        if (x->naggs)
            memcpy(m, x->aggs, x->naggs * sizeof *m);
        x->aggs = m;
        c->capaggs = cap;
    }
    x->aggs[x->naggs] = t;
    snprintf(name, sizeof name, "__tag%zu", x->naggs++);
    *stop = ads_expr_new_attr(&r, c->a, name, strlen(name), c->err);
    return *stop ? NULL : r;
}

static int check_trefs(const ads_expr *e, ads_error *err);

static int check_trefs_at(void *ctx, const ads_expr *e)
{
    ads_error *err = ctx;
    ads_expr_kind k = ads_expr_kind_of(e);
    if (k == ADS_X_ATTR || k == ADS_X_ROOTATTR || k == ADS_X_SELECT) {
        ads_str n = ads_expr_name(e);
        if (k != ADS_X_SELECT &&
            ((n.len > 5 && (strncmp(n.p, "__tag", 5) == 0 || strncmp(n.p, "__grp", 5) == 0)) ||
             ads_q__name_is(n, "_Timestamp")))
            return ADS_VISIT_SKIP;
        return ads_error_set(err, ADS_EINVAL,
                             "%.*s in a timeline aggregation is neither inside a temporal "
                             "aggregate nor a GROUP BY expression",
                             (int)n.len, n.p);
    }
    if (k == ADS_X_RECORD) {
        const ads_record *r = ads_expr_record(e);
        for (size_t i = 0; i < ads_record_size(r); i++) {
            int rc = check_trefs(ads_record_expr(r, i), err);
            if (rc)
                return rc;
        }
        return ADS_VISIT_SKIP;
    }
    return ADS_VISIT_INTO;
}

/* The first name in the order written that is not allowed; no recursion
 * down chains. */
static int check_trefs(const ads_expr *e, ads_error *err)
{
    return ads_expr_visit(e, check_trefs_at, err, 0, err);
}

static int cmp_tgroups(const void *pa, const void *pb, void *ctx)
{
    const tgroup *a = *(tgroup *const *)pa, *b = *(tgroup *const *)pb;
    const tl *x = ctx;
    for (size_t i = 0; i < x->ngroup; i++) {
        int c = ads_q__compare(&a->keys[i], &b->keys[i]);
        if (c)
            return c;
    }
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static void tl_free(tl *x)
{
    for (size_t i = 0; i < x->ngroups; i++) {
        tgroup *g = x->groups[i];
        for (size_t k = 0; k < x->naggs; k++)
            free(g->in[k].ms.v);
        for (size_t j = 0; j < x->nint * x->naggs; j++)
            free(g->cells[j].cov);
        free(g->in);
        free(g->now_in);
        free(g->cells);
    }
    /* recs may be NULL with nrecs set: its calloc failed */
    for (size_t i = 0; x->recs && i < x->nrecs; i++)
        free(x->recs[i].vals);
    free(x->recs);
    free(x->groups);
    free(x->table);
    free(x->touched);
}

/* The sweep in time order over every record's rows. */
static int sweep_in_time(tl *x, ads_query *q, ads_timeline *it, ads_error *err)
{
    ads_row *row;
    size_t rec;
    bool started = false;
    int rc;
    x->nrecs = ads_timeline_records(it); /* a state per record */
    if (!(x->recs = calloc(x->nrecs ? x->nrecs : 1, sizeof *x->recs)))
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    x->instant_t = -INFINITY;
    while ((rc = ads_timeline_next(&row, &rec, it, err)) == 1 && !(rc = ads_q__budget(q, err))) {
        if (!started) {
            if ((rc = ads_q__tl_intervals(x, row->ts)))
                return rc;
            started = true;
        }
        ads_arena_reset(x->ra);
        if ((rc = agg_row(x, row, rec, err)))
            return rc;
    }
    if (rc < 0)
        return rc;
    if (!started && x->t1 == -INFINITY) {
        /* @anytime over nothing: no rows */
        x->nint = 0;
    } else if (!started && (rc = ads_q__tl_intervals(x, x->t1))) {
        return rc;
    }
    if (x->nint) {
        instant_flush(x);
        for (size_t i = 0; i < x->ngroups; i++)
            integrate(x, x->groups[i], x->t2);
    }
    return 0;
}

/* The latest _Timestamp stored for type (NULL: every type), deleted rows
 * included; -INFINITY for none. A record's latest row is its last in time,
 * so this reads latest rows only. */
static int last_stored(double *out, ads_query *q, ads_txn *txn, const ads_type *type,
                       ads_error *err)
{
    ads_scan *sc;
    ads_row *row;
    *out = -INFINITY;
    int rc = ads_scan_open(&sc, txn, type, NULL, ADS_SCAN_DELETED, err);
    if (rc)
        return rc;
    ads_q__watch(sc, q); /* every latest row of the type: within the time limit */
    while ((rc = ads_scan_next(&row, sc, err)) == 1)
        if (row->ts > *out)
            *out = row->ts;
    ads_scan_close(sc);
    return rc < 0 ? rc : 0;
}

int ads_q__tl_aggregate(ads_query *q, const stmt *st, const temporal *tf, const ads_expr *where,
                        long iv, const ads_sink *sink, ads_exec_info *info, ads_error *err,
                     ads_txn *txn, const ads_type *type, ads_arena *a, ads_arena *ra)
{
    tl x;
    memset(&x, 0, sizeof x);
    x.st = st;
    x.a = a;
    x.ra = ra;
    x.err = err;
    int rc;
    qcoll *coll = NULL;
    ads_timeline *it = NULL;
    if ((rc = ads_q__tl_range(q, tf, &x.t1, &x.t2, a, err)))
        return rc;
    /* the interval length */
    const ads_expr *ivx = st->group[iv];
    ads_value d;
    if (ads_expr_nargs(ivx) != 1)
        return ads_error_set(err, ADS_EINVAL, "@intervals takes one argument, a RelTime");
    if (ads_expr_eval(&d, ads_expr_arg(ivx, 0), NULL, a))
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    x.D = d.type == ADS_RELTIME ? d.u.rel : d.type == ADS_INTEGER ? (double)d.u.i
        : d.type == ADS_REAL ? d.u.r : NAN;
    if (!(x.D > 0) || !isfinite(x.D))
        return ads_error_set(err, ADS_EINVAL,
                             "@intervals needs a positive RelTime (like `1h`), not %s",
                             ads_vtype_name(d.type));
    /* GROUP BY without @intervals */
    x.gexprs = ads_arena_alloc(a, st->ngroup * sizeof *x.gexprs);
    if (!x.gexprs)
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    for (size_t i = 0; i < st->ngroup; i++) {
        if ((long)i == iv)
            continue;
        if (ads_expr_kind_of(st->group[i]) == ADS_X_CALL &&
            ads_q__name_is(ads_expr_name(st->group[i]), "@intervals"))
            return ads_error_set(err, ADS_EINVAL, "GROUP BY takes one @intervals");
        x.gexprs[x.ngroup++] = st->group[i];
    }
    if (x.ngroup > ADS_MAX_GROUP_BY)
        return ads_error_set(err, ADS_ELIMIT, "at most %d GROUP BY expressions",
                             ADS_MAX_GROUP_BY);
    /* the select list and ORDER BY, rewritten */
    if (st->star)
        return ads_error_set(err, ADS_EINVAL,
                             "SELECT * cannot be a timeline aggregation: list avg@(...) and the "
                             "GROUP BY expressions to show");
    trw c = {&x, a, err, 0};
    x.items = ads_arena_alloc(a, (st->nitems ? st->nitems : 1) * sizeof *x.items);
    x.order = ads_arena_alloc(a, (st->norder ? st->norder : 1) * sizeof *x.order);
    if (!x.items || !x.order)
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    for (size_t i = 0; i < st->nitems; i++)
        if ((rc = ads_expr_rewrite(&x.items[i], a, st->items[i].e, trewrite, &c, err)) ||
            (rc = check_trefs(x.items[i], err)))
            return rc;
    for (size_t i = 0; i < st->norder; i++) {
        x.order[i] = NULL;
        if (st->order[i].item >= 0)
            continue; /* a label: sorted by the item's value */
        if ((rc = ads_expr_rewrite(&x.order[i], a, st->order[i].e, trewrite, &c, err)) ||
            (rc = check_trefs(x.order[i], err)))
            return rc;
    }
    for (size_t i = 0; i < x.ngroup; i++)
        if ((rc = ads_expr_prepare(&x.gexprs[i], a, x.gexprs[i], err)))
            return rc;
    if (where && (rc = ads_expr_prepare(&x.where, a, where, err)))
        return rc;
    for (size_t i = 0; i < st->nitems; i++)
        if (ads_q__name_is(st->items[i].label, "_Timestamp"))
            return ads_error_set(err, ADS_EINVAL,
                                 "_Timestamp is the interval's start in a timeline aggregation: "
                                 "label the column otherwise");

    /* @anytime: to now, or, when rows are dated later, to the end of the
     * interval holding the last of them */
    if (tf->kind == 2) {
        double last, now = ads_db_now(q->db);
        if ((rc = last_stored(&last, q, txn, type, err)))
            return rc;
        x.t2 = now;
        if (last >= now)
            x.t2 = (floor(last / x.D) + 1) * x.D;
    }

    /* the output's columns: _Timestamp, the GROUP BY values the select list
     * does not show (labelled as select items would be), then the select
     * list */
    size_t nextra = 0;
    size_t *extra = ads_arena_alloc(a, (x.ngroup ? x.ngroup : 1) * sizeof *extra);
    ads_str *extra_label = ads_arena_alloc(a, (x.ngroup ? x.ngroup : 1) * sizeof *extra_label);
    ads_value *vals = ads_arena_alloc(a, (st->nitems ? st->nitems : 1) * sizeof *vals);
    if (!extra || !extra_label || !vals)
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    for (size_t gi = 0, si = 0; gi < st->ngroup; gi++) {
        if ((long)gi == iv)
            continue;
        size_t me = si++;
        bool shown = false;
        for (size_t k = 0; k < st->nitems && !shown; k++)
            shown = ads_expr_equal(st->items[k].e, st->group[gi]);
        if (shown)
            continue;
        const ads_expr *ge = st->group[gi];
        ads_buf lb = ADS_BUF_INIT;
        if (ads_expr_kind_of(ge) == ADS_X_ATTR || ads_expr_kind_of(ge) == ADS_X_SELECT) {
            ads_str n = ads_expr_name(ge);
            ads_buf_add(&lb, n.p, n.len);
        } else {
            ads_expr_unparse(&lb, ge);
        }
        char *l = lb.failed ? NULL : ads_arena_strndup(a, lb.p ? lb.p : "", lb.len);
        ads_buf_free(&lb);
        if (!l)
            return ads_error_set(err, ADS_ENOMEM, "out of memory");
        extra[nextra] = me;
        extra_label[nextra].p = l;
        extra_label[nextra].len = strlen(l);
        nextra++;
    }
    if (sink && sink->begin) {
        ads_str *cols = ads_arena_alloc(a, (st->nitems + nextra + 1) * sizeof *cols);
        if (!cols)
            return ads_error_set(err, ADS_ENOMEM, "out of memory");
        cols[0] = (ads_str){"_Timestamp", 10};
        for (size_t i = 0; i < nextra; i++)
            cols[1 + i] = extra_label[i];
        for (size_t i = 0; i < st->nitems; i++)
            cols[1 + nextra + i] = st->items[i].label;
        if ((rc = sink->begin(sink->ctx, cols, st->nitems + nextra + 1, err)))
            return rc;
    }

    /* the sweep (none for LIMIT 0: nothing to return) */
    if (st->limit != 0) {
        double t_open = x.t1 == -INFINITY ? -1e300 : x.t1;
        double t_close = x.t2 > t_open ? x.t2 : t_open + x.D;
        if ((rc = ads_timeline_open(&it, txn, type, t_open, t_close, err)))
            goto cleanup;
        x.nbuckets = 64;
        x.table = calloc(x.nbuckets, sizeof *x.table);
        if (!x.table) {
            rc = ads_error_set(err, ADS_ENOMEM, "out of memory");
            goto cleanup;
        }
        if (ads_q__tl_linear(&x)) {
            ads_timeline_by_record(it);
            rc = ads_q__tl_by_record(&x, q, it, err);
        } else {
            rc = sweep_in_time(&x, q, it, err);
        }
        if (rc < 0)
            goto cleanup;
    }

    /* output: groups in GROUP BY value order, each interval in time order */
    if (st->norder && (rc = ads_q__coll_new(&coll, q, st->order, st->norder, st->limit, err)))
        goto cleanup;
    if (x.ngroups > 1)
        qsort_r(x.groups, x.ngroups, sizeof *x.groups, cmp_tgroups, &x);
    uint64_t rows = 0;
    int64_t left = st->norder ? -1 : st->limit;
    for (size_t i = 0; i < x.ngroups && left != 0; i++) {
        for (size_t j = 0; j < x.nint && left != 0; j++) {
            ads_arena_reset(ra);
            oview o = {&x, x.groups[i], j};
            ads_view view = {&oview_ops, &o, NULL};
            ads_record_builder *b;
            if ((rc = ads_record_builder_new(&b, ra, err)))
                goto cleanup;
            ads_value ts = ads_abstime(interval_start(&x, j), 0);
            if ((rc = ads_record_builder_add_value(b, "_Timestamp", 10, &ts, err)))
                goto cleanup;
            for (size_t k = 0; k < nextra; k++)
                if ((rc = ads_record_builder_add_value(b, extra_label[k].p, extra_label[k].len,
                                                       &x.groups[i]->keys[extra[k]], err)))
                    goto cleanup;
            for (size_t k = 0; k < st->nitems; k++) {
                if (ads_expr_eval(&vals[k], x.items[k], &view, ra)) {
                    rc = ads_error_set(err, ADS_ENOMEM, "out of memory");
                    goto cleanup;
                }
                if ((rc = ads_record_builder_add_value(b, st->items[k].label.p,
                                                       st->items[k].label.len, &vals[k], err)))
                    goto cleanup;
            }
            const ads_record *out = ads_record_builder_finish(b);
            if (coll) {
                ads_value keys[ADS_MAX_ORDER_BY]; /* the parser allows no more */
                for (size_t k = 0; k < st->norder; k++) {
                    if (st->order[k].item >= 0) {
                        keys[k] = vals[st->order[k].item];
                    } else if (ads_expr_eval(&keys[k], x.order[k], &view, ra)) {
                        rc = ads_error_set(err, ADS_ENOMEM, "out of memory");
                        goto cleanup;
                    }
                }
                if ((rc = ads_q__coll_add(coll, out, keys, err)))
                    goto cleanup;
                continue;
            }
            if (sink && sink->row && (rc = sink->row(sink->ctx, out, err)))
                goto cleanup;
            rows++;
            if (left > 0)
                left--;
        }
    }
    if (coll && (rc = ads_q__coll_emit(coll, sink, &rows, err)))
        goto cleanup;
    if (sink && sink->end && (rc = sink->end(sink->ctx, err)))
        goto cleanup;
    info->rows = rows;
    rc = 0;
cleanup:
    ads_q__coll_free(coll);
    ads_timeline_close(it);
    tl_free(&x);
    return rc;
}
