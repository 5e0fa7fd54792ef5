/*
 * classad/program.c: a prepared expression's flat program.
 *
 * ads_expr_prepare compiles the operators at the top of an expression (the
 * chains of binary operators, && and ||, unary operators, with their
 * literal and attribute operands) into an array of instructions run in a
 * loop over a small stack of values, instead of a recursive call per node.
 * Anything else (calls, selections, conditionals, lists, records, and
 * nesting past ADS_PROG_DEPTH) stays a tree the program hands to the tree
 * walker (ads_eval__expr) as one instruction. An expression whose stack
 * would pass ADS_PROG_STACK gets no program and is evaluated as a tree.
 *
 * The program computes exactly what the tree walker computes, in the same
 * order: operands left to right, && and || skipping their right operand
 * when the left decides (false, or error, for &&; true, or error, for ||;
 * undefined decides nothing), each operator through the same semantics
 * (a few common cases, integers, reals compared and strings tested for
 * equality, are done inline with the same results; the rest goes to
 * ads_eval__binary). Whatever it hands to the walker (an attribute's
 * expression, a subtree) runs at the nesting depth the walker would have
 * reached there, so depth limits and cycles give error just as they do
 * without a program. tests/classad/test_program.c compares the two on
 * random expressions.
 *
 * The program hangs off the prepared root node (u.ops.prog) and is used
 * only for that node itself: a copy of the node (ads_expr_rewrite's) is
 * evaluated as a tree, so a program never runs for a tree it was not
 * compiled from.
 */
#include <stdlib.h>
#include <string.h>

#include "base/bytes.h"
#include "classad/classad_int.h"

typedef enum pcode {
    P_LIT,      /* push lit */
    P_ATTR,     /* push attribute e's value */
    P_ATTR_LIT, /* push (attribute e's value) op lit */
    P_TREE,     /* push ads_eval__expr of e */
    P_BIN,      /* pop b; top = top op b */
    P_BIN_LIT,  /* top = top op lit */
    P_UNARY,    /* top = op top */
    P_AND,      /* if top decides &&: top = false or error, go to jump */
    P_AND_END,  /* pop b; top = top && b (top neither false nor error) */
    P_OR,       /* if top decides ||: top = true or error, go to jump */
    P_OR_END    /* pop b; top = top || b (top neither true nor error) */
} pcode;

struct ads_prog_op {
    uint8_t code; /* pcode */
    uint8_t op;   /* op_kind of P_*BIN*, P_ATTR_LIT, P_UNARY */
    uint16_t depth; /* P_ATTR*: the walker's depth at the reference; P_TREE: before e */
    uint32_t jump;  /* P_AND, P_OR: the instruction after the matching *_END */
    const ads_expr *e;
    ads_value lit;
};

/* ---- compiling ---- */

typedef struct comp {
    ads_prog_op *ops; /* malloc'd while compiling */
    size_t n, cap;
    int sp, max_sp;
    bool failed;
} comp;

static ads_prog_op *emit(comp *c, pcode code)
{
    if (c->failed)
        return NULL;
    if (c->n == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 16;
        ads_prog_op *ops = cap > UINT32_MAX ? NULL : realloc(c->ops, cap * sizeof *ops);
        if (!ops) {
            c->failed = true;
            return NULL;
        }
        c->ops = ops, c->cap = cap;
    }
    ads_prog_op *o = &c->ops[c->n++];
    memset(o, 0, sizeof *o);
    o->code = (uint8_t)code;
    return o;
}

static void push(comp *c)
{
    if (++c->sp > c->max_sp)
        c->max_sp = c->sp;
    if (c->sp > ADS_PROG_STACK)
        c->failed = true;
}

static void operand(comp *c, const ads_expr *x, int d);

/* b, the literal right operand of operator op: fused into the attribute
 * reference just before it when there is one (nothing jumps between the
 * two: a jump lands only after an *_END). */
static void binary_literal(comp *c, op_kind op, const ads_expr *b)
{
    ads_prog_op *o;
    if (c->n > 0 && c->ops[c->n - 1].code == P_ATTR) {
        o = &c->ops[c->n - 1];
        o->code = P_ATTR_LIT;
    } else if (!(o = emit(c, P_BIN_LIT))) {
        return;
    }
    o->op = (uint8_t)op;
    o->lit = b->u.lit;
}

/* A chain of binary operators at depth d, as eval.c's eval_chain walks it:
 * the spine's nodes at d, every operand at d + 1. */
