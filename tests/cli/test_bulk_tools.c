/*
 * tests/cli/test_bulk_tools.c: dump, restore and backup through the real
 * program, where the engine tests cannot reach: a corrupt row refused by
 * dump and backup (and salvaged with its own exit status), and each command
 * killed with SIGKILL at its most delicate point (the work done, not yet
 * renamed into place, held there by the ADSTORE_TEST_STALL hook) leaving its
 * target absent, with the next run sweeping what it left.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <lmdb.h>

#include "tests/cli/run_check.h"

extern char **environ;

static char *dir; /* a fresh directory per test */
static char store[1100];

static int setup(void **state)
{
    (void)state;
    return cli_dir_new(&dir, store, sizeof store, "s.db");
}

static int teardown(void **state)
{
    (void)state;
    cli_dir_free(&dir);
    return 0;
}

static const char *path_in(const char *name)
{
    static char p[4][1200];
    static int k;
    k = (k + 1) % 4;
    snprintf(p[k], sizeof p[k], "%s/%s", dir, name);
    return p[k];
}


static bool exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0;
}

/* How many entries of dir start with prefix. */
static int count_prefixed(const char *prefix)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    struct dirent *e;
    int n = 0;
    while ((e = readdir(d)))
        n += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
    closedir(d);
    return n;
}

/* A store with a type and three machines. */
static void make_store(void)
{
    run_result r;
    RUN(r, 0, "-d", store, "execute",
        "STORE [ AdType = \"Type\"; ForType = \"M\"; KeyAttributes = { \"Name\" } ]");
    run_free(&r);
    RUN(r, 0, "-d", store, "execute",
        "STORE [ AdType = \"M\"; Name = \"a\"; x = 1 ], [ AdType = \"M\"; Name = \"b\"; x = 2 ], "
        "[ AdType = \"M\"; Name = \"c\"; x = 3 ]");
    run_free(&r);
}

/* Flip a bit near the end of the latest row of M "b" (the 6th key: the Type
 * record, three Attribute records, then a, b, c). */
static void corrupt_b(void)
{
    MDB_env *env;
    MDB_txn *txn;
    MDB_dbi dbi;
    MDB_cursor *c;
    MDB_val k, v;
    assert_int_equal(mdb_env_create(&env), 0);
    assert_int_equal(mdb_env_set_maxdbs(env, 8), 0);
    assert_int_equal(mdb_env_open(env, store, 0, 0600), 0);
    assert_int_equal(mdb_txn_begin(env, NULL, 0, &txn), 0);
    assert_int_equal(mdb_dbi_open(txn, "latest", 0, &dbi), 0);
    assert_int_equal(mdb_cursor_open(txn, dbi, &c), 0);
    int rc = mdb_cursor_get(c, &k, &v, MDB_FIRST);
    for (int i = 0; i < 5 && rc == 0; i++)
        rc = mdb_cursor_get(c, &k, &v, MDB_NEXT);
    assert_int_equal(rc, 0);
    unsigned char *copy = malloc(v.mv_size);
    memcpy(copy, v.mv_data, v.mv_size);
    copy[v.mv_size - 2] ^= 0x10;
    MDB_val nv = {v.mv_size, copy}, kc = k;
    mdb_cursor_close(c);
    assert_int_equal(mdb_put(txn, dbi, &kc, &nv, 0), 0);
    free(copy);
    assert_int_equal(mdb_txn_commit(txn), 0);
    mdb_env_close(env);
}

#define BAD_B "type M, key { \"b\" }: latest row: row checksum mismatch (the row is corrupt)"

static void dump__refuses_a_corrupt_row_and_writes_no_file(void **state)
{
    (void)state;
    make_store();
    corrupt_b();
    run_result r;
    const char *out = path_in("d.dump");
    RUN(r, 1, "-d", store, "dump", "-o", out);
    assert_string_equal(r.err, "adstore dump: " BAD_B "; no dump written ('adstore verify' "
                               "lists every problem; 'adstore dump --salvage' dumps the rest)\n");
    run_free(&r);
    assert_false(exists(out));
    assert_int_equal(count_prefixed("d.dump"), 0);
    /* text too, and to standard output */
    RUN(r, 1, "-d", store, "dump", "--format", "text");
    assert_non_null(strstr(r.err, BAD_B "; the output is not a dump"));
    run_free(&r);
}

static void dump__salvage_skips_lists_and_exits_3(void **state)
{
    (void)state;
    make_store();
    corrupt_b();
    run_result r;
    const char *out = path_in("s.dump");
    RUN(r, 3, "-d", store, "dump", "--salvage", "-o", out);
    assert_non_null(strstr(r.err, "adstore dump: skipped " BAD_B "\n"));
    assert_non_null(strstr(r.err, ", 1 bad row skipped (salvaged: not a whole store)\n"));
    run_free(&r);
    /* what was salvaged restores, without b */
    const char *copy = path_in("copy.db");
    RUN(r, 0, "-d", copy, "restore", out);
    run_free(&r);
    RUN(r, 0, "-d", copy, "execute", "SELECT Name FROM M");
    assert_string_equal(r.out, "Name = \"a\"\n\nName = \"c\"\n\n");
    run_free(&r);
    /* a sound store salvages to a whole dump: exit 0 */
    RUN(r, 0, "-d", copy, "dump", "--salvage", "-o", path_in("whole.dump"));
    run_free(&r);
}

