/*
 * tests/classad/test_formats.c: the long, JSON, XML and new-syntax stream forms of records
 * (classad/formats.h): HTCondor's own output read in with the right types,
 * byte-exact output for examples, every error a user can reach with its
 * message, line and column, and many random records through each form and
 * back, equal.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/limits.h"

#include "classad/formats.h"

static ads_arena *arena;

static int setup(void **state)
{
    (void)state;
    setenv("TZ", "UTC", 1);
    arena = ads_arena_new();
    return arena ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    ads_arena_free(arena);
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Helpers                                                                  */
/* ------------------------------------------------------------------------ */

enum { LONG, JSON, XML, CLASSAD };
static const char *const form_names[] = {"long", "JSON", "XML", "ClassAd"};

/* A reader of any form over a buffer or a FILE *. */
typedef struct reader {
    int form;
    ads_long_reader *l;
    ads_json_reader *j;
    ads_xml_reader *x;
    ads_classad_reader *c;
} reader;

static int reader_open(reader *r, int form, const char *text, size_t len, FILE *f,
                       ads_error *err)
{
    memset(r, 0, sizeof *r);
    r->form = form;
    switch (form) {
    case LONG:
        return f ? ads_long_reader_new_file(&r->l, f, err)
                 : ads_long_reader_new(&r->l, text, len, err);
    case JSON:
        return f ? ads_json_reader_new_file(&r->j, f, err)
                 : ads_json_reader_new(&r->j, text, len, err);
    case CLASSAD:
        return f ? ads_classad_reader_new_file(&r->c, f, err)
                 : ads_classad_reader_new(&r->c, text, len, err);
    default:
        return f ? ads_xml_reader_new_file(&r->x, f, err)
                 : ads_xml_reader_new(&r->x, text, len, err);
    }
}

static int reader_next(reader *r, const ads_record **out, int *line, ads_error *err)
{
    switch (r->form) {
    case LONG:
        return ads_long_reader_next(out, line, r->l, arena, err);
    case JSON:
        return ads_json_reader_next(out, line, r->j, arena, err);
    case CLASSAD:
        return ads_classad_reader_next(out, line, r->c, arena, err);
    default:
        return ads_xml_reader_next(out, line, r->x, arena, err);
    }
}

static void reader_close(reader *r)
{
    ads_long_reader_free(r->l);
    ads_json_reader_free(r->j);
    ads_xml_reader_free(r->x);
    ads_classad_reader_free(r->c);
}

/* Read every record of text; fails the test on any error. */
static size_t read_all(int form, const char *text, const ads_record **recs, int *lines,
                       size_t max)
{
    reader r;
    ads_error err;
    size_t n = 0;
    const ads_record *rec;
    int line, rc;
    assert_int_equal(reader_open(&r, form, text, strlen(text), NULL, &err), 0);
    while ((rc = reader_next(&r, &rec, &line, &err)) == 1) {
        assert_true(n < max);
        recs[n] = rec;
        if (lines)
            lines[n] = line;
        n++;
    }
    if (rc != 0)
        fail_msg("%s: line %d, column %d: %s", form_names[form], err.line, err.column,
                 err.message);
    reader_close(&r);
    return n;
}

/* The only record of text. */
static const ads_record *read_one(int form, const char *text)
{
    const ads_record *rec[2];
    assert_int_equal(read_all(form, text, rec, NULL, 2), 1);
    return rec[0];
}

/* The new-syntax text of a record or an expression, in the arena. */
static const char *text_of_record(const ads_record *r)
{
    ads_buf b = ADS_BUF_INIT;
    ads_record_unparse(&b, r);
    char *s = ads_arena_strndup(arena, ads_buf_cstr(&b), b.len);
    ads_buf_free(&b);
    return s;
}

static const char *text_of_expr(const ads_expr *e)
{
    ads_buf b = ADS_BUF_INIT;
    ads_expr_unparse(&b, e);
    char *s = ads_arena_strndup(arena, ads_buf_cstr(&b), b.len);
    ads_buf_free(&b);
    return s;
}

/* A record in new syntax with every constant attribute folded to a value,
 * as the readers store them. */
static const ads_record *valued(const char *text)
{
    const ads_record *parsed, *out;
    ads_record_builder *b;
    ads_error err;
    if (ads_record_parse(&parsed, arena, text, strlen(text), &err))
        fail_msg("'%s': %s", text, err.message);
    assert_int_equal(ads_record_builder_new(&b, arena, &err), 0);
    for (size_t i = 0; i < ads_record_size(parsed); i++) {
        const ads_expr *e;
        ads_str name = ads_record_name(parsed, i);
        assert_int_equal(ads_expr_fold(&e, arena, ads_record_expr(parsed, i), &err), 0);
        assert_int_equal(ads_record_builder_add(b, name.p, name.len, e, &err), 0);
    }
    assert_non_null(out = ads_record_builder_finish(b));
    return out;
}

/* The value of attribute name, which must be a value (not an expression). */
static const ads_value *value_of(const ads_record *r, const char *name)
{
    const ads_expr *e = ads_record_lookup(r, name, strlen(name));
    if (!e)
        fail_msg("no attribute %s", name);
    const ads_value *v = ads_expr_literal_value(e);
    if (!v)
        fail_msg("%s is the expression %s, not a value", name, text_of_expr(e));
    return v;
}

static void want_string(const ads_record *r, const char *name, const char *want)
{
    const ads_value *v = value_of(r, name);
    assert_int_equal(v->type, ADS_STRING);
    if (v->u.s.len != strlen(want) || memcmp(v->u.s.p, want, v->u.s.len) != 0)
        fail_msg("%s: expected \"%s\", got \"%.*s\"", name, want, (int)v->u.s.len, v->u.s.p);
}

static void want_int(const ads_record *r, const char *name, int64_t want)
{
    const ads_value *v = value_of(r, name);
    assert_int_equal(v->type, ADS_INTEGER);
    assert_int_equal(v->u.i, want);
}

static void want_real(const ads_record *r, const char *name, double want)
{
    const ads_value *v = value_of(r, name);
    if (v->type != ADS_REAL)
        fail_msg("%s: expected a real, got %s", name, ads_vtype_name(v->type));
    assert_true(v->u.r == want);
}

static void want_bool(const ads_record *r, const char *name, bool want)
{
    const ads_value *v = value_of(r, name);
    assert_int_equal(v->type, ADS_BOOLEAN);
    assert_int_equal(v->u.b, want);
}

/* Attribute name holds the value whose new-syntax text is want. */
static void want_value_text(const ads_record *r, const char *name, ads_vtype type,
                              const char *want)
{
    const ads_value *v = value_of(r, name);
    if (v->type != type)
        fail_msg("%s: expected a %s, got %s", name, ads_vtype_name(type),
                 ads_vtype_name(v->type));
    ads_buf b = ADS_BUF_INIT;
    ads_value_unparse(&b, v);
    if (strcmp(ads_buf_cstr(&b), want) != 0)
        fail_msg("%s: expected %s, got %s", name, want, ads_buf_cstr(&b));
    ads_buf_free(&b);
}

/* Attribute name is an expression (not a value) whose text is want. */
static void want_expr(const ads_record *r, const char *name, const char *want)
{
    const ads_expr *e = ads_record_lookup(r, name, strlen(name));
    if (!e)
        fail_msg("no attribute %s", name);
    if (ads_expr_literal_value(e))
        fail_msg("%s: expected an expression, got the value %s", name, text_of_expr(e));
    if (strcmp(text_of_expr(e), want) != 0)
        fail_msg("%s: expected %s, got %s", name, want, text_of_expr(e));
}

/*
 * Two records are the same: the same names in the same order, and for each
 * attribute either two values that are ads_value_same with the same text,
 * or (where either is an expression) the same text.
 */
static bool same_record(const ads_record *a, const ads_record *b, char *why, size_t cap)
{
    if (ads_record_size(a) != ads_record_size(b)) {
        snprintf(why, cap, "%zu attributes, then %zu", ads_record_size(a), ads_record_size(b));
        return false;
    }
    for (size_t i = 0; i < ads_record_size(a); i++) {
        ads_str na = ads_record_name(a, i), nb = ads_record_name(b, i);
        if (na.len != nb.len || memcmp(na.p, nb.p, na.len) != 0) {
            snprintf(why, cap, "attribute %zu: name '%.*s', then '%.*s'", i, (int)na.len, na.p,
                     (int)nb.len, nb.p);
            return false;
        }
        const ads_expr *ea = ads_record_expr(a, i), *eb = ads_record_expr(b, i);
        const ads_value *va = ads_expr_literal_value(ea), *vb = ads_expr_literal_value(eb);
        const char *ta = text_of_expr(ea), *tb = text_of_expr(eb);
        if ((va && vb && !ads_value_same(va, vb)) || strcmp(ta, tb) != 0) {
            snprintf(why, cap, "attribute '%.*s': %s, then %s", (int)na.len, na.p, ta, tb);
            return false;
        }
    }
    return true;
}

static void assert_same_record(const ads_record *a, const ads_record *b)
{
    char why[512];
    if (!same_record(a, b, why, sizeof why))
        fail_msg("records differ: %s", why);
}

/* Write r in a form into b. */
static int write_form(int form, ads_buf *b, const ads_record *r, int flags, ads_error *err)
{
    int rc;
    switch (form) {
    case LONG:
        return ads_long_write(b, r, err);
    case JSON:
        rc = ads_json_write(b, r, flags, err);
        ads_buf_addc(b, '\n');
        return rc;
    case CLASSAD:
        ads_record_unparse(b, r);
        ads_buf_addc(b, '\n');
        return 0;
    default:
        return ads_xml_write(b, r, err);
    }
}

/* Reading text in a form must fail with this code, position and message. */
static void check_error(int form, const char *text, size_t len, int code, int line,
                         int column, const char *message)
{
    reader r;
    ads_error err;
    const ads_record *rec;
    int rc;
    assert_int_equal(reader_open(&r, form, text, len, NULL, &err), 0);
    while ((rc = reader_next(&r, &rec, NULL, &err)) == 1)
        ;
    if (rc != code || err.line != line || err.column != column ||
        strcmp(err.message, message) != 0)
        fail_msg("%s input '%s':\n  expected %d at %d:%d: %s\n  got      %d at %d:%d: %s",
                 form_names[form], text, code, line, column, message, rc, err.line,
                 err.column, err.message);
    reader_close(&r);
}

#define CHECK_ERROR(form, text, code, line, column, message)                                 \
    check_error(form, text, sizeof(text) - 1, code, line, column, message)

/* A FILE * holding len bytes of text, positioned at the start. */
static FILE *file_of(const char *text, size_t len)
{
    FILE *f = tmpfile();
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, len, f), len);
    rewind(f);
    return f;
}

/* ------------------------------------------------------------------------ */
/* HTCondor's output                                                        */
/* ------------------------------------------------------------------------ */

/* `condor_q -long` (HTCondor 23.0): two jobs, the second on Windows. Strings
 * are in HTCondor's old ClassAd escaping, where a backslash is literal. */
static const char condor_q_long[] =
    "AccountingGroup = \"group_physics.alice\"\n"
    "Args = \"--input data.txt --label \\\"run 7\\\"\"\n"
    "AutoClusterAttrs = \"JobUniverse,LastCheckpointPlatform,NumCkpts,Rank,Requirements,"
    "DiskUsage,FileSystemDomain,ImageSize,MemoryUsage,RequestCpus,RequestDisk,"
    "RequestMemory\"\n"
    "AutoClusterId = 3\n"
    "BufferBlockSize = 32768\n"
    "ClusterId = 1042\n"
    "Cmd = \"/home/alice/bin/analyze\"\n"
    "CommittedTime = 0\n"
    "CondorPlatform = \"$CondorPlatform: x86_64_AlmaLinux9 $\"\n"
    "CondorVersion = \"$CondorVersion: 23.0.3 2024-01-04 BuildID: 698410 PackageID: "
    "23.0.3-1 $\"\n"
    "CumulativeSlotTime = 0\n"
    "DiskUsage = 2500\n"
    "DiskUsage_RAW = 2442\n"
    "EncryptExecuteDirectory = false\n"
    "EnteredCurrentStatus = 1704380400\n"
    "Environment = \"OMP_NUM_THREADS=4 DATA_DIR=/scratch/alice\"\n"
    "Err = \"analyze.1042.0.err\"\n"
    "ExitBySignal = false\n"
    "GlobalJobId = \"submit.example.edu#1042.0#1704380400\"\n"
    "ImageSize = 1250\n"
    "In = \"/dev/null\"\n"
    "Iwd = \"/home/alice/runs/7\"\n"
    "JobCurrentStartDate = 1704380460\n"
    "JobPrio = 0\n"
    "JobRunCount = 1\n"
    "JobStatus = 2\n"
    "JobUniverse = 5\n"
    "LastJobStatus = 1\n"
    "LeaveJobInQueue = false\n"
    "MemoryUsage = ((ResidentSetSize + 1023) / 1024)\n"
    "MyType = \"Job\"\n"
    "NumJobStarts = 1\n"
    "OnExitRemove = true\n"
    "Out = \"analyze.1042.0.out\"\n"
    "Owner = \"alice\"\n"
    "PeriodicRemove = (JobStatus == 5) && (time() - EnteredCurrentStatus > 86400)\n"
    "ProcId = 0\n"
    "QDate = 1704380400\n"
    "Rank = 0.0\n"
    "RemoteHost = \"slot1_1@node17.example.edu\"\n"
    "RemoteSysCpu = 0.0\n"
    "RemoteUserCpu = 12.5\n"
    "RequestCpus = 4\n"
    "RequestDisk = DiskUsage\n"
    "RequestMemory = ifthenelse(MemoryUsage =!= undefined,MemoryUsage,(ImageSize + 1023) / "
    "1024)\n"
    "Requirements = (TARGET.Arch == \"X86_64\") && (TARGET.OpSys == \"LINUX\") && "
    "(TARGET.Disk >= RequestDisk) && (TARGET.Memory >= RequestMemory) && "
    "((TARGET.FileSystemDomain == MY.FileSystemDomain) || (TARGET.HasFileTransfer))\n"
    "ShouldTransferFiles = \"IF_NEEDED\"\n"
    "TargetType = \"Machine\"\n"
    "TransferInput = \"data.txt,params.json,lib/helpers.py\"\n"
    "User = \"alice@example.edu\"\n"
    "WantRemoteIO = true\n"
    "WhenToTransferOutput = \"ON_EXIT\"\n"
    "\n"
    "Args = \"/c \\\"echo done > out.txt\\\"\"\n"
    "ClusterId = 1042\n"
    "Cmd = \"C:\\Windows\\System32\\cmd.exe\"\n"
    "Iwd = \"C:\\Users\\alice\\runs\\8\\\"\n"
    "JobStatus = 1\n"
    "MyType = \"Job\"\n"
    "ProcId = 1\n"
    "QDate = 1704380400\n"
    "Requirements = (TARGET.OpSys == \"WINDOWS\") && regexp(\"^node[0-9]+\\.example\\.edu$\","
    "TARGET.Machine)\n"
    "TargetType = \"Machine\"\n"
    "\n";

