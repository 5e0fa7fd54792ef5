/*
 * python/adstore/_adstore.h: what the files of the CPython extension module
 * `adstore._adstore` share. The module is a thin layer over the public C API
 * (engine/engine.h, query/query.h, classad/classad.h, idgen/idgen.h): it
 * converts values both ways, turns ads_error into exceptions, and releases
 * the GIL around every call that may take long.
 *
 * Files, by job: errors.c (exceptions), values.c (ClassAd values <-> Python
 * objects, the ERROR sentinel, Id, Blob), record.c (Record, the mapping),
 * expr.c (Expr), store.c (Store, Transaction), cursor.c (execute's streaming
 * iterator), load.c (import, dump, verify), module.c (module functions and
 * initialisation).
 */
#ifndef ADSPY_ADSTORE_H
#define ADSPY_ADSTORE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

#include <pthread.h>
#include <stdbool.h>

/* The public headers only, as any program includes them. */
#include <adstore/arena.h>
#include <adstore/buf.h>
#include <adstore/classad.h>
#include <adstore/engine.h>
#include <adstore/error.h>
#include <adstore/idgen.h>
#include <adstore/query.h>

/* The module's limits (ADS_PY_*) are in base/limits.h, with every other. */
#include <adstore/limits.h>

/* ---- errors.c ---------------------------------------------------------- */

/* adstore.Error and its subclasses; set up by adspy_errors_init. */
extern PyObject *adspy_Error;
extern PyObject *adspy_NotSupportedError;

