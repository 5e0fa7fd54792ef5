/*
 * tests/query/test_timeline.c: timeline queries (shared/spec/query.md
 * section 3) on small histories built by hand, with every expected value
 * worked out in the comments: raw rows over a range, avg@ / min@ / max@ /
 * sum@ per interval with records that appear, change, disappear and are
 * deleted mid-interval, backfilled rows, @duration / @last / @anytime / @now
 * (rows dated in the future included), intervals clipped to the range and
 * dated at their clipped start, inner aggregates over values that are not
 * numbers, ORDER BY a label, LIMIT 0, and the errors of the temporal syntax
 * with their places.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "query/query.h"
#include "tests/engine/helpers.h"

/* 2024-01-01T00:00:00Z: the ranges below start here (a multiple of 1h and 1d) */
#define T 1704067200.0

static tstore ts;
static ads_db *db;
static ads_query *q;

static int setup(void **state)
{
    (void)state;
    db = ts_open(&ts, T + 7200); /* "now" is T + 2h */
    ts_declare(db, "Machine", "Name", NULL);
    assert_int_equal(ads_query_new(&q, db, NULL), 0);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    ads_query_free(q);
    assert_int_equal(ts_verify(db), 0);
    ts_close(&ts);
    return 0;
}

/* A sink collecting rows as `[ ... ]` lines. */
typedef struct lines {
    ads_buf b;
} lines;

static int l_row(void *ctx, const ads_record *row, ads_error *err)
{
    (void)err;
    lines *l = ctx;
    ads_record_unparse(&l->b, row);
    ads_buf_addc(&l->b, '\n');
    return 0;
}

static void exec_ok(const char *text)
{
    ads_error err;
    if (ads_query_exec(q, text, strlen(text), NULL, NULL, NULL, &err))
        fail_msg("%s\n  -> %s", text, err.message);
}

static void select_is(const char *text, const char *want)
{
    lines l = {ADS_BUF_INIT};
    ads_sink sink = {NULL, l_row, NULL, &l};
    ads_error err;
    if (ads_query_exec(q, text, strlen(text), &sink, NULL, NULL, &err))
        fail_msg("%s\n  -> %s", text, err.message);
    const char *got = ads_buf_cstr(&l.b);
    if (strcmp(got, want) != 0)
        fail_msg("%s\ngot:\n%swant:\n%s", text, got, want);
    ads_buf_free(&l.b);
}

static void select_fails(const char *text, int code, const char *message)
{
    ads_error err;
    int rc = ads_query_exec(q, text, strlen(text), NULL, NULL, NULL, &err);
    if (rc != code || strcmp(err.message, message) != 0)
        fail_msg("%s\ngot %d '%s'\nwant %d '%s'", text, rc, rc ? err.message : "", code, message);
}

/* The same, and the error's line and column. */
static void select_fails_at(const char *text, int code, int line, int column, const char *message)
{
    ads_error err;
    int rc = ads_query_exec(q, text, strlen(text), NULL, NULL, NULL, &err);
    if (rc != code || strcmp(err.message, message) != 0 || err.line != line || err.column != column)
        fail_msg("%s\ngot %d %d:%d '%s'\nwant %d %d:%d '%s'", text, rc, rc ? err.line : 0,
                 rc ? err.column : 0, rc ? err.message : "", code, line, column, message);
}

/*
 * The history used by most tests (minutes from T; Role compute unless said):
 *   a  linux    Memory 100 from -10, 300 from +30, deleted at +90
 *   b  linux    Memory 200 from +15
 *   c  linux    Role login, Memory 50 from 0 (never matches the WHERE)
 *   d  windows  Memory 80 from +30, deleted at +45
 */
static void build_history(void)
{
    exec_ok("STORE [AdType = \"Machine\"; Name = \"a\"; Memory = 100; Role = \"compute\"; "
            "Platform = \"linux\"; _Timestamp = `2023-12-31T23:50:00Z`]");
    exec_ok("STORE [AdType = \"Machine\"; Name = \"b\"; Memory = 200; Role = \"compute\"; "
            "Platform = \"linux\"; _Timestamp = `2024-01-01T00:15:00Z`]");
    exec_ok("STORE [AdType = \"Machine\"; Name = \"c\"; Memory = 50; Role = \"login\"; "
            "Platform = \"linux\"; _Timestamp = `2024-01-01T00:00:00Z`]");
    exec_ok("STORE [AdType = \"Machine\"; Name = \"a\"; Memory = 300; "
            "_Timestamp = `2024-01-01T00:30:00Z`]");
    exec_ok("STORE [AdType = \"Machine\"; Name = \"d\"; Memory = 80; Role = \"compute\"; "
            "Platform = \"windows\"; _Timestamp = `2024-01-01T00:30:00Z`]");
    exec_ok("STORE [AdType = \"Machine\"; Name = \"d\"; _Deleted = true; "
            "_Timestamp = `2024-01-01T00:45:00Z`]");
    exec_ok("STORE [AdType = \"Machine\"; Name = \"a\"; _Deleted = true; "
            "_Timestamp = `2024-01-01T01:30:00Z`]");
}

#define RANGE "@timerange(`2024-01-01T00:00:00Z`, `2024-01-01T02:00:00Z`)"

static void aggregate__avg_min_max_sum_per_interval(void **state)
{
    (void)state;
    build_history();
    /*
     * linux, 00:00-01:00: f = sum(Memory) of a and b (c is not compute):
     *   [0,15) a=100 -> 100; [15,30) a+b -> 300; [30,60) 300+200 -> 500
     *   avg@ = (100*15 + 300*15 + 500*30) / 60 = 21000 / 60 = 350
     *   min@ = 100, max@ = 500
     *   sum@ = samples dated in the hour: b@15 (200) + a@30 (300) = 500
     *          (a's row at -10 is dated before the range: not a sample)
     * linux, 01:00-02:00: [60,90) 500; [90,120) a deleted -> b alone, 200
     *   avg@ = (500*30 + 200*30) / 60 = 350; min@ 200; max@ 500
     *   sum@ = 0 (the deletion at 90 is not a sample)
     * windows, 00:00-01:00: d alone from 30 to 45: f = 80 while defined
     *   avg@ = 80 (over the 15 minutes the group has a contributing record)
     *   min@ = max@ = 80; sum@ = d@30 = 80
     * windows, 01:00-02:00: no contributing record: avg@, min@, max@
     *   undefined; sum@ 0
     */
    select_is("SELECT avg@(sum(Memory)) AS Avg, min@(sum(Memory)) AS Min, "
              "max@(sum(Memory)) AS Max, sum@(sum(Memory)) AS Sum, Platform FROM Machine "
              "WHERE Role == \"compute\" && " RANGE " GROUP BY Platform, @intervals(`1h`)",
              "[ _Timestamp = `2024-01-01T00:00:00Z`; Avg = 350.0; Min = 100.0; Max = 500.0; "
              "Sum = 500.0; Platform = \"linux\" ]\n"
              "[ _Timestamp = `2024-01-01T01:00:00Z`; Avg = 350.0; Min = 200.0; Max = 500.0; "
              "Sum = 0.0; Platform = \"linux\" ]\n"
              "[ _Timestamp = `2024-01-01T00:00:00Z`; Avg = 80.0; Min = 80.0; Max = 80.0; "
              "Sum = 80.0; Platform = \"windows\" ]\n"
              "[ _Timestamp = `2024-01-01T01:00:00Z`; Avg = undefined; Min = undefined; "
              "Max = undefined; Sum = 0.0; Platform = \"windows\" ]\n");
}