static void long__reads_condor_q_long_output(void **state)
{
    (void)state;
    const ads_record *rec[4];
    int lines[4];
    assert_int_equal(read_all(LONG, condor_q_long, rec, lines, 4), 2);
    assert_int_equal(lines[0], 1);
    assert_int_equal(lines[1], 54);
    const ads_record *j = rec[0];
    assert_int_equal(ads_record_size(j), 52);
    want_string(j, "MyType", "Job");
    want_string(j, "TargetType", "Machine");
    want_int(j, "ClusterId", 1042);
    want_int(j, "ProcId", 0);
    want_int(j, "JobStatus", 2);
    want_int(j, "QDate", 1704380400);
    want_string(j, "Cmd", "/home/alice/bin/analyze");
    want_string(j, "Args", "--input data.txt --label \"run 7\"");
    want_string(j, "TransferInput", "data.txt,params.json,lib/helpers.py");
    want_string(j, "GlobalJobId", "submit.example.edu#1042.0#1704380400");
    want_real(j, "Rank", 0.0);
    want_real(j, "RemoteUserCpu", 12.5);
    want_bool(j, "WantRemoteIO", true);
    want_bool(j, "ExitBySignal", false);
    want_expr(j, "Requirements",
                "(TARGET.Arch == \"X86_64\") && (TARGET.OpSys == \"LINUX\") && "
                "(TARGET.Disk >= RequestDisk) && (TARGET.Memory >= RequestMemory) && "
                "((TARGET.FileSystemDomain == MY.FileSystemDomain) || "
                "(TARGET.HasFileTransfer))");
    want_expr(j, "RequestMemory",
                "ifthenelse(MemoryUsage isnt undefined, MemoryUsage, (ImageSize + 1023) / 1024)");
    want_expr(j, "RequestDisk", "DiskUsage");
    want_expr(j, "MemoryUsage", "((ResidentSetSize + 1023) / 1024)");
    /* the stored order is the order of the lines */
    ads_str first = ads_record_name(j, 0), last = ads_record_name(j, 51);
    assert_memory_equal(first.p, "AccountingGroup", first.len);
    assert_memory_equal(last.p, "WhenToTransferOutput", last.len);

    const ads_record *w = rec[1];
    want_string(w, "Args", "/c \"echo done > out.txt\"");
    want_string(w, "Cmd", "C:\\Windows\\System32\\cmd.exe");
    want_string(w, "Iwd", "C:\\Users\\alice\\runs\\8\\");
    want_int(w, "ProcId", 1);
    want_expr(w, "Requirements",
                "(TARGET.OpSys == \"WINDOWS\") && regexp(\"^node[0-9]+\\\\.example\\\\.edu$\", "
                "TARGET.Machine)");
}

/* `condor_status -long`: a partitionable slot and a dynamic one. */
static const char condor_status_long[] =
    "Activity = \"Idle\"\n"
    "Arch = \"X86_64\"\n"
    "ChildCpus = { 1,1 }\n"
    "ChildMemory = { 1024,2048 }\n"
    "ChildState = { \"Claimed\",\"Claimed\" }\n"
    "ClockDay = 4\n"
    "CondorLoadAvg = 0.0\n"
    "Cpus = 30\n"
    "DetectedMemory = 128000\n"
    "Disk = 850000000\n"
    "FileSystemDomain = \"example.edu\"\n"
    "HasFileTransfer = true\n"
    "IsValidCheckpointPlatform = (TARGET.JobUniverse == 1 == false) || ((MY.CheckpointPlatform "
    "=!= UNDEFINED) && ((TARGET.LastCheckpointPlatform =?= MY.CheckpointPlatform) || "
    "(TARGET.NumCkpts == 0)))\n"
    "LoadAvg = 0.27\n"
    "Machine = \"node17.example.edu\"\n"
    "Memory = 124928\n"
    "MyAddress = \"<10.0.3.17:9618?addrs=10.0.3.17-9618&alias=node17.example.edu&noUDP>\"\n"
    "MyCurrentTime = 1704380500\n"
    "MyType = \"Machine\"\n"
    "Name = \"slot1@node17.example.edu\"\n"
    "OpSys = \"LINUX\"\n"
    "PartitionableSlot = true\n"
    "Rank = 0.0\n"
    "Requirements = START && (WithinResourceLimits)\n"
    "Start = TRUE\n"
    "State = \"Unclaimed\"\n"
    "TargetType = \"Job\"\n"
    "TotalCpus = 32.0\n"
    "TotalLoadAvg = 1.85\n"
    "WithinResourceLimits = (MY.Cpus > 0 && TARGET.RequestCpus <= MY.Cpus && MY.Memory > 0 && "
    "TARGET.RequestMemory <= MY.Memory)\n"
    "\n"
    "Activity = \"Busy\"\n"
    "LoadAvg = 1.0\n"
    "Memory = 2048\n"
    "MyType = \"Machine\"\n"
    "Name = \"slot1_1@node17.example.edu\"\n"
    "SlotType = \"Dynamic\"\n"
    "TotalTimeClaimedBusy = 3600\n";

static void long__reads_condor_status_long_output(void **state)
{
    (void)state;
    const ads_record *rec[4];
    int lines[4];
    assert_int_equal(read_all(LONG, condor_status_long, rec, lines, 4), 2);
    assert_int_equal(lines[1], 32);
    const ads_record *m = rec[0];
    want_string(m, "MyType", "Machine");
    want_string(m, "TargetType", "Job");
    want_string(m, "Name", "slot1@node17.example.edu");
    want_string(m, "MyAddress",
                  "<10.0.3.17:9618?addrs=10.0.3.17-9618&alias=node17.example.edu&noUDP>");
    want_int(m, "Memory", 124928);
    want_real(m, "LoadAvg", 0.27);
    want_real(m, "TotalCpus", 32.0);
    want_bool(m, "Start", true);
    want_value_text(m, "ChildCpus", ADS_LIST, "{ 1, 1 }");
    want_value_text(m, "ChildState", ADS_LIST, "{ \"Claimed\", \"Claimed\" }");
    want_expr(m, "Requirements", "START && (WithinResourceLimits)");
    want_expr(m, "IsValidCheckpointPlatform",
                "(TARGET.JobUniverse == 1 == false) || ((MY.CheckpointPlatform isnt "
                "undefined) && ((TARGET.LastCheckpointPlatform is MY.CheckpointPlatform) || "
                "(TARGET.NumCkpts == 0)))");
    want_real(rec[1], "LoadAvg", 1.0);
    want_string(rec[1], "SlotType", "Dynamic");
    want_int(rec[1], "TotalTimeClaimedBusy", 3600);
}

/* `condor_q -json`: an array of objects, expressions as "\/Expr(...)\/". */
static const char condor_q_json[] =
    "[\n"
    "{\n"
    "  \"Args\": \"--input data.txt --label \\\"run 7\\\"\",\n"
    "  \"ClusterId\": 1042,\n"
    "  \"Cmd\": \"/home/alice/bin/analyze\",\n"
    "  \"EnteredCurrentStatus\": 1704380400,\n"
    "  \"Environment\": \"OMP_NUM_THREADS=4 DATA_DIR=/scratch/alice\",\n"
    "  \"GlobalJobId\": \"submit.example.edu#1042.0#1704380400\",\n"
    "  \"ImageSize\": 1250,\n"
    "  \"JobStatus\": 2,\n"
    "  \"LastRejMatchReason\": null,\n"
    "  \"MemoryUsage\": \"\\/Expr(((ResidentSetSize + 1023) / 1024))\\/\",\n"
    "  \"MyType\": \"Job\",\n"
    "  \"PeriodicRemove\": \"\\/Expr((JobStatus == 5) && (time() - EnteredCurrentStatus > "
    "86400))\\/\",\n"
    "  \"ProcId\": 0,\n"
    "  \"QDate\": 1704380400,\n"
    "  \"Rank\": 0.0,\n"
    "  \"RemoteUserCpu\": 12.5,\n"
    "  \"RequestMemory\": \"\\/Expr(ifthenelse(MemoryUsage =!= undefined,MemoryUsage,"
    "(ImageSize + 1023) / 1024))\\/\",\n"
    "  \"Requirements\": \"\\/Expr((TARGET.Arch == \\\"X86_64\\\") && (TARGET.OpSys == "
    "\\\"LINUX\\\") && (TARGET.Disk >= RequestDisk) && (TARGET.Memory >= RequestMemory) && "
    "((TARGET.FileSystemDomain == MY.FileSystemDomain) || (TARGET.HasFileTransfer)))\\/\",\n"
    "  \"ServerTime\": \"\\/Expr(absTime(\\\"2024-01-04T10:01:40-06:00\\\"))\\/\",\n"
    "  \"TargetType\": \"Machine\",\n"
    "  \"TransferInput\": \"data.txt,params.json,lib/helpers.py\",\n"
    "  \"WantRemoteIO\": true\n"
    "}\n"
    ",\n"
    "{\n"
    "  \"Cmd\": \"C:\\\\Windows\\\\System32\\\\cmd.exe\",\n"
    "  \"ClusterId\": 1042,\n"
    "  \"JobStatus\": 1,\n"
    "  \"LastHoldReason\": \"Error from slot1@node17: \\\"disk full\\\"\\n\\tretrying\",\n"
    "  \"MyType\": \"Job\",\n"
    "  \"ProcId\": 1,\n"
    "  \"Requirements\": \"\\/Expr((TARGET.OpSys == \\\"WINDOWS\\\") && "
    "regexp(\\\"^node[0-9]+\\\\\\\\.example\\\\\\\\.edu$\\\", TARGET.Machine))\\/\",\n"
    "  \"TargetType\": \"Machine\"\n"
    "}\n"
    "]\n";

static void json__reads_condor_q_json_output(void **state)
{
    (void)state;
    const ads_record *rec[4];
    int lines[4];
    assert_int_equal(read_all(JSON, condor_q_json, rec, lines, 4), 2);
    assert_int_equal(lines[0], 2);
    assert_int_equal(lines[1], 27);
    const ads_record *j = rec[0];
    want_string(j, "MyType", "Job");
    want_string(j, "TargetType", "Machine");
    want_int(j, "ClusterId", 1042);
    want_int(j, "JobStatus", 2);
    want_string(j, "Args", "--input data.txt --label \"run 7\"");
    want_real(j, "Rank", 0.0);
    want_real(j, "RemoteUserCpu", 12.5);
    want_bool(j, "WantRemoteIO", true);
    assert_int_equal(value_of(j, "LastRejMatchReason")->type, ADS_UNDEFINED);
    want_expr(j, "Requirements",
                "(TARGET.Arch == \"X86_64\") && (TARGET.OpSys == \"LINUX\") && "
                "(TARGET.Disk >= RequestDisk) && (TARGET.Memory >= RequestMemory) && "
                "((TARGET.FileSystemDomain == MY.FileSystemDomain) || "
                "(TARGET.HasFileTransfer))");
    want_expr(j, "MemoryUsage", "((ResidentSetSize + 1023) / 1024)");
    want_value_text(j, "ServerTime", ADS_ABSTIME, "`2024-01-04T10:01:40-06:00`");
    const ads_record *w = rec[1];
    want_string(w, "Cmd", "C:\\Windows\\System32\\cmd.exe");
    want_string(w, "LastHoldReason", "Error from slot1@node17: \"disk full\"\n\tretrying");
    want_expr(w, "Requirements",
                "(TARGET.OpSys == \"WINDOWS\") && regexp(\"^node[0-9]+\\\\.example\\\\.edu$\", "
                "TARGET.Machine)");
}

/* `condor_q -xml`, as HTCondor's writer spells it (reals in %1.15E). */
static const char condor_q_xml[] =
    "<?xml version=\"1.0\"?>\n"
    "<!DOCTYPE classads SYSTEM \"classads.dtd\">\n"
    "<classads>\n"
    "<c>\n"
    "    <a n=\"MyType\"><s>Job</s></a>\n"
    "    <a n=\"TargetType\"><s>Machine</s></a>\n"
    "    <a n=\"ClusterId\"><i>1042</i></a>\n"
    "    <a n=\"Args\"><s>--label \"run 7\" &amp; more</s></a>\n"
    "    <a n=\"Cmd\"><s>C:\\\\Windows\\\\cmd.exe</s></a>\n"
    "    <a n=\"RemoteUserCpu\"><r>1.250000000000000E+01</r></a>\n"
    "    <a n=\"Rank\"><r>0.0</r></a>\n"
    "    <a n=\"WantRemoteIO\"><b v=\"t\"/></a>\n"
    "    <a n=\"ExitBySignal\"><b v=\"f\"/></a>\n"
    "    <a n=\"Requirements\"><e>(TARGET.Arch == \"X86_64\") &amp;&amp; (TARGET.Memory "
    "&gt;= RequestMemory)</e></a>\n"
    "    <a n=\"ServerTime\"><at>2024-01-04T10:01:40-06:00</at></a>\n"
    "    <a n=\"Lifetime\"><rt>1+02:03:04</rt></a>\n"
    "    <a n=\"Files\"><l><s>a.txt</s><s></s><i>3</i></l></a>\n"
    "    <a n=\"Nested\"><c><a n=\"x\"><i>1</i></a></c></a>\n"
    "    <a n=\"Nothing\"><un/></a>\n"
    "    <a n=\"Bad\"><er/></a>\n"
    "</c>\n"
    "<c>\n"
    "    <a n=\"MyType\"><s>Job</s></a>\n"
    "    <a n=\"ProcId\"><i>1</i></a>\n"
    "</c>\n"
    "</classads>\n";

static void xml__reads_condor_q_xml_output(void **state)
{
    (void)state;
    const ads_record *rec[4];
    int lines[4];
    assert_int_equal(read_all(XML, condor_q_xml, rec, lines, 4), 2);
    assert_int_equal(lines[0], 4);
    assert_int_equal(lines[1], 22);
    const ads_record *j = rec[0];
    want_string(j, "MyType", "Job");
    want_int(j, "ClusterId", 1042);
    want_string(j, "Args", "--label \"run 7\" & more");
    want_string(j, "Cmd", "C:\\Windows\\cmd.exe");
    want_real(j, "RemoteUserCpu", 12.5);
    want_real(j, "Rank", 0.0);
    want_bool(j, "WantRemoteIO", true);
    want_bool(j, "ExitBySignal", false);
    want_expr(j, "Requirements", "(TARGET.Arch == \"X86_64\") && (TARGET.Memory >= RequestMemory)");
    want_value_text(j, "ServerTime", ADS_ABSTIME, "`2024-01-04T10:01:40-06:00`");
    want_value_text(j, "Lifetime", ADS_RELTIME, "`1d2h3m4s`");
    want_value_text(j, "Files", ADS_LIST, "{ \"a.txt\", \"\", 3 }");
    want_value_text(j, "Nested", ADS_RECORD, "[ x = 1 ]");
    assert_int_equal(value_of(j, "Nothing")->type, ADS_UNDEFINED);
    assert_int_equal(value_of(j, "Bad")->type, ADS_ERROR);
    want_int(rec[1], "ProcId", 1);
}

/* ------------------------------------------------------------------------ */
/* Writing: byte-exact examples                                             */
/* ------------------------------------------------------------------------ */

static const char example[] =
    "[ MyType = \"Job\"; ClusterId = 7; Rank = 2.0; Big = 1e100; Neg = -0.0; "
    "Cmd = \"C:\\\\bin\\\\x.exe\"; Note = \"two\\nlines\"; Quote = \"say \\\"hi\\\"\"; "
    "Ok = true; Req = TARGET.Memory >= 1024 && Owner == \"bob\"; L = { 1, \"a\" }; "
    "Src = [ Host = \"h\"; Port = 9618; Empty = [ ] ]; T = `2011-12-13T12:00:00-05:00`; "
    "R = `90`; U = undefined; Err = error; 'odd name' = 1; Pair = { x, 1 } ]";

static const char example_long[] =
    "MyType = \"Job\"\n"
    "ClusterId = 7\n"
    "Rank = 2.0\n"
    "Big = 1e+100\n"
    "Neg = -0.0\n"
    "Cmd = \"C:\\bin\\x.exe\"\n"
    "Note := \"two\\nlines\"\n"
    "Quote = \"say \\\"hi\\\"\"\n"
    "Ok = true\n"
    "Req = TARGET.Memory >= 1024 && Owner == \"bob\"\n"
    "L = { 1, \"a\" }\n"
    "Src.Host = \"h\"\n"
    "Src.Port = 9618\n"
    "Src.Empty = [ ]\n"
    "T = `2011-12-13T12:00:00-05:00`\n"
    "R = `1m30s`\n"
    "U = undefined\n"
    "Err = error\n"
    "'odd name' = 1\n"
    "Pair = { x, 1 }\n"
    "\n";

static const char example_json[] =
    "{\"MyType\":\"Job\",\"ClusterId\":7,\"Rank\":2.0,\"Big\":1e+100,\"Neg\":-0.0,"
    "\"Cmd\":\"C:\\\\bin\\\\x.exe\",\"Note\":\"two\\nlines\",\"Quote\":\"say \\\"hi\\\"\","
    "\"Ok\":true,\"Req\":\"\\/Expr(TARGET.Memory >= 1024 && Owner == \\\"bob\\\")\\/\","
    "\"L\":[1,\"a\"],\"Src\":{\"Host\":\"h\",\"Port\":9618,\"Empty\":{}},"
    "\"T\":\"\\/Expr(`2011-12-13T12:00:00-05:00`)\\/\",\"R\":\"\\/Expr(`1m30s`)\\/\","
    "\"U\":null,\"Err\":\"\\/Expr(error)\\/\",\"odd name\":1,"
    "\"Pair\":[\"\\/Expr(x)\\/\",1]}";

