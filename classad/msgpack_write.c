/*
 * classad/msgpack_write.c: the writer of ClassAd values and rows as
 * canonical MessagePack (classad/msgpack.h; the format is docs/formats.md,
 * "MessagePack values and rows"). classad/msgpack.c reads what this writes.
 *
 * Bytes go straight into the caller's ads_buf: each item's header is built
 * in a few bytes on the stack and appended with its payload, so a record
 * costs a handful of inline appends and no call through a write callback.
 * The forms are the canonical ones the reader insists on: the smallest
 * integer form, fixstr / str8 / str16 / str32 by length, fixarray and
 * fixmap below 16 entries, fixext for payloads of 1, 2, 4, 8 and 16 bytes,
 * float64 for every real with NaN as the one quiet NaN.
 *
 * A row sorts its attributes by case-folded name and checks that no two
 * names are equal ignoring case. A bulk load encodes many records with the
 * same names in the same order; given an ads_msgpack_order memo, the writer
 * remembers the last top-level record's names (exact bytes, in the record's
 * own order) and the sorted order it found for them, and a record with the
 * same name list reuses that order without folding, sorting or checking
 * again. It remembers one list per attribute count modulo ORDER_SHAPES: a
 * load's records come in a few shapes, often told apart by their counts
 * (machines with and without GPUs), and in no order. With the list it
 * remembers the width of the row's offsets (one byte for a row body under
 * 256 bytes), so that the body is written after a header of the right size
 * and not moved once the header is known.
 *
 * ads_msgpack_encode_values writes an array of values as the record of
 * those literals would be written, without making the record.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/bytes.h"
#include "classad/classad_int.h"
#include "classad/expr_memo.h"
#include "classad/msgpack.h"

#define CANONICAL_NAN 0x7ff8000000000000ull

typedef struct wr {
    ads_buf *out;
    ads_error *err;
    ads_expr_memo *exprs; /* expression texts written before, or NULL */
    bool may_use_ids;     /* a row of a memo shape with ids is keyed by them */
    bool used_ids;        /* it was: the row has attribute ids */
    uint64_t tag;         /* then: the shape's tag */
    bool plain;           /* and no undefined value, no name beginning with '_' */
} wr;

/* ---- items ---- */

/* v big-endian in width bytes at p (always inlined: a constant width
 * makes it a byte swap and one store) */
static inline __attribute__((always_inline)) void put_be(unsigned char *p, uint64_t v,
                                                         unsigned width)
{
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    switch (width) {
    case 1:
        p[0] = (unsigned char)v;
        return;
    case 2: {
        uint16_t x = __builtin_bswap16((uint16_t)v);
        memcpy(p, &x, 2);
        return;
    }
    case 4: {
        uint32_t x = __builtin_bswap32((uint32_t)v);
        memcpy(p, &x, 4);
        return;
    }
    case 8: {
        uint64_t x = __builtin_bswap64(v);
        memcpy(p, &x, 8);
        return;
    }
    default:
        break;
    }
#endif
    for (unsigned i = 0; i < width; i++)
        p[i] = (unsigned char)(v >> (8 * (width - 1 - i)));
}

/* A header: tag, then v big-endian in width bytes (0: the tag alone). */
static inline __attribute__((always_inline)) void put_head(wr *w, unsigned char tag, uint64_t v,
                                                           unsigned width)
{
    unsigned char h[9];
    h[0] = tag;
    put_be(h + 1, v, width);
    ads_buf_add(w->out, h, 1 + width);
}

static inline void put_byte(wr *w, unsigned char c)
{
    ads_buf_addc(w->out, (char)c);
}

/* A header at p: tag, then v big-endian in width bytes. Its length. */
static inline __attribute__((always_inline)) size_t head_at(unsigned char *p, unsigned char tag,
                                                            uint64_t v, unsigned width)
{
    p[0] = tag;
    put_be(p + 1, v, width);
    return 1 + width;
}

/* The shortest form of integer i at p (room for 9): its length. */
static inline __attribute__((always_inline)) size_t int_at(unsigned char *p, int64_t i)
{
    if (i >= 0) {
        uint64_t u = (uint64_t)i;
        if (u < 0x80) {
            p[0] = (unsigned char)u;
            return 1;
        }
        if (u <= 0xff)
            return head_at(p, 0xcc, u, 1);
        if (u <= 0xffff)
            return head_at(p, 0xcd, u, 2);
        if (u <= 0xffffffffu)
            return head_at(p, 0xce, u, 4);
        return head_at(p, 0xcf, u, 8);
    }
    if (i >= -32) {
        p[0] = (unsigned char)(0xe0 | (i + 32));
        return 1;
    }
    if (i >= INT8_MIN)
        return head_at(p, 0xd0, (uint64_t)i, 1);
    if (i >= INT16_MIN)
        return head_at(p, 0xd1, (uint64_t)i, 2);
    if (i >= INT32_MIN)
        return head_at(p, 0xd2, (uint64_t)i, 4);
    return head_at(p, 0xd3, (uint64_t)i, 8);
}

static uint64_t bits_of(double d)
{
    uint64_t bits;
    if (isnan(d))
        return CANONICAL_NAN;
    memcpy(&bits, &d, sizeof bits);
    return bits;
}

/* A string's header at p (room for 5; n at most UINT32_MAX): fixstr, str8,
 * str16 or str32. Its length. */
static inline size_t str_head_at(unsigned char *p, size_t n)
{
    if (n < 32) {
        p[0] = (unsigned char)(0xa0 | n);
        return 1;
    }
    if (n <= 0xff)
        return head_at(p, 0xd9, n, 1);
    if (n <= 0xffff)
        return head_at(p, 0xda, n, 2);
    return head_at(p, 0xdb, n, 4);
}

static void put_str_head(wr *w, size_t n)
{
    unsigned char h[5];
    ads_buf_add(w->out, h, str_head_at(h, n));
}

static inline void put_str(wr *w, const char *p, size_t n)
{
    ads_buf *b = w->out;
    if (n < 32 && !b->failed && b->cap - b->len > n + 1) {
        /* most names and strings: a fixstr, header and bytes in one step */
        unsigned char *at = (unsigned char *)b->p + b->len;
        at[0] = (unsigned char)(0xa0 | n);
        if (n)
            ads_bytes_copy(at + 1, p, n);
        b->len += n + 1;
        b->p[b->len] = '\0';
        return;
    }
    put_str_head(w, n);
    ads_buf_add(b, p, n);
}

