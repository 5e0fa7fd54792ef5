/*
 * tests/classad/test_parser.c: the grammar: precedence and associativity
 * (read back through unparse, which parenthesises by precedence), every
 * construct, syntax errors with their line, column and message, and the
 * nesting limit with hostile input (an error, never a stack overflow).
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

/* text parses, and unparses to `shape` */
static void parses_as(const char *text, const char *shape)
{
    const ads_expr *e;
    ads_error err;
    ads_buf b = ADS_BUF_INIT;
    if (ads_expr_parse(&e, arena, text, strlen(text), &err))
        fail_msg("'%s' does not parse: %s", text, err.message);
    ads_expr_unparse(&b, e);
    if (strcmp(ads_buf_cstr(&b), shape) != 0)
        fail_msg("'%s' unparses as '%s', expected '%s'", text, ads_buf_cstr(&b), shape);
    ads_buf_free(&b);
}

static void refused(const char *text, int code, int line, int column, const char *message)
{
    const ads_expr *e;
    ads_error err;
    int rc = ads_expr_parse(&e, arena, text, strlen(text), &err);
    if (rc != code || err.line != line || err.column != column ||
        strcmp(err.message, message) != 0)
        fail_msg("'%.60s': rc %d at %d:%d '%s'; expected rc %d at %d:%d '%s'", text, rc,
                 err.line, err.column, err.message, code, line, column, message);
}

static int64_t int_of(const char *text)
{
    const ads_expr *e;
    ads_value v;
    assert_int_equal(ads_expr_parse(&e, arena, text, strlen(text), NULL), 0);
    assert_int_equal(ads_expr_eval(&v, e, NULL, arena), 0);
    assert_int_equal(v.type, ADS_INTEGER);
    return v.u.i;
}

static void parser__precedence_follows_the_spec(void **state)
{
    (void)state;
    assert_int_equal(int_of("2 + 3 * 4"), 14);
    assert_int_equal(int_of("2 - 3 - 4"), -5);
    assert_int_equal(int_of("1 << 2 + 1"), 8);
    assert_int_equal(int_of("6 & 3 | 8 ^ 1"), 11);
    assert_int_equal(int_of("100 / 10 / 5"), 2);
    parses_as("a || b && c | d ^ e & f == g < h << i + j * -k",
              "a || b && c | d ^ e & f == g < h << i + j * -k");
    parses_as("a - (b - c)", "a - (b - c)");
    parses_as("(a + b) * c", "(a + b) * c");
    parses_as("a ? b : c ? d : e", "a ? b : c ? d : e");
    parses_as("a ?: b ?: c", "a ?: b ?: c");
    parses_as("10 ?: 2 + 3", "10 ?: 2 + 3");
    parses_as("!a.b[0].c", "!a.b[0].c");
    parses_as("x =?= y", "x is y");
    parses_as("x =!= y", "x isnt y");
    parses_as("x === y in z", "x === y in z");
    parses_as("- -3", "--3");
}

static void parser__constructs(void **state)
{
    (void)state;
    parses_as("{ 1, 2, }", "{ 1, 2 }");
    parses_as("{}", "{ }");
    parses_as("[;;a = 3;;b := 4;;]", "[ a = 3; b = 4 ]");
    parses_as("[ ]", "[ ]");
    parses_as("f()", "f()");
    parses_as("strcat(a, \"b\", 1)", "strcat(a, \"b\", 1)");
    parses_as(".top", ".top");
    parses_as("x.'send time'", "x.'send time'");
    parses_as("'in'", "'in'");
    parses_as("'a b' + 1", "'a b' + 1");
    parses_as("absTime(\"2011-12-13T12:00:00Z\")", "`2011-12-13T12:00:00Z`");
    parses_as("relTime(\"1:30\")", "`1m30s`");
    parses_as("absTime(\"junk\")", "absTime(\"junk\")"); /* not a literal: stays a call */
    parses_as("[a = 1; A = 2]", "[ a = 2 ]");            /* a name repeated: the last wins */
}

