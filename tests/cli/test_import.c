/*
 * tests/cli/test_import.c: `adstore import`, `dump`, `restore` and `backup`
 * through the real program. Every input format (long form, new ClassAd
 * syntax bare and in a list, JSON arrays and lines, XML, both dump formats)
 * chosen by name, by content, by --format and from stdin, with the values
 * and types they give; --type; bad records of each format with their
 * FILE:LINE[:COLUMN] messages, failing batches left out and earlier ones
 * kept; --keep-going; resuming after a failure, after a kill -9 at a random
 * moment, refusing a changed file, --restart and --skip; --backfill ids
 * dated by each record's _Timestamp and backfilled rows filed as history;
 * dump, restore and dump again byte for byte, with the same query answers;
 * the refusals of restore and backup; a backup taken while another process
 * imports; and the memory of import, dump and restore staying flat.
 * tests/engine/test_dump.c covers the engine level underneath.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "tests/cli/run_check.h"

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif

extern char **environ;

static char *dir;    /* a fresh directory per test: stores and input files go in it */
static char **paths; /* what P() gave out in this test */
static size_t npaths, cappaths;

static int setup(void **state)
{
    (void)state;
    dir = make_temp_dir();
    return dir ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    remove_tree(dir);
    free(dir);
    for (size_t i = 0; i < npaths; i++)
        free(paths[i]);
    free(paths);
    paths = NULL;
    npaths = cappaths = 0;
    return 0;
}

/* dir/name, allocated; freed by teardown. */
static const char *P(const char *name)
{
    if (npaths == cappaths) {
        cappaths = cappaths ? 2 * cappaths : 64;
        paths = realloc(paths, cappaths * sizeof *paths);
        assert_non_null(paths);
    }
    char *b = malloc(strlen(dir) + strlen(name) + 2);
    assert_non_null(b);
    sprintf(b, "%s/%s", dir, name);
    paths[npaths++] = b;
    return b;
}


static void contains_(const char *hay, const char *needle, int line)
{
    if (!strstr(hay, needle))
        fail_msg("line %d: expected to find\n%s\n--- in ---\n%s---", line, needle, hay);
}
static void lacks_(const char *hay, const char *needle, int line)
{
    if (strstr(hay, needle))
        fail_msg("line %d: did not expect\n%s\n--- in ---\n%s---", line, needle, hay);
}
#define contains(h, n) contains_((h), (n), __LINE__)
#define lacks(h, n) lacks_((h), (n), __LINE__)

static void write_bytes(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(p, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
}

static void write_file(const char *path, const char *text)
{
    write_bytes(path, text, strlen(text));
}

/* The whole file, NUL-terminated; *len its size. Caller frees. */
static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("cannot read %s: %s", path, strerror(errno));
    char *p = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        if (n + 65536 + 1 > cap) {
            cap = cap ? cap * 2 : 131072;
            p = realloc(p, cap);
            assert_non_null(p);
        }
        size_t k = fread(p + n, 1, 65536, f);
        n += k;
        if (k == 0)
            break;
    }
    fclose(f);
    p[n] = '\0';
    if (len)
        *len = n;
    return p;
}

static bool same_file(const char *a, const char *b)
{
    size_t na, nb;
    char *pa = slurp(a, &na), *pb = slurp(b, &nb);
    bool same = na == nb && memcmp(pa, pb, na) == 0;
    free(pa);
    free(pb);
    return same;
}

static bool exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

static long long file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long long)st.st_size : 0;
}

/* stdout of a statement in native format. Caller frees. */
static char *query(const char *db, const char *stmt)
{
    run_result r;
    RUN(r, 0, "-d", db, "execute", "-f", "native", stmt);
    free(r.err);
    return r.out;
}

/* A statement whose one row is [ n = N ] or [ n = N; d = D ]. */
static long query2(const char *db, const char *stmt, long *d)
{
    char *out = query(db, stmt);
    long n = -1, dd = -1;
    int got = sscanf(out, "[ n = %ld; d = %ld ]", &n, &dd);
    if (got < 1 || (d && got < 2))
        fail_msg("%s: unexpected output '%s'", stmt, out);
    free(out);
    if (d)
        *d = dd;
    return n;
}

static long count_of(const char *db, const char *type)
{
    char stmt[200];
    snprintf(stmt, sizeof stmt, "SELECT count(*) AS n FROM %s", type);
    return query2(db, stmt, NULL);
}

static void declare_machine(const char *db)
{
    DO(0, "-d", db, "execute",
       "STORE [ AdType = \"Type\"; ForType = \"Machine\"; KeyAttributes = { \"Name\" } ]");
}

static void declare_job(const char *db)
{
    DO(0, "-d", db, "execute",
       "STORE [ AdType = \"Type\"; ForType = \"Job\"; AutoGenerateKey = true ]");
}

/* Start the program without waiting: stdin from in_path (NULL: /dev/null),
 * stdout and stderr to out_path and err_path (NULL: /dev/null). */
static pid_t spawn_adstore(const char *const *argv, const char *in_path, const char *out_path,
                           const char *err_path)
{
    size_t argc = 0;
    while (argv[argc])
        argc++;
    char **args = calloc(argc + 2, sizeof *args);
    assert_non_null(args);
    args[0] = (char *)ADS_PROGRAM;
    for (size_t i = 0; i < argc; i++)
        args[i + 1] = (char *)argv[i];
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, in_path ? in_path : "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, out_path ? out_path : "/dev/null",
                                     O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_addopen(&fa, 2, err_path ? err_path : "/dev/null",
                                     O_WRONLY | O_CREAT | O_TRUNC, 0600);
    pid_t pid;
    int rc = posix_spawn(&pid, ADS_PROGRAM, &fa, NULL, args, environ);
    posix_spawn_file_actions_destroy(&fa);
    free(args);
    assert_int_equal(rc, 0);
    return pid;
}

