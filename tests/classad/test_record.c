/*
 * tests/classad/test_record.c: classad/record.c, in-memory records: the
 * case-folded name hash and comparison, the builder (order kept, a repeated
 * name replaced in place, empty names refused), the open-addressing index
 * (collisions and wrap-around included), a record with an attribute put
 * first (ads_record_prepend), literal expressions, and the view
 * that evaluation reads records through.
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

#include "tests/classad/arena_fixture.h"

static ads_record_builder *builder(void)
{
    ads_record_builder *b;
    ads_error err;
    if (ads_record_builder_new(&b, arena, &err))
        fail_msg("builder: %s", err.message);
    return b;
}

static const ads_expr *parse(const char *text)
{
    const ads_expr *e;
    ads_error err;
    if (ads_expr_parse(&e, arena, text, strlen(text), &err))
        fail_msg("'%s': %s", text, err.message);
    return e;
}

static void add(ads_record_builder *b, const char *name, const char *expr)
{
    ads_error err;
    if (ads_record_builder_add(b, name, strlen(name), parse(expr), &err))
        fail_msg("add %s: %s", name, err.message);
}

/* The text of record r's attribute at index i, as "name = expr". */
static const char *attr_text(const ads_record *r, size_t i)
{
    static char text[256];
    ads_buf b = ADS_BUF_INIT;
    ads_str name = ads_record_name(r, i);
    ads_expr_unparse(&b, ads_record_expr(r, i));
    snprintf(text, sizeof text, "%.*s = %s", (int)name.len, name.p, ads_buf_cstr(&b));
    ads_buf_free(&b);
    return text;
}

static const char *record_text(const ads_record *r)
{
    static char text[512];
    ads_buf b = ADS_BUF_INIT;
    ads_record_unparse(&b, r);
    snprintf(text, sizeof text, "%s", ads_buf_cstr(&b));
    ads_buf_free(&b);
    return text;
}

/* Names of every length around the 8-byte words the hash reads: each
 * byte of the name counts (its last 1..7 bytes are read apart), in any
 * case, and no byte after it does. */
static void record__name_hash_reads_every_byte_of_every_length(void **state)
{
    (void)state;
    const char *base = "Memory_Request2Arch_OpSys";
    for (size_t len = 0; len <= 24; len++) {
        char name[32], upper[32], other[32];
        memcpy(name, base, 25);
        for (size_t i = 0; i < 25; i++)
            upper[i] = (char)((name[i] >= 'a' && name[i] <= 'z') ? name[i] - 32 : name[i]);
        uint32_t h = ads_name_hash(name, len);
        assert_int_equal(ads_name_hash(upper, len), h);
        /* what follows the name: anything */
        memcpy(other, name, 25);
        other[len] = '#';
        assert_int_equal(ads_name_hash(other, len), h);
        for (size_t i = 0; i < len; i++) {
            memcpy(other, name, 25);
            other[i] = '#';
            if (ads_name_hash(other, len) == h)
                fail_msg("length %zu: byte %zu does not count", len, i);
        }
    }
}

