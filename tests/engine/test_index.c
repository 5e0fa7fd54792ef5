/*
 * tests/engine/test_index.c: secondary indexes in the engine: declaring
 * with `Indexed = true` builds over the records already there, every write
 * path keeps the entries (store, update, delete, purge, bulk load), spans
 * select by value as `===` normalises it (case, 123 and 123.0, undefined,
 * values with no key encoding), unions yield each record once, removing the
 * declaration drops the entries, restore rebuilds them, and verify catches a
 * damaged entry.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cmocka.h>
#include <lmdb.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/engine/helpers.h"

#define T0 1700000000.0

static tstore ts;
static ads_db *db;

static int setup(void **state)
{
    (void)state;
    db = ts_open(&ts, T0);
    ts_declare(db, "Job", "Id", NULL);
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

static void index_on(const char *attr, const char *on)
{
    char text[300];
    snprintf(text, sizeof text,
             "[ AdType = \"Attribute\"; ForType = \"Job\"; ForName = \"%s\"; Indexed = %s ]", attr,
             on);
    store_ok(text);
}

/* attr's Attribute record with Indexed = on and IndexWith = { with }. */
static void index_with(const char *attr, const char *on, const char *with)
{
    char text[300];
    snprintf(text, sizeof text,
             "[ AdType = \"Attribute\"; ForType = \"Job\"; ForName = \"%s\"; Indexed = %s; "
             "IndexWith = { %s } ]",
             attr, on, with);
    store_ok(text);
}

/* One term of a lookup: op and the value's ClassAd text. */
typedef struct term {
    const char *attr;
    ads_index_op op;
    const char *value;
} term;

/* The Ids the index scan of spans yields, in order, space-separated; ends
 * txn and frees a. */
static char *scan_ids(ads_txn *txn, const ads_type *t, ads_index_span **spans, size_t ns,
                      ads_arena *a)
{
    ads_error err;
    ads_scan *sc;
    ads_row *r;
    ads_buf b = ADS_BUF_INIT;
    const ads_expr *e;
    assert_int_equal(ads_expr_parse(&e, a, "Id", 2, &err), 0);
    assert_int_equal(ads_index_scan_open(&sc, txn, t, spans, ns, NULL, 0, &err), 0);
    int rc;
    while ((rc = ads_scan_next(&r, sc, &err)) == 1) {
        ads_value v;
        ads_view view = ads_row_view(r, NULL);
        ads_expr_eval(&v, e, &view, a);
        if (b.len)
            ads_buf_addc(&b, ' ');
        ads_value_unparse(&b, &v);
    }
    if (rc < 0)
        fail_msg("index scan: %s", err.message);
    ads_scan_close(sc);
    ads_txn_abort(txn);
    ads_arena_free(a);
    char *out = strdup(ads_buf_cstr(&b));
    ads_buf_free(&b);
    return out;
}

/* The Ids a lookup through the union of terms (each its own span unless
 * and is set: then all terms are intersected in one span) yields, in
 * order, space-separated; "-" when the attribute has no index. */
static char *lookup(const term *terms, size_t n, bool and)
{
    ads_arena *a = ads_arena_new();
    ads_txn *txn;
    const ads_type *t;
    ads_error err;
    ads_index_span *spans[8];
    size_t ns = 0;
    assert_int_equal(ads_txn_begin(&txn, db, ADS_TXN_READONLY, NULL), 0);
    assert_int_equal(ads_txn_type(&t, txn, "Job", 3, NULL), 0);
    for (size_t i = 0; i < n; i++) {
        ads_index_span *s;
        int rc = ads_index_span_new(&s, txn, t, terms[i].attr, strlen(terms[i].attr), a, &err);
        assert_true(rc >= 0);
        if (rc == 0) {
            ads_txn_abort(txn);
            ads_arena_free(a);
            return strdup("-");
        }
        const ads_expr *e;
        const ads_value *v;
        assert_int_equal(ads_expr_parse(&e, a, terms[i].value, strlen(terms[i].value), &err), 0);
        assert_int_equal(ads_expr_prepare(&e, a, e, &err), 0);
        assert_non_null(v = ads_expr_literal_value(e));
        assert_int_equal(ads_index_span_add(s, terms[i].op, v, &err), 0);
        if (and && ns)
            assert_int_equal(ads_index_span_and(spans[0], s, &err), 0);
        else
            spans[ns++] = s;
    }
    return scan_ids(txn, t, spans, ns, a);
}

/* The Ids a lookup through t's composite index (its first) yields, in
 * order: terms[i] is on the index's attribute at[i] (ascending; terms on
 * one attribute are intersected). "-" when the type has no composite
 * index; used: how many attributes the lookup covers. */
