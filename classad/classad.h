/*
 * classad/classad.h: the ClassAd language: values, expressions, records,
 * parsing, evaluation and writing (shared/spec/classad.md; the user's view is
 * docs/classad.md).
 *
 * Memory: everything a parse or an evaluation makes lives in an ads_arena the
 * caller passes in, and stays valid until that arena is reset or freed.
 * Values point into arenas (strings, lists, records) and are never freed one
 * by one. Parsed expressions are immutable: one prepared expression may be
 * evaluated from several threads at once, each with its own arena.
 *
 * Errors: C errors (ads_error, base/error.h) are for syntax, limits and
 * memory. ClassAd `undefined` and `error` are values: evaluation itself only
 * fails (ADS_ENOMEM) when memory runs out.
 */
#ifndef ADS_CLASSAD_H
#define ADS_CLASSAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../base/arena.h"
#include "../base/buf.h"
#include "../base/error.h"
#include "../base/limits.h"
#include "../idgen/idgen.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Values                                                                   */
/* ------------------------------------------------------------------------ */

typedef enum ads_vtype {
    ADS_UNDEFINED = 0,
    ADS_ERROR = 1,
    ADS_BOOLEAN = 2,
    ADS_INTEGER = 3,
    ADS_REAL = 4,
    ADS_STRING = 5,
    ADS_LIST = 6,
    ADS_RECORD = 7,
    ADS_ABSTIME = 8,
    ADS_RELTIME = 9,
    ADS_IDENT = 10,
    ADS_BLOB = 11
} ads_vtype;

typedef struct ads_value ads_value;
typedef struct ads_expr ads_expr;     /* a parsed expression (opaque) */
typedef struct ads_record ads_record; /* an in-memory record (opaque) */

/* Bytes with a length; not NUL-terminated unless said so. */
typedef struct ads_str {
    const char *p;
    size_t len;
} ads_str;

typedef struct ads_blob {
    ads_str bytes;
    const ads_record *meta; /* optional metadata record, or NULL */
} ads_blob;

struct ads_value {
    ads_vtype type;
    union {
        bool b;
        int64_t i;
        double r;
        ads_str s;
        struct {
            const ads_value *items;
            size_t n;
            const ads_expr *src; /* the list expression it came from, or NULL */
        } list;
        const ads_record *rec;
        struct {
            double secs;    /* the instant: seconds since 1970-01-01T00:00:00Z */
            int32_t offset; /* the zone: seconds east of UTC */
        } abs;
        double rel; /* seconds */
        ads_id id;
        const ads_blob *blob;
    } u;
};

/* Constructors (no allocation). */
static inline ads_value ads_undefined(void)
{
    ads_value v = {.type = ADS_UNDEFINED}; /* the whole union zeroed */
    return v;
}
static inline ads_value ads_errorv(void)
{
    ads_value v = {.type = ADS_ERROR}; /* the whole union zeroed */
    return v;
}
static inline ads_value ads_bool(bool b)
{
    ads_value v;
    v.type = ADS_BOOLEAN;
    v.u.b = b;
    return v;
}
static inline ads_value ads_int(int64_t i)
{
    ads_value v;
    v.type = ADS_INTEGER;
    v.u.i = i;
    return v;
}
static inline ads_value ads_real(double r)
{
    ads_value v;
    v.type = ADS_REAL;
    v.u.r = r;
    return v;
}
/* A string value over len bytes at p (not copied: p must outlive the value). */
static inline ads_value ads_string(const char *p, size_t len)
{
    ads_value v;
    v.type = ADS_STRING;
    v.u.s.p = p;
    v.u.s.len = len;
    return v;
}
static inline ads_value ads_abstime(double secs, int32_t offset)
{
    ads_value v;
    v.type = ADS_ABSTIME;
    v.u.abs.secs = secs;
    v.u.abs.offset = offset;
    return v;
}
static inline ads_value ads_reltime(double secs)
{
    ads_value v;
    v.type = ADS_RELTIME;
    v.u.rel = secs;
    return v;
}
static inline ads_value ads_ident(ads_id id)
{
    ads_value v;
    v.type = ADS_IDENT;
    v.u.id = id;
    return v;
}
static inline ads_value ads_list(const ads_value *items, size_t n)
{
    ads_value v;
    v.type = ADS_LIST;
    v.u.list.items = items;
    v.u.list.n = n;
    v.u.list.src = NULL;
    return v;
}
static inline ads_value ads_recordv(const ads_record *rec)
{
    ads_value v;
    v.type = ADS_RECORD;
    v.u.rec = rec;
    return v;
}

