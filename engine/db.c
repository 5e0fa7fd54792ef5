/*
 * engine/db.c: opening and creating stores, transactions, map growth, and
 * the meta table's helpers.
 *
 * Map growth: LMDB can only change the map size while the process has no
 * transaction open. Every transaction holds the store's `resize` lock
 * shared; growing takes it exclusively. A write that fills the map marks its
 * transaction broken with ADS_EMAPFULL; ads_db_write then aborts, doubles
 * the map and runs the work again. A write transaction also grows the map
 * before it starts when less than a quarter is free, so explicit
 * transactions rarely meet a full map. When another process has grown the
 * map, LMDB says MDB_MAP_RESIZED at begin, and the new size is adopted.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "base/limits.h"
#include "engine/engine_int.h"

/* Default virtual size reserved for the map; the file grows only as data is
 * written. */
#define MAP_SIZE_DEFAULT ((size_t)1 << 30)
/* How long a grower waits for this process's other transactions to end. */
#define RESIZE_WAIT_S 10

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

static int lmdb_plain(ads_error *err, int rc, const char *what)
{
    if (rc == MDB_VERSION_MISMATCH || rc == MDB_INVALID || rc == MDB_CORRUPTED ||
        rc == MDB_PAGE_NOTFOUND)
        return ads_error_set(err, ADS_ECORRUPT, "%s: %s", what, mdb_strerror(rc));
    if (rc == MDB_MAP_FULL)
        return ads_error_set(err, ADS_EMAPFULL, "%s: the store's map is full", what);
    if (rc == EIO || rc == ENOSPC)
        return ads_error_set(err, ADS_EIO, "%s: %s", what, strerror(rc));
    return ads_error_set(err, ADS_ESTORAGE, "%s: %s", what, mdb_strerror(rc));
}

int ads_db__cursor_before(MDB_cursor *c, MDB_val *k, MDB_val *v)
{
    int rc = mdb_cursor_get(c, k, v, MDB_SET_RANGE);
    if (rc == 0)
        return mdb_cursor_get(c, k, v, MDB_PREV);
    if (rc == MDB_NOTFOUND)
        return mdb_cursor_get(c, k, v, MDB_LAST);
    return rc;
}

int ads_db__key_before(ads_txn *txn, MDB_dbi dbi, MDB_val *k, MDB_val *v)
{
    MDB_cursor *c;
    int rc = mdb_cursor_open(txn->txn, dbi, &c);
    if (rc)
        return rc;
    rc = ads_db__cursor_before(c, k, v);
    mdb_cursor_close(c);
    return rc;
}

int ads_db__lmdb(ads_txn *txn, ads_error *err, int rc, const char *what)
{
    int code = lmdb_plain(err, rc, what);
    if (txn && (rc == MDB_MAP_FULL || rc == MDB_TXN_FULL || rc == MDB_BAD_TXN || rc == EIO ||
                rc == ENOSPC || rc == MDB_PANIC)) {
        txn->broken = true;
        if (!txn->broken_rc)
            txn->broken_rc = code;
    }
    return code;
}

int ads_db__need_write(ads_txn *txn, const char *what, ads_error *err)
{
    if (txn->readonly)
        return ads_error_set(err, ADS_EREADONLY, "%s needs a write transaction", what);
    if (txn->broken)
        return ads_error_set(err, txn->broken_rc, "the transaction failed earlier: abort it");
    return 0;
}

int ads_db__failed_write(ads_txn *txn, uint64_t w0, int rc)
{
    if (rc && txn->writes != w0 && !txn->broken) {
        txn->broken = true;
        txn->broken_rc = rc;
    }
    return rc;
}

int ads_db__put(ads_txn *txn, MDB_dbi dbi, const void *k, size_t klen, const void *v,
                size_t vlen, unsigned flags, ads_error *err)
{
    MDB_val key = {klen, (void *)k}, val = {vlen, (void *)v};
    txn->writes++;
    int rc = mdb_put(txn->txn, dbi, &key, &val, flags);
    return rc ? ads_db__lmdb(txn, err, rc, "writing") : 0;
}

int ads_db__cursor_put(ads_txn *txn, MDB_cursor *c, const void *k, size_t klen, const void *v,
                       size_t vlen, unsigned flags, ads_error *err)
{
    MDB_val key = {klen, (void *)k}, val = {vlen, (void *)v};
    txn->writes++;
    int rc = mdb_cursor_put(c, &key, &val, flags);
    return rc ? ads_db__lmdb(txn, err, rc, "writing") : 0;
}

int ads_db__del(ads_txn *txn, MDB_dbi dbi, const void *k, size_t klen, ads_error *err)
{
    MDB_val key = {klen, (void *)k};
    txn->writes++;
    int rc = mdb_del(txn->txn, dbi, &key, NULL);
    if (rc == MDB_NOTFOUND)
        return 0;
    return rc ? ads_db__lmdb(txn, err, rc, "deleting") : 0;
}

int ads_db__meta_get(ads_txn *txn, const char *key, size_t klen, MDB_val *v, ads_error *err)
{
    MDB_val k = {klen, (void *)key};
    int rc = mdb_get(txn->txn, txn->db->meta, &k, v);
    if (rc == MDB_NOTFOUND)
        return 0;
    if (rc)
        return ads_db__lmdb(txn, err, rc, "reading store metadata");
    return 1;
}

