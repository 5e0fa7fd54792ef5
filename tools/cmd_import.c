/*
 * tools/cmd_import.c: `adstore import`, the bulk load (shared/spec/tools.md,
 * "Import"; the user's guide is docs/tools.md).
 *
 * Each FILE is read by the streaming reader of its format (chosen by
 * --format, else the file name, else the first bytes) and its records go to
 * the engine's bulk loader, which commits them in batches. Batches never span
 * two files, and each batch's transaction also records how far into its file
 * the import has got (application metadata "import:<absolute path>", with the
 * file's identity), so records and progress commit together: a re-run of the
 * same command after a crash, a kill or a bad record goes on after the last
 * committed batch and never loads one twice. Memory holds one batch.
 */
#include <errno.h>
#include <stdarg.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "classad/formats.h"
#include "base/limits.h"
#include "tools/cli.h"

typedef enum fmt { F_AUTO, F_LONG, F_CLASSAD, F_JSON, F_XML, F_DUMP } fmt;
static const char *const fmt_names[] = {"auto", "long", "classad", "json", "xml", "dump"};

/* ---- an input: a FILE * that first gives back the bytes sniffed ---- */

typedef struct peeked {
    FILE *under;
    char head[4096];
    size_t n, pos;
    uint64_t total; /* bytes given to the reader: what the summary counts */
} peeked;

static ssize_t peeked_read(void *cookie, char *buf, size_t size)
{
    peeked *p = cookie;
    if (p->pos < p->n) {
        size_t k = p->n - p->pos < size ? p->n - p->pos : size;
        memcpy(buf, p->head + p->pos, k);
        p->pos += k;
        p->total += k;
        return (ssize_t)k;
    }
    size_t k = fread(buf, 1, size, p->under);
    if (k == 0 && ferror(p->under))
        return -1;
    p->total += k;
    return (ssize_t)k;
}

static int peeked_close(void *cookie)
{
    free(cookie);
    return 0;
}

/* The format the first bytes of an input look like. */
static fmt sniff(const char *s, size_t n)
{
    size_t i = 0;
    if (n >= 3 && (unsigned char)s[0] == 0xef && (unsigned char)s[1] == 0xbb &&
        (unsigned char)s[2] == 0xbf)
        i = 3;
    if (n > 0 && ((unsigned char)s[0] & 0xf0) == 0x80 && memmem(s, n < 64 ? n : 64, "adstore-dump", 12))
        return F_DUMP; /* a MessagePack map: the dump's header */
    while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r' || s[i] == '\n'))
        i++;
    if (i == n)
        return F_LONG;
    char c = s[i];
    size_t j = i + 1;
    while (j < n && (s[j] == ' ' || s[j] == '\t' || s[j] == '\r' || s[j] == '\n'))
        j++;
    char d = j < n ? s[j] : '\0';
    if (c == '<')
        return F_XML;
    if (c == '[') {
        const char *nl = memchr(s + i, '\n', n - i);
        size_t ll = nl ? (size_t)(nl - (s + i)) : n - i;
        if (memmem(s + i, ll, "\"adstore-dump\"", 14))
            return F_DUMP;
        return d == '{' || d == ']' ? F_JSON : F_CLASSAD;
    }
    if (c == '{')
        return d == '"' || d == '}' ? F_JSON : F_CLASSAD;
    if (c == '/')
        return F_CLASSAD;
    return F_LONG;
}

static fmt by_name(const char *path)
{
    const char *dot = strrchr(path, '.');
    if (!dot || strchr(dot, '/'))
        return F_AUTO;
    dot++;
    if (!strcasecmp(dot, "json") || !strcasecmp(dot, "jsonl") || !strcasecmp(dot, "ndjson"))
        return F_JSON;
    if (!strcasecmp(dot, "xml"))
        return F_XML;
    if (!strcasecmp(dot, "dump"))
        return F_DUMP;
    if (!strcasecmp(dot, "classad") || !strcasecmp(dot, "classads"))
        return F_CLASSAD;
    if (!strcasecmp(dot, "long"))
        return F_LONG;
    return F_AUTO;
}

typedef struct input {
    const char *name; /* as given, for messages */
    FILE *f;          /* what the reader reads */
    FILE *own;        /* the file opened (NULL for stdin) */
    fmt form;
    struct stat st;
    bool is_file;
    ads_long_reader *l;
    ads_json_reader *j;
    ads_xml_reader *x;
    ads_classad_reader *c;
    ads_dump_reader *d;
    int dump_item;
    peeked *pk; /* the layer the reader reads through (freed with f) */
    char *fbuf; /* f's buffer (freed after it) */
} input;

static void input_close(input *in)
{
    ads_long_reader_free(in->l);
    ads_json_reader_free(in->j);
    ads_xml_reader_free(in->x);
    ads_classad_reader_free(in->c);
    ads_dump_reader_free(in->d);
    if (in->f && in->f != in->own && in->f != stdin)
        fclose(in->f);
    if (in->own)
        fclose(in->own);
    free(in->fbuf);
    memset(in, 0, sizeof *in);
}

static int input_open(input *in, const char *path, fmt forced, ads_error *err)
{
    memset(in, 0, sizeof *in);
    in->name = path;
    FILE *f;
    if (strcmp(path, "-") == 0) {
        in->name = "<stdin>";
        f = stdin;
    } else {
        if (!(f = fopen(path, "rb")))
            return ads_error_set(err, ADS_EIO, "%s", strerror(errno));
        in->own = f;
    }
    if (fstat(fileno(f), &in->st) == 0 && S_ISREG(in->st.st_mode))
        in->is_file = f != stdin;
    if (in->own && S_ISDIR(in->st.st_mode)) {
        input_close(in);
        return ads_error_set(err, ADS_EINVAL, "is a directory");
    }
    fmt form = forced != F_AUTO ? forced : by_name(path);
    in->f = f;
    /* the reader reads through a layer that counts the bytes (a pipe has
     * no size) and, when no format is given, gives back the bytes sniffed */
    peeked *p = calloc(1, sizeof *p);
    if (!p) {
        input_close(in);
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    }
    p->under = f;
    if (form == F_AUTO) {
        p->n = fread(p->head, 1, sizeof p->head, f);
        if (p->n == 0 && ferror(f)) {
            free(p);
            input_close(in);
            return ads_error_set(err, ADS_EIO, "%s", strerror(errno));
        }
        form = sniff(p->head, p->n);
    }
    cookie_io_functions_t io = {peeked_read, NULL, NULL, peeked_close};
    FILE *pf = fopencookie(p, "rb", io);
    if (!pf) {
        free(p);
        input_close(in);
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    }
    /* the reader's chunks come out of a large buffer, filled by one read(2)
     * each (stdio's default is a system call per 8 KiB: 100,000 for a file
     * of 800 MB; glibc takes no size without the buffer). Without the
     * memory, the default serves. */
    if ((in->fbuf = malloc(ADS_IMPORT_READ_BUFFER)) &&
        setvbuf(pf, in->fbuf, _IOFBF, ADS_IMPORT_READ_BUFFER) != 0) {
        free(in->fbuf);
        in->fbuf = NULL;
    }
    in->f = pf;
    in->pk = p;
    in->form = form;
    int rc;
    switch (form) {
    case F_LONG:
        rc = ads_long_reader_new_file(&in->l, in->f, err);
        break;
    case F_JSON:
        rc = ads_json_reader_new_file(&in->j, in->f, err);
        break;
    case F_XML:
        rc = ads_xml_reader_new_file(&in->x, in->f, err);
        break;
    case F_CLASSAD:
        rc = ads_classad_reader_new_file(&in->c, in->f, err);
        break;
    default:
        rc = ads_dump_reader_new(&in->d, in->f, err);
        break;
    }
    if (rc)
        input_close(in);
    return rc;
}

