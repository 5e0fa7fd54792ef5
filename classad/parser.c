/*
 * classad/parser.c: tokens to expression trees (shared/spec/classad.md
 * sections 2 and 3). Recursive descent for conditionals, unary operators,
 * postfix and primaries; binary operators by precedence over a small stack
 * of the operators waiting for their right operand (parse_binary). The
 * depth is counted so that deep input is an error, not a stack overflow.
 * Operators of one level are gathered in a loop, so a flat chain
 * (a || b || ...) is one level however long (classad_int.h). The tree
 * keeps what was written (parentheses, quoted names) so unparse() can give
 * it back; nothing is folded here except absTime("...") and relTime("...")
 * of a string literal, which the language defines as literals.
 */
#include <assert.h>
#include <string.h>

#include "classad/classad_int.h"

typedef struct parser {
    lexer lx;
    ads_arena *arena;
    ads_error *err;
    int depth;
    bool query; /* the statement language's extras (ADS_PARSE_QUERY) */
    bool params; /* placeholders `?` and `:name` as operands (ADS_PARSE_PARAMS) */
} parser;

static int fail_tok(parser *ps, const char *expected)
{
    char buf[80];
    const token *t = &ps->lx.tok;
    return ads_error_set_at(ps->err, ADS_ESYNTAX, t->line, t->column,
                            "expected %s, found %s", expected,
                            ads_lex__describe(t, buf, sizeof buf));
}

static int next(parser *ps)
{
    return ads_lex__next(&ps->lx);
}

static int oom(parser *ps)
{
    return ads_error_set_at(ps->err, ADS_ENOMEM, ps->lx.tok.line, ps->lx.tok.column,
                            "out of memory");
}

static ads_expr *node(parser *ps, node_kind kind)
{
    ads_expr *e = ads_arena_alloc(ps->arena, sizeof *e);
    if (e) {
        memset(e, 0, sizeof *e);
        e->kind = (uint8_t)kind;
    }
    return e;
}

static int enter(parser *ps)
{
    if (++ps->depth > ADS_MAX_DEPTH)
        return ads_error_set_at(ps->err, ADS_ELIMIT, ps->lx.tok.line, ps->lx.tok.column,
                                "expression nested deeper than %d levels", ADS_MAX_DEPTH);
    return 0;
}

static int parse_expr(parser *ps, const ads_expr **out);
static int parse_record_body(parser *ps, const ads_record **out);

/* ---- primaries ---- */

/* A growing array of expressions, in the arena. */
typedef struct expr_vec {
    const ads_expr **items;
    size_t n, cap;
} expr_vec;

static int vec_push(parser *ps, expr_vec *v, const ads_expr *e)
{
    if (v->n == v->cap) {
        size_t cap = v->cap ? v->cap * 2 : 4;
        const ads_expr **items = ads_arena_alloc(ps->arena, cap * sizeof *items);
        if (!items)
            return oom(ps);
        if (v->n)
            memcpy(items, v->items, v->n * sizeof *items);
        v->items = items;
        v->cap = cap;
    }
    v->items[v->n++] = e;
    return 0;
}

/* '{' already current. Items separated by ',', one trailing ',' allowed. */
static int parse_list(parser *ps, const ads_expr **out)
{
    expr_vec v = {NULL, 0, 0};
    int rc;
    if ((rc = next(ps)))
        return rc;
    while (ps->lx.tok.kind != T_RBRACE) {
        const ads_expr *item;
        if ((rc = parse_expr(ps, &item)) || (rc = vec_push(ps, &v, item)))
            return rc;
        if (ps->lx.tok.kind == T_COMMA) {
            if ((rc = next(ps)))
                return rc;
            continue;
        }
        if (ps->lx.tok.kind != T_RBRACE)
            return fail_tok(ps, "',' or '}' in a list");
    }
    ads_expr *e = node(ps, N_LIST);
    if (!e)
        return oom(ps);
    e->u.list.items = v.items;
    e->u.list.n = v.n;
    *out = e;
    return next(ps);
}

