/*
 * classad/eval.c: evaluation (shared/spec/classad.md sections 3 to 5).
 *
 * A tree walk over immutable expressions. Attributes are read through record
 * views, so the same code runs over in-memory records and stored bytes.
 * Evaluation is eager: a list or record expression evaluates to the list or
 * record of its evaluated members. Cycles are caught with a small stack of
 * the attributes being evaluated, and depth is bounded; both give error, as
 * does running out of memory (which the caller also hears about).
 */
#include <math.h>
#include <string.h>

#include "classad/classad_int.h"

static inline ads_value error_value(void)
{
    return ads_errorv();
}

void *ads_eval__alloc(ads_eval_ctx *cx, size_t n)
{
    void *p = ads_arena_alloc(cx->arena, n);
    if (!p)
        cx->oom = true;
    return p;
}

/* ---- truth values for && || ! ?: ---- */

static ads_value from_truth(ads_truth t)
{
    switch (t) {
    case ADS_T_FALSE:
        return ads_bool(false);
    case ADS_T_TRUE:
        return ads_bool(true);
    case ADS_T_UNDEF:
        return ads_undefined();
    default:
        return error_value();
    }
}

/* ---- arithmetic and comparison ---- */

static bool is_time(const ads_value *v)
{
    return v->type == ADS_ABSTIME || v->type == ADS_RELTIME;
}

/* A time that cannot be written so that it reads back (beyond the year
 * 9999, NaN, infinite) is error: every value prints as text that parses
 * back equal (spec section 7). */
static void check_time(ads_value *v)
{
    if ((v->type == ADS_ABSTIME && !ads_time__abs_ok(v->u.abs.secs, v->u.abs.offset)) ||
        (v->type == ADS_RELTIME && !ads_time__rel_ok(v->u.rel)))
        *v = error_value();
}

/* Time arithmetic (section 3): Abs+Rel, Rel+Abs, Abs-Abs, Abs-Rel, Rel+-Rel,
 * Rel*num, num*Rel, Rel/num. Anything else with a time is error. */
static ads_value time_arith(op_kind op, const ads_value *a, const ads_value *b)
{
    int64_t i;
    double r;
    /* an AbsTime moves by whole seconds: the RelTime is truncated (HTCondor) */
    if (a->type == ADS_ABSTIME && b->type == ADS_RELTIME && (op == OP_ADD || op == OP_SUB))
        return ads_abstime(op == OP_ADD ? a->u.abs.secs + trunc(b->u.rel)
                                        : a->u.abs.secs - trunc(b->u.rel),
                           a->u.abs.offset);
    if (a->type == ADS_RELTIME && b->type == ADS_ABSTIME && op == OP_ADD)
        return ads_abstime(b->u.abs.secs + trunc(a->u.rel), b->u.abs.offset);
    if (a->type == ADS_ABSTIME && b->type == ADS_ABSTIME && op == OP_SUB)
        return ads_reltime(a->u.abs.secs - b->u.abs.secs);
    if (a->type == ADS_RELTIME && b->type == ADS_RELTIME && (op == OP_ADD || op == OP_SUB))
        return ads_reltime(op == OP_ADD ? a->u.rel + b->u.rel : a->u.rel - b->u.rel);
    if (a->type == ADS_RELTIME && (op == OP_MUL || op == OP_DIV) &&
        b->type != ADS_BOOLEAN && ads_value__number(b, &i, &r)) {
        if (op == OP_MUL)
            return ads_reltime(a->u.rel * r);
        if (r == 0)
            return error_value();
        return ads_reltime(a->u.rel / r);
    }
    if (b->type == ADS_RELTIME && op == OP_MUL && a->type != ADS_BOOLEAN &&
        ads_value__number(a, &i, &r))
        return ads_reltime(b->u.rel * r);
    return error_value();
}

/* A real result of + - * /: error when it overflowed to +infinity, as
 * HTCondor's check of the result against HUGE_VAL makes it (-infinity and
 * NaN stay what they are there too). */
static ads_value real_result(double r)
{
    return isinf(r) && r > 0 ? error_value() : ads_real(r);
}

static ads_value arith(op_kind op, const ads_value *a, const ads_value *b)
{
    int64_t ia, ib;
    double ra, rb;
    if (is_time(a) || is_time(b)) {
        ads_value t = time_arith(op, a, b);
        check_time(&t);
        return t;
    }
    int na = ads_value__number(a, &ia, &ra), nb = ads_value__number(b, &ib, &rb);
    if (!na || !nb)
        return error_value();
    if (na == 1 && nb == 1) {
        /* two's complement wrap, without undefined behaviour */
        uint64_t x = (uint64_t)ia, y = (uint64_t)ib;
        switch (op) {
        case OP_ADD:
            return ads_int((int64_t)(x + y));
        case OP_SUB:
            return ads_int((int64_t)(x - y));
        case OP_MUL:
            return ads_int((int64_t)(x * y));
        case OP_DIV:
            if (ib == 0)
                return error_value();
            if (ia == INT64_MIN && ib == -1)
                return ads_int(INT64_MIN);
            return ads_int(ia / ib);
        case OP_MOD:
            if (ib == 0)
                return error_value();
            if (ib == -1)
                return ads_int(0);
            return ads_int(ia % ib);
        default:
            return error_value();
        }
    }
    switch (op) {
    case OP_ADD:
        return real_result(ra + rb);
    case OP_SUB:
        return real_result(ra - rb);
    case OP_MUL:
        return real_result(ra * rb);
    case OP_DIV:
        if (rb == 0)
            return error_value();
        return real_result(ra / rb);
    default: /* % on reals */
        return error_value();
    }
}

