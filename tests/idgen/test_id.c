/*
 * tests/idgen/test_id.c: the 128-bit identifiers: fields, text forms written
 * and read (every spelling and every kind of bad input), kinds, order, and
 * the random sources.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "idgen/idgen.h"

static int parse(ads_id *id, const char *s, ads_error *err)
{
    return ads_id_parse(id, s, strlen(s), ADS_ID_PARSE_HASH_OPTIONAL, err);
}

static const char *fmt(ads_id id)
{
    static char buf[ADS_ID_TEXT_MAX + 1];
    size_t n = ads_id_format(buf, id);
    assert_int_equal(n, strlen(buf));
    return buf;
}

static uint64_t rng_state = 0x853c49e6748fea9bULL;
static uint64_t rnd(void)
{
    uint64_t x = rng_state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return rng_state = x;
}

static void id__seed_example_reads_as_documented(void **state)
{
    (void)state;
    ads_id id;
    ads_ouid_fields f;
    assert_int_equal(parse(&id, "#571eed18-0031-000000000002-1", NULL), 0);
    assert_int_equal(ads_id_kind_of(id), ADS_ID_ORDERED);
    ads_ouid_unpack(&f, id);
    assert_int_equal(f.time, 0x571eed18);
    assert_int_equal(f.counter, 3);
    assert_int_equal(f.version, 1);
    assert_false(f.backfill);
    assert_int_equal(f.node, 2);
    assert_int_equal(f.clockseq, 1);
    assert_string_equal(fmt(id), "#571eed18-0031-000000000002-1");
}

static void id__legacy_split_node_reads_and_writes_canonical(void **state)
{
    (void)state;
    ads_id id;
    assert_int_equal(parse(&id, "#4ee73065-0021-292c0a0f-59a9-1", NULL), 0);
    assert_string_equal(fmt(id), "#4ee73065-0021-292c0a0f59a9-1");
    ads_ouid_fields f;
    ads_ouid_unpack(&f, id);
    assert_int_equal(f.node, 0x292c0a0f59a9ULL);
    assert_int_equal(f.counter, 2);
}

static void id__leading_zeros_and_case_are_optional(void **state)
{
    (void)state;
    ads_id a, b;
    assert_int_equal(parse(&a, "571EED18-31-2-1", NULL), 0);
    assert_int_equal(parse(&b, "#0571eed18-0000031-000000000002-0001", NULL), 0);
    assert_true(ads_id_eq(a, b));
    assert_string_equal(fmt(a), "#571eed18-0031-000000000002-1");
}

static void id__wide_fields_are_written_in_full(void **state)
{
    (void)state;
    ads_ouid_fields f = {ADS_OUID_TIME_MAX, ADS_OUID_COUNTER_MAX, 1, true,
                         (UINT64_C(1) << 47) - 1, 0xffff};
    ads_id id, back;
    assert_int_equal(ads_ouid_pack(&id, &f, NULL), 0);
    assert_string_equal(fmt(id), "#fffffffff-ffffff9-7fffffffffff-ffff");
    assert_int_equal(parse(&back, fmt(id), NULL), 0);
    assert_true(ads_id_eq(id, back));
}

static void id__uuid_reads_and_writes_lower_case(void **state)
{
    (void)state;
    ads_id id;
    assert_int_equal(parse(&id, "#39E454B8-3F1D-476D-B49D-CDA8E452F6C7", NULL), 0);
    assert_int_equal(ads_id_kind_of(id), ADS_ID_RANDOM);
    assert_string_equal(fmt(id), "#39e454b8-3f1d-476d-b49d-cda8e452f6c7");
    assert_int_equal(id.hi, 0x39e454b83f1d476dULL);
    assert_int_equal(id.lo, 0xb49dcda8e452f6c7ULL);
}

static void id__luid_reads_and_writes_decimal(void **state)
{
    (void)state;
    ads_id id;
    assert_int_equal(parse(&id, "#1495", NULL), 0);
    assert_int_equal(ads_id_kind_of(id), ADS_ID_INCREMENT);
    assert_int_equal(id.lo, 1495);
    assert_string_equal(fmt(id), "#1495");
    assert_int_equal(parse(&id, "18446744073709551615", NULL), 0);
    assert_int_equal(id.lo, UINT64_MAX);
    assert_string_equal(fmt(id), "#18446744073709551615");
    assert_string_equal(fmt(ads_luid(0)), "#0");
}

static void expect_error(const char *text, int code, int column, const char *needle)
{
    ads_id id = {7, 7};
    ads_error err;
    int rc = parse(&id, text, &err);
    if (rc != code || err.column != column || !strstr(err.message, needle))
        fail_msg("'%s': rc %d col %d msg '%s'; expected rc %d col %d containing '%s'", text, rc,
                 err.column, err.message, code, column, needle);
    assert_int_equal(id.hi, 7); /* nothing written on failure */
    assert_int_equal(id.lo, 7);
}

