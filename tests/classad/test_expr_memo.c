/*
 * tests/classad/test_expr_memo.c: the memos of recurring expressions
 * (classad/expr_memo.c) give exactly what a parse, a fold and an unparse
 * give, for every kind of node, for texts and trees that differ from a
 * remembered one in a single detail, past the memo's size and node limits,
 * and after the memo is gone (a record owns its trees). Through the JSON
 * reader and the MessagePack writer, rows and records are the same as
 * without a memo.
 *
 * The suite is built twice: test_expr_memo against the library, and
 * test_expr_memo_collide with its own copy of expr_memo.c built with
 * ADS_EXPR_MEMO_TEST_HASH, where every text and every tree has the same
 * hash, so that each answer rests on the comparisons behind a hit.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "classad/classad.h"
#include "classad/expr_memo.h"
#include "classad/formats.h"
#include "classad/msgpack.h"

#include "arena_fixture.h"

/* Every kind of node, literal and spelling the memo keeps, and some it does not. */
static const char *const corpus[] = {
    "(TARGET.Arch == \"X86_64\") && (TARGET.OpSys == \"LINUX\") && (TARGET.Memory >= RequestMemory)",
    "START && (WithinResourceLimits)",
    "Memory > 1024 && Arch == \"X86_64\" && (Disk >= 100000 || Owner == \"alice\")",
    "x",
    "X",
    ".x",
    "'a b'",
    "'x'",
    "my.Memory",
    "MY.memory",
    "a.b.c",
    "a[0]",
    "a[\"k\"]",
    "(3).y",
    "-x",
    "- 0",
    "-(1)",
    "!done",
    "~mask",
    "+x",
    "a ? b : c",
    "a ?: b",
    "a is undefined",
    "a isnt error",
    "a =?= b",
    "a =!= b",
    "a === b",
    "x in { 1, 2 }",
    "{ x, y + 1 }",
    "{ }",
    "f()",
    "strcat(\"a\", b, 3)",
    "StrCat(\"a\", b, 3)",
    "ifThenElse(x > 1, \"big\", \"small\")",
    "regexp(\"^slot[0-9]+@\", Name)",
    "member(\"u1\", { \"u1\", \"u2\" })",
    "1 + 2 * 3 - 4 / 5 % 6",
    "(1 + 2) * 3",
    "1 << 2 >> 3 >>> 4",
    "a & b | c ^ d",
    "x == 1.0",
    "x == 1",
    "x == 0.0",
    "x == -0.0",
    "x == 1e300",
    "x == 0x10",
    "x == \"tab\\tnl\\nquote\\\"back\\\\\"",
    "x == \"\"",
    "x == true || y == false",
    "x == undefined || y == error",
    "x == `2026-11-27T07:00:00Z`",
    "x == `1d2h3m4s`",
    "RequestMemory * 1.5 + (ImageSize / 1024)",
    "1 + 2",
    "42",
    "\"just a string\"",
    "{ 1, 2, 3 }",
    "[ a = 1; b = x + 1 ]",
    "real(\"NaN\")",
    "blob(\"aGVsbG8=\")",
};

/* Texts that fail to parse: the memo passes the same error on. */
static const char *const bad[] = {"a +", "(x", "x ==== y", "f(", "\"open", "1 +* 2", ""};

static const char *unparsed(const ads_expr *e)
{
    static ads_buf b = ADS_BUF_INIT;
    ads_buf_clear(&b);
    ads_expr_unparse(&b, e);
    assert_false(b.failed);
    return ads_buf_cstr(&b);
}

/* The plain parse and fold of text, unparsed and encoded. */
static void plain(const char *text, ads_buf *t, ads_buf *bytes)
{
    const ads_expr *e, *f;
    ads_error err;
    assert_int_equal(ads_expr_parse(&e, arena, text, strlen(text), &err), 0);
    assert_int_equal(ads_expr_fold(&f, arena, e, &err), 0);
    ads_buf_clear(t);
    ads_expr_unparse(t, f);
    ads_buf_clear(bytes);
    assert_int_equal(ads_msgpack_encode_expr(bytes, f, &err), 0);
}

static void same_as_plain(const ads_expr *e, const char *text)
{
    ads_buf t = ADS_BUF_INIT, bytes = ADS_BUF_INIT, mine = ADS_BUF_INIT;
    ads_error err;
    plain(text, &t, &bytes);
    assert_string_equal(unparsed(e), ads_buf_cstr(&t));
    assert_int_equal(ads_msgpack_encode_expr(&mine, e, &err), 0);
    assert_int_equal(mine.len, bytes.len);
    assert_memory_equal(mine.p, bytes.p, bytes.len);
    ads_buf_free(&t);
    ads_buf_free(&bytes);
    ads_buf_free(&mine);
}

