/*
 * tests/bench/bench_real_peers.c: the peers of the realistic scenarios, set
 * up as a competent user would (issue 17).
 *
 * SQLite: a table (key TEXT, doc TEXT) holding each record's JSON (checked
 * and minified by json()), WAL with synchronous=NORMAL (commits do not wait
 * for the disk, checkpoints and the close sync it: adstore's import and bulk
 * load commit without syncing and sync once at the end), SQLite's default
 * page cache, and the one index a user adds for lookups by key, built after
 * the load (a UNIQUE index on key). The analytic queries scan, so no index
 * on json_extract(...) would serve them. The sqlite3 program imports in one
 * pass: `.import` (ascii mode: one line, one value) into a view whose INSTEAD
 * OF INSERT trigger stores each line as (json_extract(line, key), json(line)),
 * so no staging table is written and read again.
 *
 * DuckDB: node running tests/bench/duckdb/run.mjs with @duckdb/node-api, one
 * thread; CREATE TABLE ... AS SELECT * FROM read_ndjson(file) (types detected
 * from the data: one typed column per attribute); no index; queries on the
 * columns, written by COPY ... TO '/dev/stdout' (FORMAT csv, HEADER). Its
 * figures include starting node and loading the library (about 0.1 s of
 * CPU), as adstore's include starting the program and opening the store.
 */
#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/bench/bench_real.h"

#ifndef ADS_BENCH_DUCKDB_DIR
#define ADS_BENCH_DUCKDB_DIR "tests/bench/duckdb"
#endif

#define SQL_BATCH 10000

/* ---- the sqlite3 program ---- */

int peer_sqlite3_import(const real_set *s, const real_paths *p, bench_child *st)
{
    bench_rm_rf(p->sqlite);
    FILE *f = fopen(p->script, "w");
    if (!f)
        return bench_fail(p->script, strerror(errno));
    fprintf(f,
            "PRAGMA journal_mode=WAL;\n"
            "PRAGMA synchronous=NORMAL;\n"
            "CREATE TABLE %s (key TEXT NOT NULL, doc TEXT NOT NULL);\n"
            "CREATE TEMP VIEW incoming (line) AS SELECT NULL;\n"
            "CREATE TEMP TRIGGER incoming_line INSTEAD OF INSERT ON incoming BEGIN\n"
            "  INSERT INTO %s VALUES (json_extract(NEW.line, '$.%s'), json(NEW.line));\n"
            "END;\n"
            ".mode ascii\n"
            ".separator \"\\037\" \"\\n\"\n"
            ".import '%s' incoming\n"
            "CREATE UNIQUE INDEX %s_key ON %s (key);\n",
            s->table, s->table, s->key_attr, p->jsonl, s->table, s->table);
    if (fclose(f) != 0)
        return bench_fail(p->script, "cannot write");
    char *argv[] = {"sqlite3", "-batch", (char *)p->sqlite, NULL};
    return bench_child_run(argv, p->script, NULL, st);
}

int peer_sqlite3_query(const real_set *s, const real_paths *p, int q, bench_child *st)
{
    char *argv[] = {"sqlite3", "-batch", "-csv", "-header", (char *)p->sqlite,
                    (char *)s->q[q].sql, NULL};
    return bench_child_run(argv, NULL, p->out, st);
}

/* ---- the SQLite library ---- */

static int sql_exec(sqlite3 *db, const char *sql)
{
    char *msg = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) == SQLITE_OK)
        return 0;
    bench_fail(sql, msg ? msg : sqlite3_errmsg(db));
    sqlite3_free(msg);
    return -1;
}

/* Every line of the file, a transaction per SQL_BATCH. */
static int insert_lines(sqlite3 *db, sqlite3_stmt *st, FILE *in)
{
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    uint64_t n = 0;
    int rc = sql_exec(db, "BEGIN");
    while (!rc && (len = getline(&line, &cap, in)) > 0) {
        sqlite3_bind_text(st, 1, line, (int)(line[len - 1] == '\n' ? len - 1 : len),
                          SQLITE_STATIC);
        if (sqlite3_step(st) != SQLITE_DONE)
            rc = bench_fail("sqlite insert", sqlite3_errmsg(db));
        sqlite3_reset(st);
        if (!rc && ++n % SQL_BATCH == 0)
            rc = sql_exec(db, "COMMIT; BEGIN");
    }
    free(line);
    return rc ? rc : sql_exec(db, "COMMIT");
}

