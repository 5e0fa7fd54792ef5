/*
 * tests/classad/test_unparse.c: writing values and expressions: the exact
 * adstore spelling of every kind of value and node, HTCondor's spelling for
 * string(), parentheses added by precedence in trees that were not parsed,
 * the spacing and parentheses that keep a minus or a literal base from
 * running into what follows, and the round trip: random values of every
 * type, unparsed, parsed and evaluated, come back identical.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "classad/classad.h"

static ads_arena *arena;

static int setup(void **state)
{
    (void)state;
    setenv("TZ", "UTC", 1);
    tzset();
    arena = ads_arena_new();
    return arena ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    ads_arena_free(arena);
    return 0;
}

static const char *text_of(const ads_value *v, bool condor)
{
    static ads_buf b = ADS_BUF_INIT;
    ads_buf_clear(&b);
    if (condor)
        ads_value_unparse_condor(&b, v);
    else
        ads_value_unparse(&b, v);
    return ads_buf_cstr(&b);
}

static void writes(ads_value v, const char *adstore, const char *condor)
{
    assert_string_equal(text_of(&v, false), adstore);
    if (condor)
        assert_string_equal(text_of(&v, true), condor);
}

static void unparse__simple_values(void **state)
{
    (void)state;
    writes(ads_undefined(), "undefined", "undefined");
    writes(ads_errorv(), "error", "error");
    writes(ads_bool(true), "true", "true");
    writes(ads_int(INT64_MIN), "-9223372036854775808", "-9223372036854775808");
    writes(ads_real(2.0), "2.0", "2.000000000000000E+00");
    writes(ads_real(0.0), "0.0", "0.0");
    writes(ads_real(-0.0), "-0.0", "-0.0"); /* HTCondor prints zero with %.1f */
    writes(ads_real(0.1), "0.1", "1.000000000000000E-01");
    writes(ads_real(1e100), "1e+100", "1.000000000000000E+100");
    writes(ads_real(1.0 / 3), "0.3333333333333333", "3.333333333333333E-01");
    writes(ads_real(INFINITY), "real(\"INF\")", "real(\"INF\")");
    writes(ads_real(-INFINITY), "real(\"-INF\")", "real(\"-INF\")");
    writes(ads_real(NAN), "real(\"NaN\")", "real(\"NaN\")");
    writes(ads_string("a\"b\\c\n\t\x01\x7f\xc3\xa9", 11), "\"a\\\"b\\\\c\\n\\t\\001\\177\xc3\xa9\"",
           NULL);
    writes(ads_abstime(1323795600, -5 * 3600), "`2011-12-13T12:00:00-05:00`",
           "absTime(\"2011-12-13T12:00:00-05:00\")");
    writes(ads_abstime(1072915200, 0), "`2004-01-01T00:00:00Z`",
           "absTime(\"2004-01-01T00:00:00-00:00\")");
    writes(ads_abstime(1072915200.25, 3600), "`2004-01-01T01:00:00.25+01:00`", NULL);
    writes(ads_reltime(93784.5), "`1d2h3m4.5s`", "relTime(\"1+02:03:4.5\")");
    writes(ads_reltime(0), "`0s`", "relTime(\"00\")");
    writes(ads_reltime(-90), "`-1m30s`", "relTime(\"-01:30\")");
    writes(ads_reltime(3600), "`1h`", "relTime(\"01:00:00\")");
    ads_id id = {0x0571eed180000031ULL, 0x0000000000020001ULL};
    writes(ads_ident(id), "#571eed18-0031-000000000002-1", NULL);
}

