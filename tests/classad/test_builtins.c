/*
 * tests/classad/test_builtins.c: classad/builtins.c, the function registry
 * and the core built-ins: the type tests, the conversions (int real string
 * bool id absTime relTime), blob, size, and the functions that need the
 * evaluator (ifThenElse eval unparse debug, and unresolved, which lives in
 * builtins_string.c for its pattern), through parse and evaluate,
 * with every error value a user can reach and the arity of each. The math,
 * string, list and regexp functions (builtins_string.c) and the time
 * functions (builtins_time.c) have their own test programs.
 * The process runs with TZ=UTC.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "classad/classad.h"
#include "classad/classad_int.h"
#include "classad/msgpack.h"

#include "tests/classad/arena_fixture.h"

static ads_value eval_view(const ads_view *view, const char *expr)
{
    const ads_expr *e;
    ads_error err;
    ads_value v;
    if (ads_expr_parse(&e, arena, expr, strlen(expr), &err))
        fail_msg("'%s': %s", expr, err.message);
    assert_int_equal(ads_expr_eval(&v, e, view, arena), 0);
    return v;
}

/* Evaluate expr in the record ctx ("[]" for none). */
static ads_value eval_in(const char *ctx, const char *expr)
{
    const ads_record *r;
    ads_error err;
    if (ads_record_parse(&r, arena, ctx, strlen(ctx), &err))
        fail_msg("context '%s': %s", ctx, err.message);
    ads_view view = ads_record_view(r, NULL);
    return eval_view(&view, expr);
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

/* expr, in ctx, has the value whose adstore spelling is want (which pins
 * the type: 2 is an integer, 2.0 a real). */
static void expect_in(const char *ctx, const char *expr, const char *want)
{
    ads_value v = eval_in(ctx, expr);
    const char *got = show(&v);
    if (strcmp(got, want) != 0)
        fail_msg("%s in %s: expected %s, got %s", expr, ctx, want, got);
}

typedef struct row {
    const char *expr, *want;
} row;

static void expect_rows(const char *ctx, const row *rows, size_t n)
{
    for (size_t i = 0; i < n; i++)
        expect_in(ctx, rows[i].expr, rows[i].want);
}

#define EXPECT_ALL(rows) expect_rows("[]", rows, sizeof(rows) / sizeof(rows)[0])

/* ------------------------------------------------------------------------ */
/* The registry                                                             */
/* ------------------------------------------------------------------------ */

static void builtins__find_ignores_case_and_searches_every_table(void **state)
{
    (void)state;
    static const struct {
        const char *asked, *found;
    } rows[] = {
        {"isundefined", "isUndefined"},
        {"ISCLASSAD", "isClassAd"},
        {"ABSTIME", "absTime"},
        {"STRCAT", "strcat"},
        {"ceil", "ceil"},
        {"Ceiling", "ceiling"},
        {"getyear", "getYear"},
        {"ifthenelse", "ifThenElse"},
        {"STRINGLIST_REGEXPMEMBER", "stringList_regexpMember"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        const ads_builtin *fn = ads_builtin__find(rows[i].asked, strlen(rows[i].asked));
        if (!fn)
            fail_msg("%s not found", rows[i].asked);
        assert_string_equal(fn->name, rows[i].found);
    }
    static const char *const unknown[] = {
        "", "nosuch", "isUndefine", "isUndefinedX", "is_undefined", "unresolvedX", "strcat "};
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++)
        if (ads_builtin__find(unknown[i], strlen(unknown[i])))
            fail_msg("'%s' found", unknown[i]);
    /* the length bounds the name */
    assert_non_null(ads_builtin__find("intX", 3));
    assert_string_equal(ads_builtin__find("intX", 3)->name, "int");
}

static void builtins__every_name_finds_its_own_entry(void **state)
{
    (void)state;
    /* no two tables define the same name (one would hide the other) */
    const struct {
        const ads_builtin *fns;
        size_t n;
    } tables[] = {
        {ads_builtins__core, ads_builtins__core_count},
        {ads_builtins__string, ads_builtins__string_count},
        {ads_builtins__time, ads_builtins__time_count},
    };
    for (size_t t = 0; t < 3; t++) {
        assert_true(tables[t].n > 0);
        for (size_t i = 0; i < tables[t].n; i++) {
            const ads_builtin *b = &tables[t].fns[i];
            char upper[64];
            size_t len = strlen(b->name);
            assert_true(len < sizeof upper);
            for (size_t k = 0; k <= len; k++)
                upper[k] =
                    (b->name[k] >= 'a' && b->name[k] <= 'z') ? (char)(b->name[k] - 32) : b->name[k];
            if (ads_builtin__find(upper, len) != b)
                fail_msg("%s does not find its own entry", b->name);
            assert_true(b->min_args >= 0);
            assert_true(b->max_args < 0 || b->max_args >= b->min_args);
        }
    }
}

static void builtins__wrong_arity_and_unknown_functions_are_error(void **state)
{
    (void)state;
    /* each function with the fewest and most arguments it takes, then one
     * fewer and one more: the first two are values, the others error */
    static const struct {
        const char *name, *args[4];
        int min, max;
    } fns[] = {
        {"isUndefined", {"1", "1"}, 1, 1},
        {"isError", {"1", "1"}, 1, 1},
        {"isString", {"1", "1"}, 1, 1},
        {"isInteger", {"1", "1"}, 1, 1},
        {"isReal", {"1", "1"}, 1, 1},
        {"isBoolean", {"1", "1"}, 1, 1},
        {"isList", {"1", "1"}, 1, 1},
        {"isClassAd", {"1", "1"}, 1, 1},
        {"isAbsTime", {"1", "1"}, 1, 1},
        {"isRelTime", {"1", "1"}, 1, 1},
        {"isIdentifier", {"1", "1"}, 1, 1},
        {"isBlob", {"1", "1"}, 1, 1},
        {"int", {"1", "1"}, 1, 1},
        {"real", {"1", "1"}, 1, 1},
        {"string", {"1", "1"}, 1, 1},
        {"bool", {"1", "1"}, 1, 1},
        {"id", {"\"1\"", "\"1\""}, 1, 1},
        {"absTime", {"1", "60", "60"}, 0, 2},
        {"relTime", {"1", "1"}, 1, 1},
        {"ifThenElse", {"1", "1", "1", "1"}, 3, 3},
        {"eval", {"1", "1"}, 1, 1},
        {"unparse", {"a", "a"}, 1, 1},
        {"size", {"\"ab\"", "\"ab\""}, 1, 1},
        {"debug", {"1", "1"}, 1, 1},
        {"blob", {"\"\"", "[ ]", "[ ]"}, 1, 2},
    };
    /* every function of the core table is here */
    assert_int_equal(sizeof fns / sizeof fns[0], ads_builtins__core_count);
    for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++) {
        const ads_builtin *fn = ads_builtin__find(fns[i].name, strlen(fns[i].name));
        assert_non_null(fn);
        assert_int_equal(fn->min_args, fns[i].min);
        assert_int_equal(fn->max_args, fns[i].max);
        for (int n = fns[i].min - 1; n <= fns[i].max + 1; n++) {
            if (n < 0)
                continue;
            char text[128];
            size_t o = (size_t)snprintf(text, sizeof text, "%s(", fns[i].name);
            for (int k = 0; k < n; k++)
                o += (size_t)snprintf(text + o, sizeof text - o, "%s%s", k ? ", " : "",
                                      fns[i].args[k]);
            snprintf(text + o, sizeof text - o, ")");
            ads_value v = eval_in("[a = 1]", text);
            bool fits = n >= fns[i].min && n <= fns[i].max;
            if (fits == (v.type == ADS_ERROR))
                fail_msg("%s is %s", text, show(&v));
        }
    }
    static const row rows[] = {
        {"nosuch()", "error"},
        {"nosuch(1, 2)", "error"},
        {"NoSuch(undefined)", "error"},
    };
    EXPECT_ALL(rows);
}

/* ------------------------------------------------------------------------ */
/* Type tests                                                               */
/* ------------------------------------------------------------------------ */

