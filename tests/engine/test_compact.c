/*
 * tests/engine/test_compact.c: ads_db_compact: a store rewritten in place
 * keeps every record and row that retention keeps, in a smaller file of
 * mode 0600, and is refused while another process has the store open (or
 * waits for it to close it).
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <lmdb.h>

#include "tests/engine/helpers.h"

#define T0 1700000000.0 /* 2023-11-14T22:13:20Z */

static tstore ts;
static ads_db *db;

static int setup(void **state)
{
    (void)state;
    db = ts_open(&ts, T0);
    ts_declare(db, "Machine", "Name", NULL);
    ts_declare(db, "Kept", "Name", NULL);
    /* 40 records with 30 rows each, padded */
    for (int i = 0; i < 30; i++) {
        ts_time(&ts, T0 + 600 * i);
        char text[20000];
        size_t n = (size_t)snprintf(text, sizeof text, "{");
        for (int r = 0; r < 40; r++)
            n += (size_t)snprintf(text + n, sizeof text - n,
                                  "%s[ AdType = \"%s\"; Name = \"n%d\"; V = %d; Pad = "
                                  "\"................................................................\" ]",
                                  r ? ", " : "", r % 2 ? "Kept" : "Machine", r, i);
        snprintf(text + n, sizeof text - n, " }");
        ads_error err;
        if (ts_store(db, &err, text))
            fail_msg("store: %s", err.message);
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    ts_close(&ts);
    return 0;
}

static uint64_t count(ads_db *d, const char *type, bool history)
{
    ads_txn *txn;
    const ads_type *t;
    ads_type_counts tc;
    assert_int_equal(ads_txn_begin(&txn, d, ADS_TXN_READONLY, NULL), 0);
    assert_int_equal(ads_txn_type(&t, txn, type, strlen(type), NULL), 0);
    assert_int_equal(ads_txn_type_counts(&tc, txn, t, NULL), 0);
    ads_txn_abort(txn);
    return history ? tc.history : tc.records;
}

static off_t data_size(mode_t *mode)
{
    char path[1200];
    struct stat st;
    snprintf(path, sizeof path, "%s/data.mdb", ts.path);
    assert_int_equal(stat(path, &st), 0);
    if (mode)
        *mode = st.st_mode & 0777;
    return st.st_size;
}

static void compact__applies_retention_and_shrinks_the_file(void **state)
{
    (void)state;
    /* Kept keeps the last hour; compact reads the system clock, so every
     * row of 2023 is past the cut and each Kept record keeps its latest */
    ts_declare(db, "Kept", "Name", "HistoryRetention = `1:00:00`;");
    ts_reopen_close(&ts);
    off_t before = data_size(NULL);
    ads_compact_result res;
    ads_error err;
    if (ads_db_compact(ts.path, NULL, &res, &err))
        fail_msg("compact: %s", err.message);
    assert_int_equal(res.retention.rows, 20 * 29);
    assert_int_equal(res.bytes_before, (uint64_t)before);
    mode_t mode;
    off_t after = data_size(&mode);
    assert_int_equal(res.bytes_after, (uint64_t)after);
    assert_true(after < before);
    assert_int_equal(mode, 0600);
    db = ts_reopen(&ts);
    assert_int_equal(ts_verify(db), 0);
    assert_int_equal(count(db, "Machine", false), 20);
    assert_int_equal(count(db, "Machine", true), 20 * 29);
    assert_int_equal(count(db, "Kept", false), 20);
    assert_int_equal(count(db, "Kept", true), 0);
    char *v = ts_attr(db, "Kept", "{ \"n1\" }", "V");
    assert_string_equal(v, "29");
    free(v);
    /* and it takes writes */
    ads_error e2;
    assert_int_equal(ts_store(db, &e2, "[ AdType = \"Machine\"; Name = \"new\" ]"), 0);
    assert_int_equal(ts_verify(db), 0);
}

/* How full the leaf pages of table name are: the bytes of its nodes (key,
 * row, LMDB's 8-byte node header and 2-byte pointer) over the leaf pages'
 * room, read through LMDB itself. */
static double leaf_fill(const char *name)
{
    MDB_env *env;
    MDB_txn *txn;
    MDB_dbi dbi;
    MDB_stat st;
    MDB_cursor *c;
    MDB_val k, v;
    double bytes = 0;
    assert_int_equal(mdb_env_create(&env), 0);
    assert_int_equal(mdb_env_set_maxdbs(env, 8), 0);
    assert_int_equal(mdb_env_open(env, ts.path, MDB_RDONLY | MDB_NOLOCK, 0600), 0);
    assert_int_equal(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn), 0);
    assert_int_equal(mdb_dbi_open(txn, name, 0, &dbi), 0);
    assert_int_equal(mdb_stat(txn, dbi, &st), 0);
    assert_int_equal(mdb_cursor_open(txn, dbi, &c), 0);
    while (mdb_cursor_get(c, &k, &v, MDB_NEXT) == 0)
        bytes += (double)((8 + k.mv_size + v.mv_size + 1) & ~(size_t)1) + 2;
    mdb_cursor_close(c);
    mdb_txn_abort(txn);
    mdb_env_close(env);
    assert_true(st.ms_leaf_pages > 0);
    return bytes / ((double)st.ms_leaf_pages * (st.ms_psize - 16));
}

