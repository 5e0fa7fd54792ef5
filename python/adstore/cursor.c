/*
 * python/adstore/cursor.c: Store.execute and the Cursor it returns.
 *
 * A SELECT is prepared (ads_query_prepare) when the Cursor is first
 * iterated. One that streams (ads_stmt_streams: a plain SELECT of one
 * type's rows) runs in the iterating thread: each time its rows run out,
 * __next__ takes the next ADS_PY_CURSOR_BATCH rows with the GIL released
 * (ads_stmt_fetch: the scan, the WHERE, the select items), then makes
 * them Records with it, SELECT * rows straight from their stored bytes
 * (adspy_stmt_row_to_py). Other threads run while a batch is fetched, and
 * memory holds one batch of rows whatever the statement's size.
 *
 * Any other SELECT (JOIN, GROUP BY, ORDER BY, USING, ...) would run whole
 * at its first step and hold its rows; it keeps streaming instead through
 * the push API (ads_query_exec) in a worker thread of its own, which
 * converts each row to a Record under the GIL, appends it to a batch, and
 * once the batch holds ADS_PY_CURSOR_BATCH rows hands it to the iterating
 * thread and waits until that thread asks for more. The two threads take
 * turns: the worker only produces while the iterating thread waits in
 * __next__ for rows.
 *
 * A Cursor dropped or closed before its end stops the statement (finalizes
 * it, or makes the worker's sink return non-zero and joins the worker).
 * Other statements (UPDATE, DELETE, PURGE, STORE) run to their end in
 * Store.execute itself, with the GIL released; their Cursor has no rows and
 * its rowcount says what they did.
 */
#include "_adstore.h"

#include <stdatomic.h>
#include <string.h>

enum { CURSOR_STOPPED = 1 }; /* the sink's return when the Cursor is closed */

typedef struct {
    PyObject_HEAD
    adspy_Store *store;
    char *text; /* the statement (owned) */
    size_t len;
    bool hidden;
    ads_params *params; /* Store.execute's params, bound (NULL: none) */

    pthread_t thread;
    bool started;      /* a worker thread exists and is not joined */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    /* under mu */
    bool want;         /* the iterating thread waits for a batch */
    bool ready;        /* the worker handed `batch` over */
    bool done;         /* the statement ended (rc, err, info are final) */
    _Atomic bool cancel; /* stop the statement (read by the worker at every row) */

    PyThreadState *ts; /* the worker's thread state */
    PyObject *batch;   /* rows the worker fills (touched by it only under the GIL) */
    PyObject *rows;    /* the batch being handed out */
    Py_ssize_t pos;
    PyObject *columns; /* labels of the select list, or None for SELECT * */
    PyObject *pyerr[3]; /* an exception raised while converting a row: type, value, tb */
    int rc;
    ads_error err;
    ads_exec_info info;
    bool finished;     /* the end was reported to Python */
    bool iterating;    /* a thread is inside __next__ (it may wait without the GIL) */
    adspy_names names; /* the rows' attribute names (touched under the GIL) */

    bool prepared;     /* the SELECT was prepared (at the first __next__) */
    bool counted;      /* counted in store->active until the statement ends */
    ads_query *q;      /* the streaming statement's session ... */
    ads_stmt *stmt;    /* ... and the statement, until its end (NULL: none) */
    ads_stmt_row **slots; /* a batch of its rows (ADS_PY_CURSOR_BATCH) */
} adspy_Cursor;

/* ---- the worker -------------------------------------------------------- */

static void worker_publish(adspy_Cursor *c)
{
    pthread_mutex_lock(&c->mu);
    c->ready = true;
    c->want = false;
    pthread_cond_broadcast(&c->cv);
    while (!c->want && !c->cancel)
        pthread_cond_wait(&c->cv, &c->mu);
    pthread_mutex_unlock(&c->mu);
}

static int sink_begin(void *ctx, const ads_str *cols, size_t ncols, ads_error *err)
{
    adspy_Cursor *c = ctx;
    (void)err;
    PyEval_RestoreThread(c->ts);
    PyObject *labels = ncols ? PyTuple_New((Py_ssize_t)ncols) : Py_NewRef(Py_None);
    for (size_t i = 0; labels && i < ncols; i++) {
        PyObject *s = adspy_str(cols[i].p, cols[i].len);
        if (!s)
            Py_CLEAR(labels);
        else
            PyTuple_SET_ITEM(labels, (Py_ssize_t)i, s);
    }
    int rc = 0;
    if (labels)
        Py_XSETREF(c->columns, labels);
    else
        rc = ADS_ENOMEM;
    if (rc < 0)
        PyErr_Fetch(&c->pyerr[0], &c->pyerr[1], &c->pyerr[2]);
    c->ts = PyEval_SaveThread();
    return rc;
}

