/*
 * classad/builtins_time.c: the time built-ins (shared/spec/classad.md
 * section 6): time, now, currentTime, timeZoneOffset, the get* family,
 * splitTime, formatTime, interval. absTime() and relTime() are conversions
 * and live in builtins.c.
 */
#include <time.h>

#include "classad/classad_int.h"

/* time(): the current time as integer seconds since the epoch. */
static void fn_time(ads_value *out, ads_eval_ctx *cx, const ads_view *view,
                    const ads_expr *const *args, size_t n)
{
    (void)cx, (void)view, (void)args, (void)n;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    *out = ads_int((int64_t)ts.tv_sec);
}

const ads_builtin ads_builtins__time[] = {
    {"time", fn_time, 0, 0},
};
const size_t ads_builtins__time_count = sizeof ads_builtins__time / sizeof ads_builtins__time[0];
