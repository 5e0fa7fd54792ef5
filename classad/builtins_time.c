/*
 * classad/builtins_time.c: the time built-ins (shared/spec/classad.md
 * section 6): time, now, currentTime, timeZoneOffset, dayTime, the get*
 * family, splitTime, formatTime, interval. absTime() and relTime() are
 * conversions and live in builtins.c.
 *
 * Semantics follow HTCondor's ClassAd library (fnCall.cpp), including where
 * it is uneven: the get* functions read an AbsTime in the process's local
 * zone, while splitTime and formatTime use the value's own offset;
 * getDayOfYear counts from 0. Calendar fields come from gmtime_r/localtime_r
 * on whole seconds, so only instants within ABS_LIMIT of the epoch are
 * broken down; further ones give error rather than overflow.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "classad/classad_int.h"
#include "base/num.h"

/* Largest |seconds| broken into calendar fields (2^53: about 285 million
 * years, so the year always fits an int). */
#define ABS_LIMIT 9007199254740992.0

/* Widest field a formatTime conversion may ask for (%1000Y is too wide). */
#define WIDTH_MAX 1024

static ads_value arg(ads_eval_ctx *cx, const ads_view *view, const ads_expr *const *args,
                     size_t i)
{
    ads_value v;
    ads_eval__expr(&v, cx, args[i], view);
    return v;
}

static time_t now_secs(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return ts.tv_sec;
}

/* *out = a copy of the buffer's text in the arena (error and cx->oom if
 * memory ran out). */
static void set_text(ads_value *out, ads_eval_ctx *cx, ads_buf *b)
{
    if (b->failed || ads_string_copy(out, cx->arena, ads_buf_cstr(b), b->len)) {
        cx->oom = true;
        *out = ads_errorv();
    }
}

/* Whole seconds toward minus infinity of an instant, if it can be broken
 * into calendar fields. */
static bool whole_secs(double secs, time_t *t)
{
    if (!(secs > -ABS_LIMIT && secs < ABS_LIMIT))
        return false;
    *t = (time_t)floor(secs);
    return true;
}

/* Seconds toward zero of a number, as HTCondor's (int) casts take them. */
static bool trunc_secs(double r, time_t *t)
{
    if (!(r > -ABS_LIMIT && r < ABS_LIMIT))
        return false;
    *t = (time_t)r;
    return true;
}

/* The calendar fields of an instant at a given offset east of UTC. */
static bool fields_at(double secs, int32_t offset, struct tm *tm)
{
    time_t t;
    if (!whole_secs(secs, &t))
        return false;
    t += offset;
    return gmtime_r(&t, tm) != NULL;
}

/* ---- now ---- */

/* time(): the current time as integer seconds since the epoch. */
static void fn_time(ads_value *out, ads_eval_ctx *cx, const ads_view *view,
                    const ads_expr *const *args, size_t n)
{
    (void)cx, (void)view, (void)args, (void)n;
    *out = ads_int((int64_t)now_secs());
}

/* now() and currentTime(): the current time as an AbsTime in the local zone,
 * whole seconds (HTCondor's currentTime is Literal::MakeAbsTime(NULL), the
 * same value absTime() gives). */
static void fn_now(ads_value *out, ads_eval_ctx *cx, const ads_view *view,
                   const ads_expr *const *args, size_t n)
{
    (void)cx, (void)view, (void)args, (void)n;
    double t = (double)now_secs();
    *out = ads_abstime(t, ads_time__local_offset(t));
}

/* timeZoneOffset(): the local zone's offset east of UTC now, as a RelTime. */
static void fn_time_zone_offset(ads_value *out, ads_eval_ctx *cx, const ads_view *view,
                                const ads_expr *const *args, size_t n)
{
    (void)cx, (void)view, (void)args, (void)n;
    *out = ads_reltime(ads_time__local_offset((double)now_secs()));
}

/* dayTime(): the local time of day now, as a RelTime since local midnight. */
static void fn_day_time(ads_value *out, ads_eval_ctx *cx, const ads_view *view,
                        const ads_expr *const *args, size_t n)
{
    (void)cx, (void)view, (void)args, (void)n;
    time_t t = now_secs();
    struct tm tm;
    if (!localtime_r(&t, &tm)) {
        *out = ads_errorv();
        return;
    }
    *out = ads_reltime(tm.tm_hour * 3600 + tm.tm_min * 60 + tm.tm_sec);
}