/* The next record: as the readers' _next (line: the record's line; for a
 * dump, its number). */
static int input_next(input *in, const ads_record **out, int *line, ads_arena *a, ads_error *err)
{
    switch (in->form) {
    case F_LONG:
        return ads_long_reader_next(out, line, in->l, a, err);
    case F_JSON:
        return ads_json_reader_next(out, line, in->j, a, err);
    case F_XML:
        return ads_xml_reader_next(out, line, in->x, a, err);
    case F_CLASSAD:
        return ads_classad_reader_next(out, line, in->c, a, err);
    default: {
        int rc = ads_dump_reader_next(out, in->d, a, err);
        if (rc == 1)
            *line = ++in->dump_item;
        return rc;
    }
    }
}

/* How far into the file the reader has read, for the progress bar. */
static double input_fraction(const input *in)
{
    if (!in->is_file || in->st.st_size <= 0)
        return -1;
    off_t pos = ftello(in->own);
    if (pos < 0)
        return -1;
    return (double)pos / (double)in->st.st_size;
}

/* ---- progress kept in the store ---- */

typedef struct file_progress {
    unsigned long long dev, ino, size, mtime_ns, consumed, committed;
    int complete;
    /* a sorted load under way: input records consumed..seg_end were staged
     * and the first `merged` rows of their merge are decided (stored or
     * refused) */
    int sorted;
    unsigned long long seg_end, merged;
} file_progress;

/* Where a sorted load's merge is (progress_format's " sorted E M"). */
typedef struct sort_pos {
    bool on;
    uint64_t from, end, merged;
} sort_pos;

static bool same_file(const file_progress *p, const struct stat *st)
{
    return p->dev == (unsigned long long)st->st_dev && p->ino == (unsigned long long)st->st_ino &&
           p->size == (unsigned long long)st->st_size &&
           p->mtime_ns == (unsigned long long)st->st_mtim.tv_sec * 1000000000ull +
                              (unsigned long long)st->st_mtim.tv_nsec;
}

/* The stored form of a file's progress, in v (at least 256 bytes); sp (may
 * be NULL) adds where a sorted load's merge is. */
static int progress_format(char *v, size_t cap, const struct stat *st, uint64_t consumed,
                           uint64_t committed, bool complete, const sort_pos *sp)
{
    int n = snprintf(v, cap, "adstore-import 1 %llu %llu %llu %llu %llu %llu %d",
                     (unsigned long long)st->st_dev, (unsigned long long)st->st_ino,
                     (unsigned long long)st->st_size,
                     (unsigned long long)st->st_mtim.tv_sec * 1000000000ull +
                         (unsigned long long)st->st_mtim.tv_nsec,
                     (unsigned long long)consumed, (unsigned long long)committed,
                     complete ? 1 : 0);
    if (sp && sp->on && n > 0 && (size_t)n < cap)
        n += snprintf(v + n, cap - (size_t)n, " sorted %llu %llu",
                      (unsigned long long)sp->end, (unsigned long long)sp->merged);
    return n;
}

/* A file's progress as stored (raw; len 0 when there is none). */
typedef struct raw_progress {
    char v[256];
    size_t len;
} raw_progress;

static int progress_get(ads_txn *txn, const char *key, raw_progress *out, ads_error *err)
{
    ads_str v;
    out->len = 0;
    out->v[0] = '\0';
    int rc = ads_txn_meta_get(txn, key, &v, err);
    if (rc == 1) {
        out->len = v.len < sizeof out->v - 1 ? v.len : sizeof out->v - 1;
        memcpy(out->v, v.p, out->len);
        out->v[out->len] = '\0';
    }
    return rc < 0 ? rc : 0;
}

static bool parse_progress(const raw_progress *r, file_progress *p)
{
    int n = 0;
    memset(p, 0, sizeof *p);
    if (!r->len || sscanf(r->v, "adstore-import 1 %llu %llu %llu %llu %llu %llu %d%n", &p->dev,
                          &p->ino, &p->size, &p->mtime_ns, &p->consumed, &p->committed,
                          &p->complete, &n) != 7)
        return false;
    p->sorted = sscanf(r->v + n, " sorted %llu %llu", &p->seg_end, &p->merged) == 2;
    return true;
}

/* 1 and *p if the store holds progress for key, 0 if not, or an error; *raw
 * is what is stored, either way. */
static int progress_read(ads_db *db, const char *key, file_progress *p, raw_progress *raw,
                         ads_error *err)
{
    ads_txn *txn;
    int rc = ads_txn_begin(&txn, db, ADS_TXN_READONLY, err);
    if (rc)
        return rc;
    if (!(rc = progress_get(txn, key, raw, err)))
        rc = parse_progress(raw, p); /* not ours: treat as no progress */
    ads_txn_abort(txn);
    return rc;
}

/* ---- the import ---- */

typedef struct bad {
    char *text;
    struct bad *next;
} bad;

typedef struct pending_line {
    uint64_t num; /* the record's number in the load */
    int line;
} pending_line;

typedef struct imp {
    cli_ctx *c;
    ads_db *db;
    ads_bulk *bulk;
    const char *type;
    const char *time_attr; /* --time-attr: the attribute that dates each row */
    bool keep_going;
    ads_bulk_options bo;
    /* the file being read */
    input *in;
    char key[PATH_MAX + 16];
    bool track;              /* record progress for this file */
    /* the file's stored progress as this import last saw it, and as its
     * last batch wrote it (which may not have committed) */
    raw_progress seen, wrote;
    bool raced; /* another import of the file moved its progress */
    bool stalled; /* the ADSTORE_TEST_STALL=batch hook has stopped once */
    uint64_t consumed;       /* input records of this file read so far (bad ones too) */
    uint64_t done_consumed;  /* ... of which covered by committed batches */
    uint64_t base;           /* records of this file committed by earlier runs */
    uint64_t loaded;         /* records of this file queued in this run (not dropped) */
    uint64_t committed;      /* ... of which committed */
    int sort;                /* --sort 1, --no-sort -1, else 0: by the file's size */
    sort_pos sp;             /* a sorted load's merge under way */
    bool merge_failed;       /* the import stopped in a sorted load's merge */
    uint64_t resume_end, resume_merged; /* a sorted load to go on with */
    bool resume_sorted;
    uint64_t runs, run_bytes; /* temporary runs of sorted loads, and their bytes */
    uint64_t unsorted; /* records committed by loads batch by batch */
    /* lines of the records queued in the bulk, by number */
    pending_line *pend;
    size_t npend, cappend;
    /* totals of this run */
    uint64_t total_records, total_bad, files_done, files_skipped, bytes;
    uint64_t total_unchanged; /* records equal to their row in effect: no row appended */
    uint64_t input_before; /* input records of the earlier files (as --skip counts them) */
    bool before_known;     /* false once a file was skipped without reading it */
    bad *bads, **bads_tail;
    uint64_t nbads_listed;
    progress bar;
} imp;

