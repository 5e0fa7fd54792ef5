/*
 * tests/engine/test_stage.c: the sorted load (engine/stage.c). Rows come
 * back in key order and, for one key, in the order added, across more runs
 * spilled to disk than merge at once; rows without a key to sort by come
 * after every keyed row in the order added; the runs leave no file behind;
 * a stage being merged takes no more records; a stage merged into a bulk
 * load stores what the same records added directly store; an empty stage
 * merges to nothing.
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/limits.h"
#include "engine/engine_int.h"
#include "tests/cli/run.h"
#include "tests/engine/helpers.h"

static tstore ts;

static int setup(void **state)
{
    (void)state;
    ads_db *db = ts_open(&ts, 1700000000);
    ts_declare(db, "Machine", "Name", "");
    ts_declare(db, "Job", "", "AutoGenerateKey = true;");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    ts_close(&ts);
    return 0;
}

static const ads_record *rec(ads_arena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static const ads_record *rec(ads_arena *a, const char *fmt, ...)
{
    char text[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    const ads_record *r;
    ads_error err;
    if (ads_record_parse(&r, a, text, strlen(text), &err))
        fail_msg("%s: %s", text, err.message);
    return r;
}

/* The string attribute name of a staged row (keyed by names or by the
 * store's ids), into buf ("" if absent). */
static void row_string(char *buf, size_t cap, const void *row, size_t len, const char *name)
{
    ads_arena *a = ads_arena_new();
    const ads_record *r;
    ads_error err;
    ads_names_reader rd;
    ads_names__reader(&rd, ts.db);
    assert_non_null(a);
    if (ads_msgpack__decode_row(&r, a, row, len, &rd.nm, 0, &err))
        fail_msg("decoding a row: %s", err.message);
    const ads_expr *x = ads_record_lookup(r, name, strlen(name));
    const ads_value *v = x ? ads_expr_literal_value(x) : NULL;
    snprintf(buf, cap, "%.*s", v && v->type == ADS_STRING ? (int)v->u.s.len : 0,
             v && v->type == ADS_STRING ? v->u.s.p : "");
    ads_arena_free(a);
}

static size_t runs_in_dir(const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        n += strncmp(e->d_name, ".import-run", 11) == 0;
    closedir(d);
    return n;
}

/* A stage with runs of run_bytes holding n Machine records whose names
 * take `keys` values in scattered order (record i named for i % keys), each
 * tagged with its index. */
static ads_stage *staged_machines(int n, int keys, size_t run_bytes)
{
    ads_stage *s;
    ads_error err;
    ads_arena *a = ads_arena_new();
    assert_non_null(a);
    assert_int_equal(ads_stage_begin(&s, ts.db, ts.path, run_bytes, &err), 0);
    for (int i = 0; i < n; i++) {
        unsigned k = (unsigned)(i % keys) * 2654435761u;
        ads_arena_reset(a);
        if (ads_stage_add(s, rec(a, "[ AdType = \"Machine\"; Name = \"m%08x\"; N = %d ]", k, i),
                          i, &err))
            fail_msg("add %d: %s", i, err.message);
    }
    ads_arena_free(a);
    return s;
}

/* The merged stage gives n rows in key order, two of one key in the order
 * added (by their tags). */
static void comes_back_in_order(ads_stage *s, int n)
{
    ads_error err;
    char prev[64] = "", name[64];
    int64_t prev_tag = -1, tag;
    const void *row;
    size_t len;
    int got = 0, rc;
    while ((rc = ads_stage_next(&row, &len, &tag, s, &err)) == 1) {
        row_string(name, sizeof name, row, len, "Name");
        int c = strcmp(prev, name);
        if (c > 0 || (c == 0 && tag <= prev_tag))
            fail_msg("row %d: %s (tag %lld) after %s (tag %lld)", got, name, (long long)tag, prev,
                     (long long)prev_tag);
        snprintf(prev, sizeof prev, "%s", name);
        prev_tag = tag;
        got++;
    }
    assert_int_equal(rc, 0);
    assert_int_equal(got, n);
}

