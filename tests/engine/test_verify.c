/*
 * tests/engine/test_verify.c: damage done to a store behind the engine's
 * back (through LMDB itself) is found: a flipped byte in a row fails its
 * checksum on every read and in verify, never crashes; rows that lost their
 * latest row, counts that disagree, and keys that disagree with their rows
 * are reported with the type and key where they are.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <lmdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/buf.h"
#include "engine/engine_int.h"
#include "tests/engine/helpers.h"

#define T0 1700000000.0

static tstore ts;
static ads_db *db;

static int setup(void **state)
{
    (void)state;
    db = ts_open(&ts, T0);
    ts_declare(db, "Machine", "Name", NULL);
    ads_error err;
    for (int i = 0; i < 20; i++) {
        char text[200];
        snprintf(text, sizeof text, "[ AdType = \"Machine\"; Name = \"m%02d\"; Memory = %d ]", i,
                 i * 100);
        if (ts_store(db, &err, text))
            fail_msg("%s", err.message);
    }
    ts_time(&ts, T0 + 1);
    assert_int_equal(ts_store(db, &err, "[ AdType = \"Machine\"; Name = \"m05\"; Memory = 1 ]"), 0);
    ts_reopen_close(&ts);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    ts_close(&ts);
    return 0;
}

/* Run fn on the raw LMDB table `table` of the store. */
static void raw(const char *table, void (*fn)(MDB_txn *, MDB_dbi, void *), void *arg)
{
    MDB_env *env;
    MDB_txn *txn;
    MDB_dbi dbi;
    assert_int_equal(mdb_env_create(&env), 0);
    assert_int_equal(mdb_env_set_maxdbs(env, 8), 0);
    assert_int_equal(mdb_env_open(env, ts.path, 0, 0600), 0);
    assert_int_equal(mdb_txn_begin(env, NULL, 0, &txn), 0);
    assert_int_equal(mdb_dbi_open(txn, table, 0, &dbi), 0);
    fn(txn, dbi, arg);
    assert_int_equal(mdb_txn_commit(txn), 0);
    mdb_env_close(env);
}

/* A cursor on the n-th entry of dbi (k, v), to close after use. */
static void nth_entry(MDB_txn *txn, MDB_dbi dbi, int n, MDB_cursor **c, MDB_val *k, MDB_val *v)
{
    assert_int_equal(mdb_cursor_open(txn, dbi, c), 0);
    int rc = mdb_cursor_get(*c, k, v, MDB_FIRST);
    for (int i = 0; i < n && rc == 0; i++)
        rc = mdb_cursor_get(*c, k, v, MDB_NEXT);
    assert_int_equal(rc, 0);
}

/* Flip one bit near the end of the value of the n-th key. */
static void flip(MDB_txn *txn, MDB_dbi dbi, void *arg)
{
    int n = *(int *)arg;
    MDB_cursor *c;
    MDB_val k, v;
    nth_entry(txn, dbi, n, &c, &k, &v);
    unsigned char *copy = malloc(v.mv_size);
    memcpy(copy, v.mv_data, v.mv_size);
    copy[v.mv_size - 2] ^= 0x10;
    MDB_val nv = {v.mv_size, copy};
    MDB_val kc = k;
    mdb_cursor_close(c);
    assert_int_equal(mdb_put(txn, dbi, &kc, &nv, 0), 0);
    free(copy);
}

/* In a read transaction (*txn, left open) of the reopened store, the
 * lookup of Machine m16 fails with ADS_ECORRUPT and message want. */
static void m16_fails(ads_txn **txn, const ads_type **t, ads_arena *a, const char *want)
{
    ads_row row;
    ads_error err;
    ads_value key = ads_string("m16", 3);
    assert_int_equal(ads_txn_begin(txn, db, ADS_TXN_READONLY, NULL), 0);
    assert_int_equal(ads_txn_type(t, *txn, "Machine", 7, NULL), 0);
    assert_int_equal(ads_txn_get(*txn, &row, *t, &key, 1, a, &err), ADS_ECORRUPT);
    assert_string_equal(err.message, want);
}