int peer_sqlite_c_load(const real_set *s, const real_paths *p, double *cpu)
{
    char sql[512];
    sqlite3 *db;
    sqlite3_stmt *st = NULL;
    bench_rm_rf(p->sqlite_c);
    double t0 = bench_cpu_now();
    FILE *in = fopen(p->jsonl, "r");
    if (!in)
        return bench_fail(p->jsonl, strerror(errno));
    int rc = sqlite3_open(p->sqlite_c, &db) != SQLITE_OK;
    snprintf(sql, sizeof sql,
             "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; "
             "CREATE TABLE %s (key TEXT NOT NULL, doc TEXT NOT NULL)",
             s->table);
    rc = rc || sql_exec(db, sql);
    snprintf(sql, sizeof sql, "INSERT INTO %s VALUES (json_extract(?1, '$.%s'), json(?1))",
             s->table, s->key_attr);
    rc = rc || sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK;
    rc = rc || insert_lines(db, st, in);
    snprintf(sql, sizeof sql, "CREATE UNIQUE INDEX %s_key ON %s (key)", s->table, s->table);
    rc = rc || sql_exec(db, sql);
    if (rc)
        bench_fail(p->sqlite_c, sqlite3_errmsg(db));
    sqlite3_finalize(st);
    sqlite3_close(db);
    fclose(in);
    *cpu = bench_cpu_now() - t0;
    return rc ? -1 : 0;
}

static void csv_row(FILE *out, sqlite3_stmt *st, int cols, bool header)
{
    for (int i = 0; i < cols; i++) {
        const char *v = header ? sqlite3_column_name(st, i)
                               : (const char *)sqlite3_column_text(st, i);
        fprintf(out, "%s%s", i ? "," : "", v ? v : "");
    }
    fputs("\r\n", out);
}

int peer_sqlite_c_query(const real_set *s, const real_paths *p, int q, const char *out,
                        double *cpu)
{
    sqlite3 *db;
    sqlite3_stmt *st = NULL;
    FILE *f = fopen(out, "w");
    if (!f)
        return bench_fail(out, strerror(errno));
    double t0 = bench_cpu_now();
    int rc = sqlite3_open_v2(p->sqlite_c, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK ||
             sqlite3_prepare_v2(db, s->q[q].sql, -1, &st, NULL) != SQLITE_OK;
    int cols = rc ? 0 : sqlite3_column_count(st), step;
    bool first = true;
    while (!rc && (step = sqlite3_step(st)) == SQLITE_ROW) {
        if (first)
            csv_row(f, st, cols, true);
        first = false;
        csv_row(f, st, cols, false);
    }
    if (!rc && step != SQLITE_DONE)
        rc = 1;
    if (rc)
        bench_fail(s->q[q].sql, sqlite3_errmsg(db));
    sqlite3_finalize(st);
    sqlite3_close(db);
    if (fclose(f) != 0)
        rc = 1;
    *cpu = bench_cpu_now() - t0;
    return rc ? -1 : 0;
}

/* ---- DuckDB ---- */

const char *peer_duck_missing(void)
{
    if (system("node --version > /dev/null 2>&1") != 0)
        return "node is not installed";
    if (access(ADS_BENCH_DUCKDB_DIR "/node_modules/@duckdb/node-api/package.json", R_OK) != 0)
        return "@duckdb/node-api is not installed (tools/setup.sh runs npm install in "
               "tests/bench/duckdb)";
    return NULL;
}

static int duck_run(const char *db, const char *sql, const char *out, bench_child *st)
{
    char *argv[] = {"node", ADS_BENCH_DUCKDB_DIR "/run.mjs", (char *)db, (char *)sql, NULL};
    return bench_child_run(argv, NULL, out, st);
}

int peer_duck_import(const real_set *s, const real_paths *p, bench_child *st)
{
    char sql[1400], wal[1200];
    bench_rm_rf(p->duck);
    snprintf(wal, sizeof wal, "%s.wal", p->duck);
    unlink(wal);
    snprintf(sql, sizeof sql, "CREATE TABLE %s AS SELECT * FROM read_ndjson('%s')", s->table,
             p->jsonl);
    return duck_run(p->duck, sql, NULL, st);
}

int peer_duck_query(const real_set *s, const real_paths *p, int q, bench_child *st)
{
    char sql[2048];
    snprintf(sql, sizeof sql, "COPY (%s) TO '/dev/stdout' (FORMAT csv, HEADER)", s->q[q].duck);
    return duck_run(p->duck, sql, p->out, st);
}