static void aggregate__count_and_avg_inner_aggregates(void **state)
{
    (void)state;
    build_history();
    /*
     * linux, count(*) of compute records: [0,15) 1, [15,90) 2, [90,120) 1
     *   hour 1: (1*15 + 2*45) / 60 = 1.75; hour 2: (2*30 + 1*30) / 60 = 1.5
     * linux, avg(Memory): [0,15) 100, [15,30) 150, [30,90) 250, [90,120) 200
     *   hour 1: (100*15 + 150*15 + 250*30) / 60 = 11250 / 60 = 187.5
     *   hour 2: (250*30 + 200*30) / 60 = 225
     * max@(count(*)): hour 1 2, hour 2 2.
     */
    select_is("SELECT avg@(count(*)) AS N, avg@(avg(Memory)) AS M, max@(count(*)) AS Peak "
              "FROM Machine WHERE Platform == \"linux\" && Role == \"compute\" && " RANGE
              " GROUP BY @intervals(`1h`)",
              "[ _Timestamp = `2024-01-01T00:00:00Z`; N = 1.75; M = 187.5; Peak = 2.0 ]\n"
              "[ _Timestamp = `2024-01-01T01:00:00Z`; N = 1.5; M = 225.0; Peak = 2.0 ]\n");
}

static void aggregate__intervals_align_to_the_epoch_and_clip(void **state)
{
    (void)state;
    build_history();
    /*
     * Range 00:40 .. 01:10 with 30-minute intervals: intervals 00:30, 01:00
     * (aligned), clipped to the range, so the first is [00:40, 01:00) and is
     * dated 00:40 (the spec's _Timestamp = a of the clipped interval).
     * linux f: 500 throughout (a 300 + b 200). windows: d deleted at 00:45,
     * in effect (80) from 00:40 to 00:45.
     */
    select_is("SELECT avg@(sum(Memory)) AS Avg, Platform FROM Machine WHERE "
              "Role == \"compute\" && @timerange(`2024-01-01T00:40:00Z`, `2024-01-01T01:10:00Z`) "
              "GROUP BY Platform, @intervals(`30m`)",
              "[ _Timestamp = `2024-01-01T00:40:00Z`; Avg = 500.0; Platform = \"linux\" ]\n"
              "[ _Timestamp = `2024-01-01T01:00:00Z`; Avg = 500.0; Platform = \"linux\" ]\n"
              "[ _Timestamp = `2024-01-01T00:40:00Z`; Avg = 80.0; Platform = \"windows\" ]\n"
              "[ _Timestamp = `2024-01-01T01:00:00Z`; Avg = undefined; Platform = \"windows\" ]\n");
    /* @duration(`1d`) ending at now (02:00 + 17m, between hours): 25 intervals,
     * the first [01:17 yesterday, 02:00) dated at the range's start, the
     * last [02:00, 02:17) at its aligned start */
    ts_time(&ts, T + 7200 + 17 * 60);
    lines l = {ADS_BUF_INIT};
    ads_sink sink = {NULL, l_row, NULL, &l};
    const char *text = "SELECT avg@(count(*)) AS N FROM Machine WHERE @duration(`1d`) "
                       "GROUP BY @intervals(`1h`)";
    assert_int_equal(ads_query_exec(q, text, strlen(text), &sink, NULL, NULL, NULL), 0);
    const char *got = ads_buf_cstr(&l.b);
    size_t n = 0;
    for (const char *p = got; (p = strchr(p, '\n')); p++)
        n++;
    assert_int_equal(n, 25);
    assert_memory_equal(got, "[ _Timestamp = `2023-12-31T02:17:00Z`;", 38);
    assert_non_null(strstr(got, "[ _Timestamp = `2024-01-01T02:00:00Z`;"));
    assert_null(strstr(got, "`2023-12-31T02:00:00Z`"));
    ads_buf_free(&l.b);
}

static void aggregate__backfilled_rows_count_in_the_past(void **state)
{
    (void)state;
    build_history();
    /* a row for b dated 00:05, stored after b's row at 00:15: it goes into the
     * past. linux hour 1 becomes: [0,5) a 100; [5,15) a + b(1000) = 1100;
     * [15,30) 300; [30,60) 500 -> (100*5 + 1100*10 + 300*15 + 500*30) / 60
     * = (500 + 11000 + 4500 + 15000) / 60 = 31000 / 60 */
    exec_ok("STORE [AdType = \"Machine\"; Name = \"b\"; Memory = 1000; Role = \"compute\"; "
            "Platform = \"linux\"; _Timestamp = `2024-01-01T00:05:00Z`]");
    char want[512];
    snprintf(want, sizeof want,
             "[ _Timestamp = `2024-01-01T00:00:00Z`; Avg = %.17g; Platform = \"linux\" ]\n",
             31000.0 / 60);
    lines l = {ADS_BUF_INIT};
    ads_sink sink = {NULL, l_row, NULL, &l};
    const char *text = "SELECT avg@(sum(Memory)) AS Avg, Platform FROM Machine WHERE "
                       "Platform == \"linux\" && Role == \"compute\" && "
                       "@timerange(`2024-01-01T00:00:00Z`, `2024-01-01T01:00:00Z`) "
                       "GROUP BY Platform, @intervals(`1h`)";
    assert_int_equal(ads_query_exec(q, text, strlen(text), &sink, NULL, NULL, NULL), 0);
    /* compare the value, not its spelling */
    const char *got = ads_buf_cstr(&l.b);
    const char *avg = strstr(got, "Avg = ");
    assert_non_null(avg);
    assert_true(strtod(avg + 6, NULL) > 516.66 && strtod(avg + 6, NULL) < 516.67);
    ads_buf_free(&l.b);
    /* the latest row of b is still its 00:15 row */
    char *m = ts_attr(db, "Machine", "{ \"b\" }", "Memory");
    assert_string_equal(m, "200");
    free(m);
}

