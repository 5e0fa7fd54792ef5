/*
 * tests/query/test_step.c: prepared statements (query/step.c:
 * ads_query_prepare, ads_stmt_step, ads_stmt_fetch, ads_stmt_finalize).
 * Every statement's rows, read a step at a time, attribute by attribute and
 * as records, are exactly those ads_query_exec gives its sink: plain
 * SELECTs that stream and the statements that run whole at the first step
 * (ORDER BY, GROUP BY, JOIN, USING, key lookups, writes). Then rows kept
 * across a fetch, LIMIT, the attributes SELECT * leaves out, the errors
 * with their messages, statements finalized early, the session refusing
 * other statements while one is open, and a write by another session
 * between two steps (the statement reads its snapshot).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "query/query.h"
#include "tests/engine/helpers.h"
#include "tests/query/rows.h"

#define T0 1700000000.0

static tstore ts;
static ads_db *db;
static ads_query *q;
static ads_buf got;

static void store_ok(const char *text)
{
    ads_error err;
    if (ts_store(db, &err, text))
        fail_msg("store: %s", err.message);
}

static int setup(void **state)
{
    (void)state;
    db = ts_open(&ts, T0);
    ts_declare(db, "Machine", "Name", NULL);
    ts_declare(db, "Owner", "Who", NULL);
    ts_time(&ts, T0 + 60);
    store_ok("{ [ AdType = \"Machine\"; Name = \"a\"; Memory = 100; Arch = \"X86_64\"; "
             "Tags = { 1, \"two\" }; Load = 0.5; Owner = \"ann\" ], "
             "[ AdType = \"Machine\"; Name = \"b\"; Memory = 200; Arch = \"ARM\"; "
             "Big = Memory > 150; Owner = \"bob\" ], "
             "[ AdType = \"Machine\"; Name = \"c\"; Memory = 50; Arch = \"X86_64\"; "
             "Sub = [ x = 1; y = \"z\" ]; Owner = \"ann\" ], "
             "[ AdType = \"Owner\"; Who = \"ann\"; Team = \"red\" ], "
             "[ AdType = \"Owner\"; Who = \"bob\"; Team = \"blue\" ] }");
    ts_time(&ts, T0 + 120);
    ads_error err;
    if (ads_query_new(&q, db, &err))
        fail_msg("setup: %s", err.message);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    ads_buf_free(&got);
    ads_buf_free(&rows_got);
    ads_query_free(q);
    q = NULL;
    assert_int_equal(ts_verify(db), 0);
    ts_close(&ts);
    return 0;
}

/* The rows exec gives for stmt (with opt), one `[ ... ]` line each. */
static const char *exec_rows(const char *stmt, const ads_exec_options *opt)
{
    ads_sink sink = {rows_begin, rows_row, rows_end, NULL, NULL};
    ads_error err;
    ads_buf_clear(&rows_got);
    if (ads_query_exec(q, stmt, strlen(stmt), &sink, opt, NULL, &err))
        fail_msg("%s\n  exec failed: %s", stmt, err.message);
    return ads_buf_cstr(&rows_got);
}

/* Row r rebuilt from its attributes, one by one, as `[ ... ]`. */
static void unparse_attrs(ads_buf *b, ads_stmt_row *r)
{
    ads_record_builder *rb;
    ads_arena *a = ads_arena_new();
    ads_error err;
    assert_non_null(a);
    assert_int_equal(ads_record_builder_new(&rb, a, &err), 0);
    for (size_t i = 0; i < ads_stmt_row_size(r); i++) {
        ads_str name;
        ads_value v;
        const ads_expr *e;
        if (ads_stmt_row_attr(&name, &v, &e, r, i, &err))
            fail_msg("attribute %zu: %s", i, err.message);
        int rc = e ? ads_record_builder_add(rb, name.p, name.len, e, &err)
                   : ads_record_builder_add_value(rb, name.p, name.len, &v, &err);
        assert_int_equal(rc, 0);
    }
    ads_record_unparse(b, ads_record_builder_finish(rb));
    ads_arena_free(a);
}

