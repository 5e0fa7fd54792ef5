/*
 * tests/bench/history_study.c: adstore-history-study, a design study of
 * how history is laid out in LMDB and what that costs in bytes on disk
 * (issue 12's target: P10's store at the end of its day at most half of
 * SQLite's). Not adstore: raw LMDB puts of rows of the sizes P10's store
 * holds, under P10's day, laid out three ways:
 *
 *   rows     what format 6 does: one LMDB entry per history row under
 *            record key ++ ts ++ systs (55 bytes), whole rows 167 bytes,
 *            differences 57, the keyframe of a trimmed history in `bases`;
 *   rid      the same, the record key in history keys replaced by the type
 *            and a 4-byte record number (24-byte keys);
 *   chunks N one entry per run of up to N rows of a record, under record
 *            key ++ ts of its first row: a whole row then differences, each
 *            row with its dates as deltas (whole 164, difference 53 bytes);
 *            an append rewrites the record's last chunk, a trim rewrites its
 *            first with the first kept row whole (no `bases`).
 *
 * The day, as P10's: 12,000 machine slots, 10,000 present at first; per
 * one-minute snapshot (1,440) 500 present machines change, 50 vanish (a
 * deleted row) and 50 absent ones appear, stored in key order in one
 * transaction; retention 6 hours, a write removing at most 16 of its record's
 * rows that aged past the cut, and a deleted record removed whole once its
 * deletion is past the cut. The sizes are the ones measured on P10's store
 * (docs/performance.md, "What the bytes at the end are"); the rows' contents
 * do not matter to LMDB's layout, only their sizes and keys.
 *
 * Usage: adstore-history-study DIR rows|rid|chunks [N]
 * Prints the pages of each table, the free pages and the file's size.
 */
#include <errno.h>
#include <lmdb.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum {
    SLOTS = 12000, PRESENT = 10000, SNAPS = 1440, CHANGES = 500, COMINGS = 50,
    RETENTION = 6 * 3600, TRIM = 16, KEYLEN = 39, RIDLEN = 8,
    WHOLE = 167, DIFF = 57, DELETED = 40, LATEST = 167,
    CHUNK_WHOLE = 164, CHUNK_DIFF = 53, CHUNK_HEAD = 4, MAX_ROWS = 4096
};

typedef enum { L_ROWS, L_RID, L_CHUNKS } layout;

typedef struct rec {
    bool exists, present;
    int nrows, since_kf;
    int64_t latest_ts;
    int64_t ts[MAX_ROWS];
    bool whole[MAX_ROWS];
} rec;

typedef struct study {
    layout how;
    int chunk_rows;
    MDB_txn *txn;
    MDB_dbi latest, history, bases;
    rec *r;
    uint64_t rng;
    unsigned char fill[1 << 16];
} study;

static void check(int rc, const char *what)
{
    if (rc) {
        fprintf(stderr, "adstore-history-study: %s: %s\n", what, mdb_strerror(rc));
        exit(1);
    }
}

static uint64_t next_rand(study *s)
{
    s->rng ^= s->rng << 13;
    s->rng ^= s->rng >> 7;
    s->rng ^= s->rng << 17;
    return s->rng;
}

static void be64(unsigned char *p, uint64_t v)
{
    for (int i = 7; i >= 0; i--, v >>= 8)
        p[i] = (unsigned char)v;
}

/* The record key of slot i as adstore encodes it: type id, string tag, the
 * folded name, terminator (39 bytes, in slot order). */
static size_t record_key(int i, unsigned char *k)
{
    memset(k, 0, KEYLEN);
    k[3] = 16;
    k[4] = 0x20;
    snprintf((char *)k + 5, KEYLEN - 5, "slot1@node%05d.pool.example.org", i);
    k[KEYLEN - 2] = k[KEYLEN - 1] = 0;
    return KEYLEN;
}

/* The history key of row j of record i (the first row of a chunk). */
static size_t history_key(const study *s, int i, int j, unsigned char *k)
{
    size_t n;
    if (s->how == L_RID) {
        memset(k, 0, RIDLEN);
        k[3] = 16;
        k[6] = (unsigned char)(i >> 8);
        k[7] = (unsigned char)i;
        n = RIDLEN;
    } else {
        n = record_key(i, k);
    }
    be64(k + n, (uint64_t)s->r[i].ts[j]);
    if (s->how == L_CHUNKS)
        return n + 8;
    be64(k + n + 8, (uint64_t)s->r[i].ts[j] * 1000000);
    return n + 16;
}

static void put(study *s, MDB_dbi dbi, unsigned char *k, size_t klen, size_t vlen)
{
    MDB_val kv = {klen, k}, dv = {vlen, s->fill};
    check(mdb_put(s->txn, dbi, &kv, &dv, 0), "mdb_put");
}

