/*
 * python/adstore/record.c: adstore.Record, a ClassAd record as a Python
 * mutable mapping. Names keep the spelling they were first given and their
 * order; lookups, assignment, deletion and `in` compare names as ClassAd
 * does, ignoring ASCII case ("memory" finds "Memory"; assigning "MEMORY"
 * replaces its value and keeps the first spelling, as HTCondor does).
 *
 * Inside, a dict maps each name as written to its value, so the common
 * lookup with the stored spelling is one dict lookup; a second dict, made
 * on the first lookup that misses, maps lowered names to spellings.
 *
 * A record a Cursor makes starts split instead, as CPython shares the keys
 * of instances' dicts: its values in a tuple, their names in a dict (name
 * -> position) that the rows of one layout share, so making a row fills a
 * tuple where it would fill a hash table. Reading a value by its stored
 * spelling, `in`, len() and get() use the split form; anything else (a
 * write, a lookup in another case, iteration, comparison) first gives the
 * record a dict of its own (adspy_record_dict), as any other record has.
 */
#include "_adstore.h"

/* key with A-Z lowered (a new reference; key itself when nothing changes). */
static PyObject *fold(PyObject *key)
{
    Py_ssize_t n;
    const char *p = PyUnicode_AsUTF8AndSize(key, &n);
    if (!p) {
        PyErr_Clear(); /* lone surrogates: fold the bytes they stand for */
        PyObject *b = PyUnicode_AsEncodedString(key, "utf-8", "surrogateescape");
        if (!b)
            return NULL;
        PyObject *out;
        char *q = PyBytes_AS_STRING(b);
        for (Py_ssize_t j = 0; j < PyBytes_GET_SIZE(b); j++)
            if (q[j] >= 'A' && q[j] <= 'Z')
                q[j] = (char)(q[j] + 32);
        out = PyUnicode_DecodeUTF8(q, PyBytes_GET_SIZE(b), "surrogateescape");
        Py_DECREF(b);
        return out;
    }
    Py_ssize_t i = 0;
    while (i < n && !(p[i] >= 'A' && p[i] <= 'Z'))
        i++;
    if (i == n)
        return Py_NewRef(key);
    if (PyUnicode_IS_ASCII(key)) {
        PyObject *out = PyUnicode_New(n, 127);
        if (!out)
            return NULL;
        Py_UCS1 *q = PyUnicode_1BYTE_DATA(out);
        for (Py_ssize_t j = 0; j < n; j++)
            q[j] = (Py_UCS1)((p[j] >= 'A' && p[j] <= 'Z') ? p[j] + 32 : p[j]);
        return out;
    }
    char *tmp = PyMem_Malloc((size_t)n);
    if (!tmp)
        return PyErr_NoMemory();
    for (Py_ssize_t j = 0; j < n; j++)
        tmp[j] = (p[j] >= 'A' && p[j] <= 'Z') ? (char)(p[j] + 32) : p[j];
    PyObject *out = PyUnicode_DecodeUTF8(tmp, n, "strict");
    PyMem_Free(tmp);
    return out;
}

PyObject *adspy_record_dict(adspy_Record *r)
{
    if (r->d)
        return r->d;
    PyObject *d = PyDict_New();
    PyObject *k, *at;
    Py_ssize_t pos = 0;
    while (d && r->index && PyDict_Next(r->index, &pos, &k, &at))
        if (PyDict_SetItem(d, k, PyTuple_GET_ITEM(r->vals, PyLong_AsSsize_t(at))) < 0)
            Py_CLEAR(d);
    if (!d)
        return NULL;
    r->d = d;
    Py_CLEAR(r->index);
    Py_CLEAR(r->vals);
    return d;
}

