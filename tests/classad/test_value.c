/*
 * tests/classad/test_value.c: classad/value.c, the comparisons of values
 * outside evaluation: type names, string copies, the numeric view the
 * arithmetic uses, `is` (ads_value_is), `===` (ads_value_equiv), structural
 * sameness for round trips (ads_value_same) and the case-folding string
 * order. Values are made by evaluating ClassAd text, so each case reads as
 * the language writes it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "classad/classad.h"
#include "classad/classad_int.h"
#include "classad/msgpack.h"

#include "tests/classad/arena_fixture.h"

/* The value of expression text, evaluated in an empty record. */
static ads_value val(const char *text)
{
    const ads_expr *e;
    ads_error err;
    ads_value v;
    if (ads_expr_parse(&e, arena, text, strlen(text), &err))
        fail_msg("'%s': %s", text, err.message);
    assert_int_equal(ads_expr_eval(&v, e, NULL, arena), 0);
    return v;
}

typedef bool (*cmp_fn)(const ads_value *, const ads_value *);

/* Each row: two texts and what the comparison must say, both ways round. */
typedef struct pair {
    const char *a, *b;
    bool want;
} pair;

static void check_pairs(const char *what, cmp_fn cmp, const pair *rows, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        ads_value a = val(rows[i].a), b = val(rows[i].b);
        if (cmp(&a, &b) != rows[i].want)
            fail_msg("%s(%s, %s) should be %s", what, rows[i].a, rows[i].b,
                     rows[i].want ? "true" : "false");
        if (cmp(&b, &a) != rows[i].want)
            fail_msg("%s(%s, %s) should be %s", what, rows[i].b, rows[i].a,
                     rows[i].want ? "true" : "false");
    }
}

#define CHECK_PAIRS(what, cmp, rows) check_pairs(what, cmp, rows, sizeof(rows) / sizeof(rows)[0])

static void value__type_names_cover_every_type(void **state)
{
    (void)state;
    static const char *const names[] = {
        "undefined", "error",  "boolean", "integer", "real",       "string",
        "list",      "record", "abstime", "reltime", "identifier", "blob",
    };
    for (int t = ADS_UNDEFINED; t <= ADS_BLOB; t++)
        assert_string_equal(ads_vtype_name((ads_vtype)t), names[t]);
    assert_string_equal(ads_vtype_name((ads_vtype)12), "unknown");
    assert_string_equal(ads_vtype_name((ads_vtype)-1), "unknown");
    /* each value gets its type's name */
    assert_string_equal(ads_vtype_name(val("#1495").type), "identifier");
    assert_string_equal(ads_vtype_name(val("`1m`").type), "reltime");
    assert_string_equal(ads_vtype_name(val("blob(\"\")").type), "blob");
}

static void value__string_copy_owns_its_bytes(void **state)
{
    (void)state;
    char src[] = "ab\0cd";
    ads_value v;
    assert_int_equal(ads_string_copy(&v, arena, src, 5), 0);
    assert_int_equal(v.type, ADS_STRING);
    assert_int_equal(v.u.s.len, 5);
    assert_ptr_not_equal(v.u.s.p, src);
    memset(src, 'x', sizeof src);
    assert_memory_equal(v.u.s.p, "ab\0cd", 5);
    assert_int_equal(v.u.s.p[5], '\0'); /* NUL-terminated for C callers */
    assert_int_equal(ads_string_copy(&v, arena, "", 0), 0);
    assert_int_equal(v.type, ADS_STRING);
    assert_int_equal(v.u.s.len, 0);
    assert_non_null(v.u.s.p);
}

