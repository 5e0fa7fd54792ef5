/*
 * tests/idgen/test_kid.c: k-ordered 64/96-bit ids (idgen/kid.c): the uid
 * README vectors, field ranges, pack/unpack and text round trips, the
 * order-preserving text form, strict text decoding, and the generator driven
 * by a fake clock.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "idgen/idgen.h"

/* The README's id: {uid, 'uid@127.0.0.1', {1539, 625275, 432128}, 1}. */
static const ads_kid_fields readme_fields = {1539, 625275, 432128, 1, 0x03eb2732};
static const uint8_t readme_global[12] = {0x00, 0x60, 0x39, 0x8a, 0x03, 0xeb,
                                          0x27, 0x32, 0x7b, 0x69, 0x80, 0x01};

/* A seeded xorshift64* generator: the same values on every run. */
static uint64_t rng_state = UINT64_C(0x2545f4914f6cdd1d);

static uint64_t rng_next(void)
{
    uint64_t x = rng_state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    rng_state = x;
    return x * UINT64_C(0x2545f4914f6cdd1d);
}

/* Random valid fields (C with its low 10 bits zero, as it reads back). */
static ads_kid_fields rng_fields(void)
{
    ads_kid_fields f;
    f.a = (uint32_t)(rng_next() & 0xfffff);
    f.b = (uint32_t)(rng_next() % 1000000);
    f.c = (uint32_t)(rng_next() % 1000000) & ~1023u;
    f.seq = (uint32_t)(rng_next() & 0x3fff);
    f.node = (uint32_t)rng_next();
    return f;
}

static void assert_fields_equal(const ads_kid_fields *a, const ads_kid_fields *b)
{
    assert_int_equal(a->a, b->a);
    assert_int_equal(a->b, b->b);
    assert_int_equal(a->c, b->c);
    assert_int_equal(a->seq, b->seq);
    assert_int_equal(a->node, b->node);
}

static void assert_decode_fails(const char *text, const char *message, int column)
{
    uint8_t out[12];
    size_t n = 99;
    ads_error err;

    ads_error_clear(&err);
    assert_int_equal(ads_kid_decode(out, &n, text, strlen(text), &err), ADS_ESYNTAX);
    assert_int_equal(err.code, ADS_ESYNTAX);
    assert_string_equal(err.message, message);
    assert_int_equal(err.column, column);
    assert_int_equal(n, 99);
}

/* ------------------------------------------------------------------------ */
/* README vectors (identifiers.md section 5, ids.tsv kid-encode64)          */
/* ------------------------------------------------------------------------ */

static void kid__pack_global_readme_vector(void **state)
{
    uint8_t bytes[12];
    char text[32];
    (void)state;
    assert_int_equal(ads_kid_pack_global(bytes, &readme_fields, 8, NULL), 0);
    assert_memory_equal(bytes, readme_global, 12);
    assert_int_equal(ads_kid_encode(text, sizeof text, bytes, 12, NULL), 16);
    assert_string_equal(text, ".5.tXVEf8n8vPN.0");
    assert_int_equal(ADS_KID_INTERVAL_DEFAULT, 8);
}

static void kid__pack_local_readme_vector(void **state)
{
    ads_kid_fields f = readme_fields;
    uint8_t bytes[8];
    char text[32];
    uint64_t v = 0;
    int i;
    (void)state;
    f.node = 0;
    assert_int_equal(ads_kid_pack_local(bytes, &f, NULL), 0);
    for (i = 0; i < 8; i++)
        v = v << 8 | bytes[i];
    assert_true(v == (UINT64_C(1539) << 44 | UINT64_C(625275) << 24 | UINT64_C(422) << 14 | 1));
    assert_int_equal(ads_kid_encode(text, sizeof text, bytes, 8, NULL), 11);
    assert_string_equal(text, ".5.tXbhdV.3");
}

