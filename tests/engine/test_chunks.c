/*
 * tests/engine/test_chunks.c: history kept in chunks (engine/hput.c,
 * docs/storage.md "History chunks"), through the store.
 *
 * Each test writes the same operations into two stores: one keeping history
 * in chunks of at most 4 rows (ADSTORE_TEST_CHUNK_ROWS), so that appends,
 * backfills and trims meet chunk boundaries in a few rows, and a reference
 * keeping one whole row per entry, as format 6 did. Every record's history
 * must read back the same from both, after appends, backfills before, into
 * and between chunks (full ones split), trims whose cut falls inside a
 * chunk, and for records whose key is a long one. A dump of the chunked
 * store restores to a store that reads the same, and a format-6 store is
 * turned into chunks record by record as it is written.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "base/arena.h"
#include "engine/engine_int.h"
#include "tests/engine/helpers.h"

#define T0 1700000000.0

static tstore ts, ref;
static ads_db *db, *rdb;
static char longname[460];

static int setup(void **state)
{
    (void)state;
    setenv("ADSTORE_TEST_HISTORY_ROWS", "1", 1);
    setenv("ADSTORE_TEST_KEYFRAME_ROWS", "1", 1);
    rdb = ts_open(&ref, T0);
    unsetenv("ADSTORE_TEST_HISTORY_ROWS");
    unsetenv("ADSTORE_TEST_KEYFRAME_ROWS");
    setenv("ADSTORE_TEST_CHUNK_ROWS", "4", 1);
    db = ts_open(&ts, T0);
    ts_declare(db, "M", "Name", NULL);
    ts_declare(rdb, "M", "Name", NULL);
    memset(longname, 'x', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    ts_close(&ts);
    ts_close(&ref);
    unsetenv("ADSTORE_TEST_CHUNK_ROWS");
    return 0;
}

static void at(double secs)
{
    ts_time(&ts, secs);
    ts_time(&ref, secs);
}

/* when as ISO 8601 text in UTC, into iso (40 bytes). */
static void iso_of(char *iso, double when)
{
    time_t t = (time_t)when;
    struct tm tm;
    strftime(iso, 40, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&t, &tm));
}

/* Store record name's row V = v in both stores: now, or dated at `when`
 * (a backfill) when when > 0. */
static void put(const char *name, int v, double when)
{
    char text[1024], iso[40];
    iso_of(iso, when);
    if (when > 0)
        snprintf(text, sizeof text,
                 "[ AdType = \"M\"; Name = \"%s\"; V = %d; Load = %d; _Timestamp = `%s` ]", name,
                 v, v % 3, iso);
    else
        snprintf(text, sizeof text, "[ AdType = \"M\"; Name = \"%s\"; V = %d; Load = %d ]", name,
                 v, v % 3);
    ads_error err;
    if (ts_store(db, &err, text) || ts_store(rdb, &err, text))
        fail_msg("store %s: %s", text, err.message);
}

static void same_history(const char *name)
{
    char key[600];
    snprintf(key, sizeof key, "{ \"%s\" }", name);
    char *a = ts_history(db, "M", key), *b = ts_history(rdb, "M", key);
    if (strcmp(a, b) != 0)
        fail_msg("%.40s: in chunks:\n%s\none row per entry:\n%s", name, a, b);
    free(a);
    free(b);
}

static uint64_t history_entries(ads_db *d)
{
    ads_db_layout lay;
    ads_error err;
    assert_int_equal(ads_db_layout_get(&lay, d, &err), 0);
    return lay.history.entries;
}

static unsigned format_of(ads_db *d)
{
    unsigned f;
    ads_error err;
    assert_int_equal(ads_db_format(&f, d, &err), 0);
    return f;
}