/* -2: not comparable (error), -3: identifier against another type
 * (undefined); else -1, 0, 1; 2 for unordered reals (NaN). */
static int compare(const ads_value *a, const ads_value *b)
{
    int64_t ia, ib;
    double ra, rb;
    int na = ads_value__number(a, &ia, &ra), nb = ads_value__number(b, &ib, &rb);
    if (na && nb) {
        if (na == 1 && nb == 1)
            return ia < ib ? -1 : ia > ib;
        if (isnan(ra) || isnan(rb))
            return 2;
        return ra < rb ? -1 : ra > rb;
    }
    if (a->type == ADS_IDENT || b->type == ADS_IDENT) {
        if (a->type != b->type)
            return -3;
        return ads_id_cmp(a->u.id, b->u.id);
    }
    if (a->type != b->type)
        return -2;
    switch (a->type) {
    case ADS_STRING:
        return ads_value__strcmp_fold(a->u.s, b->u.s);
    case ADS_ABSTIME:
        return a->u.abs.secs < b->u.abs.secs ? -1 : a->u.abs.secs > b->u.abs.secs;
    case ADS_RELTIME:
        return a->u.rel < b->u.rel ? -1 : a->u.rel > b->u.rel;
    default:
        return -2;
    }
}

static ads_value relational(op_kind op, const ads_value *a, const ads_value *b)
{
    int c = compare(a, b);
    if (c == -2)
        return error_value();
    if (c == -3)
        return ads_undefined();
    if (c == 2) /* NaN: only != holds */
        return ads_bool(op == OP_NE);
    switch (op) {
    case OP_LT:
        return ads_bool(c < 0);
    case OP_LE:
        return ads_bool(c <= 0);
    case OP_GT:
        return ads_bool(c > 0);
    case OP_GE:
        return ads_bool(c >= 0);
    case OP_EQ:
        return ads_bool(c == 0);
    default: /* OP_NE */
        return ads_bool(c != 0);
    }
}

static ads_value bitwise(op_kind op, const ads_value *a, const ads_value *b)
{
    if (a->type != ADS_INTEGER || b->type != ADS_INTEGER)
        return error_value();
    uint64_t x = (uint64_t)a->u.i;
    int64_t y = b->u.i;
    switch (op) {
    case OP_BITAND:
        return ads_int((int64_t)(x & (uint64_t)y));
    case OP_BITOR:
        return ads_int((int64_t)(x | (uint64_t)y));
    case OP_BITXOR:
        return ads_int((int64_t)(x ^ (uint64_t)y));
    default:
        break;
    }
    if (y < 0 || y > 63)
        return error_value();
    switch (op) {
    case OP_SHL:
        return ads_int((int64_t)(x << y));
    case OP_USHR:
        return ads_int((int64_t)(x >> y));
    default: /* OP_SHR: arithmetic */
        return ads_int(a->u.i < 0 ? (int64_t)~(~x >> y) : (int64_t)(x >> y));
    }
}

void ads_eval__binary(ads_value *out, ads_eval_ctx *cx, op_kind op, const ads_value *a,
                      const ads_value *b)
{
    (void)cx;
    switch (op) {
    case OP_IS:
        *out = ads_bool(ads_value_is(a, b));
        return;
    case OP_ISNT:
        *out = ads_bool(!ads_value_is(a, b));
        return;
    case OP_EQUIV:
        *out = ads_bool(ads_value_equiv(a, b));
        return;
    case OP_IN:
        if (b->type == ADS_UNDEFINED) {
            *out = ads_undefined();
        } else if (b->type != ADS_LIST) {
            *out = error_value();
        } else {
            *out = ads_bool(false);
            for (size_t i = 0; i < b->u.list.n; i++)
                if (ads_value_equiv(a, &b->u.list.items[i])) {
                    *out = ads_bool(true);
                    break;
                }
        }
        return;
    default:
        break;
    }
    /* the strict operators */
    if (a->type == ADS_ERROR || b->type == ADS_ERROR) {
        *out = error_value();
        return;
    }
    if (a->type == ADS_UNDEFINED || b->type == ADS_UNDEFINED) {
        *out = ads_undefined();
        return;
    }
    switch (op) {
    case OP_ADD: case OP_SUB: case OP_MUL: case OP_DIV: case OP_MOD:
        *out = arith(op, a, b);
        return;
    case OP_LT: case OP_LE: case OP_GT: case OP_GE: case OP_EQ: case OP_NE:
        *out = relational(op, a, b);
        return;
    case OP_BITAND: case OP_BITOR: case OP_BITXOR: case OP_SHL: case OP_SHR: case OP_USHR:
        *out = bitwise(op, a, b);
        return;
    default:
        *out = error_value();
    }
}

