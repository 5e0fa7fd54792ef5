/*
 * tests/base/test_error.c: the error model: names of codes, filling and
 * clearing errors, NULL errors, and messages cut to the buffer, never over it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/error.h"

static void error__every_code_has_a_name(void **state)
{
    (void)state;
    for (int c = 0; c >= ADS_ECODE_MIN; c--)
        assert_true(strlen(ads_strerror(c)) > 0);
    assert_string_equal(ads_strerror(ADS_ESYNTAX), "syntax error");
    assert_string_equal(ads_strerror(ADS_EVERSION), "unsupported format version");
    assert_string_equal(ads_strerror(1), "unknown error");
    assert_string_equal(ads_strerror(ADS_ECODE_MIN - 1), "unknown error");
}

static void error__set_fills_code_message_and_position(void **state)
{
    (void)state;
    ads_error err;
    assert_int_equal(ads_error_set_at(&err, ADS_ESYNTAX, 3, 14, "bad '%s'", "x"), ADS_ESYNTAX);
    assert_int_equal(err.code, ADS_ESYNTAX);
    assert_int_equal(err.line, 3);
    assert_int_equal(err.column, 14);
    assert_string_equal(err.message, "bad 'x'");
    assert_int_equal(ads_error_set(&err, ADS_EIO, "disk %d", 2), ADS_EIO);
    assert_int_equal(err.line, 0);
    assert_string_equal(err.message, "disk 2");
    ads_error_clear(&err);
    assert_int_equal(err.code, ADS_OK);
    assert_string_equal(err.message, "");
}

static void error__null_error_is_allowed(void **state)
{
    (void)state;
    assert_int_equal(ads_error_set(NULL, ADS_ENOMEM, "x"), ADS_ENOMEM);
    assert_int_equal(ads_error_set_at(NULL, ADS_ESYNTAX, 1, 1, "x"), ADS_ESYNTAX);
    ads_error_clear(NULL);
}

static void error__long_message_is_cut_not_overflowed(void **state)
{
    (void)state;
    char big[1000];
    ads_error err;
    memset(big, 'a', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    ads_error_set(&err, ADS_EINVAL, "%s", big);
    assert_int_equal(strlen(err.message), ADS_ERROR_MESSAGE_MAX - 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(error__every_code_has_a_name),
        cmocka_unit_test(error__set_fills_code_message_and_position),
        cmocka_unit_test(error__null_error_is_allowed),
        cmocka_unit_test(error__long_message_is_cut_not_overflowed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
