/*
 * tests/classad/test_msgpack.c: the MessagePack codec of classad/msgpack.c.
 * Pins the format byte by byte, checks that encoding is deterministic, round
 * trips many seeded random values and records through the bytes and through
 * text, evaluates expressions over encoded rows against the same records in
 * memory, and corrupts valid rows every way a byte can be corrupted (run it
 * under AddressSanitizer: any over-read is a failure there).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <float.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>
#include <msgpack.h>

#include "classad/classad.h"
#include "classad/classad_int.h"
#include "classad/msgpack.h"

#include "tests/classad/arena_fixture.h"

/* ---- helpers ---- */

static const char *hex_of(const void *p, size_t n)
{
    static char out[4096];
    size_t o = 0;
    for (size_t i = 0; i < n && o + 4 < sizeof out; i++)
        o += (size_t)snprintf(out + o, sizeof out - o, i ? " %02x" : "%02x",
                              ((const unsigned char *)p)[i]);
    out[o] = '\0';
    return out;
}

/* The bytes of hex text "92 d5 10" into buf; returns the count. */
static size_t bytes_of(unsigned char *buf, size_t cap, const char *hex)
{
    size_t n = 0;
    while (*hex) {
        if (*hex == ' ') {
            hex++;
            continue;
        }
        unsigned v;
        if (sscanf(hex, "%2x", &v) != 1 || n >= cap)
            fail_msg("bad hex in test: %s", hex);
        buf[n++] = (unsigned char)v;
        hex += 2;
    }
    return n;
}

static void assert_bytes(const ads_buf *b, const char *hex)
{
    unsigned char want[1024];
    size_t n = bytes_of(want, sizeof want, hex);
    if (b->len != n || memcmp(b->p, want, n) != 0)
        fail_msg("encoding differs:\n  want %s\n  got  %s", hex, hex_of(b->p, b->len));
}

static const ads_expr *parse_in(ads_arena *a, const char *text)
{
    const ads_expr *e;
    ads_error err;
    if (ads_expr_parse(&e, a, text, strlen(text), &err))
        fail_msg("'%s': %s", text, err.message);
    return e;
}

static const ads_expr *parse(const char *text)
{
    return parse_in(arena, text);
}

static const ads_record *parse_record(const char *text)
{
    const ads_record *r;
    ads_error err;
    if (ads_record_parse(&r, arena, text, strlen(text), &err))
        fail_msg("'%s': %s", text, err.message);
    return r;
}

static ads_value eval_text(const char *text)
{
    ads_value v;
    assert_int_equal(ads_expr_eval(&v, parse(text), NULL, arena), 0);
    return v;
}

static const char *unparse_value(const ads_value *v)
{
    static ads_buf b = ADS_BUF_INIT;
    ads_buf_clear(&b);
    ads_value_unparse(&b, v);
    return ads_buf_cstr(&b);
}

static void encode_value_ok(ads_buf *b, const ads_value *v)
{
    ads_error err;
    ads_buf_clear(b);
    if (ads_msgpack_encode_value(b, v, &err))
        fail_msg("encode %s: %s", unparse_value(v), err.message);
}

static void encode_record_ok(ads_buf *b, const ads_record *r)
{
    ads_error err;
    ads_buf_clear(b);
    if (ads_msgpack_encode_record(b, r, &err))
        fail_msg("encode record: %s", err.message);
}

/* The value of text, evaluated, must encode as hex. */
static void value_encodes(const char *text, const char *hex)
{
    ads_buf b = ADS_BUF_INIT;
    ads_value v = eval_text(text);
    encode_value_ok(&b, &v);
    assert_bytes(&b, hex);
    /* and decode back to the same value */
    ads_value back;
    ads_error err;
    if (ads_msgpack_decode_value(&back, arena, b.p, b.len, 0, &err))
        fail_msg("decode %s: %s", text, err.message);
    if (!ads_value_same(&v, &back))
        fail_msg("%s decoded as %s", text, unparse_value(&back));
    ads_buf_free(&b);
}

/* The record text must encode as the row hex, and pass the check. */
static void record_encodes(const char *text, const char *hex)
{
    ads_buf b = ADS_BUF_INIT;
    ads_error err;
    encode_record_ok(&b, parse_record(text));
    assert_bytes(&b, hex);
    if (ads_msgpack_check(b.p, b.len, &err))
        fail_msg("check %s: %s", text, err.message);
    ads_buf_free(&b);
}

/* Decoding hex (as a row) must fail with code and a message containing msg. */
static void row_refused(const char *hex, int code, const char *msg)
{
    unsigned char buf[1024];
    size_t n = bytes_of(buf, sizeof buf, hex);
    ads_error err;
    const ads_record *r;
    int rc = ads_msgpack_check(buf, n, &err);
    if (rc != code || !strstr(err.message, msg))
        fail_msg("check of %s: want %d '%s', got %d '%s'", hex, code, msg, rc,
                 rc ? err.message : "");
    rc = ads_msgpack_decode_record(&r, arena, buf, n, 0, &err);
    if (rc != code || !strstr(err.message, msg))
        fail_msg("decode of %s: want %d '%s', got %d '%s'", hex, code, msg, rc,
                 rc ? err.message : "");
}

static void value_refused(const char *hex, const char *msg)
{
    unsigned char buf[1024];
    size_t n = bytes_of(buf, sizeof buf, hex);
    ads_error err;
    ads_value v;
    int rc = ads_msgpack_decode_value(&v, arena, buf, n, 0, &err);
    if (rc != ADS_ECORRUPT || !strstr(err.message, msg))
        fail_msg("decode of %s: want '%s', got %d '%s'", hex, msg, rc, rc ? err.message : "");
}

/* Does the record hold any unevaluated expression (at any depth)? */
static bool value_has_expr(const ads_value *v);

static bool record_has_expr(const ads_record *r)
{
    for (size_t i = 0; i < ads_record_size(r); i++) {
        const ads_value *lit = ads_expr_literal_value(ads_record_expr(r, i));
        if (!lit || value_has_expr(lit))
            return true;
    }
    return false;
}

static bool value_has_expr(const ads_value *v)
{
    switch (v->type) {
    case ADS_LIST:
        for (size_t i = 0; i < v->u.list.n; i++)
            if (value_has_expr(&v->u.list.items[i]))
                return true;
        return false;
    case ADS_RECORD:
        return record_has_expr(v->u.rec);
    case ADS_BLOB:
        return v->u.blob->meta && record_has_expr(v->u.blob->meta);
    default:
        return false;
    }
}

/* Records equal member by member: literals by ads_value_same, expressions
 * by their text. */
static bool records_same(const ads_record *a, const ads_record *b)
{
    if (ads_record_size(a) != ads_record_size(b))
        return false;
    ads_buf ta = ADS_BUF_INIT, tb = ADS_BUF_INIT;
    bool same = true;
    for (size_t i = 0; i < ads_record_size(a) && same; i++) {
        ads_str name = ads_record_name(a, i);
        const ads_expr *x = ads_record_expr(a, i), *y = ads_record_lookup(b, name.p, name.len);
        if (!y) {
            same = false;
            break;
        }
        const ads_value *lx = ads_expr_literal_value(x), *ly = ads_expr_literal_value(y);
        if (lx && ly && !value_has_expr(lx) && !value_has_expr(ly)) {
            same = ads_value_same(lx, ly);
            continue;
        }
        ads_buf_clear(&ta);
        ads_buf_clear(&tb);
        ads_expr_unparse(&ta, x);
        ads_expr_unparse(&tb, y);
        same = strcmp(ads_buf_cstr(&ta), ads_buf_cstr(&tb)) == 0;
    }
    ads_buf_free(&ta);
    ads_buf_free(&tb);
    return same;
}

/* ---- a seeded generator ---- */

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
    /* xorshift64* */
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return rng * 0x2545f4914f6cdd1dull;
}

static size_t below(size_t n)
{
    return (size_t)(rnd() % n);
}

/* text: only values whose text form reads back exactly (times in whole
 * minutes of zone and simple fractions; ids of the three kinds; no NUL in
 * strings, which the language cannot write). */
typedef struct gen_opts {
    bool text;
    int max_depth;
    bool literal; /* text form without calls: no NaN, no infinities, no blobs */
} gen_opts;

static ads_value gen_value(const gen_opts *o, int depth);

static const char *gen_bytes(const gen_opts *o, size_t n)
{
    char *s = ads_arena_alloc(arena, n + 1);
    static const char pool[] = "aZ_09 \"\\'\n\t{}[]#`";
    for (size_t i = 0; i < n; i++) {
        size_t k = below(8);
        if (k < 5)
            s[i] = pool[below(sizeof pool - 1)];
        else if (k < 7)
            s[i] = (char)(0x20 + below(0x5f));
        else
            s[i] = (char)below(256);
        if (o->text && s[i] == '\0')
            s[i] = 'z';
    }
    s[n] = '\0';
    return s;
}

static size_t gen_len(void)
{
    size_t k = below(1000);
    if (k < 3)
        return 65536 + below(2000); /* str32 */
    if (k < 30)
        return 256 + below(500); /* str16 */
    if (k < 150)
        return 32 + below(224); /* str8 */
    return below(32);
}

static ads_str gen_name(const gen_opts *o)
{
    static const char *const fixed[] = {"Memory", "memory2", "a", "B", "send time", "true",
                                        "error", "in", "1abc", "it's", "x.y", "caf\xc3\xa9",
                                        "_hidden", "__sys", "Z", "zz"};
    ads_str s;
    if (below(3) == 0) {
        s.p = fixed[below(sizeof fixed / sizeof fixed[0])];
        s.len = strlen(s.p);
    } else {
        size_t n = 1 + below(below(10) == 0 ? 40 : 8);
        s.p = gen_bytes(o, n);
        s.len = n;
    }
    return s;
}

static const ads_record *gen_record(const gen_opts *o, int depth, size_t max_attrs)
{
    ads_record_builder *b;
    ads_error err;
    assert_int_equal(ads_record_builder_new(&b, arena, &err), 0);
    size_t n = below(max_attrs + 1);
    for (size_t i = 0; i < n; i++) {
        ads_str name = gen_name(o);
        ads_value v = gen_value(o, depth + 1);
        assert_int_equal(ads_record_builder_add_value(b, name.p, name.len, &v, &err), 0);
    }
    const ads_record *r = ads_record_builder_finish(b);
    assert_non_null(r);
    return r;
}

static double gen_real(const gen_opts *o)
{
    static const double fixed[] = {0.0, -0.0, 1.5, -2.25, 1e300, -1e-300, 5e-324, DBL_MAX,
                                   0.1, 123456789.0, 1e16, 3.0};
    switch (below(6)) {
    case 0:
        return fixed[below(sizeof fixed / sizeof fixed[0])];
    case 1:
        if (o->literal)
            return 0.5;
        return below(2) ? NAN : below(2) ? INFINITY : -INFINITY;
    case 2: {
        /* any bits, NaN payloads included (they must come out canonical) */
        uint64_t bits = rnd();
        double d;
        memcpy(&d, &bits, sizeof d);
        if (o->text && isnan(d))
            d = NAN;
        if (o->literal && !isfinite(d))
            d = -0.25;
        return d;
    }
    default:
        return (double)(int64_t)(rnd() % 2000001) / 8.0 - 125000.0;
    }
}

static int64_t gen_int(void)
{
    static const int64_t fixed[] = {0,     1,     -1,         31,         32,        -32,
                                    -33,   127,   128,        -128,       -129,      255,
                                    256,   65535, 65536,      -32768,     -32769,    INT32_MAX,
                                    INT32_MIN, (int64_t)INT32_MIN - 1, (int64_t)UINT32_MAX,
                                    (int64_t)UINT32_MAX + 1, INT64_MAX, INT64_MIN};
    switch (below(3)) {
    case 0:
        return fixed[below(sizeof fixed / sizeof fixed[0])];
    case 1:
        return (int64_t)rnd();
    default:
        return (int64_t)below(2000) - 1000;
    }
}

static ads_value gen_value(const gen_opts *o, int depth)
{
    bool leaf = depth >= o->max_depth;
    for (;;) {
        switch (below(13)) {
        case 0:
            return ads_undefined();
        case 1:
            return ads_errorv();
        case 2:
            return ads_bool(below(2));
        case 3:
        case 4:
            return ads_int(gen_int());
        case 5:
            return ads_real(gen_real(o));
        case 6:
        case 7: {
            size_t n = gen_len();
            return ads_string(gen_bytes(o, n), n);
        }
        case 8: {
            if (leaf)
                continue;
            size_t n = below(6);
            ads_value *items = ads_arena_alloc(arena, (n ? n : 1) * sizeof *items);
            for (size_t i = 0; i < n; i++)
                items[i] = gen_value(o, depth + 1);
            return ads_list(items, n);
        }
        case 9:
            if (leaf)
                continue;
            return ads_recordv(gen_record(o, depth, 5));
        case 10:
            if (o->text)
                return ads_abstime((double)((int64_t)below(4000000000u) - 1000000000) +
                                       (below(4) == 0 ? 0.5 : 0.0),
                                   ((int32_t)below(48 * 60 + 1) - 24 * 60) * 60);
        {
            /* any instant but NaN, which ads_value_same never finds equal
             * in an AbsTime */
            double secs = gen_real(o);
            return ads_abstime(isnan(secs) ? 0.0 : secs, (int32_t)rnd());
        }
        case 11:
            if (o->text)
                return ads_reltime((double)((int64_t)below(400000000) - 200000000) / 4.0);
            return ads_reltime(gen_real(o));
        default: {
            if (below(2) == 0) {
                ads_id id;
                switch (o->text ? below(3) : 3) {
                case 0: /* LUID */
                    id.hi = 0;
                    id.lo = rnd();
                    break;
                case 1: /* UUID */
                    id.hi = rnd() | 1;
                    id.lo = rnd() | (1ull << 63);
                    break;
                case 2: /* OUID: version 1, node top bit 0 */
                    id.hi = (rnd() & ~(uint64_t)7) | 1;
                    id.lo = rnd() & ~(1ull << 63);
                    break;
                default:
                    id.hi = rnd();
                    id.lo = rnd();
                }
                return ads_ident(id);
            }
            if (leaf || o->literal)
                continue;
            ads_blob *b = ads_arena_alloc(arena, sizeof *b);
            b->bytes.len = below(50);
            b->bytes.p = gen_bytes(o, b->bytes.len);
            b->meta = below(2) ? gen_record(o, depth, 3) : NULL;
            ads_value v;
            v.type = ADS_BLOB;
            v.u.blob = b;
            return v;
        }
        }
    }
}

/* ======================================================================== */
/* The format, pinned                                                       */
/* ======================================================================== */

static void encode__scalars_are_plain_msgpack_in_smallest_form(void **state)
{
    (void)state;
    value_encodes("undefined", "c0");
    value_encodes("true", "c3");
    value_encodes("false", "c2");
    value_encodes("0", "00");
    value_encodes("127", "7f");
    value_encodes("128", "cc 80");
    value_encodes("255", "cc ff");
    value_encodes("256", "cd 01 00");
    value_encodes("65535", "cd ff ff");
    value_encodes("65536", "ce 00 01 00 00");
    value_encodes("4294967295", "ce ff ff ff ff");
    value_encodes("4294967296", "cf 00 00 00 01 00 00 00 00");
    value_encodes("9223372036854775807", "cf 7f ff ff ff ff ff ff ff");
    value_encodes("-1", "ff");
    value_encodes("-32", "e0");
    value_encodes("-33", "d0 df");
    value_encodes("-128", "d0 80");
    value_encodes("-129", "d1 ff 7f");
    value_encodes("-32768", "d1 80 00");
    value_encodes("-32769", "d2 ff ff 7f ff");
    value_encodes("-2147483648", "d2 80 00 00 00");
    value_encodes("-2147483649", "d3 ff ff ff ff 7f ff ff ff");
    value_encodes("-9223372036854775808", "d3 80 00 00 00 00 00 00 00");
    value_encodes("1.5", "cb 3f f8 00 00 00 00 00 00");
    value_encodes("2.0", "cb 40 00 00 00 00 00 00 00");
    value_encodes("-0.0", "cb 80 00 00 00 00 00 00 00");
    value_encodes("real(\"NaN\")", "cb 7f f8 00 00 00 00 00 00");
    value_encodes("-real(\"NaN\")", "cb 7f f8 00 00 00 00 00 00");
    value_encodes("real(\"INF\")", "cb 7f f0 00 00 00 00 00 00");
    value_encodes("\"\"", "a0");
    value_encodes("\"abc\"", "a3 61 62 63");
}