static void kid__unpack_readme_vectors(void **state)
{
    ads_kid_fields f, local = readme_fields;
    uint8_t bytes[12];
    size_t n;
    (void)state;
    assert_int_equal(ads_kid_decode(bytes, &n, ".5.tXVEf8n8vPN.0", 16, NULL), 0);
    assert_int_equal(n, 12);
    assert_memory_equal(bytes, readme_global, 12);
    assert_int_equal(ads_kid_unpack_global(&f, bytes, 8, NULL), 0);
    assert_fields_equal(&f, &readme_fields);

    assert_int_equal(ads_kid_decode(bytes, &n, ".5.tXbhdV.3", 11, NULL), 0);
    assert_int_equal(n, 8);
    assert_int_equal(ads_kid_unpack_local(&f, bytes, NULL), 0);
    local.node = 0;
    assert_fields_equal(&f, &local);
}

/* ------------------------------------------------------------------------ */
/* Field ranges                                                             */
/* ------------------------------------------------------------------------ */

static void kid__pack_rejects_fields_too_wide(void **state)
{
    static const struct {
        ads_kid_fields f;
        const char *message;
    } cases[] = {
        {{1u << 20, 0, 0, 0, 0}, "kid: A (megaseconds) 1048576 does not fit in 20 bits"},
        {{0, 1000000, 0, 0, 0}, "kid: B (seconds) 1000000 is over 999999"},
        {{0, 0, 1000000, 0, 0}, "kid: C (microseconds) 1000000 is over 999999"},
        {{0, 0, 0, 16384, 0}, "kid: seq 16384 does not fit in 14 bits"},
    };
    uint8_t bytes[12], before[12];
    ads_error err;
    size_t i;
    (void)state;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        memset(bytes, 0xa5, sizeof bytes);
        memcpy(before, bytes, sizeof bytes);
        assert_int_equal(ads_kid_pack_local(bytes, &cases[i].f, &err), ADS_ERANGE);
        assert_string_equal(err.message, cases[i].message);
        assert_int_equal(ads_kid_pack_global(bytes, &cases[i].f, 8, &err), ADS_ERANGE);
        assert_string_equal(err.message, cases[i].message);
        assert_memory_equal(bytes, before, sizeof bytes);
    }
}

static void kid__pack_accepts_largest_fields(void **state)
{
    ads_kid_fields f = {(1u << 20) - 1, 999999, 999999, 16383, UINT32_MAX}, back;
    uint8_t bytes[12];
    unsigned interval;
    (void)state;
    assert_int_equal(ads_kid_pack_local(bytes, &f, NULL), 0);
    assert_int_equal(ads_kid_unpack_local(&back, bytes, NULL), 0);
    assert_int_equal(back.a, f.a);
    assert_int_equal(back.b, 999999);
    assert_int_equal(back.c, 999424); /* 999999 with the low 10 bits dropped */
    assert_int_equal(back.seq, 16383);
    for (interval = 5; interval <= 10; interval++) {
        assert_int_equal(ads_kid_pack_global(bytes, &f, interval, NULL), 0);
        assert_int_equal(ads_kid_unpack_global(&back, bytes, interval, NULL), 0);
        assert_int_equal(back.b, 999999);
        assert_int_equal(back.node, UINT32_MAX);
    }
}

static void kid__pack_drops_low_10_bits_of_c(void **state)
{
    ads_kid_fields f = readme_fields, back;
    uint8_t a[12], b[12];
    (void)state;
    f.c = 432128 + 1023;
    assert_int_equal(ads_kid_pack_global(a, &f, 8, NULL), 0);
    assert_int_equal(ads_kid_pack_global(b, &readme_fields, 8, NULL), 0);
    assert_memory_equal(a, b, 12);
    assert_int_equal(ads_kid_unpack_global(&back, a, 8, NULL), 0);
    assert_int_equal(back.c, 432128);
}

static void kid__interval_outside_5_to_10_is_rejected(void **state)
{
    static const unsigned bad[] = {0, 4, 11, 20, 1000};
    uint8_t bytes[12];
    ads_kid_fields f;
    ads_error err;
    size_t i;
    (void)state;
    for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char msg[80];
        snprintf(msg, sizeof msg, "kid: neighbourhood interval %u is outside 5..10", bad[i]);
        assert_int_equal(ads_kid_pack_global(bytes, &readme_fields, bad[i], &err), ADS_ERANGE);
        assert_string_equal(err.message, msg);
        assert_int_equal(ads_kid_unpack_global(&f, readme_global, bad[i], &err), ADS_ERANGE);
        assert_string_equal(err.message, msg);
    }
}

