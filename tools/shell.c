/*
 * tools/shell.c: `adstore shell` (shared/spec/tools.md): statements typed at
 * a prompt (libedit, with history kept in a file) or read from a pipe, each
 * ending with ';' and run by the runner execute uses (tools/runner.h), and
 * the shell's dot commands. Ctrl-C cancels the line being typed, or stops
 * the statement running (ads_query_interrupt), never the shell; Ctrl-D at
 * an empty prompt leaves.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <editline/readline.h>

#include "tools/runner.h"

static const char shell_help[] =
    "Statements end with ';' (they may span lines). Commands:\n"
    "  .format [F]       show the output format, or set it: text, native,\n"
    "                    json, jsonl, csv, tabular, values, xml\n"
    "  .headers on|off   csv and tabular header lines\n"
    "  .hidden           toggle showing attributes starting with '_' in SELECT *\n"
    "  .tables           the declared types\n"
    "  .schema TYPE      a type's key attributes, and its attributes with the\n"
    "                    number of records holding each\n"
    "  .read FILE        run the statements of FILE (as execute --file)\n"
    "  .timer on|off     each statement's wall time\n"
    "  .explain SELECT   the plan of a SELECT (as EXPLAIN SELECT ...); also of an\n"
    "                    UPDATE, DELETE or PURGE (nothing is written)\n"
    "  .explain analyze SELECT   run it, then the plan with the rows each step read\n"
    "                    (an UPDATE, DELETE or PURGE is run: it writes)\n"
    "  .help             this text\n"
    "  .quit             leave (so do .exit and Ctrl-D)\n"
    "Ctrl-C cancels the statement being typed or run.\n"
    "The statement language: docs/query.md, or 'adstore help execute'.\n";

/* What the SIGINT handler may touch: a signal handler has nothing else. */
static sigjmp_buf prompt_jump;
static volatile sig_atomic_t at_prompt;
static runner *volatile running;

static void on_sigint(int sig)
{
    (void)sig;
    if (running && running->q)
        ads_query_interrupt(running->q);
    if (at_prompt) {
        at_prompt = 0;
        siglongjmp(prompt_jump, 1);
    }
}

typedef struct shell {
    runner r;
    bool tty;
    ads_buf stmt; /* the statement being typed */
    int status;
} shell;

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

/* Run [s, e) of text, the shell going on whatever happens. */
static void run(shell *sh, const char *text, size_t len, size_t s, size_t e)
{
    running = &sh->r;
    int rc = runner_run(&sh->r, text, len, s, e);
    running = NULL;
    sh->r.txn_line = 0; /* lines count from each statement typed: no use in messages */
    if (rc)
        sh->status = rc; /* the exit status remembers */
}

/* A statement the shell makes itself, its rows as `values`, no count. */
static void run_own(shell *sh, const char *text)
{
    runner keep = sh->r;
    sh->r.fmt = ADS_FORMAT_VALUES;
    sh->r.quiet = true;
    sh->r.timer = false;
    run(sh, text, strlen(text), 0, strlen(text));
    keep.db = sh->r.db; /* the store may have been opened */
    keep.q = sh->r.q;
    keep.create = sh->r.create;
    sh->r = keep;
}

/* A type name as a ClassAd string literal's contents: plain names only. */
static bool plain_name(const char *s)
{
    if (!*s)
        return false;
    for (; *s; s++)
        if (!(*s == '_' || *s == '.' || (*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'z') ||
              (*s >= 'A' && *s <= 'Z')))
            return false;
    return true;
}

static void schema(shell *sh, const char *type)
{
    if (!plain_name(type)) {
        fprintf(stderr, ".schema takes a type name, not '%s'\n", type);
        return;
    }
    ads_buf b = ADS_BUF_INIT;
    ads_buf_printf(&b,
                   "SELECT strcat(ForType, \" keyed by \", unparse(KeyAttributes), \": \", "
                   "Count, \" records\") USING types WHERE ForType =?= \"%s\"",
                   type);
    if (!b.failed)
        run_own(sh, b.p);
    ads_buf_clear(&b);
    /* each attribute the type has seen, with how many records hold it */
    ads_buf_printf(&b,
                   "SELECT strcat(\"  \", A.ForName, \" \", string(count(*))) FROM %s R "
                   "JOIN ALL Attribute A ON A.ForType =?= \"%s\" && "
                   "!isUndefined(R[A.ForName]) GROUP BY A.ForName ORDER BY A.ForName",
                   type, type);
    if (!b.failed)
        run_own(sh, b.p);
    ads_buf_free(&b);
}

