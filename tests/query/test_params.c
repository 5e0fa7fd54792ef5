/*
 * tests/query/test_params.c: bound parameters (query/query.h, ads_params)
 * and statements run in a caller's transaction (ads_exec_options.txn):
 * `?` and `:name` wherever an operand may stand and as LIMIT's count,
 * values bound as values (a string holding statement text stays a string),
 * the ClassAd conditional `a ? b : c` unchanged, every binding error with
 * its exact message, line and column, and several statements and the
 * caller's own engine calls committing or rolling back together.
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

#define T0 1700000000.0

static tstore ts;
static ads_db *db;
static ads_query *q;
static ads_params *prm;
static ads_buf out; /* the rows of the last statement, one `[ ... ]` line each */

static int c_begin(void *ctx, const ads_str *cols, size_t ncols, ads_error *err)
{
    (void)ctx, (void)cols, (void)ncols, (void)err;
    return 0;
}

static int c_row(void *ctx, const ads_record *row, ads_error *err)
{
    (void)ctx, (void)err;
    ads_record_unparse(&out, row);
    ads_buf_addc(&out, '\n');
    return 0;
}

static int c_end(void *ctx, ads_error *err)
{
    (void)ctx, (void)err;
    return 0;
}

static int exec_in(const char *stmt, ads_txn *txn, bool script, ads_exec_info *info,
                   ads_error *err)
{
    ads_buf_clear(&out);
    ads_sink sink = {c_begin, c_row, c_end, NULL, NULL};
    ads_exec_options opt = ADS_EXEC_OPTIONS_INIT;
    opt.params = prm;
    opt.params_script = script;
    opt.txn = txn;
    return ads_query_exec(q, stmt, strlen(stmt), &sink, &opt, info, err);
}

/* The statement must succeed with these rows ("" for none). */
static void expect_in(const char *stmt, ads_txn *txn, const char *want)
{
    ads_error err;
    if (exec_in(stmt, txn, false, NULL, &err))
        fail_msg("%s\n  failed: %s (line %d, column %d)", stmt, err.message, err.line, err.column);
    if (strcmp(ads_buf_cstr(&out), want) != 0)
        fail_msg("%s\n  got:\n%s  want:\n%s", stmt, ads_buf_cstr(&out), want);
}

static void expect(const char *stmt, const char *want)
{
    expect_in(stmt, NULL, want);
}

/* The statement must fail with code at line:column with exactly msg. */
static void expect_error_in(const char *stmt, ads_txn *txn, int code, int line, int column,
                            const char *msg)
{
    ads_error err;
    memset(&err, 0, sizeof err);
    int rc = exec_in(stmt, txn, false, NULL, &err);
    if (rc != code || err.line != line || err.column != column || strcmp(err.message, msg) != 0)
        fail_msg("%s\n  got  %d %d:%d '%s'\n  want %d %d:%d '%s'", stmt, rc, err.line, err.column,
                 err.message, code, line, column, msg);
}

static void expect_error(const char *stmt, int code, int line, int column, const char *msg)
{
    expect_error_in(stmt, NULL, code, line, column, msg);
}

static void bind_int(size_t i, int64_t v)
{
    ads_value x = ads_int(v);
    assert_int_equal(ads_params_bind(prm, i, &x, NULL), 0);
}

static void bind_str(size_t i, const char *s)
{
    ads_value x = ads_string(s, strlen(s));
    assert_int_equal(ads_params_bind(prm, i, &x, NULL), 0);
}

static void name_value(const char *name, ads_value x)
{
    assert_int_equal(ads_params_bind_name(prm, name, strlen(name), &x, NULL), 0);
}

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
    ts_time(&ts, T0 + 60);
    store_ok("{ [ AdType = \"Machine\"; Name = \"a\"; Memory = 100 ], "
             "[ AdType = \"Machine\"; Name = \"b\"; Memory = 200 ], "
             "[ AdType = \"Machine\"; Name = \"c\"; Memory = 50 ] }");
    ts_time(&ts, T0 + 120);
    ads_error err;
    if (ads_query_new(&q, db, &err) || ads_params_new(&prm, &err))
        fail_msg("setup: %s", err.message);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    ads_buf_free(&out);
    ads_params_free(prm);
    prm = NULL;
    ads_query_free(q);
    q = NULL;
    assert_int_equal(ts_verify(db), 0);
    ts_close(&ts);
    return 0;
}

/* ---- placeholders ---- */

