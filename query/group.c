/*
 * query/group.c: GROUP BY and aggregates (shared/spec/query.md section 1).
 *
 * At plan time every aggregate call in the select list and ORDER BY --
 * count(*), count(x), sum, avg, min, max, count_distinct, list, distinct --
 * is replaced by a reference to a synthetic attribute (__agg0, __agg1, ...),
 * and every subexpression equal to a GROUP BY expression by one to __grp0,
 * __grp1, ...; what is left may reference nothing else. Rows are then folded
 * into a hash table of groups keyed by their GROUP BY values compared with
 * `===` (so "abc" and "ABC" are one group; the first spelling seen is kept),
 * and each group's output row is the rewritten expressions evaluated in a
 * view of those synthetic attributes. Memory: one entry per group (plus, for
 * count_distinct, list and distinct, the values they keep).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "query/query_int.h"

typedef enum agg_kind {
    AGG_COUNT_STAR,
    AGG_COUNT,
    AGG_SUM,
    AGG_AVG,
    AGG_MIN,
    AGG_MAX,
    AGG_COUNT_DISTINCT,
    AGG_LIST,
    AGG_DISTINCT
} agg_kind;

static const struct {
    const char *name;
    agg_kind kind;
} agg_names[] = {
    {"count", AGG_COUNT},   {"sum", AGG_SUM},   {"avg", AGG_AVG},
    {"min", AGG_MIN},       {"max", AGG_MAX},   {"count_distinct", AGG_COUNT_DISTINCT},
    {"list", AGG_LIST},     {"distinct", AGG_DISTINCT},
};

int ads_q__agg_kind(const ads_expr *e)
{
    if (ads_expr_kind_of(e) != ADS_X_CALL)
        return -1;
    ads_str n = ads_expr_name(e);
    for (size_t i = 0; i < sizeof agg_names / sizeof agg_names[0]; i++)
        if (ads_q__name_is(n, agg_names[i].name)) {
            if (agg_names[i].kind == AGG_COUNT && ads_expr_star(e))
                return AGG_COUNT_STAR;
            return (int)agg_names[i].kind;
        }
    return -1;
}

static int find_agg_at(void *ctx, const ads_expr *e)
{
    const ads_expr **found = ctx;
    int k = ads_q__agg_kind(e);
    if (k == AGG_COUNT_STAR || k == AGG_COUNT || k == AGG_COUNT_DISTINCT || k == AGG_LIST ||
        k == AGG_DISTINCT) {
        *found = e;
        return ADS_VISIT_STOP;
    }
    if (ads_expr_kind_of(e) == ADS_X_RECORD) {
        const ads_record *r = ads_expr_record(e);
        for (size_t i = 0; i < ads_record_size(r) && !*found; i++)
            *found = ads_q__find_agg_only(ads_record_expr(r, i));
        return *found ? ADS_VISIT_STOP : ADS_VISIT_SKIP;
    }
    return ADS_VISIT_INTO;
}

/* The first in the order written, walked without recursion down chains; if
 * the walk finds no memory, any one (the walk in any order needs none). */
const ads_expr *ads_q__find_agg_only(const ads_expr *e)
{
    const ads_expr *found = NULL;
    if (e && ads_expr_visit(e, find_agg_at, &found, 0, NULL)) {
        found = NULL;
        ads_expr_visit(e, find_agg_at, &found, ADS_VISIT_ANY_ORDER, NULL);
    }
    return found;
}

/* One aggregate's running state in one group. */
typedef struct acc {
    uint64_t count;  /* values seen (not undefined) */
    ads_value v;     /* sum, min or max so far */
    bool bad;        /* a value it cannot take: the result is error */
    ads_value *vals; /* list / distinct / count_distinct */
    size_t nvals, capvals;
    uint32_t *slots; /* distinct: an open-addressing set of vals indexes + 1 */
    size_t nslots;   /* a power of two, or 0 */
} acc;

typedef struct group {
    uint64_t hash;
    ads_value *keys;
    acc *accs;
    struct group *next; /* hash chain */
    uint64_t seq;       /* order of first appearance */
} group;

