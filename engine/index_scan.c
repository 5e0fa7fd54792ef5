/*
 * engine/index_scan.c: reading through secondary indexes (engine/index.c has
 * the layout). A span is a set of ranges of one index's values; the planner
 * (query/plan.c) builds one per indexed term of a WHERE (`==`, `is`, `in`,
 * ranges), intersects the spans of an AND on one attribute, estimates them,
 * and opens a scan over one span or the union of several (an OR).
 *
 * A range is [lo, hi] over index values: an entry is in it when its bytes
 * are >= lo and its first |hi| bytes are <= hi, so hi = the encoding of 5
 * takes every entry whose value is 5. Bounds are made generous where the
 * language's comparisons and the key encoding could part (numbers are
 * bounded by their double, whatever the exactness residual; every bound is
 * inclusive): a span holds at least the records that match, and the scan's
 * WHERE, which the caller passes whole, keeps exactly those. Every span also
 * reads the entries of values with no key encoding (IX_OTHER).
 *
 * A union yields each record once without remembering records: an entry met
 * through a later range of a span is skipped when an earlier range of the
 * same span holds it, and a record met through a later span is skipped when
 * its value for an earlier span's attribute lies in that span.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/limits.h"
#include "classad/msgpack.h"
#include "engine/engine_int.h"


typedef struct ix_range {
    unsigned char *lo, *hi;
    size_t lo_len, hi_len;
    /* lo == hi is the whole value of an entry (every attribute of the
     * index; a number with its residual): the range's entries are that
     * value followed by record keys, in record key order */
    bool exact;
} ix_range;

struct ads_index_span {
    const ads_type *type;
    const index_def *ix;
    /* a part: the values of one attribute of a composite index, to be
     * combined by ads_index_span_compose (its exact ranges are one value of
     * that attribute) */
    bool part;
    ads_arena *a;
    ix_range *r; /* r[0] is always the IX_OTHER entries */
    size_t n, cap;
    /* how far ads_index_span_count got, in the transaction (pointer, LMDB
     * id and writes) it counted in: a later call with a larger cap goes on
     * from the entry after cnt_key rather than from the start */
    const ads_txn *cnt_txn;
    size_t cnt_txnid;
    uint64_t cnt_writes, counted;
    size_t cnt_range, cnt_klen;
    unsigned char *cnt_key;
    bool cnt_done;
};

/* ---- ranges ---- */

/* Entries and record keys are short (tens of bytes) and differ late:
 * compared eight bytes at a time, in line. */
static inline uint64_t load_be64(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    return v;
}

static inline int bytecmp(const unsigned char *a, size_t alen, const unsigned char *b,
                          size_t blen)
{
    size_t n = alen < blen ? alen : blen, i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t x = load_be64(a + i), y = load_be64(b + i);
        if (x != y)
            return x < y ? -1 : 1;
    }
    for (; i < n; i++)
        if (a[i] != b[i])
            return a[i] < b[i] ? -1 : 1;
    return (alen > blen) - (alen < blen);
}

static inline bool same(const unsigned char *a, const unsigned char *b, size_t n)
{
    return bytecmp(a, n, b, n) == 0;
}

/* key (index value, possibly followed by more) against the inclusive prefix
 * bound hi: <= 0 when key is within it. */
static inline int prefixcmp(const unsigned char *key, size_t klen, const unsigned char *hi,
                            size_t hlen)
{
    size_t n = klen < hlen ? klen : hlen;
    int c = bytecmp(key, n, hi, n);
    return c ? c : (klen < hlen ? -1 : 0);
}



static bool in_range(const ix_range *r, const unsigned char *k, size_t klen)
{
    /* the first byte settles most (IX_OTHER against a value) */
    if (!klen || k[0] < r->lo[0] || k[0] > r->hi[0])
        return false;
    return bytecmp(k, klen, r->lo, r->lo_len) >= 0 && prefixcmp(k, klen, r->hi, r->hi_len) <= 0;
}

static bool in_span(const ads_index_span *s, size_t upto, const unsigned char *k, size_t klen)
{
    for (size_t i = 0; i < upto; i++)
        if (in_range(&s->r[i], k, klen))
            return true;
    return false;
}

static int push(ads_index_span *s, const unsigned char *lo, size_t lol, const unsigned char *hi,
                size_t hil, bool exact, ads_error *err)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 4;
        ix_range *m = ads_arena_alloc(s->a, cap * sizeof *m);
        if (!m)
            return ads_error_set(err, ADS_ENOMEM, "out of memory");
        if (s->n)
            memcpy(m, s->r, s->n * sizeof *m);
        s->r = m;
        s->cap = cap;
    }
    ix_range *r = &s->r[s->n];
    r->lo = ads_arena_alloc(s->a, lol + hil + 1);
    if (!r->lo)
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    r->hi = r->lo + lol;
    memcpy(r->lo, lo, lol);
    memcpy(r->hi, hi, hil);
    r->lo_len = lol;
    r->hi_len = hil;
    r->exact = exact;
    s->n++;
    return 0;
}

/* An empty span of index ix of t: 1 with *out. */
static int span_of(ads_index_span **out, const ads_type *t, const index_def *ix, ads_arena *a,
                   ads_error *err)
{
    ads_index_span *s = ads_arena_alloc(a, sizeof *s);
    if (!s)
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    memset(s, 0, sizeof *s);
    s->type = t;
    s->ix = ix;
    s->a = a;
    unsigned char other = IX_OTHER;
    int rc = push(s, &other, 1, &other, 1, false, err);
    if (rc)
        return rc;
    *out = s;
    return 1;
}

