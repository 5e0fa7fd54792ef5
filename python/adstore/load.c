/*
 * python/adstore/load.c: Store.import_file, Store.dump and Store.verify:
 * the whole-file and whole-store calls. Each runs from start to end with
 * the GIL released (no Python object is touched meanwhile).
 *
 * import_file reads a file with the streaming reader of its format (named,
 * else by the file name's extension, else by the first bytes, as `adstore
 * import` chooses) and stores its records through a bulk load; a dump's rows
 * are whole rows, so they replace the row in effect at their date.
 */
#include "_adstore.h"

#include <errno.h>
#include <string.h>
#include <strings.h>

#include <adstore/formats.h>

typedef enum { F_NONE, F_LONG, F_CLASSAD, F_JSON, F_XML, F_DUMP } form;

static const char *form_names[] = {"", "long", "classad", "json", "xml", "dump"};

static form form_by_name(const char *name)
{
    for (int f = F_LONG; f <= F_DUMP; f++)
        if (!strcmp(name, form_names[f]))
            return (form)f;
    return F_NONE;
}

static form form_by_extension(const char *path)
{
    const char *dot = strrchr(path, '.');
    if (!dot || strchr(dot, '/'))
        return F_NONE;
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
    return F_NONE;
}

static bool space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* What the first n bytes of a file look like (docs/tools.md, import). */
static form form_by_content(const char *s, size_t n)
{
    size_t i = 0;
    if (n >= 3 && !memcmp(s, "\xef\xbb\xbf", 3))
        i = 3;
    if (n > 0 && ((unsigned char)s[0] & 0xf0) == 0x80 && memmem(s, n < 64 ? n : 64, "adstore-dump", 12))
        return F_DUMP;
    while (i < n && space(s[i]))
        i++;
    if (i == n)
        return F_LONG;
    char c = s[i];
    size_t j = i + 1;
    while (j < n && space(s[j]))
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
    return c == '/' ? F_CLASSAD : F_LONG;
}

/* One reader over the formats' streaming readers. */
typedef struct {
    form f;
    void *r;
} reader;

static int reader_open(reader *rd, FILE *f, ads_error *err)
{
    switch (rd->f) {
    case F_LONG: return ads_long_reader_new_file((ads_long_reader **)&rd->r, f, err);
    case F_CLASSAD: return ads_classad_reader_new_file((ads_classad_reader **)&rd->r, f, err);
    case F_JSON: return ads_json_reader_new_file((ads_json_reader **)&rd->r, f, err);
    case F_XML: return ads_xml_reader_new_file((ads_xml_reader **)&rd->r, f, err);
    case F_DUMP: return ads_dump_reader_new((ads_dump_reader **)&rd->r, f, err);
    default: return ads_error_set(err, ADS_EINVAL, "no format");
    }
}

static int reader_next(reader *rd, const ads_record **out, ads_arena *a, ads_error *err)
{
    int line;
    switch (rd->f) {
    case F_LONG: return ads_long_reader_next(out, &line, rd->r, a, err);
    case F_CLASSAD: return ads_classad_reader_next(out, &line, rd->r, a, err);
    case F_JSON: return ads_json_reader_next(out, &line, rd->r, a, err);
    case F_XML: return ads_xml_reader_next(out, &line, rd->r, a, err);
    case F_DUMP: return ads_dump_reader_next(out, rd->r, a, err);
    default: return ads_error_set(err, ADS_EINVAL, "no format");
    }
}

static void reader_free(reader *rd)
{
    switch (rd->f) {
    case F_LONG: ads_long_reader_free(rd->r); break;
    case F_CLASSAD: ads_classad_reader_free(rd->r); break;
    case F_JSON: ads_json_reader_free(rd->r); break;
    case F_XML: ads_xml_reader_free(rd->r); break;
    case F_DUMP: ads_dump_reader_free(rd->r); break;
    default: break;
    }
}

/* Guess the format from the first bytes, then go back to the start. */
static int sniff(form *out, FILE *f, const char *path, ads_error *err)
{
    char head[4096];
    size_t n = fread(head, 1, sizeof head, f);
    if (ferror(f) || fseek(f, 0, SEEK_SET) != 0)
        return ads_error_set(err, ADS_EIO, "%s: cannot read its start to tell its format "
                             "(give format=): %s", path, strerror(errno));
    *out = form_by_content(head, n);
    return 0;
}

