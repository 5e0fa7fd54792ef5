/*
 * tests/bench/bench_history.c: scenario P10 (issue 12), a store fed a
 * snapshot every minute. A day of one-minute snapshots of M machine records
 * (S snapshots) in which, per snapshot, 5% of the machines change, 0.5%
 * vanish and as many appear (1% appear or vanish; a vanished machine may come
 * back later), under a 6 hour retention:
 *
 *   adstore  each snapshot one bulk load of each machine's attributes in
 *            arrays (ads_bulk_add_values; backfill: its records dated at the
 *            snapshot's minute, the store's clock set there too) with a
 *            snapshot sync whose deletions, dated at the snapshot, are made in
 *            the same transaction (on_batch); unchanged records append
 *            nothing; HistoryRetention = 6h trims as writes go;
 *   SQLite   what a competent user writes: WAL, prepared statements, one
 *            transaction per snapshot, a current table with an upsert that
 *            skips unchanged rows (ON CONFLICT DO UPDATE ... WHERE doc IS NOT
 *            excluded.doc) and a history row only for real changes, the
 *            machines that vanished found by the program (a hash set of the
 *            names seen) and deleted with a history row marking the end, and
 *            every hour (and after the last snapshot) a DELETE of the history
 *            older than 6 h that keeps each machine's row in effect at the cut.
 *
 * Durability is the same on both sides: every snapshot is on disk when its
 * load returns (adstore: ads_bulk_end syncs the store; SQLite:
 * synchronous=FULL, which syncs the WAL at each commit).
 *
 * Each load runs in a forked process, so its peak resident set and its CPU
 * seconds are its own. Reported: load time, rows kept (against the rows a
 * perfect store needs, counted by the generator: the row in effect at the
 * cut of each machine present then plus every real change after it), bytes
 * on disk at the end (SQLite after a final checkpoint) and after compaction
 * (ads_db_compact; VACUUM), peak RSS, and the time of the hourly
 * avg@(sum(Memory)) over the retained window. That answer is checked against
 * a second adstore store that keeps every row (KeepUnchangedRows, no
 * retention) and against SQLite's (LEAD() over each machine's history, spans
 * clipped to the hours): all three must agree to 1e-9 or the run fails.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "engine/engine.h"
#include "query/query.h"
#include "tests/bench/bench.h"

#define MAX_HOURS 48

/* ---- the day: machines and their changes, the same in every process ---- */

/* The size of a run: machines, snapshots, and the retention in seconds. */
typedef struct p10_size {
    size_t machines, snaps;
    int retention;
    double day0; /* the first snapshot (the last is a minute before the bench began) */
} p10_size;

typedef struct mach {
    bool present;
    uint8_t state, activity;
    uint16_t load; /* LoadAvg in hundredths */
    uint32_t memory, disk, cpus;
    uint32_t touched; /* the last snapshot that changed it (+1) */
    /* its name and host, made once: an agent has them as strings (made for
     * each record they were 2,000 of adstore's 14,000 instructions a record,
     * more than the store's look-up of the record) */
    char name[40], host[32];
    uint8_t name_len, host_len;
} mach;

typedef struct day {
    size_t machines, slots, snaps;
    int retention;
    double day0;
    mach *m;
    uint32_t *order; /* the order records come in (a fixed shuffle, not key order) */
    uint64_t rng;
    uint32_t *events;  /* per snapshot: changes, appearances and vanishings */
    uint32_t *present; /* per snapshot: machines present */
} day;

static const char *const states[] = {"Unclaimed", "Claimed", "Owner", "Matched"};
static const char *const activities[] = {"Idle", "Busy", "Suspended", "Retiring"};

static uint64_t day_rand(day *d)
{
    return bench_mix(d->rng++);
}

static void machine_new(day *d, mach *m)
{
    uint64_t h = day_rand(d);
    m->present = true;
    m->memory = (uint32_t)(1024 * (1 + h % 64));
    m->disk = (uint32_t)(100000 + (h >> 8) % 900000);
    m->cpus = (uint32_t)(1 + (h >> 28) % 32);
    m->state = (uint8_t)((h >> 36) % 4);
    m->activity = (uint8_t)((h >> 40) % 4);
    m->load = (uint16_t)((h >> 44) % 800);
}

/* A real change: the load always moves, and often the memory and state. */
static void machine_change(day *d, mach *m)
{
    uint64_t h = day_rand(d);
    m->load = (uint16_t)((m->load + 1 + h % 799) % 800);
    if ((h >> 12) % 2)
        m->memory = (uint32_t)(1024 * (1 + (h >> 16) % 64));
    if ((h >> 24) % 3 == 0)
        m->state = (uint8_t)((m->state + 1) % 4);
    m->activity = (uint8_t)((h >> 28) % 4);
}

static void day_free(day *d)
{
    free(d->m);
    free(d->order);
    free(d->events);
    free(d->present);
}