int ads_index_span_new(ads_index_span **out, ads_txn *txn, const ads_type *t, const char *name,
                       size_t len, ads_arena *a, ads_error *err)
{
    if (!out || !txn || !t || !name || !a)
        return ads_error_set(err, ADS_EINVAL, "NULL argument");
    *out = NULL;
    const index_def *ix = NULL;
    for (size_t i = 0; i < t->nindexes && !ix; i++)
        if (t->indexes[i].nattrs == 1 && t->indexes[i].len == len &&
            ads_row__name_cmp((const unsigned char *)name, len,
                              (const unsigned char *)t->indexes[i].name, len) == 0)
            ix = &t->indexes[i];
    if (!ix)
        return 0;
    return span_of(out, t, ix, a, err);
}

int ads_index_span_new_at(ads_index_span **out, ads_txn *txn, const ads_type *t, size_t i,
                          ads_arena *a, ads_error *err)
{
    if (!out || !txn || !t || !a)
        return ads_error_set(err, ADS_EINVAL, "NULL argument");
    *out = NULL;
    return i < t->nindexes ? span_of(out, t, &t->indexes[i], a, err) : 0;
}

static const unsigned char zero_residual[8] = {0x80, 0, 0, 0, 0, 0, 0, 0};

/* May a range of one value of s be exact: a single index's, or a part's
 * (a composite index's range is exact only when every attribute is one
 * value: ads_index_span_compose)? */
static bool exact_ok(const ads_index_span *s)
{
    return s->ix->nattrs == 1 || s->part;
}

/* The tag of a value's key encoding and, for values ordered by a double,
 * that double; false for a value no comparison orders. */
static bool ordered(const ads_value *v, unsigned char *tag, double *d)
{
    switch (v->type) {
    case ADS_BOOLEAN:
        *tag = KEY_NUMBER;
        *d = v->u.b;
        return true;
    case ADS_INTEGER:
        *tag = KEY_NUMBER;
        *d = (double)v->u.i;
        return true;
    case ADS_REAL:
        *tag = KEY_NUMBER;
        *d = v->u.r;
        return !isnan(v->u.r);
    case ADS_ABSTIME:
        *tag = KEY_ABSTIME;
        *d = v->u.abs.secs;
        return !isnan(*d);
    case ADS_RELTIME:
        *tag = KEY_RELTIME;
        *d = v->u.rel;
        return !isnan(*d);
    default:
        return false;
    }
}

int ads_index_span_add(ads_index_span *s, ads_index_op op, const ads_value *v, ads_error *err)
{
    if (!s || !v)
        return ads_error_set(err, ADS_EINVAL, "NULL argument");
    unsigned char tag, b[9];
    double d;
    if (ordered(v, &tag, &d)) {
        /* bounded by the double: 123 and 123.0 alike, every residual in */
        unsigned char b17[17];
        b[0] = tag;
        ads_key__sortable_double(b + 1, d);
        switch (op) {
        case ADS_IX_EQ:
            /* below 2^53 no integer has a residual: the value is exact;
             * beyond, every residual is in (a prefix) */
            if (tag == KEY_NUMBER && d > -9007199254740992.0 && d < 9007199254740992.0) {
                memcpy(b17, b, 9);
                memcpy(b17 + 9, zero_residual, 8);
                return push(s, b17, 17, b17, 17, exact_ok(s), err);
            }
            return push(s, b, 9, b, 9, tag != KEY_NUMBER && exact_ok(s), err);
        case ADS_IX_LT:
        case ADS_IX_LE:
            return push(s, b, 1, b, 9, false, err);
        case ADS_IX_GT:
        case ADS_IX_GE:
            return push(s, b, 9, b, 1, false, err);
        }
        return 1;
    }
    if (v->type == ADS_UNDEFINED) {
        unsigned char u = IX_UNDEFINED;
        return op == ADS_IX_EQ ? push(s, &u, 1, &u, 1, exact_ok(s), err) : 1;
    }
    if (v->type == ADS_ERROR || (v->type == ADS_REAL && isnan(v->u.r)))
        return op == ADS_IX_EQ ? 0 : 1; /* such values are IX_OTHER entries, always read */
    if (op != ADS_IX_EQ && v->type != ADS_STRING && v->type != ADS_IDENT)
        return 1; /* lists, records and blobs are not ordered */
    ads_buf e = ADS_BUF_INIT;
    int rc = ads_key__value(&e, v, "", NULL);
    /* an entry holds the index id, the value and at least a byte of key:
     * a longer value is only ever in the IX_OTHER entries */
    if (rc || e.failed || 4 + e.len + 1 > ADS_INDEX_KEY_MAX) {
        ads_buf_free(&e);
        return e.failed ? ads_error_set(err, ADS_ENOMEM, "out of memory") : 1;
    }
    const unsigned char *p = (const unsigned char *)e.p;
    switch (op) {
    case ADS_IX_EQ:
        rc = push(s, p, e.len, p, e.len, exact_ok(s), err);
        break;
    case ADS_IX_LT:
    case ADS_IX_LE:
        rc = push(s, p, 1, p, e.len, false, err);
        break;
    case ADS_IX_GT:
    case ADS_IX_GE:
        rc = push(s, p, e.len, p, 1, false, err);
        break;
    }
    ads_buf_free(&e);
    return rc;
}

/* Is r the range [lo, hi]? */
static bool is_range(const ix_range *r, const unsigned char *lo, size_t lol,
                     const unsigned char *hi, size_t hil)
{
    return r->lo_len == lol && r->hi_len == hil && memcmp(r->lo, lo, lol) == 0 &&
           memcmp(r->hi, hi, hil) == 0;
}