static void encode__strings_take_the_smallest_header(void **state)
{
    (void)state;
    static const size_t lens[] = {31, 32, 255, 256, 65535, 65536, 70000};
    static const char *const heads[] = {"bf", "d9 20", "d9 ff", "da 01 00", "da ff ff",
                                        "db 00 01 00 00", "db 00 01 11 70"};
    for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
        char *s = malloc(lens[i]);
        memset(s, 'q', lens[i]);
        ads_value v = ads_string(s, lens[i]);
        ads_buf b = ADS_BUF_INIT;
        encode_value_ok(&b, &v);
        unsigned char want[8];
        size_t n = bytes_of(want, sizeof want, heads[i]);
        assert_int_equal(b.len, n + lens[i]);
        if (memcmp(b.p, want, n))
            fail_msg("string of %zu: header %s", lens[i], hex_of(b.p, n));
        ads_value back;
        assert_int_equal(ads_msgpack_decode_value(&back, arena, b.p, b.len, 0, NULL), 0);
        assert_true(ads_value_same(&v, &back));
        ads_buf_free(&b);
        free(s);
    }
}

static void encode__classad_values_use_extension_types(void **state)
{
    (void)state;
    value_encodes("error", "c7 00 01");
    /* 12:00-05:00 is 17:00Z = 1323795600 s; offset -18000 s */
    value_encodes("`2011-12-13T12:00:00-05:00`",
                  "c7 0c 02 41 d3 b9 e1 24 00 00 00 ff ff b9 b0");
    value_encodes("`2011-12-13T17:00:00Z`", "c7 0c 02 41 d3 b9 e1 24 00 00 00 00 00 00 00");
    value_encodes("`1m30s`", "d7 03 40 56 80 00 00 00 00 00");
    value_encodes("#123", "d8 04 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 7b");
    value_encodes("#571eed18-0031-000000000002-1",
                  "d8 04 05 71 ee d1 80 00 00 31 00 00 00 00 00 02 00 01");
    value_encodes("blob(\"aGk=\")", "c7 03 05 00 68 69");
    value_encodes("blob(\"\")", "d4 05 00");
    value_encodes("blob(\"aGk=\", [ t = 1 ])", "c7 07 05 01 81 a1 74 01 68 69");
}

static void encode__lists_are_arrays_and_records_sorted_maps(void **state)
{
    (void)state;
    value_encodes("{ }", "90");
    value_encodes("{ 1, \"a\", { } }", "93 01 a1 61 90");
    value_encodes("[ ]", "80");
    /* inside a value a record has no index: keys sorted ignoring case */
    value_encodes("[ y = 2; X = { 1 } ]", "82 a1 58 91 01 a1 79 02");
    value_encodes("{ 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15 }",
                  "dc 00 10 00 01 02 03 04 05 06 07 08 09 0a 0b 0c 0d 0e 0f");
}

static void encode__rows_have_a_versioned_index_header(void **state)
{
    (void)state;
    record_encodes("[ ]", "92 d5 10 01 01 80");
    record_encodes("[ b = 1; A = \"x\" ]", "92 d6 10 01 01 01 05 82 a1 41 a1 78 a1 62 01");
    record_encodes("[ Memory = 2048; Arch = \"X86_64\"; Disk = 100000; Owner = \"alice\" ]",
                   "92 c7 06 10 01 01 01 0d 17 21 84"
                   " a4 41 72 63 68 a6 58 38 36 5f 36 34"
                   " a4 44 69 73 6b ce 00 01 86 a0"
                   " a6 4d 65 6d 6f 72 79 cd 08 00"
                   " a5 4f 77 6e 65 72 a5 61 6c 69 63 65");
    /* an unevaluated expression is kept as its text */
    record_encodes("[ a = b+1 ]", "92 c7 03 10 01 01 01 81 a1 61 c7 05 06 62 20 2b 20 31");
    /* list and record expressions are stored member by member */
    record_encodes("[ l = { x, 2 }; r = [ q = 1 ] ]",
                   "92 d6 10 01 01 01 08 82 a1 6c 92 d4 06 78 02 a1 72 81 a1 71 01");
}

static void encode__index_widens_when_offsets_pass_255(void **state)
{
    (void)state;
    char text[400];
    snprintf(text, sizeof text, "[ a = \"%0300d\"; b = 1 ]", 0);
    ads_buf b = ADS_BUF_INIT;
    encode_record_ok(&b, parse_record(text));
    /* b's key at 1 + 2 + 3 + 300 = 306 = 0x132: two-byte offsets */
    unsigned char want[16];
    size_t n = bytes_of(want, sizeof want, "92 c7 06 10 01 02 00 01 01 32 82 a1 61 da 01 2c");
    assert_memory_equal(b.p, want, n);
    assert_int_equal(ads_msgpack_check(b.p, b.len, NULL), 0);
    ads_buf_free(&b);

    /* and past 65535: four-byte offsets */
    char *big = malloc(70100);
    snprintf(big, 70100, "[ a = \"%070000d\"; b = 1 ]", 0);
    encode_record_ok(&b, parse_record(big));
    n = bytes_of(want, sizeof want, "92 c7 0a 10 01 04 00 00 00 01 00 01 11 78 82");
    assert_memory_equal(b.p, want, n);
    assert_int_equal(ads_msgpack_check(b.p, b.len, NULL), 0);
    ads_msgpack_view mv;
    ads_value v;
    const ads_expr *x;
    assert_int_equal(ads_msgpack_view_init(&mv, b.p, b.len, arena, NULL), 0);
    assert_int_equal(ads_msgpack_view_lookup(&v, &x, &mv, "B", 1, NULL), 1);
    assert_int_equal(v.type, ADS_INTEGER);
    assert_int_equal(v.u.i, 1);
    assert_int_equal(ads_msgpack_view_lookup(&v, &x, &mv, "a", 1, NULL), 1);
    assert_int_equal(v.u.s.len, 70000);
    free(big);
    ads_buf_free(&b);
}

/* ======================================================================== */
/* Determinism                                                              */
/* ======================================================================== */

static void encode__attribute_order_and_spelling_of_input_do_not_matter(void **state)
{
    (void)state;
    ads_buf a = ADS_BUF_INIT, b = ADS_BUF_INIT;
    encode_record_ok(&a, parse_record("[ Zeta = 1; alpha = [ b = 2; A = 3 ]; Beta = { 1 } ]"));
    encode_record_ok(&b, parse_record("[ Beta = { 1 }; alpha = [ A = 3; b = 2 ]; Zeta = 1 ]"));
    assert_int_equal(a.len, b.len);
    assert_memory_equal(a.p, b.p, a.len);
    /* names keep their case; the order is by folded bytes: '_' (0x5f)
     * before 'a' (0x61) before 'B' (folded 'b', 0x62) */
    encode_record_ok(&a, parse_record("[ a = 1; _b = 2; B = 3 ]"));
    assert_bytes(&a, "92 c7 05 10 01 01 01 05 08 83 a2 5f 62 02 a1 61 01 a1 42 03");
    /* a minus before a number is that negative number */
    encode_record_ok(&a, parse_record("[ n = - 3; r = - 1.5; m = - -3 ]"));
    encode_record_ok(&b, parse_record("[ n = -3; r = -1.5; m = - -3 ]"));
    assert_int_equal(a.len, b.len);
    assert_memory_equal(a.p, b.p, a.len);
    ads_buf_free(&a);
    ads_buf_free(&b);
}

static void encode__same_value_built_differently_gives_same_bytes(void **state)
{
    (void)state;
    ads_buf a = ADS_BUF_INIT, b = ADS_BUF_INIT;
    /* the integer 200 from a literal, from arithmetic, from a real */
    ads_value x = eval_text("200"), y = eval_text("100 + 100"), z = eval_text("int(200.7)");
    encode_value_ok(&a, &x);
    encode_value_ok(&b, &y);
    assert_int_equal(a.len, b.len);
    assert_memory_equal(a.p, b.p, a.len);
    encode_value_ok(&b, &z);
    assert_memory_equal(a.p, b.p, a.len);
    /* a record evaluated, against the same record written out */
    x = eval_text("[ b = 1 + 1; a = strcat(\"x\", \"y\") ]");
    y = eval_text("[ A = \"xy\"; B = 2 ]");
    encode_value_ok(&a, &x);
    encode_value_ok(&b, &y);
    assert_int_equal(a.len, b.len);
    /* names keep their spelling, so only the case bits differ */
    assert_int_equal(a.len, 9);
    /* NaNs of any payload are one NaN */
    uint64_t bits = 0xfff0000000000123ull;
    double d;
    memcpy(&d, &bits, sizeof d);
    x = ads_real(d);
    encode_value_ok(&a, &x);
    assert_bytes(&a, "cb 7f f8 00 00 00 00 00 00");
    ads_buf_free(&a);
    ads_buf_free(&b);
}

/* ======================================================================== */
/* Round trips                                                              */
/* ======================================================================== */

static void roundtrip__random_values_through_bytes(void **state)
{
    (void)state;
    gen_opts o = {false, 4, false};
    ads_buf b = ADS_BUF_INIT, again = ADS_BUF_INIT;
    ads_error err;
    int types[12] = {0};
    rng = 12345;
    for (int i = 0; i < 3000; i++) {
        ads_value v = gen_value(&o, 0), back;
        types[v.type]++;
        encode_value_ok(&b, &v);
        if (ads_msgpack_decode_value(&back, arena, b.p, b.len, 0, &err))
            fail_msg("value %d (%s): %s", i, unparse_value(&v), err.message);
        if (!ads_value_same(&v, &back))
            fail_msg("value %d: %s came back as %s", i, unparse_value(&v),
                     unparse_value(&back));
        encode_value_ok(&again, &back);
        assert_int_equal(again.len, b.len);
        assert_memory_equal(again.p, b.p, b.len);
        if (i % 64 == 0)
            ads_arena_reset(arena);
    }
    for (int t = 0; t < 12; t++)
        if (types[t] == 0)
            fail_msg("the generator made no %s", ads_vtype_name((ads_vtype)t));
    ads_buf_free(&b);
    ads_buf_free(&again);
}

static void roundtrip__random_values_through_text(void **state)
{
    (void)state;
    gen_opts o = {true, 4, false};
    ads_buf b = ADS_BUF_INIT, again = ADS_BUF_INIT, text = ADS_BUF_INIT;
    ads_error err;
    rng = 777;
    for (int i = 0; i < 2000; i++) {
        ads_value v = gen_value(&o, 0), back;
        ads_buf_clear(&text);
        ads_value_unparse(&text, &v);
        const ads_expr *e;
        if (ads_expr_parse(&e, arena, text.p, text.len, &err))
            fail_msg("value %d: '%s' does not parse: %s", i, ads_buf_cstr(&text), err.message);
        assert_int_equal(ads_expr_eval(&back, e, NULL, arena), 0);
        if (!ads_value_same(&v, &back))
            fail_msg("value %d: '%s' reads back as %s", i, ads_buf_cstr(&text),
                     unparse_value(&back));
        /* same value, same bytes */
        encode_value_ok(&b, &v);
        encode_value_ok(&again, &back);
        if (again.len != b.len || memcmp(again.p, b.p, b.len))
            fail_msg("value %d: '%s' encodes differently after text", i, ads_buf_cstr(&text));
        if (i % 64 == 0)
            ads_arena_reset(arena);
    }
    ads_buf_free(&b);
    ads_buf_free(&again);
    ads_buf_free(&text);
}

/* Expressions a random record may hold, over its own names. */
static const char *const expr_forms[] = {
    "%s + 1",
    "%s * 2 > %s || %s == \"s\"",
    "ifThenElse(%s, 1, 2)",
    "{ %s, 1, { %s } }",
    "[ x = %s; y = 2; z = [ w = %s ] ]",
    "%s.sub",
    "%s[0]",
    "strcat(%s, \"x\")",
    "-%s",
    "!%s",
    "(%s)",
    "%s ?: %s",
    "%s is undefined",
    "%s =?= %s && %s",
    "{ 1, 2, %s + 1 }",
};

static const char *gen_expr_text(const ads_record *names_from)
{
    char names[3][80];
    for (int k = 0; k < 3; k++) {
        ads_buf nb = ADS_BUF_INIT;
        size_t n = ads_record_size(names_from);
        if (n == 0 || below(4) == 0) {
            ads_buf_adds(&nb, "missing");
        } else {
            ads_str name = ads_record_name(names_from, below(n));
            ads_unparse__name(&nb, name.p, name.len > 30 ? 30 : name.len);
        }
        snprintf(names[k], sizeof names[k], "%s", ads_buf_cstr(&nb));
        ads_buf_free(&nb);
    }
    const char *form = expr_forms[below(sizeof expr_forms / sizeof expr_forms[0])];
    char *out = ads_arena_alloc(arena, 512);
    snprintf(out, 512, form, names[0], names[1], names[2]);
    return out;
}

/* A random record: random values, and some attributes holding expressions. */
static const ads_record *gen_record_with_exprs(const gen_opts *o, size_t max_attrs)
{
    const ads_record *base = gen_record(o, 0, max_attrs);
    ads_record_builder *b;
    assert_int_equal(ads_record_builder_new(&b, arena, NULL), 0);
    for (size_t i = 0; i < ads_record_size(base); i++) {
        ads_str name = ads_record_name(base, i);
        const ads_expr *e = ads_record_expr(base, i);
        if (below(3) == 0)
            e = parse(gen_expr_text(base));
        assert_int_equal(ads_record_builder_add(b, name.p, name.len, e, NULL), 0);
    }
    return ads_record_builder_finish(b);
}

static void roundtrip__random_rows_through_bytes_and_text(void **state)
{
    (void)state;
    ads_buf b = ADS_BUF_INIT, again = ADS_BUF_INIT, text = ADS_BUF_INIT;
    ads_error err;
    rng = 4242;
    for (int i = 0; i < 600; i++) {
        gen_opts o = {i % 2 == 0, 3, i % 2 == 0};
        const ads_record *r = gen_record_with_exprs(&o, 12), *back;
        encode_record_ok(&b, r);
        if (ads_msgpack_check(b.p, b.len, &err))
            fail_msg("row %d: check: %s", i, err.message);
        if (ads_msgpack_decode_record(&back, arena, b.p, b.len, 0, &err))
            fail_msg("row %d: %s", i, err.message);
        if (!records_same(r, back)) {
            ads_buf_clear(&text);
            ads_record_unparse(&text, r);
            fail_msg("row %d: %s does not come back", i, ads_buf_cstr(&text));
        }
        encode_record_ok(&again, back);
        assert_int_equal(again.len, b.len);
        assert_memory_equal(again.p, b.p, b.len);
        if (o.text) {
            /* through the text form (values written as literals): the same bytes */
            const ads_record *r2;
            ads_buf_clear(&text);
            ads_record_unparse(&text, r);
            if (ads_record_parse(&r2, arena, text.p, text.len, &err))
                fail_msg("row %d: '%s': %s", i, ads_buf_cstr(&text), err.message);
            encode_record_ok(&again, r2);
            if (again.len != b.len || memcmp(again.p, b.p, b.len))
                fail_msg("row %d: '%s' encodes differently after text", i,
                         ads_buf_cstr(&text));
        }
        if (i % 16 == 0)
            ads_arena_reset(arena);
    }
    ads_buf_free(&b);
    ads_buf_free(&again);
    ads_buf_free(&text);
}

