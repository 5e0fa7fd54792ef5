/*
 * tests/server/bench_serve.c: the P13 benchmark: `adstore serve` under
 * bounded load on loopback. A store of 100,000 records (type T keyed by K)
 * is made in process; the program then starts `adstore serve` on it and runs
 * its own keep-alive HTTP/1.1 clients, one thread per connection, at 1, 8
 * and 64 connections: point reads (GET /api/records/T?K=n) and small
 * SELECTs (POST /api/query over a type S of 10 records: the statement path
 * whole, parse to rows), each for a fixed time, giving requests per
 * second and p50/p99 latency. Last, durable single-record writes: POST
 * /api/records one record at a time on one connection, next to the same
 * stores through the C API in process (one transaction each). Each row
 * also gives the CPU time per request of the server (from /proc/PID/stat)
 * and of this client (CLOCK_PROCESS_CPUTIME_ID), which a loaded machine
 * disturbs far less than wall time, and what two idle cores would so serve:
 * 2 s / (both per request). Figures only; nothing here is asserted.
 * docs/performance.md has the table.
 *   bench_serve ADSTORE-PROGRAM [SECONDS-PER-RUN]
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "engine/engine.h"

#define RECORDS 100000
#define MAX_CONNS 64
#define MAX_SAMPLES 2000000

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int store_text(ads_db *db, const char *text, ads_error *err)
{
    ads_arena *a = ads_arena_new();
    const ads_record *r;
    ads_txn *txn = NULL;
    int rc = ads_record_parse(&r, a, text, strlen(text), err);
    if (rc == 0)
        rc = ads_txn_begin(&txn, db, 0, err);
    if (rc == 0 && (rc = ads_txn_store(txn, r, NULL, err)) == 0)
        rc = ads_txn_commit(txn, err);
    else if (txn != NULL)
        ads_txn_abort(txn);
    ads_arena_free(a);
    return rc;
}

static int make_store(const char *dir, ads_error *err)
{
    ads_db *db;
    ads_bulk *b = NULL;
    ads_bulk_options opt = ADS_BULK_OPTIONS_INIT;
    int rc = ads_db_open(&db, dir, ADS_DB_CREATE, err);
    if (rc < 0)
        return rc;
    rc = store_text(db, "[ AdType = \"Type\"; ForType = \"T\"; KeyAttributes = { \"K\" } ]", err);
    if (rc == 0)
        rc = store_text(db, "[ AdType = \"Type\"; ForType = \"S\"; KeyAttributes = { \"Name\" } ]",
                        err);
    for (int i = 0; rc == 0 && i < 10; i++) {
        char text[128];
        snprintf(text, sizeof text, "[ AdType = \"S\"; Name = \"s%d\"; Cpus = %d ]", i, i);
        rc = store_text(db, text, err);
    }
    if (rc == 0)
        rc = ads_bulk_begin(&b, db, &opt, err);
    ads_arena *a = ads_arena_new();
    for (int i = 0; rc == 0 && i < RECORDS; i++) {
        char text[160];
        const ads_record *r;
        ads_arena_reset(a);
        snprintf(text, sizeof text,
                 "[ AdType = \"T\"; K = %d; Host = \"host%05d\"; Cpus = %d; Memory = %d ]", i, i,
                 1 + i % 64, 1024 * (1 + i % 16));
        rc = ads_record_parse(&r, a, text, strlen(text), err);
        if (rc == 0)
            rc = ads_bulk_add(b, r, err);
    }
    if (b != NULL) {
        int rc2 = ads_bulk_end(b, rc == 0 ? err : NULL);
        if (rc == 0)
            rc = rc2;
    }
    ads_arena_free(a);
    ads_db_close(db);
    return rc;
}

/* ---- a keep-alive client ---- */

typedef struct client {
    int fd;
    char buf[1 << 16];
    size_t len;
} client;

static int client_open(client *c, unsigned port)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    c->fd = socket(AF_INET, SOCK_STREAM, 0);
    c->len = 0;
    int one = 1;
    setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return connect(c->fd, (struct sockaddr *)&sa, sizeof sa);
}

/* Read one response (Content-Length bodies: every answer this benchmark
 * asks for fits the server's held-back head); its status, or -1. */
