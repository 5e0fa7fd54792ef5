/*
 * engine/timeline.c: rows over a time range, in time order across records,
 * for timeline queries.
 *
 * Each record's rows are contiguous in `history` (keyed by record, then
 * time) with its latest row in `latest`. For [t1, t2) the iterator seeks,
 * per record, to the row in effect at t1 (one LMDB seek), then reads that
 * record's later rows forward a few at a time into a small buffer; a binary
 * heap over the records' next rows yields them in (_Timestamp,
 * __SystemTimestamp) order. Only rows in the range and one row per record
 * before it are read; memory is a small buffer per record. Pointers into
 * LMDB stay valid for a read transaction's life, so buffers hold pointers,
 * not copies.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/engine_int.h"

#define TL_BUF 8

/* A history row kept as a difference names its keyframe, the nearest whole
 * row before it (engine/history.c): the record's last whole row read, kept
 * with the item (LMDB's memory, valid for the read transaction) and made
 * whole as the item is yielded. */
typedef struct tl_kf {
    const unsigned char *data; /* NULL: not known (found when needed) */
    size_t len;
    uint32_t sum;
} tl_kf;

typedef struct tl_item {
    row_env env;
    bool latest;
    bool in_chunk; /* a chunk's row: a difference's keyframe is the chunk's row 0 */
    tl_kf kf;
} tl_item;

typedef struct tl_rec {
    const ads_type *type;
    MDB_val lk, lv;      /* the latest row */
    row_env lenv;
    unsigned char hlast[16]; /* the dates of the last history row read */
    bool hlast_set;          /* else none yet: read from the record's first */
    bool history_done;   /* no more history rows to read */
    bool latest_done;    /* the latest row has been queued or is out of range */
    tl_item buf[TL_BUF];
    int nbuf, pos;
    tl_kf kf;            /* the last whole history row read */
} tl_rec;

struct ads_timeline {
    ads_txn *txn;
    double t1, t2;
    tl_rec *recs;
    size_t nrecs;
    size_t *heap; /* record indexes ordered by their next row */
    size_t nheap;
    ads_hrows hr;
    bool hr_open;
    ads_arena *arena;
    ads_row row;
    ads_buf whole;       /* the yielded row, when it was kept as a difference */
    size_t key_off;
    bool by_record; /* yield record by record (ads_timeline_by_record) */
    size_t cur;     /* then: the record being read */
    const tl_rec *hc_at; /* the record whose hlast hr sits on (NULL: unknown) */
};

static int item_cmp(const tl_item *a, const tl_item *b)
{
    if (a->env.ts != b->env.ts)
        return a->env.ts < b->env.ts ? -1 : 1;
    if (a->env.systs != b->env.systs)
        return a->env.systs < b->env.systs ? -1 : 1;
    return 0;
}

static int heap_less(const ads_timeline *tl, size_t a, size_t b)
{
    const tl_rec *ra = &tl->recs[a], *rb = &tl->recs[b];
    int c = item_cmp(&ra->buf[ra->pos], &rb->buf[rb->pos]);
    return c ? c < 0 : a < b;
}

static void heap_push(ads_timeline *tl, size_t r)
{
    size_t i = tl->nheap++;
    tl->heap[i] = r;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!heap_less(tl, tl->heap[i], tl->heap[p]))
            break;
        size_t t = tl->heap[i];
        tl->heap[i] = tl->heap[p];
        tl->heap[p] = t;
        i = p;
    }
}

static void heap_down(ads_timeline *tl, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < tl->nheap && heap_less(tl, tl->heap[l], tl->heap[m]))
            m = l;
        if (r < tl->nheap && heap_less(tl, tl->heap[r], tl->heap[m]))
            m = r;
        if (m == i)
            return;
        size_t t = tl->heap[i];
        tl->heap[i] = tl->heap[m];
        tl->heap[m] = t;
        i = m;
    }
}

/* The history key of r's last row read (or r's key alone, before any)
 * into key; its length. */
static size_t hlast_key(const tl_rec *r, unsigned char *key)
{
    size_t klen = r->lk.mv_size;
    memcpy(key, r->lk.mv_data, klen);
    if (!r->hlast_set)
        return klen;
    memcpy(key + klen, r->hlast, 16);
    return klen + 16;
}