static char *lookup_composite(const term *terms, const size_t *at, size_t n, size_t *used)
{
    ads_arena *a = ads_arena_new();
    ads_txn *txn;
    const ads_type *t;
    ads_error err;
    ads_index_span *s = NULL, *parts[4] = {NULL, NULL, NULL, NULL};
    assert_int_equal(ads_txn_begin(&txn, db, ADS_TXN_READONLY, NULL), 0);
    assert_int_equal(ads_txn_type(&t, txn, "Job", 3, NULL), 0);
    for (size_t i = 0; ads_index_span_new_at(&s, txn, t, i, a, &err) == 1; i++)
        if (ads_index_span_nattrs(s) > 1)
            break;
    if (!s || ads_index_span_nattrs(s) < 2) {
        ads_txn_abort(txn);
        ads_arena_free(a);
        return strdup("-");
    }
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        size_t len;
        const char *name = ads_index_span_attr_at(s, at[i], &len);
        assert_non_null(name);
        assert_int_equal(strncasecmp(name, terms[i].attr, len), 0);
        ads_index_span *p;
        assert_int_equal(ads_index_span_part(&p, s, &err), 0);
        const ads_expr *e;
        const ads_value *v;
        assert_int_equal(ads_expr_parse(&e, a, terms[i].value, strlen(terms[i].value), &err), 0);
        assert_int_equal(ads_expr_prepare(&e, a, e, &err), 0);
        assert_non_null(v = ads_expr_literal_value(e));
        assert_int_equal(ads_index_span_add(p, terms[i].op, v, &err), 0);
        if (parts[at[i]])
            assert_int_equal(ads_index_span_and(parts[at[i]], p, &err), 0);
        else
            parts[at[i]] = p;
        m = at[i] + 1;
    }
    assert_int_equal(ads_index_span_compose(used, s, parts, m, &err), 0);
    return scan_ids(txn, t, &s, 1, a);
}

static void eq_free(char *got, const char *want)
{
    if (strcmp(got, want) != 0)
        fail_msg("got  %s\nwant %s", got, want);
    free(got);
}

static void load_jobs(void)
{
    store_ok("{ [ AdType = \"Job\"; Id = 1; Owner = \"alice\"; Status = 2; QDate = 100 ],"
             "  [ AdType = \"Job\"; Id = 2; Owner = \"ALICE\"; Status = 2.0; QDate = 150.5 ],"
             "  [ AdType = \"Job\"; Id = 3; Owner = \"bob\"; Status = 1; QDate = 200 ],"
             "  [ AdType = \"Job\"; Id = 4; Status = true; QDate = 250 ] }");
    /* alone, so that Status stays an expression (a list's records are
     * evaluated) */
    store_ok("[ AdType = \"Job\"; Id = 5; Owner = \"carol\"; Status := Id - 3; QDate = \"x\" ]");
}

static void index__built_over_existing_records(void **state)
{
    (void)state;
    load_jobs();
    term t1 = {"Owner", ADS_IX_EQ, "\"Alice\""};
    eq_free(lookup(&t1, 1, false), "-");
    index_on("Owner", "true");
    index_on("Status", "true");
    /* case-folded, as === compares; job 5's expression-free Owner too */
    eq_free(lookup(&t1, 1, false), "1 2");
    /* undefined: job 4 has no Owner */
    term t2 = {"Owner", ADS_IX_EQ, "undefined"};
    eq_free(lookup(&t2, 1, false), "4");
    /* 2 and 2.0 meet; true is 1; job 5's expression is read by every lookup */
    term t3 = {"Status", ADS_IX_EQ, "2"};
    eq_free(lookup(&t3, 1, false), "5 1 2");
    term t4 = {"Status", ADS_IX_LT, "2"};
    eq_free(lookup(&t4, 1, false), "5 3 4 1 2");
    /* the attribute name is case-insensitive */
    term t5 = {"STATUS", ADS_IX_GE, "2"};
    eq_free(lookup(&t5, 1, false), "5 1 2");
}

static void index__writes_keep_entries(void **state)
{
    (void)state;
    index_on("Owner", "true");
    load_jobs();
    term t1 = {"Owner", ADS_IX_EQ, "\"bob\""};
    eq_free(lookup(&t1, 1, false), "3");
    store_ok("[ AdType = \"Job\"; Id = 1; Owner = \"Bob\" ]");
    eq_free(lookup(&t1, 1, false), "1 3");
    /* a deleted record stays in the index (its latest row says deleted);
     * scans skip it unless they ask for deleted rows */
    ads_txn *txn;
    ads_row row;
    ads_arena *a = ads_arena_new();
    const ads_type *t;
    ads_value key = ads_int(3);
    assert_int_equal(ads_txn_begin(&txn, db, 0, NULL), 0);
    assert_int_equal(ads_txn_type(&t, txn, "Job", 3, NULL), 0);
    assert_int_equal(ads_txn_get(txn, &row, t, &key, 1, a, NULL), 1);
    assert_int_equal(ads_txn_delete(txn, &row, NULL, NULL), 0);
    assert_int_equal(ads_txn_commit(txn, NULL), 0);
    eq_free(lookup(&t1, 1, false), "1");
    assert_int_equal(ts_verify(db), 0);
    /* purged: gone from the index */
    assert_int_equal(ads_txn_begin(&txn, db, 0, NULL), 0);
    assert_int_equal(ads_txn_type(&t, txn, "Job", 3, NULL), 0);
    assert_int_equal(ads_txn_get(txn, &row, t, &key, 1, a, NULL), 1);
    assert_int_equal(ads_txn_purge(txn, &row, NULL), 0);
    assert_int_equal(ads_txn_commit(txn, NULL), 0);
    assert_int_equal(ts_verify(db), 0);
    /* a row backfilled into the past does not move the entry */
    store_ok("[ AdType = \"Job\"; Id = 1; Owner = \"zed\"; _Timestamp = 1000 ]");
    eq_free(lookup(&t1, 1, false), "1");
    /* a bulk load keeps them */
    ads_bulk *b;
    ads_error err;
    assert_int_equal(ads_bulk_begin(&b, db, NULL, &err), 0);
    for (int i = 10; i < 30; i++) {
        char text[200];
        const ads_record *rec;
        snprintf(text, sizeof text, "[ AdType = \"Job\"; Id = %d; Owner = \"%s\" ]", i,
                 i % 2 ? "BOB" : "dan");
        assert_int_equal(ads_record_parse(&rec, a, text, strlen(text), &err), 0);
        assert_int_equal(ads_bulk_add(b, rec, &err), 0);
    }
    assert_int_equal(ads_bulk_end(b, &err), 0);
    eq_free(lookup(&t1, 1, false), "1 11 13 15 17 19 21 23 25 27 29");
    /* one batch: records, the declaration of an index, more records (the
     * batch looked the type up before the index existed) */
    assert_int_equal(ads_bulk_begin(&b, db, NULL, &err), 0);
    const char *batch[] = {
        "[ AdType = \"Job\"; Id = 40; Status = 7 ]",
        "[ AdType = \"Attribute\"; ForType = \"Job\"; ForName = \"Status\"; Indexed = true ]",
        "[ AdType = \"Job\"; Id = 41; Status = 7 ]",
        "[ AdType = \"Attribute\"; ForType = \"Job\"; ForName = \"Owner\"; Indexed = false ]",
        "[ AdType = \"Job\"; Id = 42; Status = 7; Owner = \"bob\" ]"};
    for (size_t i = 0; i < sizeof batch / sizeof batch[0]; i++) {
        const ads_record *rec;
        assert_int_equal(ads_record_parse(&rec, a, batch[i], strlen(batch[i]), &err), 0);
        assert_int_equal(ads_bulk_add(b, rec, &err), 0);
    }
    assert_int_equal(ads_bulk_end(b, &err), 0);
    term t2 = {"Status", ADS_IX_EQ, "7"};
    eq_free(lookup(&t2, 1, false), "5 40 41 42"); /* 5: an expression, read by every lookup */
    eq_free(lookup(&t1, 1, false), "-");
    assert_int_equal(ts_verify(db), 0);
    ads_arena_free(a);
}

