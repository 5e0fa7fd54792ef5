/*
 * query/exec.c: running statements. The session and its entry points; the
 * checks every statement gets before it runs, which need no store (so
 * ads_query_parse can run them before a store is opened: aggregates where
 * rows are taken one by one, the temporal filter split off WHERE, ORDER BY
 * names that are select-list labels); and SELECT over stored rows or a
 * datasource:
 *
 *   plan    the FROM type becomes a scan of its latest rows (or of every
 *           row, when the statement mentions __Latest); a WHERE whose
 *           top-level conjuncts pin every key attribute to a constant
 *           becomes a point lookup; conjuncts that mention no JOIN alias are
 *           prepared once and evaluated by the engine on the stored bytes;
 *           a JOIN whose ON compares the joined type's key attributes
 *           becomes a key lookup per row; any other JOIN a scan of the
 *           joined type per row (the first row ON accepts, or with JOIN ALL
 *           each one, streamed);
 *   run     scan -> filter -> join -> (group) -> (sort and limit) ->
 *           project -> sink, one row at a time; memory holds one row, the
 *           groups, and the rows ORDER BY keeps (at most 2 x LIMIT).
 *
 * Hidden rows (section 2): `_Deleted is false` unless the statement
 * mentions _Deleted, `__Latest is true` unless it mentions __Latest; the
 * engine's scan flags do both without evaluating anything.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "classad/formats.h"
#include "query/query_int.h"

/* ---- the session ---- */

int ads_query_new(ads_query **out, ads_db *db, ads_error *err)
{
    if (!out || !db)
        return ads_error_set(err, ADS_EINVAL, "NULL argument");
    ads_query *q = calloc(1, sizeof *q);
    if (!q)
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    q->db = db;
    q->max_bytes = ADS_DEFAULT_STMT_MEMORY;
    q->max_seconds = ADS_DEFAULT_STMT_SECONDS;
    *out = q;
    return 0;
}

void ads_query_set_limits(ads_query *q, size_t max_bytes, double max_seconds)
{
    if (!q)
        return;
    q->max_bytes = max_bytes;
    q->max_seconds = max_seconds > 0 && max_seconds == max_seconds ? max_seconds : 0;
}

ads_arena *ads_q__arena(ads_query *q)
{
    ads_arena *a = ads_arena_new();
    if (a)
        ads_arena_set_budget(a, &q->budget);
    return a;
}

void ads_query_interrupt(ads_query *q)
{
    if (q)
        q->interrupted = 1;
}

int ads_q__budget(ads_query *q, ads_error *err)
{
    if (q->interrupted)
        return ads_error_set(err, ADS_ELIMIT, "interrupted");
    if (ads_budget_check(&q->budget))
        return 0;
    return ads_error_set(err, ADS_ELIMIT, "over a statement limit");
}

static bool q_stop(void *ctx)
{
    ads_query *q = ctx;
    return q->interrupted || !ads_budget_check(&q->budget);
}

void ads_q__watch(ads_scan *sc, ads_query *q)
{
    ads_scan_set_stop(sc, q_stop, q);
}

/* A statement stopped by its budget says which limit and how to raise it
 * (whatever failed first: an allocation, a row loop, a built-in). */
int ads_q__over_limit(ads_query *q, int rc, ads_error *err)
{
    if (!rc || !q->budget.hit)
        return rc;
    bool mib = q->max_bytes % ((size_t)1 << 20) == 0;
    if (q->budget.hit == ADS_BUDGET_MEMORY)
        return ads_error_set(err, ADS_ELIMIT,
                             "the statement needs more than its memory limit of %zu %s "
                             "(ads_query_set_limits; adstore --max-memory)",
                             mib ? q->max_bytes >> 20 : q->max_bytes, mib ? "MiB" : "bytes");
    return ads_error_set(err, ADS_ELIMIT,
                         "the statement ran longer than its time limit of %g s "
                         "(ads_query_set_limits; adstore --max-time)",
                         q->max_seconds);
}

void ads_query_free(ads_query *q)
{
    if (!q)
        return;
    ads_query_rollback(q);
    for (size_t i = 0; i < q->nds; i++)
        free(q->ds[i].name);
    free(q->ds);
    free(q);
}

int ads_q__error_place(const stmt *st, const char *at, int rc, ads_error *err)
{
    if (!err || err->line > 0 || !at || at < st->text + st->start || at >= st->text + st->end)
        return rc;
    int line = 1, col = 1;
    for (const char *p = st->text; p < at; p++) {
        if (*p == '\n') {
            line++;
            col = 1;
        } else {
            col++;
        }
    }
    err->line = line;
    err->column = col;
    return rc;
}

int ads_q__error_at(const stmt *st, ads_str name, int rc, ads_error *err)
{
    if (rc != ADS_ENOTFOUND)
        return rc;
    return ads_q__error_place(st, name.p, rc, err);
}

/* ---- statements in a script ---- */

int ads_query_next_statement(const char *text, size_t len, size_t *pos, size_t *start,
                             size_t *end)
{
    size_t p = *pos;
    /* skip white space, comments and stray ';' */
    for (;;) {
        while (p < len && (text[p] == ' ' || text[p] == '\t' || text[p] == '\n' ||
                           text[p] == '\r' || text[p] == ';'))
            p++;
        if (p + 1 < len && text[p] == '/' && text[p + 1] == '/') {
            while (p < len && text[p] != '\n')
                p++;
            continue;
        }
        if (p + 1 < len && text[p] == '/' && text[p + 1] == '*') {
            p += 2;
            while (p + 1 < len && !(text[p] == '*' && text[p + 1] == '/'))
                p++;
            p = p + 1 < len ? p + 2 : len;
            continue;
        }
        break;
    }
    if (p >= len) {
        *pos = len;
        return 0;
    }
    *start = p;
    int depth = 0;
    while (p < len) {
        char c = text[p];
        if (c == '"' || c == '\'' || c == '`') {
            /* a quoted token: to its closing quote (backslash escapes) */
            p++;
            while (p < len && text[p] != c) {
                if (text[p] == '\\' && p + 1 < len)
                    p++;
                if (text[p] == '\n' && c != '`')
                    break;
                p++;
            }
            p++;
            continue;
        }
        if (c == '/' && p + 1 < len && text[p + 1] == '/') {
            while (p < len && text[p] != '\n')
                p++;
            continue;
        }
        if (c == '/' && p + 1 < len && text[p + 1] == '*') {
            p += 2;
            while (p + 1 < len && !(text[p] == '*' && text[p + 1] == '/'))
                p++;
            p = p + 1 < len ? p + 2 : len;
            continue;
        }
        if (c == '[' || c == '{' || c == '(')
            depth++;
        else if ((c == ']' || c == '}' || c == ')') && depth > 0)
            depth--;
        else if (depth == 0 && c == ';') {
            *end = p;
            *pos = p + 1;
            return 1;
        }
        p++;
    }
    *end = len;
    *pos = len;
    return 1;
}

int ads_query_exec(ads_query *q, const char *text, size_t len, const ads_sink *sink,
                   const ads_exec_options *opt, ads_exec_info *info, ads_error *err)
{
    return ads_query_exec_at(q, text, len, 0, len, sink, opt, info, err);
}

/* The GROUP BY's @intervals(D), if any: its index, or -1. */
static long intervals_at(const stmt *st)
{
    for (size_t i = 0; i < st->ngroup; i++)
        if (ads_expr_kind_of(st->group[i]) == ADS_X_CALL &&
            ads_q__name_is(ads_expr_name(st->group[i]), "@intervals"))
            return (long)i;
    return -1;
}

/* An aggregate found where rows are filtered or sorted one by one: an error
 * at the call, naming it as written (canonically) and why. */