static void type_tests__true_only_for_their_own_type(void **state)
{
    (void)state;
    static const char *const fns[] = {
        "isUndefined", "isError",   "isBoolean", "isInteger", "isReal",       "isString",
        "isList",      "isClassAd", "isAbsTime", "isRelTime", "isIdentifier", "isBlob",
    };
    /* one value of each type, in the order of fns */
    static const char *const values[] = {
        "undefined", "error",     "true",
        "1",         "1.5",       "\"s\"",
        "{ 1 }",     "[ a = 1 ]", "`2011-12-13T12:00:00Z`",
        "`1m`",      "#1495",     "blob(\"AQID\")",
    };
    for (size_t f = 0; f < 12; f++) {
        for (size_t v = 0; v < 12; v++) {
            char text[128];
            snprintf(text, sizeof text, "%s(%s)", fns[f], values[v]);
            ads_value got = eval_in("[]", text);
            if (got.type != ADS_BOOLEAN || got.u.b != (f == v))
                fail_msg("%s is %s", text, show(&got));
        }
    }
    static const row rows[] = {
        {"isError(1 / 0)", "true"},      {"isInteger(1 / 0)", "false"},
        {"isUndefined(nosuch)", "true"}, {"isString(nosuch)", "false"},
        {"isInteger(true)", "false"},    {"isReal(1)", "false"},
        {"isList({ })", "true"},         {"isClassAd([ ])", "true"},
        {"isString(\"\")", "true"},      {"isReal(real(\"NaN\"))", "true"},
        {"ISSTRING(\"x\")", "true"},
    };
    EXPECT_ALL(rows);
    expect_in("[l = { 1 }; r = [ x = 1 ]; s = \"x\"]", "isList(l) && isClassAd(r) && isString(s)",
              "true");
}

/* ------------------------------------------------------------------------ */
/* Conversions                                                              */
/* ------------------------------------------------------------------------ */

static void int__truncates_toward_zero_and_reads_leading_numbers(void **state)
{
    (void)state;
    static const row rows[] = {
        {"int(7)", "7"},
        {"int(-9223372036854775808)", "-9223372036854775808"},
        {"int(true)", "1"},
        {"int(false)", "0"},
        {"int(3.7)", "3"},
        {"int(-3.7)", "-3"},
        {"int(0.0)", "0"},
        {"int(-9223372036854775808.0)", "-9223372036854775808"},
        {"int(9223372036854774784.0)", "9223372036854774784"},
        {"int(\"42\")", "42"},
        {"int(\"  42abc\")", "42"},
        {"int(\"-7.9\")", "-7"},
        {"int(`1m30.5s`)", "90"},
        {"int(`-1.5s`)", "-1"},
        {"int(`2011-12-13T12:00:00Z`)", "1323777600"},
        {"int(`2011-12-13T12:00:00-05:00`)", "1323795600"},
        {"int(undefined)", "undefined"},
        {"int(error)", "error"},
    };
    EXPECT_ALL(rows);
}

static void int__error_for_non_numbers_and_out_of_range(void **state)
{
    (void)state;
    static const row rows[] = {
        {"int(\"\")", "error"},
        {"int(\"abc\")", "error"},
        {"int(\"  \")", "error"},
        {"int(\"inf\")", "error"},
        {"int(\"nan\")", "error"},
        {"int(real(\"NaN\"))", "error"},
        {"int(real(\"INF\"))", "error"},
        {"int(real(\"-INF\"))", "error"},
        {"int(9223372036854775808.0)", "error"},
        {"int(-9223372036854777856.0)", "error"},
        {"int(1e300)", "error"},
        {"int(\"1e300\")", "error"},
        {"int(relTime(1e300))", "error"},
        {"int({ 1 })", "error"},
        {"int([ a = 1 ])", "error"},
        {"int(#1)", "error"},
        {"int(blob(\"AQID\"))", "error"},
    };
    EXPECT_ALL(rows);
}

static void real__converts_numbers_times_and_text(void **state)
{
    (void)state;
    static const row rows[] = {
        {"real(1.5)", "1.5"},
        {"real(2)", "2.0"},
        {"real(-9223372036854775808)", "-9.223372036854776e+18"},
        {"real(true)", "1.0"},
        {"real(false)", "0.0"},
        {"real(`1m30.5s`)", "90.5"},
        {"real(`1970-01-01T00:01:00+01:00`)", "-3540.0"},
        {"real(\"1.5\")", "1.5"},
        {"real(\" 2\")", "2.0"},
        {"real(\"2.5xyz\")", "2.5"},
        {"real(\"-1e3\")", "-1000.0"},
        {"real(\"NaN\")", "real(\"NaN\")"},
        {"real(\"INF\")", "real(\"INF\")"},
        {"real(\"-INF\")", "real(\"-INF\")"},
        {"real(undefined)", "undefined"},
        {"real(error)", "error"},
        /* errors */
        {"real(\"\")", "error"},
        {"real(\"x1\")", "error"},
        {"real({ 1 })", "error"},
        {"real([ ])", "error"},
        {"real(#1)", "error"},
        {"real(blob(\"\"))", "error"},
    };
    EXPECT_ALL(rows);
}

static void string__writes_values_in_htcondor_spelling(void **state)
{
    (void)state;
    static const row rows[] = {
        {"string(\"abc\")", "\"abc\""},
        {"string(undefined)", "undefined"},
        {"string(error)", "error"},
        {"string(42)", "\"42\""},
        {"string(-2)", "\"-2\""},
        {"string(true)", "\"true\""},
        {"string(false)", "\"false\""},
        {"string(1.5)", "\"1.500000000000000E+00\""},
        {"string(0.0)", "\"0.0\""},
        {"string(-0.0)", "\"-0.0\""},
        {"string(1e100)", "\"1.000000000000000E+100\""},
        {"string(real(\"NaN\"))", "\"real(\\\"NaN\\\")\""},
        {"string({ 1, 1 + 1 })", "\"{ 1,1 + 1 }\""},
        {"string({ })", "\"{  }\""},
        {"string([ a = 1; b = \"x\" ])", "\"[ a = 1; b = \\\"x\\\" ]\""},
        {"string([ a = 1; b = a + 1 ])", "\"[ a = 1; b = a + 1 ]\""},
        {"string(`2011-12-13T12:00:00Z`)", "\"2011-12-13T12:00:00-00:00\""},
        {"string(`2011-12-13T12:00:00+05:30`)", "\"2011-12-13T12:00:00+05:30\""},
        {"string(`1m30s`)", "\"01:30\""},
        {"string(`1d2h`)", "\"1+02:00:00\""},
        {"string(`-5s`)", "\"-05\""},
        {"string(#1495)", "\"1495\""},
        {"string(id(\"1495\")) == \"1495\"", "true"},
        {"string(blob(\"AQID\"))", "\"blob(\\\"AQID\\\")\""},
    };
    EXPECT_ALL(rows);
    /* a list shows the text it was written as */
    expect_in("[a = 2; l = { a, a + 1 }]", "string(l)", "\"{ a,a + 1 }\"");
    /* and so does a record, written in place, named, or selected */
    const char *ctx = "[n = [a = 1; b = a + 1; m = [c = b * 2]]]";
    expect_in(ctx, "string(n)", "\"[ a = 1; b = a + 1; m = [ c = b * 2 ] ]\"");
    expect_in(ctx, "string(n.m)", "\"[ c = b * 2 ]\"");
    expect_in(ctx, "string((n))", "\"[ a = 1; b = a + 1; m = [ c = b * 2 ] ]\"");
    /* a record computed by an expression shows its values */
    expect_in(ctx, "string(ifThenElse(true, n.m, 0))", "\"[ c = 4 ]\"");
}

static void bool__reads_numbers_and_true_false_text(void **state)
{
    (void)state;
    static const row rows[] = {
        {"bool(true)", "true"},
        {"bool(false)", "false"},
        {"bool(0)", "false"},
        {"bool(5)", "true"},
        {"bool(-1)", "true"},
        {"bool(0.0)", "false"},
        {"bool(-0.0)", "false"},
        {"bool(0.1)", "true"},
        {"bool(\"true\")", "true"},
        {"bool(\"TRUE\")", "true"},
        {"bool(\"False\")", "false"},
        {"bool(undefined)", "undefined"},
        {"bool(error)", "error"},
        /* HTCondor: a RelTime counts its whole seconds */
        {"bool(`1s`)", "true"},
        {"bool(`-2m`)", "true"},
        {"bool(`0s`)", "false"},
        {"bool(`0.5s`)", "false"},
        /* HTCondor: any other text is undefined, not error */
        {"bool(\"yes\")", "undefined"},
        {"bool(\"1\")", "undefined"},
        {"bool(\" true\")", "undefined"},
        {"bool(\"\")", "undefined"},
        /* errors */
        {"bool(`2011-12-13T12:00:00Z`)", "error"},
        {"bool({ true })", "error"},
        {"bool([ ])", "error"},
        {"bool(#1)", "error"},
        {"bool(blob(\"\"))", "error"},
    };
    EXPECT_ALL(rows);
}

static void id__reads_identifiers_from_text(void **state)
{
    (void)state;
    static const row rows[] = {
        {"id(\"#1495\")", "#1495"},
        {"id(\"1495\")", "#1495"},
        {"id(#1495)", "#1495"},
        {"id(\"1495\") == #1495", "true"},
        {"id(undefined)", "undefined"},
        {"id(error)", "error"},
        /* errors */
        {"id(\"\")", "error"},
        {"id(\"#\")", "error"},
        {"id(\"xyz!\")", "error"},
        {"id(\"##1495\")", "error"},
        {"id(1495)", "error"},
        {"id(1.5)", "error"},
        {"id(true)", "error"},
        {"id({ \"1495\" })", "error"},
    };
    EXPECT_ALL(rows);
}

