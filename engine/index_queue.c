/*
 * engine/index_queue.c: a bulk batch's index entries, written together.
 *
 * Row by row, each entry is one put (or delete) descending the index table
 * from its root, in the order of the rows' keys; the entries of one index
 * value land all over the table, so each put finds its page anew. A bulk
 * batch (bulk.c) queues its entry changes instead and writes them at the
 * end of the batch, in the transaction of the rows, sorted by entry key
 * (index id, value, record key) through one cursor: consecutive entries
 * mostly land on the page the cursor is on, which LMDB finds without a
 * search, and entries after the table's last key are appended (MDB_APPEND:
 * pages filled, not split in half), as a rising value such as a QDate gives
 * when its index is the last declared.
 *
 * The queue is a log: a key may be put and deleted several times in one
 * batch (a record stored twice, a value changed and changed back). Sorting
 * is stable on the order queued, and only the last change of each key is
 * written: that is the state the writes one by one would have left.
 */
#include <stdlib.h>
#include <string.h>

#include "base/limits.h"
#include "engine/engine_int.h"

/* A queued change: 24 bytes, so that sorting moves little. */
typedef struct ixq_op {
    uint64_t head; /* the key's first 8 bytes, big-endian, zero-padded */
    uint32_t at;   /* where the key starts in keys */
    uint32_t seq;  /* the order queued */
    uint16_t len;
    uint16_t off; /* a put's record key offset, IXQ_DELETE for a delete */
} ixq_op;

#define IXQ_DELETE UINT16_MAX

struct ads_ixq {
    ads_buf keys; /* the queued keys, back to back */
    ixq_op *ops, *tmp;
    size_t n, cap;
};

ads_ixq *ads_ixq__new(void)
{
    return calloc(1, sizeof(ads_ixq));
}

void ads_ixq__free(ads_ixq *q)
{
    if (!q)
        return;
    ads_buf_free(&q->keys);
    free(q->ops);
    free(q->tmp);
    free(q);
}

void ads_ixq__reset(ads_ixq *q)
{
    ads_buf_clear(&q->keys);
    q->n = 0;
}

int ads_ixq__add(ads_ixq *q, bool put, const unsigned char *key, size_t len, uint16_t off,
                 ads_error *err)
{
    if (q->n == q->cap) {
        size_t cap = q->cap ? 2 * q->cap : 1024;
        if (cap > UINT32_MAX)
            return ads_error_set(err, ADS_ELIMIT, "too many index entries in one batch");
        ixq_op *ops = realloc(q->ops, cap * sizeof *ops);
        if (ops)
            q->ops = ops;
        ixq_op *tmp = ops ? realloc(q->tmp, cap * sizeof *tmp) : NULL;
        if (!tmp)
            return ads_error_set(err, ADS_ENOMEM, "out of memory");
        q->tmp = tmp;
        q->cap = cap;
    }
    size_t at = q->keys.len;
    if (at > UINT32_MAX - len)
        return ads_error_set(err, ADS_ELIMIT, "too many index entries in one batch");
    ads_buf_add(&q->keys, key, len);
    if (q->keys.failed)
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    uint64_t head = 0;
    for (size_t i = 0; i < 8; i++)
        head = head << 8 | (i < len ? key[i] : 0);
    q->ops[q->n] = (ixq_op){head, (uint32_t)at, (uint32_t)q->n, (uint16_t)len,
                            put ? off : IXQ_DELETE};
    q->n++;
    return 0;
}

/* LMDB's order of keys (bytes, then length). */
static int key_cmp(const unsigned char *a, size_t alen, const unsigned char *b, size_t blen)
{
    int c = memcmp(a, b, alen < blen ? alen : blen);
    if (c)
        return c;
    return alen < blen ? -1 : alen > blen;
}

/* Does x sort before y: by key (heads that differ decide as the keys
 * would: a key that ends early is padded with zeros, as a prefix sorts
 * first), then in the order queued. */
static inline bool op_less(const ixq_op *x, const ixq_op *y, const unsigned char *keys)
{
    if (x->head != y->head)
        return x->head < y->head;
    int c = key_cmp(keys + x->at, x->len, keys + y->at, y->len);
    return c ? c < 0 : x->seq < y->seq;
}

/* Sort a[0..n) (tmp: room for n): insertion sort of runs of 16, then
 * merges of runs, each skipped when its halves are already in order. */
