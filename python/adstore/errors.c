/*
 * python/adstore/errors.c: adstore.Error and one subclass per kind of C
 * error (base/error.h). Every exception carries the library's message, the
 * line and column of text input (0 when not about text) and the code's name;
 * str() of one reads "line L, column C: message" for text.
 */
#include "_adstore.h"

#include <stdarg.h>

PyObject *adspy_Error;
PyObject *adspy_NotSupportedError;

typedef struct {
    int code;
    const char *name;  /* the class name in the module */
    const char *extra; /* a built-in base it also derives from, or NULL */
    const char *doc;
    PyObject *cls;
} error_class;

static error_class classes[] = {
    {ADS_EINVAL, "InvalidError", "ValueError", "A bad argument, or a record the store refuses.", NULL},
    {ADS_ESYNTAX, "ParseError", NULL, "Text that does not parse; line and column are set.", NULL},
    {ADS_ERANGE, "RangeError", "OverflowError", "A value outside what its field can hold.", NULL},
    {ADS_ELIMIT, "LimitError", NULL, "A size, depth, count, memory or time limit was reached.", NULL},
    {ADS_ENOMEM, "OutOfMemoryError", "MemoryError", "Memory ran out.", NULL},
    {ADS_EIO, "SystemCallError", "OSError", "An operating system call failed.", NULL},
    {ADS_ESTORAGE, "StorageError", NULL, "The storage layer (LMDB) failed.", NULL},
    {ADS_ECORRUPT, "CorruptError", NULL, "Stored or encoded bytes fail their checks.", NULL},
    {ADS_EVERSION, "VersionError", NULL, "A format version this build does not know.", NULL},
    {ADS_ENOTFOUND, "NotFoundError", "LookupError", "An unknown type, sequence or store.", NULL},
    {ADS_EEXIST, "ExistsError", NULL, "A change refused because of what exists.", NULL},
    {ADS_EFORK, "ForkError", NULL, "Generator state inherited through fork().", NULL},
    {ADS_EREADONLY, "ReadOnlyError", NULL, "A write through a read-only store or transaction.", NULL},
    {ADS_EMAPFULL, "MapFullError", NULL, "The store's map filled up.", NULL},
    {ADS_EBUSY, "BusyError", NULL, "The store is in use in a way the call cannot wait out.", NULL},
};

static PyObject *builtin_base(const char *name)
{
    PyObject *builtins = PyEval_GetBuiltins(); /* borrowed */
    return builtins ? PyDict_GetItemString(builtins, name) : NULL;
}

static PyObject *new_class(PyObject *m, const char *name, const char *doc, PyObject *bases,
                           PyObject *dict)
{
    char qual[96];
    snprintf(qual, sizeof qual, "adstore.%s", name);
    PyObject *cls = PyErr_NewExceptionWithDoc(qual, doc, bases, dict);
    if (!cls)
        return NULL;
    if (PyModule_AddObjectRef(m, name, cls) < 0) {
        Py_DECREF(cls);
        return NULL;
    }
    return cls; /* the module keeps a reference, so does this file */
}

int adspy_errors_init(PyObject *m)
{
    /* Defaults for an Error raised by Python code. */
    PyObject *dict = Py_BuildValue("{s:O,s:i,s:i,s:s}", "message", Py_None, "line", 0, "column",
                                   0, "code", "error");
    if (!dict)
        return -1;
    adspy_Error = new_class(m, "Error",
                            "Base of every adstore error: message, line, column (1-based, 0 when "
                            "not about text) and code (the error's kind, as a string).",
                            NULL, dict);
    Py_DECREF(dict);
    if (!adspy_Error)
        return -1;
    for (size_t i = 0; i < sizeof classes / sizeof classes[0]; i++) {
        error_class *ec = &classes[i];
        PyObject *extra = ec->extra ? builtin_base(ec->extra) : NULL;
        PyObject *bases = extra ? PyTuple_Pack(2, adspy_Error, extra) : PyTuple_Pack(1, adspy_Error);
        if (!bases)
            return -1;
        ec->cls = new_class(m, ec->name, ec->doc, bases, NULL);
        Py_DECREF(bases);
        if (!ec->cls)
            return -1;
    }
    PyObject *bases = PyTuple_Pack(2, adspy_Error, PyExc_NotImplementedError);
    if (!bases)
        return -1;
    adspy_NotSupportedError =
        new_class(m, "NotSupportedError", "What this build of adstore cannot do yet.", bases, NULL);
    Py_DECREF(bases);
    return adspy_NotSupportedError ? 0 : -1;
}

static PyObject *class_of(int code)
{
    for (size_t i = 0; i < sizeof classes / sizeof classes[0]; i++)
        if (classes[i].code == code)
            return classes[i].cls;
    return adspy_Error;
}

static int set_attr_int(PyObject *o, const char *name, long v)
{
    PyObject *x = PyLong_FromLong(v);
    if (!x)
        return -1;
    int rc = PyObject_SetAttrString(o, name, x);
    Py_DECREF(x);
    return rc;
}

static PyObject *raise_with(PyObject *cls, int code, const char *msg, int line, int column)
{
    PyObject *text = line > 0 ? PyUnicode_FromFormat("line %d, column %d: %s", line, column, msg)
                              : PyUnicode_FromString(msg);
    if (!text) {
        /* A message cut in the middle of a UTF-8 sequence: keep what reads. */
        PyErr_Clear();
        text = PyUnicode_DecodeUTF8(msg, (Py_ssize_t)strlen(msg), "replace");
        if (!text)
            return NULL;
    }
    PyObject *exc = PyObject_CallOneArg(cls, text);
    Py_DECREF(text);
    if (!exc)
        return NULL;
    PyObject *bare = PyUnicode_DecodeUTF8(msg, (Py_ssize_t)strlen(msg), "replace");
    PyObject *cname = PyUnicode_FromString(ads_strerror(code));
    if (!bare || !cname || PyObject_SetAttrString(exc, "message", bare) < 0 ||
        PyObject_SetAttrString(exc, "code", cname) < 0 || set_attr_int(exc, "line", line) < 0 ||
        set_attr_int(exc, "column", column) < 0) {
        Py_XDECREF(bare);
        Py_XDECREF(cname);
        Py_DECREF(exc);
        return NULL;
    }
    Py_DECREF(bare);
    Py_DECREF(cname);
    PyErr_SetObject(cls, exc);
    Py_DECREF(exc);
    return NULL;
}

PyObject *adspy_raise(const ads_error *err)
{
    int code = err->code ? err->code : ADS_EINVAL;
    const char *msg = err->message[0] ? err->message : ads_strerror(code);
    return raise_with(class_of(code), code, msg, err->line, err->column);
}

PyObject *adspy_raise_code(int rc, const char *fmt, ...)
{
    ads_error err;
    va_list ap;
    va_start(ap, fmt);
    ads_error_vset(&err, rc, 0, 0, fmt, ap);
    va_end(ap);
    return adspy_raise(&err);
}
