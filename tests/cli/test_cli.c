/*
 * tests/cli/test_cli.c: the adstore program's identifier commands and its
 * usage rules, through the real binary: outputs, exit statuses, messages,
 * stores created on first write with the right modes, state kept across runs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "idgen/idgen.h"
#include "tests/cli/run_check.h"

static char *dir; /* a fresh store directory per test */
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


/* Split stdout into lines (in place); returns the count. */
static size_t lines_of(char *out, char **lines, size_t max)
{
    size_t n = 0;
    for (char *tok = strtok(out, "\n"); tok && n < max; tok = strtok(NULL, "\n"))
        lines[n++] = tok;
    return n;
}

static void cli__no_command_prints_usage_and_exits_2(void **state)
{
    (void)state;
    run_result r;
    const char *argv[] = {NULL};
    assert_int_equal(run_adstore(&r, argv, NULL), 0);
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.out, "Usage: adstore"));
    run_free(&r);
}

static void cli__help_lists_commands_and_each_has_help(void **state)
{
    (void)state;
    run_result r;
    RUN(r, 0, "help");
    assert_non_null(strstr(r.out, "  fluid "));
    assert_non_null(strstr(r.out, "  kid "));
    run_free(&r);
    static const char *const cmds[] = {"id", "fluid", "kid", "eval", "help"};
    for (int i = 0; i < 5; i++) {
        RUN(r, 0, "help", cmds[i]);
        assert_non_null(strstr(r.out, "Usage: adstore"));
        run_free(&r);
    }
    RUN(r, 0, "id", "--help");
    assert_non_null(strstr(r.out, "adstore id parse"));
    run_free(&r);
    RUN(r, 0, "fluid", "encode", "--help");
    assert_non_null(strstr(r.out, "Encodings"));
    run_free(&r);
    RUN(r, 2, "help", "nope");
    assert_string_equal(r.err, "adstore help: no command 'nope'; 'adstore help' lists them\n");
    run_free(&r);
    RUN(r, 2, "frobnicate");
    assert_string_equal(r.err,
                        "adstore: unknown command 'frobnicate'; 'adstore help' lists the "
                        "commands\n");
    run_free(&r);
}

static void cli__id_new_ordered_increases_across_runs(void **state)
{
    (void)state;
    run_result r;
    char *lines[2100];
    ads_id prev = {0, 0};
    uint64_t node = 0;
    for (int run = 0; run < 2; run++) {
        RUN(r, 0, "-d", store, "id", "new", "-n", "1000");
        size_t n = lines_of(r.out, lines, 2100);
        assert_int_equal(n, 1000);
        for (size_t i = 0; i < n; i++) {
            ads_id id;
            ads_ouid_fields f;
            assert_int_equal(ads_id_parse(&id, lines[i], strlen(lines[i]), 1, NULL), 0);
            assert_int_equal(ads_id_kind_of(id), ADS_ID_ORDERED);
            ads_ouid_unpack(&f, id);
            assert_int_equal(f.clockseq, 1);
            assert_false(f.backfill);
            if (node == 0)
                node = f.node;
            assert_int_equal(f.node, node); /* the store's node, kept across runs */
            assert_true(ads_id_cmp(prev, id) < 0);
            prev = id;
        }
        run_free(&r);
    }
}

