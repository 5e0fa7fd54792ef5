/*
 * tests/cli/test_vectors_ids.c: every line of shared/spec/vectors/ids.tsv,
 * run through the real adstore program (rules in the vectors' README). A
 * failing line is reported with its file, line number, input, expected and
 * actual output; the counts per kind are printed at the end.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tests/cli/run.h"

#define MAX_FIELDS 8

/*
 * Vectors this project judges wrong as stated (docs/identifiers.md,
 * "Conformance vectors"). Each is still run twice: as written it must give
 * the answer RFC 19's decoding rules give, and decoded as the one encoding
 * its source tested (--from) it must give the vector's expectation.
 */
typedef struct disputed {
    const char *kind, *input;
    const char *by_shape; /* what `fluid decode INPUT` prints */
    const char *from;     /* the decoder the source tested */
    const char *why;
} disputed;

static const disputed disputes[] = {
    {"fluid-decode", "1234", "1234", "f58",
     "flux-core's test_f58 tests the F58-only decoder; by shape 1234 is decimal, as the same "
     "file expects of 1888, 3364 and 4369"},
    {"fluid-decode", "\xc6\x92" "1234", "3483", "emoji",
     "flux-core's basemoji test_errors tests the emoji-only decoder; by shape it is F58 = 3483"},
};
static int ndisputed_seen;

typedef struct tally {
    const char *kind;
    int passed, failed;
} tally;

static tally tallies[16];
static int ntallies;

static tally *tally_of(const char *kind)
{
    size_t n = strcspn(kind, ":");
    for (int i = 0; i < ntallies; i++)
        if (strlen(tallies[i].kind) == n && strncmp(tallies[i].kind, kind, n) == 0)
            return &tallies[i];
    tallies[ntallies].kind = strndup(kind, n);
    return &tallies[ntallies++];
}

/* Split line at tabs into fields (in place). */
static int split_tabs(char *line, char **f, int max)
{
    int n = 0;
    f[n++] = line;
    for (char *p = line; *p && n < max; p++)
        if (*p == '\t') {
            *p = '\0';
            f[n++] = p + 1;
        }
    return n;
}

/* "name = value" lines -> "name=value;name=value" */
static void pairs_of(const char *out, char *dst, size_t cap)
{
    size_t n = 0;
    dst[0] = '\0';
    while (*out) {
        const char *eol = strchr(out, '\n');
        size_t len = eol ? (size_t)(eol - out) : strlen(out);
        const char *sep = memmem(out, len, " = ", 3);
        if (sep && n + len < cap) {
            if (n)
                dst[n++] = ';';
            memcpy(dst + n, out, (size_t)(sep - out));
            n += (size_t)(sep - out);
            dst[n++] = '=';
            size_t vlen = len - (size_t)(sep + 3 - out);
            memcpy(dst + n, sep + 3, vlen);
            n += vlen;
            dst[n] = '\0';
        }
        out += len + (eol ? 1 : 0);
    }
}

/* Build the argv of a kid-encode64 vector: "global;I=8;A=..;B=..;C=..;node=..;seq=1". */
static int kid_args(char *spec, const char **argv, char bufs[][64])
{
    int n = 0, b = 0;
    argv[n++] = "kid";
    argv[n++] = "encode";
    for (char *tok = strtok(spec, ";"); tok; tok = strtok(NULL, ";")) {
        if (strcmp(tok, "global") == 0) {
            argv[n++] = "--global";
        } else if (strcmp(tok, "local") == 0) {
            continue;
        } else if (strncmp(tok, "I=", 2) == 0) {
            argv[n++] = "-I";
            argv[n++] = tok + 2;
        } else {
            /* A=, B=, C= are a=, b=, c= on the command line */
            snprintf(bufs[b], 64, "%s", tok);
            if (bufs[b][1] == '=')
                bufs[b][0] = (char)(bufs[b][0] | 0x20);
            argv[n++] = bufs[b++];
        }
    }
    argv[n] = NULL;
    return n;
}

/* Run a disputed vector both ways; returns true if both give what is documented. */
static bool check_disputed(const char *path, int lineno, const disputed *v)
{
    run_result r;
    const char *as_written[] = {"fluid", "decode", v->input, NULL};
    const char *as_source[] = {"fluid", "decode", "--from", v->from, v->input, NULL};
    bool ok;
    char want[64];

    assert_int_equal(run_adstore(&r, as_written, NULL), 0);
    snprintf(want, sizeof want, "%s\n", v->by_shape);
    ok = r.status == 0 && strcmp(r.out, want) == 0;
    run_free(&r);
    assert_int_equal(run_adstore(&r, as_source, NULL), 0);
    ok = ok && r.status == 1 && r.out_len == 0 && r.err_len > 0;
    run_free(&r);
    printf("DISPUTED %s:%d: %s '%s' expects ERR; by shape it decodes to %s, and with --from %s "
           "it is refused: %s (%s)\n",
           path, lineno, v->kind, v->input, v->by_shape, v->from, ok ? "as documented" : "NOT as documented",
           v->why);
    return ok;
}

