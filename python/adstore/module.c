/*
 * python/adstore/module.c: the module adstore._adstore: its functions
 * (open, eval, parse, uuid, the FLUID codec) and its initialisation, which
 * sets up the types of the other files. python/adstore/__init__.py
 * re-exports everything under `adstore`.
 */
#include "_adstore.h"

static PyObject *mod_eval(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *names[] = {"expr", "record", NULL};
    PyObject *expr, *record = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|O:eval", names, &expr, &record))
        return NULL;
    if (PyObject_TypeCheck(expr, &adspy_ExprType))
        return adspy_eval(((adspy_Expr *)expr)->e, record);
    PyObject *e = adspy_expr_parse_py(expr);
    if (!e)
        return NULL;
    PyObject *r = adspy_eval(((adspy_Expr *)e)->e, record);
    Py_DECREF(e);
    return r;
}

static PyObject *mod_parse(PyObject *self, PyObject *text)
{
    (void)self;
    return adspy_expr_parse_py(text);
}

static PyObject *mod_uuid(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    ads_id id;
    ads_error err;
    if (ads_uuid_new(&id, &err) < 0)
        return adspy_raise(&err);
    return adspy_id_new(id);
}

static PyObject *mod_fluid_encode(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *names[] = {"value", "encoding", NULL};
    PyObject *number;
    const char *encoding = "f58";
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O!|s:fluid_encode", names, &PyLong_Type, &number,
                                     &encoding))
        return NULL;
    unsigned long long value = PyLong_AsUnsignedLongLong(number);
    if (value == (unsigned long long)-1 && PyErr_Occurred())
        return NULL;
    ads_fluid_enc enc;
    ads_error err;
    char out[ADS_FLUID_TEXT_MAX + 1];
    if (ads_fluid_enc_parse(&enc, encoding, &err) < 0)
        return adspy_raise(&err);
    int n = ads_fluid_encode(out, sizeof out, value, enc, &err);
    if (n < 0)
        return adspy_raise(&err);
    return PyUnicode_FromStringAndSize(out, n);
}

static PyObject *mod_fluid_decode(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *names[] = {"text", "encoding", NULL};
    const char *text, *encoding = NULL;
    Py_ssize_t len;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "s#|z:fluid_decode", names, &text, &len,
                                     &encoding))
        return NULL;
    uint64_t value;
    ads_error err;
    int rc;
    if (encoding) {
        ads_fluid_enc enc;
        rc = ads_fluid_enc_parse(&enc, encoding, &err);
        if (rc == 0)
            rc = ads_fluid_decode_as(&value, enc, text, (size_t)len, &err);
    } else {
        rc = ads_fluid_decode(&value, NULL, text, (size_t)len, &err);
    }
    if (rc < 0)
        return adspy_raise(&err);
    return PyLong_FromUnsignedLongLong(value);
}

static PyObject *mod_fluid_fields(PyObject *self, PyObject *arg)
{
    (void)self;
    unsigned long long v = PyLong_AsUnsignedLongLong(arg);
    if (v == (unsigned long long)-1 && PyErr_Occurred())
        return NULL;
    uint64_t ts;
    uint32_t generator, seq;
    ads_fluid_unpack(v, &ts, &generator, &seq);
    return Py_BuildValue("(KII)", (unsigned long long)ts, generator, seq);
}

static PyMethodDef module_methods[] = {
    {"open", (PyCFunction)(void (*)(void))adspy_store_open, METH_VARARGS | METH_KEYWORDS,
     "open(path, *, create=True, readonly=False, nosync=False, map_size=0): open (or create) "
     "the store in directory path; a Store."},
    {"eval", (PyCFunction)(void (*)(void))mod_eval, METH_VARARGS | METH_KEYWORDS,
     "eval(expr, record=None): the value of expr (text or an Expr) in record (a Record or "
     "mapping; None: an empty record)."},
    {"parse", mod_parse, METH_O, "parse(text): the Expr written in text (as Expr(text))."},
    {"uuid", mod_uuid, METH_NOARGS, "uuid(): a new random Id (a UUID), needing no store."},
    {"fluid_encode", (PyCFunction)(void (*)(void))mod_fluid_encode, METH_VARARGS | METH_KEYWORDS,
     "fluid_encode(value, encoding='f58'): a FLUID's text in one of the encodings dec, hex, "
     "dothex, f58, f58plain, words, emoji."},
    {"fluid_decode", (PyCFunction)(void (*)(void))mod_fluid_decode, METH_VARARGS | METH_KEYWORDS,
     "fluid_decode(text, encoding=None): the FLUID written in text (the encoding chosen by "
     "its shape unless given)."},
    {"fluid_fields", mod_fluid_fields, METH_O,
     "fluid_fields(value): (timestamp_ms, generator, sequence) of a FLUID."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "adstore._adstore",
    "The C part of adstore: see the adstore package for the documentation.", -1,
    module_methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__adstore(void); /* the one symbol the module exports */
PyMODINIT_FUNC PyInit__adstore(void)
{
    PyObject *m = PyModule_Create(&module_def);
    if (!m)
        return NULL;
    if (adspy_errors_init(m) < 0 || adspy_values_init(m) < 0 || adspy_record_init_type(m) < 0 ||
        adspy_expr_init_type(m) < 0 || adspy_store_init_type(m) < 0 ||
        adspy_cursor_init_type(m) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
