/*
 * tests/engine/test_bulk.c: bulk loads (batches committed whole, progress
 * written in the batch's transaction, a bad record failing its whole batch
 * and nothing else), backfill (ids dated in the past from the backfill clock
 * sequence, no duplicates when a period is loaded twice or periods
 * overlap), a tiny map growing through a large load, the hook points, and
 * named sequences.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "classad/msgpack_int.h"
#include "engine/engine_int.h"
#include "tests/cli/run.h"
#include "tests/engine/helpers.h"

#define T0 1700000000.0

static tstore ts;
static ads_db *db;

static int setup(void **state)
{
    (void)state;
    db = ts_open(&ts, T0);
    ts_declare(db, "Machine", "Name", NULL);
    ts_declare(db, "Event", "", "AutoGenerateKey = true;");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    assert_int_equal(ts_verify(db), 0);
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

typedef struct progress {
    int batches;
    uint64_t last_first;
    size_t last_count;
} progress;

static int on_batch(void *ctx, ads_txn *txn, const ads_bulk_batch *b, ads_error *err)
{
    progress *p = ctx;
    p->batches++;
    p->last_first = b->first;
    p->last_count = b->count;
    char v[32];
    int n = snprintf(v, sizeof v, "%llu", (unsigned long long)(b->first + b->count));
    return ads_txn_meta_put(txn, "test/progress", v, (size_t)n, err);
}

static char *progress_value(void)
{
    ads_txn *txn;
    ads_str v;
    char *out = strdup("none");
    assert_int_equal(ads_txn_begin(&txn, db, ADS_TXN_READONLY, NULL), 0);
    if (ads_txn_meta_get(txn, "test/progress", &v, NULL) == 1) {
        free(out);
        out = strndup(v.p, v.len);
    }
    ads_txn_abort(txn);
    return out;
}

static void bulk__batches_commit_whole_with_their_progress(void **state)
{
    (void)state;
    ads_arena *a = ads_arena_new();
    progress p = {0, 0, 0};
    ads_bulk_options opt = {.batch = 1000, .backfill = false, .on_batch = on_batch, .ctx = &p};
    ads_bulk *b;
    ads_error err;
    assert_int_equal(ads_bulk_begin(&b, db, &opt, &err), 0);
    for (int i = 0; i < 2500; i++) {
        if (ads_bulk_add(b, rec(a, "[ AdType = \"Machine\"; Name = \"m%d\"; I = %d ]", i, i), &err))
            fail_msg("add: %s", err.message);
        ads_arena_reset(a);
    }
    assert_int_equal(ads_bulk_committed(b), 2000);
    assert_int_equal(ads_bulk_pending(b), 500);
    char *pv = progress_value();
    assert_string_equal(pv, "2000");
    free(pv);
    assert_int_equal(ads_bulk_end(b, &err), 0);
    assert_int_equal(p.batches, 3);
    assert_int_equal(p.last_first, 2000);
    assert_int_equal(p.last_count, 500);
    assert_int_equal(ts_count(db, "Machine", false), 2500);
    pv = progress_value();
    assert_string_equal(pv, "2500");
    free(pv);
    /* Attribute records were made once each: AdType, I, Name */
    assert_int_equal(ts_count(db, "Attribute", false), 3);
    ads_arena_free(a);
}

static void bulk__a_bad_record_fails_its_batch_only(void **state)
{
    (void)state;
    ads_arena *a = ads_arena_new();
    progress p = {0, 0, 0};
    ads_bulk_options opt = {.batch = 100, .backfill = false, .on_batch = on_batch, .ctx = &p};
    ads_bulk *b;
    ads_error err;
    assert_int_equal(ads_bulk_begin(&b, db, &opt, &err), 0);
    int rc = 0, i;
    for (i = 0; i < 250 && !rc; i++) {
        if (i == 150)
            rc = ads_bulk_add(b, rec(a, "[ AdType = \"Machine\"; I = %d ]", i), &err);
        else
            rc = ads_bulk_add(b, rec(a, "[ AdType = \"Machine\"; Name = \"m%d\"; I = %d ]", i, i),
                              &err);
    }
    /* the second batch (records 100..199) failed at record 150, numbered 151 */
    assert_int_equal(rc, ADS_EINVAL);
    assert_int_equal(i, 200);
    assert_string_equal(err.message, "record 151: a record of type Machine needs key attribute Name");
    assert_int_equal(ads_bulk_failed(b), 150);
    assert_int_equal(ads_bulk_committed(b), 100);
    assert_int_equal(ts_count(db, "Machine", false), 100);
    char *pv = progress_value();
    assert_string_equal(pv, "100");
    free(pv);
    /* --keep-going: drop the bad record, and the rest of the batch commits */
    assert_int_equal(ads_bulk_drop_failed(b, &err), 0);
    assert_int_equal(ads_bulk_drop_failed(b, &err), ADS_EINVAL);
    assert_int_equal(ads_bulk_flush(b, &err), 0);
    assert_int_equal(ts_count(db, "Machine", false), 199);
    assert_int_equal(ads_bulk_end(b, &err), 0);
    ads_arena_free(a);
}

/* Every Event id, checked to be a backfill OUID dated at its record's
 * _Timestamp second; returns how many, and fails on a duplicate. */
static size_t check_event_ids(void)
{
    ads_txn *txn;
    ads_scan *s;
    ads_row *r;
    const ads_type *t;
    ads_arena *a = ads_arena_new();
    size_t n = 0, cap = 1024;
    ads_id *ids = malloc(cap * sizeof *ids);
    assert_int_equal(ads_txn_begin(&txn, db, ADS_TXN_READONLY, NULL), 0);
    assert_int_equal(ads_txn_type(&t, txn, "Event", 5, NULL), 0);
    assert_int_equal(ads_scan_open(&s, txn, t, NULL, 0, NULL), 0);
    while (ads_scan_next(&r, s, NULL) == 1) {
        ads_value k;
        assert_int_equal(ads_row_key_values(&k, r, a, NULL), 0);
        ads_id id = k.u.list.items[0].u.id;
        ads_ouid_fields f;
        ads_ouid_unpack(&f, id);
        assert_true(f.backfill);
        assert_int_equal(f.clockseq & 1, 0);
        assert_int_equal((double)f.time, (double)(int64_t)r->ts);
        for (size_t i = 0; i < n; i++)
            if (ads_id_eq(ids[i], id))
                fail_msg("duplicate id");
        if (n == cap)
            ids = realloc(ids, (cap *= 2) * sizeof *ids);
        ids[n++] = id;
    }
    ads_scan_close(s);
    ads_txn_abort(txn);
    ads_arena_free(a);
    free(ids);
    return n;
}

static void load_events(int from_minute, int to_minute, int per_minute)
{
    ads_arena *a = ads_arena_new();
    ads_bulk_options opt = {.batch = 50, .backfill = true, .on_batch = NULL, .ctx = NULL};
    ads_bulk *b;
    ads_error err;
    assert_int_equal(ads_bulk_begin(&b, db, &opt, &err), 0);
    for (int m = from_minute; m < to_minute; m++)
        for (int k = 0; k < per_minute; k++) {
            double t = 1600000000.0 + 60.0 * m + k * 0.25;
            char when[64];
            ads_buf tb = ADS_BUF_INIT;
            ads_value v = ads_abstime(t, 0);
            ads_value_unparse(&tb, &v);
            snprintf(when, sizeof when, "%s", ads_buf_cstr(&tb));
            ads_buf_free(&tb);
            if (ads_bulk_add(b, rec(a, "[ AdType = \"Event\"; M = %d; _Timestamp = %s ]", m, when),
                             &err))
                fail_msg("add: %s", err.message);
            ads_arena_reset(a);
        }
    assert_int_equal(ads_bulk_end(b, &err), 0);
    ads_arena_free(a);
}

static void backfill__ids_are_dated_in_the_past_and_never_repeat(void **state)
{
    (void)state;
    load_events(0, 30, 8);  /* 240 events over 30 minutes, batches of 50 */
    load_events(0, 30, 8);  /* the same period again */
    load_events(15, 45, 8); /* an overlapping period */
    assert_int_equal(check_event_ids(), 720);
    /* a current id made now does not collide either, and is not a backfill id */
    ads_txn *txn;
    ads_value v;
    ads_arena *a = ads_arena_new();
    assert_int_equal(ads_txn_begin(&txn, db, 0, NULL), 0);
    assert_int_equal(ads_txn_next_value(&v, txn, "type:Event", 10, a, NULL), 0);
    ads_ouid_fields f;
    ads_ouid_unpack(&f, v.u.id);
    assert_false(f.backfill);
    assert_int_equal(f.clockseq & 1, 1);
    assert_int_equal(ads_txn_commit(txn, NULL), 0);
    /* a backfill load without _Timestamp is refused, saying which record */
    ads_bulk_options opt = {.batch = 50, .backfill = true, .on_batch = NULL, .ctx = NULL};
    ads_bulk *b;
    ads_error err;
    assert_int_equal(ads_bulk_begin(&b, db, &opt, &err), 0);
    assert_int_equal(ads_bulk_add(b, rec(a, "[ AdType = \"Event\"; M = 1 ]"), &err), ADS_EINVAL);
    assert_string_equal(err.message, "record 1: a backfill needs _Timestamp on every record: an "
                                     "AbsTime, seconds since 1970 or ISO 8601 text");
    assert_int_equal(ads_bulk_end(b, &err), 0);
    ads_arena_free(a);
}

static void map__a_tiny_map_grows_through_a_large_load(void **state)
{
    (void)state;
    ts_reopen_close(&ts);
    ads_db_options o = {256 * 1024};
    ads_error err;
    if (ads_db_open_ex(&ts.db, ts.path, 0, &o, &err))
        fail_msg("open: %s", err.message);
    db = ts.db;
    size_t before = ads_db_map_size(db);
    ads_arena *a = ads_arena_new();
    ads_bulk_options opt = {.batch = 5000, .backfill = false, .on_batch = NULL, .ctx = NULL};
    ads_bulk *b;
    assert_int_equal(ads_bulk_begin(&b, db, &opt, &err), 0);
    for (int i = 0; i < 20000; i++) {
        if (ads_bulk_add(b, rec(a, "[ AdType = \"Machine\"; Name = \"m%06d\"; Payload = \"%0200d\" ]",
                                i, i),
                         &err))
            fail_msg("add %d: %s", i, err.message);
        ads_arena_reset(a);
    }
    assert_int_equal(ads_bulk_end(b, &err), 0);
    assert_true(ads_db_map_size(db) > before);
    assert_int_equal(ts_count(db, "Machine", false), 20000);
    /* and an explicit transaction too */
    ads_txn *txn;
    assert_int_equal(ads_txn_begin(&txn, db, 0, &err), 0);
    assert_int_equal(ads_txn_store(txn, rec(a, "[ AdType = \"Machine\"; Name = \"x\" ]"), NULL, &err),
                     0);
    assert_int_equal(ads_txn_commit(txn, &err), 0);
    ads_arena_free(a);
}

/* ---- hooks ---- */

typedef struct hook_log {
    int notified, changes;
    char last[200];
} hook_log;

static int prestore(void *ctx, ads_txn *txn, const ads_record *r, const ads_record **out,
                    ads_arena *a, ads_error *err)
{
    (void)ctx;
    (void)txn;
    if (ads_record_lookup(r, "Forbidden", 9))
        return ads_error_set(err, ADS_EINVAL, "Machine records may not say Forbidden");
    if (!ads_record_lookup(r, "Owner", 5)) {
        ads_record_builder *b;
        ads_value nobody = ads_string("nobody", 6);
        ads_record_builder_new(&b, a, NULL);
        for (size_t i = 0; i < ads_record_size(r); i++) {
            ads_str n = ads_record_name(r, i);
            ads_record_builder_add(b, n.p, n.len, ads_record_expr(r, i), NULL);
        }
        ads_record_builder_add_value(b, "Owner", 5, &nobody, NULL);
        *out = ads_record_builder_finish(b);
    }
    return 0;
}

static int trigger(void *ctx, ads_txn *txn, ads_row *old, ads_row *new_row,
                   const ads_record **out, ads_arena *a, ads_error *err)
{
    (void)ctx;
    (void)txn;
    (void)out;
    ads_view nv = ads_row_view(new_row, NULL);
    const ads_expr *e;
    ads_value v;
    const char *rule = "Memory < 0";
    ads_expr_parse(&e, a, rule, strlen(rule), NULL);
    ads_expr_eval(&v, e, &nv, a);
    if (v.type == ADS_BOOLEAN && v.u.b)
        return ads_error_set(err, ADS_EINVAL, "Memory cannot go negative");
    if (old) {
        /* keep a count of changes in the row itself */
        ads_view ov = ads_row_view(old, NULL);
        const char *c = "Changes ?: 0";
        ads_expr_parse(&e, a, c, strlen(c), NULL);
        ads_expr_eval(&v, e, &ov, a);
        const ads_record *full;
        ads_row_record(&full, new_row, 0, a, NULL);
        ads_record_builder *b;
        ads_value n = ads_int(v.u.i + 1);
        ads_record_builder_new(&b, a, NULL);
        for (size_t i = 0; i < ads_record_size(full); i++) {
            ads_str nm = ads_record_name(full, i);
            ads_record_builder_add(b, nm.p, nm.len, ads_record_expr(full, i), NULL);
        }
        ads_record_builder_add_value(b, "Changes", 7, &n, NULL);
        *out = ads_record_builder_finish(b);
    }
    return 0;
}

