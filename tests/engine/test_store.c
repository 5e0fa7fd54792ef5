/*
 * tests/engine/test_store.c: the timeline rules of shared/spec/datastore.md
 * sections 2 and 3 on small stores built here: types and keys, merge on
 * store, history, backfilled rows in the past, delete / undelete / store
 * after delete, purge, generated keys, Attribute records, and the errors a
 * user meets.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <xxhash.h>

#include "base/buf.h"
#include "engine/engine_int.h"
#include "tests/engine/helpers.h"

#define T0 1700000000.0 /* 2023-11-14T22:13:20Z */

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

static void eq_free(char *got, const char *want)
{
    if (!got || strcmp(got, want) != 0)
        fail_msg("got  %s\nwant %s", got ? got : "(none)", want);
    free(got);
}

static void store_ok(const char *text)
{
    ads_error err;
    if (ts_store(db, &err, text))
        fail_msg("store %s: %s (code %d)", text, err.message, err.code);
}

static void store_fails(const char *text, int code, const char *message)
{
    ads_error err;
    int rc = ts_store(db, &err, text);
    if (rc != code || strcmp(err.message, message) != 0)
        fail_msg("store %s: got %d '%s', want %d '%s'", text, rc, rc ? err.message : "", code,
                 message);
}

static void store__a_record_reads_back_with_its_timeline_attributes(void **state)
{
    (void)state;
    store_ok("[ AdType = \"Machine\"; Name = \"a\"; Memory = 1024 ]");
    eq_free(ts_latest(db, "Machine", "{ \"a\" }"),
            "[ AdType = \"Machine\"; Memory = 1024; Name = \"a\"; _Timestamp = "
            "`2023-11-14T22:13:20Z`; __Latest = true; _Deleted = false ]");
    /* the Type record took the clock's microsecond: this row has the next one */
    eq_free(ts_attr(db, "machine", "{ \"A\" }", "__SystemTimestamp"),
            "`2023-11-14T22:13:20.000001Z`");
    eq_free(ts_attr(db, "MACHINE", "{ \"a\" }", "Memory * 2"), "2048");
}

static void store__merges_attributes_and_undefined_removes(void **state)
{
    (void)state;
    store_ok("[ AdType = \"Machine\"; Name = \"a\"; Memory = 1024; Arch = \"X86_64\" ]");
    ts_time(&ts, T0 + 60);
    store_ok("[ AdType = \"Machine\"; Name = \"a\"; Memory = 2048; Disk = 5; Arch = undefined ]");
    eq_free(ts_latest(db, "Machine", "{ \"a\" }"),
            "[ AdType = \"Machine\"; Disk = 5; Memory = 2048; Name = \"a\"; _Timestamp = "
            "`2023-11-14T22:14:20Z`; __Latest = true; _Deleted = false ]");
    eq_free(ts_history(db, "Machine", "{ \"a\" }"),
            "[ AdType = \"Machine\"; Arch = \"X86_64\"; Memory = 1024; Name = \"a\"; _Timestamp = "
            "`2023-11-14T22:13:20Z`; __Latest = false; _Deleted = false ]\n"
            "[ AdType = \"Machine\"; Disk = 5; Memory = 2048; Name = \"a\"; _Timestamp = "
            "`2023-11-14T22:14:20Z`; __Latest = true; _Deleted = false ]");
}

static void store__expressions_are_kept_unevaluated(void **state)
{
    (void)state;
    store_ok("[ AdType = \"Machine\"; Name = \"a\"; Memory = 1024; Double = Memory * 2 ]");
    eq_free(ts_attr(db, "Machine", "{ \"a\" }", "Double"), "2048");
    store_ok("[ AdType = \"Machine\"; Name = \"a\"; Memory = 4 ]");
    eq_free(ts_attr(db, "Machine", "{ \"a\" }", "Double"), "8");
}

static void keys__compare_as_equivalence_does(void **state)
{
    (void)state;
    ts_declare(db, "Pair", "A,B", NULL);
    store_ok("[ AdType = \"Pair\"; A = \"ABC\"; B = 123; X = 1 ]");
    store_ok("[ AdType = \"pair\"; A = \"abc\"; B = 123.0; Y = 2 ]");
    store_ok("[ AdType = \"Pair\"; A = \"abc\"; B = 124; Z = 3 ]");
    assert_int_equal(ts_count(db, "Pair", false), 2);
    /* the last spelling stored is the one kept */
    eq_free(ts_attr(db, "Pair", "{ \"Abc\", 123 }", "{ A, B, X, Y }"), "{ \"abc\", 123.0, 1, 2 }");
    ts_declare(db, "Listed", "K", NULL);
    store_ok("[ AdType = \"Listed\"; K = { \"a\", [ x = 1 ] }; V = 1 ]");
    store_ok("[ AdType = \"Listed\"; K = { \"A\", [ X = 1.0 ] }; V = 2 ]");
    assert_int_equal(ts_count(db, "Listed", false), 1);
    store_ok("[ AdType = \"Listed\"; K = true; V = 3 ]");
    eq_free(ts_attr(db, "Listed", "{ 1 }", "V"), "3");
}

static void keys__over_the_lmdb_limit_work(void **state)
{
    (void)state;
    char big[3000], text[3200];
    memset(big, 'k', 2048);
    big[2048] = 0;
    /* two 2 KB keys that differ only at the end */
    snprintf(text, sizeof text, "[ AdType = \"Machine\"; Name = \"%s1\"; V = 1 ]", big);
    store_ok(text);
    snprintf(text, sizeof text, "[ AdType = \"Machine\"; Name = \"%s2\"; V = 2 ]", big);
    store_ok(text);
    snprintf(text, sizeof text, "[ AdType = \"Machine\"; Name = \"%s1\"; W = 3 ]", big);
    store_ok(text);
    snprintf(text, sizeof text, "{ \"%s1\" }", big);
    eq_free(ts_attr(db, "Machine", text, "{ V, W }"), "{ 1, 3 }");
    snprintf(text, sizeof text, "{ \"%s2\" }", big);
    eq_free(ts_attr(db, "Machine", text, "{ V, W }"), "{ 2, undefined }");
    assert_int_equal(ts_count(db, "Machine", false), 2);
}

static void errors__say_what_is_wrong(void **state)
{
    (void)state;
    store_fails("[ Name = \"a\" ]", ADS_EINVAL, "a record needs AdType, the name of its type");
    store_fails("[ AdType = 3; Name = \"a\" ]", ADS_EINVAL,
                "AdType must be a string naming the type, not integer");
    store_fails("[ AdType = \"Nope\"; Name = \"a\" ]", ADS_ENOTFOUND,
                "no type named Nope (store a Type record first)");
    store_fails("[ AdType = \"Machine\"; Memory = 1 ]", ADS_EINVAL,
                "a record of type Machine needs key attribute Name");
    store_fails("[ AdType = \"Machine\"; Name = undefined ]", ADS_EINVAL,
                "a record of type Machine needs key attribute Name");
    store_fails("[ AdType = \"Machine\"; Name = error ]", ADS_EINVAL,
                "key attribute Name of type Machine is error");
    store_fails("[ AdType = \"Machine\"; Name = strcat(\"a\", \"b\") ]", ADS_EINVAL,
                "type Machine: key attribute Name must be a value, not an expression");
    store_fails("[ AdType = \"Machine\"; Name = \"a\"; __Latest = false ]", ADS_EINVAL,
                "type Machine: __Latest is maintained by the store and cannot be set");
    store_fails("[ AdType = \"Machine\"; Name = \"a\"; __Mine = 1 ]", ADS_EINVAL,
                "type Machine: __Mine is maintained by the store and cannot be set");
    store_fails("[ AdType = \"Machine\"; Name = \"a\"; _Timestamp = true ]", ADS_EINVAL,
                "type Machine: _Timestamp must be an AbsTime, seconds since 1970 or ISO 8601 "
                "text, not boolean");
    store_fails("[ AdType = \"Machine\"; Name = \"a\"; _Timestamp = \"yesterday\" ]", ADS_EINVAL,
                "type Machine: _Timestamp must be an AbsTime, seconds since 1970 or ISO 8601 "
                "text; \"yesterday\" is not a time");
    store_fails("[ AdType = \"Machine\"; Name = \"a\"; _Deleted = \"yes\" ]", ADS_EINVAL,
                "type Machine: _Deleted must be a boolean, not string");
    store_fails("[ AdType = \"Type\"; ForType = \"Type\" ]", ADS_EINVAL,
                "Type is a built-in type and cannot be declared");
    store_fails("[ AdType = \"Type\"; ForType = \"9bad\" ]", ADS_EINVAL,
                "ForType \"9bad\" is not a type name (letters, digits, _, - and dots, starting "
                "with a letter or _, at most 200 bytes)");
    store_fails("[ AdType = \"Type\"; ForType = \"T\"; KeyAttributes = { \"A\", \"a\" } ]",
                ADS_EINVAL, "type T: key attribute a is listed twice");
    store_fails("[ AdType = \"Type\"; ForType = \"T\"; KeyAttributes = \"A\" ]", ADS_EINVAL,
                "type T: KeyAttributes must be a list of attribute names, not string");
    store_fails("[ AdType = \"Type\"; ForType = \"T\"; KeyAttributes = { \"A\" }; "
                "AutoGenerateKeyMethod = \"sideways\" ]",
                ADS_EINVAL,
                "type T: AutoGenerateKeyMethod \"sideways\" is not ordered, random or increment");
    /* a failed statement writes nothing: the first record is not stored either */
    store_fails("{ [ AdType = \"Machine\"; Name = \"ok\" ], [ AdType = \"Machine\" ] }", ADS_EINVAL,
                "a record of type Machine needs key attribute Name");
    assert_int_equal(ts_count(db, "Machine", true), 0);
}

static void types__dotted_names_and_case(void **state)
{
    (void)state;
    ts_declare(db, "Cloud.Project", "Id", NULL);
    store_ok("[ AdType = \"cloud.project\"; Id = 7 ]");
    assert_int_equal(ts_count(db, "CLOUD.PROJECT", false), 1);
}

static void types__key_change_and_removal_refused_while_records_exist(void **state)
{
    (void)state;
    store_ok("[ AdType = \"Machine\"; Name = \"a\" ]");
    store_fails("[ AdType = \"Type\"; ForType = \"Machine\"; KeyAttributes = { \"Host\" } ]",
                ADS_EEXIST, "type Machine holds 1 records: its KeyAttributes cannot change");
    store_fails("[ AdType = \"Type\"; ForType = \"Machine\"; _Deleted = true ]", ADS_EEXIST,
                "type machine still holds 1 records: purge them before deleting its Type record");
    /* other attributes of the Type record may change */
    store_ok("[ AdType = \"Type\"; ForType = \"Machine\"; Description = \"hosts\" ]");
    eq_free(ts_attr(db, "Type", "{ \"machine\" }", "{ Description, KeyAttributes }"),
            "{ \"hosts\", { \"Name\" } }");
}

