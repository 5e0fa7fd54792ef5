/*
 * engine/chunk.c: history chunks, the form of history entries from store
 * format 7 (docs/storage.md, "History chunks").
 *
 * A record's history rows differ from each other in a few attributes and
 * in their dates; stored one per entry, each pays for its own key (the
 * record's key and 16 bytes of dates), LMDB's node and its own envelope,
 * which is more than the row's difference itself. A chunk holds up to
 * ADS_HISTORY_CHUNK_ROWS consecutive rows of one record in one entry,
 * under the history key of its first row:
 *
 *   0..3   checksum: low 32 bits of XXH3-64 over bytes 4.., seeded with
 *          the last 16 bytes of the key (row 0's dates)
 *   4      envelope version 3
 *   5      flags: 2 long key (the whole record key follows), 4 a base (below)
 *   6      rows, 1..ADS_HISTORY_CHUNK_ROWS
 *   [long key: LEB128 length, then the whole record key]
 *   [base: LEB128 length, then a whole MessagePack row that is no row of
 *          the history: the keyframe of the rows, once retention removed
 *          the row 0 they were differences from]
 *   then each row:
 *     flags   1 deleted, 4 a difference from the keyframe, 16 _Timestamp
 *             raw, 32 _Timestamp's step in seconds
 *     zone    _Timestamp's offset east of UTC: zigzag LEB128
 *     ts      row 0: the key's, unless raw; the others: raw (IEEE double,
 *             LE), or the step from the row before (zigzag LEB128) when
 *             both are whole numbers of microseconds: in seconds (flag 32)
 *             when both are whole seconds, else in microseconds
 *     systs   row 0: the key's; the others: the step from the row before
 *             less the step of ts in microseconds (0 when raw), zigzag
 *             LEB128, modulo 2^64 (0 when both dates come from one clock)
 *     length  LEB128, then the row's MessagePack: whole, or its
 *             difference from the keyframe (ads_msgpack__delta): row 0,
 *             or the base when there is one
 *
 * A trim (ads_chunk__cut) so removes a chunk's first rows without encoding
 * the others again: the keyframe stays as the base, the first kept row
 * takes its dates from the new key, and the rows after it keep their bytes.
 *
 * Rows are in strictly increasing order of their history keys, which the
 * reader checks, so the keys it makes of them sort as stored rows' would.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/bytes.h"
#include "engine/engine_int.h"

enum { CROW_TSRAW = 0x10, CROW_TSSEC = 0x20, CHUNK_BASE = 4 };
#define CROW_FLAGS (ROW_DELETED | ROW_DELTA | CROW_TSRAW | CROW_TSSEC)

static void put_le(unsigned char *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++, v >>= 8)
        p[i] = (unsigned char)v;
}

static uint64_t get_le64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static uint64_t get_be64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = v << 8 | p[i];
    return v;
}

/* Bytes read (1..10), or 0 when [p, end) holds no LEB128 of 64 bits. */
static size_t uleb_get(const unsigned char *p, const unsigned char *end, uint64_t *v)
{
    uint64_t x = 0;
    for (size_t i = 0; i < 10 && p + i < end; i++) {
        uint64_t b = p[i] & 0x7f;
        if (i == 9 && b > 1)
            return 0;
        x |= b << (7 * i);
        if (!(p[i] & 0x80)) {
            *v = x;
            return i + 1;
        }
    }
    return 0;
}

static uint64_t zigzag(uint64_t v)
{
    return (v << 1) ^ (v >> 63 ? UINT64_MAX : 0);
}

static uint64_t unzigzag(uint64_t u)
{
    return (u >> 1) ^ (0 - (u & 1));
}

/* ts as a whole number of microseconds that reads back bit for bit. */
static bool micros(double ts, int64_t *us)
{
    if (!(ts > -9e9 && ts < 9e9) || (ts == 0 && signbit(ts)))
        return false;
    int64_t u = llround(ts * 1e6);
    if ((double)u / 1e6 != ts)
        return false;
    *us = u;
    return true;
}

/* Does a key's sortable form of ts read back as ts, bit for bit? */
static bool ts_in_key(double ts)
{
    unsigned char s[8];
    ads_key__sortable_double(s, ts);
    double back = ads_key__double_of_sortable(s);
    return memcmp(&back, &ts, 8) == 0;
}

bool ads_chunk__is(const unsigned char *v, size_t vlen)
{
    return vlen > 4 && v[4] == ADS_ROW_VERSION_CHUNK;
}