static ads_value unary(op_kind op, const ads_value *a);

void ads_eval__unary(ads_value *out, op_kind op, const ads_value *a)
{
    *out = unary(op, a);
}

static ads_value unary(op_kind op, const ads_value *a)
{
    if (a->type == ADS_ERROR)
        return error_value();
    if (a->type == ADS_UNDEFINED)
        return ads_undefined();
    switch (op) {
    case OP_NEG:
        if (a->type == ADS_INTEGER)
            return ads_int((int64_t)(0 - (uint64_t)a->u.i));
        if (a->type == ADS_REAL)
            return ads_real(-a->u.r);
        if (a->type == ADS_RELTIME)
            return ads_reltime(-a->u.rel);
        return error_value();
    case OP_PLUS:
        if (a->type == ADS_INTEGER || a->type == ADS_REAL || a->type == ADS_RELTIME)
            return *a;
        return error_value();
    case OP_BITNOT:
        if (a->type == ADS_INTEGER)
            return ads_int(~a->u.i);
        return error_value();
    default: { /* OP_NOT */
        ads_truth t = ads_truth__of(a);
        if (t == ADS_T_TRUE)
            return ads_bool(false);
        if (t == ADS_T_FALSE)
            return ads_bool(true);
        return error_value();
    }
    }
}

/* ---- attribute lookup through the scopes ---- */

static int empty_lookup(const void *self, const char *name, size_t len, uint32_t hash,
                        ads_arena *arena, ads_value *value, const ads_expr **expr)
{
    (void)self, (void)name, (void)len, (void)hash, (void)arena, (void)value, (void)expr;
    return 0;
}

static const ads_view_ops empty_ops = {empty_lookup};

/* Evaluate attribute expression x found in view v, unless it is already being
 * evaluated there (a cycle: error). */
static void eval_found(ads_value *out, ads_eval_ctx *cx, const ads_view *v, const ads_expr *x)
{
    for (int i = 0; i < cx->nactive; i++)
        if (cx->active[i].self == v->self && cx->active[i].expr == x) {
            *out = error_value();
            return;
        }
    if (cx->nactive >= ADS_MAX_DEPTH || ++cx->attr_evals > ADS_MAX_ATTR_EVALS) {
        *out = error_value();
        return;
    }
    cx->active[cx->nactive].self = v->self;
    cx->active[cx->nactive].expr = x;
    cx->nactive++;
    ads_eval__expr(out, cx, x, v);
    cx->nactive--;
}

/* What a view's lookup found (r > 0: *val or x) made the attribute's value,
 * as lookup_in describes; r < 0 (corrupt bytes, memory) is an error value. */
static int found_in(ads_value *out, ads_eval_ctx *cx, const ads_view *v, int r,
                    const ads_value *val, const ads_expr *x, const ads_record **lazy)
{
    if (r < 0) {
        /* corrupt bytes are an error value; running out of memory decoding
         * them is also the caller's to hear (ads_expr_eval's ADS_ENOMEM) */
        if (r == ADS_ENOMEM)
            cx->oom = true;
        *out = error_value();
        return 1;
    }
    if (r == 0)
        return 0;
    if (x && lazy && x->kind == N_RECORD)
        *lazy = x->u.rec;
    else if (x)
        eval_found(out, cx, v, x);
    else
        *out = *val;
    return r == ADS_VIEW_DETACHED ? 2 : 1;
}

/*
 * Look name up in view v only: 0 absent; 1 found, value in *out; 2 found, a
 * record that stands alone (ADS_VIEW_DETACHED: a join partner, not nested in
 * v). With lazy set, an attribute whose expression is a record written in
 * place is not evaluated: *lazy receives the record (and *out is untouched),
 * so a selection reads only the member it needs. hint (or NULL) is the
 * name's index hint (ads_record__find_hinted), for the two views of this
 * module, which are called directly.
 */
