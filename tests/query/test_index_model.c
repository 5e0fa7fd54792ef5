/*
 * tests/query/test_index_model.c: the property that makes indexes safe:
 * every SELECT gives the same rows with and without them. Random stores
 * (mixed integers and reals, booleans, strings differing in case, values
 * left undefined, expressions, deletions, purges, rows backfilled into the
 * past, records re-keyed, indexes dropped and declared again between
 * statements) and random WHERE clauses over the indexed attributes (==,
 * ===, is, in, ranges on either side, isUndefined, AND and OR of them) run
 * with the planner forced onto every index it can use and with indexes
 * off; the rows must be equal, and verify must find the store sound. An
 * AND of exact terms on two indexes or more is answered by merging them
 * (engine/index_scan.c), an AND with a range by probing: both are counted
 * and must each be taken often.
 * The same for UPDATE, DELETE and PURGE with random WHERE clauses: two
 * stores made alike, one written through indexes and one by scans, must
 * end alike (with SETs that move the very index entries the write walks).
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
#include "tests/query/rows.h"

#define T0 1700000000.0
#define RECORDS 80
#define ROUNDS 40
#define QUERIES_PER_ROUND 60

static tstore ts, ts2;
static ads_db *db, *db2;
static uint64_t rng = 0x9e3779b97f4a7c15u;

static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static size_t pick(size_t n)
{
    return (size_t)(next() % n);
}

/* Values the records hold and the queries compare with. */
static const char *values[] = {"1",     "2",     "2.0",   "3",     "3.5",  "true",  "false",
                               "-1",    "0",     "1e300", "\"x\"", "\"X\"", "\"y\"", "\"abc\"",
                               "\"ABC\"", "\"b_c\"", "\"B_C\"", "\"\"",  "`2024-01-01T00:00:00Z`",
                               "`90`", "{ 1, 2 }"};
#define NVALUES (sizeof values / sizeof values[0])
static const char *attrs[] = {"A", "B", "S"};

static void store_ok(const char *text)
{
    ads_error err;
    if (ts_store(db, &err, text))
        fail_msg("store %s: %s", text, err.message);
}

/* A random record with key id: each attribute a value, an expression, or absent. */
static void random_record(char *out, size_t cap, int id, bool past)
{
    size_t n = (size_t)snprintf(out, cap, "[ AdType = \"Job\"; Id = %d; ", id);
    for (size_t i = 0; i < 3; i++) {
        size_t r = pick(10);
        if (r == 0)
            continue; /* absent (undefined) */
        if (r == 1)
            n += (size_t)snprintf(out + n, cap - n, "%s := Id %% 3; ", attrs[i]);
        else
            n += (size_t)snprintf(out + n, cap - n, "%s = %s; ", attrs[i], values[pick(NVALUES)]);
    }
    if (past)
        n += (size_t)snprintf(out + n, cap - n, "_Timestamp = %d; ", 1000 + (int)pick(1000));
    snprintf(out + n, cap - n, "Z = 1 ]");
}

static void declare(const char *attr, bool on)
{
    char text[200];
    snprintf(text, sizeof text,
             "[ AdType = \"Attribute\"; ForType = \"Job\"; ForName = \"%s\"; Indexed = %s ]", attr,
             on ? "true" : "false");
    store_ok(text);
}

/* A random IndexWith for attrs[i]: none (""), or one or both of the other
 * attributes in either order (a composite index starting at attrs[i]). */
static const char *random_with(size_t i)
{
    static char out[40];
    const char *j = attrs[(i + 1) % 3], *k = attrs[(i + 2) % 3];
    size_t r = pick(6);
    if (r == 0)
        return "";
    if (r < 3)
        snprintf(out, sizeof out, "\"%s\"", r == 1 ? j : k);
    else
        snprintf(out, sizeof out, "\"%s\", \"%s\"", r == 3 ? j : k, r == 3 ? k : j);
    return out;
}

/* attrs[i]'s Attribute record in store d: Indexed = on and, with not
 * empty, IndexWith = { with } (a composite index). */
static void declare_with(ads_db *d, size_t i, bool on, const char *with)
{
    char text[300];
    ads_error err;
    snprintf(text, sizeof text,
             "[ AdType = \"Attribute\"; ForType = \"Job\"; ForName = \"%s\"; Indexed = %s%s%s%s ]",
             attrs[i], on ? "true" : "false", *with ? "; IndexWith = { " : "", with,
             *with ? " }" : "");
    if (ts_store(d, &err, text))
        fail_msg("store %s: %s", text, err.message);
}