static int agg_misplaced(const stmt *st, const ads_expr *call, const char *why, ads_error *err)
{
    ads_buf b = ADS_BUF_INIT;
    if (ads_expr_star(call)) {
        ads_str n = ads_expr_name(call);
        ads_buf_add(&b, n.p, n.len);
        ads_buf_adds(&b, "(*)");
    } else {
        ads_expr_unparse(&b, call);
    }
    const char *text = b.failed || !b.p ? "count" : b.p;
    int n = b.failed || !b.p ? 5 : (int)(b.len > 60 ? 60 : b.len);
    ads_error_set(err, ADS_EINVAL, "%.*s%s is an aggregate; %s", n, text,
                  !b.failed && b.len > 60 ? "..." : "", why);
    ads_buf_free(&b);
    return ads_q__error_place(st, ads_expr_name(call).p, ADS_EINVAL, err);
}

/* The first call in e of a function that is neither a ClassAd built-in nor
 * the statement language's (aggregates, @filters, timeline aggregates). */
static int unknown_at(void *ctx, const ads_expr *e)
{
    const ads_expr **found = ctx;
    if (ads_expr_kind_of(e) == ADS_X_RECORD) {
        const ads_record *r = ads_expr_record(e);
        for (size_t i = 0; i < ads_record_size(r) && !*found; i++)
            ads_expr_visit(ads_record_expr(r, i), unknown_at, found, ADS_VISIT_ANY_ORDER, NULL);
        return *found ? ADS_VISIT_STOP : ADS_VISIT_SKIP;
    }
    if (ads_expr_kind_of(e) != ADS_X_CALL)
        return ADS_VISIT_INTO;
    ads_str n = ads_expr_name(e);
    bool language = n.len && (n.p[0] == '@' || n.p[n.len - 1] == '@');
    if (language || ads_q__agg_kind(e) >= 0 || ads_builtin_known(n.p, n.len))
        return ADS_VISIT_INTO;
    *found = e;
    return ADS_VISIT_STOP;
}

/* A statement calling a function that does not exist is refused where the
 * call is written (a stored record may hold one: it evaluates to error). */
static int check_calls(const stmt *st, const ads_expr *e, ads_error *err)
{
    const ads_expr *bad = NULL;
    if (e)
        ads_expr_visit(e, unknown_at, &bad, ADS_VISIT_ANY_ORDER, NULL);
    if (!bad)
        return 0;
    ads_str n = ads_expr_name(bad);
    ads_error_set(err, ADS_EINVAL,
                  "no function named %.*s (adstore help eval lists the ClassAd functions; "
                  "docs/classad.md)",
                  (int)(n.len > 64 ? 64 : n.len), n.p);
    return ads_q__error_place(st, n.p, ADS_EINVAL, err);
}

static int check_all_calls(const stmt *st, ads_error *err)
{
    int rc = check_calls(st, st->where, err);
    for (size_t i = 0; !rc && i < st->nitems; i++)
        rc = check_calls(st, st->items[i].e, err);
    for (size_t i = 0; !rc && i < st->njoins; i++)
        rc = check_calls(st, st->joins[i].on, err);
    for (size_t i = 0; !rc && i < st->ngroup; i++)
        rc = check_calls(st, st->group[i], err);
    for (size_t i = 0; !rc && i < st->norder; i++)
        rc = check_calls(st, st->order[i].e, err);
    for (size_t i = 0; !rc && i < st->nsets; i++)
        rc = check_calls(st, st->sets[i].e, err);
    return rc;
}

/*
 * What can be checked of a parsed statement without a store, and the
 * rewrites every statement gets: a bare name in ORDER BY that is a select
 * item's label refers to that item; an aggregate that is not also a ClassAd
 * built-in (count, count_distinct, list, distinct) is refused where rows are
 * taken one by one (WHERE, JOIN's ON, the ORDER BY of a statement that does
 * not aggregate); the temporal filter is split off WHERE (*tf, *rest);
 * UPDATE / DELETE / PURGE rules that need no type.
 */
int ads_q__check_stmt(stmt *st, temporal *tf, const ads_expr **rest, ads_arena *a,
                      ads_error *err)
{
    int rc;
    if ((rc = check_all_calls(st, err)))
        return rc;
    if ((rc = ads_q__split_temporal(st, st->where, tf, rest, a, err)))
        return rc;
    if (st->explain && (st->kind == ADS_STMT_STORE || st->history || tf->kind != 0))
        return ads_error_set(err, ADS_EINVAL,
                             "EXPLAIN shows the plan of a SELECT (of latest rows or history), "
                             "an UPDATE, a DELETE or a PURGE, without a temporal filter");
    const ads_expr *bad = ads_q__find_agg_only(st->where);
    if (bad)
        return agg_misplaced(st, bad, "WHERE filters rows before they are grouped", err);
    for (size_t i = 0; i < st->njoins; i++)
        if ((bad = ads_q__find_agg_only(st->joins[i].on)))
            return agg_misplaced(st, bad, "JOIN's ON matches rows before they are grouped", err);
    if (st->kind == ADS_STMT_SELECT) {
        /* ORDER BY label: SQL's rule, the output column wins over an attribute */
        for (size_t i = 0; i < st->norder && !st->star; i++) {
            if (ads_expr_kind_of(st->order[i].e) != ADS_X_ATTR)
                continue;
            ads_str n = ads_expr_name(st->order[i].e);
            for (size_t k = 0; k < st->nitems && st->order[i].item < 0; k++)
                if (st->items[k].label.len == n.len &&
                    strncasecmp(st->items[k].label.p, n.p, n.len) == 0)
                    st->order[i].item = (long)k;
        }
        bool grouped = st->ngroup > 0;
        for (size_t i = 0; i < st->nitems; i++)
            grouped |= ads_q__has_aggregate(st->items[i].e);
        for (size_t i = 0; i < st->norder && !grouped; i++)
            if (st->order[i].item < 0 && (bad = ads_q__find_agg_only(st->order[i].e)))
                return agg_misplaced(st, bad,
                                     "ORDER BY sorts rows one by one in a statement without "
                                     "GROUP BY or an aggregate in the select list",
                                     err);
        return 0;
    }
    if ((st->kind == ADS_STMT_DELETE || st->kind == ADS_STMT_PURGE) && !st->has_from &&
        !ads_q__mentions(st->where, "AdType"))
        return ads_error_set(err, ADS_EINVAL,
                             "%s without FROM must say which types in WHERE, with AdType "
                             "(for example WHERE AdType in { \"A\", \"B\" })",
                             st->kind == ADS_STMT_DELETE ? "DELETE" : "PURGE");
    if (tf->kind != 0)
        return ads_error_set(err, ADS_EINVAL,
                             "a temporal filter (@timerange, @duration, ...) belongs in SELECT "
                             "only");
    for (size_t i = 0; i < st->nsets; i++) {
        ads_str n = st->sets[i].name;
        for (size_t k = 0; k < i; k++)
            if (st->sets[k].name.len == n.len && strncasecmp(st->sets[k].name.p, n.p, n.len) == 0)
                return ads_error_set(err, ADS_EINVAL, "SET names %.*s twice", (int)n.len, n.p);
    }
    return 0;
}

int ads_query_parse(const char *text, size_t len, size_t start, size_t end, ads_stmt_kind *kind,
                    ads_error *err)
{
    if (!text && len)
        return ads_error_set(err, ADS_EINVAL, "NULL argument");
    ads_arena *a = ads_arena_new();
    if (!a)
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    char *copy = ads_arena_strndup(a, text ? text : "", len);
    stmt st;
    temporal tf;
    const ads_expr *rest;
    int rc;
    if (!copy)
        rc = ads_error_set(err, ADS_ENOMEM, "out of memory");
    else if (!(rc = ads_stmt__parse(&st, a, copy, len, start, end, err)) &&
             !(rc = ads_q__check_stmt(&st, &tf, &rest, a, err)) && kind)
        *kind = st.kind;
    ads_arena_free(a);
    return rc;
}

