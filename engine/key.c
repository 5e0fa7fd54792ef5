/*
 * engine/key.c: record keys. A record key is be32(type id) followed by the
 * key attribute values, each encoded so that
 *   - two values that `===` calls equal encode to the same bytes ("ABC" and
 *     "abc"; 123, 123.0 and, as `===` says, true and 1);
 *   - byte order is a sensible value order (numbers by value, strings by
 *     their folded bytes, lists element by element, shorter first), so a
 *     type's records sit together in key order and a range of keys is one
 *     LMDB range;
 *   - each value is self-delimiting, so no key is a prefix of another key
 *     of the same type.
 * Keys longer than ADS_KEY_INLINE_MAX are stored in a long form: their first
 * ADS_KEY_PREFIX bytes, a 128-bit XXH3 hash of the whole key and a collision
 * counter; the row envelope then keeps the whole key, compared on lookup.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "engine/engine_int.h"

static unsigned char fold(unsigned char c)
{
    return (c >= 'A' && c <= 'Z') ? (unsigned char)(c + 32) : c;
}

void ads_key__typeid(ads_buf *b, uint32_t id)
{
    unsigned char p[4] = {(unsigned char)(id >> 24), (unsigned char)(id >> 16),
                          (unsigned char)(id >> 8), (unsigned char)id};
    ads_buf_add(b, p, 4);
}

uint32_t ads_key__get_typeid(const unsigned char *key)
{
    return (uint32_t)key[0] << 24 | (uint32_t)key[1] << 16 | (uint32_t)key[2] << 8 | key[3];
}

/* Written out, not as loops, so that the compiler makes each one store or
 * load (and a byte swap): every history row's key is checked through them. */
static void put_be64(unsigned char *p, uint64_t v)
{
    p[0] = (unsigned char)(v >> 56);
    p[1] = (unsigned char)(v >> 48);
    p[2] = (unsigned char)(v >> 40);
    p[3] = (unsigned char)(v >> 32);
    p[4] = (unsigned char)(v >> 24);
    p[5] = (unsigned char)(v >> 16);
    p[6] = (unsigned char)(v >> 8);
    p[7] = (unsigned char)v;
}

static uint64_t get_be64(const unsigned char *p)
{
    return (uint64_t)p[0] << 56 | (uint64_t)p[1] << 48 | (uint64_t)p[2] << 40 |
           (uint64_t)p[3] << 32 | (uint64_t)p[4] << 24 | (uint64_t)p[5] << 16 |
           (uint64_t)p[6] << 8 | (uint64_t)p[7];
}

/* The bits of d that sort as d does, big-endian in keys. */
static uint64_t sortable_bits(double d)
{
    uint64_t u;
    if (d == 0)
        d = 0.0; /* -0.0 sorts and compares as 0.0 */
    memcpy(&u, &d, 8);
    return (u >> 63) ? ~u : u | (UINT64_C(1) << 63);
}

void ads_key__sortable_double(unsigned char out[8], double d)
{
    put_be64(out, sortable_bits(d));
}

double ads_key__double_of_sortable(const unsigned char in[8])
{
    uint64_t u = get_be64(in);
    u = (u >> 63) ? u & ~(UINT64_C(1) << 63) : ~u;
    double d;
    memcpy(&d, &u, 8);
    return d;
}

/* Bytes with 0x00 escaped as 00 FF, ended by 00 00: order-preserving and
 * self-delimiting. Strings are folded to lower case first. Every record's
 * key goes through here, so eight bytes go at a time while none is 00 (the
 * word tests of skip_escaped below), the last few too, padded; folding sets
 * bit 5 of the bytes in 'A'..'Z', which is clear in them. */