/* ---- the get* family ---- */

typedef enum field {
    F_YEAR, F_MONTH, F_DAY_OF_YEAR, F_DAY_OF_MONTH, F_DAY_OF_WEEK,
    F_DAYS, F_HOURS, F_MINUTES, F_SECONDS
} field;

/*
 * An AbsTime gives its field in the process's local zone (HTCondor calls
 * getLocalTime on the instant); getDays is error for it. A RelTime, cut to
 * whole seconds toward zero, gives days, hours (0-23), minutes, seconds, all
 * negative for a negative RelTime; the calendar fields are error for it. Any
 * other argument, undefined included, is error (as in HTCondor).
 */
static void get_field(ads_value *out, ads_eval_ctx *cx, const ads_view *view,
                      const ads_expr *const *args, field f)
{
    ads_value v = arg(cx, view, args, 0);
    *out = ads_errorv();
    if (v.type == ADS_ABSTIME) {
        time_t t;
        struct tm tm;
        if (f == F_DAYS || !whole_secs(v.u.abs.secs, &t) || !localtime_r(&t, &tm))
            return;
        int64_t r = 0;
        switch (f) {
        case F_YEAR: r = (int64_t)tm.tm_year + 1900; break;
        case F_MONTH: r = tm.tm_mon + 1; break;
        case F_DAY_OF_YEAR: r = tm.tm_yday; break;
        case F_DAY_OF_MONTH: r = tm.tm_mday; break;
        case F_DAY_OF_WEEK: r = tm.tm_wday; break;
        case F_HOURS: r = tm.tm_hour; break;
        case F_MINUTES: r = tm.tm_min; break;
        case F_SECONDS: r = tm.tm_sec; break;
        case F_DAYS: return;
        }
        *out = ads_int(r);
    } else if (v.type == ADS_RELTIME) {
        double r = v.u.rel;
        if (!(r > -9223372036854775808.0 && r < 9223372036854775808.0))
            return;
        int64_t s = (int64_t)r;
        switch (f) {
        case F_DAYS: *out = ads_int(s / 86400); break;
        case F_HOURS: *out = ads_int(s % 86400 / 3600); break;
        case F_MINUTES: *out = ads_int(s % 3600 / 60); break;
        case F_SECONDS: *out = ads_int(s % 60); break;
        default: break;
        }
    }
}

#define GETTER(fname, f)                                                                    \
    static void fname(ads_value *out, ads_eval_ctx *cx, const ads_view *view,               \
                      const ads_expr *const *args, size_t n)                                \
    {                                                                                       \
        (void)n;                                                                            \
        get_field(out, cx, view, args, f);                                                  \
    }

GETTER(fn_get_year, F_YEAR)
GETTER(fn_get_month, F_MONTH)
GETTER(fn_get_day_of_year, F_DAY_OF_YEAR)
GETTER(fn_get_day_of_month, F_DAY_OF_MONTH)
GETTER(fn_get_day_of_week, F_DAY_OF_WEEK)
GETTER(fn_get_days, F_DAYS)
GETTER(fn_get_hours, F_HOURS)
GETTER(fn_get_minutes, F_MINUTES)
GETTER(fn_get_seconds, F_SECONDS)

/* ---- splitTime ---- */

typedef struct split_ctx {
    ads_eval_ctx *cx;
    ads_record_builder *b;
    bool failed;
} split_ctx;

static void put(split_ctx *s, const char *name, ads_value v)
{
    if (!s->failed && ads_record_builder_add_value(s->b, name, strlen(name), &v, NULL))
        s->failed = true;
}

static void put_int(split_ctx *s, const char *name, int64_t i)
{
    put(s, name, ads_int(i));
}

/* Finish the record into *out (error and cx->oom if memory ran out). */
static void finish(split_ctx *s, ads_value *out)
{
    const ads_record *r = s->failed ? NULL : ads_record_builder_finish(s->b);
    if (!r) {
        s->cx->oom = true;
        *out = ads_errorv();
        return;
    }
    *out = ads_recordv(r);
}