static void stage__rows_come_back_in_key_then_added_order_across_many_runs(void **state)
{
    (void)state;
    const int n = 4000, dup = 3;
    ads_stage *s = staged_machines(n, n / dup, 1500);
    ads_error err;
    assert_true(ads_stage_runs(s) > ADS_STAGE_MERGE_WAYS);
    assert_true(ads_stage_spilled_bytes(s) > 0);
    assert_int_equal(runs_in_dir(ts.path), 0); /* unlinked as they are made */
    assert_int_equal(ads_stage_merge(s, &err), 0);
    ads_arena *a = ads_arena_new();
    assert_int_equal(ads_stage_add(s, rec(a, "[ AdType = \"Machine\"; Name = \"late\" ]"), 0, &err),
                     ADS_EINVAL);
    assert_string_equal(err.message, "the stage is being merged: nothing more can be added");
    ads_arena_free(a);
    comes_back_in_order(s, n);
    ads_stage_free(s);
}

/* Past ADS_STAGE_MERGE_WAYS runs, only the runs of the lowest level are
 * merged: every row is rewritten once per level (about twice here), not
 * once per merge as a merge of every run on disk would (about ten times
 * for these 600-odd runs). The rows still come back in key order. */
/* Where the file system cannot make a file without a name, the runs are
 * made with mkstemp and unlinked at once: the same rows in the same order,
 * nothing left in the directory. */
static void stage__runs_made_with_mkstemp_come_back_the_same(void **state)
{
    (void)state;
    const int n = 1500;
    assert_int_equal(setenv("ADSTORE_TEST_NO_TMPFILE", "1", 1), 0);
    ads_stage *s = staged_machines(n, n / 3, 1500);
    unsetenv("ADSTORE_TEST_NO_TMPFILE");
    ads_error err;
    assert_true(ads_stage_runs(s) > ADS_STAGE_MERGE_WAYS);
    assert_int_equal(runs_in_dir(ts.path), 0);
    assert_int_equal(ads_stage_merge(s, &err), 0);
    comes_back_in_order(s, n);
    ads_stage_free(s);
    assert_int_equal(runs_in_dir(ts.path), 0);
}

static void stage__many_runs_are_merged_by_level_in_linear_bytes(void **state)
{
    (void)state;
    const int n = 20000;
    ads_stage *s = staged_machines(n, n, 1500);
    ads_error err;
    uint64_t runs = ads_stage_runs(s), spilled = ads_stage_spilled_bytes(s);
    assert_true(runs > 8 * ADS_STAGE_MERGE_WAYS);
    /* a spilled run holds at most run_bytes plus one entry */
    assert_true(spilled <= 3 * runs * (1500 + 200));
    assert_int_equal(ads_stage_merge(s, &err), 0);
    comes_back_in_order(s, n);
    ads_stage_free(s);
}

static void stage__rows_without_a_sort_key_come_last_in_added_order(void **state)
{
    (void)state;
    ads_stage *s;
    ads_error err;
    ads_arena *a = ads_arena_new();
    assert_non_null(a);
    assert_int_equal(ads_stage_begin(&s, ts.db, ts.path, 0, &err), 0);
    const char *const texts[] = {
        "[ AdType = \"Job\"; Tag = \"job1\" ]",              /* generated key */
        "[ AdType = \"Machine\"; Name = \"b\"; Tag = \"b\" ]",
        "[ AdType = \"Nope\"; Tag = \"nope\" ]",             /* unknown type */
        "[ AdType = \"Machine\"; Tag = \"nokey\" ]",          /* key not given */
        "[ AdType = \"Machine\"; Name = \"a\"; Tag = \"a\" ]",
        "[ AdType = \"Job\"; Tag = \"job2\" ]",
    };
    for (int i = 0; i < 6; i++) {
        ads_arena_reset(a);
        assert_int_equal(ads_stage_add(s, rec(a, "%s", texts[i]), i, &err), 0);
    }
    assert_int_equal(ads_stage_runs(s), 0);
    assert_int_equal(ads_stage_merge(s, &err), 0);
    const char *const want[] = {"a", "b", "job1", "nope", "nokey", "job2"};
    const void *row;
    size_t len;
    int64_t tag;
    char got[64];
    for (int i = 0; i < 6; i++) {
        assert_int_equal(ads_stage_next(&row, &len, &tag, s, &err), 1);
        row_string(got, sizeof got, row, len, "Tag");
        assert_string_equal(got, want[i]);
    }
    assert_int_equal(ads_stage_next(&row, &len, &tag, s, &err), 0);
    ads_stage_free(s);
    ads_arena_free(a);
}

/* Two bulk loads of the same records, one through the stage: the same
 * records with the same rows in effect and the same history. */
