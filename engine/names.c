/*
 * engine/names.c: the store's attribute-name table. A stored row names its
 * attributes by small ids (classad/msgpack.h, rows with attribute ids); the
 * table `names` maps be32(id) -> the name's bytes, as first stored (exact
 * bytes: `Memory` and `memory` are two names with two ids, so a record reads
 * back spelled as it was stored). Ids are handed out from 0 in the order
 * names first appear; once committed, an id is never reused and never
 * changes: the table only grows (docs/storage.md, "Attribute names"). The
 * ids of a write that is dropped or aborted are handed out again.
 *
 * In memory, per store handle (ads_names): the names by id in blocks that
 * never move, and the count of ids that every thread may read without a
 * lock (published). Readers resolve an id below the count with one load; an
 * id above it belongs to a transaction that committed since (this handle's,
 * or another handle's or process's): it is read from the table inside the
 * reader's own transaction, under the lock, so what a reader sees is always
 * consistent with the rows it reads.
 *
 * Writers: LMDB lets one write transaction (the root) run at a time; group
 * commit (group.c) runs several writers' works in transactions nested in one
 * root, one after another. The first name look-up of a writer brings the
 * memory up to the table as its root sees it, then a name it does not find
 * gets the next id: the table row goes into its transaction, the name into
 * the next slot (under the lock), unpublished, the slots past the published
 * count marked as its root's (owner). A writer whose own changes are dropped
 * (its work failed, in a group or alone) clears the slots it filled, which
 * are the last ones, as the group's writers run in turn; the root's commit
 * publishes every filled slot, its abort clears them; so ids and names of
 * dropped work are handed out again (nothing stored refers to them). A root
 * that fails after LMDB let go of its lock may find another root owning the
 * slots: that one cleared them and read the table afresh first. Name to id
 * goes through a hash of the exact bytes that only writers use.
 *
 * Shapes: a load's rows come in a few shapes (the same names, each row's own
 * values), so the writers keep the name lists of a few recent rows with
 * their ids (SHAPES of them). A row of one of those shapes is written with
 * ids without looking a name up: only its names are compared with the
 * memo's, byte for byte. Published ids never change, so an entry whose ids
 * were all published when it was kept stays right for the life of the
 * handle. An entry with ids of the writing transaction's own (the first
 * batch of a load names everything anew) is right only while no slot has
 * been forgotten since it was kept, since forgetting hands those ids out
 * again: every forget moves a generation count on, the entry keeps the
 * count it was made under, and only a writer that has synced (so has done
 * any forget pending from an earlier writer) may use it.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "base/bytes.h"
#include "engine/engine_int.h"

#define BLOCK 256u /* ids per block */
#define NBLOCKS (ADS_NAMES_MAX / BLOCK)
#define SHAPES 8       /* row shapes remembered */
#define SHAPE_MAX ADS_NAMES_SHAPE_MAX /* attributes (fixstr names: <= 31 bytes each) */

/* The names of a row (in row order) and their ids. */
typedef struct shape {
    uint32_t n; /* 0: an empty entry */
    bool published; /* every id was published when it was kept: right from then on */
    uint64_t gen;   /* else: right while the names' generation is this */
    uint64_t tag; /* the writer's own fact about these names (store.c: their signature) */
    unsigned char len[SHAPE_MAX]; /* name i's length (a fixstr: its key is 1 + len bytes) */
    uint16_t at[SHAPE_MAX];       /* where key i starts in keys */
    uint64_t head[SHAPE_MAX];     /* key i's first 8 bytes (as far as it goes) ... */
    uint64_t mask[SHAPE_MAX];     /* ... and which of them are its own */
    uint64_t ids[SHAPE_MAX];
    unsigned char keys[SHAPE_MAX * 32]; /* the keys, header and name, back to back */
} shape;

struct ads_names {
    pthread_mutex_t lock;   /* the slots, the arena, filled, n's increases */
    ads_str *blocks[NBLOCKS];
    _Atomic uint32_t n;     /* published: ids below resolve without the lock */
    uint32_t filled;        /* slots [n, filled): the write transaction's new names */
    ads_arena *arena;       /* the names' bytes */
    /* name -> id, for write transactions only */
    uint32_t *map;          /* id + 1, or 0 for an empty slot */
    size_t cap, mapped;     /* slots; ids [0, mapped) are in it */
    uint32_t *last;         /* the ids of the last row's names by position (a memo: rows
                               of one load share their names) */
    size_t nlast;
    bool stale;             /* under the lock: an abort dropped names the map holds */
    shape *shapes;          /* SHAPES recent row shapes (writers only), or NULL */
    _Atomic uint64_t gen;   /* moved on by every forget (changed under the lock) */
    unsigned next_shape;    /* the entry the next shape kept replaces */
    uint64_t owner;         /* the write transaction (ads_txn.names_root) that filled
                               the slots past n, if any (under the lock) */
};