static void index__union_and_intersection(void **state)
{
    (void)state;
    load_jobs();
    index_on("Owner", "true");
    index_on("QDate", "true");
    /* a union of spans on two indexes yields each record once */
    term u[] = {{"Owner", ADS_IX_EQ, "\"alice\""}, {"QDate", ADS_IX_LE, "150.5"}};
    eq_free(lookup(u, 2, false), "1 2");
    term u2[] = {{"Owner", ADS_IX_EQ, "\"bob\""}, {"QDate", ADS_IX_GT, "150"}};
    eq_free(lookup(u2, 2, false), "3 2 4");
    /* two ranges on one index intersect; values of another kind never join
     * a numeric range (job 5's "x" is a string) */
    term r[] = {{"QDate", ADS_IX_GT, "120"}, {"QDate", ADS_IX_LT, "220"}};
    eq_free(lookup(r, 2, true), "2 3");
    term s[] = {{"QDate", ADS_IX_GE, "\"a\""}};
    eq_free(lookup(s, 1, false), "5");
}

static void index__dropped_with_declaration(void **state)
{
    (void)state;
    load_jobs();
    index_on("Owner", "true");
    term t1 = {"Owner", ADS_IX_EQ, "\"bob\""};
    eq_free(lookup(&t1, 1, false), "3");
    index_on("Owner", "false");
    eq_free(lookup(&t1, 1, false), "-");
    ads_index_stats s;
    (void)s;
    /* declared again: built again */
    index_on("Owner", "true");
    eq_free(lookup(&t1, 1, false), "3");
    ads_error err;
    assert_int_equal(ts_store(db, &err, "[ AdType = \"Attribute\"; ForType = \"Job\"; "
                                        "ForName = \"Owner\"; Indexed = 1 ]"),
                     ADS_EINVAL);
    assert_string_equal(err.message, "an Attribute record's Indexed must be true or false, not integer");
    assert_int_equal(ts_store(db, &err, "[ AdType = \"Attribute\"; ForType = \"Job\"; "
                                        "ForName = \"_Timestamp\"; Indexed = true ]"),
                     ADS_EINVAL);
    assert_string_equal(err.message,
                        "type Job: _Timestamp is a timeline attribute and cannot be indexed");
}

static int count_stats(void *ctx, const ads_index_stats *s);

static void declare_fails(const char *text, int code, const char *message)
{
    ads_error err;
    char full[400];
    snprintf(full, sizeof full, "[ AdType = \"Attribute\"; ForType = \"Job\"; %s ]", text);
    assert_int_equal(ts_store(db, &err, full), code);
    assert_string_equal(err.message, message);
}

/* A composite index (IndexWith on the Attribute record of its first
 * attribute): built over the records there, its entries the tuple of
 * values (=== normalised, undefined included, a value with no key
 * encoding sending the record to the entries every lookup reads), read by
 * a prefix of exact values with a range on the next attribute, changed and
 * dropped with its declaration; declarations that cannot be are refused
 * with what is wrong, and change nothing. */