static const ads_expr *memo_parse(ads_expr_memo *m, ads_arena *a, const char *text)
{
    const ads_expr *e = NULL;
    ads_error err;
    assert_int_equal(ads_expr__parse_memo(m, &e, a, text, strlen(text), &err), 0);
    assert_non_null(e);
    return e;
}

static size_t ncorpus(void)
{
    return sizeof corpus / sizeof corpus[0];
}

static void parse_memo__every_text_comes_back_as_a_parse_gives_it(void **state)
{
    (void)state;
    ads_expr_memo *m;
    assert_int_equal(ads_expr_memo_new(&m), 0);
    ads_arena *kept = ads_arena_new();
    const ads_expr *last[sizeof corpus / sizeof corpus[0]];
    for (int round = 0; round < 3; round++)
        for (size_t i = 0; i < ncorpus(); i++) {
            last[i] = memo_parse(m, kept, corpus[i]);
            same_as_plain(last[i], corpus[i]);
            /* the same text twice in a row: the second is a hit */
            same_as_plain(memo_parse(m, kept, corpus[i]), corpus[i]);
        }
    /* the copies owe nothing to the memo */
    ads_expr_memo_free(m);
    for (size_t i = 0; i < ncorpus(); i++)
        same_as_plain(last[i], corpus[i]);
    ads_arena_free(kept);
}

static void parse_memo__errors_are_the_parsers(void **state)
{
    (void)state;
    ads_expr_memo *m;
    assert_int_equal(ads_expr_memo_new(&m), 0);
    for (int round = 0; round < 2; round++)
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            const ads_expr *e = NULL, *f = NULL;
            ads_error want, got;
            memset(&want, 0, sizeof want);
            memset(&got, 0, sizeof got);
            int rc = ads_expr_parse(&e, arena, bad[i], strlen(bad[i]), &want);
            assert_int_not_equal(rc, 0);
            /* a good text in the slot first, where there is one slot */
            memo_parse(m, arena, corpus[i]);
            assert_int_equal(ads_expr__parse_memo(m, &f, arena, bad[i], strlen(bad[i]), &got), rc);
            assert_null(f);
            assert_int_equal(got.code, want.code);
            assert_int_equal(got.line, want.line);
            assert_int_equal(got.column, want.column);
            assert_string_equal(got.message, want.message);
        }
    ads_expr_memo_free(m);
}

/* Texts that differ from a remembered one in one byte, one case or one
 * space are parsed for what they are. */
static void parse_memo__a_text_one_byte_off_is_another_text(void **state)
{
    (void)state;
    ads_expr_memo *m;
    assert_int_equal(ads_expr_memo_new(&m), 0);
    static const char *const pairs[][2] = {
        {"x == 1", "x == 2"},       {"x == 1", "x == 1.0"},   {"Memory", "memory"},
        {"a.b", "a.B"},             {"f(x)", "F(x)"},         {"x", ".x"},
        {"(x)", "x"},               {"x == \"a\"", "x == \"A\""}, {"a ? b : c", "a ? c : b"},
        {"x == -0.0", "x == 0.0"},  {"a && b", "a || b"},     {"x + 1", "x +1"},
    };
    for (int round = 0; round < 2; round++)
        for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++)
            for (int k = 0; k < 4; k++) {
                const char *text = pairs[i][k & 1];
                same_as_plain(memo_parse(m, arena, text), text);
            }
    ads_expr_memo_free(m);
}

/* Thousands of distinct texts, each over a hundred bytes, take the memo
 * past ADS_EXPR_MEMO_BYTES many times; one recurring text stays right. */
static void parse_memo__a_memo_that_forgets_still_answers(void **state)
{
    (void)state;
    ads_expr_memo *m;
    assert_int_equal(ads_expr_memo_new(&m), 0);
    char text[256];
    for (int i = 0; i < 6000; i++) {
        snprintf(text, sizeof text,
                 "(TARGET.Name == \"node%05d.example.org with a long enough tail to fill\")"
                 " && (Memory >= %d)",
                 i, i % 7);
        ads_arena *a = ads_arena_new();
        same_as_plain(memo_parse(m, a, text), text);
        same_as_plain(memo_parse(m, a, corpus[0]), corpus[0]);
        ads_arena_free(a);
        if (i % 500 == 0)
            ads_arena_reset(arena);
    }
    ads_expr_memo_free(m);
}

