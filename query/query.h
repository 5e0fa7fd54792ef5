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
    ADS_STMT_STORE
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
} ads_exec_info;

/* Options for a statement. */
typedef struct ads_exec_options {
    bool hidden; /* SELECT * includes attributes whose names start with '_' */
} ads_exec_options;
/* Every field at its default (start from it: a field added later keeps its default). */
#define ADS_EXEC_OPTIONS_INIT {.hidden = false}

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