static void abstime__from_text_seconds_and_offsets(void **state)
{
    (void)state;
    static const row rows[] = {
        {"absTime(\"2011-12-13T12:00:00-05:00\")", "`2011-12-13T12:00:00-05:00`"},
        {"absTime(\"2011-12-13T12:00:00\")", "`2011-12-13T12:00:00Z`"},
        {"absTime(`2011-12-13T12:00:00Z`)", "`2011-12-13T12:00:00Z`"},
        {"absTime(0)", "`1970-01-01T00:00:00Z`"},
        {"absTime(1323777600)", "`2011-12-13T12:00:00Z`"},
        {"absTime(1.7)", "`1970-01-01T00:00:01Z`"},
        {"absTime(-1.5)", "`1969-12-31T23:59:58Z`"},
        {"absTime(`1m30.5s`)", "`1970-01-01T00:01:30Z`"},
        /* with a zone offset: seconds or a RelTime, within a day */
        {"absTime(0, 3600)", "`1970-01-01T01:00:00+01:00`"},
        {"absTime(0, -18000)", "`1969-12-31T19:00:00-05:00`"},
        {"absTime(0, `1h`)", "`1970-01-01T01:00:00+01:00`"},
        {"absTime(0, `1h0.9s`)", "`1970-01-01T01:00:00+01:00`"},
        {"absTime(0, 19800)", "`1970-01-01T05:30:00+05:30`"},
        {"absTime(0, 86340)", "`1970-01-01T23:59:00+23:59`"},
        {"absTime(0, -86340)", "`1969-12-31T00:01:00-23:59`"},
        {"absTime(0, `-23h59m`)", "`1969-12-31T00:01:00-23:59`"},
        {"absTime(0, 0)", "`1970-01-01T00:00:00Z`"},
        /* an AbsTime keeps its instant and takes the new zone */
        {"absTime(`2011-12-13T12:00:00Z`, 3600)", "`2011-12-13T13:00:00+01:00`"},
        {"absTime(1, 3600) == absTime(1)", "true"},
        {"absTime(undefined)", "undefined"},
        {"absTime(error)", "error"},
    };
    EXPECT_ALL(rows);
}

/* HTCondor reads absTime(text) loosely: digit groups with anything between,
 * parts left off from the end, no zone meaning the local one. */
static void abstime__reads_text_as_htcondor_does(void **state)
{
    (void)state;
    static const row rows[] = {
        {"absTime(\"2004-01-01\")", "`2004-01-01T00:00:00Z`"},
        {"absTime(\"2004-01-01\") == absTime(\"2004-01-01\")", "true"},
        {"absTime(\"2004-01-01 10:30\")", "`2004-01-01T10:30:00Z`"},
        {"absTime(\"2004/03/04 05:06:07\")", "`2004-03-04T05:06:07Z`"},
        {"absTime(\"2004-01-01T10:00Z\")", "`2004-01-01T10:00:00Z`"},
        {"absTime(\"2004-01-01 10:00 +0100\")", "`2004-01-01T10:00:00+01:00`"},
        {"absTime(\"2004-01-01T10:00-05:30\")", "`2004-01-01T10:00:00-05:30`"},
        {"absTime(\"1970-01-01T:00:00:01Z\")", "`1970-01-01T00:00:01Z`"},
        /* a month or day left off is the first (HTCondor's gives day 0) */
        {"absTime(\"2004\")", "`2004-01-01T00:00:00Z`"},
        {"absTime(\"2004-07\")", "`2004-07-01T00:00:00Z`"},
        /* still refused: no year, short groups, out of range, digits after */
        {"absTime(\"04-01-01\")", "error"},
        {"absTime(\"2004-1-01\")", "error"},
        {"absTime(\"2004-13-01\")", "error"},
        {"absTime(\"2004-02-30\")", "error"},
        {"absTime(\"2004-01-01T10:00:00:00\")", "error"},
        {"absTime(\"2004-01-01T25:00\")", "error"},
    };
    EXPECT_ALL(rows);
    /* without a zone: midnight in the process's local zone */
    setenv("TZ", "XST6", 1);
    tzset();
    ads_value v = eval_in("[]", "absTime(\"2004-01-01\")");
    setenv("TZ", "UTC", 1);
    tzset();
    assert_int_equal(v.type, ADS_ABSTIME);
    assert_int_equal(v.u.abs.offset, -6 * 3600);
    assert_true(v.u.abs.secs == 1072915200.0 + 6 * 3600);
    assert_string_equal(show(&v), "`2004-01-01T00:00:00-06:00`");
}

static void abstime__now_without_arguments(void **state)
{
    (void)state;
    /* CLOCK_REALTIME, as the built-in reads: time(NULL) reads a coarser clock
     * that may lag it by a tick at a second's edge */
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    time_t before = ts.tv_sec;
    ads_value v = eval_in("[]", "absTime()");
    clock_gettime(CLOCK_REALTIME, &ts);
    time_t after = ts.tv_sec;
    assert_int_equal(v.type, ADS_ABSTIME);
    assert_int_equal(v.u.abs.offset, 0); /* the local zone: UTC here */
    assert_true(v.u.abs.secs >= (double)before && v.u.abs.secs <= (double)after);
    assert_true(v.u.abs.secs == (double)(int64_t)v.u.abs.secs);
}

static void abstime__errors_and_undefined_arguments(void **state)
{
    (void)state;
    static const row rows[] = {
        {"absTime(\"bad\")", "error"},
        {"absTime(\"\")", "error"},
        {"absTime(\"2011-13-01T00:00:00Z\")", "error"},
        {"absTime(true)", "error"},
        {"absTime({ 0 })", "error"},
        {"absTime([ ])", "error"},
        {"absTime(#1)", "error"},
        /* offsets: not a number of seconds or a RelTime, or beyond a day */
        {"absTime(0, \"3600\")", "error"},
        {"absTime(0, 1.5)", "error"},
        {"absTime(0, true)", "error"},
        {"absTime(0, 86400)", "error"},
        {"absTime(0, -86400)", "error"},
        {"absTime(0, `1d`)", "error"},
        {"absTime(0, 86401)", "error"},
        {"absTime(0, -86401)", "error"},
        {"absTime(0, 4294967296)", "error"},
        {"absTime(0, `1d1s`)", "error"},
        {"absTime(0, `-1d1s`)", "error"},
        {"absTime(0, `100000000d`)", "error"},
        {"absTime(0, relTime(real(\"NaN\")))", "error"},
        /* an offset the text forms cannot write (only whole minutes) */
        {"absTime(0, 30)", "error"},
        {"absTime(0, -90)", "error"},
        {"absTime(0, `1h30.9s`)", "error"},
        {"absTime(`2011-12-13T12:00:00Z`, 3601)", "error"},
        {"absTime(0, relTime(real(\"INF\")))", "error"},
        {"absTime(true, 0)", "error"},
        {"absTime(\"bad\", 0)", "error"},
        /* error first, then undefined, from either argument */
        {"absTime(error, undefined)", "error"},
        {"absTime(undefined, error)", "error"},
        {"absTime(error, 0)", "error"},
        {"absTime(0, error)", "error"},
        {"absTime(undefined, 0)", "undefined"},
        {"absTime(0, undefined)", "undefined"},
        {"absTime(undefined, \"x\")", "undefined"},
    };
    EXPECT_ALL(rows);
}

static void abstime__every_offset_it_takes_reads_back_from_text(void **state)
{
    (void)state;
    /* what absTime(t, offset) makes, unparsed, parses back as the same
     * instant in the same zone */
    for (int off = -86340; off <= 86340; off += 60) {
        char text[96];
        snprintf(text, sizeof text, "absTime(1323777600, %d)", off);
        ads_value v = eval_in("[]", text);
        assert_int_equal(v.type, ADS_ABSTIME);
        assert_int_equal(v.u.abs.offset, off);
        ads_value back = eval_in("[]", show(&v));
        if (!ads_value_same(&v, &back))
            fail_msg("%s is %s, which reads back as %s", text, show(&v), show(&back));
    }
}