/* "undefined", "error", "boolean", "integer", "real", "string", "list",
 * "record", "abstime", "reltime", "identifier", "blob". */
const char *ads_vtype_name(ads_vtype t);

/* A string value holding a copy of len bytes of p, in arena a. ADS_ENOMEM. */
int ads_string_copy(ads_value *out, ads_arena *a, const char *p, size_t len);

/*
 * The three comparisons of the language (shared/spec/classad.md section 3).
 * ads_value_is: `is` (same type and value, strings case-sensitive, no
 * promotion; lists and records are never identical).
 * ads_value_equiv: `===` (as == for simple values, element-wise for lists
 * and records, always true or false).
 */
bool ads_value_is(const ads_value *a, const ads_value *b);
bool ads_value_equiv(const ads_value *a, const ads_value *b);

/*
 * Structural equality for tests and round trips: same type; integers,
 * booleans and strings exactly (case-sensitive); reals by value with two NaNs
 * equal; AbsTime by instant and offset; lists and records member by member
 * (record names case-insensitive, order ignored; a member that is an
 * unevaluated expression matches an expression tree alike node by node).
 */
bool ads_value_same(const ads_value *a, const ads_value *b);

/* ------------------------------------------------------------------------ */
/* Records                                                                  */
/* ------------------------------------------------------------------------ */

/* Number of attributes, and the i-th in stored order (0 <= i < n). */
size_t ads_record_size(const ads_record *r);
ads_str ads_record_name(const ads_record *r, size_t i);
const ads_expr *ads_record_expr(const ads_record *r, size_t i);

/* The expression of attribute name (case-insensitive), or NULL. */
const ads_expr *ads_record_lookup(const ads_record *r, const char *name, size_t len);

/*
 * Build a record in arena a: add attributes in order, then finish. A name
 * added twice keeps the last expression, at the first position (as
 * HTCondor does). Names starting with "__" are allowed here (the engine
 * refuses them). Errors: ADS_ENOMEM; ADS_EINVAL for an empty name.
 */
typedef struct ads_record_builder ads_record_builder;
int ads_record_builder_new(ads_record_builder **out, ads_arena *a, ads_error *err);
int ads_record_builder_add(ads_record_builder *b, const char *name, size_t len,
                           const ads_expr *expr, ads_error *err);
int ads_record_builder_add_value(ads_record_builder *b, const char *name, size_t len,
                                 const ads_value *v, ads_error *err);
/* The record (owned by the arena); the builder is used up. Never NULL (the
 * builder allocated it): out of memory here only makes lookups slower. */
const ads_record *ads_record_builder_finish(ads_record_builder *b);

/*
 * *out: r with attribute name = expr before its attributes, in arena a, as
 * a builder given name first and then r's attributes would make it: if r
 * has an attribute of that name (case-insensitive), its expression is the
 * one kept, in the first place under the spelling given here. r's names
 * and expressions are shared, not copied: *out is valid while r is. Costs
 * no hashing of r's names (a record copied through a builder rehashes
 * them all). Errors: ADS_ENOMEM; ADS_EINVAL for a NULL argument or an
 * empty name.
 */
int ads_record_prepend(const ads_record **out, ads_arena *a, const ads_record *r,
                       const char *name, size_t len, const ads_expr *expr, ads_error *err);

/* An expression that is just the value v (for building records). ADS_ENOMEM. */
int ads_expr_literal(const ads_expr **out, ads_arena *a, const ads_value *v, ads_error *err);

/* If e is a literal (no evaluation needed), its value; else NULL. */
const ads_value *ads_expr_literal_value(const ads_expr *e);

/* ------------------------------------------------------------------------ */
/* Record views: how evaluation reads attributes                            */
/* ------------------------------------------------------------------------ */

/*
 * Evaluation reads the attributes of the record it runs in through a view, so
 * the same expression runs against an in-memory record or straight against
 * stored bytes (classad/msgpack.h). lookup finds name (len bytes, compared
 * case-insensitively; hash is ads_name_hash of it): it returns 1 and sets
 * either *value (the attribute is a literal: the fast path) or *expr (an
 * expression to evaluate in this view's scope); 0 when absent; or a negative
 * ADS_E* code (corrupt bytes: evaluation then yields an error value).
 * Values returned must stay valid while the view does (or be made in arena).
 *
 * A record found this way is nested in the view's record: selecting a name
 * it lacks falls back to this view and its parents, as for any record
 * written inside another (`n.s` in [s = 1; n = [i = 2]] is 1). A view that
 * hands out a record standing alone (a join partner bound to a name, as the
 * statement language's JOIN aliases are) returns ADS_VIEW_DETACHED instead
 * of 1: the record's missing names are then undefined. Callers of lookup
 * treat any positive return as found.
 */