static void keyless__records_are_appended_with_increment_ids(void **state)
{
    (void)state;
    ts_declare(db, "Event", "", NULL);
    store_ok("[ AdType = \"Event\"; What = \"boot\" ]");
    store_ok("[ AdType = \"Event\"; What = \"halt\" ]");
    assert_int_equal(ts_count(db, "Event", false), 2);
    eq_free(ts_attr(db, "Event", "{ #1 }", "What"), "\"boot\"");
    eq_free(ts_attr(db, "Event", "{ #2 }", "What"), "\"halt\"");
    /* with an Id it is an ordinary store to that record */
    store_ok("[ AdType = \"Event\"; Id = #1; What = \"reboot\" ]");
    eq_free(ts_attr(db, "Event", "{ #1 }", "What"), "\"reboot\"");
    assert_int_equal(ts_count(db, "Event", false), 2);
}

static void autogen__ordered_random_and_keyed(void **state)
{
    (void)state;
    ts_declare(db, "Log", "", "AutoGenerateKey = true;");
    ts_declare(db, "Rnd", "", "AutoGenerateKey = true; AutoGenerateKeyMethod = \"random\";");
    ts_declare(db, "Job", "JobId", "AutoGenerateKey = true; AutoGenerateKeyMethod = \"increment\";");
    store_ok("{ [ AdType = \"Log\"; M = 1 ], [ AdType = \"Rnd\"; M = 2 ], [ AdType = \"Job\"; M = 3 ],"
             " [ AdType = \"Job\"; M = 4 ] }");
    ads_txn *txn;
    ads_scan *s;
    ads_row *r;
    const ads_type *t;
    ads_arena *a = ads_arena_new();
    assert_int_equal(ads_txn_begin(&txn, db, ADS_TXN_READONLY, NULL), 0);
    const char *types[] = {"Log", "Rnd", "Job"};
    const char *kinds[] = {"ordered", "random", "increment"};
    for (int i = 0; i < 3; i++) {
        assert_int_equal(ads_txn_type(&t, txn, types[i], strlen(types[i]), NULL), 0);
        assert_int_equal(ads_scan_open(&s, txn, t, NULL, 0, NULL), 0);
        assert_int_equal(ads_scan_next(&r, s, NULL), 1);
        ads_value keys;
        assert_int_equal(ads_row_key_values(&keys, r, a, NULL), 0);
        assert_int_equal(keys.u.list.items[0].type, ADS_IDENT);
        assert_string_equal(ads_id_kind_name(ads_id_kind_of(keys.u.list.items[0].u.id)), kinds[i]);
        ads_scan_close(s);
    }
    ads_txn_abort(txn);
    ads_arena_free(a);
    eq_free(ts_attr(db, "Job", "{ #2 }", "M"), "4");
}

static int64_t test_now(void *ctx)
{
    return ((tstore *)ctx)->ns;
}

/* The OUID the store will generate next (from its generator state and the
 * fake clock, as the store reads them). */
static ads_id next_ordered(void)
{
    ads_txn *txn;
    ads_idgen_state st;
    ads_id id;
    ads_clock clk = {test_now, NULL, &ts};
    assert_int_equal(ads_txn_begin(&txn, db, ADS_TXN_READONLY, NULL), 0);
    assert_int_equal(ads_txn_idgen_state(&st, txn, NULL), 0);
    ads_txn_abort(txn);
    assert_true(ads_ouid_next(&id, &st, &clk, NULL) >= 0);
    return id;
}

static uint64_t seq_last(const char *name)
{
    ads_txn *txn;
    uint64_t v;
    assert_int_equal(ads_txn_begin(&txn, db, ADS_TXN_READONLY, NULL), 0);
    assert_int_equal(ads_txn_sequence_last(&v, txn, name, strlen(name), NULL), 0);
    ads_txn_abort(txn);
    return v;
}

static void autogen__a_generated_key_never_overwrites_an_explicit_one(void **state)
{
    (void)state;
    /* keyless (increment): #1 given, then a generated key */
    ts_declare(db, "E", "", NULL);
    store_ok("[ AdType = \"E\"; Id = #1; x = \"explicit\" ]");
    assert_int_equal(seq_last("type:E"), 1);
    store_ok("[ AdType = \"E\"; x = \"auto\" ]");
    assert_int_equal(ts_count(db, "E", false), 2);
    eq_free(ts_attr(db, "E", "{ #1 }", "x"), "\"explicit\"");
    eq_free(ts_attr(db, "E", "{ #2 }", "x"), "\"auto\"");
    /* a deleted record's key is taken too */
    store_ok("[ AdType = \"E\"; Id = #7; _Deleted = true ]");
    store_ok("[ AdType = \"E\"; x = \"after\" ]");
    eq_free(ts_attr(db, "E", "{ #8 }", "x"), "\"after\"");
    eq_free(ts_attr(db, "E", "{ #7 }", "_Deleted"), "true");

    /* a keyed increment type, several explicit keys in one transaction */
    ts_declare(db, "Job", "JobId", "AutoGenerateKey = true; AutoGenerateKeyMethod = \"increment\";");
    store_ok("{ [ AdType = \"Job\"; JobId = #5; M = 5 ], [ AdType = \"Job\"; JobId = #3; M = 3 ],"
             " [ AdType = \"Job\"; M = 6 ] }");
    eq_free(ts_attr(db, "Job", "{ #5 }", "M"), "5");
    eq_free(ts_attr(db, "Job", "{ #6 }", "M"), "6");
    assert_int_equal(ts_count(db, "Job", false), 3);
    /* keys of other kinds (a number, an OUID) leave the counter alone */
    store_ok("[ AdType = \"Job\"; JobId = 100; M = 100 ]");
    store_ok("[ AdType = \"Job\"; M = 7 ]");
    eq_free(ts_attr(db, "Job", "{ #7 }", "M"), "7");

    /* ordered: the very id the generator will make next, stored first */
    ts_declare(db, "Log", "", "AutoGenerateKey = true;");
    ads_id next = next_ordered();
    char text[200], idt[ADS_ID_TEXT_MAX + 1];
    idt[ads_id_format(idt, next)] = 0;
    snprintf(text, sizeof text, "[ AdType = \"Log\"; Id = %s; x = \"explicit\" ]", idt);
    store_ok(text);
    store_ok("[ AdType = \"Log\"; x = \"auto\" ]");
    assert_int_equal(ts_count(db, "Log", false), 2);
    snprintf(text, sizeof text, "{ %s }", idt);
    eq_free(ts_attr(db, "Log", text, "x"), "\"explicit\"");
}

static void backfill__older_rows_go_into_the_past(void **state)
{
    (void)state;
    ts_time(&ts, T0 + 3600);
    store_ok("[ AdType = \"Machine\"; Name = \"c\"; Memory = 4; Disk = 1 ]");
    /* a row dated before the latest: inserted into the past, latest unchanged */
    store_ok("[ AdType = \"Machine\"; Name = \"c\"; Memory = 2; _Timestamp = `2023-11-14T22:30:00Z` ]");
    eq_free(ts_attr(db, "Machine", "{ \"c\" }", "{ Memory, _Timestamp }"),
            "{ 4, `2023-11-14T23:13:20Z` }");
    /* then one older still: it starts the record (nothing in effect before it) */
    store_ok("[ AdType = \"Machine\"; Name = \"c\"; Memory = 1; Cpus = 8; _Timestamp = "
             "`2023-11-14T22:00:00Z` ]");
    /* and one between: merged with the row in effect at its time (Memory 1, Cpus 8) */
    store_ok("[ AdType = \"Machine\"; Name = \"c\"; Disk = 9; _Timestamp = `2023-11-14T22:10:00Z` ]");
    eq_free(ts_history(db, "Machine", "{ \"c\" }"),
            "[ AdType = \"Machine\"; Cpus = 8; Memory = 1; Name = \"c\"; _Timestamp = "
            "`2023-11-14T22:00:00Z`; __Latest = false; _Deleted = false ]\n"
            "[ AdType = \"Machine\"; Cpus = 8; Disk = 9; Memory = 1; Name = \"c\"; _Timestamp = "
            "`2023-11-14T22:10:00Z`; __Latest = false; _Deleted = false ]\n"
            "[ AdType = \"Machine\"; Memory = 2; Name = \"c\"; _Timestamp = "
            "`2023-11-14T22:30:00Z`; __Latest = false; _Deleted = false ]\n"
            "[ AdType = \"Machine\"; Disk = 1; Memory = 4; Name = \"c\"; _Timestamp = "
            "`2023-11-14T23:13:20Z`; __Latest = true; _Deleted = false ]");
    /* a later dated row becomes latest and merges with the latest */
    store_ok("[ AdType = \"Machine\"; Name = \"c\"; Memory = 8; _Timestamp = `2023-11-15T00:00:00Z` ]");
    eq_free(ts_attr(db, "Machine", "{ \"c\" }", "{ Memory, Disk }"), "{ 8, 1 }");
    /* a row given without a date after a future-dated latest row still becomes latest */
    store_ok("[ AdType = \"Machine\"; Name = \"c\"; Memory = 16 ]");
    eq_free(ts_attr(db, "Machine", "{ \"c\" }", "{ Memory, _Timestamp }"),
            "{ 16, `2023-11-15T00:00:00Z` }");
}

static void delete__appends_a_deleted_row_and_store_starts_afresh(void **state)
{
    (void)state;
    store_ok("[ AdType = \"Machine\"; Name = \"d\"; Memory = 4; Disk = 1 ]");
    ads_txn *txn;
    ads_row row;
    ads_write_info info;
    const ads_type *t;
    ads_arena *a = ads_arena_new();
    ads_value key = ads_string("d", 1);
    ts_time(&ts, T0 + 10);
    assert_int_equal(ads_txn_begin(&txn, db, 0, NULL), 0);
    assert_int_equal(ads_txn_type(&t, txn, "Machine", 7, NULL), 0);
    assert_int_equal(ads_txn_get(txn, &row, t, &key, 1, a, NULL), 1);
    assert_int_equal(ads_txn_delete(txn, &row, &info, NULL), 0);
    assert_true(info.changed);
    /* deleting a deleted record does nothing */
    assert_int_equal(ads_txn_get(txn, &row, t, &key, 1, a, NULL), 1);
    assert_true(row.deleted);
    assert_int_equal(ads_txn_delete(txn, &row, &info, NULL), 0);
    assert_false(info.changed);
    assert_int_equal(ads_txn_commit(txn, NULL), 0);
    assert_int_equal(ts_count(db, "Machine", false), 0);
    assert_int_equal(ts_count(db, "Machine", true), 1);
    eq_free(ts_attr(db, "Machine", "{ \"d\" }", "{ Memory, _Deleted, __Latest }"),
            "{ 4, true, true }");
    /* storing it again starts afresh: Disk is gone */
    ts_time(&ts, T0 + 20);
    store_ok("[ AdType = \"Machine\"; Name = \"d\"; Memory = 8 ]");
    eq_free(ts_attr(db, "Machine", "{ \"d\" }", "{ Memory, Disk, _Deleted }"),
            "{ 8, undefined, false }");
    eq_free(ts_history(db, "Machine", "{ \"d\" }"),
            "[ AdType = \"Machine\"; Disk = 1; Memory = 4; Name = \"d\"; _Timestamp = "
            "`2023-11-14T22:13:20Z`; __Latest = false; _Deleted = false ]\n"
            "[ AdType = \"Machine\"; Disk = 1; Memory = 4; Name = \"d\"; _Timestamp = "
            "`2023-11-14T22:13:30Z`; __Latest = false; _Deleted = true ]\n"
            "[ AdType = \"Machine\"; Memory = 8; Name = \"d\"; _Timestamp = "
            "`2023-11-14T22:13:40Z`; __Latest = true; _Deleted = false ]");
    ads_arena_free(a);
}