typedef struct {
    const char *path;
    form f;
    ads_bulk_options opt;
    uint64_t stored;
} import_job;

static int import_run(ads_db *db, import_job *job, ads_error *err)
{
    FILE *f = fopen(job->path, "rb");
    if (!f)
        return ads_error_set(err, ADS_EIO, "%s: %s", job->path, strerror(errno));
    reader rd = {job->f, NULL};
    ads_bulk *b = NULL;
    ads_arena *a = ads_arena_new();
    int rc = a ? 0 : ads_error_set(err, ADS_ENOMEM, "out of memory");
    if (rc == 0 && rd.f == F_NONE)
        rc = sniff(&rd.f, f, job->path, err);
    if (rc == 0)
        job->opt.replace = job->opt.replace || rd.f == F_DUMP;
    if (rc == 0)
        rc = reader_open(&rd, f, err);
    if (rc == 0)
        rc = ads_bulk_begin(&b, db, &job->opt, err);
    const ads_record *rec;
    while (rc == 0 && (rc = reader_next(&rd, &rec, a, err)) == 1) {
        rc = ads_bulk_add(b, rec, err);
        ads_arena_reset(a);
    }
    if (b) {
        if (rc < 0)
            ads_bulk_discard(b);
        else
            rc = ads_bulk_flush(b, err);
        job->stored = ads_bulk_committed(b);
        int end = ads_bulk_end(b, rc < 0 ? NULL : err);
        if (rc == 0)
            rc = end;
    }
    if (rd.r)
        reader_free(&rd);
    ads_arena_free(a);
    fclose(f);
    return rc;
}

PyObject *adspy_store_import_file(adspy_Store *s, PyObject *args, PyObject *kw)
{
    static char *names[] = {"path", "format", "backfill", "batch", NULL};
    PyObject *path;
    const char *format = NULL;
    int backfill = 0;
    Py_ssize_t batch = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O&|z$pn:import_file", names,
                                     PyUnicode_FSConverter, &path, &format, &backfill, &batch))
        return NULL;
    import_job job = {.path = PyBytes_AS_STRING(path),
                      .opt = {.batch = batch > 0 ? (size_t)batch : 0, .backfill = backfill != 0}};
    PyObject *out = NULL;
    job.f = format ? form_by_name(format) : form_by_extension(job.path);
    if (format && job.f == F_NONE) {
        adspy_raise_code(ADS_EINVAL, "unknown format '%s'; expected long, classad, json, xml or "
                         "dump", format);
    } else if (batch < 0) {
        adspy_raise_code(ADS_EINVAL, "batch = %zd: give a positive size (0: 10000)", batch);
    } else if (adspy_store_check(s, true) == 0) {
        ads_error err;
        int rc;
        s->active++;
        Py_BEGIN_ALLOW_THREADS
        rc = import_run(s->db, &job, &err);
        Py_END_ALLOW_THREADS
        s->active--;
        out = rc < 0 ? adspy_raise(&err) : PyLong_FromUnsignedLongLong(job.stored);
    }
    Py_DECREF(path);
    return out;
}

/* ---- dump -------------------------------------------------------------- */

static int dump_run(ads_db *db, const char *path, const ads_dump_options *opt,
                    ads_dump_result *res, ads_error *err)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return ads_error_set(err, ADS_EIO, "%s: %s", path, strerror(errno));
    int rc = ads_db_dump(db, f, opt, res, err);
    if (fclose(f) != 0 && rc == 0)
        rc = ads_error_set(err, ADS_EIO, "%s: %s", path, strerror(errno));
    return rc;
}

static int type_names(const char ***out, size_t *n, ads_arena *a, PyObject *types)
{
    *out = NULL;
    *n = 0;
    if (types == Py_None)
        return 0;
    if (PyUnicode_Check(types)) {
        PyErr_SetString(PyExc_TypeError, "types is a list of type names, not one str");
        return -1;
    }
    PyObject *seq = PySequence_Fast(types, "types must be a list of type names");
    if (!seq)
        return -1;
    *n = (size_t)PySequence_Fast_GET_SIZE(seq);
    *out = ads_arena_alloc(a, (*n ? *n : 1) * sizeof **out);
    int rc = *out ? 0 : (PyErr_NoMemory(), -1);
    for (size_t i = 0; rc == 0 && i < *n; i++) {
        ads_str s;
        rc = adspy_utf8(&s, a, PySequence_Fast_GET_ITEM(seq, (Py_ssize_t)i), "a type name");
        if (rc == 0)
            (*out)[i] = s.p;
    }
    Py_DECREF(seq);
    return rc;
}