static void record__name_hash_is_over_case_folded_bytes(void **state)
{
    (void)state;
    assert_int_equal(ads_name_hash("a", 1), ads_name_hash("A", 1));
    assert_int_not_equal(ads_name_hash("", 0), ads_name_hash("a", 1));
    /* every byte, in every position of an 8-byte word and past it, folds
     * exactly when it is an ASCII letter */
    for (int c = 0; c < 256; c++) {
        for (size_t at = 0; at < 11; at++) {
            char a[12] = "xxxxxxxxxxx", b[12] = "xxxxxxxxxxx";
            a[at] = (char)c;
            b[at] = (char)((c >= 'A' && c <= 'Z') ? c + 32 : (c >= 'a' && c <= 'z') ? c - 32 : c);
            if (b[at] != a[at])
                assert_int_equal(ads_name_hash(a, 11), ads_name_hash(b, 11));
            else if (c != 'x')
                assert_int_not_equal(ads_name_hash(a, 11), ads_name_hash("xxxxxxxxxxx", 11));
        }
    }
    assert_int_equal(ads_name_hash("RequestMemoryLimit", 18), ads_name_hash("requestmemorylimit", 18));
    assert_int_not_equal(ads_name_hash("RequestMemoryLimit", 18),
                         ads_name_hash("RequestMemoryLimiT_", 19));
    assert_int_equal(ads_name_hash("Memory", 6), ads_name_hash("mEMORY", 6));
    assert_int_equal(ads_name_hash("Memory_2", 8), ads_name_hash("MEMORY_2", 8));
    assert_int_not_equal(ads_name_hash("Memory", 6), ads_name_hash("Memorx", 6));
    /* only ASCII letters fold: '[' is not '{', and U+00C9 is not U+00E9 */
    assert_int_not_equal(ads_name_hash("[", 1), ads_name_hash("{", 1));
    assert_int_not_equal(ads_name_hash("\xc3\x89", 2), ads_name_hash("\xc3\xa9", 2));
    /* the length bounds the name */
    assert_int_equal(ads_name_hash("ab", 1), ads_name_hash("a", 1));
    assert_int_not_equal(ads_name_hash("a\0", 2), ads_name_hash("a", 1));
}

static void record__names_compare_ignoring_ascii_case(void **state)
{
    (void)state;
    assert_true(ads_name__eq("Memory", 6, "Memory", 6));
    assert_true(ads_name__eq("Memory", 6, "mEMORY", 6));
    assert_true(ads_name__eq("", 0, "", 0));
    assert_true(ads_name__eq("a_1", 3, "A_1", 3));
    assert_false(ads_name__eq("Memory", 6, "Memor", 5));
    assert_false(ads_name__eq("Memory", 6, "Memorx", 6));
    assert_false(ads_name__eq("[", 1, "{", 1));
    assert_false(ads_name__eq("@", 1, "`", 1));
    assert_false(ads_name__eq("\xc3\x89", 2, "\xc3\xa9", 2));
    assert_true(ads_name__eq("a\0b", 3, "A\0B", 3));
    assert_false(ads_name__eq("a\0b", 3, "a\0c", 3));
}

static void record__builder_keeps_the_order_attributes_were_added_in(void **state)
{
    (void)state;
    ads_record_builder *b = builder();
    add(b, "Zeta", "1");
    add(b, "alpha", "a + 1");
    add(b, "Mid", "\"x\"");
    const ads_record *r = ads_record_builder_finish(b);
    assert_non_null(r);
    assert_int_equal(ads_record_size(r), 3);
    assert_string_equal(attr_text(r, 0), "Zeta = 1");
    assert_string_equal(attr_text(r, 1), "alpha = a + 1");
    assert_string_equal(attr_text(r, 2), "Mid = \"x\"");
    assert_string_equal(record_text(r), "[ Zeta = 1; alpha = a + 1; Mid = \"x\" ]");
}

static void record__repeated_name_keeps_the_last_expression_at_the_first_position(void **state)
{
    (void)state;
    ads_record_builder *b = builder();
    add(b, "Memory", "1");
    add(b, "Cpus", "2");
    add(b, "MEMORY", "3");
    add(b, "memory", "4");
    const ads_record *r = ads_record_builder_finish(b);
    assert_int_equal(ads_record_size(r), 2);
    /* the first spelling of the name stays, with the last expression */
    assert_string_equal(attr_text(r, 0), "Memory = 4");
    assert_string_equal(attr_text(r, 1), "Cpus = 2");
    ads_value v;
    assert_int_equal(ads_record_eval_attr(&v, r, "memory", 6, arena), 0);
    assert_int_equal(v.type, ADS_INTEGER);
    assert_int_equal(v.u.i, 4);
}