static void params__positional_in_where_and_select_list(void **state)
{
    (void)state;
    bind_int(1, 10);
    bind_int(2, 60);
    expect("SELECT Name, Memory + ? AS m FROM Machine WHERE Memory > ? ORDER BY Name",
           "[ Name = \"a\"; m = 110 ]\n[ Name = \"b\"; m = 210 ]\n");
}

static void params__named_used_twice_and_case_insensitive(void **state)
{
    (void)state;
    name_value("lo", ads_int(60));
    name_value(":Hi", ads_int(150));
    expect("SELECT Name FROM Machine WHERE Memory > :LO && Memory < :hi || Memory == :hi + 50 "
           "ORDER BY Name",
           "[ Name = \"a\" ]\n[ Name = \"b\" ]\n");
}

static void params__limit_takes_a_placeholder(void **state)
{
    (void)state;
    bind_int(1, 2);
    expect("SELECT Name FROM Machine ORDER BY Name LIMIT ?", "[ Name = \"a\" ]\n[ Name = \"b\" ]\n");
    ads_params_clear(prm);
    name_value("n", ads_int(0));
    expect("SELECT Name FROM Machine LIMIT :n", "");
}

static void params__store_and_update_values(void **state)
{
    (void)state;
    bind_str(1, "d");
    bind_int(2, 75);
    expect("STORE [ AdType = \"Machine\"; Name = ?; Memory = ? * 2 ]", "");
    ads_params_clear(prm);
    expect("SELECT Memory FROM Machine WHERE Name == \"d\"", "[ Memory = 150 ]\n");
    ads_params_clear(prm);
    name_value("m", ads_int(1));
    name_value("who", ads_string("d", 1));
    ads_exec_info info;
    assert_int_equal(exec_in("UPDATE Machine SET Memory = :m WHERE Name == :who", NULL, false,
                             &info, NULL),
                     0);
    assert_int_equal(info.rows, 1);
    ads_params_clear(prm);
    expect("SELECT Memory FROM Machine WHERE Name == \"d\"", "[ Memory = 1 ]\n");
}

static void params__string_is_a_value_never_text(void **state)
{
    (void)state;
    const char *evil = "a\"; DELETE FROM Machine WHERE true; //";
    bind_str(1, evil);
    expect("SELECT Name FROM Machine WHERE Name == ?", "");
    expect("SELECT ? AS s", "[ s = \"a\\\"; DELETE FROM Machine WHERE true; //\" ]\n");
    ads_params_clear(prm);
    expect("SELECT count(*) AS n FROM Machine", "[ n = 3 ]\n");
}

static void params__lists_and_records_bind_whole(void **state)
{
    (void)state;
    ads_value items[2] = {ads_string("a", 1), ads_string("c", 1)};
    ads_value list = ads_list(items, 2);
    assert_int_equal(ads_params_bind(prm, 1, &list, NULL), 0);
    expect("SELECT Name FROM Machine WHERE Name in ? ORDER BY Name",
           "[ Name = \"a\" ]\n[ Name = \"c\" ]\n");
}

static void params__conditional_operator_unchanged(void **state)
{
    (void)state;
    /* without values: the ClassAd conditional and elvis, as before */
    expect("SELECT Memory > 60 ? \"big\" : \"small\" AS s FROM Machine ORDER BY Name",
           "[ s = \"big\" ]\n[ s = \"big\" ]\n[ s = \"small\" ]\n");
    expect("SELECT Nosuch ?: 7 AS e, Memory>60?1:0 AS t FROM Machine WHERE Name == \"c\"",
           "[ e = 7; t = 0 ]\n");
    /* placeholders in each operand of a conditional */
    bind_int(1, 60);
    bind_str(2, "big");
    bind_str(3, "small");
    expect("SELECT Memory > ? ? ? : ? AS s FROM Machine ORDER BY Name",
           "[ s = \"big\" ]\n[ s = \"big\" ]\n[ s = \"small\" ]\n");
    ads_params_clear(prm);
    name_value("x", ads_int(2));
    expect("SELECT true ? :x : 3 AS a, false ? 3 : :x AS b", "[ a = 2; b = 2 ]\n");
    /* `?:` is always elvis: here the attribute x, not the parameter */
    expect_error("SELECT false ?:x : 3 AS a", ADS_ESYNTAX, 1, 18,
                 "expected ',', AS, FROM, USING, WHERE, GROUP BY, ORDER BY, LIMIT or the end of "
                 "the statement, found ':'");
    /* `?` ends an operand: a minus after it subtracts */
    ads_params_clear(prm);
    bind_int(1, 5);
    expect("SELECT ?-1 AS d", "[ d = 4 ]\n");
}