int ads_index_span_and(ads_index_span *s, const ads_index_span *o, ads_error *err)
{
    if (!s || !o || s->ix != o->ix)
        return ads_error_set(err, ADS_EINVAL, "spans of different indexes");
    ix_range *old = s->r;
    size_t n = s->n;
    s->r = NULL;
    s->n = s->cap = 0;
    int rc = push(s, old[0].lo, old[0].lo_len, old[0].hi, old[0].hi_len, false, err);
    for (size_t i = 1; i < n && !rc; i++)
        for (size_t j = 1; j < o->n && !rc; j++) {
            const ix_range *x = &old[i], *y = &o->r[j];
            const ix_range *lo = bytecmp(x->lo, x->lo_len, y->lo, y->lo_len) >= 0 ? x : y;
            /* the tighter prefix bound: the smaller, or where one is a
             * prefix of the other, the longer */
            size_t m = x->hi_len < y->hi_len ? x->hi_len : y->hi_len;
            int c = memcmp(x->hi, y->hi, m);
            const ix_range *hi = c < 0 ? x : c > 0 ? y : x->hi_len >= y->hi_len ? x : y;
            if (prefixcmp(lo->lo, lo->lo_len, hi->hi, hi->hi_len) > 0)
                continue; /* empty */
            /* one exact value when it is an exact range's */
            bool ex = (x->exact && is_range(x, lo->lo, lo->lo_len, hi->hi, hi->hi_len)) ||
                      (y->exact && is_range(y, lo->lo, lo->lo_len, hi->hi, hi->hi_len));
            rc = push(s, lo->lo, lo->lo_len, hi->hi, hi->hi_len, ex, err);
        }
    return rc;
}


int ads_index_span_part(ads_index_span **out, const ads_index_span *s, ads_error *err)
{
    if (!out || !s)
        return ads_error_set(err, ADS_EINVAL, "NULL argument");
    int rc = span_of(out, s->type, s->ix, s->a, err);
    if (rc == 1)
        (*out)->part = true;
    return rc < 0 ? rc : 0;
}

size_t ads_index_span_nattrs(const ads_index_span *s)
{
    return s ? s->ix->nattrs : 0;
}

const char *ads_index_span_attr_at(const ads_index_span *s, size_t i, size_t *len)
{
    if (!s || i >= s->ix->nattrs)
        return NULL;
    *len = s->ix->alen[i];
    return s->ix->attr[i];
}

/* Is every range of part p (past the IX_OTHER one) one value? */
static bool all_exact(const ads_index_span *p)
{
    for (size_t i = 1; i < p->n; i++)
        if (!p->r[i].exact)
            return false;
    return true;
}

/* Push to s every range of parts[j..n) after prefix pre (plen bytes). */
static int product(ads_index_span *s, ads_index_span *const *parts, size_t j, size_t n,
                   unsigned char *pre, size_t plen, bool exact, ads_error *err)
{
    const ads_index_span *p = parts[j];
    /* the bytes an entry's values may take after the 4-byte index id */
    size_t room = plen + 5 < ADS_INDEX_KEY_MAX ? ADS_INDEX_KEY_MAX - 5 - plen : 0;
    for (size_t i = 1; i < p->n; i++) {
        const ix_range *r = &p->r[i];
        size_t lol = r->lo_len, hil = r->hi_len;
        if (lol > room || hil > room) {
            bool one = lol == hil && memcmp(r->lo, r->hi, lol) == 0;
            if (one || j + 1 < n || !room)
                continue; /* no entry holds that value after this prefix: such records
                           * are IX_OTHER entries, which every lookup reads */
            /* a range with a long bound: a prefix of the bound only widens it
             * (the WHERE tests every row) */
            lol = lol < room ? lol : room;
            hil = hil < room ? hil : room;
        }
        bool whole = lol == r->lo_len && hil == r->hi_len;
        if (j + 1 < n) {
            memcpy(pre + plen, r->lo, r->lo_len);
            int rc = product(s, parts, j + 1, n, pre, plen + r->lo_len, exact, err);
            if (rc)
                return rc;
            continue;
        }
        unsigned char *lo = ads_arena_alloc(s->a, plen + lol + plen + hil);
        if (!lo)
            return ads_error_set(err, ADS_ENOMEM, "out of memory");
        unsigned char *hi = lo + plen + lol;
        memcpy(lo, pre, plen);
        memcpy(lo + plen, r->lo, lol);
        memcpy(hi, pre, plen);
        memcpy(hi + plen, r->hi, hil);
        int rc = push(s, lo, plen + lol, hi, plen + hil, exact && r->exact && whole, err);
        if (rc)
            return rc;
    }
    return 0;
}

int ads_index_span_compose(size_t *used, ads_index_span *s, ads_index_span *const *parts,
                           size_t n, ads_error *err)
{
    if (!used || !s || (n && !parts))
        return ads_error_set(err, ADS_EINVAL, "NULL argument");
    *used = 0;
    if (s->n != 1 || s->part)
        return ads_error_set(err, ADS_EINVAL, "a composite span is composed once, of parts");
    /* every part but the last one value per range; a product at most
     * ADS_INDEX_PRODUCT_MAX ranges */
    size_t m = 0, ranges = 1;
    while (m < n && m < s->ix->nattrs && parts[m]) {
        if (parts[m]->ix != s->ix || !parts[m]->part)
            return ads_error_set(err, ADS_EINVAL, "a part of another index");
        size_t k = parts[m]->n - 1;
        if (ranges * (k ? k : 1) > ADS_INDEX_PRODUCT_MAX)
            break;
        ranges *= k ? k : 1;
        if (!all_exact(parts[m++]))
            break;
    }
    if (!m)
        return 0;
    unsigned char pre[ADS_INDEX_KEY_MAX];
    bool exact = m == s->ix->nattrs;
    int rc = product(s, parts, 0, m, pre, 0, exact, err);
    if (!rc)
        *used = m;
    return rc;
}

bool ads_index_span_same(const ads_index_span *a, const ads_index_span *b)
{
    return a && b && a->ix == b->ix;
}

const char *ads_index_span_attr(const ads_index_span *s)
{
    return s ? s->ix->name : NULL;
}

size_t ads_index_span_ranges(const ads_index_span *s)
{
    return s ? s->n - 1 : 0;
}

/* ---- walking entries ---- */

