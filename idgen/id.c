/*
 * idgen/id.c: the 128-bit datastore identifier: fields, text forms, and the
 * random sources (UUIDs, node ids).
 *
 * The kind of an id is never stored; it is read from the bits (idgen.h). The
 * writer follows the seed's examples; the reader accepts every spelling of
 * shared/spec/identifiers.md section 1.1 and names the offending byte of
 * anything else.
 */
#include <errno.h>
#include <string.h>
#include <sys/random.h>

#include "base/bytes.h"
#include "idgen/idgen.h"

static const char hex_digits[] = "0123456789abcdef";

const char *ads_id_kind_name(ads_id_kind kind)
{
    switch (kind) {
    case ADS_ID_ORDERED:
        return "ordered";
    case ADS_ID_RANDOM:
        return "random";
    case ADS_ID_INCREMENT:
        return "increment";
    }
    return "unknown";
}

void ads_ouid_unpack(ads_ouid_fields *out, ads_id id)
{
    out->time = id.hi >> 28;
    out->counter = (uint32_t)((id.hi >> 4) & 0xffffff);
    out->version = (uint8_t)(id.hi & 7);
    out->backfill = (id.hi & 8) != 0;
    out->node = id.lo >> 16;
    out->clockseq = (uint16_t)(id.lo & 0xffff);
}

int ads_ouid_pack(ads_id *out, const ads_ouid_fields *f, ads_error *err)
{
    if (f->time > ADS_OUID_TIME_MAX)
        return ads_error_set(err, ADS_ERANGE, "OUID time %llu does not fit 36 bits",
                             (unsigned long long)f->time);
    if (f->counter > ADS_OUID_COUNTER_MAX)
        return ads_error_set(err, ADS_ERANGE, "OUID counter %lu does not fit 24 bits",
                             (unsigned long)f->counter);
    if (f->version > 7)
        return ads_error_set(err, ADS_ERANGE, "OUID version %u does not fit 3 bits",
                             (unsigned)f->version);
    if (f->node >> 47)
        return ads_error_set(err, ADS_ERANGE, "OUID node %llx does not fit 47 bits",
                             (unsigned long long)f->node);
    out->hi = (f->time << 28) | ((uint64_t)f->counter << 4) | (f->backfill ? 8u : 0u) |
              f->version;
    out->lo = (f->node << 16) | f->clockseq;
    return 0;
}

/* Write v in lower-case hex, at least min digits, into p; returns digits. */
static size_t put_hex(char *p, uint64_t v, int min)
{
    char tmp[16];
    int n = 0;
    do {
        tmp[n++] = hex_digits[v & 15];
        v >>= 4;
    } while (v);
    while (n < min)
        tmp[n++] = '0';
    for (int i = 0; i < n; i++)
        p[i] = tmp[n - 1 - i];
    return (size_t)n;
}

size_t ads_id_format(char *out, ads_id id)
{
    char *p = out;
    *p++ = '#';
    switch (ads_id_kind_of(id)) {
    case ADS_ID_INCREMENT: {
        char tmp[20];
        int n = 0;
        uint64_t v = id.lo;
        do {
            tmp[n++] = (char)('0' + v % 10);
            v /= 10;
        } while (v);
        while (n)
            *p++ = tmp[--n];
        break;
    }
    case ADS_ID_RANDOM:
        p += put_hex(p, id.hi >> 32, 8);
        *p++ = '-';
        p += put_hex(p, (id.hi >> 16) & 0xffff, 4);
        *p++ = '-';
        p += put_hex(p, id.hi & 0xffff, 4);
        *p++ = '-';
        p += put_hex(p, id.lo >> 48, 4);
        *p++ = '-';
        p += put_hex(p, id.lo & UINT64_C(0xffffffffffff), 12);
        break;
    case ADS_ID_ORDERED:
        p += put_hex(p, id.hi >> 28, 8);
        *p++ = '-';
        p += put_hex(p, id.hi & 0xfffffff, 4);
        *p++ = '-';
        p += put_hex(p, id.lo >> 16, 12);
        *p++ = '-';
        p += put_hex(p, id.lo & 0xffff, 1);
        break;
    }
    *p = '\0';
    return (size_t)(p - out);
}