static void index__composite(void **state)
{
    (void)state;
    load_jobs();
    store_ok("[ AdType = \"Job\"; Id = 6; Owner = \"Bob\"; Status = 3; QDate = 300 ]");
    index_with("Owner", "false", "\"Status\"");
    size_t used;
    const size_t a0[] = {0}, a01[] = {0, 1}, a011[] = {0, 1, 1};
    term bob = {"Owner", ADS_IX_EQ, "\"bob\""};
    eq_free(lookup_composite(&bob, a0, 1, &used), "5 3 6"); /* 5: Status is an expression */
    assert_int_equal(used, 1);
    term t2[] = {{"Owner", ADS_IX_EQ, "\"ALICE\""}, {"Status", ADS_IX_EQ, "2"}};
    eq_free(lookup_composite(t2, a01, 2, &used), "5 1 2");
    assert_int_equal(used, 2);
    term t3[] = {{"Owner", ADS_IX_EQ, "\"bob\""}, {"Status", ADS_IX_GT, "1"},
                 {"Status", ADS_IX_LE, "3"}};
    /* bounds are inclusive (the WHERE drops Status 1) */
    eq_free(lookup_composite(t3, a011, 3, &used), "5 3 6");
    term t4[] = {{"Owner", ADS_IX_EQ, "undefined"}, {"Status", ADS_IX_EQ, "1"}};
    eq_free(lookup_composite(t4, a01, 2, &used), "5 4"); /* true is 1 */
    term t5[] = {{"Owner", ADS_IX_LT, "\"b\""}, {"Status", ADS_IX_EQ, "2"}};
    eq_free(lookup_composite(t5, a01, 2, &used), "5 1 2"); /* a range ends the prefix */
    assert_int_equal(used, 1);
    /* no single index on Owner: the composite is not one */
    eq_free(lookup(&bob, 1, false), "-");
    /* the store's format marks the composite index */
    unsigned f;
    ads_error err;
    assert_int_equal(ads_db_format(&f, db, &err), 0);
    assert_int_equal(f, ADS_DB_FORMAT_CHUNKS); /* its rows and history were written first */
    char got[200] = "";
    assert_int_equal(ads_db_index_stats(db, count_stats, got, &err), 0);
    assert_string_equal(got, "Job.(owner, status)=6 ");
    /* writes move the tuple */
    store_ok("[ AdType = \"Job\"; Id = 3; Owner = \"bob\"; Status = 0 ]");
    eq_free(lookup_composite(t3, a011, 3, &used), "5 6");
    /* the errors */
    declare_fails("ForName = \"Owner\"; IndexWith = { \"Status\", \"owner\" }", ADS_EINVAL,
                  "type Job: the composite index on Owner names owner twice");
    declare_fails("ForName = \"Owner\"; IndexWith = { \"Status\", \"STATUS\" }", ADS_EINVAL,
                  "type Job: the composite index on Owner names STATUS twice");
    declare_fails("ForName = \"Owner\"; IndexWith = { \"_Timestamp\" }", ADS_EINVAL,
                  "type Job: _Timestamp is a timeline attribute and cannot be indexed");
    declare_fails("ForName = \"__Latest\"; IndexWith = { \"Owner\" }", ADS_EINVAL,
                  "type Job: __Latest is a timeline attribute and cannot be indexed");
    declare_fails("ForName = \"Owner\"; IndexWith = { Status }", ADS_EINVAL,
                  "type Job: IndexWith item 1 is not an attribute name (a non-empty string of at "
                  "most 200 bytes)");
    declare_fails("ForName = \"Owner\"; IndexWith = { \"a\", \"\" }", ADS_EINVAL,
                  "type Job: IndexWith item 2 is not an attribute name (a non-empty string of at "
                  "most 200 bytes)");
    declare_fails("ForName = \"Owner\"; IndexWith = \"Status\"", ADS_EINVAL,
                  "type Job: an Attribute record's IndexWith must be a list of attribute names, "
                  "not string");
    declare_fails("ForName = \"Owner\"; IndexWith = { \"a\", \"b\", \"c\", \"d\" }", ADS_EINVAL,
                  "type Job: IndexWith names 1 to 3 more attributes, not 4");
    declare_fails("ForName = \"\"; IndexWith = { \"a\" }", ADS_EINVAL,
                  "an Attribute record with IndexWith needs ForType and ForName");
    got[0] = 0;
    assert_int_equal(ads_db_index_stats(db, count_stats, got, &err), 0);
    assert_string_equal(got, "Job.(owner, status)=6 ");
    /* changed: (owner, qdate) replaces (owner, status); Indexed adds the
     * single index */
    index_with("Owner", "true", "\"QDate\"");
    got[0] = 0;
    assert_int_equal(ads_db_index_stats(db, count_stats, got, &err), 0);
    assert_string_equal(got, "Job.owner=6 Job.(owner, qdate)=6 ");
    term t6[] = {{"Owner", ADS_IX_EQ, "\"alice\""}, {"QDate", ADS_IX_GE, "120"}};
    eq_free(lookup_composite(t6, a01, 2, &used), "2");
    /* dropped with its declaration (a STORE merges: IndexWith is made
     * undefined) */
    store_ok("[ AdType = \"Attribute\"; ForType = \"Job\"; ForName = \"Owner\"; "
             "IndexWith = undefined ]");
    got[0] = 0;
    assert_int_equal(ads_db_index_stats(db, count_stats, got, &err), 0);
    assert_string_equal(got, "Job.owner=6 ");
    eq_free(lookup_composite(t6, a01, 2, &used), "-");
}

static int count_stats(void *ctx, const ads_index_stats *s)
{
    char *out = ctx;
    size_t n = strlen(out);
    snprintf(out + n, 200 - n, "%s.%s=%llu ", s->type, s->attr, (unsigned long long)s->entries);
    return 0;
}