int ads_db__meta_put(ads_txn *txn, const char *key, size_t klen, const void *v, size_t vlen,
                     ads_error *err)
{
    return ads_db__put(txn, txn->db->meta, key, klen, v, vlen, 0, err);
}

/* The transaction's clock reading: taken at its first row, shared by all its
 * rows (__SystemTimestamp still moves on by at least a microsecond a row). */
static int64_t txn_now_ns(ads_txn *txn)
{
    if (!txn->now_read) {
        const ads_clock *c = &txn->db->clock;
        txn->now_ns = c->now_ns(c->ctx);
        txn->now_read = true;
    }
    return txn->now_ns;
}

double ads_db__now(ads_txn *txn)
{
    return (double)txn_now_ns(txn) / 1e9;
}

int ads_db__next_systs(ads_txn *txn, int64_t *out, ads_error *err)
{
    if (!txn->systs_loaded) {
        MDB_val v;
        int rc = ads_db__meta_get(txn, ADS_META_SYSTS, strlen(ADS_META_SYSTS), &v, err);
        if (rc < 0)
            return rc;
        txn->systs = 0;
        if (rc == 1) {
            if (v.mv_size != 8)
                return ads_error_set(err, ADS_ECORRUPT, "store metadata 'systs' is corrupt");
            txn->systs = (int64_t)get_le(v.mv_data, 8);
        }
        txn->systs_loaded = true;
    }
    int64_t now = txn_now_ns(txn) / 1000;
    txn->systs = now > txn->systs ? now : txn->systs + 1;
    txn->systs_dirty = true;
    *out = txn->systs;
    return 0;
}

char *ads_db__fold(ads_txn *txn, const char *s, size_t len)
{
    char *f = ads_arena_alloc(txn->arena, len + 1);
    if (!f)
        return NULL;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        f[i] = (char)((c >= 'A' && c <= 'Z') ? c | 0x20 : c);
    }
    f[len] = 0;
    return f;
}

/* ---- creating and opening ---- */

static int meta_get_fixed(MDB_txn *txn, MDB_dbi dbi, const char *key, void *buf, size_t len,
                          ads_error *err)
{
    MDB_val k = {strlen(key), (void *)key}, v;
    int rc = mdb_get(txn, dbi, &k, &v);
    if (rc == MDB_NOTFOUND)
        return 1;
    if (rc)
        return lmdb_plain(err, rc, "reading store metadata");
    if (v.mv_size != len)
        return ads_error_set(err, ADS_ECORRUPT,
                             "store metadata '%s' has %zu bytes, expected %zu", key, v.mv_size,
                             len);
    memcpy(buf, v.mv_data, len);
    return 0;
}

static int meta_put_fixed(MDB_txn *txn, MDB_dbi dbi, const char *key, const void *buf, size_t len,
                          ads_error *err)
{
    MDB_val k = {strlen(key), (void *)key}, v = {len, (void *)buf};
    int rc = mdb_put(txn, dbi, &k, &v, 0);
    return rc ? lmdb_plain(err, rc, "writing store metadata") : 0;
}

int ads_db_format(unsigned *out, ads_db *db, ads_error *err)
{
    if (!out || !db)
        return ads_error_set(err, ADS_EINVAL, "NULL argument");
    ads_txn *txn;
    uint8_t buf[4];
    int rc = ads_txn_begin(&txn, db, ADS_TXN_READONLY, err);
    if (rc)
        return rc;
    rc = meta_get_fixed(txn->txn, db->meta, ADS_META_FORMAT, buf, 4, err);
    ads_txn_abort(txn);
    if (rc == 1)
        return ads_error_set(err, ADS_ECORRUPT, "store metadata has no format version");
    if (rc == 0)
        *out = (unsigned)get_le(buf, 4);
    return rc;
}

/* Raise the format version to v (never lower it). */
static int format_raise(ads_txn *txn, unsigned v, ads_error *err)
{
    uint8_t buf[4];
    int rc = meta_get_fixed(txn->txn, txn->db->meta, ADS_META_FORMAT, buf, 4, err);
    if (rc < 0 || (rc == 0 && get_le(buf, 4) >= v))
        return rc;
    put_le(buf, v, 4);
    return meta_put_fixed(txn->txn, txn->db->meta, ADS_META_FORMAT, buf, 4, err);
}

int ads_db__format_indexed(ads_txn *txn, ads_error *err)
{
    return format_raise(txn, ADS_DB_FORMAT_INDEXED, err);
}

int ads_db__format_names(ads_txn *txn, ads_error *err)
{
    return format_raise(txn, ADS_DB_FORMAT_NAMES, err);
}

int ads_db__format_composite(ads_txn *txn, ads_error *err)
{
    return format_raise(txn, ADS_DB_FORMAT_COMPOSITE, err);
}

int ads_db__format_rows(ads_txn *txn, ads_error *err)
{
    if (txn->rows_raised)
        return 0;
    int rc = format_raise(txn, ADS_DB_FORMAT_ENVELOPE, err);
    txn->rows_raised = rc == 0;
    return rc;
}

int ads_db__format_chunks(ads_txn *txn, ads_error *err)
{
    if (txn->chunks_raised)
        return 0;
    int rc = format_raise(txn, ADS_DB_FORMAT_CHUNKS, err);
    txn->chunks_raised = rc == 0;
    return rc;
}

