/*
 * python/adstore/store.c: adstore.Store (one open store: ads_db) and
 * adstore.Transaction (ads_txn, used as a context manager).
 *
 * Threads: a Store may be used from several threads at once; each call runs
 * in its own transaction (or the Transaction given), and every call that may
 * wait or work for long (opening, beginning a write transaction, storing,
 * reading, committing) releases the GIL. A Transaction belongs to the thread
 * that began it (LMDB's write lock is that thread's): using it from another
 * thread raises BusyError. While a thread holds a write Transaction, a write
 * of the Store's own from that thread would wait for itself forever, so it
 * raises BusyError instead; other threads' writes wait their turn.
 */
#include "_adstore.h"

#include <string.h>

typedef struct {
    PyObject_HEAD
    adspy_Store *store;
    ads_txn *txn;          /* NULL once committed or aborted */
    unsigned long thread;  /* the thread that began it */
    bool readonly;
} adspy_Txn;

/* ---- helpers shared by Store and Transaction --------------------------- */

int adspy_store_check(adspy_Store *s, bool write)
{
    if (!s->db) {
        adspy_raise_code(ADS_EINVAL, "the store is closed");
        return -1;
    }
    if (write && s->readonly) {
        adspy_raise_code(ADS_EREADONLY, "the store was opened read-only");
        return -1;
    }
    if (write && s->writer == PyThread_get_thread_ident()) {
        adspy_raise_code(ADS_EBUSY, "this thread holds an open write transaction: write "
                                    "through it, or end it first");
        return -1;
    }
    return 0;
}

static int txn_begin(ads_txn **out, adspy_Store *s, bool readonly)
{
    if (adspy_store_check(s, !readonly) < 0)
        return -1;
    ads_error err;
    int rc;
    s->active++; /* close() must wait while the GIL is released */
    Py_BEGIN_ALLOW_THREADS
    rc = ads_txn_begin(out, s->db, readonly ? ADS_TXN_READONLY : 0, &err);
    Py_END_ALLOW_THREADS
    if (rc < 0) {
        s->active--;
        adspy_raise(&err);
        return -1;
    }
    return 0;
}

static int txn_commit(adspy_Store *s, ads_txn *txn)
{
    ads_error err;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = ads_txn_commit(txn, &err);
    Py_END_ALLOW_THREADS
    s->active--;
    if (rc < 0) {
        adspy_raise(&err);
        return -1;
    }
    return 0;
}

static void txn_abort(adspy_Store *s, ads_txn *txn)
{
    Py_BEGIN_ALLOW_THREADS
    ads_txn_abort(txn);
    Py_END_ALLOW_THREADS
    s->active--;
}

/* The key values of a record of a type with nkeys key attributes: one value,
 * or a tuple or list of them. */
static int keys_from_py(ads_value **out, size_t *n, adspy_conv *c, PyObject *key)
{
    bool many = PyTuple_Check(key);
    PyObject *seq = many ? Py_NewRef(key) : PyTuple_Pack(1, key);
    if (!seq)
        return -1;
    *n = (size_t)PyTuple_GET_SIZE(seq);
    *out = ads_arena_alloc(c->a, *n * sizeof **out);
    int rc = *out ? 0 : (PyErr_NoMemory(), -1);
    for (size_t i = 0; rc == 0 && i < *n; i++)
        rc = adspy_value_from_py(&(*out)[i], c, PyTuple_GET_ITEM(seq, (Py_ssize_t)i));
    Py_DECREF(seq);
    return rc;
}

typedef struct {
    const char *type;
    size_t type_len;
    ads_value *keys;
    size_t nkeys;
} lookup;

static int lookup_from_py(lookup *l, adspy_conv *c, PyObject *type, PyObject *key)
{
    ads_str t;
    if (adspy_utf8(&t, c->a, type, "the type") < 0)
        return -1;
    l->type = t.p;
    l->type_len = t.len;
    return keys_from_py(&l->keys, &l->nkeys, c, key);
}

/* The latest row of the record l names: 1 and *row, 0 if none, or a code. */
static int find_row(ads_txn *txn, ads_row *row, const lookup *l, ads_arena *a, ads_error *err)
{
    const ads_type *t;
    int rc = ads_txn_type(&t, txn, l->type, l->type_len, err);
    if (rc < 0)
        return rc;
    if (l->nkeys != ads_type_key_count(t))
        return ads_error_set(err, ADS_EINVAL, "type %s has %zu key attributes; %zu key values "
                             "given (several go in a tuple)", ads_type_name(t),
                             ads_type_key_count(t), l->nkeys);
    return ads_txn_get(txn, row, t, l->keys, l->nkeys, a, err);
}

