/*
 * idgen/fluid.c: FLUIDs (Flux RFC 19), the 64-bit ids ts:40 | generator:14 |
 * seq:10, their generator and their six text encodings.
 *
 * Encoders write into a stack buffer and copy out; decoders walk the bytes
 * once, with table lookups for every digit (the word and emoji tables and
 * their reverse indexes come from fluid_tables.c, generated at build time).
 * Nothing allocates, so each codec runs at tens of millions of values a
 * second. Decoding is strict: a value over 2^64-1, a malformed group, an
 * unknown word or a stray byte is an error naming the encoding and the byte
 * (its column counts from the start of the caller's input, before white space
 * is trimmed), never a wrapped or partial value.
 */
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "idgen/fluid_tables.h"
#include "idgen/idgen.h"

static const char *const enc_names[ADS_FLUID_ENC_COUNT] = {
    "dec", "hex", "dothex", "f58", "f58plain", "words", "emoji",
};

/* Human names for error messages, by encoding. */
static const char *const enc_titles[ADS_FLUID_ENC_COUNT] = {
    "decimal", "hex", "dothex", "F58", "F58", "words", "emoji",
};

static const char b58_digits[] = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";

/* Byte -> base58 digit + 1, 0 for anything else (every byte >= 0x80 too). */
static const unsigned char b58_value[256] = {
    ['1'] = 1,  ['2'] = 2,  ['3'] = 3,  ['4'] = 4,  ['5'] = 5,  ['6'] = 6,  ['7'] = 7,
    ['8'] = 8,  ['9'] = 9,  ['A'] = 10, ['B'] = 11, ['C'] = 12, ['D'] = 13, ['E'] = 14,
    ['F'] = 15, ['G'] = 16, ['H'] = 17, ['J'] = 18, ['K'] = 19, ['L'] = 20, ['M'] = 21,
    ['N'] = 22, ['P'] = 23, ['Q'] = 24, ['R'] = 25, ['S'] = 26, ['T'] = 27, ['U'] = 28,
    ['V'] = 29, ['W'] = 30, ['X'] = 31, ['Y'] = 32, ['Z'] = 33, ['a'] = 34, ['b'] = 35,
    ['c'] = 36, ['d'] = 37, ['e'] = 38, ['f'] = 39, ['g'] = 40, ['h'] = 41, ['i'] = 42,
    ['j'] = 43, ['k'] = 44, ['m'] = 45, ['n'] = 46, ['o'] = 47, ['p'] = 48, ['q'] = 49,
    ['r'] = 50, ['s'] = 51, ['t'] = 52, ['u'] = 53, ['v'] = 54, ['w'] = 55, ['x'] = 56,
    ['y'] = 57, ['z'] = 58,
};

static const char hex_digits[] = "0123456789abcdef";

/* Byte -> hex digit + 1, 0 for anything else. Both cases are accepted. */
static const unsigned char hex_value[256] = {
    ['0'] = 1,  ['1'] = 2,  ['2'] = 3,  ['3'] = 4,  ['4'] = 5,  ['5'] = 6,
    ['6'] = 7,  ['7'] = 8,  ['8'] = 9,  ['9'] = 10, ['a'] = 11, ['b'] = 12,
    ['c'] = 13, ['d'] = 14, ['e'] = 15, ['f'] = 16, ['A'] = 11, ['B'] = 12,
    ['C'] = 13, ['D'] = 14, ['E'] = 15, ['F'] = 16,
};

/* U+0192 LATIN SMALL LETTER F WITH HOOK in UTF-8. */
#define F58_PREFIX_0 0xc6
#define F58_PREFIX_1 0x92

const char *ads_fluid_enc_name(ads_fluid_enc enc)
{
    if ((unsigned)enc >= ADS_FLUID_ENC_COUNT)
        return "unknown";
    return enc_names[enc];
}

int ads_fluid_enc_parse(ads_fluid_enc *out, const char *name, ads_error *err)
{
    unsigned i;

    if (!out || !name)
        return ads_error_set(err, ADS_EINVAL, "FLUID encoding: no name given");
    for (i = 0; i < ADS_FLUID_ENC_COUNT; i++) {
        if (strcmp(name, enc_names[i]) == 0) {
            *out = (ads_fluid_enc)i;
            return 0;
        }
    }
    return ads_error_set(err, ADS_EINVAL,
                         "unknown FLUID encoding '%.64s' (expected dec, hex, dothex, f58, "
                         "f58plain, words or emoji)",
                         name);
}

