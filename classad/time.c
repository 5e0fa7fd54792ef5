/*
 * classad/time.c: reading and writing AbsTime and RelTime (shared/spec/
 * classad.md sections 2 and 7). Calendar arithmetic is done here on the
 * proleptic Gregorian calendar (no timegm), and the process's local zone is
 * asked only for text without a zone.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "classad/classad_int.h"

/* Days from 1970-01-01 to y-m-d (Howard Hinnant's algorithm). */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    unsigned yoe = (unsigned)(y - era * 400);
    unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (int64_t)doe - 719468;
}

static void civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d)
{
    z += 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    unsigned doe = (unsigned)(z - era * 146097);
    unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    unsigned mp = (5 * doy + 2) / 153;
    *d = doy - (153 * mp + 2) / 5 + 1;
    *m = mp < 10 ? mp + 3 : mp - 9;
    *y = (int64_t)yoe + era * 400 + (*m <= 2);
}

int32_t ads_time__local_offset(double secs)
{
    time_t t = (time_t)floor(secs);
    struct tm tm;
    if (!localtime_r(&t, &tm))
        return 0;
    return (int32_t)tm.tm_gmtoff;
}

/* Read exactly n digits at *p (within end). */
static bool digits(const char **p, const char *end, int n, int *out)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        if (*p >= end || (*p)[0] < '0' || (*p)[0] > '9')
            return false;
        v = v * 10 + (*(*p)++ - '0');
    }
    *out = v;
    return true;
}

static void skip(const char **p, const char *end, char c)
{
    if (*p < end && **p == c)
        (*p)++;
}

int ads_time__parse_abs(const char *s, size_t len, double *secs, int32_t *offset)
{
    const char *p = s, *end = s + len;
    int y, mo, d, h, mi, se;
    double frac = 0;
    while (p < end && (*p == ' ' || *p == '\t'))
        p++;
    while (end > p && (end[-1] == ' ' || end[-1] == '\t'))
        end--;
    /* fixed-width digit groups; the separators are optional */
    if (!digits(&p, end, 4, &y))
        return -1;
    skip(&p, end, '-');
    if (!digits(&p, end, 2, &mo))
        return -1;
    skip(&p, end, '-');
    if (!digits(&p, end, 2, &d))
        return -1;
    if (p < end && (*p == 'T' || *p == 't' || *p == ' '))
        p++;
    else
        return -1;
    skip(&p, end, ':');
    if (!digits(&p, end, 2, &h))
        return -1;
    skip(&p, end, ':');
    if (!digits(&p, end, 2, &mi))
        return -1;
    skip(&p, end, ':');
    if (!digits(&p, end, 2, &se))
        return -1;
    if (p < end && *p == '.') {
        double scale = 0.1;
        p++;
        if (p >= end || *p < '0' || *p > '9')
            return -1;
        while (p < end && *p >= '0' && *p <= '9') {
            frac += (*p++ - '0') * scale;
            scale /= 10;
        }
    }
    if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || se > 60)
        return -1;
    double local = (double)(days_from_civil(y, (unsigned)mo, (unsigned)d) * 86400 +
                            h * 3600 + mi * 60 + se) + frac;
    int32_t off;
    if (p == end) {
        /* no zone: the process's local zone at that local time */
        off = ads_time__local_offset(local);
        off = ads_time__local_offset(local - off);
    } else if (*p == 'Z' || *p == 'z') {
        off = 0;
        p++;
    } else if (*p == '+' || *p == '-') {
        int sign = *p++ == '-' ? -1 : 1, oh, om = 0;
        if (!digits(&p, end, 2, &oh))
            return -1;
        skip(&p, end, ':');
        if (p < end && !digits(&p, end, 2, &om))
            return -1;
        if (oh > 23 || om > 59)
            return -1;
        off = sign * (oh * 3600 + om * 60);
    } else {
        return -1;
    }
    if (p != end)
        return -1;
    *secs = local - off;
    *offset = off;
    return 0;
}

/* A decimal number (digits, optional fraction) at *p. */
static bool number(const char **p, const char *end, double *out)
{
    const char *q = *p;
    double v = 0;
    bool any = false;
    while (q < end && *q >= '0' && *q <= '9') {
        v = v * 10 + (*q++ - '0');
        any = true;
    }
    if (q < end && *q == '.') {
        double scale = 0.1;
        q++;
        while (q < end && *q >= '0' && *q <= '9') {
            v += (*q++ - '0') * scale;
            scale /= 10;
            any = true;
        }
    }
    if (!any)
        return false;
    *p = q;
    *out = v;
    return true;
}