int ads_query_exec_at(ads_query *q, const char *text, size_t len, size_t start, size_t end,
                      const ads_sink *sink, const ads_exec_options *opt, ads_exec_info *info,
                      ads_error *err)
{
    if (!q || (!text && len))
        return ads_error_set(err, ADS_EINVAL, "NULL argument");
    if (q->stepping)
        return ads_error_set(err, ADS_EBUSY,
                             "the session has a prepared statement open: finalize it "
                             "(ads_stmt_finalize) before running another");
    ads_exec_info local;
    if (!info)
        info = &local;
    memset(info, 0, sizeof *info);
    ads_exec_options defopt = ADS_EXEC_OPTIONS_INIT;
    if (!opt)
        opt = &defopt;
    ads_budget_start(&q->budget, q->max_bytes, q->max_seconds);
    q->interrupted = 0;
    ads_arena *a = ads_q__arena(q);
    if (!a)
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    /* the statement keeps pointers into its text: copy the text once */
    char *copy = ads_arena_strndup(a, text ? text : "", len);
    stmt st;
    temporal tf;
    const ads_expr *rest;
    int rc;
    if (!copy) {
        rc = ads_error_set(err, ADS_ENOMEM, "out of memory");
        goto cleanup;
    }
    if ((rc = ads_stmt__parse(&st, a, copy, len, start, end, err)) ||
        (rc = ads_q__bind(&st, opt->params, opt->params_script, a, err)))
        goto cleanup;
    info->kind = st.kind;
    if (ads_q__is_control(&st)) {
        rc = ads_q__control(q, &st, opt, err);
        goto cleanup;
    }
    if ((rc = ads_q__check_stmt(&st, &tf, &rest, a, err)) ||
        (rc = ads_q__txn_enter(q, opt, err)))
        goto cleanup;
    rc = ads_q__run(q, &st, &tf, rest, sink, opt, info, err);
cleanup:
    ads_q__txn_leave(q, opt, rc, info);
    ads_arena_free(a);
    return ads_q__over_limit(q, rc, err);
}

int ads_q__run(ads_query *q, stmt *st, const temporal *tf, const ads_expr *rest,
               const ads_sink *sink, const ads_exec_options *opt, ads_exec_info *info,
               ads_error *err)
{
    if (st->kind != ADS_STMT_SELECT)
        return ads_q__write(q, st, rest, sink, info, err);
    if (tf->kind == 0 && intervals_at(st) < 0) {
        st->where = rest;
        return ads_q__select(q, st, sink, opt, info, err);
    }
    if (tf->kind == 0)
        return ads_error_set(err, ADS_EINVAL,
                             "GROUP BY @intervals needs a temporal filter in WHERE "
                             "(@timerange, @duration, @last or @anytime)");
    return ads_q__timeline(q, st, tf, rest, sink, opt, info, err);
}

/* ---- SELECT ---- */

typedef struct qjoin {
    const join_clause *jc;
    const ads_type *type;
    const ads_expr *on;       /* prepared */
    bool key_lookup;
    const ads_expr **probe;   /* main-side expressions, in the join type's key order */
    const ads_record *rec;    /* the current joined row (NULL: none) */
    ads_arena *ra;            /* JOIN ALL: the row tried and all that follows from it */
} qjoin;

/* The composite view of a row: JOIN aliases (and the FROM alias) name
 * records; every other name is the main row's. */
typedef struct rview {
    ads_view base;
    ads_str main_alias;
    ads_row *row;               /* the main row, when stored */
    const ads_record *main_rec; /* decoded for the alias on first use */
    qjoin *joins;
    size_t njoins;
    size_t bound;               /* joins bound so far (an ON sees only earlier ones) */
    ads_arena *a;
} rview;

static bool same_name(ads_str a, const char *name, size_t len)
{
    if (a.len != len)
        return false;
    for (size_t i = 0; i < len; i++) {
        unsigned char x = (unsigned char)a.p[i], y = (unsigned char)name[i];
        if ((x >= 'A' && x <= 'Z' ? x | 0x20 : x) != (y >= 'A' && y <= 'Z' ? y | 0x20 : y))
            return false;
    }
    return true;
}

static int rview_lookup(const void *self, const char *name, size_t len, uint32_t hash,
                        ads_arena *arena, ads_value *value, const ads_expr **expr)
{
    rview *rv = (rview *)self;
    for (size_t i = 0; i < rv->bound; i++)
        if (same_name(rv->joins[i].jc->alias, name, len)) {
            *expr = NULL;
            *value = rv->joins[i].rec ? ads_recordv(rv->joins[i].rec) : ads_undefined();
            return ADS_VIEW_DETACHED; /* O.x never falls back to the main row */
        }
    if (rv->main_alias.len && same_name(rv->main_alias, name, len)) {
        if (!rv->main_rec) {
            if (!rv->row)
                return 0;
            if (ads_row_record(&rv->main_rec, rv->row, ADS_ROW_TIMELINE, rv->a, NULL))
                return ADS_ENOMEM;
        }
        *expr = NULL;
        *value = ads_recordv(rv->main_rec);
        return ADS_VIEW_DETACHED;
    }
    return rv->base.ops->lookup(rv->base.self, name, len, hash, arena, value, expr);
}

/* The row's data for a name that is no alias (ads_view_ops.data). */
static ads_msgpack_view *rview_data(const void *self, const char *name, size_t len)
{
    const rview *rv = self;
    for (size_t i = 0; i < rv->bound; i++)
        if (same_name(rv->joins[i].jc->alias, name, len))
            return NULL;
    if (rv->main_alias.len && same_name(rv->main_alias, name, len))
        return NULL;
    return rv->base.ops->data ? rv->base.ops->data(rv->base.self, name, len) : NULL;
}

static const ads_view_ops rview_ops = {rview_lookup, rview_data};

typedef struct alias_find {
    const qjoin *joins;
    size_t n;
    ads_str main_alias;
    bool found;
} alias_find;

static bool mentions_alias(const ads_expr *e, const qjoin *joins, size_t n, ads_str main_alias);

static int mentions_alias_at(void *ctx, const ads_expr *e)
{
    alias_find *f = ctx;
    ads_expr_kind k = ads_expr_kind_of(e);
    if (k == ADS_X_ATTR) {
        ads_str nm = ads_expr_name(e);
        for (size_t i = 0; i < f->n && !f->found; i++)
            f->found = same_name(f->joins[i].jc->alias, nm.p, nm.len);
        if (f->main_alias.len && same_name(f->main_alias, nm.p, nm.len))
            f->found = true;
        return f->found ? ADS_VISIT_STOP : ADS_VISIT_SKIP;
    }
    if (k == ADS_X_RECORD) {
        const ads_record *r = ads_expr_record(e);
        for (size_t i = 0; i < ads_record_size(r) && !f->found; i++)
            f->found = mentions_alias(ads_record_expr(r, i), f->joins, f->n, f->main_alias);
        return f->found ? ADS_VISIT_STOP : ADS_VISIT_SKIP;
    }
    return ADS_VISIT_INTO;
}

/* Does e mention any of the aliases (as alias.x or alias)? No recursion down
 * chains (a || b || ... of any length). */
static bool mentions_alias(const ads_expr *e, const qjoin *joins, size_t n, ads_str main_alias)
{
    alias_find f = {joins, n, main_alias, false};
    ads_expr_visit(e, mentions_alias_at, &f, ADS_VISIT_ANY_ORDER, NULL);
    return f.found;
}

typedef struct conj_list {
    const ads_expr **items;
    size_t n, cap;
    ads_arena *a;
    ads_error *err;
} conj_list;

static int conjunct_at(void *ctx, const ads_expr *e)
{
    conj_list *c = ctx;
    ads_expr_kind k = ads_expr_kind_of(e);
    if (k == ADS_X_PAREN || k == ADS_X_AND)
        return ADS_VISIT_INTO;
    if (c->n == c->cap) {
        size_t nc = c->cap ? 2 * c->cap : 8;
        const ads_expr **m = ads_arena_alloc(c->a, nc * sizeof *m);
        if (!m)
            return ads_error_set(c->err, ADS_ENOMEM, "out of memory");
        if (c->n)
            memcpy(m, c->items, c->n * sizeof *m);
        c->items = m;
        c->cap = nc;
    }
    c->items[c->n++] = e;
    return ADS_VISIT_SKIP;
}