static void value__number_view_of_integers_booleans_and_reals(void **state)
{
    (void)state;
    int64_t i = 7;
    double r = 7;
    ads_value v = ads_int(-42);
    assert_int_equal(ads_value__number(&v, &i, &r), 1);
    assert_int_equal(i, -42);
    assert_true(r == -42.0);
    v = ads_bool(true);
    assert_int_equal(ads_value__number(&v, &i, &r), 1);
    assert_int_equal(i, 1);
    assert_true(r == 1.0);
    v = ads_bool(false);
    assert_int_equal(ads_value__number(&v, &i, &r), 1);
    assert_int_equal(i, 0);
    assert_true(r == 0.0);
    v = ads_real(2.5);
    assert_int_equal(ads_value__number(&v, &i, &r), 2);
    assert_true(r == 2.5);
    static const char *const not_numbers[] = {
        "\"1\"", "undefined",      "error",
        "{ 1 }", "[ a = 1 ]",      "`1s`",
        "#1",    "blob(\"AA==\")", "`2011-12-13T12:00:00Z`",
    };
    for (size_t k = 0; k < sizeof not_numbers / sizeof not_numbers[0]; k++) {
        v = val(not_numbers[k]);
        if (ads_value__number(&v, &i, &r) != 0)
            fail_msg("%s counted as a number", not_numbers[k]);
    }
}

static void value__is_needs_the_same_type_and_value(void **state)
{
    (void)state;
    static const pair rows[] = {
        {"undefined", "undefined", true},
        {"error", "error", true},
        {"undefined", "error", false},
        {"true", "true", true},
        {"true", "false", false},
        {"true", "1", false},
        {"123", "123", true},
        {"123", "124", false},
        {"123", "123.0", false},
        {"1.5", "1.5", true},
        {"0.0", "-0.0", true},
        {"real(\"NaN\")", "real(\"NaN\")", true},
        {"real(\"NaN\")", "1.0", false},
        {"real(\"INF\")", "real(\"INF\")", true},
        {"real(\"INF\")", "real(\"-INF\")", false},
        {"\"abc\"", "\"abc\"", true},
        {"\"abc\"", "\"ABC\"", false},
        {"\"abc\"", "\"abcd\"", false},
        {"\"\"", "\"\"", true},
        {"\"a\\001b\"", "\"a\\001b\"", true},
        {"`2011-12-13T12:00:00Z`", "`2011-12-13T12:00:00Z`", true},
        /* the same instant in another zone is not identical */
        {"`2011-12-13T12:00:00Z`", "`2011-12-13T07:00:00-05:00`", false},
        {"`2011-12-13T12:00:00Z`", "`2011-12-13T12:00:01Z`", false},
        {"`90`", "`1m30s`", true},
        {"`90`", "`91`", false},
        {"`90`", "90", false},
        {"#1495", "#1495", true},
        {"#1495", "#1496", false},
        {"#1495", "\"1495\"", false},
    };
    CHECK_PAIRS("is", ads_value_is, rows);
}

static void value__is_never_identifies_lists_records_or_blobs(void **state)
{
    (void)state;
    static const pair rows[] = {
        {"{ 123, \"abc\" }", "{ 123, \"abc\" }", false},
        {"{ }", "{ }", false},
        {"[ a = 1 ]", "[ a = 1 ]", false},
        {"[ ]", "[ ]", false},
        {"blob(\"AQID\")", "blob(\"AQID\")", false},
    };
    CHECK_PAIRS("is", ads_value_is, rows);
    /* not even one value with itself */
    ads_value l = val("{ 1 }");
    assert_false(ads_value_is(&l, &l));
}

