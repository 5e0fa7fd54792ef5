/*
 * tools/cli.h: what the adstore subcommands share: exit codes, option
 * parsing, number parsing, opening the store, and the help texts.
 */
#ifndef ADS_TOOLS_CLI_H
#define ADS_TOOLS_CLI_H

#include <stdbool.h>
#include <stdint.h>

#include "engine/engine.h"

/* Exit statuses (shared/spec/tools.md; docs/tools.md, "Common rules"):
 * EXIT_SALVAGED is `dump --salvage` having left bad rows out, or
 * `import -k` having skipped bad records: done, but not all of it. */
enum { EXIT_OK = 0, EXIT_INPUT = 1, EXIT_USAGE = 2, EXIT_SALVAGED = 3 };

/* Options common to every subcommand. */
typedef struct cli_ctx {
    const char *prog;    /* "adstore" */
    const char *command; /* "id new", ... for messages */
    const char *db_dir;  /* -d/--db, else $ADSTORE_DB, else ./adstore.db */
} cli_ctx;

/*
 * A small option scanner over argv. Options may come before, between or after
 * operands; "--" ends them. Returns the next option name (without dashes
 * kept: "-n", "--to") or NULL when argv is done; operands are collected in
 * order into ops/nops (caller's array sized argc).
 */
typedef struct cli_args {
    int argc, i;
    char **argv;
    char **ops;
    int nops;
    bool only_ops;
} cli_args;

void cli_args_init(cli_args *a, int argc, char **argv, char **ops);
const char *cli_args_next(cli_args *a);
/* The value of the option just returned: "--to=x", "--to x", "-nx", "-n x".
 * NULL (after a usage message) if missing. */
const char *cli_args_value(cli_args *a, cli_ctx *c, const char *opt);

/* True if opt is the short option s (may be NULL) or the long option l,
 * alone or as "--long=value". */
bool cli_is_opt(const char *opt, const char *s, const char *l);

/* Handle the options every command takes (-d/--db): 1 if opt was one, -1 on
 * a usage error (printed), else 0. */
int cli_common_opt(cli_args *a, cli_ctx *c, const char *opt);

/* Print "adstore CMD: message" on stderr; return the exit status given. */
int cli_fail(const cli_ctx *c, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Print an ads_error as "adstore CMD: message" on stderr; return EXIT_INPUT
 * for input errors and storage errors alike. */
int cli_fail_err(const cli_ctx *c, const ads_error *err);

/* Print an error about one text argument: "adstore CMD: 'ARG': column N:
 * message" (no column part when the error has none); returns EXIT_INPUT. */
int cli_fail_arg(const cli_ctx *c, const char *arg, const ads_error *err);

/*
 * Flush and close standard output after a command that ended with status:
 * if any write to it failed (a full disk, a closed pipe, /dev/full), print
 * "adstore COMMAND: cannot write output: REASON" and return EXIT_INPUT (or
 * status, if that is already a failure); else return status.
 */
int cli_finish_output(const cli_ctx *c, int status);

/* Strict decimal: digits only, no sign or space, value <= max. */
bool cli_parse_u64(const char *s, uint64_t max, uint64_t *out);

/* The store's directory: -d/--db, else $ADSTORE_DB, else ./adstore.db. */
const char *cli_db_dir(const cli_ctx *c);

/* Open the store for c (create it when create is true). Prints and returns
 * EXIT_INPUT on failure, else 0. */
int cli_open_db(cli_ctx *c, bool create, ads_db **out);

/* Help: the text of a command ("id", "fluid", ...) or NULL if unknown. */
const char *cli_help_text(const char *command);
int cli_print_help(const char *command); /* 0, or 2 for an unknown command */

/* A subcommand: its name, its full name for messages ("fluid new"), and its
 * function, which scans the options and operands in a. */
typedef struct cli_sub {
    const char *name;
    const char *full;
    int (*run)(cli_ctx *c, cli_args *a);
} cli_sub;

/* Run the subcommand named by argv[0] from subs (n entries): no argv prints
 * the help of `help` and fails as usage, -h/--help prints it, an unknown name
 * is a usage error listing the names. */
int cli_dispatch(cli_ctx *c, int argc, char **argv, const cli_sub *subs, size_t n,
                 const char *help);

int cmd_id(cli_ctx *c, int argc, char **argv);
int cmd_fluid(cli_ctx *c, int argc, char **argv);
int cmd_kid(cli_ctx *c, int argc, char **argv);
int cmd_eval(cli_ctx *c, int argc, char **argv);
int cmd_verify(cli_ctx *c, int argc, char **argv);
int cmd_stats(cli_ctx *c, int argc, char **argv);
int cmd_execute(cli_ctx *c, int argc, char **argv);
int cmd_shell(cli_ctx *c, int argc, char **argv);
int cmd_import(cli_ctx *c, int argc, char **argv);
int cmd_dump(cli_ctx *c, int argc, char **argv);
int cmd_restore(cli_ctx *c, int argc, char **argv);
int cmd_backup(cli_ctx *c, int argc, char **argv);
int cmd_compact(cli_ctx *c, int argc, char **argv);
int cmd_serve(cli_ctx *c, int argc, char **argv);

/*
 * A progress bar on stderr for long work, drawn only when stderr is a
 * terminal, at most ten times a second; progress_done erases it.
 */
typedef struct progress {
    bool tty;
    const char *what;
    double start, last;
} progress;

void progress_init(progress *p, const char *what);
void progress_update(progress *p, uint64_t done, uint64_t total);
/* done rows, the bar filled to fraction (0..1; negative: no bar), for work
 * measured in bytes of input rather than rows. */
void progress_update_fraction(progress *p, uint64_t done, double fraction);
void progress_done(progress *p);
/* Seconds since progress_init. */
double progress_elapsed(const progress *p);
/* The ads_progress_fn form (ctx is a progress *). */
void progress_cb(void *ctx, uint64_t done, uint64_t total);
/* bytes as "512 B", "1.5 KiB", "236.6 MiB", ... */
void human_bytes(char *out, size_t cap, double bytes);

#endif