/* Exit status (or 128 + signal) of a spawned child. */
static int wait_child(pid_t pid)
{
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            fail_msg("waitpid: %s", strerror(errno));
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Spawn, wait, and return the exit status; stderr kept in err_path. */
static int run_files(const char *const *argv, const char *in_path, const char *out_path,
                     const char *err_path)
{
    return wait_child(spawn_adstore(argv, in_path, out_path, err_path));
}

static void sleep_us(long us)
{
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* ---- the same Machine record in every format ---- */

/* What `SELECT *` prints (native) for the record named `name` in every format:
 * an integer, a real, a boolean, strings (one with a newline), a list, a
 * nested record, an absolute time and an expression kept unevaluated. */
static void canonical(char *out, size_t cap, const char *name)
{
    snprintf(out, cap,
             "[ AdType = \"Machine\"; Arch = \"X86_64\"; Busy = true; LoadAvg = 0.25; Memory = "
             "2048; Name = \"%s\"; Note = \"two\\nlines\"; Req = Memory > 1024; Source = [ Host "
             "= \"x\"; Port = 9618 ]; Start = `2020-03-01T10:00:00Z`; Tags = { \"a\", \"b\" } ]\n",
             name);
}

typedef enum form { FM_LONG, FM_CLASSAD, FM_CLASSAD_LIST, FM_JSON, FM_JSONL, FM_XML } form;
static const char *const form_names[] = {"long", "classad", "classad-list", "json", "jsonl", "xml"};
static const char *const form_ext[] = {".long", ".classad", ".classad", ".json", ".jsonl", ".xml"};
static const char *const form_option[] = {"long", "classad", "classad", "json", "json", "xml"};

/* The document of two canonical records named base-1 and base-2. Caller frees. */
static char *machines_doc(form fm, const char *base)
{
    char *p;
    size_t n;
    FILE *f = open_memstream(&p, &n);
    assert_non_null(f);
    if (fm == FM_JSON)
        fprintf(f, "[\n");
    else if (fm == FM_CLASSAD_LIST)
        fprintf(f, "/* two records in a list */\n{\n");
    else if (fm == FM_XML)
        fprintf(f, "<?xml version=\"1.0\"?>\n<!DOCTYPE classads SYSTEM \"classads.dtd\">\n"
                   "<classads>\n");
    for (int i = 1; i <= 2; i++) {
        switch (fm) {
        case FM_LONG:
            fprintf(f,
                    "# condor_status -long, record %d\n"
                    "AdType = \"Machine\"\nName = \"%s-%d\"\nMemory = 2048\nLoadAvg = 0.25\n"
                    "Busy = true\nArch = \"X86_64\"\nTags = { \"a\", \"b\" }\n"
                    "Source.Host = \"x\"\nSource.Port = 9618\n  # an indented comment\n"
                    "Start = absTime(\"2020-03-01T10:00:00Z\")\nReq = Memory > 1024\n"
                    "Note := \"two\\nlines\"\n\n%s",
                    i, base, i, i == 1 ? "\n" : "");
            break;
        case FM_CLASSAD:
        case FM_CLASSAD_LIST:
            fprintf(f,
                    "[ AdType = \"Machine\"; Name = \"%s-%d\"; Memory = 2048; LoadAvg = 0.25;\n"
                    "  Busy = true; Arch = \"X86_64\"; Tags = { \"a\", \"b\" }; // a comment\n"
                    "  Source = [ Host = \"x\"; Port = 9618 ];\n"
                    "  Start = absTime(\"2020-03-01T10:00:00Z\"); Req = Memory > 1024;\n"
                    "  Note = \"two\\nlines\" ]%s\n",
                    base, i, fm == FM_CLASSAD_LIST && i == 1 ? "," : "");
            break;
        case FM_JSON:
        case FM_JSONL:
            fprintf(f,
                    "%s{\"AdType\":\"Machine\",\"Name\":\"%s-%d\",\"Memory\":2048,\"LoadAvg\":0.25,"
                    "\"Busy\":true,\"Arch\":\"X86_64\",\"Tags\":[\"a\",\"b\"],"
                    "\"Source\":{\"Host\":\"x\",\"Port\":9618},"
                    "\"Start\":\"\\/Expr(`2020-03-01T10:00:00Z`)\\/\","
                    "\"Req\":\"\\/Expr(Memory > 1024)\\/\",\"Note\":\"two\\nlines\"}%s\n",
                    fm == FM_JSON ? "  " : "", base, i, fm == FM_JSON && i == 1 ? "," : "");
            break;
        case FM_XML:
            fprintf(
                f,
                "<c>\n    <a n=\"AdType\"><s>Machine</s></a>\n    <a n=\"Name\"><s>%s-%d</s></a>\n"
                "    <a n=\"Memory\"><i>2048</i></a>\n    <a n=\"LoadAvg\"><r>0.25</r></a>\n"
                "    <a n=\"Busy\"><b v=\"t\"/></a>\n    <a n=\"Arch\"><s>X86_64</s></a>\n"
                "    <a n=\"Tags\"><l><s>a</s><s>b</s></l></a>\n"
                "    <a n=\"Source\"><c><a n=\"Host\"><s>x</s></a><a n=\"Port\"><i>9618</i></a>"
                "</c></a>\n    <a n=\"Start\"><at>2020-03-01T10:00:00Z</at></a>\n"
                "    <a n=\"Req\"><e>Memory &gt; 1024</e></a>\n"
                "    <a n=\"Note\"><s>two\\nlines</s></a>\n</c>\n",
                base, i);
            break;
        }
    }
    if (fm == FM_JSON)
        fprintf(f, "]\n");
    else if (fm == FM_CLASSAD_LIST)
        fprintf(f, "}\n");
    else if (fm == FM_XML)
        fprintf(f, "</classads>\n");
    fclose(f);
    return p;
}

/* Every record named in names[0..n) is in db exactly as canonical() says, and
 * the type holds nothing else. */
static void expect_machines(const char *db, char names[][64], size_t n)
{
    char *out = query(db, "SELECT * FROM Machine");
    for (size_t i = 0; i < n; i++)
        for (int k = 1; k <= 2; k++) {
            char name[80], want[600];
            snprintf(name, sizeof name, "%.63s-%d", names[i], k);
            canonical(want, sizeof want, name);
            contains(out, want);
        }
    free(out);
    assert_int_equal(count_of(db, "Machine"), (long)(2 * n));
}

static void import__every_format_by_name_content_option_and_stdin(void **state)
{
    (void)state;
    const char *db = P("db");
    declare_machine(db);
    char names[64][64];
    size_t nn = 0;
    for (int fm = FM_LONG; fm <= FM_XML; fm++) {
        char base[64], file[128];
        /* by extension */
        snprintf(base, sizeof base, "%s-ext", form_names[fm]);
        char *text = machines_doc((form)fm, base);
        snprintf(file, sizeof file, "%s%s", base, form_ext[fm]);
        write_file(P(file), text);
        free(text);
        run_result r;
        RUN(r, 0, "-d", db, "import", P(file));
        contains(r.err, "import: 2 records from 1 file,");
        run_free(&r);
        snprintf(names[nn++], 64, "%s", base);
        /* by content: .txt and no extension */
        for (int how = 0; how < 2; how++) {
            snprintf(base, sizeof base, "%s-sniff%d", form_names[fm], how);
            text = machines_doc((form)fm, base);
            snprintf(file, sizeof file, "%s%s", base, how ? "" : ".txt");
            write_file(P(file), text);
            free(text);
            DO(0, "-d", db, "import", P(file));
            snprintf(names[nn++], 64, "%s", base);
        }
        /* by --format, against a name that says another format */
        snprintf(base, sizeof base, "%s-option", form_names[fm]);
        text = machines_doc((form)fm, base);
        snprintf(file, sizeof file, "%s%s", base,
                 fm == FM_JSON || fm == FM_JSONL ? ".xml" : ".json");
        write_file(P(file), text);
        free(text);
        DO(0, "-d", db, "import", "--format", form_option[fm], P(file));
        snprintf(names[nn++], 64, "%s", base);
        /* standard input, recognised by content */
        snprintf(base, sizeof base, "%s-stdin", form_names[fm]);
        text = machines_doc((form)fm, base);
        RUN_IN(r, text, 0, "-d", db, "import", "-");
        /* a pipe has no size: the summary counts the bytes read */
        char said[100];
        snprintf(said, sizeof said, "import: 2 records from 1 file, %zu bytes,", strlen(text));
        free(text);
        contains(r.err, said);
        run_free(&r);
        snprintf(names[nn++], 64, "%s", base);
    }
    expect_machines(db, names, nn);

    /* --format is obeyed even when it is wrong: JSON read as long form fails */
    char *text = machines_doc(FM_JSONL, "wrong");
    write_file(P("wrong.jsonl"), text);
    free(text);
    run_result r;
    RUN(r, 1, "-d", db, "import", "-f", "long", P("wrong.jsonl"));
    char want[1400];
    snprintf(want, sizeof want, "%s:1:1: expected an attribute name, found '{'\n",
             P("wrong.jsonl"));
    contains(r.err, want);
    run_free(&r);
    /* and --format on stdin; HTCondor's XML on one line */
    RUN_IN(r,
           "<classads><c><a n=\"AdType\"><s>Machine</s></a><a n=\"Name\"><s>one-line</s></a>"
           "<a n=\"X\"><i>1</i></a></c></classads>",
           0, "-d", db, "import", "--format", "xml", "-");
    run_free(&r);
    char *out = query(db, "SELECT * FROM Machine WHERE Name == \"one-line\"");
    assert_string_equal(out, "[ AdType = \"Machine\"; Name = \"one-line\"; X = 1 ]\n");
    free(out);
    /* an unknown --format is a usage error */
    RUN(r, 2, "-d", db, "import", "--format", "yaml", P("wrong.jsonl"));
    contains(r.err, "unknown format 'yaml'; expected long, classad, json, xml or dump");
    run_free(&r);
    assert_int_equal(count_of(db, "Machine"), (long)(2 * nn + 1));
}

/* A store with history (an update, a delete), two types; its dumps in both
 * formats are imported into new stores by every way of naming them. */
static void import__dumps_of_another_store_in_both_formats(void **state)
{
    (void)state;
    const char *src = P("src");
    declare_machine(src);
    declare_job(src);
    char *text = machines_doc(FM_CLASSAD, "d");
    write_file(P("d.classad"), text);
    free(text);
    DO(0, "-d", src, "import", P("d.classad"));
    DO(0, "-d", src, "execute", "UPDATE Machine SET Memory = 4096 WHERE Name == \"d-1\"");
    DO(0, "-d", src, "execute",
       "STORE [ AdType = \"Machine\"; Name = \"gone\"; Memory = 1 ], [ AdType = \"Job\"; N = 1 ], "
       "[ AdType = \"Job\"; N = 2 ]");
    DO(0, "-d", src, "execute", "DELETE FROM Machine WHERE Name == \"gone\"");
    DO(0, "-d", src, "dump", "-o", P("src.dump"));
    DO(0, "-d", src, "dump", "--format", "text", "-o", P("srctext.dump"));
    const char *history = "SELECT Name, Memory, _Timestamp, _Deleted FROM Machine WHERE @anytime()";
    char *want_history = query(src, history);
    char *want_latest = query(src, "SELECT * FROM Machine");
    char *want_jobs = query(src, "SELECT * FROM Job");
    assert_non_null(strstr(want_history, "Memory = 2048"));
    assert_non_null(strstr(want_history, "Memory = 4096"));

    /* msgpack: .dump, no extension, --format with another name, stdin */
    size_t n;
    char *bin = slurp(P("src.dump"), &n);
    write_bytes(P("copy"), bin, n);
    write_bytes(P("copy.json"), bin, n);
    free(bin);
    char *txt = slurp(P("srctext.dump"), NULL);
    write_file(P("copytext.txt"), txt);
    struct {
        const char *file, *format;
        bool from_stdin;
    } ways[] = {
        {"src.dump", NULL, false},    {"copy", NULL, false},         {"copy.json", "dump", false},
        {"src.dump", NULL, true},     {"srctext.dump", NULL, false}, {"copytext.txt", NULL, false},
        {"copy.json", "DUMP", false}, {"srctext.dump", NULL, true},
    };
    for (size_t i = 0; i < sizeof ways / sizeof ways[0]; i++) {
        char name[32];
        snprintf(name, sizeof name, "t%zu", i);
        const char *db = P(name);
        int status;
        if (ways[i].from_stdin) {
            const char *argv[] = {"-d", db, "import", "-", NULL};
            status = run_files(argv, P(ways[i].file), NULL, P("err"));
        } else if (ways[i].format) {
            const char *argv[] = {"-d", db, "import", "--format", ways[i].format, P(ways[i].file),
                                  NULL};
            status = run_files(argv, NULL, NULL, P("err"));
        } else {
            const char *argv[] = {"-d", db, "import", P(ways[i].file), NULL};
            status = run_files(argv, NULL, NULL, P("err"));
        }
        char *err = slurp(P("err"), NULL);
        if (status != 0)
            fail_msg("import of %s (way %zu): exit %d: %s", ways[i].file, i, status, err);
        free(err);
        char *got = query(db, history);
        assert_string_equal(got, want_history);
        free(got);
        got = query(db, "SELECT * FROM Machine");
        assert_string_equal(got, want_latest);
        free(got);
        got = query(db, "SELECT * FROM Job");
        assert_string_equal(got, want_jobs);
        free(got);
        DO(0, "-d", db, "verify");
    }
    free(txt);
    free(want_history);
    free(want_latest);
    free(want_jobs);
}

static void import__type_option_types_records_without_adtype(void **state)
{
    (void)state;
    const char *db = P("db");
    declare_machine(db);
    DO(0, "-d", db, "execute",
       "STORE [ AdType = \"Type\"; ForType = \"Other\"; KeyAttributes = { \"Name\" } ]");
    write_file(P("mixed.long"), "Name = \"t1\"\nMemory = 1\n\n"
                                "AdType = \"Other\"\nName = \"t2\"\n\n"
                                "Name = \"t3\"\n");
    write_file(P("mixed.jsonl"), "{\"Name\":\"t4\"}\n{\"AdType\":\"Other\",\"Name\":\"t5\"}\n");
    /* without --type a record without AdType is refused */
    run_result r;
    RUN(r, 1, "-d", db, "import", P("mixed.long"));
    char want[1400];
    snprintf(want, sizeof want,
             "%s:1: the record has neither AdType nor MyType to name its type (give every such "
             "record one with --type T)\n",
             P("mixed.long"));
    contains(r.err, want);
    run_free(&r);
    assert_int_equal(count_of(db, "Machine"), 0);
    RUN(r, 0, "-d", db, "import", "--type", "Machine", P("mixed.long"), P("mixed.jsonl"));
    contains(r.err, "import: 5 records from 2 files,");
    run_free(&r);
    char *out = query(db, "SELECT AdType, Name FROM Machine");
    assert_string_equal(out, "[ AdType = \"Machine\"; Name = \"t1\" ]\n"
                             "[ AdType = \"Machine\"; Name = \"t3\" ]\n"
                             "[ AdType = \"Machine\"; Name = \"t4\" ]\n");
    free(out);
    out = query(db, "SELECT AdType, Name FROM Other");
    assert_string_equal(out, "[ AdType = \"Other\"; Name = \"t2\" ]\n"
                             "[ AdType = \"Other\"; Name = \"t5\" ]\n");
    free(out);
    /* from stdin too, with -t */
    RUN_IN(r, "[ Name = \"t6\" ]\n", 0, "-d", db, "import", "-t", "Other", "-");
    run_free(&r);
    assert_int_equal(count_of(db, "Other"), 3);
    /* a --type that names no type: the records are refused */
    RUN_IN(r, "[ Name = \"t7\" ]\n", 1, "-d", db, "import", "-t", "Nope", "-");
    contains(r.err, "<stdin>:1: no type named Nope (store a Type record first)\n");
    run_free(&r);
}

/* ---- bad records ---- */

typedef enum fmt5 { B_LONG, B_CLASSAD, B_JSONL, B_JSON, B_XML, B_COUNT } fmt5;
static const char *const b_ext[] = {".long", ".classad", ".jsonl", ".json", ".xml"};
typedef enum rkind { R_GOOD, R_NOTYPE, R_NOKEY, R_SYNTAX, R_NOTS } rkind;

/* What the reader of each format says of the syntax error written below. */
static void syntax_message(char *out, size_t cap, fmt5 f, int k)
{
    switch (f) {
    case B_LONG:
        snprintf(out, cap, "expected an expression, found end of input");
        break;
    case B_CLASSAD:
        snprintf(out, cap, "expected an expression, found ';'");
        break;
    case B_JSONL:
        snprintf(out, cap, "trailing comma before '}'");
        break;
    case B_JSON:
        snprintf(out, cap, "expected ',' or '}' in an object, found '\"'");
        break;
    default:
        snprintf(out, cap, "bad integer '%dx' in <i>", k);
        break;
    }
}

/*
 * A file of n small Machine records (Name "tag-k", X = k; with ts, a
 * _Timestamp of 2020-03-01T10:k:00Z), record k of kind kinds[k-1]. line[k] is
 * the line the reader gives record k; *syn_line and *syn_col where the
 * (last) syntax error is.
 */
static void write_small(const char *path, fmt5 f, const char *tag, const rkind *kinds, int n,
                        bool ts, int *line, int *syn_line, int *syn_col)
{
    FILE *out = fopen(path, "w");
    assert_non_null(out);
    int ln = 1;
    if (f == B_JSON || f == B_XML) {
        fprintf(out, f == B_JSON ? "[\n" : "<classads>\n");
        ln++;
    }
    for (int k = 1; k <= n; k++) {
        rkind kind = kinds[k - 1];
        const char *type = kind == R_NOTYPE ? "Nope" : "Machine";
        const char *key = kind == R_NOKEY ? "Other" : "Name";
        bool with_ts = ts && kind != R_NOTS;
        char stamp[64], l[512];
        snprintf(stamp, sizeof stamp, "2020-03-01T10:%02d:00Z", k);
        line[k] = ln;
        switch (f) {
        case B_LONG:
            fprintf(out, "AdType = \"%s\"\n%s = \"%s-%d\"\n", type, key, tag, k);
            if (kind == R_SYNTAX) {
                snprintf(l, sizeof l, "X = (%d +", k);
                *syn_line = ln + 2;
                *syn_col = (int)strlen(l) + 1;
            } else {
                snprintf(l, sizeof l, "X = %d", k);
            }
            fprintf(out, "%s\n", l);
            ln += 3;
            if (with_ts) {
                fprintf(out, "_Timestamp = absTime(\"%s\")\n", stamp);
                ln++;
            }
            fprintf(out, "\n");
            ln++;
            break;
        case B_CLASSAD: {
            char tsa[128] = "";
            if (with_ts)
                snprintf(tsa, sizeof tsa, "; _Timestamp = absTime(\"%s\")", stamp);
            snprintf(l, sizeof l, "[ AdType = \"%s\"; %s = \"%s-%d\"; X = %d%s%s ]", type, key, tag,
                     k, k, kind == R_SYNTAX ? " + ;" : "", tsa);
            if (kind == R_SYNTAX) {
                *syn_line = ln;
                *syn_col = (int)(strstr(l, "+ ;") - l) + 3;
            }
            fprintf(out, "%s\n", l);
            ln++;
            break;
        }
        case B_JSONL:
        case B_JSON: {
            char tsa[128] = "";
            if (with_ts)
                snprintf(tsa, sizeof tsa, ",\"_Timestamp\":\"\\/Expr(`%s`)\\/\"", stamp);
            snprintf(l, sizeof l, "%s{\"AdType\":\"%s\",\"%s\":\"%s-%d\"%s\"X\":%d%s%s}%s",
                     f == B_JSON ? "  " : "", type, key, tag, k,
                     kind == R_SYNTAX && f == B_JSON ? " " : ",", k, tsa,
                     kind == R_SYNTAX && f == B_JSONL ? "," : "", f == B_JSON && k < n ? "," : "");
            if (kind == R_SYNTAX) {
                *syn_line = ln;
                *syn_col = f == B_JSONL ? (int)(strstr(l, ",}") - l) + 2
                                        : (int)(strstr(l, " \"X\"") - l) + 2;
            }
            fprintf(out, "%s\n", l);
            ln++;
            break;
        }
        default: {
            char tsa[128] = "";
            if (with_ts)
                snprintf(tsa, sizeof tsa, "<a n=\"_Timestamp\"><at>%s</at></a>", stamp);
            snprintf(l, sizeof l,
                     "<c><a n=\"AdType\"><s>%s</s></a><a n=\"%s\"><s>%s-%d</s></a>"
                     "<a n=\"X\"><i>%d%s</i></a>%s</c>",
                     type, key, tag, k, k, kind == R_SYNTAX ? "x" : "", tsa);
            if (kind == R_SYNTAX) {
                *syn_line = ln;
                *syn_col = (int)(strstr(l, "<i>") - l) + 1;
            }
            fprintf(out, "%s\n", l);
            ln++;
            break;
        }
        }
    }
    if (f == B_JSON)
        fprintf(out, "]\n");
    else if (f == B_XML)
        fprintf(out, "</classads>\n");
    assert_int_equal(fclose(out), 0);
}

static void import__a_bad_record_stops_it_and_its_batch_is_not_stored(void **state)
{
    (void)state;
    const rkind bads[] = {R_SYNTAX, R_NOTYPE, R_NOKEY, R_NOTS};
    const char *const bad_names[] = {"syntax", "notype", "nokey", "nots"};
    for (int f = 0; f < B_COUNT; f++)
        for (int b = 0; b < 4; b++) {
            char name[64], file[80];
            snprintf(name, sizeof name, "%s-%s", b_ext[f] + 1, bad_names[b]);
            snprintf(file, sizeof file, "%s%s", name, b_ext[f]);
            const char *db = P(name);
            declare_machine(db);
            /* records 1-5 good, 6 bad, 7 good; batches of 2: 1-2 and 3-4
             * commit, 5-6 fails whole */
            rkind kinds[7] = {R_GOOD, R_GOOD, R_GOOD, R_GOOD, R_GOOD, bads[b], R_GOOD};
            int line[8], sl = 0, sc = 0;
            bool backfill = bads[b] == R_NOTS;
            write_small(P(file), (fmt5)f, name, kinds, 7, backfill, line, &sl, &sc);
            run_result r;
            if (backfill)
                RUN(r, 1, "-d", db, "import", "--backfill", "--batch", "2", P(file));
            else
                RUN(r, 1, "-d", db, "import", "--batch", "2", P(file));
            char want[1600], msg[200];
            switch (bads[b]) {
            case R_SYNTAX:
                syntax_message(msg, sizeof msg, (fmt5)f, 6);
                snprintf(want, sizeof want, "%s:%d:%d: %s\n", P(file), sl, sc, msg);
                break;
            case R_NOTYPE:
                snprintf(want, sizeof want,
                         "%s:%d: no type named Nope (store a Type record first)\n", P(file),
                         line[6]);
                break;
            case R_NOKEY:
                snprintf(want, sizeof want,
                         "%s:%d: a record of type Machine needs key attribute Name\n", P(file),
                         line[6]);
                break;
            default:
                snprintf(want, sizeof want,
                         "%s:%d: a backfill needs _Timestamp on every record: an AbsTime, "
                         "seconds since 1970 or ISO 8601 text\n",
                         P(file), line[6]);
                break;
            }
            contains(r.err, want);
            snprintf(want, sizeof want, "Input records 1..4 of this file are in the store");
            contains(r.err, want);
            contains(r.err, "import: 4 records from 0 files (stopped),");
            run_free(&r);
            /* batches 1-2 and 3-4 are in, nothing of 5-6, and 7 was never read */
            char *out = query(db, "SELECT X FROM Machine");
            assert_string_equal(out, "[ X = 1 ]\n[ X = 2 ]\n[ X = 3 ]\n[ X = 4 ]\n");
            free(out);
        }
}

static void import__keep_going_lists_bad_records_and_loads_the_rest(void **state)
{
    (void)state;
    for (int f = 0; f < B_COUNT; f++) {
        char name[64], file[80];
        snprintf(name, sizeof name, "kg-%s", b_ext[f] + 1);
        snprintf(file, sizeof file, "%s%s", name, b_ext[f]);
        const char *db = P(name);
        declare_machine(db);
        /* long and classad read on past a syntax error; JSON and XML stop
         * there, keeping what came before */
        bool past = f == B_LONG || f == B_CLASSAD;
        rkind kinds[8] = {R_GOOD, R_NOTYPE, R_GOOD, R_NOKEY, R_GOOD, R_SYNTAX, R_GOOD, R_GOOD};
        int line[9], sl = 0, sc = 0;
        write_small(P(file), (fmt5)f, name, kinds, 8, false, line, &sl, &sc);
        run_result r;
        RUN(r, 3, "-d", db, "import", "--batch", "2", "--keep-going", P(file));
        char want[1600], msg[200];
        snprintf(want, sizeof want,
                 "skipped %s:%d: no type named Nope (store a Type record first)\n"
                 "skipped %s:%d: a record of type Machine needs key attribute Name\n",
                 P(file), line[2], P(file), line[4]);
        contains(r.err, want);
        syntax_message(msg, sizeof msg, (fmt5)f, 6);
        snprintf(want, sizeof want, "skipped %s:%d:%d: %s%s\n", P(file), sl, sc, msg,
                 past ? "" : " (the rest of the file was not read)");
        contains(r.err, want);
        snprintf(want, sizeof want, "import: %d records from 1 file,", past ? 5 : 3);
        contains(r.err, want);
        contains(r.err, ", 3 bad records skipped\n");
        run_free(&r);
        char *out = query(db, "SELECT X FROM Machine");
        assert_string_equal(out, past ? "[ X = 1 ]\n[ X = 3 ]\n[ X = 5 ]\n[ X = 7 ]\n[ X = 8 ]\n"
                                      : "[ X = 1 ]\n[ X = 3 ]\n[ X = 5 ]\n");
        free(out);
    }
    /* with --backfill, records without _Timestamp are listed too */
    const char *db = P("kg-ts");
    declare_machine(db);
    rkind kinds[4] = {R_GOOD, R_NOTS, R_GOOD, R_NOTS};
    int line[5], sl, sc;
    write_small(P("kg-ts.long"), B_LONG, "ts", kinds, 4, true, line, &sl, &sc);
    run_result r;
    RUN(r, 3, "-d", db, "import", "-k", "--backfill", "-b", "3", P("kg-ts.long"));
    char want[1600];
    snprintf(want, sizeof want,
             "skipped %s:%d: a backfill needs _Timestamp on every record: an AbsTime, seconds "
             "since 1970 or ISO 8601 text\n"
             "skipped %s:%d: a backfill needs _Timestamp on every record: an AbsTime, seconds "
             "since 1970 or ISO 8601 text\n",
             P("kg-ts.long"), line[2], P("kg-ts.long"), line[4]);
    contains(r.err, want);
    contains(r.err, "import: 2 records from 1 file,");
    run_free(&r);
    char *out = query(db, "SELECT X, _Timestamp FROM Machine");
    assert_string_equal(out, "[ X = 1; _Timestamp = `2020-03-01T10:01:00Z` ]\n"
                             "[ X = 3; _Timestamp = `2020-03-01T10:03:00Z` ]\n");
    free(out);
}

/* -format F and -format=F are import's as they are execute's and dump's;
 * -k that skipped a record exits 3 (the input is not all in the store),
 * -k that skipped nothing exits 0. */
static void import__format_spellings_and_keep_going_exit_status(void **state)
{
    (void)state;
    const char *db = P("db");
    declare_machine(db);
    write_file(P("m.txt"), "[ AdType = \"Machine\"; Name = \"a\" ]\n");
    write_file(P("j.txt"), "{\"AdType\": \"Machine\", \"Name\": \"b\"}\n");
    DO(0, "-d", db, "import", "-format", "classad", P("m.txt"));
    DO(0, "-d", db, "import", "-format=json", P("j.txt"));
    DO(0, "-d", db, "import", "--restart", "--format=classad", P("m.txt"));
    DO(0, "-d", db, "import", "--restart", "-f", "json", "-k", P("j.txt"));
    assert_int_equal(count_of(db, "Machine"), 2);
    write_file(P("bad.txt"), "[ AdType = \"Machine\"; Name = \"c\" ]\n[ AdType = \"Machine\" ]\n");
    run_result r;
    RUN(r, 3, "-d", db, "import", "-format", "classad", "-k", P("bad.txt"));
    contains(r.err, ", 1 bad record skipped\n");
    run_free(&r);
    assert_int_equal(count_of(db, "Machine"), 3);
    RUN(r, 2, "-d", db, "import", "-format", "yaml", P("bad.txt"));
    contains(r.err, "unknown format 'yaml'; expected long, classad, json, xml or dump");
    run_free(&r);
}

static void import__bad_dumps_and_files_are_refused(void **state)
{
    (void)state;
    const char *src = P("src");
    declare_machine(src);
    DO(0, "-d", src, "execute", "STORE [ AdType = \"Machine\"; Name = \"a\" ]");
    DO(0, "-d", src, "dump", "-o", P("src.dump"));
    size_t n;
    char *bin = slurp(P("src.dump"), &n);
    write_bytes(P("cut.dump"), bin, n / 2);
    bin[n / 2] ^= 0x20;
    write_bytes(P("flipped.dump"), bin, n);
    free(bin);
    const char *db = P("db");
    run_result r;
    RUN(r, 1, "-d", db, "import", P("cut.dump"));
    char want[1400];
    snprintf(want, sizeof want, "%s: the dump is corrupt: ", P("cut.dump"));
    contains(r.err, want);
    contains(r.err, "(truncated)");
    run_free(&r);
    RUN(r, 1, "-d", db, "import", P("flipped.dump"));
    snprintf(want, sizeof want, "%s: ", P("flipped.dump"));
    contains(r.err, want);
    contains(r.err, "corrupt");
    run_free(&r);
    /* a text dump with a line that does not parse */
    DO(0, "-d", src, "dump", "-f", "text", "-o", P("text.dump"));
    char *txt = slurp(P("text.dump"), NULL);
    char *row = strstr(txt, "[ AdType = \"Machine\"; Name = \"a\"");
    assert_non_null(row);
    FILE *f = fopen(P("bad-text.dump"), "w");
    assert_non_null(f);
    fprintf(f, "%.*s[ AdType = ( ]%s", (int)(row - txt), txt, strchr(row, '\n'));
    assert_int_equal(fclose(f), 0);
    free(txt);
    RUN(r, 1, "-d", db, "import", P("bad-text.dump"));
    snprintf(want, sizeof want, "%s: the dump is corrupt: line ", P("bad-text.dump"));
    contains(r.err, want);
    run_free(&r);
    /* a missing file, a directory, an empty dump */
    RUN(r, 1, "-d", db, "import", P("missing.json"));
    snprintf(want, sizeof want, "%s: No such file or directory\n", P("missing.json"));
    contains(r.err, want);
    run_free(&r);
    RUN(r, 1, "-d", db, "import", dir);
    snprintf(want, sizeof want, "%s: is a directory\n", dir);
    contains(r.err, want);
    run_free(&r);
    write_file(P("empty.dump"), "");
    RUN(r, 1, "-d", db, "import", P("empty.dump"));
    snprintf(want, sizeof want, "%s: the dump is empty\n", P("empty.dump"));
    contains(r.err, want);
    run_free(&r);
    /* usage */
    RUN(r, 2, "-d", db, "import");
    contains(r.err, "no FILE to import ('-' reads standard input)");
    run_free(&r);
    RUN(r, 2, "-d", db, "import", "--batch", "0", P("src.dump"));
    contains(r.err, "--batch needs a number from 1 to 10000000, not '0'");
    run_free(&r);
    RUN(r, 2, "-d", db, "import", "-", "-");
    contains(r.err, "standard input ('-') can be read only once");
    run_free(&r);
}

/* ---- resuming ---- */

/* n Job records with Seq = first..first+n-1, the one with Seq == bad (if
 * any) of type Jobx. */
static void write_jobs(const char *path, int first, int n, int bad)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    for (int i = first; i < first + n; i++)
        fprintf(f, "{\"AdType\":\"%s\",\"Seq\":%d}\n", i == bad ? "Jobx" : "Job", i);
    assert_int_equal(fclose(f), 0);
}

static long jobs(const char *db, long *distinct)
{
    return query2(db, "SELECT count(*) AS n, count_distinct(Seq) AS d FROM Job", distinct);
}

/* The Job records of db hold Seq 0..n-1, each exactly once (checked here:
 * count_distinct compares each value with all before it, too slow for
 * tens of thousands). Returns n; fails on a repeat, a gap or a stray. */
static long seq_prefix(const char *db, long max)
{
    run_result r;
    RUN(r, 0, "-d", db, "execute", "-f", "csv", "SELECT Seq FROM Job");
    unsigned char *seen = calloc((size_t)max, 1);
    assert_non_null(seen);
    long n = 0, hi = -1;
    char *save = NULL;
    for (char *l = strtok_r(r.out, "\r\n", &save); l; l = strtok_r(NULL, "\r\n", &save)) {
        if (strcmp(l, "Seq") == 0)
            continue;
        char *end;
        long v = strtol(l, &end, 10);
        if (*end || v < 0 || v >= max)
            fail_msg("%s: unexpected Seq '%s'", db, l);
        if (seen[v]++)
            fail_msg("%s: Seq %ld is there twice", db, v);
        hi = v > hi ? v : hi;
        n++;
    }
    free(seen);
    run_free(&r);
    if (hi != n - 1)
        fail_msg("%s: %ld records but Seq goes up to %ld", db, n, hi);
    assert_int_equal(count_of(db, "Job"), n);
    return n;
}

static void import__rerun_goes_on_after_the_last_committed_batch(void **state)
{
    (void)state;
    const char *db = P("db"), *file = P("r.jsonl");
    declare_job(db);
    write_jobs(file, 1, 10, 7);
    run_result r;
    char want[1400];
    RUN(r, 1, "-d", db, "import", "--batch", "3", file);
    snprintf(want, sizeof want, "%s:7: no type named Jobx (store a Type record first)\n", file);
    contains(r.err, want);
    contains(r.err, "Input records 1..6 of this file are in the store");
    contains(r.err, "--skip 6");
    run_free(&r);
    long d, n = jobs(db, &d);
    assert_int_equal(n, 6);
    assert_int_equal(d, 6);
    /* the same command again: goes on at record 7, fails again, loads nothing twice */
    RUN(r, 1, "-d", db, "import", "--batch", "3", file);
    snprintf(want, sizeof want, "%s: resuming after input record 6 (6 records loaded before)\n",
             file);
    contains(r.err, want);
    contains(r.err, "Input records 1..6 of this file are in the store");
    contains(r.err, "import: 0 records from 0 files (stopped),");
    run_free(&r);
    n = jobs(db, &d);
    assert_int_equal(n, 6);
    assert_int_equal(d, 6);
    /* the cause fixed in the store (the file unchanged): the rest goes in */
    DO(0, "-d", db, "execute",
       "STORE [ AdType = \"Type\"; ForType = \"Jobx\"; AutoGenerateKey = true ]");
    RUN(r, 0, "-d", db, "import", "--batch", "3", file);
    contains(r.err, want);
    contains(r.err, "import: 4 records from 1 file,");
    run_free(&r);
    n = jobs(db, &d);
    assert_int_equal(n, 9);
    assert_int_equal(d, 9);
    assert_int_equal(count_of(db, "Jobx"), 1);
    /* a file imported completely is skipped ... */
    RUN(r, 0, "-d", db, "import", "--batch", "3", file);
    snprintf(want, sizeof want,
             "%s: already imported (10 records); skipped (--restart imports it again)\n", file);
    contains(r.err, want);
    contains(r.err, "import: 0 records from 0 files,");
    contains(r.err, ", 1 already imported");
    run_free(&r);
    /* (whatever the batch size) */
    DO(0, "-d", db, "import", file);
    n = jobs(db, &d);
    assert_int_equal(n, 9);
    /* ... unless --restart: a keyless type gets every record again */
    RUN(r, 0, "-d", db, "import", "--restart", file);
    contains(r.err, "import: 10 records from 1 file,");
    run_free(&r);
    n = jobs(db, &d);
    assert_int_equal(n, 18);
    assert_int_equal(d, 9);
    assert_int_equal(count_of(db, "Jobx"), 2);
    /* several files: the complete one skipped, the new one loaded */
    write_jobs(P("more.jsonl"), 100, 5, 0);
    RUN(r, 0, "-d", db, "import", file, P("more.jsonl"));
    contains(r.err, "import: 5 records from 1 file,");
    contains(r.err, ", 1 already imported");
    run_free(&r);
    n = jobs(db, &d);
    assert_int_equal(n, 23);
    assert_int_equal(d, 14);
    DO(0, "-d", db, "verify");
}

static void import__a_file_changed_after_a_partial_import_is_refused(void **state)
{
    (void)state;
    const char *file = P("c.jsonl");
    for (int way = 0; way < 2; way++) {
        const char *db = P(way ? "db-restart" : "db-skip");
        declare_job(db);
        write_jobs(file, 1, 10, 7);
        DO(1, "-d", db, "import", "--batch", "2", file);
        long d, n = jobs(db, &d);
        assert_int_equal(n, 6);
        /* fixed (and so changed): refused, nothing loaded */
        write_jobs(file, 1, 10, 0);
        run_result r;
        RUN(r, 1, "-d", db, "import", "--batch", "2", file);
        char want[1400];
        snprintf(want, sizeof want,
                 "%s: the file has changed since an import of it stopped after input record 6; "
                 "use --restart to import it from the start, or --skip N\n",
                 file);
        contains(r.err, want);
        run_free(&r);
        n = jobs(db, &d);
        assert_int_equal(n, 6);
        if (way == 0) {
            /* --skip 6: the rest, once */
            RUN(r, 0, "-d", db, "import", "--batch", "2", "--skip", "6", file);
            contains(r.err, "import: 4 records from 1 file,");
            run_free(&r);
            n = jobs(db, &d);
            assert_int_equal(n, 10);
            assert_int_equal(d, 10);
        } else {
            /* --restart: all of it again */
            RUN(r, 0, "-d", db, "import", "--batch", "2", "--restart", file);
            contains(r.err, "import: 10 records from 1 file,");
            run_free(&r);
            n = jobs(db, &d);
            assert_int_equal(n, 16);
            assert_int_equal(d, 10);
        }
        /* either way the file now counts as imported */
        RUN(r, 0, "-d", db, "import", file);
        contains(r.err, "already imported");
        run_free(&r);
        assert_int_equal(jobs(db, &d), way ? 16 : 10);
    }
}

static void import__skip_passes_over_input_records_across_files(void **state)
{
    (void)state;
    const char *db = P("db");
    declare_job(db);
    write_jobs(P("a.jsonl"), 1, 5, 0);
    write_jobs(P("b.jsonl"), 6, 5, 0);
    run_result r;
    RUN(r, 0, "-d", db, "import", "--skip", "7", P("a.jsonl"), P("b.jsonl"));
    contains(r.err, "import: 3 records from 2 files,");
    run_free(&r);
    long d;
    assert_int_equal(jobs(db, &d), 3);
    assert_int_equal(query2(db, "SELECT min(Seq) AS n, max(Seq) AS d FROM Job", &d), 8);
    assert_int_equal(d, 10);
    /* bad records count as input records: skipping over one loads the rest */
    const char *db2 = P("db2");
    declare_job(db2);
    write_jobs(P("c.jsonl"), 1, 5, 2);
    DO(1, "-d", db2, "import", P("c.jsonl"));
    assert_int_equal(jobs(db2, &d), 0);
    RUN(r, 0, "-d", db2, "import", "--skip", "2", P("c.jsonl"));
    contains(r.err, "import: 3 records from 1 file,");
    run_free(&r);
    assert_int_equal(query2(db2, "SELECT min(Seq) AS n, count(*) AS d FROM Job", &d), 3);
    assert_int_equal(d, 3);
    /* --skip on standard input; more than there is loads nothing */
    RUN_IN(r, "{\"AdType\":\"Job\",\"Seq\":50}\n{\"AdType\":\"Job\",\"Seq\":51}\n", 0, "-d", db2,
           "import", "--skip", "1", "-");
    run_free(&r);
    RUN(r, 0, "-d", db2, "import", "--skip", "99", P("a.jsonl"));
    contains(r.err, "import: 0 records from 1 file,");
    run_free(&r);
    assert_int_equal(query2(db2, "SELECT max(Seq) AS n, count(*) AS d FROM Job", &d), 51);
    assert_int_equal(d, 4);
    RUN(r, 2, "-d", db2, "import", "--skip", "x", P("a.jsonl"));
    contains(r.err, "--skip needs a number of records, not 'x'");
    run_free(&r);
}

/* ---- kill -9 ---- */

/* A JSON Lines file of n Job records, Seq = 0..n-1, with some padding. */
static void write_big(const char *path, int n)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    for (int i = 0; i < n; i++)
        fprintf(f,
                "{\"AdType\":\"Job\",\"Seq\":%d,\"Owner\":\"user%d\",\"Cmd\":\"/bin/sleep\","
                "\"Args\":\"%d\",\"RequestMemory\":%d}\n",
                i, i % 50, i % 600, 1024 + i % 7);
    assert_int_equal(fclose(f), 0);
}

