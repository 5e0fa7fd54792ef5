/*
 * engine/sync.c: a snapshot sync (engine.h's ads_sync). A bulk load notes
 * the key of every record it stores; ads_sync_delete then deletes the
 * records of the types noted that the snapshot lacked.
 *
 * The keys are kept back to back in one buffer, in the order noted, with
 * where each ends. A batch stores its records in key order (bulk.c), so a
 * snapshot that fits one batch notes its keys in order already; one that
 * spans batches is sorted once, when the deletions are made (a permutation
 * of the keys, which stay where they are). Those walk
 * each type's latest rows in key order beside the sorted keys, as a merge
 * walks two sorted lists: no hashing, and both read front to back. A key
 * noted twice (a batch run again after the map grew) is harmless.
 *
 * The order is LMDB's for `latest` (engine/key.c): the key's bytes, a key
 * before the longer keys it begins. A record key too long to be stored
 * whole is stored under its hash, so its row is not where its key would
 * sort; such a row's key (held whole in the row) is looked up by a binary
 * search of the sorted keys instead.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine_int.h"
#include "engine/stage_sort.h"

/* Keys back to back, with where each ends. */
typedef struct key_list {
    ads_buf keys;
    size_t *ends; /* ends[i]: where key i ends in keys */
    size_t n, cap; /* keys; room in ends */
} key_list;

#define KEY_LIST_INIT {ADS_BUF_INIT, NULL, 0, 0}

static void list_free(key_list *l)
{
    ads_buf_free(&l->keys);
    free(l->ends);
}

/* Key i of l. */
static const unsigned char *list_at(const key_list *l, size_t i, size_t *len)
{
    size_t from = i ? l->ends[i - 1] : 0;
    *len = l->ends[i] - from;
    return (const unsigned char *)l->keys.p + from;
}

/* Append key: 0, or ADS_ENOMEM with l as it was. */
static int list_add(key_list *l, const void *key, size_t len, ads_error *err)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 1024;
        size_t *e = realloc(l->ends, cap * sizeof *e);
        if (!e)
            return ads_error_set(err, ADS_ENOMEM, "out of memory");
        l->ends = e;
        l->cap = cap;
    }
    size_t off = l->keys.len;
    ads_buf_add(&l->keys, key, len);
    if (l->keys.failed) {
        l->keys.failed = false;
        l->keys.len = off;
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    }
    l->ends[l->n++] = l->keys.len;
    return 0;
}

/* Take the last key back off l. */
static void list_pop(key_list *l)
{
    l->n--;
    l->keys.len = l->n ? l->ends[l->n - 1] : 0;
}

struct ads_sync {
    key_list noted; /* the keys noted, in the order noted */
    bool ordered;   /* keys[0..n) are in key order (equal neighbours allowed) */
    size_t *order;  /* else, once sorted: order[k] is the k-th key in key order */
    uint32_t *types;
    size_t ntypes, types_cap;
    double latest;  /* the latest _Timestamp noted, NAN before the first */
};

int ads_sync_new(ads_sync **out, ads_error *err)
{
    if (!out)
        return ads_error_set(err, ADS_EINVAL, "NULL argument");
    ads_sync *s = calloc(1, sizeof *s);
    if (!s)
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    s->noted = (key_list)KEY_LIST_INIT;
    s->ordered = true;
    s->latest = NAN;
    *out = s;
    return 0;
}

void ads_sync_free(ads_sync *s)
{
    if (!s)
        return;
    list_free(&s->noted);
    free(s->order);
    free(s->types);
    free(s);
}

double ads_sync_latest(const ads_sync *s)
{
    return s->latest;
}

/* LMDB's order of two keys: their bytes, then the shorter first. */
static int key_cmp(const unsigned char *a, size_t al, const unsigned char *b, size_t bl)
{
    int c = memcmp(a, b, al < bl ? al : bl);
    return c ? c : (al > bl) - (al < bl);
}

static int note_type(ads_sync *s, uint32_t id, ads_error *err)
{
    for (size_t i = 0; i < s->ntypes; i++)
        if (s->types[i] == id)
            return 0;
    if (s->ntypes == s->types_cap) {
        size_t cap = s->types_cap ? 2 * s->types_cap : 8;
        uint32_t *t = realloc(s->types, cap * sizeof *t);
        if (!t)
            return ads_error_set(err, ADS_ENOMEM, "out of memory");
        s->types = t;
        s->types_cap = cap;
    }
    s->types[s->ntypes++] = id;
    return 0;
}