static void kid__interval_moves_low_bits_of_b_after_the_node(void **state)
{
    ads_kid_fields f = readme_fields, back;
    uint8_t i5[12], i10[12];
    (void)state;
    assert_int_equal(ads_kid_pack_global(i5, &f, 5, NULL), 0);
    assert_int_equal(ads_kid_pack_global(i10, &f, 10, NULL), 0);
    assert_memory_not_equal(i5, i10, 12);
    /* Decoding with the wrong interval gives a different B (or an error). */
    if (ads_kid_unpack_global(&back, i5, 10, NULL) == 0)
        assert_true(back.b != f.b || back.node != f.node);
    assert_int_equal(ads_kid_unpack_global(&back, i5, 5, NULL), 0);
    assert_fields_equal(&back, &f);
}

static void kid__unpack_rejects_b_or_c_over_999999(void **state)
{
    uint8_t local[8] = {0}, global[12] = {0};
    ads_kid_fields f = {7, 7, 7, 7, 7};
    ads_error err;
    (void)state;
    /* Local: B is bits 43..24 of the 64. All ones is 1048575. */
    local[2] = 0x0f;
    local[3] = 0xff;
    local[4] = 0xff;
    assert_int_equal(ads_kid_unpack_local(&f, local, &err), ADS_ERANGE);
    assert_string_equal(err.message,
                        "kid: the bytes hold B = 1048575 seconds, over 999999: not a k-ordered id");
    assert_int_equal(f.a, 7); /* out untouched */
    /* Local: C >> 10 is bits 23..14; 977 << 10 = 1000448. */
    memset(local, 0, sizeof local);
    local[5] = (uint8_t)(977 >> 2);
    local[6] = (uint8_t)((977 & 3) << 6);
    assert_int_equal(ads_kid_unpack_local(&f, local, &err), ADS_ERANGE);
    assert_string_equal(err.message, "kid: the bytes hold C = 1000448 microseconds, over "
                                     "999999: not a k-ordered id");
    /* Global with I = 8: B's high 12 bits all ones. */
    global[2] = 0x0f;
    global[3] = 0xff;
    global[8] = 0xff;
    assert_int_equal(ads_kid_unpack_global(&f, global, 8, &err), ADS_ERANGE);
    assert_string_equal(err.message,
                        "kid: the bytes hold B = 1048575 seconds, over 999999: not a k-ordered id");
}

static void kid__null_arguments_are_rejected(void **state)
{
    uint8_t bytes[12];
    ads_kid_fields f;
    ads_kid_state st = {0, 0, false};
    char text[20];
    size_t n;
    (void)state;
    assert_int_equal(ads_kid_pack_local(NULL, &readme_fields, NULL), ADS_EINVAL);
    assert_int_equal(ads_kid_pack_local(bytes, NULL, NULL), ADS_EINVAL);
    assert_int_equal(ads_kid_pack_global(NULL, &readme_fields, 8, NULL), ADS_EINVAL);
    assert_int_equal(ads_kid_unpack_local(NULL, bytes, NULL), ADS_EINVAL);
    assert_int_equal(ads_kid_unpack_global(&f, NULL, 8, NULL), ADS_EINVAL);
    assert_int_equal(ads_kid_encode(NULL, 20, bytes, 8, NULL), ADS_EINVAL);
    assert_int_equal(ads_kid_encode(text, 20, NULL, 8, NULL), ADS_EINVAL);
    assert_int_equal(ads_kid_decode(bytes, NULL, "...........", 11, NULL), ADS_EINVAL);
    assert_int_equal(ads_kid_decode(bytes, &n, NULL, 11, NULL), ADS_EINVAL);
    assert_int_equal(ads_kid_next(NULL, &st, 0, NULL, NULL), ADS_EINVAL);
    assert_int_equal(ads_kid_next(&f, NULL, 0, NULL, NULL), ADS_EINVAL);
}

/* ------------------------------------------------------------------------ */
/* Text form                                                                */
/* ------------------------------------------------------------------------ */