/* A record's attributes given as arrays of names and values, in any order,
 * encode to the record's row byte for byte, with and without the order
 * memo; two names equal ignoring case are refused. */
static void encode__values_in_arrays_give_the_record_s_row(void **state)
{
    (void)state;
    ads_buf b = ADS_BUF_INIT, again = ADS_BUF_INIT;
    ads_error err;
    ads_msgpack_order *memo;
    assert_int_equal(ads_msgpack_order_new(&memo, NULL), 0);
    rng = 777;
    for (int i = 0; i < 400; i++) {
        gen_opts o = {false, 2, false};
        const ads_record *r = gen_record(&o, 0, i % 5 == 0 ? 40 : 12);
        size_t n = ads_record_size(r);
        ads_str names[48];
        ads_value values[48];
        for (size_t k = 0; k < n; k++) {
            size_t from = (k * 7 + (size_t)i) % n; /* another order, a permutation when n % 7 */
            from = n % 7 ? from : k;
            names[k] = ads_record_name(r, from);
            values[k] = *ads_expr_literal_value(ads_record_expr(r, from));
        }
        encode_record_ok(&b, r);
        ads_buf_clear(&again);
        if (ads_msgpack_encode_values(&again, names, values, n, i % 2 ? memo : NULL, &err))
            fail_msg("record %d: %s", i, err.message);
        assert_int_equal(again.len, b.len);
        assert_memory_equal(again.p, b.p, b.len);
        if (i % 16 == 0)
            ads_arena_reset(arena);
    }
    ads_str dn[2] = {{"Memory", 6}, {"memory", 6}};
    ads_value dv[2] = {ads_int(1), ads_int(2)};
    assert_int_equal(ads_msgpack_encode_values(&again, dn, dv, 2, memo, &err), ADS_EINVAL);
    assert_non_null(strstr(err.message, "two attributes named"));
    ads_str nn[2] = {{"Memory", 6}, {NULL, 3}};
    size_t len0 = again.len;
    assert_int_equal(ads_msgpack_encode_values(&again, nn, dv, 2, memo, &err), ADS_EINVAL);
    assert_string_equal(err.message, "msgpack: attribute 1 has no name");
    assert_int_equal(again.len, len0);
    ads_msgpack_order_free(memo);
    ads_buf_free(&b);
    ads_buf_free(&again);
}

static void decode__copy_flag_detaches_the_result_from_the_bytes(void **state)
{
    (void)state;
    ads_buf b = ADS_BUF_INIT;
    const ads_record *r = parse_record("[ Name = \"abc\"; e = Name + 1; l = { \"q\" } ]"), *d1, *d2;
    encode_record_ok(&b, r);
    assert_int_equal(ads_msgpack_decode_record(&d1, arena, b.p, b.len, 0, NULL), 0);
    assert_int_equal(ads_msgpack_decode_record(&d2, arena, b.p, b.len, ADS_MSGPACK_COPY, NULL),
                     0);
    ads_str n1 = ads_record_name(d1, 0), n2 = ads_record_name(d2, 0);
    assert_true(n1.p >= b.p && n1.p < b.p + b.len);
    assert_false(n2.p >= b.p && n2.p < b.p + b.len);
    assert_true(records_same(d2, r));
    memset(b.p, 'X', b.len);
    assert_true(records_same(d2, r));
    ads_buf_free(&b);
}

static void decode__value_api_refuses_a_bare_expression(void **state)
{
    (void)state;
    ads_buf b = ADS_BUF_INIT;
    ads_error err;
    ads_value v;
    const ads_expr *e;
    assert_int_equal(ads_msgpack_encode_expr(&b, parse("a + 1"), &err), 0);
    assert_bytes(&b, "c7 05 06 61 20 2b 20 31");
    assert_int_equal(ads_msgpack_decode_value(&v, arena, b.p, b.len, 0, &err), ADS_EINVAL);
    assert_string_equal(err.message, "msgpack: the bytes hold an unevaluated expression where "
                                     "a value is expected");
    assert_int_equal(ads_msgpack_decode_expr(&e, arena, b.p, b.len, 0, &err), 0);
    ads_buf t = ADS_BUF_INIT;
    ads_expr_unparse(&t, e);
    assert_string_equal(ads_buf_cstr(&t), "a + 1");
    /* a record holding expressions is still a value */
    ads_buf_clear(&b);
    assert_int_equal(ads_msgpack_encode_expr(&b, parse("[ a = b; c = 1 ]"), &err), 0);
    assert_int_equal(ads_msgpack_decode_value(&v, arena, b.p, b.len, 0, &err), 0);
    assert_int_equal(v.type, ADS_RECORD);
    ads_buf_free(&b);
    ads_buf_free(&t);
}

/* ======================================================================== */
/* Errors                                                                   */
/* ======================================================================== */

static void decode__refuses_non_canonical_forms_saying_where(void **state)
{
    (void)state;
    value_refused("cc 05", "uint8 holding 5 (a shorter form is canonical) at byte 0");
    value_refused("cd 00 ff", "uint16 holding 255");
    value_refused("d0 05", "int8 holding 5");
    value_refused("d0 e0", "int8 holding -32");
    value_refused("d3 ff ff ff ff ff ff ff ff", "int64 holding -1");
    value_refused("cf 80 00 00 00 00 00 00 00", "does not fit 64 signed bits");
    value_refused("ca 3f c0 00 00", "float32 (rows hold float64 only) at byte 0");
    value_refused("cb 7f f8 00 00 00 00 00 01", "NaN with bits 0x7ff8000000000001");
    value_refused("d9 03 61 62 63", "str8 of 3 bytes (a fixstr is canonical)");
    value_refused("dc 00 01 01", "array16 of 1 entries (the fix form is canonical)");
    value_refused("c4 01 00", "bin item");
    value_refused("c1", "byte 0xc1 is never used");
    value_refused("c7 01 03 00", "ext8 with a 1-byte payload (a shorter form is canonical)");
    value_refused("d4 01 00", "error value with a 1-byte payload");
    value_refused("d4 63 00", "unknown extension type 99 at byte 0");
    value_refused("d4 ff 00", "unknown extension type -1");
    value_refused("c7 06 06 61 20 2b 20 20 2b", "expression text does not parse");
    value_refused("c7 00 06", "empty expression text");
    value_refused("d6 06 2d 31 2e 35", "expression text '-1.5' is a plain value, which is stored");
    value_refused("c7 05 06 7b 20 61 20 7d", "expression text '{ a }' is a list");
    value_refused("c7 05 06 5b 20 20 20 5d", "expression text '[   ]' is a record");
    value_refused("d5 05 02 00", "blob flag byte 2");
    value_refused("d5 05 01 01", "expected a map, found byte 0x01");
    value_refused("92 91 01", "item is missing (the input ends) at byte 3");
    value_refused("91 91", "array of 1 items cannot fit in the 0 bytes left at byte 1");
    value_refused("82 a1 62 01 a1 61 02", "attribute 'a' is out of order or repeats a name");
    value_refused("82 a1 61 01 a1 41 02", "attribute 'A' is out of order");
    value_refused("81 a0 01 02", "empty attribute name at byte 1");
    value_refused("81 01 01 01", "expected a string, found byte 0x01 at byte 1");
    value_refused("a5 61 62", "string of 5 bytes runs past the end (2 bytes left) at byte 0");
    value_refused("01 02", "1 bytes after the end of the value at byte 1");
    value_refused("dd ff ff ff ff", "array of 4294967295 items cannot fit in the 0 bytes left");
    value_refused("df ff ff ff ff 01 02 03", "map of 4294967295 entries cannot fit");
    value_refused("c9 ff ff ff ff 05", "extension payload of 4294967295 bytes runs past the end");
    value_refused("d7 10 01 01 00 00 00 00 00 00", "a row header where a value belongs");
}

static void decode__refuses_nesting_past_the_limit(void **state)
{
    (void)state;
    size_t n = ADS_MAX_DEPTH + 1;
    unsigned char *deep = malloc(n + 1);
    memset(deep, 0x91, n);
    deep[n] = 0x01;
    ads_value v;
    ads_error err;
    assert_int_equal(ads_msgpack_decode_value(&v, arena, deep, n + 1, 0, &err), ADS_ECORRUPT);
    assert_string_equal(err.message,
                        "msgpack: containers nested deeper than 400 levels at byte 400");
    /* 400 levels are fine */
    assert_int_equal(ads_msgpack_decode_value(&v, arena, deep + 1, n, 0, &err), 0);
    free(deep);

    /* and the encoder will not write what cannot be read */
    ads_value inner = ads_int(1);
    for (size_t i = 0; i < n; i++) {
        ads_value *item = ads_arena_alloc(arena, sizeof *item);
        *item = inner;
        inner = ads_list(item, 1);
    }
    ads_buf b = ADS_BUF_INIT;
    ads_buf_adds(&b, "keep");
    assert_int_equal(ads_msgpack_encode_value(&b, &inner, &err), ADS_ELIMIT);
    assert_string_equal(err.message, "msgpack: value nested deeper than 400 levels");
    assert_int_equal(b.len, 4); /* the buffer is as it was */
    assert_string_equal(ads_buf_cstr(&b), "keep");
    ads_buf_free(&b);
}

static void check__refuses_bad_rows_saying_what_and_where(void **state)
{
    (void)state;
    row_refused("", ADS_ECORRUPT, "item needs 1 more bytes, only 0 left at byte 0");
    row_refused("80", ADS_ECORRUPT, "a row starts with 0x92 (an array of two), not 0x80");
    row_refused("92 d5 11 01 01 80", ADS_ECORRUPT,
                "extension type 17 where the row header (type 16) belongs at byte 1");
    row_refused("92 d5 10 03 01 80", ADS_EVERSION,
                "msgpack: row format version 3 is not supported (this build reads versions 1 "
                "and 2) at byte 3");
    row_refused("92 d5 10 02 01 80", ADS_EVERSION,
                "msgpack: a row of format version 2 (attribute ids) is read through its store's "
                "name table, at byte 3");
    row_refused("92 d5 10 01 03 80", ADS_ECORRUPT, "index width 3 (1, 2 or 4) at byte 4");
    row_refused("92 d6 10 01 01 01 05 81 a1 41 01", ADS_ECORRUPT,
                "map of 1 attributes under an index of 2 at byte 7");
    row_refused("92 d6 10 01 01 01 05 82 a1 41 a1 78 a1 62 01 00", ADS_ECORRUPT,
                "1 bytes after the end of the row at byte 15");
    row_refused("92 d6 10 01 01 01 06 82 a1 41 a1 78 a1 62 01", ADS_ECORRUPT,
                "the index gives offset 6 for attribute 1, which is at 5 at byte 12");
    row_refused("92 c7 06 10 01 02 00 01 00 05 82 a1 41 a1 78 a1 62 01", ADS_ECORRUPT,
                "index width 2 where 1 is the smallest that fits at byte 10");
    row_refused("92 d6 10 01 01 01 05 82 a1 62 a1 78 a1 41 01", ADS_ECORRUPT,
                "attribute 'A' is out of order or repeats a name (ignoring case) at byte 12");
    row_refused("92 c7 03 10 01 01 01 81 a1 61 c7 03 06 28 28 28", ADS_ECORRUPT,
                "expression text does not parse");
    row_refused("92 d5 10 01 01 80 80", ADS_ECORRUPT, "1 bytes after the end of the row");
}

/* A row header in its usual form (the index in an ext8, a fixmap or map16)
 * is read in one go; each way such a header can be wrong is refused as the
 * other forms are, by the check, the decoder and the view. */
static void head_refused(const char *hex, int code, const char *msg)
{
    row_refused(hex, code, msg);
    unsigned char buf[1024];
    size_t n = bytes_of(buf, sizeof buf, hex);
    ads_error err;
    ads_msgpack_view mv;
    int rc = ads_msgpack_view_init(&mv, buf, n, arena, &err);
    if (rc != code || !strstr(err.message, msg))
        fail_msg("view of %s: want %d '%s', got %d '%s'", hex, code, msg, rc,
                 rc ? err.message : "");
}

static void check__usual_row_headers_are_refused_as_the_others(void **state)
{
    (void)state;
    head_refused("92 c7 03 11 01 01 01 81 a1 61 01", ADS_ECORRUPT,
                 "extension type 17 where the row header (type 16) belongs at byte 1");
    head_refused("92 c7 03 10 03 01 01 81 a1 61 01", ADS_EVERSION,
                 "row format version 3 is not supported");
    head_refused("92 c7 03 10 02 01 01 81 a1 61 01", ADS_EVERSION,
                 "a row of format version 2 (attribute ids) is read through its store's name "
                 "table");
    head_refused("92 c7 05 10 01 03 00 00 01 81 a1 61 01", ADS_ECORRUPT,
                 "index width 3 (1, 2 or 4) at byte 5");
    head_refused("92 c7 05 10 01 02 00 01 00 81 a1 61 01", ADS_ECORRUPT,
                 "row index of 3 bytes is not a whole number of 2-byte offsets");
    head_refused("92 c7 03 10 01 01 01 82 a1 61 01 a1 62 02", ADS_ECORRUPT,
                 "map of 2 attributes under an index of 1 at byte 7");
    head_refused("92 c7 03 10 01 01 01 de 00 01 a1 61 01", ADS_ECORRUPT,
                 "map16 of 1 entries (the fix form is canonical)");
    head_refused("92 c7 03 10 01 01 01 de 00 10 a1 61 01", ADS_ECORRUPT,
                 "map of 16 attributes under an index of 1 at byte 7");
    head_refused("92 c7 03 10 01 01 01 de 00", ADS_ECORRUPT,
                 "item needs 2 more bytes, only 1 left at byte 7");
    head_refused("92 c7 03 10 01 01 01", ADS_ECORRUPT,
                 "item needs 1 more bytes, only 0 left at byte 7");
    head_refused("92 c7 09 10 01 01 01 81", ADS_ECORRUPT,
                 "extension payload of 9 bytes runs past the end");
    head_refused("92 c7 04 10 01 01 01 01 82 a1 61 01 a1 62 02", ADS_ECORRUPT,
                 "ext8 with a 4-byte payload (a shorter form is canonical)");
    head_refused("92 c7 02 10 01 01 80", ADS_ECORRUPT,
                 "ext8 with a 2-byte payload (a shorter form is canonical)");
    head_refused("92 c7 03 10 01 01 01 df 00 00 00 01 a1 61 01", ADS_ECORRUPT,
                 "map32 of 1 entries");
    /* and read: a fixmap and a map16 under an ext8 index */
    for (int n = 3; n <= 40; n += 37) {
        ads_buf text = ADS_BUF_INIT, b = ADS_BUF_INIT;
        ads_buf_adds(&text, "[ ");
        for (int i = 0; i < n; i++) {
            char a[40];
            snprintf(a, sizeof a, "A%02d = %d; ", i, i * 3);
            ads_buf_adds(&text, a);
        }
        ads_buf_adds(&text, "]");
        encode_record_ok(&b, parse_record(ads_buf_cstr(&text)));
        const unsigned char *u = (const unsigned char *)b.p;
        assert_int_equal(u[1], 0xc7);
        assert_int_equal(u[4 + u[2]], n < 16 ? 0x80 | n : 0xde);
        ads_msgpack_view mv;
        ads_error err;
        assert_int_equal(ads_msgpack_view_init(&mv, b.p, b.len, arena, &err), 0);
        assert_int_equal(ads_msgpack_view_size(&mv), (size_t)n);
        ads_value v;
        const ads_expr *e;
        assert_int_equal(ads_msgpack_view_lookup(&v, &e, &mv, "a02", 3, &err), 1);
        assert_int_equal(v.type, ADS_INTEGER);
        assert_int_equal(v.u.i, 6);
        assert_int_equal(ads_msgpack_check(b.p, b.len, &err), 0);
        ads_buf_free(&text);
        ads_buf_free(&b);
    }
}