static void import__killed_at_random_moments_then_rerun_loads_each_record_once(void **state)
{
    (void)state;
    const int total = 60000;
    const char *db = P("db"), *file = P("big.jsonl");
    char data[1200];
    snprintf(data, sizeof data, "%s/data.mdb", db);
    declare_job(db);
    write_big(file, total);
    unsigned seed = (unsigned)time(NULL) ^ ((unsigned)getpid() << 8);
    srand(seed);
    print_message("kill -9 test: seed %u\n", seed);
    const char *argv[] = {"-d", db, "import", "--batch", "500", file, NULL};
    int kills = 0, finished = 0;
    for (int attempt = 0; attempt < 20 && kills < 3 && !finished; attempt++) {
        /* kill once the store has grown by a random amount (the import is
         * well under way), after a further random few milliseconds */
        long long threshold = file_size(data) + 32768 + rand() % (1536 * 1024);
        long delay = rand() % 3000;
        pid_t pid = spawn_adstore(argv, NULL, NULL, NULL);
        for (;;) {
            int status;
            pid_t w = waitpid(pid, &status, WNOHANG);
            if (w == pid) {
                if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
                    fail_msg("seed %u: import exited with status %d before the kill", seed, status);
                finished = 1;
                break;
            }
            if (file_size(data) >= threshold) {
                sleep_us(delay);
                kill(pid, SIGKILL);
                int st = wait_child(pid);
                if (st == 128 + SIGKILL)
                    kills++;
                else if (st == 0)
                    finished = 1;
                else
                    fail_msg("seed %u: import exited with status %d", seed, st);
                break;
            }
            sleep_us(300);
        }
    }
    if (kills < 1)
        fail_msg("seed %u: the import always finished before it could be killed", seed);
    print_message("kill -9 test: %d kills\n", kills);
    /* the same command until it succeeds */
    int runs = 0, status = -1;
    while (status != 0 && runs < 5) {
        run_result r;
        const char *args[] = {"-d", db, "import", "--batch", "500", file, NULL};
        assert_int_equal(run_adstore(&r, args, NULL), 0);
        status = r.status;
        if (status != 0 && runs == 4)
            fail_msg("seed %u: re-run exit %d: %s", seed, status, r.err);
        run_free(&r);
        runs++;
    }
    long n = seq_prefix(db, total);
    if (n != total)
        fail_msg("seed %u (%d kills): %ld records, each Seq once; expected %d", seed, kills, n,
                 total);
    run_result r;
    RUN(r, 0, "-d", db, "verify");
    run_free(&r);
    /* and once complete, the file is not loaded again */
    RUN(r, 0, "-d", db, "import", "--batch", "500", file);
    contains(r.err, "already imported (60000 records)");
    run_free(&r);
}

