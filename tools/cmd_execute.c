/*
 * tools/cmd_execute.c: `adstore execute` and `adstore shell`
 * (shared/spec/tools.md): statements of the language in query/query.h run
 * against the store, results on stdout in the chosen format, what each
 * statement did on stderr ("3 rows", "stored 2 records"), errors on stderr
 * with the line and column.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <editline/readline.h>

#include "query/query.h"
#include "tools/cli.h"

typedef struct runner {
    cli_ctx *c;
    ads_db *db;
    ads_query *q;
    ads_format fmt;
    ads_exec_options opt;
    bool create; /* the store may be created */
    size_t max_bytes; /* each statement's limits (--max-memory, --max-time) */
    double max_seconds;
} runner;

static int open_store(runner *r, bool write)
{
    if (r->db && (!write || r->create))
        return 0;
    if (r->db) {
        ads_query_free(r->q);
        ads_db_close(r->db);
        r->db = NULL;
        r->q = NULL;
    }
    int rc = cli_open_db(r->c, write, &r->db);
    if (rc)
        return rc;
    r->create = write;
    ads_error err;
    if (ads_query_new(&r->q, r->db, &err))
        return cli_fail_err(r->c, &err);
    ads_query_set_limits(r->q, r->max_bytes, r->max_seconds);
    return 0;
}

static void report(const ads_exec_info *info)
{
    static const char *const verbs[] = {"", "updated", "deleted", "purged", "stored"};
    if (info->kind == ADS_STMT_SELECT)
        fprintf(stderr, "%llu row%s\n", (unsigned long long)info->rows,
                info->rows == 1 ? "" : "s");
    else if (info->history && info->records)
        fprintf(stderr, "purged %llu history row%s, %llu deleted record%s\n",
                (unsigned long long)info->rows, info->rows == 1 ? "" : "s",
                (unsigned long long)info->records, info->records == 1 ? "" : "s");
    else if (info->history)
        fprintf(stderr, "purged %llu history row%s\n", (unsigned long long)info->rows,
                info->rows == 1 ? "" : "s");
    else if (info->unchanged)
        fprintf(stderr, "%s %llu record%s, %llu unchanged\n", verbs[info->kind],
                (unsigned long long)info->rows, info->rows == 1 ? "" : "s",
                (unsigned long long)info->unchanged);
    else
        fprintf(stderr, "%s %llu record%s\n", verbs[info->kind], (unsigned long long)info->rows,
                info->rows == 1 ? "" : "s");
}

static int fail_stmt(runner *r, const ads_error *err)
{
    if (err->line > 0)
        return cli_fail(r->c, EXIT_INPUT, "line %d, column %d: %s", err->line, err->column,
                        err->message);
    return cli_fail_err(r->c, err);
}

/* Run the statement at [start, end) of a script; 0 or an exit status. The
 * statement is parsed before the store is opened, so a statement that does
 * not parse never creates a store; a SELECT opens it read-only. */
static int run_one(runner *r, const char *text, size_t len, size_t start, size_t end)
{
    ads_error err;
    ads_stmt_kind kind;
    if (ads_query_parse(text, len, start, end, &kind, &err))
        return fail_stmt(r, &err);
    int rc = open_store(r, kind != ADS_STMT_SELECT);
    if (rc)
        return rc;
    ads_writer *w;
    if (ads_writer_new(&w, r->fmt, stdout, &err))
        return cli_fail_err(r->c, &err);
    ads_sink sink = ads_writer_sink(w);
    ads_exec_info info;
    rc = ads_query_exec_at(r->q, text, len, start, end, &sink, &r->opt, &info, &err);
    if (rc) {
        /* a SELECT that failed part way: its rows so far, well formed */
        ads_error err2;
        ads_writer_abort(w, &err2);
    }
    fflush(stdout);
    ads_writer_free(w);
    if (rc)
        return fail_stmt(r, &err);
    report(&info);
    return 0;
}

static int run_script(runner *r, const char *text, size_t len)
{
    size_t pos = 0, start, end;
    int n = 0;
    while (ads_query_next_statement(text, len, &pos, &start, &end)) {
        int rc = run_one(r, text, len, start, end);
        if (rc)
            return rc;
        n++;
    }
    if (n == 0)
        return cli_fail(r->c, EXIT_USAGE, "no statement given");
    return 0;
}

static char *read_all(FILE *f, size_t *len)
{
    size_t cap = 65536, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0)
            break;
        if (n == cap) {
            char *m = realloc(buf, cap *= 2);
            if (!m) {
                free(buf);
                return NULL;
            }
            buf = m;
        }
    }
    *len = n;
    return buf;
}

