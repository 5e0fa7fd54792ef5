/*
 * query/query.h: the statement language (shared/spec/query.md; the user's
 * reference is docs/query.md): SELECT (with JOIN, GROUP BY, ORDER BY, LIMIT,
 * USING datasources, and timeline queries with temporal filters and
 * timeline aggregation), UPDATE, DELETE, PURGE and STORE, run against a
 * store, with results streamed to a sink in one of six output formats.
 *
 * Every expression in a statement is parsed by the classad module's parser;
 * the statement grammar around them is this module's. A statement runs in one
 * transaction: a statement that fails writes nothing.
 *
 * Errors: ADS_ESYNTAX (with line and column in the statement text, and what
 * was expected), ADS_ENOTFOUND (an unknown type or datasource, named),
 * ADS_EINVAL (a statement that parses but cannot run: the message says why),
 * and whatever the engine reports (engine/engine.h).
 */
#ifndef ADS_QUERY_H
#define ADS_QUERY_H

#include <stdint.h>
#include <stdio.h>

#include "../base/buf.h"
#include "../classad/classad.h"
#include "../engine/engine.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ads_query ads_query;

/* A statement session over db: the datasource registry lives here. One
 * session is used by one thread at a time. ADS_ENOMEM. */
int ads_query_new(ads_query **out, ads_db *db, ads_error *err);
void ads_query_free(ads_query *q);

/*
 * What each statement of the session may spend: max_bytes of memory held
 * for it (its rows, groups, sorted rows and the strings its expressions
 * build) and max_seconds of wall time; 0 for either means no limit. The
 * defaults are ADS_DEFAULT_STMT_MEMORY (512 MiB) and ADS_DEFAULT_STMT_SECONDS
 * (1 hour). A statement that reaches a limit stops with ADS_ELIMIT and a
 * message naming the limit; a write statement's transaction is then rolled
 * back. Memory the store itself maps (LMDB pages) is not counted.
 */
void ads_query_set_limits(ads_query *q, size_t max_bytes, double max_seconds);

/* Stop the statement q is running (from another thread or a signal handler:
 * it only sets a flag): it ends at its next row with ADS_ELIMIT and the
 * message "interrupted", a write rolled back. A statement that starts later
 * runs normally. */
void ads_query_interrupt(ads_query *q);

/* Whether SELECT reads through secondary indexes (docs/indexes.md):
 * ADS_INDEXES_AUTO (the default: when the planner expects an index to read
 * fewer rows than a quarter of the type), ADS_INDEXES_OFF (always scan) or
 * ADS_INDEXES_ALWAYS (whenever a term has an index: for tests). Results
 * are the same whichever is chosen. */
enum { ADS_INDEXES_AUTO = 0, ADS_INDEXES_OFF = 1, ADS_INDEXES_ALWAYS = 2 };
void ads_query_use_indexes(ads_query *q, int policy);

/* ------------------------------------------------------------------------ */
/* Datasources (SELECT ... USING name)                                      */
/* ------------------------------------------------------------------------ */

/*
 * A datasource produces rows instead of stored records. open receives the
 * statement's WHERE (NULL if none; the statement applies it again to every
 * row, so a datasource may use it to skip work or ignore it) and a read
 * transaction on the store; next returns 1 with a row (made in arena a, which
 * is reset between rows), 0 at the end, or a negative code; close frees the
 * cursor. Datasources are registered by the embedding program: no statement
 * can load code.
 */
typedef struct ads_datasource {
    int (*open)(void *ctx, ads_txn *txn, const ads_expr *where, void **cursor, ads_error *err);
    int (*next)(void *cursor, const ads_record **row, ads_arena *a, ads_error *err);
    void (*close)(void *cursor);
    void *ctx;
} ads_datasource;

/* Register ds under name (case-insensitive; dots allowed, e.g.
 * "your.plugin"), replacing any earlier one; NULL ds removes it. The built-in
 * names `types` and `sequences` cannot be replaced. ADS_EINVAL, ADS_ENOMEM. */
int ads_query_register(ads_query *q, const char *name, const ads_datasource *ds, ads_error *err);

/* ------------------------------------------------------------------------ */
/* Results                                                                  */
/* ------------------------------------------------------------------------ */

