/*
 * query/parser.c: the statement grammar (shared/spec/query.md section 1).
 * Keywords, type names, labels and punctuation are scanned here; every
 * expression is handed to the classad parser (ads_expr_parse_prefix), which
 * stops at the first token that cannot continue the expression, so one
 * expression grammar serves both languages. Errors give the line and column
 * in the statement's text and what was expected there.
 */
#include <stdio.h>
#include <string.h>

#include "query/query_int.h"

typedef struct sp {
    const char *text;
    size_t pos, end;
    ads_arena *a;
    ads_error *err;
    /* the first expression that was a bare keyword (SELECT FROM T): if the
     * statement then fails to parse, the keyword is the likelier mistake */
    bool kw;
    size_t kw_pos;
    const char *kw_what;
} sp;

static void line_col(const sp *p, size_t at, int *line, int *col)
{
    int l = 1;
    size_t ls = 0;
    for (size_t i = 0; i < at; i++)
        if (p->text[i] == '\n') {
            l++;
            ls = i + 1;
        }
    *line = l;
    *col = (int)(at - ls) + 1;
}

static bool is_word_start(char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
}

static bool is_word_char(char c)
{
    return is_word_start(c) || (c >= '0' && c <= '9');
}

/* Skip white space and comments. */
static void skip(sp *p)
{
    for (;;) {
        while (p->pos < p->end && (p->text[p->pos] == ' ' || p->text[p->pos] == '\t' ||
                                   p->text[p->pos] == '\n' || p->text[p->pos] == '\r'))
            p->pos++;
        if (p->pos + 1 < p->end && p->text[p->pos] == '/' && p->text[p->pos + 1] == '/') {
            while (p->pos < p->end && p->text[p->pos] != '\n')
                p->pos++;
            continue;
        }
        if (p->pos + 1 < p->end && p->text[p->pos] == '/' && p->text[p->pos + 1] == '*') {
            size_t q = p->pos + 2;
            while (q + 1 < p->end && !(p->text[q] == '*' && p->text[q + 1] == '/'))
                q++;
            p->pos = q + 1 < p->end ? q + 2 : p->end;
            continue;
        }
        return;
    }
}

/* A description of what is at the current position, for messages. */
static void found(const sp *p, char *buf, size_t cap)
{
    if (p->pos >= p->end) {
        snprintf(buf, cap, "the end of the statement");
        return;
    }
    size_t n = 0;
    const char *s = p->text + p->pos;
    if (is_word_start(*s)) {
        while (p->pos + n < p->end && is_word_char(s[n]) && n < 40)
            n++;
        snprintf(buf, cap, "'%.*s'", (int)n, s);
    } else {
        snprintf(buf, cap, "'%c'", *s);
    }
}

/* A limit of base/limits.h passed at the current position. */
static int over_limit(sp *p, const char *what, int limit)
{
    int line, col;
    skip(p);
    line_col(p, p->pos, &line, &col);
    return ads_error_set_at(p->err, ADS_ELIMIT, line, col, "at most %d %s expressions", limit,
                            what);
}

static int fail(sp *p, const char *expected)
{
    int line, col;
    char what[64];
    skip(p);
    line_col(p, p->pos, &line, &col);
    found(p, what, sizeof what);
    return ads_error_set_at(p->err, ADS_ESYNTAX, line, col, "expected %s, found %s", expected,
                            what);
}

/* Is the next word kw (case-insensitive)? Consumes it if so. */
static bool accept(sp *p, const char *kw)
{
    skip(p);
    size_t n = strlen(kw);
    if (p->end - p->pos < n)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = p->text[p->pos + i];
        if ((c >= 'A' && c <= 'Z' ? c | 0x20 : c) != kw[i])
            return false;
    }
    if (p->pos + n < p->end && is_word_char(p->text[p->pos + n]))
        return false;
    p->pos += n;
    return true;
}

static bool accept_char(sp *p, char c)
{
    skip(p);
    if (p->pos < p->end && p->text[p->pos] == c) {
        p->pos++;
        return true;
    }
    return false;
}

static const char *const reserved[] = {"select", "from", "where", "group", "order", "by",
                                       "limit", "join", "inner", "outer", "on", "using",
                                       "as", "asc", "desc", "set", "update", "delete",
                                       "purge", "store"};

static bool is_reserved(const char *s, size_t n)
{
    for (size_t i = 0; i < sizeof reserved / sizeof reserved[0]; i++) {
        size_t m = strlen(reserved[i]);
        if (m != n)
            continue;
        size_t j = 0;
        while (j < n && (s[j] >= 'A' && s[j] <= 'Z' ? s[j] | 0x20 : s[j]) == reserved[i][j])
            j++;
        if (j == n)
            return true;
    }
    return false;
}

