/*
 * tests/base/test_num.c: numbers read and written the same under any locale
 * (issue 10 item 5). A program embedding adstore may call setlocale(LC_ALL,
 * ""); under LC_NUMERIC=de_DE.UTF-8 strtod stops at '.' and printf writes
 * "2,25". Each test runs with LC_NUMERIC set to de_DE.UTF-8 (tools/setup.sh
 * makes it) and asserts the "C" results: the helpers of base/num.h, then the
 * ClassAd parser, evaluator, built-ins, unparser, text forms and MessagePack
 * codec, and the error messages.
 */
#include <locale.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/num.h"
#include "classad/classad.h"
#include "classad/formats.h"
#include "classad/msgpack.h"

static ads_arena *arena;

static int setup(void **state)
{
    (void)state;
    if (!setlocale(LC_NUMERIC, "de_DE.UTF-8") && !setlocale(LC_NUMERIC, "de_DE.utf8"))
        return -1;
    arena = ads_arena_new();
    return arena ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    ads_arena_free(arena);
    setlocale(LC_NUMERIC, "C");
    return 0;
}

/* Each test starts by checking that the locale really uses a comma, so that
 * it tests something. */
static void comma_locale_is_in_effect(void)
{
    char t[16];
    snprintf(t, sizeof t, "%.2f", 2.25);
    assert_string_equal(t, "2,25");
    assert_true(strtod("1.5", NULL) == 1.0);
}

static void num__helpers_use_the_c_locale(void **state)
{
    (void)state;
    comma_locale_is_in_effect();
    char *end, t[32];
    const char *s = "1.5e3x";
    assert_true(ads_strtod_c(s, &end) == 1500.0);
    assert_ptr_equal(end, s + 5);
    assert_int_equal(ads_snprintf_c(t, sizeof t, "%.2f %g %E", 2.25, 0.5, 1.5), 21);
    assert_string_equal(t, "2.25 0.5 1.500000E+00");
    ads_buf b = ADS_BUF_INIT;
    ads_buf_printf(&b, "%.3f", 0.125);
    assert_string_equal(ads_buf_cstr(&b), "0.125");
    ads_buf_free(&b);
    ads_error err;
    ads_error_set(&err, ADS_ELIMIT, "limit of %g s", 2.5);
    assert_string_equal(err.message, "limit of 2.5 s");
    /* the caller's locale is left as it was */
    comma_locale_is_in_effect();
}

static const char *value_text(const char *expr, const char *ctx, bool condor)
{
    const ads_expr *e;
    const ads_record *r = NULL;
    ads_error err;
    ads_value v;
    if (ads_expr_parse(&e, arena, expr, strlen(expr), &err))
        fail_msg("'%s': %s", expr, err.message);
    if (ctx && ads_record_parse(&r, arena, ctx, strlen(ctx), &err))
        fail_msg("'%s': %s", ctx, err.message);
    ads_view view = ads_record_view(r, NULL);
    assert_int_equal(ads_expr_eval(&v, e, r ? &view : NULL, arena), 0);
    ads_buf b = ADS_BUF_INIT;
    if (condor)
        ads_value_unparse_condor(&b, &v);
    else
        ads_value_unparse(&b, &v);
    char *t = ads_arena_strndup(arena, ads_buf_cstr(&b), b.len);
    ads_buf_free(&b);
    return t;
}

static void num__classads_read_evaluate_and_write_reals_as_in_c(void **state)
{
    (void)state;
    comma_locale_is_in_effect();
    assert_string_equal(value_text("1.5 * 2 + 0.25", NULL, false), "3.25");
    assert_string_equal(value_text("2.25", NULL, false), "2.25");
    assert_string_equal(value_text("2.0", NULL, false), "2.0");
    assert_string_equal(value_text("1e-3", NULL, false), "0.001");
    assert_string_equal(value_text("2.25", NULL, true), "2.250000000000000E+00");
    assert_string_equal(value_text("string(2.25)", NULL, false), "\"2.250000000000000E+00\"");
    assert_string_equal(value_text("real(\"2.5\") + int(\"3\")", NULL, false), "5.5");
    assert_string_equal(value_text("stringListSum(\"1.5, 2.25\")", NULL, false), "3.75");
    assert_string_equal(value_text("relTime(\"1.5\")", NULL, false), "`1.5s`");
    assert_string_equal(value_text("`1.5s` + `2.25s`", NULL, false), "`3.75s`");
    assert_string_equal(value_text("x * 2", "[ x = 0.75 ]", false), "1.5");
    ads_buf b = ADS_BUF_INIT;
    ads_value r = ads_real(2.25);
    ads_value_unparse(&b, &r);
    assert_string_equal(ads_buf_cstr(&b), "2.25");
    ads_buf_free(&b);
}

