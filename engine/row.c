/*
 * engine/row.c: stored rows. A row is an envelope and the record's
 * canonical MessagePack row. The envelope a store writes (version 2, store
 * format 6 on; docs/storage.md, "On-disk layout"):
 *
 *   0..3    checksum: low 32 bits of XXH3-64 over bytes 4.. of the value;
 *           for a row whose dates are its key's (flag 8), XXH3-64 of those
 *           16 key bytes seeded with that (a row filed under the wrong key
 *           is caught by verify, which checks keys against the rows' key
 *           attributes)
 *   4       envelope version (2)
 *   5       flags: 1 deleted, 2 long key (the whole record key follows),
 *           4 a history row kept as a difference (engine/history.c), 8 the
 *           dates are the history key's last 16 bytes, not in the row
 *   6..     _Timestamp's zone offset, seconds east of UTC: zigzag LEB128
 *           (one byte for UTC)
 *   [unless flag 8: _Timestamp, IEEE double seconds since the epoch, then
 *           __SystemTimestamp, int64 microseconds since the epoch, both LE]
 *   [long key: u32 LE length, then the whole record key]
 *   then    the MessagePack row (classad/msgpack.h), attributes named by
 *           ids of the store's name table (engine/names.c; a format-1
 *           store's rows name them as strings)
 *
 * Envelope version 1, 32 bytes, is what stores before format 6 wrote and
 * what dumps hold (docs/formats.md, "Dump format"): checksum, version 1,
 * flags (1, 2, 4), two zero bytes, _Timestamp (8..15), its zone offset as
 * int32 LE (16..19), four zero bytes, __SystemTimestamp (24..31). Both are
 * read; a store writes version 2, a dump version 1.
 *
 * The timeline attributes live in the envelope, not in the MessagePack row:
 * a scan can test them without decoding, and the row view below adds them
 * back, so evaluation and decoding see _Timestamp, __SystemTimestamp,
 * __Latest and _Deleted as ordinary attributes.
 */
#include <msgpack.h>
#include <string.h>
/* XXH3 compiled in from the Debian package's header: checksums are on every
 * read, and the inlined form is much cheaper per row than a library call.
 * On x86-64 the header's AVX2 accumulator is compiled too (the same hash,
 * 32 bytes a step instead of SSE2's 16): rows over 240 bytes take it when
 * the CPU has AVX2. It reaches into the header's internals, so only for the
 * version they were read from (0.8.1, Debian 12); others use the portable
 * form. */
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define XXH_DISPATCH_AVX2 1
#define XXH_TARGET_AVX2 __attribute__((__target__("avx2")))
#define XXH_ACC_ALIGN 32 /* the AVX2 accumulator loads its lanes 32 bytes aligned */
#endif
#define XXH_INLINE_ALL
#include <xxhash.h>
#if defined(XXH_DISPATCH_AVX2) && XXH_VERSION_NUMBER == 801
#define ROW_AVX2 1
#endif

#include "base/bytes.h"
#include "engine/engine_int.h"

const char ads_attr__timestamp[] = "_Timestamp";
const char ads_attr__systime[] = "__SystemTimestamp";
const char ads_attr__latest[] = "__Latest";
const char ads_attr__deleted[] = "_Deleted";

static unsigned char fold(unsigned char c)
{
    return (c >= 'A' && c <= 'Z') ? (unsigned char)(c | 0x20) : c;
}

int ads_row__name_cmp(const unsigned char *a, size_t alen, const unsigned char *b, size_t blen)
{
    size_t n = alen < blen ? alen : blen;
    for (size_t i = 0; i < n; i++) {
        unsigned char x = fold(a[i]), y = fold(b[i]);
        if (x != y)
            return x < y ? -1 : 1;
    }
    return alen < blen ? -1 : alen > blen;
}

static bool name_is(const char *name, size_t len, const char *lit, size_t litlen)
{
    if (len != litlen)
        return false;
    for (size_t i = 0; i < len; i++)
        if (fold((unsigned char)name[i]) != fold((unsigned char)lit[i]))
            return false;
    return true;
}

