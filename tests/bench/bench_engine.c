/*
 * tests/bench/bench_engine.c: the storage scenarios of
 * shared/spec/performance.md, each against its baselines in the same run:
 *   P1 bulk load of N Machine records in batches of 10k (adstore's bulk API,
 *      Attribute bookkeeping and timeline rows included) vs raw LMDB puts of
 *      the same MessagePack bytes with MDB_APPEND, and vs SQLite inserting
 *      the same records as JSON (WAL, synchronous=NORMAL; a transaction per
 *      batch). The sync that matches adstore's: its bulk load opens the store
 *      with ADS_DB_NOSYNC, which is MDB_NOMETASYNC (each commit flushes its
 *      pages, once: a crash can lose the last commits but not corrupt the
 *      store), and SQLite's WAL with synchronous=NORMAL promises the same.
 *      Raw LMDB runs twice: with MDB_NOMETASYNC, the matched row the target
 *      is read from, and with MDB_NOSYNC synced once at the end (a crash can
 *      corrupt that store), for the record;
 *   P2 100 updates to each of 10k records (merge, latest moves, the old row
 *      goes to history) vs raw LMDB overwriting puts, and vs SQLite UPDATE plus
 *      a history-table INSERT;
 *   P3 the constraint scan of the N latest rows vs msgpack-c decode plus a
 *      hand-written C filter over the raw LMDB table, and vs SQLite json_extract;
 *   P4 N random point lookups by key vs mdb_get, and vs SQLite's primary key
 *      (one read transaction, mmap on, a prepared statement);
 *   P5 count(*) and sum(Memory) grouped by Arch (the engine's scan and a group
 *      table) vs SQLite GROUP BY json_extract.
 * Inputs (records, MessagePack bytes, JSON text) are made outside the timed
 * parts. Each repetition alternates adstore and its baselines. The last
 * repetition's stores serve P3 to P5. SQLite reads with its default page
 * cache (loads and updates get a 256 MB one). P1, P3 and P4 run again with
 * the records loaded in shuffled key order (raw LMDB then cannot append).
 * Result counts are cross-checked: a disagreement fails the run. Then the
 * growth of anonymous memory of a scan of N/10 and of N rows, each in a fresh
 * process, shows that scans stream.
 */
#include <errno.h>
#include <inttypes.h>
#include <lmdb.h>
#include <msgpack.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "classad/formats.h"
#include "classad/msgpack.h"
#include "engine/engine.h"
#include "query/query.h"
#include "tests/bench/bench.h"

#define P3_WHERE "Memory > 1024 && Arch == \"X86_64\" && (Disk >= 100000 || Owner == \"alice\")"
#define BATCH 10000
/* Inputs are made a chunk at a time, just before they are used, as a reader
 * would hand them over: hot in cache for every system alike. */
#define CHUNK 100

static volatile uint64_t sink;

/* ---- the data ---- */

typedef struct mdata {
    char name[40];
    int64_t memory, disk, cpus, kflops, mips;
    double load;
    const char *arch, *owner, *platform, *role, *state;
    int extras;
} mdata;

static const char *const archs[] = {"X86_64", "x86_64", "ARM64", "PPC64LE"};
static const char *const owners[] = {"alice", "bob", "carol", "ALICE", "dave"};
static const char *const platforms[] = {"linux", "windows", "macos"};
static const char *const states[] = {"Unclaimed", "Claimed", "Owner"};

static void gen(mdata *m, uint64_t i, uint64_t version)
{
    uint64_t h = bench_mix(i), v = bench_mix(i * 1000003 + version);
    snprintf(m->name, sizeof m->name, "node%07" PRIu64 ".example.org", i);
    m->memory = (int64_t)256 << (h % 7);
    m->arch = archs[(h >> 8) % 4];
    m->disk = (int64_t)((h >> 12) % 400000);
    m->owner = owners[(h >> 32) % 5];
    m->platform = platforms[(h >> 36) % 3];
    m->role = (h >> 40) % 4 ? "compute" : "login";
    m->cpus = (int64_t)(1 + (h >> 42) % 64);
    m->kflops = (int64_t)((h >> 20) % 2000000);
    m->mips = (int64_t)((h >> 24) % 30000);
    m->state = states[(h >> 44) % 3];
    m->extras = (int)((h >> 50) % 5);
    m->load = (double)(v % 400) / 100.0;
    if (version)
        m->memory = (int64_t)256 << (v % 7);
}

/* The order records are loaded in: NULL for key order, else a permutation
 * of 0..N-1 (the shuffled-key rows). */
static const uint64_t *load_order;

/* Values are not copied by the builder: strings go into the arena first. */
static ads_arena *cur_arena;

static int add_s(ads_record_builder *b, const char *n, const char *s)
{
    ads_value v;
    if (ads_string_copy(&v, cur_arena, s, strlen(s)))
        return -1;
    return ads_record_builder_add_value(b, n, strlen(n), &v, NULL);
}

static int add_i(ads_record_builder *b, const char *n, int64_t i)
{
    ads_value v = ads_int(i);
    return ads_record_builder_add_value(b, n, strlen(n), &v, NULL);
}

static const ads_record *build(ads_arena *a, const mdata *m)
{
    ads_record_builder *b;
    cur_arena = a;
    ads_value load = ads_real(m->load), start = ads_bool(true);
    if (ads_record_builder_new(&b, a, NULL) || add_s(b, "AdType", "Machine") ||
        add_s(b, "Name", m->name) || add_i(b, "Memory", m->memory) ||
        add_s(b, "Arch", m->arch) || add_i(b, "Disk", m->disk) || add_s(b, "Owner", m->owner) ||
        add_s(b, "Platform", m->platform) || add_s(b, "Role", m->role) ||
        add_i(b, "Cpus", m->cpus) ||
        ads_record_builder_add_value(b, "LoadAvg", 7, &load, NULL) ||
        add_s(b, "State", m->state) || add_s(b, "Activity", "Idle") ||
        add_s(b, "OpSys", "LINUX") || add_i(b, "KFlops", m->kflops) || add_i(b, "Mips", m->mips) ||
        ads_record_builder_add_value(b, "Start", 5, &start, NULL))
        return NULL;
    static const char *const extra[] = {"Rank", "Slots", "Gpus", "Uptime"};
    for (int i = 0; i < m->extras; i++)
        if (add_i(b, extra[i], (int64_t)i * 7 + m->cpus))
            return NULL;
    return ads_record_builder_finish(b);
}

/* The partial record of an update: key, Memory and LoadAvg. */
static const ads_record *build_update(ads_arena *a, const mdata *m)
{
    ads_record_builder *b;
    cur_arena = a;
    ads_value load = ads_real(m->load);
    if (ads_record_builder_new(&b, a, NULL) || add_s(b, "AdType", "Machine") ||
        add_s(b, "Name", m->name) || add_i(b, "Memory", m->memory) ||
        ads_record_builder_add_value(b, "LoadAvg", 7, &load, NULL))
        return NULL;
    return ads_record_builder_finish(b);
}