static bool start(split_ctx *s, ads_eval_ctx *cx, ads_value *out)
{
    s->cx = cx;
    s->failed = false;
    if (ads_record_builder_new(&s->b, cx->arena, NULL)) {
        cx->oom = true;
        *out = ads_errorv();
        return false;
    }
    return true;
}

/* [Type = "AbsoluteTime"; Year; Month; Day; Hours; Minutes; Seconds; Offset]
 * of an instant at its offset. Seconds is an integer, or a real when the
 * instant has a fraction of a second (HTCondor's instants have none). */
static void split_abs(ads_value *out, ads_eval_ctx *cx, double secs, int32_t offset)
{
    struct tm tm;
    split_ctx s;
    if (!fields_at(secs, offset, &tm)) {
        *out = ads_errorv();
        return;
    }
    if (!start(&s, cx, out))
        return;
    double frac = secs - floor(secs);
    put(&s, "Type", ads_string("AbsoluteTime", 12));
    put_int(&s, "Year", (int64_t)tm.tm_year + 1900);
    put_int(&s, "Month", tm.tm_mon + 1);
    put_int(&s, "Day", tm.tm_mday);
    put_int(&s, "Hours", tm.tm_hour);
    put_int(&s, "Minutes", tm.tm_min);
    put(&s, "Seconds", frac != 0 ? ads_real(tm.tm_sec + frac) : ads_int(tm.tm_sec));
    put_int(&s, "Offset", offset);
    finish(&s, out);
}

/* [Type = "RelativeTime"; Days; Hours; Minutes; Seconds]: integers, Seconds a
 * real; for a negative RelTime only the leading non-zero part is negative
 * (-90s is Minutes -1, Seconds 30.0), as HTCondor splits it. */
static void split_rel(ads_value *out, ads_eval_ctx *cx, double rel)
{
    split_ctx s;
    bool neg = rel < 0;
    double a = fabs(rel);
    if (!(a < 9223372036854775808.0)) {
        *out = ads_errorv();
        return;
    }
    if (!start(&s, cx, out))
        return;
    int64_t w = (int64_t)a, days = w / 86400, hours = w % 86400 / 3600,
            mins = w % 3600 / 60;
    double secs = (double)(w % 60) + (a - floor(a));
    if (neg) {
        if (days > 0)
            days = -days;
        else if (hours > 0)
            hours = -hours;
        else if (mins > 0)
            mins = -mins;
        else
            secs = -secs;
    }
    put(&s, "Type", ads_string("RelativeTime", 12));
    put_int(&s, "Days", days);
    put_int(&s, "Hours", hours);
    put_int(&s, "Minutes", mins);
    put(&s, "Seconds", ads_real(secs));
    finish(&s, out);
}

/*
 * splitTime(t): an AbsTime or RelTime as a record of its parts. An integer
 * or real is seconds since the epoch (a real cut toward zero) in the local
 * zone. undefined gives undefined; anything else (a record included) error.
 */
static void fn_split_time(ads_value *out, ads_eval_ctx *cx, const ads_view *view,
                          const ads_expr *const *args, size_t n)
{
    (void)n;
    ads_value v = arg(cx, view, args, 0);
    time_t t;
    switch (v.type) {
    case ADS_UNDEFINED:
        *out = v;
        return;
    case ADS_ABSTIME:
        split_abs(out, cx, v.u.abs.secs, v.u.abs.offset);
        return;
    case ADS_RELTIME:
        split_rel(out, cx, v.u.rel);
        return;
    case ADS_INTEGER:
    case ADS_REAL:
        if (!trunc_secs(v.type == ADS_INTEGER ? (double)v.u.i : v.u.r, &t)) {
            *out = ads_errorv();
            return;
        }
        split_abs(out, cx, (double)t, ads_time__local_offset((double)t));
        return;
    default:
        *out = ads_errorv();
    }
}

/* ---- formatTime ---- */

/* What formatTime formats: calendar fields plus what %z %Z %s need. */
typedef struct when {
    struct tm tm;
    int32_t offset; /* seconds east of UTC */
    int64_t epoch;  /* the instant, whole seconds */
    const char *zone; /* the zone's abbreviation, or NULL: see zone_name */
} when;