/*
 * Where result rows go. begin receives the column labels when the statement
 * names them (a select list), or ncols 0 for SELECT * (rows then carry their
 * own attributes); row receives each result row (valid during the call);
 * end is called after the last row. A non-zero return stops the statement.
 */
typedef struct ads_sink {
    int (*begin)(void *ctx, const ads_str *cols, size_t ncols, ads_error *err);
    int (*row)(void *ctx, const ads_record *row, ads_error *err);
    int (*end)(void *ctx, ads_error *err);
    void *ctx;
    /* Optional (may be NULL): for SELECT * FROM a type, called after begin
     * and before the first row with every attribute the rows can carry (the
     * type's Attribute records in name order; with `hidden`, then the four
     * timeline attributes), so a sink that needs its columns first (csv)
     * need not hold the rows to learn them. */
    int (*columns)(void *ctx, const ads_str *cols, size_t ncols, ads_error *err);
} ads_sink;

typedef enum ads_stmt_kind {
    ADS_STMT_SELECT,
    ADS_STMT_UPDATE,
    ADS_STMT_DELETE,
    ADS_STMT_PURGE,
    ADS_STMT_STORE,
    ADS_STMT_BEGIN,   /* BEGIN [TRANSACTION] */
    ADS_STMT_COMMIT,  /* COMMIT [TRANSACTION], END [TRANSACTION] */
    ADS_STMT_ROLLBACK /* ROLLBACK [TRANSACTION] */
} ads_stmt_kind;

/* What a statement did. */
typedef struct ads_exec_info {
    ads_stmt_kind kind;
    uint64_t rows; /* rows returned (SELECT), or records stored / updated / deleted / purged */
    uint64_t unchanged; /* STORE: records equal to the row in effect (no row appended; not in
                           rows) */
    bool history;       /* PURGE HISTORY: rows counts history rows removed, records the
                           records removed whole (deleted before the cut) */
    uint64_t records;
    bool rolled_back; /* the statement failed inside BEGIN ... COMMIT: the whole
                         transaction was rolled back */
} ads_exec_info;

/*
 * Transactions in a session: BEGIN opens a write transaction that the
 * session's statements share until COMMIT (which commits it) or ROLLBACK
 * (which discards it); SELECTs inside see what it wrote, other readers see
 * none of it until COMMIT, and other writers wait (LMDB's one writer).
 * Transactions do not nest. Any statement that fails inside one (a
 * syntax error, a nested BEGIN, a write half done) rolls it back whole
 * (ads_exec_info.rolled_back): the statements after it run on their own. The map is not grown inside a transaction:
 * one that fills it fails (ADS_EMAPFULL at COMMIT) and the next grows it.
 * Errors of BEGIN, COMMIT and ROLLBACK: ADS_EINVAL (nested BEGIN, COMMIT or
 * ROLLBACK without BEGIN, any of them with ads_exec_options.txn), and what
 * ads_txn_begin and ads_txn_commit report.
 */
/* True while BEGIN's transaction is open. */
bool ads_query_in_txn(const ads_query *q);
/* Roll BEGIN's transaction back, if one is open (what a program does when
 * its script ends inside one). ads_query_free does it too. */
void ads_query_rollback(ads_query *q);

/* ------------------------------------------------------------------------ */
/* Bound parameters                                                         */
/* ------------------------------------------------------------------------ */

/*
 * Values for a statement's placeholders (docs/query.md, "Parameters"). A
 * placeholder stands where an operand may start in any expression of a
 * statement (select list, WHERE, JOIN's ON, GROUP BY, ORDER BY, SET values,
 * members of STORE's records) and as LIMIT's count: `?` takes the next
 * positional value (the first `?` of a statement is 1, the second 2, ...),
 * `:name` the value bound to name (letters, digits and '_', compared
 * ignoring case, as attribute names are). Where an operator may follow, `?`
 * and `:` keep their ClassAd meaning (a ? b : c), and `?:` is always the
 * elvis operator. One statement uses one style, not both.
 *
 * A value is bound as a value: it is copied (strings, lists, records)
 * into the ads_params and takes the placeholder's place as a literal, never
 * as text, so a string bound is a string whatever it holds. Binding an index
 * or name again replaces its value. An ads_params is used by one thread at
 * a time; it may serve any number of statements.
 */