int ads_time__parse_rel(const char *s, size_t len, double *secs)
{
    const char *p = s, *end = s + len;
    double sign = 1, total = 0, v;
    while (p < end && (*p == ' ' || *p == '\t'))
        p++;
    while (end > p && (end[-1] == ' ' || end[-1] == '\t'))
        end--;
    if (p < end && (*p == '-' || *p == '+'))
        sign = *p++ == '-' ? -1 : 1;
    if (p >= end)
        return -1;
    if (memchr(p, ':', (size_t)(end - p)) || memchr(p, '+', (size_t)(end - p))) {
        /* clock form: [d+][hh:]mm:ss[.frac], at most three ':' groups */
        const char *plus = memchr(p, '+', (size_t)(end - p));
        if (plus) {
            if (!number(&p, plus, &v) || p != plus)
                return -1;
            total += v * 86400;
            p = plus + 1;
        }
        double parts[3];
        int n = 0;
        for (;;) {
            if (n == 3 || !number(&p, end, &parts[n]))
                return -1;
            n++;
            if (p == end)
                break;
            if (*p != ':')
                return -1;
            p++;
        }
        double unit = 1;
        for (int i = n - 1; i >= 0; i--, unit *= 60)
            total += parts[i] * unit;
        if (n == 1 && !plus)
            return -1;
        *secs = sign * total;
        return 0;
    }
    /* unit form: [Nd][Nh][Nm][Ns], in that order; a bare number is seconds */
    static const char units[] = "dhms";
    static const double scale[] = {86400, 3600, 60, 1};
    int next_unit = 0;
    bool any = false;
    while (p < end) {
        if (!number(&p, end, &v))
            return -1;
        any = true;
        if (p == end) {
            if (next_unit == 4)
                return -1;
            total += v; /* a trailing bare number: seconds */
            break;
        }
        char u = (char)(*p | 0x20);
        const char *at = strchr(units, u);
        if (!at || u == '\0' || at - units < next_unit)
            return -1;
        next_unit = (int)(at - units) + 1;
        total += v * scale[at - units];
        p++;
    }
    if (!any)
        return -1;
    *secs = sign * total;
    return 0;
}

/* ---- writing ---- */

static void split_abs(double secs, int32_t offset, int64_t *y, unsigned *mo, unsigned *d,
                      int *h, int *mi, double *se)
{
    double local = secs + offset;
    double day_secs_f = floor(local / 86400);
    int64_t days = (int64_t)day_secs_f;
    double rem = local - day_secs_f * 86400;
    civil_from_days(days, y, mo, d);
    int whole = (int)floor(rem);
    *h = whole / 3600;
    *mi = whole / 60 % 60;
    *se = rem - (*h * 3600 + *mi * 60);
}

static void write_seconds(ads_buf *b, double se)
{
    if (se == floor(se)) {
        ads_buf_printf(b, "%02d", (int)se);
    } else {
        char tmp[32];
        snprintf(tmp, sizeof tmp, "%.6f", se);
        size_t n = strlen(tmp);
        while (n > 0 && tmp[n - 1] == '0')
            tmp[--n] = '\0';
        ads_buf_printf(b, "%s%s", se < 10 ? "0" : "", tmp);
    }
}

static void write_abs(ads_buf *b, double secs, int32_t offset, bool condor)
{
    int64_t y;
    unsigned mo, d;
    int h, mi;
    double se;
    split_abs(secs, offset, &y, &mo, &d, &h, &mi, &se);
    ads_buf_printf(b, "%04lld-%02u-%02uT%02d:%02d:", (long long)y, mo, d, h, mi);
    write_seconds(b, se);
    if (offset == 0 && !condor) {
        ads_buf_addc(b, 'Z');
        return;
    }
    int32_t a = offset < 0 ? -offset : offset;
    /* HTCondor writes '-' for offsets <= 0 (so UTC is -00:00) */
    char sign = condor ? (offset <= 0 ? '-' : '+') : (offset < 0 ? '-' : '+');
    ads_buf_printf(b, "%c%02d:%02d", sign, (int)(a / 3600), (int)(a / 60 % 60));
}

void ads_time__format_abs(ads_buf *b, double secs, int32_t offset)
{
    write_abs(b, secs, offset, false);
}

void ads_time__format_abs_condor(ads_buf *b, double secs, int32_t offset)
{
    write_abs(b, secs, offset, true);
}

/* %g-like shortest text of a non-negative number of seconds. */
static void write_g(ads_buf *b, double v)
{
    char tmp[40];
    for (int prec = 6; prec <= 17; prec++) {
        snprintf(tmp, sizeof tmp, "%.*g", prec, v);
        if (strtod(tmp, NULL) == v)
            break;
    }
    ads_buf_adds(b, tmp);
}

void ads_time__format_rel(ads_buf *b, double secs)
{
    if (isnan(secs) || isinf(secs)) {
        ads_buf_adds(b, "0s");
        return;
    }
    if (secs < 0) {
        ads_buf_addc(b, '-');
        secs = -secs;
    }
    double days = floor(secs / 86400);
    secs -= days * 86400;
    double hours = floor(secs / 3600);
    secs -= hours * 3600;
    double mins = floor(secs / 60);
    secs -= mins * 60;
    bool any = false;
    if (days > 0) {
        write_g(b, days);
        ads_buf_addc(b, 'd');
        any = true;
    }
    if (hours > 0) {
        ads_buf_printf(b, "%dh", (int)hours);
        any = true;
    }
    if (mins > 0) {
        ads_buf_printf(b, "%dm", (int)mins);
        any = true;
    }
    if (secs > 0 || !any) {
        write_g(b, secs);
        ads_buf_addc(b, 's');
    }
}

void ads_time__format_rel_condor(ads_buf *b, double secs)
{
    if (isnan(secs) || isinf(secs)) {
        ads_buf_adds(b, "00");
        return;
    }
    if (secs < 0) {
        ads_buf_addc(b, '-');
        secs = -secs;
    }
    double days = floor(secs / 86400);
    secs -= days * 86400;
    int hours = (int)floor(secs / 3600);
    secs -= hours * 3600;
    int mins = (int)floor(secs / 60);
    secs -= mins * 60;
    if (days > 0) {
        write_g(b, days);
        ads_buf_addc(b, '+');
    }
    if (days > 0 || hours > 0)
        ads_buf_printf(b, "%02d:", hours);
    if (days > 0 || hours > 0 || mins > 0)
        ads_buf_printf(b, "%02d:", mins);
    if (secs == floor(secs))
        ads_buf_printf(b, "%02d", (int)secs);
    else
        write_g(b, secs); /* HTCondor prints fractional seconds with %g, unpadded */
}