/* --max-memory MiB or --max-time SECONDS: a whole number, 0 for no limit. */
static int limit_value(cli_ctx *c, runner *r, const char *opt, const char *v)
{
    char *end;
    errno = 0;
    unsigned long long n = strtoull(v, &end, 10);
    bool memory = strstr(opt, "memory") != NULL;
    if (errno || end == v || *end || *v == '-' || (memory && n > (SIZE_MAX >> 20)) ||
        (!memory && n > 1000000000ull))
        return cli_fail(c, EXIT_USAGE, "%s takes a whole number of %s (0: no limit), not '%s'",
                        memory ? "--max-memory" : "--max-time", memory ? "MiB" : "seconds", v);
    if (memory)
        r->max_bytes = (size_t)n << 20;
    else
        r->max_seconds = (double)n;
    return 0;
}

static int parse_options(cli_ctx *c, cli_args *a, runner *r, const char *help)
{
    const char *opt;
    int rc;
    while ((opt = cli_args_next(a))) {
        if ((rc = cli_common_opt(a, c, opt)) != 0) {
            if (rc < 0)
                return EXIT_USAGE;
        } else if (strcmp(opt, "-format") == 0 || strncmp(opt, "-format=", 8) == 0 ||
                   cli_is_opt(opt, "-f", "--format")) {
            /* -format F (the seed's spelling), --format F, -f F */
            const char *v;
            if (strncmp(opt, "-format", 7) == 0)
                v = opt[7] == '=' ? opt + 8 : a->i < a->argc ? a->argv[a->i++] : NULL;
            else
                v = cli_args_value(a, c, opt);
            ads_error err;
            if (!v)
                return cli_fail(c, EXIT_USAGE, "option %s needs a value", opt);
            if (ads_format_parse(&r->fmt, v, &err))
                return cli_fail(c, EXIT_USAGE, "%s", err.message);
        } else if (cli_is_opt(opt, NULL, "--hidden")) {
            r->opt.hidden = true;
        } else if (cli_is_opt(opt, NULL, "--max-memory") || cli_is_opt(opt, NULL, "--max-time")) {
            const char *v = cli_args_value(a, c, opt);
            if (!v)
                return EXIT_USAGE;
            if ((rc = limit_value(c, r, opt, v)))
                return rc;
        } else if (cli_is_opt(opt, "-h", "--help")) {
            cli_print_help(help);
            return -1;
        } else {
            return cli_fail(c, EXIT_USAGE, "unknown option '%s'", opt);
        }
    }
    return 0;
}

int cmd_execute(cli_ctx *c, int argc, char **argv)
{
    char **ops = calloc((size_t)argc + 1, sizeof *ops);
    cli_args a;
    runner r = {c, NULL, NULL, ADS_FORMAT_TEXT, {false}, false, ADS_DEFAULT_STMT_MEMORY,
                ADS_DEFAULT_STMT_SECONDS};
    if (!ops)
        return cli_fail(c, EXIT_INPUT, "out of memory");
    cli_args_init(&a, argc, argv, ops);
    int rc = parse_options(c, &a, &r, "execute");
    if (rc) {
        free(ops);
        return rc < 0 ? EXIT_OK : rc;
    }
    if (a.nops == 0) {
        free(ops);
        return cli_fail(c, EXIT_USAGE, "expected a statement (or - to read statements from stdin)");
    }
    char *text;
    size_t len;
    if (a.nops == 1 && strcmp(a.ops[0], "-") == 0) {
        text = read_all(stdin, &len);
        if (!text) {
            free(ops);
            return cli_fail(c, EXIT_INPUT, "cannot read stdin");
        }
        rc = run_script(&r, text, len);
    } else {
        /* the operands, joined by spaces, are one statement */
        ads_buf b = ADS_BUF_INIT;
        for (int i = 0; i < a.nops; i++) {
            if (i)
                ads_buf_addc(&b, ' ');
            ads_buf_adds(&b, a.ops[i]);
        }
        if (b.failed) {
            free(ops);
            ads_buf_free(&b);
            return cli_fail(c, EXIT_INPUT, "out of memory");
        }
        len = b.len;
        text = b.p;
        rc = run_one(&r, text ? text : "", len, 0, len);
    }
    free(text);
    free(ops);
    ads_query_free(r.q);
    ads_db_close(r.db);
    return rc;
}

/* ---- the shell ---- */

static const char shell_help[] =
    "Statements end with ';' (they may span lines). Commands:\n"
    "  .format F   output format: text, native, json, csv, tabular, xml\n"
    "  .hidden     toggle showing attributes starting with '_' in SELECT *\n"
    "  .help       this text\n"
    "  .quit       leave (so does end of input)\n"
    "The statement language: docs/query.md, or 'adstore help execute'.\n";

/* Does buf hold a complete statement (a ';' outside strings, comments and
 * brackets)? */