static void unparse__lists_records_and_names(void **state)
{
    (void)state;
    ads_value items[2] = {ads_int(1), ads_string("a", 1)};
    writes(ads_list(items, 2), "{ 1, \"a\" }", "{ 1,\"a\" }");
    writes(ads_list(NULL, 0), "{ }", "{  }");
    const ads_record *r;
    const char *text = "[ a = 1; 'send time' = 2; 'in' = 3; x_1 = {}; 'a-b' = [ ] ]";
    assert_int_equal(ads_record_parse(&r, arena, text, strlen(text), NULL), 0);
    ads_buf b = ADS_BUF_INIT;
    ads_record_unparse(&b, r);
    assert_string_equal(ads_buf_cstr(&b),
                        "[ a = 1; 'send time' = 2; 'in' = 3; x_1 = { }; 'a-b' = [ ] ]");
    ads_buf_free(&b);
}

/* An expression built without parentheses gets those precedence needs. */
static void unparse__adds_parentheses_by_precedence(void **state)
{
    (void)state;
    const ads_expr *e, *p;
    ads_buf b = ADS_BUF_INIT;
    const char *text = "(a + b) * (c - (d - e)) || !(x && y) ? (p ? q : r) : s";
    assert_int_equal(ads_expr_parse(&e, arena, text, strlen(text), NULL), 0);
    /* prepare drops the parenthesis nodes: unparse must put back what matters */
    assert_int_equal(ads_expr_prepare(&p, arena, e, NULL), 0);
    ads_expr_unparse(&b, p);
    assert_string_equal(ads_buf_cstr(&b), "(a + b) * (c - (d - e)) || !(x && y) ? p ? q : r : s");
    const ads_expr *again;
    assert_int_equal(ads_expr_parse(&again, arena, b.p, b.len, NULL), 0);
    ads_buf c = ADS_BUF_INIT;
    ads_expr_unparse(&c, again);
    assert_string_equal(ads_buf_cstr(&c), ads_buf_cstr(&b));
    ads_buf_free(&b);
    ads_buf_free(&c);
}

/* ---- random values ---- */

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static ads_value random_value(int depth);

static ads_str random_bytes(void)
{
    size_t n = rnd() % 12;
    char *p = ads_arena_alloc(arena, n + 1);
    static const char pool[] = "aZ _-'\"\\\n\t\x01\x7f\xc3\xa9\xe2\x82\xac{}[];=#`";
    for (size_t i = 0; i < n; i++)
        p[i] = pool[rnd() % (sizeof pool - 1)];
    ads_str s = {p, n};
    return s;
}

static const ads_record *random_record(int depth)
{
    ads_record_builder *b;
    assert_int_equal(ads_record_builder_new(&b, arena, NULL), 0);
    size_t n = rnd() % 4;
    for (size_t i = 0; i < n; i++) {
        ads_str name = random_bytes();
        if (name.len == 0 || memchr(name.p, '\0', name.len))
            continue;
        ads_value v = random_value(depth + 1);
        assert_int_equal(ads_record_builder_add_value(b, name.p, name.len, &v, NULL), 0);
    }
    return ads_record_builder_finish(b);
}

static ads_value random_value(int depth)
{
    static const double reals[] = {0.0, -0.0, 1.5, 2.0, 1e100, -1e-300, 0.1, 3.14159,
                                   1e21, 123456789.125};
    switch (rnd() % (depth > 3 ? 9 : 11)) {
    case 0:
        return ads_undefined();
    case 1:
        return ads_errorv();
    case 2:
        return ads_bool(rnd() & 1);
    case 3:
        return ads_int((int64_t)rnd() >> (rnd() % 64));
    case 4: {
        double r = (rnd() & 1) ? reals[rnd() % 10] : (double)(int64_t)rnd() / (double)(rnd() | 1);
        return ads_real(r);
    }
    case 5: {
        ads_str s = random_bytes();
        return ads_string(s.p, s.len);
    }
    case 6:
        return ads_abstime((double)(int64_t)(rnd() % 4000000000u) - 1000000000.0,
                           (int32_t)(rnd() % 97 - 48) * 900);
    case 7:
        return ads_reltime((double)(int64_t)(rnd() % 10000000) / ((rnd() & 1) ? 1 : 4) *
                           ((rnd() & 1) ? 1 : -1));
    case 8: {
        ads_id id = {rnd() | 1, rnd() & ~(UINT64_C(1) << 63)};
        if (rnd() & 1)
            id.lo |= UINT64_C(1) << 63;
        if (rnd() % 4 == 0)
            id.hi = 0;
        if (ads_id_kind_of(id) == ADS_ID_ORDERED) {
            id.hi = (id.hi & ~UINT64_C(7)) | 1; /* version 1 */
            id.lo &= ~(UINT64_C(1) << 63);
        }
        return ads_ident(id);
    }
    case 9: {
        size_t n = rnd() % 4;
        ads_value *items = ads_arena_alloc(arena, (n + 1) * sizeof *items);
        for (size_t i = 0; i < n; i++)
            items[i] = random_value(depth + 1);
        return ads_list(items, n);
    }
    default:
        return ads_recordv(random_record(depth));
    }
}