/* A dash-separated group: its offset and length within the parsed text. */
typedef struct group {
    size_t at, len;
} group;

/* Read a group of hex digits as a number (len <= 16 checked by the caller). */
static uint64_t group_hex(const char *s, group g)
{
    uint64_t v = 0;
    for (size_t i = 0; i < g.len; i++)
        v = (v << 4) | (uint64_t)ads_hex_value((unsigned char)s[g.at + i]);
    return v;
}

/* Column (1-based) of byte i of the text after '#' handling: base is the
 * number of bytes before the body (1 when a '#' was given). */
#define COL(i) ((int)((i) + base + 1))

static int parse_luid(ads_id *out, const char *s, size_t len, size_t base, ads_error *err)
{
    uint64_t v = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c < '0' || c > '9')
            return ads_error_set_at(err, ADS_ESYNTAX, 1, COL(i),
                                    "identifier: '%c' in a one-group identifier "
                                    "(increment), which is decimal digits only",
                                    c);
        if (i >= 20 || v > (UINT64_MAX - (c - '0')) / 10)
            return ads_error_set_at(err, ADS_ERANGE, 1, COL(i),
                                    "identifier: increment value over "
                                    "18446744073709551615");
        v = v * 10 + (uint64_t)(c - '0');
    }
    *out = ads_luid(v);
    return 0;
}

static int check_width(const group *g, size_t max, const char *what, size_t base,
                       ads_error *err)
{
    if (g->len == 0)
        return ads_error_set_at(err, ADS_ESYNTAX, 1, COL(g->at),
                                "identifier: empty %s group", what);
    if (g->len > max)
        return ads_error_set_at(err, ADS_ERANGE, 1, COL(g->at + max),
                                "identifier: %s group has %zu digits, at most %zu allowed",
                                what, g->len, max);
    return 0;
}

static int parse_uuid(ads_id *out, const char *s, const group *g, size_t base, ads_error *err)
{
    int var = ads_hex_value((unsigned char)s[g[3].at]);
    if (var < 8)
        return ads_error_set_at(err, ADS_ESYNTAX, 1, COL(g[3].at),
                                "identifier: UUID variant digit '%c' must be 8-f (RFC 9562 "
                                "variant)",
                                s[g[3].at]);
    out->hi = (group_hex(s, g[0]) << 32) | (group_hex(s, g[1]) << 16) | group_hex(s, g[2]);
    out->lo = (group_hex(s, g[3]) << 48) | group_hex(s, g[4]);
    return 0;
}

/* Four logical groups T, CV, N (possibly split in two), S. */
static int parse_ouid(ads_id *out, const char *s, const group *g, size_t ngroups, size_t base,
                      ads_error *err)
{
    const group *gs = &g[ngroups - 1];
    int rc;
    if ((rc = check_width(&g[0], 9, "time", base, err)) ||
        (rc = check_width(&g[1], 7, "counter", base, err)) ||
        (rc = check_width(gs, 4, "clock sequence", base, err)))
        return rc;
    uint64_t node;
    if (ngroups == 4) {
        if ((rc = check_width(&g[2], 12, "node", base, err)))
            return rc;
        node = group_hex(s, g[2]);
    } else {
        if ((rc = check_width(&g[2], 12, "node", base, err)) ||
            (rc = check_width(&g[3], 12, "node", base, err)))
            return rc;
        if (g[2].len + g[3].len > 12)
            return ads_error_set_at(err, ADS_ERANGE, 1, COL(g[3].at),
                                    "identifier: node written in two groups has %zu digits, "
                                    "at most 12 allowed",
                                    g[2].len + g[3].len);
        node = (group_hex(s, g[2]) << (4 * g[3].len)) | group_hex(s, g[3]);
    }
    if (node >> 47)
        return ads_error_set_at(err, ADS_ERANGE, 1, COL(g[2].at),
                                "identifier: node has its top bit set; an ordered id's node "
                                "is 47 bits");
    uint64_t cv = group_hex(s, g[1]);
    if ((cv & 7) != 1)
        return ads_error_set_at(err, ADS_ESYNTAX, 1, COL(g[1].at + g[1].len - 1),
                                "identifier: version digit '%c' is not 1 or 9 (ordered ids "
                                "are version 1)",
                                s[g[1].at + g[1].len - 1]);
    out->hi = (group_hex(s, g[0]) << 28) | cv;
    out->lo = (node << 16) | group_hex(s, *gs);
    return 0;
}