/* Random indexes on every attribute: single (mostly) and composite. */
static void random_indexes(ads_db *d)
{
    for (size_t i = 0; i < 3; i++) {
        bool on = pick(5) != 0;
        declare_with(d, i, on, random_with(i));
    }
}

static void run(ads_query *q, const char *stmt, ads_buf *out)
{
    ads_sink sink = {rows_begin, rows_row, rows_end, NULL};
    ads_exec_info info;
    ads_error err;
    ads_buf_clear(&rows_got);
    if (ads_query_exec(q, stmt, strlen(stmt), &sink, NULL, &info, &err))
        fail_msg("%s\n  failed: %s", stmt, err.message);
    ads_buf_clear(out);
    ads_buf_add(out, rows_got.p, rows_got.len);
}

static void mutate(void)
{
    char text[600];
    for (int k = 0; k < 10; k++) {
        int id = (int)pick(RECORDS);
        size_t what = pick(10);
        if (what < 5) {
            random_record(text, sizeof text, id, false);
            store_ok(text);
        } else if (what == 5) {
            random_record(text, sizeof text, id, true); /* backfilled: not latest */
            store_ok(text);
        } else if (what == 6) {
            snprintf(text, sizeof text, "DELETE FROM Job WHERE Id == %d", id);
            ads_query *q;
            assert_int_equal(ads_query_new(&q, db, NULL), 0);
            ads_buf b = ADS_BUF_INIT;
            ads_exec_info info;
            assert_int_equal(ads_query_exec(q, text, strlen(text), NULL, NULL, &info, NULL), 0);
            ads_buf_free(&b);
            ads_query_free(q);
        } else if (what == 7) {
            /* re-keyed: the record goes and comes back under another key */
            snprintf(text, sizeof text, "PURGE FROM Job WHERE Id == %d", id);
            ads_query *q;
            ads_exec_info info;
            assert_int_equal(ads_query_new(&q, db, NULL), 0);
            assert_int_equal(ads_query_exec(q, text, strlen(text), NULL, NULL, &info, NULL), 0);
            ads_query_free(q);
            random_record(text, sizeof text, RECORDS + id, false);
            store_ok(text);
        } else if (what == 8) {
            snprintf(text, sizeof text, "UPDATE Job SET A = B, B = S WHERE Id == %d", id);
            ads_query *q;
            ads_exec_info info;
            assert_int_equal(ads_query_new(&q, db, NULL), 0);
            assert_int_equal(ads_query_exec(q, text, strlen(text), NULL, NULL, &info, NULL), 0);
            ads_query_free(q);
        } else if (pick(2)) {
            const char *a = attrs[pick(3)];
            declare(a, false);
            declare(a, true);
        } else {
            /* composite indexes dropped, changed, declared */
            size_t i = pick(3);
            bool on = pick(4) != 0;
            declare_with(db, i, on, random_with(i));
        }
    }
}

/* A random term over an indexed attribute. */
static size_t random_term(char *out, size_t cap)
{
    const char *a = attrs[pick(3)];
    const char *v = values[pick(NVALUES)];
    static const char *ops[] = {"==", "===", "is", "<", "<=", ">", ">=", "=?=", "!="};
    switch (pick(6)) {
    case 0:
        return (size_t)snprintf(out, cap, "%s in { %s, %s }", a, v, values[pick(NVALUES)]);
    case 1:
        return (size_t)snprintf(out, cap, pick(2) ? "isUndefined(%s)" : "%s is undefined", a);
    case 2:
        return (size_t)snprintf(out, cap, "%s %s %s", v, ops[pick(9)], a);
    default:
        return (size_t)snprintf(out, cap, "%s %s %s", a, ops[pick(9)], v);
    }
}

static void random_where(char *out, size_t cap)
{
    size_t n = 0, terms = 1 + pick(3);
    for (size_t i = 0; i < terms; i++) {
        if (i)
            n += (size_t)snprintf(out + n, cap - n, pick(3) ? " && " : " || ");
        if (pick(4) == 0) {
            n += (size_t)snprintf(out + n, cap - n, "(");
            n += random_term(out + n, cap - n);
            n += (size_t)snprintf(out + n, cap - n, " || ");
            n += random_term(out + n, cap - n);
            n += (size_t)snprintf(out + n, cap - n, ")");
        } else {
            n += random_term(out + n, cap - n);
        }
    }
}