static void set_hlast(tl_rec *r, const row_env *env)
{
    ads_key__sortable_double(r->hlast, env->ts);
    for (int i = 0; i < 8; i++)
        r->hlast[8 + i] = (unsigned char)((uint64_t)env->systs >> (56 - 8 * i));
    r->hlast_set = true;
}

static void latest_item(tl_item *it, const tl_rec *r)
{
    it->env = r->lenv;
    it->latest = true;
    it->in_chunk = false;
    it->kf.data = NULL;
}

/* The history row under the cursor into it: a one-row entry's as stored
 * (a difference made whole when yielded, from r's last whole row read), a
 * chunk row's with its chunk's keyframe. */
static int history_item(ads_timeline *tl, tl_rec *r, tl_item *it, ads_error *err)
{
    ads_hrows *h = &tl->hr;
    it->latest = false;
    it->kf.data = NULL;
    it->in_chunk = h->chunk;
    if (h->chunk) {
        int rc = ads_hrows__parse(h, err);
        if (rc)
            return rc;
        const chunk_row *c = &h->ch.rows[h->i];
        it->env = (row_env){c->flags | (h->ch.full_key ? ROW_LONGKEY : 0), c->ts, c->offset,
                            c->systs, h->ch.full_key, h->ch.full_key_len, c->data, c->len,
                            h->ch.sum};
        it->kf = (tl_kf){h->ch.base, h->ch.base_len, h->ch.sum};
        return 0;
    }
    /* a history row's key begins with its record's latest key, checked when
     * the record was set up (the callers compared the two) */
    int rc = ads_row__parse_history(&it->env, h->k.mv_data, h->k.mv_size, h->ev.mv_data,
                                    h->ev.mv_size, "history row", err);
    if (rc)
        return rc;
    if (it->env.flags & ROW_DELTA) {
        it->kf = r->kf;
    } else {
        r->kf.data = it->env.data;
        r->kf.len = it->env.len;
        r->kf.sum = it->env.sum;
    }
    return 0;
}

/* Is the cursor's row r's? Else the end of r's history, or a damaged key
 * (0 at the end, or an error). */
static int of_record(ads_timeline *tl, tl_rec *r, const unsigned char *prev, size_t plen,
                     ads_error *err)
{
    const MDB_val *k = &tl->hr.k;
    size_t klen = r->lk.mv_size;
    if (k->mv_size == klen + 16 && memcmp(k->mv_data, r->lk.mv_data, klen) == 0) {
        int rc = ads_walk__order(prev, plen, k, r->type->name, err);
        return rc ? rc : 1;
    }
    if (tl->hr.chunk && tl->hr.i > 0)
        return ads_walk__corrupt(r->type->name, "a chunk holds rows of two records", err);
    MDB_val ek = tl->hr.ek;
    int rc = ads_walk__check_end(tl->txn, tl->txn->db->history, prev, plen, &ek, r->type->name,
                                 err);
    return rc ? rc : 0;
}

/* Refill r's buffer with its next rows before t2. */
static int refill(ads_timeline *tl, tl_rec *r, ads_error *err)
{
    r->nbuf = r->pos = 0;
    unsigned char prev[ADS_KEY_INLINE_MAX + 16];
    while (!r->history_done && r->nbuf < TL_BUF) {
        size_t plen = hlast_key(r, prev);
        int rc;
        if (tl->hc_at == r) {
            /* the cursor is where r's last refill left it (read record by
             * record, every refill but a record's first): no seek */
            rc = ads_hrows__next(&tl->hr, err);
        } else {
            rc = ads_hrows__seek(&tl->hr, prev, plen, r->hlast_set, err);
        }
        tl->hc_at = NULL;
        while (rc == 1 && r->nbuf < TL_BUF) {
            if ((rc = of_record(tl, r, prev, plen, err)) <= 0)
                break;
            tl_item *it = &r->buf[r->nbuf];
            int irc = history_item(tl, r, it, err);
            if (irc)
                return irc;
            set_hlast(r, &it->env);
            plen = hlast_key(r, prev);
            if (it->env.ts >= tl->t2) {
                r->history_done = true;
                r->latest_done = true;
                break;
            }
            r->nbuf++;
            if (r->nbuf < TL_BUF)
                rc = ads_hrows__next(&tl->hr, err);
            else
                tl->hc_at = r; /* on r's hlast */
        }
        if (rc < 0)
            return rc;
        if (rc == 0)
            r->history_done = true;
        if (r->nbuf == TL_BUF)
            return 0;
    }
    if (r->history_done && !r->latest_done && r->nbuf < TL_BUF) {
        r->latest_done = true;
        if (r->lenv.ts < tl->t2)
            latest_item(&r->buf[r->nbuf++], r);
    }
    return 0;
}