/* Split a WHERE into its top-level conjuncts, in the order written (no
 * recursion down a chain of && of any length). */
static int conjuncts(const ads_expr *e, const ads_expr ***out, size_t *n, size_t *cap,
                     ads_arena *a, ads_error *err)
{
    conj_list c = {*out, *n, *cap, a, err};
    int rc = ads_expr_visit(e, conjunct_at, &c, 0, err);
    *out = c.items;
    *n = c.n;
    *cap = c.cap;
    return rc;
}

int ads_q__conjuncts(const ads_expr *e, const ads_expr ***out, size_t *n, ads_arena *a,
                     ads_error *err)
{
    size_t cap = 0;
    *out = NULL;
    *n = 0;
    return e ? conjuncts(e, out, n, &cap, a, err) : 0;
}

static int and_all(const ads_expr **out, const ads_expr **c, size_t n, ads_arena *a,
                   ads_error *err)
{
    *out = NULL;
    for (size_t i = 0; i < n; i++) {
        if (!*out) {
            *out = c[i];
            continue;
        }
        int rc = ads_expr_new_and(out, a, *out, c[i], err);
        if (rc)
            return rc;
    }
    return 0;
}

/* A constant expression's value (folded at plan time), or false. */
static bool constant(const ads_expr *e, ads_value *out, ads_arena *a)
{
    const ads_expr *f;
    if (ads_expr_prepare(&f, a, e, NULL))
        return false;
    const ads_value *v = ads_expr_literal_value(f);
    if (!v)
        return false;
    *out = *v;
    return true;
}

/* A plain reference to attribute name (Name, or alias.Name for the FROM
 * alias): its name, else empty. */
static ads_str plain_attr(const ads_expr *e, ads_str main_alias)
{
    ads_str none = {"", 0};
    while (ads_expr_kind_of(e) == ADS_X_PAREN)
        e = ads_expr_arg(e, 0);
    if (ads_expr_kind_of(e) == ADS_X_ATTR)
        return ads_expr_name(e);
    if (ads_expr_kind_of(e) == ADS_X_SELECT && main_alias.len) {
        const ads_expr *b = ads_expr_arg(e, 0);
        ads_str bn = ads_expr_name(b);
        if (ads_expr_kind_of(b) == ADS_X_ATTR && same_name(main_alias, bn.p, bn.len))
            return ads_expr_name(e);
    }
    return none;
}

/* Pinned key values from conjuncts `Key == c`, `c == Key`, `Key is c`,
 * `Key === c` and `{ K1, K2 } === { c1, c2 }`: true if every key attribute
 * of t is pinned (values in key order in out). */
bool ads_q__pinned_keys(const ads_type *t, const ads_expr **c, size_t n, ads_str main_alias,
                        ads_value *out, ads_arena *a)
{
    size_t nk = ads_type_key_count(t);
    bool *have = ads_arena_alloc(a, nk * sizeof *have);
    if (!have || nk > 16)
        return false;
    memset(have, 0, nk * sizeof *have);
    for (size_t i = 0; i < n; i++) {
        const ads_expr *e = c[i];
        if (ads_expr_kind_of(e) != ADS_X_BINARY)
            continue;
        const char *op = ads_expr_op(e);
        if (strcmp(op, "==") && strcmp(op, "is") && strcmp(op, "==="))
            continue;
        const ads_expr *l = ads_expr_arg(e, 0), *r = ads_expr_arg(e, 1);
        for (int side = 0; side < 2; side++) {
            const ads_expr *ref = side ? r : l, *val = side ? l : r;
            const ads_expr *refs[16], *vals[16];
            size_t m = 1;
            refs[0] = ref;
            vals[0] = val;
            if (ads_expr_kind_of(ref) == ADS_X_LIST && ads_expr_kind_of(val) == ADS_X_LIST &&
                !strcmp(op, "===") && ads_expr_nargs(ref) == ads_expr_nargs(val) &&
                ads_expr_nargs(ref) <= 16) {
                m = ads_expr_nargs(ref);
                for (size_t j = 0; j < m; j++) {
                    refs[j] = ads_expr_arg(ref, j);
                    vals[j] = ads_expr_arg(val, j);
                }
            }
            for (size_t j = 0; j < m; j++) {
                ads_str name = plain_attr(refs[j], main_alias);
                ads_value v;
                if (!name.len || !constant(vals[j], &v, a) || v.type == ADS_UNDEFINED ||
                    v.type == ADS_ERROR)
                    continue;
                for (size_t k = 0; k < nk; k++) {
                    ads_str key = ads_type_key(t, k);
                    if (same_name(key, name.p, name.len) && !have[k]) {
                        have[k] = true;
                        out[k] = v;
                    }
                }
            }
        }
    }
    for (size_t k = 0; k < nk; k++)
        if (!have[k])
            return false;
    return true;
}

/* Key lookup for a JOIN: ON is `A === B` (or ==) where one side names the
 * joined type's key attributes as alias.Key (alone, or a list of them in any
 * order) and the other side does not mention the alias. */
static int plan_join(qjoin *j, ads_arena *a, ads_error *err)
{
    const ads_expr *on = j->jc->on;
    while (ads_expr_kind_of(on) == ADS_X_PAREN)
        on = ads_expr_arg(on, 0);
    j->key_lookup = false;
    if (ads_expr_kind_of(on) != ADS_X_BINARY ||
        (strcmp(ads_expr_op(on), "===") && strcmp(ads_expr_op(on), "==")))
        return 0;
    size_t nk = ads_type_key_count(j->type);
    for (int side = 0; side < 2; side++) {
        const ads_expr *mine = ads_expr_arg(on, side), *other = ads_expr_arg(on, 1 - side);
        const ads_expr *refs[16], *vals[16];
        size_t m = 1;
        refs[0] = mine;
        vals[0] = other;
        if (ads_expr_kind_of(mine) == ADS_X_LIST) {
            if (ads_expr_kind_of(other) != ADS_X_LIST ||
                ads_expr_nargs(mine) != ads_expr_nargs(other) || ads_expr_nargs(mine) > 16)
                continue;
            m = ads_expr_nargs(mine);
            for (size_t i = 0; i < m; i++) {
                refs[i] = ads_expr_arg(mine, i);
                vals[i] = ads_expr_arg(other, i);
            }
        }
        if (m != nk)
            continue;
        const ads_expr **probe = ads_arena_alloc(a, nk * sizeof *probe);
        if (!probe)
            return ads_error_set(err, ADS_ENOMEM, "out of memory");
        memset(probe, 0, nk * sizeof *probe);
        bool ok = true;
        for (size_t i = 0; i < m && ok; i++) {
            const ads_expr *r = refs[i];
            if (ads_expr_kind_of(r) != ADS_X_SELECT ||
                ads_expr_kind_of(ads_expr_arg(r, 0)) != ADS_X_ATTR) {
                ok = false;
                break;
            }
            ads_str base = ads_expr_name(ads_expr_arg(r, 0)), nm = ads_expr_name(r);
            if (!same_name(j->jc->alias, base.p, base.len)) {
                ok = false;
                break;
            }
            size_t k;
            for (k = 0; k < nk; k++)
                if (same_name(ads_type_key(j->type, k), nm.p, nm.len))
                    break;
            if (k == nk || probe[k]) {
                ok = false;
                break;
            }
            qjoin self = *j;
            if (mentions_alias(vals[i], &self, 1, (ads_str){"", 0})) {
                ok = false;
                break;
            }
            int rc = ads_expr_prepare(&probe[k], a, vals[i], err);
            if (rc)
                return rc;
        }
        if (ok) {
            j->key_lookup = true;
            j->probe = probe;
            return 0;
        }
    }
    return 0;
}