typedef struct ads_params ads_params;
/* ADS_ENOMEM. */
int ads_params_new(ads_params **out, ads_error *err);
void ads_params_free(ads_params *p);
/* Forget every value. */
void ads_params_clear(ads_params *p);
/* Bind v to the index-th `?` (1-based). ADS_EINVAL (index 0, NULL
 * argument), ADS_ELIMIT (index or values past ADS_MAX_PARAMS), ADS_ENOMEM. */
int ads_params_bind(ads_params *p, size_t index, const ads_value *v, ads_error *err);
/* Bind v to `:name` (name given with or without its ':'). ADS_EINVAL (not
 * a name), ADS_ELIMIT, ADS_ENOMEM. */
int ads_params_bind_name(ads_params *p, const char *name, size_t len, const ads_value *v,
                         ads_error *err);
/* After the statements of a script ran with ads_exec_options.params_script:
 * ADS_EINVAL naming the first value that no statement used since it was
 * bound (a misspelt name, one value too many), else 0. */
int ads_params_check_used(const ads_params *p, ads_error *err);

/* Options for a statement. */
typedef struct ads_exec_options {
    bool hidden; /* SELECT * includes attributes whose names start with '_' */
    /* Values for the statement's placeholders (NULL: none bound). Every
     * placeholder needs a value; a value no placeholder takes is an error
     * too, unless params_script is set (the values serve a whole script:
     * ads_params_check_used then tells). Errors (ADS_EINVAL, with the
     * placeholder's line and column): no value bound, `?` and `:name` in
     * one statement, LIMIT's value not a whole number >= 0. */
    ads_params *params;
    bool params_script;
    /* Run in this transaction, begun by the caller, instead of one of the
     * statement's own (NULL). A read transaction runs SELECT and refuses
     * writes (ADS_EREADONLY); a write transaction runs any statement, and
     * its SELECTs see what it wrote. Nothing commits: the caller commits or
     * aborts txn, with its own engine calls. A write statement that fails
     * may have written part of its rows into txn: abort it then. A map
     * that fills is not grown and run again as for a statement's own
     * transaction: txn is broken (ads_txn_commit reports ADS_EMAPFULL). */
    ads_txn *txn;
} ads_exec_options;
/* Every field at its default (start from it: a field added later keeps its default). */
#define ADS_EXEC_OPTIONS_INIT {.hidden = false, .params = NULL, .params_script = false, .txn = NULL}

/*
 * Parse and run one statement (len bytes of text; a trailing ';' is
 * allowed). Rows go to sink (NULL: counted only). info and opt may be NULL.
 */
int ads_query_exec(ads_query *q, const char *text, size_t len, const ads_sink *sink,
                   const ads_exec_options *opt, ads_exec_info *info, ads_error *err);

/*
 * Parse and check the statement at [start, end) of text without running it
 * and without a store: 0 and *kind (may be NULL), or the error that
 * ads_query_exec_at would report for the statement's text (ADS_ESYNTAX with
 * line and column; ADS_EINVAL for what is wrong whatever the store holds:
 * an aggregate in WHERE, DELETE without FROM or AdType, ...). A program can
 * so refuse a statement before it opens, or creates, a store for it.
 * ADS_ENOMEM.
 */
int ads_query_parse(const char *text, size_t len, size_t start, size_t end, ads_stmt_kind *kind,
                    ads_error *err);

/*
 * Statements in a script end with ';' outside strings, comments and
 * brackets (a blank line ends nothing: the shell, `adstore execute -` and
 * `--file` share this one grammar); the last one may end with the text.
 * Find the next one at or after *pos: returns 1 with [*start, *end) its
 * text (without the separator) and *pos after it,
 * or 0 when only white space and comments are left. Never fails: text that
 * does not parse is found by ads_query_exec_at.
 */
int ads_query_next_statement(const char *text, size_t len, size_t *pos, size_t *start,
                             size_t *end);

/* As ads_query_exec for the statement at [start, end) of a whole script, so
 * that lines and columns in errors count from the script's start. */
int ads_query_exec_at(ads_query *q, const char *text, size_t len, size_t start, size_t end,
                      const ads_sink *sink, const ads_exec_options *opt, ads_exec_info *info,
                      ads_error *err);

