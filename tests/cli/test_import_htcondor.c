/*
 * tests/cli/test_import_htcondor.c: `adstore import` of what HTCondor
 * writes, through the real program: condor_status -long ads taken from
 * HTCondor's own test data, a condor_history file with its "***" banners,
 * condor_status -any -json, JSON Lines and -xml (tests/data/htcondor/, with
 * its README and licence). Each sample is imported and read back attribute
 * for attribute; records without AdType are typed by MyType or --type, and
 * the message for a record with neither names both; rows are dated by
 * --time-attr (epoch seconds) and by _Timestamp given as epoch seconds or
 * ISO text, in STORE statements as in imports; `adstore help import` says
 * so.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tests/cli/run_check.h"

#define DATA ADS_SOURCE_DIR "/tests/data/htcondor/"

static char *dir; /* a fresh directory per test */
static char db[4096];

static int setup(void **state)
{
    (void)state;
    return cli_dir_new(&dir, db, sizeof db, "db");
}

static int teardown(void **state)
{
    (void)state;
    cli_dir_free(&dir);
    return 0;
}


static void contains_(const char *hay, const char *needle, int line)
{
    if (!strstr(hay, needle))
        fail_msg("line %d: expected to find\n%s\n--- in ---\n%s---", line, needle, hay);
}
#define contains(h, n) contains_((h), (n), __LINE__)

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("cannot read %s", path);
    char *p = NULL;
    size_t n = 0, cap = 0, k;
    do {
        if (n + 4097 > cap) {
            cap = cap ? 2 * cap : 65536;
            p = realloc(p, cap);
            assert_non_null(p);
        }
        k = fread(p + n, 1, 4096, f);
        n += k;
    } while (k > 0);
    fclose(f);
    p[n] = '\0';
    return p;
}

/* stdout of a statement in native format; caller frees. */
static char *query(const char *stmt)
{
    run_result r;
    RUN(r, 0, "-d", db, "execute", "-f", "native", stmt);
    free(r.err);
    return r.out;
}

static long count_where(const char *type, const char *where)
{
    size_t len = strlen(where) + 200;
    char *stmt = malloc(len);
    assert_non_null(stmt);
    snprintf(stmt, len, "SELECT count(*) AS n FROM %s WHERE %s", type, where);
    char *out = query(stmt);
    long n = -1;
    if (sscanf(out, "[ n = %ld ]", &n) != 1)
        fail_msg("%s: unexpected output '%s'", stmt, out);
    free(out);
    free(stmt);
    return n;
}

static void declare(const char *type, const char *key)
{
    char stmt[300];
    snprintf(stmt, sizeof stmt, "STORE [ AdType = \"Type\"; ForType = \"%s\"; KeyAttributes = "
                                "{ \"%s\" } ]",
             type, key);
    DO(0, "-d", db, "execute", stmt);
}

/*
 * The records of a long-form text (blank lines or "***" banners between
 * them), each as one condition `Name =?= (value) && ...` over all its
 * attributes, and the names. Values holding a backslash are left out of the
 * condition (in `=` lines HTCondor's strings take a backslash as it is, in
 * a statement it escapes) and checked by the caller.
 */
typedef struct long_rec {
    char *cond;
    char names[200][64];
    int n;
} long_rec;

static int read_long(const char *path, long_rec *recs, int max)
{
    char *text = slurp(path);
    int nrec = 0;
    long_rec *cur = NULL;
    size_t cap = 0, len = 0;
    for (char *line = text, *next; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        if (!*line || strncmp(line, "***", 3) == 0) {
            cur = NULL;
            continue;
        }
        if (!cur) {
            assert_true(nrec < max);
            cur = &recs[nrec++];
            memset(cur, 0, sizeof *cur);
            cap = 1024;
            len = 0;
            cur->cond = calloc(1, cap);
            assert_non_null(cur->cond);
        }
        char *eq = strstr(line, " = ");
        assert_non_null(eq);
        *eq = '\0';
        const char *value = eq + 3;
        assert_true(cur->n < 200);
        snprintf(cur->names[cur->n++], 64, "%s", line);
        if (strchr(value, '\\'))
            continue;
        size_t need = len + strlen(line) + strlen(value) + 16;
        if (need > cap) {
            cap = 2 * need;
            cur->cond = realloc(cur->cond, cap);
            assert_non_null(cur->cond);
        }
        len += (size_t)sprintf(cur->cond + len, "%s%s =?= (%s)", len ? " && " : "", line, value);
    }
    free(text);
    return nrec;
}

