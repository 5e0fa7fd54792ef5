/*
 * tests/idgen/test_clockseq.c: the OUID clock-sequence state machine, driven
 * by a fake clock: order, uniqueness across clock steps back, the counter
 * running out, backfill ranges that overlap or not, k wrapping, the state's
 * serialised form, threads, and fork().
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "idgen/idgen.h"

#define NODE UINT64_C(0x123456789ab)
#define SEC INT64_C(1000000000)

/* A clock that reads what the test says; sleeping advances it. */
typedef struct fake_clock {
    int64_t ns;
    int sleeps;
} fake_clock;

static int64_t fake_now(void *ctx)
{
    return ((fake_clock *)ctx)->ns;
}

static void fake_sleep(void *ctx, int64_t ns)
{
    fake_clock *f = ctx;
    f->ns += ns;
    f->sleeps++;
}

static ads_clock clock_of(fake_clock *f)
{
    ads_clock c = {fake_now, fake_sleep, f};
    return c;
}

static int cmp_ids(const void *a, const void *b)
{
    return ads_id_cmp(*(const ads_id *)a, *(const ads_id *)b);
}

/* Sort a copy and fail if any two are equal. */
static void assert_all_distinct(const ads_id *ids, size_t n)
{
    ads_id *s = malloc(n * sizeof *s);
    assert_non_null(s);
    memcpy(s, ids, n * sizeof *s);
    qsort(s, n, sizeof *s, cmp_ids);
    for (size_t i = 1; i < n; i++)
        if (ads_id_eq(s[i - 1], s[i])) {
            char t[ADS_ID_TEXT_MAX + 1];
            ads_id_format(t, s[i]);
            free(s);
            fail_msg("duplicate id %s", t);
        }
    free(s);
}

static void clockseq__first_current_id_has_k0_and_low_bit_1(void **state)
{
    (void)state;
    ads_idgen_state st;
    fake_clock fc = {1461644568 * SEC, 0};
    ads_clock c = clock_of(&fc);
    ads_id id;
    ads_idgen_state_init(&st, 2);
    assert_int_equal(ads_ouid_next(&id, &st, &c, NULL), 0);
    char t[ADS_ID_TEXT_MAX + 1];
    ads_id_format(t, id);
    assert_string_equal(t, "#571eed18-0001-000000000002-1");
    assert_int_equal(ads_ouid_next(&id, &st, &c, NULL), 0);
    ads_id_format(t, id);
    assert_string_equal(t, "#571eed18-0011-000000000002-1");
}

static void clockseq__million_ids_strictly_increase(void **state)
{
    (void)state;
    ads_ouid_gen *g;
    assert_int_equal(ads_ouid_gen_new(&g, NULL, NULL, NULL), 0);
    ads_id prev = {0, 0}, id;
    for (int i = 0; i < 1000000; i++) {
        assert_true(ads_ouid_gen_next(&id, g, NULL) >= 0);
        if (ads_id_cmp(prev, id) >= 0)
            fail_msg("id %d is not above the one before", i);
        prev = id;
    }
    ads_ouid_gen_free(g);
}

static void clockseq__clock_step_back_takes_new_k_and_stays_unique(void **state)
{
    (void)state;
    ads_idgen_state st;
    fake_clock fc = {1000 * SEC, 0};
    ads_clock c = clock_of(&fc);
    ads_id ids[4000];
    size_t n = 0;
    int events = 0;
    ads_idgen_state_init(&st, NODE);
    /* Time runs 1000..1009, jumps back to 1003, runs on, jumps back again. */
    static const int64_t secs[] = {1000, 1001, 1002, 1005, 1009, 1003, 1004, 1009,
                                   1010, 1002, 1003, 1012};
    for (size_t s = 0; s < sizeof secs / sizeof secs[0]; s++) {
        fc.ns = secs[s] * SEC + 5;
        for (int i = 0; i < 300; i++) {
            int rc = ads_ouid_next(&ids[n++], &st, &c, NULL);
            assert_true(rc >= 0);
            events += rc == ADS_IDGEN_CLOCK_STEPPED_BACK;
        }
    }
    assert_int_equal(events, 2);
    assert_int_equal(st.steps_back, 2);
    assert_int_equal(st.current.k, 2);
    assert_int_equal(st.current.lo, 1002);
    assert_int_equal(st.current.hi, 1012);
    assert_all_distinct(ids, n);
    ads_ouid_fields f;
    ads_ouid_unpack(&f, ids[n - 1]);
    assert_int_equal(f.clockseq, (2 << 1) | 1);
}

