/*
 * tests/bench/bench_real.h: what the realistic scenarios share (issue 17):
 * the two data sets, the queries each system runs, and the child-process
 * runner that measures CPU, wall time and peak memory of a command.
 */
#ifndef ADS_BENCH_REAL_H
#define ADS_BENCH_REAL_H

#include <stdbool.h>
#include <stdint.h>

#include "tests/bench/bench.h"

/* ---- the data (bench_real_data.c) ---- */

typedef enum real_kind { REAL_SLOTS, REAL_JOBS } real_kind;

/* The three queries of each data set, as each system spells them. */
typedef struct real_query {
    const char *what;    /* the row's label */
    const char *adstore; /* a statement of the query language */
    const char *sql;     /* for SQLite: the JSON documents through json_extract */
    const char *duck;    /* for DuckDB: the typed columns read_ndjson made */
    int count_col;       /* Q3: the csv column holding each group's count (from 0); -1: none */
} real_query;

#define REAL_QUERIES 3

typedef struct real_set {
    real_kind kind;
    const char *name;     /* "slots", "jobs" */
    const char *type;     /* the adstore type */
    const char *key_attr; /* its key attribute */
    const char *table;    /* the SQL table */
    real_query q[REAL_QUERIES];
} real_set;

const real_set *real_set_of(real_kind kind);

/* Write n records of the kind as JSON Lines to path, in collector order (a
 * fixed shuffle of the keys, not key order); the same bytes for the same
 * (n, seed). *bytes gets the file's size. */
int real_write_jsonl(real_kind kind, uint64_t n, uint64_t seed, const char *path,
                     uint64_t *bytes);

/* ---- child processes (bench_child.c) ---- */

typedef struct bench_child {
    double wall;  /* seconds from fork to exit */
    double cpu;   /* user + system CPU seconds of the command (getrusage RUSAGE_CHILDREN) */
    long maxrss;  /* the command's peak resident set, KiB (/usr/bin/time's %M) */
} bench_child;

/*
 * Run argv with stdin from `in` and stdout to `out` (NULL: /dev/null) under
 * /usr/bin/time, which reports the peak resident set of the command alone
 * (not of this process's memory a fork would share). Fails with the
 * command's stderr shown if it exits non-zero.
 */
int bench_child_run(char *const argv[], const char *in, const char *out, bench_child *st);

/* Bytes allocated on disk by a file, or by every file under a directory. */
uint64_t bench_disk_bytes(const char *path);

/* CPU seconds this process has used (CLOCK_PROCESS_CPUTIME_ID). */
double bench_cpu_now(void);

/* ---- one data set's files ---- */

typedef struct real_paths {
    char jsonl[1100];    /* the records, JSON Lines */
    char imported[1100]; /* adstore store made by `adstore import` */
    char bulk[1100];     /* adstore store made through ads_bulk_* */
    char sqlite[1100];   /* SQLite database made by the sqlite3 program */
    char sqlite_c[1100]; /* SQLite database made through the C library */
    char duck[1100];     /* DuckDB database */
    char script[1100];   /* a SQL script for the sqlite3 program */
    char out[1100];      /* a query's csv output */
} real_paths;

/* What a query's csv output holds: data lines (the header not counted), the
 * first field of the first data line, the sum of column count_col. */
typedef struct real_result {
    uint64_t lines;
    int64_t first;
    int64_t count_sum;
} real_result;

int real_result_read(const char *file, int count_col, real_result *r);

/* ---- the peers (bench_real_peers.c) ---- */

/* The sqlite3 program: one-pass import with the key index built after the
 * load; a query as csv into p->out. */
int peer_sqlite3_import(const real_set *s, const real_paths *p, bench_child *st);
int peer_sqlite3_query(const real_set *s, const real_paths *p, int q, bench_child *st);
/* The SQLite library in this process: the same load (CPU seconds), and a
 * query written as csv to out. */
int peer_sqlite_c_load(const real_set *s, const real_paths *p, double *cpu);
int peer_sqlite_c_query(const real_set *s, const real_paths *p, int q, const char *out,
                        double *cpu);
/* DuckDB, one thread, through node and @duckdb/node-api (tests/bench/duckdb):
 * NULL if it can be used, else why not. */
const char *peer_duck_missing(void);
int peer_duck_import(const real_set *s, const real_paths *p, bench_child *st);
int peer_duck_query(const real_set *s, const real_paths *p, int q, bench_child *st);

#endif
