/*
 * tests/classad/test_builtins_time.c: the time built-ins of builtins_time.c,
 * through parse and evaluate, including every error path a user can reach;
 * and the AbsTime/RelTime text reading and writing of time.c, directly.
 * The process runs with TZ=UTC; tests that need another zone set it and the
 * teardown puts UTC back.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "classad/classad.h"
#include "classad/classad_int.h"

static ads_arena *arena;

static void use_zone(const char *tz)
{
    setenv("TZ", tz, 1);
    tzset();
}

static int setup(void **state)
{
    (void)state;
    arena = ads_arena_new();
    return arena ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    ads_arena_free(arena);
    use_zone("UTC");
    return 0;
}

/* Evaluate expr in the record ctx and return its value. */
static ads_value eval_rec(const ads_record *r, const char *expr)
{
    const ads_expr *e;
    ads_error err;
    ads_value v;
    if (ads_expr_parse(&e, arena, expr, strlen(expr), &err))
        fail_msg("'%s': %s", expr, err.message);
    ads_view view = ads_record_view(r, NULL);
    assert_int_equal(ads_expr_eval(&v, e, &view, arena), 0);
    return v;
}

/* Evaluate expr (in the record ctx, "[]" for none) and return its value. */
static ads_value eval_in(const char *ctx, const char *expr)
{
    const ads_record *r;
    ads_error err;
    if (ads_record_parse(&r, arena, ctx, strlen(ctx), &err))
        fail_msg("context '%s': %s", ctx, err.message);
    return eval_rec(r, expr);
}

static const char *show(const ads_value *v)
{
    static char text[512];
    ads_buf b = ADS_BUF_INIT;
    ads_value_unparse(&b, v);
    snprintf(text, sizeof text, "%s", ads_buf_cstr(&b));
    ads_buf_free(&b);
    return text;
}

/* expr must evaluate to the same value as expected does. */
static void expect(const char *expr, const char *expected)
{
    ads_value got = eval_in("[]", expr), want = eval_in("[]", expected);
    if (!ads_value_same(&got, &want))
        fail_msg("%s: expected %s, got %s", expr, expected, show(&got));
}

/* Each EXPECT_ALL row: an expression and the value it must have. */
typedef struct row {
    const char *expr, *want;
} row;

#define EXPECT_ALL(rows)                                                                    \
    do {                                                                                    \
        for (size_t i_ = 0; i_ < sizeof(rows) / sizeof(rows)[0]; i_++)                      \
            expect((rows)[i_].expr, (rows)[i_].want);                                       \
    } while (0)

/* ------------------------------------------------------------------------ */
/* time.c: reading and writing                                              */
/* ------------------------------------------------------------------------ */

static void abs_text(double secs, int32_t off, bool condor, const char *want)
{
    ads_buf b = ADS_BUF_INIT;
    if (condor)
        ads_time__format_abs_condor(&b, secs, off);
    else
        ads_time__format_abs(&b, secs, off);
    assert_string_equal(ads_buf_cstr(&b), want);
    ads_buf_free(&b);
}

static void rel_text(double secs, bool condor, const char *want)
{
    ads_buf b = ADS_BUF_INIT;
    if (condor)
        ads_time__format_rel_condor(&b, secs);
    else
        ads_time__format_rel(&b, secs);
    if (strcmp(ads_buf_cstr(&b), want) != 0)
        fail_msg("%.17g: expected %s, got %s", secs, want, ads_buf_cstr(&b));
    ads_buf_free(&b);
}

/* text parses as an AbsTime and writes back as canon (adstore style) and
 * condor (HTCondor style), both of which parse to the same instant. */
static void abs_round_trip(const char *text, const char *canon, const char *condor)
{
    double secs, back;
    int32_t off, back_off;
    if (ads_time__parse_abs(text, strlen(text), &secs, &off) != 0)
        fail_msg("'%s' refused", text);
    abs_text(secs, off, false, canon);
    abs_text(secs, off, true, condor);
    assert_int_equal(ads_time__parse_abs(canon, strlen(canon), &back, &back_off), 0);
    assert_true(back == secs);
    assert_int_equal(back_off, off);
    assert_int_equal(ads_time__parse_abs(condor, strlen(condor), &back, &back_off), 0);
    assert_true(back == secs);
    assert_int_equal(back_off, off);
}

static void time_text__abs_parse_and_format_round_trip(void **state)
{
    (void)state;
    abs_round_trip("2011-12-13T12:00:00Z", "2011-12-13T12:00:00Z",
                   "2011-12-13T12:00:00-00:00");
    abs_round_trip("2011-12-13T12:00:00-0500", "2011-12-13T12:00:00-05:00",
                   "2011-12-13T12:00:00-05:00");
    abs_round_trip("2011-12-13T12:00:00+05:30", "2011-12-13T12:00:00+05:30",
                   "2011-12-13T12:00:00+05:30");
    abs_round_trip("2011-12-13T12:00:00-00:00", "2011-12-13T12:00:00Z",
                   "2011-12-13T12:00:00-00:00");
    abs_round_trip("  20111213T120000+0100\t", "2011-12-13T12:00:00+01:00",
                   "2011-12-13T12:00:00+01:00");
    abs_round_trip("1970-01-01T:00:00:01Z", "1970-01-01T00:00:01Z", "1970-01-01T00:00:01-00:00");
    abs_round_trip("2011-12-13 12:00:00z", "2011-12-13T12:00:00Z", "2011-12-13T12:00:00-00:00");
    abs_round_trip("2011-12-13t12:00:00+14", "2011-12-13T12:00:00+14:00",
                   "2011-12-13T12:00:00+14:00");
    /* leap days, before 1970, the ends of the four-digit years */
    abs_round_trip("2000-02-29T23:59:59Z", "2000-02-29T23:59:59Z", "2000-02-29T23:59:59-00:00");
    abs_round_trip("2012-02-29T00:00:00-12:00", "2012-02-29T00:00:00-12:00",
                   "2012-02-29T00:00:00-12:00");
    abs_round_trip("1969-12-31T23:59:59Z", "1969-12-31T23:59:59Z", "1969-12-31T23:59:59-00:00");
    abs_round_trip("1900-01-01T00:00:00Z", "1900-01-01T00:00:00Z", "1900-01-01T00:00:00-00:00");
    abs_round_trip("1600-02-29T12:00:00Z", "1600-02-29T12:00:00Z", "1600-02-29T12:00:00-00:00");
    abs_round_trip("0000-01-01T00:00:00Z", "0000-01-01T00:00:00Z", "0000-01-01T00:00:00-00:00");
    abs_round_trip("9999-12-31T23:59:59Z", "9999-12-31T23:59:59Z", "9999-12-31T23:59:59-00:00");
    abs_round_trip("9999-12-31T23:59:59-23:59", "9999-12-31T23:59:59-23:59",
                   "9999-12-31T23:59:59-23:59");
    /* a leap second reads as the next minute's first second */
    abs_round_trip("2016-12-31T23:59:60Z", "2017-01-01T00:00:00Z", "2017-01-01T00:00:00-00:00");
    /* fractional seconds: the fewest decimals that read back */
    abs_round_trip("2011-12-13T12:00:00.5Z", "2011-12-13T12:00:00.5Z",
                   "2011-12-13T12:00:00.5-00:00");
    abs_round_trip("2011-12-13T12:00:00.250-05:00", "2011-12-13T12:00:00.25-05:00",
                   "2011-12-13T12:00:00.25-05:00");
    abs_round_trip("1969-12-31T23:59:59.75Z", "1969-12-31T23:59:59.75Z",
                   "1969-12-31T23:59:59.75-00:00");
    abs_round_trip("2011-12-13T12:00:00.1Z", "2011-12-13T12:00:00.1Z",
                   "2011-12-13T12:00:00.1-00:00");

    double secs;
    int32_t off;
    assert_int_equal(ads_time__parse_abs("1970-01-01T00:00:00Z", 20, &secs, &off), 0);
    assert_true(secs == 0 && off == 0);
    assert_int_equal(ads_time__parse_abs("1970-01-01T05:30:00+05:30", 25, &secs, &off), 0);
    assert_true(secs == 0 && off == 19800);
    assert_int_equal(ads_time__parse_abs("2000-03-01T00:00:00Z", 20, &secs, &off), 0);
    assert_true(secs == 951868800);
}

