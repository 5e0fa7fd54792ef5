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
#include <time.h>
#include <unistd.h>

#include "tools/runner.h"

void runner_init(runner *r, cli_ctx *c)
{
    *r = (runner){.c = c,
                  .fmt = ADS_FORMAT_TEXT,
                  .header = true,
                  .out = stdout,
                  .opt = ADS_EXEC_OPTIONS_INIT,
                  .max_bytes = ADS_DEFAULT_STMT_MEMORY,
                  .max_seconds = ADS_DEFAULT_STMT_SECONDS};
}

int runner_close(runner *r)
{
    int rc = 0;
    ads_params_free(r->params);
    r->params = NULL;
    r->opt.params = NULL;
    ads_query_free(r->q);
    ads_db_close(r->db);
    r->q = NULL;
    r->db = NULL;
    if (r->out && r->out != stdout) {
        bool bad = ferror(r->out) != 0;
        if (fclose(r->out) != 0 || bad)
            rc = cli_fail(r->c, EXIT_INPUT, "cannot write %s: %s", r->out_path,
                          errno ? strerror(errno) : "write error");
        r->out = stdout;
    }
    return rc;
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
    if (info->kind == ADS_STMT_BEGIN || info->kind == ADS_STMT_COMMIT ||
        info->kind == ADS_STMT_ROLLBACK)
        fprintf(stderr, "transaction %s\n", info->kind == ADS_STMT_BEGIN    ? "begun"
                                            : info->kind == ADS_STMT_COMMIT ? "committed"
                                                                            : "rolled back");
    else if (info->kind == ADS_STMT_SELECT)
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

/* "the transaction begun at line N" (N: the open BEGIN's line, when
 * known), for messages. */
static const char *txn_name(const runner *r, char *buf, size_t cap)
{
    if (r->txn_line > 0)
        snprintf(buf, cap, "the transaction begun at line %d", r->txn_line);
    else
        snprintf(buf, cap, "the transaction");
    return buf;
}

/* After a statement failed inside a transaction (already rolled back by
 * the library, or here): say so. EXIT_INPUT. */
static int rolled_back(runner *r)
{
    char what[64];
    ads_query_rollback(r->q);
    return cli_fail(r->c, EXIT_INPUT, "%s was rolled back: nothing it wrote was kept",
                    txn_name(r, what, sizeof what));
}

/* The line of byte at in text (1-based). */
static int line_at(const char *text, size_t at)
{
    int line = 1;
    for (size_t i = 0; i < at; i++)
        line += text[i] == '\n';
    return line;
}

int runner_end(runner *r, const char *where)
{
    if (!ads_query_in_txn(r->q))
        return 0;
    char what[64];
    ads_query_rollback(r->q);
    return cli_fail(r->c, EXIT_INPUT,
                    "%s inside %s: rolled back, nothing it wrote was kept (end it with COMMIT)",
                    where, txn_name(r, what, sizeof what));
}

/* Run the statement at [start, end) of a script; 0 or an exit status. The
 * statement is parsed before the store is opened, so a statement that does
 * not parse never creates a store; a SELECT opens it read-only. */
int runner_run(runner *r, const char *text, size_t len, size_t start, size_t end)
{
    ads_error err;
    ads_stmt_kind kind;
    if (ads_query_parse(text, len, start, end, &kind, &err)) {
        int rc = fail_stmt(r, &err);
        return ads_query_in_txn(r->q) ? rolled_back(r) : rc;
    }
    int rc = open_store(r, kind != ADS_STMT_SELECT);
    if (rc)
        return rc;
    ads_writer *w;
    if (ads_writer_new(&w, r->fmt, r->out, &err))
        return cli_fail_err(r->c, &err);
    ads_writer_set_header(w, r->header);
    ads_sink sink = ads_writer_sink(w);
    ads_exec_info info;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    rc = ads_query_exec_at(r->q, text, len, start, end, &sink, &r->opt, &info, &err);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (rc) {
        /* a SELECT that failed part way: its rows so far, well formed */
        ads_error err2;
        ads_writer_abort(w, &err2);
    }
    fflush(r->out);
    ads_writer_free(w);
    if (r->timer)
        fprintf(stderr, "time: %.3f s\n",
                (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
    if (rc && info.rolled_back) {
        fail_stmt(r, &err);
        return rolled_back(r);
    }
    if (rc)
        return fail_stmt(r, &err);
    if (kind == ADS_STMT_BEGIN)
        r->txn_line = line_at(text, start);
    if (!r->quiet)
        report(&info);
    return 0;
}

static int run_script(runner *r, const char *text, size_t len)
{
    size_t pos = 0, start, end;
    int n = 0;
    while (ads_query_next_statement(text, len, &pos, &start, &end)) {
        int rc = runner_run(r, text, len, start, end);
        if (rc) {
            runner_end(r, "a failed statement");
            return rc;
        }
        n++;
    }
    if (n == 0)
        return cli_fail(r->c, EXIT_USAGE, "no statement given");
    int rc = runner_end(r, "the end of input");
    if (!rc && r->params) {
        ads_error err;
        if (ads_params_check_used(r->params, &err))
            rc = cli_fail(r->c, EXIT_INPUT, "--param: %s", err.message);
    }
    return rc;
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

/* -format F (the seed's spelling), --format F, -f F; -af (condor_q's
 * spelling) is -f values. */
static int format_opt(cli_ctx *c, cli_args *a, runner *r, const char *opt)
{
    const char *v;
    ads_error err;
    if (strcmp(opt, "-af") == 0) {
        r->fmt = ADS_FORMAT_VALUES;
        return 0;
    }
    if (strncmp(opt, "-format", 7) == 0)
        v = opt[7] == '=' ? opt + 8 : a->i < a->argc ? a->argv[a->i++] : NULL;
    else
        v = cli_args_value(a, c, opt);
    if (!v)
        return cli_fail(c, EXIT_USAGE, "option %s needs a value", opt);
    if (ads_format_parse(&r->fmt, v, &err))
        return cli_fail(c, EXIT_USAGE, "%s", err.message);
    return 0;
}

/* --param NAME=EXPR (the value of :NAME) or --param EXPR (the next ?):
 * EXPR is a ClassAd expression, evaluated alone (no record). */
static int param_opt(cli_ctx *c, runner *r, const char *v)
{
    ads_error err;
    if (!r->params && ads_params_new(&r->params, &err))
        return cli_fail_err(c, &err);
    r->opt.params = r->params;
    size_t n = 0;
    while ((v[n] >= 'A' && v[n] <= 'Z') || (v[n] >= 'a' && v[n] <= 'z') || v[n] == '_' ||
           (n && v[n] >= '0' && v[n] <= '9'))
        n++;
    bool named = n > 0 && v[n] == '=' && v[n + 1] != '=';
    const char *text = named ? v + n + 1 : v;
    ads_arena *a = ads_arena_new();
    const ads_expr *e;
    ads_value val;
    int rc = a ? ads_expr_parse(&e, a, text, strlen(text), &err)
               : ads_error_set(&err, ADS_ENOMEM, "out of memory");
    if (!rc && ads_expr_eval(&val, e, NULL, a))
        rc = ads_error_set(&err, ADS_ENOMEM, "out of memory");
    if (!rc)
        rc = named ? ads_params_bind_name(r->params, v, n, &val, &err)
                   : ads_params_bind(r->params, ++r->npositional, &val, &err);
    ads_arena_free(a);
    if (rc && err.line > 0)
        return cli_fail(c, EXIT_USAGE, "--param '%s': column %d: %s", v,
                        err.column + (int)(text - v), err.message);
    if (rc)
        return cli_fail(c, EXIT_USAGE, "--param '%s': %s", v, err.message);
    return 0;
}

/* -o FILE: results go to FILE (created or truncated) instead of stdout. */
static int output_opt(cli_ctx *c, cli_args *a, runner *r, const char *opt)
{
    const char *v = cli_args_value(a, c, opt);
    if (!v)
        return EXIT_USAGE;
    if (r->out != stdout)
        return cli_fail(c, EXIT_USAGE, "-o may be given once");
    FILE *f = fopen(v, "w");
    if (!f)
        return cli_fail(c, EXIT_INPUT, "cannot create %s: %s", v, strerror(errno));
    r->out = f;
    r->out_path = v;
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
                   strcmp(opt, "-af") == 0 || cli_is_opt(opt, "-f", "--format")) {
            if ((rc = format_opt(c, a, r, opt)))
                return rc;
        } else if (cli_is_opt(opt, "-o", "--output")) {
            if ((rc = output_opt(c, a, r, opt)))
                return rc;
        } else if (cli_is_opt(opt, NULL, "--noheader") || strcmp(opt, "-noheader") == 0) {
            r->header = false;
        } else if (cli_is_opt(opt, NULL, "--header") || strcmp(opt, "-header") == 0) {
            r->header = true;
        } else if (cli_is_opt(opt, NULL, "--file") && strcmp(help, "execute") == 0) {
            const char *v = cli_args_value(a, c, opt);
            if (!v)
                return EXIT_USAGE;
            r->file = v;
        } else if (cli_is_opt(opt, NULL, "--param")) {
            const char *v = cli_args_value(a, c, opt);
            if (!v)
                return EXIT_USAGE;
            if ((rc = param_opt(c, r, v)))
                return rc;
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

/* The statements of a file ('-': stdin), as one script. */
static int run_file(runner *r, const char *path)
{
    bool in = strcmp(path, "-") == 0;
    FILE *f = in ? stdin : fopen(path, "r");
    if (!f)
        return cli_fail(r->c, EXIT_INPUT, "cannot open %s: %s", path, strerror(errno));
    size_t len;
    char *text = read_all(f, &len);
    bool bad = ferror(f) != 0;
    if (!in)
        fclose(f);
    if (!text || bad) {
        free(text);
        return cli_fail(r->c, EXIT_INPUT, "cannot read %s", in ? "stdin" : path);
    }
    int rc = run_script(r, text, len);
    free(text);
    return rc;
}

/* The operands, joined by spaces, are one statement. A lone operand that
 * does not parse but names a file was meant as a script: say how. */
static int run_operands(runner *r, char **ops, int nops)
{
    ads_buf b = ADS_BUF_INIT;
    for (int i = 0; i < nops; i++) {
        if (i)
            ads_buf_addc(&b, ' ');
        ads_buf_adds(&b, ops[i]);
    }
    if (b.failed) {
        ads_buf_free(&b);
        return cli_fail(r->c, EXIT_INPUT, "out of memory");
    }
    const char *text = b.p ? b.p : "";
    ads_error err;
    int rc;
    if (nops == 1 && ads_query_parse(text, b.len, 0, b.len, NULL, &err) &&
        access(ops[0], R_OK) == 0)
        rc = cli_fail(r->c, EXIT_USAGE,
                      "'%s' is a file, not a statement: run its statements with "
                      "--file %s (or - to read them from stdin)",
                      ops[0], ops[0]);
    else
        rc = runner_run(r, text, b.len, 0, b.len);
    ads_buf_free(&b);
    return rc;
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
    if (rc == 0 && r.file && a.nops)
        rc = cli_fail(c, EXIT_USAGE, "--file takes the statements: give no statement besides");
    else if (rc == 0 && !r.file && a.nops == 0)
        rc = cli_fail(c, EXIT_USAGE,
                      "expected a statement (or --file FILE, or - to read statements from stdin)");
    if (rc == 0) {
        r.opt.params_script = r.file || (a.nops == 1 && strcmp(a.ops[0], "-") == 0);
        if (r.file)
            rc = run_file(&r, r.file);
        else if (a.nops == 1 && strcmp(a.ops[0], "-") == 0)
            rc = run_file(&r, "-");
        else if (!(rc = run_operands(&r, a.ops, a.nops)))
            rc = runner_end(&r, "the end of the statement");
    }
    free(ops);
    int crc = runner_close(&r);
    if (rc < 0)
        return crc ? crc : EXIT_OK; /* --help */
    return rc ? rc : crc;
}
