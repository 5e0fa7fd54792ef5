/*
 * tools/cmd_execute.c: `adstore execute` (shared/spec/tools.md) and the
 * statement runner it shares with the shell (tools/runner.h, tools/shell.c):
 * statements of the language in query/query.h run against the store,
 * results on stdout in the chosen format, what each statement did on stderr
 * ("3 rows", "stored 2 records"), errors on stderr with the line and column.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "tools/runner.h"

void runner_init(runner *r, cli_ctx *c)
{
    *r = (runner){c, NULL, NULL, ADS_FORMAT_TEXT, {false}, false, ADS_DEFAULT_STMT_MEMORY,
                  ADS_DEFAULT_STMT_SECONDS};
}

void runner_close(runner *r)
{
    ads_query_free(r->q);
    ads_db_close(r->db);
    r->q = NULL;
    r->db = NULL;
}

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
int runner_run(runner *r, const char *text, size_t len, size_t start, size_t end)
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
        int rc = runner_run(r, text, len, start, end);
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

int runner_options(cli_ctx *c, cli_args *a, runner *r, const char *help)
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
    runner r;
    runner_init(&r, c);
    if (!ops)
        return cli_fail(c, EXIT_INPUT, "out of memory");
    cli_args_init(&a, argc, argv, ops);
    int rc = runner_options(c, &a, &r, "execute");
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
        rc = runner_run(&r, text ? text : "", len, 0, len);
    }
    free(text);
    free(ops);
    runner_close(&r);
    return rc;
}