static void raw__rows_in_effect_over_the_range(void **state)
{
    (void)state;
    build_history();
    /* 00:20 .. 00:40: rows in effect at 00:20 (a@-10, b@15, c@0), then rows
     * dated in the range (a@30, d@30), in time order; deleted rows hidden */
    select_is("SELECT Name, Memory FROM Machine WHERE "
              "@timerange(`2024-01-01T00:20:00Z`, `2024-01-01T00:40:00Z`)",
              "[ Name = \"a\"; Memory = 100 ]\n"
              "[ Name = \"c\"; Memory = 50 ]\n"
              "[ Name = \"b\"; Memory = 200 ]\n"
              "[ Name = \"a\"; Memory = 300 ]\n"
              "[ Name = \"d\"; Memory = 80 ]\n");
    /* mentioning _Deleted shows the deletions too */
    select_is("SELECT Name, _Deleted FROM Machine WHERE _Deleted && "
              "@timerange(`2024-01-01T00:00:00Z`, `2024-01-01T02:00:00Z`)",
              "[ Name = \"d\"; _Deleted = true ]\n"
              "[ Name = \"a\"; _Deleted = true ]\n");
    /* ORDER BY and LIMIT apply */
    select_is("SELECT Name, Memory FROM Machine WHERE Memory > 90 && "
              "@timerange(`2024-01-01T00:00:00Z`, `2024-01-01T02:00:00Z`) ORDER BY Memory DESC "
              "LIMIT 2",
              "[ Name = \"a\"; Memory = 300 ]\n"
              "[ Name = \"b\"; Memory = 200 ]\n");
    /* ordinary aggregates over the rows of the range */
    select_is("SELECT count(*) AS Rows, max(Memory) AS Most FROM Machine WHERE "
              "@timerange(`2024-01-01T00:00:00Z`, `2024-01-01T02:00:00Z`)",
              "[ Rows = 5; Most = 300 ]\n");
}

static void filters__duration_last_anytime_now(void **state)
{
    (void)state;
    build_history();
    /* now is 02:00: @duration(`2h`) and @last(`2h`) are the range above */
    const char *want = "[ _Timestamp = `2024-01-01T00:00:00Z`; Avg = 350.0 ]\n"
                       "[ _Timestamp = `2024-01-01T01:00:00Z`; Avg = 350.0 ]\n";
    select_is("SELECT avg@(sum(Memory)) AS Avg FROM Machine WHERE Platform == \"linux\" && "
              "Role == \"compute\" && @duration(`2h`) GROUP BY @intervals(`1h`)",
              want);
    select_is("SELECT avg@(sum(Memory)) AS Avg FROM Machine WHERE Platform == \"linux\" && "
              "Role == \"compute\" && @last(`2h`) GROUP BY @intervals(`1h`)",
              want);
    /* @anytime: from the first row (23:50) to now; the first interval is hour
     * 23:00 clipped to [23:50, 00:00), so dated 23:50.
     * linux f: [23:50,00:00) 100 -> avg@ over its defined 10 min = 100 */
    select_is("SELECT avg@(sum(Memory)) AS Avg FROM Machine WHERE Platform == \"linux\" && "
              "Role == \"compute\" && @anytime() GROUP BY @intervals(`1h`)",
              "[ _Timestamp = `2023-12-31T23:50:00Z`; Avg = 100.0 ]\n"
              "[ _Timestamp = `2024-01-01T00:00:00Z`; Avg = 350.0 ]\n"
              "[ _Timestamp = `2024-01-01T01:00:00Z`; Avg = 350.0 ]\n");
    /* @now() is the default: latest rows */
    select_is("SELECT Name, Memory FROM Machine WHERE @now() && Role == \"compute\"",
              "[ Name = \"b\"; Memory = 200 ]\n");
}

static void aggregate__inner_aggregates_of_non_numbers_are_error(void **state)
{
    (void)state;
    build_history();
    /* as the ordinary aggregates: sum of strings is error (only b is left) */
    select_is("SELECT sum(Platform) AS S, min(Name) AS M, count(Platform) AS N FROM Machine "
              "WHERE Role == \"compute\"",
              "[ S = error; M = \"b\"; N = 1 ]\n");
    /* over time, f is error wherever a contributing record has a string, so
     * every temporal aggregate of the interval is; count is a number. sum@
     * of hour 01:00 has no samples (a deletion is none): 0.0.
     * avg@(count(Platform)): (1 x 15 + 2 x 45) / 60, then (2 x 30 + 1 x 30) / 60 */
    select_is("SELECT avg@(sum(Platform)) AS A, min@(sum(Platform)) AS Lo, max@(max(Name)) AS Hi, "
              "sum@(sum(Platform)) AS S, avg@(count(Platform)) AS N FROM Machine WHERE "
              "Role == \"compute\" && Platform == \"linux\" && " RANGE " GROUP BY @intervals(`1h`)",
              "[ _Timestamp = `2024-01-01T00:00:00Z`; A = error; Lo = error; Hi = error; "
              "S = error; N = 1.75 ]\n"
              "[ _Timestamp = `2024-01-01T01:00:00Z`; A = error; Lo = error; Hi = error; "
              "S = 0.0; N = 1.5 ]\n");
    /* only the intervals holding such an instant: b's Memory is a string from
     * 01:45, so hour 00:00 keeps its value */
    exec_ok("STORE [AdType = \"Machine\"; Name = \"b\"; Memory = \"lots\"; "
            "_Timestamp = `2024-01-01T01:45:00Z`]");
    select_is("SELECT avg@(sum(Memory)) AS A, max@(avg(Memory)) AS M, sum@(sum(Memory)) AS S "
              "FROM Machine WHERE Role == \"compute\" && Platform == \"linux\" && " RANGE
              " GROUP BY @intervals(`1h`)",
              "[ _Timestamp = `2024-01-01T00:00:00Z`; A = 350.0; M = 250.0; S = 500.0 ]\n"
              "[ _Timestamp = `2024-01-01T01:00:00Z`; A = error; M = error; S = error ]\n");
}

