/*
 * tests/bench/bench_real.c: the realistic scenarios of issue 17. For each
 * data set (HTCondor-like slot ads and job ads, bench_real_data.c: N records
 * in collector order, not key order, as JSON Lines):
 *
 *   RL   load: `adstore import` against the sqlite3 program and DuckDB (child
 *        processes: CPU seconds, wall seconds, peak resident set), and the
 *        engine's C API reading the same JSON in this process (a sorted load,
 *        ads_stage_*, into the bulk API) against the SQLite library doing the
 *        same;
 *   RQ1  a count with a 4-term constraint,
 *   RQ2  a filter returning 4 columns as csv,
 *   RQ3  GROUP BY 2 keys with 4 aggregates:
 *        through `adstore execute -f csv` on the imported store against
 *        `sqlite3 -csv` and DuckDB (child processes), and through
 *        ads_query_exec on the store the C API loaded against the SQLite library
 *        (in this process, CPU seconds).
 *
 * Every figure in the table is CPU seconds (user + system): a child's from
 * getrusage(RUSAGE_CHILDREN), this process's from its CPU clock; wall seconds,
 * peak memory and bytes on disk are noted under the table. Repetitions
 * alternate the systems. Every system's answer to each query is compared:
 * the count (Q1), the rows (Q2), the groups and the sum of their counts (Q3).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "classad/formats.h"
#include "engine/engine.h"
#include "query/query.h"
#include "tests/bench/bench_real.h"

#ifndef ADS_PROGRAM
#define ADS_PROGRAM "adstore"
#endif

#define SEED 17
#define FULL_RECORDS 1000000
#define QUICK_RECORDS 10000
#define LOAD_BATCH 10000
#define MAX_REPS 32

/* The figures of one system over the repetitions. */
typedef struct runs {
    double cpu[MAX_REPS], wall[MAX_REPS];
    long maxrss;
    int n;
} runs;

static void runs_add(runs *r, double cpu, double wall, long maxrss)
{
    r->cpu[r->n] = cpu;
    r->wall[r->n] = wall;
    r->n++;
    if (maxrss > r->maxrss)
        r->maxrss = maxrss;
}

static void runs_child(runs *r, const bench_child *c)
{
    runs_add(r, c->cpu, c->wall, c->maxrss);
}

static double cpu_median(runs *r)
{
    return bench_median(r->cpu, r->n);
}

static double wall_median(runs *r)
{
    return bench_median(r->wall, r->n);
}

/* ---- csv results ---- */

/* Field i of a csv line without quotes (fields here hold no commas). */
static int64_t csv_field(const char *line, int i)
{
    while (i-- > 0 && (line = strchr(line, ',')))
        line++;
    if (!line)
        return INT64_MIN;
    if (*line == '"')
        line++;
    return strtoll(line, NULL, 10);
}

int real_result_read(const char *file, int count_col, real_result *r)
{
    FILE *f = fopen(file, "r");
    if (!f)
        return bench_fail(file, strerror(errno));
    char *line = NULL;
    size_t cap = 0;
    bool header = true;
    memset(r, 0, sizeof *r);
    while (getline(&line, &cap, f) > 0) {
        if (header) {
            header = false;
            continue;
        }
        if (r->lines++ == 0)
            r->first = csv_field(line, 0);
        if (count_col >= 0)
            r->count_sum += csv_field(line, count_col);
    }
    free(line);
    fclose(f);
    return 0;
}

/* ---- adstore ---- */

static int declare_type(const char *store, const real_set *s)
{
    char stmt[256];
    bench_child ignore;
    snprintf(stmt, sizeof stmt,
             "STORE [ AdType = \"Type\"; ForType = \"%s\"; KeyAttributes = { \"%s\" } ]",
             s->type, s->key_attr);
    char *argv[] = {ADS_PROGRAM, "-d", (char *)store, "execute", stmt, NULL};
    return bench_child_run(argv, NULL, NULL, &ignore);
}