static void kid__encode_rejects_bad_length_and_small_buffer(void **state)
{
    uint8_t bytes[16] = {0};
    char text[32];
    ads_error err;
    (void)state;
    assert_int_equal(ads_kid_encode(text, sizeof text, bytes, 9, &err), ADS_EINVAL);
    assert_string_equal(err.message, "kid encode: 9 bytes (expected 8 or 12)");
    assert_int_equal(ads_kid_encode(text, sizeof text, bytes, 16, &err), ADS_EINVAL);
    assert_int_equal(ads_kid_encode(text, 16, bytes, 12, &err), ADS_EINVAL);
    assert_string_equal(err.message, "kid encode: needs 17 bytes with the NUL, the buffer has 16");
    assert_int_equal(ads_kid_encode(text, 11, bytes, 8, &err), ADS_EINVAL);
    assert_int_equal(ads_kid_encode(text, 12, bytes, 8, &err), 11);
    assert_string_equal(text, "...........");
    assert_int_equal(ads_kid_encode(text, 17, bytes, 12, &err), 16);
    assert_string_equal(text, "................");
}

static void kid__encode_uses_the_ordered_alphabet(void **state)
{
    static const char alphabet[] =
        ".0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz";
    uint8_t bytes[12] = {0};
    char text[20];
    unsigned d;
    (void)state;
    /* Put digit d in the first 6 bits. */
    for (d = 0; d < 64; d++) {
        bytes[0] = (uint8_t)(d << 2);
        assert_int_equal(ads_kid_encode(text, sizeof text, bytes, 12, NULL), 16);
        assert_int_equal(text[0], alphabet[d]);
        if (d)
            assert_true(alphabet[d - 1] < alphabet[d]);
    }
    /* All ones: the last character of 8 bytes carries 4 bits and 2 zero pad bits. */
    memset(bytes, 0xff, sizeof bytes);
    assert_int_equal(ads_kid_encode(text, sizeof text, bytes, 8, NULL), 11);
    assert_string_equal(text, "zzzzzzzzzzw");
    assert_int_equal(ads_kid_encode(text, sizeof text, bytes, 12, NULL), 16);
    assert_string_equal(text, "zzzzzzzzzzzzzzzz");
}

static void kid__decode_rejects_wrong_length(void **state)
{
    (void)state;
    assert_decode_fails("", "kid: 0 characters (expected 11 for a local id or 16 for a global id)",
                        1);
    assert_decode_fails(".5.tXbhdV.",
                        "kid: 10 characters (expected 11 for a local id or 16 for a global id)",
                        11);
    assert_decode_fails(".5.tXbhdV.3.",
                        "kid: 12 characters (expected 11 for a local id or 16 for a global id)",
                        13);
    assert_decode_fails(".5.tXVEf8n8vPN.0.",
                        "kid: 17 characters (expected 11 for a local id or 16 for a global id)",
                        17);
    assert_decode_fails(".5.tXVEf8n8vPN.0..........",
                        "kid: 26 characters (expected 11 for a local id or 16 for a global id)",
                        17);
    /* No white space trimming: the text form is exact. */
    assert_decode_fails(" .5.tXbhdV.3",
                        "kid: 12 characters (expected 11 for a local id or 16 for a global id)",
                        13);
}

static void kid__decode_rejects_characters_outside_the_alphabet(void **state)
{
    (void)state;
    assert_decode_fails(".5.tX+hdV.3", "kid: '+' is not in the alphabet (. 0-9 A-Z _ a-z)", 6);
    assert_decode_fails(".5.tX/hdV.3", "kid: '/' is not in the alphabet (. 0-9 A-Z _ a-z)", 6);
    assert_decode_fails("-5.tXbhdV.3", "kid: '-' is not in the alphabet (. 0-9 A-Z _ a-z)", 1);
    assert_decode_fails(".5.tXbhdV.=", "kid: '=' is not in the alphabet (. 0-9 A-Z _ a-z)", 11);
    assert_decode_fails(".5.tXVEf8n8vPN. ",
                        "kid: byte 0x20 is not in the alphabet (. 0-9 A-Z _ a-z)", 16);
    assert_decode_fails(".5.tXVEf8n8v\xc3\xa9.0",
                        "kid: byte 0xc3 is not in the alphabet (. 0-9 A-Z _ a-z)", 13);
}