static void delete__by_storing_deleted_and_undelete_by_put_row(void **state)
{
    (void)state;
    store_ok("[ AdType = \"Machine\"; Name = \"e\"; Memory = 4 ]");
    ts_time(&ts, T0 + 5);
    store_ok("[ AdType = \"Machine\"; Name = \"e\"; _Deleted = true ]");
    assert_int_equal(ts_count(db, "Machine", false), 0);
    /* undelete: UPDATE ... SET _Deleted = false appends the latest row, undeleted */
    ads_txn *txn;
    ads_row row;
    const ads_type *t;
    const ads_record *rec;
    ads_arena *a = ads_arena_new();
    ads_value key = ads_string("e", 1);
    ts_time(&ts, T0 + 9);
    assert_int_equal(ads_txn_begin(&txn, db, 0, NULL), 0);
    assert_int_equal(ads_txn_type(&t, txn, "Machine", 7, NULL), 0);
    assert_int_equal(ads_txn_get(txn, &row, t, &key, 1, a, NULL), 1);
    const char *text = "[ AdType = \"Machine\"; Name = \"e\"; Memory = 4; _Deleted = false ]";
    assert_int_equal(ads_record_parse(&rec, a, text, strlen(text), NULL), 0);
    assert_int_equal(ads_txn_put_row(txn, &row, rec, NULL, NULL), 0);
    assert_int_equal(ads_txn_commit(txn, NULL), 0);
    eq_free(ts_attr(db, "Machine", "{ \"e\" }", "{ Memory, _Deleted, _Timestamp }"),
            "{ 4, false, `2023-11-14T22:13:29Z` }");
    /* put_row refuses a changed key */
    assert_int_equal(ads_txn_begin(&txn, db, 0, NULL), 0);
    assert_int_equal(ads_txn_get(txn, &row, t, &key, 1, a, NULL), 1);
    ads_error err;
    text = "[ AdType = \"Machine\"; Name = \"f\" ]";
    assert_int_equal(ads_record_parse(&rec, a, text, strlen(text), NULL), 0);
    assert_int_equal(ads_txn_put_row(txn, &row, rec, NULL, &err), ADS_EINVAL);
    assert_string_equal(err.message, "type Machine: the key attributes of a record cannot change");
    ads_txn_abort(txn);
    ads_arena_free(a);
}

/* Attribute names are at most ADS_MAX_NAME_LEN bytes (docs/storage.md,
 * Limits), refused by store and by put_row (UPDATE) alike. */
static void limits__an_attribute_name_over_the_limit_is_refused(void **state)
{
    (void)state;
    char name[ADS_MAX_NAME_LEN + 2], text[400], want[300];
    memset(name, 'a', ADS_MAX_NAME_LEN);
    name[ADS_MAX_NAME_LEN] = 0;
    snprintf(text, sizeof text, "[ AdType = \"Machine\"; Name = \"n\"; %s = 1 ]", name);
    store_ok(text); /* 200 bytes: at the limit */
    strcat(name, "b");
    snprintf(text, sizeof text, "[ AdType = \"Machine\"; Name = \"n\"; %s = 1 ]", name);
    snprintf(want, sizeof want,
             "type Machine: attribute name %.40s... has 201 bytes, over the limit of 200", name);
    store_fails(text, ADS_ELIMIT, want);
    ads_txn *txn;
    ads_row row;
    const ads_type *t;
    const ads_record *rec;
    ads_error err;
    ads_arena *a = ads_arena_new();
    ads_value key = ads_string("n", 1);
    assert_int_equal(ads_txn_begin(&txn, db, 0, NULL), 0);
    assert_int_equal(ads_txn_type(&t, txn, "Machine", 7, NULL), 0);
    assert_int_equal(ads_txn_get(txn, &row, t, &key, 1, a, NULL), 1);
    assert_int_equal(ads_record_parse(&rec, a, text, strlen(text), NULL), 0);
    assert_int_equal(ads_txn_put_row(txn, &row, rec, NULL, &err), ADS_ELIMIT);
    assert_string_equal(err.message, want);
    /* refused before anything changed: the transaction goes on */
    assert_int_equal(ads_txn_commit(txn, &err), 0);
    eq_free(ts_attr(db, "Machine", "{ \"n\" }", name), "undefined");
    ads_arena_free(a);
}

static void purge__removes_every_row(void **state)
{
    (void)state;
    store_ok("[ AdType = \"Machine\"; Name = \"p\"; Memory = 4 ]");
    ts_time(&ts, T0 + 1);
    store_ok("[ AdType = \"Machine\"; Name = \"p\"; Memory = 5 ]");
    store_ok("[ AdType = \"Machine\"; Name = \"q\"; Memory = 6 ]");
    ads_txn *txn;
    ads_row row;
    const ads_type *t;
    ads_type_counts c;
    ads_arena *a = ads_arena_new();
    ads_value key = ads_string("p", 1);
    assert_int_equal(ads_txn_begin(&txn, db, 0, NULL), 0);
    assert_int_equal(ads_txn_type(&t, txn, "Machine", 7, NULL), 0);
    assert_int_equal(ads_txn_type_counts(&c, txn, t, NULL), 0);
    assert_int_equal(c.records, 2);
    assert_int_equal(c.history, 1);
    assert_int_equal(ads_txn_get(txn, &row, t, &key, 1, a, NULL), 1);
    assert_int_equal(ads_txn_purge(txn, &row, NULL), 0);
    assert_int_equal(ads_txn_get(txn, &row, t, &key, 1, a, NULL), 0);
    assert_int_equal(ads_txn_type_counts(&c, txn, t, NULL), 0);
    assert_int_equal(c.records, 1);
    assert_int_equal(c.history, 0);
    assert_int_equal(ads_txn_commit(txn, NULL), 0);
    eq_free(ts_history(db, "Machine", "{ \"p\" }"), "");
    eq_free(ts_attr(db, "Machine", "{ \"q\" }", "Memory"), "6");
    ads_arena_free(a);
}

static void attributes__records_are_made_for_new_names(void **state)
{
    (void)state;
    store_ok("[ AdType = \"Machine\"; Name = \"a\"; Memory = 1 ]");
    store_ok("[ AdType = \"Machine\"; Name = \"b\"; MEMORY = 1; Disk = 2 ]");
    /* AdType, Name, Memory, Disk: one record each, first spelling kept */
    assert_int_equal(ts_count(db, "Attribute", false), 4);
    eq_free(ts_attr(db, "Attribute", "{ \"Machine\", \"memory\" }", "{ ForType, ForName }"),
            "{ \"Machine\", \"Memory\" }");
    /* an Attribute record stored in advance with metadata is kept */
    store_ok("[ AdType = \"Attribute\"; ForType = \"Machine\"; ForName = \"Cpus\"; Label = \"CPUs\" ]");
    store_ok("[ AdType = \"Machine\"; Name = \"c\"; Cpus = 8 ]");
    eq_free(ts_attr(db, "Attribute", "{ \"Machine\", \"Cpus\" }", "Label"), "\"CPUs\"");
    assert_int_equal(ts_count(db, "Attribute", false), 5);
}

/* A write merged with the record's latest row notes the merged row's
 * names: new names arrive through merges too, in one transaction and in
 * the next. */
static void attributes__names_a_merge_brings_get_records(void **state)
{
    (void)state;
    store_ok("[ AdType = \"Machine\"; Name = \"m\"; A = 1 ]");
    ads_txn *txn;
    ads_error err;
    assert_int_equal(ads_txn_begin(&txn, db, 0, &err), 0);
    assert_int_equal(ts_txn_store(txn, "[ AdType = \"Machine\"; Name = \"m\"; B = 2 ]", &err), 0);
    assert_int_equal(ts_txn_store(txn, "[ AdType = \"Machine\"; Name = \"m\"; C = 3 ]", &err), 0);
    assert_int_equal(ads_txn_commit(txn, &err), 0);
    store_ok("[ AdType = \"Machine\"; Name = \"m\"; D = 4 ]");
    store_ok("[ AdType = \"Machine\"; Name = \"m\"; A = 5 ]"); /* no new name */
    eq_free(ts_attr(db, "Machine", "{ \"m\" }", "{ A, B, C, D }"), "{ 5, 2, 3, 4 }");
    /* AdType, Name, A, B, C, D */
    assert_int_equal(ts_count(db, "Attribute", false), 6);
    eq_free(ts_attr(db, "Attribute", "{ \"Machine\", \"C\" }", "ForName"), "\"C\"");
    eq_free(ts_attr(db, "Attribute", "{ \"Machine\", \"D\" }", "ForName"), "\"D\"");
}

/* What a merge test expects of a record: each pool name's spelling and
 * value text as stored last, or no value. */
#define MPOOL 19
typedef struct mexpect {
    char spell[MPOOL][48];
    char *value[MPOOL];
} mexpect;

/* The stored latest row of Machine m<k> (with ids) must be byte for byte
 * the encoder's row of the record the model expects, encoded from scratch
 * and given ids by the store's table: the right names with the right ids,
 * in the right form. */
static void merged_row_is_encoders(ads_txn *txn, const ads_type *t, int k, const mexpect *x,
                                   ads_arena *a)
{
    char name[16];
    snprintf(name, sizeof name, "m%d", k);
    ads_value key = ads_string(name, strlen(name));
    ads_row row;
    ads_error err;
    assert_int_equal(ads_txn_get(txn, &row, t, &key, 1, a, &err), 1);
    if (!ads_msgpack__row_has_ids(row.data, row.len))
        fail_msg("m%d: the merged row names its attributes by strings", k);
    ads_buf text = ADS_BUF_INIT, names = ADS_BUF_INIT, ids = ADS_BUF_INIT;
    ads_buf_printf(&text, "[ AdType = \"Machine\"; Name = \"m%d\"", k);
    for (int i = 0; i < MPOOL; i++)
        if (x->value[i])
            ads_buf_printf(&text, "; %s = %s", x->spell[i], x->value[i]);
    ads_buf_adds(&text, " ]");
    const ads_record *rec;
    if (ads_record_parse(&rec, a, text.p, text.len, &err))
        fail_msg("m%d: %s: %s", k, ads_buf_cstr(&text), err.message);
    assert_int_equal(ads_msgpack_encode_record(&names, rec, &err), 0);
    assert_int_equal(ads_names__encode(txn, &ids, names.p, names.len, &err), 0);
    if (ids.len != row.len || memcmp(ids.p, row.data, row.len) != 0)
        fail_msg("m%d: the merge wrote %zu bytes, the encoder %zu for %s", k, row.len, ids.len,
                 ads_buf_cstr(&text));
    ads_buf_free(&text);
    ads_buf_free(&names);
    ads_buf_free(&ids);
}