/* ---- backfill ---- */

/* n Job records with Tag, N = 0..n-1 and _Timestamp = start + N * step
 * seconds after 2020-03-01T10:00:00Z. */
static void write_dated(const char *path, const char *tag, int n, int start, int step)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    for (int i = 0; i < n; i++) {
        time_t t = 1583056800 + start + (time_t)i * step; /* 2020-03-01T10:00:00Z */
        struct tm tm;
        gmtime_r(&t, &tm);
        char stamp[64];
        strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", &tm);
        fprintf(
            f, "{\"AdType\":\"Job\",\"Tag\":\"%s\",\"N\":%d,\"_Timestamp\":\"\\/Expr(`%s`)\\/\"}\n",
            tag, i, stamp);
    }
    assert_int_equal(fclose(f), 0);
}

static void import__backfill_dates_generated_ids_by_each_records_timestamp(void **state)
{
    (void)state;
    const char *db = P("db");
    declare_job(db);
    /* a period, the same period again, and one that overlaps it */
    write_dated(P("b1.jsonl"), "b1", 300, 0, 2);
    write_dated(P("b2.jsonl"), "b2", 300, 0, 2);
    write_dated(P("b3.jsonl"), "b3", 300, 301, 1);
    run_result r;
    RUN(r, 0, "-d", db, "import", "--backfill", "--batch", "50", P("b1.jsonl"));
    run_free(&r);
    RUN(r, 0, "-d", db, "import", "--backfill", "--batch", "50", P("b2.jsonl"), P("b3.jsonl"));
    contains(r.err, "import: 600 records from 2 files,");
    run_free(&r);
    long d;
    assert_int_equal(query2(db, "SELECT count(*) AS n, count_distinct(Id) AS d FROM Job", &d), 900);
    assert_int_equal(d, 900);
    /* a sample: each id is dated at its record's second, and marked backfill */
    RUN(r, 0, "-d", db, "execute", "-f", "csv",
        "SELECT Id, _Timestamp, Tag FROM Job WHERE N % 37 == 0 || N == 299");
    char *save = NULL;
    int checked = 0;
    for (char *l = strtok_r(r.out, "\r\n", &save); l; l = strtok_r(NULL, "\r\n", &save)) {
        if (strncmp(l, "Id,", 3) == 0)
            continue;
        char id[100], stamp[100];
        if (sscanf(l, "%99[^,],`%99[^`]`", id, stamp) != 2)
            fail_msg("unexpected row '%s'", l);
        run_result p;
        RUN(p, 0, "id", "parse", id);
        char want[200];
        snprintf(want, sizeof want, "time = %s\n", stamp);
        contains(p.out, want);
        contains(p.out, "backfill = true\n");
        run_free(&p);
        checked++;
    }
    run_free(&r);
    assert_int_equal(checked, 3 * 10);
    DO(0, "-d", db, "verify");
}