int ads_row__timeline_attr(const char *name, size_t len)
{
    if (len < 8 || name[0] != '_')
        return 0;
    if (name_is(name, len, ads_attr__timestamp, sizeof ads_attr__timestamp - 1))
        return 1;
    if (name_is(name, len, ads_attr__systime, sizeof ads_attr__systime - 1))
        return 2;
    if (name_is(name, len, ads_attr__latest, sizeof ads_attr__latest - 1))
        return 3;
    if (name_is(name, len, ads_attr__deleted, sizeof ads_attr__deleted - 1))
        return 4;
    return 0;
}

/* ---- the envelope ---- */

static void put_le(unsigned char *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++, v >>= 8)
        p[i] = (unsigned char)v;
}

/* Fixed widths, written so that the compiler makes each one load. */
static uint32_t get_le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t get_le64(const unsigned char *p)
{
    return (uint64_t)get_le32(p) | (uint64_t)get_le32(p + 4) << 32;
}

static uint64_t get_be64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = v << 8 | p[i];
    return v;
}

/* The zone offset of a packed envelope: zigzag, then LEB128 (1 byte for
 * UTC, 2 up to +-2:16, 3 for any other real zone). */
static size_t zone_put(unsigned char *p, int32_t offset)
{
    uint32_t z = ((uint32_t)offset << 1) ^ (uint32_t)(offset < 0 ? -1 : 0);
    return ads_uleb_put(p, z);
}

/* Its bytes used (1..5), or 0 when p (n bytes) holds no zone in its
 * shortest form. */
static size_t zone_get(const unsigned char *p, size_t n, int32_t *offset)
{
    uint64_t z = 0;
    for (size_t i = 0; i < n && i < 5; i++) {
        z |= (uint64_t)(p[i] & 0x7f) << (7 * i);
        if (p[i] & 0x80)
            continue;
        if ((i > 0 && p[i] == 0) || z > UINT32_MAX)
            return 0; /* not the shortest form, or over 32 bits */
        uint32_t u = (uint32_t)z;
        *offset = (int32_t)((u >> 1) ^ (0u - (u & 1)));
        return i + 1;
    }
    return 0;
}

#ifdef ROW_AVX2
/* XXH3-64 of len > XXH3_MIDSIZE_MAX bytes with the default secret, AVX2 */
__attribute__((__target__("avx2"), __noinline__)) static uint64_t xxh3_long_avx2(
    const unsigned char *p, size_t len)
{
    return XXH3_hashLong_64b_internal(p, len, XXH3_kSecret, sizeof XXH3_kSecret,
                                      XXH3_accumulate_512_avx2, XXH3_scrambleAcc_avx2);
}
#endif

static uint64_t hash64(const unsigned char *p, size_t len)
{
#ifdef ROW_AVX2
    if (len > XXH3_MIDSIZE_MAX && __builtin_cpu_supports("avx2"))
        return xxh3_long_avx2(p, len);
#endif
    return XXH3_64bits(p, len);
}

uint32_t ads_row__checksum(const unsigned char *p, size_t len)
{
    return (uint32_t)hash64(p, len);
}

uint32_t ads_row__checksum_dated(const unsigned char *p, size_t len, const unsigned char *dates)
{
    return (uint32_t)XXH3_64bits_withSeed(dates, 16, hash64(p, len));
}

/* The checksum of stored value v: over bytes 4.., and for a row whose dates
 * are its key's (ROW_KEYDATES), over those 16 bytes of the key too, so that
 * a flipped byte there fails it as one in the row would. */
static uint32_t checksum(const unsigned char *v, size_t vlen, const unsigned char *skey,
                         size_t skey_len)
{
    uint64_t h = hash64(v + 4, vlen - 4);
    if (v[4] == ADS_ROW_VERSION && (v[5] & ROW_KEYDATES))
        h = XXH3_64bits_withSeed(skey + skey_len - 16, 16, h);
    return (uint32_t)h;
}