static void put_count(wr *w, size_t n, unsigned char fix, unsigned char t16)
{
    if (n < 16)
        put_byte(w, (unsigned char)(fix | n));
    else if (n <= 0xffff)
        put_head(w, t16, n, 2);
    else
        put_head(w, (unsigned char)(t16 + 1), n, 4);
}

/* An extension header for a payload of len bytes (the payload follows). */
/* The header of an extension of len bytes (at most UINT32_MAX) and type, at
 * h (NULL: only counted): the fixext form for 1, 2, 4, 8 and 16 bytes, else
 * ext8, ext16 or ext32. Its length, 2 to 6 bytes. */
static inline size_t ext_head(unsigned char *h, size_t len, int type)
{
    unsigned char fix = len == 1 ? 0xd4 : len == 2 ? 0xd5 : len == 4 ? 0xd6 : len == 8 ? 0xd7
                      : len == 16 ? 0xd8 : 0;
    unsigned width = fix ? 0 : len <= 0xff ? 1 : len <= 0xffff ? 2 : 4;
    if (h) {
        h[0] = fix ? fix : width == 1 ? 0xc7 : width == 2 ? 0xc8 : 0xc9;
        put_be(h + 1, len, width);
        h[1 + width] = (unsigned char)type;
    }
    return 2 + width;
}

static int put_ext_head(wr *w, size_t len, int type)
{
    if (len > UINT32_MAX)
        return ads_error_set(w->err, ADS_ELIMIT, "msgpack: extension of %zu bytes is too large",
                             len);
    unsigned char h[6];
    ads_buf_add(w->out, h, ext_head(h, len, type));
    return 0;
}

/* ---- attribute order ---- */

typedef struct attr_ref {
    uint64_t prefix; /* the folded first 8 bytes, big-endian: orders most names alone */
    ads_str name;
    uint32_t i;      /* the attribute's place in the record */
} attr_ref;

static uint64_t fold_prefix(const char *p, size_t len)
{
    /* the first 8 bytes (zero padded), ASCII upper case folded eight at a
     * time, as a big-endian number: compares as the folded bytes do */
    uint64_t x = 0;
    memcpy(&x, p, len < 8 ? len : 8);
    const uint64_t ones = UINT64_C(0x0101010101010101), high = ones * 0x80;
    uint64_t low7 = x & ~high;
    uint64_t ge_a = low7 + ones * (0x80 - 'A');     /* high bit: byte >= 'A' */
    uint64_t gt_z = low7 + ones * (0x80 - 'Z' - 1); /* high bit: byte > 'Z' */
    uint64_t upper = ge_a & ~gt_z & ~x & high;
    x |= upper >> 2;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    x = __builtin_bswap64(x);
#endif
    return x;
}

static int attr_ref_cmp(const void *a, const void *b)
{
    const attr_ref *x = a, *y = b;
    if (x->prefix != y->prefix)
        return x->prefix < y->prefix ? -1 : 1;
    int c = ads_msgpack__name_cmp((const unsigned char *)x->name.p, x->name.len,
                     (const unsigned char *)y->name.p, y->name.len);
    if (c)
        return c;
    size_t n = x->name.len < y->name.len ? x->name.len : y->name.len;
    c = n ? memcmp(x->name.p, y->name.p, n) : 0;
    return c ? c : (x->name.len > y->name.len) - (x->name.len < y->name.len);
}

/* Sort refs (n of them): an insertion sort for small records, which are
 * often nearly in order already, qsort for the rest. */
static void sort_refs(attr_ref *refs, size_t n)
{
    if (n > 32) {
        qsort(refs, n, sizeof *refs, attr_ref_cmp);
        return;
    }
    for (size_t i = 1; i < n; i++) {
        attr_ref t = refs[i];
        size_t j = i;
        while (j > 0 && (refs[j - 1].prefix > t.prefix ||
                         (refs[j - 1].prefix == t.prefix && attr_ref_cmp(&refs[j - 1], &t) > 0))) {
            refs[j] = refs[j - 1];
            j--;
        }
        refs[j] = t;
    }
}

/* Check sorted refs: no empty name, no two equal ignoring case. */
static int check_refs(wr *w, const attr_ref *refs, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (refs[i].name.len == 0)
            return ads_error_set(w->err, ADS_EINVAL,
                                 "msgpack: a record has an empty attribute name");
        if (i > 0 && refs[i - 1].prefix == refs[i].prefix &&
            ads_msgpack__name_cmp((const unsigned char *)refs[i - 1].name.p, refs[i - 1].name.len,
                     (const unsigned char *)refs[i].name.p, refs[i].name.len) == 0)
            return ads_error_set(w->err, ADS_EINVAL,
                                 "msgpack: a record has two attributes named '%.*s' (ignoring case)",
                                 (int)(refs[i].name.len > 60 ? 60 : refs[i].name.len),
                                 refs[i].name.p);
        if (refs[i].name.len > UINT32_MAX)
            return ads_error_set(w->err, ADS_ELIMIT, "msgpack: attribute name too long");
    }
    return 0;
}

#define ORDER_SHAPES ADS_MSGPACK_ORDER_SHAPES

/* The names of a record and their sorted order. */
typedef struct name_order {
    size_t n;         /* attributes of the remembered record; 0: nothing remembered */
    unsigned width;   /* the width of its row's offsets (1, 2 or 4), 0 if unknown */
    ads_buf names;    /* their names in the record's order, back to back */
    size_t *ends;     /* ends[i]: where name i ends in names */
    uint32_t *sorted; /* sorted[k]: the record index of the k-th name in row order */
    size_t cap;
    uint64_t *ids;    /* with_ids: ids[k], the attribute id of the k-th name in row order */
    bool with_ids;    /* set by ads_msgpack__memo_set_ids for these names */
    uint64_t tag;     /* the caller's fact about them, given with the ids */
    bool under;       /* a name begins with '_' (as every timeline attribute's does) */
} name_order;