struct qgroup {
    const ads_expr **gexprs; /* GROUP BY expressions (prepared) */
    size_t ngroup;
    const ads_expr **aggarg; /* each aggregate's argument (NULL for count(*)) */
    agg_kind *aggs;
    size_t naggs, capaggs;
    const ads_expr **items;  /* rewritten select items */
    const ads_expr **order;  /* rewritten ORDER BY expressions */
    size_t nitems, norder;
    ads_arena *a;            /* groups and their values */
    group **table;
    size_t nbuckets, ngroups;
    group **all;             /* in order of first appearance */
    size_t capall;
    ads_error *err;
    int fail;
};

/* ---- planning ---- */

typedef struct rwctx {
    qgroup *g;
    ads_arena *a;
    ads_error *err;
    bool in_agg;
    const char *clause;
} rwctx;

static const ads_expr *rewrite_fn(void *ctx, const ads_expr *e, int *stop)
{
    rwctx *c = ctx;
    qgroup *g = c->g;
    char name[32];
    const ads_expr *r = NULL;
    for (size_t i = 0; i < g->ngroup; i++)
        if (ads_expr_equal(e, g->gexprs[i])) {
            snprintf(name, sizeof name, "__grp%zu", i);
            if ((*stop = ads_expr_new_attr(&r, c->a, name, strlen(name), c->err)))
                return NULL;
            return r;
        }
    int k = ads_q__agg_kind(e);
    if (k < 0)
        return NULL;
    size_t nargs = ads_expr_nargs(e);
    if ((k == AGG_COUNT_STAR && nargs != 0) || (k != AGG_COUNT_STAR && nargs != 1)) {
        ads_str n = ads_expr_name(e);
        *stop = ads_error_set(c->err, ADS_EINVAL, "%.*s takes one argument%s in %s", (int)n.len,
                              n.p, k == AGG_COUNT ? " (or *)" : "", c->clause);
        return NULL;
    }
    const ads_expr *arg = nargs ? ads_expr_arg(e, 0) : NULL;
    if (arg && ads_q__agg_kind(arg) >= 0) {
        *stop = ads_error_set(c->err, ADS_EINVAL, "an aggregate inside an aggregate in %s",
                              c->clause);
        return NULL;
    }
    if (g->naggs == g->capaggs) {
        size_t cap = g->capaggs ? 2 * g->capaggs : 8;
        const ads_expr **na = ads_arena_alloc(c->a, cap * sizeof *na);
        agg_kind *nk = ads_arena_alloc(c->a, cap * sizeof *nk);
        if (!na || !nk) {
            *stop = ads_error_set(c->err, ADS_ENOMEM, "out of memory");
            return NULL;
        }
        if (g->naggs) {
            memcpy(na, g->aggarg, g->naggs * sizeof *na);
            memcpy(nk, g->aggs, g->naggs * sizeof *nk);
        }
        g->aggarg = na;
        g->aggs = nk;
        g->capaggs = cap;
    }
    /* the same aggregate twice is computed once */
    size_t idx = g->naggs;
    for (size_t i = 0; i < g->naggs; i++)
        if (g->aggs[i] == (agg_kind)k &&
            ((!arg && !g->aggarg[i]) || (arg && g->aggarg[i] && ads_expr_equal(arg, g->aggarg[i]))))
            idx = i;
    if (idx == g->naggs) {
        const ads_expr *prep = NULL;
        if (arg && (*stop = ads_expr_prepare(&prep, c->a, arg, c->err)))
            return NULL;
        g->aggarg[g->naggs] = prep;
        g->aggs[g->naggs] = (agg_kind)k;
        g->naggs++;
    }
    snprintf(name, sizeof name, "__agg%zu", idx);
    if ((*stop = ads_expr_new_attr(&r, c->a, name, strlen(name), c->err)))
        return NULL;
    return r;
}

typedef struct refs_check {
    const char *clause;
    ads_error *err;
} refs_check;

