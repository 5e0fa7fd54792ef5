/*
 * tests/classad/test_program.c: classad/program.c, the flat program of a
 * prepared expression. The program must give exactly what the tree walker
 * gives: random expressions (every operator, undefined and error operands,
 * calls, selections, conditionals, names with and without a value, names
 * spelled in another case) are evaluated both ways, over in-memory records
 * and MessagePack rows, nested records and the two sides of a match, and
 * the values must be the same (same type, same text). Also: which roots get
 * a program, that a copy of the root is walked as a tree, and that the
 * depth limit strikes at the same reference with and without a program.
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
#include "classad/classad_int.h"
#include "classad/msgpack.h"

#include "tests/classad/arena_fixture.h"

static const ads_expr *parse(const char *text)
{
    const ads_expr *e;
    ads_error err;
    if (ads_expr_parse(&e, arena, text, strlen(text), &err))
        fail_msg("'%s': %s", text, err.message);
    return e;
}

static const ads_expr *prepared(const char *text)
{
    const ads_expr *p;
    ads_error err;
    if (ads_expr_prepare(&p, arena, parse(text), &err))
        fail_msg("prepare '%s': %s", text, err.message);
    return p;
}

static const ads_record *record(const char *text)
{
    const ads_record *r;
    ads_error err;
    if (ads_record_parse(&r, arena, text, strlen(text), &err))
        fail_msg("'%s': %s", text, err.message);
    return r;
}

/* The type and text of a value, for comparing two. */
static void describe(ads_buf *b, int rc, const ads_value *v)
{
    ads_buf_clear(b);
    ads_buf_printf(b, "rc %d type %d: ", rc, (int)v->type);
    ads_value_unparse(b, v);
    assert_false(b->failed);
}

/* A view of record r: in memory, or over its MessagePack row (bytes in
 * row, which must outlive the view). */
static ads_view view_of(const ads_record *r, bool row, ads_buf *bytes, ads_msgpack_view *mv,
                        const ads_view *parent)
{
    if (!row)
        return ads_record_view(r, parent);
    ads_buf_clear(bytes);
    assert_int_equal(ads_msgpack_encode_record(bytes, r, NULL), 0);
    assert_int_equal(ads_msgpack_view_init(mv, bytes->p, bytes->len, arena, NULL), 0);
    return ads_msgpack_view_get(mv, parent);
}

typedef struct side {
    const ads_record *rec;
    const ads_view *parent;
} side;

/* p (a prepared root) with its program and as a tree (a copy of the root
 * node, which the program does not serve): the same result. Each way gets
 * views of its own (a row's view remembers what it decoded). */
static void same_both_ways(const ads_expr *p, const char *text, side my, const side *target,
                           bool row)
{
    ads_expr copy = *p;
    const ads_expr *ways[2] = {p, &copy};
    ads_buf got[2] = {ADS_BUF_INIT, ADS_BUF_INIT};
    for (int w = 0; w < 2; w++) {
        ads_buf b1 = ADS_BUF_INIT, b2 = ADS_BUF_INIT;
        ads_msgpack_view m1, m2;
        ads_view v = view_of(my.rec, row, &b1, &m1, my.parent), t;
        ads_value out;
        int rc;
        if (target) {
            t = view_of(target->rec, row, &b2, &m2, target->parent);
            rc = ads_expr_eval_match(&out, ways[w], &v, &t, arena);
        } else {
            rc = ads_expr_eval(&out, ways[w], &v, arena);
        }
        describe(&got[w], rc, &out);
        ads_buf_free(&b1);
        ads_buf_free(&b2);
    }
    assert_non_null(got[0].p);
    if (strcmp(got[0].p, got[1].p) != 0)
        fail_msg("'%s' (%s): program gives %s, the tree %s", text, row ? "row" : "memory",
                 got[0].p, got[1].p);
    ads_buf_free(&got[0]);
    ads_buf_free(&got[1]);
}

/* ---- random expressions ---- */

static uint64_t rng_state;