static void aggregate__order_by_a_label(void **state)
{
    (void)state;
    build_history();
    /* linux 350, 350; windows 80, undefined (last) */
    select_is(
        "SELECT Platform, avg@(sum(Memory)) AS Avg FROM Machine WHERE Role == \"compute\" && " RANGE
        " GROUP BY Platform, @intervals(`1h`) ORDER BY avg DESC LIMIT 3",
        "[ _Timestamp = `2024-01-01T00:00:00Z`; Platform = \"linux\"; Avg = 350.0 ]\n"
        "[ _Timestamp = `2024-01-01T01:00:00Z`; Platform = \"linux\"; Avg = 350.0 ]\n"
        "[ _Timestamp = `2024-01-01T00:00:00Z`; Platform = \"windows\"; Avg = 80.0 ]\n");
    select_is("SELECT avg@(sum(Memory)) AS Avg, Platform AS P FROM Machine WHERE "
              "Role == \"compute\" && " RANGE " GROUP BY Platform, @intervals(`1h`) ORDER BY P "
              "DESC, _Timestamp DESC LIMIT 2",
              "[ _Timestamp = `2024-01-01T01:00:00Z`; Avg = undefined; P = \"windows\" ]\n"
              "[ _Timestamp = `2024-01-01T00:00:00Z`; Avg = 80.0; P = \"windows\" ]\n");
    /* rows over time */
    select_is("SELECT Name, Memory * 2 AS M2 FROM Machine WHERE " RANGE " ORDER BY M2 DESC LIMIT 2",
              "[ Name = \"a\"; M2 = 600 ]\n[ Name = \"b\"; M2 = 400 ]\n");
    select_is("SELECT Role AS R, count(*) AS N FROM Machine WHERE " RANGE
              " GROUP BY Role ORDER BY N DESC, R",
              "[ R = \"compute\"; N = 4 ]\n[ R = \"login\"; N = 1 ]\n");
}

static void aggregate__limit_0_reads_no_rows(void **state)
{
    (void)state;
    build_history();
    exec_ok("STORE [AdType = \"Machine\"; Name = \"old\"; Memory = 1; "
            "_Timestamp = `2020-01-01T00:00:00Z`]");
    /* @anytime from 2020 to now in seconds: the sweep finds it too many */
    const char *text = "SELECT avg@(count(*)) AS N FROM Machine WHERE @anytime() GROUP BY "
                       "@intervals(`1s`)";
    select_fails(text, ADS_ELIMIT,
                 "126237600 intervals: choose a longer @intervals or a shorter range");
    /* with LIMIT 0 there is nothing to return: no sweep, no rows, no error */
    char limited[256];
    snprintf(limited, sizeof limited, "%s LIMIT 0", text);
    select_is(limited, "");
    snprintf(limited, sizeof limited, "%s ORDER BY N LIMIT 0", text);
    select_is(limited, "");
}

static void raw__group_by_deleted_shows_deleted_rows(void **state)
{
    (void)state;
    build_history();
    /* seven rows: a 100, 300, deleted; b; c; d 80, deleted */
    const char *want = "[ _Deleted = false; n = 5 ]\n[ _Deleted = true; n = 2 ]\n";
    select_is("SELECT _Deleted, count(*) AS n FROM Machine WHERE __Latest is __Latest GROUP BY "
              "_Deleted",
              want);
    select_is("SELECT _Deleted, count(*) AS n FROM Machine WHERE @anytime() GROUP BY _Deleted",
              want);
    select_is("SELECT count(*) AS n FROM Machine WHERE @anytime() GROUP BY _Deleted",
              "[ n = 5 ]\n[ n = 2 ]\n");
}

static void filters__anytime_covers_rows_dated_in_the_future(void **state)
{
    (void)state;
    build_history();
    /* now is 02:00; e is dated 2030 */
    exec_ok("STORE [AdType = \"Machine\"; Name = \"e\"; Memory = 7; Role = \"compute\"; "
            "Platform = \"mac\"; _Timestamp = `2030-01-01T06:00:00Z`]");
    select_is("SELECT Name, Memory FROM Machine WHERE Name == \"e\"",
              "[ Name = \"e\"; Memory = 7 ]\n");
    select_is("SELECT Name, Memory FROM Machine WHERE Name == \"e\" && @anytime()",
              "[ Name = \"e\"; Memory = 7 ]\n");
    select_is("SELECT count(*) AS n FROM Machine WHERE @anytime()", "[ n = 6 ]\n");
    /* an aggregation runs to the end of the interval holding the last row */
    select_is("SELECT avg@(sum(Memory)) AS Avg, sum@(count(*)) AS N FROM Machine WHERE "
              "Platform == \"mac\" && @anytime() GROUP BY @intervals(`1d`) ORDER BY _Timestamp "
              "DESC LIMIT 2",
              "[ _Timestamp = `2030-01-01T00:00:00Z`; Avg = 7.0; N = 1.0 ]\n"
              "[ _Timestamp = `2029-12-31T00:00:00Z`; Avg = undefined; N = 0.0 ]\n");
    /* ... and from the first stored row (23:50, any record) */
    select_is("SELECT avg@(sum(Memory)) AS Avg FROM Machine WHERE Platform == \"mac\" && "
              "@anytime() GROUP BY @intervals(`1d`) ORDER BY _Timestamp LIMIT 1",
              "[ _Timestamp = `2023-12-31T23:50:00Z`; Avg = undefined ]\n");
}

static void seed__worked_example_runs(void **state)
{
    (void)state;
    build_history();
    /* the seed's example over the last day (now 02:00): 24 intervals per
     * platform, from 2023-12-31T02:00:00Z; the last two are the hours above.
     * The GROUP BY value comes out though the select list does not name it. */
    lines l = {ADS_BUF_INIT};
    ads_sink sink = {NULL, l_row, NULL, &l};
    const char *text = "SELECT avg@(sum(Memory)) FROM Machine WHERE Role == \"compute\" && "
                       "@duration(`1d`) GROUP BY Platform, @intervals(`1h`)";
    ads_exec_info info;
    ads_error err;
    if (ads_query_exec(q, text, strlen(text), &sink, NULL, &info, &err))
        fail_msg("%s", err.message);
    assert_int_equal(info.rows, 48);
    assert_non_null(strstr(ads_buf_cstr(&l.b),
                           "[ _Timestamp = `2024-01-01T01:00:00Z`; Platform = \"linux\"; "
                           "'avg@(sum(Memory))' = 350.0 ]\n"));
    assert_non_null(strstr(ads_buf_cstr(&l.b),
                           "[ _Timestamp = `2023-12-31T23:00:00Z`; Platform = \"linux\"; "
                           "'avg@(sum(Memory))' = 100.0 ]\n"));
    ads_buf_free(&l.b);
}

