/*
 * tests/engine/test_multiproc.c: one store shared by several processes
 * (shared/spec/reliability.md, Concurrency):
 *   - a writer moving balance between accounts while two readers check in
 *     every read transaction that the total never changes and no account is
 *     missing: readers see only committed states;
 *   - two writer processes taking values from an increment and an ordered
 *     Sequence record, one value per transaction: no value is handed out
 *     twice, and the increment values are exactly 1..N;
 *   - fork(): a child that opens the store again makes ordered ids that
 *     repeat none of the parent's, made before the fork or meanwhile.
 *
 * Children open their own ads_db (LMDB forbids using the parent's handle),
 * check with plain code, and leave with _exit(): cmocka's machinery runs only
 * in the parent, which judges by exit statuses and the files the children
 * write.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "tests/cli/run.h"
#include "tests/engine/helpers.h"

#define ACCOUNTS 10
#define START_BALANCE 100
#define TOTAL (ACCOUNTS * START_BALANCE)
#define RUN_SECONDS 2.0
#define SEQ_VALUES 2000 /* per writer process, from each sequence */
#define FORK_IDS 1000
/* a hang detector, not a timing check: each committed value waits for the
 * disk, and a busy machine under AddressSanitizer took over 120 s */
#define CHILD_TIMEOUT_S 600

static double mono_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A fresh store directory (the store itself is created by setup code). */
typedef struct shared_dir {
    char *dir;
    char path[1100];
} shared_dir;

static void dir_make(shared_dir *d)
{
    d->dir = make_temp_dir();
    assert_non_null(d->dir);
    snprintf(d->path, sizeof d->path, "%s/db", d->dir);
}

static void dir_remove(shared_dir *d)
{
    remove_tree(d->dir);
    free(d->dir);
    d->dir = NULL;
}

static ads_db *open_or_fail(const char *path, int flags)
{
    ads_db *db;
    ads_error err;
    if (ads_db_open(&db, path, flags, &err))
        fail_msg("open %s: %s", path, err.message);
    return db;
}

static void store_or_fail(ads_db *db, const char *text)
{
    ads_error err;
    if (ts_store(db, &err, text))
        fail_msg("store %s: %s", text, err.message);
}

/* ---- children: plain C, no cmocka ---- */

/* A child's complaint, on stderr, then its exit status. */
static int child_fail(const char *who, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int child_fail(const char *who, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "%s (pid %d): ", who, (int)getpid());
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return 1;
}

/* Run fn(arg) in a child process that ends with _exit(fn's result). */
static pid_t spawn(int (*fn)(void *), void *arg)
{
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        int rc = fn(arg);
        fflush(stdout);
        fflush(stderr);
        _exit(rc);
    }
    assert_true(pid > 0);
    return pid;
}

/* Wait for pid; kill it if it outlives the timeout. Its exit status, or
 * 128 + signal. */
static int wait_child(pid_t pid)
{
    double deadline = mono_now() + CHILD_TIMEOUT_S;
    for (;;) {
        int st;
        pid_t r = waitpid(pid, &st, WNOHANG);
        if (r == pid)
            return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        if (r < 0 && errno != EINTR)
            fail_msg("waitpid %d: %s", (int)pid, strerror(errno));
        if (mono_now() > deadline) {
            kill(pid, SIGKILL);
            waitpid(pid, &st, 0);
            fail_msg("child %d did not finish in %d s", (int)pid, CHILD_TIMEOUT_S);
        }
        struct timespec pause = {0, 5 * 1000 * 1000};
        nanosleep(&pause, NULL);
    }
}

/* ---- (a) a writer and two readers ---- */

typedef struct bank {
    const char *path;
    int id;     /* reader number */
    int out_fd; /* where a child reports its statistics */
    uint64_t seed;
} bank;

static void account_name(char *out, size_t n, int i, bool shout)
{
    snprintf(out, n, shout ? "ACCT%02d" : "acct%02d", i);
}

/* The balance of a row, through its view. 0 and *out, or -1. */
static int balance_of(ads_row *row, const ads_expr *bal, ads_arena *a, int64_t *out)
{
    ads_view view = ads_row_view(row, NULL);
    ads_value v;
    if (ads_expr_eval(&v, bal, &view, a) || v.type != ADS_INTEGER)
        return -1;
    *out = v.u.i;
    return 0;
}

