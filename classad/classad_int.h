/*
 * classad/classad_int.h: what the files of the classad module share and no
 * other module may include: the expression tree, the record layout, the
 * evaluation context, the built-in function interface, and the time helpers.
 */
#ifndef ADS_CLASSAD_INT_H
#define ADS_CLASSAD_INT_H

#include <stdatomic.h>
#include <stdlib.h>

#include "classad/classad.h"

/* ---- the lexer (classad/lexer.c) ---- */

typedef enum tok_kind {
    T_EOF, T_ERROR_TOKEN,
    T_INT, T_REAL, T_STRING, T_NAME, T_ID, T_ABSTIME, T_RELTIME,
    T_TRUE, T_FALSE, T_UNDEFINED, T_ERRORKW, T_IS, T_ISNT, T_IN,
    T_LPAREN, T_RPAREN, T_LBRACKET, T_RBRACKET, T_LBRACE, T_RBRACE,
    T_COMMA, T_SEMI, T_DOT, T_QUESTION, T_COLON, T_ELVIS, T_ASSIGN, T_COLONASSIGN,
    T_PLUS, T_MINUS, T_STAR, T_SLASH, T_PERCENT, T_SHL, T_SHR, T_USHR,
    T_LT, T_LE, T_GT, T_GE, T_EQ, T_NE, T_META_EQ, T_META_NE, T_EQUIV,
    T_AMP, T_CARET, T_PIPE, T_ANDAND, T_OROR, T_BANG, T_TILDE,
    T_KINDS /* not a token: the number of kinds, for tables indexed by kind */
} tok_kind;

typedef struct token {
    tok_kind kind;
    const char *start; /* the token's text in the source */
    size_t len;
    int line, column;  /* 1-based, of the first byte */
    union {
        int64_t i;
        double r;
        ads_str s; /* T_STRING: decoded bytes (arena); T_NAME: the name (decoded if quoted) */
        ads_id id;
        struct {
            double secs;
            int32_t offset;
        } abs;
        double rel;
    } v;
    bool quoted; /* T_NAME written as 'name' */
} token;

typedef struct lexer {
    const char *text; /* the whole text (offsets count from it) */
    const char *p, *end, *line_start;
    int line;
    ads_arena *arena;
    ads_error *err;
    bool value_before; /* the previous token ends a value: '-' then is binary */
    bool query;        /* the statement language's extras: `name@(` and `@name` */
    token tok;         /* the current token */
} lexer;

/* Start lexing text; reads the first token. 0 or an ADS_E* code (err set). */
int ads_lex__init(lexer *lx, const char *text, size_t len, ads_arena *a, ads_error *err);
/* The same from byte `start` of text (lines and columns still count from
 * text's first byte), in the statement language's mode if query. */
int ads_lex__init_at(lexer *lx, const char *text, size_t len, size_t start, bool query,
                     ads_arena *a, ads_error *err);
/* Move to the next token. 0 or an ADS_E* code (err set, with line and column). */
int ads_lex__next(lexer *lx);
/* A short description of a token for messages: "'+'", "the name foo", "end of input". */
const char *ads_lex__describe(const token *t, char *buf, size_t cap);

/* ---- the expression tree ---- */

typedef enum node_kind {
    N_LITERAL, /* u.lit */
    N_ATTR,    /* u.attr: a name looked up through the scopes */
    N_SELECT,  /* u.sel: base.name */
    N_INDEX,   /* u.ops.a[u.ops.b] */
    N_UNARY,   /* op u.ops.a */
    N_BINARY,  /* u.ops.a op u.ops.b (strict operators, is, isnt, ===, in) */
    N_AND,     /* u.ops.a && u.ops.b */
    N_OR,      /* u.ops.a || u.ops.b */
    N_COND,    /* u.ops.a ? u.ops.b : u.ops.c */
    N_ELVIS,   /* u.ops.a ?: u.ops.b */
    N_CALL,    /* u.call */
    N_LIST,    /* u.list */
    N_RECORD,  /* u.rec */
    N_PAREN,   /* (u.ops.a): kept so unparse shows the parentheses written */
    N_PARAM    /* u.param: a statement's placeholder, `?` or `:name` (ADS_PARSE_PARAMS) */
} node_kind;