/* The history row of r in effect at t1 into r's buffer, when there is one:
 * 1, 0 none (the record begins after t1), or an error. */
static int in_effect(ads_timeline *tl, tl_rec *r, ads_error *err)
{
    size_t klen = r->lk.mv_size;
    unsigned char seek[ADS_KEY_INLINE_MAX + 16];
    memcpy(seek, r->lk.mv_data, klen);
    ads_key__sortable_double(seek + klen, tl->t1);
    memset(seek + klen + 8, 0xff, 8);
    int rc = ads_hrows__before(&tl->hr, seek, klen + 16, err);
    if (rc < 0)
        return rc;
    const MDB_val *k = &tl->hr.k;
    if (rc == 0 || k->mv_size != klen + 16 || memcmp(k->mv_data, r->lk.mv_data, klen) != 0) {
        /* the record begins after t1 (the key found before it must be
         * another record's, below this one) */
        const MDB_val *ek = &tl->hr.ek;
        if (rc == 1 && (ads_walk__order(k->mv_data, k->mv_size, &r->lk, r->type->name, err) ||
                        !ads_row__key_sound(ek->mv_data, ek->mv_size, tl->hr.ev.mv_data,
                                            tl->hr.ev.mv_size)))
            return ads_walk__corrupt(r->type->name, "a key before a record's history is damaged",
                                     err);
        return 0;
    }
    tl_item *it = &r->buf[r->nbuf];
    if ((rc = history_item(tl, r, it, err)))
        return rc;
    if (!it->in_chunk && (it->env.flags & ROW_DELTA)) {
        /* its keyframe: also that of the differences read after it */
        row_env kf;
        if ((rc = ads_hist__keyframe(tl->txn, k->mv_data, klen, &kf, "history row", err)) < 0)
            return rc;
        if (rc == 1) {
            r->kf = (tl_kf){kf.data, kf.len, kf.sum};
            it->kf = r->kf;
        }
    }
    r->nbuf++;
    set_hlast(r, &it->env);
    return 1;
}

/* Set a record up: its row in effect at t1, and its first buffer. */
static int start_record(ads_timeline *tl, tl_rec *r, ads_error *err)
{
    tl->hc_at = NULL; /* the seek below moves the cursor */
    int rc = ads_row__parse(&r->lenv, r->lk.mv_data, r->lk.mv_size, r->lv.mv_data, r->lv.mv_size,
                            "latest row", err);
    if (rc)
        return rc;
    r->nbuf = r->pos = 0;
    if (r->lenv.ts <= tl->t1) {
        /* the latest row is in effect at t1: nothing else of the record counts */
        r->history_done = r->latest_done = true;
        if (r->lenv.ts < tl->t2)
            latest_item(&r->buf[r->nbuf++], r);
        return 0;
    }
    r->hlast_set = false;
    if ((rc = in_effect(tl, r, err)) < 0)
        return rc;
    int have = r->nbuf;
    tl_item first = r->buf[0];
    if ((rc = refill(tl, r, err)))
        return rc;
    if (have) {
        /* put the in-effect row back in front */
        if (r->nbuf == TL_BUF) {
            /* drop the last buffered row and read it again later */
            r->nbuf--;
            set_hlast(r, &r->buf[r->nbuf - 1].env);
            tl->hc_at = NULL; /* the cursor is a row past hlast now */
            if (r->buf[r->nbuf].latest)
                r->latest_done = false;
            else
                r->history_done = false;
        }
        memmove(&r->buf[1], &r->buf[0], (size_t)r->nbuf * sizeof r->buf[0]);
        r->buf[0] = first;
        r->nbuf++;
    }
    return 0;
}