static void notify(void *ctx, const ads_change *changes, size_t n)
{
    hook_log *log = ctx;
    log->notified++;
    log->changes += (int)n;
    ads_buf b = ADS_BUF_INIT;
    ads_value_unparse(&b, &changes[n - 1].key);
    snprintf(log->last, sizeof log->last, "%s %d %s", changes[n - 1].type, (int)changes[n - 1].kind,
             ads_buf_cstr(&b));
    ads_buf_free(&b);
}

static void hooks__prestore_trigger_and_notify(void **state)
{
    (void)state;
    hook_log log = {0, 0, ""};
    ads_hooks h = {prestore, trigger, notify, &log};
    ads_error err;
    assert_int_equal(ads_db_set_hooks(db, "machine", &h, &err), 0);
    /* prestore fills a default */
    assert_int_equal(ts_store(db, &err, "[ AdType = \"Machine\"; Name = \"a\"; Memory = 1 ]"), 0);
    char *o = ts_attr(db, "Machine", "{ \"a\" }", "{ Owner, Changes }");
    assert_string_equal(o, "{ \"nobody\", undefined }");
    free(o);
    assert_int_equal(log.notified, 1);
    assert_string_equal(log.last, "Machine 0 { \"a\" }");
    /* the trigger changes the row */
    assert_int_equal(ts_store(db, &err, "[ AdType = \"Machine\"; Name = \"a\"; Memory = 2 ]"), 0);
    o = ts_attr(db, "Machine", "{ \"a\" }", "{ Memory, Changes }");
    assert_string_equal(o, "{ 2, 1 }");
    free(o);
    /* prestore rejects; trigger vetoes: nothing written, nothing notified */
    assert_int_equal(ts_store(db, &err, "[ AdType = \"Machine\"; Name = \"b\"; Forbidden = 1 ]"),
                     ADS_EINVAL);
    assert_string_equal(err.message, "Machine records may not say Forbidden");
    assert_int_equal(ts_store(db, &err, "[ AdType = \"Machine\"; Name = \"a\"; Memory = -5 ]"),
                     ADS_EINVAL);
    assert_string_equal(err.message, "Memory cannot go negative");
    assert_int_equal(log.notified, 2);
    o = ts_attr(db, "Machine", "{ \"a\" }", "Memory");
    assert_string_equal(o, "2");
    free(o);
    /* a purge is notified too, after commit */
    ads_txn *txn;
    ads_row row;
    const ads_type *t;
    ads_arena *a = ads_arena_new();
    ads_value key = ads_string("a", 1);
    assert_int_equal(ads_txn_begin(&txn, db, 0, NULL), 0);
    assert_int_equal(ads_txn_type(&t, txn, "Machine", 7, NULL), 0);
    assert_int_equal(ads_txn_get(txn, &row, t, &key, 1, a, NULL), 1);
    assert_int_equal(ads_txn_purge(txn, &row, NULL), 0);
    assert_int_equal(log.notified, 2);
    assert_int_equal(ads_txn_commit(txn, NULL), 0);
    assert_int_equal(log.notified, 3);
    assert_string_equal(log.last, "Machine 2 { \"a\" }");
    ads_arena_free(a);
    assert_int_equal(ads_db_set_hooks(db, "Machine", NULL, &err), 0);
}

static int refuse_attribute(void *ctx, ads_txn *txn, ads_row *old, ads_row *new_row,
                            const ads_record **out, ads_arena *a, ads_error *err)
{
    (void)ctx, (void)txn, (void)old, (void)new_row, (void)out, (void)a;
    return ads_error_set(err, ADS_EINVAL, "no new attributes today");
}

static int store_in(ads_txn *txn, ads_arena *a, const char *text, ads_error *err)
{
    return ads_txn_store(txn, rec(a, "%s", text), NULL, err);
}

/* A store that fails after it changed the store (here: its row written, then
 * the Attribute record for a new name refused) leaves the transaction
 * broken: no more writes, and commit fails; nothing of it remains. A store
 * refused before it changed anything leaves the transaction usable. */
static void txn__a_write_failing_half_way_breaks_the_transaction(void **state)
{
    (void)state;
    ads_error err;
    ads_txn *txn;
    ads_arena *a = ads_arena_new();
    ads_hooks h = {NULL, refuse_attribute, NULL, NULL};
    assert_int_equal(ts_store(db, &err, "[ AdType = \"Machine\"; Name = \"a\"; Memory = 1 ]"), 0);
    assert_int_equal(ads_db_set_hooks(db, "Attribute", &h, &err), 0);

    assert_int_equal(ads_txn_begin(&txn, db, 0, NULL), 0);
    assert_int_equal(store_in(txn, a, "[ AdType = \"Machine\"; Memory = 2 ]", &err), ADS_EINVAL);
    assert_string_equal(err.message, "a record of type Machine needs key attribute Name");
    assert_int_equal(store_in(txn, a, "[ AdType = \"Machine\"; Name = \"b\"; Memory = 3 ]", &err),
                     0);
    assert_int_equal(ads_txn_commit(txn, &err), 0);
    assert_int_equal(ts_count(db, "Machine", false), 2);

    assert_int_equal(ads_txn_begin(&txn, db, 0, NULL), 0);
    assert_int_equal(store_in(txn, a, "[ AdType = \"Machine\"; Name = \"a\"; Disk = 9 ]", &err),
                     ADS_EINVAL);
    assert_string_equal(err.message, "no new attributes today");
    assert_int_equal(store_in(txn, a, "[ AdType = \"Machine\"; Name = \"c\" ]", &err), ADS_EINVAL);
    assert_string_equal(err.message, "the transaction failed earlier: abort it");
    assert_int_equal(ads_txn_commit(txn, &err), ADS_EINVAL);
    assert_string_equal(err.message, "the transaction failed earlier and was abandoned");
    /* the record kept its row: no second copy of it, no Disk */
    char *o = ts_attr(db, "Machine", "{ \"a\" }", "{ Memory, Disk }");
    assert_string_equal(o, "{ 1, undefined }");
    free(o);
    o = ts_history(db, "Machine", "{ \"a\" }");
    assert_null(strchr(o, '\n'));
    free(o);
    assert_int_equal(ads_db_set_hooks(db, "Attribute", NULL, &err), 0);
    ads_arena_free(a);
}

/* Hooks change type information that open transactions hold. */
static void hooks__cannot_change_while_a_transaction_is_open(void **state)
{
    (void)state;
    ads_error err;
    ads_txn *r, *w;
    ads_hooks h = {NULL, refuse_attribute, NULL, NULL};
    const ads_type *t;
    assert_int_equal(ads_txn_begin(&r, db, ADS_TXN_READONLY, NULL), 0);
    assert_int_equal(ads_txn_type(&t, r, "Machine", 7, NULL), 0);
    assert_int_equal(ads_db_set_hooks(db, "Machine", &h, &err), ADS_EBUSY);
    assert_string_equal(err.message,
                        "hooks cannot change while transactions are open (1 open): end them first");
    assert_int_equal(ads_txn_begin(&w, db, 0, NULL), 0);
    assert_int_equal(ads_db_set_hooks(db, "Machine", NULL, &err), ADS_EBUSY);
    assert_string_equal(err.message,
                        "hooks cannot change while transactions are open (2 open): end them first");
    assert_string_equal(ads_type_name(t), "Machine"); /* still there */
    assert_int_equal(ads_txn_commit(w, NULL), 0);
    ads_txn_abort(r);
    assert_int_equal(ads_db_set_hooks(db, "Machine", &h, &err), 0);
    assert_int_equal(ads_db_set_hooks(db, "Machine", NULL, &err), 0);
}

/* A transaction that fills the map: the store call and the commit say
 * ADS_EMAPFULL, as engine.h says (ads_db_write grows the map and retries). */
static void map__a_full_map_is_emapfull_in_an_explicit_transaction(void **state)
{
    (void)state;
    tstore small;
    memset(&small, 0, sizeof small);
    small.dir = make_temp_dir();
    snprintf(small.path, sizeof small.path, "%s/db", small.dir);
    ads_db_options o = {256 * 1024};
    ads_db *sdb;
    ads_error err;
    assert_int_equal(ads_db_open_ex(&sdb, small.path, ADS_DB_CREATE, &o, &err), 0);
    ts_declare(sdb, "Blob", "N", NULL);
    ads_txn *txn;
    ads_arena *a = ads_arena_new();
    assert_int_equal(ads_txn_begin(&txn, sdb, 0, NULL), 0);
    int rc = 0, i;
    for (i = 0; i < 100000 && rc == 0; i++) {
        ads_arena_reset(a);
        rc = ads_txn_store(txn, rec(a, "[ AdType = \"Blob\"; N = %d; S = \"%0500d\" ]", i, i),
                           NULL, &err);
    }
    assert_int_equal(rc, ADS_EMAPFULL);
    assert_string_equal(err.message, "writing: the store's map is full");
    assert_int_equal(ads_txn_commit(txn, &err), ADS_EMAPFULL);
    assert_string_equal(err.message, "the transaction failed earlier and was abandoned");
    assert_int_equal(ts_count(sdb, "Blob", false), 0);
    ads_arena_free(a);
    small.db = sdb;
    ts_close(&small);
}

/* A bulk load refuses an attribute name over the limit, as a store does. */
static void bulk__an_attribute_name_over_the_limit_fails_its_record(void **state)
{
    (void)state;
    ads_bulk *b;
    ads_error err;
    ads_arena *a = ads_arena_new();
    char name[ADS_MAX_NAME_LEN + 2];
    memset(name, 'x', ADS_MAX_NAME_LEN + 1);
    name[ADS_MAX_NAME_LEN + 1] = 0;
    assert_int_equal(ads_bulk_begin(&b, db, NULL, &err), 0);
    assert_int_equal(ads_bulk_add(b, rec(a, "[ AdType = \"Machine\"; Name = \"ok\" ]"), &err), 0);
    assert_int_equal(ads_bulk_add(b, rec(a, "[ AdType = \"Machine\"; Name = \"x\"; %s = 1 ]", name),
                                  &err),
                     0);
    assert_int_equal(ads_bulk_flush(b, &err), ADS_ELIMIT);
    assert_int_equal(ads_bulk_failed(b), 1);
    assert_non_null(strstr(err.message, "type Machine: attribute name "
                                        "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx... "
                                        "has 201 bytes, over the limit of 200"));
    ads_bulk_discard(b);
    assert_int_equal(ads_bulk_end(b, &err), 0);
    assert_int_equal(ts_count(db, "Machine", false), 0);
    ads_arena_free(a);
}

/* ---- sequences ---- */

static void sequences__named_typed_and_errors(void **state)
{
    (void)state;
    ads_error err;
    assert_int_equal(ts_store(db, &err, "{ [ AdType = \"Sequence\"; Name = \"tickets\"; ValueType = \"integer\" ],"
                                        "  [ AdType = \"Sequence\"; Name = \"refs\"; Method = \"ordered\"; ValueType = \"string\" ],"
                                        "  [ AdType = \"Sequence\"; Name = \"bad\"; Method = \"ordered\"; ValueType = \"integer\" ],"
                                        "  [ AdType = \"Sequence\"; Name = \"odd\"; Method = \"diagonal\" ] }"),
                     0);
    ads_txn *txn;
    ads_value v;
    ads_arena *a = ads_arena_new();
    assert_int_equal(ads_txn_begin(&txn, db, 0, NULL), 0);
    assert_int_equal(ads_txn_next_value(&v, txn, "tickets", 7, a, &err), 0);
    assert_int_equal(v.type, ADS_INTEGER);
    assert_int_equal(v.u.i, 1);
    assert_int_equal(ads_txn_next_value(&v, txn, "TICKETS", 7, a, &err), 0);
    assert_int_equal(v.u.i, 2);
    assert_int_equal(ads_txn_next_value(&v, txn, "refs", 4, a, &err), 0);
    assert_int_equal(v.type, ADS_STRING);
    assert_true(v.u.s.len > 20 && v.u.s.p[0] != '#');
    assert_int_equal(ads_txn_next_value(&v, txn, "random", 6, a, &err), 0);
    assert_string_equal(ads_id_kind_name(ads_id_kind_of(v.u.id)), "random");
    assert_int_equal(ads_txn_next_value(&v, txn, "ordered", 7, a, &err), 0);
    assert_string_equal(ads_id_kind_name(ads_id_kind_of(v.u.id)), "ordered");
    assert_int_equal(ads_txn_next_value(&v, txn, "type:Event", 10, a, &err), 0);
    assert_int_equal(ads_txn_next_value(&v, txn, "nope", 4, a, &err), ADS_ENOTFOUND);
    assert_string_equal(err.message, "no sequence named nope");
    assert_int_equal(ads_txn_next_value(&v, txn, "type:Machine", 12, a, &err), ADS_ENOTFOUND);
    assert_string_equal(err.message,
                        "no sequence named type:Machine: type Machine does not generate keys");
    assert_int_equal(ads_txn_next_value(&v, txn, "type:Nosuch", 11, a, &err), ADS_ENOTFOUND);
    assert_string_equal(err.message, "no sequence named type:Nosuch: no type named Nosuch (store a Type record first)");
    assert_int_equal(ads_txn_next_value(&v, txn, "bad", 3, a, &err), ADS_EINVAL);
    assert_string_equal(err.message, "sequence bad: ValueType integer needs Method increment");
    assert_int_equal(ads_txn_next_value(&v, txn, "odd", 3, a, &err), ADS_EINVAL);
    assert_string_equal(err.message,
                        "sequence odd: Method \"diagonal\" is not ordered, random or increment");
    ads_txn_abort(txn);
    /* values handed out by the aborted transaction are not handed out again */
    assert_int_equal(ads_txn_begin(&txn, db, 0, NULL), 0);
    assert_int_equal(ads_txn_next_value(&v, txn, "tickets", 7, a, &err), 0);
    assert_int_equal(v.u.i, 3);
    assert_int_equal(ads_txn_commit(txn, NULL), 0);
    /* a read transaction cannot take values */
    assert_int_equal(ads_txn_begin(&txn, db, ADS_TXN_READONLY, NULL), 0);
    assert_int_equal(ads_txn_next_value(&v, txn, "tickets", 7, a, &err), ADS_EREADONLY);
    ads_txn_abort(txn);
    ads_arena_free(a);
}

