/*
 * tools/cmd_serve.c: `adstore serve`: the store over HTTP (server/), in the
 * foreground until SIGTERM or SIGINT; and `adstore serve --add-token`, which
 * makes a bearer token, keeps its hash in the tokens file and prints it once.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "server/server.h"
#include "tools/cli.h"

#define SERVE_DEFAULT_LISTEN "127.0.0.1:8642"

typedef struct serve_opts {
    ads_server_config cfg;
    const char *add_token;
    const char *role;
    const char *port_file;
} serve_opts;

static int scan_value(cli_ctx *c, cli_args *a, serve_opts *o, const char *opt)
{
    static const struct {
        const char *name;
        size_t off;
    } opts[] = {
        {"--listen", offsetof(serve_opts, cfg.listen)},
        {"--tls-cert", offsetof(serve_opts, cfg.tls_cert)},
        {"--tls-key", offsetof(serve_opts, cfg.tls_key)},
        {"--tokens", offsetof(serve_opts, cfg.tokens)},
        {"--add-token", offsetof(serve_opts, add_token)},
        {"--role", offsetof(serve_opts, role)},
        {"--port-file", offsetof(serve_opts, port_file)},
    };
    for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++) {
        if (!cli_is_opt(opt, NULL, opts[i].name))
            continue;
        const char *v = cli_args_value(a, c, opt);
        if (v == NULL)
            return EXIT_USAGE;
        *(const char **)((char *)o + opts[i].off) = v;
        return 0;
    }
    return cli_fail(c, EXIT_USAGE, "unknown option '%s'", opt);
}

static int scan(cli_ctx *c, int argc, char **argv, serve_opts *o)
{
    char *ops[64];
    cli_args a;
    const char *opt;
    int rc;
    if (argc > 64)
        return cli_fail(c, EXIT_USAGE, "too many arguments");
    cli_args_init(&a, argc, argv, ops);
    while ((opt = cli_args_next(&a)) != NULL) {
        if ((rc = cli_common_opt(&a, c, opt)) != 0) {
            if (rc < 0)
                return EXIT_USAGE;
        } else if (cli_is_opt(opt, "-h", "--help")) {
            cli_print_help("serve");
            return -1;
        } else if (cli_is_opt(opt, NULL, "--insecure")) {
            o->cfg.insecure = true;
        } else if ((rc = scan_value(c, &a, o, opt)) != 0) {
            return rc;
        }
    }
    if (a.nops)
        return cli_fail(c, EXIT_USAGE, "unexpected argument '%s'", a.ops[0]);
    return 0;
}

static int add_token(cli_ctx *c, const serve_opts *o)
{
    ads_role role;
    if (o->cfg.tokens == NULL)
        return cli_fail(c, EXIT_USAGE, "--add-token needs --tokens FILE");
    if (o->role == NULL || strcmp(o->role, "read") == 0)
        role = ADS_ROLE_READ;
    else if (strcmp(o->role, "write") == 0)
        role = ADS_ROLE_WRITE;
    else
        return cli_fail(c, EXIT_USAGE, "--role is read or write, not '%s'", o->role);
    char tok[ADS_TOKEN_TEXT];
    ads_error err;
    if (ads_server_add_token(tok, o->cfg.tokens, o->add_token, role, &err) < 0)
        return cli_fail_err(c, &err);
    printf("%s\n", tok);
    fprintf(stderr, "serve: token '%s' (%s) added to %s; it is shown only this once\n",
            o->add_token, role == ADS_ROLE_READ ? "read" : "write", o->cfg.tokens);
    return EXIT_OK;
}

typedef struct ready_ctx {
    const serve_opts *o;
    int failed;
} ready_ctx;

static void on_ready(void *ctx, unsigned port)
{
    ready_ctx *r = ctx;
    const ads_server_config *cfg = &r->o->cfg;
    fprintf(cfg->log, "serving %s on %s (port %u)%s%s\n", cfg->db_dir, cfg->listen, port,
            cfg->tls_cert != NULL ? ", TLS" : "", cfg->tokens != NULL ? ", tokens" : "");
    fflush(cfg->log);
    if (r->o->port_file == NULL)
        return;
    FILE *f = fopen(r->o->port_file, "w");
    if (f == NULL || fprintf(f, "%u\n", port) < 0 || fclose(f) != 0)
        r->failed = 1;
}

int cmd_serve(cli_ctx *c, int argc, char **argv)
{
    serve_opts o = {.cfg = {.listen = SERVE_DEFAULT_LISTEN, .log = stderr}};
    int rc = scan(c, argc, argv, &o);
    if (rc != 0)
        return rc < 0 ? EXIT_OK : rc;
    if (o.add_token != NULL)
        return add_token(c, &o);
    if (o.role != NULL)
        return cli_fail(c, EXIT_USAGE, "--role goes with --add-token");
    o.cfg.db_dir = cli_db_dir(c);
    /* Every thread the server starts inherits this mask: the signals come
     * to sigwait() in this thread only, and a closed socket is an error
     * return, not SIGPIPE. */
    sigset_t sigs;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGTERM);
    sigaddset(&sigs, SIGINT);
    pthread_sigmask(SIG_BLOCK, &sigs, NULL);
    signal(SIGPIPE, SIG_IGN);
    ready_ctx r = {&o, 0};
    ads_error err;
    if (ads_server_run(&o.cfg, &sigs, on_ready, &r, &err) < 0)
        return cli_fail_err(c, &err);
    if (r.failed)
        return cli_fail(c, EXIT_INPUT, "cannot write the port to %s", o.port_file);
    fprintf(stderr, "serve: stopped; the store is closed\n");
    return EXIT_OK;
}
