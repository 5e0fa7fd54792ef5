/*
 * tests/query/test_timeline.c: timeline queries (shared/spec/query.md
 * section 3) on small histories built by hand, with every expected value
 * worked out in the comments: raw rows over a range, avg@ / min@ / max@ /
 * sum@ per interval with records that appear, change, disappear and are
 * deleted mid-interval, backfilled rows, @duration / @last / @anytime / @now,
 * and the errors of the temporal syntax.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
     * (aligned), clipped to the range. linux f: 500 throughout (a 300 + b 200).
     * windows: d deleted at 00:45, in effect (80) from 00:40 to 00:45.
     */
    select_is("SELECT avg@(sum(Memory)) AS Avg, Platform FROM Machine WHERE "
              "Role == \"compute\" && @timerange(`2024-01-01T00:40:00Z`, `2024-01-01T01:10:00Z`) "
              "GROUP BY Platform, @intervals(`30m`)",
              "[ _Timestamp = `2024-01-01T00:30:00Z`; Avg = 500.0; Platform = \"linux\" ]\n"
              "[ _Timestamp = `2024-01-01T01:00:00Z`; Avg = 500.0; Platform = \"linux\" ]\n"
              "[ _Timestamp = `2024-01-01T00:30:00Z`; Avg = 80.0; Platform = \"windows\" ]\n"
              "[ _Timestamp = `2024-01-01T01:00:00Z`; Avg = undefined; Platform = \"windows\" ]\n");
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
    /* @anytime: from the first row (23:50) to now; intervals start at 23:00.
     * linux f: [23:50,00:00) 100 -> hour 23:00 avg@ over its defined 10 min = 100 */
    select_is("SELECT avg@(sum(Memory)) AS Avg FROM Machine WHERE Platform == \"linux\" && "
              "Role == \"compute\" && @anytime() GROUP BY @intervals(`1h`)",
              "[ _Timestamp = `2023-12-31T23:00:00Z`; Avg = 100.0 ]\n"
              "[ _Timestamp = `2024-01-01T00:00:00Z`; Avg = 350.0 ]\n"
              "[ _Timestamp = `2024-01-01T01:00:00Z`; Avg = 350.0 ]\n");
    /* @now() is the default: latest rows */
    select_is("SELECT Name, Memory FROM Machine WHERE @now() && Role == \"compute\"",
              "[ Name = \"b\"; Memory = 200 ]\n");
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
}

int main(void)
{
#define TT(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
    const struct CMUnitTest tests[] = {
        TT(aggregate__avg_min_max_sum_per_interval),
        TT(aggregate__count_and_avg_inner_aggregates),
        TT(aggregate__intervals_align_to_the_epoch_and_clip),
        TT(aggregate__backfilled_rows_count_in_the_past),
        TT(raw__rows_in_effect_over_the_range),
        TT(filters__duration_last_anytime_now),
        TT(seed__worked_example_runs),
        TT(errors__temporal_syntax),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