/* The rows of stmt through the step API, fetched `batch` at a time (each
 * read as a record and attribute by attribute, which must agree); whether
 * it streamed goes to *streams. */
static const char *step_rows(const char *stmt, const ads_exec_options *opt, size_t batch,
                             bool *streams)
{
    ads_stmt *s;
    ads_stmt_row *rows[8];
    ads_error err;
    ads_buf one = ADS_BUF_INIT;
    assert_true(batch <= 8);
    ads_buf_clear(&got);
    if (ads_query_prepare(&s, q, stmt, strlen(stmt), opt, &err))
        fail_msg("%s\n  prepare failed: %s", stmt, err.message);
    *streams = ads_stmt_streams(s);
    for (;;) {
        size_t n;
        if (ads_stmt_fetch(s, rows, batch, &n, &err))
            fail_msg("%s\n  fetch failed: %s", stmt, err.message);
        if (n == 0)
            break;
        for (size_t i = 0; i < n; i++) {
            const ads_record *rec;
            assert_int_equal(ads_stmt_row_record(&rec, rows[i], &err), 0);
            ads_record_unparse(&got, rec);
            ads_buf_addc(&got, '\n');
            ads_buf_clear(&one);
            unparse_attrs(&one, rows[i]);
            size_t line = strlen(ads_buf_cstr(&got)) - 1 - strlen(ads_buf_cstr(&one));
            if (strncmp(ads_buf_cstr(&got) + line, ads_buf_cstr(&one), strlen(ads_buf_cstr(&one))))
                fail_msg("%s\n  record %s\n  attrs  %s", stmt, ads_buf_cstr(&got) + line,
                         ads_buf_cstr(&one));
        }
    }
    ads_exec_info info;
    ads_stmt_info(s, &info);
    ads_stmt_finalize(s);
    ads_buf_free(&one);
    return ads_buf_cstr(&got);
}

/* stmt's rows through the step API equal exec's, whatever the batch. */
static void same_rows(const char *stmt, const ads_exec_options *opt, bool want_stream)
{
    char *want = strdup(exec_rows(stmt, opt));
    assert_non_null(want);
    for (size_t batch = 1; batch <= 8; batch += 6) {
        bool streams;
        const char *have = step_rows(stmt, opt, batch, &streams);
        if (strcmp(have, want) != 0)
            fail_msg("%s (batch %zu)\n  step:\n%s  exec:\n%s", stmt, batch, have, want);
        if (streams != want_stream)
            fail_msg("%s: streams %d, want %d", stmt, streams, want_stream);
    }
    free(want);
}

/* ---- the rows ---- */

static void step__plain_selects_stream_the_rows_exec_gives(void **state)
{
    (void)state;
    same_rows("SELECT * FROM Machine", NULL, true);
    same_rows("SELECT * FROM Machine WHERE Memory > 60 && Arch == \"X86_64\"", NULL, true);
    same_rows("SELECT Name, Memory * 2 AS m, Tags, Sub.y, Big FROM Machine", NULL, true);
    same_rows("SELECT * FROM Machine WHERE __Latest", NULL, true);
    same_rows("SELECT * FROM machine LIMIT 2", NULL, true);
    ads_exec_options hidden = ADS_EXEC_OPTIONS_INIT;
    hidden.hidden = true;
    same_rows("SELECT * FROM Machine", &hidden, true);
}

static void step__other_statements_run_whole_with_the_same_rows(void **state)
{
    (void)state;
    same_rows("SELECT * FROM Machine ORDER BY Memory DESC", NULL, false);
    same_rows("SELECT Arch, count(*) AS n, sum(Memory) AS m FROM Machine GROUP BY Arch", NULL,
              false);
    same_rows("SELECT M.Name, O.Team FROM Machine M JOIN Owner O ON O.Who == M.Owner", NULL, false);
    same_rows("SELECT Name FROM Machine JOIN Owner O ON O.Who == Owner WHERE O.Team == \"red\"",
              NULL, false);
    same_rows("SELECT * FROM Machine WHERE Name == \"b\"", NULL, false);
    same_rows("SELECT ForType, Count USING types", NULL, false);
    same_rows("SELECT 1 + 1 AS two", NULL, false);
}