/* Does history key skey end in exactly these dates, so that they read back
 * from it bit for bit (-0.0 would read back as 0.0)? */
static bool dates_in_key(const unsigned char *skey, size_t skey_len, double ts, int64_t systs)
{
    if (skey_len < 16 + 5 || ads_key__check_dates(skey, skey_len, ts, systs))
        return false;
    double back = ads_key__double_of_sortable(skey + skey_len - 16);
    return memcmp(&back, &ts, 8) == 0;
}

static void build(ads_buf *out, unsigned version, const unsigned char *skey, size_t skey_len,
                  unsigned flags, double ts, int32_t offset, int64_t systs,
                  const unsigned char *full_key, size_t full_key_len, const unsigned char *data,
                  size_t len)
{
    unsigned char h[ADS_ROW_HEADER] = {0};
    uint64_t tsbits;
    size_t at;
    memcpy(&tsbits, &ts, 8);
    flags = (flags & (ROW_DELETED | ROW_DELTA | ROW_KEYDATES)) | (full_key ? ROW_LONGKEY : 0);
    if (version == ADS_ROW_VERSION_DUMP) {
        put_le(h + 8, tsbits, 8);
        put_le(h + 16, (uint32_t)offset, 4);
        put_le(h + 24, (uint64_t)systs, 8);
        flags &= ~(unsigned)ROW_KEYDATES;
        at = ADS_ROW_HEADER;
    } else {
        if ((flags & ROW_KEYDATES) && !dates_in_key(skey, skey_len, ts, systs))
            flags &= ~(unsigned)ROW_KEYDATES;
        at = 6 + zone_put(h + 6, offset);
        if (!(flags & ROW_KEYDATES)) {
            put_le(h + at, tsbits, 8);
            put_le(h + at + 8, (uint64_t)systs, 8);
            at += 16;
        }
    }
    h[4] = (unsigned char)version;
    h[5] = (unsigned char)flags;
    size_t start = out->len;
    ads_buf_add(out, h, at);
    if (full_key) {
        unsigned char l[4];
        put_le(l, full_key_len, 4);
        ads_buf_add(out, l, 4);
        ads_buf_add(out, full_key, full_key_len);
    }
    ads_buf_add(out, data, len);
    if (out->failed)
        return;
    unsigned char *v = (unsigned char *)out->p + start;
    put_le(v, checksum(v, out->len - start, skey, skey_len), 4);
}

void ads_row__build(ads_buf *out, const unsigned char *skey, size_t skey_len, unsigned flags,
                    double ts, int32_t offset, int64_t systs, const unsigned char *full_key,
                    size_t full_key_len, const unsigned char *data, size_t len)
{
    build(out, ADS_ROW_VERSION, skey, skey_len, flags, ts, offset, systs, full_key,
          full_key_len, data, len);
}

void ads_row__build_dump(ads_buf *out, const unsigned char *skey, size_t skey_len,
                         unsigned flags, double ts, int32_t offset, int64_t systs,
                         const unsigned char *full_key, size_t full_key_len,
                         const unsigned char *data, size_t len)
{
    build(out, ADS_ROW_VERSION_DUMP, skey, skey_len, flags, ts, offset, systs, full_key,
          full_key_len, data, len);
}

/* What split finds wrong with a stored value. */
enum { ENV_OK, ENV_SHORT, ENV_FLAGS, ENV_ZONE, ENV_NODATES, ENV_VERSION, ENV_LONGKEY_CUT,
       ENV_LONGKEY_LEN };

/* The dates of a packed envelope at d: the row's own (little-endian), or
 * its history key's last 16 bytes (ROW_KEYDATES: sortable, big-endian). */
static void read_dates(row_env *out, const unsigned char *d, bool from_key)
{
    if (from_key) {
        out->ts = ads_key__double_of_sortable(d);
        out->systs = (int64_t)get_be64(d + 8);
    } else {
        uint64_t tsbits = get_le64(d);
        memcpy(&out->ts, &tsbits, 8);
        out->systs = (int64_t)get_le64(d + 8);
    }
}