static void index_model__same_rows_with_and_without_indexes(void **state)
{
    (void)state;
    char text[600], stmt[1200];
    for (int id = 0; id < RECORDS; id++) {
        random_record(text, sizeof text, id, false);
        store_ok(text);
    }
    random_indexes(db);
    ads_query *with, *without;
    assert_int_equal(ads_query_new(&with, db, NULL), 0);
    assert_int_equal(ads_query_new(&without, db, NULL), 0);
    ads_query_use_indexes(with, ADS_INDEXES_ALWAYS);
    ads_query_use_indexes(without, ADS_INDEXES_OFF);
    ads_buf a = ADS_BUF_INIT, b = ADS_BUF_INIT;
    size_t cases = 0, nonempty = 0, merged = 0, probed = 0, composite = 0;
    for (int round = 0; round < ROUNDS; round++) {
        for (int k = 0; k < QUERIES_PER_ROUND; k++) {
            random_where(text, sizeof text);
            /* ORDER BY: rows through an index come in value order */
            snprintf(stmt, sizeof stmt, "SELECT Id, A, B, S FROM Job WHERE %s ORDER BY Id%s",
                     text, pick(4) == 0 ? " LIMIT 3" : "");
            /* which path the indexes take: a merge of exact terms, probes */
            char explain[1300];
            snprintf(explain, sizeof explain, "EXPLAIN %s", stmt);
            run(with, explain, &a);
            merged += strstr(ads_buf_cstr(&a), "merged in key order") != NULL;
            probed += strstr(ads_buf_cstr(&a), "each entry probed") != NULL;
            composite += strstr(ads_buf_cstr(&a), "index on Job.(") != NULL;
            run(with, stmt, &a);
            run(without, stmt, &b);
            if (strcmp(ads_buf_cstr(&a), ads_buf_cstr(&b)) != 0)
                fail_msg("%s\n  with indexes:\n%s  without:\n%s", stmt, ads_buf_cstr(&a),
                         ads_buf_cstr(&b));
            cases++;
            nonempty += a.len > 0;
        }
        mutate();
        if (round % 10 == 9)
            assert_int_equal(ts_verify(db), 0);
    }
    /* the cases are not all trivially empty, and both ways of an AND of
     * indexed terms are taken, and composite indexes are read (the rng is
     * fixed: 284 merges, 34 probes, 271 through a composite index) */
    assert_true(nonempty > cases / 4);
    if (merged < cases / 20 || probed < cases / 100 || composite < cases / 20)
        fail_msg("%zu merges, %zu probes and %zu composite indexes read in %zu cases", merged,
                 probed, composite, cases);
    ads_buf_free(&a);
    ads_buf_free(&b);
    ads_query_free(with);
    ads_query_free(without);
}

/* Run stmt on q1 (store db) and on q2 (store db2): the same outcome. */
static void both(ads_query *q1, ads_query *q2, const char *stmt)
{
    ads_exec_info i1, i2;
    ads_error e1, e2;
    int r1 = ads_query_exec(q1, stmt, strlen(stmt), NULL, NULL, &i1, &e1);
    int r2 = ads_query_exec(q2, stmt, strlen(stmt), NULL, NULL, &i2, &e2);
    if (r1 || r2)
        fail_msg("%s\n  failed: %s / %s", stmt, r1 ? e1.message : "-", r2 ? e2.message : "-");
    if (i1.rows != i2.rows)
        fail_msg("%s\n  %llu records with indexes, %llu without", stmt,
                 (unsigned long long)i1.rows, (unsigned long long)i2.rows);
}

/* Fail with the first line where x and y part. */
static void same_text(const char *x, const char *y, const char *what, const char *after)
{
    size_t i = 0, line = 0;
    while (x[i] && x[i] == y[i])
        i++;
    if (!x[i] && !y[i])
        return;
    while (i && x[i - 1] != '\n')
        i--;
    const char *ex = strchr(x + i, '\n'), *ey = strchr(y + i, '\n');
    for (size_t k = 0; k < i; k++)
        line += x[k] == '\n';
    fail_msg("after %s\n  %s, line %zu:\n  %.*s\n  %.*s", after, what, line + 1,
             (int)(ex ? (size_t)(ex - x - (ptrdiff_t)i) : strlen(x + i)), x + i,
             (int)(ey ? (size_t)(ey - y - (ptrdiff_t)i) : strlen(y + i)), y + i);
}