static void time_text__abs_many_instants_round_trip(void **state)
{
    (void)state;
    static const int32_t offsets[] = {0, 3600, -3600, 19800, -18000, 50400, -43200, 20700};
    /* a day every 3001 days over -9000..+9000 years of seconds, plus odd
     * seconds, at several offsets */
    for (int64_t day = -719468; day < 2932896; day += 3001) {
        for (size_t o = 0; o < sizeof offsets / sizeof offsets[0]; o++) {
            double secs = (double)(day * 86400 + (day % 86399));
            ads_buf b = ADS_BUF_INIT;
            ads_time__format_abs(&b, secs, offsets[o]);
            double back;
            int32_t back_off;
            if (ads_time__parse_abs(b.p, b.len, &back, &back_off) != 0 || back != secs ||
                back_off != offsets[o])
                fail_msg("%.0f at %d: '%s' does not read back", secs, offsets[o], b.p);
            ads_buf_clear(&b);
            ads_time__format_abs_condor(&b, secs, offsets[o]);
            if (ads_time__parse_abs(b.p, b.len, &back, &back_off) != 0 || back != secs)
                fail_msg("%.0f at %d: '%s' does not read back", secs, offsets[o], b.p);
            ads_buf_free(&b);
        }
    }
}

static void time_text__abs_invalid_texts_refused(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "", " ", "junk", "2011", "2011-12-13", "2011-12-13T", "2011-12-13T12",
        "2011-12-13T12:00", "11-12-13T12:00:00Z", "2011-13-01T00:00:00Z",
        "2011-00-01T00:00:00Z", "2011-12-00T00:00:00Z", "2011-12-32T00:00:00Z",
        "2011-02-29T00:00:00Z", "1900-02-29T00:00:00Z", "2011-04-31T00:00:00Z",
        "2011-02-30T00:00:00Z", "2011-12-13T24:00:00Z", "2011-12-13T12:60:00Z",
        "2011-12-13T12:00:61Z", "2011-12-13X12:00:00Z", "2011-12-13T12:00:00.Z",
        "2011-12-13T12:00:00..5Z", "2011-12-13T12:00:00Q", "2011-12-13T12:00:00+5",
        "2011-12-13T12:00:00+05:3", "2011-12-13T12:00:00+24:00",
        "2011-12-13T12:00:00+05:60", "2011-12-13T12:00:00ZZ", "2011-12-13T12:00:00Z junk",
        "2011-12-13T12:00:00+05:00:00", "+2011-12-13T12:00:00Z", "2011-12-13T1:00:00Z",
        "２011-12-13T12:00:00Z",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        double secs = 7;
        int32_t off = 7;
        if (ads_time__parse_abs(bad[i], strlen(bad[i]), &secs, &off) == 0)
            fail_msg("'%s' accepted", bad[i]);
    }
    /* the length bounds the text: no reading past it */
    double secs;
    int32_t off;
    assert_int_equal(ads_time__parse_abs("2011-12-13T12:00:00Z", 19, &secs, &off), 0);
    assert_int_equal(ads_time__parse_abs("2011-12-13T12:00:00+05:30", 23, &secs, &off), -1);
    assert_int_equal(ads_time__parse_abs("2011-12-13T12:00:00.5", 20, &secs, &off), -1);
}

static void time_text__abs_without_zone_takes_local_zone(void **state)
{
    (void)state;
    double secs;
    int32_t off;
    assert_int_equal(ads_time__parse_abs("2011-12-13T12:00:00", 19, &secs, &off), 0);
    assert_true(secs == 1323777600 && off == 0);
    use_zone("EST5EDT,M3.2.0,M11.1.0");
    assert_int_equal(ads_time__parse_abs("2011-12-13T12:00:00", 19, &secs, &off), 0);
    assert_true(secs == 1323777600 + 5 * 3600 && off == -5 * 3600);
    assert_int_equal(ads_time__parse_abs("2011-07-13T12:00:00", 19, &secs, &off), 0);
    assert_int_equal(off, -4 * 3600);
    assert_int_equal(ads_time__local_offset(1323777600), -5 * 3600);
    /* an explicit zone wins */
    assert_int_equal(ads_time__parse_abs("2011-07-13T12:00:00Z", 20, &secs, &off), 0);
    assert_int_equal(off, 0);
    use_zone("IST-5:30");
    assert_int_equal(ads_time__local_offset(0), 19800);
    assert_int_equal(ads_time__parse_abs("1970-01-01T05:30:00", 19, &secs, &off), 0);
    assert_true(secs == 0 && off == 19800);
}

