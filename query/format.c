/*
 * query/format.c: the six output formats of shared/spec/query.md section 5,
 * as sinks. Each is byte-for-byte stable (docs/query.md shows them):
 *
 *   text     the informal long form (classad/text_long.c): a `Name = value`
 *            line per attribute, a blank line after each row;
 *   native   one `[ a = 1; b = "x" ]` per line;
 *   json     `[`, then one compact object per line (classad/text_json.c, so
 *            times, ids and other ClassAd-only values read back losslessly),
 *            separated by commas, then `]`; no rows is `[]`;
 *   csv      RFC 4180: a header line, then a line per row, CRLF line ends,
 *            fields quoted when they hold a comma, quote, CR, LF or
 *            surrounding spaces; strings raw, undefined empty, other values in
 *            ClassAd syntax;
 *   tabular  aligned columns: labels, a line of dashes, then rows; columns
 *            two spaces apart, numbers right-aligned, trailing spaces trimmed;
 *            a newline, carriage return or tab in a cell is shown as \n, \r
 *            or \t so that every row stays one line;
 *   xml      the classads XML form (classad/text_xml.c).
 *
 * Columns are the select list's labels; for SELECT * they are the rows'
 * attribute names in order of first appearance, so csv and tabular hold the
 * rows until the end (tabular always does, for its widths). After a
 * statement that failed part way, ads_writer_abort writes what is held and
 * closes what the rows written opened, so the output stays well formed.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "classad/formats.h"
#include "query/query_int.h"

static const char *const names[] = {"text", "native", "json",  "csv",
                                    "tabular", "xml", "jsonl", "values"};

int ads_format_parse(ads_format *out, const char *name, ads_error *err)
{
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (name && strcasecmp(name, names[i]) == 0) {
            *out = (ads_format)i;
            return 0;
        }
    if (name && strcasecmp(name, "ndjson") == 0) {
        *out = ADS_FORMAT_JSONL;
        return 0;
    }
    return ads_error_set(err, ADS_EINVAL,
                         "unknown format '%s'; expected text, native, json, jsonl, csv, "
                         "tabular, values or xml",
                         name ? name : "");
}

const char *ads_format_name(ads_format f)
{
    return (size_t)f < sizeof names / sizeof names[0] ? names[f] : "?";
}

struct ads_writer {
    ads_format f;
    FILE *to;
    bool header;         /* csv and tabular: the header lines (ads_writer_set_header) */
    ads_buf b;
    ads_arena *ca;       /* the columns' names */
    ads_arena *a;        /* the held rows */
    ads_str *cols;
    size_t ncols, capcols;
    bool fixed;          /* columns known before the rows (select list, type's attributes) */
    const ads_record **rows; /* held: at most ADS_WRITER_SAMPLE_ROWS */
    size_t nrows, caprows;
    size_t peak;         /* most rows held at once */
    bool released;       /* the held rows are written: rows now go straight out */
    size_t *wd;          /* tabular: column widths and which columns are numbers, */
    bool *numcol;        /* measured on the held rows */
    uint64_t count;
    bool began, ended;
};

int ads_writer_new(ads_writer **out, ads_format f, FILE *to, ads_error *err)
{
    ads_writer *w = calloc(1, sizeof *w);
    if (!w || !(w->a = ads_arena_new()) || !(w->ca = ads_arena_new())) {
        if (w)
            ads_arena_free(w->a);
        free(w);
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    }
    w->f = f;
    w->to = to;
    w->header = true;
    *out = w;
    return 0;
}

void ads_writer_set_header(ads_writer *w, bool header)
{
    if (w)
        w->header = header;
}

size_t ads_writer_peak_rows(const ads_writer *w)
{
    return w ? w->peak : 0;
}

void ads_writer_free(ads_writer *w)
{
    if (!w)
        return;
    ads_buf_free(&w->b);
    ads_arena_free(w->a);
    ads_arena_free(w->ca);
    free(w->cols);
    free(w->rows);
    free(w->wd);
    free(w->numcol);
    free(w);
}

static int flush(ads_writer *w, bool force, ads_error *err)
{
    if (w->b.failed)
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    if (w->b.len && (force || w->b.len > 65536)) {
        if (fwrite(w->b.p, 1, w->b.len, w->to) != w->b.len)
            return ads_error_set(err, ADS_EIO, "writing the output failed");
        ads_buf_clear(&w->b);
    }
    if (force && fflush(w->to))
        return ads_error_set(err, ADS_EIO, "writing the output failed");
    return 0;
}