/* The records of a new store: format, node, fresh generator state. */
static int init_meta(MDB_txn *txn, MDB_dbi dbi, ads_error *err)
{
    uint8_t buf[ADS_IDGEN_STATE_BYTES];
    uint64_t node;
    ads_idgen_state st;
    int rc;

    if ((rc = ads_node_new(&node, err)))
        return rc;
    put_le(buf, ADS_DB_FORMAT_VERSION, 4);
    if ((rc = meta_put_fixed(txn, dbi, ADS_META_FORMAT, buf, 4, err)))
        return rc;
    put_le(buf, node, 8);
    if ((rc = meta_put_fixed(txn, dbi, ADS_META_NODE, buf, 8, err)))
        return rc;
    ads_idgen_state_init(&st, node);
    ads_idgen_state_encode(buf, &st);
    return meta_put_fixed(txn, dbi, ADS_META_IDGEN, buf, sizeof buf, err);
}

/* Check the format version, read the node id, open the tables; create them
 * if allowed. */
static int load_meta(ads_db *db, const char *dir, ads_error *err)
{
    bool writable = !(db->flags & ADS_DB_READONLY);
    unsigned create = writable ? MDB_CREATE : 0;
    MDB_txn *txn;
    uint8_t buf[8];
    int rc = mdb_txn_begin(db->env, NULL, writable ? 0 : MDB_RDONLY, &txn);
    if (rc)
        return lmdb_plain(err, rc, "opening store");

    /* only an empty environment may become a store: another program's
     * LMDB environment is left alone, not given adstore's tables */
    rc = mdb_dbi_open(txn, "meta", 0, &db->meta);
    if (rc == MDB_NOTFOUND && writable && (db->flags & ADS_DB_CREATE)) {
        MDB_dbi root;
        MDB_stat st;
        if ((rc = mdb_dbi_open(txn, NULL, 0, &root)) || (rc = mdb_stat(txn, root, &st))) {
            rc = lmdb_plain(err, rc, "opening store");
            goto cleanup;
        }
        if (st.ms_entries) {
            rc = ads_error_set(err, ADS_EINVAL,
                               "%s holds an LMDB environment that is not an adstore store "
                               "(another program's): it is left as it is",
                               dir);
            goto cleanup;
        }
        rc = mdb_dbi_open(txn, "meta", create, &db->meta);
        if (!rc && (rc = init_meta(txn, db->meta, err)))
            goto cleanup;
    }
    if (rc == MDB_NOTFOUND) {
        rc = ads_error_set(err, ADS_ENOTFOUND, "%s holds no adstore store", dir);
        goto cleanup;
    }
    if (rc) {
        rc = lmdb_plain(err, rc, "opening store metadata");
        goto cleanup;
    }
    rc = meta_get_fixed(txn, db->meta, ADS_META_FORMAT, buf, 4, err);
    if (rc == 1) {
        if (!writable || !(db->flags & ADS_DB_CREATE)) {
            rc = ads_error_set(err, ADS_ENOTFOUND, "%s holds no adstore store", dir);
            goto cleanup;
        }
        /* a table named meta without adstore's format: another program's */
        rc = ads_error_set(err, ADS_EINVAL,
                           "%s holds an LMDB environment that is not an adstore store "
                           "(another program's): it is left as it is",
                           dir);
        goto cleanup;
    }
    if (rc)
        goto cleanup;
    if (get_le(buf, 4) < ADS_DB_FORMAT_VERSION || get_le(buf, 4) > ADS_DB_FORMAT_CHUNKS) {
        rc = ads_error_set(err, ADS_EVERSION,
                           "%s is a store of format version %llu; this build reads versions %d "
                           "to %d",
                           dir, (unsigned long long)get_le(buf, 4), ADS_DB_FORMAT_VERSION,
                           ADS_DB_FORMAT_CHUNKS);
        goto cleanup;
    }
    rc = meta_get_fixed(txn, db->meta, ADS_META_NODE, buf, 8, err);
    if (rc == 1)
        rc = ads_error_set(err, ADS_ECORRUPT, "%s: store metadata has no node id", dir);
    if (rc)
        goto cleanup;
    db->node = get_le(buf, 8);
    db->keyframe_rows = ads_hist__keyframe_rows();
    /* tests make stores of one history row per entry, as format 6 wrote */
    const char *hr = getenv("ADSTORE_TEST_HISTORY_ROWS");
    db->history_rows = hr && strcmp(hr, "1") == 0;
    db->chunk_rows = ads_chunk__max_rows();
    if ((rc = mdb_dbi_open(txn, "latest", create, &db->latest)) ||
        (rc = mdb_dbi_open(txn, "history", create, &db->history))) {
        rc = rc == MDB_NOTFOUND
                 ? ads_error_set(err, ADS_ECORRUPT, "%s: the store's tables are missing", dir)
                 : lmdb_plain(err, rc, "opening store tables");
        goto cleanup;
    }
    /* the index table came with secondary indexes: a store made before has
     * none until it is written to (a read-only open finds no index) */
    rc = mdb_dbi_open(txn, "index", writable ? MDB_CREATE : 0, &db->index);
    if (rc == MDB_NOTFOUND && !writable) {
        rc = 0;
        db->index = 0;
    }
    if (rc) {
        rc = rc == MDB_NOTFOUND
                 ? ads_error_set(err, ADS_ECORRUPT, "%s: the store's tables are missing", dir)
                 : lmdb_plain(err, rc, "opening store tables");
        goto cleanup;
    }
    /* the keyframes of trimmed histories came with format 5 (history.c): as
     * the index table, an older store gets it (empty) when opened for
     * writing, and a read-only open of one without it has none to read */
    rc = mdb_dbi_open(txn, "bases", writable ? MDB_CREATE : 0, &db->bases);
    if (rc == MDB_NOTFOUND && !writable) {
        rc = 0;
        db->bases = 0;
    }
    if (rc) {
        rc = lmdb_plain(err, rc, "opening store tables");
        goto cleanup;
    }
    /* the attribute-name table came with format 3: as the index table, an
     * older store gets it (empty) when opened for writing */
    MDB_dbi names = 0;
    rc = mdb_dbi_open(txn, "names", writable ? MDB_CREATE : 0, &names);
    if (rc == MDB_NOTFOUND && !writable) {
        rc = 0;
        db->names_late = true;
    }
    db->names_dbi = names;
    if (rc) {
        rc = lmdb_plain(err, rc, "opening store tables");
        goto cleanup;
    }
    /* commit even a read-only transaction: table handles opened in an
     * aborted transaction are closed with it */
    rc = mdb_txn_commit(txn);
    txn = NULL;
    if (rc)
        rc = lmdb_plain(err, rc, writable ? "creating store" : "opening store");
cleanup:
    if (txn)
        mdb_txn_abort(txn);
    return rc;
}