static void abort__leaves_nothing_and_ids_never_repeat(void **state)
{
    (void)state;
    ads_txn *txn;
    ads_id seen[200];
    ads_arena *a = ads_arena_new();
    ads_error err;
    /* ordered ids in an aborted transaction, then in a committed one, same second */
    assert_int_equal(ads_txn_begin(&txn, db, 0, NULL), 0);
    assert_int_equal(ads_txn_new_ids(seen, 100, NULL, txn, ADS_ID_ORDERED, &err), 0);
    assert_int_equal(ads_txn_store(txn, rec(a, "[ AdType = \"Machine\"; Name = \"gone\" ]"), NULL,
                                   &err),
                     0);
    assert_int_equal(ads_txn_store(txn, rec(a, "[ AdType = \"Event\"; What = 1 ]"), NULL, &err), 0);
    ads_txn_abort(txn);
    assert_int_equal(ts_count(db, "Machine", true), 0);
    assert_int_equal(ts_count(db, "Event", true), 0);
    assert_int_equal(ts_count(db, "Attribute", true), 0);
    assert_int_equal(ads_txn_begin(&txn, db, 0, NULL), 0);
    assert_int_equal(ads_txn_new_ids(seen + 100, 100, NULL, txn, ADS_ID_ORDERED, &err), 0);
    assert_int_equal(ads_txn_commit(txn, NULL), 0);
    for (int i = 0; i < 100; i++)
        for (int j = 100; j < 200; j++)
            assert_false(ads_id_eq(seen[i], seen[j]));
    ads_arena_free(a);
}

/* A load of records with their keys (as an import of a dump into a new
 * store is), then records with generated keys: none overwrites a loaded one. */
static void bulk__loaded_keys_are_never_generated_again(void **state)
{
    (void)state;
    ads_bulk *b;
    ads_error err;
    ads_arena *a = ads_arena_new();
    ads_bulk_options opt = {.batch = 2, .replace = true};
    ts_declare(db, "Log", "", NULL); /* increment keys */
    assert_int_equal(ads_bulk_begin(&b, db, &opt, &err), 0);
    for (int i = 1; i <= 5; i++)
        assert_int_equal(ads_bulk_add(b, rec(a, "[ AdType = \"Log\"; Id = #%d; N = %d ]", i, i),
                                      &err),
                         0);
    /* an ordered-keyed type: an id from another store, and ids of this one */
    assert_int_equal(ads_bulk_add(b, rec(a, "[ AdType = \"Event\"; Id = "
                                            "#6553f14f-0001-47bd6eaeb5dc-5; N = 1 ]"),
                                  &err),
                     0);
    assert_int_equal(ads_bulk_end(b, &err), 0);
    for (int i = 6; i <= 8; i++) {
        char text[100];
        snprintf(text, sizeof text, "[ AdType = \"Log\"; N = %d ]", i);
        if (ts_store(db, &err, text))
            fail_msg("%s: %s", text, err.message);
    }
    assert_int_equal(ts_count(db, "Log", false), 8);
    for (int i = 1; i <= 8; i++) {
        char key[32], want[32];
        snprintf(key, sizeof key, "{ #%d }", i);
        snprintf(want, sizeof want, "%d", i);
        char *got = ts_attr(db, "Log", key, "N");
        assert_string_equal(got, want);
        free(got);
    }
    ads_arena_free(a);
}

typedef struct sync_ctx {
    ads_sync *s;
    double ts;
    uint64_t deleted;
} sync_ctx;

static int sync_fn(ads_txn *txn, void *ctx, ads_error *err)
{
    sync_ctx *sc = ctx;
    return ads_sync_delete(sc->s, txn, NULL, sc->ts, &sc->deleted, err);
}

/* Load keys into Machine through two bulk loads sharing one sync. */
static void sync_load(ads_sync *s, ads_arena *a, const char *const *names, int n, int when)
{
    ads_bulk *b;
    ads_error err;
    ads_bulk_options opt = {.batch = 2, .backfill = true, .sync = s};
    for (int part = 0; part < 2; part++) {
        assert_int_equal(ads_bulk_begin(&b, db, &opt, &err), 0);
        for (int i = part; i < n; i += 2)
            if (ads_bulk_add(b, rec(a, "[ AdType = \"Machine\"; Name = \"%s\"; _Timestamp = %d ]",
                                    names[i], when),
                             &err))
                fail_msg("%s", err.message);
        assert_int_equal(ads_bulk_end(b, &err), 0);
    }
}

/* The C API of a snapshot sync: what no load of the sync stored is
 * deleted, dated as asked; deleted records and Event records stay. */
static void sync__deletes_what_no_load_stored(void **state)
{
    (void)state;
    ads_arena *a = ads_arena_new();
    ads_error err;
    assert_int_equal(ts_store(db, &err, "[ AdType = \"Event\"; N = 1 ]"), 0);
    const char *first[] = {"a", "b", "c", "d", "e"}, *second[] = {"a", "c", "e"};
    ads_sync *s;
    assert_int_equal(ads_sync_new(&s, &err), 0);
    sync_load(s, a, first, 5, 1000);
    assert_true(ads_sync_latest(s) == 1000);
    sync_ctx sc = {s, ads_sync_latest(s), 0};
    assert_int_equal(ads_db_write(db, sync_fn, &sc, &err), 0);
    assert_int_equal(sc.deleted, 0);
    ads_sync_free(s);

    assert_int_equal(ads_sync_new(&s, &err), 0);
    sync_load(s, a, second, 3, 2000);
    sc = (sync_ctx){s, ads_sync_latest(s), 0};
    assert_int_equal(ads_db_write(db, sync_fn, &sc, &err), 0);
    assert_int_equal(sc.deleted, 2);
    /* again: b and d are deleted already */
    assert_int_equal(ads_db_write(db, sync_fn, &sc, &err), 0);
    assert_int_equal(sc.deleted, 0);
    ads_sync_free(s);
    assert_int_equal(ts_count(db, "Machine", false), 3);
    assert_int_equal(ts_count(db, "Machine", true), 5);
    assert_int_equal(ts_count(db, "Event", false), 1);
    char *h = ts_history(db, "Machine", "{ \"b\" }");
    if (!strstr(h, "_Deleted = true") || !strstr(h, "1970-01-01T00:33:20"))
        fail_msg("%s", h);
    free(h);
    ads_arena_free(a);
}

/* A sync over more keys than its first table holds, some of them longer
 * than a stored key (kept whole in the row): exactly the records a load
 * lacks are deleted, the long ones too. */
static void sync__long_keys_and_many_records(void **state)
{
    (void)state;
    enum { N = 1500, LONG = 5 };
    ads_arena *a = ads_arena_new();
    ads_error err;
    static char names[N][520];
    const char *all[N], *some[N];
    int nsome = 0, want = 0, want_long = 0;
    for (int i = 0; i < N; i++) {
        if (i < LONG)
            snprintf(names[i], sizeof names[i], "%0500d-long", i);
        else
            snprintf(names[i], sizeof names[i], "slot%d@node%04d", i % 8, i);
        all[i] = names[i];
        if (i % 7 == 3) {
            want++;
            want_long += i < LONG;
        } else {
            some[nsome++] = names[i];
        }
    }
    assert_true(want_long == 1);
    ads_sync *s;
    assert_int_equal(ads_sync_new(&s, &err), 0);
    sync_load(s, a, all, N, 1000);
    ads_sync_free(s);
    assert_int_equal(ts_count(db, "Machine", false), N);

    assert_int_equal(ads_sync_new(&s, &err), 0);
    sync_load(s, a, some, nsome, 2000);
    sync_ctx sc = {s, ads_sync_latest(s), 0};
    assert_int_equal(ads_db_write(db, sync_fn, &sc, &err), 0);
    assert_int_equal(sc.deleted, (uint64_t)want);
    ads_sync_free(s);
    assert_int_equal(ts_count(db, "Machine", false), (size_t)nsome);
    assert_int_equal(ts_count(db, "Machine", true), N);
    char key[600];
    snprintf(key, sizeof key, "{ \"%s\" }", names[3]);
    char *h = ts_history(db, "Machine", key);
    if (!strstr(h, "_Deleted = true") || !strstr(h, "1970-01-01T00:33:20"))
        fail_msg("%s", h);
    free(h);
    assert_int_equal(ts_verify(db), 0);
    ads_arena_free(a);
}

/* A sync that deletes, then notes more keys and deletes again: the order it
 * made for the first deletions is made again with the new keys (the loads
 * note out of order: two loads in batches of two), so none of the records
 * stored is taken for one the snapshot lacked. */
static void sync__keys_noted_after_a_deletion_are_found(void **state)
{
    (void)state;
    ads_arena *a = ads_arena_new();
    ads_error err;
    const char *first[] = {"a", "e", "c", "g", "f"}, *then[] = {"d", "b"};
    ads_sync *s;
    assert_int_equal(ads_sync_new(&s, &err), 0);
    sync_load(s, a, first, 5, 1000);
    sync_ctx sc = {s, NAN, 0};
    assert_int_equal(ads_db_write(db, sync_fn, &sc, &err), 0);
    assert_int_equal(sc.deleted, 0);
    sync_load(s, a, then, 2, 1000);
    assert_int_equal(ads_db_write(db, sync_fn, &sc, &err), 0);
    assert_int_equal(sc.deleted, 0);
    assert_int_equal(ts_count(db, "Machine", false), 7);
    ads_sync_free(s);
    ads_arena_free(a);
}

/* Snapshot syncs against a model. Rounds of random snapshots over two
 * types whose keys are short or long (stored under their hash, their row
 * not where the key sorts), loaded shuffled or not, in batches of random
 * size by one load or two sharing the sync (the keys noted out of order,
 * sorted at the deletions), or in one batch (noted in key order, not
 * sorted): after each sync exactly the records the model holds are live,
 * those it dropped deleted, those never stored absent, and the count
 * deleted is the model's. A type absent from a snapshot is left alone.
 * Most rounds date the deletions now, where a record the sync failed to
 * find would be deleted. */
enum { SM_KEYS = 90, SM_NEVER = 0, SM_LIVE, SM_DELETED };