static void import__backfill_of_a_keyed_record_lands_in_its_history(void **state)
{
    (void)state;
    const char *db = P("db");
    declare_machine(db);
    DO(0, "-d", db, "execute", "STORE [ AdType = \"Machine\"; Name = \"m1\"; Memory = 4096 ]");
    write_file(P("old.long"), "AdType = \"Machine\"\nName = \"m1\"\nMemory = 1024\n"
                              "_Timestamp = absTime(\"2020-03-01T10:00:00Z\")\n\n"
                              "AdType = \"Machine\"\nName = \"m2\"\nMemory = 512\n"
                              "_Timestamp = absTime(\"2020-03-01T11:00:00Z\")\n");
    DO(0, "-d", db, "import", "--backfill", P("old.long"));
    /* the latest row of m1 is still the newer one; m2, new, is latest as dated */
    char *out = query(db, "SELECT Name, Memory FROM Machine");
    assert_string_equal(out, "[ Name = \"m1\"; Memory = 4096 ]\n[ Name = \"m2\"; Memory = 512 ]\n");
    free(out);
    out = query(db, "SELECT Name, Memory, _Timestamp FROM Machine WHERE __Latest == false");
    assert_string_equal(out,
                        "[ Name = \"m1\"; Memory = 1024; _Timestamp = `2020-03-01T10:00:00Z` ]\n");
    free(out);
    out = query(db, "SELECT Name, Memory FROM Machine WHERE Name == \"m1\" && @anytime()");
    assert_string_equal(out,
                        "[ Name = \"m1\"; Memory = 1024 ]\n[ Name = \"m1\"; Memory = 4096 ]\n");
    free(out);
    out = query(db, "SELECT Name, _Timestamp FROM Machine WHERE Name == \"m2\"");
    assert_string_equal(out, "[ Name = \"m2\"; _Timestamp = `2020-03-01T11:00:00Z` ]\n");
    free(out);
    /* the text dump shows the history row too */
    run_result r;
    RUN(r, 0, "-d", db, "dump", "--format", "text");
    contains(r.out, "Memory = 1024; Name = \"m1\"; _Timestamp = `2020-03-01T10:00:00Z`; "
                    "__SystemTimestamp = ");
    contains(r.out, "__Latest = false; _Deleted = false ]\n");
    run_free(&r);
    DO(0, "-d", db, "verify");
}

/* ---- dump and restore ---- */

/* A store with two types, updates, a delete, backfilled history. */
static void make_source(const char *db)
{
    declare_machine(db);
    declare_job(db);
    FILE *f = fopen(P("src.classad"), "w");
    assert_non_null(f);
    static const char *const arch[] = {"X86_64", "ARM64", "PPC"};
    for (int i = 0; i < 60; i++)
        fprintf(f,
                "[ AdType = \"Machine\"; Name = \"m%02d\"; Arch = \"%s\"; Memory = %d; "
                "Load = %d.5; Req = Memory > %d ]\n",
                i, arch[i % 3], 1024 * (1 + i % 4), i % 5, i);
    assert_int_equal(fclose(f), 0);
    DO(0, "-d", db, "import", P("src.classad"));
    DO(0, "-d", db, "execute", "UPDATE Machine SET Memory = Memory * 2 WHERE Load > 2");
    DO(0, "-d", db, "execute", "DELETE FROM Machine WHERE Name == \"m07\"");
    write_dated(P("jobs.jsonl"), "j", 40, 0, 60);
    DO(0, "-d", db, "import", "--backfill", P("jobs.jsonl"));
    DO(0, "-d", db, "execute", "STORE [ AdType = \"Job\"; Tag = \"now\"; N = 99 ]");
}

static const char *const query_set[] = {
    "SELECT * FROM Machine",
    "SELECT Arch, count(*) AS n, sum(Memory) AS mem, avg(Load) AS load FROM Machine GROUP BY Arch",
    "SELECT Name, Memory, _Timestamp, _Deleted FROM Machine WHERE @anytime()",
    "SELECT Tag, count(*) AS n, count_distinct(Id) AS ids FROM Job GROUP BY Tag",
    "SELECT Id, N, _Timestamp FROM Job ORDER BY N DESC LIMIT 5",
    "SELECT * USING types",
};

static void same_answers(const char *a, const char *b)
{
    for (size_t i = 0; i < sizeof query_set / sizeof query_set[0]; i++) {
        run_result ra, rb;
        RUN(ra, 0, "-d", a, "execute", "--hidden", "-f", "native", query_set[i]);
        RUN(rb, 0, "-d", b, "execute", "--hidden", "-f", "native", query_set[i]);
        if (strcmp(ra.out, rb.out) != 0)
            fail_msg("%s:\n%s---\nvs\n%s---", query_set[i], ra.out, rb.out);
        assert_true(ra.out_len > 0);
        run_free(&ra);
        run_free(&rb);
    }
}

/* stats' table without its size columns: each line cut after the column
 * of history row counts */
static void counts_only(char *out)
{
    const char *h = strstr(out, "history");
    assert_non_null(h);
    size_t keep = (size_t)(h - out) + strlen("history");
    char *w = out;
    for (const char *line = out; *line;) {
        size_t n = strcspn(line, "\n");
        size_t k = n < keep || strncmp(line, "store format", 12) == 0 ? n : keep;
        memmove(w, line, k);
        w += k;
        line += n;
        if (*line == '\n')
            *w++ = *line++;
    }
    *w = '\0';
}