/* Every attribute name appears in the native output of the record. */
static void has_names(const char *out, const long_rec *r)
{
    for (int i = 0; i < r->n; i++) {
        char a[80], b[80];
        snprintf(a, sizeof a, "[ %s = ", r->names[i]);
        snprintf(b, sizeof b, "; %s = ", r->names[i]);
        if (!strstr(out, a) && !strstr(out, b))
            fail_msg("attribute %s is not read back:\n%s", r->names[i], out);
    }
}

/* Each record of the long-form file path is in type and equal to its text,
 * attribute for attribute. */
static void long_reads_back(const char *path, const char *type, const char *key)
{
    long_rec *recs = calloc(8, sizeof *recs);
    assert_non_null(recs);
    int n = read_long(path, recs, 8);
    assert_true(n > 0);
    for (int i = 0; i < n; i++) {
        if (count_where(type, recs[i].cond) != 1)
            fail_msg("%s record %d does not read back as written: %s", path, i + 1,
                     recs[i].cond);
        /* the attributes are all there, and no more than AdType besides */
        char stmt[600];
        const char *kv = strstr(recs[i].cond, key);
        assert_non_null(kv);
        const char *end = strstr(kv, " && ");
        snprintf(stmt, sizeof stmt, "SELECT * FROM %s WHERE %.*s", type,
                 (int)(end ? (size_t)(end - kv) : strlen(kv)), kv);
        char *out = query(stmt);
        has_names(out, &recs[i]);
        int attrs = 1;
        bool in_string = false;
        for (const char *p = out; *p && *p != '\n'; p++) {
            if (*p == '\\' && in_string && p[1])
                p++;
            else if (*p == '"')
                in_string = !in_string;
            else if (*p == ';' && !in_string)
                attrs++;
        }
        assert_int_equal(attrs, recs[i].n + 1); /* + AdType */
        free(out);
        free(recs[i].cond);
    }
    free(recs);
}

/* ---- MyType and --type ---- */

static void status_long__mytype_types_the_record_and_every_attribute_reads_back(void **state)
{
    (void)state;
    declare("Machine", "Name");
    run_result r;
    RUN(r, 0, "-d", db, "import", DATA "small1slot.long", DATA "job_startd_multimatch.long");
    contains(r.err, "import: 2 records from 2 files,");
    run_free(&r);
    long_reads_back(DATA "small1slot.long", "Machine", "Name");
    long_reads_back(DATA "job_startd_multimatch.long", "Machine", "Name");
    /* values and expressions as HTCondor wrote them */
    char *out = query("SELECT * FROM Machine WHERE Name == \"ingwe.cs.wisc.edu\"");
    contains(out, "[ Activity = \"Busy\"; AdType = \"Machine\"; Arch = \"X86_64\"; ");
    contains(out, "; MyType = \"Machine\"; ");
    contains(out, "; TotalCpus = 1.0; ");
    contains(out, "; JavaMFlops = 1235.63269; ");
    contains(out, "; MachineMaxVacateTime = 10 * 60; ");
    /* adstore spells =!= and =?= as isnt and is (docs/classad.md) */
    contains(out, "; Unhibernate = MY.MachineLastMatchTime isnt undefined; ");
    contains(out, "; CpuBusy = ((LoadAvg - CondorLoadAvg) >= 0.5); ");
    contains(out, "; Requirements = (START) && (IsValidCheckpointPlatform); ");
    contains(out, "; IsValidCheckpointPlatform = (TARGET.JobUniverse isnt 1 || "
                  "((MY.CheckpointPlatform isnt undefined) && ((TARGET.LastCheckpointPlatform is "
                  "MY.CheckpointPlatform) || (TARGET.NumCkpts == 0)))); ");
    contains(out, "; CondorVersion = \"$CondorVersion: 8.2.6 Dec 02 2014 BuildID: UW_development "
                  "PRE-RELEASE-UWCS $\"; ");
    free(out);
    out = query("SELECT * FROM Machine WHERE Name == \"resource1\"");
    assert_string_equal(out, "[ Activity = \"Idle\"; AdType = \"Machine\"; CurrentRank = 0.0; "
                             "MyType = \"Machine\"; Name = \"resource1\"; Rank = 0.0; Requirements = "
                             "true; ResourceName = \"condor foo.cs.wisc.edu\"; State = \"Unclaimed\"; "
                             "TargetType = \"Job\"; UpdateSequenceNumber = 2; WantAdRevaluate = true; "
                             "WantClaiming = false ]\n");
    free(out);
}