static void time_text__abs_out_of_range_instants_write_without_crash(void **state)
{
    (void)state;
    /* years beyond 0000..9999 in ISO 8601's expanded form, which reads
     * back (test_unparse: unparse__every_value_class_reads_back) */
    abs_text(253402300800.0, 0, false, "+10000-01-01T00:00:00Z");
    abs_text(-62167219200.0 - 86400, 0, false, "-0001-12-31T00:00:00Z");
    /* no text reads back as these; writing them must stay defined */
    const double odd[] = {NAN, INFINITY, -INFINITY, 1e300, -1e300, 9.2e18, -9.3e18};
    for (size_t i = 0; i < sizeof odd / sizeof odd[0]; i++) {
        ads_buf b = ADS_BUF_INIT;
        ads_time__format_abs(&b, odd[i], 3600);
        ads_time__format_abs_condor(&b, odd[i], -3600);
        assert_false(b.failed);
        assert_true(b.len > 0);
        ads_buf_free(&b);
    }
    /* offsets no text can give and absTime(t, offset) refuses (it takes
     * whole minutes, less than a day either way), which ads_abstime() and
     * decoded bytes can still carry */
    abs_text(0, INT32_MIN, false, "1901-12-13T20:45:52-596523:14");
    abs_text(0, INT32_MAX, true, "2038-01-19T03:14:07+596523:14");
    abs_text(0, 86400, false, "1970-01-02T00:00:00+24:00");
    assert_int_equal(ads_time__local_offset(NAN), 0);
    assert_int_equal(ads_time__local_offset(INFINITY), 0);
    assert_int_equal(ads_time__local_offset(-1e300), 0);
}

static void time_text__rel_parse_forms(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        double secs;
    } good[] = {
        {"90", 90},           {"1.5", 1.5},         {"-90", -90},         {"+90", 90},
        {"0", 0},             {"1d2h3m4.5s", 93784.5}, {"1D2H3M4S", 93784}, {"1.5m", 90},
        {"2h", 7200},         {"1d", 86400},        {"30s", 30},          {"1h30", 3630},
        {"-1d1s", -86401},    {"1:30", 90},         {"-1:30", -90},       {"25:00", 1500},
        {"1:02:03", 3723},    {"1+02:03:04.5", 93784.5}, {"2+25:14:16.123", 263656.123},
        {"3+01:14:16.123", 263656.123}, {"1+00:00:00", 86400}, {"2+5", 172805},
        {"00:00:0.25", 0.25}, {" 1:30 ", 90},       {".5", 0.5},          {"5.", 5},
        {"0.000001s", 0.000001}, {"100000000000000000000s", 1e20},
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        double secs = -7;
        if (ads_time__parse_rel(good[i].text, strlen(good[i].text), &secs) != 0)
            fail_msg("'%s' refused", good[i].text);
        if (secs != good[i].secs)
            fail_msg("'%s': %.17g, not %.17g", good[i].text, secs, good[i].secs);
    }
}

static void time_text__rel_invalid_texts_refused(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "", " ", "-", "+", "bogus", "1x", "d", "1d2d", "1s2m", "1h1d", "1m1s2",
        "1:2:3:4", "1:", ":30", "1::30", "1+", "+1+", "1.5+00:00", "1.5:30",
        "1:30.5:00", "1+2+3", "1d+00:00", "--1", "1 d", "1e3", "0x10", "1,5",
        "1d 2h", "1.2.3", "nan", "inf",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        double secs = 7;
        if (ads_time__parse_rel(bad[i], strlen(bad[i]), &secs) == 0)
            fail_msg("'%s' accepted as %g", bad[i], secs);
    }
    /* a number too long, and one too large, are refused, not infinite */
    char big[1200];
    memset(big, '9', 1000);
    big[1000] = '\0';
    double secs;
    assert_int_equal(ads_time__parse_rel(big, strlen(big), &secs), -1);
    memset(big, '9', 350);
    strcpy(big + 350, "d");
    assert_int_equal(ads_time__parse_rel(big, strlen(big), &secs), -1);
    /* the length bounds the text */
    assert_int_equal(ads_time__parse_rel("1d2h", 2, &secs), 0);
    assert_true(secs == 86400);
}

static void time_text__rel_format_both_styles(void **state)
{
    (void)state;
    rel_text(0, false, "0s");
    rel_text(0, true, "00");
    rel_text(90, false, "1m30s");
    rel_text(90, true, "01:30");
    rel_text(-90, false, "-1m30s");
    rel_text(-90, true, "-01:30");
    rel_text(60, true, "01:00");
    rel_text(3600, false, "1h");
    rel_text(3600, true, "01:00:00");
    rel_text(86400, false, "1d");
    rel_text(86400, true, "1+00:00:00");
    rel_text(93784.5, false, "1d2h3m4.5s");
    rel_text(93784.5, true, "1+02:03:4.5");
    rel_text(86400 * 2 + 0.25, true, "2+00:00:0.25");
    rel_text(263656.123, true, "3+01:14:16.123");
    rel_text(90.7, false, "1m30.7s");
    rel_text(90.7, true, "01:30.7");
    rel_text(60.1, false, "1m0.1s");
    rel_text(0.1, false, "0.1s");
    rel_text(-0.5, false, "-0.5s");
    rel_text(-0.5, true, "-0.5");
    rel_text(0.000001, false, "0.000001s");
    rel_text(5, true, "05");
    rel_text(1e20, false, "100000000000000000000s");
    rel_text(-1e20, true, "-100000000000000000000");
    rel_text(1e15, false, "11574074074d1h46m40s");
    rel_text(9007199254740991.0, false, "104249991374d7h36m31s");
    rel_text(9007199254740992.0, true, "9007199254740992");
    /* not values the language reads; written without crashing */
    rel_text(NAN, false, "0s");
    rel_text(INFINITY, true, "00");
}

static void time_text__rel_many_values_round_trip(void **state)
{
    (void)state;
    /* integers, halves, thousandths, awkward binary fractions, big values */
    double v = 0.001;
    for (int i = 0; i < 4000; i++) {
        const double vals[] = {v, -v, floor(v), v / 3, v * 1.0000001, v + 0.1};
        for (size_t j = 0; j < sizeof vals / sizeof vals[0]; j++) {
            for (int condor = 0; condor < 2; condor++) {
                ads_buf b = ADS_BUF_INIT;
                if (condor)
                    ads_time__format_rel_condor(&b, vals[j]);
                else
                    ads_time__format_rel(&b, vals[j]);
                double back;
                if (ads_time__parse_rel(b.p, b.len, &back) != 0 || back != vals[j])
                    fail_msg("%.17g: '%s' does not read back", vals[j], b.p);
                ads_buf_free(&b);
            }
        }
        v = v * 1.0123 + 0.37;
    }
}