static void reltime__from_seconds_and_text(void **state)
{
    (void)state;
    static const row rows[] = {
        {"relTime(90)", "`1m30s`"},
        {"relTime(-90)", "`-1m30s`"},
        {"relTime(1.5)", "`1.5s`"},
        {"relTime(0)", "`0s`"},
        {"relTime(`1m`)", "`1m`"},
        {"relTime(\"1d2h\")", "`1d2h`"},
        {"relTime(\"01:30\")", "`1m30s`"},
        /* HTCondor allows white space between the parts */
        {"relTime(\"1d 2h\")", "`1d2h`"},
        {"relTime(\" 1d  2h 3m\t4s \")", "`1d2h3m4s`"},
        {"relTime(\"- 1h 30m\")", "`-1h30m`"},
        {"relTime(\"2 h\")", "`2h`"},
        {"relTime(\"1d 2\")", "`1d2s`"},
        /* an AbsTime gives its seconds since the epoch (HTCondor's rule) */
        {"relTime(absTime(60))", "`1m`"},
        {"relTime(`2011-12-13T12:00:00Z`)", "`15321d12h`"},
        {"relTime(`1970-01-01T00:00:00+05:00`)", "`-5h`"},
        {"relTime(undefined)", "undefined"},
        {"relTime(error)", "error"},
        /* errors */
        {"relTime(\"x\")", "error"},
        {"relTime(\"\")", "error"},
        {"relTime(\"1s2m\")", "error"},
        {"relTime(true)", "error"},
        {"relTime(\"1 30\")", "error"},
        {"relTime(\"1h 1d\")", "error"},
        {"relTime({ 1 })", "error"},
        {"relTime([ ])", "error"},
        {"relTime(#1)", "error"},
    };
    EXPECT_ALL(rows);
    /* a string not known at parse time is converted when evaluated */
    expect_in("[s = \"1h\"]", "relTime(s)", "`1h`");
    expect_in("[s = \"2011-12-13T12:00:00Z\"]", "absTime(s)", "`2011-12-13T12:00:00Z`");
}

/* ------------------------------------------------------------------------ */
/* size and blob                                                            */
/* ------------------------------------------------------------------------ */

static void size__of_strings_lists_records_and_blobs(void **state)
{
    (void)state;
    static const row rows[] = {
        {"size(\"abc\")", "3"},
        {"size(\"\")", "0"},
        {"size(\"\\303\\251\")", "2"}, /* bytes, not characters */
        {"size({ 1, { 2, 3 } })", "2"},
        {"size({ })", "0"},
        {"size([ a = 1; b = 2 ])", "2"},
        {"size([ ])", "0"},
        {"size(blob(\"AQID\"))", "3"},
        {"size(blob(\"\"))", "0"},
        {"size(undefined)", "undefined"},
        {"size(error)", "error"},
        {"size(1)", "error"},
        {"size(1.5)", "error"},
        {"size(true)", "error"},
        {"size(`1s`)", "error"},
        {"size(`2011-12-13T12:00:00Z`)", "error"},
        {"size(#1)", "error"},
    };
    EXPECT_ALL(rows);
}

static void blob__decodes_base64_with_optional_metadata(void **state)
{
    (void)state;
    ads_value v = eval_in("[]", "blob(\"AQID\")");
    assert_int_equal(v.type, ADS_BLOB);
    assert_int_equal(v.u.blob->bytes.len, 3);
    assert_memory_equal(v.u.blob->bytes.p, "\x01\x02\x03", 3);
    assert_null(v.u.blob->meta);
    v = eval_in("[]", "blob(\"aGVsbG8=\", [ MimeType = \"text/plain\" ])");
    assert_int_equal(v.type, ADS_BLOB);
    assert_int_equal(v.u.blob->bytes.len, 5);
    assert_memory_equal(v.u.blob->bytes.p, "hello", 5);
    assert_non_null(v.u.blob->meta);
    assert_int_equal(ads_record_size(v.u.blob->meta), 1);
    static const row rows[] = {
        {"blob(\"AQI=\")", "blob(\"AQI=\")"},
        {"blob(\"AQI\")", "blob(\"AQI=\")"}, /* padding optional */
        {"blob(\"AQ==\")", "blob(\"AQ==\")"},
        {"blob(\"AQ\")", "blob(\"AQ==\")"},
        {"blob(\"\")", "blob(\"\")"},
        {"blob(\"+/+/\")", "blob(\"+/+/\")"},
        {"blob(\"AQID\", [ ])", "blob(\"AQID\", [ ])"},
        {"size(blob(\"////\"))", "3"},
        /* the metadata record is evaluated */
        {"blob(\"AQID\", [ a = 1 + 1 ])", "blob(\"AQID\", [ a = 2 ])"},
    };
    EXPECT_ALL(rows);
    expect_in("[m = [ t = \"x\" ]; s = \"AQID\"]", "blob(s, m)", "blob(\"AQID\", [ t = \"x\" ])");
}

static void blob__error_for_bad_base64_and_bad_arguments(void **state)
{
    (void)state;
    static const row rows[] = {
        {"blob(\"A\")", "error"}, /* one character over a whole group */
        {"blob(\"AQIDB\")", "error"},
        {"blob(\"AQ===\")", "error"}, /* three padding characters */
        {"blob(\"====\")", "error"},
        {"blob(\"AQJ=\")", "error"}, /* padding bits not zero */
        {"blob(\"AR==\")", "error"},
        {"blob(\"A*ID\")", "error"}, /* not a base64 character */
        {"blob(\"AQ=D\")", "error"},
        {"blob(\"AQ ID\")", "error"},
        {"blob(\"AQID\\n\")", "error"},
        {"blob(\"-_-_\")", "error"}, /* the URL alphabet is not base64 */
        {"blob(1)", "error"},
        {"blob({ \"AQID\" })", "error"},
        {"blob(\"AQID\", 1)", "error"},
        {"blob(\"AQID\", { })", "error"},
        {"blob(\"AQID\", \"x\")", "error"},
        /* error first, then undefined */
        {"blob(error)", "error"},
        {"blob(\"AQID\", error)", "error"},
        {"blob(undefined, error)", "error"},
        {"blob(error, undefined)", "error"},
        {"blob(undefined, 1)", "error"},
        {"blob(undefined)", "undefined"},
        {"blob(\"AQID\", undefined)", "undefined"},
        {"blob(undefined, [ ])", "undefined"},
        {"blob(\"A\", undefined)", "undefined"},
    };
    EXPECT_ALL(rows);
}

/* ------------------------------------------------------------------------ */
/* The functions that need the evaluator                                    */
/* ------------------------------------------------------------------------ */

/* A view over [a = 1; b = 2] that records which names were looked up. */
typedef struct counting {
    int a, b;
} counting;

static int counting_lookup(const void *self, const char *name, size_t len, uint32_t hash,
                           ads_arena *a, ads_value *value, const ads_expr **expr)
{
    counting *c = (counting *)self;
    (void)hash, (void)a;
    *expr = NULL;
    if (len == 1 && (name[0] == 'a' || name[0] == 'b')) {
        if (name[0] == 'a')
            c->a++;
        else
            c->b++;
        *value = ads_int(name[0] == 'a' ? 1 : 2);
        return 1;
    }
    return 0;
}

static void if_then_else__evaluates_only_the_branch_chosen(void **state)
{
    (void)state;
    static const ads_view_ops ops = {counting_lookup};
    static const struct {
        const char *expr, *want;
        int a, b;
    } rows[] = {
        {"ifThenElse(true, a, b)", "1", 1, 0},
        {"ifThenElse(false, a, b)", "2", 0, 1},
        {"ifThenElse(7, a, b)", "1", 1, 0},
        {"ifThenElse(0, a, b)", "2", 0, 1},
        {"ifThenElse(0.5, a, b)", "1", 1, 0},
        {"ifThenElse(0.0, a, b)", "2", 0, 1},
        {"ifThenElse(-0.0, a, b)", "2", 0, 1},
        {"ifThenElse(undefined, a, b)", "undefined", 0, 0},
        {"ifThenElse(error, a, b)", "error", 0, 0},
        {"ifThenElse(\"true\", a, b)", "error", 0, 0},
        {"ifThenElse({ 1 }, a, b)", "error", 0, 0},
        {"ifThenElse(`1s`, a, b)", "error", 0, 0},
        {"ifThenElse(a == 1, \"one\", b)", "\"one\"", 1, 0},
        {"ifThenElse(nosuch, a, b)", "undefined", 0, 0},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        counting c = {0, 0};
        ads_view v = {&ops, &c, NULL};
        ads_value got = eval_view(&v, rows[i].expr);
        if (strcmp(show(&got), rows[i].want) != 0)
            fail_msg("%s: expected %s, got %s", rows[i].expr, rows[i].want, show(&got));
        if (c.a != rows[i].a || c.b != rows[i].b)
            fail_msg("%s looked a up %d times and b %d times", rows[i].expr, c.a, c.b);
    }
    /* the branch not taken may be anything */
    expect_in("[]", "ifThenElse(true, 1, 1 / 0)", "1");
    expect_in("[x = x + 1]", "ifThenElse(false, x, \"no loop\")", "\"no loop\"");
}