static void record__empty_names_are_refused(void **state)
{
    (void)state;
    ads_record_builder *b = builder();
    ads_error err;
    ads_value one = ads_int(1);
    memset(&err, 0, sizeof err);
    assert_int_equal(ads_record_builder_add(b, "", 0, parse("1"), &err), ADS_EINVAL);
    assert_int_equal(err.code, ADS_EINVAL);
    assert_string_equal(err.message, "record: empty attribute name");
    memset(&err, 0, sizeof err);
    assert_int_equal(ads_record_builder_add_value(b, "x", 0, &one, &err), ADS_EINVAL);
    assert_string_equal(err.message, "record: empty attribute name");
    assert_int_equal(ads_record_builder_add(b, "", 0, parse("1"), NULL), ADS_EINVAL);
    /* the builder goes on without the refused attribute */
    assert_int_equal(ads_record_builder_add_value(b, "x", 1, &one, &err), 0);
    const ads_record *r = ads_record_builder_finish(b);
    assert_int_equal(ads_record_size(r), 1);
    assert_string_equal(attr_text(r, 0), "x = 1");
}

static void record__names_starting_with_two_underscores_are_allowed(void **state)
{
    (void)state;
    ads_record_builder *b = builder();
    add(b, "__internal", "1");
    const ads_record *r = ads_record_builder_finish(b);
    assert_int_equal(ads_record_size(r), 1);
    assert_non_null(ads_record_lookup(r, "__INTERNAL", 10));
}

static void record__lookup_ignores_case_and_misses_are_null(void **state)
{
    (void)state;
    ads_record_builder *b = builder();
    add(b, "Memory", "2048");
    add(b, "Arch", "\"X86_64\"");
    const ads_record *r = ads_record_builder_finish(b);
    const ads_expr *e = ads_record_lookup(r, "memory", 6);
    assert_ptr_equal(e, ads_record_expr(r, 0));
    assert_ptr_equal(ads_record_lookup(r, "ARCH", 4), ads_record_expr(r, 1));
    assert_null(ads_record_lookup(r, "Mem", 3));
    assert_null(ads_record_lookup(r, "Memory2", 7));
    assert_null(ads_record_lookup(r, "Disk", 4));
    /* the length bounds the name */
    assert_ptr_equal(ads_record_lookup(r, "ArchX", 4), ads_record_expr(r, 1));
    assert_int_equal(ads_record__find(r, "arch", 4, ads_name_hash("arch", 4)), 1);
    assert_int_equal(ads_record__find(r, "disk", 4, ads_name_hash("disk", 4)), -1);
}

static void record__empty_record_has_nothing_to_find(void **state)
{
    (void)state;
    const ads_record *r = ads_record_builder_finish(builder());
    assert_non_null(r);
    assert_int_equal(ads_record_size(r), 0);
    assert_null(ads_record_lookup(r, "a", 1));
    assert_int_equal(ads_record__find(r, "a", 1, ads_name_hash("a", 1)), -1);
    assert_string_equal(record_text(r), "[ ]");
    ads_value v;
    assert_int_equal(ads_record_eval_attr(&v, r, "a", 1, arena), 0);
    assert_int_equal(v.type, ADS_UNDEFINED);
}

static void record__many_attributes_grow_the_builder_and_stay_findable(void **state)
{
    (void)state;
    enum { N = 1000 };
    static char names[N][16];
    ads_record_builder *b = builder();
    for (int i = 0; i < N; i++) {
        ads_value v = ads_int(i);
        int len = snprintf(names[i], sizeof names[i], "Attr%d", i);
        assert_int_equal(ads_record_builder_add_value(b, names[i], (size_t)len, &v, NULL), 0);
    }
    const ads_record *r = ads_record_builder_finish(b);
    assert_int_equal(ads_record_size(r), N);
    for (int i = 0; i < N; i++) {
        char upper[16];
        int len = snprintf(upper, sizeof upper, "ATTR%d", i);
        const ads_value *v = ads_expr_literal_value(ads_record_lookup(r, upper, (size_t)len));
        if (!v || v->type != ADS_INTEGER || v->u.i != i)
            fail_msg("%s not found as %d", upper, i);
        ads_str name = ads_record_name(r, (size_t)i);
        assert_int_equal(name.len, strlen(names[i]));
        assert_memory_equal(name.p, names[i], name.len);
    }
    assert_null(ads_record_lookup(r, "Attr1000", 8));
    assert_null(ads_record_lookup(r, "Attr-1", 6));
}

