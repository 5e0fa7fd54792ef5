/*
 * tests/engine/test_group.c: group commit (engine/group.c). Threads writing
 * through ads_db_write at once, some of them failing on purpose: every
 * acknowledged write is in the store, every failed one left nothing, each
 * caller gets its own error, identifiers are never handed out twice, the
 * after-commit hook runs once per acknowledged write in the writer's own
 * thread; writers that arrive while a commit is under way share one; a map
 * that fills during a group grows and the writes run again.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "engine/engine.h"
#include "tests/engine/helpers.h"

#define THREADS 8
#define WRITES 60  /* per thread */
#define SHARED 5   /* records every thread writes */

/* What happens to write i of a thread. */
enum { W_DISTINCT, W_SHARED, W_FAIL_AFTER_STORE, W_FAIL_REFUSED };

static int plan(unsigned t, unsigned i)
{
    unsigned x = (t * 7 + i * 13) % 10;
    return x < 4 ? W_DISTINCT : x < 7 ? W_SHARED : x < 9 ? W_FAIL_AFTER_STORE : W_FAIL_REFUSED;
}

typedef struct writer {
    ads_db *db;
    unsigned t;
    unsigned i;        /* the write under way */
    size_t pad;        /* bytes of padding per distinct record (the map-full test) */
    ads_id ids[WRITES * 4]; /* every identifier handed out to this thread */
    size_t nids;
    int rc[WRITES];
    char msg[WRITES][ADS_ERROR_MESSAGE_MAX];
    unsigned acked;
} writer;

static _Thread_local unsigned notified;

static void on_notify(void *ctx, const ads_change *changes, size_t n)
{
    (void)ctx;
    for (size_t i = 0; i < n; i++)
        if (strcmp(changes[i].type, "Doc") == 0)
            notified++;
}

static int write_one(ads_txn *txn, void *ctx, ads_error *err)
{
    writer *w = ctx;
    int kind = plan(w->t, w->i);
    ads_id id;
    int rc = ads_txn_new_ids(&id, 1, NULL, txn, ADS_ID_INCREMENT, err);
    if (rc)
        return rc;
    if (w->nids < sizeof w->ids / sizeof w->ids[0])
        w->ids[w->nids++] = id;
    char *pad = calloc(1, w->pad + 1);
    if (!pad)
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    memset(pad, 'p', w->pad);
    char text[256 + 65536];
    if (kind == W_SHARED)
        snprintf(text, sizeof text, "[ AdType = \"Doc\"; Name = \"shared%u\"; W = \"%u-%u\" ]",
                 (w->t + w->i) % SHARED, w->t, w->i);
    else if (kind == W_FAIL_REFUSED) /* no key: refused before anything is written */
        snprintf(text, sizeof text, "[ AdType = \"Doc\"; W = \"%u-%u\" ]", w->t, w->i);
    else
        snprintf(text, sizeof text, "[ AdType = \"Doc\"; Name = \"d%u-%u\"; W = \"%u-%u\"; P = \"%s\" ]",
                 w->t, w->i, w->t, w->i, pad);
    free(pad);
    rc = ts_txn_store(txn, text, err);
    if (!rc && kind == W_FAIL_AFTER_STORE)
        rc = ads_error_set(err, ADS_EEXIST, "write %u-%u refused on purpose", w->t, w->i);
    return rc;
}

static void *run_writer(void *arg)
{
    writer *w = arg;
    notified = 0;
    for (w->i = 0; w->i < WRITES; w->i++) {
        ads_error err;
        ads_error_clear(&err);
        w->rc[w->i] = ads_db_write(w->db, write_one, w, &err);
        snprintf(w->msg[w->i], sizeof w->msg[w->i], "%s", err.message);
        w->acked += w->rc[w->i] == 0;
    }
    /* the hook ran here, once per acknowledged write */
    if (notified != w->acked)
        w->acked = ~0u;
    return NULL;
}