/* The bytes of LMDB's lock file for ADS_MAX_READERS reader slots
 * ((readers - 1) * 64-byte slots + its 192-byte header). */
#define LOCK_FILE_BYTES ((off_t)(ADS_MAX_READERS - 1) * 64 + 192)

/* LMDB makes its lock file by ftruncate and then writes it through a shared
 * map: on a full file system the pages cannot be had and the process dies of
 * SIGBUS. So the lock file's blocks are reserved first, where a full disk is
 * an error. (A lock file that cannot be opened here is left to LMDB to
 * report: a read-only store.) */
static int reserve_lock_file(const char *dir, ads_error *err)
{
    char path[4096];
    struct stat sb;
    snprintf(path, sizeof path, "%s/lock.mdb", dir);
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0)
        return 0;
    int rc = 0;
    if (fstat(fd, &sb) == 0 && sb.st_size < LOCK_FILE_BYTES) {
        int e = posix_fallocate(fd, 0, LOCK_FILE_BYTES);
        if (e && e != EOPNOTSUPP && e != EINVAL)
            rc = ads_error_set(err, e == ENOSPC ? ADS_EIO : ADS_ESTORAGE,
                               "cannot open store %s: its lock file: %s", dir, strerror(e));
        if (rc)
            unlink(path);
    }
    close(fd);
    return rc;
}

/* A data file shorter than the pages its map uses (an interrupted copy, a
 * disk that filled during cp) would die of SIGBUS at the first read of a
 * missing page: its size is checked against LMDB's last used page first. */
static int check_data_size(ads_db *db, const char *path, ads_error *err)
{
    MDB_envinfo info;
    MDB_stat st;
    struct stat sb;
    int rc;
    if ((rc = mdb_env_info(db->env, &info)) || (rc = mdb_env_stat(db->env, &st)))
        return lmdb_plain(err, rc, "opening store");
    if (stat(path, &sb) != 0)
        return ads_error_set(err, ADS_EIO, "cannot read %s: %s", path, strerror(errno));
    uint64_t need = ((uint64_t)info.me_last_pgno + 1) * st.ms_psize;
    if ((uint64_t)sb.st_size < need)
        return ads_error_set(err, ADS_ECORRUPT,
                             "%s is truncated: %llu bytes, the store needs %llu", path,
                             (unsigned long long)sb.st_size, (unsigned long long)need);
    return 0;
}

int ads_db_open(ads_db **out, const char *dir, int flags, ads_error *err)
{
    return ads_db_open_ex(out, dir, flags, NULL, err);
}