typedef struct ix_walk {
    MDB_cursor *c;
    size_t range; /* of the span */
    bool open;
    /* once: seek here (a whole entry key) rather than to the range's start */
    const unsigned char *from;
    size_t from_len;
} ix_walk;

/* The next entry of span s from walk w: 1 with *k (the entry key without
 * its index id) and *v, 0 at the end, or an error. */
static int walk_next(ix_walk *w, ads_txn *txn, const ads_index_span *s, MDB_val *k, MDB_val *v,
                     ads_error *err)
{
    unsigned char pre[4];
    ads_index__be32(pre, s->ix->id);
    for (;;) {
        int rc;
        if (w->range >= s->n)
            return 0;
        const ix_range *r = &s->r[w->range];
        if (!w->open) {
            unsigned char seek[4 + ADS_INDEX_KEY_MAX + 1];
            memcpy(seek, pre, 4);
            memcpy(seek + 4, r->lo, r->lo_len);
            k->mv_data = seek;
            k->mv_size = 4 + r->lo_len;
            if (w->from) {
                k->mv_data = (void *)w->from;
                k->mv_size = w->from_len;
                w->from = NULL;
            }
            rc = mdb_cursor_get(w->c, k, v, MDB_SET_RANGE);
            w->open = true;
        } else {
            rc = mdb_cursor_get(w->c, k, v, MDB_NEXT);
        }
        if (rc && rc != MDB_NOTFOUND)
            return ads_db__lmdb(txn, err, rc, "reading an index");
        const unsigned char *p = k->mv_data;
        if (rc == MDB_NOTFOUND || k->mv_size < 4 || memcmp(p, pre, 4) != 0 ||
            prefixcmp(p + 4, k->mv_size - 4, r->hi, r->hi_len) > 0) {
            w->range++;
            w->open = false;
            continue;
        }
        k->mv_data = (unsigned char *)k->mv_data + 4;
        k->mv_size -= 4;
        if (in_span(s, w->range, k->mv_data, k->mv_size))
            continue; /* an earlier range had it */
        return 1;
    }
}

/* Forget a count made in another transaction, or before a write. */
static void count_check(ads_index_span *s, const ads_txn *txn)
{
    size_t id = mdb_txn_id(txn->txn);
    if (s->cnt_txn == txn && s->cnt_txnid == id && s->cnt_writes == txn->writes)
        return;
    s->cnt_txn = txn;
    s->cnt_txnid = id;
    s->cnt_writes = txn->writes;
    s->counted = 0;
    s->cnt_range = 0;
    s->cnt_klen = 0;
    s->cnt_done = false;
}

int ads_index_span_count(uint64_t *out, ads_txn *txn, ads_index_span *s, uint64_t cap,
                         ads_error *err)
{
    if (!out || !txn || !s)
        return ads_error_set(err, ADS_EINVAL, "NULL argument");
    int rc = ads_index__flush(txn, err); /* a bulk batch's hook may count */
    if (rc)
        return rc;
    count_check(s, txn);
    if (s->cnt_done || s->counted >= cap) {
        *out = s->counted < cap ? s->counted : cap;
        return 0;
    }
    if (!s->cnt_key && !(s->cnt_key = ads_arena_alloc(s->a, ADS_INDEX_KEY_MAX + 1)))
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    ix_walk w = {NULL, s->cnt_range, false, s->cnt_klen ? s->cnt_key : NULL, s->cnt_klen};
    rc = mdb_cursor_open(txn->txn, txn->db->index, &w.c);
    if (rc)
        return ads_db__lmdb(txn, err, rc, "reading an index");
    MDB_val k, v;
    while (s->counted < cap && (rc = walk_next(&w, txn, s, &k, &v, err)) == 1)
        s->counted++;
    if (rc == 1) {
        /* go on after this entry: its key ++ 0x00 is the least key above it */
        size_t n = k.mv_size + 4;
        if (n > ADS_INDEX_KEY_MAX)
            n = ADS_INDEX_KEY_MAX; /* cannot happen: entries are at most that long */
        memcpy(s->cnt_key, (const unsigned char *)k.mv_data - 4, n);
        s->cnt_key[n] = 0;
        s->cnt_klen = n + 1;
        s->cnt_range = w.range;
        rc = 0;
    } else if (rc == 0) {
        s->cnt_done = true;
    }
    mdb_cursor_close(w.c);
    *out = s->counted;
    return rc;
}

/* ---- index scans ---- */

/* One exact range of a span in a merge. Its entries are one prefix (the
 * index id and the value) followed by a record's stored key without its
 * type id, the rest, so they lie in record key order. rest points at the
 * current entry's rest in the map (valid while the cursor stays: a walk
 * writes nothing); key holds the prefix, and a seek's target after it. */
typedef struct ix_cur {
    MDB_cursor *c;
    const unsigned char *rest;
    size_t plen, rlen; /* rest NULL: no entry left */
    unsigned miss, skip; /* stepping before seeking (cur_seek) */
    unsigned char key[ADS_INDEX_KEY_MAX + 1];
} ix_cur;

/* A span in a merge: its ranges, and the least rest they are at (NULL:
 * the span has no entry left). */
typedef struct ix_stream {
    const ads_index_span *span;
    ix_cur *cur;
    size_t n;
    const unsigned char *at;
    size_t at_len;
} ix_stream;