/* The fields of envelope version 2 of v into out; *at is where it ends. */
static int split_packed(row_env *out, const unsigned char *skey, size_t skey_len,
                        const unsigned char *v, size_t vlen, size_t *at)
{
    if (v[5] & ~(ROW_DELETED | ROW_LONGKEY | ROW_DELTA | ROW_KEYDATES))
        return ENV_FLAGS;
    size_t zn = zone_get(v + 6, vlen - 6, &out->offset);
    if (zn == 0)
        return ENV_ZONE;
    *at = 6 + zn;
    if (v[5] & ROW_KEYDATES) {
        if (skey_len < 16 + 5)
            return ENV_NODATES;
        read_dates(out, skey + skey_len - 16, true);
        return ENV_OK;
    }
    if (vlen - *at < 16)
        return ENV_SHORT;
    read_dates(out, v + *at, false);
    *at += 16;
    return ENV_OK;
}

/* Split stored value v (under skey) into out, checking its form but not
 * its checksum: ENV_OK or what is wrong. */
static int split(row_env *out, const unsigned char *skey, size_t skey_len,
                 const unsigned char *v, size_t vlen)
{
    if (vlen < 6)
        return ENV_SHORT;
    size_t at;
    out->flags = v[5] & (ROW_DELETED | ROW_LONGKEY | ROW_DELTA);
    if (v[4] == ADS_ROW_VERSION_DUMP) {
        if (vlen < ADS_ROW_HEADER + 3)
            return ENV_SHORT;
        if (v[5] & ~(ROW_DELETED | ROW_LONGKEY | ROW_DELTA))
            return ENV_FLAGS;
        uint64_t tsbits = get_le64(v + 8);
        memcpy(&out->ts, &tsbits, 8);
        out->offset = (int32_t)get_le32(v + 16);
        out->systs = (int64_t)get_le64(v + 24);
        at = ADS_ROW_HEADER;
    } else if (v[4] == ADS_ROW_VERSION) {
        int rc = split_packed(out, skey, skey_len, v, vlen, &at);
        if (rc)
            return rc;
    } else {
        return ENV_VERSION;
    }
    out->full_key = NULL;
    out->full_key_len = 0;
    if (v[5] & ROW_LONGKEY) {
        if (vlen - at < 4)
            return ENV_LONGKEY_CUT;
        size_t kl = get_le32(v + at);
        at += 4;
        if (kl > vlen - at || kl <= ADS_KEY_INLINE_MAX)
            return ENV_LONGKEY_LEN;
        out->full_key = v + at;
        out->full_key_len = kl;
        at += kl;
    }
    if (vlen - at < 3)
        return ENV_SHORT;
    out->sum = get_le32(v);
    out->data = v + at;
    out->len = vlen - at;
    return ENV_OK;
}

static int envelope_error(int why, const unsigned char *v, size_t vlen, const char *where,
                          ads_error *err)
{
    switch (why) {
    case ENV_SHORT:
        return ads_error_set(err, ADS_ECORRUPT, "%s: row of %zu bytes is too short", where, vlen);
    case ENV_FLAGS:
        return ads_error_set(err, ADS_ECORRUPT, "%s: row has unknown flags 0x%02x", where, v[5]);
    case ENV_ZONE:
        return ads_error_set(err, ADS_ECORRUPT, "%s: the row's zone offset is malformed", where);
    case ENV_NODATES:
        return ads_error_set(err, ADS_ECORRUPT,
                             "%s: the row takes its dates from a key that holds none", where);
    case ENV_VERSION:
        return ads_error_set(err, ADS_ECORRUPT, "%s: row envelope version %u is unknown", where,
                             v[4]);
    case ENV_LONGKEY_CUT:
        return ads_error_set(err, ADS_ECORRUPT, "%s: truncated long key", where);
    default:
        return ads_error_set(err, ADS_ECORRUPT, "%s: bad long key length", where);
    }
}