/* The memo of the last rows' names and their sorted order. */
struct ads_msgpack_order {
    name_order shapes[ORDER_SHAPES]; /* the last record of each count modulo ORDER_SHAPES */
    uint64_t *offsets; /* scratch for the row index */
    size_t cap;        /* of offsets */
    ads_expr_memo *exprs; /* expressions and their text, for rows that repeat them */
    bool exprs_failed;    /* no memory for that memo: unparse every time */
    uint64_t kept;        /* shapes kept so far (memo_keep) */
};

int ads_msgpack_order_new(ads_msgpack_order **out, ads_error *err)
{
    if (!out)
        return ads_error_set(err, ADS_EINVAL, "msgpack: NULL argument");
    if (!(*out = calloc(1, sizeof **out)))
        return ads_error_set(err, ADS_ENOMEM, "msgpack: out of memory");
    return 0;
}

uint64_t ads_msgpack__memo_kept(const ads_msgpack_order *memo)
{
    return memo->kept;
}

void ads_msgpack_order_free(ads_msgpack_order *o)
{
    if (!o)
        return;
    for (size_t i = 0; i < ORDER_SHAPES; i++) {
        ads_buf_free(&o->shapes[i].names);
        free(o->shapes[i].ends);
        free(o->shapes[i].sorted);
        free(o->shapes[i].ids);
    }
    free(o->offsets);
    ads_expr_memo_free(o->exprs);
    free(o);
}

/* Does the memo hold exactly these n names, in this order? */
static bool memo_matches(const ads_msgpack_order *memo, const ads_str *names, size_t n)
{
    const name_order *o = &memo->shapes[n % ORDER_SHAPES];
    if (o->n != n || o->n == 0)
        return false;
    size_t at = 0;
    for (size_t i = 0; i < n; i++) {
        size_t len = o->ends[i] - at;
        if (names[i].len != len || !ads_bytes_same(names[i].p, o->names.p + at, len))
            return false;
        at = o->ends[i];
    }
    return true;
}

/* Room in the memo's offsets for n attributes; false when out of memory. */
static bool memo_reserve(ads_msgpack_order *o, size_t n)
{
    if (n <= o->cap)
        return true;
    size_t cap = n < 64 ? 64 : n;
    uint64_t *offsets = realloc(o->offsets, cap * sizeof *offsets);
    if (!offsets)
        return false;
    o->offsets = offsets;
    o->cap = cap;
    return true;
}

/* Room in a remembered order for n attributes; false when out of memory. */
static bool order_reserve(name_order *o, size_t n)
{
    if (n <= o->cap)
        return true;
    o->n = 0;
    size_t cap = n < 64 ? 64 : n;
    size_t *ends = realloc(o->ends, cap * sizeof *ends);
    if (ends)
        o->ends = ends;
    uint32_t *sorted = ends ? realloc(o->sorted, cap * sizeof *sorted) : NULL;
    if (!sorted)
        return false;
    o->sorted = sorted;
    o->cap = cap;
    return true;
}

/* Remember n names and their sorted order (best effort: a memo that
 * cannot grow is left empty). */
static void memo_keep(ads_msgpack_order *memo, const ads_str *names, size_t n,
                      const attr_ref *refs)
{
    name_order *o = &memo->shapes[n % ORDER_SHAPES];
    memo->kept++;
    o->n = 0;
    o->width = 0;
    o->with_ids = false;
    if (!order_reserve(o, n))
        return;
    ads_buf_clear(&o->names);
    o->under = false;
    for (size_t i = 0; i < n; i++) {
        ads_buf_add(&o->names, names[i].p, names[i].len);
        o->ends[i] = o->names.len;
        o->sorted[i] = refs[i].i;
        o->under |= names[i].len && names[i].p[0] == '_';
    }
    if (!o->names.failed)
        o->n = n;
}

/* ---- values, lists, records ---- */

static int w_expr(wr *w, const ads_expr *x, int depth);
static int w_value(wr *w, const ads_value *v, int depth);

/* A container at nesting level depth + 1 (the row's map is level 1). */
static int deeper(wr *w, int depth)
{
    if (depth + 1 > ADS_MAX_DEPTH)
        return ads_error_set(w->err, ADS_ELIMIT, "msgpack: value nested deeper than %d levels",
                             ADS_MAX_DEPTH);
    return 0;
}

/* A record's attributes: n names, with an expression each (exprs) or a
 * value each (values, an array of values written without a record). */
typedef struct attrs {
    const ads_str *names;
    size_t n;
    const ads_expr *const *exprs;
    const ads_value *values;
} attrs;

/* Attribute i's value when it is a plain value (a literal), else NULL. */
static inline const ads_value *plain_value(const attrs *r, size_t i)
{
    if (r->values)
        return &r->values[i];
    const ads_expr *x = r->exprs[i];
    return x->kind == N_LITERAL ? &x->u.lit : NULL;
}

/* Room for n more bytes (and the NUL after them) at the end of b: where
 * they start, or NULL when the buffer failed. */
static inline unsigned char *room_for(ads_buf *b, size_t n)
{
    if (!b->failed && b->cap - b->len > n)
        return (unsigned char *)b->p + b->len;
    if (!ads_buf_extend(b, n))
        return NULL;
    b->len -= n;
    return (unsigned char *)b->p + b->len;
}

/* A plain value's bytes at q (room for bound_of's): the end. */
static inline __attribute__((always_inline)) unsigned char *plain_at(unsigned char *q,
                                                                     const ads_value *v)
{
    switch (v->type) {
    case ADS_UNDEFINED:
        *q++ = 0xc0;
        break;
    case ADS_BOOLEAN:
        *q++ = v->u.b ? 0xc3 : 0xc2;
        break;
    case ADS_INTEGER:
        q += int_at(q, v->u.i);
        break;
    case ADS_REAL:
        q += head_at(q, 0xcb, bits_of(v->u.r), 8);
        break;
    case ADS_ABSTIME: /* w_value's payloads */
        q += ext_head(q, 12, ADS_MSGPACK_EXT_ABSTIME);
        put_be(q, bits_of(v->u.abs.secs), 8);
        put_be(q + 8, (uint32_t)v->u.abs.offset, 4);
        q += 12;
        break;
    case ADS_RELTIME:
        q += ext_head(q, 8, ADS_MSGPACK_EXT_RELTIME);
        put_be(q, bits_of(v->u.rel), 8);
        q += 8;
        break;
    case ADS_IDENT:
        q += ext_head(q, 16, ADS_MSGPACK_EXT_IDENT);
        put_be(q, v->u.id.hi, 8);
        put_be(q + 8, v->u.id.lo, 8);
        q += 16;
        break;
    default: /* ADS_STRING, of at most UINT32_MAX bytes */
        q += str_head_at(q, v->u.s.len);
        if (v->u.s.len)
            ads_bytes_copy(q, v->u.s.p, v->u.s.len);
        q += v->u.s.len;
        break;
    }
    return q;
}