static void clockseq__state_from_the_future_takes_new_k(void **state)
{
    (void)state;
    ads_idgen_state st;
    fake_clock fc = {5000 * SEC, 0};
    ads_clock c = clock_of(&fc);
    ads_id a, b;
    ads_idgen_state_init(&st, NODE);
    assert_int_equal(ads_ouid_next(&a, &st, &c, NULL), 0);
    /* restart with the saved state on a machine whose clock is behind */
    uint8_t buf[ADS_IDGEN_STATE_BYTES];
    ads_idgen_state_encode(buf, &st);
    ads_idgen_state restored;
    assert_int_equal(ads_idgen_state_decode(&restored, buf, sizeof buf, NULL), 0);
    fc.ns = 4000 * SEC;
    assert_int_equal(ads_ouid_next(&b, &restored, &c, NULL), ADS_IDGEN_CLOCK_STEPPED_BACK);
    assert_int_equal(restored.current.k, 1);
}

static void clockseq__counter_used_up_waits_for_next_second(void **state)
{
    (void)state;
    ads_idgen_state st;
    fake_clock fc = {777 * SEC + 123, 0};
    ads_clock c = clock_of(&fc);
    ads_id id;
    ads_ouid_fields f;
    ads_idgen_state_init(&st, NODE);
    assert_int_equal(ads_ouid_next(&id, &st, &c, NULL), 0);
    st.current.last_c = ADS_OUID_COUNTER_MAX - 1;
    assert_int_equal(ads_ouid_next(&id, &st, &c, NULL), 0);
    ads_ouid_unpack(&f, id);
    assert_int_equal(f.counter, ADS_OUID_COUNTER_MAX);
    assert_int_equal(f.time, 777);

    /* the pure core refuses and changes nothing */
    uint8_t before[ADS_IDGEN_STATE_BYTES], after[ADS_IDGEN_STATE_BYTES];
    ads_idgen_state_encode(before, &st); /* the struct has padding: compare its fields */
    ads_error err;
    assert_int_equal(ads_ouid_next_at(&id, &st, 777, &err), ADS_ELIMIT);
    assert_string_equal(err.message, "OUID counter for second 777 is used up (16777216 ids)");
    ads_idgen_state_encode(after, &st);
    assert_memory_equal(before, after, sizeof before);

    /* the clocked call waits instead of reusing */
    assert_int_equal(ads_ouid_next(&id, &st, &c, NULL), 0);
    assert_int_equal(fc.sleeps, 1);
    ads_ouid_unpack(&f, id);
    assert_int_equal(f.time, 778);
    assert_int_equal(f.counter, 0);
    assert_int_equal(st.current.k, 0);
}

static void clockseq__k_wraps_at_15_bits(void **state)
{
    (void)state;
    ads_idgen_state st;
    ads_id id;
    ads_idgen_state_init(&st, NODE);
    assert_int_equal(ads_ouid_next_at(&id, &st, 100, NULL), 0);
    st.current.k = ADS_CLOCKSEQ_K_MAX;
    assert_int_equal(ads_ouid_next_at(&id, &st, 50, NULL), ADS_IDGEN_CLOCK_STEPPED_BACK);
    assert_int_equal(st.current.k, 0);

    ads_backfill *b;
    st.backfill.used = true;
    st.backfill.lo = 10;
    st.backfill.hi = 20;
    st.backfill.k = ADS_CLOCKSEQ_K_MAX;
    assert_int_equal(ads_backfill_begin(&b, &st, 15, 16, NULL), 0);
    assert_int_equal(st.backfill.k, 0);
    ads_backfill_end(b);
}

