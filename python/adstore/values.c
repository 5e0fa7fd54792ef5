/*
 * python/adstore/values.c: ClassAd values as Python objects and back.
 *
 *   undefined  None                  error     adstore.ERROR (the one ErrorValue)
 *   boolean    bool                  integer   int (64-bit; larger is RangeError)
 *   real       float                 string    str (bytes that are not UTF-8 come
 *   list       list (tuple accepted)            and go as lone surrogates, PEP 383)
 *   record     adstore.Record (any mapping with str keys accepted)
 *   abstime    datetime with tzinfo (a fixed offset; naive datetimes are refused)
 *   reltime    timedelta             identifier  adstore.Id
 *   blob       bytes (bytearray and memoryview accepted), or adstore.Blob when it
 *              carries a metadata record
 *   expression adstore.Expr, for a record's attribute that is not a plain value
 *
 * Times: both types count whole microseconds. An AbsTime or RelTime is
 * rounded to the microsecond on the way out, and a time from Python is
 * exactly its microseconds over 10^6, so Python -> ClassAd -> Python gives
 * back an equal object and ClassAd -> Python -> ClassAd the same double for
 * every time with microsecond precision.
 */
#include "_adstore.h"

#include <datetime.h>
#include <math.h>
#include <string.h>
#include <strings.h>

PyObject *adspy_ERROR;

/* ---- strings ----------------------------------------------------------- */

PyObject *adspy_str(const char *p, size_t len)
{
    return PyUnicode_DecodeUTF8(p, (Py_ssize_t)len, "surrogateescape");
}

int adspy_utf8(ads_str *out, ads_arena *a, PyObject *o, const char *what)
{
    if (!PyUnicode_Check(o)) {
        PyErr_Format(PyExc_TypeError, "%s must be a str, not %.100s", what, Py_TYPE(o)->tp_name);
        return -1;
    }
    Py_ssize_t n;
    const char *p = PyUnicode_AsUTF8AndSize(o, &n);
    PyObject *bytes = NULL;
    if (!p) {
        PyErr_Clear();
        bytes = PyUnicode_AsEncodedString(o, "utf-8", "surrogateescape");
        if (!bytes)
            return -1;
        p = PyBytes_AS_STRING(bytes);
        n = PyBytes_GET_SIZE(bytes);
    }
    char *copy = ads_arena_strndup(a, p, (size_t)n);
    Py_XDECREF(bytes);
    if (!copy) {
        PyErr_NoMemory();
        return -1;
    }
    out->p = copy;
    out->len = (size_t)n;
    return 0;
}

/* ---- the ERROR sentinel ------------------------------------------------ */

typedef struct {
    PyObject_HEAD
} adspy_ErrorValue;

static PyObject *errval_repr(PyObject *self)
{
    (void)self;
    return PyUnicode_FromString("adstore.ERROR");
}

static PyObject *errval_reduce(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    return PyUnicode_FromString("ERROR");
}

static PyMethodDef errval_methods[] = {
    {"__reduce__", errval_reduce, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

PyTypeObject adspy_ErrorValueType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "adstore.ErrorValue",
    .tp_basicsize = sizeof(adspy_ErrorValue),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "The type of adstore.ERROR, the ClassAd value `error` (there is one).",
    .tp_repr = errval_repr,
    .tp_methods = errval_methods,
};

/* ---- Id ---------------------------------------------------------------- */

PyObject *adspy_id_new(ads_id id)
{
    adspy_Id *o = PyObject_New(adspy_Id, &adspy_IdType);
    if (o)
        o->id = id;
    return (PyObject *)o;
}

static PyObject *id_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    static char *names[] = {"text", NULL};
    PyObject *text;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "U:Id", names, &text))
        return NULL;
    Py_ssize_t n;
    const char *p = PyUnicode_AsUTF8AndSize(text, &n);
    if (!p)
        return NULL;
    ads_error err;
    ads_id id;
    if (ads_id_parse(&id, p, (size_t)n, ADS_ID_PARSE_HASH_OPTIONAL, &err) < 0)
        return adspy_raise(&err);
    adspy_Id *o = (adspy_Id *)type->tp_alloc(type, 0);
    if (o)
        o->id = id;
    return (PyObject *)o;
}

static PyObject *id_str(PyObject *self)
{
    char buf[ADS_ID_TEXT_MAX + 1];
    size_t n = ads_id_format(buf, ((adspy_Id *)self)->id);
    return PyUnicode_FromStringAndSize(buf, (Py_ssize_t)n);
}

static PyObject *id_repr(PyObject *self)
{
    PyObject *s = id_str(self);
    if (!s)
        return NULL;
    PyObject *r = PyUnicode_FromFormat("adstore.Id(%R)", s);
    Py_DECREF(s);
    return r;
}

static Py_hash_t id_hash(PyObject *self)
{
    ads_id id = ((adspy_Id *)self)->id;
    Py_hash_t h = (Py_hash_t)(id.hi * UINT64_C(0x9e3779b97f4a7c15) ^ id.lo);
    return h == -1 ? -2 : h;
}

