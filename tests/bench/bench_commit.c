/*
 * tests/bench/bench_commit.c: scenario P14 (issue 17), durable commits of
 * one record each.
 *
 *   adstore  a store opened with its defaults (every commit synced); each
 *            commit one ads_db_write whose function stores one record
 *            (ads_txn_store of a 7-attribute Doc, keyed by Name, parsed from
 *            ClassAd text before the write);
 *   SQLite   what a competent user writes: WAL, synchronous=FULL (the WAL is
 *            synced at every commit), a table (name TEXT PRIMARY KEY, doc
 *            TEXT) WITHOUT ROWID, a prepared upsert (INSERT ... ON CONFLICT
 *            (name) DO UPDATE SET doc = excluded.doc) of the same record as
 *            JSON text, one statement per transaction (autocommit).
 *
 * Both sides run with one thread, then with P14_THREADS threads at once (a
 * connection each on SQLite's side, with a busy timeout; one store handle
 * shared by the threads on adstore's). Every commit stores the record
 * doc<k> for a key k drawn from P14_KEYS, so threads write both distinct and
 * the same records; every commit changes the record (its Seq). The rate is
 * commits per second of wall time (the disk's flushes are what is measured:
 * CPU time says little here). After each run the stores are checked: adstore
 * holds one record per key drawn and one history row for every other commit,
 * SQLite one row per key drawn.
 */
#include <inttypes.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "classad/classad.h"
#include "engine/engine.h"
#include "tests/bench/bench.h"

#define P14_KEYS 1000
#define P14_THREADS 8

/* The record of commit i of thread t: its key and its changing value. */
static unsigned p14_key(unsigned t, unsigned i)
{
    return (unsigned)(bench_mix(((uint64_t)t << 32) | i) % P14_KEYS);
}

/* One run: which side, how many threads and commits each. */
typedef struct p14_run {
    const char *path;
    unsigned threads, per_thread;
    ads_db *db;       /* adstore */
    int failed;       /* a thread's commit failed (the message is printed) */
    pthread_mutex_t lock;
} p14_run;

typedef struct p14_thread {
    p14_run *run;
    unsigned t;
} p14_thread;

static void p14_failed(p14_run *r, const char *what, const char *msg)
{
    pthread_mutex_lock(&r->lock);
    if (!r->failed++)
        bench_fail(what, msg);
    pthread_mutex_unlock(&r->lock);
}

/* ---- adstore ---- */

static int store_one(ads_txn *txn, void *ctx, ads_error *err)
{
    return ads_txn_store(txn, ctx, NULL, err);
}

static void *adstore_thread(void *arg)
{
    p14_thread *th = arg;
    p14_run *r = th->run;
    ads_arena *a = ads_arena_new();
    ads_error err;
    char text[512];
    for (unsigned i = 0; a && i < r->per_thread && !r->failed; i++) {
        unsigned k = p14_key(th->t, i);
        int n = snprintf(text, sizeof text,
                         "[ AdType = \"Doc\"; Name = \"doc%u\"; Seq = %u; Owner = \"user%u\"; "
                         "State = \"Claimed\"; Memory = %u; Cpus = %u ]",
                         k, th->t * 1000000u + i, k % 50, 1024u * (1 + k % 16), 1 + k % 8);
        const ads_record *rec;
        ads_arena_reset(a);
        if (ads_record_parse(&rec, a, text, (size_t)n, &err) ||
            ads_db_write(r->db, store_one, (void *)rec, &err)) {
            p14_failed(r, "P14 adstore commit", err.message);
            break;
        }
    }
    if (!a)
        p14_failed(r, "P14 adstore", "out of memory");
    ads_arena_free(a);
    return NULL;
}

static int adstore_open(p14_run *r)
{
    ads_error err;
    bench_rm_rf(r->path);
    if (ads_db_open(&r->db, r->path, ADS_DB_CREATE, &err))
        return bench_fail("P14 adstore open", err.message);
    ads_arena *a = ads_arena_new();
    const ads_record *decl;
    const char *t = "[ AdType = \"Type\"; ForType = \"Doc\"; KeyAttributes = { \"Name\" } ]";
    if (!a)
        ads_error_set(&err, ADS_ENOMEM, "out of memory");
    int rc = !a || ads_record_parse(&decl, a, t, strlen(t), &err) ||
             ads_db_write(r->db, store_one, (void *)decl, &err);
    ads_arena_free(a);
    if (rc) {
        ads_db_close(r->db);
        return bench_fail("P14 declaring Doc", err.message);
    }
    return 0;
}