static int sink_row(void *ctx, const ads_record *row, ads_error *err)
{
    adspy_Cursor *c = ctx;
    (void)err;
    PyEval_RestoreThread(c->ts);
    PyObject *rec = adspy_record_to_py_named(row, &c->names);
    int rc = rec && PyList_Append(c->batch, rec) == 0 ? 0 : ADS_ENOMEM;
    Py_XDECREF(rec);
    if (rc < 0)
        PyErr_Fetch(&c->pyerr[0], &c->pyerr[1], &c->pyerr[2]);
    bool full = PyList_GET_SIZE(c->batch) >= ADS_PY_CURSOR_BATCH;
    c->ts = PyEval_SaveThread();
    if (rc < 0)
        return rc;
    if (full)
        worker_publish(c);
    return atomic_load(&c->cancel) ? CURSOR_STOPPED : 0;
}

static int sink_end(void *ctx, ads_error *err)
{
    (void)ctx;
    (void)err;
    return 0;
}

static void *worker(void *arg)
{
    adspy_Cursor *c = arg;
    PyGILState_STATE g = PyGILState_Ensure();
    c->ts = PyEval_SaveThread();

    pthread_mutex_lock(&c->mu);
    while (!c->want && !c->cancel)
        pthread_cond_wait(&c->cv, &c->mu);
    bool cancel = c->cancel;
    pthread_mutex_unlock(&c->mu);

    int rc = CURSOR_STOPPED;
    if (!cancel) {
        ads_query *q;
        rc = ads_query_new(&q, c->store->db, &c->err);
        if (rc == 0) {
            ads_sink sink = {sink_begin, sink_row, sink_end, c};
            ads_exec_options opt = {.hidden = c->hidden, .params = c->params};
            rc = ads_query_exec(q, c->text, c->len, &sink, &opt, &c->info, &c->err);
            ads_query_free(q);
        }
    }

    pthread_mutex_lock(&c->mu);
    c->rc = rc;
    c->done = true;
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);

    PyEval_RestoreThread(c->ts);
    PyGILState_Release(g);
    return NULL;
}

/* ---- the iterating side ------------------------------------------------ */

/* Stop the worker (if running) and join it. Called with the GIL held. */
static void cursor_stop(adspy_Cursor *c)
{
    if (!c->started)
        return;
    pthread_mutex_lock(&c->mu);
    c->cancel = true;
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
    Py_BEGIN_ALLOW_THREADS
    pthread_join(c->thread, NULL);
    Py_END_ALLOW_THREADS
    c->started = false;
}

/* The statement is over (at its end, closed or dropped): no longer
 * counted among the store's active calls. */
static void cursor_release(adspy_Cursor *c)
{
    if (c->stmt) {
        ads_stmt_info(c->stmt, &c->info);
        ads_stmt_finalize(c->stmt);
        c->stmt = NULL;
    }
    ads_query_free(c->q);
    c->q = NULL;
    cursor_stop(c);
    if (c->counted) {
        c->counted = false;
        c->store->active--;
    }
}

/* Wait for the next batch or the end; with the GIL held on return. */
static void cursor_wait(adspy_Cursor *c, bool *got, bool *done)
{
    Py_BEGIN_ALLOW_THREADS
    pthread_mutex_lock(&c->mu);
    c->want = true;
    pthread_cond_broadcast(&c->cv);
    while (!c->ready && !c->done)
        pthread_cond_wait(&c->cv, &c->mu);
    *got = c->ready;
    *done = c->done;
    c->ready = false;
    pthread_mutex_unlock(&c->mu);
    Py_END_ALLOW_THREADS
}

static PyObject *cursor_finish(adspy_Cursor *c)
{
    cursor_release(c);
    c->finished = true;
    if (c->pyerr[0]) {
        PyErr_Restore(c->pyerr[0], c->pyerr[1], c->pyerr[2]);
        c->pyerr[0] = c->pyerr[1] = c->pyerr[2] = NULL;
        return NULL;
    }
    if (c->rc < 0 && c->rc != CURSOR_STOPPED)
        return adspy_raise(&c->err);
    return NULL; /* StopIteration */
}

