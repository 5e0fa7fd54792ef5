/*
 * tests/bench/bench_tools.c: the scenarios that go through the adstore
 * program itself (shared/spec/performance.md):
 *   P1 through the command: `adstore import` of N Machine records from JSON
 *      Lines vs the sqlite3 program importing the same file into the SQLite
 *      JSON table (each line checked and stored with json(), keyed by Name);
 *   P8 `adstore dump` and `adstore restore` of the P2 store (10k records x
 *      100 updates: 1M rows) vs mdb_dump and mdb_load (lmdb-utils) of the same
 *      store; the restored store is dumped again and must give the same bytes.
 * Each command is a child process timed from fork to exit; the peak resident
 * set of each (as /usr/bin/time reports it) is printed at two sizes under the
 * table.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <lmdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine/engine.h"
#include "tests/bench/bench.h"

#ifndef ADS_PROGRAM
#define ADS_PROGRAM "adstore"
#endif

/* Run argv with stdin from `in` and stdout to `out` (NULL: /dev/null);
 * stderr is kept in a file and shown if the command fails. Seconds from fork
 * to exit, and with maxrss the command's peak resident set in KiB as
 * /usr/bin/time reports it (measured by a tiny process in between, so the
 * benchmark's own memory, copied into a forked child, does not count). */
static int run_plain(char *const argv[], const char *in, const char *out, double *secs);

static int run(char *const argv[], const char *in, const char *out, double *secs, long *maxrss)
{
    if (!maxrss)
        return run_plain(argv, in, out, secs);
    char rssfile[] = "/tmp/adstore-bench-rss-XXXXXX";
    int fd = mkstemp(rssfile);
    if (fd < 0)
        return bench_fail("mkstemp", strerror(errno));
    close(fd);
    char *timed[32] = {"/usr/bin/time", "-f", "%M", "-o", rssfile};
    int n = 5;
    for (int i = 0; argv[i] && n < 31; i++)
        timed[n++] = argv[i];
    timed[n] = NULL;
    int rc = run_plain(timed, in, out, secs);
    FILE *f = fopen(rssfile, "r");
    if (!rc && (!f || fscanf(f, "%ld", maxrss) != 1))
        rc = bench_fail("/usr/bin/time", "no peak resident set reported");
    if (f)
        fclose(f);
    unlink(rssfile);
    return rc;
}

static int run_plain(char *const argv[], const char *in, const char *out, double *secs)
{
    char errfile[] = "/tmp/adstore-bench-err-XXXXXX";
    int efd = mkstemp(errfile);
    if (efd < 0)
        return bench_fail("mkstemp", strerror(errno));
    double t0 = bench_now();
    pid_t pid = fork();
    if (pid < 0)
        return bench_fail("fork", strerror(errno));
    if (pid == 0) {
        int ifd = open(in ? in : "/dev/null", O_RDONLY);
        int ofd = out ? open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600) : open("/dev/null", O_WRONLY);
        if (ifd < 0 || ofd < 0)
            _exit(126);
        dup2(ifd, 0);
        dup2(ofd, 1);
        dup2(efd, 2);
        execvp(argv[0], argv);
        _exit(127);
    }
    int status;
    if (waitpid(pid, &status, 0) < 0)
        return bench_fail("waitpid", strerror(errno));
    *secs = bench_now() - t0;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        char buf[2048];
        ssize_t n = pread(efd, buf, sizeof buf - 1, 0);
        buf[n > 0 ? n : 0] = '\0';
        fprintf(stderr, "adstore-bench: %s failed (status %d):\n%s", argv[0], status, buf);
        close(efd);
        unlink(errfile);
        return -1;
    }
    close(efd);
    unlink(errfile);
    return 0;
}

/* ---- P1 through the command ---- */

