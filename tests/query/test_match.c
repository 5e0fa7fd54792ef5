/*
 * tests/query/test_match.c: JOIN ALL, the many-to-many join for HTCondor's
 * matchmaking (issue 11): on a small pool of jobs and machines with
 * Requirements on both sides, the pairs JOIN ALL returns are exactly those a
 * nested loop in this file finds with ads_expr_eval_match; GROUP BY counts
 * machines per job; OUTER JOIN ALL keeps a job that matches nothing; a type
 * named All still joins one-to-one; the statement's time limit stops a
 * large product.
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
#define NJOBS 8
#define NMACH 7

static tstore ts;
static ads_db *db;
static ads_query *q;

/* The pool, as stored: each side's Requirements reads the other through
 * TARGET (or a plain name the record lacks, as HTCondor reads it). */
static const char *jobs[NJOBS] = {
    "[ AdType = \"Job\"; Name = \"j0\"; Owner = \"ann\"; RequestMemory = 2048; "
    "Requirements = TARGET.Memory >= MY.RequestMemory && TARGET.OpSys == \"LINUX\" ]",
    "[ AdType = \"Job\"; Name = \"j1\"; Owner = \"bob\"; RequestMemory = 512; "
    "Requirements = TARGET.Memory >= RequestMemory ]",
    "[ AdType = \"Job\"; Name = \"j2\"; Owner = \"cat\"; RequestMemory = 131072; "
    "Requirements = TARGET.Memory >= RequestMemory ]",
    "[ AdType = \"Job\"; Name = \"j3\"; Owner = \"ann\"; RequestMemory = 100; "
    "Requirements = Arch == \"X86_64\" && Memory >= RequestMemory ]",
    "[ AdType = \"Job\"; Name = \"j4\"; Owner = \"dan\"; RequestMemory = 4000; "
    "Requirements = TARGET.Memory >= MY.RequestMemory || TARGET.Name == \"m0\" ]",
    "[ AdType = \"Job\"; Name = \"j5\"; Owner = \"bob\"; RequestMemory = 1; "
    "Requirements = TARGET.HasGPU =?= true ]",
    "[ AdType = \"Job\"; Name = \"j6\"; Owner = \"eve\"; RequestMemory = 1024; "
    "Requirements = TARGET.NoSuchAttr > 3 ]",
    "[ AdType = \"Job\"; Name = \"j7\"; Owner = \"ann\"; RequestMemory = 1024; "
    "Requirements = true ]",
};

static const char *machines[NMACH] = {
    "[ AdType = \"Machine\"; Name = \"m0\"; OpSys = \"LINUX\"; Arch = \"X86_64\"; Memory = 1024; "
    "Requirements = TARGET.Owner != \"bob\" ]",
    "[ AdType = \"Machine\"; Name = \"m1\"; OpSys = \"LINUX\"; Arch = \"X86_64\"; Memory = 4096; "
    "Requirements = true ]",
    "[ AdType = \"Machine\"; Name = \"m2\"; OpSys = \"WINDOWS\"; Arch = \"X86_64\"; "
    "Memory = 8192; Requirements = TARGET.RequestMemory <= 4096 ]",
    "[ AdType = \"Machine\"; Name = \"m3\"; OpSys = \"LINUX\"; Arch = \"ARM\"; Memory = 16384; "
    "HasGPU = true; Requirements = Owner == \"bob\" || Owner == \"ann\" ]",
    "[ AdType = \"Machine\"; Name = \"m4\"; OpSys = \"LINUX\"; Arch = \"X86_64\"; Memory = 512; "
    "Requirements = MY.Memory >= TARGET.RequestMemory ]",
    "[ AdType = \"Machine\"; Name = \"m5\"; OpSys = \"LINUX\"; Arch = \"X86_64\"; "
    "Memory = 65536; Requirements = false ]",
    "[ AdType = \"Machine\"; Name = \"m6\"; OpSys = \"LINUX\"; Arch = \"X86_64\"; "
    "Memory = 65536; Requirements = TARGET.Owner =!= \"eve\" ]",
};

