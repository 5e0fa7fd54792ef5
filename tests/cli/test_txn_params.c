/*
 * tests/cli/test_txn_params.c: BEGIN / COMMIT / ROLLBACK in `adstore
 * execute` scripts and the shell, and `execute --param`, through the real
 * program with exact outputs: a committed script keeps its writes, ROLLBACK
 * and a failure or the end of input inside BEGIN discard them with a message
 * naming BEGIN's line, nested BEGIN and COMMIT without BEGIN are refused,
 * and values given with --param are values (a string holding a statement
 * stays a string).
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

#include "tests/cli/run_check.h"

static char *dir;
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

static void make_store(void)
{
    EXPECT(NULL, 0, "", "stored 1 record\n", "-d", store, "execute",
           "STORE [ AdType = \"Type\"; ForType = \"Machine\"; KeyAttributes = { \"Name\" } ]");
    EXPECT(NULL, 0, "", "stored 2 records\n", "-d", store, "execute",
           "STORE [ AdType = \"Machine\"; Name = \"a\"; Memory = 100 ], "
           "[ AdType = \"Machine\"; Name = \"b\"; Memory = 200 ]");
}

/* The machines' names and memory, one "name memory" line each. */
static void names(const char *want)
{
    char count[32];
    size_t n = 0;
    for (const char *p = want; *p; p++)
        n += *p == '\n';
    snprintf(count, sizeof count, "%zu row%s\n", n, n == 1 ? "" : "s");
    EXPECT(NULL, 0, want, count, "-d", store, "execute", "-af",
           "SELECT Name, Memory FROM Machine ORDER BY Name");
}

static void txn__script_commits_together(void **state)
{
    (void)state;
    make_store();
    const char *in = "BEGIN;\n"
                     "STORE [ AdType = \"Machine\"; Name = \"c\"; Memory = 5 ];\n"
                     "UPDATE Machine SET Memory = 1 WHERE Name == \"a\";\n"
                     "SELECT Name, Memory FROM Machine ORDER BY Name;\n"
                     "COMMIT;\n";
    EXPECT(in, 0, "a 1\nb 200\nc 5\n",
           "transaction begun\nstored 1 record\nupdated 1 record\n3 rows\n"
           "transaction committed\n",
           "-d", store, "execute", "-af", "-");
    names("a 1\nb 200\nc 5\n");
}

static void txn__rollback_discards(void **state)
{
    (void)state;
    make_store();
    const char *in = "BEGIN TRANSACTION; DELETE FROM Machine; ROLLBACK;";
    EXPECT(in, 0, "",
           "transaction begun\ndeleted 2 records\ntransaction rolled back\n", "-d", store,
           "execute", "-");
    names("a 100\nb 200\n");
}

static void txn__failure_inside_rolls_back_with_message(void **state)
{
    (void)state;
    make_store();
    const char *in = "SELECT 1 AS one;\n"
                     "BEGIN;\n"
                     "DELETE FROM Machine WHERE Name == \"a\";\n"
                     "STORE [ AdType = \"Machine\"; Memory = 1 ];\n"
                     "COMMIT;\n";
    EXPECT(in, 1, "1\n",
           "1 row\ntransaction begun\ndeleted 1 record\n"
           "adstore execute: a record of type Machine needs key attribute Name\n"
           "adstore execute: the transaction begun at line 2 was rolled back: nothing it wrote "
           "was kept\n",
           "-d", store, "execute", "-af", "-");
    names("a 100\nb 200\n");
    /* a statement that does not parse, too */
    EXPECT("BEGIN;\nDELETE FROM Machine;\nSELEC 1;\n", 1, "",
           "transaction begun\ndeleted 2 records\n"
           "adstore execute: line 3, column 1: expected SELECT, UPDATE, DELETE, PURGE, STORE, "
           "BEGIN, COMMIT or ROLLBACK, found 'SELEC'\n"
           "adstore execute: the transaction begun at line 1 was rolled back: nothing it wrote "
           "was kept\n",
           "-d", store, "execute", "-");
    names("a 100\nb 200\n");
}

static void txn__end_of_input_inside_rolls_back(void **state)
{
    (void)state;
    make_store();
    EXPECT("\n\nBEGIN;\nDELETE FROM Machine;\n", 1, "",
           "transaction begun\ndeleted 2 records\n"
           "adstore execute: the end of input inside the transaction begun at line 3: rolled "
           "back, nothing it wrote was kept (end it with COMMIT)\n",
           "-d", store, "execute", "-");
    names("a 100\nb 200\n");
    /* the shell: the same at its end */
    EXPECT("BEGIN;\nDELETE FROM Machine;\n", 1, "",
           "transaction begun\ndeleted 2 records\n"
           "adstore shell: the end of input inside the transaction: rolled back, nothing it "
           "wrote was kept (end it with COMMIT)\n",
           "-d", store, "shell");
    names("a 100\nb 200\n");
}