static const char example_json_pretty[] =
    "{\n"
    "  \"MyType\": \"Job\",\n"
    "  \"ClusterId\": 7,\n"
    "  \"Rank\": 2.0,\n"
    "  \"Big\": 1e+100,\n"
    "  \"Neg\": -0.0,\n"
    "  \"Cmd\": \"C:\\\\bin\\\\x.exe\",\n"
    "  \"Note\": \"two\\nlines\",\n"
    "  \"Quote\": \"say \\\"hi\\\"\",\n"
    "  \"Ok\": true,\n"
    "  \"Req\": \"\\/Expr(TARGET.Memory >= 1024 && Owner == \\\"bob\\\")\\/\",\n"
    "  \"L\": [\n"
    "    1,\n"
    "    \"a\"\n"
    "  ],\n"
    "  \"Src\": {\n"
    "    \"Host\": \"h\",\n"
    "    \"Port\": 9618,\n"
    "    \"Empty\": {}\n"
    "  },\n"
    "  \"T\": \"\\/Expr(`2011-12-13T12:00:00-05:00`)\\/\",\n"
    "  \"R\": \"\\/Expr(`1m30s`)\\/\",\n"
    "  \"U\": null,\n"
    "  \"Err\": \"\\/Expr(error)\\/\",\n"
    "  \"odd name\": 1,\n"
    "  \"Pair\": [\n"
    "    \"\\/Expr(x)\\/\",\n"
    "    1\n"
    "  ]\n"
    "}";

static const char example_xml[] =
    "<?xml version=\"1.0\"?>\n"
    "<!DOCTYPE classads SYSTEM \"classads.dtd\">\n"
    "<classads>\n"
    "<c>\n"
    "    <a n=\"MyType\"><s>Job</s></a>\n"
    "    <a n=\"ClusterId\"><i>7</i></a>\n"
    "    <a n=\"Rank\"><r>2.0</r></a>\n"
    "    <a n=\"Big\"><r>1e+100</r></a>\n"
    "    <a n=\"Neg\"><r>-0.0</r></a>\n"
    "    <a n=\"Cmd\"><s>C:\\\\bin\\\\x.exe</s></a>\n"
    "    <a n=\"Note\"><s>two\\nlines</s></a>\n"
    "    <a n=\"Quote\"><s>say \"hi\"</s></a>\n"
    "    <a n=\"Ok\"><b v=\"t\"/></a>\n"
    "    <a n=\"Req\"><e>TARGET.Memory &gt;= 1024 &amp;&amp; Owner == \"bob\"</e></a>\n"
    "    <a n=\"L\"><l><i>1</i><s>a</s></l></a>\n"
    "    <a n=\"Src\"><c><a n=\"Host\"><s>h</s></a><a n=\"Port\"><i>9618</i></a>"
    "<a n=\"Empty\"><c></c></a></c></a>\n"
    "    <a n=\"T\"><at>2011-12-13T12:00:00-05:00</at></a>\n"
    "    <a n=\"R\"><rt>1m30s</rt></a>\n"
    "    <a n=\"U\"><un/></a>\n"
    "    <a n=\"Err\"><er/></a>\n"
    "    <a n=\"odd name\"><i>1</i></a>\n"
    "    <a n=\"Pair\"><l><e>x</e><i>1</i></l></a>\n"
    "</c>\n"
    "</classads>\n";

static void check_text(const char *what, const ads_buf *b, const char *want)
{
    const char *got = b->p ? b->p : "";
    if (b->len != strlen(want) || memcmp(got, want, b->len) != 0)
        fail_msg("%s:\n--- expected ---\n%s\n--- got ---\n%.*s", what, want, (int)b->len, got);
}

static void long__writes_example_exactly(void **state)
{
    (void)state;
    ads_buf b = ADS_BUF_INIT;
    ads_error err;
    const ads_record *r = valued(example);
    assert_int_equal(ads_long_write(&b, r, &err), 0);
    check_text("long form", &b, example_long);
    assert_same_record(read_one(LONG, b.p), r);
    ads_buf_free(&b);
}

static void json__writes_example_exactly(void **state)
{
    (void)state;
    ads_buf b = ADS_BUF_INIT;
    ads_error err;
    const ads_record *r = valued(example);
    assert_int_equal(ads_json_write(&b, r, ADS_JSON_COMPACT, &err), 0);
    check_text("compact JSON", &b, example_json);
    assert_same_record(read_one(JSON, b.p), r);
    ads_buf_clear(&b);
    assert_int_equal(ads_json_write(&b, r, ADS_JSON_PRETTY, &err), 0);
    check_text("pretty JSON", &b, example_json_pretty);
    assert_same_record(read_one(JSON, b.p), r);
    ads_buf_free(&b);
}

static void xml__writes_example_exactly(void **state)
{
    (void)state;
    ads_buf b = ADS_BUF_INIT;
    ads_error err;
    const ads_record *r = valued(example);
    ads_xml_write_begin(&b);
    assert_int_equal(ads_xml_write(&b, r, &err), 0);
    ads_xml_write_end(&b);
    check_text("XML", &b, example_xml);
    assert_same_record(read_one(XML, b.p), r);
    ads_buf_free(&b);
}

/* ------------------------------------------------------------------------ */
/* The long form's rules                                                    */
/* ------------------------------------------------------------------------ */

static void long__dotted_names_build_nested_records(void **state)
{
    (void)state;
    const ads_record *r = read_one(LONG, "A.b = 1\n"
                                         "a.C.d = \"x\"\n"
                                         "A.e := { 1, 2 }\n"
                                         "R = [ x = 1 ]\n"
                                         "R.y = 2\n"
                                         "Q := [ x = y ]\n"
                                         "Q.z = 1\n"
                                         "Top = 3\n");
    assert_int_equal(ads_record_size(r), 4);
    want_value_text(r, "A", ADS_RECORD, "[ b = 1; C = [ d = \"x\" ]; e = { 1, 2 } ]");
    want_value_text(r, "R", ADS_RECORD, "[ x = 1; y = 2 ]");
    want_expr(r, "Q", "[ x = y; z = 1 ]");
    want_int(r, "Top", 3);
    /* the name keeps the spelling of its first line */
    ads_str first = ads_record_name(r, 0);
    assert_int_equal(first.len, 1);
    assert_int_equal(first.p[0], 'A');
}

static void long__repeated_name_keeps_last_value_at_first_position(void **state)
{
    (void)state;
    const ads_record *r = read_one(LONG, "A = 1\nB.c = 4\na = 3\nB = 5\n");
    assert_string_equal(text_of_record(r), "[ A = 3; B = 5 ]");
}

static void long__operators_choose_escaping_and_folding(void **state)
{
    (void)state;
    const ads_record *r = read_one(LONG, "P = \"a\\nb\"\n"
                                         "Q := \"a\\nb\"\n"
                                         "E = ={ 1, 2 }\n"
                                         "F = { 1, 2 }\n"
                                         "G := ={ 1 }\n"
                                         "H == x + 1\n"
                                         "I = real(\"INF\")\n"
                                         "J = blob(\"aGk=\")\n"
                                         "K = blob(\"!!\")\n"
                                         "L = { -1, real(\"NaN\"), [ a = { } ] }\n"
                                         "M = -0.0\n"
                                         "N = 'quoted name' + 1\n"
                                         "O = \"it's \\\"x\\\" \\\\\"\n");
    want_string(r, "P", "a\\nb");
    want_string(r, "Q", "a\nb");
    want_expr(r, "E", "{ 1, 2 }");
    want_value_text(r, "F", ADS_LIST, "{ 1, 2 }");
    want_expr(r, "G", "{ 1 }");
    want_expr(r, "H", "x + 1");
    want_value_text(r, "I", ADS_REAL, "real(\"INF\")");
    want_value_text(r, "J", ADS_BLOB, "blob(\"aGk=\")");
    want_expr(r, "K", "blob(\"!!\")");
    want_value_text(r, "L", ADS_LIST, "{ -1, real(\"NaN\"), [ a = { } ] }");
    want_value_text(r, "M", ADS_REAL, "-0.0");
    want_expr(r, "N", "'quoted name' + 1");
    want_string(r, "O", "it's \"x\" \\\\");
}

static void long__tolerates_crlf_comments_bom_and_blank_lines(void **state)
{
    (void)state;
    const ads_record *rec[4];
    int lines[4];
    size_t n = read_all(LONG,
                        "\xEF\xBB\xBF# made by hand\r\n"
                        "A = 1\r\n"
                        "  \t\r\n"
                        "\r\n"
                        "   # between records\r\n"
                        "  B = \"x\"   \r\n"
                        "\t# inside a record\r\n"
                        "C = 2",
                        rec, lines, 4);
    assert_int_equal(n, 2);
    assert_string_equal(text_of_record(rec[0]), "[ A = 1 ]");
    assert_string_equal(text_of_record(rec[1]), "[ B = \"x\"; C = 2 ]");
    assert_int_equal(lines[0], 2);
    assert_int_equal(lines[1], 6);
}

static void long__skips_a_bad_record_and_goes_on(void **state)
{
    (void)state;
    ads_long_reader *r;
    ads_error err;
    const ads_record *rec;
    int line;
    const char *text = "A = 1\n\nB = (\nC = 2\n\nD = 3\n";
    assert_int_equal(ads_long_reader_new(&r, text, strlen(text), &err), 0);
    assert_int_equal(ads_long_reader_next(&rec, &line, r, arena, &err), 1);
    assert_string_equal(text_of_record(rec), "[ A = 1 ]");
    rec = NULL;
    assert_int_equal(ads_long_reader_next(&rec, &line, r, arena, &err), ADS_ESYNTAX);
    assert_null(rec);
    assert_int_equal(err.line, 3);
    assert_int_equal(err.column, 6);
    assert_string_equal(err.message, "expected an expression, found end of input");
    assert_int_equal(ads_long_reader_next(&rec, &line, r, arena, &err), 1);
    assert_string_equal(text_of_record(rec), "[ D = 3 ]");
    assert_int_equal(line, 6);
    assert_int_equal(ads_long_reader_next(&rec, &line, r, arena, &err), 0);
    assert_int_equal(ads_long_reader_next(&rec, &line, r, arena, &err), 0);
    ads_long_reader_free(r);
}

/* A condor_history file: each ad followed by a "***" banner, no blank
 * lines; the banners end records and are not kept, and a bad record is
 * skipped up to its banner. */
static void long__history_banners_end_records(void **state)
{
    (void)state;
    const ads_record *rec[4];
    int lines[4];
    size_t n = read_all(LONG,
                        "ClusterId = 1\n"
                        "Iwd = \"C:\\jobs\"\n"
                        "*** Offset = 0 ClusterId = 1 ProcId = 0 Owner = \"a\" CompletionDate = 5\n"
                        "ClusterId = 2\n"
                        "  *** EPOCH ClusterId = 2\r\n"
                        "\n"
                        "***\n"
                        "ClusterId = 3\n"
                        "*** Offset = 60 ClusterId = 3 ProcId = 0 Owner = \"a\" CompletionDate = 7",
                        rec, lines, 4);
    assert_int_equal(n, 3);
    assert_string_equal(text_of_record(rec[0]), "[ ClusterId = 1; Iwd = \"C:\\\\jobs\" ]");
    assert_string_equal(text_of_record(rec[1]), "[ ClusterId = 2 ]");
    assert_string_equal(text_of_record(rec[2]), "[ ClusterId = 3 ]");
    assert_int_equal(lines[0], 1);
    assert_int_equal(lines[1], 4);
    assert_int_equal(lines[2], 8);

    ads_long_reader *r;
    ads_error err;
    const ads_record *one;
    int line;
    const char *text = "A = (\nB = 2\n*** Offset = 0\nC = 3\n*** Offset = 12\n";
    assert_int_equal(ads_long_reader_new(&r, text, strlen(text), &err), 0);
    assert_int_equal(ads_long_reader_next(&one, &line, r, arena, &err), ADS_ESYNTAX);
    assert_int_equal(err.line, 1);
    assert_int_equal(ads_long_reader_next(&one, &line, r, arena, &err), 1);
    assert_string_equal(text_of_record(one), "[ C = 3 ]");
    assert_int_equal(line, 4);
    assert_int_equal(ads_long_reader_next(&one, &line, r, arena, &err), 0);
    ads_long_reader_free(r);
}

/* Values whose strings HTCondor's syntax cannot hold use ':='; constant
 * expressions that must stay expressions use a leading '='. */
static void long__writer_picks_the_operator_each_line_needs(void **state)
{
    (void)state;
    const ads_record *r = valued("[ Win = \"C:\\\\x\\\\y\"; Quote = \"a\\\"b\\\\\\\"c\"; "
                                 "NewLine = \"a\\nb\"; Tab = \"a\\tb\"; EndSlash = \"x\\\\\"; "
                                 "Utf = \"\xc3\xa9\\377\"; InList = { \"a\\n\" }; "
                                 "Expr = strcat(\"\\t\", x); 'it\\'s' = 1; "
                                 "'Weird\\'\\\\' = 2 ]");
    ads_buf b = ADS_BUF_INIT;
    ads_error err;
    assert_int_equal(ads_long_write(&b, r, &err), 0);
    /* an unevaluated constant: built by hand, since the reader folds them */
    ads_record_builder *bb;
    const ads_expr *e;
    assert_int_equal(ads_record_builder_new(&bb, arena, &err), 0);
    assert_int_equal(ads_expr_parse(&e, arena, "{ 1, real(\"NaN\") }", 18, &err), 0);
    assert_int_equal(ads_record_builder_add(bb, "Const", 5, e, &err), 0);
    const ads_record *c = ads_record_builder_finish(bb);
    assert_int_equal(ads_long_write(&b, c, &err), 0);
    check_text("long form", &b,
               "Win = \"C:\\x\\y\"\n"
               "Quote = \"a\\\"b\\\\\"c\"\n"
               "NewLine := \"a\\nb\"\n"
               "Tab := \"a\\tb\"\n"
               "EndSlash := \"x\\\\\"\n"
               "Utf = \"\xc3\xa9\xff\"\n"
               "InList := { \"a\\n\" }\n"
               "Expr := strcat(\"\\t\", x)\n"
               "'it\\'s' = 1\n"
               "'Weird\\'\\\\' = 2\n"
               "\n"
               "Const = ={ 1, real(\"NaN\") }\n"
               "\n");
    const ads_record *back[2];
    assert_int_equal(read_all(LONG, b.p, back, NULL, 2), 2);
    assert_same_record(back[0], r);
    assert_same_record(back[1], c);
    want_string(back[0], "Quote", "a\"b\\\"c");
    want_string(back[0], "EndSlash", "x\\");
    want_expr(back[1], "Const", "{ 1, real(\"NaN\") }");
    ads_buf_free(&b);
}

/* Records nested deeper than a name may have parts are written inline
 * below that depth, and read back the same. */
static void long__deep_nesting_writes_and_reads_back(void **state)
{
    (void)state;
    ads_value v = ads_int(1);
    for (int i = 0; i < ADS_MAX_DEPTH + 20; i++) {
        ads_record_builder *b;
        assert_int_equal(ads_record_builder_new(&b, arena, NULL), 0);
        assert_int_equal(ads_record_builder_add_value(b, "n", 1, &v, NULL), 0);
        v = ads_recordv(ads_record_builder_finish(b));
    }
    const ads_record *r = v.u.rec;
    ads_buf b = ADS_BUF_INIT;
    ads_error err;
    assert_int_equal(ads_long_write(&b, r, &err), 0);
    assert_same_record(read_one(LONG, b.p), r);
    /* the name has the most parts a name may have */
    const char *eq = strchr(b.p, '=');
    size_t dots = 0;
    for (const char *p = b.p; p < eq; p++)
        dots += *p == '.';
    assert_int_equal(dots, ADS_MAX_DEPTH - 1);
    ads_buf_free(&b);
}

