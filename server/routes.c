/*
 * server/routes.c: the JSON API (docs/server.md has each route with curl
 * examples). A request arrives here with its body whole and its token
 * checked (server/http.c); each route checks its arguments and role, then
 * runs a statement (server/stream.c) or works on the store directly (a
 * record by its key: server/point.c).
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "classad/formats.h"
#include "server/records.h"
#include "server/server_int.h"

static const char *arg(struct MHD_Connection *c, const char *name)
{
    return MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, name);
}

static enum MHD_Result fail(struct MHD_Connection *c, request *rq, unsigned status, int code,
                            const char *msg)
{
    ads_error e;
    ads_error_set(&e, code, "%s", msg);
    return resp_error(c, rq, status, &e);
}

static enum MHD_Result forbidden(struct MHD_Connection *c, request *rq)
{
    return fail(c, rq, MHD_HTTP_FORBIDDEN, ADS_EREADONLY,
                "this token is read-only: writing needs a token with the write role");
}

static bool flag_arg(struct MHD_Connection *c, const char *name)
{
    const char *v = arg(c, name);
    return v != NULL && (strcmp(v, "1") == 0 || strcasecmp(v, "true") == 0);
}

static enum MHD_Result send_json_buf(struct MHD_Connection *c, request *rq, ads_buf *b)
{
    struct MHD_Response *r = b->failed ? NULL : resp_json(b->p, b->len);
    ads_buf_free(b);
    return resp_queue(c, rq, MHD_HTTP_OK, r);
}

/* ---- statements ---- */

typedef struct stmt_req {
    const char *text;
    size_t len;
    const char *format;
    bool hidden;
} stmt_req;

/* Field `name` of a JSON body as it was written: its literal value, or NULL
 * when it is missing or an expression. */
static const ads_value *body_literal(const ads_record *rec, const char *name, size_t len)
{
    const ads_expr *e = ads_record_lookup(rec, name, len);
    return e != NULL ? ads_expr_literal_value(e) : NULL;
}

/* A JSON body: {"statement": "...", "format": "csv", "hidden": true}, one
 * object and nothing after it but white space. */
static int stmt_body(const ads_record **rec, request *rq, ads_arena *a, ads_error *err)
{
    ads_json_reader *r = NULL;
    const ads_record *more = NULL;
    int rc = ads_json_reader_new(&r, rq->body.p, rq->body.len, err);
    if (rc == 0)
        rc = ads_json_reader_next(rec, NULL, r, a, err);
    if (rc == 1 && (rc = ads_json_reader_next(&more, NULL, r, a, err)) == 1)
        rc = ads_error_set(err, ADS_EINVAL, "the body holds more than one JSON object");
    else if (rc == 0 && *rec == NULL)
        rc = ads_error_set(err, ADS_EINVAL, "the body holds no JSON object");
    ads_json_reader_free(r);
    return rc < 0 ? rc : 0;
}

static int stmt_from_json(stmt_req *out, request *rq, ads_arena *a, ads_error *err)
{
    const ads_record *rec = NULL;
    int rc = stmt_body(&rec, rq, a, err);
    if (rc < 0)
        return rc;
    /* the fields' values as written, never evaluated: a "\/Expr(...)\/"
     * string is an expression, which a statement body has no use for (and
     * evaluating it here would run outside every statement limit) */
    const ads_value *v = body_literal(rec, "statement", 9);
    if (v == NULL || v->type != ADS_STRING)
        return ads_error_set(err, ADS_EINVAL, "the body's \"statement\" must be a string");
    out->text = v->u.s.p;
    out->len = v->u.s.len;
    v = body_literal(rec, "format", 6);
    if (v != NULL && v->type == ADS_STRING)
        out->format = ads_arena_strndup(a, v->u.s.p, v->u.s.len);
    else if (ads_record_lookup(rec, "format", 6) != NULL)
        return ads_error_set(err, ADS_EINVAL, "the body's \"format\" must be a string");
    v = body_literal(rec, "hidden", 6);
    if (v != NULL && v->type == ADS_BOOLEAN)
        out->hidden = v->u.b;
    else if (ads_record_lookup(rec, "hidden", 6) != NULL)
        return ads_error_set(err, ADS_EINVAL, "the body's \"hidden\" must be true or false");
    return 0;
}

static int stmt_parse(stmt_req *out, struct MHD_Connection *c, request *rq, ads_arena *a,
                      ads_error *err)
{
    const char *ct = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Type");
    out->format = arg(c, "format");
    out->hidden = flag_arg(c, "hidden");
    if (ct != NULL && strncasecmp(ct, "application/json", 16) == 0)
        return stmt_from_json(out, rq, a, err);
    out->text = rq->body.p;
    out->len = rq->body.len;
    return 0;
}