static PyObject *id_richcompare(PyObject *a, PyObject *b, int op)
{
    if (!PyObject_TypeCheck(a, &adspy_IdType) || !PyObject_TypeCheck(b, &adspy_IdType))
        Py_RETURN_NOTIMPLEMENTED;
    int c = ads_id_cmp(((adspy_Id *)a)->id, ((adspy_Id *)b)->id);
    Py_RETURN_RICHCOMPARE(c, 0, op);
}

static PyObject *id_get_kind(PyObject *self, void *unused)
{
    (void)unused;
    return PyUnicode_FromString(ads_id_kind_name(ads_id_kind_of(((adspy_Id *)self)->id)));
}

static PyObject *id_int(PyObject *self)
{
    ads_id id = ((adspy_Id *)self)->id;
    PyObject *hi = PyLong_FromUnsignedLongLong(id.hi);
    PyObject *lo = PyLong_FromUnsignedLongLong(id.lo);
    PyObject *sh = PyLong_FromLong(64);
    PyObject *r = NULL, *t = NULL;
    if (hi && lo && sh && (t = PyNumber_Lshift(hi, sh)))
        r = PyNumber_Or(t, lo);
    Py_XDECREF(hi);
    Py_XDECREF(lo);
    Py_XDECREF(sh);
    Py_XDECREF(t);
    return r;
}

static PyObject *id_reduce(PyObject *self, PyObject *unused)
{
    (void)unused;
    PyObject *s = id_str(self);
    if (!s)
        return NULL;
    PyObject *r = Py_BuildValue("(O(N))", (PyObject *)Py_TYPE(self), s);
    return r;
}

