/*
 * tests/engine/test_deltas.c: history rows kept as differences from their
 * keyframe (engine/history.c).
 *
 * Each test writes the same operations into two stores: one as the engine
 * keeps history (differences), and a reference whose appended rows are all
 * kept whole (ADSTORE_TEST_KEYFRAME_ROWS=1 when it was opened). Every
 * record's history must read back the same from both, row for row, after
 * appends, backfills into the middle and retention trims. The stored form is
 * checked in the raw table: which rows are differences, the keyframe rule,
 * the format version. Damage is found by reads and by verify; a dump holds
 * whole rows and restores to a store that dumps the same bytes again.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <lmdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <xxhash.h>

#include "base/buf.h"
#include "engine/engine_int.h"
#include "tests/engine/helpers.h"

#define T0 1700000000.0

static tstore ts, ref;
static ads_db *db, *rdb;

static int setup(void **state)
{
    (void)state;
    setenv("ADSTORE_TEST_KEYFRAME_ROWS", "1", 1);
    rdb = ts_open(&ref, T0);
    unsetenv("ADSTORE_TEST_KEYFRAME_ROWS");
    db = ts_open(&ts, T0);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    ts_close(&ts);
    ts_close(&ref);
    return 0;
}

/* Both stores at secs. */
static void at(double secs)
{
    ts_time(&ts, secs);
    ts_time(&ref, secs);
}

