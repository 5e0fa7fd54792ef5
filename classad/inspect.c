/*
 * classad/inspect.c: a read-only window on expression trees, structural
 * equality, a few constructors, rewriting with sharing, and visiting
 * without recursion down chains of operators. The statement
 * language's planner uses these to find temporal filters and aggregates, to
 * see which attributes a statement mentions, and to replace aggregate calls
 * with the names of their results; it never sees the tree's layout.
 */
#include <stdlib.h>
#include <string.h>

#include "classad/classad_int.h"

/* ---- chains' spines (classad_int.h) ---- */

int ads_spine__grow(ads_spine *s)
{
    /* on the heap, not in an arena: the walk frees it when done, so an
     * evaluation per record does not grow the record's arena */
    size_t cap = s->cap * 2;
    const ads_expr **nodes = s->nodes == s->local ? malloc(cap * sizeof *nodes)
                                                  : realloc(s->nodes, cap * sizeof *nodes);
    if (!nodes)
        return ADS_ENOMEM;
    if (s->nodes == s->local)
        memcpy(nodes, s->local, sizeof s->local);
    s->nodes = nodes;
    s->cap = cap;
    return 0;
}

ads_expr_kind ads_expr_kind_of(const ads_expr *e)
{
    switch ((node_kind)e->kind) {
    case N_LITERAL:
        return ADS_X_LITERAL;
    case N_ATTR:
        return e->scope == SCOPE_ROOT ? ADS_X_ROOTATTR : ADS_X_ATTR;
    case N_SELECT:
        return ADS_X_SELECT;
    case N_INDEX:
        return ADS_X_INDEX;
    case N_UNARY:
        return ADS_X_UNARY;
    case N_BINARY:
        return ADS_X_BINARY;
    case N_AND:
        return ADS_X_AND;
    case N_OR:
        return ADS_X_OR;
    case N_COND:
        return ADS_X_COND;
    case N_ELVIS:
        return ADS_X_ELVIS;
    case N_CALL:
        return ADS_X_CALL;
    case N_LIST:
        return ADS_X_LIST;
    case N_RECORD:
        return ADS_X_RECORD;
    case N_PAREN:
        return ADS_X_PAREN;
    case N_PARAM:
        return ADS_X_PARAM;
    }
    return ADS_X_LITERAL;
}

const char *ads_expr_op(const ads_expr *e)
{
    switch ((node_kind)e->kind) {
    case N_UNARY:
    case N_BINARY:
        return ads_unparse__op_text(e->op);
    case N_AND:
        return "&&";
    case N_OR:
        return "||";
    default:
        return "";
    }
}

ads_str ads_expr_name(const ads_expr *e)
{
    switch ((node_kind)e->kind) {
    case N_ATTR:
        return e->u.attr.name;
    case N_SELECT:
        return e->u.sel.name;
    case N_CALL:
        return e->u.call.name;
    case N_PARAM:
        return e->u.param.name;
    default: {
        ads_str none = {"", 0};
        return none;
    }
    }
}

size_t ads_expr_nargs(const ads_expr *e)
{
    switch ((node_kind)e->kind) {
    case N_SELECT:
    case N_UNARY:
    case N_PAREN:
        return 1;
    case N_INDEX:
    case N_BINARY:
    case N_AND:
    case N_OR:
    case N_ELVIS:
        return 2;
    case N_COND:
        return 3;
    case N_CALL:
        return e->u.call.n;
    case N_LIST:
        return e->u.list.n;
    default:
        return 0;
    }
}

const ads_expr *ads_expr_arg(const ads_expr *e, size_t i)
{
    if (i >= ads_expr_nargs(e))
        return NULL;
    switch ((node_kind)e->kind) {
    case N_SELECT:
        return e->u.sel.base;
    case N_CALL:
        return e->u.call.args[i];
    case N_LIST:
        return e->u.list.items[i];
    default:
        return i == 0 ? e->u.ops.a : i == 1 ? e->u.ops.b : e->u.ops.c;
    }
}

const ads_record *ads_expr_record(const ads_expr *e)
{
    return e->kind == N_RECORD ? e->u.rec : NULL;
}

bool ads_expr_param(const ads_expr *e, ads_str *name, size_t *offset, int *line, int *column)
{
    if (!e || e->kind != N_PARAM)
        return false;
    if (name)
        *name = e->u.param.name;
    if (offset)
        *offset = e->u.param.offset;
    if (line)
        *line = e->u.param.line;
    if (column)
        *column = e->u.param.column;
    return true;
}