static uint64_t sm_rand(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

static void sm_name(char *out, size_t cap, int i)
{
    if (i % 9 == 0)
        snprintf(out, cap, "%0450d-long", i);
    else if (i % 3 == 1)
        snprintf(out, cap, "k%d", i / 3);
    else
        snprintf(out, cap, "k%d.%s", i / 3, i % 3 == 2 ? "0" : "x");
}

/* Load the records picked, dated `when` (backfill), or now (when 0). */
static void sm_load(ads_sync *s, ads_arena *a, const int *pick, int n, int when, uint64_t *x)
{
    bool one_batch = sm_rand(x) % 4 == 0;
    int loads = one_batch ? 1 : 1 + (int)(sm_rand(x) % 2), at = 0;
    for (int l = 0; l < loads; l++) {
        int end = l + 1 == loads ? n : (int)(sm_rand(x) % (uint64_t)(n + 1));
        size_t batch = one_batch ? (size_t)n + 1 : 1 + sm_rand(x) % 40;
        ads_bulk_options opt = {.batch = batch, .backfill = when != 0, .sync = s};
        ads_bulk *b;
        ads_error err;
        assert_int_equal(ads_bulk_begin(&b, db, &opt, &err), 0);
        for (; at < end; at++) {
            char name[512];
            sm_name(name, sizeof name, pick[at] % SM_KEYS);
            char at_ts[40] = "";
            if (when)
                snprintf(at_ts, sizeof at_ts, "_Timestamp = %d", when);
            if (ads_bulk_add(b, rec(a, "[ AdType = \"%s\"; Name = \"%s\"; N = %d; %s ]",
                                    pick[at] < SM_KEYS ? "Machine" : "Job", name, at, at_ts),
                             &err))
                fail_msg("%s", err.message);
            ads_arena_reset(a);
        }
        assert_int_equal(ads_bulk_end(b, &err), 0);
    }
}

static void sm_check(const unsigned char *model)
{
    for (int k = 0; k < 2 * SM_KEYS; k++) {
        char name[512], key[600];
        sm_name(name, sizeof name, k % SM_KEYS);
        snprintf(key, sizeof key, "{ \"%s\" }", name);
        char *row = ts_latest(db, k < SM_KEYS ? "Machine" : "Job", key);
        int got = !row ? SM_NEVER : strstr(row, "_Deleted = true") ? SM_DELETED : SM_LIVE;
        if (got != model[k])
            fail_msg("%s %s: state %d, the model says %d", k < SM_KEYS ? "Machine" : "Job", name,
                     got, model[k]);
        free(row);
    }
}

static void sync__matches_a_model_over_random_snapshots(void **state)
{
    (void)state;
    ts_declare(db, "Job", "Name", NULL);
    ads_arena *a = ads_arena_new();
    unsigned char model[2 * SM_KEYS] = {0};
    uint64_t x = 0x9e3779b97f4a7c15u;
    for (int round = 1; round <= 14; round++) {
        int pick[2 * SM_KEYS], n = 0;
        bool noted[2] = {false, false};
        for (int t = 0; t < 2; t++) {
            if (sm_rand(&x) % 6 == 0)
                continue; /* the type is not in this snapshot */
            for (int i = 0; i < SM_KEYS; i++)
                if (sm_rand(&x) % 10 < 7) {
                    pick[n++] = t * SM_KEYS + i;
                    noted[t] = true;
                }
        }
        if (sm_rand(&x) % 2) /* else in the order of the names' numbers, not key order */
            for (int i = n - 1; i > 0; i--) {
                int j = (int)(sm_rand(&x) % (uint64_t)(i + 1)), t = pick[i];
                pick[i] = pick[j];
                pick[j] = t;
            }
        ads_sync *s;
        ads_error err;
        assert_int_equal(ads_sync_new(&s, &err), 0);
        /* a backfill (deletions dated at the snapshot, which leaves alone
         * a record it stored even if the sync missed it) or dated now */
        bool backfill = sm_rand(&x) % 3 == 0;
        int when = (int)T0 + 1000 * round;
        ts_time(&ts, when);
        sm_load(s, a, pick, n, backfill ? when : 0, &x);
        sync_ctx sc = {s, backfill ? when : NAN, 0};
        assert_int_equal(ads_db_write(db, sync_fn, &sc, &err), 0);
        ads_sync_free(s);
        bool in[2 * SM_KEYS] = {false};
        for (int i = 0; i < n; i++)
            in[pick[i]] = true;
        uint64_t want = 0;
        for (int k = 0; k < 2 * SM_KEYS; k++) {
            if (in[k]) {
                model[k] = SM_LIVE;
            } else if (model[k] == SM_LIVE && noted[k / SM_KEYS]) {
                model[k] = SM_DELETED;
                want++;
            }
        }
        assert_int_equal(sc.deleted, want);
        sm_check(model);
    }
    assert_int_equal(ts_verify(db), 0);
    ads_arena_free(a);
}

/* ---- the order a batch is stored in ---- */

/* Load records "slot<s>@node<n>" (s 1..8, n 0..nodes-1) into store d, in
 * key order or as a collector reports them (node by node), batch records a
 * transaction. Each record's values depend only on its key. */
static void load_slots(ads_db *d, int nodes, bool key_order, size_t batch)
{
    ads_arena *a = ads_arena_new();
    ads_bulk_options opt = {.batch = batch};
    ads_bulk *b;
    ads_error err;
    assert_int_equal(ads_bulk_begin(&b, d, &opt, &err), 0);
    for (int i = 0; i < 8 * nodes; i++) {
        int slot = key_order ? i / nodes + 1 : i % 8 + 1;
        int node = key_order ? i % nodes : i / 8;
        if (ads_bulk_add(b, rec(a, "[ AdType = \"Machine\"; Name = \"Slot%d@node%04d.example.org\"; "
                                   "Cpus = %d; Memory = %d; State = \"%s\" ]",
                                slot, node, slot, node * 100, node % 3 ? "Claimed" : "Idle"),
                         &err))
            fail_msg("add: %s", err.message);
        ads_arena_reset(a);
    }
    assert_int_equal(ads_bulk_end(b, &err), 0);
    ads_arena_free(a);
}

/* Every latest Machine row of d, back to back: key, _Timestamp, the row's
 * MessagePack bytes and, with systs, __SystemTimestamp. */
static ads_buf machine_rows(ads_db *d, bool systs)
{
    ads_buf out = ADS_BUF_INIT;
    ads_txn *txn;
    ads_scan *s;
    ads_row *r;
    const ads_type *t;
    assert_int_equal(ads_txn_begin(&txn, d, ADS_TXN_READONLY, NULL), 0);
    assert_int_equal(ads_txn_type(&t, txn, "Machine", 7, NULL), 0);
    assert_int_equal(ads_scan_open(&s, txn, t, NULL, 0, NULL), 0);
    while (ads_scan_next(&r, s, NULL) == 1) {
        ads_buf_add(&out, &r->key_len, sizeof r->key_len);
        ads_buf_add(&out, r->key, r->key_len);
        ads_buf_add(&out, &r->ts, sizeof r->ts);
        if (systs)
            ads_buf_add(&out, &r->systime_us, sizeof r->systime_us);
        ads_buf_add(&out, &r->len, sizeof r->len);
        ads_buf_add(&out, r->data, r->len);
    }
    ads_scan_close(s);
    ads_txn_abort(txn);
    assert_false(out.failed);
    return out;
}

static void bulk__a_load_out_of_key_order_stores_the_rows_of_an_ordered_one(void **state)
{
    (void)state;
    /* one batch: the same rows, __SystemTimestamp included (a batch is
     * stored in key order); batches of 64: the same records and rows (the
     * order of writes across batches shows only in __SystemTimestamp) */
    static const struct {
        int nodes;
        size_t batch;
        bool systs;
    } runs[] = {{50, 1000, true}, {100, 64, false}};
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
        tstore st[2];
        ads_buf rows[2];
        for (int k = 0; k < 2; k++) {
            ads_db *d = ts_open(&st[k], T0);
            ts_declare(d, "Machine", "Name", NULL);
            load_slots(d, runs[i].nodes, k == 0, runs[i].batch);
            assert_int_equal(ts_count(d, "Machine", false), 8 * (size_t)runs[i].nodes);
            assert_int_equal(ts_verify(d), 0);
            rows[k] = machine_rows(d, runs[i].systs);
        }
        assert_int_equal(rows[0].len, rows[1].len);
        assert_memory_equal(rows[0].p, rows[1].p, rows[0].len);
        for (int k = 0; k < 2; k++) {
            ads_buf_free(&rows[k]);
            ts_close(&st[k]);
        }
    }
}

static uint64_t machine_history(ads_db *d)
{
    ads_txn *txn;
    const ads_type *t;
    ads_type_counts tc;
    assert_int_equal(ads_txn_begin(&txn, d, ADS_TXN_READONLY, NULL), 0);
    assert_int_equal(ads_txn_type(&t, txn, "Machine", 7, NULL), 0);
    assert_int_equal(ads_txn_type_counts(&tc, txn, t, NULL), 0);
    ads_txn_abort(txn);
    return tc.history;
}

/* One round of a test that stores the same records into two stores: store
 * 0 by a bulk load in batches of `batch`, store 1 one ads_txn_store at a
 * time in one transaction. */
typedef struct two_way {
    int k;
    ads_bulk *b;
    ads_txn *txn;
} two_way;

static two_way two_way_begin(ads_db *d, int k, size_t batch)
{
    two_way w = {k, NULL, NULL};
    ads_bulk_options opt = {.batch = batch};
    ads_error err;
    if (k == 0)
        assert_int_equal(ads_bulk_begin(&w.b, d, &opt, &err), 0);
    else
        assert_int_equal(ads_txn_begin(&w.txn, d, 0, NULL), 0);
    return w;
}

static void two_way_add(two_way *w, const ads_record *x, int round, int i)
{
    ads_error err;
    if (w->k == 0 ? ads_bulk_add(w->b, x, &err) : ads_txn_store(w->txn, x, NULL, &err))
        fail_msg("round %d, record %d: %s", round, i, err.message);
}

static void two_way_end(two_way *w)
{
    ads_error err;
    if (w->k == 0)
        assert_int_equal(ads_bulk_end(w->b, &err), 0);
    else
        assert_int_equal(ads_txn_commit(w->txn, NULL), 0);
}

/* The two stores of a two-way test, new, Machine keyed by Name. */
static void two_stores(tstore st[2], ads_db *d[2])
{
    for (int k = 0; k < 2; k++) {
        d[k] = ts_open(&st[k], T0);
        ts_declare(d[k], "Machine", "Name", NULL);
    }
}

/* Both stores of a two-way test hold `records` Machine records and verify,
 * with the same rows in effect and the same history, of more than
 * min_history rows. */
static void two_way_same(ads_db *d[2], size_t records, uint64_t min_history)
{
    ads_buf rows[2];
    for (int k = 0; k < 2; k++) {
        assert_int_equal(ts_count(d[k], "Machine", false), records);
        assert_int_equal(ts_verify(d[k]), 0);
        rows[k] = machine_rows(d[k], false);
    }
    assert_int_equal(machine_history(d[0]), machine_history(d[1]));
    assert_true(machine_history(d[0]) > min_history);
    assert_int_equal(rows[0].len, rows[1].len);
    assert_memory_equal(rows[0].p, rows[1].p, rows[0].len);
    for (int k = 0; k < 2; k++)
        ads_buf_free(&rows[k]);
}

/* A sorted batch looks its records up through one cursor on `latest`
 * (engine/bulk.c, ads_store__find_at) while the batch's own writes insert
 * and grow rows under it, splitting pages. Rounds of shuffled batches that
 * update, leave unchanged, grow and add records leave the rows that the
 * same records stored one at a time leave. */
static void bulk__sorted_batches_of_updates_store_what_single_stores_do(void **state)
{
    (void)state;
    enum { BASE = 1200, ROUNDS = 4 };
    static char pad[400];
    memset(pad, 'p', sizeof pad - 1);
    tstore st[2];
    ads_db *d[2];
    ads_arena *a = ads_arena_new();
    two_stores(st, d);
    for (int r = 0; r < ROUNDS; r++) {
        int n = BASE + 150 * r;
        for (int k = 0; k < 2; k++) {
            ts_time(&st[k], T0 + 60.0 * r);
            two_way w = two_way_begin(d[k], k, 500);
            for (int j = 0; j < n; j++) {
                int i = (int)(((unsigned)j * 7919u) % (unsigned)n); /* a fixed shuffle */
                int v = i % 3 == 0 ? 0 : r; /* a third stay unchanged */
                int plen = i % 5 == 0 ? 30 * r + i % 50 : 10;
                const ads_record *x =
                    rec(a, "[ AdType = \"Machine\"; Name = \"node%05d\"; V = %d; Pad = \"%.*s\" ]",
                        i, v, plen, pad);
                two_way_add(&w, x, r, i);
                ads_arena_reset(a);
            }
            two_way_end(&w);
        }
    }
    two_way_same(d, BASE + 150 * (ROUNDS - 1), 0);
    for (int k = 0; k < 2; k++)
        ts_close(&st[k]);
    ads_arena_free(a);
}

static int snapshot_deletions(void *ctx, ads_txn *txn, const ads_bulk_batch *b, ads_error *err)
{
    (void)b;
    sync_ctx *sc = ctx;
    return ads_sync_delete(sc->s, txn, NULL, sc->ts, &sc->deleted, err);
}

/* The batch cursor under deletions: snapshots synced every minute under a
 * 3 minute retention, so that the batch's own writes purge records deleted
 * before the cut (the sweep) and the sync deletes in the batch's
 * transaction, while the batch looks its sorted records up through one
 * cursor. Every round, the store holds the records the model says are
 * present; at the end each has its last value and verify is clean. */