static void mytype__neither_names_both_and_type_option_comes_first(void **state)
{
    (void)state;
    DO(0, "-d", db, "execute",
       "STORE [ AdType = \"Type\"; ForType = \"Job\"; AutoGenerateKey = true ]");
    declare("Other", "Name");
    run_result r;
    /* HTCondor's two records without MyType: refused, the message names
     * both attributes and the option */
    RUN(r, 1, "-d", db, "import", DATA "test_multiple.old.long");
    contains(r.err, DATA "test_multiple.old.long:1: the record has neither AdType nor MyType to "
                         "name its type (give every such record one with --type T)\n");
    run_free(&r);
    /* with -k both are listed */
    RUN(r, 3, "-d", db, "import", "-k", DATA "test_multiple.old.long");
    contains(r.err, "skipped " DATA "test_multiple.old.long:1: the record has neither AdType");
    contains(r.err, "skipped " DATA "test_multiple.old.long:4: the record has neither AdType");
    contains(r.err, "import: 0 records from 1 file,");
    contains(r.err, ", 2 bad records skipped\n");
    run_free(&r);
    /* --type gives them one */
    RUN(r, 0, "-d", db, "import", "--restart", "--type", "Job", DATA "test_multiple.old.long");
    contains(r.err, "import: 2 records from 1 file,");
    run_free(&r);
    assert_int_equal(count_where("Job", "MaxHosts =?= 1 && Managed =?= \"Schedd\""), 1);
    assert_int_equal(count_where("Job", "User =?= \"bbockelm@users.opensciencegrid.org\" && "
                                        "SUBMIT_x509userproxy =?= \"/tmp/x509up_u1221\""),
                     1);
    /* --type comes before MyType: a Machine ad lands in Other, its MyType kept */
    RUN(r, 0, "-d", db, "import", "--type", "Other", DATA "job_startd_multimatch.long");
    run_free(&r);
    char *out = query("SELECT AdType, MyType, Name FROM Other");
    assert_string_equal(out, "[ AdType = \"Other\"; MyType = \"Machine\"; Name = \"resource1\" ]\n");
    free(out);
    /* AdType comes before both */
    RUN_IN(r, "AdType = \"Other\"\nMyType = \"Machine\"\nName = \"o2\"\n", 0, "-d", db, "import",
           "--type", "Job", "-");
    run_free(&r);
    assert_int_equal(count_where("Other", "Name == \"o2\" && MyType == \"Machine\""), 1);
    /* a MyType that is not a string */
    RUN_IN(r, "MyType = 3\nName = \"x\"\n", 1, "-d", db, "import", "-");
    contains(r.err, "<stdin>:1: MyType, which names the type of a record without AdType, must be "
                    "a type name, not integer (or give the type with --type T)\n");
    run_free(&r);
    RUN_IN(r, "MyType = \"\"\nName = \"x\"\n", 1, "-d", db, "import", "-");
    contains(r.err, "<stdin>:1: MyType, which names the type of a record without AdType, must be "
                    "a type name, not an empty string (or give the type with --type T)\n");
    run_free(&r);
    /* a MyType that names no declared type */
    RUN_IN(r, "MyType = \"Negotiator\"\nName = \"x\"\n", 1, "-d", db, "import", "-");
    contains(r.err, "<stdin>:1: no type named Negotiator (store a Type record first)\n");
    run_free(&r);
}

