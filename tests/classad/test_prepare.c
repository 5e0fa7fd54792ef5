/*
 * tests/classad/test_prepare.c: classad/prepare.c, preparing an expression
 * for many evaluations: which subtrees fold into literals (no attribute read,
 * only pure functions), which stay as written (attribute reads, records,
 * lists holding anything not constant, the clock, randomness, the zone, the
 * scope), parentheses dropped, the original left untouched, the same value
 * as the unprepared expression in every case, and the errors (NULL
 * arguments, nesting past the limit).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "classad/classad.h"
#include "classad/classad_int.h"

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

static const char *expr_text(const ads_expr *e)
{
    static char text[512];
    ads_buf b = ADS_BUF_INIT;
    ads_expr_unparse(&b, e);
    snprintf(text, sizeof text, "%s", ads_buf_cstr(&b));
    ads_buf_free(&b);
    return text;
}

/* Each row: a text and its prepared tree unparsed; `literal` says whether
 * the whole of it folded into one literal. */
typedef struct row {
    const char *text, *shape;
    bool literal;
} row;

static void check_rows(const row *rows, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const ads_expr *p = prepared(rows[i].text);
        const char *got = expr_text(p);
        if (strcmp(got, rows[i].shape) != 0)
            fail_msg("'%s' prepares as '%s', expected '%s'", rows[i].text, got, rows[i].shape);
        if ((ads_expr_literal_value(p) != NULL) != rows[i].literal)
            fail_msg("'%s' %s a literal", rows[i].text,
                     rows[i].literal ? "should be" : "should not be");
    }
}

#define CHECK_ROWS(rows) check_rows(rows, sizeof(rows) / sizeof(rows)[0])

static void prepare__folds_constant_subtrees(void **state)
{
    (void)state;
    static const row rows[] = {
        {"1 + 2 * 3", "7", true},
        {"(1 + 2) * a", "3 * a", false},
        {"a + (2 * 3)", "a + 6", false},
        {"-(2)", "-2", true},
        {"!true", "false", true},
        {"~0", "-1", true},
        {"true && false", "false", true},
        {"false || true", "true", true},
        {"true ? 1 : 2", "1", true},
        {"a ? 1 + 1 : 2 * 3", "a ? 2 : 6", false},
        {"undefined ?: 3", "3", true},
        {"a ?: 1 + 1", "a ?: 2", false},
        {"{ 10, 20 }[1]", "20", true},
        {"x[1 + 0]", "x[1]", false},
        {"\"a\" is \"a\"", "true", true},
        {"1 / 0", "error", true},
        {"undefined.a", "undefined", true},
        {"`1m` * 2", "`2m`", true},
        {"a == 2 + 2 && b < 10 * 10", "a == 4 && b < 100", false},
    };
    CHECK_ROWS(rows);
}

static void prepare__folds_calls_of_pure_functions_with_constant_arguments(void **state)
{
    (void)state;
    static const row rows[] = {
        {"strcat(\"a\", \"b\")", "\"ab\"", true},
        {"size({ 1, 2 })", "2", true},
        {"toUpper(\"x\") == \"X\"", "true", true},
        {"ifThenElse(true, 1, 2)", "1", true},
        {"floor(2.5)", "2", true},
        {"member(1, { 1, 2 })", "true", true},
        {"regexp(\"a.\", \"ab\")", "true", true},
        {"relTime(60)", "`1m`", true},
        {"int(\"42\")", "42", true},
        {"ISUNDEFINED(1)", "false", true},
        {"string(#1495)", "\"1495\"", true},
        {"id(\"1495\")", "#1495", true},
        {"versioncmp(\"1.10\", \"1.9\")", "1", true},
        {"splitUserName(\"u@d\")", "{ \"u\", \"d\" }", true},
        {"userMap(\"m\", \"u\", \"g\", \"d\")", "\"d\"", true},
        /* a call with an argument to read keeps its call, arguments folded */
        {"strcat(a, 1 + 2)", "strcat(a, 3)", false},
        {"isUndefined(a)", "isUndefined(a)", false},
        {"ifThenElse(true, 1, a)", "ifThenElse(true, 1, a)", false},
        /* an unknown function is error whatever its constant arguments */
        {"nosuch(1)", "error", true},
        {"nosuch()", "error", true},
        {"nosuch(a)", "nosuch(a)", false},
        /* wrong arity of a pure function is error too */
        {"floor(1, 2)", "error", true},
    };
    CHECK_ROWS(rows);
}