/*
 * Write the file's progress in txn, after checking in the same transaction
 * that it is still what this import last saw or wrote: another import of
 * the same file that moved it meanwhile has loaded records this batch may
 * hold, so the batch is refused (ADS_EBUSY) rather than loading them twice.
 */
static int progress_write(imp *im, ads_txn *txn, uint64_t consumed, uint64_t committed,
                          bool complete, ads_error *err)
{
    raw_progress now;
    int rc = progress_get(txn, im->key, &now, err);
    if (rc)
        return rc;
    bool same = (now.len == im->seen.len && memcmp(now.v, im->seen.v, now.len) == 0) ||
                (im->wrote.len && now.len == im->wrote.len &&
                 memcmp(now.v, im->wrote.v, now.len) == 0);
    if (!same) {
        im->raced = true;
        file_progress p;
        if (parse_progress(&now, &p))
            return ads_error_set(err, ADS_EBUSY,
                                 "another import of this file moved its recorded progress (to "
                                 "input record %llu%s) while this one ran; this batch was not "
                                 "stored, so no record is loaded twice",
                                 p.consumed, p.complete ? ", complete" : "");
        return ads_error_set(err, ADS_EBUSY,
                             "another import of this file changed its recorded progress while "
                             "this one ran; this batch was not stored, so no record is loaded "
                             "twice");
    }
    im->seen = now;
    im->wrote.len = (size_t)progress_format(im->wrote.v, sizeof im->wrote.v, &im->in->st,
                                            consumed, committed, complete, &im->sp);
    return ads_txn_meta_put(txn, im->key, im->wrote.v, im->wrote.len, err);
}

static int on_batch(void *ctx, ads_txn *txn, const ads_bulk_batch *b, ads_error *err)
{
    imp *im = ctx;
    (void)b;
    if (!im->track)
        return 0;
    /* everything read so far is in this batch or was committed or refused;
     * in a sorted load's merge, every input record before sp.from, and the
     * first sp.merged rows of the merge */
    return progress_write(im, txn, im->sp.on ? im->sp.from : im->consumed,
                          im->base + im->loaded, false, err);
}

static void note_bad(imp *im, const char *format, ...) __attribute__((format(printf, 2, 3)));
static void note_bad(imp *im, const char *format, ...)
{
    im->total_bad++;
    if (im->nbads_listed >= 1000)
        return;
    char buf[ADS_ERROR_MESSAGE_MAX + PATH_MAX + 64];
    va_list ap;
    va_start(ap, format);
    vsnprintf(buf, sizeof buf, format, ap);
    va_end(ap);
    bad *b = malloc(sizeof *b);
    if (!b || !(b->text = strdup(buf))) {
        free(b);
        return;
    }
    b->next = NULL;
    *im->bads_tail = b;
    im->bads_tail = &b->next;
    im->nbads_listed++;
}

/* The line of the queued record number num, 0 if it is not queued. */
static int line_of(const imp *im, uint64_t num)
{
    size_t lo = 0, hi = im->npend;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (im->pend[mid].num < num)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < im->npend && im->pend[lo].num == num ? im->pend[lo].line : 0;
}

/* The message of a bulk error without the bulk's "record N: " prefix. */
static const char *bulk_message(const ads_error *err)
{
    const char *m = err->message;
    if (strncmp(m, "record ", 7) == 0) {
        const char *p = m + 7;
        while (*p >= '0' && *p <= '9')
            p++;
        if (p > m + 7 && p[0] == ':' && p[1] == ' ')
            return p + 2;
    }
    return m;
}

/* After a successful add or flush: when nothing is queued, all is committed. */
static void after_commit(imp *im)
{
    if (ads_bulk_pending(im->bulk) == 0) {
        bool batch = im->committed < im->loaded;
        im->npend = 0;
        im->committed = im->loaded;
        if (!im->sp.on)
            im->done_consumed = im->consumed;
        /* A test hook: with ADSTORE_TEST_STALL=batch the process stops itself
         * (SIGSTOP) after its first committed batch, so a test can run
         * another import of the same file before it goes on (SIGCONT). */
        const char *stall = getenv("ADSTORE_TEST_STALL");
        if (batch && !im->stalled && stall && strcmp(stall, "batch") == 0) {
            im->stalled = true;
            raise(SIGSTOP);
        }
    }
}

static void stop_bar(imp *im)
{
    progress_done(&im->bar);
    im->bar.last = 0;
}

/* "FILE:LINE" or, for a dump, "FILE:record N". */
static void where(char *buf, size_t cap, const input *in, int line)
{
    if (line <= 0)
        snprintf(buf, cap, "%s", in->name);
    else
        snprintf(buf, cap, "%s:%s%d", in->name, in->form == F_DUMP ? "record " : "", line);
}

/*
 * The bulk failed (adding or flushing). With --keep-going a failure about one
 * record lists and drops that record and goes on; otherwise, or for any other
 * failure, the queued batch is dropped and the import stops. 0 to go on, else
 * an exit status (the message printed).
 */
static int bulk_failed(imp *im, int rc, ads_error *err, int add_line)
{
    char at[PATH_MAX + 64];
    for (;;) {
        uint64_t num = ads_bulk_failed(im->bulk);
        int line = num != UINT64_MAX ? line_of(im, num) : 0;
        bool queued = line != 0;
        if (num != UINT64_MAX && !queued)
            line = add_line; /* refused as it was added */
        where(at, sizeof at, im->in, num != UINT64_MAX ? line : 0);
        if (num == UINT64_MAX || !im->keep_going || rc == ADS_ENOMEM) {
            stop_bar(im);
            fprintf(stderr, "%s: %s\n", at, bulk_message(err));
            ads_bulk_discard(im->bulk);
            im->npend = 0;
            im->loaded = im->committed;
            return EXIT_INPUT;
        }
        note_bad(im, "%s: %s", at, bulk_message(err));
        if (!queued)
            return 0;
        if ((rc = ads_bulk_drop_failed(im->bulk, err)))
            return cli_fail_err(im->c, err);
        im->loaded--;
        if ((rc = ads_bulk_flush(im->bulk, err)) == 0) {
            after_commit(im);
            return 0;
        }
    }
}

