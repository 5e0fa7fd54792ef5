/*
 * python/adstore/expr.c: adstore.Expr, a parsed ClassAd expression: parse
 * (Expr(text)), evaluate in a record (eval), write back (str, unparse).
 * Each Expr owns the arena its tree lives in; trees are immutable, so an
 * Expr may be evaluated from several threads at once.
 */
#include "_adstore.h"

static adspy_Expr *expr_alloc(PyTypeObject *type)
{
    adspy_Expr *o = (adspy_Expr *)type->tp_alloc(type, 0);
    if (!o)
        return NULL;
    o->a = ads_arena_new();
    if (!o->a) {
        Py_DECREF(o);
        PyErr_NoMemory();
        return NULL;
    }
    return o;
}

static PyObject *parse_into(PyTypeObject *type, const char *p, size_t len)
{
    adspy_Expr *o = expr_alloc(type);
    if (!o)
        return NULL;
    ads_error err;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = ads_expr_parse(&o->e, o->a, p, len, &err);
    Py_END_ALLOW_THREADS
    if (rc < 0) {
        Py_DECREF(o);
        return adspy_raise(&err);
    }
    return (PyObject *)o;
}

PyObject *adspy_expr_copy(const ads_expr *e)
{
    ads_buf b = ADS_BUF_INIT;
    ads_expr_unparse(&b, e);
    PyObject *r = b.failed ? PyErr_NoMemory()
                           : parse_into(&adspy_ExprType, b.p ? b.p : "", b.len);
    ads_buf_free(&b);
    return r;
}

static PyObject *parse_text(PyTypeObject *type, PyObject *text)
{
    ads_arena *tmp = ads_arena_new();
    if (!tmp)
        return PyErr_NoMemory();
    ads_str s;
    PyObject *r = NULL;
    if (adspy_utf8(&s, tmp, text, "an expression's text") == 0)
        r = parse_into(type, s.p, s.len);
    ads_arena_free(tmp);
    return r;
}

PyObject *adspy_expr_parse_py(PyObject *text)
{
    return parse_text(&adspy_ExprType, text);
}

PyObject *adspy_eval(const ads_expr *e, PyObject *record)
{
    adspy_conv c = {ads_arena_new(), 0};
    if (!c.a)
        return PyErr_NoMemory();
    const ads_record *rec = NULL;
    PyObject *out = NULL;
    if (record == Py_None || adspy_record_from_py(&rec, &c, record) == 0) {
        ads_view view;
        if (rec)
            view = ads_record_view(rec, NULL);
        ads_value v;
        int rc;
        Py_BEGIN_ALLOW_THREADS
        rc = ads_expr_eval(&v, e, rec ? &view : NULL, c.a);
        Py_END_ALLOW_THREADS
        out = rc < 0 ? PyErr_NoMemory() : adspy_value_to_py(&v);
    }
    ads_arena_free(c.a);
    return out;
}

/* ---- type -------------------------------------------------------------- */

static PyObject *expr_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    static char *names[] = {"text", NULL};
    PyObject *text;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O:Expr", names, &text))
        return NULL;
    if (PyObject_TypeCheck(text, &adspy_ExprType))
        return Py_NewRef(text);
    return parse_text(type, text);
}

static void expr_dealloc(PyObject *self)
{
    ads_arena_free(((adspy_Expr *)self)->a);
    Py_TYPE(self)->tp_free(self);
}

static PyObject *expr_str(PyObject *self)
{
    ads_buf b = ADS_BUF_INIT;
    ads_expr_unparse(&b, ((adspy_Expr *)self)->e);
    PyObject *r = b.failed ? PyErr_NoMemory() : adspy_str(b.p ? b.p : "", b.len);
    ads_buf_free(&b);
    return r;
}

static PyObject *expr_repr(PyObject *self)
{
    PyObject *s = expr_str(self);
    if (!s)
        return NULL;
    PyObject *r = PyUnicode_FromFormat("adstore.Expr(%R)", s);
    Py_DECREF(s);
    return r;
}

static PyObject *expr_richcompare(PyObject *a, PyObject *b, int op)
{
    if ((op != Py_EQ && op != Py_NE) || !PyObject_TypeCheck(b, &adspy_ExprType))
        Py_RETURN_NOTIMPLEMENTED;
    bool eq = ads_expr_equal(((adspy_Expr *)a)->e, ((adspy_Expr *)b)->e);
    return PyBool_FromLong(op == Py_EQ ? eq : !eq);
}

static PyObject *expr_eval_m(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *names[] = {"record", NULL};
    PyObject *record = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|O:eval", names, &record))
        return NULL;
    return adspy_eval(((adspy_Expr *)self)->e, record);
}

static PyObject *expr_unparse_m(PyObject *self, PyObject *unused)
{
    (void)unused;
    return expr_str(self);
}

static PyObject *expr_condor(PyObject *self, PyObject *unused)
{
    (void)unused;
    ads_buf b = ADS_BUF_INIT;
    ads_expr_unparse_condor(&b, ((adspy_Expr *)self)->e);
    PyObject *r = b.failed ? PyErr_NoMemory() : adspy_str(b.p ? b.p : "", b.len);
    ads_buf_free(&b);
    return r;
}

static PyObject *expr_reduce(PyObject *self, PyObject *unused)
{
    (void)unused;
    PyObject *s = expr_str(self);
    return s ? Py_BuildValue("(O(N))", (PyObject *)&adspy_ExprType, s) : NULL;
}

static PyMethodDef expr_methods[] = {
    {"eval", (PyCFunction)(void (*)(void))expr_eval_m, METH_VARARGS | METH_KEYWORDS,
     "eval(record=None): the value of the expression in record (a Record or mapping; None: "
     "an empty record). Lists and records come back evaluated."},
    {"unparse", expr_unparse_m, METH_NOARGS, "The expression as adstore writes it (as str())."},
    {"unparse_condor", expr_condor, METH_NOARGS, "The expression in HTCondor's spelling."},
    {"__reduce__", expr_reduce, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

PyTypeObject adspy_ExprType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "adstore.Expr",
    .tp_basicsize = sizeof(adspy_Expr),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Expr(text): a parsed ClassAd expression (ParseError with line and column if "
              "text does not parse). str() writes it back; == compares trees (names ignoring "
              "case).",
    .tp_new = expr_new,
    .tp_dealloc = expr_dealloc,
    .tp_str = expr_str,
    .tp_repr = expr_repr,
    .tp_richcompare = expr_richcompare,
    .tp_hash = PyObject_HashNotImplemented,
    .tp_methods = expr_methods,
};

int adspy_expr_init_type(PyObject *m)
{
    if (PyType_Ready(&adspy_ExprType) < 0)
        return -1;
    return PyModule_AddObjectRef(m, "Expr", (PyObject *)&adspy_ExprType);
}
