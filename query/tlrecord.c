/*
 * query/tlrecord.c: the per-record sweep of a timeline aggregation.
 *
 * When every temporal aggregate is avg@ or sum@ of count(*), count(x) or
 * sum(x), a group's f(t) is a sum over its contributing records, so its
 * integral over an interval is the sum of each record's own integral, and
 * sum@'s samples add up the same way: no global time order is needed. The
 * rows are read record by record (each record's in time order, no merge of
 * every record's rows) and each span during which a record contributes is
 * added to the cells it covers as soon as it ends. What is not a sum is
 * avg@'s defined time, the measure of the instants at which the group has at
 * least one contributing record: each cell keeps the union of its records'
 * spans as a short sorted list of disjoint spans (one, once some record
 * covers the whole interval), and its measure is the defined time. A
 * record whose value is not a number where the inner aggregate needs one
 * makes the cells of its span error, as the sweep in time order does
 * (query/tlagg.c). The answers are the same as that sweep's; sums of reals
 * may differ in the last bits, since they are added in another order.
 *
 * Most rows of a record differ from the one before only in the values
 * aggregated and their dates, so WHERE's truth and the group are kept from
 * one row to the next (the memo below) when both read only attributes named
 * plainly (ads_expr_plain_refs) and the row's bytes for each of those are
 * the same plain literal as the last row evaluated (or it lacks the name as
 * that row did): the same values then give the same results. An attribute
 * holding an expression, or any value read with checks, is evaluated.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "classad/msgpack_int.h"
#include "query/tlagg.h"

bool ads_q__tl_linear(const tl *x)
{
    if (!(x->t1 > -INFINITY))
        return false; /* @anytime starts at the first row in time */
    for (size_t k = 0; k < x->naggs; k++) {
        const tagg *t = &x->aggs[k];
        if (t->outer != TA_AVG && t->outer != TA_SUM)
            return false;
        if (t->inner != IA_COUNT_STAR && t->inner != IA_COUNT && t->inner != IA_SUM)
            return false;
    }
    return true;
}

/* One record's state: contributing to g since `since` with these values. */
typedef struct recstate {
    bool contrib;
    tgroup *g;
    double since;
    rval *vals; /* per aggregate */
} recstate;

/* What one record adds to an inner aggregate's f (or to one sample). */
static double part(inner_kind k, const rval *v)
{
    if (k == IA_COUNT_STAR)
        return 1;
    if (k == IA_COUNT)
        return v->state ? 1 : 0;
    return v->state == 1 ? v->v : 0;
}

static bool bad(inner_kind k, const rval *v)
{
    return v->state == 2 && ads_q__tl_needs_numbers(k);
}

/* The first of c's spans that ends at or after lo. */
static size_t cov_find(const cell *c, double lo)
{
    size_t a = 0, b = c->ncov;
    while (a < b) {
        size_t m = (a + b) / 2;
        if (c->cov[m].hi < lo)
            a = m + 1;
        else
            b = m;
    }
    return a;
}

/* Add [lo, hi) to the union of spans c covers. */
static int cover(cell *c, double lo, double hi)
{
    size_t i = cov_find(c, lo);
    if (i < c->ncov && c->cov[i].lo <= lo && c->cov[i].hi >= hi)
        return 0; /* covered already: the usual case */
    size_t j = i; /* the spans [i, j) touch [lo, hi): merged into one */
    while (j < c->ncov && c->cov[j].lo <= hi) {
        if (c->cov[j].lo < lo)
            lo = c->cov[j].lo;
        if (c->cov[j].hi > hi)
            hi = c->cov[j].hi;
        j++;
    }
    if (j == i) {
        if (c->ncov == c->capcov) {
            size_t cap = c->capcov ? 2 * c->capcov : 2;
            tspan *m = realloc(c->cov, cap * sizeof *m);
            if (!m)
                return ADS_ENOMEM;
            c->cov = m;
            c->capcov = cap;
        }
        memmove(&c->cov[i + 1], &c->cov[i], (c->ncov - i) * sizeof *c->cov);
        c->ncov++;
    } else if (j > i + 1) {
        memmove(&c->cov[i + 1], &c->cov[j], (c->ncov - j) * sizeof *c->cov);
        c->ncov -= j - i - 1;
    }
    c->cov[i].lo = lo;
    c->cov[i].hi = hi;
    return 0;
}