static void check_line(const char *path, int lineno, char **f)
{
    const char *kind = f[0], *input = f[1], *expected = f[2];
    const char *argv[16];
    char bufs[8][64];
    char spec[256];
    char to[64];
    run_result r;
    bool want_err = strcmp(expected, "ERR") == 0;
    bool ok;
    char actual[4096];

    for (size_t i = 0; i < sizeof disputes / sizeof disputes[0]; i++) {
        if (strcmp(kind, disputes[i].kind) == 0 && strcmp(input, disputes[i].input) == 0 &&
            want_err) {
            ndisputed_seen++;
            tally *t = tally_of("disputed");
            if (check_disputed(path, lineno, &disputes[i]))
                t->passed++;
            else
                t->failed++;
            return;
        }
    }

    if (strncmp(kind, "fluid-encode:", 13) == 0) {
        snprintf(to, sizeof to, "%s", kind + 13);
        const char *a[] = {"fluid", "encode", "--to", to, input, NULL};
        memcpy(argv, a, sizeof a);
    } else if (strcmp(kind, "fluid-decode") == 0) {
        const char *a[] = {"fluid", "decode", input, NULL};
        memcpy(argv, a, sizeof a);
    } else if (strcmp(kind, "id-parse") == 0) {
        const char *a[] = {"id", "parse", input, NULL};
        memcpy(argv, a, sizeof a);
    } else if (strcmp(kind, "kid-encode64") == 0) {
        snprintf(spec, sizeof spec, "%s", input);
        kid_args(spec, argv, bufs);
    } else {
        fail_msg("%s:%d: unknown vector kind '%s'", path, lineno, kind);
        return;
    }
    assert_int_equal(run_adstore(&r, argv, NULL), 0);

    if (want_err) {
        ok = r.status == 1 && r.out_len == 0 && r.err_len > 0;
        snprintf(actual, sizeof actual, "status %d, stdout '%s', stderr '%s'", r.status, r.out,
                 r.err);
    } else if (strcmp(kind, "id-parse") == 0) {
        pairs_of(r.out, actual, sizeof actual);
        ok = r.status == 0 && strcmp(actual, expected) == 0;
    } else {
        size_t n = strlen(expected);
        ok = r.status == 0 && r.out_len == n + 1 && strncmp(r.out, expected, n) == 0 &&
             r.out[n] == '\n';
        snprintf(actual, sizeof actual, "status %d, stdout '%s', stderr '%s'", r.status, r.out,
                 r.err);
    }
    tally *t = tally_of(kind);
    if (ok) {
        t->passed++;
    } else {
        t->failed++;
        printf("FAIL %s:%d: %s '%s': expected '%s', got %s\n", path, lineno, kind, input,
               expected, actual);
    }
    run_free(&r);
}

static void vectors__ids_tsv_every_line_passes(void **state)
{
    (void)state;
    char path[1024];
    snprintf(path, sizeof path, "%s/ids.tsv", ADS_VECTORS_DIR);
    FILE *fp = fopen(path, "r");
    if (!fp)
        fail_msg("cannot open %s", path);
    char line[4096];
    int lineno = 0, failed = 0, total = 0;
    while (fgets(line, sizeof line, fp)) {
        lineno++;
        line[strcspn(line, "\r\n")] = '\0';
        if (lineno == 1 || line[0] == '\0')
            continue; /* header */
        char *f[MAX_FIELDS];
        int n = split_tabs(line, f, MAX_FIELDS);
        if (n < 3)
            fail_msg("%s:%d: fewer than 3 fields", path, lineno);
        check_line(path, lineno, f);
        total++;
    }
    fclose(fp);
    for (int i = 0; i < ntallies; i++) {
        printf("ids.tsv %-14s %3d passed, %d failed\n", tallies[i].kind, tallies[i].passed,
               tallies[i].failed);
        failed += tallies[i].failed;
    }
    printf("ids.tsv: %d vectors: %d passed as written, %d disputed (run as documented), "
           "%d failed\n",
           total, total - failed - ndisputed_seen, ndisputed_seen, failed);
    assert_true(total > 200);
    assert_int_equal(failed, 0);
    /* every dispute must match a line, so a corrected vector file is noticed */
    assert_int_equal(ndisputed_seen, (int)(sizeof disputes / sizeof disputes[0]));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(vectors__ids_tsv_every_line_passes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