static void stage__merged_into_a_bulk_load_stores_what_a_direct_load_does(void **state)
{
    (void)state;
    ads_stage *s;
    ads_bulk *b;
    ads_error err;
    ads_arena *a = ads_arena_new();
    assert_non_null(a);
    assert_int_equal(ads_stage_begin(&s, ts.db, ts.path, 700, &err), 0);
    for (int i = 0; i < 300; i++) {
        unsigned k = (unsigned)(i % 200) * 2654435761u;
        ads_arena_reset(a);
        assert_int_equal(ads_stage_add(s, rec(a, "[ AdType = \"Machine\"; Name = \"m%08x\"; "
                                                  "N = %d ]", k, i), i, &err), 0);
    }
    assert_int_equal(ads_stage_merge(s, &err), 0);
    ads_bulk_options opt = ADS_BULK_OPTIONS_INIT;
    opt.batch = 64;
    assert_int_equal(ads_bulk_begin(&b, ts.db, &opt, &err), 0);
    const void *row;
    size_t len;
    int64_t tag;
    int rc;
    int by_ids = 0;
    while ((rc = ads_stage_next(&row, &len, &tag, s, &err)) == 1) {
        by_ids += ads_msgpack__row_has_ids(row, len);
        if (ads_bulk_add_staged(b, s, &err))
            fail_msg("%s", err.message);
    }
    assert_int_equal(rc, 0);
    /* the first record's names were given ids: the others are keyed by them */
    assert_int_equal(by_ids, 299);
    assert_int_equal(ads_bulk_end(b, &err), 0);
    ads_stage_free(s);
    assert_int_equal(ts_count(ts.db, "Machine", false), 200);
    /* m00000000 is record 0 and record 200 */
    char *h = ts_history(ts.db, "Machine", "{ \"m00000000\" }");
    assert_non_null(h);
    assert_non_null(strstr(h, "N = 0"));
    assert_non_null(strstr(h, "N = 200"));
    assert_true(strstr(h, "N = 0") < strstr(h, "N = 200"));
    free(h);
    char *v = ts_attr(ts.db, "Machine", "{ \"m00000000\" }", "N");
    assert_string_equal(v, "200");
    free(v);
    assert_int_equal(ts_verify(ts.db), 0);
    ads_arena_free(a);
}

/* Rows staged into st, merged: how many came keyed by ids. */
static int staged_with_ids(ads_stage *st)
{
    ads_error err;
    const void *row;
    size_t len;
    int64_t tag;
    int n = 0, rc;
    assert_int_equal(ads_stage_merge(st, &err), 0);
    while ((rc = ads_stage_next(&row, &len, &tag, st, &err)) == 1)
        n += ads_msgpack__row_has_ids(row, len);
    assert_int_equal(rc, 0);
    return n;
}

/* A stage gives names ids in a write of its own. On a store whose map is
 * over three quarters used, that write grows the map, which waits for every
 * transaction of the handle to end: the stage lets its own read transaction
 * go first (it held it, and the write gave up after ten seconds, leaving
 * every row keyed by names). */
static void stage__names_get_ids_when_the_map_must_grow(void **state)
{
    (void)state;
    char *dir = make_temp_dir();
    ads_db *d;
    ads_error err;
    ads_db_options opt = ADS_DB_OPTIONS_INIT;
    opt.map_size = (size_t)1 << 20;
    assert_non_null(dir);
    assert_int_equal(ads_db_open_ex(&d, dir, ADS_DB_CREATE, &opt, &err), 0);
    ts_declare(d, "Machine", "Name", "");
    ads_arena *a = ads_arena_new();
    for (int from = 0; ads_db_map_size(d) == opt.map_size; from += 50) {
        ads_db_info in;
        assert_int_equal(ads_db_info_get(&in, d, &err), 0);
        if (in.used_bytes > in.map_size / 4 * 3)
            break;
        ads_bulk *b;
        ads_bulk_options bo = ADS_BULK_OPTIONS_INIT;
        assert_int_equal(ads_bulk_begin(&b, d, &bo, &err), 0);
        for (int i = from; i < from + 50; i++) {
            assert_int_equal(ads_bulk_add(b, rec(a, "[ AdType = \"Machine\"; Name = \"m%07d\"; "
                                                    "Pad = \"%0300d\" ]", i, i), &err), 0);
            ads_arena_reset(a);
        }
        assert_int_equal(ads_bulk_end(b, &err), 0);
    }
    assert_int_equal(ads_db_map_size(d), opt.map_size); /* full enough, not grown yet */
    ads_stage *st;
    assert_int_equal(ads_stage_begin(&st, d, dir, 0, &err), 0);
    for (int i = 0; i < 40; i++) {
        assert_int_equal(ads_stage_add(st, rec(a, "[ AdType = \"Machine\"; Name = \"s%05d\"; "
                                                  "NewAttr = %d ]", i, i), i, &err), 0);
        ads_arena_reset(a);
    }
    assert_int_equal(staged_with_ids(st), 39);
    ads_stage_free(st);
    ads_db_close(d);
    ads_arena_free(a);
    remove_tree(dir);
    free(dir);
}