PyObject *adspy_store_dump(adspy_Store *s, PyObject *args, PyObject *kw)
{
    static char *names[] = {"path", "format", "types", NULL};
    PyObject *path, *types = Py_None;
    const char *format = "msgpack";
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O&|s$O:dump", names, PyUnicode_FSConverter,
                                     &path, &format, &types))
        return NULL;
    ads_arena *a = ads_arena_new();
    PyObject *out = NULL;
    ads_dump_options opt = {0};
    if (!a) {
        PyErr_NoMemory();
    } else if (strcmp(format, "msgpack") && strcmp(format, "text")) {
        adspy_raise_code(ADS_EINVAL, "unknown dump format '%s'; expected msgpack or text", format);
    } else if (type_names((const char ***)&opt.types, &opt.ntypes, a, types) == 0 &&
               adspy_store_check(s, false) == 0) {
        opt.format = strcmp(format, "text") ? ADS_DUMP_MSGPACK : ADS_DUMP_TEXT;
        ads_dump_result res = {0};
        ads_error err;
        int rc;
        const char *p = PyBytes_AS_STRING(path);
        s->active++;
        Py_BEGIN_ALLOW_THREADS
        rc = dump_run(s->db, p, &opt, &res, &err);
        Py_END_ALLOW_THREADS
        s->active--;
        out = rc < 0 ? adspy_raise(&err)
                     : Py_BuildValue("{s:K,s:K,s:K}", "rows", (unsigned long long)res.rows, "meta",
                                     (unsigned long long)res.meta, "bytes",
                                     (unsigned long long)res.bytes);
    }
    ads_arena_free(a);
    Py_DECREF(path);
    return out;
}

/* ---- verify ------------------------------------------------------------ */

typedef struct {
    char **msgs;
    size_t n;
    bool nomem;
} problems;

static void note_problem(void *ctx, const char *problem)
{
    problems *p = ctx;
    if (p->n >= ADS_PY_VERIFY_MESSAGES_MAX || p->nomem)
        return;
    char **grown = realloc(p->msgs, (p->n + 1) * sizeof *grown);
    char *copy = grown ? strdup(problem) : NULL;
    if (grown)
        p->msgs = grown;
    if (!copy) {
        p->nomem = true;
        return;
    }
    p->msgs[p->n++] = copy;
}

static PyObject *problems_list(problems *p)
{
    PyObject *list = PyList_New(0);
    for (size_t i = 0; list && i < p->n; i++) {
        PyObject *s = PyUnicode_DecodeUTF8(p->msgs[i], (Py_ssize_t)strlen(p->msgs[i]), "replace");
        if (!s || PyList_Append(list, s) < 0)
            Py_CLEAR(list);
        Py_XDECREF(s);
    }
    return list;
}

PyObject *adspy_store_verify(adspy_Store *s, PyObject *unused)
{
    (void)unused;
    if (adspy_store_check(s, false) < 0)
        return NULL;
    problems p = {NULL, 0, false};
    ads_verify_result res = {0};
    ads_error err;
    int rc;
    s->active++;
    Py_BEGIN_ALLOW_THREADS
    rc = ads_db_verify(&res, s->db, note_problem, &p, &err);
    Py_END_ALLOW_THREADS
    s->active--;
    PyObject *out = NULL;
    if (rc < 0) {
        adspy_raise(&err);
    } else {
        PyObject *msgs = problems_list(&p);
        if (msgs)
            out = Py_BuildValue("{s:K,s:K,s:K,s:N}", "records", (unsigned long long)res.records,
                                "rows", (unsigned long long)res.rows, "problems",
                                (unsigned long long)res.problems, "messages", msgs);
    }
    for (size_t i = 0; i < p.n; i++)
        free(p.msgs[i]);
    free(p.msgs);
    return out;
}
