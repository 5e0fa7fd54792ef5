/*
 * tests/classad/test_builtins_string.c: the string built-ins of builtins_string.c,
 * through parse and evaluate, including every error path a user can reach.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <locale.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "base/limits.h"

#include "classad/classad.h"

#include "tests/classad/arena_fixture.h"

/* Evaluate expr (in the record ctx, "[]" for none) and return its value. */
static ads_value eval_in(const char *ctx, const char *expr)
{
    const ads_record *r;
    const ads_expr *e;
    ads_error err;
    ads_value v;
    if (ads_record_parse(&r, arena, ctx, strlen(ctx), &err))
        fail_msg("context '%s': %s", ctx, err.message);
    if (ads_expr_parse(&e, arena, expr, strlen(expr), &err))
        fail_msg("'%s': %s", expr, err.message);
    ads_view view = ads_record_view(r, NULL);
    assert_int_equal(ads_expr_eval(&v, e, &view, arena), 0);
    return v;
}

/* expr must evaluate to the same value as expected does. */
static void expect(const char *expr, const char *expected)
{
    ads_value got = eval_in("[]", expr), want = eval_in("[]", expected);
    if (!ads_value_same(&got, &want)) {
        ads_buf b = ADS_BUF_INIT;
        ads_value_unparse(&b, &got);
        fail_msg("%s: expected %s, got %s", expr, expected, ads_buf_cstr(&b));
    }
}

/* Each expect_all row: an expression and the value it must have. */
typedef struct row {
    const char *expr, *want;
} row;

#define EXPECT_ALL(rows)                                                                    \
    do {                                                                                    \
        for (size_t i_ = 0; i_ < sizeof(rows) / sizeof(rows)[0]; i_++)                      \
            expect((rows)[i_].expr, (rows)[i_].want);                                       \
    } while (0)

/* expr, with "%s" replaced by a string literal of n copies of c then tail,
 * must evaluate to expected. */
static void expect_long(const char *expr, char c, size_t n, const char *tail,
                        const char *expected)
{
    size_t tl = strlen(tail), el = strlen(expr);
    char *lit = malloc(n + tl + 3);
    char *text = malloc(el + n + tl + 3);
    assert_non_null(lit);
    assert_non_null(text);
    lit[0] = '"';
    memset(lit + 1, c, n);
    memcpy(lit + 1 + n, tail, tl);
    lit[1 + n + tl] = '"';
    lit[2 + n + tl] = '\0';
    const char *hole = strstr(expr, "%s");
    assert_non_null(hole);
    size_t pre = (size_t)(hole - expr);
    memcpy(text, expr, pre);
    strcpy(text + pre, lit);
    strcat(text, hole + 2);
    expect(text, expected);
    free(text);
    free(lit);
}

static void strcat__joins_texts_and_propagates_undefined_and_error(void **state)
{
    (void)state;
    expect("strcat(\"a\", 1, true, \"b\")", "\"a1trueb\"");
    expect("strcat()", "\"\"");
    expect("strcat(\"a\", undefined)", "undefined");
    expect("strcat(undefined, error)", "error");
    expect("strcat(\"t=\", relTime(\"90\"))", "\"t=01:30\"");
}

/* ---- math ---- */

static void floor_ceiling_round__round_numbers_and_pass_integers(void **state)
{
    (void)state;
    static const row rows[] = {
        {"floor(3.9)", "3"},
        {"floor(-3.1)", "-4"},
        {"floor(\"3.9\")", "3"},
        {"floor(\"  7.5xyz\")", "7"},
        {"floor(5)", "5"},
        {"floor(false)", "0"},
        {"floor(relTime(\"90.5\"))", "90"},
        {"ceil(3.1)", "4"},
        {"ceiling(-3.9)", "-3"},
        {"ceiling(3.0)", "3"},
        {"round(3.9)", "4"},
        {"round(2.5)", "2"},
        {"round(3.5)", "4"},
        {"round(-2.5)", "-2"},
        {"round(true)", "1"},
        {"round(9223372036854775807)", "9223372036854775807"},
        {"floor(-9223372036854775808.0)", "-9223372036854775807 - 1"},
        {"isInteger(floor(2.5))", "true"},
    };
    EXPECT_ALL(rows);
}

static void floor_ceiling_round__error_for_undefined_non_numbers_and_out_of_range(void **state)
{
    (void)state;
    static const row rows[] = {
        {"floor(undefined)", "error"},
        {"ceiling(undefined)", "error"},
        {"round(error)", "error"},
        {"floor(\"abc\")", "error"},
        {"floor(\"\")", "error"},
        {"floor({1})", "error"},
        {"round([a = 1])", "error"},
        {"floor(1e300)", "error"},
        {"ceil(-1e19)", "error"},
        {"round(9223372036854775808.0)", "error"},
        {"floor(real(\"NaN\"))", "error"},
        {"floor(real(\"INF\"))", "error"},
        {"floor()", "error"},
        {"round(1, 2)", "error"},
    };
    EXPECT_ALL(rows);
}

static void pow__integer_power_of_integers_real_otherwise(void **state)
{
    (void)state;
    static const row rows[] = {
        {"pow(2, 10)", "1024"},
        {"pow(0, 0)", "1"},
        {"pow(0.0, 0)", "1.0"},
        {"pow(-2, 3)", "-8"},
        {"pow(-3, 2)", "9"},
        {"pow(2, 62)", "4611686018427387904"},
        {"pow(-2, 63)", "-9223372036854775807 - 1"},
        {"pow(1, 9223372036854775807)", "1"},
        {"pow(-1, 9223372036854775807)", "-1"},
        {"pow(0, 9223372036854775807)", "0"},
        {"pow(2, -1)", "0.5"},
        {"pow(2.0, 3)", "8.0"},
        {"pow(\"2\", 3)", "8.0"},
        {"pow(4, 0.5)", "2.0"},
        {"pow(true, 2)", "1.0"},
        {"pow(0, -1)", "real(\"INF\")"},
    };
    EXPECT_ALL(rows);
}

static void pow__error_on_integer_overflow_and_non_numbers(void **state)
{
    (void)state;
    static const row rows[] = {
        {"pow(2, 63)", "error"},
        {"pow(3, 40)", "error"},
        {"pow(-2, 64)", "error"},
        {"pow(4294967296, 2)", "error"},
        {"pow(\"a\", 2)", "error"},
        {"pow(undefined, 2)", "error"},
        {"pow(2, undefined)", "error"},
        {"pow(error, 1)", "error"},
        {"pow({1}, 2)", "error"},
        {"pow(2)", "error"},
    };
    EXPECT_ALL(rows);
}