/* rec with AdType = type first (type NULL: as it is), and _Timestamp = ts
 * (NULL: as it is; a _Timestamp it has is replaced). */
static int with_attrs(const ads_record **out, const ads_record *rec, const ads_str *type,
                      const ads_value *ts, ads_arena *a, ads_error *err)
{
    ads_record_builder *b;
    if (type && !ts) { /* the common case: the record's cells kept, not copied */
        ads_value v = ads_string(type->p, type->len);
        const ads_expr *x;
        int rc = ads_expr_literal(&x, a, &v, err);
        return rc ? rc : ads_record_prepend(out, a, rec, "AdType", 6, x, err);
    }
    int rc = ads_record_builder_new(&b, a, err);
    if (!rc && type) {
        ads_value v = ads_string(type->p, type->len);
        rc = ads_record_builder_add_value(b, "AdType", 6, &v, err);
    }
    for (size_t i = 0; !rc && i < ads_record_size(rec); i++) {
        ads_str n = ads_record_name(rec, i);
        if (ts && n.len == 10 && strncasecmp(n.p, "_Timestamp", 10) == 0)
            continue;
        rc = ads_record_builder_add(b, n.p, n.len, ads_record_expr(rec, i), err);
    }
    if (!rc && ts)
        rc = ads_record_builder_add_value(b, "_Timestamp", 10, ts, err);
    if (rc)
        return rc;
    *out = ads_record_builder_finish(b);
    return *out ? 0 : ads_error_set(err, ADS_ENOMEM, "out of memory");
}

/*
 * The type and date a record is stored with, as HTCondor's output gives
 * them: its AdType; else --type; else its MyType (what condor_status -long,
 * -json and -xml print, so `condor_status -any` output lands in Machine,
 * Scheduler, DaemonMaster ... types). With --time-attr, _Timestamp is the
 * value of that attribute (the engine reads epoch seconds, an AbsTime or ISO
 * text). *out is rec, or a copy with AdType and _Timestamp set. 0, 1 with
 * why (a bad record), or an error.
 */
static int typed_and_dated(const imp *im, const ads_record **out, const ads_record *rec,
                           char *why, size_t cap, ads_arena *a, ads_error *err)
{
    ads_str type = {NULL, 0};
    bool set_type = false;
    const ads_value *ts = NULL;
    *out = rec;
    if (!ads_record_lookup(rec, "AdType", 6)) {
        set_type = true;
        if (im->type) {
            type.p = im->type;
            type.len = strlen(im->type);
        } else {
            const ads_expr *x = ads_record_lookup(rec, "MyType", 6);
            const ads_value *v = x ? ads_expr_literal_value(x) : NULL;
            if (!x) {
                snprintf(why, cap, "the record has neither AdType nor MyType to name its type "
                                   "(give every such record one with --type T)");
                return 1;
            }
            if (!v || v->type != ADS_STRING || v->u.s.len == 0) {
                snprintf(why, cap, "MyType, which names the type of a record without AdType, "
                                   "must be a type name, not %s (or give the type with --type T)",
                         !v                         ? "an expression"
                         : v->type == ADS_STRING    ? "an empty string"
                                                    : ads_vtype_name(v->type));
                return 1;
            }
            type = v->u.s;
        }
    }
    if (im->time_attr) {
        const ads_expr *x = ads_record_lookup(rec, im->time_attr, strlen(im->time_attr));
        ts = x ? ads_expr_literal_value(x) : NULL;
        if (!ts || ts->type == ADS_UNDEFINED) {
            snprintf(why, cap, "--time-attr %s: the record has no %s%s", im->time_attr,
                     im->time_attr,
                     !x   ? ""
                     : ts ? " (it is undefined)"
                          : " value (it is an expression)");
            return 1;
        }
        if (ts->type != ADS_INTEGER && ts->type != ADS_REAL && ts->type != ADS_ABSTIME &&
            ts->type != ADS_STRING) {
            snprintf(why, cap,
                     "--time-attr %s: %s is %s, not a time (seconds since 1970, an AbsTime or "
                     "ISO 8601 text)",
                     im->time_attr, im->time_attr, ads_vtype_name(ts->type));
            return 1;
        }
    }
    if (!set_type && !ts)
        return 0;
    return with_attrs(out, rec, set_type ? &type : NULL, ts, a, err);
}

/*
 * A record refused before it reached the bulk (line: its line). With
 * --keep-going it is listed and the import goes on (0); otherwise the
 * queued batch is dropped and the import stops (an exit status).
 */
static int refuse_record(imp *im, int line, const char *why)
{
    char at[PATH_MAX + 64];
    where(at, sizeof at, im->in, line);
    if (im->keep_going) {
        note_bad(im, "%s: %s", at, why);
        return 0;
    }
    stop_bar(im);
    fprintf(stderr, "%s: %s\n", at, why);
    ads_bulk_discard(im->bulk);
    im->npend = 0;
    im->loaded = im->committed;
    return EXIT_INPUT;
}

/* A dump's Attribute records are left out: the engine keeps its own. */
static bool is_attribute_record(const ads_record *rec)
{
    const ads_expr *x = ads_record_lookup(rec, "AdType", 6);
    const ads_value *v = x ? ads_expr_literal_value(x) : NULL;
    return v && v->type == ADS_STRING && v->u.s.len == 9 &&
           strncasecmp(v->u.s.p, "Attribute", 9) == 0;
}

static bool push_line(imp *im, uint64_t num, int line)
{
    if (im->npend == im->cappend) {
        size_t cap = im->cappend ? 2 * im->cappend : 1024;
        pending_line *p = realloc(im->pend, cap * sizeof *p);
        if (!p)
            return false;
        im->pend = p;
        im->cappend = cap;
    }
    im->pend[im->npend].num = num;
    im->pend[im->npend].line = line;
    im->npend++;
    return true;
}

static int mark_complete(ads_txn *txn, void *ctx, ads_error *err)
{
    imp *im = ctx;
    return progress_write(im, txn, im->consumed, im->base + im->committed, true, err);
}

/* Print a reader's error with its position. */
static void print_read_error(imp *im, const ads_error *err)
{
    stop_bar(im);
    if (err->line > 0 && err->column > 0)
        fprintf(stderr, "%s:%d:%d: %s\n", im->in->name, err->line, err->column, err->message);
    else if (err->line > 0)
        fprintf(stderr, "%s:%d: %s\n", im->in->name, err->line, err->message);
    else
        fprintf(stderr, "%s: %s\n", im->in->name, err->message);
}

/* Where to start in a file: its stored progress. 1 to skip the file, 0 to
 * read it (*skip set), or an exit status. */
