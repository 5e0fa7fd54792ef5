/*
 * query/step.c: prepared statements, the pull form of ads_query_exec
 * (ads_query_prepare, ads_stmt_step / ads_stmt_fetch, ads_stmt_finalize).
 *
 * A plain SELECT of one type's stored rows (no JOIN, grouping, ORDER BY,
 * USING, EXPLAIN, temporal filter or key lookup) streams: the statement
 * keeps its scan open between steps, and each step reads rows until one
 * passes the WHERE (the engine tests it on the stored bytes). Its rows are
 * handed out as they are stored: SELECT * reads each attribute straight
 * from the row's MessagePack (ads_msgpack_view_attr) and builds no
 * record unless asked (ads_stmt_row_record); a select list is its values.
 * The rows of one step stay valid until the next, so a caller can take many
 * rows in one call (ads_stmt_fetch) and read them afterwards: a SELECT *
 * row keeps a copy of its stored bytes (the engine's row is valid only
 * until the scan moves on), a select list its values.
 *
 * Any other statement runs whole at the first step through exec.c's
 * ads_q__run, into a sink that copies its rows into the statement; the
 * steps then hand those out. The session runs nothing else while a
 * statement is open (q->stepping): the statement holds the session's
 * transaction and budget between steps.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "classad/msgpack.h"
#include "classad/msgpack_int.h"
#include "query/query_int.h"

enum { MODE_STREAM, MODE_HELD };
enum { ROW_VIEW, ROW_RECORD, ROW_ITEMS };

struct ads_stmt_row {
    ads_stmt *s;
    int kind;
    ads_row row;            /* ROW_VIEW: the stored row, its bytes a copy (no key) */
    ads_msgpack_view mv;    /* ROW_VIEW: over row.data, in the step's arena */
    size_t skip_at, skip_n; /* ROW_VIEW: the '_' attributes SELECT * leaves out */
    const ads_record *rec;  /* ROW_RECORD, or the record made on demand */
    const ads_value *vals;  /* ROW_ITEMS: the select items' values */
};

struct ads_stmt {
    ads_query *q;
    ads_exec_options opt;
    ads_exec_info info;
    int mode;
    bool started, done;
    int rc;        /* the statement's result once done */
    ads_arena *a;  /* the statement: its text, parse, plan, held rows */
    ads_arena *ra; /* the rows of the current step, reset at each */
    stmt st;
    temporal tf;
    const ads_expr *rest; /* WHERE without its temporal filter */
    /* MODE_STREAM */
    ads_txn *txn;
    ads_scan *scan;
    ads_q__iplan ip;        /* the index the scan reads through, if any */
    const ads_expr **items; /* prepared select items */
    int64_t left;           /* LIMIT still to go (-1: none) */
    /* MODE_HELD: the rows the statement produced, copied */
    const ads_record **held;
    size_t nheld, capheld, next;
    /* the columns (ads_stmt_columns) */
    ads_str *cols;
    size_t ncols;
};

/* ---- preparing --------------------------------------------------------- */

/* Does a checked SELECT read one type's stored rows in the order stored,
 * each row on its own, through a scan (not a key lookup)? */
static bool streamable(const stmt *st, const temporal *tf)
{
    if (st->kind != ADS_STMT_SELECT || st->explain || tf->kind != 0 || !st->has_from ||
        st->has_using || st->alias.len || st->njoins || st->ngroup || st->norder)
        return false;
    for (size_t i = 0; i < st->nitems; i++)
        if (ads_q__has_aggregate(st->items[i].e))
            return false;
    return true;
}

/* Statement columns: the select list's labels (none for SELECT *), each
 * label told apart from the others as ads_q__select requires. */
static int stream_columns(ads_stmt *s, ads_error *err)
{
    const stmt *st = &s->st;
    for (size_t i = 0; i < st->nitems; i++)
        for (size_t j = 0; j < i; j++)
            if (st->items[i].label.len == st->items[j].label.len &&
                strncasecmp(st->items[i].label.p, st->items[j].label.p, st->items[i].label.len) ==
                    0)
                return ads_error_set(err, ADS_EINVAL,
                                     "two columns are labelled '%.*s': use AS to tell them apart",
                                     (int)st->items[i].label.len, st->items[i].label.p);
    if (st->star)
        return 0;
    s->cols = ads_arena_alloc(s->a, (st->nitems ? st->nitems : 1) * sizeof *s->cols);
    if (!s->cols)
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    for (size_t i = 0; i < st->nitems; i++)
        s->cols[i] = st->items[i].label;
    s->ncols = st->nitems;
    return 0;
}

