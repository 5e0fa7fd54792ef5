/*
 * query/query_int.h: what the files of the query module share: the parsed
 * statement, the plan pieces, and helpers across files. No other module
 * includes it.
 */
#ifndef ADS_QUERY_INT_H
#define ADS_QUERY_INT_H

#include <signal.h>

#include "base/budget.h"
#include "query/query.h"

/* ---- the parsed statement (parser.c) ---- */

typedef struct sel_item {
    const ads_expr *e;
    ads_str label; /* AS label, or the attribute name, or the unparsed text */
    bool named;    /* label written with AS */
} sel_item;

typedef struct join_clause {
    bool outer;
    bool all; /* JOIN ALL: every joined row that satisfies ON, not the first */
    ads_str type, alias;
    const ads_expr *on;
    int line, column; /* of the type name, for messages */
} join_clause;

typedef struct order_item {
    const ads_expr *e;
    bool desc;
    long item; /* a bare name equal to this select item's label: sort by the item's
                * value (SQL's rule); -1 otherwise */
} order_item;

typedef struct set_item {
    ads_str name;
    const ads_expr *e;
} set_item;

typedef struct stmt {
    ads_stmt_kind kind;
    const char *text; /* the script (the arena's copy); positions count from its start */
    size_t start, end;
    /* SELECT */
    bool star;
    sel_item *items;
    size_t nitems;
    bool has_from;
    ads_str type, alias;
    int type_line, type_column;
    join_clause *joins;
    size_t njoins;
    bool has_using;
    ads_str using_name;
    const ads_expr *where;
    const ads_expr **group;
    size_t ngroup;
    order_item *order;
    size_t norder;
    int64_t limit; /* -1: none */
    bool explain;  /* EXPLAIN: show the plan instead (explain.c) */
    bool analyze;  /* EXPLAIN ANALYZE: run it, then show the plan with counts */
    const ads_expr *limit_param; /* LIMIT ? or :name, until bound (params.c) */
    /* PURGE HISTORY (kind ADS_STMT_PURGE) */
    bool history;
    /* UPDATE */
    set_item *sets;
    size_t nsets;
    /* STORE */
    const ads_expr **records;
    size_t nrecords;
} stmt;

/* Parse the statement at [start, end) of text (len bytes; the text must
 * outlive the statement: the parser keeps pointers into it) into *st, built
 * in arena a. ADS_ESYNTAX with line and column; ADS_ENOMEM; ADS_ELIMIT. */
int ads_stmt__parse(stmt *st, ads_arena *a, const char *text, size_t len, size_t start,
                    size_t end, ads_error *err);

/* Bind p's values to the placeholders of st (params.c): each is replaced
 * by a literal of its value (made in a), LIMIT's sets st->limit. Unless
 * script, a value of p that st does not take is an error. ADS_EINVAL with
 * the placeholder's line and column; ADS_ELIMIT; ADS_ENOMEM. */
int ads_q__bind(stmt *st, ads_params *p, bool script, ads_arena *a, ads_error *err);

/* ---- the session ---- */

/* The transaction a statement runs in (session.c). BEGIN, COMMIT and
 * ROLLBACK are run by ads_q__control. Around any other statement,
 * ads_q__txn_enter sets q->txn (the caller's, or BEGIN's, or NULL: the
 * statement's own), and ads_q__txn_leave, given any statement's result,
 * rolls BEGIN's transaction back if the statement failed
 * (info->rolled_back). In between, ads_q__txn_read gives the transaction
 * to read in (q->txn, or a new read transaction), ads_q__txn_done ends
 * what txn_read began, and ads_q__txn_write runs fn in q->txn or, without
 * one, through ads_db_write. */
bool ads_q__is_control(const stmt *st);
int ads_q__control(ads_query *q, const stmt *st, const ads_exec_options *opt, ads_error *err);
int ads_q__txn_enter(ads_query *q, const ads_exec_options *opt, ads_error *err);
void ads_q__txn_leave(ads_query *q, const ads_exec_options *opt, int rc, ads_exec_info *info);
int ads_q__txn_read(ads_query *q, ads_txn **out, ads_error *err);
void ads_q__txn_done(ads_query *q, ads_txn *txn);
int ads_q__txn_write(ads_query *q, ads_txn_fn fn, void *ctx, ads_error *err);

typedef struct ds_entry {
    char *name; /* lower case */
    ads_datasource ds;
} ds_entry;