static bool has_col(const ads_writer *w, const char *p, size_t len)
{
    for (size_t i = 0; i < w->ncols; i++)
        if (w->cols[i].len == len && strncasecmp(w->cols[i].p, p, len) == 0)
            return true;
    return false;
}

static int add_col(ads_writer *w, const char *p, size_t len, ads_error *err)
{
    if (has_col(w, p, len))
        return 0;
    if (w->ncols == w->capcols) {
        size_t cap = w->capcols ? 2 * w->capcols : 16;
        ads_str *m = realloc(w->cols, cap * sizeof *m);
        if (!m)
            return ads_error_set(err, ADS_ENOMEM, "out of memory");
        w->cols = m;
        w->capcols = cap;
    }
    char *copy = ads_arena_strndup(w->ca, p, len);
    if (!copy)
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    w->cols[w->ncols].p = copy;
    w->cols[w->ncols].len = len;
    w->ncols++;
    return 0;
}

static int add_cols(ads_writer *w, const ads_str *cols, size_t ncols, ads_error *err)
{
    for (size_t i = 0; i < ncols; i++) {
        int rc = add_col(w, cols[i].p, cols[i].len, err);
        if (rc)
            return rc;
    }
    return 0;
}

/* A statement begins: whatever an earlier statement left is forgotten, so
 * one writer serves statement after statement. */
static int w_begin(void *ctx, const ads_str *cols, size_t ncols, ads_error *err)
{
    ads_writer *w = ctx;
    ads_arena_reset(w->a);
    ads_arena_reset(w->ca);
    w->ncols = w->nrows = 0;
    w->count = 0;
    w->released = w->ended = false;
    w->began = true;
    w->fixed = ncols > 0;
    return add_cols(w, cols, ncols, err);
}

/* SELECT * over a type: every attribute its rows can carry, before them. */
static int w_columns(void *ctx, const ads_str *cols, size_t ncols, ads_error *err)
{
    ads_writer *w = ctx;
    if (w->nrows || w->count)
        return 0;
    w->fixed = true;
    return add_cols(w, cols, ncols, err);
}

/* ---- cell text for csv and tabular ---- */

/* The text of attribute col of row: strings raw, undefined (or absent) empty,
 * everything else in ClassAd syntax. *number is set for numbers. */
static void cell(ads_buf *out, const ads_record *row, ads_str col, bool *number)
{
    *number = false;
    const ads_expr *e = ads_record_lookup(row, col.p, col.len);
    if (!e)
        return;
    const ads_value *v = ads_expr_literal_value(e);
    if (!v) {
        ads_expr_unparse(out, e);
        return;
    }
    switch (v->type) {
    case ADS_UNDEFINED:
        return;
    case ADS_STRING:
        ads_buf_add(out, v->u.s.p, v->u.s.len);
        return;
    case ADS_INTEGER:
    case ADS_REAL:
        *number = true;
        ads_value_unparse(out, v);
        return;
    default:
        ads_value_unparse(out, v);
        return;
    }
}

/* A csv field: quoted when it holds a comma, quote, CR or LF or starts or
 * ends with a space; bytes that are not UTF-8 become U+FFFD, so the file
 * is valid UTF-8 whatever the strings held. */
static void csv_field(ads_buf *b, const char *p, size_t n)
{
    ads_buf fixed = ADS_BUF_INIT;
    if (!ads_q__utf8_valid(p, n)) {
        ads_q__utf8_repair(&fixed, p, n);
        if (fixed.failed) {
            b->failed = true;
            ads_buf_free(&fixed);
            return;
        }
        p = fixed.p;
        n = fixed.len;
    }
    bool quote = n && (p[0] == ' ' || p[n - 1] == ' ');
    for (size_t i = 0; i < n && !quote; i++)
        quote = p[i] == ',' || p[i] == '"' || p[i] == '\r' || p[i] == '\n';
    if (!quote) {
        ads_buf_add(b, p, n);
    } else {
        ads_buf_addc(b, '"');
        for (size_t i = 0; i < n; i++) {
            if (p[i] == '"')
                ads_buf_addc(b, '"');
            ads_buf_addc(b, p[i]);
        }
        ads_buf_addc(b, '"');
    }
    ads_buf_free(&fixed);
}