/* A batch of inputs for every system, made before the timed part. */
typedef struct batch {
    ads_arena *a;
    const ads_record **recs;
    ads_buf packs, json, keys;
    size_t *pack_off, *json_off, *key_off;
    size_t n;
} batch;

static int batch_make(batch *bt, uint64_t first, size_t n, uint64_t version, bool update)
{
    ads_arena_reset(bt->a);
    ads_buf_clear(&bt->packs);
    ads_buf_clear(&bt->json);
    ads_buf_clear(&bt->keys);
    bt->n = n;
    for (size_t i = 0; i < n; i++) {
        mdata m;
        gen(&m, load_order ? load_order[first + i] : first + i, version);
        const ads_record *full = build(bt->a, &m);
        bt->recs[i] = update ? build_update(bt->a, &m) : full;
        if (!full || !bt->recs[i])
            return -1;
        bt->pack_off[i] = bt->packs.len;
        bt->json_off[i] = bt->json.len;
        bt->key_off[i] = bt->keys.len;
        if (ads_msgpack_encode_record(&bt->packs, full, NULL) ||
            ads_json_write(&bt->json, full, ADS_JSON_COMPACT, NULL))
            return -1;
        ads_buf_adds(&bt->keys, "Machine/");
        ads_buf_adds(&bt->keys, m.name);
    }
    bt->pack_off[n] = bt->packs.len;
    bt->json_off[n] = bt->json.len;
    bt->key_off[n] = bt->keys.len;
    return bt->packs.failed || bt->json.failed || bt->keys.failed ? -1 : 0;
}

static int batch_init(batch *bt)
{
    memset(bt, 0, sizeof *bt);
    bt->a = ads_arena_new();
    bt->recs = malloc(CHUNK * sizeof *bt->recs);
    bt->pack_off = malloc((CHUNK + 1) * sizeof(size_t));
    bt->json_off = malloc((CHUNK + 1) * sizeof(size_t));
    bt->key_off = malloc((CHUNK + 1) * sizeof(size_t));
    return bt->a && bt->recs && bt->pack_off && bt->json_off && bt->key_off ? 0 : -1;
}

static void batch_free(batch *bt)
{
    ads_arena_free(bt->a);
    free(bt->recs);
    free(bt->pack_off);
    free(bt->json_off);
    free(bt->key_off);
    ads_buf_free(&bt->packs);
    ads_buf_free(&bt->json);
    ads_buf_free(&bt->keys);
}

/* ---- stores ---- */

static int ads_open_store(ads_db **db, const char *path, bool fresh)
{
    ads_error err;
    ads_db_options o = {(size_t)4 << 30};
    if (fresh)
        bench_rm_rf(path);
    if (ads_db_open_ex(db, path, fresh ? ADS_DB_CREATE | ADS_DB_NOSYNC : ADS_DB_NOSYNC, &o, &err))
        return bench_fail(path, err.message);
    if (!fresh)
        return 0;
    ads_arena *a = ads_arena_new();
    const ads_record *r;
    const char *decl = "[ AdType = \"Type\"; ForType = \"Machine\"; KeyAttributes = { \"Name\" } ]";
    ads_txn *txn;
    int rc = ads_record_parse(&r, a, decl, strlen(decl), &err) ||
             ads_txn_begin(&txn, *db, 0, &err) || ads_txn_store(txn, r, NULL, &err) ||
             ads_txn_commit(txn, &err);
    ads_arena_free(a);
    return rc ? bench_fail("declaring Machine", err.message) : 0;
}

/* mdb_env_open's flags for the raw LMDB stores: MDB_NOSYNC, or
 * MDB_NOMETASYNC for P1's load with adstore's sync. */
static unsigned lmdb_flags = MDB_NOSYNC;

static int lmdb_open_store(MDB_env **env, MDB_dbi *dbi, const char *path, bool fresh)
{
    if (fresh) {
        bench_rm_rf(path);
        mkdir(path, 0700);
    }
    MDB_txn *txn;
    int rc = mdb_env_create(env);
    if (!rc)
        rc = mdb_env_set_mapsize(*env, (size_t)4 << 30);
    if (!rc)
        rc = mdb_env_open(*env, path, lmdb_flags, 0600);
    if (!rc)
        rc = mdb_txn_begin(*env, NULL, 0, &txn);
    if (!rc) {
        rc = mdb_dbi_open(txn, NULL, 0, dbi);
        rc = rc ? rc : mdb_txn_commit(txn);
    }
    return rc ? bench_fail(path, mdb_strerror(rc)) : 0;
}

static int sql_exec(sqlite3 *db, const char *sql)
{
    char *msg = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        bench_fail(sql, msg ? msg : "sqlite error");
        sqlite3_free(msg);
        return -1;
    }
    return 0;
}

enum { SQL_READ, SQL_WRITE, SQL_FRESH };

/* A SQLite store for reading (the default page cache, as a user has it),
 * writing, or writing afresh (256 MB of page cache for writes). */
static int sql_open_store(sqlite3 **db, const char *path, int mode)
{
    bool fresh = mode == SQL_FRESH;
    if (fresh) {
        char p[1200];
        unlink(path);
        snprintf(p, sizeof p, "%s-wal", path);
        unlink(p);
        snprintf(p, sizeof p, "%s-shm", path);
        unlink(p);
    }
    if (sqlite3_open(path, db) != SQLITE_OK)
        return bench_fail(path, sqlite3_errmsg(*db));
    if (mode != SQL_READ && sql_exec(*db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; "
                                          "PRAGMA cache_size=-262144"))
        return -1;
    if (fresh && sql_exec(*db, "CREATE TABLE docs (type TEXT, key TEXT, doc TEXT, "
                               "PRIMARY KEY(type, key)) WITHOUT ROWID;"
                               "CREATE TABLE history (type TEXT, key TEXT, ts REAL, doc TEXT, "
                               "PRIMARY KEY(type, key, ts)) WITHOUT ROWID;"))
        return -1;
    return 0;
}

typedef struct paths {
    char ads[1100], lmdb[1100], sql[1100];
} paths;

static void make_paths(paths *p, const config *cfg, const char *scenario)
{
    snprintf(p->ads, sizeof p->ads, "%s/%s-adstore", cfg->dir, scenario);
    snprintf(p->lmdb, sizeof p->lmdb, "%s/%s-lmdb", cfg->dir, scenario);
    snprintf(p->sql, sizeof p->sql, "%s/%s-sqlite.db", cfg->dir, scenario);
}

/* ---- P1: bulk load ---- */