/* Hidden rows (as ads_q__select decides them): a statement that mentions
 * _Deleted sees deleted records, one that mentions __Latest every row. */
static unsigned scan_flags(const stmt *st)
{
    bool deleted = ads_q__mentions(st->where, "_Deleted");
    bool latest = ads_q__mentions(st->where, "__Latest");
    for (size_t i = 0; i < st->nitems; i++) {
        deleted |= ads_q__mentions(st->items[i].e, "_Deleted");
        latest |= ads_q__mentions(st->items[i].e, "__Latest");
    }
    return (deleted ? ADS_SCAN_DELETED : 0) | (latest ? ADS_SCAN_HISTORY : 0);
}

/*
 * Plan a streaming SELECT: its type, its WHERE prepared for the engine to
 * test on each stored row, its select items; then open its rows. A WHERE
 * that pins every key is a key lookup: that statement is held instead
 * (*held), as ads_q__select reads it.
 */
static int stream_open(ads_stmt *s, bool *held, ads_error *err)
{
    stmt *st = &s->st;
    const ads_type *t;
    const ads_expr **conj = NULL, *where = NULL;
    size_t nconj = 0;
    unsigned flags = scan_flags(st);
    int rc = ads_q__txn_read(s->q, &s->txn, err);
    if (rc)
        return rc;
    if ((rc = ads_txn_type(&t, s->txn, st->type.p, st->type.len, err)))
        return ads_q__error_at(st, st->type, rc, err);
    if ((rc = ads_q__conjuncts(s->rest, &conj, &nconj, s->a, err)))
        return rc;
    ads_value keys[16];
    if (nconj && ads_q__pinned_keys(t, conj, nconj, st->alias, keys, s->a)) {
        *held = true;
        return 0;
    }
    if (s->rest && (rc = ads_expr_prepare(&where, s->a, s->rest, err)))
        return rc;
    s->items = ads_arena_alloc(s->a, (st->nitems ? st->nitems : 1) * sizeof *s->items);
    if (!s->items)
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    for (size_t i = 0; i < st->nitems; i++)
        if ((rc = ads_expr_prepare(&s->items[i], s->a, st->items[i].e, err)))
            return rc;
    if ((rc = stream_columns(s, err)))
        return rc;
    s->left = st->limit;
    if (st->limit == 0)
        return 0;
    return ads_q__open_rows(&s->scan, &s->ip, s->q, s->txn, t, conj, nconj, st->alias, where, flags,
                            s->a, err);
}

/* Parse, bind and check the statement; open a streaming SELECT's rows. */
static int prepare(ads_stmt *s, const char *text, size_t len, ads_error *err)
{
    char *copy = ads_arena_strndup(s->a, text ? text : "", len);
    if (!copy)
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    int rc = ads_stmt__parse(&s->st, s->a, copy, len, 0, len, err);
    if (rc || (rc = ads_q__bind(&s->st, s->opt.params, s->opt.params_script, s->a, err)))
        return rc;
    s->info.kind = s->st.kind;
    s->mode = MODE_HELD;
    if (ads_q__is_control(&s->st))
        return 0;
    if ((rc = ads_q__check_stmt(&s->st, &s->tf, &s->rest, s->a, err)) ||
        !streamable(&s->st, &s->tf))
        return rc;
    if ((rc = ads_q__txn_enter(s->q, &s->opt, err)))
        return rc;
    bool held = false;
    s->mode = MODE_STREAM;
    rc = stream_open(s, &held, err);
    if (rc || held) {
        ads_scan_close(s->scan);
        s->scan = NULL;
        if (s->txn)
            ads_q__txn_done(s->q, s->txn);
        s->txn = NULL;
        s->mode = MODE_HELD;
        s->cols = NULL;
        s->ncols = 0;
    }
    return rc;
}