bool ads_row__peek(const unsigned char *skey, size_t skey_len, const unsigned char *v,
                   size_t vlen, unsigned *flags, double *ts)
{
    row_env e;
    if (split(&e, skey, skey_len, v, vlen))
        return false;
    *flags = e.flags;
    *ts = e.ts;
    return true;
}

bool ads_row__key_sound(const unsigned char *skey, size_t skey_len, const unsigned char *v,
                        size_t vlen)
{
    if (ads_chunk__is(v, vlen))
        return ads_chunk__key_sound(skey, skey_len, v, vlen); /* its key is its row 0's */
    row_env e;
    if (split(&e, skey, skey_len, v, vlen))
        return false;
    return ads_key__check_stored(skey, skey_len, e.full_key, e.full_key_len, e.ts, e.systs) == 0;
}

/* The envelope of stored value v: checksum (first, as far as the value's
 * length lets it be computed), version, flags, dates, long key. */
static int parse_envelope(row_env *out, const unsigned char *skey, size_t skey_len,
                          const unsigned char *v, size_t vlen, const char *where, ads_error *err)
{
    if (vlen < 6 || (v[4] == ADS_ROW_VERSION_DUMP && vlen < ADS_ROW_HEADER + 3))
        return envelope_error(ENV_SHORT, v, vlen, where, err);
    if (v[4] == ADS_ROW_VERSION && (v[5] & ROW_KEYDATES) && skey_len < 16 + 5)
        return envelope_error(ENV_NODATES, v, vlen, where, err);
    if ((uint32_t)get_le32(v) != checksum(v, vlen, skey, skey_len))
        return ads_error_set(err, ADS_ECORRUPT, "%s: row checksum mismatch (the row is corrupt)",
                             where);
    int why = split(out, skey, skey_len, v, vlen);
    return why ? envelope_error(why, v, vlen, where, err) : 0;
}

/* The checksum covers the value, not the key it is stored under: a flipped
 * byte there would read as another record, or end a scan early. So the key
 * must frame key values and, in history, end in this row's own dates
 * (checked on every read, as the checksum is). */
static int check_key(const row_env *out, const unsigned char *skey, size_t skey_len,
                     const char *where, ads_error *err)
{
    if (ads_key__check_stored(skey, skey_len, out->full_key, out->full_key_len, out->ts,
                              out->systs))
        return ads_error_set(err, ADS_ECORRUPT,
                             "%s: the key the row is stored under is corrupt", where);
    return 0;
}

int ads_row__parse(row_env *out, const unsigned char *skey, size_t skey_len,
                   const unsigned char *v, size_t vlen, const char *where, ads_error *err)
{
    int rc = parse_envelope(out, skey, skey_len, v, vlen, where, err);
    return rc ? rc : check_key(out, skey, skey_len, where, err);
}

int ads_row__parse_found(row_env *out, const unsigned char *skey, size_t skey_len,
                         const unsigned char *v, size_t vlen, const char *where, ads_error *err)
{
    int rc = parse_envelope(out, skey, skey_len, v, vlen, where, err);
    if (rc || !out->full_key)
        return rc;
    return check_key(out, skey, skey_len, where, err);
}

int ads_row__parse_history(row_env *out, const unsigned char *skey, size_t skey_len,
                           const unsigned char *v, size_t vlen, const char *where,
                           ads_error *err)
{
    int rc = parse_envelope(out, skey, skey_len, v, vlen, where, err);
    if (rc)
        return rc;
    if (out->full_key ? ads_key__check_stored(skey, skey_len, out->full_key, out->full_key_len,
                                              out->ts, out->systs)
                      : ads_key__check_dates(skey, skey_len, out->ts, out->systs))
        return ads_error_set(err, ADS_ECORRUPT,
                             "%s: the key the row is stored under is corrupt", where);
    return 0;
}