static void escaped(ads_buf *b, const char *p, size_t n, bool folded)
{
    const uint64_t ones = 0x0101010101010101u, high = 0x8080808080808080u;
    unsigned char part[256]; /* appended a part at a time, not a byte at a time */
    size_t k = 0, i = 0;
    while (i < n) {
        if (k > sizeof part - 16) {
            ads_buf_add(b, part, k);
            k = 0;
        }
        /* the last few padded with 0x80, neither 00 nor a letter */
        size_t r = n - i;
        uint64_t x = high;
        if (r >= 8) {
            r = 8;
            memcpy(&x, p + i, 8);
        } else {
            memcpy(&x, p + i, r);
        }
        uint64_t t = x & ~high, ascii = ~x & high;
        if (!(~(t + 0x7f * ones) & ascii)) {
            if (folded)
                x |= ((t + 0x3f * ones) & ~(t + 0x25 * ones) & ascii) >> 2;
            memcpy(part + k, &x, 8); /* r of them count */
            k += r;
            i += r;
            continue;
        }
        /* a 00 among them: byte by byte through it */
        for (;;) {
            unsigned char c = (unsigned char)p[i++];
            part[k++] = folded ? fold(c) : c;
            if (c == 0) {
                part[k++] = 0xff;
                break;
            }
        }
    }
    if (k > sizeof part - 2) {
        ads_buf_add(b, part, k);
        k = 0;
    }
    part[k++] = 0;
    part[k++] = 0;
    ads_buf_add(b, part, k);
}

/*
 * A number: the sortable bits of its double value, then (for integers a
 * double cannot hold exactly) the difference between the integer and that
 * double as a sortable 64-bit integer, so 2^53 and 2^53 + 1 stay apart while
 * 123 and 123.0 meet. `===` compares an integer with a real as doubles; keys
 * follow it exactly for integers within +-2^53 (docs/storage.md).
 */
static void number(ads_buf *b, double d, __int128 exact, bool is_int)
{
    unsigned char p[17];
    p[0] = KEY_NUMBER;
    ads_key__sortable_double(p + 1, d);
    int64_t residual = 0;
    if (is_int) {
        /* d is exact below 2^63 in magnitude; at 2^63 take the difference in 128 bits */
        __int128 rounded = (__int128)d;
        residual = (int64_t)(exact - rounded);
    }
    put_be64(p + 9, (uint64_t)residual ^ (UINT64_C(1) << 63));
    ads_buf_add(b, p, sizeof p);
}

typedef struct name_ref {
    ads_str name;
    const ads_value *value;
} name_ref;

static int name_ref_cmp(const void *a, const void *b)
{
    const name_ref *x = a, *y = b;
    return ads_row__name_cmp((const unsigned char *)x->name.p, x->name.len,
                             (const unsigned char *)y->name.p, y->name.len);
}

static int encode(ads_buf *b, const ads_value *v, const char *what, int depth, ads_error *err);

static int encode_record(ads_buf *b, const ads_record *r, const char *what, int depth,
                         ads_error *err)
{
    size_t n = ads_record_size(r);
    name_ref small[16], *refs = small;
    ads_value vsmall[16], *vals = vsmall;
    ads_arena *tmp = NULL;
    int rc = 0;
    if (n > 16) {
        refs = malloc(n * sizeof *refs);
        vals = malloc(n * sizeof *vals);
        if (!refs || !vals) {
            rc = ads_error_set(err, ADS_ENOMEM, "encoding a key: out of memory");
            goto cleanup;
        }
    }
    for (size_t i = 0; i < n; i++) {
        const ads_value *lit = ads_expr_literal_value(ads_record_expr(r, i));
        if (!lit) {
            if (!tmp && !(tmp = ads_arena_new())) {
                rc = ads_error_set(err, ADS_ENOMEM, "encoding a key: out of memory");
                goto cleanup;
            }
            ads_view view = ads_record_view(r, NULL);
            if (ads_expr_eval(&vals[i], ads_record_expr(r, i), &view, tmp)) {
                rc = ads_error_set(err, ADS_ENOMEM, "encoding a key: out of memory");
                goto cleanup;
            }
            lit = &vals[i];
        }
        refs[i].name = ads_record_name(r, i);
        refs[i].value = lit;
    }
    qsort(refs, n, sizeof *refs, name_ref_cmp);
    ads_buf_addc(b, KEY_RECORD);
    for (size_t i = 0; i < n && !rc; i++) {
        escaped(b, refs[i].name.p, refs[i].name.len, true);
        rc = encode(b, refs[i].value, what, depth + 1, err);
    }
    ads_buf_addc(b, KEY_END);
cleanup:
    if (refs != small)
        free(refs);
    if (vals != vsmall)
        free(vals);
    ads_arena_free(tmp);
    return rc;
}