static int load_adstore(const char *path, uint64_t n, batch *bt, double *secs)
{
    ads_db *db;
    ads_bulk *b;
    ads_error err;
    ads_bulk_options opt = {.batch = BATCH, .backfill = false, .on_batch = NULL, .ctx = NULL};
    if (ads_open_store(&db, path, true))
        return -1;
    *secs = 0;
    if (ads_bulk_begin(&b, db, &opt, &err))
        return bench_fail("bulk", err.message);
    for (uint64_t first = 0; first < n; first += CHUNK) {
        size_t k = n - first < CHUNK ? (size_t)(n - first) : CHUNK;
        if (batch_make(bt, first, k, 0, false))
            return bench_fail("generating", "failed");
        double t0 = bench_now();
        for (size_t i = 0; i < k; i++)
            if (ads_bulk_add(b, bt->recs[i], &err))
                return bench_fail("bulk add", err.message);
        *secs += bench_now() - t0;
    }
    double t0 = bench_now();
    if (ads_bulk_end(b, &err))
        return bench_fail("bulk end", err.message);
    *secs += bench_now() - t0;
    ads_db_close(db);
    return 0;
}

static int load_lmdb(const char *path, uint64_t n, batch *bt, double *secs)
{
    MDB_env *env;
    MDB_dbi dbi;
    if (lmdb_open_store(&env, &dbi, path, true))
        return -1;
    *secs = 0;
    for (uint64_t first = 0; first < n; first += BATCH) {
        uint64_t end = n - first < BATCH ? n : first + BATCH;
        double t0 = bench_now();
        MDB_txn *txn;
        int rc = mdb_txn_begin(env, NULL, 0, &txn);
        *secs += bench_now() - t0;
        for (uint64_t c = first; c < end && !rc; c += CHUNK) {
            size_t k = end - c < CHUNK ? (size_t)(end - c) : CHUNK;
            if (batch_make(bt, c, k, 0, false))
                return bench_fail("generating", "failed");
            t0 = bench_now();
            for (size_t i = 0; i < k && !rc; i++) {
                MDB_val key = {bt->key_off[i + 1] - bt->key_off[i], bt->keys.p + bt->key_off[i]};
                MDB_val val = {bt->pack_off[i + 1] - bt->pack_off[i],
                               bt->packs.p + bt->pack_off[i]};
                rc = mdb_put(txn, dbi, &key, &val, load_order ? 0 : MDB_APPEND);
            }
            *secs += bench_now() - t0;
        }
        t0 = bench_now();
        rc = rc ? rc : mdb_txn_commit(txn);
        if (rc)
            return bench_fail("lmdb load", mdb_strerror(rc));
        *secs += bench_now() - t0;
    }
    double t0 = bench_now();
    mdb_env_sync(env, 1);
    *secs += bench_now() - t0;
    mdb_env_close(env);
    return 0;
}

/* load_lmdb with each batch's commit flushing its pages (MDB_NOMETASYNC),
 * as adstore's bulk load commits. */
static int load_lmdb_synced(const char *path, uint64_t n, batch *bt, double *secs)
{
    lmdb_flags = MDB_NOMETASYNC;
    int rc = load_lmdb(path, n, bt, secs);
    lmdb_flags = MDB_NOSYNC;
    return rc;
}

static int load_sqlite(const char *path, uint64_t n, batch *bt, double *secs)
{
    sqlite3 *db;
    sqlite3_stmt *st;
    if (sql_open_store(&db, path, SQL_FRESH))
        return -1;
    if (sqlite3_prepare_v2(db, "INSERT INTO docs VALUES ('Machine', ?, ?)", -1, &st, NULL))
        return bench_fail("sqlite prepare", sqlite3_errmsg(db));
    *secs = 0;
    for (uint64_t first = 0; first < n; first += BATCH) {
        uint64_t end = n - first < BATCH ? n : first + BATCH;
        double t0 = bench_now();
        if (sql_exec(db, "BEGIN"))
            return -1;
        *secs += bench_now() - t0;
        for (uint64_t c = first; c < end; c += CHUNK) {
            size_t k = end - c < CHUNK ? (size_t)(end - c) : CHUNK;
            if (batch_make(bt, c, k, 0, false))
                return bench_fail("generating", "failed");
            t0 = bench_now();
            for (size_t i = 0; i < k; i++) {
                sqlite3_bind_text(st, 1, bt->keys.p + bt->key_off[i] + 8,
                                  (int)(bt->key_off[i + 1] - bt->key_off[i] - 8), SQLITE_STATIC);
                sqlite3_bind_text(st, 2, bt->json.p + bt->json_off[i],
                                  (int)(bt->json_off[i + 1] - bt->json_off[i]), SQLITE_STATIC);
                if (sqlite3_step(st) != SQLITE_DONE)
                    return bench_fail("sqlite insert", sqlite3_errmsg(db));
                sqlite3_reset(st);
            }
            *secs += bench_now() - t0;
        }
        t0 = bench_now();
        if (sql_exec(db, "COMMIT"))
            return -1;
        *secs += bench_now() - t0;
    }
    sqlite3_finalize(st);
    double t0 = bench_now();
    sqlite3_close(db);
    *secs += bench_now() - t0;
    return 0;
}

/* ---- P2: updates ---- */

/* The three systems' update work, behind one loop. */
typedef struct updater {
    int (*begin)(void *ctx);
    int (*apply)(void *ctx, batch *bt, int round); /* the chunk's updates */
    int (*commit)(void *ctx);
    void *ctx;
} updater;

/* rounds x records updates, a transaction per BATCH, inputs a CHUNK at a time. */
static int run_updates(const updater *u, uint64_t records, int rounds, batch *bt, bool partial,
                       double *secs)
{
    *secs = 0;
    for (int r = 1; r <= rounds; r++) {
        for (uint64_t first = 0; first < records; first += BATCH) {
            uint64_t end = records - first < BATCH ? records : first + BATCH;
            double t0 = bench_now();
            if (u->begin(u->ctx))
                return -1;
            *secs += bench_now() - t0;
            for (uint64_t c = first; c < end; c += CHUNK) {
                size_t k = end - c < CHUNK ? (size_t)(end - c) : CHUNK;
                if (batch_make(bt, c, k, (uint64_t)r, partial))
                    return bench_fail("generating", "failed");
                t0 = bench_now();
                if (u->apply(u->ctx, bt, r))
                    return -1;
                *secs += bench_now() - t0;
            }
            t0 = bench_now();
            if (u->commit(u->ctx))
                return -1;
            *secs += bench_now() - t0;
        }
    }
    return 0;
}

typedef struct ads_upd {
    ads_db *db;
    ads_txn *txn;
} ads_upd;

static int ads_upd_begin(void *ctx)
{
    ads_upd *u = ctx;
    ads_error err;
    return ads_txn_begin(&u->txn, u->db, 0, &err) ? bench_fail("begin", err.message) : 0;
}

