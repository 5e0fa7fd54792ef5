/*
 * tests/cli/test_history.c: how the program keeps a store fed with
 * snapshots small, through the real program: what `execute` and `import`
 * say of records stored unchanged (no row appended).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>

#include <cmocka.h>

extern char **environ;

#include "tests/cli/run_check.h"

static char *dir; /* a fresh directory per test; the store is dir/db */
static char store[1100];

static int setup(void **state)
{
    (void)state;
    return cli_dir_new(&dir, store, sizeof store, "db");
}

static int teardown(void **state)
{
    (void)state;
    cli_dir_free(&dir);
    return 0;
}

static void declare_machine(void)
{
    EXPECT(NULL, 0, "", "stored 1 record\n", "-d", store, "execute",
           "STORE [ AdType = \"Type\"; ForType = \"Machine\"; KeyAttributes = { \"Name\" } ]");
}

static void execute__store_counts_unchanged_records_apart(void **state)
{
    (void)state;
    declare_machine();
    EXPECT(NULL, 0, "", "stored 2 records\n", "-d", store, "execute",
           "STORE [ AdType = \"Machine\"; Name = \"a\"; Memory = 1 ], "
           "[ AdType = \"Machine\"; Name = \"b\"; Memory = 2 ]");
    EXPECT(NULL, 0, "", "stored 1 record, 1 unchanged\n", "-d", store, "execute",
           "STORE [ AdType = \"Machine\"; Name = \"a\"; Memory = 1 ], "
           "[ AdType = \"Machine\"; Name = \"b\"; Memory = 3 ]");
    EXPECT(NULL, 0, "", "stored 0 records, 2 unchanged\n", "-d", store, "execute",
           "STORE [ AdType = \"Machine\"; Name = \"a\"; Memory = 1 ], "
           "[ AdType = \"Machine\"; Name = \"b\"; Memory = 3 ]");
    /* a, never changed, has one row; b two */
    EXPECT(NULL, 0, "[ Name = \"a\"; n = 1 ]\n[ Name = \"b\"; n = 2 ]\n", "2 rows\n", "-d", store,
           "execute", "-f", "native",
           "SELECT Name, count(*) AS n FROM Machine WHERE __Latest is __Latest GROUP BY Name");
}

