/*
 * tests/engine/test_names.c: the store's attribute-name table (engine/names.c,
 * docs/storage.md "Attribute names"). Stored rows name attributes by ids; a
 * store reopened, a second handle on the same directory, a store of format 1
 * (rows with names), a dump and its restore, an aborted write and a damaged
 * table all read as the records that were stored.
 */
/* memmem: _GNU_SOURCE comes from the build */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <lmdb.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "classad/msgpack_int.h"
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
    ts_close(&ts);
    return 0;
}

static void store_ok(ads_db *d, const char *text)
{
    ads_error err;
    if (ts_store(d, &err, text))
        fail_msg("%s: %s", text, err.message);
}

static void latest_is(ads_db *d, const char *key, const char *want)
{
    char *got = ts_latest(d, "Machine", key);
    assert_non_null(got);
    if (!strstr(got, want))
        fail_msg("latest %s: want %s in %s", key, want, got);
    free(got);
}

/* ---- raw LMDB ---- */

typedef struct rawenv {
    MDB_env *env;
    MDB_txn *txn;
} rawenv;

static void raw_open(rawenv *r, const char *dir)
{
    assert_int_equal(mdb_env_create(&r->env), 0);
    assert_int_equal(mdb_env_set_maxdbs(r->env, 8), 0);
    assert_int_equal(mdb_env_open(r->env, dir, 0, 0600), 0);
    assert_int_equal(mdb_txn_begin(r->env, NULL, 0, &r->txn), 0);
}

static MDB_dbi raw_dbi(rawenv *r, const char *name)
{
    MDB_dbi d;
    assert_int_equal(mdb_dbi_open(r->txn, name, 0, &d), 0);
    return d;
}

static void raw_close(rawenv *r)
{
    assert_int_equal(mdb_txn_commit(r->txn), 0);
    mdb_env_close(r->env);
}

static unsigned format_of(const char *dir)
{
    rawenv r;
    raw_open(&r, dir);
    MDB_val k = {6, "format"}, v;
    assert_int_equal(mdb_get(r.txn, raw_dbi(&r, "meta"), &k, &v), 0);
    unsigned f = ((const unsigned char *)v.mv_data)[0];
    raw_close(&r);
    return f;
}

/* The names table read raw, as a resolver. */
typedef struct rawnames {
    ads_msgpack_names base;
    char names[64][64];
    size_t n;
} rawnames;

static int rn_name(const ads_msgpack_names *self, uint64_t id, ads_str *out, ads_error *err)
{
    const rawnames *t = (const rawnames *)self;
    if (id >= t->n)
        return ads_error_set(err, ADS_ECORRUPT, "no id");
    out->p = t->names[id];
    out->len = strlen(t->names[id]);
    return 0;
}

static void read_names(rawnames *t, rawenv *r)
{
    t->base.name = rn_name;
    t->n = 0;
    MDB_cursor *c;
    MDB_val k, v;
    assert_int_equal(mdb_cursor_open(r->txn, raw_dbi(r, "names"), &c), 0);
    for (int rc = mdb_cursor_get(c, &k, &v, MDB_FIRST); rc == 0;
         rc = mdb_cursor_get(c, &k, &v, MDB_NEXT)) {
        assert_true(t->n < 64 && v.mv_size < 64);
        memcpy(t->names[t->n], v.mv_data, v.mv_size);
        t->names[t->n][v.mv_size] = 0;
        t->n++;
    }
    mdb_cursor_close(c);
}

/* Does every latest row of the store carry ids (1), names (0), or both (2)? */
static int latest_rows_have_ids(const char *dir)
{
    rawenv r;
    raw_open(&r, dir);
    MDB_cursor *c;
    MDB_val k, v;
    bool ids = false, names = false;
    assert_int_equal(mdb_cursor_open(r.txn, raw_dbi(&r, "latest"), &c), 0);
    for (int rc = mdb_cursor_get(c, &k, &v, MDB_FIRST); rc == 0;
         rc = mdb_cursor_get(c, &k, &v, MDB_NEXT)) {
        const unsigned char *p = v.mv_data;
        ts_env e;
        assert_int_equal(ts_env_read(&e, v.mv_data, v.mv_size, k.mv_data, k.mv_size), 0);
        assert_true(v.mv_size > e.at && !(p[5] & 2)); /* no long keys here */
        if (ads_msgpack__row_has_ids(p + e.at, v.mv_size - e.at))
            ids = true;
        else
            names = true;
    }
    mdb_cursor_close(c);
    raw_close(&r);
    return ids && names ? 2 : ids;
}

/* ---- tests ---- */

