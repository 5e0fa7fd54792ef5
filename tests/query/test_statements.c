/*
 * tests/query/test_statements.c: the statement language through the C API
 * (query/query.h) on small stores on a fake clock: every SELECT clause,
 * UPDATE / DELETE / PURGE / STORE with their counts and the hidden-row
 * rules, point lookups that must agree with scans, datasources, every error
 * a user can reach (exact message, line and column), statements that fail
 * writing nothing, scripts split into statements, and the seed document's
 * own example statements as written.
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

#define T0 1700000000.0 /* 2023-11-14T22:13:20Z */

static tstore ts;
static ads_db *db;
static ads_query *q;

/* ---- a sink that collects rows as `[ ... ]` lines ---- */

typedef struct collect {
    ads_buf rows;     /* one `[ ... ]` line per row */
    ads_buf cols;     /* the labels begin received, joined by ", "; "*" for none */
    int begun, ended; /* calls of begin and end */
    size_t nrows;
    size_t stop_after; /* row returns ADS_EINVAL after this many rows (0: never) */
} collect;

static int c_begin(void *ctx, const ads_str *cols, size_t ncols, ads_error *err)
{
    (void)err;
    collect *c = ctx;
    c->begun++;
    ads_buf_clear(&c->cols);
    if (ncols == 0)
        ads_buf_adds(&c->cols, "*");
    for (size_t i = 0; i < ncols; i++) {
        if (i)
            ads_buf_adds(&c->cols, ", ");
        ads_buf_add(&c->cols, cols[i].p, cols[i].len);
    }
    return 0;
}

static int c_row(void *ctx, const ads_record *row, ads_error *err)
{
    collect *c = ctx;
    if (c->stop_after && c->nrows == c->stop_after)
        return ads_error_set(err, ADS_EINVAL, "the sink had enough");
    c->nrows++;
    ads_record_unparse(&c->rows, row);
    ads_buf_addc(&c->rows, '\n');
    return 0;
}

static int c_end(void *ctx, ads_error *err)
{
    (void)err;
    ((collect *)ctx)->ended++;
    return 0;
}

static collect last; /* what the last statement run by run() returned */
static ads_exec_info last_info;

static void collect_reset(collect *c)
{
    ads_buf_free(&c->rows);
    ads_buf_free(&c->cols);
    memset(c, 0, sizeof *c);
}

/* Run a statement; 0 or the error code (err filled). Rows land in `last`. */
static int run_opt(const char *stmt, const ads_exec_options *opt, ads_error *err)
{
    collect_reset(&last);
    ads_sink sink = {c_begin, c_row, c_end, &last};
    memset(&last_info, 0xff, sizeof last_info);
    return ads_query_exec(q, stmt, strlen(stmt), &sink, opt, &last_info, err);
}

/* The rows of a statement that must succeed, as text ("" for none). */
static const char *rows_opt(const char *stmt, const ads_exec_options *opt)
{
    ads_error err;
    if (run_opt(stmt, opt, &err))
        fail_msg("%s\n  failed: %s (line %d, column %d)", stmt, err.message, err.line, err.column);
    return ads_buf_cstr(&last.rows);
}

static const char *rows(const char *stmt)
{
    return rows_opt(stmt, NULL);
}

/* The statement's rows must be exactly want (one `[ ... ]` line each). */
static void expect(const char *stmt, const char *want)
{
    const char *got = rows(stmt);
    if (strcmp(got, want) != 0)
        fail_msg("%s\n  got:\n%s  want:\n%s", stmt, got, want);
    assert_int_equal(last_info.kind, ADS_STMT_SELECT);
    assert_int_equal(last.begun, 1);
    assert_int_equal(last.ended, 1);
    /* the count it reports is the rows it gave */
    assert_int_equal(last_info.rows, last.nrows);
}

/* A statement that writes: its kind and count. */
static void expect_done(const char *stmt, ads_stmt_kind kind, uint64_t n)
{
    ads_error err;
    if (run_opt(stmt, NULL, &err))
        fail_msg("%s\n  failed: %s", stmt, err.message);
    assert_int_equal(last_info.kind, kind);
    if (last_info.rows != n)
        fail_msg("%s: %llu records, want %llu", stmt, (unsigned long long)last_info.rows,
                 (unsigned long long)n);
    assert_int_equal(last.nrows, 0);
}

/* A statement that must fail with code, at line:column (0:0 for errors not
 * about a place in the text), with exactly this message; and give no rows. */
static void expect_error(const char *stmt, int code, int line, int column, const char *msg)
{
    ads_error err;
    memset(&err, 0, sizeof err);
    int rc = run_opt(stmt, NULL, &err);
    if (rc == 0)
        fail_msg("%s: succeeded, want '%s'", stmt, msg);
    if (rc != code || err.code != code || err.line != line || err.column != column ||
        strcmp(err.message, msg) != 0)
        fail_msg("%s\n  got  %d %d:%d '%s'\n  want %d %d:%d '%s'", stmt, rc, err.line, err.column,
                 err.message, code, line, column, msg);
    assert_int_equal(last.nrows, 0);
}

/* The whole store's rows, every type, history and deleted rows included, as
 * text: what "writes nothing" compares. */
static char *snapshot(void)
{
    ads_exec_options opt = {true};
    const char *r = rows_opt("SELECT * WHERE __Latest is __Latest && _Deleted is _Deleted", &opt);
    return strdup(r);
}

/* ---- the fixture ---- */

static void store_ok(const char *text)
{
    ads_error err;
    if (ts_store(db, &err, text))
        fail_msg("store %s: %s", text, err.message);
}

static int setup(void **state)
{
    (void)state;
    db = ts_open(&ts, T0);
    ts_declare(db, "Machine", "Name", NULL);
    ts_declare(db, "Owner", "Plat,Role", NULL);
    ts_declare(db, "Event", "", NULL);
    ts_time(&ts, T0 + 60);
    store_ok("{ [ AdType = \"Machine\"; Name = \"a\"; Memory = 100; Platform = \"linux\"; "
             "Role = \"compute\"; Cpus = 4 ], "
             "[ AdType = \"Machine\"; Name = \"b\"; Memory = 200; Platform = \"Linux\"; "
             "Role = \"compute\"; Cpus = 8 ], "
             "[ AdType = \"Machine\"; Name = \"c\"; Memory = 50; Platform = \"windows\"; "
             "Role = \"head\" ], "
             "[ AdType = \"Machine\"; Name = \"d\"; Platform = \"mac\"; Role = \"compute\"; "
             "Cpus = 2 ] }");
    store_ok("{ [ AdType = \"Owner\"; Plat = \"linux\"; Role = \"compute\"; Who = \"ann\" ], "
             "[ AdType = \"Owner\"; Plat = \"windows\"; Role = \"head\"; Who = \"Bob\" ], "
             "[ AdType = \"Owner\"; Plat = \"mac\"; Role = \"head\"; Who = \"Zed\" ] }");
    ts_time(&ts, T0 + 120);
    ads_error err;
    if (ads_query_new(&q, db, &err))
        fail_msg("query: %s", err.message);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    collect_reset(&last);
    ads_query_free(q);
    q = NULL;
    assert_int_equal(ts_verify(db), 0);
    ts_close(&ts);
    return 0;
}

/* ======================================================================== */
/* SELECT                                                                   */
/* ======================================================================== */

static void select__star_gives_stored_attributes_without_hidden_ones(void **state)
{
    (void)state;
    expect("SELECT * FROM Machine WHERE Cpus > 2",
           "[ AdType = \"Machine\"; Cpus = 4; Memory = 100; Name = \"a\"; Platform = \"linux\"; "
           "Role = \"compute\" ]\n"
           "[ AdType = \"Machine\"; Cpus = 8; Memory = 200; Name = \"b\"; Platform = \"Linux\"; "
           "Role = \"compute\" ]\n");
    assert_string_equal(ads_buf_cstr(&last.cols), "*");
    /* asked for: the four timeline attributes too */
    ads_exec_options opt = {true};
    const char *r = rows_opt("SELECT * FROM Machine WHERE Name == \"c\"", &opt);
    assert_string_equal(r, "[ AdType = \"Machine\"; Memory = 50; Name = \"c\"; Platform = "
                           "\"windows\"; Role = \"head\"; _Timestamp = `2023-11-14T22:14:20Z`; "
                           "__SystemTimestamp = `2023-11-14T22:14:20.000008Z`; __Latest = true; "
                           "_Deleted = false ]\n");
    /* a hidden attribute asked for by name is always shown */
    expect("SELECT Name, _Timestamp FROM Machine WHERE Name == \"c\"",
           "[ Name = \"c\"; _Timestamp = `2023-11-14T22:14:20Z` ]\n");
}

static void select__stored_hidden_attributes_are_left_out_of_star(void **state)
{
    (void)state;
    store_ok("[ AdType = \"Machine\"; Name = \"h\"; _Secret = 1; Shown = 2 ]");
    expect("SELECT * FROM Machine WHERE Name == \"h\"",
           "[ AdType = \"Machine\"; Name = \"h\"; Shown = 2 ]\n");
    expect("SELECT Name, _secret FROM Machine WHERE Name == \"h\"",
           "[ Name = \"h\"; _secret = 1 ]\n");
    expect("SELECT Name FROM Machine WHERE _Secret == 1", "[ Name = \"h\" ]\n");
    ads_exec_options opt = {true};
    assert_non_null(
        strstr(rows_opt("SELECT * FROM Machine WHERE Name == \"h\"", &opt),
               "[ _Secret = 1; AdType = \"Machine\"; Name = \"h\"; Shown = 2; _Timestamp = "));
}

static void select__labels_name_plain_references_else_the_text(void **state)
{
    (void)state;
    expect("SELECT Name, Memory * 2, Memory*2 AS M2, strcat( Name ,\n   \"x\" ), M.Cpus, "
           "'Role', Memory AS 'Mem ory', Cpus AS \"C\" FROM Machine M WHERE Name == \"a\"",
           "[ Name = \"a\"; 'Memory * 2' = 200; M2 = 200; 'strcat( Name , \"x\" )' = \"ax\"; "
           "Cpus = 4; Role = \"compute\"; 'Mem ory' = 100; C = 4 ]\n");
    assert_string_equal(ads_buf_cstr(&last.cols),
                        "Name, Memory * 2, M2, strcat( Name , \"x\" ), Cpus, Role, Mem ory, C");
    /* the columns keep the select list's order whatever the attributes' names */
    expect("SELECT Role, Name, Cpus FROM Machine WHERE Name == \"b\"",
           "[ Role = \"compute\"; Name = \"b\"; Cpus = 8 ]\n");
    /* ... also through ORDER BY, which holds the rows */
    expect("SELECT Role, Name, Cpus FROM Machine WHERE Cpus > 2 ORDER BY Name DESC",
           "[ Role = \"compute\"; Name = \"b\"; Cpus = 8 ]\n"
           "[ Role = \"compute\"; Name = \"a\"; Cpus = 4 ]\n");
    /* an attribute that is absent is undefined */
    expect("SELECT Name, Nope FROM Machine WHERE Name == \"a\"",
           "[ Name = \"a\"; Nope = undefined ]\n");
    /* white space is collapsed outside strings, quoted names and times only */
    expect("SELECT strcat(Name,  \"a  b\"),   Memory  +\t1, Memory + 'x  y' FROM Machine WHERE "
           "Name == \"a\"",
           "[ 'strcat(Name, \"a  b\")' = \"aa  b\"; 'Memory + 1' = 101; "
           "'Memory + \\'x  y\\'' = undefined ]\n");
    assert_string_equal(ads_buf_cstr(&last.cols),
                        "strcat(Name, \"a  b\"), Memory + 1, Memory + 'x  y'");
}

static void select__two_equal_labels_are_an_error(void **state)
{
    (void)state;
    expect_error("SELECT Name, name FROM Machine", ADS_EINVAL, 0, 0,
                 "two columns are labelled 'name': use AS to tell them apart");
    expect_error("SELECT Name AS x, Memory AS X FROM Machine", ADS_EINVAL, 0, 0,
                 "two columns are labelled 'X': use AS to tell them apart");
    expect_error("SELECT O.Role, Role FROM Machine JOIN Owner O ON Name == O.Who", ADS_EINVAL, 0, 0,
                 "two columns are labelled 'Role': use AS to tell them apart");
    expect("SELECT O.Role AS ORole, Role FROM Machine JOIN Owner O ON { Platform, Role } === "
           "{ O.Plat, O.Role } WHERE Name == \"c\"",
           "[ ORole = \"head\"; Role = \"head\" ]\n");
}

static void select__keywords_and_type_names_are_case_insensitive(void **state)
{
    (void)state;
    const char *want = "[ Name = \"b\" ]\n";
    expect("select Name from machine where Memory > 60 order by Name desc limit 1", want);
    expect("SeLeCt Name FrOm MACHINE WhErE Memory > 60 OrDeR By Name DeSc LiMiT 1", want);
    expect("SELECT Name FROM Machine WHERE Memory > 60 ORDER BY Name DESC LIMIT 1;", want);
    expect("  SELECT Name FROM Machine WHERE Memory > 60 ORDER BY Name DESC LIMIT 1 ; ", want);
}

static void select__from_alias_names_the_row(void **state)
{
    (void)state;
    expect("SELECT M.Name, M.Memory + Cpus AS x FROM Machine M WHERE M.Memory > 60",
           "[ Name = \"a\"; x = 104 ]\n[ Name = \"b\"; x = 208 ]\n");
    /* AS before the alias is allowed */
    expect("SELECT M.Name FROM Machine AS M WHERE M.Name == \"c\"", "[ Name = \"c\" ]\n");
}

static void select__without_from_reads_every_type(void **state)
{
    (void)state;
    expect("SELECT AdType, Name WHERE Name is \"a\" || Who is \"ann\"",
           "[ AdType = \"Machine\"; Name = \"a\" ]\n[ AdType = \"Owner\"; Name = undefined ]\n");
    /* the built-in types have no Type records */
    expect("SELECT ForType, KeyAttributes WHERE AdType == \"Type\" ORDER BY ForType DESC",
           "[ ForType = \"Owner\"; KeyAttributes = { \"Plat\", \"Role\" } ]\n"
           "[ ForType = \"Machine\"; KeyAttributes = { \"Name\" } ]\n"
           "[ ForType = \"Event\"; KeyAttributes = { } ]\n");
}

static void select__expressions_are_evaluated_in_the_row(void **state)
{
    (void)state;
    expect("SELECT Name, Memory / 3, real(Memory) / 8, Memory > 60, { Name, Cpus }, "
           "[ n = Name; m = Memory ] AS r, toUpper(Platform) AS P FROM Machine WHERE Name == "
           "\"a\"",
           "[ Name = \"a\"; 'Memory / 3' = 33; 'real(Memory) / 8' = 12.5; 'Memory > 60' = true; "
           "'{ Name, Cpus }' = { \"a\", 4 }; r = [ n = \"a\"; m = 100 ]; P = \"LINUX\" ]\n");
    expect("SELECT 1 + 1 AS two FROM Machine LIMIT 1", "[ two = 2 ]\n");
}

/* ---- WHERE ---- */