static void encode__refuses_records_with_names_equal_ignoring_case(void **state)
{
    (void)state;
    /* a record the builder would never make: two names equal ignoring case */
    ads_str names[2] = {{"ab", 2}, {"AB", 2}};
    const ads_expr *exprs[2];
    ads_value one = ads_int(1);
    assert_int_equal(ads_expr_literal(&exprs[0], arena, &one, NULL), 0);
    exprs[1] = exprs[0];
    uint32_t hashes[2] = {ads_name_hash("ab", 2), ads_name_hash("AB", 2)};
    ads_record r = {2, names, exprs, hashes, NULL, 0};
    ads_buf b = ADS_BUF_INIT;
    ads_error err;
    assert_int_equal(ads_msgpack_encode_record(&b, &r, &err), ADS_EINVAL);
    assert_string_equal(err.message,
                        "msgpack: a record has two attributes named 'ab' (ignoring case)");
    assert_int_equal(b.len, 0);
    ads_buf_free(&b);
}

/* ======================================================================== */
/* The view                                                                 */
/* ======================================================================== */

static ads_value eval_over(const ads_expr *e, const ads_view *v)
{
    ads_value out;
    assert_int_equal(ads_expr_eval(&out, e, v, arena), 0);
    return out;
}

static void view__p3_constraint_over_a_machine_row(void **state)
{
    (void)state;
    static const char *const rows[] = {
        "[ Name = \"m1\"; Memory = 2048; Arch = \"X86_64\"; Disk = 250000; Owner = \"bob\" ]",
        "[ Name = \"m2\"; Memory = 2048; Arch = \"x86_64\"; Disk = 10; Owner = \"ALICE\" ]",
        "[ Name = \"m3\"; Memory = 512; Arch = \"X86_64\"; Disk = 250000 ]",
        "[ Name = \"m4\"; Memory = 4096; Arch = \"ARM64\"; Disk = 250000 ]",
        "[ Name = \"m5\"; Memory = 4096; Arch = \"X86_64\"; Disk = 10 ]",
        "[ Name = \"m6\"; Arch = \"X86_64\"; Disk = 250000 ]",
        "[ Name = \"m7\"; Memory = \"lots\"; Arch = \"X86_64\" ]",
        "[ Name = \"m8\"; Memory = Cpus * 1024; Cpus = 4; Arch = \"X86_64\"; Disk = 1e6 ]",
    };
    static const char *const want[] = {"true", "true", "false", "false",
                                       "undefined", "undefined", "error", "true"};
    const ads_expr *p3 = parse("Memory > 1024 && Arch == \"X86_64\" && "
                               "(Disk >= 100000 || Owner == \"alice\")");
    ads_buf b = ADS_BUF_INIT;
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        const ads_record *r = parse_record(rows[i]);
        encode_record_ok(&b, r);
        ads_msgpack_view mv;
        ads_error err;
        if (ads_msgpack_view_init(&mv, b.p, b.len, arena, &err))
            fail_msg("%s", err.message);
        ads_view v = ads_msgpack_view_get(&mv, NULL), m = ads_record_view(r, NULL);
        ads_value got = eval_over(p3, &v), mem = eval_over(p3, &m);
        assert_string_equal(unparse_value(&got), want[i]);
        assert_string_equal(unparse_value(&mem), want[i]);
    }
    ads_buf_free(&b);
}

static void view__strings_point_into_the_row(void **state)
{
    (void)state;
    ads_buf b = ADS_BUF_INIT;
    encode_record_ok(&b, parse_record("[ Owner = \"alice\"; n = 5 ]"));
    ads_msgpack_view mv;
    ads_value v;
    const ads_expr *x;
    assert_int_equal(ads_msgpack_view_init(&mv, b.p, b.len, arena, NULL), 0);
    assert_int_equal(ads_msgpack_view_size(&mv), 2);
    assert_int_equal(ads_msgpack_view_lookup(&v, &x, &mv, "OWNER", 5, NULL), 1);
    assert_null(x);
    assert_int_equal(v.type, ADS_STRING);
    assert_true(v.u.s.p > b.p && v.u.s.p + v.u.s.len <= b.p + b.len);
    assert_memory_equal(v.u.s.p, "alice", 5);
    assert_int_equal(ads_msgpack_view_lookup(&v, &x, &mv, "owner2", 6, NULL), 0);
    assert_int_equal(ads_msgpack_view_lookup(&v, &x, &mv, "N", 1, NULL), 1);
    assert_int_equal(v.u.i, 5);
    ads_str name;
    assert_int_equal(ads_msgpack_view_name(&name, &mv, 0, NULL), 0);
    assert_int_equal(name.len, 1);
    assert_memory_equal(name.p, "n", 1);
    assert_int_equal(ads_msgpack_view_name(&name, &mv, 1, NULL), 0);
    assert_memory_equal(name.p, "Owner", 5);
    ads_error err;
    assert_int_equal(ads_msgpack_view_name(&name, &mv, 2, &err), ADS_EINVAL);
    ads_buf_free(&b);
}

static void view__attr_gives_each_attribute_as_a_lookup_does(void **state)
{
    (void)state;
    ads_buf b = ADS_BUF_INIT;
    encode_record_ok(&b, parse_record("[ Owner = \"alice\"; n = 5; l = { 1, \"x\" }; "
                                      "r = [ a = 1 ]; e = n + 1; big = 70000; f = 0.25 ]"));
    ads_msgpack_view mv, by_name;
    assert_int_equal(ads_msgpack_view_init(&mv, b.p, b.len, arena, NULL), 0);
    assert_int_equal(ads_msgpack_view_init(&by_name, b.p, b.len, arena, NULL), 0);
    for (size_t i = 0; i < ads_msgpack_view_size(&mv); i++) {
        ads_str name, want;
        ads_value v, w;
        const ads_expr *x, *y;
        assert_int_equal(ads_msgpack_view_attr(&name, &v, &x, &mv, i, NULL), 0);
        assert_int_equal(ads_msgpack_view_name(&want, &mv, i, NULL), 0);
        assert_true(name.p == want.p && name.len == want.len);
        assert_int_equal(ads_msgpack_view_lookup(&w, &y, &by_name, name.p, name.len, NULL), 1);
        assert_true((x == NULL) == (y == NULL));
        ads_buf bx = ADS_BUF_INIT, by = ADS_BUF_INIT;
        if (x) {
            ads_expr_unparse(&bx, x);
            ads_expr_unparse(&by, y);
        } else {
            ads_value_unparse(&bx, &v);
            ads_value_unparse(&by, &w);
        }
        assert_string_equal(ads_buf_cstr(&bx), ads_buf_cstr(&by));
        ads_buf_free(&bx);
        ads_buf_free(&by);
        /* a second read gives what the view decoded the first time */
        const ads_expr *again;
        assert_int_equal(ads_msgpack_view_attr(&name, &v, &again, &mv, i, NULL), 0);
        assert_true(again == x);
    }
    ads_str name;
    ads_value v;
    const ads_expr *x;
    ads_error err;
    assert_int_equal(ads_msgpack_view_attr(&name, &v, &x, &mv, 7, &err), ADS_EINVAL);
    assert_string_equal(err.message, "msgpack: attribute 7 out of range");
    assert_int_equal(ads_msgpack_view_attr(NULL, &v, &x, &mv, 0, &err), ADS_EINVAL);
    ads_buf_free(&b);
}

/* A lookup reads each scalar in place when it can (negative fixints, uint8,
 * str8 among them): what it gives is what the decoder gives, at every width's
 * edge, and a form that is not the shortest is refused there as the decoder
 * refuses it. */
static void view__lookups_read_short_forms_as_the_decoder_does(void **state)
{
    (void)state;
    static const int64_t ints[] = {-1, -32, -33, 127, 128, 255, 256, -128, -129, 65535, 65536};
    static const size_t lens[] = {0, 31, 32, 255, 256};
    char text[4096];
    int at = snprintf(text, sizeof text, "[ ");
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++)
        at += snprintf(text + at, sizeof text - (size_t)at, "i%zu = %lld; ", i,
                       (long long)ints[i]);
    for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
        at += snprintf(text + at, sizeof text - (size_t)at, "s%zu = \"", i);
        for (size_t k = 0; k < lens[i]; k++)
            text[at++] = (char)('a' + k % 26);
        at += snprintf(text + at, sizeof text - (size_t)at, "\"; ");
    }
    snprintf(text + at, sizeof text - (size_t)at, "]");
    const ads_record *r = parse_record(text), *back;
    ads_buf b = ADS_BUF_INIT;
    encode_record_ok(&b, r);
    assert_int_equal(ads_msgpack_decode_record(&back, arena, b.p, b.len, 0, NULL), 0);
    ads_msgpack_view mv;
    assert_int_equal(ads_msgpack_view_init(&mv, b.p, b.len, arena, NULL), 0);
    for (size_t j = 0; j < ads_record_size(r); j++) {
        ads_str name = ads_record_name(r, j);
        ads_value v;
        const ads_expr *x;
        assert_int_equal(ads_msgpack_view_lookup(&v, &x, &mv, name.p, name.len, NULL), 1);
        assert_null(x);
        const ads_expr *want = ads_record_lookup(back, name.p, name.len);
        assert_non_null(want);
        if (!ads_value_same(&v, &want->u.lit))
            fail_msg("%.*s: the view gives %s", (int)name.len, name.p, unparse_value(&v));
    }
    /* not the shortest form: refused by the lookup, as by the decoder */
    static const struct {
        const char *hex, *msg;
    } bad[] = {
        {"92 c7 03 10 01 01 01 81 a1 61 cc 05", "uint8 holding 5"},
        {"92 c7 03 10 01 01 01 81 a1 61 d9 03 61 62 63", "str8 of 3 bytes"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        unsigned char buf[64];
        size_t n = bytes_of(buf, sizeof buf, bad[i].hex);
        ads_error err;
        ads_value v;
        const ads_expr *x;
        int rc = ads_msgpack_view_init(&mv, buf, n, arena, &err);
        if (rc == 0)
            rc = ads_msgpack_view_lookup(&v, &x, &mv, "a", 1, &err);
        assert_int_equal(rc, ADS_ECORRUPT);
        assert_non_null(strstr(err.message, bad[i].msg));
    }
    ads_buf_free(&b);
}

/* Whether the row of text a, less the attributes named in skip (a
 * comma-separated list, or ""), is the row of text b, byte for byte. */
static bool same_except(const char *a, const char *skip, const char *b)
{
    ads_buf ba = ADS_BUF_INIT, bb = ADS_BUF_INIT;
    encode_record_ok(&ba, parse_record(a));
    encode_record_ok(&bb, parse_record(b));
    ads_msgpack_view va, vb;
    assert_int_equal(ads_msgpack_view_init(&va, ba.p, ba.len, arena, NULL), 0);
    assert_int_equal(ads_msgpack_view_init(&vb, bb.p, bb.len, arena, NULL), 0);
    char list[128];
    snprintf(list, sizeof list, ",%s,", skip);
    size_t pos[8], n = 0;
    for (size_t i = 0; i < ads_msgpack_view_size(&va); i++) {
        ads_str name;
        assert_int_equal(ads_msgpack_view_name(&name, &va, i, NULL), 0);
        char want[64];
        snprintf(want, sizeof want, ",%.*s,", (int)name.len, name.p);
        if (strstr(list, want))
            pos[n++] = i;
    }
    bool same = ads_msgpack_view_same_except(&va, pos, n, &vb);
    ads_buf_free(&ba);
    ads_buf_free(&bb);
    return same;
}

static void view__same_except_compares_the_attributes_left(void **state)
{
    (void)state;
    const char *b = "[ a = 1; m = \"x\"; z = { 1, [ q = 2 ] } ]";
    assert_true(same_except("[ a = 1; _Timestamp = 5; m = \"x\"; z = { 1, [ q = 2 ] } ]",
                            "_Timestamp", b));
    assert_true(same_except("[ _Deleted = false; _Timestamp = 5; a = 1; m = \"x\"; "
                            "z = { 1, [ q = 2 ] } ]",
                            "_Deleted,_Timestamp", b));
    assert_true(same_except("[ a = 1; m = \"x\"; q = 3; z = { 1, [ q = 2 ] } ]", "q", b));
    assert_true(same_except("[ a = 1; m = \"x\"; z = { 1, [ q = 2 ] }; zz = 1 ]", "zz", b));
    assert_true(same_except("[ _Timestamp = 5 ]", "_Timestamp", "[ ]"));
    assert_true(same_except(b, "", b));
    /* one attribute more or less, another value, spelling or type */
    assert_false(same_except("[ a = 1; _Timestamp = 5; m = \"x\"; z = { 1, [ q = 2 ] } ]", "",
                             b));
    assert_false(same_except("[ a = 1; m = \"x\" ]", "", b));
    assert_false(same_except(b, "", "[ a = 1; m = \"x\" ]"));
    assert_false(same_except(b, "a", "[ a = 1; m = \"x\" ]"));
    assert_false(same_except("[ a = 1; m = \"X\"; z = { 1, [ q = 2 ] } ]", "", b));
    assert_false(same_except("[ A = 1; m = \"x\"; z = { 1, [ q = 2 ] } ]", "", b));
    assert_false(same_except("[ a = 1.0; m = \"x\"; z = { 1, [ q = 2 ] } ]", "", b));
    assert_false(same_except("[ a = 1; m = \"x\"; z = { 1, [ q = 3 ] } ]", "", b));
    assert_false(same_except("[ a = 1; m = x; z = { 1, [ q = 2 ] } ]", "", b));
    /* skipped positions out of order or out of range say no */
    ads_buf bb = ADS_BUF_INIT;
    encode_record_ok(&bb, parse_record("[ a = 1; b = 2; c = 3 ]"));
    ads_msgpack_view v, w;
    assert_int_equal(ads_msgpack_view_init(&v, bb.p, bb.len, arena, NULL), 0);
    assert_int_equal(ads_msgpack_view_init(&w, bb.p, bb.len, arena, NULL), 0);
    size_t bad[2] = {2, 1};
    assert_false(ads_msgpack_view_same_except(&v, bad, 2, &w));
    size_t far[1] = {7};
    assert_false(ads_msgpack_view_same_except(&v, far, 1, &w));
    assert_true(ads_msgpack_view_same_except(&v, NULL, 0, &w));
    ads_buf_free(&bb);
}