static void cli__store_is_created_private(void **state)
{
    (void)state;
    run_result r;
    struct stat sb;
    char path[1200];
    RUN(r, 0, "--db", store, "id", "new");
    run_free(&r);
    assert_int_equal(stat(store, &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0700);
    snprintf(path, sizeof path, "%s/data.mdb", store);
    assert_int_equal(stat(path, &sb), 0);
    assert_int_equal(sb.st_mode & 0077, 0);
}

static void cli__id_new_random_needs_no_store(void **state)
{
    (void)state;
    run_result r;
    struct stat sb;
    char *lines[8];
    RUN(r, 0, "-d", store, "id", "new", "random", "-n", "3");
    assert_int_equal(lines_of(r.out, lines, 8), 3);
    for (int i = 0; i < 3; i++) {
        ads_id id;
        assert_int_equal(strlen(lines[i]), 37);
        assert_int_equal(ads_id_parse(&id, lines[i], 37, 1, NULL), 0);
        assert_int_equal(ads_id_kind_of(id), ADS_ID_RANDOM);
    }
    run_free(&r);
    assert_int_not_equal(stat(store, &sb), 0);
}

static void cli__id_new_increment_counts_from_one(void **state)
{
    (void)state;
    run_result r;
    RUN(r, 0, "-d", store, "id", "new", "increment", "-n", "3");
    assert_string_equal(r.out, "#1\n#2\n#3\n");
    run_free(&r);
    RUN(r, 0, "-d", store, "id", "new", "increment");
    assert_string_equal(r.out, "#4\n");
    run_free(&r);
}

static void cli__db_from_environment(void **state)
{
    (void)state;
    run_result r;
    struct stat sb;
    setenv("ADSTORE_DB", store, 1);
    RUN(r, 0, "id", "new", "increment");
    unsetenv("ADSTORE_DB");
    assert_string_equal(r.out, "#1\n");
    run_free(&r);
    assert_int_equal(stat(store, &sb), 0);
}

static void cli__id_new_bad_usage(void **state)
{
    (void)state;
    run_result r;
    RUN(r, 2, "-d", store, "id", "new", "sideways");
    assert_string_equal(r.err, "adstore id new: unknown kind 'sideways'; expected ordered, "
                               "random or increment\nTry 'adstore help id new'.\n");
    run_free(&r);
    RUN(r, 2, "-d", store, "id", "new", "-n", "0");
    assert_non_null(strstr(r.err, "count '0' must be a number from 1 to 10000000"));
    run_free(&r);
    RUN(r, 2, "-d", store, "id", "new", "-n", "12x");
    run_free(&r);
    RUN(r, 2, "-d", store, "id", "new", "-n");
    assert_non_null(strstr(r.err, "option -n needs a value"));
    run_free(&r);
    RUN(r, 2, "-d", store, "id", "new", "--bogus");
    assert_non_null(strstr(r.err, "unknown option '--bogus'"));
    run_free(&r);
    RUN(r, 2, "id", "explode");
    run_free(&r);
}

static void cli__id_parse_several_and_all_or_nothing(void **state)
{
    (void)state;
    run_result r;
    RUN(r, 0, "id", "parse", "1495", "#4ee73065-0021-292c0a0f-59a9-1");
    assert_string_equal(r.out, "kind = increment\n"
                               "hex = 000000000000000000000000000005d7\n"
                               "\n"
                               "kind = ordered\n"
                               "time = 2011-12-13T11:00:53Z\n"
                               "counter = 2\n"
                               "version = 1\n"
                               "backfill = false\n"
                               "node = 292c0a0f59a9\n"
                               "clockseq = 1\n"
                               "hex = 04ee730650000021292c0a0f59a90001\n");
    run_free(&r);
    RUN(r, 1, "id", "parse", "1495", "#zz");
    assert_int_equal(r.out_len, 0);
    assert_string_equal(r.err, "adstore id parse: '#zz': column 2: identifier: unexpected 'z'; "
                               "expected a hex digit or '-'\n");
    run_free(&r);
    RUN(r, 2, "id", "parse");
    run_free(&r);
}

static void cli__fluid_encode_all_encodings(void **state)
{
    (void)state;
    run_result r;
    RUN(r, 0, "fluid", "encode", "6731191091817518");
    assert_string_equal(r.out, "dec = 6731191091817518\n"
                               "hex = 0x17e9fb8df16c2e\n"
                               "dothex = 0017.e9fb.8df1.6c2e\n"
                               "f58 = \xc6\x92uZZybuNNy\n"
                               "f58plain = fuZZybuNNy\n"
                               "words = reform-remote-galileo--heart-package-academy\n"
                               "emoji = \xf0\x9f\x91\xa9\xf0\x9f\x92\x85\xf0\x9f\x93\x93"
                               "\xf0\x9f\x98\xb8\xf0\x9f\x91\x91\xf0\x9f\x9a\x93\n");
    run_free(&r);
    RUN(r, 0, "fluid", "encode", "--to", "f58", "0", "1");
    assert_string_equal(r.out, "\xc6\x92" "1\n\xc6\x92" "2\n");
    run_free(&r);
}

static void cli__fluid_bad_input(void **state)
{
    (void)state;
    run_result r;
    RUN(r, 1, "fluid", "encode", "18446744073709551616");
    assert_int_equal(r.out_len, 0);
    assert_string_equal(r.err, "adstore fluid encode: '18446744073709551616' is not a decimal "
                               "number from 0 to 18446744073709551615\n");
    run_free(&r);
    RUN(r, 1, "fluid", "encode", "-5");
    run_free(&r);
    RUN(r, 2, "fluid", "encode", "--to", "base64", "5");
    assert_non_null(strstr(r.err, "base64"));
    run_free(&r);
    RUN(r, 1, "fluid", "decode", "1", "bogus");
    assert_int_equal(r.out_len, 0);
    assert_non_null(strstr(r.err, "'bogus': column 1: FLUID decimal: "));
    run_free(&r);
    RUN(r, 1, "fluid", "decode", "fjpXCZedGfVR");
    assert_string_equal(r.err, "adstore fluid decode: 'fjpXCZedGfVR': column 12: FLUID F58: "
                               "value over 2^64-1 (18446744073709551615)\n");
    run_free(&r);
    RUN(r, 2, "-d", store, "fluid", "new", "-g", "16384");
    assert_non_null(strstr(r.err, "generator '16384' must be a number from 0 to 16383"));
    run_free(&r);
}

static void cli__fluid_new_never_repeats_across_runs(void **state)
{
    (void)state;
    run_result r;
    char *lines[3000];
    uint64_t prev = 0;
    for (int run = 0; run < 3; run++) {
        RUN(r, 0, "-d", store, "fluid", "new", "-g", "5", "-n", "2500");
        size_t n = lines_of(r.out, lines, 3000);
        assert_int_equal(n, 2500);
        for (size_t i = 0; i < n; i++) {
            uint64_t v, ts;
            uint32_t gen, seq;
            assert_int_equal(ads_fluid_decode(&v, NULL, lines[i], strlen(lines[i]), NULL), 0);
            ads_fluid_unpack(v, &ts, &gen, &seq);
            assert_int_equal(gen, 5);
            assert_true(v > prev);
            prev = v;
        }
        run_free(&r);
    }
    RUN(r, 0, "-d", store, "fluid", "new", "--to", "f58");
    assert_true(strncmp(r.out, "\xc6\x92", 2) == 0);
    run_free(&r);
}

static void cli__kid_new_sorts_as_text_and_decodes(void **state)
{
    (void)state;
    run_result r;
    char *lines[600];
    for (int global = 0; global < 2; global++) {
        if (global)
            RUN(r, 0, "-d", store, "kid", "new", "--global", "-I", "6", "-n", "500");
        else
            RUN(r, 0, "-d", store, "kid", "new", "-n", "500");
        size_t n = lines_of(r.out, lines, 600);
        assert_int_equal(n, 500);
        for (size_t i = 0; i < n; i++) {
            assert_int_equal(strlen(lines[i]), global ? 16 : 11);
            if (i)
                assert_true(strcmp(lines[i - 1], lines[i]) < 0);
        }
        run_result d;
        if (global)
            RUN(d, 0, "kid", "decode", "-I", "6", lines[0]);
        else
            RUN(d, 0, "kid", "decode", lines[0]);
        assert_non_null(strstr(d.out, global ? "kind = global\n" : "kind = local\n"));
        run_free(&d);
        run_free(&r);
    }
}

static void cli__kid_encode_decode_readme_vector(void **state)
{
    (void)state;
    run_result r;
    RUN(r, 0, "kid", "encode", "a=1539", "b=625275", "c=432128", "seq=1", "node=03eb2732");
    assert_string_equal(r.out, ".5.tXVEf8n8vPN.0\n");
    run_free(&r);
    RUN(r, 0, "kid", "decode", ".5.tXVEf8n8vPN.0");
    assert_string_equal(r.out, "kind = global\n"
                               "a = 1539\nb = 625275\nc = 432128\nseq = 1\n"
                               "time = 2018-10-15T17:41:15.432128Z\n"
                               "node = 03eb2732\ninterval = 8\n"
                               "hex = 0060398a03eb27327b698001\n");
    run_free(&r);
    RUN(r, 2, "kid", "encode", "a=1", "b=2", "c=3");
    assert_non_null(strstr(r.err, "missing seq="));
    run_free(&r);
    RUN(r, 2, "kid", "encode", "--global", "a=1", "b=2", "c=3", "seq=1");
    assert_non_null(strstr(r.err, "a global id needs node=HEX"));
    run_free(&r);
    RUN(r, 1, "kid", "encode", "a=1", "b=2000000", "c=3", "seq=1");
    run_free(&r);
    RUN(r, 1, "kid", "decode", ".5.tXVEf8n8vPN");
    assert_int_equal(r.out_len, 0);
    run_free(&r);
    RUN(r, 2, "kid", "decode", "-I", "11", ".5.tXVEf8n8vPN.0");
    run_free(&r);
}

static void cli__eval_prints_values_in_classad_syntax(void **state)
{
    (void)state;
    run_result r;
    RUN(r, 0, "eval", "1 + 2 * 3");
    assert_string_equal(r.out, "7\n");
    run_free(&r);
    RUN(r, 0, "eval", "-c", "[Memory = 2048; Arch = \"X86_64\"]",
        "Memory > 1024 && Arch == \"x86_64\"");
    assert_string_equal(r.out, "true\n");
    run_free(&r);
    RUN(r, 0, "eval", "{1, 2}[5]");
    assert_string_equal(r.out, "error\n");
    run_free(&r);
    RUN(r, 0, "eval", "[a = 1; b = {1.5, \"x\", `1h30m`, #1495}]");
    assert_string_equal(r.out, "[ a = 1; b = { 1.5, \"x\", `1h30m`, #1495 } ]\n");
    run_free(&r);
    RUN(r, 0, "eval", "-3 - 2");
    assert_string_equal(r.out, "-5\n");
    run_free(&r);
    RUN(r, 0, "eval", "--context=[x = [a = 3; b = a * 2]]", "x.b");
    assert_string_equal(r.out, "6\n");
    run_free(&r);
}

static void cli__eval_syntax_errors_give_line_and_column(void **state)
{
    (void)state;
    run_result r;
    RUN(r, 1, "eval", "1 +");
    assert_int_equal(r.out_len, 0);
    assert_string_equal(r.err, "adstore eval: expression: line 1, column 4: expected an "
                               "expression, found end of input\n");
    run_free(&r);
    RUN(r, 1, "eval", "(1 +\n  2))");
    assert_string_equal(r.err, "adstore eval: expression: line 2, column 5: expected an "
                               "operator or the end of the expression, found ')'\n");
    run_free(&r);
    RUN(r, 1, "eval", "-c", "[a = ]", "a");
    assert_string_equal(r.err, "adstore eval: record (-c): line 1, column 6: expected an "
                               "expression, found ']'\n");
    run_free(&r);
    RUN(r, 1, "eval", "\"abc");
    assert_string_equal(r.err, "adstore eval: expression: line 1, column 1: unterminated "
                               "string\n");
    run_free(&r);
    RUN(r, 2, "eval");
    run_free(&r);
    RUN(r, 2, "eval", "1", "2");
    run_free(&r);
}

/* Every command that writes to stdout fails (exit 1, a message) when what
 * it writes cannot be written, instead of exiting 0 with nothing shown. */
static void cli__output_that_cannot_be_written_fails(void **state)
{
    (void)state;
    static const char *const cmds[][6] = {
        {"id new", "id", "new", NULL},
        {"id new", "id", "new", "random", NULL},
        {"id new", "id", "new", "increment", "-n", "3"},
        {"id parse", "id", "parse", "#1495", NULL},
        {"eval", "eval", "1 + 2", NULL},
        {"fluid new", "fluid", "new", NULL},
        {"fluid encode", "fluid", "encode", "12345", NULL},
        {"kid new", "kid", "new", NULL},
        {"stats", "stats", NULL},
        {"execute", "execute", "SELECT ForType FROM Type", NULL},
        {"", "help", NULL},
        {"", "--version", NULL},
    };
    run_result r;
    RUN(r, 0, "-d", store, "execute", "STORE [ AdType = \"Type\"; ForType = \"M\" ]");
    run_free(&r);
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        const char *argv[10] = {"-d", store};
        size_t n = 2;
        for (size_t k = 1; k < 6 && cmds[i][k]; k++)
            argv[n++] = cmds[i][k];
        argv[n] = NULL;
        assert_int_equal(run_adstore_env(&r, argv, NULL, "/dev/full", NULL), 0);
        char want[200];
        snprintf(want, sizeof want, "adstore%s%s: cannot write output: No space left on device\n",
                 cmds[i][0][0] ? " " : "", cmds[i][0]);
        if (strcmp(cmds[i][0], "execute") == 0) /* the statement's writer says it first */
            snprintf(want, sizeof want, "adstore execute: writing the output failed\n");
        if (r.status != 1 || !strstr(r.err, want))
            fail_msg("%s: exit %d, stderr '%s'", argv[2], r.status, r.err);
        run_free(&r);
    }
    /* nothing lost when there was nothing to write */
    const char *quiet[] = {"-d", store, "verify", NULL};
    assert_int_equal(run_adstore_env(&r, quiet, NULL, "/dev/full", NULL), 0);
    assert_int_equal(r.status, 0);
    run_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(cli__no_command_prints_usage_and_exits_2, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(cli__help_lists_commands_and_each_has_help, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(cli__id_new_ordered_increases_across_runs, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(cli__store_is_created_private, setup, teardown),
        cmocka_unit_test_setup_teardown(cli__id_new_random_needs_no_store, setup, teardown),
        cmocka_unit_test_setup_teardown(cli__id_new_increment_counts_from_one, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(cli__db_from_environment, setup, teardown),
        cmocka_unit_test_setup_teardown(cli__id_new_bad_usage, setup, teardown),
        cmocka_unit_test_setup_teardown(cli__id_parse_several_and_all_or_nothing, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(cli__fluid_encode_all_encodings, setup, teardown),
        cmocka_unit_test_setup_teardown(cli__fluid_bad_input, setup, teardown),
        cmocka_unit_test_setup_teardown(cli__fluid_new_never_repeats_across_runs, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(cli__kid_new_sorts_as_text_and_decodes, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(cli__kid_encode_decode_readme_vector, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(cli__eval_prints_values_in_classad_syntax, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(cli__output_that_cannot_be_written_fails, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(cli__eval_syntax_errors_give_line_and_column, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