static void parser__syntax_errors_say_what_and_where(void **state)
{
    (void)state;
    refused("", ADS_ESYNTAX, 1, 1, "expected an expression, found end of input");
    refused("1 +", ADS_ESYNTAX, 1, 4, "expected an expression, found end of input");
    refused("(1 + 2", ADS_ESYNTAX, 1, 7, "expected ')', found end of input");
    refused("1 2", ADS_ESYNTAX, 1, 3,
            "expected an operator or the end of the expression, found the number 2");
    refused("a ? b", ADS_ESYNTAX, 1, 6, "expected ':' in a conditional expression, found end "
                                       "of input");
    refused("{1 2}", ADS_ESYNTAX, 1, 4, "expected ',' or '}' in a list, found the number 2");
    refused("{1,,2}", ADS_ESYNTAX, 1, 4, "expected an expression, found ','");
    refused("f(1,", ADS_ESYNTAX, 1, 5, "expected an expression, found end of input");
    refused("f(1 2)", ADS_ESYNTAX, 1, 5, "expected ',' or ')' after a function argument, "
                                        "found the number 2");
    refused("a[1", ADS_ESYNTAX, 1, 4, "expected ']' after a subscript, found end of input");
    refused("a.1", ADS_ESYNTAX, 1, 2, "expected an operator or the end of the expression, "
                                     "found the number .1");
    refused("a.(b)", ADS_ESYNTAX, 1, 3, "expected an attribute name after '.', found '('");
    refused("[a = 1 b = 2]", ADS_ESYNTAX, 1, 8, "expected ';' or ']' after an attribute, "
                                               "found the name 'b'");
    refused("[a 1]", ADS_ESYNTAX, 1, 4, "expected '=' after an attribute name, found the "
                                       "number 1");
    refused("[1 = 2]", ADS_ESYNTAX, 1, 2, "expected an attribute name or ']' in a record, "
                                         "found the number 1");
    refused("1 | 3 | ;", ADS_ESYNTAX, 1, 9, "expected an expression, found ';'");
    refused("x =\n  = 1", ADS_ESYNTAX, 1, 3, "expected an operator or the end of the "
                                            "expression, found '='");
    refused("a +\n  )", ADS_ESYNTAX, 2, 3, "expected an expression, found ')'");
}

static void parser__record_parse(void **state)
{
    (void)state;
    const ads_record *r;
    ads_error err;
    const char *text = "[ Name = \"m1\"; Memory = 2048; Dbl = Memory * 2 ]";
    assert_int_equal(ads_record_parse(&r, arena, text, strlen(text), &err), 0);
    assert_int_equal(ads_record_size(r), 3);
    assert_non_null(ads_record_lookup(r, "MEMORY", 6));
    assert_null(ads_record_lookup(r, "disk", 4));
    assert_int_equal(ads_record_parse(&r, arena, "1 + 2", 5, &err), ADS_ESYNTAX);
    assert_string_equal(err.message, "expected '[' to start a record, found the number 1");
    assert_int_equal(ads_record_parse(&r, arena, "[a=1] x", 7, &err), ADS_ESYNTAX);
    assert_string_equal(err.message, "expected the end of the record, found the name 'x'");
    assert_int_equal(err.column, 7);
}

/* issue 11 item 6: HTCondor's job ads have `In = "/dev/null"`, and HTCondor
 * has no `in` operator; adstore's `in`, `is` and `isnt` are operators only
 * right after an operand. */