static void prepare__leaves_clock_randomness_zone_and_scope_to_evaluation(void **state)
{
    (void)state;
    static const row rows[] = {
        {"time()", "time()", false},
        {"now()", "now()", false},
        {"currentTime()", "currentTime()", false},
        {"random(10)", "random(10)", false},
        {"absTime(0)", "absTime(0)", false},
        {"string(absTime(0))", "string(absTime(0))", false},
        {"formatTime(0)", "formatTime(0)", false},
        {"getYear(absTime(0))", "getYear(absTime(0))", false},
        {"eval(\"1\")", "eval(\"1\")", false},
        {"unparse(a)", "unparse(a)", false},
        {"debug(1)", "debug(1)", false},
        {"self.a", "self.a", false},
        {"parent.a", "parent.a", false},
        {"toplevel.a", "toplevel.a", false},
        {".a", ".a", false},
        {"a", "a", false},
        {"false || a", "false || a", false},
    };
    CHECK_ROWS(rows);
}

static void prepare__lists_fold_whole_or_stay_as_written(void **state)
{
    (void)state;
    static const row rows[] = {
        {"{ 1, 2 + 3 }", "{ 1, 5 }", true},
        {"{ }", "{ }", true},
        {"{ 1, { 2 * 2 } }", "{ 1, { 4 } }", true},
        /* one item to read keeps every item as written */
        {"{ 1 + 1, a }", "{ 1 + 1, a }", false},
        {"{ (1), a }", "{ (1), a }", false},
        {"size({ 1 + 1, a })", "size({ 1 + 1, a })", false},
        /* a folded list keeps its source text, which string() shows */
        {"string({ 1, 1 + 1 })", "\"{ 1,1 + 1 }\"", true},
        {"({ 1 })", "{ 1 }", true},
    };
    CHECK_ROWS(rows);
}

static void prepare__records_are_left_for_their_own_scope(void **state)
{
    (void)state;
    static const row rows[] = {
        {"[ a = 1 + 1 ]", "[ a = 1 + 1 ]", false},
        {"[ a = 1 + 1 ].a", "[ a = 1 + 1 ].a", false},
        {"[ ]", "[ ]", false},
        {"size([ a = 1 ])", "size([ a = 1 ])", false},
        {"{ [ a = 1 ] }", "{ [ a = 1 ] }", false},
    };
    CHECK_ROWS(rows);
    ads_value v;
    assert_int_equal(ads_expr_eval(&v, prepared("[ a = 1 + 1; b = a * 3 ].b"), NULL, arena), 0);
    assert_int_equal(v.type, ADS_INTEGER);
    assert_int_equal(v.u.i, 6);
}

static void prepare__drops_parentheses_and_unparse_adds_what_precedence_needs(void **state)
{
    (void)state;
    static const row rows[] = {
        {"((a))", "a", false},
        {"(a) + (b)", "a + b", false},
        {"(a + b) * c", "(a + b) * c", false},
        {"a - (b - c)", "a - (b - c)", false},
        {"(a * b) + c", "a * b + c", false},
        {"(1)", "1", true},
    };
    CHECK_ROWS(rows);
    /* no parentheses node is left in the tree */
    const ads_expr *p = prepared("(a + b) * (c)");
    assert_int_equal(p->kind, N_BINARY);
    assert_int_equal(p->u.ops.a->kind, N_BINARY);
    assert_int_equal(p->u.ops.b->kind, N_ATTR);
    p = prepared("f((a), ((b)))");
    assert_int_equal(p->kind, N_CALL);
    assert_int_equal(p->u.call.args[0]->kind, N_ATTR);
    assert_int_equal(p->u.call.args[1]->kind, N_ATTR);
    p = prepared("(x).y");
    assert_int_equal(p->kind, N_SELECT);
    assert_int_equal(p->u.sel.base->kind, N_ATTR);
}

static void prepare__leaves_the_original_tree_as_it_was(void **state)
{
    (void)state;
    const char *text = "(1 + 2) * a + strcat(\"x\", \"y\") + (b)";
    const ads_expr *e = parse(text), *p;
    assert_int_equal(ads_expr_prepare(&p, arena, e, NULL), 0);
    assert_ptr_not_equal(p, e);
    assert_string_equal(expr_text(e), text);
    assert_string_equal(expr_text(p), "3 * a + \"xy\" + b");
    /* preparing a prepared tree changes nothing more */
    const ads_expr *again;
    assert_int_equal(ads_expr_prepare(&again, arena, p, NULL), 0);
    assert_string_equal(expr_text(again), "3 * a + \"xy\" + b");
}

