/*
 * server/http.c: the server's life: the listening address and its safety
 * rule (beyond loopback only with TLS and tokens, unless told otherwise),
 * libmicrohttpd started with a thread per connection (poll(2), not select:
 * cheaper with many connections) and the limits of
 * base/limits.h, each request's body gathered (up to ADS_SERVE_MAX_BODY, and
 * ADS_SERVE_BODY_MEMORY for all bodies held) and its token checked before
 * routing, one log line per request, and the shutdown: stop accepting, let
 * requests in flight finish, stop the statement threads, close the store.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/bytes.h"
#include "server/server_int.h"

/* ---- the address ---- */

typedef struct listen_addr {
    struct sockaddr_storage ss;
    bool v6, loopback;
} listen_addr;

static int parse_port(const char *p, uint16_t *out)
{
    char *end;
    if (*p < '0' || *p > '9')
        return -1;
    unsigned long v = strtoul(p, &end, 10);
    if (*end != '\0' || v > 65535)
        return -1;
    *out = (uint16_t)v;
    return 0;
}

static int parse_listen(listen_addr *out, const char *s, ads_error *err)
{
    char host[64];
    const char *colon = strrchr(s, ':');
    uint16_t port;
    memset(out, 0, sizeof *out);
    if (colon == NULL || parse_port(colon + 1, &port) < 0 || (size_t)(colon - s) >= sizeof host)
        return ads_error_set(err, ADS_EINVAL,
                             "--listen '%s': expected ADDR:PORT (127.0.0.1:8642, [::1]:8642)", s);
    memcpy(host, s, (size_t)(colon - s));
    host[colon - s] = '\0';
    if (host[0] == '[' && host[strlen(host) - 1] == ']') {
        struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&out->ss;
        host[strlen(host) - 1] = '\0';
        if (inet_pton(AF_INET6, host + 1, &a6->sin6_addr) != 1)
            return ads_error_set(err, ADS_EINVAL, "--listen '%s': bad IPv6 address", s);
        a6->sin6_family = AF_INET6;
        a6->sin6_port = htons(port);
        out->v6 = true;
        out->loopback = IN6_IS_ADDR_LOOPBACK(&a6->sin6_addr);
        return 0;
    }
    struct sockaddr_in *a4 = (struct sockaddr_in *)&out->ss;
    if (inet_pton(AF_INET, host, &a4->sin_addr) != 1)
        return ads_error_set(err, ADS_EINVAL,
                             "--listen '%s': the address must be an IPv4 or [IPv6] literal", s);
    a4->sin_family = AF_INET;
    a4->sin_port = htons(port);
    out->loopback = (ntohl(a4->sin_addr.s_addr) >> 24) == 127;
    return 0;
}

/* ---- requests ---- */

/* The client's address as text ("-" when unknown). */
static void client_host(char *out, size_t cap, struct MHD_Connection *c)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    const struct sockaddr *sa = ci != NULL ? ci->client_addr : NULL;
    const char *p = NULL;
    if (sa != NULL && sa->sa_family == AF_INET)
        p = inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, out, (socklen_t)cap);
    else if (sa != NULL && sa->sa_family == AF_INET6)
        p = inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, out,
                      (socklen_t)cap);
    if (p == NULL)
        snprintf(out, cap, "-");
}

/* Write the lines held (s->mu held). */
static void log_flush(server *s)
{
    if (s->log.len > 0) {
        fwrite(s->log.p, 1, s->log.len, s->cfg->log);
        fflush(s->cfg->log);
    }
    ads_buf_clear(&s->log);
}

/* The second this thread's last log line showed, as text: a strftime per
 * second and thread rather than per request. */
static _Thread_local time_t log_sec;
static _Thread_local char log_when[32];

/* The request's log line, made before the lock is taken, into out (cap
 * bytes): its length, which is cap or more when it did not fit. */
static size_t log_format(char *out, size_t cap, struct MHD_Connection *c, const request *rq,
                         double now)
{
    char host[INET6_ADDRSTRLEN];
    client_host(host, sizeof host, c);
    time_t t = time(NULL);
    if (t != log_sec) {
        struct tm tm;
        gmtime_r(&t, &tm);
        strftime(log_when, sizeof log_when, "%Y-%m-%dT%H:%M:%SZ", &tm);
        log_sec = t;
    }
    long tenths = (long)((now - rq->start) * 1e4 + 0.5); /* of a millisecond */
    int n = snprintf(out, cap, "%s %s %s %s %s %u %ld.%ldms\n", log_when, host, rq->who,
                     rq->method, rq->url, rq->status, tenths / 10, tenths % 10);
    return n > 0 ? (size_t)n : 0;
}