static void time_text__literals_unparse_and_read_back(void **state)
{
    (void)state;
    static const char *const texts[] = {
        "`2011-12-13T12:00:00-05:00`", "`2011-12-13T12:00:00Z`", "`1969-07-20T20:17:40Z`",
        "`2011-12-13T12:00:00.125+05:30`", "`1m30s`", "`1d2h3m4.5s`", "`-1m30s`",
        "`0s`", "`0.1s`", "`9999-12-31T23:59:59-00:30`",
    };
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        ads_value v = eval_in("[]", texts[i]);
        assert_string_equal(show(&v), texts[i]);
    }
}

/* ------------------------------------------------------------------------ */
/* the built-ins                                                            */
/* ------------------------------------------------------------------------ */

/* The seconds of CLOCK_REALTIME, the clock the built-ins read (time(NULL)
 * reads a coarser clock that may lag it by a tick at a second's edge). */
static time_t wall_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return ts.tv_sec;
}

static void time__is_integer_seconds_now(void **state)
{
    (void)state;
    time_t before = wall_now();
    ads_value v = eval_in("[]", "time()");
    time_t after = wall_now();
    assert_int_equal(v.type, ADS_INTEGER);
    assert_true(v.u.i >= before && v.u.i <= after);
    expect("time(1)", "error");
    expect("TIME() > 1000000000", "true");
}

static void now__and_current_time_are_abstime_now_in_local_zone(void **state)
{
    (void)state;
    const char *fns[] = {"now()", "currentTime()", "CurrentTime()", "NOW()"};
    for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++) {
        time_t before = wall_now();
        ads_value v = eval_in("[]", fns[i]);
        time_t after = wall_now();
        assert_int_equal(v.type, ADS_ABSTIME);
        assert_true(v.u.abs.secs >= before && v.u.abs.secs <= after);
        assert_true(v.u.abs.secs == floor(v.u.abs.secs));
        assert_int_equal(v.u.abs.offset, 0);
    }
    use_zone("IST-5:30");
    ads_value v = eval_in("[]", "now()");
    assert_int_equal(v.u.abs.offset, 19800);
    expect("now() - absTime(time()) < `2s`", "true");
    expect("now(1)", "error");
    expect("currentTime(undefined)", "error");
    /* CurrentTime as a name, when no attribute has it, is time() (as in
     * HTCondor's daemons and tools; test_eval has the details) */
    expect("isInteger(CurrentTime) && CurrentTime - time() < 2", "true");
}

static void time_zone_offset__is_local_offset_as_reltime(void **state)
{
    (void)state;
    expect("timeZoneOffset()", "`0s`");
    use_zone("IST-5:30");
    expect("timeZoneOffset()", "`5h30m`");
    use_zone("NST3:30");
    expect("timeZoneOffset()", "relTime(-12600)");
    expect("timeZoneOffset(1)", "error");
}

static void day_time__is_reltime_since_local_midnight(void **state)
{
    (void)state;
    time_t before = wall_now();
    ads_value v = eval_in("[]", "dayTime()");
    time_t after = wall_now();
    assert_int_equal(v.type, ADS_RELTIME);
    assert_true(v.u.rel >= 0 && v.u.rel < 86400 && v.u.rel == floor(v.u.rel));
    /* under UTC, seconds since midnight; allow for a day boundary in between */
    assert_true(v.u.rel == before % 86400 || v.u.rel == after % 86400 ||
                (before % 86400 <= v.u.rel && v.u.rel <= after % 86400));
    use_zone("IST-5:30");
    v = eval_in("[]", "dayTime()");
    time_t t = time(NULL) + 19800;
    assert_true(fabs(v.u.rel - (double)(t % 86400)) <= 2 ||
                fabs(v.u.rel - (double)(t % 86400)) >= 86398);
    expect("dayTime(1)", "error");
}

static void get__fields_of_abstime(void **state)
{
    (void)state;
    static const row rows[] = {
        {"getYear(`1997-08-30T16:04:05Z`)", "1997"},
        {"getMonth(`1997-08-30T16:04:05Z`)", "8"},
        {"getDayOfMonth(`1997-08-30T16:04:05Z`)", "30"},
        {"getDayOfWeek(`1997-08-30T16:04:05Z`)", "6"},
        {"getDayOfYear(`1997-08-30T16:04:05Z`)", "241"},
        {"getHours(`1997-08-30T16:04:05Z`)", "16"},
        {"getMinutes(`1997-08-30T16:04:05Z`)", "4"},
        {"getSeconds(`1997-08-30T16:04:05Z`)", "5"},
        {"GETYEAR(`1997-08-30T16:04:05Z`)", "1997"},
        /* day of year counts from 0, as HTCondor's tm_yday */
        {"getDayOfYear(`2011-01-01T00:00:00Z`)", "0"},
        {"getDayOfYear(`2000-12-31T00:00:00Z`)", "365"},
        {"getDayOfYear(`2001-12-31T00:00:00Z`)", "364"},
        {"getDayOfMonth(`2000-02-29T12:00:00Z`)", "29"},
        {"getDayOfWeek(`2000-02-29T12:00:00Z`)", "2"},
        {"getDayOfWeek(`1970-01-01T00:00:00Z`)", "4"},
        {"getDayOfWeek(`1969-12-31T23:59:59Z`)", "3"},
        {"getYear(`1969-12-31T23:59:59Z`)", "1969"},
        {"getYear(`1600-02-29T00:00:00Z`)", "1600"},
        {"getYear(`0000-01-01T00:00:00Z`)", "0"},
        {"getYear(`9999-12-31T23:59:59Z`)", "9999"},
        {"getSeconds(`9999-12-31T23:59:59Z`)", "59"},
        {"getSeconds(`2011-12-13T12:00:07.9Z`)", "7"},
        {"getSeconds(`1969-12-31T23:59:59.5Z`)", "59"},
        {"getYear(absTime(253402300800))", "10000"},
        {"getYear(absTime(-62167219200 - 1))", "-1"},
        {"getDays(`1997-08-30T16:04:05Z`)", "error"},
    };
    EXPECT_ALL(rows);
}