static void view__decoded_attributes_are_kept_in_the_view_arena(void **state)
{
    (void)state;
    ads_buf b = ADS_BUF_INIT;
    encode_record_ok(&b, parse_record("[ e = a + 1; a = 2; l = { 1, 2 }; c1 = c2; c2 = c1; "
                                      "s = s * s + s; t = u + u; u = t * t ]"));
    ads_msgpack_view mv;
    ads_value v1, v2;
    const ads_expr *x1, *x2;
    ads_error err;
    assert_int_equal(ads_msgpack_view_init(&mv, b.p, b.len, NULL, &err), ADS_EINVAL);
    assert_string_equal(err.message, "msgpack: NULL argument");
    assert_int_equal(ads_msgpack_view_init(&mv, b.p, b.len, arena, NULL), 0);
    /* an expression is parsed once: the same tree each time */
    assert_int_equal(ads_msgpack_view_lookup(&v1, &x1, &mv, "e", 1, NULL), 1);
    assert_int_equal(ads_msgpack_view_lookup(&v2, &x2, &mv, "E", 1, NULL), 1);
    assert_non_null(x1);
    assert_ptr_equal(x1, x2);
    /* a list is decoded once */
    assert_int_equal(ads_msgpack_view_lookup(&v1, &x1, &mv, "l", 1, NULL), 1);
    assert_int_equal(ads_msgpack_view_lookup(&v2, &x2, &mv, "l", 1, NULL), 1);
    assert_null(x1);
    assert_int_equal(v1.type, ADS_LIST);
    assert_ptr_equal(v1.u.list.items, v2.u.list.items);
    ads_view v = ads_msgpack_view_get(&mv, NULL);
    assert_string_equal(unparse_value((ads_value[]){eval_over(parse("e * 10 + l[1]"), &v)}),
                        "32");
    /* circular references are found at once, however they branch */
    assert_string_equal(unparse_value((ads_value[]){eval_over(parse("c1"), &v)}), "error");
    assert_string_equal(unparse_value((ads_value[]){eval_over(parse("s"), &v)}), "error");
    assert_string_equal(unparse_value((ads_value[]){eval_over(parse("t + 1"), &v)}), "error");
    ads_buf_free(&b);
}

static void view__nested_scopes_and_parent_views(void **state)
{
    (void)state;
    ads_buf b = ADS_BUF_INIT;
    encode_record_ok(&b, parse_record("[ x = 1; r = [ y = x + 1; z = [ w = y * 10 ] ]; "
                                      "lst = { [ q = 1 ], [ q = 2 ] }; s = \"S\" ]"));
    ads_msgpack_view mv;
    assert_int_equal(ads_msgpack_view_init(&mv, b.p, b.len, arena, NULL), 0);
    const ads_record *outer = parse_record("[ x = 100; only_outer = 7 ]");
    ads_view ov = ads_record_view(outer, NULL);
    ads_view v = ads_msgpack_view_get(&mv, &ov);
    static const char *const cases[][2] = {
        {"r.y", "2"},
        {"r.z.w", "20"},
        {"lst.q", "{ 1, 2 }"},
        {"only_outer + x", "8"},
        {"r", "[ y = 2; z = [ w = 20 ] ]"},
        {"s == \"s\" && s is \"S\"", "true"},
        {".only_outer", "7"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ads_value got = eval_over(parse(cases[i][0]), &v);
        if (strcmp(unparse_value(&got), cases[i][1]))
            fail_msg("%s: want %s, got %s", cases[i][0], cases[i][1], unparse_value(&got));
    }
    ads_buf_free(&b);
}

/* Expressions evaluated over random rows, both ways. */
static const char *const probes[] = {
    "Memory > 1024 && Arch == \"X86_64\" && (Disk >= 100000 || Owner == \"alice\")",
    "Memory + Disk",
    "strcat(Owner, \"/\", Arch)",
    "Extra",
    "Extra2",
    "Extra.m + 1",
    "size(Name)",
    "isUndefined(Owner) || Owner =?= \"bob\"",
    "{ Memory, Disk, Arch }",
    "Cpus * 2 ?: 0",
    "Memory =!= undefined ? Memory / 1024 : -1",
    "member(Arch, { \"X86_64\", \"ARM64\" })",
    "Start + `1h`",
    "Id",
};

static const ads_record *gen_machine(void)
{
    static const char *const arch[] = {"\"X86_64\"", "\"x86_64\"", "\"ARM64\"", "undefined",
                                       "42", "error"};
    static const char *const owner[] = {"\"alice\"", "\"ALICE\"", "\"bob\"", "undefined", "7"};
    static const char *const extra[] = {
        "Memory * 2", "[ m = Memory; d = Disk + 1 ]", "{ Memory, { Disk } }",
        "Cpus > 4 && Memory > 1024", "Extra2 + 1", "\"plain\"", "Extra",
        "ifThenElse(Disk > 5, Owner, Arch)"};
    /* in the arena: parsed names point into the text */
    char *text = ads_arena_alloc(arena, 2048);
    const size_t cap = 2048;
    int n = snprintf(text, cap, "[ Name = \"slot%zu@node\"", below(100000));
    if (below(8))
        n += snprintf(text + n, cap - (size_t)n, "; Memory = %zu", below(8192));
    if (below(8))
        n += snprintf(text + n, cap - (size_t)n, "; Arch = %s", arch[below(6)]);
    if (below(8))
        n += snprintf(text + n, cap - (size_t)n, "; Disk = %s",
                      below(5) ? (below(2) ? "250000" : "99999") : "1.5e5");
    if (below(2))
        n += snprintf(text + n, cap - (size_t)n, "; Owner = %s", owner[below(5)]);
    if (below(2))
        n += snprintf(text + n, cap - (size_t)n, "; Cpus = %zu", below(64));
    if (below(2))
        n += snprintf(text + n, cap - (size_t)n, "; Extra = %s", extra[below(8)]);
    if (below(2))
        n += snprintf(text + n, cap - (size_t)n, "; Extra2 = %s", extra[below(8)]);
    if (below(2))
        n += snprintf(text + n, cap - (size_t)n, "; Start = `2024-0%zu-1%zuT10:00:00Z`",
                      1 + below(9), below(10));
    if (below(2))
        n += snprintf(text + n, cap - (size_t)n, "; Id = #%zu", below(1000));
    for (size_t k = below(6); k > 0; k--)
        n += snprintf(text + n, cap - (size_t)n, "; Pad%zu = %zu", k, below(1000000));
    snprintf(text + n, cap - (size_t)n, " ]");
    return parse_record(text);
}

static void view__random_rows_evaluate_as_in_memory(void **state)
{
    (void)state;
    /* the probes outlive the resets of the test's arena */
    ads_arena *keep = ads_arena_new();
    const ads_expr *e[sizeof probes / sizeof probes[0]];
    for (size_t k = 0; k < sizeof probes / sizeof probes[0]; k++)
        e[k] = parse_in(keep, probes[k]);
    ads_buf b = ADS_BUF_INIT, t1 = ADS_BUF_INIT, t2 = ADS_BUF_INIT;
    rng = 99;
    int trues = 0;
    for (int i = 0; i < 1500; i++) {
        const ads_record *r = gen_machine();
        encode_record_ok(&b, r);
        ads_msgpack_view mv;
        assert_int_equal(ads_msgpack_view_init(&mv, b.p, b.len, arena, NULL), 0);
        ads_view vm = ads_record_view(r, NULL), vc = ads_msgpack_view_get(&mv, NULL);
        for (size_t k = 0; k < sizeof e / sizeof e[0]; k++) {
            ads_value a = eval_over(e[k], &vm), c = eval_over(e[k], &vc);
            if (!ads_value_same(&a, &c)) {
                ads_buf_clear(&t1);
                ads_record_unparse(&t1, r);
                ads_buf_clear(&t2);
                ads_value_unparse(&t2, &c);
                fail_msg("row %d %s: %s in memory is %s, over bytes %s", i, ads_buf_cstr(&t1),
                         probes[k], unparse_value(&a), ads_buf_cstr(&t2));
            }
            if (k == 0 && a.type == ADS_BOOLEAN && a.u.b)
                trues++;
        }
        /* every attribute, by name in another case */
        for (size_t j = 0; j < ads_record_size(r); j++) {
            ads_str name = ads_record_name(r, j);
            char upper[64];
            for (size_t q = 0; q < name.len; q++)
                upper[q] = (char)((name.p[q] >= 'a' && name.p[q] <= 'z') ? name.p[q] - 32
                                                                         : name.p[q]);
            ads_value v;
            const ads_expr *x;
            assert_int_equal(ads_msgpack_view_lookup(&v, &x, &mv, upper, name.len, NULL),
                             1);
        }
        if (i % 32 == 0)
            ads_arena_reset(arena);
    }
    assert_true(trues > 50); /* the constraint was exercised both ways */
    ads_arena_free(keep);
    ads_buf_free(&b);
    ads_buf_free(&t1);
    ads_buf_free(&t2);
}

/* ======================================================================== */
/* Corruption                                                               */
/* ======================================================================== */

/* Whatever bytes: check, decode and the view must not crash; accepted
 * bytes decode to a record that encodes back to exactly those bytes (to a
 * fixed point, if expression texts are involved). */
static void survive(const unsigned char *p, size_t n, const ads_expr *probe, ads_arena *work)
{
    /* an exact-size copy, so ASan sees any over-read */
    unsigned char *copy = malloc(n ? n : 1);
    memcpy(copy, p, n);
    ads_error err;
    const ads_record *r;
    int rc = ads_msgpack_check(copy, n, &err);
    int rd = ads_msgpack_decode_record(&r, work, copy, n, 0, &err);
    assert_int_equal(rc, rd);
    if (rc == 0) {
        ads_buf b = ADS_BUF_INIT, b2 = ADS_BUF_INIT;
        encode_record_ok(&b, r);
        if (!record_has_expr(r)) {
            if (b.len != n || memcmp(b.p, copy, n))
                fail_msg("accepted %s\nre-encodes as %s", hex_of(copy, n), hex_of(b.p, b.len));
        } else {
            const ads_record *r2;
            if (ads_msgpack_decode_record(&r2, work, b.p, b.len, 0, &err))
                fail_msg("accepted %s\nre-encodes as %s\nwhich fails: %s", hex_of(copy, n),
                         hex_of(b.p, b.len), err.message);
            encode_record_ok(&b2, r2);
            assert_int_equal(b.len, b2.len);
            assert_memory_equal(b.p, b2.p, b.len);
        }
        ads_buf_free(&b);
        ads_buf_free(&b2);
    } else {
        assert_true(rc == ADS_ECORRUPT || rc == ADS_EVERSION);
        assert_non_null(strstr(err.message, "at byte "));
    }
    ads_msgpack_view mv;
    if (ads_msgpack_view_init(&mv, copy, n, work, &err) == 0) {
        ads_view v = ads_msgpack_view_get(&mv, NULL);
        ads_value out;
        assert_int_equal(ads_expr_eval(&out, probe, &v, work), 0);
        for (size_t i = 0; i < ads_msgpack_view_size(&mv); i++) {
            ads_str name;
            const ads_expr *x;
            if (ads_msgpack_view_name(&name, &mv, i, &err) == 0)
                (void)ads_msgpack_view_lookup(&out, &x, &mv, name.p, name.len, &err);
            (void)ads_msgpack_view_attr(&name, &out, &x, &mv, i, &err);
        }
    }
    free(copy);
    ads_arena_reset(work);
}

static void corrupt__every_truncation_and_byte_flip_is_safe(void **state)
{
    (void)state;
    const ads_expr *probe = parse("Memory > 1024 && Arch == \"X86_64\" && "
                                  "(Disk >= 100000 || Owner == \"alice\") && "
                                  "size(Extra) >= 0 && e + 1 > 0 && l[0] && r.x");
    ads_buf b = ADS_BUF_INIT;
    rng = 2024;
    const ads_record *rows[12];
    static const char machine[] =
        "[ Memory = 2048; Arch = \"X86_64\"; Disk = 250000; Owner = \"bob\";"
        " e = Memory + 1; l = { 1, 2.5, \"x\" }; r = [ x = true ];"
        " t = `2020-01-01T00:00:00+01:00`; d = `1h`; i = #42;"
        " b = blob(\"aGVsbG8=\", [ k = 1 ]) ]";
    rows[0] = parse_record(machine);
    rows[1] = eval_text(machine).u.rec; /* all values, the blob included */
    rows[2] = parse_record("[ ]");
    for (int k = 3; k < 12; k++) {
        gen_opts o = {k % 2 == 0, 3, false};
        rows[k] = gen_record_with_exprs(&o, 6);
    }
    long runs = 0;
    ads_arena *work = ads_arena_new();
    assert_non_null(work);
    for (int k = 0; k < 12; k++) {
        const ads_record *r = rows[k];
        encode_record_ok(&b, r);
        if (b.len > 3000)
            continue;
        unsigned char *p = malloc(b.len);
        memcpy(p, b.p, b.len);
        for (size_t n = 0; n <= b.len; n++, runs++)
            survive(p, n, probe, work);
        static const unsigned char flips[] = {0xff, 0x01, 0x80, 0x10};
        for (size_t i = 0; i < b.len; i++) {
            unsigned char keep = p[i];
            for (size_t f = 0; f < sizeof flips; f++, runs++) {
                p[i] = keep ^ flips[f];
                survive(p, b.len, probe, work);
            }
            p[i] = 0x00;
            survive(p, b.len, probe, work);
            p[i] = keep;
            runs++;
        }
        free(p);
    }
    assert_true(runs > 1000);
    ads_buf_free(&b);
    ads_arena_free(work);
}

/* A chain of 300,000 operands (issue 10 item 8) is written as its text and
 * read back to the same tree and value, in an expression and in a record,
 * with no recursion per operand in the writer, the reader or the check. */
static void expr__a_chain_of_300000_operands_round_trips(void **state)
{
    (void)state;
    ads_buf text = ADS_BUF_INIT, bytes = ADS_BUF_INIT;
    ads_buf_adds(&text, "[ AdType = \"Machine\"; Req = ");
    size_t at = text.len;
    for (int i = 0; i < 300000; i++)
        ads_buf_adds(&text, i ? " + 1" : "1");
    size_t end = text.len;
    ads_buf_adds(&text, " ]");
    assert_false(text.failed);
    const ads_expr *e, *back;
    ads_error err;
    assert_int_equal(ads_expr_parse(&e, arena, text.p + at, end - at, &err), 0);
    assert_int_equal(ads_msgpack_encode_expr(&bytes, e, &err), 0);
    assert_int_equal(ads_msgpack_decode_expr(&back, arena, bytes.p, bytes.len, 0, &err), 0);
    assert_true(ads_expr_equal(e, back));
    ads_value v;
    assert_int_equal(ads_expr_eval(&v, back, NULL, arena), 0);
    assert_int_equal(v.type, ADS_INTEGER);
    assert_int_equal(v.u.i, 300000);
    const ads_record *r = parse_record(ads_buf_cstr(&text)), *rb;
    ads_buf_clear(&bytes);
    assert_int_equal(ads_msgpack_encode_record(&bytes, r, &err), 0);
    assert_int_equal(ads_msgpack_check(bytes.p, bytes.len, &err), 0);
    assert_int_equal(ads_msgpack_decode_record(&rb, arena, bytes.p, bytes.len, 0, &err), 0);
    ads_value rv = ads_recordv(r), rbv = ads_recordv(rb);
    assert_true(ads_value_same(&rv, &rbv));
    ads_buf_free(&text);
    ads_buf_free(&bytes);
}

/* ======================================================================== */
/* The writer against msgpack-c's packer                                    */
/* ======================================================================== */

/* The reference: rows written through msgpack-c's packer (whose choice of
 * forms is the canonical one), attributes sorted by folded name with qsort,
 * as the encoder wrote them before it wrote MessagePack by hand. Only for
 * records the writer accepts (no two names equal ignoring case). */
typedef struct ref_enc {
    msgpack_packer pk;
    ads_buf *out;
} ref_enc;

static int ref_write(void *data, const char *p, size_t n)
{
    ads_buf_add(data, p, n);
    return 0;
}

static void ref_value(ref_enc *e, const ads_value *v);
static void ref_expr(ref_enc *e, const ads_expr *x);

static int ref_fold_cmp(const void *a, const void *b)
{
    const ads_str *x = *(const ads_str *const *)a, *y = *(const ads_str *const *)b;
    size_t n = x->len < y->len ? x->len : y->len;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)x->p[i], d = (unsigned char)y->p[i];
        c = c >= 'A' && c <= 'Z' ? (unsigned char)(c | 0x20) : c;
        d = d >= 'A' && d <= 'Z' ? (unsigned char)(d | 0x20) : d;
        if (c != d)
            return c < d ? -1 : 1;
    }
    return x->len < y->len ? -1 : x->len > y->len;
}

