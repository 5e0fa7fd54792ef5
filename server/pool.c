/*
 * server/pool.c: the threads that run statements. A request's statement is
 * a task handed to a waiting thread, which runs it in a statement session
 * of its own (ads_query, kept from task to task) -- no thread is started
 * per request. ADS_SERVE_STMT_THREADS wait from the start; when every
 * thread is busy (long statements, results streamed to slow clients) and a
 * task waits, one more is started, up to ADS_SERVE_MAX_CONNECTIONS (one
 * statement per connection at most), so that no statement waits for
 * another; threads beyond the first ones leave after
 * ADS_SERVE_STMT_IDLE_SECONDS without work.
 */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "server/server_int.h"

static bool wait_work(stmt_pool *p)
{
    while (p->head == NULL && !p->stop) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += ADS_SERVE_STMT_IDLE_SECONDS;
        p->idle++;
        int rc = pthread_cond_timedwait(&p->work, &p->mu, &until);
        p->idle--;
        if (rc == ETIMEDOUT && p->head == NULL && p->threads > ADS_SERVE_STMT_THREADS)
            return false;
    }
    return p->head != NULL;
}

static void *worker(void *arg)
{
    stmt_pool *p = arg;
    ads_query *q = NULL;
    if (ads_query_new(&q, p->db, NULL) == 0)
        ads_query_set_limits(q, ADS_SERVE_STMT_MEMORY, ADS_SERVE_STMT_SECONDS);
    pthread_mutex_lock(&p->mu);
    while (q != NULL && wait_work(p)) {
        pool_task *t = p->head;
        p->head = t->next;
        if (p->head == NULL)
            p->tail = NULL;
        p->queued--;
        pthread_mutex_unlock(&p->mu);
        t->run(t, q);
        /* A session left in a transaction (BEGIN) does not carry it to
         * the next task. */
        if (ads_query_in_txn(q))
            ads_query_rollback(q);
        pthread_mutex_lock(&p->mu);
    }
    pthread_mutex_unlock(&p->mu);
    ads_query_free(q);
    pthread_mutex_lock(&p->mu);
    p->threads--;
    pthread_cond_broadcast(&p->gone);
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

/* One more thread (p->mu held); false if none could be started. */
static bool spawn(stmt_pool *p)
{
    pthread_t th;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    p->threads++;
    bool ok = pthread_create(&th, &attr, worker, p) == 0;
    pthread_attr_destroy(&attr);
    if (!ok)
        p->threads--;
    return ok;
}

int pool_start(stmt_pool *p, ads_db *db, ads_error *err)
{
    memset(p, 0, sizeof *p);
    p->db = db;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->work, NULL);
    pthread_cond_init(&p->gone, NULL);
    pthread_mutex_lock(&p->mu);
    for (unsigned i = 0; i < ADS_SERVE_STMT_THREADS; i++)
        spawn(p);
    bool none = p->threads == 0;
    pthread_mutex_unlock(&p->mu);
    if (none)
        return ads_error_set(err, ADS_EIO, "cannot start the statement threads");
    p->started = true;
    return 0;
}

int pool_submit(stmt_pool *p, pool_task *t)
{
    pthread_mutex_lock(&p->mu);
    if (p->queued + 1 > p->idle && p->threads < ADS_SERVE_STMT_THREADS + ADS_SERVE_MAX_CONNECTIONS)
        spawn(p);
    bool none = p->threads == 0 || p->stop;
    if (!none) {
        t->next = NULL;
        if (p->tail != NULL)
            p->tail->next = t;
        else
            p->head = t;
        p->tail = t;
        p->queued++;
        pthread_cond_signal(&p->work);
    }
    pthread_mutex_unlock(&p->mu);
    return none ? -1 : 0;
}

void pool_stop(stmt_pool *p)
{
    if (!p->started)
        return;
    pthread_mutex_lock(&p->mu);
    p->stop = true;
    pthread_cond_broadcast(&p->work);
    while (p->threads > 0)
        pthread_cond_wait(&p->gone, &p->mu);
    pthread_mutex_unlock(&p->mu);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->work);
    pthread_cond_destroy(&p->gone);
    p->started = false;
}