static void csv_header(ads_writer *w)
{
    if (!w->header)
        return;
    for (size_t i = 0; i < w->ncols; i++) {
        if (i)
            ads_buf_addc(&w->b, ',');
        csv_field(&w->b, w->cols[i].p, w->cols[i].len);
    }
    ads_buf_adds(&w->b, "\r\n");
}

static void csv_row(ads_writer *w, const ads_record *row)
{
    ads_buf t = ADS_BUF_INIT;
    for (size_t i = 0; i < w->ncols; i++) {
        bool num;
        ads_buf_clear(&t);
        cell(&t, row, w->cols[i], &num);
        if (i)
            ads_buf_addc(&w->b, ',');
        csv_field(&w->b, t.p ? t.p : "", t.len);
    }
    ads_buf_adds(&w->b, "\r\n");
    if (t.failed)
        w->b.failed = true;
    ads_buf_free(&t);
}

/* ---- values: condor_q -af's form ---- */

/* A value as -af prints it: strings raw, undefined as `undefined`,
 * everything else in ClassAd syntax. */
static void af_value(ads_buf *b, const ads_expr *e)
{
    const ads_value *v = e ? ads_expr_literal_value(e) : NULL;
    if (!e)
        ads_buf_adds(b, "undefined");
    else if (!v)
        ads_expr_unparse(b, e);
    else if (v->type == ADS_STRING)
        ads_buf_add(b, v->u.s.p, v->u.s.len);
    else
        ads_value_unparse(b, v);
}

/* One line per row: the columns' values (or, with no columns, the row's
 * attributes in order) separated by single spaces. */
static void values_row(ads_writer *w, const ads_record *row)
{
    size_t n = w->ncols ? w->ncols : ads_record_size(row);
    for (size_t i = 0; i < n; i++) {
        if (i)
            ads_buf_addc(&w->b, ' ');
        const ads_expr *e = w->ncols ? ads_record_lookup(row, w->cols[i].p, w->cols[i].len)
                                     : ads_record_expr(row, i);
        af_value(&w->b, e);
    }
    ads_buf_addc(&w->b, '\n');
}

/* ---- tabular ---- */

/* A cell on one line: \n, \r and \t spelled out (as in ClassAd strings). */
static void one_line(ads_buf *t)
{
    size_t n = 0;
    for (size_t i = 0; i < t->len; i++)
        n += t->p[i] == '\n' || t->p[i] == '\r' || t->p[i] == '\t';
    if (n == 0)
        return;
    ads_buf o = ADS_BUF_INIT;
    for (size_t i = 0; i < t->len; i++) {
        char c = t->p[i];
        if (c == '\n' || c == '\r' || c == '\t') {
            ads_buf_addc(&o, '\\');
            ads_buf_addc(&o, c == '\n' ? 'n' : c == '\r' ? 'r' : 't');
        } else {
            ads_buf_addc(&o, c);
        }
    }
    ads_buf_free(t);
    *t = o;
}

/* The tabular text of a cell (valid UTF-8, on one line). */
static void tab_cell(ads_buf *t, const ads_record *row, ads_str col, bool *number)
{
    ads_buf raw = ADS_BUF_INIT;
    cell(&raw, row, col, number);
    ads_q__utf8_repair(t, raw.p ? raw.p : "", raw.len);
    if (raw.failed)
        t->failed = true;
    ads_buf_free(&raw);
    one_line(t);
}

static void pad(ads_buf *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        ads_buf_addc(b, ' ');
}

static void trim_line(ads_buf *b, size_t line_start)
{
    while (b->len > line_start && b->p[b->len - 1] == ' ')
        b->len--;
    ads_buf_addc(b, '\n');
}

/* One aligned line of cells: numbers right-aligned; a cell wider than its
 * column (a row after the measured ones) is written whole. */
static void tab_line(ads_writer *w, const ads_buf *cells)
{
    size_t ls = w->b.len;
    for (size_t c = 0; c < w->ncols; c++) {
        const ads_buf *t = &cells[c];
        size_t x = ads_q__display_width(t->p ? t->p : "", t->len);
        size_t gap = x < w->wd[c] ? w->wd[c] - x : 0;
        if (c)
            ads_buf_adds(&w->b, "  ");
        if (w->numcol[c])
            pad(&w->b, gap);
        ads_buf_add(&w->b, t->p ? t->p : "", t->len);
        if (!w->numcol[c])
            pad(&w->b, gap);
    }
    trim_line(&w->b, ls);
}