typedef struct qsel {
    ads_query *q;
    const stmt *st;
    ads_txn *txn;
    const ads_type *type;
    qjoin *joins;
    size_t njoins;
    const ads_expr *post;      /* WHERE conjuncts evaluated after the joins */
    const ads_expr **items;    /* prepared select items */
    const ads_expr **order;    /* prepared ORDER BY */
    ads_value *vals;           /* the current row's select item values (project) */
    bool deleted_visible;
    bool hidden;               /* SELECT * shows _ attributes */
    qgroup *group;
    qcoll *coll;
    const ads_sink *sink;
    uint64_t rows;
    int64_t left;              /* LIMIT still to go without ORDER BY (-1: none) */
    ads_arena *ra;             /* per-row arena */
    ads_q__xcount xc;          /* what each step did (EXPLAIN ANALYZE) */
} qsel;

/* Bind join i (one-to-one) for the current row (rv); false if an INNER
 * join missed. */
static int bind_one(qsel *s, rview *rv, size_t i, bool *keep, ads_error *err)
{
    *keep = true;
    qjoin *j = &s->joins[i];
    j->rec = NULL;
    ads_view view = {&rview_ops, rv, NULL};
    if (j->key_lookup) {
        size_t nk = ads_type_key_count(j->type);
        ads_value keys[16];
        bool usable = true;
        for (size_t k = 0; k < nk; k++) {
            if (ads_expr_eval(&keys[k], j->probe[k], &view, s->ra))
                return ads_error_set(err, ADS_ENOMEM, "out of memory");
            if (keys[k].type == ADS_UNDEFINED || keys[k].type == ADS_ERROR ||
                (keys[k].type == ADS_REAL && keys[k].u.r != keys[k].u.r))
                usable = false;
        }
        ads_row jr;
        int rc = usable ? ads_txn_get(s->txn, &jr, j->type, keys, nk, s->ra, err) : 0;
        if (rc < 0)
            return rc;
        if (rc == 1 && (!jr.deleted || s->deleted_visible)) {
            const ads_record *rec;
            if ((rc = ads_row_record(&rec, &jr, ADS_ROW_TIMELINE, s->ra, err)))
                return rc;
            j->rec = rec;
            rv->bound = i + 1;
            ads_value ok;
            /* TARGET in ON is the row being tried */
            ads_view tv = ads_record_view(rec, NULL);
            if (ads_expr_eval_match(&ok, j->on, &view, &tv, s->ra))
                return ads_error_set(err, ADS_ENOMEM, "out of memory");
            if (!ads_q__truthy(&ok))
                j->rec = NULL;
        }
    } else {
        /* no key to use: the first row of the joined type that satisfies ON */
        ads_scan *sc;
        ads_row *jr;
        int rc = ads_scan_open(&sc, s->txn, j->type, NULL,
                               s->deleted_visible ? ADS_SCAN_DELETED : 0, err);
        if (rc)
            return rc;
        rv->bound = i + 1;
        while ((rc = ads_scan_next(&jr, sc, err)) == 1) {
            const ads_record *rec;
            if ((rc = ads_q__budget(s->q, err)))
                break;
            if ((rc = ads_row_record(&rec, jr, ADS_ROW_TIMELINE, s->ra, err)))
                break;
            j->rec = rec;
            ads_value ok;
            ads_view tv = ads_record_view(rec, NULL);
            if (ads_expr_eval_match(&ok, j->on, &view, &tv, s->ra)) {
                rc = ads_error_set(err, ADS_ENOMEM, "out of memory");
                break;
            }
            if (ads_q__truthy(&ok))
                break;
            j->rec = NULL;
        }
        ads_scan_close(sc);
        if (rc < 0)
            return rc;
    }
    rv->bound = i + 1;
    if (!j->rec && !j->jc->outer) {
        *keep = false;
        return 0;
    }
    return 0;
}

static int finish(qsel *s, rview *rv, ads_error *err);

static int join_from(qsel *s, rview *rv, size_t i, ads_error *err);

/*
 * JOIN ALL (i) without a key lookup: every row of the joined type that
 * satisfies ON goes on, bound, to the joins after it and to the output, one
 * at a time, so memory holds one row tried whatever the product's size: the
 * row tried and everything the rest of the row's run allocates live in the
 * join's arena, reset for the next row. OUTER keeps a row with no match
 * once, the alias undefined.
 */
static int join_all(qsel *s, rview *rv, size_t i, ads_error *err)
{
    qjoin *j = &s->joins[i];
    ads_scan *sc;
    ads_row *jr;
    bool matched = false;
    int rc = ads_scan_open(&sc, s->txn, j->type, NULL, s->deleted_visible ? ADS_SCAN_DELETED : 0,
                           err);
    if (rc)
        return rc;
    ads_arena *outer_ra = s->ra;
    int more;
    rc = 0;
    while ((more = ads_scan_next(&jr, sc, err)) == 1) {
        const ads_record *rec;
        if ((rc = ads_q__budget(s->q, err)))
            break;
        ads_arena_reset(j->ra);
        if ((rc = ads_row_record(&rec, jr, ADS_ROW_TIMELINE, j->ra, err)))
            break;
        j->rec = rec;
        rv->bound = i + 1;
        ads_value ok;
        ads_view view = {&rview_ops, rv, NULL};
        ads_view tv = ads_record_view(rec, NULL);
        if (ads_expr_eval_match(&ok, j->on, &view, &tv, j->ra)) {
            rc = ads_error_set(err, ADS_ENOMEM, "out of memory");
            break;
        }
        if (!ads_q__truthy(&ok))
            continue;
        matched = true;
        s->ra = j->ra;
        rc = join_from(s, rv, i + 1, err);
        s->ra = outer_ra;
        if (rc)
            break; /* an error, or 1: LIMIT reached */
    }
    ads_scan_close(sc);
    j->rec = NULL;
    if (more < 0)
        return more;
    if (rc)
        return rc;
    if (!matched && j->jc->outer) {
        rv->bound = i + 1;
        return join_from(s, rv, i + 1, err);
    }
    return 0;
}

/* The joins from i on, then the output. Returns 1 to stop (LIMIT reached). */
static int join_from(qsel *s, rview *rv, size_t i, ads_error *err)
{
    if (i)
        s->xc.join_out[i - 1]++;
    if (i == s->njoins)
        return finish(s, rv, err);
    if (s->joins[i].jc->all && !s->joins[i].key_lookup)
        return join_all(s, rv, i, err);
    /* a JOIN ALL on the joined type's key finds one row at most: a lookup */
    bool keep;
    int rc = bind_one(s, rv, i, &keep, err);
    if (rc || !keep)
        return rc;
    return join_from(s, rv, i + 1, err);
}

static bool hidden_name(ads_str n)
{
    return n.len && n.p[0] == '_';
}

/* Does r have an attribute SELECT * leaves out? */
static bool has_hidden(const ads_record *r)
{
    for (size_t i = 0; i < ads_record_size(r); i++)
        if (hidden_name(ads_record_name(r, i)))
            return true;
    return false;
}

/* SELECT *'s output row: the stored attributes (those not starting with
 * '_' unless the statement shows them), the record itself when it has
 * nothing to leave out (it lives in s->ra as a copy would). */
static int project_star(qsel *s, rview *rv, ads_record_builder *b, const ads_record **out,
                        ads_error *err)
{
    const ads_record *r = rv->main_rec;
    int rc;
    if (rv->row && (rc = ads_row_record(&r, rv->row, s->hidden ? ADS_ROW_TIMELINE : 0, s->ra, err)))
        return rc;
    if (r && (s->hidden || !has_hidden(r))) {
        *out = r;
        return 0;
    }
    for (size_t i = 0; r && i < ads_record_size(r); i++) {
        ads_str n = ads_record_name(r, i);
        if (!s->hidden && hidden_name(n))
            continue;
        if ((rc = ads_record_builder_add(b, n.p, n.len, ads_record_expr(r, i), err)))
            return rc;
    }
    *out = ads_record_builder_finish(b);
    return 0;
}