static int lookup_in(ads_value *out, ads_eval_ctx *cx, const ads_view *v, ads_str name,
                     uint32_t hash, const ads_record **lazy, _Atomic uint32_t *hint)
{
    ads_value val;
    const ads_expr *x = NULL;
    struct ads_msgpack_view *mv;
    int r;
    if (v->ops == &ads_record__view_ops) {
        /* in-memory records: literals straight out */
        const ads_record *rec = v->self;
        long i = ads_record__find_hinted(rec, name.p, name.len, hash, hint);
        if (i < 0)
            return 0;
        x = rec->exprs[i];
        if (x->kind == N_LITERAL) {
            *out = x->u.lit;
            return 1;
        }
        r = 1;
    } else if (v->ops == &ads_msgpack__view_ops) {
        r = ads_msgpack__lookup(&val, &x, (struct ads_msgpack_view *)v->self, name.p, name.len,
                                hint, NULL);
    } else if (v->ops->data && (mv = v->ops->data(v->self, name.p, name.len)) != NULL) {
        r = ads_msgpack__lookup(&val, &x, mv, name.p, name.len, hint, NULL);
    } else {
        r = v->ops->lookup(v->self, name.p, name.len, hash, cx->arena, &val, &x);
    }
    return found_in(out, cx, v, r, &val, x, lazy);
}

/* The names with a meaning of their own when the record holding the
 * expression does not define them (HTCondor's LookupInScope, with its old
 * ClassAd names MY and CurrentTime); TARGET is looked up through every
 * enclosing record first, as HTCondor finds it in the match's scopes. */
typedef enum special {
    SP_NONE, SP_SELF, SP_PARENT, SP_ROOT, SP_CURRENT_TIME, SP_TARGET
} special;

static special special_of(ads_str n)
{
    switch (n.len) {
    case 2:
        return ads_name__eq(n.p, n.len, "my", 2) ? SP_SELF : SP_NONE;
    case 4:
        return ads_name__eq(n.p, n.len, "self", 4) ? SP_SELF
               : ads_name__eq(n.p, n.len, "root", 4) ? SP_ROOT : SP_NONE;
    case 6:
        return ads_name__eq(n.p, n.len, "parent", 6) ? SP_PARENT
               : ads_name__eq(n.p, n.len, "target", 6) ? SP_TARGET : SP_NONE;
    case 8:
        return ads_name__eq(n.p, n.len, "toplevel", 8) ? SP_ROOT : SP_NONE;
    case 11:
        return ads_name__eq(n.p, n.len, "currenttime", 11) ? SP_CURRENT_TIME : SP_NONE;
    default:
        return SP_NONE;
    }
}

static const ads_view *chain_root(const ads_view *v)
{
    while (v->parent)
        v = v->parent;
    return v;
}

/* Is view v inside the TARGET record of a match (ads_expr_eval_match)? */
static bool on_target_side(const ads_eval_ctx *cx, const ads_view *v)
{
    return cx->target && chain_root(v) == cx->target_root;
}

/* The outermost record as seen from v: the target's, inside the target. */
static const ads_view *root_for(const ads_eval_ctx *cx, const ads_view *v)
{
    return on_target_side(cx, v) ? cx->target_root : cx->root;
}

/* The view a special name denotes from v (NULL: none, the name is undefined). */
static const ads_view *special_view(ads_eval_ctx *cx, special sp, const ads_view *v)
{
    switch (sp) {
    case SP_SELF:
        return v;
    case SP_PARENT:
        return v->parent;
    case SP_ROOT:
        return root_for(cx, v);
    case SP_TARGET:
        /* the other record of the match: from inside the target, MY's */
        if (!cx->target)
            return NULL;
        return on_target_side(cx, v) ? cx->my : cx->target;
    default:
        return NULL;
    }
}

/* CurrentTime, HTCondor's old name for time(). */
static void current_time(ads_value *out, ads_eval_ctx *cx, const ads_view *view)
{
    const ads_builtin *fn = ads_builtin__find("time", 4);
    if (fn)
        fn->fn(out, cx, view, NULL, 0);
    else
        *out = error_value();
}

/* A view of record r enclosed by parent, in the evaluation's arena (it must
 * outlive the caller's frame); NULL (cx->oom set) when memory runs out. */
static const ads_view *record_view_in(ads_eval_ctx *cx, const ads_record *r,
                                      const ads_view *parent)
{
    ads_view *v = ads_eval__alloc(cx, sizeof *v);
    if (v)
        *v = ads_record_view(r, parent);
    return v;
}

/*
 * What a name or a selection denotes, with the scope it sits in, so that a
 * selection from it can fall back to the records enclosing it as HTCondor's
 * does (in [s = "Hello"; n = [i = 70]], n.s is "Hello"). A record comes
 * with a view (rec) whose parent chain is its lexical scope: the view the
 * attribute holding it was found in, or the scope a record written in place
 * is evaluated in. scope is the view a value was found in (a list's records
 * fall back to it), or NULL.
 */
typedef enum held {
    HELD_VALUE,   /* *out holds the value (rec: its view, for a record) */
    HELD_LAZY,    /* rec shows a record written in place, not evaluated yet */
    HELD_SPECIAL  /* rec is what self, parent, toplevel or TARGET names */
} held;

typedef struct scoped {
    held how;
    const ads_view *rec;
    const ads_view *scope;
} scoped;

