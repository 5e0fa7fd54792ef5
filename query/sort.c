/*
 * query/sort.c: ORDER BY and LIMIT. Rows and their sort values are copied
 * into an arena as they come. Without a LIMIT every row is kept and sorted
 * at the end. With LIMIT n, once 2n rows are held they are sorted and the
 * best n copied into a fresh arena (the old one freed), so memory stays
 * within about 2n rows however many rows are seen, and each row is copied at
 * most twice on average. Sorting is stable: rows with equal sort values keep
 * the order they came in. Undefined sorts last, ascending or descending.
 */
#include <stdlib.h>
#include <string.h>

#include "query/query_int.h"

typedef struct entry {
    const ads_record *row;
    ads_value *keys;
    uint64_t seq;
} entry;

struct qcoll {
    const order_item *order;
    size_t norder;
    int64_t limit;
    ads_arena *a;
    entry *e;
    size_t n, cap;
    uint64_t seq;
};

int ads_q__coll_new(qcoll **out, ads_query *q, const order_item *order, size_t norder,
                    int64_t limit, ads_error *err)
{
    qcoll *c = calloc(1, sizeof *c);
    if (!c || !(c->a = ads_q__arena(q))) {
        free(c);
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    }
    c->order = order;
    c->norder = norder;
    c->limit = limit;
    *out = c;
    return 0;
}

void ads_q__coll_free(qcoll *c)
{
    if (!c)
        return;
    ads_arena_free(c->a);
    free(c->e);
    free(c);
}

static int cmp_entries(const void *pa, const void *pb, void *ctx)
{
    const entry *a = pa, *b = pb;
    const qcoll *c = ctx;
    for (size_t i = 0; i < c->norder; i++) {
        const ads_value *x = &a->keys[i], *y = &b->keys[i];
        bool ux = x->type == ADS_UNDEFINED, uy = y->type == ADS_UNDEFINED;
        if (ux || uy) {
            if (ux != uy)
                return ux ? 1 : -1; /* undefined last, whichever the direction */
            continue;
        }
        int r = ads_q__compare(x, y);
        if (r)
            return c->order[i].desc ? -r : r;
    }
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* A deep copy of a record: every value copied, expressions re-encoded. */
static int copy_record(const ads_record **out, const ads_record *r, ads_arena *a)
{
    ads_value v = ads_recordv(r), c;
    int rc = ads_q__copy(&c, &v, a);
    if (!rc)
        *out = c.u.rec;
    return rc;
}

static int copy_entry(entry *dst, const entry *src, const qcoll *c, ads_arena *a)
{
    dst->seq = src->seq;
    dst->keys = ads_arena_alloc(a, (c->norder ? c->norder : 1) * sizeof *dst->keys);
    if (!dst->keys || copy_record(&dst->row, src->row, a))
        return ADS_ENOMEM;
    for (size_t i = 0; i < c->norder; i++)
        if (ads_q__copy(&dst->keys[i], &src->keys[i], a))
            return ADS_ENOMEM;
    return 0;
}

/* Keep the best `limit` rows in a fresh arena. */
static int compact(qcoll *c, ads_error *err)
{
    qsort_r(c->e, c->n, sizeof *c->e, cmp_entries, c);
    size_t keep = (size_t)c->limit < c->n ? (size_t)c->limit : c->n;
    ads_arena *na = ads_arena_new();
    if (!na)
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    ads_arena_set_budget(na, ads_arena_budget(c->a));
    for (size_t i = 0; i < keep; i++) {
        entry t;
        if (copy_entry(&t, &c->e[i], c, na)) {
            ads_arena_free(na);
            return ads_error_set(err, ADS_ENOMEM, "out of memory");
        }
        c->e[i] = t;
    }
    ads_arena_free(c->a);
    c->a = na;
    c->n = keep;
    return 0;
}

int ads_q__coll_add(void *coll, const ads_record *row, const ads_value *keys, ads_error *err)
{
    qcoll *c = coll;
    if (c->limit == 0)
        return 0;
    if (c->n == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 64;
        entry *m = realloc(c->e, cap * sizeof *m);
        if (!m)
            return ads_error_set(err, ADS_ENOMEM, "out of memory");
        c->e = m;
        c->cap = cap;
    }
    entry src = {row, (ads_value *)keys, c->seq++};
    if (copy_entry(&c->e[c->n], &src, c, c->a))
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    c->n++;
    if (c->limit > 0 && c->n >= 2 * (size_t)c->limit && c->n >= 64)
        return compact(c, err);
    return 0;
}

int ads_q__coll_emit(qcoll *c, const ads_sink *sink, uint64_t *count, ads_error *err)
{
    if (c->n > 1) /* (e is NULL when no row came) */
        qsort_r(c->e, c->n, sizeof *c->e, cmp_entries, c);
    size_t n = c->limit >= 0 && (size_t)c->limit < c->n ? (size_t)c->limit : c->n;
    *count = n;
    for (size_t i = 0; i < n; i++) {
        int rc = sink && sink->row ? sink->row(sink->ctx, c->e[i].row, err) : 0;
        if (rc)
            return rc;
    }
    return 0;
}

int ads_q__emit_row(qcoll *coll, const ads_sink *sink, uint64_t *rows, int64_t *left,
                    const ads_record *row, const ads_value *keys, ads_error *err)
{
    if (coll)
        return ads_q__coll_add(coll, row, keys, err);
    if (*left == 0)
        return 0;
    int rc = sink && sink->row ? sink->row(sink->ctx, row, err) : 0;
    if (rc)
        return rc;
    (*rows)++;
    if (*left > 0)
        (*left)--;
    return 0;
}