static void parser__keywords_as_attribute_names(void **state)
{
    (void)state;
    const ads_record *r;
    const ads_expr *e;
    ads_value v;
    ads_error err;
    const char *job = "[ Cmd = \"/bin/sleep\"; In = \"/dev/null\"; Out = \"o\"; Is = 1; "
                      "ISNT = 2; True = 3; error = 4; Undefined = 5; FALSE := 6 ]";
    assert_int_equal(ads_record_parse(&r, arena, job, strlen(job), &err), 0);
    assert_int_equal(ads_record_size(r), 9);
    assert_non_null(ads_record_lookup(r, "in", 2));
    assert_non_null(ads_record_lookup(r, "TRUE", 4));
    /* written back quoted (they are keywords), and that reads back */
    ads_buf b = ADS_BUF_INIT;
    ads_record_unparse(&b, r);
    assert_string_equal(ads_buf_cstr(&b),
                        "[ Cmd = \"/bin/sleep\"; 'In' = \"/dev/null\"; Out = \"o\"; 'Is' = 1; "
                        "'ISNT' = 2; 'True' = 3; 'error' = 4; 'Undefined' = 5; 'FALSE' = 6 ]");
    assert_int_equal(ads_record_parse(&r, arena, b.p, b.len, &err), 0);
    assert_int_equal(ads_record_size(r), 9);
    ads_buf_free(&b);
    /* referred to where an operand stands */
    ads_view view = ads_record_view(r, NULL);
    const char *truths[] = {
        "In == \"/dev/null\"",
        "\"/dev/null\" == In",
        "(In) is \"/dev/null\"",
        "strcat(In, \"\") == \"/dev/null\"",
        "In in { \"x\", \"/dev/null\" }",
        "Is + isnt == 3",
        "Is is 1 && ISNT isnt 1",
        "-Is == -1 && !Isnt == false",
        "{ In, Is }[1] == 1",
        "self.In == \"/dev/null\" && MY.is == 1",
        "'True' == 3 && 'error' == 4 && True",
        "[ in = 7 ].in == 7",
        ".In == \"/dev/null\"",
        "size(In)-9 == 0",
        "2 in { 1, 2 } && undefined is undefined && 1 isnt 2",
        "{ 1 } in { { 1 }, 2 } && (3 in { 1, 2 }) == false",
    };
    for (size_t i = 0; i < sizeof truths / sizeof truths[0]; i++) {
        if (ads_expr_parse(&e, arena, truths[i], strlen(truths[i]), &err))
            fail_msg("'%s': %s", truths[i], err.message);
        assert_int_equal(ads_expr_eval(&v, e, &view, arena), 0);
        if (v.type != ADS_BOOLEAN || !v.u.b)
            fail_msg("'%s' is not true (type %d)", truths[i], (int)v.type);
    }
    /* the tree says which is which */
    parses_as("In in In", "'In' in 'In'");
    parses_as("is is is", "'is' is 'is'");
    parses_as("isnt isnt isnt", "'isnt' isnt 'isnt'");
    parses_as("a.in", "a.'in'");
    /* after an operand the keyword is still the operator, so an operand
     * after that is missing */
    refused("a in", ADS_ESYNTAX, 1, 5, "expected an expression, found end of input");
    refused("1 is", ADS_ESYNTAX, 1, 5, "expected an expression, found end of input");
}

/* issue 11 item 4: a real followed by .name is a selection (error when
 * evaluated), as in HTCondor; a number with a stray '.' is still refused */
static void parser__select_after_a_real(void **state)
{
    (void)state;
    parses_as("1.5.x", "(1.5).x");
    parses_as("1e3.x", "(1000.0).x");
    parses_as("1.5.'a b'", "(1.5).'a b'");
    refused("1.5.5", ADS_ESYNTAX, 1, 4, "unexpected '.' in a number");
    refused("5.x", ADS_ESYNTAX, 1, 2, "expected a digit after '.' in a number");
    refused("1.5.", ADS_ESYNTAX, 1, 4, "unexpected '.' in a number");
}

