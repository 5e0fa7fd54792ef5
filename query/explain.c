/*
 * query/explain.c: `EXPLAIN SELECT ...` (docs/query.md, docs/indexes.md).
 * The SELECT is planned as it would run (exec.c calls here once its plan
 * is made, before anything is read) and each step of the plan becomes one
 * row with two attributes, Step (1, 2, ...) and Plan (what the step does):
 * where the rows come from (a scan of a type's latest rows or of every
 * row, a key lookup, an index with the terms it answers, its ranges and
 * the entries it was counted at, a datasource), the WHERE left to test on
 * each row, each JOIN and how it finds its rows, grouping, sorting and the
 * LIMIT. EXPLAIN reads at most what the planner counts; it returns no rows
 * of the statement.
 *
 * EXPLAIN ANALYZE runs the SELECT first (its rows go nowhere; exec.c counts
 * what each step did in an ads_q__xcount) and each step's row ends with
 * what it did: "; run: ..." (entries and rows read, rows kept, rows out).
 *
 * EXPLAIN UPDATE, DELETE and PURGE (write.c) show where the records come
 * from (a scan or an index, as for a SELECT), the WHERE, and the write;
 * EXPLAIN ANALYZE of them runs the write, as PostgreSQL's does, and adds
 * what each step read, kept and wrote.
 */
#include <stdio.h>
#include <string.h>

#include "query/query_int.h"

typedef struct xout {
    const ads_sink *sink;
    ads_arena *a;
    long step;
    ads_buf line;
    ads_buf *keep; /* not NULL: each step's text goes here (its length, then it), not to sink */
} xout;

/* A row of the plan: Step and Plan (text, len bytes). */
static int send_step(xout *x, const char *p, size_t len, ads_error *err)
{
    ads_record_builder *b;
    int rc = ads_record_builder_new(&b, x->a, err);
    if (rc)
        return rc;
    const ads_expr *step, *plan;
    char *text = ads_arena_strndup(x->a, p, len);
    if (!text)
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    ads_value sv = ads_int(++x->step), pv = ads_string(text, len);
    if ((rc = ads_expr_literal(&step, x->a, &sv, err)) ||
        (rc = ads_expr_literal(&plan, x->a, &pv, err)) ||
        (rc = ads_record_builder_add(b, "Step", 4, step, err)) ||
        (rc = ads_record_builder_add(b, "Plan", 4, plan, err)))
        return rc;
    return x->sink && x->sink->row ? x->sink->row(x->sink->ctx, ads_record_builder_finish(b), err)
                                   : 0;
}

static int emit(xout *x, ads_error *err)
{
    if (x->line.failed)
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    int rc;
    if (x->keep) {
        /* the length first: an unparsed string may hold any byte */
        size_t n = x->line.len;
        ads_buf_add(x->keep, (const char *)&n, sizeof n);
        ads_buf_add(x->keep, x->line.p ? x->line.p : "", n);
        x->step++;
        rc = x->keep->failed ? ads_error_set(err, ADS_ENOMEM, "out of memory") : 0;
    } else {
        rc = send_step(x, x->line.p ? x->line.p : "", x->line.len, err);
    }
    ads_buf_clear(&x->line);
    return rc;
}

static const char *plural(uint64_t n, const char *one, const char *many)
{
    return n == 1 ? one : many;
}

/* "; run: N rows kept" and the like, after EXPLAIN ANALYZE. */
static void run_rows(xout *x, const ads_q__xsel *s, uint64_t n, const char *what)
{
    if (s->run)
        ads_buf_printf(&x->line, "; run: %llu %s %s", (unsigned long long)n,
                       plural(n, "row", "rows"), what);
}

/* Does the index scan merge its span with the filters (all exact values:
 * ads_index_scan_filter) rather than probe them per entry? */
static bool merged(const ads_q__iplan *ip)
{
    return ip->n == 1 && ip->nfilters && ads_index_span_exact(ip->spans[0]);
}

static void run_source(xout *x, const ads_q__xsel *s)
{
    const ads_scan_counts *c = s->run ? &s->run->src : NULL;
    if (!c)
        return;
    ads_buf_adds(&x->line, "; run: ");
    if (s->ip && s->ip->n) {
        ads_buf_printf(&x->line, "%llu index %s read, ", (unsigned long long)c->entries,
                       plural(c->entries, "entry", "entries"));
        if (s->ip->nfilters && !merged(s->ip))
            ads_buf_printf(&x->line, "%llu skipped by the probes, ",
                           (unsigned long long)c->probed_out);
    }
    ads_buf_printf(&x->line, "%llu %s read", (unsigned long long)c->rows,
                   plural(c->rows, "row", "rows"));
    if (!s->pushed)
        ads_buf_printf(&x->line, ", %llu kept", (unsigned long long)s->run->src_out);
}

