/*
 * tests/classad/test_builtins_string.c: the string built-ins of builtins_string.c,
 * through parse and evaluate, including every error path a user can reach.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <locale.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "classad/classad.h"

static ads_arena *arena;

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
    return 0;
}

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

static void strcat__joins_texts_and_propagates_undefined_and_error(void **state)
{
    (void)state;
    expect("strcat(\"a\", 1, true, \"b\")", "\"a1trueb\"");
    expect("strcat()", "\"\"");
    expect("strcat(\"a\", undefined)", "undefined");
    expect("strcat(undefined, error)", "error");
    expect("strcat(\"t=\", relTime(\"90\"))", "\"t=01:30\"");
}

int main(void)
{
    setenv("TZ", "UTC", 1);
    tzset();
    setlocale(LC_ALL, "C");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(strcat__joins_texts_and_propagates_undefined_and_error,
                                        setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