static void bulk__snapshot_syncs_under_a_retention_through_the_batch_cursor(void **state)
{
    (void)state;
    enum { N = 800, ROUNDS = 40 };
    static bool present[N];
    static int val[N], gone[N]; /* the round a record vanished in */
    tstore st;
    ads_db *d = ts_open(&st, T0);
    ts_declare(d, "Machine", "Name", "HistoryRetention = relTime(180)");
    ads_arena *a = ads_arena_new();
    ads_error err;
    for (int r = 0; r < ROUNDS; r++) {
        double when = T0 + 60.0 * r;
        ts_time(&st, when);
        size_t live = 0;
        for (int i = 0; i < N; i++) {
            unsigned h = ((unsigned)i * 2654435761u) ^ ((unsigned)r * 40503u);
            h ^= h >> 13;
            if (r == 0) {
                present[i] = h % 5 != 0;
                gone[i] = -1; /* never stored, or stored again since */
            } else if (!present[i] && h % 10 < 3) {
                present[i] = true;
                gone[i] = -1;
            } else if (present[i] && h % 10 == 0) {
                present[i] = false;
                gone[i] = r;
            }
            if (present[i] && (r == 0 || h % 4 == 0))
                val[i] = r;
            live += present[i];
        }
        ads_sync *s;
        assert_int_equal(ads_sync_new(&s, &err), 0);
        sync_ctx sc = {s, when, 0};
        ads_bulk_options opt = {.batch = N + 1, .backfill = true, .sync = s,
                                .on_batch = snapshot_deletions, .ctx = &sc};
        ads_bulk *b;
        assert_int_equal(ads_bulk_begin(&b, d, &opt, &err), 0);
        for (int j = 0; j < N; j++) {
            int i = (int)(((unsigned)j * 7919u) % N);
            if (present[i] &&
                ads_bulk_add(b, rec(a, "[ AdType = \"Machine\"; Name = \"n%04d\"; V = %d; "
                                       "_Timestamp = %.0f ]",
                                    i, val[i], when),
                             &err))
                fail_msg("round %d: %s", r, err.message);
            ads_arena_reset(a);
        }
        if (ads_bulk_end(b, &err))
            fail_msg("round %d: %s", r, err.message);
        ads_sync_free(s);
        if (ts_count(d, "Machine", false) != live)
            fail_msg("round %d: %zu records, %zu present", r, ts_count(d, "Machine", false), live);
    }
    for (int i = 0; i < N; i++) {
        if (!present[i])
            continue;
        char key[32], want[16];
        snprintf(key, sizeof key, "{ \"n%04d\" }", i);
        snprintf(want, sizeof want, "%d", val[i]);
        char *got = ts_attr(d, "Machine", key, "V");
        if (!got || strcmp(got, want) != 0)
            fail_msg("n%04d: V = %s, want %s", i, got ? got : "(none)", want);
        free(got);
    }
    /* the sweep purged the records deleted well before the cut (3 rounds
     * back), under the cursor; those deleted since may stay */
    size_t recent = 0, old = 0;
    for (int i = 0; i < N; i++)
        if (!present[i] && gone[i] >= 0)
            *(gone[i] >= ROUNDS - 6 ? &recent : &old) += 1;
    size_t kept_deleted = ts_count(d, "Machine", true) - ts_count(d, "Machine", false);
    if (old == 0 || kept_deleted > recent)
        fail_msg("%zu deleted records kept, %zu deleted in the last 6 rounds, %zu before",
                 kept_deleted, recent, old);
    assert_int_equal(ts_verify(d), 0);
    ts_close(&st);
    ads_arena_free(a);
}

/* A backfilled batch whose dates cannot date an identifier fails before it
 * stores anything (the batch's early error path, which once closed a
 * cursor it had not opened), and the store takes the next load. */
static void backfill__a_date_before_1970_fails_the_batch_and_stores_nothing(void **state)
{
    (void)state;
    ads_arena *a = ads_arena_new();
    ads_error err;
    static const char *const dates[] = {"-1", "1e12"};
    for (size_t k = 0; k < 2; k++) {
        ads_bulk_options opt = {.batch = 10, .backfill = true};
        ads_bulk *b;
        assert_int_equal(ads_bulk_begin(&b, db, &opt, &err), 0);
        for (int i = 0; i < 3; i++) {
            assert_int_equal(ads_bulk_add(b, rec(a, "[ AdType = \"Machine\"; Name = \"b%d\"; "
                                                    "_Timestamp = %s ]",
                                                 i, i == 1 ? dates[k] : "1700000000"),
                                          &err),
                             0);
            ads_arena_reset(a);
        }
        int rc = ads_bulk_end(b, &err);
        assert_int_equal(rc, ADS_ERANGE);
        assert_non_null(strstr(err.message, "backfill"));
        assert_int_equal(ts_count(db, "Machine", true), 0);
    }
    ads_bulk_options opt = {.batch = 10, .backfill = true};
    ads_bulk *b;
    assert_int_equal(ads_bulk_begin(&b, db, &opt, &err), 0);
    assert_int_equal(
        ads_bulk_add(b, rec(a, "[ AdType = \"Machine\"; Name = \"ok\"; _Timestamp = 1700000000 ]"),
                     &err),
        0);
    assert_int_equal(ads_bulk_end(b, &err), 0);
    assert_int_equal(ts_count(db, "Machine", false), 1);
    ads_arena_free(a);
}

static void bulk__records_with_one_key_keep_their_order_in_a_batch(void **state)
{
    (void)state;
    ads_arena *a = ads_arena_new();
    ads_bulk_options opt = {.batch = 100};
    ads_bulk *b;
    ads_error err;
    assert_int_equal(ads_bulk_begin(&b, db, &opt, &err), 0);
    static const char *const input[] = {
        "[ AdType = \"Machine\"; Name = \"z\"; X = 1 ]", "[ AdType = \"Machine\"; Name = \"b\"; X = 1 ]",
        "[ AdType = \"Machine\"; Name = \"Z\"; X = 2; Y = 1 ]",
        "[ AdType = \"Machine\"; Name = \"a\"; X = 1 ]", "[ AdType = \"Machine\"; Name = \"z\"; X = 3 ]",
        "[ AdType = \"Machine\"; Name = \"b\"; X = undefined ]"};
    for (size_t i = 0; i < sizeof input / sizeof input[0]; i++)
        assert_int_equal(ads_bulk_add(b, rec(a, "%s", input[i]), &err), 0);
    assert_int_equal(ads_bulk_end(b, &err), 0);
    /* the last of each key's records is latest, laid over the ones before */
    char *v = ts_latest(db, "Machine", "{ \"z\" }");
    if (!strstr(v, "X = 3") || !strstr(v, "Y = 1") || !strstr(v, "Name = \"z\""))
        fail_msg("%s", v);
    free(v);
    v = ts_latest(db, "Machine", "{ \"b\" }");
    if (strstr(v, "X =") || !strstr(v, "Name = \"b\""))
        fail_msg("%s", v);
    free(v);
    v = ts_history(db, "Machine", "{ \"z\" }");
    const char *one = strstr(v, "X = 1"), *two = strstr(v, "X = 2"), *three = strstr(v, "X = 3");
    if (!one || !two || !three || !(one < two && two < three))
        fail_msg("%s", v);
    free(v);
    ads_arena_free(a);
}

static void bulk__a_failing_batch_reports_its_first_bad_record_in_input_order(void **state)
{
    (void)state;
    ads_arena *a = ads_arena_new();
    ads_bulk_options opt = {.batch = 10};
    ads_bulk *b;
    ads_error err;
    assert_int_equal(ads_bulk_begin(&b, db, &opt, &err), 0);
    int rc = 0;
    for (int i = 0; i < 10 && !rc; i++) {
        /* bad dates at records 4 (key "y3") and 8 (key "a7", first in key order) */
        char name[8];
        snprintf(name, sizeof name, "%c%d", i == 7 ? 'a' : 'y' - (i == 3 ? 0 : 1), i);
        rc = ads_bulk_add(b, rec(a, "[ AdType = \"Machine\"; Name = \"%s\"; _Timestamp = %s ]",
                                 name, i == 3 || i == 7 ? "\"soon\"" : "1700000000"),
                          &err);
    }
    assert_int_equal(rc, ADS_EINVAL);
    assert_string_equal(err.message,
                        "record 4: type Machine: _Timestamp must be an AbsTime, seconds since "
                        "1970 or ISO 8601 text; \"soon\" is not a time");
    assert_int_equal(ads_bulk_failed(b), 3);
    assert_int_equal(ads_bulk_drop_failed(b, &err), 0);
    assert_int_equal(ads_bulk_flush(b, &err), ADS_EINVAL);
    assert_int_equal(ads_bulk_failed(b), 7);
    assert_int_equal(ads_bulk_drop_failed(b, &err), 0);
    assert_int_equal(ads_bulk_end(b, &err), 0);
    assert_int_equal(ts_count(db, "Machine", false), 8);
    ads_arena_free(a);
}

/* ---- rows of known shapes (engine/names.c, "Shapes") ---- */

/* The i-th record of load_shapes: a few shapes of names cycling, among them
 * two with as many names but one differently spelled, names of 7, 8, 31 and
 * 32 bytes (a key of 8 and 9 bytes, the longest fixstr and a str8), a name
 * that sorts last with a one-byte value (fewer than 8 bytes after its key),
 * and a shape whose rows hold an undefined value every other time (the
 * attribute is removed). pass 1 changes Memory
 * (updates merge with the row in effect). */
static const ads_record *shape_rec(ads_arena *a, int i, int pass)
{
    static const char *const shapes[] = {
        "",
        "Gpus = 1;",
        "Rank = %d; Slots = 2;",
        "Rank = %d; LoadAvg = 0.5;",
        "Activity = \"Idle\"; A234567890123456789012345678901 = %d;",
        "A2345678901234567890123456789012 = %d; LoadAvg = 1.5;",
        "Zz = 1;",
        "Gone = %s; Rank = %d;",
    };
    char extra[200];
    if (i % 8 == 7) /* one shape, undefined in half of its rows */
        snprintf(extra, sizeof extra, shapes[7], i % 16 == 7 ? "undefined" : "1", i);
    else
        snprintf(extra, sizeof extra, shapes[i % 8], i);
    return rec(a, "[ AdType = \"Machine\"; Name = \"node%05d\"; %s = %d; Arch = \"X86_64\"; %s ]",
               i, i % 16 == 3 ? "memory" : "Memory", i * 10 + pass, extra);
}

/* Store n records of shape_rec in key order into d, pass 0 then the first
 * n / 2 again in pass 1: through the bulk API (batches of 50: the memo of
 * shapes serves every batch after the first), or all in one transaction
 * (its names have no published ids: the memo never serves it). */
static void load_shapes(ads_db *d, int n, bool bulk)
{
    ads_arena *a = ads_arena_new();
    ads_bulk_options opt = {.batch = 50};
    ads_bulk *b = NULL;
    ads_txn *txn = NULL;
    ads_error err;
    if (bulk)
        assert_int_equal(ads_bulk_begin(&b, d, &opt, &err), 0);
    else
        assert_int_equal(ads_txn_begin(&txn, d, 0, NULL), 0);
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < (pass ? n / 2 : n); i++) {
            const ads_record *x = shape_rec(a, i, pass);
            if (bulk ? ads_bulk_add(b, x, &err) : ads_txn_store(txn, x, NULL, &err))
                fail_msg("pass %d, record %d: %s", pass, i, err.message);
            ads_arena_reset(a);
        }
    if (bulk)
        assert_int_equal(ads_bulk_end(b, &err), 0);
    else
        assert_int_equal(ads_txn_commit(txn, NULL), 0);
    ads_arena_free(a);
}

/* Rows whose names a recent row had are written with the ids remembered,
 * without looking a name up or over: the bytes stored are those of rows
 * written the long way, and every record reads back as given. */
static void bulk__rows_of_known_shapes_store_what_the_long_way_stores(void **state)
{
    (void)state;
    enum { N = 400 };
    tstore st[2];
    ads_db *d[2];
    ads_buf rows[2];
    for (int k = 0; k < 2; k++) {
        d[k] = ts_open(&st[k], T0);
        ts_declare(d[k], "Machine", "Name", NULL);
        load_shapes(d[k], N, k == 0);
        assert_int_equal(ts_count(d[k], "Machine", false), N);
        assert_int_equal(ts_verify(d[k]), 0);
        rows[k] = machine_rows(d[k], false);
    }
    assert_int_equal(rows[0].len, rows[1].len);
    assert_memory_equal(rows[0].p, rows[1].p, rows[0].len);
    assert_int_equal(machine_history(d[0]), N / 2);
    assert_int_equal(machine_history(d[1]), N / 2);
    /* a record of each shape, read back */
    static const char *const want[] = {
        "[ AdType = \"Machine\"; Arch = \"X86_64\"; Memory = 1601; Name = \"node00160\" ]",
        "[ AdType = \"Machine\"; Arch = \"X86_64\"; Gpus = 1; Memory = 1611; Name = \"node00161\" ]",
        "[ AdType = \"Machine\"; Arch = \"X86_64\"; Memory = 111; Name = \"node00011\"; "
        "Rank = 11; LoadAvg = 0.5 ]",
        "[ AdType = \"Machine\"; Arch = \"X86_64\"; memory = 191; Name = \"node00019\"; Rank = 19; "
        "LoadAvg = 0.5 ]",
        "[ Activity = \"Idle\"; A234567890123456789012345678901 = 364; AdType = \"Machine\"; "
        "Arch = \"X86_64\"; Memory = 3640; Name = \"node00364\" ]",
        "[ A2345678901234567890123456789012 = 5; AdType = \"Machine\"; Arch = \"X86_64\"; "
        "LoadAvg = 1.5; Memory = 51; Name = \"node00005\" ]",
        "[ AdType = \"Machine\"; Arch = \"X86_64\"; Memory = 3980; Name = \"node00398\"; Zz = 1 ]",
        "[ AdType = \"Machine\"; Arch = \"X86_64\"; Memory = 71; Name = \"node00007\"; Rank = 7 ]",
    };
    static const char *const keys[] = {"{ \"node00160\" }", "{ \"node00161\" }",
                                       "{ \"node00011\" }", "{ \"node00019\" }",
                                       "{ \"node00364\" }", "{ \"node00005\" }",
                                       "{ \"node00398\" }", "{ \"node00007\" }"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        char *got = ts_latest(d[0], "Machine", keys[i]);
        assert_non_null(got);
        ads_arena *a = ads_arena_new();
        const ads_record *g = rec(a, "%s", got), *w = rec(a, "%s", want[i]);
        /* the timeline attributes aside */
        ads_buf gb = ADS_BUF_INIT, wb = ADS_BUF_INIT;
        ads_record_builder *rb;
        assert_int_equal(ads_record_builder_new(&rb, a, NULL), 0);
        for (size_t j = 0; j < ads_record_size(g); j++) {
            ads_str nm = ads_record_name(g, j);
            if (nm.p[0] != '_')
                assert_int_equal(ads_record_builder_add(rb, nm.p, nm.len, ads_record_expr(g, j),
                                                        NULL),
                                 0);
        }
        assert_int_equal(ads_msgpack_encode_record(&gb, ads_record_builder_finish(rb), NULL), 0);
        assert_int_equal(ads_msgpack_encode_record(&wb, w, NULL), 0);
        if (gb.len != wb.len || memcmp(gb.p, wb.p, gb.len) != 0)
            fail_msg("%s: got %s", keys[i], got);
        ads_buf_free(&gb);
        ads_buf_free(&wb);
        ads_arena_free(a);
        free(got);
    }
    for (int k = 0; k < 2; k++) {
        ads_buf_free(&rows[k]);
        ts_close(&st[k]);
    }
}