/* The map of r; offsets[k] (if given) the k-th key's place from body. */
static void ref_map(ref_enc *e, const ads_record *r, uint64_t *offsets, size_t body)
{
    const ads_str **names = malloc((r->n ? r->n : 1) * sizeof *names);
    for (size_t i = 0; i < r->n; i++)
        names[i] = &r->names[i];
    qsort(names, r->n, sizeof *names, ref_fold_cmp);
    msgpack_pack_map(&e->pk, r->n);
    for (size_t k = 0; k < r->n; k++) {
        size_t i = (size_t)(names[k] - r->names);
        if (offsets)
            offsets[k] = e->out->len - body;
        msgpack_pack_str(&e->pk, r->names[i].len);
        msgpack_pack_str_body(&e->pk, r->names[i].p, r->names[i].len);
        ref_expr(e, r->exprs[i]);
    }
    free(names);
}

static void ref_ext(ref_enc *e, int type, const void *p, size_t n)
{
    msgpack_pack_ext(&e->pk, n, (int8_t)type);
    msgpack_pack_ext_body(&e->pk, p, n);
}

static void ref_expr(ref_enc *e, const ads_expr *x)
{
    if (x->kind == N_LITERAL) {
        ref_value(e, &x->u.lit);
    } else if (x->kind == N_LIST) {
        msgpack_pack_array(&e->pk, x->u.list.n);
        for (size_t i = 0; i < x->u.list.n; i++)
            ref_expr(e, x->u.list.items[i]);
    } else if (x->kind == N_RECORD) {
        ref_map(e, x->u.rec, NULL, 0);
    } else if (x->kind == N_UNARY && x->op == OP_NEG && x->u.ops.a->kind == N_LITERAL &&
               ((x->u.ops.a->u.lit.type == ADS_INTEGER && x->u.ops.a->u.lit.u.i >= 0) ||
                (x->u.ops.a->u.lit.type == ADS_REAL && isfinite(x->u.ops.a->u.lit.u.r) &&
                 !signbit(x->u.ops.a->u.lit.u.r)))) {
        const ads_value *lit = &x->u.ops.a->u.lit;
        ads_value neg = lit->type == ADS_INTEGER ? ads_int(-lit->u.i) : ads_real(-lit->u.r);
        ref_value(e, &neg);
    } else {
        ads_buf text = ADS_BUF_INIT;
        ads_expr_unparse(&text, x);
        ref_ext(e, ADS_MSGPACK_EXT_EXPR, text.p, text.len);
        ads_buf_free(&text);
    }
}

static void ref_be(unsigned char *p, uint64_t v, unsigned width)
{
    for (unsigned i = 0; i < width; i++)
        p[i] = (unsigned char)(v >> (8 * (width - 1 - i)));
}

static uint64_t ref_bits(double d)
{
    uint64_t bits = 0x7ff8000000000000ull;
    if (!isnan(d))
        memcpy(&bits, &d, sizeof bits);
    return bits;
}

static void ref_value(ref_enc *e, const ads_value *v)
{
    unsigned char pay[16];
    double d;
    switch (v->type) {
    case ADS_UNDEFINED:
        msgpack_pack_nil(&e->pk);
        break;
    case ADS_ERROR:
        ref_ext(e, ADS_MSGPACK_EXT_ERROR, "", 0);
        break;
    case ADS_BOOLEAN:
        if (v->u.b)
            msgpack_pack_true(&e->pk);
        else
            msgpack_pack_false(&e->pk);
        break;
    case ADS_INTEGER:
        msgpack_pack_int64(&e->pk, v->u.i);
        break;
    case ADS_REAL: {
        uint64_t bits = ref_bits(v->u.r);
        memcpy(&d, &bits, sizeof d);
        msgpack_pack_double(&e->pk, d);
        break;
    }
    case ADS_STRING:
        msgpack_pack_str(&e->pk, v->u.s.len);
        msgpack_pack_str_body(&e->pk, v->u.s.p, v->u.s.len);
        break;
    case ADS_LIST:
        msgpack_pack_array(&e->pk, v->u.list.n);
        for (size_t i = 0; i < v->u.list.n; i++)
            ref_value(e, &v->u.list.items[i]);
        break;
    case ADS_RECORD:
        ref_map(e, v->u.rec, NULL, 0);
        break;
    case ADS_ABSTIME:
        ref_be(pay, ref_bits(v->u.abs.secs), 8);
        ref_be(pay + 8, (uint32_t)v->u.abs.offset, 4);
        ref_ext(e, ADS_MSGPACK_EXT_ABSTIME, pay, 12);
        break;
    case ADS_RELTIME:
        ref_be(pay, ref_bits(v->u.rel), 8);
        ref_ext(e, ADS_MSGPACK_EXT_RELTIME, pay, 8);
        break;
    case ADS_IDENT:
        ref_be(pay, v->u.id.hi, 8);
        ref_be(pay + 8, v->u.id.lo, 8);
        ref_ext(e, ADS_MSGPACK_EXT_IDENT, pay, 16);
        break;
    case ADS_BLOB: {
        ads_buf meta = ADS_BUF_INIT;
        const ads_blob *b = v->u.blob;
        if (b->meta) {
            ref_enc sub = {{0}, &meta};
            msgpack_packer_init(&sub.pk, &meta, ref_write);
            ref_map(&sub, b->meta, NULL, 0);
        }
        char flag = b->meta ? 1 : 0;
        msgpack_pack_ext(&e->pk, 1 + meta.len + b->bytes.len, ADS_MSGPACK_EXT_BLOB);
        msgpack_pack_ext_body(&e->pk, &flag, 1);
        msgpack_pack_ext_body(&e->pk, meta.p, meta.len);
        msgpack_pack_ext_body(&e->pk, b->bytes.p, b->bytes.len);
        ads_buf_free(&meta);
        break;
    }
    }
}

static void ref_row(ads_buf *out, const ads_record *r)
{
    ads_buf map = ADS_BUF_INIT;
    ref_enc e = {{0}, &map};
    msgpack_packer_init(&e.pk, &map, ref_write);
    uint64_t *offsets = malloc((r->n ? r->n : 1) * sizeof *offsets);
    ref_map(&e, r, offsets, 0);
    uint64_t last = r->n ? offsets[r->n - 1] : 0;
    unsigned width = last <= 0xff ? 1 : last <= 0xffff ? 2 : 4;
    ref_enc h = {{0}, out};
    msgpack_packer_init(&h.pk, out, ref_write);
    msgpack_pack_array(&h.pk, 2);
    msgpack_pack_ext(&h.pk, 2 + r->n * width, ADS_MSGPACK_EXT_ROW);
    unsigned char vw[2] = {ADS_MSGPACK_VERSION, (unsigned char)width};
    ads_buf_add(out, vw, 2);
    for (size_t i = 0; i < r->n; i++) {
        unsigned char o[4];
        ref_be(o, offsets[i], width);
        ads_buf_add(out, o, width);
    }
    ads_buf_add(out, map.p, map.len);
    free(offsets);
    ads_buf_free(&map);
    assert_false(out->failed);
}

/* Are two of r's names equal ignoring case (a record the writer refuses)? */
static bool has_folded_twins(const ads_record *r)
{
    for (size_t i = 0; i < r->n; i++)
        for (size_t j = i + 1; j < r->n; j++)
            if (ref_fold_cmp(&(const ads_str *){&r->names[i]}, &(const ads_str *){&r->names[j]}) == 0)
                return true;
    return false;
}

static void encode__writer_gives_the_bytes_of_msgpack_c_packer(void **state)
{
    (void)state;
    ads_buf mine = ADS_BUF_INIT, ref = ADS_BUF_INIT, text = ADS_BUF_INIT;
    ads_error err;
    rng = 1717;
    int compared = 0;
    for (int i = 0; i < 1500; i++) {
        /* any values, or values and expressions over names the language
         * can write; up to 40 attributes: insertion sort below 33, qsort above */
        gen_opts o = {i % 2 == 0, 3, false};
        size_t max = i % 3 == 0 ? 40 : 12;
        const ads_record *r = o.text ? gen_record_with_exprs(&o, max) : gen_record(&o, 0, max);
        if (has_folded_twins(r))
            continue;
        ads_buf_clear(&mine);
        ads_buf_clear(&ref);
        if (ads_msgpack_encode_record(&mine, r, &err))
            fail_msg("row %d: %s", i, err.message);
        ref_row(&ref, r);
        if (mine.len != ref.len || memcmp(mine.p, ref.p, ref.len) != 0) {
            ads_buf_clear(&text);
            ads_record_unparse(&text, r);
            fail_msg("row %d: %s: %zu bytes, msgpack-c %zu", i, ads_buf_cstr(&text), mine.len,
                     ref.len);
        }
        compared++;
        if (i % 16 == 0)
            ads_arena_reset(arena);
    }
    assert_true(compared > 1000);
    ads_buf_free(&mine);
    ads_buf_free(&ref);
    ads_buf_free(&text);
}

/* Rows of every header size: the number of attributes and their values'
 * sizes chosen so that the header is a fixext, an ext8, an ext16 and an
 * ext32 with offsets one, two and four bytes wide, each row the bytes
 * msgpack-c's packer gives (the writer fills a header it kept room for, of
 * two-byte offsets, and moves the body when the header takes another size). */
static void encode__headers_of_every_size_match_msgpack_c(void **state)
{
    (void)state;
    static const struct {
        size_t n, vlen;
    } cases[] = {{0, 0},   {1, 1},   {3, 1},     {3, 100},  {7, 1},     {7, 40},   {14, 1},
                 {126, 1}, {127, 1}, {127, 3},   {200, 1},  {300, 1},   {300, 300}, {2, 70000},
                 {40000, 1}};
    ads_buf mine = ADS_BUF_INIT, ref = ADS_BUF_INIT;
    ads_error err;
    char *val = malloc(70001);
    assert_non_null(val);
    memset(val, 'v', 70000);
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        ads_record_builder *b;
        assert_int_equal(ads_record_builder_new(&b, arena, &err), 0);
        for (size_t i = 0; i < cases[c].n; i++) {
            char name[32];
            snprintf(name, sizeof name, "a%05zu", i);
            const char *kept = ads_arena_strndup(arena, name, strlen(name)); /* not copied */
            ads_value v = ads_string(val, cases[c].vlen);
            assert_int_equal(ads_record_builder_add_value(b, kept, strlen(kept), &v, &err), 0);
        }
        const ads_record *r = ads_record_builder_finish(b);
        assert_non_null(r);
        ads_buf_clear(&mine);
        ads_buf_clear(&ref);
        ads_buf_adds(&mine, "prefix"); /* a row written after other bytes */
        if (ads_msgpack_encode_row(&mine, r, NULL, &err))
            fail_msg("%zu attributes of %zu bytes: %s", cases[c].n, cases[c].vlen, err.message);
        ref_row(&ref, r);
        if (mine.len != ref.len + 6 || memcmp(mine.p, "prefix", 6) != 0 ||
            memcmp(mine.p + 6, ref.p, ref.len) != 0)
            fail_msg("%zu attributes of %zu bytes: %zu bytes, msgpack-c %zu", cases[c].n,
                     cases[c].vlen, mine.len - 6, ref.len);
        ads_arena_reset(arena);
    }
    free(val);
    ads_buf_free(&mine);
    ads_buf_free(&ref);
}

/* r with its name number which replaced by name (same order, same values). */
static const ads_record *renamed(const ads_record *r, size_t which, const char *name)
{
    ads_record_builder *b;
    assert_int_equal(ads_record_builder_new(&b, arena, NULL), 0);
    for (size_t i = 0; i < r->n; i++) {
        ads_str n = i == which ? (ads_str){name, strlen(name)} : r->names[i];
        assert_int_equal(ads_record_builder_add(b, n.p, n.len, r->exprs[i], NULL), 0);
    }
    return ads_record_builder_finish(b);
}

static void encode__name_order_memo_gives_the_same_bytes(void **state)
{
    (void)state;
    ads_msgpack_order *memo;
    ads_buf with = ADS_BUF_INIT, without = ADS_BUF_INIT;
    ads_error err;
    assert_int_equal(ads_msgpack_order_new(&memo, &err), 0);
    rng = 99;
    /* runs of records with one name list (values differ), then a record
     * with one name respelled in another case or changed, then a record
     * whose names collide ignoring case: each must encode as without memo */
    const ads_record *prev = NULL;
    for (int i = 0; i < 900; i++) {
        gen_opts o = {i % 2 == 0, 2, false};
        size_t max = i % 4 == 0 ? 40 : 10;
        const ads_record *r = o.text ? gen_record_with_exprs(&o, max) : gen_record(&o, 0, max);
        if (prev && i % 3 != 0 && prev->n > 0) {
            /* the previous record's names with this record's values */
            ads_record_builder *b;
            assert_int_equal(ads_record_builder_new(&b, arena, NULL), 0);
            for (size_t k = 0; k < prev->n; k++) {
                ads_value v = ads_int((int64_t)k * i);
                assert_int_equal(ads_record_builder_add_value(b, prev->names[k].p,
                                                              prev->names[k].len, &v, NULL), 0);
            }
            r = ads_record_builder_finish(b);
            if (i % 3 == 2) /* one name respelled: "memory" after "Memory" */
                r = renamed(r, (size_t)i % r->n, i % 2 ? "ZZ_Other" : "zz_other");
        }
        if (has_folded_twins(r))
            continue;
        ads_buf_clear(&with);
        ads_buf_clear(&without);
        if (ads_msgpack_encode_row(&with, r, memo, &err) ||
            ads_msgpack_encode_record(&without, r, &err))
            fail_msg("row %d: %s", i, err.message);
        assert_int_equal(with.len, without.len);
        assert_memory_equal(with.p, without.p, with.len);
        prev = r;
        if (i % 32 == 0) {
            ads_arena_reset(arena);
            prev = NULL;
        }
    }
    /* after a record is remembered, one that repeats a name (ignoring case)
     * is still refused */
    const ads_record *ok = parse_record("[ a = 1; B = 2 ]");
    assert_int_equal(ads_msgpack_encode_row(&with, ok, memo, &err), 0);
    ads_record twins = *ok; /* (the builder refuses twins: made by hand) */
    ads_str names[2] = {{"a", 1}, {"A", 1}};
    twins.names = names;
    size_t before = with.len;
    assert_int_equal(ads_msgpack_encode_row(&with, &twins, memo, &err), ADS_EINVAL);
    assert_string_equal(err.message, "msgpack: a record has two attributes named 'a' (ignoring case)");
    assert_int_equal(with.len, before);
    ads_msgpack_order_free(memo);
    ads_buf_free(&with);
    ads_buf_free(&without);
}

/* Names that differ from the memo's in one byte, at every place of names
 * of 1 to 24 bytes, where the difference changes the names' order: each
 * record encodes as without the memo (a compare that missed a byte would
 * reuse the remembered order and write the two names the wrong way round). */