bool ads_expr_star(const ads_expr *e)
{
    return e->kind == N_CALL && e->quoted;
}

static bool records_equal(const ads_record *a, const ads_record *b)
{
    if (a->n != b->n)
        return false;
    for (size_t i = 0; i < a->n; i++) {
        long j = ads_record__find(b, a->names[i].p, a->names[i].len, a->hashes[i]);
        if (j < 0 || !ads_expr_equal(a->exprs[i], b->exprs[j]))
            return false;
    }
    return true;
}

bool ads_expr_equal(const ads_expr *a, const ads_expr *b)
{
    /* down a chain's left operands in this loop, recursing only on the
     * right ones (classad_int.h) */
    for (;;) {
        if (a == b)
            return true;
        if (a->kind != b->kind)
            return false;
        switch ((node_kind)a->kind) {
        case N_LITERAL:
            return ads_value_same(&a->u.lit, &b->u.lit);
        case N_ATTR:
            return a->scope == b->scope && ads_name__eq(a->u.attr.name.p, a->u.attr.name.len,
                                                        b->u.attr.name.p, b->u.attr.name.len);
        case N_SELECT:
            return ads_name__eq(a->u.sel.name.p, a->u.sel.name.len, b->u.sel.name.p,
                                b->u.sel.name.len) &&
                   ads_expr_equal(a->u.sel.base, b->u.sel.base);
        case N_RECORD:
            return records_equal(a->u.rec, b->u.rec);
        case N_CALL:
            if (!ads_name__eq(a->u.call.name.p, a->u.call.name.len, b->u.call.name.p,
                              b->u.call.name.len) ||
                a->u.call.n != b->u.call.n || a->quoted != b->quoted)
                return false;
            break;
        case N_BINARY:
        case N_AND:
        case N_OR:
            if (a->op != b->op || !ads_expr_equal(a->u.ops.b, b->u.ops.b))
                return false;
            a = a->u.ops.a;
            b = b->u.ops.a;
            continue;
        case N_UNARY:
            if (a->op != b->op)
                return false;
            break;
        case N_LIST:
            if (a->u.list.n != b->u.list.n)
                return false;
            break;
        default:
            break;
        }
        size_t n = ads_expr_nargs(a);
        for (size_t i = 0; i < n; i++)
            if (!ads_expr_equal(ads_expr_arg(a, i), ads_expr_arg(b, i)))
                return false;
        return true;
    }
}

int ads_expr_new_attr(const ads_expr **out, ads_arena *a, const char *name, size_t len,
                      ads_error *err)
{
    ads_expr *e = ads_arena_alloc(a, sizeof *e);
    char *copy = ads_arena_strndup(a, name, len);
    if (!e || !copy)
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    memset(e, 0, sizeof *e);
    e->kind = N_ATTR;
    e->scope = SCOPE_NORMAL;
    e->u.attr.name.p = copy;
    e->u.attr.name.len = len;
    e->u.attr.hash = ads_name_hash(copy, len);
    *out = e;
    return 0;
}

int ads_expr_new_and(const ads_expr **out, ads_arena *a, const ads_expr *x, const ads_expr *y,
                     ads_error *err)
{
    ads_expr *e = ads_arena_alloc(a, sizeof *e);
    if (!e)
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    memset(e, 0, sizeof *e);
    e->kind = N_AND;
    e->op = OP_AND;
    e->u.ops.a = x;
    e->u.ops.b = y;
    *out = e;
    return 0;
}

typedef struct rw {
    ads_arena *a;
    ads_expr_rewrite_fn fn;
    void *ctx;
    int stop;
    int depth;
} rw;

static const ads_expr *rewrite(rw *w, const ads_expr *e);

static const ads_record *rewrite_record(rw *w, const ads_record *r)
{
    const ads_expr **ex = NULL;
    for (size_t i = 0; i < r->n && !w->stop; i++) {
        const ads_expr *x = rewrite(w, r->exprs[i]);
        if (!x)
            return NULL;
        if (x != r->exprs[i] && !ex) {
            ex = ads_arena_alloc(w->a, r->n * sizeof *ex);
            if (!ex) {
                w->stop = ADS_ENOMEM;
                return NULL;
            }
            memcpy(ex, r->exprs, r->n * sizeof *ex);
        }
        if (ex)
            ex[i] = x;
    }
    if (w->stop)
        return NULL;
    if (!ex)
        return r;
    ads_record *copy = ads_arena_alloc(w->a, sizeof *copy);
    if (!copy) {
        w->stop = ADS_ENOMEM;
        return NULL;
    }
    *copy = *r;
    copy->exprs = (const ads_expr *const *)ex;
    return copy;
}