static int fold_build(adspy_Record *r)
{
    if (r->fold)
        return 0;
    if (!adspy_record_dict(r))
        return -1;
    PyObject *f = PyDict_New();
    if (!f)
        return -1;
    PyObject *k, *v;
    Py_ssize_t pos = 0;
    while (PyDict_Next(r->d, &pos, &k, &v)) {
        PyObject *lk = fold(k);
        if (!lk || PyDict_SetItem(f, lk, k) < 0) {
            Py_XDECREF(lk);
            Py_DECREF(f);
            return -1;
        }
        Py_DECREF(lk);
    }
    r->fold = f;
    return 0;
}

PyObject *adspy_record_find(adspy_Record *r, PyObject *key)
{
    if (!PyUnicode_Check(key) || !adspy_record_dict(r))
        return NULL;
    int has = PyDict_Contains(r->d, key);
    if (has != 0)
        return has > 0 ? Py_NewRef(key) : NULL;
    if (fold_build(r) < 0)
        return NULL;
    PyObject *lk = fold(key);
    if (!lk)
        return NULL;
    PyObject *name = PyDict_GetItemWithError(r->fold, lk); /* borrowed */
    Py_DECREF(lk);
    return name ? Py_NewRef(name) : NULL;
}

adspy_Record *adspy_record_new(void)
{
    adspy_Record *r = PyObject_GC_New(adspy_Record, &adspy_RecordType);
    if (!r)
        return NULL;
    r->fold = r->index = r->vals = NULL;
    r->d = PyDict_New();
    if (!r->d) {
        Py_DECREF(r);
        return NULL;
    }
    PyObject_GC_Track(r);
    return r;
}

adspy_Record *adspy_record_split(PyObject *index, PyObject *vals)
{
    adspy_Record *r = PyObject_GC_New(adspy_Record, &adspy_RecordType);
    if (!r) {
        Py_DECREF(vals);
        return NULL;
    }
    r->d = r->fold = NULL;
    r->index = Py_NewRef(index);
    r->vals = vals;
    PyObject_GC_Track(r);
    return r;
}

int adspy_record_put(adspy_Record *r, PyObject *name, PyObject *value)
{
    if (!adspy_record_dict(r) || PyDict_SetItem(r->d, name, value) < 0)
        return -1;
    if (r->fold) {
        PyObject *lk = fold(name);
        int rc = lk ? PyDict_SetItem(r->fold, lk, name) : -1;
        Py_XDECREF(lk);
        return rc;
    }
    return 0;
}

static int record_set(adspy_Record *r, PyObject *key, PyObject *value)
{
    if (!PyUnicode_Check(key)) {
        PyErr_Format(PyExc_TypeError, "a record's attribute name must be a str, not %.100s",
                     Py_TYPE(key)->tp_name);
        return -1;
    }
    if (PyUnicode_GET_LENGTH(key) == 0) {
        PyErr_SetString(PyExc_ValueError, "a record's attribute name cannot be empty");
        return -1;
    }
    PyObject *name = adspy_record_find(r, key);
    if (!name && PyErr_Occurred())
        return -1;
    int rc = adspy_record_put(r, name ? name : key, value);
    Py_XDECREF(name);
    return rc;
}

static int record_del(adspy_Record *r, PyObject *key)
{
    PyObject *name = adspy_record_find(r, key);
    if (!name) {
        if (!PyErr_Occurred())
            PyErr_SetObject(PyExc_KeyError, key);
        return -1;
    }
    int rc = adspy_record_dict(r) ? PyDict_DelItem(r->d, name) : -1;
    if (rc == 0 && r->fold) {
        PyObject *lk = fold(name);
        rc = lk ? PyDict_DelItem(r->fold, lk) : -1;
        Py_XDECREF(lk);
    }
    Py_DECREF(name);
    return rc;
}