static int check_refs(const ads_expr *e, const char *clause, ads_error *err);

static int check_refs_at(void *ctx, const ads_expr *e)
{
    refs_check *c = ctx;
    ads_expr_kind k = ads_expr_kind_of(e);
    if (k == ADS_X_ATTR || k == ADS_X_ROOTATTR) {
        ads_str n = ads_expr_name(e);
        if (!(n.len > 5 && (strncmp(n.p, "__agg", 5) == 0 || strncmp(n.p, "__grp", 5) == 0)))
            return ads_error_set(c->err, ADS_EINVAL,
                                 "%.*s in %s is neither inside an aggregate nor a GROUP BY "
                                 "expression",
                                 (int)n.len, n.p, c->clause);
        return ADS_VISIT_SKIP;
    }
    if (k == ADS_X_SELECT) {
        /* T.x must have been a GROUP BY expression */
        ads_str n = ads_expr_name(e);
        return ads_error_set(c->err, ADS_EINVAL,
                             "%.*s in %s is neither inside an aggregate nor a GROUP BY "
                             "expression",
                             (int)n.len, n.p, c->clause);
    }
    if (k == ADS_X_RECORD) {
        const ads_record *r = ads_expr_record(e);
        for (size_t i = 0; i < ads_record_size(r); i++) {
            int rc = check_refs(ads_record_expr(r, i), c->clause, c->err);
            if (rc)
                return rc;
        }
        return ADS_VISIT_SKIP;
    }
    return ADS_VISIT_INTO;
}

/* After rewriting, only synthetic names may be referenced (the first other
 * one in the order written is named; no recursion down chains). */
static int check_refs(const ads_expr *e, const char *clause, ads_error *err)
{
    refs_check c = {clause, err};
    return ads_expr_visit(e, check_refs_at, &c, 0, err);
}

static int has_aggregate_at(void *ctx, const ads_expr *e)
{
    bool *found = ctx;
    if (ads_q__agg_kind(e) >= 0) {
        *found = true;
        return ADS_VISIT_STOP;
    }
    if (ads_expr_kind_of(e) == ADS_X_RECORD) {
        const ads_record *r = ads_expr_record(e);
        for (size_t i = 0; i < ads_record_size(r) && !*found; i++)
            *found = ads_q__has_aggregate(ads_record_expr(r, i));
        return *found ? ADS_VISIT_STOP : ADS_VISIT_SKIP;
    }
    return ADS_VISIT_INTO;
}

bool ads_q__has_aggregate(const ads_expr *e)
{
    bool found = false;
    ads_expr_visit(e, has_aggregate_at, &found, ADS_VISIT_ANY_ORDER, NULL);
    return found;
}

int ads_q__group_plan(qgroup **out, const stmt *st, const ads_expr *const *gexprs, size_t ngroup,
                      ads_arena *a, ads_error *err)
{
    qgroup *g = ads_arena_alloc(a, sizeof *g);
    if (!g)
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    memset(g, 0, sizeof *g);
    if (st->star)
        return ads_error_set(err, ADS_EINVAL,
                             "SELECT * cannot be grouped: list the GROUP BY expressions and "
                             "aggregates to show");
    g->ngroup = ngroup;
    g->gexprs = ads_arena_alloc(a, (ngroup ? ngroup : 1) * sizeof *g->gexprs);
    g->items = ads_arena_alloc(a, (st->nitems ? st->nitems : 1) * sizeof *g->items);
    g->order = ads_arena_alloc(a, (st->norder ? st->norder : 1) * sizeof *g->order);
    if (!g->gexprs || !g->items || !g->order)
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    for (size_t i = 0; i < ngroup; i++) {
        if (ads_q__has_aggregate(gexprs[i]))
            return ads_error_set(err, ADS_EINVAL, "GROUP BY cannot use an aggregate");
        g->gexprs[i] = gexprs[i];
    }
    rwctx c = {g, a, err, false, "the select list"};
    int rc;
    for (size_t i = 0; i < st->nitems; i++) {
        if ((rc = ads_expr_rewrite(&g->items[i], a, st->items[i].e, rewrite_fn, &c, err)) ||
            (rc = check_refs(g->items[i], "the select list", err)))
            return rc;
    }
    c.clause = "ORDER BY";
    for (size_t i = 0; i < st->norder; i++) {
        g->order[i] = NULL;
        if (st->order[i].item >= 0)
            continue; /* a label: sorted by the item's value */
        if ((rc = ads_expr_rewrite(&g->order[i], a, st->order[i].e, rewrite_fn, &c, err)) ||
            (rc = check_refs(g->order[i], "ORDER BY", err)))
            return rc;
    }
    g->nitems = st->nitems;
    g->norder = st->norder;
    /* prepared forms of the GROUP BY expressions for the rows */
    for (size_t i = 0; i < ngroup; i++)
        if ((rc = ads_expr_prepare(&g->gexprs[i], a, gexprs[i], err)))
            return rc;
    if ((g->a = ads_arena_new()))
        ads_arena_set_budget(g->a, ads_arena_budget(a));
    else
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    g->nbuckets = 64;
    g->table = calloc(g->nbuckets, sizeof *g->table);
    if (!g->table) {
        ads_arena_free(g->a);
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    }
    *out = g;
    return 0;
}