static void merge__writes_the_row_with_ids_the_encoder_would(void **state)
{
    (void)state;
    /* 300 names first, so that the pool's new names take ids of two bytes
     * and three (0xcc, 0xcd forms); the pool keeps two of them (ids of one
     * byte and of two) and a name longer than a fixstr; names are given in
     * either case now and then (a name keeps the spelling given last) */
    ads_buf fill = ADS_BUF_INIT;
    ads_buf_adds(&fill, "[ AdType = \"Machine\"; Name = \"filler\"");
    for (int i = 0; i < 300; i++)
        ads_buf_printf(&fill, "; X%d = %d", i, i);
    ads_buf_adds(&fill, " ]");
    store_ok(ads_buf_cstr(&fill));
    ads_buf_free(&fill);
    static const char *const pool[MPOOL] = {
        "X5", "X200", "Memory", "cpus", "State", "Rank", "Z", "a_b", "LoadAvg", "Q1",
        "Q2", "Q3", "Q4", "Q5", "Q6", "Q7", "Q8", "Q9", "AnAttributeNameLongerThan31Bytes_xyz"};
    static const char *const values[] = {"1", "-70000", "2.5", "\"idle\"", "undefined",
                                         "{ 1, \"a\" }", "[ x = 1; y = \"b\" ]",
                                         "Memory * 2 + cpus", "true",
                                         "absTime(\"2024-05-01T12:00:00Z\")", "\"LONG\""};
    const size_t nval = sizeof values / sizeof values[0];
    mexpect x[5];
    memset(x, 0, sizeof x);
    uint64_t r = 0x9e3779b97f4a7c15ull;
    for (int step = 0; step < 400; step++) {
        ads_buf b = ADS_BUF_INIT;
        int k = step % 5;
        ads_buf_printf(&b, "[ AdType = \"Machine\"; Name = \"m%d\"", k);
        r ^= r << 13, r ^= r >> 7, r ^= r << 17;
        unsigned nattr = 1 + (unsigned)(r % 8), used = 0; /* a name once per record */
        for (unsigned j = 0; j < nattr; j++) {
            r ^= r << 13, r ^= r >> 7, r ^= r << 17;
            int at = (int)(r % MPOOL);
            if (used & (1u << at))
                continue;
            used |= 1u << at;
            char spell[48], val[400];
            snprintf(spell, sizeof spell, "%s", pool[at]);
            if ((r >> 40) % 4 == 0) /* another spelling of the same name: case swapped */
                for (char *c = spell; *c; c++)
                    if ((*c | 0x20) >= 'a' && (*c | 0x20) <= 'z')
                        *c ^= 0x20;
            const char *v = values[(r >> 20) % nval];
            if (strcmp(v, "\"LONG\"") == 0) /* rows past 255 bytes: a wider index */
                snprintf(val, sizeof val, "\"%0300d\"", step);
            else
                snprintf(val, sizeof val, "%s", v);
            ads_buf_printf(&b, "; %s = %s", spell, val);
            free(x[k].value[at]);
            x[k].value[at] = strcmp(val, "undefined") == 0 ? NULL : strdup(val);
            memcpy(x[k].spell[at], spell, sizeof spell);
        }
        ads_buf_adds(&b, " ]");
        store_ok(ads_buf_cstr(&b));
        ads_buf_free(&b);
        if (step < 5)
            continue; /* the first store of each record is stored as given */
        ads_txn *txn;
        ads_error err;
        const ads_type *t;
        ads_arena *a = ads_arena_new();
        assert_int_equal(ads_txn_begin(&txn, db, 0, &err), 0);
        assert_int_equal(ads_txn_type(&t, txn, "Machine", 7, &err), 0);
        merged_row_is_encoders(txn, t, k, &x[k], a);
        ads_txn_abort(txn);
        ads_arena_free(a);
    }
    for (int k = 0; k < 5; k++)
        for (int i = 0; i < MPOOL; i++)
            free(x[k].value[i]);
}

static void clock__system_timestamp_never_goes_back(void **state)
{
    (void)state;
    store_ok("[ AdType = \"Machine\"; Name = \"a\" ]");
    ts_time(&ts, T0 - 3600); /* the wall clock steps back an hour */
    store_ok("[ AdType = \"Machine\"; Name = \"b\" ]");
    ads_txn *txn;
    ads_row row;
    const ads_type *t;
    ads_arena *a = ads_arena_new();
    ads_value ka = ads_string("a", 1), kb = ads_string("b", 1);
    assert_int_equal(ads_txn_begin(&txn, db, ADS_TXN_READONLY, NULL), 0);
    assert_int_equal(ads_txn_type(&t, txn, "Machine", 7, NULL), 0);
    assert_int_equal(ads_txn_get(txn, &row, t, &ka, 1, a, NULL), 1);
    int64_t first = row.systime_us;
    assert_int_equal(ads_txn_get(txn, &row, t, &kb, 1, a, NULL), 1);
    assert_true(row.systime_us > first);
    assert_true(row.ts < T0);
    ads_txn_abort(txn);
    ads_arena_free(a);
}


/* ---- unchanged records ---- */

/* Store the record of text, each attribute evaluated to a value (blob(...),
 * -2.5 and the like become values), but for attributes named X...: they
 * stay expressions. Fills *info. */
static void store_values(const char *text, ads_write_info *info)
{
    ads_arena *a = ads_arena_new();
    const ads_record *r;
    ads_record_builder *b;
    ads_txn *txn;
    ads_error err;
    if (ads_record_parse(&r, a, text, strlen(text), &err))
        fail_msg("parse %s: %s", text, err.message);
    assert_int_equal(ads_record_builder_new(&b, a, NULL), 0);
    for (size_t i = 0; i < ads_record_size(r); i++) {
        ads_str n = ads_record_name(r, i);
        const ads_expr *e = ads_record_expr(r, i);
        ads_value v;
        if (n.p[0] == 'X') {
            assert_int_equal(ads_record_builder_add(b, n.p, n.len, e, NULL), 0);
            continue;
        }
        assert_int_equal(ads_expr_eval(&v, e, NULL, a), 0);
        assert_int_equal(ads_record_builder_add_value(b, n.p, n.len, &v, NULL), 0);
    }
    memset(info, 0xa5, sizeof *info);
    assert_int_equal(ads_txn_begin(&txn, db, 0, NULL), 0);
    if (ads_txn_store(txn, ads_record_builder_finish(b), info, &err))
        fail_msg("store %s: %s (code %d)", text, err.message, err.code);
    assert_int_equal(ads_txn_commit(txn, NULL), 0);
    ads_arena_free(a);
}

static uint64_t history_rows(const char *type)
{
    ads_txn *txn;
    const ads_type *t;
    ads_type_counts tc;
    assert_int_equal(ads_txn_begin(&txn, db, ADS_TXN_READONLY, NULL), 0);
    assert_int_equal(ads_txn_type(&t, txn, type, strlen(type), NULL), 0);
    assert_int_equal(ads_txn_type_counts(&tc, txn, t, NULL), 0);
    ads_txn_abort(txn);
    return tc.history;
}

/* Every value type: the same record again (attributes in another order, or
 * only some of them: the merged row is the same) appends nothing and the
 * latest row keeps its date; a value that differs only in spelling is a
 * change, as the store would otherwise lose the new spelling. */
/* Keys of strings around the length a key string is encoded in parts of
 * (engine/key.c escaped(): 256 bytes): each is its own record, and the
 * same text in other case names the same record. */
static void key__long_strings_fold_and_stay_apart(void **state)
{
    (void)state;
    static const int lens[] = {253, 254, 255, 256, 257, 300, 511, 512, 513};
    enum { NL = sizeof lens / sizeof lens[0] };
    char name[600], text[700], key[700];
    ads_error err;
    for (int up = 0; up < 2; up++) {
        for (int i = 0; i < NL; i++) {
            memset(name, up ? 'Q' : 'q', (size_t)lens[i]);
            name[lens[i]] = 0;
            snprintf(text, sizeof text, "[ AdType = \"Machine\"; Name = \"%s\"; V = %d ]", name,
                     10 * up + i);
            if (ts_store(db, &err, text))
                fail_msg("%d: %s", lens[i], err.message);
        }
    }
    assert_int_equal(ts_count(db, "Machine", false), NL);
    for (int i = 0; i < NL; i++) {
        memset(name, 'q', (size_t)lens[i]);
        name[lens[i]] = 0;
        snprintf(key, sizeof key, "{ \"%s\" }", name);
        char want[8];
        snprintf(want, sizeof want, "%d", 10 + i);
        char *got = ts_attr(db, "Machine", key, "V");
        assert_string_equal(got, want);
        free(got);
    }
}

/* A stored key is checked to frame key values on every read (engine/key.c,
 * ads_key__check_stored), eight bytes at a time where it can: a string key
 * of every length up to 40 bytes, with a 00 byte (escaped as 00 ff) or
 * without, passes; an upper-case letter at any offset, a 00 that is not
 * escaped, or a missing end fails. */
/* The row checksum is XXH3-64's low half at every length: the short forms,
 * the long one (AVX2 where the CPU has it) over whole and partial 64-byte
 * stripes and 1024-byte blocks, from any alignment. */
static void row__checksum_is_xxh3_at_every_length(void **state)
{
    (void)state;
    enum { MAX = 3000 };
    unsigned char *buf = malloc(MAX + 8);
    assert_non_null(buf);
    uint32_t x = 17;
    for (size_t i = 0; i < MAX + 8; i++) {
        x = x * 1103515245u + 12345u;
        buf[i] = (unsigned char)(x >> 16);
    }
    for (size_t len = 0; len <= MAX; len++) {
        for (size_t at = 0; at < 8; at += len % 7 == 0 ? 1 : 8) {
            uint32_t want = (uint32_t)XXH3_64bits(buf + at, len);
            if (ads_row__checksum(buf + at, len) != want)
                fail_msg("length %zu at %zu: the checksum is not XXH3-64's", len, at);
        }
    }
    free(buf);
}

/* A stored row of data_len bytes of data under the key of "name", into b. */
static void long_row(ads_buf *b, ads_buf *key, size_t data_len)
{
    ads_buf_add(key, "\0\0\0\x10", 4);
    ads_value v = ads_string("name", 4);
    assert_int_equal(ads_key__value(key, &v, "Name", NULL), 0);
    unsigned char *data = malloc(data_len);
    assert_non_null(data);
    for (size_t i = 0; i < data_len; i++)
        data[i] = (unsigned char)(i * 31 + 7);
    ads_row__build(b, (const unsigned char *)key->p, key->len, 0, T0, 3600, 1700000000000000,
                   NULL, 0, data, data_len);
    free(data);
    assert_false(b->failed);
}

/* Every byte of a stored row is covered: flipping any bit of any byte, in
 * rows that take each form of the checksum, fails the read. */
