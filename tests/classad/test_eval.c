/*
 * tests/classad/test_eval.c: evaluation beyond the conformance vectors:
 * scopes (self, parent, toplevel, root, .name), cycles and deep chains
 * (error, never a crash), integer edge cases without undefined behaviour,
 * selection over lists, eager records, custom views (including one that
 * reports corruption), and one parsed expression evaluated by many threads.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "classad/classad.h"

#include "tests/classad/arena_fixture.h"

static ads_value eval_in(const char *ctx, const char *expr)
{
    const ads_record *r;
    const ads_expr *e;
    ads_error err;
    ads_value v;
    if (ads_record_parse(&r, arena, ctx, strlen(ctx), &err))
        fail_msg("context: %s", err.message);
    if (ads_expr_parse(&e, arena, expr, strlen(expr), &err))
        fail_msg("'%s': %s", expr, err.message);
    ads_view view = ads_record_view(r, NULL);
    assert_int_equal(ads_expr_eval(&v, e, &view, arena), 0);
    return v;
}

static void is_text(const char *ctx, const char *expr, const char *text)
{
    ads_value v = eval_in(ctx, expr);
    ads_buf b = ADS_BUF_INIT;
    ads_value_unparse(&b, &v);
    if (strcmp(ads_buf_cstr(&b), text) != 0)
        fail_msg("%s in %s: got %s, expected %s", expr, ctx, ads_buf_cstr(&b), text);
    ads_buf_free(&b);
}

static void eval__scopes(void **state)
{
    (void)state;
    const char *ctx = "[a = 1; x = [a = 2; y = [a = 3; p = parent.a; s = self.a; t = "
                      "toplevel.a; r = root.a; d = .a; u = a]]]";
    is_text(ctx, "x.y.p", "2");
    is_text(ctx, "x.y.s", "3");
    is_text(ctx, "x.y.t", "1");
    is_text(ctx, "x.y.r", "1");
    is_text(ctx, "x.y.d", "1");
    is_text(ctx, "x.y.u", "3");
    /* an attribute named like a special name wins */
    is_text("[self = 5; z = self]", "z", "5");
    is_text("[parent = [a = 9]; z = parent.a]", "z", "9");
    /* outward lookup from a nested record */
    is_text("[m = 7; x = [y = m + 1]]", "x.y", "8");
    is_text("[]", "parent.a", "undefined");
    is_text("[a = 4]", "self", "[ a = 4 ]");
}

static void eval__cycles_are_error(void **state)
{
    (void)state;
    is_text("[a = b; b = a]", "a", "error");
    is_text("[a = a + 1]", "a", "error");
    is_text("[a = b + 1; b = c + 1; c = a + 1]", "b", "error");
    is_text("[x = [a = y.b]; y = [b = x.a]]", "x.a", "error");
    /* the same attribute twice without a cycle is fine */
    is_text("[a = 2; b = a * a + a]", "b", "6");
}

/* Attributes built in layers (a0 = a1 + a1, a1 = a2 + a2, ...) double the
 * work per layer; past the budget of followed references they give error
 * instead of running for ages, and below it they evaluate. */
static void eval__layered_references_stop_at_the_budget(void **state)
{
    (void)state;
    ads_buf b = ADS_BUF_INIT;
    ads_buf_adds(&b, "[");
    for (int i = 0; i < 60; i++)
        ads_buf_printf(&b, "a%d = a%d + a%d; ", i, i + 1, i + 1);
    ads_buf_adds(&b, "a60 = 1 ]");
    is_text(ads_buf_cstr(&b), "a0", "error");
    is_text(ads_buf_cstr(&b), "a45", "32768"); /* 2^15 leaves: under the budget */
    ads_buf_free(&b);
}

static void eval__deep_chains_are_error_not_crash(void **state)
{
    (void)state;
    /* a0 = a1 + 1, a1 = a2 + 1, ... far deeper than the limit */
    enum { N = 5000 };
    ads_buf b = ADS_BUF_INIT;
    ads_buf_adds(&b, "[");
    for (int i = 0; i < N; i++)
        ads_buf_printf(&b, "a%d = a%d + 1; ", i, i + 1);
    ads_buf_printf(&b, "a%d = 0]", N);
    ads_value v = eval_in(ads_buf_cstr(&b), "a0");
    assert_int_equal(v.type, ADS_ERROR);
    v = eval_in(ads_buf_cstr(&b), "a4990");
    assert_int_equal(v.type, ADS_INTEGER);
    assert_int_equal(v.u.i, 10);
    ads_buf_free(&b);
}