int ads_timeline_open(ads_timeline **out, ads_txn *txn, const ads_type *t, double t1, double t2,
                      ads_error *err)
{
    if (!out || !txn)
        return ads_error_set(err, ADS_EINVAL, "NULL argument");
    if (!txn->readonly)
        return ads_error_set(err, ADS_EINVAL, "timeline iteration needs a read transaction");
    if (!(t1 < t2))
        return ads_error_set(err, ADS_EINVAL, "an empty time range");
    ads_timeline *tl = calloc(1, sizeof *tl);
    if (!tl || !(tl->arena = ads_arena_new())) {
        free(tl);
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    }
    tl->txn = txn;
    tl->t1 = t1;
    tl->t2 = t2;
    MDB_cursor *lc = NULL;
    int rc = mdb_cursor_open(txn->txn, txn->db->latest, &lc);
    if (rc) {
        rc = ads_db__lmdb(txn, err, rc, "opening a timeline");
        goto fail;
    }
    if ((rc = ads_hrows__open(&tl->hr, txn, err)))
        goto fail;
    tl->hr_open = true;
    unsigned char prefix[4];
    MDB_val k, v;
    if (t) {
        prefix[0] = (unsigned char)(t->id >> 24);
        prefix[1] = (unsigned char)(t->id >> 16);
        prefix[2] = (unsigned char)(t->id >> 8);
        prefix[3] = (unsigned char)t->id;
        k.mv_data = prefix;
        k.mv_size = 4;
        if ((rc = ads_walk__check_start(txn, txn->db->latest, prefix, 4, t->name, err)))
            goto fail;
        rc = mdb_cursor_get(lc, &k, &v, MDB_SET_RANGE);
    } else {
        rc = mdb_cursor_get(lc, &k, &v, MDB_FIRST);
    }
    size_t cap = 0;
    const ads_type *cur = NULL;
    MDB_val prev = {0, NULL};
    while (rc == 0) {
        const char *tname = t ? t->name : cur ? cur->name : "(any)";
        if (t && (k.mv_size < 4 || memcmp(k.mv_data, prefix, 4) != 0)) {
            /* the end of the type's records, or a damaged key */
            if ((rc = ads_walk__check_end(txn, txn->db->latest, prev.mv_data ? prev.mv_data : prefix,
                                          prev.mv_data ? prev.mv_size : 4, &k, tname, err)))
                goto fail;
            break;
        }
        if ((rc = ads_walk__order(prev.mv_data, prev.mv_size, &k, tname, err)))
            goto fail;
        prev = k;
        uint32_t id = ads_key__get_typeid(k.mv_data);
        if (!cur || cur->id != id) {
            if (t) {
                cur = t;
            } else if ((rc = ads_types__by_id(&cur, txn, id, err))) {
                goto fail;
            }
        }
        if (tl->nrecs == cap) {
            cap = cap ? 2 * cap : 64;
            tl_rec *more = realloc(tl->recs, cap * sizeof *more);
            if (!more) {
                rc = ads_error_set(err, ADS_ENOMEM, "out of memory");
                goto fail;
            }
            tl->recs = more;
        }
        tl_rec *r = &tl->recs[tl->nrecs];
        memset(r, 0, sizeof *r);
        r->type = cur;
        r->lk = k;
        r->lv = v;
        if ((rc = start_record(tl, r, err)))
            goto fail;
        if (r->nbuf > 0)
            tl->nrecs++;
        rc = mdb_cursor_get(lc, &k, &v, MDB_NEXT);
    }
    if (rc && rc != MDB_NOTFOUND) {
        rc = ads_db__lmdb(txn, err, rc, "opening a timeline");
        goto fail;
    }
    mdb_cursor_close(lc);
    lc = NULL;
    tl->heap = malloc((tl->nrecs ? tl->nrecs : 1) * sizeof *tl->heap);
    if (!tl->heap) {
        rc = ads_error_set(err, ADS_ENOMEM, "out of memory");
        goto fail;
    }
    for (size_t i = 0; i < tl->nrecs; i++)
        heap_push(tl, i);
    *out = tl;
    return 0;
fail:
    if (lc)
        mdb_cursor_close(lc);
    ads_timeline_close(tl);
    return rc;
}

/* it's row, kept as a difference, made whole into env (its data then in
 * tl->whole). */
