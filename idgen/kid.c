/*
 * idgen/kid.c: k-ordered 64/96-bit ids (the uid scheme), bit-compatible with
 * the Erlang uid library: the local and global bit layouts, their
 * order-preserving 64-character text form, and a generator.
 *
 * The time is Erlang's {A, B, C} = {megaseconds, seconds, microseconds}, with
 * C kept to 10 bits (C >> 10, a 1024 µs tick). Unlike the original, whose
 * 14-bit sequence wraps within a tick, the generator here resets the sequence
 * each tick and waits for the next tick when one is used up, so ids from one
 * generator never repeat and never go backwards.
 */
#include <inttypes.h>
#include <string.h>

#include "idgen/idgen.h"

#define KID_A_BITS 20
#define KID_MICRO_MAX 999999u
#define KID_INTERVAL_MIN 5u
#define KID_INTERVAL_MAX 10u
/* Ticks within a second: microseconds >> 10 is at most 976. */
#define KID_TICK_FRAC_MAX (KID_MICRO_MAX >> 10)

static const char kid_alphabet[] =
    ".0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz";

/* Byte -> digit, or -1. The alphabet is in ASCII order, which is what makes
 * text order equal byte order. */
static int kid_digit(unsigned c)
{
    if (c == '.')
        return 0;
    if (c >= '0' && c <= '9')
        return (int)(c - '0') + 1;
    if (c >= 'A' && c <= 'Z')
        return (int)(c - 'A') + 11;
    if (c == '_')
        return 37;
    if (c >= 'a' && c <= 'z')
        return (int)(c - 'a') + 38;
    return -1;
}

static int check_interval(unsigned interval, ads_error *err)
{
    if (interval < KID_INTERVAL_MIN || interval > KID_INTERVAL_MAX)
        return ads_error_set(err, ADS_ERANGE,
                             "kid: neighbourhood interval %u is outside 5..10", interval);
    return 0;
}

static int check_fields(const ads_kid_fields *f, ads_error *err)
{
    if (f->a >> KID_A_BITS)
        return ads_error_set(err, ADS_ERANGE,
                             "kid: A (megaseconds) %" PRIu32 " does not fit in 20 bits", f->a);
    if (f->b > KID_MICRO_MAX)
        return ads_error_set(err, ADS_ERANGE, "kid: B (seconds) %" PRIu32 " is over 999999",
                             f->b);
    if (f->c > KID_MICRO_MAX)
        return ads_error_set(err, ADS_ERANGE,
                             "kid: C (microseconds) %" PRIu32 " is over 999999", f->c);
    if (f->seq > ADS_KID_SEQ_MAX)
        return ads_error_set(err, ADS_ERANGE,
                             "kid: seq %" PRIu32 " does not fit in 14 bits", f->seq);
    return 0;
}

/* Checks what the bytes decoded to: B and C are at most 999999 in any kid. */
static int check_unpacked(const ads_kid_fields *f, ads_error *err)
{
    if (f->b > KID_MICRO_MAX)
        return ads_error_set(err, ADS_ERANGE,
                             "kid: the bytes hold B = %" PRIu32
                             " seconds, over 999999: not a k-ordered id",
                             f->b);
    if (f->c > KID_MICRO_MAX)
        return ads_error_set(err, ADS_ERANGE,
                             "kid: the bytes hold C = %" PRIu32
                             " microseconds, over 999999: not a k-ordered id",
                             f->c);
    return 0;
}

/* Big-endian bit packing, most significant field first. Fields are at most
 * 32 bits wide and fewer than 8 bits wait in acc, so acc never overflows. */
typedef struct bit_writer {
    uint8_t *out;
    uint64_t acc;
    unsigned nbits;
} bit_writer;

static void put_bits(bit_writer *w, uint32_t value, unsigned width)
{
    w->acc = w->acc << width | (value & (uint32_t)((UINT64_C(1) << width) - 1));
    w->nbits += width;
    while (w->nbits >= 8) {
        w->nbits -= 8;
        *w->out++ = (uint8_t)(w->acc >> w->nbits);
    }
}

typedef struct bit_reader {
    const uint8_t *in;
    uint64_t acc;
    unsigned nbits;
} bit_reader;

static uint32_t get_bits(bit_reader *r, unsigned width)
{
    while (r->nbits < width) {
        r->acc = r->acc << 8 | *r->in++;
        r->nbits += 8;
    }
    r->nbits -= width;
    return (uint32_t)(r->acc >> r->nbits) & (uint32_t)((UINT64_C(1) << width) - 1);
}