static void row__a_flipped_bit_anywhere_fails_the_read(void **state)
{
    (void)state;
    static const size_t sizes[] = {3, 100, 200, 300, 1000, 2100};
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
        ads_buf b = ADS_BUF_INIT, key = ADS_BUF_INIT;
        long_row(&b, &key, sizes[s]);
        unsigned char *v = (unsigned char *)b.p;
        const unsigned char *k = (const unsigned char *)key.p;
        row_env env;
        ads_error err;
        assert_int_equal(ads_row__parse(&env, k, key.len, v, b.len, "row", &err), 0);
        assert_int_equal(env.len, sizes[s]);
        for (size_t at = 0; at < b.len; at++) {
            for (int bit = 0; bit < 8; bit += at % 5 == 0 ? 1 : 3) {
                v[at] ^= (unsigned char)(1u << bit);
                if (ads_row__parse(&env, k, key.len, v, b.len, "row", &err) != ADS_ECORRUPT)
                    fail_msg("row of %zu bytes: bit %d of byte %zu flipped and read", b.len, bit,
                             at);
                v[at] ^= (unsigned char)(1u << bit);
            }
        }
        v[b.len - 1] ^= 1;
        assert_int_equal(ads_row__parse(&env, k, key.len, v, b.len, "row", &err), ADS_ECORRUPT);
        assert_string_equal(err.message, "row: row checksum mismatch (the row is corrupt)");
        ads_buf_free(&b);
        ads_buf_free(&key);
    }
}

static void key__stored_keys_are_checked_at_every_offset(void **state)
{
    (void)state;
    for (size_t len = 0; len <= 40; len++) {
        for (int with_nul = 0; with_nul < 2; with_nul++) {
            char str[41];
            for (size_t i = 0; i < len; i++)
                str[i] = (char)('a' + (i * 7) % 26);
            if (with_nul && len)
                str[len / 2] = 0;
            ads_buf b = ADS_BUF_INIT;
            ads_buf_add(&b, "\0\0\0\x09", 4); /* a type id */
            ads_value v = ads_string(str, len);
            ads_error err;
            assert_int_equal(ads_key__value(&b, &v, "Name", &err), 0);
            unsigned char *k = (unsigned char *)b.p;
            assert_int_equal(ads_key__check_stored(k, b.len, NULL, 0, 0, 0), 0);
            /* the string's bytes sit between the tag (byte 4) and the 00 00 end */
            for (size_t at = 5; at + 2 < b.len; at++) {
                unsigned char was = k[at];
                if (was == 0 || was == 0xff)
                    continue; /* the escape of the 00 byte */
                k[at] = 'A' + (unsigned char)(at % 26);
                if (ads_key__check_stored(k, b.len, NULL, 0, 0, 0) == 0)
                    fail_msg("len %zu: an upper-case letter at %zu passed", len, at);
                k[at] = 0;
                if (ads_key__check_stored(k, b.len, NULL, 0, 0, 0) == 0)
                    fail_msg("len %zu: a 00 not escaped at %zu passed", len, at);
                k[at] = was;
            }
            assert_int_not_equal(ads_key__check_stored(k, b.len - 1, NULL, 0, 0, 0), 0);
            /* high bytes are not letters */
            if (len) {
                k[5] = 0xc1;
                assert_int_equal(ads_key__check_stored(k, b.len, NULL, 0, 0, 0), 0);
            }
            ads_buf_free(&b);
        }
    }
}

/* A string key value is written (engine/key.c, escaped) eight bytes at a
 * time where it can: for strings of every length up to 40 with an upper-case
 * letter, a 00 byte, a high byte or the letters next to 'A'..'Z' ('@', '[',
 * '`', '{') at every offset, the key is the tag, the string folded to lower
 * case with 00 as 00 ff, and 00 00, byte for byte as a byte loop gives it. */
static void key__string_values_are_folded_and_escaped_at_every_offset(void **state)
{
    (void)state;
    static const unsigned char odd[] = {'A', 'Z', 'M', 0, 0xc1, 0xff, '@', '[', '`', '{', 'a', 'z'};
    for (size_t len = 0; len <= 40; len++) {
        for (size_t o = 0; o < sizeof odd; o++) {
            for (size_t at = 0; at < (len ? len : 1); at++) {
                unsigned char str[41], want[100];
                for (size_t i = 0; i < len; i++)
                    str[i] = (unsigned char)((i % 3 ? 'a' : 'A') + (i * 7) % 26);
                if (len)
                    str[at] = odd[o];
                size_t w = 0;
                want[w++] = 0x40; /* overwritten below with the tag */
                for (size_t i = 0; i < len; i++) {
                    unsigned char c = str[i] >= 'A' && str[i] <= 'Z' ? str[i] + 32 : str[i];
                    want[w++] = c;
                    if (c == 0)
                        want[w++] = 0xff;
                }
                want[w++] = 0;
                want[w++] = 0;
                ads_buf b = ADS_BUF_INIT;
                ads_value v = ads_string((const char *)str, len);
                ads_error err;
                assert_int_equal(ads_key__value(&b, &v, "Name", &err), 0);
                want[0] = ((const unsigned char *)b.p)[0];
                if (b.len != w || memcmp(b.p, want, w) != 0)
                    fail_msg("len %zu, byte %02x at %zu: the key differs", len, odd[o], at);
                ads_buf_free(&b);
            }
        }
    }
}

static void unchanged__a_store_equal_to_the_latest_row_appends_nothing(void **state)
{
    (void)state;
    static const char *const all =
        "[ AdType = \"Machine\"; Name = \"u\"; I = 7; Big = 9007199254740993; R = 2.5; "
        "Neg = -2.5; Nan = real(\"NaN\"); Huge = 1e300; S = \"abc\"; B = true; "
        "L = { 1, \"x\", { 2.5, [ q = 1 ] } }; Rec = [ a = 1; B = { 1, 2 } ]; "
        "At = absTime(\"2020-01-02T03:04:05+01:00\"); Rt = relTime(\"1:30:00\"); "
        "Id = #42; Bl = blob(\"AQID\"); E = error; Xe = Memory * 2 + strcat(\"a\", S) ]";
    ads_write_info info;
    store_values(all, &info);
    assert_true(info.changed && info.created && info.latest);
    char *before = ts_latest(db, "Machine", "{ \"u\" }");
    assert_non_null(before);
    /* the same record later, in another order */
    ts_time(&ts, T0 + 10);
    store_values("[ Xe = Memory*2+strcat(\"a\",S); E = error; Bl = blob(\"AQID\"); Id = #42; "
                 "Rt = relTime(\"1:30:00\"); At = absTime(\"2020-01-02T03:04:05+01:00\"); "
                 "Rec = [ B = { 1, 2 }; a = 1 ]; L = { 1, \"x\", { 2.5, [ q = 1 ] } }; B = true; "
                 "S = \"abc\"; Huge = 1e300; Nan = real(\"NaN\"); Neg = -2.5; R = 2.5; "
                 "Big = 9007199254740993; I = 7; Name = \"u\"; AdType = \"Machine\" ]",
                 &info);
    assert_false(info.changed);
    assert_false(info.created);
    assert_true(info.latest);
    assert_true(info.ts == T0); /* the row that stays in effect */
    /* only some attributes, or removing one that is absent: the same row */
    store_values("[ AdType = \"Machine\"; Name = \"u\"; L = { 1, \"x\", { 2.5, [ q = 1 ] } } ]",
                 &info);
    assert_false(info.changed);
    store_values("[ AdType = \"Machine\"; Name = \"u\"; Nope = undefined ]", &info);
    assert_false(info.changed);
    /* a given _Timestamp later than the latest row: still the same row */
    store_values("[ AdType = \"Machine\"; Name = \"u\"; I = 7; _Timestamp = "
                 "absTime(\"2023-11-15T00:00:00Z\") ]",
                 &info);
    assert_false(info.changed);
    eq_free(ts_latest(db, "Machine", "{ \"u\" }"), before);
    free(before);
    assert_int_equal(history_rows("Machine"), 0);

    /* spellings that === calls equal are changes: each appends a row */
    static const char *const changes[] = {
        "S = \"ABC\"",                                   /* string case */
        "I = 7.0",                                       /* integer to real */
        "R = 2.5000001",                                 /* another real */
        "L = { 1.0, \"x\", { 2.5, [ q = 1 ] } }",        /* a list item */
        "Rec = [ A = 1; B = { 1, 2 } ]",                 /* a record's name spelling */
        "At = absTime(\"2020-01-02T02:04:05Z\")",         /* one instant, another zone */
        "Rt = relTime(\"1:30:01\")",                     /* a RelTime */
        "Id = #43",                                      /* an identifier */
        "Bl = blob(\"AQIE\")",                           /* a blob */
        "Xe = Memory * 3 + strcat(\"a\", S)",            /* an expression */
        "i = 7.0",                                       /* an attribute name's spelling */
        "E = undefined",                                 /* a removed attribute */
    };
    double now = T0 + 10;
    for (size_t i = 0; i < sizeof changes / sizeof changes[0]; i++) {
        char text[512];
        snprintf(text, sizeof text, "[ AdType = \"Machine\"; Name = \"u\"; %s ]", changes[i]);
        ts_time(&ts, now += 10);
        store_values(text, &info);
        if (!info.changed)
            fail_msg("%s: no row appended", changes[i]);
        assert_int_equal(history_rows("Machine"), i + 1);
        /* and the same again is not */
        ts_time(&ts, now += 10);
        store_values(text, &info);
        if (info.changed)
            fail_msg("%s again: a row appended", changes[i]);
    }
    assert_int_equal(history_rows("Machine"), sizeof changes / sizeof changes[0]);
}

/* A row dated in the past that equals the row in effect at its date changes
 * nothing there; one dated before every row, or different, is inserted. */
static void unchanged__a_backfilled_row_equal_to_the_row_in_effect_appends_nothing(void **state)
{
    (void)state;
    ads_write_info info;
    store_values("[ AdType = \"Machine\"; Name = \"b\"; M = 1 ]", &info);
    ts_time(&ts, T0 + 100);
    store_values("[ AdType = \"Machine\"; Name = \"b\"; M = 2 ]", &info);
    char *hist = ts_history(db, "Machine", "{ \"b\" }");
    /* M = 1 at T0 + 50: the row of T0 is in effect then */
    store_values("[ AdType = \"Machine\"; Name = \"b\"; M = 1; _Timestamp = "
                 "absTime(\"2023-11-14T22:14:10Z\") ]",
                 &info);
    assert_false(info.changed);
    assert_false(info.latest);
    assert_true(info.ts == T0);
    /* a tie with the first row's date */
    store_values("[ AdType = \"Machine\"; Name = \"b\"; M = 1; _Timestamp = "
                 "absTime(\"2023-11-14T22:13:20Z\") ]",
                 &info);
    assert_false(info.changed);
    eq_free(ts_history(db, "Machine", "{ \"b\" }"), hist);
    /* before every row: nothing was in effect, so it is a change */
    store_values("[ AdType = \"Machine\"; Name = \"b\"; M = 1; _Timestamp = "
                 "absTime(\"2023-11-14T22:00:00Z\") ]",
                 &info);
    assert_true(info.changed);
    /* M = 2 at T0 + 50 differs from the row in effect there */
    store_values("[ AdType = \"Machine\"; Name = \"b\"; M = 2; _Timestamp = "
                 "absTime(\"2023-11-14T22:14:10Z\") ]",
                 &info);
    assert_true(info.changed);
    assert_false(info.latest);
    assert_int_equal(history_rows("Machine"), 3);
    free(hist);
}

/* A deleted record stored again with the attributes it had is a change (it
 * comes back); storing it deleted again is not. */
