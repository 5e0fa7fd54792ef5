/*
 * query/session.c: the transaction a statement runs in. By default each
 * statement has its own (a read transaction for SELECT, ads_db_write for
 * the others, which grows a full map and runs the statement again); a
 * caller may hand one in (ads_exec_options.txn); and BEGIN opens one for
 * the session, which the statements up to COMMIT or ROLLBACK share. A
 * statement that fails inside BEGIN rolls the session's transaction back: a
 * write may have written part of its rows, and without savepoints what is
 * left would be neither the transaction's start nor what the script meant;
 * one rule for every failure is easier to rely on than a list.
 */
#include <string.h>

#include "query/query_int.h"

int ads_q__txn_read(ads_query *q, ads_txn **out, ads_error *err)
{
    if (q->txn) {
        *out = q->txn;
        return 0;
    }
    return ads_txn_begin(out, q->db, ADS_TXN_READONLY, err);
}

void ads_q__txn_done(ads_query *q, ads_txn *txn)
{
    if (txn != q->txn)
        ads_txn_abort(txn);
}

int ads_q__txn_write(ads_query *q, ads_txn_fn fn, void *ctx, ads_error *err)
{
    if (!q->txn)
        return ads_db_write(q->db, fn, ctx, err);
    if (ads_txn_readonly(q->txn))
        return ads_error_set(err, ADS_EREADONLY,
                             "a statement that writes cannot run in a read-only transaction");
    return fn(q->txn, ctx, err);
}

bool ads_query_in_txn(const ads_query *q)
{
    return q && q->session;
}

void ads_query_rollback(ads_query *q)
{
    if (!q || !q->session)
        return;
    ads_txn_abort(q->session);
    q->session = NULL;
}

bool ads_q__is_control(const stmt *st)
{
    return st->kind == ADS_STMT_BEGIN || st->kind == ADS_STMT_COMMIT ||
           st->kind == ADS_STMT_ROLLBACK;
}

int ads_q__control(ads_query *q, const stmt *st, const ads_exec_options *opt, ads_error *err)
{
    const char *what = st->kind == ADS_STMT_BEGIN    ? "BEGIN"
                       : st->kind == ADS_STMT_COMMIT ? "COMMIT"
                                                     : "ROLLBACK";
    if (opt->txn)
        return ads_error_set(err, ADS_EINVAL,
                             "%s cannot run in a transaction the caller began: the caller "
                             "commits or aborts it",
                             what);
    if (st->kind == ADS_STMT_BEGIN) {
        if (q->session)
            return ads_error_set(err, ADS_EINVAL,
                                 "BEGIN inside a transaction: transactions do not nest "
                                 "(COMMIT or ROLLBACK the open one first)");
        return ads_txn_begin(&q->session, q->db, 0, err);
    }
    if (!q->session)
        return ads_error_set(err, ADS_EINVAL, "%s without BEGIN: no transaction is open", what);
    ads_txn *t = q->session;
    q->session = NULL;
    if (st->kind == ADS_STMT_ROLLBACK) {
        ads_txn_abort(t);
        return 0;
    }
    return ads_txn_commit(t, err);
}

int ads_q__txn_enter(ads_query *q, const ads_exec_options *opt, ads_error *err)
{
    q->txn = NULL;
    if (opt->txn && q->session)
        return ads_error_set(err, ADS_EINVAL,
                             "a statement cannot run in the caller's transaction while BEGIN's "
                             "is open");
    if (opt->txn && ads_txn_db(opt->txn) != q->db)
        return ads_error_set(err, ADS_EINVAL,
                             "the transaction given is on another store than the session's");
    q->txn = opt->txn ? opt->txn : q->session;
    return 0;
}

void ads_q__txn_leave(ads_query *q, const ads_exec_options *opt, int rc, ads_exec_info *info)
{
    if (rc && q->session && !opt->txn) {
        ads_query_rollback(q);
        info->rolled_back = true;
    }
    q->txn = NULL;
}