/* n Machine records as JSON Lines (without AdType: the import gives it). */
static int write_jsonl(const char *path, uint64_t n)
{
    static const char *const archs[] = {"X86_64", "x86_64", "ARM64", "PPC64LE"};
    static const char *const owners[] = {"alice", "bob", "carol", "ALICE", "dave"};
    static const char *const platforms[] = {"linux", "windows", "macos"};
    FILE *f = fopen(path, "w");
    if (!f)
        return bench_fail(path, strerror(errno));
    for (uint64_t i = 0; i < n; i++) {
        uint64_t h = bench_mix(i);
        fprintf(f,
                "{\"Name\":\"node%07" PRIu64 ".example.org\",\"Memory\":%d,\"Arch\":\"%s\","
                "\"Disk\":%" PRIu64 ",\"Owner\":\"%s\",\"Platform\":\"%s\",\"Role\":\"%s\","
                "\"Cpus\":%" PRIu64 ",\"LoadAvg\":%.2f,\"State\":\"Unclaimed\","
                "\"Activity\":\"Idle\",\"OpSys\":\"LINUX\",\"KFlops\":%" PRIu64 ","
                "\"Start\":true}\n",
                i, 256 << (h % 7), archs[(h >> 8) % 4], (h >> 12) % 400000,
                owners[(h >> 32) % 5], platforms[(h >> 36) % 3],
                (h >> 40) % 4 ? "compute" : "login", 1 + (h >> 42) % 64,
                (double)((h >> 20) % 400) / 100.0, (h >> 24) % 2000000);
    }
    if (fclose(f))
        return bench_fail(path, strerror(errno));
    return 0;
}

static int import_adstore(const char *store, const char *file, double *secs, long *rss)
{
    bench_rm_rf(store);
    double ignore;
    char *decl[] = {ADS_PROGRAM, "-d", (char *)store, "execute",
                    "STORE [ AdType = \"Type\"; ForType = \"Machine\"; KeyAttributes = { \"Name\" } ]",
                    NULL};
    char *imp[] = {ADS_PROGRAM, "-d", (char *)store, "import", "--type", "Machine",
                   (char *)file, NULL};
    if (run(decl, NULL, NULL, &ignore, NULL))
        return -1;
    return run(imp, NULL, NULL, secs, rss);
}

static int import_sqlite(const char *db, const char *file, const char *dir, double *secs,
                         long *rss)
{
    bench_rm_rf(db);
    char script[1200];
    snprintf(script, sizeof script, "%s/import.sql", dir);
    FILE *f = fopen(script, "w");
    if (!f)
        return bench_fail(script, strerror(errno));
    /* the sqlite3 program's own import: each line one value (ascii mode has no
     * quoting), then checked, minified and keyed as the JSON table wants; WAL
     * with synchronous=NORMAL, as adstore import commits without syncing and
     * syncs at the end */
    fprintf(f,
            "PRAGMA journal_mode=WAL;\n"
            "PRAGMA synchronous=NORMAL;\n"
            "CREATE TABLE docs (type TEXT, key TEXT, doc TEXT, PRIMARY KEY(type, key)) "
            "WITHOUT ROWID;\n"
            "CREATE TEMP TABLE raw (line TEXT);\n"
            ".mode ascii\n"
            ".separator \"\\037\" \"\\n\"\n"
            ".import '%s' raw\n"
            "INSERT INTO docs SELECT 'Machine', json_extract(line, '$.Name'), json(line) "
            "FROM raw;\n",
            file);
    fclose(f);
    char *argv[] = {"sqlite3", "-batch", (char *)db, NULL};
    return run(argv, script, NULL, secs, rss);
}

static int count_sqlite(const char *db, uint64_t *n)
{
    char out[1200];
    snprintf(out, sizeof out, "%s.count", db);
    char *argv[] = {"sqlite3", (char *)db, "SELECT count(*) FROM docs", NULL};
    double ignore;
    if (run(argv, NULL, out, &ignore, NULL))
        return -1;
    FILE *f = fopen(out, "r");
    int ok = f && fscanf(f, "%" SCNu64, n) == 1;
    if (f)
        fclose(f);
    unlink(out);
    return ok ? 0 : bench_fail("sqlite3", "no count");
}

static int count_adstore(const char *store, uint64_t *latest, uint64_t *history)
{
    ads_db *db;
    ads_txn *txn;
    ads_error err;
    if (ads_db_open(&db, store, ADS_DB_READONLY, &err))
        return bench_fail(store, err.message);
    if (ads_txn_begin(&txn, db, ADS_TXN_READONLY, &err)) {
        ads_db_close(db);
        return bench_fail(store, err.message);
    }
    const ads_type *t;
    ads_type_counts c;
    int rc = ads_txn_type(&t, txn, "Machine", 7, &err) ||
             ads_txn_type_counts(&c, txn, t, &err);
    ads_txn_abort(txn);
    ads_db_close(db);
    if (rc)
        return bench_fail(store, err.message);
    *latest = c.records;
    *history = c.history;
    return 0;
}