/* Store text (ClassAd text of records) in both stores. */
static void both(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void both(const char *fmt, ...)
{
    char text[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    ads_error err;
    if (ts_store(db, &err, text) || ts_store(rdb, &err, text))
        fail_msg("store %s: %s", text, err.message);
}

static void declare_both(const char *type, const char *extra)
{
    ts_declare(db, type, "Name", extra);
    ts_declare(rdb, type, "Name", extra);
}

/* The record's history reads the same from both stores. */
static void same_history(const char *type, const char *key)
{
    char *a = ts_history(db, type, key), *b = ts_history(rdb, type, key);
    if (strcmp(a, b) != 0)
        fail_msg("%s %s: kept as differences:\n%s\nkept whole:\n%s", type, key, a, b);
    free(a);
    free(b);
}

/* A raw LMDB transaction on the store at path (write: read-write), behind
 * the store's back (a test store open on it is closed meanwhile); raw_end
 * commits or aborts it, closes the environment and opens the store again. */
static tstore *reopen_after; /* the test store raw_begin closed (LMDB: one handle a process) */

static MDB_txn *raw_begin(const char *path, bool write, MDB_env **env)
{
    MDB_txn *txn;
    reopen_after = NULL;
    tstore *open[2] = {&ts, &ref};
    for (int i = 0; i < 2; i++)
        if (open[i]->db && strcmp(open[i]->path, path) == 0) {
            ts_reopen_close(open[i]);
            reopen_after = open[i];
        }
    assert_int_equal(mdb_env_create(env), 0);
    assert_int_equal(mdb_env_set_maxdbs(*env, 8), 0);
    assert_int_equal(mdb_env_open(*env, path, write ? 0 : MDB_RDONLY, 0600), 0);
    assert_int_equal(mdb_txn_begin(*env, NULL, write ? 0 : MDB_RDONLY, &txn), 0);
    return txn;
}

static void raw_end(MDB_env *env, MDB_txn *txn, bool write)
{
    if (write)
        assert_int_equal(mdb_txn_commit(txn), 0);
    else
        mdb_txn_abort(txn);
    mdb_env_close(env);
    if (reopen_after == &ts)
        db = ts_reopen(&ts);
    else if (reopen_after == &ref)
        rdb = ts_reopen(&ref);
    reopen_after = NULL;
}

/* The flags of the history rows of the store at path, in key order, as a
 * string: 'd' for a difference, 'w' for a whole row; and the bytes of their
 * values; and, when ver is set, how many rows of each envelope version
 * (ver[1], ver[2]; ver[0] others). */
static char *history_forms_of(const char *path, size_t *bytes, size_t ver[3])
{
    MDB_env *env;
    MDB_txn *txn = raw_begin(path, false, &env);
    MDB_dbi dbi;
    MDB_cursor *c;
    MDB_val k, v;
    ads_buf b = ADS_BUF_INIT;
    assert_int_equal(mdb_dbi_open(txn, "history", 0, &dbi), 0);
    assert_int_equal(mdb_cursor_open(txn, dbi, &c), 0);
    *bytes = 0;
    for (int rc = mdb_cursor_get(c, &k, &v, MDB_FIRST); rc == 0;
         rc = mdb_cursor_get(c, &k, &v, MDB_NEXT)) {
        const unsigned char *p = v.mv_data;
        ads_buf_addc(&b, (p[5] & ROW_DELTA) ? 'd' : 'w');
        *bytes += v.mv_size;
        if (ver)
            ver[p[4] == 1 || p[4] == 2 ? p[4] : 0]++;
    }
    mdb_cursor_close(c);
    raw_end(env, txn, false);
    char *out = strdup(ads_buf_cstr(&b));
    ads_buf_free(&b);
    return out;
}

static char *history_forms(const char *path, size_t *bytes)
{
    return history_forms_of(path, bytes, NULL);
}

static unsigned format_of(ads_db *d)
{
    unsigned f;
    assert_int_equal(ads_db_format(&f, d, NULL), 0);
    return f;
}

/* 40 rows of one record: the load changes each time, the state every
 * fifth, an attribute comes and goes; the name, memory and a long text stay. */
static void n_rows(const char *type, const char *name, double from, int n)
{
    for (int i = 0; i < n; i++) {
        at(from + 60 * i);
        both("[ AdType = \"%s\"; Name = \"%s\"; LoadAvg = %d.25; State = \"s%d\"; Memory = 4096; "
             "Text = \"a machine of the pool, the same from row to row\"; %s ]",
             type, name, i, i / 5, i % 7 == 3 ? "Extra = { 1, 2 }; " : "");
    }
}

static void forty_rows(const char *type, const char *name, double from)
{
    n_rows(type, name, from, 40);
}

static void deltas__appended_rows_read_back_as_stored_whole(void **state)
{
    (void)state;
    declare_both("Machine", "");
    forty_rows("Machine", "m", T0);
    same_history("Machine", "{ \"m\" }");
    /* 39 history rows: a whole row every ADS_HISTORY_KEYFRAME_ROWS, the
     * others differences from it, a fraction of the size */
    size_t dbytes, wbytes;
    char *forms = history_forms(ts.path, &dbytes), *whole = history_forms(ref.path, &wbytes);
    char want[64] = "";
    for (int i = 0; i < 39; i++)
        strcat(want, i % ADS_HISTORY_KEYFRAME_ROWS == 0 ? "w" : "d");
    assert_string_equal(forms, want);
    for (int i = 0; i < 39; i++)
        assert_int_equal(whole[i], 'w');
    assert_true(dbytes * 2 < wbytes);
    free(forms);
    free(whole);
    /* the format says so (6: the packed envelope, which came with the
     * first row, and differences) */
    assert_int_equal(format_of(db), ADS_DB_FORMAT_ENVELOPE);
    assert_int_equal(format_of(rdb), ADS_DB_FORMAT_ENVELOPE);
    assert_int_equal(ts_verify(db), 0);
}

static void deltas__backfilled_rows_between_differences_read_back(void **state)
{
    (void)state;
    declare_both("Machine", "");
    forty_rows("Machine", "m", T0);
    at(T0 + 5000);
    /* before the first row, between differences, on a keyframe's instant,
     * between the last history row and the latest row */
    static const int when[] = {-30, 90, 95, 16 * 60 + 30, 16 * 60, 38 * 60 + 10, 38 * 60 + 20};
    for (size_t i = 0; i < sizeof when / sizeof when[0]; i++)
        both("[ AdType = \"Machine\"; Name = \"m\"; LoadAvg = %zu.5; Back = true; "
             "_Timestamp = %.0f ]",
             i, T0 + when[i]);
    same_history("Machine", "{ \"m\" }");
    size_t n;
    char *forms = history_forms(ts.path, &n);
    /* the row before all others is whole; the others are differences */
    assert_int_equal(forms[0], 'w');
    assert_int_equal(strlen(forms), 39 + 7);
    free(forms);
    assert_int_equal(ts_verify(db), 0);
    /* and the store reads the same after it is opened again */
    ts_reopen_close(&ts);
    db = ts_reopen(&ts);
    same_history("Machine", "{ \"m\" }");
}

/* The number of entries of table `name` of the store at path. */
static size_t table_entries(const char *path, const char *name)
{
    MDB_env *env;
    MDB_txn *txn = raw_begin(path, false, &env);
    MDB_dbi dbi;
    MDB_stat st;
    assert_int_equal(mdb_dbi_open(txn, name, 0, &dbi), 0);
    assert_int_equal(mdb_stat(txn, dbi, &st), 0);
    raw_end(env, txn, false);
    return st.ms_entries;
}

static void deltas__retention_keeps_a_removed_keyframe_as_the_record_s_base(void **state)
{
    (void)state;
    declare_both("Kept", "HistoryRetention = `0:10:00`;");
    for (int r = 0; r < 3; r++) {
        char name[8];
        snprintf(name, sizeof name, "k%d", r);
        forty_rows("Kept", name, T0 + 7 * r);
    }
    /* each record keeps the row in effect 10 minutes back and the 9 after
     * it; the first of them is a difference from a keyframe that retention
     * removed, kept as the record's base; no other row was written again */
    size_t dbytes, wbytes;
    char *forms = history_forms(ts.path, &dbytes), *whole = history_forms(ref.path, &wbytes);
    assert_int_equal(strlen(forms), 3 * 10);
    for (int r = 0; r < 3; r++) {
        char key[16];
        snprintf(key, sizeof key, "{ \"k%d\" }", r);
        same_history("Kept", key);
        assert_int_equal(forms[10 * r], 'd');
    }
    assert_int_equal(table_entries(ts.path, "bases"), 3);
    assert_int_equal(table_entries(ref.path, "bases"), 0);
    /* (a keyframe trimmed into the base makes the next row whole: here one
     * row in 10, the rows a retention of 10 minutes keeps) */
    assert_true(dbytes * 3 < wbytes * 2);
    free(forms);
    free(whole);
    assert_int_equal(ts_verify(db), 0);
    /* the same read through a timeline (its rows in effect at the start
     * found from the base), and after the store is opened again */
    ts_reopen_close(&ts);
    db = ts_reopen(&ts);
    same_history("Kept", "{ \"k1\" }");
    /* later writes: once the first kept row is whole, the base goes; a
     * purged record's base goes with it */
    for (int i = 40; i < 60; i++) {
        at(T0 + 60 * i);
        both("[ AdType = \"Kept\"; Name = \"k0\"; LoadAvg = %d.25 ]", i);
    }
    same_history("Kept", "{ \"k0\" }");
    ads_txn *txn;
    const ads_type *t;
    ads_row row;
    ads_value key = ads_string("k1", 2);
    ads_arena *a = ads_arena_new();
    assert_int_equal(ads_txn_begin(&txn, db, 0, NULL), 0);
    assert_int_equal(ads_txn_type(&t, txn, "Kept", 4, NULL), 0);
    assert_int_equal(ads_txn_get(txn, &row, t, &key, 1, a, NULL), 1);
    assert_int_equal(ads_txn_purge(txn, &row, NULL), 0);
    assert_int_equal(ads_txn_commit(txn, NULL), 0);
    ads_arena_free(a);
    assert_int_equal(ts_verify(db), 0);
    /* k0's first kept row says whether it still has a base; k2 has one */
    char *f2 = history_forms(ts.path, &dbytes);
    assert_int_equal(strlen(f2), 20);
    assert_int_equal(table_entries(ts.path, "bases"), 1 + (f2[0] == 'd'));
    free(f2);
    /* compaction applies the retention at the real clock's now: every row
     * of 2023 is past the cut, the history goes and the bases with it */
    ts_reopen_close(&ts);
    ads_compact_result res;
    ads_error cerr;
    if (ads_db_compact(ts.path, NULL, &res, &cerr))
        fail_msg("compact: %s", cerr.message);
    assert_int_equal(res.retention.rows, 20);
    assert_int_equal(table_entries(ts.path, "history"), 0);
    assert_int_equal(table_entries(ts.path, "bases"), 0);
    db = ts_reopen(&ts);
    assert_int_equal(ts_verify(db), 0);
}

static void deltas__compaction_copies_the_bases(void **state)
{
    (void)state;
    declare_both("Kept", "HistoryRetention = `0:10:00`;");
    forty_rows("Kept", "k", T0);
    assert_int_equal(table_entries(ts.path, "bases"), 1);
    char *before = ts_history(db, "Kept", "{ \"k\" }");
    /* a retention long enough that compaction removes nothing more */
    ts_declare(db, "Kept", "Name", "HistoryRetention = relTime(3e9);");
    ts_reopen_close(&ts);
    ads_compact_result res;
    ads_error err;
    if (ads_db_compact(ts.path, NULL, &res, &err))
        fail_msg("compact: %s", err.message);
    assert_int_equal(res.retention.rows, 0);
    assert_int_equal(table_entries(ts.path, "bases"), 1);
    db = ts_reopen(&ts);
    char *after = ts_history(db, "Kept", "{ \"k\" }");
    assert_string_equal(before, after);
    assert_int_equal(ts_verify(db), 0);
    free(before);
    free(after);
}

/* The history of record key of type through handle d fails to read with
 * code and a message holding want. */
static void history_fails(ads_db *d, const char *type, const char *key, int code,
                          const char *want)
{
    ads_txn *txn;
    const ads_type *t;
    ads_row row, *r;
    ads_scan *s;
    ads_error err;
    ads_arena *a = ads_arena_new();
    ads_value kv = ads_string(key, strlen(key));
    assert_int_equal(ads_txn_begin(&txn, d, ADS_TXN_READONLY, NULL), 0);
    assert_int_equal(ads_txn_type(&t, txn, type, strlen(type), NULL), 0);
    assert_int_equal(ads_txn_get(txn, &row, t, &kv, 1, a, NULL), 1);
    assert_int_equal(ads_history_open(&s, txn, &row, NULL, ADS_SCAN_DELETED, NULL), 0);
    int rc;
    while ((rc = ads_scan_next(&r, s, &err)) == 1)
        ;
    assert_int_equal(rc, code);
    if (!strstr(err.message, want))
        fail_msg("got %s, want %s", err.message, want);
    ads_scan_close(s);
    ads_txn_abort(txn);
    ads_arena_free(a);
}

/* A handle opened read-only on a store without the `bases` table (made
 * before format 5) does not see the table a writer makes later: a history
 * row whose keyframe went there is an error that says to open the store
 * again, not a corrupt store; opened again, it reads. */
static void deltas__a_read_only_handle_older_than_the_bases_says_to_reopen(void **state)
{
    (void)state;
    declare_both("Kept", "HistoryRetention = `0:10:00`;");
    ts_reopen_close(&ts);
    MDB_env *env;
    MDB_txn *txn = raw_begin(ts.path, true, &env);
    MDB_dbi dbi;
    assert_int_equal(mdb_dbi_open(txn, "bases", 0, &dbi), 0);
    assert_int_equal(mdb_drop(txn, dbi, 1), 0);
    raw_end(env, txn, true);
    ads_db *ro;
    ads_error err;
    assert_int_equal(ads_db_open(&ro, ts.path, ADS_DB_READONLY, &err), 0);
    db = ts_reopen(&ts);
    forty_rows("Kept", "k", T0);
    history_fails(ro, "Kept", "k", ADS_ESTORAGE, "open the store again");
    ads_db_close(ro);
    assert_int_equal(ads_db_open(&ro, ts.path, ADS_DB_READONLY, &err), 0);
    char *h = ts_history(ro, "Kept", "{ \"k\" }"), *w = ts_history(rdb, "Kept", "{ \"k\" }");
    assert_string_equal(h, w);
    free(h);
    free(w);
    ads_db_close(ro);
}

/* Delete the n-th history row behind the store's back. */
static void raw_delete(const char *path, int n)
{
    MDB_env *env;
    MDB_txn *txn = raw_begin(path, true, &env);
    MDB_dbi dbi;
    MDB_cursor *c;
    MDB_val k, v;
    assert_int_equal(mdb_dbi_open(txn, "history", 0, &dbi), 0);
    assert_int_equal(mdb_cursor_open(txn, dbi, &c), 0);
    int rc = mdb_cursor_get(c, &k, &v, MDB_FIRST);
    for (int i = 0; i < n && rc == 0; i++)
        rc = mdb_cursor_get(c, &k, &v, MDB_NEXT);
    assert_int_equal(rc, 0);
    assert_int_equal(mdb_cursor_del(c, 0), 0);
    mdb_cursor_close(c);
    raw_end(env, txn, true);
}

/* verify's first problem holds want. */
static void verify_says(const char *want)
{
    ts_reports rep = {0};
    ads_verify_result res;
    ads_error err;
    assert_int_equal(ads_db_verify(&res, db, ts_collect, &rep, &err), 0);
    assert_true(res.problems >= 1);
    if (!strstr(rep.text[0], want))
        fail_msg("verify: %s, want %s", rep.text[0], want);
}

static void damage__a_difference_without_its_keyframe_is_corrupt(void **state)
{
    (void)state;
    declare_both("Machine", "");
    forty_rows("Machine", "m", T0);
    /* the second keyframe gone: the rows after it follow another whole row */
    ts_reopen_close(&ts);
    raw_delete(ts.path, ADS_HISTORY_KEYFRAME_ROWS);
    db = ts_reopen(&ts);
    history_fails(db, "Machine", "m", ADS_ECORRUPT,
                  "Machine: a history row kept as a difference does not follow its keyframe");
    verify_says("type Machine, key { \"m\" }: history row: a history row kept as a difference "
                "does not follow its keyframe (the store is corrupt)");
    /* the first: the rows after it have no whole row before them */
    ts_reopen_close(&ts);
    raw_delete(ts.path, 0);
    db = ts_reopen(&ts);
    history_fails(db, "Machine", "m", ADS_ECORRUPT,
                  "Machine: a history row kept as a difference has no whole row before it");
    verify_says("has no whole row before it (the store is corrupt)");
}

/* The latest row of m rewritten as if it were a difference. */
static void latest_as_delta(MDB_txn *txn, MDB_dbi dbi)
{
    MDB_cursor *c;
    MDB_val k, v;
    assert_int_equal(mdb_cursor_open(txn, dbi, &c), 0);
    int rc = mdb_cursor_get(c, &k, &v, MDB_LAST);
    assert_int_equal(rc, 0);
    unsigned char *copy = malloc(v.mv_size);
    memcpy(copy, v.mv_data, v.mv_size);
    copy[5] |= ROW_DELTA;
    uint32_t sum = ads_row__checksum(copy + 4, v.mv_size - 4);
    for (int i = 0; i < 4; i++)
        copy[i] = (unsigned char)(sum >> (8 * i));
    MDB_val nv = {v.mv_size, copy}, kc = k;
    mdb_cursor_close(c);
    assert_int_equal(mdb_put(txn, dbi, &kc, &nv, 0), 0);
    free(copy);
}

/* Machine "m" with forty rows in the test store, then table's rows damaged
 * by damage behind the engine's back. */
static void forty_rows_damaged(const char *table, void (*damage)(MDB_txn *, MDB_dbi))
{
    declare_both("Machine", "");
    forty_rows("Machine", "m", T0);
    ts_reopen_close(&ts);
    MDB_env *env;
    MDB_txn *txn = raw_begin(ts.path, true, &env);
    MDB_dbi dbi;
    assert_int_equal(mdb_dbi_open(txn, table, 0, &dbi), 0);
    damage(txn, dbi);
    raw_end(env, txn, true);
    db = ts_reopen(&ts);
}

static void damage__a_latest_row_kept_as_a_difference_is_corrupt(void **state)
{
    (void)state;
    forty_rows_damaged("latest", latest_as_delta);
    verify_says("type Machine, key { \"m\" }: the latest row is kept as a difference");
    /* a scan refuses it */
    ads_txn *t;
    const ads_type *ty;
    ads_scan *s;
    ads_row *r;
    ads_error err;
    assert_int_equal(ads_txn_begin(&t, db, ADS_TXN_READONLY, NULL), 0);
    assert_int_equal(ads_txn_type(&ty, t, "Machine", 7, NULL), 0);
    assert_int_equal(ads_scan_open(&s, t, ty, NULL, 0, NULL), 0);
    assert_int_equal(ads_scan_next(&r, s, &err), ADS_ECORRUPT);
    assert_string_equal(err.message,
                        "latest row of type Machine: kept as a difference (the store is corrupt)");
    ads_scan_close(s);
    ads_txn_abort(t);
}

/* A salvage's bad row: it must be the message in ctx (NULL: no bad row). */
static void note_bad(void *ctx, const char *what)
{
    if (!ctx)
        fail_msg("a bad row in a sound store: %s", what);
    assert_string_equal(what, (const char *)ctx);
}

/* The first history row kept as a difference rewritten so that it makes a
 * row that is not sound MessagePack (one entry of its own: id 5 = the
 * never-used byte c1), its checksum made anew (docs/storage.md: over bytes
 * 4.., seeded then with the key's dates): a row only the MessagePack check
 * of the row made can refuse. */
static void delta_making_a_bad_row(MDB_txn *txn, MDB_dbi dbi)
{
    MDB_cursor *c;
    MDB_val k, v;
    assert_int_equal(mdb_cursor_open(txn, dbi, &c), 0);
    int rc = mdb_cursor_get(c, &k, &v, MDB_FIRST);
    while (rc == 0 && !(((const unsigned char *)v.mv_data)[5] & ROW_DELTA))
        rc = mdb_cursor_get(c, &k, &v, MDB_NEXT);
    assert_int_equal(rc, 0);
    const unsigned char *old = v.mv_data;
    /* version 2, dates from the key (flag 8), UTC: 7 bytes, then the ref */
    assert_int_equal(old[4], 2);
    assert_true(old[5] & 8);
    assert_int_equal(old[6], 0);
    unsigned char row[15];
    memcpy(row, old, 11);
    const unsigned char steps[4] = {0xc0, 0x02, 0x05, 0xc1};
    memcpy(row + 11, steps, 4);
    const unsigned char *key = k.mv_data;
    XXH64_hash_t h = XXH3_64bits(row + 4, sizeof row - 4);
    h = XXH3_64bits_withSeed(key + k.mv_size - 16, 16, h);
    for (int i = 0; i < 4; i++)
        row[i] = (unsigned char)(h >> (8 * i));
    MDB_val kc = k, nv = {sizeof row, row};
    mdb_cursor_close(c);
    assert_int_equal(mdb_put(txn, dbi, &kc, &nv, 0), 0);
}

static void dump__refuses_a_difference_that_makes_a_bad_row(void **state)
{
    (void)state;
    forty_rows_damaged("history", delta_making_a_bad_row);
    /* both forms name it the same way (the text form makes the row's bytes
     * and reads them again; MessagePack checks the row made) */
    char first[ADS_ERROR_MESSAGE_MAX] = "";
    for (int format = 0; format < 2; format++) {
        char *p = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&p, &len);
        ads_dump_options o = ADS_DUMP_OPTIONS_INIT;
        o.format = format ? ADS_DUMP_TEXT : ADS_DUMP_MSGPACK;
        ads_error err;
        assert_int_equal(ads_db_dump(db, f, &o, NULL, &err), ADS_ECORRUPT);
        const char *want = "type Machine, key { \"m\" }: history row: msgpack";
        if (strncmp(err.message, want, strlen(want)) != 0)
            fail_msg("dump: %s, want %s...", err.message, want);
        if (format == 0)
            snprintf(first, sizeof first, "%s", err.message);
        else
            assert_string_equal(err.message, first);
        fclose(f);
        free(p);
    }
    /* a salvage leaves that row out, names it, and dumps the other 39 rows
     * of m (with the Type and Attribute records' rows) */
    size_t clean = 0;
    for (int salvage = 0; salvage < 2; salvage++) {
        char *p = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&p, &len);
        ads_dump_options o = ADS_DUMP_OPTIONS_INIT;
        o.salvage = true;
        o.bad_row = note_bad;
        o.ctx = salvage ? first : NULL;
        ads_dump_result res;
        ads_error err;
        if (salvage == 0) /* the reference's rows: the same, none bad */
            assert_int_equal(ads_db_dump(rdb, f, &o, &res, &err), 0);
        else
            assert_int_equal(ads_db_dump(db, f, &o, &res, &err), 0);
        fclose(f);
        free(p);
        if (salvage == 0) {
            assert_int_equal(res.skipped, 0);
            clean = res.rows;
        } else {
            assert_int_equal(res.skipped, 1);
            assert_int_equal(res.rows, clean - 1);
        }
    }
}