static void dump__restore_and_dump_again_is_byte_identical(void **state)
{
    (void)state;
    const char *src = P("src"), *copy = P("copy");
    make_source(src);
    run_result r;
    RUN(r, 0, "-d", src, "dump", "-o", P("one.dump"));
    contains(r.err, "dump: ");
    contains(r.err, " rows, ");
    assert_string_equal(r.out, "");
    run_free(&r);
    /* the file is private, and nothing is left beside it */
    struct stat st;
    assert_int_equal(stat(P("one.dump"), &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    RUN(r, 0, "-d", copy, "restore", P("one.dump"));
    contains(r.err, "restore: ");
    run_free(&r);
    DO(0, "-d", copy, "dump", "-o", P("two.dump"));
    assert_true(same_file(P("one.dump"), P("two.dump")));
    same_answers(src, copy);
    DO(0, "-d", copy, "verify");
    /* the node is kept, and the counts */
    run_result a, b;
    RUN(a, 0, "-d", src, "stats");
    RUN(b, 0, "-d", copy, "stats");
    char *na = strstr(a.out, "\nstore format"), *nb = strstr(b.out, "\nstore format");
    assert_non_null(na);
    assert_non_null(nb);
    na[strcspn(na + 1, "\n") + 1] = '\0'; /* the table and the node line (not the map) */
    nb[strcspn(nb + 1, "\n") + 1] = '\0';
    /* the sizes may differ: the source keeps history rows as differences,
     * a restore stores them whole */
    counts_only(a.out);
    counts_only(b.out);
    assert_string_equal(a.out, b.out);
    run_free(&a);
    run_free(&b);

    /* the text format: to stdout, the same as to a file; restored from
     * stdin it gives the same store */
    RUN(r, 0, "-d", src, "dump", "--format", "text");
    assert_true(strncmp(r.out, "[ Format = \"adstore-dump\"; Version = 1;", 39) == 0);
    contains(r.out, "\n[ End = true; ");
    assert_int_equal(r.out[r.out_len - 1], '\n');
    DO(0, "-d", src, "dump", "-f", "text", "-o", P("one.txt"));
    char *t = slurp(P("one.txt"), NULL);
    assert_string_equal(r.out, t);
    free(t);
    run_result r2;
    RUN_IN(r2, r.out, 0, "-d", P("from-text"), "restore", "-");
    contains(r2.err, "into ");
    run_free(&r2);
    run_free(&r);
    DO(0, "-d", P("from-text"), "dump", "-o", P("three.dump"));
    assert_true(same_file(P("one.dump"), P("three.dump")));
    /* msgpack to stdout (a pipe, not a terminal) is the same bytes */
    const char *argv[] = {"-d", src, "dump", NULL};
    assert_int_equal(run_files(argv, NULL, P("stdout.dump"), NULL), 0);
    assert_true(same_file(P("one.dump"), P("stdout.dump")));
    /* restore - reads a binary dump from stdin */
    const char *rargv[] = {"-d", P("from-stdin"), "restore", "-", NULL};
    assert_int_equal(run_files(rargv, P("one.dump"), NULL, NULL), 0);
    same_answers(src, P("from-stdin"));
    /* an existing empty directory is an empty store */
    assert_int_equal(mkdir(P("empty-dir"), 0700), 0);
    DO(0, "-d", P("empty-dir"), "restore", P("one.dump"));
    same_answers(src, P("empty-dir"));
}

/* Nothing of a failed restore is left beside the target (NAME.restoring-PID,
 * NAME.replaced-PID). */
static void no_leftovers(const char *name)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    size_t n = strlen(name);
    struct dirent *e;
    while ((e = readdir(d)))
        if (strncmp(e->d_name, name, n) == 0 && (strncmp(e->d_name + n, ".restoring-", 11) == 0 ||
                                                 strncmp(e->d_name + n, ".replaced-", 10) == 0))
            fail_msg("%s left beside %s", e->d_name, name);
    closedir(d);
}

static void restore__refuses_stores_with_rows_and_bad_dumps(void **state)
{
    (void)state;
    const char *src = P("src");
    make_source(src);
    DO(0, "-d", src, "dump", "-o", P("one.dump"));
    DO(0, "-d", src, "dump", "-f", "text", "-o", P("one.txt"));
    /* a store with rows: refused, and unchanged */
    DO(0, "-d", P("target"), "execute",
       "STORE [ AdType = \"Type\"; ForType = \"T\"; AutoGenerateKey = true ], [ AdType = \"T\"; X "
       "= 1 ]");
    DO(0, "-d", P("target"), "dump", "-o", P("before.dump"));
    run_result r;
    RUN(r, 1, "-d", P("target"), "restore", P("one.dump"));
    char want[2600];
    snprintf(want, sizeof want, "adstore restore: %s: %s holds a store with ", P("one.dump"),
             P("target"));
    contains(r.err, want);
    snprintf(want, sizeof want, " rows: restore needs an empty store; %s is unchanged\n",
             P("target"));
    contains(r.err, want);
    run_free(&r);
    DO(0, "-d", P("target"), "dump", "-o", P("after.dump"));
    assert_true(same_file(P("before.dump"), P("after.dump")));
    no_leftovers("target");
    /* a directory with other things in it */
    assert_int_equal(mkdir(P("full"), 0700), 0);
    write_file(P("full/notes.txt"), "mine\n");
    RUN(r, 1, "-d", P("full"), "restore", P("one.dump"));
    snprintf(want, sizeof want, "%s is not empty: restore needs an empty store", P("full"));
    contains(r.err, want);
    run_free(&r);
    assert_true(exists(P("full/notes.txt")));

    /* truncated: in each format, at several places */
    size_t n, tn;
    char *bin = slurp(P("one.dump"), &n);
    char *txt = slurp(P("one.txt"), &tn);
    size_t cuts[] = {1, n / 3, n / 2, n - 1};
    for (int i = 0; i < 4; i++) {
        write_bytes(P("cut.dump"), bin, cuts[i]);
        RUN(r, 1, "-d", P("cut"), "restore", P("cut.dump"));
        snprintf(want, sizeof want, "adstore restore: %s: the dump is ", P("cut.dump"));
        contains(r.err, want);
        snprintf(want, sizeof want, "; %s is unchanged\n", P("cut"));
        contains(r.err, want);
        run_free(&r);
        assert_false(exists(P("cut")));
        no_leftovers("cut");
    }
    write_bytes(P("cut.dump"), bin, n / 2);
    RUN(r, 1, "-d", P("cut"), "restore", P("cut.dump"));
    contains(r.err, "truncated");
    run_free(&r);
    char *end = strstr(txt, "\n[ End = true;");
    assert_non_null(end);
    write_bytes(P("cut.txt"), txt, (size_t)(end - txt) + 1);
    RUN(r, 1, "-d", P("cut"), "restore", P("cut.txt"));
    contains(r.err, "the dump is corrupt: it ends before its trailer (truncated)");
    run_free(&r);
    assert_false(exists(P("cut")));
    /* corrupt: a changed byte in the middle, in the trailer's checksum */
    bin[n / 2] ^= 0x01;
    write_bytes(P("bad.dump"), bin, n);
    RUN(r, 1, "-d", P("bad"), "restore", P("bad.dump"));
    snprintf(want, sizeof want, "adstore restore: %s: the dump is corrupt", P("bad.dump"));
    contains(r.err, want);
    run_free(&r);
    assert_false(exists(P("bad")));
    char *sum = strstr(txt, "Checksum = \"");
    assert_non_null(sum);
    sum[12] = sum[12] == '0' ? '1' : '0';
    write_file(P("bad.txt"), txt);
    RUN(r, 1, "-d", P("bad"), "restore", P("bad.txt"));
    contains(r.err, "the dump is corrupt: its checksum does not match its bytes");
    run_free(&r);
    assert_false(exists(P("bad")));
    no_leftovers("bad");
    /* not a dump at all, and an empty one */
    write_file(P("other.json"), "{\"AdType\":\"Job\"}\n");
    RUN(r, 1, "-d", P("bad"), "restore", P("other.json"));
    contains(r.err, "the dump is corrupt: it does not start with a header");
    run_free(&r);
    write_file(P("empty.dump"), "");
    RUN(r, 1, "-d", P("bad"), "restore", P("empty.dump"));
    contains(r.err, "the dump is empty");
    run_free(&r);
    RUN(r, 1, "-d", P("bad"), "restore", P("missing.dump"));
    snprintf(want, sizeof want, "adstore restore: %s: No such file or directory\n",
             P("missing.dump"));
    assert_string_equal(r.err, want);
    run_free(&r);
    assert_false(exists(P("bad")));
    RUN(r, 2, "-d", P("bad"), "restore");
    contains(r.err, "no dump FILE");
    run_free(&r);
    RUN(r, 2, "-d", P("bad"), "restore", P("one.dump"), P("one.txt"));
    contains(r.err, "one dump FILE only, not 2");
    run_free(&r);
    free(bin);
    free(txt);
}

/* The node of `adstore stats`, or of a new id's `id parse`. */
static void stats_node(const char *db, char *out, size_t cap)
{
    run_result r;
    RUN(r, 0, "-d", db, "stats");
    const char *p = strstr(r.out, ", node ");
    assert_non_null(p);
    snprintf(out, cap, "%.12s", p + 7);
    run_free(&r);
}

static void id_node(const char *db, char *out, size_t cap)
{
    run_result r, p;
    RUN(r, 0, "-d", db, "id", "new");
    r.out[strcspn(r.out, "\n")] = '\0';
    RUN(p, 0, "id", "parse", r.out);
    const char *n = strstr(p.out, "node = ");
    assert_non_null(n);
    snprintf(out, cap, "%.12s", n + 7);
    run_free(&r);
    run_free(&p);
}

static void restore__new_node_and_type_filters(void **state)
{
    (void)state;
    const char *src = P("src");
    make_source(src);
    DO(0, "-d", src, "dump", "-o", P("one.dump"));
    char n_src[32], n_same[32], n_new[32], i_src[32], i_new[32];
    DO(0, "-d", P("same"), "restore", P("one.dump"));
    DO(0, "-d", P("new"), "restore", "--new-node", P("one.dump"));
    stats_node(src, n_src, sizeof n_src);
    stats_node(P("same"), n_same, sizeof n_same);
    stats_node(P("new"), n_new, sizeof n_new);
    assert_string_equal(n_src, n_same);
    assert_string_not_equal(n_src, n_new);
    id_node(src, i_src, sizeof i_src);
    id_node(P("new"), i_new, sizeof i_new);
    assert_string_equal(i_src, n_src);
    assert_string_equal(i_new, n_new);
    /* the data is the same */
    same_answers(P("same"), P("new"));
    DO(0, "-d", P("new"), "verify");

    /* --type: only Machine rows (and the Type records); --exclude-type the others */
    run_result r;
    RUN(r, 0, "-d", src, "dump", "-f", "text", "--type", "Machine");
    contains(r.out, "[ AdType = \"Machine\"; ");
    contains(r.out, "[ AdType = \"Type\"; AutoGenerateKey = true; ForType = \"Job\"; ");
    lacks(r.out, "[ AdType = \"Job\"; ");
    run_result r2;
    RUN_IN(r2, r.out, 0, "-d", P("machines"), "restore", "-");
    run_free(&r2);
    run_free(&r);
    RUN(r, 0, "-d", src, "dump", "-f", "text", "--exclude-type", "Machine");
    lacks(r.out, "[ AdType = \"Machine\"; ");
    contains(r.out, "[ AdType = \"Job\"; ");
    run_free(&r);
    DO(0, "-d", src, "dump", "-o", P("jobs.dump"), "-t", "Job");
    DO(0, "-d", P("jobs"), "restore", P("jobs.dump"));
    DO(0, "-d", P("machines"), "verify");
    DO(0, "-d", P("jobs"), "verify");
    assert_int_equal(count_of(P("machines"), "Job"), 0);
    assert_int_equal(count_of(P("machines"), "Machine"), count_of(src, "Machine"));
    assert_int_equal(count_of(P("jobs"), "Machine"), 0);
    assert_int_equal(count_of(P("jobs"), "Job"), count_of(src, "Job"));
    char *a = query(src, "SELECT * FROM Machine WHERE @anytime()");
    char *b = query(P("machines"), "SELECT * FROM Machine WHERE @anytime()");
    assert_string_equal(a, b);
    free(a);
    free(b);
    /* usage */
    RUN(r, 2, "-d", src, "dump", "--format", "csv");
    contains(r.err, "unknown dump format 'csv'; expected msgpack or text");
    run_free(&r);
    RUN(r, 2, "-d", src, "dump", P("x.dump"));
    contains(r.err, "unexpected argument");
    run_free(&r);
    /* a store that is not there is not created by dump */
    RUN(r, 1, "-d", P("nothing"), "dump", "-o", P("nothing.dump"));
    run_free(&r);
    assert_false(exists(P("nothing")));
    assert_false(exists(P("nothing.dump")));
}

/* ---- backup ---- */

static void backup__while_another_process_imports(void **state)
{
    (void)state;
    const char *db = P("db"), *file = P("big.jsonl");
    char data[1200];
    snprintf(data, sizeof data, "%s/data.mdb", db);
    declare_job(db);
    write_big(file, 60000);
    const char *argv[] = {"-d", db, "import", "--batch", "100", file, NULL};
    pid_t pid = spawn_adstore(argv, NULL, NULL, P("import.err"));
    /* once the import is under way (or done) */
    while (file_size(data) < 512 * 1024) {
        int status;
        if (waitpid(pid, &status, WNOHANG) == pid) {
            pid = -1;
            break;
        }
        sleep_us(500);
    }
    run_result r;
    RUN(r, 0, "-d", db, "backup", P("copy"));
    char want[1400];
    snprintf(want, sizeof want, "backup: %s, ", P("copy"));
    contains(r.err, want);
    run_free(&r);
    if (pid > 0)
        assert_int_equal(wait_child(pid), 0);
    /* a consistent copy: it verifies, opens, and holds whole batches, the
     * first n records of the file */
    DO(0, "-d", P("copy"), "verify");
    long n = seq_prefix(P("copy"), 60000);
    assert_true(n > 0);
    assert_int_equal(n % 100, 0);
    print_message("backup taken with %ld of 60000 records imported\n", n);
    struct stat st;
    assert_int_equal(stat(P("copy/data.mdb"), &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    /* the copy is a store like any other: it takes writes and dumps */
    DO(0, "-d", P("copy"), "execute", "STORE [ AdType = \"Job\"; Seq = -1 ]");
    DO(0, "-d", P("copy"), "dump", "-o", P("copy.dump"));
    assert_int_equal(seq_prefix(db, 60000), 60000);
    /* backups of the quiet store into an empty directory, and over an
     * empty store, are the same store */
    assert_int_equal(mkdir(P("empty"), 0700), 0);
    DO(0, "-d", db, "backup", P("empty"));
    DO(0, "-d", P("empty"), "verify");
    assert_int_equal(count_of(P("empty"), "Job"), 60000);
}

static void backup__refuses_a_directory_that_is_not_empty(void **state)
{
    (void)state;
    const char *db = P("db");
    declare_job(db);
    DO(0, "-d", db, "execute", "STORE [ AdType = \"Job\"; Seq = 1 ]");
    assert_int_equal(mkdir(P("full"), 0700), 0);
    write_file(P("full/notes.txt"), "mine\n");
    run_result r;
    RUN(r, 1, "-d", db, "backup", P("full"));
    char want[1400];
    snprintf(want, sizeof want, "%s is not empty", P("full"));
    contains(r.err, want);
    run_free(&r);
    char *notes = slurp(P("full/notes.txt"), NULL);
    assert_string_equal(notes, "mine\n");
    free(notes);
    assert_false(exists(P("full/data.mdb")));
    /* a store with rows is not overwritten either */
    DO(0, "-d", db, "backup", P("first"));
    RUN(r, 1, "-d", db, "backup", P("first"));
    snprintf(want, sizeof want, "%s holds a store with ", P("first"));
    contains(r.err, want);
    run_free(&r);
    /* a file where the directory should be */
    write_file(P("afile"), "x");
    RUN(r, 1, "-d", db, "backup", P("afile"));
    snprintf(want, sizeof want, "%s is not a directory", P("afile"));
    contains(r.err, want);
    run_free(&r);
    RUN(r, 2, "-d", db, "backup");
    contains(r.err, "backup needs one DIR, the directory of the copy");
    run_free(&r);
}

/* ---- layout ---- */

/* n machines, named in an order that has nothing to do with key order. */
static void write_shuffled_machines(const char *path, int n)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    for (int i = 0; i < n; i++) {
        unsigned k = (unsigned)i * 2654435761u; /* a permutation of 32-bit numbers */
        fprintf(f, "{\"AdType\":\"Machine\",\"Name\":\"slot%08x@node\",\"Memory\":%d}\n", k,
                1024 + i % 64);
    }
    assert_int_equal(fclose(f), 0);
}

/* An import that stores most of a store's rows out of key order leaves
 * pages part empty and scattered: import compacts the store after it (the
 * stats layout line shows the pages full and in order); --no-compact
 * leaves it as loaded, and stats says compact would lay it out afresh. */
static void import__out_of_key_order_is_compacted_after(void **state)
{
    (void)state;
    const int n = 120000;
    const char *a = P("a"), *b = P("b"), *in = P("shuffled.jsonl");
    write_shuffled_machines(in, n);
    declare_machine(a);
    declare_machine(b);
    run_result r;
    RUN(r, 0, "-d", a, "import", in);
    contains(r.err, "import: compacted (the records came out of key order): ");
    run_free(&r);
    RUN(r, 0, "-d", a, "stats");
    contains(r.out, "layout of latest rows: ");
    lacks(r.out, "lays them out afresh");
    run_free(&r);
    assert_int_equal(count_of(a, "Machine"), n);
    DO(0, "-d", a, "verify");

    RUN(r, 0, "-d", b, "import", "--no-compact", in);
    lacks(r.err, "compacted");
    run_free(&r);
    RUN(r, 0, "-d", b, "stats");
    contains(r.out, "(adstore compact lays them out afresh)");
    run_free(&r);
    assert_true(file_size(P("b/data.mdb")) > file_size(P("a/data.mdb")) * 5 / 4);
    assert_int_equal(count_of(b, "Machine"), n);

    /* a small import into the laid-out store does not compact it again */
    write_file(P("one.jsonl"), "{\"AdType\":\"Machine\",\"Name\":\"zz\",\"Memory\":1}\n");
    RUN(r, 0, "-d", a, "import", P("one.jsonl"));
    lacks(r.err, "compacted");
    run_free(&r);
}

/* ---- memory ---- */

#ifndef UNDER_ASAN
static long rss_anon_kib(pid_t pid)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%ld/status", (long)pid);
    FILE *f = fopen(path, "r");
    long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "RssAnon: %ld kB", &kb) == 1)
            break;
    if (f)
        fclose(f);
    return kb;
}