static void add_expr(xout *x, const char *what, const ads_expr *e)
{
    ads_buf_adds(&x->line, what);
    ads_expr_unparse(&x->line, e);
}

/* Where the rows come from. */
static int source(xout *x, const ads_q__xsel *s, ads_error *err)
{
    const char *tname = s->type ? ads_type_name(s->type) : NULL;
    if (s->ds_name.len) {
        ads_buf_printf(&x->line, "datasource %.*s: every row it gives", (int)s->ds_name.len,
                       s->ds_name.p);
    } else if (!tname) {
        ads_buf_adds(&x->line, s->st->has_from || s->st->has_using
                                   ? "one row (no type is read)"
                                   : "scan every type's latest rows, in type and key order");
    } else if (s->point) {
        ads_buf_printf(&x->line, "key lookup in %s: the %s given by WHERE", tname,
                       ads_type_key_count(s->type) > 1 ? "key attributes" : "key attribute");
        if (s->history)
            ads_buf_adds(&x->line, ", then that record's every row, oldest first");
    } else if (s->ip && s->ip->n) {
        ads_buf_printf(&x->line, "index on %s.", tname);
        for (size_t i = 0; i < s->ip->n; i++)
            ads_buf_printf(&x->line, "%s%s", i ? " | " : "", ads_index_span_attr(s->ip->spans[i]));
        ads_buf_printf(&x->line, ": %s (", s->ip->text);
        size_t ranges = 0;
        for (size_t i = 0; i < s->ip->n; i++)
            ranges += ads_index_span_ranges(s->ip->spans[i]);
        ads_buf_printf(&x->line, "%zu value range%s, %llu entr%s counted", ranges,
                       ranges == 1 ? "" : "s", (unsigned long long)s->ip->estimate,
                       s->ip->estimate == 1 ? "y" : "ies");
        if (s->ip->n > 1)
            ads_buf_adds(&x->line, ", a union: each record once");
        ads_buf_adds(&x->line, ")");
        const char *with = merged(s->ip) ? ", merged in key order with the index on "
                                         : ", each entry probed in the index on ";
        for (size_t i = 0; i < s->ip->nfilters; i++)
            ads_buf_printf(&x->line, "%s%s", i ? ", " : with,
                           ads_index_span_attr(s->ip->filters[i]));
        ads_buf_adds(&x->line, ", then each record's latest row");
    } else {
        ads_buf_printf(&x->line, "scan %s: %s, in key order", tname,
                       s->history ? "every row of every record" : "latest rows");
        if (s->ip && s->ip->candidates)
            ads_buf_printf(&x->line, " (%zu indexed term%s weighed: an index would read a "
                                     "quarter of the type or more)",
                           s->ip->candidates, s->ip->candidates == 1 ? "" : "s");
    }
    if (s->deleted)
        ads_buf_adds(&x->line, "; deleted records included");
    run_source(x, s);
    return emit(x, err);
}

/* The WHERE tested on each row as it is read. */
static int filter(xout *x, const ads_q__xsel *s, ads_error *err)
{
    add_expr(x, "filter each row: ", s->pushed);
    run_rows(x, s, s->run ? s->run->src_out : 0, "kept");
    return emit(x, err);
}

static const ads_str cols[2] = {{"Step", 4}, {"Plan", 4}};