static void quantize__rounds_up_to_multiples_and_list_members(void **state)
{
    (void)state;
    static const row rows[] = {
        {"quantize(3, 8)", "8"},
        {"quantize(3, 2)", "4"},
        {"quantize(4, 2)", "4"},
        {"quantize(0, 4)", "0"},
        /* integers by HTCondor's (a + b - 1) / b * b, C's division
         * truncating toward zero: not the ceiling for negative a or b */
        {"quantize(-4, 2)", "-2"},
        {"quantize(-5, 2)", "-4"},
        {"quantize(-7, 3)", "-3"},
        {"quantize(5, -2)", "2"},
        {"quantize(7, -3)", "3"},
        {"quantize(7, -1)", "5"},
        {"quantize(-4.0, 2)", "-4.0"},
        {"quantize(-5.0, 2)", "-4.0"},
        {"quantize(1.5, 6.8)", "6.8"},
        {"quantize(10, 5.1)", "10.2"},
        {"quantize(2.5, 2)", "4.0"},
        {"quantize(0, {4})", "4"},
        {"quantize(2, {1, 2, \"A\"})", "2"},
        {"quantize(3, {1, 2, 0.5})", "3.0"},
        {"quantize(7, {2, 3})", "9"},
        {"quantize(3, {})", "3"},
        {"quantize(3, 0)", "3"},
        {"quantize(2.5, 0)", "2.5"},
        {"quantize(3, 0.0)", "3"},
        {"quantize(\"3\", 2)", "4.0"},
        {"quantize(9223372036854775806, 2)", "9223372036854775806"},
    };
    EXPECT_ALL(rows);
}

static void quantize__error_for_non_numbers_and_overflow(void **state)
{
    (void)state;
    static const row rows[] = {
        {"quantize(3, {1, 2, \"A\"})", "error"},
        {"quantize(3, {1, undefined})", "error"},
        {"quantize(undefined, 2)", "error"},
        {"quantize(2, undefined)", "error"},
        {"quantize(\"x\", 2)", "error"},
        {"quantize(2, \"x\")", "error"},
        {"quantize(error, 2)", "error"},
        /* a step of the integer formula beyond 64 bits */
        {"quantize(9223372036854775807, 2)", "error"},
        {"quantize(-9223372036854775807 - 1, -1)", "error"},
        {"quantize(1, -9223372036854775807 - 1)", "error"},
        {"quantize(1)", "error"},
    };
    EXPECT_ALL(rows);
}

static void random__draws_integers_and_reals_in_range(void **state)
{
    (void)state;
    for (int i = 0; i < 200; i++) {
        ads_value v = eval_in("[]", "random(10)");
        assert_int_equal(v.type, ADS_INTEGER);
        assert_true(v.u.i >= 0 && v.u.i < 10);
        v = eval_in("[]", "random()");
        assert_int_equal(v.type, ADS_REAL);
        assert_true(v.u.r >= 0 && v.u.r < 1);
        v = eval_in("[]", "random(2.5)");
        assert_int_equal(v.type, ADS_REAL);
        assert_true(v.u.r >= 0 && v.u.r < 2.5);
        v = eval_in("[]", "random(9223372036854775807)");
        assert_int_equal(v.type, ADS_INTEGER);
        assert_true(v.u.i >= 0);
        v = eval_in("[]", "random(1e-300)");
        assert_int_equal(v.type, ADS_REAL);
        assert_true(v.u.r >= 0 && v.u.r < 1e-300);
    }
    expect("random(1)", "0");
}

static void random__error_for_non_positive_and_non_numbers(void **state)
{
    (void)state;
    static const row rows[] = {
        {"random(0)", "error"},
        {"random(-1)", "error"},
        {"random(0.0)", "error"},
        {"random(-1.5)", "error"},
        {"random(\"5\")", "error"},
        {"random(undefined)", "error"},
        {"random(error)", "error"},
        {"random(true)", "error"},
        {"random(real(\"INF\"))", "error"},
        {"random(real(\"NaN\"))", "error"},
        {"random(1, 2)", "error"},
    };
    EXPECT_ALL(rows);
}

/* ---- strings ---- */

static void join__puts_separator_between_items_and_skips_undefined(void **state)
{
    (void)state;
    static const row rows[] = {
        {"join(\", \", \"a\", \"b\", \"c\")", "\"a, b, c\""},
        {"join(\";\", {\"a\", \"b\", \"c\"})", "\"a;b;c\""},
        {"join({\"a\", \"b\"})", "\"ab\""},
        {"join(\",\", \"a\", undefined, \"b\")", "\"a,b\""},
        {"join(\",\", 1, 2.5, true)", "\"1,2.500000000000000E+00,true\""},
        {"join(\",\", {1, {2}})", "\"1,{ 2 }\""},
        {"join(\",\", \"a\", {\"b\"})", "\"a,{ \\\"b\\\" }\""},
        {"join(1, \"a\", \"b\")", "\"a1b\""},
        {"join(\", \", split(\"a b c\"))", "\"a, b, c\""},
        {"join(split(\"a b c\"))", "\"abc\""},
        {"join(\",\")", "\"\""},
        {"join(\"abc\")", "\"\""},
        {"join()", "\"\""},
        {"join({})", "\"\""},
        {"join(\",\", {})", "\"\""},
        {"join(undefined, \"a\", \"b\")", "\"ab\""},
        /* as HTCondor: no separator while the text so far is empty */
        {"join(\"-\", \"\", \"a\")", "\"a\""},
    };
    EXPECT_ALL(rows);
}

static void join__undefined_when_nothing_defined_and_error_for_error(void **state)
{
    (void)state;
    static const row rows[] = {
        {"join(\",\", undefined)", "undefined"},
        {"join(undefined)", "undefined"},
        {"join({undefined})", "undefined"},
        {"join(\",\", {undefined, undefined})", "undefined"},
        {"join(\",\", \"a\", error)", "error"},
        {"join(error, \"a\")", "error"},
        {"join(\",\", {\"a\", error})", "error"},
        {"join(\",\", undefined, error)", "error"},
    };
    EXPECT_ALL(rows);
}

static void substr__takes_perl_like_offsets_and_lengths(void **state)
{
    (void)state;
    static const row rows[] = {
        {"substr(\"abcde\", 1)", "\"bcde\""},
        {"substr(\"abcde\", 1, 2)", "\"bc\""},
        {"substr(\"abcde\", 1, -1)", "\"bcd\""},
        {"substr(\"abcde\", 10)", "\"\""},
        {"substr(\"abcde\", 5)", "\"\""},
        {"substr(\"abcde\", -2)", "\"de\""},
        {"substr(\"abcde\", -10)", "\"abcde\""},
        {"substr(\"abcde\", 0, 0)", "\"\""},
        {"substr(\"abcde\", 1, 10)", "\"bcde\""},
        {"substr(\"abcde\", 2, -10)", "\"\""},
        {"substr(\"abcde\", -3, -1)", "\"cd\""},
        {"substr(\"\", 0)", "\"\""},
        {"substr(\"\", -1, -1)", "\"\""},
        {"substr(\"abc\", 9223372036854775807)", "\"\""},
        {"substr(\"abc\", -9223372036854775807 - 1)", "\"abc\""},
        {"substr(\"abc\", 0, -9223372036854775807 - 1)", "\"\""},
        {"substr(\"abc\", 1, 9223372036854775807)", "\"bc\""},
    };
    EXPECT_ALL(rows);
}

