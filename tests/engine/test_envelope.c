/*
 * tests/engine/test_envelope.c: the stored row's envelope (engine/row.c,
 * docs/storage.md "On-disk layout"): the packed envelope a store writes
 * (version 2) and the 32-byte one of dumps and older stores (version 1).
 *
 * Random fields (every double's bits, zones over all of int32, dates in the
 * key or in the row, long keys) read back bit for bit from both; the bytes
 * are pinned for a row in UTC, a zone east and west, and a difference whose
 * dates are its key's; every prefix and every flipped bit of a row, and of
 * the key dates a row relies on, is refused; fields malformed under a sound
 * checksum are refused with what is wrong.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "base/buf.h"
#include "engine/engine_int.h"

static uint64_t rng = 0x9e3779b97f4a7c15u;

static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* A row's fields, and the key it is stored under. */
typedef struct fields {
    unsigned flags;
    double ts;
    int32_t offset;
    int64_t systs;
    unsigned char key[ADS_KEY_INLINE_MAX + 16];
    size_t klen;
    unsigned char full[600]; /* a long key's whole form */
    size_t flen;
    unsigned char data[64];
    size_t dlen;
} fields;

static void random_fields(fields *f, bool history)
{
    uint64_t bits = next();
    switch (next() % 4) {
    case 0:
        f->ts = 1700000000.0 + (double)(next() % 100000000) / 1e6;
        break;
    case 1:
        f->ts = -0.0;
        break;
    default:
        memcpy(&f->ts, &bits, 8); /* any bits: NaNs, infinities, denormals */
    }
    f->offset = next() % 3 ? (int32_t)(next() % 100801) - 50400 : (int32_t)(uint32_t)next();
    f->systs = (int64_t)next();
    f->flags = (next() % 2 ? ROW_DELETED : 0) | (history && next() % 2 ? ROW_DELTA : 0);
    /* a record key: type id and a string value; long keys have a short form */
    char name[500];
    size_t n = next() % 4 == 0 ? ADS_KEY_INLINE_MAX + next() % 90 : 4 + next() % 40;
    for (size_t i = 0; i < n; i++)
        name[i] = (char)('a' + next() % 26);
    ads_buf b = ADS_BUF_INIT;
    ads_value sv = ads_string(name, n);
    ads_key__typeid(&b, 16);
    assert_int_equal(ads_key__value(&b, &sv, "Name", NULL), 0);
    assert_true(b.len <= sizeof f->full);
    f->flen = b.len;
    memcpy(f->full, b.p, b.len);
    ads_buf_free(&b);
    f->klen = ads_key__stored(f->key, f->full, f->flen, 0);
    if (history) {
        ads_key__sortable_double(f->key + f->klen, f->ts);
        for (int i = 0; i < 8; i++)
            f->key[f->klen + 8 + i] = (unsigned char)((uint64_t)f->systs >> (56 - 8 * i));
        f->klen += 16;
    }
    f->dlen = 3 + next() % 60;
    for (size_t i = 0; i < f->dlen; i++)
        f->data[i] = (unsigned char)next();
}

static void build(ads_buf *out, const fields *f, unsigned extra, bool dump)
{
    const unsigned char *fk = f->flen > ADS_KEY_INLINE_MAX ? f->full : NULL;
    ads_buf_clear(out);
    (dump ? ads_row__build_dump : ads_row__build)(out, f->key, f->klen, f->flags | extra, f->ts,
                                                  f->offset, f->systs, fk, f->flen, f->data,
                                                  f->dlen);
    assert_false(out->failed);
}

static void same_bits(double a, double b)
{
    assert_memory_equal(&a, &b, 8);
}

/* The row of f parses back to f's fields. */
static void reads_back(const fields *f, const ads_buf *row)
{
    row_env e;
    ads_error err;
    if (ads_row__parse(&e, f->key, f->klen, (const unsigned char *)row->p, row->len, "row", &err))
        fail_msg("%s", err.message);
    assert_int_equal(e.flags, (f->flags | (f->flen > ADS_KEY_INLINE_MAX ? ROW_LONGKEY : 0)));
    same_bits(e.ts, f->ts);
    assert_int_equal(e.offset, f->offset);
    assert_int_equal(e.systs, f->systs);
    assert_int_equal(e.len, f->dlen);
    assert_memory_equal(e.data, f->data, f->dlen);
    if (f->flen > ADS_KEY_INLINE_MAX) {
        assert_int_equal(e.full_key_len, f->flen);
        assert_memory_equal(e.full_key, f->full, f->flen);
    } else {
        assert_null(e.full_key);
    }
    assert_true(ads_row__key_sound(f->key, f->klen, (const unsigned char *)row->p, row->len));
}

static size_t zone_bytes(int32_t offset)
{
    uint32_t z = ((uint32_t)offset << 1) ^ (uint32_t)(offset < 0 ? -1 : 0);
    size_t n = 1;
    while (z >= 0x80) {
        z >>= 7;
        n++;
    }
    return n;
}