static void eval__parses_and_evaluates_text_in_the_current_scope(void **state)
{
    (void)state;
    static const row rows[] = {
        {"eval(\"1 + 2\")", "3"},
        {"eval(\"a + 1\")", "3"},
        {"eval(\"strcat(\\\"x\\\", a)\")", "\"x2\""},
        {"eval(\"  a /* comment */ \")", "2"},
        {"eval(5)", "5"},
        {"eval(1.5)", "1.5"},
        {"eval(undefined)", "undefined"},
        {"eval(error)", "error"},
        {"eval({ \"a\" })", "{ \"a\" }"},
        {"eval(\"nosuch\")", "undefined"},
        {"eval(\"\\\"a\\\"\")", "\"a\""},
        /* text that does not parse is error */
        {"eval(\"1 +\")", "error"},
        {"eval(\"\")", "error"},
        {"eval(\"1 2\")", "error"},
        {"eval(\"(\")", "error"},
    };
    expect_rows("[a = 2]", rows, sizeof rows / sizeof rows[0]);
    expect_in("[a = 2; r = [a = 5; v = eval(\"a\")]]", "r.v", "5");
    expect_in("[a = 2; r = [a = 5; v = eval(\".a\")]]", "r.v", "2");
    expect_in("[s = \"a * 2\"; a = 21]", "eval(s)", "42");
}

static void eval__self_reference_is_error_not_a_crash(void **state)
{
    (void)state;
    expect_in("[a = eval(\"a\")]", "a", "error");
    expect_in("[a = eval(\"b\"); b = eval(\"a\")]", "a", "error");
    /* text that evaluates itself again and again stops at the depth limit */
    expect_in("[s = \"eval(s)\"]", "eval(s)", "error");
    expect_in("[s = \"eval(s) + 1\"]", "eval(s)", "error");
}

static void unparse__gives_the_text_of_an_attribute(void **state)
{
    (void)state;
    const char *ctx = "[x = a + 3; a = 2; r = 2.0; l = { 1, a }; t = `1m30s`; "
                      "s = \"q\\\"\"; 'odd name' = 1]";
    static const row rows[] = {
        {"unparse(x)", "\"a + 3\""},
        {"unparse(X)", "\"a + 3\""},
        {"unparse(a)", "\"2\""},
        {"unparse(r)", "\"2.0\""},
        {"unparse(l)", "\"{ 1, a }\""},
        {"unparse(t)", "\"`1m30s`\""},
        {"unparse(s)", "\"\\\"q\\\\\\\"\\\"\""},
        {"unparse((x))", "\"a + 3\""},
        {"unparse('odd name')", "\"1\""},
        {"unparse(nosuch)", "\"\""},
        /* anything but an attribute reference is error */
        {"unparse(1)", "error"},
        {"unparse(\"x\")", "error"},
        {"unparse(x + 1)", "error"},
        {"unparse(f(x))", "error"},
        {"unparse({ x })", "error"},
    };
    expect_rows(ctx, rows, sizeof rows / sizeof rows[0]);
}

static void unparse__gives_the_text_of_a_selected_attribute(void **state)
{
    (void)state;
    const char *ctx = "[x = a + 3; n = [i = x * 2; m = [j = i - 1]; 'q r' = 1]; self = 5]";
    static const row rows[] = {
        {"unparse(n.i)", "\"x * 2\""},
        {"unparse(N.I)", "\"x * 2\""},
        {"unparse(n.m.j)", "\"i - 1\""},
        {"unparse(n.'q r')", "\"1\""},
        {"unparse([k = 1 + 1].k)", "\"1 + 1\""},
        {"unparse(toplevel.x)", "\"a + 3\""},
        {"unparse(root.n)", "\"[ i = x * 2; m = [ j = i - 1 ]; 'q r' = 1 ]\""},
        /* no such member, or a base that is no record */
        {"unparse(n.nosuch)", "\"\""},
        {"unparse(x.i)", "\"\""},
        {"unparse(nosuch.i)", "\"\""},
        /* an attribute named self is an ordinary base: 5 is no record */
        {"unparse(self.x)", "\"\""},
    };
    expect_rows(ctx, rows, sizeof rows / sizeof rows[0]);
    /* self and parent where no attribute has the name */
    expect_in("[x = a + 3; n = [y = unparse(self.i); i = 1 + 2; z = unparse(parent.x)]]",
              "n.y", "\"1 + 2\"");
    expect_in("[x = a + 3; n = [y = unparse(self.i); i = 1 + 2; z = unparse(parent.x)]]",
              "n.z", "\"a + 3\"");
}

static void unparse__looks_outward_and_from_the_root(void **state)
{
    (void)state;
    const char *ctx = "[y = b + 1; x = \"top\"; r = [x = 2; u = unparse(y); v = unparse(x); "
                      "w = unparse(.x); n = unparse(.nosuch)]]";
    expect_in(ctx, "r.u", "\"b + 1\"");
    expect_in(ctx, "r.v", "\"2\"");
    expect_in(ctx, "r.w", "\"\\\"top\\\"\"");
    expect_in(ctx, "r.n", "\"\"");
}

/* A view whose every lookup reports corruption. */
static int broken_lookup(const void *self, const char *name, size_t len, uint32_t hash,
                         ads_arena *a, ads_value *value, const ads_expr **expr)
{
    (void)self, (void)name, (void)len, (void)hash, (void)a, (void)value, (void)expr;
    return ADS_ECORRUPT;
}

static void unparse__error_when_the_record_cannot_be_read(void **state)
{
    (void)state;
    static const ads_view_ops ops = {broken_lookup};
    ads_view v = {&ops, NULL, NULL};
    ads_value got = eval_view(&v, "unparse(x)");
    assert_int_equal(got.type, ADS_ERROR);
    got = eval_view(&v, "isError(unparse(x))");
    assert_int_equal(got.type, ADS_BOOLEAN);
    assert_true(got.u.b);
}

static void unresolved__names_what_an_attribute_needs_and_the_record_lacks(void **state)
{
    (void)state;
    /* HTCondor's documented example: RequestCpus is in the record */
    expect_in("[Requirements = OpSys == \"LINUX\" && TARGET.Arch == \"ARM\" && "
              "Cpus >= RequestCpus; RequestCpus = 1]",
              "unresolved(Requirements)", "\"Arch,Cpus,OpSys\"");
    /* MY is the record itself: MY.RequestCpus is found, MY.Disk is not */
    expect_in("[Requirements = MY.RequestCpus > 0 && MY.Disk > 10 && TARGET.Memory > 1; "
              "RequestCpus = 1]",
              "unresolved(Requirements)", "\"Disk,Memory\"");
    const char *ctx = "[a = b + c; b = d * 2; c = 3; d = Zeta + alpha + ALPHA + Alpha; "
                      "e = 1; f = \"text\"; g = { q, [ h = r ] }; i = strcat(s, \"x\", t[u]); "
                      "j = k ? l : m ?: n; o = a + b; 'odd name' = 'other name' + 1]";
    static const row rows[] = {
        /* followed through the attributes found, sorted without case, each
         * once (the first spelling met is kept) */
        {"unresolved(a)", "\"alpha,Zeta\""},
        {"unresolved(b)", "\"alpha,Zeta\""},
        {"unresolved(o)", "\"alpha,Zeta\""},
        {"unresolved(d)", "\"alpha,Zeta\""},
        {"unresolved(A)", "\"alpha,Zeta\""},
        /* plain values and expressions that need nothing */
        {"unresolved(c)", "\"\""},
        {"unresolved(e)", "\"\""},
        {"unresolved(f)", "\"\""},
        /* inside lists, records, calls, subscripts and conditionals */
        {"unresolved(g)", "\"q,r\""},
        {"unresolved(i)", "\"s,t,u\""},
        {"unresolved(j)", "\"k,l,m,n\""},
        {"unresolved('odd name')", "\"other name\""},
        {"unresolved((a))", "\"alpha,Zeta\""},
        /* no such attribute */
        {"unresolved(nosuch)", "undefined"},
        {"unresolved(nosuch, \"x\")", "undefined"},
    };
    expect_rows(ctx, rows, sizeof rows / sizeof rows[0]);
}