static void names__rows_keep_ids_and_read_back_after_reopen(void **state)
{
    (void)state;
    store_ok(db, "[ AdType = \"Machine\"; Name = \"m1\"; Memory = 2048; cpus = 4 ]");
    store_ok(db, "[ AdType = \"Machine\"; Name = \"m2\"; memory = 1024; CPUS = 8; "
                 "Sub = [ Inner = 1; inner2 = \"x\" ] ]");
    ts_reopen_close(&ts);
    /* names and packed envelopes (format 6 holds both) */
    assert_int_equal(format_of(ts.path), ADS_DB_FORMAT_ENVELOPE);
    assert_int_equal(latest_rows_have_ids(ts.path), 1);
    /* the names table holds each spelling once, in first-stored order */
    rawenv r;
    rawnames t;
    raw_open(&r, ts.path);
    read_names(&t, &r);
    raw_close(&r);
    bool memory = false, Memory = false;
    for (size_t i = 0; i < t.n; i++) {
        memory |= strcmp(t.names[i], "memory") == 0;
        Memory |= strcmp(t.names[i], "Memory") == 0;
        for (size_t j = 0; j < i; j++)
            assert_string_not_equal(t.names[i], t.names[j]);
        assert_null(strstr(t.names[i], "Inner")); /* nested names stay in the row */
    }
    assert_true(memory && Memory);
    db = ts_reopen(&ts);
    /* each record reads back spelled as it was stored */
    latest_is(db, "{ \"m1\" }", "Memory = 2048; Name = \"m1\"");
    latest_is(db, "{ \"m1\" }", "cpus = 4");
    latest_is(db, "{ \"m2\" }", "CPUS = 8; memory = 1024");
    latest_is(db, "{ \"m2\" }", "Sub = [ Inner = 1; inner2 = \"x\" ]");
    char *v = ts_attr(db, "Machine", "{ \"m2\" }", "MEMORY");
    assert_string_equal(v, "1024");
    free(v);
    /* an update merges with the stored row (ids) and keeps history */
    ts_time(&ts, T0 + 10);
    store_ok(db, "[ AdType = \"Machine\"; Name = \"m1\"; Memory = 4096; Extra = true ]");
    latest_is(db, "{ \"m1\" }", "Extra = true; Memory = 4096; Name = \"m1\"");
    char *h = ts_history(db, "Machine", "{ \"m1\" }");
    assert_non_null(strstr(h, "Memory = 2048"));
    free(h);
    assert_int_equal(ts_verify(db), 0);
}

static void names__a_second_handle_reads_names_the_first_added(void **state)
{
    (void)state;
    store_ok(db, "[ AdType = \"Machine\"; Name = \"m1\"; Memory = 1 ]");
    ads_db *other;
    ads_error err;
    assert_int_equal(ads_db_open(&other, ts.path, 0, &err), 0);
    latest_is(other, "{ \"m1\" }", "Memory = 1"); /* other has read the table */
    /* db adds names; other meets their ids in rows it has not seen */
    store_ok(db, "[ AdType = \"Machine\"; Name = \"m2\"; NewOne = 2; NewTwo = \"b\" ]");
    latest_is(other, "{ \"m2\" }", "NewOne = 2; NewTwo = \"b\"");
    /* and the other way round: other's new names, then db's write after them */
    store_ok(other, "[ AdType = \"Machine\"; Name = \"m3\"; FromOther = 3 ]");
    store_ok(db, "[ AdType = \"Machine\"; Name = \"m4\"; FromDb = 4; FromOther = 5 ]");
    latest_is(db, "{ \"m3\" }", "FromOther = 3");
    latest_is(other, "{ \"m4\" }", "FromDb = 4; FromOther = 5");
    assert_int_equal(ts_verify(other), 0);
    ads_db_close(other);
    assert_int_equal(ts_verify(db), 0);
    /* every name has one id */
    ts_reopen_close(&ts);
    rawenv r;
    rawnames t;
    raw_open(&r, ts.path);
    read_names(&t, &r);
    raw_close(&r);
    int from_other = 0;
    for (size_t i = 0; i < t.n; i++)
        from_other += strcmp(t.names[i], "FromOther") == 0;
    assert_int_equal(from_other, 1);
    db = ts_reopen(&ts);
}

static int store_then_fail(ads_txn *txn, void *ctx, ads_error *err)
{
    (void)ctx;
    assert_int_equal(
        ts_txn_store(txn, "[ AdType = \"Machine\"; Name = \"gone\"; Aborted = 1 ]", err), 0);
    return ads_error_set(err, ADS_EINVAL, "changed my mind");
}

