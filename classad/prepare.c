/*
 * classad/prepare.c: preparing an expression for many evaluations. The
 * parser already hashes names and resolves functions; preparing also folds
 * every subexpression that reads no attribute and calls only pure functions
 * into one literal, and drops the parentheses nodes that only unparse needs.
 * The result is a new immutable tree in the caller's arena, safe to evaluate
 * from many threads at once (each with its own arena); its root carries the
 * flat program evaluation runs instead of walking the top of the tree.
 */
#include <string.h>

#include "classad/classad_int.h"

/* Built-ins whose result depends only on their arguments (never on the
 * clock, randomness, the process's zone or the record). */
static const char *const pure_functions[] = {
    "isUndefined", "isError",   "isString",  "isInteger", "isReal",   "isBoolean",
    "isList",      "isClassAd", "isAbsTime", "isRelTime", "isIdentifier", "isBlob",
    "int",         "real",      "string",    "bool",      "id",       "relTime",
    "size",        "strcat",    "substr",    "toUpper",   "toLower",  "strcmp",
    "stricmp",     "floor",     "ceiling",   "ceil",      "round",    "pow",
    "member",      "identicalMember", "sum", "avg",       "min",      "max",
    "join",        "versioncmp", "regexp",   "blob",      "ifThenElse", "quantize",
    "split",       "versionGT", "versionGE", "versionLT", "versionLE", "versionEQ",
    "version_in_range", "stringListsIntersect", "stringListSize", "stringListSum",
    "stringListAvg", "stringListMin", "stringListMax", "stringListMember",
    "stringListIMember", "stringListSubsetMatch", "stringListISubsetMatch",
    "stringList_regexpMember", "regexpMember", "regexps", "replace", "replaceAll",
    "anyCompare", "allCompare", "splitUserName", "splitSlotName", "argsToList", "listToArgs",
    "envV1ToV2", "mergeEnvironment", "userHome", "userMap",
};

bool ads_expr__pure_call(const ads_expr *call)
{
    if (!call->u.call.fn)
        return true; /* an unknown function is always error */
    const char *name = call->u.call.fn->name;
    for (size_t i = 0; i < sizeof pure_functions / sizeof pure_functions[0]; i++)
        if (strcmp(pure_functions[i], name) == 0)
            return true;
    return false;
}

typedef struct prep {
    ads_arena *arena;
    ads_error *err;
    int depth;
} prep;

static int prepare(prep *p, const ads_expr *e, const ads_expr **out, bool *constant);

static ads_expr *copy_node(prep *p, const ads_expr *e)
{
    ads_expr *n = ads_arena_alloc(p->arena, sizeof *n);
    if (n)
        *n = *e;
    return n;
}

/* A new literal node holding the value of constant expression n. n itself
 * stays as it is: a list value keeps it as its source (string() shows it). */
static int fold(prep *p, const ads_expr *n, const ads_expr **out)
{
    ads_value v;
    ads_expr *lit = ads_arena_alloc(p->arena, sizeof *lit);
    if (!lit || ads_expr_eval(&v, n, NULL, p->arena))
        return ads_error_set(p->err, ADS_ENOMEM, "prepare: out of memory");
    memset(lit, 0, sizeof *lit);
    lit->kind = N_LITERAL;
    lit->u.lit = v;
    *out = lit;
    return 0;
}

static int prepare_children(prep *p, const ads_expr *const *in, size_t n,
                            const ads_expr ***out, bool *all_constant)
{
    const ads_expr **items = ads_arena_alloc(p->arena, (n ? n : 1) * sizeof *items);
    if (!items)
        return ads_error_set(p->err, ADS_ENOMEM, "prepare: out of memory");
    *all_constant = true;
    for (size_t i = 0; i < n; i++) {
        bool c;
        int rc = prepare(p, in[i], &items[i], &c);
        if (rc)
            return rc;
        *all_constant = *all_constant && c;
    }
    *out = items;
    return 0;
}

/* A chain of binary operators (classad_int.h) in a loop: the leftmost
 * operand, then each operator up the spine, copied with its prepared
 * operands and folded as soon as both are constant, as the recursion over
 * ((a op b) op c) would. *out is e's prepared form, folded if constant. */
static int prepare_chain(prep *p, const ads_expr *e, const ads_expr **out, bool *constant)
{
    ads_spine s;
    int rc = 0;
    ads_spine__init(&s);
    const ads_expr *x = e, *cur;
    for (; ads_expr__is_binop(x); x = x->u.ops.a)
        if (ads_spine__push(&s, x)) {
            rc = ads_error_set(p->err, ADS_ENOMEM, "prepare: out of memory");
            goto cleanup;
        }
    bool c;
    if ((rc = prepare(p, x, &cur, &c)))
        goto cleanup;
    for (size_t i = s.n; i-- > 0;) {
        bool cb;
        ads_expr *n = copy_node(p, s.nodes[i]);
        if (!n) {
            rc = ads_error_set(p->err, ADS_ENOMEM, "prepare: out of memory");
            goto cleanup;
        }
        n->u.ops.a = cur;
        if ((rc = prepare(p, s.nodes[i]->u.ops.b, &n->u.ops.b, &cb)))
            goto cleanup;
        c = c && cb;
        cur = n;
        /* the top one is folded by prepare(), as every node is */
        if (c && i > 0 && (rc = fold(p, n, &cur)))
            goto cleanup;
    }
    *out = cur;
    *constant = c;
cleanup:
    ads_spine__free(&s);
    return rc;
}