/* A type or datasource name: letters, digits, '_', '.', '-' (starting with a
 * letter or '_'). */
static int type_name(sp *p, ads_str *out, int *line, int *col, const char *what)
{
    skip(p);
    size_t s = p->pos;
    if (s >= p->end || !is_word_start(p->text[s]))
        return fail(p, what);
    size_t e = s;
    while (e < p->end && (is_word_char(p->text[e]) || p->text[e] == '.' || p->text[e] == '-'))
        e++;
    while (e > s && (p->text[e - 1] == '.' || p->text[e - 1] == '-'))
        e--;
    if (line)
        line_col(p, s, line, col);
    out->p = p->text + s;
    out->len = e - s;
    p->pos = e;
    return 0;
}

/* An optional alias: a word that is not a keyword. */
static bool alias(sp *p, ads_str *out)
{
    skip(p);
    size_t save = p->pos;
    if (accept(p, "as")) {
        skip(p);
    }
    size_t s = p->pos, e = s;
    while (e < p->end && is_word_char(p->text[e]))
        e++;
    if (e == s || !is_word_start(p->text[s]) || is_reserved(p->text + s, e - s)) {
        p->pos = save;
        return false;
    }
    out->p = p->text + s;
    out->len = e - s;
    p->pos = e;
    return true;
}

/* An expression: the classad parser reads as far as it can. */
static int expr(sp *p, const ads_expr **out, const char *what)
{
    skip(p);
    if (p->pos >= p->end)
        return fail(p, what);
    size_t stop;
    int rc = ads_expr_parse_prefix(out, p->a, p->text, p->end, p->pos,
                                   ADS_PARSE_NOCOPY | ADS_PARSE_QUERY | ADS_PARSE_PARAMS, &stop,
                                   p->err);
    if (rc)
        return rc;
    if (!p->kw && ads_expr_kind_of(*out) == ADS_X_ATTR && is_word_start(p->text[p->pos])) {
        ads_str n = ads_expr_name(*out);
        if (is_reserved(n.p, n.len)) {
            p->kw = true;
            p->kw_pos = p->pos;
            p->kw_what = what;
        }
    }
    p->pos = stop;
    return 0;
}

/* A label after AS: a name, a 'quoted name' or a "string". */
static int label(sp *p, ads_str *out)
{
    skip(p);
    if (p->pos < p->end && (p->text[p->pos] == '\'' || p->text[p->pos] == '"')) {
        char q = p->text[p->pos];
        size_t e = p->pos + 1;
        while (e < p->end && p->text[e] != q && p->text[e] != '\n')
            e++;
        if (e >= p->end || p->text[e] != q || e == p->pos + 1)
            return fail(p, "a label");
        out->p = p->text + p->pos + 1;
        out->len = e - p->pos - 1;
        p->pos = e + 1;
        return 0;
    }
    size_t s = p->pos, e = s;
    while (e < p->end && is_word_char(p->text[e]))
        e++;
    if (e == s || !is_word_start(p->text[s]))
        return fail(p, "a label after AS");
    out->p = p->text + s;
    out->len = e - s;
    p->pos = e;
    return 0;
}

/* Arrays grown in the arena. */
static void *grow(sp *p, void *old, size_t n, size_t size)
{
    /* capacities 4, 8, 16, ...: grow when n reaches one */
    if (n != 0 && (n < 4 || (n & (n - 1))))
        return old;
    size_t cap = n ? 2 * n : 4;
    void *m = ads_arena_alloc(p->a, cap * size);
    if (m && old)
        memcpy(m, old, n * size);
    if (!m)
        ads_error_set(p->err, ADS_ENOMEM, "out of memory");
    return m;
}