/* The output row for the current row: the select items, or the stored
 * attributes for SELECT *. */
static int project(qsel *s, rview *rv, const ads_record **out, ads_error *err)
{
    ads_view view = {&rview_ops, rv, NULL};
    ads_record_builder *b;
    int rc = ads_record_builder_new(&b, s->ra, err);
    if (rc)
        return rc;
    if (s->st->star)
        return project_star(s, rv, b, out, err);
    for (size_t i = 0; i < s->st->nitems; i++) {
        ads_value v;
        if (ads_expr_eval(&v, s->items[i], &view, s->ra))
            return ads_error_set(err, ADS_ENOMEM, "out of memory");
        const sel_item *it = &s->st->items[i];
        s->vals[i] = v;
        if ((rc = ads_record_builder_add_value(b, it->label.p, it->label.len, &v, err)))
            return rc;
    }
    *out = ads_record_builder_finish(b);
    return 0;
}

/* One row from the source: joins, filters, then group / collect / emit.
 * Returns 1 to stop (LIMIT reached). */
static int offer(qsel *s, rview *rv, ads_error *err)
{
    for (size_t i = 0; i < s->njoins; i++)
        s->joins[i].rec = NULL;
    return join_from(s, rv, 0, err);
}

/* A row with its joins bound: filters, then group / collect / emit. */
static int finish(qsel *s, rview *rv, ads_error *err)
{
    int rc;
    ads_view view = {&rview_ops, rv, NULL};
    if (s->post) {
        ads_value ok;
        s->xc.post_in++;
        if (ads_expr_eval(&ok, s->post, &view, s->ra))
            return ads_error_set(err, ADS_ENOMEM, "out of memory");
        if (!ads_q__truthy(&ok))
            return 0;
        s->xc.post_out++;
    }
    if (s->group) {
        s->xc.grouped_in++;
        return ads_q__group_add(s->group, &view, s->ra, err);
    }
    const ads_record *row = NULL;
    if ((rc = project(s, rv, &row, err)))
        return rc;
    if (s->coll) {
        ads_value keys[ADS_MAX_ORDER_BY]; /* the parser allows no more */
        for (size_t i = 0; i < s->st->norder; i++) {
            long it = s->st->order[i].item;
            if (it >= 0)
                keys[i] = s->vals[it]; /* a label: the item's value, as shown */
            else if (ads_expr_eval(&keys[i], s->order[i], &view, s->ra))
                return ads_error_set(err, ADS_ENOMEM, "out of memory");
        }
        s->xc.sorted_in++;
        return ads_q__coll_add(s->coll, row, keys, err);
    }
    if (s->sink && s->sink->row && (rc = s->sink->row(s->sink->ctx, row, err)))
        return rc;
    s->rows++;
    if (s->left > 0 && --s->left == 0)
        return 1;
    return 0;
}

static int emit_to_coll_or_sink(void *ctx, const ads_record *row, const ads_value *keys,
                                ads_error *err)
{
    qsel *s = ctx;
    s->xc.groups++;
    if (s->coll)
        s->xc.sorted_in++;
    return ads_q__emit_row(s->coll, s->sink, &s->rows, &s->left, row, keys, err);
}

/* Rows from a datasource. The WHERE (handed to the datasource, which may use
 * it) is evaluated on each row once, by offer (all of it is s->post). */
static int run_datasource(qsel *s, const ads_datasource *ds, ads_error *err)
{
    void *cur = NULL;
    int rc = ds->open(ds->ctx, s->txn, s->st->where, &cur, err);
    if (rc)
        return rc;
    ads_arena *da = ads_arena_new();
    if (!da) {
        ds->close(cur);
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    }
    for (;;) {
        const ads_record *r;
        ads_arena_reset(da);
        ads_arena_reset(s->ra);
        rc = ds->next(cur, &r, da, err);
        if (rc <= 0)
            break;
        rview rv = {ads_record_view(r, NULL), {"", 0}, NULL, r, s->joins, s->njoins, 0, s->ra};
        s->xc.src.rows++;
        s->xc.src_out++;
        rc = offer(s, &rv, err);
        if (rc)
            break;
    }
    ds->close(cur);
    ads_arena_free(da);
    return rc < 0 ? rc : 0;
}

static int run_rows(qsel *s, ads_row *row, ads_error *err)
{
    int rc = ads_q__budget(s->q, err);
    if (rc)
        return rc;
    ads_arena_reset(s->ra);
    s->xc.src_out++;
    rview rv = {ads_row_view(row, NULL), s->st->alias, row, NULL, s->joins, s->njoins, 0, s->ra};
    return offer(s, &rv, err);
}

/* ---- SELECT without FROM over no attribute: one row ---- */

static int refs_attr_fn(void *ctx, const ads_expr *e)
{
    ads_expr_kind k = ads_expr_kind_of(e);
    if (k == ADS_X_ATTR || k == ADS_X_ROOTATTR) {
        *(bool *)ctx = true;
        return ADS_VISIT_STOP;
    }
    return ADS_VISIT_INTO;
}

static bool refs_attr(const ads_expr *e)
{
    bool found = false;
    if (e)
        ads_expr_visit(e, refs_attr_fn, &found, ADS_VISIT_ANY_ORDER, NULL);
    return found;
}

/* `SELECT 1 + 1 AS two`: no FROM, no USING, no JOIN, no aggregate and no
 * attribute named anywhere: one row, as SQL's SELECT without FROM (with a
 * name, a statement without FROM reads every type's records). */
static bool constant_select(const stmt *st)
{
    if (st->has_from || st->has_using || st->star || st->njoins || st->ngroup ||
        refs_attr(st->where))
        return false;
    for (size_t i = 0; i < st->nitems; i++)
        if (refs_attr(st->items[i].e) || ads_q__has_aggregate(st->items[i].e))
            return false;
    for (size_t i = 0; i < st->norder; i++)
        if (refs_attr(st->order[i].e))
            return false;
    return true;
}

/* A datasource of one empty row. */
typedef struct one_cursor {
    bool given;
} one_cursor;

static int one_open(void *ctx, ads_txn *txn, const ads_expr *where, void **cursor,
                    ads_error *err)
{
    (void)ctx, (void)txn, (void)where;
    one_cursor *c = calloc(1, sizeof *c);
    if (!c)
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    *cursor = c;
    return 0;
}

static int one_next(void *cursor, const ads_record **row, ads_arena *a, ads_error *err)
{
    one_cursor *c = cursor;
    if (c->given)
        return 0;
    ads_record_builder *b;
    int rc = ads_record_builder_new(&b, a, err);
    if (rc)
        return rc;
    *row = ads_record_builder_finish(b);
    c->given = true;
    return 1;
}

static void one_close(void *cursor)
{
    free(cursor);
}

static const ads_datasource one_row = {one_open, one_next, one_close, NULL};

/* ---- the columns of SELECT * over a type ---- */

typedef struct colset {
    ads_str *v;
    size_t n, cap;
} colset;

static int colset_add(colset *cs, ads_str name, ads_arena *a, ads_error *err)
{
    for (size_t i = 0; i < cs->n; i++)
        if (cs->v[i].len == name.len && strncasecmp(cs->v[i].p, name.p, name.len) == 0)
            return 0;
    if (cs->n == cs->cap) {
        size_t cap = cs->cap ? 2 * cs->cap : 32;
        ads_str *m = ads_arena_alloc(a, cap * sizeof *m);
        if (!m)
            return ads_error_set(err, ADS_ENOMEM, "out of memory");
        if (cs->n)
            memcpy(m, cs->v, cs->n * sizeof *m);
        cs->v = m;
        cs->cap = cap;
    }
    char *copy = ads_arena_strndup(a, name.p, name.len);
    if (!copy)
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    cs->v[cs->n++] = (ads_str){copy, name.len};
    return 0;
}