static void envelope__random_fields_read_back_from_both_versions(void **state)
{
    (void)state;
    ads_buf row = ADS_BUF_INIT;
    int keydates = 0, kept = 0;
    for (int i = 0; i < 20000; i++) {
        fields f;
        bool history = i % 2;
        random_fields(&f, history);
        size_t tail = (f.flen > ADS_KEY_INLINE_MAX ? 4 + f.flen : 0) + f.dlen;
        build(&row, &f, 0, true);
        assert_int_equal(row.len, 32 + tail);
        assert_int_equal((unsigned char)row.p[4], 1);
        reads_back(&f, &row);
        build(&row, &f, 0, false);
        assert_int_equal((unsigned char)row.p[4], 2);
        assert_int_equal(row.len, 6 + zone_bytes(f.offset) + 16 + tail);
        reads_back(&f, &row);
        if (!history)
            continue;
        /* dates left to the key: unless they would not read back from it */
        build(&row, &f, ROW_KEYDATES, false);
        bool negzero = f.ts == 0 && signbit(f.ts);
        assert_int_equal(row.len, 6 + zone_bytes(f.offset) + (negzero ? 16 : 0) + tail);
        assert_int_equal(((unsigned char)row.p[5] & ROW_KEYDATES) != 0, !negzero);
        keydates += !negzero;
        kept += negzero;
        reads_back(&f, &row);
    }
    assert_true(keydates > 1000 && kept > 100);
    ads_buf_free(&row);
}

static void envelope__bytes_are_as_documented(void **state)
{
    (void)state;
    fields f;
    memset(&f, 0, sizeof f);
    random_fields(&f, true);
    f.flags = 0;
    f.flen = 10; /* type 16, "abc" */
    memcpy(f.full,
           "\0\0\0\x10\x20"
           "abc\0\0",
           10);
    f.klen = ads_key__stored(f.key, f.full, f.flen, 0);
    f.ts = 1700000000.5;
    f.systs = 1700000000500000;
    ads_key__sortable_double(f.key + f.klen, f.ts);
    for (int i = 0; i < 8; i++)
        f.key[f.klen + 8 + i] = (unsigned char)((uint64_t)f.systs >> (56 - 8 * i));
    f.klen += 16;
    f.dlen = 6;
    memcpy(f.data, "\x92\xd5\x10\x01\x01\x80", 6);
    static const struct {
        int32_t offset;
        unsigned char zone[3];
        size_t zn;
    } zones[] = {{0, {0x00}, 1},
                 {3600, {0xa0, 0x38}, 2},
                 {-28800, {0xff, 0xc1, 0x03}, 3},
                 {19800, {0xb0, 0xb5, 0x02}, 3}};
    ads_buf row = ADS_BUF_INIT;
    for (size_t z = 0; z < sizeof zones / sizeof *zones; z++) {
        f.offset = zones[z].offset;
        build(&row, &f, 0, false);
        const unsigned char *p = (const unsigned char *)row.p;
        assert_int_equal(row.len, 6 + zones[z].zn + 16 + 6);
        assert_int_equal(p[4], 2);
        assert_int_equal(p[5], 0);
        assert_memory_equal(p + 6, zones[z].zone, zones[z].zn);
        double ts;
        memcpy(&ts, p + 6 + zones[z].zn, 8); /* little-endian, as on x86 */
        same_bits(ts, f.ts);
        int64_t systs;
        memcpy(&systs, p + 14 + zones[z].zn, 8);
        assert_int_equal(systs, f.systs);
        assert_memory_equal(p + 22 + zones[z].zn, f.data, 6);
        uint32_t sum = (uint32_t)XXH3_64bits(p + 4, row.len - 4);
        assert_memory_equal(p, &sum, 4);
        /* a difference's: no dates; the checksum covers the key's */
        f.flags = ROW_DELTA;
        build(&row, &f, ROW_KEYDATES, false);
        p = (const unsigned char *)row.p;
        assert_int_equal(row.len, 6 + zones[z].zn + 6);
        assert_int_equal(p[5], ROW_DELTA | ROW_KEYDATES);
        assert_memory_equal(p + 6 + zones[z].zn, f.data, 6);
        sum = (uint32_t)XXH3_64bits_withSeed(f.key + f.klen - 16, 16,
                                             XXH3_64bits(p + 4, row.len - 4));
        assert_memory_equal(p, &sum, 4);
        f.flags = 0;
    }
    ads_buf_free(&row);
}

static void refused(const fields *f, const unsigned char *v, size_t vlen, const unsigned char *key,
                    size_t klen)
{
    row_env e;
    ads_error err;
    int rc = ads_row__parse(&e, key, klen, v, vlen, "row", &err);
    if (rc != ADS_ECORRUPT)
        fail_msg("a damaged row of %zu bytes (of %zu) was read (%d)", vlen, f->dlen, rc);
}

