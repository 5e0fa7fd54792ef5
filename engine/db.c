/*
 * engine/db.c: opening and creating stores, transactions, and the identifier
 * state kept in the `meta` table.
 *
 * meta holds small fixed records, all little-endian:
 *   "format"     u32  on-disk format version
 *   "node"       u64  47-bit node id
 *   "idgen"      the OUID clock-sequence state (ads_idgen_state_encode)
 *   "luid"       u64  the last value of the built-in increment counter
 *   "fluid/<g>"  FLUID generator g: epoch u64, last_ts u64, seq u32, used u8
 *   "kid"        k-ordered generator: last_tick u64, seq u32, used u8
 * Generator state is read and written inside the caller's write transaction,
 * which LMDB serialises across threads and processes: that is what makes ids
 * unique across writers, crashes and fork().
 */
#include <errno.h>
#include <lmdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "engine/engine.h"

struct ads_db {
    MDB_env *env;
    MDB_dbi meta;
    uint64_t node;
    int flags;
    ads_clock clock;
};

struct ads_txn {
    ads_db *db;
    MDB_txn *txn;
    bool readonly;
};

/* Virtual size reserved for the map; the file grows only as data is written. */
#define MAP_SIZE ((size_t)1 << 30)

static int lmdb_error(ads_error *err, int rc, const char *what)
{
    if (rc == MDB_VERSION_MISMATCH || rc == MDB_INVALID)
        return ads_error_set(err, ADS_ECORRUPT, "%s: %s", what, mdb_strerror(rc));
    return ads_error_set(err, ADS_ESTORAGE, "%s: %s", what, mdb_strerror(rc));
}