static void long__file_reader_reads_what_the_buffer_reader_reads(void **state)
{
    (void)state;
    /* long lines and records across many 64 KiB chunks */
    ads_buf text = ADS_BUF_INIT;
    for (int i = 0; i < 300; i++) {
        ads_buf_printf(&text, "# record %d\r\nId = %d\nPad = \"", i, i);
        for (int k = 0; k < (i * 997) % 3000; k++)
            ads_buf_addc(&text, (char)('a' + k % 26));
        ads_buf_printf(&text, "\"\nNested.Deep.X = %d.5\n\n", i);
    }
    const ads_record *rec;
    int line, line2, rc;
    ads_error err;
    reader a, b;
    FILE *f = file_of(text.p, text.len);
    assert_int_equal(reader_open(&a, LONG, text.p, text.len, NULL, &err), 0);
    assert_int_equal(reader_open(&b, LONG, NULL, 0, f, &err), 0);
    int n = 0;
    while ((rc = reader_next(&a, &rec, &line, &err)) == 1) {
        const ads_record *rec2;
        assert_int_equal(reader_next(&b, &rec2, &line2, &err), 1);
        assert_same_record(rec, rec2);
        assert_int_equal(line, line2);
        want_int(rec2, "Id", n);
        n++;
    }
    assert_int_equal(rc, 0);
    assert_int_equal(reader_next(&b, &rec, &line, &err), 0);
    assert_int_equal(n, 300);
    reader_close(&a);
    reader_close(&b);
    fclose(f);
    ads_buf_free(&text);
}

/* ------------------------------------------------------------------------ */
/* JSON's rules                                                             */
/* ------------------------------------------------------------------------ */

static void json__reads_json_lines_and_empty_inputs(void **state)
{
    (void)state;
    const ads_record *rec[4];
    int lines[4];
    assert_int_equal(read_all(JSON, "{\"a\":1}\n{\"b\":2}\r\n\n  {}\n", rec, lines, 4), 3);
    assert_string_equal(text_of_record(rec[1]), "[ b = 2 ]");
    assert_int_equal(ads_record_size(rec[2]), 0);
    assert_int_equal(lines[2], 4);
    assert_int_equal(read_all(JSON, "", rec, NULL, 4), 0);
    assert_int_equal(read_all(JSON, " \n\t", rec, NULL, 4), 0);
    assert_int_equal(read_all(JSON, "[]", rec, NULL, 4), 0);
    assert_int_equal(read_all(JSON, "\xEF\xBB\xBF[ ]\n", rec, NULL, 4), 0);
    assert_int_equal(read_all(JSON, "[{},{\"x\":[]}]", rec, NULL, 4), 2);
}

static void json__numbers_keep_integer_and_real_apart(void **state)
{
    (void)state;
    const ads_record *r =
        read_one(JSON, "{\"a\":0,\"b\":-0,\"c\":9223372036854775807,\"d\":-9223372036854775808,"
                       "\"e\":9223372036854775808,\"f\":1.5,\"g\":1e2,\"h\":2.0,"
                       "\"i\":-1.25E-3,\"j\":1e-400,\"k\":-0.0,\"l\":123456789012345678901234}");
    want_int(r, "a", 0);
    want_int(r, "b", 0);
    want_int(r, "c", INT64_MAX);
    want_int(r, "d", INT64_MIN);
    want_real(r, "e", 9223372036854775808.0);
    want_real(r, "f", 1.5);
    want_real(r, "g", 100.0);
    want_real(r, "h", 2.0);
    want_real(r, "i", -0.00125);
    want_real(r, "j", 0.0);
    want_value_text(r, "k", ADS_REAL, "-0.0");
    want_real(r, "l", 123456789012345678901234.0);
}

static void json__strings_decode_escapes_and_expressions(void **state)
{
    (void)state;
    const ads_record *r = read_one(
        JSON, "{\"s\":\"\\\"\\\\\\/\\b\\f\\n\\r\\t\\u00e9\\u20AC\\ud83d\\ude00\xc3\xa9\","
              "\"plain\":\"/Expr(x)/\",\"expr\":\"\\/Expr(x + 1)\\/\","
              "\"lower\":\"\\/expr(1)\\/\",\"half\":\"\\/Expr(x)/\","
              "\"list\":[1,\"\\/Expr(x)\\/\"],\"rec\":{\"a\":\"\\/Expr(y)\\/\",\"b\":2},"
              "\"vals\":[1,{\"a\":[]}],\"t\":\"\\/Expr(`1d`)\\/\",\"id\":\"\\/Expr(#42)\\/\","
              "\"blob\":\"\\/Expr(blob(\\\"aGk=\\\"))\\/\",\"e\":\"\\/Expr(error)\\/\","
              "\"s2\":\"\\/Expr(\\\"\\\\377\\\")\\/\"}");
    want_string(r, "s", "\"\\/\b\f\n\r\t\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xc3\xa9");
    want_string(r, "plain", "/Expr(x)/");
    want_expr(r, "expr", "x + 1");
    want_int(r, "lower", 1);
    want_expr(r, "half", "x");
    want_expr(r, "list", "{ 1, x }");
    want_expr(r, "rec", "[ a = y; b = 2 ]");
    want_value_text(r, "vals", ADS_LIST, "{ 1, [ a = { } ] }");
    want_value_text(r, "t", ADS_RELTIME, "`1d`");
    want_value_text(r, "id", ADS_IDENT, "#42");
    want_value_text(r, "blob", ADS_BLOB, "blob(\"aGk=\")");
    assert_int_equal(value_of(r, "e")->type, ADS_ERROR);
    want_string(r, "s2", "\xff");
}

/* The reader passes over plain string bytes eight at a time: a quote, a
 * backslash, a control character or a UTF-8 byte at any place of the
 * first, second or third group of eight, and at the end, is still seen. */
static void json__special_string_bytes_are_found_at_every_position(void **state)
{
    (void)state;
    static const struct {
        const char *json, *decoded;
    } special[] = {{"\\\"", "\""}, {"\\\\", "\\"}, {"\\n", "\n"}, {"\xc3\xa9", "\xc3\xa9"},
                   {"\\u00e9", "\xc3\xa9"}, {"\\/", "/"}};
    char text[128], want[64], bad[64];
    for (size_t len = 0; len <= 24; len++) {
        for (size_t at = 0; at <= len; at++) {
            for (size_t k = 0; k < sizeof special / sizeof special[0]; k++) {
                snprintf(text, sizeof text, "{\"S\":\"%.*s%s%.*s\"}", (int)at,
                         "abcdefghijklmnopqrstuvwxyz", special[k].json, (int)(len - at),
                         "ABCDEFGHIJKLMNOPQRSTUVWXYZ");
                snprintf(want, sizeof want, "%.*s%s%.*s", (int)at, "abcdefghijklmnopqrstuvwxyz",
                         special[k].decoded, (int)(len - at), "ABCDEFGHIJKLMNOPQRSTUVWXYZ");
                want_string(read_one(1, text), "S", want);
            }
            /* a raw control character: refused where it is */
            snprintf(text, sizeof text, "{\"S\":\"%.*s\x01%.*s\"}", (int)at,
                     "abcdefghijklmnopqrstuvwxyz", (int)(len - at), "ABCDEFGHIJKLMNOPQRSTUVWXYZ");
            snprintf(bad, sizeof bad, "control character 0x01 in a string (it must be escaped)");
            check_error(1, text, strlen(text), ADS_ESYNTAX, 1, (int)(7 + at), bad);
        }
    }
}

/* The reader reuses the hashes of the last record's member names where the
 * names are the same bytes at the same place: records whose names change
 * place, length, case or number from one to the next are all found. */
static void json__records_of_changing_shape_find_every_member(void **state)
{
    (void)state;
    const char *text = "{\"A\":1,\"B\":2,\"Cc\":3}\n"
                       "{\"A\":4,\"B\":5,\"Cc\":6}\n"
                       "{\"B\":7,\"A\":8}\n"
                       "{\"B\":9,\"Ab\":10,\"Cc\":11,\"D\":12}\n"
                       "{\"b\":13,\"AB\":14,\"CC\":15,\"D\":16}\n"
                       "{\"b\":17,\"B\":18,\"D\":{\"b\":19,\"Ab\":20}}\n"
                       "{\"b\":21,\"AB\":22,\"CC\":23,\"D\":24}\n";
    const ads_record *rec[8];
    assert_int_equal(read_all(1, text, rec, NULL, 8), 7);
    want_int(rec[0], "cc", 3);
    want_int(rec[1], "A", 4);
    want_int(rec[1], "cC", 6);
    want_int(rec[2], "a", 8);
    want_int(rec[2], "B", 7);
    assert_null(ads_record_lookup(rec[2], "Cc", 2));
    want_int(rec[3], "ab", 10);
    want_int(rec[3], "D", 12);
    want_int(rec[4], "Ab", 14);
    want_int(rec[4], "cc", 15);
    /* a name given twice: the last value, at the first place */
    assert_int_equal(ads_record_size(rec[5]), 2);
    want_int(rec[5], "B", 18);
    const ads_value *d = value_of(rec[5], "d");
    assert_int_equal(d->type, ADS_RECORD);
    want_int(d->u.rec, "AB", 20);
    want_int(rec[6], "ab", 22);
    want_int(rec[6], "Cc", 23);
    want_int(rec[6], "d", 24);
}

/* Records of random shapes, each shape repeated a few times (the reader
 * then reuses the last record's index), names drawn from a pool with case
 * variants so that some records repeat a name: each record read has the
 * attributes a builder given the same members makes (the last value of a
 * repeated name wins), found by every spelling. */
static void json__repeated_shapes_read_as_the_builder_builds(void **state)
{
    (void)state;
    static const char *const pool[] = {"A", "a", "B", "Cc", "cC", "D", "Ee", "F"};
    const size_t npool = sizeof pool / sizeof *pool;
    uint64_t seed = 99;
    ads_buf text = ADS_BUF_INIT;
    int shapes[400][10], lens[400], count = 0, value = 0;
    for (int k = 0; count < 400; k++) {
        seed = seed * 6364136223846793005u + 1442695040888963407u;
        int len = (int)((seed >> 33) % 9), times = 1 + (int)((seed >> 40) % 3);
        int shape[10];
        for (int j = 0; j < len; j++) {
            seed = seed * 6364136223846793005u + 1442695040888963407u;
            shape[j] = (int)((seed >> 35) % npool);
        }
        for (int t = 0; t < times && count < 400; t++, count++) {
            ads_buf_addc(&text, '{');
            for (int j = 0; j < len; j++)
                ads_buf_printf(&text, "%s\"%s\":%d", j ? "," : "", pool[shape[j]], value++);
            ads_buf_add(&text, "}\n", 2);
            memcpy(shapes[count], shape, sizeof shape);
            lens[count] = len;
        }
    }
    ads_buf_addc(&text, '\0');
    static const ads_record *rec[400];
    assert_int_equal(read_all(JSON, text.p, rec, NULL, 400), 400);
    value = 0;
    for (int i = 0; i < 400; i++) {
        ads_record_builder *b;
        ads_error err;
        assert_int_equal(ads_record_builder_new(&b, arena, &err), 0);
        for (int j = 0; j < lens[i]; j++) {
            ads_value v = ads_int(value++);
            const char *n = pool[shapes[i][j]];
            assert_int_equal(ads_record_builder_add_value(b, n, strlen(n), &v, &err), 0);
        }
        const ads_record *want = ads_record_builder_finish(b);
        assert_non_null(want);
        assert_int_equal(ads_record_size(rec[i]), ads_record_size(want));
        for (size_t j = 0; j < npool; j++) {
            const char *n = pool[j];
            const ads_expr *x = ads_record_lookup(want, n, strlen(n));
            const ads_expr *y = ads_record_lookup(rec[i], n, strlen(n));
            if (!x != !y)
                fail_msg("record %d: %s %s", i, n, x ? "missing" : "there, not wanted");
            if (x)
                assert_int_equal(ads_expr_literal_value(y)->u.i,
                                 ads_expr_literal_value(x)->u.i);
        }
    }
    ads_buf_free(&text);
}

/* Records with more member names than the reader's name memo holds
 * (ADS_JSON_NAME_MEMO_MAX names, ADS_JSON_NAME_MEMO_BYTES of text), each
 * twice and then a shorter one: every member is found with its value. */
static void json__records_past_the_name_memo_find_every_member(void **state)
{
    (void)state;
    const size_t counts[] = {ADS_JSON_NAME_MEMO_MAX + 7, 400};
    const size_t lens[] = {6, 190}; /* 400 names of 190 bytes: past the bytes */
    for (int c = 0; c < 2; c++) {
        ads_buf text = ADS_BUF_INIT;
        for (int copy = 0; copy < 3; copy++) {
            size_t n = copy == 2 ? counts[c] / 2 : counts[c];
            ads_buf_addc(&text, '{');
            for (size_t i = 0; i < n; i++)
                ads_buf_printf(&text, "%s\"N%0*zu\":%zu", i ? "," : "", (int)lens[c] - 1, i,
                               i * 3 + (size_t)copy);
            ads_buf_add(&text, "}\n", 2);
        }
        ads_buf_addc(&text, '\0');
        const ads_record *rec[3];
        assert_int_equal(read_all(JSON, text.p, rec, NULL, 3), 3);
        for (int copy = 0; copy < 3; copy++) {
            size_t n = copy == 2 ? counts[c] / 2 : counts[c];
            assert_int_equal(ads_record_size(rec[copy]), n);
            for (size_t i = 0; i < n; i++) {
                char name[256];
                snprintf(name, sizeof name, "N%0*zu", (int)lens[c] - 1, i);
                want_int(rec[copy], name, (int64_t)(i * 3 + (size_t)copy));
                ads_str got = ads_record_name(rec[copy], i);
                assert_int_equal(got.len, strlen(name));
                assert_memory_equal(got.p, name, got.len);
                assert_int_equal(got.p[got.len], '\0');
            }
        }
        ads_buf_free(&text);
    }
}

/* Reals of up to 15 digits are read by a division of their digits by a
 * power of ten: the same double strtod gives, for 20,000 of them with
 * every number of fraction digits, both signs, and longer ones beside. */
static void json__short_reals_read_as_strtod_reads_them(void **state)
{
    (void)state;
    uint64_t seed = 17;
    char text[96], num[64];
    for (int i = 0; i < 20000; i++) {
        seed = seed * 6364136223846793005u + 1442695040888963407u;
        int digits = 1 + (int)((seed >> 33) % 18); /* 16 to 18: strtod's */
        int frac = 1 + (int)((seed >> 40) % (unsigned)digits);
        if (frac == digits)
            frac--;
        uint64_t m = seed >> 3;
        char d[24];
        for (int k = 0; k < digits; k++, m /= 10)
            d[k] = (char)('0' + m % 10);
        if (digits - frac > 1 && d[0] == '0')
            d[0] = '1'; /* no leading zero */
        int n = snprintf(num, sizeof num, "%s%.*s.%.*s", (seed >> 2) & 1 ? "-" : "",
                         digits - frac, d, frac, d + digits - frac);
        assert_true(n > 0);
        if (frac == 0)
            num[n - 1] = '\0'; /* "12.": no fraction, an integer */
        snprintf(text, sizeof text, "{\"x\":%s}", num);
        if (frac == 0)
            continue;
        const ads_value *v = value_of(read_one(1, text), "x");
        assert_int_equal(v->type, ADS_REAL);
        double want = strtod(num, NULL);
        if (memcmp(&v->u.r, &want, sizeof want) != 0)
            fail_msg("%s: read %.17g, strtod %.17g", num, v->u.r, want);
    }
    const ads_value *z = value_of(read_one(1, "{\"x\":-0.0}"), "x");
    assert_true(z->u.r == 0 && signbit(z->u.r));
}

static void json__repeated_member_keeps_last_value_at_first_position(void **state)
{
    (void)state;
    const ads_record *r = read_one(JSON, "{\"A\":1,\"B\":2,\"a\":3}");
    assert_string_equal(text_of_record(r), "[ A = 3; B = 2 ]");
}

