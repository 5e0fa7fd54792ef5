/*
 * classad/msgpack_delta.c: a row written as its difference from a base row
 * (docs/formats.md, "Row differences"). The store keeps most history rows
 * so (engine/history.c): a record's rows differ from each other in a few
 * attributes.
 *
 * A row (docs/formats.md, "Rows") is a header indexing its entries and a
 * map whose entries (key, value) are in name order. The difference of a row
 * R from a base B of the same version is a list of steps over B's entries,
 * taken in order, that yields R's entries:
 *
 *   00..7f   copy the next n = byte + 1 entries of B          (1..128)
 *   80..bf   skip the next n = byte - 0x7f entries of B       (1..64)
 *   c0..ff   n = byte - 0xbf entries of R's own (1..64), each as its length
 *            in bytes (unsigned LEB128, at least 1) and its bytes
 *
 * B's entries after the last step are left out. R's header is made again
 * from its entries. Keys are compared as bytes: both rows are canonical, so
 * an attribute is spelled the same in both or R holds it as its own.
 */
#include <stdlib.h>
#include <string.h>

#include "classad/msgpack_int.h"

/* ---- a row's entries, found through its index ---- */

typedef struct spans {
    unsigned version, width;
    size_t n;
    const unsigned char *idx; /* n offsets of width bytes, big-endian */
    const unsigned char *map; /* the map's first byte */
    size_t maplen;
} spans;

static size_t get_be(const unsigned char *p, unsigned w)
{
    size_t v = 0;
    for (unsigned i = 0; i < w; i++)
        v = v << 8 | p[i];
    return v;
}

static size_t off_of(const spans *s, size_t i)
{
    return ads_msgpack__offset_at(s->idx, s->width, i);
}

/* Entry i of s: where it starts in s->map, and its length. */
static void entry(const spans *s, size_t i, const unsigned char **p, size_t *len)
{
    size_t at = off_of(s, i), end = i + 1 < s->n ? off_of(s, i + 1) : s->maplen;
    *p = s->map + at;
    *len = end - at;
}

/* The row's header, map header and index: 0, or -1 when the bytes are not
 * a row laid out as the encoders lay one out. Entries are not decoded. */
static int spans_of(spans *s, const unsigned char *p, size_t len)
{
    static const unsigned char fixext[] = {0xd5, 2, 0xd6, 4, 0xd7, 8, 0xd8, 16};
    size_t at = 2, plen = 0;
    if (len < 6 || p[0] != 0x92)
        return -1;
    for (size_t i = 0; i < sizeof fixext; i += 2)
        if (p[1] == fixext[i])
            plen = fixext[i + 1];
    if (p[1] == 0xc7 || p[1] == 0xc8 || p[1] == 0xc9) {
        unsigned w = p[1] == 0xc7 ? 1 : p[1] == 0xc8 ? 2 : 4;
        if (len < 2 + w)
            return -1;
        plen = get_be(p + 2, w);
        at = 2 + w;
    } else if (!plen) {
        return -1;
    }
    if (at >= len || p[at] != ADS_MSGPACK_EXT_ROW || plen < 2 || plen > len - at - 1)
        return -1;
    at++;
    s->version = p[at];
    s->width = p[at + 1];
    if ((s->width != 1 && s->width != 2 && s->width != 4) || (plen - 2) % s->width)
        return -1;
    s->n = (plen - 2) / s->width;
    s->idx = p + at + 2;
    s->map = p + at + plen;
    s->maplen = len - at - plen;
    size_t n, head;
    if (s->maplen >= 1 && (s->map[0] & 0xf0) == 0x80) {
        n = s->map[0] & 0x0f;
        head = 1;
    } else if (s->maplen >= 3 && s->map[0] == 0xde) {
        n = get_be(s->map + 1, 2);
        head = 3;
    } else if (s->maplen >= 5 && s->map[0] == 0xdf) {
        n = get_be(s->map + 1, 4);
        head = 5;
    } else {
        return -1;
    }
    if (n != s->n || (n == 0 && s->maplen != head))
        return -1;
    size_t prev = 0;
    for (size_t i = 0; i < n; i++) {
        size_t o = off_of(s, i);
        if ((i == 0 ? o != head : o <= prev) || o >= s->maplen)
            return -1;
        prev = o;
    }
    return 0;
}