#define MATCH "MY.Requirements && TARGET.Requirements"

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
    for (size_t i = 0; i < NJOBS; i++)
        if (ts_store(db, &err, jobs[i]))
            fail_msg("store %s: %s", jobs[i], err.message);
    for (size_t i = 0; i < NMACH; i++)
        if (ts_store(db, &err, machines[i]))
            fail_msg("store %s: %s", machines[i], err.message);
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

/* The matrix of matches, computed here pair by pair: MY the job, TARGET the
 * machine, as the statement's ON is evaluated. */
static void nested_loop(bool m[NJOBS][NMACH])
{
    ads_arena *a = ads_arena_new();
    ads_error err;
    const ads_expr *on;
    assert_non_null(a);
    if (ads_expr_parse(&on, a, MATCH, strlen(MATCH), &err))
        fail_msg("parse: %s", err.message);
    const ads_record *jr[NJOBS], *mr[NMACH];
    for (size_t i = 0; i < NJOBS; i++)
        if (ads_record_parse(&jr[i], a, jobs[i], strlen(jobs[i]), &err))
            fail_msg("parse %s: %s", jobs[i], err.message);
    for (size_t k = 0; k < NMACH; k++)
        if (ads_record_parse(&mr[k], a, machines[k], strlen(machines[k]), &err))
            fail_msg("parse %s: %s", machines[k], err.message);
    for (size_t i = 0; i < NJOBS; i++)
        for (size_t k = 0; k < NMACH; k++) {
            ads_view my = ads_record_view(jr[i], NULL), target = ads_record_view(mr[k], NULL);
            ads_value v;
            assert_int_equal(ads_expr_eval_match(&v, on, &my, &target, a), 0);
            m[i][k] = (v.type == ADS_BOOLEAN && v.u.b) || (v.type == ADS_INTEGER && v.u.i) ||
                      (v.type == ADS_REAL && v.u.r != 0);
        }
    ads_arena_free(a);
}

static void join_all__is_the_nested_loop(void **state)
{
    (void)state;
    bool m[NJOBS][NMACH];
    nested_loop(m);
    ads_buf want = ADS_BUF_INIT;
    size_t pairs = 0;
    for (size_t i = 0; i < NJOBS; i++)
        for (size_t k = 0; k < NMACH; k++)
            if (m[i][k]) {
                ads_buf_printf(&want, "[ J = \"j%zu\"; M = \"m%zu\" ]\n", i, k);
                pairs++;
            }
    /* the pool is made so that the answer is neither empty nor everything,
     * and some jobs and some machines take several partners */
    assert_true(pairs > NJOBS && pairs < NJOBS * NMACH / 2);
    assert_true(m[1][1] && !m[0][0] && !m[2][5] && m[7][6] && !m[6][6]);
    /* both orders of the scan: jobs by key, then each job's machines by key */
    expect("SELECT J.Name AS J, M.Name AS M FROM Job J JOIN ALL Machine M ON " MATCH,
           ads_buf_cstr(&want));
    expect("SELECT Name AS J, M.Name AS M FROM Job INNER JOIN ALL Machine M ON " MATCH,
           ads_buf_cstr(&want));
    /* one-to-one JOIN is unchanged: the first machine in key order */
    ads_buf_clear(&want);
    for (size_t i = 0; i < NJOBS; i++)
        for (size_t k = 0; k < NMACH; k++)
            if (m[i][k]) {
                ads_buf_printf(&want, "[ J = \"j%zu\"; M = \"m%zu\" ]\n", i, k);
                break;
            }
    expect("SELECT Name AS J, M.Name AS M FROM Job JOIN Machine M ON " MATCH, ads_buf_cstr(&want));
    /* WHERE and LIMIT see the joined rows */
    ads_buf_clear(&want);
    size_t n = 0;
    for (size_t i = 0; i < NJOBS; i++)
        for (size_t k = 0; k < NMACH; k++)
            if (m[i][k] && k != 1 && n < 3) {
                ads_buf_printf(&want, "[ J = \"j%zu\"; M = \"m%zu\" ]\n", i, k);
                n++;
            }
    expect("SELECT Name AS J, M.Name AS M FROM Job JOIN ALL Machine M ON " MATCH
           " WHERE M.Name != \"m1\" LIMIT 3",
           ads_buf_cstr(&want));
    ads_buf_free(&want);
}