struct ads_index_walk {
    ads_txn *txn;
    const ads_type *type;
    ads_index_span **spans;
    size_t n, at;
    const ads_expr *where;
    unsigned flags;
    ix_walk w;
    ads_arena *arena;
    ads_buf val;
    ads_row row;
    unsigned char skey[ADS_KEY_INLINE_MAX];
    uint64_t entries;    /* index entries read */
    uint64_t probed_out; /* entries skipped: a probed index had none */
    uint64_t fetched;    /* rows read from `latest` */
    bool (*stop)(void *ctx); /* ads_scan_set_stop */
    void *stop_ctx;
    /* in a write transaction the records are collected first (keys: a
     * be16 length and the stored key, each), then read one by one, so the
     * statement's writes never move an index under the walk */
    bool collect, collected;
    ads_buf keys;
    size_t kat;
    /* spans of other indexes every record must have an entry in (the
     * other terms of an AND), probed before its row is read */
    const ads_index_span *filters[ADS_INDEX_FILTERS_MAX];
    size_t nfilters;
    /* per filter, per range of its span: a cursor, or NULL when the range
     * holds no entry (never probed). A walk meets a value's entries in
     * record key order, so each probe lands near the last, and LMDB looks
     * in the cursor's page before it descends from the root. */
    MDB_cursor **pc[ADS_INDEX_FILTERS_MAX];
    /* or, when the span and the filters are all exact, their merge: one
     * stream per span (set up by the first walk_rows) */
    bool prepared, merge, merge_started;
    ix_stream *streams;
    size_t nstreams;
    unsigned char target[ADS_INDEX_KEY_MAX]; /* the record all streams must reach */
    size_t tlen;
    /* on `latest`, for the rows: a value's records come in key order, so
     * each lookup lands near the last (opened on the first) */
    MDB_cursor *lc;
};

int ads_index__walk_open(ads_index_walk **out, ads_txn *txn, const ads_type *t,
                         ads_index_span *const *spans, size_t n, const ads_expr *where,
                         unsigned flags, ads_error *err)
{
    if (!out || !txn || !t || !spans || !n)
        return ads_error_set(err, ADS_EINVAL, "NULL argument");
    if (flags & ADS_SCAN_HISTORY)
        return ads_error_set(err, ADS_EINVAL, "an index scan reads latest rows, not history");
    for (size_t i = 0; i < n; i++)
        if (!spans[i] || spans[i]->type->id != t->id)
            return ads_error_set(err, ADS_EINVAL, "an index span of another type");
    int rc = ads_index__flush(txn, err); /* a bulk batch's hook may query */
    if (rc)
        return rc;
    ads_index_walk *iw = calloc(1, sizeof *iw);
    ads_index_span **sp = calloc(n, sizeof *sp);
    if (!iw || !sp || !(iw->arena = ads_arena_new())) {
        free(iw);
        free(sp);
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    }
    memcpy(sp, spans, n * sizeof *sp);
    iw->txn = txn;
    iw->type = t;
    iw->spans = sp;
    iw->n = n;
    iw->where = where;
    iw->flags = flags;
    iw->collect = !txn->readonly;
    rc = mdb_cursor_open(txn->txn, txn->db->index, &iw->w.c);
    if (rc) {
        ads_index__walk_close(iw);
        return ads_db__lmdb(txn, err, rc, "reading an index");
    }
    *out = iw;
    return 0;
}

static void streams_free(ads_index_walk *iw)
{
    for (size_t i = 0; iw->streams && i < iw->nstreams; i++) {
        ix_stream *st = &iw->streams[i];
        for (size_t j = 0; st->cur && j < st->n; j++)
            if (st->cur[j].c)
                mdb_cursor_close(st->cur[j].c);
        free(st->cur);
    }
    free(iw->streams);
}

void ads_index__walk_close(ads_index_walk *iw)
{
    if (!iw)
        return;
    if (iw->w.c)
        mdb_cursor_close(iw->w.c);
    if (iw->lc)
        mdb_cursor_close(iw->lc);
    for (size_t i = 0; i < iw->nfilters; i++) {
        for (size_t j = 0; iw->pc[i] && j < iw->filters[i]->n; j++)
            if (iw->pc[i][j])
                mdb_cursor_close(iw->pc[i][j]);
        free(iw->pc[i]);
    }
    streams_free(iw);
    ads_arena_free(iw->arena);
    ads_buf_free(&iw->val);
    ads_buf_free(&iw->keys);
    free(iw->spans);
    free(iw);
}

/* Can span s be probed or merged: every range one exact value of the
 * index (not a prefix: a number's bound is its double, exact only below
 * 2^53, where no integer has a residual; and a composite index's every
 * attribute)? */
static bool probeable(const ads_index_span *s)
{
    for (size_t i = 1; i < s->n; i++)
        if (!s->r[i].exact)
            return false;
    return true;
}

bool ads_index_span_exact(const ads_index_span *s)
{
    return s && probeable(s);
}

int ads_index__walk_filter(ads_index_walk *iw, const ads_index_span *s)
{
    if (!iw || !s || iw->prepared || iw->nfilters == ADS_INDEX_FILTERS_MAX ||
        s->type->id != iw->type->id || !probeable(s))
        return 0;
    iw->filters[iw->nfilters++] = s;
    return 1;
}

/* Per filter, per range of its span, a cursor on its first entry (NULL
 * when the range holds none: it is never probed). */
static int open_probes(ads_index_walk *iw, ads_error *err)
{
    unsigned char k[4 + ADS_INDEX_KEY_MAX];
    for (size_t f = 0; f < iw->nfilters; f++) {
        const ads_index_span *s = iw->filters[f];
        MDB_cursor **pc = calloc(s->n, sizeof *pc);
        if (!pc)
            return ads_error_set(err, ADS_ENOMEM, "out of memory");
        iw->pc[f] = pc;
        ads_index__be32(k, s->ix->id);
        for (size_t i = 0; i < s->n; i++) {
            const ix_range *r = &s->r[i];
            int rc = mdb_cursor_open(iw->txn->txn, iw->txn->db->index, &pc[i]);
            if (rc) {
                pc[i] = NULL;
                return ads_db__lmdb(iw->txn, err, rc, "reading an index");
            }
            memcpy(k + 4, r->lo, r->lo_len);
            MDB_val mk = {4 + r->lo_len, k}, mv;
            rc = mdb_cursor_get(pc[i], &mk, &mv, MDB_SET_RANGE);
            if (rc && rc != MDB_NOTFOUND)
                return ads_db__lmdb(iw->txn, err, rc, "reading an index");
            const unsigned char *e = mk.mv_data;
            if (rc || mk.mv_size < 4 || memcmp(e, k, 4) != 0 ||
                prefixcmp(e + 4, mk.mv_size - 4, r->hi, r->hi_len) > 0) {
                mdb_cursor_close(pc[i]);
                pc[i] = NULL; /* no entry in the range */
            }
        }
    }
    return 0;
}