static void names__an_aborted_write_leaves_no_name(void **state)
{
    (void)state;
    store_ok(db, "[ AdType = \"Machine\"; Name = \"m1\"; Memory = 1 ]");
    ads_error err;
    assert_int_equal(ads_db_write(db, store_then_fail, NULL, &err), ADS_EINVAL);
    store_ok(db, "[ AdType = \"Machine\"; Name = \"m2\"; Kept = 2 ]");
    latest_is(db, "{ \"m2\" }", "Kept = 2");
    assert_null(ts_latest(db, "Machine", "{ \"gone\" }"));
    assert_int_equal(ts_verify(db), 0); /* ids without gaps */
    ts_reopen_close(&ts);
    rawenv r;
    rawnames t;
    raw_open(&r, ts.path);
    read_names(&t, &r);
    raw_close(&r);
    for (size_t i = 0; i < t.n; i++)
        assert_string_not_equal(t.names[i], "Aborted");
    assert_string_equal(t.names[t.n - 1], "Kept");
    db = ts_reopen(&ts);
}

/* Two records of one shape whose names are all new, stored in a write that
 * then fails: the second was written through the shape the first left,
 * with the write's own ids. */
static int shape_then_fail(ads_txn *txn, void *ctx, ads_error *err)
{
    (void)ctx;
    assert_int_equal(ts_txn_store(txn, "[ AdType = \"Machine\"; Name = \"x1\"; Xa = 1; Xb = 2 ]", err),
                     0);
    assert_int_equal(ts_txn_store(txn, "[ AdType = \"Machine\"; Name = \"x2\"; Xa = 3; Xb = 4 ]", err),
                     0);
    return ads_error_set(err, ADS_EINVAL, "changed my mind");
}

static int fail_batch(void *ctx, ads_txn *txn, const ads_bulk_batch *b, ads_error *err)
{
    (void)ctx;
    (void)txn;
    (void)b;
    return ads_error_set(err, ADS_EINVAL, "changed my mind");
}

/* Then a write hands the dropped ids to other names (Pa, Pb), and records
 * of the first shape come again, through a load and alone: they must get
 * ids of their own, not the shape's (which now name Pa and Pb). And a
 * shape made by a write that commits serves the next write. */
static void names__a_shape_of_a_dropped_write_is_not_used(void **state)
{
    (void)state;
    store_ok(db, "[ AdType = \"Machine\"; Name = \"m0\"; Memory = 1 ]");
    ads_error err;
    assert_int_equal(ads_db_write(db, shape_then_fail, NULL, &err), ADS_EINVAL);
    store_ok(db, "[ AdType = \"Machine\"; Name = \"p1\"; Pa = 5; Pb = 6 ]");
    store_ok(db, "[ AdType = \"Machine\"; Name = \"x3\"; Xa = 7; Xb = 8 ]");
    latest_is(db, "{ \"x3\" }", "Xa = 7; Xb = 8");
    latest_is(db, "{ \"p1\" }", "Pa = 5; Pb = 6");
    /* a load: its first batch names Ya and Yb anew, then fails; the next
     * load gives those ids to Qa and Qb, then stores Y rows again */
    ads_arena *a = ads_arena_new();
    for (int round = 0; round < 2; round++) {
        ads_bulk_options opt = {.batch = 100, .on_batch = round == 0 ? fail_batch : NULL};
        ads_bulk *b;
        assert_int_equal(ads_bulk_begin(&b, db, &opt, &err), 0);
        for (int i = 0; i < 20; i++) {
            char text[160];
            const char *p = round == 1 && i < 10 ? "Q" : "Y";
            snprintf(text, sizeof text,
                     "[ AdType = \"Machine\"; Name = \"y%d-%d\"; %sa = %d; %sb = %d ]", round, i, p,
                     i, p, 100 + i);
            const ads_record *r;
            assert_int_equal(ads_record_parse(&r, a, text, strlen(text), &err), 0);
            assert_int_equal(ads_bulk_add(b, r, &err), 0);
        }
        assert_int_equal(ads_bulk_end(b, &err), round == 0 ? ADS_EINVAL : 0);
        ads_arena_reset(a);
    }
    ads_arena_free(a);
    assert_null(ts_latest(db, "Machine", "{ \"y0-3\" }"));
    for (int i = 0; i < 20; i++) {
        char key[32], want[48];
        snprintf(key, sizeof key, "{ \"y1-%d\" }", i);
        snprintf(want, sizeof want, i < 10 ? "Qa = %d; Qb = %d" : "Ya = %d; Yb = %d", i, 100 + i);
        latest_is(db, key, want);
    }
    assert_int_equal(ts_verify(db), 0);
}