/* n terms joined by op, each term a printf format given its index; with a
 * prefix and a suffix (a record around it, say). Freed by the caller. */
static char *chain(const char *prefix, size_t n, const char *term, const char *op,
                   const char *suffix)
{
    ads_buf b = ADS_BUF_INIT;
    ads_buf_adds(&b, prefix);
    for (size_t i = 0; i < n; i++) {
        if (i)
            ads_buf_adds(&b, op);
        ads_buf_printf(&b, term, i);
    }
    ads_buf_adds(&b, suffix);
    assert_false(b.failed);
    char *t = strdup(ads_buf_cstr(&b));
    ads_buf_free(&b);
    return t;
}

/* Issue 11 item 2, issue 10 item 8: a flat chain is one level of depth
 * however long, evaluates as HTCondor does, and never recurses per operand
 * (300,000 terms ran the stack out). */
static void eval__a_flat_chain_is_one_level_however_long(void **state)
{
    (void)state;
    static const size_t lengths[] = {400, 401, 1000};
    for (size_t k = 0; k < sizeof lengths / sizeof lengths[0]; k++) {
        size_t n = lengths[k];
        char *ors = chain("", n, "Machine == \"m%zu\"", " || ", "");
        is_text("[Machine = \"m3\"]", ors, "true");
        is_text("[Machine = \"m399\"]", ors, "true");
        is_text("[Machine = \"none\"]", ors, "false");
        is_text("[]", ors, "undefined"); /* undefined == "m0" || ... */
        free(ors);
        char *sum = chain("", n, "1", " + ", "");
        char want[32];
        snprintf(want, sizeof want, "%zu", n);
        is_text("[]", sum, want);
        free(sum);
        /* left to right: the last operand decides */
        char *ands = chain("", n, "true", " && ", " && x");
        is_text("[x = false]", ands, "false");
        is_text("[x = 7]", ands, "true");
        is_text("[]", ands, "undefined");
        free(ands);
    }
    char *big = chain("", 300000, "1", " + ", "");
    is_text("[]", big, "300000");
    free(big);
    big = chain("", 300000, "x", " && ", "");
    is_text("[x = true]", big, "true");
    free(big);
    /* 1 - 1 - 1 ...: left-associative, (1 - 1) - 1 */
    big = chain("", 300000, "1", " - ", "");
    is_text("[]", big, "-299998");
    free(big);
}

/* The rules for undefined and error, and && / || short-circuits, hold at
 * every place in a chain, as they do for one operator. */
static void eval__chains_keep_the_undefined_and_error_rules(void **state)
{
    (void)state;
    is_text("[]", "false && error && error", "false");
    is_text("[]", "true || error || error", "true");
    is_text("[]", "false || error || true", "error");
    is_text("[]", "undefined && false", "false");
    is_text("[]", "undefined && true && true", "undefined");
    is_text("[]", "undefined || true", "true");
    is_text("[]", "1 + 2 * 3 - 4 / 2 + undefined", "undefined");
    is_text("[]", "1 + 2 + \"a\" + 3", "error");
    is_text("[]", "1 < 2 == true && 3 > 2 || false", "true");
    is_text("[x = 1]", "x == 1 ? 1 + 1 + 1 : 2 + 2", "3");
    is_text("[]", "- - - - 5", "5");
    is_text("[]", "!!!!true && !false", "true");
    is_text("[a = 2]", "a * a + a * a - a * a + a", "6");
}

/* unresolved() walks an attribute's expression: a chain of 1000 names is
 * one level too (it was error past 400). */
static void eval__unresolved_walks_a_long_chain(void **state)
{
    (void)state;
    char *rec = chain("[r = ", 1000, "m%zu", " || ", "; m5 = true]");
    ads_value v = eval_in(rec, "unresolved(r)");
    assert_int_equal(v.type, ADS_STRING);
    assert_true(v.u.s.len > 8 && memcmp(v.u.s.p, "m0,m1,m10,m100,", 15) == 0);
    assert_null(memmem(v.u.s.p, v.u.s.len, ",m5,", 4));
    free(rec);
}