static void get__abstime_fields_are_in_the_local_zone(void **state)
{
    (void)state;
    /* HTCondor reads the instant in the process's zone, not the value's */
    expect("getHours(`2011-12-13T12:00:00-05:00`)", "17");
    expect("getDayOfMonth(`2011-12-13T23:30:00-05:00`)", "14");
    use_zone("IST-5:30");
    expect("getHours(`2011-12-13T12:00:00Z`)", "17");
    expect("getMinutes(`2011-12-13T12:00:00Z`)", "30");
    expect("getHours(`2011-12-13T12:00:00+05:30`)", "12");
    expect("getYear(`2011-12-31T20:00:00Z`)", "2012");
    expect("getDayOfYear(`2011-12-31T20:00:00Z`)", "0");
}

static void get__fields_of_reltime(void **state)
{
    (void)state;
    static const row rows[] = {
        {"getDays(relTime(\"1d2h3m4s\"))", "1"},
        {"getHours(relTime(\"1d2h3m4s\"))", "2"},
        {"getMinutes(relTime(\"1d2h3m4s\"))", "3"},
        {"getSeconds(relTime(\"1d2h3m4s\"))", "4"},
        {"getSeconds(`4.9s`)", "4"},
        {"getDays(`100d23h`)", "100"},
        {"getHours(`100d23h`)", "23"},
        {"getMinutes(`0s`)", "0"},
        /* negative: cut toward zero, every part negative */
        {"getDays(relTime(-90000))", "-1"},
        {"getHours(relTime(-90000))", "-1"},
        {"getMinutes(relTime(-90061))", "-1"},
        {"getSeconds(relTime(-90061))", "-1"},
        {"getSeconds(relTime(-4.5))", "-4"},
        {"getDays(relTime(1e15))", "11574074074"},
        {"getDays(relTime(9.2e18))", "106481481481481"},
        {"getYear(relTime(\"1d\"))", "error"},
        {"getMonth(`1d`)", "error"},
        {"getDayOfMonth(`1d`)", "error"},
        {"getDayOfWeek(`1d`)", "error"},
        {"getDayOfYear(`1d`)", "error"},
    };
    EXPECT_ALL(rows);
}

static void get__errors_for_other_arguments(void **state)
{
    (void)state;
    const char *fns[] = {"getYear", "getMonth", "getDayOfYear", "getDayOfMonth",
                         "getDayOfWeek", "getDays", "getHours", "getMinutes", "getSeconds"};
    const char *args[] = {"undefined", "error", "5", "1.5", "\"2011-12-13T12:00:00Z\"",
                          "true", "{ 1 }", "[ a = 1 ]", "#0", "absTime(1e300)",
                          "absTime(real(\"NaN\"))", "relTime(1e300)", "relTime(real(\"INF\"))",
                          "relTime(real(\"NaN\"))", "", "`1d`, `1d`"};
    for (size_t f = 0; f < sizeof fns / sizeof fns[0]; f++) {
        for (size_t a = 0; a < sizeof args / sizeof args[0]; a++) {
            char expr[128];
            snprintf(expr, sizeof expr, "%s(%s)", fns[f], args[a]);
            if (!strcmp(args[a], "#0"))
                snprintf(expr, sizeof expr, "%s(id(\"00000000000000000000000000000000\"))",
                         fns[f]);
            expect(expr, "error");
        }
    }
}

static void split_time__abstime_record(void **state)
{
    (void)state;
    static const row rows[] = {
        {"splitTime(absTime(\"1970-01-02T:03:04:05Z\"))",
         "[ Type = \"AbsoluteTime\"; Year = 1970; Month = 1; Day = 2; Hours = 3; "
         "Minutes = 4; Seconds = 5; Offset = 0 ]"},
        /* the value's own offset, not the local zone */
        {"splitTime(`2011-12-13T12:00:00+05:30`)",
         "[ Type = \"AbsoluteTime\"; Year = 2011; Month = 12; Day = 13; Hours = 12; "
         "Minutes = 0; Seconds = 0; Offset = 19800 ]"},
        {"splitTime(`2011-12-13T12:00:00-00:00`).Offset", "0"},
        {"splitTime(`2011-12-13T01:00:00-05:00`).day", "13"},
        {"splitTime(`1969-12-31T23:59:59Z`)",
         "[ Type = \"AbsoluteTime\"; Year = 1969; Month = 12; Day = 31; Hours = 23; "
         "Minutes = 59; Seconds = 59; Offset = 0 ]"},
        {"splitTime(`2000-02-29T00:00:00Z`).Day", "29"},
        {"splitTime(`9999-12-31T23:59:59-12:00`).year", "9999"},
        {"splitTime(`0000-01-01T00:00:00Z`).year", "0"},
        {"splitTime(absTime(253402300800)).Year", "10000"},
        /* fractional instants keep the fraction as a real */
        {"splitTime(`2011-12-13T12:00:00.5-05:30`).Seconds", "0.5"},
        {"splitTime(`1969-12-31T23:59:59.25Z`).Seconds", "59.25"},
        /* numbers are epoch seconds in the local zone, reals cut toward zero */
        {"splitTime(0)",
         "[ Type = \"AbsoluteTime\"; Year = 1970; Month = 1; Day = 1; Hours = 0; "
         "Minutes = 0; Seconds = 0; Offset = 0 ]"},
        {"splitTime(-1.5).Seconds", "59"},
        {"splitTime(1.9).Seconds", "1"},
        {"splitTime(951782400).Day", "29"},
        {"splitTime(1e15).Year", "31690708"},
        {"splitTime(1e16)", "error"},
        {"splitTime(-1e300)", "error"},
        {"splitTime(real(\"NaN\"))", "error"},
        {"splitTime(absTime(1e300))", "error"},
        {"splitTime(undefined)", "undefined"},
        {"splitTime(error)", "error"},
        {"splitTime(\"2011-12-13T12:00:00Z\")", "error"},
        {"splitTime(true)", "error"},
        {"splitTime({ 1 })", "error"},
        {"splitTime([ Year = 2000 ])", "error"},
        {"splitTime()", "error"},
        {"splitTime(1, 2)", "error"},
    };
    EXPECT_ALL(rows);
    use_zone("IST-5:30");
    expect("splitTime(0)",
           "[ Type = \"AbsoluteTime\"; Year = 1970; Month = 1; Day = 1; Hours = 5; "
           "Minutes = 30; Seconds = 0; Offset = 19800 ]");
    expect("splitTime(`2011-12-13T12:00:00Z`).Hours", "12");
}