/* Turn the store into one of format 1 (as an older build left it): every
 * row with names, its checksum made anew, no name table entries. */
static void make_format_1(const char *dir)
{
    rawenv r;
    rawnames t;
    raw_open(&r, dir);
    read_names(&t, &r);
    const char *tables[2] = {"latest", "history"};
    for (int ti = 0; ti < 2; ti++) {
        /* read every row first, then put each back (a put may split the
         * page a cursor stands on) */
        MDB_dbi d = raw_dbi(&r, tables[ti]);
        MDB_cursor *c;
        MDB_val k, v;
        ads_buf keys[64], rows[64];
        size_t n = 0;
        assert_int_equal(mdb_cursor_open(r.txn, d, &c), 0);
        for (int rc = mdb_cursor_get(c, &k, &v, MDB_FIRST); rc == 0;
             rc = mdb_cursor_get(c, &k, &v, MDB_NEXT)) {
            assert_true(n < 64);
            ads_buf_init(&keys[n]);
            ads_buf_init(&rows[n]);
            ads_buf_add(&keys[n], k.mv_data, k.mv_size);
            ads_buf *b = &rows[n++];
            ads_error err;
            /* a format-1 store's rows: whole, the 32-byte envelope, names */
            ts_env e;
            assert_int_equal(ts_env_read(&e, v.mv_data, v.mv_size, k.mv_data, k.mv_size), 0);
            assert_false(e.flags & 6); /* no differences, no long keys here */
            ads_buf named = ADS_BUF_INIT;
            assert_int_equal(ads_msgpack__to_names(&named, (const char *)v.mv_data + e.at,
                                                   v.mv_size - e.at, &t.base, &err),
                             0);
            ts_env_v1(b, &e, named.p, named.len);
            ads_buf_free(&named);
        }
        mdb_cursor_close(c);
        for (size_t i = 0; i < n; i++) {
            MDB_val nk = {keys[i].len, keys[i].p}, nv = {rows[i].len, rows[i].p};
            assert_int_equal(mdb_put(r.txn, d, &nk, &nv, 0), 0);
            ads_buf_free(&keys[i]);
            ads_buf_free(&rows[i]);
        }
    }
    assert_int_equal(mdb_drop(r.txn, raw_dbi(&r, "names"), 1), 0); /* no table at all */
    unsigned char one[4] = {1, 0, 0, 0};
    MDB_val fk = {6, "format"}, fv = {4, one};
    assert_int_equal(mdb_put(r.txn, raw_dbi(&r, "meta"), &fk, &fv, 0), 0);
    raw_close(&r);
}

static void names__a_format_1_store_reads_and_is_upgraded_by_a_write(void **state)
{
    (void)state;
    store_ok(db, "[ AdType = \"Machine\"; Name = \"m1\"; Memory = 1; Arch = \"x\" ]");
    ts_time(&ts, T0 + 5);
    store_ok(db, "[ AdType = \"Machine\"; Name = \"m1\"; Memory = 2 ]");
    store_ok(db, "[ AdType = \"Machine\"; Name = \"m2\"; Memory = 3 ]");
    ts_reopen_close(&ts);
    make_format_1(ts.path);
    assert_int_equal(latest_rows_have_ids(ts.path), 0);
    assert_int_equal(format_of(ts.path), 1);
    /* read only: rows with names are read as before */
    ads_db *ro;
    ads_error err;
    assert_int_equal(ads_db_open(&ro, ts.path, ADS_DB_READONLY, &err), 0);
    latest_is(ro, "{ \"m1\" }", "Arch = \"x\"; Memory = 2");
    assert_int_equal(ts_verify(ro), 0);
    assert_int_equal(format_of(ts.path), 1);
    /* a write stores rows with ids and raises the format; old rows still read,
     * an update merges an old row with a new one */
    db = ts_reopen(&ts);
    latest_is(db, "{ \"m2\" }", "Memory = 3");
    ts_time(&ts, T0 + 10);
    store_ok(db, "[ AdType = \"Machine\"; Name = \"m2\"; Disk = 9 ]");
    latest_is(db, "{ \"m2\" }", "Disk = 9; Memory = 3");
    latest_is(db, "{ \"m1\" }", "Arch = \"x\"; Memory = 2");
    /* the read-only handle, opened when the store had no name table, reads
     * the new row through the table made since */
    latest_is(ro, "{ \"m2\" }", "Disk = 9; Memory = 3");
    /* and a name added after that, through the table's handle it kept */
    store_ok(db, "[ AdType = \"Machine\"; Name = \"m3\"; Later = 4 ]");
    latest_is(ro, "{ \"m3\" }", "Later = 4");
    assert_int_equal(ts_verify(ro), 0);
    ads_db_close(ro);
    char *h = ts_history(db, "Machine", "{ \"m1\" }");
    assert_non_null(strstr(h, "Memory = 1"));
    free(h);
    assert_int_equal(ts_verify(db), 0);
    ts_reopen_close(&ts);
    /* rows of both forms, rows of both envelopes */
    assert_int_equal(format_of(ts.path), ADS_DB_FORMAT_ENVELOPE);
    assert_int_equal(latest_rows_have_ids(ts.path), 2);
    db = ts_reopen(&ts);
}