static uint64_t xorshift(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *s = x;
}

typedef struct transfer {
    int from, to;
    int64_t amount;
    const ads_expr *bal;
    ads_arena *a;
} transfer;

/* Move amount from one account to another: the two stores of one
 * transaction (run through ads_db_write, or an explicit transaction). */
static int do_transfer(ads_txn *txn, void *ctx, ads_error *err)
{
    transfer *t = ctx;
    const ads_type *ty;
    int rc = ads_txn_type(&ty, txn, "Account", 7, err);
    if (rc)
        return rc;
    int idx[2] = {t->from, t->to};
    int64_t bal[2];
    for (int k = 0; k < 2; k++) {
        char name[16];
        account_name(name, sizeof name, idx[k], k == 1);
        ads_value key = ads_string(name, strlen(name));
        ads_row row;
        rc = ads_txn_get(txn, &row, ty, &key, 1, t->a, err);
        if (rc < 0)
            return rc;
        if (rc == 0)
            return ads_error_set(err, ADS_ENOTFOUND, "account %s is missing", name);
        if (balance_of(&row, t->bal, t->a, &bal[k]))
            return ads_error_set(err, ADS_ECORRUPT, "account %s has no integer Balance", name);
    }
    for (int k = 0; k < 2; k++) {
        char text[160];
        snprintf(text, sizeof text, "[ AdType = \"Account\"; Name = \"acct%02d\"; Balance = %lld ]",
                 idx[k], (long long)(bal[k] + (k ? t->amount : -t->amount)));
        const ads_record *rec;
        if ((rc = ads_record_parse(&rec, t->a, text, strlen(text), err)) ||
            (rc = ads_txn_store(txn, rec, NULL, err)))
            return rc;
    }
    return 0;
}

static int bank_writer(void *arg)
{
    bank *b = arg;
    ads_db *db;
    ads_error err;
    if (ads_db_open(&db, b->path, 0, &err))
        return child_fail("writer", "open: %s", err.message);
    ads_arena *a = ads_arena_new();
    const ads_expr *bal;
    if (ads_expr_parse(&bal, a, "Balance", 7, &err))
        return child_fail("writer", "parse: %s", err.message);
    uint64_t rng = b->seed;
    long transfers = 0, aborted = 0;
    int rc = 0;
    double end = mono_now() + RUN_SECONDS;
    while (mono_now() < end) {
        transfer t = {(int)(xorshift(&rng) % ACCOUNTS), 0, (int64_t)(xorshift(&rng) % 50) + 1, bal,
                      ads_arena_new()};
        t.to = (t.from + 1 + (int)(xorshift(&rng) % (ACCOUNTS - 1))) % ACCOUNTS;
        unsigned how = (unsigned)(xorshift(&rng) % 10);
        if (how < 4) {
            rc = ads_db_write(db, do_transfer, &t, &err);
            transfers++;
        } else {
            ads_txn *txn;
            if ((rc = ads_txn_begin(&txn, db, 0, &err)) == 0) {
                rc = do_transfer(txn, &t, &err);
                if (rc || how == 9) {
                    ads_txn_abort(txn); /* a half-done transfer nobody may see */
                    aborted++;
                } else {
                    rc = ads_txn_commit(txn, &err);
                    transfers++;
                }
            }
        }
        ads_arena_free(t.a);
        if (rc) {
            rc = child_fail("writer", "transfer: %s", err.message);
            break;
        }
    }
    char line[96];
    int n = snprintf(line, sizeof line, "writer %ld %ld\n", transfers, aborted);
    if (write(b->out_fd, line, (size_t)n) != n)
        rc = child_fail("writer", "cannot report");
    ads_arena_free(a);
    ads_db_close(db);
    return rc;
}

/* One read transaction: every account present, through a scan and through
 * lookups, and the balances add up to TOTAL both ways. Returns a digest of
 * the balances in *state. */