/* A batch that fails drops the ids it gave new names, and the next batch
 * gives them out again to other names: no remembered shape may name a row
 * with those ids as the dropped names. */
static void bulk__ids_of_a_failed_batch_serve_no_remembered_shape(void **state)
{
    (void)state;
    ads_arena *a = ads_arena_new();
    ads_error err;
    for (int round = 0; round < 3; round++) {
        ads_bulk_options opt = {.batch = 20};
        ads_bulk *b;
        assert_int_equal(ads_bulk_begin(&b, db, &opt, &err), 0);
        int rc = 0;
        for (int i = 0; i < 20 && !rc; i++)
            rc = ads_bulk_add(b, rec(a, "[ AdType = \"Machine\"; Name = \"r%d-%02d\"; Dropped%d = %d; %s ]",
                                     round, i, round, i, i == 19 ? "__Bad = 1" : "Kept = 1"),
                              &err);
        assert_int_equal(rc, ADS_EINVAL);
        ads_bulk_discard(b);
        rc = 0;
        for (int i = 0; i < 40 && !rc; i++)
            rc = ads_bulk_add(b, rec(a, "[ AdType = \"Machine\"; Name = \"r%d-%02d\"; Taken%d = %d; Kept = 1 ]",
                                     round, i, round, i),
                              &err);
        assert_int_equal(rc, 0);
        assert_int_equal(ads_bulk_end(b, &err), 0);
        ads_arena_reset(a);
    }
    for (int round = 0; round < 3; round++)
        for (int i = 0; i < 40; i += 13) {
            char key[40], want[120];
            snprintf(key, sizeof key, "{ \"r%d-%02d\" }", round, i);
            char *got = ts_latest(db, "Machine", key);
            assert_non_null(got);
            snprintf(want, sizeof want, "Taken%d = %d;", round, i);
            if (!strstr(got, want) || strstr(got, "Dropped"))
                fail_msg("%s: %s", key, got);
            free(got);
        }
    assert_int_equal(ts_count(db, "Machine", false), 120);
    ads_arena_free(a);
}

/* ---- appends through one cursor (store.c, append_row) ---- */

/* The keys of round r of bulk__appends_..., in input order, into keys
 * (returns how many): r 0, new records in key order; r 1, every third key
 * of 0..299, each twice in a row, partly below the table's last key
 * (existing records and new ones between them) and partly past it; r 2,
 * keys past the end, each twice; r 3, the same span as r 1 shuffled, with
 * new keys past the end among them. */
static int append_keys(int r, int *keys)
{
    int n = 0;
    switch (r) {
    case 0:
        for (int k = 100; k < 200; k += 2)
            keys[n++] = k;
        break;
    case 1:
        for (int k = 0; k < 300; k += 3) {
            keys[n++] = k;
            keys[n++] = k;
        }
        break;
    case 2:
        for (int k = 300; k < 360; k++) {
            keys[n++] = k;
            keys[n++] = k;
        }
        break;
    default:
        for (int j = 0; j < 420; j++)
            keys[n++] = (int)(((unsigned)j * 7919u) % 420u);
        break;
    }
    return n;
}

/* Batches whose appends to `latest` go through one cursor, with other
 * writes between them (updates moving rows to history, a key repeated in
 * the batch, new attribute names taking ids and Attribute records mid
 * batch, records below the table's last key), store the rows that the same
 * records stored one at a time store. */
static void bulk__appends_between_other_writes_store_what_single_stores_do(void **state)
{
    (void)state;
    static int keys[1000];
    tstore st[2];
    ads_db *d[2];
    ads_arena *a = ads_arena_new();
    two_stores(st, d);
    for (int r = 0; r < 4; r++) {
        int n = append_keys(r, keys);
        for (int k = 0; k < 2; k++) {
            ts_time(&st[k], T0 + 60.0 * r);
            two_way w = two_way_begin(d[k], k, 64);
            for (int j = 0; j < n; j++) {
                int i = keys[j];
                /* a new attribute name every 50 keys, met mid batch (not in
                 * the shuffled round: ids go to names in the order they are
                 * met, which sorting a batch changes) */
                const ads_record *x =
                    rec(a, "[ AdType = \"Machine\"; Name = \"node%05d\"; V = %d; W = %d; "
                           "New%d_%d = 1 ]",
                        i, r * 1000 + j, i, r < 3 ? r : 1, r < 3 ? i / 50 : i / 50 % 6);
                two_way_add(&w, x, r, i);
                ads_arena_reset(a);
            }
            two_way_end(&w);
        }
    }
    two_way_same(d, 420, 300);
    char *v = ts_attr(d[0], "Machine", "{ \"node00359\" }", "V");
    assert_string_equal(v, "3001"); /* round 3 stored it second (j = 1) */
    free(v);
    for (int k = 0; k < 2; k++)
        ts_close(&st[k]);
    ads_arena_free(a);
}

/* ads_bulk_add_values stores what ads_bulk_add stores for the record its
 * arrays make: the same rows (compared as the history reads back), a
 * backfill dated by a _Timestamp spelled in any case, and a record refused
 * whole (two names equal ignoring case) without anything queued. */
static void bulk__values_in_arrays_store_what_the_record_stores(void **state)
{
    (void)state;
    ts_declare(db, "Pair", "Name", NULL);
    ads_arena *a = ads_arena_new();
    ads_bulk_options opt = {.batch = 7, .backfill = true};
    ads_bulk *b[2];
    ads_error err;
    static const char *const types[2] = {"Machine", "Pair"};
    for (int w = 0; w < 2; w++)
        assert_int_equal(ads_bulk_begin(&b[w], db, &opt, &err), 0);
    for (int i = 0; i < 40; i++) {
        char name[16];
        snprintf(name, sizeof name, "m%d", i % 9);
        ads_value list_items[2] = {ads_int(i), ads_string("x", 1)};
        ads_value v[7] = {ads_string(NULL, 0), ads_string(name, strlen(name)),
                          ads_int(i * 1000), ads_real(i / 4.0),
                          ads_bool(i % 2),   ads_abstime(1600000000.0 + 60 * i, 3600),
                          ads_list(list_items, 2)};
        ads_str n[7] = {{"AdType", 6}, {"Name", 4},           {"Memory", 6}, {"LoadAvg", 7},
                        {"busy", 4},   {"_timestamp", 10}, {"Slots", 5}};
        for (int w = 0; w < 2; w++) {
            v[0] = ads_string(types[w], strlen(types[w]));
            if (w == 0) {
                if (ads_bulk_add_values(b[w], n, v, 7, &err))
                    fail_msg("add values %d: %s", i, err.message);
                continue;
            }
            /* the same record built, its attributes in another order */
            ads_record_builder *rb;
            assert_int_equal(ads_record_builder_new(&rb, a, &err), 0);
            for (int k = 6; k >= 0; k--)
                assert_int_equal(ads_record_builder_add_value(rb, n[k].p, n[k].len, &v[k], &err),
                                 0);
            if (ads_bulk_add(b[w], ads_record_builder_finish(rb), &err))
                fail_msg("add record %d: %s", i, err.message);
        }
    }
    /* two names equal ignoring case: refused, nothing queued */
    size_t pending = ads_bulk_pending(b[0]);
    ads_value dv[4] = {ads_string("Machine", 7), ads_string("d", 1), ads_int(1),
                       ads_abstime(1600000000.0, 0)};
    ads_str dn[4] = {{"AdType", 6}, {"Name", 4}, {"NAME", 4}, {"_Timestamp", 10}};
    assert_int_equal(ads_bulk_add_values(b[0], dn, dv, 4, &err), ADS_EINVAL);
    if (!strstr(err.message, "two attributes named"))
        fail_msg("%s", err.message);
    assert_int_equal(ads_bulk_pending(b[0]), pending);
    for (int w = 0; w < 2; w++)
        assert_int_equal(ads_bulk_end(b[w], &err), 0);
    for (int i = 0; i < 9; i++) {
        char key[32];
        snprintf(key, sizeof key, "{ \"m%d\" }", i);
        char *x = ts_history(db, "Machine", key), *y = ts_history(db, "Pair", key);
        /* the same rows, but for AdType */
        ads_buf xs = ADS_BUF_INIT;
        for (const char *p = x; *p;) {
            const char *m = strstr(p, "AdType = \"Machine\"");
            size_t upto = m ? (size_t)(m - p) : strlen(p);
            ads_buf_add(&xs, p, upto);
            if (!m)
                break;
            ads_buf_adds(&xs, "AdType = \"Pair\"");
            p = m + strlen("AdType = \"Machine\"");
        }
        assert_non_null(strstr(y, "_Timestamp = `2020-09-13T"));
        assert_string_equal(ads_buf_cstr(&xs), y);
        ads_buf_free(&xs);
        free(x);
        free(y);
    }
    ads_arena_free(a);
}

/* ---- rows keyed by ids from the encoder (bulk.c, learn_ids) ---- */

/* Record i of round r for bulk__rows_keyed_by_ids_...: one of nine shapes,
 * with the timeline attributes given (dated now, later or earlier than the
 * row in effect), deleted, undefined values, expressions, nested values,
 * names spelled two ways, and values that repeat across rounds (unchanged
 * records). */
static const ads_record *ids_rec(ads_arena *a, int i, int r, int shape)
{
    int m = i * 10 + r / 2; /* the same two rounds running */
    const char *base = "AdType = \"Machine\"; Name = \"n%03d\"; Memory = %d; Arch = \"X86_64\"";
    char head[200];
    snprintf(head, sizeof head, base, i, m);
    switch (shape) {
    case 0:
        return rec(a, "[ %s ]", head);
    case 1:
        return rec(a, "[ %s; _Timestamp = %d ]", head, (int)T0 + 100 * r - 150 * (i % 3));
    case 2:
        return rec(a, "[ %s; _Deleted = %s ]", head, (i + r) % 5 == 0 ? "true" : "false");
    case 3:
        return rec(a, "[ %s; Gone = %s ]", head, (i + r) % 2 ? "undefined" : "1");
    case 4:
        return rec(a, "[ %s; Twice = Memory * 2; Nest = [ a = %d; b = { 1, \"x\" } ]; "
                      "When = absTime(\"2024-01-01T00:00:00Z\") ]",
                   head, r % 2);
    case 5:
        return rec(a, "[ %s; gpus = %d; LoadAvg = %g ]", head, i % 4, (i % 3) / 4.0);
    case 6:
        return rec(a, "[ %s; Gpus = %d; LoadAvg = %g ]", head, i % 4, (i % 3) / 4.0);
    case 7:
        return rec(a, "[ %s; _timestamp = %d; _deleted = false; Slots = { %d } ]", head,
                   (int)T0 + 100 * r, r);
    default:
        return rec(a, "[ %s; A234567890123456789012345678901234567890 = %d ]", head, r);
    }
}