int ads_db_open_ex(ads_db **out, const char *dir, int flags, const ads_db_options *opt,
                   ads_error *err)
{
    struct stat sb;
    char path[4096];
    int rc;

    if (!out || !dir || !*dir)
        return ads_error_set(err, ADS_EINVAL, "store directory not given");
    if ((flags & ADS_DB_READONLY) && (flags & (ADS_DB_CREATE | ADS_DB_NOSYNC)))
        return ads_error_set(err, ADS_EINVAL, "a read-only store cannot be created or synced");
    if (flags & ~(ADS_DB_READONLY | ADS_DB_CREATE | ADS_DB_NOSYNC))
        return ads_error_set(err, ADS_EINVAL, "unknown store flags 0x%x", (unsigned)flags);
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
    pthread_rwlock_init(&db->resize, NULL);
    pthread_mutex_init(&db->lock, NULL);
    pthread_mutex_init(&db->group_lock, NULL);

    size_t map = opt && opt->map_size ? opt->map_size : MAP_SIZE_DEFAULT;
    if ((rc = mdb_env_create(&db->env))) {
        rc = lmdb_plain(err, rc, "creating LMDB environment");
        db->env = NULL;
        goto fail;
    }
    if ((rc = mdb_env_set_maxdbs(db->env, 8)) ||
        (rc = mdb_env_set_maxreaders(db->env, ADS_MAX_READERS)) ||
        (rc = mdb_env_set_mapsize(db->env, map))) {
        rc = lmdb_plain(err, rc, "configuring LMDB environment");
        goto fail;
    }
    if (!(flags & ADS_DB_READONLY) && (rc = reserve_lock_file(dir, err)))
        goto fail;
    unsigned envflags = MDB_NOTLS;
    if (flags & ADS_DB_READONLY)
        envflags |= MDB_RDONLY;
    if (flags & ADS_DB_NOSYNC)
        envflags |= MDB_NOMETASYNC; /* not MDB_NOSYNC: see ADS_DB_NOSYNC in engine.h */
    rc = mdb_env_open(db->env, dir, envflags, 0600);
    if (rc) {
        if (rc == EACCES)
            rc = ads_error_set(err, ADS_EIO, "cannot open store %s: permission denied", dir);
        else
            rc = lmdb_plain(err, rc, "opening store");
        goto fail;
    }
    if ((rc = check_data_size(db, path, err)))
        goto fail;
    int dead = 0;
    if ((rc = mdb_reader_check(db->env, &dead))) {
        rc = lmdb_plain(err, rc, "clearing stale readers");
        goto fail;
    }
    if (ads_names__new(&db->names)) {
        rc = ads_error_set(err, ADS_ENOMEM, "opening store: out of memory");
        goto fail;
    }
    if ((rc = load_meta(db, dir, err)))
        goto fail;
    *out = db;
    return 0;
fail:
    ads_names__free(db->names);
    if (db->env)
        mdb_env_close(db->env);
    pthread_rwlock_destroy(&db->resize);
    pthread_mutex_destroy(&db->lock);
    pthread_mutex_destroy(&db->group_lock);
    free(db);
    return rc;
}

void ads_db_close(ads_db *db)
{
    if (!db)
        return;
    if (db->flags & ADS_DB_NOSYNC)
        mdb_env_sync(db->env, 1);
    mdb_env_close(db->env);
    ads_names__free(db->names);
    ads_msgpack_order_free(db->bulk_shapes);
    ads_types__free_all(db);
    ads_attrs__free(db);
    for (size_t i = 0; i < db->nhooks; i++)
        free(db->hooks[i].folded);
    free(db->hooks);
    pthread_rwlock_destroy(&db->resize);
    pthread_mutex_destroy(&db->lock);
    pthread_mutex_destroy(&db->group_lock);
    free(db);
}

int ads_db_sync(ads_db *db, ads_error *err)
{
    if (!db)
        return ads_error_set(err, ADS_EINVAL, "no store");
    if (db->flags & ADS_DB_READONLY)
        return 0;
    int rc = mdb_env_sync(db->env, 1);
    return rc ? lmdb_plain(err, rc, "syncing the store") : 0;
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

double ads_db_now(ads_db *db)
{
    return (double)db->clock.now_ns(db->clock.ctx) / 1e9;
}

size_t ads_db_map_size(ads_db *db)
{
    return ads_db__map_size(db);
}

/* ---- map growth ---- */

static int lock_exclusive(ads_db *db, ads_error *err)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += RESIZE_WAIT_S;
    int rc = pthread_rwlock_timedwrlock(&db->resize, &ts);
    if (rc)
        return ads_error_set(err, ADS_EBUSY,
                             "cannot resize the store's map: other transactions of this process "
                             "stayed open for %d s",
                             RESIZE_WAIT_S);
    return 0;
}

/* Grow the map to at least `want` bytes (0: double it); or, with adopt,
 * take the size another process set. */
static int resize(ads_db *db, size_t want, bool adopt, ads_error *err)
{
    int rc = lock_exclusive(db, err);
    if (rc)
        return rc;
    MDB_envinfo info;
    mdb_env_info(db->env, &info);
    size_t size = adopt ? 0 : (want > info.me_mapsize ? want : info.me_mapsize * 2);
    if (!adopt && size < info.me_mapsize) /* overflow */
        size = SIZE_MAX / 2;
    rc = mdb_env_set_mapsize(db->env, size);
    if (!rc)
        atomic_fetch_add_explicit(&db->grown, 1, memory_order_relaxed);
    pthread_rwlock_unlock(&db->resize);
    return rc ? lmdb_plain(err, rc, "resizing the store's map") : 0;
}

/* Before a write transaction: grow if less than a quarter of the map is free. */
static int ensure_room(ads_db *db, ads_error *err)
{
    MDB_envinfo info;
    MDB_stat st;
    pthread_rwlock_rdlock(&db->resize); /* another thread may be growing the map */
    mdb_env_info(db->env, &info);
    mdb_env_stat(db->env, &st);
    pthread_rwlock_unlock(&db->resize);
    size_t used = (info.me_last_pgno + 1) * (size_t)st.ms_psize;
    if (used <= info.me_mapsize / 4 * 3)
        return 0;
    return resize(db, 0, false, err);
}

size_t ads_db__map_size(ads_db *db)
{
    MDB_envinfo info;
    pthread_rwlock_rdlock(&db->resize);
    mdb_env_info(db->env, &info);
    pthread_rwlock_unlock(&db->resize);
    return info.me_mapsize;
}

unsigned ads_db__grown(ads_db *db)
{
    return atomic_load_explicit(&db->grown, memory_order_relaxed);
}

int ads_db__grow(ads_db *db, unsigned seen, ads_error *err)
{
    return ads_db__grown(db) != seen ? 0 : resize(db, 0, false, err);
}