static void unresolved__with_a_pattern_tells_whether_one_matches(void **state)
{
    (void)state;
    /* HTCondor's documented example */
    const char *ctx = "[Requirements = OpSys == \"LINUX\" && Arch == \"ARM\"; "
                      "r2 = OpSysAndVer == \"CentOS7\"; none = 1 + 2]";
    static const row rows[] = {
        {"unresolved(Requirements, \"^OpSys\")", "true"},
        {"unresolved(Requirements, \"OpSys.+\")", "false"},
        {"unresolved(r2, \"OpSys.+\")", "true"},
        /* case-insensitive, as HTCondor compiles the pattern */
        {"unresolved(Requirements, \"^ARCH$\")", "true"},
        {"unresolved(Requirements, \"(?-i)^ARCH$\")", "false"},
        /* an empty match does not count */
        {"unresolved(Requirements, \"\")", "false"},
        {"unresolved(Requirements, \"x*\")", "false"},
        {"unresolved(none, \".\")", "false"},
        /* the pattern must be a valid regular expression in a string */
        {"unresolved(Requirements, \"(\")", "error"},
        {"unresolved(Requirements, 1)", "error"},
        {"unresolved(Requirements, undefined)", "error"},
        {"unresolved(Requirements, error)", "error"},
        {"unresolved(Requirements, nosuch)", "error"},
        /* an attribute that does not exist is undefined before the
         * pattern is looked at (HTCondor's order) */
        {"unresolved(nosuch, 1)", "undefined"},
    };
    expect_rows(ctx, rows, sizeof rows / sizeof rows[0]);
    /* a pattern that backtracks without end hits the match limit */
    expect_in("[x = 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!']", "unresolved(x, \"(a+)+$\")", "error");
}

static void unresolved__selections_follow_the_evaluators_scopes(void **state)
{
    (void)state;
    const char *ctx =
        "[top = 1; "
        "s1 = TARGET.Memory + target.Disk + MY.Cpus; "       /* TARGET. dropped; MY is self */
        "s2 = other.x + other.y.z + (Foo ?: Bar).w; "        /* undefined bases */
        "s3 = self.top + self.gone + toplevel.top + root.gone2 + .top + .gone3; "
        "s4 = parent.x; "                                    /* no parent here */
        "r = [x = Foo2; y = 2; n = [deep = Foo3]; up = top + gone4; p = parent.top]; "
        "s5 = r.x + r.y + r.missing; "
        "s6 = r.n.deep + r.up + r.p; "
        "s7 = [k = Foo4; l = k].l; "                         /* a record written in place */
        "rv = { [x = 1] }; s8 = rv.x; "                      /* a list base: nothing to name */
        "s9 = (1 + 2).x]";
    static const row rows[] = {
        {"unresolved(s1)", "\"Cpus,Disk,Memory\""},
        {"unresolved(s2)", "\"Bar,Foo,other.x,other.y.z\""},
        {"unresolved(s3)", "\"gone,gone2,gone3\""},
        {"unresolved(s4)", "\"parent.x\""},
        {"unresolved(s5)", "\"Foo2,missing\""},
        {"unresolved(s6)", "\"Foo3,gone4\""},
        {"unresolved(s7)", "\"Foo4\""},
        {"unresolved(s8)", "\"\""},
        {"unresolved(s9)", "\"\""},
        /* the argument itself may be selected */
        {"unresolved(r.x)", "\"Foo2\""},
        {"unresolved(r.n.deep)", "\"Foo3\""},
        {"unresolved(r.up)", "\"gone4\""},
        {"unresolved(.s4)", "\"parent.x\""},
        {"unresolved(r.nosuch)", "undefined"},
        {"unresolved(nosuch.x)", "undefined"},
        {"unresolved(rv.x)", "undefined"},
    };
    expect_rows(ctx, rows, sizeof rows / sizeof rows[0]);
    /* a base that is an expression is not evaluated: the names it needs
     * count, the name selected from it does not */
    static const row exprs[] = {
        {"unresolved(s1)", "\"Foo\""},
        {"unresolved(s2)", "\"r2.x\""},
        {"unresolved(s3)", "\"A,B,c\""},
        {"unresolved(s4)", "\"\""},
        {"unresolved(r1.x)", "undefined"},
    };
    expect_rows("[r1 = Foo; s1 = r1.x; r2 = undefined; s2 = r2.x; "
                "r3 = ifThenElse(c, [x = A], [x = B]); s3 = r3.x; r4 = 1; s4 = r4.x]",
                exprs, sizeof exprs / sizeof exprs[0]);
    /* so unresolved() inside a base is never called from unresolved(): a
     * record of them evaluates at once */
    expect_in("[a = unresolved(b); b = unresolved(a).f + unresolved(a).g + unresolved(a).h; "
              "c = unresolved(b).x + unresolved(a).y + c]",
              "{ a, b, c, unresolved(c) }", "{ \"\", error, error, \"\" }");
    /* an attribute named self is an attribute, not the record */
    expect_in("[top = 1; self = [sx = Foo5]; s = self.sx + self.top]", "unresolved(s)",
              "\"Foo5,top\"");
    /* from inside a nested record: names resolve outward, .name from the
     * root, and the attribute is found where evaluation would find it */
    const char *nested = "[a = 1; g = Gone; r = [b = a + c + .a + .d; u = unresolved(b); "
                         "v = unresolved(g); w = unresolved(.g); x = unresolved(parent.g)]]";
    expect_in(nested, "r.u", "\"c,d\"");
    expect_in(nested, "r.v", "\"Gone\"");
    expect_in(nested, "r.w", "\"Gone\"");
    expect_in(nested, "r.x", "\"Gone\"");
}

static void unresolved__circular_and_shared_references_are_followed_once(void **state)
{
    (void)state;
    static const row rows[] = {
        {"unresolved(a)", "\"z\""},
        {"unresolved(b)", "\"z\""},
        {"unresolved(s)", "\"\""},
        {"unresolved(u)", "\"\""},
        /* evaluation of the same attributes is error */
        {"a", "error"},
    };
    expect_rows("[a = b + z; b = a; s = s; u = unresolved(u)]", rows,
                sizeof rows / sizeof rows[0]);
    /* each attribute costs once: 2^60 paths, 60 attributes */
    ads_buf b = ADS_BUF_INIT;
    ads_buf_adds(&b, "[");
    for (int i = 0; i < 60; i++)
        ads_buf_printf(&b, "a%d = a%d + a%d; ", i, i + 1, i + 1);
    ads_buf_adds(&b, "a60 = Leaf]");
    expect_in(ads_buf_cstr(&b), "unresolved(a0)", "\"Leaf\"");
    ads_buf_free(&b);
}

static void unresolved__error_beyond_the_depth_limit(void **state)
{
    (void)state;
    /* a chain of attributes longer than evaluation may go */
    ads_buf b = ADS_BUF_INIT;
    ads_buf_adds(&b, "[");
    for (int i = 0; i < ADS_MAX_DEPTH + 10; i++)
        ads_buf_printf(&b, "a%d = a%d; ", i, i + 1);
    ads_buf_adds(&b, "]");
    expect_in(ads_buf_cstr(&b), "unresolved(a0)", "error");
    expect_in(ads_buf_cstr(&b), "unresolved(a0, \"x\")", "error");
    expect_in(ads_buf_cstr(&b), "a0", "error");
    /* a shorter one is fine */
    expect_in(ads_buf_cstr(&b), "unresolved(a300)", "\"a410\"");
    ads_buf_free(&b);
}

static void unresolved__error_for_arguments_that_are_not_attribute_references(void **state)
{
    (void)state;
    static const row rows[] = {
        {"unresolved()", "error"},
        {"unresolved(x, \"a\", \"b\")", "error"},
        {"unresolved(1)", "error"},
        {"unresolved(\"x\")", "error"},
        {"unresolved(x + 1)", "error"},
        {"unresolved(f(x))", "error"},
        {"unresolved({ x })", "error"},
        {"unresolved([ x = 1 ])", "error"},
        {"unresolved(x[0])", "error"},
        {"unresolved(undefined)", "error"},
        {"isError(unresolved(1, \"x\"))", "true"},
        {"UNRESOLVED(x)", "\"y\""},
    };
    expect_rows("[x = y]", rows, sizeof rows / sizeof rows[0]);
}

static void unresolved__reads_stored_rows_as_in_memory_records(void **state)
{
    (void)state;
    /* the same record, in memory and as the bytes a store keeps: the view
     * over the bytes decodes what the walk reads, once */
    const char *text = "[Requirements = OpSys == \"LINUX\" && TARGET.Arch == \"ARM\" && "
                       "Cpus >= RequestCpus; RequestCpus = Slots * 2; r = [x = Foo; y = r2.z]; "
                       "r2 = [z = Bar]; s = r.x + r.y + r.q; l = { 1, \"a\" }; c = a; a = c + b]";
    static const row rows[] = {
        {"unresolved(Requirements)", "\"Arch,Cpus,OpSys,Slots\""},
        {"unresolved(s)", "\"Bar,Foo,q\""},
        {"unresolved(l)", "\"\""},
        {"unresolved(c)", "\"b\""},
        {"unresolved(r.y)", "\"Bar\""},
        {"unresolved(s, \"^f\")", "true"},
        {"unresolved(nosuch)", "undefined"},
    };
    const ads_record *r;
    ads_error err;
    assert_int_equal(ads_record_parse(&r, arena, text, strlen(text), &err), 0);
    ads_buf bytes = ADS_BUF_INIT;
    assert_int_equal(ads_msgpack_encode_record(&bytes, r, &err), 0);
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        expect_in(text, rows[i].expr, rows[i].want);
        ads_msgpack_view mv;
        assert_int_equal(ads_msgpack_view_init(&mv, bytes.p, bytes.len, arena, &err), 0);
        ads_view v = ads_msgpack_view_get(&mv, NULL);
        ads_value got = eval_view(&v, rows[i].expr);
        if (strcmp(show(&got), rows[i].want) != 0)
            fail_msg("%s over the bytes: expected %s, got %s", rows[i].expr, rows[i].want,
                     show(&got));
    }
    ads_buf_free(&bytes);
}