/* Fold absTime("...") and relTime("...") of one string literal. 1 if folded. */
static int fold_time_call(parser *ps, ads_expr *call)
{
    if (call->u.call.n != 1 || call->u.call.args[0]->kind != N_LITERAL ||
        call->u.call.args[0]->u.lit.type != ADS_STRING)
        return 0;
    ads_str s = call->u.call.args[0]->u.lit.u.s;
    ads_str name = call->u.call.name;
    if (ads_name__eq(name.p, name.len, "absTime", 7)) {
        double secs;
        int32_t off;
        if (ads_time__parse_abs(s.p, s.len, &secs, &off))
            return 0;
        call->kind = N_LITERAL;
        call->u.lit = ads_abstime(secs, off);
        return 1;
    }
    if (ads_name__eq(name.p, name.len, "relTime", 7)) {
        double secs;
        if (ads_time__parse_rel(s.p, s.len, &secs))
            return 0;
        call->kind = N_LITERAL;
        call->u.lit = ads_reltime(secs);
        return 1;
    }
    (void)ps;
    return 0;
}

/* name '(' already seen with the name in `name`; '(' is current. */
static int parse_call(parser *ps, ads_str name, const ads_expr **out)
{
    expr_vec v = {NULL, 0, 0};
    int rc;
    bool star = false;
    if ((rc = next(ps)))
        return rc;
    if (ps->query && ps->lx.tok.kind == T_STAR) {
        /* count(*): '*' alone between the parentheses */
        lexer save = ps->lx;
        if ((rc = next(ps)))
            return rc;
        if (ps->lx.tok.kind == T_RPAREN)
            star = true;
        else
            ps->lx = save;
    }
    if (!star && ps->lx.tok.kind != T_RPAREN) {
        for (;;) {
            const ads_expr *arg;
            if ((rc = parse_expr(ps, &arg)) || (rc = vec_push(ps, &v, arg)))
                return rc;
            if (ps->lx.tok.kind == T_COMMA) {
                if ((rc = next(ps)))
                    return rc;
                continue;
            }
            if (ps->lx.tok.kind != T_RPAREN)
                return fail_tok(ps, "',' or ')' after a function argument");
            break;
        }
    }
    ads_expr *e = node(ps, N_CALL);
    if (!e)
        return oom(ps);
    e->u.call.name = name;
    e->quoted = star;
    e->u.call.fn = ads_builtin__find(name.p, name.len);
    e->u.call.args = v.items;
    e->u.call.n = v.n;
    fold_time_call(ps, e);
    *out = e;
    return next(ps);
}

static int literal(parser *ps, const ads_expr **out, ads_value v)
{
    ads_expr *e = node(ps, N_LITERAL);
    if (!e)
        return oom(ps);
    e->u.lit = v;
    *out = e;
    return next(ps);
}

/* A placeholder where an operand starts: `?`, or `:` and a name right
 * after it. Both tokens are operators elsewhere, so nothing that parsed
 * before reads differently. */
static int parse_param(parser *ps, const ads_expr **out)
{
    const token *t = &ps->lx.tok;
    ads_expr *e = node(ps, N_PARAM);
    if (!e)
        return oom(ps);
    e->u.param.offset = (size_t)(t->start - ps->lx.text);
    e->u.param.line = t->line;
    e->u.param.column = t->column;
    bool named = t->kind == T_COLON;
    const char *after = t->start + t->len;
    /* `?` ends a value: `? - 1` subtracts, `? in {...}` tests membership */
    ps->lx.value_before = !named;
    int rc = next(ps);
    if (rc)
        return rc;
    if (named) {
        if (ps->lx.tok.kind != T_NAME || ps->lx.tok.quoted || ps->lx.tok.start != after)
            return fail_tok(ps, "a parameter name right after ':'");
        e->u.param.name = ps->lx.tok.v.s;
        if ((rc = next(ps)))
            return rc;
    }
    *out = e;
    return 0;
}