/* The label of an item without AS: a plain reference's name, else its text. */
static int default_label(sp *p, sel_item *it, size_t from, size_t to)
{
    ads_expr_kind k = ads_expr_kind_of(it->e);
    if (k == ADS_X_ATTR || k == ADS_X_SELECT) {
        it->label = ads_expr_name(it->e);
        return 0;
    }
    /* the text as written, trimmed; aggregates keep their spelling (count(*)) */
    while (to > from && (p->text[to - 1] == ' ' || p->text[to - 1] == '\t' ||
                         p->text[to - 1] == '\n' || p->text[to - 1] == '\r'))
        to--;
    ads_buf b = ADS_BUF_INIT;
    /* collapse runs of white space so labels are one line, except inside
     * strings, quoted names and times, which keep their text */
    bool space = false;
    char quote = 0;
    for (size_t i = from; i < to; i++) {
        char c = p->text[i];
        if (quote) {
            ads_buf_addc(&b, c);
            if (c == '\\' && i + 1 < to)
                ads_buf_addc(&b, p->text[++i]);
            else if (c == quote)
                quote = 0;
            continue;
        }
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
            space = true;
            continue;
        }
        if (space && b.len)
            ads_buf_addc(&b, ' ');
        space = false;
        if (c == '"' || c == '\'' || c == '`')
            quote = c;
        ads_buf_addc(&b, c);
    }
    char *s = b.failed ? NULL : ads_arena_strndup(p->a, b.p ? b.p : "", b.len);
    ads_buf_free(&b);
    if (!s)
        return ads_error_set(p->err, ADS_ENOMEM, "out of memory");
    it->label.p = s;
    it->label.len = strlen(s);
    return 0;
}

/* LIMIT ? or LIMIT :name: the placeholder alone (bound before the
 * statement runs, params.c). */
static int limit_param(sp *p, stmt *st)
{
    size_t s = p->pos;
    int rc = expr(p, &st->limit_param, "a whole number after LIMIT");
    if (rc)
        return rc;
    if (ads_expr_kind_of(st->limit_param) != ADS_X_PARAM) {
        p->pos = s;
        return fail(p, "a whole number or one placeholder after LIMIT");
    }
    return 0;
}

static int parse_select(sp *p, stmt *st)
{
    int rc;
    st->kind = ADS_STMT_SELECT;
    st->limit = -1;
    if (accept_char(p, '*')) {
        st->star = true;
    } else {
        for (;;) {
            skip(p);
            size_t from = p->pos;
            sel_item it = {NULL, {"", 0}, false};
            if ((rc = expr(p, &it.e, "an expression or '*' in the select list")))
                return rc;
            size_t to = p->pos;
            if (accept(p, "as")) {
                if ((rc = label(p, &it.label)))
                    return rc;
                it.named = true;
            } else if ((rc = default_label(p, &it, from, to))) {
                return rc;
            }
            if (!(st->items = grow(p, st->items, st->nitems, sizeof *st->items)))
                return ADS_ENOMEM;
            st->items[st->nitems++] = it;
            if (!accept_char(p, ','))
                break;
        }
    }
    if (accept(p, "from")) {
        st->has_from = true;
        if ((rc = type_name(p, &st->type, &st->type_line, &st->type_column, "a type name")))
            return rc;
        alias(p, &st->alias);
        for (;;) {
            join_clause j = {false, false, {"", 0}, {"", 0}, NULL, 0, 0};
            if (accept(p, "inner")) {
                if (!accept(p, "join"))
                    return fail(p, "JOIN after INNER");
            } else if (accept(p, "outer")) {
                j.outer = true;
                if (!accept(p, "join"))
                    return fail(p, "JOIN after OUTER");
            } else if (!accept(p, "join")) {
                break;
            }
            /* ALL is no reserved word (a type may be named All): it is JOIN ALL's
             * only when a type and an alias follow it */
            size_t before_all = p->pos;
            if (accept(p, "all")) {
                ads_str t, al;
                skip(p);
                if (p->pos < p->end && is_word_start(p->text[p->pos]) &&
                    !type_name(p, &t, NULL, NULL, "") && alias(p, &al))
                    j.all = true;
                p->pos = before_all;
                if (j.all)
                    accept(p, "all");
            }
            if ((rc = type_name(p, &j.type, &j.line, &j.column, "a type name after JOIN")))
                return rc;
            if (!alias(p, &j.alias))
                return fail(p, "an alias for the joined type (JOIN Type T2 ON ...)");
            if (!accept(p, "on"))
                return fail(p, "ON after the joined type");
            if ((rc = expr(p, &j.on, "the JOIN condition")))
                return rc;
            if (!(st->joins = grow(p, st->joins, st->njoins, sizeof *st->joins)))
                return ADS_ENOMEM;
            st->joins[st->njoins++] = j;
        }
    } else if (accept(p, "using")) {
        st->has_using = true;
        if ((rc = type_name(p, &st->using_name, NULL, NULL, "a datasource name after USING")))
            return rc;
    }
    if (accept(p, "where") && (rc = expr(p, &st->where, "a condition after WHERE")))
        return rc;
    if (accept(p, "group")) {
        if (!accept(p, "by"))
            return fail(p, "BY after GROUP");
        do {
            const ads_expr *g;
            if (st->ngroup == ADS_MAX_GROUP_BY)
                return over_limit(p, "GROUP BY", ADS_MAX_GROUP_BY);
            if ((rc = expr(p, &g, "an expression after GROUP BY")))
                return rc;
            if (!(st->group = grow(p, st->group, st->ngroup, sizeof *st->group)))
                return ADS_ENOMEM;
            st->group[st->ngroup++] = g;
        } while (accept_char(p, ','));
    }
    if (accept(p, "order")) {
        if (!accept(p, "by"))
            return fail(p, "BY after ORDER");
        do {
            order_item o = {NULL, false, -1};
            if (st->norder == ADS_MAX_ORDER_BY)
                return over_limit(p, "ORDER BY", ADS_MAX_ORDER_BY);
            if ((rc = expr(p, &o.e, "an expression after ORDER BY")))
                return rc;
            if (accept(p, "desc"))
                o.desc = true;
            else
                accept(p, "asc");
            if (!(st->order = grow(p, st->order, st->norder, sizeof *st->order)))
                return ADS_ENOMEM;
            st->order[st->norder++] = o;
        } while (accept_char(p, ','));
    }
    if (accept(p, "limit")) {
        skip(p);
        if (p->pos < p->end && (p->text[p->pos] == '?' || p->text[p->pos] == ':'))
            return limit_param(p, st);
        size_t s = p->pos;
        int64_t v = 0;
        while (p->pos < p->end && p->text[p->pos] >= '0' && p->text[p->pos] <= '9') {
            int d = p->text[p->pos] - '0';
            if (v > (INT64_MAX - d) / 10) {
                p->pos = s;
                return fail(p, "a smaller LIMIT");
            }
            v = v * 10 + d;
            p->pos++;
        }
        if (p->pos == s || (p->pos < p->end && is_word_char(p->text[p->pos]))) {
            p->pos = s;
            return fail(p, "a whole number after LIMIT");
        }
        st->limit = v;
    }
    return 0;
}