/* Trim record name's history at cut in both stores. */
static void trim(const char *name, double cut)
{
    ads_db *both[2] = {db, rdb};
    for (int i = 0; i < 2; i++) {
        ads_txn *txn;
        ads_error err;
        const ads_type *t;
        ads_row row;
        ads_arena *a = ads_arena_new();
        ads_value key = ads_string(name, strlen(name));
        assert_int_equal(ads_txn_begin(&txn, both[i], 0, &err), 0);
        assert_int_equal(ads_txn_type(&t, txn, "M", 1, &err), 0);
        assert_int_equal(ads_txn_get(txn, &row, t, &key, 1, a, &err), 1);
        ads_trim_result res = {0, 0};
        if (ads_txn_trim_history(txn, &row, cut, &res, &err))
            fail_msg("trim: %s", err.message);
        assert_int_equal(ads_txn_commit(txn, &err), 0);
        ads_arena_free(a);
    }
}

static void chunks__appends_backfills_and_trims_read_back_as_rows(void **state)
{
    (void)state;
    const char *names[] = {"a", "b", longname};
    /* 14 rows a minute apart for each: chunks of 4, 4, 4 and 1 in history */
    for (int i = 0; i < 14; i++) {
        at(T0 + 60 * i);
        for (int n = 0; n < 3; n++)
            put(names[n], 100 * n + i, 0);
    }
    for (int n = 0; n < 3; n++)
        same_history(names[n]);
    assert_true(history_entries(db) < history_entries(rdb) / 3);
    assert_int_equal(format_of(db), ADS_DB_FORMAT_CHUNKS);
    assert_int_equal(format_of(rdb), ADS_DB_FORMAT_ENVELOPE);
    /* backfills: before the first row, into a full chunk (split), between
     * two chunks, and right after the last history row */
    at(T0 + 60 * 20);
    double when[] = {T0 - 30, T0 + 90, T0 + 60 * 4 - 1, T0 + 60 * 3 + 1, T0 + 60 * 12 + 30,
                     T0 + 30};
    for (size_t w = 0; w < sizeof when / sizeof *when; w++)
        for (int n = 0; n < 3; n++)
            put(names[n], 1000 + (int)w, when[w]);
    for (int n = 0; n < 3; n++)
        same_history(names[n]);
    assert_int_equal(ts_verify(db), 0);
    /* trims whose cut falls inside a chunk, then past all but the last */
    trim("a", T0 + 60 * 5 + 10);
    trim(longname, T0 + 60 * 2 + 10);
    trim("b", T0 + 60 * 9 + 10);
    for (int n = 0; n < 3; n++)
        same_history(names[n]);
    trim("a", T0 + 60 * 30);
    same_history("a");
    assert_int_equal(ts_verify(db), 0);
    /* and appends go on after a trim */
    at(T0 + 60 * 31);
    for (int n = 0; n < 3; n++)
        put(names[n], 5000 + n, 0);
    for (int n = 0; n < 3; n++)
        same_history(names[n]);
    assert_int_equal(ts_verify(db), 0);
}

static char *dump_of(ads_db *d, size_t *len, uint64_t *rows)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    ads_error err;
    ads_dump_options opt = ADS_DUMP_OPTIONS_INIT;
    ads_dump_result res;
    if (ads_db_dump(d, f, &opt, &res, &err))
        fail_msg("dump: %s", err.message);
    fclose(f);
    *rows = res.rows;
    return buf;
}

static void chunks__a_dump_holds_every_row_and_restores(void **state)
{
    (void)state;
    for (int i = 0; i < 11; i++) {
        at(T0 + 60 * i);
        put("a", i, 0);
        put(longname, i, 0);
    }
    at(T0 + 60 * 20);
    put("a", 77, T0 + 60 * 5 + 5);
    size_t len, rlen;
    uint64_t rows, rrows;
    char *d = dump_of(db, &len, &rows), *r = dump_of(rdb, &rlen, &rrows);
    assert_int_equal(rows, rrows);
    assert_true(rows >= 23);
    free(r);
    char dir[1200];
    snprintf(dir, sizeof dir, "%s/restored", ts.dir);
    FILE *f = fmemopen(d, len, "r");
    ads_error err;
    ads_restore_options ro = ADS_RESTORE_OPTIONS_INIT;
    if (ads_restore(dir, f, &ro, NULL, &err))
        fail_msg("restore: %s", err.message);
    fclose(f);
    ads_db *back;
    assert_int_equal(ads_db_open(&back, dir, 0, &err), 0);
    const char *names[] = {"a", longname};
    for (int n = 0; n < 2; n++) {
        char key[600];
        snprintf(key, sizeof key, "{ \"%s\" }", names[n]);
        char *a = ts_history(back, "M", key), *b = ts_history(rdb, "M", key);
        assert_string_equal(a, b);
        free(a);
        free(b);
    }
    assert_int_equal(ts_verify(back), 0);
    ads_db_close(back);
    free(d);
}