static int ads_upd_apply(void *ctx, batch *bt, int round)
{
    ads_upd *u = ctx;
    ads_error err;
    (void)round;
    for (size_t i = 0; i < bt->n; i++)
        if (ads_txn_store(u->txn, bt->recs[i], NULL, &err))
            return bench_fail("update", err.message);
    return 0;
}

static int ads_upd_commit(void *ctx)
{
    ads_upd *u = ctx;
    ads_error err;
    return ads_txn_commit(u->txn, &err) ? bench_fail("commit", err.message) : 0;
}

static int update_adstore(const char *path, uint64_t records, int rounds, batch *bt,
                          double *secs)
{
    ads_upd u = {NULL, NULL};
    double ignore;
    if (load_adstore(path, records, bt, &ignore) || ads_open_store(&u.db, path, false))
        return -1;
    updater up = {ads_upd_begin, ads_upd_apply, ads_upd_commit, &u};
    if (run_updates(&up, records, rounds, bt, true, secs))
        return -1;
    double t0 = bench_now();
    ads_db_close(u.db);
    *secs += bench_now() - t0;
    return 0;
}

typedef struct lmdb_upd {
    MDB_env *env;
    MDB_dbi dbi;
    MDB_txn *txn;
    bool history; /* each row under (key, version) too, as a store keeping history must */
} lmdb_upd;

static int lmdb_upd_begin(void *ctx)
{
    lmdb_upd *u = ctx;
    int rc = mdb_txn_begin(u->env, NULL, 0, &u->txn);
    return rc ? bench_fail("lmdb begin", mdb_strerror(rc)) : 0;
}

static int lmdb_upd_apply(void *ctx, batch *bt, int round)
{
    lmdb_upd *u = ctx;
    for (size_t i = 0; i < bt->n; i++) {
        size_t kl = bt->key_off[i + 1] - bt->key_off[i];
        char hk[80];
        MDB_val key = {kl, bt->keys.p + bt->key_off[i]};
        MDB_val val = {bt->pack_off[i + 1] - bt->pack_off[i], bt->packs.p + bt->pack_off[i]};
        int rc = mdb_put(u->txn, u->dbi, &key, &val, 0);
        if (!rc && u->history && kl + 9 <= sizeof hk) {
            /* and the row again under key ++ 0x00 ++ be64(version): a record's
             * rows side by side, as a store keeping history must file them */
            memcpy(hk, key.mv_data, kl);
            hk[kl] = 0;
            for (int b = 0; b < 8; b++)
                hk[kl + 1 + b] = (char)((uint64_t)round >> (56 - 8 * b));
            MDB_val hkey = {kl + 9, hk};
            rc = mdb_put(u->txn, u->dbi, &hkey, &val, 0);
        }
        if (rc)
            return bench_fail("lmdb update", mdb_strerror(rc));
    }
    return 0;
}

static int lmdb_upd_commit(void *ctx)
{
    lmdb_upd *u = ctx;
    int rc = mdb_txn_commit(u->txn);
    return rc ? bench_fail("lmdb commit", mdb_strerror(rc)) : 0;
}

static int update_lmdb(const char *path, uint64_t records, int rounds, batch *bt, bool history,
                       double *secs)
{
    lmdb_upd u;
    u.history = history;
    double ignore;
    if (load_lmdb(path, records, bt, &ignore) || lmdb_open_store(&u.env, &u.dbi, path, false))
        return -1;
    updater up = {lmdb_upd_begin, lmdb_upd_apply, lmdb_upd_commit, &u};
    if (run_updates(&up, records, rounds, bt, false, secs))
        return -1;
    double t0 = bench_now();
    mdb_env_sync(u.env, 1);
    mdb_env_close(u.env);
    *secs += bench_now() - t0;
    return 0;
}

typedef struct sql_upd {
    sqlite3 *db;
    sqlite3_stmt *hist, *upd;
} sql_upd;

static int sql_upd_begin(void *ctx)
{
    return sql_exec(((sql_upd *)ctx)->db, "BEGIN");
}

static int sql_upd_apply(void *ctx, batch *bt, int round)
{
    sql_upd *u = ctx;
    for (size_t i = 0; i < bt->n; i++) {
        const char *key = bt->keys.p + bt->key_off[i] + 8;
        int kl = (int)(bt->key_off[i + 1] - bt->key_off[i] - 8);
        sqlite3_bind_double(u->hist, 1, (double)round);
        sqlite3_bind_text(u->hist, 2, key, kl, SQLITE_STATIC);
        sqlite3_bind_text(u->upd, 1, bt->json.p + bt->json_off[i],
                          (int)(bt->json_off[i + 1] - bt->json_off[i]), SQLITE_STATIC);
        sqlite3_bind_text(u->upd, 2, key, kl, SQLITE_STATIC);
        if (sqlite3_step(u->hist) != SQLITE_DONE || sqlite3_step(u->upd) != SQLITE_DONE)
            return bench_fail("sqlite update", sqlite3_errmsg(u->db));
        sqlite3_reset(u->hist);
        sqlite3_reset(u->upd);
    }
    return 0;
}

static int sql_upd_commit(void *ctx)
{
    return sql_exec(((sql_upd *)ctx)->db, "COMMIT");
}

static int update_sqlite(const char *path, uint64_t records, int rounds, batch *bt, double *secs)
{
    sql_upd u;
    double ignore;
    if (load_sqlite(path, records, bt, &ignore) || sql_open_store(&u.db, path, SQL_WRITE))
        return -1;
    if (sqlite3_prepare_v2(u.db, "INSERT INTO history SELECT type, key, ?, doc FROM docs WHERE "
                                 "type = 'Machine' AND key = ?",
                           -1, &u.hist, NULL) ||
        sqlite3_prepare_v2(u.db, "UPDATE docs SET doc = ? WHERE type = 'Machine' AND key = ?", -1,
                           &u.upd, NULL))
        return bench_fail("sqlite prepare", sqlite3_errmsg(u.db));
    updater up = {sql_upd_begin, sql_upd_apply, sql_upd_commit, &u};
    if (run_updates(&up, records, rounds, bt, false, secs))
        return -1;
    sqlite3_finalize(u.hist);
    sqlite3_finalize(u.upd);
    sqlite3_close(u.db);
    return 0;
}

/* ---- P3: constraint scan ---- */