static void unchanged__a_deleted_record_stored_again_is_a_change(void **state)
{
    (void)state;
    ads_write_info info;
    store_values("[ AdType = \"Machine\"; Name = \"d\"; M = 1 ]", &info);
    ts_time(&ts, T0 + 10);
    store_values("[ AdType = \"Machine\"; Name = \"d\"; M = 1; _Deleted = true ]", &info);
    assert_true(info.changed);
    ts_time(&ts, T0 + 20);
    store_values("[ AdType = \"Machine\"; Name = \"d\"; M = 1; _Deleted = true ]", &info);
    assert_false(info.changed);
    ts_time(&ts, T0 + 30);
    store_values("[ AdType = \"Machine\"; Name = \"d\"; M = 1 ]", &info);
    assert_true(info.changed);
    assert_true(info.created);
    eq_free(ts_attr(db, "Machine", "{ \"d\" }", "{ M, _Deleted, _Timestamp }"),
            "{ 1, false, `2023-11-14T22:13:50Z` }");
    assert_int_equal(history_rows("Machine"), 2);
}

/* The quick comparison of a given record with the latest row (names in
 * one, attribute ids in the other, compared a few bytes at a time) sees a
 * change of one byte in any value or name, whatever its encoding's length:
 * 1 byte, 4-8 and 9 bytes (reals, big integers, strings, names), over 16
 * (a long string, a list), times. Each record is stored, stored again
 * unchanged (no row), then with one attribute changed (a row). */
static void unchanged__a_change_of_one_byte_anywhere_is_a_change(void **state)
{
    (void)state;
    static const char *const pairs[][2] = {
        {"I = 7", "I = 8"},
        {"R = 2.5", "R = 3.5"},
        {"Big = 9007199254740993", "Big = 9007199254740995"},
        {"S4 = \"abcd\"", "S4 = \"abce\""},
        {"S8 = \"abcdefgh\"", "S8 = \"abcdefgi\""},
        {"S8 = \"abcdefgh\"", "S8 = \"bbcdefgh\""},
        {"S20 = \"abcdefghijklmnopqrst\"", "S20 = \"abcdefghijklmnopqrsu\""},
        {"B = true", "B = false"},
        {"At = absTime(\"2020-01-02T03:04:05Z\")", "At = absTime(\"2020-01-02T03:04:06Z\")"},
        {"L = { 1, 2, \"xyzxyzxyzxyzxyzxyz\" }", "L = { 1, 2, \"xyzxyzxyzxyzxyzxyy\" }"},
        {"LongNameA = 1", "LongNameB = 1"},
        {"Abcd = 1", "Abce = 1"},
        {"Q = 1", "Z = 1"},
    };
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        char name[16], a[200], b[200];
        snprintf(name, sizeof name, "c%zu", i);
        snprintf(a, sizeof a, "[ AdType = \"Machine\"; Name = \"%s\"; M = 1; %s; Zz = 2 ]", name,
                 pairs[i][0]);
        snprintf(b, sizeof b, "[ AdType = \"Machine\"; Name = \"%s\"; M = 1; %s; Zz = 2 ]", name,
                 pairs[i][1]);
        ads_write_info info;
        ts_time(&ts, T0 + 100.0 * (double)i);
        store_values(a, &info);
        assert_true(info.changed);
        ts_time(&ts, T0 + 100.0 * (double)i + 10);
        store_values(a, &info);
        if (info.changed)
            fail_msg("%s: stored again, seen as a change", pairs[i][0]);
        ts_time(&ts, T0 + 100.0 * (double)i + 20);
        store_values(b, &info);
        if (!info.changed)
            fail_msg("%s then %s: not seen as a change", pairs[i][0], pairs[i][1]);
    }
}

/* Rows dated by their own _Timestamp (a snapshot's, a backfill's) are
 * found unchanged through their names' shape (engine/names.c), compared
 * with the latest row id by id: the same answers as the full merge. Every
 * pair of the test above, each record given three times with a later
 * _Timestamp each time (a, a, then b), in the shape the records before it
 * left; then records that lose or gain an attribute, carry _Deleted, or
 * give an attribute as undefined in a known shape. */
static void unchanged__rows_dated_by_timestamp_compared_by_their_shape(void **state)
{
    (void)state;
    static const char *const pairs[][2] = {
        {"I = 7", "I = 8"},
        {"I = 7", "I = 300"},
        {"R = 2.5", "R = 3.5"},
        {"S4 = \"abcd\"", "S4 = \"abce\""},
        {"S20 = \"abcdefghijklmnopqrst\"", "S20 = \"abcdefghijklmnopqrsu\""},
        {"S20 = \"abcdefghijklmnopqrst\"", "S20 = \"abcdefghijklmnopqrs\""},
        {"B = true", "B = false"},
        {"L = { 1, 2, \"xyz\" }", "L = { 1, 2, \"xyy\" }"},
        {"Abcd = 1", "Abce = 1"},
    };
    ads_write_info info;
    double at = T0;
    char text[300];
    for (int round = 0; round < 2; round++) /* the second finds every shape known */
        for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++)
            for (int k = 0; k < 3; k++) {
                snprintf(text, sizeof text,
                         "[ AdType = \"Machine\"; Name = \"t%zu\"; M = 1; %s; Zz = 2; "
                         "_Timestamp = %.0f ]",
                         i, pairs[i][k == 2 || (round == 1 && k < 2)], at += 10);
                store_values(text, &info);
                bool want = k == 0 ? round == 0 : k == 2 && round == 0;
                if (info.changed != want)
                    fail_msg("round %d, %s, store %d: changed %d, not %d", round,
                             pairs[i][0], k, info.changed, want);
            }
    /* given rows of an attribute fewer than the latest (merged: unchanged),
     * one more, undefined, then _Deleted false, true and false again */
    static const char *const seq[][2] = {
        {"M = 1; N = 2; Zz = 2", "1"},
        {"M = 1; Zz = 2", "0"},
        {"M = 1; N = 2; Zz = 2", "0"},
        {"M = 1; N = undefined; Zz = 2", "1"},
        {"M = 1; Zz = 2", "0"},
        {"M = 1; N = 3; Zz = 2", "1"},
        {"M = 1; N = 3; Zz = 2", "0"},
        {"M = 1; N = 3; Zz = 2; _Deleted = false", "0"},
        {"M = 1; N = 3; Zz = 2; _Deleted = false", "0"},
        {"M = 1; N = 3; Zz = 2; _Deleted = true", "1"},
        {"M = 1; N = 3; Zz = 2; _Deleted = true", "0"},
        {"M = 1; N = 3; Zz = 2; _Deleted = false", "1"},
        {"M = 1; N = 3; Zz = 2", "0"},
    };
    for (size_t j = 0; j < sizeof seq / sizeof seq[0]; j++) {
        snprintf(text, sizeof text,
                 "[ AdType = \"Machine\"; Name = \"u\"; %s; _Timestamp = %.0f ]", seq[j][0],
                 at += 10);
        store_values(text, &info);
        if (info.changed != (seq[j][1][0] == '1'))
            fail_msg("store %zu (%s): changed %d", j, seq[j][0], info.changed);
    }
    eq_free(ts_attr(db, "Machine", "{ \"u\" }", "{ M, N, Zz, _Deleted }"),
            "{ 1, 3, 2, false }");
    snprintf(text, sizeof text,
             "[ AdType = \"Machine\"; Name = \"u\"; M = 1; N = 3; Zz = 2; _Deleted = true; "
             "_Timestamp = %.0f ]",
             at += 10);
    store_values(text, &info);
    assert_true(info.changed);
    eq_free(ts_attr(db, "Machine", "{ \"u\" }", "_Deleted"), "true");
}

/* KeepUnchangedRows = true on the Type: every store appends ("last seen"). */
static void unchanged__keep_unchanged_rows_keeps_every_row(void **state)
{
    (void)state;
    ads_write_info info;
    ts_declare(db, "Seen", "Name", "KeepUnchangedRows = true;");
    store_values("[ AdType = \"Seen\"; Name = \"s\"; M = 1 ]", &info);
    ts_time(&ts, T0 + 10);
    store_values("[ AdType = \"Seen\"; Name = \"s\"; M = 1 ]", &info);
    assert_true(info.changed);
    eq_free(ts_attr(db, "Seen", "{ \"s\" }", "_Timestamp"), "`2023-11-14T22:13:30Z`");
    assert_int_equal(history_rows("Seen"), 1);
    /* the Type record itself, stored again unchanged, appends nothing */
    store_values("[ AdType = \"Type\"; ForType = \"Seen\"; KeyAttributes = { \"Name\" }; "
                 "KeepUnchangedRows = true ]",
                 &info);
    assert_false(info.changed);
    store_fails("[ AdType = \"Type\"; ForType = \"Bad\"; KeyAttributes = { \"Name\" }; "
                "KeepUnchangedRows = 1 ]",
                ADS_EINVAL, "type Bad: KeepUnchangedRows must be a boolean");
    /* a retention of nothing would read as "no retention": refused */
    store_fails("[ AdType = \"Type\"; ForType = \"Bad\"; KeyAttributes = { \"Name\" }; "
                "HistoryRetention = `0s` ]",
                ADS_EINVAL,
                "type Bad: HistoryRetention must be a positive RelTime (leave it out to keep "
                "all history)");
    store_fails("[ AdType = \"Type\"; ForType = \"Bad\"; KeyAttributes = { \"Name\" }; "
                "HistoryRetention = -`1h` ]",
                ADS_EINVAL,
                "type Bad: HistoryRetention must be a positive RelTime (leave it out to keep "
                "all history)");
}

/* A bulk load of the same snapshot again: every record unchanged, counted,
 * and nothing appended; a snapshot where one record changed appends one. */
static void unchanged__a_bulk_load_counts_unchanged_records(void **state)
{
    (void)state;
    ads_arena *a = ads_arena_new();
    for (int pass = 0; pass < 3; pass++) {
        ads_bulk *b;
        ads_error err;
        ads_bulk_options opt = {.batch = 2};
        ts_time(&ts, T0 + 60 * pass);
        assert_int_equal(ads_bulk_begin(&b, db, &opt, &err), 0);
        for (int i = 0; i < 5; i++) {
            char text[200];
            snprintf(text, sizeof text, "[ AdType = \"Machine\"; Name = \"n%d\"; M = %d ]", i,
                     pass == 2 && i == 3 ? 99 : i);
            const ads_record *r;
            assert_int_equal(ads_record_parse(&r, a, text, strlen(text), NULL), 0);
            assert_int_equal(ads_bulk_add(b, r, &err), 0);
        }
        assert_int_equal(ads_bulk_flush(b, &err), 0);
        assert_int_equal(ads_bulk_committed(b), 5);
        assert_int_equal(ads_bulk_unchanged(b), pass == 0 ? 0 : pass == 1 ? 5 : 4);
        assert_int_equal(ads_bulk_end(b, &err), 0);
    }
    assert_int_equal(history_rows("Machine"), 1);
    ads_arena_free(a);
}

/* ---- retention ---- */

/* The dates of every row of a record, "+secs" from T0 each, "d" for a
 * deleted row, "*" for the latest. */