typedef enum op_kind {
    OP_NONE,
    /* unary */
    OP_NEG, OP_PLUS, OP_BITNOT, OP_NOT,
    /* binary, by precedence groups */
    OP_MUL, OP_DIV, OP_MOD,
    OP_ADD, OP_SUB,
    OP_SHL, OP_SHR, OP_USHR,
    OP_LT, OP_LE, OP_GT, OP_GE,
    OP_EQ, OP_NE, OP_IS, OP_ISNT, OP_EQUIV, OP_IN,
    OP_BITAND, OP_BITXOR, OP_BITOR,
    OP_AND, OP_OR,
    OP_COUNT
} op_kind;

/* How an N_ATTR name is resolved. */
typedef enum attr_scope {
    SCOPE_NORMAL,  /* the record, then its enclosing records */
    SCOPE_ROOT     /* `.name`: from the outermost record */
} attr_scope;

typedef struct ads_builtin ads_builtin;

struct ads_expr {
    uint8_t kind;  /* node_kind */
    uint8_t op;    /* op_kind for N_UNARY / N_BINARY */
    uint8_t scope; /* attr_scope for N_ATTR */
    uint8_t quoted; /* N_ATTR / N_SELECT: the name was written 'quoted';
                       N_CALL: 1 if written name(*) (the statement language's count(*)) */
    union {
        ads_value lit;
        struct {
            ads_str name;
            uint32_t hash;
            /* where the name was last found: its index among the record's
             * attributes, tried before searching (records of one source
             * share their layout). Only a hint, shared by every thread
             * evaluating the expression: read and written atomically. */
            _Atomic uint32_t hint;
        } attr;
        struct {
            const ads_expr *base;
            ads_str name;
            uint32_t hash;
        } sel;
        struct {
            const ads_expr *a, *b, *c;
            /* the root of a prepared expression: its flat program
             * (classad/program.c), used only while prog->node is this
             * very node (a copy of the node is evaluated as a tree);
             * NULL everywhere else */
            const struct ads_prog *prog;
        } ops;
        struct {
            const ads_builtin *fn; /* NULL: unknown function, evaluates to error */
            ads_str name;          /* as written */
            const ads_expr *const *args;
            size_t n;
        } call;
        struct {
            const ads_expr *const *items;
            size_t n;
        } list;
        const ads_record *rec;
        struct {
            ads_str name;  /* `:name`'s name; empty for `?` */
            size_t offset; /* of the `?` or `:` in the parsed text */
            int line, column;
        } param;
    } u;
};

/* ---- flat chains of binary operators (classad/inspect.c) ---- */

/*
 * The parser builds `a + b + c` as ((a + b) + c): a chain of operators of one
 * level (or of levels that bind tighter down the left) grows to the left, one
 * node per operand. Real Requirements hold hundreds of `||` terms, and text
 * can hold hundreds of thousands, so no walk may recurse down a chain: each
 * follows the left operands in a loop (its "spine"), collecting the operator
 * nodes when it must come back up (to evaluate left to right, or to write
 * text), and recurses only into right operands and other children. A chain
 * is thus one level of nesting however long (ADS_MAX_DEPTH).
 */
static inline bool ads_expr__is_binop(const ads_expr *e)
{
    return e->kind == N_BINARY || e->kind == N_AND || e->kind == N_OR;
}

/* A chain's operator nodes, top first; short chains need no allocation. */
typedef struct ads_spine {
    const ads_expr **nodes;
    size_t n, cap;
    const ads_expr *local[32];
} ads_spine;

/* Whether call (an N_CALL) gives a result that depends only on its
 * arguments (never on the clock, randomness, the process's zone or the
 * record): the functions ads_expr_prepare folds (prepare.c). */
bool ads_expr__pure_call(const ads_expr *call);

/* Make room for more nodes (heap). 0, or ADS_ENOMEM (s unchanged). */
int ads_spine__grow(ads_spine *s);

/* Inline: evaluation walks a spine per chain per record. */
static inline void ads_spine__init(ads_spine *s)
{
    s->nodes = s->local;
    s->n = 0;
    s->cap = sizeof s->local / sizeof s->local[0];
}

/* Append e. 0, or ADS_ENOMEM (s unchanged). */
static inline int ads_spine__push(ads_spine *s, const ads_expr *e)
{
    if (s->n == s->cap && ads_spine__grow(s))
        return ADS_ENOMEM;
    s->nodes[s->n++] = e;
    return 0;
}

static inline void ads_spine__free(ads_spine *s)
{
    if (s->nodes != s->local)
        free(s->nodes);
    ads_spine__init(s);
}