static int encode(ads_buf *b, const ads_value *v, const char *what, int depth, ads_error *err)
{
    if (depth > ADS_MAX_DEPTH)
        return ads_error_set(err, ADS_ELIMIT, "key attribute %s is nested more than %d deep",
                             what, ADS_MAX_DEPTH);
    unsigned char p[17];
    switch (v->type) {
    case ADS_UNDEFINED:
        return ads_error_set(err, ADS_EINVAL, "key attribute %s is undefined", what);
    case ADS_ERROR:
        return ads_error_set(err, ADS_EINVAL, "key attribute %s is error", what);
    case ADS_BOOLEAN:
        number(b, v->u.b ? 1.0 : 0.0, v->u.b, true);
        return 0;
    case ADS_INTEGER:
        number(b, (double)v->u.i, v->u.i, true);
        return 0;
    case ADS_REAL:
        if (isnan(v->u.r))
            return ads_error_set(err, ADS_EINVAL, "key attribute %s is NaN, which equals nothing",
                                 what);
        number(b, v->u.r, 0, false);
        return 0;
    case ADS_STRING:
        ads_buf_addc(b, KEY_STRING);
        escaped(b, v->u.s.p, v->u.s.len, true);
        return 0;
    case ADS_ABSTIME:
    case ADS_RELTIME: {
        double d = v->type == ADS_ABSTIME ? v->u.abs.secs : v->u.rel;
        if (isnan(d))
            return ads_error_set(err, ADS_EINVAL, "key attribute %s is a NaN time", what);
        p[0] = v->type == ADS_ABSTIME ? KEY_ABSTIME : KEY_RELTIME;
        ads_key__sortable_double(p + 1, d);
        ads_buf_add(b, p, 9);
        return 0;
    }
    case ADS_IDENT:
        p[0] = KEY_IDENT;
        put_be64(p + 1, v->u.id.hi);
        put_be64(p + 9, v->u.id.lo);
        ads_buf_add(b, p, 17);
        return 0;
    case ADS_BLOB:
        ads_buf_addc(b, KEY_BLOB);
        escaped(b, v->u.blob->bytes.p, v->u.blob->bytes.len, false);
        if (v->u.blob->meta)
            return encode_record(b, v->u.blob->meta, what, depth, err);
        ads_buf_addc(b, KEY_END);
        return 0;
    case ADS_LIST: {
        ads_buf_addc(b, KEY_LIST);
        for (size_t i = 0; i < v->u.list.n; i++) {
            int rc = encode(b, &v->u.list.items[i], what, depth + 1, err);
            if (rc)
                return rc;
        }
        ads_buf_addc(b, KEY_END);
        return 0;
    }
    case ADS_RECORD:
        return encode_record(b, v->u.rec, what, depth, err);
    }
    return ads_error_set(err, ADS_EINVAL, "key attribute %s has an unknown type", what);
}

int ads_key__value(ads_buf *b, const ads_value *v, const char *what, ads_error *err)
{
    size_t start = b->len;
    int rc = encode(b, v, what, 0, err);
    if (!rc && b->failed)
        rc = ads_error_set(err, ADS_ENOMEM, "encoding a key: out of memory");
    if (rc)
        b->len = start;
    return rc;
}