/* r's value for key (borrowed), or NULL (with KeyError set only if raise). */
static PyObject *record_get(adspy_Record *r, PyObject *key, bool raise)
{
    if (PyUnicode_Check(key) && !PyUnicode_CheckExact(key)) {
        /* a str subclass is looked up as the plain str it holds: no __eq__
         * or __hash__ of its own runs in the lookups below (one that wrote
         * to the row freed the index they were reading) */
        PyObject *plain = PyUnicode_FromObject(key);
        if (!plain)
            return NULL;
        PyObject *v = record_get(r, plain, raise);
        Py_DECREF(plain);
        return v;
    }
    if (!r->d && r->index && PyUnicode_Check(key)) {
        PyObject *at = PyDict_GetItemWithError(r->index, key);
        if (at)
            return PyTuple_GET_ITEM(r->vals, PyLong_AsSsize_t(at));
        if (PyErr_Occurred())
            return NULL;
    }
    if (!adspy_record_dict(r))
        return NULL;
    PyObject *v = PyUnicode_Check(key) ? PyDict_GetItemWithError(r->d, key) : NULL;
    if (v || PyErr_Occurred())
        return v;
    PyObject *name = adspy_record_find(r, key);
    if (name) {
        v = PyDict_GetItemWithError(r->d, name);
        Py_DECREF(name);
        return v;
    }
    if (raise && !PyErr_Occurred())
        PyErr_SetObject(PyExc_KeyError, key);
    return NULL;
}

static int record_update(adspy_Record *r, PyObject *other, PyObject *kw)
{
    if (other) {
        PyObject *src = PyObject_TypeCheck(other, &adspy_RecordType)
                            ? adspy_record_dict((adspy_Record *)other)
                            : other;
        if (!src)
            return -1;
        PyObject *items = PyDict_Check(src) ? PyDict_Items(src) : PyMapping_Items(src);
        if (!items) {
            if (PyErr_ExceptionMatches(PyExc_AttributeError) ||
                PyErr_ExceptionMatches(PyExc_TypeError)) {
                PyErr_Clear();
                PyErr_Format(PyExc_TypeError, "a record is made from a mapping, not %.100s",
                             Py_TYPE(other)->tp_name);
            }
            return -1;
        }
        for (Py_ssize_t i = 0; i < PyList_GET_SIZE(items); i++) {
            PyObject *kv = PyList_GET_ITEM(items, i);
            if (!PyTuple_Check(kv) || PyTuple_GET_SIZE(kv) != 2 ||
                record_set(r, PyTuple_GET_ITEM(kv, 0), PyTuple_GET_ITEM(kv, 1)) < 0) {
                if (!PyErr_Occurred())
                    PyErr_SetString(PyExc_TypeError, "items() must give (name, value) pairs");
                Py_DECREF(items);
                return -1;
            }
        }
        Py_DECREF(items);
    }
    if (kw) {
        PyObject *k, *v;
        Py_ssize_t pos = 0;
        while (PyDict_Next(kw, &pos, &k, &v))
            if (record_set(r, k, v) < 0)
                return -1;
    }
    return 0;
}

/* ---- type slots -------------------------------------------------------- */

static PyObject *rec_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    (void)args;
    (void)kw;
    adspy_Record *r = (adspy_Record *)type->tp_alloc(type, 0);
    if (!r)
        return NULL;
    r->d = PyDict_New();
    if (!r->d) {
        Py_DECREF(r);
        return NULL;
    }
    return (PyObject *)r;
}

static int rec_init(PyObject *self, PyObject *args, PyObject *kw)
{
    PyObject *other = NULL;
    if (!PyArg_ParseTuple(args, "|O:Record", &other))
        return -1;
    adspy_Record *r = (adspy_Record *)self;
    if (!adspy_record_dict(r))
        return -1;
    PyDict_Clear(r->d);
    Py_CLEAR(r->fold);
    return record_update(r, other, kw);
}

static int rec_traverse(PyObject *self, visitproc visit, void *arg)
{
    adspy_Record *r = (adspy_Record *)self;
    Py_VISIT(r->d);
    Py_VISIT(r->fold);
    Py_VISIT(r->index);
    Py_VISIT(r->vals);
    return 0;
}