int adspy_errors_init(PyObject *m);
/* Raise the exception for err (its code picks the class); returns NULL. */
PyObject *adspy_raise(const ads_error *err);
/* Raise for code rc with a message (no line or column). */
PyObject *adspy_raise_code(int rc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- values.c ---------------------------------------------------------- */

extern PyTypeObject adspy_ErrorValueType;
extern PyTypeObject adspy_IdType;
extern PyTypeObject adspy_BlobType;
extern PyObject *adspy_ERROR; /* the one ErrorValue: ClassAd `error` */

typedef struct {
    PyObject_HEAD
    ads_id id;
} adspy_Id;

typedef struct {
    PyObject_HEAD
    PyObject *data; /* bytes */
    PyObject *meta; /* a Record */
} adspy_Blob;

/*
 * Converting Python to ClassAd: everything is made in arena a (strings are
 * copied), so the result does not depend on Python objects once made and a
 * call may release the GIL with it.
 */
typedef struct adspy_conv {
    ads_arena *a;
    int depth;
} adspy_conv;

int adspy_values_init(PyObject *m);
PyObject *adspy_value_to_py(const ads_value *v);
PyObject *adspy_expr_to_py(const ads_expr *e); /* a plain value if e is one, else an Expr */
PyObject *adspy_record_to_py(const ads_record *r);

/* A str already made, with a copy of its bytes to compare against. */
typedef struct adspy_cached {
    PyObject *s;
    size_t len;
    char bytes[ADS_PY_NAME_CACHE_LEN];
} adspy_cached;

/* Names, and short string values (states, architectures: what repeats
 * from row to row), already made: names by their position in the row
 * first (rows of a type list theirs in one order), then by a hash of their
 * bytes, as values are. */
typedef struct adspy_names {
    adspy_cached pos[ADS_PY_NAME_CACHE];
    adspy_cached slot[ADS_PY_NAME_CACHE];
    adspy_cached value[ADS_PY_NAME_CACHE];
    PyObject *layout; /* the last row's names -> None (values.c, row_to_py) */
    size_t layout_n;
} adspy_names;
/* As adspy_record_to_py, its names taken from (and added to) names. */
PyObject *adspy_record_to_py_named(const ads_record *r, adspy_names *names);
/* A prepared statement's row as a Record, read attribute by attribute
 * (ads_stmt_row_attr: a stored row's values straight from its bytes),
 * its names from names. NULL with an exception. */
PyObject *adspy_stmt_row_to_py(ads_stmt_row *row, adspy_names *names);
void adspy_names_clear(adspy_names *names);
/* 0 and *out, or -1 with a Python exception set. */
int adspy_value_from_py(ads_value *out, adspy_conv *c, PyObject *o);
int adspy_expr_from_py(const ads_expr **out, adspy_conv *c, PyObject *o);
int adspy_record_from_py(const ads_record **out, adspy_conv *c, PyObject *o);
/* A str from len bytes of (possibly non-UTF-8) ClassAd text; names too. */
PyObject *adspy_str(const char *p, size_t len);
/* The UTF-8 bytes of str o (lone surrogates from adspy_str come back as
 * the bytes they stood for), copied into arena a. -1 with TypeError if o
 * is not a str. */
int adspy_utf8(ads_str *out, ads_arena *a, PyObject *o, const char *what);
PyObject *adspy_id_new(ads_id id);

/* ---- record.c ---------------------------------------------------------- */

extern PyTypeObject adspy_RecordType;

typedef struct {
    PyObject_HEAD
    PyObject *d;     /* dict: name as written -> value, in order; NULL while split */
    PyObject *fold;  /* dict: ASCII-lowered name -> name as written; NULL until needed */
    PyObject *index; /* split: dict name as written -> position in vals (shared) */
    PyObject *vals;  /* split: tuple, the values */
} adspy_Record;

int adspy_record_init_type(PyObject *m);
adspy_Record *adspy_record_new(void);
/* A new split record (record.c says what that is): index maps each name
 * (one spelling per name ignoring case) to its position in tuple vals;
 * takes vals, not index. NULL (vals released) on failure. */
adspy_Record *adspy_record_split(PyObject *index, PyObject *vals);
/* r's dict (borrowed), made from the split form if r has none; NULL with
 * an exception when out of memory. */
PyObject *adspy_record_dict(adspy_Record *r);
/* Add name -> value to a new record being filled (no case check: the C
 * record already has one spelling per name). Steals nothing. */
int adspy_record_put(adspy_Record *r, PyObject *name, PyObject *value);
/* The spelling of key in r (a new reference), or NULL without an
 * exception when r has no such name. */
PyObject *adspy_record_find(adspy_Record *r, PyObject *key);

/* ---- expr.c ------------------------------------------------------------ */

extern PyTypeObject adspy_ExprType;

typedef struct {
    PyObject_HEAD
    ads_arena *a;
    const ads_expr *e;
} adspy_Expr;

int adspy_expr_init_type(PyObject *m);
/* An Expr holding a copy of e (made in its own arena). */
PyObject *adspy_expr_copy(const ads_expr *e);
/* Parse text (a str) into a new Expr. */
PyObject *adspy_expr_parse_py(PyObject *text);
/* Evaluate e in record (a mapping or None): the result as a Python value. */
PyObject *adspy_eval(const ads_expr *e, PyObject *record);

/* ---- store.c / cursor.c / load.c --------------------------------------- */

extern PyTypeObject adspy_StoreType;
extern PyTypeObject adspy_TransactionType;
extern PyTypeObject adspy_CursorType;

typedef struct {
    PyObject_HEAD
    ads_db *db;
    PyObject *path;
    bool readonly;
    Py_ssize_t active;         /* open transactions and cursors: close waits for none */
    unsigned long writer;      /* thread holding an open write Transaction, or 0 */
} adspy_Store;

int adspy_store_init_type(PyObject *m);
/* adstore.open(path, ...). */
PyObject *adspy_store_open(PyObject *self, PyObject *args, PyObject *kw);
/* -1 with Error set if the store is closed or this thread holds a write
 * transaction that a new write would wait for forever. */
int adspy_store_check(adspy_Store *s, bool write);

int adspy_cursor_init_type(PyObject *m);
/* Store.execute: a Cursor over the statement's rows. */
PyObject *adspy_cursor_new(adspy_Store *s, PyObject *args, PyObject *kw);

PyObject *adspy_store_import_file(adspy_Store *s, PyObject *args, PyObject *kw);
PyObject *adspy_store_dump(adspy_Store *s, PyObject *args, PyObject *kw);
PyObject *adspy_store_verify(adspy_Store *s, PyObject *unused);

#endif