void ads_q__group_free(qgroup *g)
{
    if (!g)
        return;
    for (size_t i = 0; i < g->ngroups; i++)
        for (size_t k = 0; k < g->naggs; k++) {
            free(g->all[i]->accs[k].vals);
            free(g->all[i]->accs[k].slots);
        }
    free(g->table);
    free(g->all);
    ads_arena_free(g->a);
}

/* ---- folding rows in ---- */

static bool is_number(const ads_value *v)
{
    return v->type == ADS_INTEGER || v->type == ADS_REAL || v->type == ADS_BOOLEAN;
}

static double as_double(const ads_value *v)
{
    return v->type == ADS_REAL ? v->u.r : v->type == ADS_INTEGER ? (double)v->u.i : v->u.b;
}

static int64_t as_int(const ads_value *v)
{
    return v->type == ADS_INTEGER ? v->u.i : v->u.b;
}

/* What min and max compare, as ClassAd's < does: numbers (booleans as 0/1),
 * strings, AbsTimes, RelTimes, each only with its own kind; -1 for the rest. */
static int ordered_kind(const ads_value *v)
{
    if (is_number(v))
        return 0;
    switch (v->type) {
    case ADS_STRING:
        return 1;
    case ADS_ABSTIME:
        return 2;
    case ADS_RELTIME:
        return 3;
    default:
        return -1;
    }
}

/* Put vals[i] into the distinct set (which has room). */
static void set_put(acc *ac, size_t i)
{
    size_t mask = ac->nslots - 1, at = (size_t)ads_q__hash(&ac->vals[i]) & mask;
    while (ac->slots[at])
        at = (at + 1) & mask;
    ac->slots[at] = (uint32_t)(i + 1);
}

/* Is a value === v in the distinct set? Keeps the set at most half full. */
static int set_has(qgroup *g, acc *ac, const ads_value *v, bool *has)
{
    if (2 * (ac->nvals + 1) > ac->nslots) {
        if (ac->nvals >= UINT32_MAX / 4)
            return ads_error_set(g->err, ADS_ELIMIT, "too many distinct values");
        size_t n = ac->nslots ? 2 * ac->nslots : 16;
        uint32_t *m = calloc(n, sizeof *m);
        if (!m)
            return ads_error_set(g->err, ADS_ENOMEM, "out of memory");
        free(ac->slots);
        ac->slots = m;
        ac->nslots = n;
        for (size_t i = 0; i < ac->nvals; i++)
            set_put(ac, i);
    }
    size_t mask = ac->nslots - 1, at = (size_t)ads_q__hash(v) & mask;
    for (; ac->slots[at]; at = (at + 1) & mask)
        if (ads_value_equiv(&ac->vals[ac->slots[at] - 1], v)) {
            *has = true;
            return 0;
        }
    *has = false;
    return 0;
}