/* Every record of each store, deleted ones too: equal. */
static void same_stores(ads_query *q1, ads_query *q2, const char *after)
{
    static const char *all = "SELECT Id, A, B, S, Z, _Deleted FROM Job ORDER BY Id";
    /* q1 reads inside a write transaction (its index scans collect first) */
    static const char *all_in_txn =
        "SELECT Id, A, B, S, Z, _Deleted FROM Job WHERE A < 5 || A >= 5 || "
        "isUndefined(A) || S >= \"\" || S < \"\" || B == 1 || !isUndefined(A) ORDER BY Id";
    ads_buf a = ADS_BUF_INIT, b = ADS_BUF_INIT, c = ADS_BUF_INIT, d = ADS_BUF_INIT;
    run(q1, all, &a);
    run(q2, all, &b);
    run(q1, "BEGIN", &c);
    run(q1, all_in_txn, &c);
    run(q1, "COMMIT", &d);
    run(q2, all_in_txn, &d);
    same_text(ads_buf_cstr(&a), ads_buf_cstr(&b), "written through indexes / by scans", after);
    same_text(ads_buf_cstr(&d), ads_buf_cstr(&c),
              "read by a scan / through indexes in a write transaction", after);
    ads_buf_free(&a);
    ads_buf_free(&b);
    ads_buf_free(&c);
    ads_buf_free(&d);
}

/* A random UPDATE, DELETE or PURGE with a WHERE over the indexed
 * attributes; SETs write the indexed attributes themselves. */
static void random_write(char *out, size_t cap)
{
    char where[600];
    random_where(where, sizeof where);
    static const char *sets[] = {"A = B", "A = A + 1", "S = \"x\"", "B = undefined",
                                 "A = -A", "S = strcat(S, \"y\")", "B = 2.0", "A = B + 1"};
    size_t r = pick(10);
    if (r < 6)
        snprintf(out, cap, "UPDATE Job SET %s, Z = Z + 1 WHERE %s%s", sets[pick(8)], where,
                 pick(5) ? "" : " && !_Deleted");
    else if (r < 9)
        snprintf(out, cap, "DELETE FROM Job WHERE %s", where);
    else
        snprintf(out, cap, "PURGE FROM Job WHERE %s", where);
}

static void index_model__same_writes_with_and_without_indexes(void **state)
{
    (void)state;
    char text[600], stmt[1200];
    db2 = ts_open(&ts2, T0);
    ts_declare(db2, "Job", "Id", NULL);
    ads_query *with, *without;
    assert_int_equal(ads_query_new(&with, db, NULL), 0);
    assert_int_equal(ads_query_new(&without, db2, NULL), 0);
    ads_query_use_indexes(with, ADS_INDEXES_ALWAYS);
    ads_query_use_indexes(without, ADS_INDEXES_OFF);
    size_t writes = 0, changed = 0;
    for (int round = 0; round < 30; round++) {
        /* a fresh population now and then: records, backfills, indexes */
        for (int k = 0; k < (round % 10 == 0 ? RECORDS : 8); k++) {
            random_record(text, sizeof text, (int)pick(RECORDS), pick(8) == 0);
            snprintf(stmt, sizeof stmt, "STORE %s", text);
            both(with, without, stmt);
        }
        if (round == 0)
            for (size_t i = 0; i < 3; i++) {
                declare_with(db, i, true, random_with(i));
                ads_error err;
                snprintf(text, sizeof text,
                         "[ AdType = \"Attribute\"; ForType = \"Job\"; ForName = \"%s\"; "
                         "Indexed = true ]",
                         attrs[i]);
                if (ts_store(db2, &err, text))
                    fail_msg("%s", err.message);
            }
        for (int k = 0; k < 40; k++) {
            random_write(stmt, sizeof stmt);
            uint64_t before = ts_count(db, "Job", true);
            both(with, without, stmt);
            changed += ts_count(db, "Job", true) != before || strncmp(stmt, "UPDATE", 6) == 0;
            same_stores(with, without, stmt);
            writes++;
        }
        assert_int_equal(ts_verify(db), 0);
        assert_int_equal(ts_verify(db2), 0);
    }
    assert_true(writes == 1200 && changed > writes / 4);
    ads_query_free(with);
    ads_query_free(without);
    ts_close(&ts2);
    db2 = NULL;
}

/* A write whose SET moves the entries of the index it is read through:
 * each record is written once, whatever the walk would meet after. */