enum { GET_DELETED = 1, GET_TIMELINE = 2 };

static PyObject *get_in(ads_txn *txn, PyObject *type, PyObject *key, unsigned flags)
{
    adspy_conv c = {ads_arena_new(), 0};
    if (!c.a)
        return PyErr_NoMemory();
    lookup l;
    PyObject *out = NULL;
    if (lookup_from_py(&l, &c, type, key) == 0) {
        ads_error err;
        ads_row row;
        const ads_record *rec = NULL;
        int rc;
        Py_BEGIN_ALLOW_THREADS
        rc = find_row(txn, &row, &l, c.a, &err);
        if (rc == 1 && row.deleted && !(flags & GET_DELETED))
            rc = 0;
        if (rc == 1)
            rc = ads_row_record(&rec, &row, (flags & GET_TIMELINE) ? ADS_ROW_TIMELINE : 0, c.a,
                                &err);
        Py_END_ALLOW_THREADS
        out = rc < 0 ? adspy_raise(&err) : rec ? adspy_record_to_py(rec) : Py_NewRef(Py_None);
    }
    ads_arena_free(c.a);
    return out;
}

/* Every row of the record, oldest first, each with its timeline attributes. */
static int history_rows(ads_txn *txn, const lookup *l, PyObject *list, ads_arena *a,
                        ads_error *err)
{
    ads_row row;
    int rc = find_row(txn, &row, l, a, err);
    if (rc <= 0)
        return rc;
    ads_scan *scan;
    rc = ads_history_open(&scan, txn, &row, NULL, ADS_SCAN_DELETED, err);
    if (rc < 0)
        return rc;
    ads_row *r;
    while ((rc = ads_scan_next(&r, scan, err)) == 1) {
        const ads_record *rec;
        ads_arena *ra = ads_arena_new();
        if (!ra) {
            rc = ads_error_set(err, ADS_ENOMEM, "out of memory reading history");
            break;
        }
        rc = ads_row_record(&rec, r, ADS_ROW_TIMELINE, ra, err);
        if (rc == 0) {
            PyGILState_STATE g = PyGILState_Ensure();
            PyObject *o = adspy_record_to_py(rec);
            rc = (o && PyList_Append(list, o) == 0) ? 0 : ADS_ENOMEM;
            Py_XDECREF(o);
            PyGILState_Release(g);
        }
        ads_arena_free(ra);
        if (rc < 0)
            break;
    }
    ads_scan_close(scan);
    return rc;
}

static PyObject *history_in(ads_txn *txn, PyObject *type, PyObject *key)
{
    adspy_conv c = {ads_arena_new(), 0};
    if (!c.a)
        return PyErr_NoMemory();
    lookup l;
    PyObject *list = PyList_New(0);
    if (list && lookup_from_py(&l, &c, type, key) == 0) {
        ads_error err;
        ads_error_clear(&err);
        int rc;
        Py_BEGIN_ALLOW_THREADS
        rc = history_rows(txn, &l, list, c.a, &err);
        Py_END_ALLOW_THREADS
        if (rc < 0) {
            if (!PyErr_Occurred())
                adspy_raise(&err);
            Py_CLEAR(list);
        }
    } else {
        Py_CLEAR(list);
    }
    ads_arena_free(c.a);
    return list;
}

static int parse_get_args(PyObject *args, PyObject *kw, PyObject **type, PyObject **key,
                          unsigned *flags)
{
    static char *names[] = {"type", "key", "deleted", "timeline", NULL};
    int deleted = 0, timeline = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO|$pp:get", names, type, key, &deleted,
                                     &timeline))
        return -1;
    *flags = (deleted ? GET_DELETED : 0) | (timeline ? GET_TIMELINE : 0);
    return 0;
}

static int id_kind_parse(ads_id_kind *out, const char *kind)
{
    static const char *names[] = {"ordered", "random", "increment"};
    for (int i = 0; i < 3; i++)
        if (!strcmp(kind, names[i])) {
            *out = (ads_id_kind)i;
            return 0;
        }
    adspy_raise_code(ADS_EINVAL, "unknown id kind '%s'; expected ordered, random or increment",
                     kind);
    return -1;
}

