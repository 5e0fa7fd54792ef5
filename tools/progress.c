/*
 * tools/progress.c: the progress bar of long commands (import, dump,
 * restore, verify, stats). Drawn on stderr only when stderr is a terminal,
 * redrawn at most ten times a second, erased when the work is done, so
 * output piped to files or tests never contains it. Sizes in the summaries
 * are printed by human_bytes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tools/cli.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void progress_init(progress *p, const char *what)
{
    p->tty = isatty(STDERR_FILENO) == 1;
    p->what = what;
    p->start = now_s();
    p->last = 0;
}

double progress_elapsed(const progress *p)
{
    return now_s() - p->start;
}

/* Draw: a bar filled to fraction (none when fraction < 0), rows and rate. */
static void draw(progress *p, uint64_t done, double fraction)
{
    if (!p->tty)
        return;
    double t = now_s();
    if (t - p->last < 0.1)
        return;
    p->last = t;
    double rate = t > p->start ? (double)done / (t - p->start) : 0;
    if (fraction >= 0) {
        if (fraction > 1)
            fraction = 1;
        int width = 30, fill = (int)(fraction * width);
        fprintf(stderr, "\r%s [%.*s%*s] %3d%% %llu rows, %.0f rows/s ", p->what, fill,
                "##############################", width - fill, "", (int)(100.0 * fraction),
                (unsigned long long)done, rate);
    } else {
        fprintf(stderr, "\r%s %llu rows, %.0f rows/s ", p->what, (unsigned long long)done, rate);
    }
    fflush(stderr);
}

void progress_update(progress *p, uint64_t done, uint64_t total)
{
    draw(p, done, total > 0 && done <= total ? (double)done / (double)total : -1);
}

void progress_update_fraction(progress *p, uint64_t done, double fraction)
{
    draw(p, done, fraction);
}

void progress_done(progress *p)
{
    if (p->tty && p->last > 0)
        fprintf(stderr, "\r\033[K");
}

void progress_cb(void *ctx, uint64_t done, uint64_t total)
{
    progress *p = ctx;
    progress_update(p, done, total);
    /* A test hook: with ADSTORE_TEST_STALL=last, the last call (the work done
     * but not yet in place: a dump's file not renamed, a restored or backed
     * up store not moved to its directory) says so on stderr and waits to
     * be killed, so tests can kill -9 a command at its most delicate point
     * without guessing at timing. */
    const char *stall = getenv("ADSTORE_TEST_STALL");
    if (total && done == total && stall && strcmp(stall, "last") == 0) {
        fprintf(stderr, "%s: stalled (ADSTORE_TEST_STALL)\n", p->what);
        for (;;)
            pause();
    }
}

void human_bytes(char *out, size_t cap, double bytes)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    while (bytes >= 1024 && u < 4) {
        bytes /= 1024;
        u++;
    }
    snprintf(out, cap, u ? "%.1f %s" : "%.0f %s", bytes, units[u]);
}