int ads_q__explain(const ads_q__xsel *s, const ads_sink *sink, uint64_t *steps, ads_arena *a,
                   ads_error *err)
{
    xout x = {sink, a, 0, ADS_BUF_INIT, NULL};
    const stmt *st = s->st;
    int rc = sink && sink->begin ? sink->begin(sink->ctx, cols, 2, err) : 0;
    if (!rc)
        rc = source(&x, s, err);
    if (!rc && s->pushed)
        rc = filter(&x, s, err);
    for (size_t i = 0; !rc && i < s->njoins; i++) {
        const join_clause *j = &st->joins[i];
        ads_buf_printf(&x.line, "%s join %.*s %.*s: %s", j->outer ? "outer" : "inner",
                       (int)j->type.len, j->type.p, (int)j->alias.len, j->alias.p,
                       s->join_lookup[i] ? "a key lookup per row"
                                         : "a scan of its latest rows per row");
        ads_buf_adds(&x.line, j->all ? ", every row ON accepts" : ", the first row ON accepts");
        run_rows(&x, s, s->run ? s->run->join_out[i] : 0, "out");
        rc = emit(&x, err);
    }
    if (!rc && s->post) {
        add_expr(&x, s->njoins ? "filter each joined row: " : "filter each row: ", s->post);
        if (s->run)
            ads_buf_printf(&x.line, "; run: %llu of %llu %s kept",
                           (unsigned long long)s->run->post_out,
                           (unsigned long long)s->run->post_in,
                           plural(s->run->post_in, "row", "rows"));
        rc = emit(&x, err);
    }
    if (!rc && s->grouped) {
        if (st->ngroup)
            ads_buf_printf(&x.line, "group by %zu expression%s: one entry per group",
                           st->ngroup, st->ngroup == 1 ? "" : "s");
        else
            ads_buf_adds(&x.line, "aggregate every row into one group");
        if (s->run)
            ads_buf_printf(&x.line, "; run: %llu %s in, %llu %s out",
                           (unsigned long long)s->run->grouped_in,
                           plural(s->run->grouped_in, "row", "rows"),
                           (unsigned long long)s->run->groups,
                           plural(s->run->groups, "group", "groups"));
        rc = emit(&x, err);
    }
    if (!rc && st->norder) {
        ads_buf_printf(&x.line, "sort by %zu key%s", st->norder, st->norder == 1 ? "" : "s");
        if (st->limit >= 0)
            ads_buf_printf(&x.line, ", keeping the best %lld", (long long)st->limit);
        if (s->run)
            ads_buf_printf(&x.line, "; run: %llu %s in, %llu out",
                           (unsigned long long)s->run->sorted_in,
                           plural(s->run->sorted_in, "row", "rows"),
                           (unsigned long long)s->run->sorted_out);
        rc = emit(&x, err);
    }
    if (!rc && st->limit >= 0) {
        ads_buf_printf(&x.line, "limit %lld rows", (long long)st->limit);
        run_rows(&x, s, s->run ? s->run->out : 0, "out");
        rc = emit(&x, err);
    }
    if (!rc) {
        ads_buf_adds(&x.line, st->star ? "project every attribute" : "project the select list");
        run_rows(&x, s, s->run ? s->run->out : 0, "out");
        rc = emit(&x, err);
    }
    if (!rc && sink && sink->end)
        rc = sink->end(sink->ctx, err);
    *steps = (uint64_t)x.step;
    ads_buf_free(&x.line);
    return rc;
}

/* ---- UPDATE, DELETE, PURGE ---- */

/* What the statement does to each record it picks. */
static int write_step(xout *x, const ads_q__xsel *s, const uint64_t *written, ads_error *err)
{
    const stmt *st = s->st;
    const char *done = "purged";
    if (st->kind == ADS_STMT_UPDATE) {
        ads_buf_adds(&x->line, "update each record: SET ");
        for (size_t i = 0; i < st->nsets; i++) {
            ads_buf_printf(&x->line, "%s%.*s = ", i ? ", " : "", (int)st->sets[i].name.len,
                           st->sets[i].name.p);
            ads_expr_unparse(&x->line, st->sets[i].e);
        }
        ads_buf_adds(&x->line, ", a new latest row each");
        done = "updated";
    } else if (st->kind == ADS_STMT_DELETE) {
        ads_buf_adds(&x->line, "delete each record: a new latest row marked _Deleted");
        done = "deleted";
    } else {
        ads_buf_adds(&x->line, "purge each record: every row of it, and its index entries");
    }
    if (written)
        ads_buf_printf(&x->line, "; run: %llu %s %s", (unsigned long long)*written,
                       plural(*written, "record", "records"), done);
    return emit(x, err);
}

int ads_q__explain_write(const ads_q__xsel *s, const uint64_t *written, ads_buf *keep,
                         const ads_sink *sink, uint64_t *steps, ads_arena *a, ads_error *err)
{
    xout x = {sink, a, 0, ADS_BUF_INIT, keep};
    int rc = !keep && sink && sink->begin ? sink->begin(sink->ctx, cols, 2, err) : 0;
    if (!rc)
        rc = source(&x, s, err);
    if (!rc && s->pushed)
        rc = filter(&x, s, err);
    if (!rc)
        rc = write_step(&x, s, written, err);
    if (!rc && !keep && sink && sink->end)
        rc = sink->end(sink->ctx, err);
    *steps = (uint64_t)x.step;
    ads_buf_free(&x.line);
    return rc;
}

int ads_q__explain_send(const ads_buf *keep, const ads_sink *sink, uint64_t *steps, ads_arena *a,
                        ads_error *err)
{
    xout x = {sink, a, 0, ADS_BUF_INIT, NULL};
    int rc = sink && sink->begin ? sink->begin(sink->ctx, cols, 2, err) : 0;
    for (size_t at = 0; !rc && at + sizeof(size_t) <= keep->len;) {
        size_t n;
        memcpy(&n, keep->p + at, sizeof n);
        rc = send_step(&x, keep->p + at + sizeof n, n, err);
        at += sizeof n + n;
    }
    if (!rc && sink && sink->end)
        rc = sink->end(sink->ctx, err);
    *steps = (uint64_t)x.step;
    return rc;
}
