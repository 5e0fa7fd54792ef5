/*
 * query/plan.c: choosing a secondary index for a SELECT's WHERE
 * (docs/indexes.md). The WHERE's top-level conjuncts are read for terms an
 * index answers:
 *
 *   attr == c, attr === c, attr is c, c == attr ...   one value
 *   attr < c, <=, >, >= (either side)                 a range
 *   attr in { c1, c2 ... }                            values
 *   isUndefined(attr), attr is undefined              the undefined entries
 *   t1 || t2 || ...   (each an indexed term)          a union of spans
 *
 * where attr is a plain reference to an indexed attribute of the FROM type
 * and c folds to a constant. Terms on one attribute are intersected (so
 * `QDate >= a && QDate < b` is one range); then the candidate reading the
 * fewest index entries wins, found by counting each candidate's entries in
 * rounds of growing caps, each round going on where the last stopped (so
 * the cost of choosing is about the winner's size, not the size of the
 * largest). An index is used only when it reads fewer entries than a
 * quarter of the type's records: a scan of the rows' own table reads
 * faster than random lookups through an index. The other exact terms of
 * the AND go with it (add_filters): merged with it when it is exact too,
 * else probed per entry.
 *
 * The chosen spans only narrow which rows are read: the whole WHERE is
 * still evaluated on every row they yield, so the answer is the scan's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/limits.h"
#include "query/query_int.h"

/* A candidate: the union of its spans; text says what it reads. */
typedef struct cand {
    ads_index_span **spans;
    size_t n;
    ads_buf text;
    uint64_t count;
    bool done; /* counted in full */
    /* a composite index's: the attributes its terms cover (the other
     * indexes' terms on them are not worth merging with it) */
    size_t ncover;
    const ads_index_span *comp;
} cand;

typedef struct planner {
    ads_txn *txn;
    const ads_type *t;
    ads_str alias;
    ads_arena *a;
    ads_error *err;
    /* making a part of composite span comp: terms on its attribute number
     * attr only */
    const ads_index_span *comp;
    size_t attr;
} planner;

static bool same_name(ads_str a, const char *p, size_t len)
{
    return a.len == len && strncasecmp(a.p, p, len) == 0;
}

static const ads_expr *unparen(const ads_expr *e)
{
    while (ads_expr_kind_of(e) == ADS_X_PAREN)
        e = ads_expr_arg(e, 0);
    return e;
}

/* A plain reference to an attribute of the FROM row: its name, or len 0. */
static ads_str attr_ref(const planner *p, const ads_expr *e)
{
    ads_str none = {"", 0};
    e = unparen(e);
    if (ads_expr_kind_of(e) == ADS_X_ATTR)
        return ads_expr_name(e);
    if (ads_expr_kind_of(e) == ADS_X_SELECT && p->alias.len) {
        const ads_expr *b = ads_expr_arg(e, 0);
        ads_str bn = ads_expr_name(b);
        if (ads_expr_kind_of(b) == ADS_X_ATTR && same_name(p->alias, bn.p, bn.len))
            return ads_expr_name(e);
    }
    return none;
}

/* The constant e folds to, or false. */
static bool constant(const planner *p, const ads_expr *e, ads_value *out)
{
    const ads_expr *f;
    if (ads_expr_prepare(&f, p->a, e, NULL))
        return false;
    const ads_value *v = ads_expr_literal_value(f);
    if (!v)
        return false;
    *out = *v;
    return true;
}

static bool op_of(const char *s, bool flip, ads_index_op *op)
{
    static const struct {
        const char *s;
        ads_index_op op, flipped;
    } ops[] = {{"==", ADS_IX_EQ, ADS_IX_EQ}, {"===", ADS_IX_EQ, ADS_IX_EQ},
               {"is", ADS_IX_EQ, ADS_IX_EQ}, {"=?=", ADS_IX_EQ, ADS_IX_EQ},
               {"<", ADS_IX_LT, ADS_IX_GT},  {"<=", ADS_IX_LE, ADS_IX_GE},
               {">", ADS_IX_GT, ADS_IX_LT},  {">=", ADS_IX_GE, ADS_IX_LE}};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (!strcmp(s, ops[i].s)) {
            *op = flip ? ops[i].flipped : ops[i].op;
            return true;
        }
    return false;
}