static void unresolved__error_when_the_record_cannot_be_read(void **state)
{
    (void)state;
    static const ads_view_ops ops = {broken_lookup};
    ads_view v = {&ops, NULL, NULL};
    ads_value got = eval_view(&v, "unresolved(x)");
    assert_int_equal(got.type, ADS_ERROR);
    got = eval_view(&v, "unresolved(x, \"a\")");
    assert_int_equal(got.type, ADS_ERROR);
    /* a record that reads, enclosed by one that does not: the walk reaches
     * the broken one for a name it lacks */
    const ads_record *r;
    ads_error err;
    const char *text = "[x = y; z = 1]";
    assert_int_equal(ads_record_parse(&r, arena, text, strlen(text), &err), 0);
    ads_view inner = ads_record_view(r, &v);
    got = eval_view(&inner, "unresolved(z)");
    assert_string_equal(show(&got), "\"\"");
    got = eval_view(&inner, "unresolved(x)");
    assert_int_equal(got.type, ADS_ERROR);
}

static void debug__is_its_argument(void **state)
{
    (void)state;
    static const row rows[] = {
        {"debug(a + 1)", "3"},     {"debug(\"x\")", "\"x\""}, {"debug(undefined)", "undefined"},
        {"debug(error)", "error"}, {"debug({ a })", "{ 2 }"},
    };
    expect_rows("[a = 2]", rows, sizeof rows / sizeof rows[0]);
}

/* ------------------------------------------------------------------------ */
/* HTCondor's compatibility-layer functions (builtins_condor.c)             */
/* ------------------------------------------------------------------------ */

static void split_user_name__and_split_slot_name__split_at_the_first_at(void **state)
{
    (void)state;
    static const row rows[] = {
        {"splitUserName(\"user@domain\")", "{ \"user\", \"domain\" }"},
        {"splitUserName(\"a@b@c\")", "{ \"a\", \"b@c\" }"},
        {"splitUserName(\"user\")", "{ \"user\", \"\" }"},
        {"splitUserName(\"@d\")", "{ \"\", \"d\" }"},
        {"splitUserName(\"\")", "{ \"\", \"\" }"},
        {"splitSlotName(\"slot1@machine\")", "{ \"slot1\", \"machine\" }"},
        {"splitSlotName(\"slot1_2@m.example.org\")", "{ \"slot1_2\", \"m.example.org\" }"},
        {"splitSlotName(\"machine\")", "{ \"\", \"machine\" }"},
        {"SPLITUSERNAME(\"u@d\")[1]", "\"d\""},
        /* HTCondor's code: anything but a string is error, undefined too */
        {"splitUserName(undefined)", "error"},
        {"splitSlotName(1)", "error"},
        {"splitUserName(error)", "error"},
        {"splitUserName(\"a\", \"b\")", "error"},
        {"splitSlotName()", "error"},
    };
    EXPECT_ALL(rows);
}

static void eval_in_each_context__evaluates_in_each_record(void **state)
{
    (void)state;
    /* HTCondor's documentation examples, and its code where they differ */
    static const row rows[] = {
        {"evalInEachContext(Prio > 2, { [Prio = 3], [Prio = 1] })", "{ true, false }"},
        {"evalInEachContext(Prio, { [Prio = 3], [Prio = 1] })", "{ 3, 1 }"},
        {"evalInEachContext(Prio > 2, { [Prio = 3], undefined })", "{ true, undefined }"},
        {"evalInEachContext(Prio > 2, { [Prio = 3], 7 })", "{ true, error }"},
        {"evalInEachContext(Prio > 2, undefined)", "undefined"},
        {"evalInEachContext(Prio > 2, { })", "{ }"},
        {"evalInEachContext(Prio > 2, 3)", "error"},
        {"evalInEachContext(Prio > 2, error)", "error"},
        {"evalInEachContext(Prio)", "error"},
        {"countMatches(Prio > 2, { [Prio = 3], [Prio = 1] })", "1"},
        {"countMatches(Prio > 2, { [Prio = 3], undefined })", "1"},
        {"countMatches(Prio > 2, undefined)", "0"},
        {"countMatches(Prio, { [Prio = 3], [Prio = 0], [Prio = 0.5], [Prio = \"x\"] })", "2"},
        {"countMatches(Prio > 2, { [Prio = 3], 7, [Prio = 4] })", "2"},
        {"countMatches(Prio > 2, 3)", "error"},
        {"countMatches(Prio > 2, { }, 1)", "error"},
    };
    EXPECT_ALL(rows);
    /* the slot and job of HTCondor's comment: an attribute reference stands
     * for its expression, evaluated in each GPU's record; names a GPU lacks
     * come from where the function is called */
    const char *ctx = "[RequireGPUs = Capability > MinCap; MinCap = 4; "
                      "GPUs_tag1 = [Capability = 4.0; Name = \"GRX\"]; "
                      "GPUs_tag2 = [Capability = 5.5; Name = \"Tesla\"]; "
                      "AvailableGPUs = { GPUs_tag1, GPUs_tag2 }; RequestGPUs = 1; "
                      "Requirements = countMatches(RequireGPUs, AvailableGPUs) >= RequestGPUs]";
    expect_in(ctx, "countMatches(RequireGPUs, AvailableGPUs)", "1");
    expect_in(ctx, "countMatches(MY.RequireGPUs, AvailableGPUs)", "1");
    expect_in(ctx, "evalInEachContext(RequireGPUs, AvailableGPUs)", "{ false, true }");
    expect_in(ctx, "evalInEachContext(Name, AvailableGPUs)", "{ \"GRX\", \"Tesla\" }");
    expect_in(ctx, "max(evalInEachContext(Capability, AvailableGPUs))", "5.5");
    expect_in(ctx, "Requirements", "true");
    /* a name found nowhere is evaluated as written, in each record */
    expect_in(ctx, "evalInEachContext(Capability * 2, { GPUs_tag2 })", "{ 11.0 }");
    /* an attribute named MY is an ordinary base */
    expect_in("[MY = [p = Prio > 5]; p = Prio > 0]", "countMatches(MY.p, { [Prio = 3] })", "0");
    expect_in("[p = Prio > 0]", "countMatches(MY.p, { [Prio = 3] })", "1");
    /* an attribute holding a value, not an expression, is that value */
    expect_in("[v = 3]", "evalInEachContext(v, { [a = 1], [a = 2] })", "{ 3, 3 }");
}

static void args_to_list__and_list_to_args__read_and_write_job_arguments(void **state)
{
    (void)state;
    static const row rows[] = {
        {"argsToList(\"a b  c\")", "{ \"a\", \"b\", \"c\" }"},
        {"argsToList(\"a 'b c' 'it''s' ''\")", "{ \"a\", \"b c\", \"it's\", \"\" }"},
        {"argsToList(\"x'y z'w\")", "{ \"xy zw\" }"},
        {"argsToList(\"\")", "{ }"},
        {"argsToList(\"a 'b c'\", 1)", "{ \"a\", \"'b\", \"c'\" }"},
        {"argsToList(\"  a\\tb \", 2)", "{ \"a\", \"b\" }"},
        {"argsToList(\"a 'b\")", "error"},
        {"argsToList(\"a\", 3)", "error"},
        {"argsToList(\"a\", \"2\")", "error"},
        {"argsToList(1)", "error"},
        {"argsToList(undefined)", "error"},
        {"listToArgs({ \"a\", \"b c\", \"it's\", \"\" })", "\"a b' 'c it''''s ''\""},
        {"listToArgs({ \"a  b\" })", "\"a'  'b\""},
        {"listToArgs({ })", "\"\""},
        {"listToArgs({ \"a\", \"b\" }, 1)", "\"a b\""},
        {"listToArgs({ \"a b\" }, 1)", "error"},
        {"listToArgs({ \"a\", 1 })", "error"},
        {"listToArgs(\"a\")", "error"},
        {"listToArgs({ \"a\" }, 0)", "error"},
    };
    EXPECT_ALL(rows);
    /* every list of strings goes through the V2 text and back unchanged */
    static const char *const lists[] = {
        "{ }", "{ \"\" }", "{ \"'\" }", "{ \"''\", \" \" }", "{ \"a b\", \"c\\td\", \"e\\nf\" }",
        "{ \"x'\", \"'y\", \" z \" }",
    };
    for (size_t i = 0; i < sizeof lists / sizeof lists[0]; i++) {
        char expr[256];
        snprintf(expr, sizeof expr, "argsToList(listToArgs(%s)) === %s", lists[i], lists[i]);
        expect_in("[]", expr, "true");
    }
}

