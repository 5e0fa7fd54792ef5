/*
 * query/datasource.c: SELECT ... USING name (shared/spec/query.md section 4).
 * The registry of datasources an embedding program adds, and the two
 * built in:
 *   types      a row per type: ForType, KeyAttributes (as declared: { } for
 *              a keyless type), Count (records not deleted), Deleted,
 *              History (rows that are not latest), Builtin;
 *   sequences  a row per Sequence record (Name, Method, ValueType, Value:
 *              the last value an increment sequence gave, 0 if none), then
 *              one per type that generates keys (Name "type:NAME", Method,
 *              ValueType "id", Value).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "query/query_int.h"

/* ---- the registry ---- */

static char *lower_dup(const char *s, size_t n)
{
    char *f = malloc(n + 1);
    if (!f)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        f[i] = (char)((c >= 'A' && c <= 'Z') ? c | 0x20 : c);
    }
    f[n] = 0;
    return f;
}

static const ads_datasource *builtin(const char *name, size_t len);

int ads_query_register(ads_query *q, const char *name, const ads_datasource *ds, ads_error *err)
{
    if (!q || !name || !*name)
        return ads_error_set(err, ADS_EINVAL, "a datasource needs a name");
    size_t n = strlen(name);
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
                  (i > 0 && ((c >= '0' && c <= '9') || c == '.' || c == '-'));
        if (!ok)
            return ads_error_set(err, ADS_EINVAL,
                                 "datasource name '%s': letters, digits, '_', '.' and '-' only",
                                 name);
    }
    if (builtin(name, n))
        return ads_error_set(err, ADS_EINVAL, "%s is a built-in datasource", name);
    if (ds && (!ds->open || !ds->next || !ds->close))
        return ads_error_set(err, ADS_EINVAL, "a datasource needs open, next and close");
    char *f = lower_dup(name, n);
    if (!f)
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    for (size_t i = 0; i < q->nds; i++)
        if (strcmp(q->ds[i].name, f) == 0) {
            free(f);
            if (ds) {
                q->ds[i].ds = *ds;
            } else {
                free(q->ds[i].name);
                q->ds[i] = q->ds[--q->nds];
            }
            return 0;
        }
    if (!ds) {
        free(f);
        return 0;
    }
    ds_entry *m = realloc(q->ds, (q->nds + 1) * sizeof *m);
    if (!m) {
        free(f);
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    }
    q->ds = m;
    q->ds[q->nds].name = f;
    q->ds[q->nds].ds = *ds;
    q->nds++;
    return 0;
}

const ads_datasource *ads_ds__find(ads_query *q, const char *name, size_t len)
{
    const ads_datasource *b = builtin(name, len);
    if (b)
        return b;
    for (size_t i = 0; i < q->nds; i++)
        if (strlen(q->ds[i].name) == len && strncasecmp(q->ds[i].name, name, len) == 0)
            return &q->ds[i].ds;
    return NULL;
}

/* ---- built-in: types and sequences ---- */

/* Both build their rows up front (there are few) in an arena. */
typedef struct rows_cursor {
    ads_arena *a;
    const ads_record **rows;
    size_t n, cap, next;
} rows_cursor;

static int push(rows_cursor *c, const ads_record *r, ads_error *err)
{
    if (c->n == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 16;
        const ads_record **m = realloc(c->rows, cap * sizeof *m);
        if (!m)
            return ads_error_set(err, ADS_ENOMEM, "out of memory");
        c->rows = m;
        c->cap = cap;
    }
    c->rows[c->n++] = r;
    return 0;
}

static int add_value(ads_record_builder *b, const char *name, ads_value v, ads_error *err)
{
    return ads_record_builder_add_value(b, name, strlen(name), &v, err);
}

static int add_string(ads_record_builder *b, ads_arena *a, const char *name, const char *s,
                      size_t len, ads_error *err)
{
    ads_value v;
    if (ads_string_copy(&v, a, s, len))
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    return add_value(b, name, v, err);
}

static int type_row(void *ctx, const ads_type *t, ads_error *err)
{
    rows_cursor *c = ((void **)ctx)[0];
    ads_txn *txn = ((void **)ctx)[1];
    ads_type_counts counts;
    int rc = ads_txn_type_counts(&counts, txn, t, err);
    if (rc)
        return rc;
    ads_record_builder *b;
    size_t nk = ads_type_keyless(t) ? 0 : ads_type_key_count(t);
    ads_value *keys = ads_arena_alloc(c->a, (nk ? nk : 1) * sizeof *keys);
    if (!keys)
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    for (size_t i = 0; i < nk; i++) {
        ads_str k = ads_type_key(t, i);
        if (ads_string_copy(&keys[i], c->a, k.p, k.len))
            return ads_error_set(err, ADS_ENOMEM, "out of memory");
    }
    const char *name = ads_type_name(t);
    if ((rc = ads_record_builder_new(&b, c->a, err)) ||
        (rc = add_string(b, c->a, "ForType", name, strlen(name), err)) ||
        (rc = add_value(b, "KeyAttributes", ads_list(keys, nk), err)) ||
        (rc = add_value(b, "Count", ads_int((int64_t)(counts.records - counts.deleted)), err)) ||
        (rc = add_value(b, "Deleted", ads_int((int64_t)counts.deleted), err)) ||
        (rc = add_value(b, "History", ads_int((int64_t)counts.history), err)) ||
        (rc = add_value(b, "Builtin", ads_bool(ads_type_builtin(t)), err)))
        return rc;
    return push(c, ads_record_builder_finish(b), err);
}