static void unparse__random_values_round_trip(void **state)
{
    (void)state;
    ads_buf b = ADS_BUF_INIT;
    for (int i = 0; i < 20000; i++) {
        ads_value v = random_value(0), back;
        const ads_expr *e;
        ads_error err;
        ads_buf_clear(&b);
        ads_value_unparse(&b, &v);
        if (ads_expr_parse(&e, arena, b.p, b.len, &err))
            fail_msg("round %d: '%s' does not parse: %s", i, ads_buf_cstr(&b), err.message);
        assert_int_equal(ads_expr_eval(&back, e, NULL, arena), 0);
        if (!ads_value_same(&v, &back)) {
            ads_buf c = ADS_BUF_INIT;
            ads_value_unparse(&c, &back);
            fail_msg("round %d: %s came back as %s", i, ads_buf_cstr(&b), ads_buf_cstr(&c));
        }
        if (i % 1000 == 999)
            ads_arena_reset(arena);
    }
    ads_buf_free(&b);
}

/* v is written, the text parsed and evaluated: the same value comes back
 * (spec section 7). */
static void reads_back_equal(const ads_value *v, const char *what)
{
    ads_buf b = ADS_BUF_INIT;
    const ads_expr *e;
    ads_value back;
    ads_error err;
    ads_value_unparse(&b, v);
    assert_false(b.failed);
    if (ads_expr_parse(&e, arena, b.p, b.len, &err))
        fail_msg("%s: '%.200s' does not parse: %s", what, ads_buf_cstr(&b), err.message);
    assert_int_equal(ads_expr_eval(&back, e, NULL, arena), 0);
    if (!ads_value_same(v, &back)) {
        ads_buf c = ADS_BUF_INIT;
        ads_value_unparse(&c, &back);
        fail_msg("%s: %.200s came back as %.200s", what, ads_buf_cstr(&b), ads_buf_cstr(&c));
    }
    ads_buf_free(&b);
}

static ads_value value_of(const char *text)
{
    const ads_expr *e;
    ads_value v;
    ads_error err;
    if (ads_expr_parse(&e, arena, text, strlen(text), &err))
        fail_msg("'%s': %s", text, err.message);
    assert_int_equal(ads_expr_eval(&v, e, NULL, arena), 0);
    return v;
}

/* issue 11 item 5: every value class, with its edge cases, reads back
 * equal through the text adstore prints; the values that could not
 * (NaN or infinite times, instants beyond 2^53 seconds) are error. */
