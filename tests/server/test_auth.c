/*
 * tests/server/test_auth.c: bearer tokens (server/auth.c): a token made by
 * ads_server_add_token is found with its role and name, the file holds its
 * SHA-256 only, other tokens are not found, and bad files and names are
 * refused with messages naming the file and line.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "server/server_int.h"

typedef struct fixture {
    char dir[64];
    char path[128];
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    snprintf(f->dir, sizeof f->dir, "/tmp/test_auth.XXXXXX");
    if (mkdtemp(f->dir) == NULL)
        return -1;
    snprintf(f->path, sizeof f->path, "%s/tokens", f->dir);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    unlink(f->path);
    rmdir(f->dir);
    free(f);
    return 0;
}

static char *slurp(const char *path)
{
    static char buf[4096];
    FILE *fp = fopen(path, "r");
    size_t n = fp != NULL ? fread(buf, 1, sizeof buf - 1, fp) : 0;
    if (fp != NULL)
        fclose(fp);
    buf[n] = '\0';
    return buf;
}

static void auth__added_tokens_are_found_with_their_roles(void **state)
{
    fixture *f = *state;
    char w[ADS_TOKEN_TEXT], r[ADS_TOKEN_TEXT];
    ads_error err;
    assert_int_equal(ads_server_add_token(w, f->path, "writer", ADS_ROLE_WRITE, &err), 0);
    assert_int_equal(ads_server_add_token(r, f->path, "reader", ADS_ROLE_READ, &err), 0);
    assert_int_equal(strlen(w), ADS_TOKEN_TEXT - 1);
    assert_memory_equal(w, "ads_", 4);
    assert_string_not_equal(w, r);
    token_set t;
    assert_int_equal(tokens_load(&t, f->path, &err), 0);
    assert_int_equal(t.n, 2);
    const token_entry *e = tokens_find(&t, w, strlen(w));
    assert_non_null(e);
    assert_string_equal(e->name, "writer");
    assert_int_equal(e->role, ADS_ROLE_WRITE);
    e = tokens_find(&t, r, strlen(r));
    assert_non_null(e);
    assert_string_equal(e->name, "reader");
    assert_int_equal(e->role, ADS_ROLE_READ);
    tokens_free(&t);
}

static void auth__other_tokens_are_not_found(void **state)
{
    fixture *f = *state;
    char w[ADS_TOKEN_TEXT];
    ads_error err;
    assert_int_equal(ads_server_add_token(w, f->path, "writer", ADS_ROLE_WRITE, &err), 0);
    token_set t;
    assert_int_equal(tokens_load(&t, f->path, &err), 0);
    assert_null(tokens_find(&t, w, strlen(w) - 1)); /* a prefix */
    w[10] = w[10] == 'a' ? 'b' : 'a';
    assert_null(tokens_find(&t, w, strlen(w)));
    assert_null(tokens_find(&t, "", 0));
    tokens_free(&t);
}

static void auth__the_file_holds_hashes_only_with_mode_0600(void **state)
{
    fixture *f = *state;
    char w[ADS_TOKEN_TEXT];
    ads_error err;
    assert_int_equal(ads_server_add_token(w, f->path, "writer", ADS_ROLE_WRITE, &err), 0);
    const char *text = slurp(f->path);
    assert_null(strstr(text, w + 4));
    assert_int_equal(strncmp(text, "writer write ", 13), 0);
    assert_int_equal(strlen(text), 13 + 64 + 1);
    struct stat st;
    assert_int_equal(stat(f->path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
}

static void auth__a_name_is_used_once(void **state)
{
    fixture *f = *state;
    char w[ADS_TOKEN_TEXT];
    ads_error err;
    assert_int_equal(ads_server_add_token(w, f->path, "x", ADS_ROLE_READ, &err), 0);
    assert_int_equal(ads_server_add_token(w, f->path, "x", ADS_ROLE_WRITE, &err), ADS_EINVAL);
    char want[256];
    snprintf(want, sizeof want, "%s already has a token named 'x'", f->path);
    assert_string_equal(err.message, want);
}

static void auth__bad_names_are_refused(void **state)
{
    fixture *f = *state;
    char w[ADS_TOKEN_TEXT];
    ads_error err;
    assert_int_equal(ads_server_add_token(w, f->path, "two words", ADS_ROLE_READ, &err),
                     ADS_EINVAL);
    assert_string_equal(err.message, "token name 'two words' must be 1 to 63 bytes without "
                                     "spaces, '#' or control characters");
    assert_int_equal(ads_server_add_token(w, f->path, "", ADS_ROLE_READ, &err), ADS_EINVAL);
    assert_int_equal(ads_server_add_token(w, f->path, "a", ADS_ROLE_NONE, &err), ADS_EINVAL);
    assert_int_equal(access(f->path, F_OK), -1); /* nothing written */
}

static void auth__bad_lines_name_file_and_line(void **state)
{
    fixture *f = *state;
    static const char *const bad[] = {
        "a read\n",                 /* no hash */
        "a admin " "0000000000000000000000000000000000000000000000000000000000000000\n",
        "a read 00\n",              /* short hash */
        "a read " "000000000000000000000000000000000000000000000000000000000000000g\n",
        "a read " "0000000000000000000000000000000000000000000000000000000000000000 x\n",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        FILE *fp = fopen(f->path, "w");
        fprintf(fp, "# a comment\n\n%s", bad[i]);
        fclose(fp);
        token_set t;
        ads_error err;
        assert_int_equal(tokens_load(&t, f->path, &err), ADS_EINVAL);
        char want[256];
        snprintf(want, sizeof want, "%s:3: expected 'NAME read|write SHA256-HEX'", f->path);
        assert_string_equal(err.message, want);
        assert_null(t.v);
    }
}

static void auth__a_file_with_a_name_or_a_token_twice_is_refused(void **state)
{
    fixture *f = *state;
    static const char *const files[][2] = {
        {"a read 0000000000000000000000000000000000000000000000000000000000000000\n"
         "a write 1111111111111111111111111111111111111111111111111111111111111111\n",
         ":2: a second token named 'a'"},
        {"a read 0000000000000000000000000000000000000000000000000000000000000000\n"
         "b write 0000000000000000000000000000000000000000000000000000000000000000\n",
         ":2: the token of 'a' again (as 'b')"},
    };
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        FILE *fp = fopen(f->path, "w");
        fputs(files[i][0], fp);
        fclose(fp);
        token_set t;
        ads_error err;
        assert_int_equal(tokens_load(&t, f->path, &err), ADS_EINVAL);
        char want[512];
        snprintf(want, sizeof want, "%s%s", f->path, files[i][1]);
        assert_string_equal(err.message, want);
        assert_null(t.v);
    }
}

static void auth__a_missing_file_is_an_error(void **state)
{
    fixture *f = *state;
    token_set t;
    ads_error err;
    assert_int_equal(tokens_load(&t, f->path, &err), ADS_EIO);
    assert_non_null(strstr(err.message, "cannot open tokens file"));
    assert_non_null(strstr(err.message, "No such file or directory"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(auth__added_tokens_are_found_with_their_roles, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(auth__other_tokens_are_not_found, setup, teardown),
        cmocka_unit_test_setup_teardown(auth__the_file_holds_hashes_only_with_mode_0600, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(auth__a_name_is_used_once, setup, teardown),
        cmocka_unit_test_setup_teardown(auth__bad_names_are_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(auth__bad_lines_name_file_and_line, setup, teardown),
        cmocka_unit_test_setup_teardown(auth__a_file_with_a_name_or_a_token_twice_is_refused,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(auth__a_missing_file_is_an_error, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