static void split_time__reltime_record(void **state)
{
    (void)state;
    static const row rows[] = {
        {"splitTime(relTime(\"1d2h3m4.5s\"))",
         "[ Type = \"RelativeTime\"; Days = 1; Hours = 2; Minutes = 3; Seconds = 4.5 ]"},
        {"splitTime(`1d2h3m4s`).seconds", "4.0"},
        {"splitTime(`0s`)",
         "[ Type = \"RelativeTime\"; Days = 0; Hours = 0; Minutes = 0; Seconds = 0.0 ]"},
        {"splitTime(`100d`).Days", "100"},
        {"splitTime(`1d2h3m4.5s`).type", "\"RelativeTime\""},
        /* negative: only the leading non-zero part carries the sign */
        {"splitTime(relTime(-90))",
         "[ Type = \"RelativeTime\"; Days = 0; Hours = 0; Minutes = -1; Seconds = 30.0 ]"},
        {"splitTime(relTime(-90061.5))",
         "[ Type = \"RelativeTime\"; Days = -1; Hours = 1; Minutes = 1; Seconds = 1.5 ]"},
        {"splitTime(relTime(-3600))",
         "[ Type = \"RelativeTime\"; Days = 0; Hours = -1; Minutes = 0; Seconds = 0.0 ]"},
        {"splitTime(relTime(-0.5))",
         "[ Type = \"RelativeTime\"; Days = 0; Hours = 0; Minutes = 0; Seconds = -0.5 ]"},
        {"splitTime(relTime(1e15)).Days", "11574074074"},
        {"splitTime(relTime(1e300))", "error"},
        {"splitTime(relTime(real(\"INF\")))", "error"},
        {"splitTime(relTime(real(\"NaN\")))", "error"},
    };
    EXPECT_ALL(rows);
}

static void format_time__abstime_with_format(void **state)
{
    (void)state;
    static const row rows[] = {
        {"formatTime(absTime(\"1997-08-30T16:04:05-0500\"), \"%m %d %Y\")", "\"08 30 1997\""},
        {"formatTime(absTime(\"1997-08-30T16:04:05-0500\"), \"%H %M %S\")", "\"16 04 05\""},
        {"formatTime(`1997-08-30T16:04:05-05:00`)", "\"Sat Aug 30 16:04:05 1997\""},
        {"formatTime(`1997-08-30T16:04:05+05:30`, \"%Y-%m-%dT%H:%M:%S%z\")",
         "\"1997-08-30T16:04:05+0530\""},
        {"formatTime(`1997-08-30T16:04:05-00:00`, \"%z %Z\")", "\"+0000 UTC\""},
        {"formatTime(`1997-08-30T16:04:05-05:30`, \"%z|%Z\")", "\"-0530|-0530\""},
        {"formatTime(`1997-08-30T16:04:05-05:00`, \"%s\")", "\"872975045\""},
        {"formatTime(`1997-08-30T16:04:05Z`, \"%a %A %b %B %j %w %u %y %C %e %I %p\")",
         "\"Sat Saturday Aug August 242 6 6 97 19 30 04 PM\""},
        {"formatTime(`1997-08-30T16:04:05Z`, \"%D %F %T %R %x %X %%\")",
         "\"08/30/97 1997-08-30 16:04:05 16:04 08/30/97 16:04:05 %\""},
        {"formatTime(`1997-08-30T16:04:05Z`, \"%G-W%V %U %W\")", "\"1997-W35 34 34\""},
        {"formatTime(`1997-08-30T16:04:05Z`, \"at %H:%M, text and 100%%\")",
         "\"at 16:04, text and 100%\""},
        {"formatTime(`1997-08-30T16:04:05Z`, \"%-d %_H %^a %10Y %5z %012s\")",
         "\"30 16 SAT 0000001997 +0000 000872957045\""},
        {"formatTime(`1997-08-30T16:04:05Z`, \"%Ey %Od\")", "\"97 30\""},
        {"formatTime(`2000-02-29T00:00:00Z`, \"%j %A\")", "\"060 Tuesday\""},
        {"formatTime(`1969-12-31T23:59:59Z`, \"%Y-%m-%d %H:%M:%S %s\")",
         "\"1969-12-31 23:59:59 -1\""},
        {"formatTime(`1900-01-01T00:00:00Z`, \"%A %j\")", "\"Monday 001\""},
        {"formatTime(`9999-12-31T23:59:59-12:00`, \"%Y %j %H\")", "\"9999 365 23\""},
        {"formatTime(`0000-01-01T00:00:00Z`, \"%Y\")", "\"0\""},
        {"formatTime(absTime(253402300800), \"%Y\")", "\"10000\""},
        {"formatTime(`2011-12-13T12:00:00.9Z`, \"%S\")", "\"00\""},
        {"formatTime(`1997-08-30T16:04:05Z`, \"\")", "\"\""},
    };
    EXPECT_ALL(rows);
}

static void format_time__numbers_are_epoch_seconds_in_local_zone(void **state)
{
    (void)state;
    static const row rows[] = {
        {"formatTime(0, \"%Y-%m-%d %H:%M:%S\")", "\"1970-01-01 00:00:00\""},
        {"formatTime(0)", "\"Thu Jan  1 00:00:00 1970\""},
        {"formatTime(-1, \"%Y-%m-%d %H:%M:%S\")", "\"1969-12-31 23:59:59\""},
        {"formatTime(1.9, \"%S\")", "\"01\""},
        {"formatTime(-1.9, \"%S\")", "\"59\""},
        {"formatTime(951782400, \"%d %b\")", "\"29 Feb\""},
        {"formatTime(-2208988800, \"%Y %A\")", "\"1900 Monday\""},
        {"formatTime(1e15, \"%Y\")", "\"31690708\""},
        {"formatTime(1e16)", "error"},
        {"formatTime(9223372036854775807)", "error"},
        {"formatTime(-9223372036854775807 - 1)", "error"},
        {"formatTime(real(\"INF\"))", "error"},
        {"formatTime(real(\"NaN\"))", "error"},
        {"formatTime(absTime(1e300))", "error"},
    };
    EXPECT_ALL(rows);
    use_zone("EST5EDT,M3.2.0,M11.1.0");
    expect("formatTime(0, \"%Y-%m-%d %H:%M %z %Z\")", "\"1969-12-31 19:00 -0500 EST\"");
    expect("formatTime(1310000000, \"%H %z %Z\")", "\"20 -0400 EDT\"");
    /* an AbsTime at the local offset takes the local zone's name */
    expect("formatTime(`2011-12-13T12:00:00-05:00`, \"%Z\")", "\"EST\"");
    expect("formatTime(`2011-12-13T12:00:00Z`, \"%H %Z\")", "\"12 UTC\"");
    ads_value v = eval_in("[]", "formatTime()");
    assert_int_equal(v.type, ADS_STRING);
    assert_int_equal(v.u.s.len, 24); /* %c: "Sat Aug 30 16:04:05 1997" */
}

