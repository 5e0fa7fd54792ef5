/*
 * tests/base/test_buf.c: the growable buffer: appends of every kind, growth
 * past many doublings, printf past its small fast path, clear, and the
 * failed state on an impossible append, and room written in place
 * (ads_buf_extend).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/buf.h"
#include "base/bytes.h"

static void buf__appends_and_terminates(void **state)
{
    (void)state;
    ads_buf b = ADS_BUF_INIT;
    assert_string_equal(ads_buf_cstr(&b), "");
    ads_buf_adds(&b, "abc");
    ads_buf_addc(&b, '-');
    ads_buf_add(&b, "xyz", 2);
    ads_buf_printf(&b, "%d/%s", 42, "z");
    assert_string_equal(ads_buf_cstr(&b), "abc-xy42/z");
    assert_int_equal(b.len, 10);
    ads_buf_clear(&b);
    assert_string_equal(ads_buf_cstr(&b), "");
    ads_buf_adds(&b, "again");
    assert_string_equal(ads_buf_cstr(&b), "again");
    ads_buf_free(&b);
}

static void buf__grows_through_many_doublings(void **state)
{
    (void)state;
    ads_buf b = ADS_BUF_INIT;
    for (int i = 0; i < 100000; i++)
        ads_buf_addc(&b, (char)('a' + i % 26));
    assert_int_equal(b.len, 100000);
    assert_false(b.failed);
    assert_int_equal(b.p[99999], 'a' + 99999 % 26);
    assert_int_equal(b.p[100000], '\0');
    char big[1000];
    memset(big, 'q', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    ads_buf_printf(&b, "[%s]", big);
    assert_int_equal(b.len, 100000 + 1001);
    assert_int_equal(b.p[b.len - 1], ']');
    ads_buf_free(&b);
}

static void buf__impossible_append_marks_failed(void **state)
{
    (void)state;
    ads_buf b = ADS_BUF_INIT;
    ads_buf_adds(&b, "ok");
    volatile size_t huge = SIZE_MAX / 2; /* hidden from the compiler's bounds checks */
    ads_buf_add(&b, "x", huge);
    assert_true(b.failed);
    assert_string_equal(ads_buf_cstr(&b), "");
    ads_buf_adds(&b, "ignored");
    assert_true(b.failed);
    ads_buf_clear(&b);
    assert_false(b.failed);
    ads_buf_free(&b);
}

static void buf__extend_gives_room_to_write_in_place(void **state)
{
    (void)state;
    ads_buf b = ADS_BUF_INIT;
    ads_buf_adds(&b, "ab");
    char *at = ads_buf_extend(&b, 3);
    assert_non_null(at);
    assert_ptr_equal(at, b.p + 2);
    memcpy(at, "cde", 3);
    assert_int_equal(b.len, 5);
    assert_string_equal(ads_buf_cstr(&b), "abcde");
    at = ads_buf_extend(&b, 1000); /* past the capacity: grown */
    assert_non_null(at);
    memset(at, 'z', 1000);
    assert_int_equal(b.len, 1005);
    assert_int_equal(b.p[1005], '\0');
    assert_non_null(ads_buf_extend(&b, 0));
    assert_int_equal(b.len, 1005);
    volatile size_t huge = SIZE_MAX / 2;
    assert_null(ads_buf_extend(&b, huge));
    assert_true(b.failed);
    assert_null(ads_buf_extend(&b, 1)); /* a failed buffer stays failed */
    ads_buf_free(&b);
}

/* base/bytes.h's short copy and compare: every length 0..40 at every
 * alignment 0..7 of source and destination, against memcpy and memcmp; the
 * bytes just before and after the destination stay as they were. */
static void bytes__short_copies_and_compares_match_the_library(void **state)
{
    (void)state;
    unsigned char src[64], dst[64], want[64];
    for (size_t i = 0; i < sizeof src; i++)
        src[i] = (unsigned char)(i * 37 + 11);
    for (size_t n = 0; n <= 40; n++)
        for (size_t so = 0; so < 8; so++)
            for (size_t d0 = 0; d0 < 8; d0++) {
                memset(dst, 0xee, sizeof dst);
                memset(want, 0xee, sizeof want);
                ads_bytes_copy(dst + 1 + d0, src + so, n);
                memcpy(want + 1 + d0, src + so, n);
                if (memcmp(dst, want, sizeof dst) != 0)
                    fail_msg("copy of %zu bytes from +%zu to +%zu differs", n, so, d0);
                assert_true(ads_bytes_same(dst + 1 + d0, src + so, n));
                for (size_t k = 0; k < n; k++) {
                    dst[1 + d0 + k] ^= 0x40;
                    if (ads_bytes_same(dst + 1 + d0, src + so, n))
                        fail_msg("%zu bytes differing at %zu compare the same", n, k);
                    dst[1 + d0 + k] ^= 0x40;
                }
            }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(buf__appends_and_terminates),
        cmocka_unit_test(buf__grows_through_many_doublings),
        cmocka_unit_test(buf__impossible_append_marks_failed),
        cmocka_unit_test(buf__extend_gives_room_to_write_in_place),
        cmocka_unit_test(bytes__short_copies_and_compares_match_the_library),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