/* The most bytes plain_at writes for v, or 0 when v is written the long
 * way (lists, records, blobs, errors, strings over 4 GiB). */
static inline size_t bound_of(const ads_value *v)
{
    switch (v->type) {
    case ADS_UNDEFINED:
    case ADS_BOOLEAN:
        return 1;
    case ADS_INTEGER:
    case ADS_REAL:
        return 9;
    case ADS_ABSTIME:
    case ADS_RELTIME:
    case ADS_IDENT:
        return 3 + 16; /* a fixext or ext8 header, the payload */
    case ADS_STRING:
        return v->u.s.len <= UINT32_MAX ? 5 + v->u.s.len : 0;
    default:
        return 0;
    }
}

/*
 * w_attrs' map for a record whose names the memo knows (checked): the k-th
 * attribute in row order is the record's at[k], keyed by ids[k] (or by its
 * name when ids is NULL). Each key and plain value (undefined, booleans,
 * numbers, strings, times, ids: a load's usual record) is written straight
 * into room made for both at once, without a check per item; any other
 * value goes the long way. The bytes are w_attrs' own.
 */
static int w_known_attrs(wr *w, const attrs *r, const uint32_t *at, const uint64_t *ids,
                         uint64_t *offsets, size_t body, int depth)
{
    ads_buf *b = w->out;
    size_t n = r->n;
    put_count(w, n, 0x80, 0xde);
    for (size_t k = 0; k < n; k++) {
        size_t i = at[k];
        const ads_value *v = plain_value(r, i);
        size_t val = v ? bound_of(v) : 0;
        if (val == 1 && v->type == ADS_UNDEFINED)
            w->plain = false;
        unsigned char *q0 = room_for(b, (ids ? 5 : 5 + r->names[i].len) + val), *q = q0;
        if (!q)
            return 0; /* the buffer failed: w_finish reports it */
        offsets[k] = b->len - body;
        if (!ids) {
            q += str_head_at(q, r->names[i].len);
            ads_bytes_copy(q, r->names[i].p, r->names[i].len);
            q += r->names[i].len;
        } else if (ids[k] <= 0x7f) {
            *q++ = (unsigned char)ids[k];
        } else {
            q += ads_msgpack__put_id(q, ids[k]);
        }
        if (val) {
            b->len += (size_t)(plain_at(q, v) - q0);
            continue;
        }
        b->len += (size_t)(q - q0);
        b->p[b->len] = '\0';
        int rc = v ? w_value(w, v, depth + 1) : w_expr(w, r->exprs[i], depth + 1);
        if (rc)
            return rc;
    }
    b->p[b->len] = '\0'; /* room_for kept a byte for it */
    return 0;
}

/*
 * The map of attributes r at nesting level depth + 1, sorted. If offsets is
 * given, offsets[k] is set to the position of the k-th key relative to body
 * (an offset into w->out). memo (top-level rows only, may be NULL) supplies
 * or remembers the sorted order.
 */
static int w_attrs(wr *w, const attrs *r, int depth, uint64_t *offsets, size_t body,
                   ads_msgpack_order *memo)
{
    int rc = deeper(w, depth);
    if (rc)
        return rc;
    size_t n = r->n;
    if (n > UINT32_MAX)
        return ads_error_set(w->err, ADS_ELIMIT, "msgpack: record of %zu attributes is too large",
                             n);
    attr_ref small[32];
    attr_ref *refs = small;
    const uint32_t *order = NULL;
    const uint64_t *ids = NULL;
    if (memo && memo_matches(memo, r->names, n)) {
        const name_order *o = &memo->shapes[n % ORDER_SHAPES];
        order = o->sorted;
        if (o->with_ids && w->may_use_ids && offsets) { /* (a row's own map: w_known_attrs) */
            ids = o->ids;
            w->used_ids = true;
            w->tag = o->tag;
            w->plain = !o->under; /* until w_known_attrs writes an undefined value */
        }
    } else {
        if (n > sizeof small / sizeof small[0] && !(refs = malloc(n * sizeof *refs)))
            return ads_error_set(w->err, ADS_ENOMEM, "msgpack: out of memory");
        for (size_t i = 0; i < n; i++) {
            refs[i].name = r->names[i];
            refs[i].i = (uint32_t)i;
            refs[i].prefix = fold_prefix(r->names[i].p, r->names[i].len);
        }
        sort_refs(refs, n);
        if ((rc = check_refs(w, refs, n)))
            goto cleanup;
        if (memo)
            memo_keep(memo, r->names, n, refs);
    }
    if (offsets && order) {
        rc = w_known_attrs(w, r, order, ids, offsets, body, depth);
        goto cleanup;
    }
    put_count(w, n, 0x80, 0xde);
    for (size_t k = 0; k < n && !rc; k++) {
        size_t i = order ? order[k] : refs[k].i;
        if (offsets)
            offsets[k] = w->out->len - body;
        put_str(w, r->names[i].p, r->names[i].len);
        const ads_expr *x = r->values ? NULL : r->exprs[i];
        rc = !x                      ? w_value(w, &r->values[i], depth + 1)
             : x->kind == N_LITERAL ? w_value(w, &x->u.lit, depth + 1)
                                    : w_expr(w, x, depth + 1);
    }
cleanup:
    if (refs != small)
        free(refs);
    return rc;
}