static int acc_keep(qgroup *g, acc *ac, const ads_value *v, bool distinct)
{
    if (distinct) {
        bool has = false;
        int rc = set_has(g, ac, v, &has);
        if (rc || has)
            return rc;
    }
    if (ac->nvals == ac->capvals) {
        size_t cap = ac->capvals ? 2 * ac->capvals : 8;
        ads_value *m = realloc(ac->vals, cap * sizeof *m);
        if (!m)
            return ads_error_set(g->err, ADS_ENOMEM, "out of memory");
        ac->vals = m;
        ac->capvals = cap;
    }
    int rc = ads_q__copy(&ac->vals[ac->nvals], v, g->a);
    if (rc)
        return ads_error_set(g->err, ADS_ENOMEM, "out of memory");
    ac->nvals++;
    if (distinct)
        set_put(ac, ac->nvals - 1);
    return 0;
}

static int acc_add(qgroup *g, acc *ac, agg_kind k, const ads_value *v)
{
    if (k == AGG_COUNT_STAR) {
        ac->count++;
        return 0;
    }
    if (v->type == ADS_UNDEFINED)
        return 0;
    switch (k) {
    case AGG_COUNT:
        ac->count++;
        return 0;
    case AGG_SUM:
    case AGG_AVG:
        if (!is_number(v)) {
            ac->bad = true;
            return 0;
        }
        if (ac->count == 0)
            ac->v = v->type == ADS_REAL ? *v : ads_int(as_int(v));
        else if (ac->v.type == ADS_INTEGER && v->type != ADS_REAL)
            ac->v.u.i = (int64_t)((uint64_t)ac->v.u.i + (uint64_t)as_int(v)); /* wraps, as + does */
        else
            ac->v = ads_real(as_double(&ac->v) + as_double(v));
        ac->count++;
        return 0;
    case AGG_MIN:
    case AGG_MAX: {
        int kind = ordered_kind(v);
        if (kind < 0) {
            ac->bad = true;
            return 0;
        }
        if (ac->count == 0) {
            if (ads_q__copy(&ac->v, v, g->a))
                return ads_error_set(g->err, ADS_ENOMEM, "out of memory");
        } else if (ordered_kind(&ac->v) != kind) {
            ac->bad = true; /* kinds mixed: numbers and strings, say */
        } else {
            int c = ads_q__compare(v, &ac->v);
            if ((k == AGG_MIN && c < 0) || (k == AGG_MAX && c > 0))
                if (ads_q__copy(&ac->v, v, g->a))
                    return ads_error_set(g->err, ADS_ENOMEM, "out of memory");
        }
        ac->count++;
        return 0;
    }
    case AGG_COUNT_DISTINCT:
    case AGG_DISTINCT:
        return acc_keep(g, ac, v, true);
    case AGG_LIST:
        return acc_keep(g, ac, v, false);
    default:
        return 0;
    }
}

static int grow_table(qgroup *g)
{
    size_t nb = g->nbuckets * 2;
    group **t = calloc(nb, sizeof *t);
    if (!t)
        return ads_error_set(g->err, ADS_ENOMEM, "out of memory");
    for (size_t i = 0; i < g->ngroups; i++) {
        group *x = g->all[i];
        size_t b = x->hash & (nb - 1);
        x->next = t[b];
        t[b] = x;
    }
    free(g->table);
    g->table = t;
    g->nbuckets = nb;
    return 0;
}