static PyObject *ids_in(ads_txn *txn, const char *kind, Py_ssize_t n)
{
    ads_id_kind k;
    if (id_kind_parse(&k, kind) < 0)
        return NULL;
    if (n < 1 || n > 1000000)
        return adspy_raise_code(ADS_EINVAL, "n = %zd ids: ask for 1 to 1000000", n);
    ads_id *ids = PyMem_Malloc((size_t)n * sizeof *ids);
    if (!ids)
        return PyErr_NoMemory();
    ads_error err;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = ads_txn_new_ids(ids, (size_t)n, NULL, txn, k, &err);
    Py_END_ALLOW_THREADS
    PyObject *list = rc < 0 ? adspy_raise(&err) : PyList_New(n);
    for (Py_ssize_t i = 0; list && i < n; i++) {
        PyObject *o = adspy_id_new(ids[i]);
        if (!o) {
            Py_CLEAR(list);
            break;
        }
        PyList_SET_ITEM(list, i, o);
    }
    PyMem_Free(ids);
    return list;
}

/* "O&" converter of a FLUID generator number: an int that fits unsigned
 * long, else OverflowError or TypeError ("k" would take it modulo 2^64, so
 * 2**64 + 5 became generator 5). */
static int generator_arg(PyObject *o, void *out)
{
    if (!PyLong_Check(o)) {
        PyErr_Format(PyExc_TypeError, "generator must be an int, not %.80s", Py_TYPE(o)->tp_name);
        return 0;
    }
    unsigned long g = PyLong_AsUnsignedLong(o);
    if (g == (unsigned long)-1 && PyErr_Occurred())
        return 0;
    *(unsigned long *)out = g;
    return 1;
}

static PyObject *fluids_in(ads_txn *txn, unsigned long generator, Py_ssize_t n)
{
    if (n < 1 || n > 1000000)
        return adspy_raise_code(ADS_EINVAL, "n = %zd FLUIDs: ask for 1 to 1000000", n);
    if (generator > ADS_FLUID_GENERATOR_MAX)
        return adspy_raise_code(ADS_ERANGE, "FLUID generator %lu is over %u", generator,
                                ADS_FLUID_GENERATOR_MAX);
    uint64_t *v = PyMem_Malloc((size_t)n * sizeof *v);
    if (!v)
        return PyErr_NoMemory();
    ads_error err;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = ads_txn_new_fluids(v, (size_t)n, txn, (uint32_t)generator, &err);
    Py_END_ALLOW_THREADS
    PyObject *list = rc < 0 ? adspy_raise(&err) : PyList_New(n);
    for (Py_ssize_t i = 0; list && i < n; i++) {
        PyObject *o = PyLong_FromUnsignedLongLong(v[i]);
        if (!o) {
            Py_CLEAR(list);
            break;
        }
        PyList_SET_ITEM(list, i, o);
    }
    PyMem_Free(v);
    return list;
}

static PyObject *next_value_in(ads_txn *txn, PyObject *name)
{
    ads_arena *a = ads_arena_new();
    if (!a)
        return PyErr_NoMemory();
    ads_str s;
    PyObject *out = NULL;
    if (adspy_utf8(&s, a, name, "the sequence name") == 0) {
        ads_value v;
        ads_error err;
        int rc;
        Py_BEGIN_ALLOW_THREADS
        rc = ads_txn_next_value(&v, txn, s.p, s.len, a, &err);
        Py_END_ALLOW_THREADS
        out = rc < 0 ? adspy_raise(&err) : adspy_value_to_py(&v);
    }
    ads_arena_free(a);
    return out;
}

/* Run fn(txn, ...) in a transaction of the store's own and commit it (or
 * abort it when fn raised). */
typedef PyObject *(*in_txn_fn)(ads_txn *txn, void *ctx);

static PyObject *in_own_txn(adspy_Store *s, bool readonly, in_txn_fn fn, void *ctx)
{
    ads_txn *txn;
    if (txn_begin(&txn, s, readonly) < 0)
        return NULL;
    PyObject *r = fn(txn, ctx);
    if (!r || readonly) {
        txn_abort(s, txn);
        return r;
    }
    if (txn_commit(s, txn) < 0)
        Py_CLEAR(r);
    return r;
}

typedef struct {
    PyObject *type, *key, *name;
    unsigned flags;
    const char *kind;
    Py_ssize_t n;
    unsigned long generator;
} call_args;

static PyObject *do_get(ads_txn *txn, void *ctx)
{
    call_args *a = ctx;
    return get_in(txn, a->type, a->key, a->flags);
}

static PyObject *do_history(ads_txn *txn, void *ctx)
{
    call_args *a = ctx;
    return history_in(txn, a->type, a->key);
}

