/*
 * tests/classad/test_inspect.c: the window on expression trees that the
 * statement planner uses: visiting in prefix order or in any order, rewriting
 * with sharing, and structural equality, on small trees and on chains of
 * 300,000 operands (which must cost no C stack: issue 10 item 8).
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

#include "tests/classad/arena_fixture.h"

static const ads_expr *parse(const char *text)
{
    const ads_expr *e;
    ads_error err;
    if (ads_expr_parse(&e, arena, text, strlen(text), &err))
        fail_msg("'%.60s': %s", text, err.message);
    return e;
}

/* n operands a joined by op */
static const ads_expr *chain(size_t n, const char *a, const char *op)
{
    ads_buf b = ADS_BUF_INIT;
    for (size_t i = 0; i < n; i++) {
        if (i)
            ads_buf_adds(&b, op);
        ads_buf_adds(&b, a);
    }
    assert_false(b.failed);
    const ads_expr *e = parse(ads_buf_cstr(&b));
    ads_buf_free(&b);
    return e;
}

typedef struct trail {
    ads_buf text; /* each node: its name, operator or "lit", then ' ' */
    size_t count;
    const char *stop_at; /* a name to stop at */
    int fail_at;         /* a negative code to return at stop_at instead */
} trail;

static int note(void *ctx, const ads_expr *e)
{
    trail *t = ctx;
    ads_str n = ads_expr_name(e);
    t->count++;
    if (n.len)
        ads_buf_add(&t->text, n.p, n.len);
    else if (ads_expr_kind_of(e) == ADS_X_LITERAL)
        ads_buf_adds(&t->text, "lit");
    else
        ads_buf_adds(&t->text, ads_expr_op(e));
    ads_buf_addc(&t->text, ' ');
    if (t->stop_at && n.len == strlen(t->stop_at) && memcmp(n.p, t->stop_at, n.len) == 0)
        return t->fail_at ? t->fail_at : ADS_VISIT_STOP;
    if (ads_expr_kind_of(e) == ADS_X_CALL && ads_expr_nargs(e) == 3)
        return ADS_VISIT_SKIP;
    return ADS_VISIT_INTO;
}

static void inspect__visit_goes_in_prefix_order(void **state)
{
    (void)state;
    const ads_expr *e = parse("a + b * c - f(d, e) || g(1, 2, 3) && -h");
    trail t = {ADS_BUF_INIT, 0, NULL, 0};
    assert_int_equal(ads_expr_visit(e, note, &t, 0, NULL), 0);
    assert_string_equal(ads_buf_cstr(&t.text), "|| - + a * b c f d e && g - h ");
    assert_int_equal(t.count, 14);
    /* any order: every node once */
    ads_buf_clear(&t.text);
    t.count = 0;
    assert_int_equal(ads_expr_visit(e, note, &t, ADS_VISIT_ANY_ORDER, NULL), 0);
    assert_int_equal(t.count, 14); /* as many as in order: g's arguments skipped */
    /* stopping, and an error passed through */
    ads_buf_clear(&t.text);
    t.stop_at = "c";
    assert_int_equal(ads_expr_visit(e, note, &t, 0, NULL), 0);
    assert_string_equal(ads_buf_cstr(&t.text), "|| - + a * b c ");
    t.fail_at = ADS_EINVAL;
    assert_int_equal(ads_expr_visit(e, note, &t, 0, NULL), ADS_EINVAL);
    assert_int_equal(ads_expr_visit(e, note, &t, ADS_VISIT_ANY_ORDER, NULL), ADS_EINVAL);
    ads_error err;
    assert_int_equal(ads_expr_visit(NULL, note, &t, 0, &err), ADS_EINVAL);
    assert_string_equal(err.message, "visit: NULL argument");
    ads_buf_free(&t.text);
}

static void inspect__visit_a_chain_of_300000_operands(void **state)
{
    (void)state;
    const ads_expr *e = chain(300000, "x", " || ");
    trail t = {ADS_BUF_INIT, 0, NULL, 0};
    assert_int_equal(ads_expr_visit(e, note, &t, 0, NULL), 0);
    assert_int_equal(t.count, 2 * 300000 - 1);
    t.count = 0;
    assert_int_equal(ads_expr_visit(e, note, &t, ADS_VISIT_ANY_ORDER, NULL), 0);
    assert_int_equal(t.count, 2 * 300000 - 1);
    ads_buf_free(&t.text);
}

