/*
 * tests/base/test_arena.c: region allocation: alignment, growth, large
 * requests, reset and reuse, strndup, and refusal of impossible sizes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/arena.h"

static void arena__allocations_are_aligned_and_distinct(void **state)
{
    (void)state;
    ads_arena *a = ads_arena_new();
    assert_non_null(a);
    char *prev = NULL;
    for (size_t n = 0; n < 3000; n++) {
        char *p = ads_arena_alloc(a, n % 97);
        assert_non_null(p);
        assert_int_equal((uintptr_t)p % 16, 0);
        memset(p, 0xab, n % 97); /* ASan would see an overrun */
        assert_true(p != prev);
        prev = p;
    }
    assert_int_equal(ads_arena_used(a), 3000 / 97 * (96 * 97 / 2) + (3000 % 97) * (3000 % 97 - 1) / 2);
    ads_arena_free(a);
}

static void arena__large_requests_get_their_own_block(void **state)
{
    (void)state;
    ads_arena *a = ads_arena_new();
    char *small = ads_arena_alloc(a, 10);
    char *big = ads_arena_alloc(a, 5u << 20);
    char *small2 = ads_arena_alloc(a, 10);
    assert_non_null(small);
    assert_non_null(big);
    assert_non_null(small2);
    memset(big, 1, 5u << 20);
    memset(small, 2, 10);
    memset(small2, 3, 10);
    assert_int_equal(big[(5u << 20) - 1], 1);
    assert_int_equal(small[9], 2);
    ads_arena_free(a);
}

static void arena__reset_keeps_working(void **state)
{
    (void)state;
    ads_arena *a = ads_arena_new();
    for (int round = 0; round < 50; round++) {
        for (int i = 0; i < 1000; i++) {
            int *p = ads_arena_alloc(a, sizeof(int) * 8);
            assert_non_null(p);
            p[7] = i;
        }
        assert_int_equal(ads_arena_used(a), 1000 * sizeof(int) * 8);
        ads_arena_reset(a);
        assert_int_equal(ads_arena_used(a), 0);
    }
    ads_arena_reset(a);
    ads_arena_free(a);
    ads_arena_free(NULL);
}

static void arena__strndup_copies_and_terminates(void **state)
{
    (void)state;
    ads_arena *a = ads_arena_new();
    char *s = ads_arena_strndup(a, "hello world", 5);
    assert_string_equal(s, "hello");
    char *z = ads_arena_strndup(a, "a\0b", 3);
    assert_memory_equal(z, "a\0b\0", 4);
    assert_string_equal(ads_arena_strndup(a, "", 0), "");
    ads_arena_free(a);
}

static void arena__impossible_sizes_are_refused(void **state)
{
    (void)state;
    ads_arena *a = ads_arena_new();
    assert_null(ads_arena_alloc(a, SIZE_MAX));
    assert_null(ads_arena_alloc(a, SIZE_MAX / 2 + 1));
    assert_null(ads_arena_strndup(a, "x", SIZE_MAX));
    assert_non_null(ads_arena_alloc(a, 0));
    ads_arena_free(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(arena__allocations_are_aligned_and_distinct),
        cmocka_unit_test(arena__large_requests_get_their_own_block),
        cmocka_unit_test(arena__reset_keeps_working),
        cmocka_unit_test(arena__strndup_copies_and_terminates),
        cmocka_unit_test(arena__impossible_sizes_are_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