/* The span [from, to) during which a record contributed to g with vals. */
static int span(tl *x, tgroup *g, double from, double to, const rval *vals)
{
    if (from < x->t1)
        from = x->t1;
    if (to > x->t2)
        to = x->t2;
    if (!(to > from))
        return 0;
    for (size_t j = (size_t)floor((from - x->a0) / x->D); j < x->nint; j++) {
        double a = x->a0 + (double)j * x->D, b = a + x->D;
        double lo = from > a ? from : a, hi = to < b ? to : b;
        if (lo >= to)
            break;
        if (!(hi > lo))
            continue;
        for (size_t k = 0; k < x->naggs; k++) {
            const tagg *t = &x->aggs[k];
            cell *c = &g->cells[j * x->naggs + k];
            if (t->outer != TA_AVG)
                continue;
            if (bad(t->inner, &vals[k])) {
                c->bad_f = true;
                continue;
            }
            c->integral += part(t->inner, &vals[k]) * (hi - lo);
            if (cover(c, lo, hi))
                return ads_error_set(x->err, ADS_ENOMEM, "out of memory");
        }
    }
    return 0;
}

/* A row dated ts in the range is a sample of g (sum@). */
static void sample(tl *x, tgroup *g, double ts, const rval *vals)
{
    size_t j = (size_t)floor((ts - x->a0) / x->D);
    for (size_t k = 0; j < x->nint && k < x->naggs; k++) {
        const tagg *t = &x->aggs[k];
        cell *c = &g->cells[j * x->naggs + k];
        if (t->outer != TA_SUM)
            continue;
        if (bad(t->inner, &vals[k]))
            c->bad_samples = true;
        else
            c->sum += part(t->inner, &vals[k]);
    }
}

/* WHERE's truth and the group for the last row evaluated, with that row's
 * bytes of the attributes they read. */
typedef struct memo {
    bool on;   /* WHERE and GROUP BY depend only on names[] */
    bool have; /* p[] and len[] are a row's, and where_ok is its truth */
    size_t n;
    ads_str names[ADS_TL_MEMO_NAMES];
    uint32_t hints[ADS_TL_MEMO_NAMES];
    const unsigned char *p[ADS_TL_MEMO_NAMES]; /* NULL: the row lacks the name */
    size_t len[ADS_TL_MEMO_NAMES];
    bool where_ok;
    tgroup *g; /* its group once found (WHERE true) */
    ads_buf held; /* the bytes p[] point to, copied */
} memo;

/* Add e's names to m's, or turn m off. */
static void memo_names(memo *m, const ads_expr *e)
{
    ads_str more[ADS_TL_MEMO_NAMES];
    size_t n;
    if (!m->on || !e)
        return;
    if (!ads_expr_plain_refs(more, ADS_TL_MEMO_NAMES, &n, e)) {
        m->on = false;
        return;
    }
    for (size_t i = 0; i < n && m->on; i++) {
        size_t j = 0;
        while (j < m->n && !(m->names[j].len == more[i].len &&
                             strncasecmp(m->names[j].p, more[i].p, more[i].len) == 0))
            j++;
        if (j < m->n)
            continue;
        if (m->n == ADS_TL_MEMO_NAMES)
            m->on = false;
        else
            m->names[m->n++] = more[i];
    }
}

static void memo_init(memo *m, const tl *x)
{
    memset(m, 0, sizeof *m);
    m->on = true;
    memo_names(m, x->where);
    for (size_t i = 0; i < x->ngroup; i++)
        memo_names(m, x->gexprs[i]);
}

/* Does view's row hold the same bytes for m's names as the last row m
 * kept? 1 when it does; 0 when not, m now holding this row's bytes (the
 * caller evaluates and sets m->have); -1 when some value is not a plain
 * literal, or the row cannot say (a timeline attribute such as _Timestamp,
 * which the envelope holds, or damaged bytes): m then keeps nothing. An
 * entry whose bytes (name and value) are those of the last row's at the
 * same place is that name's, with the same literal: no search, no name. */
static int memo_same(memo *m, const ads_view *view)
{
    const unsigned char *p[ADS_TL_MEMO_NAMES];
    size_t len[ADS_TL_MEMO_NAMES];
    bool same = m->have;
    m->have = false;
    for (size_t i = 0; i < m->n; i++) {
        const ads_str nm = m->names[i];
        ads_msgpack_view *mv = view->ops->data ? view->ops->data(view->self, nm.p, nm.len) : NULL;
        if (!mv)
            return -1;
        if (same && m->p[i] && ads_msgpack__entry_bytes(&p[i], &len[i], mv, m->hints[i]) &&
            len[i] == m->len[i] && memcmp(p[i], m->p[i], len[i]) == 0)
            continue;
        int rc = ads_msgpack__scalar_entry(&p[i], &len[i], mv, nm.p, nm.len, &m->hints[i]);
        if (rc < 0)
            return -1;
        if (rc == 0) {
            p[i] = NULL;
            len[i] = 0;
        }
        same = same && len[i] == m->len[i] && !p[i] == !m->p[i] &&
               (!p[i] || memcmp(p[i], m->p[i], len[i]) == 0);
    }
    if (same) {
        m->have = true;
        return 1;
    }
    /* a copy: a row's bytes are valid until the next row is read (a
     * history row kept as a difference is made whole in the timeline's
     * buffer, which the next row takes) */
    size_t off[ADS_TL_MEMO_NAMES];
    ads_buf_clear(&m->held);
    for (size_t i = 0; i < m->n; i++) {
        off[i] = m->held.len;
        if (p[i])
            ads_buf_add(&m->held, p[i], len[i]);
    }
    if (m->held.failed)
        return -1;
    for (size_t i = 0; i < m->n; i++)
        m->p[i] = p[i] ? (const unsigned char *)m->held.p + off[i] : NULL;
    memcpy(m->len, len, m->n * sizeof *len);
    return 0;
}