static int types_open(void *ctx, ads_txn *txn, const ads_expr *where, void **cursor,
                      ads_error *err)
{
    (void)ctx;
    (void)where;
    rows_cursor *c = calloc(1, sizeof *c);
    if (!c || !(c->a = ads_arena_new())) {
        free(c);
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    }
    void *pass[2] = {c, txn};
    int rc = ads_txn_each_type(txn, type_row, pass, err);
    if (rc) {
        ads_arena_free(c->a);
        free(c->rows);
        free(c);
        return rc;
    }
    *cursor = c;
    return 0;
}

static int rows_next(void *cursor, const ads_record **row, ads_arena *a, ads_error *err)
{
    (void)a;
    (void)err;
    rows_cursor *c = cursor;
    if (c->next >= c->n)
        return 0;
    *row = c->rows[c->next++];
    return 1;
}

static void rows_close(void *cursor)
{
    rows_cursor *c = cursor;
    if (!c)
        return;
    ads_arena_free(c->a);
    free(c->rows);
    free(c);
}

static int seq_type_row(void *ctx, const ads_type *t, ads_error *err)
{
    rows_cursor *c = ((void **)ctx)[0];
    ads_txn *txn = ((void **)ctx)[1];
    if (!ads_type_autogen(t))
        return 0;
    char name[300];
    int n = snprintf(name, sizeof name, "type:%s", ads_type_name(t));
    uint64_t last = 0;
    int rc = ads_txn_sequence_last(&last, txn, name, (size_t)n, err);
    if (rc)
        return rc;
    static const char *const methods[] = {"ordered", "random", "increment"};
    const char *m = methods[ads_type_method(t)];
    ads_record_builder *b;
    if ((rc = ads_record_builder_new(&b, c->a, err)) ||
        (rc = add_string(b, c->a, "Name", name, (size_t)n, err)) ||
        (rc = add_string(b, c->a, "Method", m, strlen(m), err)) ||
        (rc = add_string(b, c->a, "ValueType", "id", 2, err)) ||
        (rc = add_value(b, "Value", ads_int((int64_t)last), err)))
        return rc;
    return push(c, ads_record_builder_finish(b), err);
}

static int sequences_open(void *ctx, ads_txn *txn, const ads_expr *where, void **cursor,
                          ads_error *err)
{
    (void)ctx;
    (void)where;
    rows_cursor *c = calloc(1, sizeof *c);
    if (!c || !(c->a = ads_arena_new())) {
        free(c);
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    }
    const ads_type *seq;
    ads_scan *s = NULL;
    ads_row *r;
    int rc = ads_txn_type(&seq, txn, "Sequence", 8, err);
    if (!rc)
        rc = ads_scan_open(&s, txn, seq, NULL, 0, err);
    while (!rc && (rc = ads_scan_next(&r, s, err)) == 1) {
        const ads_record *rec;
        ads_value name, method, vtype;
        if ((rc = ads_row_record(&rec, r, 0, c->a, err)))
            break;
        if (ads_record_eval_attr(&name, rec, "Name", 4, c->a) ||
            ads_record_eval_attr(&method, rec, "Method", 6, c->a) ||
            ads_record_eval_attr(&vtype, rec, "ValueType", 9, c->a)) {
            rc = ads_error_set(err, ADS_ENOMEM, "out of memory");
            break;
        }
        if (name.type != ADS_STRING)
            continue;
        if (method.type != ADS_STRING)
            method = ads_string("increment", 9);
        if (vtype.type != ADS_STRING)
            vtype = ads_string("id", 2);
        uint64_t last = 0;
        if ((rc = ads_txn_sequence_last(&last, txn, name.u.s.p, name.u.s.len, err)))
            break;
        ads_record_builder *b;
        if ((rc = ads_record_builder_new(&b, c->a, err)) ||
            (rc = add_value(b, "Name", name, err)) || (rc = add_value(b, "Method", method, err)) ||
            (rc = add_value(b, "ValueType", vtype, err)) ||
            (rc = add_value(b, "Value", ads_int((int64_t)last), err)) ||
            (rc = push(c, ads_record_builder_finish(b), err)))
            break;
    }
    ads_scan_close(s);
    void *pass[2] = {c, txn};
    if (rc >= 0)
        rc = ads_txn_each_type(txn, seq_type_row, pass, err);
    if (rc) {
        rows_close(c);
        return rc;
    }
    *cursor = c;
    return 0;
}

static const ads_datasource ds_types = {types_open, rows_next, rows_close, NULL};
static const ads_datasource ds_sequences = {sequences_open, rows_next, rows_close, NULL};

static const ads_datasource *builtin(const char *name, size_t len)
{
    if (len == 5 && strncasecmp(name, "types", 5) == 0)
        return &ds_types;
    if (len == 9 && strncasecmp(name, "sequences", 9) == 0)
        return &ds_sequences;
    return NULL;
}