static void eval__integer_edges_wrap_without_ub(void **state)
{
    (void)state;
    is_text("[]", "9223372036854775807 + 1", "-9223372036854775808");
    is_text("[]", "-9223372036854775808 - 1", "9223372036854775807");
    is_text("[]", "-9223372036854775808 * -1", "-9223372036854775808");
    is_text("[]", "-9223372036854775808 / -1", "-9223372036854775808");
    is_text("[]", "-9223372036854775808 % -1", "0");
    is_text("[]", "-(-9223372036854775808)", "-9223372036854775808");
    is_text("[]", "1 << 63", "-9223372036854775808");
    is_text("[]", "1 << 64", "error");
    is_text("[]", "1 << -1", "error");
    is_text("[]", "-8 >> 1", "-4");
    is_text("[]", "-8 >>> 60", "15");
    is_text("[]", "~0", "-1");
}

static void eval__reals_and_nan(void **state)
{
    (void)state;
    is_text("[]", "real(\"NaN\") != real(\"NaN\")", "true");
    is_text("[]", "real(\"NaN\") < 1", "false");
    is_text("[]", "real(\"NaN\") is real(\"NaN\")", "true");
    /* a result past the largest double is error, as HTCondor checks it
     * against HUGE_VAL; -infinity and NaN stay */
    is_text("[]", "1e308 * 10", "error");
    is_text("[]", "1e308 + 1e308", "error");
    is_text("[]", "-1e308 - 1e308", "real(\"-INF\")");
    is_text("[]", "real(\"INF\") + 0", "error");
    is_text("[]", "real(\"INF\")", "real(\"INF\")");
    is_text("[]", "sum({1e308, 1e308})", "error");
    is_text("[]", "0.0 * real(\"INF\")", "real(\"NaN\")");
    is_text("[]", "-1e308 * 10", "real(\"-INF\")");
    is_text("[]", "0.1 + 0.2", "0.30000000000000004");
    is_text("[]", "2.0", "2.0");
    is_text("[]", "1e100", "1e+100");
}

static void eval__lists_and_records(void **state)
{
    (void)state;
    is_text("[l = {[a = 1], [a = 2], 3, undefined}]", "l.a", "{ 1, 2, error, undefined }");
    is_text("[]", "{ }.a", "{ }");
    is_text("[a = 123; b = 456]", "[ c = a + b; d = e ]", "[ c = 579; d = undefined ]");
    is_text("[]", "[ a = 1; b = [ c = a ] ].b.c", "1");
    is_text("[]", "{1, {2, 3}}[1][0]", "2");
    is_text("[]", "[a = 1][\"A\"]", "1");
    is_text("[]", "\"abc\"[0]", "error");
    is_text("[]", "{1}[1.0]", "error");
}

static void eval__identifiers_and_times(void **state)
{
    (void)state;
    is_text("[]", "#1495 < #1496", "true");
    is_text("[]", "#1495 == \"1495\"", "undefined");
    is_text("[]", "#1495 + 1", "error");
    is_text("[]", "`2011-12-13T12:00:00Z` - `2011-12-13T11:00:00Z`", "`1h`");
    is_text("[]", "`2011-12-13T12:00:00-05:00` + `1d`", "`2011-12-14T12:00:00-05:00`");
    is_text("[]", "`1m` * 2.5", "`2m30s`");
    is_text("[]", "`1m` / 0", "error");
    is_text("[]", "`1m` < 61", "error");
}

/* A view whose records report corruption: lookups give error values. */
static int broken_lookup(const void *self, const char *name, size_t len, uint32_t hash,
                         ads_arena *a, ads_value *value, const ads_expr **expr)
{
    (void)self, (void)name, (void)len, (void)hash, (void)a, (void)value, (void)expr;
    return ADS_ECORRUPT;
}

static void eval__a_view_reporting_corruption_gives_error(void **state)
{
    (void)state;
    static const ads_view_ops ops = {broken_lookup};
    ads_view v = {&ops, NULL, NULL};
    const ads_expr *e;
    ads_value out;
    assert_int_equal(ads_expr_parse(&e, arena, "Memory > 5 || true", 18, NULL), 0);
    assert_int_equal(ads_expr_eval(&out, e, &v, arena), 0);
    assert_int_equal(out.type, ADS_ERROR);
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
    for (int i = 0; i < 20000; i++) {
        ads_value out;
        if (ads_expr_eval(&out, j->e, &v, a) || out.type != ADS_BOOLEAN || !out.u.b)
            j->errors++;
        ads_arena_reset(a);
    }
    ads_arena_free(a);
    return NULL;
}