enum { ADS_VIEW_DETACHED = 2 };
typedef struct ads_view_ops {
    int (*lookup)(const void *self, const char *name, size_t len, uint32_t hash,
                  ads_arena *arena, ads_value *value, const ads_expr **expr);
    /* Optional (may be NULL): when lookup would answer name from a
     * MessagePack view (classad/msgpack.h) and from nothing else, that view,
     * so that evaluation can look the name up where it was found the last
     * time instead of asking lookup; NULL when lookup answers name itself. */
    struct ads_msgpack_view *(*data)(const void *self, const char *name, size_t len);
} ads_view_ops;

typedef struct ads_view {
    const ads_view_ops *ops;
    const void *self;
    const struct ads_view *parent; /* the enclosing record's view, or NULL */
} ads_view;

/* A view of an in-memory record (parent: the enclosing view, or NULL). */
ads_view ads_record_view(const ads_record *r, const ads_view *parent);

/* The case-insensitive hash of a name, as views receive it. */
uint32_t ads_name_hash(const char *name, size_t len);

/* ------------------------------------------------------------------------ */
/* Parsing                                                                  */
/* ------------------------------------------------------------------------ */

/* Limits (nesting depth, text size, attribute evaluations) are in
 * base/limits.h. Deeper or larger input is an error, never a crash. */

/*
 * Parse one expression from text (len bytes) into arena a. The tree keeps
 * no pointer into text (the caller may reuse it at once). Leading and
 * trailing white space and comments are allowed; anything else after the
 * expression is an error. Errors: ADS_ESYNTAX with err->line and err->column
 * (1-based, bytes) and a message saying what was found and what was
 * expected; ADS_ELIMIT (too deep, too long); ADS_ENOMEM.
 */
int ads_expr_parse(const ads_expr **out, ads_arena *a, const char *text, size_t len,
                   ads_error *err);

/* Flags for ads_expr_parse_prefix. */
enum {
    ADS_PARSE_NOCOPY = 1, /* the tree may point into text, which outlives it */
    ADS_PARSE_QUERY = 2,  /* the statement language's extras: calls named `name@`
                             (avg@(...)) and `@name` (@timerange(...)), and
                             name(*) as a call with no arguments marked star */
    ADS_PARSE_PARAMS = 4  /* placeholders for bound values where an operand may
                             start: `?` and `:name` (no space after the colon).
                             Where an operator may follow, `?` and `:` keep
                             their meaning (a ? b : c), and `?:` is always the
                             elvis operator. Evaluated, a placeholder is error:
                             its user replaces it (query/query.h binds them) */
};

/*
 * Parse the expression that starts at byte start of text (len bytes in all)
 * and stop before the first token that cannot continue it: *end receives
 * the offset of that token (or len). Lines and columns in errors count from
 * the first byte of text, so a statement parser gets positions in its own
 * text. Errors as ads_expr_parse.
 */
int ads_expr_parse_prefix(const ads_expr **out, ads_arena *a, const char *text, size_t len,
                          size_t start, unsigned flags, size_t *end, ads_error *err);

/* Parse a record "[ ... ]" (new syntax); errors as ads_expr_parse. */
int ads_record_parse(const ads_record **out, ads_arena *a, const char *text, size_t len,
                     ads_error *err);

/* ------------------------------------------------------------------------ */
/* Looking inside expressions (for the statement language's planner)       */
/* ------------------------------------------------------------------------ */

typedef enum ads_expr_kind {
    ADS_X_LITERAL,  /* ads_expr_literal_value */
    ADS_X_ATTR,     /* a name looked up in scope: ads_expr_name */
    ADS_X_ROOTATTR, /* `.name`: from the outermost record */
    ADS_X_SELECT,   /* base.name: arg 0 is the base, ads_expr_name the name */
    ADS_X_INDEX,    /* a[b]: args 0 and 1 */
    ADS_X_UNARY,    /* ads_expr_op, arg 0 */
    ADS_X_BINARY,   /* ads_expr_op ("==", "is", "===", "in", "+", ...), args 0 and 1 */
    ADS_X_AND,      /* args 0 && 1 */
    ADS_X_OR,       /* args 0 || 1 */
    ADS_X_COND,     /* 0 ? 1 : 2 */
    ADS_X_ELVIS,    /* 0 ?: 1 */
    ADS_X_CALL,     /* ads_expr_name(args...) */
    ADS_X_LIST,     /* { args... } */
    ADS_X_RECORD,   /* [ ... ]: ads_expr_record */
    ADS_X_PAREN,    /* ( arg 0 ) */
    ADS_X_PARAM     /* a placeholder (ADS_PARSE_PARAMS): ads_expr_param */
} ads_expr_kind;