static int bank_check(ads_db *db, const ads_expr *bal, uint64_t *state, const char **why,
                      ads_error *err)
{
    ads_txn *txn = NULL;
    ads_scan *s = NULL;
    ads_arena *a = ads_arena_new();
    int rc;
    if ((rc = ads_txn_begin(&txn, db, ADS_TXN_READONLY, err)))
        goto out;
    const ads_type *ty;
    if ((rc = ads_txn_type(&ty, txn, "account", 7, err)) ||
        (rc = ads_scan_open(&s, txn, ty, NULL, 0, err)))
        goto out;
    int64_t sum = 0, got;
    int count = 0;
    ads_row *row;
    uint64_t digest = 1469598103934665603u;
    while ((rc = ads_scan_next(&row, s, err)) == 1) {
        if (balance_of(row, bal, a, &got)) {
            *why = "an account without an integer Balance";
            rc = ADS_ECORRUPT;
            goto out;
        }
        sum += got;
        count++;
        digest = (digest ^ (uint64_t)got) * 1099511628211u;
    }
    if (rc < 0)
        goto out;
    if (count != ACCOUNTS || sum != TOTAL) {
        static char msg[128];
        snprintf(msg, sizeof msg, "scan: %d accounts, total %lld (want %d, %d)", count,
                 (long long)sum, ACCOUNTS, TOTAL);
        *why = msg;
        rc = ADS_ECORRUPT;
        goto out;
    }
    /* the same snapshot through point lookups, keys in another case */
    int64_t sum2 = 0;
    for (int i = 0; i < ACCOUNTS; i++) {
        char name[16];
        account_name(name, sizeof name, i, true);
        ads_value key = ads_string(name, strlen(name));
        ads_row r;
        rc = ads_txn_get(txn, &r, ty, &key, 1, a, err);
        if (rc < 0)
            goto out;
        if (rc == 0 || r.deleted || balance_of(&r, bal, a, &got)) {
            static char msg[64];
            snprintf(msg, sizeof msg, "lookup: account %s missing", name);
            *why = msg;
            rc = ADS_ECORRUPT;
            goto out;
        }
        sum2 += got;
    }
    if (sum2 != TOTAL) {
        static char msg[96];
        snprintf(msg, sizeof msg, "lookups: total %lld (want %d)", (long long)sum2, TOTAL);
        *why = msg;
        rc = ADS_ECORRUPT;
        goto out;
    }
    *state = digest;
    rc = 0;
out:
    ads_scan_close(s);
    ads_txn_abort(txn);
    ads_arena_free(a);
    return rc;
}

static int bank_reader(void *arg)
{
    bank *b = arg;
    ads_db *db;
    ads_error err;
    char who[16];
    snprintf(who, sizeof who, "reader %d", b->id);
    if (ads_db_open(&db, b->path, ADS_DB_READONLY, &err))
        return child_fail(who, "open: %s", err.message);
    ads_arena *a = ads_arena_new();
    const ads_expr *bal;
    if (ads_expr_parse(&bal, a, "balance", 7, &err))
        return child_fail(who, "parse: %s", err.message);
    long reads = 0, changes = 0;
    uint64_t last = 0, state;
    int rc = 0;
    double end = mono_now() + RUN_SECONDS;
    while (mono_now() < end) {
        const char *why = NULL;
        err.message[0] = 0;
        rc = bank_check(db, bal, &state, &why, &err);
        if (rc) {
            rc = child_fail(who, "read %ld: %s", reads, why ? why : err.message);
            break;
        }
        if (reads && state != last)
            changes++;
        last = state;
        reads++;
    }
    char line[96];
    int n = snprintf(line, sizeof line, "reader %ld %ld\n", reads, changes);
    if (write(b->out_fd, line, (size_t)n) != n)
        rc = child_fail(who, "cannot report");
    ads_arena_free(a);
    ads_db_close(db);
    return rc;
}