static void read_file(shell *sh, const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "cannot open %s\n", path);
        sh->status = EXIT_INPUT;
        return;
    }
    ads_buf text = ADS_BUF_INIT;
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
        ads_buf_add(&text, chunk, n);
    fclose(f);
    size_t pos = 0, s, e;
    const char *p = text.p ? text.p : "";
    while (!text.failed && ads_query_next_statement(p, text.len, &pos, &s, &e)) {
        int before = sh->status;
        sh->status = 0;
        run(sh, p, text.len, s, e);
        bool failed = sh->status != 0;
        sh->status = failed ? sh->status : before;
        if (failed)
            break; /* as execute --file: the first failure stops the file */
    }
    ads_buf_free(&text);
}

static bool on_off(const char *arg, bool *out, const char *what)
{
    if (strcasecmp(arg, "on") == 0)
        *out = true;
    else if (strcasecmp(arg, "off") == 0)
        *out = false;
    else {
        fprintf(stderr, "%s takes on or off\n", what);
        return false;
    }
    return true;
}

/* A dot command; false for .quit. */
static bool dot(shell *sh, const char *l)
{
    char cmd[32] = "";
    size_t n = strcspn(l, " \t");
    const char *arg = l + n;
    while (*arg == ' ' || *arg == '\t')
        arg++;
    snprintf(cmd, sizeof cmd, "%.*s", (int)(n < 31 ? n : 31), l);
    if (strcmp(cmd, ".quit") == 0 || strcmp(cmd, ".exit") == 0)
        return false;
    if (strcmp(cmd, ".help") == 0) {
        fputs(shell_help, stdout);
    } else if (strcmp(cmd, ".hidden") == 0) {
        sh->r.opt.hidden = !sh->r.opt.hidden;
        printf("hidden attributes %s\n", sh->r.opt.hidden ? "shown" : "hidden");
    } else if (strcmp(cmd, ".format") == 0) {
        ads_error err;
        if (*arg && ads_format_parse(&sh->r.fmt, arg, &err))
            fprintf(stderr, "%s\n", err.message);
        else
            printf("format %s\n", ads_format_name(sh->r.fmt));
    } else if (strcmp(cmd, ".headers") == 0) {
        if (on_off(arg, &sh->r.header, ".headers"))
            printf("headers %s\n", sh->r.header ? "on" : "off");
    } else if (strcmp(cmd, ".timer") == 0) {
        if (on_off(arg, &sh->r.timer, ".timer"))
            printf("timer %s\n", sh->r.timer ? "on" : "off");
    } else if (strcmp(cmd, ".tables") == 0) {
        run_own(sh, "SELECT ForType USING types WHERE !Builtin");
    } else if (strcmp(cmd, ".schema") == 0) {
        schema(sh, arg);
    } else if (strcmp(cmd, ".explain") == 0) {
        ads_buf text = ADS_BUF_INIT;
        ads_buf_adds(&text, "EXPLAIN ");
        ads_buf_adds(&text, arg);
        if (*arg && !text.failed)
            run(sh, text.p, text.len, 0, text.len);
        else
            fprintf(stderr, ".explain takes a SELECT, UPDATE, DELETE or PURGE statement\n");
        ads_buf_free(&text);
    } else if (strcmp(cmd, ".read") == 0) {
        if (*arg)
            read_file(sh, arg);
        else
            fprintf(stderr, ".read takes a file name\n");
    } else {
        fprintf(stderr, "unknown command '%s'; .help lists them\n", l);
    }
    fflush(stdout);
    return true;
}