static bool when_of_instant(when *w, double secs, int32_t offset)
{
    time_t t;
    if (!fields_at(secs, offset, &w->tm) || !whole_secs(secs, &t))
        return false;
    w->offset = offset;
    w->epoch = (int64_t)t;
    w->zone = NULL;
    /* the local zone's name when the instant is at the local offset */
    struct tm local;
    if (localtime_r(&t, &local) && local.tm_gmtoff == offset)
        w->zone = local.tm_zone;
    return true;
}

/* Attribute name of record r as an integer (a real cut toward zero); false
 * if absent or not a number, as HTCondor's EvaluateAttrInt. */
static bool record_int(ads_eval_ctx *cx, const ads_record *r, const char *name, int64_t *out)
{
    const ads_expr *e = ads_record_lookup(r, name, strlen(name));
    if (!e)
        return false;
    ads_value v;
    const ads_value *lit = ads_expr_literal_value(e);
    if (lit) {
        v = *lit;
    } else {
        ads_view rv = ads_record_view(r, NULL);
        ads_eval__expr(&v, cx, e, &rv);
    }
    if (v.type == ADS_INTEGER) {
        *out = v.u.i;
        return true;
    }
    if (v.type == ADS_REAL && v.u.r > -1e15 && v.u.r < 1e15) {
        *out = (int64_t)v.u.r;
        return true;
    }
    return false;
}

/*
 * The fields of a record such as splitTime makes: Year Month Day Hours
 * Minutes Seconds (absent or not numbers: HTCondor's defaults 1900, January,
 * day 0, 0, 0, 0) and Offset (absent: 0, used by %z %Z %s only). Values out
 * of range are refused (false) instead of being handed to strftime.
 */
static bool when_of_record(when *w, ads_eval_ctx *cx, const ads_record *r)
{
    int64_t year = 1900, month = 1, day = 0, h = 0, mi = 0, s = 0, off = 0;
    record_int(cx, r, "Year", &year);
    record_int(cx, r, "Month", &month);
    record_int(cx, r, "Day", &day);
    record_int(cx, r, "Hours", &h);
    record_int(cx, r, "Minutes", &mi);
    record_int(cx, r, "Seconds", &s);
    record_int(cx, r, "Offset", &off);
    if (year < -100000000 || year > 100000000 || month < 1 || month > 12 || day < 0 ||
        day > 31 || h < 0 || h > 23 || mi < 0 || mi > 59 || s < 0 || s > 60 ||
        off < -86400 || off > 86400)
        return false;
    memset(&w->tm, 0, sizeof w->tm);
    w->tm.tm_year = (int)(year - 1900);
    w->tm.tm_mon = (int)month - 1;
    w->tm.tm_mday = (int)day;
    w->tm.tm_hour = (int)h;
    w->tm.tm_min = (int)mi;
    w->tm.tm_sec = (int)s;
    /* weekday, day of year and the instant from a normalized copy: the
     * fields shown stay as written (day 0 stays 0) */
    struct tm norm = w->tm;
    time_t t = timegm(&norm);
    w->tm.tm_wday = norm.tm_wday;
    w->tm.tm_yday = norm.tm_yday;
    w->offset = (int32_t)off;
    w->epoch = (int64_t)t - off;
    w->zone = NULL;
    return true;
}

static void add_padded(ads_buf *b, const char *text, long width, char pad)
{
    size_t len = strlen(text);
    for (size_t i = len; width > 0 && i < (size_t)width; i++)
        ads_buf_addc(b, pad);
    ads_buf_adds(b, text);
}

/*
 * Append the strftime conversion spec (len bytes, e.g. "%-10Ey") for w. A
 * conversion the C library does not know is copied as written. false only
 * if memory ran out.
 */
static bool convert(ads_buf *b, const char *spec, size_t len, long width, const when *w)
{
    /* a trailing character makes an empty result distinguishable from a
     * failure (strftime returns 0 for both) */
    size_t cap = (size_t)width + 256;
    char *fmt = malloc(len + 2), *tmp = malloc(cap);
    if (!fmt || !tmp) {
        free(fmt);
        free(tmp);
        return false;
    }
    memcpy(fmt, spec, len);
    fmt[len] = '|';
    fmt[len + 1] = '\0';
    size_t got = strftime(tmp, cap, fmt, &w->tm);
    if (got == 0)
        ads_buf_add(b, spec, len);
    else
        ads_buf_add(b, tmp, got - 1);
    free(fmt);
    free(tmp);
    return true;
}

