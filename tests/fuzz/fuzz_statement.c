/*
 * tests/fuzz/fuzz_statement.c: whole statements (parse, plan, run) on a
 * small store.
 *
 * Each input is statement text; up to four statements of it run, one after
 * another, on a fresh copy of a store made once per process: two keyed types
 * (Machine, Job) with a few records and some history, a keyless type, rows in
 * the past for timeline queries. The store is opened without sync and each
 * statement runs under tight limits (16 MiB, 2 s) so that no input hangs.
 *
 * Properties. A statement either succeeds or fails with a negative code, the
 * same code in the error and a non-empty message; a statement that fails
 * leaves the store as it was (every row, history and deleted rows included,
 * compared as text before and after). After the input the store verifies.
 * The copies live in a fresh mkdtemp folder (under /dev/shm when there is
 * one), removed at exit.
 */
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "query/query.h"
#include "tests/fuzz/fuzz.h"

#define MAX_STATEMENTS 4

static char base[512];      /* the folder holding everything */
static char tmpl[600];      /* the template store */
static char work[600];      /* the copy an input runs on */
static unsigned char *image; /* the template's data.mdb */
static size_t image_len;
static char *template_rows;  /* every row of the template, as text */

static const char *const setup_text =
    "STORE [ AdType = \"Type\"; ForType = \"Machine\"; KeyAttributes = { \"Name\" } ];"
    "STORE [ AdType = \"Type\"; ForType = \"Job\"; KeyAttributes = { \"Cluster\", \"Proc\" } ];"
    "STORE [ AdType = \"Type\"; ForType = \"Event\" ];"
    "STORE [ AdType = \"Machine\"; Name = \"a\"; Memory = 100; Arch = \"X86_64\"; Cpus = 4; "
    "_Timestamp = `2024-01-01T00:00:00Z` ];"
    "STORE [ AdType = \"Machine\"; Name = \"a\"; Memory = 300; "
    "_Timestamp = `2024-01-01T00:30:00Z` ];"
    "STORE [ AdType = \"Machine\"; Name = \"b\"; Memory = 200; Arch = \"ARM\"; "
    "Requirements = TARGET.Memory > 10; _Timestamp = `2024-01-01T00:10:00Z` ];"
    "STORE [ AdType = \"Machine\"; Name = \"c\"; Memory = 50; Arch = \"X86_64\"; "
    "_Timestamp = `2024-01-01T00:20:00Z` ];"
    "STORE [ AdType = \"Machine\"; Name = \"c\"; _Deleted = true; "
    "_Timestamp = `2024-01-01T01:00:00Z` ];"
    "STORE [ AdType = \"Job\"; Cluster = 1; Proc = 0; Owner = \"ann\"; Memory = 64; "
    "Machine = \"a\"; Args = { 1, \"x\", [ y = 2 ] } ];"
    "STORE [ AdType = \"Job\"; Cluster = 1; Proc = 1; Owner = \"bob\"; Memory = 512 ];"
    "STORE [ AdType = \"Event\"; What = \"start\"; At = absTime(\"2024-01-01T00:00:00Z\") ]";

static void fail_setup(const char *what, const ads_error *err)
{
    fprintf(stderr, "fuzz_statement: %s: %s\n", what, err ? err->message : "");
    abort();
}

static void rm_store(const char *dir)
{
    char p[700];
    snprintf(p, sizeof p, "%s/data.mdb", dir);
    unlink(p);
    snprintf(p, sizeof p, "%s/lock.mdb", dir);
    unlink(p);
    rmdir(dir);
}

static void cleanup_all(void)
{
    rm_store(work);
    rm_store(tmpl);
    rmdir(base);
    free(image);
    free(template_rows);
}

static unsigned char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *p = n > 0 ? malloc((size_t)n) : NULL;
    if (p && fread(p, 1, (size_t)n, f) != (size_t)n) {
        free(p);
        p = NULL;
    }
    fclose(f);
    *len = p ? (size_t)n : 0;
    return p;
}

/* Run every statement of text on q; 0, or the first failure's code (the
 * statements before it stay). */