/* ------------------------------------------------------------------------ */
/* Encoding                                                                 */
/* ------------------------------------------------------------------------ */

static size_t encode_dec(char *p, uint64_t v)
{
    char tmp[20];
    size_t i = sizeof tmp;

    do {
        tmp[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    memcpy(p, tmp + i, sizeof tmp - i);
    return sizeof tmp - i;
}

static size_t encode_hex(char *p, uint64_t v)
{
    int digits = 1;
    int i;

    if (v)
        digits = (64 - __builtin_clzll(v) + 3) / 4;
    p[0] = '0';
    p[1] = 'x';
    for (i = 0; i < digits; i++)
        p[2 + i] = hex_digits[(v >> (4 * (digits - 1 - i))) & 15];
    return (size_t)digits + 2;
}

static size_t encode_dothex(char *p, uint64_t v)
{
    int g, i;
    char *q = p;

    for (g = 0; g < 4; g++) {
        unsigned group = (unsigned)(v >> (48 - 16 * g)) & 0xffff;
        if (g)
            *q++ = '.';
        for (i = 3; i >= 0; i--)
            *q++ = hex_digits[(group >> (4 * i)) & 15];
    }
    return (size_t)(q - p);
}

static size_t encode_f58(char *p, uint64_t v, bool plain)
{
    char tmp[11]; /* 58^11 > 2^64 */
    size_t i = sizeof tmp;
    size_t n = 0;

    do {
        tmp[--i] = b58_digits[v % 58];
        v /= 58;
    } while (v);
    if (plain) {
        p[n++] = 'f';
    } else {
        p[n++] = (char)F58_PREFIX_0;
        p[n++] = (char)F58_PREFIX_1;
    }
    memcpy(p + n, tmp + i, sizeof tmp - i);
    return n + sizeof tmp - i;
}

/* Writes the whole 8-byte table entry: p needs 8 bytes of room. */
static size_t put_word(char *p, uint32_t digit)
{
    memcpy(p, ads_fluid__words[digit], 8);
    return ads_fluid__word_len[digit];
}

/* mnemonicode: each 32-bit half as three base-1626 digits, least significant
 * first; the low half first. */
static size_t encode_words(char *p, uint64_t v)
{
    char *q = p;
    int h;

    for (h = 0; h < 2; h++) {
        uint32_t x = (uint32_t)(v >> (32 * h));
        if (h) {
            *q++ = '-';
            *q++ = '-';
        }
        q += put_word(q, x % ADS_FLUID__WORD_BASE);
        *q++ = '-';
        q += put_word(q, (x / ADS_FLUID__WORD_BASE) % ADS_FLUID__WORD_BASE);
        *q++ = '-';
        q += put_word(q, x / (ADS_FLUID__WORD_BASE * ADS_FLUID__WORD_BASE));
    }
    return (size_t)(q - p);
}

static size_t encode_emoji(char *p, uint64_t v)
{
    uint32_t digits[7]; /* 576^7 > 2^64 */
    int n = 0;
    size_t len = 0;

    do {
        digits[n++] = (uint32_t)(v % ADS_FLUID__EMOJI_COUNT);
        v /= ADS_FLUID__EMOJI_COUNT;
    } while (v);
    while (n > 0) {
        memcpy(p + len, ads_fluid__emoji[digits[--n]], 4);
        len += 4;
    }
    return len;
}

int ads_fluid_encode(char *out, size_t cap, uint64_t value, ads_fluid_enc enc,
                     ads_error *err)
{
    /* Room for the longest form plus the 8-byte word copies of put_word. */
    char buf[ADS_FLUID_TEXT_MAX + 8];
    size_t n;

    if (!out)
        return ads_error_set(err, ADS_EINVAL, "FLUID encode: no output buffer");
    switch (enc) {
    case ADS_FLUID_DEC:
        n = encode_dec(buf, value);
        break;
    case ADS_FLUID_HEX:
        n = encode_hex(buf, value);
        break;
    case ADS_FLUID_DOTHEX:
        n = encode_dothex(buf, value);
        break;
    case ADS_FLUID_F58:
        n = encode_f58(buf, value, false);
        break;
    case ADS_FLUID_F58PLAIN:
        n = encode_f58(buf, value, true);
        break;
    case ADS_FLUID_WORDS:
        n = encode_words(buf, value);
        break;
    case ADS_FLUID_EMOJI:
        n = encode_emoji(buf, value);
        break;
    default:
        return ads_error_set(err, ADS_EINVAL, "FLUID encode: unknown encoding %d", (int)enc);
    }
    if (cap < n + 1) {
        if (cap)
            out[0] = '\0';
        return ads_error_set(err, ADS_EINVAL,
                             "FLUID encode: %s needs %zu bytes with the NUL, the buffer has %zu",
                             enc_names[enc], n + 1, cap);
    }
    memcpy(out, buf, n);
    out[n] = '\0';
    return (int)n;
}

/* ------------------------------------------------------------------------ */
/* Decoding                                                                 */
/* ------------------------------------------------------------------------ */

typedef const unsigned char *bytes;

/* Where the decoders report errors: the start of the caller's input. */
typedef struct decoder {
    bytes base;
    bytes end; /* end of the trimmed input */
    ads_error *err;
    const char *title; /* the encoding, for messages */
} decoder;

static int column_of(const decoder *d, bytes at)
{
    size_t off = (size_t)(at - d->base);
    return off >= (size_t)INT_MAX ? INT_MAX : (int)off + 1;
}

static int fail(const decoder *d, int code, bytes at, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int fail(const decoder *d, int code, bytes at, const char *fmt, ...)
{
    char msg[ADS_ERROR_MESSAGE_MAX];
    va_list ap;

    if (!d->err)
        return code;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return ads_error_set_at(d->err, code, 1, column_of(d, at), "FLUID %s: %s", d->title, msg);
}

/* A short description of the character at p for a message: 'x', a space,
 * the end of the input, a UTF-8 character with its code point, or the byte
 * in hex when it is not valid UTF-8. */
static const char *describe(char *buf, size_t cap, bytes p, bytes end)
{
    unsigned c, n, i;
    uint32_t cp;

    if (p >= end)
        return "the end of the input";
    c = *p;
    if (c == ' ')
        return "a space";
    if (c > 0x20 && c < 0x7f) {
        snprintf(buf, cap, "'%c'", (char)c);
        return buf;
    }
    if (c < 0x80) {
        snprintf(buf, cap, "byte 0x%02x", c);
        return buf;
    }
    if (c >= 0xc2 && c <= 0xdf) {
        n = 2;
        cp = c & 0x1f;
    } else if (c >= 0xe0 && c <= 0xef) {
        n = 3;
        cp = c & 0x0f;
    } else if (c >= 0xf0 && c <= 0xf4) {
        n = 4;
        cp = c & 0x07;
    } else {
        snprintf(buf, cap, "byte 0x%02x (not UTF-8)", c);
        return buf;
    }
    for (i = 1; i < n; i++) {
        if (p + i >= end || (p[i] & 0xc0) != 0x80) {
            snprintf(buf, cap, "a truncated UTF-8 character (byte 0x%02x)", c);
            return buf;
        }
        cp = cp << 6 | (p[i] & 0x3f);
    }
    if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
        (cp >= 0xd800 && cp <= 0xdfff)) {
        snprintf(buf, cap, "byte 0x%02x (not UTF-8)", c);
        return buf;
    }
    snprintf(buf, cap, "'%.*s' (U+%04" PRIX32 ")", (int)n, (const char *)p, cp);
    return buf;
}

/* "expected <what>, found <the character at p>" */
static int fail_found(const decoder *d, bytes p, const char *what)
{
    char buf[64];
    return fail(d, ADS_ESYNTAX, p, "expected %s, found %s", what,
                describe(buf, sizeof buf, p, d->end));
}

static int fail_over(const decoder *d, bytes p)
{
    return fail(d, ADS_ERANGE, p, "value over 2^64-1 (18446744073709551615)");
}

static int decode_dec(uint64_t *out, const decoder *d, bytes p)
{
    uint64_t v = 0;

    for (; p < d->end; p++) {
        unsigned digit = (unsigned)*p - '0';
        if (digit > 9)
            return fail_found(d, p, "a digit");
        if (v > UINT64_MAX / 10 || (v == UINT64_MAX / 10 && digit > UINT64_MAX % 10))
            return fail_over(d, p);
        v = v * 10 + digit;
    }
    *out = v;
    return 0;
}

/* p is just past "0x". */
static int decode_hex(uint64_t *out, const decoder *d, bytes p)
{
    uint64_t v = 0;

    if (p == d->end)
        return fail(d, ADS_ESYNTAX, p, "no digits after \"0x\"");
    for (; p < d->end; p++) {
        unsigned digit = hex_value[*p];
        if (!digit)
            return fail_found(d, p, "a hex digit");
        if (v >> 60)
            return fail_over(d, p);
        v = v << 4 | (digit - 1);
    }
    *out = v;
    return 0;
}

static int decode_dothex(uint64_t *out, const decoder *d, bytes p)
{
    uint64_t v = 0;
    int g;

    for (g = 1; g <= 4; g++) {
        bytes start = p;
        unsigned group = 0;

        for (; p < d->end && hex_value[*p]; p++) {
            if (p - start == 4)
                return fail(d, ADS_ESYNTAX, p, "group %d has more than 4 hex digits", g);
            group = group << 4 | (hex_value[*p] - 1u);
        }
        if (p == start && (p == d->end || *p == '.'))
            return fail(d, ADS_ESYNTAX, p, "group %d is empty (expected 1 to 4 hex digits)", g);
        if (p == start)
            return fail_found(d, p, "a hex digit");
        v = v << 16 | group;
        if (g == 4)
            break;
        if (p == d->end)
            return fail(d, ADS_ESYNTAX, p, "expected 4 groups, found %d", g);
        if (*p != '.')
            return fail_found(d, p, "a hex digit or '.'");
        p++;
    }
    if (p < d->end) {
        if (*p == '.')
            return fail(d, ADS_ESYNTAX, p, "more than 4 groups");
        return fail_found(d, p, "a hex digit");
    }
    *out = v;
    return 0;
}

static int word_index(uint64_t key)
{
    uint32_t h = ads_fluid__word_hash(key);

    for (;;) {
        uint64_t k = ads_fluid__word_slot_key[h];
        if (k == key)
            return ads_fluid__word_slot[h] - 1;
        if (!k)
            return -1;
        h = (h + 1) & (ADS_FLUID__WORD_SLOTS - 1);
    }
}

#define BYTES_01 UINT64_C(0x0101010101010101)
#define BYTES_80 UINT64_C(0x8080808080808080)

/*
 * The fast path of word decoding: the word at p (up to the next '-' or the
 * end), 1..7 letters of either case, as its lower-case key (its bytes read
 * little-endian, see fluid_tables.h) and its length. Eight bytes at a time,
 * without a branch per letter. Returns false for anything else (empty, too
 * long, not letters), which word_error() then diagnoses byte by byte.
 */
static bool read_word(bytes p, bytes end, uint64_t *key, unsigned *len)
{
    size_t avail = (size_t)(end - p);
    uint64_t w = 0, x, dash, mask;
    unsigned n, i;

    if (avail >= 8) {
        /* Written out so that compilers make it one load. */
        w = (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 |
            (uint64_t)p[3] << 24 | (uint64_t)p[4] << 32 | (uint64_t)p[5] << 40 |
            (uint64_t)p[6] << 48 | (uint64_t)p[7] << 56;
    } else {
        for (i = 0; i < avail; i++)
            w |= (uint64_t)p[i] << (8 * i);
    }
    /* The first '-': the lowest byte of x that is zero. */
    x = w ^ (BYTES_01 * '-');
    dash = (x - BYTES_01) & ~x & BYTES_80;
    n = dash ? (unsigned)__builtin_ctzll(dash) / 8 : 8;
    if (n > avail)
        n = (unsigned)avail;
    if (n == 0 || n > ADS_FLUID__WORD_MAXLEN)
        return false;
    mask = (UINT64_C(1) << (8 * n)) - 1;
    w = (w | (BYTES_01 * 0x20)) & mask;
    /* ASCII, then each byte in 'a'..'z': adding 0x1f sets bit 7 from 'a'
     * up, adding 0x05 sets it from '{' up, and neither carries. */
    if (w & BYTES_80)
        return false;
    if (((w + BYTES_01 * 0x1f) & ~(w + BYTES_01 * 0x05) & BYTES_80) != (BYTES_80 & mask))
        return false;
    *key = w;
    *len = n;
    return true;
}

/* Why the word at p (the i-th, from 0) is not one: the error to report. */
static int word_error(const decoder *d, bytes p, int i)
{
    bytes start = p;

    for (; p < d->end && *p != '-'; p++) {
        unsigned c = *p | 0x20u;
        if (c < 'a' || c > 'z')
            return fail_found(d, p, "a letter or '-'");
    }
    if (p == start && p == d->end)
        return fail(d, ADS_ESYNTAX, p, "expected 6 words, found %d", i);
    if (p == start)
        return fail_found(d, p, "a word");
    return fail(d, ADS_ESYNTAX, start, "unknown word '%.*s'",
                p - start > 32 ? 32 : (int)(p - start), (const char *)start);
}

static const char *const word_ordinals[6] = {"first", "second", "third",
                                             "fourth", "fifth", "sixth"};

/* w-w-w--w-w-w: six words (letters of either case), one '-' between words
 * and "--" between the two halves. */
static int decode_words(uint64_t *out, const decoder *d, bytes p)
{
    uint32_t digit[6];
    bytes start[6];
    uint64_t half[2];
    int i;

    for (i = 0; i < 6; i++) {
        uint64_t key;
        unsigned n;
        int index;

        start[i] = p;
        if (!read_word(p, d->end, &key, &n))
            return word_error(d, p, i);
        index = word_index(key);
        if (index < 0)
            return fail(d, ADS_ESYNTAX, p, "unknown word '%.*s'", (int)n, (const char *)p);
        if (index >= ADS_FLUID__WORD_BASE)
            return fail(d, ADS_ESYNTAX, p,
                        "'%s' is a 24-bit tail word, not valid in a 64-bit FLUID",
                        ads_fluid__words[index]);
        digit[i] = (uint32_t)index;
        p += n;
        if (i == 5)
            break;
        if (p == d->end)
            return fail(d, ADS_ESYNTAX, p, "expected 6 words, found %d", i + 1);
        p++; /* read_word stopped at a '-' */
        if (i == 2) {
            if (p == d->end || *p != '-')
                return fail(d, ADS_ESYNTAX, p,
                            "expected \"--\" between the third and the fourth word");
            p++;
        }
    }
    if (p < d->end)
        return fail(d, ADS_ESYNTAX, p, "more than 6 words");
    for (i = 0; i < 2; i++) {
        half[i] = digit[3 * i] + (uint64_t)ADS_FLUID__WORD_BASE * digit[3 * i + 1] +
                  (uint64_t)ADS_FLUID__WORD_BASE * ADS_FLUID__WORD_BASE * digit[3 * i + 2];
        if (half[i] > UINT32_MAX)
            return fail(d, ADS_ERANGE, start[3 * i + 2],
                        "the %s three words are over 2^32-1 (the %s word is too large)",
                        i ? "last" : "first", word_ordinals[3 * i + 2]);
    }
    *out = half[0] | half[1] << 32;
    return 0;
}

/* p is just past the prefix. Leading '1' digits are zeros, as in base58. */
static int decode_f58(uint64_t *out, const decoder *d, bytes p)
{
    uint64_t v = 0;

    if (p == d->end)
        return fail(d, ADS_ESYNTAX, p, "no digits after the prefix");
    for (; p < d->end; p++) {
        unsigned digit = b58_value[*p];
        if (!digit)
            return fail_found(d, p, "a base58 digit");
        digit--;
        if (v > (UINT64_MAX - digit) / 58)
            return fail_over(d, p);
        v = v * 58 + digit;
    }
    *out = v;
    return 0;
}

static int decode_emoji(uint64_t *out, const decoder *d, bytes p)
{
    uint64_t v = 0;

    for (; p < d->end; p += 4) {
        unsigned off, digit;

        if (d->end - p < 4 || p[0] != 0xf0 || p[1] != 0x9f || (p[2] & 0xc0) != 0x80 ||
            (p[3] & 0xc0) != 0x80)
            return fail_found(d, p, "an emoji");
        off = (p[2] & 0x3fu) << 6 | (p[3] & 0x3fu);
        digit = ads_fluid__emoji_digit[off];
        if (!digit)
            return fail(d, ADS_ESYNTAX, p, "'%.4s' (U+%04X) is not one of the 576 emoji digits",
                        (const char *)p, 0x1f000u + off);
        digit--;
        if (v > (UINT64_MAX - digit) / ADS_FLUID__EMOJI_COUNT)
            return fail_over(d, p);
        v = v * ADS_FLUID__EMOJI_COUNT + digit;
    }
    *out = v;
    return 0;
}

static bool is_space(unsigned c)
{
    return c == ' ' || (c >= '\t' && c <= '\r');
}

/* The encoding a trimmed, non-empty string has by its shape (the RFC's order). */
static ads_fluid_enc shape_of(bytes p, size_t n)
{
    if (memchr(p, '.', n))
        return ADS_FLUID_DOTHEX;
    if (memchr(p, '-', n))
        return ADS_FLUID_WORDS;
    if (n >= 2 && p[0] == F58_PREFIX_0 && p[1] == F58_PREFIX_1)
        return ADS_FLUID_F58;
    if (p[0] == 'f')
        return ADS_FLUID_F58PLAIN;
    if (n >= 2 && p[0] == 0xf0 && p[1] == 0x9f)
        return ADS_FLUID_EMOJI;
    if (n >= 2 && p[0] == '0' && p[1] == 'x')
        return ADS_FLUID_HEX;
    return ADS_FLUID_DEC;
}

/* Decode s as encoding `forced`, or by shape when forced < 0. */
static int decode(uint64_t *out, ads_fluid_enc *enc_out, int forced, const char *s, size_t len,
                  ads_error *err)
{
    decoder d;
    bytes p;
    size_t n;
    ads_fluid_enc enc;
    uint64_t v = 0;
    int rc;

    if (!out || (!s && len))
        return ads_error_set(err, ADS_EINVAL, "FLUID decode: NULL argument");
    if (forced >= ADS_FLUID_ENC_COUNT)
        return ads_error_set(err, ADS_EINVAL, "FLUID decode: unknown encoding %d", forced);
    if (!s)
        s = "";
    d.base = (bytes)s;
    d.end = d.base + len;
    d.err = err;
    d.title = "";
    p = d.base;
    while (p < d.end && is_space(*p))
        p++;
    while (d.end > p && is_space(d.end[-1]))
        d.end--;
    n = (size_t)(d.end - p);
    if (n == 0)
        return ads_error_set_at(err, ADS_ESYNTAX, 1, column_of(&d, p), "FLUID: empty input");

    enc = forced < 0 ? shape_of(p, n) : (ads_fluid_enc)forced;
    d.title = enc_titles[enc];
    if (enc == ADS_FLUID_F58 || enc == ADS_FLUID_F58PLAIN) {
        /* either prefix reads as F58, as the RFC's fallback allows */
        if (n >= 2 && p[0] == F58_PREFIX_0 && p[1] == F58_PREFIX_1)
            enc = ADS_FLUID_F58;
        else if (p[0] == 'f')
            enc = ADS_FLUID_F58PLAIN;
        else
            return fail_found(&d, p, "the prefix '\xc6\x92' or 'f'");
    } else if (enc == ADS_FLUID_HEX && !(n >= 2 && p[0] == '0' && p[1] == 'x')) {
        return fail_found(&d, p, "the prefix '0x'");
    }
    if (enc_out)
        *enc_out = enc;

    switch (enc) {
    case ADS_FLUID_DOTHEX:
        rc = decode_dothex(&v, &d, p);
        break;
    case ADS_FLUID_WORDS:
        rc = decode_words(&v, &d, p);
        break;
    case ADS_FLUID_F58:
        rc = decode_f58(&v, &d, p + 2);
        break;
    case ADS_FLUID_F58PLAIN:
        rc = decode_f58(&v, &d, p + 1);
        break;
    case ADS_FLUID_EMOJI:
        rc = decode_emoji(&v, &d, p);
        break;
    case ADS_FLUID_HEX:
        rc = decode_hex(&v, &d, p + 2);
        break;
    default:
        rc = decode_dec(&v, &d, p);
        break;
    }
    if (rc == 0)
        *out = v;
    return rc;
}

int ads_fluid_decode(uint64_t *out, ads_fluid_enc *enc_out, const char *s, size_t len,
                     ads_error *err)
{
    return decode(out, enc_out, -1, s, len, err);
}

int ads_fluid_decode_as(uint64_t *out, ads_fluid_enc enc, const char *s, size_t len,
                        ads_error *err)
{
    return decode(out, NULL, (int)enc, s, len, err);
}

/* ------------------------------------------------------------------------ */
/* Generator                                                                */
/* ------------------------------------------------------------------------ */

int ads_fluid_state_init(ads_fluid_state *st, uint32_t generator, uint64_t epoch_ms,
                         ads_error *err)
{
    if (!st)
        return ads_error_set(err, ADS_EINVAL, "FLUID generator: no state given");
    if (generator > ADS_FLUID_GENERATOR_MAX)
        return ads_error_set(err, ADS_ERANGE,
                             "FLUID generator id %" PRIu32
                             " is over the limit of 16383 (14 bits)",
                             generator);
    memset(st, 0, sizeof *st);
    st->epoch_ms = epoch_ms;
    st->generator = generator;
    return 0;
}

static int worn_out(ads_error *err)
{
    return ads_error_set(err, ADS_ERANGE,
                         "FLUID generator worn out: the timestamp passes 2^40-1 ms "
                         "(34.8 years) after its epoch");
}

/* Milliseconds since the epoch by the clock (0 if the clock is before it);
 * *now_ns receives the clock's reading, never negative. */
static uint64_t fluid_clock_ts(const ads_clock *clock, uint64_t epoch_ms, int64_t *now_ns)
{
    int64_t ns = clock->now_ns(clock->ctx);
    uint64_t ms;

    if (ns < 0)
        ns = 0;
    *now_ns = ns;
    ms = (uint64_t)ns / 1000000u;
    return ms > epoch_ms ? ms - epoch_ms : 0;
}

int ads_fluid_next(uint64_t *out, ads_fluid_state *st, const ads_clock *clock,
                   ads_error *err)
{
    int64_t now_ns;
    uint64_t ts;
    uint32_t seq = 0;

    if (!out || !st)
        return ads_error_set(err, ADS_EINVAL, "FLUID generator: NULL argument");
    if (st->generator > ADS_FLUID_GENERATOR_MAX)
        return ads_error_set(err, ADS_ERANGE,
                             "FLUID generator id %" PRIu32
                             " is over the limit of 16383 (14 bits)",
                             st->generator);
    if (!clock)
        clock = ads_clock_system();

    ts = fluid_clock_ts(clock, st->epoch_ms, &now_ns);
    if (ts < st->last_ts)
        ts = st->last_ts;
    if (st->used && ts == st->last_ts) {
        if (st->seq < ADS_FLUID_SEQ_MAX) {
            seq = st->seq + 1;
        } else {
            /* This millisecond is used up: wait until the clock reaches the
             * next one (however far behind it is). */
            uint64_t target_ms;
            int64_t target_ns;

            if (st->last_ts >= ADS_FLUID_TS_MAX)
                return worn_out(err);
            if (fluid_clock_ts(clock, st->epoch_ms, &now_ns) < st->last_ts) {
                /* The clock is behind the persisted state (it stepped back, or
                 * the state came from a faster clock): take the next ms rather
                 * than wait, possibly for hours, for the clock to catch up. */
                ts = st->last_ts + 1;
                goto issue;
            }
            target_ms = st->epoch_ms + st->last_ts + 1;
            if (target_ms < st->epoch_ms || target_ms > (uint64_t)INT64_MAX / 1000000u)
                target_ns = INT64_MAX;
            else
                target_ns = (int64_t)(target_ms * 1000000u);
            while (ts <= st->last_ts) {
                int64_t wait = target_ns - now_ns;
                clock->sleep_ns(clock->ctx, wait > 0 ? wait : 1);
                ts = fluid_clock_ts(clock, st->epoch_ms, &now_ns);
            }
        }
    }
issue:
    if (ts > ADS_FLUID_TS_MAX)
        return worn_out(err);
    st->last_ts = ts;
    st->seq = seq;
    st->used = true;
    *out = ts << 24 | (uint64_t)st->generator << 10 | seq;
    return 0;
}