static void substr__undefined_before_type_errors(void **state)
{
    (void)state;
    static const row rows[] = {
        {"substr(undefined, 1)", "undefined"},
        {"substr(\"a\", undefined)", "undefined"},
        {"substr(\"a\", 0, undefined)", "undefined"},
        {"substr(error, undefined)", "undefined"},
        {"substr(error, 1)", "error"},
        {"substr(1, 1)", "error"},
        {"substr(\"abc\", 1.0)", "error"},
        {"substr(\"abc\", \"1\")", "error"},
        {"substr(\"abc\", true)", "error"},
        {"substr(\"abc\", 1, 1.5)", "error"},
        {"substr(\"abc\")", "error"},
        {"substr(\"abc\", 1, 1, 1)", "error"},
    };
    EXPECT_ALL(rows);
}

static void strcmp_stricmp__order_texts_as_minus_one_zero_one(void **state)
{
    (void)state;
    static const row rows[] = {
        {"strcmp(\"alain\", \"roy\")", "-1"},
        {"strcmp(\"roy\", \"alain\")", "1"},
        {"strcmp(\"alain\", \"alain\")", "0"},
        {"strcmp(\"a\", \"A\")", "1"},
        {"strcmp(\"ab\", \"abc\")", "-1"},
        {"strcmp(\"\", \"\")", "0"},
        {"strcmp(\"\\377\", \"a\")", "1"},
        {"strcmp(1, \"1\")", "0"},
        {"strcmp(true, \"true\")", "0"},
        {"strcmp({1}, \"{ 1 }\")", "0"},
        {"stricmp(\"alain\", \"ALAIN\")", "0"},
        {"stricmp(\"ABC\", \"abd\")", "-1"},
        {"stricmp(\"_\", \"A\")", "-1"},
        {"stricmp(\"b\", \"A\")", "1"},
    };
    EXPECT_ALL(rows);
}

static void strcmp_stricmp__undefined_first_then_error(void **state)
{
    (void)state;
    static const row rows[] = {
        {"strcmp(undefined, \"a\")", "undefined"},
        {"strcmp(undefined, error)", "undefined"},
        {"strcmp(error, \"a\")", "error"},
        {"stricmp(\"a\", error)", "error"},
        {"stricmp(\"a\", undefined)", "undefined"},
        {"strcmp(\"a\")", "error"},
    };
    EXPECT_ALL(rows);
}

static void toupper_tolower__change_ascii_letters_of_the_text(void **state)
{
    (void)state;
    static const row rows[] = {
        {"toUpper(\"abc1_Z\")", "\"ABC1_Z\""},
        {"toLower(\"ABC1_z\")", "\"abc1_z\""},
        {"tolower(\"ALAIN\")", "\"alain\""},
        {"TOUPPER(\"alain\")", "\"ALAIN\""},
        {"toLower(\"\\303\\200BC\")", "\"\\303\\200bc\""},
        {"toLower(true)", "\"true\""},
        {"toLower(12)", "\"12\""},
        {"toUpper(1.5)", "\"1.500000000000000E+00\""},
        {"toUpper({\"a\"})", "\"{ \\\"A\\\" }\""},
        {"toLower(\"\")", "\"\""},
        {"toUpper(undefined)", "undefined"},
        {"toLower(error)", "error"},
        {"toUpper()", "error"},
    };
    EXPECT_ALL(rows);
}

static void version__compares_digit_runs_as_numbers(void **state)
{
    (void)state;
    static const row rows[] = {
        {"versioncmp(\"7.9\", \"7.10\")", "-1"},
        {"versioncmp(\"7.10\", \"7.9\")", "1"},
        {"versioncmp(\"1.0\", \"1.0\")", "0"},
        {"versioncmp(\"a\", \"c\")", "-2"},
        {"versioncmp(\"1.0\", \"1.0a\")", "-97"},
        {"versioncmp(10, 9) > 0", "true"},
        {"versionLT(\"000\", \"00\") && versionLT(\"00\", \"01\") && versionLT(\"01\", \"010\")",
         "true"},
        {"versionLT(\"010\", \"09\") && versionLT(\"09\", \"0\") && versionLT(\"0\", \"1\")",
         "true"},
        {"versionLT(\"1\", \"9\") && versionLT(\"9\", \"10\")", "true"},
        {"versionGT(\"2.0\", \"1.0\")", "true"},
        {"versionGT(\"8.10.1\", \"8.9.12\")", "true"},
        {"versionGE(\"1.2\", \"1.2\")", "true"},
        {"versionGE(\"1.1\", \"1.2\")", "false"},
        {"versionLT(\"1.9\", \"1.10\")", "true"},
        {"versionLE(\"1.2\", \"1.2\")", "true"},
        {"versionLE(\"1.3\", \"1.2\")", "false"},
        {"versionEQ(\"1.02\", \"1.2\")", "false"},
        {"versionEQ(\"1.2\", \"1.2\")", "true"},
        {"version_in_range(\"1.5\", \"1.0\", \"2.0\")", "true"},
        {"version_in_range(\"1.0\", \"1.0\", \"2.0\")", "true"},
        {"version_in_range(\"2.0\", \"1.0\", \"2.0\")", "true"},
        {"version_in_range(\"2.1\", \"1.0\", \"2.0\")", "false"},
        {"version_in_range(\"0.9\", \"1.0\", \"2.0\")", "false"},
        /* adstore resolves names case-insensitively (HTCondor 23: error) */
        {"versiongt(\"2.0\", \"1.0\")", "true"},
    };
    EXPECT_ALL(rows);
}

static void version__undefined_sides_and_errors(void **state)
{
    (void)state;
    static const row rows[] = {
        {"versioncmp(undefined, \"1\")", "undefined"},
        {"versionLT(error, undefined)", "undefined"},
        {"versionGT(\"1\", error)", "error"},
        {"versionEQ(\"1\", {\"1\"})", "false"},
        {"version_in_range(\"1.5\", undefined, \"2\")", "undefined"},
        {"version_in_range(\"1.5\", \"1\", undefined)", "undefined"},
        {"version_in_range(undefined, \"1\", \"2\")", "error"},
        {"version_in_range(error, \"1\", \"2\")", "error"},
        {"version_in_range(\"1\", \"2\")", "error"},
        {"versioncmp(\"1\")", "error"},
    };
    EXPECT_ALL(rows);
}