/* One record per key drawn, one history row per other commit. */
static int adstore_check(ads_txn *txn, void *ctx, ads_error *err)
{
    const uint64_t *want = ctx; /* records, history */
    const ads_type *t;
    ads_type_counts c;
    int rc = ads_txn_type(&t, txn, "Doc", 3, err);
    if (!rc)
        rc = ads_txn_type_counts(&c, txn, t, err);
    if (!rc && (c.records != want[0] || c.history != want[1]))
        rc = ads_error_set(err, ADS_EINVAL,
                           "%" PRIu64 " records and %" PRIu64 " history rows, expected %" PRIu64
                           " and %" PRIu64,
                           c.records, c.history, want[0], want[1]);
    return rc;
}

/* ---- SQLite ---- */

static int sqlite_exec(sqlite3 *db, const char *sql)
{
    char *msg = NULL;
    int rc = sqlite3_exec(db, sql, NULL, NULL, &msg);
    if (rc != SQLITE_OK) {
        bench_fail(sql, msg ? msg : sqlite3_errmsg(db));
        sqlite3_free(msg);
        return -1;
    }
    return 0;
}

static sqlite3 *sqlite_connect(const char *path)
{
    sqlite3 *db = NULL;
    if (sqlite3_open(path, &db) != SQLITE_OK) {
        bench_fail("P14 SQLite open", db ? sqlite3_errmsg(db) : "out of memory");
        sqlite3_close(db);
        return NULL;
    }
    sqlite3_busy_timeout(db, 60000);
    if (sqlite_exec(db, "PRAGMA journal_mode=WAL") || sqlite_exec(db, "PRAGMA synchronous=FULL")) {
        sqlite3_close(db);
        return NULL;
    }
    return db;
}