struct ads_query {
    ads_db *db;
    ds_entry *ds;
    size_t nds;
    size_t max_bytes;   /* a statement's limits (ads_query_set_limits) */
    double max_seconds;
    ads_budget budget;  /* the running statement's */
    volatile sig_atomic_t interrupted; /* ads_query_interrupt (a signal handler may set it) */
    ads_txn *session;   /* BEGIN's transaction, until COMMIT or ROLLBACK (session.c) */
    ads_txn *txn;       /* the running statement's: the caller's, the session's or NULL */
    int index_policy;   /* ads_query_use_indexes */
    bool stepping;      /* a prepared statement is open (step.c): run nothing else */
};

/* A new arena counting against the running statement's budget; NULL when
 * out of memory. */
ads_arena *ads_q__arena(ads_query *q);

/* 0 while the statement is within its limits; ADS_ELIMIT once it is not
 * (time is read every few calls: call it once per row or loop step). */
int ads_q__budget(ads_query *q, ads_error *err);
/* Make scan sc stop (ADS_ELIMIT) when q is interrupted or over its budget,
 * even between the rows it returns (ads_scan_set_stop): a scan whose WHERE
 * turns rows down reads them inside the engine. */
void ads_q__watch(ads_scan *sc, ads_query *q);

/* Put on err (when it has no position yet) the line and column of name, a
 * pointer into st->text, so a message about a type or datasource the
 * statement names points at it. Returns rc. */
int ads_q__error_at(const stmt *st, ads_str name, int rc, ads_error *err);

/* Put on err the line and column of p, a pointer into st->text (the name
 * of a call, say), if it is one. Returns rc. */
int ads_q__error_place(const stmt *st, const char *p, int rc, ads_error *err);

/* The datasource named name (built-in or registered), or NULL. */
const ads_datasource *ads_ds__find(ads_query *q, const char *name, size_t len);

/* ---- running (exec.c, group.c, sort.c, timeline.c) ---- */

/* Case-insensitive equality of a name with a NUL-terminated literal. */
bool ads_q__name_is(ads_str s, const char *lit);

/* True if e mentions attribute name (as `name` or `X.name`) anywhere. */
bool ads_q__mentions(const ads_expr *e, const char *name);

/* A value's truth for WHERE: true, or a non-zero number. */
bool ads_q__truthy(const ads_value *v);

/* Hash of a value consistent with `===` (values === each other hash alike). */
uint64_t ads_q__hash(const ads_value *v);

/* Order for ORDER BY and for groups: numbers (booleans as 0/1) by value, then
 * strings (case-insensitively, then byte-wise), times, identifiers, lists,
 * records, blobs, error; undefined is always last. -1, 0, 1. */
int ads_q__compare(const ads_value *a, const ads_value *b);

/* Deep copy of a value into arena a (strings, lists, records). ADS_ENOMEM. */
int ads_q__copy(ads_value *out, const ads_value *v, ads_arena *a);

/* Expressions keep no positions, but the names in them (of attributes and
 * calls) point into the statement's text (the parser's ADS_PARSE_NOCOPY), so
 * a message about a call gives its place through ads_q__error_place; others
 * name the clause instead. */

/* Timeline statements (timeline.c): is the WHERE a timeline filter? Splits
 * the WHERE's top-level conjuncts into the temporal filter (if any) and the
 * rest. kind: 0 none / @now, 1 timerange, 2 anytime. */
typedef struct temporal {
    int kind;
    const ads_expr *t1, *t2; /* @timerange bounds, or @duration's D in t1 */
    bool duration;
} temporal;

/* Errors (a misplaced or unknown @filter, bad arguments) carry the line and
 * column of the @call in st's text. */
int ads_q__split_temporal(const stmt *st, const ads_expr *where, temporal *tf,
                          const ads_expr **rest, ads_arena *a, ads_error *err);

/* ---- grouping (group.c) ---- */

/* Receives each output row with its ORDER BY values (group.c, exec.c). */
typedef int (*ads_q__emit_fn)(void *ctx, const ads_record *row, const ads_value *keys,
                              ads_error *err);

typedef struct qgroup qgroup;

/* The aggregate an expression is (a call of count, sum, avg, min, max,
 * count_distinct, list or distinct), or -1. */
int ads_q__agg_kind(const ads_expr *e);
/* The first call in e (depth first) of an aggregate that is not also a
 * ClassAd built-in (count, count_distinct, list, distinct), or NULL. */
const ads_expr *ads_q__find_agg_only(const ads_expr *e);
/* True if e holds an aggregate call anywhere. */
bool ads_q__has_aggregate(const ads_expr *e);