size_t ads_key__stored(unsigned char *out, const unsigned char *full, size_t len, unsigned c)
{
    if (len <= ADS_KEY_INLINE_MAX) {
        memcpy(out, full, len);
        return len;
    }
    XXH128_hash_t h = XXH3_128bits(full, len);
    memcpy(out, full, ADS_KEY_PREFIX);
    put_be64(out + ADS_KEY_PREFIX, h.high64);
    put_be64(out + ADS_KEY_PREFIX + 8, h.low64);
    out[ADS_KEY_PREFIX + 16] = (unsigned char)c;
    return ADS_KEY_LONG_LEN;
}

/* ---- decoding (for messages, notifications and verify) ---- */

static long unescape(ads_str *out, const unsigned char *p, const unsigned char *end,
                     ads_arena *a)
{
    size_t n = 0;
    const unsigned char *q = p;
    while (q < end) {
        if (*q == 0) {
            if (q + 1 >= end)
                return ADS_ECORRUPT;
            if (q[1] == 0)
                break;
            if (q[1] != 0xff)
                return ADS_ECORRUPT;
            q += 2;
        } else {
            q++;
        }
        n++;
    }
    if (q >= end)
        return ADS_ECORRUPT;
    char *s = ads_arena_alloc(a, n + 1);
    if (!s)
        return ADS_ENOMEM;
    size_t j = 0;
    for (const unsigned char *r = p; r < q; j++) {
        if (*r == 0) {
            s[j] = 0;
            r += 2;
        } else {
            s[j] = (char)*r++;
        }
    }
    s[n] = 0;
    out->p = s;
    out->len = n;
    return (long)(q + 2 - p);
}

long ads_key__decode_value(ads_value *out, const unsigned char *p, const unsigned char *end,
                           ads_arena *a, int depth)
{
    if (p >= end || depth > ADS_MAX_DEPTH)
        return ADS_ECORRUPT;
    const unsigned char *q = p + 1;
    switch (*p) {
    case KEY_NUMBER: {
        if (end - q < 16)
            return ADS_ECORRUPT;
        double d = ads_key__double_of_sortable(q);
        int64_t residual = (int64_t)(get_be64(q + 8) ^ (UINT64_C(1) << 63));
        if (residual == 0 && d == floor(d) && fabs(d) < 9007199254740992.0)
            *out = ads_int((int64_t)d);
        else if (residual != 0)
            *out = ads_int((int64_t)((__int128)d + residual));
        else
            *out = ads_real(d);
        return 17;
    }
    case KEY_STRING: {
        ads_str s;
        long n = unescape(&s, q, end, a);
        if (n < 0)
            return n;
        *out = ads_string(s.p, s.len);
        return 1 + n;
    }
    case KEY_ABSTIME:
    case KEY_RELTIME:
        if (end - q < 8)
            return ADS_ECORRUPT;
        *out = *p == KEY_ABSTIME ? ads_abstime(ads_key__double_of_sortable(q), 0)
                                 : ads_reltime(ads_key__double_of_sortable(q));
        return 9;
    case KEY_IDENT:
        if (end - q < 16)
            return ADS_ECORRUPT;
        *out = ads_ident((ads_id){get_be64(q), get_be64(q + 8)});
        return 17;
    case KEY_LIST: {
        size_t cap = 4, n = 0;
        ads_value *items = ads_arena_alloc(a, cap * sizeof *items);
        if (!items)
            return ADS_ENOMEM;
        while (q < end && *q != KEY_END) {
            if (n == cap) {
                ads_value *more = ads_arena_alloc(a, 2 * cap * sizeof *items);
                if (!more)
                    return ADS_ENOMEM;
                memcpy(more, items, n * sizeof *items);
                items = more;
                cap *= 2;
            }
            long m = ads_key__decode_value(&items[n++], q, end, a, depth + 1);
            if (m < 0)
                return m;
            q += m;
        }
        if (q >= end)
            return ADS_ECORRUPT;
        *out = ads_list(items, n);
        return (long)(q + 1 - p);
    }
    case KEY_BLOB:
    case KEY_RECORD: {
        /* Shown by their text only in messages; decode as a string of the
         * escaped payload for blobs, and as a record of values. */
        ads_record_builder *bld = NULL;
        if (*p == KEY_BLOB) {
            ads_str s;
            long n = unescape(&s, q, end, a);
            if (n < 0)
                return n;
            q += n;
            ads_blob *blob = ads_arena_alloc(a, sizeof *blob);
            if (!blob)
                return ADS_ENOMEM;
            blob->bytes = s;
            blob->meta = NULL;
            if (q < end && *q == KEY_RECORD) {
                ads_value m;
                long k = ads_key__decode_value(&m, q, end, a, depth + 1);
                if (k < 0)
                    return k;
                blob->meta = m.u.rec;
                q += k;
            } else if (q < end && *q == KEY_END) {
                q++;
            } else {
                return ADS_ECORRUPT;
            }
            out->type = ADS_BLOB;
            out->u.blob = blob;
            return (long)(q - p);
        }
        if (ads_record_builder_new(&bld, a, NULL))
            return ADS_ENOMEM;
        while (q < end && *q != KEY_END) {
            ads_str name;
            ads_value v;
            long n = unescape(&name, q, end, a);
            if (n < 0)
                return n;
            q += n;
            long m = ads_key__decode_value(&v, q, end, a, depth + 1);
            if (m < 0)
                return m;
            q += m;
            if (name.len == 0 || ads_record_builder_add_value(bld, name.p, name.len, &v, NULL))
                return ADS_ECORRUPT;
        }
        if (q >= end)
            return ADS_ECORRUPT;
        *out = ads_recordv(ads_record_builder_finish(bld));
        return (long)(q + 1 - p);
    }
    default:
        return ADS_ECORRUPT;
    }
}