static void errors__temporal_syntax(void **state)
{
    (void)state;
    select_fails("SELECT avg@(sum(Memory)) FROM Machine GROUP BY @intervals(`1h`)", ADS_EINVAL,
                 "GROUP BY @intervals needs a temporal filter in WHERE (@timerange, @duration, "
                 "@last or @anytime)");
    select_fails("SELECT Name FROM Machine WHERE Memory > 1 || @duration(`1h`)", ADS_EINVAL,
                 "a temporal filter must be joined to the rest of WHERE with && at the top level");
    select_fails("SELECT Name FROM Machine WHERE @duration(`1h`) && @anytime()", ADS_EINVAL,
                 "a statement takes one temporal filter");
    select_fails("SELECT Name FROM Machine WHERE @timerange(`2024-01-01T00:00:00Z`)", ADS_EINVAL,
                 "@timerange takes 2 arguments, not 1");
    select_fails("SELECT Name FROM Machine WHERE @duration(\"1h\")", ADS_EINVAL,
                 "@duration needs a positive RelTime (like `1d`), not string");
    select_fails("SELECT Name FROM Machine WHERE @timerange(`2024-01-02T00:00:00Z`, "
                 "`2024-01-01T00:00:00Z`)",
                 ADS_EINVAL, "@timerange's start must be before its end");
    select_fails("SELECT sum(Memory) FROM Machine WHERE @duration(`1h`) GROUP BY @intervals(`1h`)",
                 ADS_EINVAL,
                 "in a timeline aggregation, sum needs a temporal aggregate around it: avg@, "
                 "min@, max@ or sum@ (for example avg@(sum(...)))");
    select_fails("SELECT avg@(Memory) FROM Machine WHERE @duration(`1h`) GROUP BY @intervals(`1h`)",
                 ADS_EINVAL,
                 "avg@ takes one aggregate: count(*), count(x), sum(x), avg(x), min(x) or max(x)");
    select_fails("SELECT avg@(sum(Memory)), Name FROM Machine WHERE @duration(`1h`) GROUP BY "
                 "@intervals(`1h`)",
                 ADS_EINVAL,
                 "Name in a timeline aggregation is neither inside a temporal aggregate nor a "
                 "GROUP BY expression");
    select_fails("SELECT avg@(sum(Memory)) FROM Machine WHERE @duration(`1h`) GROUP BY "
                 "@intervals(0)",
                 ADS_EINVAL, "@intervals needs a positive RelTime (like `1h`), not integer");
    select_fails("SELECT avg@(sum(Memory)) FROM Machine WHERE @duration(`1d`)", ADS_EINVAL,
                 "avg@, min@, max@ and sum@ need GROUP BY ..., @intervals(D)");
    select_fails("DELETE FROM Machine WHERE @duration(`1d`)", ADS_EINVAL,
                 "a temporal filter (@timerange, @duration, ...) belongs in SELECT only");
    select_fails("SELECT avg@(sum(Memory)) FROM Machine WHERE @duration(`1000d`) GROUP BY "
                 "@intervals(`1s`)",
                 ADS_ELIMIT, "86400000 intervals: choose a longer @intervals or a shorter range");
    /* with their place */
    select_fails_at("SELECT * FROM Nope WHERE @anytime()", ADS_ENOTFOUND, 1, 15,
                    "no type named Nope (store a Type record first)");
    select_fails_at("SELECT avg@(sum(Memory)) FROM Nope\nWHERE @anytime() GROUP BY "
                    "@intervals(`1h`)",
                    ADS_ENOTFOUND, 1, 31, "no type named Nope (store a Type record first)");
    select_fails_at("SELECT Name FROM Machine WHERE Memory > 1 || @duration(`1h`)", ADS_EINVAL, 1,
                    46,
                    "a temporal filter must be joined to the rest of WHERE with && at the top "
                    "level");
    select_fails_at("SELECT Name FROM Machine WHERE @foo(1)", ADS_EINVAL, 1, 32,
                    "unknown temporal filter @foo: expected @timerange(T1, T2), @duration(D), "
                    "@last(D), @anytime() or @now()");
    select_fails_at("SELECT Name FROM Machine WHERE Memory > 1 &&\n  (@Anytimes() || Memory < 0)",
                    ADS_EINVAL, 2, 4,
                    "unknown temporal filter @Anytimes: expected @timerange(T1, T2), "
                    "@duration(D), @last(D), @anytime() or @now()");
    select_fails_at("UPDATE Machine SET x = 1 WHERE @foo()", ADS_EINVAL, 1, 32,
                    "unknown temporal filter @foo: expected @timerange(T1, T2), @duration(D), "
                    "@last(D), @anytime() or @now()");
    select_fails_at("SELECT Name FROM Machine WHERE avg@(sum(Memory)) > 1", ADS_EINVAL, 1, 32,
                    "avg@ is a temporal aggregate: it belongs in the select list of a timeline "
                    "aggregation, not in WHERE");
    select_fails_at("SELECT Name FROM Machine WHERE @anytime() && @intervals(`1h`)", ADS_EINVAL, 1,
                    46,
                    "@intervals belongs in GROUP BY (GROUP BY ..., @intervals(D)), not in WHERE");
    select_fails_at("SELECT Name FROM Machine WHERE @anytime() && @now()", ADS_EINVAL, 1, 46,
                    "a statement takes one temporal filter");
}

/* Rows of one record at one _Timestamp: the later replaces the earlier,
 * which was never in effect. x stored as 1, then 5, then 7 at 00:10 (three
 * statements, so three system times); e is stored, then deleted at 00:20. */
static void instant__a_later_row_at_the_same_timestamp_replaces_the_earlier(void **state)
{
    (void)state;
    exec_ok("STORE [AdType = \"Machine\"; Name = \"x\"; Memory = 1; "
            "_Timestamp = `2024-01-01T00:10:00Z`]");
    exec_ok("STORE [AdType = \"Machine\"; Name = \"x\"; Memory = 5; "
            "_Timestamp = `2024-01-01T00:10:00Z`]");
    exec_ok("STORE [AdType = \"Machine\"; Name = \"x\"; Memory = 7; "
            "_Timestamp = `2024-01-01T00:10:00Z`], "
            "[AdType = \"Machine\"; Name = \"e\"; Memory = 40; "
            "_Timestamp = `2024-01-01T00:20:00Z`]");
    exec_ok("STORE [AdType = \"Machine\"; Name = \"e\"; _Deleted = true; "
            "_Timestamp = `2024-01-01T00:20:00Z`]");
    /* one sample of x (7) at 00:10; e never counts. Over [0, 1h): x is 7
     * for 50 minutes -> avg@ 7 * 50 / 50 = 7 */
    select_is("SELECT sum@(count(*)) AS N, sum@(sum(Memory)) AS S, avg@(sum(Memory)) AS A, "
              "max@(sum(Memory)) AS M FROM Machine WHERE "
              "@timerange(`2024-01-01T00:00:00Z`, `2024-01-01T01:00:00Z`) "
              "GROUP BY @intervals(`1h`)",
              "[ _Timestamp = `2024-01-01T00:00:00Z`; N = 1.0; S = 7.0; A = 7.0; M = 7.0 ]\n");
    /* the same from @anytime, where the first interval starts at the rows */
    select_is("SELECT sum@(count(*)) AS N, sum@(sum(Memory)) AS S FROM Machine WHERE @anytime() "
              "GROUP BY @intervals(`1d`)",
              "[ _Timestamp = `2024-01-01T00:10:00Z`; N = 1.0; S = 7.0 ]\n");
    /* raw rows: only the rows that were in effect */
    select_is("SELECT Name, Memory, _Deleted FROM Machine WHERE @anytime() ORDER BY Name",
              "[ Name = \"e\"; Memory = 40; _Deleted = true ]\n"
              "[ Name = \"x\"; Memory = 7; _Deleted = false ]\n");
}