static PyObject *do_ids(ads_txn *txn, void *ctx)
{
    call_args *a = ctx;
    return ids_in(txn, a->kind, a->n);
}

static PyObject *do_fluids(ads_txn *txn, void *ctx)
{
    call_args *a = ctx;
    return fluids_in(txn, a->generator, a->n);
}

static PyObject *do_next_value(ads_txn *txn, void *ctx)
{
    call_args *a = ctx;
    return next_value_in(txn, a->name);
}

/* ---- Store methods ----------------------------------------------------- */

static PyObject *store_get(PyObject *self, PyObject *args, PyObject *kw)
{
    call_args a = {0};
    if (parse_get_args(args, kw, &a.type, &a.key, &a.flags) < 0)
        return NULL;
    return in_own_txn((adspy_Store *)self, true, do_get, &a);
}

static PyObject *store_history(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *names[] = {"type", "key", NULL};
    call_args a = {0};
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO:history", names, &a.type, &a.key))
        return NULL;
    return in_own_txn((adspy_Store *)self, true, do_history, &a);
}

static PyObject *store_new_ids(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *names[] = {"kind", "n", NULL};
    call_args a = {.kind = "ordered", .n = 1};
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|sn:new_ids", names, &a.kind, &a.n))
        return NULL;
    return in_own_txn((adspy_Store *)self, false, do_ids, &a);
}

static PyObject *store_new_fluids(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *names[] = {"generator", "n", NULL};
    call_args a = {.n = 1};
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|O&n:new_fluids", names, generator_arg,
                                     &a.generator, &a.n))
        return NULL;
    return in_own_txn((adspy_Store *)self, false, do_fluids, &a);
}

static PyObject *store_next_value(PyObject *self, PyObject *name)
{
    call_args a = {.name = name};
    return in_own_txn((adspy_Store *)self, false, do_next_value, &a);
}

/* store(records): a bulk load, committed every `batch` records. */
static int bulk_one(ads_bulk *b, adspy_conv *c, PyObject *o, ads_error *err)
{
    ads_arena_reset(c->a);
    const ads_record *rec;
    if (adspy_record_from_py(&rec, c, o) < 0)
        return -1;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = ads_bulk_add(b, rec, err);
    Py_END_ALLOW_THREADS
    if (rc < 0) {
        adspy_raise(err);
        return -1;
    }
    return 0;
}

static int bulk_all(ads_bulk *b, adspy_conv *c, PyObject *records, ads_error *err)
{
    /* one record: a Record, a dict, or any other mapping (it has keys());
     * anything else is an iterable of records */
    if (PyObject_TypeCheck(records, &adspy_RecordType) || PyDict_Check(records) ||
        PyObject_HasAttrString(records, "keys"))
        return bulk_one(b, c, records, err);
    PyObject *it = PyObject_GetIter(records);
    if (!it)
        return -1;
    PyObject *o;
    int rc = 0;
    while (rc == 0 && (o = PyIter_Next(it))) {
        rc = bulk_one(b, c, o, err);
        Py_DECREF(o);
    }
    Py_DECREF(it);
    return rc < 0 || PyErr_Occurred() ? -1 : 0;
}

static PyObject *store_store(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *names[] = {"records", "batch", "backfill", NULL};
    adspy_Store *s = (adspy_Store *)self;
    PyObject *records;
    Py_ssize_t batch = 0;
    int backfill = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|$np:store", names, &records, &batch, &backfill))
        return NULL;
    if (batch < 0)
        return adspy_raise_code(ADS_EINVAL, "batch = %zd: give a positive size (0: 10000)",
                                batch);
    if (adspy_store_check(s, true) < 0)
        return NULL;
    ads_bulk_options opt = {.batch = (size_t)batch, .backfill = backfill != 0};
    ads_error err;
    ads_bulk *b;
    if (ads_bulk_begin(&b, s->db, &opt, &err) < 0)
        return adspy_raise(&err);
    adspy_conv c = {ads_arena_new(), 0};
    if (!c.a) {
        ads_bulk_end(b, NULL);
        return PyErr_NoMemory();
    }
    s->active++;
    int rc = bulk_all(b, &c, records, &err);
    if (rc < 0)
        ads_bulk_discard(b);
    uint64_t stored = 0;
    Py_BEGIN_ALLOW_THREADS
    int end = ads_bulk_flush(b, rc < 0 ? NULL : &err);
    stored = ads_bulk_committed(b);
    if (end == 0)
        end = ads_bulk_end(b, rc < 0 ? NULL : &err);
    else
        ads_bulk_end(b, NULL);
    if (rc == 0)
        rc = end;
    Py_END_ALLOW_THREADS
    s->active--;
    ads_arena_free(c.a);
    if (rc < 0)
        return PyErr_Occurred() ? NULL : adspy_raise(&err);
    return PyLong_FromUnsignedLongLong(stored);
}