static void where__only_true_rows_pass(void **state)
{
    (void)state;
    /* d has no Memory: undefined is not true */
    expect("SELECT Name FROM Machine WHERE Memory > 60", "[ Name = \"a\" ]\n[ Name = \"b\" ]\n");
    expect("SELECT Name FROM Machine WHERE !(Memory > 60)", "[ Name = \"c\" ]\n");
    /* error is not true */
    expect("SELECT Name FROM Machine WHERE Platform + 1", "");
    expect("SELECT Name FROM Machine WHERE false", "");
    expect("SELECT Name FROM Machine WHERE true && Role == \"head\"", "[ Name = \"c\" ]\n");
    /* == on strings ignores case; is does not */
    expect("SELECT Name FROM Machine WHERE Platform == \"LINUX\"",
           "[ Name = \"a\" ]\n[ Name = \"b\" ]\n");
    expect("SELECT Name FROM Machine WHERE Platform is \"Linux\"", "[ Name = \"b\" ]\n");
    expect("SELECT Name FROM Machine WHERE isUndefined(Memory) || Memory < 60",
           "[ Name = \"c\" ]\n[ Name = \"d\" ]\n");
}

/* ---- JOIN ---- */

static void join__key_lookup_inner_drops_rows_without_a_match(void **state)
{
    (void)state;
    /* Owner's keys are { Plat, Role }: a key lookup; "Linux" === "linux" */
    expect("SELECT Name, O.Who FROM Machine JOIN Owner O ON { Platform, Role } === "
           "{ O.Plat, O.Role }",
           "[ Name = \"a\"; Who = \"ann\" ]\n[ Name = \"b\"; Who = \"ann\" ]\n"
           "[ Name = \"c\"; Who = \"Bob\" ]\n");
    expect("SELECT Name, O.Who FROM Machine INNER JOIN Owner O ON { O.Role, O.Plat } === "
           "{ Role, Platform }",
           "[ Name = \"a\"; Who = \"ann\" ]\n[ Name = \"b\"; Who = \"ann\" ]\n"
           "[ Name = \"c\"; Who = \"Bob\" ]\n");
}

static void join__outer_keeps_rows_with_the_alias_undefined(void **state)
{
    (void)state;
    expect("SELECT Name, O.Who, O, isUndefined(O) AS none FROM Machine OUTER JOIN Owner O ON "
           "{ Platform, Role } === { O.Plat, O.Role } WHERE Role == \"compute\"",
           "[ Name = \"a\"; Who = \"ann\"; O = [ AdType = \"Owner\"; Plat = \"linux\"; Role = "
           "\"compute\"; Who = \"ann\"; _Timestamp = `2023-11-14T22:14:20Z`; __SystemTimestamp = "
           "`2023-11-14T22:14:20.00001Z`; __Latest = true; _Deleted = false ]; none = false ]\n"
           "[ Name = \"b\"; Who = \"ann\"; O = [ AdType = \"Owner\"; Plat = \"linux\"; Role = "
           "\"compute\"; Who = \"ann\"; _Timestamp = `2023-11-14T22:14:20Z`; __SystemTimestamp = "
           "`2023-11-14T22:14:20.00001Z`; __Latest = true; _Deleted = false ]; none = false ]\n"
           "[ Name = \"d\"; Who = undefined; O = undefined; none = true ]\n");
}

static void join__without_keys_takes_the_first_row_satisfying_on(void **state)
{
    (void)state;
    /* Plat alone is not Owner's key: the first Owner (in key order) whose Plat
     * matches; mac has two owners... one, and windows one */
    expect("SELECT Name, O.Who FROM Machine JOIN Owner O ON Platform == O.Plat",
           "[ Name = \"a\"; Who = \"ann\" ]\n[ Name = \"b\"; Who = \"ann\" ]\n"
           "[ Name = \"c\"; Who = \"Bob\" ]\n[ Name = \"d\"; Who = \"Zed\" ]\n");
    /* the first row in key order: Owner keys sort (linux, compute) < (mac, head) <
     * (windows, head) */
    expect("SELECT Name, O.Who FROM Machine OUTER JOIN Owner O ON Role == O.Role && "
           "O.Who != \"ann\" ORDER BY Name",
           "[ Name = \"a\"; Who = undefined ]\n[ Name = \"b\"; Who = undefined ]\n"
           "[ Name = \"c\"; Who = \"Zed\" ]\n[ Name = \"d\"; Who = undefined ]\n");
    expect("SELECT Name, O.Who FROM Machine JOIN Owner O ON O.Role == \"head\" WHERE Name == "
           "\"a\"",
           "[ Name = \"a\"; Who = \"Zed\" ]\n");
}

static void join__key_lookup_and_scan_agree(void **state)
{
    (void)state;
    static const char *const on[] = {
        "{ Platform, Role } === { O.Plat, O.Role }",
        "({ Platform, Role } === { O.Plat, O.Role }) && true",
        "{ O.Role, O.Plat } === { Role, Platform }",
        "O.Plat == Platform && O.Role == Role",
    };
    char *first = NULL;
    for (size_t i = 0; i < sizeof on / sizeof on[0]; i++) {
        char stmt[512];
        snprintf(stmt, sizeof stmt, "SELECT Name, O.Who FROM Machine OUTER JOIN Owner O ON %s",
                 on[i]);
        const char *r = rows(stmt);
        if (!first)
            first = strdup(r);
        else if (strcmp(first, r))
            fail_msg("%s:\n%s\nvs\n%s", stmt, r, first);
    }
    assert_string_equal(first,
                        "[ Name = \"a\"; Who = \"ann\" ]\n[ Name = \"b\"; Who = \"ann\" ]\n"
                        "[ Name = \"c\"; Who = \"Bob\" ]\n[ Name = \"d\"; Who = undefined ]\n");
    free(first);
    /* == between lists is error in ClassAd, so never a match, looked up or not */
    const char *none = "[ Name = \"a\"; Who = undefined ]\n[ Name = \"b\"; Who = undefined ]\n"
                       "[ Name = \"c\"; Who = undefined ]\n[ Name = \"d\"; Who = undefined ]\n";
    expect("SELECT Name, O.Who FROM Machine OUTER JOIN Owner O ON { O.Plat, O.Role } == "
           "{ Platform, Role }",
           none);
    expect("SELECT Name, O.Who FROM Machine OUTER JOIN Owner O ON ({ O.Plat, O.Role } == "
           "{ Platform, Role }) || false",
           none);
}

static void join__where_and_order_see_the_joined_row(void **state)
{
    (void)state;
    expect("SELECT Name FROM Machine M JOIN Owner O ON { M.Platform, M.Role } === "
           "{ O.Plat, O.Role } WHERE O.Who == \"ann\" && M.Memory > 150",
           "[ Name = \"b\" ]\n");
    expect("SELECT Name, O.Who AS W FROM Machine OUTER JOIN Owner O ON { Platform, Role } === "
           "{ O.Plat, O.Role } ORDER BY O.Who DESC, Name DESC",
           "[ Name = \"c\"; W = \"Bob\" ]\n[ Name = \"b\"; W = \"ann\" ]\n"
           "[ Name = \"a\"; W = \"ann\" ]\n[ Name = \"d\"; W = undefined ]\n");
}

static void join__several_joins_and_a_self_join(void **state)
{
    (void)state;
    expect("SELECT Name, O.Who, M2.Memory AS M2mem FROM Machine JOIN Owner O ON "
           "{ Platform, Role } === { O.Plat, O.Role } JOIN Machine M2 ON M2.Name === "
           "strcat(Name) WHERE Name == \"b\"",
           "[ Name = \"b\"; Who = \"ann\"; M2mem = 200 ]\n");
    /* a later ON may use an earlier join's alias */
    expect("SELECT Name, O.Who, P.Who AS PW FROM Machine JOIN Owner O ON { Platform, Role } === "
           "{ O.Plat, O.Role } JOIN Owner P ON { P.Plat, P.Role } === { O.Plat, O.Role } WHERE "
           "Name == \"a\"",
           "[ Name = \"a\"; Who = \"ann\"; PW = \"ann\" ]\n");
}

static void join__deleted_rows_are_not_joined(void **state)
{
    (void)state;
    expect_done("DELETE FROM Owner WHERE Who == \"Bob\"", ADS_STMT_DELETE, 1);
    expect("SELECT Name, O.Who FROM Machine OUTER JOIN Owner O ON { Platform, Role } === "
           "{ O.Plat, O.Role } WHERE Name == \"c\"",
           "[ Name = \"c\"; Who = undefined ]\n");
    expect("SELECT Name, O.Who FROM Machine OUTER JOIN Owner O ON Platform == O.Plat WHERE "
           "Name == \"c\"",
           "[ Name = \"c\"; Who = undefined ]\n");
}

/* ---- GROUP BY and aggregates ---- */

static void group_by__groups_compare_with_identity_and_sort_by_value(void **state)
{
    (void)state;
    /* "linux" and "Linux" are one group, spelled as first seen */
    expect("SELECT Platform, count(*) AS n, sum(Memory) AS total FROM Machine GROUP BY Platform",
           "[ Platform = \"linux\"; n = 2; total = 300 ]\n"
           "[ Platform = \"mac\"; n = 1; total = 0 ]\n"
           "[ Platform = \"windows\"; n = 1; total = 50 ]\n");
    assert_string_equal(ads_buf_cstr(&last.cols), "Platform, n, total");
    /* several expressions; groups in the order of their values, undefined last */
    expect("SELECT Role, Memory > 60 AS big, count(*) AS n FROM Machine GROUP BY Role, "
           "Memory > 60",
           "[ Role = \"compute\"; big = true; n = 2 ]\n"
           "[ Role = \"compute\"; big = undefined; n = 1 ]\n"
           "[ Role = \"head\"; big = false; n = 1 ]\n");
    /* a GROUP BY expression may be used inside a larger one */
    expect(
        "SELECT toUpper(Role) AS R, strcat(toUpper(Role), \"!\") AS R2, count(*) AS n "
        "FROM Machine GROUP BY toUpper(Role)",
        "[ R = \"COMPUTE\"; R2 = \"COMPUTE!\"; n = 3 ]\n[ R = \"HEAD\"; R2 = \"HEAD!\"; n = 1 ]\n");
    /* the group-by values need not be selected */
    expect("SELECT count(*) AS n FROM Machine GROUP BY Role", "[ n = 3 ]\n[ n = 1 ]\n");
    /* numbers group across integer and real */
    store_ok("{ [ AdType = \"Event\"; V = 1 ], [ AdType = \"Event\"; V = 1.0 ], "
             "[ AdType = \"Event\"; V = \"1\" ] }");
    expect("SELECT V, count(*) AS n FROM Event GROUP BY V",
           "[ V = 1; n = 2 ]\n[ V = \"1\"; n = 1 ]\n");
}

static void group_by__every_aggregate(void **state)
{
    (void)state;
    expect("SELECT count(*), count(Memory), sum(Memory), avg(Memory), min(Memory), "
           "max(Memory), count_distinct(Platform), list(Name), distinct(Platform) FROM Machine",
           "[ 'count(*)' = 4; 'count(Memory)' = 3; 'sum(Memory)' = 350; 'avg(Memory)' = "
           "116.66666666666667; 'min(Memory)' = 50; 'max(Memory)' = 200; "
           "'count_distinct(Platform)' = 3; 'list(Name)' = { \"a\", \"b\", \"c\", \"d\" }; "
           "'distinct(Platform)' = { \"linux\", \"windows\", \"mac\" } ]\n");
    /* per group */
    expect("SELECT Role, count(Cpus) AS n, sum(Cpus) AS s, avg(Cpus) AS a, min(Cpus) AS lo, "
           "max(Cpus) AS hi, list(Cpus) AS l FROM Machine GROUP BY Role",
           "[ Role = \"compute\"; n = 3; s = 14; a = 4.666666666666667; lo = 2; hi = 8; "
           "l = { 4, 8, 2 } ]\n"
           "[ Role = \"head\"; n = 0; s = 0; a = undefined; lo = undefined; hi = undefined; "
           "l = { } ]\n");
    /* reals: the sum is real once a real is seen */
    expect("SELECT sum(Memory * 0.5) AS s, avg(Memory * 0.5) AS a, sum(Cpus) + 0.5 AS t FROM "
           "Machine",
           "[ s = 175.0; a = 58.333333333333336; t = 14.5 ]\n");
    /* aggregates inside expressions, and the same aggregate twice */
    expect("SELECT sum(Memory) / count(Memory) AS mean, count(*) + 1 AS n1, count(*) AS n FROM "
           "Machine",
           "[ mean = 116; n1 = 5; n = 4 ]\n");
}

/* count_distinct, distinct and GROUP BY over thousands of values, spelled
 * differently but === equal (1 and 1.0, "ab" and "AB"): one group each. */
static void group_by__many_values_that_are_equal_as_identical_compares(void **state)
{
    (void)state;
    ads_buf b = ADS_BUF_INIT;
    for (int i = 0; i < 1400; i++) {
        ads_buf_clear(&b);
        if (i < 700)
            ads_buf_printf(&b, "[ AdType = \"Event\"; V = %d; W = \"n%d\" ]", i, i % 300);
        else
            ads_buf_printf(&b, "[ AdType = \"Event\"; V = %d.0; W = \"N%d\" ]", i - 700, i % 300);
        store_ok(ads_buf_cstr(&b));
    }
    ads_buf_free(&b);
    expect("SELECT count(*) AS n, count_distinct(V) AS v, count_distinct(W) AS w FROM Event",
           "[ n = 1400; v = 700; w = 300 ]\n");
    expect("SELECT count(*) AS groups FROM Event GROUP BY V ORDER BY groups LIMIT 1",
           "[ groups = 2 ]\n");
    const char *r = rows("SELECT V, count(*) AS n FROM Event GROUP BY V");
    size_t lines = 0;
    for (const char *p = r; *p; p++)
        lines += *p == '\n';
    assert_int_equal(lines, 700);
    expect("SELECT size(distinct(W)) AS w FROM Event", "[ w = 300 ]\n");
}

static void group_by__aggregates_of_nothing(void **state)
{
    (void)state;
    /* no GROUP BY: one group, one row, even with no rows */
    expect("SELECT count(*), count(Memory), sum(Memory), avg(Memory), min(Memory), "
           "max(Memory), count_distinct(Memory), list(Memory), distinct(Memory) FROM Machine "
           "WHERE false",
           "[ 'count(*)' = 0; 'count(Memory)' = 0; 'sum(Memory)' = 0; 'avg(Memory)' = undefined; "
           "'min(Memory)' = undefined; 'max(Memory)' = undefined; 'count_distinct(Memory)' = 0; "
           "'list(Memory)' = { }; 'distinct(Memory)' = { } ]\n");
    /* with GROUP BY, no rows is no groups */
    expect("SELECT Role, count(*) FROM Machine WHERE false GROUP BY Role", "");
    /* only undefined values */
    expect("SELECT sum(Nope) AS s, avg(Nope) AS a, min(Nope) AS lo, count(Nope) AS n FROM "
           "Machine",
           "[ s = 0; a = undefined; lo = undefined; n = 0 ]\n");
}

static void group_by__min_max_of_strings_ignore_case_and_mixing_is_error(void **state)
{
    (void)state;
    /* ann < Bob < Zed ignoring case (byte order would say Bob < Zed < ann) */
    expect("SELECT min(Who) AS lo, max(Who) AS hi FROM Owner", "[ lo = \"ann\"; hi = \"Zed\" ]\n");
    /* numbers and strings mixed: error; sum and avg of strings: error */
    expect("SELECT min(Mixed) AS lo, max(Mixed) AS hi, sum(Who) AS s, avg(Who) AS a, "
           "count(Who) AS n FROM Owner",
           "[ lo = undefined; hi = undefined; s = error; a = error; n = 3 ]\n");
    store_ok("{ [ AdType = \"Event\"; V = 3 ], [ AdType = \"Event\"; V = \"x\" ] }");
    expect("SELECT min(V) AS lo, max(V) AS hi, sum(V) AS s FROM Event",
           "[ lo = error; hi = error; s = error ]\n");
    /* booleans count as numbers */
    store_ok("[ AdType = \"Event\"; W = true ]");
    expect("SELECT sum(W) AS s, max(W) AS m FROM Event", "[ s = 1; m = true ]\n");
}