/* ---- transactions ---- */

static ads_txn *txn_alloc(ads_error *err)
{
    ads_txn *t = calloc(1, sizeof *t);
    if (!t || !(t->arena = ads_arena_new())) {
        free(t);
        ads_error_set(err, ADS_ENOMEM, "beginning transaction: out of memory");
        return NULL;
    }
    t->nm.name = ads_names__resolve;
    t->given_nm.name = ads_names__resolve_given;
    return t;
}

static void txn_started(ads_db *db)
{
    pthread_mutex_lock(&db->lock);
    db->open_txns++;
    pthread_mutex_unlock(&db->lock);
}

int ads_txn_begin(ads_txn **out, ads_db *db, int flags, ads_error *err)
{
    bool readonly = (flags & ADS_TXN_READONLY) != 0;
    int rc;
    if (!out || !db)
        return ads_error_set(err, ADS_EINVAL, "no store");
    if (!readonly && (db->flags & ADS_DB_READONLY))
        return ads_error_set(err, ADS_EREADONLY, "the store is open read-only");
    if (!readonly && (rc = ensure_room(db, err)))
        return rc;
    ads_txn *t = txn_alloc(err);
    if (!t)
        return ADS_ENOMEM;
    for (;;) {
        pthread_rwlock_rdlock(&db->resize);
        if (readonly) {
            rc = mdb_txn_begin(db->env, NULL, MDB_RDONLY, &t->txn);
        } else {
            /* writes go to a child; the parent keeps generator state that
             * must survive an abort (ads_txn_abort) */
            rc = mdb_txn_begin(db->env, NULL, 0, &t->parent);
            if (!rc && (rc = mdb_txn_begin(db->env, t->parent, 0, &t->txn))) {
                mdb_txn_abort(t->parent);
                t->parent = NULL;
            }
        }
        if (rc != MDB_MAP_RESIZED)
            break;
        pthread_rwlock_unlock(&db->resize);
        if ((rc = resize(db, 0, true, err))) {
            ads_arena_free(t->arena);
            free(t);
            return rc;
        }
    }
    if (rc) {
        pthread_rwlock_unlock(&db->resize);
        ads_arena_free(t->arena);
        free(t);
        return lmdb_plain(err, rc, "beginning transaction");
    }
    t->db = db;
    t->readonly = readonly;
    if (!readonly)
        t->names_root = atomic_fetch_add(&db->write_roots, 1) + 1;
    txn_started(db);
    *out = t;
    return 0;
}

int ads_txn__begin_nested(ads_txn **out, ads_db *db, MDB_txn *root, uint64_t names_root,
                          ads_error *err)
{
    ads_txn *t = txn_alloc(err);
    if (!t)
        return ADS_ENOMEM;
    int rc = mdb_txn_begin(db->env, root, 0, &t->parent);
    if (!rc && (rc = mdb_txn_begin(db->env, t->parent, 0, &t->txn)))
        mdb_txn_abort(t->parent);
    if (rc) {
        ads_arena_free(t->arena);
        free(t);
        return lmdb_plain(err, rc, "beginning transaction");
    }
    t->db = db;
    t->nested = true;
    t->names_root = names_root;
    txn_started(db);
    *out = t;
    return 0;
}

static void txn_ended(ads_db *db)
{
    pthread_mutex_lock(&db->lock);
    db->open_txns--;
    pthread_mutex_unlock(&db->lock);
}

static void txn_free(ads_txn *t)
{
    ads_types__unpin(t);
    ads_backfill_end(t->backfill);
    ads_buf_free(&t->kbuf);
    ads_buf_free(&t->vbuf);
    ads_buf_free(&t->last_key);
    for (int i = 0; i < 4; i++) {
        ads_arena_free(t->ws[i].a);
        ads_buf_free(&t->ws[i].full);
        ads_buf_free(&t->ws[i].merged);
        ads_buf_free(&t->ws[i].oldrow);
        ads_buf_free(&t->ws[i].newrow);
        ads_buf_free(&t->ws[i].ids);
        ads_buf_free(&t->ws[i].hist);
        ads_buf_free(&t->ws[i].base);
    }
    ads_buf_free(&t->tmp);
    free(t->counts);
    for (size_t i = 0; i < t->nseqs; i++)
        free(t->seqs[i].key);
    free(t->seqs);
    ads_attrs__txn_free(t);
    free(t->changes);
    ads_arena_free(t->change_arena);
    ads_arena_free(t->arena);
    free(t);
}

/* Write what the transaction kept in memory: generator state, counters,
 * the system clock, record counts. */
static int flush(ads_txn *t, ads_error *err)
{
    int rc;
    if ((rc = ads_seq__flush(t, err)) || (rc = ads_types__flush_counts(t, err)))
        return rc;
    if (t->systs_dirty) {
        uint8_t b[8];
        put_le(b, (uint64_t)t->systs, 8);
        if ((rc = ads_db__meta_put(t, ADS_META_SYSTS, strlen(ADS_META_SYSTS), b, 8, err)))
            return rc;
    }
    return 0;
}

/*
 * Drop the child's changes (aborting it unless LMDB already freed it) and
 * keep the generator state in the parent, which stays open: values handed
 * out stay handed out, as the parent still holds the write lock (or belongs
 * to a group that does), so no other writer can take them in between.
 * Nothing else survives. Returns 1 when the parent holds that state, 0 when
 * there was none, or the error of writing it (message in e: the parent is
 * then half written and must be aborted).
 */