static void errors__order_and_group_terms_over_the_limit(void **state)
{
    (void)state;
    ads_buf b = ADS_BUF_INIT;
    ads_buf_adds(&b, "SELECT avg@(sum(Memory)) FROM Machine WHERE @anytime() "
                     "GROUP BY @intervals(`1h`) ORDER BY ");
    for (int i = 0; i < 65; i++)
        ads_buf_adds(&b, i ? ", _Timestamp" : "_Timestamp");
    /* column of the 65th term: after the prefix and 64 terms */
    const char *text = ads_buf_cstr(&b);
    const char *at = text;
    for (int i = 0; i < 64; i++)
        at = strstr(at, "_Timestamp") + 1;
    at = strstr(at, "_Timestamp");
    select_fails_at(text, ADS_ELIMIT, 1, (int)(at - text) + 1,
                    "at most 64 ORDER BY expressions");
    ads_buf_free(&b);
    ads_buf c = ADS_BUF_INIT;
    ads_buf_adds(&c, "SELECT count(*) FROM Machine GROUP BY ");
    for (int i = 0; i < 65; i++)
        ads_buf_adds(&c, i ? ", Name" : "Name");
    select_fails_at(ads_buf_cstr(&c), ADS_ELIMIT, 1, 38 + 64 * 6 + 1,
                    "at most 64 GROUP BY expressions");
    ads_buf_free(&c);
}


/* ---- the per-record sweep against the sweep in time order ---- */

/* A sink writing each row as `[ ... ]`, cut before an attribute named Z (the
 * aggregate that forces the sweep in time order). */
static int cut_row(void *ctx, const ads_record *row, ads_error *err)
{
    (void)err;
    lines *l = ctx;
    ads_buf one = ADS_BUF_INIT;
    ads_record_unparse(&one, row);
    const char *text = ads_buf_cstr(&one);
    const char *z = strstr(text, "; Z = ");
    ads_buf_add(&l->b, text, z ? (size_t)(z - text) : strlen(text) - 2);
    ads_buf_adds(&l->b, " ]\n");
    ads_buf_free(&one);
    return 0;
}

static char *run_cut(const char *text)
{
    lines l = {ADS_BUF_INIT};
    ads_sink sink = {NULL, cut_row, NULL, &l};
    ads_error err;
    if (ads_query_exec(q, text, strlen(text), &sink, NULL, NULL, &err))
        fail_msg("%s\n  -> %s", text, err.message);
    char *out = strdup(ads_buf_cstr(&l.b));
    ads_buf_free(&l.b);
    return out;
}

/* One random history of type `type`: records appear, change value, role and
 * platform, lose the value, take a string, are deleted and come back, have
 * several rows at one instant; values are quarters, so every sum is exact
 * in either order. */
static void random_history(const char *type, unsigned *seed)
{
    static const char *plat[] = {"linux", "windows", "mac"};
    int nrec = 1 + rand_r(seed) % 12;
    for (int i = 0; i < nrec; i++) {
        int nrows = 1 + rand_r(seed) % 10;
        int minute = -90 + rand_r(seed) % 150;
        ads_buf b = ADS_BUF_INIT;
        ads_buf_adds(&b, "STORE ");
        for (int j = 0; j < nrows; j++) {
            /* one draw per statement: the order in which a call's arguments
             * are evaluated differs between compilers */
            char text[512], mem[64], when[32];
            int r = rand_r(seed) % 20;
            if (r == 0) {
                snprintf(mem, sizeof mem, "Memory = \"big\"; ");
            } else if (r == 1) {
                snprintf(mem, sizeof mem, "Memory = undefined; ");
            } else {
                int whole = rand_r(seed) % 500;
                int quarters = rand_r(seed) % 4;
                snprintf(mem, sizeof mem, "Memory = %d.%02d; ", whole, 25 * quarters);
            }
            bool compute = rand_r(seed) % 5 != 0;
            const char *platform = plat[rand_r(seed) % 3];
            bool deleted = rand_r(seed) % 9 == 0;
            time_t at = (time_t)(T + 60.0 * minute);
            struct tm tm;
            gmtime_r(&at, &tm);
            strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
            snprintf(text, sizeof text,
                     "%s[AdType = \"%s\"; Name = \"n%d\"; %sRole = \"%s\"; "
                     "Platform = \"%s\"; _Deleted = %s; _Timestamp = `%s`]",
                     j ? ", " : "", type, i, mem, compute ? "compute" : "login", platform,
                     deleted ? "true" : "false", when);
            ads_buf_adds(&b, text);
            int same = rand_r(seed) % 4 == 0;
            minute += same ? 0 : 1 + rand_r(seed) % 60;
        }
        exec_ok(ads_buf_cstr(&b));
        ads_buf_free(&b);
    }
}

static void fold_and_sort(char *s);

/* Statement a (avg@ and sum@ of sums and counts, which the sweep by record
 * answers) and the same with max@(count(*)) added (which takes the sweep in
 * time order) give the same rows; with fold, compared folded to lower case
 * and sorted (a group's spelling, and so its place, may differ between the
 * sweeps). 1 when they gave rows, 0 when none. */
