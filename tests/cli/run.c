/*
 * tests/cli/run.c: spawn the adstore program with pipes on its three
 * standard streams and collect everything it writes (poll, so neither pipe
 * can fill and stall it).
 */
#include "tests/cli/run.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

typedef struct buf {
    char *p;
    size_t len, cap;
} buf;

static int buf_add(buf *b, const char *s, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 4096;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p)
            return -1;
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
    return 0;
}

int run_adstore(run_result *r, const char *const *argv, const char *input)
{
    return run_adstore_env(r, argv, input, NULL, NULL);
}

int run_adstore_env(run_result *r, const char *const *argv, const char *input,
                    const char *out_path, char *const *env)
{
    int in[2], out[2], err[2];
    size_t argc = 0;
    while (argv[argc])
        argc++;
    char **args = calloc(argc + 2, sizeof *args);
    if (!args)
        return -1;
    args[0] = (char *)ADS_PROGRAM;
    for (size_t i = 0; i < argc; i++)
        args[i + 1] = (char *)argv[i];
    if (pipe(in) || pipe(out) || pipe(err)) {
        free(args);
        return -1;
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, in[0], 0);
    if (out_path)
        posix_spawn_file_actions_addopen(&fa, 1, out_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    else
        posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    posix_spawn_file_actions_adddup2(&fa, err[1], 2);
    posix_spawn_file_actions_addclose(&fa, in[1]);
    posix_spawn_file_actions_addclose(&fa, out[0]);
    posix_spawn_file_actions_addclose(&fa, err[0]);
    pid_t pid;
    int rc = posix_spawn(&pid, ADS_PROGRAM, &fa, NULL, args, env ? env : environ);
    posix_spawn_file_actions_destroy(&fa);
    free(args);
    close(in[0]);
    close(out[1]);
    close(err[1]);
    if (rc) {
        close(in[1]);
        close(out[0]);
        close(err[0]);
        return -1;
    }
    if (input) {
        size_t n = strlen(input), done = 0;
        while (done < n) {
            ssize_t w = write(in[1], input + done, n - done);
            if (w <= 0)
                break;
            done += (size_t)w;
        }
    }
    close(in[1]);

    buf bo = {0}, be = {0};
    buf_add(&bo, "", 0);
    buf_add(&be, "", 0);
    struct pollfd pfd[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
    int open_fds = 2;
    while (open_fds > 0) {
        if (poll(pfd, 2, -1) < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        for (int i = 0; i < 2; i++) {
            if (pfd[i].fd < 0 || !(pfd[i].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            char tmp[65536];
            ssize_t n = read(pfd[i].fd, tmp, sizeof tmp);
            if (n > 0) {
                buf_add(i == 0 ? &bo : &be, tmp, (size_t)n);
            } else {
                close(pfd[i].fd);
                pfd[i].fd = -1;
                open_fds--;
            }
        }
    }
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    r->status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    r->out = bo.p;
    r->out_len = bo.len;
    r->err = be.p;
    r->err_len = be.len;
    return 0;
}

void run_free(run_result *r)
{
    free(r->out);
    free(r->err);
    r->out = r->err = NULL;
}

char *make_temp_dir(void)
{
    char tmpl[] = "/tmp/adstore-test-XXXXXX";
    char *d = mkdtemp(tmpl);
    return d ? strdup(d) : NULL;
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

void remove_tree(const char *dir)
{
    if (dir)
        nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

int cli_dir_new(char **dir, char *store, size_t cap, const char *name)
{
    *dir = make_temp_dir();
    if (!*dir)
        return -1;
    if (store)
        snprintf(store, cap, "%s/%s", *dir, name);
    return 0;
}

void cli_dir_free(char **dir)
{
    remove_tree(*dir);
    free(*dir);
    *dir = NULL;
}