static void put_le(uint8_t *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_le(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

/* Read meta key into buf of exactly len bytes. 1 if absent, 0 if read. */
static int meta_get(MDB_txn *txn, MDB_dbi dbi, const char *key, void *buf, size_t len,
                    ads_error *err)
{
    MDB_val k = {strlen(key), (void *)key}, v;
    int rc = mdb_get(txn, dbi, &k, &v);
    if (rc == MDB_NOTFOUND)
        return 1;
    if (rc)
        return lmdb_error(err, rc, "reading store metadata");
    if (v.mv_size != len)
        return ads_error_set(err, ADS_ECORRUPT,
                             "store metadata '%s' has %zu bytes, expected %zu", key,
                             v.mv_size, len);
    memcpy(buf, v.mv_data, len);
    return 0;
}

static int meta_put(MDB_txn *txn, MDB_dbi dbi, const char *key, const void *buf, size_t len,
                    ads_error *err)
{
    MDB_val k = {strlen(key), (void *)key}, v = {len, (void *)buf};
    int rc = mdb_put(txn, dbi, &k, &v, 0);
    return rc ? lmdb_error(err, rc, "writing store metadata") : 0;
}

/* Write the records of a new store: format, node, fresh generator state. */
static int init_meta(MDB_txn *txn, MDB_dbi dbi, ads_error *err)
{
    uint8_t buf[ADS_IDGEN_STATE_BYTES];
    uint64_t node;
    ads_idgen_state st;
    int rc;

    if ((rc = ads_node_new(&node, err)))
        return rc;
    put_le(buf, ADS_DB_FORMAT_VERSION, 4);
    if ((rc = meta_put(txn, dbi, "format", buf, 4, err)))
        return rc;
    put_le(buf, node, 8);
    if ((rc = meta_put(txn, dbi, "node", buf, 8, err)))
        return rc;
    ads_idgen_state_init(&st, node);
    ads_idgen_state_encode(buf, &st);
    return meta_put(txn, dbi, "idgen", buf, sizeof buf, err);
}

/* Check the format version and read the node id, creating them if allowed. */
static int load_meta(ads_db *db, const char *dir, ads_error *err)
{
    bool writable = !(db->flags & ADS_DB_READONLY);
    MDB_txn *txn;
    uint8_t buf[8];
    int rc = mdb_txn_begin(db->env, NULL, writable ? 0 : MDB_RDONLY, &txn);
    if (rc)
        return lmdb_error(err, rc, "opening store");

    rc = mdb_dbi_open(txn, "meta", writable ? MDB_CREATE : 0, &db->meta);
    if (rc == MDB_NOTFOUND) {
        rc = ads_error_set(err, ADS_ENOTFOUND, "%s holds no adstore store", dir);
        goto cleanup;
    }
    if (rc) {
        rc = lmdb_error(err, rc, "opening store metadata");
        goto cleanup;
    }
    rc = meta_get(txn, db->meta, "format", buf, 4, err);
    if (rc == 1) {
        if (!writable || !(db->flags & ADS_DB_CREATE)) {
            rc = ads_error_set(err, ADS_ENOTFOUND, "%s holds no adstore store", dir);
            goto cleanup;
        }
        if ((rc = init_meta(txn, db->meta, err)))
            goto cleanup;
        rc = meta_get(txn, db->meta, "format", buf, 4, err);
    }
    if (rc)
        goto cleanup;
    if (get_le(buf, 4) != ADS_DB_FORMAT_VERSION) {
        rc = ads_error_set(err, ADS_EVERSION,
                           "%s is a store of format version %llu; this build reads version "
                           "%d",
                           dir, (unsigned long long)get_le(buf, 4), ADS_DB_FORMAT_VERSION);
        goto cleanup;
    }
    rc = meta_get(txn, db->meta, "node", buf, 8, err);
    if (rc == 1)
        rc = ads_error_set(err, ADS_ECORRUPT, "%s: store metadata has no node id", dir);
    if (rc)
        goto cleanup;
    db->node = get_le(buf, 8);
    if (writable) {
        rc = mdb_txn_commit(txn);
        txn = NULL;
        if (rc)
            rc = lmdb_error(err, rc, "creating store");
    }
cleanup:
    if (txn)
        mdb_txn_abort(txn);
    return rc;
}

int ads_db_open(ads_db **out, const char *dir, int flags, ads_error *err)
{
    struct stat sb;
    char path[4096];
    int rc;

    if (!out || !dir || !*dir)
        return ads_error_set(err, ADS_EINVAL, "store directory not given");
    if ((flags & ADS_DB_READONLY) && (flags & ADS_DB_CREATE))
        return ads_error_set(err, ADS_EINVAL, "a store cannot be created read-only");
    if (snprintf(path, sizeof path, "%s/data.mdb", dir) >= (int)sizeof path)
        return ads_error_set(err, ADS_EINVAL, "store directory name too long");

    if (flags & ADS_DB_CREATE) {
        if (mkdir(dir, 0700) != 0 && errno != EEXIST)
            return ads_error_set(err, ADS_EIO, "cannot create store directory %s: %s", dir,
                                 strerror(errno));
    }
    if (stat(dir, &sb) != 0)
        return ads_error_set(err, ADS_ENOTFOUND, "no store at %s: %s", dir, strerror(errno));
    if (!S_ISDIR(sb.st_mode))
        return ads_error_set(err, ADS_EINVAL, "%s is not a directory", dir);
    if (!(flags & ADS_DB_CREATE) && stat(path, &sb) != 0)
        return ads_error_set(err, ADS_ENOTFOUND, "no store at %s (it has no data.mdb)", dir);

    ads_db *db = calloc(1, sizeof *db);
    if (!db)
        return ads_error_set(err, ADS_ENOMEM, "opening store: out of memory");
    db->flags = flags;
    db->clock = *ads_clock_system();

    if ((rc = mdb_env_create(&db->env))) {
        rc = lmdb_error(err, rc, "creating LMDB environment");
        db->env = NULL;
        goto fail;
    }
    if ((rc = mdb_env_set_maxdbs(db->env, 32)) ||
        (rc = mdb_env_set_mapsize(db->env, MAP_SIZE))) {
        rc = lmdb_error(err, rc, "configuring LMDB environment");
        goto fail;
    }
    rc = mdb_env_open(db->env, dir,
                      MDB_NOTLS | ((flags & ADS_DB_READONLY) ? MDB_RDONLY : 0), 0600);
    if (rc) {
        if (rc == EACCES)
            rc = ads_error_set(err, ADS_EIO, "cannot open store %s: permission denied", dir);
        else
            rc = lmdb_error(err, rc, "opening store");
        goto fail;
    }
    int dead = 0;
    if ((rc = mdb_reader_check(db->env, &dead))) {
        rc = lmdb_error(err, rc, "clearing stale readers");
        goto fail;
    }
    if ((rc = load_meta(db, dir, err)))
        goto fail;
    *out = db;
    return 0;
fail:
    if (db->env)
        mdb_env_close(db->env);
    free(db);
    return rc;
}

void ads_db_close(ads_db *db)
{
    if (!db)
        return;
    mdb_env_close(db->env);
    free(db);
}

uint64_t ads_db_node(const ads_db *db)
{
    return db->node;
}

uint32_t ads_db_kid_node(const ads_db *db)
{
    /* splitmix64's finaliser, folded: every node bit moves the fingerprint. */
    uint64_t z = db->node + UINT64_C(0x9e3779b97f4a7c15);
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    z ^= z >> 31;
    return (uint32_t)(z ^ (z >> 32));
}

void ads_db_set_clock(ads_db *db, const ads_clock *clock)
{
    db->clock = clock ? *clock : *ads_clock_system();
}

int ads_txn_begin(ads_txn **out, ads_db *db, int flags, ads_error *err)
{
    bool readonly = (flags & ADS_TXN_READONLY) != 0;
    if (!readonly && (db->flags & ADS_DB_READONLY))
        return ads_error_set(err, ADS_EREADONLY, "the store is open read-only");
    ads_txn *t = malloc(sizeof *t);
    if (!t)
        return ads_error_set(err, ADS_ENOMEM, "beginning transaction: out of memory");
    int rc = mdb_txn_begin(db->env, NULL, readonly ? MDB_RDONLY : 0, &t->txn);
    if (rc) {
        free(t);
        return lmdb_error(err, rc, "beginning transaction");
    }
    t->db = db;
    t->readonly = readonly;
    *out = t;
    return 0;
}

int ads_txn_commit(ads_txn *txn, ads_error *err)
{
    int rc = mdb_txn_commit(txn->txn);
    free(txn);
    return rc ? lmdb_error(err, rc, "committing transaction") : 0;
}

void ads_txn_abort(ads_txn *txn)
{
    if (!txn)
        return;
    mdb_txn_abort(txn->txn);
    free(txn);
}

static int need_write(ads_txn *txn, ads_error *err)
{
    if (txn->readonly)
        return ads_error_set(err, ADS_EREADONLY,
                             "making identifiers needs a write transaction");
    return 0;
}

int ads_txn_idgen_state(ads_txn *txn, ads_idgen_state *out, ads_error *err)
{
    uint8_t buf[ADS_IDGEN_STATE_BYTES];
    int rc = meta_get(txn->txn, txn->db->meta, "idgen", buf, sizeof buf, err);
    if (rc == 1)
        return ads_error_set(err, ADS_ECORRUPT, "store metadata has no identifier state");
    if (rc)
        return rc;
    return ads_idgen_state_decode(out, buf, sizeof buf, err);
}

static int new_ordered(ads_txn *txn, ads_id *out, size_t n, int *event, ads_error *err)
{
    ads_idgen_state st;
    uint8_t buf[ADS_IDGEN_STATE_BYTES];
    int rc = ads_txn_idgen_state(txn, &st, err);
    if (rc)
        return rc;
    for (size_t i = 0; i < n; i++) {
        rc = ads_ouid_next(&out[i], &st, &txn->db->clock, err);
        if (rc < 0)
            return rc;
        if (rc == ADS_IDGEN_CLOCK_STEPPED_BACK && event)
            *event = rc;
    }
    ads_idgen_state_encode(buf, &st);
    return meta_put(txn->txn, txn->db->meta, "idgen", buf, sizeof buf, err);
}

static int new_increment(ads_txn *txn, ads_id *out, size_t n, ads_error *err)
{
    uint8_t buf[8];
    uint64_t v = 0;
    int rc = meta_get(txn->txn, txn->db->meta, "luid", buf, 8, err);
    if (rc < 0)
        return rc;
    if (rc == 0)
        v = get_le(buf, 8);
    if (n > UINT64_MAX - v)
        return ads_error_set(err, ADS_ERANGE, "the increment counter is used up");
    for (size_t i = 0; i < n; i++)
        out[i] = ads_luid(++v);
    put_le(buf, v, 8);
    return meta_put(txn->txn, txn->db->meta, "luid", buf, 8, err);
}

int ads_txn_new_ids(ads_txn *txn, ads_id_kind kind, ads_id *out, size_t n, int *event,
                    ads_error *err)
{
    int rc;
    if (event)
        *event = 0;
    if (kind == ADS_ID_RANDOM)
        return ads_uuid_new_n(out, n, err);
    if ((rc = need_write(txn, err)))
        return rc;
    switch (kind) {
    case ADS_ID_ORDERED:
        return new_ordered(txn, out, n, event, err);
    case ADS_ID_INCREMENT:
        return new_increment(txn, out, n, err);
    default:
        return ads_error_set(err, ADS_EINVAL, "unknown identifier kind %d", (int)kind);
    }
}

#define FLUID_STATE_BYTES 21

int ads_txn_new_fluids(ads_txn *txn, uint32_t generator, uint64_t *out, size_t n,
                       ads_error *err)
{
    ads_fluid_state st;
    uint8_t buf[FLUID_STATE_BYTES];
    char key[32];
    int rc;

    if ((rc = need_write(txn, err)) || (rc = ads_fluid_state_init(&st, generator, ADS_FLUID_EPOCH_ADSTORE_MS, err)))
        return rc;
    snprintf(key, sizeof key, "fluid/%u", (unsigned)generator);
    rc = meta_get(txn->txn, txn->db->meta, key, buf, sizeof buf, err);
    if (rc < 0)
        return rc;
    if (rc == 0) {
        st.epoch_ms = get_le(buf, 8);
        st.last_ts = get_le(buf + 8, 8);
        st.seq = (uint32_t)get_le(buf + 16, 4);
        st.used = buf[20] != 0;
        if (st.seq > ADS_FLUID_SEQ_MAX || st.last_ts > ADS_FLUID_TS_MAX || buf[20] > 1)
            return ads_error_set(err, ADS_ECORRUPT,
                                 "store metadata '%s' holds impossible values", key);
    }
    for (size_t i = 0; i < n; i++)
        if ((rc = ads_fluid_next(&out[i], &st, &txn->db->clock, err)))
            return rc;
    put_le(buf, st.epoch_ms, 8);
    put_le(buf + 8, st.last_ts, 8);
    put_le(buf + 16, st.seq, 4);
    buf[20] = st.used ? 1 : 0;
    return meta_put(txn->txn, txn->db->meta, key, buf, sizeof buf, err);
}

#define KID_STATE_BYTES 13

int ads_txn_new_kids(ads_txn *txn, ads_kid_fields *out, size_t n, ads_error *err)
{
    ads_kid_state st = {0, 0, false};
    uint8_t buf[KID_STATE_BYTES];
    int rc;

    if ((rc = need_write(txn, err)))
        return rc;
    rc = meta_get(txn->txn, txn->db->meta, "kid", buf, sizeof buf, err);
    if (rc < 0)
        return rc;
    if (rc == 0) {
        st.last_tick = get_le(buf, 8);
        st.seq = (uint32_t)get_le(buf + 8, 4);
        st.used = buf[12] != 0;
        if (st.seq > ADS_KID_SEQ_MAX || buf[12] > 1)
            return ads_error_set(err, ADS_ECORRUPT,
                                 "store metadata 'kid' holds impossible values");
    }
    uint32_t node = ads_db_kid_node(txn->db);
    for (size_t i = 0; i < n; i++)
        if ((rc = ads_kid_next(&out[i], &st, node, &txn->db->clock, err)))
            return rc;
    put_le(buf, st.last_tick, 8);
    put_le(buf + 8, st.seq, 4);
    buf[12] = st.used ? 1 : 0;
    return meta_put(txn->txn, txn->db->meta, "kid", buf, sizeof buf, err);
}