static void index__stats_and_restore(void **state)
{
    (void)state;
    load_jobs();
    index_with("Owner", "true", "\"Status\", \"QDate\"");
    char got[200] = "";
    ads_error err;
    assert_int_equal(ads_db_index_stats(db, count_stats, got, &err), 0);
    assert_string_equal(got, "Job.owner=5 Job.(owner, status, qdate)=5 ");
    /* dump, restore elsewhere: the indexes are rebuilt */
    char dump[1200], dir[1200];
    snprintf(dump, sizeof dump, "%s.dump", ts.path);
    snprintf(dir, sizeof dir, "%s.restored", ts.path);
    FILE *f = fopen(dump, "wb");
    assert_non_null(f);
    assert_int_equal(ads_db_dump(db, f, NULL, NULL, &err), 0);
    fclose(f);
    f = fopen(dump, "rb");
    assert_int_equal(ads_restore(dir, f, NULL, NULL, &err), 0);
    fclose(f);
    ads_db *r;
    assert_int_equal(ads_db_open(&r, dir, 0, &err), 0);
    got[0] = 0;
    assert_int_equal(ads_db_index_stats(r, count_stats, got, &err), 0);
    assert_string_equal(got, "Job.owner=5 Job.(owner, status, qdate)=5 ");
    assert_int_equal(ts_verify(r), 0);
    unsigned fmt;
    assert_int_equal(ads_db_format(&fmt, r, &err), 0);
    assert_int_equal(fmt, ADS_DB_FORMAT_CHUNKS); /* holds composites; history in chunks */
    ads_db_close(r);
    char cmd[2600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' '%s'", dir, dump);
    assert_int_equal(system(cmd), 0);
}

/* A backup copies the index; compaction keeps it, entry for entry. */
static void index__backup_and_compact_keep_indexes(void **state)
{
    (void)state;
    load_jobs();
    index_with("Owner", "true", "\"Status\"");
    char got[200] = "", dir[1200];
    ads_error err;
    snprintf(dir, sizeof dir, "%s.backup", ts.path);
    assert_int_equal(ads_db_backup(db, dir, &err), 0);
    ads_db *b;
    assert_int_equal(ads_db_open(&b, dir, 0, &err), 0);
    assert_int_equal(ads_db_index_stats(b, count_stats, got, &err), 0);
    assert_string_equal(got, "Job.owner=5 Job.(owner, status)=5 ");
    assert_int_equal(ts_verify(b), 0);
    ads_db_close(b);
    ts_reopen_close(&ts);
    if (ads_db_compact(ts.path, NULL, NULL, &err))
        fail_msg("compact: %s", err.message);
    db = ts_reopen(&ts);
    got[0] = 0;
    assert_int_equal(ads_db_index_stats(db, count_stats, got, &err), 0);
    assert_string_equal(got, "Job.owner=5 Job.(owner, status)=5 ");
    assert_int_equal(ts_verify(db), 0);
    char cmd[1300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

static void report_count(void *ctx, const char *problem)
{
    char *out = ctx;
    size_t n = strlen(out);
    snprintf(out + n, 600 - n, "%s\n", problem);
}

/* Close the store, flip one bit of the byte at offset off into the only
 * place pattern is in its file (an index entry), reopen it: verify reports
 * exactly want (two problems). */
static void flip_and_verify(const char *pattern, size_t off, const char *want)
{
    ts_reopen_close(&ts);
    char file[1200];
    snprintf(file, sizeof file, "%s/data.mdb", ts.path);
    assert_int_equal(ts_flip_file(file, pattern, strlen(pattern), off, 0x01), 1);
    db = ts_reopen(&ts);
    ads_verify_result res;
    char msgs[600] = "";
    ads_error err;
    assert_int_equal(ads_db_verify(&res, db, report_count, msgs, &err), 0);
    assert_int_equal(res.problems, 2);
    assert_string_equal(msgs, want);
}

static void index__verify_catches_damaged_entry(void **state)
{
    (void)state;
    store_ok("[ AdType = \"Job\"; Id = 1; Owner = \"QUIRKYNAME\" ]");
    index_on("Owner", "true");
    /* the folded value is only in the index entry (the row keeps "QUIRKYNAME") */
    flip_and_verify("quirkyname", 3,
                    "type Job: the index on owner has an entry that does not match its "
                    "record's latest row\n"
                    "type Job: a record has no entry in the index on owner\n");
    /* declaring again rebuilds nothing (it is declared); dropping and
     * declaring does */
    index_on("Owner", "false");
    index_on("Owner", "true");
}

static void index__verify_catches_damaged_composite_entry(void **state)
{
    (void)state;
    store_ok("[ AdType = \"Job\"; Id = 1; Owner = \"QUIRKYNAME\"; Status = \"ODDSTATUS\" ]");
    index_with("Owner", "false", "\"Status\"");
    /* the folded values are only in the entry; the second one damaged */
    flip_and_verify("oddstatus", 2,
                    "type Job: the index on (owner, status) has an entry that does not match "
                    "its record's latest row\n"
                    "type Job: a record has no entry in the index on (owner, status)\n");
    /* dropping and declaring again rebuilds it */
    index_with("Owner", "false", "\"QDate\"");
    index_with("Owner", "false", "\"Status\"");
}

/* The store's format version as meta holds it (the store closed). */
static unsigned format_of(const char *path)
{
    MDB_env *env;
    MDB_txn *txn;
    MDB_dbi dbi;
    MDB_val k = {6, "format"}, v;
    assert_int_equal(mdb_env_create(&env), 0);
    assert_int_equal(mdb_env_set_maxdbs(env, 16), 0);
    assert_int_equal(mdb_env_open(env, path, MDB_RDONLY, 0600), 0);
    assert_int_equal(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn), 0);
    assert_int_equal(mdb_dbi_open(txn, "meta", 0, &dbi), 0);
    assert_int_equal(mdb_get(txn, dbi, &k, &v), 0);
    assert_int_equal(v.mv_size, 4);
    unsigned f = ((const unsigned char *)v.mv_data)[0];
    mdb_txn_abort(txn);
    mdb_env_close(env);
    return f;
}

/* A store is format 1 until its first index: then 2, which a build that
 * knows no indexes refuses (it would write rows without their entries). */
static void index__declaring_marks_the_store_format(void **state)
{
    (void)state;
    unsigned f;
    ads_error err;
    store_ok("[ AdType = \"Job\"; Id = 1; Owner = \"ann\" ]");
    /* the store's first row (setup declared the type) was written with
     * the packed envelope: format 6, which may hold indexes too, so
     * declaring one does not lower it (the declaration's Attribute record
     * moves a row to history, in a chunk: format 7, which may hold them
     * too) */
    assert_int_equal(ads_db_format(&f, db, &err), 0); /* as committed, at once */
    assert_int_equal(f, ADS_DB_FORMAT_ENVELOPE);
    index_on("Owner", "true");
    assert_int_equal(ads_db_format(&f, db, &err), 0);
    assert_true(f >= ADS_DB_FORMAT_ENVELOPE);
    ts_reopen_close(&ts);
    assert_int_equal(format_of(ts.path), f);
    db = ts_reopen(&ts);
}

/* A process killed while its declaring transaction is open (the index
 * built, not committed) leaves the store as it was: no index, nothing to
 * repair; declaring again builds it. */
static void index__killed_mid_declaration_leaves_store_usable(void **state)
{
    (void)state;
    ads_bulk *b;
    ads_error err;
    ads_arena *a = ads_arena_new();
    assert_int_equal(ads_bulk_begin(&b, db, NULL, &err), 0);
    for (int i = 0; i < 5000; i++) {
        char text[120];
        const ads_record *rec;
        snprintf(text, sizeof text, "[ AdType = \"Job\"; Id = %d; Owner = \"u%d\" ]", i, i % 7);
        assert_int_equal(ads_record_parse(&rec, a, text, strlen(text), &err), 0);
        assert_int_equal(ads_bulk_add(b, rec, &err), 0);
    }
    assert_int_equal(ads_bulk_end(b, &err), 0);
    ts_reopen_close(&ts);
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        ads_db *cdb;
        ads_txn *txn;
        const ads_record *rec;
        const char *decl = "[ AdType = \"Attribute\"; ForType = \"Job\"; ForName = \"Owner\"; "
                           "Indexed = true ]";
        if (ads_db_open(&cdb, ts.path, 0, NULL) || ads_record_parse(&rec, a, decl, strlen(decl), NULL) ||
            ads_txn_begin(&txn, cdb, 0, NULL) || ads_txn_store(txn, rec, NULL, NULL))
            _exit(3);
        raise(SIGKILL); /* built, not committed */
        _exit(4);
    }
    assert_true(pid > 0);
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
    db = ts_reopen(&ts);
    assert_int_equal(ts_verify(db), 0);
    term t1 = {"Owner", ADS_IX_EQ, "\"u3\""};
    eq_free(lookup(&t1, 1, false), "-");
    assert_int_equal(ts_count(db, "Job", false), 5000);
    index_on("Owner", "true");
    char *got = lookup(&t1, 1, false);
    assert_int_equal(strlen(got) > 0 && strncmp(got, "3 10 17", 7) == 0, 1);
    free(got);
    ads_arena_free(a);
}

/* The index table of the (closed) store at path: every entry as hex
 * "key=value" lines, malloc'd; *n the number of entries. */
static char *index_dump(const char *path, size_t *n)
{
    MDB_env *env;
    MDB_txn *txn;
    MDB_dbi dbi;
    MDB_cursor *c;
    MDB_val k, v;
    ads_buf b = ADS_BUF_INIT;
    assert_int_equal(mdb_env_create(&env), 0);
    assert_int_equal(mdb_env_set_maxdbs(env, 16), 0);
    assert_int_equal(mdb_env_open(env, path, MDB_RDONLY, 0600), 0);
    assert_int_equal(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn), 0);
    assert_int_equal(mdb_dbi_open(txn, "index", 0, &dbi), 0);
    assert_int_equal(mdb_cursor_open(txn, dbi, &c), 0);
    *n = 0;
    for (int rc = mdb_cursor_get(c, &k, &v, MDB_FIRST); rc == 0;
         rc = mdb_cursor_get(c, &k, &v, MDB_NEXT)) {
        char hex[4];
        for (size_t i = 0; i < k.mv_size; i++) {
            snprintf(hex, sizeof hex, "%02x", ((const unsigned char *)k.mv_data)[i]);
            ads_buf_add(&b, hex, 2);
        }
        ads_buf_addc(&b, '=');
        for (size_t i = 0; i < v.mv_size; i++) {
            snprintf(hex, sizeof hex, "%02x", ((const unsigned char *)v.mv_data)[i]);
            ads_buf_add(&b, hex, 2);
        }
        ads_buf_addc(&b, '\n');
        (*n)++;
    }
    mdb_cursor_close(c);
    mdb_txn_abort(txn);
    mdb_env_close(env);
    char *out = strdup(ads_buf_cstr(&b));
    ads_buf_free(&b);
    return out;
}