/* Deep nesting is refused with ADS_ELIMIT, at every kind of nesting. */
static void parser__nesting_limit_is_an_error_not_a_crash(void **state)
{
    (void)state;
    static const char *const open[] = {"(", "{", "[a = ", "-", "!", "f("};
    for (size_t k = 0; k < sizeof open / sizeof open[0]; k++) {
        size_t depth = 100000, w = strlen(open[k]);
        char *text = malloc(depth * w + 2);
        assert_non_null(text);
        for (size_t i = 0; i < depth; i++)
            memcpy(text + i * w, open[k], w);
        text[depth * w] = '1';
        text[depth * w + 1] = '\0';
        const ads_expr *e;
        ads_error err;
        int rc = ads_expr_parse(&e, arena, text, depth * w + 1, &err);
        if (rc != ADS_ELIMIT)
            fail_msg("nesting '%s' x %zu: rc %d (%s)", open[k], depth, rc, err.message);
        assert_non_null(strstr(err.message, "nested deeper than"));
        free(text);
    }
    /* just under the limit parses and evaluates */
    char text[3 * 100 + 2];
    size_t n = 0;
    for (int i = 0; i < 100; i++)
        text[n++] = '(';
    text[n++] = '7';
    for (int i = 0; i < 100; i++)
        text[n++] = ')';
    text[n] = '\0';
    assert_int_equal(int_of(text), 7);
}

/* n terms joined by op; term is a printf format given the term's index. */
static char *chain_of(size_t n, const char *term, const char *op)
{
    ads_buf b = ADS_BUF_INIT;
    for (size_t i = 0; i < n; i++) {
        if (i)
            ads_buf_adds(&b, op);
        ads_buf_printf(&b, term, i);
    }
    assert_false(b.failed);
    char *t = strdup(ads_buf_cstr(&b));
    ads_buf_free(&b);
    return t;
}

/* A flat chain of one operator's operands is one level of nesting however
 * long (issue 10 item 8, issue 11 item 2): HTCondor reads them, and real
 * Requirements hold long || lists. */
static void parser__a_flat_chain_is_one_level_however_long(void **state)
{
    (void)state;
    static const size_t lengths[] = {400, 401, 1000, 300000};
    for (size_t k = 0; k < sizeof lengths / sizeof lengths[0]; k++) {
        char *sum = chain_of(lengths[k], "1", " + ");
        assert_int_equal(int_of(sum), (int64_t)lengths[k]);
        free(sum);
        /* mixed levels down the left: (1 * 2 - 1) + (1 * 2 - 1) + ... */
        char *mixed = chain_of(lengths[k], "1 * 2 - 1", " + ");
        assert_int_equal(int_of(mixed), (int64_t)lengths[k]);
        free(mixed);
        char *ors = chain_of(lengths[k], "Machine == \"m%zu\"", " || ");
        const ads_expr *e;
        ads_error err;
        if (ads_expr_parse(&e, arena, ors, strlen(ors), &err))
            fail_msg("%zu || terms: %s", lengths[k], err.message);
        free(ors);
    }
}

/* prefix, then unit n times, then suffix n times */
static char *nest(const char *prefix, const char *unit, size_t n, const char *mid,
                  const char *suffix)
{
    ads_buf b = ADS_BUF_INIT;
    ads_buf_adds(&b, prefix);
    for (size_t i = 0; i < n; i++)
        ads_buf_adds(&b, unit);
    ads_buf_adds(&b, mid);
    for (size_t i = 0; i < n; i++)
        ads_buf_adds(&b, suffix);
    assert_false(b.failed);
    char *t = strdup(ads_buf_cstr(&b));
    ads_buf_free(&b);
    return t;
}

/* Real nesting past the limit is refused where it goes past, with line and
 * column, however it nests: parentheses, and chains of selections and
 * subscripts (each walk recurses into their bases). */
static void parser__real_nesting_past_the_limit_names_line_and_column(void **state)
{
    (void)state;
    char *deep = nest("x +\n", "(", 400, "1", ")");
    refused(deep, ADS_ELIMIT, 2, 400, "expression nested deeper than 400 levels");
    free(deep);
    char *ok = nest("", "(", 399, "1", ")");
    assert_int_equal(int_of(ok), 1);
    free(ok);
    char *selects = nest("a", ".b", 100000, "", "");
    refused(selects, ADS_ELIMIT, 1, 800, "expression nested deeper than 400 levels");
    free(selects);
    char *subscripts = nest("a", "[0]", 100000, "", "");
    refused(subscripts, ADS_ELIMIT, 1, 1197, "expression nested deeper than 400 levels");
    free(subscripts);
}

/* e's operator and operands, down the right (right) or the left side:
 * "||(a, &&(b, ...))" written as the operators met and the last operand. */