static void eval_scoped(ads_value *out, scoped *sc, ads_eval_ctx *cx, const ads_expr *e,
                        const ads_view *view);

/* Give a record value (or a record read lazily) its view, enclosed by
 * parent. */
static void hold_record(ads_value *out, scoped *sc, ads_eval_ctx *cx, const ads_record *r,
                        const ads_view *parent, held how)
{
    sc->how = how;
    sc->scope = parent;
    sc->rec = record_view_in(cx, r, parent);
    if (!sc->rec) {
        sc->how = HELD_VALUE;
        *out = error_value();
    }
}

/*
 * name looked up from view v outward, as HTCondor's LookupInScope: the first
 * record holding it wins; when v itself lacks it, a special name has its
 * meaning (so an outer attribute named `parent` does not hide the parent),
 * except TARGET, which every enclosing record is asked for first. Undefined
 * if nothing has the name.
 */
static void lookup_scoped(ads_value *out, scoped *sc, ads_eval_ctx *cx, const ads_view *v,
                          ads_str name, uint32_t hash, bool quoted, bool plain)
{
    special sp = quoted ? SP_NONE : special_of(name);
    sc->how = HELD_VALUE;
    sc->rec = sc->scope = NULL;
    for (const ads_view *w = v; w; w = w->parent) {
        const ads_record *lazy = NULL;
        int found = lookup_in(out, cx, w, name, hash, &lazy, NULL);
        if (found) {
            /* a join partner (2) encloses nothing */
            const ads_view *parent = found == 2 ? NULL : w;
            if (lazy)
                hold_record(out, sc, cx, lazy, parent, HELD_LAZY);
            else if (out->type == ADS_RECORD)
                hold_record(out, sc, cx, out->u.rec, parent, HELD_VALUE);
            else
                sc->scope = w;
            return;
        }
        if (w != v || sp == SP_NONE || sp == SP_TARGET)
            continue;
        if (sp == SP_CURRENT_TIME) {
            current_time(out, cx, v);
            return;
        }
        break;
    }
    if (sp != SP_NONE) {
        const ads_view *sv = special_view(cx, sp, v);
        if (sv) {
            sc->how = HELD_SPECIAL;
            sc->rec = sv;
            return;
        }
    } else if (plain && cx->target && (v == cx->my || v == cx->target)) {
        /* In a match, a plain name that neither an expression's own record
         * nor its enclosing ones have is looked up in the other record, as
         * HTCondor's matchmaker does (old ClassAd semantics: the ads'
         * alternateScope): a job's `Memory > 1024` reads the machine's. Only
         * for expressions of the two records themselves, as there. */
        lookup_scoped(out, sc, cx, v == cx->my ? cx->target : cx->my, name, hash, true,
                      false);
        return;
    }
    *out = ads_undefined();
}

/* The value of what eval_scoped found. A special name's record is the
 * in-memory record itself (a view over stored bytes has no record value to
 * give: undefined); a record written in place is evaluated, as records are. */
static void eval_record(ads_value *out, ads_eval_ctx *cx, const ads_record *src,
                        const ads_view *view);

static void held_value(ads_value *out, ads_eval_ctx *cx, const scoped *sc)
{
    if (sc->how == HELD_LAZY)
        eval_record(out, cx, sc->rec->self, sc->rec->parent);
    else if (sc->how == HELD_SPECIAL)
        *out = sc->rec->ops == &ads_record__view_ops ? ads_recordv(sc->rec->self)
                                                     : ads_undefined();
}

/* base.name where base's value is a list: name of each element. */
static void select_in_list(ads_value *out, ads_eval_ctx *cx, const ads_value *base,
                           const ads_view *scope, ads_str name, uint32_t hash, bool quoted)
{
    size_t n = base->u.list.n;
    ads_value *items = ads_eval__alloc(cx, (n ? n : 1) * sizeof *items);
    if (!items) {
        *out = error_value();
        return;
    }
    for (size_t i = 0; i < n; i++) {
        const ads_value *it = &base->u.list.items[i];
        if (it->type == ADS_RECORD) {
            /* each record encloses what encloses the list */
            ads_view *rv = ads_eval__alloc(cx, sizeof *rv);
            scoped sc;
            if (!rv) {
                items[i] = error_value();
                continue;
            }
            *rv = ads_record_view(it->u.rec, scope);
            lookup_scoped(&items[i], &sc, cx, rv, name, hash, quoted, false);
            held_value(&items[i], cx, &sc);
        } else if (it->type == ADS_UNDEFINED) {
            items[i] = ads_undefined();
        } else {
            items[i] = error_value();
        }
    }
    *out = ads_list(items, n);
}

