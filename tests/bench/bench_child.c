/*
 * tests/bench/bench_child.c: running a command as a child process and
 * measuring it: wall seconds from fork to exit, CPU seconds (user + system,
 * the delta of getrusage(RUSAGE_CHILDREN) around the wait, which counts every
 * waited-for descendant), and the peak resident set of the command alone as
 * /usr/bin/time reports it. A forked child of this process would carry this
 * process's pages in its resident set until it execs, so the command runs
 * under /usr/bin/time, whose own CPU (a millisecond) is counted for every
 * system alike.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/bench/bench_real.h"

#define MAX_ARGS 64

static double cpu_of(const struct rusage *ru)
{
    return (double)ru->ru_utime.tv_sec + (double)ru->ru_utime.tv_usec / 1e6 +
           (double)ru->ru_stime.tv_sec + (double)ru->ru_stime.tv_usec / 1e6;
}

static void exec_child(char *const argv[], const char *in, const char *out, int efd)
{
    int ifd = open(in ? in : "/dev/null", O_RDONLY);
    int ofd = out ? open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600) : open("/dev/null", O_WRONLY);
    if (ifd < 0 || ofd < 0)
        _exit(126);
    dup2(ifd, 0);
    dup2(ofd, 1);
    dup2(efd, 2);
    execvp(argv[0], argv);
    _exit(127);
}

/* The command's stderr, shown when it failed. */
static void show_failure(const char *cmd, int status, int efd)
{
    char buf[2048];
    ssize_t n = pread(efd, buf, sizeof buf - 1, 0);
    buf[n > 0 ? n : 0] = '\0';
    fprintf(stderr, "adstore-bench: %s failed (status %d):\n%s", cmd, status, buf);
}

static int read_maxrss(const char *file, long *kb)
{
    FILE *f = fopen(file, "r");
    int ok = f && fscanf(f, "%ld", kb) == 1;
    if (f)
        fclose(f);
    return ok ? 0 : bench_fail("/usr/bin/time", "no peak resident set reported");
}

int bench_child_run(char *const argv[], const char *in, const char *out, bench_child *st)
{
    char rssfile[] = "/tmp/adstore-bench-rss-XXXXXX", errfile[] = "/tmp/adstore-bench-err-XXXXXX";
    int rfd = mkstemp(rssfile), efd = mkstemp(errfile);
    if (rfd < 0 || efd < 0)
        return bench_fail("mkstemp", strerror(errno));
    close(rfd);
    char *timed[MAX_ARGS] = {"/usr/bin/time", "-f", "%M", "-o", rssfile};
    int n = 5;
    for (int i = 0; argv[i]; i++)
        if (n < MAX_ARGS - 1)
            timed[n++] = argv[i];
    timed[n] = NULL;
    struct rusage before, after;
    getrusage(RUSAGE_CHILDREN, &before);
    double t0 = bench_now();
    pid_t pid = fork();
    if (pid < 0)
        return bench_fail("fork", strerror(errno));
    if (pid == 0)
        exec_child(timed, in, out, efd);
    int status, rc = 0;
    if (waitpid(pid, &status, 0) < 0)
        return bench_fail("waitpid", strerror(errno));
    st->wall = bench_now() - t0;
    getrusage(RUSAGE_CHILDREN, &after);
    st->cpu = cpu_of(&after) - cpu_of(&before);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        show_failure(argv[0], status, efd);
        rc = -1;
    }
    if (!rc)
        rc = read_maxrss(rssfile, &st->maxrss);
    close(efd);
    unlink(errfile);
    unlink(rssfile);
    return rc;
}

uint64_t bench_disk_bytes(const char *path)
{
    struct stat sb;
    if (lstat(path, &sb) != 0)
        return 0;
    if (!S_ISDIR(sb.st_mode))
        return (uint64_t)sb.st_blocks * 512;
    uint64_t sum = 0;
    DIR *d = opendir(path);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char sub[2048];
        snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
        sum += bench_disk_bytes(sub);
    }
    if (d)
        closedir(d);
    return sum;
}

double bench_cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}
