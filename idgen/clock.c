/*
 * idgen/clock.c: the system wall clock behind the ads_clock interface.
 * Generators take a clock so tests can drive time; this is the real one.
 */
#include <errno.h>
#include <time.h>

#include "idgen/idgen.h"

static int64_t system_now_ns(void *ctx)
{
    struct timespec ts;
    (void)ctx;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void system_sleep_ns(void *ctx, int64_t ns)
{
    struct timespec ts;
    (void)ctx;
    if (ns <= 0)
        return;
    ts.tv_sec = (time_t)(ns / 1000000000);
    ts.tv_nsec = (long)(ns % 1000000000);
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

static const ads_clock system_clock = {system_now_ns, system_sleep_ns, NULL};

const ads_clock *ads_clock_system(void)
{
    return &system_clock;
}