static void classad_sample__new_syntax_records_read_back(void **state)
{
    (void)state;
    declare("Job", "foo");
    declare("Other", "bar");
    run_result r;
    /* the first record has a key for Job, the second one for Other: each
     * file is imported whole with one --type, so two imports */
    RUN(r, 1, "-d", db, "import", "--type", "Job", DATA "test_multiple.classad");
    contains(r.err, DATA "test_multiple.classad:4: a record of type Job needs key attribute foo\n");
    run_free(&r);
    RUN(r, 3, "-d", db, "import", "-k", "--restart", "--type", "Job", DATA "test_multiple.classad");
    contains(r.err, "import: 1 record from 1 file,");
    run_free(&r);
    /* baz = undefined: an undefined attribute is not stored, and reads as
     * undefined (docs/storage.md) */
    assert_int_equal(count_where("Job", "foo =?= \"bar\" && baz =?= undefined"), 1);
    RUN(r, 3, "-d", db, "import", "-k", "--restart", "--type", "Other",
        DATA "test_multiple.classad");
    run_free(&r);
    char *out = query("SELECT * FROM Other");
    assert_string_equal(out, "[ AdType = \"Other\"; bar = 1 ]\n");
    free(out);
}

/* ---- condor_history files ---- */

static void history__banners_end_records_and_time_attr_dates_each_row(void **state)
{
    (void)state;
    declare("Job", "GlobalJobId");
    run_result r;
    /* found to be the long form by its content; the banners end records */
    RUN(r, 0, "-d", db, "import", "--backfill", "--time-attr", "CompletionDate", DATA "history");
    contains(r.err, "import: 3 records from 1 file,");
    run_free(&r);
    long_reads_back(DATA "history", "Job", "GlobalJobId");
    /* the values left out of the comparison above, and the rows' dates */
    char *out = query("SELECT GlobalJobId, Iwd, Args, _Timestamp FROM Job");
    assert_string_equal(
        out, "[ GlobalJobId = \"submit.example.org#101.0#1700000000\"; Iwd = "
             "\"C:\\\\Users\\\\alice\\\\work\"; Args = \"60\"; _Timestamp = `2023-11-14T22:15:25Z` ]\n"
             "[ GlobalJobId = \"submit.example.org#101.1#1700000000\"; Iwd = "
             "\"C:\\\\Users\\\\alice\\\\work\"; Args = \"60\"; _Timestamp = `2023-11-14T22:16:40Z` ]\n"
             "[ GlobalJobId = \"submit.example.org#102.0#1700000300\"; Iwd = undefined; Args = "
             "\"run.py \\\"quoted\\\"\"; _Timestamp = `1970-01-01T00:00:00Z` ]\n");
    free(out);
    /* nothing of a banner is kept */
    assert_int_equal(count_where("Job", "Offset =!= undefined"), 0);
    /* a syntax error skips to the next banner, not past it */
    RUN_IN(r, "ClusterId = 1\nGlobalJobId = \"a\"\nBad = (\n*** Offset = 0\nClusterId = 2\n"
              "GlobalJobId = \"b\"\n*** Offset = 40\n",
           3, "-d", db, "import", "-k", "--type", "Job", "-");
    contains(r.err, "skipped <stdin>:3:8: ");
    contains(r.err, "import: 1 record from 1 file,");
    run_free(&r);
    assert_int_equal(count_where("Job", "GlobalJobId == \"b\" && ClusterId == 2"), 1);
}