static void params__expression_parser_alone_refuses_them(void **state)
{
    (void)state;
    ads_arena *a = ads_arena_new();
    const ads_expr *e;
    ads_error err;
    assert_int_equal(ads_expr_parse(&e, a, "x + ?", 5, &err), ADS_ESYNTAX);
    assert_string_equal(err.message, "expected an expression, found '?'");
    assert_int_equal(err.column, 5);
    assert_int_equal(ads_expr_parse(&e, a, "a ? b : c", 9, &err), 0);
    assert_int_equal(ads_expr_kind_of(e), ADS_X_COND);
    size_t end;
    assert_int_equal(ads_expr_parse_prefix(&e, a, "f(:n, ?)", 8, 0, ADS_PARSE_PARAMS, &end, &err),
                     0);
    ads_str name;
    int line, col;
    assert_true(ads_expr_param(ads_expr_arg(e, 0), &name, NULL, &line, &col));
    assert_int_equal(name.len, 1);
    assert_int_equal(col, 3);
    assert_true(ads_expr_param(ads_expr_arg(e, 1), &name, NULL, &line, &col));
    assert_int_equal(name.len, 0);
    assert_int_equal(col, 7);
    ads_buf b = ADS_BUF_INIT;
    ads_expr_unparse(&b, e);
    assert_string_equal(ads_buf_cstr(&b), "f(:n, ?)");
    ads_buf_free(&b);
    ads_arena_free(a);
}

/* ---- errors ---- */

static void params__unbound_placeholder_reports_its_place(void **state)
{
    (void)state;
    bind_int(1, 1);
    expect_error("SELECT Name FROM Machine\n  WHERE Memory > ? && Name != ?", ADS_EINVAL, 2, 31,
                 "no value bound to parameter ?2 (the statement's 2nd ?)");
    expect_error("SELECT :who", ADS_EINVAL, 1, 8, "no value bound to parameter :who");
    ads_params_clear(prm);
    expect_error("SELECT ?", ADS_EINVAL, 1, 8,
                 "no value bound to parameter ?1 (the statement's 1st ?)");
}

static void params__value_without_placeholder_is_an_error(void **state)
{
    (void)state;
    bind_int(1, 1);
    bind_int(2, 2);
    expect_error("SELECT ? AS one", ADS_EINVAL, 0, 0,
                 "parameter ?2 has a value but the statement has no placeholder for it");
    ads_params_clear(prm);
    name_value("usr", ads_int(1));
    expect_error("SELECT 1 AS one", ADS_EINVAL, 0, 0,
                 "parameter :usr has a value but the statement has no placeholder for it");
    /* in a script, values not taken are the script's to check */
    ads_error err;
    assert_int_equal(exec_in("SELECT 1 AS one", NULL, true, NULL, &err), 0);
    assert_int_equal(ads_params_check_used(prm, &err), ADS_EINVAL);
    assert_string_equal(err.message,
                        "parameter :usr has a value but no statement has a placeholder for it");
    assert_int_equal(exec_in("SELECT :usr AS one", NULL, true, NULL, &err), 0);
    assert_int_equal(ads_params_check_used(prm, &err), 0);
}

static void params__mixed_styles_refused(void **state)
{
    (void)state;
    bind_int(1, 1);
    name_value("x", ads_int(1));
    expect_error("SELECT ? + :x AS y", ADS_EINVAL, 1, 12,
                 "a statement uses ? or :name placeholders, not both (the first here is ?)");
}

static void params__limit_value_must_be_a_count(void **state)
{
    (void)state;
    bind_str(1, "2");
    expect_error("SELECT Name FROM Machine LIMIT ?", ADS_EINVAL, 1, 32,
                 "LIMIT's parameter must be a whole number >= 0, not string");
    bind_int(1, -1);
    expect_error("SELECT Name FROM Machine LIMIT ?", ADS_EINVAL, 1, 32,
                 "LIMIT's parameter must be a whole number >= 0, not a negative one");
    expect_error("SELECT Name FROM Machine LIMIT ? + 1", ADS_ESYNTAX, 1, 32,
                 "expected a whole number or one placeholder after LIMIT, found '?'");
}

