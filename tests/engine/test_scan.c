/*
 * tests/engine/test_scan.c: scans of latest rows with constraints evaluated
 * on the stored bytes, every-type scans, deleted rows, history scans of a
 * type, scans in write transactions that rewrite or purge as they go, and
 * timeline iteration over a time range.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tests/engine/helpers.h"

#define T0 1700000000.0

static tstore ts;
static ads_db *db;

static int setup(void **state)
{
    (void)state;
    db = ts_open(&ts, T0);
    ts_declare(db, "Machine", "Name", NULL);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    assert_int_equal(ts_verify(db), 0);
    ts_close(&ts);
    return 0;
}

static void store_ok(const char *text)
{
    ads_error err;
    if (ts_store(db, &err, text))
        fail_msg("store %s: %s", text, err.message);
}

static const ads_expr *prepared(ads_arena *a, const char *text)
{
    const ads_expr *e;
    ads_error err;
    if (ads_expr_parse(&e, a, text, strlen(text), &err) || ads_expr_prepare(&e, a, e, &err))
        fail_msg("%s: %s", text, err.message);
    return e;
}

/* Names of the rows a scan yields, joined by spaces. */
static char *scan_names(ads_txn *txn, const char *type, const char *where, unsigned flags)
{
    ads_arena *a = ads_arena_new();
    const ads_type *t = NULL;
    ads_scan *s;
    ads_row *r;
    ads_error err;
    ads_buf b = ADS_BUF_INIT;
    if (type && ads_txn_type(&t, txn, type, strlen(type), &err))
        fail_msg("%s", err.message);
    assert_int_equal(ads_scan_open(&s, txn, t, where ? prepared(a, where) : NULL, flags, &err), 0);
    int rc;
    while ((rc = ads_scan_next(&r, s, &err)) == 1) {
        ads_view view = ads_row_view(r, NULL);
        ads_value v;
        const ads_expr *e = prepared(a, "Name ?: ForName ?: ForType");
        ads_expr_eval(&v, e, &view, a);
        if (b.len)
            ads_buf_addc(&b, ' ');
        if (v.type == ADS_STRING)
            ads_buf_add(&b, v.u.s.p, v.u.s.len);
        else
            ads_value_unparse(&b, &v);
        if (flags & ADS_SCAN_HISTORY)
            ads_buf_adds(&b, r->latest ? "*" : "");
    }
    if (rc < 0)
        fail_msg("scan: %s", err.message);
    ads_scan_close(s);
    ads_arena_free(a);
    char *out = strdup(ads_buf_cstr(&b));
    ads_buf_free(&b);
    return out;
}

static void eq_free(char *got, const char *want)
{
    if (strcmp(got, want) != 0)
        fail_msg("got  %s\nwant %s", got, want);
    free(got);
}

static void scan__constraint_on_stored_bytes(void **state)
{
    (void)state;
    store_ok("{ [ AdType = \"Machine\"; Name = \"m1\"; Memory = 2048; Arch = \"x86_64\"; Disk = 10 ],"
             "  [ AdType = \"Machine\"; Name = \"m2\"; Memory = 512; Arch = \"X86_64\"; Disk = 1e6 ],"
             "  [ AdType = \"Machine\"; Name = \"m3\"; Memory = 4096; Arch = \"ARM64\"; Owner = \"alice\" ],"
             "  [ AdType = \"Machine\"; Name = \"m4\"; Memory = 4096; Arch = \"X86_64\"; Owner = \"ALICE\" ],"
             "  [ AdType = \"Machine\"; Name = \"m5\"; Memory = 4096; Arch = \"X86_64\"; Disk = 100000 ] }");
    ads_txn *txn;
    assert_int_equal(ads_txn_begin(&txn, db, ADS_TXN_READONLY, NULL), 0);
    eq_free(scan_names(txn, "Machine", NULL, 0), "m1 m2 m3 m4 m5");
    eq_free(scan_names(txn, "Machine",
                       "Memory > 1024 && Arch == \"X86_64\" && (Disk >= 100000 || Owner == \"alice\")",
                       0),
            "m4 m5");
    /* the timeline attributes are there to test */
    eq_free(scan_names(txn, "Machine", "__Latest && !_Deleted && _Timestamp > `2023-01-01T00:00:00Z`", 0),
            "m1 m2 m3 m4 m5");
    /* undefined and error are not true; numbers count */
    eq_free(scan_names(txn, "Machine", "Owner == \"alice\"", 0), "m3 m4");
    eq_free(scan_names(txn, "Machine", "Memory - 512", 0), "m1 m3 m4 m5");
    eq_free(scan_names(txn, "Machine", "Memory + \"x\"", 0), "");
    ads_txn_abort(txn);
}

