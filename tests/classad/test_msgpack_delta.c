/*
 * tests/classad/test_msgpack_delta.c: row differences (classad/msgpack_delta.c).
 *
 * Seeded random pairs of related rows, as a record's rows differ over its
 * history (values changed, attributes dropped and added, short and long
 * values, lists, nested records, expressions, rows of up to 60 attributes
 * whose index needs two bytes an offset): the difference applied to the base
 * gives the row byte for byte, and an unchanged row costs one byte per 128
 * attributes. Rows of two versions, or bytes that are not a row, are not
 * differenced; a damaged difference (every prefix, every byte flipped) is
 * refused or makes some row, and never reads past its input (the suite runs
 * under AddressSanitizer too).
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
#include "classad/msgpack.h"
#include "classad/msgpack_int.h"

#include "tests/classad/arena_fixture.h"

static uint64_t rng;

static uint32_t below(uint32_t n)
{
    rng = rng * 6364136223846793005u + 1442695040888963407u;
    return (uint32_t)((rng >> 33) % n);
}

#define NNAMES 60

/* The value of attribute i in variant v: a few kinds, some long. */
static void value_text(ads_buf *b, int i, unsigned v)
{
    switch ((i + v) % 7) {
    case 0:
        ads_buf_printf(b, "%u", v * 977u);
        break;
    case 1:
        ads_buf_printf(b, "%u.5", v);
        break;
    case 2:
        ads_buf_printf(b, "\"s%u\"", v);
        break;
    case 3: {
        /* a string past 255 bytes: offsets after it need two bytes */
        ads_buf_adds(b, "\"");
        for (unsigned k = 0; k < 40 + v % 300; k++)
            ads_buf_addc(b, (char)('a' + (k + v) % 26));
        ads_buf_adds(b, "\"");
        break;
    }
    case 4:
        ads_buf_printf(b, "{ %u, \"x\", { %u } }", v, v + 1);
        break;
    case 5:
        ads_buf_printf(b, "[ P = %u; q = \"r\" ]", v);
        break;
    default:
        ads_buf_printf(b, "A%d + %u", (i + 1) % NNAMES, v);
        break;
    }
}

/* A record with the attributes whose variant is not 0 (variant[i] - 1). */
static void encode(ads_buf *row, const unsigned *variant)
{
    ads_buf text = ADS_BUF_INIT;
    ads_error err;
    ads_buf_adds(&text, "[");
    for (int i = 0; i < NNAMES; i++) {
        if (!variant[i])
            continue;
        ads_buf_printf(&text, " A%d = ", i);
        value_text(&text, i, variant[i] - 1);
        ads_buf_adds(&text, ";");
    }
    ads_buf_adds(&text, " ]");
    const ads_record *r;
    if (ads_record_parse(&r, arena, text.p, text.len, &err))
        fail_msg("%s: %s", ads_buf_cstr(&text), err.message);
    ads_buf_clear(row);
    assert_int_equal(ads_msgpack_encode_record(row, r, &err), 0);
    ads_buf_free(&text);
}

/* A base and a row that differs from it as a record's next row may. */
static void related(unsigned *base, unsigned *next, unsigned width)
{
    unsigned n = 1 + below(width);
    for (int i = 0; i < NNAMES; i++) {
        base[i] = (unsigned)i < n && below(4) ? 1 + below(500) : 0;
        unsigned r = below(100);
        next[i] = !base[i] ? (r < 8 ? 1 + below(500) : 0)
                  : r < 70 ? base[i]
                  : r < 85 ? 1 + below(500)
                           : 0;
    }
}

static void made_again(const ads_buf *row, const ads_buf *base, ads_buf *d, ads_buf *out, int pair)
{
    ads_error err;
    ads_buf_clear(d);
    ads_buf_clear(out);
    if (ads_msgpack__delta(d, row->p, row->len, base->p, base->len) != 0)
        fail_msg("pair %d: no difference", pair);
    if (ads_msgpack__undelta(out, d->p, d->len, base->p, base->len, &err))
        fail_msg("pair %d: %s", pair, err.message);
    if (out->len != row->len || memcmp(out->p, row->p, row->len) != 0)
        fail_msg("pair %d: the row made again differs (%zu bytes, not %zu)", pair, out->len,
                 row->len);
}

static void delta__random_related_rows_made_again_byte_for_byte(void **state)
{
    (void)state;
    ads_buf a = ADS_BUF_INIT, b = ADS_BUF_INIT, d = ADS_BUF_INIT, out = ADS_BUF_INIT;
    unsigned base[NNAMES], next[NNAMES];
    size_t small = 0, whole = 0;
    rng = 17;
    for (int pair = 0; pair < 1500; pair++) {
        related(base, next, pair % 3 == 0 ? 10 : NNAMES);
        encode(&a, base);
        encode(&b, next);
        made_again(&b, &a, &d, &out, pair);
        /* and the other way round */
        made_again(&a, &b, &d, &out, pair);
        small += d.len;
        whole += a.len;
        if (pair % 64 == 0)
            ads_arena_reset(arena);
    }
    /* a record's rows share most of their bytes */
    assert_true(small * 3 < whole);
    ads_buf_free(&a);
    ads_buf_free(&b);
    ads_buf_free(&d);
    ads_buf_free(&out);
}