static void json__strings_that_are_not_utf8_travel_as_expressions(void **state)
{
    (void)state;
    const ads_record *r = valued("[ s = \"a\\377b\\300\"; e = strcat(\"\\377\", x) ]");
    ads_buf b = ADS_BUF_INIT;
    ads_error err;
    assert_int_equal(ads_json_write(&b, r, 0, &err), 0);
    check_text("JSON", &b,
               "{\"s\":\"\\/Expr(\\\"a\\\\377b\\\\300\\\")\\/\","
               "\"e\":\"\\/Expr(strcat(\\\"\\\\377\\\", x))\\/\"}");
    assert_same_record(read_one(JSON, b.p), r);
    ads_buf_free(&b);
}

static void json__file_reader_reads_what_the_buffer_reader_reads(void **state)
{
    (void)state;
    ads_buf text = ADS_BUF_INIT;
    ads_buf_adds(&text, "[\n");
    for (int i = 0; i < 200; i++) {
        ads_buf_printf(&text, "%s{\"Id\": %d, \"Pad\": \"", i ? ",\n" : "", i);
        for (int k = 0; k < (i * 991) % 4000; k++)
            ads_buf_adds(&text, k % 7 ? "\xc3\xa9" : "\\u00e9");
        ads_buf_printf(&text, "\", \"L\": [%d.5, {\"x\": \"\\/Expr(y + %d)\\/\"}]}", i, i);
    }
    ads_buf_adds(&text, "\n]\n");
    FILE *f = file_of(text.p, text.len);
    reader a, b;
    ads_error err;
    const ads_record *rec, *rec2;
    int line, line2, rc, n = 0;
    assert_int_equal(reader_open(&a, JSON, text.p, text.len, NULL, &err), 0);
    assert_int_equal(reader_open(&b, JSON, NULL, 0, f, &err), 0);
    while ((rc = reader_next(&a, &rec, &line, &err)) == 1) {
        assert_int_equal(reader_next(&b, &rec2, &line2, &err), 1);
        assert_same_record(rec, rec2);
        assert_int_equal(line, line2);
        want_int(rec, "Id", n++);
    }
    assert_int_equal(rc, 0);
    assert_int_equal(reader_next(&b, &rec, &line, &err), 0);
    assert_int_equal(n, 200);
    reader_close(&a);
    reader_close(&b);
    fclose(f);
    ads_buf_free(&text);
}

/* The JSON reader remembers the member names of the record before with
 * their hashes: a name one byte apart from the remembered one, at every
 * place of names of 1 to 24 bytes, is hashed anew and found by lookup. */
static void json__member_names_one_byte_apart_are_told_apart(void **state)
{
    (void)state;
    ads_buf text = ADS_BUF_INIT;
    for (size_t len = 1; len <= 24; len++)
        for (size_t at = 0; at < len; at++)
            for (int k = 0; k < 2; k++) {
                char name[32];
                memset(name, 'm', len);
                if (k)
                    name[at] = 'n';
                ads_buf_printf(&text, "{\"A\": 1, \"%.*s\": %d}\n", (int)len, name, k);
            }
    reader r;
    ads_error err;
    const ads_record *rec;
    int line, rc;
    size_t i = 0;
    assert_int_equal(reader_open(&r, JSON, text.p, text.len, NULL, &err), 0);
    while ((rc = reader_next(&r, &rec, &line, &err)) == 1) {
        size_t len = 1, left = i / 2;
        while (left >= len) { /* which (len, at) record i is */
            left -= len;
            len++;
        }
        char name[32];
        memset(name, 'm', len);
        if (i % 2)
            name[left] = 'n';
        const ads_expr *x = ads_record_lookup(rec, name, len);
        if (!x)
            fail_msg("record %zu: no member %.*s", i, (int)len, name);
        const ads_value *v = ads_expr_literal_value(x);
        assert_non_null(v);
        assert_int_equal(v->u.i, (int64_t)(i % 2));
        i++;
    }
    assert_int_equal(rc, 0);
    assert_int_equal(i, 2 * (24 * 25 / 2));
    reader_close(&r);
    ads_buf_free(&text);
}

/* One number after chunk - 6 - cut spaces, read from a buffer (one chunk:
 * the reader's in-chunk path) or a file (its 64 KiB chunk ends at byte cut
 * of the number: the byte-by-byte path when the number is cut): its value,
 * or the error in why. */
static void json_number_read(const char *num, size_t cut, bool file, ads_value *v, char *why,
                             size_t cap)
{
    ads_buf b = ADS_BUF_INIT;
    const size_t chunk = 65536, head = 5; /* {"A": */
    for (size_t i = 0; i < chunk - head - cut; i++)
        ads_buf_addc(&b, ' ');
    ads_buf_printf(&b, "{\"A\":%s}\n", num);
    FILE *f = file ? file_of(b.p, b.len) : NULL;
    reader r;
    ads_error err;
    const ads_record *rec;
    assert_int_equal(reader_open(&r, JSON, f ? NULL : b.p, f ? 0 : b.len, f, &err), 0);
    why[0] = '\0';
    v->type = ADS_UNDEFINED;
    if (reader_next(&r, &rec, NULL, &err) == 1)
        *v = *value_of(rec, "A");
    else
        snprintf(why, cap, "%s", err.message);
    reader_close(&r);
    if (f)
        fclose(f);
    ads_buf_free(&b);
}

static void json__numbers_read_alike_whole_and_cut_by_a_chunk(void **state)
{
    (void)state;
    static const char *const nums[] = {
        "0", "-0", "7", "-12", "1.5", "-0.25", "1e5", "1E+5", "-2.5e-3", "1.5e-300",
        "123456789012345678", "-999999999999999999", "1000000000000000000",
        "9223372036854775807", "-9223372036854775808", "9223372036854775808",
        "123456789012345678901234567890", "0.1", "1.7976931348623157e308", "12345678.000001",
        "01", "-", "1.", "1e", "1e+", "-x", "1.5e400", "00.5", "-01"};
    size_t errors = 0;
    for (size_t i = 0; i < sizeof nums / sizeof *nums; i++) {
        ads_value whole, cut;
        char why_whole[256], why_cut[256];
        json_number_read(nums[i], 0, false, &whole, why_whole, sizeof why_whole);
        errors += why_whole[0] != '\0';
        if (!why_whole[0] && whole.type == ADS_INTEGER) {
            assert_int_equal(whole.u.i, strtoll(nums[i], NULL, 10));
        } else if (!why_whole[0]) {
            assert_int_equal(whole.type, ADS_REAL);
            double want = strtod(nums[i], NULL);
            if (memcmp(&whole.u.r, &want, sizeof want) != 0)
                fail_msg("%s: read %.17g, strtod %.17g", nums[i], whole.u.r, want);
        }
        for (size_t k = 0; k <= strlen(nums[i]) + 1; k++) {
            json_number_read(nums[i], k, false, &whole, why_whole, sizeof why_whole);
            json_number_read(nums[i], k, true, &cut, why_cut, sizeof why_cut);
            if (strcmp(why_whole, why_cut) != 0)
                fail_msg("%s cut at %zu: \"%s\" read whole, \"%s\" cut", nums[i], k, why_whole,
                         why_cut);
            if (!why_whole[0] && (whole.type != cut.type ||
                                  memcmp(&whole.u, &cut.u, sizeof whole.u.r) != 0))
                fail_msg("%s cut at %zu: another value", nums[i], k);
        }
    }
    assert_int_equal(errors, 9); /* the last nine are not JSON numbers or too big */
}

/* Records of the JSON and long readers keep the reader's own arrays, not a
 * copy laid out in one block: every name and value must still be in the
 * caller's arena once the reader, its file and its text are gone (under
 * ASan a pointer left into a freed chunk fails here). Enough records of
 * two shapes to cross several of the file reader's chunks. */
static void readers__records_outlive_the_reader_and_its_text(void **state)
{
    (void)state;
    static const int forms[] = {LONG, JSON};
    for (size_t fi = 0; fi < 2; fi++) {
        ads_buf text = ADS_BUF_INIT;
        if (forms[fi] == JSON)
            ads_buf_adds(&text, "[\n");
        for (int i = 0; i < 300; i++) {
            if (forms[fi] == JSON)
                ads_buf_printf(&text,
                               "%s{\"Name\": \"slot%d@node\", \"Id\": %d, \"Req\": "
                               "\"\\/Expr(Memory > %d)\\/\", \"Sub\": {\"x\": %d}%s}",
                               i ? ",\n" : "", i, i, i, i, i % 2 ? ", \"Odd\": true" : "");
            else
                ads_buf_printf(&text,
                               "Name = \"slot%d@node\"\nId = %d\nReq = Memory > %d\n"
                               "'Quoted' = %d\n%s\n",
                               i, i, i, i, i % 2 ? "Odd = true\n" : "");
        }
        if (forms[fi] == JSON)
            ads_buf_adds(&text, "\n]\n");
        FILE *f = file_of(text.p, text.len);
        reader r;
        ads_error err;
        const ads_record *recs[300];
        int line, n = 0, rc;
        assert_int_equal(reader_open(&r, forms[fi], NULL, 0, f, &err), 0);
        while (n < 300 && (rc = reader_next(&r, &recs[n], &line, &err)) == 1)
            n++;
        assert_int_equal(n, 300);
        reader_close(&r);
        fclose(f);
        memset(text.p, 'X', text.len);
        ads_buf_free(&text);
        for (int i = 0; i < n; i++) {
            char want[32];
            snprintf(want, sizeof want, "slot%d@node", i);
            want_string(recs[i], "name", want);
            want_int(recs[i], "ID", i);
            assert_int_equal(ads_record_size(recs[i]), i % 2 ? 5u : 4u);
            ads_str last = ads_record_name(recs[i], ads_record_size(recs[i]) - 1);
            const char *want_last = i % 2 ? "Odd" : forms[fi] == JSON ? "Sub" : "Quoted";
            assert_int_equal(last.len, strlen(want_last));
            assert_memory_equal(last.p, want_last, last.len);
            const ads_expr *x = ads_record_lookup(recs[i], "Req", 3);
            assert_non_null(x);
            ads_buf u = ADS_BUF_INIT;
            ads_expr_unparse(&u, x);
            snprintf(want, sizeof want, "Memory > %d", i);
            assert_int_equal(u.len, strlen(want));
            assert_memory_equal(u.p, want, u.len);
            ads_buf_free(&u);
        }
    }
}

/* ------------------------------------------------------------------------ */
/* XML's rules                                                              */
/* ------------------------------------------------------------------------ */

/* Every byte but NUL, in a string and in a name: the document stays
 * well-formed UTF-8 without control characters, and reads back. */
static void xml__escapes_any_bytes(void **state)
{
    (void)state;
    char bytes[255];
    for (int i = 0; i < 255; i++)
        bytes[i] = (char)(i + 1);
    ads_record_builder *rb;
    ads_value s = ads_string(bytes, sizeof bytes);
    assert_int_equal(ads_record_builder_new(&rb, arena, NULL), 0);
    assert_int_equal(ads_record_builder_add_value(rb, bytes, sizeof bytes, &s, NULL), 0);
    assert_int_equal(ads_record_builder_add_value(rb, "fffe", 4, &s, NULL), 0);
    const ads_record *r = ads_record_builder_finish(rb);
    ads_buf b = ADS_BUF_INIT;
    ads_error err;
    ads_xml_write_begin(&b);
    assert_int_equal(ads_xml_write(&b, r, &err), 0);
    ads_xml_write_end(&b);
    for (size_t i = 0; i < b.len; i++) {
        unsigned char c = (unsigned char)b.p[i];
        assert_true(c >= 0x20 || c == '\n');
        assert_true(c < 0x7f);
    }
    assert_same_record(read_one(XML, b.p), r);
    /* and through the long form, and JSON (whose names must be UTF-8) */
    ads_buf_clear(&b);
    assert_int_equal(write_form(LONG, &b, r, 0, &err), 0);
    assert_same_record(read_one(LONG, b.p), r);
    assert_int_equal(ads_record_builder_new(&rb, arena, NULL), 0);
    assert_int_equal(ads_record_builder_add_value(rb, "s", 1, &s, NULL), 0);
    r = ads_record_builder_finish(rb);
    ads_buf_clear(&b);
    assert_int_equal(write_form(JSON, &b, r, 0, &err), 0);
    assert_same_record(read_one(JSON, b.p), r);
    ads_buf_free(&b);
}

static void xml__reads_records_without_the_wrapper(void **state)
{
    (void)state;
    const ads_record *rec[4];
    int lines[4];
    assert_int_equal(read_all(XML, "<c><a n=\"a\"><i>1</i></a></c>\n<c/>\n<c >\n</c>", rec,
                              lines, 4),
                     3);
    assert_string_equal(text_of_record(rec[0]), "[ a = 1 ]");
    assert_int_equal(ads_record_size(rec[1]), 0);
    assert_int_equal(lines[2], 3);
    assert_int_equal(read_all(XML, "", rec, NULL, 4), 0);
    assert_int_equal(read_all(XML, "<classads/>", rec, NULL, 4), 0);
    assert_int_equal(read_all(XML, "<?xml version=\"1.0\"?><classads>\n</classads>\n", rec,
                              NULL, 4),
                     0);
    const ads_record *r = read_one(
        XML, "<c><a n=\"&#65;&#x42;&lt;&apos;&quot;\\t\"><s>&#xe9;\xc3\xa9&gt;</s></a>"
             "<a n=\"b\"><b v=\"f\"></b></a><a n=\"u\"><un></un></a>"
             "<a n=\"e\"><s/></a><a n=\"l\"><l/></a><a n=\"x\"><e>{ 1, y }</e></a></c>");
    ads_str name = ads_record_name(r, 0);
    assert_int_equal(name.len, 6);
    assert_memory_equal(name.p, "AB<'\"\t", 6);
    want_string(r, "e", "");
    want_value_text(r, "l", ADS_LIST, "{ }");
    want_bool(r, "b", false);
    want_expr(r, "x", "{ 1, y }");
}

static void xml__file_reader_reads_what_the_buffer_reader_reads(void **state)
{
    (void)state;
    ads_buf text = ADS_BUF_INIT;
    ads_xml_write_begin(&text);
    for (int i = 0; i < 150; i++) {
        ads_buf_printf(&text, "<c>\n    <a n=\"Id\"><i>%d</i></a>\n    <a n=\"Pad\"><s>", i);
        for (int k = 0; k < (i * 983) % 5000; k++)
            ads_buf_adds(&text, k % 5 ? "\xc3\xa9" : "&amp;");
        ads_buf_adds(&text, "</s></a>\n</c>\n");
    }
    ads_xml_write_end(&text);
    FILE *f = file_of(text.p, text.len);
    reader a, b;
    ads_error err;
    const ads_record *rec, *rec2;
    int line, line2, rc, n = 0;
    assert_int_equal(reader_open(&a, XML, text.p, text.len, NULL, &err), 0);
    assert_int_equal(reader_open(&b, XML, NULL, 0, f, &err), 0);
    while ((rc = reader_next(&a, &rec, &line, &err)) == 1) {
        assert_int_equal(reader_next(&b, &rec2, &line2, &err), 1);
        assert_same_record(rec, rec2);
        assert_int_equal(line, line2);
        want_int(rec, "Id", n++);
    }
    assert_int_equal(rc, 0);
    assert_int_equal(reader_next(&b, &rec, &line, &err), 0);
    assert_int_equal(n, 150);
    reader_close(&a);
    reader_close(&b);
    fclose(f);
    ads_buf_free(&text);
}

/* ------------------------------------------------------------------------ */
/* Errors a user can reach: code, line, column and message                  */
/* ------------------------------------------------------------------------ */