unsigned ads_chunk__rows(const unsigned char *v, size_t vlen)
{
    return ads_chunk__is(v, vlen) ? (vlen > 6 ? v[6] : 0) : 1;
}

unsigned ads_chunk__max_rows(void)
{
    const char *s = getenv("ADSTORE_TEST_CHUNK_ROWS");
    if (s && *s) {
        char *end;
        unsigned long v = strtoul(s, &end, 10);
        if (*end == '\0' && v >= 1 && v <= ADS_HISTORY_CHUNK_ROWS)
            return (unsigned)v;
    }
    return ADS_HISTORY_CHUNK_ROWS;
}

size_t ads_chunk__limit(size_t row0_bytes)
{
    if (row0_bytes <= ADS_HISTORY_CHUNK_BYTES / 2)
        return ADS_HISTORY_CHUNK_BYTES;
    size_t want = row0_bytes + ADS_HISTORY_CHUNK_BYTES / 2;
    return (want + ADS_HISTORY_CHUNK_PAGE - 1) / ADS_HISTORY_CHUNK_PAGE * ADS_HISTORY_CHUNK_PAGE;
}

/* ---- writing ---- */

/* Append row r (prev: the row before it, NULL for row 0) with its data
 * (whole, or steps under ROW_DELTA in flags). */
static void put_row(ads_buf *out, const chunk_row *prev, const chunk_row *r, unsigned flags,
                    const unsigned char *data, size_t len)
{
    unsigned char h[1 + 5 + 10 + 10 + 10];
    int64_t pu = 0, u = 0;
    bool raw = prev ? !(micros(prev->ts, &pu) && micros(r->ts, &u)) : !ts_in_key(r->ts);
    /* a step of whole seconds between whole seconds (most dates are) */
    bool secs = prev && !raw && u % 1000000 == 0 && pu % 1000000 == 0;
    uint64_t step = (uint64_t)u - (uint64_t)pu;
    size_t at = 1;
    h[0] = (unsigned char)((flags & (ROW_DELETED | ROW_DELTA)) | (raw ? CROW_TSRAW : 0) |
                           (secs ? CROW_TSSEC : 0));
    at += ads_uleb_put(h + at, zigzag((uint64_t)(int64_t)r->offset));
    if (raw) {
        uint64_t bits;
        memcpy(&bits, &r->ts, 8);
        put_le(h + at, bits, 8);
        at += 8;
        step = 0;
    } else if (prev) {
        at += ads_uleb_put(h + at, zigzag(secs ? (uint64_t)((int64_t)step / 1000000) : step));
    }
    /* __SystemTimestamp's step less _Timestamp's: 0 when both are the
     * clock of the writes */
    if (prev)
        at += ads_uleb_put(h + at, zigzag((uint64_t)r->systs - (uint64_t)prev->systs - step));
    at += ads_uleb_put(h + at, len);
    ads_buf_add(out, h, at);
    ads_buf_add(out, data, len);
}

/* Append row r (whole) as a difference from base (row 0's data) when that
 * is a quarter smaller than the row, else whole. */
static int put_row_from(ads_buf *out, const chunk_row *prev, const chunk_row *r,
                        const unsigned char *base, size_t blen, ads_buf *scratch, ads_error *err)
{
    ads_buf_clear(scratch);
    int d = ads_msgpack__delta(scratch, r->data, r->len, base, blen);
    if (d < 0 || scratch->failed)
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    if (d == 0 && scratch->len * 4 <= r->len * 3)
        put_row(out, prev, r, r->flags | ROW_DELTA, (const unsigned char *)scratch->p,
                scratch->len);
    else
        put_row(out, prev, r, r->flags & ~(unsigned)ROW_DELTA, r->data, r->len);
    return 0;
}

static void seal(ads_buf *out, const unsigned char *hkey, size_t hklen)
{
    unsigned char *p = (unsigned char *)out->p;
    put_le(p, ads_row__checksum_dated(p + 4, out->len - 4, hkey + hklen - 16), 4);
}

/* The chunk of rows[0..n) into out, or (limited) of as many of them as it
 * takes: max_rows, and its byte limit. *taken the rows it holds. */