static void clockseq__clock_out_of_range_is_an_error(void **state)
{
    (void)state;
    ads_idgen_state st;
    fake_clock fc = {-5, 0};
    ads_clock c = clock_of(&fc);
    ads_id id;
    ads_error err;
    ads_idgen_state_init(&st, NODE);
    assert_int_equal(ads_ouid_next(&id, &st, &c, &err), ADS_ERANGE);
    assert_non_null(strstr(err.message, "outside what an OUID can date"));
    assert_int_equal(ads_ouid_next_at(&id, &st, ADS_OUID_TIME_MAX + 1, &err), ADS_ERANGE);
}

/* Make n backfill ids with times spread over [lo, hi]. */
static size_t backfill_batch(ads_idgen_state *st, uint64_t lo, uint64_t hi, size_t n,
                             ads_id *out)
{
    ads_backfill *b;
    assert_int_equal(ads_backfill_begin(&b, st, lo, hi, NULL), 0);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(ads_backfill_next(&out[i], b, st, lo + i % (hi - lo + 1), NULL), 0);
    ads_backfill_end(b);
    return n;
}

static void clockseq__backfill_overlap_takes_new_k_disjoint_widens(void **state)
{
    (void)state;
    ads_idgen_state st;
    ads_id ids[6000];
    size_t n = 0;
    ads_idgen_state_init(&st, NODE);

    n += backfill_batch(&st, 1000, 1099, 1000, ids + n);
    assert_int_equal(st.backfill.k, 0); /* the first range uses S = 0 */
    ads_ouid_fields f;
    ads_ouid_unpack(&f, ids[0]);
    assert_int_equal(f.clockseq, 0);
    assert_true(f.backfill);
    assert_int_equal(f.version, 1);

    n += backfill_batch(&st, 2000, 2099, 1000, ids + n); /* disjoint: widen */
    assert_int_equal(st.backfill.k, 0);
    assert_int_equal(st.backfill.lo, 1000);
    assert_int_equal(st.backfill.hi, 2099);

    n += backfill_batch(&st, 1050, 1060, 1000, ids + n); /* overlaps: new k */
    assert_int_equal(st.backfill.k, 1);
    assert_int_equal(st.backfill.lo, 1050);
    assert_int_equal(st.backfill.hi, 1060);

    n += backfill_batch(&st, 1000, 1099, 1000, ids + n); /* the same period again */
    assert_int_equal(st.backfill.k, 2);
    n += backfill_batch(&st, 500, 500, 1000, ids + n); /* one second, disjoint */
    assert_int_equal(st.backfill.k, 2);
    assert_int_equal(st.backfill.lo, 500);

    /* current ids in the same seconds never equal backfill ids */
    for (int i = 0; i < 1000; i++)
        assert_true(ads_ouid_next_at(&ids[n++], &st, 1000 + (uint64_t)i % 100, NULL) >= 0);
    assert_all_distinct(ids, n);
}

static void clockseq__concurrent_batches_keep_their_own_k(void **state)
{
    (void)state;
    ads_idgen_state st;
    ads_backfill *a, *b;
    ads_id ids[400];
    ads_idgen_state_init(&st, NODE);
    assert_int_equal(ads_backfill_begin(&a, &st, 100, 200, NULL), 0);
    assert_int_equal(ads_backfill_begin(&b, &st, 150, 250, NULL), 0);
    for (int i = 0; i < 200; i++) {
        assert_int_equal(ads_backfill_next(&ids[2 * i], a, &st, 150 + i % 50, NULL), 0);
        assert_int_equal(ads_backfill_next(&ids[2 * i + 1], b, &st, 150 + i % 50, NULL), 0);
    }
    ads_backfill_end(a);
    ads_backfill_end(b);
    assert_all_distinct(ids, 400);
}