static void format_time__record_fields(void **state)
{
    (void)state;
    static const row rows[] = {
        {"formatTime(splitTime(absTime(\"1997-08-30T16:04:05-0500\")), \"%H:%M:%S\")",
         "\"16:04:05\""},
        {"formatTime(splitTime(`1997-08-30T16:04:05+05:30`), \"%F %T %z %a\")",
         "\"1997-08-30 16:04:05 +0530 Sat\""},
        {"formatTime(splitTime(`1997-08-30T16:04:05+05:30`), \"%s\")", "\"872937245\""},
        {"formatTime([ Year = 2000; Month = 2; Day = 29 ])", "\"Tue Feb 29 00:00:00 2000\""},
        {"formatTime([ year = 2000; month = 2; day = 29; hours = 1; minutes = 2; "
         "seconds = 3.7 ], \"%T %j\")",
         "\"01:02:03 060\""},
        /* absent fields take HTCondor's defaults: 1900, January, day 0 */
        {"formatTime([ ], \"%Y-%m-%d %T\")", "\"1900-01-00 00:00:00\""},
        {"formatTime([ Day = 5 ], \"%Y %b %d %a\")", "\"1900 Jan 05 Fri\""},
        {"formatTime([ Year = \"x\"; Day = 1 ], \"%Y\")", "\"1900\""},
        {"formatTime([ Year = 1999 + 1; Month = 1; Day = 1 ], \"%Y %a\")",
         "\"2000 Sat\""},
        /* a RelTime's record formats its clock fields */
        {"formatTime(splitTime(`1d2h3m4s`), \"%H:%M:%S\")", "\"02:03:04\""},
        {"formatTime([ Year = 2000; Month = 13 ])", "error"},
        {"formatTime([ Year = 2000; Month = 0 ])", "error"},
        {"formatTime([ Year = 2000; Month = 1; Day = 32 ])", "error"},
        {"formatTime([ Year = 2000; Month = 1; Day = -1 ])", "error"},
        {"formatTime([ Year = 2000; Hours = 24 ])", "error"},
        {"formatTime([ Year = 2000; Minutes = 60 ])", "error"},
        {"formatTime([ Year = 2000; Seconds = 61 ])", "error"},
        {"formatTime([ Year = 2000; Seconds = -1 ])", "error"},
        {"formatTime([ Year = 9223372036854775807 ])", "error"},
        {"formatTime([ Year = 2000; Offset = 90000 ])", "error"},
    };
    EXPECT_ALL(rows);
    /* a real too large to be a field is not a number: the default, day 0 */
    expect("formatTime([ Year = 2000; Day = 1e300 ], \"%Y %d\")", "\"2000 00\"");
}

static void format_time__errors(void **state)
{
    (void)state;
    static const row rows[] = {
        {"formatTime(relTime(5))", "error"},
        {"formatTime(`1d`, \"%H\")", "error"},
        {"formatTime(undefined)", "error"},
        {"formatTime(undefined, \"%H\")", "error"},
        {"formatTime(error)", "error"},
        {"formatTime(\"1997-08-30T16:04:05Z\")", "error"},
        {"formatTime(true)", "error"},
        {"formatTime({ 1 })", "error"},
        {"formatTime(absTime(\"1997-08-30T16:04:05-0500\"), 5)", "error"},
        {"formatTime(0, undefined)", "error"},
        {"formatTime(0, error)", "error"},
        {"formatTime(0, { \"%H\" })", "error"},
        {"formatTime(0, \"%H\", 1)", "error"},
        /* widths past the limit are refused, not allocated */
        {"formatTime(0, \"%5000Y\")", "error"},
        {"formatTime(0, \"%99999999999999999999Y\")", "error"},
        {"formatTime(0, \"%1024Y\") == strcat(\"\", formatTime(0, \"%1024Y\"))", "true"},
    };
    EXPECT_ALL(rows);
    ads_value v = eval_in("[]", "formatTime(0, \"%1024Y\")");
    assert_int_equal(v.type, ADS_STRING);
    assert_int_equal(v.u.s.len, 1024);
    v = eval_in("[]", "formatTime(0, \"%1000c\")");
    assert_int_equal(v.u.s.len, 1000);
}

static void format_time__odd_formats_are_copied(void **state)
{
    (void)state;
    static const row rows[] = {
        {"formatTime(0, \"%\")", "\"%\""},
        {"formatTime(0, \"abc%\")", "\"abc%\""},
        {"formatTime(0, \"%-\")", "\"%-\""},
        {"formatTime(0, \"%E\")", "\"%E\""},
        {"formatTime(0, \"%10\")", "\"%10\""},
        {"formatTime(0, \"%!%Y\")", "\"%!1970\""},
        {"formatTime(0, \"% Y\")", "\"% Y\""},
        {"formatTime(0, \"%%Y\")", "\"%Y\""},
        {"formatTime(0, \"%___________________________________Y\")", "\"1970\""},
        {"formatTime(0, \"no conversions\")", "\"no conversions\""},
    };
    EXPECT_ALL(rows);
    /* a conversion the C library does not know comes out as written */
    ads_value v = eval_in("[]", "formatTime(0, \"[%Q]\")");
    assert_int_equal(v.type, ADS_STRING);
    assert_true(v.u.s.len >= 4 && v.u.s.p[0] == '[' && v.u.s.p[v.u.s.len - 1] == ']');

    /* NUL bytes in the format (only a record attribute can hold them) */
    ads_record_builder *b;
    assert_int_equal(ads_record_builder_new(&b, arena, NULL), 0);
    ads_value f = ads_string("a\0%Y\0%", 6);
    assert_int_equal(ads_record_builder_add_value(b, "f", 1, &f, NULL), 0);
    f = ads_string("%\0", 2);
    assert_int_equal(ads_record_builder_add_value(b, "g", 1, &f, NULL), 0);
    const ads_record *r = ads_record_builder_finish(b);
    assert_non_null(r);
    v = eval_rec(r, "formatTime(0, f)");
    assert_int_equal(v.type, ADS_STRING);
    assert_int_equal(v.u.s.len, 8);
    assert_memory_equal(v.u.s.p, "a\0" "1970\0%", 8);
    v = eval_rec(r, "formatTime(0, g)");
    assert_int_equal(v.u.s.len, 2);
    assert_memory_equal(v.u.s.p, "%\0", 2);
}