int ads_sync__note(ads_sync *s, const ads_write_info *wi, double when, ads_error *err)
{
    if (!(s->latest >= when))
        s->latest = when;
    if (!wi->key || wi->key_len < 4)
        return 0;
    key_list *l = &s->noted;
    int rc = list_add(l, wi->key, wi->key_len, err);
    if (rc)
        return rc;
    if ((rc = note_type(s, ads_key__get_typeid(wi->key), err))) {
        list_pop(l); /* as if this key had not come */
        return rc;
    }
    if (s->ordered && l->n > 1) {
        size_t plen;
        const unsigned char *prev = list_at(l, l->n - 2, &plen);
        s->ordered = key_cmp(prev, plen, wi->key, wi->key_len) <= 0;
    }
    free(s->order); /* an order made before this key no longer holds */
    s->order = NULL;
    return 0;
}

/* The keys noted in key order: as noted, or through order, made here by
 * the sorted load's radix sort (its references, 48 bytes a key, only while
 * it sorts; the keys themselves are not moved). */
static int sort_keys(ads_sync *s, ads_error *err)
{
    if (s->ordered || s->order)
        return 0;
    size_t n = s->noted.n;
    ads_stage_ref *refs = malloc(n * sizeof *refs);
    size_t *order = malloc(n * sizeof *order);
    if (!refs || !order) {
        free(refs);
        free(order);
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < n; i++) {
        size_t len;
        const unsigned char *k = list_at(&s->noted, i, &len);
        refs[i] = (ads_stage_ref){k, i, i, 0, (uint32_t)len, 0, 1};
    }
    ads_stage__sort(refs, n);
    for (size_t i = 0; i < n; i++)
        order[i] = (size_t)refs[i].seq;
    free(refs);
    s->order = order;
    return 0;
}

/* The k-th key in key order. */
static const unsigned char *sorted_at(const ads_sync *s, size_t k, size_t *len)
{
    return list_at(&s->noted, s->order ? s->order[k] : k, len);
}

/* Whether key i of the sorted keys comes before key. */
static bool before(const ads_sync *s, size_t i, const unsigned char *key, size_t len)
{
    size_t klen;
    const unsigned char *k = sorted_at(s, i, &klen);
    return key_cmp(k, klen, key, len) < 0;
}