static void index_model__writes_that_move_their_index(void **state)
{
    (void)state;
    char text[200];
    for (int id = 0; id < 100; id++) {
        snprintf(text, sizeof text, "[ AdType = \"Job\"; Id = %d; A = %d; S = \"s%d\" ]", id,
                 id, id % 10);
        store_ok(text);
    }
    declare("A", true);
    declare("S", true);
    ads_query *q;
    assert_int_equal(ads_query_new(&q, db, NULL), 0);
    /* A rises past the walk's position: a walk that met moved entries
     * again would add more than 1 (or never end) */
    rows_expect(q, "EXPLAIN SELECT Id FROM Job WHERE A >= 90",
                "[ Step = 1; Plan = \"index on Job.a: A >= 90 (1 value range, 10 entries "
                "counted), then each record's latest row\" ]\n"
                "[ Step = 2; Plan = \"filter each row: A >= 90\" ]\n"
                "[ Step = 3; Plan = \"project the select list\" ]\n");
    ads_exec_info info;
    const char *up = "UPDATE Job SET A = A + 5 WHERE A >= 90";
    assert_int_equal(ads_query_exec(q, up, strlen(up), NULL, NULL, &info, NULL), 0);
    assert_int_equal(info.rows, 10);
    rows_expect(q, "SELECT count(*) AS N, min(A) AS Lo, max(A) AS Hi FROM Job WHERE A >= 90",
                "[ N = 10; Lo = 95; Hi = 104 ]\n");
    /* the record moves out of the value the walk reads: all of them, once */
    up = "UPDATE Job SET S = \"s0\" WHERE S == \"s1\" || S == \"s2\"";
    assert_int_equal(ads_query_exec(q, up, strlen(up), NULL, NULL, &info, NULL), 0);
    assert_int_equal(info.rows, 20);
    rows_expect(q, "SELECT count(*) AS N FROM Job WHERE S == \"s0\"", "[ N = 30 ]\n");
    const char *del = "DELETE FROM Job WHERE S == \"s0\" && A < 50";
    assert_int_equal(ads_query_exec(q, del, strlen(del), NULL, NULL, &info, NULL), 0);
    assert_int_equal(info.rows, 15);
    const char *purge = "PURGE FROM Job WHERE S == \"s0\"";
    assert_int_equal(ads_query_exec(q, purge, strlen(purge), NULL, NULL, &info, NULL), 0);
    assert_int_equal(info.rows, 30); /* the deleted ones too */
    rows_expect(q, "SELECT count(*) AS N FROM Job WHERE S == \"s0\" || _Deleted",
                "[ N = 0 ]\n");
    ads_query_free(q);
}

/* Known answers through the index, for the shapes the planner reads. */
static void index_model__known_answers(void **state)
{
    (void)state;
    store_ok("{ [ AdType = \"Job\"; Id = 1; A = 2; S = \"abc\" ], [ AdType = \"Job\"; Id = 2; "
             "A = 2.0; S = \"ABC\" ], [ AdType = \"Job\"; Id = 3; A = 5 ], [ AdType = \"Job\"; "
             "Id = 4; A = true; S = \"b\" ] }");
    declare("A", true);
    declare("S", true);
    ads_query *q;
    assert_int_equal(ads_query_new(&q, db, NULL), 0);
    ads_query_use_indexes(q, ADS_INDEXES_ALWAYS);
    rows_expect(q, "SELECT Id FROM Job WHERE A == 2 ORDER BY Id", "[ Id = 1 ]\n[ Id = 2 ]\n");
    rows_expect(q, "SELECT Id FROM Job WHERE A is 2 ORDER BY Id", "[ Id = 1 ]\n");
    rows_expect(q, "SELECT Id FROM Job WHERE S == \"ABC\" && A > 1.5 ORDER BY Id",
                "[ Id = 1 ]\n[ Id = 2 ]\n");
    rows_expect(q, "SELECT Id FROM Job WHERE S is \"ABC\"", "[ Id = 2 ]\n");
    rows_expect(q, "SELECT Id FROM Job WHERE isUndefined(S)", "[ Id = 3 ]\n");
    rows_expect(q, "SELECT Id FROM Job WHERE 1 < A && A <= 5 ORDER BY Id",
                "[ Id = 1 ]\n[ Id = 2 ]\n[ Id = 3 ]\n");
    rows_expect(q, "SELECT Id FROM Job WHERE A == 1 || S == \"b\" || A == 5 ORDER BY Id",
                "[ Id = 3 ]\n[ Id = 4 ]\n");
    rows_expect(q, "SELECT Id FROM Job WHERE A in { 5, 1 } ORDER BY Id",
                "[ Id = 3 ]\n[ Id = 4 ]\n");
    /* values too long for an entry (a 509-byte encoding with the index id
     * passes LMDB's 511 bytes): in the IX_OTHER entries, found by scans,
     * alone or with another exact term */
    char text[1200], longs[520];
    for (int n = 500; n <= 512; n += 3) {
        memset(longs, 'q', (size_t)n);
        longs[n] = 0;
        snprintf(text, sizeof text, "[ AdType = \"Job\"; Id = %d; A = 2; S = \"%s\" ]", 100 + n,
                 longs);
        store_ok(text);
        snprintf(text, sizeof text,
                 "SELECT Id FROM Job WHERE S == \"%s\" && A == 2 && S >= \"%s\"", longs, longs);
        char want[40];
        snprintf(want, sizeof want, "[ Id = %d ]\n", 100 + n);
        rows_expect(q, text, want);
    }
    ads_query_free(q);
}