static int rec_clear(PyObject *self)
{
    adspy_Record *r = (adspy_Record *)self;
    Py_CLEAR(r->d);
    Py_CLEAR(r->fold);
    Py_CLEAR(r->index);
    Py_CLEAR(r->vals);
    return 0;
}

static void rec_dealloc(PyObject *self)
{
    PyObject_GC_UnTrack(self);
    rec_clear(self);
    Py_TYPE(self)->tp_free(self);
}

static Py_ssize_t rec_len(PyObject *self)
{
    adspy_Record *r = (adspy_Record *)self;
    if (!r->d && r->vals)
        return PyTuple_GET_SIZE(r->vals);
    return adspy_record_dict(r) ? PyDict_GET_SIZE(r->d) : -1;
}

static PyObject *rec_subscript(PyObject *self, PyObject *key)
{
    PyObject *v = record_get((adspy_Record *)self, key, true);
    return v ? Py_NewRef(v) : NULL;
}

static int rec_ass_subscript(PyObject *self, PyObject *key, PyObject *value)
{
    adspy_Record *r = (adspy_Record *)self;
    return value ? record_set(r, key, value) : record_del(r, key);
}

static int rec_contains(PyObject *self, PyObject *key)
{
    PyObject *v = record_get((adspy_Record *)self, key, false);
    return v ? 1 : (PyErr_Occurred() ? -1 : 0);
}

static PyObject *rec_iter(PyObject *self)
{
    PyObject *d = adspy_record_dict((adspy_Record *)self);
    return d ? PyObject_GetIter(d) : NULL;
}

static PyObject *rec_repr(PyObject *self)
{
    PyObject *d = adspy_record_dict((adspy_Record *)self);
    return d ? PyUnicode_FromFormat("adstore.Record(%R)", d) : NULL;
}

/* Equal to another Record or mapping with the same names (ignoring case)
 * and equal values. */
static PyObject *rec_richcompare(PyObject *self, PyObject *other, int op)
{
    if ((op != Py_EQ && op != Py_NE) || !(PyObject_TypeCheck(other, &adspy_RecordType) ||
                                          PyDict_Check(other)))
        Py_RETURN_NOTIMPLEMENTED;
    adspy_Record *a = (adspy_Record *)self, *b;
    if (PyObject_TypeCheck(other, &adspy_RecordType)) {
        b = (adspy_Record *)Py_NewRef(other);
    } else {
        b = (adspy_Record *)PyObject_CallOneArg((PyObject *)&adspy_RecordType, other);
        if (!b)
            return NULL;
    }
    if (!adspy_record_dict(a) || !adspy_record_dict(b)) {
        Py_DECREF(b);
        return NULL;
    }
    int eq = PyDict_GET_SIZE(a->d) == PyDict_GET_SIZE(b->d) &&
             PyDict_GET_SIZE(b->d) == PyObject_Length(other);
    PyObject *k, *v;
    Py_ssize_t pos = 0;
    while (eq == 1 && PyDict_Next(a->d, &pos, &k, &v)) {
        PyObject *w = record_get(b, k, false);
        if (!w) {
            eq = PyErr_Occurred() ? -1 : 0;
            break;
        }
        Py_INCREF(v);
        Py_INCREF(w);
        eq = PyObject_RichCompareBool(v, w, Py_EQ);
        Py_DECREF(v);
        Py_DECREF(w);
    }
    Py_DECREF(b);
    if (eq < 0)
        return NULL;
    return PyBool_FromLong(op == Py_EQ ? eq : !eq);
}

/* ---- methods ----------------------------------------------------------- */

static PyObject *rec_get(PyObject *self, PyObject *const *args, Py_ssize_t n)
{
    if (!_PyArg_CheckPositional("get", n, 1, 2))
        return NULL;
    PyObject *v = record_get((adspy_Record *)self, args[0], false);
    if (!v && PyErr_Occurred())
        return NULL;
    return Py_NewRef(v ? v : (n > 1 ? args[1] : Py_None));
}