static int scan_adstore(const char *path, uint64_t limit, uint64_t *count, double *secs)
{
    ads_db *db;
    ads_txn *txn;
    const ads_type *t;
    ads_scan *s;
    ads_row *r;
    ads_error err;
    const ads_expr *e;
    ads_arena *a = ads_arena_new();
    if (ads_open_store(&db, path, false))
        return -1;
    if (ads_expr_parse(&e, a, P3_WHERE, strlen(P3_WHERE), &err) ||
        ads_expr_prepare(&e, a, e, &err))
        return bench_fail("P3 constraint", err.message);
    double t0 = bench_now();
    if (ads_txn_begin(&txn, db, ADS_TXN_READONLY, &err) ||
        ads_txn_type(&t, txn, "Machine", 7, &err) || ads_scan_open(&s, txn, t, e, 0, &err))
        return bench_fail("scan", err.message);
    uint64_t n = 0;
    int rc;
    while ((rc = ads_scan_next(&r, s, &err)) == 1 && (limit == 0 || n < limit))
        n++;
    if (rc < 0)
        return bench_fail("scan", err.message);
    ads_scan_close(s);
    ads_txn_abort(txn);
    *secs = bench_now() - t0;
    *count = n;
    ads_db_close(db);
    ads_arena_free(a);
    return 0;
}

static bool field_is(const msgpack_object *k, const char *name, size_t n)
{
    return k->type == MSGPACK_OBJECT_STR && k->via.str.size == n &&
           strncasecmp(k->via.str.ptr, name, n) == 0;
}

/* The hand-written ceiling: decode each row with msgpack-c, find the four
 * fields, test them in C. */
static int scan_c(const char *path, uint64_t *count, double *secs)
{
    MDB_env *env;
    MDB_dbi dbi;
    MDB_txn *txn;
    MDB_cursor *c;
    MDB_val k, v;
    if (lmdb_open_store(&env, &dbi, path, false))
        return -1;
    msgpack_unpacked u;
    msgpack_unpacked_init(&u);
    uint64_t n = 0;
    double t0 = bench_now();
    if (mdb_txn_begin(env, NULL, MDB_RDONLY, &txn) || mdb_cursor_open(txn, dbi, &c))
        return bench_fail("lmdb scan", "cannot begin");
    for (int rc = mdb_cursor_get(c, &k, &v, MDB_FIRST); rc == 0;
         rc = mdb_cursor_get(c, &k, &v, MDB_NEXT)) {
        size_t off = 0;
        if (msgpack_unpack_next(&u, v.mv_data, v.mv_size, &off) != MSGPACK_UNPACK_SUCCESS ||
            u.data.type != MSGPACK_OBJECT_ARRAY || u.data.via.array.size != 2 ||
            u.data.via.array.ptr[1].type != MSGPACK_OBJECT_MAP)
            return bench_fail("lmdb scan", "bad row");
        const msgpack_object *map = &u.data.via.array.ptr[1];
        int64_t memory = 0, disk = 0;
        bool x86 = false, alice = false;
        for (uint32_t j = 0; j < map->via.map.size; j++) {
            const msgpack_object *key = &map->via.map.ptr[j].key, *val = &map->via.map.ptr[j].val;
            if (field_is(key, "Memory", 6) && val->type == MSGPACK_OBJECT_POSITIVE_INTEGER)
                memory = (int64_t)val->via.u64;
            else if (field_is(key, "Disk", 4) && val->type == MSGPACK_OBJECT_POSITIVE_INTEGER)
                disk = (int64_t)val->via.u64;
            else if (field_is(key, "Arch", 4) && val->type == MSGPACK_OBJECT_STR)
                x86 = val->via.str.size == 6 && strncasecmp(val->via.str.ptr, "X86_64", 6) == 0;
            else if (field_is(key, "Owner", 5) && val->type == MSGPACK_OBJECT_STR)
                alice = val->via.str.size == 5 && strncasecmp(val->via.str.ptr, "alice", 5) == 0;
        }
        n += memory > 1024 && x86 && (disk >= 100000 || alice);
    }
    mdb_cursor_close(c);
    mdb_txn_abort(txn);
    *secs = bench_now() - t0;
    *count = n;
    msgpack_unpacked_destroy(&u);
    mdb_env_close(env);
    return 0;
}

static int sql_count(const char *path, const char *sql, uint64_t *count, double *secs)
{
    sqlite3 *db;
    sqlite3_stmt *st;
    if (sql_open_store(&db, path, SQL_READ))
        return -1;
    double t0 = bench_now();
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) || sqlite3_step(st) != SQLITE_ROW)
        return bench_fail("sqlite", sqlite3_errmsg(db));
    *count = (uint64_t)sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    *secs = bench_now() - t0;
    sqlite3_close(db);
    return 0;
}

static int scan_sqlite(const char *path, uint64_t *count, double *secs)
{
    return sql_count(path,
                     "SELECT count(*) FROM docs WHERE type = 'Machine' AND "
                     "json_extract(doc, '$.Memory') > 1024 AND "
                     "json_extract(doc, '$.Arch') = 'X86_64' COLLATE NOCASE AND "
                     "(json_extract(doc, '$.Disk') >= 100000 OR "
                     "json_extract(doc, '$.Owner') = 'alice' COLLATE NOCASE)",
                     count, secs);
}

/* ---- P4: point lookups ---- */

static uint64_t *lookup_order(uint64_t n, uint64_t lookups)
{
    uint64_t *ix = malloc(lookups * sizeof *ix);
    for (uint64_t i = 0; ix && i < lookups; i++)
        ix[i] = bench_mix(i ^ UINT64_C(0x5555)) % n;
    return ix;
}

static int get_adstore(const char *path, uint64_t n, const uint64_t *ix, uint64_t lookups,
                       double *secs)
{
    ads_db *db;
    ads_txn *txn;
    const ads_type *t;
    ads_error err;
    ads_arena *a = ads_arena_new();
    char name[40];
    uint64_t acc = 0;
    (void)n;
    if (ads_open_store(&db, path, false))
        return -1;
    double t0 = bench_now();
    if (ads_txn_begin(&txn, db, ADS_TXN_READONLY, &err) || ads_txn_type(&t, txn, "Machine", 7, &err))
        return bench_fail("lookup", err.message);
    for (uint64_t i = 0; i < lookups; i++) {
        int len = snprintf(name, sizeof name, "node%07" PRIu64 ".example.org", ix[i]);
        ads_value key = ads_string(name, (size_t)len);
        ads_row row;
        if (ads_txn_get(txn, &row, t, &key, 1, a, &err) != 1)
            return bench_fail("lookup", "a record is missing");
        acc += row.len;
        if ((i & 1023) == 0)
            ads_arena_reset(a);
    }
    ads_txn_abort(txn);
    *secs = bench_now() - t0;
    sink = acc;
    ads_db_close(db);
    ads_arena_free(a);
    return 0;
}