static int parse_update(sp *p, stmt *st)
{
    int rc;
    st->kind = ADS_STMT_UPDATE;
    st->has_from = true;
    if ((rc = type_name(p, &st->type, &st->type_line, &st->type_column,
                        "a type name after UPDATE")))
        return rc;
    if (!accept(p, "set"))
        return fail(p, "SET");
    do {
        set_item s = {{"", 0}, NULL};
        skip(p);
        size_t at = p->pos;
        if (at < p->end && p->text[at] == '\'') {
            size_t e = at + 1;
            while (e < p->end && p->text[e] != '\'' && p->text[e] != '\n')
                e++;
            if (e >= p->end || p->text[e] != '\'' || e == at + 1)
                return fail(p, "an attribute name after SET");
            s.name.p = p->text + at + 1;
            s.name.len = e - at - 1;
            p->pos = e + 1;
        } else {
            size_t e = at;
            while (e < p->end && is_word_char(p->text[e]))
                e++;
            if (e == at || !is_word_start(p->text[at]))
                return fail(p, "an attribute name after SET");
            s.name.p = p->text + at;
            s.name.len = e - at;
            p->pos = e;
        }
        if (!accept_char(p, '='))
            return fail(p, "'=' after the attribute name");
        if ((rc = expr(p, &s.e, "an expression after '='")))
            return rc;
        if (!(st->sets = grow(p, st->sets, st->nsets, sizeof *st->sets)))
            return ADS_ENOMEM;
        st->sets[st->nsets++] = s;
    } while (accept_char(p, ','));
    if (accept(p, "where") && (rc = expr(p, &st->where, "a condition after WHERE")))
        return rc;
    return 0;
}

static int parse_delete(sp *p, stmt *st, ads_stmt_kind kind)
{
    int rc;
    st->kind = kind;
    if (accept(p, "from")) {
        st->has_from = true;
        if ((rc = type_name(p, &st->type, &st->type_line, &st->type_column, "a type name")))
            return rc;
    }
    if (accept(p, "where") && (rc = expr(p, &st->where, "a condition after WHERE")))
        return rc;
    return 0;
}

/* PURGE HISTORY FROM type [WHERE ...]: history rows, not records; the type
 * is needed (its HistoryRetention, or the cut the WHERE gives). */
static int parse_purge(sp *p, stmt *st)
{
    int rc;
    if (!accept(p, "history"))
        return parse_delete(p, st, ADS_STMT_PURGE);
    st->kind = ADS_STMT_PURGE;
    st->history = true;
    if (!accept(p, "from"))
        return fail(p, "FROM and a type name after PURGE HISTORY");
    st->has_from = true;
    if ((rc = type_name(p, &st->type, &st->type_line, &st->type_column, "a type name")))
        return rc;
    if (accept(p, "where") && (rc = expr(p, &st->where, "a condition after WHERE")))
        return rc;
    return 0;
}