static void readers__see_only_committed_states_while_a_process_writes(void **state)
{
    (void)state;
    shared_dir d;
    dir_make(&d);
    ads_db *db = open_or_fail(d.path, ADS_DB_CREATE);
    ts_declare(db, "Account", "Name", NULL);
    for (int i = 0; i < ACCOUNTS; i++) {
        char text[128];
        snprintf(text, sizeof text, "[ AdType = \"Account\"; Name = \"acct%02d\"; Balance = %d ]",
                 i, START_BALANCE);
        store_or_fail(db, text);
    }
    ads_db_close(db); /* children open their own handles */

    int fds[2];
    assert_int_equal(pipe(fds), 0);
    bank w = {d.path, 0, fds[1], 0x9e3779b97f4a7c15u};
    bank r1 = {d.path, 1, fds[1], 0}, r2 = {d.path, 2, fds[1], 0};
    pid_t pr1 = spawn(bank_reader, &r1);
    pid_t pr2 = spawn(bank_reader, &r2);
    pid_t pw = spawn(bank_writer, &w);
    int sw = wait_child(pw), s1 = wait_child(pr1), s2 = wait_child(pr2);
    close(fds[1]);
    char report[512];
    size_t got = 0;
    for (;;) {
        ssize_t n = read(fds[0], report + got, sizeof report - 1 - got);
        if (n > 0)
            got += (size_t)n;
        else if (n == 0 || errno != EINTR || got == sizeof report - 1)
            break;
    }
    close(fds[0]);
    report[got] = 0;
    printf("%s", report);
    if (sw || s1 || s2)
        fail_msg("the writer exited with %d, the readers with %d and %d (their complaints are "
                 "above)",
                 sw, s1, s2);

    /* the reports: the writer moved money, each reader saw it move */
    long transfers = -1, aborted = -1, reads[2] = {-1, -1}, changes[2] = {-1, -1};
    int nr = 0;
    for (char *line = strtok(report, "\n"); line; line = strtok(NULL, "\n")) {
        if (sscanf(line, "writer %ld %ld", &transfers, &aborted) == 2)
            continue;
        if (nr < 2 && sscanf(line, "reader %ld %ld", &reads[nr], &changes[nr]) == 2)
            nr++;
    }
    assert_int_equal(nr, 2);
    assert_true(transfers > 0);
    for (int i = 0; i < 2; i++) {
        assert_true(reads[i] > 0);
        if (changes[i] == 0)
            fail_msg("reader %d saw no transfer in %ld reads", i + 1, reads[i]);
    }

    /* afterwards: the total is intact and the store verifies */
    db = open_or_fail(d.path, 0);
    ads_arena *a = ads_arena_new();
    const ads_expr *bal;
    assert_int_equal(ads_expr_parse(&bal, a, "Balance", 7, NULL), 0);
    uint64_t digest;
    const char *why = NULL;
    ads_error err;
    if (bank_check(db, bal, &digest, &why, &err))
        fail_msg("after the run: %s", why ? why : err.message);
    assert_int_equal(ts_verify(db), 0);
    ads_arena_free(a);
    ads_db_close(db);
    dir_remove(&d);
}

/* ---- (b) two writers taking sequence values ---- */

typedef struct seq_taker {
    const char *path;
    const char *file; /* where the values go */
    int id;
} seq_taker;

/* One value of sequence name in its own transaction. */
static int take_one(ads_db *db, const char *name, ads_value *out, ads_arena *a, ads_error *err)
{
    ads_txn *txn;
    int rc = ads_txn_begin(&txn, db, 0, err);
    if (rc)
        return rc;
    rc = ads_txn_next_value(out, txn, name, strlen(name), a, err);
    if (rc) {
        ads_txn_abort(txn);
        return rc;
    }
    return ads_txn_commit(txn, err);
}

static int seq_child(void *arg)
{
    seq_taker *s = arg;
    char who[16];
    snprintf(who, sizeof who, "writer %d", s->id);
    ads_db *db;
    ads_error err;
    /* NOSYNC: 8000 commits should not wait on the disk; writers are
     * serialised by LMDB's lock all the same, which is what is tested */
    if (ads_db_open(&db, s->path, ADS_DB_NOSYNC, &err))
        return child_fail(who, "open: %s", err.message);
    FILE *f = fopen(s->file, "wb");
    if (!f)
        return child_fail(who, "cannot write %s", s->file);
    ads_arena *a = ads_arena_new();
    int rc = 0;
    uint64_t last_inc = 0;
    for (int i = 0; i < SEQ_VALUES && !rc; i++) {
        ads_value inc, ord;
        ads_arena_reset(a);
        /* the Name is matched as a key: any case */
        if ((rc = take_one(db, i % 2 ? "COUNTER" : "Counter", &inc, a, &err)) ||
            (rc = take_one(db, "stamp", &ord, a, &err))) {
            rc = child_fail(who, "value %d: %s", i, err.message);
            break;
        }
        if (inc.type != ADS_IDENT || ads_id_kind_of(inc.u.id) != ADS_ID_INCREMENT ||
            ord.type != ADS_IDENT || ads_id_kind_of(ord.u.id) != ADS_ID_ORDERED) {
            rc = child_fail(who, "value %d: not an increment LUID and an OUID", i);
            break;
        }
        /* this process's own values only grow */
        if (inc.u.id.lo <= last_inc) {
            rc = child_fail(who, "increment value %llu after %llu", (unsigned long long)inc.u.id.lo,
                            (unsigned long long)last_inc);
            break;
        }
        last_inc = inc.u.id.lo;
        uint64_t rec[3] = {inc.u.id.lo, ord.u.id.hi, ord.u.id.lo};
        if (fwrite(rec, sizeof rec, 1, f) != 1)
            rc = child_fail(who, "cannot write %s", s->file);
    }
    if (fclose(f) && !rc)
        rc = child_fail(who, "cannot write %s", s->file);
    ads_arena_free(a);
    ads_db_close(db);
    return rc;
}