static int parse_primary(parser *ps, const ads_expr **out)
{
    token *t = &ps->lx.tok;
    int rc;
    switch (t->kind) {
    case T_INT:
        return literal(ps, out, ads_int(t->v.i));
    case T_REAL:
        return literal(ps, out, ads_real(t->v.r));
    case T_STRING:
        return literal(ps, out, ads_string(t->v.s.p, t->v.s.len));
    case T_TRUE:
        return literal(ps, out, ads_bool(true));
    case T_FALSE:
        return literal(ps, out, ads_bool(false));
    case T_UNDEFINED:
        return literal(ps, out, ads_undefined());
    case T_ERRORKW:
        return literal(ps, out, ads_errorv());
    case T_ID:
        return literal(ps, out, ads_ident(t->v.id));
    case T_ABSTIME:
        return literal(ps, out, ads_abstime(t->v.abs.secs, t->v.abs.offset));
    case T_RELTIME:
        return literal(ps, out, ads_reltime(t->v.rel));
    case T_NAME: {
        ads_str name = t->v.s;
        bool quoted = t->quoted;
        if ((rc = next(ps)))
            return rc;
        if (!quoted && ps->lx.tok.kind == T_LPAREN)
            return parse_call(ps, name, out);
        ads_expr *e = node(ps, N_ATTR);
        if (!e)
            return oom(ps);
        e->u.attr.name = name;
        e->u.attr.hash = ads_name_hash(name.p, name.len);
        e->quoted = quoted;
        *out = e;
        return 0;
    }
    case T_DOT: { /* .name: from the outermost record */
        if ((rc = next(ps)))
            return rc;
        if (ps->lx.tok.kind != T_NAME)
            return fail_tok(ps, "an attribute name after '.'");
        ads_expr *e = node(ps, N_ATTR);
        if (!e)
            return oom(ps);
        e->u.attr.name = ps->lx.tok.v.s;
        e->u.attr.hash = ads_name_hash(e->u.attr.name.p, e->u.attr.name.len);
        e->quoted = ps->lx.tok.quoted;
        e->scope = SCOPE_ROOT;
        *out = e;
        return next(ps);
    }
    case T_LPAREN: {
        const ads_expr *inner;
        if ((rc = next(ps)) || (rc = parse_expr(ps, &inner)))
            return rc;
        if (ps->lx.tok.kind != T_RPAREN)
            return fail_tok(ps, "')'");
        ads_expr *e = node(ps, N_PAREN);
        if (!e)
            return oom(ps);
        e->u.ops.a = inner;
        *out = e;
        return next(ps);
    }
    case T_LBRACE:
        return parse_list(ps, out);
    case T_QUESTION:
    case T_COLON:
        if (!ps->params)
            return fail_tok(ps, "an expression");
        return parse_param(ps, out);
    case T_LBRACKET: {
        const ads_record *r;
        if ((rc = parse_record_body(ps, &r)))
            return rc;
        ads_expr *e = node(ps, N_RECORD);
        if (!e)
            return oom(ps);
        e->u.rec = r;
        *out = e;
        return 0;
    }
    default:
        return fail_tok(ps, "an expression");
    }
}

/* Selections and subscripts nest (a.b.c is (a.b).c, and every walk over
 * the tree recurses into the base), so each counts a level of depth. */