void ads_row__fill(ads_row *row, ads_txn *txn, const ads_type *t, const unsigned char *skey,
                   size_t skey_len, const row_env *e, bool latest, ads_arena *a)
{
    row->priv.names = ads_txn__names(txn);
    row->type = t;
    row->key = e->full_key ? e->full_key : skey;
    row->key_len = e->full_key ? e->full_key_len : skey_len;
    row->ts = e->ts;
    row->ts_offset = e->offset;
    row->systime_us = e->systs;
    row->deleted = (e->flags & ROW_DELETED) != 0;
    row->latest = latest;
    row->data = e->data;
    row->len = e->len;
    row->priv.mv_ready = false;
    row->priv.arena = a;
}

/* ---- the row view ---- */

static ads_value timeline_value(const ads_row *row, int which)
{
    switch (which) {
    case 1:
        return ads_abstime(row->ts, row->ts_offset);
    case 2:
        return ads_abstime((double)row->systime_us / 1e6, 0);
    case 3:
        return ads_bool(row->latest);
    default:
        return ads_bool(row->deleted);
    }
}

static int row_lookup(const void *self, const char *name, size_t len, uint32_t hash,
                      ads_arena *arena, ads_value *value, const ads_expr **expr)
{
    (void)hash;
    (void)arena;
    ads_row *row = (ads_row *)self;
    int which = ads_row__timeline_attr(name, len);
    if (which) {
        *value = timeline_value(row, which);
        *expr = NULL;
        return 1;
    }
    if (!row->priv.mv_ready) {
        int rc = ads_msgpack__view_open(&row->priv.mv, row->data, row->len, row->priv.names,
                                        row->priv.arena, NULL);
        if (rc)
            return rc;
        row->priv.mv_ready = true;
    }
    return ads_msgpack_view_lookup(value, expr, &row->priv.mv, name, len, NULL);
}

/* The row's data for every name but the timeline attributes (which rows do
 * not store: the envelope has them), so that evaluation finds names by their
 * hints; NULL leaves a name, or a row whose data do not read, to lookup. */
static ads_msgpack_view *row_data(const void *self, const char *name, size_t len)
{
    ads_row *row = (ads_row *)self;
    if (ads_row__timeline_attr(name, len))
        return NULL;
    if (!row->priv.mv_ready) {
        if (ads_msgpack__view_open(&row->priv.mv, row->data, row->len, row->priv.names,
                                   row->priv.arena, NULL))
            return NULL;
        row->priv.mv_ready = true;
    }
    return &row->priv.mv;
}

static const ads_view_ops row_view_ops = {row_lookup, row_data};

ads_view ads_row_view(ads_row *row, const ads_view *parent)
{
    ads_view v = {&row_view_ops, row, parent};
    return v;
}

int ads_row_record(const ads_record **out, const ads_row *row, unsigned flags, ads_arena *a,
                   ads_error *err)
{
    const ads_record *r;
    int rc = ads_msgpack__decode_row(&r, a, row->data, row->len, row->priv.names,
                                     ADS_MSGPACK_COPY, err);
    if (rc)
        return rc;
    if (!(flags & ADS_ROW_TIMELINE)) {
        *out = r;
        return 0;
    }
    ads_record_builder *b;
    if ((rc = ads_record_builder_new(&b, a, err)))
        return rc;
    for (size_t i = 0; i < ads_record_size(r) && !rc; i++) {
        ads_str n = ads_record_name(r, i);
        rc = ads_record_builder_add(b, n.p, n.len, ads_record_expr(r, i), err);
    }
    static const char *const names[] = {ads_attr__timestamp, ads_attr__systime, ads_attr__latest,
                                        ads_attr__deleted};
    for (int w = 1; w <= 4 && !rc; w++) {
        ads_value v = timeline_value(row, w);
        rc = ads_record_builder_add_value(b, names[w - 1], strlen(names[w - 1]), &v, err);
    }
    if (rc)
        return rc;
    *out = ads_record_builder_finish(b);
    return 0;
}