static void eval__one_expression_many_threads(void **state)
{
    (void)state;
    const char *ctx = "[Memory = 2048; Arch = \"X86_64\"; Disk = 50; Owner = \"alice\"; "
                      "L = {1, 2, 3}]";
    const char *expr = "Memory > 1024 && Arch == \"x86_64\" && (Disk >= 100000 || Owner == "
                       "\"alice\") && size(L) == 3 && strcat(Owner, \"!\") == \"ALICE!\"";
    job jobs[4];
    pthread_t th[4];
    const ads_record *r;
    const ads_expr *e;
    assert_int_equal(ads_record_parse(&r, arena, ctx, strlen(ctx), NULL), 0);
    assert_int_equal(ads_expr_parse(&e, arena, expr, strlen(expr), NULL), 0);
    for (int i = 0; i < 4; i++) {
        jobs[i] = (job){e, r, 0};
        assert_int_equal(pthread_create(&th[i], NULL, eval_many, &jobs[i]), 0);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        assert_int_equal(jobs[i].errors, 0);
    }
}

static void eval__record_eval_attr(void **state)
{
    (void)state;
    const ads_record *r;
    ads_value v;
    assert_int_equal(ads_record_parse(&r, arena, "[a = 2; b = a * 3]", 18, NULL), 0);
    assert_int_equal(ads_record_eval_attr(&v, r, "B", 1, arena), 0);
    assert_int_equal(v.u.i, 6);
    assert_int_equal(ads_record_eval_attr(&v, r, "c", 1, arena), 0);
    assert_int_equal(v.type, ADS_UNDEFINED);
}

/* issue 11 item 1: MY is the record holding the expression */
static void eval__my_is_the_record_itself(void **state)
{
    (void)state;
    is_text("[x = 3; y = MY.x]", "y", "3");
    is_text("[x = 3]", "my.x + MY.x", "6");
    /* a real partitionable slot's Unhibernate */
    is_text("[MachineLastMatchTime = 5; Unhibernate = MY.MachineLastMatchTime =!= undefined]",
            "Unhibernate", "true");
    is_text("[Unhibernate = MY.MachineLastMatchTime =!= undefined]", "Unhibernate", "false");
    /* MY in a nested record is that record; missing names fall back outward */
    is_text("[a = 1; x = [a = 2; m = MY.a; o = MY.b]; b = 7]", "{ x.m, x.o }", "{ 2, 7 }");
    is_text("[a = 4]", "MY", "[ a = 4 ]");
    /* an attribute named MY is an attribute */
    is_text("[MY = [x = 9]; x = 1; y = MY.x]", "y", "9");
}

/* issue 11 item 1: CurrentTime is time() unless an attribute has the name */
static void eval__current_time_is_time(void **state)
{
    (void)state;
    is_text("[]", "isInteger(CurrentTime) && CurrentTime > 1000000000", "true");
    is_text("[]", "CurrentTime - time() <= 1", "true");
    is_text("[CurrentTime = 5]", "CurrentTime", "5");
    is_text("[]", "'CurrentTime'", "undefined");
}

/* issue 11 item 3: selection falls back to the records enclosing the one
 * selected from, where it is written (HTCondor's LookupInScope) */