static const ads_record *read_json(const char *text)
{
    ads_json_reader *r;
    const ads_record *rec;
    ads_error err;
    int line;
    assert_int_equal(ads_json_reader_new(&r, text, strlen(text), &err), 0);
    if (ads_json_reader_next(&rec, &line, r, arena, &err) != 1)
        fail_msg("JSON: %s", err.message);
    ads_json_reader_free(r);
    return rec;
}

static const ads_record *read_long(const char *text)
{
    ads_long_reader *r;
    const ads_record *rec;
    ads_error err;
    int line;
    assert_int_equal(ads_long_reader_new(&r, text, strlen(text), &err), 0);
    if (ads_long_reader_next(&rec, &line, r, arena, &err) != 1)
        fail_msg("long: %s", err.message);
    ads_long_reader_free(r);
    return rec;
}

static const ads_record *read_xml(const char *text)
{
    ads_xml_reader *r;
    const ads_record *rec;
    ads_error err;
    int line;
    assert_int_equal(ads_xml_reader_new(&r, text, strlen(text), &err), 0);
    if (ads_xml_reader_next(&rec, &line, r, arena, &err) != 1)
        fail_msg("XML: %s", err.message);
    ads_xml_reader_free(r);
    return rec;
}

static double real_of(const ads_record *r, const char *name)
{
    ads_value v;
    assert_int_equal(ads_record_eval_attr(&v, r, name, strlen(name), arena), 0);
    assert_int_equal(v.type, ADS_REAL);
    return v.u.r;
}

static void num__text_forms_and_msgpack_read_and_write_reals_as_in_c(void **state)
{
    (void)state;
    comma_locale_is_in_effect();
    assert_true(real_of(read_json("{\"x\": 1.5, \"y\": -2.5e-1}\n"), "x") == 1.5);
    assert_true(real_of(read_json("{\"x\": 1.5, \"y\": -2.5e-1}\n"), "y") == -0.25);
    assert_true(real_of(read_long("x = 1.5\ny = x + 0.25\n\n"), "y") == 1.75);
    assert_true(real_of(read_xml("<classads><c><a n=\"x\"><r>1.5</r></a></c></classads>"), "x") ==
                1.5);
    const ads_record *rec;
    const char *text = "[ x = 2.25; y = x + 0.5 ]";
    assert_int_equal(ads_record_parse(&rec, arena, text, strlen(text), NULL), 0);
    ads_buf b = ADS_BUF_INIT;
    ads_error err;
    assert_int_equal(ads_json_write(&b, rec, 0, &err), 0);
    assert_non_null(strstr(ads_buf_cstr(&b), "2.25"));
    assert_non_null(strstr(ads_buf_cstr(&b), "x + 0.5"));
    ads_buf_clear(&b);
    assert_int_equal(ads_long_write(&b, rec, &err), 0);
    assert_string_equal(ads_buf_cstr(&b), "x = 2.25\ny = x + 0.5\n\n");
    ads_buf_clear(&b);
    assert_int_equal(ads_msgpack_encode_record(&b, rec, &err), 0);
    const ads_record *back;
    assert_int_equal(ads_msgpack_decode_record(&back, arena, b.p, b.len, 0, &err), 0);
    assert_true(real_of(back, "x") == 2.25);
    assert_true(real_of(back, "y") == 2.75);
    ads_buf_free(&b);
}

int main(void)
{
    /* the test means nothing without a comma-decimal locale: say so, and
     * skip, only when the system genuinely cannot provide one */
    if (!setlocale(LC_NUMERIC, "de_DE.UTF-8") && !setlocale(LC_NUMERIC, "de_DE.utf8")) {
        printf("[  SKIPPED ] test_num: the locale de_DE.UTF-8 does not exist "
               "(tools/setup.sh makes it: localedef -i de_DE -f UTF-8 de_DE.UTF-8)\n");
        return 77;
    }
    setlocale(LC_NUMERIC, "C");
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(num__helpers_use_the_c_locale),
        T(num__classads_read_evaluate_and_write_reals_as_in_c),
        T(num__text_forms_and_msgpack_read_and_write_reals_as_in_c),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