static char *row_dates(const char *type, const char *name)
{
    ads_txn *txn;
    const ads_type *t;
    ads_row row, *r;
    ads_scan *s;
    ads_arena *a = ads_arena_new();
    ads_value key = ads_string(name, strlen(name));
    char *out = calloc(1, 4096);
    assert_non_null(out);
    assert_int_equal(ads_txn_begin(&txn, db, ADS_TXN_READONLY, NULL), 0);
    assert_int_equal(ads_txn_type(&t, txn, type, strlen(type), NULL), 0);
    if (ads_txn_get(txn, &row, t, &key, 1, a, NULL) == 1) {
        assert_int_equal(ads_history_open(&s, txn, &row, NULL, ADS_SCAN_DELETED, NULL), 0);
        while (ads_scan_next(&r, s, NULL) == 1)
            snprintf(out + strlen(out), 4096 - strlen(out), "%s+%g%s%s", *out ? " " : "",
                     r->ts - T0, r->deleted ? "d" : "", r->latest ? "*" : "");
        ads_scan_close(s);
    } else {
        strcpy(out, "absent");
    }
    ads_txn_abort(txn);
    ads_arena_free(a);
    return out;
}

/* Rows every 10 minutes for 3 hours under a 1 hour retention: each write
 * removes the record's rows that aged past now - 1 h, keeping the one in
 * effect at the cut; a type without a retention keeps everything. */
static void retention__writes_remove_rows_past_the_cut(void **state)
{
    (void)state;
    ts_declare(db, "Kept", "Name", "HistoryRetention = `1:00:00`;");
    for (int i = 0; i < 18; i++) {
        char text[200];
        ts_time(&ts, T0 + 600 * i);
        snprintf(text, sizeof text, "{ [ AdType = \"Kept\"; Name = \"k\"; V = %d ], "
                 "[ AdType = \"Machine\"; Name = \"k\"; V = %d ] }", i, i);
        store_ok(text);
    }
    /* now T0 + 10200 s, the cut T0 + 6600 s: the row of the cut and after */
    eq_free(row_dates("Kept", "k"), "+6600 +7200 +7800 +8400 +9000 +9600 +10200*");
    assert_int_equal(history_rows("Kept"), 6);
    assert_int_equal(history_rows("Machine"), 17);
    /* a row backfilled before the cut goes at once: it is not the row in
     * effect at the cut */
    store_ok("[ AdType = \"Kept\"; Name = \"k\"; V = 99; _Timestamp = `2023-11-14T23:00:00Z` ]");
    eq_free(row_dates("Kept", "k"), "+6600 +7200 +7800 +8400 +9000 +9600 +10200*");
    /* later (the cut T0 + 6900 s), one dated between the cut's row and the
     * cut becomes the row in effect at the cut, and the old one goes */
    ts_time(&ts, T0 + 10500);
    store_ok("[ AdType = \"Kept\"; Name = \"k\"; V = 98; _Timestamp = `2023-11-15T00:07:00Z` ]");
    eq_free(row_dates("Kept", "k"), "+6820 +7200 +7800 +8400 +9000 +9600 +10200*");
    eq_free(ts_attr(db, "Kept", "{ \"k\" }", "V"), "17");
}

/* ads_txn_trim_history at an explicit cut: the row in effect at the cut
 * stays; a cut after the latest row removes all history; a record deleted
 * before the cut goes whole, one deleted after it stays. */
static void retention__trim_at_a_cut_keeps_the_row_in_effect(void **state)
{
    (void)state;
    for (int i = 0; i < 6; i++) {
        char text[300];
        ts_time(&ts, T0 + 100 * i);
        snprintf(text, sizeof text, "{ [ AdType = \"Machine\"; Name = \"a\"; V = %d ], "
                 "[ AdType = \"Machine\"; Name = \"b\"; V = %d%s ], "
                 "[ AdType = \"Machine\"; Name = \"c\"; V = %d%s ] }",
                 i, i, i == 2 ? "; _Deleted = true" : "", i, i == 5 ? "; _Deleted = true" : "");
        store_ok(text);
    }
    /* b was deleted at +200 and stored again at +300: it is back */
    eq_free(row_dates("Machine", "b"), "+0 +100 +200d +300 +400 +500*");
    ads_txn *txn;
    ads_scan *s;
    ads_row *row;
    const ads_type *t;
    ads_trim_result res = {0, 0};
    assert_int_equal(ads_txn_begin(&txn, db, 0, NULL), 0);
    assert_int_equal(ads_txn_type(&t, txn, "Machine", 7, NULL), 0);
    assert_int_equal(ads_scan_open(&s, txn, t, NULL, ADS_SCAN_DELETED, NULL), 0);
    while (ads_scan_next(&row, s, NULL) == 1)
        assert_int_equal(ads_txn_trim_history(txn, row, T0 + 250, &res, NULL), 0);
    ads_scan_close(s);
    assert_int_equal(ads_txn_commit(txn, NULL), 0);
    eq_free(row_dates("Machine", "a"), "+200 +300 +400 +500*");
    eq_free(row_dates("Machine", "b"), "+200d +300 +400 +500*");
    eq_free(row_dates("Machine", "c"), "+200 +300 +400 +500d*");
    assert_int_equal(res.rows, 6);
    assert_int_equal(res.records, 0);
    /* a cut after every row: c, deleted at +500, goes whole */
    res.rows = res.records = 0;
    assert_int_equal(ads_txn_begin(&txn, db, 0, NULL), 0);
    assert_int_equal(ads_txn_type(&t, txn, "Machine", 7, NULL), 0);
    assert_int_equal(ads_scan_open(&s, txn, t, NULL, ADS_SCAN_DELETED, NULL), 0);
    while (ads_scan_next(&row, s, NULL) == 1)
        assert_int_equal(ads_txn_trim_history(txn, row, T0 + 1000, &res, NULL), 0);
    ads_scan_close(s);
    assert_int_equal(ads_txn_trim_history(txn, NULL, 0, NULL, NULL), ADS_EINVAL);
    assert_int_equal(ads_txn_commit(txn, NULL), 0);
    eq_free(row_dates("Machine", "a"), "+500*");
    eq_free(row_dates("Machine", "b"), "+500*");
    eq_free(row_dates("Machine", "c"), "absent");
    assert_int_equal(res.rows, 3 + 3 + 4);
    assert_int_equal(res.records, 1);
    assert_int_equal(history_rows("Machine"), 0);
}

/* A retention declared after the rows were written: ads_db_apply_retention
 * trims every record of every type that has one, and removes the records
 * deleted before the cut. */
static void retention__applied_in_full_to_a_store(void **state)
{
    (void)state;
    ts_declare(db, "Late", "Name", NULL);
    for (int i = 0; i < 10; i++) {
        char text[300];
        ts_time(&ts, T0 + 1000 * i);
        /* gone: deleted at +3000 s and not written again */
        snprintf(text, sizeof text, "{ [ AdType = \"Late\"; Name = \"x\"; V = %d ], "
                 "[ AdType = \"Late\"; Name = \"%s\"; V = %d%s ], "
                 "[ AdType = \"Machine\"; Name = \"x\"; V = %d ] }",
                 i, i <= 3 ? "gone" : "other", i, i == 3 ? "; _Deleted = true" : "", i);
        store_ok(text);
    }
    ts_declare(db, "Late", "Name", "HistoryRetention = `1:00:00`;");
    ads_trim_result res;
    ads_error err;
    assert_int_equal(ads_db_apply_retention(db, &res, &err), 0);
    /* now T0 + 9000, the cut T0 + 5400 */
    eq_free(row_dates("Late", "x"), "+5000 +6000 +7000 +8000 +9000*");
    eq_free(row_dates("Late", "gone"), "absent");
    assert_int_equal(res.records, 1);
    eq_free(row_dates("Late", "other"), "+5000 +6000 +7000 +8000 +9000*");
    assert_int_equal(res.rows, 5 + 4 + 1); /* x, gone and other */
    assert_int_equal(history_rows("Machine"), 9);
    /* again: nothing more to do */
    assert_int_equal(ads_db_apply_retention(db, &res, &err), 0);
    assert_int_equal(res.rows, 0);
}

/* Records of a type deleted before the cut disappear as further writes of
 * the type go, even writes to other records: each write examines the next
 * few records from where the type's last write stopped (8 per write, so
 * three writes pass all 20). A record deleted after the cut stays; an
 * aborted write purges nothing; where the sweep stopped survives a reopen. */
/* The sweep's quick look at a latest row reads its date from the row's own
 * envelope (the packed one keeps it after the zone, not at byte 8): deleted
 * records whose __SystemTimestamp ends in any byte all go. */
static void retention__the_sweep_reads_every_deletion_s_date(void **state)
{
    (void)state;
    ts_declare(db, "Gone", "Name", "HistoryRetention = `1:00:00`;");
    enum { N = 64 };
    char text[200];
    for (int i = 0; i < N; i++) {
        snprintf(text, sizeof text, "[ AdType = \"Gone\"; Name = \"r%02d\"; V = 1 ]", i);
        store_ok(text);
    }
    /* deletions a few microseconds apart: __SystemTimestamp's low byte
     * (the byte a reader at offset 8 would take for the date's top one)
     * runs through 0x40..0x7f and every other value */
    for (int i = 1; i < N; i++) {
        ts_time(&ts, T0 + 600 + (double)i * 0.000005 + (double)(i % 4) * 0.000064);
        snprintf(text, sizeof text, "[ AdType = \"Gone\"; Name = \"r%02d\"; _Deleted = true ]", i);
        store_ok(text);
    }
    assert_int_equal(ts_count(db, "Gone", true), N);
    /* past the cut: writes to r00 sweep on through the type */
    for (int i = 0; i < 3 * N; i++) {
        ts_time(&ts, T0 + 5000 + i);
        snprintf(text, sizeof text, "[ AdType = \"Gone\"; Name = \"r00\"; V = %d ]", 2 + i);
        store_ok(text);
    }
    assert_int_equal(ts_count(db, "Gone", true), 1);
    assert_int_equal(ts_verify(db), 0);
}