static int parse_postfix(parser *ps, const ads_expr **out)
{
    int rc, levels = 0;
    if ((rc = parse_primary(ps, out)))
        return rc;
    for (;; levels++) {
        token *t = &ps->lx.tok;
        if (t->kind != T_DOT && t->kind != T_LBRACKET) {
            ps->depth -= levels;
            return 0;
        }
        if ((rc = enter(ps)))
            return rc;
        if (t->kind == T_DOT) {
            if ((rc = next(ps)))
                return rc;
            if (ps->lx.tok.kind != T_NAME)
                return fail_tok(ps, "an attribute name after '.'");
            ads_expr *e = node(ps, N_SELECT);
            if (!e)
                return oom(ps);
            e->u.sel.base = *out;
            e->u.sel.name = ps->lx.tok.v.s;
            e->u.sel.hash = ads_name_hash(e->u.sel.name.p, e->u.sel.name.len);
            e->quoted = ps->lx.tok.quoted;
            *out = e;
            if ((rc = next(ps)))
                return rc;
        } else {
            const ads_expr *index;
            if ((rc = next(ps)) || (rc = parse_expr(ps, &index)))
                return rc;
            if (ps->lx.tok.kind != T_RBRACKET)
                return fail_tok(ps, "']' after a subscript");
            ads_expr *e = node(ps, N_INDEX);
            if (!e)
                return oom(ps);
            e->u.ops.a = *out;
            e->u.ops.b = index;
            *out = e;
            if ((rc = next(ps)))
                return rc;
        }
    }
}

static int parse_unary(parser *ps, const ads_expr **out)
{
    op_kind op;
    int rc;
    switch (ps->lx.tok.kind) {
    case T_MINUS: op = OP_NEG; break;
    case T_PLUS: op = OP_PLUS; break;
    case T_TILDE: op = OP_BITNOT; break;
    case T_BANG: op = OP_NOT; break;
    default:
        return parse_postfix(ps, out);
    }
    const ads_expr *a;
    if ((rc = enter(ps)) || (rc = next(ps)) || (rc = parse_unary(ps, &a)))
        return rc;
    ps->depth--;
    ads_expr *e = node(ps, N_UNARY);
    if (!e)
        return oom(ps);
    e->op = (uint8_t)op;
    e->u.ops.a = a;
    *out = e;
    return 0;
}

/* ---- binary operators: precedence climbing ---- */

#define BINARY_LEVELS 10

/* The binary operator each token starts, and its level (1 = ||, loosest,
 * to BINARY_LEVELS = multiplicative); level 0 for a token that is no
 * binary operator. */
typedef struct binop {
    uint8_t level, op;
} binop;

static const binop binops[T_KINDS] = {
    [T_OROR] = {1, OP_OR},       [T_ANDAND] = {2, OP_AND},     [T_PIPE] = {3, OP_BITOR},
    [T_CARET] = {4, OP_BITXOR},  [T_AMP] = {5, OP_BITAND},     [T_EQ] = {6, OP_EQ},
    [T_NE] = {6, OP_NE},         [T_META_EQ] = {6, OP_IS},     [T_IS] = {6, OP_IS},
    [T_META_NE] = {6, OP_ISNT},  [T_ISNT] = {6, OP_ISNT},      [T_EQUIV] = {6, OP_EQUIV},
    [T_IN] = {6, OP_IN},         [T_LT] = {7, OP_LT},          [T_LE] = {7, OP_LE},
    [T_GT] = {7, OP_GT},         [T_GE] = {7, OP_GE},          [T_SHL] = {8, OP_SHL},
    [T_SHR] = {8, OP_SHR},       [T_USHR] = {8, OP_USHR},      [T_PLUS] = {9, OP_ADD},
    [T_MINUS] = {9, OP_SUB},     [T_STAR] = {10, OP_MUL},      [T_SLASH] = {10, OP_DIV},
    [T_PERCENT] = {10, OP_MOD},
};

/* Binary operators, left-associative, by precedence: operands are read
 * in a loop, and each operator waits for its right operand on a stack
 * until an operator that binds no tighter (or the end of the chain) comes
 * and completes it. The waiting operators' levels rise strictly up the
 * stack, so at most BINARY_LEVELS wait. Each waiting operator counts a
 * level of depth, as when each right operand was parsed by a recursive
 * call; the tree and the errors are the same, without a call per
 * operator. */