static int day_init(day *d, const p10_size *z)
{
    size_t snaps = z->snaps;
    memset(d, 0, sizeof *d);
    d->machines = z->machines;
    d->slots = z->machines + z->machines / 5;
    d->snaps = snaps;
    d->retention = z->retention;
    d->day0 = z->day0;
    d->rng = 0x5eed;
    d->m = calloc(d->slots, sizeof *d->m);
    d->order = malloc(d->slots * sizeof *d->order);
    d->events = calloc(snaps, sizeof *d->events);
    d->present = calloc(snaps, sizeof *d->present);
    if (!d->m || !d->order || !d->events || !d->present) {
        day_free(d);
        return bench_fail("P10", "out of memory");
    }
    for (size_t i = 0; i < d->slots; i++) {
        mach *m = &d->m[i];
        d->order[i] = (uint32_t)i;
        m->name_len = (uint8_t)snprintf(m->name, sizeof m->name,
                                        "slot1@node%05" PRIu32 ".pool.example.org", (uint32_t)i);
        m->host_len = (uint8_t)snprintf(m->host, sizeof m->host,
                                        "node%05" PRIu32 ".pool.example.org", (uint32_t)i);
    }
    for (size_t i = d->slots - 1; i > 0; i--) {
        size_t j = day_rand(d) % (i + 1);
        uint32_t t = d->order[i];
        d->order[i] = d->order[j];
        d->order[j] = t;
    }
    return 0;
}

/* A present (want true) or absent slot not yet touched by snapshot i. */
static mach *pick(day *d, size_t i, bool want)
{
    for (;;) {
        mach *m = &d->m[day_rand(d) % d->slots];
        if (m->present == want && m->touched != i + 1)
            return m;
    }
}

/* Move the day to snapshot i (from i - 1; snapshot 0 is the first
 * machines slots, all new). */
static void day_step(day *d, size_t i)
{
    uint32_t ev = 0;
    if (i == 0) {
        for (size_t k = 0; k < d->machines; k++)
            machine_new(d, &d->m[k]);
        ev = (uint32_t)d->machines;
    } else {
        size_t changes = d->machines / 20, moves = d->machines / 200;
        for (size_t k = 0; k < changes; k++) {
            mach *m = pick(d, i, true);
            machine_change(d, m);
            m->touched = (uint32_t)i + 1;
        }
        for (size_t k = 0; k < moves; k++) {
            mach *m = pick(d, i, true);
            m->present = false;
            m->touched = (uint32_t)i + 1;
        }
        for (size_t k = 0; k < moves; k++) {
            mach *m = pick(d, i, false);
            machine_new(d, m);
            m->touched = (uint32_t)i + 1;
        }
        ev = (uint32_t)(changes + 2 * moves);
    }
    d->events[i] = ev;
    uint32_t n = 0;
    for (size_t k = 0; k < d->slots; k++)
        n += d->m[k].present;
    d->present[i] = n;
}

static double snap_time(const day *d, size_t i)
{
    return d->day0 + 60.0 * (double)i;
}


/* ---- adstore ---- */

typedef struct fake_clock {
    int64_t ns;
} fake_clock;

static int64_t clock_now(void *ctx)
{
    return ((fake_clock *)ctx)->ns;
}

static void clock_sleep(void *ctx, int64_t ns)
{
    ((fake_clock *)ctx)->ns += ns;
}

typedef struct snap_job {
    ads_sync *sync;
    double ts;
    uint64_t deleted;
} snap_job;

/* Inside the snapshot's transaction: delete the machines it lacked. */
static int snap_deletions(void *ctx, ads_txn *txn, const ads_bulk_batch *b, ads_error *err)
{
    snap_job *j = ctx;
    const ads_type *t;
    (void)b;
    int rc = ads_txn_type(&t, txn, "Machine", 7, err);
    return rc ? rc : ads_sync_delete(j->sync, txn, t, j->ts, &j->deleted, err);
}

/* A machine's record, its attributes in arrays (ads_bulk_add_values: what an
 * agent that reads counters into a table does; no record is built). */
static int add_machine(ads_bulk *b, ads_arena *a, const mach *m, double ts, ads_error *err)
{
    ads_value v[12] = {
        ads_string("Machine", 7),
        ads_string(m->name, m->name_len),
        ads_string(m->host, m->host_len),
        ads_int(m->memory),
        ads_int(m->cpus),
        ads_int(m->disk),
        ads_string("X86_64", 6),
        ads_string("LINUX", 5),
        ads_string(states[m->state], strlen(states[m->state])),
        ads_string(activities[m->activity], strlen(activities[m->activity])),
        ads_real(m->load / 100.0),
        ads_abstime(ts, 0),
    };
    static const ads_str names[12] = {{"AdType", 6},   {"Name", 4},     {"Machine", 7},
                                      {"Memory", 6},   {"Cpus", 4},     {"Disk", 4},
                                      {"Arch", 4},     {"OpSys", 5},    {"State", 5},
                                      {"Activity", 8}, {"LoadAvg", 7},  {"_Timestamp", 10}};
    (void)a;
    return ads_bulk_add_values(b, names, v, 12, err);
}

static int declare(ads_db *db, const char *extra, ads_error *err)
{
    char text[256];
    snprintf(text, sizeof text,
             "[ AdType = \"Type\"; ForType = \"Machine\"; KeyAttributes = { \"Name\" }; %s ]",
             extra);
    ads_arena *a = ads_arena_new();
    const ads_record *r;
    ads_txn *txn = NULL;
    int rc = a ? 0 : ads_error_set(err, ADS_ENOMEM, "out of memory");
    if (!rc && !(rc = ads_record_parse(&r, a, text, strlen(text), err)) &&
        !(rc = ads_txn_begin(&txn, db, 0, err)) && !(rc = ads_txn_store(txn, r, NULL, err))) {
        rc = ads_txn_commit(txn, err);
        txn = NULL;
    }
    ads_txn_abort(txn);
    ads_arena_free(a);
    return rc;
}