static void corrupt__flipped_byte_is_reported_by_reads_and_verify(void **state)
{
    (void)state;
    int n = 20; /* latest: the Type record, 3 Attribute records, then m00, m01, ... */
    raw("latest", flip, &n);
    db = ts_reopen(&ts);
    ads_txn *txn;
    const ads_type *t;
    ads_error err;
    ads_arena *a = ads_arena_new();
    m16_fails(&txn, &t, a, "Machine: row checksum mismatch (the row is corrupt)");
    /* a scan stops at it with the same error, after the rows before it */
    ads_scan *s;
    ads_row *r;
    int rows = 0, rc;
    assert_int_equal(ads_scan_open(&s, txn, t, NULL, 0, NULL), 0);
    while ((rc = ads_scan_next(&r, s, &err)) == 1)
        rows++;
    assert_int_equal(rc, ADS_ECORRUPT);
    assert_int_equal(rows, 16);
    assert_string_equal(err.message,
                        "latest row of type Machine: row checksum mismatch (the row is corrupt)");
    ads_scan_close(s);
    ads_txn_abort(txn);
    ts_reports rep = {0};
    ads_verify_result res;
    assert_int_equal(ads_db_verify(&res, db, ts_collect, &rep, &err), 0);
    assert_int_equal(res.problems, 2);
    assert_string_equal(rep.text[0], "type Machine, key { \"m16\" }: latest row: row checksum "
                                     "mismatch (the row is corrupt)");
    /* the record no longer counts, so the counts disagree */
    assert_string_equal(rep.text[1], "type Machine: counts say records 20 (deleted 0), history "
                                     "rows 1; the rows say 19 (0), 1");
    ads_arena_free(a);
}

/* Rows over 240 bytes take another form of the checksum (AVX2 where the CPU
 * has it): a bit flipped in any part of such a row fails a read of it and a
 * scan over it, and the row reads again once the bit is back. */
static void corrupt__a_flipped_byte_in_a_long_row_fails_reads(void **state)
{
    (void)state;
    enum { LEN = 2400 };
    char *text = malloc(LEN + 100);
    assert_non_null(text);
    int n = snprintf(text, 100, "[ AdType = \"Machine\"; Name = \"m99\"; Text = \"LONGROW:");
    for (int i = 0; i < LEN; i++)
        text[n + i] = (char)('a' + (i * 7) % 26);
    snprintf(text + n + LEN, 100, "\" ]");
    db = ts_reopen(&ts);
    ads_error err;
    if (ts_store(db, &err, text))
        fail_msg("%s", err.message);
    ts_reopen_close(&ts);
    char file[1200];
    snprintf(file, sizeof file, "%s/data.mdb", ts.path);
    static const size_t offs[] = {3, 200, 700, 1030, 1500, 2100, 2390};
    ads_arena *a = ads_arena_new();
    for (size_t i = 0; i < sizeof offs / sizeof *offs; i++) {
        assert_true(ts_flip_file(file, "LONGROW:", 8, 8 + offs[i], 0x04) >= 1);
        db = ts_reopen(&ts);
        ads_txn *txn;
        ads_row row, *r;
        const ads_type *t;
        ads_scan *s;
        ads_value key = ads_string("m99", 3);
        int rc, rows = 0;
        assert_int_equal(ads_txn_begin(&txn, db, ADS_TXN_READONLY, NULL), 0);
        assert_int_equal(ads_txn_type(&t, txn, "Machine", 7, NULL), 0);
        assert_int_equal(ads_txn_get(txn, &row, t, &key, 1, a, &err), ADS_ECORRUPT);
        assert_string_equal(err.message, "Machine: row checksum mismatch (the row is corrupt)");
        assert_int_equal(ads_scan_open(&s, txn, t, NULL, 0, NULL), 0);
        while ((rc = ads_scan_next(&r, s, &err)) == 1)
            rows++;
        assert_int_equal(rc, ADS_ECORRUPT);
        assert_int_equal(rows, 20);
        ads_scan_close(s);
        ads_txn_abort(txn);
        ts_reopen_close(&ts);
        /* the bit back: the row reads */
        assert_true(ts_flip_file(file, "LONGROW:", 8, 8 + offs[i], 0x04) >= 1);
        db = ts_reopen(&ts);
        assert_int_equal(ads_txn_begin(&txn, db, ADS_TXN_READONLY, NULL), 0);
        assert_int_equal(ads_txn_type(&t, txn, "Machine", 7, NULL), 0);
        assert_int_equal(ads_txn_get(txn, &row, t, &key, 1, a, &err), 1);
        assert_int_equal(row.len > 2400, 1);
        ads_txn_abort(txn);
        ts_reopen_close(&ts);
    }
    ads_arena_free(a);
    free(text);
}

/* Rewrite the n-th row as a row of a long key (the whole key, 500 bytes, in
 * the envelope) under its own short key, with a sound checksum. */