static int id_cmp(const void *a, const void *b)
{
    const ads_id *x = a, *y = b;
    return ads_id_cmp(*x, *y);
}

static int u64_cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static size_t read_values(const char *file, uint64_t *inc, ads_id *ord, size_t max)
{
    FILE *f = fopen(file, "rb");
    assert_non_null(f);
    size_t n = 0;
    uint64_t rec[3];
    while (n < max && fread(rec, sizeof rec, 1, f) == 1) {
        inc[n] = rec[0];
        ord[n].hi = rec[1];
        ord[n].lo = rec[2];
        n++;
    }
    fclose(f);
    return n;
}

static void sequences__two_writer_processes_never_share_a_value(void **state)
{
    (void)state;
    shared_dir d;
    dir_make(&d);
    ads_db *db = open_or_fail(d.path, ADS_DB_CREATE);
    store_or_fail(db, "[ AdType = \"Sequence\"; Name = \"Counter\"; Method = \"increment\" ]");
    store_or_fail(db, "[ AdType = \"Sequence\"; Name = \"Stamp\"; Method = \"ordered\" ]");
    ads_db_close(db);

    char f1[1200], f2[1200];
    snprintf(f1, sizeof f1, "%s/values1", d.dir);
    snprintf(f2, sizeof f2, "%s/values2", d.dir);
    seq_taker t1 = {d.path, f1, 1}, t2 = {d.path, f2, 2};
    double t0 = mono_now();
    pid_t p1 = spawn(seq_child, &t1);
    pid_t p2 = spawn(seq_child, &t2);
    int s1 = wait_child(p1), s2 = wait_child(p2);
    double took = mono_now() - t0;
    if (s1 || s2)
        fail_msg("the writers exited with %d and %d (their complaints are above)", s1, s2);

    size_t total = 2 * SEQ_VALUES;
    uint64_t *inc = calloc(total, sizeof *inc);
    ads_id *ord = calloc(total, sizeof *ord);
    assert_non_null(inc);
    assert_non_null(ord);
    size_t n1 = read_values(f1, inc, ord, total);
    size_t n2 = read_values(f2, inc + n1, ord + n1, total - n1);
    assert_int_equal(n1, SEQ_VALUES);
    assert_int_equal(n2, SEQ_VALUES);
    /* the two processes interleaved: each got values the other did not */
    bool interleaved = false;
    for (size_t i = 1; i < n1 && !interleaved; i++)
        interleaved = inc[i] != inc[i - 1] + 1;
    printf("sequences: %zu + %zu values in %.2f s (%s)\n", n1, n2, took,
           interleaved ? "interleaved" : "not interleaved");
    qsort(inc, total, sizeof *inc, u64_cmp);
    for (size_t i = 0; i < total; i++)
        if (inc[i] != i + 1)
            fail_msg("increment values: position %zu holds %llu (want exactly 1..%zu)", i,
                     (unsigned long long)inc[i], total);
    qsort(ord, total, sizeof *ord, id_cmp);
    for (size_t i = 1; i < total; i++)
        if (ads_id_eq(ord[i], ord[i - 1])) {
            char text[ADS_ID_TEXT_MAX + 1];
            ads_id_format(text, ord[i]);
            fail_msg("ordered value %s was handed out twice", text);
        }

    /* the next value continues after both */
    db = open_or_fail(d.path, 0);
    ads_arena *a = ads_arena_new();
    ads_value v;
    ads_error err;
    if (take_one(db, "counter", &v, a, &err))
        fail_msg("next: %s", err.message);
    assert_int_equal(v.type, ADS_IDENT);
    assert_int_equal(v.u.id.lo, total + 1);
    assert_int_equal(ts_verify(db), 0);
    ads_arena_free(a);
    ads_db_close(db);
    free(inc);
    free(ord);
    dir_remove(&d);
}