static void backup__refuses_a_store_that_fails_its_check(void **state)
{
    (void)state;
    make_store();
    corrupt_b();
    run_result r;
    const char *to = path_in("b.db");
    RUN(r, 1, "-d", store, "backup", to);
    assert_string_equal(r.err, "adstore backup: the copy fails its check with 2 problems (the "
                               "first: " BAD_B "); nothing is copied: 'adstore verify' lists "
                               "them in the store\n");
    run_free(&r);
    assert_false(exists(to));
    assert_int_equal(count_prefixed("b.db"), 0);
}

/*
 * Start the program with ADSTORE_TEST_STALL=last, wait until it says it has
 * stalled (the work done, not yet in place), and kill it with SIGKILL.
 */
static void kill_at_stall(const char *const *args)
{
    char errpath[1200];
    snprintf(errpath, sizeof errpath, "%s/stall.err", dir);
    char *argv[16];
    int n = 0;
    argv[n++] = (char *)ADS_PROGRAM;
    for (; args[n - 1]; n++)
        argv[n] = (char *)args[n - 1];
    argv[n] = NULL;
    size_t ne = 0;
    while (environ[ne])
        ne++;
    char **env = calloc(ne + 2, sizeof *env);
    assert_non_null(env);
    memcpy(env, environ, ne * sizeof *env);
    env[ne] = "ADSTORE_TEST_STALL=last";
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, errpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    pid_t pid;
    assert_int_equal(posix_spawn(&pid, ADS_PROGRAM, &fa, NULL, argv, env), 0);
    posix_spawn_file_actions_destroy(&fa);
    free(env);
    /* wait for the word, or for the program to end without it (a failure) */
    bool stalled = false;
    int status = 0;
    while (!stalled) {
        char buf[512] = "";
        FILE *f = fopen(errpath, "r");
        if (f) {
            size_t k = fread(buf, 1, sizeof buf - 1, f);
            buf[k] = '\0';
            fclose(f);
        }
        stalled = strstr(buf, "stalled (ADSTORE_TEST_STALL)") != NULL;
        if (!stalled && waitpid(pid, &status, WNOHANG) == pid)
            fail_msg("%s ended (status %d) before it stalled: %s", args[2], status, buf);
        if (!stalled)
            usleep(10000);
    }
    assert_int_equal(kill(pid, SIGKILL), 0);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status));
}

static void killed__backup_leaves_no_target_and_the_next_one_sweeps(void **state)
{
    (void)state;
    make_store();
    const char *to = path_in("b.db");
    kill_at_stall((const char *const[]){"-d", store, "backup", to, NULL});
    assert_false(exists(to));
    assert_int_equal(count_prefixed("b.db.backup-"), 1);
    run_result r;
    RUN(r, 0, "-d", store, "backup", to);
    run_free(&r);
    assert_int_equal(count_prefixed("b.db.backup-"), 0);
    RUN(r, 0, "-d", to, "verify");
    run_free(&r);
}

static void killed__restore_leaves_no_target_and_the_next_one_sweeps(void **state)
{
    (void)state;
    make_store();
    const char *d = path_in("d.dump"), *to = path_in("r.db");
    run_result r;
    RUN(r, 0, "-d", store, "dump", "-o", d);
    run_free(&r);
    kill_at_stall((const char *const[]){"-d", to, "restore", d, NULL});
    assert_false(exists(to));
    assert_int_equal(count_prefixed("r.db.restoring-"), 1);
    RUN(r, 0, "-d", to, "restore", d);
    run_free(&r);
    assert_int_equal(count_prefixed("r.db.restoring-"), 0);
    RUN(r, 0, "-d", to, "verify");
    assert_non_null(strstr(r.err, " 0 problems"));
    run_free(&r);
}

static void killed__dump_leaves_no_file_and_the_next_one_sweeps(void **state)
{
    (void)state;
    make_store();
    const char *d = path_in("d.dump");
    kill_at_stall((const char *const[]){"-d", store, "dump", "-o", d, NULL});
    assert_false(exists(d));
    assert_int_equal(count_prefixed("d.dump.partial-"), 1);
    run_result r;
    RUN(r, 0, "-d", store, "dump", "-o", d);
    run_free(&r);
    assert_int_equal(count_prefixed("d.dump.partial-"), 0);
    RUN(r, 0, "-d", path_in("copy.db"), "restore", d);
    run_free(&r);
}

static void verify__output_that_cannot_be_written_fails(void **state)
{
    (void)state;
    make_store();
    corrupt_b();
    run_result r;
    const char *argv[] = {"-d", store, "verify", NULL};
    assert_int_equal(run_adstore_env(&r, argv, NULL, "/dev/full", NULL), 0);
    assert_int_equal(r.status, 1);
    /* verify flushes after each problem: the cause of that failure is not
     * known at the end */
    assert_non_null(strstr(r.err, "adstore verify: cannot write output: "));
    run_free(&r);
    /* a dump to standard output too */
    const char *dump[] = {"-d", store, "dump", "--salvage", NULL};
    assert_int_equal(run_adstore_env(&r, dump, NULL, "/dev/full", NULL), 0);
    assert_int_equal(r.status, 1);
    assert_non_null(strstr(r.err, "adstore dump: writing the dump: No space left on device\n"));
    run_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(dump__refuses_a_corrupt_row_and_writes_no_file, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(dump__salvage_skips_lists_and_exits_3, setup, teardown),
        cmocka_unit_test_setup_teardown(verify__output_that_cannot_be_written_fails, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(backup__refuses_a_store_that_fails_its_check, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(killed__backup_leaves_no_target_and_the_next_one_sweeps,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(killed__restore_leaves_no_target_and_the_next_one_sweeps,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(killed__dump_leaves_no_file_and_the_next_one_sweeps,
                                        setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