int ads_row_key_values(ads_value *out, const ads_row *row, ads_arena *a, ads_error *err)
{
    const ads_type *t = row->type;
    ads_value *items = ads_arena_alloc(a, (t->nkeys ? t->nkeys : 1) * sizeof *items);
    if (!items)
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    ads_msgpack_view mv;
    int rc = ads_msgpack__view_open(&mv, row->data, row->len, row->priv.names, a, err);
    if (rc)
        return rc;
    for (size_t i = 0; i < t->nkeys; i++) {
        const ads_expr *e = NULL;
        rc = ads_msgpack_view_lookup(&items[i], &e, &mv, t->keys[i].p, t->keys[i].len, err);
        if (rc < 0)
            return rc;
        if (rc == 0 || e)
            items[i] = ads_undefined();
        else if (items[i].type == ADS_STRING &&
                 (rc = ads_string_copy(&items[i], a, items[i].u.s.p, items[i].u.s.len)))
            return ads_error_set(err, rc, "out of memory");
    }
    *out = ads_list(items, t->nkeys);
    return 0;
}

/* ---- entries: rows taken apart and put together as bytes ---- */

int ads_row__entries(row_entry **out, size_t *n, const unsigned char *data, size_t len,
                     const ads_msgpack_names *names, ads_arena *a, ads_error *err)
{
    ads_msgpack_view mv;
    int rc = ads_msgpack__view_open(&mv, data, len, names, a, err);
    if (rc)
        return rc;
    size_t cnt = mv.n ? mv.n : 1;
    row_entry *e = ads_arena_alloc(a, cnt * sizeof *e);
    ads_str *nm = ads_arena_alloc(a, cnt * sizeof *nm);
    size_t *vat = ads_arena_alloc(a, 2 * cnt * sizeof *vat), *vend = vat ? vat + cnt : NULL;
    if (!e || !nm || !vat)
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    /* the entries through the row's index (short names and ids read there) */
    if ((rc = ads_msgpack__entries(&mv, nm, vat, vend, err)))
        return rc;
    for (size_t i = 0; i < mv.n; i++) {
        size_t at = ads_msgpack__index_off(&mv, i);
        e[i].name = (const unsigned char *)nm[i].p;
        e[i].name_len = nm[i].len;
        e[i].raw = mv.body + at;
        e[i].raw_len = vend[i] - at;
        e[i].value = mv.body + vat[i];
        e[i].value_len = vend[i] - vat[i];
        bool canon;
        if (!mv.names || !ads_msgpack__id_head(e[i].raw, vat[i] - at, &e[i].id, &canon))
            e[i].id = ADS_ROW_NO_ID;
    }
    *out = e;
    *n = mv.n;
    return 0;
}

static int buf_write(void *data, const char *p, size_t n)
{
    ads_buf *b = data;
    ads_buf_add(b, p, n);
    return b->failed ? -1 : 0;
}

/* The bytes of a string header for a name of len bytes, into h. */
static size_t str_head(unsigned char *h, size_t len)
{
    if (len <= 31) {
        h[0] = (unsigned char)(0xa0 | len);
        return 1;
    }
    if (len <= 0xff) {
        h[0] = 0xd9;
        h[1] = (unsigned char)len;
        return 2;
    }
    if (len <= 0xffff) {
        h[0] = 0xda;
        h[1] = (unsigned char)(len >> 8);
        h[2] = (unsigned char)len;
        return 3;
    }
    h[0] = 0xdb;
    for (int i = 0; i < 4; i++)
        h[1 + i] = (unsigned char)(len >> (24 - 8 * i));
    return 5;
}

/* The bytes of entry e's key: a name (its header, then its bytes) or an id. */
static size_t key_size(const row_entry *e, bool ids)
{
    unsigned char h[5];
    return ids ? ads_msgpack__id_size(e->id) : str_head(h, e->name_len) + e->name_len;
}

static unsigned char *put_key(unsigned char *p, const row_entry *e, bool ids)
{
    if (ids)
        return p + ads_msgpack__put_id(p, e->id);
    p += str_head(p, e->name_len);
    memcpy(p, e->name, e->name_len);
    return p + e->name_len;
}