static PyGetSetDef id_getset[] = {
    {"kind", id_get_kind, NULL, "'ordered' (OUID), 'random' (UUID) or 'increment' (LUID).", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMethodDef id_methods[] = {
    {"__reduce__", id_reduce, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyNumberMethods id_number = {.nb_int = id_int, .nb_index = id_int};

PyTypeObject adspy_IdType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "adstore.Id",
    .tp_basicsize = sizeof(adspy_Id),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Id(text): a ClassAd identifier (OUID, UUID or LUID), from its text with or "
              "without the leading '#'. str() gives the text; int() the 128-bit number.",
    .tp_new = id_new,
    .tp_str = id_str,
    .tp_repr = id_repr,
    .tp_hash = id_hash,
    .tp_richcompare = id_richcompare,
    .tp_getset = id_getset,
    .tp_methods = id_methods,
    .tp_as_number = &id_number,
};

/* ---- Blob (bytes with a metadata record) -------------------------------- */

static PyObject *blob_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    static char *names[] = {"data", "meta", NULL};
    PyObject *data, *meta = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|O:Blob", names, &data, &meta))
        return NULL;
    PyObject *bytes = PyBytes_FromObject(data);
    if (!bytes)
        return NULL;
    PyObject *rec;
    if (meta == Py_None) {
        rec = Py_NewRef(Py_None);
    } else if (PyObject_TypeCheck(meta, &adspy_RecordType)) {
        rec = Py_NewRef(meta);
    } else {
        rec = PyObject_CallOneArg((PyObject *)&adspy_RecordType, meta);
        if (!rec) {
            Py_DECREF(bytes);
            return NULL;
        }
    }
    adspy_Blob *o = (adspy_Blob *)type->tp_alloc(type, 0);
    if (!o) {
        Py_DECREF(bytes);
        Py_DECREF(rec);
        return NULL;
    }
    o->data = bytes;
    o->meta = rec;
    return (PyObject *)o;
}

static void blob_dealloc(PyObject *self)
{
    adspy_Blob *o = (adspy_Blob *)self;
    Py_XDECREF(o->data);
    Py_XDECREF(o->meta);
    Py_TYPE(self)->tp_free(self);
}

static PyObject *blob_repr(PyObject *self)
{
    adspy_Blob *o = (adspy_Blob *)self;
    return PyUnicode_FromFormat("adstore.Blob(%R, %R)", o->data, o->meta);
}

static PyObject *blob_richcompare(PyObject *a, PyObject *b, int op)
{
    if ((op != Py_EQ && op != Py_NE) || !PyObject_TypeCheck(b, &adspy_BlobType))
        Py_RETURN_NOTIMPLEMENTED;
    adspy_Blob *x = (adspy_Blob *)a, *y = (adspy_Blob *)b;
    int eq = PyObject_RichCompareBool(x->data, y->data, Py_EQ);
    if (eq == 1)
        eq = PyObject_RichCompareBool(x->meta, y->meta, Py_EQ);
    if (eq < 0)
        return NULL;
    return PyBool_FromLong(op == Py_EQ ? eq : !eq);
}

static PyMemberDef blob_members[] = {
    {"data", T_OBJECT, offsetof(adspy_Blob, data), READONLY, "The bytes."},
    {"meta", T_OBJECT, offsetof(adspy_Blob, meta), READONLY, "The metadata Record, or None."},
    {NULL, 0, 0, 0, NULL},
};

PyTypeObject adspy_BlobType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "adstore.Blob",
    .tp_basicsize = sizeof(adspy_Blob),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Blob(data, meta=None): a ClassAd blob with a metadata record (a blob without "
              "one is plain bytes).",
    .tp_new = blob_new,
    .tp_dealloc = blob_dealloc,
    .tp_repr = blob_repr,
    .tp_richcompare = blob_richcompare,
    .tp_members = blob_members,
};

/* ---- times ------------------------------------------------------------- */

/* Days since 1970-01-01 of a proleptic Gregorian date, and back (the
 * well-known era arithmetic: 400-year eras of 146097 days). */
static int64_t days_from_civil(int64_t y, int m, int d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static void civil_from_days(int64_t z, int64_t *y, int *m, int *d)
{
    z += 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    *d = (int)(doy - (153 * mp + 2) / 5 + 1);
    *m = (int)(mp < 10 ? mp + 3 : mp - 9);
    *y = yoe + era * 400 + (*m <= 2);
}

static int64_t floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

/* Whole microseconds of secs, or -1 with RangeError (NaN, infinite, or
 * beyond what 64 bits of microseconds hold). */
static int to_micros(int64_t *out, double secs, const char *what)
{
    double us = secs * 1e6;
    if (!isfinite(us) || fabs(us) >= 9.2e18) {
        adspy_raise_code(ADS_ERANGE, "%s %g seconds has no Python equivalent", what, secs);
        return -1;
    }
    *out = llround(us);
    return 0;
}

static PyObject *tz_of(int32_t offset)
{
    if (offset == 0)
        return Py_NewRef(PyDateTime_TimeZone_UTC);
    PyObject *delta = PyDelta_FromDSU(0, offset, 0);
    if (!delta)
        return NULL;
    PyObject *tz = PyTimeZone_FromOffset(delta);
    Py_DECREF(delta);
    return tz;
}

static PyObject *abstime_to_py(double secs, int32_t offset)
{
    int64_t us;
    if (to_micros(&us, secs, "AbsTime") < 0)
        return NULL;
    int64_t local = floor_div(us, 1000000) + offset;
    int64_t frac = us - floor_div(us, 1000000) * 1000000;
    int64_t days = floor_div(local, 86400), sod = local - days * 86400;
    int64_t y;
    int m, d;
    civil_from_days(days, &y, &m, &d);
    if (y < 1 || y > 9999)
        return adspy_raise_code(ADS_ERANGE, "AbsTime %.17g is outside the years 1 to 9999 that "
                                "datetime holds", secs);
    PyObject *tz = tz_of(offset);
    if (!tz)
        return NULL;
    PyObject *dt = PyDateTimeAPI->DateTime_FromDateAndTime(
        (int)y, m, d, (int)(sod / 3600), (int)(sod / 60 % 60), (int)(sod % 60), (int)frac, tz,
        PyDateTimeAPI->DateTimeType);
    Py_DECREF(tz);
    return dt;
}

static PyObject *reltime_to_py(double secs)
{
    int64_t us;
    if (to_micros(&us, secs, "RelTime") < 0)
        return NULL;
    int64_t days = floor_div(us, INT64_C(86400000000));
    int64_t rest = us - days * INT64_C(86400000000);
    return PyDelta_FromDSU((int)days, (int)(rest / 1000000), (int)(rest % 1000000));
}

static int abstime_from_py(ads_value *out, PyObject *o)
{
    PyObject *off = PyObject_CallMethod(o, "utcoffset", NULL);
    if (!off)
        return -1;
    if (off == Py_None) {
        Py_DECREF(off);
        PyErr_SetString(PyExc_ValueError,
                        "a datetime without a timezone has no AbsTime: give it a tzinfo "
                        "(datetime.timezone.utc, for one)");
        return -1;
    }
    int64_t offset = (int64_t)PyDateTime_DELTA_GET_DAYS(off) * 86400 +
                     PyDateTime_DELTA_GET_SECONDS(off);
    int off_us = PyDateTime_DELTA_GET_MICROSECONDS(off);
    Py_DECREF(off);
    if (off_us != 0) {
        PyErr_SetString(PyExc_ValueError, "an AbsTime's zone offset is whole seconds");
        return -1;
    }
    int64_t days = days_from_civil(PyDateTime_GET_YEAR(o), PyDateTime_GET_MONTH(o),
                                   PyDateTime_GET_DAY(o));
    int64_t local = days * 86400 + PyDateTime_DATE_GET_HOUR(o) * 3600 +
                    PyDateTime_DATE_GET_MINUTE(o) * 60 + PyDateTime_DATE_GET_SECOND(o);
    int64_t us = (local - offset) * 1000000 + PyDateTime_DATE_GET_MICROSECOND(o);
    *out = ads_abstime((double)us / 1e6, (int32_t)offset);
    return 0;
}

static int reltime_from_py(ads_value *out, PyObject *o)
{
    int64_t days = PyDateTime_DELTA_GET_DAYS(o);
    /* |days| <= 999999999: 8.64e19 microseconds would overflow, 1e14 days of seconds not. */
    double us = (double)days * 86400e6 + (double)PyDateTime_DELTA_GET_SECONDS(o) * 1e6 +
                PyDateTime_DELTA_GET_MICROSECONDS(o);
    if (fabs(us) >= 9.2e18) {
        adspy_raise_code(ADS_ERANGE, "timedelta of %lld days is beyond a RelTime's microseconds",
                         (long long)days);
        return -1;
    }
    int64_t whole = days * INT64_C(86400000000) +
                    (int64_t)PyDateTime_DELTA_GET_SECONDS(o) * 1000000 +
                    PyDateTime_DELTA_GET_MICROSECONDS(o);
    *out = ads_reltime((double)whole / 1e6);
    return 0;
}

/* ---- ClassAd -> Python ------------------------------------------------- */

static PyObject *list_to_py(const ads_value *items, size_t n)
{
    PyObject *l = PyList_New((Py_ssize_t)n);
    if (!l)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        PyObject *x = adspy_value_to_py(&items[i]);
        if (!x) {
            Py_DECREF(l);
            return NULL;
        }
        PyList_SET_ITEM(l, (Py_ssize_t)i, x);
    }
    return l;
}

static PyObject *blob_to_py(const ads_blob *b)
{
    PyObject *data = PyBytes_FromStringAndSize(b->bytes.p, (Py_ssize_t)b->bytes.len);
    if (!data || !b->meta)
        return data;
    PyObject *meta = adspy_record_to_py(b->meta);
    if (!meta) {
        Py_DECREF(data);
        return NULL;
    }
    adspy_Blob *o = PyObject_New(adspy_Blob, &adspy_BlobType);
    if (!o) {
        Py_DECREF(data);
        Py_DECREF(meta);
        return NULL;
    }
    o->data = data;
    o->meta = meta;
    return (PyObject *)o;
}

/* Lists, records and blobs (whose metadata is a record) nest: only they
 * need the recursion guard, so a scalar costs no more than its object. */
static PyObject *nested_to_py(const ads_value *v)
{
    if (Py_EnterRecursiveCall(" converting a ClassAd value"))
        return NULL;
    PyObject *r;
    if (v->type == ADS_LIST)
        r = list_to_py(v->u.list.items, v->u.list.n);
    else if (v->type == ADS_RECORD)
        r = adspy_record_to_py(v->u.rec);
    else
        r = blob_to_py(v->u.blob);
    Py_LeaveRecursiveCall();
    return r;
}

PyObject *adspy_value_to_py(const ads_value *v)
{
    switch (v->type) {
    case ADS_UNDEFINED: return Py_NewRef(Py_None);
    case ADS_ERROR: return Py_NewRef(adspy_ERROR);
    case ADS_BOOLEAN: return PyBool_FromLong(v->u.b);
    case ADS_INTEGER: return PyLong_FromLongLong(v->u.i);
    case ADS_REAL: return PyFloat_FromDouble(v->u.r);
    case ADS_STRING: return adspy_str(v->u.s.p, v->u.s.len);
    case ADS_LIST:
    case ADS_RECORD:
    case ADS_BLOB: return nested_to_py(v);
    case ADS_ABSTIME: return abstime_to_py(v->u.abs.secs, v->u.abs.offset);
    case ADS_RELTIME: return reltime_to_py(v->u.rel);
    case ADS_IDENT: return adspy_id_new(v->u.id);
    }
    return adspy_raise_code(ADS_ECORRUPT, "a value of unknown type %d", (int)v->type);
}

/* A list node whose elements are all plain: comes out as a Python list. A
 * record node always comes out as a Record (its members decide for
 * themselves). Anything else is an expression. */
static bool value_spelling(const ads_expr *e);

static bool expr_plain(const ads_expr *e)
{
    if (ads_expr_literal_value(e) || value_spelling(e))
        return true;
    switch (ads_expr_kind_of(e)) {
    case ADS_X_RECORD:
        return true;
    case ADS_X_LIST:
        for (size_t i = 0; i < ads_expr_nargs(e); i++)
            if (!expr_plain(ads_expr_arg(e, i)))
                return false;
        return true;
    default:
        return false;
    }
}

/* How unparse writes the values that have no literal in the language:
 * real("INF"), blob("...", [meta]), a negative number, absTime(...),
 * relTime(...). Such a node read back from text is the value it spells. */
static bool value_spelling(const ads_expr *e)
{
    ads_expr_kind k = ads_expr_kind_of(e);
    if (k == ADS_X_UNARY)
        return !strcmp(ads_expr_op(e), "-") && ads_expr_literal_value(ads_expr_arg(e, 0));
    if (k != ADS_X_CALL)
        return false;
    static const char *const fns[] = {"real", "blob", "absTime", "relTime"};
    ads_str name = ads_expr_name(e);
    bool known = false;
    for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++)
        if (name.len == strlen(fns[i]) && !strncasecmp(name.p, fns[i], name.len))
            known = true;
    if (!known)
        return false;
    for (size_t i = 0; i < ads_expr_nargs(e); i++) {
        const ads_expr *arg = ads_expr_arg(e, i);
        if (!ads_expr_literal_value(arg) && ads_expr_kind_of(arg) != ADS_X_RECORD)
            return false;
    }
    return true;
}

/* The value e spells (see value_spelling), or NULL with no exception set
 * when it is no such value after all. */
static PyObject *spelled_value(const ads_expr *e)
{
    ads_arena *a = ads_arena_new();
    if (!a)
        return PyErr_NoMemory();
    ads_value v;
    PyObject *r = NULL;
    if (ads_expr_eval(&v, e, NULL, a) == 0 && v.type != ADS_ERROR)
        r = adspy_value_to_py(&v);
    ads_arena_free(a);
    return r;
}

PyObject *adspy_expr_to_py(const ads_expr *e)
{
    const ads_value *lit = ads_expr_literal_value(e);
    if (lit)
        return adspy_value_to_py(lit);
    if (value_spelling(e)) {
        PyObject *v = spelled_value(e);
        if (v || PyErr_Occurred())
            return v;
    }
    if (!expr_plain(e))
        return adspy_expr_copy(e);
    if (Py_EnterRecursiveCall(" converting a ClassAd expression"))
        return NULL;
    PyObject *r;
    if (ads_expr_kind_of(e) == ADS_X_RECORD) {
        r = adspy_record_to_py(ads_expr_record(e));
    } else {
        size_t n = ads_expr_nargs(e);
        r = PyList_New((Py_ssize_t)n);
        for (size_t i = 0; r && i < n; i++) {
            PyObject *x = adspy_expr_to_py(ads_expr_arg(e, i));
            if (!x) {
                Py_CLEAR(r);
                break;
            }
            PyList_SET_ITEM(r, (Py_ssize_t)i, x);
        }
    }
    Py_LeaveRecursiveCall();
    return r;
}

void adspy_names_clear(adspy_names *names)
{
    for (size_t i = 0; i < ADS_PY_NAME_CACHE; i++) {
        Py_CLEAR(names->pos[i].s);
        Py_CLEAR(names->slot[i].s);
        Py_CLEAR(names->value[i].s);
    }
    Py_CLEAR(names->layout);
    names->layout_n = 0;
}

static bool cached_is(const adspy_cached *c, ads_str b)
{
    return c->s && c->len == b.len && memcmp(c->bytes, b.p, b.len) == 0;
}

/* Keep s, the str of b's bytes (b.len <= ADS_PY_NAME_CACHE_LEN), in c. */
static void cache_keep(adspy_cached *c, PyObject *s, ads_str b)
{
    Py_XSETREF(c->s, Py_NewRef(s));
    c->len = b.len;
    memcpy(c->bytes, b.p, b.len);
}

/* The str of b's bytes, made and kept in c. */
static PyObject *cache_put(adspy_cached *c, ads_str b)
{
    PyObject *s = adspy_str(b.p, b.len);
    if (s)
        cache_keep(c, s, b);
    return s;
}

/* The slot of cache (ADS_PY_NAME_CACHE of them) for b's bytes. */
static adspy_cached *hashed_slot(adspy_cached *cache, ads_str b)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (size_t i = 0; i < b.len; i++)
        h = (h ^ (unsigned char)b.p[i]) * 16777619u;
    return &cache[h & (ADS_PY_NAME_CACHE - 1)];
}

