/*
 * server/stream.c: a statement over HTTP. The statement runs in a thread of
 * the pool (server/pool.c) while the connection's thread waits for its
 * first ADS_SERVE_HEAD_BYTES of output; a statement that finishes within
 * them is answered from that buffer. Output beyond them goes through a pipe
 * to the connection's thread, which libmicrohttpd drives: rows are sent as
 * they come, never held whole, and a client that reads slowly holds back
 * only its own statement. Holding the head back means that a statement that
 * fails early (an unknown type, a limit) is answered with an error status
 * and object, and one that writes nothing (STORE, UPDATE) with a summary.
 * A statement that fails after its output has started cuts the response off
 * without its final chunk (a JSON Lines response first gets an error line),
 * so a client never takes a partial answer for a whole one.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "server/server_int.h"

typedef enum { JOB_HEAD, JOB_STREAM, JOB_DONE } job_state;

typedef struct stmt_job {
    pool_task task; /* first: the pool hands it back as the job */
    server *s;
    char *text;
    size_t len;
    ads_format fmt;
    ads_exec_options opt;
    bool single; /* one record asked for: the head is never cut short */
    ads_query *q;        /* the session running it, while it runs (s->mu) */
    atomic_bool cancel;  /* stop at the next row (client gone, drain) */
    FILE *out;           /* writes into head, then into the pipe */
    int rfd, wfd;        /* the pipe, made when the output outgrows the head */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    job_state state;
    bool finished; /* its thread is done with it (mu) */
    ads_buf head;
    int rc;
    ads_error err;
    ads_exec_info info;
    uint64_t rows;
    ads_sink inner;
    struct stmt_job *next; /* in the server's list of statements */
} stmt_job;

static int write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* The head is full: make the pipe the rest goes through (j->mu held). */
static int start_stream(stmt_job *j)
{
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0)
        return -1;
    j->rfd = fds[0];
    j->wfd = fds[1];
    j->state = JOB_STREAM;
    pthread_cond_broadcast(&j->cv);
    return 0;
}

/* The writer's output: held while it fits the head, then piped. As
 * fopencookie's write it gives the bytes taken, or 0 for a failed write,
 * which sets the stream's error (a negative count is not allowed: glibc would then
 * miscount its buffer and write bytes past its end). */
static ssize_t job_write(void *cookie, const char *buf, size_t n)
{
    stmt_job *j = cookie;
    pthread_mutex_lock(&j->mu);
    if (j->state == JOB_HEAD) {
        if (j->single || j->head.len + n <= ADS_SERVE_HEAD_BYTES) {
            ads_buf_add(&j->head, buf, n);
            pthread_mutex_unlock(&j->mu);
            return j->head.failed ? 0 : (ssize_t)n;
        }
        int rc = start_stream(j);
        pthread_mutex_unlock(&j->mu);
        /* From here on only this thread touches head. */
        if (rc == 0)
            rc = write_all(j->wfd, j->head.p, j->head.len);
        ads_buf_free(&j->head);
        if (rc < 0)
            return 0;
    } else {
        pthread_mutex_unlock(&j->mu);
    }
    return write_all(j->wfd, buf, n) < 0 ? 0 : (ssize_t)n;
}

static int job_close(void *cookie)
{
    stmt_job *j = cookie;
    int rc = j->wfd >= 0 ? close(j->wfd) : 0;
    j->wfd = -1;
    return rc;
}

/* Rows pass through here to be counted against ADS_SERVE_MAX_ROWS. */
static int count_begin(void *ctx, const ads_str *cols, size_t ncols, ads_error *err)
{
    stmt_job *j = ctx;
    return j->inner.begin(j->inner.ctx, cols, ncols, err);
}

static int count_columns(void *ctx, const ads_str *cols, size_t ncols, ads_error *err)
{
    stmt_job *j = ctx;
    return j->inner.columns(j->inner.ctx, cols, ncols, err);
}

static int count_row(void *ctx, const ads_record *row, ads_error *err)
{
    stmt_job *j = ctx;
    if (atomic_load(&j->cancel))
        return ads_error_set(err, ADS_ELIMIT, "interrupted");
    if (++j->rows > ADS_SERVE_MAX_ROWS)
        return ads_error_set(err, ADS_ELIMIT,
                             "the result has more than %u rows, the server's limit; narrow "
                             "the statement or add LIMIT", ADS_SERVE_MAX_ROWS);
    return j->inner.row(j->inner.ctx, row, err);
}

static int count_end(void *ctx, ads_error *err)
{
    stmt_job *j = ctx;
    return j->inner.end(j->inner.ctx, err);
}