static void kid__decode_rejects_non_zero_padding_bits(void **state)
{
    uint8_t bytes[12];
    size_t n;
    (void)state;
    /* '3' is digit 4 = 000100: its 2 padding bits are zero; '4' (000101) is not. */
    assert_int_equal(ads_kid_decode(bytes, &n, ".5.tXbhdV.3", 11, NULL), 0);
    assert_decode_fails(".5.tXbhdV.4", "kid: the last character carries non-zero padding bits",
                        11);
    assert_decode_fails(".5.tXbhdV.z", "kid: the last character carries non-zero padding bits",
                        11);
    assert_decode_fails("..........0", "kid: the last character carries non-zero padding bits",
                        11);
}

static void kid__decode_case_matters(void **state)
{
    uint8_t lower[12], upper[12];
    size_t n;
    (void)state;
    /* 'a' and 'A' are different digits (38 and 11), so different ids. */
    assert_int_equal(ads_kid_decode(lower, &n, ".5.tXbhdV.3", 11, NULL), 0);
    assert_int_equal(ads_kid_decode(upper, &n, ".5.tXBhdV.3", 11, NULL), 0);
    assert_memory_not_equal(lower, upper, 8);
    assert_true(memcmp(upper, lower, 8) < 0);
}

static void kid__text_round_trips_200k_random_ids(void **state)
{
    int i;
    (void)state;
    rng_state = UINT64_C(0x2545f4914f6cdd1d);
    for (i = 0; i < 200000; i++) {
        uint8_t bytes[12], back[12];
        char text[20];
        size_t n = i & 1 ? 12 : 8, got;
        uint64_t r1 = rng_next(), r2 = rng_next();
        memcpy(bytes, &r1, 8);
        memcpy(bytes + 8, &r2, 4);
        assert_int_equal(ads_kid_encode(text, sizeof text, bytes, n, NULL), (int)(n * 8 + 5) / 6);
        assert_int_equal(ads_kid_decode(back, &got, text, strlen(text), NULL), 0);
        assert_int_equal(got, n);
        assert_memory_equal(back, bytes, n);
    }
}

static void kid__fields_round_trip_through_bytes_and_text(void **state)
{
    int i;
    (void)state;
    rng_state = UINT64_C(0x853c49e6748fea9b);
    for (i = 0; i < 200000; i++) {
        ads_kid_fields f = rng_fields(), back;
        unsigned interval = 5 + (unsigned)(i % 6);
        uint8_t bytes[12], decoded[12];
        char text[20];
        size_t n;

        assert_int_equal(ads_kid_pack_global(bytes, &f, interval, NULL), 0);
        assert_int_equal(ads_kid_encode(text, sizeof text, bytes, 12, NULL), 16);
        assert_int_equal(ads_kid_decode(decoded, &n, text, 16, NULL), 0);
        assert_int_equal(n, 12);
        assert_int_equal(ads_kid_unpack_global(&back, decoded, interval, NULL), 0);
        assert_fields_equal(&back, &f);

        f.node = 0;
        assert_int_equal(ads_kid_pack_local(bytes, &f, NULL), 0);
        assert_int_equal(ads_kid_encode(text, sizeof text, bytes, 8, NULL), 11);
        assert_int_equal(ads_kid_decode(decoded, &n, text, 11, NULL), 0);
        assert_int_equal(n, 8);
        assert_int_equal(ads_kid_unpack_local(&back, decoded, NULL), 0);
        assert_fields_equal(&back, &f);
    }
}

static int sign(int x)
{
    return (x > 0) - (x < 0);
}

static void kid__text_order_equals_numeric_order(void **state)
{
    int i;
    (void)state;
    rng_state = UINT64_C(0xda942042e4dd58b5);
    for (i = 0; i < 100000; i++) {
        size_t n = i & 1 ? 12 : 8;
        uint8_t a[12], b[12];
        char ta[20], tb[20];
        uint64_t r[4];
        size_t k;

        for (k = 0; k < 4; k++)
            r[k] = rng_next();
        memcpy(a, r, 12);
        memcpy(b, r + 2, 12);
        /* Make many pairs share a prefix, where order is decided late. */
        if (i % 4 == 0)
            memcpy(b, a, n - 1 - (size_t)(r[3] % (n - 1)));
        ads_kid_encode(ta, sizeof ta, a, n, NULL);
        ads_kid_encode(tb, sizeof tb, b, n, NULL);
        assert_int_equal(sign(strcmp(ta, tb)), sign(memcmp(a, b, n)));
    }
}

