/*
 * engine/bulk.c: bulk loading. Records are encoded as they are added and
 * queued as MessagePack rows; a full batch is stored in one write
 * transaction (through ads_db_write, so a full map is grown and the batch
 * run again), and the caller's on_batch callback runs inside that same
 * transaction, so progress records and records commit together. Nothing of
 * a failing batch is committed.
 *
 * Order: a batch is stored in the order of its records' keys (a stable
 * sort: two records with one key keep their order). LMDB copies every page
 * a transaction changes to a new place, so records arriving in another
 * order (slot ads as a collector reports them) would rewrite pages all
 * over the tree in every batch, split them half full and leave the leaves
 * scattered over the file; in key order a batch's rows land in runs of
 * neighbouring pages, filled as an ordered load fills them. A batch is
 * stored as it came when its order cannot matter or could be seen: a
 * record whose key is generated or cannot be made (the write reports why),
 * or a type with hooks. A failing sorted batch is run again in input order,
 * so the record reported is the first bad one as the input has them.
 *
 * Rows keyed by ids: the encoder remembers the names of the last record of
 * each attribute count (modulo ADS_MSGPACK_ORDER_SHAPES). At the end of a
 * batch its transaction looks their ids up (learn_ids); once the batch has
 * committed those ids are the store's for good (names.c), and are handed to
 * the encoder and to the store handle (db->bulk_shapes, which seeds the
 * loads after this one). A record of exactly those names is then queued
 * keyed by ids (_Timestamp and _Deleted by ADS_NAMES_GIVEN_TIMELINE + which)
 * and read through txn->given_nm; its write takes the row as the store
 * keeps it. Rows given by ads_bulk_add_row are never so read.
 *
 * Index entries: the batch's rows queue their index entry changes
 * (txn->ixq), written sorted at the end of the batch in its transaction
 * (index_queue.c), before on_batch runs.
 *
 * Backfill: every record must carry _Timestamp (in a form store.c's
 * ads_store__timestamp reads: an AbsTime, epoch seconds or ISO text). The
 * batch's time range is the range of its records' seconds; it opens one
 * backfill range of the OUID generator (shared/spec/identifiers.md section
 * 2), and every ordered key the batch generates is a backfill id dated at
 * its record's second.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "engine/engine_int.h"
#include "engine/stage_sort.h"

int ads_store__timestamp(const ads_value *v, double *secs, int32_t *offset);

#define BATCH_DEFAULT 10000

struct ads_bulk {
    ads_db *db;
    ads_bulk_options opt;
    ads_buf rows;
    size_t *offs; /* n + 1 offsets into rows */
    double *ts;   /* backfill: each record's _Timestamp */
    uint64_t *nums; /* each queued record's number in the load */
    size_t *order;  /* the order a batch is stored in (batch_order) */
    const ads_type **types; /* each queued row's type, as batch_order found it */
    ads_buf keys;           /* their record keys, back to back (batch_order) */
    size_t *key_ends;       /* where each row's key ends in keys */
    bool *by_ids;           /* each queued row is keyed by attribute ids ... */
    bool *plain;            /* ... by the load's encoder from plain attributes ... */
    uint64_t *sigs;         /* ... with this signature of its names */
    ads_msgpack_order *names; /* the attribute order of the last record encoded */
    ads_learnt learnt[ADS_MSGPACK_ORDER_SHAPES]; /* by the encoder's slot */
    ads_ixq *ixq;             /* a batch's index entries (index_queue.c) */
    size_t n, cap;
    uint64_t committed, added;
    uint64_t unchanged; /* committed records that appended no row */
    uint64_t failed;
    uint64_t flushed;   /* bytes of rows this load has committed */
};