static int cmp_id(const void *a, const void *b)
{
    const ads_id *x = a, *y = b;
    return x->hi != y->hi ? (x->hi < y->hi ? -1 : 1) : x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Doc's record and history counters are want[0] and want[1]. */
static int check_counts(ads_txn *txn, void *ctx, ads_error *err)
{
    const uint64_t *want = ctx;
    const ads_type *t;
    ads_type_counts c;
    int rc = ads_txn_type(&t, txn, "Doc", 3, err);
    if (!rc)
        rc = ads_txn_type_counts(&c, txn, t, err);
    assert_int_equal(rc, 0);
    assert_int_equal(c.records, want[0]);
    assert_int_equal(c.history, want[1]);
    assert_int_equal(c.deleted, 0);
    return 0;
}

/* Run THREADS writers at once on db; check what the store holds. */
static void run_and_check(ads_db *db, size_t pad)
{
    static writer w[THREADS];
    pthread_t tid[THREADS];
    for (unsigned t = 0; t < THREADS; t++) {
        memset(&w[t], 0, sizeof w[t]);
        w[t].db = db;
        w[t].t = t;
        w[t].pad = pad;
        assert_int_equal(pthread_create(&tid[t], NULL, run_writer, &w[t]), 0);
    }
    for (unsigned t = 0; t < THREADS; t++)
        pthread_join(tid[t], NULL);

    unsigned distinct = 0, shared_acks[SHARED] = {0};
    static ads_id all[THREADS * WRITES * 4];
    size_t nall = 0;
    for (unsigned t = 0; t < THREADS; t++) {
        assert_int_not_equal(w[t].acked, ~0u); /* the hook's count */
        memcpy(all + nall, w[t].ids, w[t].nids * sizeof w[t].ids[0]);
        nall += w[t].nids;
        for (unsigned i = 0; i < WRITES; i++) {
            int kind = plan(t, i);
            char key[64], want[64];
            snprintf(want, sizeof want, "W = \"%u-%u\"", t, i);
            if (kind == W_FAIL_AFTER_STORE) {
                char m[80];
                snprintf(m, sizeof m, "write %u-%u refused on purpose", t, i);
                assert_int_equal(w[t].rc[i], ADS_EEXIST);
                assert_string_equal(w[t].msg[i], m);
            } else if (kind == W_FAIL_REFUSED) {
                assert_int_equal(w[t].rc[i], ADS_EINVAL);
                assert_non_null(strstr(w[t].msg[i], "Name"));
            } else {
                assert_int_equal(w[t].rc[i], 0);
            }
            if (kind == W_SHARED) {
                shared_acks[(t + i) % SHARED]++;
                continue;
            }
            /* a distinct record exists exactly when its write was acknowledged */
            snprintf(key, sizeof key, "{ \"d%u-%u\" }", t, i);
            char *row = ts_latest(db, "Doc", key);
            if (kind == W_DISTINCT) {
                assert_non_null(row);
                assert_non_null(strstr(row, want));
                distinct++;
            } else {
                assert_null(row);
            }
            free(row);
        }
    }
    /* every acknowledged write to a shared record is one of its rows, and
     * no failed one is */
    unsigned history = 0, shared_records = 0;
    for (unsigned k = 0; k < SHARED; k++) {
        char key[32];
        snprintf(key, sizeof key, "{ \"shared%u\" }", k);
        char *h = ts_history(db, "Doc", key);
        unsigned rows = 0;
        for (const char *p = h; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : "")
            rows++;
        assert_int_equal(rows, shared_acks[k]);
        for (unsigned t = 0; t < THREADS; t++)
            for (unsigned i = 0; i < WRITES; i++) {
                char want[64];
                snprintf(want, sizeof want, "W = \"%u-%u\"", t, i);
                bool in = h && strstr(h, want);
                assert_int_equal(in, plan(t, i) == W_SHARED && (t + i) % SHARED == k);
            }
        free(h);
        shared_records += shared_acks[k] > 0;
        history += shared_acks[k] ? shared_acks[k] - 1 : 0;
    }
    assert_int_equal(ts_count(db, "Doc", true), distinct + shared_records);
    /* the counters kept with the rows: failed writes moved none */
    uint64_t want[2] = {distinct + shared_records, history};
    ads_error err;
    assert_int_equal(ads_db_read(db, check_counts, want, &err), 0);
    /* identifiers handed out, by acknowledged and failed writes alike, are
     * all different */
    qsort(all, nall, sizeof all[0], cmp_id);
    for (size_t i = 1; i < nall; i++)
        assert_int_not_equal(cmp_id(&all[i - 1], &all[i]), 0);
    assert_true(nall >= THREADS * WRITES);
    assert_int_equal(ts_verify(db), 0);
}

static void group__concurrent_writers_keep_exactly_what_was_acknowledged(void **state)
{
    (void)state;
    tstore ts;
    ads_db *db = ts_open(&ts, 1700000000);
    ts_declare(db, "Doc", "Name", "");
    ads_hooks h = {NULL, NULL, on_notify, NULL};
    ads_error err;
    assert_int_equal(ads_db_set_hooks(db, "Doc", &h, &err), 0);
    run_and_check(db, 0);
    /* and again after a reopen: what was acknowledged was committed */
    ts_reopen_close(&ts);
    db = ts_reopen(&ts);
    assert_int_equal(ts_verify(db), 0);
    ts_close(&ts);
}

static void group__a_map_filling_during_groups_grows_and_writes_again(void **state)
{
    (void)state;
    tstore ts;
    memset(&ts, 0, sizeof ts);
    ads_db *db = ts_open(&ts, 1700000000);
    ts_reopen_close(&ts);
    ads_db_options o = ADS_DB_OPTIONS_INIT;
    o.map_size = 256 << 10;
    ads_error err;
    assert_int_equal(ads_db_open_ex(&ts.db, ts.path, 0, &o, &err), 0);
    db = ts.db;
    size_t before = ads_db_map_size(db);
    ts_declare(db, "Doc", "Name", "");
    ads_hooks h = {NULL, NULL, on_notify, NULL};
    assert_int_equal(ads_db_set_hooks(db, "Doc", &h, &err), 0);
    run_and_check(db, 60000); /* 13 MB of records: early groups overfill the map */
    assert_true(ads_db_map_size(db) > before);
    ts_close(&ts);
}

/* ---- writers arriving during a commit share the next one ---- */

typedef struct joiner {
    ads_db *db;
    unsigned t;
    pthread_mutex_t *lock;
    pthread_cond_t *cond;
    unsigned *arrived;
    bool *started;
    int rc;
} joiner;

static int store_joiner(ads_txn *txn, void *ctx, ads_error *err)
{
    joiner *j = ctx;
    if (j->t == 0) {
        /* the first writer works until every other one is about to write,
         * and a little longer: they queue behind it */
        pthread_mutex_lock(j->lock);
        *j->started = true;
        pthread_cond_broadcast(j->cond);
        while (*j->arrived < THREADS - 1)
            pthread_cond_wait(j->cond, j->lock);
        pthread_mutex_unlock(j->lock);
        struct timespec ts = {0, 300 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    char text[128];
    snprintf(text, sizeof text, "[ AdType = \"Doc\"; Name = \"j%u\" ]", j->t);
    int rc = ts_txn_store(txn, text, err);
    return rc;
}

static void *run_joiner(void *arg)
{
    joiner *j = arg;
    if (j->t) {
        /* the others write once the first one's work is under way */
        pthread_mutex_lock(j->lock);
        while (!*j->started)
            pthread_cond_wait(j->cond, j->lock);
        ++*j->arrived;
        pthread_cond_broadcast(j->cond);
        pthread_mutex_unlock(j->lock);
    }
    j->rc = ads_db_write(j->db, store_joiner, j, NULL);
    return NULL;
}

/* LMDB's last transaction id, from the data file's two meta pages. */
static uint64_t last_txnid(const char *store)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/data.mdb", store);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    unsigned char page[2][4096];
    assert_int_equal(fread(page, 1, sizeof page, f), sizeof page);
    fclose(f);
    uint64_t best = 0;
    for (int p = 0; p < 2; p++) {
        uint32_t magic;
        uint64_t id;
        memcpy(&magic, page[p] + 16, 4);
        assert_int_equal(magic, 0xBEEFC0DE);
        memcpy(&id, page[p] + 144, 8);
        best = id > best ? id : best;
    }
    return best;
}

static void group__writers_arriving_during_a_commit_share_one(void **state)
{
    (void)state;
    tstore ts;
    ads_db *db = ts_open(&ts, 1700000000);
    ts_declare(db, "Doc", "Name", "");
    uint64_t before = last_txnid(ts.path);
    pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
    unsigned arrived = 0;
    bool started = false;
    joiner j[THREADS];
    pthread_t tid[THREADS];
    for (unsigned t = 0; t < THREADS; t++) {
        j[t] = (joiner){db, t, &lock, &cond, &arrived, &started, -1};
        assert_int_equal(pthread_create(&tid[t], NULL, run_joiner, &j[t]), 0);
    }
    for (unsigned t = 0; t < THREADS; t++) {
        pthread_join(tid[t], NULL);
        assert_int_equal(j[t].rc, 0);
    }
    uint64_t commits = last_txnid(ts.path) - before;
    /* 8 writes, each acknowledged, in one commit: the 7 that queued during
     * the first one's work join its group (two commits if a writer was slow
     * to queue and came after the group) */
    assert_true(commits >= 1);
    assert_true(commits <= 2);
    assert_int_equal(ts_count(db, "Doc", true), THREADS);
    ts_close(&ts);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(group__concurrent_writers_keep_exactly_what_was_acknowledged),
        cmocka_unit_test(group__a_map_filling_during_groups_grows_and_writes_again),
        cmocka_unit_test(group__writers_arriving_during_a_commit_share_one),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