static void merge_sort(ixq_op *a, ixq_op *tmp, size_t n, const unsigned char *keys)
{
    enum { RUN = 16 };
    for (size_t lo = 0; lo < n; lo += RUN) {
        size_t hi = lo + RUN < n ? lo + RUN : n;
        for (size_t i = lo + 1; i < hi; i++) {
            ixq_op x = a[i];
            size_t j = i;
            for (; j > lo && op_less(&x, &a[j - 1], keys); j--)
                a[j] = a[j - 1];
            a[j] = x;
        }
    }
    ixq_op *src = a, *dst = tmp;
    for (size_t w = RUN; w < n; w *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * w) {
            size_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            size_t i = lo, j = mid, k = lo;
            if (mid < hi && op_less(&src[mid - 1], &src[mid], keys))
                i = j = hi; /* in order already: copied below */
            while (i < mid && j < hi)
                dst[k++] = op_less(&src[j], &src[i], keys) ? src[j++] : src[i++];
            if (i == hi) {
                memcpy(dst + lo, src + lo, (hi - lo) * sizeof *dst);
                continue;
            }
            memcpy(dst + k, src + i, (mid - i) * sizeof *dst);
            k += mid - i;
            memcpy(dst + k, src + j, (hi - j) * sizeof *dst);
        }
        ixq_op *t = src;
        src = dst;
        dst = t;
    }
    if (src != a)
        memcpy(a, src, n * sizeof *a);
}

/* Sort a[0..n) by key, then order queued (tmp: room for n). A stable
 * radix sort by head (a byte that all heads share costs one count), then
 * each run of one head is checked and merge-sorted if out of order: the
 * keys of one index value mostly come queued in record key order already,
 * as the batch's rows were stored. */
static void sort_ops(ixq_op *a, ixq_op *tmp, size_t n, const unsigned char *keys)
{
    if (n < 2)
        return;
    ixq_op *src = a, *dst = tmp;
    for (unsigned shift = 0; shift < 64; shift += 8) {
        size_t count[256] = {0};
        for (size_t i = 0; i < n; i++)
            count[(src[i].head >> shift) & 255]++;
        if (count[(src[0].head >> shift) & 255] == n)
            continue;
        for (size_t b = 0, pos = 0; b < 256; b++) {
            size_t c = count[b];
            count[b] = pos;
            pos += c;
        }
        for (size_t i = 0; i < n; i++)
            dst[count[(src[i].head >> shift) & 255]++] = src[i];
        ixq_op *t = src;
        src = dst;
        dst = t;
    }
    if (src != a)
        memcpy(a, src, n * sizeof *a);
    for (size_t lo = 0, hi; lo < n; lo = hi) {
        bool sorted = true;
        for (hi = lo + 1; hi < n && a[hi].head == a[lo].head; hi++)
            if (sorted && !op_less(&a[hi - 1], &a[hi], keys))
                sorted = false;
        if (!sorted)
            merge_sort(a + lo, tmp, hi - lo, keys);
    }
}

/* Write the last change of each key, in key order, through cursor c. */
static int write_sorted(ads_txn *txn, MDB_cursor *c, const ixq_op *ops, size_t n,
                        const unsigned char *keys)
{
    unsigned char last[ADS_INDEX_KEY_MAX];
    size_t last_len = 0;
    MDB_val k, v;
    int rc = mdb_cursor_get(c, &k, &v, MDB_LAST);
    bool append = rc == MDB_NOTFOUND; /* an empty table */
    if (rc && !append)
        return rc;
    if (!append) {
        if (k.mv_size > sizeof last)
            return MDB_CORRUPTED;
        memcpy(last, k.mv_data, k.mv_size);
        last_len = k.mv_size;
    }
    for (size_t i = 0; i < n; i++) {
        const ixq_op *o = &ops[i];
        const unsigned char *p = keys + o->at;
        if (i + 1 < n && o->head == ops[i + 1].head &&
            key_cmp(p, o->len, keys + ops[i + 1].at, ops[i + 1].len) == 0)
            continue; /* a later change of this key decides */
        /* sorted: once past the table's last key, every key is */
        if (!append && key_cmp(p, o->len, last, last_len) > 0)
            append = true;
        k.mv_size = o->len;
        k.mv_data = (void *)p;
        txn->writes++;
        if (o->off != IXQ_DELETE) {
            unsigned char off[2] = {(unsigned char)(o->off >> 8), (unsigned char)o->off};
            v.mv_size = 2;
            v.mv_data = off;
            rc = mdb_cursor_put(c, &k, &v, append ? MDB_APPEND : 0);
        } else if (append) {
            rc = 0; /* no entry lies past the last */
        } else if ((rc = mdb_cursor_get(c, &k, &v, MDB_SET)) == 0) {
            rc = mdb_cursor_del(c, 0);
        } else if (rc == MDB_NOTFOUND) {
            rc = 0; /* verify reports a missing entry; a write repairs it */
        }
        if (rc)
            return rc;
    }
    return 0;
}

int ads_index__flush(ads_txn *txn, ads_error *err)
{
    ads_ixq *q = txn->ixq;
    if (!q || !q->n)
        return 0;
    uint64_t w0 = txn->writes;
    const unsigned char *keys = (const unsigned char *)q->keys.p;
    sort_ops(q->ops, q->tmp, q->n, keys);
    MDB_cursor *c;
    int rc = mdb_cursor_open(txn->txn, txn->db->index, &c);
    if (!rc) {
        rc = write_sorted(txn, c, q->ops, q->n, keys);
        mdb_cursor_close(c);
    }
    ads_ixq__reset(q);
    if (rc)
        rc = ads_db__lmdb(txn, err, rc, "writing index entries");
    return ads_db__failed_write(txn, w0, rc);
}