/* Plan grouping for st with these GROUP BY expressions (ngroup may be 0: all
 * rows are one group). Rewrites the select list and ORDER BY. */
int ads_q__group_plan(qgroup **out, const stmt *st, const ads_expr *const *gexprs, size_t ngroup,
                      ads_arena *a, ads_error *err);
/* Fold a row (seen through view) into its group. */
int ads_q__group_add(qgroup *g, const ads_view *view, ads_arena *row_arena, ads_error *err);
/* Emit a row per group, in GROUP BY value order, to emit. */
int ads_q__group_emit(qgroup *g, const stmt *st, ads_q__emit_fn emit, void *ctx, ads_error *err);
size_t ads_q__group_count(const qgroup *g);
void ads_q__group_free(qgroup *g);

/* ---- ordering and limits (sort.c) ---- */

/*
 * A collector for ORDER BY: rows and their sort values are copied in; with a
 * LIMIT n it keeps only the best n (compacting when 2n are held), so memory is
 * bounded by the LIMIT, not the rows. The sort is stable.
 */
typedef struct qcoll qcoll;
int ads_q__coll_new(qcoll **out, ads_query *q, const order_item *order, size_t norder,
                    int64_t limit, ads_error *err);
int ads_q__coll_add(void *coll, const ads_record *row, const ads_value *keys, ads_error *err);
/* Send the rows, in order, to sink; *count receives how many. */
int ads_q__coll_emit(qcoll *c, const ads_sink *sink, uint64_t *count, ads_error *err);
void ads_q__coll_free(qcoll *c);

/* A result row: into coll when there is one (ORDER BY), else to the sink
 * while *left (LIMIT still to go; -1 none) allows, counted in *rows. */
int ads_q__emit_row(qcoll *coll, const ads_sink *sink, uint64_t *rows, int64_t *left,
                    const ads_record *row, const ads_value *keys, ads_error *err);

/* ---- index choice (plan.c) ---- */

/* The secondary index a SELECT reads through: the union of spans (n 0: a
 * scan), the entries the planner counted, how many terms it weighed, and
 * the conjunct(s) the spans answer, unparsed. */
typedef struct ads_q__iplan {
    ads_index_span **spans;
    size_t n;
    uint64_t estimate;
    size_t candidates;
    const char *text;
    /* single-span terms of other indexes in the AND, probed per entry
     * (ads_index_scan_filter); ads_q__open_rows keeps those it took */
    ads_index_span **filters;
    size_t nfilters;
} ads_q__iplan;

/* Choose an index for the top-level conjuncts conj of a WHERE on type t
 * (alias: the FROM alias), under q's policy. ADS_ENOMEM, ADS_ESTORAGE. */
int ads_q__plan_index(ads_q__iplan *out, ads_query *q, ads_txn *txn, const ads_type *t,
                      const ads_expr *const *conj, size_t nconj, ads_str alias, ads_arena *a,
                      ads_error *err);

/* Open the rows of t for a SELECT: through the index ads_q__plan_index
 * chose (*ip tells which), else a scan (ads_scan_open with where and
 * flags). An index is never used for history (ADS_SCAN_HISTORY). */
int ads_q__open_rows(ads_scan **out, ads_q__iplan *ip, ads_query *q, ads_txn *txn,
                     const ads_type *t, const ads_expr *const *conj, size_t nconj, ads_str alias,
                     const ads_expr *where, unsigned flags, ads_arena *a, ads_error *err);

/* The top-level conjuncts of a WHERE (e NULL: none), in the order written,
 * in arena a (exec.c). */
int ads_q__conjuncts(const ads_expr *e, const ads_expr ***out, size_t *n, ads_arena *a,
                     ads_error *err);

/* What a SELECT's steps did (EXPLAIN ANALYZE): plain counters that exec.c
 * bumps as rows go by. */
typedef struct ads_q__xcount {
    ads_scan_counts src;  /* the source's scan (a key lookup: rows 0 or 1) */
    uint64_t src_out;     /* rows the source gave: read, seen, passed the WHERE */
    uint64_t *join_out;   /* per JOIN: rows it passed on */
    uint64_t post_in, post_out;
    uint64_t grouped_in, groups;
    uint64_t sorted_in, sorted_out;
    uint64_t out;         /* rows of the result */
} ads_q__xcount;