/* order[0..n) the numbers 0..n-1 shuffled by the xorshift state *x. */
static void shuffled(int *order, int n, uint32_t *x)
{
    for (int i = 0; i < n; i++)
        order[i] = i;
    for (int i = n - 1; i > 0; i--) {
        *x ^= *x << 13, *x ^= *x >> 17, *x ^= *x << 5;
        int j = (int)(*x % (uint32_t)(i + 1)), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
}

/* The two stores of an ids test hold the same records after round r
 * (Machine n000..n<n-1> and Events): rows in effect, history and the
 * attributes noted for each type (the stores gave names their ids in other
 * orders, so their bytes differ). */
static void same_records(ads_db *d[2], int r, int n)
{
    for (int k = 0; k < 2; k++)
        assert_int_equal(ts_verify(d[k]), 0);
    assert_int_equal(ts_count(d[0], "Machine", false), ts_count(d[1], "Machine", false));
    assert_int_equal(ts_count(d[0], "Machine", true), ts_count(d[1], "Machine", true));
    assert_int_equal(ts_count(d[0], "Event", false), ts_count(d[1], "Event", false));
    assert_int_equal(ts_count(d[0], "Attribute", false), ts_count(d[1], "Attribute", false));
    assert_int_equal(machine_history(d[0]), machine_history(d[1]));
    for (int i = 0; i < n; i++) {
        char key[32];
        snprintf(key, sizeof key, "{ \"n%03d\" }", i);
        char *h0 = ts_history(d[0], "Machine", key), *h1 = ts_history(d[1], "Machine", key);
        if (strcmp(h0, h1) != 0)
            fail_msg("round %d, %s:\n%s\nagainst\n%s", r, key, h0, h1);
        free(h0);
        free(h1);
    }
}

/* A load's later batches, and the loads after it through the same handle,
 * encode the records of shapes the store has ids for keyed by those ids,
 * and their writes take them as they are (no name is compared or looked
 * up, the row is not written again): rounds of every kind of record store
 * the rows that the same records stored one at a time store. */
static void bulk__rows_keyed_by_ids_store_what_single_stores_do(void **state)
{
    (void)state;
    enum { N = 150, ROUNDS = 7 };
    static const size_t batches[ROUNDS] = {40, 1, 7, 500, 13, 2, 64};
    tstore st[2];
    ads_db *d[2];
    ads_arena *a = ads_arena_new();
    two_stores(st, d);
    for (int k = 0; k < 2; k++) /* its keys are generated: the rows after one are */
        ts_declare(d[k], "Event", "", "AutoGenerateKey = true;"); /* typed at their write */
    uint32_t x = 2463534242u;
    for (int r = 0; r < ROUNDS; r++) {
        int order[N];
        shuffled(order, N, &x);
        for (int k = 0; k < 2; k++) {
            two_way w = two_way_begin(d[k], k, batches[r]);
            for (int j = 0; j < N; j++) {
                int i = order[j];
                /* most keys keep a shape for a few rounds; some change */
                int shape = (i + (i % 4 == 0 ? r : r / 3)) % 9;
                two_way_add(&w, ids_rec(a, i, r, shape), r, i);
                if (i % 11 == 3)
                    two_way_add(&w, rec(a, "[ AdType = \"Event\"; What = %d ]", i), r, i);
                ads_arena_reset(a);
            }
            two_way_end(&w);
        }
        same_records(d, r, N);
        assert_int_equal(ts_count(d[0], "Event", false), (size_t)(r + 1) * 14);
    }
    assert_true(machine_history(d[0]) > N);
    for (int k = 0; k < 2; k++)
        ts_close(&st[k]);
    ads_arena_free(a);
}

/* A bulk row the load's encoder keys by ids from plain attributes (no
 * undefined value, no name beginning with '_') is written without being
 * looked over (store.c, given_plain). New records of a learnt shape, given
 * by record and by arrays of values, some with an undefined value (which
 * a store removes), some naming _Timestamp or _Deleted, each alone in its
 * batch or among plain ones: the rows are those of single stores. It fails
 * when a row with an undefined value or a timeline attribute is taken as
 * plain. */
static void bulk__new_records_keyed_by_ids_keep_what_they_must(void **state)
{
    (void)state;
    enum { N = 60 };
    tstore st[2];
    ads_db *d[2];
    ads_arena *a = ads_arena_new();
    two_stores(st, d);
    static const char *const tail[] = {"Gone = 1", "Gone = undefined", "Gone = 2",
                                       "Gone = 3; _Timestamp = 1700000000",
                                       "Gone = 4; _Deleted = false", "Gone = undefined"};
    for (int k = 0; k < 2; k++) {
        /* the first batch teaches the shapes; the rest are keyed by ids */
        two_way w = two_way_begin(d[k], k, 6);
        for (int i = 0; i < N; i++)
            two_way_add(&w,
                        rec(a, "[ AdType = \"Machine\"; Name = \"k%02d\"; Memory = %d; %s ]", i,
                            i, tail[i % 6]),
                        0, i);
        two_way_end(&w);
        ads_arena_reset(a);
    }
    /* the same through arrays of values, new records again */
    for (int k = 0; k < 2; k++) {
        ads_bulk_options opt = {.batch = 5};
        ads_bulk *b = NULL;
        ads_txn *txn = NULL;
        ads_error err;
        if (k == 0)
            assert_int_equal(ads_bulk_begin(&b, d[k], &opt, &err), 0);
        else
            assert_int_equal(ads_txn_begin(&txn, d[k], 0, NULL), 0);
        for (int i = 0; i < N; i++) {
            char name[8];
            snprintf(name, sizeof name, "v%02d", i);
            ads_str names[4] = {{"AdType", 6}, {"Name", 4}, {"Memory", 6}, {"Gone", 4}};
            ads_value vals[4] = {ads_string("Machine", 7), ads_string(name, strlen(name)),
                                 ads_int(i), i % 3 == 1 ? ads_undefined() : ads_int(i)};
            if (k == 0) {
                assert_int_equal(ads_bulk_add_values(b, names, vals, 4, &err), 0);
            } else {
                ads_record_builder *rb;
                assert_int_equal(ads_record_builder_new(&rb, a, &err), 0);
                for (int j = 0; j < 4; j++)
                    assert_int_equal(
                        ads_record_builder_add_value(rb, names[j].p, names[j].len, &vals[j], &err),
                        0);
                assert_int_equal(ads_txn_store(txn, ads_record_builder_finish(rb), NULL, &err),
                                 0);
            }
        }
        if (k == 0)
            assert_int_equal(ads_bulk_end(b, &err), 0);
        else
            assert_int_equal(ads_txn_commit(txn, NULL), 0);
        ads_arena_reset(a);
    }
    for (int k = 0; k < 2; k++)
        assert_int_equal(ts_verify(d[k]), 0);
    for (int i = 0; i < 2 * N; i++) {
        char key[32];
        snprintf(key, sizeof key, "{ \"%c%02d\" }", i < N ? 'k' : 'v', i % N);
        char *h0 = ts_history(d[0], "Machine", key), *h1 = ts_history(d[1], "Machine", key);
        if (strcmp(h0, h1) != 0)
            fail_msg("%s:\n%s\nagainst\n%s", key, h0, h1);
        if ((i < N ? i % 6 == 1 || i % 6 == 5 : i % 3 == 1) && strstr(h0, "Gone"))
            fail_msg("%s keeps its undefined Gone:\n%s", key, h0);
        free(h0);
        free(h1);
    }
    for (int k = 0; k < 2; k++)
        ts_close(&st[k]);
    ads_arena_free(a);
}

/* A row keyed by ids and stored as given hands its names' signature to the
 * Attribute bookkeeping (engine/types.c), which notes each type's names
 * once per set of names: the same names under another type are noted for
 * it too, as single stores note them. */
static void bulk__rows_keyed_by_ids_note_their_attributes(void **state)
{
    (void)state;
    static const char *const recs[] = {
        "[ AdType = \"Machine\"; Name = \"a\"; X = 1 ]",
        "[ AdType = \"Machine\"; Name = \"b\"; Y = 1; Z = 2 ]",
        "[ AdType = \"Other\"; Name = \"a\"; X = 1 ]",
        "[ AdType = \"Other\"; Name = \"b\"; Y = 1; Z = 2 ]",
        "[ AdType = \"Other\"; Name = \"c\"; X = 3 ]",
        "[ AdType = \"Machine\"; Name = \"c\"; Y = 3; Z = 4 ]",
    };
    tstore st[2];
    ads_db *d[2];
    ads_arena *a = ads_arena_new();
    size_t attrs[2];
    for (int k = 0; k < 2; k++) {
        d[k] = ts_open(&st[k], T0);
        ts_declare(d[k], "Machine", "Name", NULL);
        ts_declare(d[k], "Other", "Name", NULL);
        size_t before = ts_count(d[k], "Attribute", false);
        two_way w = two_way_begin(d[k], k, 2);
        for (int i = 0; i < 6; i++) {
            two_way_add(&w, rec(a, "%s", recs[i]), 0, i);
            ads_arena_reset(a);
        }
        two_way_end(&w);
        attrs[k] = ts_count(d[k], "Attribute", false) - before;
        assert_int_equal(ts_verify(d[k]), 0);
    }
    assert_int_equal(attrs[0], attrs[1]);
    assert_true(attrs[0] >= 6); /* X, Y and Z of each type */
    for (int k = 0; k < 2; k++)
        ts_close(&st[k]);
    ads_arena_free(a);
}

static int refuse_first_batch(void *ctx, ads_txn *txn, const ads_bulk_batch *bb, ads_error *err)
{
    int *calls = ctx;
    (void)txn;
    (void)bb;
    return (*calls)++ == 0 ? ads_error_set(err, ADS_EINVAL, "refused by the test") : 0;
}

/* A batch whose transaction learnt ids for new names and then failed (its
 * on_batch refused it) hands the encoder nothing: the next batch gives
 * those ids to other names, and the first batch's records, added again,
 * keep their own names. */
static void bulk__ids_learnt_by_a_failed_batch_are_not_used(void **state)
{
    (void)state;
    ads_arena *a = ads_arena_new();
    ads_error err;
    int calls = 0;
    ads_bulk_options opt = {.batch = 10, .on_batch = refuse_first_batch, .ctx = &calls};
    ads_bulk *b;
    assert_int_equal(ads_bulk_begin(&b, db, &opt, &err), 0);
    int rc = 0;
    for (int i = 0; i < 10 && !rc; i++)
        rc = ads_bulk_add(b, rec(a, "[ AdType = \"Machine\"; Name = \"f%d\"; NewA = %d; NewB = 1; "
                                    "NewC = 2 ]",
                                 i, i),
                          &err);
    assert_int_equal(rc, ADS_EINVAL);
    assert_non_null(strstr(err.message, "refused by the test"));
    ads_bulk_discard(b);
    /* four names, where the first batch's records had five: another slot
     * of the encoder's memo, which keeps the first batch's names */
    for (int i = 0; i < 10; i++)
        assert_int_equal(ads_bulk_add(b, rec(a, "[ AdType = \"Machine\"; Name = \"g%d\"; "
                                                "OtherA = %d; OtherB = 2 ]",
                                             i, i),
                                      &err),
                         0);
    for (int i = 0; i < 25; i++)
        assert_int_equal(ads_bulk_add(b, rec(a, "[ AdType = \"Machine\"; Name = \"f%d\"; "
                                                "NewA = %d; NewB = 1; NewC = 2 ]",
                                             i, i),
                                      &err),
                         0);
    assert_int_equal(ads_bulk_end(b, &err), 0);
    for (int i = 0; i < 25; i += 4) {
        char key[32], want[64];
        snprintf(key, sizeof key, "{ \"f%d\" }", i);
        snprintf(want, sizeof want, "NewA = %d; NewB = 1; NewC = 2", i);
        char *got = ts_latest(db, "Machine", key);
        assert_non_null(got);
        if (!strstr(got, want) || strstr(got, "Other"))
            fail_msg("%s: %s", key, got);
        free(got);
    }
    char *g = ts_latest(db, "Machine", "{ \"g3\" }");
    assert_non_null(strstr(g, "OtherA = 3; OtherB = 2"));
    free(g);
    ads_arena_free(a);
}

static int store_id_of(void *ctx, size_t i, const char *name, size_t len, uint64_t *id,
                       ads_error *err)
{
    return ads_names__id(ctx, i, name, len, id, err);
}

/* Only the load's own encoder and a stage make rows keyed by ids: a row
 * given from outside (ads_bulk_add_row) keyed by the store's own ids, as the
 * store keeps it, is refused when it is added, saying what to do, and the
 * records before it are stored. */
static void bulk__a_row_keyed_by_ids_from_outside_is_refused(void **state)
{
    (void)state;
    ads_arena *a = ads_arena_new();
    ads_buf named = ADS_BUF_INIT, ids = ADS_BUF_INIT;
    ads_error err;
    ads_txn *txn;
    assert_int_equal(ads_txn_begin(&txn, db, 0, NULL), 0);
    assert_int_equal(
        ads_txn_store(txn, rec(a, "[ AdType = \"Machine\"; Name = \"x\"; Memory = 1 ]"), NULL, NULL),
        0);
    assert_int_equal(ads_txn_commit(txn, NULL), 0);
    assert_int_equal(ads_msgpack_encode_record(
                         &named, rec(a, "[ AdType = \"Machine\"; Name = \"x1\"; Memory = 1 ]"), NULL),
                     0);
    assert_int_equal(ads_txn_begin(&txn, db, 0, NULL), 0);
    assert_int_equal(ads_msgpack__to_ids(&ids, named.p, named.len, store_id_of, txn, NULL), 0);
    ads_txn_abort(txn);
    ads_bulk *b;
    ads_bulk_options opt = {.batch = 10};
    assert_int_equal(ads_bulk_begin(&b, db, &opt, &err), 0);
    assert_int_equal(ads_bulk_add(b, rec(a, "[ AdType = \"Machine\"; Name = \"x0\"; Memory = 0 ]"),
                                  &err),
                     0);
    assert_int_equal(ads_bulk_add_row(b, ids.p, ids.len, &err), ADS_EINVAL);
    assert_string_equal(err.message, "the row is keyed by a store's attribute ids, as a sorted "
                                     "load's stage gives rows: add it with ads_bulk_add_staged");
    assert_int_equal(ads_bulk_failed(b), 1);
    assert_int_equal(ads_bulk_end(b, &err), 0); /* the record before it is stored */
    assert_int_equal(ts_count(db, "Machine", false), 2);
    ads_buf_free(&named);
    ads_buf_free(&ids);
    ads_arena_free(a);
}

/* A sorted load's stage gives the names of the shapes it sees ids, and
 * encodes the records after them keyed by those ids; merged into a load
 * (ads_bulk_add_staged) they store what the same records stored one at a
 * time store: every shape of ids_rec (timeline attributes given, deleted,
 * undefined values, expressions, names spelled two ways, long names), with
 * records of generated keys among them, in runs small enough to spill, in
 * rounds that update the records and add new shapes. */
static void bulk__staged_rows_keyed_by_ids_store_what_single_stores_do(void **state)
{
    (void)state;
    enum { N = 150, ROUNDS = 5 };
    static const size_t runs[ROUNDS] = {3000, 0, 700, 20000, 1500};
    tstore st[2];
    ads_db *d[2];
    ads_arena *a = ads_arena_new();
    ads_error err;
    two_stores(st, d);
    for (int k = 0; k < 2; k++)
        ts_declare(d[k], "Event", "", "AutoGenerateKey = true;");
    uint32_t x = 88172645u;
    size_t by_ids = 0;
    for (int r = 0; r < ROUNDS; r++) {
        int order[N];
        shuffled(order, N, &x);
        ads_stage *sg;
        assert_int_equal(ads_stage_begin(&sg, d[0], st[0].path, runs[r], &err), 0);
        two_way w = two_way_begin(d[1], 1, 1);
        for (int j = 0; j < N; j++) {
            int i = order[j];
            int shape = (i + (i % 4 == 0 ? r : r / 2)) % 9;
            const ads_record *m = ids_rec(a, i, r, shape);
            if (ads_stage_add(sg, m, i, &err))
                fail_msg("round %d, record %d: %s", r, i, err.message);
            two_way_add(&w, m, r, i);
            if (i % 13 == 5) {
                const ads_record *e = rec(a, "[ AdType = \"Event\"; What = %d ]", i);
                assert_int_equal(ads_stage_add(sg, e, i, &err), 0);
                two_way_add(&w, e, r, i);
            }
            ads_arena_reset(a);
        }
        two_way_end(&w);
        ads_bulk *b;
        ads_bulk_options opt = {.batch = 1 + (size_t)r * 37};
        const void *row;
        size_t len;
        int64_t tag;
        int rc;
        assert_int_equal(ads_stage_merge(sg, &err), 0);
        assert_int_equal(ads_bulk_begin(&b, d[0], &opt, &err), 0);
        while ((rc = ads_stage_next(&row, &len, &tag, sg, &err)) == 1) {
            by_ids += ads_msgpack__row_has_ids(row, len);
            if (ads_bulk_add_staged(b, sg, &err))
                fail_msg("round %d, record %lld: %s", r, (long long)tag, err.message);
        }
        assert_int_equal(rc, 0);
        assert_int_equal(ads_bulk_end(b, &err), 0);
        ads_stage_free(sg);
        same_records(d, r, N);
    }
    /* shapes of one attribute count share the encoder's slot and take it
     * from each other: a quarter or so of the rows come keyed by ids */
    assert_true(by_ids > N);
    for (int k = 0; k < 2; k++)
        ts_close(&st[k]);
    ads_arena_free(a);
}

/* A stage starts from the ids earlier loads through its store handle
 * learnt: records of another type with those names come keyed by ids from
 * the first, and each set of names is noted for that type too, as single
 * stores note them. */
static void bulk__staged_rows_keyed_by_ids_note_their_attributes(void **state)
{
    (void)state;
    static const char *const shapes[] = {"X = 1", "Y = 1; Z = 2"};
    tstore st[2];
    ads_db *d[2];
    ads_arena *a = ads_arena_new();
    ads_error err;
    for (int k = 0; k < 2; k++) {
        d[k] = ts_open(&st[k], T0);
        ts_declare(d[k], "Machine", "Name", NULL);
        ts_declare(d[k], "Other", "Name", NULL);
        /* Machine records of both shapes, in batches of one: ids learnt */
        two_way w = two_way_begin(d[k], k, 1);
        for (int i = 0; i < 4; i++) {
            two_way_add(&w, rec(a, "[ AdType = \"Machine\"; Name = \"m%d\"; %s ]", i, shapes[i % 2]),
                        0, i);
            ads_arena_reset(a);
        }
        two_way_end(&w);
    }
    size_t before = ts_count(d[0], "Attribute", false);
    assert_int_equal(before, ts_count(d[1], "Attribute", false));
    ads_stage *sg;
    assert_int_equal(ads_stage_begin(&sg, d[0], st[0].path, 0, &err), 0);
    two_way w = two_way_begin(d[1], 1, 1);
    for (int i = 0; i < 4; i++) {
        const ads_record *r = rec(a, "[ AdType = \"Other\"; Name = \"o%d\"; %s ]", i, shapes[i % 2]);
        assert_int_equal(ads_stage_add(sg, r, i, &err), 0);
        two_way_add(&w, r, 0, i);
        ads_arena_reset(a);
    }
    two_way_end(&w);
    assert_int_equal(ads_stage_merge(sg, &err), 0);
    ads_bulk *b;
    ads_bulk_options opt = {.batch = 10};
    assert_int_equal(ads_bulk_begin(&b, d[0], &opt, &err), 0);
    const void *row;
    size_t len;
    int64_t tag;
    while (ads_stage_next(&row, &len, &tag, sg, &err) == 1) {
        assert_true(ads_msgpack__row_has_ids(row, len));
        assert_int_equal(ads_bulk_add_staged(b, sg, &err), 0);
    }
    assert_int_equal(ads_bulk_end(b, &err), 0);
    ads_stage_free(sg);
    size_t attrs = ts_count(d[0], "Attribute", false);
    assert_int_equal(attrs, ts_count(d[1], "Attribute", false));
    assert_true(attrs >= before + 3); /* Other's X, Y and Z */
    for (int k = 0; k < 2; k++) {
        assert_int_equal(ts_verify(d[k]), 0);
        ts_close(&st[k]);
    }
    ads_arena_free(a);
}

/* A staged row keyed by ids goes only to a load of the store handle the
 * stage was made for, through ads_bulk_add_staged: ads_bulk_add_row refuses
 * it (its batch fails on it), another handle's load refuses it at once, and
 * a stage that has given no row has none to add. */
static void bulk__staged_rows_keyed_by_ids_go_only_to_their_store(void **state)
{
    (void)state;
    tstore st[2];
    ads_db *d[2];
    ads_arena *a = ads_arena_new();
    ads_error err;
    two_stores(st, d);
    ads_stage *sg;
    assert_int_equal(ads_stage_begin(&sg, d[0], st[0].path, 0, &err), 0);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(
            ads_stage_add(sg, rec(a, "[ AdType = \"Machine\"; Name = \"m%d\"; Memory = %d ]", i, i),
                          i, &err),
            0);
        ads_arena_reset(a);
    }
    ads_bulk *b0, *b1;
    ads_bulk_options opt = {.batch = 10};
    assert_int_equal(ads_bulk_begin(&b0, d[0], &opt, &err), 0);
    assert_int_equal(ads_bulk_begin(&b1, d[1], &opt, &err), 0);
    assert_int_equal(ads_stage_merge(sg, &err), 0);
    assert_int_equal(ads_bulk_add_staged(b0, sg, &err), ADS_EINVAL);
    assert_string_equal(err.message, "the stage has given no row (ads_stage_next)");
    const void *row;
    size_t len;
    int64_t tag;
    assert_int_equal(ads_stage_next(&row, &len, &tag, sg, &err), 1);
    assert_false(ads_msgpack__row_has_ids(row, len)); /* the first: its names had no ids */
    assert_int_equal(ads_bulk_add_staged(b1, sg, &err), 0); /* keyed by names: any store */
    assert_int_equal(ads_bulk_add_staged(b0, sg, &err), 0);
    assert_int_equal(ads_stage_next(&row, &len, &tag, sg, &err), 1);
    assert_true(ads_msgpack__row_has_ids(row, len));
    assert_int_equal(ads_bulk_add_staged(b1, sg, &err), ADS_EINVAL);
    assert_non_null(strstr(err.message, "go to the store handle the stage was made for"));
    assert_int_equal(ads_bulk_add_staged(b0, sg, &err), 0);
    assert_int_equal(ads_bulk_add_row(b0, row, len, &err), ADS_EINVAL);
    assert_non_null(strstr(err.message, "add it with ads_bulk_add_staged"));
    assert_int_equal(ads_bulk_end(b0, &err), 0);
    assert_int_equal(ads_bulk_end(b1, &err), 0);
    ads_stage_free(sg);
    assert_int_equal(ts_count(d[0], "Machine", false), 2);
    assert_int_equal(ts_count(d[1], "Machine", false), 1);
    for (int k = 0; k < 2; k++)
        ts_close(&st[k]);
    ads_arena_free(a);
}