static PyObject *cursor_next_rows(adspy_Cursor *c);

/* One thread at a time: two waiting for the same batch would leave one
 * waiting for a batch nobody asked for. */
static PyObject *cursor_next(PyObject *self)
{
    adspy_Cursor *c = (adspy_Cursor *)self;
    if (c->iterating)
        return adspy_raise_code(ADS_EBUSY, "a Cursor is iterated by one thread at a time");
    c->iterating = true;
    PyObject *r = cursor_next_rows(c);
    c->iterating = false;
    return r;
}

/* The select list's labels, or None for SELECT *. */
static int step_columns(adspy_Cursor *c)
{
    size_t n;
    const ads_str *cols = ads_stmt_columns(c->stmt, &n);
    PyObject *labels = n ? PyTuple_New((Py_ssize_t)n) : Py_NewRef(Py_None);
    for (size_t i = 0; labels && i < n; i++) {
        PyObject *s = adspy_str(cols[i].p, cols[i].len);
        if (!s)
            Py_CLEAR(labels);
        else
            PyTuple_SET_ITEM(labels, (Py_ssize_t)i, s);
    }
    if (!labels)
        return -1;
    Py_XSETREF(c->columns, labels);
    return 0;
}

/* Prepare the SELECT: 0 (c->stmt set if it streams, else the worker
 * started), or -1 with an exception. */
static int cursor_prepare(adspy_Cursor *c)
{
    int rc;
    c->prepared = true;
    Py_BEGIN_ALLOW_THREADS
    rc = ads_query_new(&c->q, c->store->db, &c->err);
    if (rc == 0) {
        ads_exec_options opt = {.hidden = c->hidden, .params = c->params};
        rc = ads_query_prepare(&c->stmt, c->q, c->text, c->len, &opt, &c->err);
    }
    Py_END_ALLOW_THREADS
    if (rc < 0) {
        c->rc = rc;
        return 0; /* raised by cursor_finish, as the worker's errors are */
    }
    if (ads_stmt_streams(c->stmt)) {
        c->slots = PyMem_Malloc(ADS_PY_CURSOR_BATCH * sizeof *c->slots);
        if (!c->slots) {
            PyErr_NoMemory();
            return -1;
        }
        return step_columns(c);
    }
    ads_stmt_finalize(c->stmt);
    c->stmt = NULL;
    ads_query_free(c->q);
    c->q = NULL;
    if (pthread_create(&c->thread, NULL, worker, c) != 0) {
        adspy_raise_code(ADS_EIO, "cannot start the statement's thread");
        return -1;
    }
    c->started = true;
    return 0;
}

/* The next batch of a streaming statement's rows into c->rows: fetched
 * without the GIL, made Records with it. At the end (or an error, raised
 * once the rows before it are handed out) the statement is finalized. */
static int cursor_fetch(adspy_Cursor *c)
{
    size_t n = 0;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = ads_stmt_fetch(c->stmt, c->slots, ADS_PY_CURSOR_BATCH, &n, &c->err);
    Py_END_ALLOW_THREADS
    PyObject *rows = PyList_New((Py_ssize_t)n);
    for (size_t i = 0; rows && i < n; i++) {
        PyObject *r = adspy_stmt_row_to_py(c->slots[i], &c->names);
        if (!r)
            Py_CLEAR(rows);
        else
            PyList_SET_ITEM(rows, (Py_ssize_t)i, r);
    }
    Py_XSETREF(c->rows, rows);
    c->pos = 0;
    if (rc < 0 || n == 0 || !rows) {
        c->rc = rc;
        ads_stmt_info(c->stmt, &c->info);
        ads_stmt_finalize(c->stmt);
        c->stmt = NULL;
    }
    return rows ? 0 : -1;
}