int ads_query_prepare(ads_stmt **out, ads_query *q, const char *text, size_t len,
                      const ads_exec_options *opt, ads_error *err)
{
    if (!out || !q || (!text && len))
        return ads_error_set(err, ADS_EINVAL, "NULL argument");
    *out = NULL;
    if (q->stepping)
        return ads_error_set(err, ADS_EBUSY,
                             "the session has a prepared statement open: finalize it "
                             "(ads_stmt_finalize) before preparing another");
    ads_stmt *s = calloc(1, sizeof *s);
    if (!s)
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    ads_exec_options defopt = ADS_EXEC_OPTIONS_INIT;
    s->q = q;
    s->opt = opt ? *opt : defopt;
    s->rc = 0;
    ads_budget_start(&q->budget, q->max_bytes, q->max_seconds);
    q->interrupted = 0;
    s->a = ads_q__arena(q);
    s->ra = ads_q__arena(q);
    int rc = s->a && s->ra ? prepare(s, text, len, err)
                           : ads_error_set(err, ADS_ENOMEM, "out of memory");
    if (rc) {
        if (s->a)
            ads_q__txn_leave(q, &s->opt, rc, &s->info);
        ads_arena_free(s->ra);
        ads_arena_free(s->a);
        free(s);
        return ads_q__over_limit(q, rc, err);
    }
    q->stepping = true;
    *out = s;
    return 0;
}

bool ads_stmt_streams(const ads_stmt *s)
{
    return s && s->mode == MODE_STREAM;
}

/* ---- held statements: run whole, their rows copied -------------------- */

static int held_begin(void *ctx, const ads_str *cols, size_t ncols, ads_error *err)
{
    ads_stmt *s = ctx;
    s->cols = ads_arena_alloc(s->a, (ncols ? ncols : 1) * sizeof *s->cols);
    if (!s->cols)
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    for (size_t i = 0; i < ncols; i++) {
        char *p = ads_arena_strndup(s->a, cols[i].p, cols[i].len);
        if (!p)
            return ads_error_set(err, ADS_ENOMEM, "out of memory");
        s->cols[i] = (ads_str){p, cols[i].len};
    }
    s->ncols = ncols;
    return 0;
}

static int held_row(void *ctx, const ads_record *row, ads_error *err)
{
    ads_stmt *s = ctx;
    if (s->nheld == s->capheld) {
        size_t cap = s->capheld ? 2 * s->capheld : 64;
        const ads_record **m = realloc(s->held, cap * sizeof *m);
        if (!m)
            return ads_error_set(err, ADS_ENOMEM, "out of memory");
        s->held = m;
        s->capheld = cap;
    }
    ads_value copy;
    if (ads_q__copy(&copy, &(ads_value){.type = ADS_RECORD, .u.rec = row}, s->a))
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    s->held[s->nheld++] = copy.u.rec;
    return 0;
}

/* Run the statement whole, as ads_query_exec_at does, its rows into s. */
static int held_run(ads_stmt *s, ads_error *err)
{
    ads_query *q = s->q;
    if (ads_q__is_control(&s->st))
        return ads_q__control(q, &s->st, &s->opt, err);
    ads_sink sink = {held_begin, held_row, NULL, s, NULL};
    int rc = ads_q__txn_enter(q, &s->opt, err);
    if (!rc)
        rc = ads_q__run(q, &s->st, &s->tf, s->rest, &sink, &s->opt, &s->info, err);
    ads_q__txn_leave(q, &s->opt, rc, &s->info);
    return ads_q__over_limit(q, rc, err);
}

/* ---- stepping ---------------------------------------------------------- */

static unsigned char fold(unsigned char c)
{
    return c >= 'A' && c <= 'Z' ? (unsigned char)(c | 0x20) : c;
}

/* The first attribute of the view whose name, case folded, starts with a
 * byte above c (or at c, unless above): names are stored sorted by their
 * folded bytes, so those starting with '_' lie together. */
static int bound(size_t *out, const ads_msgpack_view *mv, unsigned char c, bool above,
                 ads_error *err)
{
    size_t lo = 0, hi = ads_msgpack_view_size(mv);
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        ads_str n;
        int rc = ads_msgpack_view_name(&n, mv, mid, err);
        if (rc)
            return rc;
        unsigned char f = n.len ? fold((unsigned char)n.p[0]) : 0;
        if (f < c || (above && f == c))
            lo = mid + 1;
        else
            hi = mid;
    }
    *out = lo;
    return 0;
}

/* A SELECT * row read from its stored bytes: the attributes whose names
 * start with '_' are skipped (ads_q__select's rule for SELECT *). */
