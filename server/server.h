/*
 * server/server.h: `adstore serve`, the store over HTTP (docs/server.md).
 * libmicrohttpd parses HTTP and runs a thread per connection; this module
 * routes requests to the store (server/routes.c), reads records by key
 * straight from the store (server/point.c), runs statements in a pool of
 * threads (server/pool.c) and streams their results (server/stream.c),
 * checks bearer tokens (server/auth.c) and serves the web page
 * (server/page.c). Reads run concurrently on their own read
 * transactions; writes are serialized by the engine.
 */
#ifndef ADS_SERVER_H
#define ADS_SERVER_H

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>

#include "base/error.h"

typedef struct ads_server_config {
    const char *db_dir;   /* the store (created if missing) */
    const char *listen;   /* "ADDR:PORT"; ADDR an IPv4 or [IPv6] literal */
    const char *tls_cert; /* PEM files: both or neither */
    const char *tls_key;
    const char *tokens;   /* tokens file, or NULL: no authentication */
    bool insecure;        /* allow a non-loopback address without TLS or tokens */
    FILE *log;            /* one line per request */
} ads_server_config;

/*
 * Serve until a signal in *sigs (blocked by the caller in every thread)
 * arrives, then stop accepting, let requests in flight finish (at most
 * ADS_SERVE_DRAIN_SECONDS, then their statements are interrupted), and
 * close the store. ready (may be NULL) is called once the socket listens,
 * with the port bound (useful with port 0). Errors: ADS_EINVAL (a bad
 * address, TLS without tokens beyond loopback, ...), ADS_EIO (the socket,
 * certificate or tokens file), and whatever opening the store reports.
 */
int ads_server_run(const ads_server_config *cfg, const sigset_t *sigs,
                   void (*ready)(void *ctx, unsigned port), void *ctx, ads_error *err);

/* Roles of a token. */
typedef enum ads_role { ADS_ROLE_NONE = 0, ADS_ROLE_READ = 1, ADS_ROLE_WRITE = 2 } ads_role;

/*
 * Make a new token for name with role, append its hash to the tokens file
 * at path (created with mode 0600 if missing) and write the token (NUL
 * terminated, ADS_TOKEN_TEXT bytes with the NUL) to out. Errors: ADS_EINVAL
 * (a name with spaces or control characters, or one already in the file),
 * ADS_EIO.
 */
#define ADS_TOKEN_TEXT 69 /* "ads_" + 64 hex digits + NUL */
int ads_server_add_token(char *out, const char *path, const char *name, ads_role role,
                         ads_error *err);

#endif