_Static_assert(ADS_PY_VALUE_CACHE_LEN <= ADS_PY_NAME_CACHE_LEN, "values are kept as names are");

/* The str of a short string value's bytes, from names when it has it. */
static PyObject *cached_value(adspy_names *names, ads_str b)
{
    adspy_cached *c = hashed_slot(names->value, b);
    return cached_is(c, b) ? Py_NewRef(c->s) : cache_put(c, b);
}

/* The str of the name at position i of a row, from names when it has it:
 * where the last row had it, else by its hash. */
static PyObject *cached_name(adspy_names *names, size_t i, ads_str b)
{
    if (b.len > ADS_PY_NAME_CACHE_LEN)
        return adspy_str(b.p, b.len);
    adspy_cached *at = &names->pos[i];
    if (cached_is(at, b))
        return Py_NewRef(at->s);
    adspy_cached *c = hashed_slot(names->slot, b);
    PyObject *s = cached_is(c, b) ? Py_NewRef(c->s) : cache_put(c, b);
    if (s)
        cache_keep(at, s, b);
    return s;
}

/* One attribute of a row, as read from a record or straight from a
 * statement's row (adspy_row_attrs): a plain value, or an expression. */
typedef struct row_attr {
    ads_str name;
    ads_value value;
    const ads_expr *expr; /* NULL: value */
} row_attr;