/* The length of the key that begins entry p (len bytes): an attribute id
 * or a name. 0 when it is neither or runs past the entry. */
static size_t key_len(const unsigned char *p, size_t len)
{
    unsigned char b = p[0];
    size_t k;
    if (b <= 0x7f)
        k = 1;
    else if ((b & 0xe0) == 0xa0)
        k = 1 + (size_t)(b & 0x1f);
    else if (b == 0xcc || b == 0xcd || b == 0xce)
        k = b == 0xcc ? 2 : b == 0xcd ? 3 : 5;
    else if (b == 0xd9 && len >= 2)
        k = 2 + (size_t)p[1];
    else if (b == 0xda && len >= 3)
        k = 3 + get_be(p + 1, 2);
    else if (b == 0xdb && len >= 5)
        k = 5 + get_be(p + 1, 4);
    else
        return 0;
    return k < len ? k : 0;
}

/* ---- writing the steps ---- */

enum { OP_COPY = 0x00, OP_SKIP = 0x80, OP_OWN = 0xc0 };

typedef struct steps {
    ads_buf *out;
    int kind;     /* of the last step written; -1 none */
    size_t at;    /* where its byte is in out */
    unsigned cnt; /* entries it covers */
} steps;

static void step(steps *s, int kind, size_t n)
{
    unsigned cap = kind == OP_COPY ? 128 : 64;
    while (n > 0 && !s->out->failed) {
        if (s->kind == kind && s->cnt < cap) {
            size_t more = cap - s->cnt < n ? cap - s->cnt : n;
            s->cnt += (unsigned)more;
            s->out->p[s->at] = (char)(kind + s->cnt - 1);
            n -= more;
            continue;
        }
        s->kind = kind;
        s->at = s->out->len;
        s->cnt = 1;
        ads_buf_addc(s->out, (char)kind);
        if (s->out->failed)
            return;
        n--;
    }
}

static void own(steps *s, const unsigned char *p, size_t len)
{
    step(s, OP_OWN, 1);
    unsigned char leb[10];
    size_t n = 0, v = len;
    do {
        leb[n++] = (unsigned char)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
        v >>= 7;
    } while (v);
    ads_buf_add(s->out, leb, n);
    ads_buf_add(s->out, p, len);
}

/* Where entries i (of s) end: the next one's offset, or the map's end. */
static size_t end_of(const spans *s, size_t i)
{
    return i + 1 < s->n ? off_of(s, i + 1) : s->maplen;
}

/* Are n bytes at p and q the same? (Inline: entries are a few bytes, and
 * a call to memcmp costs more than comparing them.) */
static bool same_bytes(const unsigned char *p, const unsigned char *q, size_t n)
{
    size_t d = 0;
    while (d + 8 <= n && memcmp(p + d, q + d, 8) == 0)
        d += 8;
    while (d < n && p[d] == q[d])
        d++;
    return d == n;
}

/* How many entries from r's i and b's j on are the same, byte for byte
 * (most of a record's attributes are as they were): pair by pair, each
 * pair's bytes compared once, stopping at the first pair that differs. */
static size_t same_run(const spans *r, size_t i, const spans *b, size_t j)
{
    size_t k = 0, rat = off_of(r, i), bat = off_of(b, j);
    while (i + k < r->n && j + k < b->n) {
        size_t rn = end_of(r, i + k), bn = end_of(b, j + k);
        if (rn - rat != bn - bat || !same_bytes(r->map + rat, b->map + bat, rn - rat))
            break;
        rat = rn;
        bat = bn;
        k++;
    }
    return k;
}