/* base.name (e is the N_SELECT node). */
static void select_scoped(ads_value *out, scoped *sc, ads_eval_ctx *cx, const ads_expr *e,
                          const ads_view *view)
{
    scoped base;
    ads_value bv;
    eval_scoped(&bv, &base, cx, e->u.sel.base, view);
    if (base.rec) {
        lookup_scoped(out, sc, cx, base.rec, e->u.sel.name, e->u.sel.hash, e->quoted, false);
        return;
    }
    sc->how = HELD_VALUE;
    sc->rec = sc->scope = NULL;
    switch (bv.type) {
    case ADS_UNDEFINED:
        *out = ads_undefined();
        return;
    case ADS_LIST:
        select_in_list(out, cx, &bv, base.scope, e->u.sel.name, e->u.sel.hash, e->quoted);
        return;
    default:
        *out = error_value();
    }
}

static void eval_scoped(ads_value *out, scoped *sc, ads_eval_ctx *cx, const ads_expr *e,
                        const ads_view *view)
{
    sc->how = HELD_VALUE;
    sc->rec = sc->scope = NULL;
    if (++cx->depth > ADS_MAX_DEPTH) {
        cx->depth--;
        *out = error_value();
        return;
    }
    switch ((node_kind)e->kind) {
    case N_PAREN:
        eval_scoped(out, sc, cx, e->u.ops.a, view);
        break;
    case N_ATTR:
        if (e->scope == SCOPE_ROOT)
            lookup_scoped(out, sc, cx, root_for(cx, view), e->u.attr.name, e->u.attr.hash,
                          true, false);
        else
            lookup_scoped(out, sc, cx, view, e->u.attr.name, e->u.attr.hash, e->quoted, true);
        break;
    case N_SELECT:
        select_scoped(out, sc, cx, e, view);
        break;
    case N_RECORD:
        /* written in place: enclosed by the scope it is evaluated in */
        hold_record(out, sc, cx, e->u.rec, view, HELD_LAZY);
        break;
    case N_LITERAL:
    case N_LIST:
        ads_eval__expr(out, cx, e, view);
        if (out->type == ADS_RECORD)
            hold_record(out, sc, cx, out->u.rec, view, HELD_VALUE);
        else
            sc->scope = view;
        break;
    case N_INDEX:
        /* a record taken from a list or a record: enclosed where the
         * expression is, as HTCondor's list elements are */
        ads_eval__expr(out, cx, e, view);
        if (out->type == ADS_RECORD)
            hold_record(out, sc, cx, out->u.rec, view, HELD_VALUE);
        break;
    default:
        /* a function's or a conditional's result: a record enclosing nothing */
        ads_eval__expr(out, cx, e, view);
        if (out->type == ADS_RECORD)
            hold_record(out, sc, cx, out->u.rec, NULL, HELD_VALUE);
    }
    cx->depth--;
}

static void eval_attr(ads_value *out, ads_eval_ctx *cx, const ads_expr *e, const ads_view *view)
{
    scoped sc;
    /* the common case first: found in the record holding the expression */
    if (e->scope == SCOPE_NORMAL &&
        lookup_in(out, cx, view, e->u.attr.name, e->u.attr.hash, NULL,
                  (_Atomic uint32_t *)&e->u.attr.hint) != 0)
        return;
    if (e->scope == SCOPE_ROOT)
        lookup_scoped(out, &sc, cx, root_for(cx, view), e->u.attr.name, e->u.attr.hash, true,
                      false);
    else
        lookup_scoped(out, &sc, cx, view, e->u.attr.name, e->u.attr.hash, e->quoted, true);
    held_value(out, cx, &sc);
}

void ads_eval__attr(ads_value *out, ads_eval_ctx *cx, const ads_expr *e, const ads_view *view)
{
    eval_attr(out, cx, e, view);
}

static void eval_select(ads_value *out, ads_eval_ctx *cx, const ads_expr *e,
                        const ads_view *view)
{
    scoped sc;
    select_scoped(out, &sc, cx, e, view);
    held_value(out, cx, &sc);
}

/* name looked up in record value r (case-insensitive) alone: x["name"]. */
static void select_in_record(ads_value *out, ads_eval_ctx *cx, const ads_record *r,
                             ads_str name, uint32_t hash, const ads_view *view)
{
    long i = ads_record__find(r, name.p, name.len, hash);
    if (i < 0) {
        *out = ads_undefined();
        return;
    }
    const ads_expr *x = r->exprs[i];
    if (x->kind == N_LITERAL) {
        *out = x->u.lit;
        return;
    }
    ads_view rv = ads_record_view(r, view);
    eval_found(out, cx, &rv, x);
}

static void eval_index(ads_value *out, ads_eval_ctx *cx, const ads_expr *e,
                       const ads_view *view)
{
    ads_value base, idx;
    ads_eval__expr(&base, cx, e->u.ops.a, view);
    ads_eval__expr(&idx, cx, e->u.ops.b, view);
    if (base.type == ADS_ERROR || idx.type == ADS_ERROR) {
        *out = error_value();
    } else if (base.type == ADS_UNDEFINED || idx.type == ADS_UNDEFINED) {
        *out = ads_undefined();
    } else if (base.type == ADS_LIST && idx.type == ADS_INTEGER) {
        if (idx.u.i < 0 || (uint64_t)idx.u.i >= base.u.list.n)
            *out = error_value();
        else
            *out = base.u.list.items[idx.u.i];
    } else if (base.type == ADS_RECORD && idx.type == ADS_STRING) {
        select_in_record(out, cx, base.u.rec, idx.u.s,
                         ads_name_hash(idx.u.s.p, idx.u.s.len), view);
    } else {
        *out = error_value();
    }
}