static int whole(ads_timeline *tl, const tl_rec *r, const tl_item *it, row_env *env,
                 ads_error *err)
{
    if (it->in_chunk) {
        int rc = ads_chunk__undelta(env->data, env->len, it->kf.data, it->kf.len, &tl->whole,
                                    r->type->name, err);
        if (rc)
            return rc;
        env->data = (const unsigned char *)tl->whole.p;
        env->len = tl->whole.len;
        env->flags &= ~(unsigned)ROW_DELTA;
        return 0;
    }
    if (it->kf.data)
        return ads_hist__apply(env, it->kf.sum, it->kf.data, it->kf.len, &tl->whole,
                               r->type->name, err);
    /* its keyframe not read: found from the row's history key */
    unsigned char hkey[ADS_KEY_INLINE_MAX + 16];
    size_t klen = r->lk.mv_size;
    memcpy(hkey, r->lk.mv_data, klen);
    ads_key__sortable_double(hkey + klen, env->ts);
    for (int i = 0; i < 8; i++)
        hkey[klen + 8 + i] = (unsigned char)((uint64_t)env->systs >> (56 - 8 * i));
    return ads_hist__resolve(tl->txn, hkey, klen + 16, env, &tl->whole, r->type->name, err);
}

/* Yield it, r's row, unless a later row of the record at the same
 * _Timestamp replaces it: it was never in effect (docs/query.md, "Rows at
 * one instant"). 1 with *row, 0 when replaced, or an error. */
static int yield(ads_row **row, ads_timeline *tl, const tl_rec *r, const tl_item *it,
                 ads_error *err)
{
    if (r->pos < r->nbuf && r->buf[r->pos].env.ts == it->env.ts)
        return 0;
    ads_arena_reset(tl->arena);
    row_env env = it->env;
    if (env.flags & ROW_DELTA) {
        int rc = whole(tl, r, it, &env, err);
        if (rc)
            return rc;
    }
    ads_row__fill(&tl->row, tl->txn, r->type, r->lk.mv_data, r->lk.mv_size, &env, it->latest,
                  tl->arena);
    *row = &tl->row;
    return 1;
}

static int next_in_time(ads_row **row, size_t *record, ads_timeline *tl, ads_error *err)
{
    while (tl->nheap > 0) {
        size_t ri = tl->heap[0];
        tl_rec *r = &tl->recs[ri];
        tl_item it = r->buf[r->pos];
        /* advance the record */
        r->pos++;
        if (r->pos >= r->nbuf) {
            int rc = refill(tl, r, err);
            if (rc)
                return rc;
        }
        if (r->pos < r->nbuf) {
            heap_down(tl, 0);
        } else {
            tl->heap[0] = tl->heap[--tl->nheap];
            if (tl->nheap)
                heap_down(tl, 0);
        }
        int y = yield(row, tl, r, &it, err);
        if (y < 0)
            return y;
        if (y) {
            if (record)
                *record = ri;
            return 1;
        }
    }
    return 0;
}

static int next_by_record(ads_row **row, size_t *record, ads_timeline *tl, ads_error *err)
{
    while (tl->cur < tl->nrecs) {
        tl_rec *r = &tl->recs[tl->cur];
        if (r->pos >= r->nbuf) {
            tl->cur++;
            continue;
        }
        tl_item it = r->buf[r->pos++];
        if (r->pos >= r->nbuf) {
            int rc = refill(tl, r, err);
            if (rc)
                return rc;
        }
        int y = yield(row, tl, r, &it, err);
        if (y < 0)
            return y;
        if (y) {
            if (record)
                *record = tl->cur;
            return 1;
        }
    }
    return 0;
}

int ads_timeline_next(ads_row **row, size_t *record, ads_timeline *tl, ads_error *err)
{
    if (!tl || !row)
        return ads_error_set(err, ADS_EINVAL, "NULL argument");
    return tl->by_record ? next_by_record(row, record, tl, err)
                         : next_in_time(row, record, tl, err);
}

void ads_timeline_by_record(ads_timeline *tl)
{
    tl->by_record = true;
}

size_t ads_timeline_records(const ads_timeline *tl)
{
    return tl->nrecs;
}

void ads_timeline_close(ads_timeline *tl)
{
    if (!tl)
        return;
    if (tl->hr_open)
        ads_hrows__close(&tl->hr);
    free(tl->recs);
    free(tl->heap);
    ads_arena_free(tl->arena);
    ads_buf_free(&tl->whole);
    free(tl);
}