static void params__syntax_and_binding_errors(void **state)
{
    (void)state;
    expect_error("SELECT : x", ADS_ESYNTAX, 1, 10,
                 "expected a parameter name right after ':', found the name 'x'");
    ads_value v = ads_int(1);
    ads_error err;
    assert_int_equal(ads_params_bind(prm, 0, &v, &err), ADS_EINVAL);
    assert_string_equal(err.message, "parameter indexes start at 1");
    assert_int_equal(ads_params_bind(prm, ADS_MAX_PARAMS + 1, &v, &err), ADS_ELIMIT);
    assert_int_equal(ads_params_bind_name(prm, "1x", 2, &v, &err), ADS_EINVAL);
    assert_string_equal(err.message,
                        "'1x' is not a parameter name (a letter or '_', then letters, digits or "
                        "'_')");
    assert_int_equal(ads_params_bind_name(prm, ":", 1, &v, &err), ADS_EINVAL);
}

static void params__values_are_copied_at_bind(void **state)
{
    (void)state;
    char buf[8];
    strcpy(buf, "b");
    ads_value v = ads_string(buf, 1);
    assert_int_equal(ads_params_bind(prm, 1, &v, NULL), 0);
    buf[0] = 'z';
    expect("SELECT Memory FROM Machine WHERE Name == ?", "[ Memory = 200 ]\n");
    /* binding again replaces */
    bind_str(1, "c");
    expect("SELECT Memory FROM Machine WHERE Name == ?", "[ Memory = 50 ]\n");
}

/* ---- a caller's transaction ---- */

static void txn__statements_and_engine_calls_commit_together(void **state)
{
    (void)state;
    ads_txn *txn;
    ads_error err;
    assert_int_equal(ads_txn_begin(&txn, db, 0, &err), 0);
    expect_in("UPDATE Machine SET Memory = 1 WHERE Name == \"a\"", txn, "");
    expect_in("STORE [ AdType = \"Machine\"; Name = \"x\"; Memory = 9 ]", txn, "");
    ads_arena *a = ads_arena_new();
    const ads_record *rec;
    const char *text = "[ AdType = \"Machine\"; Name = \"y\"; Memory = 8 ]";
    assert_int_equal(ads_record_parse(&rec, a, text, strlen(text), &err), 0);
    assert_int_equal(ads_txn_store(txn, rec, NULL, &err), 0);
    /* the transaction's own SELECT sees its writes; others do not yet */
    expect_in("SELECT Name, Memory FROM Machine WHERE Memory < 10 ORDER BY Name", txn,
              "[ Name = \"a\"; Memory = 1 ]\n[ Name = \"x\"; Memory = 9 ]\n"
              "[ Name = \"y\"; Memory = 8 ]\n");
    assert_int_equal(ads_txn_commit(txn, &err), 0);
    expect("SELECT Name FROM Machine WHERE Memory < 10 ORDER BY Name",
           "[ Name = \"a\" ]\n[ Name = \"x\" ]\n[ Name = \"y\" ]\n");
    ads_arena_free(a);
}

static void txn__abort_discards_every_statement(void **state)
{
    (void)state;
    ads_txn *txn;
    assert_int_equal(ads_txn_begin(&txn, db, 0, NULL), 0);
    expect_in("DELETE FROM Machine", txn, "");
    expect_in("STORE [ AdType = \"Machine\"; Name = \"x\"; Memory = 9 ]", txn, "");
    expect_in("SELECT Name FROM Machine", txn, "[ Name = \"x\" ]\n");
    ads_txn_abort(txn);
    expect("SELECT Name FROM Machine ORDER BY Name",
           "[ Name = \"a\" ]\n[ Name = \"b\" ]\n[ Name = \"c\" ]\n");
}

static void txn__read_transaction_refuses_writes(void **state)
{
    (void)state;
    ads_txn *txn;
    assert_int_equal(ads_txn_begin(&txn, db, ADS_TXN_READONLY, NULL), 0);
    expect_in("SELECT count(*) AS n FROM Machine", txn, "[ n = 3 ]\n");
    expect_error_in("DELETE FROM Machine", txn, ADS_EREADONLY, 0, 0,
                    "a statement that writes cannot run in a read-only transaction");
    expect_error_in("BEGIN", txn, ADS_EINVAL, 0, 0,
                    "BEGIN cannot run in a transaction the caller began: the caller commits or "
                    "aborts it");
    ads_txn_abort(txn);
    expect("SELECT count(*) AS n FROM Machine", "[ n = 3 ]\n");
}

/* ---- BEGIN, COMMIT, ROLLBACK ---- */