static void step__select_list_columns_and_values(void **state)
{
    (void)state;
    ads_stmt *s;
    ads_stmt_row *r;
    ads_error err;
    const char *stmt =
        "SELECT Name, Memory + 1 AS m FROM Machine WHERE Name == \"a\" || Memory > 150";
    assert_int_equal(ads_query_prepare(&s, q, stmt, strlen(stmt), NULL, &err), 0);
    assert_true(ads_stmt_streams(s));
    size_t n;
    const ads_str *cols = ads_stmt_columns(s, &n);
    assert_int_equal(n, 2);
    assert_memory_equal(cols[0].p, "Name", 4);
    assert_memory_equal(cols[1].p, "m", 1);
    assert_int_equal(ads_stmt_step(s, &r, &err), 1);
    assert_int_equal(ads_stmt_row_size(r), 2);
    ads_str name;
    ads_value v;
    const ads_expr *e;
    assert_int_equal(ads_stmt_row_attr(&name, &v, &e, r, 1, &err), 0);
    assert_null(e);
    assert_int_equal(name.len, 1);
    assert_int_equal(v.type, ADS_INTEGER);
    assert_int_equal(v.u.i, 101);
    assert_int_equal(ads_stmt_step(s, &r, &err), 1);
    assert_int_equal(ads_stmt_row_attr(&name, &v, &e, r, 1, &err), 0);
    assert_int_equal(v.u.i, 201);
    assert_int_equal(ads_stmt_step(s, &r, &err), 0);
    assert_int_equal(ads_stmt_step(s, &r, &err), 0); /* the end stays the end */
    ads_exec_info info;
    ads_stmt_info(s, &info);
    assert_int_equal(info.kind, ADS_STMT_SELECT);
    assert_int_equal(info.rows, 2);
    ads_stmt_finalize(s);
    /* SELECT * has no column list */
    assert_int_equal(ads_query_prepare(&s, q, "SELECT * FROM Machine", 21, NULL, &err), 0);
    assert_null(ads_stmt_columns(s, &n));
    assert_int_equal(n, 0);
    ads_stmt_finalize(s);
}

static void step__select_star_leaves_out_underscore_attributes(void **state)
{
    (void)state;
    store_ok("[ AdType = \"Machine\"; Name = \"h\"; _Note = \"x\"; _a = 1; Memory = 7; "
             "a_b = 2 ]");
    same_rows("SELECT * FROM Machine WHERE Name == \"h\" || Memory == 7", NULL, true);
    ads_stmt *s;
    ads_stmt_row *r;
    ads_error err;
    const char *stmt = "SELECT * FROM Machine WHERE Memory == 7";
    assert_int_equal(ads_query_prepare(&s, q, stmt, strlen(stmt), NULL, &err), 0);
    assert_int_equal(ads_stmt_step(s, &r, &err), 1);
    assert_int_equal(ads_stmt_row_size(r), 4); /* AdType, a_b, Memory, Name */
    for (size_t i = 0; i < 4; i++) {
        ads_str name;
        ads_value v;
        const ads_expr *e;
        assert_int_equal(ads_stmt_row_attr(&name, &v, &e, r, i, &err), 0);
        assert_true(name.p[0] != '_');
    }
    ads_stmt_finalize(s);
    ads_exec_options hidden = ADS_EXEC_OPTIONS_INIT;
    hidden.hidden = true;
    same_rows(stmt, &hidden, true);
}