/* n different names whose hash lands in slot `slot` of an index of cap
 * slots, written into names[] (each up to 16 bytes). */
static void names_in_slot(char names[][16], int n, uint32_t slot, uint32_t cap)
{
    int found = 0;
    for (int i = 0; found < n && i < 100000; i++) {
        char t[16];
        int len = snprintf(t, sizeof t, "n%d", i);
        if ((ads_name_hash(t, (size_t)len) & (cap - 1)) == slot)
            memcpy(names[found++], t, (size_t)len + 1);
    }
    assert_int_equal(found, n);
}

static void record__colliding_names_probe_and_wrap_around_the_index(void **state)
{
    (void)state;
    /* two attributes make an index of 4 slots; three names all hashing to
     * the last slot: two stored (the second wraps to slot 0), one absent */
    char names[3][16];
    names_in_slot(names, 3, 3, 4);
    ads_record_builder *b = builder();
    ads_value v1 = ads_int(1), v2 = ads_int(2);
    assert_int_equal(ads_record_builder_add_value(b, names[0], strlen(names[0]), &v1, NULL), 0);
    assert_int_equal(ads_record_builder_add_value(b, names[1], strlen(names[1]), &v2, NULL), 0);
    const ads_record *r = ads_record_builder_finish(b);
    assert_int_equal(r->cap, 4);
    assert_int_equal(r->slots[3], 1);
    assert_int_equal(r->slots[0], 2);
    const ads_value *v = ads_expr_literal_value(ads_record_lookup(r, names[1], strlen(names[1])));
    assert_non_null(v);
    assert_int_equal(v->u.i, 2);
    v = ads_expr_literal_value(ads_record_lookup(r, names[0], strlen(names[0])));
    assert_non_null(v);
    assert_int_equal(v->u.i, 1);
    assert_null(ads_record_lookup(r, names[2], strlen(names[2])));
}

static void record__index_has_room_for_twice_the_attributes(void **state)
{
    (void)state;
    static const struct {
        int n;
        size_t cap;
    } rows[] = {{1, 4}, {2, 4}, {3, 8}, {4, 8}, {5, 16}, {8, 16}, {9, 32}};
    for (size_t k = 0; k < sizeof rows / sizeof rows[0]; k++) {
        ads_record_builder *b = builder();
        static char names[16][16];
        for (int i = 0; i < rows[k].n; i++) {
            ads_value v = ads_int(i);
            snprintf(names[i], sizeof names[i], "a%d", i);
            assert_int_equal(ads_record_builder_add_value(b, names[i], strlen(names[i]), &v, NULL),
                             0);
        }
        const ads_record *r = ads_record_builder_finish(b);
        if (r->cap != rows[k].cap)
            fail_msg("%d attributes: index of %zu slots, not %zu", rows[k].n, r->cap, rows[k].cap);
        size_t used = 0;
        for (size_t j = 0; j < r->cap; j++)
            used += r->slots[j] != 0;
        assert_int_equal(used, (size_t)rows[k].n);
    }
}

static void record__literal_expressions_hold_their_value(void **state)
{
    (void)state;
    ads_value v = ads_string("abc", 3);
    const ads_expr *e;
    ads_error err;
    assert_int_equal(ads_expr_literal(&e, arena, &v, &err), 0);
    v = ads_int(7); /* the expression holds a copy of the value */
    const ads_value *lit = ads_expr_literal_value(e);
    assert_non_null(lit);
    assert_int_equal(lit->type, ADS_STRING);
    assert_int_equal(lit->u.s.len, 3);
    assert_memory_equal(lit->u.s.p, "abc", 3);
    ads_buf b = ADS_BUF_INIT;
    ads_expr_unparse(&b, e);
    assert_string_equal(ads_buf_cstr(&b), "\"abc\"");
    ads_buf_free(&b);
    /* parsed literals are literals; anything to evaluate is not */
    assert_non_null(ads_expr_literal_value(parse("42")));
    assert_int_equal(ads_expr_literal_value(parse("42"))->u.i, 42);
    assert_null(ads_expr_literal_value(parse("a")));
    assert_null(ads_expr_literal_value(parse("1 + 1")));
    assert_null(ads_expr_literal_value(parse("{ 1, a }")));
    assert_null(ads_expr_literal_value(parse("[ a = 1 ]")));
    assert_null(ads_expr_literal_value(parse("f(1)")));
}