static int sweeps_agree(const char *a, bool fold)
{
    char b[1100];
    const char *from = strstr(a, " FROM ");
    snprintf(b, sizeof b, "%.*s, max@(count(*)) AS Z%s", (int)(from - a), a, from);
    char *ra = run_cut(a), *rb = run_cut(b);
    if (fold) {
        fold_and_sort(ra);
        fold_and_sort(rb);
    }
    if (strcmp(ra, rb) != 0) {
        fprintf(stderr, "%s\nper record:\n%sin time:\n%s", a, ra, rb);
        fail_msg("%s: the sweeps differ", a);
    }
    int gave = strlen(ra) > 0;
    free(ra);
    free(rb);
    return gave;
}

static void aggregate__per_record_sweep_agrees_with_the_sweep_in_time(void **state)
{
    (void)state;
    static const char *ranges[] = {
        "@timerange(`2024-01-01T00:00:00Z`, `2024-01-01T02:00:00Z`)",
        "@timerange(`2023-12-31T23:07:00Z`, `2024-01-01T01:53:00Z`)",
        "@timerange(`2024-01-01T00:30:00Z`, `2024-01-01T00:31:00Z`)",
    };
    static const char *ivs[] = {"30m", "1h", "7m"};
    unsigned seed = 1234;
    int answered = 0; /* statements that gave rows (a history may give none) */
    for (int it = 0; it < 90; it++) {
        char type[16], a[1024];
        snprintf(type, sizeof type, "M%d", it);
        ts_declare(db, type, "Name", NULL);
        random_history(type, &seed);
        snprintf(a, sizeof a,
                 "SELECT avg@(sum(Memory)) AS A, sum@(sum(Memory)) AS S, avg@(count(*)) AS C, "
                 "sum@(count(Memory)) AS N, avg@(count(Memory)) AS D FROM %s WHERE %s%s "
                 "GROUP BY %s@intervals(`%s`)",
                 type, it % 2 ? "Role == \"compute\" && " : "", ranges[it % 3],
                 it % 4 < 2 ? "Platform, " : "", ivs[it % 3]);
        answered += sweeps_agree(a, false);
    }
    assert_true(answered >= 45);
}

/* ---- WHERE and the group kept from row to row (query/tlrecord.c) ---- */

/*
 * One record, one row a minute from T (Memory 10, 20, 30, ...), whose Role
 * and Platform change in ways that keep or change their bytes: the kept
 * WHERE and group must be a row's own. Minutes:
 *   0  Role "compute", Platform "linux"        in linux
 *   1  Role "Compute" (== ignores case)       in linux
 *   2  Role "login"                           out
 *   3  Role "compute"                         in linux
 *   4  Platform "LINUX" (same group)          in linux
 *   5  Role = Kind, Kind "compute"            in linux (an expression)
 *   6  Kind "login" (Role's bytes unchanged)  out
 *   7  Kind "compute"                         in linux
 *   8  Role removed                           out (undefined)
 *   9  Role "compute", Platform = Kind        in group "compute"
 *  10  Kind "windows"                         in windows
 *  11  Platform "windows"                     in windows
 *  12  Platform removed                       in group undefined
 *  13  Role error                             out
 *  14  Role "compute"                         in group undefined
 * Each row lasts a minute (the last to 00:15); avg@(sum(Memory)) over
 * 00:00-00:15 by group is the mean of the group's minutes' Memory over the
 * minutes with a row in the group.
 */
static void kept__where_and_group_follow_every_change(void **state)
{
    (void)state;
    static const char *changes[] = {
        "Role = \"compute\"; Platform = \"linux\"",
        "Role = \"Compute\"",
        "Role = \"login\"",
        "Role = \"compute\"",
        "Platform = \"LINUX\"",
        "Role = Kind; Kind = \"compute\"",
        "Kind = \"login\"",
        "Kind = \"compute\"",
        "Role = undefined",
        "Role = \"compute\"; Platform = Kind",
        "Kind = \"windows\"",
        "Platform = \"windows\"",
        "Platform = undefined",
        "Role = error",
        "Role = \"compute\"",
    };
    for (int i = 0; i < 15; i++) {
        char text[300];
        snprintf(text, sizeof text,
                 "STORE [AdType = \"Machine\"; Name = \"a\"; Memory = %d; %s; "
                 "_Timestamp = `2024-01-01T00:%02d:00Z`]",
                 10 * (i + 1), changes[i], i);
        exec_ok(text);
    }
    /* and b, whose Role and Platform stay the same: mac, minutes 0-3 (1000
     * to 4000, the last to 00:15) */
    for (int i = 0; i < 4; i++) {
        char text[300];
        snprintf(text, sizeof text,
                 "STORE [AdType = \"Machine\"; Name = \"b\"; Memory = %d; Role = \"compute\"; "
                 "Platform = \"mac\"; _Timestamp = `2024-01-01T00:%02d:00Z`]",
                 1000 * (i + 1), i);
        exec_ok(text);
    }
    /* linux: minutes 0 1 3 4 5 7 (10 20 40 50 60 80: 260 / 6);
     * compute: 9 (100); windows: 10 11 (110 120); undefined: 12 14 (130 150);
     * mac: (1000 + 2000 + 3000 + 12 * 4000) / 15 */
    select_is("SELECT avg@(sum(Memory)) AS M FROM Machine WHERE Role == \"compute\" && "
              "@timerange(`2024-01-01T00:00:00Z`, `2024-01-01T00:15:00Z`) "
              "GROUP BY Platform, @intervals(`15m`)",
              "[ _Timestamp = `2024-01-01T00:00:00Z`; Platform = \"compute\"; M = 100.0 ]\n"
              "[ _Timestamp = `2024-01-01T00:00:00Z`; Platform = \"linux\"; "
              "M = 43.333333333333336 ]\n"
              "[ _Timestamp = `2024-01-01T00:00:00Z`; Platform = \"mac\"; M = 3600.0 ]\n"
              "[ _Timestamp = `2024-01-01T00:00:00Z`; Platform = \"windows\"; M = 115.0 ]\n"
              "[ _Timestamp = `2024-01-01T00:00:00Z`; Platform = undefined; M = 140.0 ]\n");
    /* WHERE reading _Timestamp (held by the envelope, not the row's bytes):
     * rows before 00:02 only, though b's next rows have the same Role and
     * Platform: linux (10 20), mac (1000 2000) */
    select_is("SELECT avg@(sum(Memory)) AS M FROM Machine WHERE Role == \"compute\" && "
              "_Timestamp < `2024-01-01T00:02:00Z` && "
              "@timerange(`2024-01-01T00:00:00Z`, `2024-01-01T00:15:00Z`) "
              "GROUP BY Platform, @intervals(`15m`)",
              "[ _Timestamp = `2024-01-01T00:00:00Z`; Platform = \"linux\"; M = 15.0 ]\n"
              "[ _Timestamp = `2024-01-01T00:00:00Z`; Platform = \"mac\"; M = 1500.0 ]\n");
}