int ads_row__from_entries(ads_buf *out, const row_entry *e, size_t n, bool ids, ads_error *err)
{
    msgpack_packer pk;
    unsigned char maphead[5];
    size_t mh = n <= 15 ? 1 : n <= 0xffff ? 3 : 5;
    if (n <= 15) {
        maphead[0] = (unsigned char)(0x80 | n);
    } else if (n <= 0xffff) {
        maphead[0] = 0xde;
        maphead[1] = (unsigned char)(n >> 8);
        maphead[2] = (unsigned char)n;
    } else {
        maphead[0] = 0xdf;
        for (int i = 0; i < 4; i++)
            maphead[1 + i] = (unsigned char)(n >> (24 - 8 * i));
    }
    size_t last = mh, total = mh;
    for (size_t i = 0; i < n; i++) {
        last = total;
        total += key_size(&e[i], ids) + e[i].value_len;
    }
    if (last > UINT32_MAX)
        return ads_error_set(err, ADS_ELIMIT, "row of %zu bytes is too large", total);
    unsigned width = last <= 0xff ? 1 : last <= 0xffff ? 2 : 4;
    if (n > (UINT32_MAX - 2) / width)
        return ads_error_set(err, ADS_ELIMIT, "row of %zu attributes is too large", n);
    size_t start = out->len;
    msgpack_packer_init(&pk, out, buf_write);
    msgpack_pack_array(&pk, 2);
    msgpack_pack_ext(&pk, 2 + n * width, ADS_MSGPACK_EXT_ROW);
    unsigned char vw[2] = {ids ? ADS_MSGPACK_VERSION_IDS : ADS_MSGPACK_VERSION,
                           (unsigned char)width};
    ads_buf_add(out, vw, 2);
    unsigned char *o = (unsigned char *)ads_buf_extend(out, n * width + total);
    if (!o || out->failed) {
        out->len = start;
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    }
    /* the index of offsets (from the map's header), then the map */
    unsigned char *map = o + n * width, *at = map + mh;
    memcpy(map, maphead, mh);
    for (size_t i = 0; i < n; i++, o += width) {
        size_t off = (size_t)(at - map);
        for (unsigned j = 0; j < width; j++)
            o[j] = (unsigned char)(off >> (8 * (width - 1 - j)));
        at = put_key(at, &e[i], ids);
        memcpy(at, e[i].value, e[i].value_len);
        at += e[i].value_len;
    }
    return 0;
}

/* ---- rows between the store's form and the dump's ---- */

/* The stored row env (under skey) again, its MessagePack row rewritten: to
 * attribute ids through txn's name table (ids: a stored row, envelope
 * version 2), or back to names (a dump's row, envelope version 1). */
static int rekey(ads_buf *out, ads_buf *data, ads_txn *txn, bool ids, const unsigned char *skey,
                 size_t skey_len, const row_env *env, ads_error *err)
{
    ads_buf_clear(data);
    int rc = ids ? ads_names__encode_limited(txn, data, env->data, env->len, err)
                 : ads_msgpack__to_names(data, env->data, env->len, ads_txn__names(txn), err);
    if (!rc) {
        build(out, ids ? ADS_ROW_VERSION : ADS_ROW_VERSION_DUMP, skey, skey_len,
              env->flags & ROW_DELETED, env->ts, env->offset, env->systs, env->full_key,
              env->full_key_len, (const unsigned char *)data->p, data->len);
        if (out->failed)
            rc = ads_error_set(err, ADS_ENOMEM, "out of memory");
    }
    return rc;
}

int ads_row__to_ids(ads_buf *out, ads_buf *scratch, ads_txn *txn, const unsigned char *skey,
                    size_t skey_len, const row_env *env, ads_error *err)
{
    return rekey(out, scratch, txn, true, skey, skey_len, env, err);
}

int ads_row__to_names(ads_buf *out, ads_buf *scratch, ads_txn *txn, const unsigned char *skey,
                      size_t skey_len, const row_env *env, ads_error *err)
{
    return rekey(out, scratch, txn, false, skey, skey_len, env, err);
}