static void chain(comp *c, const ads_expr *e, int d)
{
    ads_spine s;
    ads_spine__init(&s);
    const ads_expr *x = e;
    for (; ads_expr__is_binop(x); x = x->u.ops.a)
        if (ads_spine__push(&s, x)) {
            c->failed = true;
            ads_spine__free(&s);
            return;
        }
    operand(c, x, d + 1);
    for (size_t i = s.n; i-- > 0 && !c->failed;) {
        const ads_expr *op = s.nodes[i], *b = op->u.ops.b;
        if (op->kind == N_BINARY && b->kind == N_LITERAL) {
            binary_literal(c, (op_kind)op->op, b);
        } else if (op->kind == N_BINARY) {
            operand(c, b, d + 1);
            ads_prog_op *o = emit(c, P_BIN);
            if (o)
                o->op = op->op;
            c->sp--;
        } else {
            size_t at = c->n;
            bool is_and = op->kind == N_AND;
            emit(c, is_and ? P_AND : P_OR);
            operand(c, b, d + 1);
            emit(c, is_and ? P_AND_END : P_OR_END);
            c->sp--;
            if (!c->failed)
                c->ops[at].jump = (uint32_t)c->n;
        }
    }
    ads_spine__free(&s);
}

/* x evaluated at depth d (as ads_eval__expr would be, depth d inside it):
 * one value pushed. */
static void operand(comp *c, const ads_expr *x, int d)
{
    ads_prog_op *o;
    if (c->failed)
        return;
    if (d > ADS_PROG_DEPTH) {
        c->failed = true;
        return;
    }
    switch ((node_kind)x->kind) {
    case N_LITERAL:
        if ((o = emit(c, P_LIT)))
            o->lit = x->u.lit;
        push(c);
        break;
    case N_ATTR:
        if ((o = emit(c, P_ATTR))) {
            o->e = x;
            o->depth = (uint16_t)d;
        }
        push(c);
        break;
    case N_BINARY:
    case N_AND:
    case N_OR:
        chain(c, x, d);
        break;
    case N_UNARY:
        operand(c, x->u.ops.a, d + 1);
        if ((o = emit(c, P_UNARY)))
            o->op = x->op;
        break;
    default:
        if ((o = emit(c, P_TREE))) {
            o->e = x;
            o->depth = (uint16_t)(d - 1);
        }
        push(c);
    }
}

const ads_prog *ads_prog__compile(ads_arena *a, const ads_expr *e)
{
    if (!ads_expr__is_binop(e) && e->kind != N_UNARY)
        return NULL;
    comp c = {NULL, 0, 0, 0, 0, false};
    operand(&c, e, 1); /* the root: depth 1, as ads_eval__expr makes it */
    ads_prog *p = NULL;
    ads_prog_op *ops;
    if (!c.failed && c.sp == 1 && (p = ads_arena_alloc(a, sizeof *p)) &&
        (ops = ads_arena_alloc(a, c.n * sizeof *ops))) {
        memcpy(ops, c.ops, c.n * sizeof *ops);
        p->node = e;
        p->ops = ops;
        p->n = c.n;
    } else {
        p = NULL;
    }
    free(c.ops);
    return p;
}

/* ---- running ---- */

/* a op b: integers, reals compared, and strings tested for equality inline,
 * exactly as ads_eval__binary does them; everything else there. */
static inline void binary(ads_value *out, ads_eval_ctx *cx, op_kind op, const ads_value *a,
                          const ads_value *b)
{
    if (a->type == ADS_INTEGER && b->type == ADS_INTEGER) {
        int64_t x = a->u.i, y = b->u.i;
        switch (op) {
        case OP_LT:
            *out = ads_bool(x < y);
            return;
        case OP_LE:
            *out = ads_bool(x <= y);
            return;
        case OP_GT:
            *out = ads_bool(x > y);
            return;
        case OP_GE:
            *out = ads_bool(x >= y);
            return;
        case OP_EQ:
            *out = ads_bool(x == y);
            return;
        case OP_NE:
            *out = ads_bool(x != y);
            return;
        case OP_ADD: /* two's complement wrap, as eval.c */
            *out = ads_int((int64_t)((uint64_t)x + (uint64_t)y));
            return;
        case OP_SUB:
            *out = ads_int((int64_t)((uint64_t)x - (uint64_t)y));
            return;
        case OP_MUL:
            *out = ads_int((int64_t)((uint64_t)x * (uint64_t)y));
            return;
        case OP_DIV: /* 0 and -1 (INT64_MIN / -1) are eval.c's to decide */
            if (y != 0 && y != -1) {
                *out = ads_int(x / y);
                return;
            }
            break;
        default:
            break;
        }
    } else if (a->type == ADS_REAL && b->type == ADS_REAL) {
        /* NaN compares false but for != (eval.c's unordered case) */
        double x = a->u.r, y = b->u.r;
        switch (op) {
        case OP_LT:
            *out = ads_bool(x < y);
            return;
        case OP_LE:
            *out = ads_bool(x <= y);
            return;
        case OP_GT:
            *out = ads_bool(x > y);
            return;
        case OP_GE:
            *out = ads_bool(x >= y);
            return;
        case OP_EQ:
            *out = ads_bool(x == y);
            return;
        case OP_NE:
            *out = ads_bool(x != y);
            return;
        default:
            break;
        }
    } else if (a->type == ADS_STRING && b->type == ADS_STRING && (op == OP_EQ || op == OP_NE)) {
        /* equal ignoring ASCII case: ads_value__strcmp_fold's 0 */
        bool eq = ads_name__eq(a->u.s.p, a->u.s.len, b->u.s.p, b->u.s.len);
        *out = ads_bool(op == OP_EQ ? eq : !eq);
        return;
    }
    ads_eval__binary(out, cx, op, a, b);
}