static int w_map(wr *w, const ads_record *r, int depth, uint64_t *offsets, size_t body,
                 ads_msgpack_order *memo)
{
    attrs at = {r->names, r->n, r->exprs, NULL};
    return w_attrs(w, &at, depth, offsets, body, memo);
}

static int w_text_expr(wr *w, const ads_expr *x)
{
    ads_buf text = ADS_BUF_INIT;
    ads_expr__unparse_memo(w->exprs, &text, x);
    int rc = 0;
    if (text.failed)
        rc = ads_error_set(w->err, ADS_ENOMEM, "msgpack: out of memory");
    else if (!(rc = put_ext_head(w, text.len, ADS_MSGPACK_EXT_EXPR)))
        ads_buf_add(w->out, text.p, text.len);
    ads_buf_free(&text);
    return rc;
}

static int w_expr(wr *w, const ads_expr *x, int depth)
{
    int rc;
    switch ((node_kind)x->kind) {
    case N_LITERAL:
        return w_value(w, &x->u.lit, depth);
    case N_LIST:
        if ((rc = deeper(w, depth)))
            return rc;
        if (x->u.list.n > UINT32_MAX)
            return ads_error_set(w->err, ADS_ELIMIT, "msgpack: list too long");
        put_count(w, x->u.list.n, 0x90, 0xdc);
        for (size_t i = 0; i < x->u.list.n; i++)
            if ((rc = w_expr(w, x->u.list.items[i], depth + 1)))
                return rc;
        return 0;
    case N_RECORD:
        return w_map(w, x->u.rec, depth, NULL, 0, NULL);
    case N_UNARY: {
        /* `- 3` (a minus, then a number) unparses as "-3", which reads back
         * as the literal -3: store that value, so that no expression text
         * is ever a plain value (readers refuse those as non-canonical) */
        const ads_expr *a = x->u.ops.a;
        if (x->op == OP_NEG && a->kind == N_LITERAL) {
            const ads_value *lit = &a->u.lit;
            if (lit->type == ADS_INTEGER && lit->u.i >= 0) {
                ads_value neg = ads_int(-lit->u.i);
                return w_value(w, &neg, depth);
            }
            if (lit->type == ADS_REAL && isfinite(lit->u.r) && !signbit(lit->u.r)) {
                ads_value neg = ads_real(-lit->u.r);
                return w_value(w, &neg, depth);
            }
        }
        return w_text_expr(w, x);
    }
    default:
        return w_text_expr(w, x);
    }
}

static int w_blob(wr *w, const ads_blob *b, int depth)
{
    if (b->bytes.len > ADS_MSGPACK_BLOB_MAX)
        return ads_error_set(w->err, ADS_ELIMIT, "msgpack: blob of %zu bytes is over the %zu limit",
                             b->bytes.len, ADS_MSGPACK_BLOB_MAX);
    ads_buf meta = ADS_BUF_INIT;
    int rc = 0;
    if (b->meta) {
        wr sub = {&meta, w->err, w->exprs};
        rc = w_map(&sub, b->meta, depth, NULL, 0, NULL);
        if (!rc && meta.failed)
            rc = ads_error_set(w->err, ADS_ENOMEM, "msgpack: out of memory");
    }
    if (!rc)
        rc = put_ext_head(w, 1 + meta.len + b->bytes.len, ADS_MSGPACK_EXT_BLOB);
    if (!rc) {
        put_byte(w, b->meta ? 1 : 0);
        ads_buf_add(w->out, meta.p, meta.len);
        ads_buf_add(w->out, b->bytes.p, b->bytes.len);
    }
    ads_buf_free(&meta);
    return rc;
}

static int w_value(wr *w, const ads_value *v, int depth)
{
    /* the scalars: plain_at, their one writer */
    size_t bound = bound_of(v);
    if (bound) {
        unsigned char *q = room_for(w->out, bound);
        if (q) {
            w->out->len += (size_t)(plain_at(q, v) - q);
            w->out->p[w->out->len] = '\0';
        }
        return 0; /* a failed buffer: w_finish reports it */
    }
    int rc;
    switch (v->type) {
    case ADS_ERROR:
        return put_ext_head(w, 0, ADS_MSGPACK_EXT_ERROR);
    case ADS_STRING: /* over bound_of's limit */
        return ads_error_set(w->err, ADS_ELIMIT, "msgpack: string of %zu bytes is too long",
                             v->u.s.len);
    case ADS_LIST:
        if ((rc = deeper(w, depth)))
            return rc;
        if (v->u.list.n > UINT32_MAX)
            return ads_error_set(w->err, ADS_ELIMIT, "msgpack: list too long");
        put_count(w, v->u.list.n, 0x90, 0xdc);
        for (size_t i = 0; i < v->u.list.n; i++)
            if ((rc = w_value(w, &v->u.list.items[i], depth + 1)))
                return rc;
        return 0;
    case ADS_RECORD:
        return w_map(w, v->u.rec, depth, NULL, 0, NULL);
    case ADS_BLOB:
        return w_blob(w, v->u.blob, depth);
    default:
        break;
    }
    return ads_error_set(w->err, ADS_EINVAL, "msgpack: value of unknown type %d", (int)v->type);
}

/* ---- entry points ---- */

/* Start writing into out; 0, or ADS_EINVAL / ADS_ENOMEM. */
static int w_start(wr *w, ads_buf *out, const void *arg, ads_error *err)
{
    if (!out || !arg)
        return ads_error_set(err, ADS_EINVAL, "msgpack: NULL argument");
    if (out->failed)
        return ads_error_set(err, ADS_ENOMEM, "msgpack: the output buffer has failed");
    w->out = out;
    w->err = err;
    w->exprs = NULL;
    w->may_use_ids = w->used_ids = w->plain = false;
    w->tag = 0;
    return 0;
}

/* Finish writing what started at out->len == start: on error put out back
 * as it was. */
static int w_finish(wr *w, size_t start, int rc)
{
    if (!rc && w->out->failed)
        rc = ads_error_set(w->err, ADS_ENOMEM, "msgpack: out of memory");
    if (rc) {
        w->out->failed = false;
        w->out->len = start;
        if (w->out->p && start < w->out->cap)
            w->out->p[start] = '\0';
    }
    return rc;
}