int ads_bulk_begin(ads_bulk **out, ads_db *db, const ads_bulk_options *opt, ads_error *err)
{
    if (!out || !db)
        return ads_error_set(err, ADS_EINVAL, "NULL argument");
    if (db->flags & ADS_DB_READONLY)
        return ads_error_set(err, ADS_EREADONLY, "the store is open read-only");
    ads_bulk *b = calloc(1, sizeof *b);
    if (!b)
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    b->db = db;
    if (opt)
        b->opt = *opt;
    if (!b->opt.batch)
        b->opt.batch = BATCH_DEFAULT;
    b->failed = UINT64_MAX;
    b->offs = malloc(sizeof *b->offs);
    b->ixq = ads_ixq__new();
    if (!b->offs || !b->ixq || ads_msgpack_order_new(&b->names, NULL)) {
        free(b->offs);
        ads_ixq__free(b->ixq);
        free(b);
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    }
    b->offs[0] = 0;
    /* the shapes earlier loads through this handle learnt ids for */
    ads_shape_ids__seed(db, b->names);
    *out = b;
    return 0;
}

uint64_t ads_bulk_committed(const ads_bulk *b)
{
    return b->committed;
}

size_t ads_bulk_pending(const ads_bulk *b)
{
    return b->n;
}

uint64_t ads_bulk_unchanged(const ads_bulk *b)
{
    return b->unchanged;
}

uint64_t ads_bulk_added(const ads_bulk *b)
{
    return b->added;
}

uint64_t ads_bulk_failed(const ads_bulk *b)
{
    return b->failed;
}

void ads_bulk_discard(ads_bulk *b)
{
    ads_buf_clear(&b->rows);
    b->n = 0;
    b->offs[0] = 0;
}

int ads_bulk_drop_failed(ads_bulk *b, ads_error *err)
{
    size_t i = 0;
    while (i < b->n && b->nums[i] != b->failed)
        i++;
    if (b->failed == UINT64_MAX || i == b->n)
        return ads_error_set(err, ADS_EINVAL, "no failed record is queued");
    size_t from = b->offs[i], to = b->offs[i + 1], len = to - from;
    memmove(b->rows.p + from, b->rows.p + to, b->rows.len - to);
    b->rows.len -= len;
    for (size_t j = i; j < b->n; j++) {
        b->offs[j] = b->offs[j + 1] - len;
        if (j + 1 < b->n) {
            b->nums[j] = b->nums[j + 1];
            b->by_ids[j] = b->by_ids[j + 1];
            b->plain[j] = b->plain[j + 1];
            b->sigs[j] = b->sigs[j + 1];
            if (b->ts)
                b->ts[j] = b->ts[j + 1];
        }
    }
    b->n--;
    b->failed = UINT64_MAX;
    return 0;
}

/* The AdType of a queued row (id: AdType's in the store's names). */
static int row_adtype(ads_str *out, ads_msgpack_view *mv, uint64_t id, _Atomic uint32_t *hint,
                      ads_error *err)
{
    ads_value v;
    const ads_expr *e = NULL;
    int rc = ads_msgpack__lookup_id(&v, &e, mv, "AdType", 6, id, hint, err);
    if (rc < 0)
        return rc;
    if (rc == 0)
        return ads_error_set(err, ADS_EINVAL, "a record needs AdType, the name of its type");
    if (e || v.type != ADS_STRING)
        return ads_error_set(err, ADS_EINVAL, "AdType must be a string naming the type");
    *out = v.u.s;
    return 0;
}

typedef struct batch_run {
    ads_bulk *b;
    size_t failed_at; /* index in the batch, or SIZE_MAX */
    uint64_t unchanged; /* records of the batch equal to the row in effect */
    bool in_order;      /* store the batch as it came (see "Order" above) */
    bool sorted;        /* this run stored it in key order */
} batch_run;

/* The type a queued row names, looked up only when it differs from the
 * previous row's; where an earlier row of the same shape held AdType and
 * its key attributes (a lookup tries there first; rows keyed by names share
 * one set of places, rows keyed by ids have one per HINT_SHAPES slot of
 * their names' signature); and the ids of those names in the store's name
 * table, which a row keyed by ids is checked against there (none: NO_ID). */
#define NO_ID UINT64_MAX
#define HINT_SHAPES 8
typedef struct type_memo {
    const ads_type *t;
    char last[256];
    size_t last_len;
    uint64_t adtype_id;
    uint64_t key_ids[ADS_BULK_KEY_HINTS];
    size_t shape; /* the row at hand's set of places */
    _Atomic uint32_t adtype_hint[HINT_SHAPES];
    _Atomic uint32_t key_hints[HINT_SHAPES][ADS_BULK_KEY_HINTS];
} type_memo;