static int client_response(client *c)
{
    for (;;) {
        char *end = c->len > 0 ? memmem(c->buf, c->len, "\r\n\r\n", 4) : NULL;
        if (end != NULL) {
            size_t head = (size_t)(end - c->buf) + 4;
            char *cl = memmem(c->buf, head, "Content-Length: ", 16);
            size_t body = cl != NULL ? strtoul(cl + 16, NULL, 10) : 0;
            if (c->len >= head + body) {
                int status = atoi(c->buf + 9);
                memmove(c->buf, c->buf + head + body, c->len - head - body);
                c->len -= head + body;
                return status;
            }
        }
        if (c->len == sizeof c->buf)
            return -1;
        ssize_t n = read(c->fd, c->buf + c->len, sizeof c->buf - c->len);
        if (n <= 0)
            return -1;
        c->len += (size_t)n;
    }
}

static int client_send(client *c, const char *req, size_t len)
{
    while (len > 0) {
        ssize_t n = write(c->fd, req, len);
        if (n <= 0)
            return -1;
        req += n;
        len -= (size_t)n;
    }
    return 0;
}

/* ---- a run: N connections, one kind of request, fixed time ---- */

typedef enum { REQ_POINT, REQ_SELECT, REQ_WRITE } req_kind;

typedef struct run {
    unsigned port;
    req_kind kind;
    double until;
    pthread_mutex_t mu;
    double *lat;
    size_t n;
    unsigned errors;
    unsigned seed;
} run;

static size_t make_request(char *out, size_t cap, req_kind kind, unsigned *seed, int serial)
{
    int k = (int)(rand_r(seed) % RECORDS);
    char body[256];
    int blen;
    switch (kind) {
    case REQ_POINT:
        return (size_t)snprintf(out, cap, "GET /api/records/T?K=%d HTTP/1.1\r\nHost: b\r\n\r\n", k);
    case REQ_SELECT:
        blen = snprintf(body, sizeof body, "SELECT Name, Cpus FROM S WHERE Cpus >= %d", k % 1);
        break;
    default:
        blen = snprintf(body, sizeof body, "[ AdType = \"T\"; K = %d; Cpus = %d ]",
                        RECORDS + serial, serial);
    }
    const char *path = kind == REQ_SELECT ? "/api/query" : "/api/records";
    return (size_t)snprintf(out, cap,
                            "POST %s HTTP/1.1\r\nHost: b\r\nContent-Length: %d\r\n\r\n%s", path,
                            blen, body);
}

static void *load(void *arg)
{
    run *r = arg;
    client *c = malloc(sizeof *c);
    unsigned seed;
    pthread_mutex_lock(&r->mu);
    seed = r->seed++;
    pthread_mutex_unlock(&r->mu);
    double *lat = malloc(sizeof(double) * 200000);
    size_t n = 0;
    unsigned errors = 0;
    if (c == NULL || lat == NULL || client_open(c, r->port) != 0) {
        errors++;
        goto done;
    }
    for (int serial = (int)seed * 1000000; now() < r->until && n < 200000; serial++) {
        char req[512];
        size_t len = make_request(req, sizeof req, r->kind, &seed, serial);
        double t0 = now();
        if (client_send(c, req, len) < 0 || client_response(c) != 200) {
            errors++;
            break;
        }
        lat[n++] = now() - t0;
    }
    close(c->fd);
done:
    pthread_mutex_lock(&r->mu);
    for (size_t i = 0; i < n && r->n < MAX_SAMPLES; i++)
        r->lat[r->n++] = lat[i];
    r->errors += errors;
    pthread_mutex_unlock(&r->mu);
    free(lat);
    free(c);
    return NULL;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* CPU seconds (user + system) the server process has used so far. */
static pid_t server_pid;

static double server_cpu(void)
{
    char path[64], line[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)server_pid);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return 0;
    size_t n = fread(line, 1, sizeof line - 1, f);
    fclose(f);
    line[n] = '\0';
    char *p = strrchr(line, ')');
    unsigned long long ut = 0, st = 0;
    /* after ") ": state ppid pgrp session tty tpgid flags minflt cminflt
     * majflt cmajflt utime stime */
    if (p == NULL || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut,
                            &st) != 2)
        return 0;
    return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

static double own_cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* cpu_server, cpu_client: CPU seconds of the run (server, this client);
 * negative when not measured. The last column is what two idle cores
 * would give: 2 / (CPU seconds of both per request). */
static void report(const char *what, unsigned conns, run *r, double secs, double cpu_server,
                   double cpu_client)
{
    qsort(r->lat, r->n, sizeof(double), cmp_double);
    double p50 = r->n ? r->lat[r->n / 2] : 0, p99 = r->n ? r->lat[r->n * 99 / 100] : 0;
    printf("| %-28s | %3u | %9.0f | %7.2f | %7.2f | %u |", what, conns, (double)r->n / secs,
           p50 * 1e3, p99 * 1e3, r->errors);
    if (cpu_server >= 0 && r->n > 0) {
        double us_s = cpu_server / (double)r->n * 1e6, us_c = cpu_client / (double)r->n * 1e6;
        printf(" %6.1f | %6.1f | %7.0f |", us_s, us_c, 2e6 / (us_s + us_c));
    } else {
        printf(" - | %6.1f | - |", r->n ? cpu_client / (double)r->n * 1e6 : 0);
    }
    printf("\n");
    fflush(stdout);
}