/* ---- checking stored keys (every read) ---- */

/* Bytes of one escaped string at p (folded: no upper-case ASCII), its
 * 00 00 end included; -1 if it is not one. */
static long skip_escaped(const unsigned char *p, const unsigned char *end, bool folded)
{
    const uint64_t ones = 0x0101010101010101u, high = 0x8080808080808080u;
    const unsigned char *q = p;
    /* eight bytes at a time while none is 00 or, folded, 'A'..'Z': of the
     * bytes below 0x80 (t), t + 0x7f sets the high bit unless t is 00;
     * t + 0x3f sets it from 'A' on, t + 0x25 from past 'Z' on. No sum
     * carries into the next byte, so the lowest bit set (in a little-endian
     * load) is the first such byte, where the byte loop goes on. */
    while (end - q >= 8) {
        uint64_t x;
        memcpy(&x, q, 8);
        uint64_t t = x & ~high, ascii = ~x & high;
        uint64_t stop = ~(t + 0x7f * ones) & ascii;
        if (folded)
            stop |= (t + 0x3f * ones) & ~(t + 0x25 * ones) & ascii;
        if (stop) {
#if defined(__GNUC__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
            q += __builtin_ctzll(stop) >> 3;
#endif
            break;
        }
        q += 8;
    }
    while (q < end) {
        if (*q == 0) {
            if (q + 1 >= end)
                return -1;
            if (q[1] == 0)
                return (long)(q + 2 - p);
            if (q[1] != 0xff)
                return -1;
            q += 2;
        } else {
            if (folded && *q >= 'A' && *q <= 'Z')
                return -1;
            q++;
        }
    }
    return -1;
}