static unsigned pick(unsigned n)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (unsigned)(rng_state % n);
}

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static const char *const atoms[] = {
    "a", "b", "c", "s", "t", "r", "u", "x", "n", "missing", "Memory", "MEMORY", "owner", "Owner",
    "cyc", "deep", "A", "MY.a", "TARGET.a", "TARGET.s", "TARGET.Memory", "self.b", "n.i", "n.j",
    "parent.a", ".a", "i", "j", "0", "1", "-1", "7", "1024", "9223372036854775807",
    "(-9223372036854775807 - 1)", "0.0", "-0.0", "0.3", "1e308", "2.5", "real(\"NaN\")",
    "real(\"INF\")", "\"alice\"", "\"ALICE\"", "\"\"", "\"x86_64\"", "\"X86_64\"", "true", "false",
    "undefined", "error", "{1, 2, 3}", "{}", "[q = 1].q", "relTime(60)",
};

static const char *const binops[] = {
    "+", "-", "*", "/", "%", "<", "<=", ">", ">=", "==", "!=", "=?=", "=!=", " is ", " isnt ",
    "&&", "||", "&&", "||", "&", "|", "^", "<<", ">>", ">>>", "==", "<", "&&",
};

static const char *const unops[] = {"-", "!", "~", "+"};

static void gen(ads_buf *b, int depth)
{
    unsigned r = depth <= 0 ? 0 : pick(12);
    if (r < 3) {
        ads_buf_printf(b, "%s", atoms[pick(COUNT(atoms))]);
    } else if (r < 6) { /* a chain as the parser builds it */
        gen(b, depth - 1);
        ads_buf_printf(b, " %s ", binops[pick(COUNT(binops))]);
        gen(b, depth - 1);
    } else if (r < 8) {
        ads_buf_printf(b, "(");
        gen(b, depth - 1);
        ads_buf_printf(b, " %s ", binops[pick(COUNT(binops))]);
        gen(b, depth - 1);
        ads_buf_printf(b, ")");
    } else if (r == 8) {
        ads_buf_printf(b, "%s(", unops[pick(COUNT(unops))]);
        gen(b, depth - 1);
        ads_buf_printf(b, ")");
    } else if (r == 9) {
        ads_buf_printf(b, "(");
        gen(b, depth - 1);
        ads_buf_printf(b, " ? ");
        gen(b, depth - 1);
        ads_buf_printf(b, " : ");
        gen(b, depth - 1);
        ads_buf_printf(b, ")");
    } else if (r == 10) {
        ads_buf_printf(b, "(");
        gen(b, depth - 1);
        ads_buf_printf(b, " ?: ");
        gen(b, depth - 1);
        ads_buf_printf(b, ")");
    } else {
        static const char *const fns[] = {"isUndefined(", "size(", "strcat(", "regexp(\"^a\", ",
                                          "ifThenElse(", "isError("};
        unsigned f = pick(COUNT(fns));
        ads_buf_printf(b, "%s", fns[f]);
        gen(b, depth - 1);
        if (f == 2 || f == 4) {
            ads_buf_printf(b, ", ");
            gen(b, depth - 1);
        }
        if (f == 4) {
            ads_buf_printf(b, ", ");
            gen(b, depth - 1);
        }
        ads_buf_printf(b, ")");
    }
}

/* Records with and without the names, of every type, names in another
 * case, attributes that are expressions (one a cycle), a nested record. */
static const char *const record_texts[] = {
    "[a = 1; b = 2.5; c = true; s = \"alice\"; t = \"ALICE\"; r = 0.3; u = undefined; "
    "n = [i = 2; j = a]; x = a + 1; Memory = 2048; Owner = \"Alice\"; cyc = cyc + 1; "
    "deep = x * 2]",
    "[a = 9223372036854775807; b = -0.0; c = false; s = \"\"; t = \"x86_64\"; "
    "r = real(\"NaN\"); u = error; n = {1, 2}; x = s == t; MEMORY = 512; i = 3]",
    "[]",
    "[A = -1; S = \"Alice\"; T = 7; Memory = \"big\"; owner = undefined; x = missing; "
    "n = [i = a; a = 4]]",
    "[a = \"1\"; b = {1, 2, 3}; c = 1024; s = true; t = 0; r = 1e308; Memory = 1e308 * 10; "
    "x = a + b; TARGET = [a = 11]]",
};