/* The i-th record of a load over 40 Ids: new records, updates, indexed
 * values of every kind (strings in two cases, numbers as int and real,
 * booleans, undefined, an expression), deletes; the first ones change one
 * record's Owner twice and another's back and forth. */
static void load_record(char *out, size_t cap, unsigned i, uint64_t *rnd)
{
    static const char *fixed[] = {
        "[ AdType = \"Job\"; Id = 5; Owner = \"amy\" ]",
        "[ AdType = \"Job\"; Id = 6; Owner = \"xi\"; Status = 1 ]",
        "[ AdType = \"Job\"; Id = 5; Owner = \"bo\" ]",
        "[ AdType = \"Job\"; Id = 6; Owner = \"yu\" ]",
        "[ AdType = \"Job\"; Id = 5; Owner = \"AMY\" ]",
        "[ AdType = \"Job\"; Id = 6; Owner = \"zed\"; Status = 2.0 ]",
        "[ AdType = \"Job\"; Id = 7; _Deleted = true ]",
        "[ AdType = \"Job\"; Id = 8; Owner = undefined; Status = undefined ]",
        "[ AdType = \"Job\"; Id = 9; Status = Id * 2 ]",
        "[ AdType = \"Job\"; Id = 7; Owner = \"back\" ]",
    };
    if (i < sizeof fixed / sizeof fixed[0]) {
        snprintf(out, cap, "%s", fixed[i]);
        return;
    }
    static const char *values[] = {"\"amy\"", "\"Amy\"", "\"bo\"", "1",     "1.0",
                                   "2",       "true",    "undefined", "\"\"", "Id + 1"};
    *rnd = *rnd * 6364136223846793005ull + 1442695040888963407ull;
    unsigned id = (unsigned)(*rnd >> 33) % 40;
    unsigned what = (unsigned)(*rnd >> 45) % 16;
    unsigned vo = (unsigned)(*rnd >> 50) % 10;
    unsigned vs = (unsigned)(*rnd >> 55) % 10;
    if (what == 0)
        snprintf(out, cap, "[ AdType = \"Job\"; Id = %u; _Deleted = true ]", id);
    else if (what < 6)
        snprintf(out, cap, "[ AdType = \"Job\"; Id = %u; Owner = %s ]", id, values[vo]);
    else if (what < 10)
        snprintf(out, cap, "[ AdType = \"Job\"; Id = %u; Status = %s; QDate = %u ]", id,
                 values[vs], 1000 + i);
    else
        snprintf(out, cap, "[ AdType = \"Job\"; Id = %u; Owner = %s; Status = %s; QDate = %u ]",
                 id, values[vo], values[vs], 2000 - i);
}