/* ---- (c) fork() ---- */

typedef struct fork_child {
    const char *path;
    const char *file;
} fork_child;

/* n ordered ids in transactions of 10, appended to out. */
static int make_ids(ads_db *db, ads_id *out, size_t n, ads_error *err)
{
    for (size_t i = 0; i < n; i += 10) {
        ads_txn *txn;
        int rc = ads_txn_begin(&txn, db, 0, err);
        if (rc)
            return rc;
        size_t k = n - i < 10 ? n - i : 10;
        if ((rc = ads_txn_new_ids(out + i, k, NULL, txn, ADS_ID_ORDERED, err))) {
            ads_txn_abort(txn);
            return rc;
        }
        if ((rc = ads_txn_commit(txn, err)))
            return rc;
    }
    return 0;
}

static int fork_child_main(void *arg)
{
    fork_child *fc = arg;
    ads_db *db;
    ads_error err;
    /* the parent's handle is not touched here: open the store again */
    if (ads_db_open(&db, fc->path, 0, &err))
        return child_fail("fork child", "open: %s", err.message);
    ads_id ids[FORK_IDS];
    int rc = make_ids(db, ids, FORK_IDS, &err);
    ads_db_close(db);
    if (rc)
        return child_fail("fork child", "ids: %s", err.message);
    FILE *f = fopen(fc->file, "wb");
    if (!f || fwrite(ids, sizeof ids, 1, f) != 1)
        return child_fail("fork child", "cannot write %s", fc->file);
    return fclose(f) ? 1 : 0;
}

static void fork__child_never_repeats_the_parents_ids(void **state)
{
    (void)state;
    shared_dir d;
    dir_make(&d);
    ads_db *db = open_or_fail(d.path, ADS_DB_CREATE);
    size_t total = 3 * FORK_IDS;
    ads_id *ids = calloc(total, sizeof *ids);
    assert_non_null(ids);
    ads_error err;
    /* the parent makes ids and keeps its handle open across the fork */
    if (make_ids(db, ids, FORK_IDS, &err))
        fail_msg("parent ids: %s", err.message);
    char file[1200];
    snprintf(file, sizeof file, "%s/child-ids", d.dir);
    fork_child fc = {d.path, file};
    pid_t pid = spawn(fork_child_main, &fc);
    /* and goes on making ids while the child does */
    if (make_ids(db, ids + FORK_IDS, FORK_IDS, &err))
        fail_msg("parent ids after fork: %s", err.message);
    int st = wait_child(pid);
    if (st)
        fail_msg("the forked child exited with %d (its complaint is above)", st);
    FILE *f = fopen(file, "rb");
    assert_non_null(f);
    assert_int_equal(fread(ids + 2 * FORK_IDS, sizeof *ids, FORK_IDS, f), FORK_IDS);
    fclose(f);
    for (size_t i = 0; i < total; i++)
        assert_int_equal(ads_id_kind_of(ids[i]), ADS_ID_ORDERED);
    qsort(ids, total, sizeof *ids, id_cmp);
    for (size_t i = 1; i < total; i++)
        if (ads_id_eq(ids[i], ids[i - 1])) {
            char text[ADS_ID_TEXT_MAX + 1];
            ads_id_format(text, ids[i]);
            fail_msg("id %s was made twice (parent and forked child)", text);
        }
    assert_int_equal(ts_verify(db), 0);
    ads_db_close(db);
    free(ids);
    dir_remove(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(readers__see_only_committed_states_while_a_process_writes),
        cmocka_unit_test(sequences__two_writer_processes_never_share_a_value),
        cmocka_unit_test(fork__child_never_repeats_the_parents_ids),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
