/*
 * tests/bench/bench.h: what the files of adstore-bench share: the run's
 * configuration, timing helpers, and the one table format every scenario
 * prints (shared/spec/performance.md).
 */
#ifndef ADS_BENCH_H
#define ADS_BENCH_H

#include <stdbool.h>
#include <stdint.h>

typedef struct config {
    bool quick;
    int reps;
    const char *only;
    const char *dir; /* where scenario stores live (a temporary directory) */
    bool keep;       /* leave the stores there (--dir) */
    int scale;       /* the realistic scenarios at scale x 1M records (--scale) */
} config;

/* Monotonic seconds. */
double bench_now(void);
/* Median of v[0..n) (sorts v). */
double bench_median(double *v, int n);
/* True if the scenario id or name is selected by --only. */
bool bench_selected(const config *cfg, const char *id, const char *what);

/*
 * One table row: adstore did `ops` operations in `mine` seconds, the
 * baseline in `base` seconds. target_rate (ops/s, 0: none) and target_ratio
 * (adstore rate / baseline rate, 0: none) decide "met" or "MISSED".
 */
void bench_row(const char *id, const char *what, uint64_t ops, double mine, const char *baseline,
               double base, double target_rate, double target_ratio);

/* Print "adstore-bench: what: msg" on stderr; returns -1. */
int bench_fail(const char *what, const char *msg);
/* Remove a store directory or file (with SQLite's -wal and -shm beside it). */
void bench_rm_rf(const char *path);
/* A 64-bit mixer (splitmix64's finaliser): the generators' pseudo-random
 * values, the same in every run. */
uint64_t bench_mix(uint64_t x);

/* A line of text under the table (memory figures, notes). */
void bench_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The storage scenarios P1..P5 and the memory figures (bench_engine.c). */
int bench_engine(const config *cfg);

/* The statement-language scenario P6 (bench_query.c). */
int bench_query(const config *cfg);

/* The scenarios through the adstore program: P1 import, P8 dump and restore
 * (bench_tools.c). */
int bench_tools(const config *cfg);

/* The snapshot-day scenario P10: unchanged-skip, sync and retention
 * (bench_history.c). */
int bench_history(const config *cfg);

/* The realistic scenarios of issue 17: HTCondor-like slot and job ads loaded
 * and queried through the program and the C API, next to the sqlite3
 * program, the SQLite library and DuckDB (bench_real.c). */
int bench_real(const config *cfg);

/* Secondary indexes, P11: loads with and without indexes, and three
 * queries through indexes against SQLite's expression indexes and
 * adstore's own full scan (bench_index.c). */
int bench_index(const config *cfg);

/* Durable single-record commits, P14: one thread and several, against
 * SQLite WAL with synchronous=FULL (bench_commit.c). */
int bench_commit(const config *cfg);

#endif