static PyObject *rec_pop(PyObject *self, PyObject *const *args, Py_ssize_t n)
{
    if (!_PyArg_CheckPositional("pop", n, 1, 2))
        return NULL;
    adspy_Record *r = (adspy_Record *)self;
    PyObject *v = record_get(r, args[0], n == 1);
    if (!v)
        return PyErr_Occurred() ? NULL : Py_NewRef(args[1]);
    Py_INCREF(v);
    if (record_del(r, args[0]) < 0) {
        Py_DECREF(v);
        return NULL;
    }
    return v;
}

static PyObject *rec_setdefault(PyObject *self, PyObject *const *args, Py_ssize_t n)
{
    if (!_PyArg_CheckPositional("setdefault", n, 1, 2))
        return NULL;
    adspy_Record *r = (adspy_Record *)self;
    PyObject *v = record_get(r, args[0], false);
    if (v || PyErr_Occurred())
        return v ? Py_NewRef(v) : NULL;
    PyObject *dflt = n > 1 ? args[1] : Py_None;
    return record_set(r, args[0], dflt) < 0 ? NULL : Py_NewRef(dflt);
}

static PyObject *rec_update(PyObject *self, PyObject *args, PyObject *kw)
{
    PyObject *other = NULL;
    if (!PyArg_ParseTuple(args, "|O:update", &other))
        return NULL;
    if (record_update((adspy_Record *)self, other, kw) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *rec_view(PyObject *self, const char *which)
{
    PyObject *d = adspy_record_dict((adspy_Record *)self);
    return d ? PyObject_CallMethod(d, which, NULL) : NULL;
}

static PyObject *rec_keys(PyObject *self, PyObject *unused)
{
    (void)unused;
    return rec_view(self, "keys");
}

static PyObject *rec_values(PyObject *self, PyObject *unused)
{
    (void)unused;
    return rec_view(self, "values");
}

static PyObject *rec_items(PyObject *self, PyObject *unused)
{
    (void)unused;
    return rec_view(self, "items");
}

static PyObject *rec_clear_m(PyObject *self, PyObject *unused)
{
    (void)unused;
    adspy_Record *r = (adspy_Record *)self;
    if (!adspy_record_dict(r))
        return NULL;
    PyDict_Clear(r->d);
    Py_CLEAR(r->fold);
    Py_RETURN_NONE;
}

static PyObject *rec_copy(PyObject *self, PyObject *unused)
{
    (void)unused;
    PyObject *d = adspy_record_dict((adspy_Record *)self);
    adspy_Record *r = d ? adspy_record_new() : NULL;
    if (!r)
        return NULL;
    if (PyDict_Update(r->d, d) < 0) {
        Py_DECREF(r);
        return NULL;
    }
    return (PyObject *)r;
}

static PyObject *rec_to_dict(PyObject *self, PyObject *unused)
{
    (void)unused;
    PyObject *d = adspy_record_dict((adspy_Record *)self);
    return d ? PyDict_Copy(d) : NULL;
}

static PyObject *rec_reduce(PyObject *self, PyObject *unused)
{
    (void)unused;
    return Py_BuildValue("(O(N))", (PyObject *)&adspy_RecordType, rec_to_dict(self, NULL));
}

static PyObject *rec_unparse(PyObject *self, PyObject *unused)
{
    (void)unused;
    adspy_conv c = {ads_arena_new(), 0};
    if (!c.a)
        return PyErr_NoMemory();
    const ads_record *rec;
    PyObject *out = NULL;
    if (adspy_record_from_py(&rec, &c, self) == 0) {
        ads_buf b = ADS_BUF_INIT;
        ads_record_unparse(&b, rec);
        out = b.failed ? PyErr_NoMemory() : adspy_str(b.p ? b.p : "", b.len);
        ads_buf_free(&b);
    }
    ads_arena_free(c.a);
    return out;
}

static PyObject *rec_parse(PyObject *cls, PyObject *text)
{
    (void)cls;
    if (!PyUnicode_Check(text))
        return PyErr_Format(PyExc_TypeError, "Record.parse takes a str, not %.100s",
                            Py_TYPE(text)->tp_name);
    ads_arena *a = ads_arena_new();
    if (!a)
        return PyErr_NoMemory();
    ads_str s;
    ads_error err;
    const ads_record *rec;
    PyObject *out = NULL;
    if (adspy_utf8(&s, a, text, "the text") == 0) {
        int rc;
        Py_BEGIN_ALLOW_THREADS
        rc = ads_record_parse(&rec, a, s.p, s.len, &err);
        Py_END_ALLOW_THREADS
        out = rc < 0 ? adspy_raise(&err) : adspy_record_to_py(rec);
    }
    ads_arena_free(a);
    return out;
}

static PyMethodDef rec_methods[] = {
    {"get", (PyCFunction)(void (*)(void))rec_get, METH_FASTCALL,
     "get(name, default=None): the value of name (any case), or default."},
    {"pop", (PyCFunction)(void (*)(void))rec_pop, METH_FASTCALL,
     "pop(name[, default]): remove name (any case) and return its value."},
    {"setdefault", (PyCFunction)(void (*)(void))rec_setdefault, METH_FASTCALL,
     "setdefault(name, default=None): the value of name, set to default if absent."},
    {"update", (PyCFunction)(void (*)(void))rec_update, METH_VARARGS | METH_KEYWORDS,
     "update([other], **kw): assign every name of other and kw."},
    {"keys", rec_keys, METH_NOARGS, "The names as written, in order."},
    {"values", rec_values, METH_NOARGS, "The values, in order."},
    {"items", rec_items, METH_NOARGS, "(name, value) pairs, in order."},
    {"clear", rec_clear_m, METH_NOARGS, "Remove every attribute."},
    {"copy", rec_copy, METH_NOARGS, "A shallow copy."},
    {"to_dict", rec_to_dict, METH_NOARGS, "A plain dict (names as written, case-sensitive)."},
    {"unparse", rec_unparse, METH_NOARGS, "The record as ClassAd text: [ a = 1; b = \"x\" ]."},
    {"parse", rec_parse, METH_O | METH_CLASS,
     "Record.parse(text): the record written in ClassAd text ([ ... ]); ParseError with line "
     "and column."},
    {"__reduce__", rec_reduce, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyMappingMethods rec_mapping = {rec_len, rec_subscript, rec_ass_subscript};
static PySequenceMethods rec_sequence = {.sq_contains = rec_contains};

PyTypeObject adspy_RecordType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "adstore.Record",
    .tp_basicsize = sizeof(adspy_Record),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_BASETYPE |
                Py_TPFLAGS_MAPPING,
    .tp_doc = "Record(mapping=(), **kw): a ClassAd record, a mutable mapping that keeps the "
              "order and first spelling of its names and compares them ignoring ASCII case.",
    .tp_new = rec_new,
    .tp_init = rec_init,
    .tp_dealloc = rec_dealloc,
    .tp_traverse = rec_traverse,
    .tp_clear = rec_clear,
    .tp_repr = rec_repr,
    .tp_richcompare = rec_richcompare,
    .tp_iter = rec_iter,
    .tp_as_mapping = &rec_mapping,
    .tp_as_sequence = &rec_sequence,
    .tp_methods = rec_methods,
    .tp_hash = PyObject_HashNotImplemented,
};

int adspy_record_init_type(PyObject *m)
{
    if (PyType_Ready(&adspy_RecordType) < 0)
        return -1;
    return PyModule_AddObjectRef(m, "Record", (PyObject *)&adspy_RecordType);
}
