/*
 * query/params.c: bound parameters. An ads_params holds values copied in
 * its own arena; before a statement runs, its placeholders (classad's
 * ADS_X_PARAM nodes, which the statement parser asks for) are found in
 * every expression, numbered in the order they are written, checked against
 * the values, and replaced by literal nodes of those values. Evaluation so
 * never sees a placeholder, and a value never passes through text.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "query/query_int.h"

typedef struct pvalue {
    char *name;   /* NULL: positional */
    size_t len;
    size_t index; /* positional: 1-based */
    ads_value v;
    bool used;    /* taken by a statement since it was bound */
} pvalue;

struct ads_params {
    ads_arena *a;
    pvalue v[ADS_MAX_PARAMS];
    size_t n;
};

int ads_params_new(ads_params **out, ads_error *err)
{
    ads_params *p = calloc(1, sizeof *p);
    if (p && !(p->a = ads_arena_new())) {
        free(p);
        p = NULL;
    }
    if (!p)
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    *out = p;
    return 0;
}

void ads_params_free(ads_params *p)
{
    if (!p)
        return;
    ads_arena_free(p->a);
    free(p);
}

void ads_params_clear(ads_params *p)
{
    if (!p)
        return;
    ads_arena_reset(p->a);
    p->n = 0;
}

/* The entry for index (name NULL) or name, made if absent. */
static int slot(ads_params *p, size_t index, const char *name, size_t len, pvalue **out,
                ads_error *err)
{
    for (size_t i = 0; i < p->n; i++) {
        pvalue *e = &p->v[i];
        if (name ? e->name && e->len == len && strncasecmp(e->name, name, len) == 0
                 : !e->name && e->index == index) {
            *out = e;
            return 0;
        }
    }
    if (p->n == ADS_MAX_PARAMS)
        return ads_error_set(err, ADS_ELIMIT, "at most %d bound parameters", ADS_MAX_PARAMS);
    pvalue *e = &p->v[p->n];
    memset(e, 0, sizeof *e);
    e->index = index;
    if (name && !(e->name = ads_arena_strndup(p->a, name, len)))
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    e->len = len;
    p->n++;
    *out = e;
    return 0;
}

static int set_value(ads_params *p, pvalue *e, const ads_value *v, ads_error *err)
{
    ads_value copy;
    if (ads_q__copy(&copy, v, p->a))
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    e->v = copy;
    e->used = false;
    return 0;
}

int ads_params_bind(ads_params *p, size_t index, const ads_value *v, ads_error *err)
{
    if (!p || !v)
        return ads_error_set(err, ADS_EINVAL, "NULL argument");
    if (index == 0)
        return ads_error_set(err, ADS_EINVAL, "parameter indexes start at 1");
    if (index > ADS_MAX_PARAMS)
        return ads_error_set(err, ADS_ELIMIT, "parameter %zu: at most %d parameters", index,
                             ADS_MAX_PARAMS);
    pvalue *e;
    int rc = slot(p, index, NULL, 0, &e, err);
    return rc ? rc : set_value(p, e, v, err);
}