static const char *const target_text =
    "[a = 5; s = \"ALICE\"; Memory = 4096; x = TARGET.a; b = MY.a]";

static void program__gives_what_the_tree_gives_on_random_expressions(void **state)
{
    (void)state;
    const ads_record *recs[COUNT(record_texts)];
    for (size_t i = 0; i < COUNT(record_texts); i++)
        recs[i] = record(record_texts[i]);
    const ads_record *target = record(target_text);
    /* the nested record of the first: its names fall back to the outer one */
    const ads_expr *nested = ads_record_lookup(recs[0], "n", 1);
    assert_non_null(nested);
    assert_int_equal(nested->kind, N_RECORD);
    ads_view outer = ads_record_view(recs[0], NULL);

    ads_buf text = ADS_BUF_INIT;
    int with_program = 0, total = 0;
    rng_state = 0x9e3779b97f4a7c15u;
    for (int k = 0; k < 2500; k++) {
        ads_buf_clear(&text);
        if (pick(4)) { /* mostly an operator at the root, where programs are */
            gen(&text, (int)pick(5));
            ads_buf_printf(&text, " %s ", binops[pick(COUNT(binops))]);
            gen(&text, (int)pick(5));
        } else {
            gen(&text, 1 + (int)pick(5));
        }
        assert_false(text.failed);
        const ads_expr *p = prepared(text.p);
        total++;
        if (ads_prog__of(p))
            with_program++;
        for (int row = 0; row < 2; row++) {
            for (size_t i = 0; i < COUNT(recs); i++) {
                side my = {recs[i], NULL}, other = {target, NULL};
                same_both_ways(p, text.p, my, NULL, row);
                same_both_ways(p, text.p, my, &other, row);
            }
            side in_nested = {nested->u.rec, &outer};
            same_both_ways(p, text.p, in_nested, NULL, false);
        }
        ads_arena_reset(arena);
        for (size_t i = 0; i < COUNT(record_texts); i++)
            recs[i] = record(record_texts[i]);
        target = record(target_text);
        nested = ads_record_lookup(recs[0], "n", 1);
        outer = ads_record_view(recs[0], NULL);
    }
    ads_buf_free(&text);
    /* the comparison means something only if most had a program */
    if (with_program * 2 <= total)
        fail_msg("%d of %d expressions had a program", with_program, total);
}

/* Every operator on every pair of edge values, written as literals, as
 * attributes and mixed (the program's fused and inline cases). */
static void program__every_operator_on_edge_values(void **state)
{
    (void)state;
    static const char *const values[] = {
        "0", "1", "-1", "2", "9223372036854775807", "(-9223372036854775807 - 1)", "0.0",
        "-0.0", "0.5", "1e308", "real(\"NaN\")", "real(\"INF\")", "\"alice\"",
        "\"ALICE\"", "\"alicf\"", "\"\"", "true", "false", "undefined", "error", "{1}",
    };
    static const char *const ops[] = {
        "+", "-", "*", "/", "%", "<", "<=", ">", ">=", "==", "!=", "=?=", "=!=", " is ",
        " isnt ", "&&", "||", "&", "|", "^", "<<", ">>", ">>>",
    };
    ads_buf text = ADS_BUF_INIT, rec = ADS_BUF_INIT;
    for (size_t i = 0; i < COUNT(values); i++)
        for (size_t j = 0; j < COUNT(values); j++) {
            ads_buf_clear(&rec);
            ads_buf_printf(&rec, "[v = %s; w = %s]", values[i], values[j]);
            assert_false(rec.failed);
            side my = {record(rec.p), NULL};
            for (size_t k = 0; k < COUNT(ops); k++)
                for (int form = 0; form < 3; form++) {
                    ads_buf_clear(&text);
                    if (form == 0)
                        ads_buf_printf(&text, "v%s%s && true", ops[k], values[j]);
                    else if (form == 1)
                        ads_buf_printf(&text, "%s%sw || false", values[i], ops[k]);
                    else
                        ads_buf_printf(&text, "!!(v%sw)", ops[k]);
                    assert_false(text.failed);
                    const ads_expr *p = prepared(text.p);
                    assert_non_null(ads_prog__of(p));
                    same_both_ways(p, text.p, my, NULL, false);
                    same_both_ways(p, text.p, my, NULL, true);
                }
            ads_arena_reset(arena);
        }
    ads_buf_free(&text);
    ads_buf_free(&rec);
}