static void claim_long_key(MDB_txn *txn, MDB_dbi dbi, void *arg)
{
    int n = *(int *)arg;
    MDB_cursor *c;
    MDB_val k, v;
    nth_entry(txn, dbi, n, &c, &k, &v);
    row_env env;
    assert_int_equal(ads_row__parse(&env, k.mv_data, k.mv_size, v.mv_data, v.mv_size, "", NULL),
                     0);
    unsigned char full[500];
    memcpy(full, k.mv_data, k.mv_size);
    memset(full + k.mv_size, 0x61, sizeof full - k.mv_size);
    ads_buf b = ADS_BUF_INIT;
    ads_row__build(&b, k.mv_data, k.mv_size, env.flags, env.ts, env.offset, env.systs, full,
                   sizeof full, env.data, env.len);
    MDB_val kc = k, nv = {b.len, b.p};
    mdb_cursor_close(c);
    assert_int_equal(mdb_put(txn, dbi, &kc, &nv, 0), 0);
    ads_buf_free(&b);
}

/* A lookup trusts the short key it made itself, not a row that says its
 * key is another (long) one: the row's whole key is checked against the
 * key it is stored under. */
static void corrupt__a_row_claiming_a_long_key_under_a_short_one_fails_a_lookup(void **state)
{
    (void)state;
    int n = 20; /* m16 */
    raw("latest", claim_long_key, &n);
    db = ts_reopen(&ts);
    ads_txn *txn;
    ads_row row;
    const ads_type *t;
    ads_error err;
    ads_arena *a = ads_arena_new();
    m16_fails(&txn, &t, a, "Machine: the key the row is stored under is corrupt");
    ads_value key = ads_string("m15", 3);
    assert_int_equal(ads_txn_get(txn, &row, t, &key, 1, a, &err), 1);
    ads_txn_abort(txn);
    ads_arena_free(a);
}

static void corrupt__flipped_history_row(void **state)
{
    (void)state;
    int n = 0; /* the only history row: m05's first */
    raw("history", flip, &n);
    db = ts_reopen(&ts);
    char *h = ts_history(db, "Machine", "{ \"m04\" }");
    assert_string_equal(h, "[ AdType = \"Machine\"; Memory = 400; Name = \"m04\"; _Timestamp = "
                           "`2023-11-14T22:13:20Z`; __Latest = true; _Deleted = false ]");
    free(h);
    ts_reports rep = {0};
    ads_verify_result res;
    ads_error err;
    assert_int_equal(ads_db_verify(&res, db, ts_collect, &rep, &err), 0);
    assert_int_equal(res.problems, 2);
    assert_string_equal(rep.text[0], "type Machine, key { \"m05\" }: history: a chunk of rows "
                                     "fails its checksum (the store is corrupt)");
}

static void del_nth(MDB_txn *txn, MDB_dbi dbi, void *arg)
{
    int n = *(int *)arg;
    MDB_cursor *c;
    MDB_val k, v;
    nth_entry(txn, dbi, n, &c, &k, &v);
    assert_int_equal(mdb_cursor_del(c, 0), 0);
    mdb_cursor_close(c);
}

static void verify__history_without_latest_and_counts(void **state)
{
    (void)state;
    int n = 9; /* m05's latest row */
    raw("latest", del_nth, &n);
    db = ts_reopen(&ts);
    ts_reports rep = {0};
    ads_verify_result res;
    ads_error err;
    assert_int_equal(ads_db_verify(&res, db, ts_collect, &rep, &err), 0);
    assert_int_equal(res.problems, 2);
    assert_string_equal(rep.text[0], "type Machine, key { \"m05\" }: history rows without a latest "
                                     "row");
    assert_string_equal(rep.text[1], "type Machine: counts say records 20 (deleted 0), history "
                                     "rows 1; the rows say 19 (0), 1");
    assert_int_equal(res.records, 19 + 1 + 3);
}

static void verify__a_sound_store_has_no_problems(void **state)
{
    (void)state;
    db = ts_reopen(&ts);
    ts_reports rep = {0};
    ads_verify_result res;
    ads_error err;
    assert_int_equal(ads_db_verify(&res, db, ts_collect, &rep, &err), 0);
    assert_int_equal(res.problems, 0);
    /* 20 Machines, 1 Type record, 3 Attribute records; one history row */
    assert_int_equal(res.records, 24);
    assert_int_equal(res.rows, 25);
}

/* A store of 3000 records with a history, one key's byte flipped in the
 * data file at key byte `off` (of 00 00 00 10 20 "n01500" 00 00); then every
 * read that meets it fails naming the type, and verify reports, never
 * silently a shorter answer. */