/* The same snapshot imported again: its summary counts the unchanged. */
static void import__counts_unchanged_records(void **state)
{
    (void)state;
    declare_machine();
    char path[1200];
    snprintf(path, sizeof path, "%s/snap.ad", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("[ AdType = \"Machine\"; Name = \"a\"; Memory = 1 ]\n"
          "[ AdType = \"Machine\"; Name = \"b\"; Memory = 2 ]\n",
          f);
    assert_int_equal(fclose(f), 0);
    for (int pass = 0; pass < 2; pass++) {
        run_result r;
        const char *argv[] = {"-d", store, "import", "--restart", "--format", "classad", path, NULL};
        assert_int_equal(run_adstore(&r, argv, NULL), 0);
        assert_int_equal(r.status, 0);
        bool said = strstr(r.err, ", 2 unchanged\n") != NULL;
        if (said != (pass == 1))
            fail_msg("pass %d: %s", pass, r.err);
        run_free(&r);
    }
    EXPECT(NULL, 0, "[ n = 2 ]\n", "1 row\n", "-d", store, "execute", "-f", "native",
           "SELECT count(*) AS n FROM Machine WHERE __Latest is __Latest");
}

/* PURGE HISTORY says how many rows and records went. */
static void execute__purge_history_reports_rows_and_records(void **state)
{
    (void)state;
    declare_machine();
    EXPECT(NULL, 0, "", "stored 2 records\n", "-d", store, "execute",
           "STORE [ AdType = \"Machine\"; Name = \"a\"; V = 1; _Timestamp = `2020-01-01T00:00:00Z` ], "
           "[ AdType = \"Machine\"; Name = \"b\"; V = 1; _Timestamp = `2020-01-01T00:00:00Z` ]");
    EXPECT(NULL, 0, "", "stored 2 records\n", "-d", store, "execute",
           "STORE [ AdType = \"Machine\"; Name = \"a\"; V = 2; _Timestamp = `2020-01-02T00:00:00Z` ], "
           "[ AdType = \"Machine\"; Name = \"b\"; _Deleted = true; _Timestamp = `2020-01-02T00:00:00Z` ]");
    EXPECT(NULL, 0, "", "stored 1 record\n", "-d", store, "execute",
           "STORE [ AdType = \"Machine\"; Name = \"a\"; V = 3 ]");
    EXPECT(NULL, 0, "", "purged 1 history row\n", "-d", store, "execute",
           "PURGE HISTORY FROM Machine WHERE Name == \"a\" && _Timestamp < now() - `1d`");
    EXPECT(NULL, 0, "", "purged 2 history rows, 1 deleted record\n", "-d", store, "execute",
           "PURGE HISTORY FROM Machine WHERE _Timestamp < `2020-06-01T00:00:00Z`");
    EXPECT(NULL, 1, "",
           "adstore execute: type Machine has no HistoryRetention: give the cut, as in PURGE "
           "HISTORY FROM Machine WHERE _Timestamp < absTime(\"...\")\n",
           "-d", store, "execute", "PURGE HISTORY FROM Machine");
}

/* Records with history, then compact killed (SIGKILL) at stage, with the
 * ADSTORE_TEST_STALL hook: the store opens and verifies with every record,
 * and the next compact removes what the killed one left beside it. */
static void compact_killed_at(const char *stage)
{
    declare_machine();
    for (int i = 0; i < 5; i++) {
        char stmt[300];
        snprintf(stmt, sizeof stmt,
                 "STORE [ AdType = \"Machine\"; Name = \"a\"; V = %d ], "
                 "[ AdType = \"Machine\"; Name = \"b\"; V = %d ]",
                 i, i);
        EXPECT(NULL, 0, "", "stored 2 records\n", "-d", store, "execute", stmt);
    }
    size_t ne = 0;
    while (environ[ne])
        ne++;
    char **env = calloc(ne + 2, sizeof *env);
    assert_non_null(env);
    memcpy(env, environ, ne * sizeof *env);
    char var[64];
    snprintf(var, sizeof var, "ADSTORE_TEST_STALL=compact:%s", stage);
    env[ne] = var;
    run_result r;
    const char *argv[] = {"-d", store, "compact", NULL};
    assert_int_equal(run_adstore_env(&r, argv, NULL, NULL, env), 0);
    free(env);
    if (r.status != 128 + SIGKILL)
        fail_msg("compact at %s: exit %d, stderr %s", stage, r.status, r.err);
    run_free(&r);
    /* what it left beside the store */
    char left[1300];
    bool leftover = false;
    DIR *d = opendir(dir);
    struct dirent *e;
    assert_non_null(d);
    while ((e = readdir(d)))
        if (strncmp(e->d_name, "db.compact-", 11) == 0) {
            snprintf(left, sizeof left, "%s/%s", dir, e->d_name);
            leftover = true;
        }
    closedir(d);
    assert_true(leftover);
    const char *vargv[] = {"-d", store, "verify", NULL};
    assert_int_equal(run_adstore(&r, vargv, NULL), 0);
    if (r.status != 0 || !strstr(r.err, " 0 problems"))
        fail_msg("verify after compact killed at %s: exit %d: %s%s", stage, r.status, r.out, r.err);
    run_free(&r);
    EXPECT(NULL, 0, "[ n = 10 ]\n", "1 row\n", "-d", store, "execute", "-f", "native",
           "SELECT count(*) AS n FROM Machine WHERE __Latest is __Latest");
    /* the next compact sweeps the leftover */
    const char *cargv[] = {"-d", store, "compact", NULL};
    assert_int_equal(run_adstore(&r, cargv, NULL), 0);
    if (r.status != 0)
        fail_msg("compact: %s", r.err);
    run_free(&r);
    struct stat st;
    assert_int_not_equal(stat(left, &st), 0);
}

static void compact__killed_after_the_copy_leaves_the_old_store(void **state)
{
    (void)state;
    compact_killed_at("copied");
}

static void compact__killed_after_the_rename_leaves_the_new_store(void **state)
{
    (void)state;
    compact_killed_at("renamed");
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(execute__store_counts_unchanged_records_apart),
        T(import__counts_unchanged_records),
        T(execute__purge_history_reports_rows_and_records),
        T(compact__killed_after_the_copy_leaves_the_old_store),
        T(compact__killed_after_the_rename_leaves_the_new_store),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