/* Hold one line (s->mu held) until no other request is in flight,
 * ADS_SERVE_LOG_BYTES are held or the first was held ADS_SERVE_LOG_SECONDS:
 * a write per request would cost more than a point read. */
static void log_line(server *s, const char *line, size_t len, double now)
{
    if (s->log.len == 0)
        s->log_since = now;
    ads_buf_add(&s->log, line, len);
    if (atomic_load(&s->active) <= 1 || s->log.len >= ADS_SERVE_LOG_BYTES || s->log.failed ||
        now - s->log_since >= ADS_SERVE_LOG_SECONDS)
        log_flush(s);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    server *s = cls;
    request *rq = *con_cls;
    if (rq == NULL)
        return;
    *con_cls = NULL;
    if (toe != MHD_REQUEST_TERMINATED_COMPLETED_OK && rq->status < 400)
        rq->status = 499; /* the response did not reach the client whole */
    char small[512], *line = small;
    double now = now_seconds();
    size_t len = log_format(small, sizeof small, c, rq, now);
    if (len >= sizeof small) { /* a long URL */
        line = malloc(len + 1);
        if (line != NULL) {
            log_format(line, len + 1, c, rq, now);
        } else { /* out of memory: the line cut short, still one line */
            line = small;
            len = sizeof small - 1;
            small[len - 1] = '\n';
        }
    }
    pthread_mutex_lock(&s->mu);
    s->body_bytes -= rq->body_held;
    log_line(s, line, len, now);
    s->requests++;
    if (rq->status >= 400)
        s->failures++;
    if (atomic_fetch_sub(&s->active, 1) == 1)
        pthread_cond_broadcast(&s->idle);
    pthread_mutex_unlock(&s->mu);
    if (line != small)
        free(line);
    ads_buf_free(&rq->body);
    free(rq->url);
    free(rq);
}

/* The path of a request target: an absolute-form one (`GET http://host/api/health`,
 * which HTTP/1.1 servers must take) less its scheme and authority. */
static const char *origin_form(const char *url)
{
    const char *p = NULL;
    if (strncasecmp(url, "http://", 7) == 0)
        p = url + 7;
    else if (strncasecmp(url, "https://", 8) == 0)
        p = url + 8;
    if (p == NULL)
        return url;
    p = strchr(p, '/');
    return p != NULL ? p : "/";
}

static request *request_new(server *s, const char *url, const char *method)
{
    request *rq = calloc(1, sizeof *rq);
    if (rq == NULL)
        return NULL;
    rq->url = strdup(origin_form(url));
    if (rq->url == NULL) {
        free(rq);
        return NULL;
    }
    rq->s = s;
    snprintf(rq->method, sizeof rq->method, "%s", method);
    snprintf(rq->who, sizeof rq->who, "-");
    ads_buf_init(&rq->body);
    rq->start = now_seconds();
    atomic_fetch_add(&s->active, 1);
    return rq;
}

/* Routes anyone may reach: the page (it asks for a token) and health. */
static bool open_route(const char *url)
{
    return strcmp(url, "/") == 0 || strcmp(url, "/api/health") == 0;
}

/* 0 when the request may go on (rq->role set), else the status to answer. */
static unsigned check_token(server *s, struct MHD_Connection *c, request *rq, const char **msg)
{
    if (!s->auth) {
        rq->role = ADS_ROLE_WRITE;
        return 0;
    }
    const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
    if (h == NULL || strncasecmp(h, "Bearer ", 7) != 0) {
        if (open_route(rq->url))
            return 0;
        *msg = "this server needs a token: send 'Authorization: Bearer TOKEN'";
        return MHD_HTTP_UNAUTHORIZED;
    }
    /* the token without the white space around it (HTTP's optional white
     * space is not part of a field's value) */
    const char *t = h + 7;
    size_t n = strlen(t);
    while (n > 0 && (*t == ' ' || *t == '\t'))
        t++, n--;
    while (n > 0 && (t[n - 1] == ' ' || t[n - 1] == '\t'))
        n--;
    const token_entry *e = tokens_find(&s->tokens, t, n);
    if (e == NULL) {
        if (open_route(rq->url))
            return 0; /* a route that needs no token takes a bad one as none */
        *msg = "the token is not valid";
        return MHD_HTTP_UNAUTHORIZED;
    }
    rq->role = e->role;
    snprintf(rq->who, sizeof rq->who, "%s", e->name);
    return 0;
}