static void del(study *s, MDB_dbi dbi, unsigned char *k, size_t klen)
{
    MDB_val kv = {klen, k};
    int rc = mdb_del(s->txn, dbi, &kv, NULL);
    if (rc != MDB_NOTFOUND)
        check(rc, "mdb_del");
}

/* ---- one entry a row (rows, rid) ---- */

static void row_put(study *s, int i, int j)
{
    unsigned char k[KEYLEN + 16];
    put(s, s->history, k, history_key(s, i, j, k), s->r[i].whole[j] ? WHOLE : DIFF);
}

static void row_del(study *s, int i, int j)
{
    unsigned char k[KEYLEN + 16];
    del(s, s->history, k, history_key(s, i, j, k));
}

static void base_set(study *s, int i, bool on)
{
    unsigned char k[KEYLEN];
    size_t n = record_key(i, k);
    if (on)
        put(s, s->bases, k, n, WHOLE);
    else
        del(s, s->bases, k, n);
}

/* ---- one entry a chunk: from a whole row to the row before the next ---- */

static int chunk_start(const rec *r, int j)
{
    while (j > 0 && !r->whole[j])
        j--;
    return j;
}

static void chunk_put(study *s, int i, int first)
{
    const rec *r = &s->r[i];
    unsigned char k[KEYLEN + 16];
    size_t n = CHUNK_HEAD;
    int j = first;
    do
        n += r->whole[j] ? CHUNK_WHOLE : CHUNK_DIFF;
    while (++j < r->nrows && !r->whole[j]);
    put(s, s->history, k, history_key(s, i, first, k), n);
}

static void chunk_del(study *s, int i, int first)
{
    unsigned char k[KEYLEN + 16];
    del(s, s->history, k, history_key(s, i, first, k));
}

/* ---- the store's moves ---- */

static void latest_put(study *s, int i, bool deleted)
{
    unsigned char k[KEYLEN];
    put(s, s->latest, k, record_key(i, k), deleted ? DELETED : LATEST);
}

/* The latest row of record i moves to history, whole every chunk_rows rows
 * (rows, rid: every 16, the keyframe rule). */
static void to_history(study *s, int i)
{
    rec *r = &s->r[i];
    int j = r->nrows++;
    int every = s->how == L_CHUNKS ? s->chunk_rows : 16;
    if (j >= MAX_ROWS) {
        fprintf(stderr, "adstore-history-study: too many rows\n");
        exit(1);
    }
    r->ts[j] = r->latest_ts;
    r->whole[j] = j == 0 || r->since_kf >= every;
    r->since_kf = r->whole[j] ? 1 : r->since_kf + 1;
    if (s->how == L_CHUNKS)
        chunk_put(s, i, chunk_start(r, j));
    else
        row_put(s, i, j);
}

static void forget_rows(rec *r, int n)
{
    memmove(r->ts, r->ts + n, (size_t)(r->nrows - n) * sizeof r->ts[0]);
    memmove(r->whole, r->whole + n, (size_t)(r->nrows - n) * sizeof r->whole[0]);
    r->nrows -= n;
}

/* Remove record i's history rows before the one in effect at cut (at most
 * TRIM), as retention does on each write. */
static void trim(study *s, int i, int64_t cut)
{
    rec *r = &s->r[i];
    int n = 0;
    for (int j = 0; j < r->nrows; j++)
        if (r->ts[j] <= cut)
            n = j;
    if (r->nrows && r->latest_ts <= cut)
        n = r->nrows;
    if (n > TRIM)
        n = TRIM;
    if (n == 0)
        return;
    if (s->how == L_CHUNKS) {
        for (int j = 0; j < n; j++)
            if (r->whole[j])
                chunk_del(s, i, j);
    } else {
        for (int j = 0; j < n; j++)
            row_del(s, i, j);
        base_set(s, i, n < r->nrows && !r->whole[n]);
    }
    bool rewrite = s->how == L_CHUNKS && n < r->nrows && !r->whole[n];
    forget_rows(r, n);
    if (rewrite) {
        r->whole[0] = true;
        chunk_put(s, i, 0);
    }
}

/* A deleted record whose deletion is past the cut goes whole. */
static void forget_record(study *s, int i)
{
    rec *r = &s->r[i];
    unsigned char k[KEYLEN];
    for (int j = 0; j < r->nrows; j++)
        if (s->how == L_CHUNKS ? r->whole[j] : true)
            s->how == L_CHUNKS ? chunk_del(s, i, j) : row_del(s, i, j);
    if (s->how != L_CHUNKS)
        base_set(s, i, false);
    del(s, s->latest, k, record_key(i, k));
    memset(r, 0, sizeof *r);
}

/* ---- the day ---- */

static int pick(study *s, const unsigned char *kind, bool present)
{
    for (;;) {
        int i = (int)(next_rand(s) % SLOTS);
        if (!kind[i] && s->r[i].present == present)
            return i;
    }
}