static int p1_command(const config *cfg)
{
    uint64_t n = cfg->quick ? 50000 : 1000000;
    char file[1100], store[1100], db[1100];
    snprintf(file, sizeof file, "%s/machines.jsonl", cfg->dir);
    snprintf(store, sizeof store, "%s/import-adstore", cfg->dir);
    snprintf(db, sizeof db, "%s/import-sqlite.db", cfg->dir);
    if (write_jsonl(file, n))
        return -1;
    double mine[32], base[32];
    long rss_a = 0, rss_s = 0;
    int reps = cfg->reps > 3 ? 3 : cfg->reps;
    for (int r = 0; r < reps; r++)
        if (import_adstore(store, file, &mine[r], &rss_a) ||
            import_sqlite(db, file, cfg->dir, &base[r], &rss_s))
            return -1;
    uint64_t a = 0, h = 0, s = 0;
    if (count_adstore(store, &a, &h) || count_sqlite(db, &s))
        return -1;
    if (a != n || s != n) {
        fprintf(stderr, "adstore-bench: P1 import counts: adstore %" PRIu64 ", SQLite %" PRIu64
                        ", expected %" PRIu64 "\n",
                a, s, n);
        return -1;
    }
    bench_row("P1", "import command (JSONL)", n, bench_median(mine, reps), "sqlite3 .import+json()",
              bench_median(base, reps), 0, 2.5);
    /* memory at a quarter of the size */
    double ignore;
    long rss_small = 0;
    if (write_jsonl(file, n / 4) || import_adstore(store, file, &ignore, &rss_small))
        return -1;
    bench_note("memory: adstore import of %" PRIu64 " records: peak RSS %ld kB; of %" PRIu64
               ": %ld kB (sqlite3 import of %" PRIu64 ": %ld kB)",
               n / 4, rss_small, n, rss_a, n, rss_s);
    if (!cfg->keep) {
        bench_rm_rf(store);
        bench_rm_rf(db);
        unlink(file);
    }
    return 0;
}

/* ---- P8 dump and restore ---- */

/* The P2 store: records x rounds rows of Machine records (each round updates
 * every record's Memory and LoadAvg), built with the bulk loader. */
static int make_p2_store(const char *path, uint64_t records, int rounds)
{
    bench_rm_rf(path);
    ads_db *db;
    ads_error err;
    ads_db_options o = {(size_t)4 << 30};
    if (ads_db_open_ex(&db, path, ADS_DB_CREATE | ADS_DB_NOSYNC, &o, &err))
        return bench_fail(path, err.message);
    ads_arena *a = ads_arena_new();
    ads_bulk *b;
    ads_bulk_options bo = {.batch = 10000};
    const ads_record *r;
    const char *decl = "[ AdType = \"Type\"; ForType = \"Machine\"; KeyAttributes = { \"Name\" } ]";
    int rc = ads_record_parse(&r, a, decl, strlen(decl), &err) ||
             ads_bulk_begin(&b, db, &bo, &err) || ads_bulk_add(b, r, &err);
    for (int round = 0; !rc && round < rounds; round++) {
        for (uint64_t i = 0; !rc && i < records; i++) {
            char text[400];
            uint64_t h = bench_mix(i), v = bench_mix(i * 1000003 + (uint64_t)round);
            ads_arena_reset(a);
            if (round == 0)
                snprintf(text, sizeof text,
                         "[ AdType = \"Machine\"; Name = \"node%07" PRIu64 ".example.org\"; "
                         "Memory = %d; Arch = \"X86_64\"; Disk = %" PRIu64 "; Owner = \"alice\"; "
                         "Platform = \"linux\"; Cpus = %" PRIu64 "; LoadAvg = %.2f; "
                         "State = \"Unclaimed\" ]",
                         i, 256 << (h % 7), (h >> 12) % 400000, 1 + (h >> 42) % 64,
                         (double)(v % 400) / 100.0);
            else
                snprintf(text, sizeof text,
                         "[ AdType = \"Machine\"; Name = \"node%07" PRIu64 ".example.org\"; "
                         "Memory = %d; LoadAvg = %.2f ]",
                         i, 256 << (v % 7), (double)(v % 400) / 100.0);
            rc = ads_record_parse(&r, a, text, strlen(text), &err) || ads_bulk_add(b, r, &err);
        }
    }
    if (!rc)
        rc = ads_bulk_end(b, &err);
    ads_arena_free(a);
    ads_db_close(db);
    return rc ? bench_fail("P8 store", err.message) : 0;
}

static int same_file(const char *a, const char *b)
{
    char cmd[2400];
    snprintf(cmd, sizeof cmd, "cmp -s '%s' '%s'", a, b);
    return system(cmd) == 0;
}

