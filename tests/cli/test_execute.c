/*
 * tests/cli/test_execute.c: `adstore execute` and `adstore shell` through
 * the real program: every spelling of the format option, statements from
 * stdin or --file ended by ';' (as in the shell), what each statement did on
 * stderr, exit statuses and error messages, stores that are only read (or
 * given a statement that does not parse) never created, a SELECT failing
 * part way (a corrupt row) that still writes its rows well formed, the help
 * text's statement, and the shell fed from a pipe.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "base/buf.h"
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



static bool exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* A store with a Machine type and three machines. */
static void make_store(void)
{
    EXPECT(NULL, 0, "", "stored 1 record\n", "-d", store, "execute",
           "STORE [ AdType = \"Type\"; ForType = \"Machine\"; KeyAttributes = { \"Name\" } ]");
    EXPECT(NULL, 0, "", "stored 3 records\n", "-d", store, "execute",
           "STORE [ AdType = \"Machine\"; Name = \"a\"; Memory = 100; Note = \"x, \\\"y\\\"\" ], "
           "[ AdType = \"Machine\"; Name = \"b\"; Memory = 200 ], "
           "[ AdType = \"Machine\"; Name = \"c\"; Memory = 50 ]");
}

static void execute__every_spelling_of_the_format_option(void **state)
{
    (void)state;
    make_store();
    const char *stmt = "SELECT Name, Memory FROM Machine WHERE Memory > 60";
    const char *json = "[\n{\"Name\":\"a\",\"Memory\":100},\n{\"Name\":\"b\",\"Memory\":200}\n]\n";
    EXPECT(NULL, 0, json, "2 rows\n", "-d", store, "execute", "-format", "json", stmt);
    EXPECT(NULL, 0, json, "2 rows\n", "-d", store, "execute", "--format", "json", stmt);
    EXPECT(NULL, 0, json, "2 rows\n", "-d", store, "execute", "-f", "json", stmt);
    EXPECT(NULL, 0, json, "2 rows\n", "-d", store, "execute", "-format=json", stmt);
    EXPECT(NULL, 0, json, "2 rows\n", "-d", store, "execute", "--format=json", stmt);
    /* after the statement too, and in any case */
    EXPECT(NULL, 0, json, "2 rows\n", "-d", store, "execute", stmt, "-format", "JSON");
    /* the default is text */
    EXPECT(NULL, 0, "Name = \"a\"\nMemory = 100\n\nName = \"b\"\nMemory = 200\n\n", "2 rows\n",
           "-d", store, "execute", stmt);
    EXPECT(NULL, 0, "Name = \"a\"\nMemory = 100\n\nName = \"b\"\nMemory = 200\n\n", "2 rows\n",
           "-d", store, "execute", "-format", "text", stmt);
    EXPECT(NULL, 0, "[ Name = \"a\"; Memory = 100 ]\n[ Name = \"b\"; Memory = 200 ]\n", "2 rows\n",
           "-d", store, "execute", "-f", "native", stmt);
    EXPECT(NULL, 0, "Name,Memory\r\na,100\r\nb,200\r\n", "2 rows\n", "-d", store, "execute",
           "--format", "csv", stmt);
    EXPECT(NULL, 0, "Name  Memory\n----  ------\na        100\nb        200\n", "2 rows\n", "-d",
           store, "execute", "-format", "tabular", stmt);
    EXPECT(NULL, 0,
           "<?xml version=\"1.0\"?>\n<!DOCTYPE classads SYSTEM \"classads.dtd\">\n<classads>\n"
           "<c>\n    <a n=\"Name\"><s>a</s></a>\n    <a n=\"Memory\"><i>100</i></a>\n</c>\n"
           "<c>\n    <a n=\"Name\"><s>b</s></a>\n    <a n=\"Memory\"><i>200</i></a>\n</c>\n"
           "</classads>\n",
           "2 rows\n", "-d", store, "execute", "-f", "xml", stmt);
    /* csv quotes what needs it */
    EXPECT(NULL, 0, "Name,Note\r\na,\"x, \"\"y\"\"\"\r\n", "1 row\n", "-d", store, "execute", "-f",
           "csv", "SELECT Name, Note FROM Machine WHERE Name == \"a\"");
}

static void execute__usage_errors_exit_2(void **state)
{
    (void)state;
    make_store();
    const char *try = "Try 'adstore help execute'.\n";
    char want[512];
    snprintf(want, sizeof want,
             "adstore execute: unknown format 'yaml'; expected text, native, json, jsonl, csv, "
             "tabular, values or xml\n%s",
             try);
    EXPECT(NULL, 2, "", want, "-d", store, "execute", "-format", "yaml", "SELECT * FROM Machine");
    snprintf(want, sizeof want, "adstore execute: option -format needs a value\n%s", try);
    EXPECT(NULL, 2, "", want, "-d", store, "execute", "SELECT * FROM Machine", "-format");
    snprintf(want, sizeof want,
             "adstore execute: expected a statement (or --file FILE, or - to read statements from stdin)\n%s", try);
    EXPECT(NULL, 2, "", want, "-d", store, "execute");
    EXPECT(NULL, 2, "", want, "-d", store, "execute", "-f", "csv");
    snprintf(want, sizeof want, "adstore execute: unknown option '--nope'\n%s", try);
    EXPECT(NULL, 2, "", want, "-d", store, "execute", "--nope", "SELECT * FROM Machine");
    /* only white space and comments on stdin */
    snprintf(want, sizeof want, "adstore execute: no statement given\n%s", try);
    EXPECT(" ;\n\n// nothing\n", 2, "", want, "-d", store, "execute", "-");
    EXPECT(NULL, 2, "", want, "-d", store, "execute", "-");
}