/* ---- string lists ---- */

static void string_lists_intersect__finds_a_common_item(void **state)
{
    (void)state;
    static const row rows[] = {
        {"stringListsIntersect(\"one,two\", \"two,three\")", "true"},
        {"stringListsIntersect(\"one,two\", \"three,four\")", "false"},
        {"stringListsIntersect(\"one, two\", \"two, three\")", "true"},
        {"stringListsIntersect(\"a;b\", \"c;b\", \";\")", "true"},
        {"stringListsIntersect(\"a;b\", \"b;c\", \"\")", "false"},
        {"stringListsIntersect(\"A\", \"a\")", "false"},
        {"stringListsIntersect(\"\", \"a\")", "false"},
        {"stringListsIntersect(\"a\", \"\")", "false"},
        {"stringListsIntersect(\"a\\t\", \"a\")", "false"},
        {"stringListsIntersect(\"x,y,z,a\", \"q,r,a,s,t\")", "true"},
    };
    EXPECT_ALL(rows);
}

static void string_lists_intersect__error_first_then_undefined_then_types(void **state)
{
    (void)state;
    static const row rows[] = {
        {"stringListsIntersect(\"one,two\", undefined)", "undefined"},
        {"stringListsIntersect(\"a\", \"a\", undefined)", "undefined"},
        {"stringListsIntersect(error, undefined)", "error"},
        {"stringListsIntersect(\"a\", \"a\", 1)", "error"},
        {"stringListsIntersect(1, \"a\")", "error"},
        {"stringListsIntersect(\"a\")", "error"},
    };
    EXPECT_ALL(rows);
}

static void split__cuts_at_separators_keeping_doubled_ones(void **state)
{
    (void)state;
    static const row rows[] = {
        {"split(\"a b c\")", "{\"a\", \"b\", \"c\"}"},
        {"split(\"a,,b\")", "{\"a\", \"\", \"b\"}"},
        {"split(\"a, b\")", "{\"a\", \"b\"}"},
        {"split(\"a ,b\")", "{\"a\", \"b\"}"},
        {"split(\"a\\tb\")", "{\"a\", \"b\"}"},
        {"split(\" a \")", "{\"a\"}"},
        {"split(\",,a\")", "{\"\", \"a\"}"},
        {"split(\"\")", "{}"},
        {"split(\"a;b\", \";\")", "{\"a\", \"b\"}"},
        {"split(\"a b\", \"\")", "{\"a b\"}"},
        {"size(split(\"x,y,z\"))", "3"},
    };
    EXPECT_ALL(rows);
}

static void split__error_unless_strings(void **state)
{
    (void)state;
    static const row rows[] = {
        {"split(1)", "error"},
        {"split(undefined)", "error"},
        {"split(error)", "error"},
        {"split(\"a\", 1)", "error"},
        {"split(\"a\", undefined)", "error"},
        {"split()", "error"},
    };
    EXPECT_ALL(rows);
}

static void string_list_size__counts_non_empty_trimmed_items(void **state)
{
    (void)state;
    static const row rows[] = {
        {"stringListSize(\"a, b,c\")", "3"},
        {"stringListSize(\"\")", "0"},
        {"stringListSize(\" , ,\")", "0"},
        {"stringListSize(\"a b\")", "2"},
        {"stringListSize(\"a\\tb\")", "1"},
        {"stringListSize(\"a;b;;c\", \";\")", "3"},
        {"stringListSize(\"a, b\", \"\")", "1"},
        {"stringListSize(undefined)", "error"},
        {"stringListSize(1)", "error"},
        {"stringListSize(\"a\", 1)", "error"},
        {"stringListSize(\"a\", undefined)", "error"},
    };
    EXPECT_ALL(rows);
}

static void string_list_numbers__sum_avg_min_max_of_items(void **state)
{
    (void)state;
    static const row rows[] = {
        {"stringListSum(\"1,2,3\")", "6"},
        {"stringListSum(\"1, 2.5\")", "3.5"},
        {"stringListSum(\"1e2\")", "100.0"},
        {"stringListSum(\"12abc\")", "12.0"},
        {"stringListSum(\"+5, -2\")", "3"},
        {"stringListSum(\"\")", "0.0"},
        {"stringListSum(\"9223372036854775807\")", "9223372036854775807"},
        {"stringListSum(\"-9223372036854775808\")", "-9223372036854775807 - 1"},
        {"stringListSum(\"99999999999999999999, 0.5\")", "1e20"},
        {"stringListSum(\"1;2\", \";\")", "3"},
        /* HTCondor: an all-integer average is an integer, truncated */
        {"stringListAvg(\"1,2\")", "1"},
        {"stringListAvg(\"-1,-2\")", "-1"},
        {"stringListAvg(\"1.0,2\")", "1.5"},
        {"stringListAvg(\"\")", "0.0"},
        {"stringListMin(\"3,1,2\")", "1"},
        {"stringListMin(\"3,1.5,2\")", "1.5"},
        {"stringListMin(\"\")", "undefined"},
        {"stringListMin(\"5e40\")", "5e40"},
        {"stringListMax(\"-5,-3\")", "-3"},
        {"stringListMax(\"1.5, 2\")", "2.0"},
        {"stringListMax(\" , \")", "undefined"},
        {"stringListMax(\"1;5;3\", \";\")", "5"},
    };
    EXPECT_ALL(rows);
}

static void string_list_numbers__error_for_non_numbers_overflow_and_non_strings(void **state)
{
    (void)state;
    static const row rows[] = {
        {"stringListSum(\"1,x\")", "error"},
        {"stringListAvg(\"-\")", "error"},
        {"stringListMin(\"+-1\")", "error"},
        {"stringListSum(\"9223372036854775807,1\")", "error"},
        {"stringListSum(\"99999999999999999999\")", "error"},
        {"stringListAvg(\"9223372036854775807,9223372036854775807\")", "error"},
        {"stringListSum(undefined)", "error"},
        {"stringListAvg(1)", "error"},
        {"stringListMin(\"1\", 1)", "error"},
        {"stringListMax(error)", "error"},
        {"stringListSum()", "error"},
    };
    EXPECT_ALL(rows);
}