static int encode(ads_buf *out, const unsigned char *hkey, size_t hklen,
                  const unsigned char *full_key, size_t full_key_len, const chunk_row *rows,
                  unsigned n, bool limited, unsigned max_rows, ads_buf *scratch, unsigned *taken,
                  ads_error *err)
{
    unsigned char h[7 + 10] = {0};
    size_t at = 7;
    h[4] = ADS_ROW_VERSION_CHUNK;
    h[5] = full_key ? ROW_LONGKEY : 0;
    if (full_key)
        at += ads_uleb_put(h + at, full_key_len);
    ads_buf_clear(out);
    ads_buf_add(out, h, at);
    if (full_key)
        ads_buf_add(out, full_key, full_key_len);
    put_row(out, NULL, &rows[0], rows[0].flags & ROW_DELETED, rows[0].data, rows[0].len);
    size_t limit = ads_chunk__limit(out->len);
    unsigned i = 1;
    for (; i < n && (!limited || i < max_rows); i++) {
        size_t before = out->len;
        int rc = put_row_from(out, &rows[i - 1], &rows[i], rows[0].data, rows[0].len, scratch,
                              err);
        if (rc)
            return rc;
        if (limited && out->len > limit) {
            out->len = before; /* it does not fit: the next chunk's */
            break;
        }
    }
    if (out->failed)
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    ((unsigned char *)out->p)[6] = (unsigned char)i;
    *taken = i;
    seal(out, hkey, hklen);
    return 0;
}

int ads_chunk__build(ads_buf *out, const unsigned char *hkey, size_t hklen,
                     const unsigned char *full_key, size_t full_key_len, const chunk_row *rows,
                     unsigned n, ads_buf *scratch, ads_error *err)
{
    unsigned taken;
    return encode(out, hkey, hklen, full_key, full_key_len, rows, n, false, n, scratch, &taken,
                  err);
}

int ads_chunk__fill(ads_buf *out, const unsigned char *hkey, size_t hklen,
                    const unsigned char *full_key, size_t full_key_len, const chunk_row *rows,
                    size_t n, unsigned max_rows, ads_buf *scratch, unsigned *taken,
                    ads_error *err)
{
    unsigned m = n < ADS_HISTORY_CHUNK_ROWS ? (unsigned)n : ADS_HISTORY_CHUNK_ROWS;
    return encode(out, hkey, hklen, full_key, full_key_len, rows, m, true,
                  max_rows < m ? max_rows : m, scratch, taken, err);
}

int ads_chunk__append(ads_buf *out, const ads_chunk *c, const unsigned char *v, size_t vlen,
                      const unsigned char *hkey, size_t hklen, const chunk_row *r,
                      unsigned max_rows, ads_buf *scratch, ads_error *err)
{
    if (c->n >= max_rows || c->n >= ADS_HISTORY_CHUNK_ROWS)
        return 0;
    ads_buf_clear(out);
    ads_buf_add(out, v, vlen);
    chunk_row whole = *r;
    whole.flags &= ROW_DELETED;
    int rc = put_row_from(out, &c->rows[c->n - 1], &whole, c->base, c->base_len, scratch, err);
    if (rc)
        return rc;
    if (out->failed)
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    if (out->len > ads_chunk__limit(c->row0_bytes))
        return 0;
    ((unsigned char *)out->p)[6] = (unsigned char)(c->n + 1);
    seal(out, hkey, hklen);
    return 1;
}

int ads_chunk__cut(ads_buf *out, const ads_chunk *c, const unsigned char *v, size_t vlen,
                   unsigned from, const unsigned char *hkey, size_t hklen, ads_error *err)
{
    unsigned char h[7 + 10 + 10] = {0};
    size_t at = 7;
    h[4] = ADS_ROW_VERSION_CHUNK;
    h[5] = (unsigned char)((c->full_key ? ROW_LONGKEY : 0) | CHUNK_BASE);
    h[6] = (unsigned char)(c->n - from);
    if (c->full_key)
        at += ads_uleb_put(h + at, c->full_key_len);
    ads_buf_clear(out);
    ads_buf_add(out, h, at);
    if (c->full_key)
        ads_buf_add(out, c->full_key, c->full_key_len);
    at = ads_uleb_put(h, c->base_len);
    ads_buf_add(out, h, at);
    ads_buf_add(out, c->base, c->base_len);
    /* the first kept row, its dates now the key's; the rest as they were */
    const chunk_row *r = &c->rows[from];
    put_row(out, NULL, r, r->flags, r->data, r->len);
    size_t next = from + 1 < c->n ? c->at[from + 1] : vlen;
    ads_buf_add(out, v + next, vlen - next);
    if (out->failed)
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    seal(out, hkey, hklen);
    return 0;
}

/* ---- reading ---- */

static int corrupt(const char *where, const char *what, ads_error *err)
{
    return ads_error_set(err, ADS_ECORRUPT, "%s: a chunk of rows %s (the store is corrupt)", where,
                         what);
}