/* Records stored in no particular key order leave pages partly empty (LMDB
 * splits a full page in two); compact writes every table in key order,
 * appending, so its pages come out full. */
static void compact__fills_the_pages_of_a_store_written_in_random_order(void **state)
{
    (void)state;
    ts_declare(db, "Rand", "Name", NULL);
    uint32_t x = 12345;
    for (int b = 0; b < 100; b++) { /* 100 transactions of 30 */
        char text[4000];
        size_t n = (size_t)snprintf(text, sizeof text, "{");
        for (int i = 0; i < 30; i++) {
            x = x * 1103515245u + 12345u;
            n += (size_t)snprintf(text + n, sizeof text - n,
                                  "%s[ AdType = \"Rand\"; Name = \"r%08x\"; V = %d ]",
                                  i ? ", " : "", x, i);
        }
        snprintf(text + n, sizeof text - n, " }");
        ads_error err;
        if (ts_store(db, &err, text))
            fail_msg("store: %s", err.message);
    }
    ads_db_layout lay;
    ads_error e0;
    assert_int_equal(ads_db_layout_get(&lay, db, &e0), 0);
    assert_true(lay.latest.entries >= 3000); /* (and the setup's records) */
    assert_true(lay.latest.fill < 0.85 && lay.latest.in_order < 0.5);
    assert_true(ads_table_layout_scattered(&lay.latest));
    ts_reopen_close(&ts);
    double before = leaf_fill("latest");
    assert_true(before < 0.85);
    ads_compact_result res;
    ads_error err;
    if (ads_db_compact(ts.path, NULL, &res, &err))
        fail_msg("compact: %s", err.message);
    double after = leaf_fill("latest");
    assert_true(after > 0.95);
    /* history's entries are chunks of rows, up to 1,800 bytes: the room a
     * page has left when the next chunk does not fit is larger */
    assert_true(leaf_fill("history") > 0.9);
    db = ts_reopen(&ts);
    assert_int_equal(ads_db_layout_get(&lay, db, &e0), 0);
    assert_true(lay.latest.fill > 0.9 && lay.latest.in_order > 0.9);
    assert_true(lay.latest.fill > after - 0.03 && lay.latest.fill < after + 0.03);
    assert_false(ads_table_layout_scattered(&lay.latest));
    assert_int_equal(ts_verify(db), 0);
    assert_int_equal(count(db, "Rand", false), 3000);
    char *v = ts_attr(db, "Rand", "{ \"rd3dc167e\" }", "V");
    assert_non_null(v);
    free(v);
}

/* A child process holding the store open (a read transaction) until it
 * reads a byte, then waiting `linger` ms before it exits. */
static pid_t holder(int *to_child, int linger_ms)
{
    int up[2], down[2];
    assert_int_equal(pipe(up), 0);
    assert_int_equal(pipe(down), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        ads_db *d;
        ads_txn *txn;
        char ch = 0;
        close(up[0]);
        close(down[1]);
        if (ads_db_open(&d, ts.path, ADS_DB_READONLY, NULL) ||
            ads_txn_begin(&txn, d, ADS_TXN_READONLY, NULL))
            _exit(2);
        if (write(up[1], "r", 1) != 1 || read(down[0], &ch, 1) < 0)
            _exit(3);
        usleep((useconds_t)linger_ms * 1000);
        ads_txn_abort(txn);
        ads_db_close(d);
        _exit(0);
    }
    close(up[1]);
    close(down[0]);
    char ch;
    assert_int_equal(read(up[0], &ch, 1), 1); /* the store is open */
    close(up[0]);
    *to_child = down[1];
    return pid;
}

static void compact__refused_while_another_process_has_the_store_open(void **state)
{
    (void)state;
    ts_reopen_close(&ts);
    int to_child;
    pid_t pid = holder(&to_child, 0);
    off_t before = data_size(NULL);
    ads_error err;
    assert_int_equal(ads_db_compact(ts.path, NULL, NULL, &err), ADS_EBUSY);
    char want[1400];
    snprintf(want, sizeof want,
             "another process (pid %ld) has the store %s open: compact needs it to itself (stop "
             "it, or wait for it with --wait SECONDS)",
             (long)pid, ts.path);
    assert_string_equal(err.message, want);
    assert_int_equal(data_size(NULL), before);
    /* with a wait: the holder lets go after a while, and compact goes on */
    assert_int_equal(write(to_child, "x", 1), 1);
    close(to_child);
    ads_compact_options o = {60, NULL, NULL};
    if (ads_db_compact(ts.path, &o, NULL, &err))
        fail_msg("compact: %s", err.message);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    db = ts_reopen(&ts);
    assert_int_equal(ts_verify(db), 0);
    assert_int_equal(count(db, "Machine", true), 20 * 29);
}