static void string_list_member__finds_trimmed_items(void **state)
{
    (void)state;
    static const row rows[] = {
        {"stringListMember(\"b\", \"a, b, c\")", "true"},
        {"stringListMember(\"d\", \"a, b, c\")", "false"},
        {"stringListMember(\"B\", \"a,b\")", "false"},
        {"stringListIMember(\"B\", \"a,b\")", "true"},
        {"stringListMember(\"a\", \"a\\tb\")", "true"},
        {"stringListMember(\"a b\", \"a b,c\")", "false"},
        {"stringListMember(\"\", \"a\")", "false"},
        {"stringListMember(\"a\", \"a;b\", \";\")", "true"},
        {"stringListMember(\"a\", \"a;b\", undefined)", "false"},
        {"stringListMember(undefined, \"a\")", "false"},
        {"stringListMember(\"a\", undefined)", "false"},
        {"stringListMember(undefined, undefined)", "undefined"},
        {"stringListMember(1, \"1\")", "error"},
        {"stringListMember(\"a\", error)", "error"},
        {"stringListIMember(\"a\", \"a\", 1)", "error"},
        {"stringListMember(\"a\")", "error"},
    };
    EXPECT_ALL(rows);
}

static void string_list_subset_match__every_item_in_the_other_list(void **state)
{
    (void)state;
    static const row rows[] = {
        {"stringListSubsetMatch(\"a,b\", \"b,c,a\")", "true"},
        {"stringListSubsetMatch(\"a,a\", \"a\")", "true"},
        {"stringListSubsetMatch(\"a,d\", \"a,b\")", "false"},
        {"stringListSubsetMatch(\"\", \"a\")", "true"},
        {"stringListSubsetMatch(undefined, \"a\")", "true"},
        {"stringListSubsetMatch(\"a\", undefined)", "false"},
        {"stringListSubsetMatch(undefined, undefined)", "undefined"},
        {"stringListSubsetMatch(\"A\", \"a\")", "false"},
        {"stringListISubsetMatch(\"A, B\", \"a,b,c\")", "true"},
        {"stringListISubsetMatch(\"A, D\", \"a,b,c\")", "false"},
        {"stringListSubsetMatch(\"a;b\", \"b;a\", \";\")", "true"},
        /* as HTCondor: a list of only delimiters has no item that matches */
        {"stringListSubsetMatch(\",\", \"a\")", "false"},
        {"stringListSubsetMatch(1, \"a\")", "error"},
        {"stringListSubsetMatch(\"a\", \"a\", error)", "error"},
    };
    EXPECT_ALL(rows);
}

static void string_list_regexp_member__matches_items(void **state)
{
    (void)state;
    static const row rows[] = {
        {"stringList_regexpMember(\"^b\", \"a, bc\")", "true"},
        {"stringList_regexpMember(\"^x\", \"a, b\")", "false"},
        {"stringList_regexpMember(\"^b$\", \"a;b\", \";\")", "true"},
        {"stringList_regexpMember(\"B\", \"a,b\", \",\", \"I\")", "true"},
        {"stringList_regexpMember(\"B\", \"a,b\", \",\", \"i\")", "true"},
        {"stringList_regexpMember(\"B\", \"a,b\", \",\", \"\")", "false"},
        {"stringList_regexpMember(\"a\", \"\")", "undefined"},
        {"stringList_regexpMember(\"(\", \"a\")", "error"},
        {"stringList_regexpMember(\"(\", \"\")", "error"},
        {"stringList_regexpMember(1, \"a\")", "error"},
        {"stringList_regexpMember(\"a\", undefined)", "error"},
        {"stringList_regexpMember(\"a\", \"a\", 1)", "error"},
        {"stringList_regexpMember(\"a\")", "error"},
    };
    EXPECT_ALL(rows);
}

/* ---- regular expressions ---- */

static void regexp__searches_with_the_options(void **state)
{
    (void)state;
    static const row rows[] = {
        {"regexp(\"Alain.*Roy\", \"Alain Aslag Roy\")", "true"},
        {"regexp(\"alain.*roy\", \"Alain Aslag Roy\")", "false"},
        {"regexp(\"b\", \"abc\")", "true"},
        {"regexp(\"^b\", \"abc\")", "false"},
        {"regexp(\".*\\\\.cs\\\\.wisc\\\\.edu\", \"beak.cs.wisc.edu\")", "true"},
        {"regexp(\"\", \"\")", "true"},
        {"regexp(\"abc\", \"xABCx\", \"i\")", "true"},
        /* fnCall.cpp reads lower-case option letters only */
        {"regexp(\"abc\", \"ABC\", \"I\")", "false"},
        {"regexp(\"^b$\", \"a\\nb\")", "false"},
        {"regexp(\"^b$\", \"a\\nb\", \"m\")", "true"},
        {"regexp(\"a.b\", \"a\\nb\")", "false"},
        {"regexp(\"a.b\", \"a\\nb\", \"s\")", "true"},
        {"regexp(\"a b # comment\", \"ab\", \"x\")", "true"},
        {"regexp(\"a b\", \"ab\")", "false"},
        {"regexp(\"a\", \"a\", \"qz\")", "true"},
        {"regexp(\"(\\\\d+)-\\\\1\", \"12-12\")", "true"},
        {"REGEXP(\"a\", \"a\")", "true"},
    };
    EXPECT_ALL(rows);
}

static void regexp__error_for_bad_patterns_and_non_strings(void **state)
{
    (void)state;
    static const row rows[] = {
        {"regexp(\"(\", \"abc\")", "error"},
        {"regexp(\"[\", \"abc\")", "error"},
        {"regexp(\"a{2,1}\", \"abc\")", "error"},
        {"regexp(1, \"abc\")", "error"},
        {"regexp(\"a\", {\"a\"})", "error"},
        {"regexp(\"a\", \"a\", 1)", "error"},
        {"regexp(\"a\", undefined)", "undefined"},
        {"regexp(undefined, 1)", "undefined"},
        {"regexp(\"a\", \"a\", undefined)", "undefined"},
        {"regexp(error, undefined)", "error"},
        {"regexp(\"a\", \"a\", error)", "error"},
        {"regexp(\"a\")", "error"},
        {"regexp(\"a\", \"a\", \"i\", \"x\")", "error"},
    };
    EXPECT_ALL(rows);
}

static void regexp__match_limit_turns_catastrophic_backtracking_into_error(void **state)
{
    (void)state;
    /* without a limit each of these would run for longer than the universe */
    expect_long("regexp(\"(a+)+$\", %s)", 'a', 64, "!", "error");
    expect_long("regexp(\"(a|aa)+$\", %s)", 'a', 200, "!", "error");
    expect_long("regexpMember(\"(a+)+$\", {\"b\", %s})", 'a', 64, "!", "error");
    expect_long("regexps(\"(a+)+$\", %s, \"x\")", 'a', 64, "!", "error");
    expect_long("replaceAll(\"(a+)+$\", %s, \"x\")", 'a', 64, "!", "error");
    expect_long("stringList_regexpMember(\"(a+)+$\", %s)", 'a', 64, "!", "error");
    /* while ordinary patterns on long targets are within the limits */
    expect_long("regexp(\"b$\", %s)", 'a', 100000, "b", "true");
    expect_long("regexp(\"^(a|b)*c$\", %s)", 'a', 20000, "c", "true");
    expect_long("regexp(\"^a*$\", %s)", 'a', 1000000, "", "true");
    expect_long("size(replaceAll(\"a\", %s, \"bb\"))", 'a', 10000, "", "20000");
}