int ads_msgpack__delta(ads_buf *out, const void *row, size_t len, const void *base, size_t blen)
{
    spans r, b;
    if (spans_of(&r, row, len) || spans_of(&b, base, blen) || r.version != b.version)
        return 1;
    if (out->failed)
        return -1;
    steps s = {out, -1, 0, 0};
    size_t start = out->len, j = 0;
    for (size_t i = 0; i < r.n; i++) {
        size_t same = j < b.n ? same_run(&r, i, &b, j) : 0;
        if (same) {
            step(&s, OP_COPY, same);
            i += same - 1;
            j += same;
            continue;
        }
        const unsigned char *rp, *bp = NULL;
        size_t rl, bl = 0, rk, m;
        entry(&r, i, &rp, &rl);
        if (!(rk = key_len(rp, rl))) {
            out->len = start;
            return 1;
        }
        /* the base's entry of this key: at j, or later past entries R lacks */
        for (m = j; m < b.n; m++) {
            entry(&b, m, &bp, &bl);
            if (bl > rk && memcmp(bp, rp, rk) == 0 && key_len(bp, bl) == rk)
                break;
        }
        if (m == b.n) {
            own(&s, rp, rl);
            continue;
        }
        step(&s, OP_SKIP, m - j);
        j = m + 1;
        if (bl == rl && memcmp(bp, rp, rl) == 0) {
            step(&s, OP_COPY, 1);
        } else {
            step(&s, OP_SKIP, 1);
            own(&s, rp, rl);
        }
    }
    if (out->failed) {
        out->len = start;
        return -1;
    }
    return 0;
}

/* ---- applying them ---- */

/* A damaged difference: what is wrong, and where (a byte of its steps). */
static int bad(ads_error *err, const char *what, size_t at)
{
    return ads_error_set(err, ADS_ECORRUPT, "msgpack: a row difference %s at byte %zu", what,
                         at);
}

/* The entries the steps make, in order: where each one's bytes are (in the
 * base's map or in the steps) and how many. */
typedef struct piece {
    const unsigned char *p;
    size_t len;
} piece;

typedef struct pieces {
    piece *v, small[64];
    size_t n, cap, bytes;
} pieces;

static bool piece_add(pieces *ps, const unsigned char *p, size_t len)
{
    if (ps->n == ps->cap) {
        size_t cap = ps->cap * 2;
        piece *v = ps->v == ps->small ? malloc(cap * sizeof *v) : realloc(ps->v, cap * sizeof *v);
        if (!v)
            return false;
        if (ps->v == ps->small)
            memcpy(v, ps->small, sizeof ps->small);
        ps->v = v;
        ps->cap = cap;
    }
    ps->v[ps->n].p = p;
    ps->v[ps->n++].len = len;
    ps->bytes += len;
    return true;
}

/* One run of entries [j, j + k) of the base, copied. */
static bool copy_run(pieces *ps, const spans *b, size_t j, size_t k)
{
    size_t at = off_of(b, j);
    for (size_t i = j; i < j + k; i++) {
        size_t end = i + 1 < b->n ? off_of(b, i + 1) : b->maplen;
        if (!piece_add(ps, b->map + at, end - at))
            return false;
        at = end;
    }
    return true;
}

/* Walk the steps over b into ps. 0, ADS_ECORRUPT or ADS_ENOMEM. */
static int walk(pieces *ps, const unsigned char *op, size_t olen, const spans *b, ads_error *err)
{
    size_t at = 0, j = 0;
    while (at < olen) {
        size_t here = at;
        unsigned char c = op[at++];
        if (c < OP_OWN) {
            size_t k = c < OP_SKIP ? (size_t)c + 1 : (size_t)(c - OP_SKIP) + 1;
            if (k > b->n - j)
                return bad(err, "steps past the end of its base", here);
            if (c < OP_SKIP && !copy_run(ps, b, j, k))
                return ads_error_set(err, ADS_ENOMEM, "msgpack: out of memory");
            j += k;
            continue;
        }
        for (size_t k = (size_t)(c - OP_OWN) + 1; k > 0; k--) {
            size_t len = 0;
            for (unsigned shift = 0;; shift += 7) {
                if (at >= olen || shift > 28)
                    return bad(err, "ends inside a length", at);
                len |= (size_t)(op[at] & 0x7f) << shift;
                if (!(op[at++] & 0x80))
                    break;
            }
            if (len == 0 || len > olen - at)
                return bad(err, "holds an entry that runs past its end", at);
            if (!piece_add(ps, op + at, len))
                return ads_error_set(err, ADS_ENOMEM, "msgpack: out of memory");
            at += len;
        }
    }
    return 0;
}