/* The span of the attribute name in spans[0..*n), or a new one (1), or not
 * indexed (0). */
static int span_for(planner *p, ads_index_span ***spans, size_t *n, ads_str name,
                    ads_index_span **out)
{
    ads_index_span *s;
    int rc;
    if (p->comp) {
        size_t len;
        const char *at = ads_index_span_attr_at(p->comp, p->attr, &len);
        if (!same_name(name, at, len))
            return 0;
        if (*n) {
            *out = (*spans)[0];
            return 1;
        }
        rc = ads_index_span_part(&s, p->comp, p->err);
        rc = rc ? rc : 1;
    } else {
        rc = ads_index_span_new(&s, p->txn, p->t, name.p, name.len, p->a, p->err);
    }
    if (rc <= 0)
        return rc;
    for (size_t i = 0; i < *n; i++)
        if (ads_index_span_same((*spans)[i], s)) {
            *out = (*spans)[i];
            return 1;
        }
    ads_index_span **m = ads_arena_alloc(p->a, (*n + 1) * sizeof *m);
    if (!m)
        return ads_error_set(p->err, ADS_ENOMEM, "out of memory");
    if (*n)
        memcpy(m, *spans, *n * sizeof *m);
    m[(*n)++] = s;
    *spans = m;
    *out = s;
    return 1;
}

/* Add the term e to the union spans: 1 if an index answers it, 0 if not
 * (the union is then unusable), or an error. */
static int term(planner *p, const ads_expr *e, ads_index_span ***spans, size_t *n, int depth)
{
    e = unparen(e);
    if (depth > ADS_MAX_DEPTH)
        return 0;
    ads_expr_kind k = ads_expr_kind_of(e);
    if (k == ADS_X_OR) {
        int rc = term(p, ads_expr_arg(e, 0), spans, n, depth + 1);
        return rc == 1 ? term(p, ads_expr_arg(e, 1), spans, n, depth + 1) : rc;
    }
    ads_index_span *s;
    ads_value v;
    if (k == ADS_X_CALL) {
        ads_str f = ads_expr_name(e);
        if (!same_name(f, "isUndefined", 11) || ads_expr_nargs(e) != 1)
            return 0;
        ads_str name = attr_ref(p, ads_expr_arg(e, 0));
        int rc = name.len ? span_for(p, spans, n, name, &s) : 0;
        if (rc <= 0)
            return rc;
        v = ads_undefined();
        return ads_index_span_add(s, ADS_IX_EQ, &v, p->err) == 0 ? 1 : -1;
    }
    if (k != ADS_X_BINARY)
        return 0;
    const char *opname = ads_expr_op(e);
    const ads_expr *l = ads_expr_arg(e, 0), *r = ads_expr_arg(e, 1);
    if (!strcmp(opname, "in")) {
        ads_str name = attr_ref(p, l);
        if (!name.len || !constant(p, r, &v) || v.type != ADS_LIST)
            return 0;
        int rc = span_for(p, spans, n, name, &s);
        for (size_t i = 0; rc == 1 && i < v.u.list.n; i++) {
            int a = ads_index_span_add(s, ADS_IX_EQ, &v.u.list.items[i], p->err);
            rc = a < 0 ? a : a == 1 ? 0 : 1;
        }
        return rc;
    }
    bool flip = false;
    ads_str name = attr_ref(p, l);
    const ads_expr *c = r;
    if (!name.len) {
        name = attr_ref(p, r);
        c = l;
        flip = true;
    }
    ads_index_op op;
    if (!name.len || !op_of(opname, flip, &op) || !constant(p, c, &v))
        return 0;
    /* `x == undefined` is never true: leave such a term to the WHERE */
    if (v.type == ADS_UNDEFINED && (op != ADS_IX_EQ || !strcmp(opname, "==")))
        return 0;
    int rc = span_for(p, spans, n, name, &s);
    if (rc <= 0)
        return rc;
    rc = ads_index_span_add(s, op, &v, p->err);
    return rc < 0 ? rc : rc == 1 ? 0 : 1;
}