static void unparse__every_value_class_reads_back(void **state)
{
    (void)state;
    reads_back_equal(&(ads_value){.type = ADS_UNDEFINED}, "undefined");
    reads_back_equal(&(ads_value){.type = ADS_ERROR}, "error");
    reads_back_equal(&(ads_value){.type = ADS_BOOLEAN, .u.b = true}, "true");
    reads_back_equal(&(ads_value){.type = ADS_BOOLEAN, .u.b = false}, "false");
    const int64_t ints[] = {0, 1, -1, 42, INT64_MAX, INT64_MIN, INT64_MIN + 1, 1LL << 53};
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++)
        reads_back_equal(&(ads_value){.type = ADS_INTEGER, .u.i = ints[i]}, "integer");
    const double reals[] = {0.0, -0.0, NAN, INFINITY, -INFINITY, 4.9406564584124654e-324,
                            -4.9406564584124654e-324, 2.2250738585072014e-308,
                            2.2250738585072009e-308, 1.7976931348623157e308,
                            -1.7976931348623157e308, 0.1, 1e21, 1e22, 9007199254740993.0,
                            123456789.125, -1.5, 1e-7, 5e-324 * 3};
    for (size_t i = 0; i < sizeof reals / sizeof reals[0]; i++) {
        ads_value v = ads_real(reals[i]);
        reads_back_equal(&v, "real");
        /* -0.0 keeps its sign */
        if (reals[i] == 0) {
            ads_buf b = ADS_BUF_INIT;
            ads_value_unparse(&b, &v);
            ads_value back = value_of(ads_buf_cstr(&b));
            assert_int_equal(signbit(back.u.r) != 0, signbit(reals[i]) != 0);
            ads_buf_free(&b);
        }
    }
    /* every byte but NUL, every escape */
    char all[255];
    for (int i = 0; i < 255; i++)
        all[i] = (char)(i + 1);
    reads_back_equal(&(ads_value){.type = ADS_STRING, .u.s = {all, sizeof all}}, "string");
    const char *esc = "\"\\'?\a\b\f\n\r\t\v\x7f\x01\xff";
    reads_back_equal(&(ads_value){.type = ADS_STRING, .u.s = {esc, strlen(esc)}}, "escapes");
    reads_back_equal(&(ads_value){.type = ADS_STRING, .u.s = {"", 0}}, "empty string");
    /* AbsTime: offsets, fractions, the years around 0000 and 9999, and the
     * extremes 2^53 seconds allows */
    const double instants[] = {0, 1, -1, 0.5, -0.25, 1e-6, 1323777600.125, 253402300799.0,
                               253402300800.0, -62167219200.0, -62167219201.0,
                               9007199254740991.0 - 86400, -9007199254740991.0 + 86400,
                               4102444800.000001};
    const int32_t offsets[] = {0, 60, -60, 3600, -18000, 19800, 86340, -86340};
    for (size_t i = 0; i < sizeof instants / sizeof instants[0]; i++)
        for (size_t j = 0; j < sizeof offsets / sizeof offsets[0]; j++) {
            ads_value v = ads_abstime(instants[i], offsets[j]);
            reads_back_equal(&v, "abstime");
        }
    /* RelTime: zero, fractions down to the smallest, and the largest */
    const double spans[] = {0, 1, -1, 0.5, 59.999, 60, 3600, 86400, 90061.5, -90061.5,
                            1e-9, 4.9406564584124654e-324, 1e15, 9007199254740993.0, 1e300,
                            -1e300, 1.7976931348623157e308, -1.7976931348623157e308};
    for (size_t i = 0; i < sizeof spans / sizeof spans[0]; i++) {
        ads_value v = ads_reltime(spans[i]);
        reads_back_equal(&v, "reltime");
    }
    /* identifiers, blobs, lists, nested records (names that are keywords or
     * not identifiers), as evaluation makes them */
    const char *made[] = {
        "#571eed18-0031-000000000002-1", "#1495", "id(\"1495\")",
        "blob(\"aGVsbG8=\")", "blob(\"\")", "blob(\"AAEC/w==\", [ MimeType = \"x/y\"; n = 1 ])",
        "{ }", "{ 1, 2.5, \"a\", { }, { undefined, error }, [ ] }",
        ("[ a = 1; 'send time' = `2011-12-13T12:00:00-05:00`; In = [ 'is' = { `1d2h` } ]; "
         "'a\\'b' = -0.0; x = [ y = [ z = #1495 ] ] ]"),
        "absTime(253402300800)", "absTime(-62167219201)", "relTime(1e300)",
        "`+10000-01-01T00:00:00Z` + `1s`", "`9999-12-31T23:59:59-23:59`",
    };
    for (size_t i = 0; i < sizeof made / sizeof made[0]; i++) {
        ads_value v = value_of(made[i]);
        if (v.type == ADS_ERROR)
            fail_msg("%s is error", made[i]);
        reads_back_equal(&v, made[i]);
    }
    /* what no text could give back is error */
    const char *errors[] = {
        "absTime(real(\"NaN\"))", "absTime(real(\"INF\"))", "absTime(1e300)",
        "relTime(real(\"INF\"))", "relTime(real(\"-INF\"))", "relTime(real(\"NaN\"))",
        "`1s` * real(\"INF\")", "`1s` * 1e308 * 10", "`1s` / 1e-320",
        "absTime(9007199254740992)", "`+285000000-01-01T00:00:00Z` + `1000000000d`",
    };
    for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++) {
        ads_value v = value_of(errors[i]);
        if (v.type != ADS_ERROR)
            fail_msg("%s: expected error, got type %d", errors[i], (int)v.type);
    }
}