/* The id of name in the store's name table, or NO_ID. */
static uint64_t name_id(ads_txn *txn, const char *name, size_t len)
{
    ads_error err;
    bool found = false;
    uint32_t id = 0;
    if (ads_names__known(txn, name, len, &found, &id, &err) || !found)
        return NO_ID; /* only a hint: the lookup by name still finds it */
    return id;
}

static void memo_init(type_memo *m, ads_txn *txn)
{
    memset(m, 0, sizeof *m);
    m->adtype_id = name_id(txn, "AdType", 6);
    for (size_t i = 0; i < ADS_BULK_KEY_HINTS; i++)
        m->key_ids[i] = NO_ID;
}

/* The places row i of b is looked in. */
static void memo_shape(type_memo *m, const ads_bulk *b, size_t i)
{
    m->shape = b->by_ids[i] ? 1 + b->sigs[i] % (HINT_SHAPES - 1) : 0;
}

static void memo_type(type_memo *m, ads_txn *txn, const ads_type *t, const ads_str *name)
{
    m->t = t;
    m->last_len = name->len < sizeof m->last ? name->len : 0;
    memcpy(m->last, name->p, m->last_len);
    for (size_t i = 0; i < ADS_BULK_KEY_HINTS; i++)
        m->key_ids[i] = i < t->nkeys ? name_id(txn, t->keys[i].p, t->keys[i].len) : NO_ID;
}

static int row_type(const ads_type **out, type_memo *m, ads_txn *txn, ads_msgpack_view *mv,
                    ads_error *err)
{
    ads_str name = {"", 0};
    int rc = row_adtype(&name, mv, m->adtype_id, &m->adtype_hint[m->shape], err);
    if (rc)
        return rc;
    if (!m->t || name.len != m->last_len ||
        (memcmp(name.p, m->last, name.len) != 0 && strncasecmp(name.p, m->last, name.len) != 0)) {
        const ads_type *t;
        if ((rc = ads_types__by_name(&t, txn, name.p, name.len, err)))
            return rc;
        memo_type(m, txn, t, &name);
    }
    *out = m->t;
    return 0;
}

/* The record key of a queued row of type t, appended to key: 1, or 0 when
 * the row's key is not all given as values (it would be generated, or the
 * write refuses it and says why), or ADS_ENOMEM. */
int ads_bulk__row_key(ads_buf *key, const ads_type *t, ads_msgpack_view *mv,
                      _Atomic uint32_t *hints, const uint64_t *ids, ads_error *err)
{
    int rc = 0;
    ads_key__typeid(key, t->id);
    for (size_t i = 0; i < t->nkeys && !rc; i++) {
        ads_value v;
        const ads_expr *e = NULL;
        bool hinted = hints && i < ADS_BULK_KEY_HINTS;
        rc = ads_msgpack__lookup_id(&v, &e, mv, t->keys[i].p, t->keys[i].len,
                                    hinted && ids ? ids[i] : NO_ID, hinted ? &hints[i] : NULL,
                                    err);
        if (rc == 1 && !e)
            rc = ads_key__value(key, &v, NULL, err);
        else if (rc >= 0)
            rc = 1; /* absent or an expression: generated, or refused by the write */
    }
    if (!rc && key->failed)
        rc = ads_error_set(err, ADS_ENOMEM, "out of memory");
    if (rc)
        return rc == ADS_ENOMEM ? rc : 0;
    return key->len > ADS_KEY_MAX_LEN ? 0 : 1;
}

/* A view of queued row i: keyed by names, or by the ids its encoder knew
 * (read through txn->given_nm). */
static int row_view(ads_msgpack_view *mv, const ads_bulk *b, size_t i, ads_txn *txn,
                    ads_arena *a, ads_error *err)
{
    const unsigned char *data = (const unsigned char *)b->rows.p + b->offs[i];
    size_t len = b->offs[i + 1] - b->offs[i];
    if (!b->by_ids[i])
        return ads_msgpack_view_init(mv, data, len, a, err);
    return ads_msgpack__view_open(mv, data, len, &txn->given_nm, a, err);
}