int ads_kid_pack_local(uint8_t out[ADS_KID_LOCAL_BYTES], const ads_kid_fields *f,
                       ads_error *err)
{
    bit_writer w = {out, 0, 0};
    int rc;

    if (!out || !f)
        return ads_error_set(err, ADS_EINVAL, "kid: NULL argument");
    rc = check_fields(f, err);
    if (rc)
        return rc;
    put_bits(&w, f->a, 20);
    put_bits(&w, f->b, 20);
    put_bits(&w, f->c >> 10, 10);
    put_bits(&w, f->seq, 14);
    return 0;
}

int ads_kid_pack_global(uint8_t out[ADS_KID_GLOBAL_BYTES], const ads_kid_fields *f,
                        unsigned interval, ads_error *err)
{
    bit_writer w = {out, 0, 0};
    int rc;

    if (!out || !f)
        return ads_error_set(err, ADS_EINVAL, "kid: NULL argument");
    rc = check_interval(interval, err);
    if (rc)
        return rc;
    rc = check_fields(f, err);
    if (rc)
        return rc;
    put_bits(&w, f->a, 20);
    put_bits(&w, f->b >> interval, 20 - interval);
    put_bits(&w, f->node, 32);
    put_bits(&w, f->b, interval);
    put_bits(&w, f->c >> 10, 10);
    put_bits(&w, f->seq, 14);
    return 0;
}

int ads_kid_unpack_local(ads_kid_fields *out, const uint8_t in[ADS_KID_LOCAL_BYTES],
                         ads_error *err)
{
    bit_reader r = {in, 0, 0};
    ads_kid_fields f;
    int rc;

    if (!out || !in)
        return ads_error_set(err, ADS_EINVAL, "kid: NULL argument");
    f.a = get_bits(&r, 20);
    f.b = get_bits(&r, 20);
    f.c = get_bits(&r, 10) << 10;
    f.seq = get_bits(&r, 14);
    f.node = 0;
    rc = check_unpacked(&f, err);
    if (rc)
        return rc;
    *out = f;
    return 0;
}

int ads_kid_unpack_global(ads_kid_fields *out, const uint8_t in[ADS_KID_GLOBAL_BYTES],
                          unsigned interval, ads_error *err)
{
    bit_reader r = {in, 0, 0};
    ads_kid_fields f;
    int rc;

    if (!out || !in)
        return ads_error_set(err, ADS_EINVAL, "kid: NULL argument");
    rc = check_interval(interval, err);
    if (rc)
        return rc;
    f.a = get_bits(&r, 20);
    f.b = get_bits(&r, 20 - interval) << interval;
    f.node = get_bits(&r, 32);
    f.b |= get_bits(&r, interval);
    f.c = get_bits(&r, 10) << 10;
    f.seq = get_bits(&r, 14);
    rc = check_unpacked(&f, err);
    if (rc)
        return rc;
    *out = f;
    return 0;
}

int ads_kid_encode(char *out, size_t cap, const uint8_t *bytes, size_t n, ads_error *err)
{
    size_t len, i, k = 0;
    uint32_t acc = 0;
    unsigned nbits = 0;

    if (!out || !bytes)
        return ads_error_set(err, ADS_EINVAL, "kid encode: NULL argument");
    if (n != ADS_KID_LOCAL_BYTES && n != ADS_KID_GLOBAL_BYTES)
        return ads_error_set(err, ADS_EINVAL, "kid encode: %zu bytes (expected 8 or 12)", n);
    len = (n * 8 + 5) / 6;
    if (cap < len + 1) {
        if (cap)
            out[0] = '\0';
        return ads_error_set(err, ADS_EINVAL,
                             "kid encode: needs %zu bytes with the NUL, the buffer has %zu",
                             len + 1, cap);
    }
    for (i = 0; i < n; i++) {
        acc = acc << 8 | bytes[i];
        nbits += 8;
        while (nbits >= 6) {
            nbits -= 6;
            out[k++] = kid_alphabet[(acc >> nbits) & 63];
        }
    }
    if (nbits)
        out[k++] = kid_alphabet[(acc << (6 - nbits)) & 63];
    out[k] = '\0';
    return (int)k;
}