static void time_attr__missing_or_not_a_time_is_a_bad_record(void **state)
{
    (void)state;
    declare("Machine", "Name");
    run_result r;
    RUN_IN(r, "MyType = \"Machine\"\nName = \"a\"\n", 1, "-d", db, "import", "--time-attr",
           "LastHeardFrom", "-");
    contains(r.err, "<stdin>:1: --time-attr LastHeardFrom: the record has no LastHeardFrom\n");
    run_free(&r);
    RUN_IN(r, "MyType = \"Machine\"\nName = \"a\"\nLastHeardFrom = true\n", 1, "-d", db, "import",
           "--time-attr", "LastHeardFrom", "-");
    contains(r.err, "<stdin>:1: --time-attr LastHeardFrom: LastHeardFrom is boolean, not a time "
                    "(seconds since 1970, an AbsTime or ISO 8601 text)\n");
    run_free(&r);
    RUN_IN(r, "MyType = \"Machine\"\nName = \"a\"\nLastHeardFrom = Now\n", 1, "-d", db, "import",
           "--time-attr", "LastHeardFrom", "-");
    contains(r.err, "<stdin>:1: --time-attr LastHeardFrom: the record has no LastHeardFrom value "
                    "(it is an expression)\n");
    run_free(&r);
    RUN_IN(r, "MyType = \"Machine\"\nName = \"a\"\nLastHeardFrom = undefined\n", 1, "-d", db,
           "import", "--time-attr", "LastHeardFrom", "-");
    contains(r.err, "<stdin>:1: --time-attr LastHeardFrom: the record has no LastHeardFrom (it is "
                    "undefined)\n");
    run_free(&r);
    RUN_IN(r, "MyType = \"Machine\"\nName = \"a\"\nLastHeardFrom = \"soon\"\n", 1, "-d", db,
           "import", "--time-attr", "LastHeardFrom", "-");
    contains(r.err, "<stdin>:1: type Machine: _Timestamp must be an AbsTime, seconds since 1970 "
                    "or ISO 8601 text; \"soon\" is not a time\n");
    run_free(&r);
    RUN(r, 2, "-d", db, "import", "--time-attr", "", "-");
    contains(r.err, "--time-attr needs an attribute name");
    run_free(&r);
    /* the attribute replaces a _Timestamp the record has */
    RUN_IN(r, "MyType = \"Machine\"\nName = \"b\"\nLastHeardFrom = 1000000000\n"
              "_Timestamp = absTime(\"2020-01-01T00:00:00Z\")\n",
           0, "-d", db, "import", "--time-attr", "LastHeardFrom", "-");
    run_free(&r);
    char *out = query("SELECT Name, LastHeardFrom, _Timestamp FROM Machine");
    assert_string_equal(out, "[ Name = \"b\"; LastHeardFrom = 1000000000; _Timestamp = "
                             "`2001-09-09T01:46:40Z` ]\n");
    free(out);
}

/* ---- JSON, JSON Lines, XML ---- */