/* Run the program and return the peak of its anonymous resident memory
 * (KiB), sampled every 2 ms; the exit status must be 0. */
static long peak_of(const char *const *argv, const char *in_path, const char *out_path)
{
    pid_t pid = spawn_adstore(argv, in_path, out_path, P("mem.err"));
    long peak = 0;
    for (;;) {
        long kb = rss_anon_kib(pid);
        if (kb > peak)
            peak = kb;
        int status;
        pid_t w = waitpid(pid, &status, WNOHANG);
        if (w == pid) {
            if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
                char *err = slurp(P("mem.err"), NULL);
                fail_msg("%s %s: status %d: %s", argv[2], argv[3] ? argv[3] : "", status, err);
            }
            break;
        }
        sleep_us(2000);
    }
    return peak;
}

static void peaks(int n, long *imp, long *dmp, long *rst)
{
    char db[64], file[64], dump[64], copy[64];
    snprintf(db, sizeof db, "m%d", n);
    snprintf(file, sizeof file, "m%d.jsonl", n);
    snprintf(dump, sizeof dump, "m%d.dump", n);
    snprintf(copy, sizeof copy, "m%d.copy", n);
    char pdb[1200], pfile[1200], pdump[1200], pcopy[1200];
    snprintf(pdb, sizeof pdb, "%s", P(db));
    snprintf(pfile, sizeof pfile, "%s", P(file));
    snprintf(pdump, sizeof pdump, "%s", P(dump));
    snprintf(pcopy, sizeof pcopy, "%s", P(copy));
    declare_job(pdb);
    write_big(pfile, n);
    const char *a1[] = {"-d", pdb, "import", pfile, NULL};
    *imp = peak_of(a1, NULL, NULL);
    const char *a2[] = {"-d", pdb, "dump", "-o", pdump, NULL};
    *dmp = peak_of(a2, NULL, NULL);
    const char *a3[] = {"-d", pcopy, "restore", pdump, NULL};
    *rst = peak_of(a3, NULL, NULL);
    assert_int_equal(count_of(pcopy, "Job"), n);
}
#endif

static void memory__import_dump_and_restore_stay_flat(void **state)
{
    (void)state;
#ifdef UNDER_ASAN
    skip(); /* AddressSanitizer's shadow and quarantine keep freed memory resident */
#else
    long i1, d1, r1, i2, d2, r2;
    peaks(40000, &i1, &d1, &r1);
    peaks(160000, &i2, &d2, &r2);
    print_message("peak anonymous memory, 40000 -> 160000 records: import %ld -> %ld KiB, "
                  "dump %ld -> %ld KiB, restore %ld -> %ld KiB\n",
                  i1, i2, d1, d2, r1, r2);
    assert_true(i1 > 0 && d1 > 0 && r1 > 0);
    /* four times the records: no more than a few MiB more */
    assert_true(i2 <= i1 + 4096);
    assert_true(d2 <= d1 + 4096);
    assert_true(r2 <= r1 + 8192);
#endif
}

/* Two imports of the same file at once: the first stops itself after its
 * first batch (the ADSTORE_TEST_STALL=batch hook), the second loads the rest
 * meanwhile; the first, let go on, finds the file's progress moved in its
 * next batch's transaction and stops without loading anything twice. */
static void import__two_at_once_of_one_file_load_it_once(void **state)
{
    (void)state;
    const char *db = P("db"), *in = P("jobs.jsonl"), *aerr = P("a.err");
    declare_job(db);
    FILE *f = fopen(in, "w");
    assert_non_null(f);
    for (int i = 0; i < 5000; i++)
        fprintf(f, "{\"AdType\": \"Job\", \"N\": %d}\n", i);
    assert_int_equal(fclose(f), 0);
    const char *argv[] = {"-d", db, "import", "--batch", "1000", in, NULL};
    assert_int_equal(setenv("ADSTORE_TEST_STALL", "batch", 1), 0);
    pid_t a = spawn_adstore(argv, NULL, NULL, aerr);
    assert_int_equal(unsetenv("ADSTORE_TEST_STALL"), 0);
    int st;
    assert_int_equal(waitpid(a, &st, WUNTRACED), a);
    assert_true(WIFSTOPPED(st));
    run_result r;
    RUN(r, 0, "-d", db, "import", "--batch", "1000", in);
    contains(r.err, "resuming after input record 1000 (1000 records loaded before)");
    run_free(&r);
    assert_int_equal(kill(a, SIGCONT), 0);
    assert_int_equal(wait_child(a), 1);
    size_t len;
    char *err = slurp(aerr, &len);
    contains(err, ": another import of this file moved its recorded progress (to input record "
                  "5000, complete) while this one ran; this batch was not stored, so no record "
                  "is loaded twice\n");
    contains(err, ": stopped. Run the same command again to go on after what the other import "
                  "loaded.\n");
    free(err);
    assert_int_equal(count_of(db, "Job"), 5000);
    /* and running it again finds it done */
    RUN(r, 0, "-d", db, "import", in);
    contains(r.err, "already imported (5000 records)");
    run_free(&r);
    assert_int_equal(count_of(db, "Job"), 5000);
}

/* ---- sorted loads ---- */

/* Machine records in an order far from key order: n distinct names, then
 * the first `again` of them again with Memory changed (their rows before
 * go to history), each with Seq, its line's number from 0. */
static void write_sorted_input(const char *path, int n, int again)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    for (int i = 0; i < n + again; i++) {
        unsigned k = (unsigned)(i % n) * 2654435761u; /* a permutation of 32-bit numbers */
        fprintf(f, "{\"AdType\":\"Machine\",\"Name\":\"slot%08x@node\",\"Memory\":%d,\"Seq\":%d}\n",
                k, 1024 + i, i);
    }
    assert_int_equal(fclose(f), 0);
}

/* Records and rows (history included) of the store, as stats counts them. */
static void store_counts(const char *db, long *records, long *rows)
{
    run_result r;
    RUN(r, 0, "-d", db, "stats");
    const char *at = strstr(r.out, "stats: ");
    if (!at)
        at = strstr(r.err, "stats: ");
    if (!at || sscanf(at, "stats: %ld records, %ld rows", records, rows) != 2)
        fail_msg("no counts in stats:\n%s%s", r.out, r.err);
    run_free(&r);
}

/* No sorted run is left in the store's directory. */
static void no_runs_left(const char *db)
{
    DIR *d = opendir(db);
    assert_non_null(d);
    struct dirent *e;
    while ((e = readdir(d)))
        if (strncmp(e->d_name, ".import-run", 11) == 0)
            fail_msg("%s left in %s", e->d_name, db);
    closedir(d);
}