/* Replace attribute x by the literal 1; note the order the callback sees. */
static const ads_expr *x_to_one(void *ctx, const ads_expr *e, int *stop)
{
    (void)stop;
    if (ctx)
        note(ctx, e);
    ads_str n = ads_expr_name(e);
    if (ads_expr_kind_of(e) != ADS_X_ATTR || n.len != 1 || n.p[0] != 'x')
        return NULL;
    const ads_expr *one;
    ads_value v = ads_int(1);
    return ads_expr_literal(&one, arena, &v, NULL) ? NULL : one;
}

static void inspect__rewrite_a_chain_of_300000_operands(void **state)
{
    (void)state;
    /* the callback sees nodes in prefix order; what is unchanged is shared */
    trail t = {ADS_BUF_INIT, 0, NULL, 0};
    const ads_expr *small = parse("x + y * x - z"), *out;
    assert_int_equal(ads_expr_rewrite(&out, arena, small, x_to_one, &t, NULL), 0);
    assert_string_equal(ads_buf_cstr(&t.text), "- + x * y x z ");
    ads_buf b = ADS_BUF_INIT;
    ads_expr_unparse(&b, out);
    assert_string_equal(ads_buf_cstr(&b), "1 + y * 1 - z");
    ads_buf_free(&b);
    const ads_expr *same = parse("a + b + c");
    assert_int_equal(ads_expr_rewrite(&out, arena, same, x_to_one, NULL, NULL), 0);
    assert_ptr_equal(out, same);
    ads_buf_free(&t.text);

    const ads_expr *e = chain(300000, "x", " + ");
    ads_value v;
    assert_int_equal(ads_expr_rewrite(&out, arena, e, x_to_one, NULL, NULL), 0);
    assert_int_equal(ads_expr_eval(&v, out, NULL, arena), 0);
    assert_int_equal(v.type, ADS_INTEGER);
    assert_int_equal(v.u.i, 300000);
}

static void inspect__equal_on_chains_of_300000_operands(void **state)
{
    (void)state;
    const ads_expr *a = chain(300000, "x", " && "), *b = chain(300000, "X", " && ");
    const ads_expr *c = chain(300000, "x", " || "), *d = chain(299999, "x", " && ");
    assert_true(ads_expr_equal(a, b)); /* names ignore case */
    assert_false(ads_expr_equal(a, c));
    assert_false(ads_expr_equal(a, d));
}

/* The names ads_expr_plain_refs gives for text, joined by ',', or "-" for
 * an expression that depends on more than plain names. */
static void plain_refs_are(const char *text, size_t cap, const char *want)
{
    ads_str names[8];
    size_t n = 99;
    char got[256] = "-";
    if (ads_expr_plain_refs(names, cap, &n, parse(text))) {
        size_t at = 0;
        got[0] = '\0';
        for (size_t i = 0; i < n; i++)
            at += (size_t)snprintf(got + at, sizeof got - at, "%s%.*s", i ? "," : "",
                                   (int)names[i].len, names[i].p);
    } else {
        assert_int_equal(n, 0);
    }
    if (strcmp(got, want) != 0)
        fail_msg("%s: got '%s', want '%s'", text, got, want);
}

static void inspect__plain_refs_name_what_a_value_depends_on(void **state)
{
    (void)state;
    plain_refs_are("Role == \"compute\"", 8, "Role");
    plain_refs_are("Role == \"compute\" && (ROLE =?= Kind || size(toLower(Kind)) > 2)", 8,
                   "Role,Kind");
    plain_refs_are("1 + 2", 8, "");
    plain_refs_are("{ a, b[0], c ? d : e, f ?: g }", 8, "a,b,c,d,e,f,g");
    plain_refs_are("nosuchfunction(a)", 8, "a"); /* always error */
    /* more than plain names */
    plain_refs_are("a + b + c", 2, "-");
    plain_refs_are("time() > a", 8, "-");
    plain_refs_are("random(3) > a", 8, "-");
    plain_refs_are("MY.a", 8, "-");
    plain_refs_are("TARGET.a > 1", 8, "-");
    plain_refs_are(".a", 8, "-");
    plain_refs_are("a.b", 8, "-");
    plain_refs_are("[x = a].x", 8, "-");
    plain_refs_are("size([x = 1])", 8, "-");
    plain_refs_are("CurrentTime > 0", 8, "-");
    plain_refs_are("self =?= undefined", 8, "-");
    plain_refs_are("isUndefined(parent)", 8, "-");
    plain_refs_are("toplevel", 8, "-");
    plain_refs_are("root", 8, "-");
    plain_refs_are("eval(\"a\")", 8, "-");
}

int main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(inspect__visit_goes_in_prefix_order),
        T(inspect__visit_a_chain_of_300000_operands),
        T(inspect__rewrite_a_chain_of_300000_operands),
        T(inspect__equal_on_chains_of_300000_operands),
        T(inspect__plain_refs_name_what_a_value_depends_on),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