typedef struct sort_ent {
    const unsigned char *key;
    size_t len;
    size_t i; /* the row's place in the batch */
} sort_ent;

static int sort_ent_cmp(const void *x, const void *y)
{
    const sort_ent *a = x, *b = y;
    size_t n = a->len < b->len ? a->len : b->len;
    int c = memcmp(a->key, b->key, n);
    if (c)
        return c;
    if (a->len != b->len)
        return a->len < b->len ? -1 : 1;
    return a->i < b->i ? -1 : a->i > b->i;
}

/*
 * The order to store the batch in: order[k] is the k-th row to store. Key
 * order when every row's key is given and no type has hooks; else as the
 * rows came. *sorted says which. The types of the first *typed rows are
 * left in b->types (valid in this transaction), the record keys of the
 * first *keyed in b->keys (row i's ends at b->key_ends[i]).
 */
static int batch_order(size_t *order, bool *sorted, size_t *typed, size_t *keyed, ads_txn *txn,
                       ads_bulk *b, ads_arena *a, ads_error *err)
{
    for (size_t i = 0; i < b->n; i++)
        order[i] = i;
    *sorted = false;
    *typed = *keyed = 0;
    type_memo m;
    memo_init(&m, txn);
    ads_buf *keys = &b->keys;
    size_t *ends = b->key_ends;
    ads_stage_ref *refs = NULL;
    int rc = 0;
    bool ascending = true;
    ads_buf_clear(keys);
    for (size_t i = 0; i < b->n; i++) {
        const ads_type *t;
        ads_msgpack_view mv;
        ads_arena_reset(a);
        memo_shape(&m, b, i);
        /* a row the write refuses is refused there, in input order */
        if ((rc = row_view(&mv, b, i, txn, a, err)) ||
            (rc = row_type(&t, &m, txn, &mv, err)) || t->has_hooks) {
            rc = rc == ADS_ENOMEM ? rc : 0;
            goto cleanup;
        }
        b->types[i] = t;
        *typed = i + 1;
        size_t from = keys->len;
        if ((rc = ads_bulk__row_key(keys, t, &mv, m.key_hints[m.shape], m.key_ids, err)) <= 0)
            goto cleanup;
        rc = 0;
        ends[i] = keys->len;
        *keyed = i + 1;
        if (i > 0 && ascending) {
            sort_ent prev = {(const unsigned char *)keys->p + (i > 1 ? ends[i - 2] : 0), 0, i - 1};
            sort_ent cur = {(const unsigned char *)keys->p + from, keys->len - from, i};
            prev.len = (size_t)(cur.key - prev.key);
            ascending = sort_ent_cmp(&prev, &cur) < 0;
        }
    }
    if (ascending) /* already in order (a load in key order) */
        goto cleanup;
    if (!(refs = malloc(b->n * sizeof *refs))) {
        rc = ads_error_set(err, ADS_ENOMEM, "out of memory");
        goto cleanup;
    }
    /* sort_ent_cmp's order (key bytes, a key before the longer keys it
     * begins, then the place in the batch), by the sorted load's radix
     * sort, which reads each key once per eight bytes its place depends on */
    for (size_t i = 0; i < b->n; i++) {
        size_t from = i ? ends[i - 1] : 0;
        refs[i] = (ads_stage_ref){(const unsigned char *)keys->p + from, i, i, 0,
                                  (uint32_t)(ends[i] - from), 0, 1};
    }
    ads_stage__sort(refs, b->n);
    for (size_t i = 0; i < b->n; i++)
        order[i] = (size_t)refs[i].seq;
    *sorted = true;
cleanup:
    free(refs);
    return rc;
}

/*
 * The ids this batch's transaction gives the names of the encoder's shapes
 * that have none yet, when the store holds every one of them (b->learnt),
 * handed to the encoder once the batch has committed (engine/shape_ids.c).
 * From then on a record of those names is encoded keyed by ids, and its
 * write neither compares names nor rewrites the row. Only a memo: a look-up
 * that fails (no memory to read the name table) leaves the shapes without
 * ids and the batch as it was.
 */