static void group_by__joined_values_and_names_without_case(void **state)
{
    (void)state;
    /* a joined type's attribute as the group */
    expect("SELECT O.Who, count(*) AS n, sum(Memory) AS m FROM Machine JOIN Owner O ON "
           "{ Platform, Role } === { O.Plat, O.Role } GROUP BY O.Who",
           "[ Who = \"ann\"; n = 2; m = 300 ]\n[ Who = \"Bob\"; n = 1; m = 50 ]\n");
    /* the GROUP BY expression is recognised whatever the case of its names */
    expect("SELECT PLATFORM, count(*) AS n FROM Machine GROUP BY platform ORDER BY Platform DESC",
           "[ PLATFORM = \"windows\"; n = 1 ]\n[ PLATFORM = \"mac\"; n = 1 ]\n"
           "[ PLATFORM = \"linux\"; n = 2 ]\n");
    expect("SELECT max(Memory) - min(Memory) AS spread, avg(Memory) AS a FROM Machine GROUP BY "
           "Role",
           "[ spread = 100; a = 150.0 ]\n[ spread = 0; a = 50.0 ]\n");
}

static void group_by__order_by_and_limit_apply_to_groups(void **state)
{
    (void)state;
    expect("SELECT Platform, sum(Memory) AS total FROM Machine GROUP BY Platform ORDER BY "
           "sum(Memory) DESC",
           "[ Platform = \"linux\"; total = 300 ]\n[ Platform = \"windows\"; total = 50 ]\n"
           "[ Platform = \"mac\"; total = 0 ]\n");
    expect("SELECT Platform, count(*) AS n FROM Machine GROUP BY Platform ORDER BY count(*), "
           "Platform DESC",
           "[ Platform = \"windows\"; n = 1 ]\n[ Platform = \"mac\"; n = 1 ]\n"
           "[ Platform = \"linux\"; n = 2 ]\n");
    expect("SELECT Platform FROM Machine GROUP BY Platform LIMIT 2",
           "[ Platform = \"linux\" ]\n[ Platform = \"mac\" ]\n");
    expect("SELECT Platform FROM Machine GROUP BY Platform ORDER BY Platform DESC LIMIT 1",
           "[ Platform = \"windows\" ]\n");
    expect("SELECT count(*) AS n FROM Machine LIMIT 0", "");
}

/* ---- ORDER BY and LIMIT ---- */

static void order_by__keys_directions_and_undefined_last(void **state)
{
    (void)state;
    expect("SELECT Name FROM Machine ORDER BY Memory",
           "[ Name = \"c\" ]\n[ Name = \"a\" ]\n[ Name = \"b\" ]\n[ Name = \"d\" ]\n");
    expect("SELECT Name FROM Machine ORDER BY Memory ASC",
           "[ Name = \"c\" ]\n[ Name = \"a\" ]\n[ Name = \"b\" ]\n[ Name = \"d\" ]\n");
    /* undefined is last descending too */
    expect("SELECT Name FROM Machine ORDER BY Memory DESC",
           "[ Name = \"b\" ]\n[ Name = \"a\" ]\n[ Name = \"c\" ]\n[ Name = \"d\" ]\n");
    /* several keys, each its own direction */
    expect("SELECT Name FROM Machine ORDER BY Role DESC, Memory",
           "[ Name = \"c\" ]\n[ Name = \"a\" ]\n[ Name = \"b\" ]\n[ Name = \"d\" ]\n");
    expect("SELECT Name FROM Machine ORDER BY Role ASC, Memory DESC",
           "[ Name = \"b\" ]\n[ Name = \"a\" ]\n[ Name = \"d\" ]\n[ Name = \"c\" ]\n");
    /* strings ignore case first, then by bytes */
    expect("SELECT Name FROM Machine ORDER BY Platform",
           "[ Name = \"b\" ]\n[ Name = \"a\" ]\n[ Name = \"d\" ]\n[ Name = \"c\" ]\n");
    /* by an expression not selected */
    expect("SELECT Name FROM Machine ORDER BY -Cpus",
           "[ Name = \"b\" ]\n[ Name = \"a\" ]\n[ Name = \"d\" ]\n[ Name = \"c\" ]\n");
}

static void order_by__is_stable(void **state)
{
    (void)state;
    /* equal keys keep the scan's order (a, b, d), both directions */
    expect("SELECT Name FROM Machine ORDER BY Role",
           "[ Name = \"a\" ]\n[ Name = \"b\" ]\n[ Name = \"d\" ]\n[ Name = \"c\" ]\n");
    expect("SELECT Name FROM Machine ORDER BY Role DESC",
           "[ Name = \"c\" ]\n[ Name = \"a\" ]\n[ Name = \"b\" ]\n[ Name = \"d\" ]\n");
    expect("SELECT Name FROM Machine ORDER BY Nope DESC",
           "[ Name = \"a\" ]\n[ Name = \"b\" ]\n[ Name = \"c\" ]\n[ Name = \"d\" ]\n");
}

static void limit__with_and_without_order_by(void **state)
{
    (void)state;
    expect("SELECT Name FROM Machine LIMIT 2", "[ Name = \"a\" ]\n[ Name = \"b\" ]\n");
    expect("SELECT Name FROM Machine LIMIT 0", "");
    expect("SELECT Name FROM Machine WHERE false ORDER BY Name", "");
    expect("SELECT Name FROM Machine WHERE false ORDER BY Name LIMIT 3", "");
    expect("SELECT Name FROM Machine ORDER BY Name LIMIT 0", "");
    expect("SELECT Name FROM Machine LIMIT 10",
           "[ Name = \"a\" ]\n[ Name = \"b\" ]\n[ Name = \"c\" ]\n[ Name = \"d\" ]\n");
    expect("SELECT Name FROM Machine WHERE Role == \"compute\" LIMIT 2",
           "[ Name = \"a\" ]\n[ Name = \"b\" ]\n");
    /* sorted first, then limited */
    expect("SELECT Name FROM Machine ORDER BY Memory DESC LIMIT 2",
           "[ Name = \"b\" ]\n[ Name = \"a\" ]\n");
    expect("SELECT * FROM Machine ORDER BY Name DESC LIMIT 1",
           "[ AdType = \"Machine\"; Cpus = 2; Name = \"d\"; Platform = \"mac\"; Role = "
           "\"compute\" ]\n");
}

static void limit__top_n_over_many_rows_equals_sort_then_cut(void **state)
{
    (void)state;
    /* 300 events; V repeats, so ties must keep scan order across the
     * collector's compactions (it keeps 2 x LIMIT rows at most) */
    ads_buf b = ADS_BUF_INIT;
    ads_buf_adds(&b, "{ ");
    for (int i = 0; i < 300; i++)
        ads_buf_printf(&b, "%s[ AdType = \"Event\"; N = %d; V = %d; W = %s ]", i ? ", " : "", i,
                       (i * 37) % 11, i % 5 ? "undefined" : "\"w\"");
    ads_buf_adds(&b, " }");
    store_ok(ads_buf_cstr(&b));
    ads_buf_free(&b);
    static const char *const orders[] = {"V", "V DESC", "W, V DESC", "W DESC, N DESC", "N % 7, V"};
    static const int limits[] = {1, 5, 10, 33, 64, 150, 299, 300, 1000};
    for (size_t o = 0; o < sizeof orders / sizeof orders[0]; o++) {
        char stmt[256];
        snprintf(stmt, sizeof stmt, "SELECT N, V FROM Event ORDER BY %s", orders[o]);
        char *all = strdup(rows(stmt));
        assert_int_equal(last.nrows, 300);
        for (size_t l = 0; l < sizeof limits / sizeof limits[0]; l++) {
            snprintf(stmt, sizeof stmt, "SELECT N, V FROM Event ORDER BY %s LIMIT %d", orders[o],
                     limits[l]);
            const char *some = rows(stmt);
            /* the first `limit` lines of all */
            const char *p = all;
            for (int k = 0; k < limits[l] && *p; k++)
                p = strchr(p, '\n') + 1;
            if (strlen(some) != (size_t)(p - all) || strncmp(some, all, (size_t)(p - all)))
                fail_msg("%s differs from the first rows of the full sort", stmt);
        }
        free(all);
    }
    /* stable: V = 0 rows in scan order */
    expect("SELECT N FROM Event ORDER BY V LIMIT 4",
           "[ N = 0 ]\n[ N = 11 ]\n[ N = 22 ]\n[ N = 33 ]\n");
}

static void order_by__a_bare_label_sorts_by_the_select_item(void **state)
{
    (void)state;
    expect("SELECT Name, Memory * 2 AS M2 FROM Machine ORDER BY M2 DESC",
           "[ Name = \"b\"; M2 = 400 ]\n[ Name = \"a\"; M2 = 200 ]\n[ Name = \"c\"; M2 = 100 ]\n"
           "[ Name = \"d\"; M2 = undefined ]\n");
    /* the label wins over a stored attribute of the same name (SQL's rule) */
    expect(
        "SELECT Name, Memory AS Cpus FROM Machine ORDER BY Cpus",
        "[ Name = \"c\"; Cpus = 50 ]\n[ Name = \"a\"; Cpus = 100 ]\n[ Name = \"b\"; Cpus = 200 ]\n"
        "[ Name = \"d\"; Cpus = undefined ]\n");
    /* names compare ignoring case; ORDER BY + LIMIT (the top-N path) too */
    expect("SELECT Name, Memory * 2 AS M2 FROM Machine ORDER BY m2 LIMIT 2",
           "[ Name = \"c\"; M2 = 100 ]\n[ Name = \"a\"; M2 = 200 ]\n");
    /* only a bare name: (M2) is an expression over the row, where M2 is
     * undefined, so the rows keep the scan's order */
    expect("SELECT Name, Memory * 2 AS M2 FROM Machine ORDER BY (M2) DESC",
           "[ Name = \"a\"; M2 = 200 ]\n[ Name = \"b\"; M2 = 400 ]\n[ Name = \"c\"; M2 = 100 ]\n"
           "[ Name = \"d\"; M2 = undefined ]\n");
    /* the rows are sorted by the values shown, not by the item evaluated again */
    for (int limit = 0; limit < 2; limit++) {
        const char *r = rows(limit ? "SELECT Name, random() AS R FROM Machine ORDER BY R LIMIT 3"
                                   : "SELECT Name, random() AS R FROM Machine ORDER BY R");
        double prev = -1;
        int n = 0;
        for (const char *p = r; (p = strstr(p, "R = ")); p += 4, n++) {
            double v = strtod(p + 4, NULL);
            if (v < prev)
                fail_msg("not sorted by the values shown:\n%s", r);
            prev = v;
        }
        assert_int_equal(n, limit ? 3 : 4);
    }
    /* in an aggregation: the label of an aggregate, of a GROUP BY value */
    expect("SELECT Platform, count(*) AS n FROM Machine GROUP BY Platform ORDER BY n DESC, "
           "Platform",
           "[ Platform = \"linux\"; n = 2 ]\n[ Platform = \"mac\"; n = 1 ]\n"
           "[ Platform = \"windows\"; n = 1 ]\n");
    expect("SELECT Role AS Kind, count(*) AS n FROM Machine GROUP BY Role ORDER BY kind DESC",
           "[ Kind = \"head\"; n = 1 ]\n[ Kind = \"compute\"; n = 3 ]\n");
    /* CycleServer's natural query */
    store_ok("{ [ AdType = \"Event\"; Owner = \"ann\" ], [ AdType = \"Event\"; Owner = \"bob\" ], "
             "[ AdType = \"Event\"; Owner = \"cy\" ], [ AdType = \"Event\"; Owner = \"ann\" ], "
             "[ AdType = \"Event\"; Owner = \"cy\" ], [ AdType = \"Event\"; Owner = \"ann\" ] }");
    expect("SELECT Owner, count(*) AS Count FROM Event GROUP BY Owner ORDER BY Count DESC",
           "[ Owner = \"ann\"; Count = 3 ]\n[ Owner = \"cy\"; Count = 2 ]\n"
           "[ Owner = \"bob\"; Count = 1 ]\n");
    expect("SELECT Owner, count(*) AS Count FROM Event GROUP BY Owner ORDER BY Count LIMIT 1",
           "[ Owner = \"bob\"; Count = 1 ]\n");
}