static int tab_row(ads_writer *w, const ads_record *row, ads_error *err)
{
    ads_buf *cells = calloc(w->ncols ? w->ncols : 1, sizeof *cells);
    if (!cells)
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    for (size_t c = 0; c < w->ncols; c++) {
        bool num;
        tab_cell(&cells[c], row, w->cols[c], &num);
        if (cells[c].failed)
            w->b.failed = true;
    }
    tab_line(w, cells);
    for (size_t c = 0; c < w->ncols; c++)
        ads_buf_free(&cells[c]);
    free(cells);
    return 0;
}

/* Widths and number columns from the labels and the held rows. */
static int tab_measure(ads_writer *w, ads_error *err)
{
    size_t nc = w->ncols ? w->ncols : 1;
    free(w->wd);
    free(w->numcol);
    w->wd = calloc(nc, sizeof *w->wd);
    w->numcol = calloc(nc, sizeof *w->numcol);
    if (!w->wd || !w->numcol)
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    for (size_t c = 0; c < w->ncols; c++) {
        w->wd[c] = w->header ? ads_q__display_width(w->cols[c].p, w->cols[c].len) : 0;
        w->numcol[c] = w->nrows > 0;
    }
    ads_buf t = ADS_BUF_INIT;
    for (size_t r = 0; r < w->nrows; r++)
        for (size_t c = 0; c < w->ncols; c++) {
            bool num;
            ads_buf_clear(&t);
            tab_cell(&t, w->rows[r], w->cols[c], &num);
            size_t x = ads_q__display_width(t.p ? t.p : "", t.len);
            w->wd[c] = x > w->wd[c] ? x : w->wd[c];
            if (!num && t.len)
                w->numcol[c] = false;
        }
    bool failed = t.failed;
    ads_buf_free(&t);
    return failed ? ads_error_set(err, ADS_ENOMEM, "out of memory") : 0;
}

static void tab_header(ads_writer *w)
{
    if (!w->header)
        return;
    ads_buf *labels = calloc(w->ncols, sizeof *labels);
    if (!labels) {
        w->b.failed = true;
        return;
    }
    for (size_t c = 0; c < w->ncols; c++)
        ads_q__utf8_repair(&labels[c], w->cols[c].p, w->cols[c].len);
    tab_line(w, labels);
    size_t ls = w->b.len;
    for (size_t c = 0; c < w->ncols; c++) {
        if (c)
            ads_buf_adds(&w->b, "  ");
        for (size_t i = 0; i < w->wd[c]; i++)
            ads_buf_addc(&w->b, '-');
        if (labels[c].failed)
            w->b.failed = true;
        ads_buf_free(&labels[c]);
    }
    trim_line(&w->b, ls);
    free(labels);
}

/* ---- the sink ---- */

static bool holds_rows(const ads_writer *w)
{
    return !w->released &&
           (w->f == ADS_FORMAT_TABULAR || (w->f == ADS_FORMAT_CSV && !w->fixed));
}

/* Write the header and the held rows; from now on rows go straight out. */
static int release(ads_writer *w, ads_error *err)
{
    int rc = 0;
    w->released = true;
    if (w->f == ADS_FORMAT_TABULAR && w->ncols) {
        if ((rc = tab_measure(w, err)))
            return rc;
        tab_header(w);
        for (size_t i = 0; i < w->nrows && !rc; i++)
            rc = tab_row(w, w->rows[i], err);
    } else if (w->f == ADS_FORMAT_CSV && w->ncols) {
        csv_header(w);
        for (size_t i = 0; i < w->nrows; i++)
            csv_row(w, w->rows[i]);
    }
    w->nrows = 0;
    ads_arena_reset(w->a);
    return rc ? rc : flush(w, false, err);
}

static int hold(ads_writer *w, const ads_record *row, ads_error *err)
{
    ads_value v = ads_recordv(row), c;
    if (ads_q__copy(&c, &v, w->a))
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    if (w->nrows == w->caprows) {
        size_t cap = w->caprows ? 2 * w->caprows : 64;
        const ads_record **m = realloc(w->rows, cap * sizeof *m);
        if (!m)
            return ads_error_set(err, ADS_ENOMEM, "out of memory");
        w->rows = m;
        w->caprows = cap;
    }
    w->rows[w->nrows++] = c.u.rec;
    w->peak = w->nrows > w->peak ? w->nrows : w->peak;
    if (!w->fixed)
        for (size_t i = 0; i < ads_record_size(row); i++) {
            ads_str n = ads_record_name(row, i);
            int rc = add_col(w, n.p, n.len, err);
            if (rc)
                return rc;
        }
    w->count++;
    return w->nrows >= ADS_WRITER_SAMPLE_ROWS ? release(w, err) : 0;
}