int ads_msgpack_encode_value(ads_buf *out, const ads_value *v, ads_error *err)
{
    wr w;
    int rc = w_start(&w, out, v, err);
    if (rc)
        return rc;
    size_t start = out->len;
    return w_finish(&w, start, w_value(&w, v, 0));
}

int ads_msgpack_encode_expr(ads_buf *out, const ads_expr *x, ads_error *err)
{
    wr w;
    int rc = w_start(&w, out, x, err);
    if (rc)
        return rc;
    size_t start = out->len;
    return w_finish(&w, start, w_expr(&w, x, 0));
}

/* The bytes of a row's header (the array of two, the extension header,
 * version, width and n offsets of width bytes), as w_row_head writes it. */
static size_t row_head_len(size_t n, unsigned width)
{
    size_t plen = 2 + n * width;
    return 1 + ext_head(NULL, plen, ADS_MSGPACK_EXT_ROW) + plen;
}

/*
 * The row's header, before its body: the body was written after `room`
 * bytes kept for it from start (the header of the width guessed: the last
 * alike row's, or two bytes), so it moves only when the header takes
 * another size. offsets[i]: where attribute i's key starts, from the
 * body's start. *width_out: the width taken.
 */
static int w_row_head(wr *w, size_t start, size_t room, const uint64_t *offsets, size_t n,
                      unsigned version, unsigned *width_out)
{
    uint64_t last = n ? offsets[n - 1] : 0;
    if (last > UINT32_MAX)
        return ads_error_set(w->err, ADS_ELIMIT,
                             "msgpack: row of %zu bytes is too large for the index",
                             w->out->len - start - room);
    unsigned width = last <= 0xff ? 1 : last <= 0xffff ? 2 : 4;
    *width_out = width;
    if (n > (UINT32_MAX - 2) / width)
        return ads_error_set(w->err, ADS_ELIMIT, "msgpack: record of %zu attributes is too large",
                             n);
    size_t hlen = row_head_len(n, width), body = w->out->len - start - room;
    if (hlen > room && !ads_buf_extend(w->out, hlen - room))
        return 0; /* w_finish reports it */
    unsigned char *p = (unsigned char *)w->out->p;
    if (hlen != room) {
        memmove(p + start + hlen, p + start + room, body);
        w->out->len = start + hlen + body;
        p[w->out->len] = '\0';
    }
    /* the header, written in place */
    unsigned char *h = p + start;
    *h++ = 0x92;
    h += ext_head(h, 2 + n * width, ADS_MSGPACK_EXT_ROW);
    *h++ = (unsigned char)version;
    *h++ = (unsigned char)width;
    if (width == 1) /* a row under 256 bytes: the usual one */
        for (size_t i = 0; i < n; i++)
            h[i] = (unsigned char)offsets[i];
    else
        for (size_t i = 0; i < n; i++, h += width)
            put_be(h, offsets[i], width);
    return 0;
}

/* The width of the offsets a row of n attributes is likely to take: the
 * last one with these names' count took (a load's rows are alike), or 2. */
static unsigned width_guess(const ads_msgpack_order *memo, size_t n)
{
    const name_order *o = memo ? &memo->shapes[n % ORDER_SHAPES] : NULL;
    return o && o->n == n && o->width ? o->width : 2;
}

/* The row of r through memo (may be NULL). with_ids NULL: keyed by names;
 * else keyed by ids when memo knows them for r's names (*with_ids, *tag). */
static int encode_attrs(ads_buf *out, const attrs *r, ads_msgpack_order *memo, bool *with_ids,
                        uint64_t *tag, bool *plain, ads_error *err)
{
    wr w;
    int rc = w_start(&w, out, r, err);
    if (rc)
        return rc;
    w.may_use_ids = with_ids != NULL;
    if (memo && !memo->exprs && !memo->exprs_failed)
        memo->exprs_failed = ads_expr_memo_new(&memo->exprs) != 0;
    w.exprs = memo ? memo->exprs : NULL;
    size_t start = out->len, n = r->n;
    /* room for the header, filled in once the body is */
    unsigned guess = width_guess(memo, n);
    size_t room = n <= (UINT32_MAX - 2) / guess ? row_head_len(n, guess) : 0;
    if (room && !ads_buf_extend(out, room))
        return w_finish(&w, start, 0);
    uint64_t small[32];
    uint64_t *offsets = small;
    if (n > sizeof small / sizeof small[0]) {
        if (memo && memo_reserve(memo, n))
            offsets = memo->offsets;
        else if (!(offsets = n > SIZE_MAX / sizeof *offsets ? NULL : malloc(n * sizeof *offsets)))
            return w_finish(&w, start, ads_error_set(err, ADS_ENOMEM, "msgpack: out of memory"));
    }
    unsigned width = 0;
    if (!(rc = w_attrs(&w, r, 0, offsets, start + room, memo)) && !out->failed)
        rc = w_row_head(&w, start, room, offsets, n,
                        w.used_ids ? ADS_MSGPACK_VERSION_IDS : ADS_MSGPACK_VERSION, &width);
    if (with_ids) {
        *with_ids = w.used_ids;
        *tag = w.tag;
    }
    if (plain)
        *plain = w.used_ids && w.plain;
    if (!rc && memo && memo->shapes[n % ORDER_SHAPES].n == n)
        memo->shapes[n % ORDER_SHAPES].width = width;
    if (offsets != small && (!memo || offsets != memo->offsets))
        free(offsets);
    return w_finish(&w, start, rc);
}

int ads_msgpack__encode_row_ids(ads_buf *out, const ads_record *r, ads_msgpack_order *memo,
                                bool *with_ids, uint64_t *tag, bool *plain, ads_error *err)
{
    if (!r)
        return ads_error_set(err, ADS_EINVAL, "msgpack: NULL argument");
    attrs at = {r->names, r->n, r->exprs, NULL};
    return encode_attrs(out, &at, memo, with_ids, tag, plain, err);
}

int ads_msgpack_encode_row(ads_buf *out, const ads_record *r, ads_msgpack_order *memo,
                           ads_error *err)
{
    return ads_msgpack__encode_row_ids(out, r, memo, NULL, NULL, NULL, err);
}