int ads_id_parse(ads_id *out, const char *s, size_t len, int flags, ads_error *err)
{
    size_t base = 0;
    group g[5];
    size_t ngroups = 0;

    if (!out || (!s && len))
        return ads_error_set(err, ADS_EINVAL, "identifier: NULL argument");
    if (len > 0 && s[0] == '#') {
        base = 1;
        s++;
        len--;
    } else if (flags & ADS_ID_PARSE_HASH_REQUIRED) {
        return ads_error_set_at(err, ADS_ESYNTAX, 1, 1,
                                "identifier: expected '#'");
    }
    if (len == 0)
        return ads_error_set_at(err, ADS_ESYNTAX, 1, (int)base + 1,
                                "identifier: empty; expected hex groups or decimal digits");

    g[0].at = 0;
    for (size_t i = 0; i <= len; i++) {
        if (i == len || s[i] == '-') {
            g[ngroups].len = i - g[ngroups].at;
            if (g[ngroups].len == 0)
                return ads_error_set_at(err, ADS_ESYNTAX, 1, COL(i),
                                        "identifier: empty group");
            ngroups++;
            if (i < len) {
                if (ngroups == 5) /* a sixth group: report the dash that opens it */
                    return ads_error_set_at(err, ADS_ESYNTAX, 1, COL(i),
                                            "identifier: too many groups; expected 4 "
                                            "(ordered) or 5 (random)");
                g[ngroups].at = i + 1;
            }
            continue;
        }
        unsigned char c = (unsigned char)s[i];
        if (ads_hex_value(c) < 0) {
            if (c >= 0x20 && c < 0x7f)
                return ads_error_set_at(err, ADS_ESYNTAX, 1, COL(i),
                                        "identifier: unexpected '%c'; expected a hex digit "
                                        "or '-'",
                                        c);
            return ads_error_set_at(err, ADS_ESYNTAX, 1, COL(i),
                                    "identifier: unexpected byte 0x%02x; expected a hex "
                                    "digit or '-'",
                                    c);
        }
    }

    switch (ngroups) {
    case 1:
        return parse_luid(out, s, len, base, err); /* names the first non-digit */
    case 4:
        return parse_ouid(out, s, g, 4, base, err);
    case 5:
        if (g[0].len == 8 && g[1].len == 4 && g[2].len == 4 && g[3].len == 4 &&
            g[4].len == 12)
            return parse_uuid(out, s, g, base, err);
        return parse_ouid(out, s, g, 5, base, err);
    default:
        return ads_error_set_at(err, ADS_ESYNTAX, 1, COL(len),
                                "identifier: %zu groups; expected 1 (increment), 4 (ordered) "
                                "or 5 (random)",
                                ngroups);
    }
}

/* getrandom() until n bytes are read; EINTR is retried. */
static int fill_random(void *buf, size_t n, ads_error *err)
{
    unsigned char *p = buf;
    while (n > 0) {
        ssize_t r = getrandom(p, n, 0);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return ads_error_set(err, ADS_EIO, "getrandom: %s", strerror(errno));
        }
        p += r;
        n -= (size_t)r;
    }
    return 0;
}

static void make_uuid4(ads_id *id)
{
    id->hi = (id->hi & ~UINT64_C(0xf000)) | UINT64_C(0x4000);
    id->lo = (id->lo & ~(UINT64_C(3) << 62)) | (UINT64_C(1) << 63);
}

int ads_uuid_new_n(ads_id *out, size_t n, ads_error *err)
{
    int rc = fill_random(out, n * sizeof *out, err);
    if (rc)
        return rc;
    for (size_t i = 0; i < n; i++)
        make_uuid4(&out[i]);
    return 0;
}

int ads_uuid_new(ads_id *out, ads_error *err)
{
    return ads_uuid_new_n(out, 1, err);
}

int ads_node_new(uint64_t *out, ads_error *err)
{
    uint64_t v;
    do {
        int rc = fill_random(&v, sizeof v, err);
        if (rc)
            return rc;
        v &= (UINT64_C(1) << 47) - 1;
    } while (v == 0);
    *out = v;
    return 0;
}