/* The value of attribute at of a row: short strings from names. */
static PyObject *attr_to_py(const row_attr *at, adspy_names *names)
{
    if (at->expr)
        return adspy_expr_to_py(at->expr);
    if (at->value.type == ADS_STRING && at->value.u.s.len <= ADS_PY_VALUE_CACHE_LEN)
        return cached_value(names, at->value.u.s);
    return adspy_value_to_py(&at->value);
}

/* names->layout: the names of the row just made (each the str names->pos
 * holds), each mapped to its position: the index of split Records
 * (record.c), shared by the rows that list the same names. */
static PyObject *layout_keep(adspy_names *names, PyObject *const *keys, size_t n)
{
    PyObject *d = PyDict_New();
    for (size_t i = 0; d && i < n; i++) {
        PyObject *at = PyLong_FromSize_t(i);
        if (!at || PyDict_SetItem(d, keys[i], at) < 0)
            Py_CLEAR(d);
        Py_XDECREF(at);
    }
    Py_XSETREF(names->layout, d);
    names->layout_n = d ? n : 0;
    return d;
}

/* The values of a row's n attributes, in a tuple. */
static PyObject *row_values(const row_attr *attrs, size_t n, adspy_names *names)
{
    PyObject *vals = PyTuple_New((Py_ssize_t)n);
    for (size_t i = 0; vals && i < n; i++) {
        PyObject *v = attr_to_py(&attrs[i], names);
        if (!v)
            Py_CLEAR(vals);
        else
            PyTuple_SET_ITEM(vals, (Py_ssize_t)i, v);
    }
    return vals;
}

