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

#include <cmocka.h>

#include "tests/cli/run.h"

static char *dir; /* a fresh directory per test; the store is dir/db */
static char store[1100];

static int setup(void **state)
{
    (void)state;
    dir = make_temp_dir();
    if (!dir)
        return -1;
    snprintf(store, sizeof store, "%s/db", dir);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    remove_tree(dir);
    free(dir);
    return 0;
}

/* Run with stdin `in`, require exit want, and compare stdout and stderr
 * exactly. */
#define EXPECT(in, want, out_, err_, ...)                                                          \
    do {                                                                                           \
        run_result r_;                                                                             \
        const char *argv_[] = {__VA_ARGS__, NULL};                                                 \
        assert_int_equal(run_adstore(&r_, argv_, (in)), 0);                                        \
        if (r_.status != (want) || strcmp(r_.out, (out_)) || strcmp(r_.err, (err_)))              \
            fail_msg("exit %d (want %d)\nstdout:\n%s---\nwant:\n%s---\nstderr:\n%s---\nwant:\n%s---", \
                     r_.status, (want), r_.out, (out_), r_.err, (err_));                           \
        run_free(&r_);                                                                             \
    } while (0)

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

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(execute__store_counts_unchanged_records_apart),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