int ads_q__group_add(qgroup *g, const ads_view *view, ads_arena *row_arena, ads_error *err)
{
    g->err = err;
    ads_value keys[ADS_MAX_GROUP_BY]; /* the parser allows no more */
    uint64_t h = 0x12345;
    for (size_t i = 0; i < g->ngroup; i++) {
        if (ads_expr_eval(&keys[i], g->gexprs[i], view, row_arena))
            return ads_error_set(err, ADS_ENOMEM, "out of memory");
        h = h * 31 + ads_q__hash(&keys[i]);
    }
    group *x;
    for (x = g->table[h & (g->nbuckets - 1)]; x; x = x->next) {
        if (x->hash != h)
            continue;
        size_t i = 0;
        while (i < g->ngroup && ads_value_equiv(&x->keys[i], &keys[i]))
            i++;
        if (i == g->ngroup)
            break;
    }
    if (!x) {
        x = ads_arena_alloc(g->a, sizeof *x);
        if (!x)
            return ads_error_set(err, ADS_ENOMEM, "out of memory");
        x->hash = h;
        x->keys = ads_arena_alloc(g->a, (g->ngroup ? g->ngroup : 1) * sizeof *x->keys);
        x->accs = ads_arena_alloc(g->a, (g->naggs ? g->naggs : 1) * sizeof *x->accs);
        if (!x->keys || !x->accs)
            return ads_error_set(err, ADS_ENOMEM, "out of memory");
        memset(x->accs, 0, (g->naggs ? g->naggs : 1) * sizeof *x->accs);
        for (size_t i = 0; i < g->ngroup; i++)
            if (ads_q__copy(&x->keys[i], &keys[i], g->a))
                return ads_error_set(err, ADS_ENOMEM, "out of memory");
        if (g->ngroups == g->capall) {
            size_t cap = g->capall ? 2 * g->capall : 64;
            group **m = realloc(g->all, cap * sizeof *m);
            if (!m)
                return ads_error_set(err, ADS_ENOMEM, "out of memory");
            g->all = m;
            g->capall = cap;
        }
        x->seq = g->ngroups;
        g->all[g->ngroups++] = x;
        size_t b = h & (g->nbuckets - 1);
        x->next = g->table[b];
        g->table[b] = x;
        if (g->ngroups > 2 * g->nbuckets) {
            int rc = grow_table(g);
            if (rc)
                return rc;
        }
    }
    for (size_t k = 0; k < g->naggs; k++) {
        ads_value v = ads_undefined();
        if (g->aggarg[k] && ads_expr_eval(&v, g->aggarg[k], view, row_arena))
            return ads_error_set(err, ADS_ENOMEM, "out of memory");
        int rc = acc_add(g, &x->accs[k], g->aggs[k], &v);
        if (rc)
            return rc;
    }
    return 0;
}

/* ---- output ---- */

static ads_value acc_result(qgroup *g, const acc *ac, agg_kind k, ads_arena *a)
{
    (void)g;
    if (ac->bad)
        return ads_errorv();
    switch (k) {
    case AGG_COUNT_STAR:
    case AGG_COUNT:
        return ads_int((int64_t)ac->count);
    case AGG_SUM:
        return ac->count ? ac->v : ads_int(0);
    case AGG_AVG:
        return ac->count ? ads_real(as_double(&ac->v) / (double)ac->count) : ads_undefined();
    case AGG_MIN:
    case AGG_MAX:
        return ac->count ? ac->v : ads_undefined();
    case AGG_COUNT_DISTINCT:
        return ads_int((int64_t)ac->nvals);
    case AGG_LIST:
    case AGG_DISTINCT: {
        ads_value *items = ads_arena_alloc(a, (ac->nvals ? ac->nvals : 1) * sizeof *items);
        if (!items)
            return ads_errorv();
        if (ac->nvals) /* (vals is NULL when nothing was kept) */
            memcpy(items, ac->vals, ac->nvals * sizeof *items);
        return ads_list(items, ac->nvals);
    }
    }
    return ads_undefined();
}

/* The view of one group's synthetic attributes. */
typedef struct gview {
    qgroup *g;
    const group *x;
    ads_arena *a;
} gview;