/* A Record of a row's n attributes (n <= ADS_PY_NAME_CACHE): split, its
 * index names->layout when its names are the last row's (compared by
 * their bytes, as names->pos keeps them), else a new layout; a row with a
 * name too long to keep has a dict of its own. */
static PyObject *row_to_py(const row_attr *attrs, size_t n, adspy_names *names)
{
    bool same = names->layout && names->layout_n == n;
    for (size_t i = 0; same && i < n; i++)
        same = cached_is(&names->pos[i], attrs[i].name);
    if (same)
        return (PyObject *)adspy_record_split(names->layout, row_values(attrs, n, names));
    /* pos changes below: the layout stands for it only once made anew */
    Py_CLEAR(names->layout);
    names->layout_n = 0;
    PyObject *keys[ADS_PY_NAME_CACHE];
    bool kept = true;
    size_t made = 0;
    PyObject *r = NULL;
    for (; made < n; made++) {
        ads_str name = attrs[made].name;
        kept = kept && name.len <= ADS_PY_NAME_CACHE_LEN;
        keys[made] = cached_name(names, made, name);
        if (!keys[made])
            goto done;
    }
    if (kept) {
        PyObject *vals = layout_keep(names, keys, n) ? row_values(attrs, n, names) : NULL;
        r = vals ? (PyObject *)adspy_record_split(names->layout, vals) : NULL;
        goto done;
    }
    adspy_Record *own = adspy_record_new();
    for (size_t i = 0; own && i < n; i++) {
        PyObject *v = attr_to_py(&attrs[i], names);
        int rc = v ? adspy_record_put(own, keys[i], v) : -1;
        Py_XDECREF(v);
        if (rc < 0)
            Py_CLEAR(own);
    }
    r = (PyObject *)own;
done:
    for (size_t i = 0; i < made; i++)
        Py_DECREF(keys[i]);
    return r;
}

PyObject *adspy_stmt_row_to_py(ads_stmt_row *row, adspy_names *names)
{
    size_t n = ads_stmt_row_size(row);
    ads_error err;
    if (n > ADS_PY_NAME_CACHE) {
        const ads_record *rec;
        if (ads_stmt_row_record(&rec, row, &err) < 0)
            return adspy_raise(&err);
        return adspy_record_to_py_named(rec, names);
    }
    row_attr attrs[ADS_PY_NAME_CACHE];
    for (size_t i = 0; i < n; i++)
        if (ads_stmt_row_attr(&attrs[i].name, &attrs[i].value, &attrs[i].expr, row, i, &err) < 0)
            return adspy_raise(&err);
    return row_to_py(attrs, n, names);
}

PyObject *adspy_record_to_py(const ads_record *rec)
{
    return adspy_record_to_py_named(rec, NULL);
}

PyObject *adspy_record_to_py_named(const ads_record *rec, adspy_names *names)
{
    size_t n = ads_record_size(rec);
    if (names && n <= ADS_PY_NAME_CACHE) {
        row_attr attrs[ADS_PY_NAME_CACHE];
        for (size_t i = 0; i < n; i++) {
            const ads_expr *e = ads_record_expr(rec, i);
            const ads_value *lit = ads_expr_literal_value(e);
            attrs[i].name = ads_record_name(rec, i);
            attrs[i].expr = lit ? NULL : e;
            if (lit)
                attrs[i].value = *lit;
        }
        return row_to_py(attrs, n, names);
    }
    adspy_Record *r = adspy_record_new();
    if (!r)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        ads_str name = ads_record_name(rec, i);
        PyObject *k = adspy_str(name.p, name.len);
        PyObject *v = k ? adspy_expr_to_py(ads_record_expr(rec, i)) : NULL;
        int rc = v ? adspy_record_put(r, k, v) : -1;
        Py_XDECREF(k);
        Py_XDECREF(v);
        if (rc < 0) {
            Py_DECREF(r);
            return NULL;
        }
    }
    return (PyObject *)r;
}

/* ---- Python -> ClassAd ------------------------------------------------- */