/* One snapshot: a bulk load of its records, the deletions in its transaction. */
static int adstore_snapshot(ads_db *db, day *d, size_t i, ads_arena *a, ads_error *err)
{
    snap_job job = {NULL, snap_time(d, i), 0};
    ads_bulk *b = NULL;
    int rc = ads_sync_new(&job.sync, err);
    ads_bulk_options bo = {.batch = d->slots + 1, .backfill = true, .on_batch = snap_deletions,
                           .ctx = &job, .sync = job.sync};
    if (!rc)
        rc = ads_bulk_begin(&b, db, &bo, err);
    for (size_t k = 0; k < d->slots && !rc; k++) {
        uint32_t slot = d->order[k];
        if (d->m[slot].present)
            rc = add_machine(b, a, &d->m[slot], job.ts, err);
        ads_arena_reset(a);
    }
    if (rc)
        ads_bulk_discard(b);
    int erc = ads_bulk_end(b, rc ? NULL : err);
    ads_sync_free(job.sync);
    return rc ? rc : erc;
}

/* A machine that vanished at this snapshot, stored as deleted then (the
 * store keeping every row has no sync: the day goes in as one load). */
static int add_deletion(ads_bulk *b, ads_arena *a, const mach *m, double ts, ads_error *err)
{
    ads_value v[4] = {ads_string("Machine", 7), ads_string(m->name, m->name_len), ads_bool(true),
                      ads_abstime(ts, 0)};
    static const ads_str names[4] = {{"AdType", 6}, {"Name", 4}, {"_Deleted", 8},
                                     {"_Timestamp", 10}};
    (void)a;
    return ads_bulk_add_values(b, names, v, 4, err);
}

/* The snapshot at the cut of the retention the day ends with. */
static size_t cut_snapshot(const day *d)
{
    return d->snaps - 1 - (size_t)d->retention / 60;
}

/* The reference: every row kept (KeepUnchangedRows, no retention) from the
 * snapshot at the cut on, one bulk load committing a snapshot at a time,
 * the machines that vanished stored as deleted at their snapshot. What came
 * before that snapshot cannot change an answer from the cut on (every
 * machine present then has its row there, as it stood), so it is left out:
 * a quarter of the rows of the day. Not timed against anything: it answers
 * the query the store under retention must agree with. */
static int keep_all_day(ads_db *db, day *d, ads_arena *a, ads_error *err)
{
    ads_bulk *b = NULL;
    ads_bulk_options bo = {.batch = d->slots + 1, .backfill = true};
    int rc = ads_bulk_begin(&b, db, &bo, err);
    size_t from = cut_snapshot(d);
    for (size_t i = 0; i < d->snaps && !rc; i++) {
        day_step(d, i);
        if (i < from)
            continue;
        double ts = snap_time(d, i);
        for (size_t k = 0; k < d->slots && !rc; k++) {
            uint32_t slot = d->order[k];
            const mach *m = &d->m[slot];
            if (m->present)
                rc = add_machine(b, a, m, ts, err);
            else if (m->touched == i + 1 && i > from)
                rc = add_deletion(b, a, m, ts, err);
            ads_arena_reset(a);
        }
        if (!rc)
            rc = ads_bulk_flush(b, err);
    }
    if (rc)
        ads_bulk_discard(b);
    int erc = ads_bulk_end(b, rc ? NULL : err);
    return rc ? rc : erc;
}

/* The whole day into a new store at dir: a snapshot sync per minute under
 * the retention, or (keep_all) every row kept. */
static int load_adstore(const char *dir, const p10_size *z, bool keep_all)
{
    bench_rm_rf(dir);
    day d;
    ads_db *db = NULL;
    ads_error err;
    fake_clock fc = {(int64_t)(z->day0 * 1e9)};
    ads_clock clk = {clock_now, clock_sleep, &fc};
    ads_arena *a = ads_arena_new();
    if (!a || day_init(&d, z))
        return bench_fail("P10", "out of memory");
    char retention[64];
    snprintf(retention, sizeof retention, "HistoryRetention = relTime(%d)", z->retention);
    int rc = ads_db_open(&db, dir, ADS_DB_CREATE | ADS_DB_NOSYNC, &err);
    if (!rc) {
        ads_db_set_clock(db, &clk);
        rc = declare(db, keep_all ? "KeepUnchangedRows = true" : retention, &err);
    }
    if (!rc && keep_all)
        rc = keep_all_day(db, &d, a, &err);
    for (size_t i = 0; i < d.snaps && !rc && !keep_all; i++) {
        day_step(&d, i);
        fc.ns = (int64_t)(snap_time(&d, i) * 1e9);
        rc = adstore_snapshot(db, &d, i, a, &err);
    }
    ads_db_close(db);
    ads_arena_free(a);
    day_free(&d);
    return rc ? bench_fail("P10 adstore load", err.message) : 0;
}

/* ---- SQLite ---- */

/* The names the program has seen, with the snapshot that last had each. */
typedef struct name_set {
    struct name_ent {
        char name[64];
        uint32_t seen; /* snapshot + 1; 0: an empty slot */
        bool live;
    } *e;
    size_t cap;
} name_set;

static uint64_t fnv(const char *s)
{
    uint64_t h = UINT64_C(0xcbf29ce484222325);
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * UINT64_C(0x100000001b3);
    return h;
}

static struct name_ent *name_find(name_set *ns, const char *name)
{
    size_t i = fnv(name) & (ns->cap - 1);
    while (ns->e[i].seen && strcmp(ns->e[i].name, name) != 0)
        i = (i + 1) & (ns->cap - 1);
    return &ns->e[i];
}

typedef struct sql_load {
    sqlite3 *db;
    sqlite3_stmt *upsert, *hist, *del, *trim_old, *trim_deleted;
    name_set names;
} sql_load;