static void kid__text_order_follows_time_for_local_ids(void **state)
{
    ads_kid_fields f = {0, 0, 0, 0, 0};
    char prev[20] = "", text[20];
    uint8_t bytes[8];
    int i;
    (void)state;
    rng_state = UINT64_C(0x1234567);
    for (i = 0; i < 10000; i++) {
        /* Step forward by a random amount in one of the fields. */
        switch (rng_next() % 4) {
        case 0:
            f.seq++;
            break;
        case 1:
            f.c += 1024;
            f.seq = 0;
            break;
        case 2:
            f.b++;
            f.c = 0;
            f.seq = 0;
            break;
        default:
            f.a++;
            f.b = 0;
            break;
        }
        if (f.seq > 16383 || f.c > 999999 || f.b > 999999) {
            f.a++;
            f.b = f.c = f.seq = 0;
        }
        assert_int_equal(ads_kid_pack_local(bytes, &f, NULL), 0);
        ads_kid_encode(text, sizeof text, bytes, 8, NULL);
        assert_true(strcmp(prev, text) < 0);
        memcpy(prev, text, sizeof text);
    }
}

/* ------------------------------------------------------------------------ */
/* Generator                                                                */
/* ------------------------------------------------------------------------ */

typedef struct fake_clock {
    int64_t now;
    int sleeps;
} fake_clock;

static int64_t fake_now(void *ctx)
{
    return ((fake_clock *)ctx)->now;
}

static void fake_sleep(void *ctx, int64_t ns)
{
    fake_clock *c = ctx;
    assert_true(ns > 0);
    c->now += ns;
    c->sleeps++;
}

#define SEC INT64_C(1000000000)
#define US INT64_C(1000)

static void kid__next_fields_from_clock(void **state)
{
    fake_clock fc = {1539625275 * SEC + 432128 * US + 999, 0};
    ads_clock clock = {fake_now, fake_sleep, &fc};
    ads_kid_state st = {0, 0, false};
    ads_kid_fields f;
    uint8_t bytes[12];
    char text[20];
    (void)state;
    assert_int_equal(ads_kid_next(&f, &st, 0x03eb2732, &clock, NULL), 0);
    assert_int_equal(f.a, 1539);
    assert_int_equal(f.b, 625275);
    assert_int_equal(f.c, 432128);
    assert_int_equal(f.seq, 0);
    assert_int_equal(f.node, 0x03eb2732);
    assert_true(st.used);
    assert_true(st.last_tick == (UINT64_C(1539625275) << 10 | 422));
    /* The second id of the tick is the README's. */
    assert_int_equal(ads_kid_next(&f, &st, 0x03eb2732, &clock, NULL), 0);
    assert_int_equal(f.seq, 1);
    assert_int_equal(ads_kid_pack_global(bytes, &f, 8, NULL), 0);
    ads_kid_encode(text, sizeof text, bytes, 12, NULL);
    assert_string_equal(text, ".5.tXVEf8n8vPN.0");
}

static void kid__next_resets_seq_each_tick(void **state)
{
    fake_clock fc = {1700000000 * SEC, 0};
    ads_clock clock = {fake_now, fake_sleep, &fc};
    ads_kid_state st = {0, 0, false};
    ads_kid_fields f;
    int i;
    (void)state;
    for (i = 0; i < 5; i++) {
        assert_int_equal(ads_kid_next(&f, &st, 1, &clock, NULL), 0);
        assert_int_equal(f.seq, (uint32_t)i);
        assert_int_equal(f.c, 0);
    }
    /* Less than a tick later: same tick. */
    fc.now += 1023 * US;
    assert_int_equal(ads_kid_next(&f, &st, 1, &clock, NULL), 0);
    assert_int_equal(f.seq, 5);
    /* The next tick starts over. */
    fc.now += 1 * US;
    assert_int_equal(ads_kid_next(&f, &st, 1, &clock, NULL), 0);
    assert_int_equal(f.seq, 0);
    assert_int_equal(f.c, 1024);
    /* A new second too. */
    fc.now = 1700000001 * SEC;
    assert_int_equal(ads_kid_next(&f, &st, 1, &clock, NULL), 0);
    assert_int_equal(f.seq, 0);
    assert_int_equal(f.b, 1);
    assert_int_equal(f.c, 0);
    assert_int_equal(fc.sleeps, 0);
}