/* ads_db_space_get: pages freed by a purge are counted, and what compact
 * would give back; after compact nothing is free. */
static void space__free_pages_and_what_compact_would_give_back(void **state)
{
    (void)state;
    ads_db_space sp;
    ads_error err;
    ads_txn *txn;
    ads_scan *s;
    ads_row *row;
    const ads_type *t;
    assert_int_equal(ads_txn_begin(&txn, db, 0, NULL), 0);
    assert_int_equal(ads_txn_type(&t, txn, "Machine", 7, NULL), 0);
    assert_int_equal(ads_scan_open(&s, txn, t, NULL, 0, NULL), 0);
    while (ads_scan_next(&row, s, NULL) == 1)
        assert_int_equal(ads_txn_trim_history(txn, row, T0 + 1e6, NULL, NULL), 0);
    ads_scan_close(s);
    assert_int_equal(ads_txn_commit(txn, NULL), 0);
    assert_int_equal(ads_db_space_get(&sp, db, &err), 0);
    assert_true(sp.free_pages > 0 && sp.free_pages < sp.used_pages);
    assert_true(sp.gain_bytes > 0 && sp.gain_bytes < sp.file_bytes);
    uint64_t gain = sp.gain_bytes, file = sp.file_bytes;
    ts_reopen_close(&ts);
    ads_compact_result res;
    assert_int_equal(ads_db_compact(ts.path, NULL, &res, &err), 0);
    assert_int_equal(res.bytes_before, file);
    /* compaction gives back about what was said (the copy's own pages
     * are laid out afresh) */
    assert_true(res.bytes_after <= file - gain + 4 * sp.page_size);
    db = ts_reopen(&ts);
    assert_int_equal(ads_db_space_get(&sp, db, &err), 0);
    assert_int_equal(sp.free_pages, 0);
    assert_int_equal(sp.gain_bytes, 0);
}

/* At the "copied" stage a child process opens the store and stores a
 * record: it waits for compaction to end, then writes into the new store,
 * and nothing it wrote is lost. */
static pid_t opener;

static void open_during(void *ctx, const char *stage)
{
    (void)ctx;
    if (strcmp(stage, "copied") != 0)
        return;
    opener = fork();
    assert_true(opener >= 0);
    if (opener == 0) {
        ads_db *d;
        ads_error err;
        if (ads_db_open(&d, ts.path, 0, &err) ||
            ts_store(d, &err, "[ AdType = \"Machine\"; Name = \"during\"; V = 1 ]"))
            _exit(2);
        ads_db_close(d);
        _exit(0);
    }
    usleep(200 * 1000); /* (give it time to reach the lock; the test holds either way) */
}

static void compact__a_process_opening_meanwhile_waits_and_writes_to_the_new_store(void **state)
{
    (void)state;
    ts_reopen_close(&ts);
    ads_compact_options o = {0, open_during, NULL};
    ads_error err;
    opener = -1;
    if (ads_db_compact(ts.path, &o, NULL, &err))
        fail_msg("compact: %s", err.message);
    int status;
    assert_true(opener > 0);
    assert_int_equal(waitpid(opener, &status, 0), opener);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    db = ts_reopen(&ts);
    assert_int_equal(ts_verify(db), 0);
    char *v = ts_attr(db, "Machine", "{ \"during\" }", "V");
    assert_string_equal(v, "1");
    free(v);
    assert_int_equal(count(db, "Machine", false), 21);
}

static void compact__a_missing_store_is_not_found(void **state)
{
    (void)state;
    char path[1200];
    ads_error err;
    snprintf(path, sizeof path, "%s/nothing", ts.dir);
    assert_int_equal(ads_db_compact(path, NULL, NULL, &err), ADS_ENOTFOUND);
    char want[1300];
    snprintf(want, sizeof want, "no store at %s", path);
    assert_string_equal(err.message, want);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(compact__applies_retention_and_shrinks_the_file),
        T(compact__fills_the_pages_of_a_store_written_in_random_order),
        T(compact__refused_while_another_process_has_the_store_open),
        T(compact__a_missing_store_is_not_found),
        T(space__free_pages_and_what_compact_would_give_back),
        T(compact__a_process_opening_meanwhile_waits_and_writes_to_the_new_store),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