static void eval__select_falls_back_to_enclosing_scopes(void **state)
{
    (void)state;
    is_text("[s = \"Hello\"; n = [i = 70]]", "n.s", "\"Hello\"");
    is_text("[]", "[a = 1; b = [c = 2]].b.a", "1");
    is_text("[x = [a = 1]]", "x.parent", "[ x = [ a = 1 ] ]");
    is_text("[x = [a = 1]]", "x.parent.x.a", "1");
    is_text("[q = 5; x = [a = 1]]", "x.toplevel.q", "5");
    is_text("[q = 5; x = [y = [a = 1]]]", "x.y.q + x.y.parent.parent.q", "10");
    /* the nearest record holding the name wins, and the record's own first */
    is_text("[a = 1; x = [a = 2; y = [b = 3]]]", "{ x.y.a, x.y.b, x.a }", "{ 2, 3, 2 }");
    /* a name nothing has is still undefined */
    is_text("[n = [i = 70]]", "n.zz", "undefined");
    /* members are evaluated where they are written: y's `a` is x's */
    is_text("[a = 1; x = [a = 2; y = a * 10]]", "x.y", "20");
    /* lists of records: each element falls back to where the list is */
    is_text("[s = 9; l = { [a = 1], [b = 2] }]", "l.s", "{ 9, 9 }");
    is_text("[s = 9; l = { [a = 1], [s = 2] }]", "l.s", "{ 9, 2 }");
    /* a record made by a function encloses nothing */
    is_text("[s = 9]", "ifThenElse(true, [a = 1], 0).s", "undefined");
    /* the fallback does not change what a found attribute gives */
    is_text("[a = 1; x = [b = a + 1]]", "x.b", "2");
    /* cycles through a fallback are still error */
    is_text("[a = x.a; x = [b = 1]]", "a", "error");
    /* a record taken from a list is enclosed where the expression is */
    is_text("[s = 3]", "{ [a = 1] }[0].s", "3");
    /* prepared the same */
    const ads_record *r;
    const ads_expr *e, *pe;
    ads_value v;
    assert_int_equal(ads_record_parse(&r, arena, "[s = 3]", 7, NULL), 0);
    assert_int_equal(ads_expr_parse(&e, arena, "{ [a = 1] }[0].s", 16, NULL), 0);
    assert_int_equal(ads_expr_prepare(&pe, arena, e, NULL), 0);
    ads_view view = ads_record_view(r, NULL);
    assert_int_equal(ads_expr_eval(&v, pe, &view, arena), 0);
    assert_int_equal(v.type, ADS_INTEGER);
    assert_int_equal(v.u.i, 3);
}

/* issue 11 item 4: a selection from a real is error, not a syntax error */
static void eval__select_from_a_number_is_error(void **state)
{
    (void)state;
    is_text("[]", "1.5.x", "error");
    is_text("[]", "1e3.x", "error");
    is_text("[]", "(3).x", "error");
    is_text("[]", "isError(1.5.x)", "true");
}