static int resume_point(imp *im, input *in, const char *path, uint64_t *skip)
{
    file_progress p;
    ads_error err;
    int rc = progress_read(im->db, im->key, &p, &im->seen, &err);
    if (rc < 0) {
        fprintf(stderr, "%s: %s\n", in->name, err.message);
        return EXIT_INPUT;
    }
    if (rc == 0)
        return 0;
    stop_bar(im);
    if (same_file(&p, &in->st)) {
        if (p.complete) {
            fprintf(stderr, "%s: already imported (%llu records); skipped (--restart imports it "
                            "again)\n",
                    path, p.committed);
            im->files_skipped++;
            im->before_known = false;
            return -1;
        }
        *skip = p.consumed;
        im->base = p.committed;
        if (p.consumed)
            fprintf(stderr, "%s: resuming after input record %llu (%llu records loaded before)\n",
                    path, p.consumed, p.committed);
        if (p.sorted && p.seg_end >= p.consumed) {
            im->resume_sorted = true;
            im->resume_end = p.seg_end;
            im->resume_merged = p.merged;
            fprintf(stderr,
                    "%s: resuming the sorted load of input records %llu..%llu after the %llu "
                    "of its rows stored or refused before\n",
                    path, p.consumed + 1, p.seg_end, p.merged);
        }
        return 0;
    }
    if (!p.complete && p.sorted) {
        fprintf(stderr,
                "%s: the file has changed since a sorted import of it stopped part way (input "
                "records %llu..%llu were being stored in key order); use --restart to import "
                "it from the start\n",
                path, p.consumed + 1, p.seg_end);
        return EXIT_INPUT;
    }
    if (!p.complete) {
        fprintf(stderr,
                "%s: the file has changed since an import of it stopped after input record %llu; "
                "use --restart to import it from the start, or --skip N\n",
                path, p.consumed);
        return EXIT_INPUT;
    }
    return 0; /* imported before, but it is a new file now */
}

/*
 * Import one file. *skip_left: with --skip, input records still to pass over
 * (counted across the files). Returns 0, or an exit status after printing
 * why.
 */
/* ---- reading a file's records ---- */

/* A file being read, across records. */
typedef struct reading {
    input *in;
    ads_arena *a;  /* the current record's (reset for each) */
    uint64_t skip; /* input records to pass over */
    uint64_t end;  /* stop after this many input records (a sorted load resumed) */
    uint64_t good; /* input records before the first not dealt with (loaded or skipped) */
    bool eof;      /* the file is read to its end */
    bool partial;  /* --keep-going stopped reading before the end */
    bool hard;     /* a failure of memory or storage: nothing more is stored */
    ads_error last; /* the last read error (a reader that cannot go on repeats it) */
} reading;

/*
 * The next record to load: 1 with *rec (in r->a) and *line; 0 at the end of
 * the file or of r->end, when --keep-going stopped reading (r->partial), or
 * when the import stops (*status, the message printed).
 */
static int next_record(imp *im, reading *r, const ads_record **rec, int *line, int *status)
{
    input *in = r->in;
    ads_error err;
    for (;;) {
        if (im->consumed >= r->end)
            return 0;
        ads_arena_reset(r->a);
        int rc = input_next(in, rec, line, r->a, &err);
        if (rc == 0) {
            r->eof = true;
            return 0;
        }
        if (rc < 0) {
            /* a reader that cannot go on returns the same error again */
            ads_error *last = &r->last;
            bool again = last->code == err.code && last->line == err.line &&
                         last->column == err.column && strcmp(last->message, err.message) == 0;
            bool can_skip = im->keep_going && !again && rc != ADS_ENOMEM && rc != ADS_EIO &&
                            rc != ADS_EINVAL && (in->form == F_LONG || in->form == F_CLASSAD);
            if (again) {
                note_bad(im, "%s: the rest of the file cannot be read past the error above",
                         in->name);
                r->partial = true;
                return 0;
            }
            *last = err;
            if (can_skip) {
                im->consumed++;
                if (im->consumed > r->skip) {
                    char at[PATH_MAX + 64];
                    snprintf(at, sizeof at, "%s:%d:%d", in->name, err.line, err.column);
                    note_bad(im, "%s: %s", at, err.message);
                }
                continue;
            }
            if (im->keep_going && rc != ADS_ENOMEM && rc != ADS_EIO && rc != ADS_EINVAL) {
                /* listed; what was read before it is kept, and the file is not
                 * complete: a re-run stops at the same place */
                note_bad(im, "%s:%d:%d: %s (the rest of the file was not read)", in->name,
                         err.line, err.column, err.message);
                r->partial = true;
                return 0;
            }
            print_read_error(im, &err);
            ads_bulk_discard(im->bulk);
            im->npend = 0;
            im->loaded = im->committed;
            *status = EXIT_INPUT;
            return 0;
        }
        im->consumed++;
        if (im->consumed <= r->skip)
            continue;
        if (in->form == F_DUMP && is_attribute_record(*rec))
            continue;
        char why[ADS_ERROR_MESSAGE_MAX];
        rc = typed_and_dated(im, rec, *rec, why, sizeof why, r->a, &err);
        if (rc < 0) {
            *status = cli_fail_err(im->c, &err);
            r->hard = true;
            return 0;
        }
        if (rc == 0)
            return 1;
        if ((*status = refuse_record(im, *line, why)))
            return 0;
    }
}

/* Queue one record (or the row the stage gave last) in the bulk: 0, or an
 * exit status. */
static int queue(imp *im, const ads_record *rec, const ads_stage *st, int line)
{
    ads_error err;
    uint64_t num = ads_bulk_added(im->bulk);
    if (!push_line(im, num, line))
        return cli_fail(im->c, EXIT_INPUT, "out of memory");
    im->loaded++; /* counted before: a full batch commits inside ads_bulk_add */
    int rc = rec ? ads_bulk_add(im->bulk, rec, &err) : ads_bulk_add_staged(im->bulk, st, &err);
    if (ads_bulk_added(im->bulk) == num) {
        im->npend--; /* refused before it was queued */
        im->loaded--;
    }
    if (rc)
        return bulk_failed(im, rc, &err, line);
    after_commit(im);
    return 0;
}

/* The records as they come, batch by batch: 0, or an exit status. */
static int load_direct(imp *im, reading *r)
{
    const ads_record *rec;
    int line = 0, status = 0;
    while (next_record(im, r, &rec, &line, &status) == 1) {
        if ((status = queue(im, rec, NULL, line)))
            break;
        if (im->bar.tty && (im->consumed & 1023) == 0)
            progress_update_fraction(&im->bar, im->total_records + im->loaded,
                                     input_fraction(r->in));
    }
    return status;
}

/* The bytes a sorted load's run may hold: ADS_STAGE_RUN_BYTES, or (for the
 * tests, to spill many runs from small files) ADSTORE_TEST_RUN_BYTES. */
static size_t run_bytes(void)
{
    const char *v = getenv("ADSTORE_TEST_RUN_BYTES");
    uint64_t n = 0;
    if (v && cli_parse_u64(v, (uint64_t)1 << 40, &n))
        return (size_t)n;
    return 0;
}