/* Records keep their attributes sorted by case-folded name: so do the
 * columns. */
static int colcmp(const void *x, const void *y)
{
    const ads_str *a = x, *b = y;
    size_t n = a->len < b->len ? a->len : b->len;
    int c = strncasecmp(a->p, b->p, n);
    return c ? c : (a->len > b->len) - (a->len < b->len);
}

/* Every attribute a row of type t can carry, from the type's Attribute
 * records (the engine adds one for each name the type sees), without the
 * hidden ones unless shown, then the timeline attributes when they are. */
static int type_columns(colset *cs, ads_txn *txn, const ads_type *t, bool hidden, ads_arena *a,
                        ads_error *err)
{
    static const char *const timeline[] = {"_Timestamp", "__SystemTimestamp", "__Latest",
                                           "_Deleted"};
    const ads_type *at;
    ads_scan *sc;
    ads_row *row;
    const char *tname = ads_type_name(t);
    int rc = ads_txn_type(&at, txn, "Attribute", 9, err);
    if (rc || (rc = ads_scan_open(&sc, txn, at, NULL, 0, err)))
        return rc;
    while ((rc = ads_scan_next(&row, sc, err)) == 1) {
        const ads_record *r;
        if ((rc = ads_row_record(&r, row, 0, a, err)))
            break;
        const ads_value *ft = ads_expr_literal_value(ads_record_lookup(r, "ForType", 7));
        const ads_value *fn = ads_expr_literal_value(ads_record_lookup(r, "ForName", 7));
        if (!ft || !fn || ft->type != ADS_STRING || fn->type != ADS_STRING ||
            ft->u.s.len != strlen(tname) || strncasecmp(ft->u.s.p, tname, ft->u.s.len) != 0)
            continue;
        if (!hidden && fn->u.s.len && fn->u.s.p[0] == '_')
            continue;
        if ((rc = colset_add(cs, fn->u.s, a, err)))
            break;
    }
    ads_scan_close(sc);
    if (rc < 0)
        return rc;
    if (cs->n)
        qsort(cs->v, cs->n, sizeof *cs->v, colcmp);
    for (size_t i = 0; hidden && i < sizeof timeline / sizeof timeline[0]; i++)
        if ((rc = colset_add(cs, (ads_str){timeline[i], strlen(timeline[i])}, a, err)))
            return rc;
    return 0;
}

/* Tell a sink that wants them the columns of SELECT * FROM a type. */
static int star_columns(qsel *s, const ads_sink *sink, ads_arena *a, ads_error *err)
{
    if (!sink || !sink->columns || !s->st->star || !s->type || s->group)
        return 0;
    colset cs = {NULL, 0, 0};
    int rc = type_columns(&cs, s->txn, s->type, s->hidden, a, err);
    return rc ? rc : sink->columns(sink->ctx, cs.v, cs.n, err);
}