ads_expr_kind ads_expr_kind_of(const ads_expr *e);
/* The operator's spelling for unary and binary nodes ("-", "!", "==", "is",
 * "isnt", "===", "in", "&&" ...), else "". */
const char *ads_expr_op(const ads_expr *e);
/* The name of an attribute, select or call node; empty for others. */
ads_str ads_expr_name(const ads_expr *e);
/* Children, as the kinds above say; 0 / NULL for others. */
size_t ads_expr_nargs(const ads_expr *e);
const ads_expr *ads_expr_arg(const ads_expr *e, size_t i);
/* The record of a record node, else NULL. */
const ads_record *ads_expr_record(const ads_expr *e);
/* For a placeholder (ADS_X_PARAM): true, with *name its name (`:name`;
 * empty for `?`), *offset the byte offset of its `?` or `:` in the text
 * parsed, and *line, *column (1-based) there. False for other nodes. Any
 * out-parameter may be NULL. */
bool ads_expr_param(const ads_expr *e, ads_str *name, size_t *offset, int *line, int *column);
/* True for a call written name(*) (ADS_PARSE_QUERY). */
bool ads_expr_star(const ads_expr *e);

/* True if name (len bytes, case-insensitive) is a built-in function. A call
 * of any other name parses and evaluates to error (as in HTCondor); a
 * program may refuse it up front, as statements do (query/query.h). */
bool ads_builtin_known(const char *name, size_t len);

/* Structural equality: same shape, names compared ignoring case, literals
 * by ads_value_same. */
bool ads_expr_equal(const ads_expr *a, const ads_expr *b);

/* New nodes in arena a: an attribute reference; a && b; a call of a
 * built-in by name (error value if unknown) with n arguments. ADS_ENOMEM. */
int ads_expr_new_attr(const ads_expr **out, ads_arena *a, const char *name, size_t len,
                      ads_error *err);
int ads_expr_new_and(const ads_expr **out, ads_arena *a, const ads_expr *x, const ads_expr *y,
                     ads_error *err);

/*
 * A copy of e in which every node for which fn returns a replacement is
 * replaced (fn returns NULL to keep the node and look inside it; it may set
 * *stop to a negative code to abandon the rewrite with that error). Nodes
 * not replaced and with nothing replaced below them are shared with e.
 */
typedef const ads_expr *(*ads_expr_rewrite_fn)(void *ctx, const ads_expr *e, int *stop);
int ads_expr_rewrite(const ads_expr **out, ads_arena *a, const ads_expr *e, ads_expr_rewrite_fn fn,
                     void *ctx, ads_error *err);

/*
 * Visit e and the nodes below it: the children ads_expr_arg gives, not the
 * members of a record node (fn sees the record node and may visit those
 * itself). The walk does not recurse down a chain of binary operators, so
 * one of 300,000 operands (`a || b || ...`) costs no C stack; walks over
 * expressions in other modules use it for that reason. fn returns
 * ADS_VISIT_INTO to go on into the node's arguments, ADS_VISIT_SKIP to pass
 * over them, ADS_VISIT_STOP to end the walk (0 is then returned), or a
 * negative ADS_E* code, having filled the error itself, to end the walk with
 * that code.
 *
 * flags 0: prefix order, left to right (a node before its arguments,
 * argument 0 before argument 1), as a recursive walk would go; the walk's
 * stack may need memory, so it can fail with ADS_ENOMEM (err set).
 * ADS_VISIT_ANY_ORDER: every node once, in an order not promised, needing
 * no memory and never failing; for questions whose answer does not depend
 * on the order ("is this name mentioned?").
 * Returns 0, fn's code, ADS_ENOMEM or ADS_EINVAL (NULL e or fn).
 */
enum { ADS_VISIT_INTO = 0, ADS_VISIT_SKIP = 1, ADS_VISIT_STOP = 2 };
#define ADS_VISIT_ANY_ORDER 1u
typedef int (*ads_expr_visit_fn)(void *ctx, const ads_expr *e);
int ads_expr_visit(const ads_expr *e, ads_expr_visit_fn fn, void *ctx, unsigned flags,
                   ads_error *err);

