/*
 * tests/engine/test_stage_sort.c: the order of a sorted load's run in
 * memory (engine/stage_sort.c) is ads_stage__ref_cmp's, exactly: runs of
 * keys drawn to make the word sort's hard cases (keys that are prefixes of
 * others, zero and 0xff bytes at the ends of words, long shared prefixes,
 * repeated keys told apart by the order added, rows without a key among
 * them) are sorted and compared entry by entry with qsort's order, with
 * the default partition budget and with budgets small enough that qsort
 * takes over at every depth.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "engine/stage_sort.h"

typedef struct run {
    ads_stage_ref *refs, *want;
    unsigned char *keys;
    size_t n;
} run;

static uint64_t rng = 0x9e3779b97f4a7c15u;

static uint32_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 16);
}

/* A key shape: klen bytes at k for entry i. */
typedef size_t (*shape_fn)(unsigned char *k, size_t i);

/* Few bytes, short: prefixes of each other, zeros where padding goes. */
static size_t shape_tiny(unsigned char *k, size_t i)
{
    static const unsigned char alphabet[] = {0x00, 0x01, 'a', 0xff};
    (void)i;
    size_t len = next_rand() % 20;
    for (size_t j = 0; j < len; j++)
        k[j] = alphabet[next_rand() % 4];
    return len;
}

/* A long prefix shared by all, then a few words that differ rarely. */
static size_t shape_prefix(unsigned char *k, size_t i)
{
    (void)i;
    size_t len = 70 + next_rand() % 3;
    memset(k, 'p', 70);
    for (size_t j = 64; j < len; j++)
        k[j] = (unsigned char)('p' + next_rand() % 2);
    return len;
}

/* What a job import sorts: a type prefix, a host, a job id, a date. */
static size_t shape_jobs(unsigned char *k, size_t i)
{
    (void)i;
    char text[96];
    int n = snprintf(text, sizeof text, "submit%u.example.org#%u.%u#%u", next_rand() % 8,
                     100000 + next_rand() % 3000, next_rand() % 20,
                     1700000000 + next_rand() % 1000);
    memcpy(k, "\x01Job\x00", 5); /* a type's prefix, a zero in it */
    memcpy(k + 5, text, (size_t)n);
    return 5 + (size_t)n;
}

/* One key for every entry: only the order added tells them apart. */
static size_t shape_same(unsigned char *k, size_t i)
{
    (void)i;
    memcpy(k, "the-one-key-of-all", 18);
    return 18;
}

/* Keys in descending order of length (every key a prefix of the last). */
static size_t shape_descending(unsigned char *k, size_t i)
{
    size_t len = 40 - i % 41;
    memset(k, 0xff, len);
    return len;
}

/* A run of n entries of one shape, about one in `unkeyed_every` without a
 * key (0: none), with the order qsort gives in want. */
static run make_run(size_t n, shape_fn shape, unsigned unkeyed_every)
{
    run r = {calloc(n, sizeof *r.refs), calloc(n, sizeof *r.want), calloc(n, 128), n};
    assert_non_null(r.refs);
    assert_non_null(r.want);
    assert_non_null(r.keys);
    for (size_t i = 0; i < n; i++) {
        unsigned char *k = r.keys + 128 * i;
        bool keyed = !unkeyed_every || next_rand() % unkeyed_every;
        size_t len = keyed ? shape(k, i) : 0;
        r.refs[i] = (ads_stage_ref){k, i, i, 0, (uint32_t)len, 0, keyed};
    }
    memcpy(r.want, r.refs, n * sizeof *r.refs);
    qsort(r.want, n, sizeof *r.want,
          (int (*)(const void *, const void *))ads_stage__ref_cmp);
    return r;
}

static void sorted_as_qsort(run *r, unsigned budget)
{
    ads_stage_ref *got = malloc(r->n * sizeof *got + 1);
    assert_non_null(got);
    memcpy(got, r->refs, r->n * sizeof *got);
    if (budget == UINT32_MAX)
        ads_stage__sort(got, r->n);
    else
        ads_stage__sort_limited(got, r->n, budget);
    for (size_t i = 0; i < r->n; i++)
        if (got[i].seq != r->want[i].seq)
            fail_msg("budget %u, entry %zu of %zu: seq %llu, want %llu", budget, i, r->n,
                     (unsigned long long)got[i].seq, (unsigned long long)r->want[i].seq);
    free(got);
}

static void free_run(run *r)
{
    free(r->refs);
    free(r->want);
    free(r->keys);
}

static void check_shape(shape_fn shape)
{
    static const size_t sizes[] = {0, 1, 2, 13, 100, 5000};
    static const unsigned budgets[] = {0, 1, 3, UINT32_MAX};
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
        for (unsigned u = 0; u < 3; u++) {
            run r = make_run(sizes[s], shape, u == 0 ? 0 : u == 1 ? 7 : 2);
            for (size_t b = 0; b < sizeof budgets / sizeof *budgets; b++)
                sorted_as_qsort(&r, budgets[b]);
            free_run(&r);
        }
}

static void stage_sort__short_keys_of_few_bytes(void **state)
{
    (void)state;
    check_shape(shape_tiny);
}

static void stage_sort__keys_sharing_a_long_prefix(void **state)
{
    (void)state;
    check_shape(shape_prefix);
}

static void stage_sort__job_keys(void **state)
{
    (void)state;
    check_shape(shape_jobs);
}

static void stage_sort__one_key_for_all(void **state)
{
    (void)state;
    check_shape(shape_same);
}

static void stage_sort__keys_that_begin_each_other(void **state)
{
    (void)state;
    check_shape(shape_descending);
}

/* A big run of job keys, the size of a run in memory. */
static void stage_sort__a_run_of_100000_job_keys(void **state)
{
    (void)state;
    run r = make_run(100000, shape_jobs, 50);
    sorted_as_qsort(&r, UINT32_MAX);
    free_run(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(stage_sort__short_keys_of_few_bytes),
        cmocka_unit_test(stage_sort__keys_sharing_a_long_prefix),
        cmocka_unit_test(stage_sort__job_keys),
        cmocka_unit_test(stage_sort__one_key_for_all),
        cmocka_unit_test(stage_sort__keys_that_begin_each_other),
        cmocka_unit_test(stage_sort__a_run_of_100000_job_keys),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