static void clockseq__backfill_bad_arguments_are_errors(void **state)
{
    (void)state;
    ads_idgen_state st;
    ads_backfill *b;
    ads_id id;
    ads_error err;
    ads_idgen_state_init(&st, NODE);
    assert_int_equal(ads_backfill_begin(&b, &st, 20, 10, &err), ADS_EINVAL);
    assert_string_equal(err.message, "backfill range [20, 10] is reversed");
    assert_int_equal(ads_backfill_begin(&b, &st, 0, ADS_OUID_TIME_MAX + 1, &err), ADS_ERANGE);
    assert_false(st.backfill.used); /* refused ranges change nothing */
    assert_int_equal(ads_backfill_begin(&b, &st, 10, 20, NULL), 0);
    assert_int_equal(ads_backfill_next(&id, b, &st, 21, &err), ADS_ERANGE);
    assert_string_equal(err.message,
                        "backfill time 21 is outside the batch's range [10, 20]");
    ads_backfill_end(b);
    ads_backfill_end(NULL);
}

static void clockseq__backfill_counter_limit_per_second(void **state)
{
    (void)state;
    ads_idgen_state st;
    ads_backfill *b;
    ads_id id;
    ads_error err;
    ads_idgen_state_init(&st, NODE);
    assert_int_equal(ads_backfill_begin(&b, &st, 10, 10, NULL), 0);
    for (uint32_t i = 0; i <= ADS_OUID_COUNTER_MAX; i++)
        if (ads_backfill_next(&id, b, &st, 10, NULL))
            fail_msg("id %u refused", (unsigned)i);
    ads_ouid_fields f;
    ads_ouid_unpack(&f, id);
    assert_int_equal(f.counter, ADS_OUID_COUNTER_MAX);
    assert_int_equal(ads_backfill_next(&id, b, &st, 10, &err), ADS_ELIMIT);
    assert_non_null(strstr(err.message, "split the batch"));
    ads_backfill_end(b);
}

static void clockseq__state_round_trips_and_rejects_damage(void **state)
{
    (void)state;
    ads_idgen_state st, back;
    uint8_t buf[ADS_IDGEN_STATE_BYTES];
    ads_error err;
    ads_idgen_state_init(&st, NODE);
    st.current = (ads_clock_track){3, true, 10, 20, 20, 99};
    st.backfill = (ads_clock_track){7, true, 5, 6, 6, 1};
    st.steps_back = 3;
    ads_idgen_state_encode(buf, &st);
    assert_int_equal(ads_idgen_state_decode(&back, buf, sizeof buf, NULL), 0);
    assert_int_equal(back.node, NODE);
    assert_int_equal(back.current.k, 3);
    assert_int_equal(back.current.last_c, 99);
    assert_int_equal(back.backfill.k, 7);
    assert_int_equal(back.backfill.hi, 6);
    assert_int_equal(back.steps_back, 3);

    assert_int_equal(ads_idgen_state_decode(&back, buf, 0, &err), ADS_ECORRUPT);
    assert_int_equal(ads_idgen_state_decode(&back, buf, sizeof buf - 1, &err), ADS_ECORRUPT);
    assert_string_equal(err.message, "identifier state: 74 bytes, expected 75");
    buf[0] = 9;
    assert_int_equal(ads_idgen_state_decode(&back, buf, sizeof buf, &err), ADS_EVERSION);
    assert_string_equal(err.message, "identifier state: version 9, this build reads version 1");
    ads_idgen_state_encode(buf, &st);
    buf[10] = 0xff; /* current k over 15 bits */
    assert_int_equal(ads_idgen_state_decode(&back, buf, sizeof buf, &err), ADS_ECORRUPT);
    assert_string_equal(err.message, "identifier state: current track holds impossible values");
    ads_idgen_state_encode(buf, &st);
    buf[8] = 0x80; /* node over 47 bits */
    assert_int_equal(ads_idgen_state_decode(&back, buf, sizeof buf, &err), ADS_ECORRUPT);
}

typedef struct worker {
    ads_ouid_gen *g;
    pthread_mutex_t *lock;
    ads_id *out;
    size_t n;
} worker;

static void *worker_main(void *arg)
{
    worker *w = arg;
    for (size_t i = 0; i < w->n; i++) {
        pthread_mutex_lock(w->lock);
        int rc = ads_ouid_gen_next(&w->out[i], w->g, NULL);
        pthread_mutex_unlock(w->lock);
        if (rc < 0)
            return (void *)1;
    }
    return NULL;
}

