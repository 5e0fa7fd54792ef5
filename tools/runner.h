/*
 * tools/runner.h: running statements for `adstore execute` (tools/
 * cmd_execute.c) and `adstore shell` (tools/shell.c): the store opened on
 * demand (read-only for a SELECT), each statement's rows written on stdout
 * in the chosen format, what it did on stderr, errors with line and column.
 */
#ifndef ADS_TOOLS_RUNNER_H
#define ADS_TOOLS_RUNNER_H

#include "query/query.h"
#include "tools/cli.h"

typedef struct runner {
    cli_ctx *c;
    ads_db *db;
    ads_query *q;
    ads_format fmt;
    bool header;  /* csv and tabular header lines (--noheader, .headers) */
    FILE *out;    /* stdout, or -o FILE */
    const char *out_path;
    const char *file; /* execute --file FILE */
    bool quiet;       /* no "3 rows" line (the shell's own statements) */
    bool timer;       /* the shell's .timer: each statement's wall time on stderr */
    ads_exec_options opt;
    bool create; /* the store may be created */
    size_t max_bytes; /* each statement's limits (--max-memory, --max-time) */
    double max_seconds;
    ads_params *params; /* --param values (NULL: none given) */
    size_t npositional; /* --param values without a name so far */
    int txn_line;       /* the line of the open BEGIN, for messages */
} runner;

/* A runner for c with the default format and limits; no store opened yet. */
void runner_init(runner *r, cli_ctx *c);
/* Close what the runner opened: 0, or (after a message) EXIT_INPUT when
 * the -o file could not be written whole. */
int runner_close(runner *r);

/* Scan the options execute and shell share (help names the help text): 0,
 * an exit status after a message, or -1 after printing the help. */
int runner_options(cli_ctx *c, cli_args *a, runner *r, const char *help);

/* Run the statement at [start, end) of text: 0 or an exit status (after a
 * message on stderr). */
int runner_run(runner *r, const char *text, size_t len, size_t start, size_t end);

/* At the end of a script or of the shell's input: a transaction BEGIN left
 * open is rolled back, with a message naming BEGIN's line (where is "the
 * end of input", say); returns EXIT_INPUT then, else 0. */
int runner_end(runner *r, const char *where);

#endif
