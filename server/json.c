/*
 * server/json.c: the JSON the server writes itself (records and rows go
 * through the classad writers): strings, error objects and single values,
 * plus the small helpers every route uses to answer.
 */
#include <math.h>
#include <string.h>
#include <time.h>

#include "base/utf8.h"
#include "idgen/idgen.h"
#include "server/server_int.h"

void json_str(ads_buf *b, const char *p, size_t len)
{
    static const char hex[] = "0123456789abcdef";
    ads_buf_addc(b, '"');
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)p[i];
        if (c == '"' || c == '\\') {
            ads_buf_addc(b, '\\');
            ads_buf_addc(b, (char)c);
        } else if (c == '\n') {
            ads_buf_adds(b, "\\n");
        } else if (c == '\t') {
            ads_buf_adds(b, "\\t");
        } else if (c == '\r') {
            ads_buf_adds(b, "\\r");
        } else if (c < 0x20 || c == 0x7f) {
            char u[7] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15], 0};
            ads_buf_adds(b, u);
        } else if (c < 0x80) {
            ads_buf_addc(b, (char)c);
        } else {
            /* JSON is UTF-8: a byte that does not begin a well-formed
             * sequence (a name or token a client sent, echoed in an error)
             * is written as U+FFFD */
            size_t n = ads_utf8_len((const unsigned char *)p + i, len - i);
            if (n == 0) {
                ads_buf_adds(b, "\\ufffd");
            } else {
                ads_buf_add(b, p + i, n);
                i += n - 1;
            }
        }
    }
    ads_buf_addc(b, '"');
}

/* {"error":{"message":"...","code":"syntax error","line":1,"column":8}}:
 * line and column only for errors about text; code is name. */
static void json_error_as(ads_buf *b, const ads_error *err, const char *name)
{
    ads_buf_adds(b, "{\"error\":{\"message\":");
    json_str(b, err->message, strlen(err->message));
    ads_buf_adds(b, ",\"code\":");
    json_str(b, name, strlen(name));
    if (err->line > 0)
        ads_buf_printf(b, ",\"line\":%d,\"column\":%d", err->line, err->column);
    ads_buf_adds(b, "}}\n");
}

/* The code is the library's name for err->code. */
void json_error(ads_buf *b, const ads_error *err)
{
    json_error_as(b, err, ads_strerror(err->code));
}

void json_value(ads_buf *b, const ads_value *v)
{
    char id[ADS_ID_TEXT_MAX + 1];
    switch (v->type) {
    case ADS_INTEGER:
        ads_buf_printf(b, "%lld", (long long)v->u.i);
        break;
    case ADS_REAL:
        if (isfinite(v->u.r))
            ads_buf_printf(b, "%.17g", v->u.r);
        else
            ads_buf_adds(b, "null");
        break;
    case ADS_BOOLEAN:
        ads_buf_adds(b, v->u.b ? "true" : "false");
        break;
    case ADS_STRING:
        json_str(b, v->u.s.p, v->u.s.len);
        break;
    case ADS_IDENT:
        json_str(b, id, ads_id_format(id, v->u.id));
        break;
    default: {
        ads_buf t;
        ads_buf_init(&t);
        ads_value_unparse(&t, v);
        json_str(b, t.p, t.len);
        ads_buf_free(&t);
    }
    }
}

unsigned status_of(int code)
{
    switch (code) {
    case ADS_ESYNTAX:
    case ADS_EINVAL:
    case ADS_ERANGE:
        return MHD_HTTP_BAD_REQUEST;
    case ADS_ENOTFOUND:
        return MHD_HTTP_NOT_FOUND;
    case ADS_EEXIST:
    case ADS_EBUSY:
        return MHD_HTTP_CONFLICT;
    case ADS_ELIMIT:
        return MHD_HTTP_UNPROCESSABLE_CONTENT;
    case ADS_EREADONLY:
        return MHD_HTTP_FORBIDDEN;
    case ADS_EMAPFULL:
        return MHD_HTTP_INSUFFICIENT_STORAGE;
    default:
        return MHD_HTTP_INTERNAL_SERVER_ERROR;
    }
}

struct MHD_Response *resp_json(const char *text, size_t len)
{
    struct MHD_Response *r =
        MHD_create_response_from_buffer(len, (void *)text, MHD_RESPMEM_MUST_COPY);
    if (r != NULL)
        MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
    return r;
}

enum MHD_Result resp_queue(struct MHD_Connection *c, request *rq, unsigned status,
                           struct MHD_Response *r)
{
    if (r == NULL)
        return MHD_NO;
    rq->status = status;
    enum MHD_Result ret = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return ret;
}

enum MHD_Result resp_error(struct MHD_Connection *c, request *rq, unsigned status,
                           const ads_error *err)
{
    ads_buf b;
    ads_buf_init(&b);
    /* No library error says "who are you": the server names it. */
    if (status == MHD_HTTP_UNAUTHORIZED)
        json_error_as(&b, err, "unauthorized");
    else
        json_error(&b, err);
    struct MHD_Response *r = resp_json(b.p, b.len);
    ads_buf_free(&b);
    if (r != NULL && status == MHD_HTTP_UNAUTHORIZED)
        MHD_add_response_header(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer realm=\"adstore\"");
    return resp_queue(c, rq, status ? status : status_of(err->code), r);
}

double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}