/* The 16 bytes a history key ends in for these dates. */
static void key_dates(unsigned char out[16], double ts, int64_t systs)
{
    ads_key__sortable_double(out, ts);
    for (int i = 0; i < 8; i++)
        out[8 + i] = (unsigned char)((uint64_t)systs >> (56 - 8 * i));
}

/* Row i's dates at *p (row 0's come from the key's dates kd). NULL when
 * they do not read. */
static const unsigned char *get_dates(chunk_row *r, const chunk_row *prev, unsigned flags,
                                      const unsigned char *p, const unsigned char *end,
                                      const unsigned char *kd)
{
    uint64_t x, step = 0;
    size_t n;
    if ((flags & CROW_TSSEC) && (!prev || (flags & CROW_TSRAW)))
        return NULL;
    if (flags & CROW_TSRAW) {
        if (end - p < 8)
            return NULL;
        uint64_t bits = get_le64(p);
        memcpy(&r->ts, &bits, 8);
        p += 8;
    } else if (!prev) {
        r->ts = ads_key__double_of_sortable(kd);
    } else {
        int64_t pu;
        if (!micros(prev->ts, &pu) || !(n = uleb_get(p, end, &x)))
            return NULL;
        step = unzigzag(x);
        if (flags & CROW_TSSEC) {
            if (pu % 1000000 != 0 || (int64_t)step > INT64_MAX / 1000000 ||
                (int64_t)step < INT64_MIN / 1000000)
                return NULL;
            step = (uint64_t)((int64_t)step * 1000000);
        }
        r->ts = (double)(int64_t)((uint64_t)pu + step) / 1e6;
        p += n;
    }
    if (!prev) {
        r->systs = (int64_t)get_be64(kd + 8);
        return p;
    }
    if (!(n = uleb_get(p, end, &x)))
        return NULL;
    r->systs = (int64_t)((uint64_t)prev->systs + unzigzag(x) + step);
    return p + n;
}

/* Row i of c at *p: NULL with *what when it does not read. */
static const unsigned char *get_row(ads_chunk *c, unsigned i, const unsigned char *p,
                                    const unsigned char *end, const unsigned char *kd,
                                    const char **what)
{
    chunk_row *r = &c->rows[i];
    uint64_t x;
    size_t n;
    *what = "is cut short";
    if (p >= end)
        return NULL;
    unsigned flags = *p++;
    if ((flags & ~(unsigned)CROW_FLAGS) || (i == 0 && (flags & ROW_DELTA) && !c->has_base)) {
        *what = "has a row with unknown flags";
        return NULL;
    }
    r->flags = flags & (ROW_DELETED | ROW_DELTA);
    if (!(n = uleb_get(p, end, &x)) || unzigzag(x) + 0x80000000u > UINT32_MAX) {
        *what = "has a malformed zone offset";
        return NULL;
    }
    r->offset = (int32_t)(int64_t)unzigzag(x);
    if (!(p = get_dates(r, i ? &c->rows[i - 1] : NULL, flags, p + n, end, kd)))
        return NULL;
    if (!(n = uleb_get(p, end, &x)) || x > (uint64_t)(end - p - (ptrdiff_t)n) || x == 0)
        return NULL;
    r->data = p + n;
    r->len = (size_t)x;
    return p + n + x;
}

/* Are c's rows in strictly increasing key order, row 0 at the key's dates? */
static bool in_order(const ads_chunk *c, const unsigned char *kd)
{
    unsigned char prev[16], cur[16];
    for (unsigned i = 0; i < c->n; i++)
        if (isnan(c->rows[i].ts))
            return false;
    key_dates(prev, c->rows[0].ts, c->rows[0].systs);
    if (memcmp(prev, kd, 16) != 0)
        return false;
    for (unsigned i = 1; i < c->n; i++) {
        key_dates(cur, c->rows[i].ts, c->rows[i].systs);
        if (memcmp(cur, prev, 16) <= 0)
            return false;
        memcpy(prev, cur, 16);
    }
    return true;
}