static void where__an_aggregate_that_is_not_a_builtin_is_an_error(void **state)
{
    (void)state;
    char *before = snapshot();
    const char *why = "is an aggregate; WHERE filters rows before they are grouped";
    static const struct {
        const char *stmt;
        int line, column;
        const char *call;
    } cases[] = {
        {"SELECT Role, count(*) AS n FROM Machine WHERE count(*) > 1 GROUP BY Role", 1, 47,
         "count(*)"},
        {"SELECT Name FROM Machine WHERE COUNT(Cpus) > 1", 1, 32, "COUNT(Cpus)"},
        {"SELECT Name FROM Machine\n  WHERE Name == \"a\" && size(list(Name)) > 0", 2, 29,
         "list(Name)"},
        {"SELECT Name FROM Machine WHERE [ x = distinct(Name) ].x", 1, 38, "distinct(Name)"},
        {"SELECT Name FROM Machine WHERE count_distinct(Role) == 2 && @anytime()", 1, 32,
         "count_distinct(Role)"},
        {"UPDATE Machine SET x = 1 WHERE count(*) > 0", 1, 32, "count(*)"},
        {"DELETE FROM Machine WHERE count(*) > 0", 1, 27, "count(*)"},
        {"PURGE WHERE AdType == \"Machine\" && list(Name) == { }", 1, 36, "list(Name)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char msg[256];
        snprintf(msg, sizeof msg, "%s %s", cases[i].call, why);
        expect_error(cases[i].stmt, ADS_EINVAL, cases[i].line, cases[i].column, msg);
    }
    /* ... and nothing was written */
    char *after = snapshot();
    assert_string_equal(before, after);
    free(before);
    free(after);
    expect_error("SELECT Name FROM Machine JOIN Owner O ON count(*) == 1", ADS_EINVAL, 1, 42,
                 "count(*) is an aggregate; JOIN's ON matches rows before they are grouped");
    /* ORDER BY of a statement that does not aggregate */
    expect_error("SELECT Name FROM Machine ORDER BY Name, count(*) DESC", ADS_EINVAL, 1, 41,
                 "count(*) is an aggregate; ORDER BY sorts rows one by one in a statement "
                 "without GROUP BY or an aggregate in the select list");
    /* sum, avg, min and max are also ClassAd built-ins (over a list): in
     * WHERE, and in the ORDER BY of a statement that does not aggregate,
     * they are those */
    expect("SELECT Name FROM Machine WHERE max({ Memory, Cpus }) > 150", "[ Name = \"b\" ]\n");
    expect("SELECT Name FROM Machine WHERE Cpus > 2 ORDER BY sum({ Memory, Cpus }) DESC",
           "[ Name = \"b\" ]\n[ Name = \"a\" ]\n");
    /* in an aggregation ORDER BY count(*) is the aggregate */
    expect("SELECT Role FROM Machine GROUP BY Role ORDER BY count(*)",
           "[ Role = \"head\" ]\n[ Role = \"compute\" ]\n");
}

static void group_by__min_max_of_times_compare_within_their_kind(void **state)
{
    (void)state;
    ts_time(&ts, T0 + 180);
    store_ok("[ AdType = \"Machine\"; Name = \"a\"; Memory = 101 ]");
    /* every row's _Timestamp: the machines stored at +60, a again at +180 */
    expect("SELECT min(_Timestamp) AS first, max(_Timestamp) AS last, count(*) AS n FROM Machine "
           "WHERE __Latest is __Latest",
           "[ first = `2023-11-14T22:14:20Z`; last = `2023-11-14T22:16:20Z`; n = 5 ]\n");
    store_ok("{ [ AdType = \"Event\"; At = `2024-01-02T00:00:00Z`; Rt = `1h` ], "
             "[ AdType = \"Event\"; At = `2023-05-01T00:00:00Z`; Rt = `90s` ], "
             "[ AdType = \"Event\"; At = `2024-03-01T12:00:00Z`; Rt = `2d` ] }");
    expect("SELECT min(At) AS first, max(At) AS last, min(Rt) AS lo, max(Rt) AS hi FROM Event",
           "[ first = `2023-05-01T00:00:00Z`; last = `2024-03-01T12:00:00Z`; lo = `1m30s`; "
           "hi = `2d` ]\n");
    /* per group, and as an ORDER BY of groups */
    expect("SELECT Role, max(_Timestamp) AS last FROM Machine WHERE __Latest is __Latest GROUP BY "
           "Role ORDER BY last DESC, Role",
           "[ Role = \"compute\"; last = `2023-11-14T22:16:20Z` ]\n"
           "[ Role = \"head\"; last = `2023-11-14T22:14:20Z` ]\n");
    /* kinds mixed (a time and a RelTime, a time and a number) are error */
    expect("SELECT min(V) AS lo, max(V) AS hi FROM Event", "[ lo = undefined; hi = undefined ]\n");
    store_ok(
        "{ [ AdType = \"Event\"; V = `2024-01-01T00:00:00Z` ], [ AdType = \"Event\"; V = `1h` ] }");
    expect("SELECT min(V) AS lo, max(V) AS hi FROM Event", "[ lo = error; hi = error ]\n");
    expect("SELECT min(At) AS lo FROM Event WHERE isUndefined(V) || isAbsTime(V)",
           "[ lo = `2023-05-01T00:00:00Z` ]\n");
    expect("SELECT max({ At }) AS lo FROM Event", "[ lo = error ]\n");
}

static void limit__the_largest_whole_number_is_accepted(void **state)
{
    (void)state;
    expect("SELECT Name FROM Machine LIMIT 9223372036854775807",
           "[ Name = \"a\" ]\n[ Name = \"b\" ]\n[ Name = \"c\" ]\n[ Name = \"d\" ]\n");
    expect("SELECT Name FROM Machine ORDER BY Name DESC LIMIT 9223372036854775807",
           "[ Name = \"d\" ]\n[ Name = \"c\" ]\n[ Name = \"b\" ]\n[ Name = \"a\" ]\n");
    expect_error("SELECT Name FROM Machine LIMIT 9223372036854775808", ADS_ESYNTAX, 1, 32,
                 "expected a smaller LIMIT, found '9'");
}

/* ---- USING ---- */

static void using__types_and_sequences_are_built_in(void **state)
{
    (void)state;
    expect("SELECT ForType, KeyAttributes, Count USING types WHERE !Builtin ORDER BY ForType",
           "[ ForType = \"Event\"; KeyAttributes = { }; Count = 0 ]\n"
           "[ ForType = \"Machine\"; KeyAttributes = { \"Name\" }; Count = 4 ]\n"
           "[ ForType = \"Owner\"; KeyAttributes = { \"Plat\", \"Role\" }; Count = 3 ]\n");
    expect_done("DELETE FROM Machine WHERE Name == \"d\"", ADS_STMT_DELETE, 1);
    expect("SELECT * USING TYPES WHERE ForType == \"machine\"",
           "[ ForType = \"Machine\"; KeyAttributes = { \"Name\" }; Count = 3; Deleted = 1; "
           "History = 1; Builtin = false ]\n");
    /* a Sequence record, and the sequence behind a keyless type's ids */
    store_ok("[ AdType = \"Sequence\"; Name = \"jobs\" ]");
    store_ok("{ [ AdType = \"Event\"; X = 1 ], [ AdType = \"Event\"; X = 2 ] }");
    expect("SELECT Name, Method, Value USING sequences ORDER BY Name",
           "[ Name = \"jobs\"; Method = \"increment\"; Value = 0 ]\n"
           "[ Name = \"type:Event\"; Method = \"increment\"; Value = 2 ]\n");
    expect("SELECT count(*) AS n USING sequences WHERE Name == \"jobs\"", "[ n = 1 ]\n");
}

/* A datasource of three rows; it remembers what it was given. */
typedef struct plug {
    int opened, closed;
    bool saw_where;
    int fail_at; /* next fails at this row (0: never) */
} plug;

typedef struct plug_cursor {
    plug *p;
    int i;
} plug_cursor;

static int plug_open(void *ctx, ads_txn *txn, const ads_expr *where, void **cursor, ads_error *err)
{
    (void)err;
    plug *p = ctx;
    assert_non_null(txn);
    p->opened++;
    p->saw_where = where != NULL;
    plug_cursor *c = calloc(1, sizeof *c);
    c->p = p;
    *cursor = c;
    return 0;
}

static int plug_next(void *cursor, const ads_record **row, ads_arena *a, ads_error *err)
{
    plug_cursor *c = cursor;
    static const char *const recs[] = {
        "[ Host = \"x\"; Load = 0.5; Up = true ]",
        "[ Host = \"y\"; Load = 2.25 ]",
        "[ Host = \"z\"; Load = 1.0; Up = false; _Note = \"n\" ]",
    };
    if (c->i >= 3)
        return 0;
    if (c->p->fail_at && c->i + 1 == c->p->fail_at)
        return ads_error_set(err, ADS_EIO, "the plugin lost its way at row %d", c->i + 1);
    const char *t = recs[c->i++];
    return ads_record_parse(row, a, t, strlen(t), err) ? -1 : 1;
}

static void plug_close(void *cursor)
{
    plug_cursor *c = cursor;
    c->p->closed++;
    free(c);
}

/* A datasource of `many_rows` rows [ i = 0 ] ... */
static int many_rows;

static int many_next(void *cursor, const ads_record **row, ads_arena *a, ads_error *err)
{
    plug_cursor *c = cursor;
    if (c->i >= many_rows)
        return 0;
    char t[32];
    snprintf(t, sizeof t, "[ i = %d ]", c->i++);
    return ads_record_parse(row, a, t, strlen(t), err) ? -1 : 1;
}

static void using__the_where_is_evaluated_once_per_row(void **state)
{
    (void)state;
    plug p = {0, 0, false, 0};
    ads_datasource ds = {plug_open, many_next, plug_close, &p};
    ads_error err;
    assert_int_equal(ads_query_register(q, "many", &ds, &err), 0);
    /* random(2) == 0 passes half the rows when evaluated once per row, a
     * quarter when evaluated twice: 4000 rows give 2000 +- 32 (one standard
     * deviation) against 1000 +- 27 */
    many_rows = 4000;
    expect("SELECT count(*) AS n USING many WHERE i >= 0", "[ n = 4000 ]\n");
    rows("SELECT count(*) AS n USING many WHERE random(2) == 0");
    long n = strtol(ads_buf_cstr(&last.rows) + 6, NULL, 10);
    if (n < 1700 || n > 2300)
        fail_msg("%ld of 4000 rows passed random(2) == 0: WHERE is not evaluated once", n);
    assert_true(p.saw_where);
    assert_int_equal(p.opened, p.closed);
}

/* A datasource of two rows [ n = 2; b = <empty blob> ], [ n = 1; b = ... ]
 * whose empty blobs have no bytes at all (a NULL pointer, as a program
 * building one would leave it). */
static int blob_next(void *cursor, const ads_record **row, ads_arena *a, ads_error *err)
{
    plug_cursor *c = cursor;
    if (c->i >= 2)
        return 0;
    ads_blob *bl = ads_arena_alloc(a, sizeof *bl);
    if (!bl)
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    bl->bytes.p = NULL;
    bl->bytes.len = 0;
    bl->meta = NULL;
    ads_value n = ads_int(2 - c->i++), b;
    b.type = ADS_BLOB;
    b.u.blob = bl;
    ads_record_builder *rb;
    int rc = ads_record_builder_new(&rb, a, err);
    if (!rc)
        rc = ads_record_builder_add_value(rb, "n", 1, &n, err);
    if (!rc)
        rc = ads_record_builder_add_value(rb, "b", 1, &b, err);
    if (rc)
        return rc;
    *row = ads_record_builder_finish(rb);
    return 1;
}

static void values__empty_blobs_are_copied(void **state)
{
    (void)state;
    plug p = {0, 0, false, 0};
    ads_datasource ds = {plug_open, blob_next, plug_close, &p};
    ads_error err;
    assert_int_equal(ads_query_register(q, "blobs", &ds, &err), 0);
    /* ORDER BY, list(), distinct() and GROUP BY copy values out of the row
     * (under UndefinedBehaviorSanitizer a copy from NULL would stop here) */
    expect("SELECT n, b USING blobs ORDER BY n",
           "[ n = 1; b = blob(\"\") ]\n[ n = 2; b = blob(\"\") ]\n");
    expect("SELECT list(b) AS l, distinct(b) AS d USING blobs",
           "[ l = { blob(\"\"), blob(\"\") }; d = { blob(\"\") } ]\n");
    expect("SELECT b, count(*) AS c USING blobs GROUP BY b", "[ b = blob(\"\"); c = 2 ]\n");
    expect("SELECT Name, blob(\"\") AS b FROM Machine WHERE Name < \"c\" ORDER BY Name DESC",
           "[ Name = \"b\"; b = blob(\"\") ]\n[ Name = \"a\"; b = blob(\"\") ]\n");
}

static void using__a_registered_datasource(void **state)
{
    (void)state;
    plug p = {0, 0, false, 0};
    ads_datasource ds = {plug_open, plug_next, plug_close, &p};
    ads_error err;
    assert_int_equal(ads_query_register(q, "your.plugin", &ds, &err), 0);
    /* the seed's own statement */
    expect("SELECT * USING your.plugin",
           "[ Host = \"x\"; Load = 0.5; Up = true ]\n[ Host = \"y\"; Load = 2.25 ]\n"
           "[ Host = \"z\"; Load = 1.0; Up = false ]\n");
    assert_false(p.saw_where);
    /* WHERE, ORDER BY, LIMIT and projection apply to its rows; names ignore case */
    expect("SELECT Host, Load * 2 AS L2 USING Your.Plugin WHERE Load > 0.75 ORDER BY Load DESC",
           "[ Host = \"y\"; L2 = 4.5 ]\n[ Host = \"z\"; L2 = 2.0 ]\n");
    assert_true(p.saw_where);
    expect("SELECT Host USING your.plugin LIMIT 1", "[ Host = \"x\" ]\n");
    expect("SELECT count(*) AS n, sum(Load) AS s, list(Host) AS h USING your.plugin WHERE "
           "!isUndefined(Up) GROUP BY Up",
           "[ n = 1; s = 1.0; h = { \"z\" } ]\n[ n = 1; s = 0.5; h = { \"x\" } ]\n");
    ads_exec_options opt = {true};
    assert_string_equal(rows_opt("SELECT * USING your.plugin WHERE Host == \"z\"", &opt),
                        "[ Host = \"z\"; Load = 1.0; Up = false; _Note = \"n\" ]\n");
    assert_int_equal(p.opened, p.closed);
    /* a datasource's error fails the statement, and its cursor is closed */
    p.fail_at = 2;
    assert_int_equal(run_opt("SELECT * USING your.plugin", NULL, &err), ADS_EIO);
    assert_string_equal(err.message, "the plugin lost its way at row 2");
    assert_int_equal(last.nrows, 1); /* rows stream: the first was given */
    assert_int_equal(last.ended, 0);
    assert_int_equal(p.opened, p.closed);
    p.fail_at = 0;
    /* names: built-ins cannot be replaced, bad names are refused */
    assert_int_equal(ads_query_register(q, "Types", &ds, &err), ADS_EINVAL);
    assert_string_equal(err.message, "Types is a built-in datasource");
    assert_int_equal(ads_query_register(q, "a b", &ds, &err), ADS_EINVAL);
    assert_string_equal(err.message,
                        "datasource name 'a b': letters, digits, '_', '.' and '-' only");
    ads_datasource half = {plug_open, NULL, plug_close, &p};
    assert_int_equal(ads_query_register(q, "half", &half, &err), ADS_EINVAL);
    assert_string_equal(err.message, "a datasource needs open, next and close");
    /* NULL removes it */
    assert_int_equal(ads_query_register(q, "YOUR.PLUGIN", NULL, &err), 0);
    expect_error("SELECT * USING your.plugin", ADS_ENOTFOUND, 1, 16,
                 "no datasource named your.plugin");
}

/* ======================================================================== */
/* Writes                                                                   */
/* ======================================================================== */

static void update__sets_from_the_row_as_it_was_and_counts(void **state)
{
    (void)state;
    ts_time(&ts, T0 + 180);
    /* both SETs see the old row: a swap */
    expect_done("UPDATE Machine SET Memory = Cpus, Cpus = Memory, Note = strcat(Name, \"!\") "
                "WHERE Cpus > 2",
                ADS_STMT_UPDATE, 2);
    expect("SELECT Name, Memory, Cpus, Note FROM Machine",
           "[ Name = \"a\"; Memory = 4; Cpus = 100; Note = \"a!\" ]\n"
           "[ Name = \"b\"; Memory = 8; Cpus = 200; Note = \"b!\" ]\n"
           "[ Name = \"c\"; Memory = 50; Cpus = undefined; Note = undefined ]\n"
           "[ Name = \"d\"; Memory = undefined; Cpus = 2; Note = undefined ]\n");
    /* a new row was appended; the old one is history */
    expect("SELECT Memory, __Latest, _Timestamp FROM Machine WHERE Name == \"a\"",
           "[ Memory = 100; __Latest = false; _Timestamp = `2023-11-14T22:14:20Z` ]\n"
           "[ Memory = 4; __Latest = true; _Timestamp = `2023-11-14T22:16:20Z` ]\n");
    /* SET x = undefined removes x */
    expect_done("UPDATE machine SET Note = undefined", ADS_STMT_UPDATE, 4);
    expect("SELECT * FROM Machine WHERE Name == \"a\"",
           "[ AdType = \"Machine\"; Cpus = 100; Memory = 4; Name = \"a\"; Platform = \"linux\"; "
           "Role = \"compute\" ]\n");
    /* nothing matches: nothing updated */
    expect_done("UPDATE Machine SET Memory = 1 WHERE Name == \"zz\"", ADS_STMT_UPDATE, 0);
    /* a quoted attribute name */
    expect_done("UPDATE Machine SET 'odd name' = 1 WHERE Name == \"c\"", ADS_STMT_UPDATE, 1);
    expect("SELECT 'odd name' FROM Machine WHERE Name == \"c\"", "[ 'odd name' = 1 ]\n");
}

static void update__keeps_expressions_and_skips_deleted_records(void **state)
{
    (void)state;
    store_ok("[ AdType = \"Machine\"; Name = \"e\"; Memory = 3; Twice = Memory * 2 ]");
    expect_done("UPDATE Machine SET Memory = 5 WHERE Name == \"e\"", ADS_STMT_UPDATE, 1);
    expect("SELECT Twice FROM Machine WHERE Name == \"e\"", "[ Twice = 10 ]\n");
    expect("SELECT * FROM Machine WHERE Name == \"e\"",
           "[ AdType = \"Machine\"; Memory = 5; Name = \"e\"; Twice = Memory * 2 ]\n");
    /* deleted records are not updated... */
    expect_done("DELETE FROM Machine WHERE Name == \"e\"", ADS_STMT_DELETE, 1);
    expect_done("UPDATE Machine SET Memory = 7 WHERE Name == \"e\"", ADS_STMT_UPDATE, 0);
    /* ...unless the statement mentions _Deleted: this undeletes */
    expect_done("UPDATE Machine SET _Deleted = false WHERE Name == \"e\"", ADS_STMT_UPDATE, 1);
    expect("SELECT Name, Memory FROM Machine WHERE Name == \"e\"",
           "[ Name = \"e\"; Memory = 5 ]\n");
}

static void update__errors(void **state)
{
    (void)state;
    char *before = snapshot();
    expect_error("UPDATE Machine SET Name = \"q\"", ADS_EINVAL, 0, 0,
                 "SET cannot change Name, a key attribute of type Machine");
    expect_error("UPDATE Owner SET role = \"q\" WHERE true", ADS_EINVAL, 0, 0,
                 "SET cannot change role, a key attribute of type Owner");
    expect_error("UPDATE Machine SET AdType = \"Owner\"", ADS_EINVAL, 0, 0,
                 "SET cannot change AdType");
    expect_error("UPDATE Machine SET Memory = 1, memory = 2", ADS_EINVAL, 0, 0,
                 "SET names memory twice");
    expect_error("UPDATE Machine SET __Latest = false", ADS_EINVAL, 0, 0,
                 "type Machine: __Latest is maintained by the store and cannot be set");
    expect_error("UPDATE Machine WHERE Name == \"a\"", ADS_ESYNTAX, 1, 16,
                 "expected SET, found 'WHERE'");
    expect_error("UPDATE Machine SET", ADS_ESYNTAX, 1, 19,
                 "expected an attribute name after SET, found the end of the statement");
    expect_error("UPDATE Machine SET Memory 3", ADS_ESYNTAX, 1, 27,
                 "expected '=' after the attribute name, found '3'");
    expect_error("UPDATE Machine SET Memory =", ADS_ESYNTAX, 1, 28,
                 "expected an expression after '=', found the end of the statement");
    expect_error("UPDATE Machine SET Memory = 1 Cpus = 2", ADS_ESYNTAX, 1, 31,
                 "expected ',', WHERE or the end of the statement, found 'Cpus'");
    expect_error("UPDATE SET Memory = 1", ADS_ESYNTAX, 1, 12, "expected SET, found 'Memory'");
    expect_error("UPDATE Nope SET x = 1", ADS_ENOTFOUND, 1, 8,
                 "no type named Nope (store a Type record first)");
    expect_error("UPDATE Machine SET x = 1 WHERE @duration(`1h`)", ADS_EINVAL, 0, 0,
                 "a temporal filter (@timerange, @duration, ...) belongs in SELECT only");
    char *after = snapshot();
    assert_string_equal(before, after);
    free(before);
    free(after);
}

static void delete__appends_a_deleted_row_once(void **state)
{
    (void)state;
    ts_time(&ts, T0 + 180);
    expect_done("DELETE FROM Machine WHERE Role == \"compute\" && Memory > 150", ADS_STMT_DELETE,
                1);
    /* deleting a deleted record does nothing */
    expect_done("DELETE FROM Machine WHERE Name == \"b\"", ADS_STMT_DELETE, 0);
    expect("SELECT Name FROM Machine", "[ Name = \"a\" ]\n[ Name = \"c\" ]\n[ Name = \"d\" ]\n");
    /* mentioning _Deleted shows deleted records (latest rows) */
    expect("SELECT Name, _Deleted FROM Machine WHERE Name > \"a\" && Name < \"d\"",
           "[ Name = \"b\"; _Deleted = true ]\n[ Name = \"c\"; _Deleted = false ]\n");
    expect("SELECT Name FROM Machine WHERE _Deleted", "[ Name = \"b\" ]\n");
    /* the record's rows: the stored one, then the deleting copy */
    expect("SELECT Memory, _Deleted, __Latest, _Timestamp FROM Machine WHERE Name == \"b\"",
           "[ Memory = 200; _Deleted = false; __Latest = false; _Timestamp = "
           "`2023-11-14T22:14:20Z` ]\n"
           "[ Memory = 200; _Deleted = true; __Latest = true; _Timestamp = "
           "`2023-11-14T22:16:20Z` ]\n");
    /* without FROM, WHERE says which types */
    expect_done("DELETE WHERE AdType in { \"Machine\", \"Owner\" } && (Role == \"head\")",
                ADS_STMT_DELETE, 3);
    expect("SELECT AdType, Name, Who WHERE Role == \"head\"", "");
    /* no WHERE: everything of the type */
    expect_done("DELETE FROM Machine", ADS_STMT_DELETE, 2);
    expect("SELECT count(*) AS n FROM Machine", "[ n = 0 ]\n");
    expect("SELECT count(*) AS n FROM Machine WHERE _Deleted is _Deleted", "[ n = 4 ]\n");
}

static void purge__removes_every_row_and_matches_deleted_records(void **state)
{
    (void)state;
    expect_done("UPDATE Machine SET Memory = 1 WHERE Name == \"a\"", ADS_STMT_UPDATE, 1);
    expect_done("DELETE FROM Machine WHERE Name == \"b\"", ADS_STMT_DELETE, 1);
    /* PURGE matches the deleted b without mentioning _Deleted */
    expect_done("PURGE FROM Machine WHERE Name < \"c\"", ADS_STMT_PURGE, 2);
    expect("SELECT Name, __Latest, _Deleted FROM Machine WHERE Name < \"c\"", "");
    expect("SELECT Name FROM Machine", "[ Name = \"c\" ]\n[ Name = \"d\" ]\n");
    /* a purged record stored again starts afresh */
    store_ok("[ AdType = \"Machine\"; Name = \"a\"; Memory = 9 ]");
    expect("SELECT Name, Memory, __Latest FROM Machine WHERE Name == \"a\"",
           "[ Name = \"a\"; Memory = 9; __Latest = true ]\n");
    /* without FROM, WHERE says which types */
    expect_done("PURGE WHERE AdType in { \"Owner\" }", ADS_STMT_PURGE, 3);
    expect_done("PURGE FROM Machine", ADS_STMT_PURGE, 3);
    expect("SELECT * USING types WHERE ForType == \"Machine\" || ForType == \"Owner\"",
           "[ ForType = \"Machine\"; KeyAttributes = { \"Name\" }; Count = 0; Deleted = 0; "
           "History = 0; Builtin = false ]\n"
           "[ ForType = \"Owner\"; KeyAttributes = { \"Plat\", \"Role\" }; Count = 0; Deleted = 0; "
           "History = 0; Builtin = false ]\n");
}

/* PURGE HISTORY: each record's rows before the row in effect at the cut go;
 * a timeline from the cut on answers as before; records deleted before the
 * cut go whole. The cut is the WHERE's _Timestamp < T, or now minus the
 * type's HistoryRetention. */
static void purge_history__keeps_the_rows_in_effect_from_the_cut_on(void **state)
{
    (void)state;
    ts_declare(db, "Node", "Name", NULL);
    for (int i = 0; i < 6; i++) {
        char text[400];
        ts_time(&ts, T0 + 600 * i);
        /* c: deleted at +1200 s, then left alone */
        snprintf(text, sizeof text,
                 "{ [ AdType = \"Node\"; Name = \"a\"; Memory = %d ], "
                 "[ AdType = \"Node\"; Name = \"b\"; Memory = %d ]%s%d%s }",
                 100 + i, 200 + 10 * i, i <= 2 ? ", [ AdType = \"Node\"; Name = \"c\"; Memory = " : "",
                 i <= 2 ? 300 + i : 0, i == 2 ? "; _Deleted = true ]" : i < 2 ? " ]" : "");
        if (i > 2)
            snprintf(text, sizeof text,
                     "{ [ AdType = \"Node\"; Name = \"a\"; Memory = %d ], "
                     "[ AdType = \"Node\"; Name = \"b\"; Memory = %d ] }",
                     100 + i, 200 + 10 * i);
        store_ok(text);
    }
    ts_time(&ts, T0 + 4000);
    static const char *const window =
        "SELECT sum@(sum(Memory)) AS m FROM Node WHERE @timerange(`2023-11-14T22:40:00Z`, "
        "`2023-11-15T00:00:00Z`) GROUP BY @intervals(`0:10:00`)";
    char *before = strdup(rows(window));
    assert_int_equal(last.nrows, 8); /* 22:40 to 00:00 by 10 minutes */
    expect_done("PURGE HISTORY FROM Node WHERE Name == \"a\" && _Timestamp < "
                "absTime(\"2023-11-14T22:40:00Z\")",
                ADS_STMT_PURGE, 2);
    assert_true(last_info.history);
    assert_int_equal(last_info.records, 0);
    expect("SELECT Name, Memory FROM Node WHERE __Latest is __Latest && Name == \"a\"",
           "[ Name = \"a\"; Memory = 102 ]\n[ Name = \"a\"; Memory = 103 ]\n"
           "[ Name = \"a\"; Memory = 104 ]\n[ Name = \"a\"; Memory = 105 ]\n");
    /* every record: c, deleted at +1200 s, goes whole */
    expect_done("PURGE HISTORY FROM node WHERE (_Timestamp < `2023-11-14T22:40:00Z`)",
                ADS_STMT_PURGE, 2 + 3);
    assert_int_equal(last_info.records, 1);
    expect("SELECT Name FROM Node WHERE _Deleted is _Deleted", "[ Name = \"a\" ]\n[ Name = \"b\" ]\n");
    const char *after = rows(window);
    if (strcmp(before, after) != 0)
        fail_msg("the window changed:\n%s---\n%s", before, after);
    free(before);
    /* nothing more to do at the same cut */
    expect_done("PURGE HISTORY FROM Node WHERE _Timestamp < `2023-11-14T22:40:00Z`", ADS_STMT_PURGE,
                0);
    /* the type's retention: now (+4000 s) minus 30 minutes, the cut +2200 s */
    expect_error("PURGE HISTORY FROM Node", ADS_EINVAL, 0, 0,
                 "type Node has no HistoryRetention: give the cut, as in PURGE HISTORY FROM Node "
                 "WHERE _Timestamp < absTime(\"...\")");
    ts_declare(db, "Node", "Name", "HistoryRetention = `0:30:00`;");
    expect_done("PURGE HISTORY FROM Node", ADS_STMT_PURGE, 2);
    expect("SELECT Name, Memory FROM Node WHERE __Latest is __Latest && Name == \"b\"",
           "[ Name = \"b\"; Memory = 230 ]\n[ Name = \"b\"; Memory = 240 ]\n"
           "[ Name = \"b\"; Memory = 250 ]\n");
    /* what the WHERE may say */
    expect_error("PURGE HISTORY FROM Node WHERE _Timestamp > `2023-11-14T22:40:00Z`", ADS_EINVAL,
                 0, 0,
                 "PURGE HISTORY takes its cut as _Timestamp < T (T a time), joined by && to "
                 "conditions on the records");
    expect_error("PURGE HISTORY FROM Node WHERE _Timestamp < Memory", ADS_EINVAL, 0, 0,
                 "PURGE HISTORY: the cut after _Timestamp < must be a time (an AbsTime, or "
                 "seconds since 1970) that needs no record, not undefined");
    expect_error("PURGE HISTORY FROM Node WHERE _Timestamp < 1 && _Timestamp < 2", ADS_EINVAL, 0,
                 0, "PURGE HISTORY takes one cut, not two");
    expect_error("PURGE HISTORY Node", ADS_ESYNTAX, 1, 15,
                 "expected FROM and a type name after PURGE HISTORY, found 'Node'");
    expect_error("PURGE HISTORY FROM Nope", ADS_ENOTFOUND, 1, 20,
                 "no type named Nope (store a Type record first)");
}

static void delete_purge__without_from_must_name_adtype(void **state)
{
    (void)state;
    expect_error("DELETE WHERE Name == \"a\"", ADS_EINVAL, 0, 0,
                 "DELETE without FROM must say which types in WHERE, with AdType (for example "
                 "WHERE AdType in { \"A\", \"B\" })");
    expect_error("PURGE", ADS_EINVAL, 0, 0,
                 "PURGE without FROM must say which types in WHERE, with AdType (for example "
                 "WHERE AdType in { \"A\", \"B\" })");
    expect_error("DELETE FROM Nope WHERE x", ADS_ENOTFOUND, 1, 13,
                 "no type named Nope (store a Type record first)");
    expect_error("PURGE FROM", ADS_ESYNTAX, 1, 11,
                 "expected a type name, found the end of the statement");
    expect_error("DELETE FROM Machine Name == \"a\"", ADS_ESYNTAX, 1, 21,
                 "expected WHERE or the end of the statement, found 'Name'");
    expect_error("DELETE FROM Machine WHERE x GROUP BY y", ADS_ESYNTAX, 1, 29,
                 "expected the end of the statement, found 'GROUP'");
    expect("SELECT count(*) AS n FROM Machine", "[ n = 4 ]\n");
}

static void store__merges_counts_and_keeps_expressions(void **state)
{
    (void)state;
    ts_time(&ts, T0 + 180);
    expect_done("STORE [ AdType = \"Machine\"; Name = \"A\"; Memory = 1000; Cpus = undefined ], "
                "[AdType=\"owner\"; Plat=\"solaris\"; Role=\"head\"; Who=\"sam\"]",
                ADS_STMT_STORE, 2);
    /* merged into a (key "A" === "a"): Memory replaced, Cpus removed, the rest kept */
    expect("SELECT * FROM Machine WHERE Name == \"a\"",
           "[ AdType = \"Machine\"; Memory = 1000; Name = \"A\"; Platform = \"linux\"; Role = "
           "\"compute\" ]\n");
    expect("SELECT Who FROM Owner WHERE Plat == \"solaris\"", "[ Who = \"sam\" ]\n");
    /* non-constant attributes stay expressions and are evaluated when read */
    expect_done("STORE [ AdType = \"Machine\"; Name = \"e\"; Memory = 3; Twice = Memory * 2; "
                "L = { 1, 2 }; R = [ x = 1 ]; Neg = -4 ]",
                ADS_STMT_STORE, 1);
    expect(
        "SELECT * FROM Machine WHERE Name == \"e\"",
        "[ AdType = \"Machine\"; L = { 1, 2 }; Memory = 3; Name = \"e\"; Neg = -4; R = [ x = 1 ]; "
        "Twice = Memory * 2 ]\n");
    expect("SELECT Twice, Twice + 1 AS t1 FROM Machine WHERE Name == \"e\"",
           "[ Twice = 6; t1 = 7 ]\n");
    /* a keyless type gets ids */
    expect_done("STORE [ AdType = \"Event\"; X = 1 ], [ AdType = \"Event\"; X = 2 ], "
                "[ AdType = \"Event\"; X = 3 ]",
                ADS_STMT_STORE, 3);
    expect("SELECT count(*) AS n, sum(X) AS s FROM Event", "[ n = 3; s = 6 ]\n");
    /* a deleted record stored again starts afresh */
    expect_done("DELETE FROM Machine WHERE Name == \"c\"", ADS_STMT_DELETE, 1);
    expect_done("STORE [ AdType = \"Machine\"; Name = \"c\"; Cpus = 1 ]", ADS_STMT_STORE, 1);
    expect("SELECT * FROM Machine WHERE Name == \"c\"",
           "[ AdType = \"Machine\"; Cpus = 1; Name = \"c\" ]\n");
}

/* STORE of records equal to their latest rows appends nothing and counts
 * them apart: rows counts the records that changed, unchanged the rest. */
static void store__unchanged_records_are_counted_apart(void **state)
{
    (void)state;
    ts_time(&ts, T0 + 180);
    expect_done("STORE [ AdType = \"Machine\"; Name = \"u1\"; Memory = 1 ], "
                "[ AdType = \"Machine\"; Name = \"u2\"; L = { 1.5, [ x = `2020-01-01T00:00:00Z` ] } ]",
                ADS_STMT_STORE, 2);
    assert_int_equal(last_info.unchanged, 0);
    ts_time(&ts, T0 + 240);
    expect_done("STORE [ AdType = \"Machine\"; Name = \"u1\"; Memory = 1 ], "
                "[ AdType = \"Machine\"; Name = \"u2\"; L = { 1.5, [ x = `2020-01-01T00:00:00Z` ] } ], "
                "[ AdType = \"Machine\"; Name = \"u3\" ]",
                ADS_STMT_STORE, 1);
    assert_int_equal(last_info.unchanged, 2);
    /* the latest rows keep their dates */
    expect("SELECT Name, _Timestamp FROM Machine WHERE Name in { \"u1\", \"u2\" }",
           "[ Name = \"u1\"; _Timestamp = `2023-11-14T22:16:20Z` ]\n"
           "[ Name = \"u2\"; _Timestamp = `2023-11-14T22:16:20Z` ]\n");
    expect("SELECT count(*) AS n FROM Machine WHERE Name == \"u1\" && __Latest is __Latest",
           "[ n = 1 ]\n");
}

static void store__a_failing_record_stores_nothing(void **state)
{
    (void)state;
    char *before = snapshot();
    expect_error("STORE [ AdType = \"Machine\"; Name = \"z\" ], [ Name = \"y\" ]", ADS_EINVAL, 0, 0,
                 "record 2: a record needs AdType, the name of its type");
    expect_error("STORE [ AdType = \"Machine\"; Name = \"z\" ], [ AdType = \"Machine\" ]",
                 ADS_EINVAL, 0, 0, "record 2: a record of type Machine needs key attribute Name");
    expect_error("STORE [ AdType = \"Machine\"; Name = \"z\" ], [ AdType = \"Nope\"; x = 1 ]",
                 ADS_ENOTFOUND, 0, 0, "record 2: no type named Nope (store a Type record first)");
    expect_error("STORE [ AdType = \"Machine\"; Name = \"a\"; __Latest = false ]", ADS_EINVAL, 0, 0,
                 "type Machine: __Latest is maintained by the store and cannot be set");
    expect_error("STORE [ AdType = \"Machine\"; Name = \"z\" ], 3", ADS_ESYNTAX, 1, 43,
                 "expected a record '[ ... ]' to store, found '3'");
    expect_error("STORE [ AdType = \"Machine\"; Name = \"z\" ] x", ADS_ESYNTAX, 1, 42,
                 "expected ',' or the end of the statement, found 'x'");
    /* (a second record without the comma reads as a subscript of the first) */
    expect_error("STORE [ AdType = \"Machine\"; Name = \"z\" ] [ x = 1 ]", ADS_ESYNTAX, 1, 46,
                 "expected ']' after a subscript, found '='");
    expect_error("STORE", ADS_ESYNTAX, 1, 6,
                 "expected a record '[ ... ]' to store, found the end of the statement");
    expect_error("STORE [ AdType = \"Machine\"; Name = ]", ADS_ESYNTAX, 1, 36,
                 "expected an expression, found ']'");
    char *after = snapshot();
    assert_string_equal(before, after);
    free(before);
    free(after);
    expect("SELECT Name FROM Machine WHERE Name == \"z\"", "");
}

/* ---- hidden rows ---- */

static void hidden_rows__deleted_and_history_need_mentioning(void **state)
{
    (void)state;
    ts_time(&ts, T0 + 180);
    expect_done("UPDATE Machine SET Memory = 101 WHERE Name == \"a\"", ADS_STMT_UPDATE, 1);
    ts_time(&ts, T0 + 240);
    expect_done("DELETE FROM Machine WHERE Name == \"a\"", ADS_STMT_DELETE, 1);
    expect("SELECT Name FROM Machine WHERE Memory > 60", "[ Name = \"b\" ]\n");
    /* _Deleted mentioned anywhere: in the select list, WHERE, GROUP BY, ORDER BY */
    expect("SELECT Name, _Deleted FROM Machine WHERE Memory > 60",
           "[ Name = \"a\"; _Deleted = true ]\n[ Name = \"b\"; _Deleted = false ]\n");
    expect("SELECT Name FROM Machine WHERE Memory > 60 ORDER BY _Deleted DESC",
           "[ Name = \"a\" ]\n[ Name = \"b\" ]\n");
    expect("SELECT _Deleted, count(*) AS n FROM Machine GROUP BY _Deleted",
           "[ _Deleted = false; n = 3 ]\n[ _Deleted = true; n = 1 ]\n");
    expect("SELECT Name FROM Machine WHERE Memory > 60 && _deleted is _DELETED",
           "[ Name = \"a\" ]\n[ Name = \"b\" ]\n");
    /* __Latest mentioned: every row of each record, oldest first (deleted
     * rows still hidden unless _Deleted is mentioned too) */
    expect("SELECT Name, Memory, __Latest FROM Machine WHERE Name == \"a\"",
           "[ Name = \"a\"; Memory = 100; __Latest = false ]\n"
           "[ Name = \"a\"; Memory = 101; __Latest = false ]\n");
    expect("SELECT Name, Memory, __Latest, _Deleted FROM Machine WHERE Name < \"c\"",
           "[ Name = \"a\"; Memory = 100; __Latest = false; _Deleted = false ]\n"
           "[ Name = \"a\"; Memory = 101; __Latest = false; _Deleted = false ]\n"
           "[ Name = \"a\"; Memory = 101; __Latest = true; _Deleted = true ]\n"
           "[ Name = \"b\"; Memory = 200; __Latest = true; _Deleted = false ]\n");
    expect("SELECT count(*) AS n FROM Machine WHERE __Latest is __Latest && _Deleted is "
           "_Deleted",
           "[ n = 6 ]\n");
    expect("SELECT Name FROM Machine WHERE Name == \"a\" ORDER BY __Latest",
           "[ Name = \"a\" ]\n[ Name = \"a\" ]\n");
    expect("SELECT count(*) AS n FROM Machine GROUP BY __LATEST", "[ n = 2 ]\n[ n = 3 ]\n");
    /* in a JOIN's ON */
    expect("SELECT Name, O.Who FROM Machine JOIN Owner O ON { Platform, Role } === "
           "{ O.Plat, O.Role } && !_Deleted ORDER BY Name",
           "[ Name = \"b\"; Who = \"ann\" ]\n[ Name = \"c\"; Who = \"Bob\" ]\n");
}

/* ---- point lookups ---- */

static void point_lookup__agrees_with_a_scan(void **state)
{
    (void)state;
    expect_done("UPDATE Machine SET Memory = 150 WHERE Name == \"b\"", ADS_STMT_UPDATE, 1);
    expect_done("DELETE FROM Machine WHERE Name == \"c\"", ADS_STMT_DELETE, 1);
    static const struct {
        const char *type, *where, *want;
    } cases[] = {
        {"Machine", "Name == \"a\"", "a"},
        {"Machine", "Name == \"A\"", "a"},
        {"Machine", "\"B\" == Name", "b"},
        {"Machine", "Name === \"B\"", "b"},
        {"Machine", "Name is \"B\"", ""},
        {"Machine", "Name is \"b\"", "b"},
        {"Machine", "Name =?= \"b\"", "b"},
        {"Machine", "(Name == \"a\")", "a"},
        {"Machine", "Name == \"a\" && Memory > 1000", ""},
        {"Machine", "Memory > 60 && Name == \"b\"", "b"},
        {"Machine", "Name == \"a\" && Name == \"b\"", ""},
        {"Machine", "Name == \"zz\"", ""},
        {"Machine", "Name == 1", ""},
        {"Machine", "Name == \"c\"", ""},
        {"Machine", "Name == \"c\" && _Deleted", "c"},
        {"Machine", "Name == \"C\" && _Deleted is _Deleted", "c"},
        {"Machine", "Name == \"b\" && __Latest is __Latest", "b b"},
        {"Machine", "Name == \"B\" && !__Latest", "b"},
        {"Machine", "Name == strcat(\"a\")", "a"},
        {"Machine M", "M.Name == \"A\"", "a"},
        {"Machine M", "M.Name == \"A\" && M.Memory == 100", "a"},
        {"Owner", "{ Plat, Role } === { \"LINUX\", \"Compute\" }", "ann"},
        {"Owner", "Role == \"HEAD\" && Plat == \"Mac\"", "Zed"},
        {"Owner", "Plat == \"windows\"", "Bob"},
        {"Owner", "{ Plat, Role } === { \"windows\", \"compute\" }", ""},
        {"Machine JOIN Owner O ON { Platform, Role } === { O.Plat, O.Role }",
         "Name == \"A\" && O.Who == \"ann\"", "a"},
        {"Machine JOIN Owner O ON { Platform, Role } === { O.Plat, O.Role }",
         "Name == \"A\" && O.Who == \"Bob\"", ""},
        {"Machine OUTER JOIN Owner O ON { Platform, Role } === { O.Plat, O.Role }",
         "Name == \"d\" && isUndefined(O)", "d"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *attr = strncmp(cases[i].type, "Owner", 5) == 0 ? "Who" : "Name";
        char stmt[512], scan[512];
        snprintf(stmt, sizeof stmt, "SELECT %s FROM %s WHERE %s", attr, cases[i].type,
                 cases[i].where);
        /* || false: no longer a conjunction pinning the key, so a scan */
        snprintf(scan, sizeof scan, "SELECT %s FROM %s WHERE (%s) || false", attr, cases[i].type,
                 cases[i].where);
        char *got = strdup(rows(stmt));
        const char *by_scan = rows(scan);
        if (strcmp(got, by_scan))
            fail_msg("%s\n  gives:\n%s  a scan gives:\n%s", stmt, got, by_scan);
        /* and the expected names */
        ads_buf want = ADS_BUF_INIT;
        for (const char *p = cases[i].want; *p;) {
            const char *sp = strchr(p, ' ');
            size_t n = sp ? (size_t)(sp - p) : strlen(p);
            ads_buf_printf(&want, "[ %s = \"%.*s\" ]\n", attr, (int)n, p);
            p += n + (sp != NULL);
        }
        if (strcmp(got, ads_buf_cstr(&want)))
            fail_msg("%s\n  gives:\n%s  want:\n%s", stmt, got, ads_buf_cstr(&want));
        ads_buf_free(&want);
        free(got);
    }
}

/* ======================================================================== */
/* Errors                                                                   */
/* ======================================================================== */

/* A statement calling a function that does not exist is refused before it
 * runs, at the call; records stored with one keep it, and it evaluates to
 * error, as in HTCondor. */
static void errors__an_unknown_function_is_refused_where_it_is_called(void **state)
{
    (void)state;
    const char *msg = "no function named nosuch (adstore help eval lists the ClassAd functions; "
                      "docs/classad.md)";
    expect_error("SELECT Name FROM Machine WHERE nosuch(Memory) > 1", ADS_EINVAL, 1, 32, msg);
    expect_error("SELECT Name,\n  1 + nosuch() AS x FROM Machine", ADS_EINVAL, 2, 7, msg);
    expect_error("SELECT Name FROM Machine ORDER BY [ a = nosuch(1) ].a", ADS_EINVAL, 1, 41, msg);
    expect_error("SELECT Role, count(*) AS n FROM Machine GROUP BY nosuch(Role)", ADS_EINVAL, 1,
                 50, msg);
    expect_error("UPDATE Machine SET x = { nosuch(1) } WHERE Name == \"a\"", ADS_EINVAL, 1, 26,
                 msg);
    ads_error err;
    ads_stmt_kind kind;
    const char *s = "DELETE FROM Machine WHERE NoSuch(1)";
    assert_int_equal(ads_query_parse(s, strlen(s), 0, strlen(s), &kind, &err), ADS_EINVAL);
    assert_int_equal(err.column, 27);
    /* built-ins in any case, aggregates and the timeline language pass */
    expect("SELECT STRCAT(\"a\", \"b\") AS s, count(*) AS n FROM Machine WHERE Name == \"a\"",
           "[ s = \"ab\"; n = 1 ]\n");
    /* data may call anything: it evaluates to error */
    store_ok("[ AdType = \"Machine\"; Name = \"zz\"; X = nosuch(1) ]");
    expect("SELECT X, isError(X) AS e FROM Machine WHERE Name == \"zz\"",
           "[ X = error; e = true ]\n");
}

static void errors__syntax_names_the_place_and_what_was_expected(void **state)
{
    (void)state;
    static const struct {
        const char *stmt;
        int line, column;
        const char *msg;
    } cases[] = {
        {"SELECT * FORM Machine", 1, 10,
         "expected FROM, USING, WHERE, GROUP BY, ORDER BY, LIMIT or the end of the statement, "
         "found 'FORM'"},
        {"SELECT * , Name FROM Machine", 1, 10,
         "expected FROM, USING, WHERE, GROUP BY, ORDER BY, LIMIT or the end of the statement, "
         "found ','"},
        {"SELECT a b FROM M", 1, 10,
         "expected ',', AS, FROM, USING, WHERE, GROUP BY, ORDER BY, LIMIT or the end of the "
         "statement, found 'b'"},
        {"SELEC * FROM Machine", 1, 1,
         "expected SELECT, UPDATE, DELETE, PURGE, STORE, BEGIN, COMMIT or ROLLBACK, found 'SELEC'"},
        {"", 1, 1,
         "expected SELECT, UPDATE, DELETE, PURGE, STORE, BEGIN, COMMIT or ROLLBACK, found the end of the "
         "statement"},
        {"42", 1, 1, "expected SELECT, UPDATE, DELETE, PURGE, STORE, BEGIN, COMMIT or ROLLBACK, found '4'"},
        {"SELECT", 1, 7,
         "expected an expression or '*' in the select list, found the end of the statement"},
        {"SELECT FROM Machine", 1, 8,
         "expected an expression or '*' in the select list, found 'FROM'"},
        {"SELECT Name, FROM Machine", 1, 14,
         "expected an expression or '*' in the select list, found 'FROM'"},
        {"SELECT Name AS FROM Machine", 1, 21,
         "expected ',', AS, FROM, USING, WHERE, GROUP BY, ORDER BY, LIMIT or the end of the "
         "statement, found 'Machine'"},
        {"SELECT Name AS", 1, 15, "expected a label after AS, found the end of the statement"},
        {"SELECT Name AS 'x", 1, 16, "expected a label, found '''"},
        {"SELECT * FROM", 1, 14, "expected a type name, found the end of the statement"},
        {"SELECT * FROM 3", 1, 15, "expected a type name, found '3'"},
        {"SELECT * FROM Machine GROUP Name", 1, 29, "expected BY after GROUP, found 'Name'"},
        {"SELECT * FROM Machine ORDER Name", 1, 29, "expected BY after ORDER, found 'Name'"},
        {"SELECT * FROM Machine GROUP BY", 1, 31,
         "expected an expression after GROUP BY, found the end of the statement"},
        {"SELECT * FROM Machine ORDER BY Name DESC,", 1, 42,
         "expected an expression after ORDER BY, found the end of the statement"},
        {"SELECT * FROM Machine ORDER BY LIMIT 3", 1, 32,
         "expected an expression after ORDER BY, found 'LIMIT'"},
        {"SELECT * FROM Machine LIMIT x", 1, 29, "expected a whole number after LIMIT, found 'x'"},
        {"SELECT * FROM Machine LIMIT -1", 1, 29, "expected a whole number after LIMIT, found '-'"},
        {"SELECT * FROM Machine LIMIT 2.5", 1, 30, "expected the end of the statement, found '.'"},
        {"SELECT * FROM Machine LIMIT 3x", 1, 29, "expected a whole number after LIMIT, found '3'"},
        {"SELECT * FROM Machine LIMIT", 1, 28,
         "expected a whole number after LIMIT, found the end of the statement"},
        {"SELECT * FROM Machine LIMIT 99999999999999999999", 1, 29,
         "expected a smaller LIMIT, found '9'"},
        {"SELECT * FROM Machine LIMIT 2 3", 1, 31, "expected the end of the statement, found '3'"},
        {"SELECT * FROM Machine WHERE", 1, 28,
         "expected a condition after WHERE, found the end of the statement"},
        {"SELECT * FROM Machine WHERE Name ==", 1, 36,
         "expected an expression, found end of input"},
        {"SELECT * FROM Machine WHERE (Name", 1, 34, "expected ')', found end of input"},
        {"SELECT * FROM Machine WHERE x ORDER BY y LIMIT 1 WHERE", 1, 50,
         "expected the end of the statement, found 'WHERE'"},
        {"SELECT * FROM Machine WHERE x x", 1, 31,
         "expected GROUP BY, ORDER BY, LIMIT or the end of the statement, found 'x'"},
        {"SELECT * FROM Machine GROUP BY x y", 1, 34,
         "expected ',', ORDER BY, LIMIT or the end of the statement, found 'y'"},
        {"SELECT * FROM Machine ORDER BY x y", 1, 34,
         "expected ',', ASC, DESC, LIMIT or the end of the statement, found 'y'"},
        {"SELECT * FROM Machine JOIN Owner ON x", 1, 34,
         "expected an alias for the joined type (JOIN Type T2 ON ...), found 'ON'"},
        {"SELECT * FROM Machine JOIN Owner O x", 1, 36,
         "expected ON after the joined type, found 'x'"},
        {"SELECT * FROM Machine JOIN Owner O ON", 1, 38,
         "expected the JOIN condition, found the end of the statement"},
        {"SELECT * FROM Machine INNER Owner O ON x", 1, 29,
         "expected JOIN after INNER, found 'Owner'"},
        {"SELECT * FROM Machine OUTER Owner O ON x", 1, 29,
         "expected JOIN after OUTER, found 'Owner'"},
        {"SELECT * FROM Machine JOIN", 1, 27,
         "expected a type name after JOIN, found the end of the statement"},
        {"SELECT * USING", 1, 15,
         "expected a datasource name after USING, found the end of the statement"},
        {"SELECT * USING types JOIN x", 1, 22,
         "expected JOIN, WHERE, GROUP BY, ORDER BY, LIMIT or the end of the statement, found "
         "'JOIN'"},
        {"SELECT * FROM Machine; SELECT 1", 1, 24,
         "expected JOIN, WHERE, GROUP BY, ORDER BY, LIMIT or the end of the statement, found "
         "'SELECT'"},
        {"SELECT *\n  FROM Machine\n  WHERE Name == \"a\"\n  ORDER Name", 4, 9,
         "expected BY after ORDER, found 'Name'"},
        {"SELECT *\n FROM Machine WHERE\n   (1 +)", 3, 8, "expected an expression, found ')'"},
        {"SELECT \"abc FROM Machine", 1, 8, "unterminated string"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        expect_error(cases[i].stmt, ADS_ESYNTAX, cases[i].line, cases[i].column, cases[i].msg);
}

static void errors__semantic_ones_name_what_is_wrong(void **state)
{
    (void)state;
    expect_error("SELECT * FROM Nope", ADS_ENOTFOUND, 1, 15,
                 "no type named Nope (store a Type record first)");
    expect_error("SELECT *\nFROM Machine\n  JOIN Nope N ON x", ADS_ENOTFOUND, 3, 8,
                 "no type named Nope (store a Type record first)");
    expect_error("SELECT * USING  nope.plugin", ADS_ENOTFOUND, 1, 17,
                 "no datasource named nope.plugin");
    expect_error("SELECT Name, count(*) FROM Machine", ADS_EINVAL, 0, 0,
                 "Name in the select list is neither inside an aggregate nor a GROUP BY "
                 "expression");
    expect_error("SELECT Name FROM Machine GROUP BY Role", ADS_EINVAL, 0, 0,
                 "Name in the select list is neither inside an aggregate nor a GROUP BY "
                 "expression");
    expect_error("SELECT Role FROM Machine GROUP BY Role ORDER BY Name", ADS_EINVAL, 0, 0,
                 "Name in ORDER BY is neither inside an aggregate nor a GROUP BY expression");
    expect_error("SELECT O.Who, count(*) FROM Machine JOIN Owner O ON Name == O.Who", ADS_EINVAL, 0,
                 0,
                 "Who in the select list is neither inside an aggregate nor a GROUP BY "
                 "expression");
    expect_error("SELECT * FROM Machine GROUP BY Role", ADS_EINVAL, 0, 0,
                 "SELECT * cannot be grouped: list the GROUP BY expressions and aggregates to "
                 "show");
    expect_error("SELECT count(*) FROM Machine GROUP BY count(*)", ADS_EINVAL, 0, 0,
                 "GROUP BY cannot use an aggregate");
    expect_error("SELECT sum(sum(Memory)) FROM Machine", ADS_EINVAL, 0, 0,
                 "an aggregate inside an aggregate in the select list");
    expect_error("SELECT count(1, 2) FROM Machine", ADS_EINVAL, 0, 0,
                 "count takes one argument (or *) in the select list");
    expect_error("SELECT sum(*) FROM Machine", ADS_EINVAL, 0, 0,
                 "sum takes one argument in the select list");
    expect_error("SELECT avg() FROM Machine", ADS_EINVAL, 0, 0,
                 "avg takes one argument in the select list");
    expect_error("SELECT Role FROM Machine GROUP BY Role ORDER BY max(1, 2)", ADS_EINVAL, 0, 0,
                 "max takes one argument in ORDER BY");
    expect_error("SELECT Name FROM Machine GROUP BY @intervals(`1h`)", ADS_EINVAL, 0, 0,
                 "GROUP BY @intervals needs a temporal filter in WHERE (@timerange, @duration, "
                 "@last or @anytime)");
}

static void errors__a_statement_parses_and_checks_without_a_store(void **state)
{
    (void)state;
    ads_stmt_kind kind = ADS_STMT_SELECT;
    ads_error err;
    const char *t = "STORE [ AdType = \"Machine\"; Name = \"z\" ]";
    assert_int_equal(ads_query_parse(t, strlen(t), 0, strlen(t), &kind, &err), 0);
    assert_int_equal(kind, ADS_STMT_STORE);
    /* what ads_query_exec_at would say of the text, with its place */
    t = "SELECT 1 FROM M;\n  STOR x";
    assert_int_equal(ads_query_parse(t, strlen(t), 17, strlen(t), &kind, &err), ADS_ESYNTAX);
    assert_int_equal(err.line, 2);
    assert_int_equal(err.column, 3);
    assert_string_equal(err.message,
                        "expected SELECT, UPDATE, DELETE, PURGE, STORE, BEGIN, COMMIT or ROLLBACK, found 'STOR'");
    t = "DELETE WHERE Name == \"a\"";
    assert_int_equal(ads_query_parse(t, strlen(t), 0, strlen(t), &kind, &err), ADS_EINVAL);
    t = "UPDATE M SET a = 1, A = 2";
    assert_int_equal(ads_query_parse(t, strlen(t), 0, strlen(t), &kind, &err), ADS_EINVAL);
    assert_string_equal(err.message, "SET names A twice");
    t = "DELETE FROM M WHERE @duration(`1h`)";
    assert_int_equal(ads_query_parse(t, strlen(t), 0, strlen(t), &kind, &err), ADS_EINVAL);
    t = "SELECT a FROM M WHERE count(*) > 1";
    assert_int_equal(ads_query_parse(t, strlen(t), 0, strlen(t), &kind, &err), ADS_EINVAL);
    assert_int_equal(err.column, 23);
    /* types need the store: an unknown one parses */
    t = "UPDATE Nope SET x = 1";
    assert_int_equal(ads_query_parse(t, strlen(t), 0, strlen(t), &kind, &err), 0);
    assert_int_equal(kind, ADS_STMT_UPDATE);
    assert_int_equal(ads_query_parse(NULL, 0, 0, 0, NULL, &err), ADS_ESYNTAX);
}

/* A failing statement leaves the store as it was; a sink that stops ends the
 * statement with its error. */
static void errors__a_sink_that_stops_ends_the_statement(void **state)
{
    (void)state;
    collect c;
    memset(&c, 0, sizeof c);
    c.stop_after = 2;
    ads_sink sink = {c_begin, c_row, c_end, &c};
    ads_error err;
    const char *s = "SELECT Name FROM Machine";
    assert_int_equal(ads_query_exec(q, s, strlen(s), &sink, NULL, NULL, &err), ADS_EINVAL);
    assert_string_equal(err.message, "the sink had enough");
    assert_int_equal(c.nrows, 2);
    assert_int_equal(c.ended, 0);
    /* also when the rows come sorted or grouped */
    ads_buf_clear(&c.rows);
    c.nrows = 0;
    s = "SELECT Name FROM Machine ORDER BY Name DESC";
    assert_int_equal(ads_query_exec(q, s, strlen(s), &sink, NULL, NULL, &err), ADS_EINVAL);
    assert_string_equal(ads_buf_cstr(&c.rows), "[ Name = \"d\" ]\n[ Name = \"c\" ]\n");
    c.nrows = 0;
    s = "SELECT Role, count(*) FROM Machine GROUP BY Role, Name";
    assert_int_equal(ads_query_exec(q, s, strlen(s), &sink, NULL, NULL, &err), ADS_EINVAL);
    assert_int_equal(c.nrows, 2);
    collect_reset(&c);
    /* no sink: rows counted only */
    ads_exec_info info;
    s = "SELECT Name FROM Machine WHERE Cpus > 2";
    assert_int_equal(ads_query_exec(q, s, strlen(s), NULL, NULL, &info, &err), 0);
    assert_int_equal(info.kind, ADS_STMT_SELECT);
    assert_int_equal(info.rows, 2);
}

/* ======================================================================== */
/* Scripts                                                                  */
/* ======================================================================== */

static void script__statements_split_at_semicolons_only(void **state)
{
    (void)state;
    /* a blank line ends nothing: the shell and scripts share one grammar */
    const char *text = "SELECT 1 AS x FROM Machine LIMIT 1;\n"
                       "SELECT \"a;b\" AS s // a comment; not a separator\n"
                       "  FROM Machine LIMIT 1;\n"
                       "\n"
                       "/* a comment\n\n with a blank line */ STORE [ AdType = \"Event\"; s = "
                       "\"x;\\\" ;\" ];\n"
                       "  \n"
                       "SELECT { 1;\n\n 2 } AS weird;;\n"
                       "SELECT *\n"
                       "\n"
                       "  FROM Nope;\n"
                       "  // only a comment\n";
    size_t len = strlen(text), pos = 0, start, end;
    char got[16][128];
    int n = 0;
    while (n < 16 && ads_query_next_statement(text, len, &pos, &start, &end)) {
        snprintf(got[n], sizeof got[n], "%.*s", (int)(end - start), text + start);
        n++;
    }
    assert_int_equal(n, 5);
    assert_string_equal(got[0], "SELECT 1 AS x FROM Machine LIMIT 1");
    assert_string_equal(got[1], "SELECT \"a;b\" AS s // a comment; not a separator\n"
                                "  FROM Machine LIMIT 1");
    assert_string_equal(got[2], "STORE [ AdType = \"Event\"; s = \"x;\\\" ;\" ]");
    assert_string_equal(got[3], "SELECT { 1;\n\n 2 } AS weird");
    assert_string_equal(got[4], "SELECT *\n\n  FROM Nope");
    assert_int_equal(pos, len);
    assert_int_equal(ads_query_next_statement(text, len, &pos, &start, &end), 0);

    /* lines and columns count from the script's start */
    pos = 0;
    for (int i = 0; i < 5; i++)
        assert_int_equal(ads_query_next_statement(text, len, &pos, &start, &end), 1);
    ads_error err;
    assert_int_equal(ads_query_exec_at(q, text, len, start, end, NULL, NULL, NULL, &err),
                     ADS_ENOTFOUND);
    assert_int_equal(err.line, 14);
    assert_int_equal(err.column, 8);
    const char *bad = "SELECT 1 FROM Machine;\n\nSELECT * FORM x";
    len = strlen(bad);
    pos = 0;
    ads_query_next_statement(bad, len, &pos, &start, &end);
    ads_query_next_statement(bad, len, &pos, &start, &end);
    assert_int_equal(ads_query_exec_at(q, bad, len, start, end, NULL, NULL, NULL, &err),
                     ADS_ESYNTAX);
    assert_int_equal(err.line, 3);
    assert_int_equal(err.column, 10);
    /* only white space and comments: no statement */
    pos = 0;
    assert_int_equal(ads_query_next_statement(" ;; /* x */ \n\n // y", 20, &pos, &start, &end), 0);
}

/* ======================================================================== */
/* The seed's examples, as written                                          */
/* ======================================================================== */

static void seed__select_examples(void **state)
{
    (void)state;
    ts_declare(db, "YourType", "Id", NULL);
    ts_declare(db, "Type1", "Attr1", NULL);
    ts_declare(db, "Type2", "Attr5,Attr6", NULL);
    store_ok("{ [ AdType = \"YourType\"; Id = 1; Attr1 = \"value\"; Attr2 = 2; Attr3 = 10 ], "
             "[ AdType = \"YourType\"; Id = 2; Attr1 = \"value\"; Attr2 = 1; Attr3 = 20 ], "
             "[ AdType = \"YourType\"; Id = 3; Attr1 = \"value\"; Attr2 = 2; Attr3 = 5 ], "
             "[ AdType = \"YourType\"; Id = 4; Attr1 = \"other\"; Attr2 = 9; Attr3 = 1 ] }");
    expect("SELECT * FROM YourType WHERE Attr1 == \"value\" ORDER BY Attr2 DESC, Attr3 ASC "
           "LIMIT 10",
           "[ AdType = \"YourType\"; Attr1 = \"value\"; Attr2 = 2; Attr3 = 5; Id = 3 ]\n"
           "[ AdType = \"YourType\"; Attr1 = \"value\"; Attr2 = 2; Attr3 = 10; Id = 1 ]\n"
           "[ AdType = \"YourType\"; Attr1 = \"value\"; Attr2 = 1; Attr3 = 20; Id = 2 ]\n");
    expect("SELECT count(*) as Count, Attr2, sum(Attr3) as Total FROM YourType WHERE Attr1 == "
           "\"value\" GROUP BY Attr2",
           "[ Count = 1; Attr2 = 1; Total = 20 ]\n[ Count = 2; Attr2 = 2; Total = 15 ]\n");
    store_ok("{ [ AdType = \"Type1\"; Attr1 = \"p\"; Attr3 = \"k\"; Attr4 = \"ab\" ], "
             "[ AdType = \"Type1\"; Attr1 = \"q\"; Attr3 = \"k\"; Attr4 = \"zz\" ], "
             "[ AdType = \"Type2\"; Attr5 = \"k\"; Attr6 = \"a\"; Attr7 = \"b\"; Attr2 = 42 ] }");
    expect("SELECT Attr1, T2.Attr2 FROM Type1 JOIN Type2 T2 ON { Attr3, Attr4 } === { T2.Attr5, "
           "strcat(T2.Attr6, T2.Attr7) }",
           "[ Attr1 = \"p\"; Attr2 = 42 ]\n");
    plug p = {0, 0, false, 0};
    ads_datasource ds = {plug_open, plug_next, plug_close, &p};
    ads_error err;
    assert_int_equal(ads_query_register(q, "your.plugin", &ds, &err), 0);
    expect("SELECT * USING your.plugin",
           "[ Host = \"x\"; Load = 0.5; Up = true ]\n[ Host = \"y\"; Load = 2.25 ]\n"
           "[ Host = \"z\"; Load = 1.0; Up = false ]\n");
}

static void seed__timeline_example(void **state)
{
    (void)state;
    /* the seed writes one ')' too many: as written it is a syntax error at it */
    expect_error("SELECT avg@(sum(Memory)) FROM Machine WHERE Role == \"compute\" && "
                 "@duration(`1d`) GROUP BY Platform, @intervals(`1h`))",
                 ADS_ESYNTAX, 1, 117,
                 "expected ',', ORDER BY, LIMIT or the end of the statement, found ')'");
    /* without it: a row per group per hour of the last day */
    ts_time(&ts, T0 + 2 * 3600);
    const char *r = rows("SELECT avg@(sum(Memory)) FROM Machine WHERE Role == \"compute\" && "
                         "@duration(`1d`) GROUP BY Platform, @intervals(`1h`)");
    /* two groups (linux and Linux are one), each hour of the day at least */
    assert_true(last.nrows >= 48);
    /* the hour wholly after the machines were stored: 100 + 200 all along,
     * and mac's machine has no Memory (the sum of nothing is 0) */
    assert_non_null(strstr(r, "[ _Timestamp = `2023-11-14T23:00:00Z`; Platform = \"linux\"; "
                              "'avg@(sum(Memory))' = 300.0 ]\n"));
    assert_non_null(strstr(r, "[ _Timestamp = `2023-11-14T23:00:00Z`; Platform = \"mac\"; "
                              "'avg@(sum(Memory))' = 0.0 ]\n"));
    /* hours before anything was stored have no value */
    assert_non_null(strstr(r, "[ _Timestamp = `2023-11-14T12:00:00Z`; Platform = \"linux\"; "
                              "'avg@(sum(Memory))' = undefined ]\n"));
    assert_null(strstr(r, "windows"));
}

static void seed__write_examples(void **state)
{
    (void)state;
    ts_declare(db, "YourType", "Attr1", NULL);
    ts_declare(db, "YourType1", "Name", NULL);
    ts_declare(db, "YourType2", "Name", NULL);
    expect_done("STORE [AdType=\"YourType\"; Attr1=\"value1\"; Attr2=\"value2\"], "
                "[AdType=\"YourType\"; Attr1=\"other1\"; Attr2=\"other2\"]",
                ADS_STMT_STORE, 2);
    store_ok("[ AdType = \"YourType\"; Attr1 = \"value\"; Attr2 = \"old\"; Attr4 = 4 ]");
    expect_done("UPDATE YourType SET Attr2 = \"value2\", Attr3 = \"value3\" WHERE Attr1 == "
                "\"value\"",
                ADS_STMT_UPDATE, 1);
    expect("SELECT * FROM YourType ORDER BY Attr1",
           "[ AdType = \"YourType\"; Attr1 = \"other1\"; Attr2 = \"other2\" ]\n"
           "[ AdType = \"YourType\"; Attr1 = \"value\"; Attr2 = \"value2\"; Attr3 = \"value3\"; "
           "Attr4 = 4 ]\n"
           "[ AdType = \"YourType\"; Attr1 = \"value1\"; Attr2 = \"value2\" ]\n");
    expect_done("DELETE FROM YourType WHERE Attr1 == \"value\"", ADS_STMT_DELETE, 1);
    expect_done("DELETE FROM YourType WHERE Attr1 == \"value\"", ADS_STMT_DELETE, 0);
    /* PURGE matches the deleted record */
    expect_done("PURGE FROM YourType WHERE Attr1 == \"value\"", ADS_STMT_PURGE, 1);
    expect("SELECT Attr1 FROM YourType WHERE __Latest is __Latest && _Deleted is _Deleted "
           "ORDER BY Attr1",
           "[ Attr1 = \"other1\" ]\n[ Attr1 = \"value1\" ]\n");
    store_ok("{ [ AdType = \"YourType1\"; Name = \"x\" ], [ AdType = \"YourType2\"; Name = \"y\" "
             "], [ AdType = \"YourType1\"; Name = \"z\" ] }");
    expect_done("DELETE WHERE AdType in { \"YourType1\", \"YourType2\" }", ADS_STMT_DELETE, 3);
    expect("SELECT AdType, Name WHERE AdType in { \"YourType1\", \"YourType2\" }", "");
    expect_done("PURGE FROM YourType", ADS_STMT_PURGE, 2);
    expect("SELECT count(*) AS n FROM YourType WHERE __Latest is __Latest && _Deleted is "
           "_Deleted",
           "[ n = 0 ]\n");
}

/* ---- statement limits (ads_query_set_limits) ---- */

static void limits__memory_stops_a_statement_that_builds_huge_strings(void **state)
{
    (void)state;
    /* a 100 KB string with every 'a' replaced by itself: 10 GB if let run */
    char *big = malloc(100001 + 200);
    strcpy(big, "STORE [ AdType = \"Machine\"; Name = \"big\"; s = \"");
    size_t n = strlen(big);
    memset(big + n, 'a', 100000);
    strcpy(big + n + 100000, "\" ]");
    expect_done(big, ADS_STMT_STORE, 1);
    free(big);
    char *before = snapshot();
    ads_query_set_limits(q, (size_t)16 << 20, 0);
    expect_error("SELECT size(replaceAll(\"a\", s, s)) FROM Machine WHERE Name == \"big\"",
                 ADS_ELIMIT, 0, 0,
                 "the statement needs more than its memory limit of 16 MiB "
                 "(ads_query_set_limits; adstore --max-memory)");
    /* a write statement stopped by its limit changes nothing */
    expect_error("UPDATE Machine SET t = replaceAll(\"a\", s, s) WHERE Name == \"big\"",
                 ADS_ELIMIT, 0, 0,
                 "the statement needs more than its memory limit of 16 MiB "
                 "(ads_query_set_limits; adstore --max-memory)");
    /* the limit is per statement: the next one starts from nothing */
    expect("SELECT size(s) AS n FROM Machine WHERE Name == \"big\"", "[ n = 100000 ]\n");
    ads_query_set_limits(q, 0, 0);
    char *after = snapshot();
    assert_string_equal(before, after);
    free(before);
    free(after);
}

static void limits__memory_bounds_sorting_and_grouping(void **state)
{
    (void)state;
    ads_buf b = ADS_BUF_INIT;
    ads_buf_adds(&b, "STORE ");
    for (int i = 0; i < 2000; i++) {
        char r[160];
        snprintf(r, sizeof r, "%s[ AdType = \"Event\"; N = %d; Pad = strcat(\"%0100d\", N) ]",
                 i ? ", " : "", i, i);
        ads_buf_adds(&b, r);
    }
    expect_done(ads_buf_cstr(&b), ADS_STMT_STORE, 2000);
    ads_buf_free(&b);
    ads_query_set_limits(q, (size_t)1 << 18, 0); /* 256 KiB */
    const char *msg = "the statement needs more than its memory limit of 262144 bytes "
                      "(ads_query_set_limits; adstore --max-memory)";
    expect_error("SELECT N, Pad FROM Event ORDER BY N DESC", ADS_ELIMIT, 0, 0, msg);
    expect_error("SELECT Pad, count(*) FROM Event GROUP BY Pad", ADS_ELIMIT, 0, 0, msg);
    /* within the limit, the same statements run */
    ads_query_set_limits(q, (size_t)64 << 20, 0);
    expect("SELECT N FROM Event ORDER BY N DESC LIMIT 1", "[ N = 1999 ]\n");
    expect("SELECT count(*) AS n FROM Event GROUP BY N % 1 ", "[ n = 2000 ]\n");
}

static void limits__time_stops_a_join_without_a_key(void **state)
{
    (void)state;
    /* a deadline already past when the first row is offered: no timing in
     * the test, only that the loop checks its clock */
    ads_query_set_limits(q, 0, 1e-9);
    expect_error("SELECT M.Name, O.Who FROM Machine M JOIN Owner O ON O.Who != M.Name",
                 ADS_ELIMIT, 0, 0,
                 "the statement ran longer than its time limit of 1e-09 s "
                 "(ads_query_set_limits; adstore --max-time)");
    expect_error("SELECT avg@(sum(Memory)) FROM Machine WHERE @anytime() GROUP BY @intervals(`1h`)",
                 ADS_ELIMIT, 0, 0,
                 "the statement ran longer than its time limit of 1e-09 s "
                 "(ads_query_set_limits; adstore --max-time)");
    ads_query_set_limits(q, 0, 0);
    char *before = snapshot();
    ads_query_set_limits(q, 0, 1e-9);
    expect_error("UPDATE Machine SET Memory = 1", ADS_ELIMIT, 0, 0,
                 "the statement ran longer than its time limit of 1e-09 s "
                 "(ads_query_set_limits; adstore --max-time)");
    /* no limit: it runs */
    ads_query_set_limits(q, 0, 0);
    char *after = snapshot();
    assert_string_equal(before, after);
    free(before);
    free(after);
    expect("SELECT count(*) AS n FROM Machine M JOIN Owner O ON O.Who != M.Name", "[ n = 4 ]\n");
}

/* A WHERE that turns down every row never hands the statement a row, so
 * the limit must be seen inside the scan (ads_scan_set_stop): a full scan,
 * an index walk, one record's history, and an UPDATE's scan. Before, each
 * ran to its end whatever the limit (a server's 60 s limit let a read-only
 * client keep a core busy for 15 minutes). */
static void limits__time_stops_a_scan_whose_where_turns_every_row_down(void **state)
{
    (void)state;
    ts_declare(db, "Slot", "Name", NULL);
    ads_buf b = ADS_BUF_INIT;
    ads_buf_adds(&b, "STORE ");
    for (int i = 0; i < 300; i++) {
        char r[120];
        snprintf(r, sizeof r, "%s[ AdType = \"Slot\"; Name = \"s%d\"; Owner = \"o%d\" ]",
                 i ? ", " : "", i, i % 3);
        ads_buf_adds(&b, r);
    }
    expect_done(ads_buf_cstr(&b), ADS_STMT_STORE, 300);
    ads_buf_free(&b);
    for (int i = 0; i < 100; i++)
        expect_done("UPDATE Slot SET N = N + 1 WHERE Name == \"s7\" ", ADS_STMT_UPDATE, 1);
    expect_done("STORE [ AdType = \"Attribute\"; ForType = \"Slot\"; ForName = \"Owner\"; "
                "Indexed = true ]",
                ADS_STMT_STORE, 1);
    const char *msg = "the statement ran longer than its time limit of 1e-09 s "
                      "(ads_query_set_limits; adstore --max-time)";
    char *before = snapshot();
    ads_query_set_limits(q, 0, 1e-9);
    expect_error("SELECT Name FROM Slot WHERE Name == \"none\" || size(Name) > 99",
                 ADS_ELIMIT, 0, 0, msg);
    expect_error("SELECT Name FROM Slot WHERE Owner == \"o1\" && size(Name) > 99",
                 ADS_ELIMIT, 0, 0, msg);
    expect_error("SELECT N FROM Slot WHERE Name == \"s7\" && __Latest is false && N > 1000",
                 ADS_ELIMIT, 0, 0, msg);
    expect_error("UPDATE Slot SET N = 1 WHERE size(Name) > 99", ADS_ELIMIT, 0, 0, msg);
    /* no limit: the same statements run, and nothing changed */
    ads_query_set_limits(q, 0, 0);
    char *after = snapshot();
    assert_string_equal(before, after);
    free(before);
    free(after);
    expect("SELECT count(*) AS n FROM Slot WHERE Owner == \"o1\" && size(Name) > 99",
           "[ n = 0 ]\n");
    expect("SELECT count(*) AS n FROM Slot WHERE Name == \"s7\" && __Latest is false && N > 1000",
           "[ n = 0 ]\n");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
        T(limits__memory_stops_a_statement_that_builds_huge_strings),
        T(limits__time_stops_a_scan_whose_where_turns_every_row_down),
        T(limits__memory_bounds_sorting_and_grouping),
        T(limits__time_stops_a_join_without_a_key),
        T(select__star_gives_stored_attributes_without_hidden_ones),
        T(select__stored_hidden_attributes_are_left_out_of_star),
        T(select__labels_name_plain_references_else_the_text),
        T(select__two_equal_labels_are_an_error),
        T(select__keywords_and_type_names_are_case_insensitive),
        T(select__from_alias_names_the_row),
        T(select__without_from_reads_every_type),
        T(select__expressions_are_evaluated_in_the_row),
        T(where__only_true_rows_pass),
        T(join__key_lookup_inner_drops_rows_without_a_match),
        T(join__outer_keeps_rows_with_the_alias_undefined),
        T(join__without_keys_takes_the_first_row_satisfying_on),
        T(join__key_lookup_and_scan_agree),
        T(join__where_and_order_see_the_joined_row),
        T(join__several_joins_and_a_self_join),
        T(join__deleted_rows_are_not_joined),
        T(group_by__groups_compare_with_identity_and_sort_by_value),
        T(group_by__every_aggregate),
        T(group_by__many_values_that_are_equal_as_identical_compares),
        T(group_by__aggregates_of_nothing),
        T(group_by__min_max_of_strings_ignore_case_and_mixing_is_error),
        T(group_by__joined_values_and_names_without_case),
        T(group_by__order_by_and_limit_apply_to_groups),
        T(group_by__min_max_of_times_compare_within_their_kind),
        T(order_by__a_bare_label_sorts_by_the_select_item),
        T(where__an_aggregate_that_is_not_a_builtin_is_an_error),
        T(limit__the_largest_whole_number_is_accepted),
        T(order_by__keys_directions_and_undefined_last),
        T(order_by__is_stable),
        T(limit__with_and_without_order_by),
        T(limit__top_n_over_many_rows_equals_sort_then_cut),
        T(using__types_and_sequences_are_built_in),
        T(using__a_registered_datasource),
        T(using__the_where_is_evaluated_once_per_row),
        T(values__empty_blobs_are_copied),
        T(update__sets_from_the_row_as_it_was_and_counts),
        T(update__keeps_expressions_and_skips_deleted_records),
        T(update__errors),
        T(delete__appends_a_deleted_row_once),
        T(purge__removes_every_row_and_matches_deleted_records),
        T(store__unchanged_records_are_counted_apart),
        T(purge_history__keeps_the_rows_in_effect_from_the_cut_on),
        T(delete_purge__without_from_must_name_adtype),
        T(store__merges_counts_and_keeps_expressions),
        T(store__a_failing_record_stores_nothing),
        T(hidden_rows__deleted_and_history_need_mentioning),
        T(point_lookup__agrees_with_a_scan),
        T(errors__syntax_names_the_place_and_what_was_expected),
        T(errors__an_unknown_function_is_refused_where_it_is_called),
        T(errors__semantic_ones_name_what_is_wrong),
        T(errors__a_statement_parses_and_checks_without_a_store),
        T(errors__a_sink_that_stops_ends_the_statement),
        T(script__statements_split_at_semicolons_only),
        T(seed__select_examples),
        T(seed__timeline_example),
        T(seed__write_examples),
#undef T
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