/* ---- records ---- */

struct ads_record {
    size_t n;
    const ads_str *names;
    const ads_expr *const *exprs;
    const uint32_t *hashes;
    /* open-addressing index: cap slots (a power of two), each 0 or index + 1 */
    const uint32_t *slots;
    size_t cap;
    /* the one block holding all of the above (ads_record__index), or NULL */
    const void *block;
    size_t block_len;
};

/* e (memory the caller has) made the literal node of v: ads_expr_literal
 * for a caller that allocates its nodes a block at a time. e. */
const ads_expr *ads_expr__literal_in(ads_expr *e, const ads_value *v);

/* A record of the n attributes in the arrays given (kept where they are:
 * in a's memory, or memory that outlives the record) and a copy of the
 * index slots (cap of them, as ads_record::cap): the index of a record of
 * the very same names in the same order, with no name twice. NULL when out
 * of memory. */
const ads_record *ads_record__with_index(ads_arena *a, const ads_str *names,
                                         const ads_expr *const *exprs, const uint32_t *hashes,
                                         size_t n, const uint32_t *slots, size_t cap);

/* ads_record_builder_finish without the block: the record keeps the
 * builder's arrays and index, so its names and expressions stay where the
 * caller put them (they must live as long as the record). For records that
 * are encoded and stored rather than evaluated many times, the records of
 * the JSON and long readers: laying out the block and indexing it again
 * was about 5% of a job ad's `adstore import`. */
const ads_record *ads_record__builder_finish_plain(ads_record_builder *b);

/* ads_record_builder_add with h, the ads_name_hash of name, known (a
 * reader that remembers the names of the record before). */
int ads_record__builder_add_hashed(ads_record_builder *b, const char *name, size_t len,
                                   uint32_t h, const ads_expr *expr, ads_error *err);

/* Index r, a record of the n attributes names/exprs/hashes (which must
 * outlive it), laying it out in one block of arena a (literal nodes, names
 * and string literals copied into it). Never fails: without memory, r is
 * left unindexed and searched linearly. */
void ads_record__index(ads_arena *a, ads_record *r, size_t n, const ads_str *names,
                       const ads_expr *const *exprs, const uint32_t *hashes);

/* Ask the processor to start loading r's block (a hint; a no-op where the
 * compiler has no way to say it): the lines then arrive together instead
 * of one cache miss after another as evaluation walks the record. */
#define ADS_CACHE_LINE 64
void ads_record__prefetch(const ads_record *r);
/* The same for len bytes at p (the first ADS_PREFETCH_MAX of them). */
void ads__prefetch(const void *p, size_t len);

/* Find attribute name in r: its index, or -1. */
long ads_record__find(const ads_record *r, const char *name, size_t len, uint32_t hash);

/* The same, trying the index *hint first and leaving the index found there
 * (hint NULL: none). */
long ads_record__find_hinted(const ads_record *r, const char *name, size_t len, uint32_t hash,
                             _Atomic uint32_t *hint);

/* The view operations of in-memory records (ads_record_view). */
extern const ads_view_ops ads_record__view_ops;

/* The canonical order of attribute names in a MessagePack row (one rule for
 * the writer that sorts them and the reader that checks them): ASCII
 * case-folded bytes, the shorter name first on a tie. */
static inline unsigned char ads_msgpack__fold(unsigned char c)
{
    return (c >= 'A' && c <= 'Z') ? (unsigned char)(c | 0x20) : c;
}

static inline int ads_msgpack__name_cmp(const unsigned char *a, size_t alen,
                                        const unsigned char *b, size_t blen)
{
    size_t n = alen < blen ? alen : blen;
    for (size_t i = 0; i < n; i++) {
        unsigned char x = ads_msgpack__fold(a[i]), y = ads_msgpack__fold(b[i]);
        if (x != y)
            return x < y ? -1 : 1;
    }
    return alen < blen ? -1 : alen > blen;
}

/* The view operations over MessagePack rows (ads_msgpack_view_get); their
 * lookup with an index hint is ads_msgpack__lookup (msgpack_int.h). */
struct ads_msgpack_view;
struct ads_msgpack_names;
extern const ads_view_ops ads_msgpack__view_ops;
/* Its fast path: 1 with *value when attribute hint of the row is name,
 * spelled the same (a short name), holding a plain scalar not decoded yet
 * (what ads_msgpack__lookup would give then); 0: ask ads_msgpack__lookup. */