static bool is_name(const char *s, size_t n)
{
    if (n == 0 || !((s[0] >= 'A' && s[0] <= 'Z') || (s[0] >= 'a' && s[0] <= 'z') || s[0] == '_'))
        return false;
    for (size_t i = 1; i < n; i++)
        if (!((s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= 'a' && s[i] <= 'z') ||
              (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
            return false;
    return true;
}

int ads_params_bind_name(ads_params *p, const char *name, size_t len, const ads_value *v,
                         ads_error *err)
{
    if (!p || !v || (!name && len))
        return ads_error_set(err, ADS_EINVAL, "NULL argument");
    if (len && name[0] == ':') {
        name++;
        len--;
    }
    if (!is_name(name, len))
        return ads_error_set(err, ADS_EINVAL,
                             "'%.*s' is not a parameter name (a letter or '_', then letters, "
                             "digits or '_')",
                             (int)(len > 64 ? 64 : len), name ? name : "");
    pvalue *e;
    int rc = slot(p, 0, name, len, &e, err);
    return rc ? rc : set_value(p, e, v, err);
}

/* "?3" or ":name", for messages. */
static void describe(const pvalue *e, char *buf, size_t cap)
{
    if (e->name)
        snprintf(buf, cap, ":%.*s", (int)(e->len > 64 ? 64 : e->len), e->name);
    else
        snprintf(buf, cap, "?%zu", e->index);
}

int ads_params_check_used(const ads_params *p, ads_error *err)
{
    for (size_t i = 0; p && i < p->n; i++)
        if (!p->v[i].used) {
            char what[80];
            describe(&p->v[i], what, sizeof what);
            return ads_error_set(err, ADS_EINVAL,
                                 "parameter %s has a value but no statement has a placeholder "
                                 "for it",
                                 what);
        }
    return 0;
}

/* ---- binding a statement ---- */

typedef struct pslot {
    const ads_expr *node;
    size_t offset;
    ads_str name;
    int line, column;
    const ads_value *v; /* once bound */
} pslot;

typedef struct pfound {
    pslot s[ADS_MAX_PARAMS];
    size_t n;
    int rc;
    ads_error *err;
    ads_arena *a; /* for the literals that replace placeholders */
} pfound;

static int found_at(void *ctx, const ads_expr *e);

static void collect(pfound *f, const ads_expr *e)
{
    if (e && !f->rc)
        ads_expr_visit(e, found_at, f, ADS_VISIT_ANY_ORDER, NULL);
}

/* Each placeholder once; the members of records too (ads_expr_visit leaves
 * them to its caller). */
static int found_at(void *ctx, const ads_expr *e)
{
    pfound *f = ctx;
    if (ads_expr_kind_of(e) == ADS_X_RECORD) {
        const ads_record *r = ads_expr_record(e);
        for (size_t i = 0; i < ads_record_size(r); i++)
            collect(f, ads_record_expr(r, i));
        return f->rc ? ADS_VISIT_STOP : ADS_VISIT_SKIP;
    }
    pslot s = {e, 0, {"", 0}, 0, 0, NULL};
    if (!ads_expr_param(e, &s.name, &s.offset, &s.line, &s.column))
        return ADS_VISIT_INTO;
    if (f->n == ADS_MAX_PARAMS) {
        f->rc = ads_error_set_at(f->err, ADS_ELIMIT, s.line, s.column,
                                 "at most %d placeholders in a statement", ADS_MAX_PARAMS);
        return ADS_VISIT_STOP;
    }
    f->s[f->n++] = s;
    return ADS_VISIT_SKIP;
}

static int by_offset(const void *x, const void *y)
{
    const pslot *a = x, *b = y;
    return a->offset < b->offset ? -1 : a->offset > b->offset;
}

static void collect_stmt(pfound *f, const stmt *st)
{
    for (size_t i = 0; i < st->nitems; i++)
        collect(f, st->items[i].e);
    for (size_t i = 0; i < st->njoins; i++)
        collect(f, st->joins[i].on);
    collect(f, st->where);
    for (size_t i = 0; i < st->ngroup; i++)
        collect(f, st->group[i]);
    for (size_t i = 0; i < st->norder; i++)
        collect(f, st->order[i].e);
    for (size_t i = 0; i < st->nsets; i++)
        collect(f, st->sets[i].e);
    for (size_t i = 0; i < st->nrecords; i++)
        collect(f, st->records[i]);
    collect(f, st->limit_param);
}

static pvalue *lookup(ads_params *p, const pslot *s, size_t index)
{
    for (size_t i = 0; p && i < p->n; i++) {
        pvalue *e = &p->v[i];
        if (s->name.len ? e->name && e->len == s->name.len &&
                              strncasecmp(e->name, s->name.p, s->name.len) == 0
                        : !e->name && e->index == index)
            return e;
    }
    return NULL;
}

/* Give each placeholder (in text order) its value: every one needs one,
 * and one statement uses one style. */
static int match(pfound *f, ads_params *p, bool *marks, ads_error *err)
{
    qsort(f->s, f->n, sizeof f->s[0], by_offset);
    for (size_t i = 1; i < f->n; i++)
        if ((f->s[i].name.len == 0) != (f->s[0].name.len == 0))
            return ads_error_set_at(err, ADS_EINVAL, f->s[i].line, f->s[i].column,
                                    "a statement uses ? or :name placeholders, not both "
                                    "(the first here is %s)",
                                    f->s[0].name.len ? ":name" : "?");
    size_t positional = 0;
    for (size_t i = 0; i < f->n; i++) {
        pslot *s = &f->s[i];
        size_t index = s->name.len ? 0 : ++positional;
        pvalue *e = lookup(p, s, index);
        if (!e) {
            if (s->name.len)
                return ads_error_set_at(err, ADS_EINVAL, s->line, s->column,
                                        "no value bound to parameter :%.*s",
                                        (int)(s->name.len > 64 ? 64 : s->name.len), s->name.p);
            return ads_error_set_at(err, ADS_EINVAL, s->line, s->column,
                                    "no value bound to parameter ?%zu (the statement's %zu%s ?)",
                                    index, index,
                                    index % 10 == 1 && index % 100 != 11   ? "st"
                                    : index % 10 == 2 && index % 100 != 12 ? "nd"
                                    : index % 10 == 3 && index % 100 != 13 ? "rd"
                                                                           : "th");
        }
        s->v = &e->v;
        marks[e - p->v] = true;
    }
    return 0;
}

static const ads_expr *replace_at(void *ctx, const ads_expr *e, int *stop)
{
    const pfound *f = ctx;
    size_t offset;
    if (!ads_expr_param(e, NULL, &offset, NULL, NULL))
        return NULL;
    pslot key = {NULL, offset, {"", 0}, 0, 0, NULL};
    const pslot *s = bsearch(&key, f->s, f->n, sizeof f->s[0], by_offset);
    const ads_expr *lit = NULL;
    if (!s || ads_expr_literal(&lit, f->a, s->v, NULL))
        *stop = ADS_ENOMEM;
    return lit;
}

static int replace(pfound *f, const ads_expr **e, ads_error *err)
{
    return *e ? ads_expr_rewrite(e, f->a, *e, replace_at, f, err) : 0;
}

static int replace_stmt(pfound *f, stmt *st, ads_error *err)
{
    int rc = replace(f, &st->where, err);
    for (size_t i = 0; !rc && i < st->nitems; i++)
        rc = replace(f, &st->items[i].e, err);
    for (size_t i = 0; !rc && i < st->njoins; i++)
        rc = replace(f, &st->joins[i].on, err);
    for (size_t i = 0; !rc && i < st->ngroup; i++)
        rc = replace(f, &st->group[i], err);
    for (size_t i = 0; !rc && i < st->norder; i++)
        rc = replace(f, &st->order[i].e, err);
    for (size_t i = 0; !rc && i < st->nsets; i++)
        rc = replace(f, &st->sets[i].e, err);
    for (size_t i = 0; !rc && i < st->nrecords; i++)
        rc = replace(f, &st->records[i], err);
    return rc;
}

/* LIMIT ?: a whole number >= 0. */
static int bind_limit(const pfound *f, stmt *st, ads_error *err)
{
    size_t offset;
    int line, col;
    ads_expr_param(st->limit_param, NULL, &offset, &line, &col);
    pslot key = {NULL, offset, {"", 0}, 0, 0, NULL};
    const pslot *s = bsearch(&key, f->s, f->n, sizeof f->s[0], by_offset);
    if (s->v->type != ADS_INTEGER || s->v->u.i < 0)
        return ads_error_set_at(err, ADS_EINVAL, line, col,
                                "LIMIT's parameter must be a whole number >= 0, not %s",
                                s->v->type == ADS_INTEGER ? "a negative one"
                                                          : ads_vtype_name(s->v->type));
    st->limit = s->v->u.i;
    st->limit_param = NULL;
    return 0;
}

int ads_q__bind(stmt *st, ads_params *p, bool script, ads_arena *a, ads_error *err)
{
    pfound *f = ads_arena_alloc(a, sizeof *f);
    bool marks[ADS_MAX_PARAMS] = {false};
    if (!f)
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    f->n = 0;
    f->rc = 0;
    f->err = err;
    f->a = a;
    collect_stmt(f, st);
    int rc = f->rc ? f->rc : match(f, p, marks, err);
    if (rc)
        return rc;
    for (size_t i = 0; p && !script && i < p->n; i++)
        if (!marks[i]) {
            char what[80];
            describe(&p->v[i], what, sizeof what);
            return ads_error_set(err, ADS_EINVAL,
                                 "parameter %s has a value but the statement has no placeholder "
                                 "for it",
                                 what);
        }
    for (size_t i = 0; p && i < p->n; i++)
        p->v[i].used |= marks[i];
    if (f->n == 0)
        return 0;
    if (st->limit_param && (rc = bind_limit(f, st, err)))
        return rc;
    return replace_stmt(f, st, err);
}
