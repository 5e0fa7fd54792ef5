/*
 * tests/server/bench_serve.c: the P13 benchmark: `adstore serve` under
 * bounded load on loopback. A store of 100,000 records (type T keyed by K)
 * is made in process; the program then starts `adstore serve` on it and
 * drives it with its own keep-alive HTTP/1.1 client: a thread per
 * connection (--epoll: one thread drives them all, which costs about as
 * much CPU a request but serves fewer a second: the server waits while
 * that one thread works), at 1, 8 and 64 connections: point reads (GET /api/records/T?K=n) and small SELECTs (POST
 * /api/query over a type S of 10 records: the statement path whole, parse
 * to rows), each for a fixed time, giving requests per second and p50/p99
 * latency. With --wrk each of those rows is followed by the same requests
 * driven by Debian's wrk (one thread, a Lua script picking the keys; its
 * own latency percentiles), when wrk is installed. Last, durable
 * single-record writes: POST /api/records one record at a time on one
 * connection, next to the same stores through the C API in process (one
 * transaction each). Each row also gives the CPU time per request of the
 * server (from /proc/PID/stat) and of the client (this program's
 * CLOCK_PROCESS_CPUTIME_ID, or wrk's rusage), which a loaded machine
 * disturbs far less than wall time, and what two idle cores would so
 * serve: 2 s / (both per request). --reads: the point reads only. Figures
 * only; nothing here is asserted. docs/performance.md has the table.
 *   bench_serve [--epoll] [--reads] [--wrk] ADSTORE-PROGRAM [SECONDS-PER-RUN]
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
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

/* One row: n requests in secs; p50 and p99 in seconds; cpu_server,
 * cpu_client: CPU seconds of the run (server, client), cpu_server negative
 * when not measured. The last column is what two idle cores would give:
 * 2 / (CPU seconds of both per request). */
static void print_row(const char *what, unsigned conns, double n, double secs, double p50,
                      double p99, unsigned errors, double cpu_server, double cpu_client)
{
    printf("| %-28s | %3u | %9.0f | %7.2f | %7.2f | %u |", what, conns, n / secs, p50 * 1e3,
           p99 * 1e3, errors);
    if (cpu_server >= 0 && n > 0) {
        double us_s = cpu_server / n * 1e6, us_c = cpu_client / n * 1e6;
        printf(" %6.1f | %6.1f | %7.0f |", us_s, us_c, 2e6 / (us_s + us_c));
    } else {
        printf(" - | %6.1f | - |", n > 0 ? cpu_client / n * 1e6 : 0);
    }
    printf("\n");
    fflush(stdout);
}

static void report(const char *what, unsigned conns, run *r, double secs, double cpu_server,
                   double cpu_client)
{
    qsort(r->lat, r->n, sizeof(double), cmp_double);
    double p50 = r->n ? r->lat[r->n / 2] : 0, p99 = r->n ? r->lat[r->n * 99 / 100] : 0;
    print_row(what, conns, (double)r->n, secs, p50, p99, r->errors, cpu_server, cpu_client);
}

/* ---- the same with one thread: every connection driven by epoll ---- */

typedef struct econn {
    client c;
    double t0; /* when its request went out */
    int serial;
} econn;

/* Send c's next request; 0 or -1. Each connection has one request in
 * flight, far smaller than a socket's buffer: the write is whole. */
static int econn_send(econn *e, run *r)
{
    char req[512];
    size_t len = make_request(req, sizeof req, r->kind, &r->seed, e->serial++);
    e->t0 = now();
    return write(e->c.fd, req, len) == (ssize_t)len ? 0 : -1;
}

/* The answers waiting on e: each one recorded and followed by the next
 * request; 0, or -1 on an error (the connection is dropped). */
