/*
 * tests/cli/test_shell.c: `adstore shell` at a terminal. The real program
 * runs on a pseudo-terminal (forkpty); the test types keys into it and reads
 * the screen: Ctrl-C while a statement is typed cancels it, Ctrl-C while a
 * statement runs stops it (the shell goes on), Ctrl-D leaves, and the
 * history is kept in $ADSTORE_HISTORY. Reads wait for the text they expect
 * (a long deadline only guards against a hang; nothing is timed).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <errno.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "base/buf.h"
#include "tests/cli/run_check.h"

static char *dir;
static char store[1100];

static int setup(void **state)
{
    (void)state;
    return cli_dir_new(&dir, store, sizeof store, "db");
}

static int teardown(void **state)
{
    (void)state;
    cli_dir_free(&dir);
    return 0;
}

typedef struct term {
    int fd;
    pid_t pid;
    char screen[1 << 16]; /* the last bytes read (older ones scroll away) */
    size_t len;
} term;

static void term_start(term *t)
{
    char hist[1200];
    snprintf(hist, sizeof hist, "%s/history", dir);
    t->len = 0;
    t->screen[0] = 0;
    t->pid = forkpty(&t->fd, NULL, NULL, NULL);
    assert_true(t->pid >= 0);
    if (t->pid == 0) {
        setenv("ADSTORE_HISTORY", hist, 1);
        setenv("TERM", "dumb", 1);
        /* Ctrl-C makes the terminal driver discard output not yet read,
         * after it signals: the shell's "^C" and prompt, written at once,
         * could be discarded with it. A person never reads bytes that
         * fast; the test does, so its terminal keeps output (NOFLSH). */
        struct termios tio;
        if (tcgetattr(STDIN_FILENO, &tio) == 0) {
            tio.c_lflag |= NOFLSH;
            tcsetattr(STDIN_FILENO, TCSANOW, &tio);
        }
        execl(ADS_PROGRAM, ADS_PROGRAM, "-d", store, "shell", (char *)NULL);
        _exit(127);
    }
}

/* Wait until the shell reads keys one by one (libedit has taken the
 * terminal out of canonical mode; on Linux the master sees the slave's
 * settings). libedit writes its prompt before it switches: a Ctrl-D typed
 * in between is an end-of-line to the canonical line discipline and reaches
 * libedit as a NUL byte, so a test that typed on seeing the prompt lost it
 * now and then. */
static void term_ready(term *t)
{
    for (int waited = 0;; waited++) {
        struct termios tio;
        assert_int_equal(tcgetattr(t->fd, &tio), 0);
        if (!(tio.c_lflag & ICANON))
            return;
        if (waited > 12000)
            fail_msg("the shell never read keys; the screen holds:\n%s", t->screen);
        usleep(10000);
    }
}

/* Type keys at the prompt, once the shell reads them. */
static void term_type(term *t, const char *keys)
{
    term_ready(t);
    size_t n = strlen(keys);
    assert_int_equal(write(t->fd, keys, n), (ssize_t)n);
}

/* Read until the screen holds text (after what earlier waits consumed). */
static void term_wait(term *t, const char *text)
{
    for (int waited = 0; !strstr(t->screen, text); waited++) {
        struct pollfd p = {t->fd, POLLIN, 0};
        if (waited > 1200 || poll(&p, 1, 100) < 0)
            fail_msg("waited for '%s'; the screen holds:\n%s", text, t->screen);
        if (!(p.revents & (POLLIN | POLLHUP)))
            continue;
        if (t->len > sizeof t->screen / 2) { /* keep the newest half */
            size_t keep = sizeof t->screen / 4;
            memmove(t->screen, t->screen + t->len - keep, keep);
            t->len = keep;
        }
        ssize_t n = read(t->fd, t->screen + t->len, sizeof t->screen - 1 - t->len);
        if (n <= 0)
            fail_msg("the shell ended while waiting for '%s':\n%s", text, t->screen);
        t->len += (size_t)n;
        t->screen[t->len] = 0;
        /* a NUL byte on the screen would hide what follows */
        for (size_t i = t->len - (size_t)n; i < t->len; i++)
            if (t->screen[i] == 0)
                t->screen[i] = '?';
    }
    /* forget what was read up to the end of text */
    char *end = strstr(t->screen, text) + strlen(text);
    t->len -= (size_t)(end - t->screen);
    memmove(t->screen, end, t->len + 1);
}

/* Type keys while a statement runs (the terminal is in canonical mode and
 * Ctrl-C is a signal either way). */