static int sql_exec(sqlite3 *db, const char *sql)
{
    char *msg = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) == SQLITE_OK)
        return 0;
    fprintf(stderr, "adstore-bench: P10 SQLite: %s: %s\n", sql, msg ? msg : "?");
    sqlite3_free(msg);
    return -1;
}

static int sql_step(sql_load *s, sqlite3_stmt *st)
{
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    return rc == SQLITE_DONE ? 0 : bench_fail("P10 SQLite", sqlite3_errmsg(s->db));
}

static void json_doc(char *out, size_t cap, const mach *m)
{
    snprintf(out, cap,
             "{\"Name\":\"%s\",\"Machine\":\"%s\",\"Memory\":%" PRIu32
             ",\"Cpus\":%" PRIu32 ",\"Disk\":%" PRIu32 ",\"Arch\":\"X86_64\",\"OpSys\":\"LINUX\","
             "\"State\":\"%s\",\"Activity\":\"%s\",\"LoadAvg\":%u.%02u}",
             m->name, m->host, m->memory, m->cpus, m->disk, states[m->state],
             activities[m->activity], m->load / 100u, m->load % 100u);
}

/* A machine of the snapshot: upserted, and a history row if it changed. */
static int sql_machine(sql_load *s, const mach *m, int64_t ts, size_t i)
{
    char doc[512];
    const char *name = m->name;
    json_doc(doc, sizeof doc, m);
    struct name_ent *e = name_find(&s->names, name);
    if (!e->seen)
        snprintf(e->name, sizeof e->name, "%s", name);
    e->seen = (uint32_t)i + 1;
    e->live = true;
    sqlite3_bind_text(s->upsert, 1, name, -1, SQLITE_STATIC);
    sqlite3_bind_text(s->upsert, 2, doc, -1, SQLITE_STATIC);
    if (sql_step(s, s->upsert))
        return -1;
    if (sqlite3_changes(s->db) == 0)
        return 0;
    sqlite3_bind_text(s->hist, 1, name, -1, SQLITE_STATIC);
    sqlite3_bind_int64(s->hist, 2, ts);
    sqlite3_bind_text(s->hist, 3, doc, -1, SQLITE_STATIC);
    return sql_step(s, s->hist);
}

/* The machines the snapshot lacked: deleted, their history ended. */
static int sql_vanished(sql_load *s, int64_t ts, size_t i)
{
    for (size_t k = 0; k < s->names.cap; k++) {
        struct name_ent *e = &s->names.e[k];
        if (!e->live || e->seen == i + 1)
            continue;
        e->live = false;
        sqlite3_bind_text(s->del, 1, e->name, -1, SQLITE_STATIC);
        sqlite3_bind_text(s->hist, 1, e->name, -1, SQLITE_STATIC);
        sqlite3_bind_int64(s->hist, 2, ts);
        sqlite3_bind_null(s->hist, 3);
        if (sql_step(s, s->del) || sql_step(s, s->hist))
            return -1;
    }
    return 0;
}

/* History older than the cut, keeping each machine's row in effect at the
 * cut (unless that row marks its end). */
static int sql_trim(sql_load *s, int64_t cut)
{
    sqlite3_bind_int64(s->trim_old, 1, cut);
    sqlite3_bind_int64(s->trim_deleted, 1, cut);
    return sql_step(s, s->trim_old) || sql_step(s, s->trim_deleted) ? -1 : 0;
}

static int sql_prepare(sql_load *s)
{
    static const char *const text[5] = {
        "INSERT INTO machine(name, doc) VALUES (?1, ?2) ON CONFLICT(name) DO UPDATE SET "
        "doc = excluded.doc WHERE doc IS NOT excluded.doc",
        "INSERT INTO history(name, ts, doc) VALUES (?1, ?2, ?3)",
        "DELETE FROM machine WHERE name = ?1",
        "DELETE FROM history WHERE ts < ?1 AND EXISTS (SELECT 1 FROM history AS h "
        "WHERE h.name = history.name AND h.ts > history.ts AND h.ts <= ?1)",
        "DELETE FROM history WHERE ts < ?1 AND doc IS NULL",
    };
    sqlite3_stmt **st[5] = {&s->upsert, &s->hist, &s->del, &s->trim_old, &s->trim_deleted};
    for (int i = 0; i < 5; i++)
        if (sqlite3_prepare_v2(s->db, text[i], -1, st[i], NULL) != SQLITE_OK)
            return bench_fail("P10 SQLite prepare", sqlite3_errmsg(s->db));
    return 0;
}

static int sql_day(sql_load *s, day *d)
{
    for (size_t i = 0; i < d->snaps; i++) {
        day_step(d, i);
        int64_t ts = (int64_t)snap_time(d, i);
        if (sql_exec(s->db, "BEGIN"))
            return -1;
        for (size_t k = 0; k < d->slots; k++) {
            uint32_t slot = d->order[k];
            if (d->m[slot].present && sql_machine(s, &d->m[slot], ts, i))
                return -1;
        }
        if (sql_vanished(s, ts, i))
            return -1;
        if ((i % 60 == 59 || i + 1 == d->snaps) && sql_trim(s, ts - d->retention))
            return -1;
        if (sql_exec(s->db, "COMMIT"))
            return -1;
    }
    return 0;
}