static int econn_read(econn *e, run *r, bool more)
{
    client *c = &e->c;
    ssize_t n = read(c->fd, c->buf + c->len, sizeof c->buf - c->len);
    if (n <= 0)
        return n < 0 && errno == EAGAIN ? 0 : -1;
    c->len += (size_t)n;
    for (;;) {
        char *end = memmem(c->buf, c->len, "\r\n\r\n", 4);
        if (end == NULL)
            return c->len == sizeof c->buf ? -1 : 0;
        size_t head = (size_t)(end - c->buf) + 4;
        char *cl = memmem(c->buf, head, "Content-Length: ", 16);
        size_t body = cl != NULL ? strtoul(cl + 16, NULL, 10) : 0;
        if (c->len < head + body)
            return c->len == sizeof c->buf ? -1 : 0;
        if (atoi(c->buf + 9) != 200)
            return -1;
        memmove(c->buf, c->buf + head + body, c->len - head - body);
        c->len -= head + body;
        if (r->n < MAX_SAMPLES)
            r->lat[r->n++] = now() - e->t0;
        if (more && econn_send(e, r) < 0)
            return -1;
    }
}

/* conns connections from one thread, each sending its next request when
 * its last answer is read, until r->until. */
static void load_epoll(run *r, unsigned conns)
{
    econn *ec = calloc(conns, sizeof *ec);
    int ep = epoll_create1(EPOLL_CLOEXEC);
    unsigned open_conns = 0;
    for (unsigned i = 0; ec != NULL && ep >= 0 && i < conns; i++) {
        ec[i].serial = (int)(i + 1) * 1000000;
        if (client_open(&ec[i].c, r->port) != 0) {
            r->errors++;
            close(ec[i].c.fd);
            ec[i].c.fd = -1;
            continue;
        }
        fcntl(ec[i].c.fd, F_SETFL, O_NONBLOCK);
        struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &ec[i]};
        epoll_ctl(ep, EPOLL_CTL_ADD, ec[i].c.fd, &ev);
        open_conns++;
    }
    for (unsigned i = 0; ec != NULL && i < conns; i++)
        if (ec[i].c.fd >= 0 && econn_send(&ec[i], r) < 0)
            r->errors++;
    struct epoll_event evs[MAX_CONNS];
    while (open_conns > 0) {
        bool more = now() < r->until;
        int n = epoll_wait(ep, evs, MAX_CONNS, 1000);
        for (int i = 0; i < n; i++) {
            econn *e = evs[i].data.ptr;
            size_t before = r->n;
            int rc = econn_read(e, r, more);
            if (rc < 0)
                r->errors++;
            if (rc < 0 || (!more && r->n > before)) { /* failed, or its last answer in */
                close(e->c.fd);
                e->c.fd = -1;
                open_conns--;
            }
        }
        if (n <= 0 && !more)
            break;
    }
    for (unsigned i = 0; ec != NULL && i < conns; i++)
        if (ec[i].c.fd >= 0)
            close(ec[i].c.fd);
    if (ep >= 0)
        close(ep);
    free(ec);
}

/* --epoll: one thread drives every connection instead of a thread each. */
static bool use_epoll;

static void run_load(unsigned port, req_kind kind, unsigned conns, double secs, const char *what)
{
    pthread_t th[MAX_CONNS];
    run r = {.port = port, .kind = kind, .lat = malloc(sizeof(double) * MAX_SAMPLES), .seed = 1};
    pthread_mutex_init(&r.mu, NULL);
    double t0 = now(), s0 = server_cpu(), c0 = own_cpu();
    r.until = t0 + secs;
    if (!use_epoll) {
        for (unsigned i = 0; i < conns; i++)
            pthread_create(&th[i], NULL, load, &r);
        for (unsigned i = 0; i < conns; i++)
            pthread_join(th[i], NULL);
    } else {
        load_epoll(&r, conns);
    }
    double t1 = now(), s1 = server_cpu(), c1 = own_cpu();
    report(what, conns, &r, t1 - t0, s1 - s0, c1 - c0);
    free(r.lat);
    pthread_mutex_destroy(&r.mu);
}

/* ---- the same through wrk (--wrk: Debian's wrk, one thread) ---- */

/* The Lua script wrk runs: the requests of kind (random keys for point
 * reads), and at the end one line with the count, errors and p50/p99 in
 * microseconds for this program to read. */