/* e's arguments rewritten, once fn has seen e and kept it. */
static const ads_expr *rewrite_args(rw *w, const ads_expr *e)
{
    ads_expr *copy = NULL;
    if (e->kind == N_RECORD) {
        const ads_record *rec = rewrite_record(w, e->u.rec);
        if (rec && rec != e->u.rec && (copy = ads_arena_alloc(w->a, sizeof *copy))) {
            *copy = *e;
            copy->u.rec = rec;
        }
        return w->stop ? NULL : copy ? copy : rec ? e : NULL;
    }
    size_t n = ads_expr_nargs(e);
    const ads_expr **args = NULL;
    for (size_t i = 0; i < n; i++) {
        const ads_expr *old = ads_expr_arg(e, i), *x = rewrite(w, old);
        if (!x)
            return NULL;
        if (x != old && !args) {
            args = ads_arena_alloc(w->a, n * sizeof *args);
            if (!args) {
                w->stop = ADS_ENOMEM;
                return NULL;
            }
            for (size_t j = 0; j < n; j++)
                args[j] = ads_expr_arg(e, j);
        }
        if (args)
            args[i] = x;
    }
    if (!args)
        return e;
    if (!(copy = ads_arena_alloc(w->a, sizeof *copy))) {
        w->stop = ADS_ENOMEM;
        return NULL;
    }
    *copy = *e;
    switch ((node_kind)e->kind) {
    case N_SELECT:
        copy->u.sel.base = args[0];
        break;
    case N_CALL:
        copy->u.call.args = (const ads_expr *const *)args;
        break;
    case N_LIST:
        copy->u.list.items = (const ads_expr *const *)args;
        break;
    default:
        copy->u.ops.a = args[0];
        copy->u.ops.b = n > 1 ? args[1] : NULL;
        copy->u.ops.c = n > 2 ? args[2] : NULL;
        break;
    }
    return copy;
}

static const ads_expr *rewrite(rw *w, const ads_expr *e)
{
    if (w->stop)
        return NULL;
    if (++w->depth > ADS_MAX_DEPTH) {
        w->stop = ADS_ELIMIT;
        return NULL;
    }
    /* fn sees a chain's operators top down before any operand, as a
     * recursive walk would show them; the spine is then rebuilt bottom up,
     * each operator after its left operand, recursing only on right ones */
    ads_spine s;
    ads_spine__init(&s);
    const ads_expr *x = e, *cur;
    for (;;) {
        cur = w->fn(w->ctx, x, &w->stop);
        if (cur || w->stop || !ads_expr__is_binop(x))
            break;
        if (ads_spine__push(&s, x)) {
            w->stop = ADS_ENOMEM;
            break;
        }
        x = x->u.ops.a;
    }
    if (!cur && !w->stop)
        cur = rewrite_args(w, x);
    for (size_t i = s.n; i-- > 0 && cur && !w->stop;) {
        const ads_expr *op = s.nodes[i], *b = rewrite(w, op->u.ops.b);
        if (!b) {
            cur = NULL;
            break;
        }
        if (cur == op->u.ops.a && b == op->u.ops.b) {
            cur = op;
            continue;
        }
        ads_expr *copy = ads_arena_alloc(w->a, sizeof *copy);
        if (!copy) {
            w->stop = ADS_ENOMEM;
            cur = NULL;
            break;
        }
        *copy = *op;
        copy->u.ops.a = cur;
        copy->u.ops.b = b;
        cur = copy;
    }
    ads_spine__free(&s);
    w->depth--;
    return w->stop ? NULL : cur;
}

/* ---- what an expression depends on ---- */

typedef struct refs {
    ads_str *names;
    size_t cap, n;
    bool plain;
} refs;

/* A name a record may lack and still give a value (eval.c's special_of). */
static bool special_name(ads_str n)
{
    static const char *const special[] = {"self", "my",     "parent",     "root",
                                          "toplevel", "target", "currenttime"};
    for (size_t i = 0; i < sizeof special / sizeof special[0]; i++)
        if (ads_name__eq(n.p, n.len, special[i], strlen(special[i])))
            return true;
    return false;
}