static void walk(const ads_expr *e, bool right, char *out, size_t cap)
{
    size_t n = 0;
    out[0] = '\0';
    while (ads_expr_kind_of(e) == ADS_X_BINARY || ads_expr_kind_of(e) == ADS_X_AND ||
           ads_expr_kind_of(e) == ADS_X_OR) {
        ads_str leaf = ads_expr_name(ads_expr_arg(e, right ? 0 : 1));
        n += (size_t)snprintf(out + n, cap - n, "%.*s%s ", (int)leaf.len, leaf.p,
                              ads_expr_op(e));
        e = ads_expr_arg(e, right ? 1 : 0);
    }
    ads_str last = ads_expr_name(e);
    snprintf(out + n, cap - n, "%.*s", (int)last.len, last.p);
}

/* The tree of a chain of operators: tighter ones group first, and equal
 * ones from the left. */
static void parser__binary_operators_group_by_level_then_from_the_left(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        bool right; /* walk down the right operands (each operator tighter than the last) */
        const char *walk;
    } cases[] = {
        {"a || b && c | d ^ e & f == g < h << i + j * k", true,
         "a|| b&& c| d^ e& f== g< h<< i+ j* k"},
        {"k * j + i << h < g == f & e ^ d | c && b || a", false,
         "a|| b&& c| d^ e& f== g< h<< i+ j* k"},
        {"a - b - c - d", false, "d- c- b- a"},
        {"a || b || c", false, "c|| b|| a"},
        {"a == b != c =?= d", false, "dis c!= b== a"},
        {"a < b > c <= d >= e", false, "e>= d<= c> b< a"},
        {"a + b * c", true, "a+ b* c"},
        {"a * b + c", false, "c+ b* a"},
    };
    char got[256];
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const ads_expr *e;
        assert_int_equal(ads_expr_parse(&e, arena, cases[k].text, strlen(cases[k].text), NULL),
                         0);
        walk(e, cases[k].right, got, sizeof got);
        if (strcmp(got, cases[k].walk) != 0)
            fail_msg("'%s' walks as '%s', expected '%s'", cases[k].text, got, cases[k].walk);
    }
    /* a + b * c - d: the - takes (a + b * c) */
    const ads_expr *e;
    assert_int_equal(ads_expr_parse(&e, arena, "a + b * c - d", 13, NULL), 0);
    assert_string_equal(ads_expr_op(e), "-");
    assert_string_equal(ads_expr_op(ads_expr_arg(e, 0)), "+");
    assert_string_equal(ads_expr_op(ads_expr_arg(ads_expr_arg(e, 0), 1)), "*");
}

/* For every pair of binary operators x, y: a x b y c groups as (a x b) y c
 * when x binds at least as tightly as y, else as a x (b y c). */
static void parser__every_pair_of_binary_operators_groups_by_level(void **state)
{
    (void)state;
    static const struct {
        const char *text, *op; /* as written, as ads_expr_op spells it */
        int level;             /* shared/spec/classad.md: 1 = loosest */
    } ops[] = {
        {"||", "||", 1},   {"&&", "&&", 2},     {"|", "|", 3},       {"^", "^", 4},
        {"&", "&", 5},     {"==", "==", 6},     {"!=", "!=", 6},     {"=?=", "is", 6},
        {"=!=", "isnt", 6}, {"is", "is", 6},    {"isnt", "isnt", 6}, {"===", "===", 6},
        {"in", "in", 6},   {"<", "<", 7},       {"<=", "<=", 7},     {">", ">", 7},
        {">=", ">=", 7},   {"<<", "<<", 8},     {">>", ">>", 8},     {">>>", ">>>", 8},
        {"+", "+", 9},     {"-", "-", 9},       {"*", "*", 10},      {"/", "/", 10},
        {"%", "%", 10},
    };
    const size_t n = sizeof ops / sizeof ops[0];
    char text[64];
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < n; j++) {
            const ads_expr *e;
            snprintf(text, sizeof text, "a %s b %s c", ops[i].text, ops[j].text);
            if (ads_expr_parse(&e, arena, text, strlen(text), NULL))
                fail_msg("'%s' does not parse", text);
            bool left = ops[i].level >= ops[j].level;
            const char *root = left ? ops[j].op : ops[i].op;
            const ads_expr *inner = ads_expr_arg(e, left ? 0 : 1);
            const char *below = left ? ops[i].op : ops[j].op;
            if (strcmp(ads_expr_op(e), root) != 0 || strcmp(ads_expr_op(inner), below) != 0)
                fail_msg("'%s' groups as '%s' over '%s'", text, ads_expr_op(e),
                         ads_expr_op(inner));
        }
    }
}