static PyObject *cursor_next_rows(adspy_Cursor *c)
{
    for (;;) {
        if (c->rows && c->pos < PyList_GET_SIZE(c->rows)) {
            PyObject *r = PyList_GET_ITEM(c->rows, c->pos);
            PyList_SET_ITEM(c->rows, c->pos, NULL);
            c->pos++;
            return r;
        }
        if (c->finished)
            return NULL;
        if (!c->prepared && cursor_prepare(c) < 0) {
            cursor_release(c);
            c->finished = true;
            return NULL;
        }
        if (c->stmt) {
            if (cursor_fetch(c) < 0) {
                cursor_release(c);
                c->finished = true;
                return NULL;
            }
            continue;
        }
        if (!c->started)
            return cursor_finish(c);
        bool got, done;
        cursor_wait(c, &got, &done);
        /* The worker waits for `want` or has ended: the batch is ours. */
        PyObject *fresh = PyList_New(0);
        if (!fresh)
            return NULL;
        Py_XSETREF(c->rows, c->batch);
        c->batch = fresh;
        c->pos = 0;
        if (done && !got)
            cursor_stop(c);
    }
}

static PyObject *cursor_close(PyObject *self, PyObject *unused)
{
    (void)unused;
    adspy_Cursor *c = (adspy_Cursor *)self;
    if (c->iterating)
        return adspy_raise_code(ADS_EBUSY, "the Cursor is being iterated by another thread");
    cursor_release(c);
    c->finished = true;
    Py_CLEAR(c->rows);
    Py_RETURN_NONE;
}

static PyObject *cursor_enter(PyObject *self, PyObject *unused)
{
    (void)unused;
    return Py_NewRef(self);
}

static PyObject *cursor_exit(PyObject *self, PyObject *args)
{
    (void)args;
    PyObject *r = cursor_close(self, NULL);
    Py_XDECREF(r);
    if (!r)
        return NULL;
    Py_RETURN_FALSE;
}

static void cursor_dealloc(PyObject *self)
{
    adspy_Cursor *c = (adspy_Cursor *)self;
    cursor_release(c);
    PyMem_Free(c->slots);
    pthread_mutex_destroy(&c->mu);
    pthread_cond_destroy(&c->cv);
    Py_XDECREF(c->pyerr[0]);
    Py_XDECREF(c->pyerr[1]);
    Py_XDECREF(c->pyerr[2]);
    Py_XDECREF(c->batch);
    Py_XDECREF(c->rows);
    Py_XDECREF(c->columns);
    ads_params_free(c->params);
    adspy_names_clear(&c->names);
    Py_XDECREF(c->store);
    PyMem_Free(c->text);
    Py_TYPE(self)->tp_free(self);
}

static const char *kind_name(ads_stmt_kind k)
{
    switch (k) {
    case ADS_STMT_SELECT: return "select";
    case ADS_STMT_UPDATE: return "update";
    case ADS_STMT_DELETE: return "delete";
    case ADS_STMT_PURGE: return "purge";
    case ADS_STMT_STORE: return "store";
    case ADS_STMT_BEGIN: return "begin";
    case ADS_STMT_COMMIT: return "commit";
    case ADS_STMT_ROLLBACK: return "rollback";
    }
    return "?";
}

static PyObject *cursor_get_rowcount(PyObject *self, void *unused)
{
    (void)unused;
    adspy_Cursor *c = (adspy_Cursor *)self;
    if (c->started || c->stmt || (c->info.kind == ADS_STMT_SELECT && !c->finished))
        return PyLong_FromLong(-1);
    return PyLong_FromUnsignedLongLong(c->info.rows);
}

static PyObject *cursor_get_kind(PyObject *self, void *unused)
{
    (void)unused;
    return PyUnicode_FromString(kind_name(((adspy_Cursor *)self)->info.kind));
}

static PyObject *cursor_get_columns(PyObject *self, void *unused)
{
    (void)unused;
    adspy_Cursor *c = (adspy_Cursor *)self;
    return Py_NewRef(c->columns ? c->columns : Py_None);
}

static PyObject *cursor_get_unchanged(PyObject *self, void *unused)
{
    (void)unused;
    return PyLong_FromUnsignedLongLong(((adspy_Cursor *)self)->info.unchanged);
}