static int import_cmd(const real_set *s, const real_paths *p, bench_child *st)
{
    bench_rm_rf(p->imported);
    if (declare_type(p->imported, s))
        return -1;
    char *argv[] = {ADS_PROGRAM, "-d", (char *)p->imported, "import", "--type", (char *)s->type,
                    (char *)p->jsonl, NULL};
    return bench_child_run(argv, NULL, NULL, st);
}

static int execute_cmd(const real_set *s, const real_paths *p, int q, bench_child *st)
{
    char *argv[] = {ADS_PROGRAM, "-d", (char *)p->imported, "execute", "-f", "csv",
                    (char *)s->q[q].adstore, NULL};
    return bench_child_run(argv, NULL, p->out, st);
}

/* rec with AdType = type first, as `adstore import --type` stores it. */
static const ads_record *typed(const ads_record *rec, const char *type, ads_arena *a,
                               ads_error *err)
{
    ads_record_builder *b;
    ads_value v = ads_string(type, strlen(type));
    if (ads_record_builder_new(&b, a, err) ||
        ads_record_builder_add_value(b, "AdType", 6, &v, err))
        return NULL;
    for (size_t i = 0; i < ads_record_size(rec); i++) {
        ads_str n = ads_record_name(rec, i);
        if (ads_record_builder_add(b, n.p, n.len, ads_record_expr(rec, i), err))
            return NULL;
    }
    return ads_record_builder_finish(b);
}

static int stage_records(ads_stage *st, FILE *in, const char *type, ads_error *err)
{
    ads_json_reader *r;
    ads_arena *a = ads_arena_new();
    const ads_record *rec, *t;
    int rc = !a ? ADS_ENOMEM : ads_json_reader_new_file(&r, in, err);
    if (rc) {
        ads_arena_free(a);
        return rc;
    }
    while ((rc = ads_json_reader_next(&rec, NULL, r, a, err)) == 1) {
        if (!(t = typed(rec, type, a, err)) || ads_stage_add(st, t, 0, err)) {
            rc = -1;
            break;
        }
        ads_arena_reset(a);
    }
    ads_json_reader_free(r);
    ads_arena_free(a);
    return rc;
}

/* The stage's rows, merged in key order, into the bulk load. */
static int merge_rows(ads_stage *st, ads_bulk *b, ads_error *err)
{
    const void *row;
    size_t len;
    int64_t tag;
    int rc = ads_stage_merge(st, err);
    while (!rc && (rc = ads_stage_next(&row, &len, &tag, st, err)) == 1)
        rc = ads_bulk_add_staged(b, st, err);
    return rc;
}

/* The engine's C API from the JSON Lines file, in this process, as a user
 * loading records out of key order would: read, parse and type each record
 * into a sorted load (ads_stage_*, its runs beside the store), then store
 * its rows in key order through the bulk API; sync at the end. */
static int load_bulk(const real_set *s, const real_paths *p, double *cpu)
{
    ads_bulk *b;
    ads_stage *st = NULL;
    ads_error err;
    bench_rm_rf(p->bulk);
    if (declare_type(p->bulk, s))
        return -1;
    FILE *in = fopen(p->jsonl, "r");
    if (!in)
        return bench_fail(p->jsonl, strerror(errno));
    ads_bulk_options opt = {.batch = LOAD_BATCH};
    double t0 = bench_cpu_now();
    ads_db *db = NULL;
    int rc = ads_db_open(&db, p->bulk, ADS_DB_NOSYNC, &err);
    if (!rc && !(rc = ads_stage_begin(&st, db, p->bulk, 0, &err)) &&
        !(rc = stage_records(st, in, s->type, &err)) &&
        !(rc = ads_bulk_begin(&b, db, &opt, &err))) {
        rc = merge_rows(st, b, &err);
        if (rc)
            ads_bulk_discard(b);
        rc = ads_bulk_end(b, &err) || rc;
    }
    ads_stage_free(st);
    ads_db_close(db);
    *cpu = bench_cpu_now() - t0;
    fclose(in);
    return rc ? bench_fail("bulk load", err.message) : 0;
}

/* A statement through ads_query_exec on the bulk-loaded store, its rows
 * written as csv to out. */