static int run_all(ads_query *q, const char *text, size_t len, size_t max, ads_error *err)
{
    size_t pos = 0, start, end, n = 0;
    while (n < max && ads_query_next_statement(text, len, &pos, &start, &end) == 1) {
        int rc = ads_query_exec_at(q, text, len, start, end, NULL, NULL, NULL, err);
        if (rc)
            return rc;
        n++;
    }
    return 0;
}

static void make_template(void)
{
    const char *shm = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    snprintf(base, sizeof base, "%s/ads-fuzz-stmt-XXXXXX", shm);
    if (!mkdtemp(base))
        fail_setup("mkdtemp", NULL);
    snprintf(tmpl, sizeof tmpl, "%s/template", base);
    snprintf(work, sizeof work, "%s/work", base);
    atexit(cleanup_all);
    ads_db *db;
    ads_query *q;
    ads_error err;
    if (ads_db_open(&db, tmpl, ADS_DB_CREATE | ADS_DB_NOSYNC, &err))
        fail_setup("create", &err);
    if (ads_query_new(&q, db, &err) || run_all(q, setup_text, strlen(setup_text), 100, &err))
        fail_setup("setup", &err);
    ads_query_free(q);
    ads_db_close(db);
    char p[700];
    snprintf(p, sizeof p, "%s/data.mdb", tmpl);
    if (!(image = read_file(p, &image_len)))
        fail_setup("read the template", NULL);
}

/* A fresh copy of the template at work. */
static void copy_template(void)
{
    rm_store(work);
    if (mkdir(work, 0700) != 0)
        fail_setup("mkdir", NULL);
    char p[700];
    snprintf(p, sizeof p, "%s/data.mdb", work);
    FILE *f = fopen(p, "wb");
    if (!f || fwrite(image, 1, image_len, f) != image_len || fclose(f) != 0)
        fail_setup("copy the template", NULL);
}

/* Every row of the store as text. */
static char *snapshot(ads_query *q)
{
    static const char all[] = "SELECT * WHERE __Latest is __Latest && _Deleted is _Deleted";
    FILE *f;
    char *text = NULL;
    size_t len = 0;
    if (!(f = open_memstream(&text, &len)))
        fail_setup("open_memstream", NULL);
    ads_writer *w;
    ads_error err;
    if (ads_writer_new(&w, ADS_FORMAT_NATIVE, f, &err))
        fail_setup("writer", &err);
    ads_sink sink = ads_writer_sink(w);
    ads_exec_options opt = {true};
    ads_query_set_limits(q, 0, 0);
    if (ads_query_exec(q, all, sizeof all - 1, &sink, &opt, NULL, &err))
        fail_setup("snapshot", &err);
    ads_writer_free(w);
    fclose(f);
    return text;
}

static void count_problem(void *ctx, const char *problem)
{
    fprintf(stderr, "verify: %s\n", problem);
    ++*(int *)ctx;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!image)
        make_template();
    copy_template();
    ads_db *db;
    ads_query *q;
    ads_error err;
    if (ads_db_open(&db, work, ADS_DB_NOSYNC, &err) || ads_query_new(&q, db, &err))
        fail_setup("open the copy", &err);
    const char *text = (const char *)data;
    size_t pos = 0, start, end;
    /* the store as it stands: the template's until a write succeeds */
    if (!template_rows)
        template_rows = snapshot(q);
    char *rows = NULL;
    for (int n = 0; n < MAX_STATEMENTS; n++) {
        if (ads_query_next_statement(text, size, &pos, &start, &end) != 1)
            break;
        ads_query_set_limits(q, (size_t)16 << 20, 2.0);
        memset(&err, 0, sizeof err);
        ads_exec_info info;
        int rc = ads_query_exec_at(q, text, size, start, end, NULL, NULL, &info, &err);
        fuzz_check(rc <= 0);
        if (rc < 0) {
            fuzz_check(err.code == rc && err.message[0] != '\0');
            char *after = snapshot(q);
            fuzz_check(strcmp(rows ? rows : template_rows, after) == 0);
            free(after);
        } else if (info.kind != ADS_STMT_SELECT) {
            free(rows);
            rows = snapshot(q);
        }
    }
    free(rows);
    int problems = 0;
    ads_verify_result vr;
    fuzz_check(ads_db_verify(&vr, db, count_problem, &problems, &err) == 0 && problems == 0 &&
               vr.problems == 0);
    ads_query_free(q);
    ads_db_close(db);
    return 0;
}