/* The body's declared length (0 when it declares none). */
static unsigned long long body_declared(struct MHD_Connection *c)
{
    const char *len = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Length");
    return len != NULL ? strtoull(len, NULL, 10) : 0;
}

/* Count n more bytes of rq's body against ADS_SERVE_BODY_MEMORY, the bytes
 * of every body the server holds: false (nothing counted) past it. */
static bool body_take(server *s, request *rq, size_t n)
{
    pthread_mutex_lock(&s->mu);
    bool ok = s->body_bytes + n <= ADS_SERVE_BODY_MEMORY;
    if (ok) {
        s->body_bytes += n;
        rq->body_held += n;
    }
    pthread_mutex_unlock(&s->mu);
    return ok;
}

/* rq's body is no longer needed: free it and give its bytes back. */
static void body_release(server *s, request *rq)
{
    if (rq->body_held == 0) { /* nothing counted: no lock */
        ads_buf_free(&rq->body);
        return;
    }
    pthread_mutex_lock(&s->mu);
    s->body_bytes -= rq->body_held;
    pthread_mutex_unlock(&s->mu);
    rq->body_held = 0;
    ads_buf_free(&rq->body);
}

static enum MHD_Result refuse_busy(struct MHD_Connection *c, request *rq)
{
    ads_error e;
    ads_error_set(&e, ADS_EBUSY,
                  "the server holds %zu bytes of request bodies, its limit; try again shortly",
                  (size_t)ADS_SERVE_BODY_MEMORY);
    return resp_error(c, rq, MHD_HTTP_SERVICE_UNAVAILABLE, &e);
}

static enum MHD_Result refuse(struct MHD_Connection *c, request *rq, unsigned status, int code,
                              const char *msg)
{
    ads_error e;
    ads_error_set(&e, code, "%s", msg);
    return resp_error(c, rq, status, &e);
}

static enum MHD_Result first_call(server *s, struct MHD_Connection *c, request *rq)
{
    const char *msg = NULL;
    unsigned st = check_token(s, c, rq, &msg);
    if (st != 0)
        return refuse(c, rq, st, ADS_EINVAL, msg);
    /* a body coded some other way than chunked (gzip, ...) has no length
     * the server could read it by: refused at once, not left to time out */
    const char *te = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Transfer-Encoding");
    if (te != NULL && strcasecmp(te, "chunked") != 0)
        return refuse(c, rq, MHD_HTTP_NOT_IMPLEMENTED, ADS_EINVAL,
                      "only the chunked transfer coding is understood");
    unsigned long long declared = body_declared(c);
    if (declared > ADS_SERVE_MAX_BODY) {
        char m[96];
        snprintf(m, sizeof m, "the body is larger than the server's limit of %zu bytes",
                 (size_t)ADS_SERVE_MAX_BODY);
        return refuse(c, rq, MHD_HTTP_CONTENT_TOO_LARGE, ADS_ELIMIT, m);
    }
    bool stopping = atomic_load(&s->draining), full = false;
    if (declared > 0) {
        pthread_mutex_lock(&s->mu);
        full = s->body_bytes + declared > ADS_SERVE_BODY_MEMORY;
        pthread_mutex_unlock(&s->mu);
    }
    if (full && !stopping)
        return refuse_busy(c, rq);
    if (stopping)
        return refuse(c, rq, MHD_HTTP_SERVICE_UNAVAILABLE, ADS_EBUSY,
                      "the server is shutting down");
    return MHD_YES;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version,
                                  const char *upload, size_t *upload_size, void **con_cls)
{
    server *s = cls;
    request *rq = *con_cls;
    (void)version;
    if (rq == NULL) {
        rq = request_new(s, url, method);
        if (rq == NULL)
            return MHD_NO;
        *con_cls = rq;
        return first_call(s, c, rq);
    }
    if (rq->status != 0) { /* answered already (refused): discard the body */
        *upload_size = 0;
        return MHD_YES;
    }
    if (*upload_size > 0) {
        if (rq->too_large || rq->too_busy)
            ;
        else if (rq->body.len + *upload_size > ADS_SERVE_MAX_BODY)
            rq->too_large = true;
        else if (!body_take(s, rq, *upload_size))
            rq->too_busy = true;
        else
            ads_buf_add(&rq->body, upload, *upload_size);
        if (rq->too_large || rq->too_busy)
            body_release(s, rq);
        *upload_size = 0;
        return MHD_YES;
    }
    if (rq->too_large || rq->body.failed)
        return refuse(c, rq, MHD_HTTP_CONTENT_TOO_LARGE, ADS_ELIMIT,
                      "the body is larger than the server's limit");
    if (rq->too_busy)
        return refuse_busy(c, rq);
    enum MHD_Result ret = route(c, rq);
    body_release(s, rq);
    return ret;
}