/* Has the record whose stored key ends in rest (rlen bytes) an entry in
 * span s? 1, 0, or an LMDB error. */
static int probe(ads_index_walk *iw, size_t f, const unsigned char *rest, size_t rlen)
{
    const ads_index_span *s = iw->filters[f];
    unsigned char k[4 + ADS_INDEX_KEY_MAX];
    ads_index__be32(k, s->ix->id);
    for (size_t i = 0; i < s->n; i++) {
        const ix_range *r = &s->r[i];
        size_t n = 4 + r->lo_len;
        if (!iw->pc[f][i])
            continue; /* the range holds no entry */
        if (n + rlen > sizeof k)
            continue; /* longer than any entry: no entry holds it */
        memcpy(k + 4, r->lo, r->lo_len);
        memcpy(k + n, rest, rlen);
        MDB_val mk = {n + rlen, k}, mv;
        int rc = mdb_cursor_get(iw->pc[f][i], &mk, &mv, MDB_SET_RANGE);
        if (rc == 0 && mk.mv_size == n + rlen && memcmp(mk.mv_data, k, n + rlen) == 0)
            return 1;
        if (rc && rc != MDB_NOTFOUND)
            return rc;
    }
    return 0;
}

void ads_index__walk_counts(ads_scan_counts *out, const ads_index_walk *iw)
{
    out->entries = iw->entries;
    out->probed_out = iw->probed_out;
    out->rows = iw->fetched;
}

/* Did an earlier span yield the record of row data? */
static bool seen_before(ads_index_walk *iw, const unsigned char *data, size_t len)
{
    for (size_t j = 0; j < iw->at; j++) {
        const ads_index_span *s = iw->spans[j];
        ads_buf_clear(&iw->val);
        ads_index__value(&iw->val, ads_txn__names(iw->txn), data, len, s->ix, iw->arena);
        if (in_span(s, s->n, (const unsigned char *)iw->val.p, iw->val.len))
            return true;
    }
    return false;
}

/* Read the latest row of iw->skey (slen bytes) into iw->row and test it:
 * 1 when it qualifies, 0 not, or an error. first: met through the walk
 * (not yet read; a union skips records an earlier span yielded), else a
 * collected record read again (one the statement has since removed is
 * skipped). */
static int fetch(ads_index_walk *iw, size_t slen, bool first, ads_error *err)
{
    const ads_type *t = iw->type;
    if (iw->stop && iw->stop(iw->stop_ctx))
        return ads_error_set(err, ADS_ELIMIT, "interrupted");
    MDB_val lk = {slen, iw->skey}, lv;
    int rc = iw->lc ? 0 : mdb_cursor_open(iw->txn->txn, iw->txn->db->latest, &iw->lc);
    if (rc) {
        iw->lc = NULL;
        return ads_db__lmdb(iw->txn, err, rc, "reading a record through an index");
    }
    rc = mdb_cursor_get(iw->lc, &lk, &lv, MDB_SET);
    if (rc == MDB_NOTFOUND && !first)
        return 0;
    if (rc == MDB_NOTFOUND)
        return ads_error_set(err, ADS_ECORRUPT,
                             "type %s: the index on %s names a record that is not there "
                             "(adstore verify says where)",
                             t->name, iw->spans[iw->at]->ix->name);
    if (rc)
        return ads_db__lmdb(iw->txn, err, rc, "reading a record through an index");
    if (first)
        iw->fetched++;
    row_env env;
    if ((rc = ads_row__parse(&env, iw->skey, slen, lv.mv_data, lv.mv_size, t->name, err)))
        return rc;
    if ((env.flags & ROW_DELETED) && !(iw->flags & ADS_SCAN_DELETED))
        return 0;
    ads_arena_reset(iw->arena);
    if (first && iw->at && seen_before(iw, env.data, env.len))
        return 0;
    ads_row__fill(&iw->row, iw->txn, t, iw->skey, slen, &env, true, iw->arena);
    if (!iw->where)
        return 1;
    ads_value val;
    ads_view view = ads_row_view(&iw->row, NULL);
    if (ads_expr_eval(&val, iw->where, &view, iw->arena))
        return ads_error_set(err, ADS_ENOMEM, "evaluating the constraint: out of memory");
    switch (val.type) {
    case ADS_BOOLEAN:
        return val.u.b;
    case ADS_INTEGER:
        return val.u.i != 0;
    case ADS_REAL:
        return val.u.r != 0;
    default:
        return 0;
    }
}

/* The record of entry k (v: where its stored key's rest starts) when it
 * qualifies: 1 with iw->row, 0 not, or an error. */
static int offer(ads_index_walk *iw, const MDB_val *k, const MDB_val *v, ads_error *err)
{
    const ads_type *t = iw->type;
    if (iw->stop && iw->stop(iw->stop_ctx))
        return ads_error_set(err, ADS_ELIMIT, "interrupted");
    const unsigned char *p = k->mv_data;
    size_t off = v->mv_size == 2 ? ((size_t)((const unsigned char *)v->mv_data)[0] << 8 |
                                    ((const unsigned char *)v->mv_data)[1])
                                 : 0;
    if (off < 5 || off > k->mv_size + 4 || k->mv_size + 4 - off + 4 > ADS_KEY_INLINE_MAX)
        return ads_error_set(err, ADS_ECORRUPT,
                             "type %s: an entry of the index on %s is corrupt (adstore verify "
                             "says where)",
                             t->name, iw->spans[iw->at]->ix->name);
    size_t rest = k->mv_size + 4 - off;
    for (size_t i = 0; i < iw->nfilters; i++) {
        int rc = probe(iw, i, p + off - 4, rest);
        if (rc == 0) {
            iw->probed_out++;
            return 0; /* another term of the AND cannot hold */
        }
        if (rc != 1)
            return ads_db__lmdb(iw->txn, err, rc, "reading an index");
    }
    ads_index__be32(iw->skey, t->id);
    memcpy(iw->skey + 4, p + off - 4, rest);
    return fetch(iw, 4 + rest, true, err);
}