int ads_msgpack_encode_record(ads_buf *out, const ads_record *r, ads_error *err)
{
    return ads_msgpack_encode_row(out, r, NULL, err);
}

int ads_msgpack__encode_values_ids(ads_buf *out, const ads_str *names, const ads_value *values,
                                   size_t n, ads_msgpack_order *memo, bool *with_ids,
                                   uint64_t *tag, bool *plain, ads_error *err)
{
    if (!out || (n && (!names || !values)))
        return ads_error_set(err, ADS_EINVAL, "NULL argument");
    for (size_t i = 0; i < n; i++)
        if (!names[i].p && names[i].len)
            return ads_error_set(err, ADS_EINVAL, "msgpack: attribute %zu has no name", i);
    /* written as a record of literals would be, without the record */
    attrs at = {names, n, NULL, values};
    return encode_attrs(out, &at, memo, with_ids, tag, plain, err);
}

int ads_msgpack_encode_values(ads_buf *out, const ads_str *names, const ads_value *values,
                              size_t n, ads_msgpack_order *memo, ads_error *err)
{
    return ads_msgpack__encode_values_ids(out, names, values, n, memo, NULL, NULL, NULL, err);
}

/* ---- the memo's shapes, for a writer that keys rows by attribute ids ---- */

size_t ads_msgpack__memo_shape(const ads_msgpack_order *memo, unsigned slot, ads_str *names,
                               size_t cap, bool *with_ids)
{
    const name_order *o = &memo->shapes[slot % ORDER_SHAPES];
    if (o->n == 0 || o->n > cap)
        return 0;
    for (size_t k = 0; k < o->n; k++) {
        uint32_t i = o->sorted[k];
        size_t from = i ? o->ends[i - 1] : 0;
        names[k].p = o->names.p + from;
        names[k].len = o->ends[i] - from;
    }
    *with_ids = o->with_ids;
    return o->n;
}

void ads_msgpack__memo_set_ids(ads_msgpack_order *memo, unsigned slot, size_t n,
                               const uint64_t *ids, uint64_t tag)
{
    name_order *o = &memo->shapes[slot % ORDER_SHAPES];
    if (o->n != n || n == 0)
        return;
    uint64_t *mine = realloc(o->ids, n * sizeof *mine);
    if (!mine) {
        o->with_ids = false; /* the memo is only a memo */
        return;
    }
    memcpy(mine, ids, n * sizeof *mine);
    o->ids = mine;
    o->tag = tag;
    o->with_ids = true;
}

void ads_msgpack__memo_copy_ids(ads_msgpack_order *dst, const ads_msgpack_order *src)
{
    for (size_t slot = 0; slot < ORDER_SHAPES; slot++) {
        const name_order *s = &src->shapes[slot];
        name_order *d = &dst->shapes[slot];
        if (!s->with_ids || s->n == 0 ||
            (d->with_ids && d->n == s->n && d->tag == s->tag && d->names.len == s->names.len &&
             memcmp(d->names.p, s->names.p, s->names.len) == 0 &&
             memcmp(d->sorted, s->sorted, s->n * sizeof *s->sorted) == 0 &&
             memcmp(d->ids, s->ids, s->n * sizeof *s->ids) == 0))
            continue;
        d->n = 0;
        d->with_ids = false;
        uint64_t *ids = order_reserve(d, s->n) ? realloc(d->ids, s->n * sizeof *ids) : NULL;
        if (!ids)
            continue; /* the memo is only a memo */
        d->ids = ids;
        ads_buf_clear(&d->names);
        ads_buf_add(&d->names, s->names.p, s->names.len);
        if (d->names.failed)
            continue;
        memcpy(d->ends, s->ends, s->n * sizeof *s->ends);
        memcpy(d->sorted, s->sorted, s->n * sizeof *s->sorted);
        memcpy(d->ids, s->ids, s->n * sizeof *s->ids);
        d->width = s->width;
        d->tag = s->tag;
        d->under = s->under;
        d->with_ids = true;
        d->n = s->n;
    }
}

/* ---- rows with attribute ids ---- */

/* The bytes of the canonical form of unsigned id. */
/* The bytes of attribute i's key: its id, or its name with its header. */
static inline size_t entry_size(const uint64_t *ids, const ads_str *keys, size_t i)
{
    if (!keys)
        return ads_msgpack__id_size(ids[i]);
    size_t l = keys[i].len;
    return (l <= 31 ? 1 : l <= 0xff ? 2 : l <= 0xffff ? 3 : 5) + l;
}

/* The row of view mv again with its keys given: ids (keys NULL) or names.
 * keys[i] / ids[i] for attribute i; vat / vend: where its value lies in
 * mv->body. The header comes first, its offsets known before the body is
 * written, so nothing moves. */
static int w_rekeyed(wr *w, const ads_msgpack_view *mv, const uint64_t *ids, const ads_str *keys,
                     const size_t *vat, const size_t *vend)
{
    size_t n = mv->n;
    size_t mh = n < 16 ? 1 : n <= 0xffff ? 3 : 5;
    uint64_t last = mh, total = mh;
    for (size_t i = 0; i < n; i++) {
        last = total;
        total += entry_size(ids, keys, i) + (vend[i] - vat[i]);
    }
    if (last > UINT32_MAX)
        return ads_error_set(w->err, ADS_ELIMIT,
                             "msgpack: row of %llu bytes is too large for the index",
                             (unsigned long long)total);
    unsigned width = last <= 0xff ? 1 : last <= 0xffff ? 2 : 4;
    if (n > (UINT32_MAX - 2) / width)
        return ads_error_set(w->err, ADS_ELIMIT, "msgpack: record of %zu attributes is too large",
                             n);
    put_byte(w, 0x92);
    (void)put_ext_head(w, 2 + n * width, ADS_MSGPACK_EXT_ROW);
    put_byte(w, keys ? ADS_MSGPACK_VERSION : ADS_MSGPACK_VERSION_IDS);
    put_byte(w, (unsigned char)width);
    /* the offsets and the body, written in place: their size is known */
    unsigned char *o = (unsigned char *)ads_buf_extend(w->out, n * width);
    if (!o)
        return 0; /* w_finish reports it */
    uint64_t off = mh;
    for (size_t i = 0; i < n; i++, o += width) {
        put_be(o, off, width);
        off += entry_size(ids, keys, i) + (vend[i] - vat[i]);
    }
    put_count(w, n, 0x80, 0xde);
    if (keys) {
        for (size_t i = 0; i < n; i++) {
            put_str(w, keys[i].p, keys[i].len);
            ads_buf_add(w->out, mv->body + vat[i], vend[i] - vat[i]);
        }
        return 0;
    }
    unsigned char *at = (unsigned char *)ads_buf_extend(w->out, total - mh);
    if (!at)
        return 0;
    for (size_t i = 0; i < n; i++) {
        at += ads_msgpack__put_id(at, ids[i]);
        ads_bytes_copy(at, mv->body + vat[i], vend[i] - vat[i]);
        at += vend[i] - vat[i];
    }
    return 0;
}