static void session__commit_keeps_rollback_discards(void **state)
{
    (void)state;
    expect("BEGIN", "");
    assert_true(ads_query_in_txn(q));
    expect("UPDATE Machine SET Memory = 7 WHERE Name == \"a\"", "");
    expect("SELECT Memory FROM Machine WHERE Name == \"a\"", "[ Memory = 7 ]\n");
    expect("ROLLBACK TRANSACTION", "");
    assert_false(ads_query_in_txn(q));
    expect("SELECT Memory FROM Machine WHERE Name == \"a\"", "[ Memory = 100 ]\n");
    expect("begin transaction", "");
    expect("UPDATE Machine SET Memory = 7 WHERE Name == \"a\"", "");
    expect("DELETE FROM Machine WHERE Name == \"b\"", "");
    expect("END", "");
    expect("SELECT Name, Memory FROM Machine ORDER BY Name",
           "[ Name = \"a\"; Memory = 7 ]\n[ Name = \"c\"; Memory = 50 ]\n");
}

static void session__misuse_is_refused(void **state)
{
    (void)state;
    expect_error("COMMIT", ADS_EINVAL, 0, 0, "COMMIT without BEGIN: no transaction is open");
    expect_error("ROLLBACK", ADS_EINVAL, 0, 0, "ROLLBACK without BEGIN: no transaction is open");
    expect_error("BEGIN WORK", ADS_ESYNTAX, 1, 7, "expected the end of the statement, found 'WORK'");
    expect("BEGIN", "");
    expect_error("BEGIN", ADS_EINVAL, 0, 0,
                 "BEGIN inside a transaction: transactions do not nest (COMMIT or ROLLBACK the "
                 "open one first)");
    /* the failure rolled the transaction back */
    assert_false(ads_query_in_txn(q));
    ads_txn *txn;
    assert_int_equal(ads_txn_begin(&txn, db, ADS_TXN_READONLY, NULL), 0);
    expect("BEGIN", "");
    expect_error_in("SELECT 1 AS one", txn, ADS_EINVAL, 0, 0,
                    "a statement cannot run in the caller's transaction while BEGIN's is open");
    ads_txn_abort(txn);
    ads_query_rollback(q);
    assert_false(ads_query_in_txn(q));
}

static void session__failing_statement_rolls_back_whole(void **state)
{
    (void)state;
    expect("BEGIN", "");
    expect("STORE [ AdType = \"Machine\"; Name = \"x\" ]", "");
    ads_exec_info info;
    ads_error err;
    assert_int_equal(exec_in("STORE [ AdType = \"Machine\"; Memory = 1 ]", NULL, false, &info,
                             &err),
                     ADS_EINVAL);
    assert_string_equal(err.message, "a record of type Machine needs key attribute Name");
    assert_true(info.rolled_back);
    assert_false(ads_query_in_txn(q));
    expect("SELECT Name FROM Machine WHERE Name == \"x\"", "");
    /* a syntax error rolls back too */
    expect("BEGIN", "");
    expect("DELETE FROM Machine", "");
    assert_int_equal(exec_in("SELEC 1", NULL, false, &info, &err), ADS_ESYNTAX);
    assert_true(info.rolled_back);
    expect("SELECT count(*) AS n FROM Machine", "[ n = 3 ]\n");
    /* the session's query freed with a transaction open: rolled back */
    expect("BEGIN", "");
    expect("DELETE FROM Machine", "");
    ads_query_free(q);
    assert_int_equal(ads_query_new(&q, db, NULL), 0);
    expect("SELECT count(*) AS n FROM Machine", "[ n = 3 ]\n");
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(params__positional_in_where_and_select_list),
        T(params__named_used_twice_and_case_insensitive),
        T(params__limit_takes_a_placeholder),
        T(params__store_and_update_values),
        T(params__string_is_a_value_never_text),
        T(params__lists_and_records_bind_whole),
        T(params__conditional_operator_unchanged),
        T(params__expression_parser_alone_refuses_them),
        T(params__unbound_placeholder_reports_its_place),
        T(params__value_without_placeholder_is_an_error),
        T(params__mixed_styles_refused),
        T(params__limit_value_must_be_a_count),
        T(params__syntax_and_binding_errors),
        T(params__values_are_copied_at_bind),
        T(txn__statements_and_engine_calls_commit_together),
        T(txn__abort_discards_every_statement),
        T(txn__read_transaction_refuses_writes),
        T(session__commit_keeps_rollback_discards),
        T(session__misuse_is_refused),
        T(session__failing_statement_rolls_back_whole),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