static void kid__next_waits_when_16384_used_in_a_tick(void **state)
{
    fake_clock fc = {1700000000 * SEC + 5000 * US, 0};
    ads_clock clock = {fake_now, fake_sleep, &fc};
    ads_kid_state st = {0, 0, false};
    ads_kid_fields f;
    int i;
    (void)state;
    for (i = 0; i < 16384; i++) {
        assert_int_equal(ads_kid_next(&f, &st, 1, &clock, NULL), 0);
        assert_int_equal(f.seq, (uint32_t)i);
        assert_int_equal(f.c, 4 * 1024);
    }
    assert_int_equal(fc.sleeps, 0);
    /* No wrap: the next id waits for the next tick. */
    assert_int_equal(ads_kid_next(&f, &st, 1, &clock, NULL), 0);
    assert_true(fc.sleeps >= 1);
    assert_int_equal(f.seq, 0);
    assert_int_equal(f.c, 5 * 1024);
    assert_true(fc.now >= 1700000000 * SEC + 5 * 1024 * US);
}

static void kid__next_wait_crosses_into_the_next_second(void **state)
{
    /* 999999 µs is tick 976, the last of the second. */
    fake_clock fc = {1700000000 * SEC + 999999 * US, 0};
    ads_clock clock = {fake_now, fake_sleep, &fc};
    ads_kid_state st = {0, 0, false};
    ads_kid_fields f;
    int i;
    (void)state;
    for (i = 0; i < 16384; i++)
        assert_int_equal(ads_kid_next(&f, &st, 1, &clock, NULL), 0);
    assert_int_equal(f.c, 976 * 1024);
    assert_int_equal(ads_kid_next(&f, &st, 1, &clock, NULL), 0);
    assert_int_equal(f.a, 1700);
    assert_int_equal(f.b, 1);
    assert_int_equal(f.c, 0);
    assert_int_equal(f.seq, 0);
    assert_true(fc.now >= 1700000001 * SEC);
}

static void kid__next_never_goes_backwards(void **state)
{
    fake_clock fc = {1700000000 * SEC, 0};
    ads_clock clock = {fake_now, fake_sleep, &fc};
    ads_kid_state st = {0, 0, false}, restarted;
    ads_kid_fields f;
    uint8_t bytes[8];
    char prev[20], text[20];
    int i;
    (void)state;
    assert_int_equal(ads_kid_next(&f, &st, 0, &clock, NULL), 0);
    ads_kid_pack_local(bytes, &f, NULL);
    ads_kid_encode(prev, sizeof prev, bytes, 8, NULL);
    fc.now -= 60 * SEC; /* the clock steps a minute back */
    for (i = 0; i < 20000; i++) {
        assert_int_equal(ads_kid_next(&f, &st, 0, &clock, NULL), 0);
        ads_kid_pack_local(bytes, &f, NULL);
        ads_kid_encode(text, sizeof text, bytes, 8, NULL);
        assert_true(strcmp(prev, text) < 0);
        memcpy(prev, text, sizeof text);
    }
    /* It kept the last tick, and took the next ticks at once when that was
     * used up, without waiting a minute for the clock to catch up. */
    assert_int_equal(fc.sleeps, 0);
    assert_true(fc.now == 1700000000 * SEC - 60 * SEC);
    assert_int_equal(st.last_tick, ((uint64_t)1700000000 << 10) + 1);
    /* A restart from the persisted state continues after it too. */
    restarted = st;
    fc.now = 1600000000 * SEC;
    assert_int_equal(ads_kid_next(&f, &restarted, 0, &clock, NULL), 0);
    ads_kid_pack_local(bytes, &f, NULL);
    ads_kid_encode(text, sizeof text, bytes, 8, NULL);
    assert_true(strcmp(prev, text) < 0);
}