/* The dump of d into a malloc'd buffer (*len bytes). */
static char *dump_of(ads_db *d, size_t *len)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    ads_error err;
    ads_dump_options opt = ADS_DUMP_OPTIONS_INIT;
    if (ads_db_dump(d, f, &opt, NULL, &err))
        fail_msg("dump: %s", err.message);
    fclose(f);
    return buf;
}

/* Restore dump d (len bytes) into the directory "restored" beside the
 * test store, whose path goes to dir (cap bytes). */
static void restore_beside(const char *d, size_t len, char *dir, size_t cap)
{
    snprintf(dir, cap, "%s/restored", ts.dir);
    FILE *f = fmemopen((void *)d, len, "r");
    ads_error err;
    ads_restore_options ro = ADS_RESTORE_OPTIONS_INIT;
    if (ads_restore(dir, f, &ro, NULL, &err))
        fail_msg("restore: %s", err.message);
    fclose(f);
}

static void dump__holds_whole_rows_and_restores_to_the_same_dump(void **state)
{
    (void)state;
    declare_both("Machine", "");
    forty_rows("Machine", "m", T0);
    forty_rows("Machine", "n", T0 + 1);
    size_t len, len2;
    char *d1 = dump_of(db, &len);
    char dir[1200];
    restore_beside(d1, len, dir, sizeof dir);
    ads_error err;
    /* the restored store keeps whole rows, and dumps the same bytes */
    size_t n;
    char *forms = history_forms(dir, &n);
    assert_int_equal(strlen(forms), 78);
    assert_null(strchr(forms, 'd'));
    free(forms);
    ads_db *back;
    assert_int_equal(ads_db_open(&back, dir, 0, &err), 0);
    char *d2 = dump_of(back, &len2);
    assert_int_equal(len2, len);
    assert_memory_equal(d1, d2, len);
    char *a = ts_history(db, "Machine", "{ \"n\" }"), *b = ts_history(back, "Machine", "{ \"n\" }");
    assert_string_equal(a, b);
    assert_int_equal(ts_verify(back), 0);
    ads_db_close(back);
    free(a);
    free(b);
    free(d1);
    free(d2);
}