static int get_lmdb(const char *path, const uint64_t *ix, uint64_t lookups, double *secs)
{
    MDB_env *env;
    MDB_dbi dbi;
    MDB_txn *txn;
    char key[48];
    uint64_t acc = 0;
    if (lmdb_open_store(&env, &dbi, path, false))
        return -1;
    double t0 = bench_now();
    if (mdb_txn_begin(env, NULL, MDB_RDONLY, &txn))
        return bench_fail("lmdb lookup", "cannot begin");
    for (uint64_t i = 0; i < lookups; i++) {
        int len = snprintf(key, sizeof key, "Machine/node%07" PRIu64 ".example.org", ix[i]);
        MDB_val k = {(size_t)len, key}, v;
        if (mdb_get(txn, dbi, &k, &v))
            return bench_fail("lmdb lookup", "a record is missing");
        acc += v.mv_size;
    }
    mdb_txn_abort(txn);
    *secs = bench_now() - t0;
    sink = acc;
    mdb_env_close(env);
    return 0;
}

static int get_sqlite(const char *path, const uint64_t *ix, uint64_t lookups, double *secs)
{
    sqlite3 *db;
    sqlite3_stmt *st;
    char name[40];
    uint64_t acc = 0;
    if (sql_open_store(&db, path, SQL_READ))
        return -1;
    double t0 = bench_now();
    if (sql_exec(db, "PRAGMA mmap_size=4294967296; BEGIN") ||
        sqlite3_prepare_v2(db, "SELECT doc FROM docs WHERE type = 'Machine' AND key = ?", -1, &st,
                           NULL))
        return bench_fail("sqlite", sqlite3_errmsg(db));
    for (uint64_t i = 0; i < lookups; i++) {
        int len = snprintf(name, sizeof name, "node%07" PRIu64 ".example.org", ix[i]);
        sqlite3_bind_text(st, 1, name, len, SQLITE_STATIC);
        if (sqlite3_step(st) != SQLITE_ROW)
            return bench_fail("sqlite lookup", "a record is missing");
        acc += (uint64_t)sqlite3_column_bytes(st, 0);
        sqlite3_reset(st);
    }
    sqlite3_finalize(st);
    if (sql_exec(db, "COMMIT"))
        return -1;
    *secs = bench_now() - t0;
    sink = acc;
    sqlite3_close(db);
    return 0;
}

/* ---- P5: count and sum grouped by Arch ---- */

typedef struct group {
    char arch[16];
    uint64_t count;
    int64_t sum;
} group;

static int group_adstore(const char *path, group *g, int *ng, double *secs)
{
    ads_db *db;
    ads_txn *txn;
    const ads_type *t;
    ads_scan *s;
    ads_row *r;
    ads_error err;
    if (ads_open_store(&db, path, false))
        return -1;
    *ng = 0;
    double t0 = bench_now();
    if (ads_txn_begin(&txn, db, ADS_TXN_READONLY, &err) ||
        ads_txn_type(&t, txn, "Machine", 7, &err) || ads_scan_open(&s, txn, t, NULL, 0, &err))
        return bench_fail("group", err.message);
    int rc;
    uint32_t harch = ads_name_hash("Arch", 4), hmem = ads_name_hash("Memory", 6);
    while ((rc = ads_scan_next(&r, s, &err)) == 1) {
        ads_view view = ads_row_view(r, NULL);
        ads_value arch, mem;
        const ads_expr *x = NULL, *y = NULL;
        if (view.ops->lookup(view.self, "Arch", 4, harch, NULL, &arch, &x) != 1 || x ||
            arch.type != ADS_STRING ||
            view.ops->lookup(view.self, "Memory", 6, hmem, NULL, &mem, &y) != 1 || y ||
            mem.type != ADS_INTEGER)
            return bench_fail("group", "a row lacks Arch or Memory");
        int i;
        for (i = 0; i < *ng; i++)
            if (strlen(g[i].arch) == arch.u.s.len &&
                strncasecmp(g[i].arch, arch.u.s.p, arch.u.s.len) == 0)
                break;
        if (i == *ng) {
            if (*ng == 8 || arch.u.s.len >= sizeof g[0].arch)
                return bench_fail("group", "too many groups");
            memcpy(g[i].arch, arch.u.s.p, arch.u.s.len);
            g[i].arch[arch.u.s.len] = 0;
            g[i].count = 0;
            g[i].sum = 0;
            (*ng)++;
        }
        g[i].count++;
        g[i].sum += mem.u.i;
    }
    if (rc < 0)
        return bench_fail("group", err.message);
    ads_scan_close(s);
    ads_txn_abort(txn);
    *secs = bench_now() - t0;
    ads_db_close(db);
    return 0;
}

static int group_sqlite(const char *path, group *g, int *ng, double *secs)
{
    sqlite3 *db;
    sqlite3_stmt *st;
    if (sql_open_store(&db, path, SQL_READ))
        return -1;
    *ng = 0;
    double t0 = bench_now();
    if (sqlite3_prepare_v2(db,
                           "SELECT json_extract(doc, '$.Arch') COLLATE NOCASE AS a, count(*), "
                           "sum(json_extract(doc, '$.Memory')) FROM docs WHERE type = 'Machine' "
                           "GROUP BY a",
                           -1, &st, NULL))
        return bench_fail("sqlite", sqlite3_errmsg(db));
    while (sqlite3_step(st) == SQLITE_ROW && *ng < 8) {
        snprintf(g[*ng].arch, sizeof g[0].arch, "%s", (const char *)sqlite3_column_text(st, 0));
        g[*ng].count = (uint64_t)sqlite3_column_int64(st, 1);
        g[*ng].sum = sqlite3_column_int64(st, 2);
        (*ng)++;
    }
    sqlite3_finalize(st);
    *secs = bench_now() - t0;
    sqlite3_close(db);
    return 0;
}

/* The same through the statement language: parse, plan, scan, group, and a
 * sink that receives the rows. */
typedef struct gsink {
    group *g;
    int n;
} gsink;

static int gsink_row(void *ctx, const ads_record *row, ads_error *err)
{
    gsink *s = ctx;
    ads_value arch, count, sum;
    (void)err;
    ads_arena *a = ads_arena_new();
    if (!a || ads_record_eval_attr(&arch, row, "Arch", 4, a) ||
        ads_record_eval_attr(&count, row, "Count", 5, a) ||
        ads_record_eval_attr(&sum, row, "Total", 5, a) || s->n == 8 || arch.type != ADS_STRING) {
        ads_arena_free(a);
        return ADS_EINVAL;
    }
    snprintf(s->g[s->n].arch, sizeof s->g[0].arch, "%.*s", (int)arch.u.s.len, arch.u.s.p);
    s->g[s->n].count = (uint64_t)count.u.i;
    s->g[s->n].sum = sum.u.i;
    s->n++;
    ads_arena_free(a);
    return 0;
}