/* Bytes of one encoded key value at p; -1 if the bytes are not one. */
static long skip_value(const unsigned char *p, const unsigned char *end, int depth)
{
    if (p >= end || depth > ADS_MAX_DEPTH)
        return -1;
    const unsigned char *q = p + 1;
    long n;
    switch (*p) {
    case KEY_NUMBER:
    case KEY_IDENT:
        return end - q >= 16 ? 17 : -1;
    case KEY_ABSTIME:
    case KEY_RELTIME:
        return end - q >= 8 ? 9 : -1;
    case KEY_STRING:
        n = skip_escaped(q, end, true);
        return n < 0 ? -1 : 1 + n;
    case KEY_LIST:
        while (q < end && *q != KEY_END) {
            if ((n = skip_value(q, end, depth + 1)) < 0)
                return -1;
            q += n;
        }
        return q < end ? (long)(q + 1 - p) : -1;
    case KEY_BLOB:
        if ((n = skip_escaped(q, end, false)) < 0)
            return -1;
        q += n;
        if (q < end && *q == KEY_END)
            return (long)(q + 1 - p);
        if (q < end && *q == KEY_RECORD && (n = skip_value(q, end, depth + 1)) > 0)
            return (long)(q + n - p);
        return -1;
    case KEY_RECORD:
        while (q < end && *q != KEY_END) {
            if ((n = skip_escaped(q, end, true)) < 0)
                return -1;
            q += n;
            if ((n = skip_value(q, end, depth + 1)) < 0)
                return -1;
            q += n;
        }
        return q < end ? (long)(q + 1 - p) : -1;
    default:
        return -1;
    }
}

/* Do the bytes [p, end) hold whole key values, at least one? */
static bool values_fill(const unsigned char *p, const unsigned char *end)
{
    if (p >= end)
        return false;
    while (p < end) {
        long n = skip_value(p, end, 0);
        if (n < 0)
            return false;
        p += n;
    }
    return true;
}

int ads_key__check_stored(const unsigned char *skey, size_t slen, const unsigned char *full,
                          size_t full_len, double ts, int64_t systs)
{
    size_t rest;
    if (full) {
        /* a long key: the stored form is the whole key's prefix and hash */
        if (slen != ADS_KEY_LONG_LEN && slen != ADS_KEY_LONG_LEN + 16)
            return -1;
        if (full_len <= ADS_KEY_INLINE_MAX || memcmp(skey, full, ADS_KEY_PREFIX) != 0 ||
            !values_fill(full + 4, full + full_len))
            return -1;
        XXH128_hash_t h = XXH3_128bits(full, full_len);
        if (get_be64(skey + ADS_KEY_PREFIX) != h.high64 ||
            get_be64(skey + ADS_KEY_PREFIX + 8) != h.low64)
            return -1;
        rest = slen - ADS_KEY_LONG_LEN;
    } else if (slen > 4 && values_fill(skey + 4, skey + slen)) {
        rest = 0;
    } else if (slen > 4 + 16 && values_fill(skey + 4, skey + slen - 16)) {
        rest = 16;
    } else {
        return -1;
    }
    if (rest)
        return ads_key__check_dates(skey, slen, ts, systs);
    return 0;
}

int ads_key__check_dates(const unsigned char *skey, size_t slen, double ts, int64_t systs)
{
    /* a history key ends in the row's own (_Timestamp, __SystemTimestamp) */
    if (slen < 16)
        return -1;
    return get_be64(skey + slen - 16) == sortable_bits(ts) &&
                   get_be64(skey + slen - 8) == (uint64_t)systs
               ? 0
               : -1;
}

/* The key values of an encoded key (after its 4-byte type id) as text, for
 * messages: `{ "a", 1 }`, with "(undecodable)" where decoding stops. */
void ads_key__text(char *out, size_t cap, const unsigned char *key, size_t len, ads_arena *a)
{
    ads_buf b = ADS_BUF_INIT;
    const unsigned char *p = key + 4, *end = key + len;
    ads_buf_addc(&b, '{');
    while (p < end) {
        ads_value v;
        long n = ads_key__decode_value(&v, p, end, a, 0);
        if (n <= 0) {
            ads_buf_adds(&b, p == key + 4 ? " (undecodable)" : ", (undecodable)");
            break;
        }
        ads_buf_adds(&b, p == key + 4 ? " " : ", ");
        ads_value_unparse(&b, &v);
        p += n;
    }
    ads_buf_adds(&b, " }");
    snprintf(out, cap, "%s", b.failed ? "{ ? }" : ads_buf_cstr(&b));
    ads_buf_free(&b);
}