/* ---- choosing ---- */

/* Count c's entries up to cap (sum over its spans). */
static int count(planner *p, cand *c, uint64_t cap)
{
    uint64_t total = 0;
    for (size_t i = 0; i < c->n && total < cap; i++) {
        uint64_t m;
        int rc = ads_index_span_count(&m, p->txn, c->spans[i], cap - total, p->err);
        if (rc)
            return rc;
        total += m;
    }
    c->count = total;
    c->done = total < cap;
    return 0;
}

/* A term of exact values (`==`, `is`, `in`) on one index: the engine
 * merges such terms of an AND (ads_index_scan_filter). */
static bool exact(const cand *c)
{
    return c->n == 1 && ads_index_span_exact(c->spans[0]);
}

/* The candidate reading fewest entries, if it reads fewer than limit:
 * counted in rounds of caps 256, 2048, ... so no candidate is counted far
 * past the winner (each count goes on where the last round stopped). */
static int choose(planner *p, cand *c, size_t n, uint64_t limit, cand **best)
{
    size_t nexact = 0;
    for (size_t i = 0; i < n; i++)
        nexact += exact(&c[i]);
    *best = NULL;
    for (uint64_t cap = 256;; cap *= 8) {
        uint64_t cut = cap < limit ? cap : limit;
        for (size_t i = 0; i < n; i++) {
            /* a merge of exact terms follows the one with fewest entries
             * by itself: once one is counted in full, the others need no
             * count */
            if (*best && nexact > 1 && exact(*best) && exact(&c[i]) && !(*best)->comp &&
                !c[i].comp)
                continue;
            /* once one is counted in full, the rest need not go past it */
            int rc = count(p, &c[i], *best && (*best)->count < cut ? (*best)->count : cut);
            if (rc)
                return rc;
            if (c[i].done && (!*best || c[i].count < (*best)->count))
                *best = &c[i];
        }
        if (*best || cut == limit)
            return 0;
    }
}

static int add_cand(planner *p, cand **c, size_t *n, ads_index_span **spans, size_t ns,
                    const ads_expr *e)
{
    cand *m = ads_arena_alloc(p->a, (*n + 1) * sizeof *m);
    if (!m)
        return ads_error_set(p->err, ADS_ENOMEM, "out of memory");
    if (*n)
        memcpy(m, *c, *n * sizeof *m);
    cand *x = &m[(*n)++];
    memset(x, 0, sizeof *x);
    x->spans = spans;
    x->n = ns;
    if (e)
        ads_expr_unparse(&x->text, e);
    *c = m;
    return 0;
}

/* Merge single-span candidates on one attribute into their intersection. */
static int merge_same(planner *p, cand *c, size_t *n)
{
    for (size_t i = 0; i < *n; i++) {
        if (c[i].n != 1)
            continue;
        for (size_t j = i + 1; j < *n;) {
            if (c[j].n != 1 || !ads_index_span_same(c[i].spans[0], c[j].spans[0])) {
                j++;
                continue;
            }
            int rc = ads_index_span_and(c[i].spans[0], c[j].spans[0], p->err);
            if (rc)
                return rc;
            ads_buf_adds(&c[i].text, " && ");
            ads_buf_add(&c[i].text, c[j].text.p, c[j].text.len);
            ads_buf_free(&c[j].text);
            memmove(&c[j], &c[j + 1], (*n - j - 1) * sizeof *c);
            (*n)--;
        }
    }
    return 0;
}

/* Does composite candidate best cover the single index of candidate c (an
 * attribute its terms pin)? */