static void term_type_now(term *t, const char *keys)
{
    size_t n = strlen(keys);
    assert_int_equal(write(t->fd, keys, n), (ssize_t)n);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Wait for the shell to leave (draining the screen, so it is not stuck
 * writing); a shell still there after two minutes is killed, and fails.
 * Once the shell has closed its terminal, poll returns at once (POLLHUP)
 * while the process may still be exiting (the sanitizers' leak check at
 * exit takes seconds): the wait is measured in time, not in polls. */
static int term_end(term *t)
{
    int status;
    char buf[4096];
    double start = now_s();
    for (;;) {
        pid_t w = waitpid(t->pid, &status, WNOHANG);
        assert_true(w >= 0);
        if (w == t->pid)
            break;
        struct pollfd p = {t->fd, POLLIN, 0};
        int ready = poll(&p, 1, 100);
        ssize_t n = ready > 0 && (p.revents & POLLIN) ? read(t->fd, buf, sizeof buf) : 0;
        if (n < 0 && errno != EIO)
            fail_msg("reading the terminal: %s", strerror(errno));
        if (ready > 0 && n <= 0) /* hung up, nothing to read: do not spin */
            usleep(10000);
        if (now_s() - start > 120) {
            kill(t->pid, SIGKILL);
            waitpid(t->pid, &status, 0);
            close(t->fd);
            fail_msg("the shell did not leave; the screen holds:\n%s", t->screen);
        }
    }
    close(t->fd);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static void shell__ctrl_c_cancels_what_is_typed_and_ctrl_d_leaves(void **state)
{
    (void)state;
    DO(0, "-d", store, "execute",
       "STORE [ AdType = \"Type\"; ForType = \"T\"; KeyAttributes = { \"K\" } ]");
    term t;
    term_start(&t);
    term_wait(&t, "adstore shell: statements end with ';', .help for help, .quit to leave\r\n");
    term_wait(&t, "adstore> ");
    term_type(&t, "SELECT nosuch\r");
    term_wait(&t, "   ...> ");
    /* Ctrl-C: the statement being typed is gone, the prompt is back */
    term_type(&t, "\x03");
    term_wait(&t, "^C\r\nadstore> ");
    term_type(&t, "SELECT 1 + 1 AS two;\r");
    term_wait(&t, "two = 2\r\n\r\n1 row\r\nadstore> ");
    term_type(&t, ".format\r");
    term_wait(&t, "format text\r\nadstore> ");
    /* Ctrl-D at an empty prompt: leave cleanly, status 0 */
    term_type(&t, "\x04");
    assert_int_equal(term_end(&t), 0);
    /* the history file holds what ran */
    char path[1200], buf[4096];
    snprintf(path, sizeof path, "%s/history", dir);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    /* (libedit's format: a header line, spaces as \040) */
    assert_non_null(strstr(buf, "SELECT\\0401\\040+\\0401\\040AS\\040two;"));
    assert_null(strstr(buf, "nosuch"));
}

static void shell__ctrl_c_stops_a_running_statement_not_the_shell(void **state)
{
    (void)state;
    /* 200 records joined with themselves twice: 8 million rows, far more
     * than the test waits for */
    ads_buf b = ADS_BUF_INIT;
    ads_buf_adds(&b, "STORE [ AdType = \"Type\"; ForType = \"T\"; KeyAttributes = { \"K\" } ];\n"
                     "STORE ");
    for (int i = 0; i < 200; i++)
        ads_buf_printf(&b, "%s[ AdType = \"T\"; K = %d ]", i ? ", " : "", i);
    assert_false(b.failed);
    run_result r;
    RUN_IN(r, b.p, 0, "-d", store, "execute", "-");
    run_free(&r);
    ads_buf_free(&b);
    term t;
    term_start(&t);
    term_wait(&t, "adstore> ");
    term_type(&t, "SELECT A.K AS a FROM T A JOIN ALL T B ON true JOIN ALL T C ON true;\r");
    term_wait(&t, "a = 1\r\n"); /* rows are coming: the statement runs */
    term_type_now(&t, "\x03");
    term_wait(&t, "adstore shell: interrupted\r\nadstore> ");
    /* the shell goes on */
    term_type(&t, "SELECT count(*) AS n FROM T;\r");
    term_wait(&t, "n = 200\r\n\r\n1 row\r\nadstore> ");
    term_type(&t, ".quit\r");
    /* the interrupted statement is a failure in the exit status */
    assert_int_equal(term_end(&t), 1);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
        T(shell__ctrl_c_cancels_what_is_typed_and_ctrl_d_leaves),
        T(shell__ctrl_c_stops_a_running_statement_not_the_shell),
#undef T
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