static void status_json_jsonl_xml__land_by_mytype_and_read_back(void **state)
{
    (void)state;
    declare("Machine", "Name");
    declare("Scheduler", "Name");
    declare("DaemonMaster", "Name");
    run_result r;
    RUN(r, 0, "-d", db, "import", "--time-attr", "LastHeardFrom", DATA "any.json",
        DATA "machines.jsonl", DATA "machines.xml");
    contains(r.err, "import: 6 records from 3 files,");
    run_free(&r);
    /* condor_status -any -json: each ad in its MyType's type */
    char *out = query("SELECT * FROM Machine WHERE Name == \"slot1@node1.example.org\"");
    assert_string_equal(
        out, "[ Activity = \"Idle\"; AdType = \"Machine\"; Arch = \"X86_64\"; ChildCpus = { 1, 2 "
             "}; Cpus = 4; CurrentTime = time(); HasDocker = true; LastHeardFrom = 1700000500; "
             "LoadAvg = 0.25; Machine = \"node1.example.org\"; Memory = 8192; MyType = "
             "\"Machine\"; Name = \"slot1@node1.example.org\"; OpSys = \"LINUX\"; Requirements = "
             "START && (TARGET.RequestMemory <= MY.Memory); Start = true; State = \"Unclaimed\"; "
             "TargetType = \"Job\" ]\n");
    free(out);
    out = query("SELECT * FROM Scheduler");
    assert_string_equal(
        out, "[ AdType = \"Scheduler\"; CondorVersion = \"$CondorVersion: 23.0.0 2023-09-29 "
             "BuildID: 678 $\"; LastHeardFrom = 1700000510; Machine = \"submit.example.org\"; "
             "MyType = \"Scheduler\"; Name = \"submit.example.org\"; TargetType = \"\"; "
             "TotalIdleJobs = 3; TotalRunningJobs = 12 ]\n");
    free(out);
    out = query("SELECT * FROM DaemonMaster");
    assert_string_equal(
        out, "[ AdType = \"DaemonMaster\"; LastHeardFrom = 1700000520; Machine = "
             "\"node1.example.org\"; MasterIpAddr = \"<10.0.0.1:9618?addrs=10.0.0.1-9618>\"; "
             "MyType = \"DaemonMaster\"; Name = \"node1.example.org\" ]\n");
    free(out);
    /* JSON Lines, with LastHeardFrom a real */
    out = query("SELECT * FROM Machine WHERE Machine =?= undefined && Name != \"resource1\"");
    assert_string_equal(
        out, "[ AdType = \"Machine\"; Cpus = 2; LastHeardFrom = 1700000600.5; Memory = 4096; "
             "MyType = \"Machine\"; Name = \"slot1@node2.example.org\"; Start = KeyboardIdle > "
             "15 * 60 ]\n"
             "[ AdType = \"Machine\"; CurrentTime = time(); HasVM = false; LastHeardFrom = "
             "1700000700; LoadAvg = 1.5; Memory = 16384; MyType = \"Machine\"; Name = "
             "\"slot1@node3.example.org\"; OpSysLongName = \"Debian GNU/Linux 12 (bookworm) & "
             "more\"; Requirements = START && (TARGET.RequestMemory <= MY.Memory); TargetType = "
             "\"Job\" ]\n"
             "[ AdType = \"Machine\"; Cpus = 2; LastHeardFrom = 1700000601; Memory = 4096; "
             "MyType = \"Machine\"; Name = \"slot2@node2.example.org\"; Start = true ]\n");
    free(out);
    /* every row dated by its LastHeardFrom */
    out = query("SELECT Name, _Timestamp FROM Machine");
    assert_string_equal(out,
                        "[ Name = \"slot1@node1.example.org\"; _Timestamp = `2023-11-14T22:21:40Z` ]\n"
                        "[ Name = \"slot1@node2.example.org\"; _Timestamp = "
                        "`2023-11-14T22:23:20.5Z` ]\n"
                        "[ Name = \"slot1@node3.example.org\"; _Timestamp = `2023-11-14T22:25:00Z` ]\n"
                        "[ Name = \"slot2@node2.example.org\"; _Timestamp = `2023-11-14T22:23:21Z` ]\n");
    free(out);
}

/* ---- _Timestamp as HTCondor writes times ---- */