/* issue 11 item 1: TARGET is the other record of a match */
static void eval__target_is_the_other_record_of_a_match(void **state)
{
    (void)state;
    const ads_record *jobr, *machine;
    const ads_expr *e;
    ads_value v;
    const char *jt = "[Owner = \"ann\"; RequestMemory = 1024; Name = \"job\";"
                     " Nested = [y = Memory];"
                     " Requirements = TARGET.Memory >= MY.RequestMemory && Arch == \"X86_64\"]";
    const char *mt = "[Memory = 2048; Arch = \"X86_64\"; Name = \"m1\";"
                     " Requirements = TARGET.Owner == \"ann\";"
                     " Who = TARGET.Name; Me = MY.Name; Top = toplevel.Name;"
                     " Wants = RequestMemory]";
    assert_int_equal(ads_record_parse(&jobr, arena, jt, strlen(jt), NULL), 0);
    assert_int_equal(ads_record_parse(&machine, arena, mt, strlen(mt), NULL), 0);
    ads_view jv = ads_record_view(jobr, NULL), mv = ads_record_view(machine, NULL);
    struct {
        const char *expr, *text;
    } rows[] = {
        {"TARGET.Memory", "2048"},
        /* the job has no Arch: the machine's (HTCondor's matchmaker) */
        {"MY.Requirements", "true"},
        {"Memory", "2048"},
        {"MY.Memory", "undefined"}, /* a selection does not go over */
        {"Nested.y", "undefined"},  /* nor does a nested record's expression */
        {"TARGET.Wants", "1024"},   /* the machine's plain name: the job's */
        {"TARGET.Requirements", "true"},
        {"TARGET.Requirements && TARGET.Memory >= RequestMemory", "true"},
        /* inside the target TARGET is the job again, MY the machine */
        {"TARGET.Who", "\"job\""},
        {"TARGET.Me", "\"m1\""},
        {"TARGET.Top", "\"m1\""},
        {"TARGET.TARGET.Name", "\"job\""},
        {"TARGET.Nothing", "undefined"},
        {"TARGET", "[ Memory = 2048; Arch = \"X86_64\"; Name = \"m1\"; Requirements = "
                   "TARGET.Owner == \"ann\"; Who = TARGET.Name; Me = MY.Name; Top = "
                   "toplevel.Name; Wants = RequestMemory ]"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        assert_int_equal(ads_expr_parse(&e, arena, rows[i].expr, strlen(rows[i].expr), NULL),
                         0);
        assert_int_equal(ads_expr_eval_match(&v, e, &jv, &mv, arena), 0);
        ads_buf b = ADS_BUF_INIT;
        ads_value_unparse(&b, &v);
        if (strcmp(ads_buf_cstr(&b), rows[i].text) != 0)
            fail_msg("%s: got %s, expected %s", rows[i].expr, ads_buf_cstr(&b), rows[i].text);
        ads_buf_free(&b);
    }
    /* without a match TARGET is undefined, and plain names stay in scope;
     * an attribute named TARGET wins */
    is_text("[a = 1]", "Memory", "undefined");
    is_text("[a = 1]", "TARGET.a", "undefined");
    is_text("[a = 1]", "TARGET", "undefined");
    is_text("[TARGET = [a = 5]; x = [y = TARGET.a]]", "x.y", "5");
    assert_int_equal(ads_expr_parse(&e, arena, "TARGET.a", 8, NULL), 0);
    assert_int_equal(ads_expr_eval_match(&v, e, &jv, NULL, arena), 0);
    assert_int_equal(v.type, ADS_UNDEFINED);
}

/* A view handing out a record that stands alone (as a JOIN alias is), over
 * an in-memory main record. */
static const ads_record *alone;

static int alias_lookup(const void *self, const char *name, size_t len, uint32_t hash,
                        ads_arena *a, ads_value *value, const ads_expr **expr)
{
    *expr = NULL;
    if (len == 1 && (name[0] == 'O' || name[0] == 'o')) {
        *value = ads_recordv(alone);
        return ADS_VIEW_DETACHED;
    }
    ads_view main = ads_record_view(self, NULL);
    return main.ops->lookup(main.self, name, len, hash, a, value, expr);
}

static void eval__a_detached_record_does_not_fall_back(void **state)
{
    (void)state;
    static const ads_view_ops ops = {alias_lookup};
    const ads_record *main;
    const ads_expr *e;
    ads_value v;
    assert_int_equal(ads_record_parse(&main, arena, "[Memory = 1; Name = \"m\"]", 24, NULL), 0);
    assert_int_equal(ads_record_parse(&alone, arena, "[Who = \"ann\"; n = [i = 1]]", 26, NULL),
                     0);
    ads_view view = {&ops, main, NULL};
    struct {
        const char *expr, *text;
    } rows[] = {
        {"O.Who", "\"ann\""},
        {"O.Memory", "undefined"}, /* not the main record's */
        {"O.n.Who", "\"ann\""},  /* nested in O: falls back to O only */
        {"O.n.Memory", "undefined"},
        {"Memory", "1"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        assert_int_equal(ads_expr_parse(&e, arena, rows[i].expr, strlen(rows[i].expr), NULL),
                         0);
        assert_int_equal(ads_expr_eval(&v, e, &view, arena), 0);
        ads_buf b = ADS_BUF_INIT;
        ads_value_unparse(&b, &v);
        if (strcmp(ads_buf_cstr(&b), rows[i].text) != 0)
            fail_msg("%s: got %s, expected %s", rows[i].expr, ads_buf_cstr(&b), rows[i].text);
        ads_buf_free(&b);
    }
}

int main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(eval__scopes),
        T(eval__cycles_are_error),
        T(eval__layered_references_stop_at_the_budget),
        T(eval__deep_chains_are_error_not_crash),
        T(eval__a_flat_chain_is_one_level_however_long),
        T(eval__chains_keep_the_undefined_and_error_rules),
        T(eval__unresolved_walks_a_long_chain),
        T(eval__integer_edges_wrap_without_ub),
        T(eval__reals_and_nan),
        T(eval__lists_and_records),
        T(eval__identifiers_and_times),
        T(eval__a_view_reporting_corruption_gives_error),
        T(eval__one_expression_many_threads),
        T(eval__record_eval_attr),
        T(eval__my_is_the_record_itself),
        T(eval__current_time_is_time),
        T(eval__select_falls_back_to_enclosing_scopes),
        T(eval__select_from_a_number_is_error),
        T(eval__target_is_the_other_record_of_a_match),
        T(eval__a_detached_record_does_not_fall_back),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