static void learn_ids(ads_bulk *b, ads_txn *txn)
{
    ads_error err;
    (void)ads_shape_ids__learn(b->learnt, b->names, txn, false, &err);
}

static int batch_fn(ads_txn *txn, void *ctx, ads_error *err)
{
    batch_run *run = ctx;
    ads_bulk *b = run->b;
    ads_arena *a = ads_arena_new();
    int rc = 0;
    MDB_cursor *cur = NULL; /* set before any goto cleanup, which closes it */
    ads_appender ap = {NULL, 0}; /* the batch's appends (closed at cleanup too) */
    run->failed_at = SIZE_MAX;
    run->unchanged = 0; /* the batch may run again after the map grows */
    if (!a)
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    for (unsigned slot = 0; slot < ADS_MSGPACK_ORDER_SHAPES; slot++)
        b->learnt[slot].n = 0;
    ads_bulk_batch info = {b->n ? b->nums[0] : b->added, b->n, 0, 0};
    if (b->opt.backfill && b->n) {
        double lo = b->ts[0], hi = b->ts[0];
        for (size_t i = 1; i < b->n; i++) {
            lo = b->ts[i] < lo ? b->ts[i] : lo;
            hi = b->ts[i] > hi ? b->ts[i] : hi;
        }
        info.ts_lo = lo;
        info.ts_hi = hi;
        ads_idgen_state st;
        double flo = floor(lo), fhi = floor(hi);
        if (!(flo >= 0 && fhi <= (double)ADS_OUID_TIME_MAX)) {
            rc = ads_error_set(err, ADS_ERANGE,
                               "backfill: _Timestamp outside 1970 .. 2^36 s cannot date an id");
            goto cleanup;
        }
        if ((rc = ads_txn_idgen_state(&st, txn, err)) ||
            (rc = ads_backfill_begin(&txn->backfill, &txn->idgen, (uint64_t)flo, (uint64_t)fhi,
                                     err)))
            goto cleanup;
        txn->idgen_dirty = true;
    }
    run->sorted = false;
    size_t typed = 0, keyed = 0;
    if (!run->in_order &&
        (rc = batch_order(b->order, &run->sorted, &typed, &keyed, txn, b, a, err)))
        goto cleanup;
    type_memo m;
    memo_init(&m, txn);
    /* a sorted batch's records are looked up through one cursor (a batch
     * with hooks is never sorted: nothing below begins or ends an LMDB
     * transaction while it is open) */
    if (run->sorted && mdb_cursor_open(txn->txn, txn->db->latest, &cur))
        cur = NULL;
    ads_ixq__reset(b->ixq); /* the batch may run again after the map grows */
    txn->ixq = b->ixq;
    for (size_t k = 0; k < b->n; k++) {
        size_t i = run->sorted ? b->order[k] : k;
        const unsigned char *data = (const unsigned char *)b->rows.p + b->offs[i];
        size_t len = b->offs[i + 1] - b->offs[i];
        const ads_type *t = i < typed ? b->types[i] : NULL;
        bool by_ids = b->by_ids[i];
        ads_msgpack_view mv;
        ads_arena_reset(a);
        memo_shape(&m, b, i);
        if (!t && ((rc = row_view(&mv, b, i, txn, a, err)) ||
                   (rc = row_type(&t, &m, txn, &mv, err)))) {
            run->failed_at = i;
            goto cleanup;
        }
        /* the record key batch_order made, unless a hook replaced the row */
        const unsigned char *key = NULL;
        size_t key_len = 0;
        if (i < keyed) {
            size_t from = i ? b->key_ends[i - 1] : 0;
            key = (const unsigned char *)b->keys.p + from;
            key_len = b->key_ends[i] - from;
        }
        ads_buf named = ADS_BUF_INIT, enc = ADS_BUF_INIT;
        if (t->has_hooks && by_ids) {
            /* hooks read records by their names */
            if ((rc = ads_msgpack__to_names(&named, data, len, &txn->given_nm, err))) {
                ads_buf_free(&named);
                run->failed_at = i;
                goto cleanup;
            }
            data = (const unsigned char *)named.p;
            len = named.len;
            by_ids = false;
        }
        if (t->has_hooks && t->hooks.prestore) {
            const ads_record *rec, *rep = NULL;
            if ((rc = ads_msgpack_decode_record(&rec, a, data, len, 0, err)) ||
                (rc = t->hooks.prestore(t->hooks.ctx, txn, rec, &rep, a, err))) {
                if (rc > 0)
                    rc = ads_error_set(err, ADS_EINVAL, "type %s: the record was refused",
                                       t->name);
                ads_buf_free(&named);
                run->failed_at = i;
                goto cleanup;
            }
            if (rep) {
                if ((rc = ads_msgpack_encode_record(&enc, rep, err))) {
                    ads_buf_free(&named);
                    run->failed_at = i;
                    goto cleanup;
                }
                data = (const unsigned char *)enc.p;
                len = enc.len;
            }
        }
        ads_write_info wi;
        if (data != (const unsigned char *)b->rows.p + b->offs[i])
            key = NULL;
        rc = ads_store__encoded(txn, t, data, len, key, key_len, !b->opt.replace, cur, &ap, by_ids,
                                b->plain[i], by_ids ? b->sigs[i] : 0, &wi, err);
        ads_buf_free(&enc);
        ads_buf_free(&named);
        if (!rc && !wi.changed)
            run->unchanged++;
        if (!rc && b->opt.sync) {
            /* the snapshot's time: its latest record's own _Timestamp (an
             * unchanged record's wi.ts is the earlier row's) */
            rc = ads_sync__note(b->opt.sync, &wi, b->opt.backfill ? b->ts[i] : wi.ts, err);
        }
        if (rc) {
            run->failed_at = i;
            goto cleanup;
        }
    }
    if ((rc = ads_index__flush(txn, err)))
        goto cleanup;
    learn_ids(b, txn);
    txn->ixq = NULL;
    if (b->opt.on_batch && (rc = b->opt.on_batch(b->opt.ctx, txn, &info, err)))
        goto cleanup;
cleanup:
    if (cur)
        mdb_cursor_close(cur);
    if (ap.cur)
        mdb_cursor_close(ap.cur);
    txn->ixq = NULL;
    ads_backfill_end(txn->backfill);
    txn->backfill = NULL;
    ads_arena_free(a);
    return rc;
}

