/*
 * classad/time.c: reading and writing AbsTime and RelTime (shared/spec/
 * classad.md sections 2 and 7). Calendar arithmetic is done here on the
 * proleptic Gregorian calendar (no timegm), and the process's local zone is
 * asked only for text without a zone.
 *
 * Numbers are read and written without the C library's locale-dependent
 * radix character, and every fractional value is written with the fewest
 * decimals that read back to the same double (the writer checks by parsing
 * its own text), so text written here parses back to an equal value.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "classad/classad_int.h"
#include "base/num.h"

/* Instants further than this from the epoch (about 285 million years) are
 * not broken into calendar fields; the writer clamps them (see write_abs). */
#define ABS_LIMIT 9007199254740992.0 /* 2^53 seconds */

/* Longest digit run a time text may hold in one number (a double's largest
 * integer part has 309 digits). */
#define NUMBER_MAX 400

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

static unsigned days_in_month(int y, int m)
{
    static const unsigned char len[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    bool leap = y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
    return m == 2 && leap ? 29 : len[m - 1];
}

int32_t ads_time__local_offset(double secs)
{
    /* converting a non-finite or huge double to time_t is undefined */
    if (!(secs > -ABS_LIMIT && secs < ABS_LIMIT))
        return 0;
    time_t t = (time_t)floor(secs);
    struct tm tm;
    if (!localtime_r(&t, &tm))
        return 0;
    /* Zones are written to the minute (`+hh:mm`): a local mean time of
     * old dates (New York's -04:56:02 before 1883) is taken to the nearest
     * minute, so that what is written reads back as the same instant. */
    long off = tm.tm_gmtoff;
    long r = off >= 0 ? (off + 30) / 60 * 60 : -((-off + 30) / 60 * 60);
    return (int32_t)r;
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

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/*
 * A decimal number at *p: digits with an optional '.' and fraction (at least
 * one digit in all). It is read correctly rounded and without the locale's
 * radix character: "12.5" goes to strtod as "125e-1". *frac says whether a
 * '.' was written. False, and *p unchanged, if there is no number.
 */
static bool number(const char **p, const char *end, double *out, bool *frac)
{
    char tmp[NUMBER_MAX + 16];
    size_t n = 0, ndec = 0;
    const char *q = *p;
    bool dot = false;
    while (q < end && is_digit(*q)) {
        if (n == NUMBER_MAX)
            return false;
        tmp[n++] = *q++;
    }
    if (q < end && *q == '.') {
        dot = true;
        q++;
        while (q < end && is_digit(*q)) {
            if (n == NUMBER_MAX)
                return false;
            tmp[n++] = *q++;
            ndec++;
        }
    }
    if (n == 0)
        return false;
    snprintf(tmp + n, sizeof tmp - n, "e-%zu", ndec);
    *out = ads_strtod_c(tmp, NULL);
    *p = q;
    if (frac)
        *frac = dot;
    return true;
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
    /* fixed-width digit groups; the separators are optional. A year
     * outside 0000..9999 is written with its sign and up to 9 digits
     * (ISO 8601's expanded form: `+10000-01-01`, `-0001-12-31`; at least 5
     * after '+', 4 after '-'), then the '-' is needed. */
    if (p < end && (*p == '+' || *p == '-')) {
        int sign = *p++ == '-' ? -1 : 1, n = 0;
        y = 0;
        while (p < end && is_digit(*p) && n < 9) {
            y = y * 10 + (*p++ - '0');
            n++;
        }
        if (n < (sign > 0 ? 5 : 4) || p >= end || *p != '-')
            return -1;
        y *= sign;
        p++;
    } else {
        if (!digits(&p, end, 4, &y))
            return -1;
        skip(&p, end, '-');
    }
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
        /* the fraction alone, as ".ddd": number() wants a digit after '.' */
        const char *q = p;
        bool dot;
        if (p + 1 >= end || !is_digit(p[1]) || !number(&q, end, &frac, &dot))
            return -1;
        p = q;
    }
    if (mo < 1 || mo > 12 || d < 1 || (unsigned)d > days_in_month(y, mo) || h > 23 ||
        mi > 59 || se > 60)
        return -1;
    int64_t local = days_from_civil(y, (unsigned)mo, (unsigned)d) * 86400 + h * 3600 +
                    mi * 60 + se;
    int32_t off;
    if (p == end) {
        /* no zone: the process's local zone at that local time */
        off = ads_time__local_offset((double)local);
        off = ads_time__local_offset((double)(local - off));
    } else if (*p == 'Z' || *p == 'z') {
        off = 0;
        p++;
    } else if (*p == '+' || *p == '-') {
        int sign = *p++ == '-' ? -1 : 1, oh, om = 0;
        if (!digits(&p, end, 2, &oh))
            return -1;
        /* minutes optional, but a ':' must have them */
        if (p < end && *p == ':' && (++p, p == end))
            return -1;
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
    /* whole seconds in integers, then one rounding for the fraction */
    *secs = (double)(local - off) + frac;
    *offset = off;
    return 0;
}

int ads_time__parse_rel(const char *s, size_t len, double *secs)
{
    const char *p = s, *end = s + len;
    double sign = 1, total = 0, v;
    bool frac;
    while (p < end && (*p == ' ' || *p == '\t'))
        p++;
    while (end > p && (end[-1] == ' ' || end[-1] == '\t'))
        end--;
    if (p < end && (*p == '-' || *p == '+'))
        sign = *p++ == '-' ? -1 : 1;
    if (p >= end)
        return -1;
    if (memchr(p, ':', (size_t)(end - p)) || memchr(p, '+', (size_t)(end - p))) {
        /* clock form: [d+][hh:]mm:ss[.frac], at most three ':' groups; only
         * the last group may have a fraction */
        const char *plus = memchr(p, '+', (size_t)(end - p));
        if (plus) {
            if (!number(&p, plus, &v, &frac) || p != plus || frac)
                return -1;
            total += v * 86400;
            p = plus + 1;
        }
        double parts[3];
        int n = 0;
        for (;;) {
            if (n == 3 || !number(&p, end, &parts[n], &frac))
                return -1;
            n++;
            if (p == end)
                break;
            if (*p != ':' || frac)
                return -1;
            p++;
        }
        if (n == 1 && !plus)
            return -1;
        /* the whole groups first (exact), then the last one: one rounding */
        double unit = 60;
        for (int i = n - 2; i >= 0; i--, unit *= 60)
            total += parts[i] * unit;
        total += parts[n - 1];
    } else {
        /* unit form: [Nd][Nh][Nm][Ns], in that order; a bare number is seconds */
        static const char units[] = "dhms";
        static const double scale[] = {86400, 3600, 60, 1};
        int next_unit = 0;
        while (p < end) {
            if (!number(&p, end, &v, &frac))
                return -1;
            if (p == end) {
                if (next_unit == 4)
                    return -1;
                total += v; /* a trailing bare number: seconds */
                break;
            }
            char u = (char)(*p | 0x20);
            const char *at = memchr(units, u, 4);
            if (!at || at - units < next_unit)
                return -1;
            next_unit = (int)(at - units) + 1;
            total += v * scale[at - units];
            p++;
        }
    }
    if (!isfinite(total))
        return -1;
    *secs = sign * total;
    return 0;
}

/* ---- writing ---- */

/* Most decimals a fraction may need: 17 significant digits after the zeros
 * of the smallest doubles. */
#define DECIMALS_MAX 345

/* The first number of decimals worth trying for a fraction x in (0, 1). */
static int first_decimals(double x)
{
    int k = 1;
    while (x < 0.1 && k < DECIMALS_MAX) {
        x *= 10;
        k++;
    }
    return k;
}

/*
 * decimals() below without printf for a fraction x in (0, 1) that is m / 2^e
 * with m * 10^k below 2^63 (every instant of these centuries, to the
 * decimals its double holds): the digits rounded to nearest, ties to even,
 * as printf rounds them. false (nothing written) for any other x.
 */
static bool decimals_exact(double x, int k, int64_t *whole, char *frac, size_t cap)
{
    if (!(x > 0 && x < 1) || k > 18 || (size_t)k >= cap)
        return false;
    int exp;
    uint64_t m = (uint64_t)ldexp(frexp(x, &exp), 53); /* x = m / 2^e, exactly */
    int e = 53 - exp;
    while ((m & 1) == 0) {
        m >>= 1;
        e--;
    }
    uint64_t p = 1;
    for (int i = 0; i < k; i++)
        p *= 10;
    if (e > 62 || m > (UINT64_MAX >> 1) / p)
        return false;
    uint64_t v = m * p, half = (uint64_t)1 << (e - 1);
    uint64_t q = v >> e, r = v & ((half << 1) - 1);
    if (r > half || (r == half && (q & 1) != 0))
        q++;
    *whole = (int64_t)(q / p);
    uint64_t f = q % p;
    for (int i = k - 1; i >= 0; i--, f /= 10)
        frac[i] = (char)('0' + f % 10);
    size_t n = (size_t)k;
    while (n > 0 && frac[n - 1] == '0')
        n--;
    frac[n] = '\0';
    return true;
}

/*
 * The digits of x (finite, >= 0, not an integer, < 2^53) with k decimals,
 * correctly rounded: whole part into *whole, fraction digits (trailing zeros
 * dropped) into frac. The radix character of the locale is skipped, whatever
 * it is.
 */
static void decimals(double x, int k, int64_t *whole, char *frac, size_t cap)
{
    if (decimals_exact(x, k, whole, frac, cap))
        return;
    char tmp[DECIMALS_MAX + 40];
    ads_snprintf_c(tmp, sizeof tmp, "%.*f", k, x);
    const char *q = tmp;
    int64_t w = 0;
    while (is_digit(*q))
        w = w * 10 + (*q++ - '0');
    while (*q && !is_digit(*q))
        q++;
    size_t n = 0;
    while (is_digit(*q) && n + 1 < cap)
        frac[n++] = *q++;
    while (n > 0 && frac[n - 1] == '0')
        n--;
    frac[n] = '\0';
    *whole = w;
}

/* ---- AbsTime ---- */

static void emit_abs(ads_buf *b, int64_t local, const char *frac, int32_t offset, bool condor)
{
    int64_t days = local >= 0 ? local / 86400 : -((-local + 86399) / 86400);
    int64_t rem = local - days * 86400;
    int64_t y;
    unsigned mo, d;
    civil_from_days(days, &y, &mo, &d);
    if (y < 0)
        ads_buf_printf(b, "-%04lld", (long long)-y);
    else if (y > 9999)
        ads_buf_printf(b, "+%lld", (long long)y);
    else
        ads_buf_printf(b, "%04lld", (long long)y);
    ads_buf_printf(b, "-%02u-%02uT%02d:%02d:%02d", mo, d, (int)(rem / 3600),
                   (int)(rem / 60 % 60), (int)(rem % 60));
    if (frac[0])
        ads_buf_printf(b, ".%s", frac);
    if (offset == 0 && !condor) {
        ads_buf_addc(b, 'Z');
        return;
    }
    int64_t a = offset < 0 ? -(int64_t)offset : offset; /* INT32_MIN too */
    /* HTCondor writes '-' for offsets <= 0 (so UTC is -00:00) */
    char sign = condor ? (offset <= 0 ? '-' : '+') : (offset < 0 ? '-' : '+');
    ads_buf_printf(b, "%c%02lld:%02lld", sign, (long long)(a / 3600), (long long)(a / 60 % 60));
}

bool ads_time__abs_ok(double secs, int32_t offset)
{
    /* within 2^53 seconds (about 285 million years, years of at most 9
     * digits) the calendar arithmetic is exact; zones are written to the
     * minute and within a day */
    if (!isfinite(secs) || offset <= -86400 || offset >= 86400 || offset % 60 != 0)
        return false;
    return fabs(secs) < ABS_LIMIT && fabs(secs + offset) < ABS_LIMIT;
}

bool ads_time__rel_ok(double secs)
{
    return isfinite(secs);
}

/*
 * Whether whole seconds and the fraction digits frac, written as an AbsTime,
 * read back as secs. For an instant ads_time__abs_ok accepts, the text
 * parses and its zone is the one written (whole minutes), so the parser
 * (ads_time__parse_abs) gives (double)whole + the fraction read correctly
 * rounded as "digits e-n", which is what this computes.
 */
static bool reads_back(double secs, double whole, const char *frac)
{
    size_t n = strlen(frac);
    if (n == 0)
        return whole == secs;
    if (n <= 15) {
        /* The digits as an integer below 10^15 and 10^n are both doubles
         * exactly, and IEEE division rounds correctly: the quotient is the
         * value strtod reads, without writing and reading text. */
        static const double pow10[16] = {1e0, 1e1, 1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                          1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};
        int64_t f = 0;
        for (size_t i = 0; i < n; i++)
            f = f * 10 + (frac[i] - '0');
        return (double)(int64_t)whole + (double)f / pow10[n] == secs;
    }
    char tmp[DECIMALS_MAX + 16];
    snprintf(tmp, sizeof tmp, "%se-%zu", frac, n);
    return (double)(int64_t)whole + ads_strtod_c(tmp, NULL) == secs;
}

static void write_abs(ads_buf *b, double secs, int32_t offset, bool condor)
{
    /* Instants outside ads_time__abs_ok never reach here from evaluation
     * (they are error); other callers' are clamped so the calendar
     * arithmetic stays defined, and do not read back. */
    if (isnan(secs))
        secs = 0;
    if (secs < -ABS_LIMIT)
        secs = -ABS_LIMIT;
    if (secs > ABS_LIMIT)
        secs = ABS_LIMIT;
    double whole = floor(secs);
    int64_t local = (int64_t)whole + offset;
    char frac[DECIMALS_MAX + 1] = "";
    if (secs != whole && ads_time__abs_ok(secs, offset)) {
        /* the fewest decimals that read back to the same instant, found
         * without writing and parsing each candidate (see reads_back) */
        for (int k = first_decimals(secs - whole); k <= DECIMALS_MAX; k++) {
            int64_t w;
            decimals(secs - whole, k, &w, frac, sizeof frac);
            if (w == 0 && reads_back(secs, whole, frac))
                break;
        }
    } else if (secs != whole) {
        /* the fewest decimals that read back to the same instant */
        ads_buf tmp = ADS_BUF_INIT;
        for (int k = first_decimals(secs - whole); k <= DECIMALS_MAX; k++) {
            int64_t w;
            decimals(secs - whole, k, &w, frac, sizeof frac);
            if (w != 0) /* rounded up to a whole second: needs more decimals */
                continue;
            ads_buf_clear(&tmp);
            emit_abs(&tmp, local, frac, offset, condor);
            double back;
            int32_t back_off;
            if (tmp.failed) {
                /* out of memory: more decimals would only give a longer,
                 * wrong form; b says what happened */
                b->failed = true;
                break;
            }
            if (ads_time__parse_abs(tmp.p, tmp.len, &back, &back_off) == 0 && back == secs)
                break;
        }
        ads_buf_free(&tmp);
    }
    emit_abs(b, local, frac, offset, condor);
}

void ads_time__format_abs(ads_buf *b, double secs, int32_t offset)
{
    write_abs(b, secs, offset, false);
}

void ads_time__format_abs_condor(ads_buf *b, double secs, int32_t offset)
{
    write_abs(b, secs, offset, true);
}

/* ---- RelTime ---- */

/* Whole seconds w and fraction digits as adstore (`1d2h3m4.5s`) or HTCondor
 * (`1+02:03:4.5`) writes them. */
static void emit_rel(ads_buf *b, bool neg, int64_t w, const char *frac, bool condor)
{
    int64_t days = w / 86400;
    int hours = (int)(w / 3600 % 24), mins = (int)(w / 60 % 60), se = (int)(w % 60);
    if (neg)
        ads_buf_addc(b, '-');
    if (condor) {
        if (days > 0)
            ads_buf_printf(b, "%lld+", (long long)days);
        if (days > 0 || hours > 0)
            ads_buf_printf(b, "%02d:", hours);
        if (days > 0 || hours > 0 || mins > 0)
            ads_buf_printf(b, "%02d:", mins);
        /* HTCondor prints fractional seconds with %g: unpadded */
        if (frac[0])
            ads_buf_printf(b, "%d.%s", se, frac);
        else
            ads_buf_printf(b, "%02d", se);
        return;
    }
    if (days > 0)
        ads_buf_printf(b, "%lldd", (long long)days);
    if (hours > 0)
        ads_buf_printf(b, "%dh", hours);
    if (mins > 0)
        ads_buf_printf(b, "%dm", mins);
    if (se > 0 || frac[0] || (days == 0 && hours == 0 && mins == 0)) {
        ads_buf_printf(b, "%d", se);
        if (frac[0])
            ads_buf_printf(b, ".%s", frac);
        ads_buf_addc(b, 's');
    }
}

static void write_rel(ads_buf *b, double secs, bool condor)
{
    if (isnan(secs) || isinf(secs)) {
        /* not a time the language can write; no text reads back as it */
        ads_buf_adds(b, condor ? "00" : "0s");
        return;
    }
    bool neg = secs < 0;
    double x = fabs(secs);
    if (x >= 9007199254740992.0) {
        /* from 2^53 on, an integer whose days, hours and minutes would not
         * add back exactly: plain seconds do */
        ads_buf_printf(b, "%s%.0f%s", neg ? "-" : "", x, condor ? "" : "s");
        return;
    }
    double whole = floor(x);
    char frac[DECIMALS_MAX + 1] = "";
    int64_t w = (int64_t)whole;
    if (x != whole) {
        ads_buf tmp = ADS_BUF_INIT;
        for (int k = first_decimals(x - whole); k <= DECIMALS_MAX; k++) {
            decimals(x, k, &w, frac, sizeof frac);
            ads_buf_clear(&tmp);
            emit_rel(&tmp, neg, w, frac, false);
            double back;
            if (tmp.failed) {
                b->failed = true; /* out of memory, as write_abs */
                break;
            }
            if (ads_time__parse_rel(tmp.p, tmp.len, &back) == 0 && back == secs)
                break;
        }
        ads_buf_free(&tmp);
    }
    emit_rel(b, neg, w, frac, condor);
}

void ads_time__format_rel(ads_buf *b, double secs)
{
    write_rel(b, secs, false);
}

void ads_time__format_rel_condor(ads_buf *b, double secs)
{
    write_rel(b, secs, true);
}