static void retention__writes_remove_records_deleted_before_the_cut(void **state)
{
    (void)state;
    ts_declare(db, "Gone", "Name", "HistoryRetention = `1:00:00`;");
    for (int i = 0; i < 20; i++) {
        char text[200];
        snprintf(text, sizeof text, "[ AdType = \"Gone\"; Name = \"r%02d\"; V = 1 ]", i);
        store_ok(text);
    }
    ts_time(&ts, T0 + 600);
    store_ok("{ [ AdType = \"Gone\"; Name = \"r03\"; _Deleted = true ], "
             "[ AdType = \"Gone\"; Name = \"r19\"; _Deleted = true ] }");
    ts_time(&ts, T0 + 3900);
    store_ok("[ AdType = \"Gone\"; Name = \"r10\"; _Deleted = true ]");
    /* the cut (T0 + 300) is before every deletion: nothing goes */
    assert_int_equal(ts_count(db, "Gone", true), 20);
    ts_time(&ts, T0 + 5000); /* the cut: T0 + 1400 */
    ads_txn *txn;
    const ads_record *rec;
    ads_arena *a = ads_arena_new();
    const char *w = "[ AdType = \"Gone\"; Name = \"r00\"; V = 2 ]";
    assert_int_equal(ads_record_parse(&rec, a, w, strlen(w), NULL), 0);
    assert_int_equal(ads_txn_begin(&txn, db, 0, NULL), 0);
    assert_int_equal(ads_txn_store(txn, rec, NULL, NULL), 0);
    ads_txn_abort(txn);
    assert_int_equal(ts_count(db, "Gone", true), 20);
    eq_free(row_dates("Gone", "r03"), "+0 +600d*");
    /* three writes, all to r00, reach r03 and r19, and leave r10 */
    for (int i = 0; i < 3; i++) {
        char text[200];
        ts_time(&ts, T0 + 5000 + i);
        snprintf(text, sizeof text, "[ AdType = \"Gone\"; Name = \"r00\"; V = %d ]", 3 + i);
        store_ok(text);
        if (i == 0) {
            ts_reopen_close(&ts);
            db = ts_reopen(&ts);
        }
    }
    eq_free(row_dates("Gone", "r03"), "absent");
    eq_free(row_dates("Gone", "r19"), "absent");
    eq_free(row_dates("Gone", "r10"), "+0 +3900d*");
    ads_txn *rtxn;
    const ads_type *t;
    ads_type_counts tc;
    assert_int_equal(ads_txn_begin(&rtxn, db, ADS_TXN_READONLY, NULL), 0);
    assert_int_equal(ads_txn_type(&t, rtxn, "Gone", 4, NULL), 0);
    assert_int_equal(ads_txn_type_counts(&tc, rtxn, t, NULL), 0);
    ads_txn_abort(rtxn);
    assert_int_equal(tc.records, 18);
    assert_int_equal(tc.deleted, 1);
    /* a type without a retention keeps its deleted records */
    store_ok("[ AdType = \"Machine\"; Name = \"m\"; _Deleted = true ]");
    ts_time(&ts, T0 + 90000);
    for (int i = 0; i < 3; i++)
        store_ok("[ AdType = \"Machine\"; Name = \"other\"; V = 1 ]");
    eq_free(row_dates("Machine", "m"), "+5002d*");
    ads_arena_free(a);
}

/* The rows of type's timeline over [t1, t2) as text, one line per row
 * (key after the type id, date, deleted, V), less each record's deletions
 * before its first row that is not one: what they say (nothing in effect)
 * is what a record removed whole says too. */
static char *window_text(ads_txn *txn, const char *type, double t1, double t2)
{
    const ads_type *t;
    ads_timeline *tl;
    ads_row *row;
    size_t rec;
    ads_arena *a = ads_arena_new();
    assert_int_equal(ads_txn_type(&t, txn, type, strlen(type), NULL), 0);
    assert_int_equal(ads_timeline_open(&tl, txn, t, t1, t2, NULL), 0);
    size_t nrec = ads_timeline_records(tl);
    ads_buf *per = calloc(nrec + 1, sizeof *per);
    bool *live = calloc(nrec + 1, sizeof *live);
    assert_true(per && live);
    int rc;
    while ((rc = ads_timeline_next(&row, &rec, tl, NULL)) == 1) {
        assert_true(rec < nrec);
        live[rec] |= !row->deleted;
        if (!live[rec])
            continue;
        const ads_record *r;
        ads_value v;
        ads_buf vb = ADS_BUF_INIT;
        assert_int_equal(ads_row_record(&r, row, 0, a, NULL), 0);
        assert_int_equal(ads_record_eval_attr(&v, r, "V", 1, a), 0);
        ads_value_unparse(&vb, &v);
        for (size_t i = 4; i < row->key_len; i++)
            ads_buf_printf(&per[rec], "%02x", row->key[i]);
        ads_buf_printf(&per[rec], " %.6f%s V=%s\n", row->ts - T0, row->deleted ? " deleted" : "",
                       ads_buf_cstr(&vb));
        ads_buf_free(&vb);
        ads_arena_reset(a);
    }
    assert_int_equal(rc, 0);
    ads_timeline_close(tl);
    ads_buf all = ADS_BUF_INIT;
    for (size_t i = 0; i < nrec; i++) {
        if (per[i].len)
            ads_buf_add(&all, per[i].p, per[i].len);
        ads_buf_free(&per[i]);
    }
    free(per);
    free(live);
    ads_arena_free(a);
    char *out = strdup(ads_buf_cstr(&all));
    ads_buf_free(&all);
    return out;
}

/* splitmix64: the same pseudo-random writes in every run. */
static uint64_t next_rand(uint64_t *s)
{
    uint64_t z = (*s += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

/* Random writes (stores, unchanged stores, deletions, records coming back,
 * rows backfilled up to an hour back) go to a type with a 1 hour retention
 * and to one keeping every row, as the clock moves on for 12 hours:
 * timelines over windows from the cut on give the same rows in both, and in
 * the end no record deleted before the cut is left. (A row backfilled
 * before the cut is outside what retention keeps: into a record removed
 * whole it makes the record anew, where a store keeping every row still
 * has the deletion after it; docs/storage.md says so.) */
static void retention__the_retained_window_answers_as_a_store_keeping_every_row(void **state)
{
    (void)state;
    ts_declare(db, "Full", "Name", NULL);
    ts_declare(db, "Cut", "Name", "HistoryRetention = `1:00:00`;");
    uint64_t rng = 12;
    double now = T0;
    for (int step = 0; step < 400; step++) {
        now += 30 + (double)(next_rand(&rng) % 180);
        ts_time(&ts, now);
        ads_buf text = ADS_BUF_INIT;
        ads_buf_adds(&text, "{ ");
        int nops = 1 + (int)(next_rand(&rng) % 4);
        for (int i = 0; i < nops; i++) {
            int name = (int)(next_rand(&rng) % 30), k = (int)(next_rand(&rng) % 100);
            int v = (int)(next_rand(&rng) % 4);
            char what[120];
            if (k < 15)
                snprintf(what, sizeof what, "_Deleted = true");
            else if (k < 25)
                snprintf(what, sizeof what, "V = %d; _Timestamp = absTime(%.0f)", v,
                         now - (double)(next_rand(&rng) % 3600));
            else
                snprintf(what, sizeof what, "V = %d", v);
            for (int ty = 0; ty < 2; ty++)
                ads_buf_printf(&text, "%s[ AdType = \"%s\"; Name = \"r%02d\"; %s ]",
                               i || ty ? ", " : "", ty ? "Cut" : "Full", name, what);
        }
        ads_buf_adds(&text, " }");
        store_ok(ads_buf_cstr(&text));
        ads_buf_free(&text);
        if (step % 40 != 39)
            continue;
        ads_txn *txn;
        assert_int_equal(ads_txn_begin(&txn, db, ADS_TXN_READONLY, NULL), 0);
        double cut = now - 3600;
        double w[3][2] = {{cut, now + 1}, {cut + 600, cut + 1800}, {cut, now - 60}};
        for (int i = 0; i < 3; i++) {
            char *full = window_text(txn, "Full", w[i][0], w[i][1]);
            char *kept = window_text(txn, "Cut", w[i][0], w[i][1]);
            if (strcmp(full, kept) != 0) {
                printf("keeping every row:\n%s\nunder retention:\n%s", full, kept);
                fail_msg("step %d, window %d: the timelines differ (printed above)", step, i);
            }
            assert_true(strlen(full) > 0);
            free(full);
            free(kept);
        }
        ads_txn_abort(txn);
    }
    /* four writes to one record pass all 30 records of Cut */
    for (int i = 0; i < 4; i++) {
        char text[120];
        snprintf(text, sizeof text, "[ AdType = \"Cut\"; Name = \"r00\"; V = %d ]", 10 + i);
        store_ok(text);
    }
    ads_txn *txn;
    const ads_type *t;
    ads_scan *s;
    ads_row *row;
    size_t gone = 0;
    assert_int_equal(ads_txn_begin(&txn, db, ADS_TXN_READONLY, NULL), 0);
    assert_int_equal(ads_txn_type(&t, txn, "Cut", 3, NULL), 0);
    assert_int_equal(ads_scan_open(&s, txn, t, NULL, ADS_SCAN_DELETED, NULL), 0);
    while (ads_scan_next(&row, s, NULL) == 1)
        gone += row->deleted && row->ts < now - 3600;
    ads_scan_close(s);
    assert_int_equal(ads_txn_type(&t, txn, "Full", 4, NULL), 0);
    assert_int_equal(ads_scan_open(&s, txn, t, NULL, ADS_SCAN_DELETED, NULL), 0);
    size_t full_deleted_before = 0;
    while (ads_scan_next(&row, s, NULL) == 1)
        full_deleted_before += row->deleted && row->ts < now - 3600;
    ads_scan_close(s);
    ads_txn_abort(txn);
    assert_int_equal(gone, 0);
    assert_true(full_deleted_before > 0); /* there was something to remove */
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(store__a_record_reads_back_with_its_timeline_attributes),
        T(store__merges_attributes_and_undefined_removes),
        T(store__expressions_are_kept_unevaluated),
        T(keys__compare_as_equivalence_does),
        T(keys__over_the_lmdb_limit_work),
        T(errors__say_what_is_wrong),
        T(types__dotted_names_and_case),
        T(types__key_change_and_removal_refused_while_records_exist),
        T(keyless__records_are_appended_with_increment_ids),
        T(autogen__ordered_random_and_keyed),
        T(autogen__a_generated_key_never_overwrites_an_explicit_one),
        T(backfill__older_rows_go_into_the_past),
        T(delete__appends_a_deleted_row_and_store_starts_afresh),
        T(delete__by_storing_deleted_and_undelete_by_put_row),
        T(purge__removes_every_row),
        T(limits__an_attribute_name_over_the_limit_is_refused),
        T(attributes__records_are_made_for_new_names),
        T(attributes__names_a_merge_brings_get_records),
        T(merge__writes_the_row_with_ids_the_encoder_would),
        T(clock__system_timestamp_never_goes_back),
        T(key__long_strings_fold_and_stay_apart),
        T(row__checksum_is_xxh3_at_every_length),
        T(row__a_flipped_bit_anywhere_fails_the_read),
        T(key__stored_keys_are_checked_at_every_offset),
        T(key__string_values_are_folded_and_escaped_at_every_offset),
        T(unchanged__a_store_equal_to_the_latest_row_appends_nothing),
        T(unchanged__a_backfilled_row_equal_to_the_row_in_effect_appends_nothing),
        T(unchanged__a_deleted_record_stored_again_is_a_change),
        T(unchanged__a_change_of_one_byte_anywhere_is_a_change),
        T(unchanged__rows_dated_by_timestamp_compared_by_their_shape),
        T(unchanged__keep_unchanged_rows_keeps_every_row),
        T(unchanged__a_bulk_load_counts_unchanged_records),
        T(retention__writes_remove_rows_past_the_cut),
        T(retention__trim_at_a_cut_keeps_the_row_in_effect),
        T(retention__applied_in_full_to_a_store),
        T(retention__writes_remove_records_deleted_before_the_cut),
        T(retention__the_sweep_reads_every_deletion_s_date),
        T(retention__the_retained_window_answers_as_a_store_keeping_every_row),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
