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
    *r = (runner){c, NULL, NULL, ADS_FORMAT_TEXT, true, stdout, NULL, NULL, false, false,
                  {false}, false, ADS_DEFAULT_STMT_MEMORY, ADS_DEFAULT_STMT_SECONDS};
}

int runner_close(runner *r)
{
    int rc = 0;
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
    if (rc)
        return fail_stmt(r, &err);
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
        if (r.file)
            rc = run_file(&r, r.file);
        else if (a.nops == 1 && strcmp(a.ops[0], "-") == 0)
            rc = run_file(&r, "-");
        else
            rc = run_operands(&r, a.ops, a.nops);
    }
    free(ops);
    int crc = runner_close(&r);
    if (rc < 0)
        return crc ? crc : EXIT_OK; /* --help */
    return rc ? rc : crc;
}