static int query_capi(const real_set *s, const real_paths *p, int q, double *cpu)
{
    ads_db *db;
    ads_query *qy = NULL;
    ads_writer *w = NULL;
    ads_error err;
    FILE *f = fopen(p->out, "w");
    if (!f)
        return bench_fail(p->out, strerror(errno));
    const char *text = s->q[q].adstore;
    double t0 = bench_cpu_now();
    int rc = ads_db_open(&db, p->bulk, ADS_DB_READONLY, &err);
    if (!rc) {
        rc = ads_query_new(&qy, db, &err) || ads_writer_new(&w, ADS_FORMAT_CSV, f, &err);
        ads_sink sink = rc ? (ads_sink){0} : ads_writer_sink(w);
        rc = rc || ads_query_exec(qy, text, strlen(text), &sink, NULL, NULL, &err);
        ads_writer_free(w);
        ads_query_free(qy);
        ads_db_close(db);
    }
    rc = fclose(f) != 0 || rc;
    *cpu = bench_cpu_now() - t0;
    return rc ? bench_fail(text, err.message) : 0;
}

/* ---- one data set ---- */

typedef struct real_run {
    const config *cfg;
    const real_set *s;
    real_paths p;
    uint64_t n;
    const char *duck_missing; /* NULL: DuckDB runs */
    int load_reps, query_reps;
} real_run;

static void make_paths(real_run *r)
{
    const char *d = r->cfg->dir, *n = r->s->name;
    real_paths *p = &r->p;
    snprintf(p->jsonl, sizeof p->jsonl, "%s/real-%s.jsonl", d, n);
    snprintf(p->imported, sizeof p->imported, "%s/real-%s-imported", d, n);
    snprintf(p->bulk, sizeof p->bulk, "%s/real-%s-bulk", d, n);
    snprintf(p->sqlite, sizeof p->sqlite, "%s/real-%s-sqlite3.db", d, n);
    snprintf(p->sqlite_c, sizeof p->sqlite_c, "%s/real-%s-sqlite-c.db", d, n);
    snprintf(p->duck, sizeof p->duck, "%s/real-%s.duckdb", d, n);
    snprintf(p->script, sizeof p->script, "%s/real-%s-import.sql", d, n);
    snprintf(p->out, sizeof p->out, "%s/real-%s-out.csv", d, n);
}

static void label(char *buf, size_t cap, const real_run *r, const char *what)
{
    snprintf(buf, cap, "%s %s", r->s->name, what);
}

static int load_all(real_run *r)
{
    runs imp = {0}, sq3 = {0}, duck = {0}, bulk = {0}, sqc = {0};
    bench_child c;
    double cpu;
    for (int k = 0; k < r->load_reps; k++) {
        if (import_cmd(r->s, &r->p, &c))
            return -1;
        runs_child(&imp, &c);
        if (peer_sqlite3_import(r->s, &r->p, &c))
            return -1;
        runs_child(&sq3, &c);
        if (!r->duck_missing) {
            if (peer_duck_import(r->s, &r->p, &c))
                return -1;
            runs_child(&duck, &c);
        }
        if (load_bulk(r->s, &r->p, &cpu))
            return -1;
        runs_add(&bulk, cpu, cpu, 0);
        if (peer_sqlite_c_load(r->s, &r->p, &cpu))
            return -1;
        runs_add(&sqc, cpu, cpu, 0);
    }
    char what[64];
    if (bench_selected(r->cfg, "RL", "real")) {
        label(what, sizeof what, r, "import (CPU)");
        bench_row("RL", what, r->n, cpu_median(&imp), "sqlite3 .import, 1 pass", cpu_median(&sq3),
                  0, 1.5);
        if (!r->duck_missing)
            bench_row("RL", what, r->n, cpu_median(&imp), "DuckDB read_ndjson",
                      cpu_median(&duck), 0, 1.0);
        label(what, sizeof what, r, "C API sorted, JSON");
        bench_row("RL", what, r->n, cpu_median(&bulk), "SQLite C, json() insert",
                  cpu_median(&sqc), 0, 0);
    }
    char dw[64] = "", dm[64] = "", dd[64] = "";
    if (!r->duck_missing) {
        snprintf(dw, sizeof dw, ", DuckDB %.2f", wall_median(&duck));
        snprintf(dm, sizeof dm, ", DuckDB %ld", duck.maxrss);
        snprintf(dd, sizeof dd, ", DuckDB %" PRIu64, bench_disk_bytes(r->p.duck));
    }
    bool small = imp.maxrss * 10 <= sq3.maxrss && (r->duck_missing || imp.maxrss * 10 <= duck.maxrss);
    bench_note("RL %s: import wall s: adstore %.2f, sqlite3 %.2f%s; peak RSS kB: adstore %ld, "
               "sqlite3 %ld%s (target <= 0.1x of each: %s)",
               r->s->name, wall_median(&imp), wall_median(&sq3), dw, imp.maxrss, sq3.maxrss, dm,
               small ? "met" : "MISSED");
    uint64_t a = bench_disk_bytes(r->p.imported), sq = bench_disk_bytes(r->p.sqlite);
    bench_note("RL %s: bytes on disk: adstore imported %" PRIu64 ", bulk-loaded %" PRIu64
               ", sqlite3 %" PRIu64 ", SQLite C %" PRIu64 "%s; adstore/sqlite3 %.2fx (target "
               "<= 0.80x: %s)",
               r->s->name, a, bench_disk_bytes(r->p.bulk), sq, bench_disk_bytes(r->p.sqlite_c), dd,
               sq ? (double)a / (double)sq : 0, a * 10 <= sq * 8 ? "met" : "MISSED");
    return 0;
}