/* Read the file's records into the stage, up to r->end: 0, or an exit
 * status (the message printed; r->hard when nothing more may be stored). */
static int stage_records(imp *im, reading *r, ads_stage *st)
{
    const ads_record *rec;
    int line = 0, status = 0;
    ads_error err;
    while (next_record(im, r, &rec, &line, &status) == 1) {
        int rc = ads_stage_add(st, rec, line, &err);
        if (rc == ADS_ENOMEM || rc == ADS_EIO) {
            r->hard = true;
            return cli_fail_err(im->c, &err);
        }
        if (rc && (status = refuse_record(im, line, err.message)))
            return status;
        r->good = im->consumed;
        if (im->bar.tty && (im->consumed & 1023) == 0)
            progress_update_fraction(&im->bar, im->total_records + im->loaded,
                                     input_fraction(r->in));
    }
    if (!status)
        r->good = im->consumed;
    return status;
}

/* The stage merged into the store in key order, from its row number
 * `merged` on (the rows before were stored or refused by an earlier run):
 * 0, or an exit status. */
static int merge_stage(imp *im, ads_stage *st, uint64_t merged)
{
    ads_error err;
    const void *row;
    size_t len;
    int64_t tag;
    int rc, status = 0;
    if ((rc = ads_stage_merge(st, &err)))
        return cli_fail_err(im->c, &err);
    im->sp.on = true;
    im->sp.merged = 0;
    while ((rc = ads_stage_next(&row, &len, &tag, st, &err)) == 1) {
        if (++im->sp.merged <= merged)
            continue;
        if ((status = queue(im, NULL, st, (int)tag)))
            break;
        if (im->bar.tty && (im->sp.merged & 1023) == 0)
            progress_update_fraction(&im->bar, im->total_records + im->loaded, -1);
    }
    if (rc < 0 && !status)
        status = cli_fail_err(im->c, &err);
    if (!status && (rc = ads_bulk_flush(im->bulk, &err)) != 0)
        status = bulk_failed(im, rc, &err, 0);
    if (!status)
        after_commit(im);
    if (status)
        im->merge_failed = true;
    else
        im->sp.on = false;
    return status;
}

/*
 * The records sorted by key (engine/stage.c) and then stored in key order:
 * the store is written front to back whatever the order of the file. A
 * record refused while reading stops the reading; what was read before it
 * is stored all the same, as a load batch by batch would have. A sorted
 * load resumed (im->resume_sorted) reads the same records again, skips the
 * rows its merge stored before and goes on with the rest of the file.
 */
static int load_sorted(imp *im, reading *r)
{
    uint64_t merged = 0;
    if (im->resume_sorted) {
        r->end = im->resume_end;
        merged = im->resume_merged;
    }
    for (;;) {
        ads_stage *st;
        ads_error err;
        /* the input records before this part are in the store (a resumed
         * or --skip import passes over them as it reads) */
        im->sp.from = im->consumed > r->skip ? im->consumed : r->skip;
        if (ads_stage_begin(&st, im->db, cli_db_dir(im->c), run_bytes(), &err))
            return cli_fail_err(im->c, &err);
        int status = stage_records(im, r, st);
        im->sp.end = r->good;
        int ms = r->hard ? 0 : merge_stage(im, st, merged);
        im->runs += ads_stage_runs(st);
        im->run_bytes += ads_stage_spilled_bytes(st);
        ads_stage_free(st);
        if (r->hard || ms)
            return r->hard ? status : ms;
        im->done_consumed = r->good;
        if (status || r->eof || r->partial)
            return status;
        r->end = UINT64_MAX; /* the resumed part is in: the rest of the file */
        merged = 0;
    }
}

/* --sync's last transaction: delete what the input lacked. */
typedef struct sync_run {
    ads_sync *sync;
    const char *type; /* --type: synced even when no record of it came */
    bool backfill;
    uint64_t deleted;
} sync_run;

static int sync_fn(ads_txn *txn, void *ctx, ads_error *err)
{
    sync_run *sr = ctx;
    const ads_type *t = NULL;
    int rc;
    if (sr->type && (rc = ads_txn_type(&t, txn, sr->type, strlen(sr->type), err)))
        return rc;
    /* backfill: the deletions are dated at the snapshot's time, its latest
     * record's _Timestamp; otherwise now, as the records stored were */
    double ts = sr->backfill ? ads_sync_latest(sr->sync) : NAN;
    return ads_sync_delete(sr->sync, txn, t, ts, &sr->deleted, err);
}