static void value__equiv_promotes_numbers_and_folds_case(void **state)
{
    (void)state;
    static const pair rows[] = {
        {"123", "123", true},
        {"123", "123.0", true},
        {"123", "123.5", false},
        {"true", "1", true},
        {"false", "0", true},
        {"true", "1.0", true},
        {"true", "2", false},
        {"9007199254740993", "9007199254740992", false}, /* integers compare as integers */
        {"0.0", "-0.0", true},
        {"real(\"NaN\")", "real(\"NaN\")", false},
        {"\"abc\"", "\"ABC\"", true},
        {"\"abc\"", "\"abd\"", false},
        {"\"abc\"", "\"ab\"", false},
        {"\"\\351\"", "\"\\311\"", false}, /* only ASCII letters fold */
        {"\"1\"", "1", false},
        /* AbsTime by instant: the zone does not matter */
        {"`2011-12-13T12:00:00Z`", "`2011-12-13T07:00:00-05:00`", true},
        {"`2011-12-13T12:00:00Z`", "`2011-12-13T12:00:01Z`", false},
        {"`90`", "`1m30s`", true},
        {"`90`", "`1m31s`", false},
        {"`90`", "90", false},
        {"`2011-12-13T12:00:00Z`", "`1s`", false},
        {"#1495", "#1495", true},
        {"#1495", "#1496", false},
        {"#1495", "1495", false},
    };
    CHECK_PAIRS("equiv", ads_value_equiv, rows);
}

static void value__equiv_undefined_and_error_match_only_themselves(void **state)
{
    (void)state;
    static const pair rows[] = {
        {"undefined", "undefined", true},
        {"error", "error", true},
        {"undefined", "error", false},
        {"undefined", "0", false},
        {"undefined", "false", false},
        {"undefined", "\"\"", false},
        {"error", "0", false},
        {"error", "{ }", false},
    };
    CHECK_PAIRS("equiv", ads_value_equiv, rows);
}

static void value__equiv_compares_lists_records_and_blobs_by_contents(void **state)
{
    (void)state;
    static const pair rows[] = {
        {"{ 123, \"abc\" }", "{ 123.0, \"ABC\" }", true},
        {"{ }", "{ }", true},
        {"{ 1, 2 }", "{ 2, 1 }", false},
        {"{ 1, 2 }", "{ 1, 2, 3 }", false},
        {"{ 1, { 2, undefined } }", "{ 1, { 2.0, undefined } }", true},
        {"{ 1, { 2, undefined } }", "{ 1, { 2, error } }", false},
        {"{ 1 }", "[ a = 1 ]", false},
        {"[ a = 1; B = \"x\" ]", "[ b = \"X\"; A = 1.0 ]", true},
        {"[ ]", "[ ]", true},
        {"[ a = 1 ]", "[ a = 1; b = 2 ]", false},
        {"[ a = 1; b = 2 ]", "[ a = 1; c = 2 ]", false},
        {"[ a = 1 ]", "[ a = 2 ]", false},
        {"[ a = [ b = { 1 } ] ]", "[ A = [ B = { 1.0 } ] ]", true},
        {"blob(\"AQID\")", "blob(\"AQID\")", true},
        {"blob(\"AQID\")", "blob(\"AQIE\")", false},
        {"blob(\"AQID\")", "blob(\"AQI=\")", false},
        {"blob(\"\")", "blob(\"\")", true},
        {"blob(\"AQID\", [ t = \"x\" ])", "blob(\"AQID\", [ T = \"X\" ])", true},
        {"blob(\"AQID\", [ t = \"x\" ])", "blob(\"AQID\", [ t = \"y\" ])", false},
        {"blob(\"AQID\", [ t = \"x\" ])", "blob(\"AQID\")", false},
        {"blob(\"AQID\", [ ])", "blob(\"AQID\")", false},
        {"blob(\"AQID\")", "\"AQID\"", false},
    };
    CHECK_PAIRS("equiv", ads_value_equiv, rows);
}

/* A record whose one attribute a is expression e. */
static const ads_record *record_with(const ads_expr *e)
{
    ads_record_builder *b;
    assert_int_equal(ads_record_builder_new(&b, arena, NULL), 0);
    assert_int_equal(ads_record_builder_add(b, "a", 1, e, NULL), 0);
    const ads_record *r = ads_record_builder_finish(b);
    assert_non_null(r);
    return r;
}

