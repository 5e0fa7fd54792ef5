/*
 * server/server_int.h: what the server's files share: the server's state,
 * a request's state, and the helpers each file offers the others.
 */
#ifndef ADS_SERVER_INT_H
#define ADS_SERVER_INT_H

#include <microhttpd.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include "base/buf.h"
#include "base/limits.h"
#include "engine/engine.h"
#include "query/query.h"
#include "server/server.h"

/* One entry of the tokens file: a name, a role, the token's SHA-256. */
typedef struct token_entry {
    char name[64];
    ads_role role;
    unsigned char hash[32];
} token_entry;

typedef struct token_set {
    token_entry *v;
    size_t n;
} token_set;

/* A statement handed to the pool's threads (server/pool.c). run gets the
 * thread's session. */
typedef struct pool_task {
    void (*run)(struct pool_task *t, ads_query *q);
    struct pool_task *next;
} pool_task;

typedef struct stmt_pool {
    ads_db *db;
    pthread_mutex_t mu;
    pthread_cond_t work, gone;
    pool_task *head, *tail; /* waiting tasks */
    unsigned queued, idle, threads;
    bool stop, started;
} stmt_pool;

typedef struct server {
    const ads_server_config *cfg;
    ads_db *db;
    token_set tokens;
    bool auth; /* a tokens file was given */
    double started;
    pthread_mutex_t mu; /* guards what follows and the log */
    pthread_cond_t idle;
    atomic_uint active;  /* requests in flight: counted up without mu, down with it */
    atomic_bool draining; /* stop: interrupt statements that start or run (set with mu) */
    uint64_t requests, failures;
    size_t body_bytes;   /* bytes of request bodies held, all requests */
    struct stmt_job *jobs; /* running statements, for the drain's interrupt */
    stmt_pool pool;
    ads_buf log;          /* log lines not yet written (mu) */
    double log_since;     /* when the first of them was held */
} server;

/* One request: its body, who sent it, and what to log. */
typedef struct request {
    server *s;
    char method[8];
    char *url;
    ads_buf body;
    bool too_large;
    bool too_busy;    /* the bodies held reached ADS_SERVE_BODY_MEMORY */
    size_t body_held; /* bytes of body counted in the server's body_bytes */
    ads_role role;
    char who[64]; /* the token's name, "-" without authentication */
    unsigned status;
    double start;
} request;

/* A response whose body is JSON text (status given). */
struct MHD_Response *resp_json(const char *text, size_t len);
/* Queue response r with status for request rq (it records the status for the
 * log) and release r. */
enum MHD_Result resp_queue(struct MHD_Connection *c, request *rq, unsigned status,
                           struct MHD_Response *r);
/* Queue {"error": {...}} from err, with status (0: chosen from err's code). */
enum MHD_Result resp_error(struct MHD_Connection *c, request *rq, unsigned status,
                           const ads_error *err);
/* The HTTP status for an error code. */
unsigned status_of(int code);

/* JSON text helpers (server/json.c). */
void json_str(ads_buf *b, const char *p, size_t len);
void json_error(ads_buf *b, const ads_error *err);
void json_value(ads_buf *b, const ads_value *v);

/* Tokens (server/auth.c). */
int tokens_load(token_set *out, const char *path, ads_error *err);
void tokens_free(token_set *t);
/* The entry whose token is the len bytes at tok, or NULL. */
const token_entry *tokens_find(const token_set *t, const char *tok, size_t len);

/* Point reads (server/point.c): GET /api/records/TYPE[/history]?KEY=VALUE
 * without a statement. */
typedef struct point_arg {
    const char *name, *value;
} point_arg;

typedef struct point_query {
    const char *type;
    size_t type_len;
    point_arg args[ADS_SERVE_POINT_KEYS];
    size_t nargs;
    bool history;
} point_query;

/* Not answered here: run the statement instead. */
#define POINT_FALLBACK 2

/* Append the record's latest row (or, with history, every row) to out as
 * JSON Lines: 1 when there is one, 0 when there is none (no record, or its
 * latest row deleted), POINT_FALLBACK, or an error (ADS_ENOMEM,
 * ADS_ESTORAGE, ADS_ECORRUPT). */
int point_read(ads_buf *out, ads_db *db, const point_query *pq, ads_error *err);

/* Routes (server/routes.c): answer the request whose body is complete. */
enum MHD_Result route(struct MHD_Connection *c, request *rq);

/* Statements (server/stream.c): run text in format fmt and queue the
 * response, streamed once it outgrows ADS_SERVE_HEAD_BYTES. hidden: SELECT *
 * shows hidden attributes. */
enum MHD_Result stream_statement(struct MHD_Connection *c, request *rq, const char *text,
                                 size_t len, ads_format fmt, bool hidden, bool single);
/* Start the pool's first threads, each with a session on db (ADS_EIO). */
int pool_start(stmt_pool *p, ads_db *db, ads_error *err);
/* Queue t for a thread: 0, or -1 when no thread can take it. */
int pool_submit(stmt_pool *p, pool_task *t);
/* Let the threads finish the tasks queued and leave (no task may be
 * submitted any more); nothing after pool_start failed. */
void pool_stop(stmt_pool *p);

/* Interrupt every running statement (the drain after its deadline). */
void stream_interrupt_all(server *s);

/* The web page (server/page.c). */
extern const char server_page[];
extern const size_t server_page_len;

/* Seconds on the monotonic clock. */
double now_seconds(void);

#endif