static int refs_at(void *ctx, const ads_expr *e)
{
    refs *r = ctx;
    switch ((node_kind)e->kind) {
    case N_ATTR: {
        ads_str nm = e->u.attr.name;
        if (e->scope != SCOPE_NORMAL || special_name(nm))
            break;
        for (size_t i = 0; i < r->n; i++)
            if (ads_name__eq(r->names[i].p, r->names[i].len, nm.p, nm.len))
                return ADS_VISIT_SKIP;
        if (r->n == r->cap)
            break;
        r->names[r->n++] = nm;
        return ADS_VISIT_SKIP;
    }
    case N_SELECT:
    case N_RECORD:
    case N_PARAM:
        break;
    case N_CALL:
        if (!ads_expr__pure_call(e))
            break;
        return ADS_VISIT_INTO;
    default:
        return ADS_VISIT_INTO;
    }
    r->plain = false;
    return ADS_VISIT_STOP;
}

int ads_expr_plain_refs(ads_str *names, size_t cap, size_t *n, const ads_expr *e)
{
    refs r = {names, cap, 0, true};
    *n = 0;
    if (!e)
        return 0;
    /* in the order written, so that names come as first written; the walk
     * can only fail for memory, and then e is taken to depend on more */
    if (ads_expr_visit(e, refs_at, &r, 0, NULL) || !r.plain)
        return 0;
    *n = r.n;
    return 1;
}

/* ---- visiting ---- */

/* ADS_VISIT_ANY_ORDER: a node, its arguments after the first (recursing:
 * the parsers bound that nesting), then its first argument in the loop, as
 * that is where a chain, or a.b.c, grows. 1 when the walk is to end (*rc
 * then holds 0 or fn's code). */
static int visit_any(const ads_expr *e, ads_expr_visit_fn fn, void *ctx, int *rc)
{
    for (;;) {
        int r = fn(ctx, e);
        if (r < 0 || r == ADS_VISIT_STOP) {
            *rc = r < 0 ? r : 0;
            return 1;
        }
        size_t n = ads_expr_nargs(e);
        if (r == ADS_VISIT_SKIP || n == 0)
            return 0;
        for (size_t i = 1; i < n; i++)
            if (visit_any(ads_expr_arg(e, i), fn, ctx, rc))
                return 1;
        e = ads_expr_arg(e, 0);
    }
}

int ads_expr_visit(const ads_expr *e, ads_expr_visit_fn fn, void *ctx, unsigned flags,
                   ads_error *err)
{
    int rc = 0;
    if (!e || !fn)
        return ads_error_set(err, ADS_EINVAL, "visit: NULL argument");
    if (flags & ADS_VISIT_ANY_ORDER) {
        visit_any(e, fn, ctx, &rc);
        return rc;
    }
    /* the nodes still to visit, the next on top: a node's arguments are
     * pushed last to first so that argument 0 comes off first */
    ads_spine todo;
    ads_spine__init(&todo);
    todo.nodes[todo.n++] = e;
    while (todo.n) {
        const ads_expr *x = todo.nodes[--todo.n];
        int r = fn(ctx, x);
        if (r < 0 || r == ADS_VISIT_STOP) {
            rc = r < 0 ? r : 0;
            break;
        }
        if (r == ADS_VISIT_SKIP)
            continue;
        for (size_t i = ads_expr_nargs(x); i-- > 0 && !rc;)
            if (ads_spine__push(&todo, ads_expr_arg(x, i)))
                rc = ads_error_set(err, ADS_ENOMEM, "visit: out of memory");
        if (rc)
            break;
    }
    ads_spine__free(&todo);
    return rc;
}

int ads_expr_rewrite(const ads_expr **out, ads_arena *a, const ads_expr *e, ads_expr_rewrite_fn fn,
                     void *ctx, ads_error *err)
{
    if (!out || !a || !e || !fn)
        return ads_error_set(err, ADS_EINVAL, "rewrite: NULL argument");
    rw w = {a, fn, ctx, 0, 0};
    const ads_expr *r = rewrite(&w, e);
    if (w.stop || !r) {
        int code = w.stop ? w.stop : ADS_ENOMEM;
        if (code == ADS_ELIMIT)
            return ads_error_set(err, code, "rewrite: expression nested too deep");
        if (code == ADS_ENOMEM)
            return ads_error_set(err, code, "rewrite: out of memory");
        return code; /* the callback's own error, already reported */
    }
    *out = r;
    return 0;
}