static PyMethodDef cursor_methods[] = {
    {"close", cursor_close, METH_NOARGS, "Stop the statement; no more rows come."},
    {"__enter__", cursor_enter, METH_NOARGS, NULL},
    {"__exit__", cursor_exit, METH_VARARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef cursor_getset[] = {
    {"rowcount", cursor_get_rowcount, NULL,
     "Rows returned (SELECT, once iterated to its end; -1 before) or records written.", NULL},
    {"kind", cursor_get_kind, NULL, "'select', 'update', 'delete', 'purge' or 'store'.", NULL},
    {"columns", cursor_get_columns, NULL,
     "The select list's labels (a tuple) once the first row came, or None (SELECT *).", NULL},
    {"unchanged", cursor_get_unchanged, NULL, "STORE: records equal to the row in effect.",
     NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject adspy_CursorType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "adstore.Cursor",
    .tp_basicsize = sizeof(adspy_Cursor),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "The rows of a statement (Store.execute): an iterator of Records, streamed.",
    .tp_dealloc = cursor_dealloc,
    .tp_iter = PyObject_SelfIter,
    .tp_iternext = cursor_next,
    .tp_methods = cursor_methods,
    .tp_getset = cursor_getset,
};

/* ---- Store.execute ----------------------------------------------------- */

static adspy_Cursor *cursor_alloc(adspy_Store *s, const char *text, size_t len)
{
    adspy_Cursor *c = PyObject_New(adspy_Cursor, &adspy_CursorType);
    if (!c)
        return NULL;
    memset((char *)c + sizeof(PyObject), 0, sizeof *c - sizeof(PyObject));
    pthread_mutex_init(&c->mu, NULL);
    pthread_cond_init(&c->cv, NULL);
    c->store = (adspy_Store *)Py_NewRef(s);
    c->text = PyMem_Malloc(len ? len : 1);
    c->batch = PyList_New(0);
    if (!c->text || !c->batch) {
        Py_DECREF(c);
        return (adspy_Cursor *)PyErr_NoMemory();
    }
    memcpy(c->text, text, len);
    c->len = len;
    c->finished = false;
    return c;
}

/* One value: converted as Store.store converts values, then bound by
 * position (name NULL; index from 1) or by name. */
static int bind_one(ads_params *p, size_t index, PyObject *name, PyObject *value)
{
    adspy_conv conv = {ads_arena_new(), 0};
    ads_value v;
    ads_error err;
    ads_str n = {"", 0};
    int rc = conv.a ? 0 : (PyErr_NoMemory(), -1);
    if (rc == 0 && name)
        rc = adspy_utf8(&n, conv.a, name, "a parameter name");
    if (rc == 0)
        rc = adspy_value_from_py(&v, &conv, value);
    if (rc == 0) {
        int brc = name ? ads_params_bind_name(p, n.p, n.len, &v, &err)
                       : ads_params_bind(p, index, &v, &err);
        if (brc < 0) {
            adspy_raise(&err);
            rc = -1;
        }
    }
    ads_arena_free(conv.a);
    return rc;
}

/* 0 when name (a str) is not yet in seen, ignoring case as names do (and
 * now is); -1 with InvalidError when it is: {"a": 1, "A": 2} binds :a
 * twice, which a mapping cannot mean. */
static int name_once(PyObject *seen, PyObject *name)
{
    PyObject *low = PyObject_CallMethod(name, "lower", NULL);
    int in = low ? PySet_Contains(seen, low) : -1;
    int rc = in < 0 ? -1 : in ? 1 : PySet_Add(seen, low);
    Py_XDECREF(low);
    if (rc == 1) {
        const char *u = PyUnicode_AsUTF8(name);
        if (!u)
            PyErr_Clear(); /* a name no statement could hold: said as "?" */
        adspy_raise_code(ADS_EINVAL, "params: :%s is given twice (names ignore case)",
                         u ? u : "?");
        rc = -1;
    }
    return rc;
}

/* params: None, a mapping (values of :name placeholders) or a sequence
 * other than str and bytes (values of ?, in order). 0 with *out (NULL for
 * None), or -1 with an exception. */
static int params_from_py(ads_params **out, PyObject *params)
{
    *out = NULL;
    if (params == Py_None)
        return 0;
    bool mapping = PyDict_Check(params) || PyObject_HasAttrString(params, "keys");
    if (!mapping && (PyUnicode_Check(params) || PyBytes_Check(params) ||
                     PyByteArray_Check(params) || !PySequence_Check(params))) {
        PyErr_Format(PyExc_TypeError,
                     "params must be a sequence (values of ?) or a mapping (values of :name), "
                     "not %.80s",
                     Py_TYPE(params)->tp_name);
        return -1;
    }
    /* a list of our own (items()) or a tuple (a copy of the sequence):
     * converting a value may run Python code, which must not change what
     * is being walked */
    PyObject *items = mapping ? PyMapping_Items(params) : PySequence_Tuple(params);
    if (!items)
        return -1;
    ads_error err;
    int rc = ads_params_new(out, &err) < 0 ? (adspy_raise(&err), -1) : 0;
    PyObject *seen = mapping ? PySet_New(NULL) : NULL; /* the names, lower case */
    if (mapping && !seen)
        rc = -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(items);
    for (Py_ssize_t i = 0; rc == 0 && i < n; i++) {
        PyObject *it = PySequence_Fast_GET_ITEM(items, i);
        if (!mapping) {
            rc = bind_one(*out, (size_t)i + 1, NULL, it);
        } else if (!PyTuple_Check(it) || PyTuple_GET_SIZE(it) != 2) {
            PyErr_SetString(PyExc_TypeError,
                            "params: a mapping's items() must give (name, value) pairs");
            rc = -1;
        } else if (!PyUnicode_Check(PyTuple_GET_ITEM(it, 0))) {
            PyErr_SetString(PyExc_TypeError, "params: a mapping's keys are parameter names (str)");
            rc = -1;
        } else if ((rc = name_once(seen, PyTuple_GET_ITEM(it, 0))) == 0) {
            rc = bind_one(*out, 0, PyTuple_GET_ITEM(it, 0), PyTuple_GET_ITEM(it, 1));
        }
    }
    Py_XDECREF(seen);
    Py_DECREF(items);
    if (rc < 0) {
        ads_params_free(*out);
        *out = NULL;
    }
    return rc;
}

static PyObject *run_write(adspy_Cursor *c)
{
    ads_query *q;
    int rc;
    c->store->active++;
    Py_BEGIN_ALLOW_THREADS
    rc = ads_query_new(&q, c->store->db, &c->err);
    if (rc == 0) {
        ads_exec_options opt = {.hidden = c->hidden, .params = c->params};
        rc = ads_query_exec(q, c->text, c->len, NULL, &opt, &c->info, &c->err);
        ads_query_free(q);
    }
    Py_END_ALLOW_THREADS
    c->store->active--;
    c->finished = true;
    if (rc < 0) {
        PyObject *none = adspy_raise(&c->err); /* before c, and its error, are freed */
        Py_DECREF(c);
        return none;
    }
    return (PyObject *)c;
}

PyObject *adspy_cursor_new(adspy_Store *s, PyObject *args, PyObject *kw)
{
    static char *names[] = {"statement", "params", "hidden", NULL};
    PyObject *stmt, *params = Py_None;
    int hidden = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "U|O$p:execute", names, &stmt, &params, &hidden))
        return NULL;
    ads_params *bound;
    if (params_from_py(&bound, params) < 0)
        return NULL;
    Py_ssize_t n;
    const char *text = PyUnicode_AsUTF8AndSize(stmt, &n);
    ads_stmt_kind kind;
    ads_error err;
    adspy_Cursor *c = NULL;
    if (!text)
        goto fail;
    if (ads_query_parse(text, (size_t)n, 0, (size_t)n, &kind, &err) < 0) {
        adspy_raise(&err);
        goto fail;
    }
    if (kind == ADS_STMT_BEGIN || kind == ADS_STMT_COMMIT || kind == ADS_STMT_ROLLBACK) {
        /* each execute runs in a session of its own: BEGIN would end with it */
        PyErr_SetString(adspy_NotSupportedError,
                        "BEGIN, COMMIT and ROLLBACK: use 'with store.transaction():' instead");
        goto fail;
    }
    if (adspy_store_check(s, kind != ADS_STMT_SELECT) < 0 ||
        !(c = cursor_alloc(s, text, (size_t)n)))
        goto fail;
    c->params = bound;
    c->hidden = hidden != 0;
    c->info.kind = kind;
    if (kind != ADS_STMT_SELECT)
        return run_write(c);
    c->counted = true;
    s->active++;
    return (PyObject *)c;
fail:
    ads_params_free(bound);
    return NULL;
}

int adspy_cursor_init_type(PyObject *m)
{
    if (PyType_Ready(&adspy_CursorType) < 0)
        return -1;
    return PyModule_AddObjectRef(m, "Cursor", (PyObject *)&adspy_CursorType);
}