static void group_by__counts_machines_per_job(void **state)
{
    (void)state;
    bool m[NJOBS][NMACH];
    nested_loop(m);
    ads_buf want = ADS_BUF_INIT, outer = ADS_BUF_INIT;
    for (size_t i = 0; i < NJOBS; i++) {
        size_t c = 0;
        for (size_t k = 0; k < NMACH; k++)
            c += m[i][k];
        if (c)
            ads_buf_printf(&want, "[ Name = \"j%zu\"; machines = %zu ]\n", i, c);
        /* count(M) counts the defined values: 0 for a job that matches nothing */
        ads_buf_printf(&outer, "[ Name = \"j%zu\"; machines = %zu ]\n", i, c);
    }
    expect("SELECT J.Name, count(*) AS machines FROM Job J JOIN ALL Machine M ON " MATCH
           " GROUP BY J.Name",
           ads_buf_cstr(&want));
    expect("SELECT Name, count(M.Name) AS machines FROM Job OUTER JOIN ALL Machine M ON " MATCH
           " GROUP BY Name",
           ads_buf_cstr(&outer));
    ads_buf_free(&want);
    ads_buf_free(&outer);
}

static void outer_join_all__keeps_a_job_that_matches_nothing(void **state)
{
    (void)state;
    bool m[NJOBS][NMACH];
    nested_loop(m);
    assert_false(m[2][0] || m[2][1] || m[2][2] || m[2][3] || m[2][4] || m[2][5] || m[2][6]);
    expect("SELECT Name, M.Name AS M, isUndefined(M) AS alone FROM Job OUTER JOIN ALL Machine M "
           "ON " MATCH " WHERE Name == \"j2\" || Name == \"j4\"",
           "[ Name = \"j2\"; M = undefined; alone = true ]\n"
           "[ Name = \"j4\"; M = \"m0\"; alone = false ]\n"
           "[ Name = \"j4\"; M = \"m1\"; alone = false ]\n"
           "[ Name = \"j4\"; M = \"m2\"; alone = false ]\n"
           "[ Name = \"j4\"; M = \"m6\"; alone = false ]\n");
    /* which jobs match nothing */
    expect("SELECT Name FROM Job OUTER JOIN ALL Machine M ON " MATCH " WHERE isUndefined(M)",
           "[ Name = \"j2\" ]\n"
           "[ Name = \"j6\" ]\n");
}