static int load_sqlite(const char *path, const p10_size *z)
{
    bench_rm_rf(path);
    sql_load s;
    day d;
    memset(&s, 0, sizeof s);
    if (day_init(&d, z))
        return -1;
    s.names.cap = 1;
    while (s.names.cap < 4 * d.slots)
        s.names.cap *= 2;
    s.names.e = calloc(s.names.cap, sizeof *s.names.e);
    int rc = s.names.e ? 0 : bench_fail("P10", "out of memory");
    if (!rc && sqlite3_open(path, &s.db) != SQLITE_OK)
        rc = bench_fail(path, sqlite3_errmsg(s.db));
    if (!rc)
        rc = sql_exec(s.db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;"
                            "CREATE TABLE machine (name TEXT PRIMARY KEY, doc TEXT NOT NULL) "
                            "WITHOUT ROWID;"
                            "CREATE TABLE history (name TEXT NOT NULL, ts INTEGER NOT NULL, "
                            "doc TEXT, PRIMARY KEY(name, ts)) WITHOUT ROWID");
    if (!rc)
        rc = sql_prepare(&s);
    if (!rc)
        rc = sql_day(&s, &d);
    sqlite3_stmt *all[5] = {s.upsert, s.hist, s.del, s.trim_old, s.trim_deleted};
    for (int i = 0; i < 5; i++)
        sqlite3_finalize(all[i]);
    if (sqlite3_close(s.db) != SQLITE_OK && !rc)
        rc = bench_fail(path, "cannot close");
    free(s.names.e);
    day_free(&d);
    return rc;
}

/* ---- a load in a process of its own ---- */

typedef struct measured {
    double wall, cpu;
    long peak_kb; /* peak resident set, above what the process started with */
} measured;

static long status_kb(const char *field)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    size_t n = strlen(field);
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, field, n) == 0)
            kb = strtol(line + n, NULL, 10);
    if (f)
        fclose(f);
    return kb;
}

/* Reset the process's peak resident set to its current one (Linux >= 4.0). */
static bool reset_peak(void)
{
    FILE *f = fopen("/proc/self/clear_refs", "w");
    bool ok = f && fputs("5", f) >= 0;
    if (f && fclose(f) != 0)
        ok = false;
    return ok;
}

typedef struct load_args {
    const char *path;
    const p10_size *size;
    int kind; /* 0 adstore with retention, 1 adstore keeping every row, 2 SQLite */
} load_args;

/* The child: the load, then its peak resident set (kB) above where it began
 * (the forked process starts with the pages it shares with this one), or
 * -1 if the kernel cannot reset the peak. */
static void child_load(const load_args *la, int fd)
{
    long base = status_kb("VmRSS:");
    bool reset = reset_peak();
    int rc = la->kind == 2 ? load_sqlite(la->path, la->size)
                           : load_adstore(la->path, la->size, la->kind == 1);
    long peak = reset && base >= 0 ? status_kb("VmHWM:") - base : -1;
    if (write(fd, &peak, sizeof peak) != (ssize_t)sizeof peak)
        rc = -1;
    _exit(rc ? 1 : 0);
}

static double cpu_of(const struct rusage *ru)
{
    return (double)ru->ru_utime.tv_sec + (double)ru->ru_utime.tv_usec / 1e6 +
           (double)ru->ru_stime.tv_sec + (double)ru->ru_stime.tv_usec / 1e6;
}