/* a and b are the same tree, parenthesis nodes aside (what the unparser
 * adds so that text reads back, and the parser keeps). */
static bool same_tree(const ads_expr *a, const ads_expr *b)
{
    while (ads_expr_kind_of(a) == ADS_X_PAREN)
        a = ads_expr_arg(a, 0);
    while (ads_expr_kind_of(b) == ADS_X_PAREN)
        b = ads_expr_arg(b, 0);
    if (ads_expr_kind_of(a) != ads_expr_kind_of(b))
        return false;
    if (ads_expr_kind_of(a) == ADS_X_LITERAL)
        return ads_value_same(ads_expr_literal_value(a), ads_expr_literal_value(b));
    ads_str na = ads_expr_name(a), nb = ads_expr_name(b);
    if (strcmp(ads_expr_op(a), ads_expr_op(b)) != 0 || na.len != nb.len ||
        (na.len && memcmp(na.p, nb.p, na.len) != 0) || ads_expr_nargs(a) != ads_expr_nargs(b))
        return false;
    for (size_t i = 0; i < ads_expr_nargs(a); i++)
        if (!same_tree(ads_expr_arg(a, i), ads_expr_arg(b, i)))
            return false;
    return true;
}

/* text parses, unparses as want, which parses back to the same tree (and
 * so the same value) and unparses as want again. */
static void reads_back(const char *text, const char *want)
{
    const ads_expr *e, *again;
    ads_error err;
    if (ads_expr_parse(&e, arena, text, strlen(text), &err))
        fail_msg("'%s' does not parse: %s", text, err.message);
    ads_buf b = ADS_BUF_INIT, c = ADS_BUF_INIT;
    ads_expr_unparse(&b, e);
    if (strcmp(ads_buf_cstr(&b), want) != 0)
        fail_msg("'%s' unparses as '%s', expected '%s'", text, ads_buf_cstr(&b), want);
    if (ads_expr_parse(&again, arena, b.p, b.len, &err))
        fail_msg("'%s' (from '%s') does not parse: %s", ads_buf_cstr(&b), text, err.message);
    if (!same_tree(e, again))
        fail_msg("'%s' reads back from '%s' as another tree", text, ads_buf_cstr(&b));
    ads_expr_unparse(&c, again);
    assert_string_equal(ads_buf_cstr(&c), want);
    ads_value v1, v2;
    assert_int_equal(ads_expr_eval(&v1, e, NULL, arena), 0);
    assert_int_equal(ads_expr_eval(&v2, again, NULL, arena), 0);
    assert_true(ads_value_same(&v1, &v2));
    ads_buf_free(&b);
    ads_buf_free(&c);
}