/*
 * Whether e's value depends on nothing but the values of the attributes it
 * names plainly (`Role`, not MY.Role, TARGET.Role, .Role or a.Role), for
 * records whose such attributes are all literals: e holds no selection, no
 * record written in place, no statement parameter and no special name
 * (self, MY, parent, root, toplevel, TARGET, CurrentTime, which a record
 * may lack), and calls only functions whose result depends on their
 * arguments alone (those ads_expr_prepare folds). Then 1, with the names in
 * names[0 .. *n) (each once, ignoring case, as first written); else 0 (also
 * when e names more than cap attributes). So two records without parents
 * whose attributes of these names are the same literals, or are missing in
 * both, give e the same value through ads_expr_eval, and one evaluation may
 * serve both (query/tlrecord.c does, row after row of a record).
 */
int ads_expr_plain_refs(ads_str *names, size_t cap, size_t *n, const ads_expr *e);

/* ------------------------------------------------------------------------ */
/* Evaluation                                                               */
/* ------------------------------------------------------------------------ */

/*
 * Evaluate e in the scope of view (NULL: an empty record), eagerly: lists
 * and records come back with their members evaluated. Temporaries and the
 * result live in arena a. Returns 0, or ADS_ENOMEM (out is then error).
 * Circular references, nesting past ADS_MAX_DEPTH and references followed
 * more than ADS_MAX_ATTR_EVALS times evaluate to error.
 *
 * Names (docs/classad.md, "Names and scope"): a name is looked up in the
 * record holding the expression, then outward. When that record lacks
 * it, `self` and `MY` name that record, `parent` the enclosing one,
 * `toplevel` and `root` the outermost, and `CurrentTime` is time(); `TARGET`,
 * when no enclosing record has it, is the other record of a match
 * (ads_expr_eval_match; undefined here). `r.name` looks name up in record r,
 * then in the records enclosing r where r is written.
 */
int ads_expr_eval(ads_value *out, const ads_expr *e, const ads_view *view, ads_arena *a);

/*
 * Evaluate e as ads_expr_eval does, in the scope of my, with target as the
 * other record of a match or join: `TARGET.x` reads x from target (when no
 * enclosing record has an attribute named TARGET), and inside target's own
 * expressions `TARGET` is my again, so each side's Requirements sees the
 * other, as in HTCondor's matchmaking (MY.Requirements && TARGET.Requirements
 * is the two-sided match). A plain name that an expression of my's or
 * target's own record finds in neither that record nor its parents is looked
 * up in the other record, as HTCondor's matchmaker does (`Memory > 1024` in
 * a job reads the machine's); selections and expressions of nested records
 * never go over. target NULL: TARGET is undefined and nothing goes over, as
 * in ads_expr_eval. toplevel, root and `.name` inside target mean target's
 * outermost record. Both views must stay valid during the call. Returns 0,
 * or ADS_ENOMEM (out is then error).
 */
int ads_expr_eval_match(ads_value *out, const ads_expr *e, const ads_view *my,
                        const ads_view *target, ads_arena *a);

/*
 * Prepare e for many evaluations: a new tree in arena a in which every
 * subexpression that reads no attribute and calls only pure functions is
 * folded into a literal, and parentheses are dropped (unparse then adds only
 * those precedence needs). Names are hashed and functions resolved by the
 * parser already. The prepared tree evaluates to the same values as e, and,
 * like any expression, may be evaluated from several threads at once, each
 * with its own arena. Errors: ADS_ENOMEM, ADS_ELIMIT, ADS_EINVAL.
 */
int ads_expr_prepare(const ads_expr **out, ads_arena *a, const ads_expr *e, ads_error *err);

/* Evaluate attribute name of record r (undefined if absent). */
int ads_record_eval_attr(ads_value *out, const ads_record *r, const char *name, size_t len,
                         ads_arena *a);

/* ------------------------------------------------------------------------ */
/* Writing                                                                  */
/* ------------------------------------------------------------------------ */

/*
 * Append the new-ClassAd-syntax text of a value or an expression to b, in
 * adstore style (shared/spec/classad.md section 7): reals in the shortest
 * form that reads back exactly, lists `{ 1, "a" }`, records `[ a = 1; b = 2 ]`,
 * times in backticks, names quoted when they must be. The text parses back to
 * an equal value (ads_value_same).
 */
void ads_value_unparse(ads_buf *b, const ads_value *v);
void ads_expr_unparse(ads_buf *b, const ads_expr *e);
void ads_record_unparse(ads_buf *b, const ads_record *r);

/*
 * The same in HTCondor's spelling, which the string() and unparse() functions
 * produce for compatibility: reals as %1.15E (0.0 as "0.0"), lists
 * `{ 1,2 }`, times as absTime("...")/relTime("...").
 */
void ads_value_unparse_condor(ads_buf *b, const ads_value *v);
void ads_expr_unparse_condor(ads_buf *b, const ads_expr *e);

#ifdef __cplusplus
}
#endif
#endif