static int enter(adspy_conv *c)
{
    if (++c->depth > ADS_MAX_DEPTH) {
        adspy_raise_code(ADS_ELIMIT, "a value nested more than %d deep", ADS_MAX_DEPTH);
        return -1;
    }
    return 0;
}

static int list_from_py(ads_value *out, adspy_conv *c, PyObject *o)
{
    /* a tuple of our own: converting an item may run Python code (a
     * mapping's items()), which could change a list under the walk */
    PyObject *seq = PySequence_Tuple(o);
    if (!seq)
        return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    ads_value *items = ads_arena_alloc(c->a, (size_t)n * sizeof *items);
    int rc = 0;
    if (!items) {
        PyErr_NoMemory();
        rc = -1;
    }
    for (Py_ssize_t i = 0; rc == 0 && i < n; i++) {
        PyObject *x = PySequence_Fast_GET_ITEM(seq, i);
        if (PyObject_TypeCheck(x, &adspy_ExprType)) {
            PyErr_SetString(PyExc_TypeError, "an Expr inside a list: write the whole list as "
                                             "one Expr (adstore.Expr('{ 1, a + b }'))");
            rc = -1;
        } else {
            rc = adspy_value_from_py(&items[i], c, x);
        }
    }
    Py_DECREF(seq);
    if (rc == 0)
        *out = ads_list(items, (size_t)n);
    return rc;
}

static int bytes_from_py(ads_value *out, adspy_conv *c, PyObject *data, PyObject *meta)
{
    Py_buffer view;
    if (PyObject_GetBuffer(data, &view, PyBUF_SIMPLE) < 0)
        return -1;
    ads_blob *b = ads_arena_alloc(c->a, sizeof *b);
    char *copy = b ? ads_arena_alloc(c->a, (size_t)view.len) : NULL;
    if (copy)
        memcpy(copy, view.buf, (size_t)view.len);
    PyBuffer_Release(&view);
    if (!copy) {
        PyErr_NoMemory();
        return -1;
    }
    b->bytes.p = copy;
    b->bytes.len = (size_t)view.len;
    b->meta = NULL;
    if (meta && meta != Py_None && adspy_record_from_py(&b->meta, c, meta) < 0)
        return -1;
    out->type = ADS_BLOB;
    out->u.blob = b;
    return 0;
}

static int scalar_from_py(ads_value *out, adspy_conv *c, PyObject *o)
{
    if (PyLong_Check(o)) {
        int overflow;
        long long i = PyLong_AsLongLongAndOverflow(o, &overflow);
        if (overflow) {
            adspy_raise_code(ADS_ERANGE, "int %s does not fit a ClassAd integer (64 bits)",
                             overflow > 0 ? "above 2**63-1" : "below -2**63");
            return -1;
        }
        if (i == -1 && PyErr_Occurred())
            return -1;
        *out = ads_int(i);
        return 0;
    }
    if (PyFloat_Check(o)) {
        *out = ads_real(PyFloat_AS_DOUBLE(o));
        return 0;
    }
    if (PyUnicode_Check(o)) {
        ads_str s;
        if (adspy_utf8(&s, c->a, o, "a string") < 0)
            return -1;
        *out = ads_string(s.p, s.len);
        return 0;
    }
    return 1; /* not a scalar */
}

int adspy_value_from_py(ads_value *out, adspy_conv *c, PyObject *o)
{
    if (o == Py_None) {
        *out = ads_undefined();
        return 0;
    }
    if (o == adspy_ERROR) {
        *out = ads_errorv();
        return 0;
    }
    if (PyBool_Check(o)) {
        *out = ads_bool(o == Py_True);
        return 0;
    }
    int rc = scalar_from_py(out, c, o);
    if (rc <= 0)
        return rc;
    if (PyDateTime_Check(o))
        return abstime_from_py(out, o);
    if (PyDelta_Check(o))
        return reltime_from_py(out, o);
    if (PyObject_TypeCheck(o, &adspy_IdType)) {
        *out = ads_ident(((adspy_Id *)o)->id);
        return 0;
    }
    if (PyBytes_Check(o) || PyByteArray_Check(o) || PyMemoryView_Check(o))
        return bytes_from_py(out, c, o, NULL);
    if (PyObject_TypeCheck(o, &adspy_BlobType))
        return bytes_from_py(out, c, ((adspy_Blob *)o)->data, ((adspy_Blob *)o)->meta);
    if (PyObject_TypeCheck(o, &adspy_ExprType)) {
        PyErr_SetString(PyExc_TypeError, "an Expr is not a value: evaluate it (Expr.eval) or "
                                         "store it as a record's attribute");
        return -1;
    }
    if (PyList_Check(o) || PyTuple_Check(o)) {
        if (enter(c) < 0)
            return -1;
        rc = list_from_py(out, c, o);
        c->depth--;
        return rc;
    }
    if (PyObject_TypeCheck(o, &adspy_RecordType) || PyDict_Check(o) || PyMapping_Check(o)) {
        const ads_record *r;
        if (adspy_record_from_py(&r, c, o) < 0)
            return -1;
        *out = ads_recordv(r);
        return 0;
    }
    PyErr_Format(PyExc_TypeError, "a %.100s has no ClassAd value", Py_TYPE(o)->tp_name);
    return -1;
}