/* The answers of two systems to query q agree. */
static int same_answer(const real_run *r, int q, const real_result *a, const real_result *b,
                       const char *who)
{
    bool ok = a->lines == b->lines;
    if (q == 0)
        ok = ok && a->first == b->first;
    if (r->s->q[q].count_col >= 0)
        ok = ok && a->count_sum == b->count_sum && a->count_sum == (int64_t)r->n;
    if (ok)
        return 0;
    fprintf(stderr, "adstore-bench: %s %s: adstore gave %" PRIu64 " rows (first %" PRId64
                    ", counts %" PRId64 "), %s %" PRIu64 " (first %" PRId64 ", counts %" PRId64 ")\n",
            r->s->name, r->s->q[q].what, a->lines, a->first, a->count_sum, who, b->lines,
            b->first, b->count_sum);
    return -1;
}

/* Run a system's query once, read its answer, compare it with adstore's. */
static int check(const real_run *r, int q, const real_result *mine, const char *who)
{
    real_result got;
    if (real_result_read(r->p.out, r->s->q[q].count_col, &got))
        return -1;
    return same_answer(r, q, mine, &got, who);
}

static int query_once(real_run *r, int q, runs *ex, runs *sq3, runs *duck, runs *capi, runs *sqc,
                      real_result *res)
{
    bench_child c;
    double cpu;
    int cc = r->s->q[q].count_col;
    if (execute_cmd(r->s, &r->p, q, &c) || real_result_read(r->p.out, cc, res))
        return -1;
    runs_child(ex, &c);
    if (peer_sqlite3_query(r->s, &r->p, q, &c) || check(r, q, res, "sqlite3"))
        return -1;
    runs_child(sq3, &c);
    if (!r->duck_missing) {
        if (peer_duck_query(r->s, &r->p, q, &c) || check(r, q, res, "DuckDB"))
            return -1;
        runs_child(duck, &c);
    }
    if (query_capi(r->s, &r->p, q, &cpu) || check(r, q, res, "the C API"))
        return -1;
    runs_add(capi, cpu, cpu, 0);
    if (peer_sqlite_c_query(r->s, &r->p, q, r->p.out, &cpu) || check(r, q, res, "SQLite C"))
        return -1;
    runs_add(sqc, cpu, cpu, 0);
    return 0;
}

static const double target_sqlite[REAL_QUERIES] = {2.0, 2.0, 3.0};