/* The header: rows and long key; *at after it. */
static int get_header(ads_chunk *c, const unsigned char *v, size_t vlen, size_t *at,
                      const char *where, ads_error *err)
{
    if (v[5] & ~(ROW_LONGKEY | CHUNK_BASE))
        return corrupt(where, "has unknown flags", err);
    c->n = v[6];
    if (c->n == 0 || c->n > ADS_HISTORY_CHUNK_ROWS)
        return corrupt(where, "holds a count of rows out of range", err);
    *at = 7;
    c->full_key = NULL;
    c->full_key_len = 0;
    if (v[5] & ROW_LONGKEY) {
        uint64_t kl;
        size_t n = uleb_get(v + 7, v + vlen, &kl);
        if (!n || kl <= ADS_KEY_INLINE_MAX || kl > vlen - 7 - n)
            return corrupt(where, "has a bad long key length", err);
        c->full_key = v + 7 + n;
        c->full_key_len = (size_t)kl;
        *at = 7 + n + (size_t)kl;
    }
    c->has_base = (v[5] & CHUNK_BASE) != 0;
    if (c->has_base) {
        uint64_t bl;
        size_t n = uleb_get(v + *at, v + vlen, &bl);
        if (!n || bl == 0 || bl > vlen - *at - n)
            return corrupt(where, "has a bad base length", err);
        c->base = v + *at + n;
        c->base_len = (size_t)bl;
        *at += n + (size_t)bl;
    }
    return 0;
}

/* ads_chunk__parse but for the checksum (when sum is false). */
static int parse(ads_chunk *c, const unsigned char *hkey, size_t hklen, const unsigned char *v,
                 size_t vlen, bool sum, const char *where, ads_error *err)
{
    if (vlen < 7 + 3 || hklen < 16 + 5)
        return corrupt(where, "is too short", err);
    const unsigned char *kd = hkey + hklen - 16;
    c->sum = (uint32_t)v[0] | (uint32_t)v[1] << 8 | (uint32_t)v[2] << 16 | (uint32_t)v[3] << 24;
    if (sum && c->sum != ads_row__checksum_dated(v + 4, vlen - 4, kd))
        return corrupt(where, "fails its checksum", err);
    if (v[4] != ADS_ROW_VERSION_CHUNK)
        return corrupt(where, "has another envelope version", err);
    size_t at;
    int rc = get_header(c, v, vlen, &at, where, err);
    if (rc)
        return rc;
    const unsigned char *p = v + at, *end = v + vlen;
    const char *what;
    for (unsigned i = 0; i < c->n; i++) {
        c->at[i] = (size_t)(p - v);
        if (!(p = get_row(c, i, p, end, kd, &what)))
            return corrupt(where, what, err);
        if (i == 0)
            c->row0_bytes = c->has_base ? at : (size_t)(p - v);
    }
    if (!c->has_base) {
        c->base = c->rows[0].data;
        c->base_len = c->rows[0].len;
    }
    if (p != end)
        return corrupt(where, "has bytes after its last row", err);
    if (!in_order(c, kd))
        return corrupt(where, "holds rows out of order", err);
    if (c->full_key && ads_key__check_stored(hkey, hklen, c->full_key, c->full_key_len,
                                             c->rows[0].ts, c->rows[0].systs))
        return corrupt(where, "is stored under a corrupt key", err);
    c->bytes = vlen;
    return 0;
}

int ads_chunk__parse(ads_chunk *c, const unsigned char *hkey, size_t hklen,
                     const unsigned char *v, size_t vlen, const char *where, ads_error *err)
{
    return parse(c, hkey, hklen, v, vlen, true, where, err);
}

bool ads_chunk__key_sound(const unsigned char *hkey, size_t hklen, const unsigned char *v,
                          size_t vlen)
{
    ads_chunk c;
    return parse(&c, hkey, hklen, v, vlen, false, "", NULL) == 0 &&
           ads_key__check_stored(hkey, hklen, c.full_key, c.full_key_len, c.rows[0].ts,
                                 c.rows[0].systs) == 0;
}

int ads_chunk__undelta(const unsigned char *steps, size_t len, const unsigned char *row0,
                       size_t row0_len, ads_buf *out, const char *where, ads_error *err)
{
    ads_error e;
    ads_buf_clear(out);
    int rc = ads_msgpack__undelta(out, steps, len, row0, row0_len, &e);
    return rc ? ads_error_set(err, rc, "%s: %s", where, e.message) : 0;
}

int ads_chunk__row(const ads_chunk *c, unsigned i, ads_buf *out, const unsigned char **data,
                   size_t *len, const char *where, ads_error *err)
{
    const chunk_row *r = &c->rows[i];
    if (!(r->flags & ROW_DELTA)) {
        *data = r->data;
        *len = r->len;
        return 0;
    }
    int rc = ads_chunk__undelta(r->data, r->len, c->base, c->base_len, out, where, err);
    if (rc)
        return rc;
    *data = (const unsigned char *)out->p;
    *len = out->len;
    return 0;
}