static void value__records_holding_expressions_compare_the_expressions(void **state)
{
    (void)state;
    const ads_expr *e1, *e2, *e3, *e4, *lit;
    assert_int_equal(ads_expr_parse(&e1, arena, "x + 1", 5, NULL), 0);
    assert_int_equal(ads_expr_parse(&e2, arena, "x + 1", 5, NULL), 0);
    assert_int_equal(ads_expr_parse(&e3, arena, "x + 2", 5, NULL), 0);
    assert_int_equal(ads_expr_parse(&e4, arena, "X + 1", 5, NULL), 0);
    ads_value one = ads_int(1);
    assert_int_equal(ads_expr_literal(&lit, arena, &one, NULL), 0);
    ads_value a = ads_recordv(record_with(e1)), a2 = ads_recordv(record_with(e1));
    ads_value b = ads_recordv(record_with(e2)), c = ads_recordv(record_with(lit));
    ads_value d = ads_recordv(record_with(e3)), f = ads_recordv(record_with(e4));
    /* ===: an unevaluated member is never evaluated to compare, so only the
     * very same expression object matches */
    assert_true(ads_value_equiv(&a, &a2));
    assert_false(ads_value_equiv(&a, &b));
    assert_false(ads_value_equiv(&a, &c));
    assert_false(ads_value_equiv(&c, &a));
    /* sameness: trees alike node by node, names as written */
    assert_true(ads_value_same(&a, &a2));
    assert_true(ads_value_same(&a, &b));
    assert_false(ads_value_same(&a, &d));
    assert_false(ads_value_same(&a, &f));
    assert_false(ads_value_same(&a, &c));
    assert_false(ads_value_same(&c, &a));
    /* nested record expressions, node by node too */
    const ads_expr *r1, *r2, *r3;
    assert_int_equal(ads_expr_parse(&r1, arena, "[ a = x + 1 ]", 13, NULL), 0);
    assert_int_equal(ads_expr_parse(&r2, arena, "[ A = x + 1 ]", 13, NULL), 0);
    assert_int_equal(ads_expr_parse(&r3, arena, "[ a = x + 2 ]", 13, NULL), 0);
    ads_value n1 = ads_recordv(record_with(r1)), n2 = ads_recordv(record_with(r2));
    ads_value n3 = ads_recordv(record_with(r3));
    assert_true(ads_value_same(&n1, &n2));
    assert_false(ads_value_same(&n1, &n3));
    assert_false(ads_value_equiv(&n1, &n2));
}

static void value__same_is_exact_structure(void **state)
{
    (void)state;
    static const pair rows[] = {
        {"undefined", "undefined", true},
        {"error", "error", true},
        {"undefined", "error", false},
        {"1", "1", true},
        {"1", "1.0", false},
        {"true", "1", false},
        {"real(\"NaN\")", "real(\"NaN\")", true},
        {"real(\"NaN\")", "0.0", false},
        {"\"abc\"", "\"abc\"", true},
        {"\"abc\"", "\"ABC\"", false},
        {"`2011-12-13T12:00:00Z`", "`2011-12-13T12:00:00Z`", true},
        {"`2011-12-13T12:00:00Z`", "`2011-12-13T07:00:00-05:00`", false},
        {"`90`", "`1m30s`", true},
        {"relTime(real(\"NaN\"))", "relTime(real(\"NaN\"))", true},
        {"relTime(real(\"NaN\"))", "`0s`", false},
        {"#1495", "#1495", true},
        {"#1495", "#1496", false},
        {"{ 1, \"a\" }", "{ 1, \"a\" }", true},
        {"{ 1, \"a\" }", "{ 1, \"A\" }", false},
        {"{ 1, \"a\" }", "{ 1.0, \"a\" }", false},
        {"{ 1 }", "{ 1, 1 }", false},
        {"{ }", "{ }", true},
        /* record names ignore case and order; values are exact */
        {"[ a = 1; b = 2 ]", "[ B = 2; A = 1 ]", true},
        {"[ a = 1 ]", "[ a = 1.0 ]", false},
        {"[ a = \"x\" ]", "[ a = \"X\" ]", false},
        {"[ a = 1 ]", "[ a = 1; b = 2 ]", false},
        {"[ ]", "[ ]", true},
        {"blob(\"AQID\")", "blob(\"AQID\")", true},
        {"blob(\"AQID\")", "blob(\"AQIE\")", false},
        {"blob(\"AQID\", [ t = 1 ])", "blob(\"AQID\", [ T = 1 ])", true},
        {"blob(\"AQID\", [ t = 1 ])", "blob(\"AQID\", [ t = 1.0 ])", false},
        {"blob(\"AQID\", [ t = 1 ])", "blob(\"AQID\")", false},
    };
    CHECK_PAIRS("same", ads_value_same, rows);
}