static void snapshot(study *s, int snap, unsigned char *kind)
{
    int64_t now = (int64_t)snap * 60, cut = now - RETENTION;
    memset(kind, 0, SLOTS);
    for (int i = 0; snap == 0 && i < PRESENT; i++)
        kind[i] = 3;
    for (int c = 0; snap > 0 && c < CHANGES; c++)
        kind[pick(s, kind, true)] = 1;
    for (int c = 0; snap > 0 && c < COMINGS; c++)
        kind[pick(s, kind, true)] = 2;
    for (int c = 0; snap > 0 && c < COMINGS; c++)
        kind[pick(s, kind, false)] = 3;
    for (int i = 0; i < SLOTS; i++) {
        rec *r = &s->r[i];
        if (kind[i] == 3 && !r->exists) {
            *r = (rec){.exists = true, .present = true, .latest_ts = now};
            latest_put(s, i, false);
        } else if (kind[i]) {
            to_history(s, i);
            r->latest_ts = now;
            r->present = kind[i] != 2;
            latest_put(s, i, !r->present);
            trim(s, i, cut);
        } else if (r->exists && !r->present && r->latest_ts < cut) {
            forget_record(s, i);
        }
    }
}

static void report(study *s, MDB_env *env, const char *dir)
{
    MDB_stat st;
    MDB_envinfo info;
    char path[4200];
    struct stat sb;
    const char *names[3] = {"latest", "history", "bases"};
    MDB_dbi dbis[3] = {s->latest, s->history, s->bases};
    long rows = 0;
    size_t used = 0;
    check(mdb_txn_begin(env, NULL, MDB_RDONLY, &s->txn), "mdb_txn_begin");
    for (int x = 0; x < 3; x++) {
        check(mdb_stat(s->txn, dbis[x], &st), "mdb_stat");
        size_t pages = st.ms_branch_pages + st.ms_leaf_pages + st.ms_overflow_pages;
        printf("%-8s %8zu entries %7zu pages\n", names[x], st.ms_entries, pages);
        used += pages;
    }
    check(mdb_env_info(env, &info), "mdb_env_info");
    mdb_txn_abort(s->txn);
    for (int i = 0; i < SLOTS; i++)
        rows += s->r[i].nrows;
    snprintf(path, sizeof path, "%s/data.mdb", dir);
    if (stat(path, &sb))
        sb.st_size = 0;
    printf("history rows %ld; pages: %zu in the tables, %zu in the file (the rest free);"
           " file %lld bytes (%.1f MB)\n",
           rows, used, info.me_last_pgno + 1, (long long)sb.st_size, (double)sb.st_size / 1e6);
}

int main(int argc, char **argv)
{
    static study s;
    MDB_env *env;
    if (argc < 3 || (strcmp(argv[2], "rows") && strcmp(argv[2], "rid") && strcmp(argv[2], "chunks"))) {
        fprintf(stderr, "usage: adstore-history-study DIR rows|rid|chunks [N]\n");
        return 2;
    }
    s.how = !strcmp(argv[2], "rows") ? L_ROWS : !strcmp(argv[2], "rid") ? L_RID : L_CHUNKS;
    s.chunk_rows = argc > 3 ? atoi(argv[3]) : 16;
    if (s.chunk_rows < 2 || s.chunk_rows > 256) {
        fprintf(stderr, "adstore-history-study: N must be 2..256\n");
        return 2;
    }
    s.rng = 12345;
    s.r = calloc(SLOTS, sizeof *s.r);
    unsigned char *kind = malloc(SLOTS);
    if (!s.r || !kind || (mkdir(argv[1], 0755) && errno != EEXIST))
        return 1;
    check(mdb_env_create(&env), "mdb_env_create");
    check(mdb_env_set_maxdbs(env, 4), "mdb_env_set_maxdbs");
    check(mdb_env_set_mapsize(env, (size_t)1 << 32), "mdb_env_set_mapsize");
    check(mdb_env_open(env, argv[1], MDB_NOSYNC, 0644), "mdb_env_open");
    check(mdb_txn_begin(env, NULL, 0, &s.txn), "mdb_txn_begin");
    check(mdb_dbi_open(s.txn, "latest", MDB_CREATE, &s.latest), "mdb_dbi_open");
    check(mdb_dbi_open(s.txn, "history", MDB_CREATE, &s.history), "mdb_dbi_open");
    check(mdb_dbi_open(s.txn, "bases", MDB_CREATE, &s.bases), "mdb_dbi_open");
    check(mdb_txn_commit(s.txn), "mdb_txn_commit");
    for (int snap = 0; snap < SNAPS; snap++) {
        check(mdb_txn_begin(env, NULL, 0, &s.txn), "mdb_txn_begin");
        snapshot(&s, snap, kind);
        check(mdb_txn_commit(s.txn), "mdb_txn_commit");
    }
    report(&s, env, argv[1]);
    mdb_env_close(env);
    free(s.r);
    free(kind);
    return 0;
}