/* ---- stores of the 32-byte envelope (format 5 and before) ---- */

typedef struct sum_map {
    uint32_t from[256], to[256];
    size_t n;
} sum_map;

static uint32_t le32_at(const void *p)
{
    const unsigned char *b = p;
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

/* Every row of table name made again with the 32-byte envelope (as a
 * build before format 6 wrote it): a difference's keyframe checksum
 * follows its keyframe's new one (m maps old checksums to new). Returns
 * the rows rewritten. */
static size_t to_envelope_1(MDB_txn *txn, const char *name, sum_map *m)
{
    MDB_dbi d;
    MDB_cursor *c;
    MDB_val k, v;
    ads_buf keys[256], rows[256];
    size_t n = 0;
    assert_int_equal(mdb_dbi_open(txn, name, 0, &d), 0);
    assert_int_equal(mdb_cursor_open(txn, d, &c), 0);
    for (int rc = mdb_cursor_get(c, &k, &v, MDB_FIRST); rc == 0;
         rc = mdb_cursor_get(c, &k, &v, MDB_NEXT)) {
        ts_env e;
        assert_true(n < 256);
        assert_int_equal(ts_env_read(&e, v.mv_data, v.mv_size, k.mv_data, k.mv_size), 0);
        assert_int_equal(e.version, 2);
        ads_buf_init(&keys[n]);
        ads_buf_init(&rows[n]);
        ads_buf_add(&keys[n], k.mv_data, k.mv_size);
        ads_buf body = ADS_BUF_INIT;
        ads_buf_add(&body, (const char *)v.mv_data + e.at, v.mv_size - e.at);
        if (e.flags & ROW_DELTA) { /* no long keys here: the reference comes first */
            uint32_t kf = le32_at(body.p);
            size_t i = 0;
            while (i < m->n && m->from[i] != kf)
                i++;
            assert_true(i < m->n);
            for (int b = 0; b < 4; b++)
                body.p[b] = (char)(m->to[i] >> (8 * b));
        }
        ts_env_v1(&rows[n], &e, body.p, body.len);
        ads_buf_free(&body);
        if (!(e.flags & ROW_DELTA)) {
            assert_true(m->n < 256);
            m->from[m->n] = le32_at(v.mv_data);
            m->to[m->n++] = le32_at(rows[n].p);
        }
        n++;
    }
    mdb_cursor_close(c);
    for (size_t i = 0; i < n; i++) {
        MDB_val nk = {keys[i].len, keys[i].p}, nv = {rows[i].len, rows[i].p};
        assert_int_equal(mdb_put(txn, d, &nk, &nv, 0), 0);
        ads_buf_free(&keys[i]);
        ads_buf_free(&rows[i]);
    }
    return n;
}

/* A store written before format 6 (every row in the 32-byte envelope,
 * history as differences, bases) reads as it did, dumps the same bytes,
 * and takes writes: new rows in the packed envelope, differences from
 * keyframes of the old one, the format raised to 6. */
static void envelope__a_store_of_32_byte_envelopes_reads_and_takes_writes(void **state)
{
    (void)state;
    declare_both("Kept", "HistoryRetention = `0:10:00`;");
    forty_rows("Kept", "k0", T0);
    forty_rows("Kept", "k1", T0 + 3);
    /* the format entry first (a dump carries it), then every row */
    MDB_env *env;
    MDB_txn *txn = raw_begin(ts.path, true, &env);
    MDB_dbi meta;
    assert_int_equal(mdb_dbi_open(txn, "meta", 0, &meta), 0);
    unsigned char five[4] = {ADS_DB_FORMAT_DELTAS, 0, 0, 0};
    MDB_val fk = {6, "format"}, fv = {4, five};
    assert_int_equal(mdb_put(txn, meta, &fk, &fv, 0), 0);
    raw_end(env, txn, true);
    /* rows of the packed envelope in a store of format 5: verify says so */
    ts_reports rep = {0};
    ads_verify_result vr;
    assert_int_equal(ads_db_verify(&vr, db, ts_collect, &rep, NULL), 0);
    assert_int_equal(vr.problems, 1);
    assert_non_null(strstr(rep.text[0], "rows of the packed envelope but is of format 5 (not 6)"));
    size_t len, len2;
    char *d1 = dump_of(db, &len);
    txn = raw_begin(ts.path, true, &env);
    sum_map m = {.n = 0};
    assert_true(to_envelope_1(txn, "bases", &m) == 2);
    assert_true(to_envelope_1(txn, "history", &m) == 20);
    assert_true(to_envelope_1(txn, "latest", &m) > 2);
    raw_end(env, txn, true);
    assert_int_equal(format_of(db), ADS_DB_FORMAT_DELTAS);
    same_history("Kept", "{ \"k0\" }");
    same_history("Kept", "{ \"k1\" }");
    assert_int_equal(ts_verify(db), 0);
    char *d2 = dump_of(db, &len2);
    assert_int_equal(len2, len);
    assert_memory_equal(d1, d2, len);
    /* its dump restores to a store of format 6 (its rows packed) */
    char dir[1200];
    restore_beside(d1, len, dir, sizeof dir);
    ads_error err;
    ads_db *back;
    assert_int_equal(ads_db_open(&back, dir, 0, &err), 0);
    assert_int_equal(format_of(back), ADS_DB_FORMAT_ENVELOPE);
    char *a = ts_history(db, "Kept", "{ \"k1\" }"), *b = ts_history(back, "Kept", "{ \"k1\" }");
    assert_string_equal(a, b);
    free(a);
    free(b);
    assert_int_equal(ts_verify(back), 0);
    ads_db_close(back);
    /* writes: differences from the old keyframes beside the old rows */
    n_rows("Kept", "k0", T0 + 40 * 60, 4);
    n_rows("Kept", "k1", T0 + 40 * 60 + 3, 4);
    same_history("Kept", "{ \"k0\" }");
    same_history("Kept", "{ \"k1\" }");
    assert_int_equal(ts_verify(db), 0);
    assert_int_equal(format_of(db), ADS_DB_FORMAT_ENVELOPE);
    size_t ver[3] = {0}, bytes;
    free(history_forms_of(ts.path, &bytes, ver));
    assert_int_equal(ver[0], 0);
    assert_int_equal(ver[1] + ver[2], 20);
    assert_int_equal(ver[2], 8);
    /* then new keyframes, retention removing every old row */
    forty_rows("Kept", "k0", T0 + 50 * 60);
    forty_rows("Kept", "k1", T0 + 50 * 60 + 3);
    same_history("Kept", "{ \"k0\" }");
    same_history("Kept", "{ \"k1\" }");
    assert_int_equal(ts_verify(db), 0);
    memset(ver, 0, sizeof ver);
    free(history_forms_of(ts.path, &bytes, ver));
    assert_int_equal(ver[1], 0);
    assert_int_equal(ver[2], 20);
    free(d1);
    free(d2);
}

int main(void)
{
    /* stores as format 6 and older wrote them: one history row per entry
     * (engine/history.c; chunks are test_chunk's, test_hrows' and
     * test_model's) */
    setenv("ADSTORE_TEST_HISTORY_ROWS", "1", 1);
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(deltas__appended_rows_read_back_as_stored_whole),
        T(deltas__backfilled_rows_between_differences_read_back),
        T(deltas__retention_keeps_a_removed_keyframe_as_the_record_s_base),
        T(deltas__compaction_copies_the_bases),
        T(deltas__a_read_only_handle_older_than_the_bases_says_to_reopen),
        T(damage__a_difference_without_its_keyframe_is_corrupt),
        T(damage__a_latest_row_kept_as_a_difference_is_corrupt),
        T(dump__holds_whole_rows_and_restores_to_the_same_dump),
        T(dump__refuses_a_difference_that_makes_a_bad_row),
        T(envelope__a_store_of_32_byte_envelopes_reads_and_takes_writes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