static int group_statement(const char *path, group *g, int *ng, double *secs)
{
    ads_db *db;
    ads_query *q;
    ads_error err;
    if (ads_open_store(&db, path, false))
        return -1;
    if (ads_query_new(&q, db, &err))
        return bench_fail("query", err.message);
    gsink gs = {g, 0};
    ads_sink gsink_ = {NULL, gsink_row, NULL, &gs};
    const char *text =
        "SELECT count(*) AS Count, sum(Memory) AS Total, Arch FROM Machine GROUP BY Arch";
    double t0 = bench_now();
    if (ads_query_exec(q, text, strlen(text), &gsink_, NULL, NULL, &err))
        return bench_fail("P5 statement", err.message);
    *secs = bench_now() - t0;
    *ng = gs.n;
    ads_query_free(q);
    ads_db_close(db);
    return 0;
}

static bool same_groups(const group *a, int na, const group *b, int nb)
{
    if (na != nb)
        return false;
    for (int i = 0; i < na; i++) {
        int j;
        for (j = 0; j < nb; j++)
            if (strcasecmp(a[i].arch, b[j].arch) == 0)
                break;
        if (j == nb || a[i].count != b[j].count || a[i].sum != b[j].sum)
            return false;
    }
    return true;
}

/* ---- memory: a scan in a fresh process ---- */

static long anon_kb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "RssAnon:", 8) == 0)
            kb = strtol(line + 8, NULL, 10);
    if (f)
        fclose(f);
    return kb;
}

/* How much the anonymous memory (kB) of a forked process grew at most during
 * a P3 scan over the first `limit` rows (what it inherits from the bench is
 * not counted), and the process's peak resident set (kB: the inherited pages
 * and LMDB's mapped pages included). */
static int scan_memory(const char *path, uint64_t limit, long *anon, long *maxrss)
{
    int fd[2];
    if (pipe(fd))
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        close(fd[0]);
        ads_db *db;
        ads_txn *txn;
        const ads_type *t;
        ads_scan *s;
        ads_row *r;
        const ads_expr *e;
        ads_arena *a = ads_arena_new();
        long base = anon_kb(), peak = base;
        if (ads_db_open(&db, path, ADS_DB_READONLY, NULL) ||
            ads_expr_parse(&e, a, P3_WHERE, strlen(P3_WHERE), NULL) ||
            ads_expr_prepare(&e, a, e, NULL) ||
            ads_txn_begin(&txn, db, ADS_TXN_READONLY, NULL) ||
            ads_txn_type(&t, txn, "Machine", 7, NULL) ||
            ads_scan_open(&s, txn, t, e, ADS_SCAN_DELETED, NULL))
            _exit(1);
        uint64_t n = 0;
        while (n < limit && ads_scan_next(&r, s, NULL) == 1)
            if ((++n & 16383) == 0) {
                long k = anon_kb();
                peak = k > peak ? k : peak;
            }
        long k = anon_kb();
        peak = (k > peak ? k : peak) - base;
        if (write(fd[1], &peak, sizeof peak) != sizeof peak)
            _exit(1);
        _exit(0);
    }
    close(fd[1]);
    struct rusage ru;
    int status;
    ssize_t got = read(fd[0], anon, sizeof *anon);
    close(fd[0]);
    if (wait4(pid, &status, 0, &ru) < 0 || got != sizeof *anon || !WIFEXITED(status) ||
        WEXITSTATUS(status) != 0)
        return -1;
    *maxrss = ru.ru_maxrss;
    return 0;
}

/* ---- the scenarios ---- */

static int cmp_row(const char *id, const char *what, uint64_t ops, double *mine, const char *bname,
                   double *base, int reps, double rate, double ratio)
{
    double m = bench_median(mine, reps), b = bench_median(base, reps);
    bench_row(id, what, ops, m, bname, b, rate, ratio);
    return 0;
}

/* P3's rows over the stores at p: the scan in all three, counts compared. */
static int p3_rows(const paths *p, uint64_t n, int reps, const char *what, uint64_t *count)
{
    double mine[32], b1[32], b2[32];
    uint64_t c1 = 0, c2 = 0, c3 = 0;
    for (int r = 0; r < reps; r++)
        if (scan_adstore(p->ads, 0, &c1, &mine[r]) || scan_c(p->lmdb, &c2, &b1[r]) ||
            scan_sqlite(p->sql, &c3, &b2[r]))
            return -1;
    if (c1 != c2 || c1 != c3) {
        fprintf(stderr, "adstore-bench: P3 counts differ: adstore %" PRIu64 ", C %" PRIu64
                        ", SQLite %" PRIu64 "\n",
                c1, c2, c3);
        return -1;
    }
    cmp_row("P3", what, n, mine, "msgpack-c + C filter", b1, reps, 0, 0.7);
    cmp_row("P3", what, n, mine, "SQLite json_extract", b2, reps, 0, 3.0);
    *count = c1;
    return 0;
}

/* P4's rows over the stores at p: n lookups of random keys in all three. */
static int p4_rows(const paths *p, uint64_t n, int reps, const char *what)
{
    double mine[32], b1[32], b2[32];
    uint64_t *ix = lookup_order(n, n);
    if (!ix)
        return bench_fail("bench", "out of memory");
    int rc = 0;
    for (int r = 0; r < reps && !rc; r++)
        rc = get_adstore(p->ads, n, ix, n, &mine[r]) || get_lmdb(p->lmdb, ix, n, &b1[r]) ||
             get_sqlite(p->sql, ix, n, &b2[r]);
    free(ix);
    if (rc)
        return -1;
    cmp_row("P4", what, n, mine, "raw LMDB mdb_get", b1, reps, 0, 0.7);
    cmp_row("P4", what, n, mine, "SQLite primary key", b2, reps, 0, 5.0);
    return 0;
}

/* A fixed shuffle of 0..n-1: records arriving in no particular key order. */
static uint64_t *shuffled(uint64_t n)
{
    uint64_t *v = malloc(n * sizeof *v);
    for (uint64_t i = 0; v && i < n; i++)
        v[i] = i;
    for (uint64_t i = n; v && i > 1; i--) {
        uint64_t j = bench_mix(i ^ UINT64_C(0x51ed)) % i, t = v[i - 1];
        v[i - 1] = v[j];
        v[j] = t;
    }
    return v;
}

/* P1, P3 and P4 again, the same records loaded in shuffled key order: the
 * stores are laid out as an unordered load leaves them. */