static void step__rows_of_a_fetch_stay_valid_until_the_next(void **state)
{
    (void)state;
    ads_stmt *s;
    ads_stmt_row *rows[2];
    ads_error err;
    size_t n;
    assert_int_equal(ads_query_prepare(&s, q, "SELECT * FROM Machine", 21, NULL, &err), 0);
    assert_int_equal(ads_stmt_fetch(s, rows, 2, &n, &err), 0);
    assert_int_equal(n, 2);
    ads_buf_clear(&got);
    for (size_t i = 0; i < 2; i++) { /* read after both were taken */
        const ads_record *rec;
        assert_int_equal(ads_stmt_row_record(&rec, rows[i], &err), 0);
        ads_record_unparse(&got, rec);
        ads_buf_addc(&got, '\n');
    }
    char *two = strdup(ads_buf_cstr(&got));
    assert_int_equal(ads_stmt_fetch(s, rows, 2, &n, &err), 0);
    assert_int_equal(n, 1);
    assert_int_equal(ads_stmt_fetch(s, rows, 2, &n, &err), 0);
    assert_int_equal(n, 0);
    ads_stmt_finalize(s);
    const char *all = exec_rows("SELECT * FROM Machine", NULL);
    assert_int_equal(strncmp(all, two, strlen(two)), 0);
    free(two);
}

/* ---- writes, transactions, the session ---- */

static void step__a_write_runs_whole_at_the_first_step(void **state)
{
    (void)state;
    ads_stmt *s;
    ads_stmt_row *r;
    ads_error err;
    const char *stmt = "UPDATE Machine SET Memory = Memory + 1 WHERE Arch == \"X86_64\"";
    assert_int_equal(ads_query_prepare(&s, q, stmt, strlen(stmt), NULL, &err), 0);
    assert_false(ads_stmt_streams(s));
    char *before = ts_attr(db, "Machine", "{ \"a\" }", "Memory");
    assert_string_equal(before, "100"); /* prepared, not run */
    free(before);
    assert_int_equal(ads_stmt_step(s, &r, &err), 0);
    ads_exec_info info;
    ads_stmt_info(s, &info);
    assert_int_equal(info.kind, ADS_STMT_UPDATE);
    assert_int_equal(info.rows, 2);
    ads_stmt_finalize(s);
    rows_expect(q, "SELECT Memory FROM Machine WHERE Arch == \"X86_64\"",
                "[ Memory = 101 ]\n[ Memory = 51 ]\n");
}

static void step__a_write_between_steps_is_not_seen(void **state)
{
    (void)state;
    ads_stmt *s;
    ads_stmt_row *r;
    ads_query *other;
    ads_error err;
    const char *stmt = "SELECT Name, Memory FROM Machine";
    assert_int_equal(ads_query_prepare(&s, q, stmt, strlen(stmt), NULL, &err), 0);
    assert_int_equal(ads_stmt_step(s, &r, &err), 1);
    /* another session writes and commits meanwhile */
    assert_int_equal(ads_query_new(&other, db, &err), 0);
    const char *w[] = {"UPDATE Machine SET Memory = 0",
                       "STORE [ AdType = \"Machine\"; Name = \"d\" ]",
                       "DELETE FROM Machine WHERE Name == \"c\""};
    for (size_t i = 0; i < 3; i++)
        if (ads_query_exec(other, w[i], strlen(w[i]), NULL, NULL, NULL, &err))
            fail_msg("%s: %s", w[i], err.message);
    ads_query_free(other);
    ads_buf_clear(&got);
    do {
        const ads_record *rec;
        assert_int_equal(ads_stmt_row_record(&rec, r, &err), 0);
        ads_record_unparse(&got, rec);
        ads_buf_addc(&got, '\n');
    } while (ads_stmt_step(s, &r, &err) == 1);
    ads_stmt_finalize(s);
    assert_string_equal(ads_buf_cstr(&got), "[ Name = \"a\"; Memory = 100 ]\n"
                                            "[ Name = \"b\"; Memory = 200 ]\n"
                                            "[ Name = \"c\"; Memory = 50 ]\n");
    rows_expect(q, stmt,
                "[ Name = \"a\"; Memory = 0 ]\n[ Name = \"b\"; Memory = 0 ]\n"
                "[ Name = \"d\"; Memory = undefined ]\n");
}