/* Rewrite the row at row (len bytes) with its keys as ids (id_of) or as
 * names (names given). 0, 1 (a name without an id), or an error. */
static int rekey(wr *w, const void *row, size_t len, ads_msgpack_id_fn id_of, void *ctx,
                 const ads_msgpack_names *names)
{
    ads_msgpack_view mv;
    int rc = ads_msgpack__view_open(&mv, row, len, names, NULL, w->err);
    if (rc)
        return rc;
    if (!id_of && !mv.names) { /* a row with names already */
        ads_buf_add(w->out, row, len);
        return 0;
    }
    size_t n = mv.n;
    /* per attribute: its id or name, where its value starts and ends */
    enum { SMALL = 48 };
    uint64_t ids_s[SMALL];
    ads_str keys_s[SMALL];
    size_t vat_s[SMALL], vend_s[SMALL];
    uint64_t *ids = ids_s;
    ads_str *keys = keys_s;
    size_t *vat = vat_s, *vend = vend_s;
    void *heap = NULL;
    if (n > SMALL) {
        size_t each = sizeof *ids + sizeof *keys + 2 * sizeof *vat;
        if (n > SIZE_MAX / each || !(heap = malloc(n * each)))
            return ads_error_set(w->err, ADS_ENOMEM, "msgpack: out of memory");
        keys = heap;
        ids = (uint64_t *)(keys + n);
        vat = (size_t *)(ids + n);
        vend = vat + n;
    }
    rc = ads_msgpack__entries(&mv, keys, vat, vend, w->err);
    for (size_t i = 0; i < n && !rc && id_of; i++)
        rc = id_of(ctx, i, keys[i].p, keys[i].len, &ids[i], w->err);
    if (!rc)
        rc = w_rekeyed(w, &mv, ids, id_of ? NULL : keys, vat, vend);
    free(heap);
    return rc;
}

int ads_msgpack__to_ids(ads_buf *out, const void *row, size_t len, ads_msgpack_id_fn id_of,
                        void *ctx, ads_error *err)
{
    wr w;
    int rc = w_start(&w, out, row ? row : "", err);
    if (rc)
        return rc;
    size_t start = out->len;
    rc = rekey(&w, row, len, id_of, ctx, NULL);
    if (rc == 1) {
        out->len = start;
        ads_buf_add(out, row, len);
        return out->failed ? ads_error_set(err, ADS_ENOMEM, "msgpack: out of memory") : 1;
    }
    return w_finish(&w, start, rc);
}

int ads_msgpack__ids_row(ads_buf *out, const ads_msgpack_view *mv, const uint64_t *ids,
                         const size_t *vat, const size_t *vend, ads_error *err)
{
    /* w_rekeyed's bytes, for ids only, sized first and written in one
     * stretch: the write path of every row of a known shape comes here */
    wr w;
    int rc = w_start(&w, out, mv, err);
    if (rc)
        return rc;
    size_t n = mv->n, start = out->len;
    size_t mh = n < 16 ? 1 : n <= 0xffff ? 3 : 5;
    uint64_t last = mh, total = mh;
    for (size_t i = 0; i < n; i++) {
        last = total;
        total += ads_msgpack__id_size(ids[i]) + (vend[i] - vat[i]);
    }
    if (last > UINT32_MAX)
        return ads_error_set(err, ADS_ELIMIT,
                             "msgpack: row of %llu bytes is too large for the index",
                             (unsigned long long)total);
    unsigned width = last <= 0xff ? 1 : last <= 0xffff ? 2 : 4;
    if (n > (UINT32_MAX - 2) / width)
        return ads_error_set(err, ADS_ELIMIT, "msgpack: record of %zu attributes is too large", n);
    put_byte(&w, 0x92);
    (void)put_ext_head(&w, 2 + n * width, ADS_MSGPACK_EXT_ROW);
    put_byte(&w, ADS_MSGPACK_VERSION_IDS);
    put_byte(&w, (unsigned char)width);
    unsigned char *o = (unsigned char *)ads_buf_extend(out, n * width + total);
    if (!o)
        return w_finish(&w, start, 0);
    unsigned char *at = o + n * width;
    uint64_t off = mh;
    if (n < 16) {
        *at++ = (unsigned char)(0x80 | n);
    } else {
        unsigned cw = n <= 0xffff ? 2 : 4; /* the map's header: put_count's forms */
        *at++ = cw == 2 ? 0xde : 0xdf;
        put_be(at, n, cw);
        at += cw;
    }
    for (size_t i = 0; i < n; i++, o += width) {
        size_t vlen = vend[i] - vat[i];
        if (width == 1)
            *o = (unsigned char)off;
        else
            put_be(o, off, width);
        size_t idl = ads_msgpack__put_id(at, ids[i]);
        ads_bytes_copy(at + idl, mv->body + vat[i], vlen);
        at += idl + vlen;
        off += idl + vlen;
    }
    return w_finish(&w, start, 0);
}

int ads_msgpack__to_names(ads_buf *out, const void *row, size_t len,
                          const ads_msgpack_names *names, ads_error *err)
{
    wr w;
    int rc = w_start(&w, out, row ? row : "", err);
    if (rc)
        return rc;
    size_t start = out->len;
    return w_finish(&w, start, rekey(&w, row, len, NULL, NULL, names));
}