static void scan__every_type_and_deleted_rows(void **state)
{
    (void)state;
    ts_declare(db, "Disk", "Name", NULL);
    store_ok("{ [ AdType = \"Machine\"; Name = \"m1\" ], [ AdType = \"Disk\"; Name = \"d1\" ],"
             "  [ AdType = \"Machine\"; Name = \"m2\"; _Deleted = true ] }");
    ads_txn *txn;
    assert_int_equal(ads_txn_begin(&txn, db, ADS_TXN_READONLY, NULL), 0);
    /* every type, in type order: the built-in types first (Type, then Attribute records) */
    eq_free(scan_names(txn, NULL, "AdType != \"Attribute\"", 0), "Disk Machine m1 d1");
    eq_free(scan_names(txn, NULL, "AdType != \"Attribute\"", ADS_SCAN_DELETED),
            "Disk Machine m1 m2 d1");
    eq_free(scan_names(txn, "Machine", "_Deleted", ADS_SCAN_DELETED), "m2");
    ads_txn_abort(txn);
}

static void scan__history_of_a_type_record_by_record(void **state)
{
    (void)state;
    store_ok("{ [ AdType = \"Machine\"; Name = \"b\"; V = 1 ], [ AdType = \"Machine\"; Name = \"a\"; V = 1 ] }");
    ts_time(&ts, T0 + 1);
    store_ok("[ AdType = \"Machine\"; Name = \"b\"; V = 2 ]");
    ts_time(&ts, T0 + 2);
    store_ok("[ AdType = \"Machine\"; Name = \"b\"; V = 3 ]");
    ads_txn *txn;
    assert_int_equal(ads_txn_begin(&txn, db, ADS_TXN_READONLY, NULL), 0);
    eq_free(scan_names(txn, "Machine", NULL, ADS_SCAN_HISTORY), "a* b b b*");
    eq_free(scan_names(txn, "Machine", "V >= 2", ADS_SCAN_HISTORY), "b b*");
    ads_txn_abort(txn);
}

static void scan__write_transaction_rewrites_and_purges_as_it_goes(void **state)
{
    (void)state;
    char text[200];
    for (int i = 0; i < 300; i++) {
        snprintf(text, sizeof text, "[ AdType = \"Machine\"; Name = \"m%03d\"; V = %d ]", i, i);
        store_ok(text);
    }
    ads_txn *txn;
    ads_scan *s;
    ads_row *r;
    const ads_type *t;
    ads_error err;
    ads_arena *a = ads_arena_new();
    /* every row rewritten (V + 1000) while scanning: each is seen once */
    assert_int_equal(ads_txn_begin(&txn, db, 0, NULL), 0);
    assert_int_equal(ads_txn_type(&t, txn, "Machine", 7, NULL), 0);
    assert_int_equal(ads_scan_open(&s, txn, t, NULL, 0, NULL), 0);
    int seen = 0, rc;
    while ((rc = ads_scan_next(&r, s, &err)) == 1) {
        const ads_record *rec;
        ads_value v;
        assert_int_equal(ads_row_record(&rec, r, 0, a, NULL), 0);
        assert_int_equal(ads_record_eval_attr(&v, rec, "V", 1, a), 0);
        assert_true(v.u.i < 1000);
        char upd[200];
        snprintf(upd, sizeof upd, "[ AdType = \"Machine\"; Name = \"m%03d\"; V = %d ]", (int)v.u.i,
                 (int)v.u.i + 1000);
        const ads_record *nr;
        assert_int_equal(ads_record_parse(&nr, a, upd, strlen(upd), NULL), 0);
        if (ads_txn_put_row(txn, r, nr, NULL, &err))
            fail_msg("put_row: %s", err.message);
        seen++;
    }
    assert_int_equal(rc, 0);
    assert_int_equal(seen, 300);
    ads_scan_close(s);
    assert_int_equal(ads_txn_commit(txn, NULL), 0);
    assert_int_equal(ts_count(db, "Machine", false), 300);
    /* purge every other record while scanning */
    assert_int_equal(ads_txn_begin(&txn, db, 0, NULL), 0);
    assert_int_equal(ads_txn_type(&t, txn, "Machine", 7, NULL), 0);
    assert_int_equal(ads_scan_open(&s, txn, t, prepared(a, "V % 2 == 0"), 0, NULL), 0);
    seen = 0;
    while ((rc = ads_scan_next(&r, s, &err)) == 1) {
        assert_int_equal(ads_txn_purge(txn, r, NULL), 0);
        seen++;
    }
    assert_int_equal(rc, 0);
    assert_int_equal(seen, 150);
    ads_scan_close(s);
    assert_int_equal(ads_txn_commit(txn, NULL), 0);
    assert_int_equal(ts_count(db, "Machine", false), 150);
    ads_arena_free(a);
}