static PyObject *store_transaction(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *names[] = {"readonly", NULL};
    int readonly = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|$p:transaction", names, &readonly))
        return NULL;
    adspy_Store *s = (adspy_Store *)self;
    adspy_Txn *t = PyObject_New(adspy_Txn, &adspy_TransactionType);
    if (!t)
        return NULL;
    t->store = (adspy_Store *)Py_NewRef(self);
    t->txn = NULL;
    t->readonly = readonly != 0;
    t->thread = PyThread_get_thread_ident();
    if (txn_begin(&t->txn, s, t->readonly) < 0) {
        Py_DECREF(t);
        return NULL;
    }
    if (!t->readonly)
        s->writer = t->thread;
    return (PyObject *)t;
}

static PyObject *store_close(PyObject *self, PyObject *unused)
{
    (void)unused;
    adspy_Store *s = (adspy_Store *)self;
    if (s->active > 0)
        return adspy_raise_code(ADS_EBUSY, "the store has %zd open transactions or cursors: "
                                           "end them before closing it", s->active);
    ads_db *db = s->db;
    s->db = NULL;
    Py_BEGIN_ALLOW_THREADS
    ads_db_close(db);
    Py_END_ALLOW_THREADS
    Py_RETURN_NONE;
}

static PyObject *store_enter(PyObject *self, PyObject *unused)
{
    (void)unused;
    if (adspy_store_check((adspy_Store *)self, false) < 0)
        return NULL;
    return Py_NewRef(self);
}

static PyObject *store_exit(PyObject *self, PyObject *args)
{
    (void)args;
    PyObject *r = store_close(self, NULL);
    if (!r)
        return NULL;
    Py_DECREF(r);
    Py_RETURN_FALSE;
}

static PyObject *store_execute(PyObject *self, PyObject *args, PyObject *kw)
{
    return adspy_cursor_new((adspy_Store *)self, args, kw);
}

static PyObject *store_import(PyObject *self, PyObject *args, PyObject *kw)
{
    return adspy_store_import_file((adspy_Store *)self, args, kw);
}

static PyObject *store_dump(PyObject *self, PyObject *args, PyObject *kw)
{
    return adspy_store_dump((adspy_Store *)self, args, kw);
}

static PyObject *store_verify(PyObject *self, PyObject *unused)
{
    return adspy_store_verify((adspy_Store *)self, unused);
}

static PyObject *store_get_node(PyObject *self, void *unused)
{
    (void)unused;
    adspy_Store *s = (adspy_Store *)self;
    if (adspy_store_check(s, false) < 0)
        return NULL;
    return PyLong_FromUnsignedLongLong(ads_db_node(s->db));
}

static PyObject *store_get_closed(PyObject *self, void *unused)
{
    (void)unused;
    return PyBool_FromLong(((adspy_Store *)self)->db == NULL);
}

static PyObject *store_repr(PyObject *self)
{
    adspy_Store *s = (adspy_Store *)self;
    return PyUnicode_FromFormat("<adstore.Store %R%s>", s->path, s->db ? "" : " (closed)");
}

static void store_dealloc(PyObject *self)
{
    adspy_Store *s = (adspy_Store *)self;
    if (s->db)
        ads_db_close(s->db);
    Py_XDECREF(s->path);
    Py_TYPE(self)->tp_free(self);
}