/* expr evaluates in ctx to the same value, prepared or not. */
static void same_value(const ads_record *ctx, const char *expr)
{
    const ads_expr *e = parse(expr), *p;
    ads_error err;
    if (ads_expr_prepare(&p, arena, e, &err))
        fail_msg("prepare '%s': %s", expr, err.message);
    ads_view view = ads_record_view(ctx, NULL);
    ads_value want, got;
    assert_int_equal(ads_expr_eval(&want, e, &view, arena), 0);
    assert_int_equal(ads_expr_eval(&got, p, &view, arena), 0);
    ads_buf a = ADS_BUF_INIT, b = ADS_BUF_INIT;
    ads_value_unparse(&a, &want);
    ads_value_unparse(&b, &got);
    if (!ads_value_same(&want, &got) || strcmp(ads_buf_cstr(&a), ads_buf_cstr(&b)) != 0)
        fail_msg("'%s': %s unprepared, %s prepared", expr, ads_buf_cstr(&a), ads_buf_cstr(&b));
    ads_buf_free(&a);
    ads_buf_free(&b);
}

static void prepare__prepared_expressions_evaluate_to_the_same_values(void **state)
{
    (void)state;
    static const char *const exprs[] = {
        "a + 1 * 2",
        "x[a - 2] + x[0]",
        "s == \"STR\" && a > 2",
        "r.p + (1 + 1)",
        "{ a, 1 + 1 }",
        "string({ a, 1 + 1 })",
        "string({ 1, 1 + 1 })",
        "size(x) + size({ 1, 2 })",
        "member(a, { 1, 2, 3 })",
        "[ q = a + 1; w = 2 * 2 ]",
        "ifThenElse(a > 1, \"big\", 1 / 0)",
        "strcat(s, \"-\", 1 + 1, 2.5)",
        "(a ?: 0) + (undefined ?: 4)",
        "nosuch(a) + 1",
        "isError(1 / 0) && isUndefined(zz)",
        "-(a) * -(2)",
        "x.p",
        "{ r, [ p = 2 ] }.p",
        "unparse(a) + \"\"",
        "eval(\"a + 1\")",
        "self.a + parent.a",
        "`2011-12-13T12:00:00Z` + relTime(3600 * 24)",
        "real(\"NaN\") is real(\"NaN\")",
        "(1 << 63) - 1",
    };
    const ads_record *ctx;
    const char *ctx_text = "[ a = 3; x = { 1, 2, 3 }; s = \"str\"; r = [ p = 1 ] ]";
    assert_int_equal(ads_record_parse(&ctx, arena, ctx_text, strlen(ctx_text), NULL), 0);
    for (size_t i = 0; i < sizeof exprs / sizeof exprs[0]; i++)
        same_value(ctx, exprs[i]);
}

/* a + a + ... (n terms): a left-leaning tree n - 1 operators deep. */
static char *sum_of(int n, const char *term)
{
    size_t tl = strlen(term);
    char *t = malloc((size_t)n * (tl + 3) + 1);
    size_t o = 0;
    for (int i = 0; i < n; i++) {
        if (i) {
            memcpy(t + o, " + ", 3);
            o += 3;
        }
        memcpy(t + o, term, tl);
        o += tl;
    }
    t[o] = '\0';
    return t;
}

/* A flat chain is one level however long (issue 10 item 8, issue 11 item
 * 2): preparing folds a constant one of 401 or 300,000 operands to one
 * literal, keeps one that reads attributes (it evaluates to the sum), and
 * never recurses per operand. */