static void *sqlite_thread(void *arg)
{
    p14_thread *th = arg;
    p14_run *r = th->run;
    sqlite3 *db = sqlite_connect(r->path);
    sqlite3_stmt *st = NULL;
    if (!db) {
        p14_failed(r, "P14 SQLite", "cannot connect");
        return NULL;
    }
    if (sqlite3_prepare_v2(db,
                           "INSERT INTO docs(name, doc) VALUES(?1, ?2) "
                           "ON CONFLICT(name) DO UPDATE SET doc = excluded.doc",
                           -1, &st, NULL) != SQLITE_OK) {
        p14_failed(r, "P14 SQLite prepare", sqlite3_errmsg(db));
        sqlite3_close(db);
        return NULL;
    }
    char name[32], doc[512];
    for (unsigned i = 0; i < r->per_thread && !r->failed; i++) {
        unsigned k = p14_key(th->t, i);
        int nn = snprintf(name, sizeof name, "doc%u", k);
        int nd = snprintf(doc, sizeof doc,
                          "{\"AdType\":\"Doc\",\"Name\":\"doc%u\",\"Seq\":%u,\"Owner\":\"user%u\","
                          "\"State\":\"Claimed\",\"Memory\":%u,\"Cpus\":%u}",
                          k, th->t * 1000000u + i, k % 50, 1024u * (1 + k % 16), 1 + k % 8);
        sqlite3_bind_text(st, 1, name, nn, SQLITE_STATIC);
        sqlite3_bind_text(st, 2, doc, nd, SQLITE_STATIC);
        if (sqlite3_step(st) != SQLITE_DONE) {
            p14_failed(r, "P14 SQLite upsert", sqlite3_errmsg(db));
            break;
        }
        sqlite3_reset(st);
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
    return NULL;
}

static int sqlite_create(const char *path)
{
    bench_rm_rf(path);
    sqlite3 *db = sqlite_connect(path);
    if (!db)
        return -1;
    int rc = sqlite_exec(db, "CREATE TABLE docs(name TEXT PRIMARY KEY, doc TEXT NOT NULL) "
                             "WITHOUT ROWID");
    sqlite3_close(db);
    return rc;
}

static int sqlite_check(const char *path, uint64_t want)
{
    sqlite3 *db = sqlite_connect(path);
    sqlite3_stmt *st = NULL;
    if (!db)
        return -1;
    int rc = sqlite3_prepare_v2(db, "SELECT count(*) FROM docs", -1, &st, NULL) == SQLITE_OK &&
                     sqlite3_step(st) == SQLITE_ROW
                 ? 0
                 : bench_fail("P14 SQLite count", sqlite3_errmsg(db));
    if (!rc && (uint64_t)sqlite3_column_int64(st, 0) != want)
        rc = bench_fail("P14 SQLite", "the table does not hold one row per key stored");
    sqlite3_finalize(st);
    sqlite3_close(db);
    return rc;
}

/* ---- runs ---- */

/* Records the run's commits leave: distinct keys drawn. */
static uint64_t p14_distinct(unsigned threads, unsigned per)
{
    static unsigned char seen[P14_KEYS];
    uint64_t n = 0;
    memset(seen, 0, sizeof seen);
    for (unsigned t = 0; t < threads; t++)
        for (unsigned i = 0; i < per; i++) {
            unsigned k = p14_key(t, i);
            n += !seen[k];
            seen[k] = 1;
        }
    return n;
}

/* Run the threads of one side; *secs: wall time of the commits. */
static int p14_threads(p14_run *r, void *(*fn)(void *), double *secs)
{
    pthread_t tid[P14_THREADS];
    p14_thread th[P14_THREADS];
    unsigned started = 0;
    double t0 = bench_now();
    for (unsigned t = 0; t < r->threads; t++) {
        th[t] = (p14_thread){r, t};
        if (pthread_create(&tid[t], NULL, fn, &th[t])) {
            p14_failed(r, "P14", "cannot start a thread");
            break;
        }
        started++;
    }
    for (unsigned t = 0; t < started; t++)
        pthread_join(tid[t], NULL);
    *secs = bench_now() - t0;
    return r->failed ? -1 : 0;
}

static int p14_adstore(p14_run *r, double *secs)
{
    if (adstore_open(r))
        return -1;
    int rc = p14_threads(r, adstore_thread, secs);
    uint64_t records = p14_distinct(r->threads, r->per_thread);
    uint64_t want[2] = {records, (uint64_t)r->threads * r->per_thread - records};
    ads_error err;
    if (!rc && ads_db_read(r->db, adstore_check, want, &err))
        rc = bench_fail("P14 adstore check", err.message);
    ads_db_close(r->db);
    bench_rm_rf(r->path);
    return rc;
}

static int p14_sqlite(p14_run *r, double *secs)
{
    if (sqlite_create(r->path))
        return -1;
    int rc = p14_threads(r, sqlite_thread, secs);
    if (!rc)
        rc = sqlite_check(r->path, p14_distinct(r->threads, r->per_thread));
    bench_rm_rf(r->path);
    return rc;
}

static void p14_range(const double *v, int n, double ops, double *lo, double *hi)
{
    *lo = *hi = ops / v[0];
    for (int i = 1; i < n; i++) {
        double x = ops / v[i];
        *lo = x < *lo ? x : *lo;
        *hi = x > *hi ? x : *hi;
    }
}

static int p14_row(const config *cfg, unsigned threads, unsigned per, const char *what,
                   const char *base)
{
    char ap[1100], sp[1100];
    snprintf(ap, sizeof ap, "%s/commit-adstore", cfg->dir);
    snprintf(sp, sizeof sp, "%s/commit-sqlite.db", cfg->dir);
    double am[31], sm[31];
    p14_run r = {.threads = threads, .per_thread = per};
    pthread_mutex_init(&r.lock, NULL);
    int rc = 0;
    for (int rep = 0; !rc && rep < cfg->reps; rep++) {
        r.failed = 0;
        r.path = ap;
        rc = p14_adstore(&r, &am[rep]);
        r.path = sp;
        if (!rc)
            rc = p14_sqlite(&r, &sm[rep]);
    }
    pthread_mutex_destroy(&r.lock);
    if (rc)
        return rc;
    double ops = (double)threads * per, alo, ahi, slo, shi;
    p14_range(am, cfg->reps, ops, &alo, &ahi);
    p14_range(sm, cfg->reps, ops, &slo, &shi);
    bench_row("P14", what, (uint64_t)ops, bench_median(am, cfg->reps), base,
              bench_median(sm, cfg->reps), 0, 1.0);
    bench_note("P14 %s: %.0f commits per run; commits/s over %d runs: adstore %.0f-%.0f, "
               "SQLite %.0f-%.0f.",
               what, ops, cfg->reps, alo, ahi, slo, shi);
    return 0;
}

int bench_commit(const config *cfg)
{
    if (!bench_selected(cfg, "P14", "durable commits"))
        return 0;
    unsigned one = cfg->quick ? 40 : 600, per = cfg->quick ? 10 : 200;
    char many[64], base[64];
    snprintf(many, sizeof many, "durable commits, %d thr", P14_THREADS);
    snprintf(base, sizeof base, "SQLite WAL FULL, %d conn", P14_THREADS);
    int rc = p14_row(cfg, 1, one, "durable commits, 1 thr", "SQLite WAL FULL upsert");
    return p14_row(cfg, P14_THREADS, per, many, base) || rc;
}