static int drop_child(ads_txn *txn, bool child_alive, ads_error *e)
{
    ads_names__drop(txn); /* while the write lock is held */
    if (child_alive)
        mdb_txn_abort(txn->txn);
    txn->txn = txn->parent;
    txn->broken = false;
    if (!ads_seq__dirty(txn))
        return 0;
    int rc = ads_seq__flush(txn, e);
    return rc ? rc : 1;
}

/* What an abandoned transaction's caller is told (into out) when its
 * generator state is lost (why: its message). */
static int state_lost(ads_error *out, int rc, const ads_error *why)
{
    return ads_error_set(out, rc,
                         "identifiers and sequence values the abandoned transaction handed out "
                         "may be handed out again: %s",
                         why->message);
}

/* The transaction failed with rc (message in err); abandoning it failed too
 * (message in e): keep rc, with both messages. */
static int both(int rc, ads_error *err, int arc, const ads_error *e)
{
    if (!arc || !err)
        return rc;
    char first[ADS_ERROR_MESSAGE_MAX];
    snprintf(first, sizeof first, "%s", err->message);
    return ads_error_set(err, rc, "%s; %s", first, e->message);
}

/*
 * The work of write transaction txn is over. With commit (its owner asks to
 * commit) and txn not broken, the transaction's state is flushed and its
 * child committed into the parent: 0. Otherwise, or if that fails, the child
 * is dropped (drop_child) and the transaction's error returned (none for a
 * plain abort). Either way txn->txn is the parent after, still open: *keep
 * says it holds something to commit (the work, or the generator state of
 * dropped work), *bad that writing that state failed half way, so the parent
 * must be aborted (the message says the values may be handed out again).
 * err may be NULL (an abort: nobody to tell).
 */
int ads_txn__settle(ads_txn *txn, bool commit, bool *keep, bool *bad, ads_error *err)
{
    ads_error e, lost;
    int rc = 0;
    bool child_alive = true;
    *keep = *bad = false;
    if (txn->broken) {
        rc = ads_error_set(err, txn->broken_rc ? txn->broken_rc : ADS_ESTORAGE,
                           "the transaction failed earlier and was abandoned");
    } else if (commit && !(rc = flush(txn, err))) {
        int mrc = mdb_txn_commit(txn->txn);
        if (!mrc) {
            txn->txn = txn->parent;
            *keep = true;
            return 0;
        }
        rc = ads_db__lmdb(txn, err, mrc, "committing transaction");
        child_alive = false;
    }
    int drc = drop_child(txn, child_alive, &e);
    if (drc == 1) {
        *keep = true;
    } else if (drc < 0) {
        *bad = true;
        if (rc)
            rc = both(rc, err, state_lost(&lost, drc, &e), &lost);
    }
    return rc;
}

int ads_txn__root_failed(ads_txn *txn, int rc, bool handed, int mrc, ads_error *err)
{
    ads_error e, lost;
    if (rc) /* abandoned work whose generator state was not saved */
        return both(rc, err,
                    state_lost(&lost, lmdb_plain(&e, mrc, "saving identifier state"), &e),
                    &lost);
    rc = ads_db__lmdb(txn, err, mrc, "committing transaction");
    if (handed) /* the generator state went with the rest */
        rc = both(rc, err,
                  ads_error_set(&e, rc, "identifiers and sequence values the transaction handed "
                                        "out may be handed out again"),
                  &e);
    return rc;
}

/*
 * Commit or abort the parent of a settled transaction (its root), after
 * ads_txn__settle returned rc, keep and bad; handed: the work handed out
 * values (read before settling). A parent holding nothing is aborted, which
 * writes nothing.
 */
static int end_root(ads_txn *txn, int rc, bool keep, bool bad, bool handed, ads_error *err)
{
    int mrc = 0;
    if (keep && !bad)
        mrc = mdb_txn_commit(txn->parent);
    else
        mdb_txn_abort(txn->parent);
    ads_names__root_end(txn->db, txn->names_root, keep && !bad && !mrc);
    txn->parent = NULL;
    txn->txn = NULL;
    return mrc ? ads_txn__root_failed(txn, rc, handed, mrc, err) : rc;
}

void ads_txn__end(ads_txn *txn, bool committed)
{
    ads_db *db = txn->db;
    if (!txn->nested)
        pthread_rwlock_unlock(&db->resize);
    txn_ended(db);
    if (committed && !txn->readonly) {
        ads_attrs__commit(txn);
        ads_hooks__deliver(txn);
    }
    txn_free(txn);
}

int ads_txn_commit(ads_txn *txn, ads_error *err)
{
    if (!txn)
        return ads_error_set(err, ADS_EINVAL, "no transaction");
    int rc = 0;
    if (txn->readonly) {
        mdb_txn_abort(txn->txn);
    } else {
        bool handed = ads_seq__dirty(txn); /* before flush writes it */
        bool keep, bad;
        rc = ads_txn__settle(txn, true, &keep, &bad, err);
        rc = end_root(txn, rc, keep, bad, handed, err);
    }
    ads_txn__end(txn, rc == 0);
    return rc;
}