static void encode__name_order_memo_sees_a_one_byte_difference_anywhere(void **state)
{
    (void)state;
    ads_msgpack_order *memo;
    ads_buf with = ADS_BUF_INIT, without = ADS_BUF_INIT;
    ads_error err;
    assert_int_equal(ads_msgpack_order_new(&memo, &err), 0);
    for (size_t len = 1; len <= 24; len++)
        for (size_t at = 0; at < len; at++) {
            /* "m" names: the first all 'm', the second 'm' but 'n' at `at`;
             * then the first changed to 'o' at `at` (now after the second) */
            char first[32], second[32], changed[32];
            memset(first, 'm', len);
            memcpy(second, first, len);
            memcpy(changed, first, len);
            second[at] = 'n';
            changed[at] = 'o';
            for (int k = 0; k < 2; k++) {
                ads_record_builder *b;
                ads_value one = ads_int(1), two = ads_int(2);
                assert_int_equal(ads_record_builder_new(&b, arena, NULL), 0);
                assert_int_equal(
                    ads_record_builder_add_value(b, k ? changed : first, len, &one, NULL), 0);
                assert_int_equal(ads_record_builder_add_value(b, second, len, &two, NULL), 0);
                const ads_record *r = ads_record_builder_finish(b);
                ads_buf_clear(&with);
                ads_buf_clear(&without);
                if (ads_msgpack_encode_row(&with, r, memo, &err) ||
                    ads_msgpack_encode_record(&without, r, &err))
                    fail_msg("len %zu at %zu: %s", len, at, err.message);
                if (with.len != without.len || memcmp(with.p, without.p, with.len) != 0)
                    fail_msg("len %zu, byte %zu, record %d: not the bytes without a memo", len,
                             at, k);
            }
            ads_arena_reset(arena);
        }
    ads_msgpack_order_free(memo);
    ads_buf_free(&with);
    ads_buf_free(&without);
}

/* The memo guesses the width of a row's offsets from the last row with its
 * names (1 byte for a body under 256 bytes, 2 under 64 KiB, else 4): rows
 * of one name list whose bodies cross those sizes in every order, written
 * as records and as arrays with the memo, are the bytes written without
 * it; a guess too wide moves the body back, one too narrow moves it on. */
static void encode__offsets_of_every_width_with_the_memo_give_the_same_bytes(void **state)
{
    (void)state;
    static const size_t sizes[] = {3, 200, 300, 40000, 70000, 5, 70000, 250, 66000, 1, 255, 256};
    enum { NS = sizeof sizes / sizeof sizes[0] };
    char *text = malloc(70001);
    assert_non_null(text);
    memset(text, 'x', 70000);
    ads_buf plain = ADS_BUF_INIT, memoed = ADS_BUF_INIT;
    ads_msgpack_order *memo;
    ads_error err;
    assert_int_equal(ads_msgpack_order_new(&memo, NULL), 0);
    ads_str names[3] = {{"Name", 4}, {"Blob", 4}, {"Cpus", 4}};
    for (size_t a = 0; a < NS; a++)
        for (size_t b = 0; b < NS; b++) {
            size_t pair[2] = {sizes[a], sizes[b]};
            for (int k = 0; k < 2; k++) {
                ads_value values[3] = {ads_string("m", 1), ads_string(text, pair[k]),
                                       ads_int((int64_t)k)};
                ads_buf_clear(&plain);
                ads_buf_clear(&memoed);
                if (ads_msgpack_encode_values(&plain, names, values, 3, NULL, &err) ||
                    ads_msgpack_encode_values(&memoed, names, values, 3, memo, &err))
                    fail_msg("%zu then %zu: %s", pair[0], pair[1], err.message);
                if (plain.len != memoed.len || memcmp(plain.p, memoed.p, plain.len) != 0)
                    fail_msg("values: a body of %zu after %zu differs with the memo", pair[k],
                             pair[1 - k]);
                ads_record_builder *rb;
                assert_int_equal(ads_record_builder_new(&rb, arena, NULL), 0);
                for (int i = 0; i < 3; i++)
                    assert_int_equal(ads_record_builder_add_value(rb, names[i].p, names[i].len,
                                                                  &values[i], NULL),
                                     0);
                ads_buf_clear(&memoed);
                if (ads_msgpack_encode_row(&memoed, ads_record_builder_finish(rb), memo, &err))
                    fail_msg("%s", err.message);
                if (plain.len != memoed.len || memcmp(plain.p, memoed.p, plain.len) != 0)
                    fail_msg("record: a body of %zu after %zu differs with the memo", pair[k],
                             pair[1 - k]);
            }
            ads_arena_reset(arena);
        }
    free(text);
    ads_msgpack_order_free(memo);
    ads_buf_free(&plain);
    ads_buf_free(&memoed);
}

typedef struct id_table {
    const ads_str *names;
    const uint64_t *ids;
    size_t n;
} id_table;

static int id_from_table(void *ctx, size_t i, const char *name, size_t len, uint64_t *id,
                         ads_error *err)
{
    const id_table *t = ctx;
    (void)i;
    (void)err;
    for (size_t k = 0; k < t->n; k++)
        if (t->names[k].len == len && memcmp(t->names[k].p, name, len) == 0) {
            *id = t->ids[k];
            return 0;
        }
    return 1;
}

/* A record whose names the memo knows is written key and plain value at a
 * time into room made for both (msgpack_write.c, w_known_attrs), keyed by
 * names or by the ids given to the memo: random records of every scalar
 * form (integers and strings at each width's edges, NaN and -0.0,
 * undefined, times and ids, names of fixstr and str8 length, maps of 16 and
 * more), with lists and expressions among them, give the bytes of the long
 * way, and keyed by ids those of the row with names rewritten with the
 * ids. */
static void encode__plain_records_through_the_memo_give_the_long_way_bytes(void **state)
{
    (void)state;
    static const int64_t ints[] = {0,         1,         127,       128,       255,
                                   256,       65535,     65536,     4294967295LL,
                                   4294967296LL, -1,     -32,       -33,       -128,
                                   -129,      -32768,    -32769,    INT32_MIN, (int64_t)INT32_MIN - 1,
                                   INT64_MIN, INT64_MAX};
    static const size_t lens[] = {0, 1, 31, 32, 255, 256, 65535, 65536, 7, 12};
    static const uint64_t id_pool[] = {0, 5, 0x7f, 0x80, 0xff, 0x100, 0xffff, 0x10000, 0xfffff};
    char *text = malloc(65537);
    assert_non_null(text);
    memset(text, 'y', 65536);
    ads_msgpack_order *memo;
    assert_int_equal(ads_msgpack_order_new(&memo, NULL), 0);
    ads_buf want = ADS_BUF_INIT, got = ADS_BUF_INIT, want_ids = ADS_BUF_INIT;
    ads_error err;
    uint32_t x = 88172645u;
#define NEXT() (x ^= x << 13, x ^= x >> 17, x ^= x << 5, x)
    for (int round = 0; round < 300; round++) {
        size_t n = 1 + NEXT() % 40;
        char names_text[40][64];
        ads_str names[40];
        ads_value values[40];
        uint64_t ids[40];
        ads_value list_items[1] = {ads_int(1)};
        const ads_expr *exprs[40] = {NULL};
        bool any_expr = false;
        for (size_t i = 0; i < n; i++) {
            int pad = (int)(NEXT() % 45);
            snprintf(names_text[i], sizeof names_text[i], "A%zu_%.*s", i, pad,
                     "zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz");
            names[i] = (ads_str){names_text[i], strlen(names_text[i])};
            ids[i] = (uint64_t)i < 4 ? id_pool[(i * 2 + (size_t)round) % 9] : 0x200 + i * 7;
            switch (NEXT() % 8) {
            case 6: {
                uint32_t r = NEXT() % 3;
                values[i] = r == 0   ? ads_abstime(1.7e9 + (double)(NEXT() % 1000), -18000)
                            : r == 1 ? ads_reltime(-3.5)
                                     : ads_ident(ads_luid(NEXT()));
                break;
            }
            case 0:
                values[i] = ads_undefined();
                break;
            case 1:
                values[i] = ads_bool(NEXT() % 2);
                break;
            case 2:
            case 3:
                values[i] = ads_int(ints[NEXT() % (sizeof ints / sizeof ints[0])]);
                break;
            case 4: {
                static const double reals[] = {0.5, -0.0, 1e300, -2.25};
                uint32_t r = NEXT() % 6;
                values[i] = ads_real(r < 4 ? reals[r] : r == 4 ? NAN : INFINITY);
                break;
            }
            case 5:
                values[i] = ads_string(text, lens[NEXT() % (sizeof lens / sizeof lens[0])]);
                break;
            default: /* not a plain value: the long way */
                values[i] = NEXT() % 8 == 0 ? ads_list(list_items, 1) : ads_string("s", 1);
                if (NEXT() % 4 == 0) {
                    static const char *const texts[] = {"Memory * 2", "- 3", "{ 1, x }",
                                                        "[ a = 1 ]", "- 2.5"};
                    const char *t = texts[NEXT() % 5];
                    assert_int_equal(ads_expr_parse(&exprs[i], arena, t, strlen(t), NULL), 0);
                    any_expr = true;
                }
                break;
            }
        }
        ads_record_builder *rb;
        assert_int_equal(ads_record_builder_new(&rb, arena, NULL), 0);
        for (size_t i = 0; i < n; i++)
            assert_int_equal(
                exprs[i] ? ads_record_builder_add(rb, names[i].p, names[i].len, exprs[i], NULL)
                         : ads_record_builder_add_value(rb, names[i].p, names[i].len, &values[i],
                                                        NULL),
                0);
        const ads_record *rec = ads_record_builder_finish(rb);
        ads_buf_clear(&want);
        assert_int_equal(ads_msgpack_encode_record(&want, rec, &err), 0);
        /* keyed by names: the second encoding finds the names in the memo */
        for (int pass = 0; pass < 2; pass++) {
            ads_buf_clear(&got);
            assert_int_equal(ads_msgpack_encode_row(&got, rec, memo, &err), 0);
            if (got.len != want.len || memcmp(got.p, want.p, got.len) != 0)
                fail_msg("round %d, pass %d: the row with names differs", round, pass);
        }
        /* keyed by ids: the memo's slot told the ids in row order */
        ads_str in_row[40];
        bool with_ids = true; /* (ids of an earlier round of these names, replaced below) */
        assert_int_equal(ads_msgpack__memo_shape(memo, (unsigned)n, in_row, 40, &with_ids), n);
        id_table tbl = {names, ids, n};
        uint64_t row_ids[40];
        for (size_t k = 0; k < n; k++)
            assert_int_equal(id_from_table(&tbl, k, in_row[k].p, in_row[k].len, &row_ids[k], NULL),
                             0);
        ads_msgpack__memo_set_ids(memo, (unsigned)n, n, row_ids, 4242);
        ads_buf_clear(&want_ids);
        assert_int_equal(ads_msgpack__to_ids(&want_ids, want.p, want.len, id_from_table, &tbl, NULL),
                         0);
        uint64_t tag = 0;
        ads_buf_clear(&got);
        assert_int_equal(ads_msgpack__encode_row_ids(&got, rec, memo, &with_ids, &tag, NULL, &err), 0);
        assert_true(with_ids);
        assert_int_equal(tag, 4242);
        if (got.len != want_ids.len || memcmp(got.p, want_ids.p, got.len) != 0)
            fail_msg("round %d: the row keyed by ids differs", round);
        ads_buf_clear(&got);
        assert_int_equal(
            ads_msgpack__encode_values_ids(&got, names, values, n, memo, &with_ids, &tag, NULL, &err), 0);
        assert_true(with_ids);
        if (!any_expr && (got.len != want_ids.len || memcmp(got.p, want_ids.p, got.len) != 0))
            fail_msg("round %d: the values keyed by ids differ", round);
        /* the public entry points never key by ids */
        ads_buf_clear(&got);
        assert_int_equal(ads_msgpack_encode_row(&got, rec, memo, &err), 0);
        if (got.len != want.len || memcmp(got.p, want.p, got.len) != 0)
            fail_msg("round %d: ads_msgpack_encode_row keyed a row by ids", round);
        ads_arena_reset(arena);
    }
#undef NEXT
    free(text);
    ads_msgpack_order_free(memo);
    ads_buf_free(&want);
    ads_buf_free(&got);
    ads_buf_free(&want_ids);
}

/* The memo keeps a name list per attribute count modulo 8: records of 24
 * name lists (counts 1..12, so 1 and 9, 2 and 10... share a place; two
 * lists of each count from 3 on, one with a name respelled) in no order,
 * each encoded as without the memo. */
static void encode__name_order_memo_of_many_shapes_gives_the_same_bytes(void **state)
{
    (void)state;
    static const char *const names[] = {"Zeta", "alpha", "Memory", "gpus", "Rank", "b",
                                        "Cpus", "Disk", "x_1", "Name", "OpSys", "State"};
    ads_msgpack_order *memo;
    ads_buf with = ADS_BUF_INIT, without = ADS_BUF_INIT;
    ads_error err;
    assert_int_equal(ads_msgpack_order_new(&memo, &err), 0);
    rng = 7;
    for (int i = 0; i < 2000; i++) {
        size_t n = 1 + below(12);
        bool respelled = below(2) == 1;
        ads_record_builder *b;
        assert_int_equal(ads_record_builder_new(&b, arena, NULL), 0);
        for (size_t k = 0; k < n; k++) {
            ads_value v = ads_int((int64_t)(k * 31 + (size_t)i));
            const char *nm = respelled && k == 2 ? "MEMORY" : names[k];
            assert_int_equal(ads_record_builder_add_value(b, nm, strlen(nm), &v, NULL), 0);
        }
        const ads_record *r = ads_record_builder_finish(b);
        ads_buf_clear(&with);
        ads_buf_clear(&without);
        if (ads_msgpack_encode_row(&with, r, memo, &err) ||
            ads_msgpack_encode_record(&without, r, &err))
            fail_msg("row %d: %s", i, err.message);
        assert_int_equal(with.len, without.len);
        assert_memory_equal(with.p, without.p, with.len);
        if (i % 64 == 0)
            ads_arena_reset(arena);
    }
    ads_msgpack_order_free(memo);
    ads_buf_free(&with);
    ads_buf_free(&without);
}

/* ---- rows with attribute ids (a store's rows) ---- */

/* A name table over a fixed list (id = index), as a store's would be. */
typedef struct tnames {
    ads_msgpack_names base;
    const char *const *names;
    size_t n;
    int asked; /* how many names it was asked for */
} tnames;

static int tn_name(const ads_msgpack_names *self, uint64_t id, ads_str *out, ads_error *err)
{
    tnames *t = (tnames *)self;
    t->asked++;
    if (id >= t->n)
        return ads_error_set(err, ADS_ECORRUPT, "no id %llu", (unsigned long long)id);
    out->p = t->names[id];
    out->len = strlen(t->names[id]);
    return 0;
}

/* ids by exact name; a name not listed has none (1) */
static int tn_id(void *ctx, size_t i, const char *name, size_t len, uint64_t *id, ads_error *err)
{
    (void)i;
    (void)err;
    tnames *t = ctx;
    for (size_t j = 0; j < t->n; j++)
        if (strlen(t->names[j]) == len && memcmp(t->names[j], name, len) == 0) {
            *id = j;
            return 0;
        }
    return 1;
}

static const char *const doc_names[] = {"Owner", "memory", "Req"};

/* The documented example (docs/formats.md, "Rows with attribute ids"): the
 * row of the 52-byte example with ids 0 Owner, 1 memory, 2 Req. */
#define DOC_ROW "92 c7 05 10 01 01 01 0b 17 83 a6 6d 65 6d 6f 72 79 cd 08 00 a5 4f 77 6e 65 72 " \
                "a5 61 6c 69 63 65 a3 52 65 71 c7 0d 06 6d 65 6d 6f 72 79 20 3e 20 31 30 32 34"
#define DOC_IDS "92 c7 05 10 02 01 01 05 0c 83 01 cd 08 00 00 a5 61 6c 69 63 65 02 c7 0d 06 " \
                "6d 65 6d 6f 72 79 20 3e 20 31 30 32 34"