int ads_kid_decode(uint8_t *out, size_t *n_out, const char *s, size_t len, ads_error *err)
{
    uint8_t buf[ADS_KID_GLOBAL_BYTES];
    size_t n, i, k = 0;
    uint32_t acc = 0;
    unsigned nbits = 0;

    if (!out || !n_out || (!s && len))
        return ads_error_set(err, ADS_EINVAL, "kid decode: NULL argument");
    if (len == ADS_KID_LOCAL_TEXT) {
        n = ADS_KID_LOCAL_BYTES;
    } else if (len == ADS_KID_GLOBAL_TEXT) {
        n = ADS_KID_GLOBAL_BYTES;
    } else {
        size_t col = len > ADS_KID_GLOBAL_TEXT ? ADS_KID_GLOBAL_TEXT + 1 : len + 1;
        return ads_error_set_at(err, ADS_ESYNTAX, 1, (int)col,
                                "kid: %zu characters (expected 11 for a local id or 16 for "
                                "a global id)",
                                len);
    }
    for (i = 0; i < len; i++) {
        int digit = kid_digit((unsigned char)s[i]);
        if (digit < 0) {
            unsigned char c = (unsigned char)s[i];
            if (c > 0x20 && c < 0x7f)
                return ads_error_set_at(err, ADS_ESYNTAX, 1, (int)i + 1,
                                        "kid: '%c' is not in the alphabet "
                                        "(. 0-9 A-Z _ a-z)",
                                        (char)c);
            return ads_error_set_at(err, ADS_ESYNTAX, 1, (int)i + 1,
                                    "kid: byte 0x%02x is not in the alphabet (. 0-9 A-Z _ a-z)",
                                    c);
        }
        acc = acc << 6 | (uint32_t)digit;
        nbits += 6;
        if (nbits >= 8) {
            nbits -= 8;
            buf[k++] = (uint8_t)(acc >> nbits);
        }
    }
    if (acc & ((1u << nbits) - 1))
        return ads_error_set_at(err, ADS_ESYNTAX, 1, (int)len,
                                "kid: the last character carries non-zero padding bits");
    memcpy(out, buf, n);
    *n_out = n;
    return 0;
}

/* The clock's tick, (seconds << 10) | (microseconds >> 10); *now_ns receives
 * the reading, never negative. */
static uint64_t kid_clock_tick(const ads_clock *clock, int64_t *now_ns)
{
    int64_t ns = clock->now_ns(clock->ctx);
    uint64_t sec, usec;

    if (ns < 0)
        ns = 0;
    *now_ns = ns;
    sec = (uint64_t)ns / 1000000000u;
    usec = (uint64_t)ns % 1000000000u / 1000u;
    return sec << 10 | usec >> 10;
}

/* The first nanosecond of the tick after tick. */
static int64_t kid_next_tick_ns(uint64_t tick)
{
    uint64_t sec = tick >> 10;
    uint64_t frac = (tick & 1023) + 1;

    if (frac > KID_TICK_FRAC_MAX) {
        sec++;
        frac = 0;
    }
    if (sec >= (uint64_t)INT64_MAX / 1000000000u)
        return INT64_MAX;
    return (int64_t)(sec * 1000000000u + frac * 1024000u);
}

int ads_kid_next(ads_kid_fields *out, ads_kid_state *st, uint32_t node,
                 const ads_clock *clock, ads_error *err)
{
    int64_t now_ns;
    uint64_t tick, sec;
    uint32_t seq = 0;

    if (!out || !st)
        return ads_error_set(err, ADS_EINVAL, "kid generator: NULL argument");
    if ((st->last_tick & 1023) > KID_TICK_FRAC_MAX ||
        (st->last_tick >> 10) / 1000000u >> KID_A_BITS)
        return ads_error_set(err, ADS_ERANGE,
                             "kid generator: the state holds an impossible tick %" PRIu64,
                             st->last_tick);
    if (!clock)
        clock = ads_clock_system();

    tick = kid_clock_tick(clock, &now_ns);
    if (tick < st->last_tick)
        tick = st->last_tick;
    if (st->used && tick == st->last_tick) {
        if (st->seq < ADS_KID_SEQ_MAX) {
            seq = st->seq + 1;
        } else {
            /* The tick is used up: wait for the clock to reach the next, unless
             * the clock is behind the persisted state (stepped back): then take
             * the next tick at once rather than wait for the clock to catch up. */
            int64_t target = kid_next_tick_ns(st->last_tick);
            if (kid_clock_tick(clock, &now_ns) < st->last_tick) {
                uint64_t frac = (st->last_tick & 1023) + 1;
                tick = frac > KID_TICK_FRAC_MAX ? ((st->last_tick >> 10) + 1) << 10
                                                : (st->last_tick & ~UINT64_C(1023)) | frac;
            }
            while (tick <= st->last_tick) {
                int64_t wait = target - now_ns;
                clock->sleep_ns(clock->ctx, wait > 0 ? wait : 1);
                tick = kid_clock_tick(clock, &now_ns);
            }
        }
    }
    sec = tick >> 10;
    if (sec / 1000000u >> KID_A_BITS)
        return ads_error_set(err, ADS_ERANGE,
                             "kid generator: %" PRIu64 " seconds do not fit in 20 bits of "
                             "megaseconds",
                             sec);
    st->last_tick = tick;
    st->seq = seq;
    st->used = true;
    out->a = (uint32_t)(sec / 1000000u);
    out->b = (uint32_t)(sec % 1000000u);
    out->c = (uint32_t)(tick & 1023) << 10;
    out->seq = seq;
    out->node = node;
    return 0;
}