/* Trees past ADS_EXPR_MEMO_NODES and texts past ADS_EXPR_MEMO_TEXT_MAX. */
static void memo__big_trees_and_texts_pass_through(void **state)
{
    (void)state;
    ads_expr_memo *pm, *um;
    assert_int_equal(ads_expr_memo_new(&pm), 0);
    assert_int_equal(ads_expr_memo_new(&um), 0);
    ads_buf text = ADS_BUF_INIT;
    ads_buf_adds(&text, "x0");
    for (int i = 1; i < ADS_EXPR_MEMO_NODES + 10; i++)
        ads_buf_printf(&text, " || x%d", i);
    for (int round = 0; round < 3; round++) {
        const char *t = ads_buf_cstr(&text);
        const ads_expr *e = memo_parse(pm, arena, t);
        same_as_plain(e, t);
        ads_buf out = ADS_BUF_INIT;
        ads_expr__unparse_memo(um, &out, e);
        assert_string_equal(ads_buf_cstr(&out), unparsed(e));
        ads_buf_free(&out);
        ads_buf_adds(&text, " || \"0123456789012345678901234567890123456789\"");
    }
    ads_buf_free(&text);
    ads_expr_memo_free(pm);
    ads_expr_memo_free(um);
}

static void unparse_memo__every_tree_writes_its_own_text(void **state)
{
    (void)state;
    ads_expr_memo *m;
    assert_int_equal(ads_expr_memo_new(&m), 0);
    for (int round = 0; round < 3; round++)
        for (size_t i = 0; i < ncorpus(); i++) {
            const ads_expr *e, *f;
            ads_error err;
            assert_int_equal(ads_expr_parse(&e, arena, corpus[i], strlen(corpus[i]), &err), 0);
            /* both the tree as parsed and as folded (literals, lists, records) */
            assert_int_equal(ads_expr_fold(&f, arena, e, &err), 0);
            const ads_expr *trees[2] = {e, f};
            for (int k = 0; k < 2; k++)
                for (int again = 0; again < 2; again++) {
                    ads_buf out = ADS_BUF_INIT;
                    ads_buf_adds(&out, "prefix:");
                    ads_expr__unparse_memo(m, &out, trees[k]);
                    char want[4096];
                    snprintf(want, sizeof want, "prefix:%s", unparsed(trees[k]));
                    assert_string_equal(ads_buf_cstr(&out), want);
                    ads_buf_free(&out);
                }
        }
    ads_expr_memo_free(m);
}

/* Rows from the JSON reader, encoded through one order memo (as a bulk load
 * does), are byte for byte the rows of each record encoded alone, and the
 * records outlive the reader. */
static void json_rows__with_memos_are_the_rows_without(void **state)
{
    (void)state;
    ads_buf in = ADS_BUF_INIT;
    static const char *const reqs[] = {
        "(TARGET.Memory >= RequestMemory)", "(TARGET.Memory >= RequestMemory)",
        "(TARGET.memory >= RequestMemory)", "(TARGET.Memory > RequestMemory)",
        "(TARGET.Memory >= RequestMemory)", "TARGET.Memory >= RequestMemory",
        "(TARGET.Memory >= 1024)",          "(TARGET.Memory >= 1024.0)",
    };
    size_t n = sizeof reqs / sizeof reqs[0];
    for (size_t i = 0; i < n; i++)
        ads_buf_printf(&in,
                       "{\"Id\":%zu,\"Requirements\":\"\\/Expr(%s)\\/\","
                       "\"Rank\":\"\\/Expr(-KFlops \\/ 1e6)\\/\"}\n",
                       i, reqs[i]);
    ads_json_reader *r;
    ads_error err;
    assert_int_equal(ads_json_reader_new(&r, in.p, in.len, &err), 0);
    const ads_record *recs[8];
    for (size_t i = 0; i < n; i++)
        assert_int_equal(ads_json_reader_next(&recs[i], NULL, r, arena, &err), 1);
    ads_json_reader_free(r);
    ads_msgpack_order *o;
    assert_int_equal(ads_msgpack_order_new(&o, &err), 0);
    for (int round = 0; round < 2; round++)
        for (size_t i = 0; i < n; i++) {
            const ads_expr *req = ads_record_lookup(recs[i], "Requirements", 12);
            assert_non_null(req);
            assert_string_equal(unparsed(req), reqs[i]);
            ads_buf a = ADS_BUF_INIT, b = ADS_BUF_INIT;
            assert_int_equal(ads_msgpack_encode_row(&a, recs[i], o, &err), 0);
            assert_int_equal(ads_msgpack_encode_record(&b, recs[i], &err), 0);
            assert_int_equal(a.len, b.len);
            assert_memory_equal(a.p, b.p, a.len);
            ads_buf_free(&a);
            ads_buf_free(&b);
        }
    ads_msgpack_order_free(o);
    ads_buf_free(&in);
}