/* The group of a contributing row: the record's last group when its keys
 * are the same, as they mostly are. */
static int group_for(tgroup **g, tl *x, const recstate *rs, ads_view *view)
{
    ads_value keys[ADS_MAX_GROUP_BY]; /* the parser allows no more */
    for (size_t i = 0; i < x->ngroup; i++)
        if (ads_expr_eval(&keys[i], x->gexprs[i], view, x->ra))
            return ads_error_set(x->err, ADS_ENOMEM, "out of memory");
    if (rs->g) {
        size_t i = 0;
        while (i < x->ngroup && ads_value_equiv(&rs->g->keys[i], &keys[i]))
            i++;
        if (i == x->ngroup) {
            *g = rs->g;
            return 0;
        }
    }
    if (!(*g = ads_q__tl_group_of(x, keys)))
        return ads_error_set(x->err, ADS_ENOMEM, "out of memory");
    return 0;
}

/* The next row of the record rs follows. */
static int rec_row(tl *x, recstate *rs, memo *m, ads_row *row)
{
    double t = row->ts > x->t1 ? row->ts : x->t1;
    int rc;
    if (rs->contrib && (rc = span(x, rs->g, rs->since, t, rs->vals)))
        return rc;
    rs->contrib = false;
    if (row->deleted)
        return 0;
    ads_view view = ads_row_view(row, NULL);
    int kept = m->on ? memo_same(m, &view) : -1;
    if (kept != 1) {
        ads_value ok = ads_bool(true);
        if (x->where && ads_expr_eval(&ok, x->where, &view, x->ra))
            return ads_error_set(x->err, ADS_ENOMEM, "out of memory");
        m->where_ok = ads_q__truthy(&ok);
        m->have = kept == 0;
        m->g = NULL;
    }
    if (!m->where_ok)
        return 0;
    tgroup *g = kept == 1 ? m->g : NULL;
    if (!g && (rc = group_for(&g, x, rs, &view)))
        return rc;
    m->g = g;
    for (size_t k = 0; k < x->naggs; k++) {
        ads_value v = ads_bool(true);
        if (x->aggs[k].arg && ads_expr_eval(&v, x->aggs[k].arg, &view, x->ra))
            return ads_error_set(x->err, ADS_ENOMEM, "out of memory");
        ads_q__tl_rval(&rs->vals[k], &v);
    }
    rs->contrib = true;
    rs->g = g;
    rs->since = t;
    if (row->ts >= x->t1 && row->ts < x->t2)
        sample(x, g, row->ts, rs->vals);
    return 0;
}

/* The defined time of every avg@ cell: the measure of its spans. */
static void defined_times(tl *x)
{
    for (size_t i = 0; i < x->ngroups; i++) {
        tgroup *g = x->groups[i];
        for (size_t j = 0; j < x->nint * x->naggs; j++) {
            cell *c = &g->cells[j];
            c->dtime = 0;
            for (size_t s = 0; s < c->ncov; s++)
                c->dtime += c->cov[s].hi - c->cov[s].lo;
        }
    }
}

int ads_q__tl_by_record(tl *x, ads_query *q, ads_timeline *it, ads_error *err)
{
    int rc = ads_q__tl_intervals(x, x->t1);
    if (rc)
        return rc;
    recstate rs = {false, NULL, 0, calloc(x->naggs ? x->naggs : 1, sizeof(rval))};
    if (!rs.vals)
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    memo m;
    memo_init(&m, x);
    ads_row *row;
    size_t rec, cur = SIZE_MAX;
    while ((rc = ads_timeline_next(&row, &rec, it, err)) == 1 && !(rc = ads_q__budget(q, err))) {
        if (rec != cur) {
            /* the last record's last span lasts to the range's end */
            if (rs.contrib && (rc = span(x, rs.g, rs.since, x->t2, rs.vals)))
                break;
            rs.contrib = false;
            rs.g = NULL;
            cur = rec;
        }
        ads_arena_reset(x->ra);
        if ((rc = rec_row(x, &rs, &m, row)))
            break;
    }
    if (rc == 0 && rs.contrib)
        rc = span(x, rs.g, rs.since, x->t2, rs.vals);
    free(rs.vals);
    ads_buf_free(&m.held);
    if (rc == 0)
        defined_times(x);
    return rc < 0 ? rc : 0;
}