static void execute__reports_what_each_statement_did(void **state)
{
    (void)state;
    make_store();
    EXPECT(NULL, 0, "", "stored 1 record\n", "-d", store, "execute",
           "STORE [ AdType = \"Machine\"; Name = \"d\" ]");
    EXPECT(NULL, 0, "", "updated 2 records\n", "-d", store, "execute",
           "UPDATE Machine SET Memory = Memory * 2 WHERE Memory < 150");
    EXPECT(NULL, 0, "", "updated 0 records\n", "-d", store, "execute",
           "UPDATE Machine SET Memory = 1 WHERE false");
    EXPECT(NULL, 0, "", "updated 1 record\n", "-d", store, "execute",
           "UPDATE Machine SET Memory = 1 WHERE Name == \"d\"");
    EXPECT(NULL, 0, "", "deleted 1 record\n", "-d", store, "execute",
           "DELETE FROM Machine WHERE Name == \"d\"");
    EXPECT(NULL, 0, "", "deleted 0 records\n", "-d", store, "execute",
           "DELETE FROM Machine WHERE Name == \"d\"");
    EXPECT(NULL, 0, "", "purged 1 record\n", "-d", store, "execute",
           "PURGE FROM Machine WHERE Name == \"d\"");
    /* EXPLAIN of a write: its plan, as rows; nothing written. ANALYZE runs
     * it and says what it wrote */
    EXPECT(NULL, 0,
           "[ Step = 1; Plan = \"scan Machine: latest rows, in key order\" ]\n"
           "[ Step = 2; Plan = \"filter each row: Memory < 150\" ]\n"
           "[ Step = 3; Plan = \"update each record: SET Memory = 7, a new latest row each\" ]\n",
           "3 rows\n", "-d", store, "execute", "-f", "native",
           "EXPLAIN UPDATE Machine SET Memory = 7 WHERE Memory < 150");
    EXPECT(NULL, 0,
           "[ Step = 1; Plan = \"key lookup in Machine: the key attribute given by WHERE; run: 1 "
           "row read\" ]\n"
           "[ Step = 2; Plan = \"filter each row: Name == \\\"c\\\"; run: 1 row kept\" ]\n"
           "[ Step = 3; Plan = \"delete each record: a new latest row marked _Deleted; run: 1 "
           "record deleted\" ]\n",
           "3 rows\n", "-d", store, "execute", "-f", "native",
           "EXPLAIN ANALYZE DELETE FROM Machine WHERE Name == \"c\"");
    EXPECT(NULL, 0, "", "deleted 0 records\n", "-d", store, "execute",
           "DELETE FROM Machine WHERE Name == \"c\"");
    EXPECT(NULL, 0, "", "stored 1 record\n", "-d", store, "execute",
           "STORE [ AdType = \"Machine\"; Name = \"c\"; Memory = 100 ]");
    EXPECT(NULL, 0, "[ n = 3; m = 500 ]\n", "1 row\n", "-d", store, "execute", "-f", "native",
           "SELECT count(*) AS n, sum(Memory) AS m FROM Machine");
    EXPECT(NULL, 0, "", "0 rows\n", "-d", store, "execute", "-f", "native",
           "SELECT * FROM Machine WHERE false");
    /* the words of a statement may come as several operands */
    EXPECT(NULL, 0, "[ Name = \"c\" ]\n", "1 row\n", "-d", store, "execute", "-f", "native",
           "SELECT", "Name", "FROM", "Machine", "WHERE", "Memory", "<", "150");
    /* --hidden shows the attributes starting with '_' in SELECT * */
    run_result r;
    RUN(r, 0, "-d", store, "execute", "--hidden", "-f", "native",
        "SELECT * FROM Machine WHERE Name == \"c\"");
    assert_non_null(strstr(r.out, "Name = \"c\"; _Timestamp = `"));
    assert_non_null(strstr(r.out, "; __Latest = true; _Deleted = false ]\n"));
    run_free(&r);
}