static void delta__an_unchanged_row_is_a_copy_step_per_128_attributes(void **state)
{
    (void)state;
    ads_buf a = ADS_BUF_INIT, d = ADS_BUF_INIT, out = ADS_BUF_INIT;
    unsigned v[NNAMES];
    for (unsigned n = 0; n <= NNAMES; n++) {
        for (unsigned i = 0; i < NNAMES; i++)
            v[i] = i < n ? 1 + i : 0;
        encode(&a, v);
        made_again(&a, &a, &d, &out, (int)n);
        assert_int_equal(d.len, n ? 1 : 0);
        if (n)
            assert_int_equal((unsigned char)d.p[0], n - 1); /* copy n */
    }
    /* one value changed: copy 2 (A0 and A1: names sort as text), skip 1,
     * one entry of its own (a length byte, then key "A10" and the integer
     * 879300 in 4 + 5 bytes), copy the other 57 */
    for (unsigned i = 0; i < NNAMES; i++)
        v[i] = 1 + i;
    encode(&a, v);
    ads_buf b = ADS_BUF_INIT;
    v[10] = 901;
    encode(&b, v);
    made_again(&b, &a, &d, &out, 0);
    assert_int_equal(d.len, 14);
    assert_memory_equal(d.p,
                        "\x01\x80\xc0\x09\xa3"
                        "A10"
                        "\xce\x00\x0d\x6a\xc4\x38",
                        14);
    ads_buf_free(&a);
    ads_buf_free(&b);
    ads_buf_free(&d);
    ads_buf_free(&out);
}

/* The offset of a row's version byte (after its header's extension head). */
static size_t version_at(const ads_buf *row)
{
    unsigned char h = (unsigned char)row->p[1];
    return h >= 0xd5 && h <= 0xd8 ? 3 : h == 0xc7 ? 4 : h == 0xc8 ? 5 : 7;
}

static void delta__rows_of_two_versions_or_not_rows_are_not_differenced(void **state)
{
    (void)state;
    ads_buf a = ADS_BUF_INIT, b = ADS_BUF_INIT, d = ADS_BUF_INIT;
    ads_error err;
    unsigned v[NNAMES] = {3, 4, 5};
    encode(&a, v);
    encode(&b, v);
    b.p[version_at(&b)] = ADS_MSGPACK_VERSION_IDS;
    assert_int_equal(ads_msgpack__delta(&d, b.p, b.len, a.p, a.len), 1);
    assert_int_equal(d.len, 0);
    static const char junk[] = "\x92\xd5\x10\x01\x01\x81";
    assert_int_equal(ads_msgpack__delta(&d, junk, sizeof junk - 1, a.p, a.len), 1);
    assert_int_equal(ads_msgpack__delta(&d, a.p, a.len, "\x93", 1), 1);
    assert_int_equal(ads_msgpack__undelta(&d, "\x00", 1, junk, sizeof junk - 1, &err),
                     ADS_ECORRUPT);
    assert_non_null(strstr(err.message, "a base that is not a row"));
    /* steps past the base, an entry past the end, a zero length */
    assert_int_equal(ads_msgpack__undelta(&d, "\x03", 1, a.p, a.len, &err), ADS_ECORRUPT);
    assert_non_null(strstr(err.message, "past the end of its base"));
    assert_int_equal(ads_msgpack__undelta(&d, "\x00\x02", 2, a.p, a.len, &err), ADS_ECORRUPT);
    assert_string_equal(err.message,
                        "msgpack: a row difference steps past the end of its base at byte 1");
    assert_int_equal(ads_msgpack__undelta(&d, "\xc0\x05\x01", 3, a.p, a.len, &err), ADS_ECORRUPT);
    assert_int_equal(ads_msgpack__undelta(&d, "\xc0\x00", 2, a.p, a.len, &err), ADS_ECORRUPT);
    assert_int_equal(ads_msgpack__undelta(&d, "\xc0\x80", 2, a.p, a.len, &err), ADS_ECORRUPT);
    assert_int_equal(d.len, 0);
    ads_buf_free(&a);
    ads_buf_free(&b);
    ads_buf_free(&d);
}

static void undelta__damaged_differences_never_read_past_their_input(void **state)
{
    (void)state;
    ads_buf a = ADS_BUF_INIT, b = ADS_BUF_INIT, d = ADS_BUF_INIT, out = ADS_BUF_INIT;
    unsigned base[NNAMES], next[NNAMES];
    ads_error err;
    rng = 99;
    for (int pair = 0; pair < 40; pair++) {
        related(base, next, NNAMES);
        encode(&a, base);
        encode(&b, next);
        ads_buf_clear(&d);
        assert_int_equal(ads_msgpack__delta(&d, b.p, b.len, a.p, a.len), 0);
        /* every prefix, copied so that reading past it is caught */
        for (size_t n = 0; n < d.len; n++) {
            unsigned char *p = malloc(n ? n : 1);
            memcpy(p, d.p, n);
            ads_buf_clear(&out);
            int rc = ads_msgpack__undelta(&out, p, n, a.p, a.len, &err);
            assert_true(rc == 0 || rc == ADS_ECORRUPT);
            free(p);
        }
        /* every byte flipped */
        unsigned char *p = malloc(d.len);
        for (size_t i = 0; i < d.len; i++) {
            memcpy(p, d.p, d.len);
            p[i] ^= (unsigned char)(1 + below(255));
            ads_buf_clear(&out);
            int rc = ads_msgpack__undelta(&out, p, d.len, a.p, a.len, &err);
            assert_true(rc == 0 || rc == ADS_ECORRUPT);
        }
        free(p);
        ads_arena_reset(arena);
    }
    ads_buf_free(&a);
    ads_buf_free(&b);
    ads_buf_free(&d);
    ads_buf_free(&out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(delta__random_related_rows_made_again_byte_for_byte, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(delta__an_unchanged_row_is_a_copy_step_per_128_attributes,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(delta__rows_of_two_versions_or_not_rows_are_not_differenced,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(undelta__damaged_differences_never_read_past_their_input,
                                        setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