static int stmt_check(const stmt_req *sr, ads_format *fmt, ads_stmt_kind *kind, ads_error *err)
{
    *fmt = ADS_FORMAT_JSONL;
    if (sr->format != NULL && ads_format_parse(fmt, sr->format, err) < 0)
        return err->code;
    if (sr->text == NULL || sr->len == 0)
        return ads_error_set(err, ADS_EINVAL, "no statement: send it as the body");
    if (memchr(sr->text, '\0', sr->len) != NULL)
        return ads_error_set(err, ADS_EINVAL, "the statement holds a NUL byte");
    return ads_query_parse(sr->text, sr->len, 0, sr->len, kind, err);
}

static enum MHD_Result post_query(struct MHD_Connection *c, request *rq)
{
    ads_error err;
    ads_error_clear(&err);
    ads_arena *a = ads_arena_new();
    if (a == NULL)
        return MHD_NO;
    stmt_req sr = {0};
    ads_format fmt;
    ads_stmt_kind kind;
    enum MHD_Result ret;
    if (stmt_parse(&sr, c, rq, a, &err) < 0 || stmt_check(&sr, &fmt, &kind, &err) < 0)
        ret = resp_error(c, rq, 0, &err);
    else if (kind != ADS_STMT_SELECT && rq->role != ADS_ROLE_WRITE)
        ret = forbidden(c, rq);
    else
        ret = stream_statement(c, rq, sr.text, sr.len, fmt, sr.hidden, false);
    ads_arena_free(a);
    return ret;
}

/* ---- records ---- */

static bool is_name(const char *s, size_t len)
{
    if (len == 0 || len > 255 || !((s[0] >= 'A' && s[0] <= 'Z') ||
                                   (s[0] >= 'a' && s[0] <= 'z') || s[0] == '_'))
        return false;
    for (size_t i = 1; i < len; i++) {
        char ch = s[i];
        if (!((ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
              ch == '_'))
            return false;
    }
    return true;
}

typedef struct key_where {
    ads_buf *b;
    ads_arena *a;
    ads_error *err;
    int n;
    point_query pq;
} key_where;

/* A key value as written in the URL: a ClassAd literal (5, "x", true) as it
 * is, anything else as a string. */
static void add_literal(ads_buf *b, ads_arena *a, const char *v)
{
    const ads_expr *e;
    if (ads_expr_parse(&e, a, v, strlen(v), NULL) == 0 && ads_expr_kind_of(e) == ADS_X_LITERAL) {
        ads_buf_adds(b, v);
        return;
    }
    ads_value s = ads_string(v, strlen(v));
    ads_value_unparse(b, &s);
}

static enum MHD_Result add_key(void *cls, enum MHD_ValueKind kind, const char *key,
                               const char *value)
{
    key_where *kw = cls;
    (void)kind;
    if (!is_name(key, strlen(key))) {
        ads_error_set(kw->err, ADS_EINVAL, "'%s' is not an attribute name", key);
        return MHD_NO;
    }
    if (value == NULL) {
        ads_error_set(kw->err, ADS_EINVAL, "key attribute '%s' has no value", key);
        return MHD_NO;
    }
    ads_buf_printf(kw->b, "%s%s =?= ", kw->n++ ? " && " : " WHERE ", key);
    add_literal(kw->b, kw->a, value);
    if (kw->pq.nargs < ADS_SERVE_POINT_KEYS)
        kw->pq.args[kw->pq.nargs] = (point_arg){key, value};
    kw->pq.nargs++;
    return MHD_YES;
}

/* The record read from the store directly (server/point.c), or by the
 * statement stmt when that path leaves it. */
static enum MHD_Result answer_point(struct MHD_Connection *c, request *rq,
                                    const point_query *pq, const ads_buf *stmt)
{
    ads_error err;
    ads_error_clear(&err);
    ads_buf out;
    ads_buf_init(&out);
    int rc = point_read(&out, rq->s->db, pq, &err);
    if (rc == POINT_FALLBACK) {
        ads_buf_free(&out);
        return stream_statement(c, rq, stmt->p, stmt->len, ADS_FORMAT_JSONL, true,
                                !pq->history);
    }
    if (rc == 0 && !pq->history)
        ads_error_set(&err, ADS_ENOTFOUND, "no record has that key");
    if (rc < 0 || (rc == 0 && !pq->history)) {
        ads_buf_free(&out);
        return resp_error(c, rq, 0, &err);
    }
    struct MHD_Response *r =
        MHD_create_response_from_buffer(out.len, out.p, MHD_RESPMEM_MUST_FREE);
    if (r == NULL) {
        ads_buf_free(&out);
        return MHD_NO;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "application/x-ndjson");
    return resp_queue(c, rq, MHD_HTTP_OK, r);
}

/* GET /api/records/TYPE[/history]?KEY=VALUE&... */
static enum MHD_Result get_record(struct MHD_Connection *c, request *rq, const char *rest)
{
    const char *slash = strchr(rest, '/');
    size_t tlen = slash != NULL ? (size_t)(slash - rest) : strlen(rest);
    bool history = slash != NULL && strcmp(slash, "/history") == 0;
    if (!is_name(rest, tlen) || (slash != NULL && !history))
        return fail(c, rq, MHD_HTTP_NOT_FOUND, ADS_ENOTFOUND,
                    "no such route: records are at /api/records/TYPE?KEY=VALUE and "
                    "/api/records/TYPE/history?KEY=VALUE");
    ads_error err;
    ads_error_clear(&err);
    ads_buf b;
    ads_buf_init(&b);
    ads_arena *a = ads_arena_new();
    key_where kw = {&b, a, &err, 0, {.type = rest, .type_len = tlen, .history = history}};
    ads_buf_printf(&b, "SELECT * FROM %.*s", (int)tlen, rest);
    MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, add_key, &kw);
    enum MHD_Result ret;
    if (a == NULL || b.failed) {
        ret = MHD_NO;
    } else if (err.code != 0) {
        ret = resp_error(c, rq, 0, &err);
    } else if (kw.n == 0) {
        ret = fail(c, rq, MHD_HTTP_BAD_REQUEST, ADS_EINVAL,
                   "give the record's key attributes as arguments: ?Name=value");
    } else {
        if (history)
            ads_buf_adds(&b, " && _Deleted =!= undefined && @anytime()");
        ret = b.failed ? MHD_NO : answer_point(c, rq, &kw.pq, &b);
    }
    ads_buf_free(&b);
    ads_arena_free(a);
    return ret;
}