/* Patterns are kept compiled per thread (classad/regex.c): the same results
 * the first time and every later time, options kept apart, the limits
 * still in force once a pattern is kept (and compiled to machine code),
 * and more patterns than the cache holds. */
static void regexp__kept_patterns_give_the_same_results(void **state)
{
    (void)state;
    for (int round = 0; round < 3; round++) {
        expect("regexp(\"^AB\", \"abc\")", "false");
        expect("regexp(\"^AB\", \"abc\", \"i\")", "true");
        expect("regexp(\"^AB\", \"abc\")", "false");
        expect("regexps(\"(b)(c)\", \"abc\", \"\\\\2\\\\1\")", "\"cb\"");
        expect("regexp(\"(\", \"a\")", "error");
        expect_long("regexp(\"(a+)+$\", %s)", 'a', 64, "!", "error");
        expect_long("regexp(\"b$\", %s)", 'a', 100000, "b", "true");
    }
    /* more distinct patterns than are kept, twice over: each still right */
    char expr[96], want[8];
    for (int round = 0; round < 2; round++)
        for (int i = 0; i < 3 * ADS_REGEX_CACHE_ENTRIES; i++) {
            snprintf(expr, sizeof expr, "regexp(\"^x%d$\", \"x%d\")", i, (i * 7) % 50);
            snprintf(want, sizeof want, "%s", i == (i * 7) % 50 ? "true" : "false");
            expect(expr, want);
        }
}

/* Threads each keep their own patterns: the same pattern matched from four
 * threads at once gives each its right answers. */
typedef struct regex_job {
    const char *subject;
    bool want;
} regex_job;

static void *regex_thread(void *arg)
{
    const regex_job *job = arg;
    const char *subject = job->subject;
    ads_arena *a = ads_arena_new(), *ea = ads_arena_new();
    const ads_expr *e;
    char text[96];
    long bad = 0;
    snprintf(text, sizeof text, "regexp(\"^slot[0-9]+@node0[0-4]\", \"%s\")", subject);
    if (!a || !ea || ads_expr_parse(&e, a, text, strlen(text), NULL)) {
        ads_arena_free(a);
        ads_arena_free(ea);
        return (void *)1;
    }
    bool want = job->want;
    for (int i = 0; i < 2000; i++) {
        ads_value v;
        if (ads_expr_eval(&v, e, NULL, ea) || v.type != ADS_BOOLEAN || v.u.b != want)
            bad++;
        ads_arena_reset(ea);
    }
    ads_arena_free(ea);
    ads_arena_free(a);
    return (void *)bad;
}

static void regexp__kept_patterns_are_per_thread(void **state)
{
    (void)state;
    static const regex_job jobs[4] = {
        {"slot1@node01", true}, {"slot9@node07", false}, {"x", false}, {"slot22@node04.x", true}};
    pthread_t th[4];
    for (int i = 0; i < 4; i++)
        assert_int_equal(pthread_create(&th[i], NULL, regex_thread, (void *)&jobs[i]), 0);
    for (int i = 0; i < 4; i++) {
        void *bad;
        assert_int_equal(pthread_join(th[i], &bad), 0);
        assert_null(bad);
    }
}

static void regexp_member__matches_some_string_member(void **state)
{
    (void)state;
    static const row rows[] = {
        {"regexpMember(\"b.*\", {})", "false"},
        {"regexpMember(\"b.*\", {\"bb\", \"aa\"})", "true"},
        {"regexpMember(\"b.*\", {\"aa\"})", "false"},
        {"regexpMember(\"b.*\", {undefined, \"aa\"})", "undefined"},
        {"regexpMember(\"a\", {\"b\", undefined, \"a\"})", "true"},
        {"regexpMember(\"A\", {\"a\"}, \"i\")", "true"},
        {"regexpMember(\"a\", {\"a\", 1})", "true"},
        {"regexpMember(\"b.*\", {1, \"bb\"})", "error"},
        {"regexpMember(\"a\", {\"b\", error})", "error"},
        {"regexpMember(\"(\", {})", "error"},
        {"regexpMember(\"(\", {\"a\"})", "error"},
        {"regexpMember(\"a\", undefined)", "undefined"},
        {"regexpMember(\"a\", \"a\")", "error"},
        {"regexpMember(1, {\"a\"})", "error"},
        {"regexpMember(\"a\", {\"a\"}, 1)", "error"},
        {"regexpMember(\"a\", {\"a\"}, undefined)", "undefined"},
    };
    EXPECT_ALL(rows);
}

static void regexps__expands_groups_in_the_replacement(void **state)
{
    (void)state;
    static const row rows[] = {
        {"regexps(\"[abc]*([def]*)[ghi]*\", \"aaaabbbbcccccdddeeefffggghhhiii\", \"\\\\1\")",
         "\"dddeeefff\""},
        {"regexps(\"[abc]*([def]*)[ghi]*\", \"abcdefghi\", \"\\\\0\")", "\"abcdefghi\""},
        {"regexps(\"[abc]*([def]*)[ghi]*\", \"NO\", \"\\\\0\")", "\"\""},
        {"regexps(\"foo (bar)\", \"foo bar\", \"\\\\1\")", "\"bar\""},
        {"regexps(\"(a)?(b)\", \"b\", \"[\\\\1]\")", "\"[]\""},
        {"regexps(\"b\", \"abc\", \"x\\\\y\\\\\")", "\"x\\\\y\\\\\""},
        {"regexps(\"b\", \"abc\", \"x\")", "\"x\""},
        {"regexps(\"z\", \"abc\", \"x\")", "\"\""},
        {"regexps(\"b\", \"abc\", \"x\", \"f\")", "\"axc\""},
        {"regexps(\"z\", \"abc\", \"x\", \"f\")", "\"abc\""},
        {"regexps(\"b\", \"abcb\", \"x\", \"fg\")", "\"axcx\""},
        {"regexps(\"b\", \"abcb\", \"x\", \"g\")", "\"xx\""},
        {"regexps(\"B\", \"abc\", \"x\", \"if\")", "\"axc\""},
    };
    EXPECT_ALL(rows);
}