static void several_joins(void **state)
{
    (void)state;
    /* a JOIN ALL after another: every pair of matching machines, the second
     * with more memory; a one-to-one JOIN after a JOIN ALL runs per pair */
    expect("SELECT Name, M.Name AS A, M2.Name AS B FROM Job JOIN ALL Machine M ON " MATCH
           " JOIN ALL Machine M2 ON TARGET.Memory > M.Memory && " MATCH " WHERE Name == \"j1\"",
           "[ Name = \"j1\"; A = \"m1\"; B = \"m2\" ]\n"
           "[ Name = \"j1\"; A = \"m1\"; B = \"m3\" ]\n"
           "[ Name = \"j1\"; A = \"m1\"; B = \"m6\" ]\n"
           "[ Name = \"j1\"; A = \"m2\"; B = \"m3\" ]\n"
           "[ Name = \"j1\"; A = \"m2\"; B = \"m6\" ]\n"
           "[ Name = \"j1\"; A = \"m3\"; B = \"m6\" ]\n"
           "[ Name = \"j1\"; A = \"m4\"; B = \"m1\" ]\n"
           "[ Name = \"j1\"; A = \"m4\"; B = \"m2\" ]\n"
           "[ Name = \"j1\"; A = \"m4\"; B = \"m3\" ]\n"
           "[ Name = \"j1\"; A = \"m4\"; B = \"m6\" ]\n");
    expect("SELECT Name, M.Name AS A, O.Name AS B FROM Job JOIN ALL Machine M ON " MATCH
           " JOIN Job O ON O.Owner == M.Name || O.RequestMemory == M.Memory WHERE Name == \"j4\"",
           "[ Name = \"j4\"; A = \"m0\"; B = \"j6\" ]\n");
    /* on the joined type's key: one row at most, a key lookup */
    expect("SELECT Name, M.Memory FROM Job JOIN ALL Machine M ON M.Name === \"m4\" "
           "WHERE RequestMemory < 600",
           "[ Name = \"j1\"; Memory = 512 ]\n"
           "[ Name = \"j3\"; Memory = 512 ]\n"
           "[ Name = \"j5\"; Memory = 512 ]\n");
}

static void a_type_named_all(void **state)
{
    (void)state;
    ads_error err;
    /* a JOIN ALL without its alias reads as the type All: the message says so */
    const char *bad = "SELECT Name FROM Job JOIN ALL Machine ON true";
    assert_int_equal(ads_query_exec(q, bad, strlen(bad), NULL, NULL, NULL, &err), ADS_ENOTFOUND);
    assert_non_null(strstr(err.message, "JOIN ALL needs a type and an alias"));
    assert_int_equal(err.column, 27);
    ts_declare(db, "All", "Name", NULL);
    if (ts_store(db, &err, "[ AdType = \"All\"; Name = \"x\"; Owner = \"bob\" ]"))
        fail_msg("store: %s", err.message);
    /* ALL followed by one word and ON is the type All joined one-to-one */
    expect("SELECT Name, A.Name AS X FROM Job JOIN All A ON A.Owner == Owner",
           "[ Name = \"j1\"; X = \"x\" ]\n"
           "[ Name = \"j5\"; X = \"x\" ]\n");
    expect("SELECT Name, A.Name AS X FROM Job JOIN ALL All A ON A.Owner == Owner",
           "[ Name = \"j1\"; X = \"x\" ]\n"
           "[ Name = \"j5\"; X = \"x\" ]\n");
}

static void time_limit__stops_a_large_product(void **state)
{
    (void)state;
    ads_error err;
    ads_buf b = ADS_BUF_INIT;
    ts_declare(db, "Slot", "Id", NULL);
    ads_buf_adds(&b, "{");
    for (int i = 0; i < 400; i++)
        ads_buf_printf(&b, "%s[ AdType = \"Slot\"; Id = %d; Memory = %d ]", i ? ", " : "", i,
                       i * 16);
    ads_buf_adds(&b, "}");
    if (ts_store(db, &err, ads_buf_cstr(&b)))
        fail_msg("store: %s", err.message);
    ads_buf_free(&b);
    /* 400 x 400 pairs tried */
    const char *stmt = "SELECT count(*) AS n FROM Slot S JOIN ALL Slot T ON T.Memory > S.Memory";
    expect(stmt, "[ n = 79800 ]\n");
    ads_query_set_limits(q, 0, 1e-9);
    ads_sink sink = {rows_begin, rows_row, rows_end, NULL};
    assert_int_equal(ads_query_exec(q, stmt, strlen(stmt), &sink, NULL, NULL, &err), ADS_ELIMIT);
    assert_non_null(strstr(err.message, "time limit"));
}

int main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(join_all__is_the_nested_loop),
        T(group_by__counts_machines_per_job),
        T(outer_join_all__keeps_a_job_that_matches_nothing),
        T(several_joins),
        T(a_type_named_all),
        T(time_limit__stops_a_large_product),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