/* A bulk load (batches of 64 records: records stored several times in one
 * batch, values changed twice, deletes, undefined values, an index
 * declared and another dropped and declared again on the way, in batches
 * stored in key order and as they came, one value's entries queued in
 * descending key order) leaves exactly the index table that storing the
 * same records one by one does. */
static void index__bulk_load_leaves_the_index_of_row_by_row(void **state)
{
    (void)state;
    tstore one;
    ads_db *odb = ts_open(&one, T0);
    ts_declare(odb, "Job", "Id", NULL);
    ads_db *dbs[2] = {odb, db};
    for (int d = 0; d < 2; d++) {
        ads_db *keep = db;
        db = dbs[d];
        ts_declare(db, "Event", "", "AutoGenerateKey = true;");
        index_with("Owner", "true", "\"Status\"");
        index_on("Status", "true");
        for (int i = 0; i < 40; i += 3) {
            char text[200];
            snprintf(text, sizeof text,
                     "[ AdType = \"Job\"; Id = %d; Owner = \"u%d\"; Status = %d; QDate = %d ]", i,
                     i % 4, i % 3, 500 + i);
            store_ok(text);
        }
        db = keep;
    }
    ads_bulk_options opt = ADS_BULK_OPTIONS_INIT;
    opt.batch = 64;
    ads_bulk *b;
    ads_error err;
    ads_arena *a = ads_arena_new();
    uint64_t rnd = 42;
    assert_int_equal(ads_bulk_begin(&b, db, &opt, &err), 0);
    for (unsigned i = 0; i < 900; i++) {
        char text[300];
        const ads_record *rec;
        if (i >= 600 && i % 64 == 0) /* the batch as it came, its Ids descending */
            snprintf(text, sizeof text, "[ AdType = \"Event\"; What = %u ]", i);
        else if (i >= 600)
            snprintf(text, sizeof text,
                     "[ AdType = \"Job\"; Id = %u; Owner = \"zz\"; Status = 1; QDate = 7 ]",
                     1600 - i);
        else if (i == 150)
            snprintf(text, sizeof text, "[ AdType = \"Attribute\"; ForType = \"Job\"; "
                                        "ForName = \"QDate\"; Indexed = true; "
                                        "IndexWith = { \"Owner\" } ]");
        else if (i == 290 || i == 325) /* a generated key: the batch is stored as it came, so
                                           Status is dropped after its rows queued entries */
            snprintf(text, sizeof text, "[ AdType = \"Event\"; What = %u ]", i);
        else if (i == 300 || i == 330)
            snprintf(text, sizeof text, "[ AdType = \"Attribute\"; ForType = \"Job\"; "
                     "ForName = \"Status\"; Indexed = %s ]", i == 300 ? "false" : "true");
        else
            load_record(text, sizeof text, i, &rnd);
        if (ts_store(odb, &err, text))
            fail_msg("store %s: %s", text, err.message);
        assert_int_equal(ads_record_parse(&rec, a, text, strlen(text), &err), 0);
        if (ads_bulk_add(b, rec, &err))
            fail_msg("bulk %s: %s", text, err.message);
        if ((i & 63) == 63)
            ads_arena_reset(a);
    }
    assert_int_equal(ads_bulk_end(b, &err), 0);
    assert_int_equal(ts_verify(odb), 0);
    assert_int_equal(ts_verify(db), 0);
    ts_reopen_close(&one);
    ts_reopen_close(&ts);
    size_t n_one, n_bulk;
    char *want = index_dump(one.path, &n_one);
    char *got = index_dump(ts.path, &n_bulk);
    assert_int_equal(n_bulk, n_one);
    /* Owner, (Owner, Status), Status, QDate, (QDate, Owner): an entry a record */
    assert_int_equal(n_one, 5 * (40 + 295));
    assert_string_equal(got, want);
    free(want);
    free(got);
    db = ts_reopen(&ts);
    ts_close(&one);
    ads_arena_free(a);
}