static PyMethodDef store_methods[] = {
    {"execute", (PyCFunction)(void (*)(void))store_execute, METH_VARARGS | METH_KEYWORDS,
     "execute(statement, params=None, *, hidden=False): run one statement; a Cursor over "
     "its result rows (streamed)."},
    {"store", (PyCFunction)(void (*)(void))store_store, METH_VARARGS | METH_KEYWORDS,
     "store(records, *, batch=0, backfill=False): store a record or an iterable of records "
     "(merge semantics), committed every batch records (0: 10000); the number stored."},
    {"get", (PyCFunction)(void (*)(void))store_get, METH_VARARGS | METH_KEYWORDS,
     "get(type, key, *, deleted=False, timeline=False): the record of type with key (a value, "
     "or a tuple for several key attributes), or None."},
    {"history", (PyCFunction)(void (*)(void))store_history, METH_VARARGS | METH_KEYWORDS,
     "history(type, key): every row of the record, oldest first, with _Timestamp, _Deleted, "
     "__SystemTimestamp and __Latest ([] if there is no such record)."},
    {"transaction", (PyCFunction)(void (*)(void))store_transaction, METH_VARARGS | METH_KEYWORDS,
     "transaction(*, readonly=False): a Transaction; `with` commits it, or aborts it on an "
     "exception."},
    {"new_ids", (PyCFunction)(void (*)(void))store_new_ids, METH_VARARGS | METH_KEYWORDS,
     "new_ids(kind='ordered', n=1): n new Ids from the store's generators ('ordered', "
     "'random' or 'increment')."},
    {"new_fluids", (PyCFunction)(void (*)(void))store_new_fluids, METH_VARARGS | METH_KEYWORDS,
     "new_fluids(generator=0, n=1): n new FLUIDs (ints) from the store's generator number."},
    {"next_value", store_next_value, METH_O,
     "next_value(sequence): the next value of a named sequence ('random', 'ordered', "
     "'type:NAME' or a Sequence record's Name)."},
    {"import_file", (PyCFunction)(void (*)(void))store_import, METH_VARARGS | METH_KEYWORDS,
     "import_file(path, format=None, *, backfill=False, batch=0): store every record of a "
     "file (long, classad, json, xml or dump; None: by name, then by content); the number "
     "stored."},
    {"dump", (PyCFunction)(void (*)(void))store_dump, METH_VARARGS | METH_KEYWORDS,
     "dump(path, format='msgpack', *, types=None): write the store (or those types) as a "
     "dump; a dict of rows, meta and bytes written."},
    {"verify", store_verify, METH_NOARGS,
     "verify(): check the whole store; a dict of records, rows, problems (a count) and "
     "messages (the first problems found)."},
    {"close", store_close, METH_NOARGS, "Close the store (BusyError while transactions or "
                                        "cursors are open)."},
    {"__enter__", store_enter, METH_NOARGS, NULL},
    {"__exit__", store_exit, METH_VARARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyMemberDef store_members[] = {
    {"path", T_OBJECT, offsetof(adspy_Store, path), READONLY, "The store's directory."},
    {NULL, 0, 0, 0, NULL},
};

static PyGetSetDef store_getset[] = {
    {"node", store_get_node, NULL, "The store's 47-bit node id.", NULL},
    {"closed", store_get_closed, NULL, "True once closed.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject adspy_StoreType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "adstore.Store",
    .tp_basicsize = sizeof(adspy_Store),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "An open store (adstore.open). Usable from several threads; a context manager "
              "that closes it.",
    .tp_dealloc = store_dealloc,
    .tp_repr = store_repr,
    .tp_methods = store_methods,
    .tp_members = store_members,
    .tp_getset = store_getset,
};

PyObject *adspy_store_open(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *names[] = {"path", "create", "readonly", "nosync", "map_size", NULL};
    PyObject *path;
    int create = 1, readonly = 0, nosync = 0;
    Py_ssize_t map_size = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O&|$pppn:open", names, PyUnicode_FSConverter,
                                     &path, &create, &readonly, &nosync, &map_size))
        return NULL;
    if (map_size < 0) {
        Py_DECREF(path);
        return adspy_raise_code(ADS_EINVAL, "map_size %zd is negative", map_size);
    }
    int flags = (readonly ? ADS_DB_READONLY : (create ? ADS_DB_CREATE : 0)) |
                (nosync ? ADS_DB_NOSYNC : 0);
    ads_db_options opt = {.map_size = (size_t)map_size};
    ads_db *db;
    ads_error err;
    int rc;
    const char *dir = PyBytes_AS_STRING(path);
    Py_BEGIN_ALLOW_THREADS
    rc = ads_db_open_ex(&db, dir, flags, &opt, &err);
    Py_END_ALLOW_THREADS
    if (rc < 0) {
        Py_DECREF(path);
        return adspy_raise(&err);
    }
    adspy_Store *s = PyObject_New(adspy_Store, &adspy_StoreType);
    if (!s) {
        ads_db_close(db);
        Py_DECREF(path);
        return NULL;
    }
    s->db = db;
    s->path = PyUnicode_DecodeFSDefaultAndSize(PyBytes_AS_STRING(path), PyBytes_GET_SIZE(path));
    Py_DECREF(path);
    s->readonly = readonly != 0;
    s->active = 0;
    s->writer = 0;
    if (!s->path) {
        Py_DECREF(s);
        return NULL;
    }
    return (PyObject *)s;
}

/* ---- Transaction ------------------------------------------------------- */

static int txn_usable(adspy_Txn *t, bool write)
{
    if (!t->txn) {
        adspy_raise_code(ADS_EINVAL, "the transaction has ended");
        return -1;
    }
    if (t->thread != PyThread_get_thread_ident()) {
        adspy_raise_code(ADS_EBUSY, "a transaction is used by the thread that began it");
        return -1;
    }
    if (write && t->readonly) {
        adspy_raise_code(ADS_EREADONLY, "the transaction is read-only");
        return -1;
    }
    return 0;
}

static void txn_end(adspy_Txn *t)
{
    if (!t->readonly)
        t->store->writer = 0;
    t->txn = NULL;
}

static PyObject *txn_commit_m(PyObject *self, PyObject *unused)
{
    (void)unused;
    adspy_Txn *t = (adspy_Txn *)self;
    if (txn_usable(t, false) < 0)
        return NULL;
    ads_txn *txn = t->txn;
    txn_end(t);
    if (txn_commit(t->store, txn) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *txn_abort_m(PyObject *self, PyObject *unused)
{
    (void)unused;
    adspy_Txn *t = (adspy_Txn *)self;
    if (txn_usable(t, false) < 0)
        return NULL;
    ads_txn *txn = t->txn;
    txn_end(t);
    txn_abort(t->store, txn);
    Py_RETURN_NONE;
}

static PyObject *txn_enter(PyObject *self, PyObject *unused)
{
    (void)unused;
    if (txn_usable((adspy_Txn *)self, false) < 0)
        return NULL;
    return Py_NewRef(self);
}

static PyObject *txn_exit(PyObject *self, PyObject *args)
{
    adspy_Txn *t = (adspy_Txn *)self;
    PyObject *etype = PyTuple_Size(args) > 0 ? PyTuple_GET_ITEM(args, 0) : Py_None;
    if (!t->txn)
        Py_RETURN_FALSE; /* ended inside the block */
    PyObject *r = etype == Py_None ? txn_commit_m(self, NULL) : txn_abort_m(self, NULL);
    if (!r)
        return NULL;
    Py_DECREF(r);
    Py_RETURN_FALSE;
}

static PyObject *txn_store_m(PyObject *self, PyObject *record)
{
    adspy_Txn *t = (adspy_Txn *)self;
    if (txn_usable(t, true) < 0)
        return NULL;
    adspy_conv c = {ads_arena_new(), 0};
    if (!c.a)
        return PyErr_NoMemory();
    const ads_record *rec;
    PyObject *out = NULL;
    if (adspy_record_from_py(&rec, &c, record) == 0) {
        ads_write_info info;
        ads_error err;
        int rc;
        Py_BEGIN_ALLOW_THREADS
        rc = ads_txn_store(t->txn, rec, &info, &err);
        Py_END_ALLOW_THREADS
        out = rc < 0 ? adspy_raise(&err) : PyBool_FromLong(info.changed);
    }
    ads_arena_free(c.a);
    return out;
}

static PyObject *txn_delete_m(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *names[] = {"type", "key", NULL};
    adspy_Txn *t = (adspy_Txn *)self;
    PyObject *type, *key;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO:delete", names, &type, &key))
        return NULL;
    if (txn_usable(t, true) < 0)
        return NULL;
    adspy_conv c = {ads_arena_new(), 0};
    if (!c.a)
        return PyErr_NoMemory();
    lookup l;
    PyObject *out = NULL;
    if (lookup_from_py(&l, &c, type, key) == 0) {
        ads_error err;
        ads_row row;
        ads_write_info info = {0};
        int rc;
        Py_BEGIN_ALLOW_THREADS
        rc = find_row(t->txn, &row, &l, c.a, &err);
        if (rc == 1)
            rc = ads_txn_delete(t->txn, &row, &info, &err);
        Py_END_ALLOW_THREADS
        out = rc < 0 ? adspy_raise(&err) : PyBool_FromLong(rc == 0 && info.changed);
    }
    ads_arena_free(c.a);
    return out;
}

static PyObject *txn_get_m(PyObject *self, PyObject *args, PyObject *kw)
{
    adspy_Txn *t = (adspy_Txn *)self;
    PyObject *type, *key;
    unsigned flags;
    if (parse_get_args(args, kw, &type, &key, &flags) < 0 || txn_usable(t, false) < 0)
        return NULL;
    return get_in(t->txn, type, key, flags);
}

static PyObject *txn_history_m(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *names[] = {"type", "key", NULL};
    adspy_Txn *t = (adspy_Txn *)self;
    PyObject *type, *key;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO:history", names, &type, &key) ||
        txn_usable(t, false) < 0)
        return NULL;
    return history_in(t->txn, type, key);
}

static PyObject *txn_new_ids_m(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *names[] = {"kind", "n", NULL};
    const char *kind = "ordered";
    Py_ssize_t n = 1;
    adspy_Txn *t = (adspy_Txn *)self;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|sn:new_ids", names, &kind, &n) ||
        txn_usable(t, true) < 0)
        return NULL;
    return ids_in(t->txn, kind, n);
}

static PyObject *txn_new_fluids_m(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *names[] = {"generator", "n", NULL};
    unsigned long generator = 0;
    Py_ssize_t n = 1;
    adspy_Txn *t = (adspy_Txn *)self;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|O&n:new_fluids", names, generator_arg,
                                     &generator, &n) ||
        txn_usable(t, true) < 0)
        return NULL;
    return fluids_in(t->txn, generator, n);
}