static void long__errors_name_line_and_column(void **state)
{
    (void)state;
    CHECK_ERROR(LONG, "bad line here\n", ADS_ESYNTAX, 1, 5,
                "expected '=' or ':=' after the attribute name, found 'l'");
    CHECK_ERROR(LONG, "= 1\n", ADS_ESYNTAX, 1, 1, "expected an attribute name, found '='");
    CHECK_ERROR(LONG, "A.= 1\n", ADS_ESYNTAX, 1, 3,
                "expected an attribute name after '.', found '='");
    CHECK_ERROR(LONG, "A\n", ADS_ESYNTAX, 1, 2,
                "expected '=' or ':=' after the attribute name, found the end of the line");
    CHECK_ERROR(LONG, "A =\n", ADS_ESYNTAX, 1, 4, "expected a value after '='");
    CHECK_ERROR(LONG, "A :=   \r\n", ADS_ESYNTAX, 1, 8, "expected a value after ':='");
    CHECK_ERROR(LONG, "A = =  \n", ADS_ESYNTAX, 1, 6, "expected a value after '='");
    CHECK_ERROR(LONG, "A = 1\nB = (1 +\n", ADS_ESYNTAX, 2, 9,
                "expected an expression, found end of input");
    /* columns count the input's bytes, not the rewritten escapes */
    CHECK_ERROR(LONG, "A = \"C:\\dir\\x\" + * 2\n", ADS_ESYNTAX, 1, 18,
                "expected an expression, found '*'");
    CHECK_ERROR(LONG, "A = \"C:\\dir\" +\n", ADS_ESYNTAX, 1, 15,
                "expected an expression, found end of input");
    CHECK_ERROR(LONG, "A = \"open\n", ADS_ESYNTAX, 1, 5, "unterminated string");
    CHECK_ERROR(LONG, "A := \"a\\0\"\n", ADS_ESYNTAX, 1, 8,
                "'\\0' (a NUL character) is not allowed in a string");
    CHECK_ERROR(LONG, "A = \"a\0b\"\n", ADS_ESYNTAX, 1, 7, "a NUL byte is not allowed");
    CHECK_ERROR(LONG, "A := \"a\\\0b\"\n", ADS_ESYNTAX, 1, 9, "a NUL byte is not allowed");
    CHECK_ERROR(LONG, "A = 1 # not a comment\n", ADS_ESYNTAX, 1, 8,
                "identifier: empty; expected hex groups or decimal digits");
    CHECK_ERROR(LONG, "'open = 1\n", ADS_ESYNTAX, 1, 1, "unterminated quoted name");
    CHECK_ERROR(LONG, "x.'' = 1\n", ADS_ESYNTAX, 1, 3, "empty quoted name");
    CHECK_ERROR(LONG, "A = 1\nB = 2\nA.b = 2\n", ADS_ESYNTAX, 3, 1,
                "'A' is not a record: line 1 gave it another value");
    CHECK_ERROR(LONG, "S.T = 1\nS.T.u = 2\n", ADS_ESYNTAX, 2, 3,
                "'T' is not a record: line 1 gave it another value");
    CHECK_ERROR(LONG, "A = 99999999999999999999\n", ADS_ESYNTAX, 1, 5,
                "integer literal does not fit 64 bits");

    /* limits */
    ads_buf b = ADS_BUF_INIT;
    for (int i = 0; i <= ADS_MAX_DEPTH; i++)
        ads_buf_adds(&b, i ? ".a" : "a");
    ads_buf_adds(&b, " = 1\n");
    check_error(LONG, b.p, b.len, ADS_ELIMIT, 1, 2 * ADS_MAX_DEPTH + 1,
                "attribute name of more than 400 parts");
    ads_buf_clear(&b);
    ads_buf_adds(&b, "A = ");
    for (int i = 0; i < 2 * ADS_MAX_DEPTH; i++)
        ads_buf_addc(&b, '{');
    check_error(LONG, b.p, b.len, ADS_ELIMIT, 1, 405, "expression nested deeper than 400 levels");
    ads_buf_free(&b);
}

static void json__errors_name_line_and_column(void **state)
{
    (void)state;
    CHECK_ERROR(JSON, "x", ADS_ESYNTAX, 1, 1,
                "expected '[' or '{' at the start of JSON input, found 'x'");
    CHECK_ERROR(JSON, "[1]", ADS_ESYNTAX, 1, 2,
                "expected '{' to start a record in the array, found '1'");
    CHECK_ERROR(JSON, "[{},]", ADS_ESYNTAX, 1, 5, "trailing comma before ']'");
    CHECK_ERROR(JSON, "[{} {}]", ADS_ESYNTAX, 1, 5,
                "expected ',' or ']' after a record in the array, found '{'");
    CHECK_ERROR(JSON, "[{}", ADS_ESYNTAX, 1, 4,
                "expected ',' or ']' after a record in the array, found the end of the input");
    CHECK_ERROR(JSON, "[{}] x", ADS_ESYNTAX, 1, 6,
                "expected the end of the input after the array, found 'x'");
    CHECK_ERROR(JSON, "{} x", ADS_ESYNTAX, 1, 4,
                "expected '{' to start the next record, found 'x'");
    CHECK_ERROR(JSON, "{}, {}", ADS_ESYNTAX, 1, 3,
                "expected '{' to start the next record, found ','");
    CHECK_ERROR(JSON, "{\"a\":1,}", ADS_ESYNTAX, 1, 8, "trailing comma before '}'");
    CHECK_ERROR(JSON, "{\"a\" 1}", ADS_ESYNTAX, 1, 6,
                "expected ':' after a member name, found '1'");
    CHECK_ERROR(JSON, "{a:1}", ADS_ESYNTAX, 1, 2,
                "expected a member name (a string), found 'a'");
    CHECK_ERROR(JSON, "{/* no */}", ADS_ESYNTAX, 1, 2,
                "expected a member name (a string), found '/'");
    CHECK_ERROR(JSON, "{\"\":1}", ADS_ESYNTAX, 1, 2,
                "empty member name (a record attribute needs a name)");
    CHECK_ERROR(JSON, "{\"a\":[1,]}", ADS_ESYNTAX, 1, 9, "trailing comma before ']'");
    CHECK_ERROR(JSON, "{\"a\":[1 2]}", ADS_ESYNTAX, 1, 9,
                "expected ',' or ']' in an array, found '2'");
    CHECK_ERROR(JSON, "{\"a\":1 \"b\":2}", ADS_ESYNTAX, 1, 8,
                "expected ',' or '}' in an object, found '\"'");
    CHECK_ERROR(JSON, "{\"a\":1", ADS_ESYNTAX, 1, 7,
                "expected ',' or '}' in an object, found the end of the input");
    CHECK_ERROR(JSON, "{\"a\":}", ADS_ESYNTAX, 1, 6, "expected a JSON value, found '}'");
    CHECK_ERROR(JSON, "{\"a\":01}", ADS_ESYNTAX, 1, 7, "a number cannot have a leading zero");
    CHECK_ERROR(JSON, "{\"a\":1.}", ADS_ESYNTAX, 1, 8, "expected a digit after '.' in a number");
    CHECK_ERROR(JSON, "{\"a\":.5}", ADS_ESYNTAX, 1, 6, "expected a JSON value, found '.'");
    CHECK_ERROR(JSON, "{\"a\":+1}", ADS_ESYNTAX, 1, 6, "expected a JSON value, found '+'");
    CHECK_ERROR(JSON, "{\"a\":-}", ADS_ESYNTAX, 1, 7, "expected a digit after '-'");
    CHECK_ERROR(JSON, "{\"a\":1e}", ADS_ESYNTAX, 1, 8,
                "expected a digit in the exponent of a number");
    CHECK_ERROR(JSON, "{\"a\":1e999}", ADS_ESYNTAX, 1, 6, "number out of range for a real");
    CHECK_ERROR(JSON, "{\"a\":tru}", ADS_ESYNTAX, 1, 6, "expected true, false or null");
    CHECK_ERROR(JSON, "{\"a\":NaN}", ADS_ESYNTAX, 1, 6, "expected a JSON value, found 'N'");
    CHECK_ERROR(JSON, "{\"a\":\"x}", ADS_ESYNTAX, 1, 6, "unterminated string");
    CHECK_ERROR(JSON, "{\"a\":\"\x01\"}", ADS_ESYNTAX, 1, 7,
                "control character 0x01 in a string (it must be escaped)");
    CHECK_ERROR(JSON, "{\"a\":\"\\x\"}", ADS_ESYNTAX, 1, 7, "invalid escape '\\x' in a string");
    CHECK_ERROR(JSON, "{\"a\":\"\\u12G4\"}", ADS_ESYNTAX, 1, 11,
                "expected 4 hex digits after '\\u', found 'G'");
    CHECK_ERROR(JSON, "{\"a\":\"\\u0000\"}", ADS_ESYNTAX, 1, 7,
                "\\u0000 (a NUL character) is not allowed in a string");
    CHECK_ERROR(JSON, "{\"a\":\"\\ud800\"}", ADS_ESYNTAX, 1, 7,
                "high surrogate \\uD800 without a low surrogate");
    CHECK_ERROR(JSON, "{\"a\":\"\\ud800\\u0041\"}", ADS_ESYNTAX, 1, 7,
                "high surrogate \\uD800 without a low surrogate");
    CHECK_ERROR(JSON, "{\"a\":\"\\udc00\"}", ADS_ESYNTAX, 1, 7,
                "lone low surrogate \\uDC00 in a string");
    CHECK_ERROR(JSON, "{\"a\":\"\xc0\x80\"}", ADS_ESYNTAX, 1, 7, "invalid UTF-8 in a string");
    CHECK_ERROR(JSON, "{\"a\":\"\xed\xa0\x80\"}", ADS_ESYNTAX, 1, 7, "invalid UTF-8 in a string");
    CHECK_ERROR(JSON, "{\"a\":\"\xf5\x80\x80\x80\"}", ADS_ESYNTAX, 1, 7,
                "invalid UTF-8 in a string");
    CHECK_ERROR(JSON, "{\"a\":\"\xe2\x82\"}", ADS_ESYNTAX, 1, 7, "invalid UTF-8 in a string");
    CHECK_ERROR(JSON, "{\"a\":\"\xff\"}", ADS_ESYNTAX, 1, 7, "invalid UTF-8 in a string");
    CHECK_ERROR(JSON, "{\"a\":\"\\/Expr(1 +)\\/\"}", ADS_ESYNTAX, 1, 6,
                "in \"\\/Expr(...)\\/\": expected an expression, found end of input (line 1, "
                "column 4 of the expression)");
    CHECK_ERROR(JSON, "[\n{\"a\":1},\n{\"a\":x}\n]", ADS_ESYNTAX, 3, 6,
                "expected a JSON value, found 'x'");
    CHECK_ERROR(JSON, "{\"a\":1}\n{\"a\":2,\n  \"b\" 3}", ADS_ESYNTAX, 3, 7,
                "expected ':' after a member name, found '3'");

    ads_buf b = ADS_BUF_INIT;
    ads_buf_adds(&b, "{\"a\":");
    for (int i = 0; i < ADS_MAX_DEPTH; i++)
        ads_buf_addc(&b, '[');
    check_error(JSON, b.p, b.len, ADS_ELIMIT, 1, 6 + ADS_MAX_DEPTH - 1,
                "JSON nested deeper than 400 levels");
    ads_buf_free(&b);
}

static void xml__errors_name_line_and_column(void **state)
{
    (void)state;
    const char *value_expected =
        "expected a value element (<s> <i> <r> <b/> <un/> <er/> <at> <rt> <l> <c> <e>)";
    char msg[256];
    CHECK_ERROR(XML, "hello", ADS_ESYNTAX, 1, 1, "expected <classads> or <c>, found 'h'");
    CHECK_ERROR(XML, "<x/>", ADS_ESYNTAX, 1, 1, "expected <classads> or <c>, found <x/>");
    CHECK_ERROR(XML, "<?xml", ADS_ESYNTAX, 1, 1, "unterminated <?...?>");
    CHECK_ERROR(XML, "<classads><c><a n=\"a\"><i>1</i></a></c>", ADS_ESYNTAX, 1, 39,
                "expected <c> or </classads>, found the end of the input");
    CHECK_ERROR(XML, "<classads></classads> x", ADS_ESYNTAX, 1, 23,
                "expected the end of the input after </classads>, found 'x'");
    CHECK_ERROR(XML, "<c><a><i>1</i></a></c>", ADS_ESYNTAX, 1, 4,
                "<a> needs a non-empty attribute name n=\"...\"");
    CHECK_ERROR(XML, "<c><a n=\"\"><i>1</i></a></c>", ADS_ESYNTAX, 1, 4,
                "<a> needs a non-empty attribute name n=\"...\"");
    CHECK_ERROR(XML, "<c><x/></c>", ADS_ESYNTAX, 1, 4,
                "expected <a n=\"...\"> or </c>, found <x/>");
    snprintf(msg, sizeof msg, "%s, found <q>", value_expected);
    CHECK_ERROR(XML, "<c><a n=\"a\"><q>1</q></a></c>", ADS_ESYNTAX, 1, 13, msg);
    snprintf(msg, sizeof msg, "%s, found </a>", value_expected);
    CHECK_ERROR(XML, "<c><a n=\"a\"></a></c>", ADS_ESYNTAX, 1, 13, msg);
    CHECK_ERROR(XML, "<c><a n=\"a\"><i>1x</i></a></c>", ADS_ESYNTAX, 1, 13,
                "bad integer '1x' in <i>");
    CHECK_ERROR(XML, "<c><a n=\"a\"><i></i></a></c>", ADS_ESYNTAX, 1, 13,
                "bad integer '' in <i>");
    CHECK_ERROR(XML, "<c><a n=\"a\"><i>99999999999999999999</i></a></c>", ADS_ESYNTAX, 1, 13,
                "integer '99999999999999999999' in <i> does not fit 64 bits");
    CHECK_ERROR(XML, "<c><a n=\"a\"><r>abc</r></a></c>", ADS_ESYNTAX, 1, 13,
                "bad real 'abc' in <r>");
    CHECK_ERROR(XML, "<c><a n=\"a\"><r>0x10</r></a></c>", ADS_ESYNTAX, 1, 13,
                "bad real '0x10' in <r>");
    CHECK_ERROR(XML, "<c><a n=\"a\"><r>1e999</r></a></c>", ADS_ESYNTAX, 1, 13,
                "bad real '1e999' in <r>");
    CHECK_ERROR(XML, "<c><a n=\"a\"><at>yesterday</at></a></c>", ADS_ESYNTAX, 1, 13,
                "bad AbsTime 'yesterday' in <at>");
    CHECK_ERROR(XML, "<c><a n=\"a\"><rt>soon</rt></a></c>", ADS_ESYNTAX, 1, 13,
                "bad RelTime 'soon' in <rt>");
    CHECK_ERROR(XML, "<c><a n=\"a\"><e>1 +</e></a></c>", ADS_ESYNTAX, 1, 13,
                "in <e>: expected an expression, found end of input (line 1, column 4 of the "
                "expression)");
    CHECK_ERROR(XML, "<c><a n=\"a\"><s>x &bogus; y</s></a></c>", ADS_ESYNTAX, 1, 18,
                "unknown entity '&bogus;'");
    CHECK_ERROR(XML, "<c><a n=\"a\"><s>a & b</s></a></c>", ADS_ESYNTAX, 1, 18,
                "'&' that does not start an entity (write &amp;)");
    CHECK_ERROR(XML, "<c><a n=\"a\"><s>&#0;</s></a></c>", ADS_ESYNTAX, 1, 16,
                "character reference '&#0;' is not a character XML allows");
    CHECK_ERROR(XML, "<c><a n=\"a\"><s>&#x110000;</s></a></c>", ADS_ESYNTAX, 1, 16,
                "character reference '&#x110000;' is not a character XML allows");
    CHECK_ERROR(XML, "<c><a n=\"a\"><s>&#xD800;</s></a></c>", ADS_ESYNTAX, 1, 16,
                "character reference '&#xD800;' is not a character XML allows");
    CHECK_ERROR(XML, "<c><a n=\"a\"><s>x\\0</s></a></c>", ADS_ESYNTAX, 1, 13,
                "'\\0' (a NUL character) is not allowed in a string");
    CHECK_ERROR(XML, "<c><a n=\"a\"><s>x\\</s></a></c>", ADS_ESYNTAX, 1, 13,
                "a string ends with a lone backslash");
    CHECK_ERROR(XML, "<c><a n=\"a\\\"><s>x</s></a></c>", ADS_ESYNTAX, 1, 4,
                "an attribute name ends with a lone backslash");
    CHECK_ERROR(XML, "<c><a n=\"a\"><s>x</i></a></c>", ADS_ESYNTAX, 1, 17,
                "expected </s>, found </i>");
    CHECK_ERROR(XML, "<c><a n=\"a\"><s>x", ADS_ESYNTAX, 1, 17,
                "expected </s>, found the end of the input");
    CHECK_ERROR(XML, "<c><a n=\"a\"><b v=\"yes\"/></a></c>", ADS_ESYNTAX, 1, 13,
                "<b> needs v=\"t\" or v=\"f\"");
    CHECK_ERROR(XML, "<c><a n=\"a\" m=\"b\"><i>1</i></a></c>", ADS_ESYNTAX, 1, 13,
                "more than one attribute on <a>");
    CHECK_ERROR(XML, "<c><a n=\"a<\"><i>1</i></a></c>", ADS_ESYNTAX, 1, 11,
                "'<' in an attribute value (write &lt;)");
    CHECK_ERROR(XML, "<c><a n='a'><i>1</i></a></c>", ADS_ESYNTAX, 1, 9,
                "expected '\"' to start the value of n, found '''");
    CHECK_ERROR(XML, "<c><a n=\"a\"><s>\x01</s></a></c>", ADS_ESYNTAX, 1, 16,
                "control character 0x01 is not allowed in XML text");
    CHECK_ERROR(XML, "<c><a n=\"a\"><s>\xff</s></a></c>", ADS_ESYNTAX, 1, 16, "invalid UTF-8");
    CHECK_ERROR(XML, "<c><a n=\"a\"><s>\xef\xbf\xbe</s></a></c>", ADS_ESYNTAX, 1, 16,
                "invalid UTF-8 (or a character XML does not allow)");
    CHECK_ERROR(XML, "<c><a n=\"a\"><un x=\"1\"/></a></c>", ADS_ESYNTAX, 1, 13,
                "unexpected attribute x on <un>");
    CHECK_ERROR(XML, "<c><a n=\"a\"><i>1</i></a></c", ADS_ESYNTAX, 1, 28,
                "expected '>' to end the tag </c>, found the end of the input");
    CHECK_ERROR(XML, "<c><a n=\"a\"><i>1</i></a><c/>", ADS_ESYNTAX, 1, 25,
                "expected <a n=\"...\"> or </c>, found <c/>");
    CHECK_ERROR(XML, "<c>\n  <a n=\"a\">\n    <i>1</i>\n  </b>\n</c>", ADS_ESYNTAX, 4, 3,
                "expected </a>, found </b>");
    CHECK_ERROR(XML, "<c>< a n=\"a\"/></c>", ADS_ESYNTAX, 1, 5,
                "expected an element name after '<', found ' '");

    ads_buf b = ADS_BUF_INIT;
    ads_buf_adds(&b, "<c><a n=\"a\">");
    for (int i = 0; i < ADS_MAX_DEPTH; i++)
        ads_buf_adds(&b, "<l>");
    check_error(XML, b.p, b.len, ADS_ELIMIT, 1, 13 + 3 * (ADS_MAX_DEPTH - 1),
                "XML nested deeper than 400 levels");
    ads_buf_free(&b);
}