static int parse_store(sp *p, stmt *st)
{
    int rc;
    st->kind = ADS_STMT_STORE;
    do {
        skip(p);
        if (p->pos >= p->end || p->text[p->pos] != '[')
            return fail(p, "a record '[ ... ]' to store");
        const ads_expr *r;
        if ((rc = expr(p, &r, "a record")))
            return rc;
        if (ads_expr_kind_of(r) != ADS_X_RECORD)
            return fail(p, "',' or the end of the statement after the record");
        if (!(st->records = grow(p, st->records, st->nrecords, sizeof *st->records)))
            return ADS_ENOMEM;
        st->records[st->nrecords++] = r;
    } while (accept_char(p, ','));
    return 0;
}

/* BEGIN, COMMIT (or END), ROLLBACK, each with an optional TRANSACTION. */
static int parse_control(sp *p, stmt *st, ads_stmt_kind kind)
{
    st->kind = kind;
    accept(p, "transaction");
    return 0;
}

/* The statement at p: its kind's clauses, then the end of the statement. */
static int parse_stmt(sp *p, stmt *st)
{
    int rc;
    st->explain = accept(p, "explain");
    st->analyze = st->explain && accept(p, "analyze");
    if (accept(p, "select"))
        rc = parse_select(p, st);
    else if (accept(p, "update"))
        rc = parse_update(p, st);
    else if (accept(p, "delete"))
        rc = parse_delete(p, st, ADS_STMT_DELETE);
    else if (accept(p, "purge"))
        rc = parse_purge(p, st);
    else if (accept(p, "store"))
        rc = parse_store(p, st);
    else if (accept(p, "begin"))
        rc = parse_control(p, st, ADS_STMT_BEGIN);
    else if (accept(p, "commit") || accept(p, "end"))
        rc = parse_control(p, st, ADS_STMT_COMMIT);
    else if (accept(p, "rollback"))
        rc = parse_control(p, st, ADS_STMT_ROLLBACK);
    else
        return fail(p, "SELECT, UPDATE, DELETE, PURGE, STORE, BEGIN, COMMIT or ROLLBACK");
    if (rc)
        return rc;
    accept_char(p, ';');
    skip(p);
    if (p->pos < p->end) {
        switch (st->kind) {
        case ADS_STMT_SELECT:
            if (st->limit >= 0 || st->limit_param)
                return fail(p, "the end of the statement");
            if (st->norder)
                return fail(p, "',', ASC, DESC, LIMIT or the end of the statement");
            if (st->ngroup)
                return fail(p, "',', ORDER BY, LIMIT or the end of the statement");
            if (st->where)
                return fail(p, "GROUP BY, ORDER BY, LIMIT or the end of the statement");
            if (st->has_from || st->has_using)
                return fail(p, "JOIN, WHERE, GROUP BY, ORDER BY, LIMIT or the end of the "
                               "statement");
            if (st->star)
                return fail(p, "FROM, USING, WHERE, GROUP BY, ORDER BY, LIMIT or the end of "
                               "the statement");
            return fail(p, "',', AS, FROM, USING, WHERE, GROUP BY, ORDER BY, LIMIT or the end "
                           "of the statement");
        case ADS_STMT_UPDATE:
            return fail(p, st->where ? "the end of the statement"
                                     : "',', WHERE or the end of the statement");
        case ADS_STMT_STORE:
            return fail(p, "',' or the end of the statement");
        case ADS_STMT_BEGIN:
        case ADS_STMT_COMMIT:
        case ADS_STMT_ROLLBACK:
            return fail(p, "the end of the statement");
        default:
            return fail(p, st->where ? "the end of the statement"
                                     : "WHERE or the end of the statement");
        }
    }
    return 0;
}

int ads_stmt__parse(stmt *st, ads_arena *a, const char *text, size_t len, size_t start,
                    size_t end, ads_error *err)
{
    sp p = {text, start, end < len ? end : len, a, err, false, 0, NULL};
    memset(st, 0, sizeof *st);
    st->text = text;
    st->start = start;
    st->end = p.end;
    st->limit = -1;
    int rc = parse_stmt(&p, st);
    if (rc == ADS_ESYNTAX && p.kw) {
        /* SELECT FROM T: FROM was read as an attribute reference */
        p.pos = p.kw_pos;
        return fail(&p, p.kw_what);
    }
    return rc;
}