/* Two threads drawing from one generator (under a lock, as documented), and
 * two more with generators of their own: no id is made twice. */
static void clockseq__two_threads_never_collide(void **state)
{
    (void)state;
    enum { PER = 200000, THREADS = 4 };
    ads_id *ids = malloc(THREADS * PER * sizeof *ids);
    ads_ouid_gen *gens[3];
    pthread_mutex_t locks[3];
    worker w[THREADS];
    pthread_t th[THREADS];
    assert_non_null(ids);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(ads_ouid_gen_new(&gens[i], NULL, NULL, NULL), 0);
        pthread_mutex_init(&locks[i], NULL);
    }
    for (int i = 0; i < THREADS; i++) {
        int gi = i < 2 ? 0 : i - 1; /* threads 0 and 1 share generator 0 */
        w[i] = (worker){gens[gi], &locks[gi], ids + (size_t)i * PER, PER};
        assert_int_equal(pthread_create(&th[i], NULL, worker_main, &w[i]), 0);
    }
    for (int i = 0; i < THREADS; i++) {
        void *r;
        pthread_join(th[i], &r);
        assert_null(r);
    }
    assert_all_distinct(ids, THREADS * PER);
    for (int i = 0; i < 3; i++) {
        ads_ouid_gen_free(gens[i]);
        pthread_mutex_destroy(&locks[i]);
    }
    free(ids);
}

static void clockseq__fork_child_never_repeats_parent(void **state)
{
    (void)state;
    enum { N = 20000 };
    ads_ouid_gen *g;
    int fds[2];
    ads_id *ids = malloc(2 * N * sizeof *ids);
    assert_non_null(ids);
    assert_int_equal(ads_ouid_gen_new(&g, NULL, NULL, NULL), 0);
    assert_true(ads_ouid_gen_next(&ids[0], g, NULL) >= 0);
    assert_int_equal(pipe(fds), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        ads_id id;
        close(fds[0]);
        for (int i = 0; i < N; i++) {
            if (ads_ouid_gen_next(&id, g, NULL) < 0)
                _exit(3);
            if (write(fds[1], &id, sizeof id) != (ssize_t)sizeof id)
                _exit(4);
        }
        _exit(0);
    }
    close(fds[1]);
    for (int i = 1; i < N; i++)
        assert_true(ads_ouid_gen_next(&ids[i], g, NULL) >= 0);
    size_t got = 0;
    char *p = (char *)(ids + N);
    ssize_t r;
    while ((r = read(fds[0], p + got, N * sizeof *ids - got)) > 0)
        got += (size_t)r;
    close(fds[0]);
    int status;
    waitpid(pid, &status, 0);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    assert_int_equal(got, N * sizeof *ids);
    ads_ouid_fields fp, fc;
    ads_ouid_unpack(&fp, ids[0]);
    ads_ouid_unpack(&fc, ids[N]);
    assert_true(fp.node != fc.node);
    assert_all_distinct(ids, 2 * N);
    ads_ouid_gen_free(g);
    free(ids);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(clockseq__first_current_id_has_k0_and_low_bit_1),
        cmocka_unit_test(clockseq__million_ids_strictly_increase),
        cmocka_unit_test(clockseq__clock_step_back_takes_new_k_and_stays_unique),
        cmocka_unit_test(clockseq__state_from_the_future_takes_new_k),
        cmocka_unit_test(clockseq__counter_used_up_waits_for_next_second),
        cmocka_unit_test(clockseq__k_wraps_at_15_bits),
        cmocka_unit_test(clockseq__clock_out_of_range_is_an_error),
        cmocka_unit_test(clockseq__backfill_overlap_takes_new_k_disjoint_widens),
        cmocka_unit_test(clockseq__concurrent_batches_keep_their_own_k),
        cmocka_unit_test(clockseq__backfill_bad_arguments_are_errors),
        cmocka_unit_test(clockseq__backfill_counter_limit_per_second),
        cmocka_unit_test(clockseq__state_round_trips_and_rejects_damage),
        cmocka_unit_test(clockseq__two_threads_never_collide),
        cmocka_unit_test(clockseq__fork_child_never_repeats_parent),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