int ads_names__new(ads_names **out)
{
    ads_names *nm = calloc(1, sizeof *nm);
    if (!nm || !(nm->arena = ads_arena_new())) {
        free(nm);
        return ADS_ENOMEM;
    }
    pthread_mutex_init(&nm->lock, NULL);
    *out = nm;
    return 0;
}

void ads_names__free(ads_names *nm)
{
    if (!nm)
        return;
    for (size_t b = 0; b < NBLOCKS && nm->blocks[b]; b++)
        free(nm->blocks[b]);
    free(nm->map);
    free(nm->last);
    free(nm->shapes);
    ads_arena_free(nm->arena);
    pthread_mutex_destroy(&nm->lock);
    free(nm);
}

static inline ads_str *slot(ads_names *nm, uint32_t id)
{
    return &nm->blocks[id / BLOCK][id % BLOCK];
}

/* Put name into slot id (under the lock): 0 or ADS_ENOMEM. */
static int fill(ads_names *nm, uint32_t id, const void *name, size_t len)
{
    ads_str **b = &nm->blocks[id / BLOCK];
    if (!*b && !(*b = calloc(BLOCK, sizeof **b)))
        return ADS_ENOMEM;
    char *p = ads_arena_strndup(nm->arena, name, len);
    if (!p)
        return ADS_ENOMEM;
    (*b)[id % BLOCK].p = p;
    (*b)[id % BLOCK].len = len;
    return 0;
}

static int lmdb_err(ads_error *err, int rc, const char *what)
{
    return ads_error_set(err, ADS_ESTORAGE, "%s: %s", what, mdb_strerror(rc));
}

/* Read the table from id nm->filled on in txn (under the lock, with no new
 * names of a write transaction pending) into the slots and publish them. */