static void env_v1_to_v2__and_merge_environment__write_v2_environments(void **state)
{
    (void)state;
    static const row rows[] = {
        {"envV1ToV2(\"A=1;B=x y\")", "\"A=1 B=x' 'y\""},
        {"envV1ToV2(\"B=2;A=1;B=3\")", "\"A=1 B=3\""},
        {"envV1ToV2(\"|A=1|B=2;3\")", "\"A=1 B=2;3\""},
        {"envV1ToV2(\";A=1\")", "\"A=1\""},
        {"envV1ToV2(\"A=1\\nB=\")", "\"A=1 B=\""},
        {"envV1ToV2(\"A=it's\")", "\"A=it''''s\""},
        {"envV1ToV2(\"P=$$(x)\")", "\"P=$$(x)\""},
        {"envV1ToV2(\"A=1;$$(x)\")", "\"$$(x) A=1\""},
        /* a leading $ is taken for the delimiter, as HTCondor takes it */
        {"envV1ToV2(\"$$(x)\")", "error"},
        {"envV1ToV2(\"\")", "\"\""},
        {"envV1ToV2(undefined)", "undefined"},
        {"envV1ToV2(\"A\")", "error"},
        {"envV1ToV2(\"=1\")", "error"},
        {"envV1ToV2(1)", "error"},
        {"mergeEnvironment(\"A=1 B=2\", \"B='x y' C=3\")", "\"A=1 B=x' 'y C=3\""},
        {"mergeEnvironment(undefined, \"A=1\", undefined)", "\"A=1\""},
        {"mergeEnvironment(envV1ToV2(\"X=1;Y=2\"), \"Y=3\")", "\"X=1 Y=3\""},
        {"mergeEnvironment()", "\"\""},
        {"mergeEnvironment(\"A\")", "error"},
        {"mergeEnvironment(\"A='1\")", "error"},
        {"mergeEnvironment(\"A=1\", 2)", "error"},
    };
    EXPECT_ALL(rows);
}

static void user_home__and_user_map__give_what_htcondor_gives_switched_off(void **state)
{
    (void)state;
    static const row rows[] = {
        /* no user database is read: the default, else undefined */
        {"userHome(\"root\")", "undefined"},
        {"userHome(\"root\", \"/home/x\")", "\"/home/x\""},
        {"userHome(undefined, \"/home/x\")", "\"/home/x\""},
        {"userHome(1, \"/home/x\")", "\"/home/x\""},
        {"userHome(\"root\", \"\")", "undefined"},
        {"userHome(undefined)", "undefined"},
        {"userHome(1)", "error"},
        {"userHome(error)", "error"},
        {"userHome()", "error"},
        /* no map files are read: undefined, or the default group */
        {"userMap(\"groups\", \"alice\")", "undefined"},
        {"userMap(\"groups\", \"alice\", \"physics\")", "undefined"},
        {"userMap(\"groups\", \"alice\", \"physics\", \"users\")", "\"users\""},
        {"userMap(undefined, \"alice\", \"physics\", \"users\")", "\"users\""},
        {"userMap(\"groups\", error)", "error"},
        {"userMap(\"groups\")", "error"},
    };
    EXPECT_ALL(rows);
}

/*
 * Every name in HTCondor 23.0's function table (src/classad/fnCall.cpp) and
 * in the functions its compatibility layer registers
 * (src/condor_utils/compat_classad.cpp, registerClassadFunctions), which its
 * documentation lists together, spelled as registered: adstore knows each.
 * None is refused (docs/classad.md, "HTCondor's function set").
 */
static void builtins__know_every_function_in_htcondors_table(void **state)
{
    (void)state;
    static const char *const fn_call[] = {
        "isundefined", "iserror", "isstring", "isinteger", "isreal", "islist", "isclassad",
        "isboolean", "isabstime", "isreltime", "member", "identicalmember", "size", "sum",
        "avg", "min", "max", "anycompare", "allcompare", "time", "currenttime",
        "timezoneoffset", "daytime", "getyear", "getmonth", "getdayofyear", "getdayofmonth",
        "getdayofweek", "getdays", "gethours", "getminutes", "getseconds", "splittime",
        "formattime", "strcat", "join", "toupper", "tolower", "substr", "strcmp", "stricmp",
        "versioncmp", "versionLE", "versionLT", "versionGE", "versionGT", "versionEQ",
        "version_in_range", "regexp", "regexpmember", "regexps", "replace", "replaceall",
        "int", "real", "string", "bool", "absTime", "relTime", "unparse", "unresolved",
        "floor", "ceil", "ceiling", "round", "pow", "quantize", "random", "ifThenElse",
        "interval", "eval", "stringListsIntersect", "debug",
    };
    static const char *const compat[] = {
        "envV1ToV2", "mergeEnvironment", "listToArgs", "argsToList", "stringListSize",
        "stringListSum", "stringListAvg", "stringListMin", "stringListMax",
        "stringListMember", "stringListIMember", "stringListSubsetMatch",
        "stringListISubsetMatch", "stringList_regexpMember", "userHome", "userMap",
        "splitusername", "splitslotname", "split", "evalInEachContext", "countMatches",
    };
    for (size_t i = 0; i < sizeof fn_call / sizeof fn_call[0]; i++)
        if (!ads_builtin__find(fn_call[i], strlen(fn_call[i])))
            fail_msg("HTCondor's %s is unknown", fn_call[i]);
    for (size_t i = 0; i < sizeof compat / sizeof compat[0]; i++)
        if (!ads_builtin__find(compat[i], strlen(compat[i])))
            fail_msg("HTCondor's %s is unknown", compat[i]);
    assert_int_equal(sizeof fn_call / sizeof fn_call[0], 73);
    assert_int_equal(sizeof compat / sizeof compat[0], 21);
}

int main(void)
{
    setenv("TZ", "UTC", 1);
    tzset();
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(builtins__find_ignores_case_and_searches_every_table),
        T(builtins__every_name_finds_its_own_entry),
        T(builtins__wrong_arity_and_unknown_functions_are_error),
        T(type_tests__true_only_for_their_own_type),
        T(int__truncates_toward_zero_and_reads_leading_numbers),
        T(int__error_for_non_numbers_and_out_of_range),
        T(real__converts_numbers_times_and_text),
        T(string__writes_values_in_htcondor_spelling),
        T(bool__reads_numbers_and_true_false_text),
        T(id__reads_identifiers_from_text),
        T(abstime__from_text_seconds_and_offsets),
        T(abstime__reads_text_as_htcondor_does),
        T(abstime__now_without_arguments),
        T(abstime__errors_and_undefined_arguments),
        T(abstime__every_offset_it_takes_reads_back_from_text),
        T(reltime__from_seconds_and_text),
        T(size__of_strings_lists_records_and_blobs),
        T(blob__decodes_base64_with_optional_metadata),
        T(blob__error_for_bad_base64_and_bad_arguments),
        T(if_then_else__evaluates_only_the_branch_chosen),
        T(eval__parses_and_evaluates_text_in_the_current_scope),
        T(eval__self_reference_is_error_not_a_crash),
        T(unparse__gives_the_text_of_an_attribute),
        T(unparse__gives_the_text_of_a_selected_attribute),
        T(unparse__looks_outward_and_from_the_root),
        T(unparse__error_when_the_record_cannot_be_read),
        T(unresolved__names_what_an_attribute_needs_and_the_record_lacks),
        T(unresolved__with_a_pattern_tells_whether_one_matches),
        T(unresolved__selections_follow_the_evaluators_scopes),
        T(unresolved__circular_and_shared_references_are_followed_once),
        T(unresolved__error_beyond_the_depth_limit),
        T(unresolved__error_for_arguments_that_are_not_attribute_references),
        T(unresolved__reads_stored_rows_as_in_memory_records),
        T(unresolved__error_when_the_record_cannot_be_read),
        T(debug__is_its_argument),
        T(split_user_name__and_split_slot_name__split_at_the_first_at),
        T(eval_in_each_context__evaluates_in_each_record),
        T(args_to_list__and_list_to_args__read_and_write_job_arguments),
        T(env_v1_to_v2__and_merge_environment__write_v2_environments),
        T(user_home__and_user_map__give_what_htcondor_gives_switched_off),
        T(builtins__know_every_function_in_htcondors_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