static int shuffled_rows(const config *cfg, uint64_t n, int reps, batch *bt, bool p1)
{
    paths p;
    double mine[32], b1[32], b2[32], b3[32];
    uint64_t count;
    uint64_t *order = shuffled(n);
    if (!order)
        return bench_fail("bench", "out of memory");
    make_paths(&p, cfg, "shuffled");
    load_order = order;
    int rc = 0;
    for (int r = 0; r < (p1 ? reps : 1) && !rc; r++)
        rc = load_adstore(p.ads, n, bt, &mine[r]) ||
             (p1 && load_lmdb_synced(p.lmdb, n, bt, &b3[r])) ||
             load_lmdb(p.lmdb, n, bt, &b1[r]) || load_sqlite(p.sql, n, bt, &b2[r]);
    load_order = NULL;
    free(order);
    if (rc)
        return -1;
    if (p1) {
        cmp_row("P1", "bulk load, shuffled keys", n, mine, "LMDB put, NOMETASYNC", b3, reps, 0,
                0.5);
        cmp_row("P1", "bulk load, shuffled keys", n, mine, "LMDB put, NOSYNC", b1, reps, 0, 0);
        cmp_row("P1", "bulk load, shuffled keys", n, mine, "SQLite JSON insert", b2, reps, 0, 2.5);
    }
    if (bench_selected(cfg, "P3", "scan, shuffled") &&
        p3_rows(&p, n, cfg->reps, "scan, shuffled load", &count))
        return -1;
    if (bench_selected(cfg, "P4", "lookups, shuffled") &&
        p4_rows(&p, n, cfg->reps, "lookups, shuffled load"))
        return -1;
    if (!cfg->keep) {
        bench_rm_rf(p.ads);
        bench_rm_rf(p.lmdb);
        bench_rm_rf(p.sql);
    }
    return 0;
}

int bench_engine(const config *cfg)
{
    bool p1 = bench_selected(cfg, "P1", "bulk load"), p2 = bench_selected(cfg, "P2", "updates"),
         p3 = bench_selected(cfg, "P3", "constraint scan"),
         p4 = bench_selected(cfg, "P4", "point lookups"), p5 = bench_selected(cfg, "P5", "group by");
    if (!p1 && !p2 && !p3 && !p4 && !p5)
        return 0;
    uint64_t n = cfg->quick ? 50000 : 1000000;
    int reps = cfg->reps > 3 ? 3 : cfg->reps; /* loads are long: at most 3 */
    batch bt;
    paths p;
    double mine[32], b1[32], b2[32], b3[32];
    if (batch_init(&bt))
        return bench_fail("bench", "out of memory");
    make_paths(&p, cfg, "load");

    /* P1 (and the stores P3..P5 read) */
    for (int r = 0; r < reps; r++) {
        if (load_adstore(p.ads, n, &bt, &mine[r]) ||
            (p1 && load_lmdb_synced(p.lmdb, n, &bt, &b3[r])) ||
            load_lmdb(p.lmdb, n, &bt, &b1[r]) || load_sqlite(p.sql, n, &bt, &b2[r]))
            return -1;
        if (!p1 && !p2)
            break; /* one load is enough for P3..P5 */
    }
    if (p1) {
        int k = reps;
        cmp_row("P1", "bulk load (batch 10k)", n, mine, "LMDB append, NOMETASYNC", b3, k, 0,
                0.5);
        cmp_row("P1", "bulk load (batch 10k)", n, mine, "LMDB append, NOSYNC", b1, k, 0, 0);
        cmp_row("P1", "bulk load (batch 10k)", n, mine, "SQLite JSON insert", b2, k, 0, 2.5);
    }

    /* P2 */
    if (p2) {
        uint64_t recs = cfg->quick ? 2000 : 10000;
        int rounds = cfg->quick ? 25 : 100;
        paths q;
        make_paths(&q, cfg, "update");
        for (int r = 0; r < reps; r++)
            if (update_adstore(q.ads, recs, rounds, &bt, &mine[r]) ||
                update_lmdb(q.lmdb, recs, rounds, &bt, true, &b1[r]) ||
                update_lmdb(q.lmdb, recs, rounds, &bt, false, &b3[r]) ||
                update_sqlite(q.sql, recs, rounds, &bt, &b2[r]))
                return -1;
        uint64_t ops = recs * (uint64_t)rounds;
        cmp_row("P2", "updates (merge+history)", ops, mine, "raw LMDB put, rows kept", b1, reps,
                0, 0.4);
        cmp_row("P2", "updates (merge+history)", ops, mine, "raw LMDB overwrite", b3, reps, 0, 0);
        cmp_row("P2", "updates (merge+history)", ops, mine, "SQLite UPDATE+history", b2, reps, 0,
                2.0);
        bench_note("P2: every system keeps each record's rows findable by record: raw LMDB puts "
                   "each new row under the key and again under (key, version); SQLite's history "
                   "table is keyed (type, key, ts). \"raw LMDB overwrite\" keeps no history "
                   "(for scale only).");
        bench_rm_rf(q.ads);
        bench_rm_rf(q.lmdb);
        unlink(q.sql);
    }

    /* P3 */
    if (p3) {
        uint64_t c1;
        if (p3_rows(&p, n, cfg->reps, "constraint scan", &c1))
            return -1;
        bench_note("P3: %" PRIu64 " of %" PRIu64 " rows match `%s` (the same in all three).", c1,
                   n, P3_WHERE);
        long anon_small, rss_small, anon_big, rss_big;
        if (scan_memory(p.ads, n / 10, &anon_small, &rss_small) ||
            scan_memory(p.ads, n, &anon_big, &rss_big))
            return bench_fail("memory", "the scan process failed");
        bench_note("memory: P3 scan of %" PRIu64 " rows: anonymous memory grew by %ld kB (peak "
                   "RSS %ld kB); of %" PRIu64 " rows: by %ld kB (peak RSS %ld kB; RSS counts the "
                   "pages inherited from the bench and the map's file pages, which the kernel "
                   "may drop)",
                   n / 10, anon_small, rss_small, n, anon_big, rss_big);
    }

    /* P4 */
    if (p4 && p4_rows(&p, n, cfg->reps, "point lookups"))
        return -1;

    /* P5 */
    if (p5) {
        group ga[8], gs[8];
        int na = 0, ns = 0;
        int sreps = cfg->reps;
        group gq[8];
        int nq = 0;
        for (int r = 0; r < sreps; r++)
            if (group_adstore(p.ads, ga, &na, &mine[r]) ||
                group_statement(p.ads, gq, &nq, &b1[r]) || group_sqlite(p.sql, gs, &ns, &b2[r]))
                return -1;
        if (!same_groups(ga, na, gs, ns) || !same_groups(gq, nq, gs, ns))
            return bench_fail("P5", "adstore and SQLite disagree on the groups");
        cmp_row("P5", "group by (engine scan)", n, mine, "SQLite GROUP BY", b2, sreps, 0, 3.0);
        cmp_row("P5", "group by (statement)", n, b1, "SQLite GROUP BY", b2, sreps, 0, 3.0);
    }
    if ((p1 || p3 || p4) && shuffled_rows(cfg, n, reps, &bt, p1))
        return -1;
    batch_free(&bt);
    if (!cfg->keep) {
        bench_rm_rf(p.ads);
        bench_rm_rf(p.lmdb);
        unlink(p.sql);
    }
    return 0;
}