static int run_statement(stmt_job *j, ads_query *q, ads_writer *w)
{
    j->inner = ads_writer_sink(w);
    ads_sink sink = {count_begin, count_row, count_end, j,
                     j->inner.columns != NULL ? count_columns : NULL};
    int rc = ads_query_exec(q, j->text, j->len, &sink, &j->opt, &j->info, &j->err);
    if (rc < 0)
        ads_writer_abort(w, NULL);
    return rc;
}

static int produce(stmt_job *j, ads_query *q)
{
    ads_writer *w = NULL;
    int rc = ads_writer_new(&w, j->fmt, j->out, &j->err);
    if (rc == 0)
        rc = run_statement(j, q, w);
    ads_writer_free(w);
    fflush(j->out);
    pthread_mutex_lock(&j->mu);
    bool streaming = j->state == JOB_STREAM;
    pthread_mutex_unlock(&j->mu);
    if (rc < 0 && streaming && j->fmt == ADS_FORMAT_JSONL) {
        ads_buf b;
        ads_buf_init(&b);
        json_error(&b, &j->err);
        fwrite(b.p, 1, b.len, j->out);
        ads_buf_free(&b);
    }
    fclose(j->out);
    return rc;
}

/* The task: in a thread of the pool, with its session q. */
static void job_run(pool_task *t, ads_query *q)
{
    stmt_job *j = (stmt_job *)t;
    server *s = j->s;
    pthread_mutex_lock(&s->mu);
    j->q = q;
    pthread_mutex_unlock(&s->mu);
    int rc;
    if (atomic_load(&j->cancel)) {
        fclose(j->out);
        rc = ads_error_set(&j->err, ADS_EBUSY, "the server is shutting down");
    } else {
        rc = produce(j, q);
    }
    pthread_mutex_lock(&s->mu);
    j->q = NULL;
    pthread_mutex_unlock(&s->mu);
    pthread_mutex_lock(&j->mu);
    j->out = NULL;
    j->rc = rc;
    if (j->state == JOB_HEAD)
        j->state = JOB_DONE;
    j->finished = true;
    pthread_cond_broadcast(&j->cv);
    pthread_mutex_unlock(&j->mu);
    /* j may be freed from here on. */
}

static void job_wait(stmt_job *j)
{
    pthread_mutex_lock(&j->mu);
    while (!j->finished)
        pthread_cond_wait(&j->cv, &j->mu);
    pthread_mutex_unlock(&j->mu);
}

static void job_free(stmt_job *j)
{
    server *s = j->s;
    pthread_mutex_lock(&j->mu);
    bool finished = j->finished;
    pthread_mutex_unlock(&j->mu);
    if (!finished) {
        atomic_store(&j->cancel, true);
        pthread_mutex_lock(&s->mu);
        if (j->q != NULL)
            ads_query_interrupt(j->q);
        pthread_mutex_unlock(&s->mu);
        /* A producer blocked on the pipe now fails its write (EPIPE). */
        if (j->rfd >= 0)
            close(j->rfd);
        j->rfd = -1;
        job_wait(j);
    }
    pthread_mutex_lock(&s->mu);
    for (stmt_job **p = &s->jobs; *p != NULL; p = &(*p)->next)
        if (*p == j) {
            *p = j->next;
            break;
        }
    pthread_mutex_unlock(&s->mu);
    if (j->out != NULL) /* never handed to a thread */
        fclose(j->out);
    if (j->rfd >= 0)
        close(j->rfd);
    ads_buf_free(&j->head);
    pthread_mutex_destroy(&j->mu);
    pthread_cond_destroy(&j->cv);
    free(j->text);
    free(j);
}

static stmt_job *job_new(server *s, const char *text, size_t len, ads_error *err)
{
    stmt_job *j = calloc(1, sizeof *j);
    if (j == NULL || (j->text = malloc(len + 1)) == NULL) {
        free(j);
        ads_error_set(err, ADS_ENOMEM, "out of memory");
        return NULL;
    }
    memcpy(j->text, text, len);
    j->text[len] = '\0';
    j->len = len;
    j->s = s;
    j->task.run = job_run;
    j->rfd = j->wfd = -1;
    j->finished = true;
    atomic_init(&j->cancel, false);
    ads_buf_init(&j->head);
    pthread_mutex_init(&j->mu, NULL);
    pthread_cond_init(&j->cv, NULL);
    cookie_io_functions_t io = {.write = job_write, .close = job_close};
    j->out = fopencookie(j, "w", io);
    if (j->out == NULL) {
        job_free(j);
        ads_error_set(err, ADS_ENOMEM, "out of memory");
        return NULL;
    }
    return j;
}