/*
 * Format w with a strftime-style format (fmt, len bytes; NUL bytes are
 * copied). Conversions go to strftime one at a time, with flags, width and
 * E/O modifiers as the C library supports them, except: %z the value's
 * offset (+hhmm), %Z the local zone's name when the value is at the local
 * offset, else "UTC" for offset 0, else the offset; %s the instant's seconds
 * since the epoch. A width over WIDTH_MAX is error (false with *bad set).
 */
static bool format_when(ads_buf *b, const char *fmt, size_t len, const when *w, bool *bad)
{
    const char *p = fmt, *end = fmt + len;
    *bad = false;
    while (p < end) {
        const char *pct = memchr(p, '%', (size_t)(end - p));
        if (!pct) {
            ads_buf_add(b, p, (size_t)(end - p));
            break;
        }
        ads_buf_add(b, p, (size_t)(pct - p));
        const char *q = pct + 1;
        char pad = ' ';
        while (q < end && *q && strchr("_-0^#", *q)) {
            if (*q == '0')
                pad = '0';
            q++;
        }
        long width = 0;
        while (q < end && *q >= '0' && *q <= '9') {
            width = width * 10 + (*q++ - '0');
            if (width > WIDTH_MAX) {
                *bad = true;
                return true;
            }
        }
        if (q < end && (*q == 'E' || *q == 'O'))
            q++;
        if (q >= end) {
            /* a lone '%' (or unfinished spec) at the end: as written */
            ads_buf_add(b, pct, (size_t)(end - pct));
            break;
        }
        char c = *q++;
        char text[40];
        switch (c) {
        case '%':
            ads_buf_addc(b, '%');
            break;
        case 'z':
        case 'Z': {
            int64_t a = w->offset < 0 ? -(int64_t)w->offset : w->offset;
            if (c == 'Z' && w->zone)
                snprintf(text, sizeof text, "%s", w->zone);
            else if (c == 'Z' && w->offset == 0)
                snprintf(text, sizeof text, "UTC");
            else
                snprintf(text, sizeof text, "%c%02lld%02lld", w->offset < 0 ? '-' : '+',
                         (long long)(a / 3600), (long long)(a / 60 % 60));
            add_padded(b, text, width, pad);
            break;
        }
        case 's':
            snprintf(text, sizeof text, "%lld", (long long)w->epoch);
            add_padded(b, text, width, pad);
            break;
        default:
            if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
                if (!convert(b, pct, (size_t)(q - pct), width, w))
                    return false;
            } else {
                ads_buf_add(b, pct, (size_t)(q - pct));
            }
        }
        p = q;
    }
    return true;
}

/*
 * formatTime([t [, format]]): t is an AbsTime (at its own offset), an integer
 * or real (seconds since the epoch, a real cut toward zero, in the local
 * zone) or a record with splitTime's fields; no t means now, locally. The
 * format defaults to "%c". A RelTime, any other t (undefined included), a
 * format that is not a string, or a field out of range is error.
 */
static void fn_format_time(ads_value *out, ads_eval_ctx *cx, const ads_view *view,
                           const ads_expr *const *args, size_t n)
{
    when w;
    bool ok;
    ads_str fmt = {"%c", 2};
    if (n == 0) {
        double t = (double)now_secs();
        ok = when_of_instant(&w, t, ads_time__local_offset(t));
    } else {
        ads_value v = arg(cx, view, args, 0);
        time_t t;
        switch (v.type) {
        case ADS_ABSTIME:
            ok = when_of_instant(&w, v.u.abs.secs, v.u.abs.offset);
            break;
        case ADS_INTEGER:
        case ADS_REAL:
            ok = trunc_secs(v.type == ADS_INTEGER ? (double)v.u.i : v.u.r, &t) &&
                 when_of_instant(&w, (double)t, ads_time__local_offset((double)t));
            break;
        case ADS_RECORD:
            ok = when_of_record(&w, cx, v.u.rec);
            break;
        default:
            ok = false;
        }
        if (ok && n == 2) {
            ads_value f = arg(cx, view, args, 1);
            if (f.type == ADS_STRING)
                fmt = f.u.s;
            else
                ok = false;
        }
    }
    if (!ok) {
        *out = ads_errorv();
        return;
    }
    ads_buf b = ADS_BUF_INIT;
    bool bad;
    if (!format_when(&b, fmt.p, fmt.len, &w, &bad))
        b.failed = true;
    if (bad)
        *out = ads_errorv();
    else
        set_text(out, cx, &b);
    ads_buf_free(&b);
}