/* A batch that stores Type records among other records: each moves its
 * transaction to a new generation of types, while the batch still holds
 * the types it looked up for its other records first (their order, their
 * keys). Those stay whole until the transaction ends: under ASan, a
 * generation freed at the fourth Type record showed as a use after free. */
static void bulk__type_records_in_a_batch_leave_its_types_whole(void **state)
{
    (void)state;
    ads_arena *a = ads_arena_new();
    ads_bulk *b;
    ads_error err;
    ads_bulk_options opt = {.batch = 100};
    assert_int_equal(ads_bulk_begin(&b, db, &opt, &err), 0);
    for (int i = 0; i < 12; i++) {
        const ads_record *r =
            i % 2 ? rec(a, "[ AdType = \"Type\"; ForType = \"Late%d\"; KeyAttributes = { \"K\" } ]",
                        i)
                  : rec(a, "[ AdType = \"Machine\"; Name = \"m%02d\"; Memory = %d ]", 11 - i, i);
        assert_int_equal(ads_bulk_add(b, r, &err), 0);
        ads_arena_reset(a);
    }
    assert_int_equal(ads_bulk_end(b, &err), 0);
    assert_int_equal(ts_count(db, "Machine", false), 6);
    assert_int_equal(ts_count(db, "Type", false), 2 + 6); /* Machine, Event, Late1..Late11 */
    assert_int_equal(ts_verify(db), 0);
    ads_arena_free(a);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(bulk__batches_commit_whole_with_their_progress),
        T(bulk__a_bad_record_fails_its_batch_only),
        T(backfill__ids_are_dated_in_the_past_and_never_repeat),
        T(map__a_tiny_map_grows_through_a_large_load),
        T(hooks__prestore_trigger_and_notify),
        T(sequences__named_typed_and_errors),
        T(abort__leaves_nothing_and_ids_never_repeat),
        T(bulk__loaded_keys_are_never_generated_again),
        T(sync__deletes_what_no_load_stored),
        T(sync__long_keys_and_many_records),
        T(sync__keys_noted_after_a_deletion_are_found),
        T(sync__matches_a_model_over_random_snapshots),
        T(txn__a_write_failing_half_way_breaks_the_transaction),
        T(hooks__cannot_change_while_a_transaction_is_open),
        T(map__a_full_map_is_emapfull_in_an_explicit_transaction),
        T(bulk__an_attribute_name_over_the_limit_fails_its_record),
        T(bulk__a_load_out_of_key_order_stores_the_rows_of_an_ordered_one),
        T(bulk__sorted_batches_of_updates_store_what_single_stores_do),
        T(bulk__snapshot_syncs_under_a_retention_through_the_batch_cursor),
        T(backfill__a_date_before_1970_fails_the_batch_and_stores_nothing),
        T(bulk__records_with_one_key_keep_their_order_in_a_batch),
        T(bulk__a_failing_batch_reports_its_first_bad_record_in_input_order),
        T(bulk__rows_of_known_shapes_store_what_the_long_way_stores),
        T(bulk__ids_of_a_failed_batch_serve_no_remembered_shape),
        T(bulk__appends_between_other_writes_store_what_single_stores_do),
        T(bulk__values_in_arrays_store_what_the_record_stores),
        T(bulk__rows_keyed_by_ids_store_what_single_stores_do),
        T(bulk__new_records_keyed_by_ids_keep_what_they_must),
        T(bulk__ids_learnt_by_a_failed_batch_are_not_used),
        T(bulk__rows_keyed_by_ids_note_their_attributes),
        T(bulk__a_row_keyed_by_ids_from_outside_is_refused),
        T(bulk__staged_rows_keyed_by_ids_store_what_single_stores_do),
        T(bulk__staged_rows_keyed_by_ids_go_only_to_their_store),
        T(bulk__staged_rows_keyed_by_ids_note_their_attributes),
        T(bulk__type_records_in_a_batch_leave_its_types_whole),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