/* Add a typed line; run the statements it finished. */
static void feed(shell *sh, const char *line)
{
    if (sh->stmt.len)
        ads_buf_addc(&sh->stmt, '\n');
    ads_buf_adds(&sh->stmt, line);
    if (sh->stmt.failed || !complete(sh->stmt.p, sh->stmt.len))
        return;
    if (sh->tty)
        add_history(sh->stmt.p);
    /* run the statements that end with ';'; what follows the last one (a
     * statement still being typed) stays for the next line */
    size_t pos = 0, s, e, done = sh->stmt.len;
    while (ads_query_next_statement(sh->stmt.p, sh->stmt.len, &pos, &s, &e)) {
        if (e >= sh->stmt.len || sh->stmt.p[e] != ';') {
            done = s;
            break;
        }
        run(sh, sh->stmt.p, sh->stmt.len, s, e);
    }
    if (done < sh->stmt.len) {
        size_t rest = sh->stmt.len - done;
        memmove(sh->stmt.p, sh->stmt.p + done, rest);
        sh->stmt.len = rest;
        sh->stmt.p[rest] = 0;
    } else {
        ads_buf_clear(&sh->stmt);
    }
}

/* The next line (malloc'd), or NULL at end of input. At a terminal, Ctrl-C
 * drops the statement being typed and prompts again. */
static char *next_line(shell *sh)
{
    if (!sh->tty) {
        char *line = NULL;
        size_t cap = 0;
        ssize_t n = getline(&line, &cap, stdin);
        if (n < 0) {
            free(line);
            return NULL;
        }
        if (n > 0 && line[n - 1] == '\n')
            line[n - 1] = 0;
        return line;
    }
    if (sigsetjmp(prompt_jump, 1)) {
        fputs("^C\n", stdout);
        ads_buf_clear(&sh->stmt);
    }
    at_prompt = 1;
    char *line = readline(sh->stmt.len ? "   ...> " : "adstore> ");
    at_prompt = 0;
    return line;
}

/* ~/.adstore_history, or $ADSTORE_HISTORY (empty: none). */
static void history_path(char *out, size_t cap)
{
    const char *env = getenv("ADSTORE_HISTORY"), *home = getenv("HOME");
    out[0] = 0;
    if (env)
        snprintf(out, cap, "%s", env);
    else if (home && (size_t)snprintf(out, cap, "%s/.adstore_history", home) >= cap)
        out[0] = 0;
}

static void loop(shell *sh)
{
    char *line;
    while ((line = next_line(sh))) {
        const char *l = line;
        while (*l == ' ' || *l == '\t')
            l++;
        bool go_on = true;
        if (sh->stmt.len == 0 && *l == '.') {
            if (sh->tty)
                add_history(line);
            go_on = dot(sh, l);
        } else if (*l) {
            /* a blank line is nothing, even inside a statement */
            feed(sh, line);
        }
        free(line);
        if (sh->stmt.failed) {
            sh->status = cli_fail(sh->r.c, EXIT_INPUT, "out of memory");
            return;
        }
        if (!go_on)
            return;
    }
    if (sh->tty)
        fputc('\n', stdout); /* Ctrl-D: leave the terminal on a fresh line */
    /* end of input runs what is left */
    size_t pos = 0, s, e;
    while (sh->stmt.len && ads_query_next_statement(sh->stmt.p, sh->stmt.len, &pos, &s, &e))
        run(sh, sh->stmt.p, sh->stmt.len, s, e);
}

int cmd_shell(cli_ctx *c, int argc, char **argv)
{
    char **ops = calloc((size_t)argc + 1, sizeof *ops);
    cli_args a;
    shell sh = {.tty = isatty(STDIN_FILENO) == 1, .stmt = ADS_BUF_INIT};
    runner_init(&sh.r, c);
    if (!ops)
        return cli_fail(c, EXIT_INPUT, "out of memory");
    cli_args_init(&a, argc, argv, ops);
    int rc = runner_options(c, &a, &sh.r, "shell");
    int nops = a.nops;
    free(ops);
    if (rc)
        return rc < 0 ? EXIT_OK : rc;
    if (nops)
        return cli_fail(c, EXIT_USAGE, "the shell takes no statement: type them at its prompt");
    char hist[4096];
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old);
    history_path(hist, sizeof hist);
    if (sh.tty) {
        using_history();
        if (hist[0])
            read_history(hist);
        printf("adstore shell: statements end with ';', .help for help, .quit to leave\n");
    }
    loop(&sh);
    if (runner_end(&sh.r, "the end of input"))
        sh.status = EXIT_INPUT;
    if (sh.tty && hist[0])
        write_history(hist);
    sigaction(SIGINT, &old, NULL);
    ads_buf_free(&sh.stmt);
    int crc = runner_close(&sh.r);
    return sh.status ? sh.status : crc;
}