/* Timeline: (record name, _Timestamp offset from T0) of each row, in order. */
static char *timeline(double t1, double t2)
{
    ads_txn *txn;
    ads_timeline *tl;
    ads_row *r;
    size_t rec;
    const ads_type *t;
    ads_error err;
    ads_arena *a = ads_arena_new();
    ads_buf b = ADS_BUF_INIT;
    assert_int_equal(ads_txn_begin(&txn, db, ADS_TXN_READONLY, NULL), 0);
    assert_int_equal(ads_txn_type(&t, txn, "Machine", 7, NULL), 0);
    if (ads_timeline_open(&tl, txn, t, T0 + t1, T0 + t2, &err))
        fail_msg("timeline: %s", err.message);
    int rc;
    while ((rc = ads_timeline_next(&r, &rec, tl, &err)) == 1) {
        ads_value keys;
        assert_int_equal(ads_row_key_values(&keys, r, a, NULL), 0);
        ads_buf_printf(&b, "%s%.*s@%g%s%s", b.len ? " " : "", (int)keys.u.list.items[0].u.s.len,
                       keys.u.list.items[0].u.s.p, r->ts - T0, r->deleted ? "d" : "",
                       r->latest ? "*" : "");
    }
    if (rc < 0)
        fail_msg("timeline: %s", err.message);
    ads_timeline_close(tl);
    ads_txn_abort(txn);
    ads_arena_free(a);
    char *out = strdup(ads_buf_cstr(&b));
    ads_buf_free(&b);
    return out;
}

static void timeline__rows_in_range_plus_the_one_in_effect(void **state)
{
    (void)state;
    /* a: rows at 0, 10, 20, ..., 100; b: at 5 and 55, deleted at 75; c: from 50; d: at 200 */
    for (int i = 0; i <= 100; i += 10) {
        char text[200];
        ts_time(&ts, T0 + i);
        snprintf(text, sizeof text, "[ AdType = \"Machine\"; Name = \"a\"; V = %d ]", i);
        store_ok(text);
    }
    store_ok("[ AdType = \"Machine\"; Name = \"b\"; _Timestamp = `2023-11-14T22:13:25Z` ]");
    /* (a change: a store equal to the row in effect would append nothing) */
    store_ok("[ AdType = \"Machine\"; Name = \"b\"; V = 1; _Timestamp = `2023-11-14T22:14:15Z` ]");
    store_ok("[ AdType = \"Machine\"; Name = \"b\"; _Deleted = true; _Timestamp = `2023-11-14T22:14:35Z` ]");
    store_ok("[ AdType = \"Machine\"; Name = \"c\"; _Timestamp = `2023-11-14T22:14:10Z` ]");
    store_ok("[ AdType = \"Machine\"; Name = \"d\"; _Timestamp = `2023-11-14T22:16:40Z` ]");
    /* in time order; at equal times, in the order written (a@50 before c@50) */
    eq_free(timeline(33, 60), "b@5 a@30 a@40 a@50 c@50* b@55");
    eq_free(timeline(30, 31), "b@5 a@30");
    eq_free(timeline(0, 1000), "a@0 b@5 a@10 a@20 a@30 a@40 a@50 c@50* b@55 a@60 a@70 b@75d* a@80 "
                               "a@90 a@100* d@200*");
    eq_free(timeline(-100, 1), "a@0");
    eq_free(timeline(80, 90), "c@50* b@75d* a@80");
    eq_free(timeline(300, 400), "c@50* b@75d* a@100* d@200*");
    /* a record with more rows than the timeline buffers at once (8): every
     * refill reads on from the last */
    char want[2048] = "c@50* b@75d* a@100* d@200*";
    for (int i = 0; i < 40; i++) {
        char text[200];
        ts_time(&ts, T0 + 1000 + i);
        snprintf(text, sizeof text, "[ AdType = \"Machine\"; Name = \"e\"; V = %d ]", i);
        store_ok(text);
        snprintf(want + strlen(want), sizeof want - strlen(want), " e@%d%s", 1000 + i,
                 i == 39 ? "*" : "");
    }
    eq_free(timeline(999, 2000), want);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(scan__constraint_on_stored_bytes),
        T(scan__every_type_and_deleted_rows),
        T(scan__history_of_a_type_record_by_record),
        T(scan__write_transaction_rewrites_and_purges_as_it_goes),
        T(timeline__rows_in_range_plus_the_one_in_effect),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