/* The record of text, as a value (its members unevaluated). */
static ads_value record_text(const char *text)
{
    const ads_record *r;
    ads_error err;
    if (ads_record_parse(&r, arena, text, strlen(text), &err))
        fail_msg("'%s': %s", text, err.message);
    return ads_recordv(r);
}

/* A blob of bytes "hi" whose metadata is the record of text. */
static ads_value blob_with_meta(const char *text)
{
    ads_blob *b = ads_arena_alloc(arena, sizeof *b);
    assert_non_null(b);
    b->bytes.p = "hi";
    b->bytes.len = 2;
    b->meta = record_text(text).u.rec;
    ads_value v;
    memset(&v, 0, sizeof v);
    v.type = ADS_BLOB;
    v.u.blob = b;
    return v;
}

/* v encoded, then decoded from those bytes: a new copy of every expression. */
static ads_value decoded(const ads_value *v, ads_buf *bytes)
{
    ads_value out;
    ads_error err;
    ads_buf_clear(bytes);
    if (ads_msgpack_encode_value(bytes, v, &err))
        fail_msg("encode: %s", err.message);
    if (ads_msgpack_decode_value(&out, arena, bytes->p, bytes->len, ADS_MSGPACK_COPY, &err))
        fail_msg("decode: %s", err.message);
    return out;
}

static void value__same_holds_for_expressions_decoded_twice_from_the_same_bytes(void **state)
{
    (void)state;
    static const char *const records[] = {
        "[ a = x + 1; b = [ c = y * 2; d = { z, 1 } ]; e = 3; f = strcat(\"p\", q) ]",
        "[ a = -x[0] ?: (y ? #42 : `1m`); b = self.c; c = .top ]",
    };
    /* and, for each, one expression changed somewhere */
    static const char *const changed[] = {
        "[ a = x + 1; b = [ c = y * 3; d = { z, 1 } ]; e = 3; f = strcat(\"p\", q) ]",
        "[ a = -x[0] ?: (y ? #43 : `1m`); b = self.c; c = .top ]",
    };
    ads_buf bytes = ADS_BUF_INIT;
    ads_error err;
    for (size_t i = 0; i < sizeof records / sizeof records[0]; i++) {
        /* records holding expressions */
        ads_value orig = record_text(records[i]);
        ads_value one = decoded(&orig, &bytes);
        ads_value two;
        assert_int_equal(ads_msgpack_decode_value(&two, arena, bytes.p, bytes.len, 0, &err), 0);
        assert_int_equal(one.type, ADS_RECORD);
        assert_true(ads_value_same(&one, &two));
        assert_true(ads_value_same(&two, &one));
        assert_true(ads_value_same(&orig, &one));
        /* === never evaluates: distinct expression objects do not match */
        assert_false(ads_value_equiv(&one, &two));
        ads_value other = record_text(changed[i]);
        ads_value three = decoded(&other, &bytes);
        assert_false(ads_value_same(&one, &three));
        assert_false(ads_value_same(&three, &one));
        /* a blob whose metadata holds them */
        ads_value blob = blob_with_meta(records[i]);
        ads_value b1 = decoded(&blob, &bytes), b2 = decoded(&blob, &bytes);
        assert_int_equal(b1.type, ADS_BLOB);
        assert_true(b1.u.blob->meta != b2.u.blob->meta);
        assert_true(ads_value_same(&b1, &b2));
        assert_true(ads_value_same(&blob, &b1));
        ads_value bother = blob_with_meta(changed[i]);
        ads_value b3 = decoded(&bother, &bytes);
        assert_false(ads_value_same(&b1, &b3));
        assert_false(ads_value_same(&b3, &b1));
        /* whole rows, as the store keeps them */
        const ads_record *r1, *r2, *r3;
        ads_buf_clear(&bytes);
        assert_int_equal(ads_msgpack_encode_record(&bytes, orig.u.rec, &err), 0);
        assert_int_equal(ads_msgpack_decode_record(&r1, arena, bytes.p, bytes.len, 0, &err), 0);
        assert_int_equal(ads_msgpack_decode_record(&r2, arena, bytes.p, bytes.len, 0, &err), 0);
        ads_buf_clear(&bytes);
        assert_int_equal(ads_msgpack_encode_record(&bytes, other.u.rec, &err), 0);
        assert_int_equal(ads_msgpack_decode_record(&r3, arena, bytes.p, bytes.len, 0, &err), 0);
        ads_value v1 = ads_recordv(r1), v2 = ads_recordv(r2), v3 = ads_recordv(r3);
        assert_true(ads_value_same(&v1, &v2));
        assert_false(ads_value_same(&v1, &v3));
    }
    /* a name written in another case is another expression (names as
     * written), though it reads the same attribute */
    ads_value lower = record_text("[ a = x + 1 ]"), upper = record_text("[ a = X + 1 ]");
    ads_value dl = decoded(&lower, &bytes), du = decoded(&upper, &bytes);
    assert_false(ads_value_same(&dl, &du));
    ads_buf_free(&bytes);
}