static void envelope__every_prefix_and_flipped_bit_is_refused(void **state)
{
    (void)state;
    ads_buf row = ADS_BUF_INIT;
    unsigned char v[1024], key[sizeof((fields *)0)->key];
    for (int i = 0; i < 400; i++) {
        fields f;
        random_fields(&f, i % 2);
        build(&row, &f, i % 4 == 1 ? ROW_KEYDATES : 0, i % 3 == 0);
        assert_true(row.len <= sizeof v);
        memcpy(v, row.p, row.len);
        for (size_t n = 0; n < row.len; n++)
            refused(&f, v, n, f.key, f.klen);
        for (size_t bit = 0; bit < row.len * 8; bit++) {
            v[bit / 8] ^= (unsigned char)(1u << bit % 8);
            refused(&f, v, row.len, f.key, f.klen);
            v[bit / 8] ^= (unsigned char)(1u << bit % 8);
        }
        if (!((unsigned char)row.p[5] & ROW_KEYDATES))
            continue;
        /* the dates the row takes from its key are covered as its own */
        memcpy(key, f.key, f.klen);
        for (size_t bit = 0; bit < 128; bit++) {
            size_t at = f.klen - 16 + bit / 8;
            key[at] ^= (unsigned char)(1u << bit % 8);
            refused(&f, v, row.len, key, f.klen);
            key[at] ^= (unsigned char)(1u << bit % 8);
        }
        /* a latest key holds no dates */
        refused(&f, v, row.len, f.key, 4);
    }
    ads_buf_free(&row);
}

/* v with its checksum made for key (as the store would), then parsed: the
 * error's message, which must hold want. */
static void malformed(unsigned char *v, size_t vlen, const unsigned char *key, size_t klen,
                      const char *want)
{
    uint64_t h = XXH3_64bits(v + 4, vlen - 4);
    if (v[4] == 2 && (v[5] & 8) && klen >= 16)
        h = XXH3_64bits_withSeed(key + klen - 16, 16, h);
    uint32_t sum = (uint32_t)h;
    memcpy(v, &sum, 4);
    row_env e;
    ads_error err;
    assert_int_equal(ads_row__parse(&e, key, klen, v, vlen, "latest row of type T", &err),
                     ADS_ECORRUPT);
    if (!strstr(err.message, want))
        fail_msg("'%s' does not say '%s'", err.message, want);
    assert_non_null(strstr(err.message, "latest row of type T"));
}

static void envelope__malformed_fields_under_a_sound_checksum_are_refused(void **state)
{
    (void)state;
    unsigned char key[40] = {0, 0, 0, 16, 'k', 0, 0};
    size_t klen = 7 + 16; /* a history key: 16 bytes of dates */
    unsigned char v[64];
    memset(v, 0, sizeof v);
    v[4] = 2;
    /* the zone: not in its shortest form, or over 32 bits */
    memcpy(v + 6, "\x80\x00", 2);
    malformed(v, 6 + 2 + 16 + 6, key, klen, "zone offset is malformed");
    memcpy(v + 6, "\xff\xff\xff\xff\x7f", 5);
    malformed(v, 6 + 5 + 16 + 6, key, klen, "zone offset is malformed");
    memcpy(v + 6, "\xff\xff\xff\xff\xff\x01", 6);
    malformed(v, 6 + 6 + 16 + 6, key, klen, "zone offset is malformed");
    memset(v + 6, 0, 8);
    /* unknown flags, in either version */
    v[5] = 0x10;
    malformed(v, 6 + 1 + 16 + 6, key, klen, "unknown flags 0x10");
    v[4] = 1;
    v[5] = ROW_KEYDATES;
    malformed(v, 32 + 6, key, klen, "unknown flags 0x08");
    /* a version of neither */
    v[4] = 3;
    v[5] = 0;
    malformed(v, 32 + 6, key, klen, "envelope version 3 is unknown");
    /* dates from a key that holds none, a row cut short after its dates */
    v[4] = 2;
    v[5] = ROW_DELTA | ROW_KEYDATES;
    malformed(v, 6 + 1 + 6, key, 7, "takes its dates from a key that holds none");
    v[5] = 0;
    malformed(v, 6 + 1 + 16 + 2, key, klen, "too short");
    malformed(v, 6 + 1 + 10, key, klen, "too short");
    /* a long key longer than the row, or short enough to be inline */
    v[5] = ROW_LONGKEY;
    uint32_t kl = 500;
    memcpy(v + 6 + 1 + 16, &kl, 4);
    malformed(v, 6 + 1 + 16 + 4 + 6, key, klen, "bad long key length");
    kl = 3;
    memcpy(v + 6 + 1 + 16, &kl, 4);
    malformed(v, 6 + 1 + 16 + 4 + 6, key, klen, "bad long key length");
    malformed(v, 6 + 1 + 16 + 2, key, klen, "truncated long key");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(envelope__random_fields_read_back_from_both_versions),
        cmocka_unit_test(envelope__bytes_are_as_documented),
        cmocka_unit_test(envelope__every_prefix_and_flipped_bit_is_refused),
        cmocka_unit_test(envelope__malformed_fields_under_a_sound_checksum_are_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