void ads_txn_abort(ads_txn *txn)
{
    if (!txn)
        return;
    if (txn->readonly) {
        mdb_txn_abort(txn->txn);
    } else {
        bool keep, bad;
        /* nobody to tell: see engine.h */
        int rc = ads_txn__settle(txn, false, &keep, &bad, NULL);
        (void)end_root(txn, rc, keep, bad, false, NULL);
    }
    ads_txn__end(txn, false);
}

bool ads_txn_readonly(const ads_txn *txn)
{
    return txn->readonly;
}

ads_db *ads_txn_db(ads_txn *txn)
{
    return txn->db;
}

int ads_db_read(ads_db *db, ads_txn_fn fn, void *ctx, ads_error *err)
{
    if (!db || !fn)
        return ads_error_set(err, ADS_EINVAL, "no store or no work");
    ads_txn *txn;
    int rc = ads_txn_begin(&txn, db, ADS_TXN_READONLY, err);
    if (rc)
        return rc;
    rc = fn(txn, ctx, err);
    ads_txn_abort(txn);
    return rc;
}

/* ---- application metadata ---- */

static int app_key(char *out, size_t cap, const char *key, ads_error *err)
{
    size_t n = key ? strlen(key) : 0;
    if (n == 0 || n > ADS_META_KEY_MAX)
        return ads_error_set(err, ADS_EINVAL, "metadata keys have 1 to 200 bytes");
    int m = snprintf(out, cap, "%s%s", ADS_META_APP_PREFIX, key);
    return m;
}

int ads_txn_meta_get(ads_txn *txn, const char *key, ads_str *value, ads_error *err)
{
    char k[256];
    int n = app_key(k, sizeof k, key, err);
    if (n < 0)
        return n;
    MDB_val v;
    int rc = ads_db__meta_get(txn, k, (size_t)n, &v, err);
    if (rc == 1) {
        value->p = v.mv_data;
        value->len = v.mv_size;
    }
    return rc;
}

int ads_txn_meta_put(ads_txn *txn, const char *key, const void *value, size_t len,
                     ads_error *err)
{
    char k[256];
    int n = app_key(k, sizeof k, key, err);
    if (n < 0)
        return n;
    int rc = ads_db__need_write(txn, "writing metadata", err);
    if (rc)
        return rc;
    if (!value)
        return ads_db__del(txn, txn->db->meta, k, (size_t)n, err);
    if (len > 65536)
        return ads_error_set(err, ADS_ELIMIT, "metadata values are at most 64 KiB");
    return ads_db__meta_put(txn, k, (size_t)n, value, len, err);
}

/* ---- figures ---- */

int ads_db_info_get(ads_db_info *out, ads_db *db, ads_error *err)
{
    MDB_envinfo info;
    MDB_stat st;
    int rc;
    if ((rc = mdb_env_info(db->env, &info)) || (rc = mdb_env_stat(db->env, &st)))
        return lmdb_plain(err, rc, "reading store figures");
    memset(out, 0, sizeof *out);
    out->map_size = info.me_mapsize;
    out->page_size = st.ms_psize;
    out->used_bytes = (info.me_last_pgno + 1) * (size_t)st.ms_psize;
    out->max_readers = info.me_maxreaders;
    out->readers = info.me_numreaders;
    ads_txn *t;
    if ((rc = ads_txn_begin(&t, db, ADS_TXN_READONLY, err)))
        return rc;
    MDB_dbi dbis[4] = {db->meta, db->latest, db->history, db->index};
    for (int i = 0; i < (db->index ? 4 : 3); i++) {
        MDB_stat s;
        if (mdb_stat(t->txn, dbis[i], &s) == 0)
            out->entries += s.ms_entries;
    }
    ads_txn_abort(t);
    return 0;
}

/* ---- resident set ---- */

/* The address range of the store's map in this process (LMDB gives it only
 * for fixed maps): the mapping of the data file's inode in /proc/self/maps. */
static int map_range(MDB_env *env, uintptr_t *lo, uintptr_t *hi)
{
    mdb_filehandle_t fd;
    struct stat st;
    if (mdb_env_get_fd(env, &fd) || fstat(fd, &st))
        return 0;
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f)
        return 0;
    char line[4400];
    int found = 0;
    while (!found && fgets(line, sizeof line, f)) {
        unsigned long a, b, ino;
        unsigned maj, mnr;
        if (sscanf(line, "%lx-%lx %*s %*s %x:%x %lu", &a, &b, &maj, &mnr, &ino) == 5 &&
            ino == (unsigned long)st.st_ino && makedev(maj, mnr) == st.st_dev) {
            *lo = a;
            *hi = b;
            found = 1;
        }
    }
    fclose(f);
    return found;
}

size_t ads_db__resident_file_bytes(void)
{
    char buf[256];
    int fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return SIZE_MAX;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    unsigned long size, resident, shared;
    if (n <= 0)
        return SIZE_MAX;
    buf[n] = 0;
    if (sscanf(buf, "%lu %lu %lu", &size, &resident, &shared) != 3)
        return SIZE_MAX;
    long page = sysconf(_SC_PAGESIZE);
    return page > 0 ? (size_t)shared * (size_t)page : SIZE_MAX;
}

void ads_db__drop_env_pages(MDB_env *env)
{
    uintptr_t lo, hi;
    if (map_range(env, &lo, &hi) && hi > lo)
        madvise((void *)lo, hi - lo, MADV_DONTNEED);
}

void ads_db__drop_map_pages(ads_db *db)
{
    ads_db__drop_env_pages(db->env);
}