typedef struct in_write {
    ads_stage *st;
    ads_arena *a;
} in_write;

static int stage_inside(ads_txn *txn, void *ctx, ads_error *err)
{
    in_write *w = ctx;
    (void)txn;
    return ads_stage_add(w->st, rec(w->a, "[ AdType = \"Machine\"; Name = \"w\"; Fresh = 1 ]"), 0,
                         err);
}

/* A record staged from inside a write on the same handle is staged with
 * names: giving them ids there would wait for the write it is in. */
static void stage__adding_inside_a_write_stages_with_names(void **state)
{
    (void)state;
    ads_stage *st;
    ads_error err;
    in_write w = {NULL, ads_arena_new()};
    assert_int_equal(ads_stage_begin(&w.st, ts.db, ts.path, 0, &err), 0);
    st = w.st;
    assert_int_equal(ads_db_write(ts.db, stage_inside, &w, &err), 0);
    assert_int_equal(ads_stage_add(st, rec(w.a, "[ AdType = \"Machine\"; Name = \"x\"; "
                                                "Fresh = 2 ]"), 1, &err), 0);
    assert_int_equal(ads_stage_add(st, rec(w.a, "[ AdType = \"Machine\"; Name = \"y\"; "
                                                "Fresh = 3 ]"), 2, &err), 0);
    /* "w" with names; "x" with names, its names given ids after it; "y" with ids */
    assert_int_equal(staged_with_ids(st), 1);
    ads_stage_free(st);
    ads_arena_free(w.a);
}

/* A shape that cannot be keyed by ids (a name the store refuses) gives
 * none of its names ids: its record will be refused, and a refused record
 * adds nothing to the store's name table. */
static void stage__a_shape_the_store_refuses_adds_no_name(void **state)
{
    (void)state;
    ads_stage *st;
    ads_error err;
    ads_arena *a = ads_arena_new();
    assert_int_equal(ads_stage_begin(&st, ts.db, ts.path, 0, &err), 0);
    char longname[ADS_MAX_NAME_LEN + 2];
    memset(longname, 'z', sizeof longname - 1); /* over the limit, and sorted last */
    longname[sizeof longname - 1] = '\0';
    assert_int_equal(ads_stage_add(st, rec(a, "[ AdType = \"Machine\"; Name = \"a\"; "
                                              "Zebra9 = 1; %s = 2 ]", longname), 0, &err), 0);
    ads_txn *txn;
    bool found = true;
    uint32_t id;
    assert_int_equal(ads_txn_begin(&txn, ts.db, 0, &err), 0);
    assert_int_equal(ads_names__known(txn, "Zebra9", 6, &found, &id, &err), 0);
    assert_false(found);
    ads_txn_abort(txn);
    ads_stage_free(st);
    ads_arena_free(a);
}

static void stage__an_empty_stage_merges_to_nothing(void **state)
{
    (void)state;
    ads_stage *s;
    ads_error err;
    const void *row;
    size_t len;
    int64_t tag;
    assert_int_equal(ads_stage_begin(&s, ts.db, ts.path, 0, &err), 0);
    assert_int_equal(ads_stage_merge(s, &err), 0);
    assert_int_equal(ads_stage_next(&row, &len, &tag, s, &err), 0);
    assert_int_equal(ads_stage_runs(s), 0);
    ads_stage_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            stage__rows_come_back_in_key_then_added_order_across_many_runs, setup, teardown),
        cmocka_unit_test_setup_teardown(stage__runs_made_with_mkstemp_come_back_the_same, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(stage__many_runs_are_merged_by_level_in_linear_bytes,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(stage__rows_without_a_sort_key_come_last_in_added_order,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(
            stage__merged_into_a_bulk_load_stores_what_a_direct_load_does, setup, teardown),
        cmocka_unit_test_setup_teardown(stage__names_get_ids_when_the_map_must_grow, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(stage__adding_inside_a_write_stages_with_names, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(stage__a_shape_the_store_refuses_adds_no_name, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(stage__an_empty_stage_merges_to_nothing, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