static int run_load(const load_args *la, measured *out)
{
    int fd[2];
    if (pipe(fd))
        return bench_fail("pipe", strerror(errno));
    fflush(NULL);
    double t0 = bench_now();
    pid_t pid = fork();
    if (pid < 0)
        return bench_fail("fork", strerror(errno));
    if (pid == 0) {
        close(fd[0]);
        child_load(la, fd[1]);
    }
    close(fd[1]);
    long peak = -1;
    ssize_t got = read(fd[0], &peak, sizeof peak);
    close(fd[0]);
    struct rusage ru;
    int status;
    if (wait4(pid, &status, 0, &ru) < 0)
        return bench_fail("wait4", strerror(errno));
    out->wall = bench_now() - t0;
    out->cpu = cpu_of(&ru);
    out->peak_kb = peak;
    if (got != (ssize_t)sizeof peak || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return bench_fail("P10", "a load failed");
    return 0;
}

/* ---- the hourly answer ---- */

typedef struct hourly {
    double w0;    /* the first hour */
    int hours;
    double v[MAX_HOURS];
    bool set[MAX_HOURS];
    int rows;
} hourly;

static int h_row(void *ctx, const ads_record *row, ads_error *err)
{
    hourly *h = ctx;
    ads_arena *a = ads_arena_new();
    ads_value ts, mem;
    int rc = 0;
    if (!a || ads_record_eval_attr(&ts, row, "_Timestamp", 10, a) ||
        ads_record_eval_attr(&mem, row, "Mem", 3, a) || ts.type != ADS_ABSTIME ||
        mem.type != ADS_REAL) {
        rc = ads_error_set(err, ADS_EINVAL, "P10: an unexpected result row");
    } else {
        long k = lround((ts.u.abs.secs - h->w0) / 3600);
        if (k >= 0 && k < h->hours) {
            h->v[k] = mem.u.r;
            h->set[k] = true;
        }
        h->rows++;
    }
    ads_arena_free(a);
    return rc;
}

static int query_adstore(const char *dir, hourly *h, double *secs)
{
    ads_db *db;
    ads_query *q = NULL;
    ads_error err;
    if (ads_db_open(&db, dir, ADS_DB_READONLY, &err))
        return bench_fail(dir, err.message);
    char text[512];
    snprintf(text, sizeof text,
             "SELECT avg@(sum(Memory)) AS Mem FROM Machine WHERE @timerange(absTime(%.0f), "
             "absTime(%.0f)) GROUP BY @intervals(`1h`)",
             h->w0, h->w0 + 3600.0 * h->hours);
    memset(h->set, 0, sizeof h->set);
    h->rows = 0;
    ads_sink sink = {NULL, h_row, NULL, h};
    double t0 = bench_now();
    int rc = ads_query_new(&q, db, &err);
    if (!rc)
        rc = ads_query_exec(q, text, strlen(text), &sink, NULL, NULL, &err);
    *secs = bench_now() - t0;
    ads_query_free(q);
    ads_db_close(db);
    return rc ? bench_fail("P10 statement", err.message) : 0;
}

static int query_sqlite(const char *path, hourly *h, double *secs)
{
    sqlite3 *db;
    sqlite3_stmt *st;
    memset(h->set, 0, sizeof h->set);
    h->rows = 0;
    if (sqlite3_open(path, &db) != SQLITE_OK)
        return bench_fail(path, sqlite3_errmsg(db));
    double t0 = bench_now();
    if (sqlite3_prepare_v2(
            db,
            "WITH RECURSIVE hours(h0) AS (SELECT ?1 UNION ALL SELECT h0 + 3600 FROM hours "
            "WHERE h0 + 3600 < ?2), "
            "spans AS (SELECT ts, LEAD(ts, 1, ?2) OVER (PARTITION BY name ORDER BY ts) AS te, "
            "json_extract(doc, '$.Memory') AS mem FROM history WHERE ts < ?2) "
            "SELECT h0, SUM(mem * (MIN(te, h0 + 3600) - MAX(ts, h0))) / 3600.0 "
            "FROM hours JOIN spans ON spans.ts < h0 + 3600 AND spans.te > h0 "
            "WHERE mem IS NOT NULL GROUP BY h0 ORDER BY h0",
            -1, &st, NULL) != SQLITE_OK) {
        bench_fail("P10 SQLite query", sqlite3_errmsg(db));
        sqlite3_close(db);
        return -1;
    }
    sqlite3_bind_int64(st, 1, (int64_t)h->w0);
    sqlite3_bind_int64(st, 2, (int64_t)(h->w0 + 3600.0 * h->hours));
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t k = (sqlite3_column_int64(st, 0) - (int64_t)h->w0) / 3600;
        if (k >= 0 && k < h->hours) {
            h->v[k] = sqlite3_column_double(st, 1);
            h->set[k] = true;
        }
        h->rows++;
    }
    sqlite3_finalize(st);
    *secs = bench_now() - t0;
    sqlite3_close(db);
    return rc == SQLITE_DONE ? 0 : bench_fail("P10 SQLite query", "stopped early");
}

static int same_answer(const hourly *a, const hourly *b, const char *an, const char *bn)
{
    for (int k = 0; k < a->hours; k++)
        if (!a->set[k] || !b->set[k] ||
            !(fabs(a->v[k] - b->v[k]) <= 1e-9 * fabs(b->v[k]) + 1e-9)) {
            fprintf(stderr,
                    "adstore-bench: P10 hourly avg@(sum(Memory)) differs at hour %d: %s %.17g%s, "
                    "%s %.17g%s\n",
                    k, an, a->v[k], a->set[k] ? "" : " (none)", bn, b->v[k],
                    b->set[k] ? "" : " (none)");
            return -1;
        }
    return 0;
}

/* ---- what is left at the end ---- */

typedef struct kept {
    uint64_t rows, records, deleted;
    uint64_t bytes, bytes_compact;
    uint64_t payload;      /* adstore: bytes of Machine's keys and rows (ads_db_type_stats) */
    uint64_t rows_compact; /* adstore: rows after compaction (its retention applied in full) */
} kept;

static int payload_of(void *ctx, const ads_type_stats *s)
{
    if (strcmp(s->name, "Machine") == 0)
        ((kept *)ctx)->payload = s->latest_bytes + s->history_bytes;
    return 0;
}

static uint64_t file_size(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 ? (uint64_t)sb.st_size : 0;
}

static int adstore_kept(const char *dir, kept *k, bool compact)
{
    ads_db *db;
    ads_txn *txn;
    const ads_type *t;
    ads_type_counts c;
    ads_error err;
    char path[1200];
    if (ads_db_open(&db, dir, ADS_DB_READONLY, &err))
        return bench_fail(dir, err.message);
    int rc = ads_txn_begin(&txn, db, ADS_TXN_READONLY, &err);
    if (!rc && !(rc = ads_txn_type(&t, txn, "Machine", 7, &err)))
        rc = ads_txn_type_counts(&c, txn, t, &err);
    ads_txn_abort(txn);
    if (!rc)
        rc = ads_db_type_stats(db, payload_of, NULL, k, &err);
    ads_db_close(db);
    if (rc)
        return bench_fail(dir, err.message);
    k->rows = c.records + c.history;
    k->records = c.records;
    k->deleted = c.deleted;
    snprintf(path, sizeof path, "%s/data.mdb", dir);
    k->bytes = file_size(path);
    k->bytes_compact = 0;
    if (!compact)
        return 0;
    ads_compact_result res;
    if (ads_db_compact(dir, NULL, &res, &err))
        return bench_fail("P10 compact", err.message);
    k->bytes_compact = res.bytes_after;
    k->rows_compact = k->rows - res.retention.rows;
    return 0;
}