/* ------------------------------------------------------------------------ */
/* Prepared statements: rows pulled one step at a time                      */
/* ------------------------------------------------------------------------ */

/*
 * The pull form of ads_query_exec, as sqlite3_prepare, sqlite3_step and
 * sqlite3_finalize are: the caller asks for each row, in its own thread,
 * and may stop at any row (docs/query.md, "Prepared statements").
 *
 * A plain SELECT of one type's stored rows streams: FROM a type without an
 * alias, no JOIN, GROUP BY, aggregate, ORDER BY, USING, EXPLAIN or temporal
 * filter, and a WHERE that does not pin every key attribute (that is a key
 * lookup). Each step reads stored rows until one passes the WHERE, so
 * memory holds the rows of one step whatever the number of rows, and a
 * SELECT * row is read attribute by attribute from its stored bytes without
 * being decoded into a record. Any other statement (writes included) runs
 * whole at the first step; its rows are copied into the statement (within
 * its memory limit, ads_query_set_limits) and handed out one by one.
 * ads_stmt_streams tells which.
 *
 * While a statement is open (prepared and not yet finalized) its session
 * runs nothing else: ads_query_exec, ads_query_exec_at and
 * ads_query_prepare fail with ADS_EBUSY. A streaming statement reads in one
 * transaction from ads_query_prepare to ads_stmt_finalize: its own read
 * transaction (a snapshot: writes committed meanwhile, by other sessions or
 * threads, are not seen), or BEGIN's, or ads_exec_options.txn (in which
 * nothing may be written while the statement is open). Its limits count
 * from ads_query_prepare; ads_query_interrupt stops it at its next row.
 * Finalize every statement before ads_query_free or ads_query_rollback of
 * its session.
 */
typedef struct ads_stmt ads_stmt;
/* A row of a statement's result. */
typedef struct ads_stmt_row ads_stmt_row;

/*
 * Parse, bind (opt->params) and check the statement of len bytes of text
 * (a trailing ';' is allowed), and for a streaming SELECT open its rows;
 * opt may be NULL and is copied. *out belongs to the caller, freed by
 * ads_stmt_finalize. Errors: those of ads_query_exec that precede the first
 * row (ADS_ESYNTAX with line and column, ADS_ENOTFOUND, ADS_EINVAL,
 * ADS_ELIMIT, ADS_ENOMEM, the engine's), and ADS_EBUSY (a statement of the
 * session is open). As with ads_query_exec, one that fails inside BEGIN
 * rolls BEGIN's transaction back (ads_query_in_txn tells).
 */
int ads_query_prepare(ads_stmt **out, ads_query *q, const char *text, size_t len,
                      const ads_exec_options *opt, ads_error *err);

/* True if s streams (see above), false if it runs whole at its first step. */
bool ads_stmt_streams(const ads_stmt *s);

/*
 * Take up to max (>= 1) rows: 0 with *n rows in rows[0 .. *n), *n 0 meaning the
 * end (then and after, every call returns 0 rows); or a negative code, the
 * statement then being over (*n rows taken before the error stay valid; a
 * later call returns the same code). The rows, and everything read from
 * them, are valid until the next ads_stmt_fetch or ads_stmt_step on s or
 * its finalization. Errors: ADS_EINVAL (NULL arguments, max 0: the
 * statement goes on), ADS_ELIMIT (a limit reached, or interrupted),
 * ADS_ECORRUPT, ADS_ENOMEM, and what ads_query_exec reports for the
 * statement.
 */
int ads_stmt_fetch(ads_stmt *s, ads_stmt_row **rows, size_t max, size_t *n, ads_error *err);

/* One row: 1 with *row (valid until the next step), 0 at the end, or a
 * negative code as ads_stmt_fetch. */
int ads_stmt_step(ads_stmt *s, ads_stmt_row **row, ads_error *err);

/* The number of attributes of row r (as the record ads_query_exec's sink
 * would receive has). */
size_t ads_stmt_row_size(const ads_stmt_row *r);