static int parse_binary(parser *ps, const ads_expr **out)
{
    struct {
        const ads_expr *left;
        binop op;
    } wait[BINARY_LEVELS];
    int n = 0, rc;
    const ads_expr *right;
    if ((rc = parse_unary(ps, &right)))
        return rc;
    for (;;) {
        binop next_op = binops[ps->lx.tok.kind]; /* level 0: the chain ends */
        while (n > 0 && wait[n - 1].op.level >= next_op.level) {
            n--;
            ps->depth--;
            op_kind op = (op_kind)wait[n].op.op;
            ads_expr *e = node(ps, op == OP_AND ? N_AND : op == OP_OR ? N_OR : N_BINARY);
            if (!e)
                return oom(ps);
            e->op = (uint8_t)op;
            e->u.ops.a = wait[n].left;
            e->u.ops.b = right;
            right = e;
        }
        if (next_op.level == 0) {
            *out = right;
            return 0;
        }
        assert(n < BINARY_LEVELS);
        wait[n].left = right;
        wait[n].op = next_op;
        n++;
        if ((rc = next(ps)) || (rc = enter(ps)) || (rc = parse_unary(ps, &right)))
            return rc;
    }
}

/* cond: or ('?' expr ':' cond | '?:' cond)? -- right-associative */
static int parse_expr(parser *ps, const ads_expr **out)
{
    int rc;
    if ((rc = enter(ps)) || (rc = parse_binary(ps, out)))
        return rc;
    if (ps->lx.tok.kind == T_QUESTION) {
        const ads_expr *a, *b;
        if ((rc = next(ps)) || (rc = parse_expr(ps, &a)))
            return rc;
        if (ps->lx.tok.kind != T_COLON)
            return fail_tok(ps, "':' in a conditional expression");
        if ((rc = next(ps)) || (rc = parse_expr(ps, &b)))
            return rc;
        ads_expr *e = node(ps, N_COND);
        if (!e)
            return oom(ps);
        e->u.ops.a = *out;
        e->u.ops.b = a;
        e->u.ops.c = b;
        *out = e;
    } else if (ps->lx.tok.kind == T_ELVIS) {
        const ads_expr *b;
        if ((rc = next(ps)) || (rc = parse_expr(ps, &b)))
            return rc;
        ads_expr *e = node(ps, N_ELVIS);
        if (!e)
            return oom(ps);
        e->u.ops.a = *out;
        e->u.ops.b = b;
        *out = e;
    }
    ps->depth--;
    return 0;
}

/* '[' current. Attributes `name = expr` (or :=) separated by ';' (extra
 * ';' allowed). */
static int parse_record_body(parser *ps, const ads_record **out)
{
    ads_record_builder *b;
    int rc;
    if ((rc = enter(ps)) || (rc = ads_record_builder_new(&b, ps->arena, ps->err)) ||
        (rc = next(ps)))
        return rc;
    for (;;) {
        while (ps->lx.tok.kind == T_SEMI)
            if ((rc = next(ps)))
                return rc;
        if (ps->lx.tok.kind == T_RBRACKET)
            break;
        ads_str name = ps->lx.tok.v.s;
        switch (ps->lx.tok.kind) {
        case T_NAME:
            break;
        case T_TRUE: case T_FALSE: case T_UNDEFINED: case T_ERRORKW:
        case T_IS: case T_ISNT: case T_IN:
            /* a keyword before '=' can only be a name (HTCondor's ads have
             * `In`); in expressions true, false, undefined and error stay
             * literals: write 'Error' to read such an attribute */
            name.p = ps->lx.tok.start;
            name.len = ps->lx.tok.len;
            break;
        default:
            return fail_tok(ps, "an attribute name or ']' in a record");
        }
        if ((rc = next(ps)))
            return rc;
        if (ps->lx.tok.kind != T_ASSIGN && ps->lx.tok.kind != T_COLONASSIGN)
            return fail_tok(ps, "'=' after an attribute name");
        const ads_expr *value;
        if ((rc = next(ps)) || (rc = parse_expr(ps, &value)))
            return rc;
        if ((rc = ads_record_builder_add(b, name.p, name.len, value, ps->err)))
            return rc;
        if (ps->lx.tok.kind == T_SEMI)
            continue;
        if (ps->lx.tok.kind != T_RBRACKET)
            return fail_tok(ps, "';' or ']' after an attribute");
    }
    const ads_record *r = ads_record_builder_finish(b);
    if (!r)
        return oom(ps);
    *out = r;
    ps->depth--;
    return next(ps);
}