/* The history rows of the store kept as differences (engine/history.c). */
static size_t history_differences(const char *dir)
{
    rawenv r;
    raw_open(&r, dir);
    MDB_cursor *c;
    MDB_val k, v;
    size_t n = 0;
    assert_int_equal(mdb_cursor_open(r.txn, raw_dbi(&r, "history"), &c), 0);
    for (int rc = mdb_cursor_get(c, &k, &v, MDB_FIRST); rc == 0;
         rc = mdb_cursor_get(c, &k, &v, MDB_NEXT))
        n += (((const unsigned char *)v.mv_data)[5] & 4) != 0; /* ROW_DELTA */
    mdb_cursor_close(c);
    raw_close(&r);
    return n;
}

/* History rows are kept as differences from a keyframe of their own row
 * version. A row with ids stored between two rows with names (a format-1
 * store's) cannot be one: it is whole, and the difference after it, which
 * its keyframe before it served, is made whole too. */
static void names__a_row_between_rows_with_names_keeps_the_history_readable(void **state)
{
    (void)state;
    store_ok(db, "[ AdType = \"Machine\"; Name = \"m\"; Memory = 1; Arch = \"x\" ]");
    ts_time(&ts, T0 + 5);
    store_ok(db, "[ AdType = \"Machine\"; Name = \"m\"; Memory = 2 ]");
    ts_reopen_close(&ts);
    make_format_1(ts.path);
    db = ts_reopen(&ts);
    /* the row with names moves to history as a difference from the first */
    ts_time(&ts, T0 + 10);
    store_ok(db, "[ AdType = \"Machine\"; Name = \"m\"; Memory = 3 ]");
    ts_reopen_close(&ts);
    assert_int_equal(history_differences(ts.path), 1);
    db = ts_reopen(&ts);
    /* a row dated between the first two */
    store_ok(db, "[ AdType = \"Machine\"; Name = \"m\"; Disk = 7; "
                 "_Timestamp = 1700000002 ]");
    char *h = ts_history(db, "Machine", "{ \"m\" }");
    const char *want[] = {"Memory = 1; Name", "Disk = 7; Memory = 1; Name", "Memory = 2;",
                          "Memory = 3;"};
    const char *at = h;
    for (int i = 0; i < 4; i++) {
        const char *f = strstr(at, want[i]);
        if (!f)
            fail_msg("history:\n%s\nlacks %s", h, want[i]);
        at = f + strlen(want[i]);
    }
    free(h);
    assert_int_equal(ts_verify(db), 0);
    ts_reopen_close(&ts);
    assert_int_equal(history_differences(ts.path), 0);
    db = ts_reopen(&ts);
}

static char *dump_to_memory(ads_db *d, size_t *len)
{
    char *p = NULL;
    FILE *f = open_memstream(&p, len);
    assert_non_null(f);
    ads_dump_options o = ADS_DUMP_OPTIONS_INIT;
    ads_error err;
    if (ads_db_dump(d, f, &o, NULL, &err))
        fail_msg("dump: %s", err.message);
    assert_int_equal(fclose(f), 0);
    return p;
}