int ads_bulk_flush(ads_bulk *b, ads_error *err)
{
    if (!b)
        return ads_error_set(err, ADS_EINVAL, "NULL argument");
    if (b->n == 0)
        return 0;
    batch_run run = {b, SIZE_MAX, 0, false, false};
    int rc = ads_db_write(b->db, batch_fn, &run, err);
    bool refused = rc == ADS_EINVAL || rc == ADS_ESYNTAX || rc == ADS_ERANGE ||
                   rc == ADS_ELIMIT || rc == ADS_ENOTFOUND || rc == ADS_EEXIST;
    if (refused && run.sorted && run.failed_at != SIZE_MAX) {
        /* a record was refused: again as the input came, to report its
         * first bad record (a failure of memory or storage is not run
         * again: the batch would be stored in another order) */
        run.in_order = true;
        rc = ads_db_write(b->db, batch_fn, &run, err);
    }
    if (rc) {
        if (run.failed_at != SIZE_MAX) {
            b->failed = b->nums[run.failed_at];
            if (err) {
                char msg[ADS_ERROR_MESSAGE_MAX];
                snprintf(msg, sizeof msg, "%s", err->message);
                ads_error_set(err, rc, "record %llu: %s", (unsigned long long)b->failed + 1, msg);
            }
        }
        return rc;
    }
    /* the ids the batch learnt, to the encoder and for the loads after
     * this one (a snapshot a minute is a load of one batch) */
    ads_shape_ids__hand_over(b->db, b->names, b->learnt);
    b->committed += b->n;
    b->unchanged += run.unchanged;
    b->flushed += b->rows.len;
    ads_bulk_discard(b);
    if (b->flushed >= ADS_BULK_DROP_MIN_BYTES &&
        ads_db__resident_file_bytes() > ADS_BULK_RESIDENT_BYTES) {
        /* keep the resident set of a large load bounded without faulting
         * every page back in after every batch when they fit; a small load
         * (a snapshot of a pool a minute) leaves the pages it read, which
         * the next one reads again, to the kernel */
        pthread_rwlock_rdlock(&b->db->resize);
        ads_db__drop_map_pages(b->db);
        pthread_rwlock_unlock(&b->db->resize);
    }
    return 0;
}