/* ---- which roots get one ---- */

static void program__operators_at_the_root_get_one_a_call_or_name_does_not(void **state)
{
    (void)state;
    assert_non_null(ads_prog__of(prepared("Memory > 1024 && Arch == \"X86_64\"")));
    assert_non_null(ads_prog__of(prepared("KFlops / 1000 + Memory / 1024")));
    assert_non_null(ads_prog__of(prepared("!(a || b)")));
    assert_null(ads_prog__of(prepared("regexp(\"^a\", Name)")));
    assert_null(ads_prog__of(prepared("Memory")));
    assert_null(ads_prog__of(prepared("1 + 2"))); /* folded to a literal */
    /* not prepared: walked as a tree */
    assert_null(ads_prog__of(parse("Memory > 1024")));
}

static void program__a_copy_of_the_root_is_walked_as_a_tree(void **state)
{
    (void)state;
    const ads_expr *p = prepared("a + 1 > 2");
    assert_non_null(ads_prog__of(p));
    ads_expr copy = *p;
    assert_null(ads_prog__of(&copy));
    /* and a rewrite that keeps the root's operands keeps nothing stale:
     * both give the value */
    const ads_record *r = record("[a = 5]");
    ads_view v = ads_record_view(r, NULL);
    ads_value x, y;
    assert_int_equal(ads_expr_eval(&x, p, &v, arena), 0);
    assert_int_equal(ads_expr_eval(&y, &copy, &v, arena), 0);
    assert_int_equal(x.type, ADS_BOOLEAN);
    assert_true(x.u.b);
    assert_int_equal(y.type, ADS_BOOLEAN);
    assert_true(y.u.b);
}

static void program__too_deep_or_too_wide_is_walked_as_a_tree(void **state)
{
    (void)state;
    ads_buf b = ADS_BUF_INIT;
    /* right operands nested: one stack entry each */
    for (int i = 0; i < ADS_PROG_STACK + 2; i++)
        ads_buf_printf(&b, "a + (");
    ads_buf_printf(&b, "a");
    for (int i = 0; i < ADS_PROG_STACK + 2; i++)
        ads_buf_printf(&b, ")");
    assert_false(b.failed);
    const ads_expr *wide = prepared(b.p);
    assert_null(ads_prog__of(wide));
    ads_buf_clear(&b);
    for (int i = 0; i < ADS_PROG_DEPTH + 2; i++)
        ads_buf_printf(&b, "-(");
    ads_buf_printf(&b, "a + 1");
    for (int i = 0; i < ADS_PROG_DEPTH + 2; i++)
        ads_buf_printf(&b, ")");
    const ads_expr *deep = prepared(b.p);
    assert_null(ads_prog__of(deep));
    const ads_record *r = record("[a = 2]");
    ads_view v = ads_record_view(r, NULL);
    ads_value out;
    assert_int_equal(ads_expr_eval(&out, wide, &v, arena), 0);
    assert_int_equal(out.type, ADS_INTEGER);
    assert_int_equal(out.u.i, 2 * (ADS_PROG_STACK + 3));
    assert_int_equal(ads_expr_eval(&out, deep, &v, arena), 0);
    assert_int_equal(out.type, ADS_INTEGER);
    assert_int_equal(out.u.i, 3); /* an even number of minus signs */
    /* a long flat chain is one level: it gets a program */
    ads_buf_clear(&b);
    ads_buf_printf(&b, "a");
    for (int i = 0; i < 500; i++)
        ads_buf_printf(&b, " || a == %d", i);
    assert_non_null(ads_prog__of(prepared(b.p)));
    ads_buf_free(&b);
}