/* The result of a && b or a || b once b was needed (ta: a's truth, which
 * did not decide), as eval.c's and_or_step gives it. */
static inline ads_value and_or_end(bool is_and, ads_truth ta, ads_truth tb)
{
    if (tb == ADS_T_ERR)
        return ads_errorv();
    if (tb == (is_and ? ADS_T_FALSE : ADS_T_TRUE))
        return ads_bool(!is_and);
    if (ta == ADS_T_UNDEF || tb == ADS_T_UNDEF)
        return ads_undefined();
    return ads_bool(is_and);
}

/* Attribute e's value when it is a literal of the in-memory record viewed
 * (or a plain scalar of the row viewed), found where the name was last
 * found and spelled the same: what ads_eval__attr gives then, without its
 * layers of calls. false: ask it. */
static inline bool attr_quick(ads_value *out, const ads_expr *e, const ads_view *view)
{
    if (e->scope != SCOPE_NORMAL)
        return false;
    uint32_t h = atomic_load_explicit((_Atomic uint32_t *)&e->u.attr.hint, memory_order_relaxed);
    if (view->ops == &ads_msgpack__view_ops)
        return ads_msgpack__quick(out, view->self, e->u.attr.name.p, e->u.attr.name.len, h);
    if (view->ops != &ads_record__view_ops) {
        const struct ads_msgpack_view *mv =
            view->ops->data ? view->ops->data(view->self, e->u.attr.name.p, e->u.attr.name.len)
                            : NULL;
        return mv && ads_msgpack__quick(out, mv, e->u.attr.name.p, e->u.attr.name.len, h);
    }
    const ads_record *r = view->self;
    if (h >= r->n || r->hashes[h] != e->u.attr.hash || r->names[h].len != e->u.attr.name.len ||
        !ads_bytes_same(r->names[h].p, e->u.attr.name.p, e->u.attr.name.len) ||
        r->exprs[h]->kind != N_LITERAL)
        return false;
    *out = r->exprs[h]->u.lit;
    return true;
}

bool ads_prog__attr_quick(ads_value *out, const ads_expr *e, const ads_view *view)
{
    return attr_quick(out, e, view);
}

static inline void attr(ads_value *out, ads_eval_ctx *cx, const ads_prog_op *o,
                        const ads_view *view)
{
    if (!attr_quick(out, o->e, view)) {
        cx->depth = o->depth;
        ads_eval__attr(out, cx, o->e, view);
    }
}

void ads_prog__run(ads_value *out, ads_eval_ctx *cx, const ads_prog *p, const ads_view *view)
{
    ads_value st[ADS_PROG_STACK], v, w;
    ads_value *top = st - 1;
    const ads_prog_op *o = p->ops, *end = o + p->n;
    while (o < end) {
        switch ((pcode)o->code) {
        case P_LIT:
            *++top = o->lit;
            break;
        case P_ATTR:
            attr(++top, cx, o, view);
            break;
        case P_ATTR_LIT:
            attr(&v, cx, o, view);
            binary(++top, cx, (op_kind)o->op, &v, &o->lit);
            break;
        case P_TREE:
            cx->depth = o->depth;
            ads_eval__expr(++top, cx, o->e, view);
            break;
        case P_BIN:
            v = *top--;
            w = *top;
            binary(top, cx, (op_kind)o->op, &w, &v);
            break;
        case P_BIN_LIT:
            v = *top;
            binary(top, cx, (op_kind)o->op, &v, &o->lit);
            break;
        case P_UNARY:
            v = *top;
            ads_eval__unary(top, (op_kind)o->op, &v);
            break;
        case P_AND:
        case P_OR: {
            ads_truth t = ads_truth__of(top);
            bool is_and = o->code == P_AND;
            if (t == ADS_T_ERR || t == (is_and ? ADS_T_FALSE : ADS_T_TRUE)) {
                *top = t == ADS_T_ERR ? ads_errorv() : ads_bool(!is_and);
                o = p->ops + o->jump;
                continue;
            }
            break;
        }
        case P_AND_END:
        case P_OR_END: {
            ads_truth tb = ads_truth__of(top--);
            *top = and_or_end(o->code == P_AND_END, ads_truth__of(top), tb);
            break;
        }
        }
        o++;
    }
    cx->depth = 0;
    *out = *top;
}