/* EXPLAIN names the index chosen, or the scan, and each later step; on
 * its own (auto) the planner takes an index only when it reads little. */
static void index_model__explain_shows_the_plan(void **state)
{
    (void)state;
    char text[200];
    for (int id = 0; id < 200; id++) {
        snprintf(text, sizeof text, "[ AdType = \"Job\"; Id = %d; A = %d; S = \"%s\" ]", id,
                 id % 50, id % 2 ? "odd" : "even");
        store_ok(text);
    }
    declare("A", true);
    declare("S", true);
    ads_query *q;
    assert_int_equal(ads_query_new(&q, db, NULL), 0);
    rows_expect(q, "EXPLAIN SELECT Id FROM Job WHERE S == \"odd\" && A == 7 ORDER BY Id LIMIT 2",
                "[ Step = 1; Plan = \"index on Job.a: A == 7 (1 value range, 4 entries counted), "
                "merged in key order with the index on s, then each record's latest row\" ]\n"
                "[ Step = 2; Plan = \"filter each row: S == \\\"odd\\\" && A == 7\" ]\n"
                "[ Step = 3; Plan = \"sort by 1 key, keeping the best 2\" ]\n"
                "[ Step = 4; Plan = \"limit 2 rows\" ]\n"
                "[ Step = 5; Plan = \"project the select list\" ]\n");
    rows_expect(q, "SELECT Id FROM Job WHERE S == \"odd\" && A == 7 ORDER BY Id LIMIT 2",
                "[ Id = 7 ]\n[ Id = 57 ]\n");
    /* half the type: a scan reads faster */
    rows_expect(q, "EXPLAIN SELECT Id FROM Job WHERE S == \"odd\"",
                "[ Step = 1; Plan = \"scan Job: latest rows, in key order (1 indexed term "
                "weighed: an index would read a quarter of the type or more)\" ]\n"
                "[ Step = 2; Plan = \"filter each row: S == \\\"odd\\\"\" ]\n"
                "[ Step = 3; Plan = \"project the select list\" ]\n");
    /* an OR of indexed terms: a union */
    rows_expect(q, "EXPLAIN SELECT Id FROM Job WHERE A == 1 || A in { 2, 3 } || A < 0",
                "[ Step = 1; Plan = \"index on Job.a: A == 1 || A in { 2, 3 } || A < 0 (4 value "
                "ranges, 16 entries counted), then each record's latest row\" ]\n"
                "[ Step = 2; Plan = \"filter each row: A == 1 || A in { 2, 3 } || A < 0\" ]\n"
                "[ Step = 3; Plan = \"project the select list\" ]\n");
    rows_expect(q, "EXPLAIN SELECT Id FROM Job WHERE Id == 4",
                "[ Step = 1; Plan = \"key lookup in Job: the key attribute given by WHERE\" ]\n"
                "[ Step = 2; Plan = \"filter each row: Id == 4\" ]\n"
                "[ Step = 3; Plan = \"project the select list\" ]\n");
    ads_exec_info info;
    ads_error err;
    /* ANALYZE: the same plan, with what each step read and kept */
    /* a range and an exact term: the range's entries, each probed */
    rows_expect(q, "EXPLAIN ANALYZE SELECT Id FROM Job WHERE S == \"odd\" && A >= 48",
                "[ Step = 1; Plan = \"index on Job.a: A >= 48 (1 value range, 8 entries "
                "counted), each entry probed in the index on s, then each record's latest row; "
                "run: 8 index entries read, 4 skipped by the probes, 4 rows read\" ]\n"
                "[ Step = 2; Plan = \"filter each row: S == \\\"odd\\\" && A >= 48; run: 4 "
                "rows kept\" ]\n"
                "[ Step = 3; Plan = \"project the select list; run: 4 rows out\" ]\n");
    /* exact terms: merged. A's 8 entries (7, 8, 57, 58 ...) all read; of
     * S's 100 odd records only those near A's: 1, 3, 7, 9, 11, 57, 59,
     * 107, 109, 111, 157, 159 (12) */
    rows_expect(q, "EXPLAIN ANALYZE SELECT Id FROM Job WHERE S == \"odd\" && A in { 7, 8 } "
                   "ORDER BY Id LIMIT 1",
                "[ Step = 1; Plan = \"index on Job.a: A in { 7, 8 } (2 value ranges, 8 entries "
                "counted), merged in key order with the index on s, then each record's latest "
                "row; run: 20 index entries read, 4 rows read\" ]\n"
                "[ Step = 2; Plan = \"filter each row: S == \\\"odd\\\" && A in { 7, 8 }; "
                "run: 4 rows kept\" ]\n"
                "[ Step = 3; Plan = \"sort by 1 key, keeping the best 1; run: 4 rows in, 1 out\" "
                "]\n"
                "[ Step = 4; Plan = \"limit 1 rows; run: 1 row out\" ]\n"
                "[ Step = 5; Plan = \"project the select list; run: 1 row out\" ]\n");
    rows_expect(q, "EXPLAIN ANALYZE SELECT S, count(*) FROM Job WHERE A >= 48 || A < 1 GROUP BY S",
                "[ Step = 1; Plan = \"index on Job.a: A >= 48 || A < 1 (2 value ranges, 16 "
                "entries counted), then each record's latest row; run: 16 index entries read, "
                "16 rows read\" ]\n"
                "[ Step = 2; Plan = \"filter each row: A >= 48 || A < 1; run: 12 rows kept\" ]\n"
                "[ Step = 3; Plan = \"group by 1 expression: one entry per group; run: 12 rows "
                "in, 2 groups out\" ]\n"
                "[ Step = 4; Plan = \"project the select list; run: 2 rows out\" ]\n");
    rows_expect(q, "EXPLAIN ANALYZE SELECT Id FROM Job WHERE S == \"odd\" && Id < 10",
                "[ Step = 1; Plan = \"scan Job: latest rows, in key order (1 indexed term "
                "weighed: an index would read a quarter of the type or more); run: 200 rows "
                "read\" ]\n"
                "[ Step = 2; Plan = \"filter each row: S == \\\"odd\\\" && Id < 10; run: 5 "
                "rows kept\" ]\n"
                "[ Step = 3; Plan = \"project the select list; run: 5 rows out\" ]\n");
    rows_expect(q, "EXPLAIN ANALYZE SELECT Id FROM Job WHERE Id == 4 && A == 5",
                "[ Step = 1; Plan = \"key lookup in Job: the key attribute given by WHERE; "
                "run: 1 row read\" ]\n"
                "[ Step = 2; Plan = \"filter each row: Id == 4 && A == 5; run: 0 rows kept\" ]\n"
                "[ Step = 3; Plan = \"project the select list; run: 0 rows out\" ]\n");
    const char *del = "EXPLAIN PURGE HISTORY FROM Job WHERE _Timestamp < 5";
    assert_int_equal(ads_query_exec(q, del, strlen(del), NULL, NULL, &info, &err), ADS_EINVAL);
    assert_string_equal(err.message, "EXPLAIN shows the plan of a SELECT (of latest rows or "
                                     "history), an UPDATE, a DELETE or a PURGE, without a "
                                     "temporal filter");
    ads_query_free(q);
}