/* ---- merging exact spans ---- */

static int corrupt_entry(const ads_index_walk *iw, const ads_index_span *s, ads_error *err)
{
    return ads_error_set(err, ADS_ECORRUPT,
                         "type %s: an entry of the index on %s is corrupt (adstore verify "
                         "says where)",
                         iw->type->name, s->ix->name);
}

/* Take what r's cursor got (rc, *k, *v) as r's current entry, or note
 * that r has none left. */
static int cur_load(ads_index_walk *iw, const ads_index_span *s, ix_cur *r, int rc,
                    const MDB_val *k, const MDB_val *v, ads_error *err)
{
    if (rc && rc != MDB_NOTFOUND)
        return ads_db__lmdb(iw->txn, err, rc, "reading an index");
    const unsigned char *p = k->mv_data;
    if (rc || k->mv_size < r->plen || !same(p, r->key, r->plen)) {
        r->rest = NULL;
        return 0;
    }
    const unsigned char *o = v->mv_data;
    size_t rest = k->mv_size - r->plen;
    if (v->mv_size != 2 || ((size_t)o[0] << 8 | o[1]) != r->plen || !rest ||
        rest + 4 > ADS_KEY_INLINE_MAX)
        return corrupt_entry(iw, s, err);
    r->rest = p + r->plen;
    r->rlen = rest;
    iw->entries++;
    return 0;
}

/* Move r to its first entry whose rest is >= t (tlen bytes). A span
 * sparse against the others gets there in one step, so a step is tried
 * first; each step that falls short makes the range try again only after
 * twice as many seeks (up to 15), so a dense span seeks almost always. */
static int cur_seek(ads_index_walk *iw, const ads_index_span *s, ix_cur *r,
                    const unsigned char *t, size_t tlen, ads_error *err)
{
    MDB_val k, v;
    int rc;
    if (!r->rest || bytecmp(r->rest, r->rlen, t, tlen) >= 0)
        return 0;
    if (r->skip == 0) {
        rc = mdb_cursor_get(r->c, &k, &v, MDB_NEXT);
        if ((rc = cur_load(iw, s, r, rc, &k, &v, err)))
            return rc;
        if (!r->rest || bytecmp(r->rest, r->rlen, t, tlen) >= 0) {
            r->miss = 0;
            return 0;
        }
        r->miss = r->miss < 8 ? 2 * r->miss + 1 : 15;
        r->skip = r->miss;
    } else {
        r->skip--;
    }
    /* a target too long for an entry is cut; the steps below finish */
    size_t n = r->plen + tlen > ADS_INDEX_KEY_MAX ? ADS_INDEX_KEY_MAX - r->plen : tlen;
    memcpy(r->key + r->plen, t, n);
    k.mv_data = r->key;
    k.mv_size = r->plen + n;
    rc = mdb_cursor_get(r->c, &k, &v, MDB_SET_RANGE);
    if ((rc = cur_load(iw, s, r, rc, &k, &v, err)))
        return rc;
    while (r->rest && bytecmp(r->rest, r->rlen, t, tlen) < 0) {
        rc = mdb_cursor_get(r->c, &k, &v, MDB_NEXT);
        if ((rc = cur_load(iw, s, r, rc, &k, &v, err)))
            return rc;
    }
    return 0;
}

/* The least rest st's ranges are at. */
static void stream_at(ix_stream *st)
{
    st->at = NULL;
    for (size_t i = 0; i < st->n; i++) {
        const ix_cur *r = &st->cur[i];
        if (r->rest && (!st->at || bytecmp(r->rest, r->rlen, st->at, st->at_len) < 0)) {
            st->at = r->rest;
            st->at_len = r->rlen;
        }
    }
}

/* st to its first record at or past t. t may be where another stream is
 * (a range of st never reads it). */
static int stream_seek(ads_index_walk *iw, ix_stream *st, const unsigned char *t, size_t tlen,
                       ads_error *err)
{
    for (size_t j = 0; j < st->n; j++) {
        int rc = cur_seek(iw, st->span, &st->cur[j], t, tlen, err);
        if (rc)
            return rc;
    }
    stream_at(st);
    return 0;
}

/* Past the record st is at (iw->target): each range holding it steps on. */
static int stream_step(ads_index_walk *iw, ix_stream *st, ads_error *err)
{
    for (size_t j = 0; j < st->n; j++) {
        ix_cur *r = &st->cur[j];
        if (!r->rest || bytecmp(r->rest, r->rlen, iw->target, iw->tlen) != 0)
            continue;
        MDB_val k, v;
        int rc = mdb_cursor_get(r->c, &k, &v, MDB_NEXT);
        if ((rc = cur_load(iw, st->span, r, rc, &k, &v, err)))
            return rc;
    }
    stream_at(st);
    return 0;
}

/* A stream per span (the walk's own first), each range at its first
 * entry; ranges with none are left out. */