static int row_view(ads_stmt_row *r, ads_error *err)
{
    int rc = ads_msgpack__view_open(&r->mv, r->row.data, r->row.len, r->row.priv.names,
                                    r->s->ra, err);
    size_t end;
    ads_str n;
    r->skip_n = 0;
    if (rc || ads_msgpack_view_size(&r->mv) == 0)
        return rc;
    /* the usual row: its first name starts with a letter, so all do */
    if ((rc = ads_msgpack_view_name(&n, &r->mv, 0, err)) || fold((unsigned char)n.p[0]) > '_')
        return rc;
    if ((rc = bound(&r->skip_at, &r->mv, '_', false, err)))
        return rc;
    if (r->skip_at == ads_msgpack_view_size(&r->mv) ||
        (rc = ads_msgpack_view_name(&n, &r->mv, r->skip_at, err)) || n.p[0] != '_')
        return rc;
    if ((rc = bound(&end, &r->mv, '_', true, err)))
        return rc;
    r->skip_n = end - r->skip_at;
    return 0;
}

/* The select items' values in row (evaluated over the stored row, copied
 * into the step's arena: the scan reuses its own at the next row). */
static int row_items(ads_stmt_row *r, ads_row *row, ads_error *err)
{
    ads_stmt *s = r->s;
    size_t n = s->st.nitems;
    ads_value *vals = ads_arena_alloc(s->ra, (n ? n : 1) * sizeof *vals);
    if (!vals)
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    ads_view view = ads_row_view(row, NULL);
    for (size_t i = 0; i < n; i++) {
        ads_value v;
        if (ads_expr_eval(&v, s->items[i], &view, s->ra) || ads_q__copy(&vals[i], &v, s->ra))
            return ads_error_set(err, ADS_ENOMEM, "out of memory");
    }
    r->vals = vals;
    return 0;
}

/* The next row of a streaming statement into r: 1, 0 at the end, or an
 * error. */
static int stream_next(ads_stmt *s, ads_stmt_row *r, ads_error *err)
{
    ads_row *row;
    if (s->left == 0 || !s->scan)
        return 0;
    int rc = ads_scan_next(&row, s->scan, err);
    if (rc <= 0)
        return rc;
    if ((rc = ads_q__budget(s->q, err)))
        return rc;
    memset(r, 0, sizeof *r);
    r->s = s;
    r->row = *row;
    if (!s->st.star) {
        r->kind = ROW_ITEMS;
        rc = row_items(r, row, err);
    } else if (s->opt.hidden) {
        r->kind = ROW_RECORD;
        rc = ads_row_record(&r->rec, row, ADS_ROW_TIMELINE, s->ra, err);
    } else {
        /* the engine's row lives until the scan's next row: the step's
         * rows keep a copy of their bytes, which their values point into */
        unsigned char *copy = ads_arena_alloc(s->ra, row->len ? row->len : 1);
        if (!copy)
            return ads_error_set(err, ADS_ENOMEM, "out of memory");
        memcpy(copy, row->data, row->len);
        r->row.data = copy;
        r->row.key = NULL;
        r->row.key_len = 0;
        r->kind = ROW_VIEW;
        rc = row_view(r, err);
    }
    if (rc)
        return rc;
    if (s->left > 0)
        s->left--;
    s->info.rows++;
    return 1;
}

static int held_next(ads_stmt *s, ads_stmt_row *r, ads_error *err)
{
    (void)err;
    if (s->next == s->nheld)
        return 0;
    memset(r, 0, sizeof *r);
    r->s = s;
    r->kind = ROW_RECORD;
    r->rec = s->held[s->next++];
    return 1;
}

/* The end of the statement: rc its result (0, or the error that ended it). */
static int stop(ads_stmt *s, int rc, ads_error *err)
{
    s->done = true;
    s->rc = rc;
    if (s->mode == MODE_STREAM) {
        ads_scan_close(s->scan);
        s->scan = NULL;
        rc = ads_q__over_limit(s->q, rc, err);
    }
    return rc;
}

int ads_stmt_fetch(ads_stmt *s, ads_stmt_row **rows, size_t max, size_t *n, ads_error *err)
{
    if (n)
        *n = 0;
    if (!s || !n || !rows)
        return ads_error_set(err, ADS_EINVAL, "NULL argument");
    if (max == 0)
        return ads_error_set(err, ADS_EINVAL, "a fetch takes at least one row (max 0)");
    if (s->done)
        return s->rc ? ads_error_set(err, s->rc, "the statement failed at an earlier step") : 0;
    ads_arena_reset(s->ra);
    int rc = 0;
    if (!s->started) {
        s->started = true;
        if (s->mode == MODE_HELD && (rc = held_run(s, err))) {
            s->done = true;
            s->rc = rc;
            return rc;
        }
    }
    ads_stmt_row *slots = ads_arena_alloc(s->ra, max * sizeof *slots);
    if (!slots)
        return stop(s, ads_error_set(err, ADS_ENOMEM, "out of memory"), err);
    while (*n < max) {
        ads_stmt_row *r = &slots[*n];
        rc = s->mode == MODE_STREAM ? stream_next(s, r, err) : held_next(s, r, err);
        if (rc <= 0)
            break;
        rows[(*n)++] = r;
    }
    if (rc <= 0)
        return stop(s, rc, err);
    return 0;
}