/* A stream that cannot be read is ADS_EIO; bad arguments are ADS_EINVAL;
 * errors other than the long form's syntax errors are final. */
static void readers__report_io_errors_and_bad_arguments(void **state)
{
    (void)state;
    char path[] = "/tmp/test_formats_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    for (int form = LONG; form <= XML; form++) {
        FILE *f = fopen(path, "w"); /* reading it fails */
        assert_non_null(f);
        reader r;
        ads_error err;
        const ads_record *rec;
        assert_int_equal(reader_open(&r, form, NULL, 0, f, &err), 0);
        assert_int_equal(reader_next(&r, &rec, NULL, &err), ADS_EIO);
        assert_non_null(strstr(err.message, "read error"));
        assert_int_equal(reader_next(&r, &rec, NULL, &err), ADS_EIO);
        reader_close(&r);
        fclose(f);
    }
    unlink(path);

    ads_error err;
    ads_long_reader *l = NULL;
    ads_json_reader *j = NULL;
    ads_xml_reader *x = NULL;
    const ads_record *rec;
    assert_int_equal(ads_long_reader_new(NULL, "", 0, &err), ADS_EINVAL);
    assert_int_equal(ads_long_reader_new(&l, NULL, 3, &err), ADS_EINVAL);
    assert_int_equal(ads_long_reader_new_file(&l, NULL, &err), ADS_EINVAL);
    assert_int_equal(ads_json_reader_new(&j, NULL, 3, &err), ADS_EINVAL);
    assert_int_equal(ads_json_reader_new_file(&j, NULL, &err), ADS_EINVAL);
    assert_int_equal(ads_xml_reader_new(&x, NULL, 3, &err), ADS_EINVAL);
    assert_int_equal(ads_xml_reader_new_file(&x, NULL, &err), ADS_EINVAL);
    assert_int_equal(ads_long_reader_new(&l, NULL, 0, &err), 0);
    assert_int_equal(ads_json_reader_new(&j, "{", 1, &err), 0);
    assert_int_equal(ads_xml_reader_new(&x, NULL, 0, &err), 0);
    assert_int_equal(ads_long_reader_next(&rec, NULL, l, NULL, &err), ADS_EINVAL);
    assert_int_equal(ads_long_reader_next(NULL, NULL, l, arena, &err), ADS_EINVAL);
    assert_int_equal(ads_long_reader_next(&rec, NULL, NULL, arena, &err), ADS_EINVAL);
    assert_int_equal(ads_json_reader_next(&rec, NULL, j, NULL, &err), ADS_EINVAL);
    assert_int_equal(ads_xml_reader_next(NULL, NULL, x, arena, &err), ADS_EINVAL);
    assert_int_equal(ads_long_reader_next(&rec, NULL, l, arena, NULL), 0);
    assert_int_equal(ads_xml_reader_next(&rec, NULL, x, arena, NULL), 0);
    /* a JSON error is final, and errors may be ignored (err NULL) */
    assert_int_equal(ads_json_reader_next(&rec, NULL, j, arena, NULL), ADS_ESYNTAX);
    assert_int_equal(ads_json_reader_next(&rec, NULL, j, arena, &err), ADS_ESYNTAX);
    assert_string_equal(err.message,
                        "expected a member name (a string), found the end of the input");
    ads_long_reader_free(l);
    ads_json_reader_free(j);
    ads_xml_reader_free(x);
    ads_long_reader_free(NULL);
    ads_json_reader_free(NULL);
    ads_xml_reader_free(NULL);
}

/* What the text forms cannot hold, the writers refuse. */
static void writers__refuse_what_the_forms_cannot_hold(void **state)
{
    (void)state;
    ads_buf b = ADS_BUF_INIT;
    ads_error err;
    ads_record_builder *rb;
    assert_int_equal(ads_record_builder_new(&rb, arena, NULL), 0);
    const ads_record *empty = ads_record_builder_finish(rb);
    assert_int_equal(ads_long_write(&b, empty, &err), ADS_EINVAL);
    assert_string_equal(err.message, "the long form cannot hold a record with no attributes");
    assert_int_equal(ads_json_write(&b, empty, 0, &err), 0);
    assert_int_equal(ads_xml_write(&b, empty, &err), 0);
    assert_int_equal(ads_long_write(NULL, empty, &err), ADS_EINVAL);
    assert_int_equal(ads_json_write(&b, NULL, 0, &err), ADS_EINVAL);
    assert_int_equal(ads_xml_write(NULL, empty, &err), ADS_EINVAL);

    /* a NUL byte in a string, however deep */
    ads_value s = ads_string("a\0b", 3), l = ads_list(&s, 1);
    assert_int_equal(ads_record_builder_new(&rb, arena, NULL), 0);
    assert_int_equal(ads_record_builder_add_value(rb, "Deep", 4, &l, NULL), 0);
    const ads_record *nul = ads_record_builder_finish(rb);
    for (int form = LONG; form <= XML; form++) {
        assert_int_equal(write_form(form, &b, nul, 0, &err), ADS_EINVAL);
        assert_string_equal(err.message,
                            "attribute 'Deep' holds a NUL byte, which the text forms cannot write");
    }
    assert_int_equal(ads_record_check_text(nul, &err), ADS_EINVAL);
    assert_int_equal(ads_record_check_text(empty, &err), 0);
    assert_int_equal(ads_record_check_text(NULL, &err), ADS_EINVAL);

    /* a name that is not UTF-8 cannot be a JSON member name */
    ads_value one = ads_int(1);
    assert_int_equal(ads_record_builder_new(&rb, arena, NULL), 0);
    assert_int_equal(ads_record_builder_add_value(rb, "n\xff", 2, &one, NULL), 0);
    const ads_record *latin = ads_record_builder_finish(rb);
    assert_int_equal(ads_json_write(&b, latin, 0, &err), ADS_EINVAL);
    assert_string_equal(err.message, "attribute name 'n\xff' is not UTF-8, which JSON cannot hold");
    ads_buf_clear(&b);
    assert_int_equal(ads_long_write(&b, latin, &err), 0);
    assert_same_record(read_one(LONG, b.p), latin);
    ads_buf_free(&b);
}

static void fold__keeps_expressions_and_folds_constants(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        bool value;
    } cases[] = {
        {"1", true},
        {"{ 1, { \"a\" }, [ b = 2 ] }", true},
        {"[ a = real(\"-INF\") ]", true},
        {"blob(\"aGk=\", [ type = \"text\" ])", true},
        {"{ 1, x }", false},
        {"[ a = b ]", false},
        {"real(\"1.5\")", false},
        {"blob(\"aGk=\", [ t = x ])", false},
        {"blob(\"*\")", false},
        {"blob(x)", false},
        {"-x", false},
        {"1 + 2", false},
        {"absTime(\"2020-01-01T00:00:00Z\")", true},
    };
    ads_error err;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const ads_expr *e, *f;
        assert_int_equal(ads_expr_parse(&e, arena, cases[i].text, strlen(cases[i].text), &err),
                         0);
        assert_int_equal(ads_expr_fold(&f, arena, e, &err), 0);
        if ((ads_expr_literal_value(f) != NULL) != cases[i].value)
            fail_msg("%s: %s", cases[i].text, cases[i].value ? "not folded" : "folded");
        if (!cases[i].value)
            assert_ptr_equal(f, e);
        assert_string_equal(text_of_expr(f), text_of_expr(e));
    }
    const ads_expr *e;
    assert_int_equal(ads_expr_fold(&e, arena, NULL, &err), ADS_EINVAL);
}

/* ------------------------------------------------------------------------ */
/* Random records through every form                                        */
/* ------------------------------------------------------------------------ */

static uint64_t rng = 0x9e3779b97f4a7c15u;

static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static size_t below(size_t n)
{
    return (size_t)(rnd() % n);
}

static const char *const name_pool[] = {
    "MyType", "Name", "Memory", "LoadAvg", "x", "_y", "Arch2", "a b", "x.y", "it's",
    "back\\slash", "tab\there", "\xc3\xa9t\xc3\xa9", "true", "error", "quote\"d", "<tag>",
    "&amp;", "\xff\xfe", "new\nline", "Requirements", "Z",
};

/* JSON member names must be UTF-8: the JSON round trip sets this. */
static bool utf8_names_only;

static ads_str random_name(ads_str *used, size_t n)
{
    for (;;) {
        ads_str s;
        if (below(4) == 0) {
            char tmp[16];
            int len = snprintf(tmp, sizeof tmp, "A%u", (unsigned)below(100000));
            s.p = ads_arena_strndup(arena, tmp, (size_t)len);
            s.len = (size_t)len;
        } else {
            const char *p = name_pool[below(sizeof name_pool / sizeof name_pool[0])];
            if (utf8_names_only && (unsigned char)p[0] == 0xff)
                continue;
            s.p = p;
            s.len = strlen(p);
        }
        bool dup = false;
        for (size_t i = 0; i < n; i++) {
            if (used[i].len != s.len)
                continue;
            size_t k = 0;
            while (k < s.len && (used[i].p[k] | 0x20) == (s.p[k] | 0x20))
                k++;
            dup |= k == s.len;
        }
        if (!dup)
            return s;
    }
}

static ads_value random_string(void)
{
    static const char *const pieces[] = {
        "a", "Z", " ", "\"", "'", "\\", "\n", "\r", "\t", "\x01", "\x7f", "\xc3\xa9",
        "\xe2\x82\xac", "\xf0\x9f\x98\x80", "\xff", "\xc3", "&", "<", ">", "/Expr(", ")/",
        "\\/", "#", "//", "=", "]]>", "\xef\xbf\xbf",
    };
    ads_buf b = ADS_BUF_INIT;
    size_t n = below(8);
    for (size_t i = 0; i < n; i++)
        ads_buf_adds(&b, pieces[below(sizeof pieces / sizeof pieces[0])]);
    ads_value v;
    assert_int_equal(ads_string_copy(&v, arena, b.p ? b.p : "", b.len), 0);
    ads_buf_free(&b);
    return v;
}

static const ads_record *random_record(int depth);

static ads_value random_value(int depth)
{
    static const double reals[] = {2.0, 1e100, -0.0, 0.0, 0.1, -1.5e-300, 5e-324, 1e308,
                                   123456789.125, -7.0};
    switch (below(depth > 2 ? 12 : 14)) {
    case 0:
        return ads_undefined();
    case 1:
        return ads_errorv();
    case 2:
        return ads_bool(below(2));
    case 3: {
        static const int64_t ints[] = {0, 1, -1, INT64_MAX, INT64_MIN, 1704380400};
        return below(2) ? ads_int(ints[below(6)]) : ads_int((int64_t)rnd());
    }
    case 4:
        switch (below(4)) {
        case 0:
            return ads_real(reals[below(sizeof reals / sizeof reals[0])]);
        case 1:
            return ads_real(below(3) == 0 ? NAN : below(2) ? INFINITY : -INFINITY);
        default: {
            uint64_t bits = rnd();
            double d;
            memcpy(&d, &bits, sizeof d);
            return ads_real(d);
        }
        }
    case 5:
    case 6:
        return random_string();
    case 7: {
        double secs = (double)(int64_t)below(4000000000u) + (below(2) ? 0.5 : 0);
        int32_t off = (int32_t)(below(57) - 28) * 1800;
        return ads_abstime(secs, off);
    }
    case 8: {
        double secs = (double)((int64_t)below(20000000) - 10000000) + (double)below(4) / 4;
        return ads_reltime(secs);
    }
    case 9: {
        ads_id id;
        if (below(2)) {
            id.hi = 0;
            id.lo = rnd();
        } else {
            id.hi = rnd() | 1;
            id.lo = rnd() | (1ull << 63);
        }
        return ads_ident(id);
    }
    case 10: {
        ads_blob *blob = ads_arena_alloc(arena, sizeof *blob);
        size_t n = below(12);
        char *bytes = ads_arena_alloc(arena, n + 1);
        for (size_t i = 0; i < n; i++)
            bytes[i] = (char)rnd();
        blob->bytes.p = bytes;
        blob->bytes.len = n;
        blob->meta = below(2) ? random_record(depth + 1) : NULL;
        ads_value v;
        v.type = ADS_BLOB;
        v.u.blob = blob;
        return v;
    }
    case 11:
        return random_string();
    case 12: {
        size_t n = below(5);
        ads_value *items = ads_arena_alloc(arena, (n ? n : 1) * sizeof *items);
        for (size_t i = 0; i < n; i++)
            items[i] = random_value(depth + 1);
        return ads_list(items, n);
    }
    default:
        return ads_recordv(random_record(depth + 1));
    }
}

static const char *const expr_pool[] = {
    "x + 1",
    "TARGET.Memory >= 1024 && (Arch == \"X86_64\" || Arch == \"aarch64\")",
    "ifThenElse(a, \"q\\\"uote\\\\\", { 1, x })",
    "[ a = b; c = \"\\n\" ]",
    "{ 1, x, \"\xc3\xa9\" }",
    "real(\"NaN\")",
    "{ 1, 2 }",
    "strcat(\"\\377\\t\", 'odd name', .top)",
    "a ?: b ? c : d",
    "-x * (y - -3)",
    "regexp(\"^a\\\\.b$\", Name, \"i\")",
    "size({ [ a = 1 ], [ b = x ] })",
    "blob(\"aGk=\", [ t = 1 ])",
    "#42 == id(\"42\")",
};