/* EXPLAIN of UPDATE, DELETE and PURGE: the records they pick (index, key
 * lookup or scan), the WHERE and the write; nothing is written. EXPLAIN
 * ANALYZE runs the write and says what each step read, kept and wrote. */
static void index_model__explain_writes(void **state)
{
    (void)state;
    char text[200];
    for (int id = 0; id < 200; id++) {
        snprintf(text, sizeof text, "[ AdType = \"Job\"; Id = %d; A = %d; S = \"%s\" ]", id,
                 id % 50, id % 2 ? "odd" : "even");
        store_ok(text);
    }
    declare("A", true);
    declare("S", true);
    ads_query *q;
    assert_int_equal(ads_query_new(&q, db, NULL), 0);
    rows_expect(q, "EXPLAIN UPDATE Job SET A = 99, S = \"x\" WHERE A == 7 && S == \"odd\"",
                "[ Step = 1; Plan = \"index on Job.a: A == 7 (1 value range, 4 entries counted), "
                "merged in key order with the index on s, then each record's latest row\" ]\n"
                "[ Step = 2; Plan = \"filter each row: A == 7 && S == \\\"odd\\\"\" ]\n"
                "[ Step = 3; Plan = \"update each record: SET A = 99, S = \\\"x\\\", a new "
                "latest row each\" ]\n");
    rows_expect(q, "EXPLAIN DELETE FROM Job WHERE Id == 4",
                "[ Step = 1; Plan = \"key lookup in Job: the key attribute given by WHERE\" ]\n"
                "[ Step = 2; Plan = \"filter each row: Id == 4\" ]\n"
                "[ Step = 3; Plan = \"delete each record: a new latest row marked _Deleted\" "
                "]\n");
    rows_expect(q, "EXPLAIN PURGE FROM Job WHERE S == \"odd\"",
                "[ Step = 1; Plan = \"scan Job: latest rows, in key order (1 indexed term "
                "weighed: an index would read a quarter of the type or more); deleted records "
                "included\" ]\n"
                "[ Step = 2; Plan = \"filter each row: S == \\\"odd\\\"\" ]\n"
                "[ Step = 3; Plan = \"purge each record: every row of it, and its index "
                "entries\" ]\n");
    /* EXPLAIN wrote nothing */
    rows_expect(q, "SELECT count(*) AS N FROM Job WHERE A == 7 || Id == 4", "[ N = 5 ]\n");
    /* ANALYZE writes, as PostgreSQL's does; inside BEGIN ... ROLLBACK it is undone */
    rows_expect(q, "BEGIN", "");
    /* entries: A's 7, 57, 107, 157; S's odd ones at 1, then 3 (a step short
     * of 7) and 7 (a seek), 57 (a seek), 59 (a step short of 107), 107, 157 */
    rows_expect(q, "EXPLAIN ANALYZE DELETE FROM Job WHERE A == 7 && S == \"odd\"",
                "[ Step = 1; Plan = \"index on Job.a: A == 7 (1 value range, 4 entries counted), "
                "merged in key order with the index on s, then each record's latest row; run: 11 "
                "index entries read, 4 rows read\" ]\n"
                "[ Step = 2; Plan = \"filter each row: A == 7 && S == \\\"odd\\\"; run: 4 rows "
                "kept\" ]\n"
                "[ Step = 3; Plan = \"delete each record: a new latest row marked _Deleted; run: "
                "4 records deleted\" ]\n");
    rows_expect(q, "SELECT count(*) AS N FROM Job WHERE A == 7", "[ N = 0 ]\n");
    rows_expect(q, "ROLLBACK", "");
    rows_expect(q, "SELECT count(*) AS N FROM Job WHERE A == 7", "[ N = 4 ]\n");
    rows_expect(q, "EXPLAIN ANALYZE UPDATE Job SET A = A + 100 WHERE A >= 48",
                "[ Step = 1; Plan = \"index on Job.a: A >= 48 (1 value range, 8 entries counted), "
                "then each record's latest row; run: 8 index entries read, 8 rows read\" ]\n"
                "[ Step = 2; Plan = \"filter each row: A >= 48; run: 8 rows kept\" ]\n"
                "[ Step = 3; Plan = \"update each record: SET A = A + 100, a new latest row "
                "each; run: 8 records updated\" ]\n");
    rows_expect(q, "SELECT count(*) AS N, min(A) AS Lo FROM Job WHERE A >= 48",
                "[ N = 8; Lo = 148 ]\n");
    rows_expect(q, "EXPLAIN ANALYZE PURGE FROM Job WHERE Id == 4 && S == \"odd\"",
                "[ Step = 1; Plan = \"key lookup in Job: the key attribute given by WHERE; "
                "deleted records included; run: 1 row read\" ]\n"
                "[ Step = 2; Plan = \"filter each row: Id == 4 && S == \\\"odd\\\"; run: 0 "
                "rows kept\" ]\n"
                "[ Step = 3; Plan = \"purge each record: every row of it, and its index entries; "
                "run: 0 records purged\" ]\n");
    ads_exec_info info;
    ads_error err;
    const char *store = "EXPLAIN STORE [ AdType = \"Job\"; Id = 1000 ]";
    assert_int_equal(ads_query_exec(q, store, strlen(store), NULL, NULL, &info, &err),
                     ADS_EINVAL);
    ads_query_free(q);
}

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
    ads_buf_free(&rows_got);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(index_model__known_answers, setup, teardown),
        cmocka_unit_test_setup_teardown(index_model__explain_shows_the_plan, setup, teardown),
        cmocka_unit_test_setup_teardown(index_model__explain_writes, setup, teardown),
        cmocka_unit_test_setup_teardown(index_model__same_rows_with_and_without_indexes, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(index_model__writes_that_move_their_index, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(index_model__same_writes_with_and_without_indexes, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