/* The first of the sorted keys not before key. */
static size_t lower_bound(const ads_sync *s, const unsigned char *key, size_t len)
{
    size_t lo = 0, hi = s->noted.n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (before(s, mid, key, len))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static bool noted_at(const ads_sync *s, size_t i, const unsigned char *key, size_t len)
{
    size_t klen;
    const unsigned char *k = i < s->noted.n ? sorted_at(s, i, &klen) : NULL;
    return k && key_cmp(k, klen, key, len) == 0;
}

/* Delete one record the snapshot lacks: dated now (as DELETE), or at ts
 * (a copy of its latest row with _Deleted and _Timestamp set). */
static int delete_row(ads_txn *txn, ads_row *row, double ts, bool *done, ads_error *err)
{
    ads_write_info wi;
    int rc;
    *done = false;
    if (isnan(ts)) {
        if ((rc = ads_txn_delete(txn, row, &wi, err)))
            return rc;
        *done = wi.changed;
        return 0;
    }
    /* a row at or after the snapshot's time was stored by something else
     * than the snapshot: a deletion there would replace or precede it */
    if (row->ts >= ts)
        return 0;
    ads_arena *a = ads_arena_new();
    ads_record_builder *rb = NULL;
    const ads_record *rec = NULL;
    if (!a)
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    ads_value t = ads_abstime(ts, 0), d = ads_bool(true);
    if ((rc = ads_row_record(&rec, row, 0, a, err)) ||
        (rc = ads_record_builder_new(&rb, a, err)))
        goto cleanup;
    for (size_t i = 0; i < ads_record_size(rec); i++) {
        ads_str name = ads_record_name(rec, i);
        if ((rc = ads_record_builder_add(rb, name.p, name.len, ads_record_expr(rec, i), err)))
            goto cleanup;
    }
    if ((rc = ads_record_builder_add_value(rb, ads_attr__timestamp, 10, &t, err)) ||
        (rc = ads_record_builder_add_value(rb, ads_attr__deleted, 8, &d, err)))
        goto cleanup;
    if ((rc = ads_txn_put_row(txn, row, ads_record_builder_finish(rb), &wi, err)))
        goto cleanup;
    *done = wi.changed;
cleanup:
    ads_arena_free(a);
    return rc;
}

/* The stored keys of the latest rows of type t whose records the snapshot
 * lacks and are not deleted already, into out. A row is read (its checksum
 * checked) only for a long key (its stored key is a hash; the whole key is
 * in the row) and for a record the snapshot lacks, to leave out one deleted
 * already (most of those: a record that vanished stays deleted in `latest`
 * until retention forgets it, and every snapshot lacks it again). */
static int missing(const ads_sync *s, ads_txn *txn, const ads_type *t, key_list *out,
                   ads_error *err)
{
    ads_buf pb = ADS_BUF_INIT;
    ads_key__typeid(&pb, t->id);
    if (pb.failed)
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    const unsigned char *prefix = (const unsigned char *)pb.p;
    MDB_cursor *c;
    int rc = mdb_cursor_open(txn->txn, txn->db->latest, &c);
    if (rc) {
        ads_buf_free(&pb);
        return ads_db__lmdb(txn, err, rc, "reading latest rows");
    }
    size_t j = lower_bound(s, prefix, pb.len); /* the walk's place in the keys noted */
    MDB_val k = {pb.len, pb.p}, v;
    for (rc = mdb_cursor_get(c, &k, &v, MDB_SET_RANGE); rc == 0;
         rc = mdb_cursor_get(c, &k, &v, MDB_NEXT)) {
        if (k.mv_size < pb.len || memcmp(k.mv_data, prefix, pb.len) != 0)
            break;
        row_env env;
        bool noted;
        if (v.mv_size > 5 && (((const unsigned char *)v.mv_data)[5] & ROW_LONGKEY)) {
            if ((rc = ads_row__parse(&env, k.mv_data, k.mv_size, v.mv_data, v.mv_size, t->name,
                                     err)))
                break;
            const unsigned char *full = env.full_key ? env.full_key : k.mv_data;
            size_t flen = env.full_key ? env.full_key_len : k.mv_size;
            noted = noted_at(s, lower_bound(s, full, flen), full, flen);
        } else {
            while (j < s->noted.n && before(s, j, k.mv_data, k.mv_size))
                j++;
            if ((noted = noted_at(s, j, k.mv_data, k.mv_size)))
                continue;
            if ((rc = ads_row__parse(&env, k.mv_data, k.mv_size, v.mv_data, v.mv_size, t->name,
                                     err)))
                break;
        }
        if (noted || (env.flags & ROW_DELETED))
            continue; /* in the snapshot, or deleted already and stays so */
        if ((rc = list_add(out, k.mv_data, k.mv_size, err)))
            break;
    }
    mdb_cursor_close(c);
    ads_buf_free(&pb);
    if (rc == MDB_NOTFOUND)
        rc = 0;
    else if (rc > 0)
        rc = ads_db__lmdb(txn, err, rc, "reading latest rows");
    return rc;
}

/* Delete the records of type t the snapshot lacks (those not deleted yet). */
static int delete_type(ads_sync *s, ads_txn *txn, const ads_type *t, double ts,
                       uint64_t *deleted, ads_error *err)
{
    key_list l = KEY_LIST_INIT;
    ads_arena *a = ads_arena_new();
    int rc = a ? missing(s, txn, t, &l, err) : ads_error_set(err, ADS_ENOMEM, "out of memory");
    for (size_t i = 0; i < l.n && !rc; i++) {
        MDB_val k, v;
        k.mv_data = (void *)list_at(&l, i, &k.mv_size);
        row_env env;
        ads_row row;
        if ((rc = mdb_get(txn->txn, txn->db->latest, &k, &v))) {
            rc = ads_db__lmdb(txn, err, rc, "reading a latest row");
            break;
        }
        if ((rc = ads_row__parse(&env, k.mv_data, k.mv_size, v.mv_data, v.mv_size, t->name,
                                 err)))
            break;
        if (env.flags & ROW_DELETED)
            continue;
        ads_arena_reset(a);
        ads_row__fill(&row, txn, t, k.mv_data, k.mv_size, &env, true, a);
        bool done;
        if (!(rc = delete_row(txn, &row, ts, &done, err)) && done)
            (*deleted)++;
    }
    ads_arena_free(a);
    list_free(&l);
    return rc;
}

int ads_sync_delete(ads_sync *s, ads_txn *txn, const ads_type *also, double ts,
                    uint64_t *deleted, ads_error *err)
{
    uint64_t n = 0;
    if (!s || !txn)
        return ads_error_set(err, ADS_EINVAL, "NULL argument");
    int rc = sort_keys(s, err);
    bool also_noted = false;
    for (size_t i = 0; i < s->ntypes && !rc; i++) {
        const ads_type *t;
        /* a sync of types themselves would undeclare the ones not listed */
        if (s->types[i] <= ADS_TYPEID_SEQUENCE)
            continue;
        if ((rc = ads_types__by_id(&t, txn, s->types[i], err)))
            break;
        if (also && t == also)
            also_noted = true;
        rc = delete_type(s, txn, t, ts, &n, err);
    }
    if (!rc && also && !also_noted && also->id > ADS_TYPEID_SEQUENCE)
        rc = delete_type(s, txn, also, ts, &n, err);
    if (deleted)
        *deleted = n;
    return rc;
}