int adspy_expr_from_py(const ads_expr **out, adspy_conv *c, PyObject *o)
{
    ads_error err;
    if (PyObject_TypeCheck(o, &adspy_ExprType)) {
        /* A copy in c's arena, so the result outlives the Expr object. */
        ads_buf b = ADS_BUF_INIT;
        ads_expr_unparse(&b, ((adspy_Expr *)o)->e);
        int rc = b.failed ? ads_error_set(&err, ADS_ENOMEM, "out of memory")
                          : ads_expr_parse(out, c->a, b.p, b.len, &err);
        ads_buf_free(&b);
        if (rc < 0) {
            adspy_raise(&err);
            return -1;
        }
        return 0;
    }
    ads_value v;
    if (adspy_value_from_py(&v, c, o) < 0)
        return -1;
    if (ads_expr_literal(out, c->a, &v, &err) < 0) {
        adspy_raise(&err);
        return -1;
    }
    return 0;
}

static int record_add(ads_record_builder *b, adspy_conv *c, PyObject *k, PyObject *v)
{
    ads_str name;
    if (adspy_utf8(&name, c->a, k, "a record's attribute name") < 0)
        return -1;
    const ads_expr *e;
    if (adspy_expr_from_py(&e, c, v) < 0)
        return -1;
    ads_error err;
    if (ads_record_builder_add(b, name.p, name.len, e, &err) < 0) {
        adspy_raise(&err);
        return -1;
    }
    return 0;
}

static int record_fill(ads_record_builder *b, adspy_conv *c, PyObject *o)
{
    if (PyObject_TypeCheck(o, &adspy_RecordType) && !(o = adspy_record_dict((adspy_Record *)o)))
        return -1;
    if (PyDict_Check(o)) {
        /* Mutating the dict while converting would invalidate the walk. */
        PyObject *items = PyDict_Items(o);
        if (!items)
            return -1;
        int rc = 0;
        for (Py_ssize_t i = 0; rc == 0 && i < PyList_GET_SIZE(items); i++) {
            PyObject *kv = PyList_GET_ITEM(items, i);
            rc = record_add(b, c, PyTuple_GET_ITEM(kv, 0), PyTuple_GET_ITEM(kv, 1));
        }
        Py_DECREF(items);
        return rc;
    }
    PyObject *items = PyMapping_Items(o);
    if (!items) {
        if (PyErr_ExceptionMatches(PyExc_AttributeError) || PyErr_ExceptionMatches(PyExc_TypeError)) {
            PyErr_Clear();
            PyErr_Format(PyExc_TypeError, "a record must be a mapping, not %.100s",
                         Py_TYPE(o)->tp_name);
        }
        return -1;
    }
    int rc = 0;
    for (Py_ssize_t i = 0; rc == 0 && i < PyList_GET_SIZE(items); i++) {
        PyObject *kv = PyList_GET_ITEM(items, i);
        if (!PyTuple_Check(kv) || PyTuple_GET_SIZE(kv) != 2) {
            PyErr_SetString(PyExc_TypeError, "a mapping's items() must be (name, value) pairs");
            rc = -1;
        } else {
            rc = record_add(b, c, PyTuple_GET_ITEM(kv, 0), PyTuple_GET_ITEM(kv, 1));
        }
    }
    Py_DECREF(items);
    return rc;
}

int adspy_record_from_py(const ads_record **out, adspy_conv *c, PyObject *o)
{
    if (enter(c) < 0)
        return -1;
    ads_error err;
    ads_record_builder *b = NULL;
    int rc = -1;
    if (ads_record_builder_new(&b, c->a, &err) < 0)
        adspy_raise(&err);
    else if (record_fill(b, c, o) == 0)
        rc = 0;
    /* The builder lives in the arena: an abandoned one needs no freeing. */
    if (rc == 0)
        *out = ads_record_builder_finish(b);
    c->depth--;
    return rc;
}

int adspy_values_init(PyObject *m)
{
    PyDateTime_IMPORT;
    if (!PyDateTimeAPI)
        return -1;
    if (PyType_Ready(&adspy_ErrorValueType) < 0 || PyType_Ready(&adspy_IdType) < 0 ||
        PyType_Ready(&adspy_BlobType) < 0)
        return -1;
    adspy_ERROR = PyObject_New(PyObject, &adspy_ErrorValueType);
    if (!adspy_ERROR)
        return -1;
    if (PyModule_AddObjectRef(m, "ERROR", adspy_ERROR) < 0 ||
        PyModule_AddObjectRef(m, "ErrorValue", (PyObject *)&adspy_ErrorValueType) < 0 ||
        PyModule_AddObjectRef(m, "Id", (PyObject *)&adspy_IdType) < 0 ||
        PyModule_AddObjectRef(m, "Blob", (PyObject *)&adspy_BlobType) < 0)
        return -1;
    return 0;
}