/* Does v.name give the same value in every scope? Not when a record lacks
 * name or holds an expression for it. */
static bool record_has_literal(const ads_record *r, ads_str name, uint32_t hash)
{
    long i = ads_record__find(r, name.p, name.len, hash);
    return i >= 0 && r->exprs[i]->kind == N_LITERAL;
}

static bool select_is_closed(const ads_value *v, ads_str name, uint32_t hash)
{
    if (v->type == ADS_RECORD)
        return record_has_literal(v->u.rec, name, hash);
    if (v->type == ADS_LIST)
        for (size_t i = 0; i < v->u.list.n; i++)
            if (v->u.list.items[i].type == ADS_RECORD &&
                !record_has_literal(v->u.list.items[i].u.rec, name, hash))
                return false;
    return true;
}

static int prepare(prep *p, const ads_expr *e, const ads_expr **out, bool *constant)
{
    int rc;
    bool ca = true, cb = true, cc = true;
    if (++p->depth > ADS_MAX_DEPTH)
        return ads_error_set(p->err, ADS_ELIMIT, "prepare: expression nested deeper than %d",
                             ADS_MAX_DEPTH);
    ads_expr *n;
    switch ((node_kind)e->kind) {
    case N_LITERAL:
        *out = e;
        *constant = true;
        break;
    case N_ATTR:
        *out = e;
        *constant = false;
        break;
    case N_RECORD:
        /* members are evaluated in the record's own scope: leave as is */
        *out = e;
        *constant = false;
        break;
    case N_PAREN:
        rc = prepare(p, e->u.ops.a, out, constant);
        if (rc)
            return rc;
        break;
    case N_SELECT:
        if (!(n = copy_node(p, e)))
            return ads_error_set(p->err, ADS_ENOMEM, "prepare: out of memory");
        if ((rc = prepare(p, e->u.sel.base, &n->u.sel.base, &ca)))
            return rc;
        /* self.x, parent.x and the like depend on the scope, and so does
         * a name a literal record lacks (it is looked up in the records
         * enclosing it) */
        *constant = ca && n->u.sel.base->kind == N_LITERAL &&
                    select_is_closed(&n->u.sel.base->u.lit, e->u.sel.name, e->u.sel.hash);
        *out = n;
        break;
    case N_BINARY:
    case N_AND:
    case N_OR:
        if ((rc = prepare_chain(p, e, out, constant)))
            return rc;
        break;
    case N_UNARY:
    case N_INDEX:
    case N_COND:
    case N_ELVIS:
        if (!(n = copy_node(p, e)))
            return ads_error_set(p->err, ADS_ENOMEM, "prepare: out of memory");
        if ((rc = prepare(p, e->u.ops.a, &n->u.ops.a, &ca)))
            return rc;
        if (e->u.ops.b && (rc = prepare(p, e->u.ops.b, &n->u.ops.b, &cb)))
            return rc;
        if (e->u.ops.c && (rc = prepare(p, e->u.ops.c, &n->u.ops.c, &cc)))
            return rc;
        *constant = ca && cb && cc;
        *out = n;
        break;
    case N_CALL: {
        if (!(n = copy_node(p, e)))
            return ads_error_set(p->err, ADS_ENOMEM, "prepare: out of memory");
        const ads_expr **args;
        if ((rc = prepare_children(p, e->u.call.args, e->u.call.n, &args, &ca)))
            return rc;
        n->u.call.args = args;
        *constant = ca && ads_expr__pure_call(e);
        *out = n;
        break;
    }
    case N_LIST: {
        /* A list value shows its source expression in string(), so a list is
         * either folded whole from its original text or left as written. */
        const ads_expr **items;
        if ((rc = prepare_children(p, e->u.list.items, e->u.list.n, &items, &ca)))
            return rc;
        *constant = ca;
        *out = e;
        break;
    }
    default:
        *out = e;
        *constant = false;
    }
    p->depth--;
    if (*constant && (*out)->kind != N_LITERAL)
        return fold(p, *out, out);
    return 0;
}

/* Give the prepared root its flat program (classad/program.c), on a copy
 * of the root node so that no node of the caller's tree changes. Without
 * one (not worth it, too big, no memory) the tree is evaluated as it is. */
static void attach_program(ads_arena *a, const ads_expr **out)
{
    const ads_expr *e = *out;
    if (!ads_expr__is_binop(e) && e->kind != N_UNARY)
        return;
    ads_expr *root = ads_arena_alloc(a, sizeof *root);
    if (!root)
        return;
    *root = *e;
    root->u.ops.prog = ads_prog__compile(a, root);
    if (root->u.ops.prog)
        *out = root;
}

int ads_expr_prepare(const ads_expr **out, ads_arena *a, const ads_expr *e, ads_error *err)
{
    prep p = {a, err, 0};
    bool constant;
    if (!out || !a || !e)
        return ads_error_set(err, ADS_EINVAL, "prepare: NULL argument");
    int rc = prepare(&p, e, out, &constant);
    if (rc == 0)
        attach_program(a, out);
    return rc;
}