static int sqlite_count(sqlite3 *db, const char *sql, uint64_t *out)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return bench_fail("P10 SQLite", sqlite3_errmsg(db));
    int rc = sqlite3_step(st);
    *out = rc == SQLITE_ROW ? (uint64_t)sqlite3_column_int64(st, 0) : 0;
    sqlite3_finalize(st);
    return rc == SQLITE_ROW ? 0 : bench_fail("P10 SQLite", sqlite3_errmsg(db));
}

static uint64_t sqlite_bytes(const char *path)
{
    char wal[1200];
    snprintf(wal, sizeof wal, "%s-wal", path);
    return file_size(path) + file_size(wal);
}

/* Counts and sizes of the SQLite store; the compacted size after VACUUM
 * (done last: the answer is read before). */
static int sqlite_kept(const char *path, kept *k, bool vacuum)
{
    sqlite3 *db;
    if (sqlite3_open(path, &db) != SQLITE_OK)
        return bench_fail(path, sqlite3_errmsg(db));
    int rc = sqlite_count(db, "SELECT count(*) FROM history", &k->rows);
    if (!rc)
        rc = sqlite_count(db, "SELECT count(*) FROM machine", &k->records);
    if (!rc)
        rc = sql_exec(db, "PRAGMA wal_checkpoint(TRUNCATE)");
    k->bytes = sqlite_bytes(path);
    if (!rc && vacuum) {
        rc = sql_exec(db, "VACUUM");
        if (!rc)
            rc = sql_exec(db, "PRAGMA wal_checkpoint(TRUNCATE)");
        k->bytes_compact = sqlite_bytes(path);
    }
    sqlite3_close(db);
    return rc;
}

/* ---- the scenario ---- */

/* The rows a perfect store keeps at the end: the row in effect at the cut
 * of each machine present then, and every change after the cut. */
static int rows_needed(const p10_size *z, uint64_t *need, uint64_t *changes)
{
    day d;
    if (day_init(&d, z))
        return -1;
    for (size_t i = 0; i < d.snaps; i++)
        day_step(&d, i);
    size_t cut_snap = cut_snapshot(&d);
    uint64_t n = 0;
    for (size_t i = cut_snap + 1; i < d.snaps; i++)
        n += d.events[i];
    *changes = n;
    *need = n + d.present[cut_snap];
    day_free(&d);
    return 0;
}

static int p10_loads(const config *cfg, const load_args *ret, const load_args *sql,
                     measured *ma, measured *mb)
{
    double wa[32], wb[32], ca[32], cb[32];
    long pa = 0, pb = 0;
    for (int r = 0; r < cfg->reps; r++) {
        measured x, y;
        if (run_load(ret, &x) || run_load(sql, &y))
            return -1;
        wa[r] = x.wall, ca[r] = x.cpu, wb[r] = y.wall, cb[r] = y.cpu;
        pa = x.peak_kb > pa ? x.peak_kb : pa;
        pb = y.peak_kb > pb ? y.peak_kb : pb;
    }
    ma->wall = bench_median(wa, cfg->reps);
    ma->cpu = bench_median(ca, cfg->reps);
    ma->peak_kb = pa;
    mb->wall = bench_median(wb, cfg->reps);
    mb->cpu = bench_median(cb, cfg->reps);
    mb->peak_kb = pb;
    return 0;
}

static int p10_answers(const config *cfg, const char *ret, const char *all, const char *sql,
                       hourly *h, double *qa, double *qb, double *qall)
{
    double wa[32], wb[32];
    hourly ha = *h, hall = *h, hs = *h;
    for (int r = 0; r < cfg->reps; r++)
        if (query_adstore(ret, &ha, &wa[r]) || query_sqlite(sql, &hs, &wb[r]))
            return -1;
    if (query_adstore(all, &hall, qall))
        return -1;
    *qa = bench_median(wa, cfg->reps);
    *qb = bench_median(wb, cfg->reps);
    if (same_answer(&ha, &hall, "adstore under retention", "adstore keeping every row") ||
        same_answer(&hs, &hall, "SQLite", "adstore keeping every row"))
        return -1;
    *h = ha;
    return 0;
}

/* Everything a run measured. */
typedef struct p10_result {
    measured ma, mb, mall;
    hourly h;
    double qa, qb, qall;
    uint64_t need, changes;
    kept ka, ks, kall;
} p10_result;