static void timestamp__epoch_seconds_and_iso_text_in_store_and_backfill(void **state)
{
    (void)state;
    declare("Machine", "Name");
    DO(0, "-d", db, "execute", "STORE [ AdType = \"Machine\"; Name = \"i\"; _Timestamp = 1700000000 ]");
    DO(0, "-d", db, "execute",
       "STORE [ AdType = \"Machine\"; Name = \"r\"; _Timestamp = 1700000000.25 ]");
    DO(0, "-d", db, "execute",
       "STORE [ AdType = \"Machine\"; Name = \"s\"; _Timestamp = \"2023-11-14T22:13:20+01:00\" ]");
    run_result r;
    RUN(r, 1, "-d", db, "execute", "STORE [ AdType = \"Machine\"; Name = \"x\"; _Timestamp = "
                                   "\"last tuesday\" ]");
    contains(r.err, "type Machine: _Timestamp must be an AbsTime, seconds since 1970 or ISO 8601 "
                    "text; \"last tuesday\" is not a time");
    run_free(&r);
    char *out = query("SELECT Name, _Timestamp FROM Machine");
    assert_string_equal(out, "[ Name = \"i\"; _Timestamp = `2023-11-14T22:13:20Z` ]\n"
                             "[ Name = \"r\"; _Timestamp = `2023-11-14T22:13:20.25Z` ]\n"
                             "[ Name = \"s\"; _Timestamp = `2023-11-14T22:13:20+01:00` ]\n");
    free(out);
    /* a backfill takes the same forms, and dates generated ids by them */
    DO(0, "-d", db, "execute",
       "STORE [ AdType = \"Type\"; ForType = \"Event\"; AutoGenerateKey = true ]");
    RUN_IN(r,
           "{\"AdType\":\"Event\",\"n\":1,\"_Timestamp\":1600000000}\n"
           "{\"AdType\":\"Event\",\"n\":2,\"_Timestamp\":1600000001.5}\n"
           "{\"AdType\":\"Event\",\"n\":3,\"_Timestamp\":\"2020-09-13T12:26:42Z\"}\n",
           0, "-d", db, "import", "--backfill", "-");
    contains(r.err, "import: 3 records from 1 file,");
    run_free(&r);
    out = query("SELECT n, _Timestamp FROM Event ORDER BY n");
    assert_string_equal(out, "[ n = 1; _Timestamp = `2020-09-13T12:26:40Z` ]\n"
                             "[ n = 2; _Timestamp = `2020-09-13T12:26:41.5Z` ]\n"
                             "[ n = 3; _Timestamp = `2020-09-13T12:26:42Z` ]\n");
    free(out);
    RUN_IN(r, "{\"AdType\":\"Event\",\"n\":4,\"_Timestamp\":true}\n", 1, "-d", db, "import",
           "--backfill", "-");
    contains(r.err, "<stdin>:1: a backfill needs _Timestamp on every record: an AbsTime, seconds "
                    "since 1970 or ISO 8601 text\n");
    run_free(&r);
}

static void help__names_mytype_time_attr_and_history_banners(void **state)
{
    (void)state;
    run_result r;
    RUN(r, 0, "help", "import");
    contains(r.out, "[--time-attr NAME]");
    contains(r.out, "AdType takes --type T, else its MyType (as HTCondor writes it).\n");
    contains(r.out, "  --time-attr NAME   date each row by its attribute NAME (required on each),\n");
    contains(r.out, "condor_history files, whose \"*** ...\" banner lines end\n");
    run_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            status_long__mytype_types_the_record_and_every_attribute_reads_back, setup, teardown),
        cmocka_unit_test_setup_teardown(mytype__neither_names_both_and_type_option_comes_first,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(classad_sample__new_syntax_records_read_back, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(history__banners_end_records_and_time_attr_dates_each_row,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(time_attr__missing_or_not_a_time_is_a_bad_record, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(status_json_jsonl_xml__land_by_mytype_and_read_back, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(
            timestamp__epoch_seconds_and_iso_text_in_store_and_backfill, setup, teardown),
        cmocka_unit_test_setup_teardown(help__names_mytype_time_attr_and_history_banners, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