/* A chain of references a0 = a1, a1 = a2, ... reaches the depth limit at
 * the same link with the program as without it. */
static void program__depth_limit_strikes_where_the_tree_walk_strikes(void **state)
{
    (void)state;
    for (int len = ADS_MAX_DEPTH - 6; len <= ADS_MAX_DEPTH + 2; len++) {
        ads_buf b = ADS_BUF_INIT;
        ads_buf_printf(&b, "[");
        for (int i = 0; i < len; i++)
            ads_buf_printf(&b, "a%d = a%d; ", i, i + 1);
        ads_buf_printf(&b, "a%d = 7]", len);
        assert_false(b.failed);
        const ads_record *r = record(b.p);
        const char *const texts[] = {"a0 + 0", "a0 == 7 && true", "-(a0) < 0 || false",
                                     "x || (y || (a0 > 1))"};
        for (size_t t = 0; t < COUNT(texts); t++) {
            const ads_expr *p = prepared(texts[t]);
            assert_non_null(ads_prog__of(p));
            side my = {r, NULL};
            same_both_ways(p, texts[t], my, NULL, false);
            same_both_ways(p, texts[t], my, NULL, true);
        }
        ads_buf_free(&b);
        ads_arena_reset(arena);
    }
}

/* Names found where they were found before, in another case, or missing,
 * as the hints move between records of different layouts. */
static void program__names_in_other_case_and_other_places(void **state)
{
    (void)state;
    const ads_expr *p = prepared("Memory > 1024 && Owner == \"alice\"");
    const char *const texts[] = {
        "[Memory = 2048; Owner = \"alice\"]",
        "[memory = 2048; OWNER = \"ALICE\"]",
        "[x = 1; Memory = 2048]",
        "[Owner = \"alice\"; Memory = Disk * 2; Disk = 1000]",
        "[Memory = 512; Owner = \"alice\"]",
        "[Memory = undefined; Owner = \"alice\"]",
        "[Memory = 2048; Owner = 5]",
    };
    const char *const want[] = {"true", "true", "undefined", "true", "false", "undefined",
                                "error"};
    for (int round = 0; round < 2; round++)
        for (size_t i = 0; i < COUNT(texts); i++) {
            const ads_record *r = record(texts[i]);
            for (int row = 0; row < 2; row++) {
                side my = {r, NULL};
                same_both_ways(p, texts[i], my, NULL, row);
                ads_buf bytes = ADS_BUF_INIT, got = ADS_BUF_INIT;
                ads_msgpack_view mv;
                ads_view v = view_of(r, row, &bytes, &mv, NULL);
                ads_value out;
                assert_int_equal(ads_expr_eval(&out, p, &v, arena), 0);
                ads_value_unparse(&got, &out);
                assert_false(got.failed);
                if (strcmp(got.p, want[i]) != 0)
                    fail_msg("%s: %s, not %s", texts[i], got.p, want[i]);
                ads_buf_free(&got);
                ads_buf_free(&bytes);
            }
        }
}

int main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(program__gives_what_the_tree_gives_on_random_expressions),
        T(program__every_operator_on_edge_values),
        T(program__operators_at_the_root_get_one_a_call_or_name_does_not),
        T(program__a_copy_of_the_root_is_walked_as_a_tree),
        T(program__too_deep_or_too_wide_is_walked_as_a_tree),
        T(program__depth_limit_strikes_where_the_tree_walk_strikes),
        T(program__names_in_other_case_and_other_places),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