/* ---- the server's life ---- */

static char *read_file(const char *path, ads_error *err)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        ads_error_set(err, ADS_EIO, "cannot open %s: %s", path, strerror(errno));
        return NULL;
    }
    ads_buf b;
    ads_buf_init(&b);
    char chunk[4096];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0 && b.len < ADS_SERVE_MAX_BODY)
        ads_buf_add(&b, chunk, n);
    bool bad = ferror(f) || b.failed || b.len >= ADS_SERVE_MAX_BODY;
    fclose(f);
    if (bad) {
        ads_buf_free(&b);
        ads_error_set(err, ADS_EIO, "cannot read %s", path);
        return NULL;
    }
    ads_buf_addc(&b, '\0');
    return b.p;
}

typedef struct tls_files {
    char *cert, *key;
} tls_files;

static int check_config(const ads_server_config *cfg, const listen_addr *la, ads_error *err)
{
    if ((cfg->tls_cert == NULL) != (cfg->tls_key == NULL))
        return ads_error_set(err, ADS_EINVAL, "--tls-cert and --tls-key go together");
    if (la->loopback || cfg->insecure)
        return 0;
    if (cfg->tls_cert == NULL || cfg->tokens == NULL)
        return ads_error_set(err, ADS_EINVAL,
                             "refusing to listen on %s without TLS and tokens (--tls-cert, "
                             "--tls-key, --tokens); --insecure allows it",
                             cfg->listen);
    return 0;
}

/* The URL's path and arguments decoded in place, as libmicrohttpd's own
 * unescaping does (%HH, anything else as it is), except %00: a NUL byte
 * would cut a name or a key value short (Name=a%00b read as "a"), so it is
 * left as the three characters. Returns the new length. */
static size_t unescape(void *cls, struct MHD_Connection *c, char *s)
{
    (void)cls;
    (void)c;
    char *w = s;
    for (const char *r = s; *r; r++) {
        int hi, lo;
        if (r[0] == '%' && (hi = ads_hex_value(r[1])) >= 0 &&
            (lo = ads_hex_value(r[2])) >= 0 && (hi | lo) != 0) {
            *w++ = (char)(hi << 4 | lo);
            r += 2;
        } else {
            *w++ = *r;
        }
    }
    *w = 0;
    return (size_t)(w - s);
}

static struct MHD_Daemon *start(server *s, const listen_addr *la, const tls_files *tls,
                                ads_error *err)
{
    unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_POLL_INTERNAL_THREAD |
                     MHD_USE_ITC | MHD_USE_ERROR_LOG;
    if (la->v6)
        flags |= MHD_USE_IPv6;
    if (tls->cert != NULL)
        flags |= MHD_USE_TLS;
    struct MHD_OptionItem opts[] = {
        {MHD_OPTION_SOCK_ADDR, 0, (void *)&la->ss},
        {MHD_OPTION_CONNECTION_LIMIT, ADS_SERVE_MAX_CONNECTIONS, NULL},
        {MHD_OPTION_PER_IP_CONNECTION_LIMIT, ADS_SERVE_MAX_PER_IP, NULL},
        {MHD_OPTION_CONNECTION_TIMEOUT, ADS_SERVE_CONN_TIMEOUT, NULL},
        {MHD_OPTION_CONNECTION_MEMORY_LIMIT, ADS_SERVE_CONN_MEMORY, NULL},
        {MHD_OPTION_LISTENING_ADDRESS_REUSE, 1, NULL},
        {MHD_OPTION_HTTPS_MEM_CERT, 0, tls->cert},
        {MHD_OPTION_HTTPS_MEM_KEY, 0, tls->key},
        {MHD_OPTION_END, 0, NULL},
    };
    if (tls->cert == NULL)
        opts[6].option = MHD_OPTION_END;
    struct MHD_Daemon *d = MHD_start_daemon(flags, 0, NULL, NULL, on_request, s,
                                            MHD_OPTION_NOTIFY_COMPLETED, on_completed, s,
                                            MHD_OPTION_UNESCAPE_CALLBACK, unescape, NULL,
                                            MHD_OPTION_ARRAY, opts, MHD_OPTION_END);
    if (d == NULL)
        ads_error_set(err, ADS_EIO,
                      "cannot listen on %s (in use, not an address of this host, or a bad "
                      "certificate or key)",
                      s->cfg->listen);
    return d;
}