int ads_q__select(ads_query *q, const stmt *st, const ads_sink *sink,
                  const ads_exec_options *opt, ads_exec_info *info, ads_error *err)
{
    qsel s;
    const ads_sink *opt_sink = sink; /* EXPLAIN ANALYZE runs into no sink */
    memset(&s, 0, sizeof s);
    s.q = q;
    s.st = st;
    s.sink = sink;
    s.hidden = opt->hidden;
    s.left = st->norder ? -1 : st->limit;
    ads_arena *a = ads_q__arena(q);
    if (!a || !(s.ra = ads_q__arena(q))) {
        ads_arena_free(a);
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    }
    int rc = ads_q__txn_read(q, &s.txn, err);
    if (rc)
        goto cleanup;

    /* visibility */
    bool mentions_deleted = false, mentions_latest = false;
    for (size_t i = 0; i < st->nitems; i++) {
        mentions_deleted |= ads_q__mentions(st->items[i].e, "_Deleted");
        mentions_latest |= ads_q__mentions(st->items[i].e, "__Latest");
    }
    mentions_deleted |= ads_q__mentions(st->where, "_Deleted");
    mentions_latest |= ads_q__mentions(st->where, "__Latest");
    for (size_t i = 0; i < st->ngroup; i++) {
        mentions_deleted |= ads_q__mentions(st->group[i], "_Deleted");
        mentions_latest |= ads_q__mentions(st->group[i], "__Latest");
    }
    for (size_t i = 0; i < st->norder; i++) {
        mentions_deleted |= ads_q__mentions(st->order[i].e, "_Deleted");
        mentions_latest |= ads_q__mentions(st->order[i].e, "__Latest");
    }
    for (size_t i = 0; i < st->njoins; i++) {
        mentions_deleted |= ads_q__mentions(st->joins[i].on, "_Deleted");
        mentions_latest |= ads_q__mentions(st->joins[i].on, "__Latest");
    }
    s.deleted_visible = mentions_deleted;
    unsigned flags = (mentions_deleted ? ADS_SCAN_DELETED : 0) |
                     (mentions_latest ? ADS_SCAN_HISTORY : 0);

    /* labels must tell the columns apart */
    for (size_t i = 0; i < st->nitems; i++)
        for (size_t j = 0; j < i; j++)
            if (same_name(st->items[i].label, st->items[j].label.p, st->items[j].label.len)) {
                rc = ads_error_set(err, ADS_EINVAL,
                                   "two columns are labelled '%.*s': use AS to tell them apart",
                                   (int)st->items[i].label.len, st->items[i].label.p);
                goto cleanup;
            }

    /* the source */
    const ads_datasource *ds = NULL;
    if (st->has_using) {
        if (!(ds = ads_ds__find(q, st->using_name.p, st->using_name.len))) {
            rc = ads_error_set(err, ADS_ENOTFOUND, "no datasource named %.*s",
                               (int)st->using_name.len, st->using_name.p);
            ads_q__error_at(st, st->using_name, rc, err);
            goto cleanup;
        }
    } else if (constant_select(st)) {
        ds = &one_row;
    } else if (st->has_from) {
        if ((rc = ads_txn_type(&s.type, s.txn, st->type.p, st->type.len, err))) {
            ads_q__error_at(st, st->type, rc, err);
            goto cleanup;
        }
    }
    /* joins */
    if (st->njoins) {
        s.joins = ads_arena_alloc(a, st->njoins * sizeof *s.joins);
        if (!s.joins) {
            rc = ads_error_set(err, ADS_ENOMEM, "out of memory");
            goto cleanup;
        }
        memset(s.joins, 0, st->njoins * sizeof *s.joins);
        s.njoins = st->njoins;
        if (!(s.xc.join_out = ads_arena_alloc(a, st->njoins * sizeof *s.xc.join_out))) {
            rc = ads_error_set(err, ADS_ENOMEM, "out of memory");
            goto cleanup;
        }
        memset(s.xc.join_out, 0, st->njoins * sizeof *s.xc.join_out);
        for (size_t i = 0; i < st->njoins; i++) {
            qjoin *j = &s.joins[i];
            memset(j, 0, sizeof *j);
            j->jc = &st->joins[i];
            if ((rc = ads_txn_type(&j->type, s.txn, j->jc->type.p, j->jc->type.len, err))) {
                /* `JOIN ALL Machine ON` reads as the type ALL with alias Machine */
                if (rc == ADS_ENOTFOUND && ads_q__name_is(j->jc->type, "all"))
                    rc = ads_error_set(err, ADS_ENOTFOUND,
                                       "no type named %.*s: JOIN ALL needs a type and an alias "
                                       "(JOIN ALL Type2 T2 ON ...)",
                                       (int)j->jc->type.len, j->jc->type.p);
                ads_q__error_at(st, j->jc->type, rc, err);
                goto cleanup;
            }
            if ((rc = ads_expr_prepare(&j->on, a, j->jc->on, err)) ||
                (rc = plan_join(j, a, err)))
                goto cleanup;
            if (j->jc->all && !(j->ra = ads_q__arena(q))) {
                rc = ads_error_set(err, ADS_ENOMEM, "out of memory");
                goto cleanup;
            }
        }
    }
    /* WHERE: what the engine can test on stored bytes, and the rest */
    const ads_expr **conj = NULL, *pushed = NULL;
    size_t nconj = 0, capc = 0;
    if (st->where && (rc = conjuncts(st->where, &conj, &nconj, &capc, a, err)))
        goto cleanup;
    {
        const ads_expr **down = ads_arena_alloc(a, (nconj ? nconj : 1) * sizeof *down);
        const ads_expr **up = ads_arena_alloc(a, (nconj ? nconj : 1) * sizeof *up);
        size_t nd = 0, nu = 0;
        if (!down || !up) {
            rc = ads_error_set(err, ADS_ENOMEM, "out of memory");
            goto cleanup;
        }
        for (size_t i = 0; i < nconj; i++) {
            if (!ds && !mentions_alias(conj[i], s.joins, s.njoins, st->alias))
                down[nd++] = conj[i];
            else
                up[nu++] = conj[i];
        }
        if ((rc = and_all(&pushed, down, nd, a, err)) || (rc = and_all(&s.post, up, nu, a, err)))
            goto cleanup;
        if (pushed && (rc = ads_expr_prepare(&pushed, a, pushed, err)))
            goto cleanup;
        if (s.post && (rc = ads_expr_prepare(&s.post, a, s.post, err)))
            goto cleanup;
    }
    /* select items and ORDER BY, prepared */
    s.items = ads_arena_alloc(a, (st->nitems ? st->nitems : 1) * sizeof *s.items);
    s.order = ads_arena_alloc(a, (st->norder ? st->norder : 1) * sizeof *s.order);
    s.vals = ads_arena_alloc(a, (st->nitems ? st->nitems : 1) * sizeof *s.vals);
    if (!s.items || !s.order || !s.vals) {
        rc = ads_error_set(err, ADS_ENOMEM, "out of memory");
        goto cleanup;
    }
    if (st->norder > ADS_MAX_ORDER_BY) {
        rc = ads_error_set(err, ADS_ELIMIT, "at most %d ORDER BY expressions", ADS_MAX_ORDER_BY);
        goto cleanup;
    }
    bool grouped = st->ngroup > 0;
    for (size_t i = 0; i < st->nitems; i++) {
        grouped |= ads_q__has_aggregate(st->items[i].e);
        if ((rc = ads_expr_prepare(&s.items[i], a, st->items[i].e, err)))
            goto cleanup;
    }
    for (size_t i = 0; i < st->norder; i++)
        if ((rc = ads_expr_prepare(&s.order[i], a, st->order[i].e, err)))
            goto cleanup;
    if (grouped && (rc = ads_q__group_plan(&s.group, st, st->group, st->ngroup, a, err)))
        goto cleanup;
    if (st->norder && (rc = ads_q__coll_new(&s.coll, q, st->order, st->norder, st->limit, err)))
        goto cleanup;

    ads_q__iplan ip = {0};
    ads_str none = {"", 0};
    ads_q__xsel x = {st, ds ? NULL : s.type, st->has_using ? st->using_name : none,
                     false, mentions_latest, mentions_deleted, &ip, pushed, s.post, NULL,
                     s.njoins, grouped, NULL};
    if (st->explain) {
        ads_value keys[16];
        bool *jl = ads_arena_alloc(a, (s.njoins ? s.njoins : 1) * sizeof *jl);
        x.join_lookup = jl;
        x.point = !ds && s.type && nconj &&
                  ads_q__pinned_keys(s.type, conj, nconj, st->alias, keys, a);
        for (size_t i = 0; jl && i < s.njoins; i++)
            jl[i] = s.joins[i].key_lookup;
        if (!jl)
            rc = ads_error_set(err, ADS_ENOMEM, "out of memory");
        else if (!st->analyze && x.type && !x.point && !mentions_latest)
            rc = ads_q__plan_index(&ip, q, s.txn, s.type, conj, nconj, st->alias, a, err);
        if (!rc && !st->analyze)
            rc = ads_q__explain(&x, sink, &info->rows, a, err);
        if (rc || !st->analyze)
            goto cleanup;
        /* ANALYZE: run it into no sink, counting, then show the plan */
        s.sink = sink = NULL;
        x.run = &s.xc;
    }
    /* tell the sink its columns */
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
    if ((rc = star_columns(&s, sink, a, err)))
        goto cleanup;

    /* run */
    if (st->limit == 0) {
        /* nothing to return */
    } else if (ds) {
        rc = run_datasource(&s, ds, err);
    } else {
        ads_value keys[16];
        bool point = s.type && !mentions_latest && nconj &&
                     ads_q__pinned_keys(s.type, conj, nconj, st->alias, keys, a);
        bool point_history = s.type && mentions_latest && nconj &&
                             ads_q__pinned_keys(s.type, conj, nconj, st->alias, keys, a);
        if (point || point_history) {
            ads_row row = {0};
            rc = ads_txn_get(s.txn, &row, s.type, keys, ads_type_key_count(s.type), a, err);
            if (rc == 1 && point_history) {
                ads_scan *sc;
                ads_row *r;
                if (!(rc = ads_history_open(&sc, s.txn, &row, pushed, flags, err))) {
                    ads_q__watch(sc, s.q);
                    while ((rc = ads_scan_next(&r, sc, err)) == 1)
                        if ((rc = run_rows(&s, r, err)))
                            break;
                    ads_scan_counts_get(&s.xc.src, sc);
                    ads_scan_close(sc);
                }
            } else if (rc == 1) {
                rc = 0;
                s.xc.src.rows = 1;
                ads_value ok = ads_bool(true);
                ads_view view = ads_row_view(&row, NULL);
                if (row.deleted && !mentions_deleted)
                    ok = ads_bool(false);
                else if (pushed && ads_expr_eval(&ok, pushed, &view, s.ra))
                    rc = ads_error_set(err, ADS_ENOMEM, "out of memory");
                if (!rc && ads_q__truthy(&ok))
                    rc = run_rows(&s, &row, err);
            }
        } else {
            ads_scan *sc;
            ads_row *r;
            if (!(rc = ads_q__open_rows(&sc, &ip, q, s.txn, s.type, conj, nconj, st->alias, pushed,
                                        flags, a, err))) {
                while ((rc = ads_scan_next(&r, sc, err)) == 1)
                    if ((rc = run_rows(&s, r, err)))
                        break;
                ads_scan_counts_get(&s.xc.src, sc);
                ads_scan_close(sc);
            }
        }
        if (rc > 0)
            rc = 0; /* LIMIT reached */
    }
    if (rc < 0)
        goto cleanup;
    if (s.group) {
        s.left = st->norder ? -1 : st->limit;
        if ((rc = ads_q__group_emit(s.group, st, emit_to_coll_or_sink, &s, err)))
            goto cleanup;
    }
    if (s.coll) {
        uint64_t n;
        if ((rc = ads_q__coll_emit(s.coll, sink, &n, err)))
            goto cleanup;
        s.rows = n;
        s.xc.sorted_out = n;
    }
    if (sink && sink->end && (rc = sink->end(sink->ctx, err)))
        goto cleanup;
    info->rows = s.rows;
    s.xc.out = s.rows;
    rc = 0;
    if (x.run)
        rc = ads_q__explain(&x, opt_sink, &info->rows, a, err);
cleanup:
    for (size_t i = 0; i < s.njoins; i++)
        ads_arena_free(s.joins[i].ra);
    ads_q__group_free(s.group);
    ads_q__coll_free(s.coll);
    ads_q__txn_done(q, s.txn);
    ads_arena_free(s.ra);
    ads_arena_free(a);
    return rc;
}