static int import_file(imp *im, const char *path, fmt forced, bool restart, uint64_t *skip_left,
                       bool explicit_skip)
{
    input in;
    ads_error err;
    int rc = input_open(&in, path, forced, &err);
    if (rc) {
        stop_bar(im);
        fprintf(stderr, "%s: %s\n", strcmp(path, "-") ? path : "<stdin>", err.message);
        return EXIT_INPUT;
    }
    im->in = &in;
    im->consumed = im->done_consumed = im->base = im->loaded = im->committed = 0;
    im->npend = 0;
    im->track = false;
    im->resume_sorted = im->merge_failed = false;
    memset(&im->sp, 0, sizeof im->sp);
    uint64_t skip = 0;
    char abs[PATH_MAX];
    if (in.is_file && realpath(path, abs)) {
        snprintf(im->key, sizeof im->key, "import:%s", abs);
        im->track = true;
    }
    im->seen.len = im->wrote.len = 0;
    im->raced = false;
    if (im->track && (explicit_skip || restart)) {
        /* the progress it replaces, for progress_write's check */
        file_progress ignored;
        if ((rc = progress_read(im->db, im->key, &ignored, &im->seen, &err)) < 0) {
            stop_bar(im);
            fprintf(stderr, "%s: %s\n", in.name, err.message);
            input_close(&in);
            im->in = NULL;
            return EXIT_INPUT;
        }
    }
    if (explicit_skip) {
        skip = *skip_left;
    } else if (im->track && !restart) {
        rc = resume_point(im, &in, path, &skip);
        if (rc) {
            input_close(&in);
            im->in = NULL;
            return rc < 0 ? 0 : rc;
        }
        im->done_consumed = skip; /* committed by earlier runs */
    }

    /* a dump's rows are whole rows: each replaces the row in effect */
    ads_bulk_options bo = im->bo;
    bo.replace = bo.replace || in.form == F_DUMP;
    ads_arena *a = ads_arena_new();
    if (!a || ads_bulk_begin(&im->bulk, im->db, &bo, &err)) {
        ads_arena_free(a);
        input_close(&in);
        return a ? cli_fail_err(im->c, &err) : cli_fail(im->c, EXIT_INPUT, "out of memory");
    }
    bool sorted = im->resume_sorted || im->sort > 0 ||
                  (im->sort == 0 && in.is_file &&
                   (uint64_t)in.st.st_size >= ADS_IMPORT_SORT_MIN_BYTES);
    reading rd = {&in, a, skip, UINT64_MAX, skip, false, false, false};
    memset(&rd.last, 0, sizeof rd.last);
    int status = sorted ? load_sorted(im, &rd) : load_direct(im, &rd);
    bool partial = rd.partial;
    ads_arena_free(a);
    if (!status) {
        /* the file's last batch, then its progress marked complete */
        if ((rc = ads_bulk_flush(im->bulk, &err)) != 0)
            status = bulk_failed(im, rc, &err, 0);
        if (!status)
            after_commit(im);
    }
    if (!status && !partial && im->track && (rc = ads_db_write(im->db, mark_complete, im, &err)))
        status = cli_fail_err(im->c, &err);
    im->total_unchanged += ads_bulk_unchanged(im->bulk);
    if ((rc = ads_bulk_end(im->bulk, &err)) && !status)
        status = cli_fail_err(im->c, &err); /* nothing is queued: the sync failed */
    im->bulk = NULL;
    if (explicit_skip)
        *skip_left = im->consumed < *skip_left ? *skip_left - im->consumed : 0;
    im->bytes += in.pk ? in.pk->total : 0; /* the bytes read (a pipe has no size) */
    im->total_records += im->committed;
    if (!sorted)
        im->unsorted += im->committed;
    if (status && im->raced) {
        stop_bar(im);
        fprintf(stderr, "%s: stopped. Run the same command again to go on after what the other "
                        "import loaded.\n",
                in.name);
    } else if (status && im->merge_failed) {
        /* a sorted load stores the file in key order: not a prefix of it */
        stop_bar(im);
        if (im->track && !explicit_skip)
            fprintf(stderr,
                    "%s: stopped; nothing of the failing batch was stored. The file was being "
                    "stored in key order: the batches before it are in the store. Run the same "
                    "command again to go on after them.\n",
                    in.name);
        else
            fprintf(stderr,
                    "%s: stopped; nothing of the failing batch was stored. The file was being "
                    "stored in key order: the batches before it are in the store.\n",
                    in.name);
    } else if (status && (!im->track || explicit_skip)) {
        /* no progress of this file is recorded (stdin, or --skip): --skip goes on */
        stop_bar(im);
        if (im->before_known)
            fprintf(stderr,
                    "%s: stopped; nothing of the failing batch was stored. Input records 1..%llu "
                    "of this file are in the store. To go on, run the command with --skip %llu.\n",
                    in.name, (unsigned long long)im->done_consumed,
                    (unsigned long long)(im->input_before + im->done_consumed));
        else
            fprintf(stderr,
                    "%s: stopped; nothing of the failing batch was stored. Input records 1..%llu "
                    "of this file are in the store.\n",
                    in.name, (unsigned long long)im->done_consumed);
    } else if (status) {
        stop_bar(im);
        if (im->done_consumed)
            fprintf(stderr,
                    "%s: stopped; nothing of the failing batch was stored. Input records 1..%llu "
                    "of this file are in the store. Run the same command again to go on (after "
                    "fixing the file, add --skip %llu).\n",
                    in.name, (unsigned long long)im->done_consumed,
                    (unsigned long long)im->done_consumed);
        else
            fprintf(stderr,
                    "%s: stopped; nothing of this file is in the store. Run the same command "
                    "again to go on (after fixing the file, if it was the file).\n",
                    in.name);
    } else {
        im->files_done++;
    }
    im->input_before += im->consumed;
    input_close(&in);
    im->in = NULL;
    return status;
}

/* After an import that stored most of the store's rows out of key order
 * batch by batch
 * (its pages part empty, or scattered over the file), a scan of the store
 * would read it page by page from all over the file: compact lays it out
 * afresh. A store another process has open is left as it is. */
static bool wants_compact(const imp *im, ads_db *db)
{
    /* a sorted load wrote in key order: only the rest may have scattered
     * (and sampling the layout would read the store's pages into memory) */
    if (im->unsorted < ADS_IMPORT_COMPACT_ROWS)
        return false;
    uint64_t added = im->total_records - im->total_unchanged;
    ads_db_info info;
    ads_db_layout lay;
    ads_error err;
    if (added < ADS_IMPORT_COMPACT_ROWS || ads_db_info_get(&info, db, &err) ||
        added < info.entries / 2 || ads_db_layout_get(&lay, db, &err))
        return false;
    return ads_table_layout_scattered(&lay.latest) || ads_table_layout_scattered(&lay.history);
}