static void flipped_key(size_t off, unsigned char mask, const char *scan_msg,
                        const char *get_msg)
{
    tstore big;
    ads_db *bdb = ts_open(&big, T0);
    ads_error err;
    ts_declare(bdb, "Node", "Name", NULL);
    ads_bulk *b;
    ads_arena *a = ads_arena_new();
    assert_int_equal(ads_bulk_begin(&b, bdb, NULL, &err), 0);
    for (int i = 0; i < 3000; i++) {
        char text[100];
        const ads_record *r;
        snprintf(text, sizeof text, "[ AdType = \"Node\"; Name = \"n%05d\"; X = %d ]", i, i);
        assert_int_equal(ads_record_parse(&r, a, text, strlen(text), NULL), 0);
        assert_int_equal(ads_bulk_add(b, r, &err), 0);
    }
    assert_int_equal(ads_bulk_end(b, &err), 0);
    /* a second row for n01500 (its first goes to history) */
    ts_time(&big, T0 + 10);
    assert_int_equal(ts_store(bdb, &err, "[ AdType = \"Node\"; Name = \"n01500\"; X = 0 ]"), 0);
    ts_reopen_close(&big);
    char file[1200];
    snprintf(file, sizeof file, "%s/data.mdb", big.path);
    /* the record key: type id 16, a string, its end (in `latest`, and at
     * the start of its history key) */
    static const unsigned char lkey[] = {0, 0, 0, 16, 0x20, 'n', '0', '1', '5', '0', '0', 0, 0};
    assert_true(ts_flip_file(file, lkey, sizeof lkey, off, mask) >= 2); /* latest and history */
    bdb = ts_reopen(&big);

    ads_txn *txn;
    const ads_type *t;
    ads_scan *s;
    ads_row *r, row;
    assert_int_equal(ads_txn_begin(&txn, bdb, ADS_TXN_READONLY, NULL), 0);
    assert_int_equal(ads_txn_type(&t, txn, "Node", 4, NULL), 0);
    /* a scan of every record */
    assert_int_equal(ads_scan_open(&s, txn, t, NULL, 0, &err), 0);
    int rc, n = 0;
    while ((rc = ads_scan_next(&r, s, &err)) == 1)
        n++;
    ads_scan_close(s);
    assert_int_equal(rc, ADS_ECORRUPT);
    assert_string_equal(err.message, scan_msg);
    /* with history */
    assert_int_equal(ads_scan_open(&s, txn, t, NULL, ADS_SCAN_HISTORY, &err), 0);
    while ((rc = ads_scan_next(&r, s, &err)) == 1)
        n++;
    ads_scan_close(s);
    assert_int_equal(rc, ADS_ECORRUPT);
    /* the record itself */
    ads_value kv = ads_string("n01500", 6);
    assert_int_equal(ads_txn_get(txn, &row, t, &kv, 1, a, &err), ADS_ECORRUPT);
    assert_string_equal(err.message, get_msg);
    /* over time */
    ads_timeline *tl;
    rc = ads_timeline_open(&tl, txn, t, T0 - 1, T0 + 100, &err);
    if (rc == 0) {
        size_t rec;
        while ((rc = ads_timeline_next(&r, &rec, tl, &err)) == 1)
            ;
        ads_timeline_close(tl);
    }
    assert_int_equal(rc, ADS_ECORRUPT);
    ads_txn_abort(txn);
    /* verify reports it */
    ads_verify_result res;
    assert_int_equal(ads_db_verify(&res, bdb, NULL, NULL, &err), 0);
    assert_true(res.problems > 0);
    ads_arena_free(a);
    ts_close(&big);
}

static void corrupt__a_flipped_key_byte_fails_reads_never_shortens_them(void **state)
{
    (void)state;
    /* the type id: the key leaves the type's range, which ended scans early */
    flipped_key(2, 0x40, "type Node: the store is corrupt: a key after its records cannot be "
                         "found again (adstore verify says where)",
                "type Node: the store is corrupt: a key where the record would be is damaged "
                "(adstore verify says where)");
    /* a letter of the string: keys out of order */
    flipped_key(5, 0x08, "type Node: the store is corrupt: its keys are out of order (adstore "
                         "verify says where)",
                "type Node: the store is corrupt: a key where the record would be is damaged "
                "(adstore verify says where)");
    /* the value's tag: the key no longer frames a key value */
    flipped_key(4, 0x40, "latest row of type Node: the key the row is stored under is corrupt",
                "type Node: the store is corrupt: a key where the record would be is damaged "
                "(adstore verify says where)");
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(corrupt__flipped_byte_is_reported_by_reads_and_verify),
        T(corrupt__a_flipped_byte_in_a_long_row_fails_reads),
        T(corrupt__a_row_claiming_a_long_key_under_a_short_one_fails_a_lookup),
        T(corrupt__flipped_history_row),
        T(verify__history_without_latest_and_counts),
        T(verify__a_sound_store_has_no_problems),
        T(corrupt__a_flipped_key_byte_fails_reads_never_shortens_them),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