static bool covered(const cand *best, const cand *c)
{
    if (!best->comp || ads_index_span_nattrs(c->spans[0]) != 1)
        return false;
    const char *name = ads_index_span_attr(c->spans[0]);
    for (size_t j = 0; j < best->ncover; j++) {
        size_t len;
        const char *at = ads_index_span_attr_at(best->comp, j, &len);
        if (strlen(name) == len && !memcmp(name, at, len))
            return true;
    }
    return false;
}

/* The other single-span candidates of the AND, as filters for best. */
static int add_filters(planner *p, ads_q__iplan *out, const cand *best, const cand *c, size_t n)
{
    out->filters = ads_arena_alloc(p->a, (n ? n : 1) * sizeof *out->filters);
    if (!out->filters)
        return ads_error_set(p->err, ADS_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++)
        if (&c[i] != best && c[i].n == 1 && ads_index_span_exact(c[i].spans[0]) &&
            !covered(best, &c[i]) && out->nfilters < ADS_INDEX_FILTERS_MAX)
            out->filters[out->nfilters++] = c[i].spans[0];
    return 0;
}

/* The part of composite span comp for its attribute j: the AND of the
 * conjuncts on it (*part NULL: none), their text appended to text. */
static int part_of(planner *p, ads_index_span **part, const ads_expr *const *conj, size_t nconj,
                   ads_buf *text)
{
    *part = NULL;
    for (size_t i = 0; i < nconj; i++) {
        ads_index_span **spans = NULL;
        size_t ns = 0;
        int rc = term(p, conj[i], &spans, &ns, 0);
        if (rc < 0)
            return rc;
        if (rc != 1 || ns != 1)
            continue;
        if (*part && (rc = ads_index_span_and(*part, spans[0], p->err)))
            return rc;
        if (!*part)
            *part = spans[0];
        if (text->len)
            ads_buf_adds(text, " && ");
        ads_expr_unparse(text, conj[i]);
    }
    return 0;
}

/* A candidate per composite index of the type whose first attribute the
 * conjuncts pin: its span the product of their values (ads_index_span_compose);
 * wide: only those whose terms cover two attributes or more, else only
 * those covering one. */
static int composites(planner *p, cand **c, size_t *n, const ads_expr *const *conj,
                      size_t nconj, bool wide)
{
    ads_index_span *s;
    int rc;
    for (size_t i = 0; (rc = ads_index_span_new_at(&s, p->txn, p->t, i, p->a, p->err)) == 1;
         i++) {
        size_t na = ads_index_span_nattrs(s), used = 0, m = 0;
        if (na < 2)
            continue;
        ads_index_span *parts[ADS_INDEX_ATTRS_MAX];
        ads_buf text[ADS_INDEX_ATTRS_MAX];
        memset(text, 0, sizeof text);
        p->comp = s;
        for (m = 0, rc = 0; m < na && !rc; m++) {
            p->attr = m;
            if ((rc = part_of(p, &parts[m], conj, nconj, &text[m])) || !parts[m])
                break;
        }
        p->comp = NULL;
        if (!rc && m && parts[0])
            rc = ads_index_span_compose(&used, s, parts, m, p->err);
        if (!rc && used && (used > 1) == wide) {
            ads_index_span **sp = ads_arena_alloc(p->a, sizeof *sp);
            if (!sp)
                rc = ads_error_set(p->err, ADS_ENOMEM, "out of memory");
            else
                sp[0] = s;
            cand *x = NULL;
            if (!rc && !(rc = add_cand(p, c, n, sp, 1, NULL)))
                x = &(*c)[*n - 1];
            for (size_t j = 0; x && j < used; j++) {
                if (j)
                    ads_buf_adds(&x->text, " && ");
                ads_buf_add(&x->text, text[j].p, text[j].len);
            }
            if (x) {
                x->comp = s;
                x->ncover = used;
            }
        }
        for (size_t j = 0; j < ADS_INDEX_ATTRS_MAX; j++)
            ads_buf_free(&text[j]);
        if (rc)
            return rc;
    }
    return rc < 0 ? rc : 0;
}