static void regexps__error_for_missing_groups_and_bad_arguments(void **state)
{
    (void)state;
    static const row rows[] = {
        {"regexps(\"[abc]*([def]*)[ghi]*\", \"abcdefghi\", \"\\\\2\")", "error"},
        {"regexps(\"(a)(b)?\", \"ac\", \"\\\\2\")", "error"},
        {"regexps(\"a\", \"a\", \"\\\\1\")", "error"},
        {"regexps(\"(\", \"a\", \"b\")", "error"},
        {"regexps(\"a\", \"a\", 1)", "error"},
        {"regexps(\"a\", 1, \"b\")", "error"},
        {"regexps(\"a\", undefined, \"b\")", "undefined"},
        {"regexps(\"a\", \"a\", \"b\", undefined)", "undefined"},
        {"regexps(\"a\", \"a\", \"b\", 1)", "error"},
        {"regexps(\"a\", \"a\", error)", "error"},
        {"regexps(\"a\", \"a\")", "error"},
    };
    EXPECT_ALL(rows);
}

static void replace_replaceall__substitute_first_or_every_match(void **state)
{
    (void)state;
    static const row rows[] = {
        {"replace(\"b\", \"abcb\", \"x\")", "\"axcb\""},
        {"replaceAll(\"b\", \"abcb\", \"x\")", "\"axcx\""},
        {"replace(\"z\", \"abc\", \"x\")", "\"abc\""},
        {"replaceAll(\"z\", \"abc\", \"x\")", "\"abc\""},
        {"replace(\"B\", \"abc\", \"x\", \"i\")", "\"axc\""},
        {"replace(\"b\", \"abcb\", \"x\", \"g\")", "\"axcx\""},
        {"replaceAll(\"(\\\\w+)@(\\\\w+)\", \"a@b c@d\", \"\\\\2@\\\\1\")", "\"b@a d@c\""},
        /* empty matches: the usual global-substitution rule */
        {"replaceAll(\"a*\", \"baaac\", \"-\")", "\"-b--c-\""},
        {"replaceAll(\"x*\", \"\", \"-\")", "\"-\""},
        {"replaceAll(\"x*?\", \"xx\", \"-\")", "\"-----\""},
        {"replace(\"x*\", \"abc\", \"-\")", "\"-abc\""},
        {"replaceAll(\"$\", \"ab\", \"!\")", "\"ab!\""},
        {"replaceAll(\"^\", \"a\\nb\", \"> \", \"m\")", "\"> a\\n> b\""},
        {"replaceAll(\"(a)|(b)\", \"ab\", \"[\\\\1]\")", "\"[a][]\""},
    };
    EXPECT_ALL(rows);
}

static void replace_replaceall__error_and_undefined_arguments(void **state)
{
    (void)state;
    static const row rows[] = {
        {"replace(\"(\", \"a\", \"b\")", "error"},
        {"replace(\"a\", \"a\", 1)", "error"},
        {"replaceAll(\"a\", undefined, \"b\")", "undefined"},
        {"replaceAll(\"a\", \"a\", \"b\", undefined)", "undefined"},
        {"replaceAll(\"a\", \"a\", \"b\", 1)", "error"},
        {"replaceAll(\"a\", \"a\", \"\\\\3\")", "error"},
        {"replace(error, undefined, \"b\")", "error"},
        {"replaceAll(\"a\", \"a\")", "error"},
    };
    EXPECT_ALL(rows);
}

/* ---- lists ---- */

static void member__compares_with_equals_or_is(void **state)
{
    (void)state;
    static const row rows[] = {
        {"member(1, {1, 2, 3})", "true"},
        {"member(4, {1, 2, 3})", "false"},
        {"member(\"A\", {\"a\", \"b\"})", "true"},
        {"member(1, {1.0})", "true"},
        {"member(\"a\", {\"b\", 1, \"A\"})", "true"},
        {"member(1, {})", "false"},
        {"member(true, {1})", "true"},
        {"identicalMember(\"A\", {\"a\"})", "false"},
        {"identicalMember(1, {1.0})", "false"},
        {"identicalMember(1, {2, 1})", "true"},
        {"identicalMember(undefined, {undefined})", "true"},
        {"identicalMember(undefined, {1})", "false"},
        {"identicalMember(error, {error})", "true"},
    };
    EXPECT_ALL(rows);
}

static void member__undefined_and_error_arguments(void **state)
{
    (void)state;
    static const row rows[] = {
        {"member(undefined, {1})", "undefined"},
        {"member(1, undefined)", "undefined"},
        {"identicalMember(error, undefined)", "undefined"},
        {"member({1}, {{1}})", "error"},
        {"member([a = 1], {1})", "error"},
        {"identicalMember({1}, {1})", "error"},
        {"member(error, {1})", "error"},
        {"member(1, error)", "error"},
        {"member(1, \"abc\")", "error"},
        {"member(1)", "error"},
    };
    EXPECT_ALL(rows);
    ads_value v = eval_in("[foo = 3]", "member(foo, {1, 2, 3})");
    assert_int_equal(v.type, ADS_BOOLEAN);
    assert_true(v.u.b);
}

static void sum_avg__add_numbers_skipping_undefined(void **state)
{
    (void)state;
    static const row rows[] = {
        {"sum({})", "0"},
        {"sum({1, undefined, 2})", "3"},
        {"sum({undefined})", "0"},
        {"sum({true, true})", "2"},
        {"sum({1, 2.5})", "3.5"},
        {"sum({9223372036854775807, 1})", "-9223372036854775807 - 1"},
        /* as HTCondor: the sum starts from the first member itself */
        {"sum({true})", "true"},
        {"avg({1})", "1.0"},
        {"avg({1, 2, 3, 4, 5})", "3.0"},
        {"avg({1, undefined, 2})", "1.5"},
        {"avg({true, false})", "0.5"},
        /* as HTCondor's code: no numbers averages to the integer 0 */
        {"avg({})", "0"},
        {"avg({undefined})", "0"},
        {"sum(undefined)", "undefined"},
        {"avg(undefined)", "undefined"},
    };
    EXPECT_ALL(rows);
    ads_value v = eval_in("[Set = {1, 2, 3}]", "sum(Set)");
    assert_int_equal(v.type, ADS_INTEGER);
    assert_int_equal(v.u.i, 6);
}

static void sum_avg__error_for_non_numbers(void **state)
{
    (void)state;
    static const row rows[] = {
        {"sum({1, \"a\"})", "error"},
        {"sum({error})", "error"},
        {"sum({[a = 1]})", "error"},
        {"sum({{1}})", "error"},
        {"avg({1, \"a\"})", "error"},
        {"sum(1)", "error"},
        {"avg(\"a\")", "error"},
        {"sum(error)", "error"},
        {"sum({1}, {2})", "error"},
    };
    EXPECT_ALL(rows);
}