static int load(ads_names *nm, MDB_txn *txn, MDB_dbi dbi, ads_error *err)
{
    MDB_cursor *c;
    int rc = mdb_cursor_open(txn, dbi, &c);
    if (rc)
        return lmdb_err(err, rc, "reading attribute names");
    unsigned char kb[4];
    uint32_t next = nm->filled;
    for (int i = 0; i < 4; i++)
        kb[i] = (unsigned char)(next >> (24 - 8 * i));
    MDB_val k = {4, kb}, v;
    int mrc;
    for (mrc = mdb_cursor_get(c, &k, &v, MDB_SET_RANGE); mrc == 0;
         mrc = mdb_cursor_get(c, &k, &v, MDB_NEXT)) {
        const unsigned char *p = k.mv_data;
        uint32_t id = k.mv_size == 4 ? (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
                                           (uint32_t)p[2] << 8 | p[3]
                                     : UINT32_MAX;
        if (id != next || id >= ADS_NAMES_MAX || v.mv_size == 0 ||
            v.mv_size > ADS_MAX_NAME_LEN) {
            rc = ads_error_set(err, ADS_ECORRUPT,
                               "the store's attribute-name table is corrupt at id %u "
                               "(adstore verify says more)",
                               (unsigned)next);
            break;
        }
        if (fill(nm, id, v.mv_data, v.mv_size)) {
            rc = ads_error_set(err, ADS_ENOMEM, "out of memory");
            break;
        }
        next++;
    }
    mdb_cursor_close(c);
    if (!rc && mrc != MDB_NOTFOUND)
        rc = lmdb_err(err, mrc, "reading attribute names");
    if (next != nm->filled) { /* what was read is committed: publish it */
        nm->filled = next;
        atomic_store_explicit(&nm->n, next, memory_order_release);
    }
    return rc;
}

/* ---- reading: the resolver every transaction hands to row views ---- */

static int unknown(ads_error *err, uint64_t id)
{
    return ads_error_set(err, ADS_ECORRUPT,
                         "attribute id %llu is not in the store's attribute-name table",
                         (unsigned long long)id);
}

/* The name of id as the table in txn holds it, copied into txn's arena
 * (under the lock: the slots past the published ids belong to a write
 * transaction that txn is not part of). */
static int read_one(ads_txn *txn, MDB_dbi dbi, uint64_t id, ads_str *out, ads_error *err)
{
    unsigned char kb[4];
    for (int i = 0; i < 4; i++)
        kb[i] = (unsigned char)(id >> (24 - 8 * i));
    MDB_val k = {4, kb}, v;
    int rc = mdb_get(txn->txn, dbi, &k, &v);
    if (rc == MDB_NOTFOUND || (!rc && (v.mv_size == 0 || v.mv_size > ADS_MAX_NAME_LEN)))
        return unknown(err, id);
    if (rc)
        return lmdb_err(err, rc, "reading attribute names");
    char *p = ads_arena_strndup(txn->arena, v.mv_data, v.mv_size);
    if (!p)
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    out->p = p;
    out->len = v.mv_size;
    return 0;
}

/*
 * A handle opened read-only on a store of format 1 or 2 found no table; a
 * process writing the store may have made one since. LMDB lets only one
 * transaction at a time open table handles, and a handle opened in a
 * transaction is not seen by transactions begun before it: so the table is
 * opened and read in a read transaction of this file's own (under the
 * lock), which commits to keep the handle. Its snapshot is newer than the
 * reader's, and names every id the reader's rows use the same way: an id,
 * once committed, never changes. (No writer uses such a handle.)
 */
static int load_own(ads_db *db, ads_names *nm, ads_error *err)
{
    MDB_txn *t;
    int rc = mdb_txn_begin(db->env, NULL, MDB_RDONLY, &t);
    if (rc)
        return lmdb_err(err, rc, "reading attribute names");
    MDB_dbi dbi = db->names_dbi;
    if (!dbi && (rc = mdb_dbi_open(t, "names", 0, &dbi))) {
        mdb_txn_abort(t);
        return rc == MDB_NOTFOUND ? 0 : lmdb_err(err, rc, "reading attribute names");
    }
    rc = load(nm, t, dbi, err);
    int mrc = mdb_txn_commit(t);
    if (!mrc)
        db->names_dbi = dbi;
    else if (!rc)
        rc = lmdb_err(err, mrc, "reading attribute names");
    return rc;
}

/* An id not published: a new name of the write transaction txn belongs
 * to, or one that another transaction committed since the last look at
 * the table. */
static int resolve_slow(ads_txn *txn, uint64_t id, ads_str *out, ads_error *err)
{
    ads_db *db = txn->db;
    ads_names *nm = db->names;
    int rc = 0;
    if (id >= ADS_NAMES_MAX)
        return unknown(err, id);
    pthread_mutex_lock(&nm->lock);
    uint32_t n = atomic_load_explicit(&nm->n, memory_order_relaxed);
    MDB_dbi dbi = db->names_dbi;
    if (id < n) {
        *out = *slot(nm, (uint32_t)id); /* published since */
    } else if (nm->filled > n) {
        /* slots of a write transaction: its own names, or none of ours */
        if (txn->names_root && txn->names_root == nm->owner && id < nm->filled)
            *out = *slot(nm, (uint32_t)id);
        else if (txn->txn && dbi && !db->names_late)
            rc = read_one(txn, dbi, id, out, err);
        else
            rc = unknown(err, id);
    } else {
        if (db->names_late)
            rc = load_own(db, nm, err);
        else if (txn->txn)
            rc = load(nm, txn->txn, dbi, err);
        if (!rc && id < nm->filled)
            *out = *slot(nm, (uint32_t)id);
        else if (!rc)
            rc = unknown(err, id);
    }
    pthread_mutex_unlock(&nm->lock);
    return rc;
}

int ads_names__resolve(const ads_msgpack_names *self, uint64_t id, ads_str *out, ads_error *err)
{
    ads_txn *txn = (ads_txn *)((const char *)self - offsetof(ads_txn, nm));
    ads_names *nm = txn->db->names;
    if (id < atomic_load_explicit(&nm->n, memory_order_acquire)) {
        *out = nm->blocks[id / BLOCK][id % BLOCK];
        return 0;
    }
    return resolve_slow(txn, id, out, err);
}

/* A timeline attribute's given id (ADS_NAMES_GIVEN_TIMELINE + which): 1
 * with its name, or 0. */
static int given_timeline(uint64_t id, ads_str *out)
{
    if (id <= ADS_NAMES_GIVEN_TIMELINE || id > ADS_NAMES_GIVEN_TIMELINE + 4)
        return 0;
    static const char *const tl[] = {ads_attr__timestamp, ads_attr__systime, ads_attr__latest,
                                     ads_attr__deleted};
    const char *name = tl[id - ADS_NAMES_GIVEN_TIMELINE - 1];
    out->p = name;
    out->len = strlen(name);
    return 1;
}

int ads_names__resolve_given(const ads_msgpack_names *self, uint64_t id, ads_str *out,
                             ads_error *err)
{
    ads_txn *txn = (ads_txn *)((const char *)self - offsetof(ads_txn, given_nm));
    if (given_timeline(id, out))
        return 0;
    return ads_names__resolve(&txn->nm, id, out, err);
}

static int reader_name(const ads_msgpack_names *self, uint64_t id, ads_str *out, ads_error *err)
{
    const ads_names_reader *r = (const ads_names_reader *)self;
    ads_names *nm = r->db->names;
    if (given_timeline(id, out))
        return 0;
    if (nm && id < atomic_load_explicit(&nm->n, memory_order_acquire)) {
        *out = nm->blocks[id / BLOCK][id % BLOCK];
        return 0;
    }
    return unknown(err, id);
}

void ads_names__reader(ads_names_reader *r, ads_db *db)
{
    r->nm.name = reader_name;
    r->db = db;
}

/* ---- writing ---- */

static uint64_t hash(const char *p, size_t len)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)p[i]) * 0x100000001b3ull;
    return h ^ h >> 29;
}