/* --sort, with runs small enough that there are more of them than merge
 * at once: the store answers as one loaded batch by batch (--no-sort) does,
 * a record given twice keeps its second version with the first in history,
 * the latest rows are laid out in key order (one transaction here: later
 * ones reuse the pages earlier ones freed; the one before it that gave the
 * records' names ids freed a page or two, which its first pages may take),
 * and no temporary file stays. */
static void import__sorted_load_matches_a_load_in_input_order(void **state)
{
    (void)state;
    const char *a = P("sorted"), *b = P("unsorted"), *in = P("m.jsonl");
    write_sorted_input(in, 3000, 700);
    declare_machine(a);
    declare_machine(b);
    run_result r;
    setenv("ADSTORE_TEST_RUN_BYTES", "2000", 1);
    RUN(r, 0, "-d", a, "import", "--sort", in);
    unsetenv("ADSTORE_TEST_RUN_BYTES");
    contains(r.err, "import: 3700 records from 1 file,");
    contains(r.err, ", sorted through ");
    lacks(r.err, "compacted");
    run_free(&r);
    RUN(r, 0, "-d", b, "import", "--no-sort", "--batch", "250", in);
    lacks(r.err, "sorted through");
    run_free(&r);
    no_runs_left(a);
    const char *q = "SELECT Name, Memory, Seq FROM Machine";
    char *x = query(a, q), *y = query(b, q);
    assert_string_equal(x, y);
    free(x);
    free(y);
    x = query(a, "SELECT Memory, Seq FROM Machine WHERE Name == \"slot00000000@node\"");
    assert_string_equal(x, "[ Memory = 4024; Seq = 3000 ]\n");
    free(x);
    long ra, rowsa, rb, rowsb;
    store_counts(a, &ra, &rowsa);
    store_counts(b, &rb, &rowsb);
    assert_int_equal(ra, rb);
    assert_int_equal(rowsa, rowsb);
    assert_int_equal(count_of(a, "Machine"), 3000);
    RUN(r, 0, "-d", a, "stats");
    const char *lay = strstr(r.out, "layout of latest rows:");
    assert_non_null(lay);
    const char *pct = strstr(lay, "% in file order");
    assert_non_null(pct);
    while (pct > lay && pct[-1] >= '0' && pct[-1] <= '9')
        pct--;
    if (atoi(pct) < 99)
        fail_msg("the latest rows are not in file order:\n%s", r.out);
    run_free(&r);
    DO(0, "-d", a, "verify");
}

/* A sorted load reports a bad record by its line: one refused while
 * reading stops the reading, and what was read before it is stored; one
 * refused by the store (here a bad _Timestamp, found in key order) stops
 * the merge after the batches before it, and a re-run goes on where it
 * stopped without storing a row twice; with --keep-going both are listed
 * and the rest is stored. */
static void import__sorted_load_reports_bad_records_by_line(void **state)
{
    (void)state;
    const char *db = P("db"), *in = P("bad.jsonl");
    FILE *f = fopen(in, "w");
    assert_non_null(f);
    for (int i = 0; i < 40; i++) {
        unsigned k = (unsigned)i * 2654435761u;
        if (i == 25)
            fprintf(f, "{\"Name\":\"untyped\",\"Seq\":%d}\n", i);
        else if (i == 9)
            fprintf(f, "{\"AdType\":\"Machine\",\"Name\":\"slot%08x@node\",\"_Timestamp\":\"soon\"}\n", k);
        else
            fprintf(f, "{\"AdType\":\"Machine\",\"Name\":\"slot%08x@node\",\"Seq\":%d}\n", k, i);
    }
    assert_int_equal(fclose(f), 0);
    declare_machine(db);
    run_result r;
    char want[1600];
    RUN(r, 1, "-d", db, "import", "--sort", "--batch", "4", in);
    snprintf(want, sizeof want,
             "%s:26: the record has neither AdType nor MyType to name its type", in);
    contains(r.err, want);
    snprintf(want, sizeof want,
             "%s:10: type Machine: _Timestamp must be an AbsTime, seconds since 1970 or ISO "
             "8601 text; \"soon\" is not a time\n", in);
    contains(r.err, want);
    contains(r.err, "The file was being stored in key order: the batches before it are in the store.");
    run_free(&r);
    long n1 = count_of(db, "Machine");
    assert_true(n1 < 24);
    /* again: the same place, nothing stored twice */
    RUN(r, 1, "-d", db, "import", "--sort", "--batch", "4", in);
    snprintf(want, sizeof want, "%s: resuming the sorted load of input records 1..25 after the ",
             in);
    contains(r.err, want);
    run_free(&r);
    long rec, rows;
    store_counts(db, &rec, &rows);
    assert_int_equal(count_of(db, "Machine"), n1);
    assert_int_equal(rows, rec);
    /* --keep-going: both listed, the rest stored, each once */
    RUN(r, 3, "-d", db, "import", "--sort", "--keep-going", "--batch", "4", in);
    snprintf(want, sizeof want, "skipped %s:10: type Machine: _Timestamp must be", in);
    contains(r.err, want);
    snprintf(want, sizeof want, "skipped %s:26: the record has neither AdType nor MyType", in);
    contains(r.err, want);
    run_free(&r);
    assert_int_equal(count_of(db, "Machine"), 38);
    store_counts(db, &rec, &rows);
    assert_int_equal(rows, rec);
    char *x = query(db, "SELECT count(*) AS n, count_distinct(Seq) AS d FROM Machine");
    assert_string_equal(x, "[ n = 38; d = 38 ]\n");
    free(x);
    no_runs_left(db);
    DO(0, "-d", db, "verify");
}

/* A sorted load killed at random moments (while reading, spilling runs or
 * merging) and run again until it finishes stores every record once, with
 * no row twice, and leaves no temporary file. */
static void import__sorted_load_killed_then_rerun_stores_each_record_once(void **state)
{
    (void)state;
    const int total = 40000;
    const char *db = P("db"), *file = P("big.jsonl");
    char data[1200];
    snprintf(data, sizeof data, "%s/data.mdb", db);
    declare_machine(db);
    write_sorted_input(file, total, 0);
    unsigned seed = (unsigned)time(NULL) ^ ((unsigned)getpid() << 8);
    srand(seed);
    print_message("sorted kill -9 test: seed %u\n", seed);
    setenv("ADSTORE_TEST_RUN_BYTES", "300000", 1);
    const char *argv[] = {"-d", db, "import", "--sort", "--batch", "500", file, NULL};
    int kills = 0, finished = 0;
    for (int attempt = 0; attempt < 20 && kills < 3 && !finished; attempt++) {
        long long threshold = file_size(data) + 16384 + rand() % (1024 * 1024);
        long delay = rand() % 30000;
        pid_t pid = spawn_adstore(argv, NULL, NULL, NULL);
        for (;;) {
            int status;
            pid_t w = waitpid(pid, &status, WNOHANG);
            if (w == pid) {
                if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
                    fail_msg("seed %u: import exited with status %d before the kill", seed, status);
                finished = 1;
                break;
            }
            if (file_size(data) >= threshold || attempt % 3 == 2) {
                sleep_us(delay);
                kill(pid, SIGKILL);
                int st = wait_child(pid);
                if (st == 128 + SIGKILL)
                    kills++;
                else if (st == 0)
                    finished = 1;
                else
                    fail_msg("seed %u: import exited with status %d", seed, st);
                break;
            }
            sleep_us(300);
        }
    }
    print_message("sorted kill -9 test: %d kills\n", kills);
    int runs = 0, status = -1;
    while (status != 0 && runs < 5) {
        run_result r;
        assert_int_equal(run_adstore(&r, argv, NULL), 0);
        status = r.status;
        if (status != 0 && runs == 4)
            fail_msg("seed %u: re-run exit %d: %s", seed, status, r.err);
        run_free(&r);
        runs++;
    }
    unsetenv("ADSTORE_TEST_RUN_BYTES");
    long rec, rows;
    store_counts(db, &rec, &rows);
    assert_int_equal(count_of(db, "Machine"), total);
    assert_int_equal(rows, rec);
    char *x = query(db, "SELECT count(*) AS n FROM Machine WHERE Seq >= 0");
    char want[64];
    snprintf(want, sizeof want, "[ n = %d ]\n", total);
    assert_string_equal(x, want);
    free(x);
    no_runs_left(db);
    DO(0, "-d", db, "verify");
    run_result r;
    RUN(r, 0, "-d", db, "import", "--sort", file);
    contains(r.err, "already imported (40000 records)");
    run_free(&r);
}

/* A file loaded batch by batch part way, then sorted from where that
 * stopped: the sorted load's progress counts from there, so after it stops
 * in its merge a re-run stores the rest, each record once (Job keys are
 * generated: a record stored twice would be there twice). */
static void import__sorted_load_resumed_after_a_load_batch_by_batch(void **state)
{
    (void)state;
    const char *db = P("db"), *file = P("r.jsonl");
    declare_job(db);
    write_jobs(file, 1, 20, 15);
    run_result r;
    char want[1400];
    RUN(r, 1, "-d", db, "import", "--no-sort", "--batch", "3", file);
    contains(r.err, "Input records 1..12 of this file are in the store");
    run_free(&r);
    RUN(r, 1, "-d", db, "import", "--sort", "--batch", "1", file);
    snprintf(want, sizeof want, "%s: resuming after input record 12 (12 records loaded before)\n",
             file);
    contains(r.err, want);
    snprintf(want, sizeof want, "%s:15: no type named Jobx (store a Type record first)\n", file);
    contains(r.err, want);
    contains(r.err, "The file was being stored in key order");
    run_free(&r);
    long d, n = jobs(db, &d);
    assert_int_equal(n, 14);
    assert_int_equal(d, 14);
    DO(0, "-d", db, "execute",
       "STORE [ AdType = \"Type\"; ForType = \"Jobx\"; AutoGenerateKey = true ]");
    RUN(r, 0, "-d", db, "import", "--sort", "--batch", "1", file);
    snprintf(want, sizeof want,
             "%s: resuming the sorted load of input records 13..20 after the 2 of its rows "
             "stored or refused before\n",
             file);
    contains(r.err, want);
    run_free(&r);
    n = jobs(db, &d);
    assert_int_equal(n, 19);
    assert_int_equal(d, 19);
    assert_int_equal(count_of(db, "Jobx"), 1);
    DO(0, "-d", db, "verify");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
        T(import__every_format_by_name_content_option_and_stdin),
        T(import__dumps_of_another_store_in_both_formats),
        T(import__type_option_types_records_without_adtype),
        T(import__a_bad_record_stops_it_and_its_batch_is_not_stored),
        T(import__keep_going_lists_bad_records_and_loads_the_rest),
        T(import__format_spellings_and_keep_going_exit_status),
        T(import__bad_dumps_and_files_are_refused),
        T(import__rerun_goes_on_after_the_last_committed_batch),
        T(import__a_file_changed_after_a_partial_import_is_refused),
        T(import__skip_passes_over_input_records_across_files),
        T(import__killed_at_random_moments_then_rerun_loads_each_record_once),
        T(import__backfill_dates_generated_ids_by_each_records_timestamp),
        T(import__backfill_of_a_keyed_record_lands_in_its_history),
        T(dump__restore_and_dump_again_is_byte_identical),
        T(restore__refuses_stores_with_rows_and_bad_dumps),
        T(restore__new_node_and_type_filters),
        T(backup__while_another_process_imports),
        T(backup__refuses_a_directory_that_is_not_empty),
        T(import__out_of_key_order_is_compacted_after),
        T(memory__import_dump_and_restore_stay_flat),
        T(import__two_at_once_of_one_file_load_it_once),
        T(import__sorted_load_matches_a_load_in_input_order),
        T(import__sorted_load_reports_bad_records_by_line),
        T(import__sorted_load_killed_then_rerun_stores_each_record_once),
        T(import__sorted_load_resumed_after_a_load_batch_by_batch),
#undef T
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