/* An operator waiting for its right operand (one of each level, ten at
 * most) is a level of nesting, counted when the operand starts. */
static void parser__operators_waiting_for_an_operand_count_as_levels(void **state)
{
    (void)state;
    const char *rising = "a || b && c | d ^ e & f == g < h << i + j * k";
    char *ok = nest("", "(", 389, rising, ")");
    const ads_expr *e;
    assert_int_equal(ads_expr_parse(&e, arena, ok, strlen(ok), NULL), 0);
    free(ok);
    /* 390 parentheses + the chain + 10 waiting: over at `k` */
    char *deep = nest("", "(", 390, rising, ")");
    refused(deep, ADS_ELIMIT, 1, 435, "expression nested deeper than 400 levels");
    free(deep);
    /* falling levels complete each operator before the next waits */
    const char *falling = "k * j + i << h < g == f & e ^ d | c && b || a";
    ok = nest("", "(", 398, falling, ")");
    assert_int_equal(ads_expr_parse(&e, arena, ok, strlen(ok), NULL), 0);
    free(ok);
    deep = nest("", "(", 399, falling, ")");
    refused(deep, ADS_ELIMIT, 1, 404, "expression nested deeper than 400 levels");
    free(deep);
}

static void parser__null_and_oversized_arguments(void **state)
{
    (void)state;
    const ads_expr *e;
    ads_error err;
    assert_int_equal(ads_expr_parse(&e, NULL, "1", 1, &err), ADS_EINVAL);
    assert_int_equal(ads_expr_parse(&e, arena, NULL, 3, &err), ADS_EINVAL);
    assert_int_equal(ads_expr_parse(&e, arena, "1", ADS_MAX_TEXT + 1, &err), ADS_ELIMIT);
}

/* The tree must not depend on the caller's text after parsing. */
static void parser__tree_does_not_point_into_the_text(void **state)
{
    (void)state;
    char text[] = "[Memory = 2048; Arch = \"X86_64\"; Big = Memory * 2]";
    const ads_record *r;
    ads_value v;
    assert_int_equal(ads_record_parse(&r, arena, text, strlen(text), NULL), 0);
    memset(text, 'x', sizeof text - 1); /* the caller reuses its buffer */
    assert_int_equal(ads_record_eval_attr(&v, r, "Big", 3, arena), 0);
    assert_int_equal(v.type, ADS_INTEGER);
    assert_int_equal(v.u.i, 4096);
    assert_int_equal(ads_record_eval_attr(&v, r, "arch", 4, arena), 0);
    assert_int_equal(v.u.s.len, 6);
    assert_memory_equal(v.u.s.p, "X86_64", 6);
}

int main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(parser__precedence_follows_the_spec),
        T(parser__constructs),
        T(parser__syntax_errors_say_what_and_where),
        T(parser__record_parse),
        T(parser__nesting_limit_is_an_error_not_a_crash),
        T(parser__a_flat_chain_is_one_level_however_long),
        T(parser__real_nesting_past_the_limit_names_line_and_column),
        T(parser__null_and_oversized_arguments),
        T(parser__tree_does_not_point_into_the_text),
        T(parser__keywords_as_attribute_names),
        T(parser__select_after_a_real),
        T(parser__binary_operators_group_by_level_then_from_the_left),
        T(parser__operators_waiting_for_an_operand_count_as_levels),
        T(parser__every_pair_of_binary_operators_groups_by_level),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