static void map_put(ads_names *nm, uint32_t id)
{
    ads_str s = *slot(nm, id);
    size_t j = hash(s.p, s.len) & (nm->cap - 1);
    while (nm->map[j])
        j = (j + 1) & (nm->cap - 1);
    nm->map[j] = id + 1;
}

/* Bring the map up to ids [0, upto) (the caller holds the write lock). */
static int map_fill(ads_names *nm, uint32_t upto)
{
    if ((upto + 1) * 2 > nm->cap) {
        size_t cap = nm->cap ? nm->cap : 256;
        while ((upto + 1) * 2 > cap)
            cap *= 2;
        uint32_t *m = calloc(cap, sizeof *m);
        if (!m)
            return ADS_ENOMEM;
        free(nm->map);
        nm->map = m;
        nm->cap = cap;
        nm->mapped = 0;
    }
    for (; nm->mapped < upto; nm->mapped++)
        map_put(nm, (uint32_t)nm->mapped);
    return 0;
}

/* Forget the names in slots [from, filled) (under the lock). */
static void forget(ads_names *nm, uint32_t from)
{
    for (uint32_t id = from; id < nm->filled; id++) {
        slot(nm, id)->p = NULL;
        slot(nm, id)->len = 0;
    }
    nm->filled = from;
    nm->stale = true;
    atomic_fetch_add_explicit(&nm->gen, 1, memory_order_relaxed);
}

/* The first name look-up of a write transaction: the memory up to the
 * table as this LMDB write transaction sees it (another handle or process
 * may have added names since; an earlier member of its group may have). */
static int sync_writer(ads_txn *txn, ads_error *err)
{
    ads_names *nm = txn->db->names;
    int rc = 0;
    pthread_mutex_lock(&nm->lock);
    uint32_t n0 = atomic_load_explicit(&nm->n, memory_order_relaxed);
    if (nm->filled > n0 && nm->owner != txn->names_root) {
        /* names of another write transaction that ended without saying
         * how: the table tells (committed ones are read again below) */
        forget(nm, n0);
    }
    nm->owner = txn->names_root;
    if (nm->filled == n0)
        rc = load(nm, txn->txn, txn->db->names_dbi, err);
    uint32_t n = nm->filled;
    txn->names_base = n;
    if (nm->stale) {
        /* forget the dropped names: the map is built again from the rest */
        if (nm->map)
            memset(nm->map, 0, nm->cap * sizeof *nm->map);
        nm->mapped = 0;
        nm->stale = false;
    }
    pthread_mutex_unlock(&nm->lock);
    if (!rc && map_fill(nm, n))
        rc = ads_error_set(err, ADS_ENOMEM, "out of memory");
    if (!rc)
        txn->names_synced = true;
    return rc;
}