static void run_load(unsigned port, req_kind kind, unsigned conns, double secs, const char *what)
{
    pthread_t th[MAX_CONNS];
    run r = {.port = port, .kind = kind, .lat = malloc(sizeof(double) * MAX_SAMPLES), .seed = 1};
    pthread_mutex_init(&r.mu, NULL);
    double t0 = now(), s0 = server_cpu(), c0 = own_cpu();
    r.until = t0 + secs;
    for (unsigned i = 0; i < conns; i++)
        pthread_create(&th[i], NULL, load, &r);
    for (unsigned i = 0; i < conns; i++)
        pthread_join(th[i], NULL);
    double t1 = now(), s1 = server_cpu(), c1 = own_cpu();
    report(what, conns, &r, t1 - t0, s1 - s0, c1 - c0);
    free(r.lat);
    pthread_mutex_destroy(&r.mu);
}

static pid_t start_server(const char *prog, const char *dir, unsigned *port)
{
    char pf[700];
    snprintf(pf, sizeof pf, "%s.port", dir);
    unlink(pf);
    pid_t pid = fork();
    if (pid == 0) {
        freopen("/dev/null", "w", stderr);
        execl(prog, prog, "-d", dir, "serve", "--listen", "127.0.0.1:0", "--port-file", pf,
              (char *)NULL);
        _exit(127);
    }
    for (int i = 0; i < 400; i++) {
        FILE *f = fopen(pf, "r");
        if (f != NULL && fscanf(f, "%u", port) == 1) {
            fclose(f);
            return pid;
        }
        if (f != NULL)
            fclose(f);
        usleep(25000);
    }
    kill(pid, SIGKILL);
    return -1;
}

static void inprocess_writes(const char *dir, double secs)
{
    ads_db *db;
    ads_error err;
    if (ads_db_open(&db, dir, 0, &err) < 0) {
        fprintf(stderr, "bench_serve: %s\n", err.message);
        return;
    }
    run r = {.lat = malloc(sizeof(double) * MAX_SAMPLES)};
    double t0 = now(), c0 = own_cpu();
    for (int i = 0; now() < t0 + secs && r.n < MAX_SAMPLES; i++) {
        char text[128];
        snprintf(text, sizeof text, "[ AdType = \"T\"; K = %d; Cpus = %d ]", 2 * RECORDS + i, i);
        double t1 = now();
        if (store_text(db, text, &err) < 0) {
            r.errors++;
            break;
        }
        r.lat[r.n++] = now() - t1;
    }
    report("durable write, C API", 1, &r, now() - t0, -1, own_cpu() - c0);
    free(r.lat);
    ads_db_close(db);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_serve ADSTORE-PROGRAM [SECONDS-PER-RUN]\n");
        return 2;
    }
    double secs = argc > 2 ? atof(argv[2]) : 5.0;
    char dir[] = "/tmp/bench_serve.XXXXXX";
    if (mkdtemp(dir) == NULL)
        return 1;
    char store[600];
    snprintf(store, sizeof store, "%s/db", dir);
    ads_error err;
    if (make_store(store, &err) < 0) {
        fprintf(stderr, "bench_serve: %s\n", err.message);
        return 1;
    }
    unsigned port;
    pid_t pid = start_server(argv[1], store, &port);
    server_pid = pid;
    if (pid < 0) {
        fprintf(stderr, "bench_serve: the server did not start\n");
        return 1;
    }
    printf("| request | conns | requests/s | p50 ms | p99 ms | errors | server CPU us/req | "
           "client CPU us/req | req/s on 2 idle cores |\n|---|---|---|---|---|---|---|---|---|\n");
    static const unsigned conns[] = {1, 8, 64};
    for (int i = 0; i < 3; i++)
        run_load(port, REQ_POINT, conns[i], secs, "point read (GET record)");
    for (int i = 0; i < 3; i++)
        run_load(port, REQ_SELECT, conns[i], secs, "SELECT of 10 rows (type S)");
    run_load(port, REQ_WRITE, 1, secs, "durable write, HTTP");
    kill(pid, SIGTERM);
    waitpid(pid, NULL, 0);
    inprocess_writes(store, secs);
    char cmd[800];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : 1;
}