static PyObject *txn_next_value_m(PyObject *self, PyObject *name)
{
    adspy_Txn *t = (adspy_Txn *)self;
    if (txn_usable(t, true) < 0)
        return NULL;
    return next_value_in(t->txn, name);
}

static void txn_dealloc(PyObject *self)
{
    adspy_Txn *t = (adspy_Txn *)self;
    if (t->txn) {
        ads_txn *txn = t->txn;
        txn_end(t);
        txn_abort(t->store, txn);
    }
    Py_XDECREF(t->store);
    Py_TYPE(self)->tp_free(self);
}

static PyObject *txn_get_active(PyObject *self, void *unused)
{
    (void)unused;
    return PyBool_FromLong(((adspy_Txn *)self)->txn != NULL);
}

static PyMethodDef txn_methods[] = {
    {"store", txn_store_m, METH_O,
     "store(record): store one record (merge semantics); True if a row was appended."},
    {"get", (PyCFunction)(void (*)(void))txn_get_m, METH_VARARGS | METH_KEYWORDS,
     "get(type, key, *, deleted=False, timeline=False): as Store.get, in this transaction."},
    {"history", (PyCFunction)(void (*)(void))txn_history_m, METH_VARARGS | METH_KEYWORDS,
     "history(type, key): as Store.history, in this transaction."},
    {"delete", (PyCFunction)(void (*)(void))txn_delete_m, METH_VARARGS | METH_KEYWORDS,
     "delete(type, key): mark the record deleted; True if it was not already."},
    {"new_ids", (PyCFunction)(void (*)(void))txn_new_ids_m, METH_VARARGS | METH_KEYWORDS,
     "new_ids(kind='ordered', n=1): as Store.new_ids, in this transaction."},
    {"new_fluids", (PyCFunction)(void (*)(void))txn_new_fluids_m, METH_VARARGS | METH_KEYWORDS,
     "new_fluids(generator=0, n=1): as Store.new_fluids, in this transaction."},
    {"next_value", txn_next_value_m, METH_O, "next_value(sequence): as Store.next_value."},
    {"commit", txn_commit_m, METH_NOARGS, "Commit (durable on return unless nosync)."},
    {"abort", txn_abort_m, METH_NOARGS, "Abandon everything the transaction wrote."},
    {"__enter__", txn_enter, METH_NOARGS, NULL},
    {"__exit__", txn_exit, METH_VARARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef txn_getset[] = {
    {"active", txn_get_active, NULL, "True until committed or aborted.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject adspy_TransactionType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "adstore.Transaction",
    .tp_basicsize = sizeof(adspy_Txn),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A transaction (Store.transaction). `with` commits it at the end of the block, "
              "or aborts it if the block raised. Used by the thread that began it only.",
    .tp_dealloc = txn_dealloc,
    .tp_methods = txn_methods,
    .tp_getset = txn_getset,
};

int adspy_store_init_type(PyObject *m)
{
    if (PyType_Ready(&adspy_StoreType) < 0 || PyType_Ready(&adspy_TransactionType) < 0)
        return -1;
    if (PyModule_AddObjectRef(m, "Store", (PyObject *)&adspy_StoreType) < 0 ||
        PyModule_AddObjectRef(m, "Transaction", (PyObject *)&adspy_TransactionType) < 0)
        return -1;
    return 0;
}