static enum MHD_Result post_records(struct MHD_Connection *c, request *rq, bool bulk)
{
    if (rq->role != ADS_ROLE_WRITE)
        return forbidden(c, rq);
    ads_error err;
    ads_error_clear(&err);
    body_format f;
    const char *ct = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Type");
    uint64_t stored = 0, unchanged = 0;
    int rc = body_format_parse(&f, arg(c, "format"), ct, &err);
    if (rc == 0)
        rc = bulk ? records_import(rq->s->db, f, rq->body.p, rq->body.len, &stored, &unchanged,
                                   &err)
                  : records_store(rq->s->db, f, rq->body.p, rq->body.len, &stored, &unchanged,
                                  &err);
    if (rc < 0)
        return resp_error(c, rq, 0, &err);
    ads_buf b;
    ads_buf_init(&b);
    ads_buf_printf(&b, "{\"stored\":%llu,\"unchanged\":%llu}\n", (unsigned long long)stored,
                   (unsigned long long)unchanged);
    return send_json_buf(c, rq, &b);
}

/* ---- identifiers ---- */

typedef struct ids_ctx {
    const char *seq;
    uint64_t count;
    ads_buf *b;
    ads_arena *a;
} ids_ctx;

static int make_ids(ads_txn *txn, void *arg, ads_error *err)
{
    ids_ctx *ic = arg;
    ads_buf_clear(ic->b);
    ads_buf_adds(ic->b, "{\"sequence\":");
    json_str(ic->b, ic->seq, strlen(ic->seq));
    ads_buf_adds(ic->b, ",\"values\":[");
    for (uint64_t i = 0; i < ic->count; i++) {
        ads_value v;
        ads_arena_reset(ic->a);
        int rc = ads_txn_next_value(&v, txn, ic->seq, strlen(ic->seq), ic->a, err);
        if (rc < 0)
            return rc;
        if (i > 0)
            ads_buf_addc(ic->b, ',');
        json_value(ic->b, &v);
    }
    ads_buf_adds(ic->b, "]}\n");
    return 0;
}

static enum MHD_Result post_ids(struct MHD_Connection *c, request *rq)
{
    if (rq->role != ADS_ROLE_WRITE)
        return forbidden(c, rq);
    const char *seq = arg(c, "sequence");
    const char *n = arg(c, "count");
    ids_ctx ic = {seq != NULL ? seq : "ordered", 1, NULL, NULL};
    if (n != NULL) {
        char *end;
        unsigned long long v = strtoull(n, &end, 10);
        if (*n < '0' || *n > '9' || *end != '\0' || v == 0 || v > ADS_SERVE_MAX_IDS) {
            char msg[128];
            snprintf(msg, sizeof msg, "count must be a number from 1 to %u", ADS_SERVE_MAX_IDS);
            return fail(c, rq, MHD_HTTP_BAD_REQUEST, ADS_EINVAL, msg);
        }
        ic.count = v;
    }
    ads_buf b;
    ads_buf_init(&b);
    ads_error err;
    ads_error_clear(&err);
    ic.b = &b;
    ic.a = ads_arena_new();
    int rc = ic.a != NULL ? ads_db_write(rq->s->db, make_ids, &ic, &err)
                          : ads_error_set(&err, ADS_ENOMEM, "out of memory");
    ads_arena_free(ic.a);
    if (rc < 0) {
        ads_buf_free(&b);
        return resp_error(c, rq, 0, &err);
    }
    return send_json_buf(c, rq, &b);
}