/* A new id for name: 0, 1 when the table is full, or an error. */
static int add(ads_txn *txn, const char *name, size_t len, uint32_t *id, ads_error *err)
{
    ads_db *db = txn->db;
    ads_names *nm = db->names;
    uint32_t next = nm->filled; /* only write transactions move it past n */
    if (next >= ADS_NAMES_MAX)
        return 1;
    unsigned char kb[4];
    for (int i = 0; i < 4; i++)
        kb[i] = (unsigned char)(next >> (24 - 8 * i));
    int rc;
    if (next == 0 && (rc = ads_db__format_names(txn, err)))
        return rc;
    if ((rc = ads_db__put(txn, db->names_dbi, kb, 4, name, len, MDB_APPEND, err)))
        return rc;
    pthread_mutex_lock(&nm->lock);
    rc = fill(nm, next, name, len);
    if (!rc)
        nm->filled = next + 1;
    pthread_mutex_unlock(&nm->lock);
    if (rc || map_fill(nm, next + 1))
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    *id = next;
    return 0;
}

static int find(ads_txn *txn, const char *name, size_t len, uint32_t *id, ads_error *err);

static int id_of(void *ctx, size_t i, const char *name, size_t len, uint64_t *id,
                 ads_error *err)
{
    ads_txn *txn = ctx;
    ads_names *nm = txn->db->names;
    int rc;
    if (!txn->names_synced && (rc = sync_writer(txn, err)))
        return rc;
    /* the name the last row had in this place? (ids below filled are this
     * transaction's to read: published, or its own) */
    uint32_t m;
    if (i < nm->nlast && (m = nm->last[i]) < nm->filled) {
        ads_str s = *slot(nm, m);
        if (s.len == len && memcmp(s.p, name, len) == 0) {
            *id = m;
            return 0;
        }
    }
    if ((rc = find(txn, name, len, &m, err)))
        return rc;
    if (i >= nm->nlast) {
        size_t want = i < 64 ? 64 : 2 * i;
        uint32_t *more = realloc(nm->last, want * sizeof *more);
        if (!more) {
            *id = m;
            return 0; /* the memo is only a memo */
        }
        for (size_t j = nm->nlast; j < want; j++)
            more[j] = UINT32_MAX;
        nm->last = more;
        nm->nlast = want;
    }
    nm->last[i] = m;
    *id = m;
    return 0;
}

/* The id of name, a new one if it has none: 0, 1 (the table is full), or
 * an error. */
static int find(ads_txn *txn, const char *name, size_t len, uint32_t *id, ads_error *err)
{
    ads_names *nm = txn->db->names;
    if (nm->cap) {
        size_t j = hash(name, len) & (nm->cap - 1);
        for (uint32_t e; (e = nm->map[j]) != 0; j = (j + 1) & (nm->cap - 1)) {
            ads_str s = *slot(nm, e - 1);
            if (s.len == len && memcmp(s.p, name, len) == 0) {
                *id = e - 1;
                return 0;
            }
        }
    }
    return add(txn, name, len, id, err);
}

static bool known(const ads_names *nm, const char *name, size_t len, uint32_t *id);

int ads_names__known(ads_txn *txn, const char *name, size_t len, bool *found, uint32_t *id,
                     ads_error *err)
{
    *found = false;
    int rc;
    if (!txn->db->names_dbi)
        return 0;
    if (!txn->names_synced && (rc = sync_writer(txn, err)))
        return rc;
    *found = known(txn->db->names, name, len, id);
    return 0;
}

int ads_names__sync(ads_txn *txn, ads_error *err)
{
    if (!txn->db->names_dbi || txn->names_synced)
        return 0;
    return sync_writer(txn, err);
}

int ads_names__id(ads_txn *txn, size_t i, const char *name, size_t len, uint64_t *id,
                  ads_error *err)
{
    if (!txn->db->names_dbi)
        return 1;
    return id_of(txn, i, name, len, id, err);
}

/* A name held to the store's limit: 0, or ADS_ELIMIT naming it. */
static int within_limit(const char *name, size_t len, ads_error *err)
{
    if (len <= ADS_MAX_NAME_LEN)
        return 0;
    return ads_error_set(err, ADS_ELIMIT,
                         "attribute name %.40s... has %zu bytes, over the limit of %d", name, len,
                         ADS_MAX_NAME_LEN);
}