static void step__inside_begin_sees_the_transactions_writes(void **state)
{
    (void)state;
    ads_stmt *s;
    ads_stmt_row *r;
    ads_error err;
    const char *w[] = {"BEGIN", "STORE [ AdType = \"Machine\"; Name = \"e\"; Memory = 9 ]"};
    for (size_t i = 0; i < 2; i++)
        assert_int_equal(ads_query_exec(q, w[i], strlen(w[i]), NULL, NULL, NULL, &err), 0);
    const char *stmt = "SELECT Name FROM Machine WHERE Memory == 9";
    assert_int_equal(ads_query_prepare(&s, q, stmt, strlen(stmt), NULL, &err), 0);
    assert_true(ads_stmt_streams(s));
    assert_int_equal(ads_stmt_step(s, &r, &err), 1);
    ads_stmt_finalize(s);
    assert_true(ads_query_in_txn(q));
    assert_int_equal(ads_query_exec(q, "ROLLBACK", 8, NULL, NULL, NULL, &err), 0);
    rows_expect(q, stmt, "");
}

static void step__session_runs_nothing_else_while_a_statement_is_open(void **state)
{
    (void)state;
    ads_stmt *s, *s2;
    ads_stmt_row *r;
    ads_error err;
    assert_int_equal(ads_query_prepare(&s, q, "SELECT * FROM Machine", 21, NULL, &err), 0);
    assert_int_equal(ads_stmt_step(s, &r, &err), 1);
    assert_int_equal(ads_query_exec(q, "SELECT * FROM Owner", 19, NULL, NULL, NULL, &err),
                     ADS_EBUSY);
    assert_string_equal(err.message, "the session has a prepared statement open: finalize it "
                                     "(ads_stmt_finalize) before running another");
    assert_int_equal(ads_query_prepare(&s2, q, "SELECT * FROM Owner", 19, NULL, &err), ADS_EBUSY);
    assert_string_equal(err.message, "the session has a prepared statement open: finalize it "
                                     "(ads_stmt_finalize) before preparing another");
    ads_stmt_finalize(s); /* early: two rows never read */
    rows_expect(q, "SELECT Team FROM Owner", "[ Team = \"red\" ]\n[ Team = \"blue\" ]\n");
    /* finalized before any step, and a write never stepped writes nothing */
    assert_int_equal(ads_query_prepare(&s, q, "DELETE FROM Machine", 19, NULL, &err), 0);
    ads_stmt_finalize(s);
    assert_int_equal(ts_count(db, "Machine", false), 3);
    ads_stmt_finalize(NULL);
}

/* ---- errors ---- */

static void expect_prepare_error(const char *stmt, int code, int line, int column, const char *msg)
{
    ads_stmt *s = (ads_stmt *)&s;
    ads_error err;
    memset(&err, 0, sizeof err);
    int rc = ads_query_prepare(&s, q, stmt, strlen(stmt), NULL, &err);
    if (rc != code || err.line != line || err.column != column || strcmp(err.message, msg) != 0)
        fail_msg("%s\n  got  %d %d:%d '%s'\n  want %d %d:%d '%s'", stmt, rc, err.line, err.column,
                 err.message, code, line, column, msg);
    assert_null(s);
}