static ssize_t job_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    stmt_job *j = cls;
    (void)pos;
    ssize_t n;
    do
        n = read(j->rfd, buf, max);
    while (n < 0 && errno == EINTR);
    if (n > 0)
        return n;
    job_wait(j);
    return n == 0 && j->rc == 0 ? MHD_CONTENT_READER_END_OF_STREAM
                                : MHD_CONTENT_READER_END_WITH_ERROR;
}

static void job_release(void *cls)
{
    job_free(cls);
}

static const char *content_type(ads_format f)
{
    switch (f) {
    case ADS_FORMAT_JSON:
        return "application/json";
    case ADS_FORMAT_JSONL:
        return "application/x-ndjson";
    case ADS_FORMAT_CSV:
        return "text/csv; charset=utf-8";
    case ADS_FORMAT_XML:
        return "application/xml";
    default:
        return "text/plain; charset=utf-8";
    }
}

static const char *kind_name(ads_stmt_kind k)
{
    static const char *const names[] = {"select", "update", "delete", "purge", "store"};
    return (unsigned)k < sizeof names / sizeof names[0] ? names[k] : "statement";
}

/* The answer of a statement that finished within its head. */
static enum MHD_Result answer_done(struct MHD_Connection *c, request *rq, stmt_job *j)
{
    if (j->rc < 0 && j->err.code == ADS_ELIMIT && atomic_load(&j->cancel)) {
        /* interrupted by the drain (or by its client, who no longer reads) */
        ads_error e;
        ads_error_set(&e, ADS_EBUSY, "the server is shutting down");
        return resp_error(c, rq, MHD_HTTP_SERVICE_UNAVAILABLE, &e);
    }
    if (j->rc < 0)
        return resp_error(c, rq, 0, &j->err);
    if (j->single && j->rows == 0) {
        ads_error e;
        ads_error_set(&e, ADS_ENOTFOUND, "no record has that key");
        return resp_error(c, rq, 0, &e);
    }
    if (j->info.kind == ADS_STMT_SELECT) {
        struct MHD_Response *r = MHD_create_response_from_buffer(j->head.len, j->head.p,
                                                                 MHD_RESPMEM_MUST_COPY);
        if (r != NULL)
            MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, content_type(j->fmt));
        return resp_queue(c, rq, MHD_HTTP_OK, r);
    }
    ads_buf b;
    ads_buf_init(&b);
    ads_buf_printf(&b, "{\"statement\":\"%s\",\"rows\":%llu,\"unchanged\":%llu}\n",
                   kind_name(j->info.kind), (unsigned long long)j->info.rows,
                   (unsigned long long)j->info.unchanged);
    struct MHD_Response *r = resp_json(b.p, b.len);
    ads_buf_free(&b);
    return resp_queue(c, rq, MHD_HTTP_OK, r);
}

static enum MHD_Result answer(struct MHD_Connection *c, request *rq, stmt_job *j)
{
    pthread_mutex_lock(&j->mu);
    while (j->state == JOB_HEAD)
        pthread_cond_wait(&j->cv, &j->mu);
    job_state st = j->state;
    pthread_mutex_unlock(&j->mu);
    if (st == JOB_DONE) {
        job_wait(j);
        enum MHD_Result ret = answer_done(c, rq, j);
        job_free(j);
        return ret;
    }
    struct MHD_Response *r =
        MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 32 * 1024, job_read, j, job_release);
    if (r == NULL) {
        job_free(j);
        return MHD_NO;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, content_type(j->fmt));
    return resp_queue(c, rq, MHD_HTTP_OK, r);
}

enum MHD_Result stream_statement(struct MHD_Connection *c, request *rq, const char *text,
                                 size_t len, ads_format fmt, bool hidden, bool single)
{
    server *s = rq->s;
    ads_error err;
    ads_error_clear(&err);
    stmt_job *j = job_new(s, text, len, &err);
    if (j == NULL)
        return resp_error(c, rq, 0, &err);
    j->fmt = fmt;
    j->single = single;
    j->opt.hidden = hidden;
    j->finished = false;
    pthread_mutex_lock(&s->mu);
    j->next = s->jobs;
    s->jobs = j;
    pthread_mutex_unlock(&s->mu);
    if (pool_submit(&s->pool, &j->task) < 0) {
        j->finished = true;
        job_free(j);
        ads_error_set(&err, ADS_EIO, "no thread can run the statement");
        return resp_error(c, rq, MHD_HTTP_SERVICE_UNAVAILABLE, &err);
    }
    return answer(c, rq, j);
}

void stream_interrupt_all(server *s)
{
    pthread_mutex_lock(&s->mu);
    s->draining = true;
    for (stmt_job *j = s->jobs; j != NULL; j = j->next) {
        atomic_store(&j->cancel, true);
        if (j->q != NULL)
            ads_query_interrupt(j->q);
    }
    pthread_mutex_unlock(&s->mu);
}