static int start(parser *ps, ads_arena *a, const char *text, size_t len, ads_error *err)
{
    ps->arena = a;
    ps->err = err;
    ps->depth = 0;
    ps->query = false;
    ps->params = false;
    if (!a || (!text && len))
        return ads_error_set(err, ADS_EINVAL, "parse: NULL argument");
    if (len > ADS_MAX_TEXT)
        return ads_error_set(err, ADS_ELIMIT, "parse: text of %zu bytes is over the limit",
                             len);
    /* Names and strings in the tree point into the text: lex a copy in the
     * arena, so the tree depends on nothing the caller may reuse. */
    char *copy = ads_arena_strndup(a, text ? text : "", len);
    if (!copy)
        return ads_error_set(err, ADS_ENOMEM, "parse: out of memory");
    return ads_lex__init(&ps->lx, copy, len, a, err);
}

int ads_expr_parse(const ads_expr **out, ads_arena *a, const char *text, size_t len,
                   ads_error *err)
{
    parser ps;
    const ads_expr *e;
    int rc;
    if ((rc = start(&ps, a, text, len, err)) || (rc = parse_expr(&ps, &e)))
        return rc;
    if (ps.lx.tok.kind != T_EOF)
        return fail_tok(&ps, "an operator or the end of the expression");
    *out = e;
    return 0;
}

int ads_record_parse(const ads_record **out, ads_arena *a, const char *text, size_t len,
                     ads_error *err)
{
    parser ps;
    const ads_record *r;
    int rc;
    if ((rc = start(&ps, a, text, len, err)))
        return rc;
    if (ps.lx.tok.kind != T_LBRACKET)
        return fail_tok(&ps, "'[' to start a record");
    if ((rc = parse_record_body(&ps, &r)))
        return rc;
    if (ps.lx.tok.kind != T_EOF)
        return fail_tok(&ps, "the end of the record");
    *out = r;
    return 0;
}

int ads_expr_parse_prefix(const ads_expr **out, ads_arena *a, const char *text, size_t len,
                          size_t start_at, unsigned flags, size_t *end, ads_error *err)
{
    parser ps;
    const ads_expr *e;
    int rc;
    ps.arena = a;
    ps.err = err;
    ps.depth = 0;
    ps.query = (flags & ADS_PARSE_QUERY) != 0;
    ps.params = (flags & ADS_PARSE_PARAMS) != 0;
    if (!out || !a || !end || (!text && len) || start_at > len)
        return ads_error_set(err, ADS_EINVAL, "parse: NULL argument");
    if (len > ADS_MAX_TEXT)
        return ads_error_set(err, ADS_ELIMIT, "parse: text of %zu bytes is over the limit", len);
    const char *t = text ? text : "";
    if (!(flags & ADS_PARSE_NOCOPY) && !(t = ads_arena_strndup(a, t, len)))
        return ads_error_set(err, ADS_ENOMEM, "parse: out of memory");
    if ((rc = ads_lex__init_at(&ps.lx, t, len, start_at, ps.query, a, err)) ||
        (rc = parse_expr(&ps, &e)))
        return rc;
    *out = e;
    *end = (size_t)(ps.lx.tok.start - t);
    return 0;
}