static int gview_lookup(const void *self, const char *name, size_t len, uint32_t hash,
                        ads_arena *arena, ads_value *value, const ads_expr **expr)
{
    const gview *gv = self;
    (void)hash;
    (void)arena;
    *expr = NULL;
    if (len > 5 && (strncmp(name, "__agg", 5) == 0 || strncmp(name, "__grp", 5) == 0)) {
        size_t i = 0;
        for (size_t j = 5; j < len; j++) {
            if (name[j] < '0' || name[j] > '9')
                return 0;
            i = i * 10 + (size_t)(name[j] - '0');
        }
        if (name[2] == 'a' && i < gv->g->naggs) {
            *value = acc_result(gv->g, &gv->x->accs[i], gv->g->aggs[i], gv->a);
            return 1;
        }
        if (name[2] == 'g' && i < gv->g->ngroup) {
            *value = gv->x->keys[i];
            return 1;
        }
    }
    return 0;
}

static const ads_view_ops gview_ops = {gview_lookup};

size_t ads_q__group_count(const qgroup *g)
{
    return g->ngroups;
}

/* Groups in the order of their GROUP BY values (a stable, deterministic order
 * when ORDER BY does not give one). */
static int cmp_groups(const void *pa, const void *pb, void *ctx)
{
    const group *a = *(group *const *)pa, *b = *(group *const *)pb;
    const qgroup *g = ctx;
    for (size_t i = 0; i < g->ngroup; i++) {
        int c = ads_q__compare(&a->keys[i], &b->keys[i]);
        if (c)
            return c;
    }
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

int ads_q__group_emit(qgroup *g, const stmt *st, ads_q__emit_fn emit, void *ctx,
                      ads_error *err)
{
    g->err = err;
    /* with no GROUP BY, aggregates over no rows still give one row */
    if (g->ngroup == 0 && g->ngroups == 0) {
        group *x = ads_arena_alloc(g->a, sizeof *x);
        acc *accs = ads_arena_alloc(g->a, (g->naggs ? g->naggs : 1) * sizeof *accs);
        if (!x || !accs)
            return ads_error_set(err, ADS_ENOMEM, "out of memory");
        memset(accs, 0, (g->naggs ? g->naggs : 1) * sizeof *accs);
        x->keys = NULL;
        x->accs = accs;
        x->seq = 0;
        x->hash = 0;
        g->all = malloc(sizeof *g->all);
        if (!g->all)
            return ads_error_set(err, ADS_ENOMEM, "out of memory");
        g->capall = 1;
        g->all[0] = x;
        g->ngroups = 1;
    }
    if (g->ngroups > 1) /* (all is NULL when there are no groups) */
        qsort_r(g->all, g->ngroups, sizeof *g->all, cmp_groups, g);
    ads_arena *a = ads_arena_new();
    if (a)
        ads_arena_set_budget(a, ads_arena_budget(g->a));
    ads_value *vals = malloc((g->nitems ? g->nitems : 1) * sizeof *vals);
    if (!a || !vals) {
        ads_arena_free(a);
        free(vals);
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    }
    int rc = 0;
    for (size_t i = 0; i < g->ngroups && !rc; i++) {
        ads_arena_reset(a);
        gview gv = {g, g->all[i], a};
        ads_view view = {&gview_ops, &gv, NULL};
        ads_record_builder *b;
        ads_value keys[ADS_MAX_ORDER_BY]; /* the parser allows no more */
        if ((rc = ads_record_builder_new(&b, a, err)))
            break;
        for (size_t k = 0; k < g->nitems && !rc; k++) {
            if (ads_expr_eval(&vals[k], g->items[k], &view, a))
                rc = ads_error_set(err, ADS_ENOMEM, "out of memory");
            else
                rc = ads_record_builder_add_value(b, st->items[k].label.p, st->items[k].label.len,
                                                  &vals[k], err);
        }
        for (size_t k = 0; k < g->norder && k < 64 && !rc; k++) {
            if (st->order[k].item >= 0)
                keys[k] = vals[st->order[k].item];
            else if (ads_expr_eval(&keys[k], g->order[k], &view, a))
                rc = ads_error_set(err, ADS_ENOMEM, "out of memory");
        }
        if (!rc)
            rc = emit(ctx, ads_record_builder_finish(b), keys, err);
    }
    free(vals);
    ads_arena_free(a);
    return rc;
}
