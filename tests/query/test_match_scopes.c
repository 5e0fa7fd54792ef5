/*
 * tests/query/test_match_scopes.c: HTCondor's MY and TARGET through
 * statements on a small store (issue 11 item 1): MY in stored expressions
 * and in WHERE over stored rows, TARGET in a JOIN's ON naming the row being
 * tried (and the FROM row again inside the joined row's own expressions),
 * and a JOIN alias that stands alone: O.x never falls back to the FROM row,
 * where a record nested in a row does fall back to that row.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tests/query/rows.h"

#include "query/query.h"
#include "tests/engine/helpers.h"

#define T0 1700000000.0

static tstore ts;
static ads_db *db;
static ads_query *q;

/* The statement's rows must be exactly want (one `[ ... ]` line each). */
static void expect(const char *stmt, const char *want)
{
    rows_expect(q, stmt, want);
}

static int setup(void **state)
{
    (void)state;
    ads_error err;
    db = ts_open(&ts, T0);
    ts_declare(db, "Job", "Name", NULL);
    ts_declare(db, "Machine", "Name", NULL);
    ts_time(&ts, T0 + 60);
    /* one record at a time: stored as written, expressions kept */
    const char *recs[] = {
        "[ AdType = \"Job\"; Name = \"j1\"; RequestMemory = 3000; "
        "Requirements = TARGET.Memory >= MY.RequestMemory ]",
        "[ AdType = \"Job\"; Name = \"j2\"; RequestMemory = 100; "
        "Requirements = TARGET.Memory >= RequestMemory; Big = MY.RequestMemory > 1000 ]",
        "[ AdType = \"Machine\"; Name = \"m1\"; Memory = 1024; Owner = \"ann\"; "
        "Start = TARGET.RequestMemory < 2000 ]",
        "[ AdType = \"Machine\"; Name = \"m2\"; Memory = 4096; Start = true; "
        "Nested = [ x = 1 ] ]",
    };
    for (size_t i = 0; i < sizeof recs / sizeof recs[0]; i++)
        if (ts_store(db, &err, recs[i]))
            fail_msg("store %s: %s", recs[i], err.message);
    if (ads_query_new(&q, db, &err))
        fail_msg("query: %s", err.message);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    ads_buf_free(&rows_got);
    ads_query_free(q);
    q = NULL;
    ts_close(&ts);
    return 0;
}

static void my__reads_the_row_in_stored_expressions_and_where(void **state)
{
    (void)state;
    expect("SELECT Name, Big FROM Job WHERE MY.RequestMemory < 1000",
           "[ Name = \"j2\"; Big = false ]\n");
    /* no match: TARGET is undefined */
    expect("SELECT Name, Requirements AS R, MY.Name AS N FROM Job",
           "[ Name = \"j1\"; R = undefined; N = \"j1\" ]\n"
           "[ Name = \"j2\"; R = undefined; N = \"j2\" ]\n");
}

static void target__outside_a_join_is_undefined(void **state)
{
    (void)state;
    /* in a select list: TARGET, a name through it, and a test of it */
    expect("SELECT Name, TARGET AS T, TARGET.RequestMemory AS TR, isUndefined(TARGET.Name) AS U "
           "FROM Job WHERE Name == \"j1\"",
           "[ Name = \"j1\"; T = undefined; TR = undefined; U = true ]\n");
    /* in WHERE: undefined never selects, and =?= sees it */
    expect("SELECT Name FROM Job WHERE TARGET.RequestMemory < 10000", "");
    expect("SELECT Name FROM Machine WHERE TARGET.Memory =?= undefined && TARGET =?= undefined",
           "[ Name = \"m1\" ]\n"
           "[ Name = \"m2\" ]\n");
    /* a stored expression that reads TARGET, called from WHERE */
    expect("SELECT Name FROM Machine WHERE Start =?= undefined", "[ Name = \"m1\" ]\n");
}

static void target__in_on_is_the_row_tried(void **state)
{
    (void)state;
    /* each side's Requirements sees the other: j1 needs 3000 (m2), m1 starts
     * only jobs under 2000 (j2) */
    expect("SELECT Name, M.Name AS Mach FROM Job JOIN Machine M ON TARGET.Start && "
           "MY.Requirements",
           "[ Name = \"j1\"; Mach = \"m2\" ]\n"
           "[ Name = \"j2\"; Mach = \"m1\" ]\n");
    /* a plain name the FROM row lacks is the row tried's, as HTCondor's
     * matchmaker reads it: the jobs have no Start */
    expect("SELECT Name, M.Name AS Mach FROM Job JOIN Machine M ON Start && Memory > 2000 "
           "|| Name == \"j2\"",
           "[ Name = \"j1\"; Mach = \"m2\" ]\n"
           "[ Name = \"j2\"; Mach = \"m1\" ]\n");
    expect("SELECT Name, M.Name AS Mach FROM Job OUTER JOIN Machine M ON "
           "TARGET.Memory >= RequestMemory && TARGET.Owner == \"ann\"",
           "[ Name = \"j1\"; Mach = undefined ]\n"
           "[ Name = \"j2\"; Mach = \"m1\" ]\n");
}

static void join_alias__stands_alone(void **state)
{
    (void)state;
    /* m2 has no Owner: undefined, not the job's; its nested record falls
     * back to m2 itself */
    expect("SELECT Name, M.Owner AS Own, M.Nested.Memory AS NM, M.RequestMemory AS RM FROM "
           "Job JOIN Machine M ON M.Name == \"m2\"",
           "[ Name = \"j1\"; Own = undefined; NM = 4096; RM = undefined ]\n"
           "[ Name = \"j2\"; Own = undefined; NM = 4096; RM = undefined ]\n");
}

int main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(my__reads_the_row_in_stored_expressions_and_where),
        T(target__outside_a_join_is_undefined),
        T(target__in_on_is_the_row_tried),
        T(join_alias__stands_alone),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