/* What EXPLAIN shows of a planned SELECT (explain.c; exec.c fills it). */
typedef struct ads_q__xsel {
    const stmt *st;
    const ads_type *type;      /* NULL: every type, or no type */
    ads_str ds_name;           /* USING name (len 0: none) */
    bool point, history, deleted;
    const ads_q__iplan *ip;    /* the index chosen (n 0: none) */
    const ads_expr *pushed;    /* WHERE tested on each row as it is read */
    const ads_expr *post;      /* WHERE tested after the joins */
    const bool *join_lookup;   /* per JOIN: a key lookup */
    size_t njoins;
    bool grouped;
    const ads_q__xcount *run; /* EXPLAIN ANALYZE: what the run did (else NULL) */
} ads_q__xsel;

/* Send the plan to sink: columns Step and Plan, a row per step (*steps
 * of them). */
int ads_q__explain(const ads_q__xsel *s, const ads_sink *sink, uint64_t *steps, ads_arena *a,
                   ads_error *err);
/* The plan of an UPDATE, DELETE or PURGE (s->st): its records' source, the
 * WHERE, the write, with what the run did when s->run is set (written: the
 * records written). To sink; or, when keep is not NULL, into keep (write.c
 * makes the plan inside the write's transaction, where the index it names
 * lives, and sends it with ads_q__explain_send once that is over). */
int ads_q__explain_write(const ads_q__xsel *s, const uint64_t *written, ads_buf *keep,
                         const ads_sink *sink, uint64_t *steps, ads_arena *a, ads_error *err);
int ads_q__explain_send(const ads_buf *keep, const ads_sink *sink, uint64_t *steps, ads_arena *a,
                        ads_error *err);

/* The checks and rewrites every statement gets before it runs, which need
 * no store (exec.c): unknown functions, misplaced aggregates, the temporal
 * filter split off WHERE (*tf, and *rest what is left of it). */
int ads_q__check_stmt(stmt *st, temporal *tf, const ads_expr **rest, ads_arena *a,
                      ads_error *err);

/* Run a checked statement (not BEGIN, COMMIT or ROLLBACK) in the
 * transaction ads_q__txn_enter chose: a write, a timeline SELECT or a
 * SELECT (exec.c). */
int ads_q__run(ads_query *q, stmt *st, const temporal *tf, const ads_expr *rest,
               const ads_sink *sink, const ads_exec_options *opt, ads_exec_info *info,
               ads_error *err);

/* rc, or for a statement its budget stopped, ADS_ELIMIT with a message
 * naming the limit it reached and how to raise it. */
int ads_q__over_limit(ads_query *q, int rc, ads_error *err);

/* Pinned key values from the conjuncts c of a WHERE on type t (`Key ==
 * constant` and the like): true if every key attribute of t is pinned, its
 * values in key order in out (16 at most). */
bool ads_q__pinned_keys(const ads_type *t, const ads_expr **c, size_t n, ads_str main_alias,
                        ads_value *out, ads_arena *a);

int ads_q__select(ads_query *q, const stmt *st, const ads_sink *sink,
                  const ads_exec_options *opt, ads_exec_info *info, ads_error *err);
int ads_q__timeline(ads_query *q, const stmt *st, const temporal *tf, const ads_expr *where,
                    const ads_sink *sink, const ads_exec_options *opt, ads_exec_info *info,
                    ads_error *err);
/* UPDATE, DELETE, PURGE, STORE; where: the WHERE (checked, without temporal
 * filter: exec.c's check_stmt). EXPLAIN [ANALYZE] of UPDATE, DELETE or
 * PURGE sends its plan to sink (info->kind then ADS_STMT_SELECT, rows the
 * plan's steps). */
int ads_q__write(ads_query *q, const stmt *st, const ads_expr *where, const ads_sink *sink,
                 ads_exec_info *info, ads_error *err);

/* ---- text measures (width.c) ---- */

/* The code point at s (n > 0 bytes): its length in bytes, or 0 when s does
 * not start with a well-formed UTF-8 sequence (overlong, surrogate, past
 * U+10FFFF, cut short). */
size_t ads_q__utf8_next(const char *s, size_t n, uint32_t *cp);
/* Terminal columns of UTF-8 text: marks and format characters 0, East Asian
 * wide and fullwidth characters 2, others 1 (a byte that is not UTF-8: 1). */
size_t ads_q__display_width(const char *p, size_t n);
/* Append p to out with each byte that is not UTF-8 replaced by U+FFFD. */
void ads_q__utf8_repair(ads_buf *out, const char *p, size_t n);
bool ads_q__utf8_valid(const char *p, size_t n);

#endif