static void id__bad_text_names_what_and_where(void **state)
{
    (void)state;
    expect_error("", ADS_ESYNTAX, 1, "empty");
    expect_error("#", ADS_ESYNTAX, 2, "empty");
    expect_error("#abc", ADS_ESYNTAX, 2, "decimal digits only");
    expect_error("#12x4", ADS_ESYNTAX, 4, "unexpected 'x'");
    expect_error("#1.2", ADS_ESYNTAX, 3, "unexpected '.'");
    expect_error("#18446744073709551616", ADS_ERANGE, 21, "over 18446744073709551615");
    expect_error("#123456789012345678901", ADS_ERANGE, 22, "over");
    expect_error("#571eed18-0031-800000000002-1", ADS_ERANGE, 16, "top bit");
    expect_error("#571eed18-0032-000000000002-1", ADS_ESYNTAX, 14, "version digit '2'");
    expect_error("#1234567890-0031-2-1", ADS_ERANGE, 11, "time group has 10 digits");
    expect_error("#1-12345671-2-1", ADS_ERANGE, 11, "counter group has 8 digits");
    expect_error("#1-1-1234567890123-1", ADS_ERANGE, 18, "node group has 13 digits");
    expect_error("#1-1-2-12345", ADS_ERANGE, 12, "clock sequence group has 5");
    expect_error("#1-1--1", ADS_ESYNTAX, 6, "empty group");
    expect_error("#1-1-2-1-", ADS_ESYNTAX, 10, "empty group");
    expect_error("#-1", ADS_ESYNTAX, 2, "empty group");
    expect_error("#1-2", ADS_ESYNTAX, 5, "2 groups");
    expect_error("#1-2-3", ADS_ESYNTAX, 7, "3 groups");
    expect_error("#1-1-1-1-1-1", ADS_ESYNTAX, 11, "too many groups");
    expect_error("#1-1-1234567-123456-1", ADS_ERANGE, 14, "two groups has 13 digits");
    expect_error("#39e454b8-3f1d-476d-749d-cda8e452f6c7", ADS_ESYNTAX, 21, "variant");
    expect_error("#12\xc3\xa9", ADS_ESYNTAX, 4, "byte 0xc3");
    expect_error("#12\xff", ADS_ESYNTAX, 4, "byte 0xff");
    expect_error("# 12", ADS_ESYNTAX, 2, "unexpected ' '");
}

static void id__hash_required_in_classad_source(void **state)
{
    (void)state;
    ads_id id;
    ads_error err;
    assert_int_equal(ads_id_parse(&id, "1495", 4, ADS_ID_PARSE_HASH_REQUIRED, &err),
                     ADS_ESYNTAX);
    assert_int_equal(err.column, 1);
    assert_string_equal(err.message, "identifier: expected '#'");
    assert_int_equal(ads_id_parse(&id, "#1495", 5, ADS_ID_PARSE_HASH_REQUIRED, &err), 0);
}

static void id__parse_reads_only_len_bytes(void **state)
{
    (void)state;
    ads_id id;
    assert_int_equal(ads_id_parse(&id, "#1495junk", 5, 0, NULL), 0);
    assert_int_equal(id.lo, 1495);
}

static void id__kind_comes_from_the_bits(void **state)
{
    (void)state;
    assert_int_equal(ads_id_kind_of((ads_id){0, 5}), ADS_ID_INCREMENT);
    assert_int_equal(ads_id_kind_of((ads_id){1, UINT64_C(1) << 63}), ADS_ID_RANDOM);
    assert_int_equal(ads_id_kind_of((ads_id){1, 5}), ADS_ID_ORDERED);
    assert_string_equal(ads_id_kind_name(ADS_ID_ORDERED), "ordered");
    assert_string_equal(ads_id_kind_name(ADS_ID_RANDOM), "random");
    assert_string_equal(ads_id_kind_name(ADS_ID_INCREMENT), "increment");
}

static void id__compare_is_unsigned_128_bit(void **state)
{
    (void)state;
    ads_id a = {1, UINT64_MAX}, b = {2, 0}, c = {UINT64_MAX, 0};
    assert_int_equal(ads_id_cmp(a, b), -1);
    assert_int_equal(ads_id_cmp(b, a), 1);
    assert_int_equal(ads_id_cmp(b, c), -1);
    assert_int_equal(ads_id_cmp(a, a), 0);
    assert_true(ads_id_eq(c, c));
    assert_false(ads_id_eq(a, b));
}