/*
 * Attribute i of r (0 <= i < ads_stmt_row_size), in the order of the record
 * ads_query_exec's sink would receive: its name, and either *value (a plain
 * value; *expr NULL) or *expr (an expression, or a list or record holding
 * one). Names, strings and what they point to are valid as r is. Errors:
 * ADS_EINVAL (i out of range, NULL arguments), ADS_ECORRUPT, ADS_ENOMEM.
 */
int ads_stmt_row_attr(ads_str *name, ads_value *value, const ads_expr **expr, ads_stmt_row *r,
                      size_t i, ads_error *err);

/* r as a record, the one ads_query_exec's sink would receive (made on the
 * first call for a streamed row), valid as r is. ADS_ECORRUPT, ADS_ENOMEM. */
int ads_stmt_row_record(const ads_record **out, ads_stmt_row *r, ads_error *err);

/* The select list's labels (*n of them, valid until finalization), or *n 0
 * for SELECT * and statements without a select list. A statement that runs
 * whole (ads_stmt_streams false) knows them from its first step on. */
const ads_str *ads_stmt_columns(const ads_stmt *s, size_t *n);

/* What the statement did so far: its kind, the rows handed out (or, once
 * run, what a write did), whether BEGIN's transaction was rolled back. */
void ads_stmt_info(const ads_stmt *s, ads_exec_info *info);

/* End the statement, at its end or before (the rest of its rows are never
 * read), and free it: its transaction ends (unless it was BEGIN's or the
 * caller's), and the session may run statements again. NULL is ignored. */
void ads_stmt_finalize(ads_stmt *s);

/* ------------------------------------------------------------------------ */
/* Output formats                                                           */
/* ------------------------------------------------------------------------ */

typedef enum ads_format {
    ADS_FORMAT_TEXT,    /* the informal long form: Name = value lines, a blank line after each row */
    ADS_FORMAT_NATIVE,  /* one [ ... ] per line */
    ADS_FORMAT_JSON,    /* an array of objects, one per line */
    ADS_FORMAT_CSV,     /* RFC 4180, a header line, CRLF line ends, valid UTF-8 */
    ADS_FORMAT_TABULAR, /* aligned columns for a terminal */
    ADS_FORMAT_XML,     /* the classads XML form */
    ADS_FORMAT_JSONL,   /* JSON Lines: one compact object per line, no array */
    ADS_FORMAT_VALUES   /* each row's values separated by spaces, one row a line (-af) */
} ads_format;

/* The format named name ("text", "native", "json", "csv", "tabular", "xml",
 * "jsonl" (or "ndjson"), "values"). ADS_EINVAL with a message listing the names. */
int ads_format_parse(ads_format *out, const char *name, ads_error *err);
const char *ads_format_name(ads_format f);

/*
 * A sink that writes rows in format f to out (docs/query.md has each format
 * byte by byte). Rows are written as they come, except that tabular holds
 * the first ADS_WRITER_SAMPLE_ROWS rows to measure its columns (a later
 * value wider than its column is written whole, past the alignment), and
 * csv of SELECT * whose rows come without a column list (no FROM, or USING)
 * holds as many to learn its columns (a later row with an attribute they
 * lack then stops the statement with ADS_EINVAL naming it). Memory is so
 * bounded by that many rows, whatever the row count. One writer serves any
 * number of statements, one after the other. ads_writer_free frees it.
 */
typedef struct ads_writer ads_writer;
int ads_writer_new(ads_writer **out, ads_format f, FILE *to, ads_error *err);
/* csv and tabular: write the header lines (true, the default) or not. */
void ads_writer_set_header(ads_writer *w, bool header);
/* The most rows the writer has held at once (0 for NULL): tests check that
 * it stays bounded. */
size_t ads_writer_peak_rows(const ads_writer *w);
ads_sink ads_writer_sink(ads_writer *w);
/*
 * After a statement that failed part way (its sink's end was not called):
 * write what is still held or buffered, close what the rows written so far
 * opened (json's `]`, xml's `</classads>`; a csv header is written with the
 * first row) and flush, so the output is well formed and holds every row
 * the statement produced. Nothing when no row came; nothing after end.
 * ADS_EIO, ADS_ENOMEM.
 */
int ads_writer_abort(ads_writer *w, ads_error *err);
void ads_writer_free(ads_writer *w);

#ifdef __cplusplus
}
#endif
#endif