/* b->field grown to n items (the caller's error on failure, field as it was). */
#define GROW(field, n)                                                                            \
    do {                                                                                          \
        void *grown_ = realloc(b->field, (n) * sizeof *b->field);                                 \
        if (!grown_)                                                                              \
            return ads_error_set(err, ADS_ENOMEM, "out of memory");                              \
        b->field = grown_;                                                                        \
    } while (0)

/* Room for one more queued row: each per-row array grown to cap rows
 * (offs to cap + 1), cap moved only once all have. */
static int queue_room(ads_bulk *b, ads_error *err)
{
    if (b->n < b->cap)
        return 0;
    size_t cap = b->cap ? 2 * b->cap : 1024;
    GROW(offs, cap + 1);
    GROW(nums, cap);
    GROW(order, cap);
    GROW(types, cap);
    GROW(key_ends, cap);
    GROW(by_ids, cap);
    GROW(plain, cap);
    GROW(sigs, cap);
    if (b->opt.backfill)
        GROW(ts, cap);
    b->cap = cap;
    return 0;
}

#undef GROW

/* A backfill's _Timestamp of record number (v: its value, NULL if absent). */
static int backfill_ts(double *ts, ads_bulk *b, const ads_value *v, ads_error *err)
{
    int32_t offset;
    if (v && !ads_store__timestamp(v, ts, &offset))
        return 0;
    b->failed = b->added;
    return ads_error_set(err, ADS_EINVAL,
                         "record %llu: a backfill needs _Timestamp on every record: an "
                         "AbsTime, seconds since 1970 or ISO 8601 text",
                         (unsigned long long)b->added + 1);
}

/* The row just appended to b->rows queued, with its _Timestamp ts; keyed
 * by ids (by_ids) from plain attributes (plain: no undefined value, no
 * name beginning with '_'), whose names have the signature sig. */
static int queued(ads_bulk *b, double ts, bool by_ids, bool plain, uint64_t sig,
                  ads_error *err)
{
    if (b->opt.backfill)
        b->ts[b->n] = ts;
    b->by_ids[b->n] = by_ids;
    b->plain[b->n] = plain; /* the encoder says plain only of a row keyed by ids */
    b->sigs[b->n] = sig;
    b->nums[b->n] = b->added;
    b->added++;
    b->offs[++b->n] = b->rows.len;
    if (b->n >= b->opt.batch)
        return ads_bulk_flush(b, err);
    return 0;
}

int ads_bulk_add(ads_bulk *b, const ads_record *rec, ads_error *err)
{
    if (!b || !rec)
        return ads_error_set(err, ADS_EINVAL, "NULL argument");
    b->failed = UINT64_MAX;
    double ts = 0;
    int rc;
    if (b->opt.backfill) {
        const ads_expr *x = ads_record_lookup(rec, ads_attr__timestamp, 10);
        if ((rc = backfill_ts(&ts, b, x ? ads_expr_literal_value(x) : NULL, err)))
            return rc;
    }
    if ((rc = queue_room(b, err)))
        return rc;
    bool by_ids, plain;
    uint64_t sig;
    if ((rc = ads_msgpack__encode_row_ids(&b->rows, rec, b->names, &by_ids, &sig, &plain, err))) {
        b->failed = b->added;
        return rc;
    }
    return queued(b, ts, by_ids, plain, sig, err);
}