static int open_streams(ads_index_walk *iw, ads_error *err)
{
    iw->nstreams = 1 + iw->nfilters;
    if (!(iw->streams = calloc(iw->nstreams, sizeof *iw->streams)))
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    for (size_t i = 0; i < iw->nstreams; i++) {
        const ads_index_span *s = i ? iw->filters[i - 1] : iw->spans[0];
        ix_stream *st = &iw->streams[i];
        st->span = s;
        if (!(st->cur = calloc(s->n, sizeof *st->cur)))
            return ads_error_set(err, ADS_ENOMEM, "out of memory");
        for (size_t j = 0; j < s->n; j++) {
            const ix_range *g = &s->r[j];
            ix_cur *r = &st->cur[st->n];
            r->plen = 4 + g->lo_len;
            if (r->plen + 1 > ADS_INDEX_KEY_MAX)
                continue; /* too long for an entry (ads_index_span_add refuses it) */
            ads_index__be32(r->key, s->ix->id);
            memcpy(r->key + 4, g->lo, g->lo_len);
            int rc = mdb_cursor_open(iw->txn->txn, iw->txn->db->index, &r->c);
            if (rc) {
                r->c = NULL;
                return ads_db__lmdb(iw->txn, err, rc, "reading an index");
            }
            MDB_val k = {r->plen, r->key}, v;
            rc = mdb_cursor_get(r->c, &k, &v, MDB_SET_RANGE);
            if ((rc = cur_load(iw, s, r, rc, &k, &v, err)) || !r->rest) {
                mdb_cursor_close(r->c);
                r->c = NULL;
                if (rc)
                    return rc;
                continue;
            }
            st->n++;
        }
        stream_at(st);
    }
    return 0;
}

/* The next record every stream holds: 1 with its rest in iw->target, 0 at
 * the end. A leapfrog: t is the furthest record a stream has reached, and
 * each stream in turn moves to t or past it (then t moves there), until
 * every stream is at t. t stays where its stream is, which no seek to t
 * moves. */
static int merge_next(ads_index_walk *iw, ads_error *err)
{
    ix_stream *st = iw->streams;
    size_t m = iw->nstreams, agree = 1, i = 1;
    int rc;
    if (iw->merge_started && (rc = stream_step(iw, &st[0], err)))
        return rc;
    iw->merge_started = true;
    if (!st[0].at)
        return 0;
    const unsigned char *t = st[0].at;
    size_t tlen = st[0].at_len;
    for (;;) {
        if ((rc = stream_seek(iw, &st[i], t, tlen, err)))
            return rc;
        if (!st[i].at)
            return 0;
        if (bytecmp(st[i].at, st[i].at_len, t, tlen) == 0) {
            if (++agree == m)
                break;
        } else {
            t = st[i].at;
            tlen = st[i].at_len;
            agree = 1;
        }
        i = i + 1 == m ? 0 : i + 1;
    }
    memcpy(iw->target, t, tlen);
    iw->tlen = tlen;
    return 1;
}

/* The first walk: merge when the walk's span and every filter are exact,
 * else probe the filters. */
static int prepare(ads_index_walk *iw, ads_error *err)
{
    iw->prepared = true;
    iw->merge = iw->n == 1 && iw->nfilters && probeable(iw->spans[0]);
    return iw->merge ? open_streams(iw, err) : open_probes(iw, err);
}

static int merge_rows(ads_index_walk *iw, ads_error *err)
{
    int rc;
    while ((rc = merge_next(iw, err)) == 1) {
        ads_index__be32(iw->skey, iw->type->id);
        memcpy(iw->skey + 4, iw->target, iw->tlen);
        if ((rc = fetch(iw, 4 + iw->tlen, true, err)) != 0)
            return rc;
    }
    return rc;
}

/* The next record through the index: 1 with iw->row, 0 at the end. */
static int walk_rows(ads_index_walk *iw, ads_error *err)
{
    MDB_val k, v;
    int rc;
    if (!iw->prepared && (rc = prepare(iw, err)))
        return rc;
    if (iw->merge)
        return merge_rows(iw, err);
    while (iw->at < iw->n) {
        rc = walk_next(&iw->w, iw->txn, iw->spans[iw->at], &k, &v, err);
        if (rc < 0)
            return rc;
        if (rc == 0) {
            iw->at++;
            iw->w.range = 0;
            iw->w.open = false;
            continue;
        }
        iw->entries++;
        if ((rc = offer(iw, &k, &v, err)) != 0)
            return rc;
    }
    return 0;
}

/* A write transaction's walk: every qualifying record's key first. */
static int collect_all(ads_index_walk *iw, ads_error *err)
{
    int rc;
    while ((rc = walk_rows(iw, err)) == 1) {
        size_t n = iw->row.key_len;
        unsigned char len[2] = {(unsigned char)(n >> 8), (unsigned char)n};
        ads_buf_add(&iw->keys, len, 2);
        ads_buf_add(&iw->keys, iw->skey, n);
        if (iw->keys.failed)
            return ads_error_set(err, ADS_ENOMEM, "out of memory");
    }
    iw->collected = true;
    return rc;
}

/* The next collected record that still qualifies. */
static int collected_next(ads_index_walk *iw, ads_error *err)
{
    const unsigned char *p = (const unsigned char *)iw->keys.p;
    while (iw->kat + 2 <= iw->keys.len) {
        size_t n = (size_t)p[iw->kat] << 8 | p[iw->kat + 1];
        memcpy(iw->skey, p + iw->kat + 2, n);
        iw->kat += 2 + n;
        int rc = fetch(iw, n, false, err);
        if (rc)
            return rc;
    }
    return 0;
}

void ads_index__walk_set_stop(ads_index_walk *iw, bool (*stop)(void *ctx), void *ctx)
{
    iw->stop = stop;
    iw->stop_ctx = ctx;
}

int ads_index__walk_next(ads_row **row, ads_index_walk *iw, ads_error *err)
{
    int rc;
    if (iw->collect && !iw->collected && (rc = collect_all(iw, err)))
        return rc;
    rc = iw->collect ? collected_next(iw, err) : walk_rows(iw, err);
    if (rc == 1)
        *row = &iw->row;
    return rc;
}
