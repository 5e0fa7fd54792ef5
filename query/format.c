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

static const char *const names[] = {"text", "native", "json", "csv", "tabular", "xml"};

int ads_format_parse(ads_format *out, const char *name, ads_error *err)
{
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (name && strcasecmp(name, names[i]) == 0) {
            *out = (ads_format)i;
            return 0;
        }
    return ads_error_set(err, ADS_EINVAL,
                         "unknown format '%s'; expected text, native, json, csv, tabular or xml",
                         name ? name : "");
}

const char *ads_format_name(ads_format f)
{
    return (size_t)f < sizeof names / sizeof names[0] ? names[f] : "?";
}

struct ads_writer {
    ads_format f;
    FILE *to;
    ads_buf b;
    ads_arena *a;        /* columns and held rows */
    ads_str *cols;
    size_t ncols, capcols;
    bool named;          /* columns came from the select list */
    const ads_record **rows;
    size_t nrows, caprows;
    size_t count;
    bool began, ended;
};

int ads_writer_new(ads_writer **out, ads_format f, FILE *to, ads_error *err)
{
    ads_writer *w = calloc(1, sizeof *w);
    if (!w || !(w->a = ads_arena_new())) {
        free(w);
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    }
    w->f = f;
    w->to = to;
    *out = w;
    return 0;
}

