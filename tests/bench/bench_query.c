/*
 * tests/bench/bench_query.c: scenario P6 of shared/spec/performance.md, a
 * timeline aggregation through the statement language: M machines sampled
 * every minute for a day (S samples each), then
 *
 *   SELECT avg@(sum(Memory)) AS Mem FROM Machine
 *   WHERE Role == "compute" && @timerange(day start, day end)
 *   GROUP BY Platform, @intervals(`1h`)
 *
 * measured as rows swept per second, next to SQLite computing the same
 * time-weighted hourly means with a window function over the same samples
 * (each sample's span runs to the machine's next sample: LEAD over
 * (name, ts); samples are on whole minutes, so no span crosses an hour and
 * the hourly mean is sum(Memory x span) / 3600 where every platform has a
 * compute machine all the time, as here). The two results are compared.
 */
#include <inttypes.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/engine.h"
#include "query/query.h"
#include "tests/bench/bench.h"

#define DAY0 1704067200.0 /* 2024-01-01T00:00:00Z */

static const char *const platforms[] = {"linux", "windows", "macos"};

static int64_t memory_of(uint64_t m, uint64_t i)
{
    uint64_t x = (m * 2654435761u) ^ (i * 40503u);
    x ^= x >> 13;
    return (int64_t)(1024 + (x % 4096));
}

static bool compute_role(uint64_t m)
{
    return m % 10 != 9; /* one machine in ten is a login node */
}

static int load_adstore(const char *dir, uint64_t machines, uint64_t samples)
{
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        return bench_fail(dir, "cannot remove");
    ads_db *db;
    ads_error err;
    ads_db_options o = {(size_t)4 << 30};
    if (ads_db_open_ex(&db, dir, ADS_DB_CREATE | ADS_DB_NOSYNC, &o, &err))
        return bench_fail(dir, err.message);
    ads_arena *a = ads_arena_new();
    const ads_record *r;
    const char *decl = "[ AdType = \"Type\"; ForType = \"Machine\"; KeyAttributes = { \"Name\" } ]";
    ads_txn *txn;
    if (ads_record_parse(&r, a, decl, strlen(decl), &err) || ads_txn_begin(&txn, db, 0, &err) ||
        ads_txn_store(txn, r, NULL, &err) || ads_txn_commit(txn, &err))
        return bench_fail("declaring Machine", err.message);
    ads_bulk *b;
    ads_bulk_options bo = {.batch = 10000, .backfill = false, .on_batch = NULL, .ctx = NULL};
    if (ads_bulk_begin(&b, db, &bo, &err))
        return bench_fail("bulk", err.message);
    char name[32];
    for (uint64_t m = 0; m < machines; m++) {
        snprintf(name, sizeof name, "m%05" PRIu64, m);
        for (uint64_t i = 0; i < samples; i++) {
            ads_arena_reset(a);
            ads_record_builder *rb;
            ads_value adtype = ads_string("Machine", 7), nm = ads_string(name, strlen(name));
            ads_value mem = ads_int(memory_of(m, i));
            ads_value role = compute_role(m) ? ads_string("compute", 7) : ads_string("login", 5);
            ads_value plat = ads_string(platforms[m % 3], strlen(platforms[m % 3]));
            ads_value ts = ads_abstime(DAY0 + 60.0 * (double)i, 0);
            if (ads_record_builder_new(&rb, a, NULL) ||
                ads_record_builder_add_value(rb, "AdType", 6, &adtype, NULL) ||
                ads_record_builder_add_value(rb, "Name", 4, &nm, NULL) ||
                ads_record_builder_add_value(rb, "Memory", 6, &mem, NULL) ||
                ads_record_builder_add_value(rb, "Role", 4, &role, NULL) ||
                ads_record_builder_add_value(rb, "Platform", 8, &plat, NULL) ||
                ads_record_builder_add_value(rb, "_Timestamp", 10, &ts, NULL) ||
                ads_bulk_add(b, ads_record_builder_finish(rb), &err))
                return bench_fail("P6 load", err.message);
        }
    }
    if (ads_bulk_end(b, &err))
        return bench_fail("P6 load", err.message);
    ads_arena_free(a);
    ads_db_close(db);
    return 0;
}

