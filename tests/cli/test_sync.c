/*
 * tests/cli/test_sync.c: `adstore import --sync` through the real program:
 * records the snapshot lacks are deleted, dated at the snapshot's time with
 * --backfill and now without; other types are left alone.
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

static void declare(void)
{
    EXPECT(NULL, 0, "", "stored 2 records\n", "-d", store, "execute",
           "STORE [ AdType = \"Type\"; ForType = \"Machine\"; KeyAttributes = { \"Name\" } ], "
           "[ AdType = \"Type\"; ForType = \"Job\"; KeyAttributes = { \"Id\" } ]");
    EXPECT(NULL, 0, "", "stored 1 record\n", "-d", store, "execute",
           "STORE [ AdType = \"Job\"; Id = 1 ]");
}

/* Write text to dir/name; the path goes to path. */
static void write_file(char *path, size_t cap, const char *name, const char *text)
{
    snprintf(path, cap, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

/* Import path with --sync (and extra, may be NULL); its summary must end in tail. */
static void sync_import(const char *path, const char *extra, const char *tail)
{
    run_result r;
    if (extra)
        RUN(r, 0, "-d", store, "import", "--sync", extra, path);
    else
        RUN(r, 0, "-d", store, "import", "--sync", path);
    size_t n = strlen(r.err), m = strlen(tail);
    if (n < m || strcmp(r.err + n - m, tail) != 0)
        fail_msg("summary '%s', wanted it to end '%s'", r.err, tail);
    run_free(&r);
}

static const char snap1[] =
    "[ AdType = \"Machine\"; Name = \"a\"; M = 1; _Timestamp = `2020-01-01T00:00:00Z` ]\n"
    "[ AdType = \"Machine\"; Name = \"b\"; M = 1; _Timestamp = `2020-01-01T00:00:00Z` ]\n";
/* b vanishes, c appears; a is unchanged */
static const char snap2[] =
    "[ AdType = \"Machine\"; Name = \"a\"; M = 1; _Timestamp = `2020-01-01T00:01:00Z` ]\n"
    "[ AdType = \"Machine\"; Name = \"c\"; M = 1; _Timestamp = `2020-01-01T00:00:30Z` ]\n";
/* b returns, changed */
static const char snap3[] =
    "[ AdType = \"Machine\"; Name = \"a\"; M = 1; _Timestamp = `2020-01-01T00:02:00Z` ]\n"
    "[ AdType = \"Machine\"; Name = \"b\"; M = 2; _Timestamp = `2020-01-01T00:02:00Z` ]\n"
    "[ AdType = \"Machine\"; Name = \"c\"; M = 1; _Timestamp = `2020-01-01T00:02:00Z` ]\n";

/* With --backfill a deletion is dated by the snapshot's latest _Timestamp. */
static void sync__backfill_dates_deletions_by_the_snapshot(void **state)
{
    (void)state;
    declare();
    char p1[1200], p2[1200], p3[1200];
    write_file(p1, sizeof p1, "s1.classad", snap1);
    write_file(p2, sizeof p2, "s2.classad", snap2);
    write_file(p3, sizeof p3, "s3.classad", snap3);
    sync_import(p1, "--backfill", ", 0 deleted\n");
    sync_import(p2, "--backfill", ", 1 unchanged, 1 deleted\n");
    /* stored at the third snapshot's time by something else: left alone */
    EXPECT(NULL, 0, "", "stored 1 record\n", "-d", store, "execute",
           "STORE [ AdType = \"Machine\"; Name = \"x\"; M = 9; "
           "_Timestamp = `2020-01-01T00:02:00Z` ]");
    sync_import(p3, "--backfill", ", 2 unchanged, 0 deleted\n");
    EXPECT(NULL, 0,
           "[ Name = \"a\"; _Deleted = false; _Timestamp = `2020-01-01T00:00:00Z`; M = 1 ]\n"
           "[ Name = \"b\"; _Deleted = false; _Timestamp = `2020-01-01T00:00:00Z`; M = 1 ]\n"
           "[ Name = \"b\"; _Deleted = true; _Timestamp = `2020-01-01T00:01:00Z`; M = 1 ]\n"
           "[ Name = \"b\"; _Deleted = false; _Timestamp = `2020-01-01T00:02:00Z`; M = 2 ]\n"
           "[ Name = \"c\"; _Deleted = false; _Timestamp = `2020-01-01T00:00:30Z`; M = 1 ]\n"
           "[ Name = \"x\"; _Deleted = false; _Timestamp = `2020-01-01T00:02:00Z`; M = 9 ]\n",
           "6 rows\n", "-d", store, "execute", "-f", "native",
           "SELECT Name, _Deleted, _Timestamp, M FROM Machine WHERE @anytime() "
           "ORDER BY Name, _Timestamp");
    /* the Job type was not in the input */
    EXPECT(NULL, 0, "[ Id = 1; _Deleted = false ]\n", "1 row\n", "-d", store, "execute", "-f",
           "native", "SELECT Id, _Deleted FROM Job WHERE @anytime()");
    /* a record already deleted is left alone: no second deletion row */
    sync_import(p2, "--backfill", ", 0 deleted\n");
    sync_import(p1, "--backfill", ", 0 deleted\n");
}

/* Without --backfill rows and deletions are dated now. */
static void sync__deletions_dated_now(void **state)
{
    (void)state;
    declare();
    char p1[1200], p2[1200], p3[1200];
    write_file(p1, sizeof p1, "s1.classad",
               "[ AdType = \"Machine\"; Name = \"a\"; M = 1 ]\n"
               "[ AdType = \"Machine\"; Name = \"b\"; M = 1 ]\n");
    write_file(p2, sizeof p2, "s2.classad",
               "[ AdType = \"Machine\"; Name = \"a\"; M = 1 ]\n"
               "[ AdType = \"Machine\"; Name = \"c\"; M = 1 ]\n");
    write_file(p3, sizeof p3, "s3.classad",
               "[ AdType = \"Machine\"; Name = \"a\"; M = 1 ]\n"
               "[ AdType = \"Machine\"; Name = \"b\"; M = 2 ]\n"
               "[ AdType = \"Machine\"; Name = \"c\"; M = 1 ]\n");
    sync_import(p1, NULL, ", 0 deleted\n");
    sync_import(p2, NULL, ", 1 unchanged, 1 deleted\n");
    sync_import(p3, NULL, ", 2 unchanged, 0 deleted\n");
    EXPECT(NULL, 0,
           "[ Name = \"a\"; _Deleted = false; M = 1 ]\n"
           "[ Name = \"b\"; _Deleted = false; M = 1 ]\n"
           "[ Name = \"b\"; _Deleted = true; M = 1 ]\n"
           "[ Name = \"b\"; _Deleted = false; M = 2 ]\n"
           "[ Name = \"c\"; _Deleted = false; M = 1 ]\n",
           "5 rows\n", "-d", store, "execute", "-f", "native",
           "SELECT Name, _Deleted, M FROM Machine WHERE @anytime() ORDER BY Name, _Timestamp");
    /* the deletion is dated after the row it ends, and within the last hour */
    EXPECT(NULL, 0, "[ n = 1 ]\n", "1 row\n", "-d", store, "execute", "-f", "native",
           "SELECT count(*) AS n FROM Machine WHERE _Deleted && _Timestamp > now() - `1h` "
           "&& @anytime()");
    EXPECT(NULL, 0, "[ Id = 1; _Deleted = false ]\n", "1 row\n", "-d", store, "execute", "-f",
           "native", "SELECT Id, _Deleted FROM Job WHERE @anytime()");
}

/* --type names the type synced even when the input has none of it. */
static void sync__type_option_syncs_an_empty_input(void **state)
{
    (void)state;
    declare();
    char p1[1200], p2[1200];
    write_file(p1, sizeof p1, "s1.long", "Name = \"a\"\n\nName = \"b\"\n");
    write_file(p2, sizeof p2, "s2.json", "[]");
    sync_import(p1, "--type=Machine", ", 0 deleted\n");
    sync_import(p2, "--type=Machine", ", 2 deleted\n");
    EXPECT(NULL, 0, "[ n = 2 ]\n", "1 row\n", "-d", store, "execute", "-f", "native",
           "SELECT count(*) AS n FROM Machine WHERE _Deleted && @anytime()");
    EXPECT(NULL, 0, "[ Id = 1; _Deleted = false ]\n", "1 row\n", "-d", store, "execute", "-f",
           "native", "SELECT Id, _Deleted FROM Job WHERE @anytime()");
}

/* A bad record skipped may be a record still there: nothing is deleted. */
static void sync__nothing_deleted_after_a_bad_record(void **state)
{
    (void)state;
    declare();
    char p1[1200], p2[1200];
    write_file(p1, sizeof p1, "s1.classad",
               "[ AdType = \"Machine\"; Name = \"a\" ]\n[ AdType = \"Machine\"; Name = \"b\" ]\n");
    write_file(p2, sizeof p2, "s2.classad",
               "[ AdType = \"Machine\"; Name = \"a\" ]\n[ AdType = \"Machine\"; Nam = \"b\" ]\n");
    sync_import(p1, NULL, ", 0 deleted\n");
    run_result r;
    RUN(r, 3, "-d", store, "import", "--sync", "-k", p2);
    if (!strstr(r.err, "--sync deletes nothing when bad records were skipped"))
        fail_msg("%s", r.err);
    run_free(&r);
    EXPECT(NULL, 0, "[ n = 2 ]\n", "1 row\n", "-d", store, "execute", "-f", "native",
           "SELECT count(*) AS n FROM Machine");
    DO(2, "-d", store, "import", "--sync", "--skip", "1", p2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(sync__backfill_dates_deletions_by_the_snapshot, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(sync__deletions_dated_now, setup, teardown),
        cmocka_unit_test_setup_teardown(sync__type_option_syncs_an_empty_input, setup, teardown),
        cmocka_unit_test_setup_teardown(sync__nothing_deleted_after_a_bad_record, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