/* id_of for a row that did not come through the store's write path (a
 * dump's): its names are held to the store's limit here. */
static int id_of_limited(void *ctx, size_t i, const char *name, size_t len, uint64_t *id,
                         ads_error *err)
{
    int rc = within_limit(name, len, err);
    return rc ? rc : id_of(ctx, i, name, len, id, err);
}

/* Every attribute name of row (with names) within ADS_MAX_NAME_LEN. */
static int names_within_limit(const void *row, size_t len, ads_error *err)
{
    ads_msgpack_view mv;
    int rc = ads_msgpack__view_open(&mv, row, len, NULL, NULL, err);
    for (size_t i = 0; i < mv.n && !rc; i++) {
        ads_str name;
        size_t kat, vat, end;
        if ((rc = ads_msgpack__view_entry(&mv, i, &name, &kat, &vat, &end, err)) == 0)
            rc = within_limit(name.p, name.len, err);
    }
    return rc;
}

static int encode(ads_txn *txn, ads_buf *out, const void *row, size_t len, bool limited,
                  ads_error *err)
{
    if (!txn->db->names_dbi) {
        ads_buf_add(out, row, len);
        return out->failed ? ads_error_set(err, ADS_ENOMEM, "out of memory") : 0;
    }
    int rc = ads_msgpack__to_ids(out, row, len, limited ? id_of_limited : id_of, txn, err);
    /* the table full: the row stays with its names, the ones after the
     * name that got no id not looked at yet */
    if (rc == 1 && limited)
        return names_within_limit(row, len, err);
    return rc == 1 ? 0 : rc;
}

int ads_names__encode(ads_txn *txn, ads_buf *out, const void *row, size_t len, ads_error *err)
{
    return encode(txn, out, row, len, false, err);
}

int ads_names__encode_limited(ads_txn *txn, ads_buf *out, const void *row, size_t len,
                              ads_error *err)
{
    return encode(txn, out, row, len, true, err);
}

/* ---- shapes ---- */

/* Does the row of mv (with names) have s's names, each a fixstr followed by
 * a value of a byte or more? Then vat[i], vend[i]: where value i lies, as
 * ads_msgpack__entries says. A key is compared 8 bytes at a time, under a
 * mask (a call to memcmp costs more than a short name). */
static bool shape_matches(const shape *s, const ads_msgpack_view *mv, size_t *vat, size_t *vend)
{
    size_t n = mv->n, off = ads_msgpack__index_off(mv, 0), blen = mv->body_len;
    const unsigned char *b = mv->body;
    for (size_t i = 0; i < n; i++) {
        size_t end = i + 1 < n ? ads_msgpack__index_off(mv, i + 1) : blen;
        size_t klen = 1 + (size_t)s->len[i];
        if (end > blen || off >= end || end - off <= klen)
            return false;
        if (blen - off >= 8) {
            uint64_t x;
            memcpy(&x, b + off, 8);
            if ((x & s->mask[i]) != s->head[i] ||
                (klen > 8 && !ads_bytes_same(b + off + 8, s->keys + s->at[i] + 8, klen - 8)))
                return false;
        } else if (memcmp(b + off, s->keys + s->at[i], klen) != 0) {
            return false;
        }
        vat[i] = off + klen;
        vend[i] = end;
        off = end;
    }
    return true;
}

/* Whether shape s may be used by txn now. */
static bool shape_usable(const ads_names *nm, const shape *s, const ads_txn *txn)
{
    return s->published ||
           (txn->names_synced && s->gen == atomic_load_explicit(&nm->gen, memory_order_relaxed));
}

int ads_names__shape(ads_txn *txn, const ads_msgpack_view *mv, size_t *vat, size_t *vend,
                     const uint64_t **ids, uint64_t *tag)
{
    const ads_names *nm = txn->db->names;
    const shape *shapes = nm->shapes;
    if (!shapes || mv->names || !txn->db->names_dbi || mv->n == 0 || mv->n > SHAPE_MAX)
        return 0;
    for (unsigned k = 0; k < SHAPES; k++)
        if (shapes[k].n == mv->n && shape_usable(nm, &shapes[k], txn) &&
            shape_matches(&shapes[k], mv, vat, vend)) {
            *ids = shapes[k].ids;
            *tag = shapes[k].tag;
            return 1;
        }
    return 0;
}