static int p8_dump_restore(const config *cfg)
{
    uint64_t records = cfg->quick ? 2000 : 10000;
    int rounds = cfg->quick ? 25 : 100;
    char src[1100], dumpf[1100], again[1100], dst[1100], mdump[1100], mdst[1100];
    snprintf(src, sizeof src, "%s/p8-adstore", cfg->dir);
    snprintf(dumpf, sizeof dumpf, "%s/p8.dump", cfg->dir);
    snprintf(again, sizeof again, "%s/p8-again.dump", cfg->dir);
    snprintf(dst, sizeof dst, "%s/p8-restored", cfg->dir);
    snprintf(mdump, sizeof mdump, "%s/p8.mdbdump", cfg->dir);
    snprintf(mdst, sizeof mdst, "%s/p8-mdbload", cfg->dir);
    if (make_p2_store(src, records, rounds))
        return -1;
    uint64_t latest, hist;
    if (count_adstore(src, &latest, &hist))
        return -1;
    /* every row of the store: the Machine rows and the few metadata records */
    double d[32], r[32], md[32], ml[32];
    long rss_d = 0, rss_r = 0;
    int reps = cfg->reps > 3 ? 3 : cfg->reps;
    for (int k = 0; k < reps; k++) {
        char *dump[] = {ADS_PROGRAM, "-d", src, "dump", "-o", dumpf, NULL};
        char *restore[] = {ADS_PROGRAM, "-d", dst, "restore", dumpf, NULL};
        char *mdb_dump[] = {"mdb_dump", "-a", src, NULL};
        char *mdb_load[] = {"mdb_load", "-f", mdump, mdst, NULL};
        bench_rm_rf(dst);
        bench_rm_rf(mdst);
        if (mkdir(mdst, 0700))
            return bench_fail(mdst, strerror(errno));
        if (run(dump, NULL, NULL, &d[k], &rss_d) || run(mdb_dump, NULL, mdump, &md[k], NULL) ||
            run(restore, NULL, NULL, &r[k], &rss_r) || run(mdb_load, NULL, NULL, &ml[k], NULL))
            return -1;
    }
    /* the restored store gives the same dump */
    char *dump2[] = {ADS_PROGRAM, "-d", dst, "dump", "-o", again, NULL};
    double ignore;
    if (run(dump2, NULL, NULL, &ignore, NULL))
        return -1;
    if (!same_file(dumpf, again))
        return bench_fail("P8", "the restored store's dump differs from the original dump");
    uint64_t rows = latest + hist;
    bench_row("P8", "dump command", rows, bench_median(d, reps), "mdb_dump -a",
              bench_median(md, reps), 1e6, 0);
    bench_row("P8", "restore command", rows, bench_median(r, reps), "mdb_load",
              bench_median(ml, reps), 1e6, 1.0);
    /* memory at a quarter of the rows */
    long rss_ds = 0, rss_rs = 0;
    if (make_p2_store(src, records, rounds / 4))
        return -1;
    char *dump[] = {ADS_PROGRAM, "-d", src, "dump", "-o", dumpf, NULL};
    char *restore[] = {ADS_PROGRAM, "-d", dst, "restore", dumpf, NULL};
    bench_rm_rf(dst);
    if (run(dump, NULL, NULL, &ignore, &rss_ds) || run(restore, NULL, NULL, &ignore, &rss_rs))
        return -1;
    bench_note("P8: %" PRIu64 " Machine rows (%" PRIu64 " records x %d updates); the restored "
               "store dumps to the same bytes. mdb_load (lmdb-utils 0.9.24) has no append mode.",
               rows, records, rounds);
    bench_note("memory: adstore dump of %" PRIu64 " rows: peak RSS %ld kB, of %" PRIu64
               ": %ld kB; restore: %ld kB, %ld kB",
               records * (uint64_t)(rounds / 4), rss_ds, rows, rss_d, rss_rs, rss_r);
    if (!cfg->keep) {
        bench_rm_rf(src);
        bench_rm_rf(dst);
        bench_rm_rf(mdst);
        unlink(dumpf);
        unlink(again);
        unlink(mdump);
    }
    return 0;
}

int bench_tools(const config *cfg)
{
    int rc = 0;
    if (bench_selected(cfg, "P1", "import command") && p1_command(cfg))
        rc = -1;
    if (bench_selected(cfg, "P8", "dump") && p8_dump_restore(cfg))
        rc = -1;
    return rc;
}