static void format_time__long_formats(void **state)
{
    (void)state;
    /* 20000 conversions: the output is built piece by piece, not in a fixed
     * buffer as HTCondor's 1024 bytes */
    size_t n = 20000;
    char *expr = malloc(2 * n + 32);
    assert_non_null(expr);
    strcpy(expr, "formatTime(0, \"");
    size_t len = strlen(expr);
    for (size_t i = 0; i < n; i++) {
        expr[len++] = '%';
        expr[len++] = 'Y';
    }
    strcpy(expr + len, "\")");
    ads_value v = eval_in("[]", expr);
    free(expr);
    assert_int_equal(v.type, ADS_STRING);
    assert_int_equal(v.u.s.len, 4 * n);
    assert_memory_equal(v.u.s.p, "19701970", 8);
}

static void interval__formats_days_hours_minutes_seconds(void **state)
{
    (void)state;
    static const row rows[] = {
        {"interval(1)", "\"1\""},
        {"interval(0)", "\"0\""},
        {"interval(59)", "\"59\""},
        {"interval(60)", "\"1:00\""},
        {"interval(67)", "\"1:07\""},
        {"interval(3600)", "\"1:00:00\""},
        {"interval(3600*3 + 60*2 + 1)", "\"3:02:01\""},
        {"interval(86399)", "\"23:59:59\""},
        {"interval(86400)", "\"1+00:00:00\""},
        {"interval(3600*24*4 + 3600*3 + 60*2 + 1)", "\"4+03:02:01\""},
        {"interval(1472523)", "\"17+01:02:03\""},
        /* negative: the sign goes on the leading part */
        {"interval(-1)", "\"-1\""},
        {"interval(-61)", "\"-1:01\""},
        {"interval(-3601)", "\"-1:00:01\""},
        {"interval(-3661)", "\"-1:01:01\""},
        {"interval(-90061)", "\"-1+01:01:01\""},
        {"interval(-86400)", "\"-1+00:00:00\""},
        /* other types convert as int() converts them */
        {"interval(59.9)", "\"59\""},
        {"interval(-59.9)", "\"-59\""},
        {"interval(true)", "\"1\""},
        {"interval(false)", "\"0\""},
        {"interval(\"3600\")", "\"1:00:00\""},
        {"interval(\" 90.5xyz\")", "\"1:30\""},
        {"interval(`1d2h3m4.5s`)", "\"1+02:03:04\""},
        {"interval(`-1m30s`)", "\"-1:30\""},
        {"interval(`1970-01-02T00:00:01Z`)", "\"1+00:00:01\""},
        {"interval(9223372036854775807)", "\"106751991167300+15:30:07\""},
        {"interval(-9223372036854775807 - 1)", "\"-106751991167300+15:30:08\""},
        {"interval(1e18)", "\"11574074074074+01:46:40\""},
        {"interval(1e19)", "error"},
        {"interval(-1e19)", "error"},
        {"interval(real(\"INF\"))", "error"},
        {"interval(real(\"NaN\"))", "error"},
        {"interval(relTime(1e300))", "error"},
        {"interval(undefined)", "error"},
        {"interval(error)", "error"},
        {"interval(\"x\")", "error"},
        {"interval(\"\")", "error"},
        {"interval({ 1 })", "error"},
        {"interval([ a = 1 ])", "error"},
        {"interval()", "error"},
        {"interval(1, 2)", "error"},
    };
    EXPECT_ALL(rows);
}

static void time_functions__compose(void **state)
{
    (void)state;
    static const row rows[] = {
        {"getYear(absTime(time()))", "getYear(now())"},
        {"formatTime(now(), \"%Y\") == string(getYear(now()))", "true"},
        {"splitTime(now()).Year == getYear(now())", "true"},
        {"interval(int(`2011-12-13T13:02:03Z` - `2011-12-13T10:00:00Z`))", "\"3:02:03\""},
        {"getHours(`2011-12-13T13:02:03Z` - `2011-12-13T10:00:00Z`)", "3"},
        {"formatTime(`2011-12-13T12:00:00Z` + `1d`, \"%F\")", "\"2011-12-14\""},
        {"isAbsTime(now()) && isRelTime(timeZoneOffset()) && isRelTime(dayTime())", "true"},
        {"isClassAd(splitTime(now()))", "true"},
        {"isString(formatTime())", "true"},
    };
    EXPECT_ALL(rows);
}

int main(void)
{
    setenv("TZ", "UTC", 1);
    tzset();
    setlocale(LC_ALL, "C");
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(time_text__abs_parse_and_format_round_trip),
        T(time_text__abs_many_instants_round_trip),
        T(time_text__abs_invalid_texts_refused),
        T(time_text__abs_without_zone_takes_local_zone),
        T(time_text__abs_out_of_range_instants_write_without_crash),
        T(time_text__rel_parse_forms),
        T(time_text__rel_invalid_texts_refused),
        T(time_text__rel_format_both_styles),
        T(time_text__rel_many_values_round_trip),
        T(time_text__literals_unparse_and_read_back),
        T(time__is_integer_seconds_now),
        T(now__and_current_time_are_abstime_now_in_local_zone),
        T(time_zone_offset__is_local_offset_as_reltime),
        T(day_time__is_reltime_since_local_midnight),
        T(get__fields_of_abstime),
        T(get__abstime_fields_are_in_the_local_zone),
        T(get__fields_of_reltime),
        T(get__errors_for_other_arguments),
        T(split_time__abstime_record),
        T(split_time__reltime_record),
        T(format_time__abstime_with_format),
        T(format_time__numbers_are_epoch_seconds_in_local_zone),
        T(format_time__record_fields),
        T(format_time__errors),
        T(format_time__odd_formats_are_copied),
        T(format_time__long_formats),
        T(interval__formats_days_hours_minutes_seconds),
        T(time_functions__compose),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