static void compact_after(cli_ctx *c)
{
    ads_compact_result res;
    ads_error err;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (ads_db_compact(cli_db_dir(c), NULL, &res, &err)) {
        fprintf(stderr,
                "import: the store is whole as imported, but not compacted: %s (adstore "
                "compact lays it out afresh for faster scans)\n",
                err.message);
        return;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    char b[32], a[32];
    human_bytes(b, sizeof b, (double)res.bytes_before);
    human_bytes(a, sizeof a, (double)res.bytes_after);
    fprintf(stderr, "import: compacted (the records came out of key order): %s -> %s, %.2f s\n",
            b, a, (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
}

int cmd_import(cli_ctx *c, int argc, char **argv)
{
    char **ops = calloc((size_t)argc + 1, sizeof *ops);
    if (!ops)
        return cli_fail(c, EXIT_INPUT, "out of memory");
    cli_args args;
    const char *opt, *v;
    fmt forced = F_AUTO;
    uint64_t batch = 0, skip = 0;
    bool backfill = false, keep_going = false, restart = false, explicit_skip = false,
         replace = false, sync = false, no_compact = false;
    int sort = 0;
    const char *type = NULL, *time_attr = NULL;
    int rc = EXIT_OK;
    cli_args_init(&args, argc, argv, ops);
    while ((opt = cli_args_next(&args))) {
        if ((rc = cli_common_opt(&args, c, opt)) != 0) {
            if (rc < 0) {
                free(ops);
                return EXIT_USAGE;
            }
            rc = EXIT_OK;
        } else if (cli_is_opt(opt, "-h", "--help")) {
            free(ops);
            return cli_print_help("import");
        } else if (cli_is_opt(opt, "-f", "--format") || cli_is_opt(opt, NULL, "-format")) {
            /* -format F: execute's spelling, accepted alike by every command */
            if (!(v = strcmp(opt, "-format") == 0 ? cli_args_value(&args, c, "--format")
                      : strncmp(opt, "-format=", 8) == 0 ? opt + 8
                                                          : cli_args_value(&args, c, opt)))
                goto usage;
            forced = F_AUTO;
            for (int i = 1; i <= F_DUMP; i++)
                if (strcasecmp(v, fmt_names[i]) == 0)
                    forced = (fmt)i;
            if (forced == F_AUTO && strcasecmp(v, "auto") != 0) {
                rc = cli_fail(c, EXIT_USAGE,
                              "unknown format '%s'; expected long, classad, json, xml or dump", v);
                goto out;
            }
        } else if (cli_is_opt(opt, "-t", "--type")) {
            if (!(type = cli_args_value(&args, c, opt)))
                goto usage;
            if (!*type) {
                rc = cli_fail(c, EXIT_USAGE, "--type needs a type name");
                goto out;
            }
        } else if (cli_is_opt(opt, NULL, "--time-attr")) {
            if (!(time_attr = cli_args_value(&args, c, opt)))
                goto usage;
            if (!*time_attr) {
                rc = cli_fail(c, EXIT_USAGE, "--time-attr needs an attribute name");
                goto out;
            }
        } else if (cli_is_opt(opt, "-b", "--batch")) {
            if (!(v = cli_args_value(&args, c, opt)))
                goto usage;
            if (!cli_parse_u64(v, 10000000, &batch) || batch == 0) {
                rc = cli_fail(c, EXIT_USAGE, "--batch needs a number from 1 to 10000000, not '%s'",
                              v);
                goto out;
            }
        } else if (cli_is_opt(opt, NULL, "--skip")) {
            if (!(v = cli_args_value(&args, c, opt)))
                goto usage;
            if (!cli_parse_u64(v, UINT64_MAX, &skip)) {
                rc = cli_fail(c, EXIT_USAGE, "--skip needs a number of records, not '%s'", v);
                goto out;
            }
            explicit_skip = true;
        } else if (cli_is_opt(opt, NULL, "--backfill")) {
            backfill = true;
        } else if (cli_is_opt(opt, "-k", "--keep-going")) {
            keep_going = true;
        } else if (cli_is_opt(opt, NULL, "--restart")) {
            restart = true;
        } else if (cli_is_opt(opt, NULL, "--replace")) {
            replace = true;
        } else if (cli_is_opt(opt, NULL, "--sync")) {
            sync = true;
        } else if (cli_is_opt(opt, NULL, "--no-compact")) {
            no_compact = true;
        } else if (cli_is_opt(opt, NULL, "--sort")) {
            sort = 1;
        } else if (cli_is_opt(opt, NULL, "--no-sort")) {
            sort = -1;
        } else {
            rc = cli_fail(c, EXIT_USAGE, "unknown option '%s'", opt);
            goto out;
        }
    }
    if (args.nops == 0) {
        rc = cli_fail(c, EXIT_USAGE, "no FILE to import ('-' reads standard input)");
        goto out;
    }
    if (sync && explicit_skip) {
        rc = cli_fail(c, EXIT_USAGE, "--sync reads the whole input; it takes no --skip");
        goto out;
    }
    /* A sync must see every record of the snapshot, so it reads every file
     * from its start: a run after a killed one stores again what that run
     * stored, which is unchanged and appends nothing. */
    if (sync)
        restart = true;
    int nstdin = 0;
    for (int i = 0; i < args.nops; i++)
        nstdin += strcmp(args.ops[i], "-") == 0;
    if (nstdin > 1) {
        rc = cli_fail(c, EXIT_USAGE, "standard input ('-') can be read only once");
        goto out;
    }

    ads_error err;
    ads_db *db;
    if (ads_db_open(&db, cli_db_dir(c), ADS_DB_CREATE | ADS_DB_NOSYNC, &err)) {
        rc = cli_fail_err(c, &err);
        goto out;
    }
    imp im;
    memset(&im, 0, sizeof im);
    im.c = c;
    im.db = db;
    im.type = type;
    im.time_attr = time_attr;
    im.keep_going = keep_going;
    im.sort = sort;
    im.bads_tail = &im.bads;
    im.before_known = true;
    progress_init(&im.bar, "import");
    ads_bulk_options bo = {.batch = (size_t)batch, .backfill = backfill, .replace = replace,
                          .on_batch = on_batch, .ctx = &im};
    sync_run sr = {NULL, NULL, backfill, 0};
    if (sync && ads_sync_new(&sr.sync, &err)) {
        rc = cli_fail_err(c, &err);
        ads_db_close(db);
        goto out;
    }
    sr.type = type;
    bo.sync = sr.sync;
    im.bo = bo;
    for (int i = 0; i < args.nops && rc == EXIT_OK; i++)
        rc = import_file(&im, args.ops[i], forced, restart, &skip, explicit_skip);
    stop_bar(&im);
    /* The deletions come only once every record of the input is stored: a
     * sync stopped part way deletes nothing, and a bad record skipped may be
     * a record that is still there, so then nothing is deleted either. */
    if (sync && rc == EXIT_OK && im.total_bad == 0) {
        if (ads_db_write(db, sync_fn, &sr, &err) || ads_db_sync(db, &err))
            rc = cli_fail_err(c, &err);
    } else if (sync && rc == EXIT_OK) {
        fprintf(stderr, "import: --sync deletes nothing when bad records were skipped\n");
    }
    ads_sync_free(sr.sync);
    bool compact = rc == EXIT_OK && !no_compact && wants_compact(&im, db);
    ads_db_close(db);
    for (bad *b = im.bads; b;) {
        bad *next = b->next;
        fprintf(stderr, "skipped %s\n", b->text);
        free(b->text);
        free(b);
        b = next;
    }
    if (im.total_bad > im.nbads_listed)
        fprintf(stderr, "skipped %llu more bad records (not listed)\n",
                (unsigned long long)(im.total_bad - im.nbads_listed));
    free(im.pend);
    double secs = progress_elapsed(&im.bar);
    fprintf(stderr,
            "import: %llu record%s from %llu file%s%s, %llu bytes, %.2f s (%.0f records/s)",
            (unsigned long long)im.total_records, im.total_records == 1 ? "" : "s",
            (unsigned long long)im.files_done,
            im.files_done == 1 ? "" : "s", rc ? " (stopped)" : "", (unsigned long long)im.bytes,
            secs, secs > 0 ? (double)im.total_records / secs : 0.0);
    if (im.files_skipped)
        fprintf(stderr, ", %llu already imported", (unsigned long long)im.files_skipped);
    if (im.total_bad)
        fprintf(stderr, ", %llu bad record%s skipped", (unsigned long long)im.total_bad,
                im.total_bad == 1 ? "" : "s");
    if (im.total_unchanged)
        fprintf(stderr, ", %llu unchanged", (unsigned long long)im.total_unchanged);
    if (sync)
        fprintf(stderr, ", %llu deleted", (unsigned long long)sr.deleted);
    if (im.runs) {
        char tb[32];
        human_bytes(tb, sizeof tb, (double)im.run_bytes);
        fprintf(stderr, ", sorted through %llu temporary run%s (%s)", (unsigned long long)im.runs,
                im.runs == 1 ? "" : "s", tb);
    }
    fputc('\n', stderr);
    if (compact)
        compact_after(c);
    /* -k: the import finished, but the input is not all in the store */
    if (rc == EXIT_OK && im.total_bad)
        rc = EXIT_SALVAGED;
out:
    free(ops);
    return rc;
usage:
    free(ops);
    return EXIT_USAGE;
}