int ads_msgpack__quick(ads_value *value, const struct ads_msgpack_view *mv, const char *name,
                       size_t len, uint32_t hint);

#include "classad/msgpack_int.h"

/* Case-insensitive (ASCII) comparison of two names. */
bool ads_name__eq(const char *a, size_t alen, const char *b, size_t blen);

/* ---- evaluation ---- */

typedef struct active_attr {
    const void *self;   /* the view's record */
    const ads_expr *expr;
} active_attr;

typedef struct ads_eval_ctx {
    ads_arena *arena;
    const ads_view *root; /* the outermost view, for toplevel and `.name` */
    const ads_view *my;   /* the view evaluation started in (TARGET from the target) */
    const ads_view *target;      /* TARGET's record (ads_expr_eval_match), or NULL */
    const ads_view *target_root; /* its outermost view: toplevel inside the target */
    int depth;
    int nactive;
    uint64_t attr_evals;               /* attribute expressions evaluated (a budget) */
    active_attr active[ADS_MAX_DEPTH]; /* attributes being evaluated: cycle check */
    bool oom;                          /* an allocation failed */
} ads_eval_ctx;

/* Truth values for && || ! ?: (booleans, and numbers: nonzero is true). */
typedef enum ads_truth { ADS_T_FALSE, ADS_T_TRUE, ADS_T_UNDEF, ADS_T_ERR } ads_truth;

static inline ads_truth ads_truth__of(const ads_value *v)
{
    switch (v->type) {
    case ADS_BOOLEAN:
        return v->u.b ? ADS_T_TRUE : ADS_T_FALSE;
    case ADS_INTEGER:
        return v->u.i != 0 ? ADS_T_TRUE : ADS_T_FALSE;
    case ADS_REAL:
        return v->u.r != 0 ? ADS_T_TRUE : ADS_T_FALSE;
    case ADS_UNDEFINED:
        return ADS_T_UNDEF;
    default:
        return ADS_T_ERR;
    }
}

/* Evaluate e in view (never NULL here) within cx. On allocation failure sets
 * cx->oom and yields error. Built-ins call it for the arguments they need. */
void ads_eval__expr(ads_value *out, ads_eval_ctx *cx, const ads_expr *e, const ads_view *view);

/* An attribute reference (e, an N_ATTR node) evaluated at cx->depth as
 * ads_eval__expr evaluates it one level down; and a unary operator on a
 * value. For the flat programs of classad/program.c. */
void ads_eval__attr(ads_value *out, ads_eval_ctx *cx, const ads_expr *e, const ads_view *view);
void ads_eval__unary(ads_value *out, op_kind op, const ads_value *a);

/* ---- flat programs of prepared expressions (classad/program.c) ---- */

typedef struct ads_prog_op ads_prog_op; /* one instruction (program.c) */

typedef struct ads_prog {
    const ads_expr *node; /* the node compiled (see ads_expr's u.ops.prog) */
    const ads_prog_op *ops;
    size_t n;
} ads_prog;

/* The program of e, a prepared expression's root, in arena a; NULL when e
 * is not worth one (a literal, a call) or needs more than a program covers
 * (ADS_PROG_STACK, ADS_PROG_DEPTH), or memory runs out: e is then
 * evaluated as a tree, with the same result. */
const ads_prog *ads_prog__compile(ads_arena *a, const ads_expr *e);

/* The program of e if e is the node a program was compiled for, else NULL. */
static inline const ads_prog *ads_prog__of(const ads_expr *e)
{
    if (!ads_expr__is_binop(e) && e->kind != N_UNARY)
        return NULL;
    const ads_prog *p = e->u.ops.prog;
    return p && p->node == e ? p : NULL;
}

/* Run p in view within cx (depth 0): the value ads_eval__expr gives for
 * the node p was compiled from. */
void ads_prog__run(ads_value *out, ads_eval_ctx *cx, const ads_prog *p, const ads_view *view);
/* A bare attribute's value read in place where its name was found the last
 * time (what the program's attribute instruction reads); false: evaluate it. */
bool ads_prog__attr_quick(ads_value *out, const ads_expr *e, const ads_view *view);

/* Allocate in the evaluation's arena; NULL (and cx->oom set) on failure. */
void *ads_eval__alloc(ads_eval_ctx *cx, size_t n);