void ads_writer_free(ads_writer *w)
{
    if (!w)
        return;
    ads_buf_free(&w->b);
    ads_arena_free(w->a);
    free(w->cols);
    free(w->rows);
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

static int add_col(ads_writer *w, const char *p, size_t len, ads_error *err)
{
    for (size_t i = 0; i < w->ncols; i++)
        if (w->cols[i].len == len && strncasecmp(w->cols[i].p, p, len) == 0)
            return 0;
    if (w->ncols == w->capcols) {
        size_t cap = w->capcols ? 2 * w->capcols : 16;
        ads_str *m = realloc(w->cols, cap * sizeof *m);
        if (!m)
            return ads_error_set(err, ADS_ENOMEM, "out of memory");
        w->cols = m;
        w->capcols = cap;
    }
    char *copy = ads_arena_strndup(w->a, p, len);
    if (!copy)
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    w->cols[w->ncols].p = copy;
    w->cols[w->ncols].len = len;
    w->ncols++;
    return 0;
}

static int w_begin(void *ctx, const ads_str *cols, size_t ncols, ads_error *err)
{
    ads_writer *w = ctx;
    w->began = true;
    w->named = ncols > 0;
    for (size_t i = 0; i < ncols; i++) {
        int rc = add_col(w, cols[i].p, cols[i].len, err);
        if (rc)
            return rc;
    }
    return 0;
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

static void csv_field(ads_buf *b, const char *p, size_t n)
{
    bool quote = n && (p[0] == ' ' || p[n - 1] == ' ');
    for (size_t i = 0; i < n && !quote; i++)
        quote = p[i] == ',' || p[i] == '"' || p[i] == '\r' || p[i] == '\n';
    if (!quote) {
        ads_buf_add(b, p, n);
        return;
    }
    ads_buf_addc(b, '"');
    for (size_t i = 0; i < n; i++) {
        if (p[i] == '"')
            ads_buf_addc(b, '"');
        ads_buf_addc(b, p[i]);
    }
    ads_buf_addc(b, '"');
}

static void csv_header(ads_writer *w)
{
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

/* Display width: UTF-8 code points. */
static size_t width(const char *p, size_t n)
{
    size_t w = 0;
    for (size_t i = 0; i < n; i++)
        if (((unsigned char)p[i] & 0xc0) != 0x80)
            w++;
    return w;
}

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

static int tabular(ads_writer *w, ads_error *err)
{
    size_t nc = w->ncols;
    if (nc == 0)
        return 0;
    size_t *wd = calloc(nc, sizeof *wd);
    bool *numcol = calloc(nc, sizeof *numcol);
    ads_buf *cells = calloc(w->nrows * nc + 1, sizeof *cells);
    bool *isnum = calloc(w->nrows * nc + 1, sizeof *isnum);
    if (!wd || !numcol || !cells || !isnum) {
        free(wd), free(numcol), free(cells), free(isnum);
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    }
    for (size_t c = 0; c < nc; c++) {
        wd[c] = width(w->cols[c].p, w->cols[c].len);
        numcol[c] = w->nrows > 0;
    }
    for (size_t r = 0; r < w->nrows; r++)
        for (size_t c = 0; c < nc; c++) {
            ads_buf *t = &cells[r * nc + c];
            cell(t, w->rows[r], w->cols[c], &isnum[r * nc + c]);
            one_line(t);
            if (t->failed)
                w->b.failed = true;
            size_t x = width(t->p ? t->p : "", t->len);
            wd[c] = x > wd[c] ? x : wd[c];
            if (!isnum[r * nc + c] && t->len)
                numcol[c] = false;
        }
    size_t ls = w->b.len;
    for (size_t c = 0; c < nc; c++) {
        size_t x = width(w->cols[c].p, w->cols[c].len);
        if (c)
            ads_buf_adds(&w->b, "  ");
        if (numcol[c])
            pad(&w->b, wd[c] - x);
        ads_buf_add(&w->b, w->cols[c].p, w->cols[c].len);
        if (!numcol[c])
            pad(&w->b, wd[c] - x);
    }
    trim_line(&w->b, ls);
    ls = w->b.len;
    for (size_t c = 0; c < nc; c++) {
        if (c)
            ads_buf_adds(&w->b, "  ");
        for (size_t i = 0; i < wd[c]; i++)
            ads_buf_addc(&w->b, '-');
    }
    trim_line(&w->b, ls);
    for (size_t r = 0; r < w->nrows; r++) {
        ls = w->b.len;
        for (size_t c = 0; c < nc; c++) {
            ads_buf *t = &cells[r * nc + c];
            size_t x = width(t->p ? t->p : "", t->len);
            if (c)
                ads_buf_adds(&w->b, "  ");
            if (numcol[c])
                pad(&w->b, wd[c] - x);
            ads_buf_add(&w->b, t->p ? t->p : "", t->len);
            if (!numcol[c])
                pad(&w->b, wd[c] - x);
        }
        trim_line(&w->b, ls);
    }
    for (size_t i = 0; i < w->nrows * nc; i++)
        ads_buf_free(&cells[i]);
    free(wd), free(numcol), free(cells), free(isnum);
    return flush(w, false, err);
}

/* ---- the sink ---- */

static bool holds_rows(const ads_writer *w)
{
    return w->f == ADS_FORMAT_TABULAR || (w->f == ADS_FORMAT_CSV && !w->named);
}

static int w_row(void *ctx, const ads_record *row, ads_error *err)
{
    ads_writer *w = ctx;
    int rc;
    if (holds_rows(w)) {
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
        if (!w->named)
            for (size_t i = 0; i < ads_record_size(row); i++) {
                ads_str n = ads_record_name(row, i);
                if ((rc = add_col(w, n.p, n.len, err)))
                    return rc;
            }
        w->count++;
        return 0;
    }
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
        ads_buf_adds(&w->b, w->count ? ",\n" : "[\n");
        if ((rc = ads_json_write(&w->b, row, ADS_JSON_COMPACT, err))) {
            w->b.len = mark;
            return rc;
        }
        break;
    case ADS_FORMAT_CSV:
        if (w->count == 0)
            csv_header(w);
        csv_row(w, row);
        break;
    case ADS_FORMAT_XML:
        if (w->count == 0)
            ads_xml_write_begin(&w->b);
        if ((rc = ads_xml_write(&w->b, row, err))) {
            w->b.len = mark;
            return rc;
        }
        break;
    default:
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
        if (holds_rows(w)) {
            if (w->ncols)
                csv_header(w);
            for (size_t i = 0; i < w->nrows; i++)
                csv_row(w, w->rows[i]);
        } else if (w->count == 0 && w->ncols) {
            csv_header(w);
        }
        break;
    case ADS_FORMAT_TABULAR: {
        int rc = tabular(w, err);
        if (rc)
            return rc;
        break;
    }
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
    ads_sink s = {w_begin, w_row, w_end, w};
    return s;
}