/* csv and tabular after the held rows, when the columns came from them: a
 * row with an attribute they lack cannot be shown. */
static int check_cols(const ads_writer *w, const ads_record *row, ads_error *err)
{
    for (size_t i = 0; !w->fixed && i < ads_record_size(row); i++) {
        ads_str n = ads_record_name(row, i);
        if (!has_col(w, n.p, n.len))
            return ads_error_set(err, ADS_EINVAL,
                                 "row %llu has attribute %.*s, which none of the first %u rows "
                                 "had, so %s has no column for it: name the columns (SELECT "
                                 "%.*s, ...) or use another format",
                                 (unsigned long long)w->count + 1, (int)n.len, n.p,
                                 ADS_WRITER_SAMPLE_ROWS, ads_format_name(w->f), (int)n.len, n.p);
    }
    return 0;
}

static int w_row(void *ctx, const ads_record *row, ads_error *err)
{
    ads_writer *w = ctx;
    int rc;
    if (holds_rows(w))
        return hold(w, row, err);
    /* a row that cannot be written leaves no part of itself behind */
    size_t mark = w->b.len;
    switch (w->f) {
    case ADS_FORMAT_TEXT:
        if (ads_record_size(row) == 0) {
            ads_buf_addc(&w->b, '\n');
        } else if ((rc = ads_long_write(&w->b, row, err))) {
            w->b.len = mark;
            return rc;
        }
        break;
    case ADS_FORMAT_NATIVE:
        ads_record_unparse(&w->b, row);
        ads_buf_addc(&w->b, '\n');
        break;
    case ADS_FORMAT_JSON:
    case ADS_FORMAT_JSONL:
        if (w->f == ADS_FORMAT_JSON)
            ads_buf_adds(&w->b, w->count ? ",\n" : "[\n");
        if ((rc = ads_json_write(&w->b, row, ADS_JSON_COMPACT, err))) {
            w->b.len = mark;
            return rc;
        }
        if (w->f == ADS_FORMAT_JSONL)
            ads_buf_addc(&w->b, '\n');
        break;
    case ADS_FORMAT_CSV:
        if ((rc = check_cols(w, row, err)))
            return rc;
        if (w->count == 0)
            csv_header(w);
        csv_row(w, row);
        break;
    case ADS_FORMAT_TABULAR:
        if ((rc = check_cols(w, row, err)) || (rc = tab_row(w, row, err)))
            return rc;
        break;
    case ADS_FORMAT_VALUES:
        values_row(w, row);
        break;
    case ADS_FORMAT_XML:
        if (w->count == 0)
            ads_xml_write_begin(&w->b);
        if ((rc = ads_xml_write(&w->b, row, err))) {
            w->b.len = mark;
            return rc;
        }
        break;
    }
    w->count++;
    return flush(w, false, err);
}

static int w_end(void *ctx, ads_error *err)
{
    ads_writer *w = ctx;
    if (w->ended)
        return 0;
    w->ended = true;
    int rc;
    switch (w->f) {
    case ADS_FORMAT_JSON:
        ads_buf_adds(&w->b, w->count ? "\n]\n" : "[]\n");
        break;
    case ADS_FORMAT_XML:
        if (w->count == 0)
            ads_xml_write_begin(&w->b);
        ads_xml_write_end(&w->b);
        break;
    case ADS_FORMAT_CSV:
        if (!w->fixed && !w->released && (rc = release(w, err)))
            return rc;
        if (w->fixed && w->count == 0 && w->ncols)
            csv_header(w);
        break;
    case ADS_FORMAT_TABULAR:
        if (!w->released && (rc = release(w, err)))
            return rc;
        break;
    default:
        break;
    }
    return flush(w, true, err);
}

int ads_writer_abort(ads_writer *w, ads_error *err)
{
    if (!w || w->ended || !w->began)
        return 0;
    if (w->count == 0) {
        /* nothing was opened: write nothing (not json's [] or xml's header) */
        w->ended = true;
        return flush(w, true, err);
    }
    return w_end(w, err);
}

ads_sink ads_writer_sink(ads_writer *w)
{
    ads_sink s = {w_begin, w_row, w_end, w, w_columns};
    return s;
}