static bool complete(const char *buf, size_t len)
{
    size_t pos = 0, s, e;
    while (ads_query_next_statement(buf, len, &pos, &s, &e))
        if (e < len && buf[e] == ';')
            return true;
    return false;
}

int cmd_shell(cli_ctx *c, int argc, char **argv)
{
    char **ops = calloc((size_t)argc + 1, sizeof *ops);
    cli_args a;
    runner r = {c, NULL, NULL, ADS_FORMAT_TEXT, {false}, false, ADS_DEFAULT_STMT_MEMORY,
                ADS_DEFAULT_STMT_SECONDS};
    if (!ops)
        return cli_fail(c, EXIT_INPUT, "out of memory");
    cli_args_init(&a, argc, argv, ops);
    int rc = parse_options(c, &a, &r, "shell");
    int nops = a.nops;
    free(ops);
    if (rc)
        return rc < 0 ? EXIT_OK : rc;
    if (nops)
        return cli_fail(c, EXIT_USAGE, "the shell takes no statement: type them at its prompt");
    bool tty = isatty(STDIN_FILENO) == 1;
    char hist[4096] = "";
    const char *home = getenv("HOME");
    if (tty) {
        using_history();
        if (home && snprintf(hist, sizeof hist, "%s/.adstore_history", home) < (int)sizeof hist)
            read_history(hist);
        printf("adstore shell: statements end with ';', .help for help, .quit to leave\n");
    }
    ads_buf stmt = ADS_BUF_INIT;
    int status = EXIT_OK;
    for (;;) {
        char *line = NULL;
        if (tty) {
            line = readline(stmt.len ? "   ...> " : "adstore> ");
        } else {
            size_t cap = 0;
            ssize_t n = getline(&line, &cap, stdin);
            if (n < 0) {
                free(line);
                line = NULL;
            } else if (n > 0 && line[n - 1] == '\n') {
                line[n - 1] = 0;
            }
        }
        if (!line)
            break;
        const char *l = line;
        while (*l == ' ' || *l == '\t')
            l++;
        if (stmt.len == 0 && *l == '.') {
            if (tty)
                add_history(line);
            if (strncmp(l, ".quit", 5) == 0 || strncmp(l, ".exit", 5) == 0) {
                free(line);
                break;
            } else if (strncmp(l, ".help", 5) == 0) {
                fputs(shell_help, stdout);
            } else if (strncmp(l, ".hidden", 7) == 0) {
                r.opt.hidden = !r.opt.hidden;
                printf("hidden attributes %s\n", r.opt.hidden ? "shown" : "hidden");
            } else if (strncmp(l, ".format", 7) == 0) {
                const char *f = l + 7;
                while (*f == ' ' || *f == '\t')
                    f++;
                ads_error err;
                if (ads_format_parse(&r.fmt, f, &err))
                    fprintf(stderr, "%s\n", err.message);
                else
                    printf("format %s\n", ads_format_name(r.fmt));
            } else {
                fprintf(stderr, "unknown command '%s'; .help lists them\n", l);
            }
            fflush(stdout);
            free(line);
            continue;
        }
        if (*l == 0) {
            /* a blank line is nothing at the prompt, even inside a statement
             * (statements end with ';', not with a blank line as in scripts) */
            free(line);
            continue;
        }
        if (stmt.len)
            ads_buf_addc(&stmt, '\n');
        ads_buf_adds(&stmt, line);
        free(line);
        if (stmt.failed) {
            status = cli_fail(c, EXIT_INPUT, "out of memory");
            break;
        }
        if (!complete(stmt.p, stmt.len))
            continue;
        if (tty)
            add_history(stmt.p);
        /* run the statements that end with ';'; what follows the last one
         * (a statement still being typed) stays for the next line */
        size_t pos = 0, s, e, done = stmt.len;
        while (ads_query_next_statement(stmt.p, stmt.len, &pos, &s, &e)) {
            if (e >= stmt.len || stmt.p[e] != ';') {
                done = s;
                break;
            }
            int rc2 = run_one(&r, stmt.p, stmt.len, s, e);
            if (rc2)
                status = rc2; /* the shell goes on; the exit status remembers */
        }
        if (done < stmt.len) {
            size_t rest = stmt.len - done;
            memmove(stmt.p, stmt.p + done, rest);
            stmt.len = rest;
            stmt.p[rest] = 0;
        } else {
            ads_buf_clear(&stmt);
        }
    }
    if (stmt.len) {
        size_t pos = 0, s, e;
        while (ads_query_next_statement(stmt.p, stmt.len, &pos, &s, &e)) {
            int rc2 = run_one(&r, stmt.p, stmt.len, s, e);
            if (rc2)
                status = rc2;
        }
    }
    if (tty && hist[0])
        write_history(hist);
    ads_buf_free(&stmt);
    ads_query_free(r.q);
    ads_db_close(r.db);
    return status;
}