/* Wait for requests in flight to finish, at most seconds; true if they did. */
static bool wait_idle(server *s, double seconds)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += (time_t)seconds;
    pthread_mutex_lock(&s->mu);
    int rc = 0;
    while (atomic_load(&s->active) > 0 && rc != ETIMEDOUT)
        rc = pthread_cond_timedwait(&s->idle, &s->mu, &until);
    bool idle = atomic_load(&s->active) == 0;
    pthread_mutex_unlock(&s->mu);
    return idle;
}

static void serve(server *s, struct MHD_Daemon *d, const sigset_t *sigs)
{
    int sig = 0;
    while (sigwait(sigs, &sig) != 0)
        ;
    pthread_mutex_lock(&s->mu);
    log_flush(s);
    fprintf(s->cfg->log, "stopping on signal %d: finishing requests in flight\n", sig);
    fflush(s->cfg->log);
    pthread_mutex_unlock(&s->mu);
    /* stop accepting, and close the listening socket at once: a client
     * connecting during the drain is refused rather than left in the
     * backlog with no one to answer it */
    MHD_socket lfd = MHD_quiesce_daemon(d);
    if (lfd != MHD_INVALID_SOCKET)
        close(lfd);
    pthread_mutex_lock(&s->mu);
    s->draining = true;
    pthread_mutex_unlock(&s->mu);
    if (!wait_idle(s, ADS_SERVE_DRAIN_SECONDS)) {
        stream_interrupt_all(s);
        wait_idle(s, 5.0);
    }
    MHD_stop_daemon(d);
    pthread_mutex_lock(&s->mu);
    log_flush(s);
    pthread_mutex_unlock(&s->mu);
}

static int server_init(server *s, const ads_server_config *cfg, tls_files *tls, ads_error *err)
{
    memset(s, 0, sizeof *s);
    s->cfg = cfg;
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->idle, NULL);
    ads_buf_init(&s->log);
    s->started = now_seconds();
    if (cfg->tokens != NULL) {
        int rc = tokens_load(&s->tokens, cfg->tokens, err);
        if (rc < 0)
            return rc;
        s->auth = true;
    }
    if (cfg->tls_cert != NULL) {
        tls->cert = read_file(cfg->tls_cert, err);
        if (tls->cert == NULL)
            return err->code;
        tls->key = read_file(cfg->tls_key, err);
        if (tls->key == NULL)
            return err->code;
    }
    int rc = ads_db_open(&s->db, cfg->db_dir, ADS_DB_CREATE, err);
    if (rc < 0)
        s->db = NULL;
    else
        rc = pool_start(&s->pool, s->db, err);
    return rc;
}

int ads_server_run(const ads_server_config *cfg, const sigset_t *sigs,
                   void (*ready)(void *ctx, unsigned port), void *ctx, ads_error *err)
{
    listen_addr la;
    server s;
    tls_files tls = {NULL, NULL};
    int rc = parse_listen(&la, cfg->listen, err);
    if (rc == 0)
        rc = check_config(cfg, &la, err);
    if (rc < 0)
        return rc;
    rc = server_init(&s, cfg, &tls, err);
    struct MHD_Daemon *d = rc == 0 ? start(&s, &la, &tls, err) : NULL;
    if (d == NULL && rc == 0)
        rc = err->code;
    if (d != NULL) {
        const union MHD_DaemonInfo *di = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
        if (ready != NULL)
            ready(ctx, di != NULL ? di->port : 0);
        serve(&s, d, sigs);
    }
    pool_stop(&s.pool);
    if (s.db != NULL)
        ads_db_close(s.db);
    tokens_free(&s.tokens);
    if (tls.key != NULL)
        memset(tls.key, 0, strlen(tls.key));
    free(tls.cert);
    free(tls.key);
    ads_buf_free(&s.log);
    pthread_mutex_destroy(&s.mu);
    pthread_cond_destroy(&s.idle);
    return rc;
}