static void execute__errors_exit_1_with_line_and_column(void **state)
{
    (void)state;
    make_store();
    EXPECT(NULL, 1, "",
           "adstore execute: line 1, column 10: expected FROM, USING, WHERE, GROUP BY, ORDER BY, "
           "LIMIT or the end of the statement, found 'FORM'\n",
           "-d", store, "execute", "SELECT * FORM Machine");
    EXPECT(NULL, 1, "",
           "adstore execute: line 2, column 6: no type named Nope (store a Type record first)\n",
           "-d", store, "execute", "SELECT *\nFROM Nope");
    EXPECT(NULL, 1, "",
           "adstore execute: two columns are labelled 'name': use AS to tell them apart\n", "-d",
           store, "execute", "SELECT Name, name FROM Machine");
    EXPECT(NULL, 1, "", "adstore execute: record 2: a record needs AdType, the name of its type\n",
           "-d", store, "execute",
           "STORE [ AdType = \"Machine\"; Name = \"z\" ], [ Name = \"y\" ]");
    /* ... and stored nothing */
    EXPECT(NULL, 0, "", "0 rows\n", "-d", store, "execute",
           "SELECT * FROM Machine WHERE Name == \"z\"");
    EXPECT(NULL, 1, "",
           "adstore execute: DELETE without FROM must say which types in WHERE, with AdType "
           "(for example WHERE AdType in { \"A\", \"B\" })\n",
           "-d", store, "execute", "DELETE WHERE Name == \"a\"");
    EXPECT(NULL, 1, "", "adstore execute: line 1, column 16: no datasource named nope\n", "-d",
           store, "execute", "SELECT * USING nope");
}

static void execute__statements_from_stdin(void **state)
{
    (void)state;
    make_store();
    /* ended by ';' as in the shell, never by a blank line; a ';' in a
     * string or a comment, or inside brackets, does not end one */
    const char *script = "STORE [ AdType = \"Machine\"; Name = \"d;e\"; Memory = 1 ];\n"
                         "SELECT Name\n"
                         "  FROM Machine // the rest; of the line\n"
                         "\n"
                         "  WHERE Memory < 60;\n"
                         "\n"
                         "UPDATE Machine SET Memory = 2 WHERE Name == \"d;e\"; SELECT Memory FROM "
                         "Machine WHERE Name == \"d;e\";\n"
                         "\n"
                         "\n"
                         "SELECT [ a = { 1,\n\n 2 };\n\n b = 3 ].a AS l FROM Machine LIMIT 1;\n";
    EXPECT(script, 0, "[ Name = \"c\" ]\n[ Name = \"d;e\" ]\n[ Memory = 2 ]\n[ l = { 1, 2 } ]\n",
           "stored 1 record\n2 rows\nupdated 1 record\n1 row\n1 row\n", "-d", store, "execute",
           "-f", "native", "-");
    /* a failing statement stops the script: what ran before stays done,
     * nothing after runs; lines count from the script's start */
    script = "DELETE FROM Machine WHERE Name == \"a\";\n"
             "SELECT Name FROM Machine;\n"
             "\n"
             "SELECT Name\n"
             "  FORM Machine;\n"
             "DELETE FROM Machine WHERE Name == \"b\"\n";
    EXPECT(script, 1, "[ Name = \"b\" ]\n[ Name = \"c\" ]\n[ Name = \"d;e\" ]\n",
           "deleted 1 record\n3 rows\nadstore execute: line 5, column 3: expected ',', AS, "
           "FROM, USING, WHERE, GROUP BY, ORDER BY, LIMIT or the end of the statement, found "
           "'FORM'\n",
           "-d", store, "execute", "-f", "native", "-");
    /* what the shell takes, a script takes the same way: a blank line
     * inside a statement is nothing */
    EXPECT("SELECT Name\n\nFROM Machine\n\nWHERE Name == \"c\";\n", 0, "[ Name = \"c\" ]\n",
           "1 row\n", "-d", store, "execute", "-f", "native", "-");
    EXPECT(NULL, 0, "[ n = 3 ]\n", "1 row\n", "-d", store, "execute", "-f", "native",
           "SELECT count(*) AS n FROM Machine");
    /* the format applies to every statement */
    EXPECT("SELECT Name FROM Machine WHERE Name == \"b\"; SELECT Memory FROM Machine WHERE Name "
           "== \"b\"",
           0, "Name\r\nb\r\nMemory\r\n200\r\n", "1 row\n1 row\n", "-d", store, "execute",
           "--format", "csv", "-");
}