int ads_q__plan_index(ads_q__iplan *out, ads_query *q, ads_txn *txn, const ads_type *t,
                      const ads_expr *const *conj, size_t nconj, ads_str alias, ads_arena *a,
                      ads_error *err)
{
    memset(out, 0, sizeof *out);
    /* in a write transaction (UPDATE, DELETE, PURGE, a SELECT inside BEGIN
     * ... COMMIT) the index scan finds every record before the first write */
    if (q->index_policy == ADS_INDEXES_OFF || !t || !nconj)
        return 0;
    planner p = {txn, t, alias, a, err, NULL, 0};
    cand *c = NULL;
    size_t n = 0;
    /* composite indexes whose terms cover two attributes or more first: on
     * a tie (the second narrows nothing) the first counted wins; those
     * covering one last (an index on that attribute alone reads shorter
     * entries, in key order) */
    int rc = composites(&p, &c, &n, conj, nconj, true);
    for (size_t i = 0; i < nconj && !rc; i++) {
        ads_index_span **spans = NULL;
        size_t ns = 0;
        rc = term(&p, conj[i], &spans, &ns, 0);
        if (rc == 1 && ns)
            rc = add_cand(&p, &c, &n, spans, ns, conj[i]);
        else if (rc == 1)
            rc = 0;
    }
    if (!rc && n)
        rc = merge_same(&p, c, &n);
    if (!rc)
        rc = composites(&p, &c, &n, conj, nconj, false);
    ads_type_counts tc;
    if (!rc && n && !(rc = ads_txn_type_counts(&tc, txn, t, err))) {
        uint64_t limit = tc.records / 4 + 1;
        if (limit > ADS_INDEX_ESTIMATE_MAX || q->index_policy == ADS_INDEXES_ALWAYS)
            limit = ADS_INDEX_ESTIMATE_MAX;
        cand *best;
        out->candidates = n;
        rc = choose(&p, c, n, limit, &best);
        if (!rc && !best && q->index_policy == ADS_INDEXES_ALWAYS)
            for (size_t i = 0; i < n; i++)
                if (!best || c[i].count < best->count)
                    best = &c[i];
        if (!rc && best && best->n == 1)
            rc = add_filters(&p, out, best, c, n);
        if (!rc && best) {
            out->spans = best->spans;
            out->n = best->n;
            out->estimate = best->count;
            out->text = ads_arena_strndup(a, best->text.p ? best->text.p : "", best->text.len);
            if (!out->text)
                rc = ads_error_set(err, ADS_ENOMEM, "out of memory");
        }
    }
    for (size_t i = 0; i < n; i++)
        ads_buf_free(&c[i].text);
    return rc;
}

int ads_q__open_rows(ads_scan **out, ads_q__iplan *ip, ads_query *q, ads_txn *txn,
                     const ads_type *t, const ads_expr *const *conj, size_t nconj, ads_str alias,
                     const ads_expr *where, unsigned flags, ads_arena *a, ads_error *err)
{
    memset(ip, 0, sizeof *ip);
    int rc = 0;
    if (!(flags & ADS_SCAN_HISTORY))
        rc = ads_q__plan_index(ip, q, txn, t, conj, nconj, alias, a, err);
    if (rc)
        return rc;
    if (!ip->n) {
        if (!(rc = ads_scan_open(out, txn, t, where, flags, err)))
            ads_q__watch(*out, q);
        return rc;
    }
    if ((rc = ads_index_scan_open(out, txn, t, ip->spans, ip->n, where, flags, err)))
        return rc;
    ads_q__watch(*out, q);
    size_t kept = 0;
    for (size_t i = 0; i < ip->nfilters; i++)
        if (ads_index_scan_filter(*out, ip->filters[i]))
            ip->filters[kept++] = ip->filters[i];
    ip->nfilters = kept;
    return 0;
}

void ads_query_use_indexes(ads_query *q, int policy)
{
    if (q && policy >= ADS_INDEXES_AUTO && policy <= ADS_INDEXES_ALWAYS)
        q->index_policy = policy;
}