static void p10_report(const p10_size *z, const p10_result *r)
{
    uint64_t ops = (uint64_t)z->machines * z->snaps;
    bench_row("P10", "snapshot day load (wall)", ops, r->ma.wall, "SQLite upsert+history",
              r->mb.wall, 0, 2.0);
    bench_row("P10", "snapshot day load (CPU)", ops, r->ma.cpu, "SQLite upsert+history",
              r->mb.cpu, 0, 2.0);
    bench_row("P10", "hourly avg@ over window", (uint64_t)r->h.hours, r->qa,
              "SQLite LEAD() spans", r->qb, 0, 0);
    double rows_ratio = (double)r->ka.rows / (double)r->need;
    double bytes_ratio = (double)r->ka.bytes / (double)r->ks.bytes;
    bench_note("P10: %zu machines x %zu one-minute snapshots (5%% change, 1%% appear or vanish "
               "per snapshot), retention %d h; durable per snapshot on both sides (SQLite WAL, "
               "synchronous=FULL); ops = records offered.",
               z->machines, z->snaps, z->retention / 3600);
    bench_note("P10: load: adstore %.2f s wall, %.2f s CPU, peak RSS +%ld kB; SQLite %.2f s "
               "wall, %.2f s CPU, peak RSS +%ld kB; the store keeping every row %.2f s wall, "
               "%.2f s CPU.",
               r->ma.wall, r->ma.cpu, r->ma.peak_kb, r->mb.wall, r->mb.cpu, r->mb.peak_kb,
               r->mall.wall, r->mall.cpu);
    bench_note("P10: rows kept: adstore %" PRIu64 " (%" PRIu64 " records, %" PRIu64
               " deleted), SQLite history %" PRIu64 " (+%" PRIu64 " current); needed %" PRIu64
               " (%" PRIu64 " changes after the cut + the rows in effect at it): %.3fx "
               "(target within 10%%: %s); every row kept: %" PRIu64 ".",
               r->ka.rows, r->ka.records, r->ka.deleted, r->ks.rows, r->ks.records, r->need,
               r->changes, rows_ratio, fabs(rows_ratio - 1) <= 0.10 ? "met" : "MISSED",
               r->kall.rows);
    bench_note("P10: bytes: adstore %" PRIu64 ", SQLite %" PRIu64 " (after a checkpoint): %.3fx "
               "(target <= 0.5x: %s); compacted: adstore %" PRIu64 ", SQLite VACUUM %" PRIu64
               " (%.3fx, adstore's retention applied in full first: %" PRIu64 " rows); adstore's "
               "keys and rows %" PRIu64 " bytes (%.0f a row: %.0f%% of the file, %.0f%% of the "
               "compacted one); SQLite %.0f bytes a row kept; the store keeping every row: %" PRIu64
               ".",
               r->ka.bytes, r->ks.bytes, bytes_ratio, bytes_ratio <= 0.5 ? "met" : "MISSED",
               r->ka.bytes_compact, r->ks.bytes_compact,
               (double)r->ka.bytes_compact / (double)r->ks.bytes_compact, r->ka.rows_compact,
               r->ka.payload, (double)r->ka.payload / (double)r->ka.rows,
               100.0 * (double)r->ka.payload / (double)r->ka.bytes,
               100.0 * (double)r->ka.payload / (double)r->ka.bytes_compact,
               (double)r->ks.bytes / (double)(r->ks.rows + r->ks.records), r->kall.bytes);
    bench_note("P10: hourly avg@(sum(Memory)) over the %d whole hours of the retained window: "
               "adstore %.4f s, SQLite %.4f s, the store keeping every row %.4f s; the three "
               "answers agree (to 1e-9).",
               r->h.hours, r->qa, r->qb, r->qall);
}

static int p10_run(const config *cfg, const p10_size *z, const char *ret, const char *all,
                   const char *sql, p10_result *r)
{
    load_args la = {ret, z, 0}, lall = {all, z, 1}, ls = {sql, z, 2};
    if (p10_loads(cfg, &la, &ls, &r->ma, &r->mb) || run_load(&lall, &r->mall))
        return -1;
    /* the retained window: the whole hours from the cut to the last snapshot's end */
    double last = z->day0 + 60.0 * (double)(z->snaps - 1), cut = last - z->retention;
    memset(&r->h, 0, sizeof r->h);
    r->h.w0 = 3600.0 * ceil(cut / 3600.0); /* @intervals count hours from the epoch */
    r->h.hours = (int)floor((last + 60 - r->h.w0) / 3600.0);
    if (r->h.hours < 1 || r->h.hours > MAX_HOURS)
        return bench_fail("P10", "no whole hour in the retained window");
    if (p10_answers(cfg, ret, all, sql, &r->h, &r->qa, &r->qb, &r->qall) ||
        rows_needed(z, &r->need, &r->changes))
        return -1;
    memset(&r->ks, 0, sizeof r->ks);
    return adstore_kept(ret, &r->ka, true) || adstore_kept(all, &r->kall, false) ||
                   sqlite_kept(sql, &r->ks, true)
               ? -1
               : 0;
}

int bench_history(const config *cfg)
{
    if (!bench_selected(cfg, "P10", "snapshot day"))
        return 0;
    /* quick: a smoke run of a few seconds (3 hours of 200 machines, a 2 hour
     * retention); full: the day of issue 12, or the first ADS_BENCH_P10_HOURS
     * hours of it (7..24: the steady state under a 6 hour retention, in less
     * time on a busy machine) */
    const char *hours = getenv("ADS_BENCH_P10_HOURS");
    int full_hours = hours && *hours ? atoi(hours) : 24;
    if (full_hours < 7 || full_hours > 24)
        return bench_fail("ADS_BENCH_P10_HOURS", "must be 7..24");
    p10_size z = {cfg->quick ? 200 : 10000, cfg->quick ? 180 : (size_t)full_hours * 60,
                  cfg->quick ? 2 * 3600 : 6 * 3600, 0};
    /* the day ends now, so that compaction, which applies the retention at
     * the real clock's now, cuts about where the loads cut (later by the
     * minutes the run takes) */
    z.day0 = floor((double)time(NULL) / 60) * 60 - 60.0 * (double)z.snaps;
    char ret[1100], all[1100], sql[1100];
    snprintf(ret, sizeof ret, "%s/history-adstore", cfg->dir);
    snprintf(all, sizeof all, "%s/history-adstore-all", cfg->dir);
    snprintf(sql, sizeof sql, "%s/history-sqlite.db", cfg->dir);
    p10_result r;
    int rc = p10_run(cfg, &z, ret, all, sql, &r);
    if (!rc)
        p10_report(&z, &r);
    if (!cfg->keep) {
        bench_rm_rf(ret);
        bench_rm_rf(all);
        bench_rm_rf(sql);
    }
    return rc;
}