static int write_wrk_script(const char *path, req_kind kind)
{
    FILE *f = fopen(path, "w");
    if (f == NULL)
        return -1;
    if (kind == REQ_POINT)
        fprintf(f, "math.randomseed(1)\n"
                   "request = function()\n"
                   "  return wrk.format(\"GET\", \"/api/records/T?K=\" .. "
                   "math.random(0, %d))\n"
                   "end\n",
                RECORDS - 1);
    else
        fprintf(f, "wrk.method = \"POST\"\n"
                   "wrk.path = \"/api/query\"\n"
                   "wrk.body = \"SELECT Name, Cpus FROM S WHERE Cpus >= 0\"\n");
    fprintf(f, "done = function(s, lat, req)\n"
               "  local e = s.errors\n"
               "  io.write(string.format(\"WRK %%d %%d %%d %%d\\n\", s.requests,\n"
               "    e.connect + e.read + e.write + e.status + e.timeout,\n"
               "    lat:percentile(50), lat:percentile(99)))\n"
               "end\n");
    return fclose(f);
}

/* Run wrk for one row; false when wrk could not be run. */
static bool run_wrk(const char *dir, unsigned port, req_kind kind, unsigned conns, double secs,
                    const char *what)
{
    char script[700], out[700], url[64], c[16], d[32];
    snprintf(script, sizeof script, "%s/p13.lua", dir);
    snprintf(out, sizeof out, "%s/wrk.out", dir);
    snprintf(url, sizeof url, "http://127.0.0.1:%u/", port);
    snprintf(c, sizeof c, "%u", conns);
    snprintf(d, sizeof d, "%.0fs", secs < 1 ? 1 : secs);
    if (write_wrk_script(script, kind) != 0)
        return false;
    double t0 = now(), s0 = server_cpu();
    pid_t pid = fork();
    if (pid == 0) {
        if (freopen(out, "w", stdout) == NULL)
            _exit(127);
        execlp("wrk", "wrk", "-t", "1", "-c", c, "-d", d, "-s", script, url, (char *)NULL);
        _exit(127);
    }
    int status;
    struct rusage ru;
    if (pid < 0 || wait4(pid, &status, 0, &ru) != pid || !WIFEXITED(status) ||
        WEXITSTATUS(status) != 0)
        return false;
    double t1 = now(), s1 = server_cpu();
    FILE *f = fopen(out, "r");
    char line[512];
    double n = 0, p50 = 0, p99 = 0;
    unsigned errors = 0;
    bool found = false;
    while (f != NULL && fgets(line, sizeof line, f) != NULL)
        if (sscanf(line, "WRK %lf %u %lf %lf", &n, &errors, &p50, &p99) == 4)
            found = true;
    if (f != NULL)
        fclose(f);
    if (!found)
        return false;
    double cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
                 (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
    char label[64];
    snprintf(label, sizeof label, "%s, wrk", what);
    print_row(label, conns, n, t1 - t0, p50 / 1e6, p99 / 1e6, errors, s1 - s0, cpu);
    return true;
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
    bool reads_only = false, use_wrk = false;
    while (argc > 1 && argv[1][0] == '-') {
        if (strcmp(argv[1], "--epoll") == 0)
            use_epoll = true;
        else if (strcmp(argv[1], "--reads") == 0)
            reads_only = true;
        else if (strcmp(argv[1], "--wrk") == 0)
            use_wrk = true;
        else
            argc = 0; /* unknown: the usage below */
        argc--;
        argv++;
    }
    if (argc < 2) {
        fprintf(stderr, "usage: bench_serve [--epoll] [--reads] [--wrk] ADSTORE-PROGRAM "
                        "[SECONDS-PER-RUN]\n");
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
    for (int i = 0; i < 3; i++) {
        run_load(port, REQ_POINT, conns[i], secs, "point read (GET record)");
        if (use_wrk && !run_wrk(dir, port, REQ_POINT, conns[i], secs, "point read"))
            printf("| point read, wrk | %u | (wrk could not be run) |\n", conns[i]);
    }
    for (int i = 0; i < 3 && !reads_only; i++) {
        run_load(port, REQ_SELECT, conns[i], secs, "SELECT of 10 rows (type S)");
        if (use_wrk && !run_wrk(dir, port, REQ_SELECT, conns[i], secs, "SELECT of 10 rows"))
            printf("| SELECT of 10 rows, wrk | %u | (wrk could not be run) |\n", conns[i]);
    }
    if (!reads_only)
        run_load(port, REQ_WRITE, 1, secs, "durable write, HTTP");
    kill(pid, SIGTERM);
    waitpid(pid, NULL, 0);
    if (!reads_only)
        inprocess_writes(store, secs);
    char cmd[800];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : 1;
}