static void record__add_value_stores_a_literal_of_the_value(void **state)
{
    (void)state;
    ads_record_builder *b = builder();
    ads_value v = ads_real(2.5);
    assert_int_equal(ads_record_builder_add_value(b, "x", 1, &v, NULL), 0);
    v = ads_int(9);
    const ads_record *r = ads_record_builder_finish(b);
    const ads_value *lit = ads_expr_literal_value(ads_record_expr(r, 0));
    assert_non_null(lit);
    assert_int_equal(lit->type, ADS_REAL);
    assert_true(lit->u.r == 2.5);
}

static void record__view_gives_values_directly_and_expressions_to_evaluate(void **state)
{
    (void)state;
    ads_record_builder *b = builder();
    add(b, "Memory", "2048");
    add(b, "Big", "Memory * 2");
    const ads_record *r = ads_record_builder_finish(b);
    ads_view outer = ads_record_view(r, NULL);
    ads_view inner = ads_record_view(r, &outer);
    assert_ptr_equal(inner.parent, &outer);
    assert_null(outer.parent);
    assert_ptr_equal(outer.self, r);
    ads_value v = ads_int(-1);
    const ads_expr *e = parse("0");
    const char *name = "MEMORY";
    assert_int_equal(outer.ops->lookup(outer.self, name, 6, ads_name_hash(name, 6), arena, &v, &e),
                     1);
    assert_null(e);
    assert_int_equal(v.type, ADS_INTEGER);
    assert_int_equal(v.u.i, 2048);
    name = "big";
    v = ads_int(-1);
    assert_int_equal(outer.ops->lookup(outer.self, name, 3, ads_name_hash(name, 3), arena, &v, &e),
                     1);
    assert_ptr_equal(e, ads_record_expr(r, 1));
    assert_int_equal(v.u.i, -1); /* untouched: the expression is the answer */
    name = "disk";
    assert_int_equal(outer.ops->lookup(outer.self, name, 4, ads_name_hash(name, 4), arena, &v, &e),
                     0);
    /* evaluation through the view */
    ads_value out;
    assert_int_equal(ads_expr_eval(&out, parse("Big + 1"), &outer, arena), 0);
    assert_int_equal(out.type, ADS_INTEGER);
    assert_int_equal(out.u.i, 4097);
}

static void record__enclosing_views_are_searched_outward(void **state)
{
    (void)state;
    ads_record_builder *b = builder();
    add(b, "a", "1");
    add(b, "b", "2");
    const ads_record *outer = ads_record_builder_finish(b);
    b = builder();
    add(b, "b", "20");
    add(b, "c", "a + b");
    const ads_record *inner = ads_record_builder_finish(b);
    ads_view ov = ads_record_view(outer, NULL);
    ads_view iv = ads_record_view(inner, &ov);
    ads_value out;
    assert_int_equal(ads_expr_eval(&out, parse("c"), &iv, arena), 0);
    assert_int_equal(out.u.i, 21);
    assert_int_equal(ads_expr_eval(&out, parse("parent.b"), &iv, arena), 0);
    assert_int_equal(out.u.i, 2);
    assert_int_equal(ads_expr_eval(&out, parse(".b"), &iv, arena), 0);
    assert_int_equal(out.u.i, 2);
    assert_int_equal(ads_expr_eval(&out, parse("c"), &ov, arena), 0);
    assert_int_equal(out.type, ADS_UNDEFINED);
}

static const ads_record *prepended(const ads_record *r, const char *name, const char *expr)
{
    const ads_record *out;
    ads_error err;
    if (ads_record_prepend(&out, arena, r, name, strlen(name), parse(expr), &err))
        fail_msg("prepend %s: %s", name, err.message);
    return out;
}