/* An Attribute record of a type that is gone: dropping its old index has
 * nothing to do, and what it declares now is refused as on a fresh record. */
static void index__declaring_on_a_type_that_is_gone_is_refused(void **state)
{
    (void)state;
    ts_declare(db, "Gone", "Id", NULL);
    store_ok("[ AdType = \"Attribute\"; ForType = \"Gone\"; ForName = \"Owner\"; Indexed = true ]");
    ads_txn *txn;
    const ads_type *tt;
    ads_row row;
    ads_arena *a = ads_arena_new();
    ads_value key = ads_string("Gone", 4);
    assert_int_equal(ads_txn_begin(&txn, db, 0, NULL), 0);
    assert_int_equal(ads_txn_type(&tt, txn, "Type", 4, NULL), 0);
    assert_int_equal(ads_txn_get(txn, &row, tt, &key, 1, a, NULL), 1);
    assert_int_equal(ads_txn_delete(txn, &row, NULL, NULL), 0);
    assert_int_equal(ads_txn_commit(txn, NULL), 0);
    ads_arena_free(a);
    ads_error err;
    const char *fresh = "[ AdType = \"Attribute\"; ForType = \"Gone\"; ForName = \"Cmd\"; "
                        "Indexed = true ]";
    assert_int_equal(ts_store(db, &err, fresh), ADS_ENOTFOUND);
    const char *changed = "[ AdType = \"Attribute\"; ForType = \"Gone\"; ForName = \"Owner\"; "
                          "Indexed = false; IndexWith = { \"JobStatus\" } ]";
    assert_int_equal(ts_store(db, &err, changed), ADS_ENOTFOUND);
    if (!strstr(err.message, "no type named"))
        fail_msg("got: %s", err.message);
    /* dropping alone is fine */
    store_ok("[ AdType = \"Attribute\"; ForType = \"Gone\"; ForName = \"Owner\"; Indexed = false ]");
    assert_int_equal(ts_verify(db), 0);
}

/* A range on a composite index's last attribute whose bound, after a long
 * exact prefix, is longer than an entry may be: the bound is cut to a
 * prefix (wider), not the range dropped, so short values in it are found. */
static void index__composite_range_with_a_long_bound_finds_short_values(void **state)
{
    (void)state;
    char owner[301], text[700], lo[260], q_owner[310], q_lo[270];
    memset(owner, 's', 300);
    owner[300] = 0;
    memset(lo, 'a', 250);
    lo[250] = 0;
    index_with("Owner", "false", "\"Status\"");
    snprintf(text, sizeof text, "[ AdType = \"Job\"; Id = 100; Owner = \"%s\"; Status = \"zz\" ]",
             owner);
    store_ok(text);
    snprintf(text, sizeof text, "[ AdType = \"Job\"; Id = 101; Owner = \"%s\"; Status = \"a\" ]",
             owner);
    store_ok(text);
    snprintf(text, sizeof text, "[ AdType = \"Job\"; Id = 102; Owner = \"%s\"; Status = \"%sb\" ]",
             owner, lo);
    store_ok(text);
    snprintf(q_owner, sizeof q_owner, "\"%s\"", owner);
    snprintf(q_lo, sizeof q_lo, "\"%s\"", lo);
    size_t used;
    const size_t a01[] = {0, 1}, a011[] = {0, 1, 1};
    term ge[] = {{"Owner", ADS_IX_EQ, q_owner}, {"Status", ADS_IX_GE, q_lo}};
    /* 102's tuple is too long for an entry: it is in the bucket every lookup
     * reads (first); 100 and 101 are found in the range */
    eq_free(lookup_composite(ge, a01, 2, &used), "102 100");
    assert_int_equal(used, 2);
    term le[] = {{"Owner", ADS_IX_EQ, q_owner}, {"Status", ADS_IX_GT, "\"\""},
                 {"Status", ADS_IX_LE, q_lo}};
    eq_free(lookup_composite(le, a011, 3, &used), "102 101");
    /* an exact long value after the prefix: no entry can hold it, only the
     * bucket (102) is read */
    term eq[] = {{"Owner", ADS_IX_EQ, q_owner}, {"Status", ADS_IX_EQ, q_lo}};
    eq_free(lookup_composite(eq, a01, 2, &used), "102");
    assert_int_equal(ts_verify(db), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(index__built_over_existing_records, setup, teardown),
        cmocka_unit_test_setup_teardown(index__writes_keep_entries, setup, teardown),
        cmocka_unit_test_setup_teardown(index__union_and_intersection, setup, teardown),
        cmocka_unit_test_setup_teardown(index__dropped_with_declaration, setup, teardown),
        cmocka_unit_test_setup_teardown(index__stats_and_restore, setup, teardown),
        cmocka_unit_test_setup_teardown(index__backup_and_compact_keep_indexes, setup, teardown),
        cmocka_unit_test_setup_teardown(index__verify_catches_damaged_entry, setup, teardown),
        cmocka_unit_test_setup_teardown(index__verify_catches_damaged_composite_entry, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(index__composite, setup, teardown),
        cmocka_unit_test_setup_teardown(index__declaring_on_a_type_that_is_gone_is_refused, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(index__composite_range_with_a_long_bound_finds_short_values,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(index__declaring_marks_the_store_format, setup, teardown),
        cmocka_unit_test_setup_teardown(index__bulk_load_leaves_the_index_of_row_by_row, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(index__killed_mid_declaration_leaves_store_usable, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