int ads_stmt_step(ads_stmt *s, ads_stmt_row **row, ads_error *err)
{
    size_t n;
    int rc = ads_stmt_fetch(s, row, 1, &n, err);
    return rc < 0 ? rc : (int)n;
}

/* ---- reading rows ------------------------------------------------------ */

size_t ads_stmt_row_size(const ads_stmt_row *r)
{
    if (!r)
        return 0;
    switch (r->kind) {
    case ROW_VIEW:
        return ads_msgpack_view_size(&r->mv) - r->skip_n;
    case ROW_ITEMS:
        return r->s->st.nitems;
    default:
        return ads_record_size(r->rec);
    }
}

int ads_stmt_row_attr(ads_str *name, ads_value *value, const ads_expr **expr, ads_stmt_row *r,
                      size_t i, ads_error *err)
{
    if (!name || !value || !expr || !r)
        return ads_error_set(err, ADS_EINVAL, "NULL argument");
    if (r->kind == ROW_VIEW && r->skip_n == 0) /* the usual SELECT * row */
        return ads_msgpack_view_attr(name, value, expr, &r->mv, i, err);
    size_t n = ads_stmt_row_size(r);
    if (i >= n)
        return ads_error_set(err, ADS_EINVAL, "attribute %zu of a row of %zu", i, n);
    *expr = NULL;
    switch (r->kind) {
    case ROW_VIEW:
        return ads_msgpack_view_attr(name, value, expr, &r->mv, i < r->skip_at ? i : i + r->skip_n,
                                     err);
    case ROW_ITEMS:
        *name = r->s->st.items[i].label;
        *value = r->vals[i];
        return 0;
    default: {
        const ads_expr *e = ads_record_expr(r->rec, i);
        const ads_value *lit = ads_expr_literal_value(e);
        *name = ads_record_name(r->rec, i);
        if (lit)
            *value = *lit;
        else
            *expr = e;
        return 0;
    }
    }
}

int ads_stmt_row_record(const ads_record **out, ads_stmt_row *r, ads_error *err)
{
    if (!out || !r)
        return ads_error_set(err, ADS_EINVAL, "NULL argument");
    if (r->rec) {
        *out = r->rec;
        return 0;
    }
    ads_record_builder *b;
    int rc = ads_record_builder_new(&b, r->s->ra, err);
    for (size_t i = 0; !rc && i < ads_stmt_row_size(r); i++) {
        ads_str name;
        ads_value v;
        const ads_expr *e;
        if ((rc = ads_stmt_row_attr(&name, &v, &e, r, i, err)))
            break;
        rc = e ? ads_record_builder_add(b, name.p, name.len, e, err)
               : ads_record_builder_add_value(b, name.p, name.len, &v, err);
    }
    if (rc)
        return rc;
    r->rec = ads_record_builder_finish(b);
    *out = r->rec;
    return 0;
}

/* ---- what the statement is and did ----------------------------------- */

const ads_str *ads_stmt_columns(const ads_stmt *s, size_t *n)
{
    if (n)
        *n = s ? s->ncols : 0;
    return s ? s->cols : NULL;
}

void ads_stmt_info(const ads_stmt *s, ads_exec_info *info)
{
    if (!info)
        return;
    if (s)
        *info = s->info;
    else
        memset(info, 0, sizeof *info);
}

void ads_stmt_finalize(ads_stmt *s)
{
    if (!s)
        return;
    ads_query *q = s->q;
    if (s->mode == MODE_STREAM) {
        ads_scan_close(s->scan);
        if (s->txn)
            ads_q__txn_done(q, s->txn);
        ads_q__txn_leave(q, &s->opt, s->rc, &s->info);
    }
    free(s->held);
    ads_arena_free(s->ra);
    ads_arena_free(s->a);
    q->stepping = false;
    free(s);
}