static void record__prepend_puts_the_attribute_first_and_keeps_the_rest(void **state)
{
    (void)state;
    ads_record_builder *b = builder();
    char name[16];
    for (int i = 0; i < 40; i++) { /* past the first index sizes */
        snprintf(name, sizeof name, "A%d", i); /* the builder keeps the pointer */
        add(b, ads_arena_strndup(arena, name, strlen(name)), i % 2 ? "1" : "\"x\"");
    }
    const ads_record *r = ads_record_builder_finish(b);
    const ads_record *p = prepended(r, "AdType", "\"Machine\"");
    assert_int_equal(ads_record_size(p), 41);
    assert_string_equal(attr_text(p, 0), "AdType = \"Machine\"");
    assert_string_equal(attr_text(p, 1), "A0 = \"x\"");
    assert_string_equal(attr_text(p, 40), "A39 = 1");
    /* every name is found through the new index, case-blind */
    assert_non_null(ads_record_lookup(p, "adtype", 6));
    for (int i = 0; i < 40; i++) {
        snprintf(name, sizeof name, "a%d", i);
        assert_ptr_equal(ads_record_lookup(p, name, strlen(name)),
                         ads_record_lookup(r, name, strlen(name)));
    }
    assert_null(ads_record_lookup(p, "Missing", 7));
    assert_int_equal(ads_record_size(r), 40); /* r itself unchanged */
    assert_null(ads_record_lookup(r, "AdType", 6));
}

static void record__prepend_of_a_name_the_record_has_keeps_its_expression_first(void **state)
{
    (void)state;
    ads_record_builder *b = builder();
    add(b, "Cpus", "2");
    add(b, "ADTYPE", "\"Job\"");
    add(b, "Memory", "Cpus * 1024");
    const ads_record *p = prepended(ads_record_builder_finish(b), "AdType", "\"Machine\"");
    /* as a builder given AdType first, then the record, would make it */
    assert_string_equal(record_text(p), "[ AdType = \"Job\"; Cpus = 2; Memory = Cpus * 1024 ]");
    ads_value v;
    assert_int_equal(ads_record_eval_attr(&v, p, "Memory", 6, arena), 0);
    assert_int_equal(v.u.i, 2048);
    const ads_record *e = prepended(ads_record_builder_finish(builder()), "X", "1");
    assert_string_equal(record_text(e), "[ X = 1 ]");
}

static void record__prepend_refuses_an_empty_name(void **state)
{
    (void)state;
    const ads_record *r = ads_record_builder_finish(builder()), *out = NULL;
    ads_error err;
    assert_int_equal(ads_record_prepend(&out, arena, r, "", 0, parse("1"), &err), ADS_EINVAL);
    assert_string_equal(err.message, "record: empty attribute name");
    assert_null(out);
}

int main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(record__name_hash_is_over_case_folded_bytes),
        T(record__name_hash_reads_every_byte_of_every_length),
        T(record__names_compare_ignoring_ascii_case),
        T(record__builder_keeps_the_order_attributes_were_added_in),
        T(record__repeated_name_keeps_the_last_expression_at_the_first_position),
        T(record__empty_names_are_refused),
        T(record__names_starting_with_two_underscores_are_allowed),
        T(record__lookup_ignores_case_and_misses_are_null),
        T(record__empty_record_has_nothing_to_find),
        T(record__many_attributes_grow_the_builder_and_stay_findable),
        T(record__colliding_names_probe_and_wrap_around_the_index),
        T(record__index_has_room_for_twice_the_attributes),
        T(record__literal_expressions_hold_their_value),
        T(record__add_value_stores_a_literal_of_the_value),
        T(record__view_gives_values_directly_and_expressions_to_evaluate),
        T(record__enclosing_views_are_searched_outward),
        T(record__prepend_puts_the_attribute_first_and_keeps_the_rest),
        T(record__prepend_of_a_name_the_record_has_keeps_its_expression_first),
        T(record__prepend_refuses_an_empty_name),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