/* Random histories whose consecutive rows mostly keep Role's and
 * Platform's bytes, or change them only in case, or through an expression
 * (Role = Kind, Platform = Arch) whose own bytes stay while what it reads
 * changes, or remove them, or set them to error. */
static void kept_history(const char *type, unsigned *seed)
{
    static const char *roles[] = {"\"compute\"", "\"Compute\"", "\"COMPUTE\"", "\"login\"",
                                  "Kind",        "undefined",   "error",       "\"compute\""};
    static const char *plats[] = {"\"linux\"", "\"Linux\"", "\"LINUX\"", "\"windows\"",
                                  "Arch",      "undefined", "error",     "\"linux\""};
    static const char *kinds[] = {"\"compute\"", "\"login\"", "\"Compute\"", "undefined"};
    static const char *archs[] = {"\"linux\"", "\"Windows\"", "\"windows\"", "undefined"};
    int nrec = 1 + rand_r(seed) % 8;
    for (int i = 0; i < nrec; i++) {
        int nrows = 1 + rand_r(seed) % 14;
        int minute = -60 + rand_r(seed) % 120;
        ads_buf b = ADS_BUF_INIT;
        ads_buf_adds(&b, "STORE ");
        for (int j = 0; j < nrows; j++) {
            char text[512], when[32], attrs[256] = "";
            size_t at = 0;
            /* one draw per statement (see random_history) */
            int r = rand_r(seed) % 10;
            if (j == 0 || r < 3)
                at += (size_t)snprintf(attrs + at, sizeof attrs - at, "Role = %s; ",
                                       roles[rand_r(seed) % 8]);
            r = rand_r(seed) % 10;
            if (j == 0 || r < 3)
                at += (size_t)snprintf(attrs + at, sizeof attrs - at, "Platform = %s; ",
                                       plats[rand_r(seed) % 8]);
            r = rand_r(seed) % 10;
            if (j == 0 || r < 3)
                at += (size_t)snprintf(attrs + at, sizeof attrs - at, "Kind = %s; ",
                                       kinds[rand_r(seed) % 4]);
            r = rand_r(seed) % 10;
            if (j == 0 || r < 3)
                at += (size_t)snprintf(attrs + at, sizeof attrs - at, "Arch = %s; ",
                                       archs[rand_r(seed) % 4]);
            int mem = rand_r(seed) % 400;
            bool deleted = rand_r(seed) % 12 == 0;
            time_t t = (time_t)(T + 60.0 * minute);
            struct tm tm;
            gmtime_r(&t, &tm);
            strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
            snprintf(text, sizeof text,
                     "%s[AdType = \"%s\"; Name = \"n%d\"; Memory = %d.5; %s_Deleted = %s; "
                     "_Timestamp = `%s`]",
                     j ? ", " : "", type, i, mem, attrs, deleted ? "true" : "false", when);
            ads_buf_adds(&b, text);
            minute += 1 + rand_r(seed) % 20;
        }
        exec_ok(ads_buf_cstr(&b));
        ads_buf_free(&b);
    }
}

static int cmp_lines(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The lines of text folded to lower case and sorted, in place: the two
 * sweeps may meet a group's spellings in another order and show the first
 * they meet, which also places the group among the others (ORDER BY's
 * order tells spellings apart). */
static void fold_and_sort(char *s)
{
    char *lines_at[4096];
    size_t n = 0, len = strlen(s);
    for (char *p = s; *p; p++)
        if (*p >= 'A' && *p <= 'Z')
            *p = (char)(*p - 'A' + 'a');
    char *copy = strdup(s);
    assert_non_null(copy);
    for (char *line = strtok(copy, "\n"); line; line = strtok(NULL, "\n")) {
        assert_true(n < 4096);
        lines_at[n++] = line;
    }
    qsort(lines_at, n, sizeof *lines_at, cmp_lines);
    size_t at = 0;
    for (size_t i = 0; i < n; i++)
        at += (size_t)snprintf(s + at, len + 1 - at, "%s\n", lines_at[i]);
    free(copy);
}

static void kept__per_record_sweep_agrees_with_the_sweep_in_time(void **state)
{
    (void)state;
    static const char *wheres[] = {
        "Role == \"compute\" && ",
        "(Role == \"compute\" || Role =?= undefined) && ",
        "Role == \"compute\" && _Timestamp >= `2024-01-01T00:20:00Z` && ",
        "toLower(Role) != \"login\" && ",
        "Role == \"compute\" && time() > 0 && ",
        "",
    };
    static const char *groups[] = {"Platform, ", "toLower(Platform), ", "Platform, Role, ",
                                   "isError(Platform), ", ""};
    unsigned seed = 4321;
    int answered = 0;
    for (int it = 0; it < 120; it++) {
        char type[16], a[1024];
        snprintf(type, sizeof type, "K%d", it);
        ts_declare(db, type, "Name", NULL);
        kept_history(type, &seed);
        snprintf(a, sizeof a,
                 "SELECT avg@(sum(Memory)) AS A, sum@(count(*)) AS S FROM %s WHERE %s"
                 "@timerange(`2024-01-01T00:00:00Z`, `2024-01-01T02:00:00Z`) "
                 "GROUP BY %s@intervals(`30m`)",
                 type, wheres[it % 6], groups[(it / 6) % 5]);
        answered += sweeps_agree(a, true);
    }
    assert_true(answered >= 60);
}

int main(void)
{
#define TT(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
    const struct CMUnitTest tests[] = {
        TT(aggregate__avg_min_max_sum_per_interval),
        TT(aggregate__count_and_avg_inner_aggregates),
        TT(aggregate__intervals_align_to_the_epoch_and_clip),
        TT(aggregate__backfilled_rows_count_in_the_past),
        TT(aggregate__inner_aggregates_of_non_numbers_are_error),
        TT(aggregate__order_by_a_label),
        TT(aggregate__limit_0_reads_no_rows),
        TT(raw__group_by_deleted_shows_deleted_rows),
        TT(filters__anytime_covers_rows_dated_in_the_future),
        TT(raw__rows_in_effect_over_the_range),
        TT(filters__duration_last_anytime_now),
        TT(seed__worked_example_runs),
        TT(errors__temporal_syntax),
        TT(instant__a_later_row_at_the_same_timestamp_replaces_the_earlier),
        TT(errors__order_and_group_terms_over_the_limit),
        TT(aggregate__per_record_sweep_agrees_with_the_sweep_in_time),
        TT(kept__where_and_group_follow_every_change),
        TT(kept__per_record_sweep_agrees_with_the_sweep_in_time),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