static const ads_record *random_record(int depth)
{
    ads_record_builder *b;
    ads_str used[10];
    size_t n = depth == 0 ? 1 + below(9) : below(4);
    assert_int_equal(ads_record_builder_new(&b, arena, NULL), 0);
    for (size_t i = 0; i < n; i++) {
        ads_str name = random_name(used, i);
        used[i] = name;
        if (depth == 0 && below(5) == 0) {
            const char *text = expr_pool[below(sizeof expr_pool / sizeof expr_pool[0])];
            const ads_expr *e;
            ads_error err;
            if (ads_expr_parse(&e, arena, text, strlen(text), &err))
                fail_msg("%s: %s", text, err.message);
            assert_int_equal(ads_record_builder_add(b, name.p, name.len, e, NULL), 0);
        } else {
            ads_value v = random_value(depth);
            assert_int_equal(ads_record_builder_add_value(b, name.p, name.len, &v, NULL), 0);
        }
    }
    return ads_record_builder_finish(b);
}

/* n random records written one after another in a form, then read back from
 * the buffer and from a file: every record the same, in order. */
static void round_trip(int form, int flags, size_t n)
{
    const ads_record **recs = ads_arena_alloc(arena, n * sizeof *recs);
    ads_buf b = ADS_BUF_INIT;
    ads_error err;
    if (form == XML)
        ads_xml_write_begin(&b);
    else if (form == JSON && flags)
        ads_buf_adds(&b, "[\n");
    for (size_t i = 0; i < n; i++) {
        recs[i] = random_record(0);
        if (form == JSON && flags && i)
            ads_buf_adds(&b, ",\n");
        int rc = form == JSON ? ads_json_write(&b, recs[i], flags, &err)
                              : write_form(form, &b, recs[i], flags, &err);
        if (rc)
            fail_msg("%s: writing %s: %s", form_names[form], text_of_record(recs[i]),
                     err.message);
        if (form == JSON)
            ads_buf_addc(&b, '\n');
    }
    if (form == XML)
        ads_xml_write_end(&b);
    else if (form == JSON && flags)
        ads_buf_adds(&b, "]\n");
    for (int from_file = 0; from_file <= 1; from_file++) {
        FILE *f = from_file ? file_of(b.p, b.len) : NULL;
        reader r;
        const ads_record *rec;
        int rc;
        assert_int_equal(reader_open(&r, form, b.p, b.len, f, &err), 0);
        for (size_t i = 0; i < n; i++) {
            rc = reader_next(&r, &rec, NULL, &err);
            if (rc != 1)
                fail_msg("%s record %zu: %d: line %d, column %d: %s\nwrote:\n%s", form_names[form],
                         i, rc, err.line, err.column, err.message, text_of_record(recs[i]));
            char why[512];
            if (!same_record(recs[i], rec, why, sizeof why)) {
                ads_buf one = ADS_BUF_INIT;
                write_form(form, &one, recs[i], flags, &err);
                fail_msg("%s record %zu differs: %s\nwritten as:\n%s", form_names[form], i,
                         why, ads_buf_cstr(&one));
            }
        }
        assert_int_equal(reader_next(&r, &rec, NULL, &err), 0);
        reader_close(&r);
        if (f)
            fclose(f);
    }
    ads_buf_free(&b);
}

static void long__random_records_come_back_equal(void **state)
{
    (void)state;
    round_trip(LONG, 0, 600);
}

static void json__random_records_come_back_equal(void **state)
{
    (void)state;
    utf8_names_only = true;
    round_trip(JSON, ADS_JSON_COMPACT, 600);
    round_trip(JSON, ADS_JSON_PRETTY, 300);
    utf8_names_only = false;
}

static void xml__random_records_come_back_equal(void **state)
{
    (void)state;
    round_trip(XML, 0, 600);
}

static void classad__random_records_come_back_equal(void **state)
{
    (void)state;
    round_trip(CLASSAD, 0, 600);
}

static void classad__reads_records_lists_and_comments(void **state)
{
    (void)state;
    const ads_record *recs[4];
    int lines[4];
    const char *text = "// jobs\n"
                       "[ Owner = \"ann\"; Cmd = \"]\" ]\n"
                       "/* a ] in a comment */\n"
                       "[\n  Memory = 1024; Req = Memory > 512 // ]\n],\n"
                       "[ Nested = [ A = { 1, [ B = 2 ] } ] ]\n";
    assert_int_equal(read_all(CLASSAD, text, recs, lines, 4), 3);
    want_string(recs[0], "Owner", "ann");
    want_string(recs[0], "Cmd", "]");
    assert_int_equal(lines[0], 2);
    want_int(recs[1], "Memory", 1024);
    want_expr(recs[1], "Req", "Memory > 512");
    assert_int_equal(lines[1], 4);
    assert_int_equal(lines[2], 7);
    assert_string_equal(text_of_record(recs[2]), "[ Nested = [ A = { 1, [ B = 2 ] } ] ]");

    /* the same records as one list literal, and an empty input */
    assert_int_equal(read_all(CLASSAD, "{ [ A = 1 ], [ A = 2 ] }\n", recs, NULL, 4), 2);
    want_int(recs[1], "A", 2);
    assert_int_equal(read_all(CLASSAD, "  \n// nothing\n", recs, NULL, 4), 0);
    assert_int_equal(read_all(CLASSAD, "[]", recs, NULL, 4), 1);
    assert_int_equal(ads_record_size(recs[0]), 0);
}

static void classad__errors_name_line_and_column_and_reading_goes_on(void **state)
{
    (void)state;
    const char *text = "[ A = 1 ]\n"
                       "[ B = 1 +; C = 2 ]\n"
                       "junk here\n"
                       "[ D = 4 ]\n";
    reader r;
    ads_error err;
    const ads_record *rec;
    int line;
    assert_int_equal(reader_open(&r, CLASSAD, text, strlen(text), NULL, &err), 0);
    assert_int_equal(reader_next(&r, &rec, &line, &err), 1);
    want_int(rec, "A", 1);
    assert_int_equal(reader_next(&r, &rec, &line, &err), ADS_ESYNTAX);
    assert_int_equal(err.line, 2);
    assert_int_equal(err.column, 10);
    assert_int_equal(reader_next(&r, &rec, &line, &err), ADS_ESYNTAX);
    assert_int_equal(err.line, 3);
    assert_int_equal(err.column, 1);
    assert_string_equal(err.message, "expected '[' to start a record, found 'j'");
    assert_int_equal(reader_next(&r, &rec, &line, &err), 1);
    want_int(rec, "D", 4);
    assert_int_equal(line, 4);
    assert_int_equal(reader_next(&r, &rec, &line, &err), 0);
    reader_close(&r);

    CHECK_ERROR(CLASSAD, "[ A = 1 ]\n\n  [ B = \"x]", ADS_ESYNTAX, 3, 3,
                "the record starting here is not closed");
    CHECK_ERROR(CLASSAD, "[ A = 1 ] /* open", ADS_ESYNTAX, 1, 11, "a comment is not closed");
    CHECK_ERROR(CLASSAD, "[ A = 1 ] }", ADS_ESYNTAX, 1, 11,
                "expected '[' to start a record, found '}'");
}

static void classad__file_reader_reads_what_the_buffer_reader_reads(void **state)
{
    (void)state;
    /* records that straddle the reader's 64 KiB chunks */
    ads_buf b = ADS_BUF_INIT;
    for (int i = 0; i < 3000; i++)
        ads_buf_printf(&b, "[ N = %d; Pad = \"%0*d\"; S = \"a ] \\\" [\" /* ] */ ]\n", i,
                       i % 97 + 1, 0);
    FILE *f = file_of(b.p, b.len);
    reader r, rf;
    ads_error err;
    const ads_record *x, *y;
    int lx, ly, n = 0;
    assert_int_equal(reader_open(&r, CLASSAD, b.p, b.len, NULL, &err), 0);
    assert_int_equal(reader_open(&rf, CLASSAD, NULL, 0, f, &err), 0);
    for (;;) {
        int rc = reader_next(&r, &x, &lx, &err);
        assert_int_equal(reader_next(&rf, &y, &ly, &err), rc);
        if (rc == 0)
            break;
        assert_int_equal(rc, 1);
        assert_int_equal(lx, ly);
        assert_same_record(x, y);
        want_int(y, "N", n);
        want_string(y, "S", "a ] \" [");
        n++;
    }
    assert_int_equal(n, 3000);
    reader_close(&r);
    reader_close(&rf);
    fclose(f);
    ads_buf_free(&b);
}

/* Each reader over a FILE * reads 64 KiB chunks: a record cut by a chunk's
 * end at any byte must read as it does from one buffer. The record sits
 * after padding that puts each of its bytes in turn at the boundary. */
static void readers__every_chunk_boundary_reads_the_same(void **state)
{
    (void)state;
    const ads_record *rec = valued(
        "[ Name = \"slot1@node \\\"q\\\" \\\\ \xc3\xa9 \xe2\x98\x83 \xf0\x9f\x98\x80\"; "
        "Memory = 123456789; Load = 0.000125; Big = -9223372036854775807; "
        "List = { 1, \"two\", { 3.5, [ X = \"y\" ] } }; Rec = [ A = 1; B = \"b\\nc\" ]; "
        "Req = Memory > 1024 && Name =?= \"x\"; T = `2020-01-02T03:04:05Z`; R = `1+02:00:00`; "
        "Flag = true; Gone = undefined ]");
    for (int form = LONG; form <= CLASSAD; form++) {
        ads_buf one = ADS_BUF_INIT;
        ads_error err;
        if (write_form(form, &one, rec, 0, &err))
            fail_msg("%s: writing: %s", form_names[form], err.message);
        const size_t chunk = 65536;
        for (size_t k = 0; k <= one.len; k++) {
            ads_buf b = ADS_BUF_INIT;
            size_t pad = chunk - k;
            for (size_t i = 0; i < pad; i++)
                ads_buf_addc(&b, form == LONG ? '\n' : ' ');
            ads_buf_add(&b, one.p, one.len);
            ads_buf_add(&b, one.p, one.len); /* and a second record after it */
            FILE *f = file_of(b.p, b.len);
            reader rf;
            const ads_record *x;
            int n = 0, rc;
            assert_int_equal(reader_open(&rf, form, NULL, 0, f, &err), 0);
            while ((rc = reader_next(&rf, &x, NULL, &err)) == 1) {
                char why[512];
                if (!same_record(rec, x, why, sizeof why))
                    fail_msg("%s, boundary at byte %zu of the record: %s", form_names[form], k,
                             why);
                n++;
                ads_arena_reset(arena);
                /* rec lives in the arena: rebuild it after a reset */
                rec = valued(
                    "[ Name = \"slot1@node \\\"q\\\" \\\\ \xc3\xa9 \xe2\x98\x83 \xf0\x9f\x98\x80\"; "
                    "Memory = 123456789; Load = 0.000125; Big = -9223372036854775807; "
                    "List = { 1, \"two\", { 3.5, [ X = \"y\" ] } }; Rec = [ A = 1; B = \"b\\nc\" ]; "
                    "Req = Memory > 1024 && Name =?= \"x\"; T = `2020-01-02T03:04:05Z`; "
                    "R = `1+02:00:00`; Flag = true; Gone = undefined ]");
            }
            if (rc != 0)
                fail_msg("%s, boundary at byte %zu of the record: line %d, column %d: %s",
                         form_names[form], k, err.line, err.column, err.message);
            assert_int_equal(n, 2);
            reader_close(&rf);
            fclose(f);
            ads_buf_free(&b);
        }
        ads_buf_free(&one);
    }
}

/* An attribute of 120,000 operands (issue 10 item 8: an imported record
 * like it crashed) is written in every form and read back the same, with
 * no recursion per operand in the writers' checks or the readers. */
static void forms__a_chain_of_120000_operands_round_trips(void **state)
{
    (void)state;
    ads_buf text = ADS_BUF_INIT;
    ads_buf_adds(&text, "[ Name = \"m\"; Req = ");
    for (int i = 0; i < 120000; i++)
        ads_buf_printf(&text, i ? " || Slot == %d" : "Slot == %d", i);
    ads_buf_adds(&text, " ]");
    assert_false(text.failed);
    const ads_record *r;
    ads_error err;
    assert_int_equal(ads_record_parse(&r, arena, text.p, text.len, &err), 0);
    for (int form = LONG; form <= CLASSAD; form++) {
        ads_buf b = ADS_BUF_INIT;
        if (form == XML)
            ads_xml_write_begin(&b);
        if (write_form(form, &b, r, 0, &err))
            fail_msg("%s: %s", form_names[form], err.message);
        if (form == XML)
            ads_xml_write_end(&b);
        assert_false(b.failed);
        assert_same_record(r, read_one(form, ads_buf_cstr(&b)));
        ads_buf_free(&b);
    }
    ads_buf_free(&text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(long__reads_condor_q_long_output),
        cmocka_unit_test(forms__a_chain_of_120000_operands_round_trips),
        cmocka_unit_test(long__reads_condor_status_long_output),
        cmocka_unit_test(json__reads_condor_q_json_output),
        cmocka_unit_test(xml__reads_condor_q_xml_output),
        cmocka_unit_test(long__writes_example_exactly),
        cmocka_unit_test(json__writes_example_exactly),
        cmocka_unit_test(xml__writes_example_exactly),
        cmocka_unit_test(long__dotted_names_build_nested_records),
        cmocka_unit_test(long__repeated_name_keeps_last_value_at_first_position),
        cmocka_unit_test(long__operators_choose_escaping_and_folding),
        cmocka_unit_test(long__tolerates_crlf_comments_bom_and_blank_lines),
        cmocka_unit_test(long__skips_a_bad_record_and_goes_on),
        cmocka_unit_test(long__history_banners_end_records),
        cmocka_unit_test(long__writer_picks_the_operator_each_line_needs),
        cmocka_unit_test(long__deep_nesting_writes_and_reads_back),
        cmocka_unit_test(long__file_reader_reads_what_the_buffer_reader_reads),
        cmocka_unit_test(json__reads_json_lines_and_empty_inputs),
        cmocka_unit_test(json__numbers_keep_integer_and_real_apart),
        cmocka_unit_test(json__strings_decode_escapes_and_expressions),
        cmocka_unit_test(json__repeated_member_keeps_last_value_at_first_position),
        cmocka_unit_test(json__member_names_one_byte_apart_are_told_apart),
        cmocka_unit_test(json__numbers_read_alike_whole_and_cut_by_a_chunk),
        cmocka_unit_test(readers__records_outlive_the_reader_and_its_text),
        cmocka_unit_test(json__special_string_bytes_are_found_at_every_position),
        cmocka_unit_test(json__records_of_changing_shape_find_every_member),
        cmocka_unit_test(json__repeated_shapes_read_as_the_builder_builds),
        cmocka_unit_test(json__records_past_the_name_memo_find_every_member),
        cmocka_unit_test(json__short_reals_read_as_strtod_reads_them),
        cmocka_unit_test(json__strings_that_are_not_utf8_travel_as_expressions),
        cmocka_unit_test(json__file_reader_reads_what_the_buffer_reader_reads),
        cmocka_unit_test(xml__escapes_any_bytes),
        cmocka_unit_test(xml__reads_records_without_the_wrapper),
        cmocka_unit_test(xml__file_reader_reads_what_the_buffer_reader_reads),
        cmocka_unit_test(long__errors_name_line_and_column),
        cmocka_unit_test(json__errors_name_line_and_column),
        cmocka_unit_test(xml__errors_name_line_and_column),
        cmocka_unit_test(readers__report_io_errors_and_bad_arguments),
        cmocka_unit_test(writers__refuse_what_the_forms_cannot_hold),
        cmocka_unit_test(fold__keeps_expressions_and_folds_constants),
        cmocka_unit_test(long__random_records_come_back_equal),
        cmocka_unit_test(json__random_records_come_back_equal),
        cmocka_unit_test(xml__random_records_come_back_equal),
        cmocka_unit_test(classad__random_records_come_back_equal),
        cmocka_unit_test(classad__reads_records_lists_and_comments),
        cmocka_unit_test(classad__errors_name_line_and_column_and_reading_goes_on),
        cmocka_unit_test(classad__file_reader_reads_what_the_buffer_reader_reads),
        cmocka_unit_test(readers__every_chunk_boundary_reads_the_same),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