static void kid__next_rejects_impossible_state(void **state)
{
    fake_clock fc = {1700000000 * SEC, 0};
    ads_clock clock = {fake_now, fake_sleep, &fc};
    ads_kid_state st = {UINT64_C(1700000000) << 10 | 977, 0, true};
    ads_kid_fields f;
    ads_error err;
    (void)state;
    assert_int_equal(ads_kid_next(&f, &st, 0, &clock, &err), ADS_ERANGE);
    assert_string_equal(err.message,
                        "kid generator: the state holds an impossible tick 1740800000977");
    st.last_tick = (UINT64_C(1) << 20) * 1000000 << 10;
    assert_int_equal(ads_kid_next(&f, &st, 0, &clock, &err), ADS_ERANGE);
}

static void kid__next_clock_before_1970_counts_as_zero(void **state)
{
    fake_clock fc = {-5 * SEC, 0};
    ads_clock clock = {fake_now, fake_sleep, &fc};
    ads_kid_state st = {0, 0, false};
    ads_kid_fields f;
    (void)state;
    assert_int_equal(ads_kid_next(&f, &st, 0, &clock, NULL), 0);
    assert_int_equal(f.a, 0);
    assert_int_equal(f.b, 0);
    assert_int_equal(f.c, 0);
}

static void kid__next_with_system_clock_increases(void **state)
{
    ads_kid_state st = {0, 0, false};
    ads_kid_fields f;
    uint8_t bytes[12];
    char prev[20] = "", text[20];
    int i;
    (void)state;
    for (i = 0; i < 20000; i++) {
        assert_int_equal(ads_kid_next(&f, &st, 0xabcdef01, NULL, NULL), 0);
        assert_int_equal(ads_kid_pack_global(bytes, &f, 8, NULL), 0);
        ads_kid_encode(text, sizeof text, bytes, 12, NULL);
        assert_true(strcmp(prev, text) < 0);
        memcpy(prev, text, sizeof text);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(kid__pack_global_readme_vector),
        cmocka_unit_test(kid__pack_local_readme_vector),
        cmocka_unit_test(kid__unpack_readme_vectors),
        cmocka_unit_test(kid__pack_rejects_fields_too_wide),
        cmocka_unit_test(kid__pack_accepts_largest_fields),
        cmocka_unit_test(kid__pack_drops_low_10_bits_of_c),
        cmocka_unit_test(kid__interval_outside_5_to_10_is_rejected),
        cmocka_unit_test(kid__interval_moves_low_bits_of_b_after_the_node),
        cmocka_unit_test(kid__unpack_rejects_b_or_c_over_999999),
        cmocka_unit_test(kid__null_arguments_are_rejected),
        cmocka_unit_test(kid__encode_rejects_bad_length_and_small_buffer),
        cmocka_unit_test(kid__encode_uses_the_ordered_alphabet),
        cmocka_unit_test(kid__decode_rejects_wrong_length),
        cmocka_unit_test(kid__decode_rejects_characters_outside_the_alphabet),
        cmocka_unit_test(kid__decode_rejects_non_zero_padding_bits),
        cmocka_unit_test(kid__decode_case_matters),
        cmocka_unit_test(kid__text_round_trips_200k_random_ids),
        cmocka_unit_test(kid__fields_round_trip_through_bytes_and_text),
        cmocka_unit_test(kid__text_order_equals_numeric_order),
        cmocka_unit_test(kid__text_order_follows_time_for_local_ids),
        cmocka_unit_test(kid__next_fields_from_clock),
        cmocka_unit_test(kid__next_resets_seq_each_tick),
        cmocka_unit_test(kid__next_waits_when_16384_used_in_a_tick),
        cmocka_unit_test(kid__next_wait_crosses_into_the_next_second),
        cmocka_unit_test(kid__next_never_goes_backwards),
        cmocka_unit_test(kid__next_rejects_impossible_state),
        cmocka_unit_test(kid__next_clock_before_1970_counts_as_zero),
        cmocka_unit_test(kid__next_with_system_clock_increases),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