static void txn__misuse_is_refused(void **state)
{
    (void)state;
    make_store();
    EXPECT(NULL, 1, "", "adstore execute: COMMIT without BEGIN: no transaction is open\n", "-d",
           store, "execute", "COMMIT");
    EXPECT(NULL, 1, "", "adstore execute: ROLLBACK without BEGIN: no transaction is open\n",
           "-d", store, "execute", "ROLLBACK");
    EXPECT("BEGIN;\nBEGIN;\n", 1, "",
           "transaction begun\n"
           "adstore execute: BEGIN inside a transaction: transactions do not nest (COMMIT or "
           "ROLLBACK the open one first)\n"
           "adstore execute: the transaction begun at line 1 was rolled back: nothing it wrote "
           "was kept\n",
           "-d", store, "execute", "-");
    /* the shell goes on after the failure, outside any transaction */
    EXPECT("BEGIN;\nDELETE FROM Machine;\nBEGIN;\nCOMMIT;\nSELECT count(*) AS n FROM Machine;\n",
           1, "2\n",
           "transaction begun\ndeleted 2 records\n"
           "adstore shell: BEGIN inside a transaction: transactions do not nest (COMMIT or "
           "ROLLBACK the open one first)\n"
           "adstore shell: the transaction was rolled back: nothing it wrote was kept\n"
           "adstore shell: COMMIT without BEGIN: no transaction is open\n"
           "1 row\n",
           "-d", store, "shell", "-af");
}

static void params__named_and_positional(void **state)
{
    (void)state;
    make_store();
    EXPECT(NULL, 0, "b\n", "1 row\n", "-d", store, "execute", "-af", "--param", "m=150",
           "SELECT Name FROM Machine WHERE Memory > :m");
    /* the --param values without a name go to the ?s in the order written */
    EXPECT(NULL, 0, "a 101\n", "1 row\n", "-d", store, "execute", "-af", "--param", "1",
           "--param", "\"a\"", "SELECT Name, Memory + ? AS m FROM Machine WHERE Name == ?");
    EXPECT(NULL, 0, "", "updated 1 record\n", "-d", store, "execute", "--param", "who=\"b\"",
           "--param", "mem=2 * 21", "UPDATE Machine SET Memory = :mem WHERE Name == :who");
    names("a 100\nb 42\n");
    /* a value that holds a statement is a string */
    EXPECT(NULL, 0, "x\"; DELETE FROM Machine; //\n", "1 row\n", "-d", store, "execute", "-af",
           "--param", "s=\"x\\\"; DELETE FROM Machine; //\"", "SELECT :s AS s");
    names("a 100\nb 42\n");
    /* a script: every statement sees the values */
    EXPECT("SELECT :n AS n; SELECT :n + 1 AS n;", 0, "5\n6\n", "1 row\n1 row\n", "-d", store,
           "execute", "-af", "--param", "n=5", "-");
}

static void params__errors(void **state)
{
    (void)state;
    make_store();
    EXPECT(NULL, 1, "",
           "adstore execute: line 1, column 41: no value bound to parameter :m\n", "-d", store,
           "execute", "SELECT Name FROM Machine WHERE Memory > :m");
    EXPECT(NULL, 1, "",
           "adstore execute: parameter :x has a value but the statement has no placeholder for "
           "it\n",
           "-d", store, "execute", "--param", "x=1", "SELECT 1 AS one");
    EXPECT("SELECT 1 AS one;", 1, "1\n",
           "1 row\nadstore execute: --param: parameter :x has a value but no statement has a "
           "placeholder for it\n",
           "-d", store, "execute", "-af", "--param", "x=1", "-");
    EXPECT(NULL, 2, "",
           "adstore execute: --param 'x=1 +': column 6: expected an expression, found end of "
           "input\nTry 'adstore help execute'.\n",
           "-d", store, "execute", "--param", "x=1 +", "SELECT :x AS one");
    EXPECT(NULL, 1, "",
           "adstore execute: line 1, column 12: a statement uses ? or :name placeholders, not "
           "both (the first here is ?)\n",
           "-d", store, "execute", "--param", "x=1", "--param", "2", "SELECT ? + :x AS y");
    EXPECT(NULL, 1, "",
           "adstore execute: line 1, column 32: LIMIT's parameter must be a whole number >= 0, "
           "not real\n",
           "-d", store, "execute", "--param", "1.5", "SELECT Name FROM Machine LIMIT ?");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
        T(txn__script_commits_together),
        T(txn__rollback_discards),
        T(txn__failure_inside_rolls_back_with_message),
        T(txn__end_of_input_inside_rolls_back),
        T(txn__misuse_is_refused),
        T(params__named_and_positional),
        T(params__errors),
#undef T
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