static void eval_list(ads_value *out, ads_eval_ctx *cx, const ads_expr *e,
                      const ads_view *view)
{
    size_t n = e->u.list.n;
    ads_value *items = ads_eval__alloc(cx, (n ? n : 1) * sizeof *items);
    if (!items) {
        *out = error_value();
        return;
    }
    for (size_t i = 0; i < n; i++)
        ads_eval__expr(&items[i], cx, e->u.list.items[i], view);
    *out = ads_list(items, n);
    out->u.list.src = e;
}

/* A record expression evaluates to the record of its evaluated members, each
 * evaluated in the record's own scope (enclosed by the current one). */
static void eval_record(ads_value *out, ads_eval_ctx *cx, const ads_record *src,
                        const ads_view *view)
{
    size_t n = src->n;
    ads_expr *lits = ads_eval__alloc(cx, (n ? n : 1) * sizeof *lits);
    const ads_expr **exprs = ads_eval__alloc(cx, (n ? n : 1) * sizeof *exprs);
    ads_record *r = ads_eval__alloc(cx, sizeof *r);
    if (!lits || !exprs || !r) {
        *out = error_value();
        return;
    }
    ads_view inner = ads_record_view(src, view);
    for (size_t i = 0; i < n; i++) {
        memset(&lits[i], 0, sizeof lits[i]);
        lits[i].kind = N_LITERAL;
        const ads_expr *x = src->exprs[i];
        if (x->kind == N_LITERAL)
            lits[i].u.lit = x->u.lit;
        else
            eval_found(&lits[i].u.lit, cx, &inner, x);
        exprs[i] = &lits[i];
    }
    *r = *src; /* same names, hashes and index; evaluated members */
    r->exprs = exprs;
    *out = ads_recordv(r);
}

/* An operand of a chain: literals and attribute references, most operands
 * of real constraints, are taken here rather than through the whole of
 * ads_eval__expr, with the same depth accounting (a leaf one level down). */
static inline void eval_operand(ads_value *out, ads_eval_ctx *cx, const ads_expr *e,
                                const ads_view *view)
{
    if (cx->depth >= ADS_MAX_DEPTH) {
        ads_eval__expr(out, cx, e, view); /* which gives the error */
    } else if (e->kind == N_LITERAL) {
        *out = e->u.lit;
    } else if (e->kind == N_ATTR) {
        cx->depth++;
        eval_attr(out, cx, e, view);
        cx->depth--;
    } else {
        ads_eval__expr(out, cx, e, view);
    }
}

/* One operator of && or || with its left operand's value a: evaluates the
 * right operand only when a does not decide. */
static void and_or_step(ads_value *out, ads_eval_ctx *cx, const ads_expr *e, const ads_value *a,
                        const ads_view *view)
{
    ads_value b;
    ads_truth ta = ads_truth__of(a);
    if (ta == ADS_T_ERR) {
        *out = error_value();
        return;
    }
    bool is_and = e->kind == N_AND;
    if (is_and && ta == ADS_T_FALSE) {
        *out = ads_bool(false);
        return;
    }
    if (!is_and && ta == ADS_T_TRUE) {
        *out = ads_bool(true);
        return;
    }
    eval_operand(&b, cx, e->u.ops.b, view);
    ads_truth tb = ads_truth__of(&b);
    if (tb == ADS_T_ERR) {
        *out = error_value();
        return;
    }
    if (is_and) /* ta is true or undefined */
        *out = tb == ADS_T_FALSE ? ads_bool(false) : ta == ADS_T_UNDEF ? ads_undefined()
                                                                : from_truth(tb);
    else /* ta is false or undefined */
        *out = tb == ADS_T_TRUE ? ads_bool(true) : ta == ADS_T_UNDEF ? ads_undefined()
                                                              : from_truth(tb);
}

/* A chain of binary operators (classad_int.h), in a loop: the leftmost
 * operand first, then each operator up the spine with its right operand,
 * exactly the order and short-circuits that evaluating ((a op b) op c)
 * recursively gives. The whole chain is one level of depth. */