/* ---- health, stats, page ---- */

static enum MHD_Result get_health(struct MHD_Connection *c, request *rq)
{
    ads_buf b;
    ads_buf_init(&b);
    ads_buf_printf(&b, "{\"status\":\"ok\",\"uptime_seconds\":%.3f}\n",
                   now_seconds() - rq->s->started);
    return send_json_buf(c, rq, &b);
}

static enum MHD_Result get_stats(struct MHD_Connection *c, request *rq)
{
    server *s = rq->s;
    ads_db_info info;
    ads_error err;
    if (ads_db_info_get(&info, s->db, &err) < 0)
        return resp_error(c, rq, 0, &err);
    pthread_mutex_lock(&s->mu);
    unsigned long long req = s->requests, failed = s->failures;
    unsigned active = s->active;
    pthread_mutex_unlock(&s->mu);
    ads_buf b;
    ads_buf_init(&b);
    ads_buf_printf(&b,
                   "{\"requests\":%llu,\"failures\":%llu,\"active\":%u,\"uptime_seconds\":%.3f,"
                   "\"store\":{\"map_size\":%zu,\"used_bytes\":%zu,\"page_size\":%zu,"
                   "\"entries\":%llu,\"readers\":%u,\"max_readers\":%u}}\n",
                   req, failed, active, now_seconds() - s->started, info.map_size,
                   info.used_bytes, info.page_size, (unsigned long long)info.entries,
                   info.readers, info.max_readers);
    return send_json_buf(c, rq, &b);
}

static enum MHD_Result get_page(struct MHD_Connection *c, request *rq)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(
        server_page_len, (void *)server_page, MHD_RESPMEM_PERSISTENT);
    if (r != NULL) {
        MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/html; charset=utf-8");
        MHD_add_response_header(r, "Content-Security-Policy",
                                "default-src 'none'; script-src 'unsafe-inline'; "
                                "style-src 'unsafe-inline'; connect-src 'self'; img-src 'self'");
    }
    return resp_queue(c, rq, MHD_HTTP_OK, r);
}

static enum MHD_Result not_found(struct MHD_Connection *c, request *rq)
{
    return fail(c, rq, MHD_HTTP_NOT_FOUND, ADS_ENOTFOUND,
                "no such route; docs/server.md lists the routes");
}

static enum MHD_Result bad_method(struct MHD_Connection *c, request *rq, const char *allowed)
{
    char msg[96];
    snprintf(msg, sizeof msg, "method %s is not allowed here; use %s", rq->method, allowed);
    ads_error e;
    ads_error_set(&e, ADS_EINVAL, "%s", msg);
    return resp_error(c, rq, MHD_HTTP_METHOD_NOT_ALLOWED, &e);
}

enum MHD_Result route(struct MHD_Connection *c, request *rq)
{
    const char *u = rq->url;
    bool get = strcmp(rq->method, "GET") == 0 || strcmp(rq->method, "HEAD") == 0;
    bool post = strcmp(rq->method, "POST") == 0;
    if (strcmp(u, "/") == 0)
        return get ? get_page(c, rq) : bad_method(c, rq, "GET");
    if (strcmp(u, "/api/health") == 0)
        return get ? get_health(c, rq) : bad_method(c, rq, "GET");
    if (strcmp(u, "/api/stats") == 0)
        return get ? get_stats(c, rq) : bad_method(c, rq, "GET");
    if (strcmp(u, "/api/query") == 0)
        return post ? post_query(c, rq) : bad_method(c, rq, "POST");
    if (strcmp(u, "/api/types") == 0 || strcmp(u, "/api/sequences") == 0) {
        if (!get)
            return bad_method(c, rq, "GET");
        const char *st = u[5] == 't' ? "SELECT * USING types" : "SELECT * USING sequences";
        return stream_statement(c, rq, st, strlen(st), ADS_FORMAT_JSON, false, false);
    }
    if (strcmp(u, "/api/records") == 0)
        return post ? post_records(c, rq, false) : bad_method(c, rq, "POST");
    if (strncmp(u, "/api/records/", 13) == 0)
        return get ? get_record(c, rq, u + 13) : bad_method(c, rq, "GET");
    if (strcmp(u, "/api/import") == 0)
        return post ? post_records(c, rq, true) : bad_method(c, rq, "POST");
    if (strcmp(u, "/api/ids") == 0)
        return post ? post_ids(c, rq) : bad_method(c, rq, "POST");
    return not_found(c, rq);
}