static void names__dump_carries_names_and_restore_gives_ids_back(void **state)
{
    (void)state;
    store_ok(db, "[ AdType = \"Machine\"; Name = \"m1\"; Memory = 1; WeirdCase = 2 ]");
    ts_time(&ts, T0 + 5);
    store_ok(db, "[ AdType = \"Machine\"; Name = \"m1\"; Memory = 5 ]");
    store_ok(db, "[ AdType = \"Machine\"; Name = \"m2\"; weirdcase = 3 ]");
    size_t len1, len2;
    char *d1 = dump_to_memory(db, &len1);
    /* the dump's rows name their attributes (a dump reader has no table) */
    assert_non_null(memmem(d1, len1, "WeirdCase", 9));
    assert_non_null(memmem(d1, len1, "weirdcase", 9));
    char dir[1200];
    snprintf(dir, sizeof dir, "%s-restored", ts.path);
    FILE *f = fmemopen(d1, len1, "rb");
    ads_restore_options ro = ADS_RESTORE_OPTIONS_INIT;
    ads_error err;
    if (ads_restore(dir, f, &ro, NULL, &err))
        fail_msg("restore: %s", err.message);
    fclose(f);
    assert_int_equal(format_of(dir), ADS_DB_FORMAT_ENVELOPE);
    assert_int_equal(latest_rows_have_ids(dir), 1);
    ads_db *back;
    assert_int_equal(ads_db_open(&back, dir, 0, &err), 0);
    latest_is(back, "{ \"m1\" }", "Memory = 5; Name = \"m1\"; WeirdCase = 2");
    latest_is(back, "{ \"m2\" }", "weirdcase = 3");
    char *h = ts_history(back, "Machine", "{ \"m1\" }");
    assert_non_null(strstr(h, "Memory = 1"));
    free(h);
    assert_int_equal(ts_verify(back), 0);
    /* and it dumps to the same bytes */
    char *d2 = dump_to_memory(back, &len2);
    assert_int_equal(len1, len2);
    assert_memory_equal(d1, d2, len1);
    ads_db_close(back);
    char cmd[1300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
    free(d1);
    free(d2);
}

static void names__verify_catches_an_unknown_id_and_a_gap(void **state)
{
    (void)state;
    store_ok(db, "[ AdType = \"Machine\"; Name = \"m1\"; Memory = 1; Zeta = 1 ]");
    store_ok(db, "[ AdType = \"Machine\"; Name = \"m2\"; Last = 1 ]");
    ts_reopen_close(&ts);
    /* the table loses its last name: the row naming it has an unknown id */
    rawenv r;
    rawnames t;
    raw_open(&r, ts.path);
    read_names(&t, &r);
    assert_string_equal(t.names[t.n - 1], "Last");
    unsigned char kb[4] = {0, 0, 0, (unsigned char)(t.n - 1)};
    MDB_val k = {4, kb};
    assert_int_equal(mdb_del(r.txn, raw_dbi(&r, "names"), &k, NULL), 0);
    raw_close(&r);
    db = ts_reopen(&ts);
    ts_reports rep = {0};
    ads_verify_result res;
    ads_error err;
    assert_int_equal(ads_db_verify(&res, db, ts_collect, &rep, &err), 0);
    /* the row, and then the counts, which no longer count it */
    assert_int_equal(res.problems, 2);
    assert_string_equal(rep.text[1], "type Machine: counts say records 2 (deleted 0), history "
                                     "rows 0; the rows say 1 (0), 0");
    char want[200];
    snprintf(want, sizeof want, "attribute id %zu is not in the store's name table", t.n - 1);
    if (!strstr(rep.text[0], "type Machine, key { \"m2\" }: latest row: ") ||
        !strstr(rep.text[0], want))
        fail_msg("got: %s", rep.text[0]);
    /* reading it is an error, not a crash or a wrong name */
    char *m1 = ts_latest(db, "Machine", "{ \"m1\" }");
    assert_non_null(strstr(m1, "Zeta = 1"));
    free(m1);
    /* a gap in the ids */
    ts_reopen_close(&ts);
    raw_open(&r, ts.path);
    kb[3] = 1;
    assert_int_equal(mdb_del(r.txn, raw_dbi(&r, "names"), &k, NULL), 0);
    raw_close(&r);
    db = ts_reopen(&ts);
    memset(&rep, 0, sizeof rep);
    assert_int_equal(ads_db_verify(&res, db, ts_collect, &rep, &err), 0);
    assert_true(res.problems >= 2);
    assert_string_equal(rep.text[0],
                        "attribute names: entry 1 has id 2 (ids run from 0 without gaps)");
}

/* ---- group commit: writers adding names at once ---- */

#define GTHREADS 8
#define GWRITES 40

typedef struct gwriter {
    unsigned t, i;
    int rc[GWRITES];
    bool read_back[GWRITES]; /* an acknowledged record read back, by another transaction */
} gwriter;

/* Write (t, i) fails after storing when this says so. */
static bool g_fails(unsigned t, unsigned i)
{
    return (t * 7 + i * 13) % 10 >= 7;
}

/* A record with a name of its own (A<t>_<i>) and one it shares (S<i % 5>),
 * both new to the table when the write runs. */
static int g_write(ads_txn *txn, void *ctx, ads_error *err)
{
    gwriter *w = ctx;
    char text[160];
    snprintf(text, sizeof text, "[ AdType = \"Machine\"; Name = \"g%u-%u\"; A%u_%u = %u; S%u = %u ]",
             w->t, w->i, w->t, w->i, w->i, w->i % 5, w->t);
    int rc = ts_txn_store(txn, text, err);
    if (!rc && g_fails(w->t, w->i))
        rc = ads_error_set(err, ADS_EEXIST, "refused on purpose");
    return rc;
}

static void *g_run(void *arg)
{
    gwriter *w = arg;
    for (w->i = 0; w->i < GWRITES; w->i++) {
        ads_error err;
        w->rc[w->i] = ads_db_write(db, g_write, w, &err);
        if (w->rc[w->i])
            continue;
        char key[32], want[32];
        snprintf(key, sizeof key, "{ \"g%u-%u\" }", w->t, w->i);
        snprintf(want, sizeof want, "A%u_%u = %u", w->t, w->i, w->i);
        char *got = ts_latest(db, "Machine", key);
        w->read_back[w->i] = got && strstr(got, want);
        free(got);
    }
    return NULL;
}

/* Every record as stored (acknowledged) or absent (failed). */
static void g_check_records(const gwriter *w)
{
    for (unsigned t = 0; t < GTHREADS; t++)
        for (unsigned i = 0; i < GWRITES; i++) {
            char key[32], want[32], want2[32];
            snprintf(key, sizeof key, "{ \"g%u-%u\" }", t, i);
            snprintf(want, sizeof want, "A%u_%u = %u;", t, i, i);
            snprintf(want2, sizeof want2, "S%u = %u;", i % 5, t);
            char *got = ts_latest(db, "Machine", key);
            if (g_fails(t, i)) {
                assert_int_equal(w[t].rc[i], ADS_EEXIST);
                assert_null(got);
            } else {
                assert_int_equal(w[t].rc[i], 0);
                assert_true(w[t].read_back[i]);
                if (!got || !strstr(got, want) || !strstr(got, want2))
                    fail_msg("%s: want %s and %s in %s", key, want, want2, got ? got : "(none)");
            }
            free(got);
        }
}

static void names__writers_in_groups_add_names_at_once(void **state)
{
    (void)state;
    static gwriter w[GTHREADS];
    pthread_t tid[GTHREADS];
    for (unsigned t = 0; t < GTHREADS; t++) {
        memset(&w[t], 0, sizeof w[t]);
        w[t].t = t;
        assert_int_equal(pthread_create(&tid[t], NULL, g_run, &w[t]), 0);
    }
    for (unsigned t = 0; t < GTHREADS; t++)
        pthread_join(tid[t], NULL);
    g_check_records(w);
    assert_int_equal(ts_verify(db), 0); /* ids from 0 without gaps, every row's ids known */
    /* the table holds each name once, and no name only a failed write had */
    ts_reopen_close(&ts);
    rawenv r;
    raw_open(&r, ts.path);
    MDB_cursor *c;
    MDB_val k, v;
    size_t n = 0;
    assert_int_equal(mdb_cursor_open(r.txn, raw_dbi(&r, "names"), &c), 0);
    static char seen[GTHREADS * GWRITES + 64][16];
    for (int rc = mdb_cursor_get(c, &k, &v, MDB_FIRST); rc == 0;
         rc = mdb_cursor_get(c, &k, &v, MDB_NEXT), n++) {
        assert_true(n < sizeof seen / sizeof seen[0] && v.mv_size < sizeof seen[0]);
        memcpy(seen[n], v.mv_data, v.mv_size);
        seen[n][v.mv_size] = 0;
        for (size_t j = 0; j < n; j++)
            assert_string_not_equal(seen[j], seen[n]);
        unsigned t, i;
        if (sscanf(seen[n], "A%u_%u", &t, &i) == 2)
            assert_false(g_fails(t, i));
    }
    mdb_cursor_close(c);
    raw_close(&r);
    db = ts_reopen(&ts);
    g_check_records(w);
}

/* ---- writers sharing new names through shapes ---- */

#define SW_THREADS 6
#define SW_WRITES 150
#define SW_ROWS 5

typedef struct swriter {
    unsigned t, i;
    int rc[SW_WRITES];
} swriter;

static bool sw_fails(unsigned t, unsigned i)
{
    return (t * 7 + i * 13) % 10 >= 6;
}

/* Row j of write (t, i): its key, and the three attributes it must read
 * back with. Rows 0 and 1 name E<i>a and E<i>b, new names every thread's
 * write i shares; the rest N<t>_<i/2>a, N<t>_<i/2>b (two writes of a
 * thread share them) and S<i%3>a. Each write's rows come in two shapes. */
static void sw_row(unsigned t, unsigned i, unsigned j, char *key, char want[3][48])
{
    unsigned v = t * 100000 + i * 10 + j;
    snprintf(key, 48, "s%u-%u-%u", t, i, j);
    if (j < 2) {
        snprintf(want[0], 48, "E%ua = %u", i, v);
        snprintf(want[1], 48, "E%ub = %u", i, v + 1);
        snprintf(want[2], 48, "Name = \"%s\"", key);
    } else {
        snprintf(want[0], 48, "N%u_%ua = %u", t, i / 2, v);
        snprintf(want[1], 48, "N%u_%ub = %u", t, i / 2, v + 1);
        snprintf(want[2], 48, "S%ua = %u", i % 3, v + 2);
    }
}

static int sw_rows(ads_txn *txn, void *ctx, ads_error *err)
{
    swriter *w = ctx;
    for (unsigned j = 0; j < SW_ROWS; j++) {
        char key[48], want[3][48], text[256];
        sw_row(w->t, w->i, j, key, want);
        snprintf(text, sizeof text, "[ AdType = \"Machine\"; Name = \"%s\"; %s; %s%s%s ]", key,
                 want[0], want[1], j < 2 ? "" : "; ", j < 2 ? "" : want[2]);
        int rc = ts_txn_store(txn, text, err);
        if (rc)
            return rc;
    }
    return sw_fails(w->t, w->i) ? ads_error_set(err, ADS_EEXIST, "refused on purpose") : 0;
}

/* Odd threads write in transactions of their own (aborted when they fail),
 * even ones through group commit. */
static void *sw_run(void *arg)
{
    swriter *w = arg;
    for (w->i = 0; w->i < SW_WRITES; w->i++) {
        ads_error err;
        if (w->t % 2 == 0) {
            w->rc[w->i] = ads_db_write(db, sw_rows, w, &err);
            continue;
        }
        ads_txn *txn;
        int rc = ads_txn_begin(&txn, db, 0, &err);
        if (!rc && (rc = sw_rows(txn, w, &err)) != 0)
            ads_txn_abort(txn);
        else if (!rc)
            rc = ads_txn_commit(txn, &err);
        w->rc[w->i] = rc;
    }
    return NULL;
}

/* Writers on six threads store rows whose names are new and shared, in
 * writes that fail now and then: their rows go through shapes holding ids
 * of transactions that are then dropped or aborted, and the ids are handed
 * out again to other names. Every write that committed reads back with its
 * own names and values; none that failed left a row. */
static void names__writers_share_new_names_through_shapes(void **state)
{
    (void)state;
    static swriter w[SW_THREADS];
    pthread_t tid[SW_THREADS];
    for (unsigned t = 0; t < SW_THREADS; t++) {
        memset(&w[t], 0, sizeof w[t]);
        w[t].t = t;
        assert_int_equal(pthread_create(&tid[t], NULL, sw_run, &w[t]), 0);
    }
    for (unsigned t = 0; t < SW_THREADS; t++)
        pthread_join(tid[t], NULL);
    for (unsigned t = 0; t < SW_THREADS; t++)
        for (unsigned i = 0; i < SW_WRITES; i++) {
            assert_int_equal(w[t].rc[i], sw_fails(t, i) ? ADS_EEXIST : 0);
            for (unsigned j = 0; j < SW_ROWS; j++) {
                char key[48], want[3][48], k[64];
                sw_row(t, i, j, key, want);
                snprintf(k, sizeof k, "{ \"%s\" }", key);
                char *got = ts_latest(db, "Machine", k);
                if (sw_fails(t, i) ? got != NULL
                                   : !got || !strstr(got, want[0]) || !strstr(got, want[1]) ||
                                         !strstr(got, want[2]))
                    fail_msg("%s: want %s, %s, %s in %s", key, want[0], want[1], want[2],
                             got ? got : "(none)");
                free(got);
            }
        }
    assert_int_equal(ts_verify(db), 0);
}

int main(void)
{
    /* stores as format 6 and older wrote them: one history row per entry
     * (engine/history.c; chunks are test_chunk's, test_hrows' and
     * test_model's) */
    setenv("ADSTORE_TEST_HISTORY_ROWS", "1", 1);
    const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
        T(names__rows_keep_ids_and_read_back_after_reopen),
        T(names__a_second_handle_reads_names_the_first_added),
        T(names__an_aborted_write_leaves_no_name),
        T(names__a_shape_of_a_dropped_write_is_not_used),
        T(names__a_format_1_store_reads_and_is_upgraded_by_a_write),
        T(names__a_row_between_rows_with_names_keeps_the_history_readable),
        T(names__dump_carries_names_and_restore_gives_ids_back),
        T(names__verify_catches_an_unknown_id_and_a_gap),
        T(names__writers_in_groups_add_names_at_once),
        T(names__writers_share_new_names_through_shapes),
#undef T
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