/* The id name has in the map, if any (a writer's, after its first look-up). */
static bool known(const ads_names *nm, const char *name, size_t len, uint32_t *id)
{
    if (!nm->cap)
        return false;
    size_t j = hash(name, len) & (nm->cap - 1);
    for (uint32_t e; (e = nm->map[j]) != 0; j = (j + 1) & (nm->cap - 1)) {
        ads_str s = nm->blocks[(e - 1) / BLOCK][(e - 1) % BLOCK];
        if (s.len == len && memcmp(s.p, name, len) == 0) {
            *id = e - 1;
            return true;
        }
    }
    return false;
}

void ads_names__keep_shape(ads_txn *txn, const ads_msgpack_view *mv, uint64_t tag)
{
    ads_names *nm = txn->db->names;
    size_t n = mv->n;
    if (mv->names || !txn->db->names_dbi || !txn->names_synced || n == 0 || n > SHAPE_MAX)
        return;
    if (!nm->shapes && !(nm->shapes = calloc(SHAPES, sizeof *nm->shapes)))
        return; /* the memo is only a memo */
    shape *s = &nm->shapes[nm->next_shape];
    uint32_t published = atomic_load_explicit(&nm->n, memory_order_acquire);
    size_t at = 0;
    bool all_published = true;
    s->n = 0;
    for (size_t i = 0; i < n; i++) {
        size_t off = ads_msgpack__index_off(mv, i);
        unsigned t = off < mv->body_len ? mv->body[off] : 0;
        if ((t & 0xe0) != 0xa0 || mv->body_len - off - 1 < (t & 31))
            return;
        const char *name = (const char *)mv->body + off + 1;
        int which = ads_row__timeline_attr(name, t & 31);
        uint32_t id = 0;
        /* a timeline attribute has no id (rows never hold one); a name
         * this transaction gave an id is known too (the map holds every
         * filled slot of a synced writer) */
        if (!which && !known(nm, name, t & 31, &id))
            return;
        all_published = all_published && (which || id < published);
        size_t klen = 1 + (t & 31);
        unsigned char h[8] = {0}, m[8] = {0};
        memcpy(h, mv->body + off, klen < 8 ? klen : 8);
        memset(m, 0xff, klen < 8 ? klen : 8);
        s->len[i] = (unsigned char)(t & 31);
        s->at[i] = (uint16_t)at;
        memcpy(&s->head[i], h, 8);
        memcpy(&s->mask[i], m, 8);
        s->ids[i] = which ? ADS_NAMES_TIMELINE + (uint64_t)which : id;
        memcpy(s->keys + at, mv->body + off, klen);
        at += klen;
    }
    s->n = (uint32_t)n;
    s->tag = tag;
    s->published = all_published;
    s->gen = atomic_load_explicit(&nm->gen, memory_order_relaxed);
    nm->next_shape = (nm->next_shape + 1) % SHAPES;
}

/* Called while the transaction's LMDB write transaction (a child of
 * txn->parent) is still open, so no other writer has begun. The group's
 * earlier members added their names before names_base. */
void ads_names__drop(ads_txn *txn)
{
    ads_names *nm = txn->db->names;
    if (!nm || !txn->names_synced)
        return;
    txn->names_synced = false;
    pthread_mutex_lock(&nm->lock);
    if (nm->owner == txn->names_root && nm->filled > txn->names_base)
        forget(nm, txn->names_base);
    pthread_mutex_unlock(&nm->lock);
}

/* After LMDB's commit or abort of the root: another write transaction may
 * have begun since (LMDB let go of its lock) and taken the slots over
 * (sync_writer): then it has read what was committed, and nothing is left
 * to do here. */
void ads_names__root_end(ads_db *db, uint64_t root, bool committed)
{
    ads_names *nm = db->names;
    if (!nm)
        return;
    pthread_mutex_lock(&nm->lock);
    if (nm->owner == root) {
        if (committed)
            atomic_store_explicit(&nm->n, nm->filled, memory_order_release);
        else if (nm->filled > atomic_load_explicit(&nm->n, memory_order_relaxed))
            forget(nm, atomic_load_explicit(&nm->n, memory_order_relaxed));
        nm->owner = 0;
    }
    pthread_mutex_unlock(&nm->lock);
}

uint32_t ads_names__count(ads_txn *txn)
{
    return atomic_load_explicit(&txn->db->names->n, memory_order_acquire);
}