static void step__prepare_reports_errors_with_their_place(void **state)
{
    (void)state;
    expect_prepare_error("SELECT * FROM Machine WHERE", ADS_ESYNTAX, 1, 28,
                         "expected a condition after WHERE, found the end of the statement");
    expect_prepare_error("SELECT *\nFROM Nothing", ADS_ENOTFOUND, 2, 6,
                         "no type named Nothing (store a Type record first)");
    expect_prepare_error("SELECT Name AS x, Memory AS X FROM Machine", ADS_EINVAL, 0, 0,
                         "two columns are labelled 'X': use AS to tell them apart");
    expect_prepare_error("SELECT * FROM Machine WHERE nosuch(1)", ADS_EINVAL, 1, 29,
                         "no function named nosuch (adstore help eval lists the ClassAd "
                         "functions; docs/classad.md)");
    ads_error err;
    ads_stmt *s;
    assert_int_equal(ads_query_prepare(&s, NULL, "SELECT 1", 8, NULL, &err), ADS_EINVAL);
    assert_int_equal(ads_query_prepare(NULL, q, "SELECT 1", 8, NULL, &err), ADS_EINVAL);
    /* the session is free again after each */
    rows_expect(q, "SELECT count(*) AS n FROM Machine", "[ n = 3 ]\n");
}

static void step__step_errors_end_the_statement(void **state)
{
    (void)state;
    ads_stmt *s;
    ads_stmt_row *r, *rows[1];
    ads_error err;
    size_t n;
    assert_int_equal(ads_query_prepare(&s, q, "SELECT * FROM Machine", 21, NULL, &err), 0);
    assert_int_equal(ads_stmt_step(s, &r, &err), 1);
    ads_str name;
    ads_value v;
    const ads_expr *e;
    assert_int_equal(ads_stmt_row_attr(&name, &v, &e, r, 99, &err), ADS_EINVAL);
    assert_int_equal(ads_stmt_row_attr(NULL, &v, &e, r, 0, &err), ADS_EINVAL);
    assert_int_equal(ads_stmt_fetch(s, NULL, 1, &n, &err), ADS_EINVAL);
    assert_int_equal(ads_stmt_fetch(s, rows, 0, &n, &err), ADS_EINVAL);
    assert_string_equal(err.message, "a fetch takes at least one row (max 0)");
    ads_query_interrupt(q);
    assert_int_equal(ads_stmt_fetch(s, rows, 1, &n, &err), ADS_ELIMIT);
    assert_int_equal(n, 0);
    assert_string_equal(err.message, "interrupted");
    assert_int_equal(ads_stmt_step(s, &r, &err), ADS_ELIMIT);
    assert_string_equal(err.message, "the statement failed at an earlier step");
    ads_stmt_finalize(s);
    /* a statement that runs whole fails at its first step */
    const char *sorted = "SELECT * FROM Machine ORDER BY Name";
    assert_int_equal(ads_query_prepare(&s, q, sorted, strlen(sorted), NULL, &err), 0);
    ads_query_interrupt(q);
    assert_int_equal(ads_stmt_step(s, &r, &err), ADS_ELIMIT);
    assert_string_equal(err.message, "interrupted");
    ads_stmt_finalize(s);
    /* one over its memory limit says which limit */
    ads_query_set_limits(q, 4096, 0);
    assert_int_equal(ads_query_prepare(&s, q, sorted, strlen(sorted), NULL, &err), ADS_ELIMIT);
    assert_string_equal(err.message, "the statement needs more than its memory limit of 4096 "
                                     "bytes (ads_query_set_limits; adstore --max-memory)");
    ads_query_set_limits(q, 0, 0);
    rows_expect(q, "SELECT Name FROM Machine LIMIT 1", "[ Name = \"a\" ]\n");
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(step__plain_selects_stream_the_rows_exec_gives),
        T(step__other_statements_run_whole_with_the_same_rows),
        T(step__select_list_columns_and_values),
        T(step__select_star_leaves_out_underscore_attributes),
        T(step__rows_of_a_fetch_stay_valid_until_the_next),
        T(step__a_write_runs_whole_at_the_first_step),
        T(step__a_write_between_steps_is_not_seen),
        T(step__inside_begin_sees_the_transactions_writes),
        T(step__session_runs_nothing_else_while_a_statement_is_open),
        T(step__prepare_reports_errors_with_their_place),
        T(step__step_errors_end_the_statement),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