int ads_bulk_add_values(ads_bulk *b, const ads_str *names, const ads_value *values, size_t n,
                        ads_error *err)
{
    if (!b || (n && (!names || !values)))
        return ads_error_set(err, ADS_EINVAL, "NULL argument");
    b->failed = UINT64_MAX;
    double ts = 0;
    int rc;
    if (b->opt.backfill) {
        const ads_value *at = NULL;
        for (size_t i = 0; i < n && !at; i++)
            if (names[i].len == 10 && strncasecmp(names[i].p, ads_attr__timestamp, 10) == 0)
                at = &values[i];
        if ((rc = backfill_ts(&ts, b, at, err)))
            return rc;
    }
    if ((rc = queue_room(b, err)))
        return rc;
    bool by_ids, plain;
    uint64_t sig;
    if ((rc = ads_msgpack__encode_values_ids(&b->rows, names, values, n, b->names, &by_ids, &sig,
                                             &plain, err))) {
        b->failed = b->added;
        return rc;
    }
    return queued(b, ts, by_ids, plain, sig, err);
}

/* A row already encoded, keyed by names, or by the ids of names (read
 * through names) with the names' signature sig. */
static int add_encoded(ads_bulk *b, const void *row, size_t len, const ads_msgpack_names *names,
                       uint64_t sig, ads_error *err)
{
    b->failed = UINT64_MAX;
    double ts = 0;
    int rc;
    if (b->opt.backfill) {
        ads_arena *a = ads_arena_new();
        ads_msgpack_view mv;
        ads_value v;
        const ads_expr *x = NULL;
        if (!a)
            return ads_error_set(err, ADS_ENOMEM, "out of memory");
        rc = ads_msgpack__view_open(&mv, row, len, names, a, err);
        if (!rc)
            rc = ads_msgpack_view_lookup(&v, &x, &mv, ads_attr__timestamp, 10, err);
        if (rc >= 0)
            rc = backfill_ts(&ts, b, rc == 1 && !x ? &v : NULL, err);
        else
            b->failed = b->added;
        ads_arena_free(a);
        if (rc)
            return rc;
    }
    if ((rc = queue_room(b, err)))
        return rc;
    size_t before = b->rows.len;
    ads_buf_add(&b->rows, row, len);
    if (b->rows.failed) {
        b->rows.len = before;
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    }
    return queued(b, ts, names != NULL, false, sig, err);
}

int ads_bulk_add_row(ads_bulk *b, const void *row, size_t len, ads_error *err)
{
    if (!b || !row)
        return ads_error_set(err, ADS_EINVAL, "NULL argument");
    if (ads_msgpack__row_has_ids(row, len)) {
        b->failed = b->added;
        return ads_error_set(err, ADS_EINVAL,
                             "the row is keyed by a store's attribute ids, as a sorted load's "
                             "stage gives rows: add it with ads_bulk_add_staged");
    }
    return add_encoded(b, row, len, NULL, 0, err);
}

int ads_bulk_add_staged(ads_bulk *b, const ads_stage *s, ads_error *err)
{
    if (!b || !s)
        return ads_error_set(err, ADS_EINVAL, "NULL argument");
    const void *row;
    size_t len;
    bool by_ids;
    uint64_t sig;
    ads_db *db;
    if (ads_stage__current(s, &row, &len, &by_ids, &sig, &db))
        return ads_error_set(err, ADS_EINVAL, "the stage has given no row (ads_stage_next)");
    if (by_ids && db != b->db)
        return ads_error_set(err, ADS_EINVAL,
                             "a stage's rows keyed by attribute ids go to the store handle "
                             "the stage was made for");
    ads_names_reader rd;
    ads_names__reader(&rd, db);
    return add_encoded(b, row, len, by_ids ? &rd.nm : NULL, sig, err);
}

int ads_bulk_end(ads_bulk *b, ads_error *err)
{
    if (!b)
        return 0;
    int rc = ads_bulk_flush(b, err);
    if (!rc)
        rc = ads_db_sync(b->db, err);
    ads_buf_free(&b->rows);
    free(b->offs);
    free(b->ts);
    free(b->nums);
    free(b->order);
    free(b->types);
    free(b->key_ends);
    free(b->by_ids);
    free(b->sigs);
    free(b->plain);
    ads_buf_free(&b->keys);
    ads_msgpack_order_free(b->names);
    ads_ixq__free(b->ixq);
    free(b);
    return rc;
}