static void execute__reading_never_creates_a_store(void **state)
{
    (void)state;
    char want[1400];
    snprintf(want, sizeof want, "adstore execute: no store at %s: No such file or directory\n",
             store);
    EXPECT(NULL, 1, "", want, "-d", store, "execute", "SELECT * FROM Machine");
    assert_false(exists(store));
    EXPECT(NULL, 1, "", want, "-d", store, "execute", "SELECT * USING types");
    assert_false(exists(store));
    EXPECT("SELECT 1 FROM Machine; SELECT 2 FROM Machine", 1, "", want, "-d", store, "execute",
           "-");
    assert_false(exists(store));
    /* comments before the SELECT do not make it a write */
    EXPECT(NULL, 1, "", want, "-d", store, "execute", "/* a\n comment */ // another\n select 1");
    assert_false(exists(store));
    /* the store from the environment */
    setenv("ADSTORE_DB", store, 1);
    EXPECT(NULL, 1, "", want, "execute", "SELECT * FROM Machine");
    unsetenv("ADSTORE_DB");
    assert_false(exists(store));
    /* a write creates it, private */
    EXPECT(NULL, 0, "", "stored 1 record\n", "-d", store, "execute",
           "STORE [ AdType = \"Type\"; ForType = \"M\"; KeyAttributes = { \"Name\" } ]");
    struct stat st;
    assert_int_equal(stat(store, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0700);
    /* a script that reads, then writes, opens the store for writing when it must */
    EXPECT(
        "SELECT count(*) AS n FROM M; STORE [ AdType = \"M\"; Name = \"x\" ]; SELECT Name FROM M",
        0, "[ n = 0 ]\n[ Name = \"x\" ]\n", "1 row\nstored 1 record\n1 row\n", "-d", store,
        "execute", "-f", "native", "-");
}

static void execute__a_statement_that_does_not_parse_never_creates_a_store(void **state)
{
    (void)state;
    EXPECT(NULL, 1, "",
           "adstore execute: line 1, column 1: expected SELECT, UPDATE, DELETE, PURGE, STORE, BEGIN, COMMIT or ROLLBACK, "
           "found 'STOR'\n",
           "-d", store, "execute", "STOR x");
    assert_false(exists(store));
    EXPECT(NULL, 1, "",
           "adstore execute: line 1, column 46: expected ']' after a subscript, found '='\n", "-d",
           store, "execute", "STORE [ AdType = \"Machine\"; Name = \"z\" ] [ x = 1 ]");
    assert_false(exists(store));
    /* nor one that is wrong whatever the store holds */
    EXPECT(NULL, 1, "",
           "adstore execute: DELETE without FROM must say which types in WHERE, with AdType "
           "(for example WHERE AdType in { \"A\", \"B\" })\n",
           "-d", store, "execute", "DELETE WHERE Name == \"a\"");
    assert_false(exists(store));
    EXPECT(NULL, 1, "",
           "adstore execute: line 1, column 26: count(*) is an aggregate; WHERE filters rows "
           "before they are grouped\n",
           "-d", store, "execute", "UPDATE M SET x = 1 WHERE count(*) > 1");
    assert_false(exists(store));
    /* in a script likewise, with the line counted from the script's start */
    EXPECT("// a script\n\n  STOR x", 1, "",
           "adstore execute: line 3, column 3: expected SELECT, UPDATE, DELETE, PURGE, STORE, BEGIN, COMMIT or ROLLBACK, "
           "found 'STOR'\n",
           "-d", store, "execute", "-");
    assert_false(exists(store));
    /* a SELECT that does not parse says so, not that the store is missing */
    EXPECT(NULL, 1, "",
           "adstore execute: line 1, column 10: expected FROM, USING, WHERE, GROUP BY, ORDER BY, "
           "LIMIT or the end of the statement, found 'FORM'\n",
           "-d", store, "execute", "SELECT * FORM Machine");
    /* a statement that parses but fails because of what the store holds
     * (here: no such type) leaves the new, empty store behind */
    EXPECT(NULL, 1, "", "adstore execute: no type named Nope (store a Type record first)\n", "-d",
           store, "execute", "STORE [ AdType = \"Nope\"; x = 1 ]");
    assert_true(exists(store));
}

/* Flip a bit of text in the store's data file, wherever it is stored. */
static void corrupt(const char *text)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/data.mdb", store);
    FILE *f = fopen(path, "r+b");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
    size_t tl = strlen(text);
    int hits = 0;
    for (long i = 0; i + (long)tl <= n; i++)
        if (memcmp(buf + i, text, tl) == 0) {
            buf[i + (long)tl - 1] ^= 1;
            hits++;
        }
    assert_true(hits > 0);
    fseek(f, 0, SEEK_SET);
    assert_int_equal(fwrite(buf, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    free(buf);
}

static void execute__a_select_failing_part_way_writes_its_rows_well_formed(void **state)
{
    (void)state;
    make_store();
    EXPECT(NULL, 0, "", "stored 1 record\n", "-d", store, "execute",
           "STORE [ AdType = \"Machine\"; Name = \"d\"; Memory = 1; Mark = \"QQCORRUPTQQ\" ]");
    corrupt("QQCORRUPTQQ");
    /* a, b and c come before d in key order: written and closed, then the
     * error, exit 1 */
    const char *msg = "adstore execute: latest row of type Machine: row checksum mismatch (the row "
                      "is corrupt)\n";
    EXPECT(NULL, 1, "[\n{\"Name\":\"a\"},\n{\"Name\":\"b\"},\n{\"Name\":\"c\"}\n]\n", msg, "-d",
           store, "execute", "-f", "json", "SELECT Name FROM Machine");
    EXPECT(NULL, 1,
           "<?xml version=\"1.0\"?>\n<!DOCTYPE classads SYSTEM \"classads.dtd\">\n<classads>\n"
           "<c>\n    <a n=\"Name\"><s>a</s></a>\n</c>\n<c>\n    <a n=\"Name\"><s>b</s></a>\n</c>\n"
           "<c>\n    <a n=\"Name\"><s>c</s></a>\n</c>\n</classads>\n",
           msg, "-d", store, "execute", "-f", "xml", "SELECT Name FROM Machine");
    EXPECT(NULL, 1, "Name\n----\na\nb\nc\n", msg, "-d", store, "execute", "-f", "tabular",
           "SELECT Name FROM Machine");
    EXPECT(NULL, 1, "[ Name = \"a\" ]\n[ Name = \"b\" ]\n[ Name = \"c\" ]\n", msg, "-d", store,
           "execute", "-f", "native", "SELECT Name FROM Machine");
    /* a script stops there */
    EXPECT("SELECT count(*) AS n FROM Machine WHERE Name == \"b\"; SELECT Name FROM Machine; "
           "SELECT 1 AS x FROM Machine",
           1, "[ n = 1 ]\n[ Name = \"a\" ]\n[ Name = \"b\" ]\n[ Name = \"c\" ]\n",
           "1 row\nadstore execute: latest row of type Machine: row checksum mismatch (the row is "
           "corrupt)\n",
           "-d", store, "execute", "-f", "native", "-");
}

static void execute__the_help_texts_timeline_statement_runs(void **state)
{
    (void)state;
    make_store();
    run_result r;
    RUN(r, 0, "help", "execute");
    const char *p = strstr(r.out, "  SELECT avg@(");
    assert_non_null(p);
    /* the statement and its continuation line, without the remark after it */
    const char *end = strstr(strchr(p, '\n'), "    (");
    assert_non_null(end);
    char stmt[512];
    snprintf(stmt, sizeof stmt, "%.*s", (int)(end - p), p);
    run_free(&r);
    /* the machines have no Platform: one group, an hour a row */
    RUN(r, 0, "-d", store, "execute", "-f", "native", stmt);
    assert_non_null(strstr(r.out, "Platform = undefined; M = 350.0 ]\n"));
    assert_true(strcmp(r.err, "24 rows\n") == 0 || strcmp(r.err, "25 rows\n") == 0);
    run_free(&r);
}

/* ---- the shell ---- */

static void shell__statements_end_with_semicolons(void **state)
{
    (void)state;
    make_store();
    const char *in =
        "SELECT Name\n"
        "\n"
        "  FROM Machine\n"
        "  WHERE Memory > 60;\n"
        "SELECT count(*) AS n FROM Machine; SELECT Name\n"
        "FROM Machine WHERE Name == \"c\";\n"
        "STORE [ AdType = \"Machine\"; Name = \"d;\" ]; SELECT Name FROM Machine WHERE "
        "Name == \"d;\"\n"
        ";\n";
    EXPECT(in, 0, "Name = \"a\"\n\nName = \"b\"\n\nn = 3\n\nName = \"c\"\n\nName = \"d;\"\n\n",
           "2 rows\n1 row\n1 row\nstored 1 record\n1 row\n", "-d", store, "shell");
}

static void shell__dot_commands_and_errors(void **state)
{
    (void)state;
    make_store();
    const char *in = ".format json\n"
                     "SELECT Name FROM Machine WHERE Memory > 150;\n"
                     ".help\n"
                     "SELEC Name FROM Machine;\n"
                     ".bogus\n"
                     ".format yaml\n"
                     "  .format   csv\n"
                     "SELECT Name, Memory FROM Machine\n"
                     "  WHERE Name == \"a\";\n"
                     ".quit\n"
                     "SELECT Name FROM Machine;\n";
    run_result r;
    RUN_IN(r, in, 1, "-d", store, "shell");
    assert_string_equal(r.out,
                        "format json\n"
                        "[\n{\"Name\":\"b\"}\n]\n"
                        "Statements end with ';' (they may span lines). Commands:\n"
                        "  .format [F]       show the output format, or set it: text, native,\n"
                        "                    json, jsonl, csv, tabular, values, xml\n"
                        "  .headers on|off   csv and tabular header lines\n"
                        "  .hidden           toggle showing attributes starting with '_' in "
                        "SELECT *\n"
                        "  .tables           the declared types\n"
                        "  .schema TYPE      a type's key attributes, and its attributes with "
                        "the\n"
                        "                    number of records holding each\n"
                        "  .read FILE        run the statements of FILE (as execute --file)\n"
                        "  .timer on|off     each statement's wall time\n"
                        "  .explain SELECT   the plan of a SELECT (as EXPLAIN SELECT ...); also "
                        "of an\n"
                        "                    UPDATE, DELETE or PURGE (nothing is written)\n"
                        "  .explain analyze SELECT   run it, then the plan with the rows each "
                        "step read\n"
                        "                    (an UPDATE, DELETE or PURGE is run: it writes)\n"
                        "  .help             this text\n"
                        "  .quit             leave (so do .exit and Ctrl-D)\n"
                        "Ctrl-C cancels the statement being typed or run.\n"
                        "The statement language: docs/query.md, or 'adstore help "
                        "execute'.\n"
                        "format csv\n"
                        "Name,Memory\r\na,100\r\n");
    /* an error does not end the shell, but the exit status remembers it */
    assert_string_equal(r.err, "1 row\n"
                               "adstore shell: line 1, column 1: expected SELECT, UPDATE, DELETE, "
                               "PURGE, STORE, BEGIN, COMMIT or ROLLBACK, found 'SELEC'\n"
                               "unknown command '.bogus'; .help lists them\n"
                               "unknown format 'yaml'; expected text, native, json, jsonl, "
                               "csv, tabular, values or xml\n"
                               "1 row\n");
    run_free(&r);
    /* the error's line and column are within the statement being typed */
    EXPECT("SELECT Name FROM Machine WHERE Name == \"a\"; SELECT *\n  FORM Machine;\n", 1,
           "Name = \"a\"\n\n",
           "1 row\nadstore shell: line 2, column 3: expected FROM, USING, WHERE, GROUP BY, ORDER "
           "BY, LIMIT or the end of the statement, found 'FORM'\n",
           "-d", store, "shell");
}

static void shell__end_of_input_runs_what_is_left(void **state)
{
    (void)state;
    make_store();
    /* no ';' at the end: run at end of input */
    EXPECT("SELECT Name FROM Machine\n  WHERE Name == \"b\"", 0, "Name = \"b\"\n\n", "1 row\n",
           "-d", store, "shell");
    EXPECT("", 0, "", "", "-d", store, "shell");
    /* .hidden toggles the '_' attributes of SELECT * */
    run_result r;
    RUN_IN(r,
           ".hidden\nSELECT * FROM Machine WHERE Name == \"b\";\n.hidden\n"
           "SELECT * FROM Machine WHERE Name == \"b\";\n",
           0, "-d", store, "shell", "-f", "native");
    const char *second = strstr(r.out, "hidden attributes hidden\n");
    assert_non_null(second);
    assert_true(strncmp(r.out,
                        "hidden attributes shown\n[ AdType = \"Machine\"; Memory = 200; "
                        "Name = \"b\"; _Timestamp = `",
                        80) == 0);
    assert_string_equal(second, "hidden attributes hidden\n[ AdType = \"Machine\"; Memory = "
                                "200; Name = \"b\" ]\n");
    assert_string_equal(r.err, "1 row\n1 row\n");
    run_free(&r);
}

static void shell__usage(void **state)
{
    (void)state;
    EXPECT(NULL, 2, "",
           "adstore shell: the shell takes no statement: type them at its prompt\n"
           "Try 'adstore help shell'.\n",
           "-d", store, "shell", "SELECT * FROM Machine");
    assert_false(exists(store));
    /* reading through the shell does not create a store either */
    char want[1400];
    snprintf(want, sizeof want, "adstore shell: no store at %s: No such file or directory\n",
             store);
    EXPECT("SELECT * FROM Machine;\n", 1, "", want, "-d", store, "shell");
    assert_false(exists(store));
}

/* Statements with chains of 300,000 operands (issue 10 item 8: the program
 * died of a stack overflow) run: in the select list, and as WHERE's
 * conjuncts, which the planner splits and joins again (in a plain and in a
 * timeline SELECT). */
static void execute__chains_of_300000_operands_run(void **state)
{
    (void)state;
    make_store();
    ads_buf sel = ADS_BUF_INIT, where = ADS_BUF_INIT;
    ads_buf_adds(&sel, "SELECT ");
    for (int i = 0; i < 300000; i++)
        ads_buf_adds(&sel, i ? "+1" : "1");
    ads_buf_adds(&sel, " AS n FROM Machine WHERE Name == \"a\"\n");
    ads_buf_adds(&where, "SELECT count(*) AS n FROM Machine WHERE ");
    for (int i = 0; i < 300000; i++)
        ads_buf_adds(&where, i ? " && Memory >= 100" : "Memory >= 100");
    ads_buf_adds(&where, "\n");
    assert_false(sel.failed || where.failed);
    EXPECT(ads_buf_cstr(&sel), 0, "[ n = 300000 ]\n", "1 row\n", "-d", store, "execute", "-f",
           "native", "-");
    EXPECT(ads_buf_cstr(&where), 0, "[ n = 2 ]\n", "1 row\n", "-d", store, "execute", "-f",
           "native", "-");
    /* a temporal filter is split from the rest of WHERE the same way */
    ads_buf_clear(&where);
    ads_buf_adds(&where, "SELECT count(*) AS n FROM Machine WHERE @last(`1h`)");
    for (int i = 0; i < 300000; i++)
        ads_buf_adds(&where, " && Memory >= 100");
    ads_buf_adds(&where, "\n");
    EXPECT(ads_buf_cstr(&where), 0, "[ n = 2 ]\n", "1 row\n", "-d", store, "execute", "-f",
           "native", "-");
    ads_buf_free(&sel);
    ads_buf_free(&where);
}

static void execute__statement_limits_from_the_command_line(void **state)
{
    (void)state;
    make_store();
    const char *try = "Try 'adstore help execute'.\n";
    char want[512];
    snprintf(want, sizeof want,
             "adstore execute: --max-memory takes a whole number of MiB (0: no limit), not "
             "'lots'\n%s", try);
    EXPECT(NULL, 2, "", want, "-d", store, "execute", "--max-memory", "lots", "SELECT 1");
    snprintf(want, sizeof want,
             "adstore execute: --max-time takes a whole number of seconds (0: no limit), not "
             "'-1'\n%s", try);
    EXPECT(NULL, 2, "", want, "-d", store, "execute", "--max-time=-1", "SELECT 1");
    /* Note of a is 6 bytes; three nested global substitutions of the empty
     * pattern grow it to 5,764,800 bytes */
    char x1[64], x2[256], stmt[768];
    snprintf(x1, sizeof x1, "replaceAll(\"\", Note, Note)");
    snprintf(x2, sizeof x2, "replaceAll(\"\", %s, %s)", x1, x1);
    snprintf(stmt, sizeof stmt,
             "SELECT size(replaceAll(\"\", %s, %s)) AS n FROM Machine WHERE Name == \"a\"", x2, x2);
    EXPECT(NULL, 1, "",
           "adstore execute: the statement needs more than its memory limit of 1 MiB "
           "(ads_query_set_limits; adstore --max-memory)\n",
           "-d", store, "execute", "--max-memory", "1", stmt);
    /* 0: no limit; the same statement runs */
    EXPECT(NULL, 0, "n = 5764800\n\n", "1 row\n", "-d", store, "execute", "--max-memory", "0", stmt);
}

/* Output for scripts: condor_q -af's values, JSON Lines, csv and tabular
 * without their header, and -o FILE. */
static void execute__output_for_scripts(void **state)
{
    (void)state;
    make_store();
    const char *stmt = "SELECT Name, Memory, Note FROM Machine WHERE Memory > 60";
    const char *af = "a 100 x, \"y\"\nb 200 undefined\n";
    EXPECT(NULL, 0, af, "2 rows\n", "-d", store, "execute", "-af", stmt);
    EXPECT(NULL, 0, af, "2 rows\n", "-d", store, "execute", "-f", "values", stmt);
    EXPECT(NULL, 0,
           "{\"Name\":\"a\",\"Memory\":100,\"Note\":\"x, \\\"y\\\"\"}\n"
           "{\"Name\":\"b\",\"Memory\":200,\"Note\":null}\n",
           "2 rows\n", "-d", store, "execute", "--format", "jsonl", stmt);
    EXPECT(NULL, 0, "a,100,\"x, \"\"y\"\"\"\r\nb,200,\r\n", "2 rows\n", "-d", store, "execute",
           "-f", "csv", "--noheader", stmt);
    EXPECT(NULL, 0, "a,100,\"x, \"\"y\"\"\"\r\nb,200,\r\n", "2 rows\n", "-d", store, "execute",
           "-f", "csv", "-noheader", stmt);
    EXPECT(NULL, 0, "a  100  x, \"y\"\nb  200\n", "2 rows\n", "-d", store, "execute", "-f",
           "tabular", "--noheader", stmt);
    /* SELECT * as csv: the type's attributes, in name order */
    EXPECT(NULL, 0, "AdType,Memory,Name,Note\r\nMachine,50,c,\r\n", "1 row\n", "-d", store,
           "execute", "-f", "csv", "SELECT * FROM Machine WHERE Name == \"c\"");
    /* -o FILE: the rows in FILE, nothing on stdout */
    char path[1200];
    snprintf(path, sizeof path, "%s/out.txt", dir);
    EXPECT(NULL, 0, "", "2 rows\n", "-d", store, "execute", "-o", path, "-af", stmt);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char buf[256];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    assert_string_equal(buf, af);
    EXPECT(NULL, 1, "", "adstore execute: writing the output failed\n"
                        "adstore execute: cannot write /dev/full: No space left on device\n",
           "-d", store, "execute", "-o", "/dev/full", stmt);
    /* dump takes -format as execute does */
    run_result r;
    RUN(r, 0, "-d", store, "dump", "-format", "text");
    assert_int_equal(strncmp(r.out, "[ Format = \"adstore-dump\"; Version = 1;", 39), 0);
    run_free(&r);
    snprintf(path, sizeof path, "%s/no/such/dir/out.txt", dir);
    char want[1400];
    snprintf(want, sizeof want, "adstore execute: cannot create %s: No such file or directory\n",
             path);
    EXPECT(NULL, 1, "", want, "-d", store, "execute", "-o", path, stmt);
}

/* Statements from a file: --file, the same grammar as stdin and the shell;
 * a lone operand naming a file is not taken for a statement. */
static void execute__statements_from_a_file(void **state)
{
    (void)state;
    make_store();
    char path[1200];
    snprintf(path, sizeof path, "%s/q.sql", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("SELECT Name\n\n  FROM Machine WHERE Memory > 60;\nSELECT 1 + 1 AS two;\n", f);
    fclose(f);
    EXPECT(NULL, 0, "a\nb\n2\n", "2 rows\n1 row\n", "-d", store, "execute", "--file", path,
           "-af");
    char want[3000];
    snprintf(want, sizeof want,
             "adstore execute: '%s' is a file, not a statement: run its statements with --file "
             "%s (or - to read them from stdin)\nTry 'adstore help execute'.\n",
             path, path);
    EXPECT(NULL, 2, "", want, "-d", store, "execute", path);
    EXPECT(NULL, 2, "",
           "adstore execute: --file takes the statements: give no statement besides\n"
           "Try 'adstore help execute'.\n",
           "-d", store, "execute", "--file", path, "SELECT 1 AS x");
    snprintf(path, sizeof path, "%s/none.sql", dir);
    snprintf(want, sizeof want, "adstore execute: cannot open %s: No such file or directory\n",
             path);
    EXPECT(NULL, 1, "", want, "-d", store, "execute", "--file", path);
}

/* A SELECT with no FROM that names no attribute is one row, as in SQL;
 * naming one, it reads every type's records. */
static void execute__select_without_from_is_one_row(void **state)
{
    (void)state;
    make_store();
    EXPECT(NULL, 0, "[ two = 2 ]\n", "1 row\n", "-d", store, "execute", "-f", "native",
           "SELECT 1 + 1 AS two");
    EXPECT(NULL, 0, "[ s = \"ab\"; n = 3 ]\n", "1 row\n", "-d", store, "execute", "-f", "native",
           "SELECT strcat(\"a\", \"b\") AS s, size({1, 2, 3}) AS n ORDER BY 1");
    EXPECT(NULL, 0, "", "0 rows\n", "-d", store, "execute", "-f", "native",
           "SELECT 1 AS one WHERE false");
    EXPECT(NULL, 0, "[ Name = \"b\" ]\n", "1 row\n", "-d", store, "execute", "-f", "native",
           "SELECT Name WHERE Memory == 200");
}

/* The shell's commands for looking around: .tables, .schema, .format
 * alone, .headers, .read (the grammar of execute --file), .timer. */
static void shell__tables_schema_read_and_settings(void **state)
{
    (void)state;
    make_store();
    char path[1200];
    snprintf(path, sizeof path, "%s/q.sql", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("SELECT Name\n\n  FROM Machine WHERE Memory > 150;\nSELECT 1 + 1 AS two;\n", f);
    fclose(f);
    char in[2000];
    snprintf(in, sizeof in,
             ".tables\n"
             ".schema Machine\n"
             ".schema no'quote\n"
             ".format\n"
             ".format csv\n"
             ".headers off\n"
             "SELECT Name FROM Machine WHERE Name == \"a\";\n"
             ".headers maybe\n"
             ".format values\n"
             ".read %s\n"
             ".read %s/none.sql\n"
             ".timer on\n"
             "SELECT 1 AS one;\n"
             ".timer off\n",
             path, dir);
    run_result r;
    RUN_IN(r, in, 1, "-d", store, "shell");
    assert_string_equal(r.out, "Machine\n"
                               "Machine keyed by { \"Name\" }: 3 records\n"
                               "  AdType 3\n"
                               "  Memory 3\n"
                               "  Name 3\n"
                               "  Note 1\n"
                               "format text\n"
                               "format csv\n"
                               "headers off\n"
                               "a\r\n"
                               "format values\n"
                               "b\n"
                               "2\n"
                               "timer on\n"
                               "1\n"
                               "timer off\n");
    /* the timer's line says the time, whatever it is */
    const char *t = strstr(r.err, "time: ");
    assert_non_null(t);
    assert_non_null(strstr(t, " s\n1 row\n"));
    char want[3000];
    snprintf(want, sizeof want,
             ".schema takes a type name, not 'no'quote'\n"
             "1 row\n"
             ".headers takes on or off\n"
             "1 row\n"
             "1 row\n"
             "cannot open %s/none.sql\n",
             dir);
    assert_int_equal(strncmp(r.err, want, strlen(want)), 0);
    run_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
        T(execute__output_for_scripts),
        T(shell__tables_schema_read_and_settings),
        T(execute__statements_from_a_file),
        T(execute__select_without_from_is_one_row),
        T(execute__every_spelling_of_the_format_option),
        T(execute__usage_errors_exit_2),
        T(execute__statement_limits_from_the_command_line),
        T(execute__reports_what_each_statement_did),
        T(execute__errors_exit_1_with_line_and_column),
        T(execute__statements_from_stdin),
        T(execute__reading_never_creates_a_store),
        T(execute__a_statement_that_does_not_parse_never_creates_a_store),
        T(execute__a_select_failing_part_way_writes_its_rows_well_formed),
        T(execute__the_help_texts_timeline_statement_runs),
        T(execute__chains_of_300000_operands_run),
        T(shell__statements_end_with_semicolons),
        T(shell__dot_commands_and_errors),
        T(shell__end_of_input_runs_what_is_left),
        T(shell__usage),
#undef T
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