static void eval_chain(ads_value *out, ads_eval_ctx *cx, const ads_expr *e,
                       const ads_view *view)
{
    ads_spine s;
    ads_spine__init(&s);
    const ads_expr *x = e;
    for (; ads_expr__is_binop(x); x = x->u.ops.a)
        if (ads_spine__push(&s, x)) {
            cx->oom = true;
            *out = error_value();
            ads_spine__free(&s);
            return;
        }
    ads_value acc, b, r;
    eval_operand(&acc, cx, x, view);
    for (size_t i = s.n; i-- > 0;) {
        const ads_expr *op = s.nodes[i];
        if (op->kind == N_BINARY) {
            eval_operand(&b, cx, op->u.ops.b, view);
            ads_eval__binary(&r, cx, (op_kind)op->op, &acc, &b);
        } else {
            and_or_step(&r, cx, op, &acc, view);
        }
        acc = r;
    }
    ads_spine__free(&s);
    *out = acc;
}

static void eval_call(ads_value *out, ads_eval_ctx *cx, const ads_expr *e,
                      const ads_view *view)
{
    const ads_builtin *fn = e->u.call.fn;
    size_t n = e->u.call.n;
    if (!fn || (int)n < fn->min_args || (fn->max_args >= 0 && (int)n > fn->max_args)) {
        *out = error_value();
        return;
    }
    fn->fn(out, cx, view, e->u.call.args, n);
    check_time(out);
}

void ads_eval__expr(ads_value *out, ads_eval_ctx *cx, const ads_expr *e, const ads_view *view)
{
    if (++cx->depth > ADS_MAX_DEPTH) {
        cx->depth--;
        *out = error_value();
        return;
    }
    switch ((node_kind)e->kind) {
    case N_LITERAL:
        *out = e->u.lit;
        break;
    case N_PAREN:
        ads_eval__expr(out, cx, e->u.ops.a, view);
        break;
    case N_ATTR:
        eval_attr(out, cx, e, view);
        break;
    case N_SELECT:
        eval_select(out, cx, e, view);
        break;
    case N_INDEX:
        eval_index(out, cx, e, view);
        break;
    case N_UNARY: {
        ads_value a;
        ads_eval__expr(&a, cx, e->u.ops.a, view);
        *out = unary((op_kind)e->op, &a);
        break;
    }
    case N_BINARY:
    case N_AND:
    case N_OR:
        eval_chain(out, cx, e, view);
        break;
    case N_COND: {
        ads_value c;
        ads_eval__expr(&c, cx, e->u.ops.a, view);
        ads_truth t = ads_truth__of(&c);
        if (t == ADS_T_TRUE)
            ads_eval__expr(out, cx, e->u.ops.b, view);
        else if (t == ADS_T_FALSE)
            ads_eval__expr(out, cx, e->u.ops.c, view);
        else
            *out = from_truth(t);
        break;
    }
    case N_ELVIS:
        ads_eval__expr(out, cx, e->u.ops.a, view);
        if (out->type == ADS_UNDEFINED)
            ads_eval__expr(out, cx, e->u.ops.b, view);
        break;
    case N_CALL:
        eval_call(out, cx, e, view);
        break;
    case N_LIST:
        eval_list(out, cx, e, view);
        break;
    case N_RECORD:
        eval_record(out, cx, e->u.rec, view);
        break;
    default:
        *out = error_value();
    }
    cx->depth--;
}

static int eval_top(ads_value *out, const ads_expr *e, const ads_view *view,
                    const ads_view *target, ads_arena *a)
{
    ads_eval_ctx cx;
    ads_view empty = {&empty_ops, NULL, NULL};
    if (!view)
        view = &empty;
    else if (e->kind == N_ATTR && ads_prog__attr_quick(out, e, view))
        return 0; /* a bare attribute found in place */
    else if (view->ops == &ads_record__view_ops)
        ads_record__prefetch(view->self);
    cx.arena = a;
    cx.root = chain_root(view);
    cx.my = view;
    cx.target = target;
    cx.target_root = target ? chain_root(target) : NULL;
    cx.depth = 0;
    cx.nactive = 0;
    cx.attr_evals = 0;
    cx.oom = false;
    const ads_prog *p = ads_prog__of(e);
    if (p)
        ads_prog__run(out, &cx, p, view);
    else
        ads_eval__expr(out, &cx, e, view);
    if (cx.oom) {
        *out = error_value();
        return ADS_ENOMEM;
    }
    return 0;
}

int ads_expr_eval(ads_value *out, const ads_expr *e, const ads_view *view, ads_arena *a)
{
    return eval_top(out, e, view, NULL, a);
}

int ads_expr_eval_match(ads_value *out, const ads_expr *e, const ads_view *my,
                        const ads_view *target, ads_arena *a)
{
    return eval_top(out, e, my, target, a);
}

int ads_record_eval_attr(ads_value *out, const ads_record *r, const char *name, size_t len,
                         ads_arena *a)
{
    ads_expr attr;
    memset(&attr, 0, sizeof attr);
    attr.kind = N_ATTR;
    attr.u.attr.name.p = name;
    attr.u.attr.name.len = len;
    attr.u.attr.hash = ads_name_hash(name, len);
    ads_view v = ads_record_view(r, NULL);
    return ads_expr_eval(out, &attr, &v, a);
}