/* The test store made again as format 6 wrote it: one row per entry, a
 * keyframe every `keyframes` rows (until the variables are unset). */
static void remake_as_format_6(const char *keyframes)
{
    ts_close(&ts);
    setenv("ADSTORE_TEST_HISTORY_ROWS", "1", 1);
    setenv("ADSTORE_TEST_KEYFRAME_ROWS", keyframes, 1);
    db = ts_open(&ts, T0);
    ts_declare(db, "M", "Name", NULL);
}

static void chunks__a_format_6_store_is_turned_into_chunks_as_it_is_written(void **state)
{
    (void)state;
    remake_as_format_6("3");
    for (int i = 0; i < 10; i++) {
        at(T0 + 60 * i);
        put("a", i, 0);
        put("b", i, 0);
    }
    assert_int_equal(history_entries(db), 18);
    assert_int_equal(format_of(db), ADS_DB_FORMAT_ENVELOPE);
    ts_reopen_close(&ts);
    unsetenv("ADSTORE_TEST_HISTORY_ROWS");
    unsetenv("ADSTORE_TEST_KEYFRAME_ROWS");
    db = ts_reopen(&ts);
    same_history("a");
    same_history("b");
    /* a's next row turns its 9 rows into chunks of 4, 4 and 2; b stays */
    at(T0 + 60 * 10);
    put("a", 10, 0);
    assert_int_equal(history_entries(db), 3 + 9);
    assert_int_equal(format_of(db), ADS_DB_FORMAT_CHUNKS);
    same_history("a");
    same_history("b");
    assert_int_equal(ts_verify(db), 0);
    /* b's first write is a backfill into its middle: its 9 rows go into
     * chunks of 4, 4 and 1, and the second, full, takes the row and splits */
    put("b", 55, T0 + 60 * 4 + 30);
    assert_int_equal(history_entries(db), 3 + 4);
    same_history("b");
    assert_int_equal(ts_verify(db), 0);
}

/* A format-6 record with more rows than a conversion takes at a time. */
static void chunks__a_long_format_6_history_is_converted_in_batches(void **state)
{
    (void)state;
    remake_as_format_6("5");
    at(T0 + 100000);
    size_t cap = 1 << 20, n = 0;
    char *text = malloc(cap);
    assert_non_null(text);
    for (int i = 0; i < 2500; i++) {
        char iso[40];
        iso_of(iso, T0 + 60 * i);
        n += (size_t)snprintf(text + n, cap - n,
                              "%s[ AdType = \"M\"; Name = \"long\"; V = %d; Load = %d; "
                              "_Timestamp = `%s` ]",
                              i ? ", " : "{ ", i, i % 7, iso);
    }
    snprintf(text + n, cap - n, " }");
    ads_error err;
    if (ts_store(db, &err, text) || ts_store(rdb, &err, text))
        fail_msg("store: %s", err.message);
    free(text);
    assert_int_equal(history_entries(db), 2499);
    ts_reopen_close(&ts);
    unsetenv("ADSTORE_TEST_HISTORY_ROWS");
    unsetenv("ADSTORE_TEST_KEYFRAME_ROWS");
    db = ts_reopen(&ts);
    put("long", 9999, 0);
    assert_int_equal(history_entries(db), (2500 + 3) / 4);
    same_history("long");
    assert_int_equal(ts_verify(db), 0);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(chunks__appends_backfills_and_trims_read_back_as_rows),
        T(chunks__a_dump_holds_every_row_and_restores),
        T(chunks__a_format_6_store_is_turned_into_chunks_as_it_is_written),
        T(chunks__a_long_format_6_history_is_converted_in_batches),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