/* Binary operator semantics on two values (strict operators, is, isnt,
 * ===, in), as the evaluator applies them; for anyCompare and friends. */
void ads_eval__binary(ads_value *out, ads_eval_ctx *cx, op_kind op, const ads_value *a,
                      const ads_value *b);

/* Numeric view of a value for arithmetic: 1 int, 2 real, 0 not a number
 * (booleans count as the integers 0 and 1). */
int ads_value__number(const ads_value *v, int64_t *i, double *r);

/* Case-insensitive byte-wise comparison of two strings (-1, 0, 1), as the
 * comparison operators compare strings. */
int ads_value__strcmp_fold(ads_str a, ads_str b);

/* ---- built-in functions ---- */

/*
 * A built-in receives its arguments unevaluated (most evaluate them all with
 * ads_eval__expr; ifThenElse, unparse and others do not), the view they are
 * called in, and the context. It sets *out (error for bad arguments, never a
 * C error). The table checks arity first: min_args..max_args (-1: no limit).
 */
typedef void (*ads_builtin_fn)(ads_value *out, ads_eval_ctx *cx, const ads_view *view,
                               const ads_expr *const *args, size_t n);

struct ads_builtin {
    const char *name; /* canonical spelling (lookup ignores case) */
    ads_builtin_fn fn;
    int min_args, max_args;
};

/* Each builtins_*.c file exports one table; ads_builtin__find searches them. */
extern const ads_builtin ads_builtins__core[];
extern const size_t ads_builtins__core_count;
extern const ads_builtin ads_builtins__string[];
extern const size_t ads_builtins__string_count;
extern const ads_builtin ads_builtins__time[];
extern const size_t ads_builtins__time_count;

/* The built-in named name (case-insensitive), or NULL. */
const ads_builtin *ads_builtin__find(const char *name, size_t len);

/* ---- time (classad/time.c) ---- */

/*
 * Parse an AbsTime text: YYYY-MM-DDThh:mm:ss[.frac] with an optional zone
 * `Z`, `+hhmm`, `+hh:mm` (or `-`); no zone means the process's local zone.
 * Returns 0, or -1 if the text is not a time.
 */
int ads_time__parse_abs(const char *s, size_t len, double *secs, int32_t *offset);

/*
 * Parse a RelTime text: `[-]` then either seconds (`90`, `1.5`), unit form
 * (`1d2h3m4.5s`, units d h m s in that order, each optional), or clock form
 * (`[d+]hh:mm[:ss[.frac]]`, as HTCondor writes `1+02:03:04.5`). 0 or -1.
 */
int ads_time__parse_rel(const char *s, size_t len, double *secs);

/* adstore style: `2011-12-13T12:00:00-05:00` (Z for UTC; fractional seconds
 * only when present) and `1d2h3m4.5s` (zero components left out, `0s`). No
 * backticks. */
void ads_time__format_abs(ads_buf *b, double secs, int32_t offset);
void ads_time__format_rel(ads_buf *b, double secs);

/* HTCondor style, inside absTime("...") / relTime("..."): offset always
 * written as +hh:mm or -hh:mm, reltime as [-][d+]hh:mm:ss[.fff] with leading
 * zero parts left out as HTCondor does. No quotes. */
void ads_time__format_abs_condor(ads_buf *b, double secs, int32_t offset);
void ads_time__format_rel_condor(ads_buf *b, double secs);

/*
 * Whether a time can be written as text that reads back equal (spec section
 * 7): an AbsTime within 2^53 seconds of the epoch (years beyond 0000..9999
 * are written `+10000-01-01T...`, `-0001-...`) whose zone is whole minutes
 * and less than a day either way; a finite RelTime. Evaluation turns any
 * other time into error (docs/classad.md).
 */
bool ads_time__abs_ok(double secs, int32_t offset);
bool ads_time__rel_ok(double secs);

/* The local zone's offset (seconds east of UTC) at instant secs. */
int32_t ads_time__local_offset(double secs);

/* ---- identifiers and strings shared by the files ---- */

/* Unparse helpers shared with the built-ins: a string literal with C escapes
 * (with the quotes), and an attribute name (quoted when it must be). */
void ads_unparse__string(ads_buf *b, const char *p, size_t len);
void ads_unparse__name(ads_buf *b, const char *p, size_t len);
/* The spelling of an operator ("==", "&&", ...), "" for none. */
const char *ads_unparse__op_text(int op);

#endif