/* A map's header for n entries, in its shortest form. */
static size_t map_head(unsigned char *h, size_t n)
{
    if (n <= 15) {
        h[0] = (unsigned char)(0x80 | n);
        return 1;
    }
    unsigned w = n <= 0xffff ? 2 : 4;
    h[0] = w == 2 ? 0xde : 0xdf;
    for (unsigned i = 0; i < w; i++)
        h[1 + i] = (unsigned char)(n >> (8 * (w - 1 - i)));
    return 1 + w;
}

/* The row header's extension head for a payload of len bytes, in the
 * shortest form (fixext where one fits exactly). */
static size_t ext_head(unsigned char *h, size_t len)
{
    static const unsigned char fix[] = {2, 0xd5, 4, 0xd6, 8, 0xd7, 16, 0xd8};
    for (size_t i = 0; i < sizeof fix; i += 2)
        if (len == fix[i]) {
            h[0] = fix[i + 1];
            h[1] = ADS_MSGPACK_EXT_ROW;
            return 2;
        }
    unsigned w = len <= 0xff ? 1 : len <= 0xffff ? 2 : 4;
    h[0] = w == 1 ? 0xc7 : w == 2 ? 0xc8 : 0xc9;
    for (unsigned i = 0; i < w; i++)
        h[1 + i] = (unsigned char)(len >> (8 * (w - 1 - i)));
    h[1 + w] = ADS_MSGPACK_EXT_ROW;
    return 2 + w;
}

/* The row of pieces ps (version v) into out. */
static int put_row(ads_buf *out, const pieces *ps, unsigned version, ads_error *err)
{
    unsigned char mh[5], xh[7];
    size_t n = ps->n, mhl = map_head(mh, n);
    size_t last = n ? mhl + ps->bytes - ps->v[n - 1].len : mhl; /* the last key's offset */
    if (last > UINT32_MAX || n > (UINT32_MAX - 2) / 4)
        return ads_error_set(err, ADS_ELIMIT, "msgpack: a row of %zu bytes is too large",
                             mhl + ps->bytes);
    unsigned width = last <= 0xff ? 1 : last <= 0xffff ? 2 : 4;
    size_t xhl = ext_head(xh, 2 + n * width);
    unsigned char *p = (unsigned char *)ads_buf_extend(out, 3 + xhl + n * width + mhl + ps->bytes);
    if (!p)
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    *p++ = 0x92;
    memcpy(p, xh, xhl);
    p += xhl;
    *p++ = (unsigned char)version;
    *p++ = (unsigned char)width;
    size_t off = mhl;
    for (size_t i = 0; i < n; off += ps->v[i++].len)
        for (unsigned b = 0; b < width; b++)
            *p++ = (unsigned char)(off >> (8 * (width - 1 - b)));
    memcpy(p, mh, mhl);
    p += mhl;
    /* entries next to each other in the base go in one copy */
    for (size_t i = 0; i < n;) {
        const unsigned char *from = ps->v[i].p;
        size_t len = ps->v[i++].len;
        while (i < n && ps->v[i].p == from + len)
            len += ps->v[i++].len;
        memcpy(p, from, len);
        p += len;
    }
    return 0;
}

int ads_msgpack__undelta(ads_buf *out, const void *ops, size_t olen, const void *base,
                         size_t blen, ads_error *err)
{
    spans b;
    if (spans_of(&b, base, blen))
        return bad(err, "has a base that is not a row", 0);
    pieces ps;
    ps.v = ps.small;
    ps.n = ps.bytes = 0;
    ps.cap = sizeof ps.small / sizeof ps.small[0];
    size_t start = out->len;
    int rc = walk(&ps, ops, olen, &b, err);
    if (!rc && (rc = put_row(out, &ps, b.version, err)))
        out->len = start;
    if (ps.v != ps.small)
        free(ps.v);
    return rc;
}