/* Where a minus or a literal touches what follows, the text keeps them apart
 * so that it reads back as the tree it came from. */
static void unparse__minus_and_literal_bases_read_back_as_written(void **state)
{
    (void)state;
    /* a minus on the integer 0: "-0" would read as the literal 0 */
    reads_back("--0", "- 0");
    reads_back("- -0", "- 0");
    reads_back("- - 0", "-- 0");
    reads_back("-(0)", "-(0)");
    /* a minus on a postfix expression that starts with a digit: "-1[0]"
     * would read as (-1)[0] */
    reads_back("- 1[0]", "- 1[0]");
    reads_back("- 1.5[0]", "- 1.5[0]");
    reads_back("- 0[0]", "- 0[0]");
    reads_back("-1[0]", "(-1)[0]"); /* the literal -1, indexed */
    /* a minus on a negative literal, and on a name */
    reads_back("- -1", "--1");
    reads_back("- x", "-x");
    /* a number or identifier as the base of a selection, in parentheses:
     * "#42.a" would read as one identifier, "3.y" as a number */
    reads_back("#42 .a", "(#42).a");
    reads_back("(#42).a", "(#42).a");
    reads_back("#571eed18-0031-000000000002-1 .b", "(#571eed18-0031-000000000002-1).b");
    reads_back("3 .y", "(3).y");
    reads_back("- #42 .a", "-(#42).a");
}

/* Chains (issue 10 item 8): 401 and 300,000 operands write back as they
 * were written, in both spellings, with no recursion per operand; a left
 * operand that binds looser keeps its parentheses even in a tree built
 * without them (prepare drops parentheses nodes). */
static void unparse__long_chains_write_back_as_written(void **state)
{
    (void)state;
    static const size_t lengths[] = {401, 300000};
    for (size_t k = 0; k < 2; k++) {
        ads_buf text = ADS_BUF_INIT, out = ADS_BUF_INIT;
        for (size_t i = 0; i < lengths[k]; i++)
            ads_buf_printf(&text, i ? " || x == %zu" : "x == %zu", i);
        const ads_expr *e, *p;
        ads_error err;
        assert_int_equal(ads_expr_parse(&e, arena, text.p, text.len, &err), 0);
        ads_expr_unparse(&out, e);
        assert_false(out.failed);
        assert_int_equal(out.len, text.len);
        assert_memory_equal(out.p, text.p, text.len);
        ads_buf_clear(&out);
        ads_expr_unparse_condor(&out, e);
        assert_int_equal(out.len, text.len);
        assert_memory_equal(out.p, text.p, text.len);
        ads_buf_clear(&out);
        /* prepared: the same text, parentheses around a looser left operand */
        ads_buf_clear(&text);
        ads_buf_adds(&text, "(a || b) && c");
        for (size_t i = 0; i < lengths[k]; i++)
            ads_buf_adds(&text, " && (d || e) - 1 * f");
        assert_int_equal(ads_expr_parse(&e, arena, text.p, text.len, &err), 0);
        assert_int_equal(ads_expr_prepare(&p, arena, e, &err), 0);
        ads_expr_unparse(&out, p);
        assert_int_equal(out.len, text.len);
        assert_memory_equal(out.p, text.p, text.len);
        ads_buf_free(&text);
        ads_buf_free(&out);
    }
    reads_back("((a || b) && c) && d", "((a || b) && c) && d");
    reads_back("a - (b - c) - d", "a - (b - c) - d");
}

int main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(unparse__long_chains_write_back_as_written),
        T(unparse__simple_values),
        T(unparse__lists_records_and_names),
        T(unparse__adds_parentheses_by_precedence),
        T(unparse__random_values_round_trip),
        T(unparse__every_value_class_reads_back),
        T(unparse__minus_and_literal_bases_read_back_as_written),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