static int query_all(real_run *r, int q)
{
    static const char *const ids[REAL_QUERIES] = {"RQ1", "RQ2", "RQ3"};
    runs ex = {0}, sq3 = {0}, duck = {0}, capi = {0}, sqc = {0};
    real_result res;
    if (!bench_selected(r->cfg, ids[q], "real"))
        return 0;
    for (int k = 0; k < r->query_reps; k++)
        if (query_once(r, q, &ex, &sq3, &duck, &capi, &sqc, &res))
            return -1;
    char what[64];
    label(what, sizeof what, r, "execute");
    bench_row(ids[q], what, r->n, cpu_median(&ex), "sqlite3 -csv", cpu_median(&sq3), 0,
              target_sqlite[q]);
    if (!r->duck_missing)
        bench_row(ids[q], what, r->n, cpu_median(&ex), "DuckDB 1 thread", cpu_median(&duck), 0,
                  q == 0 ? 1 / 1.5 : 0);
    label(what, sizeof what, r, "C API");
    bench_row(ids[q], what, r->n, cpu_median(&capi), "SQLite C API", cpu_median(&sqc), 0, 0);
    char dw[64] = "", dm[64] = "";
    if (!r->duck_missing) {
        snprintf(dw, sizeof dw, ", DuckDB %.3f", wall_median(&duck));
        snprintf(dm, sizeof dm, ", DuckDB %ld", duck.maxrss);
    }
    bench_note("%s %s %s: %" PRIu64 " result rows, the same in every system; wall s: execute "
               "%.3f, sqlite3 %.3f%s; peak RSS kB: execute %ld, sqlite3 %ld%s",
               ids[q], r->s->name, r->s->q[q].what, res.lines, wall_median(&ex),
               wall_median(&sq3), dw, ex.maxrss, sq3.maxrss, dm);
    return 0;
}

static void remove_files(const real_run *r)
{
    char wal[1200];
    snprintf(wal, sizeof wal, "%s.wal", r->p.duck);
    bench_rm_rf(r->p.imported);
    bench_rm_rf(r->p.bulk);
    bench_rm_rf(r->p.sqlite);
    bench_rm_rf(r->p.sqlite_c);
    bench_rm_rf(r->p.duck);
    unlink(wal);
    unlink(r->p.jsonl);
    unlink(r->p.script);
    unlink(r->p.out);
}

static int real_set_run(real_run *r)
{
    uint64_t bytes;
    make_paths(r);
    if (real_write_jsonl(r->s->kind, r->n, SEED, r->p.jsonl, &bytes))
        return -1;
    bench_note("R %s: %" PRIu64 " %s records, %" PRIu64 " bytes of JSON Lines (%" PRIu64
               " per record), in collector order (shuffled keys, seed %d)",
               r->s->name, r->n, r->s->type, bytes, bytes / (r->n ? r->n : 1), SEED);
    int rc = load_all(r);
    for (int q = 0; !rc && q < REAL_QUERIES; q++)
        rc = query_all(r, q);
    if (!r->cfg->keep)
        remove_files(r);
    return rc;
}

int bench_real(const config *cfg)
{
    if (!bench_selected(cfg, "RL", "real") && !bench_selected(cfg, "RQ", "real"))
        return 0;
    real_run r = {.cfg = cfg};
    r.n = cfg->quick ? QUICK_RECORDS : (uint64_t)FULL_RECORDS * (uint64_t)cfg->scale;
    const char *missing = peer_duck_missing();
    r.load_reps = cfg->reps > 3 ? 3 : cfg->reps;
    r.query_reps = cfg->reps;
    int rc = 0;
    for (int k = REAL_SLOTS; k <= REAL_JOBS; k++) {
        r.s = real_set_of((real_kind)k);
        /* node and libduckdb take about a second to start: a quick run (the
         * test suite's) starts them for the slot ads only */
        r.duck_missing = missing              ? missing
                         : cfg->quick && k == REAL_JOBS ? "--quick runs DuckDB on the slot ads only"
                                                        : NULL;
        if (r.duck_missing)
            bench_note("R %s: DuckDB rows skipped: %s", r.s->name, r.duck_missing);
        if (real_set_run(&r))
            rc = -1;
    }
    return rc;
}