static void ids__rows_name_attributes_by_ids_in_name_order(void **state)
{
    (void)state;
    tnames t = {{tn_name}, doc_names, 3, 0};
    const ads_record *r;
    ads_error err;
    const char *text = "[ Owner = \"alice\"; memory = 2048; Req = memory > 1024 ]";
    assert_int_equal(ads_record_parse(&r, arena, text, strlen(text), &err), 0);
    ads_buf row = ADS_BUF_INIT, ids = ADS_BUF_INIT, back = ADS_BUF_INIT;
    assert_int_equal(ads_msgpack_encode_record(&row, r, &err), 0);
    assert_bytes(&row, DOC_ROW);
    assert_int_equal(ads_msgpack__to_ids(&ids, row.p, row.len, tn_id, &t, &err), 0);
    assert_bytes(&ids, DOC_IDS);
    assert_true(ads_msgpack__row_has_ids(ids.p, ids.len));
    assert_false(ads_msgpack__row_has_ids(row.p, row.len));
    /* checked, decoded, viewed and turned back through the table */
    assert_int_equal(ads_msgpack__check_row(ids.p, ids.len, &t.base, &err), 0);
    const ads_record *d;
    assert_int_equal(ads_msgpack__decode_row(&d, arena, ids.p, ids.len, &t.base,
                                             ADS_MSGPACK_COPY, &err), 0);
    assert_int_equal(ads_record_size(d), 3);
    assert_string_equal(ads_record_name(d, 0).p, "memory");
    assert_string_equal(ads_record_name(d, 1).p, "Owner");
    assert_ptr_not_equal(ads_record_name(d, 1).p, doc_names[0]); /* copied */
    ads_msgpack_view mv;
    assert_int_equal(ads_msgpack__view_open(&mv, ids.p, ids.len, &t.base, arena, &err), 0);
    ads_value v;
    const ads_expr *e;
    assert_int_equal(ads_msgpack_view_lookup(&v, &e, &mv, "OWNER", 5, &err), 1);
    assert_null(e);
    assert_int_equal(v.type, ADS_STRING);
    assert_memory_equal(v.u.s.p, "alice", 5);
    assert_int_equal(ads_msgpack_view_lookup(&v, &e, &mv, "Missing", 7, &err), 0);
    ads_view view = ads_msgpack_view_get(&mv, NULL);
    ads_value got;
    assert_int_equal(ads_expr_eval(&got, parse("Req && memory == 2048 && Owner == \"alice\""),
                                   &view, arena), 0);
    assert_int_equal(got.type, ADS_BOOLEAN);
    assert_true(got.u.b);
    ads_str name;
    assert_int_equal(ads_msgpack_view_name(&name, &mv, 2, &err), 0);
    assert_int_equal(name.len, 3);
    assert_memory_equal(name.p, "Req", 3);
    assert_int_equal(ads_msgpack_view_attr(&name, &v, &e, &mv, 0, &err), 0);
    assert_int_equal(v.type, ADS_INTEGER);
    assert_int_equal(v.u.i, 2048);
    assert_int_equal(ads_msgpack__to_names(&back, ids.p, ids.len, &t.base, &err), 0);
    assert_bytes(&back, DOC_ROW);
    /* a row with names goes through to_names as it is */
    ads_buf_clear(&back);
    assert_int_equal(ads_msgpack__to_names(&back, row.p, row.len, &t.base, &err), 0);
    assert_bytes(&back, DOC_ROW);
    /* a name without an id leaves the row with names */
    tnames two = {{tn_name}, doc_names, 2, 0};
    ads_buf_clear(&back);
    assert_int_equal(ads_msgpack__to_ids(&back, row.p, row.len, tn_id, &two, &err), 1);
    assert_bytes(&back, DOC_ROW);
    ads_buf_free(&row);
    ads_buf_free(&ids);
    ads_buf_free(&back);
}

static void ids__wide_ids_nested_records_and_the_empty_row(void **state)
{
    (void)state;
    /* 300 names: ids 127, 128 and 299 take 1, 2 and 3 bytes */
    static char bufs[300][8];
    static const char *many[300];
    for (int i = 0; i < 300; i++) {
        snprintf(bufs[i], sizeof bufs[i], "n%03d", i);
        many[i] = bufs[i];
    }
    tnames t = {{tn_name}, many, 300, 0};
    const ads_record *r;
    ads_error err;
    const char *text = "[ n299 = [ b = 1; A = { 2 } ]; n127 = true; n128 = \"x\" ]";
    assert_int_equal(ads_record_parse(&r, arena, text, strlen(text), &err), 0);
    ads_buf row = ADS_BUF_INIT, ids = ADS_BUF_INIT;
    assert_int_equal(ads_msgpack_encode_record(&row, r, &err), 0);
    assert_int_equal(ads_msgpack__to_ids(&ids, row.p, row.len, tn_id, &t, &err), 0);
    /* the nested record keeps its names (only a row's own keys are ids) */
    assert_bytes(&ids, "92 c7 05 10 02 01 01 03 07 83 7f c3 cc 80 a1 78 cd 01 2b "
                       "82 a1 41 91 02 a1 62 01");
    assert_int_equal(ads_msgpack__check_row(ids.p, ids.len, &t.base, &err), 0);
    const ads_record *d;
    assert_int_equal(ads_msgpack__decode_row(&d, arena, ids.p, ids.len, &t.base, 0, &err), 0);
    ads_buf b = ADS_BUF_INIT;
    ads_record_unparse(&b, d);
    assert_string_equal(ads_buf_cstr(&b),
                        "[ n127 = true; n128 = \"x\"; n299 = [ A = { 2 }; b = 1 ] ]");
    /* an empty row */
    ads_buf_clear(&row);
    ads_buf_clear(&ids);
    assert_int_equal(ads_record_parse(&r, arena, "[ ]", 3, &err), 0);
    assert_int_equal(ads_msgpack_encode_record(&row, r, &err), 0);
    assert_int_equal(ads_msgpack__to_ids(&ids, row.p, row.len, tn_id, &t, &err), 0);
    assert_bytes(&ids, "92 d5 10 02 01 80");
    assert_int_equal(ads_msgpack__check_row(ids.p, ids.len, &t.base, &err), 0);
    ads_buf_free(&b);
    ads_buf_free(&row);
    ads_buf_free(&ids);
}

/* ids[i] for the row's i-th name, whatever it is */
static int fixed_id(void *ctx, size_t i, const char *name, size_t len, uint64_t *id,
                    ads_error *err)
{
    (void)name;
    (void)len;
    (void)err;
    *id = ((const uint64_t *)ctx)[i];
    return 0;
}

static void ids__every_width_of_id_is_written_in_its_canonical_form(void **state)
{
    (void)state;
    const ads_record *r;
    ads_error err;
    const char *text = "[ a = 1; b = 2; c = 3; d = 4 ]";
    assert_int_equal(ads_record_parse(&r, arena, text, strlen(text), &err), 0);
    ads_buf row = ADS_BUF_INIT, ids = ADS_BUF_INIT;
    assert_int_equal(ads_msgpack_encode_record(&row, r, &err), 0);
    /* a positive fixint, uint8, uint16 and uint32 id */
    uint64_t four[] = {5, 200, 40000, 70000};
    assert_int_equal(ads_msgpack__to_ids(&ids, row.p, row.len, fixed_id, four, &err), 0);
    assert_bytes(&ids, "92 c7 06 10 02 01 01 03 06 0a 84 05 01 cc c8 02 cd 9c 40 03 "
                       "ce 00 01 11 70 04");
    assert_int_equal(ids.p[ids.len], '\0');
    ads_buf_free(&row);
    ads_buf_free(&ids);
}

static void ids_refused(const char *hex, int code, const char *msg)
{
    tnames t = {{tn_name}, doc_names, 3, 0};
    unsigned char buf[256];
    size_t n = bytes_of(buf, sizeof buf, hex);
    ads_error err;
    int rc = ads_msgpack__check_row(buf, n, &t.base, &err);
    if (rc != code || !strstr(err.message, msg))
        fail_msg("check of %s: want %d '%s', got %d '%s'", hex, code, msg, rc,
                 rc ? err.message : "");
    const ads_record *r;
    rc = ads_msgpack__decode_row(&r, arena, buf, n, &t.base, 0, &err);
    if (rc != code || !strstr(err.message, msg))
        fail_msg("decode of %s: want %d '%s', got %d '%s'", hex, code, msg, rc,
                 rc ? err.message : "");
}

static void ids__bad_rows_are_refused_saying_what(void **state)
{
    (void)state;
    /* an id the table does not hold, in the check and in a lookup */
    ids_refused("92 c7 03 10 02 01 01 81 07 01", ADS_ECORRUPT,
                "attribute id 7 is not in the store's name table at byte 8");
    /* ids in an order their names do not have (Owner before memory) */
    ids_refused("92 d6 10 02 01 01 03 82 00 01 01 02", ADS_ECORRUPT,
                "attribute 'memory' is out of order or repeats a name (ignoring case) at byte 10");
    /* the same id twice */
    ids_refused("92 d6 10 02 01 01 03 82 00 01 00 02", ADS_ECORRUPT,
                "attribute 'Owner' is out of order or repeats a name");
    /* an id not in its shortest form, and a key that is no id */
    ids_refused("92 c7 03 10 02 01 01 81 cc 01 01", ADS_ECORRUPT,
                "attribute id 1 not in its shortest form at byte 8");
    ids_refused("92 c7 03 10 02 01 01 81 a1 41 01", ADS_ECORRUPT,
                "expected an attribute id, found byte 0xa1 at byte 8");
    /* read without a name table */
    unsigned char buf[64];
    size_t n = bytes_of(buf, sizeof buf, DOC_IDS);
    ads_error err;
    ads_msgpack_view mv;
    assert_int_equal(ads_msgpack_view_init(&mv, buf, n, arena, &err), ADS_EVERSION);
    assert_non_null(strstr(err.message, "is read through its store's name table"));
    const ads_record *r;
    assert_int_equal(ads_msgpack_decode_record(&r, arena, buf, n, 0, &err), ADS_EVERSION);
    /* a lookup meeting an unknown id fails; evaluation makes it an error */
    tnames t = {{tn_name}, doc_names, 1, 0}; /* knows Owner only */
    assert_int_equal(ads_msgpack__view_open(&mv, buf, n, &t.base, arena, &err), 0);
    ads_value v;
    const ads_expr *e;
    assert_int_equal(ads_msgpack_view_lookup(&v, &e, &mv, "Owner", 5, &err), 1);
    assert_int_equal(ads_msgpack_view_lookup(&v, &e, &mv, "Req", 3, &err), ADS_ECORRUPT);
    assert_non_null(strstr(err.message, "attribute id 2 is not in the store's name table"));
}

/* Random rows through ids and back: the same record, the same bytes. */
static void ids__random_rows_round_trip(void **state)
{
    (void)state;
    static const char *const pool[] = {"a", "B", "cc", "Dd", "e_1", "F2", "g", "h", "Memory",
                                       "Name", "x", "Y", "zz", "_t", "Q"};
    tnames t = {{tn_name}, pool, sizeof pool / sizeof pool[0], 0};
    unsigned seed = 42;
    for (int round = 0; round < 200; round++) {
        ads_arena_reset(arena);
        char text[1024];
        size_t o = (size_t)snprintf(text, sizeof text, "[ ");
        for (size_t j = 0; j < t.n; j++) {
            if (rand_r(&seed) % 3)
                continue;
            int val = rand_r(&seed) % 1000;
            o += (size_t)snprintf(text + o, sizeof text - o, "%s = %s%d; ", pool[j],
                                  val % 2 ? "x + " : "", val);
        }
        snprintf(text + o, sizeof text - o, "]");
        const ads_record *r, *d;
        ads_error err;
        assert_int_equal(ads_record_parse(&r, arena, text, strlen(text), &err), 0);
        ads_buf row = ADS_BUF_INIT, ids = ADS_BUF_INIT, back = ADS_BUF_INIT;
        assert_int_equal(ads_msgpack_encode_record(&row, r, &err), 0);
        assert_int_equal(ads_msgpack__to_ids(&ids, row.p, row.len, tn_id, &t, &err), 0);
        assert_true(ids.len <= row.len);
        assert_int_equal(ads_msgpack__check_row(ids.p, ids.len, &t.base, &err), 0);
        assert_int_equal(ads_msgpack__to_names(&back, ids.p, ids.len, &t.base, &err), 0);
        assert_int_equal(back.len, row.len);
        assert_memory_equal(back.p, row.p, row.len);
        assert_int_equal(ads_msgpack__decode_row(&d, arena, ids.p, ids.len, &t.base, 0, &err),
                         0);
        /* the same record as the row with names decodes to */
        ads_buf a = ADS_BUF_INIT, b = ADS_BUF_INIT;
        const ads_record *dr;
        assert_int_equal(ads_msgpack_decode_record(&dr, arena, row.p, row.len, 0, &err), 0);
        ads_record_unparse(&a, dr);
        ads_record_unparse(&b, d);
        assert_string_equal(ads_buf_cstr(&a), ads_buf_cstr(&b));
        ads_buf_free(&a);
        ads_buf_free(&b);
        ads_buf_free(&row);
        ads_buf_free(&ids);
        ads_buf_free(&back);
    }
}

int main(void)
{
    setenv("TZ", "UTC", 1);
    tzset();
    setlocale(LC_ALL, "C");
    const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
        T(expr__a_chain_of_300000_operands_round_trips),
        T(encode__scalars_are_plain_msgpack_in_smallest_form),
        T(encode__strings_take_the_smallest_header),
        T(encode__classad_values_use_extension_types),
        T(encode__lists_are_arrays_and_records_sorted_maps),
        T(encode__rows_have_a_versioned_index_header),
        T(encode__index_widens_when_offsets_pass_255),
        T(encode__attribute_order_and_spelling_of_input_do_not_matter),
        T(encode__same_value_built_differently_gives_same_bytes),
        T(encode__refuses_records_with_names_equal_ignoring_case),
        T(encode__writer_gives_the_bytes_of_msgpack_c_packer),
        T(encode__headers_of_every_size_match_msgpack_c),
        T(encode__name_order_memo_gives_the_same_bytes),
        T(encode__name_order_memo_sees_a_one_byte_difference_anywhere),
        T(encode__name_order_memo_of_many_shapes_gives_the_same_bytes),
        T(encode__offsets_of_every_width_with_the_memo_give_the_same_bytes),
        T(encode__plain_records_through_the_memo_give_the_long_way_bytes),
        T(roundtrip__random_values_through_bytes),
        T(roundtrip__random_values_through_text),
        T(roundtrip__random_rows_through_bytes_and_text),
        T(encode__values_in_arrays_give_the_record_s_row),
        T(decode__copy_flag_detaches_the_result_from_the_bytes),
        T(decode__value_api_refuses_a_bare_expression),
        T(decode__refuses_non_canonical_forms_saying_where),
        T(decode__refuses_nesting_past_the_limit),
        T(check__refuses_bad_rows_saying_what_and_where),
        T(check__usual_row_headers_are_refused_as_the_others),
        T(view__p3_constraint_over_a_machine_row),
        T(view__strings_point_into_the_row),
        T(view__attr_gives_each_attribute_as_a_lookup_does),
        T(view__lookups_read_short_forms_as_the_decoder_does),
        T(view__same_except_compares_the_attributes_left),
        T(view__decoded_attributes_are_kept_in_the_view_arena),
        T(view__nested_scopes_and_parent_views),
        T(view__random_rows_evaluate_as_in_memory),
        T(corrupt__every_truncation_and_byte_flip_is_safe),
        T(ids__rows_name_attributes_by_ids_in_name_order),
        T(ids__wide_ids_nested_records_and_the_empty_row),
        T(ids__every_width_of_id_is_written_in_its_canonical_form),
        T(ids__bad_rows_are_refused_saying_what),
        T(ids__random_rows_round_trip),
#undef T
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