static void id__pack_rejects_fields_too_wide(void **state)
{
    (void)state;
    ads_id id;
    ads_error err;
    ads_ouid_fields f = {UINT64_C(1) << 36, 0, 1, false, 1, 1};
    assert_int_equal(ads_ouid_pack(&id, &f, &err), ADS_ERANGE);
    assert_string_equal(err.message, "OUID time 68719476736 does not fit 36 bits");
    f.time = 1;
    f.counter = 1u << 24;
    assert_int_equal(ads_ouid_pack(&id, &f, &err), ADS_ERANGE);
    assert_string_equal(err.message, "OUID counter 16777216 does not fit 24 bits");
    f.counter = 0;
    f.version = 8;
    assert_int_equal(ads_ouid_pack(&id, &f, &err), ADS_ERANGE);
    f.version = 1;
    f.node = UINT64_C(1) << 47;
    assert_int_equal(ads_ouid_pack(&id, &f, &err), ADS_ERANGE);
    assert_string_equal(err.message, "OUID node 800000000000 does not fit 47 bits");
}

static void id__uuids_are_version_4_and_distinct(void **state)
{
    (void)state;
    ads_id ids[512];
    assert_int_equal(ads_uuid_new_n(ids, 512, NULL), 0);
    for (int i = 0; i < 512; i++) {
        assert_int_equal((ids[i].hi >> 12) & 0xf, 4);
        assert_int_equal(ids[i].lo >> 62, 2);
        assert_int_equal(ads_id_kind_of(ids[i]), ADS_ID_RANDOM);
        for (int j = 0; j < i; j++)
            assert_false(ads_id_eq(ids[i], ids[j]));
    }
    ads_id one;
    assert_int_equal(ads_uuid_new(&one, NULL), 0);
    assert_int_equal(ads_id_kind_of(one), ADS_ID_RANDOM);
}

static void id__node_ids_are_47_bits_and_nonzero(void **state)
{
    (void)state;
    uint64_t seen_or = 0;
    for (int i = 0; i < 1000; i++) {
        uint64_t n;
        assert_int_equal(ads_node_new(&n, NULL), 0);
        assert_true(n != 0);
        assert_int_equal(n >> 47, 0);
        seen_or |= n;
    }
    assert_int_equal(seen_or, (UINT64_C(1) << 47) - 1); /* every bit gets used */
}

/* Random valid ids of every kind survive format then parse. */
static void id__random_ids_round_trip_through_text(void **state)
{
    (void)state;
    for (int i = 0; i < 300000; i++) {
        ads_id id, back;
        switch (i % 4) {
        case 0: /* OUID */
        case 1: {
            ads_ouid_fields f = {rnd() & ADS_OUID_TIME_MAX, (uint32_t)(rnd() & 0xffffff), 1,
                                 (rnd() & 1) != 0, rnd() & ((UINT64_C(1) << 47) - 1),
                                 (uint16_t)rnd()};
            if (f.time == 0 && f.counter == 0 && !f.backfill)
                f.time = 1; /* hi == 0 would make it a LUID */
            assert_int_equal(ads_ouid_pack(&id, &f, NULL), 0);
            break;
        }
        case 2:
            id.hi = rnd() | 1;
            id.lo = rnd() | (UINT64_C(1) << 63);
            break;
        default:
            id = ads_luid(rnd() >> (rnd() & 63));
            break;
        }
        const char *text = fmt(id);
        assert_true(strlen(text) <= ADS_ID_TEXT_MAX);
        if (parse(&back, text, NULL) != 0)
            fail_msg("'%s' does not parse back", text);
        assert_true(ads_id_eq(id, back));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(id__seed_example_reads_as_documented),
        cmocka_unit_test(id__legacy_split_node_reads_and_writes_canonical),
        cmocka_unit_test(id__leading_zeros_and_case_are_optional),
        cmocka_unit_test(id__wide_fields_are_written_in_full),
        cmocka_unit_test(id__uuid_reads_and_writes_lower_case),
        cmocka_unit_test(id__luid_reads_and_writes_decimal),
        cmocka_unit_test(id__bad_text_names_what_and_where),
        cmocka_unit_test(id__hash_required_in_classad_source),
        cmocka_unit_test(id__parse_reads_only_len_bytes),
        cmocka_unit_test(id__kind_comes_from_the_bits),
        cmocka_unit_test(id__compare_is_unsigned_128_bit),
        cmocka_unit_test(id__pack_rejects_fields_too_wide),
        cmocka_unit_test(id__uuids_are_version_4_and_distinct),
        cmocka_unit_test(id__node_ids_are_47_bits_and_nonzero),
        cmocka_unit_test(id__random_ids_round_trip_through_text),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