static void value__strcmp_fold_orders_bytes_ignoring_ascii_case(void **state)
{
    (void)state;
    static const struct {
        const char *a, *b;
        int want;
    } rows[] = {
        {"abc", "abc", 0}, {"abc", "ABC", 0},   {"ABC", "abd", -1},
        {"abd", "ABC", 1}, {"ab", "abc", -1},   {"abc", "ab", 1},
        {"", "", 0},       {"", "a", -1},       {"a", "", 1},
        {"Z", "a", 1},     {"[", "a", -1},      {"_", "A", -1},
        {"\x7f", "z", 1},  {"\xe9", "\x7f", 1}, {"a\xc9", "a\xe9", -1},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        ads_str a = {rows[i].a, strlen(rows[i].a)}, b = {rows[i].b, strlen(rows[i].b)};
        int got = ads_value__strcmp_fold(a, b);
        if (got != rows[i].want)
            fail_msg("strcmp_fold('%s', '%s') = %d, not %d", rows[i].a, rows[i].b, got,
                     rows[i].want);
    }
    /* lengths, not NULs, bound the strings */
    ads_str x = {"a\0b", 3}, y = {"a\0c", 3};
    assert_int_equal(ads_value__strcmp_fold(x, y), -1);
    ads_str e1 = {NULL, 0}, e2 = {"", 0};
    assert_int_equal(ads_value__strcmp_fold(e1, e2), 0);
}

int main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(value__type_names_cover_every_type),
        T(value__string_copy_owns_its_bytes),
        T(value__number_view_of_integers_booleans_and_reals),
        T(value__is_needs_the_same_type_and_value),
        T(value__is_never_identifies_lists_records_or_blobs),
        T(value__equiv_promotes_numbers_and_folds_case),
        T(value__equiv_undefined_and_error_match_only_themselves),
        T(value__equiv_compares_lists_records_and_blobs_by_contents),
        T(value__records_holding_expressions_compare_the_expressions),
        T(value__same_is_exact_structure),
        T(value__same_holds_for_expressions_decoded_twice_from_the_same_bytes),
        T(value__strcmp_fold_orders_bytes_ignoring_ascii_case),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