static void min_max__least_and_greatest_number(void **state)
{
    (void)state;
    static const row rows[] = {
        {"max({})", "undefined"},
        {"min({undefined})", "undefined"},
        {"min({1})", "1"},
        {"max({1, 2, 3, 4, 5})", "5"},
        {"min({3, 1.5, 2})", "1.5"},
        {"min({2, undefined, 1})", "1"},
        {"max({1, 2.5, 2})", "2.5"},
        {"max({-1, -7})", "-1"},
        {"max({false, true})", "true"},
        /* the member that wins, as it is (HTCondor's code; its
         * documentation says a real when any member is a real) */
        {"max({2, 0.5, 1})", "2"},
        {"min({0.5, 2, 1})", "0.5"},
        {"min({2, 3.5})", "2"},
        {"max({true, 0.5})", "true"},
        {"max({2, undefined, 1.0})", "2"},
        {"max({1.0, 2})", "2"},
        /* of equal ones, the first */
        {"isInteger(max({1, 1.0}))", "true"},
        {"isReal(min({1.0, 1}))", "true"},
        /* sum and avg: a real if any member is */
        {"sum({2, 0.5})", "2.5"},
        {"sum({2, 1.0})", "3.0"},
        {"avg({2, 4})", "3.0"},
        {"min(undefined)", "undefined"},
        {"max({\"a\"})", "error"},
        {"min({1, error})", "error"},
        {"max(\"a\")", "error"},
        {"min(error)", "error"},
        {"min()", "error"},
    };
    EXPECT_ALL(rows);
}

static void any_all_compare__test_members_against_a_value(void **state)
{
    (void)state;
    static const row rows[] = {
        {"allcompare(\"<\", {}, 3)", "true"},
        {"anycompare(\"<\", {}, 3)", "false"},
        {"anycompare(\"<\", {1}, 3)", "true"},
        {"allcompare(\"<\", {1, 2, 3, 4, 5}, 3)", "false"},
        {"anycompare(\"<=\", {5, 3}, 3)", "true"},
        {"allcompare(\">=\", {5, 3}, 3)", "true"},
        {"allcompare(\">\", {5, 3}, 3)", "false"},
        {"anycompare(\"!=\", {3}, 3)", "false"},
        {"anycompare(\"==\", {1, 2, 3}, 2)", "true"},
        {"anycompare(\"is\", {1, \"a\"}, \"a\")", "true"},
        {"anycompare(\"is\", {1, \"A\"}, \"a\")", "false"},
        {"anycompare(\"isnt\", {1}, 1)", "false"},
        {"allcompare(\"isnt\", {1, 2}, 3)", "true"},
        {"allcompare(\"is\", {undefined}, undefined)", "true"},
        {"anycompare(\"==\", {1, undefined}, 1)", "true"},
        /* as HTCondor: an undefined comparison ends the scan with false */
        {"anycompare(\"==\", {undefined, 1}, 1)", "false"},
        {"allcompare(\"==\", {1, undefined}, 1)", "false"},
        {"anycompare(\"<\", {1}, undefined)", "false"},
    };
    EXPECT_ALL(rows);
    ads_value v = eval_in("[Set = {1, 2, 3}]", "allcompare(\">\", Set, 100)");
    assert_int_equal(v.type, ADS_BOOLEAN);
    assert_false(v.u.b);
}

static void any_all_compare__error_for_bad_operator_list_or_comparison(void **state)
{
    (void)state;
    static const row rows[] = {
        {"anycompare(\"~\", {1}, 1)", "error"},
        {"anycompare(\"IS\", {1}, 1)", "error"},
        {"anycompare(\"\", {1}, 1)", "error"},
        {"anycompare(1, {1}, 1)", "error"},
        {"anycompare(error, {1}, 1)", "error"},
        {"anycompare(\"<\", 1, 1)", "error"},
        {"anycompare(\"<\", error, 1)", "error"},
        {"anycompare(\"<\", {\"a\"}, 1)", "error"},
        {"allcompare(\"==\", {1}, error)", "error"},
        {"anycompare(undefined, {1}, 1)", "undefined"},
        {"anycompare(\"<\", undefined, 1)", "undefined"},
        {"anycompare(\"<\", {1})", "error"},
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
        T(strcat__joins_texts_and_propagates_undefined_and_error),
        T(floor_ceiling_round__round_numbers_and_pass_integers),
        T(floor_ceiling_round__error_for_undefined_non_numbers_and_out_of_range),
        T(pow__integer_power_of_integers_real_otherwise),
        T(pow__error_on_integer_overflow_and_non_numbers),
        T(quantize__rounds_up_to_multiples_and_list_members),
        T(quantize__error_for_non_numbers_and_overflow),
        T(random__draws_integers_and_reals_in_range),
        T(random__error_for_non_positive_and_non_numbers),
        T(join__puts_separator_between_items_and_skips_undefined),
        T(join__undefined_when_nothing_defined_and_error_for_error),
        T(substr__takes_perl_like_offsets_and_lengths),
        T(substr__undefined_before_type_errors),
        T(strcmp_stricmp__order_texts_as_minus_one_zero_one),
        T(strcmp_stricmp__undefined_first_then_error),
        T(toupper_tolower__change_ascii_letters_of_the_text),
        T(version__compares_digit_runs_as_numbers),
        T(version__undefined_sides_and_errors),
        T(string_lists_intersect__finds_a_common_item),
        T(string_lists_intersect__error_first_then_undefined_then_types),
        T(split__cuts_at_separators_keeping_doubled_ones),
        T(split__error_unless_strings),
        T(string_list_size__counts_non_empty_trimmed_items),
        T(string_list_numbers__sum_avg_min_max_of_items),
        T(string_list_numbers__error_for_non_numbers_overflow_and_non_strings),
        T(string_list_member__finds_trimmed_items),
        T(string_list_subset_match__every_item_in_the_other_list),
        T(string_list_regexp_member__matches_items),
        T(regexp__searches_with_the_options),
        T(regexp__error_for_bad_patterns_and_non_strings),
        T(regexp__match_limit_turns_catastrophic_backtracking_into_error),
        T(regexp__kept_patterns_give_the_same_results),
        T(regexp__kept_patterns_are_per_thread),
        T(regexp_member__matches_some_string_member),
        T(regexps__expands_groups_in_the_replacement),
        T(regexps__error_for_missing_groups_and_bad_arguments),
        T(replace_replaceall__substitute_first_or_every_match),
        T(replace_replaceall__error_and_undefined_arguments),
        T(member__compares_with_equals_or_is),
        T(member__undefined_and_error_arguments),
        T(sum_avg__add_numbers_skipping_undefined),
        T(sum_avg__error_for_non_numbers),
        T(min_max__least_and_greatest_number),
        T(any_all_compare__test_members_against_a_value),
        T(any_all_compare__error_for_bad_operator_list_or_comparison),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