/* ---- interval ---- */

/*
 * interval(seconds): "[-]d+hh:mm:ss" with leading zero parts left out
 * ("1", "1:05", "3:02:01", "4+03:02:01"); negative values put the sign on
 * the leading part. The argument converts as int() converts (reals, times
 * and numeric strings cut toward zero, booleans 0/1); undefined, and what
 * does not convert, is error (as HTCondor's convertValueToIntegerValue).
 */
static void fn_interval(ads_value *out, ads_eval_ctx *cx, const ads_view *view,
                        const ads_expr *const *args, size_t n)
{
    (void)n;
    ads_value v = arg(cx, view, args, 0);
    double r;
    int64_t s;
    *out = ads_errorv();
    switch (v.type) {
    case ADS_INTEGER:
        s = v.u.i;
        goto have;
    case ADS_BOOLEAN:
        s = v.u.b;
        goto have;
    case ADS_REAL:
        r = v.u.r;
        break;
    case ADS_ABSTIME:
        r = v.u.abs.secs;
        break;
    case ADS_RELTIME:
        r = v.u.rel;
        break;
    case ADS_STRING: {
        char *tmp = ads_eval__alloc(cx, v.u.s.len + 1), *end;
        if (!tmp)
            return;
        memcpy(tmp, v.u.s.p, v.u.s.len);
        tmp[v.u.s.len] = '\0';
        r = ads_strtod_c(tmp, &end);
        if (end == tmp)
            return;
        break;
    }
    default:
        return;
    }
    if (!(r > -9223372036854775808.0 && r < 9223372036854775808.0))
        return;
    s = (int64_t)r;
have:;
    /* C division truncates toward zero, so every part carries the sign */
    int64_t days = s / 86400, rest = s % 86400;
    int64_t hours = rest / 3600, mins = rest % 3600 / 60, secs = rest % 60;
    char text[64];
    if (days != 0)
        snprintf(text, sizeof text, "%lld+%02lld:%02lld:%02lld", (long long)days,
                 (long long)llabs(hours), (long long)llabs(mins), (long long)llabs(secs));
    else if (hours != 0)
        snprintf(text, sizeof text, "%lld:%02lld:%02lld", (long long)hours,
                 (long long)llabs(mins), (long long)llabs(secs));
    else if (mins != 0)
        snprintf(text, sizeof text, "%lld:%02lld", (long long)mins, (long long)llabs(secs));
    else
        snprintf(text, sizeof text, "%lld", (long long)secs);
    if (ads_string_copy(out, cx->arena, text, strlen(text))) {
        cx->oom = true;
        *out = ads_errorv();
    }
}

const ads_builtin ads_builtins__time[] = {
    {"time", fn_time, 0, 0},
    {"now", fn_now, 0, 0},
    {"currentTime", fn_now, 0, 0},
    {"timeZoneOffset", fn_time_zone_offset, 0, 0},
    {"dayTime", fn_day_time, 0, 0},
    {"getYear", fn_get_year, 1, 1},
    {"getMonth", fn_get_month, 1, 1},
    {"getDayOfYear", fn_get_day_of_year, 1, 1},
    {"getDayOfMonth", fn_get_day_of_month, 1, 1},
    {"getDayOfWeek", fn_get_day_of_week, 1, 1},
    {"getDays", fn_get_days, 1, 1},
    {"getHours", fn_get_hours, 1, 1},
    {"getMinutes", fn_get_minutes, 1, 1},
    {"getSeconds", fn_get_seconds, 1, 1},
    {"splitTime", fn_split_time, 1, 1},
    {"formatTime", fn_format_time, 0, 2},
    {"interval", fn_interval, 1, 1},
};
const size_t ads_builtins__time_count = sizeof ads_builtins__time / sizeof ads_builtins__time[0];