static int load_sqlite(const char *path, uint64_t machines, uint64_t samples)
{
    sqlite3 *db;
    sqlite3_stmt *st;
    unlink(path);
    if (sqlite3_open(path, &db) != SQLITE_OK ||
        sqlite3_exec(db,
                     "PRAGMA journal_mode=WAL; PRAGMA synchronous=OFF; PRAGMA cache_size=-262144;"
                     "CREATE TABLE samples (name TEXT, ts INTEGER, memory INTEGER, platform TEXT, "
                     "role TEXT, PRIMARY KEY(name, ts)) WITHOUT ROWID; BEGIN",
                     NULL, NULL, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(db, "INSERT INTO samples VALUES (?, ?, ?, ?, ?)", -1, &st, NULL))
        return bench_fail(path, sqlite3_errmsg(db));
    char name[32];
    for (uint64_t m = 0; m < machines; m++) {
        snprintf(name, sizeof name, "m%05" PRIu64, m);
        for (uint64_t i = 0; i < samples; i++) {
            sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
            sqlite3_bind_int64(st, 2, (int64_t)DAY0 + 60 * (int64_t)i);
            sqlite3_bind_int64(st, 3, memory_of(m, i));
            sqlite3_bind_text(st, 4, platforms[m % 3], -1, SQLITE_STATIC);
            sqlite3_bind_text(st, 5, compute_role(m) ? "compute" : "login", -1, SQLITE_STATIC);
            if (sqlite3_step(st) != SQLITE_DONE)
                return bench_fail("sqlite insert", sqlite3_errmsg(db));
            sqlite3_reset(st);
        }
    }
    sqlite3_finalize(st);
    if (sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
        return bench_fail("sqlite commit", sqlite3_errmsg(db));
    sqlite3_close(db);
    return 0;
}

/* Results: [platform][hour] means. */
typedef struct means {
    double v[3][24];
    int rows;
} means;

static int plat_index(const char *p, size_t n)
{
    for (int i = 0; i < 3; i++)
        if (strlen(platforms[i]) == n && strncmp(platforms[i], p, n) == 0)
            return i;
    return -1;
}

typedef struct msink {
    means *m;
} msink;

static int m_row(void *ctx, const ads_record *row, ads_error *err)
{
    means *m = ((msink *)ctx)->m;
    ads_arena *a = ads_arena_new();
    ads_value ts, plat, mem;
    (void)err;
    int rc = 0;
    if (!a || ads_record_eval_attr(&ts, row, "_Timestamp", 10, a) ||
        ads_record_eval_attr(&plat, row, "Platform", 8, a) ||
        ads_record_eval_attr(&mem, row, "Mem", 3, a) || plat.type != ADS_STRING ||
        ts.type != ADS_ABSTIME) {
        rc = ADS_EINVAL;
    } else {
        int p = plat_index(plat.u.s.p, plat.u.s.len);
        long h = lround((ts.u.abs.secs - DAY0) / 3600);
        if (p >= 0 && h >= 0 && h < 24)
            m->v[p][h] = mem.type == ADS_REAL ? mem.u.r : NAN;
        m->rows++;
    }
    ads_arena_free(a);
    return rc;
}

static int run_adstore(const char *dir, uint64_t samples, means *out, double *secs)
{
    ads_db *db;
    ads_query *q;
    ads_error err;
    if (ads_db_open(&db, dir, ADS_DB_READONLY, &err) || ads_query_new(&q, db, &err))
        return bench_fail(dir, err.message);
    char text[512];
    snprintf(text, sizeof text,
             "SELECT avg@(sum(Memory)) AS Mem FROM Machine WHERE Role == \"compute\" && "
             "@timerange(`2024-01-01T00:00:00Z`, absTime(%.0f)) GROUP BY Platform, "
             "@intervals(`1h`)",
             DAY0 + 60.0 * (double)samples);
    memset(out, 0, sizeof *out);
    msink ms = {out};
    ads_sink sink = {NULL, m_row, NULL, &ms};
    double t0 = bench_now();
    if (ads_query_exec(q, text, strlen(text), &sink, NULL, NULL, &err))
        return bench_fail("P6 statement", err.message);
    *secs = bench_now() - t0;
    ads_query_free(q);
    ads_db_close(db);
    return 0;
}

static int run_sqlite(const char *path, uint64_t samples, means *out, double *secs)
{
    sqlite3 *db;
    sqlite3_stmt *st;
    memset(out, 0, sizeof *out);
    if (sqlite3_open(path, &db) != SQLITE_OK)
        return bench_fail(path, sqlite3_errmsg(db));
    double t0 = bench_now();
    if (sqlite3_prepare_v2(db,
                           "SELECT platform, CAST((ts - ?1) / 3600 AS INTEGER) AS hour, "
                           "SUM(memory * (te - ts)) / 3600.0 FROM ("
                           "  SELECT platform, ts, memory, "
                           "         LEAD(ts, 1, ?2) OVER (PARTITION BY name ORDER BY ts) AS te "
                           "  FROM samples WHERE role = 'compute' AND ts >= ?1 AND ts < ?2) "
                           "GROUP BY platform, hour ORDER BY platform, hour",
                           -1, &st, NULL))
        return bench_fail("sqlite", sqlite3_errmsg(db));
    sqlite3_bind_int64(st, 1, (int64_t)DAY0);
    sqlite3_bind_int64(st, 2, (int64_t)DAY0 + 60 * (int64_t)samples);
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *p = (const char *)sqlite3_column_text(st, 0);
        int pi = plat_index(p, strlen(p));
        int64_t h = sqlite3_column_int64(st, 1);
        if (pi >= 0 && h >= 0 && h < 24)
            out->v[pi][h] = sqlite3_column_double(st, 2);
        out->rows++;
    }
    sqlite3_finalize(st);
    *secs = bench_now() - t0;
    sqlite3_close(db);
    return 0;
}

int bench_query(const config *cfg)
{
    if (!bench_selected(cfg, "P6", "timeline"))
        return 0;
    uint64_t machines = cfg->quick ? 100 : 1000, samples = cfg->quick ? 240 : 1440;
    char ads[1100], sql[1100];
    snprintf(ads, sizeof ads, "%s/timeline-adstore", cfg->dir);
    snprintf(sql, sizeof sql, "%s/timeline-sqlite.db", cfg->dir);
    if (load_adstore(ads, machines, samples) || load_sqlite(sql, machines, samples))
        return -1;
    double mine[32], base[32];
    means ma, mb;
    for (int r = 0; r < cfg->reps; r++)
        if (run_adstore(ads, samples, &ma, &mine[r]) || run_sqlite(sql, samples, &mb, &base[r]))
            return -1;
    int hours = (int)(samples / 60);
    for (int p = 0; p < 3; p++)
        for (int h = 0; h < hours; h++)
            if (!(fabs(ma.v[p][h] - mb.v[p][h]) <= 1e-9 * fabs(mb.v[p][h]) + 1e-9)) {
                fprintf(stderr,
                        "adstore-bench: P6 results differ at %s hour %d: adstore %.17g, SQLite "
                        "%.17g\n",
                        platforms[p], h, ma.v[p][h], mb.v[p][h]);
                return -1;
            }
    uint64_t rows = machines * samples;
    bench_row("P6", "timeline avg@(sum) by hour", rows, bench_median(mine, cfg->reps),
              "SQLite LEAD() window", bench_median(base, cfg->reps), 1.5e6, 0);
    bench_note("P6: %" PRIu64 " machines x %" PRIu64 " samples; %d result rows, the same in both "
               "(to 1e-9).",
               machines, samples, ma.rows);
    if (!cfg->keep) {
        char cmd[1200];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", ads);
        if (system(cmd) != 0)
            fprintf(stderr, "adstore-bench: could not remove %s\n", ads);
        unlink(sql);
    }
    return 0;
}
