/*
 * tools/shell.c: `adstore shell` (shared/spec/tools.md): statements typed at
 * a prompt (libedit, with history) or read from a pipe, each ending with ';'
 * and run by the runner execute uses (tools/runner.h), and the shell's dot
 * commands (.format, .hidden, .help, .quit).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <editline/readline.h>

#include "tools/runner.h"

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
    runner r;
    runner_init(&r, c);
    if (!ops)
        return cli_fail(c, EXIT_INPUT, "out of memory");
    cli_args_init(&a, argc, argv, ops);
    int rc = runner_options(c, &a, &r, "shell");
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
            int rc2 = runner_run(&r, stmt.p, stmt.len, s, e);
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
            int rc2 = runner_run(&r, stmt.p, stmt.len, s, e);
            if (rc2)
                status = rc2;
        }
    }
    if (tty && hist[0])
        write_history(hist);
    ads_buf_free(&stmt);
    int crc = runner_close(&r);
    return status ? status : crc;
}