/* The records of one reader over many records (its memo warm) are those of
 * a reader over each record alone (its memo cold: a plain parse). */
static const char *const values[] = {
    "(TARGET.Memory >= RequestMemory) && (TARGET.Arch == \"X86_64\")",
    "(TARGET.Memory >= RequestMemory) && (TARGET.Arch == \"x86_64\")",
    "(TARGET.Memory >= RequestMemory) && (TARGET.Arch == \"X86_64\")",
    "(TARGET.Memory > RequestMemory) && (TARGET.Arch == \"X86_64\")",
    "(TARGET.memory >= RequestMemory) && (TARGET.Arch == \"X86_64\")",
    "TARGET.Memory >= RequestMemory && TARGET.Arch == \"X86_64\"",
    "(TARGET.Memory >= 1024) && (TARGET.Arch == \"X86_64\")",
    "(TARGET.Memory >= 1024.0) && (TARGET.Arch == \"X86_64\")",
    "(TARGET.Memory >= RequestMemory) && (TARGET.Arch == \"X86_64\")",
    "START && IsValidCheckpointPlatform",
    "START && IsValidCheckpointPlatform",
    "1024",
    "\"a string\"",
    "{ 1, 2 }",
};

typedef int (*next_fn)(const char *text, size_t len, size_t skip, const ads_record **out);

static int long_nth(const char *text, size_t len, size_t skip, const ads_record **out)
{
    ads_long_reader *r;
    ads_error err;
    assert_int_equal(ads_long_reader_new(&r, text, len, &err), 0);
    int rc = 1;
    for (size_t i = 0; i <= skip && rc == 1; i++)
        rc = ads_long_reader_next(out, NULL, r, arena, &err);
    ads_long_reader_free(r);
    return rc;
}

static int json_nth(const char *text, size_t len, size_t skip, const ads_record **out)
{
    ads_json_reader *r;
    ads_error err;
    assert_int_equal(ads_json_reader_new(&r, text, len, &err), 0);
    int rc = 1;
    for (size_t i = 0; i <= skip && rc == 1; i++)
        rc = ads_json_reader_next(out, NULL, r, arena, &err);
    ads_json_reader_free(r);
    return rc;
}

static void warm_is_cold(const ads_buf *text, const size_t *starts, next_fn nth, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const ads_record *warm, *cold;
        assert_int_equal(nth(text->p, text->len, i, &warm), 1);
        assert_int_equal(nth(text->p + starts[i], text->len - starts[i], 0, &cold), 1);
        ads_buf a = ADS_BUF_INIT, b = ADS_BUF_INIT;
        ads_record_unparse(&a, warm);
        ads_record_unparse(&b, cold);
        assert_string_equal(ads_buf_cstr(&a), ads_buf_cstr(&b));
        char id[32];
        snprintf(id, sizeof id, "Id = %zu;", i);
        assert_non_null(strstr(ads_buf_cstr(&a), id));
        ads_buf_free(&a);
        ads_buf_free(&b);
    }
}

static void readers__a_warm_memo_reads_what_a_cold_one_does(void **state)
{
    (void)state;
    size_t n = sizeof values / sizeof values[0];
    ads_buf lng = ADS_BUF_INIT, json = ADS_BUF_INIT;
    size_t at_long[sizeof values / sizeof values[0]], at_json[sizeof values / sizeof values[0]];
    for (size_t i = 0; i < n; i++) {
        at_long[i] = lng.len;
        ads_buf_printf(&lng, "Id = %zu\nRequirements = %s\n\n", i, values[i]);
        at_json[i] = json.len;
        ads_buf_printf(&json, "{\"Id\":%zu,\"Requirements\":\"\\/Expr(", i);
        for (const char *p = values[i]; *p; p++)
            ads_buf_printf(&json, *p == '"' ? "\\\"" : "%c", *p);
        ads_buf_adds(&json, ")\\/\"}\n");
    }
    warm_is_cold(&lng, at_long, long_nth, n);
    warm_is_cold(&json, at_json, json_nth, n);
    ads_buf_free(&lng);
    ads_buf_free(&json);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(parse_memo__every_text_comes_back_as_a_parse_gives_it,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(parse_memo__errors_are_the_parsers, setup, teardown),
        cmocka_unit_test_setup_teardown(parse_memo__a_text_one_byte_off_is_another_text, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(parse_memo__a_memo_that_forgets_still_answers, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(memo__big_trees_and_texts_pass_through, setup, teardown),
        cmocka_unit_test_setup_teardown(unparse_memo__every_tree_writes_its_own_text, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(json_rows__with_memos_are_the_rows_without, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(readers__a_warm_memo_reads_what_a_cold_one_does, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