static void prepare__a_flat_chain_is_one_level_however_long(void **state)
{
    (void)state;
    static const int lengths[] = {ADS_MAX_DEPTH, ADS_MAX_DEPTH + 1, 300000};
    const ads_record *ctx;
    assert_int_equal(ads_record_parse(&ctx, arena, "[a = 2]", 7, NULL), 0);
    ads_view view = ads_record_view(ctx, NULL);
    for (size_t k = 0; k < sizeof lengths / sizeof lengths[0]; k++) {
        char *ones = sum_of(lengths[k], "1"), *as = sum_of(lengths[k], "a");
        const ads_value *v = ads_expr_literal_value(prepared(ones));
        assert_non_null(v);
        assert_int_equal(v->type, ADS_INTEGER);
        assert_int_equal(v->u.i, lengths[k]);
        const ads_expr *p = prepared(as);
        ads_value val;
        assert_null(ads_expr_literal_value(p));
        assert_int_equal(ads_expr_eval(&val, p, &view, arena), 0);
        assert_int_equal(val.type, ADS_INTEGER);
        assert_int_equal(val.u.i, 2 * (int64_t)lengths[k]);
        free(ones);
        free(as);
    }
    /* constant parts fold inside a chain that is not constant: a + 1 + 2
     * is (a + 1) + 2, nothing to fold; 1 + 2 + a folds its first operator */
    assert_string_equal(expr_text(prepared("1 + 2 + a")), "3 + a");
    assert_string_equal(expr_text(prepared("a + 1 + 2")), "a + 1 + 2");
    assert_string_equal(expr_text(prepared("a || (1 < 2) && b")), "a || true && b");
}

static void prepare__null_arguments_are_refused(void **state)
{
    (void)state;
    const ads_expr *e = parse("1"), *out;
    ads_error err;
    memset(&err, 0, sizeof err);
    assert_int_equal(ads_expr_prepare(NULL, arena, e, &err), ADS_EINVAL);
    assert_string_equal(err.message, "prepare: NULL argument");
    memset(&err, 0, sizeof err);
    assert_int_equal(ads_expr_prepare(&out, NULL, e, &err), ADS_EINVAL);
    assert_string_equal(err.message, "prepare: NULL argument");
    memset(&err, 0, sizeof err);
    assert_int_equal(ads_expr_prepare(&out, arena, NULL, &err), ADS_EINVAL);
    assert_string_equal(err.message, "prepare: NULL argument");
    assert_int_equal(ads_expr_prepare(&out, arena, NULL, NULL), ADS_EINVAL);
}

typedef struct job {
    const ads_expr *e;
    const ads_record *r;
    int errors;
} job;

static void *eval_many(void *arg)
{
    job *j = arg;
    ads_arena *a = ads_arena_new();
    ads_view v = ads_record_view(j->r, NULL);
    for (int i = 0; i < 5000; i++) {
        ads_value out;
        if (ads_expr_eval(&out, j->e, &v, a) || out.type != ADS_BOOLEAN || !out.u.b)
            j->errors++;
        ads_arena_reset(a);
    }
    ads_arena_free(a);
    return NULL;
}

static void prepare__one_prepared_expression_many_threads(void **state)
{
    (void)state;
    const char *ctx = "[ Memory = 2048; Owner = \"alice\"; L = { 1, 2, 3 } ]";
    const ads_record *r;
    assert_int_equal(ads_record_parse(&r, arena, ctx, strlen(ctx), NULL), 0);
    const ads_expr *p = prepared("Memory > 1024 * (1 + 0) && Owner == toLower(\"ALICE\") && "
                                 "size(L) == size({ 1, 2, 3 }) && member(2, L)");
    assert_string_equal(expr_text(p),
                        "Memory > 1024 && Owner == \"alice\" && size(L) == 3 && member(2, L)");
    job jobs[3];
    pthread_t th[3];
    for (int i = 0; i < 3; i++) {
        jobs[i] = (job){p, r, 0};
        assert_int_equal(pthread_create(&th[i], NULL, eval_many, &jobs[i]), 0);
    }
    for (int i = 0; i < 3; i++) {
        pthread_join(th[i], NULL);
        assert_int_equal(jobs[i].errors, 0);
    }
}

int main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(prepare__folds_constant_subtrees),
        T(prepare__folds_calls_of_pure_functions_with_constant_arguments),
        T(prepare__leaves_clock_randomness_zone_and_scope_to_evaluation),
        T(prepare__lists_fold_whole_or_stay_as_written),
        T(prepare__records_are_left_for_their_own_scope),
        T(prepare__drops_parentheses_and_unparse_adds_what_precedence_needs),
        T(prepare__leaves_the_original_tree_as_it_was),
        T(prepare__prepared_expressions_evaluate_to_the_same_values),
        T(prepare__a_flat_chain_is_one_level_however_long),
        T(prepare__null_arguments_are_refused),
        T(prepare__one_prepared_expression_many_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
